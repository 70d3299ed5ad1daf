"""KIP-932 share groups' membership (ShareGroupHeartbeat, ShareGroupDescribe) and their
offsets (Describe/Alter/DeleteShareGroupOffsets, DeleteGroups) as Kafka 4.3.1's
``GroupMetadataManager`` and ``GroupCoordinatorService`` run them, over the group shards
of ``__consumer_offsets`` (:mod:`kafkacore.server.group.shard`).

It is built on the KIP-848 machinery of :mod:`kafkacore.server.group.consumer`: the same
write path (records computed against the current state, appended and replayed under the
partition's lock, answered once committed), the runtime's keyed session timers, the
metadata image and the topic/group hashes. A heartbeat:

1. makes or updates the member (``ShareGroupMemberMetadata``) and bumps the group epoch
   when subscriptions, the subscribed topics' metadata hash, or the set of initialized
   share partitions change (``ShareGroupMetadata``);
2. recomputes the target assignment with the ``simple`` assignor over the *initialized*
   share partitions (``ShareGroupTargetAssignmentMember``/``Metadata``);
3. moves the member to it at once (no revocation in share groups:
   ``ShareGroupCurrentMemberAssignment``);
4. asks the share coordinator to initialize the state of subscribed partitions that have
   none (InitializeShareGroupState, through the persister), tracked in
   ``ShareGroupStatePartitionMetadata``; once initialized they are assigned on a later
   heartbeat.

Gating: every share API answers UNSUPPORTED_VERSION while the finalized ``share.version``
is below 1 (:func:`share_version`).

Event loop only.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from kafkacore.coordinator.consumer_group import MemberState, Record, group_hash, topic_hash
from kafkacore.coordinator.runtime import append_error_code
from kafkacore.coordinator.share_group import (
    InitMap,
    ShareGroup,
    ShareGroupMember,
    StatePartitionMetadata,
    current_assignment_record,
    current_assignment_tombstone,
    group_epoch_record,
    group_tombstones,
    member_subscription_record,
    member_subscription_tombstone,
    simple_assignment,
    state_partition_metadata_record,
    target_assignment_metadata_record,
    target_assignment_record,
    target_assignment_tombstone,
)
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from kafkacore.server.group.consumer import CacheImage, GroupError, _java_trim_empty

if TYPE_CHECKING:
    from kafkacore.server.group.coordinator import GroupCoordinator
    from kafkacore.server.group.shard import GroupShard
    from kafkacore.server.share.coordinator import StateAnswer

__all__ = [
    "SHARE_VERSION_DEFAULT",
    "ShareGroupCoordinator",
    "ShareHeartbeatResponse",
    "ShareStateClient",
    "share_version",
]

logger = logging.getLogger("kafkacore.server.group")

SHARE_VERSION_DEFAULT = 1
"""Kafka 4.3.1's ``share.version`` for a new cluster (``kafka-features version-mapping
--release-version 4.3``)."""

METADATA_REFRESH_INTERVAL_MS = 2**31 - 1
"""Kafka's ``METADATA_REFRESH_INTERVAL_MS`` (the hash is recomputed on changes)."""


def share_version() -> int:
    """The finalized ``share.version`` feature level. kafkacore has no finalized features
    yet (issue 30): this answers Kafka 4.3.1's default for a new cluster, 1, until they
    land."""
    return SHARE_VERSION_DEFAULT


class ShareStateClient(Protocol):
    """What membership needs of the share coordinator (the persister)."""

    async def initialize_state(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        start_offset: int,
    ) -> StateAnswer: ...

    async def delete_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int
    ) -> StateAnswer: ...

    async def read_summary(
        self, group_id: str, topic_id: uuid.UUID, partition: int
    ) -> StateAnswer: ...


@dataclass
class ShareHeartbeatResponse:
    """ShareGroupHeartbeat's answer: ``assignment`` ``None`` when not sent."""

    error_code: int = 0
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: list[tuple[uuid.UUID, list[int]]] | None = None


def session_key(group_id: str, member_id: str) -> str:
    return f"session-timeout-{group_id}-{member_id}"


class ShareGroupCoordinator:
    """See the module documentation. Owned by the
    :class:`~kafkacore.server.group.coordinator.GroupCoordinator`, whose runtime and
    shards it shares; ``settings(group)`` gives the group's share configs in force."""

    def __init__(
        self,
        groups: GroupCoordinator,
        settings: Callable[[str], Any],
        state: ShareStateClient | None = None,
    ) -> None:
        self.groups = groups
        self.config = groups.config
        self.runtime = groups.runtime
        self.topic = groups.topic
        self.image = CacheImage(groups.replicas.cache)
        self.settings = settings
        self.state = state
        self._tasks: set[asyncio.Task[None]] = set()

    def enabled(self) -> bool:
        """Kafka's ``isShareGroupProtocolEnabled``: ``share.version`` >= 1."""
        return share_version() >= 1

    # -- lookup ----------------------------------------------------------------------------

    def _index(self, group_id: str) -> int:
        return self.topic.partition_for(group_id)

    def _shard(self, group_id: str) -> GroupShard | None:
        return self.runtime.shard(self._index(group_id))

    def group(self, group_id: str) -> ShareGroup | None:
        shard = self._shard(group_id)
        return None if shard is None else shard.share_groups.get(group_id)

    def all_groups(self) -> list[ShareGroup]:
        return [g for shard in self.runtime.shards() for g in shard.share_groups.values()]

    def now_ms(self) -> int:
        return int(self.groups.clock())

    # -- writes (the consumer coordinator's path) --------------------------------------------

    async def _write(self, group_id: str, operation: Callable[[], tuple[list[Record], Any]]) -> Any:
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

    # -- ShareGroupHeartbeat ---------------------------------------------------------------

    @staticmethod
    def validate_heartbeat(request: ShareGroupHeartbeatRequest) -> None:
        """``throwIfShareGroupHeartbeatRequestIsInvalid``."""
        if _java_trim_empty(request.member_id) or request.member_id is None:
            raise GroupError(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        if _java_trim_empty(request.group_id):
            raise GroupError(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
        if _java_trim_empty(request.rack_id):
            raise GroupError(ErrorCode.INVALID_REQUEST, "RackId can't be empty.")
        if request.member_epoch == 0:
            if not request.subscribed_topic_names:
                raise GroupError(
                    ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request."
                )
        elif request.member_epoch < -1:
            raise GroupError(ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")

    async def heartbeat(
        self, request: ShareGroupHeartbeatRequest, client_id: str, client_host: str
    ) -> ShareHeartbeatResponse:
        """One ShareGroupHeartbeat; errors come back as the response's code."""
        try:
            self.validate_heartbeat(request)
            code = self.runtime.partition_error(self._index(request.group_id))
            if code:
                raise GroupError(code)
            result: tuple[ShareHeartbeatResponse, dict[uuid.UUID, InitMap] | None]
            result = await self._write(
                request.group_id, lambda: self._heartbeat(request, client_id, client_host)
            )
        except GroupError as exc:
            return ShareHeartbeatResponse(error_code=exc.code, error_message=exc.message)
        response, to_initialize = result
        if to_initialize:
            self._spawn(self._initialize(request.group_id, to_initialize))
        return response

    def _get_or_create_group(self, group_id: str, create: bool) -> ShareGroup:
        """``getOrMaybeCreateShareGroup``."""
        shard = self._shard(group_id)
        assert shard is not None
        group = shard.share_groups.get(group_id)
        if group is not None:
            return group
        if group_id in shard.groups or group_id in shard.consumer_groups:
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
            )
        if not create:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
        return ShareGroup(group_id)

    def _heartbeat(
        self, request: ShareGroupHeartbeatRequest, client_id: str, client_host: str
    ) -> tuple[list[Record], tuple[ShareHeartbeatResponse, dict[uuid.UUID, InitMap] | None]]:
        epoch = request.member_epoch
        group_id, member_id = request.group_id, request.member_id
        if epoch == -1:
            return self._leave(group_id, member_id), (
                ShareHeartbeatResponse(member_id=member_id, member_epoch=-1),
                None,
            )
        now = self.now_ms()
        records: list[Record] = []
        create = epoch == 0
        group = self._get_or_create_group(group_id, create)
        limit = self.config.group_share_max_size
        if len(group.members) >= limit and (not member_id or member_id not in group.members):
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The share group has reached its maximum capacity of {limit} members.",
            )
        member = group.member(member_id)
        if member is None:
            if not create:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {member_id} is not a member of group {group_id}.",
                )
            member = ShareGroupMember(member_id)
            logger.info(
                "[GroupId %s] Member %s joins the share group using the share protocol.",
                group_id,
                member_id,
            )
        elif epoch != 0:
            self._check_epoch(member, epoch)
        updated = replace(
            member,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            subscribed_topic_names=(
                frozenset(request.subscribed_topic_names)
                if request.subscribed_topic_names is not None
                else member.subscribed_topic_names
            ),
            client_id=client_id,
            client_host=client_host,
        )
        bump = False
        if member_id not in group.members or not updated.same_subscription_record(member):
            records.append(member_subscription_record(group_id, updated))
            bump = updated.subscribed_topic_names != member.subscribed_topic_names
        bump = bump or self._initialized_assignment_pending(group)
        group_epoch = group.group_epoch
        counts = group.subscribed_topic_names(
            member if member_id in group.members else None, updated
        )
        if bump or now >= group.metadata_refresh_deadline:
            metadata_hash = group_hash(
                {n: topic_hash(self.image, n) for n in counts if self.image.topic_id(n)}
            )
            if metadata_hash != group.metadata_hash:
                bump = True
            if bump:
                group_epoch += 1
                records.append(group_epoch_record(group_id, group_epoch, metadata_hash))
                logger.info(
                    "[GroupId %s] Bumped group epoch to %d with metadata hash %d.",
                    group_id,
                    group_epoch,
                    metadata_hash,
                )
            group.metadata_refresh_deadline = now + METADATA_REFRESH_INTERVAL_MS
        if group_epoch > group.assignment_epoch:
            target = self._update_target(group, group_epoch, updated, records, now)
            target_epoch = group_epoch
        else:
            target_epoch = group.assignment_epoch
            target = group.target_assignment_of(member_id)
        if bump or not updated.is_reconciled_to(target_epoch):
            reconciled = replace(
                updated,
                member_epoch=target_epoch,
                previous_member_epoch=updated.member_epoch,
                state=MemberState.STABLE,
                assigned=self._filter(target, updated.subscribed_topic_names),
            )
            if not reconciled.same_as(updated) or member_id not in group.members:
                records.append(current_assignment_record(group_id, reconciled))
            updated = reconciled
        self._schedule_session(group_id, member_id)
        response = ShareHeartbeatResponse(
            member_id=updated.member_id,
            member_epoch=updated.member_epoch,
            heartbeat_interval_ms=self.settings(group_id).heartbeat_interval_ms,
        )
        full = request.subscribed_topic_names is not None
        if epoch == 0 or full or _sets(member.assigned) != _sets(updated.assigned):
            response.assignment = [(t, sorted(ps)) for t, ps in updated.assigned.items() if ps]
        to_initialize = self._initialize_needed(group, set(counts), records, now)
        return records, (response, to_initialize)

    def _check_epoch(self, member: ShareGroupMember, epoch: int) -> None:
        """``throwIfShareGroupMemberEpochIsInvalid``."""
        if epoch > member.member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a greater member epoch ({epoch}) than the one known "
                f"by the group coordinator ({member.member_epoch}). The member must abandon all "
                "its partitions and rejoin.",
            )
        if epoch < member.member_epoch and epoch != member.previous_member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a smaller member epoch ({epoch}) than the one known "
                f"by the group coordinator ({member.member_epoch}), and it does not match the "
                f"previous member epoch ({member.previous_member_epoch}). The member must abandon "
                "all its partitions and rejoin.",
            )

    def _filter(
        self, target: Mapping[uuid.UUID, Any], subscribed: frozenset[str]
    ) -> dict[uuid.UUID, set[int]]:
        """``ShareGroupAssignmentBuilder.filterAssignedPartitions``: only topics the
        member subscribes to."""
        out: dict[uuid.UUID, set[int]] = {}
        for topic_id, partitions in target.items():
            name = self.image.topic_name(topic_id)
            if name is not None and name in subscribed and partitions:
                out[topic_id] = set(partitions)
        return out

    def _update_target(
        self,
        group: ShareGroup,
        epoch: int,
        updated: ShareGroupMember,
        records: list[Record],
        now: int,
    ) -> Mapping[uuid.UUID, Any]:
        members = dict(group.members)
        members[updated.member_id] = updated
        assignment = simple_assignment(members, group.target, self.image, group.initialized())
        for member_id, parts in assignment.items():
            old = group.target.get(member_id)
            if old is None or _sets(old) != _sets(parts):
                records.append(target_assignment_record(group.group_id, member_id, parts))
        records.append(target_assignment_metadata_record(group.group_id, epoch, now))
        logger.info(
            "[GroupId %s] Computed a new target assignment for epoch %d with 'simple' assignor.",
            group.group_id,
            epoch,
        )
        return assignment.get(updated.member_id, {})

    def _initialized_assignment_pending(self, group: ShareGroup) -> bool:
        """``initializedAssignmentPending``: some initialized partition of a subscribed
        topic is not in the target assignment."""
        if group.is_empty() or group.state_metadata is None:
            return False
        initialized = group.state_metadata.initialized
        subscribed = set(group.subscribed_topic_names())
        if not initialized or not subscribed:
            return False
        assigned: dict[uuid.UUID, set[int]] = {}
        for target in group.target.values():
            for topic_id, partitions in target.items():
                assigned.setdefault(topic_id, set()).update(partitions)
        for topic_id, info in initialized.items():
            if info.name in subscribed and assigned.get(topic_id) != info.partitions:
                return True
        return False

    def _initialize_needed(
        self, group: ShareGroup, subscribed: set[str], records: list[Record], now: int
    ) -> dict[uuid.UUID, InitMap] | None:
        """``maybeCreateInitializeShareGroupStateRequest``: subscribed partitions with no
        state (or whose initialization is older than the retry interval) are marked
        initializing; what to initialize."""
        if not subscribed:
            return None
        meta = group.state_metadata or StatePartitionMetadata()
        retry = self.config.group_share_initialize_retry_interval_ms
        known: dict[uuid.UUID, set[int]] = {
            t: set(v.partitions) for t, v in meta.initialized.items()
        }
        for t, v in meta.initializing.items():
            if v.timestamp < 0 or now - v.timestamp < retry:
                known.setdefault(t, set()).update(v.partitions)
        changes: dict[uuid.UUID, InitMap] = {}
        for name in sorted(subscribed):
            topic_id = self.image.topic_id(name)
            if topic_id is None:
                continue
            count = self.image.partition_count(topic_id)
            done = known.get(topic_id, set())
            if len(done) < count:
                missing = set(range(count)) - done
                changes[topic_id] = InitMap(name, missing, now)
        if not changes:
            return None
        initializing = {
            t: InitMap(v.name, set(v.partitions), v.timestamp) for t, v in meta.initializing.items()
        }
        for t, v in changes.items():
            current = initializing.get(t)
            if current is None:
                initializing[t] = v
            else:
                current.partitions |= v.partitions
                current.timestamp = v.timestamp
        deleting = {t: n for t, n in meta.deleting.items() if t not in changes}
        new_meta = StatePartitionMetadata(initializing, meta.initialized, deleting)
        records.append(state_partition_metadata_record(group.group_id, new_meta))
        return changes

    async def _initialize(self, group_id: str, changes: dict[uuid.UUID, InitMap]) -> None:
        """InitializeShareGroupState for ``changes`` (state epoch = the group epoch), then
        ``initializeShareGroupState`` (or ``uninitializeShareGroupState`` for failures)."""
        if self.state is None:
            return
        group = self.group(group_id)
        state_epoch = group.group_epoch if group is not None else 0
        done: dict[uuid.UUID, set[int]] = {}
        failed: dict[uuid.UUID, set[int]] = {}
        for topic_id, info in changes.items():
            for p in sorted(info.partitions):
                answer = await self.state.initialize_state(group_id, topic_id, p, state_epoch, -1)
                target = failed if answer.error_code else done
                target.setdefault(topic_id, set()).add(p)
        await self._write(group_id, lambda: (self._mark_initialized(group_id, done, failed), None))

    def _mark_initialized(
        self, group_id: str, done: dict[uuid.UUID, set[int]], failed: dict[uuid.UUID, set[int]]
    ) -> list[Record]:
        group = self.group(group_id)
        if group is None or (not done and not failed):
            return []
        meta = group.state_metadata or StatePartitionMetadata()
        initialized = {
            t: InitMap(v.name, set(v.partitions), v.timestamp) for t, v in meta.initialized.items()
        }
        initializing = {
            t: InitMap(v.name, set(v.partitions), v.timestamp) for t, v in meta.initializing.items()
        }
        for t, parts in done.items():
            name = self.image.topic_name(t) or "UNKNOWN"
            entry = initialized.setdefault(t, InitMap(name, set(), -1))
            entry.partitions |= parts
        for t, parts in [*done.items(), *failed.items()]:
            current = initializing.get(t)
            if current is not None:
                current.partitions -= parts
                if not current.partitions:
                    del initializing[t]
        new_meta = StatePartitionMetadata(initializing, initialized, dict(meta.deleting))
        return [state_partition_metadata_record(group_id, new_meta)]

    # -- leaving ---------------------------------------------------------------------------

    def _leave(self, group_id: str, member_id: str) -> list[Record]:
        """``shareGroupLeave``."""
        group = self._get_or_create_group(group_id, False)
        member = group.member(member_id)
        if member is None:
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {member_id} is not a member of group {group_id}.",
            )
        logger.info("[GroupId %s] Member %s left the share group.", group_id, member_id)
        return self._fence(group, member)

    def _fence(self, group: ShareGroup, member: ShareGroupMember) -> list[Record]:
        """``shareGroupFenceMember``: the member's tombstones and a new group epoch."""
        group_id = group.group_id
        records = [
            current_assignment_tombstone(group_id, member.member_id),
            target_assignment_tombstone(group_id, member.member_id),
            member_subscription_tombstone(group_id, member.member_id),
        ]
        counts = group.subscribed_topic_names(member, None)
        metadata_hash = group_hash(
            {n: topic_hash(self.image, n) for n in counts if self.image.topic_id(n)}
        )
        records.append(group_epoch_record(group_id, group.group_epoch + 1, metadata_hash))
        self.runtime.cancel_timer(self._index(group_id), session_key(group_id, member.member_id))
        return records

    def _schedule_session(self, group_id: str, member_id: str) -> None:
        self.runtime.schedule_timer(
            self._index(group_id),
            session_key(group_id, member_id),
            self.settings(group_id).session_timeout_ms,
            lambda: self._fence_operation(group_id, member_id),
        )

    async def _fence_operation(self, group_id: str, member_id: str) -> None:
        def operation() -> tuple[list[Record], None]:
            group = self.group(group_id)
            member = None if group is None else group.member(member_id)
            if group is None or member is None:
                return [], None
            logger.info(
                "[GroupId %s] Member %s fenced from the group because the member session expired.",
                group_id,
                member_id,
            )
            return self._fence(group, member), None

        try:
            await self._write(group_id, operation)
        except GroupError as exc:
            logger.info("Could not fence %s of %s: %s", member_id, group_id, exc.code)

    def on_shard_loaded(self, shard: GroupShard) -> None:
        """``onLoaded``: every loaded member's session starts now."""
        for group in shard.share_groups.values():
            for member_id in group.members:
                self._schedule_session(group.group_id, member_id)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    # -- describe, delete, offsets ---------------------------------------------------------

    def describe(self, group_id: str) -> dict[str, Any]:
        """One DescribedGroup (``ShareGroup.asDescribedGroup``), or its error."""
        code = self.groups.coordinator_error(group_id)
        if code:
            return {"error_code": code, "error_message": None, "group_id": group_id}
        group = self.group(group_id)
        if group is None:
            shard = self._shard(group_id)
            other = shard is not None and (
                group_id in shard.groups or group_id in shard.consumer_groups
            )
            message = (
                f"Group {group_id} is not a share group."
                if other
                else (f"Group {group_id} not found.")
            )
            return {
                "error_code": ErrorCode.GROUP_ID_NOT_FOUND,
                "error_message": message,
                "group_id": group_id,
            }
        return {
            "error_code": 0,
            "error_message": None,
            "group_id": group_id,
            "group_state": str(group.state),
            "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "assignor_name": "simple",
            "members": list(group.members.values()),
        }

    async def delete(self, group_id: str) -> int:
        """DeleteGroups of a share group: NON_EMPTY_GROUP with members; else its share
        state is deleted at the share coordinator, then its records tombstoned."""
        group = self.group(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        if self.state is not None and group.state_metadata is not None:
            for topic_id, info in group.state_metadata.initialized.items():
                for p in sorted(info.partitions):
                    answer = await self.state.delete_state(group_id, topic_id, p)
                    if answer.error_code:
                        return int(answer.error_code)
        try:
            await self._write(group_id, lambda: (group_tombstones(group), None))
        except GroupError as exc:
            return exc.code
        return ErrorCode.NONE

    def initialized_partitions(self, group_id: str) -> dict[uuid.UUID, set[int]]:
        group = self.group(group_id)
        return {} if group is None else group.initialized()

    async def alter_offsets(
        self, group_id: str, offsets: Mapping[uuid.UUID, Mapping[int, int]]
    ) -> dict[tuple[uuid.UUID, int], tuple[int, str | None]]:
        """AlterShareGroupOffsets (``alterShareGroupOffsets``): the group must be empty
        (NON_EMPTY_GROUP); each partition's state is re-initialized at the new start
        offset with the next state epoch, and recorded as initialized."""
        group = self.group(group_id)
        if group is not None and group.members:
            raise GroupError(
                ErrorCode.NON_EMPTY_GROUP,
                "The group is not empty.",
            )
        if group is None:
            group = await self._write(group_id, lambda: self._create_empty(group_id))
        assert self.state is not None
        state_epoch = (group.group_epoch if group is not None else 0) + 1
        results: dict[tuple[uuid.UUID, int], tuple[int, str | None]] = {}
        done: dict[uuid.UUID, set[int]] = {}
        for topic_id, parts in offsets.items():
            for p, offset in parts.items():
                answer = await self.state.initialize_state(
                    group_id, topic_id, p, state_epoch, offset
                )
                results[(topic_id, p)] = (answer.error_code, answer.error_message)
                if not answer.error_code:
                    done.setdefault(topic_id, set()).add(p)
        await self._write(
            group_id,
            lambda: (
                [
                    group_epoch_record(
                        group_id,
                        state_epoch,
                        self.group(group_id).metadata_hash,  # type: ignore[union-attr]
                    ),
                    *self._mark_initialized(group_id, done, {}),
                ],
                None,
            ),
        )
        return results

    def _create_empty(self, group_id: str) -> tuple[list[Record], ShareGroup]:
        group = ShareGroup(group_id)
        return [group_epoch_record(group_id, group.group_epoch, 0)], group

    async def delete_offsets(
        self, group_id: str, topics: Sequence[uuid.UUID]
    ) -> dict[uuid.UUID, tuple[int, str | None]]:
        """DeleteShareGroupOffsets: the group must be empty; the topics' share state is
        deleted and they leave the initialized partitions."""
        group = self.group(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if group.members:
            raise GroupError(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
        assert self.state is not None
        initialized = group.initialized()
        results: dict[uuid.UUID, tuple[int, str | None]] = {}
        removed: set[uuid.UUID] = set()
        for topic_id in topics:
            parts = initialized.get(topic_id)
            if not parts:
                results[topic_id] = (ErrorCode.NONE, None)
                continue
            code: int = ErrorCode.NONE
            message: str | None = None
            for p in sorted(parts):
                answer = await self.state.delete_state(group_id, topic_id, p)
                if answer.error_code:
                    code, message = answer.error_code, answer.error_message
            results[topic_id] = (code, message)
            if not code:
                removed.add(topic_id)
        if removed:

            def operation() -> tuple[list[Record], None]:
                g = self.group(group_id)
                if g is None or g.state_metadata is None:
                    return [], None
                meta = g.state_metadata
                new_meta = StatePartitionMetadata(
                    {t: v for t, v in meta.initializing.items() if t not in removed},
                    {t: v for t, v in meta.initialized.items() if t not in removed},
                    dict(meta.deleting),
                )
                return [state_partition_metadata_record(group_id, new_meta)], None

            await self._write(group_id, operation)
        return results


def _copy(m: Mapping[uuid.UUID, InitMap]) -> dict[uuid.UUID, InitMap]:
    return {t: InitMap(v.name, set(v.partitions), v.timestamp) for t, v in m.items()}


def _sets(a: Mapping[uuid.UUID, Any]) -> dict[uuid.UUID, frozenset[int]]:
    return {t: frozenset(ps) for t, ps in a.items() if ps}
