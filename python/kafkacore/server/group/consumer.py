"""The KIP-848 consumer group protocol (ConsumerGroupHeartbeat, ConsumerGroupDescribe)
as Kafka 4.3.1's ``GroupMetadataManager`` runs it, over the group shards of
``__consumer_offsets`` (:mod:`kafkacore.server.group.shard`) and the coordinator runtime.

A heartbeat computes the records Kafka's coordinator would write (member subscription,
group epoch, target assignment, current assignment), appends them to the group's
``__consumer_offsets`` partition and replays them into the group under the partition's
lock (:meth:`~kafkacore.coordinator.runtime.CoordinatorRuntime.append_uncommitted`), and
answers once the high watermark passes them: heartbeats of one partition are pipelined,
each sees every earlier one applied, and a failover replays exactly what was served.

Timers (the runtime's keyed, per-partition timers, as Kafka's ``CoordinatorTimer``): a
member's session (``group.consumer.session.timeout.ms``) fences it when no heartbeat
comes; its rebalance timeout fences a member that does not revoke within it; a target
assignment held back by ``group.consumer.assignment.interval.ms`` is computed when the
interval ends.

Classic members (Kafka's ``classicGroup*ToConsumerGroup``): a JoinGroup to a consumer
group with members makes the joining classic member one of its members (its
subscription and owned partitions read from its embedded consumer protocol); it is never
the leader, its generation is its member epoch, SyncGroup hands it its current assignment
and Heartbeat tells it to rejoin (REBALANCE_IN_PROGRESS) when the group moved on, when it
must revoke, or when the partitions it waits for are free; it is fenced when it does not
rejoin or sync within its rebalance timeout, or its session expires. The online migration
(``group.consumer.migration.policy``, :mod:`kafkacore.server.group.migration`): a
ConsumerGroupHeartbeat joining a classic group with members converts it (upgrade); when
the last consumer-protocol member leaves a group of classic members, it becomes a classic
group again and rebalances (downgrade). Per-group dynamic configs
(``consumer.session.timeout.ms``, ``consumer.heartbeat.interval.ms``,
``consumer.assignment.interval.ms``) override the broker's
(:class:`~kafkacore.server.group_configs.GroupConfigs`).

Event loop only."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from kafkacore._java import JavaException, TimelineHashMap
from kafkacore.coordinator import records as recs
from kafkacore.coordinator.assignor import (
    ASSIGNORS,
    PartitionAssignor,
    PartitionAssignorError,
    Partitions,
    SubscriptionType,
)
from kafkacore.coordinator.consumer_group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    FencedMemberEpoch,
    MemberState,
    Record,
    ResolvedRegex,
    compute_next_assignment,
    current_assignment_record,
    current_assignment_tombstone,
    group_epoch_record,
    group_hash,
    group_tombstones,
    has_assigned_partitions_changed,
    member_subscription_record,
    member_subscription_tombstone,
    partition_metadata_tombstone,
    regex_record,
    regex_tombstone,
    target_assignment,
    target_assignment_record,
    target_assignment_tombstone,
    topic_hash,
)
from kafkacore.coordinator.runtime import append_error_code
from kafkacore.coordinator.topic_regex import (
    InvalidTopicRegex,
    compile_topic_regex,
    matching_topics,
)
from kafkacore.log.checkpoints import random_uuid, uuid_to_base64
from kafkacore.metadata import MetadataCache
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from kafkacore.server.group.group import EMPTY, Group, JoinResult, join_error
from kafkacore.server.group.migration import (
    ConversionError,
    MigrationPolicy,
    classic_group_from_consumer_group,
    consumer_group_records_from_classic,
    subscription_of,
    tombstones_with_replaced_member,
)

if TYPE_CHECKING:
    from kafkacore.server.group.coordinator import GroupCoordinator
    from kafkacore.server.group.shard import GroupShard

__all__ = [
    "CacheImage",
    "ConsumerGroupCoordinator",
    "GroupDescription",
    "GroupError",
    "HeartbeatResponse",
    "compile_regex",
    "group_version",
    "session_key",
]

_T = TypeVar("_T")

logger = logging.getLogger("kafkacore.server.group")


def group_version(cache: MetadataCache) -> int:
    """The finalized ``group.version`` feature level (0 when not finalized; a new
    cluster finalizes Kafka 4.3.1's default, 1)."""
    return cache.features.group_version


class GroupError(Exception):
    """A Kafka ``ApiException`` of the group coordinator: its code and message."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message


@dataclass
class Write(Generic[_T]):
    """What a write operation computed (Kafka's ``CoordinatorResult``): ``records`` to
    append, the ``answer``, ``applied`` to run once the records are replayed (a group
    converted from one protocol to the other is installed then) and ``committed`` once
    they are committed (a JoinGroup's timers, as Kafka's append future)."""

    records: list[Record]
    answer: _T
    applied: Callable[[], None] | None = None
    committed: Callable[[], None] | None = None


@dataclass
class HeartbeatResponse:
    """ConsumerGroupHeartbeat's answer: ``assignment`` ``None`` when not sent."""

    error_code: int = 0
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: list[tuple[uuid.UUID, list[int]]] | None = None


@dataclass
class GroupDescription:
    """One group as ConsumerGroupDescribe describes it (``ConsumerGroup.asDescribedGroup``),
    or its error (``error_code`` set; the rest left empty)."""

    group_id: str
    error_code: int = 0
    error_message: str | None = None
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: list[ConsumerGroupMember] = field(default_factory=list)
    #: each member's target assignment, by member id
    targets: dict[str, Partitions] = field(default_factory=dict)


def _java_trim_empty(value: str | None) -> bool:
    """Kafka's ``throwIfEmptyString`` test: non-null and blank after ``String.trim``."""
    return value is not None and not value.strip("".join(chr(c) for c in range(33)))


class CacheImage:
    """The broker's metadata cache as Kafka's ``CoordinatorMetadataImage``."""

    def __init__(self, cache: MetadataCache) -> None:
        self.cache = cache

    def topic_id(self, name: str) -> uuid.UUID | None:
        topic = self.cache.topic(name)
        return None if topic is None else topic.topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self.cache.topic_by_id(topic_id)
        return None if topic is None else topic.name

    def partition_count(self, topic_id: uuid.UUID) -> int:
        topic = self.cache.topic_by_id(topic_id)
        return -1 if topic is None else topic.partition_count

    def partition_racks(self, topic_id: uuid.UUID, partition: int) -> list[str]:
        topic = self.cache.topic_by_id(topic_id)
        if topic is None or partition >= topic.partition_count:
            return []
        racks = []
        for broker_id in topic.partitions[partition].replicas:
            broker = self.cache.broker(broker_id)
            if broker is not None and broker.rack is not None:
                racks.append(broker.rack)
        return racks

    def topic_names(self) -> list[str]:
        return [t.name for t in self.cache.topics()]

    @property
    def generation(self) -> int:
        """Moves whenever topics, their partitions or replicas change."""
        generation: int = self.cache.topics_generation
        return generation

    @property
    def new_topic_ms(self) -> int:
        """When a topic name last appeared (Kafka's ``lastMetadataImageWithNewTopics``)."""
        appeared: int = self.cache.new_topic_ms
        return appeared


def new_member_id() -> str:
    """A member id the coordinator makes up: Kafka's ``Uuid.randomUuid().toString()``
    (22 URL-safe base64 characters, never starting with ``-``)."""
    return uuid_to_base64(random_uuid())


def session_key(group_id: str, member_id: str) -> str:
    return f"session-timeout-{group_id}-{member_id}"


def rebalance_key(group_id: str, member_id: str) -> str:
    return f"rebalance-timeout-{group_id}-{member_id}"


def join_key(group_id: str, member_id: str) -> str:
    return f"join-{group_id}-{member_id}"


def sync_key(group_id: str, member_id: str) -> str:
    return f"sync-{group_id}-{member_id}"


def assignment_key(group_id: str) -> str:
    return f"{group_id}-assignment"


def regex_key(group_id: str) -> str:
    return f"{group_id}-regex"


REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000


class ConsumerGroupCoordinator:
    """Kafka's ``GroupMetadataManager`` for consumer groups (see the module docs).
    Owned by the :class:`~kafkacore.server.group.coordinator.GroupCoordinator`, whose
    runtime and shards it shares."""

    def __init__(self, groups: GroupCoordinator) -> None:
        self.groups = groups
        self.config = groups.config
        self.runtime = groups.runtime
        self.topic = groups.topic
        self.image = CacheImage(groups.replicas.cache)
        self.assignors: dict[str, PartitionAssignor] = {}
        for name in self.config.group_consumer_assignors:
            factory = ASSIGNORS.get(name)
            if factory is not None:
                self.assignors[name] = factory()
        self.default_assignor = next(iter(self.assignors), "uniform")
        self.migration = MigrationPolicy.parse(self.config.group_consumer_migration_policy)
        self._topic_hashes: dict[str, tuple[int, int]] = {}
        """Kafka's ``topicHashCache``: each topic's hash and the generation it is of."""
        self._regex_tasks: set[asyncio.Task[None]] = set()

    # -- gating ----------------------------------------------------------------------------

    def enabled(self) -> bool:
        """Kafka's ``isConsumerGroupProtocolEnabled``: ``group.version`` >= 1 and
        "consumer" in ``group.coordinator.rebalance.protocols``."""
        protocols = self.config.group_coordinator_rebalance_protocols
        return group_version(self.groups.replicas.cache) >= 1 and "consumer" in protocols

    # -- lookup ----------------------------------------------------------------------------

    def _index(self, group_id: str) -> int:
        return self.topic.partition_for(group_id)

    def _shard(self, group_id: str) -> GroupShard | None:
        return self.runtime.shard(self._index(group_id))

    def group(self, group_id: str) -> ConsumerGroup | None:
        shard = self._shard(group_id)
        return None if shard is None else shard.consumer_groups.get(group_id)

    def all_groups(self) -> list[ConsumerGroup]:
        return [g for shard in self.runtime.shards() for g in shard.consumer_groups.values()]

    def heartbeat_interval_ms(self, group_id: str) -> int:
        """``consumer.heartbeat.interval.ms`` of the group, else the broker's."""
        return self.groups.consumer_settings(group_id).heartbeat_interval_ms

    def session_timeout_ms(self, group_id: str) -> int:
        """``consumer.session.timeout.ms`` of the group, else the broker's."""
        return self.groups.consumer_settings(group_id).session_timeout_ms

    def assignment_interval_ms(self, group_id: str) -> int:
        """``consumer.assignment.interval.ms`` of the group, else the broker's."""
        return self.groups.consumer_settings(group_id).assignment_interval_ms

    def now_ms(self) -> int:
        return int(self.groups.clock())

    # -- writes ----------------------------------------------------------------------------

    async def _write(
        self, group_id: str, operation: Callable[[], tuple[list[Record], _T] | Write[_T]]
    ) -> _T:
        """Kafka's ``scheduleWriteOperation`` for one group: under the partition's lock,
        ``operation`` computes its records and answer (a :class:`Write`, or a pair)
        against the current state, the records are appended and replayed (then its
        ``applied``); the answer comes once they are committed (then its ``committed``).
        An operation without records answers once every earlier write is committed, so
        no answer reflects what a failover could lose."""
        index = self._index(group_id)
        async with self.runtime.partition_lock(index):
            code = self.runtime.partition_error(index)
            if code:
                raise GroupError(code)
            result = operation()
            write = result if isinstance(result, Write) else Write(*result)
            end = -1
            if write.records:
                try:
                    end = await self.runtime.append_uncommitted(index, write.records)
                except Exception as exc:
                    raise GroupError(append_error_code(exc)) from exc
                shard = self.runtime.shard(index)
                if shard is not None:
                    for key, value in write.records:
                        shard.replay_consumer_record(key, value)
            if write.applied is not None:
                write.applied()
        try:
            if end >= 0:
                await self.runtime.await_committed(index, end)
            else:
                await self.runtime.await_written(index)
        except Exception as exc:
            raise GroupError(append_error_code(exc)) from exc
        if write.committed is not None:
            write.committed()
        return write.answer

    # -- ConsumerGroupHeartbeat ------------------------------------------------------------

    def validate_heartbeat(self, version: int, request: ConsumerGroupHeartbeatRequest) -> None:
        """``GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid``."""
        epoch = request.member_epoch
        named = version >= 1 or epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH
        if named and _java_trim_empty(request.member_id):
            raise GroupError(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        if _java_trim_empty(request.group_id):
            raise GroupError(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
        if _java_trim_empty(request.instance_id):
            raise GroupError(ErrorCode.INVALID_REQUEST, "InstanceId can't be empty.")
        if _java_trim_empty(request.rack_id):
            raise GroupError(ErrorCode.INVALID_REQUEST, "RackId can't be empty.")
        regex = request.subscribed_topic_regex if version >= 1 else None
        if epoch == 0:
            if request.rebalance_timeout_ms == -1:
                raise GroupError(
                    ErrorCode.INVALID_REQUEST,
                    "RebalanceTimeoutMs must be provided in first request.",
                )
            if request.topic_partitions is None or request.topic_partitions:
                raise GroupError(
                    ErrorCode.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."
                )
            if request.subscribed_topic_names is None and regex is None:
                raise GroupError(
                    ErrorCode.INVALID_REQUEST,
                    "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                    "(re-)joining.",
                )
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if request.instance_id is None:
                raise GroupError(ErrorCode.INVALID_REQUEST, "InstanceId can't be null.")
        elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise GroupError(ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")
        if request.server_assignor is not None and request.server_assignor not in self.assignors:
            raise GroupError(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: "
                f"{', '.join(self.assignors)}.",
            )

    async def heartbeat(
        self, version: int, request: ConsumerGroupHeartbeatRequest, client_id: str, client_host: str
    ) -> HeartbeatResponse:
        """One ConsumerGroupHeartbeat; errors come back as the response's code."""
        try:
            self.validate_heartbeat(version, request)
            code = self.runtime.partition_error(self._index(request.group_id))
            if code:
                raise GroupError(code)
            return await self._write(
                request.group_id,
                lambda: self._heartbeat(version, request, client_id, client_host),
            )
        except GroupError as exc:
            return HeartbeatResponse(error_code=exc.code, error_message=exc.message)

    def _get_or_create_group(
        self, group_id: str, create: bool, records: list[Record]
    ) -> ConsumerGroup:
        """``getOrMaybeCreateConsumerGroup``: an empty classic group (also one known by
        offsets only) becomes a consumer group (its tombstone; its offsets stay); a classic
        group with members is converted (the online upgrade, :meth:`_convert_to_consumer`)
        when joining. The group returned for a new or converted group is not installed:
        the records, replayed after the append, make the one that is."""
        shard = self._shard(group_id)
        assert shard is not None
        group = shard.consumer_groups.get(group_id)
        if group is not None:
            return group
        classic = shard.groups.get(group_id)
        if not create:
            if classic is not None:
                raise GroupError(
                    ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group."
                )
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        if classic is not None and not classic.members and classic.state is EMPTY:
            records.append((recs.group_metadata_key(group_id), None))
            logger.info(
                "[GroupId %s] Converted the empty classic group to a consumer group.", group_id
            )
            return ConsumerGroup(group_id)
        if classic is not None:
            self._validate_online_upgrade(classic)
            return self._convert_to_consumer(classic, records)
        return ConsumerGroup(group_id)

    def _validate_online_upgrade(self, classic: Group) -> None:
        """``validateOnlineUpgrade``: GROUP_ID_NOT_FOUND unless the policy allows an
        upgrade, the group uses the consumer embedded protocol and fits
        ``group.consumer.max.size``."""
        group_id = classic.group_id
        reason = None
        if not self.migration.upgrade_enabled:
            reason = "online upgrade is disabled"
        elif classic.protocol_type != recs.CONSUMER_PROTOCOL_TYPE:
            reason = "the group does not use the consumer embedded protocol"
        elif len(classic.members) > self.config.group_consumer_max_size:
            reason = "the group size exceeds the consumer group maximum size"
        if reason is not None:
            logger.info(
                "Cannot upgrade classic group %s to consumer group because %s.", group_id, reason
            )
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Cannot upgrade classic group {group_id} to consumer group because {reason}.",
            )

    def _convert_to_consumer(self, classic: Group, records: list[Record]) -> ConsumerGroup:
        """``convertToConsumerGroup``: the classic members waiting in JoinGroup or
        SyncGroup are told REBALANCE_IN_PROGRESS (they rejoin the consumer group), the
        classic group's tombstone, then the records of the consumer group made of its
        members (:func:`migration.consumer_group_records_from_classic`), replayed into the
        group returned; each member's session starts with its classic session timeout."""
        group_id = classic.group_id
        try:
            converted = consumer_group_records_from_classic(
                classic, self.image, lambda topics: self._metadata_hash(dict.fromkeys(topics))
            )
        except ConversionError as exc:
            raise GroupError(exc.code, exc.message) from exc
        self.groups.interrupt_rebalance(classic, ErrorCode.REBALANCE_IN_PROGRESS)
        records.append((recs.group_metadata_key(group_id), None))
        records.extend(converted)
        group = ConsumerGroup(group_id)
        for key, value in converted:
            decoded = recs.decode_record(key, value)
            group.replay(decoded.type, decoded.key, decoded.value)
        for member in group.members.values():
            assert member.classic is not None
            self._schedule_session(group_id, member.member_id, member.classic.session_timeout_ms)
        logger.info("[GroupId %s] Converted the classic group to a consumer group.", group_id)
        return group

    def _heartbeat(
        self, version: int, request: ConsumerGroupHeartbeatRequest, client_id: str, client_host: str
    ) -> tuple[list[Record], HeartbeatResponse] | Write[HeartbeatResponse]:
        epoch = request.member_epoch
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(request.group_id, request.instance_id, request.member_id, epoch)
        group_id = request.group_id
        now = self.now_ms()
        records: list[Record] = []
        create = epoch == 0
        group = self._get_or_create_group(group_id, create, records)
        member_id = request.member_id
        self._throw_if_full(group, member_id)
        if not member_id:
            member_id = new_member_id()
        owned = _owned(request.topic_partitions)
        if request.instance_id is None:
            member = self._dynamic_member(group, member_id, epoch, owned, create)
        else:
            member = self._static_member(
                group, member_id, epoch, request.instance_id, owned, create, records
            )

        regex = request.subscribed_topic_regex if version >= 1 else None
        updated = replace(
            member,
            instance_id=request.instance_id
            if request.instance_id is not None
            else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(
                request.rebalance_timeout_ms
                if request.rebalance_timeout_ms != -1
                else member.rebalance_timeout_ms
            ),
            server_assignor=(
                request.server_assignor
                if request.server_assignor is not None
                else member.server_assignor
            ),
            subscribed_topic_names=(
                frozenset(request.subscribed_topic_names)
                if request.subscribed_topic_names is not None
                else member.subscribed_topic_names
            ),
            subscribed_topic_regex=regex if regex is not None else member.subscribed_topic_regex,
            client_id=client_id,
            client_host=client_host,
            classic=None,
        )
        names_changed = False
        if not updated.same_subscription_record(member):
            records.append(member_subscription_record(group_id, updated))
            names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
        regex_status = self._maybe_update_regexes(group, member, updated, records, now)
        has_subscription_changed = names_changed or regex_status != _REGEX_NO_CHANGE
        group_epoch = group.group_epoch
        bump = group_epoch == 0 or names_changed or regex_status == _REGEX_RESOLVED
        group_epoch, subscription_type = self._update_subscription_metadata(
            group, bump, member, updated, records
        )
        target_epoch, target = self._maybe_update_target(
            group, group_epoch, member, updated, subscription_type, records, now
        )
        updated = self._maybe_reconcile(
            group, updated, target_epoch, target, has_subscription_changed, owned, records
        )
        self._schedule_session(group_id, member_id)
        response = HeartbeatResponse(
            member_id=updated.member_id,
            member_epoch=updated.member_epoch,
            heartbeat_interval_ms=self.heartbeat_interval_ms(group_id),
        )
        full = (
            request.rebalance_timeout_ms != -1
            and (request.subscribed_topic_names is not None or regex is not None)
            and request.topic_partitions is not None
        )
        if epoch == 0 or full or has_assigned_partitions_changed(member, updated):
            response.assignment = [(t, list(ps)) for t, ps in updated.assigned.items()]
        return records, response

    def _throw_if_full(self, group: ConsumerGroup, member_id: str) -> None:
        limit = self.config.group_consumer_max_size
        if len(group.members) >= limit and (not member_id or member_id not in group.members):
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The consumer group has reached its maximum capacity of {limit} members.",
            )

    def _member_or_throw(self, group: ConsumerGroup, member_id: str) -> ConsumerGroupMember:
        member = group.member(member_id)
        if member is None:
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {member_id} is not a member of group {group.group_id}.",
            )
        return member

    @staticmethod
    def _check_epoch(
        member: ConsumerGroupMember, epoch: int, owned: list[tuple[uuid.UUID, list[int]]] | None
    ) -> None:
        """``throwIfConsumerGroupMemberEpochIsInvalid``."""
        if epoch == 0:
            return
        if epoch > member.member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a greater member epoch ({epoch}) than the one "
                f"known by the group coordinator ({member.member_epoch}). The member must "
                "abandon all its partitions and rejoin.",
            )
        if epoch < member.member_epoch and (
            epoch != member.previous_member_epoch or not _is_subset(owned, member)
        ):
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch ({epoch}) than the "
                f"one known by the group coordinator ({member.member_epoch}). The member "
                "must abandon all its partitions and rejoin.",
            )

    def _dynamic_member(
        self,
        group: ConsumerGroup,
        member_id: str,
        epoch: int,
        owned: list[tuple[uuid.UUID, list[int]]] | None,
        create: bool,
        classic: bool = False,
    ) -> ConsumerGroupMember:
        """``getOrMaybeSubscribeDynamicConsumerGroupMember`` (a ``classic`` member's
        epoch is its generation, checked by JoinGroup's caller, not here)."""
        member = group.member(member_id)
        if member is None:
            if not create:
                self._member_or_throw(group, member_id)
            member = ConsumerGroupMember(member_id)
        if not classic:
            self._check_epoch(member, epoch, owned)
        if create:
            logger.info(
                "[GroupId %s] Member %s joins the consumer group using the %s protocol.",
                group.group_id,
                member_id,
                "classic" if classic else "consumer",
            )
        return member

    def _static_member(
        self,
        group: ConsumerGroup,
        member_id: str,
        epoch: int,
        instance_id: str,
        owned: list[tuple[uuid.UUID, list[int]]] | None,
        create: bool,
        records: list[Record],
        classic: bool = False,
    ) -> ConsumerGroupMember:
        """``getOrMaybeSubscribeStaticConsumerGroupMember``: a new static member, a
        rejoining one replacing the member that held its instance id (a member of the
        consumer protocol replacing another only once that one left temporarily), or the
        known one."""
        protocol = "classic" if classic else "consumer"
        existing = group.static_member(instance_id)
        if create:
            if existing is None:
                member = group.member(member_id) or ConsumerGroupMember(member_id)
                logger.info(
                    "[GroupId %s] Static member %s with instance id %s joins the consumer group "
                    "using the %s protocol.",
                    group.group_id,
                    member_id,
                    instance_id,
                    protocol,
                )
                return member
            unreleased = existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH
            if not classic and not existing.uses_classic_protocol and unreleased:
                raise GroupError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} cannot join the "
                    f"group because the instance id is owned by {existing.member_id} member.",
                )
            new = replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0)
            # replaceMember: the old member's tombstones, then the new member with the old
            # one's target assignment and current assignment
            records.append(current_assignment_tombstone(group.group_id, existing.member_id))
            records.append(target_assignment_tombstone(group.group_id, existing.member_id))
            records.append(member_subscription_tombstone(group.group_id, existing.member_id))
            records.append(member_subscription_record(group.group_id, new))
            records.append(
                target_assignment_record(
                    group.group_id, member_id, group.target_assignment_of(existing.member_id)
                )
            )
            records.append(current_assignment_record(group.group_id, new))
            logger.info(
                "[GroupId %s] Static member with instance id %s re-joins the consumer group "
                "using the %s protocol. Created a new member %s to replace the existing "
                "member %s.",
                group.group_id,
                instance_id,
                protocol,
                member_id,
                existing.member_id,
            )
            return new
        if existing is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise GroupError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance_id} was fenced by member "
                f"{existing.member_id}.",
            )
        if not classic:
            self._check_epoch(existing, epoch, owned)
        return existing

    def _update_subscription_metadata(
        self,
        group: ConsumerGroup,
        bump: bool,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        records: list[Record],
    ) -> tuple[int, SubscriptionType]:
        """``updateSubscriptionMetadata`` when ``bump`` or the group's metadata expired
        (the topics moved since it was computed, Kafka's ``hasMetadataExpired``): the
        metadata hash of the subscribed topics with ``updated`` in, a new group epoch when
        it moved or ``bump``; and the subscription type."""
        regexes, counts = group.subscription_counts(extra=updated)
        members = len(group.members)
        if (
            updated.member_id not in group.members
            and group.static_member(updated.instance_id) is None
        ):
            members += 1
        subscription_type = group.subscription_type(regexes, counts, members)
        generation = self.image.generation
        if not bump and not group.has_metadata_expired(generation):
            return group.group_epoch, subscription_type
        metadata_hash = self._metadata_hash(counts)
        epoch = group.group_epoch
        if metadata_hash != group.metadata_hash:
            bump = True
        if bump:
            epoch += 1
            records.append(group_epoch_record(group.group_id, epoch, metadata_hash))
            logger.info(
                "[GroupId %s] Bumped group epoch to %d with metadata hash %d.",
                group.group_id,
                epoch,
                metadata_hash,
            )
        if group.has_partition_metadata_record:
            records.append(partition_metadata_tombstone(group.group_id))
        group.metadata_refresh = (generation, epoch)
        return epoch, subscription_type

    def _metadata_hash(self, counts: Mapping[str, object]) -> int:
        """``ModernGroup.computeMetadataHash`` of the topics named in ``counts`` that exist,
        each topic's hash cached until the topics move."""
        generation = self.image.generation
        hashes = {}
        for name in counts:
            cached = self._topic_hashes.get(name)
            if cached is None or cached[0] != generation:
                if self.image.topic_id(name) is None:
                    continue
                cached = (generation, topic_hash(self.image, name))
                self._topic_hashes[name] = cached
            hashes[name] = cached[1]
        return group_hash(hashes)

    def _assignor(
        self, group: ConsumerGroup, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> PartitionAssignor:
        name = group.preferred_assignor(old, new) or self.default_assignor
        return self.assignors.get(name) or self.assignors[self.default_assignor]

    def _maybe_update_target(
        self,
        group: ConsumerGroup,
        group_epoch: int,
        member: ConsumerGroupMember | None,
        updated: ConsumerGroupMember,
        subscription_type: SubscriptionType,
        records: list[Record],
        now: int,
    ) -> tuple[int, Partitions]:
        """``maybeUpdateTargetAssignment``: a new target when the group epoch is ahead of
        the assignment epoch, unless ``group.consumer.assignment.interval.ms`` since the
        last one has not passed (then the last target stands and the next is computed
        when it has)."""

        def last() -> tuple[int, Partitions]:
            return group.assignment_epoch, self._target_of(group, updated)

        if group.assignment_epoch >= group_epoch:
            return last()
        interval = self.assignment_interval_ms(group.group_id)
        since = group.assignment_timestamp
        if since != 0 and interval != 0 and now < since + interval:
            self._schedule_delayed_assignment(group.group_id, since + interval - now)
            return last()
        try:
            new_records, result = target_assignment(
                group,
                group_epoch,
                self._assignor(group, member, updated),
                self.image,
                subscription_type,
                updated,
                self._replaced(group, updated),
                now,
            )
        except PartitionAssignorError as exc:
            raise GroupError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"Failed to compute a new target assignment for epoch {group_epoch}: {exc}",
            ) from exc
        records.extend(new_records)
        return group_epoch, result.get(updated.member_id, {})

    @staticmethod
    def _replaced(group: ConsumerGroup, updated: ConsumerGroupMember) -> list[str]:
        previous = group.static_members.get(updated.instance_id) if updated.instance_id else None
        return [previous] if previous is not None and previous != updated.member_id else []

    @staticmethod
    def _target_of(group: ConsumerGroup, member: ConsumerGroupMember) -> Partitions:
        """``ConsumerGroup.targetAssignment(memberId, instanceId)``: the member's, else the
        static member's it replaces."""
        if member.member_id in group.target:
            return group.target[member.member_id]
        previous = group.static_members.get(member.instance_id) if member.instance_id else None
        if previous is not None:
            return group.target.get(previous, {})
        return {}

    def _maybe_reconcile(
        self,
        group: ConsumerGroup,
        member: ConsumerGroupMember,
        target_epoch: int,
        target: Partitions,
        has_subscription_changed: bool,
        owned: list[tuple[uuid.UUID, list[int]]] | None,
        records: list[Record],
    ) -> ConsumerGroupMember:
        if not has_subscription_changed and member.is_reconciled_to(target_epoch):
            return member
        try:
            updated = compute_next_assignment(
                member,
                target_epoch=target_epoch,
                target=target,
                has_subscription_changed=has_subscription_changed,
                regexes=group.resolved_regexes,
                image=self.image,
                current_partition_epoch=group.current_partition_epoch,
                owned=owned,
            )
        except FencedMemberEpoch as exc:
            raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH, str(exc)) from exc
        if not updated.same_as(member):
            records.append(current_assignment_record(group.group_id, updated))
            if updated.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(
                    group.group_id,
                    updated.member_id,
                    updated.member_epoch,
                    updated.rebalance_timeout_ms,
                )
            else:
                self.runtime.cancel_timer(
                    self._index(group.group_id), rebalance_key(group.group_id, updated.member_id)
                )
        return updated

    # -- leaving and fencing ---------------------------------------------------------------

    def _leave(
        self, group_id: str, instance_id: str | None, member_id: str, epoch: int
    ) -> tuple[list[Record], HeartbeatResponse] | Write[HeartbeatResponse]:
        group = self._get_or_create_group(group_id, False, [])
        response = HeartbeatResponse(member_id=member_id, member_epoch=epoch)
        if instance_id is None:
            member = self._member_or_throw(group, member_id)
            logger.info("[GroupId %s] Member %s left the consumer group.", group_id, member_id)
            return self._fence(group, [member], response)
        member_or_none = group.static_member(instance_id)
        if member_or_none is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        member = member_or_none
        if member.member_id != member_id:
            raise GroupError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance_id} was fenced by member "
                f"{member.member_id}.",
            )
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            leaving = replace(
                member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation={}
            )
            return [current_assignment_record(group_id, leaving)], HeartbeatResponse(
                member_id=member.member_id, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH
            )
        return self._fence(group, [member], response)

    def _fence(
        self, group: ConsumerGroup, members: Sequence[ConsumerGroupMember], answer: _T
    ) -> Write[_T]:
        """``consumerGroupFenceMembers``: each member's tombstones, the regexes only they
        used, and a new group epoch; or, when the members leaving are its last
        consumer-protocol members and the policy allows it, the group becomes a classic
        group of its remaining classic members (the online downgrade), which rebalances."""
        if not members:
            return Write([], answer)
        if self._can_downgrade_fencing(group, members):
            return self._convert_to_classic(
                group,
                [m.member_id for m in members],
                None,
                answer,
                f"Downgrade group {group.group_id} from consumer to classic for member leaving.",
            )
        records: list[Record] = []
        for m in members:
            records.append(current_assignment_tombstone(group.group_id, m.member_id))
            records.append(target_assignment_tombstone(group.group_id, m.member_id))
            records.append(member_subscription_tombstone(group.group_id, m.member_id))
        used: dict[str, int] = {}
        for m in members:
            if m.subscribed_topic_regex:
                used[m.subscribed_topic_regex] = used.get(m.subscribed_topic_regex, 0) + 1
        all_counts = group.subscribed_regexes()
        deleted = []
        for regex, count in used.items():
            if all_counts.get(regex) == count:
                records.append(regex_tombstone(group.group_id, regex))
                deleted.append(regex)
        _regexes, counts = group.subscription_counts(
            without=[m.member_id for m in members], dropped_regexes=deleted
        )
        epoch = group.group_epoch + 1
        metadata_hash = self._metadata_hash(counts)
        records.append(group_epoch_record(group.group_id, epoch, metadata_hash))
        logger.info(
            "[GroupId %s] Bumped group epoch to %d with metadata hash %d.",
            group.group_id,
            epoch,
            metadata_hash,
        )
        for m in members:
            self._cancel_timers(group.group_id, m.member_id)
        return Write(records, answer)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        index = self._index(group_id)
        for key in (session_key, rebalance_key, join_key, sync_key):
            self.runtime.cancel_timer(index, key(group_id, member_id))

    def _can_downgrade_fencing(
        self, group: ConsumerGroup, fenced: Sequence[ConsumerGroupMember]
    ) -> bool:
        """``validateOnlineDowngradeWithFencedMembers``: only classic members would
        remain, at least one, the policy allows a downgrade, and they fit
        ``group.max.size``."""
        remaining = [
            m for mid, m in group.members.items() if mid not in {f.member_id for f in fenced}
        ]
        if not all(m.uses_classic_protocol for m in remaining):
            return False
        if not remaining:
            logger.debug(
                "Skip downgrading the consumer group %s to classic group because it's empty.",
                group.group_id,
            )
            return False
        return self._downgrade_allowed(group, len(remaining))

    def _downgrade_allowed(self, group: ConsumerGroup, size: int) -> bool:
        if not self.migration.downgrade_enabled:
            logger.info(
                "Cannot downgrade consumer group %s to classic group because the online "
                "downgrade is disabled.",
                group.group_id,
            )
            return False
        if size > self.config.group_max_size:
            logger.info(
                "Cannot downgrade consumer group %s to classic group because its group size "
                "is greater than classic group max size.",
                group.group_id,
            )
            return False
        return True

    def _convert_to_classic(
        self,
        group: ConsumerGroup,
        leaving: Sequence[str],
        joining: ConsumerGroupMember | None,
        answer: _T,
        rebalance_reason: str | None,
    ) -> Write[_T]:
        """``convertToClassicGroup``: the consumer group's tombstones (with ``joining``,
        the static member it replaced is tombstoned under its id), then the classic
        group's metadata record (:func:`migration.classic_group_from_consumer_group`).
        Once replayed, the classic group is installed as built (every member with all its
        protocols), their sessions start, and with a ``rebalance_reason`` it rebalances."""
        group_id = group.group_id
        try:
            classic = classic_group_from_consumer_group(
                group, leaving, joining, self.image, self.now_ms()
            )
        except ConversionError as exc:
            raise GroupError(exc.code, exc.message) from exc
        if joining is None:
            records = group_tombstones(group)
        else:
            replaced = group.static_member(joining.instance_id)
            assert replaced is not None, "joining member must be a static member"
            records = tombstones_with_replaced_member(group, replaced.member_id, joining.member_id)
        records.append(self.groups.group_metadata_record(classic))
        for member_id in list(group.members):
            self._cancel_timers(group_id, member_id)
        if joining is not None:
            self._cancel_timers(group_id, joining.member_id)

        def install() -> None:
            self.groups.install_converted(classic, rebalance_reason)
            logger.info("[GroupId %s] Converted the consumer group to a classic group.", group_id)

        return Write(records, answer, applied=install)

    async def _fence_operation(
        self, group_id: str, member_id: str, reason: str, epoch: int | None = None
    ) -> None:
        def operation() -> Write[None]:
            group = self.group(group_id)
            if group is None:
                return Write([], None)
            member = group.member(member_id)
            if member is None or (epoch is not None and member.member_epoch != epoch):
                return Write([], None)
            logger.info(
                "[GroupId %s] Member %s fenced from the group because %s.",
                group_id,
                member_id,
                reason,
            )
            return self._fence(group, [member], None)

        try:
            await self._write(group_id, operation)
        except GroupError as exc:
            logger.info(
                "Could not fence %s of %s: %s", member_id, group_id, ErrorCode(exc.code).name
            )

    def _schedule_session(
        self, group_id: str, member_id: str, timeout_ms: int | None = None
    ) -> None:
        self.runtime.schedule_timer(
            self._index(group_id),
            session_key(group_id, member_id),
            timeout_ms if timeout_ms is not None else self.session_timeout_ms(group_id),
            lambda: self._fence_operation(group_id, member_id, "the member session expired"),
        )

    def _schedule_rebalance_timeout(
        self, group_id: str, member_id: str, epoch: int, timeout_ms: int
    ) -> None:
        self.runtime.schedule_timer(
            self._index(group_id),
            rebalance_key(group_id, member_id),
            timeout_ms,
            lambda: self._fence_operation(
                group_id,
                member_id,
                f"it failed to transition from epoch {epoch} within {timeout_ms}ms",
                epoch,
            ),
        )

    def _schedule_delayed_assignment(self, group_id: str, delay_ms: int) -> None:
        self.runtime.schedule_timer(
            self._index(group_id),
            assignment_key(group_id),
            delay_ms,
            lambda: self._delayed_assignment(group_id),
            if_absent=True,
        )

    async def _delayed_assignment(self, group_id: str) -> None:
        """``computeDelayedTargetAssignment``: the target held back by the interval."""

        def operation() -> tuple[list[Record], None]:
            group = self.group(group_id)
            if group is None or not group.members or group.group_epoch <= group.assignment_epoch:
                return [], None
            regexes, counts = group.subscription_counts()
            kind = group.subscription_type(regexes, counts, len(group.members))
            records, _ = target_assignment(
                group,
                group.group_epoch,
                self._assignor(group, None, None),
                self.image,
                kind,
                None,
                (),
                self.now_ms(),
            )
            return records, None

        try:
            await self._write(group_id, operation)
        except GroupError as exc:
            logger.info("Could not compute the delayed assignment of %s: %s", group_id, exc.code)

    # -- regular expressions (RE2J semantics) ------------------------------------------------

    def _maybe_update_regexes(
        self,
        group: ConsumerGroup,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        records: list[Record],
        now: int,
    ) -> int:
        """``maybeUpdateRegularExpressions``: whether the member's regex changed (and is
        already resolved), and a background resolution when one is needed."""
        old_regex, new_regex = member.subscribed_topic_regex, updated.subscribed_topic_regex
        status = _REGEX_NO_CHANGE
        refresh = False
        if old_regex != new_regex:
            status = _REGEX_UPDATED
            counts = group.subscribed_regexes()
            if old_regex and counts.get(old_regex, 0) == 1 and member.member_id in group.members:
                records.append(regex_tombstone(group.group_id, old_regex))
            if new_regex:
                if counts.get(new_regex, 0) == 0:
                    compile_regex(new_regex)
                    refresh = True
                elif new_regex in group.resolved_regexes:
                    status = _REGEX_RESOLVED
            elif old_regex:
                status = _REGEX_RESOLVED
        wanted = group.subscribed_regexes()
        if old_regex and member.member_id in group.members:
            wanted[old_regex] = wanted.get(old_regex, 0) - 1
            if wanted[old_regex] <= 0:
                del wanted[old_regex]
        if new_regex:
            wanted[new_regex] = wanted.get(new_regex, 0) + 1
        if not refresh and not wanted:
            return status
        index = self._index(group.group_id)
        key = regex_key(group.group_id)
        if self.runtime.timer_scheduled(index, key) or any(
            t.get_name() == key for t in self._regex_tasks
        ):
            return status
        last = max((r.timestamp for r in group.resolved_regexes.values()), default=0)
        if now <= last + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS and not refresh:
            return status
        refresh = refresh or len(wanted) != len(group.resolved_regexes)
        refresh = refresh or group.last_resolved_regex_version() < self.image.new_topic_ms
        refresh = refresh or now > last + int(self.config.group_consumer_regex_refresh_interval_ms)
        if refresh and wanted:
            task = asyncio.get_running_loop().create_task(
                self._resolve_regexes(group.group_id, sorted(wanted)), name=key
            )
            self._regex_tasks.add(task)
            task.add_done_callback(self._regex_tasks.discard)
        return status

    async def _resolve_regexes(self, group_id: str, regexes: list[str]) -> None:
        """``TopicRegexResolver`` and ``handleRegularExpressionsResult``: the topics each
        regex matches (whole names, RE2 syntax), recorded; a new group epoch when a
        regex's topics changed."""
        await asyncio.sleep(0)
        version = self.image.new_topic_ms  # before the names: a topic made meanwhile counts
        names = frozenset(self.image.topic_names())
        now = self.now_ms()
        resolved = {r: ResolvedRegex(matching_topics(r, names), version, now) for r in regexes}

        def operation() -> tuple[list[Record], None]:
            group = self.group(group_id)
            if group is None:
                return [], None
            counts = group.subscribed_regexes()
            records: list[Record] = []
            bump = False
            for regex, new in resolved.items():
                if counts.get(regex, 0) == 0:
                    continue
                old = group.resolved_regexes.get(regex)
                if old is None or old.topics != new.topics:
                    bump = True
                records.append(regex_record(group_id, regex, new))
            if not records:
                return [], None
            shadow = TimelineHashMap(group.resolved_regexes.items())
            shadow.update({r: v for r, v in resolved.items() if counts.get(r, 0)})
            saved = group.resolved_regexes
            group.resolved_regexes = shadow
            try:
                _regexes, topic_counts = group.subscription_counts()
            finally:
                group.resolved_regexes = saved
            metadata_hash = self._metadata_hash(topic_counts)
            if metadata_hash != group.metadata_hash:
                bump = True
            if bump:
                records.append(group_epoch_record(group_id, group.group_epoch + 1, metadata_hash))
            return records, None

        try:
            await self._write(group_id, operation)
        except GroupError as exc:
            logger.info("Could not record the regexes of %s: %s", group_id, exc.code)

    # -- classic members of a consumer group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) --

    def serves_classic(self, group_id: str) -> bool:
        """A JoinGroup to ``group_id`` is the consumer group's (it has members)."""
        group = self.group(group_id)
        return group is not None and bool(group.members)

    async def classic_join(
        self,
        *,
        version: int,
        group_id: str,
        member_id: str,
        instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout: int,
        rebalance_timeout: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
    ) -> JoinResult | None:
        """``classicGroupJoinToConsumerGroup``: a classic member joins (or rejoins) the
        consumer group; answered once its records are committed, with its epoch as the
        generation and no leader (the coordinator assigns). ``None`` when the group is no
        longer a consumer group with members (the caller joins it as a classic one)."""

        def operation() -> Write[JoinResult]:
            group = self.group(group_id)
            if group is None or not group.members:
                raise _NotConsumerGroup
            return self._classic_join(
                group,
                version,
                member_id,
                instance_id,
                client_id,
                client_host,
                session_timeout,
                rebalance_timeout,
                protocol_type,
                protocols,
            )

        try:
            answer: JoinResult = await self._write(group_id, operation)
        except _NotConsumerGroup:
            return None
        except GroupError as exc:
            return join_error(exc.code, member_id)
        return answer

    def _classic_join(
        self,
        group: ConsumerGroup,
        version: int,
        member_id: str,
        instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout: int,
        rebalance_timeout: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
    ) -> Write[JoinResult]:
        group_id = group.group_id
        now = self.now_ms()
        if not self.migration.enabled:
            logger.info(
                "Cannot join the consumer group %s with the classic protocol because the group "
                "migration is disabled.",
                group_id,
            )
            raise GroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                f"Cannot join the consumer group {group_id} with the classic protocol because "
                "the group migration is disabled.",
            )
        unknown = member_id == ""
        if unknown:
            member_id = new_member_id()
        self._throw_if_full(group, member_id)
        if not _supports_classic(group, protocol_type, [name for name, _ in protocols]):
            raise GroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                f"Member {member_id}'s protocols are not supported.",
            )
        if version >= 4 and unknown and instance_id is None:
            logger.info(
                "[GroupId %s] Dynamic member with unknown member id joins the consumer group. "
                "Created a new member id %s and requesting the member to rejoin with this id.",
                group_id,
                member_id,
            )
            return Write([], join_error(ErrorCode.MEMBER_ID_REQUIRED, member_id))
        records: list[Record] = []
        if instance_id is None:
            member = self._dynamic_member(group, member_id, -1, [], True, classic=True)
        else:
            member = self._static_member(
                group, member_id, -1, instance_id, [], unknown, records, classic=True
            )
        replaced = group.static_member(instance_id)
        downgrade = replaced is not None and self._can_downgrade_replacing(group, replaced)
        try:
            view = subscription_of(protocols[0][1])
        except JavaException as exc:
            raise GroupError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                "Malformed embedded consumer protocol in subscription deserialization.",
            ) from exc
        updated = replace(
            member,
            instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=view.rack_id if view.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(
                rebalance_timeout if rebalance_timeout != -1 else member.rebalance_timeout_ms
            ),
            subscribed_topic_names=frozenset(view.topics),
            subscribed_topic_regex="",  # a classic member cannot subscribe by regex
            client_id=client_id,
            client_host=client_host,
            classic=ClassicMemberMetadata(session_timeout, tuple(protocols)),
        )
        names_changed = False
        if not updated.same_subscription_record(member):
            records.append(member_subscription_record(group_id, updated))
            names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
        regex_status = self._maybe_update_regexes(group, member, updated, records, now)
        bump = names_changed or regex_status != _REGEX_NO_CHANGE
        group_epoch, subscription_type = self._update_subscription_metadata(
            group, bump, member, updated, records
        )
        owned: list[tuple[uuid.UUID, list[int]]] = []
        for topic, partitions in view.owned:  # Utils.toTopicPartitions: unknown topics left out
            topic_id = self.image.topic_id(topic)
            if topic_id is not None:
                owned.append((topic_id, list(partitions)))
        write: Write[None] | None = None
        if downgrade:
            stale = group.assignment_epoch < group_epoch
            if not stale:
                updated = self._maybe_reconcile(
                    group,
                    updated,
                    group.assignment_epoch,
                    self._target_of(group, updated),
                    bump,
                    owned,
                    records,
                )
            write = self._convert_to_classic(
                group,
                [],
                updated,
                None,
                f"Downgrade group {group_id} from consumer to classic with stale assignment."
                if stale
                else None,
            )
            records.extend(write.records)
        else:
            target_epoch, target = self._maybe_update_target(
                group, group_epoch, member, updated, subscription_type, records, now
            )
            updated = self._maybe_reconcile(
                group, updated, target_epoch, target, bump, owned, records
            )
        answer = JoinResult(
            ErrorCode.NONE, updated.member_epoch, protocols[0][0], "", updated.member_id, []
        )
        joined_id = updated.member_id

        def committed() -> None:
            self.runtime.cancel_timer(self._index(group_id), join_key(group_id, joined_id))
            if not downgrade:
                self._schedule_session(group_id, joined_id, session_timeout)
                self._schedule_sync_timeout(group_id, joined_id, rebalance_timeout)

        return Write(
            records,
            answer,
            applied=write.applied if write is not None else None,
            committed=committed,
        )

    def _can_downgrade_replacing(self, group: ConsumerGroup, replaced: ConsumerGroupMember) -> bool:
        """``validateOnlineDowngradeWithReplacedMember``: a classic static member replaces
        the group's only consumer-protocol member."""
        if replaced.uses_classic_protocol:
            return False
        if not all(m.uses_classic_protocol for m in group.members.values() if m is not replaced):
            return False
        return self._downgrade_allowed(group, len(group.members))

    def _classic_member(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None
    ) -> ConsumerGroupMember:
        """``validateConsumerGroupMember`` then ``throwIfMemberDoesNotUseClassicProtocol``."""
        if instance_id is None:
            member = self._member_or_throw(group, member_id)
        else:
            found = group.static_member(instance_id)
            if found is None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member with instance id {instance_id} is not a member of group "
                    f"{group.group_id}.",
                )
            if found.member_id != member_id:
                raise GroupError(
                    ErrorCode.FENCED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} was fenced by "
                    f"member {found.member_id}.",
                )
            member = found
        if member.classic is None:
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {member.member_id} does not use the classic protocol.",
            )
        return member

    @staticmethod
    def _check_generation(member: ConsumerGroupMember, generation: int) -> None:
        if member.member_epoch != generation:
            raise GroupError(
                ErrorCode.ILLEGAL_GENERATION,
                f"The request generation id {generation} is not equal to the member epoch "
                f"{member.member_epoch} of member {member.member_id}.",
            )

    def _rebalance_needed(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        """``throwIfRebalanceInProgress``: the group moved on and the member, not revoking,
        must rejoin (within its rebalance timeout)."""
        if group.group_epoch > member.member_epoch and (
            member.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            self._schedule_join_timeout(group.group_id, member)
            raise GroupError(
                ErrorCode.REBALANCE_IN_PROGRESS,
                f"A new rebalance is triggered in group {group.group_id} and member "
                f"{member.member_id} should rejoin to catch up.",
            )

    async def classic_sync(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
    ) -> tuple[int, str | None, str | None, bytes]:
        """``classicGroupSyncToConsumerGroup``: a classic member's assignment, its current
        one in the consumer protocol's encoding at the version of its subscription."""

        def operation() -> Write[tuple[int, str | None, str | None, bytes]]:
            group = self.group(group_id)
            if group is None or not group.members:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)
            member = self._classic_member(group, member_id, instance_id)
            self._check_generation(member, generation)
            assert member.classic is not None
            name, metadata = member.classic.protocols[0]
            if protocol_type is not None and protocol_type != recs.CONSUMER_PROTOCOL_TYPE:
                raise GroupError(
                    ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                    f"The protocol type {protocol_type} from member {member_id} request is not "
                    f"equal to the group protocol type {recs.CONSUMER_PROTOCOL_TYPE}.",
                )
            if protocol_name is not None and protocol_name != name:
                raise GroupError(
                    ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                    f"The protocol name {protocol_name} from member {member_id} request is not "
                    f"equal to the protocol name {name} returned in the join response.",
                )
            self._rebalance_needed(group, member)
            assignment = recs.encode_consumer_assignment(
                [
                    (topic, list(ps))
                    for topic_id, ps in member.assigned.items()
                    if (topic := self.image.topic_name(topic_id)) is not None
                ],
                recs.consumer_protocol_version(metadata),
            )
            session = member.classic.session_timeout_ms

            def committed() -> None:
                self.runtime.cancel_timer(self._index(group_id), sync_key(group_id, member_id))
                self._schedule_session(group_id, member_id, session)

            return Write(
                [], (ErrorCode.NONE, protocol_type, protocol_name, assignment), None, committed
            )

        try:
            answer: tuple[int, str | None, str | None, bytes] = await self._write(
                group_id, operation
            )
        except GroupError as exc:
            return exc.code, None, None, b""
        return answer

    async def classic_heartbeat(
        self, group_id: str, generation: int, member_id: str, instance_id: str | None
    ) -> int:
        """``classicGroupHeartbeatToConsumerGroup``: REBALANCE_IN_PROGRESS (the member
        rejoins within its rebalance timeout) when the group epoch moved past the member's,
        when it must revoke, or when the partitions it waits for are free."""

        def operation() -> Write[int]:
            group = self.group(group_id)
            if group is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group_id} not found.")
            member = self._classic_member(group, member_id, instance_id)
            self._check_generation(member, generation)
            assert member.classic is not None
            self._schedule_session(group_id, member_id, member.classic.session_timeout_ms)
            code = ErrorCode.NONE
            if (
                member.member_epoch < group.group_epoch
                or member.state is MemberState.UNREVOKED_PARTITIONS
                or (
                    member.state is MemberState.UNRELEASED_PARTITIONS
                    and not _waiting_on_unreleased(group, member)
                )
            ):
                code = ErrorCode.REBALANCE_IN_PROGRESS
                self._schedule_join_timeout(group_id, member)
            return Write([], code)

        try:
            answer: int = await self._write(group_id, operation)
        except GroupError as exc:
            return exc.code
        return answer

    async def classic_leave(
        self, group_id: str, members: list[tuple[str, str | None]]
    ) -> tuple[int, list[int]]:
        """``classicGroupLeaveToConsumerGroup``: each named member (by member id, or by
        instance id for an administrative removal) is fenced, maybe downgrading the group;
        a code per member."""

        def operation() -> Write[tuple[int, list[int]]]:
            group = self.group(group_id)
            if group is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group_id} not found.")
            codes: list[int] = []
            leaving: dict[str, ConsumerGroupMember] = {}
            for leaving_id, leaving_instance in members:
                try:
                    if leaving_instance is None:
                        member = self._member_or_throw(group, leaving_id)
                    else:
                        found = group.static_member(leaving_instance)
                        if found is None:
                            raise GroupError(
                                ErrorCode.UNKNOWN_MEMBER_ID,
                                f"Instance id {leaving_instance} is unknown.",
                            )
                        if leaving_id and found.member_id != leaving_id:
                            raise GroupError(ErrorCode.FENCED_INSTANCE_ID)
                        member = found
                except GroupError as exc:
                    codes.append(exc.code)
                    continue
                logger.info(
                    "[GroupId %s] Member %s has left group through explicit `LeaveGroup` "
                    "request; client reason: not provided",
                    group_id,
                    member.member_id,
                )
                codes.append(ErrorCode.NONE)
                leaving[member.member_id] = member
            return self._fence(group, list(leaving.values()), (ErrorCode.NONE, codes))

        try:
            answer: tuple[int, list[int]] = await self._write(group_id, operation)
        except GroupError as exc:
            return exc.code, []
        return answer

    def _schedule_join_timeout(self, group_id: str, member: ConsumerGroupMember) -> None:
        """``scheduleConsumerGroupJoinTimeoutIfAbsent``: a classic member asked to rejoin
        is fenced if it does not within its rebalance timeout."""
        member_id = member.member_id
        self.runtime.schedule_timer(
            self._index(group_id),
            join_key(group_id, member_id),
            member.rebalance_timeout_ms,
            lambda: self._fence_operation(
                group_id,
                member_id,
                "the classic member failed to join within the rebalance timeout",
            ),
            if_absent=True,
        )

    def _schedule_sync_timeout(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        """``scheduleConsumerGroupSyncTimeout``: a classic member that joined is fenced if
        it does not sync within its rebalance timeout."""
        self.runtime.schedule_timer(
            self._index(group_id),
            sync_key(group_id, member_id),
            timeout_ms,
            lambda: self._fence_operation(
                group_id, member_id, "the member failed to sync within timeout"
            ),
        )

    # -- ConsumerGroupDescribe ---------------------------------------------------------------

    def describe(self, group_id: str) -> GroupDescription:
        """One DescribedGroup (``ConsumerGroup.asDescribedGroup``), or its error."""
        code = self.groups.coordinator_error(group_id)
        if code:
            return GroupDescription(group_id, error_code=code)
        group = self.group(group_id)
        if group is None or group.deleted:
            shard = self._shard(group_id)
            message = (
                f"Group {group_id} is not a consumer group."
                if shard is not None and group_id in shard.groups
                else f"Group {group_id} not found."
            )
            return GroupDescription(
                group_id, error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=message
            )
        return GroupDescription(
            group_id,
            group_state=str(group.state),
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=group.preferred_assignor(None, None) or self.default_assignor,
            members=list(group.members.values()),
            targets={m: group.target.get(m, {}) for m in group.members},
        )

    # -- offsets (ConsumerGroup.validateOffsetCommit/Fetch, KIP-1251) -------------------------

    def validate_offset_commit(
        self,
        group: ConsumerGroup,
        member_id: str,
        instance_id: str | None,
        member_epoch: int,
        api_version: int,
        partitions: Sequence[tuple[uuid.UUID | None, int]] = (),
        transactional: bool = False,
    ) -> int:
        """The group error of a commit (OffsetCommit or TxnOffsetCommit) to a consumer
        group, as Kafka 4.3.1's ``ConsumerGroup.validateOffsetCommit``: a commit without
        epoch to an empty group, or a transactional one without member, is accepted; an
        unknown member is UNKNOWN_MEMBER_ID; a consumer-protocol member's commit from a
        version below v9 UNSUPPORTED_VERSION (not for TxnOffsetCommit); the member's epoch
        is accepted, a greater one is STALE_MEMBER_EPOCH (ILLEGAL_GENERATION for a classic
        member), a lower one only for partitions assigned (or being revoked) at an
        assignment epoch at or below it (KIP-1251), else STALE_MEMBER_EPOCH."""
        if member_epoch < 0 and not group.members:
            return ErrorCode.NONE
        if transactional and member_epoch == -1 and not member_id and instance_id is None:
            return ErrorCode.NONE
        member = group.member(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and not member.uses_classic_protocol and api_version < 9:
            return ErrorCode.UNSUPPORTED_VERSION
        if member_epoch == member.member_epoch:
            return ErrorCode.NONE
        if member_epoch > member.member_epoch:
            if member.uses_classic_protocol:
                return ErrorCode.ILLEGAL_GENERATION
            return ErrorCode.STALE_MEMBER_EPOCH
        for topic_id, partition in partitions:
            if topic_id is None:
                return ErrorCode.STALE_MEMBER_EPOCH
            at = member.assignment_epoch(topic_id, partition)
            if at is None:
                at = member.pending_revocation_epoch(topic_id, partition)
            if at is None or at > member_epoch:
                return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    def validate_offset_fetch(
        self, group: ConsumerGroup, member_id: str | None, member_epoch: int
    ) -> int:
        """``ConsumerGroup.validateOffsetFetch``: a fetch with a member (v9+) must name a
        member of the group at its epoch."""
        if member_epoch < 0 and not member_id:
            return ErrorCode.NONE
        member = group.member(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    # -- loading -----------------------------------------------------------------------------

    def on_shard_loaded(self, shard: GroupShard) -> None:
        """``onLoaded``: every loaded member's session starts now; a member mid-revocation
        gets its rebalance timeout again."""
        for group in shard.consumer_groups.values():
            for member in group.members.values():
                self._schedule_session(
                    group.group_id,
                    member.member_id,
                    None if member.classic is None else member.classic.session_timeout_ms,
                )
                if member.state is MemberState.UNREVOKED_PARTITIONS:
                    self._schedule_rebalance_timeout(
                        group.group_id,
                        member.member_id,
                        member.member_epoch,
                        member.rebalance_timeout_ms,
                    )

    def tombstones(self, group: ConsumerGroup) -> list[Record]:
        return group_tombstones(group)

    async def delete_empty(self, group_id: str) -> None:
        """``maybeDeleteEmptyConsumerGroup``: an empty consumer group's tombstones (a
        classic JoinGroup turns it into a classic group); its offsets stay."""

        def operation() -> tuple[list[Record], None]:
            group = self.group(group_id)
            if group is None or group.members:
                return [], None
            return group_tombstones(group), None

        await self._write(group_id, operation)


class _NotConsumerGroup(Exception):
    """The group is no longer a consumer group with members: the classic path serves it."""


def _supports_classic(group: ConsumerGroup, protocol_type: str, names: Sequence[str]) -> bool:
    """``ConsumerGroup.supportsClassicProtocols``: the consumer protocol type, and a
    protocol every classic member of the group supports (any, if none is classic)."""
    if protocol_type != recs.CONSUMER_PROTOCOL_TYPE:
        return False
    if not group.members:
        return bool(names)
    classic = [m.classic for m in group.members.values() if m.classic is not None]
    return any(all(any(n == name for n, _ in c.protocols) for c in classic) for name in names)


def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """``ConsumerGroup.waitingOnUnreleasedPartition``: a partition of the member's target
    that it does not have yet is still owned by another member."""
    if member.state is not MemberState.UNRELEASED_PARTITIONS:
        return False
    for topic_id, partitions in group.target_assignment_of(member.member_id).items():
        assigned = member.assigned.get(topic_id, {})
        for p in partitions:
            if p not in assigned and group.current_partition_epoch(topic_id, p) != -1:
                return True
    return False


_REGEX_NO_CHANGE = 0
_REGEX_UPDATED = 1
_REGEX_RESOLVED = 2


def _owned(
    partitions: Sequence[ConsumerGroupHeartbeatRequest.TopicPartitions] | None,
) -> list[tuple[uuid.UUID, list[int]]] | None:
    if partitions is None:
        return None
    return [(tp.topic_id, list(tp.partitions)) for tp in partitions]


def _is_subset(
    owned: list[tuple[uuid.UUID, list[int]]] | None, member: ConsumerGroupMember
) -> bool:
    if owned is None:
        return False
    for topic_id, partitions in owned:
        assigned = member.assigned.get(topic_id)
        if assigned is None:
            return False
        for p in partitions:
            if p not in assigned:
                return False
    return True


class Pattern(Protocol):
    """A compiled RE2 expression (the ``re2`` module has no type hints)."""

    def fullmatch(self, text: str) -> object | None: ...


def compile_regex(regex: str) -> Pattern:
    """Kafka's ``throwIfRegularExpressionIsInvalid``: the compiled pattern (RE2J's syntax,
    :mod:`kafkacore.coordinator.topic_regex`), or INVALID_REGULAR_EXPRESSION with RE2J's
    description of the error."""
    try:
        pattern: Pattern = compile_topic_regex(regex)
    except InvalidTopicRegex as exc:
        raise GroupError(
            ErrorCode.INVALID_REGULAR_EXPRESSION,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc.description}.",
        ) from None
    return pattern
