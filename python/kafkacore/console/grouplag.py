"""Consumer groups as the console shows them: members (client id, host, assignment), and
per partition the committed offset, the log end offset, the high watermark, the lag in
records and the lag in time; resets and deletes with a dry run.

* **Lag in records** is Kafka's (``kafka-consumer-groups --describe``'s ``LAG``): the
  partition's latest offset for a read_uncommitted consumer (ListOffsets ``LATEST``, the
  high watermark) minus the committed offset; none ("-") without a committed offset.
* **Lag in time** is the age of the first record the group has not consumed: now minus
  the timestamp of the first data record at or after the committed offset (control
  records, the transaction markers, are skipped: a group whose only unconsumed records
  are markers has caught up). Inside the broker it is read from the partition's log
  (:meth:`Log.read` at the committed offset, the batch decoded in memory, bounded to
  :data:`PROBE_BYTES` per partition); outside it, or for a partition another broker
  leads, one consumer fetches the committed offsets of the lagging partitions (under
  ``budget_s``). A lag of 0 records is 0 ms.
* The log end offset shown next to the high watermark is the leader's own (inside the
  broker, for the partitions it hosts); elsewhere it is not known to a client and shown
  as the high watermark.
* **Reset** is the admin library's, as ``kafkacore consumer-groups`` runs it
  (:func:`kafkacore.admin.groups.reset_plan`: the same clamping to [earliest, latest]),
  with its table, so a dry run's text is ``kafka-consumer-groups --reset-offsets
  --dry-run``'s.

Thread-safety: every function here blocks (admin calls, log reads, a consumer); call
them through ``ctx.run_io``. The log reads take each log's own lock.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkacore.admin import Admin
from kafkacore.admin import groups as ops
from kafkacore.admin.client import ck_module
from kafkacore.admin.groups import GroupMember as Member
from kafkacore.admin.groups import ResetSpec
from kafkacore.log.files import TopicPartition

if TYPE_CHECKING:
    from kafkacore.console.broker_view import BrokerView

__all__ = [
    "PROBE_BYTES",
    "GroupState",
    "GroupSummary",
    "Member",
    "PartitionLag",
    "ResetSpec",
    "delete_group",
    "describe_group",
    "first_timestamp_in_log",
    "list_groups",
    "reset_offsets",
]

PROBE_BYTES = 256 * 1024
"""The most read from a log to find the first unconsumed record's timestamp."""


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    committed: int | None
    high_watermark: int
    log_end_offset: int
    lag: int | None
    #: the first unconsumed record's timestamp (epoch ms), when there is one
    first_unconsumed_ms: int | None
    lag_ms: int | None
    member: Member | None


@dataclass(frozen=True)
class GroupState:
    group_id: str
    state: str
    assignor: str
    coordinator: str
    members: list[Member]
    partitions: list[PartitionLag]
    #: where the lag in time came from: "log" (the broker's files), "fetch" (a consumer)
    time_source: str = "log"
    exists: bool = True
    #: ``Classic`` or ``Consumer`` (KIP-848), as Kafka's tool prints it
    type: str = "Classic"
    #: a consumer group's epochs (None for a classic group)
    group_epoch: int | None = None
    target_assignment_epoch: int | None = None

    @property
    def protocol(self) -> str:
        """The rebalance protocol its members speak: ``consumer`` (KIP-848, the
        broker assigns), ``classic`` (the leader assigns), or both while migrating."""
        if self.type != "Consumer":
            return "classic"
        kinds = {m.upgraded for m in self.members}
        return "consumer + classic" if kinds == {True, False} else "consumer"

    def reconciling(self, member: Member) -> bool:
        """A consumer group's member not yet at its target: the epoch or the
        partitions it owns differ from what the coordinator targets."""
        if member.target_assignment is None:
            return False
        return (
            member.member_epoch != self.target_assignment_epoch
            or member.assignment != member.target_assignment
        )

    @property
    def total_lag(self) -> int:
        return sum(p.lag for p in self.partitions if p.lag is not None)

    @property
    def max_lag_ms(self) -> int | None:
        values = [p.lag_ms for p in self.partitions if p.lag_ms is not None]
        return max(values) if values else None


@dataclass(frozen=True)
class GroupSummary:
    group_id: str
    state: str
    members: int
    total_lag: int | None = None
    topics: list[str] = field(default_factory=list)
    #: ``Classic`` or ``Consumer`` (KIP-848)
    type: str = "Classic"


def list_groups(admin: Admin, with_lag: int = 50) -> list[GroupSummary]:
    """Every consumer group with its state and member count; the total lag of the first
    ``with_lag`` groups (a ListOffsets per group)."""
    listed = ops.list_groups(admin)
    members: dict[str, int] = {}
    for g in listed:  # one at a time: a group deleted meanwhile is left at 0 members
        try:
            members[g.group_id] = len(next(ops.describe_groups(admin, [g.group_id])).members)
        except ops.GroupError:
            members[g.group_id] = 0
    out = []
    for i, g in enumerate(listed):
        total: int | None = None
        topics: list[str] = []
        if i < with_lag:
            committed = ops.committed_offsets(admin, g.group_id)
            ends = ops.list_offsets(admin, committed)
            total = sum(max(0, ends.get(tp, offset) - offset) for tp, offset in committed.items())
            topics = sorted({t for t, _ in committed})
        out.append(
            GroupSummary(g.group_id, g.state, members.get(g.group_id, 0), total, topics, g.type)
        )
    return out


def first_timestamp_in_log(log: Any, offset: int, upper_bound: int) -> int | None:
    """The timestamp of the first data record at or after ``offset`` and below
    ``upper_bound`` in ``log`` (a :class:`~kafkacore.log.Log`), reading at most
    :data:`PROBE_BYTES`; None when there is none in that range."""
    from kafkacore.record import batch_header, iter_batches, records

    position = offset
    read = 0
    while position < upper_bound and read < PROBE_BYTES:
        info = log.read(position, 64 * 1024, upper_bound, min_one_batch=True)
        if info.length == 0:
            return None
        data = info.read_bytes()
        read += len(data)
        last = position - 1
        for pos, magic, _size in iter_batches(data):
            if magic < 2:
                for r in records(data, pos):
                    if r.offset >= offset:
                        return int(r.timestamp)
                continue
            header = batch_header(data, pos)
            last = header.last_offset
            if last < offset or header.is_control:
                continue
            for r in records(data, pos):
                if r.offset >= offset:
                    return int(r.timestamp)
        if last < position:
            return None
        position = last + 1
    return None


def _timestamps_by_fetch(
    config: Mapping[str, str], wanted: dict[tuple[str, int], int], budget_s: float
) -> dict[tuple[str, int], int]:
    """One consumer (no group membership: ``assign``) reading one record at each
    ``(topic, partition) -> offset``; what it got within ``budget_s``."""
    if not wanted:
        return {}
    ck = ck_module("confluent_kafka")
    consumer = ck.Consumer(
        {
            **config,
            "group.id": f"__console-lag-probe-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
            "fetch.max.bytes": 1024 * 1024,
            "max.partition.fetch.bytes": 64 * 1024,
        }
    )
    found: dict[tuple[str, int], int] = {}
    try:
        consumer.assign([ck.TopicPartition(t, p, o) for (t, p), o in wanted.items()])
        deadline = time.monotonic() + budget_s
        while len(found) < len(wanted) and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None or msg.error() is not None:
                continue
            key = (msg.topic(), msg.partition())
            if key in wanted and key not in found:
                found[key] = int(msg.timestamp()[1])
                consumer.pause([ck.TopicPartition(key[0], key[1])])
    finally:
        consumer.close()
    return found


def describe_group(
    admin: Admin,
    group: str,
    *,
    broker: BrokerView | None = None,
    consumer_config: Mapping[str, str] | None = None,
    now_ms: int | None = None,
    budget_s: float = 5.0,
) -> GroupState:
    """``group``'s members and per-partition offsets and lags (see the module
    docstring); ``broker``: the in-process broker whose logs give the lag in time,
    ``consumer_config``: the consumer settings for the partitions it does not host."""
    from kafkacore.protocol import ErrorCode

    try:
        desc = next(ops.describe_groups(admin, [group]))
    except ops.GroupError as exc:
        if exc.code != ErrorCode.GROUP_ID_NOT_FOUND:
            raise
        return GroupState(group, "Dead", "", "-", [], [], exists=False)
    committed = ops.committed_offsets(admin, group)
    coordinator = str(desc.coordinator) if desc.coordinator is not None else "-"
    if desc.state in ("Dead", "Unknown") and not desc.members and not committed:
        return GroupState(group, desc.state, "", coordinator, [], [], exists=False)
    states = {
        (p.topic, p.partition): p for p in ops.partition_assignment_states(admin, desc, committed)
    }
    keys = list(states)
    ends = {key: p.log_end_offset for key, p in states.items()}
    owner = {key: p.member for key, p in states.items() if p.member is not None}
    now = int(time.time() * 1000) if now_ms is None else now_ms
    timestamps: dict[tuple[str, int], int] = {}
    leo: dict[tuple[str, int], int] = {}
    remote: dict[tuple[str, int], int] = {}
    for key in keys:
        offset = committed.get(key)
        hw = ends.get(key, -1)
        partition = broker.replica(TopicPartition(*key)) if broker is not None else None
        if partition is not None:
            leo[key] = partition.log.log_end_offset
        if offset is None or hw < 0 or offset >= hw:
            continue
        if partition is not None and partition.is_leader:
            ts = first_timestamp_in_log(partition.log, offset, hw)
            if ts is not None:
                timestamps[key] = ts
        else:
            remote[key] = offset
    source = "log"
    if remote and consumer_config is not None:
        timestamps.update(_timestamps_by_fetch(consumer_config, remote, budget_s))
        source = "fetch" if broker is None else "log+fetch"
    rows = []
    for key in keys:
        offset = committed.get(key)
        hw = ends.get(key, -1)
        lag = hw - offset if offset is not None and hw >= 0 else None
        ts = timestamps.get(key)
        lag_ms: int | None
        if lag == 0:
            lag_ms = 0
        elif ts is not None:
            lag_ms = max(0, now - ts)
        else:
            lag_ms = None
        rows.append(
            PartitionLag(
                key[0], key[1], offset, hw, leo.get(key, hw), lag, ts, lag_ms, owner.get(key)
            )
        )
    return GroupState(
        group,
        desc.state,
        desc.assignor,
        coordinator,
        desc.members,
        rows,
        time_source=source,
        type=desc.type,
        group_epoch=desc.group_epoch,
        target_assignment_epoch=desc.target_assignment_epoch,
    )


def reset_offsets(
    admin: Admin, group: str, topics: list[str] | None, spec: ResetSpec, *, execute: bool
) -> str:
    """Plan (and with ``execute`` commit) a reset of ``group``'s offsets; the text
    ``kafka-consumer-groups --reset-offsets`` prints (``--dry-run`` or ``--execute``).
    ``topics``: ``topic`` / ``topic:p,q`` specs, or None for all the group's topics."""
    targets = ops.reset_plan(admin, group, topics, spec)
    if execute:
        ops.execute_reset(admin, group, targets)
    return ops.reset_table(group, targets)


def delete_group(admin: Admin, group: str, *, execute: bool) -> tuple[bool, str]:
    """Delete ``group`` (DeleteGroups; it must have no members). A dry run says what
    would go: its state, members and committed offsets. ``(ok, message)``, the message
    as ``kafka-consumer-groups --delete`` words it."""
    if not execute:
        desc = next(ops.describe_groups(admin, [group]))
        committed = ops.committed_offsets(admin, group)
        if desc.members:
            return False, (
                f"Group '{group}' could not be deleted: it has {len(desc.members)} active "
                f"member(s) ({desc.state}); Kafka answers NON_EMPTY_GROUP."
            )
        return True, (
            f"Dry run: deleting group '{group}' ({desc.state}) would remove its "
            f"{len(committed)} committed offset(s)."
        )
    failed = ops.delete_groups(admin, [group])
    if group in failed:
        return False, f"* Group '{group}' could not be deleted due to: {failed[group]}"
    return True, f"Deletion of requested consumer groups ('{group}') was successful."
