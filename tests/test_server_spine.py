"""The server's spine: the ApiKey table, Partition (leader state, high watermark, last
stable offset), the metadata store and its read cache (including version-0 files), the
RequestContext reaching handlers, and appends running off the event loop."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkacore import backend
from kafkacore.config import LogConfig
from kafkacore.log import Log, TopicPartition
from kafkacore.log.log import AppendOrigin
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.metadata import (
    METADATA_FILE,
    EmbeddedMetadataStore,
    MetadataCache,
    MetadataListener,
    PartitionState,
)
from kafkacore.protocol import APIS, CONTROLLER_APIS, ApiKey, ErrorCode, RequestHeader
from kafkacore.server import KafkaServer
from kafkacore.server.handlers import HANDLERS
from kafkacore.server.network import ConnectionInfo
from kafkacore.server.partition import (
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    Partition,
)
from kafkacore.server.replica_manager import InlineAppends, ReplicaManager
from kafkacore.server.request_context import ANONYMOUS, RequestContext, SecurityProtocol
from support.raw_client import OneShotClient, RawClient, make_request, run_broker

pytestmark = pytest.mark.timeout(30)


def _batch(values: list[bytes], producer: tuple[int, int, int] | None = None) -> bytes:
    now = int(time.time() * 1000)
    records = [(i, now, None, v, []) for i, v in enumerate(values)]
    if producer is None:
        return bytes(backend.build_batch(records))
    pid, epoch, seq = producer
    return bytes(
        backend.build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq)
    )


# -- ApiKey ---------------------------------------------------------------------------------


def _kafka_name(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).upper()


def test_api_key_enum_is_exactly_the_codec_table_with_kafkas_names() -> None:
    assert {int(k) for k in ApiKey} == set(APIS) | set(CONTROLLER_APIS)
    for key, api in [*APIS.items(), *CONTROLLER_APIS.items()]:
        assert isinstance(api.key, ApiKey)
        assert api.key.name == _kafka_name(api.name), api.name
        assert ApiKey[_kafka_name(api.name)] == key
    assert ApiKey.PRODUCE == 0 and ApiKey.API_VERSIONS == 18 and ApiKey.DESCRIBE_CLUSTER == 60


def test_handler_table_is_keyed_by_api_key() -> None:
    assert all(isinstance(k, ApiKey) for k in HANDLERS)
    # every API a broker listener serves has its handler
    assert set(HANDLERS) == set(APIS)


# -- Partition ------------------------------------------------------------------------------


def _partition(tmp_path: Path, **overrides: str) -> Partition:
    tp = TopicPartition("t", 0)
    log = Log(tmp_path / "t-0", LogConfig(dict(overrides)), topic_partition=tp)
    return Partition(tp, log, local_broker_id=1)


def test_partition_high_watermark_follows_appends_and_lso_equals_hw(tmp_path: Path) -> None:
    partition = _partition(tmp_path)
    assert partition.high_watermark == 0
    with pytest.raises(NotLeaderOrFollowerError):  # not made leader yet
        partition.append_records_to_leader(_batch([b"a"]))
    assert partition.make_leader(PartitionState((1,), 1, 3, (1,), 0)) is True
    assert (partition.leader_epoch, partition.replicas, partition.isr) == (3, (1,), {1})
    info = partition.append_records_to_leader(_batch([b"a", b"b", b"c"]))
    assert info.first_offset == 0
    assert partition.high_watermark == 3 == partition.log.log_end_offset
    assert partition.last_stable_offset == 3
    partition.append_records_to_leader(_batch([b"d"]), origin=AppendOrigin.COORDINATOR)
    assert partition.high_watermark == 4
    # the leader epoch is stamped on the batches
    assert partition.log.latest_epoch == 3
    # a stale state (older partition epoch) changes nothing
    partition.make_leader(PartitionState((1,), 1, 5, (1,), 2))
    assert partition.make_leader(PartitionState((1,), 1, 9, (1,), 1)) is False
    assert partition.leader_epoch == 5


def test_partition_hw_after_load_is_log_end_offset(tmp_path: Path) -> None:
    first = _partition(tmp_path)
    first.make_leader(PartitionState((1,), 1, 0, (1,), 0))
    first.append_records_to_leader(_batch([b"a", b"b"]))
    first.log.close()
    again = _partition(tmp_path)
    again.make_leader(PartitionState((1,), 1, 0, (1,), 0))
    assert again.high_watermark == 2


def test_partition_refuses_acks_all_below_min_isr_and_leaves_log_alone(tmp_path: Path) -> None:
    partition = _partition(tmp_path, **{"min.insync.replicas": "2"})
    partition.make_leader(PartitionState((1,), 1, 0, (1,), 0))
    with pytest.raises(NotEnoughReplicasError, match=r"current ISR Set\(1\) is insufficient"):
        partition.append_records_to_leader(_batch([b"a"]), required_acks=-1)
    assert partition.log.log_end_offset == 0 and partition.high_watermark == 0
    partition.append_records_to_leader(_batch([b"a"]), required_acks=1)
    assert partition.high_watermark == 1


def test_partition_duplicate_idempotent_batch_is_acked_with_original_offsets(
    tmp_path: Path,
) -> None:
    tp = TopicPartition("t", 0)
    log = Log(
        tmp_path / "t-0",
        LogConfig({}),
        topic_partition=tp,
        producer_state=ProducerStateManager(tmp_path / "t-0"),
    )
    partition = Partition(tp, log, 1)
    partition.make_leader(PartitionState((1,), 1, 0, (1,), 0))
    batch = _batch([b"a", b"b"], producer=(7, 0, 0))
    first = partition.append_records_to_leader(batch)
    again = partition.append_records_to_leader(batch)
    assert (again.first_offset, again.last_offset) == (first.first_offset, first.last_offset)
    assert log.log_end_offset == 2 and partition.high_watermark == 2


# -- metadata store and cache ---------------------------------------------------------------


def test_cache_follows_store_changes(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, node_id=1)
    cache = MetadataCache(controller_id=1)
    store.set_broker_configs("1", {"log.retention.ms": "5"})
    cache.follow(store, ("1", "default"))
    assert cache.broker_configs("1") == {"log.retention.ms": "5"}
    topic = store.create_topic("orders", [[1], [1]], {"retention.ms": "100"})
    assert cache.topic("orders") == topic
    assert cache.topic_by_id(topic.topic_id) == topic
    assert cache.partition_count("orders") == 2
    assert cache.partition_state(TopicPartition("orders", 1)) == PartitionState((1,), 1, 0, (1,))
    assert cache.partition_state(TopicPartition("orders", 2)) is None
    store.set_partitions("orders", [[1], [1], [1]])
    store.set_partition_state("orders", 0, PartitionState((1,), 1, 4, (1,), 1))
    assert cache.partition_count("orders") == 3
    assert cache.partition_state(TopicPartition("orders", 0)) == PartitionState((1,), 1, 4, (1,), 1)
    store.set_topic_configs("orders", {"retention.ms": "7"})
    assert cache.topic_configs("orders") == {"retention.ms": "7"}
    store.set_broker_configs("default", {"log.retention.ms": "9"})
    assert cache.broker_configs("default") == {"log.retention.ms": "9"}
    store.set_cluster_id("abc")
    assert cache.cluster_id == "abc"
    store.delete_topic("orders")
    assert cache.topic("orders") is None and cache.topic_by_id(topic.topic_id) is None
    assert cache.topics() == []
    # all of it persisted as format version 1
    reopened = EmbeddedMetadataStore(tmp_path, node_id=1)
    assert reopened.loaded_version == 1 and reopened.cluster_id == "abc"
    assert reopened.broker_configs("default") == {"log.retention.ms": "9"}


def _write_v0(directory: Path, topic_id: uuid.UUID) -> None:
    data = {
        "version": 0,
        "cluster_id": "v0-cluster-id-abcdefg",
        "next_producer_id": 2000,
        "topics": {
            "orders": {
                "topic_id": str(topic_id),
                "partitions": 3,
                "leader_epoch": 2,
                "configs": {"retention.ms": "1000"},
            }
        },
        "broker_configs": {"default": {"log.retention.ms": "86400000"}},
    }
    (directory / METADATA_FILE).write_text(json.dumps(data))


def test_version_0_file_is_read_and_rewritten_as_version_1(tmp_path: Path) -> None:
    topic_id = uuid.uuid4()
    _write_v0(tmp_path, topic_id)
    store = EmbeddedMetadataStore(tmp_path, node_id=5)
    assert store.loaded_version == 0
    topic = store.topic("orders")
    assert topic is not None and topic.topic_id == topic_id
    assert topic.partitions == (PartitionState((5,), 5, 2, (5,), 0),) * 3
    assert dict(topic.configs) == {"retention.ms": "1000"}
    assert store.broker_configs("default") == {"log.retention.ms": "86400000"}
    assert store.allocate_producer_id() == 2000  # the reserved block is not reused
    saved = json.loads((tmp_path / METADATA_FILE).read_text())
    assert saved["version"] == 1
    assert saved["topics"]["orders"]["partitions"]["2"] == {
        "replicas": [5],
        "leader": 5,
        "leader_epoch": 2,
        "isr": [5],
        "partition_epoch": 0,
    }
    assert EmbeddedMetadataStore(tmp_path, node_id=5).topic("orders") == topic


def test_unknown_metadata_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / METADATA_FILE).write_text(json.dumps({"version": 7}))
    with pytest.raises(ValueError, match="unknown metadata version 7"):
        EmbeddedMetadataStore(tmp_path, node_id=1)


def test_broker_starts_on_a_version_0_metadata_file(tmp_path: Path) -> None:
    topic_id = uuid.uuid4()
    tmp_path.mkdir(exist_ok=True)
    _write_v0(tmp_path, topic_id)

    async def scenario(server: KafkaServer) -> None:
        client = await RawClient.connect(server.bound_port)
        metadata = await client.call(
            "Metadata",
            12,
            make_request("Metadata", topics=None, allow_auto_topic_creation=False),
        )
        client.close()
        (orders,) = metadata.topics
        assert (orders.name, orders.topic_id, orders.error_code) == ("orders", topic_id, 0)
        assert [(p.partition_index, p.leader_id, p.leader_epoch) for p in orders.partitions] == [
            (0, 1, 2),
            (1, 1, 2),
            (2, 1, 2),
        ]
        assert metadata.cluster_id == "v0-cluster-id-abcdefg"

    run_broker(tmp_path, scenario, **{"auto.create.topics.enable": "false"})


# -- RequestContext -------------------------------------------------------------------------


def test_request_context_from_connection() -> None:
    connection = ConnectionInfo("c-1", "INTERNAL", "10.0.0.7", 40000, 9092, "SASL_SSL")
    header = RequestHeader(ApiKey.FETCH, 12, 5, "client")
    context = RequestContext.for_connection(header, connection)
    assert context.principal == ANONYMOUS and str(context.principal) == "User:ANONYMOUS"
    assert context.security_protocol is SecurityProtocol.SASL_SSL
    assert (context.listener_name, context.client_address, context.client_port) == (
        "INTERNAL",
        "10.0.0.7",
        40000,
    )
    assert (context.api_key, context.api_version, context.client_id) == (ApiKey.FETCH, 12, "client")


def test_client_address_reaches_group_handlers(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        c = OneShotClient(server.bound_port, client_id="ctx-client")
        protocol = make_request("JoinGroup").JoinGroupRequestProtocol(name="range", metadata=b"s")
        join = await c.call(
            "JoinGroup",
            7,
            group_id="g",
            session_timeout_ms=10000,
            rebalance_timeout_ms=2000,
            member_id="",
            group_instance_id=None,
            protocol_type="consumer",
            protocols=[protocol],
        )
        assert join.error_code == ErrorCode.MEMBER_ID_REQUIRED
        join = await c.call(
            "JoinGroup",
            7,
            group_id="g",
            session_timeout_ms=10000,
            rebalance_timeout_ms=2000,
            member_id=join.member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=[protocol],
        )
        assert join.error_code == ErrorCode.NONE
        described = await c.call("DescribeGroups", 5, groups=["g"])
        (member,) = described.groups[0].members
        assert (member.client_id, member.client_host) == ("ctx-client", "/127.0.0.1")

    run_broker(
        tmp_path,
        scenario,
        **{"group.initial.rebalance.delay.ms": 0, "offsets.topic.num.partitions": 1},
    )


# -- the event loop stays free ----------------------------------------------------------------


def _produce_threads(
    tmp_path: Path, monkeypatch: Any, batches: list[bytes], slow_at: int = -1, **props: Any
) -> tuple[list[bool], int]:
    """Produces ``batches`` one request each to ``t``; for each append, whether it ran on
    the event loop's thread (else it must be an I/O thread); and the high watermark.
    ``slow_at``: that append sleeps 300 ms (a stalling disk); without it, no append counts
    as slow (a busy test machine may take a core from the broker for longer than the
    threshold)."""
    monkeypatch.setattr(InlineAppends, "slow_s", 0.2 if slow_at >= 0 else 60.0)
    on_loop: list[bool] = []
    real_append = Partition.append_records_to_leader

    def recording_append(self: Partition, records: bytes, **kwargs: Any) -> Any:
        thread = threading.current_thread()
        on_loop.append(thread is loop_thread[0])
        assert thread is loop_thread[0] or thread.name.startswith("kafkacore-io")
        if len(on_loop) - 1 == slow_at:
            time.sleep(0.3)
        return real_append(self, records, **kwargs)

    monkeypatch.setattr(Partition, "append_records_to_leader", recording_append)
    real_leased = ReplicaManager.append_leased_records

    def recording_leased(entries: Any, required_acks: int) -> Any:
        # the native produce path (under the partitions' leases) appends too: same rules
        infos = real_leased(entries, required_acks)
        for info in infos or ():
            if info is None:
                continue
            thread = threading.current_thread()
            on_loop.append(thread is loop_thread[0])
            assert thread is loop_thread[0] or thread.name.startswith("kafkacore-io")
            if len(on_loop) - 1 == slow_at:
                time.sleep(0.3)
        return infos

    monkeypatch.setattr(ReplicaManager, "append_leased_records", staticmethod(recording_leased))
    loop_thread: list[threading.Thread] = []
    hw: list[int] = []

    async def scenario(server: KafkaServer) -> None:
        loop_thread.append(threading.current_thread())
        client = await RawClient.connect(server.bound_port)
        produce: Any = type(make_request("Produce"))
        for records in batches:
            request = produce(
                acks=1,
                timeout_ms=1000,
                topic_data=[
                    produce.TopicProduceData(
                        name="t",
                        partition_data=[produce.PartitionProduceData(index=0, records=records)],
                    )
                ],
            )
            response = await client.call("Produce", 9, request)
            assert response.responses[0].partition_responses[0].error_code == 0
        client.close()
        replicas = server.replicas
        assert replicas is not None
        partition = replicas.partition("t", 0)
        assert partition is not None
        hw.append(partition.high_watermark)

    run_broker(tmp_path, scenario, **{"num.io.threads": 2, **props})
    return on_loop, hw[0]


def test_small_produce_appends_run_on_the_event_loop(tmp_path: Path, monkeypatch: Any) -> None:
    """An append that only copies into the active segment's page cache runs on the loop
    (no I/O-thread hand-offs); the first one of the topic too, once it exists."""
    on_loop, hw = _produce_threads(tmp_path, monkeypatch, [_batch([b"x", b"y"])] * 3)
    assert hw == 6
    assert on_loop[1:] == [True, True]


def test_appends_that_may_block_run_on_an_io_thread(tmp_path: Path, monkeypatch: Any) -> None:
    """An fsync for ``flush.messages`` and a request over 1 MiB go to the I/O threads:
    the loop keeps serving other connections while they write."""
    big = _batch([bytes(300_000)] * 4)  # 1.2 MB
    on_loop, hw = _produce_threads(
        tmp_path,
        monkeypatch,
        [_batch([b"x"]), big, _batch([b"y"])],
        **{"message.max.bytes": 2 << 20},
    )
    assert hw == 6
    assert on_loop[1:] == [False, True]
    on_loop, hw = _produce_threads(
        tmp_path / "flush",
        monkeypatch,
        [_batch([b"x"])] * 3,
        **{"log.flush.interval.messages": 2},
    )
    assert hw == 3
    # the first append leaves one unflushed offset: the second would fsync; the third
    # (no fsync due) is the native path's under the partition's lease, on the loop
    assert on_loop[1:] == [False, True]


def test_a_slow_append_on_the_loop_sends_the_next_ones_to_io_threads(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """An append on the loop that took 300 ms (a disk stalling writes into the page cache):
    the appends after it run on the I/O threads for a while."""
    on_loop, hw = _produce_threads(tmp_path, monkeypatch, [_batch([b"x"])] * 4, slow_at=1)
    assert hw == 4
    # the first append of a new leader epoch writes the epoch checkpoint: I/O thread
    assert on_loop == [False, True, False, False]


def test_create_topics_writes_the_store_on_an_io_thread(tmp_path: Path, monkeypatch: Any) -> None:
    threads: list[threading.Thread] = []
    real_create = EmbeddedMetadataStore.create_topic

    def recording_create(self: EmbeddedMetadataStore, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return real_create(self, *args, **kwargs)

    monkeypatch.setattr(EmbeddedMetadataStore, "create_topic", recording_create)

    async def scenario(server: KafkaServer) -> None:
        loop_thread = threading.current_thread()
        create: Any = type(make_request("CreateTopics"))
        client = await RawClient.connect(server.bound_port)
        response = await client.call(
            "CreateTopics",
            7,
            create(
                topics=[
                    create.CreatableTopic(
                        name="made",
                        num_partitions=2,
                        replication_factor=1,
                        assignments=[],
                        configs=[],
                    )
                ],
                timeout_ms=1000,
                validate_only=False,
            ),
        )
        client.close()
        assert response.topics[0].error_code == 0
        assert threads and all(t is not loop_thread for t in threads)
        replicas = server.replicas
        assert replicas is not None
        assert replicas.partition("made", 1) is not None

    run_broker(tmp_path, scenario)


def test_concurrent_first_find_coordinators_then_commits_all_succeed(tmp_path: Path) -> None:
    """Several clients ask for a coordinator at once while ``__consumer_offsets`` is
    being created on an I/O thread; each answer comes only once its partitions exist, so
    the commits that follow all succeed."""

    async def scenario(server: KafkaServer) -> None:
        assert server.replicas is not None
        server.replicas.ensure_topic("t", 1)  # commits to a missing topic are refused
        clients = [OneShotClient(server.bound_port) for _ in range(6)]

        async def find_then_commit(i: int, c: OneShotClient) -> tuple[int, int]:
            found = await c.call("FindCoordinator", 3, key=f"g{i}", key_type=0)
            commit: Any = type(make_request("OffsetCommit"))
            committed = await c.call(
                "OffsetCommit",
                8,
                group_id=f"g{i}",
                generation_id_or_member_epoch=-1,
                member_id="",
                group_instance_id=None,
                topics=[
                    commit.OffsetCommitRequestTopic(
                        name="t",
                        partitions=[
                            commit.OffsetCommitRequestPartition(
                                partition_index=0,
                                committed_offset=i,
                                committed_leader_epoch=-1,
                                committed_metadata="",
                            )
                        ],
                    )
                ],
            )
            return found.error_code, committed.topics[0].partitions[0].error_code

        results = await asyncio.gather(*(find_then_commit(i, c) for i, c in enumerate(clients)))
        assert results == [(0, 0)] * len(clients)

    run_broker(tmp_path, scenario, **{"num.io.threads": 4, "offsets.topic.num.partitions": 8})


class _PartitionsSeenByLaterListener(MetadataListener):
    """A store listener registered after the broker started (as the cache is): records,
    at each topic change, whether the replica manager already had every partition."""

    def __init__(self, server: KafkaServer) -> None:
        self.server = server
        self.seen: list[tuple[str, bool]] = []

    def on_topic_changed(self, topic: Any) -> None:
        replicas = self.server.replicas
        assert replicas is not None
        present = all(
            replicas.partition(topic.name, i) is not None for i in range(topic.partition_count)
        )
        self.seen.append((topic.name, present))

    def on_topic_deleted(self, name: str) -> None:
        replicas = self.server.replicas
        assert replicas is not None
        self.seen.append((name, replicas.partition(name, 0) is None))


def test_partitions_exist_before_the_cache_shows_a_topic(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        services = server.services
        assert services is not None
        listener = _PartitionsSeenByLaterListener(server)
        services.metadata_store.add_listener(listener)
        create: Any = type(make_request("CreateTopics"))
        partitions: Any = type(make_request("CreatePartitions"))
        client = await RawClient.connect(server.bound_port)
        created = await client.call(
            "CreateTopics",
            7,
            create(
                topics=[
                    create.CreatableTopic(
                        name="x",
                        num_partitions=2,
                        replication_factor=1,
                        assignments=[],
                        configs=[],
                    )
                ],
                timeout_ms=1000,
                validate_only=False,
            ),
        )
        grown = await client.call(
            "CreatePartitions",
            3,
            partitions(
                topics=[partitions.CreatePartitionsTopic(name="x", count=3, assignments=None)],
                timeout_ms=1000,
                validate_only=False,
            ),
        )
        assert created.topics[0].error_code == 0 and grown.results[0].error_code == 0
        assert services.metadata_cache.partition_count("x") == 3
        delete: Any = type(make_request("DeleteTopics"))
        deleted = await client.call(
            "DeleteTopics",
            5,
            delete(topic_names=["x"], timeout_ms=1000),
        )
        client.close()
        assert deleted.responses[0].error_code == 0
        assert listener.seen == [("x", True), ("x", True), ("x", True)]
        assert services.metadata_cache.topic("x") is None

    run_broker(tmp_path, scenario)
