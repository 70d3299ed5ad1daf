"""A KIP-848 consumer group's state, as Kafka 4.3.1's ``ConsumerGroup``,
``ConsumerGroupMember``, ``CurrentAssignmentBuilder`` and ``TargetAssignmentBuilder``
(``group-coordinator``, ``modern`` and ``modern.consumer`` packages) keep and compute it,
and the ``__consumer_offsets`` records that persist it (record types 3-8 and 16, written
as ``GroupCoordinatorRecordHelpers`` writes them).

The hard state changes only by :meth:`ConsumerGroup.replay` of those records: the
coordinator computes a heartbeat's records, appends them, and replays them into the group
(a load replays the same records), so what is served is what a failover rebuilds. The
group's epochs (KIP-848): the **group epoch** rises when membership, subscriptions or the
subscribed topics' metadata (its hash, KIP-1101) change; the **assignment epoch** is the
group epoch the target assignment was computed at; a member's epoch reaches the
assignment epoch through reconciliation, revoking before it is assigned what another
member still owns.

Share groups (KIP-932) reuse :class:`MemberState`, the target assignment and the metadata
hash. Not thread-safe: the coordinator uses a group on the event loop only.
"""

from __future__ import annotations

import enum
import struct
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import xxhash

from kafkacore._java import JavaHashMap, JavaHashSet, TimelineHashMap, java_string_key
from kafkacore.coordinator import records as recs
from kafkacore.coordinator.assignor import (
    GroupSpec,
    MemberSpec,
    PartitionAssignor,
    SubscriptionType,
    frozen,
)
from kafkacore.coordinator.group_offsets import GroupOffsets

__all__ = [
    "CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT",
    "CONSUMER_GROUP_MEMBER_METADATA",
    "CONSUMER_GROUP_METADATA",
    "CONSUMER_GROUP_PARTITION_METADATA",
    "CONSUMER_GROUP_RECORD_TYPES",
    "CONSUMER_GROUP_REGULAR_EXPRESSION",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA",
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "ConsumerGroup",
    "ConsumerGroupMember",
    "ConsumerGroupState",
    "MemberState",
    "TopicImage",
    "compute_next_assignment",
    "target_assignment",
    "topic_hash",
]

CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
CONSUMER_GROUP_REGULAR_EXPRESSION = 16
CONSUMER_GROUP_RECORD_TYPES = frozenset({3, 4, 5, 6, 7, 8, 16})

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

Record = tuple[bytes, bytes | None]
EpochMap = Mapping[uuid.UUID, Mapping[int, int]]
"""A member's partitions with the assignment epoch of each (KIP-1251)."""


class MemberState(enum.IntEnum):
    """Kafka's ``MemberState`` (the ``State`` of ConsumerGroupCurrentMemberAssignment)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127

    @property
    def label(self) -> str:
        return self.name


class ConsumerGroupState(str, enum.Enum):
    """Kafka's ``ConsumerGroup.ConsumerGroupState``; the value is its ``toString``."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


# --- the metadata a group sees ---------------------------------------------------------------


class TopicImage(Protocol):
    """What the coordinator reads of the cluster's metadata (Kafka's
    ``CoordinatorMetadataImage``)."""

    def topic_id(self, name: str) -> uuid.UUID | None: ...

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...

    def partition_count(self, topic_id: uuid.UUID) -> int:
        """-1 for a topic that does not exist."""

    def partition_racks(self, topic_id: uuid.UUID, partition: int) -> list[str]: ...


_TOPIC_HASH_MAGIC = 0


def _stream_string(text: str) -> bytes:
    # hash4j's HashStream.putString: the UTF-16 code units little-endian, then the length
    units = text.encode("utf-16-le", "surrogatepass")
    return units + struct.pack("<i", len(units) // 2)


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >> 63 else value


def topic_hash(image: TopicImage, name: str) -> int:
    """Kafka's ``Utils.computeTopicHash`` (KIP-1101): XXH3-64 over a magic byte, the
    topic id, name and partition count, and each partition with its sorted racks; 0 for a
    topic that does not exist."""
    topic_id = image.topic_id(name)
    if topic_id is None:
        return 0
    count = image.partition_count(topic_id)
    parts = [
        bytes([_TOPIC_HASH_MAGIC]),
        struct.pack("<qq", _signed64(topic_id.int >> 64), _signed64(topic_id.int & (2**64 - 1))),
        _stream_string(name),
        struct.pack("<i", count),
    ]
    for p in range(count):
        parts.append(struct.pack("<i", p))
        for rack in sorted(image.partition_racks(topic_id, p), key=java_string_key):
            parts.append(struct.pack("<i", len(rack.encode("utf-16-le")) // 2))
            parts.append(_stream_string(rack))
    return _signed64(xxhash.xxh3_64_intdigest(b"".join(parts)))


def group_hash(topic_hashes: Mapping[str, int]) -> int:
    """Kafka's ``Utils.computeGroupHash``: XXH3-64 over the topics' hashes in topic-name
    order; 0 for none."""
    if not topic_hashes:
        return 0
    ordered = sorted(topic_hashes.items(), key=lambda kv: java_string_key(kv[0]))
    data = b"".join(struct.pack("<q", h) for _, h in ordered)
    return _signed64(xxhash.xxh3_64_intdigest(data))


# --- members ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassicMemberMetadata:
    """A classic protocol member inside a consumer group (JoinGroup/SyncGroup)."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class ConsumerGroupMember:
    """Kafka's ``ConsumerGroupMember``: subscription (``ConsumerGroupMemberMetadata``) and
    current assignment (``ConsumerGroupCurrentMemberAssignment``). Immutable."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str | None = ""
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    assigned: EpochMap = field(default_factory=dict, compare=False)
    pending_revocation: EpochMap = field(default_factory=dict, compare=False)
    classic: ClassicMemberMetadata | None = None

    def same_as(self, other: ConsumerGroupMember) -> bool:
        return (
            self == other
            and _epochs_equal(self.assigned, other.assigned)
            and (_epochs_equal(self.pending_revocation, other.pending_revocation))
        )

    def same_subscription_record(self, other: ConsumerGroupMember) -> bool:
        """The fields of ConsumerGroupMemberMetadata are equal."""
        return (
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.subscribed_topic_names,
            self.subscribed_topic_regex,
            self.rebalance_timeout_ms,
            self.server_assignor,
            self.classic,
        ) == (
            other.instance_id,
            other.rack_id,
            other.client_id,
            other.client_host,
            other.subscribed_topic_names,
            other.subscribed_topic_regex,
            other.rebalance_timeout_ms,
            other.server_assignor,
            other.classic,
        )

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def assigned_sets(self) -> dict[uuid.UUID, set[int]]:
        return {t: set(ps) for t, ps in self.assigned.items()}

    def assignment_epoch(self, topic_id: uuid.UUID, partition: int) -> int | None:
        return self.assigned.get(topic_id, {}).get(partition)

    def pending_revocation_epoch(self, topic_id: uuid.UUID, partition: int) -> int | None:
        return self.pending_revocation.get(topic_id, {}).get(partition)


def _epochs_equal(a: EpochMap, b: EpochMap) -> bool:
    return {t: dict(ps) for t, ps in a.items()} == {t: dict(ps) for t, ps in b.items()}


def has_assigned_partitions_changed(old: ConsumerGroupMember, new: ConsumerGroupMember) -> bool:
    """Kafka's ``ConsumerGroupMember.hasAssignedPartitionsChanged`` (the partitions, not
    their epochs)."""
    return {t: set(p) for t, p in old.assigned.items()} != {
        t: set(p) for t, p in new.assigned.items()
    }


# --- the group -------------------------------------------------------------------------------


@dataclass
class ResolvedRegex:
    """Kafka's ``ResolvedRegularExpression``: the topics a regex matched, at which
    metadata version and when."""

    topics: frozenset[str]
    version: int
    timestamp: int


class ConsumerGroup(GroupOffsets):
    """Kafka's ``ConsumerGroup``: members, static members, epochs, target assignment
    (with the inverted map of which member each partition targets), the current owner
    epoch of each partition, subscription counts and resolved regexes. Its offsets are
    its :class:`GroupOffsets` base, as a classic group's."""

    def __init__(self, group_id: str) -> None:
        GroupOffsets.__init__(self)
        self.group_id = group_id
        self.group_epoch = 1  # Kafka 4.3's ModernGroup starts at 1: a new group's first epoch is 2
        self.assignment_epoch = -1
        self.assignment_timestamp = 0
        self.metadata_hash = 0
        self.has_partition_metadata_record = False
        self.members: TimelineHashMap[str, ConsumerGroupMember] = TimelineHashMap()
        self.static_members: dict[str, str] = {}
        self.target: TimelineHashMap[str, Mapping[uuid.UUID, Set[int]]] = TimelineHashMap()
        self.inverted: dict[uuid.UUID, dict[int, str]] = {}
        self.partition_epochs: dict[uuid.UUID, dict[int, int]] = {}
        self.resolved_regexes: TimelineHashMap[str, ResolvedRegex] = TimelineHashMap()
        self.metadata_refresh = (-1, 0)
        """Soft state (Kafka's ``metadataRefreshDeadline``): the metadata generation its
        metadata hash was last computed at, and the group epoch then."""
        self.deleted = False

    # -- state -----------------------------------------------------------------------------

    @property
    def state(self) -> ConsumerGroupState:
        """Kafka's ``maybeUpdateGroupState``, computed."""
        if self.deleted:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        for member in self.members.values():
            if not member.is_reconciled_to(self.assignment_epoch):
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def has_metadata_expired(self, generation: int) -> bool:
        """Kafka's ``hasMetadataExpired``: the topics moved since the group's metadata hash
        was computed (``generation``: the metadata cache's), or the group epoch went back
        below the one it was computed at (a write that failed)."""
        seen, epoch = self.metadata_refresh
        return generation != seen or self.group_epoch < epoch

    def last_resolved_regex_version(self) -> int:
        """Kafka's ``lastResolvedRegularExpressionVersion``."""
        return max((r.version for r in self.resolved_regexes.values()), default=-1)

    def is_empty(self) -> bool:
        return not self.members

    def member(self, member_id: str) -> ConsumerGroupMember | None:
        return self.members.get(member_id)

    def static_member(self, instance_id: str | None) -> ConsumerGroupMember | None:
        if instance_id is None:
            return None
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def current_partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition_epochs.get(topic_id, {}).get(partition, -1)

    def target_assignment_of(self, member_id: str) -> Mapping[uuid.UUID, Set[int]]:
        return self.target.get(member_id, {})

    def subscribed_regexes(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.subscribed_topic_regex:
                counts[m.subscribed_topic_regex] = counts.get(m.subscribed_topic_regex, 0) + 1
        return counts

    def subscription_counts(
        self,
        *,
        without: Iterable[str] = (),
        extra: ConsumerGroupMember | None = None,
        dropped_regexes: Iterable[str] = (),
    ) -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
        """The regexes the members subscribe to (with how many members use each) and the
        topics they subscribe to with (members by name, regexes resolving to it): Kafka's
        ``computeSubscribedRegularExpressions`` and ``computeSubscribedTopicNames``, with
        the members ``without`` left out and ``extra`` put in place of its old self (and
        of the static member it replaces)."""
        skip = set(without)
        members = [m for mid, m in self.members.items() if mid not in skip]
        if extra is not None:
            old_static = self.static_member(extra.instance_id)
            replaced = {extra.member_id} | (
                {old_static.member_id} if old_static is not None else set()
            )
            members = [m for m in members if m.member_id not in replaced]
            members.append(extra)
        regexes: dict[str, int] = {}
        by_name: dict[str, int] = {}
        for m in members:
            for name in m.subscribed_topic_names:
                by_name[name] = by_name.get(name, 0) + 1
            if m.subscribed_topic_regex:
                regexes[m.subscribed_topic_regex] = regexes.get(m.subscribed_topic_regex, 0) + 1
        by_regex: dict[str, int] = {}
        gone = set(dropped_regexes)
        for regex in regexes:
            resolved = self.resolved_regexes.get(regex)
            if resolved is not None and regex not in gone:
                for name in resolved.topics:
                    by_regex[name] = by_regex.get(name, 0) + 1
        counts = {
            name: (by_name.get(name, 0), by_regex.get(name, 0))
            for name in by_name.keys() | by_regex.keys()
        }
        return regexes, counts

    @staticmethod
    def subscription_type(
        regexes: Mapping[str, int], counts: Mapping[str, tuple[int, int]], members: int
    ) -> SubscriptionType:
        """Kafka's ``ConsumerGroup.subscriptionType``: homogeneous when every member
        subscribes by name to every topic, or every member to the one same regex and
        nothing else."""
        if not regexes:
            for by_name, _ in counts.values():
                if by_name != members:
                    return SubscriptionType.HETEROGENEOUS
            return SubscriptionType.HOMOGENEOUS
        if len(regexes) == 1 and next(iter(regexes.values())) == members:
            for by_name, by_regex in counts.values():
                if by_regex != 1 or by_name > 0:
                    return SubscriptionType.HETEROGENEOUS
            return SubscriptionType.HOMOGENEOUS
        return SubscriptionType.HETEROGENEOUS

    def preferred_assignor(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> str | None:
        """Kafka's ``computePreferredServerAssignor``: the assignor most members name."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor is not None:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if old is not None and old.server_assignor is not None:
            counts[old.server_assignor] -= 1
            if counts[old.server_assignor] == 0:
                del counts[old.server_assignor]
        if new is not None and new.server_assignor is not None:
            counts[new.server_assignor] = counts.get(new.server_assignor, 0) + 1
        if not counts:
            return None
        return max(counts.items(), key=lambda kv: kv[1])[0]

    # -- replay (the only way the hard state changes) ---------------------------------------

    def replay(
        self, record_type: int, key: Mapping[str, Any], value: Mapping[str, Any] | None
    ) -> None:
        """Apply one record of this group (types 3-8 and 16)."""
        if record_type == CONSUMER_GROUP_METADATA:
            if value is None:
                self.deleted = True
            else:
                self.deleted = False
                self.group_epoch = value["epoch"]
                self.metadata_hash = value["metadataHash"]
        elif record_type == CONSUMER_GROUP_PARTITION_METADATA:
            self.has_partition_metadata_record = value is not None
        elif record_type == CONSUMER_GROUP_MEMBER_METADATA:
            self._replay_member(key["memberId"], value)
        elif record_type == CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            if value is None:
                self.assignment_epoch = -1
                self.assignment_timestamp = 0
            else:
                self.assignment_epoch = value["assignmentEpoch"]
                self.assignment_timestamp = value["assignmentTimestamp"]
        elif record_type == CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
            self._replay_target(key["memberId"], value)
        elif record_type == CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            self._replay_current(key["memberId"], value)
        elif record_type == CONSUMER_GROUP_REGULAR_EXPRESSION:
            regex = key["regularExpression"]
            if value is None:
                self.resolved_regexes.pop(regex, None)
            else:
                self.resolved_regexes[regex] = ResolvedRegex(
                    frozenset(value["topics"]), value["version"], value["timestamp"]
                )

    def _update_member(self, member: ConsumerGroupMember) -> None:
        old = self.members.get(member.member_id)
        if old is not None:
            self._unowned(old)
            if (
                old.instance_id is not None
                and self.static_members.get(old.instance_id) == old.member_id
            ):
                del self.static_members[old.instance_id]
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        self._owned(member)

    def _owned(self, member: ConsumerGroupMember) -> None:
        for source in (member.assigned, member.pending_revocation):
            for topic_id, partitions in source.items():
                epochs = self.partition_epochs.setdefault(topic_id, {})
                for p in partitions:
                    epochs[p] = member.member_epoch

    def _unowned(self, member: ConsumerGroupMember) -> None:
        for source in (member.assigned, member.pending_revocation):
            for topic_id, partitions in source.items():
                epochs = self.partition_epochs.get(topic_id)
                if epochs is None:
                    continue
                for p in partitions:
                    epochs.pop(p, None)
                if not epochs:
                    del self.partition_epochs[topic_id]

    def _replay_member(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        if value is None:
            old = self.members.get(member_id)
            if old is None:
                return
            self._unowned(old)
            del self.members[member_id]
            if (
                old.instance_id is not None
                and self.static_members.get(old.instance_id) == member_id
            ):
                del self.static_members[old.instance_id]
            return
        old = self.members.get(member_id) or ConsumerGroupMember(member_id)
        classic = value.get("classicMemberMetadata")
        self._update_member(
            replace(
                old,
                instance_id=value["instanceId"],
                rack_id=value["rackId"],
                client_id=value["clientId"],
                client_host=value["clientHost"],
                subscribed_topic_names=frozenset(value["subscribedTopicNames"]),
                subscribed_topic_regex=value["subscribedTopicRegex"],
                rebalance_timeout_ms=value["rebalanceTimeoutMs"],
                server_assignor=value["serverAssignor"],
                classic=None
                if classic is None
                else ClassicMemberMetadata(
                    classic["sessionTimeoutMs"],
                    tuple((p["name"], bytes(p["metadata"])) for p in classic["supportedProtocols"]),
                ),
            )
        )

    def _replay_target(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        old = self.target.get(member_id)
        if old is not None:
            for topic_id, partitions in old.items():
                owners = self.inverted.get(topic_id, {})
                for p in partitions:
                    if owners.get(p) == member_id:
                        del owners[p]
                if not owners:
                    self.inverted.pop(topic_id, None)
        if value is None:
            self.target.pop(member_id, None)
            return
        # Assignment.fromRecord: Collectors.toMap (a HashMap) of new HashSet<>(partitions)
        assignment: JavaHashMap[uuid.UUID, Set[int]] = JavaHashMap()
        for tp in value["topicPartitions"]:
            assignment[tp["topicId"]] = JavaHashSet(tp["partitions"])
        self.target[member_id] = frozen(assignment)
        for topic_id, partitions in assignment.items():
            owners = self.inverted.setdefault(topic_id, {})
            for p in partitions:
                owners[p] = member_id

    def _replay_current(self, member_id: str, value: Mapping[str, Any] | None) -> None:
        old = self.members.get(member_id)
        if value is None:
            if old is None:
                return
            self._update_member(
                replace(
                    old,
                    member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                    previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                    assigned={},
                    pending_revocation={},
                )
            )
            return
        base = old or ConsumerGroupMember(member_id)

        def epochs(entries: Sequence[Mapping[str, Any]], epoch: int) -> EpochMap:
            out: JavaHashMap[uuid.UUID, Mapping[int, int]] = JavaHashMap()
            for tp in entries:
                given = tp.get("assignmentEpochs")
                parts: JavaHashMap[int, int] = JavaHashMap()
                for i, p in enumerate(tp["partitions"]):
                    parts[p] = given[i] if given is not None and i < len(given) else epoch
                out[tp["topicId"]] = parts
            return out

        member_epoch = value["memberEpoch"]
        self._update_member(
            replace(
                base,
                member_epoch=member_epoch,
                previous_member_epoch=value["previousMemberEpoch"],
                state=_member_state(value["state"]),
                assigned=epochs(value["assignedPartitions"], member_epoch),
                pending_revocation=epochs(value["partitionsPendingRevocation"], member_epoch),
            )
        )


def _member_state(value: int) -> MemberState:
    try:
        return MemberState(value)
    except ValueError:
        return MemberState.UNKNOWN


# --- records (GroupCoordinatorRecordHelpers) --------------------------------------------------


def _record(record_type: int, key: dict[str, Any], value: dict[str, Any] | None) -> Record:
    return recs.encode_record(record_type, key, 0, value)


def member_subscription_record(group_id: str, m: ConsumerGroupMember) -> Record:
    classic = None
    if m.classic is not None:
        classic = {
            "sessionTimeoutMs": m.classic.session_timeout_ms,
            "supportedProtocols": [{"name": n, "metadata": d} for n, d in m.classic.protocols],
        }
    return _record(
        CONSUMER_GROUP_MEMBER_METADATA,
        {"groupId": group_id, "memberId": m.member_id},
        {
            "instanceId": m.instance_id,
            "rackId": m.rack_id,
            "clientId": m.client_id,
            "clientHost": m.client_host,
            "subscribedTopicNames": sorted(m.subscribed_topic_names, key=java_string_key),
            "subscribedTopicRegex": m.subscribed_topic_regex,
            "rebalanceTimeoutMs": m.rebalance_timeout_ms,
            "serverAssignor": m.server_assignor,
            "classicMemberMetadata": classic,
        },
    )


def member_subscription_tombstone(group_id: str, member_id: str) -> Record:
    return _record(
        CONSUMER_GROUP_MEMBER_METADATA, {"groupId": group_id, "memberId": member_id}, None
    )


def group_epoch_record(group_id: str, epoch: int, metadata_hash: int) -> Record:
    return _record(
        CONSUMER_GROUP_METADATA,
        {"groupId": group_id},
        {"epoch": epoch, "metadataHash": metadata_hash},
    )


def group_epoch_tombstone(group_id: str) -> Record:
    return _record(CONSUMER_GROUP_METADATA, {"groupId": group_id}, None)


def partition_metadata_tombstone(group_id: str) -> Record:
    return _record(CONSUMER_GROUP_PARTITION_METADATA, {"groupId": group_id}, None)


def target_assignment_record(
    group_id: str, member_id: str, partitions: Mapping[uuid.UUID, Iterable[int]]
) -> Record:
    return _record(
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
        {"groupId": group_id, "memberId": member_id},
        {
            "topicPartitions": [
                {"topicId": t, "partitions": list(ps)} for t, ps in partitions.items()
            ]
        },
    )


def target_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return _record(
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, {"groupId": group_id, "memberId": member_id}, None
    )


def target_assignment_metadata_record(group_id: str, epoch: int, timestamp: int) -> Record:
    return _record(
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
        {"groupId": group_id},
        {"assignmentEpoch": epoch, "assignmentTimestamp": timestamp},
    )


def target_assignment_metadata_tombstone(group_id: str) -> Record:
    return _record(CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, {"groupId": group_id}, None)


def _epoch_partitions(source: EpochMap) -> list[dict[str, Any]]:
    out = []
    for topic_id, partitions in source.items():
        listed = list(partitions)
        out.append(
            {
                "topicId": topic_id,
                "partitions": listed,
                "assignmentEpochs": [partitions[p] for p in listed],
            }
        )
    return out


def current_assignment_record(group_id: str, m: ConsumerGroupMember) -> Record:
    return _record(
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
        {"groupId": group_id, "memberId": m.member_id},
        {
            "memberEpoch": m.member_epoch,
            "previousMemberEpoch": m.previous_member_epoch,
            "state": int(m.state),
            "assignedPartitions": _epoch_partitions(m.assigned),
            "partitionsPendingRevocation": _epoch_partitions(m.pending_revocation),
        },
    )


def current_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return _record(
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, {"groupId": group_id, "memberId": member_id}, None
    )


def regex_record(group_id: str, regex: str, resolved: ResolvedRegex) -> Record:
    return _record(
        CONSUMER_GROUP_REGULAR_EXPRESSION,
        {"groupId": group_id, "regularExpression": regex},
        {
            "topics": sorted(resolved.topics),
            "version": resolved.version,
            "timestamp": resolved.timestamp,
        },
    )


def regex_tombstone(group_id: str, regex: str) -> Record:
    return _record(
        CONSUMER_GROUP_REGULAR_EXPRESSION, {"groupId": group_id, "regularExpression": regex}, None
    )


def group_tombstones(group: ConsumerGroup) -> list[Record]:
    """Kafka 4.3.1's ``ConsumerGroup.createGroupTombstoneRecords``: every member's current
    assignment, every target assignment, the target assignment metadata, every member's
    subscription, the regexes, the (pre-4.1) partition metadata, then the group epoch."""
    out: list[Record] = []
    for member_id in group.members:
        out.append(current_assignment_tombstone(group.group_id, member_id))
    for member_id in group.target:
        out.append(target_assignment_tombstone(group.group_id, member_id))
    out.append(target_assignment_metadata_tombstone(group.group_id))
    for member_id in group.members:
        out.append(member_subscription_tombstone(group.group_id, member_id))
    for regex in group.resolved_regexes:
        out.append(regex_tombstone(group.group_id, regex))
    out.append(partition_metadata_tombstone(group.group_id))
    out.append(group_epoch_tombstone(group.group_id))
    return out


# --- reconciliation (CurrentAssignmentBuilder) -------------------------------------------------


def subscribed_topic_ids(
    member: ConsumerGroupMember, regexes: Mapping[str, ResolvedRegex], image: TopicImage
) -> set[uuid.UUID]:
    names: set[str] = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        resolved = regexes.get(member.subscribed_topic_regex)
        if resolved is not None:
            names |= resolved.topics
    ids = set()
    for name in names:
        topic_id = image.topic_id(name)
        if topic_id is not None:
            ids.add(topic_id)
    return ids


def _owns_revoked(
    owned: Sequence[tuple[uuid.UUID, Sequence[int]]] | None, pending: EpochMap
) -> bool:
    if owned is None:
        return True
    for topic_id, partitions in owned:
        revoking = pending.get(topic_id, {})
        for p in partitions:
            if p in revoking:
                return True
    return False


def compute_next_assignment(
    member: ConsumerGroupMember,
    *,
    target_epoch: int,
    target: Mapping[uuid.UUID, Set[int]],
    has_subscription_changed: bool,
    regexes: Mapping[str, ResolvedRegex],
    image: TopicImage,
    current_partition_epoch: Callable[[uuid.UUID, int], int],
    owned: Sequence[tuple[uuid.UUID, Sequence[int]]] | None,
) -> ConsumerGroupMember:
    """Kafka's ``CurrentAssignmentBuilder.build``: the member's next state towards
    ``target`` at ``target_epoch``. Raises ``FencedMemberEpoch`` for a member in an
    unknown state that still owns partitions."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(
                member,
                member.member_epoch,
                target_epoch,
                target,
                regexes,
                image,
                current_partition_epoch,
                owned,
            )
        if has_subscription_changed:
            return _update_current(member, member.member_epoch, regexes, image, owned)
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_revoked(owned, member.pending_revocation):
            if has_subscription_changed:
                return _update_current(member, member.member_epoch, regexes, image, owned)
            return member
        return _next(
            member,
            member.member_epoch,
            target_epoch,
            target,
            regexes,
            image,
            current_partition_epoch,
            owned,
        )
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next(
            member,
            member.member_epoch,
            target_epoch,
            target,
            regexes,
            image,
            current_partition_epoch,
            owned,
        )
    if owned is None or owned:
        raise FencedMemberEpoch(
            "The consumer group member is in a unknown state. The member must abandon all "
            "its partitions and rejoin."
        )
    return _next(
        member, target_epoch, target_epoch, target, regexes, image, current_partition_epoch, owned
    )


class FencedMemberEpoch(Exception):
    """FENCED_MEMBER_EPOCH (110) with Kafka's message."""


def _at_epoch(member: ConsumerGroupMember, epoch: int, **changes: Any) -> ConsumerGroupMember:
    """``Builder.updateMemberEpoch``: the member at ``epoch``, its previous epoch the one
    it had (also when the epoch stays: Kafka 4.3.1 writes previous = current then), with
    ``changes``."""
    return replace(member, member_epoch=epoch, previous_member_epoch=member.member_epoch, **changes)


def _update_current(
    member: ConsumerGroupMember,
    epoch: int,
    regexes: Mapping[str, ResolvedRegex],
    image: TopicImage,
    owned: Sequence[tuple[uuid.UUID, Sequence[int]]] | None,
) -> ConsumerGroupMember:
    subscribed = subscribed_topic_ids(member, regexes, image)
    assigned: EpochMap = member.assigned
    pending: EpochMap = member.pending_revocation
    if not subscribed and not member.pending_revocation:
        new_assigned: EpochMap = {}
        new_pending: EpochMap = member.assigned
    else:
        new_assigned, new_pending = assigned, pending
        for topic_id, partitions in assigned.items():
            if topic_id in subscribed:
                continue
            if new_assigned is assigned:
                new_assigned = JavaHashMap.copy_of(assigned)
                new_pending = JavaHashMap.copy_of(pending)
            assert isinstance(new_assigned, JavaHashMap) and isinstance(new_pending, JavaHashMap)
            del new_assigned[topic_id]
            existing = new_pending.get(topic_id)
            if existing is None:
                new_pending[topic_id] = partitions
            else:
                merged = JavaHashMap.copy_of(existing)
                for p, e in partitions.items():
                    merged[p] = e
                new_pending[topic_id] = merged
    if new_assigned is assigned:
        return member
    if new_pending and _owns_revoked(owned, new_pending):
        return _at_epoch(
            member,
            epoch,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned=new_assigned,
            pending_revocation=new_pending,
        )
    return _at_epoch(member, epoch, assigned=new_assigned)


def _next(
    member: ConsumerGroupMember,
    epoch: int,
    target_epoch: int,
    target: Mapping[uuid.UUID, Set[int]],
    regexes: Mapping[str, ResolvedRegex],
    image: TopicImage,
    current_partition_epoch: Callable[[uuid.UUID, int], int],
    owned: Sequence[tuple[uuid.UUID, Sequence[int]]] | None,
) -> ConsumerGroupMember:
    subscribed = subscribed_topic_ids(member, regexes, image)
    unreleased = False
    new_assigned: JavaHashMap[uuid.UUID, Mapping[int, int]] = JavaHashMap()
    new_pending: JavaHashMap[uuid.UUID, Mapping[int, int]] = JavaHashMap()
    new_to_assign: JavaHashMap[uuid.UUID, JavaHashSet[int]] = JavaHashMap()
    all_topics = JavaHashSet(target.keys())
    for t in member.assigned:
        all_topics.add(t)
    for topic_id in all_topics:
        wanted = target.get(topic_id, set()) if topic_id in subscribed else set()
        current = member.assigned.get(topic_id, {})
        kept: JavaHashMap[int, int] = JavaHashMap.copy_of(current)
        for p in list(kept):
            if p not in wanted:
                del kept[p]
        revoking: JavaHashMap[int, int] = JavaHashMap.copy_of(current)
        for p in list(revoking):
            if p in kept:
                del revoking[p]
        to_assign: JavaHashSet[int] = JavaHashSet(wanted)
        for p in kept:
            to_assign.discard(p)
        my_pending = member.pending_revocation.get(topic_id, {})
        for p in list(to_assign):
            if current_partition_epoch(topic_id, p) != -1 and p not in my_pending:
                to_assign.discard(p)
                unreleased = True
        if kept:
            new_assigned[topic_id] = kept
        if revoking:
            new_pending[topic_id] = revoking
        if to_assign:
            new_to_assign[topic_id] = to_assign
    if new_pending and _owns_revoked(owned, new_pending):
        return _at_epoch(
            member,
            epoch,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned=new_assigned,
            pending_revocation=new_pending,
        )
    if new_to_assign:
        for topic_id, partitions in new_to_assign.items():
            epochs = new_assigned.compute_if_absent(topic_id, lambda _t: JavaHashMap())
            assert isinstance(epochs, JavaHashMap)
            for p in partitions:
                epochs[p] = target_epoch
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return _at_epoch(
        member,
        target_epoch,
        state=state,
        assigned=new_assigned,
        pending_revocation={},
    )


# --- target assignment (TargetAssignmentBuilder) ----------------------------------------------


class _Describer:
    def __init__(self, image: TopicImage) -> None:
        self.image = image

    def num_partitions(self, topic_id: uuid.UUID) -> int:
        return self.image.partition_count(topic_id)

    def racks_for_partition(self, topic_id: uuid.UUID, partition: int) -> set[str]:
        return set(self.image.partition_racks(topic_id, partition))


def target_assignment(
    group: ConsumerGroup,
    epoch: int,
    assignor: PartitionAssignor,
    image: TopicImage,
    subscription_type: SubscriptionType,
    updated: ConsumerGroupMember | None,
    removed: Iterable[str] = (),
    now_ms: int = 0,
) -> tuple[list[Record], Mapping[str, Mapping[uuid.UUID, Set[int]]]]:
    """Kafka's ``TargetAssignmentBuilder.build``: the assignor over every member (with
    ``updated`` put in, ``removed`` taken out), the records of each member whose target
    changed (in the order of Kafka's map of members), then the target assignment
    metadata at ``epoch``. Returns the records and the new assignment."""
    specs: JavaHashMap[str, MemberSpec] = JavaHashMap()

    def spec(member: ConsumerGroupMember, assignment: Mapping[uuid.UUID, Set[int]]) -> MemberSpec:
        ids: JavaHashSet[uuid.UUID] = JavaHashSet()
        for topic_id in subscribed_topic_ids(member, group.resolved_regexes, image):
            ids.add(topic_id)
        return MemberSpec(member.rack_id, member.instance_id, ids, frozen(assignment))

    for member_id, member in group.members.items():
        specs[member_id] = spec(member, group.target.get(member_id, {}))
    for member_id in removed:
        specs.pop(member_id, None)
    if updated is not None:
        assignment = group.target.get(updated.member_id, {})
        if updated.instance_id is not None:
            previous = group.static_members.get(updated.instance_id)
            if previous is not None and previous != updated.member_id:
                assignment = group.target.get(previous, {})
        specs[updated.member_id] = spec(updated, assignment)
    result = assignor.assign(GroupSpec(specs, subscription_type, group.inverted), _Describer(image))
    records: list[Record] = []
    for member_id in specs:
        new = result.get(member_id, {})
        old = group.target.get(member_id)
        if old is None or {t: set(p) for t, p in old.items()} != {
            t: set(p) for t, p in new.items()
        }:
            records.append(target_assignment_record(group.group_id, member_id, new))
    records.append(target_assignment_metadata_record(group.group_id, epoch, now_ms))
    return records, result
