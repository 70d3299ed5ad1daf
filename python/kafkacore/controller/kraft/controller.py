"""Kafka 4.3's ``QuorumController`` on one event queue (CONVENTIONS 15, 23).

Every input is an event (:mod:`~kafkacore.controller.kraft.events`): what the Raft layer
committed or who now leads (posted by the Raft driver's listener hook), a request from
the controller listener, a timer. One task takes them in order; every decision reads the
controller's :class:`~kafkacore.controller.kraft.state.ControllerState`:

* **standby**: committed batches and snapshots are replayed into the committed state;
* **active** (this node leads the Raft quorum, and has read the log up to its epoch's
  start): an operation's records are replayed at once into the *latest* state, so the
  next operation sees them, and appended through the Raft leader; its caller is answered
  when the high watermark passes them. Losing leadership drops every uncommitted state:
  the latest state becomes the committed one again and the waiting callers get
  NOT_CONTROLLER. On activation with an empty log, the bootstrap records (the
  ``bootstrap.checkpoint`` feature levels and SCRAM credentials) are written in one
  metadata transaction.

Timers (active only, but for snapshots): a NoOpRecord after ``metadata.max.idle.interval.ms``
without a write; fencing of brokers whose session expired; preferred leader elections
(``auto.leader.rebalance.enable``) and unclean elections of leaderless partitions where
the topic allows them, every ``leader.imbalance.check.interval.seconds``; a snapshot of
the committed state once ``metadata.log.max.record.bytes.between.snapshots`` were
committed since the last or ``metadata.log.max.snapshot.interval.ms`` passed, then the
log below it dropped once older than ``metadata.max.retention.ms`` or larger than
``metadata.max.retention.bytes``.

Each controller registers itself (KIP-919, a RegisterControllerRecord) once its
metadata.version allows it: directly when active, else with a ControllerRegistration
request to the active controller.

Thread-safety: :meth:`QuorumController.post` may be called from any thread (it hops to
the loop); everything else runs on the event loop of :meth:`QuorumController.start`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar, cast

from kafkacore.config import BrokerConfig
from kafkacore.controller.kraft import events as ev
from kafkacore.controller.kraft.cluster_control import (
    BrokerControlState,
    BrokerHeartbeatManager,
    controller_registration_record,
    register_broker,
)
from kafkacore.controller.kraft.config_control import ConfigControl, alter_client_quotas
from kafkacore.controller.kraft.feature_control import (
    allocate_producer_ids,
    local_supported_features,
    update_features,
)
from kafkacore.controller.kraft.replication_control import ReplicationControl
from kafkacore.controller.kraft.result import ApiError, ControllerError, ControllerResult
from kafkacore.controller.kraft.security_control import (
    alter_scram_credentials,
    create_acls,
    delete_acls,
)
from kafkacore.controller.kraft.state import ControllerState
from kafkacore.metadata.image import EMPTY_IMAGE, MetadataDelta, MetadataProvenance
from kafkacore.metadata.image.cluster import Endpoint
from kafkacore.metadata.image.loader import decode_batch
from kafkacore.metadata.records import (
    RECORDS,
    MetadataRecord,
    MetadataRecordType,
    decode_record,
    encode_record,
)
from kafkacore.protocol.declared import DECLARED
from kafkacore.protocol.errors import ErrorCode
from kafkacore.raft.client import NotLeaderError
from kafkacore.raft.driver import RaftDriver, wall_clock_ms
from kafkacore.raft.leader import RaftBatchTooLargeError
from kafkacore.raft.listener import Commit, LeaderChange, ListenerEvent, LoadSnapshot
from kafkacore.raft.metadata_log import MetadataLog
from kafkacore.raft.types import OffsetAndEpoch

__all__ = ["ControllerRegistrationInfo", "QuorumController"]

log = logging.getLogger("kafkacore.controller")

T = MetadataRecordType
_T = TypeVar("_T")
_NO_OP: Any = RECORDS[T.NO_OP_RECORD].cls
_BEGIN: Any = RECORDS[T.BEGIN_TRANSACTION_RECORD].cls
_END: Any = RECORDS[T.END_TRANSACTION_RECORD].cls
_TRANSACTION_MARKERS = frozenset(
    {T.BEGIN_TRANSACTION_RECORD, T.END_TRANSACTION_RECORD, T.ABORT_TRANSACTION_RECORD}
)
_TICK_S = 0.05


def _unknown_event(event: NoReturn) -> NoReturn:
    raise TypeError(f"not a controller event: {event!r}")


@dataclass(frozen=True)
class ControllerRegistrationInfo:
    """What this controller registers (Kafka's ``ControllerRegistrationManager``)."""

    incarnation_id: uuid.UUID
    listeners: tuple[Endpoint, ...]
    features: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass
class _Pending:
    """Records appended, not yet committed: the state they lead to, who waits."""

    last_offset: int
    state: ControllerState
    waiters: list[tuple[asyncio.Future[Any], Any]]


def apply_records(
    state: ControllerState,
    records: Sequence[MetadataRecord],
    base_offset: int,
    epoch: int,
    time_ms: int,
) -> ControllerState:
    """``state`` after ``records`` at offsets from ``base_offset``: the image, and the
    offset of each RegisterBrokerRecord (metadata transaction markers only take an
    offset: the controller writes whole transactions)."""
    delta = MetadataDelta(state.image)
    offsets = dict(state.register_offsets)
    for i, record in enumerate(records):
        if record.type in _TRANSACTION_MARKERS:
            continue
        delta.replay(record)
        if record.type == T.REGISTER_BROKER_RECORD:
            offsets[record.value.broker_id] = base_offset + i
        elif record.type == T.UNREGISTER_BROKER_RECORD:
            offsets.pop(record.value.broker_id, None)
    last = base_offset + len(records) - 1
    return ControllerState(delta.apply(MetadataProvenance(last, epoch, time_ms)), offsets)


class QuorumController:
    """See the module docstring. ``bootstrap`` holds the records an empty log starts
    with; ``send_registration(leader_id, request)`` sends this controller's
    ControllerRegistration to the active controller (standby only)."""

    def __init__(
        self,
        *,
        node_id: int,
        cluster_id: str,
        config: BrokerConfig,
        raft: RaftDriver,
        bootstrap: Sequence[MetadataRecord],
        registration: ControllerRegistrationInfo | None = None,
        send_registration: Callable[[int, Any], Any] | None = None,
        clock: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.config = config
        self.raft = raft
        self.bootstrap = list(bootstrap)
        self.registration = registration
        self._send_registration = send_registration
        self.clock = clock
        self.committed = ControllerState(EMPTY_IMAGE)
        self.latest = self.committed
        self.active_epoch: int | None = None
        self.heartbeats = BrokerHeartbeatManager(config.broker_session_timeout_ms, clock)
        self.replication = ReplicationControl(config, self.heartbeats)
        self.configs = ConfigControl(config)
        self._pending: deque[_Pending] = deque()
        self._queue: asyncio.Queue[tuple[ev.ControllerEvent, asyncio.Future[Any] | None] | None]
        self._queue = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.Task[None] | None = None
        self._last_write_ms = 0
        self._last_balance_ms = 0
        self._last_fence_check_ms = 0
        self._last_registration_ms = 0
        self._bytes_since_snapshot = 0
        self._last_snapshot_ms = clock()
        self._registering: asyncio.Task[Any] | None = None
        self.fatal: BaseException | None = None

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(self._run())
        self._timer = asyncio.ensure_future(self._ticks())
        self.raft.register_listener(lambda events: self.post(ev.RaftEvents(tuple(events))))

    async def stop(self) -> None:
        for task in (self._timer, self._registering):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._task is not None:
            self._queue.put_nowait(None)
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._fail_pending()

    # -- the public API -------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        return self.active_epoch is not None

    @property
    def active_controller_id(self) -> int | None:
        return self.raft.client.leader_and_epoch.leader_id

    def post(self, event: ev.ControllerEvent) -> None:
        """Queue ``event`` (from any thread)."""
        loop = self._loop
        if loop is None:
            self._queue.put_nowait((event, None))
        else:
            loop.call_soon_threadsafe(self._queue.put_nowait, (event, None))

    async def call(self, event: ev.ControllerRequest[_T]) -> _T:
        """Queue ``event`` and await its answer (``ControllerError`` on refusal)."""
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((cast(ev.ControllerEvent, event), future))
        return await future

    # -- the event loop -------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            event, future = item
            try:
                self._process(event, future)
            except ControllerError as exc:
                if future is not None and not future.done():
                    future.set_exception(exc)
            except Exception as exc:  # a bug, or a record that cannot replay: Kafka's fault
                log.exception("the quorum controller failed on %s", type(event).__name__)
                if future is not None and not future.done():
                    future.set_exception(ControllerError(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)))
                if isinstance(event, ev.RaftEvents):
                    self.fatal = exc
                    raise

    def _process(self, event: ev.ControllerEvent, future: asyncio.Future[Any] | None) -> None:
        match event:
            case ev.RaftEvents(events):
                self._handle_raft(events)
            case ev.WriteNoOp():
                if self.is_active:
                    self._write([MetadataRecord(T.NO_OP_RECORD, 0, _NO_OP())], None, None)
            case ev.FenceStaleBrokers():
                if self.is_active:
                    self._write(self.replication.stale_broker_fencing(self.latest), None, None)
            case ev.BalanceLeaders():
                if self.is_active:
                    self._balance_leaders()
            case ev.MaybeSnapshot():
                self._maybe_snapshot()
            case ev.RegisterSelf():
                self._register_self()
            case ev.ReadState():
                self._answer(future, self.committed)
            case ev.ListPartitionReassignments(request):
                self._answer(future, self.replication.list_reassignments(self.committed, request))
            case _:
                self._write_request(event, future)

    def _answer(self, future: asyncio.Future[Any] | None, value: Any) -> None:
        if future is not None and not future.done():
            future.set_result(value)

    def _write_request(self, event: ev.ControllerEvent, future: asyncio.Future[Any] | None) -> None:
        """A request that writes: refused with NOT_CONTROLLER unless active; its records
        written and its caller answered once they are committed."""
        if not self.is_active:
            raise ControllerError(
                ErrorCode.NOT_CONTROLLER, "This node is not the active controller."
            )
        state = self.latest
        result: ControllerResult[Any]
        match event:
            case ev.RegisterBroker(request, _version):
                result = self._register_broker(state, request)
            case ev.BrokerHeartbeat(request, _version):
                result = self._heartbeat(state, request)
            case ev.UnregisterBroker(broker_id):
                result = ControllerResult(
                    self.replication.unregister_broker(state, broker_id), ApiError()
                )
            case ev.RegisterController(request):
                mv = state.image.features.metadata_version_or_raise()
                result = ControllerResult([controller_registration_record(request, mv)], ApiError())
            case ev.CreateTopics(request, version, describable):
                result = self.replication.create_topics(
                    state, request, version, None if describable is None else set(describable)
                )
            case ev.DeleteTopics(topic_ids):
                result = self.replication.delete_topics(state, topic_ids)
            case ev.CreatePartitions(request):
                result = self.replication.create_partitions(state, request)
            case ev.AlterPartition(request, version):
                result = self.replication.alter_partition(state, request, version)
            case ev.ElectLeaders(request):
                result = self.replication.elect_leaders(state, request)
            case ev.AlterPartitionReassignments(request):
                result = self.replication.alter_reassignments(state, request)
            case ev.AlterConfigs(request, incremental):
                result = self.configs.alter_configs(state, request, incremental)
            case ev.AlterClientQuotas(request):
                result = alter_client_quotas(state, request)
            case ev.AlterScramCredentials(request):
                result = alter_scram_credentials(state, request)
            case ev.CreateAcls(request):
                result = create_acls(state, request)
            case ev.DeleteAcls(filters):
                result = delete_acls(state, list(filters))
            case ev.UpdateFeatures(updates, types, validate_only):
                result = update_features(
                    state,
                    dict(updates),
                    dict(types),
                    validate_only,
                    node_id=self.node_id,
                    voters=self.raft.client.quorum.voters.voters,
                    kraft_version=self.raft.client.control.last_kraft_version(),
                    upgrade_kraft_version=self._upgrade_kraft_version,
                    unstable=bool(self.config.get("unstable.feature.versions.enable")),
                )
            case ev.AllocateProducerIds(broker_id, broker_epoch):
                result = allocate_producer_ids(state, broker_id, broker_epoch)
            case ev.AssignReplicasToDirs(request):
                result = self.replication.assign_replicas_to_dirs(state, request)
            case _:
                _unknown_event(event)  # type: ignore[arg-type]
        after = self._write(result.records, future, result.response)
        if isinstance(event, ev.BrokerHeartbeat) and after is not None:
            _, nxt = result.response
            if nxt is BrokerControlState.CONTROLLED_SHUTDOWN:
                self.heartbeats.set_controlled_shutdown_offset(event.request.broker_id, after)

    def _register_broker(self, state: ControllerState, request: Any) -> ControllerResult[Any]:
        new_epoch = self.raft.client.next_write_offset()
        registration, new_incarnation, clean = register_broker(
            state,
            request,
            cluster_id=self.cluster_id,
            new_epoch=new_epoch,
            heartbeats=self.heartbeats,
        )
        records: list[MetadataRecord] = []
        if new_incarnation and state.broker(request.broker_id) is not None:
            # the previous incarnation's replicas leave the ISRs (and, after an unclean
            # shutdown, the ELRs) first; the epoch stays the offset this write starts at,
            # as Kafka's, the registration record comes after them
            records += self.replication.broker_shutdown(state, request.broker_id, clean)
        mv = state.image.features.metadata_version_or_raise()
        records.append(registration.to_record(mv))
        return ControllerResult(records, registration.epoch)

    def _heartbeat(self, state: ControllerState, request: Any) -> ControllerResult[Any]:
        result = self.replication.process_heartbeat(state, request)
        return ControllerResult(result.records, result.response, atomic=False)

    def _upgrade_kraft_version(self, level: int, validate_only: bool) -> None:
        current = self.raft.client.control.last_kraft_version()
        if level == current:
            return
        raise ControllerError(
            ErrorCode.INVALID_UPDATE_VERSION,
            f"Invalid update version {level} for feature kraft.version. Upgrading kraft.version "
            "is not supported by this controller.",
        )

    # -- writing ------------------------------------------------------------------------------

    def _write(
        self,
        records: Sequence[MetadataRecord],
        future: asyncio.Future[Any] | None,
        response: Any,
    ) -> int | None:
        """Replay ``records`` into the latest state and append them; ``future`` gets
        ``response`` once they are committed. Returns their last offset (``None``: no
        records; the answer then waits for what was written before)."""
        if not records:
            if future is not None:
                if self._pending:
                    self._pending[-1].waiters.append((future, response))
                else:
                    self._answer(future, response)
            return None
        try:
            base = self.raft.client.next_write_offset()
            now = self.clock()
            state = apply_records(self.latest, records, base, self.raft.client.epoch, now)
            last = self.raft.append([encode_record(r) for r in records])
        except NotLeaderError:
            raise ControllerError(
                ErrorCode.NOT_CONTROLLER, "This node is not the active controller."
            ) from None
        except RaftBatchTooLargeError as exc:
            raise ControllerError(ErrorCode.POLICY_VIOLATION, str(exc)) from None
        if last != base + len(records) - 1:
            raise RuntimeError(f"records appended at {last}, expected {base + len(records) - 1}")
        self.latest = state
        self._last_write_ms = now
        waiters = [] if future is None else [(future, response)]
        self._pending.append(_Pending(last, state, waiters))
        return last

    def _fail_pending(self) -> None:
        while self._pending:
            for future, _ in self._pending.popleft().waiters:
                if not future.done():
                    future.set_exception(
                        ControllerError(ErrorCode.NOT_CONTROLLER, "The active controller changed.")
                    )

    # -- the Raft layer ----------------------------------------------------------------------

    def _handle_raft(self, events: Sequence[ListenerEvent]) -> None:
        for event in events:
            match event:
                case LoadSnapshot(snapshot_id, snapshot):
                    records = [decode_record(v) for v in snapshot.values]
                    delta = MetadataDelta(self.committed.image)
                    for record in records:
                        delta.replay(record)
                    delta.finish_snapshot()
                    last = snapshot_id.offset - 1
                    provenance = MetadataProvenance(
                        last, snapshot_id.epoch, snapshot.last_contained_log_timestamp
                    )
                    offsets = {b: last for b in delta.apply(provenance).cluster.brokers}
                    self.committed = ControllerState(delta.apply(provenance), offsets)
                    if not self.is_active:
                        self.latest = self.committed
                    self._bytes_since_snapshot = 0
                case Commit(batches):
                    self._commit(batches)
                case LeaderChange(leader):
                    if leader.leader_id == self.node_id and leader.epoch != self.active_epoch:
                        self._activate(leader.epoch)
                    elif leader.leader_id != self.node_id and self.is_active:
                        self._deactivate()
                    if self.registration is not None:
                        self.post(ev.RegisterSelf())

    def _commit(self, batches: Sequence[Any]) -> None:
        last = batches[-1].last_offset
        self._bytes_since_snapshot += sum(b.header.size_in_bytes for b in batches)
        if self.is_active and self._pending:
            while self._pending and self._pending[0].last_offset <= last:
                pending = self._pending.popleft()
                self.committed = pending.state
                for future, response in pending.waiters:
                    self._answer(future, response)
            return
        if self.is_active:
            return  # control batches of this epoch (its LeaderChange)
        for batch in batches:
            if batch.is_control:
                continue
            records = decode_batch(batch)
            self.committed = apply_records(
                self.committed, records, batch.base_offset, batch.epoch, batch.header.max_timestamp
            )
        self.latest = self.committed

    def _activate(self, epoch: int) -> None:
        log.info("Becoming the active controller at epoch %d", epoch)
        self.active_epoch = epoch
        self.latest = self.committed
        self.heartbeats = BrokerHeartbeatManager(self.config.broker_session_timeout_ms, self.clock)
        self.replication.heartbeats = self.heartbeats
        for broker_id in self.committed.image.cluster.brokers:
            self.heartbeats.begin(broker_id)
        if self.committed.image.features.metadata_version is None:
            log.info(
                "The metadata log appears to be empty. Appending %d bootstrap record(s) in "
                "metadata transaction.",
                len(self.bootstrap),
            )
            records = [
                MetadataRecord(T.BEGIN_TRANSACTION_RECORD, 0, _BEGIN(name="Bootstrap records")),
                *self.bootstrap,
                MetadataRecord(T.END_TRANSACTION_RECORD, 0, _END()),
            ]
            try:
                self._write(records, None, None)
            except ControllerError:
                log.warning("could not write the bootstrap records; leadership lost")

    def _deactivate(self) -> None:
        log.info("Renouncing the active controller role (epoch %s)", self.active_epoch)
        self.active_epoch = None
        self._fail_pending()
        self.latest = self.committed

    # -- periodic work ------------------------------------------------------------------------

    async def _ticks(self) -> None:
        idle_ms = self.config.get("metadata.max.idle.interval.ms")
        session_ms = self.config.broker_session_timeout_ms
        balance_ms = self.config.get("leader.imbalance.check.interval.seconds") * 1000
        while True:
            await asyncio.sleep(_TICK_S)
            now = self.clock()
            if self.is_active:
                if idle_ms > 0 and now - self._last_write_ms >= idle_ms:
                    self._last_write_ms = now
                    self.post(ev.WriteNoOp())
                if now - self._last_fence_check_ms >= min(1000, max(50, session_ms // 8)):
                    self._last_fence_check_ms = now
                    self.post(ev.FenceStaleBrokers())
                if now - self._last_balance_ms >= balance_ms:
                    self._last_balance_ms = now
                    self.post(ev.BalanceLeaders())
            if self.registration is not None and now - self._last_registration_ms >= 500:
                self._last_registration_ms = now
                self.post(ev.RegisterSelf())  # until this controller's registration is seen
            self.post(ev.MaybeSnapshot())

    def _balance_leaders(self) -> None:
        state = self.latest
        records: list[MetadataRecord] = []
        if self.config.get("auto.leader.rebalance.enable"):
            for topic in state.image.topics.by_id.values():
                for pid, partition in topic.partitions.items():
                    if partition.replicas and partition.leader != partition.replicas[0]:
                        record = self.replication.elect_preferred(state, (topic.id, pid))
                        if record is not None:
                            records.append(record)
        for key in state.partitions_with_no_leader():
            topic = state.image.topics.by_id[key[0]]
            if self.replication.unclean_enabled(state, topic.name):
                records += self.replication.leader_and_isr_updates(state, [key])
        self._write(records[:1000], None, None)

    def _maybe_snapshot(self) -> None:
        committed = self.committed
        if committed.image.features.metadata_version is None or committed.offset < 0:
            return
        now = self.clock()
        max_bytes = self.config.get("metadata.log.max.record.bytes.between.snapshots")
        max_ms = self.config.get("metadata.log.max.snapshot.interval.ms")
        due = self._bytes_since_snapshot >= max_bytes or (
            max_ms > 0 and now - self._last_snapshot_ms >= max_ms and self._bytes_since_snapshot > 0
        )
        if not due:
            return
        self.snapshot()

    def snapshot(self) -> OffsetAndEpoch | None:
        """Write a snapshot of the committed state now (Kafka's ``SnapshotGenerator``);
        then drop the log below it if retention allows. ``None`` if there is nothing new."""
        committed = self.committed
        provenance = committed.image.provenance
        snapshot_id = OffsetAndEpoch(provenance.last_offset + 1, provenance.last_epoch)
        client = self.raft.client
        latest = client.log.latest_snapshot_id()
        if latest is not None and latest.offset >= snapshot_id.offset:
            return None
        if snapshot_id.offset > (client.high_watermark or 0):
            return None
        values = [encode_record(r) for r in committed.image.records()]
        if not client.create_snapshot(
            snapshot_id,
            values,
            last_contained_log_timestamp=max(0, provenance.last_log_time_ms),
            now=self.clock(),
        ):
            return None
        log.info("Wrote snapshot %s (%d records)", snapshot_id, len(values))
        self._bytes_since_snapshot = 0
        self._last_snapshot_ms = self.clock()
        self._maybe_clean(snapshot_id)
        return snapshot_id

    def _maybe_clean(self, snapshot_id: OffsetAndEpoch) -> None:
        """The metadata log's retention (Kafka's ``KafkaMetadataLog.maybeClean``)."""
        metadata_log = self.raft.client.log
        if isinstance(metadata_log, MetadataLog) and metadata_log.maybe_clean(
            self.config.get("metadata.max.retention.bytes"),
            self.config.get("metadata.max.retention.ms"),
            self.clock(),
        ):
            log.info("Cleaned the metadata log up to snapshot %s", snapshot_id)

    # -- this controller's registration ------------------------------------------------------

    def _register_self(self) -> None:
        info = self.registration
        if info is None:
            return
        mv = self.committed.image.features.metadata_version
        if mv is None or not mv.is_controller_registration_supported:
            return
        current = self.committed.image.cluster.controllers.get(self.node_id)
        if current is not None and current.incarnation_id == info.incarnation_id:
            return
        request = controller_registration_request(self.node_id, info)
        if self.is_active:
            pending = self.latest.image.cluster.controllers.get(self.node_id)
            if pending is not None and pending.incarnation_id == info.incarnation_id:
                return  # written, not yet committed
            with contextlib.suppress(ControllerError):
                self._write([controller_registration_record(request, mv)], None, None)
            return
        leader = self.active_controller_id
        if leader is None or self._send_registration is None:
            return
        if self._registering is not None and not self._registering.done():
            return
        self._registering = asyncio.ensure_future(self._send_registration(leader, request))


def controller_registration_request(node_id: int, info: ControllerRegistrationInfo) -> Any:
    """This controller's ControllerRegistration request (v0)."""
    cls: Any = DECLARED[70].request.cls
    return cls(
        controller_id=node_id,
        incarnation_id=info.incarnation_id,
        zk_migration_ready=False,
        listeners=[
            cls.Listener(
                name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol
            )
            for e in info.listeners
        ],
        features=[
            cls.Feature(name=name, min_supported_version=lo, max_supported_version=hi)
            for name, (lo, hi) in (info.features or local_supported_features()).items()
        ],
    )
