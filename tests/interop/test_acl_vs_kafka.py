"""Our ACL code against Kafka 3.9.1's own:

* the authorizer and filters against ``StandardAuthorizer`` (``java/AclDecisions.java``):
  the same ACL sets, ``super.users`` and ``allow.everyone.if.no.acl.found``, the same
  requests and DescribeAcls filters, and every decision and every filter result compared;
* the ZooKeeper codec against ``kafka.zk.ResourceZNode`` / ``ZkAclStore`` /
  ``ZkAclChangeStore`` (``java/AclZkCodec.java``): paths, change notifications and znode
  JSON, each side reading what the other writes.

Needs Java 17+ and Kafka 3.9.1's jars (``KAFKA_VERSION=3.9.1 scripts/kafka-jars.sh``).
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkacore.security.acl import (
    ACL_CHANGE_PREFIX,
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
from support.kafka_jars import JVM_FLAGS, compile_java

pytestmark = pytest.mark.interop

SEED = 20261125
CASES = 600
NAMES = ["a", "ab", "abc", "b", "ba", "*"]
PRINCIPALS = ["User:alice", "User:bob", "User:*", "Group:alice"]
HOSTS = ["*", "10.0.0.1", "10.0.0.2"]
ACL_HOSTS = ["*", "*", "*", "10.0.0.1", "10.0.0.2"]
RESOURCE_TYPES = [
    ResourceType.TOPIC,
    ResourceType.GROUP,
    ResourceType.CLUSTER,
    ResourceType.TRANSACTIONAL_ID,
    ResourceType.DELEGATION_TOKEN,
]
OPS = [op for op in AclOperation if op not in (AclOperation.ANY, AclOperation.UNKNOWN)]
# Weighted towards the operations where implication and DENY-over-ALLOW interact, so that
# every rule is exercised many times (a mutation of any of them fails this test).
HOT_OPS = [
    *[AclOperation.DESCRIBE, AclOperation.READ, AclOperation.ALL] * 3,
    *[AclOperation.WRITE, AclOperation.ALTER, AclOperation.DELETE] * 2,
    *[AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS] * 3,
]
REQUEST_OPS = [AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS] * 4
PERMS = [AclPermissionType.ALLOW, AclPermissionType.DENY]


JAVA_SOURCES = [
    Path(__file__).resolve().parent / "java" / name
    for name in ("AclDecisions.java", "AclZkCodec.java")
]


@dataclass(frozen=True)
class AclDecisions:
    """AclDecisions.java compiled against Kafka 3.9.1's jars."""

    libs: Path
    classes: Path

    def run(self, script: Path, main: str = "AclDecisions") -> list[str]:
        cmd = ["java", *JVM_FLAGS, "-cp", f"{self.classes}:{self.libs}/*", main]
        proc = subprocess.run(
            [*cmd, str(script)], capture_output=True, text=True, timeout=300, check=False
        )
        if proc.returncode != 0:
            raise AssertionError(f"{main} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
        return proc.stdout.splitlines()


def _compile(libs: Path, classes: Path, sources: list[Path]) -> AclDecisions:
    compile_java(libs, classes, sources)
    return AclDecisions(libs, classes)


@pytest.fixture(scope="module")
def acl_decisions(kafka_zk_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> AclDecisions:
    """Both helpers against Kafka 3.9.1 (the last release with kafka.zk)."""
    return _compile(kafka_zk_libs, tmp_path_factory.mktemp("acl-classes-39"), JAVA_SOURCES)


@pytest.fixture(scope="module")
def acl_decisions_4x(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> AclDecisions:
    """AclDecisions.java against the project's default Kafka (4.x)."""
    return _compile(kafka_libs, tmp_path_factory.mktemp("acl-classes-4x"), JAVA_SOURCES[:1])


def _name(rng: random.Random, rtype: ResourceType) -> str:
    return "kafka-cluster" if rtype is ResourceType.CLUSTER else rng.choice(NAMES)


def _binding(rng: random.Random, ops: list[AclOperation] = OPS) -> AclBinding:
    rtype = rng.choice(RESOURCE_TYPES)
    return AclBinding(
        ResourcePattern(
            rtype, _name(rng, rtype), rng.choice([PatternType.LITERAL] * 2 + [PatternType.PREFIXED])
        ),
        AccessControlEntry(
            rng.choice(PRINCIPALS),
            rng.choice(ACL_HOSTS),
            rng.choice([*ops, *HOT_OPS]),
            rng.choice(PERMS),
        ),
    )


def _filter(rng: random.Random, ops: list[AclOperation]) -> AclBindingFilter:
    rtype = rng.choice([ResourceType.ANY, *RESOURCE_TYPES])
    name = None if rng.random() < 0.25 else rng.choice([*NAMES, "abcd", "kafka-cluster"])
    return AclBindingFilter(
        ResourcePatternFilter(
            rtype,
            name,
            rng.choice(
                [PatternType.ANY, PatternType.MATCH, PatternType.LITERAL, PatternType.PREFIXED]
            ),
        ),
        AccessControlEntryFilter(
            None if rng.random() < 0.6 else rng.choice(PRINCIPALS),
            None if rng.random() < 0.7 else rng.choice(HOSTS),
            AclOperation.ANY if rng.random() < 0.6 else rng.choice(ops),
            rng.choice([AclPermissionType.ANY, *PERMS]),
        ),
    )


def _acl_line(b: AclBinding) -> str:
    p, e = b.pattern, b.entry
    fields = [p.resource_type, p.name, p.pattern_type, e.principal, e.host, e.operation]
    return "\t".join(["acl", *(str(int(f)) if not isinstance(f, str) else f for f in fields)]) + (
        f"\t{int(e.permission_type)}"
    )


@dataclass
class Case:
    super_users: str | None
    allow_everyone: bool
    acls: list[AclBinding]
    requests: list[tuple[str, str, AclOperation, ResourceType, str]]
    filters: list[AclBindingFilter]


def _cases(ops: list[AclOperation]) -> list[Case]:
    rng = random.Random(SEED)
    cases = []
    for _ in range(CASES):
        requests = []
        for _ in range(25):
            rtype = rng.choice(RESOURCE_TYPES)
            name = _name(rng, rtype) if rng.random() < 0.8 else rng.choice(["abcd", "c", "a*"])
            principal = rng.choice(["User:alice", "User:bob", "User:carol", "Group:alice"])
            requests.append(
                (principal, rng.choice(HOSTS[1:]), rng.choice([*ops, *REQUEST_OPS]), rtype, name)
            )
        cases.append(
            Case(
                super_users=rng.choice([None, "User:carol", "User:bob;User:carol"]),
                allow_everyone=rng.random() < 0.3,
                # the controller never stores a duplicate; StandardAuthorizer refuses one
                acls=list(dict.fromkeys(_binding(rng, ops) for _ in range(rng.randrange(0, 14)))),
                requests=requests,
                filters=[_filter(rng, ops) for _ in range(4)],
            )
        )
    return cases


@pytest.mark.parametrize("kafka", ["3.9", "4.x"])
def test_every_decision_and_filter_matches_standard_authorizer(
    kafka: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    fixture = "acl_decisions" if kafka == "3.9" else "acl_decisions_4x"
    acl_decisions: AclDecisions = request.getfixturevalue(fixture)
    # TWO_PHASE_COMMIT (15) only exists from Kafka 4.0
    ops = OPS if kafka == "4.x" else [op for op in OPS if op is not AclOperation.TWO_PHASE_COMMIT]
    cases = _cases(ops)
    lines: list[str] = []
    expected: list[str] = []
    for case in cases:
        lines.append("reset")
        lines.append(f"config\t{case.super_users or '~'}\t{str(case.allow_everyone).lower()}")
        lines.extend(_acl_line(b) for b in case.acls)
        authorizer = Authorizer(
            AclStore(case.acls),
            super_users=parse_super_users(case.super_users),
            allow_everyone_if_no_acl_found=case.allow_everyone,
        )
        for principal, host, op, rtype, name in case.requests:
            lines.append(f"authorize\t{principal}\t{host}\t{int(op)}\t{int(rtype)}\t{name}")
            expected.append(authorizer.authorize(principal, host, op, rtype, name).value)
        for principal, host, op, rtype, _ in case.requests[:8]:
            lines.append(f"bytype\t{principal}\t{host}\t{int(op)}\t{int(rtype)}")
            expected.append(authorizer.authorize_by_resource_type(principal, host, op, rtype).value)
        for f in case.filters:
            p, e = f.pattern, f.entry
            fields = [
                str(int(p.resource_type)),
                p.name if p.name is not None else "~",
                str(int(p.pattern_type)),
                e.principal if e.principal is not None else "~",
                e.host if e.host is not None else "~",
                str(int(e.operation)),
                str(int(e.permission_type)),
            ]
            lines.append("\t".join(["describe", *fields]))
            found = sorted(_acl_line(b) for b in authorizer.store.describe(f))
            expected.append(f"describe {len(found)}")
            expected.extend(found)
    script = tmp_path / "acl-cases.tsv"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    actual = acl_decisions.run(script)
    assert len(actual) == len(expected)
    mismatches = [
        (i, want, got)
        for i, (want, got) in enumerate(zip(expected, actual, strict=True))
        if want != got
    ]
    assert not mismatches, mismatches[:20]
    # the comparison has teeth: both outcomes occur many times
    assert actual.count("ALLOWED") > 200
    assert actual.count("DENIED") > 200


ZK_OPS = [op for op in OPS if op is not AclOperation.TWO_PHASE_COMMIT]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_zk_codec_matches_kafka(acl_decisions: AclDecisions, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    patterns = [
        ResourcePattern(rtype, name, ptype)
        for rtype in RESOURCE_TYPES
        for name in (["kafka-cluster"] if rtype is ResourceType.CLUSTER else ["t", "a:b", "*"])
        for ptype in (PatternType.LITERAL, PatternType.PREFIXED)
    ]
    entry_sets = [
        {_binding(rng, ZK_OPS).entry for _ in range(rng.randrange(1, 6))} for _ in range(40)
    ]
    lines = [f"path\t{int(p.resource_type)}\t{p.name}\t{int(p.pattern_type)}" for p in patterns]
    lines += [
        f"decodechange\t{int(p.pattern_type)}\t{_b64(encode_acl_change(p))}" for p in patterns
    ]
    lines += [f"znode\t{_b64(encode_acl_znode(entries))}" for entries in entry_sets]
    script = tmp_path / "zk-cases.tsv"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = acl_decisions.run(script, "AclZkCodec")
    assert len(out) == len(lines)
    paths, decoded, znodes = (
        out[: len(patterns)],
        out[len(patterns) : 2 * len(patterns)],
        out[2 * len(patterns) :],
    )
    for pattern, line in zip(patterns, paths, strict=True):
        znode_path, change_path, change_data = line.split("\t")
        assert znode_path == zk_acl_path(pattern)
        assert change_path == f"{zk_change_root(pattern.pattern_type)}/{ACL_CHANGE_PREFIX}"
        kafka_change = base64.b64decode(change_data)
        if pattern.pattern_type is PatternType.LITERAL:
            assert kafka_change == encode_acl_change(pattern)
            assert decode_acl_change(kafka_change) == pattern
        else:
            assert json.loads(kafka_change) == json.loads(encode_acl_change(pattern))
            assert decode_extended_acl_change(kafka_change) == pattern
    for pattern, line in zip(patterns, decoded, strict=True):
        rtype, name, ptype = line.split("\t")
        assert (int(rtype), name, int(ptype)) == (
            pattern.resource_type,
            pattern.name,
            pattern.pattern_type,
        )
    for entries, line in zip(entry_sets, znodes, strict=True):
        kafka_read, kafka_encoded = line.split("\t")
        ours = sorted(
            f"{e.principal},{e.host},{int(e.operation)},{int(e.permission_type)}" for e in entries
        )
        assert kafka_read == ";".join(ours)
        kafka_bytes = base64.b64decode(kafka_encoded)
        assert decode_acl_znode(kafka_bytes) == entries
        want = json.loads(encode_acl_znode(entries))
        got = json.loads(kafka_bytes)
        assert got["version"] == want["version"]
        assert sorted(json.dumps(a, sort_keys=True) for a in got["acls"]) == sorted(
            json.dumps(a, sort_keys=True) for a in want["acls"]
        )


def test_supported_operations_and_errors_match_kafka_4x(
    acl_decisions_4x: AclDecisions, tmp_path: Path
) -> None:
    types = [t for t in RESOURCE_TYPES]
    script = tmp_path / "supported.tsv"
    script.write_text("".join(f"supported\t{int(t)}\n" for t in types), encoding="utf-8")
    out = acl_decisions_4x.run(script)
    ours = [
        "supported "
        + ",".join(str(int(op)) for op in sorted(SUPPORTED_OPERATIONS[t]))
        + f" {AUTHORIZATION_ERROR_CODES[t]}"
        for t in types
    ]
    assert out == ours
