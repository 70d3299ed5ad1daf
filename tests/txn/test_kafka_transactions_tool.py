"""Kafka's ``kafka-transactions`` tool (``org.apache.kafka.tools.TransactionsCommand`` of
4.3.1, what ``kafka-transactions.sh`` runs) against the broker of ``txn_target``: ``list``
(ListTransactions), ``describe`` (DescribeTransactions), ``describe-producers``
(DescribeProducers) and ``abort`` (DescribeProducers, then WriteTxnMarkers straight to the
partition leader) on a hanging transaction: one a transactional producer left open when it
was killed (SIGKILL, its 60 s transaction timeout far away).

The tool prints tab-separated tables; the assertions are on their columns (the header
names and what each row holds), as Kafka's broker fills them for the same steps."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import confluent_kafka as ck
import pytest

from compat.conftest import KafkaTools
from txn.conftest import TxnTarget, create_topic, read_to_end

pytestmark = [pytest.mark.interop, pytest.mark.timeout(180)]

TOOL = "org.apache.kafka.tools.TransactionsCommand"

# A transactional producer that writes 3 records in a transaction, says so, and waits to
# be killed: the transaction stays open on the partition and Ongoing at the coordinator.
HANGING_PRODUCER = textwrap.dedent(
    """
    import sys, time
    from confluent_kafka import Producer
    bootstrap, topic, txn_id = sys.argv[1:4]
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, b"hanging-%d" % i, partition=0)
    p.flush(30)
    print("ready", flush=True)
    time.sleep(300)
    """
)


def table(stdout: str) -> list[dict[str, str]]:
    """The tool's table: one dict per row, keyed by the header's column names."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    header = [c.strip() for c in lines[0].rstrip("\t").split("\t")]
    rows = []
    for line in lines[1:]:
        cells = [c.strip() for c in line.rstrip("\t").split("\t")]
        cells += [""] * (len(header) - len(cells))
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def header(stdout: str) -> list[str]:
    return [c.strip() for c in stdout.splitlines()[0].rstrip("\t").split("\t")]


@dataclass(frozen=True)
class Scene:
    topic: str
    hanging_id: str
    committed_id: str
    opened_ms: int  # just before the hanging transaction began


@pytest.fixture(scope="module")
def scene(txn_target: TxnTarget) -> Iterator[Scene]:
    """Offset 0: a plain record; 1..3: the hanging transaction's records."""
    tag = uuid.uuid4().hex[:8]
    topic = create_topic(txn_target.bootstrap, f"tool-{tag}")
    plain = ck.Producer({"bootstrap.servers": txn_target.bootstrap})
    plain.produce(topic, b"plain", partition=0)
    assert plain.flush(30) == 0
    committed_id = f"tool-committed-{tag}"
    done = ck.Producer(
        {"bootstrap.servers": txn_target.bootstrap, "transactional.id": committed_id}
    )
    done.init_transactions(30)
    done.begin_transaction()
    done.produce(create_topic(txn_target.bootstrap, f"tool-other-{tag}"), b"x", partition=0)
    done.commit_transaction(30)

    hanging_id = f"tool-hanging-{tag}"
    opened_ms = int(time.time() * 1000)
    proc = subprocess.Popen(
        [sys.executable, "-c", HANGING_PRODUCER, txn_target.bootstrap, topic, hanging_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", txn_target.log_tail()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    yield Scene(topic, hanging_id, committed_id, opened_ms)


def tool(target: TxnTarget, *args: str) -> tuple[str, ...]:
    return (TOOL, "--bootstrap-server", target.bootstrap, *args)


def test_list_describe_and_abort_a_hanging_transaction(
    kafka_tools: KafkaTools, txn_target: TxnTarget, scene: Scene
) -> None:
    partition = ("--topic", scene.topic, "--partition", "0")
    listed, hanging, committed, missing, producers = kafka_tools.run_all(
        [
            tool(txn_target, "list"),
            tool(txn_target, "describe", "--transactional-id", scene.hanging_id),
            tool(txn_target, "describe", "--transactional-id", scene.committed_id),
            tool(txn_target, "describe", "--transactional-id", "tool-no-such-id"),
            tool(txn_target, "describe-producers", *partition),
        ]
    )
    now = int(time.time() * 1000)

    # list: ListTransactions, every state but Dead
    assert header(listed.check().stdout) == [
        "TransactionalId",
        "Coordinator",
        "ProducerId",
        "TransactionState",
    ]
    rows = {row["TransactionalId"]: row for row in table(listed.stdout)}
    assert rows[scene.hanging_id]["TransactionState"] == "Ongoing"
    assert rows[scene.committed_id]["TransactionState"] == "CompleteCommit"
    assert rows[scene.hanging_id]["Coordinator"] == "1"  # the broker's node id
    assert rows[scene.hanging_id]["ProducerId"] != rows[scene.committed_id]["ProducerId"]

    # describe: DescribeTransactions
    describe_columns = [
        "CoordinatorId",
        "TransactionalId",
        "ProducerId",
        "ProducerEpoch",
        "TransactionState",
        "TransactionTimeoutMs",
        "CurrentTransactionStartTimeMs",
        "TransactionDurationMs",
        "TopicPartitions",
    ]
    assert header(hanging.check().stdout) == describe_columns
    (open_txn,) = table(hanging.stdout)
    assert open_txn["CoordinatorId"] == "1"
    assert open_txn["TransactionalId"] == scene.hanging_id
    assert open_txn["ProducerId"] == rows[scene.hanging_id]["ProducerId"]
    assert open_txn["ProducerEpoch"] == "0"
    assert open_txn["TransactionState"] == "Ongoing"
    assert open_txn["TransactionTimeoutMs"] == "60000"  # librdkafka's default
    assert scene.opened_ms <= int(open_txn["CurrentTransactionStartTimeMs"]) <= now
    assert 0 <= int(open_txn["TransactionDurationMs"]) <= now - scene.opened_ms + 1000
    assert open_txn["TopicPartitions"] == f"{scene.topic}-0"
    assert header(committed.check().stdout) == describe_columns
    (done,) = table(committed.stdout)
    assert done["TransactionState"] == "CompleteCommit"
    assert done["TopicPartitions"] == ""  # Complete* keeps no partitions
    # TRANSACTIONAL_ID_NOT_FOUND
    assert missing.returncode == 1
    assert "the ID could not be found" in missing.stderr, missing.stderr[-2000:]

    # describe-producers: DescribeProducers; the open transaction starts at offset 1
    assert header(producers.check().stdout) == [
        "ProducerId",
        "ProducerEpoch",
        "LatestCoordinatorEpoch",
        "LastSequence",
        "LastTimestamp",
        "CurrentTransactionStartOffset",
    ]
    by_pid = {row["ProducerId"]: row for row in table(producers.stdout)}
    hanger = by_pid[open_txn["ProducerId"]]
    assert hanger["ProducerEpoch"] == "0"
    assert hanger["LastSequence"] == "2"
    assert hanger["CurrentTransactionStartOffset"] == "1"
    assert scene.opened_ms <= int(hanger["LastTimestamp"]) <= now
    assert list(by_pid) == [open_txn["ProducerId"]]  # the plain producer has no id

    # the open transaction holds read_committed back at offset 1
    _, ends = read_to_end(txn_target.bootstrap, scene.topic, [0], "read_committed", settled=False)
    assert ends == [1]

    # abort: an ABORT marker written by the partition leader (WriteTxnMarkers)
    kafka_tools.run(*tool(txn_target, "abort", *partition, "--start-offset", "1")).check()
    # the marker takes offset 4; read_committed gets past the aborted records
    records, ends = read_to_end(txn_target.bootstrap, scene.topic, [0], "read_committed")
    assert [(r.offset, r.value) for r in records] == [(0, b"plain")], txn_target.log_tail()
    assert ends == [5]
