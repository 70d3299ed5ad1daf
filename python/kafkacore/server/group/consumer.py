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

Not yet here (Kafka has them): classic members inside a consumer group and the online
migration between the protocols (a classic JoinGroup to a non-empty consumer group is
answered INCONSISTENT_GROUP_PROTOCOL, a ConsumerGroupHeartbeat to a non-empty classic
group GROUP_ID_NOT_FOUND, as Kafka does with ``group.consumer.migration.policy=disabled``);
per-group dynamic configs (``consumer.session.timeout.ms``, ...).

Event loop only."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, TypeVar

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
from kafkacore.metadata import MetadataCache
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest

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

GROUP_VERSION_DEFAULT = 1
"""Kafka 4.3.1's default ``group.version`` (KIP-848 on)."""


def group_version() -> int:
    """The finalized ``group.version`` feature level. kafkacore has no finalized features
    yet (issue 30): this answers Kafka 4.3.1's default, 1, until they land."""
    return GROUP_VERSION_DEFAULT


class GroupError(Exception):
    """A Kafka ``ApiException`` of the group coordinator: its code and message."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message


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


def session_key(group_id: str, member_id: str) -> str:
    return f"session-timeout-{group_id}-{member_id}"


def rebalance_key(group_id: str, member_id: str) -> str:
    return f"rebalance-timeout-{group_id}-{member_id}"


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
        self._metadata_version = 0
        self._regex_tasks: set[asyncio.Task[None]] = set()

    # -- gating ----------------------------------------------------------------------------

    def enabled(self) -> bool:
        """Kafka's ``isConsumerGroupProtocolEnabled``: ``group.version`` >= 1 and
        "consumer" in ``group.coordinator.rebalance.protocols``."""
        protocols = self.config.group_coordinator_rebalance_protocols
        return group_version() >= 1 and "consumer" in protocols

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
        return int(self.config.group_consumer_heartbeat_interval_ms)

    def session_timeout_ms(self, group_id: str) -> int:
        return int(self.config.group_consumer_session_timeout_ms)

    def now_ms(self) -> int:
        return int(self.groups.clock())

    # -- writes ----------------------------------------------------------------------------

    async def _write(self, group_id: str, operation: Callable[[], tuple[list[Record], _T]]) -> _T:
        """Kafka's ``scheduleWriteOperation`` for one group: under the partition's lock,
        ``operation`` computes (records, answer) against the current state, the records
        are appended and replayed; the answer comes once they are committed."""
        index = self._index(group_id)
        async with self.runtime.partition_lock(index):
            code = self.runtime.partition_error(index)
            if code:
                raise GroupError(code)
            records, answer = operation()
            end = -1
            if records:
                try:
                    end = await self.runtime.append_uncommitted(index, records)
                except Exception as exc:
                    raise GroupError(append_error_code(exc)) from exc
                shard = self.runtime.shard(index)
                if shard is not None:
                    for key, value in records:
                        shard.replay_consumer_record(key, value)
        try:
            await self.runtime.await_committed(index, end)
        except Exception as exc:
            raise GroupError(append_error_code(exc)) from exc
        return answer

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
        """``getOrMaybeCreateConsumerGroup``: an empty classic group (or a group known by
        offsets only) becomes a consumer group; a non-empty classic group cannot (the
        online upgrade is not here)."""
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
        if classic is not None and (classic.members or classic.state.value != "Empty"):
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Cannot upgrade classic group {group_id} to consumer group because the "
                "online upgrade is not supported.",
            )
        if classic is not None and classic.generation > 0:
            # the empty classic group's tombstone (its offsets stay: they move over)
            records.append((recs.group_metadata_key(group_id), None))
        fresh = ConsumerGroup(group_id)
        if classic is not None:
            fresh.offsets = classic.offsets
            fresh.pending_txn = classic.pending_txn
        return fresh

    def _heartbeat(
        self, version: int, request: ConsumerGroupHeartbeatRequest, client_id: str, client_host: str
    ) -> tuple[list[Record], HeartbeatResponse]:
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
            member_id = str(uuid.uuid4())
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
    ) -> ConsumerGroupMember:
        member = group.member(member_id)
        if member is None:
            if not create:
                self._member_or_throw(group, member_id)
            member = ConsumerGroupMember(member_id)
        self._check_epoch(member, epoch, owned)
        if create:
            logger.info(
                "[GroupId %s] Member %s joins the consumer group using the consumer protocol.",
                group.group_id,
                member_id,
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
    ) -> ConsumerGroupMember:
        existing = group.static_member(instance_id)
        if create:
            if existing is None:
                member = group.member(member_id) or ConsumerGroupMember(member_id)
                return member
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
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
                "using the consumer protocol. Created a new member %s to replace the existing "
                "member %s.",
                group.group_id,
                instance_id,
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
        """``updateSubscriptionMetadata``: the metadata hash of the subscribed topics and
        the subscription type with ``updated`` in; a new group epoch when the hash moved
        or ``bump``. Kafka refreshes on a metadata change; this computes on each
        heartbeat, which changes the epoch at the same moments."""
        regexes, counts = group.subscription_counts(extra=updated)
        metadata_hash = self._metadata_hash(counts)
        members = len(group.members)
        if (
            updated.member_id not in group.members
            and group.static_member(updated.instance_id) is None
        ):
            members += 1
        subscription_type = group.subscription_type(regexes, counts, members)
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
        return epoch, subscription_type

    def _metadata_hash(self, counts: Mapping[str, object]) -> int:
        return group_hash(
            {name: topic_hash(self.image, name) for name in counts if self.image.topic_id(name)}
        )

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
        interval = int(self.config.group_consumer_assignment_interval_ms)
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
    ) -> tuple[list[Record], HeartbeatResponse]:
        group = self._get_or_create_group(group_id, False, [])
        response = HeartbeatResponse(member_id=member_id, member_epoch=epoch)
        if instance_id is None:
            member = self._member_or_throw(group, member_id)
            logger.info("[GroupId %s] Member %s left the consumer group.", group_id, member_id)
            return self._fence(group, [member]), response
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
        return self._fence(group, [member]), response

    def _fence(self, group: ConsumerGroup, members: Sequence[ConsumerGroupMember]) -> list[Record]:
        """``consumerGroupFenceMembers`` (without the downgrade): each member's
        tombstones, the regexes only they used, and a new group epoch."""
        if not members:
            return []
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
        index = self._index(group.group_id)
        for m in members:
            self.runtime.cancel_timer(index, session_key(group.group_id, m.member_id))
            self.runtime.cancel_timer(index, rebalance_key(group.group_id, m.member_id))
        return records

    async def _fence_operation(
        self, group_id: str, member_id: str, reason: str, epoch: int | None = None
    ) -> None:
        def operation() -> tuple[list[Record], None]:
            group = self.group(group_id)
            if group is None:
                return [], None
            member = group.member(member_id)
            if member is None or (epoch is not None and member.member_epoch != epoch):
                return [], None
            logger.info(
                "[GroupId %s] Member %s fenced from the group because %s.",
                group_id,
                member_id,
                reason,
            )
            return self._fence(group, [member]), None

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
        refresh = refresh or self._topics_changed_since(group)
        refresh = refresh or now > last + int(self.config.group_consumer_regex_refresh_interval_ms)
        if refresh and wanted:
            task = asyncio.get_running_loop().create_task(
                self._resolve_regexes(group.group_id, sorted(wanted)), name=key
            )
            self._regex_tasks.add(task)
            task.add_done_callback(self._regex_tasks.discard)
        return status

    def _topics_changed_since(self, group: ConsumerGroup) -> bool:
        names = frozenset(self.image.topic_names())
        return any(
            _matching(regex, names) != resolved.topics
            for regex, resolved in group.resolved_regexes.items()
        )

    async def _resolve_regexes(self, group_id: str, regexes: list[str]) -> None:
        """``TopicRegexResolver`` and ``handleRegularExpressionsResult``: the topics each
        regex matches (whole names, RE2 syntax), recorded; a new group epoch when a
        regex's topics changed."""
        await asyncio.sleep(0)
        names = frozenset(self.image.topic_names())
        now = self.now_ms()
        self._metadata_version += 1
        resolved = {
            r: ResolvedRegex(_matching(r, names), self._metadata_version, now) for r in regexes
        }

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
            shadow = dict(group.resolved_regexes)
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
        group: a simple commit (epoch -1, no member) is accepted only when the group is
        empty; a member's commit from a version below v9 is UNSUPPORTED_VERSION (not for
        TxnOffsetCommit); an unknown member UNKNOWN_MEMBER_ID; an epoch above the member's
        STALE_MEMBER_EPOCH; a lower one only for partitions assigned (or being revoked) at
        an assignment epoch at or below it (KIP-1251), else STALE_MEMBER_EPOCH."""
        if member_epoch < 0 and not member_id:
            if group.members:
                return ErrorCode.UNKNOWN_MEMBER_ID
            return ErrorCode.NONE
        if not transactional and api_version < 9:
            return ErrorCode.UNSUPPORTED_VERSION
        member = group.member(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member.uses_classic_protocol:
            return (
                ErrorCode.NONE
                if member_epoch == member.member_epoch
                else ErrorCode.ILLEGAL_GENERATION
            )
        if member_epoch == member.member_epoch:
            return ErrorCode.NONE
        if member_epoch > member.member_epoch:
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
                self._schedule_session(group.group_id, member.member_id)
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
    """Kafka's ``throwIfRegularExpressionIsInvalid`` (RE2J ``Pattern.compile``): RE2
    syntax, as Google's RE2 (which RE2J ports) reads it. An invalid one is
    INVALID_REGULAR_EXPRESSION."""
    import re2  # type: ignore[import-untyped]

    try:
        pattern: Pattern = re2.compile(regex)
    except Exception as exc:
        raise GroupError(
            ErrorCode.INVALID_REGULAR_EXPRESSION,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc}.",
        ) from exc
    return pattern


def _matching(regex: str, names: frozenset[str]) -> frozenset[str]:
    """The topic names ``regex`` matches whole (RE2J ``Matcher.matches``)."""
    try:
        pattern = compile_regex(regex)
    except GroupError:
        return frozenset()
    return frozenset(n for n in names if pattern.fullmatch(n) is not None)
