"""The share partition (``server/share/partition.py``) against a model of what KIP-932
promises, over hypothesis-drawn runs: members fetching (batch_optimized and record_limit),
acknowledging (ACCEPT, RELEASE, REJECT, RENEW, some of them wrongly), sessions ending,
acquisition locks expiring, state writes failing and the leader failing over (a new share
partition loaded from the durable state the writes left, combined as the share coordinator
combines them). After every step:

* no record is held by two members, and no member acknowledges a record it does not hold;
* a record's delivery count is the number of times it was handed out (since the state it
  was last loaded from) and never more than ``group.share.delivery.count.limit``;
* accepted and rejected records are never handed out again, nor are records whose last
  delivery was released or timed out;
* the SPSO only moves forward, over terminal records only;
* under ``share.key.ordering`` (the kafkacore extension): no two records of one key are
  held at once, and a record is handed out only once every earlier record of its key is
  terminal;

and at the end a last member drains the partition: every record was accepted at most once
and is terminal."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from kafkacore.coordinator.share_state import RecordState, StateBatch, combine_state_batches
from kafkacore.protocol import ErrorCode
from kafkacore.server.share.key_order import KeyIndex
from kafkacore.server.share.partition import (
    AcknowledgementBatch,
    AcknowledgeType,
    FetchedBatch,
    ReadState,
    ShareAcquireMode,
    ShareError,
    SharePartition,
)
from support.budget import examples

MEMBERS = ("m1", "m2", "m3")
LOCK_MS = 1000
MAX_DELIVERIES = 3


class FakeTimer:
    """Acquisition locks on a clock the test moves."""

    @dataclass
    class Handle:
        expiration_ms: float
        fn: Callable[[], None]
        cancelled: bool = False

        def cancel(self) -> None:
            self.cancelled = True

    def __init__(self) -> None:
        self.now = 0.0
        self.handles: list[FakeTimer.Handle] = []

    def schedule(self, delay_ms: float, fn: Callable[[], None]) -> FakeTimer.Handle:
        handle = FakeTimer.Handle(self.now + max(0.0, delay_ms), fn)
        self.handles.append(handle)
        return handle

    def now_ms(self) -> float:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += ms
        due = sorted(
            (h for h in self.handles if not h.cancelled and h.expiration_ms <= self.now),
            key=lambda h: h.expiration_ms,
        )
        self.handles = [h for h in self.handles if not h.cancelled and h not in due]
        for h in due:
            if not h.cancelled:
                h.cancelled = True
                h.fn()


@dataclass
class Durable:
    """What the share coordinator holds for the share partition."""

    state_epoch: int = 0
    start_offset: int = 0
    batches: list[StateBatch] = field(default_factory=list)
    fail_next: bool = False

    async def write(
        self,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: list[StateBatch],
    ) -> None:
        if self.fail_next:
            self.fail_next = False
            raise ShareError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if start_offset != -1:
            self.start_offset = max(self.start_offset, start_offset)
        self.batches = combine_state_batches(self.batches, batches, self.start_offset)

    def state_of(self, offset: int) -> tuple[RecordState, int] | None:
        for b in self.batches:
            if b.first_offset <= offset <= b.last_offset:
                return RecordState(b.delivery_state), b.delivery_count
        return None


def _log(draw: st.DrawFn) -> tuple[list[tuple[int, int]], dict[int, bytes | None]]:
    """Batches ``(base, last)`` of a log and each record's key."""
    batches, keys = [], {}
    offset = 0
    for _ in range(draw(st.integers(1, 8))):
        size = draw(st.integers(1, 6))
        batches.append((offset, offset + size - 1))
        for o in range(offset, offset + size):
            keys[o] = draw(st.sampled_from([b"a", b"b", b"c", b"d", None]))
        offset += size
    return batches, keys


class SharePartitionMachine(RuleBasedStateMachine):
    key_ordering = False

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.timer = FakeTimer()
        self.durable = Durable()
        self.topic_id = uuid.uuid4()
        self.leader_epoch = 0
        self.held: dict[int, tuple[str, float]] = {}  # offset -> (member, lock expiry)
        self.counts: dict[int, int] = {}
        self.accepted: dict[int, int] = {}
        self.terminal: set[int] = set()
        self.last_start = 0

    def teardown(self) -> None:
        self.loop.close()

    def run(self, coro: object) -> object:
        return self.loop.run_until_complete(coro)  # type: ignore[arg-type]

    def _new_partition(self) -> SharePartition:
        sp = SharePartition(
            "g",
            self.topic_id,
            "t",
            0,
            self.leader_epoch,
            write_state=self.durable.write,
            timer=self.timer,
            lock_duration_ms=lambda: LOCK_MS,
            max_delivery_count=MAX_DELIVERIES,
            max_in_flight=12,
            key_ordering=self.key_ordering,
        )

        async def read() -> ReadState:
            d = self.durable
            return ReadState(d.state_epoch, d.start_offset, list(d.batches))

        async def reset() -> int:
            return 0

        self.run(sp.maybe_initialize(read, reset))
        return sp

    @initialize(log=st.composite(_log)())
    def start(self, log: tuple[list[tuple[int, int]], dict[int, bytes | None]]) -> None:
        self.batches = [FetchedBatch(b, e) for b, e in log[0]]
        self.keys = log[1]
        self.log_end = self.batches[-1].last_offset + 1
        self.sp = self._new_partition()

    # -- steps ---------------------------------------------------------------------------

    def _read_from(self, offset: int, how_many: int) -> list[FetchedBatch]:
        out = [b for b in self.batches if b.last_offset >= offset]
        return out[:how_many]

    @rule(
        member=st.sampled_from(MEMBERS),
        mode=st.sampled_from(ShareAcquireMode),
        max_records=st.integers(1, 10),
        batch_size=st.integers(1, 10),
        read_batches=st.integers(1, 4),
    )
    def fetch(
        self,
        member: str,
        mode: ShareAcquireMode,
        max_records: int,
        batch_size: int,
        read_batches: int,
    ) -> None:
        offset = self.sp.next_fetch_offset()
        if offset >= self.log_end:
            return
        read = self._read_from(offset, read_batches)
        acquired, count = self.sp.acquire(
            member, mode, batch_size, max_records, offset, read, keys=self.keys
        )
        offsets = [o for a in acquired for o in range(a.first_offset, a.last_offset + 1)]
        assert count == len(offsets)
        if mode == ShareAcquireMode.RECORD_LIMIT:
            assert count <= max_records
        for a in acquired:
            for o in range(a.first_offset, a.last_offset + 1):
                assert o not in self.held, (o, self.held[o], member)
                assert o not in self.terminal, o
                self.counts[o] = self.counts.get(o, 0) + 1
                assert a.delivery_count == self.counts[o], (o, a, self.counts[o])
                assert a.delivery_count <= MAX_DELIVERIES
                self.held[o] = (member, self.timer.now + LOCK_MS)
        if self.key_ordering:
            for o in offsets:
                key = self.keys[o]
                if key is None:
                    continue
                earlier = [p for p in range(o) if self.keys[p] == key]
                assert all(p in self.terminal for p in earlier), (o, key, earlier)
                others = [p for p, _ in self.held.items() if p != o and self.keys[p] == key]
                assert not others, (o, key, others)

    @rule(
        member=st.sampled_from(MEMBERS),
        data=st.data(),
        fail=st.booleans(),
    )
    def acknowledge(self, member: str, data: st.DataObject, fail: bool) -> None:
        mine = sorted(o for o, (m, _) in self.held.items() if m == member)
        others = sorted(o for o, (m, _) in self.held.items() if m != member)
        pool = mine + others[:2]
        if not pool:
            return
        chosen = sorted(set(data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6))))
        ack = {
            o: data.draw(
                st.sampled_from(
                    [
                        AcknowledgeType.ACCEPT,
                        AcknowledgeType.RELEASE,
                        AcknowledgeType.REJECT,
                        AcknowledgeType.RENEW,
                    ]
                )
            )
            for o in chosen
        }
        batches = [AcknowledgementBatch(o, o, (int(t),)) for o, t in ack.items()]
        self.durable.fail_next = fail
        try:
            self.run(self.sp.acknowledge(member, batches))
        except ShareError as exc:
            # rolled back, but for the locks renewed before the error (as Kafka: a RENEW
            # takes effect at once, it writes nothing)
            foreign = [o for o in chosen if self.held[o][0] != member]
            if foreign:
                assert exc.error_code == ErrorCode.INVALID_RECORD_STATE, exc.error_code
            else:
                assert fail, exc
                assert exc.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
            for o in chosen:
                if foreign and o >= foreign[0]:
                    break
                if ack[o] == AcknowledgeType.RENEW:
                    self.held[o] = (member, self.timer.now + LOCK_MS)
            self.durable.fail_next = False
            return
        self.durable.fail_next = False
        assert all(self.held[o][0] == member for o in chosen), "acknowledged records not held"
        for o, t in ack.items():
            if t == AcknowledgeType.RENEW:
                self.held[o] = (member, self.timer.now + LOCK_MS)
                continue
            del self.held[o]
            if t == AcknowledgeType.ACCEPT:
                self.accepted[o] = self.accepted.get(o, 0) + 1
                self.terminal.add(o)
            elif t == AcknowledgeType.REJECT or self.counts[o] >= MAX_DELIVERIES:
                self.terminal.add(o)

    @rule(member=st.sampled_from(MEMBERS))
    def session_ends(self, member: str) -> None:
        self.run(self.sp.release_acquired_records(member))
        for o in [o for o, (m, _) in self.held.items() if m == member]:
            del self.held[o]
            if self.counts[o] >= MAX_DELIVERIES:
                self.terminal.add(o)

    @rule(ms=st.sampled_from([100, 500, 999, 1000, 1500]))
    def time_passes(self, ms: int) -> None:
        async def advance() -> None:
            self.timer.advance(ms)
            await self.sp.drain()

        self.run(advance())
        for o, (_, expiry) in list(self.held.items()):
            if expiry <= self.timer.now:
                del self.held[o]
                if self.counts[o] >= MAX_DELIVERIES:
                    self.terminal.add(o)

    @precondition(lambda self: not self.durable.fail_next)
    @rule()
    def leader_fails_over(self) -> None:
        """A new leader: the old share partition is gone, its locks with it; the new one
        loads what the share coordinator holds (acquisitions not written are forgotten,
        as in Kafka: their delivery counts return to the durable ones)."""
        self.sp.cancel_locks()
        self.leader_epoch += 1
        self.held.clear()
        for o in self.terminal:
            durable = self.durable.state_of(o)
            assert o < self.durable.start_offset or (
                durable is not None and durable[0].is_terminal
            ), (o, durable, self.durable)
        for o in list(self.counts):
            if o in self.terminal:
                continue
            durable = self.durable.state_of(o)
            self.counts[o] = durable[1] if durable is not None else 0
        self.sp = self._new_partition()

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def spso_moves_forward_over_terminal_records(self) -> None:
        if not hasattr(self, "sp"):
            return
        start = self.sp.start_offset
        assert start >= self.last_start, (start, self.last_start)
        assert all(o in self.terminal for o in range(self.last_start, min(start, self.log_end)))
        self.last_start = start

    @invariant()
    def delivery_counts_within_limit(self) -> None:
        if not hasattr(self, "sp"):
            return
        for b in self.sp.in_flight():
            assert b.delivery_count <= MAX_DELIVERIES, b
            if b.delivery_state == RecordState.ACQUIRED:
                for o in range(b.first_offset, b.last_offset + 1):
                    assert o in self.held, (o, b)

    @invariant()
    def accepted_at_most_once(self) -> None:
        assert all(n == 1 for n in self.accepted.values()), self.accepted

    def drain(self) -> None:
        """A last member accepts everything left; every record ends terminal."""
        for _ in range(40):
            self.time_passes(LOCK_MS)
            offset = self.sp.next_fetch_offset()
            if offset >= self.log_end:
                break
            read = self._read_from(offset, 4)
            acquired, _ = self.sp.acquire(
                "last", ShareAcquireMode.BATCH_OPTIMIZED, 100, 100, offset, read, keys=self.keys
            )
            acks = [
                AcknowledgementBatch(a.first_offset, a.last_offset, (int(AcknowledgeType.ACCEPT),))
                for a in acquired
            ]
            for a in acquired:
                for o in range(a.first_offset, a.last_offset + 1):
                    assert o not in self.terminal
                    self.accepted[o] = self.accepted.get(o, 0) + 1
                    self.terminal.add(o)
            if acks:
                self.run(self.sp.acknowledge("last", acks))
        self.accepted_at_most_once()
        assert self.sp.start_offset == self.log_end, (self.sp, self.sp.in_flight())
        assert set(range(self.log_end)) == self.terminal


def _runs(machine: type[SharePartitionMachine], n: int) -> None:
    class Drained(machine):  # type: ignore[valid-type, misc]
        def teardown(self) -> None:
            try:
                if hasattr(self, "sp"):
                    self.drain()
            finally:
                super().teardown()

    Drained.TestCase.settings = settings(
        max_examples=examples(n),
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    Drained.TestCase().runTest()


def test_share_partition_keeps_kip932_promises() -> None:
    _runs(SharePartitionMachine, 150)


class KeyOrderedMachine(SharePartitionMachine):
    key_ordering = True


def test_share_partition_keeps_key_order() -> None:
    _runs(KeyOrderedMachine, 150)


def test_key_index_heads() -> None:
    index = KeyIndex()
    for offset, key in enumerate([b"a", b"b", b"a", None, b"a"]):
        index.add(offset, key)
    assert [index.is_head(o) for o in range(5)] == [True, True, False, True, False]
    index.done(0)
    assert index.is_head(2) and not index.is_head(4)
    index.add(1, b"b")  # known: no change
    index.forget_below(3)
    assert index.is_head(4) and index.keys_in_flight() == 1
