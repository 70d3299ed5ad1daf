"""Admin APIs against the broker as a subprocess: configs (describe, alter, incremental,
applied live), DeleteRecords, DescribeLogDirs, ElectLeaders and reassignments through
confluent-kafka's AdminClient or the raw protocol; OffsetForLeaderEpoch and idempotent
producers (duplicates, out-of-order sequences, fenced epochs, across a restart) through
hand-built requests; confluent-kafka's idempotent Producer."""

from __future__ import annotations

import os
import socket
import struct
import time
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from kafkacore import backend
from kafkacore.protocol import (
    APIS_BY_NAME,
    ErrorCode,
    RequestHeader,
    decode_response,
    encode_request,
)
from support.brokers import Broker

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def admin(broker: Broker) -> Any:
    return admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})


# -- raw protocol --------------------------------------------------------------------------


class RawClient:
    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.cid = 0

    def call(self, name: str, version: int, **fields: Any) -> Any:
        api = APIS_BY_NAME[name]
        self.cid += 1
        request = api.request.cls(**fields)
        self.sock.sendall(encode_request(RequestHeader(api.key, version, self.cid, "t"), request))
        (size,) = struct.unpack(">i", self._read(4))
        cid, response = decode_response(self._read(size), api.key, version)
        assert cid == self.cid
        return response

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            assert chunk, "connection closed"
            data += chunk
        return data

    def close(self) -> None:
        self.sock.close()


def _req(name: str) -> Any:
    return APIS_BY_NAME[name].request.cls


def _create_topic(admin: Any, topic: str, partitions: int = 1, **config: str) -> None:
    futures = admin.create_topics(
        [admin_mod.NewTopic(topic, num_partitions=partitions, config=config)]
    )
    futures[topic].result(10)


def _batch(values: list[bytes], pid: int = -1, epoch: int = -1, seq: int = -1) -> bytes:
    now = int(time.time() * 1000)
    return bytes(
        backend.build_batch(
            [(i, now, None, v, []) for i, v in enumerate(values)],
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=seq,
        )
    )


def _produce(client: RawClient, topic: str, records: bytes) -> Any:
    cls = _req("Produce")
    response = client.call(
        "Produce",
        9,
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            cls.TopicProduceData(
                name=topic, partition_data=[cls.PartitionProduceData(index=0, records=records)]
            )
        ],
    )
    return response.responses[0].partition_responses[0]


def _producer_id(client: RawClient) -> tuple[int, int]:
    response = client.call(
        "InitProducerId",
        4,
        transactional_id=None,
        transaction_timeout_ms=60000,
        producer_id=-1,
        producer_epoch=-1,
    )
    assert response.error_code == 0
    return response.producer_id, response.producer_epoch


# -- configs ---------------------------------------------------------------------------------


def _describe(admin: Any, kind: Any, name: str, **kwargs: Any) -> dict[str, Any]:
    resource = admin_mod.ConfigResource(kind, name)
    result = admin.describe_configs([resource], **kwargs)[resource].result(10)
    return dict(result)


def test_describe_topic_and_broker_configs_with_sources_and_synonyms(
    broker: Broker, admin: Any
) -> None:
    _create_topic(admin, "described", **{"retention.ms": "12345"})
    configs = _describe(admin, admin_mod.ResourceType.TOPIC, "described")
    retention = configs["retention.ms"]
    assert retention.value == "12345"
    assert retention.source == admin_mod.ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert not retention.is_default and not retention.is_read_only
    segment = configs["segment.bytes"]
    assert segment.value == str(1 << 30)
    assert segment.source == admin_mod.ConfigSource.DEFAULT_CONFIG.value
    assert "max.message.bytes" in configs and "cleanup.policy" in configs

    node = _describe(admin, admin_mod.ResourceType.BROKER, "1")
    assert node["log.dirs"].value == str(broker.data)
    assert node["log.dirs"].source == admin_mod.ConfigSource.STATIC_BROKER_CONFIG.value
    assert node["log.dirs"].is_read_only
    assert node["message.max.bytes"].source == admin_mod.ConfigSource.DEFAULT_CONFIG.value
    assert not node["message.max.bytes"].is_read_only

    resource = admin_mod.ConfigResource(admin_mod.ResourceType.TOPIC, "no-such-topic")
    with pytest.raises(ck.KafkaException) as err:
        admin.describe_configs([resource])[resource].result(10)
    assert err.value.args[0].code() == ck.KafkaError.UNKNOWN_TOPIC_OR_PART


def test_describe_configs_key_filter_synonyms_documentation_and_other_brokers(
    broker: Broker, admin: Any
) -> None:
    _create_topic(admin, "described-raw", **{"retention.ms": "12345"})
    client = RawClient(broker.bootstrap)
    cls = _req("DescribeConfigs")
    response = client.call(
        "DescribeConfigs",
        4,
        resources=[
            cls.DescribeConfigsResource(
                resource_type=4, resource_name="1", configuration_keys=["message.max.bytes"]
            ),
            cls.DescribeConfigsResource(
                resource_type=4, resource_name="7", configuration_keys=None
            ),
            cls.DescribeConfigsResource(
                resource_type=3, resource_name="g", configuration_keys=None
            ),
            cls.DescribeConfigsResource(
                resource_type=2,
                resource_name="described-raw",
                configuration_keys=["retention.ms", "segment.bytes"],
            ),
        ],
        include_synonyms=True,
        include_documentation=True,
    )
    client.close()
    own, other, group, topic = response.results
    assert own.error_code == 0 and [c.name for c in own.configs] == ["message.max.bytes"]
    entry = own.configs[0]
    assert entry.config_type == 3 and entry.documentation  # INT
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
        ("message.max.bytes", "1048588", 5)
    ]
    retention, segment = topic.configs
    # the override, then the broker configs behind it (Kafka drops those before the
    # first one named like the broker's own config, here an unset log.retention.ms)
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("retention.ms", "12345", 1)
    ]
    assert [(s.name, s.value, s.source) for s in segment.synonyms] == [
        ("log.segment.bytes", str(1 << 30), 5)
    ]
    assert other.error_code == ErrorCode.INVALID_REQUEST
    assert group.error_code == ErrorCode.INVALID_REQUEST


def test_incremental_alter_topic_config_applies_live(admin: Any) -> None:
    _create_topic(admin, "altered")
    resource = admin_mod.ConfigResource(
        admin_mod.ResourceType.TOPIC,
        "altered",
        incremental_configs=[
            admin_mod.ConfigEntry(
                "retention.ms", "60000", incremental_operation=admin_mod.AlterConfigOpType.SET
            ),
            admin_mod.ConfigEntry(
                "cleanup.policy",
                "compact",
                incremental_operation=admin_mod.AlterConfigOpType.APPEND,
            ),
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(10)
    configs = _describe(admin, admin_mod.ResourceType.TOPIC, "altered")
    assert configs["retention.ms"].value == "60000"
    assert configs["retention.ms"].source == admin_mod.ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["cleanup.policy"].value == "delete,compact"

    bad = admin_mod.ConfigResource(
        admin_mod.ResourceType.TOPIC,
        "altered",
        incremental_configs=[
            admin_mod.ConfigEntry(
                "retention.ms", "1", incremental_operation=admin_mod.AlterConfigOpType.APPEND
            )
        ],
    )
    with pytest.raises(ck.KafkaException) as err:
        admin.incremental_alter_configs([bad])[bad].result(10)
    assert err.value.args[0].code() == ck.KafkaError.INVALID_CONFIG

    # AlterConfigs replaces: retention.ms goes back to the default
    replace = admin_mod.ConfigResource(
        admin_mod.ResourceType.TOPIC, "altered", set_config={"segment.ms": "3600000"}
    )
    admin.alter_configs([replace])[replace].result(10)
    configs = _describe(admin, admin_mod.ResourceType.TOPIC, "altered")
    assert configs["segment.ms"].value == "3600000"
    assert configs["retention.ms"].source == admin_mod.ConfigSource.DEFAULT_CONFIG.value
    assert configs["cleanup.policy"].value == "delete"

    invalid = admin_mod.ConfigResource(
        admin_mod.ResourceType.TOPIC, "altered", set_config={"retention.ms": "soon"}
    )
    with pytest.raises(ck.KafkaException) as err:
        admin.alter_configs([invalid])[invalid].result(10)
    assert err.value.args[0].code() == ck.KafkaError.INVALID_CONFIG


def _set_cluster_default(broker: Broker, name: str, value: str | None) -> None:
    """librdkafka refuses an empty broker resource name: the raw request."""
    cls = _req("IncrementalAlterConfigs")
    client = RawClient(broker.bootstrap)
    response = client.call(
        "IncrementalAlterConfigs",
        1,
        resources=[
            cls.AlterConfigsResource(
                resource_type=4,
                resource_name="",
                configs=[
                    cls.AlterableConfig(
                        name=name, config_operation=0 if value is not None else 1, value=value
                    )
                ],
            )
        ],
        validate_only=False,
    )
    client.close()
    assert response.responses[0].error_code == 0


def _describe_cluster_default(broker: Broker) -> dict[str, Any]:
    cls = _req("DescribeConfigs")
    client = RawClient(broker.bootstrap)
    response = client.call(
        "DescribeConfigs",
        4,
        resources=[
            cls.DescribeConfigsResource(resource_type=4, resource_name="", configuration_keys=None)
        ],
        include_synonyms=True,
        include_documentation=False,
    )
    client.close()
    return {c.name: c for c in response.results[0].configs}


def test_cluster_default_message_max_bytes_enforced_on_next_produce(
    broker: Broker, admin: Any
) -> None:
    _create_topic(admin, "limited")
    _set_cluster_default(broker, "message.max.bytes", "2000")
    try:
        default = _describe_cluster_default(broker)
        assert default["message.max.bytes"].value == "2000"
        assert default["message.max.bytes"].config_source == 3  # DYNAMIC_DEFAULT_BROKER_CONFIG
        topic = _describe(admin, admin_mod.ResourceType.TOPIC, "limited")
        assert topic["max.message.bytes"].value == "2000"

        client = RawClient(broker.bootstrap)
        refused = _produce(client, "limited", _batch([os.urandom(5000)]))
        assert refused.error_code == ErrorCode.MESSAGE_TOO_LARGE
        assert _produce(client, "limited", _batch([b"small"])).error_code == 0
        client.close()
    finally:
        _set_cluster_default(broker, "message.max.bytes", None)
    assert _describe_cluster_default(broker) == {}
    client = RawClient(broker.bootstrap)
    assert _produce(client, "limited", _batch([os.urandom(5000)])).error_code == 0
    client.close()


def test_broker_configs_only_dynamic_ones_can_change(admin: Any) -> None:
    static = admin_mod.ConfigResource(
        admin_mod.ResourceType.BROKER, "1", set_config={"log.dirs": "/elsewhere"}
    )
    with pytest.raises(ck.KafkaException) as err:
        admin.alter_configs([static])[static].result(10)
    assert err.value.args[0].code() == ck.KafkaError.INVALID_REQUEST
    assert "Cannot update these configs dynamically: [log.dirs]" in str(err.value)

    per_broker = admin_mod.ConfigResource(
        admin_mod.ResourceType.BROKER,
        "1",
        incremental_configs=[
            admin_mod.ConfigEntry(
                "log.retention.ms",
                "7200000",
                incremental_operation=admin_mod.AlterConfigOpType.SET,
            )
        ],
    )
    admin.incremental_alter_configs([per_broker])[per_broker].result(10)
    try:
        node = _describe(admin, admin_mod.ResourceType.BROKER, "1")
        assert node["log.retention.ms"].value == "7200000"
        assert node["log.retention.ms"].source == admin_mod.ConfigSource.DYNAMIC_BROKER_CONFIG.value
        _create_topic(admin, "inherits")
        topic = _describe(admin, admin_mod.ResourceType.TOPIC, "inherits")
        assert topic["retention.ms"].value == "7200000"
    finally:
        clear = admin_mod.ConfigResource(admin_mod.ResourceType.BROKER, "1", set_config={})
        admin.alter_configs([clear])[clear].result(10)
    assert _describe(admin, admin_mod.ResourceType.TOPIC, "inherits")["retention.ms"].value == str(
        7 * 24 * 3600 * 1000
    )


# -- records, log dirs, leaders ---------------------------------------------------------------


def test_delete_records_advances_the_log_start_offset(broker: Broker, admin: Any) -> None:
    _create_topic(admin, "purged")
    client = RawClient(broker.bootstrap)
    for i in range(10):
        assert _produce(client, "purged", _batch([b"%d" % i])).error_code == 0
    client.close()
    tp = ck.TopicPartition("purged", 0, 4)
    result = admin.delete_records([tp])[tp].result(10)
    assert result.low_watermark == 4
    earliest = admin.list_offsets({ck.TopicPartition("purged", 0): admin_mod.OffsetSpec.earliest()})
    assert next(iter(earliest.values())).result(10).offset == 4

    beyond = ck.TopicPartition("purged", 0, 11)
    with pytest.raises(ck.KafkaException) as err:
        admin.delete_records([beyond])[beyond].result(10)
    assert err.value.args[0].code() == ck.KafkaError.OFFSET_OUT_OF_RANGE

    everything = ck.TopicPartition("purged", 0, ck.OFFSET_END)
    assert admin.delete_records([everything])[everything].result(10).low_watermark == 10


def test_describe_log_dirs_lists_partitions_with_sizes(broker: Broker, admin: Any) -> None:
    _create_topic(admin, "sized", partitions=2)
    client = RawClient(broker.bootstrap)
    assert _produce(client, "sized", _batch([b"x" * 100])).error_code == 0
    cls = _req("DescribeLogDirs")
    response = client.call(
        "DescribeLogDirs", 4, topics=[cls.DescribableLogDirTopic(topic="sized", partitions=[0, 1])]
    )
    everything = client.call("DescribeLogDirs", 0, topics=None)
    client.close()
    assert response.error_code == 0
    (result,) = response.results
    assert result.error_code == 0 and result.log_dir == str(broker.data)
    assert result.total_bytes > 0 and 0 <= result.usable_bytes <= result.total_bytes
    (topic,) = result.topics
    sizes = {p.partition_index: p.partition_size for p in topic.partitions}
    assert sizes[0] > 100 and sizes[1] == 0
    assert all(p.offset_lag == 0 and not p.is_future_key for p in topic.partitions)
    names = {t.name for t in everything.results[0].topics}
    assert {"sized", "purged"} <= names or "sized" in names


def test_elect_leaders_and_reassignments_on_one_node(broker: Broker, admin: Any) -> None:
    _create_topic(admin, "elected")
    known, unknown = ck.TopicPartition("elected", 0), ck.TopicPartition("elected", 5)
    result = admin.elect_leaders(ck.ElectionType.PREFERRED, [known, unknown]).result(10)
    assert result[known].code() == ck.KafkaError.ELECTION_NOT_NEEDED
    assert result[unknown].code() == ck.KafkaError.UNKNOWN_TOPIC_OR_PART

    client = RawClient(broker.bootstrap)
    cls = _req("AlterPartitionReassignments")

    def reassign(replicas: list[int] | None) -> int:
        response = client.call(
            "AlterPartitionReassignments",
            0,
            timeout_ms=1000,
            topics=[
                cls.ReassignableTopic(
                    name="elected",
                    partitions=[cls.ReassignablePartition(partition_index=0, replicas=replicas)],
                )
            ],
        )
        return int(response.responses[0].partitions[0].error_code)

    assert reassign([1]) == 0
    assert reassign([1, 2]) == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert reassign(None) == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
    listed = client.call("ListPartitionReassignments", 0, timeout_ms=1000, topics=None)
    assert listed.error_code == 0 and listed.topics == []
    client.close()


def test_offset_for_leader_epoch(broker: Broker, admin: Any) -> None:
    _create_topic(admin, "epochs")
    client = RawClient(broker.bootstrap)
    for _ in range(3):
        assert _produce(client, "epochs", _batch([b"a", b"b"])).error_code == 0
    cls = _req("OffsetForLeaderEpoch")

    def ask(topic: str, partition: int, epoch: int, current: int = -1) -> Any:
        response = client.call(
            "OffsetForLeaderEpoch",
            4,
            replica_id=-1,
            topics=[
                cls.OffsetForLeaderTopic(
                    topic=topic,
                    partitions=[
                        cls.OffsetForLeaderPartition(
                            partition=partition, current_leader_epoch=current, leader_epoch=epoch
                        )
                    ],
                )
            ],
        )
        return response.topics[0].partitions[0]

    found = ask("epochs", 0, 0, current=0)
    assert (found.error_code, found.leader_epoch, found.end_offset) == (0, 0, 6)
    assert ask("epochs", 0, 0, current=1).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    # above every known epoch: undefined, as Kafka's LeaderEpochFileCache answers
    unknown = ask("epochs", 0, 3)
    assert (unknown.error_code, unknown.leader_epoch, unknown.end_offset) == (0, -1, -1)
    assert ask("nope", 0, 0).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert ask("epochs", 9, 0).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    client.close()


# -- idempotent producers ------------------------------------------------------------------


def test_idempotent_duplicates_out_of_order_and_fenced_epochs(broker: Broker, admin: Any) -> None:
    _create_topic(admin, "idempotent")
    client = RawClient(broker.bootstrap)
    pid, epoch = _producer_id(client)
    other_pid, _ = _producer_id(client)
    assert other_pid != pid and epoch == 0

    first = _produce(client, "idempotent", _batch([b"a", b"b"], pid, epoch, 0))
    second = _produce(client, "idempotent", _batch([b"c"], pid, epoch, 2))
    assert (first.error_code, first.base_offset) == (0, 0)
    assert (second.error_code, second.base_offset) == (0, 2)

    retry = _produce(client, "idempotent", _batch([b"a", b"b"], pid, epoch, 0))
    assert (retry.error_code, retry.base_offset) == (0, 0)
    gap = _produce(client, "idempotent", _batch([b"d"], pid, epoch, 5))
    assert gap.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER

    bumped = _produce(client, "idempotent", _batch([b"e"], pid, epoch + 1, 0))
    assert (bumped.error_code, bumped.base_offset) == (0, 3)
    fenced = _produce(client, "idempotent", _batch([b"f"], pid, epoch, 3))
    assert fenced.error_code == ErrorCode.INVALID_PRODUCER_EPOCH

    end = admin.list_offsets({ck.TopicPartition("idempotent", 0): admin_mod.OffsetSpec.latest()})
    assert next(iter(end.values())).result(10).offset == 4  # nothing duplicated
    client.close()


def test_init_producer_id_without_transactional_id_always_gives_a_new_id(broker: Broker) -> None:
    client = RawClient(broker.bootstrap)
    pid, epoch = _producer_id(client)
    again = client.call(
        "InitProducerId",
        4,
        transactional_id=None,
        transaction_timeout_ms=60000,
        producer_id=pid,
        producer_epoch=epoch,
    )
    client.close()
    assert again.error_code == 0 and again.producer_id != pid and again.producer_epoch == 0


def test_duplicate_recognised_after_a_restart(tmp_path: Path) -> None:
    b = Broker(tmp_path / "data")
    b.data.mkdir()
    b.start()
    try:
        client = RawClient(b.bootstrap)
        cls = _req("CreateTopics")
        created = client.call(
            "CreateTopics",
            5,
            topics=[
                cls.CreatableTopic(
                    name="restarted",
                    num_partitions=1,
                    replication_factor=1,
                    assignments=[],
                    configs=[],
                )
            ],
            timeout_ms=5000,
            validate_only=False,
        )
        assert created.topics[0].error_code == 0
        pid, epoch = _producer_id(client)
        for seq in range(3):
            response = _produce(client, "restarted", _batch([b"v"], pid, epoch, seq))
            assert (response.error_code, response.base_offset) == (0, seq)
        client.close()
        b.stop()
        assert any(name.endswith(".snapshot") for name in os.listdir(b.data / "restarted-0"))
        b.start()
        client = RawClient(b.bootstrap)
        retry = _produce(client, "restarted", _batch([b"v"], pid, epoch, 2))
        assert (retry.error_code, retry.base_offset) == (0, 2)
        nxt = _produce(client, "restarted", _batch([b"v"], pid, epoch, 3))
        assert (nxt.error_code, nxt.base_offset) == (0, 3)
        client.close()
    finally:
        if b.proc is not None:
            b.stop()


def test_confluent_idempotent_producer(broker: Broker, admin: Any) -> None:
    _create_topic(admin, "librdkafka-idempotent")
    producer = ck.Producer(
        {"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 5}
    )
    errors: list[Any] = []
    offsets: list[int] = []

    def report(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)
        else:
            offsets.append(msg.offset())

    for i in range(50):
        producer.produce("librdkafka-idempotent", value=b"%d" % i, on_delivery=report)
    assert producer.flush(20) == 0
    assert errors == []
    assert sorted(offsets) == list(range(50))
