"""Cluster operations for the console: partition reassignment (plan, execute with a
throttle, progress per replica, cancel), preferred leader election now or at a given
time, and a broker decommission plan.

Everything that talks to the cluster reuses ``kafkacore reassign-partitions`` and
``kafkacore leader-election`` (:mod:`kafkacore.cli.reassign`,
:mod:`kafkacore.cli.leader_election`): the same requests to the controller
(ListPartitionReassignments, AlterPartitionReassignments, ElectLeaders), the same
throttle configs as Kafka's tool (``leader/follower.replication.throttled.replicas`` on
the topics, ``leader/follower.replication.throttled.rate`` on the brokers).

* **Plan** (:func:`propose`): Kafka's ``--generate`` over the chosen brokers.
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

from kafkacore.cli.reassign import (
    TP,
    _assignment,
    _check_reassignment,
    _metadata,
    _move_map,
    _nodes,
    alter_reassignments,
    clear_all_throttles,
    format_reassignment_json,
    list_reassignments,
    parse_reassignment,
    propose,
    set_throttles,
)

if TYPE_CHECKING:
    from kafkacore.server.broker import KafkaServer

__all__ = [
    "TP",
    "ElectionScheduler",
    "ReplicaProgress",
    "ScheduledElection",
    "cancel",
    "clear_throttles",
    "current_assignment",
    "decommission_plan",
    "elect_preferred",
    "election_text",
    "execute",
    "format_reassignment_json",
    "list_reassignments",
    "parse_partitions",
    "parse_reassignment",
    "progress",
    "propose",
]


def current_assignment(admin: Any, topics: Iterable[str] | None = None) -> dict[TP, list[int]]:
    """The replicas of every partition of ``topics`` (all topics when None)."""
    md = _metadata(admin)
    names = list(md.topics) if topics is None else list(topics)
    return _assignment(md, names)


def decommission_plan(admin: Any, broker_id: int) -> dict[TP, list[int]]:
    """A reassignment moving every replica off ``broker_id`` (see the module docstring);
    only the partitions that have a replica there. ``ValueError`` when no other broker
    can take one of them."""
    nodes = {n.id: n for n in _nodes(admin)}
    if broker_id not in nodes:
        raise ValueError(f"Unknown broker id {broker_id}")
    current = current_assignment(admin)
    others = [b for b in sorted(nodes) if b != broker_id]
    load = {b: 0 for b in others}
    for replicas in current.values():
        for b in replicas:
            if b in load:
                load[b] += 1
    rack = getattr(nodes[broker_id], "rack", None)
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
            b for b in free if rack is not None and getattr(nodes[b], "rack", None) == rack
        ]
        target = min(same_rack or free, key=lambda b: (load[b], b))
        load[target] += 1
        plan[tp] = [target if b == broker_id else b for b in replicas]
    return plan


def execute(admin: Any, proposed: Mapping[TP, list[int]], throttle: int = -1) -> list[str]:
    """Start the reassignment ``proposed`` (AlterPartitionReassignments), with the
    replication throttle ``throttle`` B/s on the moving replicas first when >= 0; the
    lines ``kafka-reassign-partitions --execute`` prints (the rollback JSON included).
    ``ValueError`` with the tool's text when the controller refused a partition."""
    plan = _check_reassignment(list(proposed.items()))
    current_all = current_assignment(admin, dict.fromkeys(t for t, _ in plan))
    missing = [tp for tp in plan if tp not in current_all]
    if missing:
        raise ValueError(
            "Unable to find partition: " + ", ".join(f"{t}-{p}" for t, p in sorted(missing))
        )
    current = {tp: current_all[tp] for tp in plan}
    lines = [
        "Current partition replica assignment",
        "",
        format_reassignment_json(current),
        "",
        "Save this to use as the --reassignment-json-file option during rollback",
    ]
    if throttle >= 0:
        moves = _move_map(list_reassignments(admin), plan, current)
        lines.append(set_throttles(admin, moves, throttle))
    errors = alter_reassignments(admin, dict(plan))
    if errors:
        raise ValueError(
            "Error reassigning partition(s):\n"
            + "\n".join(f"{t}-{p}: {errors[(t, p)]}" for t, p in sorted(errors))
        )
    done = sorted(plan)
    lines.append(
        "Successfully started partition reassignment"
        + ("" if len(done) == 1 else "s")
        + " for "
        + ",".join(f"{t}-{p}" for t, p in done)
    )
    return lines


def cancel(admin: Any, partitions: Iterable[TP] | None = None) -> list[str]:
    """Cancel the ongoing reassignments of ``partitions`` (all when None)."""
    ongoing = list_reassignments(admin, None if partitions is None else list(partitions))
    if not ongoing:
        return ["None of the specified partition reassignments are active."]
    errors = alter_reassignments(admin, dict.fromkeys(ongoing))
    if errors:
        raise ValueError(
            "Error cancelling partition reassignment(s) for:\n"
            + "\n".join(f"{t}-{p}: {errors[(t, p)]}" for t, p in sorted(errors))
        )
    names = ",".join(f"{t}-{p}" for t, p in sorted(ongoing))
    return [
        f"Successfully cancelled partition reassignment{'' if len(ongoing) == 1 else 's'} "
        f"for: {names}"
    ]


def clear_throttles(admin: Any, partitions: Iterable[TP]) -> list[str]:
    """Remove the replication throttles (as ``--verify`` does once nothing moves)."""
    targets: list[tuple[TP, list[int]]] = [(tp, []) for tp in partitions]
    lines: list[str] = []
    clear_all_throttles(admin, targets, lines.append)
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
    admin: Any, log_dirs: Mapping[int, Any], broker: KafkaServer | None = None
) -> list[ReplicaProgress]:
    """Every replica of every partition being reassigned, with its progress."""
    ongoing = list_reassignments(admin)
    if not ongoing:
        return []
    md = _metadata(admin)
    sizes = replica_sizes(log_dirs)
    rows = []
    for (topic, p), (replicas, adding, removing) in sorted(ongoing.items()):
        t = md.topics.get(topic)
        info = t.partitions.get(p) if t is not None else None
        leader = info.leader if info is not None else -1
        isr = set(info.isrs) if info is not None else set()
        local = (
            broker.replicas.partition(topic, p) if broker is not None and broker.replicas else None
        )
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


def election_text(succeeded: list[TP], noop: list[TP], failed: Mapping[TP, str]) -> str:
    """What ``kafka-leader-election --election-type PREFERRED`` prints for an outcome."""
    from kafkacore.cli.reassign import _java_tp_hash, java_set_order

    lines = []
    if succeeded:
        lines.append(
            "Successfully completed leader election (PREFERRED) for partitions "
            + ", ".join(f"{t}-{p}" for t, p in java_set_order(succeeded, _java_tp_hash))
        )
    if noop:
        lines.append(
            "Valid replica already elected for partitions "
            + ", ".join(f"{t}-{p}" for t, p in java_set_order(noop, _java_tp_hash))
        )
    for tp in java_set_order(failed, _java_tp_hash):
        lines.append(
            f"Error completing leader election (PREFERRED) for partition: {tp[0]}-{tp[1]}: "
            f"{failed[tp]}"
        )
    return "\n".join(lines) or "No partition to elect."


def elect_preferred(admin: Any, partitions: list[TP] | None) -> str:
    """A preferred leader election now (ElectLeaders to the controller); its text."""
    from kafkacore.cli.leader_election import elect_leaders

    return election_text(*elect_leaders(admin, 0, partitions))


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
