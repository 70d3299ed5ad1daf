"""Replication between real in-process brokers: the test plays the controller, sending
UpdateMetadata and LeaderAndIsr over the wire (NodeClient), then produces ``acks=-1`` to
the leader and checks that the followers hold byte-identical batches, that the high
watermark advances everywhere, and that a deposed leader truncates its divergent tail
when it follows the new leader (KIP-101 scenario 2)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kafkacore import _native
from kafkacore.config import BrokerConfig
from kafkacore.log import TopicPartition
from kafkacore.net import NodeClient
from kafkacore.protocol import APIS_BY_NAME, Api, ApiKey, ErrorCode
from kafkacore.server.alter_partition import AlterPartitionManager
from kafkacore.server.broker import KafkaServer
from support.raw_client import fetch_request, produce_request

TOPIC = "replicated"
TP = TopicPartition(TOPIC, 0)
TOPIC_ID = uuid.uuid4()
_LAI: Any = APIS_BY_NAME["LeaderAndIsr"].request.cls
_UM: Any = APIS_BY_NAME["UpdateMetadata"].request.cls


def batch(n: int, tag: bytes) -> bytes:
    now = int(time.time() * 1000)
    return bytes(_native.build_batch([(i, now, b"k", tag, []) for i in range(n)]))


class Cluster:
    def __init__(self, servers: list[KafkaServer]) -> None:
        self.servers = {s.node_id: s for s in servers}
        self.controller_epoch = 1

    def assigned(self) -> list[int]:
        """The partition's assignment in the controller's requests (default: every broker
        started)."""
        return sorted(self.servers)

    def offline(self) -> list[int]:
        """Assigned replicas that are down (UpdateMetadata's offline replicas)."""
        return [n for n in self.assigned() if n not in self.servers]

    def is_new(self, epoch: int) -> bool:
        return epoch == 0

    def client(self, node: int) -> NodeClient:
        return NodeClient("localhost", self.servers[node].bound_port, client_id="test-controller")

    async def send(self, node: int, key: ApiKey, version: int, request: Any) -> Any:
        client = self.client(node)
        try:
            return await client.send(key, version, request)
        finally:
            await client.close()

    async def update_metadata(self, leader: int, epoch: int, isr: tuple[int, ...]) -> None:
        brokers = [
            _UM.UpdateMetadataBroker(
                id=n,
                endpoints=[
                    _UM.UpdateMetadataEndpoint(
                        port=s.bound_port,
                        host="localhost",
                        listener="PLAINTEXT",
                        security_protocol=0,
                    )
                ],
                rack=None,
            )
            for n, s in self.servers.items()
        ]
        state = _UM.UpdateMetadataPartitionState(
            partition_index=0,
            controller_epoch=self.controller_epoch,
            leader=leader,
            leader_epoch=epoch,
            isr=list(isr),
            zk_version=epoch,
            replicas=self.assigned(),
            offline_replicas=self.offline(),
        )
        for node in self.servers:
            request = _UM(
                controller_id=1,
                controller_epoch=self.controller_epoch,
                broker_epoch=-1,
                topic_states=[
                    _UM.UpdateMetadataTopicState(
                        topic_name=TOPIC, topic_id=TOPIC_ID, partition_states=[state]
                    )
                ],
                live_brokers=brokers,
            )
            response = await self.send(node, ApiKey.UPDATE_METADATA, 8, request)
            assert response.error_code == 0

    async def leader_and_isr(self, node: int, leader: int, epoch: int, isr: tuple[int, ...]) -> int:
        request = _LAI(
            controller_id=1,
            controller_epoch=self.controller_epoch,
            broker_epoch=-1,
            type=0,
            topic_states=[
                _LAI.LeaderAndIsrTopicState(
                    topic_name=TOPIC,
                    topic_id=TOPIC_ID,
                    partition_states=[
                        _LAI.LeaderAndIsrPartitionState(
                            partition_index=0,
                            controller_epoch=self.controller_epoch,
                            leader=leader,
                            leader_epoch=epoch,
                            isr=list(isr),
                            partition_epoch=epoch,
                            replicas=self.assigned(),
                            adding_replicas=[],
                            removing_replicas=[],
                            is_new=self.is_new(epoch),
                        )
                    ],
                )
            ],
            live_leaders=[],
        )
        response = await self.send(node, ApiKey.LEADER_AND_ISR, 7, request)
        assert response.error_code == 0
        return int(response.topics[0].partition_errors[0].error_code)

    async def produce(self, node: int, records: bytes, acks: int, timeout_ms: int = 10000) -> Any:
        request = produce_request(TOPIC, 0, records, acks=acks, timeout_ms=timeout_ms)
        response = await self.send(node, ApiKey.PRODUCE, 9, request)
        return response.responses[0].partition_responses[0]

    def log_bytes(self, node: int) -> bytes:
        log = self.servers[node].replicas.get_log(TOPIC, 0)  # type: ignore[union-attr]
        assert log is not None
        return log.read(0, 1 << 24).read_bytes()

    def partition(self, node: int) -> Any:
        return self.servers[node].replicas.get_partition(TP)  # type: ignore[union-attr]


async def eventually(check: Callable[[], bool], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


def run_cluster(
    tmp_path: Path,
    size: int,
    scenario: Callable[[Cluster], Awaitable[None]],
    controller: Any = None,
    truncate_on_fetch: bool = True,
    **props: Any,
) -> None:
    async def main() -> None:
        servers = []
        try:
            for node in range(1, size + 1):
                config = BrokerConfig(
                    {
                        "listeners": "PLAINTEXT://localhost:0",
                        "log.dirs": str(tmp_path / f"b{node}"),
                        "node.id": node,
                        "replica.fetch.wait.max.ms": 100,
                        "replica.fetch.backoff.ms": 50,
                        "num.replica.fetchers": 2,
                        **props,
                    }
                )
                server = KafkaServer(config)
                await server.startup()
                servers.append(server)
                services = server.services
                assert services is not None
                replicas = services.replica_manager
                replicas.start_replication(run_io=services.run_io)
                replicas.fetcher_manager.truncate_on_fetch = truncate_on_fetch  # type: ignore[union-attr]
                if controller is not None:
                    # AlterPartition goes to the test's controller
                    await replicas.alter_partition_manager.shutdown()  # type: ignore[union-attr]
                    alter = AlterPartitionManager(
                        node,
                        services.metadata_cache,
                        topic_id=replicas.topic_id_of,
                        client_factory=lambda host, port, c=controller: c,
                    )
                    alter.start()
                    replicas.set_alter_partition_manager(alter)
            await scenario(Cluster(servers))
        finally:
            for server in servers:
                await server.replicas.shutdown_replication()  # type: ignore[union-attr]
            for server in servers:
                await server.shutdown()

    asyncio.run(main())


def test_acks_all_replicates_byte_identical_batches(tmp_path: Path) -> None:
    async def scenario(cluster: Cluster) -> None:
        await cluster.update_metadata(1, 0, (1, 2, 3))
        for node in (1, 2, 3):
            assert await cluster.leader_and_isr(node, 1, 0, (1, 2, 3)) == 0
        # a stale epoch is refused per partition
        assert await cluster.leader_and_isr(2, 1, 0, (1, 2, 3)) == ErrorCode.STALE_CONTROLLER_EPOCH
        for i in range(5):
            answer = await cluster.produce(1, batch(3, b"v%d" % i), acks=-1)
            assert answer.error_code == 0
            assert answer.base_offset == 3 * i
            # acked with acks=all: the HW covers it, so every ISR member has it
            assert cluster.partition(1).high_watermark >= 3 * i + 3
        leader_bytes = cluster.log_bytes(1)
        await eventually(lambda: all(cluster.log_bytes(n) == leader_bytes for n in (2, 3)))
        await eventually(lambda: all(cluster.partition(n).high_watermark == 15 for n in (1, 2, 3)))
        # followers refuse client produces
        answer = await cluster.produce(2, batch(1, b"x"), acks=1)
        assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        # the epoch caches agree
        for node in (2, 3):
            log = cluster.servers[node].replicas.get_log(TOPIC, 0)  # type: ignore[union-attr]
            assert log is not None
            assert log.leader_epoch_cache.entries() == [(0, 0)]

    run_cluster(tmp_path, 3, scenario)


@pytest.mark.parametrize(
    "truncate_on_fetch", [True, False], ids=["diverging-epoch", "epoch-request"]
)
def test_deposed_leader_truncates_its_divergent_tail(
    tmp_path: Path, truncate_on_fetch: bool
) -> None:
    """Fetch v12's DivergingEpoch (Kafka 3.9) or OffsetForLeaderEpoch first (older IBPs)."""

    async def scenario(cluster: Cluster) -> None:
        await cluster.update_metadata(1, 1, (1, 2, 3))
        for node in (1, 2, 3):
            await cluster.leader_and_isr(node, 1, 1, (1, 2, 3))
        assert (await cluster.produce(1, batch(4, b"common"), acks=-1)).error_code == 0
        # the controller moves leadership to 2 (epoch 2) before 1 hears of it
        await cluster.update_metadata(2, 2, (2, 3))
        assert await cluster.leader_and_isr(2, 2, 2, (2, 3)) == 0
        assert await cluster.leader_and_isr(3, 2, 2, (2, 3)) == 0
        # 1 still believes it leads epoch 1: an acks=1 write lands only there
        assert (await cluster.produce(1, batch(3, b"lost"), acks=1)).error_code == 0
        assert cluster.servers[1].replicas.get_log(TOPIC, 0).log_end_offset == 7  # type: ignore[union-attr]
        # the new leader takes writes at epoch 2
        assert (await cluster.produce(2, batch(2, b"epoch2"), acks=-1)).error_code == 0
        # 1 becomes a follower: truncates to 4 (where epoch 2 starts) and catches up
        assert await cluster.leader_and_isr(1, 2, 2, (2, 3)) == 0
        leader_bytes = cluster.log_bytes(2)
        await eventually(lambda: cluster.log_bytes(1) == leader_bytes)
        await eventually(lambda: cluster.log_bytes(3) == leader_bytes)
        log1 = cluster.servers[1].replicas.get_log(TOPIC, 0)  # type: ignore[union-attr]
        assert log1 is not None
        assert log1.log_end_offset == 6
        assert b"lost" not in cluster.log_bytes(1)
        assert log1.leader_epoch_cache.entries() == [(1, 0), (2, 4)]

    run_cluster(tmp_path, 3, scenario, truncate_on_fetch=truncate_on_fetch)


class FakeController:
    """Answers AlterPartition as the controller would (success, partition epoch + 1)
    and records what it was asked."""

    closed = False

    def __init__(self) -> None:
        self.requests: list[Any] = []

    async def send(self, api: Api[Any, Any] | ApiKey, version: int, request: Any) -> Any:
        # as NodeClient.send: an Api (typed answer) or a bare ApiKey
        api_key = api.key if isinstance(api, Api) else api
        assert api_key == ApiKey.ALTER_PARTITION
        assert version == 3
        self.requests.append(request)
        cls: Any = APIS_BY_NAME["AlterPartition"].response.cls
        return cls(
            throttle_time_ms=0,
            error_code=0,
            topics=[
                cls.TopicData(
                    topic_id=t.topic_id,
                    partitions=[
                        cls.PartitionData(
                            partition_index=p.partition_index,
                            error_code=0,
                            leader_id=request.broker_id,
                            leader_epoch=p.leader_epoch,
                            isr=[b.broker_id for b in p.new_isr_with_epochs],
                            leader_recovery_state=0,
                            partition_epoch=p.partition_epoch + 1,
                        )
                        for p in t.partitions
                    ],
                )
                for t in request.topics
            ],
        )

    async def close(self) -> None:
        pass


def test_isr_expands_on_catch_up_and_shrinks_when_a_follower_stops(tmp_path: Path) -> None:
    controller = FakeController()

    async def scenario(cluster: Cluster) -> None:
        await cluster.update_metadata(1, 0, (1, 2))
        for node in (1, 2, 3):
            await cluster.leader_and_isr(node, 1, 0, (1, 2))
        assert (await cluster.produce(1, batch(5, b"a"), acks=-1)).error_code == 0
        leader = cluster.partition(1)
        # 3 catches up and is proposed for the ISR, with the broker id and epoch
        await eventually(lambda: leader.isr == {1, 2, 3})
        proposal = controller.requests[0]
        assert proposal.broker_id == 1
        assert [b.broker_id for b in proposal.topics[0].partitions[0].new_isr_with_epochs] == [
            1,
            2,
            3,
        ]
        assert proposal.topics[0].topic_id == TOPIC_ID
        assert leader.partition_epoch == 1
        # StopReplica with delete on 3: its fetcher stops, its log goes
        stop: Any = APIS_BY_NAME["StopReplica"].request.cls
        response = await cluster.send(
            3,
            ApiKey.STOP_REPLICA,
            4,
            stop(
                controller_id=1,
                controller_epoch=cluster.controller_epoch,
                broker_epoch=-1,
                topic_states=[
                    stop.StopReplicaTopicState(
                        topic_name=TOPIC,
                        partition_states=[
                            stop.StopReplicaPartitionState(
                                partition_index=0, leader_epoch=0, delete_partition=True
                            )
                        ],
                    )
                ],
            ),
        )
        assert response.error_code == 0
        assert response.partition_errors[0].error_code == 0
        assert cluster.servers[3].replicas.get_partition(TP) is None  # type: ignore[union-attr]
        assert not (tmp_path / "b3" / f"{TOPIC}-0").exists()
        # writes go on; 3 no longer fetches and drops out after replica.lag.time.max.ms
        assert (await cluster.produce(1, batch(1, b"b"), acks=1)).error_code == 0
        await asyncio.sleep(0.7)
        cluster.servers[1].replicas.maybe_shrink_isrs()  # type: ignore[union-attr]
        await eventually(lambda: leader.isr == {1, 2})
        assert leader.partition_epoch == 2
        # a stale controller epoch is refused as a whole
        cluster.controller_epoch = 0
        response = await cluster.send(
            2,
            ApiKey.UPDATE_METADATA,
            8,
            _UM(controller_id=1, controller_epoch=0, broker_epoch=-1, live_brokers=[]),
        )
        assert response.error_code == ErrorCode.STALE_CONTROLLER_EPOCH

    run_cluster(tmp_path, 3, scenario, controller, **{"replica.lag.time.max.ms": 600})


_FETCH: Any = APIS_BY_NAME["Fetch"].request.cls
_EPOCHS: Any = APIS_BY_NAME["OffsetForLeaderEpoch"].request.cls


def test_replica_fetch_protocol_and_acks_all_timeout(tmp_path: Path) -> None:
    """Broker 2 is assigned but never told (no LeaderAndIsr): the test fetches as
    replica 2 itself."""

    async def fetch(
        cluster: Cluster,
        offset: int,
        *,
        replica: int = 2,
        epoch: int = 2,
        last_fetched_epoch: int = -1,
    ) -> Any:
        request = fetch_request(
            TOPIC,
            0,
            fetch_offset=offset,
            replica_id=replica,
            min_bytes=0,
            current_leader_epoch=epoch,
            last_fetched_epoch=last_fetched_epoch,
            log_start_offset=0,
        )
        response = await cluster.send(1, ApiKey.FETCH, 12, request)
        return response.responses[0].partitions[0]

    async def scenario(cluster: Cluster) -> None:
        await cluster.update_metadata(1, 2, (1, 2))
        assert await cluster.leader_and_isr(1, 1, 2, (1, 2)) == 0
        assert (await cluster.produce(1, batch(4, b"a"), acks=1)).error_code == 0
        leader = cluster.partition(1)
        assert leader.high_watermark == 0  # replica 2 has not fetched
        # acks=-1 waits for the HW and times out (the data stays)
        started = time.monotonic()
        answer = await cluster.produce(1, batch(1, b"late"), acks=-1, timeout_ms=300)
        assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT
        assert time.monotonic() - started >= 0.29
        assert leader.log.log_end_offset == 5
        # leader epoch fencing
        assert (await fetch(cluster, 0, epoch=1)).error_code == ErrorCode.FENCED_LEADER_EPOCH
        assert (await fetch(cluster, 0, epoch=3)).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
        # a consumer sees nothing above the HW; the replica reads to the log end
        consumer = await fetch(cluster, 0, replica=-1)
        assert consumer.error_code == 0 and consumer.high_watermark == 0
        assert len(consumer.records or b"") == 0
        replica = await fetch(cluster, 0)
        assert replica.error_code == 0
        assert bytes(replica.records) == cluster.log_bytes(1)
        assert replica.high_watermark == 0
        # fetching at the log end moves the HW there
        replica = await fetch(cluster, 5, last_fetched_epoch=2)
        assert replica.error_code == 0 and replica.high_watermark == 5
        assert leader.high_watermark == 5
        assert leader.follower_state(2).log_end_offset == 5
        # a replica whose last epoch the leader does not have ending there diverges
        replica = await fetch(cluster, 5, last_fetched_epoch=1)
        assert replica.error_code == 0
        assert (replica.diverging_epoch.epoch, replica.diverging_epoch.end_offset) == (1, 0)
        assert len(replica.records or b"") == 0
        assert (await fetch(cluster, 9)).error_code == ErrorCode.OFFSET_OUT_OF_RANGE
        # OffsetForLeaderEpoch as a replica
        request = _EPOCHS(
            replica_id=2,
            topics=[
                _EPOCHS.OffsetForLeaderTopic(
                    topic=TOPIC,
                    partitions=[
                        _EPOCHS.OffsetForLeaderPartition(
                            partition=0, current_leader_epoch=2, leader_epoch=2
                        )
                    ],
                )
            ],
        )
        response = await cluster.send(1, ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, request)
        result = response.topics[0].partitions[0]
        assert (result.error_code, result.leader_epoch, result.end_offset) == (0, 2, 5)
        # broker 2 was never told of the partition
        response = await cluster.send(2, ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, request)
        assert response.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    run_cluster(tmp_path, 2, scenario, **{"min.insync.replicas": 2})


def test_fetch_v13_to_v17_topic_ids_replica_state_and_current_leader(tmp_path: Path) -> None:
    """Fetch v13+ names topics by id (an unknown id: UNKNOWN_TOPIC_ID), v15+ carries the
    follower in the tagged ReplicaState, v16+ answers NOT_LEADER_OR_FOLLOWER and
    FENCED_LEADER_EPOCH with the current leader and its endpoint, v17 carries a
    ReplicaDirectoryId. Broker 2 knows the partition from UpdateMetadata only."""
    unknown_id = uuid.uuid4()

    def request(
        topics: list[tuple[uuid.UUID, int, int]],
        *,
        replica: int = -1,
        last_fetched_epoch: int = -1,
    ) -> Any:
        return _FETCH(
            replica_id=-1,
            replica_state=_FETCH.ReplicaState(replica_id=replica, replica_epoch=-1),
            max_wait_ms=0,
            min_bytes=0,
            max_bytes=1 << 20,
            isolation_level=0,
            session_id=0,
            session_epoch=-1,
            topics=[
                _FETCH.FetchTopic(
                    topic_id=topic_id,
                    partitions=[
                        _FETCH.FetchPartition(
                            partition=0,
                            current_leader_epoch=epoch,
                            fetch_offset=offset,
                            last_fetched_epoch=last_fetched_epoch,
                            log_start_offset=0,
                            partition_max_bytes=1 << 20,
                            replica_directory_id=uuid.uuid4(),
                        )
                    ],
                )
                for topic_id, offset, epoch in topics
            ],
            forgotten_topics_data=[],
            rack_id="",
        )

    async def scenario(cluster: Cluster) -> None:
        await cluster.update_metadata(1, 2, (1, 2))
        assert await cluster.leader_and_isr(1, 1, 2, (1, 2)) == 0
        assert (await cluster.produce(1, batch(4, b"a"), acks=1)).error_code == 0
        leader = cluster.partition(1)
        # a client by topic id, with an unknown id before it (v13): as in Kafka, the
        # partitions refused before reading come last
        fetch = request([(unknown_id, 0, -1), (TOPIC_ID, 0, 2)])
        response = await cluster.send(1, ApiKey.FETCH, 13, fetch)
        known, unknown = response.responses
        assert (known.topic_id, unknown.topic_id) == (TOPIC_ID, unknown_id)
        assert known.partitions[0].error_code == 0
        assert known.partitions[0].high_watermark == 0  # replica 2 has not fetched yet
        bad = unknown.partitions[0]
        assert (bad.error_code, bad.high_watermark, bad.log_start_offset) == (
            ErrorCode.UNKNOWN_TOPIC_ID,
            -1,
            -1,
        )
        # an unknown id does not end the wait for min_bytes, as in Kafka; alone, nothing waits
        fetch.min_bytes, fetch.max_wait_ms = 1, 300
        started = time.monotonic()
        await cluster.send(1, ApiKey.FETCH, 13, fetch)
        assert time.monotonic() - started >= 0.29
        alone = request([(unknown_id, 0, -1)])
        alone.min_bytes, alone.max_wait_ms = 1, 5000
        started = time.monotonic()
        response = await cluster.send(1, ApiKey.FETCH, 13, alone)
        assert time.monotonic() - started < 2
        assert response.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
        # the follower in ReplicaState (v15, v17): reads to the log end, moves its state
        for version in (15, 17):
            response = await cluster.send(
                1, ApiKey.FETCH, version, request([(TOPIC_ID, 0, 2)], replica=2)
            )
            data = response.responses[0].partitions[0]
            assert data.error_code == 0
            assert bytes(data.records) == cluster.log_bytes(1)
            assert leader.follower_state(2).log_end_offset == 0
        response = await cluster.send(
            1, ApiKey.FETCH, 15, request([(TOPIC_ID, 4, 2)], replica=2, last_fetched_epoch=2)
        )
        data = response.responses[0].partitions[0]
        assert (data.error_code, data.high_watermark) == (0, 4)
        assert leader.follower_state(2).log_end_offset == 4
        assert leader.high_watermark == 4
        # v15 ignores the ReplicaId of the v4-14 body
        stale = request([(TOPIC_ID, 0, 2)])
        stale.replica_id = 2
        response = await cluster.send(1, ApiKey.FETCH, 15, stale)
        assert len(response.responses[0].partitions[0].records or b"") > 0
        assert leader.follower_state(2).log_end_offset == 4
        # v16: not the leader (broker 2 does not host it) and a fenced epoch
        port = cluster.servers[1].bound_port
        for node, epoch, error in (
            (2, 2, ErrorCode.NOT_LEADER_OR_FOLLOWER),
            (1, 1, ErrorCode.FENCED_LEADER_EPOCH),
        ):
            response = await cluster.send(node, ApiKey.FETCH, 16, request([(TOPIC_ID, 0, epoch)]))
            data = response.responses[0].partitions[0]
            assert data.error_code == error
            assert (data.current_leader.leader_id, data.current_leader.leader_epoch) == (1, 2)
            assert [(e.node_id, e.host, e.port, e.rack) for e in response.node_endpoints] == [
                (1, "localhost", port, None)
            ]
            # before v16 the response carries neither
            response = await cluster.send(node, ApiKey.FETCH, 15, request([(TOPIC_ID, 0, epoch)]))
            data = response.responses[0].partitions[0]
            assert data.error_code == error
            assert data.current_leader.leader_id == -1
            assert response.node_endpoints == []
        # an error other than those two carries no leader
        response = await cluster.send(1, ApiKey.FETCH, 16, request([(TOPIC_ID, 0, 3)]))
        data = response.responses[0].partitions[0]
        assert data.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
        assert data.current_leader.leader_id == -1 and response.node_endpoints == []

    run_cluster(tmp_path, 2, scenario)


def test_follower_behind_the_leader_log_start_restarts_there(tmp_path: Path) -> None:
    """OFFSET_OUT_OF_RANGE (Kafka's fetchOffsetAndTruncate): the leader's log starts
    above the new follower's log end, so the follower starts empty at the leader's log
    start; later the follower's log start follows the leader's."""

    async def scenario(cluster: Cluster) -> None:
        await cluster.update_metadata(1, 0, (1,))
        assert await cluster.leader_and_isr(1, 1, 0, (1,)) == 0
        for i in range(5):
            assert (await cluster.produce(1, batch(2, b"%d" % i), acks=1)).error_code == 0
        leader_log = cluster.partition(1).log
        assert leader_log.delete_records_before(6)
        # a stale broker epoch is refused as a whole
        cluster.servers[2].replicas.broker_epoch = 10  # type: ignore[union-attr]
        request = _LAI(controller_id=1, controller_epoch=1, broker_epoch=5, topic_states=[])
        response = await cluster.send(2, ApiKey.LEADER_AND_ISR, 7, request)
        assert response.error_code == ErrorCode.STALE_BROKER_EPOCH
        cluster.servers[2].replicas.broker_epoch = -1  # type: ignore[union-attr]
        assert await cluster.leader_and_isr(2, 1, 0, (1,)) == 0
        follower = cluster.partition(2)
        await eventually(lambda: follower.log.log_end_offset == 10)
        assert follower.log.log_start_offset == 6
        assert (
            follower.log.read(6, 1 << 20).read_bytes() == leader_log.read(6, 1 << 20).read_bytes()
        )
        assert leader_log.delete_records_before(8)
        assert (await cluster.produce(1, batch(1, b"more"), acks=1)).error_code == 0
        await eventually(lambda: follower.log.log_start_offset == 8)
        await eventually(lambda: follower.log.log_end_offset == 11)

    run_cluster(tmp_path, 2, scenario)
