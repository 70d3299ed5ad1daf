"""The znode codecs of kafkacore.zk.data: exact bytes for what we write, and decoding of
JSON as Kafka 2.8-3.9 writes it (samples in Kafka's own key order and spacing)."""

from __future__ import annotations

import json
import uuid

import pytest

from kafkacore.zk.data import (
    PERSISTENT_ZK_PATHS,
    BrokerRegistration,
    ClusterId,
    ConfigChangeNotification,
    ControllerRegistration,
    Endpoint,
    EntityConfig,
    IsrChangeNotification,
    LeaderIsrState,
    LogDirEventNotification,
    PartitionReassignment,
    PreferredReplicaElection,
    ProducerIdBlock,
    TopicAssignment,
    decode_controller_epoch,
    encode_controller_epoch,
    partition_state_path,
    sequence_number,
    topic_id_from_string,
    topic_id_to_string,
)

PLAINTEXT = Endpoint("PLAINTEXT", "h1", 9092, "PLAINTEXT")


def test_controller_v1_exact_bytes_and_v2_decodes() -> None:
    reg = ControllerRegistration(broker_id=1, timestamp=1690000000000)
    assert reg.encode() == b'{"version":1,"brokerid":1,"timestamp":"1690000000000"}'
    assert ControllerRegistration.decode(reg.encode()) == reg
    # Kafka 3.4+ writes version 2 with kraftControllerEpoch.
    v2 = ControllerRegistration.decode(
        b'{"version":2,"brokerid":3,"timestamp":"1700000000123","kraftControllerEpoch":-1}'
    )
    assert (v2.broker_id, v2.timestamp, v2.kraft_controller_epoch, v2.version) == (
        3,
        1700000000123,
        -1,
        2,
    )
    # The timestamp is a string; a fresh registration stamps now.
    assert isinstance(json.loads(ControllerRegistration(2).encode())["timestamp"], str)


def test_controller_epoch_is_a_bare_integer() -> None:
    assert encode_controller_epoch(0) == b"0"
    assert encode_controller_epoch(17) == b"17"
    assert decode_controller_epoch(b"5") == 5


def test_broker_v5_exact_bytes() -> None:
    reg = BrokerRegistration(
        id=1, endpoints=(PLAINTEXT,), rack="r1", timestamp=1690000000000, jmx_port=-1
    )
    assert reg.encode() == (
        b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["PLAINTEXT://h1:9092"],"jmx_port":-1,"port":9092,"host":"h1",'
        b'"version":5,"timestamp":"1690000000000","rack":"r1"}'
    )
    assert BrokerRegistration.decode(reg.encode(), 1) == reg


def test_broker_without_rack_and_without_plaintext() -> None:
    ssl = Endpoint("INTERNAL", "10.0.0.1", 9093, "SSL")
    sasl = Endpoint("EXTERNAL", "ext.example", 9094, "SASL_SSL")
    reg = BrokerRegistration(id=7, endpoints=(ssl, sasl), timestamp=1)
    js = json.loads(reg.encode())
    assert "rack" not in js
    assert js["host"] is None and js["port"] == -1
    assert js["listener_security_protocol_map"] == {"INTERNAL": "SSL", "EXTERNAL": "SASL_SSL"}
    assert js["endpoints"] == ["INTERNAL://10.0.0.1:9093", "EXTERNAL://ext.example:9094"]
    assert js["version"] == 5 and js["features"] == {} and js["timestamp"] == "1"
    back = BrokerRegistration.decode(reg.encode(), 7)
    assert back.endpoints == (ssl, sasl) and back.rack is None
    assert back.endpoint("EXTERNAL") == sasl


def test_broker_host_and_port_from_first_plaintext_endpoint() -> None:
    ssl = Endpoint("SSL", "s", 9093, "SSL")
    p1 = Endpoint("CLIENT", "c", 9092, "PLAINTEXT")
    p2 = Endpoint("REPLICATION", "r", 9091, "PLAINTEXT")
    js = json.loads(BrokerRegistration(id=1, endpoints=(ssl, p1, p2), timestamp=1).encode())
    assert (js["host"], js["port"]) == ("c", 9092)


def test_broker_ipv6_endpoint_round_trips() -> None:
    ep = Endpoint("PLAINTEXT", "::1", 9092, "PLAINTEXT")
    reg = BrokerRegistration(id=1, endpoints=(ep,), timestamp=1)
    assert json.loads(reg.encode())["endpoints"] == ["PLAINTEXT://[::1]:9092"]
    assert BrokerRegistration.decode(reg.encode(), 1).endpoints == (ep,)


def test_broker_decodes_kafka_samples() -> None:
    # Kafka 3.9 (a mutable HashMap, so Jackson writes keys in hash order).
    kafka_v5 = (
        b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT",'
        b'"CONTROLLER":"PLAINTEXT"},"endpoints":["PLAINTEXT://localhost:9092"],"jmx_port":-1,'
        b'"port":9092,"host":"localhost","version":5,"timestamp":"1732470000000"}'
    )
    reg = BrokerRegistration.decode(kafka_v5, 0)
    assert reg.endpoints == (Endpoint("PLAINTEXT", "localhost", 9092, "PLAINTEXT"),)
    assert reg.timestamp == 1732470000000 and reg.rack is None and reg.version == 5
    # Version 5 with a feature range (KIP-584).
    with_features = (
        b'{"features":{"metadata.version":{"min_version":1,"max_version":21}},'
        b'"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["PLAINTEXT://b:9092"],"jmx_port":9999,"port":9092,"host":"b",'
        b'"version":5,"timestamp":"1","rack":"rack-a"}'
    )
    reg = BrokerRegistration.decode(with_features, 2)
    assert reg.features == {"metadata.version": {"min_version": 1, "max_version": 21}}
    assert reg.rack == "rack-a" and reg.jmx_port == 9999
    # Version 4 (IBP < 2.7), multiple listeners.
    v4 = (
        b'{"listener_security_protocol_map":{"CLIENT":"PLAINTEXT","REPLICATION":"SSL"},'
        b'"endpoints":["CLIENT://host1:9092","REPLICATION://host1:9093"],"rack":"dc1",'
        b'"jmx_port":-1,"host":"host1","timestamp":"2233345666","port":9092,"version":4}'
    )
    reg = BrokerRegistration.decode(v4, 3)
    assert reg.endpoints == (
        Endpoint("CLIENT", "host1", 9092, "PLAINTEXT"),
        Endpoint("REPLICATION", "host1", 9093, "SSL"),
    )
    # Version 2 (no protocol map: listener names are protocol names) and version 1.
    v2 = (
        b'{"version":2,"host":"localhost","port":9092,"jmx_port":9999,'
        b'"timestamp":"2233345666","endpoints":["PLAINTEXT://host1:9092","SSL://host1:9093"]}'
    )
    assert [e.security_protocol for e in BrokerRegistration.decode(v2, 4).endpoints] == [
        "PLAINTEXT",
        "SSL",
    ]
    v1 = b'{"version":1,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666"}'
    assert BrokerRegistration.decode(v1, 5).endpoints == (
        Endpoint("PLAINTEXT", "localhost", 9092, "PLAINTEXT"),
    )


def test_topic_id_is_kafka_uuid_string() -> None:
    tid = uuid.UUID("7a1b8c2d-3e4f-5a6b-7c8d-9e0f1a2b3c4d")
    text = topic_id_to_string(tid)
    assert len(text) == 22 and "=" not in text
    assert text == "ehuMLT5PWmt8jZ4PGis8TQ"
    assert topic_id_from_string(text) == tid
    # URL-safe alphabet: '-' and '_' instead of '+' and '/'.
    odd = uuid.UUID(bytes=bytes([0xFB, 0xFF] * 8))
    assert "-" in topic_id_to_string(odd) or "_" in topic_id_to_string(odd)
    assert topic_id_from_string(topic_id_to_string(odd)) == odd
    with pytest.raises(ValueError):
        topic_id_from_string("AAAA")


def test_topic_v3_exact_bytes() -> None:
    tid = uuid.UUID("7a1b8c2d-3e4f-5a6b-7c8d-9e0f1a2b3c4d")
    a = TopicAssignment("t", {0: (1, 2, 3), 1: (2, 3, 1)}, topic_id=tid)
    assert a.encode() == (
        b'{"version":3,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},'
        b'"removing_replicas":{},"topic_id":"ehuMLT5PWmt8jZ4PGis8TQ"}'
    )
    assert TopicAssignment.decode(a.encode(), "t") == a
    # Reassigning: adding/removing list only the moving partitions; no topic id, no key.
    moving = TopicAssignment(
        "t", {0: (1, 2, 4), 1: (2, 3)}, adding={0: (4,), 1: ()}, removing={0: (3,)}
    )
    js = json.loads(moving.encode())
    assert js["adding_replicas"] == {"0": [4]} and js["removing_replicas"] == {"0": [3]}
    assert "topic_id" not in js
    back = TopicAssignment.decode(moving.encode(), "t")
    assert back.adding == {0: (4,)} and back.removing == {0: (3,)} and back.topic_id is None


def test_topic_decodes_kafka_samples() -> None:
    kafka = (
        b'{"removing_replicas":{},"partitions":{"2":[1001],"1":[1001],"0":[1001]},'
        b'"topic_id":"ehuMLT5PWmt8jZ4PGis8TQ","adding_replicas":{},"version":3}'
    )
    a = TopicAssignment.decode(kafka, "orders")
    assert a.partitions == {0: (1001,), 1: (1001,), 2: (1001,)}
    assert a.topic_id == uuid.UUID("7a1b8c2d-3e4f-5a6b-7c8d-9e0f1a2b3c4d")
    v1 = b'{"version":1,"partitions":{"0":[0,1]}}'
    a = TopicAssignment.decode(v1, "old")
    assert (a.partitions, a.adding, a.removing, a.topic_id) == ({0: (0, 1)}, {}, {}, None)


def test_partition_state_exact_bytes_and_recovery_state() -> None:
    s = LeaderIsrState(leader=1, leader_epoch=0, isr=(1, 2, 3), controller_epoch=1)
    assert s.encode() == (
        b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}'
    )
    assert LeaderIsrState.decode(s.encode()) == s
    recovering = LeaderIsrState(2, 5, (2,), 3, leader_recovery_state=1)
    assert json.loads(recovering.encode())["leader_recovery_state"] == 1
    assert LeaderIsrState.decode(recovering.encode()) == recovering
    leaderless = LeaderIsrState(-1, 7, (3,), 2)
    assert json.loads(leaderless.encode())["leader"] == -1
    # Kafka's sample, other key order and a RECOVERING state.
    kafka = (
        b'{"controller_epoch":4,"leader":3,"leader_recovery_state":1,"version":1,'
        b'"leader_epoch":9,"isr":[3]}'
    )
    assert LeaderIsrState.decode(kafka) == LeaderIsrState(3, 9, (3,), 4, 1)
    assert partition_state_path("t", 2) == "/brokers/topics/t/partitions/2/state"


def test_entity_config() -> None:
    c = EntityConfig({"retention.ms": "1000", "cleanup.policy": "compact"})
    assert c.encode() == (
        b'{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}'
    )
    assert EntityConfig.decode(c.encode()) == c
    assert EntityConfig.decode(b"").config == {}
    assert EntityConfig.decode(b'{"version":1,"config":{}}').config == {}


def test_config_change_notification_v2_and_v1() -> None:
    n = ConfigChangeNotification("topics/foo")
    assert n.encode() == b'{"version":2,"entity_path":"topics/foo"}'
    assert ConfigChangeNotification.decode(n.encode()) == n
    v1 = b'{"version":1,"entity_type":"topics","entity_name":"bar"}'
    assert ConfigChangeNotification.decode(v1).entity_path == "topics/bar"
    assert (
        ConfigChangeNotification.decode(b'{"version":2,"entity_path":"users/alice/clients/app"}')
    ).entity_path == "users/alice/clients/app"


def test_partition_lists() -> None:
    isr = IsrChangeNotification((("t", 0), ("u", 3)))
    assert isr.encode() == (
        b'{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"u","partition":3}]}'
    )
    assert IsrChangeNotification.decode(isr.encode()) == isr
    pre = PreferredReplicaElection((("t", 1),))
    assert pre.encode() == b'{"version":1,"partitions":[{"topic":"t","partition":1}]}'
    assert PreferredReplicaElection.decode(pre.encode()) == pre
    re = PartitionReassignment({("t", 0): (4, 5, 6)})
    assert re.encode() == (
        b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[4,5,6]}]}'
    )
    assert PartitionReassignment.decode(re.encode()) == re
    # Kafka's Jackson bean order for the reassignment JSON.
    kafka = b'{"version":1,"partitions":[{"topic":"a","partition":2,"replicas":[1,2]}]}'
    assert PartitionReassignment.decode(kafka).partitions == {("a", 2): (1, 2)}


def test_log_dir_event_cluster_id_producer_block() -> None:
    assert LogDirEventNotification(1).encode() == b'{"version":1,"broker":1,"event":1}'
    assert LogDirEventNotification.decode(b'{"version":1,"broker":4,"event":1}').broker == 4
    assert ClusterId("abc").encode() == b'{"version":"1","id":"abc"}'
    assert ClusterId.decode(b'{"version":"1","id":"q1w2e3"}').id == "q1w2e3"
    block = ProducerIdBlock(broker=1, block_start=0, block_end=999)
    assert block.encode() == b'{"version":1,"broker":1,"block_start":"0","block_end":"999"}'
    assert ProducerIdBlock.decode(block.encode()) == block


def test_paths_and_sequence_numbers() -> None:
    assert "/brokers/ids" in PERSISTENT_ZK_PATHS and "/config/ips" in PERSISTENT_ZK_PATHS
    assert len(PERSISTENT_ZK_PATHS) == 14
    assert sequence_number("isr_change_0000000003", "isr_change_") == "0000000003"


def test_utf8_is_written_as_is() -> None:
    c = EntityConfig({"k": "ünïcode"})
    assert "ünïcode".encode() in c.encode()
    assert EntityConfig.decode(c.encode()) == c


def test_garbage_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        LeaderIsrState.decode(b"not json")
    with pytest.raises(ValueError):
        TopicAssignment.decode(b"[1]", "t")
    with pytest.raises(ValueError):
        ClusterId.decode(b"")
