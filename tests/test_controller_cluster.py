"""KafkaController against an in-memory KafkaZkClient (the spec's interface, with
zkVersions, the controller-epoch fence and one-shot watches) and brokers simulated by
tiny asyncio TCP servers that decode the controller's requests with kafkacore's codec
and answer real responses. ``test_controller_zk.py`` repeats the key cases on a real
ZooKeeper server."""

from __future__ import annotations

import asyncio
import struct
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any

import pytest

from kafkacore.config import BrokerConfig
from kafkacore.controller.controller import KafkaController
from kafkacore.controller.events import AutoPreferredReplicaLeaderElection
from kafkacore.log import TopicPartition
from kafkacore.protocol import APIS, APIS_BY_NAME, ErrorCode
from kafkacore.protocol.api import decode_request, decode_response, encode_request, encode_response
from kafkacore.protocol.headers import RequestHeader
from kafkacore.zk.data import BrokerRegistration, Endpoint, LeaderIsrState, TopicAssignment
from kafkacore.zk.errors import ControllerMovedError, NodeExistsError, TopicExistsError

# --- fakes ----------------------------------------------------------------------------------


class FakeZk:
    """The controller-facing part of ``kafkacore.zk.client.KafkaZkClient``, in memory."""

    def __init__(self) -> None:
        self.zxid = 100
        self.controller: int | None = None
        self.controller_epoch = 0
        self.controller_epoch_version = 0
        self.brokers: dict[int, tuple[BrokerRegistration, int]] = {}
        self.topics: dict[str, tuple[TopicAssignment, int]] = {}
        self.states: dict[tuple[str, int], tuple[LeaderIsrState, int]] = {}
        self.delete_topics: set[str] = set()
        self.configs: dict[tuple[str, str], dict[str, str]] = {}
        self.isr_changes: dict[str, list[tuple[str, int]]] = {}
        self.log_dir_events: dict[str, int] = {}
        self._watches: dict[str, list[Callable[[], None]]] = {}

    def _watch(self, key: str, cb: Callable[[], None] | None) -> None:
        if cb is not None:
            self._watches.setdefault(key, []).append(cb)

    def _fire(self, key: str) -> None:
        for cb in self._watches.pop(key, []):
            asyncio.get_running_loop().call_soon(cb)

    def _fence(self, version: int | None) -> None:
        if version is not None and version != self.controller_epoch_version:
            raise ControllerMovedError(f"controller epoch zkVersion {version} is stale")

    def add_session_listener(self, cb: Callable[[str], None]) -> None:
        pass

    async def session_for_controller(self) -> FakeZk:
        return self

    # brokers
    async def register_broker(self, info: BrokerRegistration) -> int:
        self.zxid += 1
        self.brokers[info.id] = (info, self.zxid)
        self._fire("brokers")
        return self.zxid

    async def unregister_broker(self, broker_id: int) -> None:  # session loss
        del self.brokers[broker_id]
        self._fire("brokers")

    async def get_all_brokers(self) -> dict[int, tuple[BrokerRegistration, int]]:
        return dict(self.brokers)

    async def get_broker_ids(self, watch: Callable[[], None] | None = None) -> list[int]:
        self._watch("brokers", watch)
        return sorted(self.brokers)

    # controller
    async def get_controller_id(self, watch: Callable[[], None] | None = None) -> int | None:
        self._watch("controller", watch)
        return self.controller

    async def get_controller_epoch(self) -> tuple[int, int] | None:
        return self.controller_epoch, self.controller_epoch_version

    async def register_controller_and_increment_epoch(self, broker_id: int) -> tuple[int, int]:
        if self.controller is not None:
            raise ControllerMovedError(f"controller is {self.controller}")
        self.controller = broker_id
        self.controller_epoch += 1
        self.controller_epoch_version += 1
        self._fire("controller")
        return self.controller_epoch, self.controller_epoch_version

    async def delete_controller(self, epoch_zk_version: int) -> None:
        self._fence(epoch_zk_version)
        self.controller = None
        self._fire("controller")

    def expire_controller(self) -> None:  # the controller's session ends
        self.controller = None
        self._fire("controller")

    # topics
    async def get_all_topics(self, watch: Callable[[], None] | None = None) -> list[str]:
        self._watch("topics", watch)
        return sorted(self.topics)

    async def get_topic_assignment(
        self, topic: str, watch: Callable[[], None] | None = None
    ) -> TopicAssignment | None:
        self._watch(f"topic:{topic}", watch)
        entry = self.topics.get(topic)
        return None if entry is None else entry[0]

    async def set_topic_assignment(
        self,
        a: TopicAssignment,
        *,
        controller_epoch_zk_version: int | None,
        expected_version: int = -1,
    ) -> None:
        self._fence(controller_epoch_zk_version)
        _, version = self.topics[a.topic]
        self.topics[a.topic] = (a, version + 1)
        self._fire(f"topic:{a.topic}")

    async def create_topic_assignment(self, a: TopicAssignment) -> None:
        if a.topic in self.topics:
            raise TopicExistsError(a.topic)
        self.topics[a.topic] = (a, 0)
        self._fire("topics")

    async def get_partition_states(self, topic: str) -> dict[int, tuple[LeaderIsrState, int]]:
        return {p: v for (t, p), v in self.states.items() if t == topic}

    async def create_partition_states(
        self, topic: str, states: dict[int, LeaderIsrState], *, controller_epoch_zk_version: int
    ) -> dict[int, int]:
        self._fence(controller_epoch_zk_version)
        for p in states:
            if (topic, p) in self.states:
                raise NodeExistsError(f"{topic}-{p}")
        for p, s in states.items():
            self.states[(topic, p)] = (s, 0)
        return dict.fromkeys(states, 0)

    async def update_partition_state(
        self,
        topic: str,
        partition: int,
        state: LeaderIsrState,
        *,
        expected_version: int,
        controller_epoch_zk_version: int,
    ) -> int | None:
        self._fence(controller_epoch_zk_version)
        _, version = self.states[(topic, partition)]
        if version != expected_version:
            return None
        self.states[(topic, partition)] = (state, version + 1)
        return version + 1

    async def delete_topic_nodes(self, topic: str, *, controller_epoch_zk_version: int) -> None:
        self._fence(controller_epoch_zk_version)
        self.topics.pop(topic, None)
        for key in [k for k in self.states if k[0] == topic]:
            del self.states[key]
        self.configs.pop(("topics", topic), None)
        self.delete_topics.discard(topic)
        self._fire("topics")
        self._fire("delete_topics")

    async def get_topics_to_delete(self, watch: Callable[[], None] | None = None) -> list[str]:
        self._watch("delete_topics", watch)
        return sorted(self.delete_topics)

    async def mark_topic_for_deletion(self, topic: str) -> None:
        self.delete_topics.add(topic)
        self._fire("delete_topics")

    async def delete_topic_deletion_node(
        self, topic: str, *, controller_epoch_zk_version: int
    ) -> None:
        self._fence(controller_epoch_zk_version)
        self.delete_topics.discard(topic)
        self._fire("delete_topics")

    async def create_isr_change_notification(self, partitions: list[tuple[str, int]]) -> None:
        self.zxid += 1
        self.isr_changes[f"isr_change_{self.zxid:010d}"] = list(partitions)
        self._fire("isr_changes")

    async def get_isr_change_notifications(
        self, watch: Callable[[], None] | None = None
    ) -> list[str]:
        self._watch("isr_changes", watch)
        return sorted(self.isr_changes)

    async def get_isr_change_partitions(self, names: list[str]) -> list[tuple[str, int]]:
        return [tp for n in names for tp in self.isr_changes.get(n, [])]

    async def delete_isr_change_notifications(
        self, names: list[str], *, controller_epoch_zk_version: int
    ) -> None:
        self._fence(controller_epoch_zk_version)
        for n in names:
            self.isr_changes.pop(n, None)

    async def create_log_dir_event_notification(self, broker_id: int) -> None:
        self.zxid += 1
        self.log_dir_events[f"log_dir_event_{self.zxid:010d}"] = broker_id
        self._fire("log_dir_events")

    async def get_log_dir_event_notifications(
        self, watch: Callable[[], None] | None = None
    ) -> list[str]:
        self._watch("log_dir_events", watch)
        return sorted(self.log_dir_events)

    async def get_log_dir_event_brokers(self, names: list[str]) -> list[int]:
        return [self.log_dir_events[n] for n in names if n in self.log_dir_events]

    async def delete_log_dir_event_notifications(
        self, names: list[str], *, controller_epoch_zk_version: int
    ) -> None:
        self._fence(controller_epoch_zk_version)
        for n in names:
            self.log_dir_events.pop(n, None)

    async def get_entity_config(self, entity_type: str, name: str) -> dict[str, str]:
        return dict(self.configs.get((entity_type, name), {}))

    async def set_entity_config(self, entity_type: str, name: str, configs: dict[str, str]) -> None:
        self.configs[(entity_type, name)] = dict(configs)

    # /admin/reassign_partitions and /admin/preferred_replica_election: never written here
    async def get_partition_reassignment(
        self, watch: Callable[[], None] | None = None
    ) -> dict[tuple[str, int], tuple[int, ...]] | None:
        self._watch("reassign_partitions", watch)
        return None

    async def get_preferred_replica_election(
        self, watch: Callable[[], None] | None = None
    ) -> list[tuple[str, int]] | None:
        self._watch("preferred_replica_election", watch)
        return None


class FakeBroker:
    """A TCP server answering LeaderAndIsr/UpdateMetadata/StopReplica; records requests."""

    def __init__(self, broker_id: int) -> None:
        self.id = broker_id
        self.received: list[tuple[str, int, Any]] = []
        self.server: asyncio.Server | None = None
        self.port = 0
        self.stop_replica_error = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def registration(self) -> BrokerRegistration:
        return BrokerRegistration(
            id=self.id,
            endpoints=(Endpoint("PLAINTEXT", "127.0.0.1", self.port, "PLAINTEXT"),),
            listener_security_protocol_map={"PLAINTEXT": "PLAINTEXT"},
        )

    def of(self, api: str) -> list[Any]:
        return [r for name, _, r in self.received if name == api]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                (size,) = struct.unpack(">i", await reader.readexactly(4))
                header, request = decode_request(await reader.readexactly(size))
                api = APIS[header.api_key]
                self.received.append((api.name, header.api_version, request))
                writer.write(encode_response(header, self._answer(api.name, request)))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    def _answer(self, name: str, request: Any) -> Any:
        resp = APIS_BY_NAME[name].response.cls
        if name == "LeaderAndIsr":
            return resp(
                error_code=0,
                topics=[
                    resp.LeaderAndIsrTopicError(
                        topic_id=t.topic_id,
                        partition_errors=[
                            resp.LeaderAndIsrPartitionError(
                                partition_index=p.partition_index, error_code=0
                            )
                            for p in t.partition_states
                        ],
                    )
                    for t in request.topic_states
                ],
            )
        if name == "StopReplica":
            return resp(
                error_code=0,
                partition_errors=[
                    resp.StopReplicaPartitionError(
                        topic_name=t.topic_name,
                        partition_index=p.partition_index,
                        error_code=self.stop_replica_error,
                    )
                    for t in request.topic_states
                    for p in t.partition_states
                ],
            )
        return resp(error_code=0)


class TestNodeClient:
    """A minimal NodeClient (one request at a time) for the controller's channel."""

    __test__ = False

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.cid = 0
        self.closed = False

    async def send(self, api_key: int, version: int, request: Any) -> Any:
        if self.conn is None:
            self.conn = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.conn
        self.cid += 1
        writer.write(encode_request(RequestHeader(api_key, version, self.cid, "ctl"), request))
        await writer.drain()
        try:
            (size,) = struct.unpack(">i", await reader.readexactly(4))
            frame = await reader.readexactly(size)
        except asyncio.IncompleteReadError as exc:
            raise ConnectionError("connection closed") from exc
        cid, response = decode_response(frame, api_key, version)
        assert cid == self.cid
        return response

    async def close(self) -> None:
        self.closed = True
        if self.conn is not None:
            self.conn[1].close()
            self.conn = None


def config(**overrides: Any) -> BrokerConfig:
    """A broker config with the controller's settings (``delete_topic_enable=False`` is
    ``delete.topic.enable=false``)."""
    values: dict[str, Any] = {
        "delete_topic_enable": True,
        "unclean_leader_election_enable": False,
        "auto_leader_rebalance_enable": False,
    }
    values.update(overrides)
    return BrokerConfig({name.replace("_", "."): value for name, value in values.items()})


class Cluster:
    def __init__(self, zk: Any, n: int = 3, **cfg: Any) -> None:
        self.zk = zk
        self.brokers = {i: FakeBroker(i) for i in range(1, n + 1)}
        self.controllers: dict[int, KafkaController] = {}
        self.epochs: dict[int, int] = {}
        self.cfg = cfg
        # a controller's register_broker (its broker's registration after a new session)
        self.reregister: dict[int, Callable[[], Awaitable[int]]] = {}

    async def start(self, controllers: tuple[int, ...] = (1,)) -> None:
        for b in self.brokers.values():
            await b.start()
            self.epochs[b.id] = await self.zk.register_broker(b.registration())
        for cid in controllers:
            czk = await self.zk.session_for_controller()
            factory = getattr(self.zk, "client_factory", TestNodeClient)
            c = KafkaController(
                cid, czk, config(**self.cfg), factory, register_broker=self.reregister.get(cid)
            )
            self.controllers[cid] = c
            await c.startup()
            await c.wait_idle()

    async def stop(self) -> None:
        for c in self.controllers.values():
            await c.shutdown()
        for b in self.brokers.values():
            await b.stop()

    async def settle(self, c: KafkaController, rounds: int = 5) -> None:
        for _ in range(rounds):
            await asyncio.sleep(0.02)
            await c.wait_idle()


def run(zk_factory: Callable[[], Awaitable[Any]], body: Callable[..., Awaitable[None]]) -> None:
    async def main() -> None:
        zk = await zk_factory()
        try:
            await body(zk)
        finally:
            close = getattr(zk, "close", None)
            if close is not None:
                await close()

    asyncio.run(main())


async def fake_zk() -> Any:
    return FakeZk()


async def state(zk: Any, topic: str, p: int) -> tuple[int, int, list[int], int, int]:
    s, v = (await zk.get_partition_states(topic))[p]
    return (s.leader, s.leader_epoch, list(s.isr), s.controller_epoch, v)


async def wait_for(pred: Callable[[], Awaitable[bool]], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await pred():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)


def new_topic(topic: str, parts: dict[int, tuple[int, ...]]) -> TopicAssignment:
    return TopicAssignment(topic=topic, partitions=parts, topic_id=uuid.uuid4())


def alter_isr_request(
    cl: Cluster,
    topic_id: uuid.UUID,
    isr: Iterable[int],
    *,
    leader_epoch: int,
    partition_epoch: int,
    broker: int = 1,
    broker_epoch: int | None = None,
) -> Any:
    """An AlterPartition (v2+, by topic id) from ``broker`` proposing ``isr`` for partition 0,
    each ISR member with its current broker epoch."""
    req = APIS_BY_NAME["AlterPartition"].request.cls
    return req(
        broker_id=broker,
        broker_epoch=cl.epochs[broker] if broker_epoch is None else broker_epoch,
        topics=[
            req.TopicData(
                topic_id=topic_id,
                partitions=[
                    req.PartitionData(
                        partition_index=0,
                        leader_epoch=leader_epoch,
                        new_isr_with_epochs=[
                            req.BrokerState(broker_id=b, broker_epoch=cl.epochs[b]) for b in isr
                        ],
                        partition_epoch=partition_epoch,
                    )
                ],
            )
        ],
    )


# --- scenarios (shared with test_controller_zk.py) -------------------------------------------


async def scenario_election_and_create(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        assert c.is_active and c.epoch == 1
        assert (await zk.get_controller_epoch())[0] == 1
        # UpdateMetadata to every live broker first
        for b in cl.brokers.values():
            await wait_for(lambda b=b: _async(bool(b.received)))
            assert b.received[0][0] == "UpdateMetadata" and b.received[0][1] == 8
        await zk.create_topic_assignment(new_topic("t", {0: (1, 2, 3), 1: (2, 3, 1)}))
        await wait_for(lambda: _has_states(zk, "t", 2))
        assert await state(zk, "t", 0) == (1, 0, [1, 2, 3], 1, 0)
        assert await state(zk, "t", 1) == (2, 0, [2, 3, 1], 1, 0)
        await cl.settle(c)
        lai = cl.brokers[3].of("LeaderAndIsr")
        assert lai and all(v == 7 for n, v, _ in cl.brokers[3].received if n == "LeaderAndIsr")
        parts = {
            p.partition_index: p for r in lai for t in r.topic_states for p in t.partition_states
        }
        assert parts[0].is_new and parts[0].leader == 1 and parts[0].replicas == [1, 2, 3]
        assert lai[0].controller_id == 1 and lai[0].controller_epoch == 1
        assert lai[0].broker_epoch == cl.epochs[3]
        um = cl.brokers[2].of("UpdateMetadata")[-1]
        assert sorted(b.id for b in um.live_brokers) == [1, 2, 3]
        assert um.live_brokers[0].endpoints[0].port == cl.brokers[1].port
        # add a partition
        a = await zk.get_topic_assignment("t")
        await zk.set_topic_assignment(
            replace(a, partitions={**a.partitions, 2: (3, 1, 2)}),
            controller_epoch_zk_version=None,
        )
        await wait_for(lambda: _has_states(zk, "t", 3))
        assert await state(zk, "t", 2) == (3, 0, [3, 1, 2], 1, 0)
    finally:
        await cl.stop()


async def scenario_failures(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        await zk.create_topic_assignment(new_topic("single", {0: (2,)}))
        await zk.create_topic_assignment(new_topic("rep", {0: (2, 3, 1)}))
        await wait_for(lambda: _has_states(zk, "single", 1))
        await wait_for(lambda: _has_states(zk, "rep", 1))
        # broker 2 goes away: whole ISR offline -> leader -1, epoch 1, isr [2]
        await cl.brokers[2].stop()
        await zk.unregister_broker(2)
        await wait_for(lambda: _leader_is(zk, "single", 0, -1))
        await cl.settle(c)
        assert await state(zk, "single", 0) == (-1, 1, [2], 1, 1)
        # replicated partition: new leader is the next live ISR member, epoch 1
        leader, epoch, isr, _, _ = await state(zk, "rep", 0)
        assert (leader, epoch, isr) == (3, 1, [3, 1])
        # broker 2 returns (a new czxid): it is the last ISR member, so it leads again
        await cl.brokers[2].start()
        cl.epochs[2] = await zk.register_broker(cl.brokers[2].registration())
        await wait_for(lambda: _leader_is(zk, "single", 0, 2))
        leader, epoch, isr, _, _ = await state(zk, "single", 0)
        assert (leader, epoch, isr) == (2, 2, [2])
    finally:
        await cl.stop()


async def scenario_failover_fencing(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start(controllers=(1, 2))
    c1, c2 = cl.controllers[1], cl.controllers[2]
    try:
        assert c1.is_active and not c2.is_active and c1.epoch == 1
        await zk.create_topic_assignment(new_topic("t", {0: (1, 2)}))
        await wait_for(lambda: _has_states(zk, "t", 1))
        stale_version = c1.ctx.epoch_zk_version
        await c1.shutdown()
        await _move_controller(zk, c1)
        await wait_for(lambda: _async(c2.is_active))
        assert c2.epoch == 2
        assert (await zk.get_controller_epoch())[0] == 2
        s, v = (await zk.get_partition_states("t"))[0]
        with pytest.raises(ControllerMovedError):
            await zk.update_partition_state(
                "t",
                0,
                replace(s, leader_epoch=s.leader_epoch + 1),
                expected_version=v,
                controller_epoch_zk_version=stale_version,
            )
        # the new controller still works: broker 1 fails, c2 elects 2 with controller epoch 2
        await cl.brokers[1].stop()
        await zk.unregister_broker(1)
        await wait_for(lambda: _leader_is(zk, "t", 0, 2))
        assert (await state(zk, "t", 0))[:4] == (2, 1, [2], 2)
    finally:
        await cl.stop()


async def scenario_alter_partition(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        a = new_topic("t", {0: (1, 2, 3)})
        await zk.create_topic_assignment(a)
        await wait_for(lambda: _has_states(zk, "t", 1))
        await cl.settle(c)

        def alter(
            isr: list[int], leader_epoch: int = 0, partition_epoch: int = 0, **kw: Any
        ) -> Any:
            return alter_isr_request(
                cl,
                a.topic_id,
                isr,
                leader_epoch=leader_epoch,
                partition_epoch=partition_epoch,
                broker=kw.get("broker", 1),
                broker_epoch=kw.get("broker_epoch"),
            )

        def code(resp: Any) -> int:
            return int(resp.topics[0].partitions[0].error_code)

        resp = await c.alter_partition(alter([1, 2]), 3)
        assert resp.error_code == 0 and code(resp) == 0
        p = resp.topics[0].partitions[0]
        assert (p.leader_id, p.leader_epoch, p.isr, p.partition_epoch) == (1, 0, [1, 2], 1)
        assert await state(zk, "t", 0) == (1, 0, [1, 2], 1, 1)
        await cl.settle(c)
        last_um = cl.brokers[3].of("UpdateMetadata")[-1]
        assert last_um.topic_states[0].partition_states[0].isr == [1, 2]
        # idempotent repeat (stale partition epoch but same state)
        assert code(await c.alter_partition(alter([1, 2]), 3)) == 0
        assert code(await c.alter_partition(alter([1]), 3)) == ErrorCode.INVALID_UPDATE_VERSION
        assert code(await c.alter_partition(alter([1], 1, 1), 3)) == ErrorCode.NOT_CONTROLLER
        assert code(await c.alter_partition(alter([1], 0, 5), 3)) == ErrorCode.NOT_CONTROLLER
        stale = await c.alter_partition(alter([1], 0, 1, broker_epoch=1), 3)
        assert stale.error_code == ErrorCode.STALE_BROKER_EPOCH
        await cl.brokers[3].stop()
        await zk.unregister_broker(3)
        await cl.settle(c)
        # broker 3 left: the controller bumped the leader epoch when it left the ISR? it
        # was not in the ISR [1, 2], so the state is unchanged
        s = await state(zk, "t", 0)
        assert s[:3] == (1, 0, [1, 2])
        resp = await c.alter_partition(
            alter_isr_request(cl, a.topic_id, [1, 3], leader_epoch=0, partition_epoch=s[4]), 3
        )
        assert code(resp) == ErrorCode.INELIGIBLE_REPLICA
        assert code(await c.alter_partition(alter([1], -1, s[4]), 3)) == (
            ErrorCode.FENCED_LEADER_EPOCH
        )
        other = KafkaController(9, await zk.session_for_controller(), config(), TestNodeClient)
        await other.startup()
        try:
            await other.wait_idle()
            resp = await other.alter_partition(alter([1], 0, s[4]), 3)
            assert resp.error_code == ErrorCode.NOT_CONTROLLER
        finally:
            await other.shutdown()
    finally:
        await cl.stop()


async def scenario_controlled_shutdown(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        await zk.create_topic_assignment(new_topic("t", {0: (1, 2, 3), 1: (2, 1, 3), 2: (1,)}))
        await wait_for(lambda: _has_states(zk, "t", 3))
        assert (await c.controlled_shutdown(1, cl.epochs[1] - 1))[0] == ErrorCode.STALE_BROKER_EPOCH
        assert (await c.controlled_shutdown(7, -1))[0] == ErrorCode.BROKER_NOT_AVAILABLE
        err, remaining = await c.controlled_shutdown(1, cl.epochs[1])
        assert err == 0 and remaining == []
        assert (await state(zk, "t", 0))[:3] == (2, 1, [2, 3])
        assert (await state(zk, "t", 1))[:3] == (2, 1, [2, 3])
        assert (await state(zk, "t", 2))[:3] == (1, 0, [1])  # RF 1: left alone
        await cl.settle(c)
        stops = cl.brokers[1].of("StopReplica")
        assert any(
            not p.delete_partition and t.topic_name == "t" and p.partition_index == 1
            for r in stops
            for t in r.topic_states
            for p in t.partition_states
        )
        # a broker that is shutting down is not eligible for the ISR
        s = await state(zk, "t", 0)
        topic_id = (await zk.get_topic_assignment("t")).topic_id
        resp = await c.alter_partition(
            alter_isr_request(
                cl, topic_id, (2, 3, 1), leader_epoch=s[1], partition_epoch=s[4], broker=2
            ),
            3,
        )
        assert resp.topics[0].partitions[0].error_code == ErrorCode.INELIGIBLE_REPLICA
    finally:
        await cl.stop()


async def scenario_topic_deletion(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        await zk.create_topic_assignment(new_topic("t", {0: (1, 2), 1: (2, 3)}))
        await zk.create_topic_assignment(new_topic("u", {0: (3,)}))
        await wait_for(lambda: _has_states(zk, "t", 2))
        await wait_for(lambda: _has_states(zk, "u", 1))
        await zk.mark_topic_for_deletion("t")
        await wait_for(lambda: _async_not_in(zk, "t"))
        await wait_for(lambda: _async_empty_deletes(zk))
        await cl.settle(c)
        deletes = [
            (t.topic_name, p.partition_index, p.leader_epoch)
            for b in (1, 2)
            for r in cl.brokers[b].of("StopReplica")
            for t in r.topic_states
            for p in t.partition_states
            if p.delete_partition
        ]
        assert ("t", 0, -2) in deletes and ("t", 1, -2) in deletes
        # StopReplica(delete=false) (OfflineReplica) then StopReplica(delete=true)
        flags = [
            p.delete_partition
            for r in cl.brokers[1].of("StopReplica")
            for t in r.topic_states
            if t.topic_name == "t"
            for p in t.partition_states
        ]
        assert flags == [False, True]
        assert "t" not in c.ctx.assignments
        # leader -2 in the UpdateMetadata sent while deleting
        ums = [
            p.leader
            for r in cl.brokers[3].of("UpdateMetadata")
            for t in r.topic_states
            if t.topic_name == "t"
            for p in t.partition_states
        ]
        assert -2 in ums
        # a replica offline: ineligible until the broker returns
        await cl.brokers[3].stop()
        await zk.unregister_broker(3)
        await cl.settle(c)
        await zk.mark_topic_for_deletion("u")
        await cl.settle(c)
        assert "u" in await zk.get_all_topics()
        assert "u" in c.ctx.topics_ineligible_for_deletion
        await cl.brokers[3].start()
        cl.epochs[3] = await zk.register_broker(cl.brokers[3].registration())
        await wait_for(lambda: _async_not_in(zk, "u"))
    finally:
        await cl.stop()


async def scenario_deletion_disabled(zk: Any) -> None:
    cl = Cluster(zk, delete_topic_enable=False)
    await cl.start()
    c = cl.controllers[1]
    try:
        await zk.create_topic_assignment(new_topic("t", {0: (1,)}))
        await wait_for(lambda: _has_states(zk, "t", 1))
        await zk.mark_topic_for_deletion("t")
        await wait_for(lambda: _async_empty_deletes(zk))
        await cl.settle(c)
        assert "t" in await zk.get_all_topics()
        assert not any(
            p.delete_partition
            for r in cl.brokers[1].of("StopReplica")
            for t in r.topic_states
            for p in t.partition_states
        )
    finally:
        await cl.stop()


async def scenario_unclean(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        a = new_topic("t", {0: (2, 3)})
        await zk.create_topic_assignment(a)
        await wait_for(lambda: _has_states(zk, "t", 1))
        await zk.set_entity_config("topics", "t", {"unclean.leader.election.enable": "true"})
        # ISR shrinks to [2] (AlterPartition from the leader), then 2 dies and 3 stays
        resp = await c.alter_partition(
            alter_isr_request(cl, a.topic_id, [2], leader_epoch=0, partition_epoch=0, broker=2), 3
        )
        assert resp.topics[0].partitions[0].error_code == 0
        await cl.brokers[2].stop()
        await zk.unregister_broker(2)
        await wait_for(lambda: _leader_is(zk, "t", 0, 3))
        s, _ = (await zk.get_partition_states("t"))[0]
        assert (s.leader, s.leader_epoch, tuple(s.isr), s.leader_recovery_state) == (3, 1, (3,), 1)
    finally:
        await cl.stop()


async def scenario_preferred_and_isr_notification(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        a = new_topic("t", {0: (2, 3)})
        await zk.create_topic_assignment(a)
        await wait_for(lambda: _has_states(zk, "t", 1))
        await cl.brokers[2].stop()
        await zk.unregister_broker(2)
        await wait_for(lambda: _leader_is(zk, "t", 0, 3))
        assert (await state(zk, "t", 0))[:3] == (3, 1, [3])
        await cl.brokers[2].start()
        cl.epochs[2] = await zk.register_broker(cl.brokers[2].registration())
        await cl.settle(c)
        # preferred replica 2 is not in the ISR: no election
        c.post(AutoPreferredReplicaLeaderElection())
        await cl.settle(c)
        assert (await state(zk, "t", 0))[:3] == (3, 1, [3])
        # the leader adds 2 back to the ISR the ZK-direct way plus a notification
        s, v = (await zk.get_partition_states("t"))[0]
        await _leader_writes_state(zk, "t", 0, replace(s, isr=(3, 2)), v)
        await zk.create_isr_change_notification([("t", 0)])
        await wait_for(lambda: _async_no_isr_changes(zk))
        await cl.settle(c)
        assert c.ctx.leader_isr[TopicPartition("t", 0)].isr == (3, 2)
        um = cl.brokers[1].of("UpdateMetadata")[-1]
        assert um.topic_states[0].partition_states[0].isr == [3, 2]
        # now the auto rebalance moves leadership back to 2, leader epoch 2
        c.post(AutoPreferredReplicaLeaderElection())
        await cl.settle(c)
        assert (await state(zk, "t", 0))[:3] == (2, 2, [3, 2])
    finally:
        await cl.stop()


async def scenario_elect_leaders(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        a = new_topic("t", {0: (2, 3)})
        u = new_topic("u", {0: (1, 3)})
        await zk.create_topic_assignment(a)
        await zk.create_topic_assignment(u)
        await wait_for(lambda: _has_states(zk, "t", 1))
        await wait_for(lambda: _has_states(zk, "u", 1))
        got = await c.elect_leaders([("t", 0), ("nope", 0)])
        assert got[("t", 0)] == (ErrorCode.ELECTION_NOT_NEEDED, None)
        assert got[("nope", 0)][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        # u-0's ISR shrinks to [1], then 1 dies: no clean leader
        resp = await c.alter_partition(
            alter_isr_request(cl, u.topic_id, [1], leader_epoch=0, partition_epoch=0), 3
        )
        assert resp.topics[0].partitions[0].error_code == 0
        await cl.brokers[2].stop()
        await zk.unregister_broker(2)
        await zk.unregister_broker(1)  # the controller's own broker registration goes
        await wait_for(lambda: _leader_is(zk, "u", 0, -1))
        await wait_for(lambda: _leader_is(zk, "t", 0, 3))
        await cl.settle(c)
        got = await c.elect_leaders([("t", 0)])
        assert got[("t", 0)][0] == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
        assert (await c.elect_leaders([("t", 0)], unclean=True))[("t", 0)][0] == (
            ErrorCode.ELECTION_NOT_NEEDED
        )
        assert (await c.elect_leaders([("u", 0)]))[("u", 0)][0] == (
            ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
        )
        assert (await c.elect_leaders([("u", 0)], unclean=True))[("u", 0)] == (0, None)
        s, _ = (await zk.get_partition_states("u"))[0]
        assert (s.leader, s.leader_epoch, tuple(s.isr), s.leader_recovery_state) == (3, 2, (3,), 1)
    finally:
        await cl.stop()


async def scenario_reassignment(zk: Any) -> None:
    """Kafka's ControllerIntegrationTest reassignment [c] -> [o]: leader o, epoch 3."""
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        a = new_topic("t", {0: (1,)})
        await zk.create_topic_assignment(a)
        await wait_for(lambda: _has_states(zk, "t", 1))
        bad = await c.alter_partition_reassignments(
            {("t", 0): [2, 2], ("t", 1): [2], ("t", 9): None}
        )
        assert bad[("t", 0)][0] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
        assert bad[("t", 1)][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert (await c.alter_partition_reassignments({("t", 0): None}))[("t", 0)][0] == (
            ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
        )
        assert await c.alter_partition_reassignments({("t", 0): [2]}) == {("t", 0): (0, None)}
        assert await c.list_partition_reassignments() == {("t", 0): ([2, 1], [2], [1])}
        znode = await zk.get_topic_assignment("t")
        assert (znode.partitions, znode.adding, znode.removing) == (
            {0: (2, 1)},
            {0: (2,)},
            {0: (1,)},
        )
        leader, epoch, isr, _, pe = await state(zk, "t", 0)
        assert (leader, epoch, isr) == (1, 1, [1])
        await cl.settle(c)
        new_lai = [
            p
            for r in cl.brokers[2].of("LeaderAndIsr")
            for t in r.topic_states
            for p in t.partition_states
        ]
        assert new_lai and new_lai[0].is_new and new_lai[0].adding_replicas == [2]
        # the leader adds 2 to the ISR: the reassignment completes
        resp = await c.alter_partition(
            alter_isr_request(cl, a.topic_id, (1, 2), leader_epoch=1, partition_epoch=pe), 3
        )
        assert resp.topics[0].partitions[0].error_code == 0
        assert (await state(zk, "t", 0))[:3] == (2, 3, [2])
        znode = await zk.get_topic_assignment("t")
        assert (znode.partitions, znode.adding, znode.removing) == ({0: (2,)}, {}, {})
        assert await c.list_partition_reassignments() == {}
        await cl.settle(c)
        assert any(
            p.delete_partition
            for r in cl.brokers[1].of("StopReplica")
            for t in r.topic_states
            for p in t.partition_states
        )
    finally:
        await cl.stop()


async def scenario_reassignment_resumed_by_new_controller(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start(controllers=(1, 2))
    c1, c2 = cl.controllers[1], cl.controllers[2]
    try:
        a = new_topic("t", {0: (1, 3)})
        await zk.create_topic_assignment(a)
        await wait_for(lambda: _has_states(zk, "t", 1))
        assert await c1.alter_partition_reassignments({("t", 0): [2, 3]}) == {("t", 0): (0, None)}
        await c1.shutdown()
        await _move_controller(zk, c1)
        await wait_for(lambda: _async(c2.is_active))
        await c2.wait_idle()
        assert await c2.list_partition_reassignments() == {("t", 0): ([2, 3, 1], [2], [1])}
        leader, epoch, isr, _, pe = await state(zk, "t", 0)
        assert (leader, isr) == (1, [1, 3]) and epoch == 2  # A1 by each controller
        resp = await c2.alter_partition(
            alter_isr_request(cl, a.topic_id, (1, 3, 2), leader_epoch=epoch, partition_epoch=pe), 3
        )
        assert resp.topics[0].partitions[0].error_code == 0
        leader, epoch, isr, ctrl_epoch, _ = await state(zk, "t", 0)
        assert (leader, epoch, sorted(isr), ctrl_epoch) == (2, 4, [2, 3], 2)
        znode = await zk.get_topic_assignment("t")
        assert (znode.partitions, znode.adding, znode.removing) == ({0: (2, 3)}, {}, {})
    finally:
        await cl.stop()


async def _leader_writes_state(
    zk: Any, topic: str, p: int, s: LeaderIsrState, version: int
) -> None:
    """The ZK-direct ISR update of a leader (IBP < 2.7): an unfenced conditional setData."""
    if isinstance(zk, FakeZk):
        assert zk.states[(topic, p)][1] == version
        zk.states[(topic, p)] = (s, version + 1)
        return
    path = f"/brokers/topics/{topic}/partitions/{p}/state"
    await asyncio.to_thread(zk.admin._zk.set, path, s.encode(), version)


async def _async_no_isr_changes(zk: Any) -> bool:
    return not await zk.get_isr_change_notifications()


async def _move_controller(zk: Any, c: KafkaController) -> None:
    """End the (shut down) controller's tenure as ZooKeeper does when its session ends."""
    if isinstance(zk, FakeZk):
        zk.expire_controller()
    else:
        await c.zk.close()


async def _async(value: bool) -> bool:
    return value


async def _has_states(zk: Any, topic: str, n: int) -> bool:
    return len(await zk.get_partition_states(topic)) == n


async def _leader_is(zk: Any, topic: str, p: int, leader: int) -> bool:
    states = await zk.get_partition_states(topic)
    return p in states and states[p][0].leader == leader


async def _async_not_in(zk: Any, topic: str) -> bool:
    return topic not in await zk.get_all_topics()


async def _async_empty_deletes(zk: Any) -> bool:
    return not await zk.get_topics_to_delete()


SCENARIOS = [
    scenario_election_and_create,
    scenario_failures,
    scenario_failover_fencing,
    scenario_alter_partition,
    scenario_controlled_shutdown,
    scenario_topic_deletion,
    scenario_deletion_disabled,
    scenario_unclean,
    scenario_preferred_and_isr_notification,
    scenario_elect_leaders,
    scenario_reassignment,
    scenario_reassignment_resumed_by_new_controller,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__[9:])
def test_controller_with_fake_zk(scenario: Callable[[Any], Awaitable[None]]) -> None:
    run(fake_zk, scenario)


def test_session_expiry_resigns_and_reelects() -> None:
    async def body(zk: Any) -> None:
        cl = Cluster(zk)
        registered: list[int] = []

        async def reregister() -> int:
            registered.append(1)
            cl.epochs[1] = await zk.register_broker(cl.brokers[1].registration())
            return cl.epochs[1]

        cl.reregister[1] = reregister
        await cl.start()
        c = cl.controllers[1]
        try:
            assert c.is_active and c.epoch == 1
            c._on_session_state("LOST")
            zk.expire_controller()
            await cl.settle(c)
            assert registered == []
            # the reelect posted by the /controller watch ran during the expiry: whoever
            # got there first is the controller; with the session back, 1 re-registers
            c._on_session_state("CONNECTED")
            await cl.settle(c)
            assert registered == [1]
            assert c.is_active and c.epoch == 2
        finally:
            await cl.stop()

    run(fake_zk, body)


def test_bounced_broker_is_a_failure_then_a_startup() -> None:
    async def body(zk: Any) -> None:
        cl = Cluster(zk)
        await cl.start()
        c = cl.controllers[1]
        try:
            await zk.create_topic_assignment(new_topic("t", {0: (2, 3)}))
            await wait_for(lambda: _has_states(zk, "t", 1))
            await cl.settle(c)
            before = len(cl.brokers[2].of("LeaderAndIsr"))
            old_epoch = cl.epochs[2]
            cl.epochs[2] = await zk.register_broker(cl.brokers[2].registration())  # new czxid
            assert cl.epochs[2] > old_epoch
            await wait_for(lambda: _leader_is(zk, "t", 0, 3))
            await cl.settle(c)
            assert (await state(zk, "t", 0))[:3] == (3, 1, [3])
            assert c.ctx.broker_epochs[2] == cl.epochs[2]
            lais = cl.brokers[2].of("LeaderAndIsr")[before:]
            assert lais and lais[-1].broker_epoch == cl.epochs[2]
            assert lais[-1].topic_states[0].partition_states[0].leader == 3
        finally:
            await cl.stop()

    run(fake_zk, body)


def test_channel_retries_until_the_broker_answers_in_order() -> None:
    from kafkacore.controller.channel import ControllerChannelManager
    from kafkacore.protocol.messages.update_metadata import UpdateMetadataRequest

    async def body(_: Any) -> None:
        broker = FakeBroker(5)
        await broker.start()
        await broker.stop()  # the port is known but nobody listens yet
        got: list[int] = []
        channel = ControllerChannelManager(TestNodeClient, retry_backoff_s=0.05)
        channel.add_broker(broker.registration())
        try:
            for epoch in (1, 2, 3):
                req = UpdateMetadataRequest(controller_id=1, controller_epoch=epoch, broker_epoch=7)
                channel.send(5, "UpdateMetadata", 8, req, lambda r, e=epoch: got.append(e))
            await asyncio.sleep(0.3)
            assert got == [] and broker.received == []
            await broker.start()
            await wait_for(lambda: _async(len(got) == 3))
            assert got == [1, 2, 3]
            assert [r.controller_epoch for r in broker.of("UpdateMetadata")] == [1, 2, 3]
        finally:
            await channel.shutdown()
            await broker.stop()

    run(fake_zk, body)


def test_alter_partition_old_versions_use_names_and_operation_not_attempted() -> None:
    async def body(zk: Any) -> None:
        cl = Cluster(zk)
        await cl.start()
        c = cl.controllers[1]
        try:
            await zk.create_topic_assignment(new_topic("t", {0: (1, 2, 3)}))
            await wait_for(lambda: _has_states(zk, "t", 1))
            await cl.brokers[3].stop()
            await zk.unregister_broker(3)
            await cl.settle(c)
            s = await state(zk, "t", 0)
            assert s[:3] == (1, 1, [1, 2])
            req = APIS_BY_NAME["AlterPartition"].request.cls

            def alter(isr: list[int]) -> Any:
                return req(
                    broker_id=1,
                    broker_epoch=cl.epochs[1],
                    topics=[
                        req.TopicData(
                            topic_name="t",
                            partitions=[
                                req.PartitionData(
                                    partition_index=0,
                                    leader_epoch=s[1],
                                    new_isr=isr,
                                    partition_epoch=s[4],
                                )
                            ],
                        )
                    ],
                )

            for version in (0, 1):
                resp = await c.alter_partition(alter([1, 2, 3]), version)
                assert resp.topics[0].topic_name == "t"
                assert resp.topics[0].partitions[0].error_code == (
                    ErrorCode.OPERATION_NOT_ATTEMPTED
                )
            resp = await c.alter_partition(alter([1]), 1)
            p = resp.topics[0].partitions[0]
            assert (p.error_code, p.leader_id, p.isr, p.partition_epoch) == (0, 1, [1], s[4] + 1)
            v2 = await c.alter_partition(alter([1, 2]), 2)  # topic_id unset: unknown id
            assert v2.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
        finally:
            await cl.stop()

    run(fake_zk, body)


def test_requests_answer_not_controller_by_their_type() -> None:
    """Each request gets Kafka's NOT_CONTROLLER answer, by its type, from a controller that
    is not running, and from one that learns it moved (a fenced ZooKeeper write) while
    processing the request."""

    async def body(zk: Any) -> None:
        idle = KafkaController(9, zk, config(), TestNodeClient)
        not_controller = int(ErrorCode.NOT_CONTROLLER)
        resp = await idle.alter_partition(APIS_BY_NAME["AlterPartition"].request.cls(), 3)
        assert (resp.error_code, resp.topics) == (not_controller, [])
        assert await idle.controlled_shutdown(1, 5) == (not_controller, [])
        assert await idle.allocate_producer_ids(1, 5) == (not_controller, -1, 0)
        assert await idle.elect_leaders([("t", 0)]) == {("t", 0): (not_controller, None)}
        assert await idle.alter_partition_reassignments({("t", 0): [1]}) == {
            ("t", 0): (not_controller, None)
        }
        assert await idle.list_partition_reassignments() is None

        cl = Cluster(zk)
        await cl.start()
        c = cl.controllers[1]
        try:
            await zk.create_topic_assignment(new_topic("t", {0: (1, 2), 1: (2, 1)}))
            await wait_for(lambda: _has_states(zk, "t", 2))
            # another controller is elected; this one has not seen the watch yet
            zk.controller_epoch_version += 1
            got = await c.alter_partition_reassignments({("t", 0): [2, 1], ("t", 1): None})
            assert got == {("t", 0): (not_controller, None), ("t", 1): (not_controller, None)}
            assert zk.topics["t"][0].partitions[0] == (1, 2)  # the fenced write did nothing
        finally:
            await cl.stop()

    run(fake_zk, body)
