"""The online migration between the classic and the consumer group protocols
(``group.consumer.migration.policy``), as Kafka 4.3.1's ``GroupMetadataManager`` converts
one kind of group into the other: the group a classic group becomes when a member joins it
with ConsumerGroupHeartbeat (``ConsumerGroup.fromClassicGroup`` and
``createConsumerGroupRecords``), and the classic group a consumer group becomes when its
last consumer-protocol member leaves and only classic members remain
(``ClassicGroup.fromConsumerGroup`` and ``createClassicGroupRecords``).

The conversions compute records and groups; the consumer group coordinator
(:mod:`kafkacore.server.group.consumer`) appends the records and installs the result.
Pure functions over the groups they are given; event loop only (they read live groups)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kafkacore._java import JavaException, JavaHashMap, JavaHashSet
from kafkacore.coordinator import records as recs
from kafkacore.coordinator.consumer_group import (
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    Record,
    TopicImage,
    current_assignment_record,
    current_assignment_tombstone,
    group_epoch_record,
    group_epoch_tombstone,
    member_subscription_record,
    member_subscription_tombstone,
    partition_metadata_tombstone,
    regex_tombstone,
    target_assignment_metadata_record,
    target_assignment_metadata_tombstone,
    target_assignment_record,
    target_assignment_tombstone,
)
from kafkacore.protocol import ErrorCode
from kafkacore.server.group.group import STABLE, Group, Member

__all__ = [
    "ClassicView",
    "ConversionError",
    "MigrationPolicy",
    "classic_group_from_consumer_group",
    "consumer_group_records_from_classic",
    "subscription_of",
    "tombstones_with_replaced_member",
]

logger = logging.getLogger("kafkacore.server.group")


@dataclass(frozen=True)
class MigrationPolicy:
    """Kafka's ``ConsumerGroupMigrationPolicy`` (``group.consumer.migration.policy``):
    ``bidirectional``, ``upgrade``, ``downgrade`` or ``disabled``, any case. Conversions of
    empty groups happen whatever the policy."""

    name: str

    @classmethod
    def parse(cls, name: str) -> MigrationPolicy:
        return cls(name.strip().lower())

    @property
    def upgrade_enabled(self) -> bool:
        return self.name in ("bidirectional", "upgrade")

    @property
    def downgrade_enabled(self) -> bool:
        return self.name in ("bidirectional", "downgrade")

    @property
    def enabled(self) -> bool:
        return self.name != "disabled"


class ConversionError(Exception):
    """The group cannot be converted: GROUP_ID_NOT_FOUND with Kafka's message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = ErrorCode.GROUP_ID_NOT_FOUND
        self.message = message


@dataclass(frozen=True)
class ClassicView:
    """A classic consumer's JoinGroup subscription, decoded (``ConsumerProtocolSubscription``):
    its topics, rack and owned partitions (topic name, partitions)."""

    topics: tuple[str, ...]
    rack_id: str | None
    owned: tuple[tuple[str, tuple[int, ...]], ...]


def subscription_of(metadata: bytes) -> ClassicView:
    """The subscription in a member's protocol metadata. Raises :class:`JavaException`
    (``SchemaException``) for malformed bytes."""
    decoded = recs.decode_consumer_subscription(metadata)
    rack = decoded.get("rackId")
    return ClassicView(
        tuple(decoded["topics"]),
        rack if rack else None,  # Utils.toOptional: null and "" are no rack
        tuple((tp["topic"], tuple(tp["partitions"])) for tp in decoded.get("ownedPartitions", [])),
    )


def _java_member_order(members: Iterable[str]) -> list[str]:
    """A classic group's members iterate as its ``HashMap`` of member ids does."""
    table: JavaHashMap[str, bool] = JavaHashMap()
    for member_id in members:
        table[member_id] = True
    return list(table)


def consumer_group_records_from_classic(
    classic: Group, image: TopicImage, metadata_hash: Callable[[Iterable[str]], int]
) -> list[Record]:
    """``ConsumerGroup.fromClassicGroup`` + ``createConsumerGroupRecords``: the classic
    group's members as consumer group members at epoch = its generation, each with its
    current classic assignment as both target and current assignment; the records (the
    members' subscriptions, the group epoch with the metadata hash of their topics, the
    targets, the target metadata at the generation, the current assignments). Raises
    :class:`ConversionError` for a malformed embedded protocol or a custom assignor's user
    data (which would be lost)."""
    group_id = classic.group_id
    generation = classic.generation
    members: list[ConsumerGroupMember] = []
    targets: dict[str, JavaHashMap[uuid.UUID, JavaHashSet[int]]] = {}
    for member_id in _java_member_order(classic.members):
        m = classic.members[member_id]
        try:
            if m.assignment:
                assignment = recs.decode_consumer_assignment(m.assignment)
                user_data = assignment.get("userData")
                if user_data:
                    raise ConversionError(
                        f"Cannot upgrade classic group {group_id} to consumer group because an "
                        "unsupported custom assignor is in use. Please refer to the "
                        "documentation or switch to a default assignor before re-attempting "
                        "the upgrade."
                    )
                owned = [(tp["topic"], tp["partitions"]) for tp in assignment["assignedPartitions"]]
            else:
                owned = []
            view = subscription_of(m.metadata_for(classic.protocol))
        except JavaException as exc:
            logger.warning(
                "Cannot upgrade classic group %s to consumer group because the embedded "
                "consumer protocol is malformed: %s.",
                group_id,
                exc,
            )
            raise ConversionError(
                f"Cannot upgrade classic group {group_id} to consumer group because the "
                "embedded consumer protocol is malformed."
            ) from exc
        # Utils.toTopicPartitionMap: a HashMap of topic id -> HashSet (unknown topics dropped)
        partitions: JavaHashMap[uuid.UUID, JavaHashSet[int]] = JavaHashMap()
        for topic, listed in owned:
            topic_id = image.topic_id(topic)
            if topic_id is not None:
                partitions[topic_id] = JavaHashSet(listed)
        epochs: JavaHashMap[uuid.UUID, JavaHashMap[int, int]] = JavaHashMap()
        for topic_id, ps in partitions.items():
            epochs[topic_id] = JavaHashMap((p, generation) for p in ps)
        members.append(
            ConsumerGroupMember(
                member_id,
                member_epoch=generation,
                previous_member_epoch=generation,
                state=MemberState.STABLE,
                instance_id=m.instance_id,
                rack_id=view.rack_id,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=frozenset(view.topics),
                rebalance_timeout_ms=m.rebalance_timeout,
                assigned=epochs,
                classic=ClassicMemberMetadata(m.session_timeout, tuple(m.protocols)),
            )
        )
        targets[member_id] = partitions
    topics = {name for member in members for name in member.subscribed_topic_names}
    records: list[Record] = [member_subscription_record(group_id, m) for m in members]
    records.append(group_epoch_record(group_id, generation, metadata_hash(topics)))
    records.extend(
        target_assignment_record(group_id, m.member_id, targets[m.member_id]) for m in members
    )
    records.append(target_assignment_metadata_record(group_id, generation, 0))
    records.extend(current_assignment_record(group_id, m) for m in members)
    return records


def tombstones_with_replaced_member(
    group: ConsumerGroup, replaced_id: str, joining_id: str
) -> list[Record]:
    """``ConsumerGroup.createGroupTombstoneRecordsWithReplacedMember``: the group's
    tombstones (:func:`~kafkacore.coordinator.consumer_group.group_tombstones`' order),
    the replaced static member's records written under the id of the member replacing it
    (whose records the same batch wrote earlier)."""
    gid = group.group_id

    def swapped(member_id: str) -> str:
        return joining_id if member_id == replaced_id else member_id

    out: list[Record] = [current_assignment_tombstone(gid, swapped(m)) for m in group.members]
    out.extend(target_assignment_tombstone(gid, swapped(m)) for m in group.target)
    out.append(target_assignment_metadata_tombstone(gid))
    out.extend(member_subscription_tombstone(gid, swapped(m)) for m in group.members)
    out.extend(regex_tombstone(gid, regex) for regex in group.resolved_regexes)
    out.append(partition_metadata_tombstone(gid))
    out.append(group_epoch_tombstone(gid))
    return out


def classic_group_from_consumer_group(
    group: ConsumerGroup,
    leaving: Iterable[str],
    joining: ConsumerGroupMember | None,
    image: TopicImage,
    now_ms: int,
) -> Group:
    """``ClassicGroup.fromConsumerGroup``: a Stable classic group at generation = the group
    epoch, of every member but the ``leaving`` ones (and, with ``joining``, the static
    member it replaces, which it takes the place of, last), the first of them leader,
    each assigned its target assignment in the consumer protocol's encoding at the version
    of its own metadata. Raises :class:`ConversionError` if a member's metadata does not
    parse."""
    gone = set(leaving)
    replaced = group.static_member(joining.instance_id) if joining is not None else None
    chosen: list[ConsumerGroupMember] = []
    for member in group.members.values():
        if member.member_id in gone:
            continue
        if replaced is not None and member.member_id == replaced.member_id:
            continue
        chosen.append(member)
    if joining is not None:
        chosen.append(joining)
    classic = Group(group.group_id)
    classic.set_loaded_state(STABLE)
    classic.generation = group.group_epoch
    classic.protocol_type = recs.CONSUMER_PROTOCOL_TYPE
    classic.state_timestamp = now_ms
    members: dict[str, Member] = {}
    for member in chosen:
        assert member.classic is not None, "only classic members remain"
        members[member.member_id] = Member(
            member.member_id,
            member.instance_id,
            member.client_id,
            member.client_host,
            member.classic.session_timeout_ms,
            member.rebalance_timeout_ms,
            recs.CONSUMER_PROTOCOL_TYPE,
            list(member.classic.protocols),
        )
    classic.leader = next(iter(members), None)
    classic.members = {mid: members[mid] for mid in _java_member_order(members)}
    classic.static = {m.instance_id: m.member_id for m in chosen if m.instance_id is not None}
    classic.protocol = classic.select_protocol()
    for member in chosen:
        target_of = member.member_id
        if joining is not None and member is joining and replaced is not None:
            target_of = replaced.member_id
        metadata = members[member.member_id].metadata_for(classic.protocol)
        try:
            version = recs.consumer_protocol_version(metadata)
        except JavaException as exc:
            logger.warning(
                "Cannot downgrade the consumer group %s: fail to parse the Consumer Protocol "
                "consumer.",
                group.group_id,
            )
            raise ConversionError(
                f"Cannot downgrade the classic group {group.group_id}: {exc.message}."
            ) from exc
        members[member.member_id].assignment = recs.encode_consumer_assignment(
            _named(group.target.get(target_of, {}), image), version
        )
    return classic


def _named(
    partitions: Mapping[uuid.UUID, Iterable[int]], image: TopicImage
) -> list[tuple[str, list[int]]]:
    """``Utils.toConsumerProtocolAssignment``: by topic name (topics gone are left out)."""
    out = []
    for topic_id, listed in partitions.items():
        name = image.topic_name(topic_id)
        if name is not None:
            out.append((name, list(listed)))
    return out
