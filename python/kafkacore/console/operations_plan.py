"""Cluster operations for the console: partition reassignment (plan, execute with a
throttle, progress per replica, cancel), preferred leader election now or at a given
time, and a broker decommission plan.

Everything that talks to the cluster is the admin library's (:mod:`kafkacore.admin`), the
same operations ``kafkacore reassign-partitions`` and ``kafkacore leader-election`` print:
the same requests to the controller (ListPartitionReassignments,
AlterPartitionReassignments, ElectLeaders), the same throttle configs as Kafka's tool
(``leader/follower.replication.throttled.replicas`` on the topics,
``leader/follower.replication.throttled.rate`` on the brokers) and the same texts.

* **Plan**: Kafka's ``--generate`` over the chosen brokers
  (:func:`kafkacore.admin.reassign.generate_assignment`).
* **Decommission** (:func:`decommission_plan`): every replica on the broker replaced by
  the broker, not already a replica of the partition, that holds the fewest replicas so
  far (a broker of the same rack first, when racks are set); the replacement takes the
  leaving broker's place in the list, so preferred leadership moves with it.
* **Progress** (:func:`progress`): per moving partition, per replica, its bytes on disk
  (DescribeLogDirs of each broker) against the leader's, and inside the broker that
  leads it, the follower's log end offset (from its fetches) against the leader's.
* **Scheduled elections** (:class:`ElectionScheduler`): timers in the console process
  (they do not survive it), listed with their outcome, cancellable.

Thread-safety: the module functions block (run them through ``ctx.run_io``); an
:class:`ElectionScheduler` belongs to the event loop that created it.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkacore.admin import TP, Admin
from kafkacore.admin.cluster import current_assignment, metadata, nodes
from kafkacore.admin.elections import ElectionType, elect_leaders, election_lines
from kafkacore.admin.reassign import (
    cancel_reassignments,
    cancelled_text,
    execute_assignment,
    list_reassignments,
)
from kafkacore.admin.throttles import clear_all_throttles
from kafkacore.log.files import TopicPartition

if TYPE_CHECKING:
    from kafkacore.console.broker_view import BrokerView

__all__ = [
    "ElectionScheduler",
    "ReplicaProgress",
    "ScheduledElection",
    "cancel",
    "clear_throttles",
    "decommission_plan",
    "elect_preferred",
    "execute",
    "parse_partitions",
    "progress",
]


def decommission_plan(admin: Admin, broker_id: int) -> dict[TP, list[int]]:
    """A reassignment moving every replica off ``broker_id`` (see the module docstring);
    only the partitions that have a replica there. ``ValueError`` when no other broker
    can take one of them."""
    by_id = {n.id: n for n in nodes(admin)}
    if broker_id not in by_id:
        raise ValueError(f"Unknown broker id {broker_id}")
    current = current_assignment(admin)
    others = [b for b in sorted(by_id) if b != broker_id]
    load = {b: 0 for b in others}
    for replicas in current.values():
        for b in replicas:
            if b in load:
                load[b] += 1
    rack = getattr(by_id[broker_id], "rack", None)
    plan: dict[TP, list[int]] = {}
    for tp in sorted(current):
        replicas = current[tp]
        if broker_id not in replicas:
            continue
        free = [b for b in others if b not in replicas]
        if not free:
            raise ValueError(
                f"{tp[0]}-{tp[1]} has a replica on every other broker: nowhere to move it"
            )
        same_rack = [
            b for b in free if rack is not None and getattr(by_id[b], "rack", None) == rack
        ]
        target = min(same_rack or free, key=lambda b: (load[b], b))
        load[target] += 1
        plan[tp] = [target if b == broker_id else b for b in replicas]
    return plan


def execute(admin: Admin, proposed: Mapping[TP, list[int]], throttle: int = -1) -> list[str]:
    """Start the reassignment ``proposed`` (in addition to any going on), with the
    replication throttle ``throttle`` B/s on the moving replicas first when >= 0; the
    lines ``kafka-reassign-partitions --execute`` prints (the rollback JSON included)."""
    lines: list[str] = []
    execute_assignment(
        admin, list(proposed.items()), additional=True, throttle=throttle, emit=lines.append
    )
    return lines


def cancel(admin: Admin, partitions: Iterable[TP] | None = None) -> list[str]:
    """Cancel the ongoing reassignments of ``partitions`` (all when None)."""
    ongoing = list_reassignments(admin, None if partitions is None else list(partitions))
    return [cancelled_text(cancel_reassignments(admin, ongoing))]


def clear_throttles(admin: Admin, partitions: Iterable[TP]) -> list[str]:
    """Remove the replication throttles (as ``--verify`` does once nothing moves)."""
    lines: list[str] = []
    clear_all_throttles(admin, [(tp, []) for tp in partitions], lines.append)
    return lines


@dataclass(frozen=True)
class ReplicaProgress:
    topic: str
    partition: int
    replica: int
    #: "leader", "in sync", "adding" or "removing"
    role: str
    size: int | None
    leader_size: int | None
    log_end_offset: int | None
    leader_log_end_offset: int | None

    @property
    def bytes_behind(self) -> int | None:
        if self.size is None or self.leader_size is None:
            return None
        return max(0, self.leader_size - self.size)

    @property
    def percent(self) -> float | None:
        if self.log_end_offset is not None and self.leader_log_end_offset:
            return min(100.0, 100.0 * max(0, self.log_end_offset) / self.leader_log_end_offset)
        if self.size is not None and self.leader_size:
            return min(100.0, 100.0 * self.size / self.leader_size)
        if self.leader_size == 0 or self.leader_log_end_offset == 0:
            return 100.0
        return None


def replica_sizes(log_dirs: Mapping[int, Any]) -> dict[tuple[str, int, int], int]:
    """``(topic, partition, broker) -> bytes`` from each broker's DescribeLogDirs answer
    (answers that are exceptions are skipped; a future replica is not counted)."""
    sizes: dict[tuple[str, int, int], int] = {}
    for broker, answer in log_dirs.items():
        if isinstance(answer, BaseException):
            continue
        for result in answer.results:
            for topic in result.topics:
                for p in topic.partitions:
                    if not p.is_future_key:
                        sizes[(topic.name, p.partition_index, broker)] = int(p.partition_size)
    return sizes


def progress(
    admin: Admin, log_dirs: Mapping[int, Any], broker: BrokerView | None = None
) -> list[ReplicaProgress]:
    """Every replica of every partition being reassigned, with its progress."""
    ongoing = list_reassignments(admin)
    if not ongoing:
        return []
    md = metadata(admin)
    sizes = replica_sizes(log_dirs)
    rows = []
    for (topic, p), reassignment in sorted(ongoing.items()):
        replicas, adding, removing = (
            reassignment.replicas,
            reassignment.adding,
            reassignment.removing,
        )
        t = md.topics.get(topic)
        info = t.partitions.get(p) if t is not None else None
        leader = info.leader if info is not None else -1
        isr = set(info.isrs) if info is not None else set()
        local = broker.replica(TopicPartition(topic, p)) if broker is not None else None
        leader_leo = local.log.log_end_offset if local is not None and local.is_leader else None
        for r in replicas:
            role = (
                "leader"
                if r == leader
                else "adding"
                if r in adding
                else "removing"
                if r in removing
                else "in sync"
                if r in isr
                else "out of sync"
            )
            leo: int | None = None
            if leader_leo is not None and local is not None:
                if r == leader:
                    leo = leader_leo
                else:
                    state = local.follower_state(r)
                    leo = state.log_end_offset if state is not None else None
            rows.append(
                ReplicaProgress(
                    topic,
                    p,
                    r,
                    role,
                    sizes.get((topic, p, r)),
                    sizes.get((topic, p, leader)),
                    leo,
                    leader_leo,
                )
            )
    return rows


@dataclass
class ScheduledElection:
    id: int
    at: float  # epoch seconds
    partitions: list[TP] | None  # None: every partition
    user: str | None
    status: str = "scheduled"  # scheduled, running, done, failed, cancelled
    result: str = ""
    handle: asyncio.TimerHandle | None = field(default=None, repr=False)
    run: Callable[[], Awaitable[str]] | None = field(default=None, repr=False)

    @property
    def target(self) -> str:
        if self.partitions is None:
            return "all partitions"
        return ", ".join(f"{t}-{p}" for t, p in self.partitions)


class ElectionScheduler:
    """Preferred leader elections run at a given time (CMAK's scheduled election): each
    a timer on the event loop that awaits its ``run()`` (which returns the result's text;
    it holds the client of the user who scheduled it) when it fires. Kept in memory: a
    restart of the console forgets them."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._elections: dict[int, ScheduledElection] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def schedule(
        self,
        at: float,
        partitions: list[TP] | None,
        user: str | None,
        run: Callable[[], Awaitable[str]],
    ) -> ScheduledElection:
        loop = asyncio.get_running_loop()
        election = ScheduledElection(next(self._ids), at, partitions, user, run=run)
        delay = max(0.0, at - time.time())
        election.handle = loop.call_later(delay, self._fire, election)
        self._elections[election.id] = election
        return election

    def _fire(self, election: ScheduledElection) -> None:
        election.status = "running"
        election.handle = None
        task = asyncio.get_running_loop().create_task(self._execute(election))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _execute(self, election: ScheduledElection) -> None:
        try:
            assert election.run is not None
            election.result = await election.run()
            election.status = "done"
        except Exception as exc:
            election.result = str(exc)
            election.status = "failed"

    def cancel(self, election_id: int) -> bool:
        election = self._elections.get(election_id)
        if election is None or election.status != "scheduled":
            return False
        if election.handle is not None:
            election.handle.cancel()
        election.status = "cancelled"
        return True

    def list(self) -> list[ScheduledElection]:
        return sorted(self._elections.values(), key=lambda e: (e.at, e.id))

    def close(self) -> None:
        for election in self._elections.values():
            if election.handle is not None:
                election.handle.cancel()
        for task in self._tasks:
            task.cancel()


def elect_preferred(admin: Admin, partitions: list[TP] | None) -> str:
    """A preferred leader election now (ElectLeaders to the controller); the text
    ``kafka-leader-election --election-type PREFERRED`` prints."""
    lines = election_lines(
        ElectionType.PREFERRED, elect_leaders(admin, ElectionType.PREFERRED, partitions)
    )
    return "\n".join(lines) or "No partition to elect."


def parse_partitions(text: str) -> list[TP] | None:
    """``topic-0, topic-1`` or ``topic:0,1`` lists; empty or ``*``: None (all)."""
    text = text.strip()
    if text in ("", "*"):
        return None
    out: list[TP] = []
    for item in text.replace("\n", ";").split(";"):
        item = item.strip()
        if not item:
            continue
        if ":" in item:
            topic, _, parts = item.partition(":")
            out.extend((topic.strip(), int(p)) for p in parts.split(",") if p.strip())
            continue
        for spec in item.split(","):
            spec = spec.strip()
            topic, _, p = spec.rpartition("-")
            if not topic or not p.isdigit():
                raise ValueError(f"Not a partition: {spec!r} (topic-N)")
            out.append((topic, int(p)))
    return out
