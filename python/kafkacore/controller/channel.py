"""Controller -> broker requests (Kafka's ``ControllerChannelManager`` and
``ControllerBrokerRequestBatch``).

One queue and one sender task per broker; requests go out in queue order over a
NodeClient, a failed send reconnects with backoff and retries the same request until the
broker is removed. Responses are handed to the request's callback (the controller turns
them into events on its queue)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kafkacore.controller.algorithms import LEADER_DURING_DELETE, LeaderAndIsr
from kafkacore.controller.context import ControllerContext, ReplicaAssignment
from kafkacore.log import TopicPartition
from kafkacore.net import NodeClient, NodeClientFactory
from kafkacore.protocol import APIS_BY_NAME, ApiKey
from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrRequest, LeaderAndIsrResponse
from kafkacore.protocol.messages.stop_replica import StopReplicaRequest, StopReplicaResponse
from kafkacore.protocol.messages.update_metadata import UpdateMetadataRequest
from kafkacore.protocol.schema import KafkaStruct
from kafkacore.zk.data import BrokerRegistration

__all__ = [
    "LEADER_AND_ISR_VERSION",
    "STOP_REPLICA_VERSION",
    "UPDATE_METADATA_VERSION",
    "ControllerBrokerRequestBatch",
    "ControllerChannelManager",
]

log = logging.getLogger(__name__)

LEADER_AND_ISR_VERSION = 7
UPDATE_METADATA_VERSION = 8
STOP_REPLICA_VERSION = 4
EPOCH_DURING_DELETE = -2
NO_EPOCH = -1

Callback = Callable[[KafkaStruct], None]
StopReplicaCallback = Callable[[int, StopReplicaResponse, frozenset[TopicPartition]], None]
LeaderAndIsrCallback = Callable[[int, LeaderAndIsrResponse], None]
_LaiPartition = LeaderAndIsrRequest.LeaderAndIsrPartitionState
_UmPartition = UpdateMetadataRequest.UpdateMetadataPartitionState


def _endpoint(registration: BrokerRegistration, listener: str) -> tuple[str, int]:
    """``listener``'s endpoint of a broker (else its first); a null host is empty."""
    ep = next((e for e in registration.endpoints if e.listener == listener), None)
    if ep is None:
        ep = registration.endpoints[0]
    return ep.host or "", ep.port


@dataclass
class _Item:
    api_key: ApiKey
    api_name: str
    version: int
    request: KafkaStruct
    callback: Callback | None


class _BrokerSender:
    def __init__(
        self,
        manager: ControllerChannelManager,
        broker_id: int,
        host: str,
        port: int,
    ) -> None:
        self.manager = manager
        self.broker_id = broker_id
        self.host, self.port = host, port
        self.queue: asyncio.Queue[_Item] = asyncio.Queue()
        self.client: NodeClient | None = None
        self.task = asyncio.get_running_loop().create_task(
            self._run(), name=f"controller-sender-{broker_id}"
        )

    async def _run(self) -> None:
        backoff = self.manager.retry_backoff_s
        while True:
            item = await self.queue.get()
            while True:
                try:
                    if self.client is None or self.client.closed:
                        self.client = self.manager.client_factory(self.host, self.port)
                    response = await self.client.send(item.api_key, item.version, item.request)
                    break
                except asyncio.CancelledError:
                    raise
                except (ConnectionError, TimeoutError, OSError) as exc:
                    log.info(
                        "controller: %s to broker %d failed (%s), retrying",
                        item.api_name,
                        self.broker_id,
                        exc,
                    )
                    await self._drop_client()
                    await asyncio.sleep(backoff)
            if item.callback is not None:
                try:
                    item.callback(response)
                except Exception:
                    log.exception("controller: callback for %s failed", item.api_name)

    async def _drop_client(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task
        await self._drop_client()


class ControllerChannelManager:
    """Per-broker ordered request queues. ``client_factory(host, port)`` makes the
    :class:`~kafkacore.net.NodeClient` of one broker."""

    def __init__(
        self,
        client_factory: NodeClientFactory,
        *,
        listener: str = "PLAINTEXT",
        retry_backoff_s: float = 0.1,
    ) -> None:
        self.client_factory = client_factory
        self.listener = listener
        self.retry_backoff_s = retry_backoff_s
        self._senders: dict[int, _BrokerSender] = {}

    def add_broker(self, registration: BrokerRegistration) -> None:
        if registration.id in self._senders:
            return
        host, port = _endpoint(registration, self.listener)
        self._senders[registration.id] = _BrokerSender(self, registration.id, host, port)

    async def remove_broker(self, broker_id: int) -> None:
        sender = self._senders.pop(broker_id, None)
        if sender is not None:
            await sender.stop()

    async def shutdown(self) -> None:
        for broker_id in list(self._senders):
            await self.remove_broker(broker_id)

    def send(
        self,
        broker_id: int,
        api_name: str,
        version: int,
        request: KafkaStruct,
        callback: Callback | None = None,
    ) -> None:
        sender = self._senders.get(broker_id)
        if sender is None:
            log.warning("controller: not sending %s to unknown broker %d", api_name, broker_id)
            return
        api_key = ApiKey(APIS_BY_NAME[api_name].request.api_key)
        sender.queue.put_nowait(_Item(api_key, api_name, version, request, callback))

    @property
    def brokers(self) -> set[int]:
        return set(self._senders)


class ControllerBrokerRequestBatch:
    """Collects LeaderAndIsr, UpdateMetadata and StopReplica for one controller action;
    ``send`` queues them per broker in that order. ``stop_replica_callback(broker,
    response, deleted)`` hears the answers to StopReplicas that delete partitions,
    ``leader_and_isr_callback(broker, response)`` every LeaderAndIsr answer (offline log
    dirs); ``sent`` collects everything sent (tests and logging)."""

    def __init__(
        self,
        controller_id: int,
        context: ControllerContext,
        channel: ControllerChannelManager,
        *,
        stop_replica_callback: StopReplicaCallback | None = None,
        leader_and_isr_callback: LeaderAndIsrCallback | None = None,
        sent: list[tuple[int, str, KafkaStruct]] | None = None,
    ) -> None:
        self.controller_id = controller_id
        self.ctx = context
        self.channel = channel
        self.stop_replica_callback = stop_replica_callback
        self.leader_and_isr_callback = leader_and_isr_callback
        self.leader_and_isr: dict[
            int, dict[TopicPartition, tuple[LeaderAndIsr, ReplicaAssignment | None, bool]]
        ] = {}
        self.update_metadata_brokers: set[int] = set()
        self.update_metadata_partitions: set[TopicPartition] = set()
        self.stop_replica: dict[int, dict[TopicPartition, bool]] = {}
        # everything sent, for tests and logging: (broker, api name, request)
        self.sent: list[tuple[int, str, KafkaStruct]] = [] if sent is None else sent

    def new_batch(self) -> None:
        self.leader_and_isr = {}
        self.update_metadata_brokers = set()
        self.update_metadata_partitions = set()
        self.stop_replica = {}

    def add_leader_and_isr(
        self, brokers: Iterable[int], tp: TopicPartition, state: LeaderAndIsr, is_new: bool
    ) -> None:
        for b in brokers:
            if b < 0:
                continue
            per = self.leader_and_isr.setdefault(b, {})
            prev = per.get(tp)
            a = self.ctx.full_assignment(tp)
            per[tp] = (state, a, is_new or (prev is not None and prev[2]))
        self.add_update_metadata(self.ctx.live_or_shutting_down_broker_ids, [tp])

    def add_stop_replica(self, brokers: Iterable[int], tp: TopicPartition, delete: bool) -> None:
        for b in brokers:
            if b < 0:
                continue
            per = self.stop_replica.setdefault(b, {})
            per[tp] = per.get(tp, False) or delete

    def add_update_metadata(
        self, brokers: Iterable[int], partitions: Iterable[TopicPartition]
    ) -> None:
        self.update_metadata_brokers.update(b for b in brokers if b >= 0)
        self.update_metadata_partitions.update(partitions)

    # --- building -----------------------------------------------------------------------

    def _lai_partition(
        self, tp: TopicPartition, s: LeaderAndIsr, a: ReplicaAssignment | None, is_new: bool
    ) -> LeaderAndIsrRequest.LeaderAndIsrPartitionState:
        return _LaiPartition(
            topic_name=tp.topic,
            partition_index=tp.partition,
            controller_epoch=s.controller_epoch,
            leader=s.leader,
            leader_epoch=s.leader_epoch,
            isr=list(s.isr),
            partition_epoch=s.partition_epoch,
            replicas=list(a.replicas) if a else [],
            adding_replicas=list(a.adding) if a else [],
            removing_replicas=list(a.removing) if a else [],
            is_new=is_new,
            leader_recovery_state=s.leader_recovery_state,
        )

    def _um_partition(self, tp: TopicPartition) -> _UmPartition | None:
        s = self.ctx.leader_isr.get(tp)
        if s is None:
            return None
        leader = LEADER_DURING_DELETE if tp.topic in self.ctx.topics_to_delete else s.leader
        return _UmPartition(
            topic_name=tp.topic,
            partition_index=tp.partition,
            controller_epoch=s.controller_epoch,
            leader=leader,
            leader_epoch=s.leader_epoch,
            isr=list(s.isr),
            zk_version=s.partition_epoch,
            replicas=self.ctx.replicas(tp),
            offline_replicas=self.ctx.offline_replicas(tp),
        )

    def _live_brokers(self) -> list[UpdateMetadataRequest.UpdateMetadataBroker]:
        return [
            UpdateMetadataRequest.UpdateMetadataBroker(
                id=bid,
                endpoints=[
                    UpdateMetadataRequest.UpdateMetadataEndpoint(
                        port=ep.port,
                        host=ep.host or "",  # a null host is empty, as in _endpoint
                        listener=ep.listener,
                        security_protocol=_protocol_id(ep.security_protocol),
                    )
                    for ep in reg.endpoints
                ],
                rack=reg.rack,
            )
            for bid, reg in sorted(self.ctx.live_brokers.items())
        ]

    def _topic_id(self, topic: str) -> uuid.UUID:
        return self.ctx.topic_ids.get(topic) or _ZERO

    def send(self) -> None:
        ctx = self.ctx
        for broker, states in self.leader_and_isr.items():
            by_topic: dict[str, list[_LaiPartition]] = {}
            leaders: set[int] = set()
            for tp, (s, a, is_new) in states.items():
                by_topic.setdefault(tp.topic, []).append(self._lai_partition(tp, s, a, is_new))
                leaders.add(s.leader)
            live_leaders: list[LeaderAndIsrRequest.LeaderAndIsrLiveLeader] = []
            for lid in sorted(leaders):
                reg = ctx.live_brokers.get(lid)
                if reg is not None:
                    host, port = _endpoint(reg, self.channel.listener)
                    live_leaders.append(
                        LeaderAndIsrRequest.LeaderAndIsrLiveLeader(
                            broker_id=lid, host_name=host, port=port
                        )
                    )
            # who sends (controller id and epoch), the target broker's epoch,
            # ZooKeeper-mode type 0, the topic states
            lai = LeaderAndIsrRequest(
                controller_id=self.controller_id,
                is_k_raft_controller=False,
                controller_epoch=ctx.epoch,
                broker_epoch=ctx.broker_epochs.get(broker, -1),
                type=0,
                topic_states=[
                    LeaderAndIsrRequest.LeaderAndIsrTopicState(
                        topic_name=t, topic_id=self._topic_id(t), partition_states=parts
                    )
                    for t, parts in by_topic.items()
                ],
                live_leaders=live_leaders,
            )
            lai_cb = self.leader_and_isr_callback
            self._send(
                broker,
                "LeaderAndIsr",
                LEADER_AND_ISR_VERSION,
                lai,
                None if lai_cb is None else _bind_broker(lai_cb, broker),
            )
        if self.update_metadata_brokers:
            by_topic_um: dict[str, list[_UmPartition]] = {}
            for tp in sorted(self.update_metadata_partitions):
                ps = self._um_partition(tp)
                if ps is not None:
                    by_topic_um.setdefault(tp.topic, []).append(ps)
            live = self._live_brokers()
            for broker in sorted(self.update_metadata_brokers):
                if broker not in ctx.live_brokers:
                    continue
                um = UpdateMetadataRequest(
                    controller_id=self.controller_id,
                    is_k_raft_controller=False,
                    controller_epoch=ctx.epoch,
                    broker_epoch=ctx.broker_epochs.get(broker, -1),
                    type=0,
                    topic_states=[
                        UpdateMetadataRequest.UpdateMetadataTopicState(
                            topic_name=t, topic_id=self._topic_id(t), partition_states=parts
                        )
                        for t, parts in by_topic_um.items()
                    ],
                    live_brokers=live,
                )
                self._send(broker, "UpdateMetadata", UPDATE_METADATA_VERSION, um)
        for broker, parts in self.stop_replica.items():
            by_topic_sr: dict[str, list[StopReplicaRequest.StopReplicaPartitionState]] = {}
            for tp, delete in parts.items():
                cur = ctx.leader_isr.get(tp)
                if tp.topic in ctx.topics_to_delete:
                    epoch = EPOCH_DURING_DELETE
                else:
                    epoch = cur.leader_epoch if cur is not None else NO_EPOCH
                by_topic_sr.setdefault(tp.topic, []).append(
                    StopReplicaRequest.StopReplicaPartitionState(
                        partition_index=tp.partition, leader_epoch=epoch, delete_partition=delete
                    )
                )
            sr = StopReplicaRequest(
                controller_id=self.controller_id,
                is_k_raft_controller=False,
                controller_epoch=ctx.epoch,
                broker_epoch=ctx.broker_epochs.get(broker, -1),
                topic_states=[
                    StopReplicaRequest.StopReplicaTopicState(topic_name=t, partition_states=ps)
                    for t, ps in by_topic_sr.items()
                ],
            )
            cb = None
            deleted = frozenset(tp for tp, delete in parts.items() if delete)
            if self.stop_replica_callback is not None and deleted:
                cb = _bind(self.stop_replica_callback, broker, deleted)
            self._send(broker, "StopReplica", STOP_REPLICA_VERSION, sr, cb)
        self.new_batch()

    def _send(
        self, broker: int, api: str, version: int, req: KafkaStruct, cb: Callback | None = None
    ) -> None:
        self.sent.append((broker, api, req))
        if len(self.sent) > 10000:
            del self.sent[:5000]
        self.channel.send(broker, api, version, req, cb)


def _bind(
    fn: StopReplicaCallback,
    broker: int,
    deleted: frozenset[TopicPartition],
) -> Callback:
    def answered(response: KafkaStruct) -> None:
        assert isinstance(response, StopReplicaResponse)  # what StopReplica decodes to
        fn(broker, response, deleted)

    return answered


def _bind_broker(fn: LeaderAndIsrCallback, broker: int) -> Callback:
    def answered(response: KafkaStruct) -> None:
        assert isinstance(response, LeaderAndIsrResponse)  # what LeaderAndIsr decodes to
        fn(broker, response)

    return answered


_PROTOCOLS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


def _protocol_id(value: int | str) -> int:
    if isinstance(value, int):
        return value
    return _PROTOCOLS.get(str(value).upper(), 0)


_ZERO = uuid.UUID(int=0)
