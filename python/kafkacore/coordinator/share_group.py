"""A KIP-932 share group's membership, as Kafka 4.3.1's ``ShareGroup``,
``ShareGroupMember``, ``ShareGroupAssignmentBuilder`` and ``SimpleAssignor`` keep and
compute it, and the ``__consumer_offsets`` records that persist it (record types 10-15,
written as ``GroupCoordinatorRecordHelpers`` writes them).

Share groups are the KIP-848 family's simplest member: the same group epoch, metadata hash
(:func:`~kafkacore.coordinator.consumer_group.topic_hash`), target assignment and member
epochs as a consumer group (:mod:`kafkacore.coordinator.consumer_group`), but no
revocation: a member takes its target assignment at once, and one partition may be
assigned to several members (the ``simple`` assignor shares partitions when there are
more members than partitions). A share group also tracks which of its subscribed
partitions have share state at the share coordinator (``ShareGroupStatePartitionMetadata``):
only initialized partitions are assigned.

The hard state changes only by :meth:`ShareGroup.replay` of those records (a heartbeat's
records are appended, then replayed; a load replays the same records).

Not thread-safe: the coordinator uses a group on the event loop only.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping, Set
from dataclasses import dataclass, field, replace
from typing import Any

from kafkacore._java import JavaHashMap, JavaHashSet
from kafkacore.coordinator import records as recs
from kafkacore.coordinator.consumer_group import MemberState, Record, TopicImage

__all__ = [
    "SHARE_GROUP_RECORD_TYPES",
    "InitMap",
    "ShareGroup",
    "ShareGroupMember",
    "ShareGroupState",
    "StatePartitionMetadata",
    "current_assignment_record",
    "current_assignment_tombstone",
    "group_epoch_record",
    "group_tombstones",
    "member_subscription_record",
    "member_subscription_tombstone",
    "simple_assignment",
    "state_partition_metadata_record",
    "target_assignment_metadata_record",
    "target_assignment_record",
    "target_assignment_tombstone",
]

SHARE_GROUP_MEMBER_METADATA = 10
SHARE_GROUP_METADATA = 11
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = 13
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 14
SHARE_GROUP_STATE_PARTITION_METADATA = 15
SHARE_GROUP_RECORD_TYPES = frozenset(range(10, 16))

Assignment = Mapping[uuid.UUID, Set[int]]


class ShareGroupState(str, enum.Enum):
    """Kafka's ``ShareGroup.ShareGroupState``; the value is its ``toString``."""

    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ShareGroupMember:
    """Kafka's ``ShareGroupMember``: subscription (``ShareGroupMemberMetadata``) and
    assignment (``ShareGroupCurrentMemberAssignment``). Immutable."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    assigned: Assignment = field(default_factory=dict)

    def same_subscription_record(self, other: ShareGroupMember) -> bool:
        return (self.rack_id, self.client_id, self.client_host, self.subscribed_topic_names) == (
            other.rack_id,
            other.client_id,
            other.client_host,
            other.subscribed_topic_names,
        )

    def same_as(self, other: ShareGroupMember) -> bool:
        return self == other and _sets(self.assigned) == _sets(other.assigned)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch


def _sets(a: Assignment) -> dict[uuid.UUID, frozenset[int]]:
    return {t: frozenset(ps) for t, ps in a.items() if ps}


@dataclass
class InitMap:
    """``ShareGroup.InitMapValue`` by topic id: a topic's name, partitions and the time
    they were (being) initialized."""

    name: str
    partitions: set[int]
    timestamp: int


@dataclass
class StatePartitionMetadata:
    """``ShareGroupStatePartitionMetadataInfo``: the share partitions whose state is being
    initialized, those initialized, and the topics whose state is being deleted."""

    initializing: dict[uuid.UUID, InitMap] = field(default_factory=dict)
    initialized: dict[uuid.UUID, InitMap] = field(default_factory=dict)
    deleting: dict[uuid.UUID, str] = field(default_factory=dict)


class ShareGroup:
    """Kafka's ``ShareGroup``: members, epochs, target assignment, subscription counts,
    the state-partition metadata; and the group's share-state bookkeeping."""

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 1  # ModernGroup starts at 1: a new group's first epoch is 2
        self.assignment_epoch = -1
        self.assignment_timestamp = 0
        self.metadata_hash = 0
        self.members: JavaHashMap[str, ShareGroupMember] = JavaHashMap()
        self.target: JavaHashMap[str, Assignment] = JavaHashMap()
        self.state_metadata: StatePartitionMetadata | None = None
        self.deleted = False
        self.metadata_refresh_deadline = 0

    # -- reading -----------------------------------------------------------------------

    @property
    def state(self) -> ShareGroupState:
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def is_empty(self) -> bool:
        return not self.members

    def member(self, member_id: str) -> ShareGroupMember | None:
        return self.members.get(member_id)

    def target_assignment_of(self, member_id: str) -> Assignment:
        return self.target.get(member_id, {})

    def subscribed_topic_names(
        self, old: ShareGroupMember | None = None, new: ShareGroupMember | None = None
    ) -> dict[str, int]:
        """``computeSubscribedTopicNames``: how many members subscribe to each topic,
        with ``old`` replaced by ``new``."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            for name in m.subscribed_topic_names:
                counts[name] = counts.get(name, 0) + 1
        if old is not None:
            for name in old.subscribed_topic_names:
                counts[name] -= 1
                if counts[name] == 0:
                    del counts[name]
        if new is not None:
            for name in new.subscribed_topic_names:
                counts[name] = counts.get(name, 0) + 1
        return counts

    def initialized(self) -> dict[uuid.UUID, set[int]]:
        if self.state_metadata is None:
            return {}
        return {t: set(v.partitions) for t, v in self.state_metadata.initialized.items()}

    # -- replay ------------------------------------------------------------------------

    def replay(
        self, record_type: int, key: Mapping[str, Any], value: Mapping[str, Any] | None
    ) -> None:
        """Apply one record of this group (types 10-15)."""
        if record_type == SHARE_GROUP_METADATA:
            if value is None:
                self.deleted = True
            else:
                self.deleted = False
                self.group_epoch = value["epoch"]
                self.metadata_hash = value["metadataHash"]
        elif record_type == SHARE_GROUP_MEMBER_METADATA:
            member_id = key["memberId"]
            if value is None:
                self.members.pop(member_id, None)
                return
            known = self.members.get(member_id)
            self.members[member_id] = replace(
                known or ShareGroupMember(member_id),
                rack_id=value["rackId"],
                client_id=value["clientId"],
                client_host=value["clientHost"],
                subscribed_topic_names=frozenset(value["subscribedTopicNames"]),
            )
        elif record_type == SHARE_GROUP_TARGET_ASSIGNMENT_METADATA:
            if value is None:
                self.assignment_epoch, self.assignment_timestamp = -1, 0
            else:
                self.assignment_epoch = value["assignmentEpoch"]
                self.assignment_timestamp = value["assignmentTimestamp"]
        elif record_type == SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
            member_id = key["memberId"]
            if value is None:
                self.target.pop(member_id, None)
                return
            assignment: JavaHashMap[uuid.UUID, Set[int]] = JavaHashMap()
            for tp in value["topicPartitions"]:
                assignment[tp["topicId"]] = JavaHashSet(tp["partitions"])
            self.target[member_id] = assignment
        elif record_type == SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            member_id = key["memberId"]
            old = self.members.get(member_id)
            if value is None:
                if old is not None:
                    self.members[member_id] = replace(
                        old, member_epoch=-1, previous_member_epoch=-1, assigned={}
                    )
                return
            base = old or ShareGroupMember(member_id)
            assigned: JavaHashMap[uuid.UUID, Set[int]] = JavaHashMap()
            for tp in value["assignedPartitions"]:
                assigned[tp["topicId"]] = JavaHashSet(tp["partitions"])
            self.members[member_id] = replace(
                base,
                member_epoch=value["memberEpoch"],
                previous_member_epoch=value["previousMemberEpoch"],
                state=_member_state(value["state"]),
                assigned=assigned,
            )
        elif record_type == SHARE_GROUP_STATE_PARTITION_METADATA:
            if value is None:
                self.state_metadata = None
                return
            self.state_metadata = StatePartitionMetadata(
                initializing={
                    t["topicId"]: InitMap(t["topicName"], set(t["partitions"]), -1)
                    for t in value["initializingTopics"]
                },
                initialized={
                    t["topicId"]: InitMap(t["topicName"], set(t["partitions"]), -1)
                    for t in value["initializedTopics"]
                },
                deleting={t["topicId"]: t["topicName"] for t in value["deletingTopics"]},
            )


def _member_state(value: int) -> MemberState:
    try:
        return MemberState(value)
    except ValueError:
        return MemberState.UNKNOWN


# --- records (GroupCoordinatorRecordHelpers) ------------------------------------------


def _record(record_type: int, key: dict[str, Any], value: dict[str, Any] | None) -> Record:
    return recs.encode_record(record_type, key, 0, value)


def _topic_partitions(assignment: Assignment) -> list[dict[str, Any]]:
    return [
        {"topicId": topic_id, "partitions": list(partitions)}
        for topic_id, partitions in assignment.items()
    ]


def member_subscription_record(group_id: str, m: ShareGroupMember) -> Record:
    return _record(
        SHARE_GROUP_MEMBER_METADATA,
        {"groupId": group_id, "memberId": m.member_id},
        {
            "rackId": m.rack_id,
            "clientId": m.client_id,
            "clientHost": m.client_host,
            "subscribedTopicNames": sorted(m.subscribed_topic_names),
        },
    )


def member_subscription_tombstone(group_id: str, member_id: str) -> Record:
    return _record(SHARE_GROUP_MEMBER_METADATA, {"groupId": group_id, "memberId": member_id}, None)


def group_epoch_record(group_id: str, epoch: int, metadata_hash: int) -> Record:
    return _record(
        SHARE_GROUP_METADATA, {"groupId": group_id}, {"epoch": epoch, "metadataHash": metadata_hash}
    )


def target_assignment_record(group_id: str, member_id: str, assignment: Assignment) -> Record:
    return _record(
        SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
        {"groupId": group_id, "memberId": member_id},
        {"topicPartitions": _topic_partitions(assignment)},
    )


def target_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return _record(
        SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, {"groupId": group_id, "memberId": member_id}, None
    )


def target_assignment_metadata_record(group_id: str, epoch: int, timestamp: int) -> Record:
    return _record(
        SHARE_GROUP_TARGET_ASSIGNMENT_METADATA,
        {"groupId": group_id},
        {"assignmentEpoch": epoch, "assignmentTimestamp": timestamp},
    )


def current_assignment_record(group_id: str, m: ShareGroupMember) -> Record:
    return _record(
        SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT,
        {"groupId": group_id, "memberId": m.member_id},
        {
            "memberEpoch": m.member_epoch,
            "previousMemberEpoch": m.previous_member_epoch,
            "state": int(m.state),
            "assignedPartitions": _topic_partitions(m.assigned),
        },
    )


def current_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return _record(
        SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, {"groupId": group_id, "memberId": member_id}, None
    )


def state_partition_metadata_record(group_id: str, meta: StatePartitionMetadata) -> Record:
    def infos(m: Mapping[uuid.UUID, InitMap]) -> list[dict[str, Any]]:
        return [
            {"topicId": t, "topicName": v.name, "partitions": sorted(v.partitions)}
            for t, v in m.items()
        ]

    return _record(
        SHARE_GROUP_STATE_PARTITION_METADATA,
        {"groupId": group_id},
        {
            "initializingTopics": infos(meta.initializing),
            "initializedTopics": infos(meta.initialized),
            "deletingTopics": [{"topicId": t, "topicName": n} for t, n in meta.deleting.items()],
        },
    )


def group_tombstones(group: ShareGroup) -> list[Record]:
    """``ShareGroup.createGroupTombstoneRecords``: every member's records, the target
    assignment's metadata, the state-partition metadata and the group epoch."""
    out: list[Record] = []
    for member_id in group.members:
        out.append(current_assignment_tombstone(group.group_id, member_id))
    for member_id in group.target:
        out.append(target_assignment_tombstone(group.group_id, member_id))
    out.append(_record(SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, {"groupId": group.group_id}, None))
    for member_id in group.members:
        out.append(member_subscription_tombstone(group.group_id, member_id))
    out.append(_record(SHARE_GROUP_STATE_PARTITION_METADATA, {"groupId": group.group_id}, None))
    out.append(_record(SHARE_GROUP_METADATA, {"groupId": group.group_id}, None))
    return out


# --- the simple assignor -----------------------------------------------------------------


def simple_assignment(
    members: Mapping[str, ShareGroupMember],
    current: Mapping[str, Assignment],
    image: TopicImage,
    assignable: Mapping[uuid.UUID, Set[int]],
) -> dict[str, dict[uuid.UUID, set[int]]]:
    """The ``simple`` assignor (``SimpleAssignor``): each assignable partition of the
    topics members subscribe to goes to ``ceil(subscribers / partitions)`` of its
    subscribers (a partition is shared when there are more members than partitions), each
    member gets an even share, and a member keeps what it has where balance allows.
    ``assignable``: the initialized partitions by topic id."""
    out: dict[str, dict[uuid.UUID, set[int]]] = {member_id: {} for member_id in members}
    eligible: dict[str, list[tuple[uuid.UUID, int]]] = {}
    order: dict[tuple[uuid.UUID, int], None] = {}
    for member_id, member in members.items():
        parts: list[tuple[uuid.UUID, int]] = []
        for name in sorted(member.subscribed_topic_names):
            topic_id = image.topic_id(name)
            if topic_id is None:
                continue
            count = image.partition_count(topic_id)
            parts += [(topic_id, p) for p in sorted(assignable.get(topic_id, ())) if p < count]
        eligible[member_id] = parts
        order.update(dict.fromkeys(parts))
    if not order:
        return out
    subscribers: dict[tuple[uuid.UUID, int], list[str]] = {tp: [] for tp in order}
    for member_id, parts in eligible.items():
        for tp in parts:
            subscribers[tp].append(member_id)
    load = dict.fromkeys(members, 0)
    for tp in order:
        candidates = subscribers[tp]
        partitions = max(len(eligible[c]) for c in candidates)
        sharing = -(-len(candidates) // partitions)
        share = -(-partitions * sharing // len(candidates))  # partitions per member
        holders = [c for c in candidates if tp[1] in current.get(c, {}).get(tp[0], ())]
        chosen = [c for c in sorted(holders, key=lambda c: load[c]) if load[c] < share][:sharing]
        for c in sorted(candidates, key=lambda c: (load[c], c)):
            if len(chosen) >= sharing:
                break
            if c not in chosen:
                chosen.append(c)
        for c in chosen:
            load[c] += 1
            out[c].setdefault(tp[0], set()).add(tp[1])
    return out
