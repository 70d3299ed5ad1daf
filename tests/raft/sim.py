"""A deterministic simulation of a KRaft quorum, to check Raft's safety properties under
faults (the properties of Kafka's ``RaftEventSimulationTest``, not its code).

One seeded ``random.Random`` drives everything: simulated time, message delays, losses,
duplication-free reordering, network partitions, crashes (a crash loses what the log had
not flushed) and restarts, the leader's appends, snapshots, resignations and - with
``dynamic=True`` (kraft.version 1) - AddRaftVoter/RemoveRaftVoter sent by an admin. The
same seed replays the same run.

The :class:`Checker` verifies, as the run goes:

* **election safety** - at most one leader per epoch;
* **leader completeness** - a new leader's log holds every committed entry;
* **state-machine safety** - every replica's committed entries (below its high watermark,
  snapshot included) agree, offset by offset, with every other's, and the sequence of
  committed values each state machine applies is a prefix of one global sequence;
* **monotonic high watermark** - within a process's life a replica's HW never goes back,
  and what was once committed is never lost;
* **log matching** (at the end and at each checkpoint) - two logs with an entry of the same
  offset and epoch hold the same entries up to it.

``Broken`` rules, used only by the tests that show the checker can fail, make the Raft
client misbehave on purpose.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kafkacore.protocol.errors import ErrorCode
from kafkacore.raft import (
    Endpoints,
    MemoryQuorumStateStore,
    MemoryRaftLog,
    Node,
    OffsetAndEpoch,
    QuorumConfig,
    RaftClient,
    ReplicaKey,
    VoterNode,
    VoterSet,
    wire,
)
from kafkacore.raft.client import NotLeaderError
from kafkacore.raft.log import RaftLog
from kafkacore.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    ApiVersionsResponse,
    BeginQuorumEpochResponse,
    DescribeQuorumResponse,
    EndQuorumEpochResponse,
    FetchResponse,
    FetchSnapshotResponse,
    InboundRequest,
    InboundResponse,
    OutboundRequest,
    OutboundResponse,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterResponse,
    VoteResponse,
    error_response,
)
from kafkacore.raft.metadata_log import MetadataLog
from kafkacore.raft.quorum_state import FileQuorumStateStore, QuorumStateStore
from kafkacore.raft.records import iter_batches
from kafkacore.raft.snapshots import build_snapshot, read_snapshot

LISTENER = "CONTROLLER"
SEGMENT_BYTES = 4096  # small segments: rolls, deletions and recovery across segments
ADMIN_ID = -100


class SafetyViolation(AssertionError):
    """A Raft safety property failed (the message says which, where and when)."""


@dataclass(frozen=True)
class Faults:
    """How hostile the network and the nodes are."""

    drop: float = 0.05  # a message is lost
    error: float = 0.3  # a lost request comes back as an error response instead
    min_delay_ms: int = 1
    max_delay_ms: int = 40  # independent per message: messages overtake each other
    partition_every_ms: int = 6_000
    partition_ms: tuple[int, int] = (1_000, 5_000)
    crash_every_ms: int = 5_000
    down_ms: tuple[int, int] = (200, 4_000)
    append_every_ms: int = 50
    snapshot_every: int = 40  # committed records between snapshots (0: none)
    resign_every_ms: int = 15_000
    reconfigure_every_ms: int = 7_000


@dataclass
class SimNode:
    node_id: int
    directory_id: uuid.UUID
    log: RaftLog
    store: QuorumStateStore
    client: RaftClient | None = None
    alive: bool = True
    incarnation: int = 0
    next_poll: int = 0
    applied: list[bytes] = field(default_factory=list)  # the state machine: values in order
    applied_offset: int = 0  # the next log offset to apply
    high_watermark: int = -1  # the last HW seen in this incarnation
    appended: int = 0


class Checker:
    """The safety properties (see the module docstring)."""

    def __init__(self) -> None:
        self.leaders: dict[int, int] = {}  # epoch -> leader id
        self.committed: dict[int, tuple[int, bytes]] = {}  # offset -> (epoch, entry digest)
        self.committed_end = 0
        self.values: list[bytes] = []  # the one sequence of applied values
        self.events = 0

    def fail(self, now: int, text: str) -> None:
        raise SafetyViolation(f"t={now}ms: {text}")

    def on_leader(self, now: int, node: SimNode) -> None:
        client = node.client
        assert client is not None
        epoch = client.epoch
        known = self.leaders.setdefault(epoch, node.node_id)
        if known != node.node_id:
            self.fail(now, f"election safety: epoch {epoch} has leaders {known} and {node.node_id}")

    def check_leader_completeness(self, now: int, node: SimNode) -> None:
        """A new leader holds every committed entry (below ``committed_end``)."""
        log = node.log
        if log.end_offset < self.committed_end:
            self.fail(
                now,
                f"leader completeness: node {node.node_id} leads epoch {node.client.epoch} "  # type: ignore[union-attr]
                f"with log end {log.end_offset} < committed {self.committed_end}",
            )
        start = max(log.start_offset, 0)
        for offset, entry in entries(log, start, self.committed_end):
            if self.committed.get(offset, entry) != entry:
                self.fail(
                    now,
                    f"leader completeness: node {node.node_id}'s entry at {offset} "
                    f"{entry} differs from the committed {self.committed[offset]}",
                )

    def on_commit(self, now: int, node: SimNode, high_watermark: int) -> None:
        """``node`` says everything below ``high_watermark`` is committed."""
        if high_watermark < node.high_watermark:
            self.fail(
                now,
                f"monotonic HW: node {node.node_id} HW went {node.high_watermark} -> "
                f"{high_watermark}",
            )
        log = node.log
        start = max(node.high_watermark, log.start_offset, 0)
        for offset, entry in entries(log, start, high_watermark):
            known = self.committed.setdefault(offset, entry)
            if known != entry:
                self.fail(
                    now,
                    f"state-machine safety: node {node.node_id} commits {entry} at {offset}, "
                    f"{known} was committed there",
                )
        self.committed_end = max(self.committed_end, high_watermark)
        node.high_watermark = high_watermark

    def on_apply(self, now: int, node: SimNode) -> None:
        applied = node.applied
        common = min(len(applied), len(self.values))
        if applied[:common] != self.values[:common]:
            index = next(i for i in range(common) if applied[i] != self.values[i])
            self.fail(
                now,
                f"state-machine safety: node {node.node_id} applied {applied[index]!r} as "
                f"value #{index}, {self.values[index]!r} was applied there",
            )
        if len(applied) > len(self.values):
            self.values.extend(applied[common:])

    def check_log_matching(self, now: int, nodes: list[SimNode]) -> None:
        """Two logs with the same (offset, epoch) entry agree on everything before it."""
        views = {
            n.node_id: dict(entries(n.log, n.log.start_offset, n.log.end_offset)) for n in nodes
        }
        ids = sorted(views)
        for a, b in itertools.combinations(ids, 2):
            va, vb = views[a], views[b]
            shared = sorted(set(va) & set(vb))
            last_match = -1
            for offset in shared:
                if va[offset][0] == vb[offset][0]:
                    last_match = offset
            for offset in shared:
                if offset > last_match:
                    break
                if va[offset] != vb[offset]:
                    self.fail(
                        now,
                        f"log matching: nodes {a} and {b} agree at {last_match} (epoch "
                        f"{va[last_match][0]}) but differ at {offset}: {va[offset]} vs "
                        f"{vb[offset]}",
                    )


def entries(log: RaftLog, start: int, end: int) -> list[tuple[int, tuple[int, bytes]]]:
    """``(offset, (epoch, digest))`` of each record of ``log`` in ``[start, end)``; a
    control record's digest is its type."""
    out = []
    offset = start
    while offset < end:
        chunk = log.read(offset, 1 << 20)
        if not chunk:
            break
        for batch in iter_batches(chunk):
            if batch.last_offset < offset:
                continue
            if batch.is_control:
                items: list[bytes] = [f"control:{c.type.name}".encode() for c in batch.control]
            else:
                items = [v or b"" for v in batch.values]
            for i, item in enumerate(items):
                record_offset = batch.base_offset + i
                if start <= record_offset < end:
                    out.append((record_offset, (batch.epoch, item)))
            offset = batch.last_offset + 1
            if offset >= end:
                break
    return out


@dataclass(order=True)
class _Event:
    at: int
    seq: int
    action: Callable[[], None] = field(compare=False)


class Simulation:
    """``voters`` + ``observers`` nodes (ids 0..); see the module docstring."""

    def __init__(
        self,
        seed: int,
        *,
        voters: int = 3,
        observers: int = 1,
        faults: Faults | None = None,
        dynamic: bool = False,
        broken: Callable[[RaftClient], None] | None = None,
        config: QuorumConfig | None = None,
        storage: Path | None = None,
        on_the_wire: bool = False,
    ) -> None:
        self.seed = seed
        self.on_the_wire = on_the_wire
        self.rng = random.Random(seed)
        self.faults = faults or Faults()
        self.dynamic = dynamic
        self.broken = broken
        self.config = config or QuorumConfig(
            election_timeout_ms=1000,
            fetch_timeout_ms=2000,
            request_timeout_ms=2000,
            retry_backoff_ms=20,
            append_linger_ms=25,
            fetch_max_bytes=4096,
            fetch_snapshot_max_bytes=2048,
        )
        self.now = 0
        self._events: list[_Event] = []
        self._seq = itertools.count()
        self.checker = Checker()
        self.partition: tuple[frozenset[int], frozenset[int]] | None = None
        self.voter_ids = list(range(voters))
        self.nodes: dict[int, SimNode] = {}
        for node_id in range(voters + observers):
            directory = uuid.UUID(int=self.rng.getrandbits(128) | 2)
            log: RaftLog
            store: QuorumStateStore
            if storage is None:
                log, store = MemoryRaftLog(), MemoryQuorumStateStore()
            else:
                (storage / f"node{node_id}").mkdir(parents=True)
                log = MetadataLog(storage / f"node{node_id}", segment_bytes=SEGMENT_BYTES)
                store = FileQuorumStateStore.in_dir(storage / f"node{node_id}")
            self.nodes[node_id] = SimNode(node_id, directory, log, store)
        self.static_voters = VoterSet.of(
            VoterNode(
                ReplicaKey(i, self.nodes[i].directory_id if dynamic else None),
                self._endpoints(i),
                0,
                1 if dynamic else 0,
            )
            for i in self.voter_ids
        )
        if dynamic:
            bootstrap = build_snapshot(
                OffsetAndEpoch(0, 0),
                [],
                timestamp_ms=0,
                last_contained_log_timestamp=-1,
                kraft_version=1,
                voters=self.static_voters,
            )
            for node in self.nodes.values():
                writer = node.log.create_snapshot_unchecked(OffsetAndEpoch(0, 0))
                assert writer is not None
                writer.append(bootstrap)
                writer.freeze()
        self.stats = {
            "elections": 0,
            "crashes": 0,
            "partitions": 0,
            "snapshots": 0,
            "fetch_snapshots": 0,
            "reconfigurations": 0,
            "messages": 0,
            "dropped": 0,
        }
        self._admin_pending: dict[int, RaftRequest] = {}
        self._admin_correlation = itertools.count(1)

    # -- plumbing ------------------------------------------------------------------------

    @staticmethod
    def _endpoints(node_id: int) -> Endpoints:
        return Endpoints.single(LISTENER, f"node{node_id}", 9000 + node_id)

    def at(self, when: int, action: Callable[[], None]) -> None:
        heapq.heappush(self._events, _Event(when, next(self._seq), action))

    def _start(self, node: SimNode) -> None:
        if isinstance(node.log, MetadataLog) and node.incarnation > 0:
            # a restarted process opens (and recovers) its metadata log directory
            node.log = MetadataLog(node.log.directory.parent, segment_bytes=SEGMENT_BYTES)
        node.incarnation += 1
        node.alive = True
        node.high_watermark = -1
        node.next_poll = 0
        bootstrap = [] if self.dynamic else [Node(i, f"node{i}", 9000 + i) for i in self.voter_ids]
        if self.dynamic:
            bootstrap = [Node(i, f"node{i}", 9000 + i) for i in self.voter_ids]
        static = VoterSet.empty() if self.dynamic else self.static_voters
        client = RaftClient(
            node_id=node.node_id,
            directory_id=node.directory_id,
            cluster_id="sim-cluster",
            log=node.log,
            store=node.store,
            config=self.config,
            static_voters=static,
            bootstrap_servers=bootstrap,
            listener=LISTENER,
            local_listeners=self._endpoints(node.node_id),
            local_kraft_versions=(0, 1),
            rng=random.Random(self.rng.getrandbits(64)),
            can_become_voter=self.dynamic,
        )
        if self.broken is not None:
            self.broken(client)
        node.client = client
        client.initialize(self.now)
        self._rebuild_state_machine(node)
        self._poll(node)

    def _rebuild_state_machine(self, node: SimNode) -> None:
        """A restarted state machine starts from the latest snapshot."""
        node.applied = []
        node.applied_offset = node.log.start_offset
        snapshot_id = node.log.latest_snapshot_id()
        if snapshot_id is not None and snapshot_id.offset >= node.log.start_offset:
            data = node.log.read_snapshot(snapshot_id)
            assert data is not None
            node.applied = list(read_snapshot(data).values)
            node.applied_offset = snapshot_id.offset

    def _poll(self, node: SimNode) -> None:
        client = node.client
        if not node.alive or client is None:
            return
        wait = client.poll(self.now)
        self._after_step(node)
        incarnation = node.incarnation
        when = self.now + max(1, min(wait, 60_000))
        if node.next_poll <= self.now or when < node.next_poll:
            node.next_poll = when
            self.at(when, lambda: self._timer(node, incarnation, when))

    def _timer(self, node: SimNode, incarnation: int, when: int) -> None:
        if node.incarnation == incarnation and node.alive and node.next_poll == when:
            self._poll(node)

    def _after_step(self, node: SimNode) -> None:
        client = node.client
        assert client is not None
        for message in client.take_outbound():
            self._send(node, message)
        checker = self.checker
        checker.events += 1
        if client.failed_requests:
            checker.fail(self.now, f"node {node.node_id} failed to handle a request (see the log)")
        if client.is_leader():
            if client.epoch not in checker.leaders:
                self.stats["elections"] += 1
                checker.on_leader(self.now, node)
                checker.check_leader_completeness(self.now, node)
            else:
                checker.on_leader(self.now, node)
        hw = client.high_watermark
        if hw is not None and hw != node.high_watermark:
            checker.on_commit(self.now, node, hw)
            self._apply(node, hw)

    def _apply(self, node: SimNode, hw: int) -> None:
        log = node.log
        if node.applied_offset < log.start_offset:
            # a downloaded snapshot replaced the log: load it
            self._rebuild_state_machine(node)
            self.stats["fetch_snapshots"] += 1
        for offset, (_epoch, item) in entries(log, node.applied_offset, hw):
            if not item.startswith(b"control:"):
                node.applied.append(item)
            node.applied_offset = offset + 1
        node.applied_offset = max(node.applied_offset, hw)
        self.checker.on_apply(self.now, node)
        self._maybe_snapshot(node, hw)

    def _maybe_snapshot(self, node: SimNode, hw: int) -> None:
        every = self.faults.snapshot_every
        latest = node.log.latest_snapshot_id()
        base = latest.offset if latest is not None else 0
        if not every or hw - base < every or node.applied_offset != hw:
            return
        client = node.client
        assert client is not None
        epoch = client.log.end_offset_for_epoch(client.log.last_fetched_epoch)
        # the epoch of the record at hw - 1: the largest epoch that starts at or below it
        snapshot_epoch = _epoch_at(node.log, hw - 1)
        if snapshot_epoch is None:
            return
        del epoch
        snapshot_id = OffsetAndEpoch(hw, snapshot_epoch)
        if client.create_snapshot(
            snapshot_id, node.applied, last_contained_log_timestamp=self.now, now=self.now
        ):
            self.stats["snapshots"] += 1
            if self.rng.random() < 0.7:
                client.delete_log_before_snapshot(snapshot_id)

    def _send(self, source: SimNode, message: OutboundRequest | OutboundResponse) -> None:
        faults = self.faults
        self.stats["messages"] += 1
        if isinstance(message, OutboundRequest):
            target = message.destination.id
            src_node = Node(target, f"node{target}", 9000 + target)
            cid = message.correlation_id
            request = message.request
            if self._cut(source.node_id, target) or self.rng.random() < faults.drop:
                self.stats["dropped"] += 1
                if self.rng.random() < faults.error:
                    error = error_response(request, ErrorCode.BROKER_NOT_AVAILABLE)
                    self._deliver(
                        source.node_id, source.incarnation, InboundResponse(src_node, cid, error)
                    )
                return
            inbound = InboundRequest(cid, request, (source.node_id, source.incarnation))
            self._deliver(target, None, inbound)
        else:
            reply_to: Any = message.reply_to
            target, incarnation = reply_to
            if target == ADMIN_ID:
                self._admin_response(message.correlation_id, message.response)
                return
            if self._cut(source.node_id, target) or self.rng.random() < faults.drop:
                self.stats["dropped"] += 1
                return
            src = Node(source.node_id, f"node{source.node_id}", 9000 + source.node_id)
            self._deliver(
                target, incarnation, InboundResponse(src, message.correlation_id, message.response)
            )

    def _readable(self) -> list[SimNode]:
        """The nodes whose log can be read now (a crashed process's files are closed)."""
        return [n for n in self.nodes.values() if n.alive or isinstance(n.log, MemoryRaftLog)]

    def _cut(self, a: int, b: int) -> bool:
        if self.partition is None:
            return False
        left, _right = self.partition
        return (a in left) != (b in left)

    def _deliver(
        self, target: int, incarnation: int | None, event: InboundRequest | InboundResponse
    ) -> None:
        delay = self.rng.randint(self.faults.min_delay_ms, self.faults.max_delay_ms)
        if self.on_the_wire:
            event = _through_the_wire(event)

        def arrive() -> None:
            node = self.nodes[target]
            if not node.alive or node.client is None:
                return
            if incarnation is not None and node.incarnation != incarnation:
                return  # an answer to a request of an earlier process
            node.client.handle(event, self.now)
            self._poll(node)

        self.at(self.now + delay, arrive)

    # -- faults and load ---------------------------------------------------------------

    def _crash(self) -> None:
        alive = [n for n in self.nodes.values() if n.alive]
        if len(alive) > 1:
            node = self.rng.choice(alive)
            node.alive = False
            node.client = None
            node.incarnation += 1
            if isinstance(node.log, MemoryRaftLog):
                node.log.crash()
            else:  # the process dies: its files stay as written (the page cache survives)
                assert isinstance(node.log, MetadataLog)
                node.log.log.close_handlers()
            self.stats["crashes"] += 1
            down = self.rng.randint(*self.faults.down_ms)
            self.at(self.now + down, lambda: self._start(node))
        self.at(self.now + self.rng.randint(1, 2 * self.faults.crash_every_ms), self._crash)

    def _partition(self) -> None:
        ids = list(self.nodes)
        self.rng.shuffle(ids)
        cut = self.rng.randint(1, len(ids) - 1)
        self.partition = (frozenset(ids[:cut]), frozenset(ids[cut:]))
        self.stats["partitions"] += 1
        self.at(self.now + self.rng.randint(*self.faults.partition_ms), self._heal)
        self.at(self.now + self.rng.randint(1, 2 * self.faults.partition_every_ms), self._partition)

    def _heal(self) -> None:
        self.partition = None

    def _append(self) -> None:
        for node in self.nodes.values():
            client = node.client
            if node.alive and client is not None and client.is_leader():
                count = self.rng.randint(1, 3)
                values = []
                for _ in range(count):
                    node.appended += 1
                    values.append(f"n{node.node_id}-i{node.incarnation}-{node.appended}".encode())
                with contextlib.suppress(NotLeaderError):
                    client.append(values, self.now)
                self._poll(node)
        self.at(self.now + self.rng.randint(1, 2 * self.faults.append_every_ms), self._append)

    def _resign(self) -> None:
        for node in self.nodes.values():
            if node.alive and node.client is not None and node.client.is_leader():
                node.client.resign(node.client.epoch)
                self._poll(node)
        self.at(self.now + self.rng.randint(1, 2 * self.faults.resign_every_ms), self._resign)

    def _reconfigure(self) -> None:
        """An admin adds an observer as a voter, or removes a voter (kraft.version 1)."""
        leader = next(
            (n for n in self.nodes.values() if n.alive and n.client and n.client.is_leader()), None
        )
        if leader is not None and leader.client is not None:
            voters = leader.client.quorum.voters
            candidates = [n for n in self.nodes.values() if n.node_id not in voters.voter_ids]
            request: RaftRequest
            if candidates and (len(voters) <= 3 or self.rng.random() < 0.5):
                new = self.rng.choice(candidates)
                request = AddRaftVoterRequest(
                    "sim-cluster",
                    2000,
                    ReplicaKey(new.node_id, new.directory_id),
                    self._endpoints(new.node_id),
                )
            elif len(voters) > 1:
                key = self.rng.choice(sorted(voters.voter_keys, key=lambda k: k.id))
                request = RemoveRaftVoterRequest("sim-cluster", key)
            else:
                request = None  # type: ignore[assignment]
            if request is not None:
                cid = next(self._admin_correlation)
                self._admin_pending[cid] = request
                client = leader.client
                client.handle(InboundRequest(cid, request, (ADMIN_ID, 0)), self.now)
                self._poll(leader)
        self.at(
            self.now + self.rng.randint(1, 2 * self.faults.reconfigure_every_ms), self._reconfigure
        )

    def _admin_response(self, correlation_id: int, response: RaftResponse) -> None:
        self._admin_pending.pop(correlation_id, None)
        if getattr(response, "error", 1) == ErrorCode.NONE:
            self.stats["reconfigurations"] += 1

    # -- running -----------------------------------------------------------------------

    def run(self, duration_ms: int) -> None:
        for node in self.nodes.values():
            self.at(self.rng.randint(0, 50), lambda node=node: self._start(node))  # type: ignore[misc]
        faults = self.faults
        if faults.crash_every_ms:
            self.at(self.rng.randint(1, 2 * faults.crash_every_ms), self._crash)
        if faults.partition_every_ms:
            self.at(self.rng.randint(1, 2 * faults.partition_every_ms), self._partition)
        if faults.append_every_ms:
            self.at(100, self._append)
        if faults.resign_every_ms:
            self.at(self.rng.randint(1, 2 * faults.resign_every_ms), self._resign)
        if self.dynamic and faults.reconfigure_every_ms:
            self.at(self.rng.randint(1, 2 * faults.reconfigure_every_ms), self._reconfigure)
        checkpoint = 10_000
        while self._events:
            if self._events[0].at > duration_ms:
                break
            event = heapq.heappop(self._events)
            self.now = event.at
            event.action()
            if self.now >= checkpoint:
                checkpoint += 10_000
                self.checker.check_log_matching(self.now, self._readable())
        self.checker.check_log_matching(self.now, self._readable())

    def heal_and_settle(self, settle_ms: int) -> None:
        """Stop the faults, let the quorum converge, and require progress: a leader and
        every live replica caught up to its high watermark."""
        self.faults = Faults(
            drop=0,
            error=0,
            crash_every_ms=0,
            partition_every_ms=0,
            append_every_ms=0,
            resign_every_ms=0,
            reconfigure_every_ms=0,
            snapshot_every=self.faults.snapshot_every,
        )
        self.partition = None
        self._events = [e for e in self._events if e.action.__name__ in ("arrive", "<lambda>")]
        heapq.heapify(self._events)
        for node in self.nodes.values():
            if not node.alive:
                self._start(node)
        end = self.now + settle_ms
        while self._events:
            if self._events[0].at > end:
                break
            event = heapq.heappop(self._events)
            self.now = event.at
            event.action()
        self.checker.check_log_matching(self.now, self._readable())


_RESPONSE_API_KEYS: dict[type, int] = {
    VoteResponse: wire.VOTE,
    BeginQuorumEpochResponse: wire.BEGIN_QUORUM_EPOCH,
    EndQuorumEpochResponse: wire.END_QUORUM_EPOCH,
    FetchResponse: wire.FETCH,
    FetchSnapshotResponse: wire.FETCH_SNAPSHOT,
    DescribeQuorumResponse: wire.DESCRIBE_QUORUM,
    AddRaftVoterResponse: wire.ADD_RAFT_VOTER,
    RemoveRaftVoterResponse: wire.REMOVE_RAFT_VOTER,
    UpdateRaftVoterResponse: wire.UPDATE_RAFT_VOTER,
    ApiVersionsResponse: wire.API_VERSIONS,
}


def _through_the_wire(
    event: InboundRequest | InboundResponse,
) -> InboundRequest | InboundResponse:
    """``event``'s message encoded to Kafka's bytes at the latest version and decoded
    back, as a real network would deliver it."""
    if isinstance(event, InboundRequest):
        api_key, body = wire.request_to_wire(
            event.request, wire.LATEST_VERSIONS[wire.api_key_of(event.request)]
        )
        version = wire.LATEST_VERSIONS[api_key]
        schema = wire.SCHEMAS[api_key][0]
        decoded = schema.decode(schema.encode(body, version), version)
        return replace(event, request=wire.request_from_wire(api_key, version, decoded))
    api_key = _RESPONSE_API_KEYS[type(event.response)]
    version = wire.LATEST_VERSIONS[api_key]
    schema = wire.SCHEMAS[api_key][1]
    body = wire.response_to_wire(api_key, event.response, version, LISTENER)
    decoded = schema.decode(schema.encode(body, version), version)
    return replace(event, response=wire.response_from_wire(api_key, version, decoded, LISTENER))


def _epoch_at(log: RaftLog, offset: int) -> int | None:
    """The epoch of the batch holding ``offset``."""
    chunk = log.read(offset, 1)
    for batch in iter_batches(chunk, decode=False):
        if batch.base_offset <= offset <= batch.last_offset:
            return batch.epoch
    return None
