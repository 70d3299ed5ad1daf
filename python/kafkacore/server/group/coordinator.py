"""The classic group coordinator: JoinGroup/SyncGroup/Heartbeat/LeaveGroup state machine
and the offset store, with Kafka's error codes.

The state lives in one :class:`~kafkacore.server.group.shard.GroupShard` per
``__consumer_offsets`` partition, on the coordinator runtime
(:mod:`kafkacore.coordinator.runtime`), which owns what is not about groups: ownership
fenced by leader epoch (Kafka's ``onElection``/``onResignation``: this coordinator serves
the groups of the partitions it was elected for, once loaded on the I/O executor; a group
of a partition being loaded answers COORDINATOR_LOAD_IN_PROGRESS, one of a partition not
owned NOT_COORDINATOR, :meth:`GroupCoordinator.coordinator_error`), the appends and the
wait for the high watermark. A single node is the replication-factor-1 case: :meth:`load`
is the election for every partition it leads, done synchronously at start-up, and the
partitions of a topic not created yet are its own (it will lead them).

Writes to ``__consumer_offsets`` (OffsetCommit, group metadata, expiry and topic-deletion
tombstones, DeleteGroups, OffsetDelete) are awaited, as Kafka's coordinator runtime
completes an operation once its write is done: the in-memory state changes only after its
records are in the log (OffsetFetch sees an offset once it is written), and a failed
append answers the error Kafka's ``GroupCoordinatorService`` maps it to
(:func:`~kafkacore.coordinator.runtime.append_error_code`).

Order: the runtime's lock of each ``__consumer_offsets`` partition is held across
"validate -> append -> apply", so the state applies writes in the order they land in that
partition's log (a reload after a restart rebuilds what was served), and each validation
sees every earlier write applied.

Thread-safety: the coordinator and its groups are event loop thread only; the appends and
the loads run on the I/O executor and touch no installed state."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor

from kafkacore._java import java_length
from kafkacore.config import BrokerConfig
from kafkacore.config.group import (
    ConsumerGroupSettings,
    ShareGroupSettings,
    consumer_group_settings,
    share_group_settings,
)
from kafkacore.coordinator import records as recs
from kafkacore.coordinator.consumer_group import ConsumerGroup
from kafkacore.coordinator.runtime import CoordinatorRuntime, append_error_code
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode
from kafkacore.server.coordinator_writer import CoordinatorPartitionWriter
from kafkacore.server.group.consumer import ConsumerGroupCoordinator, GroupError
from kafkacore.server.group.group import (
    COMPLETING,
    DEAD,
    EMPTY,
    PREPARING,
    STABLE,
    Group,
    JoinResult,
    Member,
    Offset,
    join_error,
)
from kafkacore.server.group.offsets import OFFSETS_TOPIC, offsets_topic
from kafkacore.server.group.shard import GroupsByPartition, GroupShard
from kafkacore.server.group.share import ShareGroupCoordinator, ShareStateClient
from kafkacore.server.replica_manager import ReplicaManager

__all__ = ["DEFAULT_RETENTION_TIME", "GroupCoordinator", "JoinResult", "TxnVerifier"]

DEFAULT_RETENTION_TIME = -1
"""OffsetCommit v2-4's RetentionTimeMs meaning "the broker's offsets.retention.minutes"."""


TxnVerifier = Callable[[int], Awaitable[tuple[int, tuple[int, int] | None]]]
"""KIP-890 verification of a TxnOffsetCommit: given the group's ``__consumer_offsets``
partition, ``(error, verification guard)`` (see :meth:`GroupCoordinator.commit_transactional`)."""

SESSION_SWEEP_MS = 50
"""How often members' sessions and pending member ids are checked for expiry."""

logger = logging.getLogger("kafkacore.server.group")


def _now_ms() -> int:
    return int(time.time() * 1000)


class GroupCoordinator:
    def __init__(
        self,
        config: BrokerConfig,
        replicas: ReplicaManager,
        clock: Callable[[], int] = _now_ms,
        io_executor: Executor | None = None,
        *,
        cluster_mode: bool | None = None,
        consumer_settings: Callable[[str], ConsumerGroupSettings] | None = None,
        share_settings: Callable[[str], ShareGroupSettings] | None = None,
        share_state: ShareStateClient | None = None,
    ) -> None:
        """``cluster_mode`` (default: ``zookeeper.connect`` set): groups are served only
        for the partitions this broker was elected for (:meth:`on_elected`).
        ``consumer_settings``: a KIP-848 group's consumer configs in force (its dynamic
        GROUP configs over the broker's, :class:`~kafkacore.server.group_configs.GroupConfigs`);
        by default the broker's. ``share_settings``: a share group's configs in force
        (default: the broker's); ``share_state``: the share coordinator's persister (None:
        no share groups)."""
        self.config = config
        self.replicas = replicas
        if cluster_mode is None:
            cluster_mode = bool(config.zookeeper_connect)
        self.runtime = CoordinatorRuntime(
            offsets_topic(CoordinatorPartitionWriter(replicas), replicas.config, cluster_mode),
            lambda partition, _epoch: GroupShard(partition, self._shard_loaded),
            io_executor=io_executor,
            write_timeout_ms=config.offsets_commit_timeout_ms,
            serve_uncreated=not cluster_mode,
            base_sequence=0,  # Kafka 4's CoordinatorRuntime numbers its records
        )
        self.topic = self.runtime.topic
        self.groups = GroupsByPartition(self.runtime)
        """The groups of the owned partitions."""
        self.clock = clock
        """Wall-clock milliseconds for commit/state timestamps and offset expiry."""
        self.consumer_settings = consumer_settings or (
            lambda _group: consumer_group_settings({}, self.config)
        )
        self.consumer = ConsumerGroupCoordinator(self)
        """The KIP-848 consumer groups of the same shards."""
        self.share = ShareGroupCoordinator(
            self,
            share_settings or (lambda _group: share_group_settings({}, self.config)),
            share_state,
        )
        """The KIP-932 share groups of the same shards."""

    def _shard_loaded(self, shard: GroupShard) -> None:
        self.consumer.on_shard_loaded(shard)
        self.share.on_shard_loaded(shard)

    @property
    def cluster_mode(self) -> bool:
        return self.topic.cluster_mode

    # -- lifecycle and ownership (the runtime's) -------------------------------------------

    def load(self) -> None:
        """The election for every ``__consumer_offsets`` partition this node leads, each
        loaded synchronously (start-up: no COORDINATOR_LOAD_IN_PROGRESS window)."""
        self.runtime.load_led_partitions()

    def coordinator_error(self, group_id: str) -> int:
        """Kafka's ``validateGroupStatus`` for ownership: COORDINATOR_LOAD_IN_PROGRESS
        while ``group_id``'s partition loads, NOT_COORDINATOR if it is not owned here,
        else NONE."""
        return self.runtime.partition_error(self.topic.partition_for(group_id))

    @property
    def loading(self) -> bool:
        """Some partition is being loaded (ListGroups answers COORDINATOR_LOAD_IN_PROGRESS)."""
        return self.runtime.loading

    def owned_partitions(self) -> set[int]:
        return self.runtime.owned_partitions()

    def on_elected(self, partition: int, leader_epoch: int) -> None:
        """Kafka's ``onElection``: this broker leads ``__consumer_offsets`` partition
        ``partition`` at ``leader_epoch``; its groups and offsets are loaded on the I/O
        executor. A partition already owned or loading keeps its state. Event loop only."""
        self.runtime.schedule_load(partition, leader_epoch)

    def on_leadership_change(
        self,
        leaders: Iterable[tuple[TopicPartition, int]],
        followers: Iterable[tuple[TopicPartition, int]],
    ) -> None:
        """KafkaApis' ``onLeadershipChange`` for ``__consumer_offsets`` partitions."""
        self.runtime.on_leadership_change(leaders, followers)

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        """Kafka's ``onResignation``: this broker no longer leads ``__consumer_offsets``
        partition ``partition``; its load (if under way) is abandoned, its groups are
        dropped from memory, their rebalances cancelled, and members waiting in JoinGroup
        or SyncGroup answered NOT_COORDINATOR (:meth:`GroupShard.on_unloaded`). ``None``
        (a StopReplica deleting the partition) always applies. Event loop only."""
        self.runtime.schedule_unload(partition, leader_epoch)

    def create_offsets_topic(self) -> None:
        """Start creating ``__consumer_offsets`` in the background unless under way
        (Kafka's FindCoordinator auto-creation in a cluster: the request answers
        COORDINATOR_NOT_AVAILABLE meanwhile; a failure is logged, the next request
        tries again)."""
        self.runtime.create_topic_in_background()

    def start(self) -> None:
        self.runtime.schedule_periodic(
            "Session expiration", lambda: SESSION_SWEEP_MS, self._expire_sessions
        )
        # Kafka's delete-expired-group-metadata task
        self.runtime.schedule_periodic(
            "Offset expiration",
            lambda: self.config.offsets_retention_check_interval_ms,
            self.cleanup_expired,
        )

    async def stop(self) -> None:
        await self.share.stop()
        await self.runtime.stop()
        for task in [g.rebalance for g in self.groups.values() if g.rebalance is not None]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _expire_sessions(self) -> None:
        now = time.monotonic()
        for group in list(self.groups.values()):
            for mid, expiry in list(group.pending.items()):
                if expiry <= now:
                    del group.pending[mid]
            for member in list(group.members.values()):
                waiting = member.join_future is not None and not member.join_future.done()
                if not waiting and member.deadline <= now:
                    self._remove_member(group, member)

    # -- writes ----------------------------------------------------------------------------

    def _write_lock(self, group_id: str) -> asyncio.Lock:
        """The lock ordering the writes to ``group_id``'s ``__consumer_offsets``
        partition: held across validate -> :meth:`_append` -> apply."""
        return self.runtime.partition_lock(self.topic.partition_for(group_id))

    async def _append(
        self,
        group_id: str,
        entries: list[tuple[bytes, bytes | None]],
        txn: tuple[int, int] | None = None,
        guard: tuple[int, int] | None = None,
    ) -> int:
        """Append ``entries`` to ``group_id``'s partition and wait until replicated (the
        caller holds :meth:`_write_lock`); ``txn``: (producer id, epoch) of a
        transactional batch, ``guard`` its KIP-890 verification guard. The log offset
        after the batch (-1 when ``entries`` is empty). Raises
        :class:`~kafkacore.coordinator.runtime.CoordinatorWriteError`."""
        return await self.runtime.append(
            self.topic.partition_for(group_id), entries, producer=txn, verification_guard=guard
        )

    async def _persist_group(self, group: Group) -> int:
        """Write ``group``'s GroupMetadata record (its state when the write lock is
        taken); the error code of the append (:func:`append_error_code`), NONE once
        written."""
        async with self._write_lock(group.group_id):
            try:
                await self._append(group.group_id, [self.group_metadata_record(group)])
            except Exception as exc:
                code = append_error_code(exc)
                logger.warning(
                    "Failed to write the metadata of group %s: %s (%s)",
                    group.group_id,
                    exc,
                    ErrorCode(code).name,
                )
                return code
        return ErrorCode.NONE

    # -- helpers ---------------------------------------------------------------------------

    def group_metadata_record(self, group: Group) -> tuple[bytes, bytes | None]:
        """``group``'s GroupMetadata record (Kafka's ``newGroupMetadataRecord``): its
        members in the order they iterate, each with its subscription to the selected
        protocol and its assignment."""
        members = [
            recs.MemberMetadata(
                member_id=m.member_id,
                client_id=m.client_id,
                client_host=m.client_host,
                session_timeout=m.session_timeout,
                subscription=m.metadata_for(group.protocol),
                assignment=m.assignment,
                rebalance_timeout=m.rebalance_timeout,
                group_instance_id=m.instance_id,
            )
            for m in group.members.values()
        ]
        value = recs.group_metadata_value(
            group.protocol_type or "",
            group.generation,
            group.protocol,
            group.leader,
            group.state_timestamp,
            members,
        )
        return recs.group_metadata_key(group.group_id), value

    def interrupt_rebalance(self, group: Group, code: int) -> None:
        """Every member waiting in JoinGroup or SyncGroup is answered ``code`` and the
        rebalance under way is cancelled (Kafka's ``completeAllJoinFutures`` and
        ``completeAllSyncFutures``, when the group becomes a consumer group)."""
        for m in group.members.values():
            if m.join_future is not None and not m.join_future.done():
                m.join_future.set_result(join_error(code, m.member_id))
            if m.sync_future is not None and not m.sync_future.done():
                m.sync_future.set_result((code, b""))
        if group.rebalance is not None:
            group.rebalance.cancel()
            group.rebalance = None

    def install_converted(self, group: Group, rebalance_reason: str | None) -> None:
        """``group``, a consumer group converted to a classic group whose records were just
        replayed, replaces what the replay made of them (it keeps every member's
        protocols); its offsets stay; its members' sessions start, and with a
        ``rebalance_reason`` it rebalances (Kafka's ``convertToClassicGroup``)."""
        existing = self.groups.get(group.group_id)
        if existing is not None:
            group.take_offsets(existing)
        self.groups[group.group_id] = group
        for member in group.members.values():
            member.renew_session()
        if rebalance_reason is not None:
            self.prepare_rebalance(group, rebalance_reason)

    def _remove_member(self, group: Group, member: Member) -> None:
        group.members.pop(member.member_id, None)
        if member.instance_id is not None and group.static.get(member.instance_id) == (
            member.member_id
        ):
            del group.static[member.instance_id]
        if member.join_future is not None and not member.join_future.done():
            member.join_future.set_result(join_error(ErrorCode.UNKNOWN_MEMBER_ID, ""))
        if member.sync_future is not None and not member.sync_future.done():
            member.sync_future.set_result((ErrorCode.UNKNOWN_MEMBER_ID, b""))
        if group.leader == member.member_id:
            group.leader = next(iter(group.members), None)
        if group.state in (STABLE, COMPLETING):
            self.prepare_rebalance(group, f"removing member {member.member_id}")
        elif group.state == PREPARING and group.joined is not None:
            group.joined.set()

    def prepare_rebalance(self, group: Group, reason: str) -> None:
        """Kafka's ``prepareRebalance``: members waiting in SyncGroup are told
        REBALANCE_IN_PROGRESS, the group moves to PreparingRebalance and its rebalance
        runs until every member rejoined or the rebalance timeout passed."""
        logger.info(
            "Preparing to rebalance group %s in state %s with old generation %d (reason: %s)",
            group.group_id,
            group.state,
            group.generation,
            reason,
        )
        for m in group.members.values():
            if m.sync_future is not None and not m.sync_future.done():
                m.sync_future.set_result((ErrorCode.REBALANCE_IN_PROGRESS, b""))
        initial = group.state == EMPTY
        group.transition_to(PREPARING)
        group.joined = asyncio.Event()
        group.rebalance = asyncio.get_running_loop().create_task(
            self._run_rebalance(group, initial)
        )

    async def _run_rebalance(self, group: Group, initial: bool) -> None:
        loop = asyncio.get_running_loop()
        timeout = max((m.rebalance_timeout for m in group.members.values()), default=0) / 1000
        start = loop.time()
        if initial:
            delay = min(self.config.group_initial_rebalance_delay_ms / 1000, timeout)
            await asyncio.sleep(delay)
        assert group.joined is not None
        while True:
            if all(
                m.join_future is not None and not m.join_future.done()
                for m in group.members.values()
            ):
                break
            remaining = start + timeout - loop.time()
            if remaining <= 0:
                break
            group.joined.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(group.joined.wait(), remaining)
        await self._complete_join(group)

    async def _complete_join(self, group: Group) -> None:
        """Complete the rebalance: the new generation is answered to the members waiting
        in JoinGroup; an emptied group's metadata is written (Kafka's classic
        ``completeClassicGroupJoin``; a group with members is written at SyncGroup)."""
        try:
            await self._complete_join_and_persist(group)
        finally:
            if group.rebalance is asyncio.current_task():
                group.rebalance = None

    async def _complete_join_and_persist(self, group: Group) -> None:
        for m in list(group.members.values()):
            if m.join_future is None or m.join_future.done():
                group.members.pop(m.member_id)
                if m.instance_id is not None and group.static.get(m.instance_id) == m.member_id:
                    del group.static[m.instance_id]
        group.generation += 1
        group.state_timestamp = self.clock()
        if not group.members:
            group.transition_to(EMPTY)
            group.protocol, group.leader = None, None
            await self._persist_group(group)
            return
        group.protocol = group.select_protocol()
        if group.leader not in group.members:
            group.leader = next(iter(group.members))
        group.transition_to(COMPLETING)
        logger.info(
            "Stabilized group %s generation %d with %d members",
            group.group_id,
            group.generation,
            len(group.members),
        )
        all_members = [
            (m.member_id, m.instance_id, m.metadata_for(group.protocol))
            for m in group.members.values()
        ]
        for m in group.members.values():
            m.renew_session()
            assert m.join_future is not None
            m.join_future.set_result(
                JoinResult(
                    ErrorCode.NONE,
                    group.generation,
                    group.protocol,
                    group.leader,
                    m.member_id,
                    all_members if m.member_id == group.leader else [],
                )
            )
            m.join_future = None
        # a group with members is written by its leader's SyncGroup (Kafka's
        # completeClassicGroupJoin writes only an emptied group)

    # -- JoinGroup -------------------------------------------------------------------------

    async def join(
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
    ) -> JoinResult:
        c = self.config
        if not group_id:
            return join_error(ErrorCode.INVALID_GROUP_ID, member_id)
        owner_error = self.coordinator_error(group_id)
        if owner_error:
            return join_error(owner_error, member_id)
        if not (
            c.group_min_session_timeout_ms <= session_timeout <= c.group_max_session_timeout_ms
        ):
            return join_error(ErrorCode.INVALID_SESSION_TIMEOUT, member_id)
        if self.consumer.serves_classic(group_id):
            # a classic member inside a consumer group (the online migration)
            joined = await self.consumer.classic_join(
                version=version,
                group_id=group_id,
                member_id=member_id,
                instance_id=instance_id,
                client_id=client_id,
                client_host=client_host,
                session_timeout=session_timeout,
                # JoinGroup v0 has no rebalance timeout: the session timeout stands for it
                rebalance_timeout=rebalance_timeout if rebalance_timeout >= 0 else session_timeout,
                protocol_type=protocol_type,
                protocols=protocols,
            )
            if joined is not None:
                return joined
        if self.consumer.group(group_id) is not None:
            try:  # an empty consumer group becomes a classic group (its tombstones)
                await self.consumer.delete_empty(group_id)
            except GroupError as exc:
                return join_error(exc.code, member_id)
        group = self.groups.get(group_id)
        created = False
        if group is None or group.state == DEAD:
            if member_id:
                return join_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id)
            group = self.groups[group_id] = Group(group_id, state_timestamp=self.clock())
            created = True
        if not protocol_type or not protocols:
            return join_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if created:
            # Kafka commits a group JoinGroup creates with an empty GroupMetadata record (no
            # protocol type, generation 0); failing that, the group is not created
            code = await self._persist_group(group)
            if code:
                if self.groups.get(group_id) is group and not group.members:
                    del self.groups[group_id]
                return join_error(code, "")
        if group.members and (
            protocol_type != group.protocol_type
            or not group.supported_protocols() & {n for n, _ in protocols}
        ):
            return join_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id)
        rebalance_timeout = session_timeout if rebalance_timeout < 0 else rebalance_timeout

        def new_member(mid: str) -> Member:
            return Member(
                mid,
                instance_id,
                client_id,
                client_host,
                session_timeout,
                rebalance_timeout,
                protocol_type,
                list(protocols),
            )

        if not member_id:
            if instance_id is not None and instance_id in group.static:
                old = group.members[group.static[instance_id]]
                new = new_member(f"{instance_id}-{uuid.uuid4()}")
                new.assignment = old.assignment
                unchanged = old.protocols == new.protocols
                self._replace(group, old, new)
                if group.state == STABLE and unchanged:
                    new.renew_session()
                    code = await self._persist_group(group)
                    if code:  # Kafka reverts the replacement and answers the error
                        if group.members.get(new.member_id) is new:
                            self._replace(group, new, old)
                        return join_error(code, "")
                    return JoinResult(
                        ErrorCode.NONE,
                        group.generation,
                        group.protocol,
                        group.leader,
                        new.member_id,
                        [],
                    )
                return await self._add_and_wait(group, new, existing=True)
            if len(group.members) >= c.group_max_size:
                return join_error(ErrorCode.GROUP_MAX_SIZE_REACHED, "")
            if instance_id is None:
                new_id = f"{client_id}-{uuid.uuid4()}"
                if version >= 4:
                    group.pending[new_id] = time.monotonic() + session_timeout / 1000
                    logger.info(
                        "Dynamic member with unknown member id joins group %s in %s state. "
                        "Created a new member id %s and request the member to rejoin with "
                        "this id.",
                        group_id,
                        group.state,
                        new_id,
                    )
                    return join_error(ErrorCode.MEMBER_ID_REQUIRED, new_id)
            else:
                new_id = f"{instance_id}-{uuid.uuid4()}"
                group.static[instance_id] = new_id
            return await self._add_and_wait(group, new_member(new_id), existing=False)
        if member_id in group.pending:
            del group.pending[member_id]
            if len(group.members) >= c.group_max_size:
                return join_error(ErrorCode.GROUP_MAX_SIZE_REACHED, member_id)
            return await self._add_and_wait(group, new_member(member_id), existing=False)
        if instance_id is not None and group.static.get(instance_id, member_id) != member_id:
            return join_error(ErrorCode.FENCED_INSTANCE_ID, member_id)
        member = group.members.get(member_id)
        if member is None:
            return join_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id)
        unchanged = member.protocols == list(protocols)
        if group.state == COMPLETING and unchanged:
            member.renew_session()
            everyone = [
                (m.member_id, m.instance_id, m.metadata_for(group.protocol))
                for m in group.members.values()
            ]
            return JoinResult(
                ErrorCode.NONE,
                group.generation,
                group.protocol,
                group.leader,
                member_id,
                everyone if member_id == group.leader else [],
            )
        if group.state == STABLE and unchanged and member_id != group.leader:
            member.renew_session()
            return JoinResult(
                ErrorCode.NONE, group.generation, group.protocol, group.leader, member_id, []
            )
        member.protocols = list(protocols)
        member.session_timeout, member.rebalance_timeout = session_timeout, rebalance_timeout
        return await self._add_and_wait(group, member, existing=True)

    def _replace(self, group: Group, old: Member, new: Member) -> None:
        del group.members[old.member_id]
        group.members[new.member_id] = new
        assert new.instance_id is not None
        group.static[new.instance_id] = new.member_id
        if group.leader == old.member_id:
            group.leader = new.member_id
        if old.join_future is not None and not old.join_future.done():
            old.join_future.set_result(join_error(ErrorCode.FENCED_INSTANCE_ID, old.member_id))
        if old.sync_future is not None and not old.sync_future.done():
            old.sync_future.set_result((ErrorCode.FENCED_INSTANCE_ID, b""))

    async def _add_and_wait(self, group: Group, member: Member, *, existing: bool) -> JoinResult:
        group.members[member.member_id] = member
        if group.protocol_type is None or not existing or len(group.members) == 1:
            group.protocol_type = member.protocol_type
        future: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        member.join_future = future
        member.renew_session()
        if group.state != PREPARING:
            self.prepare_rebalance(group, f"member {member.member_id} joining")
        assert group.joined is not None
        group.joined.set()
        result: JoinResult = await future
        return result

    # -- SyncGroup / Heartbeat / LeaveGroup -------------------------------------------------

    def _check_member(
        self, group_id: str, member_id: str, instance_id: str | None, generation: int | None
    ) -> tuple[int, Group | None, Member | None]:
        group = self.groups.get(group_id)
        if group is None or group.state == DEAD:
            return ErrorCode.UNKNOWN_MEMBER_ID, None, None
        if instance_id is not None and group.static.get(instance_id, member_id) != member_id:
            return ErrorCode.FENCED_INSTANCE_ID, group, None
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID, group, None
        if generation is not None and generation != group.generation:
            return ErrorCode.ILLEGAL_GENERATION, group, member
        return ErrorCode.NONE, group, member

    async def sync(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: dict[str, bytes],
    ) -> tuple[int, str | None, str | None, bytes]:
        owner_error = self.coordinator_error(group_id)
        if owner_error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # Kafka: the rebalance's state is lost, the member rejoins (older clients do
            # not expect COORDINATOR_LOAD_IN_PROGRESS here)
            return ErrorCode.REBALANCE_IN_PROGRESS, None, None, b""
        if owner_error:
            return owner_error, None, None, b""
        if self.consumer.group(group_id) is not None:
            return await self.consumer.classic_sync(
                group_id, generation, member_id, instance_id, protocol_type, protocol_name
            )
        code, group, member = self._check_member(group_id, member_id, instance_id, generation)
        if code or group is None or member is None:
            return code, None, None, b""
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
            protocol_name is not None and protocol_name != group.protocol
        ):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL, None, None, b""
        pt, pn = group.protocol_type, group.protocol
        if group.state == PREPARING:
            return ErrorCode.REBALANCE_IN_PROGRESS, pt, pn, b""
        member.renew_session()
        if group.state == STABLE:
            return ErrorCode.NONE, pt, pn, member.assignment
        future: asyncio.Future[tuple[int, bytes]] = asyncio.get_running_loop().create_future()
        member.sync_future = future
        if member_id == group.leader:
            logger.info(
                "Assignment received from leader %s for group %s for generation %d. "
                "The group has %d members.",
                member_id,
                group_id,
                group.generation,
                len(group.members),
            )
            for m in group.members.values():
                m.assignment = assignments.get(m.member_id, b"")
            group.state_timestamp = self.clock()
            # the group turns Stable once its assignment is written (Kafka's classic
            # SyncGroup completes in the append's callback)
            write_error = await self._persist_group(group)
            if group.state != COMPLETING or group.generation != generation:
                pass  # a rebalance began meanwhile and answered the waiting members
            elif write_error:
                for m in group.members.values():
                    m.assignment = b""
                    if m.sync_future is not None and not m.sync_future.done():
                        m.sync_future.set_result((write_error, b""))
                    m.sync_future = None
                self.prepare_rebalance(
                    group,
                    f"Error {ErrorCode(write_error).name} when storing group assignment "
                    f"during SyncGroup (member: {member_id})",
                )
            else:
                group.transition_to(STABLE)
                for m in group.members.values():
                    if m.sync_future is not None and not m.sync_future.done():
                        m.sync_future.set_result((ErrorCode.NONE, m.assignment))
                    m.sync_future = None
        code, assignment = await future
        return code, pt, pn, assignment

    async def heartbeat(
        self, group_id: str, generation: int, member_id: str, instance_id: str | None
    ) -> int:
        """Heartbeat: a classic group's member keeps its session (REBALANCE_IN_PROGRESS
        while it rebalances); a classic member of a consumer group is answered by the
        consumer group (:meth:`ConsumerGroupCoordinator.classic_heartbeat`)."""
        owner_error = self.coordinator_error(group_id)
        if owner_error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            return ErrorCode.NONE  # Kafka answers blindly while the group loads
        if owner_error:
            return owner_error
        if self.consumer.group(group_id) is not None:
            return await self.consumer.classic_heartbeat(
                group_id, generation, member_id, instance_id
            )
        code, group, member = self._check_member(group_id, member_id, instance_id, generation)
        if code or group is None or member is None:
            return code
        member.renew_session()
        return ErrorCode.REBALANCE_IN_PROGRESS if group.state == PREPARING else ErrorCode.NONE

    async def leave(
        self, group_id: str, members: list[tuple[str, str | None]]
    ) -> tuple[int, list[int]]:
        """LeaveGroup: the group error and a code per member (a consumer group's members
        are fenced by :meth:`ConsumerGroupCoordinator.classic_leave`)."""
        owner_error = self.coordinator_error(group_id)
        if owner_error:
            return owner_error, []
        if self.consumer.group(group_id) is not None:
            return await self.consumer.classic_leave(group_id, members)
        group = self.groups.get(group_id)
        if group is None or group.state == DEAD:
            return ErrorCode.UNKNOWN_MEMBER_ID, [ErrorCode.UNKNOWN_MEMBER_ID] * len(members)
        codes: list[int] = []
        for member_id, instance_id in members:
            if instance_id is not None:
                known = group.static.get(instance_id)
                if known is None:
                    codes.append(ErrorCode.UNKNOWN_MEMBER_ID)
                    continue
                if member_id and member_id != known:
                    codes.append(ErrorCode.FENCED_INSTANCE_ID)
                    continue
                member_id = known
            if member_id in group.pending:
                del group.pending[member_id]
                codes.append(ErrorCode.NONE)
                continue
            member = group.members.get(member_id)
            if member is None:
                codes.append(ErrorCode.UNKNOWN_MEMBER_ID)
                continue
            self._remove_member(group, member)
            codes.append(ErrorCode.NONE)
        return ErrorCode.NONE, codes

    # -- offsets ---------------------------------------------------------------------------

    async def commit(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        offsets: list[tuple[str, int, int, int, str | None]],
        *,
        retention_time_ms: int = DEFAULT_RETENTION_TIME,
        api_version: int = 9,
    ) -> list[tuple[str, list[tuple[int, int]]]]:
        """OffsetCommit: ``offsets`` (topic, partition, offset, leader epoch, metadata) ->
        the response's topics, ``(topic, [(partition, error code)])``, in the order
        Kafka's ``OffsetCommitResponse.Builder`` gives them: the partitions of topics or
        partitions that do not exist first (UNKNOWN_TOPIC_OR_PARTITION, KafkaApis), then
        the coordinator's answer for the rest, appended to a topic already listed.
        ``retention_time_ms`` (v2-4; -1: the broker's ``offsets.retention.minutes``)
        gives the offsets an expiry timestamp, as Kafka 4.x still does.

        The records are appended on the I/O executor; the offsets are stored (visible to
        :meth:`fetch`) once written; a failed append answers its error
        (:func:`append_error_code`) for every partition written."""
        answer, valid = self._split_unknown(offsets)
        if valid:
            async with self._write_lock(group_id):  # validate, append, apply in log order
                codes = await self._commit_locked(
                    group_id,
                    generation,
                    member_id,
                    instance_id,
                    valid,
                    retention_time_ms,
                    api_version,
                )
            for (topic, partition, *_), code in zip(valid, codes, strict=True):
                answer.setdefault(topic, []).append((partition, code))
        return list(answer.items())

    def _split_unknown(
        self, offsets: list[tuple[str, int, int, int, str | None]]
    ) -> tuple[dict[str, list[tuple[int, int]]], list[tuple[str, int, int, int, str | None]]]:
        """``(answer, valid)``: the offsets of partitions that do not exist answered
        UNKNOWN_TOPIC_OR_PARTITION (by topic, as KafkaApis does before the coordinator),
        and the others."""
        answer: dict[str, list[tuple[int, int]]] = {}
        valid: list[tuple[str, int, int, int, str | None]] = []
        for entry in offsets:
            topic, partition = entry[0], entry[1]
            if self._partition_exists(topic, partition):
                valid.append(entry)
            else:
                answer.setdefault(topic, []).append(
                    (partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                )
        return answer, valid

    def _partition_exists(self, topic: str, partition: int) -> bool:
        count = self.replicas.cache.partition_count(topic)
        return count is not None and 0 <= partition < count

    def _validate_commit(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        api_version: int,
        *,
        transactional: bool = False,
        partitions: Sequence[tuple[str, int]] = (),
    ) -> tuple[int, Group | None]:
        """OffsetMetadataManager.validateOffsetCommit (``validateTransactionalOffsetCommit``
        when ``transactional``) + ClassicGroup.validateOffsetCommit: the group-level error,
        and the group (created Empty for a simple commit). A transactional commit without
        member (TxnOffsetCommit v0-2, or v3+ without group metadata) is accepted whatever
        the group's state, and one with member is not held back by a rebalance."""
        consumer_group = self.consumer.group(group_id)
        if consumer_group is not None:
            return self.consumer.validate_offset_commit(
                consumer_group,
                member_id,
                instance_id,
                generation,
                api_version,
                [(self._topic_id(t), p) for t, p in partitions],
                transactional=transactional,
            ), consumer_group  # type: ignore[return-value]
        group = self.groups.get(group_id)  # "" is a group id like any other (Kafka 4.3.1)
        if group is None or group.state == DEAD:
            if generation >= 0:
                # v9+ answers GROUP_ID_NOT_FOUND; older versions keep ILLEGAL_GENERATION
                return (
                    ErrorCode.GROUP_ID_NOT_FOUND
                    if api_version >= 9 and not transactional
                    else ErrorCode.ILLEGAL_GENERATION
                ), None
            logger.info(
                "[GroupId %s] Creating a simple consumer group via manual offset commit.", group_id
            )
            group = self.groups[group_id] = Group(group_id)
            return ErrorCode.NONE, group
        if generation < 0 and group.state == EMPTY:
            return ErrorCode.NONE, group  # a simple (admin or manual) commit to an empty group
        if generation >= 0 or member_id or instance_id is not None:
            if instance_id is not None:
                known = group.static.get(instance_id)
                if known is None:
                    return ErrorCode.UNKNOWN_MEMBER_ID, group
                if known != member_id:
                    return ErrorCode.FENCED_INSTANCE_ID, group
            if member_id not in group.members:
                return ErrorCode.UNKNOWN_MEMBER_ID, group
            if generation != group.generation:
                return ErrorCode.ILLEGAL_GENERATION, group
        elif not transactional and group.state != EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID, group
        if not transactional and group.state == COMPLETING:
            return ErrorCode.REBALANCE_IN_PROGRESS, group
        return ErrorCode.NONE, group

    async def _commit_locked(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        offsets: list[tuple[str, int, int, int, str | None]],
        retention_time_ms: int,
        api_version: int,
    ) -> list[int]:
        owner_error = self.coordinator_error(group_id)  # checked under the write lock
        if owner_error:
            return [owner_error] * len(offsets)
        created = group_id not in self.groups
        code, group = self._validate_commit(
            group_id,
            generation,
            member_id,
            instance_id,
            api_version,
            partitions=[(t, p) for t, p, *_ in offsets],
        )
        if code or group is None:
            return [code] * len(offsets)
        member = group.members.get(member_id) if isinstance(group, Group) else None
        if member is not None and group.state in (STABLE, PREPARING):
            member.renew_session()  # a classic member's commit keeps its session
        now = self.clock()
        expire = None if retention_time_ms == DEFAULT_RETENTION_TIME else now + retention_time_ms
        codes: list[int] = []
        records: list[tuple[bytes, bytes | None]] = []
        written: list[tuple[tuple[str, int], Offset]] = []
        for topic, partition, offset, epoch, metadata in offsets:
            text = metadata or ""
            if java_length(text) > self.config.offset_metadata_max_bytes:
                codes.append(ErrorCode.OFFSET_METADATA_TOO_LARGE)
                continue
            stored = Offset(offset, epoch, text, now, expire, topic_id=self._topic_id(topic))
            written.append(((topic, partition), stored))
            records.append(
                (
                    recs.offset_commit_key(group_id, topic, partition),
                    self._offset_commit_value(topic, offset, epoch, text, now, expire),
                )
            )
            codes.append(ErrorCode.NONE)
        try:
            end = await self._append(group_id, records)
        except Exception as exc:
            failed = append_error_code(exc)
            logger.warning("Failed to write the offsets of group %s: %s", group_id, exc)
            if created and not group.offsets and self.groups.get(group_id) is group:
                del self.groups[group_id]  # the simple group was never written
            return [failed if c == ErrorCode.NONE else c for c in codes]
        for i, (_tp, stored) in enumerate(written):
            stored.record_offset = end - len(written) + i
        group.offsets.update(written)  # in log order: the write lock is held
        return codes

    def _topic_id(self, topic: str) -> uuid.UUID | None:
        known = self.replicas.cache.topic(topic)
        return None if known is None else known.topic_id

    def _offset_commit_value(
        self, topic: str, offset: int, epoch: int, metadata: str, now: int, expire: int | None
    ) -> bytes:
        """The value as Kafka 4.3 writes it: v1 with an expire timestamp, else v4 with the
        topic's id (looked up by name, as for a commit by name)."""
        if expire is not None:
            return recs.offset_commit_value(offset, epoch, metadata, now, expire)
        known = self.replicas.cache.topic(topic)
        return recs.offset_commit_value(
            offset,
            epoch,
            metadata,
            now,
            version=4,
            topic_id=None if known is None else known.topic_id,
        )

    # -- transactional offsets (TxnOffsetCommit, the markers) -----------------------------

    async def commit_transactional(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        generation: int,
        member_id: str,
        instance_id: str | None,
        offsets: list[tuple[str, int, int, int, str | None]],
        *,
        api_version: int = 3,
        verify: TxnVerifier | None = None,
    ) -> list[tuple[str, list[tuple[int, int]]]]:
        """TxnOffsetCommit: ``offsets`` (topic, partition, offset, leader epoch,
        metadata) committed in the open transaction of ``producer_id`` at
        ``producer_epoch`` -> the response's topics, ``(topic, [(partition, error)])``,
        the partitions of unknown topics or partitions first (UNKNOWN_TOPIC_OR_PARTITION,
        as Kafka's ``KafkaApis``), then the coordinator's answer for the rest.

        Kafka's ``GroupCoordinatorService.commitTransactionalOffsets`` and
        ``OffsetMetadataManager.commitTransactionalOffset``: an empty group id is
        INVALID_GROUP_ID; ownership errors; a missing group is created Empty for a
        commit without generation (ILLEGAL_GENERATION with one); v3+'s member fields are
        checked as an OffsetCommit's (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
        ILLEGAL_GENERATION); metadata over ``offset.metadata.max.bytes`` is
        OFFSET_METADATA_TOO_LARGE for its partition. ``verify`` (KIP-890, Kafka's
        ``maybeStartTransactionVerificationForPartition``): awaited with the group's
        ``__consumer_offsets`` partition once ownership is checked, before the write lock
        is taken; ``(error, guard)``: the error to answer for every partition when that
        partition is not in the producer's transaction, else NONE and the verification
        guard the append checks. The accepted offsets are appended as
        one transactional batch of the producer (:meth:`OffsetsTopic.write`); the log's
        producer checks answer as Kafka's (INVALID_PRODUCER_EPOCH for a fenced epoch,
        ...). They stay pending - invisible to :meth:`fetch`, UNSTABLE_OFFSET_COMMIT for
        OffsetFetch with RequireStable - until :meth:`on_transaction_completed`."""
        answer, valid = self._split_unknown(offsets)
        if valid:
            guard: tuple[int, int] | None = None
            error = ErrorCode.INVALID_GROUP_ID if not group_id else self.coordinator_error(group_id)
            if not error and verify is not None:
                error, guard = await verify(self.topic.partition_for(group_id))
            if error:
                codes = [int(error)] * len(valid)
            else:
                async with self._write_lock(group_id):
                    codes = await self._commit_transactional_locked(
                        group_id,
                        (producer_id, producer_epoch),
                        generation,
                        member_id,
                        instance_id,
                        valid,
                        api_version,
                        guard,
                    )
            for (topic, partition, *_), code in zip(valid, codes, strict=True):
                answer.setdefault(topic, []).append((partition, code))
        return list(answer.items())

    async def _commit_transactional_locked(
        self,
        group_id: str,
        producer: tuple[int, int],
        generation: int,
        member_id: str,
        instance_id: str | None,
        offsets: list[tuple[str, int, int, int, str | None]],
        api_version: int,
        guard: tuple[int, int] | None,
    ) -> list[int]:
        owner_error = self.coordinator_error(group_id)  # again: the lock was waited for
        if owner_error:
            return [owner_error] * len(offsets)
        created = group_id not in self.groups
        code, group = self._validate_commit(
            group_id,
            generation,
            member_id,
            instance_id,
            api_version,
            transactional=True,
            partitions=[(t, p) for t, p, *_ in offsets],
        )
        if code or group is None:
            return [code] * len(offsets)
        now = self.clock()
        codes: list[int] = []
        records: list[tuple[bytes, bytes | None]] = []
        written: list[tuple[tuple[str, int], Offset]] = []
        for topic, partition, offset, epoch, metadata in offsets:
            text = metadata or ""
            if java_length(text) > self.config.offset_metadata_max_bytes:
                codes.append(ErrorCode.OFFSET_METADATA_TOO_LARGE)
                continue
            stored = Offset(offset, epoch, text, now, topic_id=self._topic_id(topic))
            written.append(((topic, partition), stored))
            records.append(
                (
                    recs.offset_commit_key(group_id, topic, partition),
                    self._offset_commit_value(topic, offset, epoch, text, now, None),
                )
            )
            codes.append(ErrorCode.NONE)
        try:
            end = await self._append(group_id, records, producer, guard)
        except Exception as exc:
            failed = append_error_code(exc, keep_log_errors=True)
            logger.warning(
                "Failed to write the transactional offsets of group %s for producer %d: %s",
                group_id,
                producer[0],
                exc,
            )
            unwritten = not group.has_offsets()
            if created and unwritten and self.groups.get(group_id) is group:
                del self.groups[group_id]  # the simple group was never written
            return [failed if c == ErrorCode.NONE else c for c in codes]
        if written:
            for i, (tp, stored) in enumerate(written):
                stored.record_offset = end - len(written) + i
                group.add_pending_txn(producer[0], tp, stored)
        return codes

    async def _delete_consumer_group(self, group: ConsumerGroup) -> int:
        """DeleteGroups of a consumer group: NON_EMPTY_GROUP with members; else its
        offsets' tombstones, then the group's (``createGroupTombstoneRecords``)."""
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        records: list[tuple[bytes, bytes | None]] = [
            (recs.offset_commit_key(group.group_id, t, p), None)
            for t, p in group.offsets_to_delete()
        ]
        records.extend(self.consumer.tombstones(group))
        try:
            await self._append(group.group_id, records)
        except Exception as exc:
            return append_error_code(exc)
        shard = self.runtime.shard(self.topic.partition_for(group.group_id))
        if shard is not None:
            shard.consumer_groups.pop(group.group_id, None)
        return ErrorCode.NONE

    def _expired_offsets(self, group: Group, now: int) -> list[tuple[str, int]]:
        """GroupMetadata.removeExpiredOffsets: which offsets of ``group`` have expired."""
        retention = self.config.offsets_retention_minutes * 60_000
        subscribed: set[str] = set()
        if group.protocol_type is None:
            # a simple consumer's group: Kafka only stores its offsets
            def base(o: Offset) -> int:
                return o.commit_timestamp
        elif group.state == EMPTY:
            # retention runs from the time the group became empty
            def base(o: Offset) -> int:
                if group.state_timestamp >= 0:
                    return group.state_timestamp
                return o.commit_timestamp
        elif group.protocol_type == "consumer" and group.state == STABLE:
            topics = group.subscribed_topics()
            if topics is None:
                return []
            subscribed = topics

            def base(o: Offset) -> int:
                return o.commit_timestamp
        else:
            return []

        def expired(o: Offset) -> bool:  # OffsetExpirationConditionImpl.isOffsetExpired
            if o.expire_timestamp is not None:  # committed with a RetentionTimeMs
                return now >= o.expire_timestamp
            return now - base(o) >= retention

        # an offset an open transaction is about to replace does not expire (Kafka 4.x)
        return [
            tp
            for tp, o in group.offsets.items()
            if tp[0] not in subscribed and expired(o) and not group.has_pending_txn(tp)
        ]

    async def cleanup_expired(self, now_ms: int | None = None) -> int:
        """GroupMetadataManager.cleanupGroupMetadata: remove expired offsets (a tombstone
        each in ``__consumer_offsets``) and delete Empty groups left without offsets (a
        GroupMetadata tombstone if the group ever had a generation). Returns how many
        offsets were removed.

        Each group's tombstones are appended on the I/O executor (under its partition's
        write lock) before the offsets and the group are forgotten; a group whose append
        fails keeps them (logged, as Kafka's expiration task logs)."""
        now = self.clock() if now_ms is None else now_ms
        removed = 0
        for group in list(self.groups.values()):
            async with self._write_lock(group.group_id):
                if self.groups.get(group.group_id) is not group:
                    continue  # deleted while an earlier group was being written
                removed += await self._expire_group(group, now)
        if removed:
            logger.info("Removed %d expired offsets", removed)
        return removed

    async def _expire_group(self, group: Group, now: int) -> int:
        """One group's part of :meth:`cleanup_expired` (its write lock held)."""
        expired = self._expired_offsets(group, now)
        records: list[tuple[bytes, bytes | None]] = [
            (recs.offset_commit_key(group.group_id, *tp), None) for tp in expired
        ]
        emptied = not group.offsets.keys() - set(expired) and not group.pending_txn
        delete = group.state == EMPTY and not group.members and emptied
        if delete and group.generation > 0:
            records.append((recs.group_metadata_key(group.group_id), None))
        try:
            await self._append(group.group_id, records)
        except Exception:
            logger.exception("Failed to expire the offsets of group %s", group.group_id)
            return 0
        for tp in expired:
            group.offsets.pop(tp, None)
        # a member may have joined during the write: the group then lives on, and its
        # metadata, written when the join completes, follows the tombstone in the log
        gone = not group.has_offsets()
        if delete and group.state == EMPTY and not group.members and gone:
            group.transition_to(DEAD)
            del self.groups[group.group_id]
        return len(expired)

    async def on_topics_deleted(self, topics: list[str]) -> int:
        """GroupMetadataManager's ``onPartitionsDeleted``: forget every group's committed
        offsets of the deleted ``topics`` (a tombstone each in ``__consumer_offsets``).
        Returns how many offsets were removed. The tombstones are appended on the I/O
        executor before the offsets are forgotten; a group whose append fails keeps them
        (logged)."""
        deleted = set(topics)
        removed = 0
        for group in list(self.groups.values()):
            async with self._write_lock(group.group_id):
                gone = [tp for tp in group.offsets_to_delete() if tp[0] in deleted]
                if not gone:
                    continue
                try:
                    await self._append(
                        group.group_id,
                        [(recs.offset_commit_key(group.group_id, *tp), None) for tp in gone],
                    )
                except Exception:
                    logger.exception(
                        "Failed to delete the offsets of group %s of deleted topics",
                        group.group_id,
                    )
                    continue
                for tp in gone:
                    group.remove_offset(tp)
                removed += len(gone)
        if removed:
            logger.info("Removed %d offsets of deleted topics %s", removed, sorted(deleted))
        return removed

    async def on_transaction_completed(
        self, partition: int, producer_id: int, committed: bool
    ) -> None:
        """Called by the WriteTxnMarkers handler once a COMMIT (``committed``) or ABORT
        marker of ``producer_id`` is in ``__consumer_offsets-<partition>``: the pending
        transactional offsets of that producer in the groups of that partition become
        visible (each unless a later record committed its partition), or are dropped
        (Kafka's ``GroupCoordinator.onTransactionCompleted``, the marker's replay).

        A partition being loaded is waited for (its load reads the marker too, so the
        offsets are already decided then); one not owned here is left alone (its
        leader's load replays the marker). Taken under the partition's write lock, so a
        TxnOffsetCommit still being written is applied first. Event loop only."""
        await self.runtime.wait_loaded(partition)
        if self.runtime.partition_error(partition) != ErrorCode.NONE:
            return
        async with self.runtime.partition_lock(partition):
            shard = self.runtime.shard(partition)
            if shard is None:  # resigned while the lock was waited for
                return
            done = shard.complete_transaction(producer_id, committed)
        logger.debug(
            "%s transactional offsets of producer %d in %s-%d (%d materialised)",
            "Committed" if committed else "Aborted",
            producer_id,
            OFFSETS_TOPIC,
            partition,
            done,
        )

    async def await_writes(self, group_id: str) -> None:
        """Wait until the writes to ``group_id``'s partition under way are applied
        (OffsetFetch with RequireStable: Kafka 4.x runs it as a write operation, behind
        the writes already queued)."""
        async with self._write_lock(group_id):
            pass

    def has_pending_txn(self, group_id: str, topic: str, partition: int) -> bool:
        """An open transaction committed an offset of the partition for ``group_id``
        (Kafka's ``hasPendingTransactionalOffsets``)."""
        group = self._offsets_owner(group_id)
        return group is not None and group.has_pending_txn((topic, partition))

    def _offsets_owner(self, group_id: str) -> ConsumerGroup | Group | None:
        """The group holding ``group_id``'s offsets: its consumer group, else its classic
        group (``None``: neither)."""
        return self.consumer.group(group_id) or self.groups.get(group_id)

    def fetch(self, group_id: str) -> Mapping[tuple[str, int], Offset]:
        group = self._offsets_owner(group_id)
        if group is None:
            return {}
        offsets: Mapping[tuple[str, int], Offset] = group.offsets
        return offsets

    def fetch_error(self, group_id: str, member_id: str | None, member_epoch: int) -> int:
        """OffsetFetch v9+'s member check (``ConsumerGroup.validateOffsetFetch``): NONE
        for a classic group or none."""
        group = self.consumer.group(group_id)
        if group is None:
            return ErrorCode.NONE
        return self.consumer.validate_offset_fetch(group, member_id, member_epoch)

    async def delete_offsets(
        self, group_id: str, partitions: list[tuple[str, int]]
    ) -> tuple[int, list[int]]:
        """OffsetDelete: the group error and a code per partition. The tombstones are
        appended on the I/O executor before the offsets are forgotten; a failed append
        is the group error (:func:`append_error_code`)."""
        async with self._write_lock(group_id):
            return await self._delete_offsets_locked(group_id, partitions)

    async def _delete_offsets_locked(
        self, group_id: str, partitions: list[tuple[str, int]]
    ) -> tuple[int, list[int]]:
        owner_error = self.coordinator_error(group_id)
        if owner_error:
            return owner_error, []
        consumer_group = self.consumer.group(group_id)
        if consumer_group is not None:
            return await self._delete_consumer_offsets(consumer_group, partitions)
        group = self.groups.get(group_id)
        if group is None or group.state == DEAD:
            return ErrorCode.GROUP_ID_NOT_FOUND, []
        subscribed = group.subscribed_topics() if group.members else set()
        if group.members and subscribed is None:
            return ErrorCode.NON_EMPTY_GROUP, []
        codes: list[int] = []
        records: list[tuple[bytes, bytes | None]] = []
        gone: list[tuple[str, int]] = []
        for topic, partition in partitions:
            if subscribed and topic in subscribed:
                codes.append(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)
                continue
            tp = (topic, partition)
            # a tombstone also removes the offsets of open transactions (Kafka 4.x)
            known = tp in group.offsets or group.has_pending_txn(tp)
            if known and tp not in gone:
                gone.append(tp)
                records.append((recs.offset_commit_key(group_id, topic, partition), None))
            codes.append(ErrorCode.NONE)
        try:
            await self._append(group_id, records)
        except Exception as exc:
            logger.warning("Failed to delete offsets of group %s: %s", group_id, exc)
            return append_error_code(exc), []
        for tp in gone:
            group.remove_offset(tp)
        return ErrorCode.NONE, codes

    async def delete_group(self, group_id: str) -> int:
        """DeleteGroups for one group: its offsets' and its metadata's tombstones are
        appended on the I/O executor, then the group is forgotten; a failed append is
        the group's error (:func:`append_error_code`). A share group's state goes first
        (:meth:`ShareGroupCoordinator.delete`)."""
        if not self.coordinator_error(group_id) and self.share.group(group_id) is not None:
            return await self.share.delete(group_id)
        async with self._write_lock(group_id):
            return await self._delete_group_locked(group_id)

    async def _delete_consumer_offsets(
        self, group: ConsumerGroup, partitions: list[tuple[str, int]]
    ) -> tuple[int, list[int]]:
        """OffsetDelete on a consumer group (``ConsumerGroup.validateOffsetDelete``): the
        topics its members subscribe to stay, GROUP_SUBSCRIBED_TO_TOPIC."""
        _regexes, counts = group.subscription_counts()
        codes: list[int] = []
        records: list[tuple[bytes, bytes | None]] = []
        gone: list[tuple[str, int]] = []
        for topic, partition in partitions:
            if group.members and topic in counts:
                codes.append(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)
                continue
            tp = (topic, partition)
            known = tp in group.offsets or group.has_pending_txn(tp)
            if known and tp not in gone:
                gone.append(tp)
                records.append((recs.offset_commit_key(group.group_id, topic, partition), None))
            codes.append(ErrorCode.NONE)
        try:
            await self._append(group.group_id, records)
        except Exception as exc:
            return append_error_code(exc), []
        for tp in gone:
            group.remove_offset(tp)
        return ErrorCode.NONE, codes

    async def _delete_group_locked(self, group_id: str) -> int:
        owner_error = self.coordinator_error(group_id)
        if owner_error:
            return owner_error
        consumer_group = self.consumer.group(group_id)
        if consumer_group is not None:
            return await self._delete_consumer_group(consumer_group)
        group = self.groups.get(group_id)
        if group is None or group.state == DEAD:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.state != EMPTY or group.members:
            return ErrorCode.NON_EMPTY_GROUP
        # the offsets of open transactions get a tombstone too (Kafka's deleteAllOffsets)
        records: list[tuple[bytes, bytes | None]] = [
            (recs.offset_commit_key(group_id, t, p), None) for t, p in group.offsets_to_delete()
        ]
        records.append((recs.group_metadata_key(group_id), None))
        try:
            await self._append(group_id, records)
        except Exception as exc:
            logger.warning("Failed to delete group %s: %s", group_id, exc)
            return append_error_code(exc)
        group.clear_offsets()  # all tombstoned; commits wait for the write lock
        # a member may have joined during the write: the group then lives on, and its
        # metadata, written when the join completes, follows the tombstone in the log
        if group.state == EMPTY and not group.members and self.groups.get(group_id) is group:
            group.transition_to(DEAD)
            del self.groups[group_id]
        return ErrorCode.NONE
