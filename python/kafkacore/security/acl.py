"""Kafka's ACL model and authorizer decisions, as ``AclAuthorizer`` (ZooKeeper mode) and
``StandardAuthorizer`` (KRaft) decide them, plus the ZooKeeper JSON codec of the ACL znodes.

Model (wire codes are Kafka's ``int8`` values)::

    ResourceType      UNKNOWN 0, ANY 1, TOPIC 2, GROUP 3, CLUSTER 4, TRANSACTIONAL_ID 5,
                      DELEGATION_TOKEN 6, USER 7
    PatternType       UNKNOWN 0, ANY 1, MATCH 2, LITERAL 3, PREFIXED 4
    AclOperation      UNKNOWN 0, ANY 1, ALL 2, READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7,
                      DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
                      IDEMPOTENT_WRITE 12, CREATE_TOKENS 13, DESCRIBE_TOKENS 14,
                      TWO_PHASE_COMMIT 15 (Kafka 4.x, KIP-939)
    AclPermissionType UNKNOWN 0, ANY 1, DENY 2, ALLOW 3

Decision for ``(principal, host, operation, resource)``:

1. a principal listed in ``super.users`` is allowed;
2. the ACLs *on the resource* are LITERAL ACLs with its exact name, LITERAL ACLs named ``*``,
   and PREFIXED ACLs whose name starts the resource's name;
3. with none at all, the answer is ``allow.everyone.if.no.acl.found`` (default false);
4. an ACL applies when its principal is the caller's or ``User:*``, its host is the caller's
   address or ``*``; a DENY applies for the operation itself or ALL and wins over everything;
5. an ALLOW applies for the operation, ALL, or an operation implying it: READ, WRITE, DELETE
   and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS. Implication never
   extends a DENY ("a DENY ACL for READ does not deny DESCRIBE");
6. otherwise: denied.

ZooKeeper layout (Kafka 3.x ``ZkData``/``ZkAclStore``)::

    /kafka-acl/<Topic|Group|Cluster|TransactionalId|DelegationToken|User>/<name>   LITERAL
    /kafka-acl-extended/prefixed/<ResourceType>/<name>                             PREFIXED
      data {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",
                                 "operation":"Read","host":"*"}]}
    /kafka-acl-changes/acl_changes_<seq>            data  TOPIC:topic-1
    /kafka-acl-extended-changes/acl_changes_<seq>   data  {"version":1,"resourceType":"TOPIC",
                                                           "name":"x","patternType":"PREFIXED"}

The change notifications name the resource type in upper case (Kafka 3.9's
``LiteralAclChangeStore``/``ExtendedAclChangeStore`` write ``ResourceType.name()``, checked
against its jars); the znode paths use the PascalCase name. Both spellings are read.

Thread-safety: the enums and bindings are immutable. :class:`AclStore` swaps immutable
snapshots (writers from any thread, lock-free readers); :class:`Authorizer` only reads it.
"""

from __future__ import annotations

import enum
import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "ACL_CHANGES_PATH",
    "ACL_CHANGE_PREFIX",
    "AUTHORIZATION_ERROR_CODES",
    "CLUSTER_NAME",
    "EXTENDED_ACL_CHANGES_PATH",
    "EXTENDED_ACL_PATH",
    "LITERAL_ACL_PATH",
    "SUPPORTED_OPERATIONS",
    "WILDCARD_HOST",
    "WILDCARD_PRINCIPAL",
    "WILDCARD_RESOURCE",
    "AccessControlEntry",
    "AccessControlEntryFilter",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "AclStore",
    "AuthorizationResult",
    "Authorizer",
    "InvalidAclError",
    "PatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "decode_acl_change",
    "decode_acl_znode",
    "decode_extended_acl_change",
    "encode_acl_change",
    "encode_acl_znode",
    "parse_super_users",
    "zk_acl_path",
    "zk_change_root",
]

WILDCARD_RESOURCE = "*"
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"
CLUSTER_NAME = "kafka-cluster"

LITERAL_ACL_PATH = "/kafka-acl"
EXTENDED_ACL_PATH = "/kafka-acl-extended"
ACL_CHANGES_PATH = "/kafka-acl-changes"
EXTENDED_ACL_CHANGES_PATH = "/kafka-acl-extended-changes"
ACL_CHANGE_PREFIX = "acl_changes_"


class InvalidAclError(ValueError):
    """An ACL or filter Kafka would refuse (INVALID_REQUEST on the wire)."""


_E = TypeVar("_E", bound="_Named")


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


class _Named(enum.IntEnum):
    """Kafka's enums: an int8 code, an upper-case name, and the PascalCase name that
    ``SecurityUtils`` writes to ZooKeeper and ``kafka-acls`` prints."""

    @property
    def pascal(self) -> str:
        return _pascal(self.name)

    @classmethod
    def parse(cls: type[_E], text: str) -> _E:
        """Accept ``READ``, ``Read``, ``read``, ``ClusterAction``, ``cluster_action``."""
        key = text.replace("_", "").replace("-", "").upper()
        for member in cls:
            if member.name.replace("_", "") == key:
                return member
        raise InvalidAclError(f"unknown {cls.__name__}: {text!r}")


class ResourceType(_Named):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_Named):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @property
    def is_specific(self) -> bool:
        """May be stored (LITERAL, PREFIXED); the others exist only in filters."""
        return self in (PatternType.LITERAL, PatternType.PREFIXED)


class AclOperation(_Named):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(_Named):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class AuthorizationResult(enum.Enum):
    ALLOWED = "ALLOWED"
    DENIED = "DENIED"


# An ALLOW ACL for any of these operations grants the key (Kafka's implication table).
_ALLOW_GRANTS: dict[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset(
        {
            AclOperation.DESCRIBE,
            AclOperation.READ,
            AclOperation.WRITE,
            AclOperation.DELETE,
            AclOperation.ALTER,
        }
    ),
    AclOperation.DESCRIBE_CONFIGS: frozenset(
        {AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}
    ),
}


# Operations an ACL on each resource type may name (Kafka 4.3's AclEntry.supportedOperations;
# 3.9 lacked the group configs operations and TWO_PHASE_COMMIT). Used to validate
# kafka-acls input and to build the *_authorized_operations bit sets.
SUPPORTED_OPERATIONS: dict[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset(
        {
            AclOperation.READ,
            AclOperation.WRITE,
            AclOperation.CREATE,
            AclOperation.DESCRIBE,
            AclOperation.DELETE,
            AclOperation.ALTER,
            AclOperation.DESCRIBE_CONFIGS,
            AclOperation.ALTER_CONFIGS,
        }
    ),
    ResourceType.GROUP: frozenset(
        {
            AclOperation.READ,
            AclOperation.DESCRIBE,
            AclOperation.DELETE,
            AclOperation.DESCRIBE_CONFIGS,
            AclOperation.ALTER_CONFIGS,
        }
    ),
    ResourceType.CLUSTER: frozenset(
        {
            AclOperation.CREATE,
            AclOperation.CLUSTER_ACTION,
            AclOperation.DESCRIBE_CONFIGS,
            AclOperation.ALTER_CONFIGS,
            AclOperation.IDEMPOTENT_WRITE,
            AclOperation.ALTER,
            AclOperation.DESCRIBE,
        }
    ),
    ResourceType.TRANSACTIONAL_ID: frozenset(
        {AclOperation.DESCRIBE, AclOperation.WRITE, AclOperation.TWO_PHASE_COMMIT}
    ),
    ResourceType.DELEGATION_TOKEN: frozenset({AclOperation.DESCRIBE}),
    ResourceType.USER: frozenset({AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS}),
}

# The error a denied request gets, by resource type (Kafka's AclEntry.authorizationError):
# TOPIC_/GROUP_/CLUSTER_/TRANSACTIONAL_ID_/DELEGATION_TOKEN_AUTHORIZATION_FAILED.
AUTHORIZATION_ERROR_CODES: dict[ResourceType, int] = {
    ResourceType.TOPIC: 29,
    ResourceType.GROUP: 30,
    ResourceType.CLUSTER: 31,
    ResourceType.TRANSACTIONAL_ID: 53,
    ResourceType.DELEGATION_TOKEN: 65,
}


@dataclass(frozen=True, order=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def validate(self) -> None:
        if self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise InvalidAclError(f"resource type {self.resource_type.name} cannot be stored")
        if not self.pattern_type.is_specific:
            raise InvalidAclError(f"pattern type {self.pattern_type.name} cannot be stored")
        if not self.name:
            raise InvalidAclError("resource name must not be empty")
        if self.resource_type is ResourceType.CLUSTER and self.name != CLUSTER_NAME:
            raise InvalidAclError(f"the only valid name for CLUSTER is {CLUSTER_NAME}")


@dataclass(frozen=True, order=True)
class AccessControlEntry:
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def validate(self) -> None:
        if self.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise InvalidAclError(f"operation {self.operation.name} cannot be stored")
        if self.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
            raise InvalidAclError(f"permission {self.permission_type.name} cannot be stored")
        if ":" not in self.principal:
            raise InvalidAclError(f"principal {self.principal!r} is not of the form Type:name")


@dataclass(frozen=True, order=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry


@dataclass(frozen=True)
class ResourcePatternFilter:
    """``name=None`` matches any name. ANY matches the exact name under either pattern
    type; MATCH matches what would apply to a resource of that name (Kafka's
    ``ResourcePatternFilter.matches``)."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type not in (ResourceType.ANY, pattern.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and (
            self.pattern_type != pattern.pattern_type
        ):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        # MATCH
        if pattern.pattern_type is PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD_RESOURCE
        if pattern.pattern_type is PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        return False


@dataclass(frozen=True)
class AccessControlEntryFilter:
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def matches(self, entry: AccessControlEntry) -> bool:
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation != entry.operation:
            return False
        return self.permission_type is AclPermissionType.ANY or (
            self.permission_type == entry.permission_type
        )


@dataclass(frozen=True)
class AclBindingFilter:
    pattern: ResourcePatternFilter = ResourcePatternFilter()
    entry: AccessControlEntryFilter = AccessControlEntryFilter()

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern.matches(binding.pattern) and self.entry.matches(binding.entry)


_Entries = frozenset[AccessControlEntry]
_Acls = Mapping[ResourcePattern, _Entries]


class AclStore:
    """ACLs in memory, indexed by resource pattern.

    Thread-safe by copy-on-write: every change builds a new immutable mapping under the
    writers' lock and swaps it in with one reference assignment, so readers (the event
    loop authorizing requests) never lock and always see one consistent snapshot while a
    metadata store's thread applies changes."""

    def __init__(self, bindings: Iterable[AclBinding] = ()) -> None:
        # one reference, swapped whole: the ACLs and, per resource type, the PREFIXED
        # patterns' (name, entries) (the ones a resource's authorization must scan)
        self._state: tuple[_Acls, dict[ResourceType, tuple[tuple[str, _Entries], ...]]] = ({}, {})
        self._write_lock = threading.Lock()
        for binding in bindings:
            self.add(binding)

    def add(self, binding: AclBinding) -> bool:
        """Store ``binding`` (validated); False if it was already there."""
        binding.pattern.validate()
        binding.entry.validate()
        with self._write_lock:
            entries = self._acls.get(binding.pattern, frozenset())
            if binding.entry in entries:
                return False
            acls = dict(self._acls)
            acls[binding.pattern] = entries | {binding.entry}
            self._swap(acls)
            return True

    def remove(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        """Delete and return every binding the filter matches (DeleteAcls)."""
        with self._write_lock:
            removed = self.describe(binding_filter)
            if not removed:
                return removed
            acls = {p: set(e) for p, e in self._acls.items()}
            for binding in removed:
                acls[binding.pattern].discard(binding.entry)
            self._swap({p: frozenset(e) for p, e in acls.items() if e})
            return removed

    def set_entries(self, pattern: ResourcePattern, entries: Iterable[AccessControlEntry]) -> None:
        """Make ``entries`` the whole ACL set of ``pattern`` (none: the pattern goes): how a
        change read from the metadata store is applied."""
        frozen = frozenset(entries)
        with self._write_lock:
            acls = dict(self._acls)
            if frozen:
                acls[pattern] = frozen
            else:
                acls.pop(pattern, None)
            self._swap(acls)

    def replace(self, acls: Mapping[ResourcePattern, Iterable[AccessControlEntry]]) -> None:
        """Swap in a whole new ACL set (a load from the metadata store)."""
        snapshot = {p: frozenset(e) for p, e in acls.items()}
        with self._write_lock:
            self._swap({p: e for p, e in snapshot.items() if e})

    @property
    def _acls(self) -> _Acls:
        return self._state[0]

    def _swap(self, acls: _Acls) -> None:
        prefixed: dict[ResourceType, list[tuple[str, _Entries]]] = {}
        for pattern, entries in acls.items():
            if pattern.pattern_type is PatternType.PREFIXED:
                prefixed.setdefault(pattern.resource_type, []).append((pattern.name, entries))
        self._state = (acls, {t: tuple(found) for t, found in prefixed.items()})

    def snapshot(self) -> Mapping[ResourcePattern, frozenset[AccessControlEntry]]:
        """The current ACLs (an immutable view: never changed in place)."""
        return self._acls

    def describe(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        """Every binding the filter matches, sorted (DescribeAcls)."""
        acls = self._acls
        return sorted(
            AclBinding(pattern, entry)
            for pattern, entries in acls.items()
            if binding_filter.pattern.matches(pattern)
            for entry in entries
            if binding_filter.entry.matches(entry)
        )

    def __iter__(self) -> Iterator[AclBinding]:
        return iter(self.describe(AclBindingFilter()))

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._acls.values())

    def patterns(self) -> list[ResourcePattern]:
        return sorted(self._acls)

    def entries(self, pattern: ResourcePattern) -> frozenset[AccessControlEntry]:
        return self._acls.get(pattern, frozenset())

    def matching_entries(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        """The ACLs that bear on a concrete resource: LITERAL exact name, LITERAL ``*``,
        and PREFIXED patterns that start the name."""
        acls, prefixed = self._state
        found: list[AccessControlEntry] = []
        for pattern_name in (name, WILDCARD_RESOURCE):
            literal = ResourcePattern(resource_type, pattern_name, PatternType.LITERAL)
            found.extend(acls.get(literal, ()))
            if name == WILDCARD_RESOURCE:
                break
        for prefix, entries in prefixed.get(resource_type, ()):
            if name.startswith(prefix):
                found.extend(entries)
        return found


def parse_super_users(value: str | None) -> frozenset[str]:
    """``super.users``: semicolon-separated principals, e.g. ``User:Bob;User:Alice``."""
    if not value:
        return frozenset()
    return frozenset(part.strip() for part in value.split(";") if part.strip())


class Authorizer:
    """Kafka's authorizer decision over an :class:`AclStore` (thread-safe: it only reads
    the store's current snapshot)."""

    def __init__(
        self,
        store: AclStore | None = None,
        *,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.store = store if store is not None else AclStore()
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    def authorize(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> AuthorizationResult:
        if operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise InvalidAclError(f"cannot authorize operation {operation.name}")
        if resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise InvalidAclError(f"cannot authorize resource type {resource_type.name}")
        if principal in self.super_users:
            return AuthorizationResult.ALLOWED
        entries = self.store.matching_entries(resource_type, name)
        if not entries:
            return (
                AuthorizationResult.ALLOWED
                if self.allow_everyone_if_no_acl_found
                else AuthorizationResult.DENIED
            )
        grants = _ALLOW_GRANTS.get(operation, frozenset({operation}))
        allowed = False
        for entry in entries:
            if entry.principal not in (principal, WILDCARD_PRINCIPAL):
                continue
            if entry.host not in (host, WILDCARD_HOST):
                continue
            if entry.permission_type is AclPermissionType.DENY:
                if entry.operation in (operation, AclOperation.ALL):
                    return AuthorizationResult.DENIED
            elif entry.operation is AclOperation.ALL or entry.operation in grants:
                allowed = True
        return AuthorizationResult.ALLOWED if allowed else AuthorizationResult.DENIED

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> AuthorizationResult:
        """May ``principal`` perform ``operation`` on *some* resource of this type? Kafka's
        ``Authorizer.authorizeByResourceType`` (InitProducerId without a transactional id
        asks it for WRITE on topics): a super user, or a decision for an arbitrary name
        that comes out ALLOWED, or an ALLOW (for the operation itself or ALL, no
        implication) on a pattern that no DENY dominates: any DENY on literal ``*``
        denies everything; a LITERAL allow is dominated by a LITERAL deny of the same
        name; any allow by a PREFIXED deny that starts it. An ALLOW on literal ``*``
        wins unless a wildcard DENY exists."""
        if self.authorize(principal, host, operation, resource_type, "hardcode") is (
            AuthorizationResult.ALLOWED
        ):
            return AuthorizationResult.ALLOWED
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allows: list[ResourcePattern] = []
        wildcard_allow = False
        acls = self.store.snapshot()
        for pattern in sorted(acls):
            if pattern.resource_type != resource_type:
                continue
            for entry in acls[pattern]:
                if entry.host not in (host, WILDCARD_HOST):
                    continue
                if entry.principal not in (principal, WILDCARD_PRINCIPAL):
                    continue
                if entry.operation not in (operation, AclOperation.ALL):
                    continue
                literal = pattern.pattern_type is PatternType.LITERAL
                if entry.permission_type is AclPermissionType.DENY:
                    if literal and pattern.name == WILDCARD_RESOURCE:
                        return AuthorizationResult.DENIED
                    (deny_literal if literal else deny_prefixed).add(pattern.name)
                elif literal and pattern.name == WILDCARD_RESOURCE:
                    wildcard_allow = True
                else:
                    allows.append(pattern)
        if wildcard_allow:
            return AuthorizationResult.ALLOWED
        for pattern in allows:
            if pattern.pattern_type is PatternType.LITERAL and pattern.name in deny_literal:
                continue
            prefixes = (pattern.name[:i] for i in range(1, len(pattern.name) + 1))
            if not any(prefix in deny_prefixed for prefix in prefixes):
                return AuthorizationResult.ALLOWED
        return AuthorizationResult.DENIED

    def allowed(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        result = self.authorize(principal, host, operation, resource_type, name)
        return result is AuthorizationResult.ALLOWED


# ---------------------------------------------------------------------------------------
# ZooKeeper codec (Kafka 3.x ZkData: AclEntry.toJsonCompatibleMap, ResourceZNode,
# LiteralAclChangeStore / ExtendedAclChangeStore)


def zk_acl_path(pattern: ResourcePattern) -> str:
    """``/kafka-acl/Topic/foo`` (LITERAL) or ``/kafka-acl-extended/prefixed/Topic/foo``."""
    pattern.validate()
    if "/" in pattern.name:
        raise InvalidAclError("ZooKeeper-stored ACL names may not contain '/'")
    kind = pattern.resource_type.pascal
    if pattern.pattern_type is PatternType.LITERAL:
        return f"{LITERAL_ACL_PATH}/{kind}/{pattern.name}"
    return f"{EXTENDED_ACL_PATH}/{pattern.pattern_type.name.lower()}/{kind}/{pattern.name}"


def zk_change_root(pattern_type: PatternType) -> str:
    """Where a change to ACLs of this pattern type is announced."""
    if pattern_type is PatternType.LITERAL:
        return ACL_CHANGES_PATH
    if pattern_type is PatternType.PREFIXED:
        return EXTENDED_ACL_CHANGES_PATH
    raise InvalidAclError(f"pattern type {pattern_type.name} is never stored")


def encode_acl_znode(entries: Iterable[AccessControlEntry]) -> bytes:
    """The data of one resource's znode, entries in a stable order."""
    acls = [
        {
            "principal": e.principal,
            "permissionType": e.permission_type.pascal,
            "operation": e.operation.pascal,
            "host": e.host,
        }
        for e in sorted(set(entries))
    ]
    return json.dumps({"version": 1, "acls": acls}, separators=(",", ":")).encode()


def decode_acl_znode(data: bytes | None) -> frozenset[AccessControlEntry]:
    """An ACL znode's entries; empty or missing data means none (Kafka reads it so)."""
    if not data:
        return frozenset()
    doc = json.loads(data)
    if doc.get("version") != 1:
        raise InvalidAclError(f"unsupported ACL znode version {doc.get('version')!r}")
    out = set()
    for acl in doc.get("acls", []):
        entry = AccessControlEntry(
            principal=acl["principal"],
            host=acl["host"],
            operation=AclOperation.parse(acl["operation"]),
            permission_type=AclPermissionType.parse(acl["permissionType"]),
        )
        entry.validate()
        out.add(entry)
    return frozenset(out)


def encode_acl_change(pattern: ResourcePattern) -> bytes:
    """The data of an ``acl_changes_`` sequential node for a change to ``pattern``."""
    if pattern.pattern_type is PatternType.LITERAL:
        return f"{pattern.resource_type.name}:{pattern.name}".encode()
    if pattern.pattern_type is PatternType.PREFIXED:
        doc = {
            "version": 1,
            "resourceType": pattern.resource_type.name,
            "name": pattern.name,
            "patternType": pattern.pattern_type.name,
        }
        return json.dumps(doc, separators=(",", ":")).encode()
    raise InvalidAclError(f"pattern type {pattern.pattern_type.name} is never stored")


def decode_acl_change(data: bytes) -> ResourcePattern:
    """A ``/kafka-acl-changes`` notification: ``TOPIC:topic-1`` (the name may hold ':')."""
    kind, sep, name = data.decode().partition(":")
    if not sep:
        raise InvalidAclError(f"malformed ACL change notification {data!r}")
    resource_type = ResourceType.parse(kind)
    return ResourcePattern(resource_type, name, PatternType.LITERAL)


def decode_extended_acl_change(data: bytes) -> ResourcePattern:
    """A ``/kafka-acl-extended-changes`` notification (JSON, version 1)."""
    doc = json.loads(data)
    if doc.get("version") != 1:
        raise InvalidAclError(f"unsupported ACL change version {doc.get('version')!r}")
    return ResourcePattern(
        ResourceType.parse(doc["resourceType"]),
        doc["name"],
        PatternType.parse(doc["patternType"]),
    )
