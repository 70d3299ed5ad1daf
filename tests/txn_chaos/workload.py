"""The transactional workload of the transaction fault tests, with confluent-kafka
(librdkafka): seeded transactional producers, read_committed readers during the run, the
final reads, and the raw log of each partition for the log-level check; everything goes
to a :class:`support.txn_checker.History`.

* :class:`TxnWorker` (a thread per ``transactional.id``): transactions of 2-6 records over
  up to three partitions, a share of them deliberately aborted. Outcomes as the checker
  defines them: ``committed`` when ``commit_transaction`` returned; ``aborted`` /
  ``failed`` when no commit was asked (a transaction cannot commit without an EndTxn
  commit) or ``abort_transaction`` returned after an abortable commit error; ``unknown``
  when the commit's answer was lost (retriable errors past the worker's patience, fatal
  errors): the worker then drops its producer and starts a new one on the same
  ``transactional.id``, whose ``init_transactions`` fences the old one.
* :class:`LiveReader`: a read_committed consumer assigned every partition from offset 0,
  recording each record returned (``poll``); it survives broker restarts (librdkafka
  reconnects) in one session.
* :func:`final_read`: once the last stable offset of every partition equals its high
  watermark (nothing open), a fresh read_committed consumer reads each partition from 0 to
  its end (``poll`` with ``final``).
* :func:`raw_log` / :func:`read_txnindex`: the stored batches (read_uncommitted Fetch,
  with producer ids and markers) and a partition directory's ``.txnindex`` entries (Kafka's
  34-byte layout, read here without kafkacore's code), for
  :func:`support.txn_checker.check_partition_log`.
"""

from __future__ import annotations

import contextlib
import random
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as CkTopicPartition

from kafkacore.client import Client
from kafkacore.record import batch_header, iter_batches, parse_control_record, records
from support.txn_checker import AbortedEntry, History, LogBatch

__all__ = [
    "CopyWorker",
    "LiveReader",
    "TxnWorker",
    "drain_copier",
    "final_read",
    "raw_log",
    "read_txnindex",
    "wait_stable",
]

TRANSACTION_TIMEOUT_MS = 10000
PRODUCER_BASE: dict[str, object] = {
    "acks": "all",
    "linger.ms": 2,
    "retry.backoff.ms": 100,
    "topic.metadata.refresh.interval.ms": 1000,
    "socket.connection.setup.timeout.ms": 3000,
    "reconnect.backoff.max.ms": 500,
    "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
    "message.timeout.ms": TRANSACTION_TIMEOUT_MS - 1000,
    "log_level": 2,  # the brokers' deaths are expected: no connection errors on stderr
}


class TxnWorker(threading.Thread):
    """One transactional producer (``transactional.id`` = ``name``) looping until
    :meth:`stop` (or ``max_txns``); transactions are named ``<txn_prefix>.<n>``
    (``txn_prefix`` defaults to ``name``); ``pause_s`` between transactions; ``on_end``
    is called with ``(txn, commit)`` right before each EndTxn (the crash sweep's kill
    trigger)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partitions: int,
        name: str,
        history: History,
        *,
        seed: int,
        abort_rate: float = 0.25,
        txn_sizes: tuple[int, int] = (2, 6),
        pause_s: float = 0.0,
        patience_s: float = 30.0,
        max_txns: int | None = None,
        on_end: Callable[[str, bool], None] | None = None,
        extra: dict[str, object] | None = None,
        txn_prefix: str | None = None,
    ) -> None:
        super().__init__(name=f"txn-worker-{name}", daemon=True)
        self.bootstrap = bootstrap
        self.topic = topic
        self.partitions = partitions
        self.txn_name = name
        self.txn_prefix = txn_prefix or name
        self.history = history
        self.rng = random.Random(f"{seed}/{name}")
        self.abort_rate = abort_rate
        self.txn_sizes = txn_sizes
        self.pause_s = pause_s
        self.patience_s = patience_s
        self.max_txns = max_txns
        self.on_end = on_end
        self.extra = extra or {}
        self._halt = threading.Event()
        self.producer: Producer | None = None
        self.generation = 0
        self.done_txns = 0
        self.committed = 0
        self.errors: list[str] = []
        self._delivery_failed = False

    def stop(self) -> None:
        self._halt.set()

    # -- producers ---------------------------------------------------------------------

    def _new_producer(self) -> Producer:
        """A producer on the id, ``init_transactions`` retried until it works (the
        coordinator may be moving or loading) or the patience runs out."""
        deadline = time.monotonic() + self.patience_s * 2
        while True:
            self.generation += 1
            producer = Producer(
                {
                    "bootstrap.servers": self.bootstrap,
                    "transactional.id": self.txn_name,
                    "client.id": f"{self.txn_name}-g{self.generation}",
                    **PRODUCER_BASE,
                    **self.extra,
                }
            )
            try:
                producer.init_transactions(10)
                self.history.write("init", producer=self.txn_name, generation=self.generation)
                return producer
            except KafkaException as exc:
                self.errors.append(f"init_transactions: {exc}")
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _drop_producer(self) -> None:
        producer, self.producer = self.producer, None
        if producer is not None:
            with contextlib.suppress(KafkaException):  # a fenced producer raises its fatal error
                producer.purge(in_queue=True, in_flight=True, blocking=False)
                producer.poll(0)

    def _on_delivery(self, err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            self._delivery_failed = True
            self.history.write(
                "ack-error", value=msg.value().decode(), partition=msg.partition(), error=str(err)
            )
        else:
            self.history.write(
                "ack", value=msg.value().decode(), partition=msg.partition(), offset=msg.offset()
            )

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> None:
        n = 0
        while not self._halt.is_set() and (self.max_txns is None or n < self.max_txns):
            try:
                if self.producer is None:
                    self.producer = self._new_producer()
                self.one_transaction(f"{self.txn_prefix}.{n}")
            except Exception as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
                self._drop_producer()
                time.sleep(0.2)
            n += 1
            self.done_txns = n
            if self.pause_s:
                self._halt.wait(self.pause_s)
        self._drop_producer()

    def one_transaction(self, txn: str) -> None:
        producer = self.producer
        assert producer is not None
        producer.begin_transaction()
        self._delivery_failed = False
        size = self.rng.randint(*self.txn_sizes)
        targets = self.rng.sample(range(self.partitions), min(3, self.partitions))
        failed = False
        for i in range(size):
            p = targets[i % len(targets)] if i < len(targets) else self.rng.choice(targets)
            value = f"{txn}#{i}"
            self.history.write("send", txn=txn, value=value, partition=p, producer=self.txn_name)
            try:
                producer.produce(
                    self.topic, value=value.encode(), partition=p, on_delivery=self._on_delivery
                )
            except (BufferError, KafkaException) as exc:
                self.errors.append(f"produce: {exc}")
                failed = True
                break
            producer.poll(0)
        if not failed:
            # the records land before the EndTxn: aborted transactions leave records, an
            # ABORT marker and a .txnindex entry (abort_transaction would purge them)
            failed = producer.flush(self.patience_s) > 0 or self._delivery_failed
        commit = not failed and self.rng.random() >= self.abort_rate
        self.end(txn, commit, failed)

    def end(self, txn: str, commit: bool, failed: bool = False) -> None:
        producer = self.producer
        assert producer is not None
        self.history.write("end", txn=txn, commit=commit)
        if self.on_end is not None:
            self.on_end(txn, commit)
        if not commit:
            # never asked to commit: the transaction cannot commit, whatever abort says
            self.history.write("outcome", txn=txn, outcome="failed" if failed else "aborted")
            self._abort(txn)
            return
        deadline = time.monotonic() + self.patience_s
        while True:
            try:
                producer.commit_transaction(5)
                self.history.write("outcome", txn=txn, outcome="committed")
                self.committed += 1
                return
            except KafkaException as exc:
                err = exc.args[0]
                self.errors.append(f"commit {txn}: {err}")
                if err.txn_requires_abort() and self._abort(txn):
                    self.history.write("outcome", txn=txn, outcome="failed", error=str(err))
                    return
                if err.retriable() and not err.fatal() and time.monotonic() < deadline:
                    continue
                self.history.write("outcome", txn=txn, outcome="unknown", error=str(err))
                self._drop_producer()
                return

    def _abort(self, txn: str) -> bool:
        """``abort_transaction`` retried while retriable; whether it returned. On failure
        the producer is dropped (a new one fences the transaction)."""
        producer = self.producer
        assert producer is not None
        deadline = time.monotonic() + self.patience_s
        while True:
            try:
                producer.abort_transaction(5)
                return True
            except KafkaException as exc:
                err = exc.args[0]
                self.errors.append(f"abort {txn}: {err}")
                if err.retriable() and not err.fatal() and time.monotonic() < deadline:
                    continue
                self._drop_producer()
                return False


class CopyWorker(TxnWorker):
    """Consume-transform-produce (Kafka's ``TransactionalMessageCopier``): a read_committed
    consumer of ``source`` (group ``name``, every partition assigned at the group's
    committed offsets) and a transactional producer (``transactional.id`` ``name``)
    copying each record to the same partition of ``sink``, with the consumed positions
    committed in the transaction (``send_offsets_to_transaction``). Copies are values
    ``<txn>#<i>`` whose ``send`` events carry the ``source`` value. After a failed or
    undecided transaction the consumer and the producer are opened again (the consumer
    resumes at the committed offsets). :meth:`finish` asks it to stop once it has copied
    up to given end offsets."""

    def __init__(
        self,
        bootstrap: str,
        source: str,
        sink: str,
        partitions: int,
        name: str,
        history: History,
        *,
        seed: int,
        patience_s: float = 30.0,
        on_end: Callable[[str, bool], None] | None = None,
    ) -> None:
        super().__init__(
            bootstrap,
            sink,
            partitions,
            name,
            history,
            seed=seed,
            abort_rate=0.0,
            patience_s=patience_s,
            on_end=on_end,
        )
        self.source = source
        self.consumer: Consumer | None = None
        self.ends: dict[int, int] | None = None
        self.caught_up = threading.Event()

    def finish(self, ends: dict[int, int]) -> None:
        self.ends = dict(ends)

    def _open_consumer(self) -> Consumer:
        consumer = _consumer(self.bootstrap, self.txn_name, **{"enable.partition.eof": True})
        self.eof: dict[int, int] = {}
        wanted = [CkTopicPartition(self.source, p) for p in range(self.partitions)]
        deadline = time.monotonic() + self.patience_s * 2
        while True:
            try:
                committed = consumer.committed(wanted, timeout=10)
                break
            except KafkaException as exc:  # e.g. UNSTABLE_OFFSET_COMMIT while one is pending
                self.errors.append(f"committed: {exc}")
                if time.monotonic() > deadline:
                    consumer.close()
                    raise
                time.sleep(0.2)
        consumer.assign(
            [
                CkTopicPartition(
                    self.source, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
                )
                for tp in committed
            ]
        )
        self.history.write("copier-open", offsets={tp.partition: tp.offset for tp in committed})
        return consumer

    def _drop_consumer(self) -> None:
        consumer, self.consumer = self.consumer, None
        if consumer is not None:
            consumer.close()

    def _done(self) -> bool:
        """Caught up: every partition read to its end (an end-of-partition event at or
        after it; the position alone stays before trailing aborted records and markers,
        which return nothing)."""
        if self.ends is None or self.consumer is None:
            return False
        return all(self.eof.get(p, -1) >= end for p, end in self.ends.items())

    def run(self) -> None:
        n = 0
        try:
            while not self._halt.is_set():
                try:
                    if self.producer is None:
                        self._drop_consumer()  # both again: resume at the committed offsets
                        self.producer = self._new_producer()
                    if self.consumer is None:
                        self.consumer = self._open_consumer()
                    if self._done():
                        self.caught_up.set()
                        break
                    if self.copy_once(f"{self.txn_prefix}.{n}"):
                        n += 1
                except Exception as exc:
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                    self._drop_producer()
                    time.sleep(0.2)
        finally:
            self._drop_producer()
            self._drop_consumer()

    def copy_once(self, txn: str) -> bool:
        producer, consumer = self.producer, self.consumer
        assert producer is not None and consumer is not None
        msgs = []
        for m in consumer.consume(100, 0.3):
            err = m.error()
            if err is None:
                msgs.append(m)
            elif err.code() == KafkaError._PARTITION_EOF:
                self.eof[m.partition()] = m.offset()
        if not msgs:
            return False
        producer.begin_transaction()
        self._delivery_failed = False
        for i, m in enumerate(msgs):
            value = f"{txn}#{i}"
            self.history.write(
                "send",
                txn=txn,
                value=value,
                partition=m.partition(),
                source=m.value().decode(),
                source_offset=m.offset(),
            )
            producer.produce(
                self.topic,
                value=value.encode(),
                partition=m.partition(),
                on_delivery=self._on_delivery,
            )
        positions = consumer.position(consumer.assignment())
        producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
        failed = producer.flush(self.patience_s) > 0 or self._delivery_failed
        self.end(txn, not failed, failed)
        if self.producer is None or failed:
            self._drop_producer()  # not committed (or undecided): read the input again
        return True


def drain_copier(
    copier: CopyWorker,
    ends: dict[int, int],
    replace: Callable[[int], CopyWorker],
    *,
    wait_s: float = 20.0,
    attempts: int = 3,
) -> CopyWorker:
    """Lets ``copier`` copy up to ``ends`` and stops it. A copier that has not caught up
    after ``wait_s`` is left behind (librdkafka 2.16's ``send_offsets_to_transaction`` can
    stall for good once a broker crash dropped its connection: it sends AddOffsetsToTxn
    again and never the TxnOffsetCommit, its timeout notwithstanding) and
    ``replace(attempt)`` starts another on the same ``transactional.id`` and group, which
    fences it; exactly-once must hold all the same. The copier that finished."""
    for attempt in range(attempts):
        copier.finish(ends)
        if copier.caught_up.wait(wait_s):
            copier.stop()
            copier.join(30)
            return copier
        copier.stop()
        copier.history.write("copier-replaced", attempt=attempt, errors=copier.errors[-3:])
        copier = replace(attempt)
        copier.start()
    raise AssertionError(f"no copier caught up in {attempts} tries: {copier.errors[-5:]}")


def _consumer(bootstrap: str, group: str, **extra: object) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "topic.metadata.refresh.interval.ms": 1000,
            "reconnect.backoff.max.ms": 500,
            "fetch.wait.max.ms": 100,
            "log_level": 2,
            **extra,
        }
    )


class LiveReader(threading.Thread):
    """A read_committed consumer of every partition from offset 0 during the run."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, name: str, history: History):
        super().__init__(name=f"txn-reader-{name}", daemon=True)
        self.history = history
        self.reader_name = name
        self.consumer = _consumer(bootstrap, f"txnchaos-{name}")
        self.consumer.assign(
            [CkTopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
        )
        self._halt = threading.Event()
        self.count = 0

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        try:
            while not self._halt.is_set():
                for msg in self.consumer.consume(200, 0.2):
                    if msg.error():
                        continue
                    self.count += 1
                    self.history.write(
                        "poll",
                        consumer=self.reader_name,
                        partition=msg.partition(),
                        offset=msg.offset(),
                        value=msg.value().decode(),
                    )
        finally:
            self.consumer.close()


def wait_stable(
    bootstrap: str, topic: str, partitions: int, timeout_s: float = 60.0
) -> dict[int, int]:
    """Waits until every partition's last stable offset (ListOffsets LATEST under
    read_committed) equals its high watermark: nothing open. The ends by partition."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            with Client(bootstrap, timeout_s=5) as client:
                specs = {(topic, p): -1 for p in range(partitions)}
                hw = client.list_offsets(specs, isolation_level=0)
                lso = client.list_offsets(specs, isolation_level=1)
            last = {p: (lso[(topic, p)][0], hw[(topic, p)][0]) for p in range(partitions)}
            if all(a == b for a, b in last.values()):
                return {p: hw for p, (_, hw) in last.items()}
        except Exception as exc:
            last = exc
        time.sleep(0.25)
    raise AssertionError(f"LSO != HW after {timeout_s:g} s: {last!r} (partition: (LSO, HW))")


def final_read(
    bootstrap: str,
    topic: str,
    partitions: int,
    history: History,
    ends: dict[int, int],
    *,
    name: str = "final",
    timeout_s: float = 60.0,
) -> dict[int, list[tuple[int, str]]]:
    """Every partition from offset 0 to ``ends`` with a fresh read_committed consumer:
    until each partition reached its end (an end-of-partition event at or after it).
    ``(offset, value)`` lists by partition; each read is recorded as a final ``poll``."""
    consumer = _consumer(bootstrap, f"txnchaos-{name}", **{"enable.partition.eof": True})
    out: dict[int, list[tuple[int, str]]] = {p: [] for p in range(partitions)}
    try:
        consumer.assign([CkTopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        done = {p for p in range(partitions) if ends[p] == 0}
        deadline = time.monotonic() + timeout_s
        while len(done) < partitions:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"final read incomplete after {timeout_s:g} s: ends {ends}, read "
                    f"{ {p: len(v) for p, v in out.items()} }, done {sorted(done)}"
                )
            for msg in consumer.consume(500, 0.5):
                p = msg.partition()
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF and msg.offset() >= ends[p]:
                        done.add(p)
                    continue
                value = msg.value().decode()
                out[p].append((msg.offset(), value))
                history.write(
                    "poll", consumer=name, partition=p, offset=msg.offset(), value=value, final=True
                )
    finally:
        consumer.close()
    return out


def raw_log(bootstrap: str, topic: str, partition: int) -> list[LogBatch]:
    """Every stored batch of the partition up to its high watermark (read_uncommitted)."""
    out: list[LogBatch] = []
    with Client(bootstrap, timeout_s=10) as client:
        offset = 0
        while True:
            answer = client.fetch(topic, partition, offset)
            if offset >= answer.high_watermark:
                return out
            data = answer.records
            moved = False
            for pos, magic, _size in iter_batches(data):
                assert magic == 2, f"{topic}-{partition}: a batch of magic {magic}"
                h = batch_header(data, pos)
                if h.last_offset < offset:
                    continue
                recs = records(data, pos)
                control = None
                if h.is_control:
                    kind, _epoch = parse_control_record(recs[0].key or b"", recs[0].value or b"")
                    control = kind.name
                values = tuple(
                    (r.offset, (r.value or b"").decode()) for r in recs if not h.is_control
                )
                out.append(
                    LogBatch(
                        h.base_offset,
                        h.last_offset,
                        h.producer_id,
                        h.is_transactional,
                        control,
                        values,
                    )
                )
                offset = h.last_offset + 1
                moved = True
            if not moved:
                raise AssertionError(f"{topic}-{partition}: no progress fetching at {offset}")


_ENTRY = struct.Struct(">hqqqq")


def read_txnindex(partition_dir: Path) -> list[AbortedEntry]:
    """The entries of every ``.txnindex`` file of a partition directory, in segment order
    (Kafka's 34-byte layout; a trailing partial entry is ignored, as Kafka's reader does)."""
    out: list[AbortedEntry] = []
    for path in sorted(partition_dir.glob("*.txnindex")):
        data = path.read_bytes()
        for pos in range(0, len(data) - len(data) % _ENTRY.size, _ENTRY.size):
            version, pid, first, last, lso = _ENTRY.unpack_from(data, pos)
            assert version == 0, f"{path}: entry version {version} at {pos}"
            out.append(AbortedEntry(pid, first, last, lso))
    return out
