"""kafkacore.client.exactly_once against a real broker subprocess: staged micro-batches are
published exactly once across replays, failed task attempts, crashes in the middle of a
publication (recovered by a new sink object, also after a broker restart) and interleaved
sinks. Crashes are injected by a Client whose produce raises after k target writes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kafkacore.client import Client, KafkaError
from kafkacore.client.exactly_once import (
    MAX_BATCH_BYTES,
    SINKS_TOPIC,
    STAGING_TOPIC,
    ExactlyOnceSink,
    StagedRange,
    stage,
)
from kafkacore.record import batch_header, build_batch, iter_batches, records
from support.brokers import Broker

pytestmark = pytest.mark.timeout(90)

T0 = 1_700_000_000_000
Item = tuple[str, int, bytes]


class Crash(Exception):
    """The injected failure: the driver dies here."""


class CrashingClient(Client):
    """Raises :class:`Crash` right after its ``crash_after``-th produce to a target topic
    was written (the acknowledgement is lost, as when the driver dies mid-request)."""

    def __init__(self, bootstrap: str, crash_after: int | None) -> None:
        super().__init__(bootstrap, timeout_s=10)
        self.crash_after = crash_after
        self.target_writes = 0

    def produce(self, topic: str, partition: int, batch: bytes, **kw: int) -> int:
        offset = super().produce(topic, partition, batch, **kw)
        if topic not in (STAGING_TOPIC, SINKS_TOPIC):
            self.target_writes += 1
            if self.crash_after is not None and self.target_writes >= self.crash_after:
                raise Crash(f"after {self.target_writes} target writes")
        return offset


def _items(
    tag: str, topic: str, layout: list[tuple[int, int]], compression: int = 0, t0: int = T0
) -> list[Item]:
    """One target batch per ``(partition, records)`` of ``layout``; record values
    ``<tag>.<n>`` numbered across the layout. The default timestamps are years old (as a
    job re-processing old events writes them): brokers forget such a producer's state."""
    items: list[Item] = []
    n = 0
    for partition, count in layout:
        rows = [
            (i, t0 + n + i, b"key%d" % (n + i), f"{tag}.{n + i}".encode(), [("n", b"%d" % i)])
            for i in range(count)
        ]
        items.append((topic, partition, build_batch(rows, compression=compression)))
        n += count
    return items


def _expected(topic: str, tasks: list[list[Item]]) -> dict[int, list[bytes | None]]:
    """Per partition, the values in staging order (tasks in commit order)."""
    out: dict[int, list[bytes | None]] = {}
    for items in tasks:
        for t, partition, batch in items:
            assert t == topic
            out.setdefault(partition, []).extend(r.value for r in records(batch))
    return out


def _read(client: Client, topic: str) -> dict[int, list[bytes | None]]:
    out: dict[int, list[bytes | None]] = {}
    for partition in client.partitions(topic):
        data = client.fetch(topic, partition, 0, max_bytes=64 << 20).records
        values = [r.value for p, _, _ in iter_batches(data) for r in records(data, p)]
        if values:
            out[partition] = values
    return out


def _stage_tasks(
    client: Client, sink: str, batch_id: int, tasks: list[list[Item]]
) -> list[StagedRange]:
    staged: list[StagedRange] = []
    for task_id, items in enumerate(tasks):
        staged += stage(client, sink, batch_id, task_id, items)
    return staged


def test_commit_publishes_every_staged_record_once(client: Client) -> None:
    client.create_topic("out1", 3)
    tasks = [
        _items("b0t0", "out1", [(0, 3), (1, 2), (0, 4)]),
        _items("b0t1", "out1", [(2, 5), (0, 1)], compression=1),
        _items("b0t2", "out1", [(1, 1000)], compression=4),
    ]
    staged = _stage_tasks(client, "sink1", 0, tasks)
    sink = ExactlyOnceSink(client, "sink1")
    assert sink.last_committed() == -1
    assert sink.commit(0, staged) is True
    assert sink.last_committed() == 0
    assert _read(client, "out1") == _expected("out1", tasks)

    # the published records are the staged ones (keys, timestamps, headers), written by the
    # sink's idempotent producer with consecutive sequences per partition
    sent = {r.value: r for items in tasks for _, _, b in items for r in records(b)}
    producer_ids = set()
    for partition in range(3):
        data = client.fetch("out1", partition, 0).records
        sequence = 0
        for position, _, _ in iter_batches(data):
            header = batch_header(data, position)
            producer_ids.add((header.producer_id, header.producer_epoch))
            assert header.base_sequence == sequence
            sequence += header.last_offset_delta + 1
            for r in records(data, position):
                assert r._replace(offset=0) == sent[r.value]._replace(offset=0)
    assert len(producer_ids) == 1 and next(iter(producer_ids))[0] >= 0


def test_replayed_batch_id_is_skipped(client: Client) -> None:
    client.create_topic("out2", 2)
    first = [_items("b0", "out2", [(0, 2), (1, 2)])]
    sink = ExactlyOnceSink(client, "sink2")
    assert sink.commit(0, _stage_tasks(client, "sink2", 0, first))
    rerun = _stage_tasks(client, "sink2", 0, [_items("b0-rerun", "out2", [(0, 2)])])
    assert sink.commit(0, rerun) is False
    second = [_items("b1", "out2", [(1, 3)])]
    assert sink.commit(1, _stage_tasks(client, "sink2", 1, second)) is True
    assert sink.commit(0, rerun) is False
    assert _read(client, "out2") == _expected("out2", first + second)

    restarted = ExactlyOnceSink(client, "sink2")  # state loaded from the sinks topic
    assert restarted.last_committed() == 1
    assert restarted.commit(1, rerun) is False
    assert _read(client, "out2") == _expected("out2", first + second)
    assert ExactlyOnceSink(client, "other-sink").last_committed() == -1


def test_failed_task_attempt_never_appears(client: Client) -> None:
    client.create_topic("out3", 2)
    failed = stage(client, "sink3", 0, 0, _items("attempt0", "out3", [(0, 3), (1, 3)]))
    retried = [_items("attempt1", "out3", [(0, 3), (1, 3)])]
    other = [_items("task1", "out3", [(1, 2)])]
    staged = stage(client, "sink3", 0, 0, retried[0]) + stage(client, "sink3", 0, 1, other[0])
    assert not {r[:3] for r in failed} & {r[:3] for r in staged}
    assert [r.targets for r in staged] == [(("out3", 0), ("out3", 1)), (("out3", 1),)]
    assert ExactlyOnceSink(client, "sink3").commit(0, staged)
    assert _read(client, "out3") == _expected("out3", retried + other)


@pytest.mark.parametrize("crash_after", [1, 3, 7, 9])
def test_crash_mid_publication_completed_by_a_new_sink(broker: Broker, crash_after: int) -> None:
    """9 target batches, 7 of them to partition 0 (more than the 5 the broker remembers
    per producer); the driver dies after ``crash_after`` writes (9: before the commit
    record). A new sink object finishes the publication; the re-run batch is skipped."""
    topic = f"out-crash-{crash_after}"
    tasks = [
        _items("t0", topic, [(0, 2), (0, 3), (1, 1), (0, 1)]),
        _items("t1", topic, [(0, 4), (0, 1), (1, 2), (0, 2), (0, 5)]),
    ]
    sink_id = f"crash-{crash_after}"
    with CrashingClient(broker.bootstrap, None) as crashing:
        crashing.create_topic(topic, 2)
        sink = ExactlyOnceSink(crashing, sink_id)
        assert sink.commit(0, _stage_tasks(crashing, sink_id, 0, tasks[:1]))
        crashing.crash_after, crashing.target_writes = crash_after, 0
        staged = _stage_tasks(crashing, sink_id, 1, tasks)
        if crash_after % 2:  # targets not declared: the sink reads the ranges to find them
            staged = [StagedRange(*r[:3]) for r in staged]
        with pytest.raises(Crash):
            sink.commit(1, staged)
    with Client(broker.bootstrap, timeout_s=10) as fresh:
        assert _read(fresh, topic) != _expected(topic, tasks[:1] + tasks) or crash_after == 9
        recovered = ExactlyOnceSink(fresh, sink_id)
        assert recovered.last_committed() == 1
        rerun = _stage_tasks(fresh, sink_id, 1, [_items("rerun", topic, [(0, 1)])])
        assert recovered.commit(1, rerun) is False
        assert _read(fresh, topic) == _expected(topic, tasks[:1] + tasks)
        later = [_items("b2", topic, [(0, 1), (1, 1)])]
        assert recovered.commit(2, _stage_tasks(fresh, sink_id, 2, later))
        assert _read(fresh, topic) == _expected(topic, tasks[:1] + tasks + later)


def test_retry_in_the_same_sink_completes_the_pending_intent(broker: Broker) -> None:
    """A commit that failed half-way is completed by the next commit call of the same
    object: with the same batch id the intent's ranges are published (not the re-run's)."""
    topic = "out-retry"
    tasks = [_items("orig", topic, [(0, 2), (0, 2), (0, 2), (1, 1)])]
    with CrashingClient(broker.bootstrap, 2) as crashing:
        crashing.create_topic(topic, 2)
        sink = ExactlyOnceSink(crashing, "retry")
        with pytest.raises(Crash):
            sink.commit(0, _stage_tasks(crashing, "retry", 0, tasks))
        crashing.crash_after = None
        rerun = _stage_tasks(crashing, "retry", 0, [_items("rerun", topic, [(0, 1)])])
        assert sink.commit(0, rerun) is True
        assert sink.last_committed() == 0
        assert _read(crashing, topic) == _expected(topic, tasks)


@pytest.mark.parametrize("event_time", ["old", "now"])
def test_crash_then_broker_restart(tmp_path: Path, event_time: str) -> None:
    """After a restart the broker remembers only the producer's last batch per partition
    (with old record timestamps: nothing, the producer has expired); the new sink finds
    what was written by reading the targets from the offsets in the intent."""
    t0 = T0 if event_time == "old" else int(time.time() * 1000)
    broker = Broker(tmp_path / "data").start()
    try:
        topic = "out-restart"
        layout = [(0, 1), (0, 2), (1, 3), (0, 4), (0, 5), (1, 1), (0, 6)]
        tasks = [
            _items("a", topic, layout, t0=t0),
            _items("b", topic, [(1, 2), (0, 1)], t0=t0),
        ]
        with CrashingClient(broker.bootstrap, 6) as crashing:
            crashing.create_topic(topic, 2)
            staged = _stage_tasks(crashing, "restart", 0, tasks)
            with pytest.raises(Crash):
                ExactlyOnceSink(crashing, "restart").commit(0, staged)
        broker.restart()
        with Client(broker.bootstrap, timeout_s=10) as fresh:
            sink = ExactlyOnceSink(fresh, "restart")
            assert sink.last_committed() == 0
            assert _read(fresh, topic) == _expected(topic, tasks)
            more = [_items("c", topic, [(0, 2), (1, 2)])]
            assert sink.commit(1, _stage_tasks(fresh, "restart", 1, more))
        broker.restart()
        with Client(broker.bootstrap, timeout_s=10) as fresh:
            assert ExactlyOnceSink(fresh, "restart").last_committed() == 1
            assert _read(fresh, topic) == _expected(topic, tasks + more)
    finally:
        broker.stop()


def test_sinks_and_batches_interleaved(broker: Broker) -> None:
    """Two sinks write micro-batches to the same topic in turns; sink a crashes in its
    batch 2 and is recovered while b goes on. Each sink's records appear once, in order."""
    topic = "shared"
    with Client(broker.bootstrap, timeout_s=10) as c:
        c.create_topic(topic, 2)
        sinks = {"a": ExactlyOnceSink(c, "a"), "b": ExactlyOnceSink(c, "b")}
        want: dict[str, list[list[Item]]] = {"a": [], "b": []}
        for batch_id in range(4):
            for name in ("a", "b"):
                tasks = [
                    _items(f"{name}{batch_id}t{t}", topic, [(t % 2, 2), ((t + 1) % 2, 1)])
                    for t in range(2)
                ]
                staged = _stage_tasks(c, name, batch_id, tasks)
                if name == "a" and batch_id == 2:
                    with CrashingClient(broker.bootstrap, 3) as crashing, pytest.raises(Crash):
                        ExactlyOnceSink(crashing, "a").commit(batch_id, staged)
                    sinks["a"] = ExactlyOnceSink(c, "a")  # recovers batch 2
                    assert sinks["a"].commit(batch_id, staged) is False
                else:
                    assert sinks[name].commit(batch_id, staged)
                want[name] += tasks
        got = _read(c, topic)
        for name in ("a", "b"):
            expected = _expected(topic, want[name])
            mine = {
                p: [v for v in values if v is not None and v.startswith(name.encode())]
                for p, values in got.items()
            }
            assert mine == expected
        assert sum(len(v) for v in got.values()) == sum(
            len(v) for name in want for v in _expected(topic, want[name]).values()
        )


def test_stage_refuses_what_the_sink_cannot_publish(client: Client) -> None:
    rows = [(0, T0, None, b"x" * MAX_BATCH_BYTES, [])]
    with pytest.raises(ValueError, match="limit"):
        stage(client, "bad", 0, 0, [("t", 0, build_batch(rows))])
    txn = build_batch(
        [(0, T0, None, b"x", [])],
        producer_id=1,
        producer_epoch=0,
        base_sequence=0,
        transactional=True,
    )
    with pytest.raises(ValueError, match="transactional"):
        stage(client, "bad", 0, 0, [("t", 0, txn)])
    two = build_batch([(0, T0, None, b"x", [])]) * 2
    with pytest.raises(ValueError, match="exactly one"):
        stage(client, "bad", 0, 0, [("t", 0, two)])
    with pytest.raises(ValueError, match="valid"):
        stage(client, "bad", 0, 0, [("t", 0, b"\0" * 70)])
    assert stage(client, "bad", 0, 0, []) == []


def test_staged_data_gone_is_a_clear_error(client: Client) -> None:
    client.create_topic("out-gone", 1)
    sink = ExactlyOnceSink(client, "gone")
    assert stage(client, "gone", 0, 0, []) == []  # creates the staging topic if needed
    end = client.list_offsets({(STAGING_TOPIC, 0): -1})[(STAGING_TOPIC, 0)][0]
    with pytest.raises(KafkaError) as info:
        sink.commit(0, [StagedRange(0, end + 10, end + 12)])
    assert info.value.code in (1, 3) and STAGING_TOPIC in str(info.value)


def test_repeated_and_overlapping_ranges(client: Client) -> None:
    client.create_topic("out-rep", 1)
    tasks = [_items("rep", "out-rep", [(0, 3)])]
    staged = _stage_tasks(client, "rep", 0, tasks)
    sink = ExactlyOnceSink(client, "rep")
    r = staged[0]
    with pytest.raises(ValueError, match="overlap"):
        sink.commit(0, [r, StagedRange(r.partition, r.start, r.end + 1)])
    assert sink.commit(0, [r, StagedRange(*r[:3]), r])  # the same range thrice: once
    assert _read(client, "out-rep") == _expected("out-rep", tasks)
