"""Kafka's ZooKeeper-mode ``KafkaController`` (cluster.md §2).

One asyncio queue of events consumed by one task (CONVENTIONS 15): ZooKeeper watches
(possibly fired on kazoo's thread) and broker requests only post events
(:mod:`~kafkacore.controller.events`, Kafka's ``ControllerEvent``s); every decision and
every change of the :class:`ControllerContext` happens in that task, which dispatches on
the event's type (:meth:`KafkaController._process`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, NoReturn, TypeVar, cast

from kafkacore.config import BrokerConfig
from kafkacore.controller import zkadapter as zka
from kafkacore.controller.algorithms import RECOVERED, RECOVERING, LeaderAndIsr
from kafkacore.controller.channel import ControllerBrokerRequestBatch, ControllerChannelManager
from kafkacore.controller.context import (
    ControllerContext,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
)
from kafkacore.controller.events import (
    AllocateProducerIds,
    AlterPartitionReceived,
    ApiPartitionReassignment,
    AutoPreferredReplicaLeaderElection,
    BrokerChange,
    ControlledShutdown,
    ControllerEvent,
    ControllerRequest,
    ElectionResults,
    Expire,
    IsrChangeNotification,
    LeaderAndIsrResponseReceived,
    ListPartitionReassignments,
    LogDirEventNotification,
    PartitionModifications,
    Reassignments,
    Reelect,
    RegisterBrokerAndReelect,
    ReplicaLeaderElection,
    Startup,
    TopicChange,
    TopicDeletion,
    TopicDeletionStopReplicaResponseReceived,
    WaitIdle,
    ZkPartitionReassignment,
    ZkPreferredReplicaElection,
)
from kafkacore.controller.state_machines import (
    CONTROLLED_SHUTDOWN,
    OFFLINE,
    PREFERRED,
    REASSIGN,
    PartitionStateMachine,
    ReplicaStateMachine,
)
from kafkacore.log import TopicPartition
from kafkacore.net import NodeClientFactory, inter_broker_security, node_client_factory
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
)
from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrResponse
from kafkacore.protocol.messages.stop_replica import StopReplicaResponse
from kafkacore.protocol.schema import KafkaStruct
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import TopicAssignment
from kafkacore.zk.errors import ControllerMovedError

__all__ = ["KafkaController"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

# a queued event and, for a ControllerRequest, the future its caller awaits; None stops
_Item = tuple[ControllerEvent, "asyncio.Future[Any] | None"]


def _unknown_event(event: NoReturn) -> NoReturn:
    """mypy proves this unreachable: ``match`` covers every :data:`ControllerEvent`."""
    raise TypeError(f"not a controller event: {event!r}")


class KafkaController:
    """The controller a ZooKeeper-mode broker runs (active while it holds ``/controller``).

    ``channel_factory(host, port)`` makes the client of one broker (default: a
    :class:`~kafkacore.net.NodeClient` on the inter-broker listener, with its security and
    ``controller.socket.timeout.ms``); ``register_broker()`` registers this broker again
    after a new ZooKeeper session (its new broker epoch). Thread-safety: :meth:`post` may
    be called from any thread; everything else runs on the event loop of :meth:`startup`.
    """

    def __init__(
        self,
        broker_id: int,
        zk: KafkaZkClient,
        config: BrokerConfig,
        channel_factory: NodeClientFactory | None = None,
        *,
        register_broker: Callable[[], Awaitable[int]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.broker_id = broker_id
        self.zk = zk
        self.config = config
        self.clock = clock
        self.listener, _protocol = config.inter_broker_listener()
        self._client_factory = channel_factory or node_client_factory(
            f"controller-{broker_id}",
            request_timeout_s=config.controller_socket_timeout_ms / 1000,
            security=inter_broker_security(config),
        )
        self._register_broker = register_broker
        self.ctx = ControllerContext()
        self.active_controller_id = -1
        self.channel: ControllerChannelManager | None = None
        self.batch: ControllerBrokerRequestBatch | None = None
        self.partition_sm: PartitionStateMachine | None = None
        self.replica_sm: ReplicaStateMachine | None = None
        self._queue: asyncio.Queue[_Item | None] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._session_lost = False
        self._rebalance_task: asyncio.Task[None] | None = None
        # every batch sent while active (broker, api name, request): for tests
        self.sent: list[tuple[int, str, KafkaStruct]] = []

    # --- public API ----------------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        return self.active_controller_id == self.broker_id

    @property
    def epoch(self) -> int:
        return self.ctx.epoch

    async def startup(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.zk.add_session_listener(self._on_session_state)
        self._task = self._loop.create_task(self._run(), name=f"controller-{self.broker_id}")
        self.post(Startup())

    async def shutdown(self) -> None:
        if self._task is None:
            return
        self._queue.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(asyncio.shield(self._task), 10)
        if not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._task = None
        await self._on_resignation()

    async def alter_partition(
        self, request: AlterPartitionRequest, version: int
    ) -> AlterPartitionResponse:
        return await self._call(AlterPartitionReceived(request, version))

    async def controlled_shutdown(
        self, broker_id: int, broker_epoch: int
    ) -> tuple[int, list[tuple[str, int]]]:
        return await self._call(ControlledShutdown(broker_id, broker_epoch))

    async def allocate_producer_ids(
        self, broker_id: int, broker_epoch: int
    ) -> tuple[int, int, int]:
        """AllocateProducerIds (KIP-730): ``(error code, first id, count)``; a block of
        1000 ids taken from ``/latest_producer_id_block`` for a registered broker."""
        return await self._call(AllocateProducerIds(broker_id, broker_epoch))

    async def elect_leaders(
        self, partitions: list[tuple[str, int]], unclean: bool = False
    ) -> ElectionResults:
        """ElectLeaders (admin-triggered PREFERRED or UNCLEAN election): per partition
        ``(error code, message)``, Kafka's ``processReplicaLeaderElection``."""
        return await self._call(ReplicaLeaderElection(tuple(partitions), unclean))

    async def alter_partition_reassignments(
        self, reassignments: dict[tuple[str, int], list[int] | None]
    ) -> ElectionResults:
        """AlterPartitionReassignments (KIP-455): target replicas, or None to cancel; per
        partition ``(error code, message)``."""
        targets = tuple(
            (key, None if target is None else tuple(target))
            for key, target in reassignments.items()
        )
        return await self._call(ApiPartitionReassignment(targets))

    async def list_partition_reassignments(
        self, partitions: list[tuple[str, int]] | None = None
    ) -> Reassignments | None:
        """Partitions being reassigned: ``(replicas, adding, removing)``; None when this
        broker is not the controller."""
        wanted = None if partitions is None else tuple(partitions)
        return await self._call(ListPartitionReassignments(wanted))

    async def wait_idle(self) -> None:
        """Until every event posted so far is processed (tests)."""
        await self._call(WaitIdle())

    # --- event queue ---------------------------------------------------------------------------

    def post(self, event: ControllerEvent) -> None:
        """Queue ``event``. Thread-safe: a watch may fire on kazoo's thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._queue.put_nowait((event, None))
        else:
            loop.call_soon_threadsafe(self._queue.put_nowait, (event, None))

    async def _call(self, request: ControllerRequest[_T]) -> _T:
        """Queue ``request`` and await its answer (Kafka's events with a callback)."""
        event = cast(ControllerEvent, request)
        if self._task is None:
            return cast(_T, self._not_controller_answer(event))
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((event, future))
        return await future

    def _watch(self, event: ControllerEvent) -> Callable[..., None]:
        """A ZooKeeper watch that posts ``event``."""

        def fire(*_ignored: Any) -> None:
            self.post(event)

        return fire

    def _on_session_state(self, state: str) -> None:
        if state == "LOST":
            self._session_lost = True
            self.post(Expire())
        elif state == "CONNECTED" and self._session_lost:
            self._session_lost = False
            self.post(RegisterBrokerAndReelect())

    async def _run(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            event, future = item
            try:
                result = await self._process(event)
            except asyncio.CancelledError:
                raise
            except ControllerMovedError as exc:
                log.info("controller %d: %s while processing %s", self.broker_id, exc, event)
                await self._maybe_resign()
                if future is not None and not future.done():
                    future.set_result(self._not_controller_answer(event))
                continue
            except Exception as exc:
                log.exception("controller %d: processing %s failed", self.broker_id, event)
                if future is not None and not future.done():
                    future.set_exception(exc)
                continue
            if future is not None and not future.done():
                future.set_result(result)

    async def _process(self, event: ControllerEvent) -> object:
        """Kafka's ``KafkaController.process``: one event, its answer for a request."""
        match event:
            case Startup():
                await self._elect()
            case Reelect():
                await self._maybe_resign()
                await self._elect()
            case Expire():
                was_active = self.is_active
                self.active_controller_id = -1
                if was_active:
                    await self._on_resignation()
            case RegisterBrokerAndReelect():
                if self._register_broker is not None:
                    await self._register_broker()
                await self._elect()
            case BrokerChange():
                await self._process_broker_change()
            case TopicChange():
                await self._process_topic_change()
            case PartitionModifications(topic=topic):
                await self._process_partition_modifications(topic)
            case TopicDeletion():
                await self._process_topic_deletion()
            case IsrChangeNotification():
                await self._process_isr_change()
            case LogDirEventNotification():
                await self._process_log_dir_event_notification()
            case ZkPartitionReassignment():
                await self._process_zk_partition_reassignment()
            case ZkPreferredReplicaElection():
                await self._process_zk_preferred_replica_election()
            case AutoPreferredReplicaLeaderElection():
                await self._process_auto_preferred_replica_leader_election()
            case LeaderAndIsrResponseReceived(broker=broker, response=response):
                await self._process_leader_and_isr_response(broker, response)
            case TopicDeletionStopReplicaResponseReceived(
                broker=broker, response=response, deleted=deleted
            ):
                await self._process_stop_replica_response(broker, response, deleted)
            case AlterPartitionReceived(request=request, version=version):
                return await self._process_alter_partition(request, version)
            case ControlledShutdown(broker_id=broker_id, broker_epoch=broker_epoch):
                return await self._process_controlled_shutdown(broker_id, broker_epoch)
            case AllocateProducerIds(broker_id=broker_id, broker_epoch=broker_epoch):
                return await self._process_allocate_producer_ids(broker_id, broker_epoch)
            case ReplicaLeaderElection(partitions=partitions, unclean=unclean):
                return await self._process_elect_leaders(list(partitions), unclean)
            case ApiPartitionReassignment(reassignments=reassignments):
                return await self._process_api_reassignment(reassignments)
            case ListPartitionReassignments(partitions=partitions):
                return await self._process_list_reassignments(partitions)
            case WaitIdle():
                pass
            case _:
                _unknown_event(event)
        return None

    def _not_controller_answer(self, event: ControllerEvent) -> object:
        """What a request gets when this broker is not (or no longer) the controller."""
        not_controller = int(ErrorCode.NOT_CONTROLLER)
        match event:
            case AlterPartitionReceived():
                return self._alter_partition_error(ErrorCode.NOT_CONTROLLER)
            case ControlledShutdown():
                return (not_controller, [])
            case AllocateProducerIds():
                return (not_controller, -1, 0)
            case ReplicaLeaderElection(partitions=partitions):
                return dict.fromkeys(partitions, (not_controller, None))
            case ApiPartitionReassignment(reassignments=reassignments):
                return dict.fromkeys((key for key, _ in reassignments), (not_controller, None))
        return None

    # --- election ------------------------------------------------------------------------------

    async def _read_controller_id(self) -> int:
        active = await self.zk.get_controller_id(watch=self._watch(Reelect()))
        return -1 if active is None else int(active)

    async def _elect(self) -> None:
        self.active_controller_id = await self._read_controller_id()
        if self.active_controller_id != -1:
            return
        try:
            epoch, version = await self.zk.register_controller_and_increment_epoch(self.broker_id)
        except ControllerMovedError:
            await self._maybe_resign()
            return
        self.ctx.epoch, self.ctx.epoch_zk_version = epoch, version
        self.active_controller_id = self.broker_id
        log.info("controller %d: elected, epoch %d", self.broker_id, epoch)
        try:
            await self._on_controller_failover()
        except ControllerMovedError:
            raise
        except Exception:
            log.exception("controller %d: failover failed, moving the controller", self.broker_id)
            await self._trigger_controller_move()

    async def _maybe_resign(self) -> None:
        was_active = self.is_active
        self.active_controller_id = await self._read_controller_id()
        if was_active and not self.is_active:
            await self._on_resignation()

    async def _trigger_controller_move(self) -> None:
        await self._on_resignation()
        self.active_controller_id = -1
        with contextlib.suppress(Exception):
            await self.zk.delete_controller(self.ctx.epoch_zk_version)

    async def _on_resignation(self) -> None:
        if self._rebalance_task is not None:
            self._rebalance_task.cancel()
            self._rebalance_task = None
        if self.channel is not None:
            await self.channel.shutdown()
        self.channel = None
        self.batch = None
        self.ctx.reset()

    # --- failover ------------------------------------------------------------------------------

    async def _on_controller_failover(self) -> None:
        ctx = self.ctx
        zk = self.zk
        # 1. watches (registered by the reads below); 2. pending ISR change notifications
        pending = await zk.get_isr_change_notifications(watch=self._watch(IsrChangeNotification()))
        if pending:
            await zk.delete_isr_change_notifications(
                pending, controller_epoch_zk_version=ctx.epoch_zk_version
            )
        # 3. the context
        brokers = await zk.get_broker_ids(watch=self._watch(BrokerChange()))
        registrations = await zk.get_all_brokers()
        for bid in brokers:
            if bid in registrations:
                reg, epoch = registrations[bid]
                ctx.add_live_broker(reg, epoch)
        topics = await zk.get_all_topics(watch=self._watch(TopicChange()))
        for topic in topics:
            await self._load_topic(topic)
        self.channel = ControllerChannelManager(self._client_factory, listener=self.listener)
        self.batch = ControllerBrokerRequestBatch(
            self.broker_id,
            ctx,
            self.channel,
            stop_replica_callback=lambda broker, response, deleted: self.post(
                TopicDeletionStopReplicaResponseReceived(broker, response, deleted)
            ),
            leader_and_isr_callback=lambda broker, response: self.post(
                LeaderAndIsrResponseReceived(broker, response)
            ),
            sent=self.sent,
        )
        await self._start_log_dir_event_handling()
        for reg in ctx.live_brokers.values():
            self.channel.add_broker(reg)
        self.partition_sm = PartitionStateMachine(ctx, zk, self.batch, self._unclean_enabled)
        self.replica_sm = ReplicaStateMachine(ctx, zk, self.batch)
        # 4. topic deletion manager
        to_delete = set(await zk.get_topics_to_delete(watch=self._watch(TopicDeletion())))
        ctx.topics_to_delete = to_delete & ctx.all_topics
        for topic in ctx.topics_to_delete:
            if self._has_offline_replicas(topic):
                ctx.topics_ineligible_for_deletion.add(topic)
        # 5. UpdateMetadata to every live broker first
        self.batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, ctx.leader_isr)
        self.batch.send()
        # 6. replica then partition state machine start-up
        await self.replica_sm.startup()
        self.partition_sm.initialize()
        await self.partition_sm.trigger_online_partition_state_change()
        self.batch.send()
        # 7. reassignments (API then ZK-triggered), topic deletion, ZK-triggered
        # preferred elections, auto rebalance
        await self._resume_reassignments()
        await self._process_zk_partition_reassignment()
        await self._resume_deletions()
        await self._process_zk_preferred_replica_election()
        if self.config.auto_leader_rebalance_enable:
            interval = float(self.config.leader_imbalance_check_interval_seconds)
            self._rebalance_task = asyncio.get_running_loop().create_task(
                self._rebalance_timer(5.0, interval)
            )

    async def _rebalance_timer(self, first: float, interval: float) -> None:
        await asyncio.sleep(first)
        while True:
            self.post(AutoPreferredReplicaLeaderElection())
            await asyncio.sleep(interval)

    async def _load_topic(self, topic: str) -> None:
        ctx = self.ctx
        a = await self.zk.get_topic_assignment(
            topic, watch=self._watch(PartitionModifications(topic))
        )
        if a is None:
            return
        ctx.assignments[topic] = {
            p: ReplicaAssignment(
                list(replicas), list(a.adding.get(p, ())), list(a.removing.get(p, ()))
            )
            for p, replicas in a.partitions.items()
        }
        topic_id = a.topic_id
        if topic_id is None:
            topic_id = uuid.uuid4()
            with contextlib.suppress(Exception):
                await self.zk.set_topic_assignment(
                    replace(a, topic_id=topic_id),
                    controller_epoch_zk_version=ctx.epoch_zk_version,
                )
        ctx.topic_ids[topic] = topic_id
        states = await self.zk.get_partition_states(topic)
        for p, (state, version) in states.items():
            ctx.leader_isr[TopicPartition(topic, p)] = zka.from_zk(state, version)

    async def _unclean_enabled(self, topic: str) -> bool:
        default = self.config.unclean_leader_election_enable
        try:
            configs = await self.zk.get_entity_config("topics", topic)
        except Exception:
            return default
        value = configs.get("unclean.leader.election.enable")
        return default if value is None else str(value).strip().lower() == "true"

    def _active(self) -> bool:
        return self.is_active and self.batch is not None

    def _sms(
        self,
    ) -> tuple[PartitionStateMachine, ReplicaStateMachine, ControllerBrokerRequestBatch]:
        assert self.partition_sm and self.replica_sm and self.batch
        return self.partition_sm, self.replica_sm, self.batch

    # --- brokers -------------------------------------------------------------------------------

    async def _process_broker_change(self) -> None:
        if not self._active():
            return
        ctx = self.ctx
        ids = set(await self.zk.get_broker_ids(watch=self._watch(BrokerChange())))
        registrations = await self.zk.get_all_brokers()
        cached = dict(ctx.broker_epochs)
        new = {b for b in ids - set(cached) if b in registrations}
        dead = set(cached) - ids
        bounced = {
            b for b in ids & set(cached) if b in registrations and registrations[b][1] > cached[b]
        }
        assert self.channel is not None
        # Kafka's processBrokerChange order: channels first, then new, bounced, dead
        for b in sorted(new):
            self.channel.add_broker(registrations[b][0])
        for b in sorted(bounced):
            await self.channel.remove_broker(b)
            self.channel.add_broker(registrations[b][0])
        for b in sorted(dead):
            await self.channel.remove_broker(b)
        if new:
            for b in new:
                ctx.add_live_broker(*registrations[b])
            await self._on_broker_startup(sorted(new))
        if bounced:
            for b in bounced:
                ctx.remove_live_broker(b)
            await self._on_broker_failure(sorted(bounced))
            for b in bounced:
                ctx.add_live_broker(*registrations[b])
            await self._on_broker_startup(sorted(bounced))
        if dead:
            for b in dead:
                ctx.remove_live_broker(b)
            await self._on_broker_failure(sorted(dead))

    async def _on_broker_startup(self, new: list[int]) -> None:
        psm, rsm, batch = self._sms()
        ctx = self.ctx
        existing = ctx.live_or_shutting_down_broker_ids - set(new)
        batch.add_update_metadata(existing, [])
        batch.send()
        batch.add_update_metadata(new, ctx.leader_isr)
        batch.send()
        replicas = [(tp, r) for r in new for tp in ctx.partitions_on_broker(r)]
        online = [k for k in replicas if not ctx.is_topic_queued_for_deletion(k[0].topic)]
        await rsm.handle_state_changes(online, ReplicaState.ONLINE)
        await psm.trigger_online_partition_state_change()
        batch.send()
        await self._resume_reassignments(set(new))
        resumed = {tp.topic for tp, _ in replicas if ctx.is_topic_queued_for_deletion(tp.topic)}
        if resumed:
            ctx.topics_ineligible_for_deletion -= resumed
            await self._resume_deletions()

    async def _on_broker_failure(self, dead: list[int]) -> None:
        ctx = self.ctx
        replicas = [(tp, r) for r in dead for tp in ctx.partitions_on_broker(r)]
        await self._on_replicas_become_offline(replicas)

    async def _on_replicas_become_offline(self, replicas: list[tuple[TopicPartition, int]]) -> None:
        ctx = self.ctx
        dead = {r for _, r in replicas}
        offline_leader = [
            tp
            for tp, s in ctx.leader_isr.items()
            if (s.leader in dead or not ctx.is_replica_online(s.leader, True))
            and s.leader >= 0
            and not ctx.is_topic_queued_for_deletion(tp.topic)
        ]
        await self._take_replicas_offline(offline_leader, replicas)

    async def _take_replicas_offline(
        self,
        offline_leader: list[TopicPartition],
        replicas: list[tuple[TopicPartition, int]],
    ) -> None:
        """The common tail of Kafka's ``onReplicasBecomeOffline``: the partitions in
        ``offline_leader`` (their leader is gone) go Offline and are re-elected, then
        ``replicas`` go OfflineReplica - or DeletionIneligible for a topic queued for
        deletion. With no leader lost, the brokers still learn of the offline replicas by
        an UpdateMetadata."""
        psm, rsm, batch = self._sms()
        ctx = self.ctx
        await psm.handle_state_changes(offline_leader, PartitionState.OFFLINE)
        await psm.trigger_online_partition_state_change()
        batch.send()
        normal = [k for k in replicas if not ctx.is_topic_queued_for_deletion(k[0].topic)]
        await rsm.handle_state_changes(normal, ReplicaState.OFFLINE)
        batch.send()
        deleting = [k for k in replicas if ctx.is_topic_queued_for_deletion(k[0].topic)]
        if deleting:
            await rsm.handle_state_changes(deleting, ReplicaState.DELETION_INELIGIBLE)
            ctx.topics_ineligible_for_deletion |= {tp.topic for tp, _ in deleting}
        if not offline_leader:
            batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, [])
            batch.send()

    # --- offline log directories (Kafka's onBrokerLogDirFailure) ---------------------------

    async def _start_log_dir_event_handling(self) -> None:
        """Failover: ``/log_dir_event_notification`` is watched and pending notifications
        are deleted - the LeaderAndIsr sent to every broker at failover finds their
        offline replicas anyway, from the KAFKA_STORAGE_ERROR answers (Kafka's
        ``onControllerFailover``)."""
        pending = await self.zk.get_log_dir_event_notifications(
            watch=self._watch(LogDirEventNotification())
        )
        if pending:
            await self.zk.delete_log_dir_event_notifications(
                pending, controller_epoch_zk_version=self.ctx.epoch_zk_version
            )

    async def _process_log_dir_event_notification(self) -> None:
        """Kafka's ``LogDirEventNotification`` event: the brokers that reported a failed
        log directory get a LeaderAndIsr for all their replicas; the notifications go."""
        if not self._active():
            return
        names = await self.zk.get_log_dir_event_notifications(
            watch=self._watch(LogDirEventNotification())
        )
        if not names:
            return
        brokers = sorted(set(await self.zk.get_log_dir_event_brokers(names)))
        log.info("controller %d: log dir failure reported by brokers %s", self.broker_id, brokers)
        await self._on_broker_log_dir_failure(brokers)
        await self.zk.delete_log_dir_event_notifications(
            names, controller_epoch_zk_version=self.ctx.epoch_zk_version
        )

    async def _on_broker_log_dir_failure(self, brokers: list[int]) -> None:
        """Kafka's ``onBrokerLogDirFailure``: the replicas of live ``brokers`` (those not
        known offline yet) go to OnlineReplica, which sends each broker a LeaderAndIsr
        with the current states; the broker answers KAFKA_STORAGE_ERROR for the replicas
        in a failed directory (:meth:`_process_leader_and_isr_response`)."""
        _psm, rsm, batch = self._sms()
        ctx = self.ctx
        replicas = [
            (tp, b)
            for b in brokers
            if b in ctx.live_brokers
            for tp in ctx.partitions_on_broker(b)
            if not ctx.is_topic_queued_for_deletion(tp.topic)
            and tp not in ctx.replicas_on_offline_dirs.get(b, ())
        ]
        await rsm.handle_state_changes(replicas, ReplicaState.ONLINE)
        batch.send()

    async def _process_leader_and_isr_response(
        self, broker: int, response: LeaderAndIsrResponse
    ) -> None:
        """Kafka's ``LeaderAndIsrResponseReceived``: the partitions answered
        KAFKA_STORAGE_ERROR are ``broker``'s replicas on offline dirs, those answered NONE
        are online again; replicas newly offline go through :meth:`_on_log_dir_replicas_offline`."""
        ctx = self.ctx
        if not self._active() or broker not in ctx.live_brokers:
            return
        if response.error_code != ErrorCode.NONE:
            return
        names = {tid: t for t, tid in ctx.topic_ids.items() if tid is not None}
        offline: set[TopicPartition] = set()
        online: set[TopicPartition] = set()
        answers: list[tuple[str | None, int, int]] = []
        # v5+ answers by topic id, v0-4 by name: the other field is its default, empty
        for topic in response.topics:
            name = names.get(topic.topic_id)
            for pe in topic.partition_errors:
                answers.append((name, pe.partition_index, pe.error_code))
        for pe in response.partition_errors:
            answers.append((pe.topic_name, pe.partition_index, pe.error_code))
        for name, index, code in answers:
            if name is None:
                continue
            if code == ErrorCode.KAFKA_STORAGE_ERROR:
                offline.add(TopicPartition(name, index))
            elif code == ErrorCode.NONE:
                online.add(TopicPartition(name, index))
        previous = ctx.replicas_on_offline_dirs.get(broker, set())
        current = (previous - online) | offline
        if current:
            ctx.replicas_on_offline_dirs[broker] = current
        else:
            ctx.replicas_on_offline_dirs.pop(broker, None)
        new = sorted(current - previous)
        if new:
            log.info(
                "controller %d: replicas of broker %d in a failed log directory: %s",
                self.broker_id,
                broker,
                [str(tp) for tp in new],
            )
            await self._on_log_dir_replicas_offline([(tp, broker) for tp in new])

    async def _on_log_dir_replicas_offline(
        self, replicas: list[tuple[TopicPartition, int]]
    ) -> None:
        """Kafka's ``onReplicasBecomeOffline`` for replicas of a live broker: partitions
        they led go Offline and get a leader by the offline-partition election (which
        skips replicas on offline dirs), then the replicas go OfflineReplica (out of the
        ISR)."""
        ctx = self.ctx
        offline_leader = []
        for tp in sorted({tp for tp, _r in replicas}):
            s = ctx.leader_isr.get(tp)
            if (
                s is not None
                and s.leader >= 0
                and not ctx.is_replica_online(s.leader, True, tp)
                and not ctx.is_topic_queued_for_deletion(tp.topic)
            ):
                offline_leader.append(tp)
        await self._take_replicas_offline(offline_leader, replicas)

    # --- topics --------------------------------------------------------------------------------

    async def _process_topic_change(self) -> None:
        if not self._active():
            return
        ctx = self.ctx
        topics = set(await self.zk.get_all_topics(watch=self._watch(TopicChange())))
        new = topics - ctx.all_topics
        gone = ctx.all_topics - topics
        for topic in gone:
            ctx.remove_topic(topic)
        added: list[TopicPartition] = []
        for topic in sorted(new):
            await self._load_topic(topic)
            added.extend(ctx.partitions_for_topic(topic))
        if added:
            await self._on_new_partition_creation(added)

    async def _process_partition_modifications(self, topic: str) -> None:
        if not self._active():
            return
        ctx = self.ctx
        a = await self.zk.get_topic_assignment(
            topic, watch=self._watch(PartitionModifications(topic))
        )
        if a is None or topic not in ctx.assignments:
            return
        if ctx.is_topic_queued_for_deletion(topic):
            return
        added = [
            TopicPartition(topic, p)
            for p in sorted(a.partitions)
            if p not in ctx.assignments[topic]
        ]
        for tp in added:
            ctx.set_assignment(tp, ReplicaAssignment(list(a.partitions[tp.partition])))
        if added:
            await self._on_new_partition_creation(added)

    async def _on_new_partition_creation(self, tps: list[TopicPartition]) -> None:
        psm, rsm, batch = self._sms()
        replicas = self.ctx.replicas_for_partitions(tps)
        await psm.handle_state_changes(tps, PartitionState.NEW)
        await rsm.handle_state_changes(replicas, ReplicaState.NEW)
        await psm.handle_state_changes(tps, PartitionState.ONLINE, OFFLINE)
        batch.send()
        await rsm.handle_state_changes(replicas, ReplicaState.ONLINE)
        batch.send()

    # --- topic deletion (TopicDeletionManager) -------------------------------------------------

    def _has_offline_replicas(self, topic: str) -> bool:
        ctx = self.ctx
        return any(
            not ctx.is_replica_online(r, True)
            for tp in ctx.partitions_for_topic(topic)
            for r in ctx.replicas(tp)
        )

    async def _process_topic_deletion(self) -> None:
        if not self._active():
            return
        ctx = self.ctx
        fence = ctx.epoch_zk_version
        requested = set(await self.zk.get_topics_to_delete(watch=self._watch(TopicDeletion())))
        unknown = requested - ctx.all_topics
        for topic in sorted(unknown):
            await self.zk.delete_topic_deletion_node(topic, controller_epoch_zk_version=fence)
        requested -= unknown
        if not requested:
            return
        if not self.config.delete_topic_enable:
            for topic in sorted(requested):
                await self.zk.delete_topic_deletion_node(topic, controller_epoch_zk_version=fence)
            return
        for topic in requested - ctx.topics_to_delete:
            ctx.topics_to_delete.add(topic)
            if self._has_offline_replicas(topic):
                ctx.topics_ineligible_for_deletion.add(topic)
        await self._resume_deletions()

    async def _resume_deletions(self) -> None:
        if not self._active():
            return
        _, rsm, batch = self._sms()
        ctx = self.ctx
        for topic in sorted(ctx.topics_to_delete):
            keys = [(tp, r) for tp in ctx.partitions_for_topic(topic) for r in ctx.replicas(tp)]
            states = [rsm.state(tp, r) for tp, r in keys]
            if keys and all(s is ReplicaState.DELETION_SUCCESSFUL for s in states):
                await self._complete_delete_topic(topic)
                continue
            if not keys:
                await self._complete_delete_topic(topic)
                continue
            in_progress = any(s is ReplicaState.DELETION_STARTED for s in states)
            if in_progress or topic in ctx.topics_ineligible_for_deletion:
                continue
            if self._has_offline_replicas(topic):
                ctx.topics_ineligible_for_deletion.add(topic)
                continue
            retry = [
                k
                for k, s in zip(keys, states, strict=True)
                if s is ReplicaState.DELETION_INELIGIBLE
            ]
            if retry:
                await rsm.handle_state_changes(retry, ReplicaState.OFFLINE)
            await self._on_topic_deletion(topic)
        batch.send()

    async def _on_topic_deletion(self, topic: str) -> None:
        psm, rsm, batch = self._sms()
        ctx = self.ctx
        tps = ctx.partitions_for_topic(topic)
        await psm.handle_state_changes(tps, PartitionState.OFFLINE)
        await psm.handle_state_changes(tps, PartitionState.NON_EXISTENT)
        batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, tps)
        batch.send()
        keys = [(tp, r) for tp in tps for r in ctx.replicas(tp)]
        dead = [k for k in keys if not ctx.is_replica_online(k[1], True)]
        live = [
            k
            for k in keys
            if ctx.is_replica_online(k[1], True)
            and rsm.state(*k) is not ReplicaState.DELETION_SUCCESSFUL
        ]
        await rsm.handle_state_changes(dead, ReplicaState.DELETION_INELIGIBLE)
        await rsm.handle_state_changes(live, ReplicaState.OFFLINE)
        await rsm.handle_state_changes(live, ReplicaState.DELETION_STARTED)
        if dead:
            ctx.topics_ineligible_for_deletion.add(topic)
        batch.send()

    async def _process_stop_replica_response(
        self, broker: int, response: StopReplicaResponse, deleted: frozenset[TopicPartition]
    ) -> None:
        """Only partitions the request asked to delete count (Kafka's
        ``isPartitionDeleted``)."""
        if not self._active():
            return
        _, rsm, _ = self._sms()
        ctx = self.ctx
        top_error = response.error_code
        ok: list[tuple[TopicPartition, int]] = []
        failed: list[tuple[TopicPartition, int]] = []
        for pe in response.partition_errors:
            tp = TopicPartition(pe.topic_name, pe.partition_index)
            if tp.topic not in ctx.topics_to_delete or tp not in deleted:
                continue
            if rsm.state(tp, broker) is not ReplicaState.DELETION_STARTED:
                continue
            (failed if top_error or pe.error_code else ok).append((tp, broker))
        if failed:
            await rsm.handle_state_changes(failed, ReplicaState.DELETION_INELIGIBLE)
            ctx.topics_ineligible_for_deletion |= {tp.topic for tp, _ in failed}
        if ok:
            await rsm.handle_state_changes(ok, ReplicaState.DELETION_SUCCESSFUL)
        await self._resume_deletions()

    async def _complete_delete_topic(self, topic: str) -> None:
        _, rsm, _ = self._sms()
        ctx = self.ctx
        keys = [(tp, r) for tp in ctx.partitions_for_topic(topic) for r in ctx.replicas(tp)]
        await rsm.handle_state_changes(keys, ReplicaState.NON_EXISTENT)
        await self.zk.delete_topic_nodes(topic, controller_epoch_zk_version=ctx.epoch_zk_version)
        ctx.remove_topic(topic)
        log.info("controller %d: deletion of topic %s completed", self.broker_id, topic)

    # --- ISR change notifications, preferred leaders (§2.8) -----------------------------

    async def _process_isr_change(self) -> None:
        if not self._active():
            return
        ctx = self.ctx
        names = await self.zk.get_isr_change_notifications(
            watch=self._watch(IsrChangeNotification())
        )
        if not names:
            return
        try:
            tps = {
                TopicPartition(t, p)
                for t, p in await self.zk.get_isr_change_partitions(names)
                if t in ctx.assignments
            }
            states = await zka.read_states(self.zk, tps)
            ctx.leader_isr.update(states)
            if states:
                _, _, batch = self._sms()
                batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, states)
                batch.send()
        finally:
            await self.zk.delete_isr_change_notifications(
                names, controller_epoch_zk_version=ctx.epoch_zk_version
            )

    def _can_preferred_lead(self, tp: TopicPartition) -> bool:
        replicas = self.ctx.replicas(tp)
        s = self.ctx.leader_isr.get(tp)
        return (
            bool(replicas)
            and s is not None
            and self.ctx.is_replica_online(replicas[0], tp=tp)
            and replicas[0] in s.isr
        )

    async def _process_auto_preferred_replica_leader_election(self) -> None:
        """Kafka's ``checkAndTriggerAutoLeaderRebalance`` (does not touch the ZK node)."""
        if not self._active():
            return
        ctx = self.ctx
        ratio = self.config.leader_imbalance_per_broker_percentage / 100
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp in ctx.all_partitions():
            replicas = ctx.replicas(tp)
            if replicas and not ctx.is_topic_queued_for_deletion(tp.topic):
                by_preferred.setdefault(replicas[0], []).append(tp)
        for broker, tps in sorted(by_preferred.items()):
            not_led = [
                tp for tp in tps if tp in ctx.leader_isr and ctx.leader_isr[tp].leader != broker
            ]
            if len(not_led) / len(tps) <= ratio:
                continue
            candidates = [
                tp
                for tp in not_led
                if not (a := ctx.full_assignment(tp)) or not a.is_being_reassigned
                if self._can_preferred_lead(tp)
            ]
            if candidates:
                await self.elect_preferred(candidates)

    async def elect_preferred(self, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
        """A PreferredReplica election for ``tps`` (in the event task)."""
        psm, _, batch = self._sms()
        results = await psm.handle_state_changes(tps, PartitionState.ONLINE, PREFERRED)
        batch.send()
        return results

    async def _process_elect_leaders(
        self, partitions: list[tuple[str, int]], unclean: bool
    ) -> dict[tuple[str, int], tuple[int, str | None]]:
        ctx = self.ctx
        out: dict[tuple[str, int], tuple[int, str | None]] = {}
        if not self._active():
            return dict.fromkeys(partitions, (int(ErrorCode.NOT_CONTROLLER), None))
        electable: list[TopicPartition] = []
        for t, p in partitions:
            tp = TopicPartition(t, p)
            if not ctx.replicas(tp):
                out[(t, p)] = (
                    int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
                    "The partition does not exist.",
                )
            elif ctx.is_topic_queued_for_deletion(t):
                out[(t, p)] = (int(ErrorCode.INVALID_TOPIC_EXCEPTION), "The topic is being deleted")
            else:
                s = ctx.leader_isr.get(tp)
                if unclean:
                    needed = s is None or s.leader < 0 or not ctx.is_replica_online(s.leader)
                else:
                    needed = s is None or s.leader != ctx.replicas(tp)[0]
                if needed:
                    electable.append(tp)
                else:
                    out[(t, p)] = (int(ErrorCode.ELECTION_NOT_NEEDED), None)
        if electable:
            psm, _, _ = self._sms()
            if unclean:
                results = await psm.handle_state_changes(
                    electable, PartitionState.ONLINE, OFFLINE, allow_unclean=True
                )
            else:
                results = await psm.handle_state_changes(
                    electable, PartitionState.ONLINE, PREFERRED
                )
            code = (
                ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
                if unclean
                else ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
            )
            for tp in electable:
                r = results.get(tp)
                if isinstance(r, LeaderAndIsr):
                    out[(tp.topic, tp.partition)] = (0, None)
                else:
                    out[(tp.topic, tp.partition)] = (int(code), str(r) if r else None)
        return out

    # --- reassignment (§2.7, API-triggered) -------------------------------------------

    async def _process_list_reassignments(
        self, partitions: tuple[tuple[str, int], ...] | None
    ) -> Reassignments | None:
        if not self._active():
            return None
        ctx = self.ctx
        wanted = (
            [TopicPartition(t, p) for t, p in partitions]
            if partitions is not None
            else ctx.all_partitions()
        )
        out: Reassignments = {}
        for tp in wanted:
            a = ctx.full_assignment(tp)
            if a is not None and a.is_being_reassigned:
                out[(tp.topic, tp.partition)] = (list(a.replicas), list(a.adding), list(a.removing))
        return out

    async def _process_api_reassignment(
        self, reassignments: tuple[tuple[tuple[str, int], tuple[int, ...] | None], ...]
    ) -> ElectionResults:
        ctx = self.ctx
        if not self._active():
            return dict.fromkeys(
                (key for key, _ in reassignments), (int(ErrorCode.NOT_CONTROLLER), None)
            )
        out: ElectionResults = {}
        for (t, p), wanted in reassignments:
            target = None if wanted is None else list(wanted)
            tp = TopicPartition(t, p)
            a = ctx.full_assignment(tp)
            if a is None or ctx.is_topic_queued_for_deletion(t):
                out[(t, p)] = (int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), None)
                continue
            if target is None:
                if not a.is_being_reassigned:
                    out[(t, p)] = (
                        int(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS),
                        f"Partition {tp} has no ongoing reassignment.",
                    )
                    continue
                target = [r for r in a.replicas if r not in a.adding]
            else:
                error = self._validate_replicas(tp, target)
                if error is not None:
                    out[(t, p)] = (int(ErrorCode.INVALID_REPLICA_ASSIGNMENT), error)
                    continue
            await self._on_partition_reassignment(tp, list(target))
            out[(t, p)] = (0, None)
        # an API reassignment replaces a ZK-triggered one of the same partition
        await self._remove_from_zk_reassignment({key for key, _ in reassignments})
        return out

    def _validate_replicas(self, tp: TopicPartition, target: list[int]) -> str | None:
        if not target:
            return f"Empty replica list specified in partition reassignment for {tp}."
        if len(set(target)) != len(target):
            return f"Duplicate replica ids in partition reassignment replica list: {target}"
        if any(r < 0 for r in target):
            return f"Invalid broker id in replica list: {target}"
        current = set(self.ctx.replicas(tp))
        dead = [r for r in target if r not in current and r not in self.ctx.live_brokers]
        if dead:
            return f"Replica assignment has brokers that are not alive. Replica list: {target}, "
        return None

    async def _write_topic_assignment(self, topic: str) -> None:
        ctx = self.ctx
        parts = ctx.assignments[topic]
        a = TopicAssignment(
            topic=topic,
            partitions={p: tuple(x.replicas) for p, x in parts.items()},
            adding={p: tuple(x.adding) for p, x in parts.items() if x.adding},
            removing={p: tuple(x.removing) for p, x in parts.items() if x.removing},
            topic_id=ctx.topic_ids.get(topic),
        )
        await self.zk.set_topic_assignment(a, controller_epoch_zk_version=ctx.epoch_zk_version)

    async def _bump_leader_epoch(self, tp: TopicPartition) -> LeaderAndIsr | None:
        ctx = self.ctx
        for _ in range(20):
            cur = (await zka.read_states(self.zk, [tp])).get(tp)
            if cur is None or cur.controller_epoch > ctx.epoch:
                return None
            new = replace(cur.new_epoch(), controller_epoch=ctx.epoch)
            version = await zka.update_partition_state(self.zk, tp, new, ctx)
            if version is not None:
                new = replace(new, partition_epoch=version)
                ctx.leader_isr[tp] = new
                return new
        return None

    async def _on_partition_reassignment(self, tp: TopicPartition, target: list[int]) -> None:
        _, rsm, _ = self._sms()
        ctx = self.ctx
        cur = ctx.full_assignment(tp)
        assert cur is not None
        origin = [r for r in cur.replicas if r not in cur.adding]
        full = list(dict.fromkeys([*target, *origin]))
        new = ReplicaAssignment(
            full, [r for r in full if r not in origin], [r for r in full if r not in target]
        )
        # U: replicas of a replaced reassignment that are no longer needed go away
        unneeded = [r for r in cur.replicas if r not in full]
        saved = cur
        ctx.assignments[tp.topic][tp.partition] = new
        try:
            await self._write_topic_assignment(tp.topic)
        except Exception:
            ctx.assignments[tp.topic][tp.partition] = saved
            raise
        if unneeded:
            keys = [(tp, r) for r in unneeded]
            await rsm.handle_state_changes(keys, ReplicaState.OFFLINE)
            await rsm.handle_state_changes(keys, ReplicaState.DELETION_STARTED)
            await rsm.handle_state_changes(keys, ReplicaState.DELETION_SUCCESSFUL)
            await rsm.handle_state_changes(keys, ReplicaState.NON_EXISTENT)
        if not new.is_being_reassigned:
            await self._complete_without_moves(tp)
            return
        await self._maybe_complete_reassignment(tp, initial=True)

    async def _complete_without_moves(self, tp: TopicPartition) -> None:
        """Phase B of a reassignment with nothing to add (a new order of the same replicas,
        or a cancellation back to them): the leader epoch is bumped (LeaderAndIsr to the
        replicas, an election if the leader is no longer one) and every broker gets the
        new replica list in UpdateMetadata."""
        batch = self._sms()[2]
        ctx = self.ctx
        state = (await zka.read_states(self.zk, [tp])).get(tp)
        if state is not None:
            ctx.leader_isr[tp] = state
            await self._move_reassigned_leader_if_required(tp, state.leader, ctx.replicas(tp))
        await self._remove_from_zk_reassignment({(tp.topic, tp.partition)})
        batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, [tp])
        batch.send()

    async def _move_reassigned_leader_if_required(
        self, tp: TopicPartition, leader: int, replicas: list[int]
    ) -> bool:
        """Kafka's ``moveReassignedPartitionLeaderIfRequired``: a ``leader`` that is not one
        of the new ``replicas``, or is offline, is replaced by the reassign-partition
        election; otherwise the leader epoch is bumped and a LeaderAndIsr to ``replicas``
        is added to the batch, not sent (True then)."""
        psm, _, batch = self._sms()
        if leader not in replicas or not self.ctx.is_replica_online(leader):
            await psm.handle_state_changes([tp], PartitionState.ONLINE, REASSIGN)
            return False
        bumped = await self._bump_leader_epoch(tp)
        if bumped is None:
            return False
        batch.add_leader_and_isr(replicas, tp, bumped, is_new=False)
        return True

    async def _maybe_complete_reassignment(self, tp: TopicPartition, initial: bool = False) -> None:
        _, rsm, batch = self._sms()
        ctx = self.ctx
        a = ctx.full_assignment(tp)
        if a is None or not a.is_being_reassigned:
            return
        target = [r for r in a.replicas if r not in a.removing]
        state = (await zka.read_states(self.zk, [tp])).get(tp)
        if state is None:
            return
        ctx.leader_isr[tp] = state
        if not set(target) <= set(state.isr):
            if initial:
                # A: bump the leader epoch, LeaderAndIsr to ORS and (isNew) AR, AR -> New
                bumped = await self._bump_leader_epoch(tp)
                if bumped is not None:
                    origin = [r for r in a.replicas if r not in a.adding]
                    batch.add_leader_and_isr(origin, tp, bumped, is_new=False)
                    batch.add_leader_and_isr(a.adding, tp, bumped, is_new=True)
                    batch.send()
                await rsm.handle_state_changes([(tp, r) for r in a.adding], ReplicaState.NEW)
            return
        # B: complete
        removing = list(a.removing)
        await rsm.handle_state_changes([(tp, r) for r in a.adding], ReplicaState.ONLINE)
        ctx.set_assignment(tp, ReplicaAssignment(list(target)))
        if await self._move_reassigned_leader_if_required(tp, state.leader, target):
            batch.send()
        keys = [(tp, r) for r in removing]
        await rsm.handle_state_changes(keys, ReplicaState.OFFLINE)
        await rsm.handle_state_changes(keys, ReplicaState.DELETION_STARTED)
        await rsm.handle_state_changes(keys, ReplicaState.DELETION_SUCCESSFUL)
        await rsm.handle_state_changes(keys, ReplicaState.NON_EXISTENT)
        await self._write_topic_assignment(tp.topic)
        await self._remove_from_zk_reassignment({(tp.topic, tp.partition)})
        batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, [tp])
        batch.send()

    async def _resume_reassignments(self, brokers: set[int] | None = None) -> None:
        for tp in self.ctx.all_partitions():
            a = self.ctx.full_assignment(tp)
            if (
                a is not None
                and a.is_being_reassigned
                and (brokers is None or brokers & set(a.adding))
            ):
                target = [r for r in a.replicas if r not in a.removing]
                await self._on_partition_reassignment(tp, target)

    # --- ZK-triggered reassignments and preferred elections (§2.2 step 1, §2.7) ----------

    async def _process_zk_partition_reassignment(self) -> None:
        """``/admin/reassign_partitions`` created or changed (and at failover): start every
        listed reassignment that is not already running with that target; drop from the
        node the entries that are done (target = current replicas), invalid or of unknown
        or deleted partitions (Kafka's ``processZkPartitionReassignment``, without the
        zombie entries that once blocked it), deleting the node when nothing is left."""
        if not self._active():
            return
        ctx = self.ctx
        v = ctx.epoch_zk_version
        try:
            wanted = await self.zk.get_partition_reassignment(
                watch=self._watch(ZkPartitionReassignment())
            )
        except (ValueError, KeyError, TypeError) as exc:
            log.warning(
                "controller %d: unreadable reassignment node dropped: %s", self.broker_id, exc
            )
            await self.zk.delete_partition_reassignment(controller_epoch_zk_version=v)
            return
        if wanted is None:
            return
        if not wanted:
            await self.zk.delete_partition_reassignment(controller_epoch_zk_version=v)
            return
        finished: set[tuple[str, int]] = set()
        for (t, p), target in sorted(wanted.items()):
            tp = TopicPartition(t, p)
            a = ctx.full_assignment(tp)
            if a is None or ctx.is_topic_queued_for_deletion(t):
                log.warning(
                    "controller %d: ZK reassignment of unknown %s dropped", self.broker_id, tp
                )
                finished.add((t, p))
                continue
            if a.is_being_reassigned:
                if [r for r in a.replicas if r not in a.removing] == list(target):
                    continue  # already moving there
            elif list(a.replicas) == list(target):
                finished.add((t, p))  # nothing to do
                continue
            error = self._validate_replicas(tp, list(target))
            if error is not None:
                log.warning("controller %d: ZK reassignment of %s: %s", self.broker_id, tp, error)
                finished.add((t, p))
                continue
            await self._on_partition_reassignment(tp, list(target))
            cur = ctx.full_assignment(tp)
            if cur is not None and not cur.is_being_reassigned:
                finished.add((t, p))
        await self._remove_from_zk_reassignment(finished)

    async def _remove_from_zk_reassignment(self, partitions: set[tuple[str, int]]) -> None:
        """Remove ``partitions`` from ``/admin/reassign_partitions`` (deleted when empty)."""
        if not partitions:
            return
        current = await self.zk.get_partition_reassignment()
        if current is None or not partitions & set(current):
            return
        left = {k: v for k, v in current.items() if k not in partitions}
        await self.zk.set_partition_reassignment(
            left, controller_epoch_zk_version=self.ctx.epoch_zk_version
        )

    async def _process_zk_preferred_replica_election(self) -> None:
        """``/admin/preferred_replica_election`` created (and at failover): a PREFERRED
        election of the listed partitions, then the node is deleted, whatever the outcome."""
        if not self._active():
            return
        try:
            partitions = await self.zk.get_preferred_replica_election(
                watch=self._watch(ZkPreferredReplicaElection())
            )
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("controller %d: unreadable election node dropped: %s", self.broker_id, exc)
            partitions = []
        if partitions is None:
            return
        try:
            results = await self._process_elect_leaders(list(dict.fromkeys(partitions)), False)
            failed = {
                k: v for k, v in results.items() if v[0] not in (0, ErrorCode.ELECTION_NOT_NEEDED)
            }
            if failed:
                log.warning(
                    "controller %d: preferred election failed for %s", self.broker_id, failed
                )
        finally:
            await self.zk.delete_preferred_replica_election(
                controller_epoch_zk_version=self.ctx.epoch_zk_version
            )

    # --- AlterPartition (§3.3) -----------------------------------------------------------------

    def _alter_partition_error(self, code: int) -> AlterPartitionResponse:
        return AlterPartitionResponse(throttle_time_ms=0, error_code=int(code), topics=[])

    async def _process_alter_partition(
        self, request: AlterPartitionRequest, version: int
    ) -> AlterPartitionResponse:
        ctx = self.ctx
        if not self._active():
            return self._alter_partition_error(ErrorCode.NOT_CONTROLLER)
        broker_epoch = ctx.broker_epochs.get(request.broker_id)
        if broker_epoch is None or broker_epoch != request.broker_epoch:
            return self._alter_partition_error(ErrorCode.STALE_BROKER_EPOCH)
        names_by_id = {tid: name for name, tid in ctx.topic_ids.items() if tid is not None}
        live = ctx.live_broker_ids
        topics_out: list[AlterPartitionResponse.TopicData] = []
        accepted: list[
            tuple[TopicPartition, LeaderAndIsr, AlterPartitionResponse.PartitionData]
        ] = []
        for topic in request.topics:
            name: str | None
            if version >= 2:
                name = names_by_id.get(topic.topic_id)
                topic_out = AlterPartitionResponse.TopicData(topic_id=topic.topic_id, partitions=[])
            else:
                name = topic.topic_name
                topic_out = AlterPartitionResponse.TopicData(
                    topic_name=topic.topic_name, partitions=[]
                )
            topics_out.append(topic_out)
            for p in topic.partitions:
                out = AlterPartitionResponse.PartitionData(
                    partition_index=p.partition_index, error_code=0
                )
                topic_out.partitions.append(out)
                if name is None:
                    out.error_code = int(ErrorCode.UNKNOWN_TOPIC_ID)
                    continue
                tp = TopicPartition(name, p.partition_index)
                cur = ctx.leader_isr.get(tp)
                if cur is None:
                    out.error_code = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                    continue
                if version >= 3:
                    isr_epochs = [(b.broker_id, b.broker_epoch) for b in p.new_isr_with_epochs]
                else:
                    isr_epochs = [(b, -1) for b in p.new_isr]
                new_isr = tuple(b for b, _ in isr_epochs)
                recovery = p.leader_recovery_state  # RECOVERED (0) before v1
                if p.partition_epoch > cur.partition_epoch or p.leader_epoch > cur.leader_epoch:
                    out.error_code = int(ErrorCode.NOT_CONTROLLER)
                elif p.leader_epoch < cur.leader_epoch:
                    out.error_code = int(ErrorCode.FENCED_LEADER_EPOCH)
                elif (
                    request.broker_id == cur.leader
                    and set(new_isr) == set(cur.isr)
                    and recovery == cur.leader_recovery_state
                ):
                    self._fill(out, cur)
                elif p.partition_epoch < cur.partition_epoch:
                    out.error_code = int(ErrorCode.INVALID_UPDATE_VERSION)
                elif (recovery == RECOVERING and len(new_isr) > 1) or (
                    cur.leader_recovery_state == RECOVERED and recovery == RECOVERING
                ):
                    out.error_code = int(ErrorCode.INVALID_REQUEST)
                elif any(
                    b not in live
                    or (e != -1 and ctx.broker_epochs.get(b) != e)
                    or b not in ctx.replicas(tp)  # e.g. removed by a cancelled reassignment
                    for b, e in isr_epochs
                ):
                    out.error_code = int(
                        ErrorCode.INELIGIBLE_REPLICA
                        if version > 1
                        else ErrorCode.OPERATION_NOT_ATTEMPTED
                    )
                else:
                    new = LeaderAndIsr(
                        leader=request.broker_id,
                        leader_epoch=p.leader_epoch,
                        isr=new_isr,
                        controller_epoch=ctx.epoch,
                        partition_epoch=p.partition_epoch,
                        leader_recovery_state=recovery,
                    )
                    accepted.append((tp, new, out))
        done: list[TopicPartition] = []
        for tp, new, out in accepted:
            try:
                version_ = await zka.update_partition_state(self.zk, tp, new, ctx)
            except ControllerMovedError:
                raise
            except Exception:
                log.exception("controller: writing the ISR of %s failed", tp)
                out.error_code = int(ErrorCode.UNKNOWN_SERVER_ERROR)
                continue
            if version_ is None:
                out.error_code = int(ErrorCode.INVALID_UPDATE_VERSION)
                continue
            new = replace(new, partition_epoch=version_)
            ctx.leader_isr[tp] = new
            self._fill(out, new)
            done.append(tp)
        if done:
            _, _, batch = self._sms()
            batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, done)
            batch.send()
            for tp in done:
                a = ctx.full_assignment(tp)
                if a is not None and a.is_being_reassigned:
                    await self._maybe_complete_reassignment(tp)
        return AlterPartitionResponse(throttle_time_ms=0, error_code=0, topics=topics_out)

    @staticmethod
    def _fill(out: AlterPartitionResponse.PartitionData, s: LeaderAndIsr) -> None:
        out.leader_id = s.leader
        out.leader_epoch = s.leader_epoch
        out.isr = list(s.isr)
        out.leader_recovery_state = s.leader_recovery_state
        out.partition_epoch = s.partition_epoch

    # --- producer id blocks (KIP-730) ---------------------------------------------------------

    async def _process_allocate_producer_ids(
        self, broker_id: int, broker_epoch: int
    ) -> tuple[int, int, int]:
        """Kafka's ``processAllocateProducerIds``: an unknown broker gets
        BROKER_ID_NOT_REGISTERED, an epoch other than the registered one
        STALE_BROKER_EPOCH; otherwise the next block, by compare-and-set in ZooKeeper."""
        if not self._active():
            return (int(ErrorCode.NOT_CONTROLLER), -1, 0)
        registered = self.ctx.broker_epochs.get(broker_id)
        if registered is None or broker_id not in self.ctx.live_broker_ids:
            log.warning("controller: AllocateProducerIds from unknown broker %d", broker_id)
            return (int(ErrorCode.BROKER_ID_NOT_REGISTERED), -1, 0)
        if registered != broker_epoch:
            log.warning(
                "controller: AllocateProducerIds with stale epoch %d from broker %d",
                broker_epoch,
                broker_id,
            )
            return (int(ErrorCode.STALE_BROKER_EPOCH), -1, 0)
        first, last = await self.zk.allocate_producer_id_block(broker_id)
        return (int(ErrorCode.NONE), first, last - first + 1)

    # --- controlled shutdown (§2.8) ------------------------------------------------------------

    async def _process_controlled_shutdown(
        self, broker_id: int, broker_epoch: int
    ) -> tuple[int, list[tuple[str, int]]]:
        ctx = self.ctx
        if not self._active():
            return (int(ErrorCode.NOT_CONTROLLER), [])
        if broker_epoch != -1:
            cached = ctx.broker_epochs.get(broker_id)
            if cached is not None and broker_epoch < cached:
                return (int(ErrorCode.STALE_BROKER_EPOCH), [])
        if broker_id not in ctx.live_or_shutting_down_broker_ids:
            return (int(ErrorCode.BROKER_NOT_AVAILABLE), [])
        psm, rsm, batch = self._sms()
        ctx.shutting_down.add(broker_id)
        act_on = [
            tp
            for tp in ctx.partitions_on_broker(broker_id)
            if len(ctx.replicas(tp)) > 1
            and tp in ctx.leader_isr
            and not ctx.is_topic_queued_for_deletion(tp.topic)
        ]
        leading = [tp for tp in act_on if ctx.leader_isr[tp].leader == broker_id]
        following = [tp for tp in act_on if ctx.leader_isr[tp].leader != broker_id]
        if leading:
            await psm.handle_state_changes(leading, PartitionState.ONLINE, CONTROLLED_SHUTDOWN)
        batch.send()
        # The follower replicas go offline: out of the ISR in ZooKeeper, then StopReplica to
        # the broker and LeaderAndIsr to the leaders in one batch. Kafka sends the
        # StopReplica first, before the ZooKeeper writes; the broker then stops fetching
        # while the leaders still count it in the ISR, and acks=all produces stall for
        # those writes. Fetching on until then is safe: the ISR cannot take the broker
        # back, AlterPartition refuses a shutting-down broker (INELIGIBLE_REPLICA).
        await rsm.handle_state_changes([(tp, broker_id) for tp in following], ReplicaState.OFFLINE)
        batch.send()
        remaining = sorted(
            (tp.topic, tp.partition)
            for tp, s in ctx.leader_isr.items()
            if s.leader == broker_id and len(ctx.replicas(tp)) > 1
        )
        return (0, remaining)
