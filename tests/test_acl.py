"""Kafka's ACL model: authorizer decisions, binding filters, the in-memory store and the
ZooKeeper JSON codec (facts from Kafka 3.9's AclAuthorizer / StandardAuthorizer,
ResourcePatternFilter, AccessControlEntryFilter, ZkData)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.security.acl import (
    AUTHORIZATION_ERROR_CODES,
    SUPPORTED_OPERATIONS,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclStore,
    Authorizer,
    InvalidAclError,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    decode_acl_change,
    decode_acl_znode,
    decode_extended_acl_change,
    encode_acl_change,
    encode_acl_znode,
    parse_super_users,
    zk_acl_path,
    zk_change_root,
)

Op = AclOperation
ALLOW = AclPermissionType.ALLOW
DENY = AclPermissionType.DENY
TOPIC = ResourceType.TOPIC
LIT = PatternType.LITERAL
PRE = PatternType.PREFIXED


def acl(
    name: str,
    op: AclOperation,
    perm: AclPermissionType = ALLOW,
    principal: str = "User:alice",
    host: str = "*",
    rtype: ResourceType = TOPIC,
    ptype: PatternType = LIT,
) -> AclBinding:
    return AclBinding(
        ResourcePattern(rtype, name, ptype), AccessControlEntry(principal, host, op, perm)
    )


def test_wire_codes_are_kafkas() -> None:
    assert [(t.name, int(t)) for t in ResourceType] == [
        ("UNKNOWN", 0),
        ("ANY", 1),
        ("TOPIC", 2),
        ("GROUP", 3),
        ("CLUSTER", 4),
        ("TRANSACTIONAL_ID", 5),
        ("DELEGATION_TOKEN", 6),
        ("USER", 7),
    ]
    assert [int(p) for p in (PatternType.ANY, PatternType.MATCH, LIT, PRE)] == [1, 2, 3, 4]
    assert (int(Op.ALL), int(Op.READ), int(Op.DESCRIBE), int(Op.ALTER_CONFIGS)) == (2, 3, 8, 11)
    assert (int(Op.IDEMPOTENT_WRITE), int(Op.DESCRIBE_TOKENS), int(Op.TWO_PHASE_COMMIT)) == (
        12,
        14,
        15,
    )
    assert (int(DENY), int(ALLOW)) == (2, 3)


def test_supported_operations_and_errors() -> None:
    assert Op.CLUSTER_ACTION in SUPPORTED_OPERATIONS[ResourceType.CLUSTER]
    assert Op.CLUSTER_ACTION not in SUPPORTED_OPERATIONS[TOPIC]
    assert SUPPORTED_OPERATIONS[ResourceType.TRANSACTIONAL_ID] == {
        Op.DESCRIBE,
        Op.WRITE,
        Op.TWO_PHASE_COMMIT,
    }
    assert all(Op.ALL not in ops for ops in SUPPORTED_OPERATIONS.values())
    assert AUTHORIZATION_ERROR_CODES[ResourceType.TRANSACTIONAL_ID] == 53
    assert AUTHORIZATION_ERROR_CODES[ResourceType.GROUP] == 30


# (ACLs, principal, host, operation, resource name, expected allowed)
ALICE = "User:alice"
DECISIONS = [
    # nothing on the resource: allow.everyone.if.no.acl.found (false here) decides
    ([], ALICE, "10.0.0.1", Op.READ, "t", False),
    ([acl("t", Op.READ)], ALICE, "10.0.0.1", Op.READ, "t", True),
    ([acl("t", Op.READ)], "User:bob", "10.0.0.1", Op.READ, "t", False),
    ([acl("t", Op.READ)], ALICE, "10.0.0.1", Op.WRITE, "t", False),
    ([acl("t", Op.READ)], ALICE, "10.0.0.1", Op.READ, "other", False),
    # implications, for ALLOW only
    ([acl("t", Op.READ)], ALICE, "h", Op.DESCRIBE, "t", True),
    ([acl("t", Op.WRITE)], ALICE, "h", Op.DESCRIBE, "t", True),
    ([acl("t", Op.DELETE)], ALICE, "h", Op.DESCRIBE, "t", True),
    ([acl("t", Op.ALTER)], ALICE, "h", Op.DESCRIBE, "t", True),
    ([acl("t", Op.CREATE)], ALICE, "h", Op.DESCRIBE, "t", False),
    ([acl("t", Op.DESCRIBE)], ALICE, "h", Op.READ, "t", False),
    ([acl("t", Op.ALTER_CONFIGS)], ALICE, "h", Op.DESCRIBE_CONFIGS, "t", True),
    ([acl("t", Op.ALTER_CONFIGS)], ALICE, "h", Op.DESCRIBE, "t", False),
    ([acl("t", Op.ALTER)], ALICE, "h", Op.DESCRIBE_CONFIGS, "t", False),
    ([acl("t", Op.ALL)], ALICE, "h", Op.CLUSTER_ACTION, "t", True),
    # a DENY READ does not deny DESCRIBE granted by the ALLOW READ
    ([acl("t", Op.READ), acl("t", Op.READ, DENY)], ALICE, "h", Op.DESCRIBE, "t", True),
    ([acl("t", Op.READ), acl("t", Op.READ, DENY)], ALICE, "h", Op.READ, "t", False),
    ([acl("t", Op.ALL), acl("t", Op.DESCRIBE, DENY)], ALICE, "h", Op.DESCRIBE, "t", False),
    ([acl("t", Op.ALL), acl("t", Op.ALL, DENY)], ALICE, "h", Op.READ, "t", False),
    # DENY over a wildcard ALLOW; DENY for another principal or host does not apply
    (
        [acl("*", Op.READ, principal="User:*"), acl("t", Op.READ, DENY, principal="User:bob")],
        "User:bob",
        "h",
        Op.READ,
        "t",
        False,
    ),
    (
        [acl("*", Op.READ, principal="User:*"), acl("t", Op.READ, DENY, principal="User:bob")],
        ALICE,
        "h",
        Op.READ,
        "t",
        True,
    ),
    (
        [acl("t", Op.READ, principal="User:*"), acl("t", Op.READ, DENY, host="198.51.100.3")],
        ALICE,
        "198.51.100.4",
        Op.READ,
        "t",
        True,
    ),
    (
        [acl("t", Op.READ, principal="User:*"), acl("t", Op.READ, DENY, host="198.51.100.3")],
        ALICE,
        "198.51.100.3",
        Op.READ,
        "t",
        False,
    ),
    # host matching is exact or "*"
    ([acl("t", Op.READ, host="10.0.0.1")], ALICE, "10.0.0.1", Op.READ, "t", True),
    ([acl("t", Op.READ, host="10.0.0.1")], ALICE, "10.0.0.2", Op.READ, "t", False),
    # the principal wildcard is User:*, and the principal type matters
    ([acl("t", Op.READ, principal="User:*")], "User:anyone", "h", Op.READ, "t", True),
    ([acl("t", Op.READ, principal="User:alice")], "Group:alice", "h", Op.READ, "t", False),
    # the resource wildcard "*" (LITERAL) applies to every name; prefixes apply by startswith
    ([acl("*", Op.READ)], ALICE, "h", Op.READ, "anything", True),
    ([acl("*", Op.READ, ptype=PRE)], ALICE, "h", Op.READ, "anything", False),
    ([acl("*", Op.READ, ptype=PRE)], ALICE, "h", Op.READ, "*x", True),
    ([acl("pay", Op.READ, ptype=PRE)], ALICE, "h", Op.READ, "payments", True),
    ([acl("pay", Op.READ, ptype=PRE)], ALICE, "h", Op.READ, "pa", False),
    ([acl("pay", Op.READ, ptype=PRE)], ALICE, "h", Op.READ, "Payments", False),
    ([acl("pay", Op.READ, DENY, ptype=PRE), acl("*", Op.READ)], ALICE, "h", Op.READ, "payx", False),
    # another resource type's ACLs do not bear on a topic
    ([acl("t", Op.READ, rtype=ResourceType.GROUP)], ALICE, "h", Op.READ, "t", False),
]


@pytest.mark.parametrize(("acls", "principal", "host", "op", "name", "expected"), DECISIONS)
def test_decisions(
    acls: list[AclBinding],
    principal: str,
    host: str,
    op: AclOperation,
    name: str,
    expected: bool,
) -> None:
    authorizer = Authorizer(AclStore(acls))
    assert authorizer.allowed(principal, host, op, TOPIC, name) is expected


def test_allow_everyone_if_no_acl_found_only_when_the_resource_has_no_acls() -> None:
    store = AclStore([acl("t", Op.READ, principal="User:bob")])
    open_auth = Authorizer(store, allow_everyone_if_no_acl_found=True)
    assert open_auth.allowed(ALICE, "h", Op.WRITE, TOPIC, "free")
    # ACLs exist on "t" though none is alice's: denied, whatever the flag says
    assert not open_auth.allowed(ALICE, "h", Op.READ, TOPIC, "t")
    # a DENY-only set still counts as "ACLs found"
    deny_only = Authorizer(
        AclStore([acl("d", Op.WRITE, DENY)]), allow_everyone_if_no_acl_found=True
    )
    assert not deny_only.allowed("User:bob", "h", Op.READ, TOPIC, "d")
    # a wildcard or prefixed ACL makes every covered name "have ACLs"
    wild = Authorizer(
        AclStore([acl("*", Op.READ, principal="User:bob")]), allow_everyone_if_no_acl_found=True
    )
    assert not wild.allowed(ALICE, "h", Op.READ, TOPIC, "x")
    assert wild.allowed(ALICE, "h", Op.READ, ResourceType.GROUP, "x")


def test_super_users_bypass_denies() -> None:
    assert parse_super_users(" User:Bob ; User:Alice;") == {"User:Bob", "User:Alice"}
    assert parse_super_users(None) == frozenset()
    store = AclStore([acl("t", Op.ALL, DENY, principal="User:*")])
    authorizer = Authorizer(store, super_users=parse_super_users("User:Bob;User:Alice"))
    assert authorizer.allowed("User:Bob", "h", Op.WRITE, TOPIC, "t")
    assert not authorizer.allowed("User:bob", "h", Op.WRITE, TOPIC, "t")
    assert authorizer.allowed("User:Alice", "h", Op.CLUSTER_ACTION, ResourceType.CLUSTER, "x")


@pytest.mark.parametrize("op", [Op.ANY, Op.UNKNOWN])
def test_authorize_rejects_filter_operations(op: AclOperation) -> None:
    with pytest.raises(InvalidAclError):
        Authorizer().authorize(ALICE, "h", op, TOPIC, "t")
    with pytest.raises(InvalidAclError):
        Authorizer().authorize(ALICE, "h", Op.READ, ResourceType.ANY, "t")


# --- validation (CreateAcls' INVALID_REQUEST cases) -------------------------------------


@pytest.mark.parametrize(
    "binding",
    [
        acl("t", Op.READ, ptype=PatternType.MATCH),
        acl("t", Op.READ, ptype=PatternType.ANY),
        acl("t", Op.ANY),
        acl("t", Op.UNKNOWN),
        acl("t", Op.READ, AclPermissionType.ANY),
        acl("", Op.READ),
        acl("t", Op.READ, rtype=ResourceType.ANY),
        acl("my-cluster", Op.ALTER, rtype=ResourceType.CLUSTER),
        acl("t", Op.READ, principal="alice"),
    ],
)
def test_invalid_bindings_are_refused(binding: AclBinding) -> None:
    store = AclStore()
    with pytest.raises(InvalidAclError):
        store.add(binding)
    assert len(store) == 0


# --- filters -----------------------------------------------------------------------------

STORED = [
    ResourcePattern(TOPIC, "foo", LIT),
    ResourcePattern(TOPIC, "*", LIT),
    ResourcePattern(TOPIC, "fo", PRE),
    ResourcePattern(TOPIC, "foo", PRE),
    ResourcePattern(TOPIC, "bar", PRE),
    ResourcePattern(TOPIC, "*", PRE),
    ResourcePattern(ResourceType.GROUP, "foo", LIT),
]

# (filter, indexes of STORED it matches)
PATTERN_FILTERS = [
    (ResourcePatternFilter(), [0, 1, 2, 3, 4, 5, 6]),
    (ResourcePatternFilter(TOPIC), [0, 1, 2, 3, 4, 5]),
    (ResourcePatternFilter(TOPIC, None, LIT), [0, 1]),
    (ResourcePatternFilter(TOPIC, None, PatternType.MATCH), [0, 1, 2, 3, 4, 5]),
    (ResourcePatternFilter(ResourceType.ANY, "foo"), [0, 3, 6]),
    (ResourcePatternFilter(TOPIC, "foo", PatternType.ANY), [0, 3]),
    (ResourcePatternFilter(TOPIC, "foo", LIT), [0]),
    (ResourcePatternFilter(TOPIC, "foo", PRE), [3]),
    (ResourcePatternFilter(TOPIC, "*", LIT), [1]),
    # MATCH: literal same name, literal "*", prefixes that start the name
    (ResourcePatternFilter(TOPIC, "foo", PatternType.MATCH), [0, 1, 2, 3]),
    (ResourcePatternFilter(TOPIC, "food", PatternType.MATCH), [1, 2, 3]),
    (ResourcePatternFilter(TOPIC, "f", PatternType.MATCH), [1]),
    (ResourcePatternFilter(TOPIC, "*", PatternType.MATCH), [1, 5]),
    (ResourcePatternFilter(ResourceType.ANY, "foo", PatternType.MATCH), [0, 1, 2, 3, 6]),
]


@pytest.mark.parametrize(("pattern_filter", "expected"), PATTERN_FILTERS)
def test_resource_pattern_filter(
    pattern_filter: ResourcePatternFilter, expected: list[int]
) -> None:
    assert [i for i, p in enumerate(STORED) if pattern_filter.matches(p)] == expected


def test_entry_filter() -> None:
    entry = AccessControlEntry(ALICE, "10.0.0.1", Op.READ, ALLOW)
    assert AccessControlEntryFilter().matches(entry)
    assert AccessControlEntryFilter(principal=ALICE, host="10.0.0.1").matches(entry)
    # filters compare literally: "User:*" and "*" are not wildcards in a filter
    assert not AccessControlEntryFilter(principal="User:*").matches(entry)
    assert not AccessControlEntryFilter(host="*").matches(entry)
    assert not AccessControlEntryFilter(operation=Op.ALL).matches(entry)
    assert not AccessControlEntryFilter(operation=Op.DESCRIBE).matches(entry)
    assert AccessControlEntryFilter(operation=Op.READ, permission_type=ALLOW).matches(entry)
    assert not AccessControlEntryFilter(permission_type=DENY).matches(entry)


def test_store_add_describe_remove() -> None:
    store = AclStore()
    assert store.add(acl("foo", Op.READ))
    assert not store.add(acl("foo", Op.READ))  # idempotent, like CreateAcls
    store.add(acl("foo", Op.WRITE, DENY, principal="User:bob"))
    store.add(acl("fo", Op.READ, ptype=PRE))
    store.add(acl("*", Op.DESCRIBE))
    store.add(acl("g", Op.READ, rtype=ResourceType.GROUP))
    assert len(store) == 5

    match_foo = AclBindingFilter(ResourcePatternFilter(TOPIC, "foo", PatternType.MATCH))
    assert len(store.describe(match_foo)) == 4
    bob = AclBindingFilter(entry=AccessControlEntryFilter(principal="User:bob"))
    assert store.describe(bob) == [acl("foo", Op.WRITE, DENY, principal="User:bob")]

    removed = store.remove(
        AclBindingFilter(ResourcePatternFilter(TOPIC, "foo", LIT), AccessControlEntryFilter())
    )
    assert sorted(removed) == sorted([acl("foo", Op.READ), acl("foo", Op.WRITE, DENY, "User:bob")])
    assert ResourcePattern(TOPIC, "foo", LIT) not in store.patterns()
    assert len(store) == 3
    assert store.remove(AclBindingFilter(ResourcePatternFilter(TOPIC, "foo", LIT))) == []
    assert len(store.remove(AclBindingFilter())) == 3
    assert len(store) == 0


# --- hypothesis: the authorizer against a direct reading of Kafka's rules ----------------

NAMES = st.sampled_from(["a", "ab", "abc", "b", "*"])
PRINCIPALS = st.sampled_from(["User:alice", "User:bob", "User:*"])
HOSTS = st.sampled_from(["*", "10.0.0.1", "10.0.0.2"])
STORABLE_OPS = st.sampled_from([op for op in Op if op not in (Op.ANY, Op.UNKNOWN)])
BINDINGS = st.builds(
    acl,
    NAMES,
    STORABLE_OPS,
    st.sampled_from([ALLOW, DENY]),
    PRINCIPALS,
    HOSTS,
    st.sampled_from([TOPIC, ResourceType.GROUP]),
    st.sampled_from([LIT, PRE]),
)
IMPLIED = {
    Op.DESCRIBE: {Op.READ, Op.WRITE, Op.DELETE, Op.ALTER},
    Op.DESCRIBE_CONFIGS: {Op.ALTER_CONFIGS},
}


def reference_decision(
    acls: list[AclBinding], principal: str, host: str, op: AclOperation, name: str, default: bool
) -> bool:
    def covers(p: ResourcePattern) -> bool:
        if p.resource_type != TOPIC:
            return False
        if p.pattern_type is LIT:
            return p.name in (name, "*")
        return name.startswith(p.name)

    on_resource = {b.entry for b in acls if covers(b.pattern)}
    if not on_resource:
        return default
    mine = [
        e for e in on_resource if e.principal in (principal, "User:*") and e.host in (host, "*")
    ]
    if any(e.permission_type is DENY and e.operation in (op, Op.ALL) for e in mine):
        return False
    ok = {op, Op.ALL} | IMPLIED.get(op, set())
    return any(e.permission_type is ALLOW and e.operation in ok for e in mine)


@given(
    st.lists(BINDINGS, max_size=8),
    st.sampled_from(["User:alice", "User:bob", "User:carol"]),
    st.sampled_from(["10.0.0.1", "10.0.0.2"]),
    STORABLE_OPS,
    st.sampled_from(["a", "ab", "abc", "b", "c"]),
    st.booleans(),
)
def test_authorizer_matches_the_rules(
    acls: list[AclBinding], principal: str, host: str, op: AclOperation, name: str, default: bool
) -> None:
    authorizer = Authorizer(AclStore(acls), allow_everyone_if_no_acl_found=default)
    expected = reference_decision(acls, principal, host, op, name, default)
    assert authorizer.allowed(principal, host, op, TOPIC, name) is expected


@given(st.lists(BINDINGS, max_size=10), st.lists(BINDINGS, max_size=4))
def test_remove_takes_exactly_what_describe_shows(
    acls: list[AclBinding], probes: list[AclBinding]
) -> None:
    store = AclStore(acls)
    before = set(store)
    for probe in probes:
        f = AclBindingFilter(
            ResourcePatternFilter(ResourceType.ANY, probe.pattern.name, PatternType.MATCH),
            AccessControlEntryFilter(principal=probe.entry.principal),
        )
        shown = set(store.describe(f))
        assert set(store.remove(f)) == shown
        assert store.describe(f) == []
        before -= shown
        assert set(store) == before


# --- ZooKeeper codec ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "change_root"),
    [
        (ResourcePattern(TOPIC, "t1", LIT), "/kafka-acl/Topic/t1", "/kafka-acl-changes"),
        (
            ResourcePattern(ResourceType.GROUP, "g", PRE),
            "/kafka-acl-extended/prefixed/Group/g",
            "/kafka-acl-extended-changes",
        ),
        (
            ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", LIT),
            "/kafka-acl/Cluster/kafka-cluster",
            "/kafka-acl-changes",
        ),
        (
            ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx", LIT),
            "/kafka-acl/TransactionalId/tx",
            "/kafka-acl-changes",
        ),
        (
            ResourcePattern(ResourceType.DELEGATION_TOKEN, "*", LIT),
            "/kafka-acl/DelegationToken/*",
            "/kafka-acl-changes",
        ),
    ],
)
def test_zk_paths(pattern: ResourcePattern, path: str, change_root: str) -> None:
    assert zk_acl_path(pattern) == path
    assert zk_change_root(pattern.pattern_type) == change_root


def test_zk_path_refuses_slash() -> None:
    with pytest.raises(InvalidAclError):
        zk_acl_path(ResourcePattern(TOPIC, "a/b", LIT))


def test_zk_znode_json_is_kafkas() -> None:
    entries = [
        AccessControlEntry("User:alice", "*", Op.READ, ALLOW),
        AccessControlEntry("User:bob", "10.0.0.1", Op.CLUSTER_ACTION, DENY),
    ]
    doc = json.loads(encode_acl_znode(entries))
    assert doc == {
        "version": 1,
        "acls": [
            {
                "principal": "User:alice",
                "permissionType": "Allow",
                "operation": "Read",
                "host": "*",
            },
            {
                "principal": "User:bob",
                "permissionType": "Deny",
                "operation": "ClusterAction",
                "host": "10.0.0.1",
            },
        ],
    }
    assert decode_acl_znode(encode_acl_znode(entries)) == frozenset(entries)
    assert decode_acl_znode(b"") == frozenset()
    # Kafka's SecurityUtils also reads upper-case names
    raw = b'{"version":1,"acls":[{"principal":"User:x","permissionType":"ALLOW",'
    raw += b'"operation":"DESCRIBE_CONFIGS","host":"*"}]}'
    assert decode_acl_znode(raw) == {AccessControlEntry("User:x", "*", Op.DESCRIBE_CONFIGS, ALLOW)}
    with pytest.raises(InvalidAclError):
        decode_acl_znode(b'{"version":2,"acls":[]}')


@given(st.lists(BINDINGS, max_size=6))
def test_zk_znode_round_trip(acls: list[AclBinding]) -> None:
    entries = {b.entry for b in acls}
    assert decode_acl_znode(encode_acl_znode(entries)) == entries


def test_zk_change_notifications() -> None:
    literal = ResourcePattern(TOPIC, "topic-1", LIT)
    # Kafka 3.9 writes ResourceType.name() (upper case) and reads either spelling
    assert encode_acl_change(literal) == b"TOPIC:topic-1"
    assert decode_acl_change(b"TOPIC:topic-1") == literal
    assert decode_acl_change(b"Topic:topic-1") == literal
    assert decode_acl_change(b"TRANSACTIONAL_ID:t") == ResourcePattern(
        ResourceType.TRANSACTIONAL_ID, "t", LIT
    )
    assert decode_acl_change(b"Group:a:b") == ResourcePattern(ResourceType.GROUP, "a:b", LIT)
    prefixed = ResourcePattern(TOPIC, "x", PRE)
    assert json.loads(encode_acl_change(prefixed)) == {
        "version": 1,
        "resourceType": "TOPIC",
        "name": "x",
        "patternType": "PREFIXED",
    }
    assert decode_extended_acl_change(encode_acl_change(prefixed)) == prefixed
    with pytest.raises(InvalidAclError):
        decode_acl_change(b"no-colon")


# --- authorizeByResourceType (InitProducerId without a transactional id) -------------------

BY_TYPE = [
    ([], False),
    ([acl("t", Op.WRITE)], True),
    ([acl("t", Op.READ)], False),  # no implication here: READ is not WRITE
    ([acl("t", Op.ALL)], True),
    ([acl("t", Op.WRITE), acl("t", Op.WRITE, DENY)], False),
    ([acl("t", Op.WRITE), acl("t", Op.WRITE, DENY, ptype=PRE)], False),
    ([acl("tx", Op.WRITE), acl("t", Op.WRITE, DENY)], True),  # literal deny only hides "t"
    ([acl("ab", Op.WRITE, ptype=PRE), acl("a", Op.WRITE, DENY, ptype=PRE)], False),
    ([acl("a", Op.WRITE, ptype=PRE), acl("ab", Op.WRITE, DENY, ptype=PRE)], True),
    ([acl("*", Op.WRITE), acl("t", Op.WRITE, DENY)], True),
    ([acl("t", Op.WRITE), acl("*", Op.WRITE, DENY)], False),
    ([acl("t", Op.WRITE, host="10.9.9.9")], False),
    ([acl("t", Op.WRITE, principal="User:*")], True),
]


@pytest.mark.parametrize(("acls", "expected"), BY_TYPE)
def test_authorize_by_resource_type(acls: list[AclBinding], expected: bool) -> None:
    result = Authorizer(AclStore(acls)).authorize_by_resource_type(ALICE, "h", Op.WRITE, TOPIC)
    assert (result.value == "ALLOWED") is expected
    # a super user always may
    su = Authorizer(AclStore(acls), super_users={ALICE})
    assert su.authorize_by_resource_type(ALICE, "h", Op.WRITE, TOPIC).value == "ALLOWED"
