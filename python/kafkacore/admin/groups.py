# ruff: noqa: E501
"""Consumer groups over an admin client, as Kafka's ``ConsumerGroupCommand`` reads and
changes them: list, describe (members, and per partition the committed offset, the log
end offset and the lag: Kafka's ``PartitionAssignmentState``), committed and end offsets,
delete groups, delete offsets (OffsetDelete to the coordinator), and offset resets with
Kafka's clamping and table. ``kafkacore consumer-groups`` parses options and prints; the
console shows the same facts and texts.

Thread-safety: the functions block; any thread.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kafkacore.admin.client import (
    TIMEOUT,
    TP,
    Admin,
    AdminError,
    ConnectionClosed,
    ck_module,
    error_text,
    wait,
)
from kafkacore.admin.ordering import partition_set_order
from kafkacore.protocol import ErrorCode

__all__ = [
    "KAFKA_ERRORS",
    "GroupDescription",
    "GroupListing",
    "GroupMember",
    "GroupNode",
    "OffsetDeleteResult",
    "PartitionAssignmentState",
    "ResetSpec",
    "committed_offsets",
    "delete_groups",
    "delete_offsets",
    "describe_groups",
    "execute_reset",
    "kafka_error",
    "list_groups",
    "list_offsets",
    "partition_assignment_states",
    "reset_plan",
    "reset_table",
    "state_name",
    "topic_partitions",
]

# Kafka's exception text for the group errors a delete commonly meets.
KAFKA_ERRORS = {
    "GROUP_ID_NOT_FOUND": "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.",
    "NON_EMPTY_GROUP": "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.",
    "GROUP_SUBSCRIBED_TO_TOPIC": "The consumer group is actively subscribed to the topic.",
    "UNKNOWN_TOPIC_OR_PARTITION": "This server does not host this topic-partition.",
}


def state_name(state: Any) -> str:
    """A group state as Kafka's tool prints it (``PreparingRebalance``, ``Stable``...)."""
    name = str(getattr(state, "name", state))
    return {
        "PREPARING_REBALANCE": "PreparingRebalance",
        "COMPLETING_REBALANCE": "CompletingRebalance",
    }.get(name, name.title())


def kafka_error(exc: BaseException) -> str:
    """Kafka's exception text for a confluent-kafka error of a group operation."""
    err = exc.args[0] if exc.args else None
    name = str(getattr(err, "name", lambda: "")()) if callable(getattr(err, "name", None)) else ""
    return KAFKA_ERRORS.get(name, error_text(exc))


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    #: as Kafka's tool prints it (:func:`state_name`)
    state: str


@dataclass(frozen=True)
class GroupNode:
    """A broker as a group description names it (its coordinator)."""

    id: int
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port} ({self.id})"


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    client_id: str
    #: as Kafka's tool prints it: ``/`` and the address
    host: str
    #: the partitions assigned to it, sorted
    assignment: tuple[TP, ...]


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    #: as Kafka's tool prints it (:func:`state_name`)
    state: str
    assignor: str
    coordinator: GroupNode | None
    members: list[GroupMember]


@dataclass(frozen=True)
class PartitionAssignmentState:
    """Kafka's ``PartitionAssignmentState``: a partition the group has an offset for or is
    assigned, its committed ``offset`` (None: none), ``log_end_offset`` (the latest offset
    a read_uncommitted consumer sees, the high watermark; -1: unknown) and owner."""

    topic: str
    partition: int
    offset: int | None
    log_end_offset: int
    member: GroupMember | None

    @property
    def lag(self) -> int | None:
        if self.offset is None or self.log_end_offset < 0:
            return None
        return self.log_end_offset - self.offset


def list_groups(admin: Admin) -> list[GroupListing]:
    """The groups of every broker, by id; a broker's error (in ``result.errors``, not
    raised by confluent-kafka) fails the call like Kafka's ``listConsumerGroups``."""
    result = wait(admin.client.list_consumer_groups(request_timeout=TIMEOUT))
    errors = list(getattr(result, "errors", None) or [])
    if errors:
        raise AdminError("; ".join(error_text(e) for e in errors))
    return [
        GroupListing(g.group_id, state_name(g.state))
        for g in sorted(result.valid, key=lambda g: g.group_id)
    ]


def _description(group: str, desc: Any) -> GroupDescription:
    coord = desc.coordinator
    return GroupDescription(
        group,
        state_name(desc.state),
        desc.partition_assignor or "",
        GroupNode(coord.id, coord.host, coord.port) if coord is not None else None,
        [
            GroupMember(
                m.member_id,
                m.client_id,
                "/" + m.host.lstrip("/"),
                tuple(sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions))
                if m.assignment and m.assignment.topic_partitions
                else (),
            )
            for m in desc.members
        ],
    )


def describe_groups(admin: Admin, groups: list[str]) -> Iterator[GroupDescription]:
    """DescribeGroups of ``groups`` (one request), each description in order as it is
    waited for (:class:`~kafkacore.admin.client.AdminError` at the first that failed)."""
    futures = admin.client.describe_consumer_groups(groups, request_timeout=TIMEOUT)
    for group in groups:
        yield _description(group, wait(futures[group]))


def committed_offsets(admin: Admin, group: str) -> dict[TP, int]:
    """``group``'s committed offsets (OffsetFetch), those it has (>= 0)."""
    ConsumerGroupTopicPartitions = ck_module("confluent_kafka").ConsumerGroupTopicPartitions
    futures = admin.client.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=TIMEOUT
    )
    result = wait(futures[group])
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def list_offsets(
    admin: Admin,
    partitions: Iterable[TP],
    spec: Literal["earliest", "latest"] | int = "latest",
) -> dict[TP, int]:
    """ListOffsets of ``partitions``: the earliest, the latest (the high watermark) or the
    first at or after a timestamp (ms; -1 when none)."""
    ck = ck_module("confluent_kafka")
    OffsetSpec = ck_module("confluent_kafka.admin").OffsetSpec
    wanted = list(partitions)
    if not wanted:
        return {}
    if spec == "earliest":
        offset_spec = OffsetSpec.earliest()
    elif spec == "latest":
        offset_spec = OffsetSpec.latest()
    else:
        offset_spec = OffsetSpec.for_timestamp(spec)
    futures = admin.client.list_offsets(
        {ck.TopicPartition(t, p): offset_spec for t, p in wanted}, request_timeout=TIMEOUT
    )
    return {(tp.topic, tp.partition): int(wait(f).offset) for tp, f in futures.items()}


def partition_assignment_states(
    admin: Admin,
    description: GroupDescription,
    committed: Mapping[TP, int] | None = None,
) -> list[PartitionAssignmentState]:
    """Every partition the group has an offset for or is assigned, by topic and
    partition, with its offsets and owner (``committed``: the group's offsets, when
    already read)."""
    owner = {tp: m for m in description.members for tp in m.assignment}
    if committed is None:
        committed = committed_offsets(admin, description.group_id)
    keys = sorted(set(committed) | set(owner))
    ends = list_offsets(admin, keys)
    return [
        PartitionAssignmentState(tp[0], tp[1], committed.get(tp), ends.get(tp, -1), owner.get(tp))
        for tp in keys
    ]


def delete_groups(admin: Admin, groups: list[str]) -> dict[str, str]:
    """DeleteGroups of ``groups``; Kafka's error text of each that could not be deleted."""
    futures = admin.client.delete_consumer_groups(groups, request_timeout=TIMEOUT)
    failed: dict[str, str] = {}
    for group in groups:
        try:
            futures[group].result()
        except Exception as exc:  # confluent_kafka.KafkaException
            failed[group] = kafka_error(exc)
    return failed


def topic_partitions(admin: Admin, specs: list[str]) -> list[TP]:
    """The partitions of ``topic`` / ``topic:p,q`` specs (a topic alone: all its
    partitions); ``Topic 'x' does not exist`` for a topic the cluster lacks."""
    try:
        md = admin.client.list_topics(timeout=TIMEOUT)
    except Exception as exc:
        raise AdminError(error_text(exc)) from None
    out: list[TP] = []
    for spec in specs:
        name, _, parts = spec.partition(":")
        if name not in md.topics:
            raise AdminError(f"Topic '{name}' does not exist")
        ids = [int(p) for p in parts.split(",")] if parts else sorted(md.topics[name].partitions)
        out.extend((name, p) for p in ids)
    return out


@dataclass(frozen=True)
class OffsetDeleteResult:
    """OffsetDelete's answer: the request's error and each partition's."""

    error: ErrorCode
    partitions: dict[TP, ErrorCode]


def delete_offsets(admin: Admin, group: str, partitions: list[TP]) -> OffsetDeleteResult:
    """OffsetDelete (API 47) of ``group``'s offsets of ``partitions``, sent to the group's
    coordinator (confluent-kafka's AdminClient has no ``delete_consumer_group_offsets``)."""
    from kafkacore.protocol import APIS_BY_NAME

    description = next(describe_groups(admin, [group]))
    coord = description.coordinator
    assert coord is not None
    cls: Any = APIS_BY_NAME["OffsetDelete"].request.cls
    by_topic: dict[str, list[int]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(p)
    request = cls(
        group_id=group,
        topics=[
            cls.OffsetDeleteRequestTopic(
                name=name,
                partitions=[cls.OffsetDeleteRequestPartition(partition_index=p) for p in parts],
            )
            for name, parts in by_topic.items()
        ],
    )
    try:
        response = admin.send(coord.host, coord.port, "OffsetDelete", 0, request)
    except ConnectionClosed:
        raise AdminError("connection closed by the coordinator") from None
    except OSError as exc:
        raise AdminError(f"coordinator {coord.host}:{coord.port}: {exc}") from None
    return OffsetDeleteResult(
        ErrorCode(response.error_code),
        {
            (t.name, p.partition_index): ErrorCode(p.error_code)
            for t in response.topics
            for p in t.partitions
        },
    )


@dataclass(frozen=True)
class ResetSpec:
    """One of the tool's reset specifications: ``kind`` is ``to-earliest``, ``to-latest``,
    ``to-current``, ``to-offset`` (``value``: the offset), ``shift-by`` (``value``: the
    shift), ``to-datetime`` (``value``: epoch ms) or ``by-duration`` (``value``: ms)."""

    kind: str
    value: int = 0


def reset_plan(
    admin: Admin, group: str, topics: list[str] | None, spec: ResetSpec
) -> dict[TP, int]:
    """The new offsets a reset of ``group`` would commit: over ``topics`` (``topic`` or
    ``topic:p,q`` specs) or, when None, every partition the group has an offset for
    (``--all-topics``); each clamped to [earliest, latest], as Kafka's tool does."""
    committed = committed_offsets(admin, group)
    tps = sorted(committed) if topics is None else topic_partitions(admin, topics)
    earliest = list_offsets(admin, tps, "earliest")
    latest = list_offsets(admin, tps, "latest")
    by_time: dict[TP, int] = {}
    if spec.kind in ("to-datetime", "by-duration"):
        ts = spec.value if spec.kind == "to-datetime" else int(time.time() * 1000) - spec.value
        by_time = list_offsets(admin, tps, ts)
    targets: dict[TP, int] = {}
    for key in tps:
        lo, hi = earliest.get(key, 0), latest.get(key, 0)
        current = committed.get(key, lo)
        if spec.kind == "to-earliest":
            target = lo
        elif spec.kind == "to-latest":
            target = hi
        elif spec.kind == "to-current":
            target = current
        elif spec.kind == "to-offset":
            target = spec.value
        elif spec.kind == "shift-by":
            target = current + spec.value
        else:
            target = by_time.get(key, -1)
            target = hi if target < 0 else target
        targets[key] = min(max(target, lo), hi)
    return targets


def reset_table(group: str, targets: Mapping[TP, int]) -> str:
    """What the tool prints for a reset (dry run or executed), as Kafka's
    ``printOffsetsToReset``: each line starts with a line break, the group and topic
    columns are at least 15 wide, the partition column 10, the partitions in the order
    of Java's ``HashMap``; a line break at the end."""
    if not targets:
        return "\n"
    group_width = max(15, len(group))
    topic_width = max(15, *(len(t) for t, _ in targets))

    def line(*cells: object) -> str:
        g, t, p, o = (str(c) for c in cells)
        return f"\n{g.ljust(group_width)} {t.ljust(topic_width)} {p.ljust(10)} {o}"

    lines = [line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
    lines.extend(line(group, t, p, targets[(t, p)]) for t, p in partition_set_order(targets))
    return "".join(lines) + "\n"


def execute_reset(admin: Admin, group: str, targets: Mapping[TP, int]) -> None:
    """Commit ``targets`` for ``group`` (AlterConsumerGroupOffsets; the group must have
    no active members)."""
    ck = ck_module("confluent_kafka")
    offsets = [ck.TopicPartition(t, p, o) for (t, p), o in targets.items()]
    futures = admin.client.alter_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions(group, offsets)], request_timeout=TIMEOUT
    )
    wait(futures[group])
