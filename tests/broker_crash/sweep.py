"""The broker crash sweep: points of "start a kafkacore broker on the data the previous
point left, check it, load it, SIGKILL it", seeded and resumable.

Run: ``PYTHONPATH=python:tests python -m broker_crash.sweep --points 1000 --state DIR``
(``make crash-sweep``). ``DIR/state.json`` records the finished points and the model of
what the broker must hold; a second run with the same ``DIR`` continues where the first
stopped (``--points`` is the total; Ctrl-C or SIGTERM ends a run after the point under
way). ``DIR/data`` is the broker's log directory,
``DIR/data-broker.log`` its output over all points. After the last point the broker is
started once more and verified (step 2), so the last kill is checked too.

A point (its draws from ``random.Random(f"{seed}/{point}")``, so a rerun repeats it):

1. **start** the broker (``python -m broker_crash.launch``, which is ``kafkacore.cli``
   with an optional injected kill point) on ``DIR/data``: it recovers from the last kill.
   One point in ten is a *start-up kill* instead: SIGKILL 0-0.9 s after the spawn, inside
   loading and recovery; the next point checks what that left.
2. **verify** through real clients (confluent-kafka), against the model:

   * every record whose produce was acknowledged (acks=1 or acks=all; on one node SIGKILL
     keeps the page cache, so both must survive) is there, at the offset it was
     acknowledged at, except where the topic's policy may remove it: below the log start
     offset of the retention topic, superseded by a later record of its key in the
     compacted topic, or in a deleted topic; the log start offset never moves back;
   * nothing else is there: every record read is one the sweep sent (acknowledged at that
     offset, or sent without an answer before the kill), at most once (acks=1 without
     retries, acks=all idempotent): no phantom, duplicated or resurrected record;
   * the consumer group's committed offsets are the last acknowledged commit or a later
     one that was in flight; a deleted topic stays deleted, a created one exists. The
     killed point's committing consumer outlives the kill (its close waits for the dead
     coordinator) and re-sends its unanswered OffsetCommit once the broker is back, as
     librdkafka does against Kafka: verification waits until every such consumer has
     closed (:data:`COMMIT_CLOSE_WAIT_S`), so such a commit lands before it is checked,
     or never.

   What was in flight and is there becomes part of the model (it must stay).
3. **clean check** (two points in ten, and every point with an injected kill): SIGTERM
   (exit 0), a copy of the log directory opened by a :class:`~kafkacore.log.LogManager`
   and checked by :mod:`support.log_checks` (CRCs, offsets, offset and time indexes,
   ``translate_offset``, log end offset, epoch cache, checkpoints parse; no ``.swap`` or
   ``.cleaned`` file), the copy queued for Kafka's ``DumpLogSegments``; then started again.
4. **load and kill**: one to four of the workloads run side by side from client threads:
   ``acks1`` (produce, acks=1, no retries, 3 partitions), ``acksall`` (idempotent, acks=all),
   ``compact`` (a ``cleanup.policy=compact`` topic of 2 KiB segments, 8 keys, the cleaner
   every 200 ms at ``min.cleanable.dirty.ratio`` 0.01), ``retention`` (2 KiB segments,
   ``retention.bytes`` 8 KiB, retention checked every 300 ms), ``commit`` (a group
   committing offsets, one at a time), ``churn`` (a topic deleted and re-created, produced to
   between). The broker is SIGKILLed after a random 0.05-1.2 s, or (two points in ten) by
   itself at the N-th call of an injected function (:data:`INJECTION_TARGETS`; a broker
   still alive 4 s later is killed from outside).

Kafka's ``DumpLogSegments`` (``--deep-iteration``, the jars of ``support.kafka_jars``) runs
over the queued copies in one JVM per :data:`DUMP_EVERY` copies and at the end: exit 0,
every batch ``isvalid: true``, no invalid bytes, no index or time-index mismatch, and no
non-consecutive offsets except in compacted topics (where compaction leaves gaps).

A failure stops the sweep with the seed, the point and what was wrong (the state file
keeps the point, the data directory is left as it was). Not covered: a cluster (one
broker only), transactions (``tests/txn_chaos``), the pure backend.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkacore.config import BrokerConfig
from kafkacore.log import LogManager
from kafkacore.native import load_backend
from support.brokers import Broker
from support.kafka_jars import JVM_FLAGS, kafka_libs, require
from support.log_checks import check_checkpoints, check_log_structure

__all__ = ["INJECTION_TARGETS", "SweepFailure", "Sweeper", "main"]

#: Broker settings: small segments and indexes, the background tasks every few hundred ms.
BROKER_OVERRIDES = (
    "offsets.topic.num.partitions=2",
    "offsets.topic.segment.bytes=1048576",  # the floor of segment.bytes (Kafka 4)
    "group.initial.rebalance.delay.ms=0",
    "log.cleaner.backoff.ms=200",
    "log.cleaner.min.cleanable.ratio=0.01",
    "log.retention.check.interval.ms=300",
    "log.segment.delete.delay.ms=500",
    "log.flush.offset.checkpoint.interval.ms=700",
    "log.flush.start.offset.checkpoint.interval.ms=900",
    "log.index.interval.bytes=256",
    "log.initial.task.delay.ms=200",
    "auto.create.topics.enable=false",  # a producer's metadata request must not re-create churn
)
TOPICS: dict[str, tuple[int, dict[str, str]]] = {
    "acks1": (3, {"internal.segment.bytes": "16384"}),
    "acksall": (2, {"internal.segment.bytes": "16384"}),
    "compacted": (
        1,
        {
            "cleanup.policy": "compact",
            "internal.segment.bytes": "2048",
            "min.cleanable.dirty.ratio": "0.01",
        },
    ),
    "retained": (
        1,
        {"internal.segment.bytes": "2048", "retention.bytes": "8192", "retention.ms": "60000"},
    ),
}
CHURN = "churn"
CHURN_CONFIG = {"internal.segment.bytes": "4096"}
GROUP = "sweep-group"
COMPACT_KEYS = 8
WORKLOADS = ("acks1", "acksall", "compact", "retention", "commit", "churn")
#: Functions the broker may kill itself in, at their N-th call (``broker_crash.launch``).
INJECTION_TARGETS: tuple[tuple[str, int], ...] = (
    ("kafkacore.log.log:Log.append_as_leader", 200),
    ("kafkacore.log.log:Log.roll", 12),
    ("kafkacore.log.log:Log.flush", 20),
    ("kafkacore.log.log:Log.replace_segments", 2),
    ("kafkacore.log.log:Log._remove_and_delete_segments", 4),
    ("kafkacore.log.log:Log.delete", 2),
    ("kafkacore.log.manager:LogManager.cleanup_logs", 8),
    ("kafkacore.log.manager:LogManager.delete_log", 2),
    ("kafkacore.log.manager:LogManager.checkpoint_recovery_offsets", 4),
    ("kafkacore.log.manager:LogManager.checkpoint_log_start_offsets", 4),
    ("kafkacore.metadata.embedded:EmbeddedMetadataStore._save", 3),
    ("os:replace", 60),
    ("os:rename", 20),
    ("os:fsync", 60),
    ("os:ftruncate", 20),
)
STARTUP_KILL_RATE = 0.10
INJECTED_RATE = 0.20
CLEAN_CHECK_RATE = 0.20
DUMP_EVERY = 25
TIMED_KILL_S = (0.05, 1.2)
INJECTED_WAIT_S = 4.0
DUMP_CLASS = "org.apache.kafka.tools.DumpLogSegments"
_JVM_NOISE = re.compile(r"^(SLF4J[(:]|OpenJDK 64-Bit Server VM warning|\[[^\]]*\] (WARN|INFO) )")


class SweepFailure(AssertionError):
    """A check failed: what, and where to reproduce it."""


# -- the model --------------------------------------------------------------------------------


def value_for(workload: str, point: int, seq: int, key: str) -> str:
    """A record's value: unique over the sweep, naming its key (the compacted topic's)."""
    return f"{workload}|{point}|{seq}|{key}|" + "x" * (seq * 37 % 180)


def key_of(value: str) -> str:
    return value.split("|")[3]


@dataclass
class PartitionModel:
    """What the sweep knows of one partition: records at known offsets (acknowledged, or
    seen after a restart: both must stay), records sent without an answer (may be there,
    once, anywhere past the known ones)."""

    acked: dict[int, str] = field(default_factory=dict)
    maybe: set[str] = field(default_factory=set)
    log_start: int = 0


@dataclass
class Model:
    partitions: dict[str, PartitionModel] = field(default_factory=dict)
    churn: str = "absent"  # exists / absent / deleting / creating
    commits_acked: dict[int, int] = field(default_factory=dict)  # acks1 partition -> offset
    commits_sent: dict[int, list[int]] = field(default_factory=dict)  # unanswered commits
    next_commit: int = 1
    churn_generation: int = 0  # one more at each creation: late answers of older ones ignored
    # Records sent to a deleted generation of the churn topic without an answer, in this
    # point: its producer still holds them and sends them to the topic of that name once it
    # exists again (the client retries by name, with Kafka as well), so a later generation
    # may hold them. Emptied at each point: the previous point's producer is gone.
    churn_carried: list[str] = field(default_factory=list)
    stale: bool = False  # the sweep itself died inside a point: re-baseline at the next one

    def part(self, topic: str, partition: int) -> PartitionModel:
        return self.partitions.setdefault(f"{topic}-{partition}", PartitionModel())

    def churn_deleted(self) -> None:
        """The churn topic's deletion is acknowledged (or found done)."""
        self.churn = "absent"
        old = self.partitions.pop(f"{CHURN}-0", None)
        if old is not None:
            self.churn_carried = sorted(set(self.churn_carried) | old.maybe)

    def churn_created(self) -> None:
        """The churn topic's creation is acknowledged (or found done): a new generation,
        which may receive what was carried from the old ones."""
        self.churn = "exists"
        self.partitions[f"{CHURN}-0"] = PartitionModel(maybe=set(self.churn_carried))

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for p in out["partitions"].values():
            p["maybe"] = sorted(p["maybe"])
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Model:
        model = cls(
            churn=data["churn"],
            commits_acked={int(k): v for k, v in data["commits_acked"].items()},
            commits_sent={int(k): v for k, v in data["commits_sent"].items()},
            next_commit=data["next_commit"],
            churn_generation=data["churn_generation"],
            churn_carried=data.get("churn_carried", []),
            stale=data["stale"],
        )
        for name, p in data["partitions"].items():
            model.partitions[name] = PartitionModel(
                {int(k): v for k, v in p["acked"].items()}, set(p["maybe"]), p["log_start"]
            )
        return model


def topic_partitions(model: Model) -> list[tuple[str, int]]:
    out = [(t, p) for t, (n, _) in TOPICS.items() for p in range(n)]
    if model.churn != "absent":
        out.append((CHURN, 0))
    return out


# -- the workloads ----------------------------------------------------------------------------


class Recorder:
    """Delivery reports of one producer into the model (the producer's own thread polls)."""

    def __init__(self, model: Model, lock: threading.Lock) -> None:
        self.model = model
        self.lock = lock
        self.acked = 0

    def current(self, topic: str, value: str) -> bool:
        """False for a record of the churn topic's earlier life (its answer came late)."""
        if topic != CHURN:
            return True
        model = self.model
        return model.churn != "absent" and value.startswith(f"churn{model.churn_generation}|")

    def sent(self, topic: str, partition: int, value: str) -> None:
        with self.lock:
            if self.current(topic, value):
                self.model.part(topic, partition).maybe.add(value)

    def report(self, err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            return  # not acknowledged: stays "maybe"
        value = msg.value().decode()
        with self.lock:
            if not self.current(msg.topic(), value):
                return
            part = self.model.part(msg.topic(), msg.partition())
            part.maybe.discard(value)
            part.acked[msg.offset()] = value
            self.acked += 1


def producer_config(bootstrap: str, acks: str) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "linger.ms": 2,
        "message.timeout.ms": 20000,
        "socket.connection.setup.timeout.ms": 2000,
        "reconnect.backoff.max.ms": 200,
    }
    if acks == "all":
        config |= {"acks": "all", "enable.idempotence": True}
    else:  # no retries: a record is written at most once
        config |= {"acks": "1", "enable.idempotence": False, "retries": 0}
    return config


def produce_loop(
    stop: threading.Event,
    bootstrap: str,
    recorder: Recorder,
    rng: random.Random,
    point: int,
    workload: str,
    topic: str | Callable[[], tuple[str, str] | None],
) -> None:
    """Produce batches of 1-12 records to ``topic`` (or to what it returns: the churn
    topic and its generation's label, or nothing to write to now) until ``stop``."""
    acks = "1" if workload in ("acks1", "retention") else "all"
    producer = Producer(producer_config(bootstrap, acks))
    partitions = TOPICS[topic][0] if isinstance(topic, str) else 1
    seq = 0
    try:
        while not stop.is_set():
            target = topic() if callable(topic) else (topic, workload)
            if target is None:
                stop.wait(0.02)
                continue
            name, label = target
            for _ in range(rng.randint(1, 12)):
                partition = rng.randrange(partitions)
                key = f"k{rng.randrange(COMPACT_KEYS)}"
                value = value_for(label, point, seq, key)
                seq += 1
                recorder.sent(name, partition, value)
                try:
                    producer.produce(
                        name,
                        key=key,
                        value=value,
                        partition=partition,
                        on_delivery=recorder.report,
                    )
                except BufferError:
                    break
            producer.poll(0)
            stop.wait(rng.uniform(0.005, 0.04))
        producer.poll(0.05)  # answers that arrived before the kill
    finally:
        producer.purge()
        producer.poll(0)


def commit_loop(
    stop: threading.Event,
    bootstrap: str,
    model: Model,
    lock: threading.Lock,
    rng: random.Random,
    closing: list[threading.Thread],
) -> None:
    """Commit increasing offsets of ``acks1``'s partitions for :data:`GROUP`, one at a time
    (asynchronous commits, so that a dead broker blocks nothing); an answered commit is
    acknowledged, the others stay in flight. The consumer closes on a thread of its own,
    appended to ``closing``: that close ends only once the broker is back and has taken
    the unanswered commit (librdkafka re-sends it), so its thread must be joined before
    the commits are checked."""
    answers: list[KafkaError | None] = []
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": GROUP,
            "enable.auto.commit": False,
            "socket.connection.setup.timeout.ms": 2000,
            # back within a second of the restart: the next point waits for its close
            "reconnect.backoff.max.ms": 1000,
            "on_commit": lambda err, _partitions: answers.append(err),
        }
    )
    try:
        while not stop.is_set():
            partition = rng.randrange(TOPICS["acks1"][0])
            with lock:
                offset = model.next_commit
                model.next_commit += 1
                model.commits_sent.setdefault(partition, []).append(offset)
            answers.clear()
            consumer.commit(
                offsets=[KafkaTopicPartition("acks1", partition, offset)], asynchronous=True
            )
            while not answers and not stop.is_set():
                consumer.poll(0.01)
            if not answers or answers[0] is not None:
                return  # the broker is gone: this commit stays in flight
            with lock:
                model.commits_acked[partition] = offset
                model.commits_sent[partition].remove(offset)
            stop.wait(rng.uniform(0.01, 0.05))
    finally:
        # close() waits for the dead coordinator: let it go on a thread of its own
        closer = threading.Thread(target=consumer.close, name="commit-close", daemon=True)
        closer.start()
        closing.append(closer)


class Stopped(Exception):
    """The point's load is over (the broker was killed) before an answer came."""


def settle(future: Future[Any], stop: threading.Event) -> Any:
    """The result of an admin ``future``, or :class:`Stopped` once ``stop`` is set."""
    while not stop.is_set():
        try:
            return future.result(0.05)
        except FutureTimeout:
            continue
    raise Stopped


def churn_loop(
    stop: threading.Event,
    bootstrap: str,
    model: Model,
    lock: threading.Lock,
    rng: random.Random,
    recorder: Recorder,
    point: int,
) -> None:
    """Delete and re-create the churn topic; a producer writes to it while it exists."""
    admin = AdminClient(
        {"bootstrap.servers": bootstrap, "socket.connection.setup.timeout.ms": 2000}
    )

    def label() -> tuple[str, str] | None:
        return (CHURN, f"churn{model.churn_generation}") if writing.is_set() else None

    writing = threading.Event()
    if model.churn == "exists":
        writing.set()
    producing = threading.Event()
    writer = threading.Thread(
        target=produce_loop,
        args=(producing, bootstrap, recorder, random.Random(rng.random()), point, "churn"),
        kwargs={"topic": label},
        daemon=True,
    )
    writer.start()
    try:
        while not stop.is_set():
            stop.wait(rng.uniform(0.1, 0.4))
            if stop.is_set():
                return
            with lock:
                state = model.churn
            try:
                if state == "exists":
                    writing.clear()
                    time.sleep(0.05)  # the writer leaves the topic (its records may be late)
                    with lock:
                        model.churn = "deleting"
                    settle(admin.delete_topics([CHURN], operation_timeout=5)[CHURN], stop)
                    with lock:
                        model.churn_deleted()
                else:
                    with lock:
                        model.churn = "creating"
                        model.churn_generation += 1
                    topic = NewTopic(CHURN, 1, 1, config=CHURN_CONFIG)
                    settle(admin.create_topics([topic], operation_timeout=5)[CHURN], stop)
                    with lock:
                        model.churn_created()
                    writing.set()
            except (KafkaException, Stopped):
                return  # killed mid-operation: the state stays "deleting"/"creating"
    finally:
        producing.set()
        writer.join(10)


# -- checks -----------------------------------------------------------------------------------


def read_partitions(bootstrap: str, tps: list[tuple[str, int]]) -> dict[tuple[str, int], Any]:
    """Every record of ``tps`` from the log start to the high watermark, with the log
    start offset: ``{(topic, partition): (log_start, high_watermark, [(offset, value)])}``."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "sweep-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 50,
        }
    )
    try:
        result: dict[tuple[str, int], Any] = {}
        pending: set[tuple[str, int]] = set()
        assignment = []
        for topic, partition in tps:
            low, high = watermarks(consumer, topic, partition)
            result[(topic, partition)] = (low, high, [])
            if high > low:
                pending.add((topic, partition))
                assignment.append(KafkaTopicPartition(topic, partition, low))
        if assignment:
            consumer.assign(assignment)
        deadline = time.monotonic() + 60
        while pending:
            if time.monotonic() > deadline:
                raise SweepFailure(f"reading {sorted(pending)} did not reach the high watermark")
            for msg in consumer.consume(2000, 0.2):
                where = (msg.topic(), msg.partition())
                if msg.error() is not None:
                    if msg.error().code() == KafkaError._PARTITION_EOF:
                        pending.discard(where)
                        continue
                    raise SweepFailure(f"reading {where}: {msg.error()}")
                low, high, records = result[where]
                if msg.offset() < high:
                    records.append((msg.offset(), msg.value().decode()))
                if msg.offset() >= high - 1:
                    pending.discard(where)
        # Retention may delete segments while they are read (the reader then jumps to the
        # new log start): the log start offset after the read is the one that counts.
        for (topic, partition), (low, high, records) in result.items():
            after, _ = watermarks(consumer, topic, partition)
            result[(topic, partition)] = (max(low, after), high, records)
        return result
    finally:
        consumer.close()


def watermarks(consumer: Consumer, topic: str, partition: int) -> tuple[int, int]:
    """(log start, high watermark), retried while the broker brings the partition online."""
    deadline = time.monotonic() + 30
    while True:
        try:
            low, high = consumer.get_watermark_offsets(
                KafkaTopicPartition(topic, partition), timeout=5
            )
            return int(low), int(high)
        except KafkaException as exc:
            if time.monotonic() > deadline:
                raise SweepFailure(f"no watermarks for {topic}-{partition}: {exc}") from exc
            time.sleep(0.1)


def churn_exists(bootstrap: str) -> bool:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return CHURN in admin.list_topics(timeout=10).topics


def verify(bootstrap: str, model: Model) -> dict[str, int]:
    """The checks of step 2 (module docstring); resolves the model to what is there.
    Returns counts for the progress line."""
    if model.churn in ("deleting", "creating"):
        exists = churn_exists(bootstrap)
        if model.churn == "deleting" and exists:
            model.churn = "exists"  # the deletion did not happen: the same generation
        elif model.churn == "deleting":
            model.churn_deleted()
        elif exists:  # created: a new generation, whatever the last point carried
            model.churn_created()
        else:
            model.churn = "absent"
    elif model.churn == "absent" and churn_exists(bootstrap):
        raise SweepFailure(f"topic {CHURN} is back after its deletion was acknowledged")
    elif model.churn == "exists" and not churn_exists(bootstrap):
        raise SweepFailure(f"topic {CHURN} is gone although it was never deleted")
    tps = topic_partitions(model)
    read = read_partitions(bootstrap, tps)
    checked = 0
    for tp in tps:
        topic, partition = tp
        part = model.part(topic, partition)
        where = f"{topic}-{partition}"
        low, high, records = read[tp]
        if model.stale:  # the sweep died inside the last point: adopt what is there
            part.acked = dict(records)
            part.maybe.clear()
            part.log_start = low
            continue
        if topic == "retained":
            if low < part.log_start:
                raise SweepFailure(
                    f"{where}: log start offset {low} moved back from {part.log_start}"
                )
        elif low != 0:
            raise SweepFailure(f"{where}: log start offset {low} (nothing deletes records)")
        present: dict[int, str] = {}
        seen: set[str] = set()
        latest: dict[str, int] = {}
        for offset, value in records:
            if value in seen:
                raise SweepFailure(f"{where}: {value[:40]!r} is there twice (offset {offset})")
            seen.add(value)
            expected = part.acked.get(offset)
            if expected is not None and expected != value:
                raise SweepFailure(
                    f"{where}: offset {offset} holds {value[:40]!r}, acknowledged {expected[:40]!r}"
                )
            if expected is None and value not in part.maybe:
                raise SweepFailure(
                    f"{where}: offset {offset} holds {value[:40]!r}, never sent there: phantom "
                    "or resurrected record"
                )
            if expected is None and part.acked and offset < max(part.acked) and topic != CHURN:
                # a record not acknowledged, below acknowledged ones: only possible if it
                # was written before them (its answer was lost); fine, but it must be new
                pass
            present[offset] = value
            latest[key_of(value)] = max(latest.get(key_of(value), -1), offset)
        for offset, value in part.acked.items():
            if offset in present:
                continue
            if topic == "retained" and offset < low:
                continue
            if topic == "compacted" and latest.get(key_of(value), -1) > offset:
                continue
            if offset >= high:
                raise SweepFailure(
                    f"{where}: acknowledged offset {offset} ({value[:30]!r}) is past the high "
                    f"watermark {high}: lost"
                )
            raise SweepFailure(f"{where}: acknowledged offset {offset} ({value[:30]!r}) is lost")
        checked += len(present)
        part.acked = present
        part.maybe.clear()
        part.log_start = low
    verify_commits(bootstrap, model)
    model.stale = False
    return {"records": checked}


def verify_commits(bootstrap: str, model: Model) -> None:
    partitions = TOPICS["acks1"][0]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                committed = consumer.committed(
                    [KafkaTopicPartition("acks1", p) for p in range(partitions)], timeout=10
                )
                break
            except KafkaException as exc:  # the coordinator is loading
                if time.monotonic() > deadline:
                    raise SweepFailure(f"OffsetFetch for {GROUP} failed: {exc}") from exc
                time.sleep(0.2)
    finally:
        consumer.close()
    for tp in committed:
        p, offset = tp.partition, tp.offset
        acked = model.commits_acked.get(p)
        in_flight = model.commits_sent.get(p, [])
        if model.stale:
            pass
        elif offset < 0:
            if acked is not None:
                raise SweepFailure(f"{GROUP} acks1-{p}: commit {acked} acknowledged, none there")
        elif offset != acked and offset not in in_flight:
            raise SweepFailure(
                f"{GROUP} acks1-{p}: committed offset {offset}, acknowledged {acked}, in "
                f"flight {in_flight}"
            )
        elif acked is not None and offset in in_flight and offset < acked:
            raise SweepFailure(f"{GROUP} acks1-{p}: commit {offset} went back from {acked}")
        if offset >= 0:
            model.commits_acked[p] = offset
        model.commits_sent[p] = []


def offline_check(data: Path, copy: Path) -> int:
    """The clean check of step 3 on a copy of the stopped broker's ``data``: the number of
    logs checked. The copy is kept for DumpLogSegments."""
    shutil.copytree(data, copy)
    stray = [p.name for p in copy.rglob("*") if p.name.endswith((".swap", ".cleaned"))]
    if stray:
        raise SweepFailure(f"left by a clean shutdown: {stray}")
    backend = load_backend("native")
    manager = LogManager([copy], BrokerConfig({"node.id": 1, "log.dirs": str(copy)}), progress=None)
    manager.startup()
    try:
        logs = manager.all_logs()
        for log in logs:
            check_log_structure(backend, log)
    finally:
        manager.shutdown()
    check_checkpoints(copy)
    return len(logs)


def dump_check(root: Path, copies: list[Path]) -> int:
    """Kafka's DumpLogSegments over the copies' segments (one JVM per ~100 KB of file
    names); the number of files dumped."""
    files = sorted(
        str(p.relative_to(root))
        for c in copies
        for p in c.glob("*/*")
        if p.suffix in (".log", ".index", ".timeindex")
    )
    if not files:
        return 0
    libs = kafka_libs()
    chunks: list[list[str]] = [[]]
    for name in files:
        if sum(len(f) + 1 for f in chunks[-1]) + len(name) > 100_000:
            chunks.append([])
        chunks[-1].append(name)
    for chunk in chunks:
        proc = subprocess.run(
            [
                require("java"),
                *JVM_FLAGS,
                "-cp",
                f"{libs}/*",
                DUMP_CLASS,
                "--deep-iteration",
                "--files",
                ",".join(chunk),
            ],
            cwd=root,
            capture_output=True,
            timeout=600,
            check=False,
        )
        stdout = proc.stdout.decode("utf-8", errors="replace")
        stderr = proc.stderr.decode("utf-8", errors="replace")
        if proc.returncode != 0:
            raise SweepFailure(f"DumpLogSegments exited {proc.returncode}:\n{stderr[-3000:]}")
        bad = [
            line
            for line in stdout.splitlines()
            if "isvalid: false" in line or re.match(r"Found \d+ invalid bytes", line)
        ]
        if bad:
            raise SweepFailure(f"DumpLogSegments: {bad[:5]}")
        report = [line for line in stderr.splitlines() if line and not _JVM_NOISE.match(line)]
        unexpected = unexpected_reports(report, dump_sections(stdout))
        if unexpected:
            raise SweepFailure("DumpLogSegments reports:\n" + "\n".join(unexpected[:20]))
    return len(files)


def dump_sections(stdout: str) -> dict[str, list[str]]:
    """DumpLogSegments' output per file: ``{path: its lines}``."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in stdout.splitlines():
        if line.startswith("Dumping "):
            current = sections.setdefault(line.removeprefix("Dumping "), [])
        else:
            current.append(line)
    return sections


def unexpected_reports(report: list[str], sections: dict[str, list[str]]) -> list[str]:
    """DumpLogSegments' closing reports (stderr) that show a fault. Not faults:

    * "Non-consecutive offsets" in compacted topics and ``__consumer_offsets`` (the gaps
      compaction leaves), and the "-1 is followed by <base offset>" the tool reports for
      every segment that does not start at offset 0 (it starts each file from -1);
    * a "timestamp mismatch" with log timestamp -1 whose index timestamp is that of an
      empty batch (``count: 0``) of the segment: the cleaner keeps an idempotent
      producer's last batch without its records (as Kafka's does) and the time index may
      name it; the tool takes the max over the batch's records, and there are none.
    """
    unexpected: list[str] = []
    header = ""
    path = Path()
    for line in report:
        if not line.startswith("  "):
            header = line
            for prefix in ("Non-consecutive offsets in ", "Found timestamp mismatch in :"):
                if line.startswith(prefix):
                    path = Path(line.removeprefix(prefix))
                    break
            else:
                unexpected.append(line)
            continue
        if header.startswith("Non-consecutive offsets in "):
            if path.parent.name.startswith(("compacted-", "__consumer_offsets-")):
                continue
            if line.strip() == f"-1 is followed by {int(path.stem)}":
                continue
        elif header.startswith("Found timestamp mismatch in :"):
            found = re.fullmatch(r"\s*Index timestamp: (\d+), log timestamp: -1", line)
            log_file = str(path.with_suffix(".log"))  # sections name it as given (relative)
            batches = next((v for k, v in sections.items() if log_file.endswith("/" + k)), [])
            if found and any(
                " count: 0 " in b and f"Time: {found.group(1)} " in b for b in batches
            ):
                continue
        unexpected.append(f"{header}: {line.strip()}")
    return unexpected


# -- the sweep --------------------------------------------------------------------------------


# A restart must be up within this long. Longer than the tests' 30 s: a long sweep shares
# its machine, and a start-up starved of CPU (one at nice 10 under a load of 6 took over
# 30 s at point 462 of the first 1,000-point run; the same data started in 2 s once the
# load was gone) is not what the sweep looks for. A broker that hangs still fails.
SWEEP_START_TIMEOUT_S = 120.0

# A killed point's committing consumer must have closed this long after the restart (it
# reconnects within a second, re-sends its commit and closes; 0.2 s when measured).
COMMIT_CLOSE_WAIT_S = 60.0


class SweepBroker(Broker):
    """The broker run by ``broker_crash.launch`` (importable from the tests directory)."""

    def wait_started(self, timeout_s: float = SWEEP_START_TIMEOUT_S) -> Broker:
        return super().wait_started(timeout_s)

    module = "broker_crash.launch"

    def spawn(self) -> Broker:
        tests = str(Path(__file__).resolve().parents[1])
        path = os.environ.get("PYTHONPATH")
        self.env = {**self.env, "PYTHONPATH": tests + (os.pathsep + path if path else "")}
        return super().spawn()


@dataclass
class Stats:
    points: int = 0
    startup_kills: int = 0
    timed_kills: int = 0
    injected_kills: int = 0  # the broker killed itself
    injected_missed: int = 0  # the injected call never came: killed from outside
    clean_checks: int = 0
    logs_checked: int = 0
    dumped_files: int = 0
    dump_runs: int = 0
    acked: int = 0
    verified: int = 0
    workloads: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


class Sweeper:
    """Runs points ``done .. total-1`` of the sweep in ``state_dir`` (see the module
    docstring); ``log`` prints the progress."""

    def __init__(self, state_dir: Path, seed: int, *, log: Callable[[str], None] = print) -> None:
        self.dir = state_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.state_file = self.dir / "state.json"
        self.log = log
        self.dumps = self.dir / "dumps"
        self.dumps.mkdir(exist_ok=True)
        if self.state_file.exists():
            state = json.loads(self.state_file.read_text())
            self.seed = state["seed"]
            if seed != self.seed:
                log(f"resuming with the state's seed {self.seed} (not {seed})")
            self.done = state["done"]
            self.model = Model.from_json(state["model"])
            self.stats = Stats(**state["stats"])
            self.port = state["port"]
            if state.get("in_point"):
                log(f"the last run stopped inside point {self.done}: re-baselining the model")
                self.model.stale = True
        else:
            self.seed, self.done, self.model, self.stats = seed, 0, Model(), Stats()
            self.port = None
        self.broker = SweepBroker(self.dir / "data", BROKER_OVERRIDES, port=self.port)
        self.port = self.broker.port
        self.lock = threading.Lock()
        # close threads of the committing consumers of earlier points (commit_loop)
        self.closing: list[threading.Thread] = []

    def save(self, *, in_point: bool) -> None:
        state = {
            "seed": self.seed,
            "done": self.done,
            "in_point": in_point,
            "port": self.port,
            "stats": asdict(self.stats),
            "model": self.model.to_json(),
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        os.replace(tmp, self.state_file)

    def run(self, total: int, stop: threading.Event | None = None) -> Stats:
        """Points up to ``total``; ``stop`` (set by a signal) ends the run after the point
        under way, its state saved: the next run continues from there."""
        start = time.monotonic()
        try:
            while self.done < total and not (stop is not None and stop.is_set()):
                t0 = time.monotonic()
                self.save(in_point=True)
                summary = self.point(self.done)
                self.done += 1
                self.stats.points += 1
                self.stats.seconds += time.monotonic() - t0
                self.save(in_point=False)
                self.log(
                    f"point {self.done}/{total} {summary} ({time.monotonic() - t0:.1f}s, "
                    f"{time.monotonic() - start:.0f}s in this run)"
                )
            if self.done >= total:
                # the last point's kill is checked as every other one is: a restart, the checks
                try:
                    self.start()
                    counts = verify(self.broker.bootstrap, self.model)
                except (SweepFailure, AssertionError) as exc:
                    raise self.failure(self.done, str(exc)) from None
                self.stats.verified += counts["records"]
                self.log(f"after point {self.done}: verified {counts['records']}")
            self.flush_dumps(final=True)
            self.save(in_point=False)
        finally:
            self.broker.kill()
        return self.stats

    def failure(self, point: int, what: str) -> SweepFailure:
        return SweepFailure(
            f"broker crash sweep failed at seed {self.seed}, point {point} (state "
            f"{self.dir}): {what}\nbroker output: {self.broker.log_file}"
        )

    def point(self, point: int) -> str:
        rng = random.Random(f"{self.seed}/{point}")
        draw = rng.random()
        if point > 0 and draw < STARTUP_KILL_RATE:
            delay = rng.uniform(0.0, 0.9)
            self.broker.env = {}
            self.broker.spawn()
            time.sleep(delay)
            self.broker.kill()
            self.stats.startup_kills += 1
            return f"start-up kill after {delay:.2f}s"
        injected = draw >= 1 - INJECTED_RATE
        phases: list[str] = []
        mark = time.monotonic()

        def phase(name: str) -> None:
            nonlocal mark
            now = time.monotonic()
            phases.append(f"{name} {now - mark:.1f}")
            mark = now

        try:
            self.start()
            if point == 0:
                self.create_topics()
            phase("start")
            counts = verify(self.broker.bootstrap, self.model)
            self.model.churn_carried.clear()  # their producer is gone
            phase("verify")
            self.stats.verified += counts["records"]
            clean = injected or rng.random() < CLEAN_CHECK_RATE
            if clean:
                self.clean_check(point)
                phase("clean")
            target = ""
            if injected:
                name, most = rng.choice(INJECTION_TARGETS)
                after = rng.random() < 0.3
                target = f"{name}:{rng.randint(1, most)}" + (":after" if after else "")
                self.broker.stop()
                self.broker.env = {"KAFKACORE_CRASH_AT": target}
                self.broker.spawn()
                try:
                    self.broker.wait_started()
                except AssertionError:
                    if self.broker.returncode != -9:
                        raise
                    self.stats.injected_kills += 1
                    return f"verified {counts['records']}, injected {target}: killed in start-up"
                phase("restart")
            chosen = rng.sample(WORKLOADS, rng.randint(1, 4))
            for w in chosen:
                self.stats.workloads[w] = self.stats.workloads.get(w, 0) + 1
            how = self.load_and_kill(rng, chosen, injected)
            phase("load")
        except SweepFailure as exc:
            raise self.failure(point, str(exc)) from None
        except AssertionError as exc:  # a broker that would not start or stop cleanly
            raise self.failure(point, str(exc)) from None
        finally:
            self.broker.env = {}
        extra = f" injected {target}" if injected else ""
        return (
            f"verified {counts['records']}{' +clean' if clean else ''}; "
            f"{','.join(chosen)}; {how}{extra} [{', '.join(phases)}]"
        )

    def start(self) -> None:
        """The broker started (no injected kill), and the committing consumers of earlier
        points closed (:meth:`reap_commit_consumers`): nothing is checked while a killed
        point's client may still write."""
        self.broker.env = {}
        self.broker.start()
        self.reap_commit_consumers()

    def reap_commit_consumers(self) -> None:
        """Wait (the broker up) until the committing consumers of earlier points have
        closed: each re-sends its unanswered commit first, which must land before
        :func:`verify_commits` reads the committed offsets (it used to land after, and the
        next check found a commit the model had dropped)."""
        deadline = time.monotonic() + COMMIT_CLOSE_WAIT_S
        for closer in self.closing:
            closer.join(max(0.0, deadline - time.monotonic()))
            if closer.is_alive():
                raise SweepFailure(
                    f"a committing consumer of an earlier point has not closed "
                    f"{COMMIT_CLOSE_WAIT_S:g}s after the restart"
                )
        self.closing.clear()

    def create_topics(self) -> None:
        admin = AdminClient({"bootstrap.servers": self.broker.bootstrap})
        new = [NewTopic(t, n, 1, config=c) for t, (n, c) in TOPICS.items()]
        for future in admin.create_topics(new, operation_timeout=10).values():
            future.result(30)

    def clean_check(self, point: int) -> None:
        self.broker.stop()  # exit 0 asserted
        copy = self.dumps / f"p{point}"
        shutil.rmtree(copy, ignore_errors=True)
        self.stats.logs_checked += offline_check(self.broker.data, copy)
        self.stats.clean_checks += 1
        self.flush_dumps(final=False)
        self.start()

    def flush_dumps(self, *, final: bool) -> None:
        copies = sorted(p for p in self.dumps.iterdir() if p.is_dir())
        if not copies or (len(copies) < DUMP_EVERY and not final):
            return
        self.stats.dumped_files += dump_check(self.dumps, copies)
        self.stats.dump_runs += 1
        for c in copies:
            shutil.rmtree(c)
        self.log(f"DumpLogSegments clean over {len(copies)} copies")

    def load_and_kill(self, rng: random.Random, chosen: list[str], injected: bool) -> str:
        bootstrap = self.broker.bootstrap
        stop = threading.Event()
        recorder = Recorder(self.model, self.lock)
        threads: list[threading.Thread] = []
        point = self.done
        for w in chosen:
            sub = random.Random(rng.random())
            if w == "commit":
                target: Callable[..., None] = commit_loop
                args: tuple[Any, ...] = (stop, bootstrap, self.model, self.lock, sub, self.closing)
                kwargs: dict[str, Any] = {}
            elif w == "churn":
                target = churn_loop
                args = (stop, bootstrap, self.model, self.lock, sub, recorder, point)
                kwargs = {}
            else:
                topic = {
                    "acks1": "acks1",
                    "acksall": "acksall",
                    "compact": "compacted",
                    "retention": "retained",
                }[w]
                target = produce_loop
                args = (stop, bootstrap, recorder, sub, point, w)
                kwargs = {"topic": topic}
            threads.append(threading.Thread(target=target, args=args, kwargs=kwargs, daemon=True))
        for t in threads:
            t.start()
        proc = self.broker.proc
        assert proc is not None
        if injected:
            try:
                proc.wait(INJECTED_WAIT_S)
                self.stats.injected_kills += 1
                how = "killed itself"
            except subprocess.TimeoutExpired:
                self.stats.injected_missed += 1
                how = f"not reached in {INJECTED_WAIT_S:g}s: SIGKILL"
        else:
            delay = rng.uniform(*TIMED_KILL_S)
            time.sleep(delay)
            self.stats.timed_kills += 1
            how = f"SIGKILL after {delay:.2f}s"
        self.broker.kill()
        if self.broker.returncode != -9:
            raise SweepFailure(f"the broker exited {self.broker.returncode}, not by SIGKILL")
        stop.set()
        for t in threads:
            t.join(30)
            if t.is_alive():
                raise SweepFailure(f"a client thread ({t.name}) is stuck after the kill")
        self.stats.acked += recorder.acked
        return f"{how}, {recorder.acked} acked"


def summary(stats: Stats, seed: int) -> str:
    return (
        f"broker crash sweep, seed {seed}: {stats.points} points in {stats.seconds:.0f}s "
        f"({stats.seconds / max(stats.points, 1):.2f}s/point); kills: {stats.timed_kills} timed, "
        f"{stats.injected_kills} injected ({stats.injected_missed} injected points killed "
        f"from outside), {stats.startup_kills} in start-up; {stats.acked} records acknowledged, "
        f"{stats.verified} record reads checked; {stats.clean_checks} clean checks "
        f"({stats.logs_checked} logs); DumpLogSegments: {stats.dump_runs} JVMs, "
        f"{stats.dumped_files} files; workloads {stats.workloads}; no failure"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m broker_crash.sweep", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--points", type=int, default=1000, help="total points (default 1000)")
    parser.add_argument("--state", type=Path, default=Path("crash-sweep-state"))
    parser.add_argument("--seed", type=int, default=20251125)
    args = parser.parse_args(argv)
    sweeper = Sweeper(args.state, args.seed, log=lambda line: print(line, flush=True))
    print(
        f"broker crash sweep: seed {sweeper.seed}, {sweeper.done}/{args.points} points done, "
        f"state {args.state}",
        flush=True,
    )
    stop = threading.Event()

    def finish_point(signum: int, _frame: object) -> None:
        print(f"signal {signum}: stopping after this point (rerun to continue)", flush=True)
        stop.set()

    signal.signal(signal.SIGINT, finish_point)
    signal.signal(signal.SIGTERM, finish_point)
    try:
        stats = sweeper.run(args.points, stop)
    except SweepFailure as exc:
        print(f"FAILED: {exc}", flush=True)
        return 1
    print(summary(stats, sweeper.seed), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
