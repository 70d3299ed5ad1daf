"""``kafka.isolation.level=read_committed`` in the ``kafkacore`` source: a Spark batch read
sees exactly the records of committed transactions (and the non-transactional ones) below
the last stable offset - never an aborted record, a record of a transaction still open,
or a marker - through a broker (a confluent-kafka transactional producer writes) and
from a log directory (``kafkacore.path``; a log written with ``Log.append_as_leader`` and
``Log.append_txn_marker``, spread over several segments); ``read_uncommitted`` sees every
data record. The log directory's own LSO and aborted-transaction walk are checked
against the live ``Log``'s."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest

from kafkacore import record
from kafkacore.client import Client
from kafkacore.config import LogConfig
from kafkacore.log import Log, MockScheduler, MockTime
from kafkacore.log.files import TopicPartition
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.log.reader import AbortedFilter, LogDirectory
from kafkacore.native import backend
from kafkacore.spark.options import parse_read_options
from support.brokers import Broker

pytestmark = pytest.mark.timeout(300)


P1, P2, P3 = 1000, 2000, 3000
TOPIC = "rc"
BROKER_TOPIC = "rc-broker"


def _batch(values: list[str], pid: int = -1, seq: int = -1, *, txn: bool = False) -> bytes:
    return backend.build_batch(
        [(i, 1_000 + i, None, v.encode(), []) for i, v in enumerate(values)],
        producer_id=pid,
        producer_epoch=0 if pid >= 0 else -1,
        base_sequence=seq,
        transactional=txn,
    )


def write_log(directory: Path) -> tuple[list[str], list[str]]:
    """The partition's log: interleaved committed and aborted transactions, plain
    records, a transaction left open and records after it; small segments, so that a
    transaction and its marker sit in different segments. ``(what read_committed sees,
    every data record)``, in offset order."""
    clock = MockTime(10_000)
    log = Log(
        directory,
        LogConfig({"internal.segment.bytes": 400}),
        time=clock,
        scheduler=MockScheduler(clock),
        producer_state=ProducerStateManager(directory),
    )
    seq = {P1: 0, P2: 0, P3: 0}

    def txn(pid: int, *values: str) -> None:
        log.append_as_leader(_batch(list(values), pid, seq[pid], txn=True), 0)
        seq[pid] += len(values)

    def end(pid: int, commit: bool) -> None:
        log.append_txn_marker(pid, 0, 0, commit, 0)

    with log:
        log.append_as_leader(_batch(["plain-0"]), 0)
        txn(P1, "c1-a", "c1-b")
        txn(P2, "a1-a")
        txn(P1, "c1-c")
        txn(P2, "a1-b", "a1-c")
        end(P2, commit=False)
        log.append_as_leader(_batch(["plain-1"]), 0)
        end(P1, commit=True)
        txn(P2, "c2")
        end(P2, commit=True)
        txn(P3, "open-1")  # never decided: the LSO stays here
        log.append_as_leader(_batch(["plain-2"]), 0)
        txn(P1, "a3")
        end(P1, commit=False)
        txn(P2, "c4")
        end(P2, commit=True)
        assert len(log.segments) > 3
    committed = ["plain-0", "c1-a", "c1-b", "c1-c", "plain-1", "c2"]
    everything = ["plain-0", "c1-a", "c1-b", "a1-a", "c1-c", "a1-b", "a1-c", "plain-1"]
    everything += ["c2", "open-1", "plain-2", "a3", "c4"]
    return committed, everything


def _values(df: Any) -> list[str]:
    return [
        r["v"]
        for r in df.selectExpr("CAST(value AS STRING) AS v", "offset").orderBy("offset").collect()
    ]


def _read(spark: Any, isolation: str | None, topic: str = TOPIC, **connection: str) -> Any:
    reader = spark.read.format("kafkacore").option("subscribe", topic)
    for key, value in connection.items():
        reader = reader.option(key, value)
    if isolation is not None:
        reader = reader.option("kafka.isolation.level", isolation)
    return reader.load()


# -- without Spark: the log directory's answers against the live log's ----------------------------


def test_log_directory_lso_and_aborted_walk_match_the_log(tmp_path: Path) -> None:
    directory = tmp_path / f"{TOPIC}-0"
    write_log(directory)
    tp = TopicPartition(TOPIC, 0)
    logdir = LogDirectory(str(tmp_path))
    clock = MockTime(10_000)
    with Log(
        directory,
        LogConfig({"internal.segment.bytes": 400}),
        time=clock,
        scheduler=MockScheduler(clock),
        producer_state=ProducerStateManager(directory),
    ) as log:
        lso = log.last_stable_offset()
        end = log.log_end_offset
        ranges = [(s, u) for s in range(0, end, 3) for u in range(s + 1, end + 1, 4)]
        expected = {r: log.collect_aborted_transactions(*r) for r in ranges}
    assert 0 < lso < end
    assert logdir.last_stable_offset(tp) == lso
    for r, aborted in expected.items():
        assert logdir.aborted_transactions(tp, *r) == aborted, r
    # without any producer snapshot the batches are scanned from the first segment
    for name in os.listdir(directory):
        if name.endswith(".snapshot"):
            os.remove(directory / name)
    assert logdir.last_stable_offset(tp) == lso


def test_aborted_filter_is_kafkas_consumer_rule() -> None:
    """An aborted transaction's batches go; a later transaction of the same producer,
    after its ABORT marker, stays; markers never reach the decoder."""
    aborted = record.build_batch(
        [(0, 0, None, b"x", [])],
        producer_id=P1,
        producer_epoch=0,
        base_sequence=0,
        transactional=True,
    )
    abort_marker = record.build_control_batch(
        record.ControlType.ABORT, producer_id=P1, producer_epoch=0, timestamp=0, offset=1
    )
    later = record.build_batch(
        [(2, 0, None, b"y", [])],
        producer_id=P1,
        producer_epoch=0,
        base_sequence=1,
        transactional=True,
    )
    assert [record.batch_header(b).base_offset for b in (aborted, abort_marker, later)] == [0, 1, 2]
    data = aborted + abort_marker + later + later[:20]  # a partial batch ends it
    assert AbortedFilter([(P1, 0)]).filter(data) == (later, 3)
    assert AbortedFilter([]).filter(data) == (aborted + later, 3)
    assert AbortedFilter([(P1, 0)]).filter(b"") == (b"", None)


def test_isolation_level_option() -> None:
    base = {"kafkacore.path": "/nowhere", "subscribe": TOPIC}
    assert parse_read_options(base, streaming=False).read_committed is False
    for text in ("read_committed", "READ_COMMITTED", " Read_Committed "):
        options = {**base, "kafka.isolation.level": text}
        assert parse_read_options(options, streaming=False).read_committed is True
    with pytest.raises(ValueError, match="Invalid value snapshot for configuration isolation"):
        parse_read_options({**base, "kafka.isolation.level": "snapshot"}, streaming=False)


# -- Spark -----------------------------------------------------------------------------------------


def test_path_mode_reads_exactly_the_committed_records(spark: Any, tmp_path: Path) -> None:
    committed, everything = write_log(tmp_path / f"{TOPIC}-0")
    path = {"kafkacore.path": str(tmp_path)}
    assert _values(_read(spark, "read_committed", **path)) == committed
    assert _values(_read(spark, "read_uncommitted", **path)) == everything
    assert _values(_read(spark, None, **path)) == everything
    # explicit offsets: a range ending at "latest" stops at the LSO, below it the aborted
    # records are skipped inside the range
    ranged = _read(spark, "read_committed", **path, startingOffsets=f'{{"{TOPIC}":{{"0":2}}}}')
    assert _values(ranged) == committed[2:]


def test_broker_reads_exactly_the_committed_records(spark: Any, broker: Broker) -> None:
    with Client(broker.bootstrap) as client:
        client.create_topic(BROKER_TOPIC, 1, configs={"retention.ms": "-1"}, exist_ok=True)
    config = {"bootstrap.servers": broker.bootstrap, "linger.ms": 0}
    producer = ck.Producer({**config, "transactional.id": "spark-rc"})
    producer.init_transactions(30)
    plain = ck.Producer(config)
    try:
        producer.begin_transaction()
        for v in ("c1-a", "c1-b"):
            producer.produce(BROKER_TOPIC, v.encode(), partition=0)
        producer.commit_transaction(30)
        producer.begin_transaction()
        producer.produce(BROKER_TOPIC, b"a1", partition=0)
        producer.flush(30)  # written: abort_transaction purges what is not sent yet
        producer.abort_transaction(30)
        plain.produce(BROKER_TOPIC, b"plain-1", partition=0)
        plain.flush(30)
        producer.begin_transaction()
        producer.produce(BROKER_TOPIC, b"c2", partition=0)
        producer.commit_transaction(30)
        producer.begin_transaction()
        producer.produce(BROKER_TOPIC, b"open-1", partition=0)
        producer.flush(30)  # written, not decided
        plain.produce(BROKER_TOPIC, b"plain-2", partition=0)
        plain.flush(30)

        committed = ["c1-a", "c1-b", "plain-1", "c2"]
        everything = ["c1-a", "c1-b", "a1", "plain-1", "c2", "open-1", "plain-2"]
        connection = {"kafka.bootstrap.servers": broker.bootstrap}
        assert _values(_read(spark, "read_committed", BROKER_TOPIC, **connection)) == committed
        assert _values(_read(spark, "read_uncommitted", BROKER_TOPIC, **connection)) == everything
    finally:
        producer.abort_transaction(30)
    connection = {"kafka.bootstrap.servers": broker.bootstrap}
    after = _read(spark, "read_committed", BROKER_TOPIC, **connection)
    assert _values(after) == [*committed, "plain-2"]


def test_path_mode_of_a_stopped_broker(spark: Any, tmp_path: Path) -> None:
    """A copy of a log directory whose replication checkpoint stops before the end: the
    high watermark bounds the LSO too."""
    directory = tmp_path / "data" / f"{TOPIC}-0"
    committed, _ = write_log(directory)
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "data", copy)
    # the high watermark at 3: P1's transaction (offsets 1-2) is open there
    (copy / "replication-offset-checkpoint").write_text(f"0\n1\n{TOPIC} 0 3\n")
    path = {"kafkacore.path": str(copy)}
    assert committed[:1] == ["plain-0"]
    assert _values(_read(spark, "read_committed", **path)) == ["plain-0"]
    assert _values(_read(spark, "read_uncommitted", **path)) == ["plain-0", "c1-a", "c1-b"]


def test_stream_latest_offset_is_the_lso(tmp_path: Path) -> None:
    """A streaming query's micro-batches end at the last stable offset under
    read_committed (Spark's ``latestOffset`` through ``ListOffsets`` with the isolation
    level), at the log end otherwise."""
    from kafkacore.spark.reader import KafkaCoreStreamReader

    write_log(tmp_path / f"{TOPIC}-0")
    lso = LogDirectory(str(tmp_path)).last_stable_offset(TopicPartition(TOPIC, 0))
    ends = {}
    for level in ("read_committed", "read_uncommitted"):
        options = {
            "kafkacore.path": str(tmp_path),
            "subscribe": TOPIC,
            "startingOffsets": "earliest",
            "kafka.isolation.level": level,
        }
        reader = KafkaCoreStreamReader(parse_read_options(options, streaming=True))
        ends[level] = reader.latestOffset(reader.initialOffset(), None)[TOPIC]["0"]
    # open-1 (P3's open transaction) is at offset 12; the log ends at 18
    assert (lso, ends) == (12, {"read_committed": 12, "read_uncommitted": 18})
