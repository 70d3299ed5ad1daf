"""KafkaZkClient against a real ZooKeeper server (tests/support/zookeeper.py), each test
in its own chroot. Raw reads go through a plain kazoo client so we check what is really
in ZooKeeper, not what our client thinks."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from kazoo.client import KazooClient

from kafkacore.zk.client import ControllerMovedError, KafkaZkClient
from kafkacore.zk.data import (
    PERSISTENT_ZK_PATHS,
    BrokerRegistration,
    Endpoint,
    LeaderIsrState,
    TopicAssignment,
    topic_id_to_string,
)
from kafkacore.zk.errors import (
    BadVersionError,
    NodeExistsError,
    TopicAlreadyMarkedForDeletion,
    TopicExistsError,
)

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


@pytest.fixture
def raw(zk_chroot: str) -> Iterator[KazooClient]:
    """A plain kazoo client on the test's chroot (created by the first KafkaZkClient)."""
    zk = KazooClient(hosts=zk_chroot.split("/", 1)[0])
    zk.start(timeout=15)
    chroot = "/" + zk_chroot.split("/", 1)[1]
    zk.ensure_path(chroot)
    zk.stop()
    zk.close()
    zk = KazooClient(hosts=zk_chroot)
    zk.start(timeout=15)
    yield zk
    zk.stop()
    zk.close()


def broker(broker_id: int, port: int = 9092, rack: str | None = None) -> BrokerRegistration:
    return BrokerRegistration(
        id=broker_id,
        endpoints=(Endpoint("PLAINTEXT", "127.0.0.1", port + broker_id, "PLAINTEXT"),),
        rack=rack,
    )


async def wait_for(event: asyncio.Event, what: str, timeout: float = 10) -> None:
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except asyncio.TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def on_loop_setter(event: asyncio.Event, calls: list[int]) -> Callable[[], None]:
    """A watch that records that it ran on the loop thread."""
    loop_thread = threading.get_ident()

    def watch() -> None:
        calls.append(int(threading.get_ident() == loop_thread))
        event.set()

    return watch


def test_connect_creates_chroot_and_persistent_paths(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> int:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            return zk.session_id

    session = run(main())
    assert session != 0
    for path in PERSISTENT_ZK_PATHS:
        assert raw.exists(path) is not None, path
    # Nothing leaked outside the chroot: the root has no /brokers of ours.
    host = zk_chroot.split("/", 1)[0]
    root = KazooClient(hosts=host)
    root.start(timeout=15)
    try:
        chroot_name = zk_chroot.split("/", 1)[1]
        assert root.exists(f"/{chroot_name}/brokers/ids")
        assert root.exists("/brokers/ids") is None or chroot_name not in root.get_children("/")
    finally:
        root.stop()
        root.close()


def test_nested_chroot(zookeeper: Any) -> None:
    connect = f"{zookeeper.connect_string}/nest-{uuid.uuid4().hex[:8]}/kafka"

    async def main() -> list[str]:
        async with await KafkaZkClient.connect(connect) as zk:
            await zk.get_or_create_cluster_id("c1")
        return []

    run(main())
    root = KazooClient(hosts=zookeeper.connect_string)
    root.start(timeout=15)
    try:
        data, _ = root.get(connect.split("/", 1)[1].join(["/", "/cluster/id"]))
        assert json.loads(data) == {"version": "1", "id": "c1"}
    finally:
        root.stop()
        root.close()


def test_cluster_id_created_once(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> tuple[str, str]:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            first = await zk.get_or_create_cluster_id("first-id")
            second = await zk.get_or_create_cluster_id("other-id")
            return first, second

    assert run(main()) == ("first-id", "first-id")
    assert raw.get("/cluster/id")[0] == b'{"version":"1","id":"first-id"}'


def test_register_broker_epoch_is_czxid_and_node_is_ephemeral(
    zk_chroot: str, raw: KazooClient
) -> None:
    async def main() -> tuple[int, int, dict[int, tuple[BrokerRegistration, int]]]:
        zk = await KafkaZkClient.connect(zk_chroot, session_timeout_ms=6000)
        epoch = await zk.register_broker(broker(1, rack="r1"))
        # Registering again in the same session is accepted (same node, same epoch).
        again = await zk.register_broker(broker(1, rack="r1"))
        await zk.register_broker(broker(2))
        brokers = await zk.get_all_brokers()
        await zk.close()
        return epoch, again, brokers

    epoch, again, brokers = run(main())
    assert epoch == again and epoch > 0
    assert sorted(brokers) == [1, 2]
    reg, czxid = brokers[1]
    assert czxid == epoch and reg.rack == "r1"
    assert reg.endpoints == (Endpoint("PLAINTEXT", "127.0.0.1", 9093, "PLAINTEXT"),)
    # The session closed: both ephemeral registrations are gone.
    assert raw.get_children("/brokers/ids") == []


def test_register_broker_refused_while_another_session_holds_it(
    zk_chroot: str, raw: KazooClient
) -> None:
    async def main() -> None:
        async with (
            await KafkaZkClient.connect(zk_chroot) as a,
            await KafkaZkClient.connect(zk_chroot) as b,
        ):
            await a.register_broker(broker(1))
            with pytest.raises(NodeExistsError):
                await b.register_broker(broker(1))
            data, stat = raw.get("/brokers/ids/1")
            assert stat.ephemeralOwner == a.session_id
            assert json.loads(data)["version"] == 5
            await a.close()
            # Once a's session is gone, b can take the id (a new broker epoch).
            epoch = await b.register_broker(broker(1))
            assert raw.get("/brokers/ids/1")[1].czxid == epoch

    run(main())


def test_broker_ids_child_watch_fires_on_the_loop(zk_chroot: str) -> None:
    async def main() -> list[int]:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            fired = asyncio.Event()
            calls: list[int] = []
            assert await zk.get_broker_ids(on_loop_setter(fired, calls)) == []
            other = await KafkaZkClient.connect(zk_chroot)
            await other.register_broker(broker(3))
            await wait_for(fired, "the /brokers/ids child watch (join)")
            assert await zk.get_broker_ids() == [3]
            # Re-armed: a departure (session closed) fires it again.
            fired.clear()
            assert await zk.get_broker_ids(on_loop_setter(fired, calls)) == [3]
            await other.close()
            await wait_for(fired, "the /brokers/ids child watch (leave)")
            assert await zk.get_broker_ids() == []
            return calls

    assert run(main()) == [1, 1]


def test_controller_election_epochs_and_watch(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> None:
        a = await KafkaZkClient.connect(zk_chroot)
        b = await KafkaZkClient.connect(zk_chroot)
        try:
            assert await a.get_controller_id() is None
            assert await a.get_controller_epoch() is None
            epoch, version = await a.register_controller_and_increment_epoch(1)
            assert (epoch, version) == (1, 1)  # created as 0 at version 0, then set to 1
            assert raw.get("/controller_epoch")[0] == b"1"
            data, stat = raw.get("/controller")
            js = json.loads(data)
            assert js["version"] == 1 and js["brokerid"] == 1
            assert isinstance(js["timestamp"], str) and stat.ephemeralOwner == a.session_id
            assert await a.get_controller_epoch() == (1, 1)
            # b loses while a holds /controller.
            with pytest.raises(ControllerMovedError):
                await b.register_controller_and_increment_epoch(2)
            assert await b.get_controller_id() == 1
            # b watches /controller; a resigns (fenced delete) and the watch fires.
            changed = asyncio.Event()
            calls: list[int] = []
            assert await b.get_controller_id(on_loop_setter(changed, calls)) == 1
            await a.delete_controller(version)
            await wait_for(changed, "the /controller watch")
            assert calls == [1]
            assert await b.get_controller_id() is None
            assert await b.register_controller_and_increment_epoch(2) == (2, 2)
            # The exists watch also fires on creation.
            created = asyncio.Event()
            await b.delete_controller(2)
            assert await a.get_controller_id(on_loop_setter(created, [])) is None
            assert await a.register_controller_and_increment_epoch(1) == (3, 3)
            await wait_for(created, "the /controller creation watch")
        finally:
            await a.close()
            await b.close()

    run(main())


def test_controller_node_goes_with_its_session(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> None:
        a = await KafkaZkClient.connect(zk_chroot)
        await a.register_controller_and_increment_epoch(5)
        await a.close()

    run(main())
    assert raw.exists("/controller") is None
    assert raw.get("/controller_epoch")[0] == b"1"


def assignment(topic: str = "t", n: int = 3) -> TopicAssignment:
    return TopicAssignment(
        topic,
        {p: tuple((p + i) % 3 for i in range(3)) for p in range(n)},
        topic_id=uuid.uuid4(),
    )


def test_topic_assignment_create_get_set_and_watch(zk_chroot: str, raw: KazooClient) -> None:
    a = assignment()

    async def main() -> None:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            topics_changed = asyncio.Event()
            assert await zk.get_all_topics(on_loop_setter(topics_changed, [])) == []
            await zk.create_topic_assignment(a)
            await wait_for(topics_changed, "the /brokers/topics child watch")
            with pytest.raises(TopicExistsError):
                await zk.create_topic_assignment(a)
            assert await zk.get_all_topics() == ["t"]
            assert await zk.topic_exists("t") and not await zk.topic_exists("u")
            assert await zk.get_topic_assignment("u") is None
            modified = asyncio.Event()
            got = await zk.get_topic_assignment("t", on_loop_setter(modified, []))
            assert got == a
            _, version = await zk.register_controller_and_increment_epoch(0)
            moved = TopicAssignment(
                "t", {**a.partitions, 0: (0, 1, 2, 3)}, adding={0: (3,)}, topic_id=a.topic_id
            )
            await zk.set_topic_assignment(moved, controller_epoch_zk_version=version)
            await wait_for(modified, "the topic data watch")
            assert await zk.get_topic_assignment("t") == moved
            # Unfenced admin write with an expected version (it is at version 1 now).
            with pytest.raises(BadVersionError):
                await zk.set_topic_assignment(
                    a, controller_epoch_zk_version=None, expected_version=0
                )
            await zk.set_topic_assignment(a, controller_epoch_zk_version=None, expected_version=1)
            # A stale controller epoch zkVersion is refused.
            with pytest.raises(ControllerMovedError):
                await zk.set_topic_assignment(moved, controller_epoch_zk_version=version - 1)
            assert await zk.get_topic_assignment("t") == a

    run(main())
    js = json.loads(raw.get("/brokers/topics/t")[0])
    assert js["version"] == 3 and js["topic_id"] == topic_id_to_string(
        a.topic_id or uuid.UUID(int=0)
    )
    assert js["partitions"] == {"0": [0, 1, 2], "1": [1, 2, 0], "2": [2, 0, 1]}


def test_partition_states_create_cas_and_fencing(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> None:
        async with (
            await KafkaZkClient.connect(zk_chroot) as zk,
            await KafkaZkClient.connect(zk_chroot) as other,
        ):
            await zk.create_topic_assignment(assignment())
            epoch, v = await zk.register_controller_and_increment_epoch(0)
            states = {p: LeaderIsrState(p, 0, (p, (p + 1) % 3), epoch) for p in range(3)}
            assert await zk.create_partition_states("t", states, controller_epoch_zk_version=v) == {
                0: 0,
                1: 0,
                2: 0,
            }
            with pytest.raises(NodeExistsError):
                await zk.create_partition_states("t", {0: states[0]}, controller_epoch_zk_version=v)
            got = await zk.get_partition_states("t")
            assert got == {p: (s, 0) for p, s in states.items()}
            # CAS on the partition epoch (zkVersion).
            shrunk = LeaderIsrState(0, 0, (0,), epoch)
            assert (
                await zk.update_partition_state(
                    "t", 0, shrunk, expected_version=0, controller_epoch_zk_version=v
                )
                == 1
            )
            assert (
                await zk.update_partition_state(
                    "t", 0, states[0], expected_version=0, controller_epoch_zk_version=v
                )
                is None
            )
            assert await zk.get_partition_state("t", 0) == (shrunk, 1)
            # Another controller is elected (zk's session still has /controller? no: it
            # resigns first), so zk's epoch zkVersion is stale: every write is refused.
            await zk.delete_controller(v)
            new_epoch, new_v = await other.register_controller_and_increment_epoch(1)
            assert (new_epoch, new_v) == (epoch + 1, v + 1)
            stale = LeaderIsrState(1, 1, (1,), epoch)
            with pytest.raises(ControllerMovedError):
                await zk.update_partition_state(
                    "t", 0, stale, expected_version=1, controller_epoch_zk_version=v
                )
            with pytest.raises(ControllerMovedError):
                await zk.create_partition_states("t", {5: stale}, controller_epoch_zk_version=v)
            with pytest.raises(ControllerMovedError):
                await zk.delete_topic_nodes("t", controller_epoch_zk_version=v)
            with pytest.raises(ControllerMovedError):
                await zk.delete_controller(v)
            assert await other.get_controller_id() == 1
            # Nothing of the stale writes landed.
            assert await zk.get_partition_state("t", 0) == (shrunk, 1)
            assert await zk.get_partition_state("t", 5) is None
            # The new controller's write goes through.
            newer = LeaderIsrState(1, 1, (1, 0), new_epoch)
            assert (
                await other.update_partition_state(
                    "t", 0, newer, expected_version=1, controller_epoch_zk_version=new_v
                )
                == 2
            )

    run(main())
    assert json.loads(raw.get("/brokers/topics/t/partitions/0/state")[0]) == {
        "controller_epoch": 2,
        "leader": 1,
        "version": 1,
        "leader_epoch": 1,
        "isr": [1, 0],
    }
    assert raw.get("/brokers/topics/t/partitions")[0] == b""


def test_topic_deletion_nodes(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> None:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            await zk.create_topic_assignment(assignment())
            _, v = await zk.register_controller_and_increment_epoch(0)
            await zk.create_partition_states(
                "t",
                {p: LeaderIsrState(0, 0, (0,), 1) for p in range(3)},
                controller_epoch_zk_version=v,
            )
            await zk.set_entity_config("topics", "t", {"retention.ms": "5"})
            marked = asyncio.Event()
            assert await zk.get_topics_to_delete(on_loop_setter(marked, [])) == []
            await zk.mark_topic_for_deletion("t")
            await wait_for(marked, "the /admin/delete_topics watch")
            with pytest.raises(TopicAlreadyMarkedForDeletion):
                await zk.mark_topic_for_deletion("t")
            assert await zk.get_topics_to_delete() == ["t"]
            await zk.delete_topic_nodes("t", controller_epoch_zk_version=v)
            assert await zk.get_all_topics() == []
            assert await zk.get_topics_to_delete() == []
            assert await zk.get_entity_config("topics", "t") == {}
            # Idempotent; and the deletion node alone can be removed too.
            await zk.delete_topic_nodes("t", controller_epoch_zk_version=v)
            await zk.mark_topic_for_deletion("gone")
            await zk.delete_topic_deletion_node("gone", controller_epoch_zk_version=v)
            assert await zk.get_topics_to_delete() == []

    run(main())
    assert raw.exists("/brokers/topics/t") is None
    assert raw.exists("/config/topics/t") is None
    assert raw.get_children("/admin/delete_topics") == []


def test_entity_config_and_change_notifications(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> None:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            assert await zk.get_entity_config("topics", "t") == {}
            changed = asyncio.Event()
            assert await zk.get_config_changes(on_loop_setter(changed, [])) == []
            await zk.set_entity_config("topics", "t", {"cleanup.policy": "compact"})
            await wait_for(changed, "the /config/changes watch")
            await zk.set_entity_config("topics", "t", {"retention.ms": "10"})
            await zk.set_entity_config("brokers", "<default>", {"log.cleaner.threads": "2"})
            assert await zk.get_entity_config("topics", "t") == {"retention.ms": "10"}
            assert await zk.get_entity_config("brokers", "<default>") == {
                "log.cleaner.threads": "2"
            }
            names = await zk.get_config_changes()
            assert names == [
                "config_change_0000000000",
                "config_change_0000000001",
                "config_change_0000000002",
            ]
            paths = [await zk.get_config_change(n) for n in names]
            assert paths == ["topics/t", "topics/t", "brokers/<default>"]
            assert await zk.get_config_change("config_change_9999999999") is None

    run(main())
    assert raw.get("/config/topics/t")[0] == b'{"version":1,"config":{"retention.ms":"10"}}'
    assert raw.get("/config/changes/config_change_0000000002")[0] == (
        b'{"version":2,"entity_path":"brokers/<default>"}'
    )


def test_isr_change_notifications(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> None:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            _, v = await zk.register_controller_and_increment_epoch(0)
            fired = asyncio.Event()
            assert await zk.get_isr_change_notifications(on_loop_setter(fired, [])) == []
            await zk.create_isr_change_notification([("t", 0), ("t", 1)])
            await wait_for(fired, "the /isr_change_notification watch")
            await zk.create_isr_change_notification([("u", 2)])
            names = await zk.get_isr_change_notifications()
            assert names == ["isr_change_0000000000", "isr_change_0000000001"]
            assert await zk.get_isr_change_partitions(names) == [("t", 0), ("t", 1), ("u", 2)]
            assert json.loads(raw.get(f"/isr_change_notification/{names[0]}")[0]) == {
                "version": 1,
                "partitions": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}],
            }
            await zk.delete_isr_change_notifications(names, controller_epoch_zk_version=v)
            assert await zk.get_isr_change_notifications() == []

    run(main())


def test_producer_id_blocks_are_disjoint_under_contention(zk_chroot: str, raw: KazooClient) -> None:
    async def main() -> list[tuple[int, int]]:
        clients = [await KafkaZkClient.connect(zk_chroot) for _ in range(3)]
        try:
            jobs: list[Awaitable[tuple[int, int]]] = [
                c.allocate_producer_id_block(i) for i, c in enumerate(clients) for _ in range(4)
            ]
            return list(await asyncio.gather(*jobs))
        finally:
            for c in clients:
                await c.close()

    blocks = sorted(run(main()))
    assert blocks == [(i * 1000, i * 1000 + 999) for i in range(12)]
    js = json.loads(raw.get("/latest_producer_id_block")[0])
    assert js["block_start"] == "11000" and js["block_end"] == "11999" and js["version"] == 1


def test_session_listener_and_close(zk_chroot: str) -> None:
    async def main() -> list[str]:
        zk = await KafkaZkClient.connect(zk_chroot)
        states: list[str] = []
        zk.add_session_listener(states.append)
        await zk.close()
        await asyncio.sleep(0.2)
        assert zk.closed
        return states

    # Closing is not reported as a loss to the owner (it asked for it).
    assert run(main()) == []


def expire_session(connect: str, zk: KafkaZkClient) -> None:
    """End ``zk``'s session from outside: a second connection with the same session id
    and password closes it (ZooKeeper's usual way to expire a session in tests)."""
    clone = KazooClient(hosts=connect, client_id=zk._zk.client_id)
    clone.start(timeout=15)
    clone.stop()
    clone.close()


def test_session_expiry_is_reported_and_ephemerals_vanish(zk_chroot: str) -> None:
    """The listener sees LOST (session expired) then CONNECTED (kazoo's new session); the
    old registration and /controller are gone and the broker registers again with a new
    epoch (czxid)."""

    async def main() -> None:
        async with await KafkaZkClient.connect(zk_chroot, session_timeout_ms=4000) as zk:
            states: list[str] = []
            reconnected = asyncio.Event()

            def listener(state: str) -> None:
                states.append(state)
                if state == "CONNECTED" and "LOST" in states:
                    reconnected.set()

            zk.add_session_listener(listener)
            first_session = zk.session_id
            epoch = await zk.register_broker(broker(1))
            await zk.register_controller_and_increment_epoch(1)
            watch_fired: list[int] = []
            await zk.get_broker_ids(lambda: watch_fired.append(1))
            await asyncio.to_thread(expire_session, zk_chroot, zk)
            await wait_for(reconnected, "a new session", timeout=30)
            assert "LOST" in states
            assert zk.session_id not in (0, first_session)
            assert await zk.get_broker_ids() == []
            assert await zk.get_controller_id() is None
            # Session events are not delivered to node watches.
            assert watch_fired == []
            assert await zk.register_broker(broker(1)) > epoch
            assert await zk.get_broker_ids() == [1]

    run(main())


def test_session_survives_a_server_restart(tmp_path: Any) -> None:
    """A ZooKeeper crash shorter than the session timeout: SUSPENDED then CONNECTED on
    the same session; the ephemeral registration is still ours and calls made while
    the server is down complete once it is back.

    The session timeout is the server's maximum, 60 s: the server restarts its sessions'
    clocks when it loads its database, before it answers, and a restart under a loaded CI
    machine once stalled past a 20-s session (kazoo's connect timed out, then "Session has
    expired")."""
    from support.zookeeper import ZooKeeperServer

    server = ZooKeeperServer(tmp_path / "zk", max_session_timeout_ms=60000).start()
    try:

        async def main() -> None:
            async with await KafkaZkClient.connect(
                server.connect_string, session_timeout_ms=60000
            ) as zk:
                states: list[str] = []
                zk.add_session_listener(states.append)
                session = zk.session_id
                epoch = await zk.register_broker(broker(1))
                await asyncio.to_thread(server.kill)
                pending = asyncio.ensure_future(zk.get_broker_ids())
                await asyncio.sleep(0.5)
                await asyncio.to_thread(server.start)
                assert await asyncio.wait_for(pending, 90) == [1]
                assert zk.session_id == session
                assert await zk.register_broker(broker(1)) == epoch
                assert "SUSPENDED" in states and states[-1] == "CONNECTED", states
                assert "LOST" not in states, states

        run(main(), timeout=150)
    finally:
        server.stop()


def test_log_dir_events_preferred_election_and_reassignment_nodes(
    zk_chroot: str, raw: KazooClient
) -> None:
    async def main() -> None:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            _, v = await zk.register_controller_and_increment_epoch(0)
            # Log dir failure notifications.
            fired = asyncio.Event()
            assert await zk.get_log_dir_event_notifications(on_loop_setter(fired, [])) == []
            await zk.create_log_dir_event_notification(2)
            await wait_for(fired, "the /log_dir_event_notification watch")
            names = await zk.get_log_dir_event_notifications()
            assert names == ["log_dir_event_0000000000"]
            assert await zk.get_log_dir_event_brokers(names) == [2]
            assert raw.get(f"/log_dir_event_notification/{names[0]}")[0] == (
                b'{"version":1,"broker":2,"event":1}'
            )
            await zk.delete_log_dir_event_notifications(names, controller_epoch_zk_version=v)
            assert await zk.get_log_dir_event_notifications() == []
            # Preferred replica election node: exists watch, one pending at a time.
            created = asyncio.Event()
            assert await zk.get_preferred_replica_election(on_loop_setter(created, [])) is None
            await zk.create_preferred_replica_election([("t", 0), ("t", 1)])
            await wait_for(created, "the preferred election watch")
            with pytest.raises(NodeExistsError):
                await zk.create_preferred_replica_election([("t", 2)])
            assert await zk.get_preferred_replica_election() == [("t", 0), ("t", 1)]
            with pytest.raises(ControllerMovedError):
                await zk.delete_preferred_replica_election(controller_epoch_zk_version=v + 1)
            await zk.delete_preferred_replica_election(controller_epoch_zk_version=v)
            assert await zk.get_preferred_replica_election() is None
            # Legacy reassignment node, as kafka-reassign-partitions --zookeeper wrote it.
            raw.create(
                "/admin/reassign_partitions",
                b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[4,5]},'
                b'{"topic":"t","partition":1,"replicas":[5,6]}]}',
            )
            changed = asyncio.Event()
            got = await zk.get_partition_reassignment(on_loop_setter(changed, []))
            assert got == {("t", 0): (4, 5), ("t", 1): (5, 6)}
            await zk.set_partition_reassignment({("t", 1): (5, 6)}, controller_epoch_zk_version=v)
            await wait_for(changed, "the reassignment watch")
            assert await zk.get_partition_reassignment() == {("t", 1): (5, 6)}
            await zk.set_partition_reassignment({}, controller_epoch_zk_version=v)
            assert await zk.get_partition_reassignment() is None

    run(main())


def test_registration_left_by_an_earlier_session_of_this_client_is_replaced(
    zk_chroot: str, raw: KazooClient
) -> None:
    """KAFKA-7165 / ZOOKEEPER-2985: a registration still owned by this client's earlier
    session is deleted and created again with the current one; one owned by a stranger
    is refused."""

    async def main() -> None:
        async with (
            await KafkaZkClient.connect(zk_chroot) as zk,
            await KafkaZkClient.connect(zk_chroot) as earlier,
        ):
            first = await earlier.register_broker(broker(1))
            with pytest.raises(NodeExistsError):
                await zk.register_broker(broker(1))
            # Pretend `earlier` was this client's previous session (white box: the
            # session id Kafka remembers as currentZooKeeperSessionId).
            zk._ephemeral_session_id = earlier.session_id
            second = await zk.register_broker(broker(1))
            assert second > first
            assert raw.get("/brokers/ids/1")[1].ephemeralOwner == zk.session_id

    run(main())
