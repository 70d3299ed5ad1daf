"""The controller scenarios of ``test_controller_cluster.py`` on a real ZooKeeper server
(``zk_chroot`` fixture) through :class:`kafkacore.zk.client.KafkaZkClient`: each
simulated broker registers ``/brokers/ids/<id>`` with its own ZooKeeper session (so
stopping it removes the ephemeral node), each controller has its own session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import BrokerRegistration
from test_controller_cluster import (
    SCENARIOS,
    Cluster,
    _has_states,
    _leader_is,
    new_topic,
    run,
    state,
    wait_for,
)


class RealZk:
    """The test's view: an admin session plus one session per broker and controller."""

    def __init__(self, connect: str, admin: KafkaZkClient) -> None:
        self.connect = connect
        self.admin = admin
        self.broker_sessions: dict[int, KafkaZkClient] = {}
        self.sessions: list[KafkaZkClient] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.admin, name)

    async def _session(self) -> KafkaZkClient:
        zk = await KafkaZkClient.connect(self.connect, session_timeout_ms=6000)
        self.sessions.append(zk)
        return zk

    async def session_for_controller(self) -> KafkaZkClient:
        return await self._session()

    async def register_broker(self, info: BrokerRegistration) -> int:
        old = self.broker_sessions.pop(info.id, None)
        if old is not None:
            await old.close()
        zk = await self._session()
        self.broker_sessions[info.id] = zk
        return await zk.register_broker(info)

    async def unregister_broker(self, broker_id: int) -> None:
        await self.broker_sessions.pop(broker_id).close()

    async def close(self) -> None:
        for zk in self.sessions:
            if not zk.closed:
                await zk.close()
        await self.admin.close()


def real(connect: str) -> Callable[[], Awaitable[Any]]:
    async def factory() -> Any:
        return RealZk(connect, await KafkaZkClient.connect(connect, session_timeout_ms=6000))

    return factory


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__[9:])
def test_controller_with_zookeeper(
    zk_chroot: str, scenario: Callable[[Any], Awaitable[None]]
) -> None:
    run(real(zk_chroot), scenario)


def test_znode_json_and_epochs(zk_chroot: str) -> None:
    """The exact znodes Kafka's ControllerIntegrationTest observes: first controller epoch
    1, the partition state JSON, whole ISR offline -> leader -1, epoch 1, isr [last]."""

    async def body(zk: Any) -> None:
        cl = Cluster(zk)
        await cl.start()
        try:
            raw = zk.admin._zk  # kazoo, for the raw bytes
            data, _ = await asyncio.to_thread(raw.get, "/controller_epoch")
            assert data == b"1"
            data, _ = await asyncio.to_thread(raw.get, "/controller")
            ctrl = json.loads(data)
            assert ctrl["brokerid"] == 1 and isinstance(ctrl["timestamp"], str)
            await zk.create_topic_assignment(new_topic("t", {0: (2,)}))
            await wait_for(lambda: _has_states(zk, "t", 1))
            data, stat = await asyncio.to_thread(raw.get, "/brokers/topics/t/partitions/0/state")
            assert json.loads(data) == {
                "controller_epoch": 1,
                "leader": 2,
                "version": 1,
                "leader_epoch": 0,
                "isr": [2],
            }
            assert stat.version == 0
            await cl.brokers[2].stop()
            await zk.unregister_broker(2)
            await wait_for(lambda: _leader_is(zk, "t", 0, -1))
            data, stat = await asyncio.to_thread(raw.get, "/brokers/topics/t/partitions/0/state")
            assert json.loads(data) == {
                "controller_epoch": 1,
                "leader": -1,
                "version": 1,
                "leader_epoch": 1,
                "isr": [2],
            }
            assert await state(zk, "t", 0) == (-1, 1, [2], 1, 1)
            # a controller restart increments /controller_epoch
            c = cl.controllers[1]
            await c.shutdown()
            await c.zk.close()
            cl.controllers[1] = c2 = type(c)(
                1, await zk.session_for_controller(), c.config, c._client_factory
            )
            await c2.startup()
            await wait_for(lambda: _is_active(c2))
            assert c2.epoch == 2
            data, _ = await asyncio.to_thread(raw.get, "/controller_epoch")
            assert data == b"2"
        finally:
            await cl.stop()

    run(real(zk_chroot), body)


async def _is_active(c: Any) -> bool:
    await c.wait_idle()
    return bool(c.is_active)
