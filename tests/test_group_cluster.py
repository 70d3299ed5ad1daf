"""The group coordinator in a cluster (Kafka's ``onElection``/``onResignation``): it serves
the groups of the ``__consumer_offsets`` partitions it was elected for, once loaded;
COORDINATOR_LOAD_IN_PROGRESS while a partition loads, NOT_COORDINATOR elsewhere (each API
as Kafka 3.9 answers); a resignation drops the partition's groups and answers waiting
members NOT_COORDINATOR; a re-election reloads the committed offsets. A single node is
the replication-factor-1 case: ``load()`` elects it for every partition it leads.
FindCoordinator in a cluster answers the partition's leader from the metadata cache, and
``__consumer_offsets`` gets ``offsets.topic.replication.factor`` replicas over the live
brokers (too few brokers: no topic, COORDINATOR_NOT_AVAILABLE)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kafkacore.config import BrokerConfig
from kafkacore.log import LogManager, TopicPartition
from kafkacore.metadata import BrokerInfo, EmbeddedMetadataStore, MetadataCache
from kafkacore.metadata.store import PartitionState, TopicMetadata
from kafkacore.placement import InvalidReplicationFactorError
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.server import KafkaServer
from kafkacore.server.coordinator_writer import CoordinatorPartitionWriter
from kafkacore.server.group.coordinator import GroupCoordinator
from kafkacore.server.group.offsets import OFFSETS_TOPIC, offsets_topic
from kafkacore.server.handlers.cluster import handle_find_coordinator
from kafkacore.server.replica_manager import ReplicaManager
from support.raw_client import OneShotClient, run_broker

pytestmark = pytest.mark.timeout(60)

PROPS: dict[str, Any] = {
    "node.id": 1,
    "offsets.topic.num.partitions": 3,
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 100,
}


class Node:
    """A real replica manager and log manager on a tmp dir (one node leading every
    partition, as the embedded store assigns them), with a one-thread I/O executor that
    a test can hold (:meth:`hold`) to keep a load under way."""

    def __init__(self, tmp_path: Path, **props: Any) -> None:
        self.config = BrokerConfig({"log.dirs": str(tmp_path / "logs"), **PROPS, **props})
        (tmp_path / "meta").mkdir(exist_ok=True)
        self.store = EmbeddedMetadataStore(tmp_path / "meta", 1)
        self.logs = LogManager(
            broker_config=self.config, cluster_id=self.store.cluster_id, node_id=1, progress=None
        )
        self.logs.startup()
        self.cache = MetadataCache(controller_id=1)
        self.executor = ThreadPoolExecutor(max_workers=1)
        self.replicas = ReplicaManager(
            lambda: self.config, self.logs, self.store, self.cache, 1, self.executor
        )
        self.store.add_listener(self.replicas)
        self.cache.follow(self.store, ("1", "default"))
        self.replicas.load()
        if not self.cache.contains_topic("t"):
            self.replicas.ensure_topic("t", 2)
        # elections come for existing partitions
        offsets_topic(
            CoordinatorPartitionWriter(self.replicas), self.config, False
        ).ensure_created()

    def coordinator(self, *, cluster_mode: bool) -> GroupCoordinator:
        return GroupCoordinator(
            self.config, self.replicas, io_executor=self.executor, cluster_mode=cluster_mode
        )

    def hold(self) -> threading.Event:
        """Block the I/O thread until the returned event is set."""
        gate = threading.Event()
        self.executor.submit(gate.wait, 10)
        return gate

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        self.logs.shutdown()


def run(tmp_path: Path, scenario: Callable[[Node], Awaitable[None]], **props: Any) -> None:
    node = Node(tmp_path, **props)
    try:
        asyncio.run(scenario(node))
    finally:
        node.close()


def group_on(coordinator: GroupCoordinator, partition: int, prefix: str = "g") -> str:
    """A group id whose ``__consumer_offsets`` partition is ``partition``."""
    n = 0
    while coordinator.topic.partition_for(f"{prefix}{n}") != partition:
        n += 1
    return f"{prefix}{n}"


async def loaded(coordinator: GroupCoordinator) -> None:
    deadline = time.monotonic() + 10
    while coordinator.loading:
        assert time.monotonic() < deadline, "the load did not finish"
        await asyncio.sleep(0.01)


async def until(check: Callable[[], bool], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def codes(answer: list[tuple[str, list[tuple[int, int]]]]) -> list[int]:
    return [code for _, partitions in answer for _, code in partitions]


async def commit(coordinator: GroupCoordinator, group: str, offset: int, part: int = 0) -> int:
    answer = await coordinator.commit(group, -1, "", None, [("t", part, offset, -1, "m")])
    [code] = codes(answer)
    return code


async def join(coordinator: GroupCoordinator, group: str, member: str = "") -> Any:
    return await coordinator.join(
        version=3,
        group_id=group,
        member_id=member,
        instance_id=None,
        client_id="c",
        client_host="/127.0.0.1",
        session_timeout=10_000,
        rebalance_timeout=10_000,
        protocol_type="consumer",
        protocols=[("range", b"sub")],
    )


# -- elections and resignations on the coordinator ------------------------------------------


def test_single_node_load_elects_every_led_partition_synchronously(tmp_path: Path) -> None:
    async def write(node: Node) -> None:
        writer = node.coordinator(cluster_mode=False)
        assert writer.coordinator_error("a") == ErrorCode.NONE  # a single node owns every group
        assert await commit(writer, "a", 5) == ErrorCode.NONE
        assert await commit(writer, "b", 7, part=1) == ErrorCode.NONE
        await writer.stop()

    async def restart(node: Node) -> None:
        c = node.coordinator(cluster_mode=False)
        c.load()
        assert not c.loading  # no COORDINATOR_LOAD_IN_PROGRESS window
        assert c.owned_partitions() == {0, 1, 2}
        assert c.fetch("a")[("t", 0)].offset == 5 and c.fetch("b")[("t", 1)].offset == 7
        assert c.coordinator_error("a") == ErrorCode.NONE
        await c.stop()

    run(tmp_path, write)
    run(tmp_path, restart)


def test_cluster_coordinator_owns_nothing_until_elected(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        writer = node.coordinator(cluster_mode=False)
        assert await commit(writer, "g", 5) == ErrorCode.NONE
        c = node.coordinator(cluster_mode=True)
        assert c.owned_partitions() == set()
        assert c.coordinator_error("g") == ErrorCode.NOT_COORDINATOR
        assert (await join(c, "g")).error_code == ErrorCode.NOT_COORDINATOR
        assert await commit(c, "g", 6) == ErrorCode.NOT_COORDINATOR
        assert "g" not in c.groups  # nothing loaded, nothing created

    run(tmp_path, scenario)


def test_on_elected_loads_the_partition_and_answers_load_in_progress_meanwhile(
    tmp_path: Path,
) -> None:
    async def scenario(node: Node) -> None:
        writer = node.coordinator(cluster_mode=False)
        p = writer.topic.partition_for("g")
        other = group_on(writer, (p + 1) % 3, "o")
        assert await commit(writer, "g", 5) == ErrorCode.NONE
        assert await commit(writer, "g", 9, part=1) == ErrorCode.NONE
        assert await commit(writer, other, 3) == ErrorCode.NONE

        c = node.coordinator(cluster_mode=True)
        gate = node.hold()
        c.on_elected(p, 4)
        assert c.loading
        assert c.coordinator_error("g") == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert c.coordinator_error(other) == ErrorCode.NOT_COORDINATOR  # not elected for it
        # each API as Kafka 3.9's GroupCoordinator answers while the group loads
        assert (await join(c, "g")).error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        sync = await c.sync("g", 1, "m", None, "consumer", "range", {})
        assert sync[0] == ErrorCode.REBALANCE_IN_PROGRESS  # rejoin without rediscovery
        assert await c.heartbeat("g", 1, "m", None) == ErrorCode.NONE  # answered blindly
        assert await c.leave("g", [("m", None)]) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [])
        assert await commit(c, "g", 6) == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert await c.delete_group("g") == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert await c.delete_offsets("g", [("t", 0)]) == (
            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
            [],
        )
        gate.set()
        await loaded(c)
        assert c.owned_partitions() == {p}
        assert c.coordinator_error("g") == ErrorCode.NONE
        offsets = c.fetch("g")
        assert {tp: o.offset for tp, o in offsets.items()} == {("t", 0): 5, ("t", 1): 9}
        assert other not in c.groups  # another partition's group stays unloaded
        assert await commit(c, "g", 6) == ErrorCode.NONE
        assert c.fetch("g")[("t", 0)].offset == 6
        await c.stop()

    run(tmp_path, scenario)


def test_on_resigned_drops_the_groups_and_answers_waiting_members(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        c = node.coordinator(cluster_mode=True)
        p = c.topic.partition_for("g")
        kept = group_on(c, (p + 1) % 3, "k")
        c.on_elected(p, 1)
        c.on_elected((p + 1) % 3, 1)
        await loaded(c)
        assert await commit(c, "g", 5) == ErrorCode.NONE
        assert await commit(c, kept, 8) == ErrorCode.NONE
        # a join waits in PreparingRebalance for the initial delay
        waiting = asyncio.create_task(join(c, "g"))
        await until(lambda: "g" in c.groups and c.groups["g"].state == "PreparingRebalance")
        assert not waiting.done()
        rebalance = c.groups["g"].rebalance

        c.on_resigned(p, 2)
        result = await asyncio.wait_for(waiting, 2)
        assert result.error_code == ErrorCode.NOT_COORDINATOR
        assert "g" not in c.groups and kept in c.groups
        assert rebalance is not None and rebalance.cancelled()
        assert c.owned_partitions() == {(p + 1) % 3}
        assert c.coordinator_error("g") == ErrorCode.NOT_COORDINATOR
        assert (await join(c, "g")).error_code == ErrorCode.NOT_COORDINATOR
        assert await c.sync("g", 1, "m", None, None, None, {}) == (
            ErrorCode.NOT_COORDINATOR,
            None,
            None,
            b"",
        )
        assert await c.heartbeat("g", 1, "m", None) == ErrorCode.NOT_COORDINATOR
        assert await c.leave("g", [("m", None)]) == (ErrorCode.NOT_COORDINATOR, [])
        assert await commit(c, "g", 6) == ErrorCode.NOT_COORDINATOR
        assert await c.delete_group("g") == ErrorCode.NOT_COORDINATOR
        assert await c.delete_offsets("g", [("t", 0)]) == (ErrorCode.NOT_COORDINATOR, [])
        assert c.fetch(kept)[("t", 0)].offset == 8  # the other partition is still served
        await c.stop()

    # a join waits in PreparingRebalance for the initial delay
    run(tmp_path, scenario, **{"group.initial.rebalance.delay.ms": 5000})


def test_re_election_reloads_the_committed_offsets(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        c = node.coordinator(cluster_mode=True)
        p = c.topic.partition_for("g")
        c.on_elected(p, 1)
        await loaded(c)
        assert await commit(c, "g", 5) == ErrorCode.NONE
        assert await commit(c, "g", 11, part=1) == ErrorCode.NONE
        c.on_resigned(p, 2)
        assert c.fetch("g") == {}
        c.on_elected(p, 3)
        await loaded(c)
        assert {tp: o.offset for tp, o in c.fetch("g").items()} == {("t", 0): 5, ("t", 1): 11}
        # what this tenure commits, the next one reads
        assert await commit(c, "g", 6) == ErrorCode.NONE
        c.on_resigned(p, 4)
        c.on_elected(p, 5)
        await loaded(c)
        assert c.fetch("g")[("t", 0)].offset == 6
        await c.stop()

    run(tmp_path, scenario)


def test_stale_epochs_are_ignored(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        c = node.coordinator(cluster_mode=True)
        p = c.topic.partition_for("g")
        c.on_elected(p, 5)
        await loaded(c)
        c.on_resigned(p, 4)  # older than the election: ignored
        assert c.owned_partitions() == {p}
        c.on_resigned(p, 6)
        c.on_elected(p, 5)  # older than the resignation: ignored
        assert not c.loading and c.owned_partitions() == set()
        assert c.coordinator_error("g") == ErrorCode.NOT_COORDINATOR
        c.on_elected(p, 6)  # the same epoch is current (Kafka's maybeUpdateCoordinatorEpoch)
        await loaded(c)
        assert c.owned_partitions() == {p}
        await c.stop()

    run(tmp_path, scenario)


def test_resignation_during_the_load_abandons_it(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        writer = node.coordinator(cluster_mode=False)
        assert await commit(writer, "g", 5) == ErrorCode.NONE
        c = node.coordinator(cluster_mode=True)
        p = c.topic.partition_for("g")
        gate = node.hold()
        c.on_elected(p, 1)
        load = asyncio.ensure_future(c.runtime.wait_loaded(p))  # the load's course
        assert c.coordinator_error("g") == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        c.on_resigned(p, 2)
        assert not c.loading
        assert c.coordinator_error("g") == ErrorCode.NOT_COORDINATOR
        gate.set()
        await asyncio.get_running_loop().run_in_executor(node.executor, lambda: None)
        await asyncio.wait([load], timeout=10)  # the abandoned load has run its course
        assert load.done()
        assert "g" not in c.groups and c.owned_partitions() == set()
        await c.stop()

    run(tmp_path, scenario)


# -- the APIs on the wire (a single node resigning a partition) -----------------------------


def test_group_apis_answer_not_coordinator_on_the_wire(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        assert server.replicas is not None and server.groups is not None
        server.replicas.ensure_topic("t", 1)
        groups = server.groups
        c = OneShotClient(server.bound_port)
        commit_cls = APIS_BY_NAME["OffsetCommit"].request.cls
        topic = commit_cls.OffsetCommitRequestTopic(
            name="t",
            partitions=[
                commit_cls.OffsetCommitRequestPartition(partition_index=0, committed_offset=4)
            ],
        )
        r = await c.call(
            "OffsetCommit",
            8,
            group_id="g",
            generation_id_or_member_epoch=-1,
            member_id="",
            topics=[topic],
        )
        assert r.topics[0].partitions[0].error_code == ErrorCode.NONE
        p = groups.topic.partition_for("g")
        groups.on_resigned(p, 1)

        r = await c.call(
            "OffsetCommit",
            8,
            group_id="g",
            generation_id_or_member_epoch=-1,
            member_id="",
            topics=[topic],
        )
        assert r.topics[0].partitions[0].error_code == ErrorCode.NOT_COORDINATOR
        fetch_cls = APIS_BY_NAME["OffsetFetch"].request.cls
        r = await c.call(
            "OffsetFetch",
            8,
            groups=[fetch_cls.OffsetFetchRequestGroup(group_id="g", topics=None)],
            require_stable=False,
        )
        assert [(g.group_id, g.error_code, g.topics) for g in r.groups] == [
            ("g", ErrorCode.NOT_COORDINATOR, [])
        ]
        r = await c.call("OffsetFetch", 5, group_id="g", topics=None, require_stable=False)
        assert (r.error_code, r.topics) == (ErrorCode.NOT_COORDINATOR, [])
        r = await c.call("DescribeGroups", 5, groups=["g"], include_authorized_operations=False)
        assert [(g.error_code, g.group_state) for g in r.groups] == [
            (ErrorCode.NOT_COORDINATOR, "")
        ]
        r = await c.call("ListGroups", 4, states_filter=[])
        assert (r.error_code, [g.group_id for g in r.groups]) == (ErrorCode.NONE, [])
        r = await c.call("DeleteGroups", 2, groups_names=["g"])
        assert [x.error_code for x in r.results] == [ErrorCode.NOT_COORDINATOR]
        r = await c.call("Heartbeat", 4, group_id="g", generation_id=1, member_id="m")
        assert r.error_code == ErrorCode.NOT_COORDINATOR

        groups.on_elected(p, 2)  # back: the offset committed before is reloaded
        await loaded(groups)
        r = await c.call("OffsetFetch", 5, group_id="g", topics=None, require_stable=False)
        assert r.error_code == ErrorCode.NONE
        assert [(t.name, [x.committed_offset for x in t.partitions]) for t in r.topics] == [
            ("t", [4])
        ]
        r = await c.call("ListGroups", 4, states_filter=[])
        assert [g.group_id for g in r.groups] == ["g"]

    run_broker(tmp_path, scenario, **{k: v for k, v in PROPS.items() if k != "node.id"})


def test_list_groups_answers_load_in_progress_while_a_partition_loads(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        assert server.groups is not None and server.services is not None
        groups = server.groups
        p = groups.topic.partition_for("g")
        groups.on_resigned(p, 1)
        gate = threading.Event()
        server.services.io_executor.submit(gate.wait, 10)  # the load queues behind it
        groups.on_elected(p, 2)
        try:
            c = OneShotClient(server.bound_port)
            r = await c.call("ListGroups", 4, states_filter=[])
            assert r.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
            r = await c.call("Heartbeat", 4, group_id="g", generation_id=1, member_id="m")
            assert r.error_code == ErrorCode.NONE
        finally:
            gate.set()
        await loaded(groups)
        r = await c.call("ListGroups", 4, states_filter=[])
        assert r.error_code == ErrorCode.NONE

    run_broker(tmp_path, scenario, **{**PROPS, "num.io.threads": 1, "node.id": 1})


# -- FindCoordinator and the offsets topic in a cluster -------------------------------------


def _offsets_topic(leaders: list[int]) -> TopicMetadata:
    return TopicMetadata(
        OFFSETS_TOPIC,
        uuid.uuid4(),
        tuple(PartitionState((1, 2, 3), leader, 3, (1, 2, 3)) for leader in leaders),
        {},
    )


class _Creations:
    def __init__(self) -> None:
        self.calls = 0

    def create_offsets_topic(self) -> None:
        self.calls += 1


def _cluster_services(cache: MetadataCache, partitions: int = 3) -> Any:
    config = BrokerConfig({**PROPS, "offsets.topic.num.partitions": partitions})
    replicas = SimpleNamespace(config=config, cache=cache)
    topic = offsets_topic(CoordinatorPartitionWriter(replicas), config, True)  # type: ignore[arg-type]
    groups = _Creations()
    groups.topic = topic  # type: ignore[attr-defined]
    return SimpleNamespace(
        metadata_cache=cache,
        group_coordinator=groups,
        controller=object(),
        cluster_mode=True,
        local_broker=None,
    )


async def _find(services: Any, version: int, key: str) -> tuple[int, int, str, int]:
    context = SimpleNamespace(api_version=version, listener_name="PLAINTEXT")
    request_cls = APIS_BY_NAME["FindCoordinator"].request.cls
    if version >= 4:
        request = request_cls(key_type=0, coordinator_keys=[key])
        [found] = (await handle_find_coordinator(services, context, request)).coordinators
    else:
        request = request_cls(key=key, key_type=0)
        found = await handle_find_coordinator(services, context, request)
    return found.error_code, found.node_id, found.host, found.port


def test_find_coordinator_answers_the_partition_leader_from_the_metadata_cache() -> None:
    async def scenario() -> None:
        cache = MetadataCache(controller_id=1)
        for node in (1, 2, 3):
            cache.register_broker(BrokerInfo(node, f"host{node}", 9090 + node))
        services = _cluster_services(cache)
        # no topic yet: its creation starts, the client retries
        assert await _find(services, 4, "g") == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1)
        assert services.group_coordinator.calls == 1
        p = services.group_coordinator.topic.partition_for("g")
        leaders = [1, 1, 1]
        leaders[p] = 2
        cache.on_topic_changed(_offsets_topic(leaders))
        assert await _find(services, 4, "g") == (ErrorCode.NONE, 2, "host2", 9092)
        assert await _find(services, 3, "g") == (ErrorCode.NONE, 2, "host2", 9092)
        leaders[p] = -1  # offline
        cache.on_topic_changed(_offsets_topic(leaders))
        assert (await _find(services, 4, "g"))[0] == ErrorCode.COORDINATOR_NOT_AVAILABLE
        leaders[p] = 7  # a leader that is not alive
        cache.on_topic_changed(_offsets_topic(leaders))
        assert (await _find(services, 2, "g"))[0] == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert services.group_coordinator.calls == 1

    asyncio.run(scenario())


class _RecordingReplicas:
    def __init__(self, cache: MetadataCache, **props: Any) -> None:
        self.config = BrokerConfig({**PROPS, **props})
        self.cache = cache
        self.created: list[tuple[str, int, dict[str, str], list[list[int]]]] = []

    def create_topic(
        self, name: str, partitions: int, configs: dict[str, str], *, assignment: list[list[int]]
    ) -> None:
        self.created.append((name, partitions, configs, assignment))


def test_offsets_topic_gets_the_replication_factor_over_the_live_brokers() -> None:
    cache = MetadataCache(controller_id=1)
    for node in (1, 2):
        cache.register_broker(BrokerInfo(node, "h", 9090 + node))
    replicas = _RecordingReplicas(cache, **{"offsets.topic.num.partitions": 5})
    writer = CoordinatorPartitionWriter(replicas)  # type: ignore[arg-type]
    topic = offsets_topic(writer, replicas.config, True)
    # the default replication factor is 3: two live brokers are too few (Kafka 3.9)
    with pytest.raises(InvalidReplicationFactorError):
        topic.ensure_created()
    assert replicas.created == []
    cache.register_broker(BrokerInfo(3, "h", 9093))
    topic.ensure_created()
    [(name, count, configs, assignment)] = replicas.created
    assert (name, count) == (OFFSETS_TOPIC, 5)
    assert configs["cleanup.policy"] == "compact"
    assert len(assignment) == 5
    assert all(sorted(replicas_) == [1, 2, 3] for replicas_ in assignment)
    # leaders spread over the brokers (AdminUtils' round robin)
    assert {replicas_[0] for replicas_ in assignment} == {1, 2, 3}

    one = _RecordingReplicas(cache, **{"offsets.topic.replication.factor": 1})
    writer = CoordinatorPartitionWriter(one)  # type: ignore[arg-type]
    offsets_topic(writer, one.config, True).ensure_created()
    assert [len(r) for r in one.created[0][3]] == [1, 1, 1]


# -- a commit is acknowledged once replicated (acks=-1) -------------------------------------


def test_a_commit_is_answered_once_the_isr_has_it(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        c = node.coordinator(cluster_mode=True)
        p = c.topic.partition_for("g")
        partition = node.replicas.partition(OFFSETS_TOPIC, p)
        assert partition is not None
        # this broker leads the partition with follower 2 in the ISR
        partition.make_leader(PartitionState((1, 2), 1, 7, (1, 2), partition.partition_epoch + 1))
        c.on_elected(p, 7)
        await loaded(c)
        end = partition.log.log_end_offset
        pending = asyncio.create_task(commit(c, "g", 5))
        await until(lambda: partition.log.log_end_offset > end)  # the commit is appended
        await asyncio.sleep(0.3)
        assert not pending.done()  # the high watermark waits for the follower
        assert c.fetch("g") == {}  # and so does the state
        partition.update_follower_fetch_state(2, partition.log.log_end_offset, 0)
        assert await asyncio.wait_for(pending, 5) == ErrorCode.NONE
        assert c.fetch("g")[("t", 0)].offset == 5
        # a follower that never fetches: COORDINATOR_NOT_AVAILABLE after the timeout
        assert await commit(c, "g", 6) == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert c.fetch("g")[("t", 0)].offset == 5
        await c.stop()

    run(tmp_path, scenario, **{"offsets.commit.timeout.ms": 500})


def test_leadership_changes_of_other_topics_are_ignored_and_stop_replica_always_resigns(
    tmp_path: Path,
) -> None:
    async def scenario(node: Node) -> None:
        c = node.coordinator(cluster_mode=True)
        p = c.topic.partition_for("g")
        c.on_leadership_change([(TopicPartition("t", p), 9)], [])
        assert not c.loading and c.owned_partitions() == set()
        c.on_leadership_change([(TopicPartition(OFFSETS_TOPIC, p), 9)], [])
        await loaded(c)
        assert c.owned_partitions() == {p}
        c.on_leadership_change([], [(TopicPartition("t", p), 10)])
        assert c.owned_partitions() == {p}
        c.on_resigned(p, None)  # StopReplica(delete) of a partition state without an epoch
        assert c.owned_partitions() == set()
        c.on_leadership_change([(TopicPartition(OFFSETS_TOPIC, p), 8)], [])  # stale
        assert not c.loading and c.owned_partitions() == set()
        c.on_leadership_change([], [(TopicPartition(OFFSETS_TOPIC, p), 10)])
        c.on_leadership_change([(TopicPartition(OFFSETS_TOPIC, p), 11)], [])
        await loaded(c)
        assert c.owned_partitions() == {p}
        await c.stop()

    run(tmp_path, scenario)
