"""ACLs against a real Apache Kafka 4.3.1 broker (KRaft, one node, from its jars, with
``StandardAuthorizer``) and against kafkacore, side by side.

1. CreateAcls / DescribeAcls / DeleteAcls (raw frames, v1-v3): the same requests to both,
   every answer compared field by field (valid bindings of every resource type, Kafka's
   validation messages, bindings Kafka cannot even build, filters of every pattern type,
   overlapping delete filters).
2. Kafka's own ``kafka-acls`` (``org.apache.kafka.tools.AclCommand`` 4.3.1, and 3.9.1's
   ``kafka.admin.AclCommand`` for ``--list``) run against both brokers, and
   ``kafkacore acls`` against kafkacore: the same output. Kafka prints resources and
   entries in ``HashMap`` order over enums hashed by identity (it changes from run to
   run), so outputs are compared byte for byte after sorting the blocks and the entry
   lines inside each block (the layout, spaces and tabs included, is kept).
3. CLUSTER_AUTHORIZATION_FAILED: once the principal has no ALTER/DESCRIBE on the cluster,
   both answer 31 in every creation/filter result (DescribeAcls: top level). Kafka's
   message embeds its request's toString (``Request Request(processor=..., ...) is not
   authorized.``), which kafkacore does not reproduce: for these only the codes and the
   message's last words are compared.

Both brokers run with ``allow.everyone.if.no.acl.found=true`` and first grant
``User:ANONYMOUS`` ALL on the cluster (so its KRaft broker/controller traffic and the
tools keep working while other cluster ACLs exist); the last test takes that away.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.protocol import APIS_BY_NAME, RequestHeader
from kafkacore.protocol.api import encode_request
from support.acl_requests import (
    ALL,
    ALLOW,
    ALTER,
    ANY,
    CLUSTER,
    CLUSTER_ACTION,
    CREATE_TOKENS,
    DENY,
    DESCRIBE,
    GROUP,
    LITERAL,
    MATCH,
    PREFIXED,
    READ,
    TOKEN,
    TOPIC,
    TXN,
    USER,
    WRITE,
    acl_row,
    acl_rows,
    creation,
    filter_fields,
)
from support.brokers import Broker, free_port
from support.kafka_jars import (
    JVM_FLAGS,
    KAFKA_ZK_VERSION,
    kafka_libs,
    kraft_single_node_props,
    require,
    start_kraft_node,
    stop_process,
)
from support.raw_client import receive_blocking

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600), pytest.mark.slow]

SETTINGS = [
    "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "allow.everyone.if.no.acl.found=true",
]
ANONYMOUS = "User:ANONYMOUS"
_Filter: Any = APIS_BY_NAME["DeleteAcls"].request.cls.DeleteAclsFilter


# --- raw requests ---------------------------------------------------------------------------


def call(port: int, name: str, version: int, **fields: Any) -> Any:
    api = APIS_BY_NAME[name]
    with socket.create_connection(("localhost", port), timeout=30) as sock:
        header = RequestHeader(api.key, version, 7, "acl-interop")
        sock.sendall(encode_request(header, api.request.cls(**fields)))
        cid, response = receive_blocking(sock, name, version)
    assert cid == 7
    return response


def create(port: int, version: int, *creations: Any) -> list[tuple[int, str | None]]:
    r = call(port, "CreateAcls", version, creations=list(creations))
    return [(x.error_code, x.error_message) for x in r.results]


def describe(port: int, version: int, **kw: Any) -> tuple[int, str | None, frozenset[Any]]:
    r = call(port, "DescribeAcls", version, **filter_fields(**kw))
    acls = frozenset(acl_rows(r))
    # one resource per pattern, as Kafka groups them
    patterns = [(x.resource_type, x.resource_name, x.pattern_type) for x in r.resources]
    assert len(patterns) == len(set(patterns))
    return r.error_code, r.error_message, acls


def delete(port: int, version: int, *filters: dict[str, Any]) -> list[Any]:
    r = call(port, "DeleteAcls", version, filters=[_Filter(**f) for f in filters])
    return [
        (
            f.error_code,
            f.error_message,
            frozenset((m.error_code, m.error_message, *acl_row(m, m)) for m in f.matching_acls),
        )
        for f in r.filter_results
    ]


def _until(what: str, probe: Any, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            if probe():
                return
        except OSError as exc:
            last = exc
        time.sleep(0.3)
    raise AssertionError(f"{what}: gave up, last {last!r}")


# --- the two brokers ------------------------------------------------------------------------


class Kafka:
    """Apache Kafka from the cached jars: KRaft broker+controller on free ports."""

    def __init__(self, libs: Path, home: Path) -> None:
        self.libs, self.home = libs, home
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Kafka:
        cport = free_port()
        props = self.home / "server.properties"
        props.write_text(
            kraft_single_node_props(
                self.home, self.port, cport, "offsets.topic.num.partitions=1", *SETTINGS
            )
        )
        self.proc = start_kraft_node(self.libs, props, self.home / "kafka.log")
        _until("Kafka answers", lambda: describe(self.port, 3)[0] == 0)
        return self

    def stop(self) -> None:
        stop_process(self.proc)


@pytest.fixture(scope="module")
def kafka_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    broker = Kafka(kafka_libs(), tmp_path_factory.mktemp("kafka")).start()
    try:
        _grant_anonymous(broker.port)
        yield broker.port
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def kafkacore_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    broker = Broker(tmp_path_factory.mktemp("kafkacore") / "data", SETTINGS).start()
    try:
        _grant_anonymous(broker.port)
        yield broker.port
    finally:
        broker.stop()


def _grant_anonymous(port: int) -> None:
    grant = creation(CLUSTER, "kafka-cluster", principal=ANONYMOUS, op=ALL)
    assert create(port, 3, grant) == [(0, "")]


@pytest.fixture(scope="module")
def both(kafka_port: int, kafkacore_port: int) -> tuple[int, int]:
    return kafka_port, kafkacore_port


def same(both: tuple[int, int], step: Any) -> Any:
    """``step(port)`` on Kafka, then on kafkacore: the answers must be equal."""
    kafka_answer = step(both[0])
    kafkacore_answer = step(both[1])
    assert kafkacore_answer == kafka_answer, f"Kafka: {kafka_answer}\nkafkacore: {kafkacore_answer}"
    return kafka_answer


# --- 1. the APIs ----------------------------------------------------------------------------


VALID = [
    creation(),
    creation(TOPIC, "ord", PREFIXED, "User:bob", "10.0.0.1", WRITE, DENY),
    creation(TOPIC, "*", LITERAL, "User:*", "*", DESCRIBE, ALLOW),
    creation(GROUP, "g1"),
    creation(TXN, "tx1", op=WRITE),
    creation(CLUSTER, "kafka-cluster", op=ALTER),
    creation(USER, "User:bob", op=CREATE_TOKENS),
    creation(TOKEN, "tok", op=DESCRIBE),
    creation(TOPIC, "a/b"),  # KRaft allows '/'
    creation(GROUP, "g1", op=WRITE),  # not an operation of groups: stored all the same
    creation(TOPIC, "orders", principal="Group:x", host=""),
]


def test_create_acls(both: tuple[int, int]) -> None:
    assert same(both, lambda p: create(p, 3, *VALID)) == [(0, "")] * len(VALID)
    same(both, lambda p: create(p, 2, VALID[0], VALID[1]))  # again: success
    invalid = [
        creation(CLUSTER, "other", op=ALTER),
        creation(name=""),
        creation(rtype=99),
        creation(pattern=99),
        creation(op=99),
        creation(perm=99),
        creation(principal="alice"),
        creation(principal=""),
        creation(principal="alice", op=99),
        creation(principal="alice", name=""),
        creation(name="fine"),
    ]
    for version in (1, 2, 3):
        answers = same(both, lambda p, v=version: create(p, v, *invalid))
        assert [code for code, _ in answers] == [42] * 10 + [0]
    # what Kafka cannot build (ResourcePattern / AccessControlEntry refuse it)
    for bad in (
        creation(pattern=MATCH),
        creation(pattern=ANY),
        creation(rtype=ANY),
        creation(op=ANY),
        creation(perm=ANY),
    ):
        assert same(both, lambda p, b=bad: create(p, 3, creation(name="x"), b)) == [(-1, None)] * 2


FILTERS = [
    {},
    {"rtype": TOPIC},
    {"rtype": TOPIC, "name": "orders", "pattern": LITERAL},
    {"rtype": TOPIC, "name": "orders", "pattern": MATCH},
    {"rtype": TOPIC, "name": "ordinary", "pattern": MATCH},
    {"rtype": TOPIC, "name": "ord", "pattern": ANY},
    {"rtype": TOPIC, "name": "ord", "pattern": PREFIXED},
    {"name": "g1"},
    {"principal": "User:alice"},
    {"principal": "User:alice", "op": READ},
    {"host": "10.0.0.1", "perm": DENY},
    {"perm": ALLOW, "op": ALTER},
    {"rtype": 99},
    {"pattern": 99},
    {"op": 99},
    {"rtype": USER},
    {"rtype": CLUSTER, "pattern": LITERAL},
]


def test_describe_acls(both: tuple[int, int]) -> None:
    # the ACLs the filters select from, whatever ran before (creating one again succeeds)
    assert same(both, lambda p: create(p, 3, *VALID)) == [(0, "")] * len(VALID)
    for version in (1, 2, 3):
        answers = [same(both, lambda p, v=version, f=f: describe(p, v, **f)) for f in FILTERS]
        # the comparison must have something to agree on: every ACL, and filters selecting
        # different subsets of them (unknown codes select nothing, as in Kafka)
        everything = answers[FILTERS.index({})]
        assert everything[0] == 0 and len(everything[2]) >= len(VALID)
        selected = {acls for code, _, acls in answers if code == 0}
        assert len(selected) >= 8 and frozenset() in selected
        assert answers[FILTERS.index({"rtype": TOPIC, "name": "orders", "pattern": MATCH})][2]


def test_delete_acls(both: tuple[int, int]) -> None:
    answers = same(
        both,
        lambda p: delete(
            p,
            3,
            filter_fields(TOPIC, "nope", LITERAL),
            filter_fields(TOPIC, principal="User:alice", op=READ),
            filter_fields(principal="User:alice", op=READ),  # overlaps the previous one
            filter_fields(pattern=99),
            filter_fields(op=99),
            filter_fields(rtype=99),
            filter_fields(TOPIC, "ord", PREFIXED),
            filter_fields(USER),
        ),
    )
    assert [a[0] for a in answers] == [0, 0, 0, 42, 42, 42, 0, 0]
    assert len(answers[1][2]) == 3 and answers[1][2] <= answers[2][2]
    for version in (1, 2):
        same(
            both,
            lambda p, v=version: delete(
                p, v, filter_fields(TOKEN), filter_fields(TXN, "tx1", MATCH)
            ),
        )
    same(both, lambda p: describe(p, 3))


# --- 2. kafka-acls --------------------------------------------------------------------------


def kafka_acls(port: int, *args: str, version: str | None = None) -> tuple[int, str]:
    libs = kafka_libs(version)
    main = (
        "kafka.admin.AclCommand"
        if version == KAFKA_ZK_VERSION
        else "org.apache.kafka.tools.AclCommand"
    )
    cmd = [require("java"), *JVM_FLAGS, "-cp", f"{libs}/*", main]
    cmd += ["--bootstrap-server", f"localhost:{port}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    return proc.returncode, proc.stdout


def kafkacore_acls(port: int, *args: str) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "kafkacore", "acls", "--bootstrap-server", f"localhost:{port}"]
    proc = subprocess.run(
        [*cmd, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=os.environ.copy(),
    )
    return proc.returncode, proc.stdout


def canonical(text: str) -> str:
    """``text`` with its blocks (separated by blank lines) sorted, and the entry lines of
    each block sorted; every character kept (the one-space prefix of the first entry of
    an ``Adding ACLs`` block stays on the first line)."""
    blocks = []
    # one-line messages ("ACLs for principal `p`", which heads the blocks after it, and
    # "Acl ... already exists.") are blocks of their own here
    text = "\n".join(
        f"\n{line}\n" if line.startswith(("ACLs for principal", "Acl (")) else line
        for line in text.split("\n")
    )
    text = "\n\n".join(b.strip("\n") for b in text.split("\n\n") if b.strip("\n"))
    for block in text.split("\n\n"):
        lines = block.split("\n")
        head, entries = lines[0], lines[1:]
        first_prefix = ""
        if entries and entries[0].startswith(" \t"):
            first_prefix, entries[0] = " ", entries[0][1:]
        sorted_entries = sorted(entries)
        if sorted_entries:
            sorted_entries[0] = first_prefix + sorted_entries[0]
        blocks.append("\n".join([head, *sorted_entries]))
    return "\n\n".join(sorted(blocks))


def same_output(a: str, b: str) -> bool:
    """The same blocks (:func:`canonical`) and the same lines, blank ones included (the
    one-space prefix of a block's first entry line set aside: it moves with the order)."""

    def lines(text: str) -> list[str]:
        return sorted(line[1:] if line.startswith(" \t") else line for line in text.split("\n"))

    return canonical(a) == canonical(b) and lines(a) == lines(b)


TOOL_STEPS: list[tuple[str, ...]] = [
    (
        "--add",
        "--allow-principal",
        "User:alice",
        "--allow-principal",
        "User:bob",
        "--operation",
        "Read",
        "--operation",
        "Write",
        "--topic",
        "tool-orders",
    ),
    (
        "--add",
        "--allow-principal",
        "User:alice",
        "--operation",
        "Read",
        "--topic",
        "tool-orders",
        "--topic",
        "tool-other",
    ),
    (
        "--add",
        "--allow-principal",
        "User:*",
        "--allow-host",
        "*",
        "--deny-principal",
        "User:BadBob",
        "--deny-host",
        "198.51.100.3",
        "--operation",
        "Read",
        "--topic",
        "tool-test",
    ),
    (
        "--add",
        "--allow-principal",
        "User:jane",
        "--producer",
        "--topic",
        "tool-",
        "--resource-pattern-type",
        "prefixed",
    ),
    (
        "--add",
        "--allow-principal",
        "User:jane",
        "--producer",
        "--idempotent",
        "--topic",
        "tool-t1",
        "--transactional-id",
        "tool-tx",
    ),
    (
        "--add",
        "--allow-principal",
        "User:carl",
        "--consumer",
        "--topic",
        "tool-t1",
        "--group",
        "tool-g",
    ),
    ("--list", "--topic", "tool-orders"),
    ("--list", "--topic", "tool-t1", "--resource-pattern-type", "match"),
    ("--list", "--principal", "User:jane"),
    ("--list", "--group", "tool-g", "--cluster"),
    (
        "--remove",
        "--force",
        "--allow-principal",
        "User:bob",
        "--operation",
        "Read",
        "--topic",
        "tool-orders",
    ),
    ("--remove", "--force", "--topic", "tool-other"),
    ("--list",),
]


def test_kafka_acls_tool(both: tuple[int, int]) -> None:
    kafka_port, kafkacore_port = both
    for step in TOOL_STEPS:
        code_k, out_k = kafka_acls(kafka_port, *step)
        code_kc, out_kc = kafka_acls(kafkacore_port, *step)
        assert code_k == code_kc == 0, (step, out_k, out_kc)
        assert same_output(out_kc, out_k), f"{step}\nKafka:\n{out_k}\nkafkacore:\n{out_kc}"
    # Kafka 3.9.1's AclCommand lists the same on both (its layout: ': \n \t...' blocks)
    code_k, out_k = kafka_acls(
        kafka_port, "--list", "--topic", "tool-orders", version=KAFKA_ZK_VERSION
    )
    code_kc, out_kc = kafka_acls(
        kafkacore_port, "--list", "--topic", "tool-orders", version=KAFKA_ZK_VERSION
    )
    # 3.9's blocks end their last entry line with a space: which line that is depends on
    # the order, so the spaces are counted, then stripped for the comparison
    assert code_k == code_kc == 0 and out_k
    assert out_kc.count(" \n") == out_k.count(" \n")
    assert same_output(out_kc.replace(") \n", ")\n"), out_k.replace(") \n", ")\n"))


def test_kafkacore_acls_prints_what_kafka_acls_prints(both: tuple[int, int]) -> None:
    """``kafkacore acls`` against kafkacore, Kafka's tool against Kafka: the same output
    (fresh resources, so that both start from the same state)."""
    kafka_port, kafkacore_port = both
    for step in TOOL_STEPS:
        renamed = tuple(a.replace("tool-", "kc-") for a in step)
        code_k, out_k = kafka_acls(kafka_port, *renamed)
        code_kc, out_kc = kafkacore_acls(kafkacore_port, *renamed)
        assert code_k == code_kc == 0, (renamed, out_k, out_kc)
        assert same_output(out_kc, out_k), f"{renamed}\nKafka:\n{out_k}\nkafkacore acls:\n{out_kc}"


# --- 3. CLUSTER_AUTHORIZATION_FAILED ---------------------------------------------------------


def test_cluster_authorization_failed(both: tuple[int, int]) -> None:
    """Runs last: ANONYMOUS keeps only CLUSTER_ACTION on the cluster (Kafka's own broker
    to controller traffic needs it), so it may no longer create, describe or delete."""
    keep = creation(CLUSTER, "kafka-cluster", principal=ANONYMOUS, op=CLUSTER_ACTION)
    same(both, lambda p: create(p, 3, keep))
    gone = same(both, lambda p: delete(p, 3, filter_fields(CLUSTER, principal=ANONYMOUS, op=ALL)))
    assert len(gone[0][2]) == 1

    def codes(port: int) -> tuple[Any, ...]:
        created = create(port, 3, creation(name="late"), creation(name="later"))
        described = call(port, "DescribeAcls", 3, **filter_fields())
        deleted = call(port, "DeleteAcls", 3, filters=[_Filter(**filter_fields())])
        messages = [m for _, m in created] + [described.error_message]
        messages += [f.error_message for f in deleted.filter_results]
        assert all(m is not None and m.endswith(".") for m in messages), messages
        return (
            [c for c, _ in created],
            (described.error_code, described.resources),
            [(f.error_code, f.matching_acls) for f in deleted.filter_results],
        )

    assert same(both, codes) == ([31, 31], (31, []), [(31, [])])
