"""Fixtures of the client-level transaction tests (issue 13): the broker under test, the
Java client program of ``tests/txn/java`` compiled against Kafka's jars, and Kafka's
``kafka-transactions`` tool (``org.apache.kafka.tools.TransactionsCommand``, what
``kafka-transactions.sh`` runs).

The broker is a fixture parameter, ``txn_target``: ``make test`` runs every test against a
kafkacore broker (``broker_factory``, one per test module). ``KAFKACORE_TXN_TESTS_AGAINST``
picks others (a comma-separated list): ``kafka`` is Apache Kafka itself (one KRaft node
from the jars of ``scripts/kafka-jars.sh`` for the session), ``kafka-tv1`` Kafka speaking
the classic transaction protocol (feature ``transaction.version=1``), ``both`` means
``kafkacore,kafka``. That is how the tests were checked to be right, and how to tell a test
bug from a broker bug. Every broker gets the same settings (:data:`BROKER_SETTINGS`),
notably a 200 ms scan for timed-out transactions, as Kafka's own ``TransactionsTest`` uses.

Helpers shared by the test modules (topics, consuming to the end under an isolation level)
live here too; they use confluent-kafka (librdkafka), the client every kafkacore user has.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from compat.conftest import KafkaTools
from support.brokers import BrokerFactory, free_port
from support.kafka_jars import (
    compile_java,
    kraft_single_node_props,
    start_kraft_node,
    stop_process,
)
from support.kafka_jars import kafka_libs as fetch_kafka_libs

__all__ = [
    "BROKER_SETTINGS",
    "TARGET_ENV",
    "Record",
    "TxnTarget",
    "create_topic",
    "read_to_end",
]

TARGET_ENV = "KAFKACORE_TXN_TESTS_AGAINST"
JAVA_SOURCES = Path(__file__).resolve().parent / "java"

# The same on both brokers. Small internal topics (Kafka's TransactionsTest uses 3
# transaction-log partitions), no rebalance delay, and the scan for timed-out
# transactions every 200 ms so the timeout cases take a second, not ten.
BROKER_SETTINGS = (
    "offsets.topic.num.partitions=3",
    "offsets.topic.replication.factor=1",
    "transaction.state.log.num.partitions=3",
    "transaction.state.log.replication.factor=1",
    "transaction.state.log.min.isr=1",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms=200",
    "group.initial.rebalance.delay.ms=0",
)


TARGETS = ("kafkacore", "kafka", "kafka-tv1")


def _targets() -> list[str]:
    value = os.environ.get(TARGET_ENV, "kafkacore")
    names = ["kafkacore", "kafka"] if value == "both" else value.split(",")
    unknown = set(names) - set(TARGETS)
    if unknown:
        raise pytest.UsageError(f"{TARGET_ENV}: unknown broker(s) {sorted(unknown)}")
    return names


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test run against Kafka runs Kafka's code from downloaded jars."""
    here = Path(__file__).resolve().parent
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or callspec.params.get("txn_target", "kafkacore") == "kafkacore":
            continue
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.interop)
            item.add_marker(pytest.mark.downloads)


@dataclass(frozen=True)
class TxnTarget:
    """The broker under test: ``name`` is a target (``kafkacore``, ``kafka``, ...);
    ``log_text`` gives what it printed (for failure messages); ``restart`` stops it cleanly
    and starts it again on the same data."""

    name: str
    bootstrap: str
    log_text: Callable[[], str]
    restart: Callable[[], None]

    def log_tail(self, chars: int = 3000) -> str:
        return f"--- {self.name} log ---\n{self.log_text()[-chars:]}"


# The JVM of a restarted Kafka node (start_kraft_node's flags; it formats, which a restart
# must not do).
_KAFKA_SERVER = (
    "java",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
)


class _KafkaNode:
    """Apache Kafka (KRaft, broker and controller in one JVM) on free ports; with a
    ``transaction_version``, that level of the feature (default: Kafka's, 2)."""

    def __init__(self, home: Path, transaction_version: int | None = None) -> None:
        self.home = home
        self.transaction_version = transaction_version
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.home / "kafka.log"

    @property
    def props(self) -> Path:
        return self.home / "server.properties"

    def start(self) -> _KafkaNode:
        self.props.write_text(
            kraft_single_node_props(self.home, self.port, free_port(), *BROKER_SETTINGS)
        )
        self.proc = start_kraft_node(fetch_kafka_libs(), self.props, self.log)
        self._wait_serving()
        if self.transaction_version is not None:
            feature = f"transaction.version={self.transaction_version}"
            downgrade = ("downgrade", "--feature", feature)
            KafkaTools(fetch_kafka_libs()).run(
                "org.apache.kafka.tools.FeatureCommand",
                "--bootstrap-server",
                f"localhost:{self.port}",
                *downgrade,
            ).check()
        return self

    def restart(self) -> None:
        """A clean stop (SIGTERM) and a start on the same storage (formatted already)."""
        stop_process(self.proc)
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*_KAFKA_SERVER, "-cp", f"{fetch_kafka_libs()}/*", "kafka.Kafka", str(self.props)],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self._wait_serving()

    def _wait_serving(self) -> None:
        assert self.proc is not None
        admin = admin_mod.AdminClient({"bootstrap.servers": f"localhost:{self.port}"})
        deadline = time.monotonic() + 120
        while True:
            try:
                admin.list_topics(timeout=2)
                return
            except ck.KafkaException:
                assert self.proc.poll() is None, self.log.read_text()[-3000:]
                assert time.monotonic() < deadline, "Kafka did not start"

    def stop(self) -> None:
        stop_process(self.proc)


@pytest.fixture(scope="session")
def txn_kafka_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, _KafkaNode]]:
    """Apache Kafka nodes for the session, by target name, each started when a test first
    runs against it."""
    nodes: dict[str, _KafkaNode] = {}
    try:
        yield nodes
    finally:
        for node in nodes.values():
            node.stop()


@pytest.fixture(scope="module", params=_targets())
def txn_target(request: pytest.FixtureRequest) -> TxnTarget:
    """The broker the module's tests run against (see the module docstring):
    ``kafka-tv1`` is Kafka with the feature ``transaction.version`` downgraded to 1, the
    classic protocol kafkacore's clients speak (librdkafka always does)."""
    if request.param != "kafkacore":
        nodes: dict[str, _KafkaNode] = request.getfixturevalue("txn_kafka_nodes")
        if request.param not in nodes:
            home = request.getfixturevalue("tmp_path_factory").mktemp(request.param)
            version = 1 if request.param == "kafka-tv1" else None
            nodes[request.param] = _KafkaNode(home, version).start()
        node = nodes[request.param]
        return TxnTarget(
            request.param,
            f"localhost:{node.port}",
            lambda: node.log.read_text(errors="replace"),
            node.restart,
        )
    factory: BrokerFactory = request.getfixturevalue("broker_factory")
    broker = factory(*BROKER_SETTINGS, name="txn")
    return TxnTarget("kafkacore", broker.bootstrap, broker.log_text, broker.restart)


# --------------------------------------------------------------------------- helpers


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> str:
    """Creates ``name`` and waits until every partition has a leader."""
    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([admin_mod.NewTopic(name, partitions, 1)])[name].result(30)
    deadline = time.monotonic() + 30
    while True:
        meta = admin.list_topics(name, timeout=10).topics.get(name)
        if (
            meta is not None
            and meta.error is None
            and len(meta.partitions) == partitions
            and all(p.leader >= 0 for p in meta.partitions.values())
        ):
            return name
        assert time.monotonic() < deadline, f"{name}: no leaders"
        time.sleep(0.1)


@dataclass(frozen=True)
class Record:
    partition: int
    offset: int
    value: bytes


def consumer(bootstrap: str, isolation: str, **conf: object) -> ck.Consumer:
    """A consumer with ``isolation.level`` set explicitly (librdkafka's default is
    read_committed, Java's read_uncommitted) and no auto commit."""
    return ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": conf.pop("group.id", "txn-reader"),
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            **conf,
        }
    )


def end_offsets(c: ck.Consumer, topic: str, partitions: Sequence[int]) -> list[int]:
    """ListOffsets LATEST under the consumer's isolation level: the high watermark
    (read_uncommitted) or the last stable offset (read_committed)."""
    return [
        c.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=10, cached=False)[1]
        for p in partitions
    ]


def settle(bootstrap: str, topic: str, partitions: Sequence[int]) -> None:
    """Waits until no transaction is open on ``partitions`` (LSO = HW). A client's commit
    or abort returns once the coordinator has decided (PrepareCommit/PrepareAbort); the
    markers are written after it, so a read right after a commit may still see the
    transaction open, on Kafka as on any broker that does the same."""
    committed = consumer(bootstrap, "read_committed")
    uncommitted = consumer(bootstrap, "read_uncommitted")
    deadline = time.monotonic() + 20
    try:
        while True:
            lso = end_offsets(committed, topic, partitions)
            hw = end_offsets(uncommitted, topic, partitions)
            if lso == hw:
                return
            assert time.monotonic() < deadline, (
                f"{topic}: a transaction stays open: LSO {lso}, HW {hw}"
            )
            time.sleep(0.1)
    finally:
        committed.close()
        uncommitted.close()


def read_to_end(
    bootstrap: str,
    topic: str,
    partitions: Sequence[int],
    isolation: str,
    *,
    settled: bool = True,
    timeout_s: float = 20,
) -> tuple[list[Record], list[int]]:
    """Everything ``isolation`` lets a consumer read of ``partitions`` from offset 0 up to
    their end offsets under that isolation level (asked first, after :func:`settle` unless
    ``settled`` is false: a transaction is knowingly left open); returns the records and
    the end offsets. Consumption ends when the consumer's positions reach those offsets,
    control batches included (librdkafka moves past them)."""
    if settled:
        settle(bootstrap, topic, partitions)
    c = consumer(bootstrap, isolation)
    try:
        ends = end_offsets(c, topic, partitions)
        c.assign([ck.TopicPartition(topic, p, 0) for p in partitions])
        out: list[Record] = []
        deadline = time.monotonic() + timeout_s
        while True:
            positions = [
                tp.offset for tp in c.position([ck.TopicPartition(topic, p) for p in partitions])
            ]
            if all(pos >= end for pos, end in zip(positions, ends, strict=True)):
                return out, ends
            assert time.monotonic() < deadline, (
                f"{isolation} consumer of {topic} stuck at {positions}, ends {ends}; read {out}"
            )
            msg = c.poll(0.2)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            out.append(Record(msg.partition(), msg.offset(), msg.value()))
    finally:
        c.close()


def wait_for(what: str, probe: Callable[[], object], timeout_s: float = 20) -> object:
    """Polls ``probe`` until it returns something true; fails with the last value."""
    deadline = time.monotonic() + timeout_s
    while True:
        last = probe()
        if last:
            return last
        assert time.monotonic() < deadline, f"{what}: gave up, last {last!r}"
        time.sleep(0.1)


# --------------------------------------------------------------------------- Java


@pytest.fixture(scope="session")
def java(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The class path of ``tests/txn/java/*.java`` compiled against Kafka's jars (fetched
    if needed), those jars included."""
    libs = fetch_kafka_libs()
    classes = tmp_path_factory.mktemp("txn-classes")
    compile_java(libs, classes, sorted(JAVA_SOURCES.glob("*.java")))
    return f"{classes}{os.pathsep}{libs}/*"


@pytest.fixture(scope="session")
def kafka_tools() -> KafkaTools:
    """Kafka's jars, for its command-line tools' main classes."""
    return KafkaTools(fetch_kafka_libs())
