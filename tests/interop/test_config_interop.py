"""kafkacore's configuration model against Apache Kafka's own classes (the jars of
``scripts/kafka-jars.sh``): the same inputs go to Kafka's ``LogConfig``, ``KafkaConfig``,
``DynamicBrokerConfig``, ``ConfigHelper`` (DescribeConfigs) and ``java.util.Properties``, and
every value, error message, source and synonym must come out the same.

One JVM answers all cases (a single-file Java program, compiled on the fly). Needs Java 17+.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafkacore.config import (
    ALL_TOPIC_CONFIG_SYNONYMS,
    BROKER_CONFIG_DEF,
    DYNAMIC_UPDATE_MODES,
    TOPIC_CONFIG_DEF,
    BrokerConfig,
    ConfigDef,
    ConfigEntry,
    ConfigError,
    LogConfig,
    convert_to_string,
    parse_properties,
)
from kafkacore.config.broker import DYNAMIC_ONLY_BROKER_CONFIG_DEF
from support.kafka_jars import kafka_libs as fetch_kafka_libs

pytestmark = pytest.mark.interop


# A KRaft combined node, the smallest configuration Kafka 4 accepts.
BASE = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": "1@localhost:9093",
    "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
    "controller.listener.names": "CONTROLLER",
}
SSL_MAP = {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL"}

TOPIC_CASES: list[dict[str, str]] = [
    {"segment.bytes": "-5"},
    {"segment.bytes": "abc"},
    {"segment.bytes": "1048575"},
    {"segment.bytes": " 1048576 "},
    {"cleanup.policy": "delete,,compact"},
    {"cleanup.policy": "delete,delete"},
    {"cleanup.policy": ""},
    {"cleanup.policy": "foo"},
    {"cleanup.policy": "Compact"},
    {"cleanup.policy": "compact , delete"},
    {"message.timestamp.difference.max.ms": "5"},
    {"message.format.version": "3.0"},
    {"message.downconversion.enable": "true"},
    {"min.cleanable.dirty.ratio": "2"},
    {"min.cleanable.dirty.ratio": "-0.5"},
    {"min.cleanable.dirty.ratio": "1e-3"},
    {"min.cleanable.dirty.ratio": "NaN"},
    {"min.cleanable.dirty.ratio": "0.5f"},
    {"min.cleanable.dirty.ratio": "1e400"},
    {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
    {"compression.gzip.level": "12"},
    {"compression.gzip.level": "0"},
    {"compression.gzip.level": "-1"},
    {"compression.lz4.level": "18"},
    {"compression.zstd.level": "-200000"},
    {"compression.type": "GZIP"},
    {"compression.type": "lz4"},
    {"leader.replication.throttled.replicas": "foo"},
    {"leader.replication.throttled.replicas": "*"},
    {"leader.replication.throttled.replicas": "0:1, 1:2"},
    {"follower.replication.throttled.replicas": "*,0:1"},
    {"internal.segment.bytes": "1000"},
    {"retention.ms": "-2"},
    {"retention.bytes": "-5"},
    {"unclean.leader.election.enable": "yes"},
    {"preallocate": "TRUE"},
    {"message.timestamp.type": "createtime"},
    {"max.message.bytes": "99999999999"},
    {"flush.ms": "-1"},
    {"segment.ms": "0"},
    {"segment.index.bytes": "3"},
    {"local.retention.ms": "-3"},
    {"message.timestamp.after.max.ms": "-1"},
    {"index.interval.bytes": "1.5"},
    {"remote.storage.enable": "true"},
    {"segment.jitter.ms": "+7"},
    {"retention.ms": "9223372036854775808"},
    {"min.insync.replicas": "0"},
    {"no.such.config": "1"},
]

BROKER_CASES: list[dict[str, Any]] = [
    {},
    {"log.retention.minutes": "5", "log.retention.hours": "1"},
    {"log.retention.hours": "1"},
    {"log.retention.ms": "-7"},
    {"log.retention.ms": "0"},
    {"log.roll.hours": "2"},
    {"log.roll.ms": "1000", "log.roll.hours": "2"},
    {"log.roll.jitter.hours": "1"},
    {"log.roll.jitter.ms": "-1"},
    {"log.roll.ms": "0"},
    {"log.flush.scheduler.interval.ms": "77"},
    {"log.flush.interval.ms": "5", "log.flush.scheduler.interval.ms": "77"},
    {"log.dirs": "/a, /b", "log.dir": "/c"},
    {"log.dir": "/c"},
    {"log.dirs": "/a,/a"},
    {"log.dirs": ""},
    {"log.dirs": "/a,,/b"},
    {"log.dir": ""},
    {"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
    {"listeners": "PLAINTEXT://0.0.0.0:9092,CONTROLLER://:9093"},
    {"listeners": "PLAINTEXT://:9092,CONTROLLER://0.0.0.0:9093"},
    {"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9094,CONTROLLER://:9093"},
    {"listeners": "FOO://:9092,CONTROLLER://:9093"},
    {"listeners": "plaintext://:9092,CONTROLLER://:9093"},
    {"listeners": ""},
    {"node.id": "1", "broker.id": "2"},
    {"node.id": "-5"},
    {"log.segment.bytes": "1000"},
    {"log.cleaner.threads": "0"},
    {"log.cleaner.dedupe.buffer.size": "1048576"},
    {"replica.fetch.wait.max.ms": "40000"},
    {"replica.fetch.wait.max.ms": "31000", "replica.socket.timeout.ms": "40000"},
    {"queued.max.request.bytes": "10"},
    {"max.connections.per.ip": "0"},
    {"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "127.0.0.1:5"},
    {"connection.failed.authentication.delay.ms": "700000"},
    {"num.partitions": "1.5"},
    {"num.partitions": "99999999999"},
    {"auto.create.topics.enable": " TRUE "},
    {"offsets.topic.replication.factor": "40000"},
    {"group.consumer.migration.policy": "foo"},
    {"compression.type": "GZIP"},
    {"listener.security.protocol.map": "PLAINTEXT:FOO,CONTROLLER:PLAINTEXT"},
    {"inter.broker.listener.name": "FOO"},
    {"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "SSL"},
    {**SSL_MAP, "listeners": "garbage,CONTROLLER://:9093"},
    {**SSL_MAP, "listeners": "PLAINTEXT://host:abc,CONTROLLER://:9093"},
    {**SSL_MAP, "listeners": "PLAINTEXT://:9092,SSL://:9092,CONTROLLER://:9093"},
    {**SSL_MAP, "listeners": "PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092,CONTROLLER://:9093"},
    {**SSL_MAP, "listeners": "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.2:9092,CONTROLLER://:9093"},
    {**SSL_MAP, "advertised.listeners": "PLAINTEXT://h:1,PLAINTEXT://h:2"},
    {**SSL_MAP, "advertised.listeners": "PLAINTEXT://h:9092,CONTROLLER://h:9092"},
    {**SSL_MAP, "advertised.listeners": "PLAINTEXT://h:9092,SSL://h:9095"},
    {**SSL_MAP, "inter.broker.listener.name": "SSL"},
    {
        "log.cleanup.policy": "compact,delete",
        "message.max.bytes": "2000",
        "compression.type": "zstd",
        "compression.zstd.level": "7",
        "log.message.timestamp.type": "LogAppendTime",
        "log.cleaner.min.cleanable.ratio": "0.25",
        "log.preallocate": "true",
        "min.insync.replicas": "2",
        "unclean.leader.election.enable": "true",
        "log.local.retention.ms": "1000",
    },
    {"dynamic_default": {"log.retention.ms": "1000"}, "log.retention.hours": "5"},
    {"dynamic_broker": {"log.roll.hours": "3"}, "log.roll.ms": "5000"},
    {"dynamic_broker": {"log.retention.ms": "bad", "message.max.bytes": "5000"}},
    {"dynamic_default": {"listeners": "PLAINTEXT://:1", "log.segment.bytes": "2000000"}},
]

DESCRIBE_TOPIC_CASES: list[dict[str, Any]] = [
    {"props": {}, "overrides": {}},
    {
        "props": {"log.retention.minutes": "5", "log.segment.bytes": "2000000"},
        "overrides": {
            "retention.bytes": "10",
            "cleanup.policy": "compact,delete",
            "min.cleanable.dirty.ratio": "0.3",
        },
    },
    {
        "props": {"log.retention.hours": "24"},
        "overrides": {"retention.ms": "1000"},
        "dynamic_default": {"log.retention.ms": "1000", "log.cleaner.min.cleanable.ratio": "0.2"},
        "dynamic_broker": {"log.segment.bytes": "3000000"},
    },
    {
        "props": {"log.flush.interval.ms": "100", "log.roll.hours": "2"},
        "overrides": {"segment.jitter.ms": "10"},
        "dynamic_broker": {"log.retention.ms": "5000", "log.roll.ms": "7000"},
    },
]

BROKER_DESCRIBE_NAMES = [
    "log.retention.ms",
    "log.retention.minutes",
    "log.retention.hours",
    "log.roll.ms",
    "log.roll.hours",
    "log.flush.interval.ms",
    "log.flush.scheduler.interval.ms",
    "num.io.threads",
    "listeners",
    "node.id",
    "broker.id",
    "log.dirs",
    "log.cleaner.io.max.bytes.per.second",
    "message.max.bytes",
    "unclean.leader.election.enable",
    "log.cleanup.policy",
    "foo.bar",
]

DESCRIBE_BROKER_CASES: list[dict[str, Any]] = [
    {"props": {}},
    {
        "props": {"log.retention.minutes": "5", "num.io.threads": "4", "foo.bar": "x"},
        "dynamic_broker": {"log.retention.ms": "1000"},
    },
    {
        "props": {"log.roll.ms": "5000", "log.dirs": "/a,/b"},
        "dynamic_default": {"message.max.bytes": "2000", "log.roll.hours": "3"},
        "dynamic_broker": {"unclean.leader.election.enable": "true"},
    },
]

DYNAMIC_CASES: list[tuple[dict[str, str], bool]] = [
    ({"log.retention.hours": "5"}, True),
    ({"num.partitions": "5"}, True),
    ({"num.partitions": "5", "log.retention.hours": "5", "auto.create.topics.enable": "x"}, True),
    ({"listeners": "PLAINTEXT://:9092"}, False),
    ({"listeners": "PLAINTEXT://:9092"}, True),
    ({"log.retention.ms": "abc"}, True),
    ({"ssl.keystore.location": "/x"}, True),
    ({"leader.replication.throttled.rate": "-1"}, True),
    ({"leader.replication.throttled.rate": "100"}, False),
    ({"some.custom.thing": "1"}, True),
    ({"log.segment.bytes": "5"}, False),
    ({"log.retention.ms": "1000", "message.max.bytes": "100"}, False),
]

PROPERTIES_CASES: list[bytes] = [
    b"a=b\\\n  c\n# comment\nd:e\n",
    b"key value\nkey2\t=\t value2  \n! bang comment\n   \n",
    b"k\\ ey=v\\=al\\:ue\nx\\\\=y\n",
    b"uni=\\u0041\\u00e9\\u4e2d\\uD83D\\uDE00\ntab=a\\tb\\nc\\rd\\fe\\qz\n",
    b"crlf=1\r\nnext=2\r\nmulti=a\\\r\n   b\r\n",
    b"latin=\xe9t\xe9\nempty=\nonlykey\n=novalue\n:also\n",
    b"# only comments\n#=x\n  ! more\n",
    b"a=1\na=2\n",
    b"trail=x\\\\\ncont=y\\",
    b"sep  =  spaced\nsep2 : colon\nsep3 = = double\n",
    b"comment.continued=x # not a comment\n#a\\\nb=c\n",
    b"\\\n#hash=after continuation\n",
    b"\xef\xbb\xbfbom=1\n",
]


# Where kafkacore's broker deliberately differs from Kafka 4 (see kafkacore.config.broker):
# its controller is not a KRaft quorum (so the quorum's voter lists are parsed but their
# entries not checked), and ZooKeeper backs the multi-broker mode.
KAFKACORE_BROKER_DEVIATIONS = {
    "node.id",
    "process.roles",
    "controller.listener.names",
    "controller.quorum.voters",
    "controller.quorum.bootstrap.servers",
}
KAFKACORE_ONLY_BROKER_CONFIGS = {
    "zookeeper.connect",
    "zookeeper.session.timeout.ms",
    "zookeeper.connection.timeout.ms",
    "zookeeper.set.acl",
    "zookeeper.max.in.flight.requests",
    "controlled.shutdown.max.retries",
    "controlled.shutdown.retry.backoff.ms",
    # the ZooKeeper controller's auto rebalance threshold (Kafka 3.9 has it, 4.x not)
    "leader.imbalance.per.broker.percentage",
    # read by Kafka's authorizer from the originals; internal keys here (never described)
    "super.users",
    "allow.everyone.if.no.acl.found",
    # kafkacore's web console (Kafka has none)
    "console.listeners",
    "console.read.only",
    "console.audit.topic",
}


# KRaft nodes as Kafka 4.3's KafkaConfig.validateValues sees them (whole property sets,
# not merged into BASE): controller-only, broker-only and combined, right and wrong.
_CONTROLLER = {
    "process.roles": "controller",
    "node.id": "1",
    "listeners": "CONTROLLER://127.0.0.1:9093",
    "controller.listener.names": "CONTROLLER",
    "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
}
_BROKER = {
    "process.roles": "broker",
    "node.id": "2",
    "listeners": "PLAINTEXT://127.0.0.1:9092",
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
}
KRAFT_CASES: list[dict[str, str]] = [
    _CONTROLLER,
    {**_CONTROLLER, "controller.quorum.bootstrap.servers": ""},
    {**_CONTROLLER, "controller.quorum.voters": "2@127.0.0.1:9093"},
    {**_CONTROLLER, "controller.quorum.voters": "1@127.0.0.1:9093,3@h:1"},
    {**_CONTROLLER, "controller.quorum.voters": "x@127.0.0.1:9093"},
    {**_CONTROLLER, "controller.quorum.voters": "1@:9093"},
    {**_CONTROLLER, "controller.quorum.voters": "1@host"},
    {**_CONTROLLER, "controller.quorum.voters": "1@0.0.0.0:9093"},
    {**_CONTROLLER, "controller.quorum.voters": "1@"},
    {**_CONTROLLER, "controller.quorum.bootstrap.servers": "nohost"},
    {**_CONTROLLER, "controller.quorum.bootstrap.servers": "h:x"},
    {**_CONTROLLER, "listeners": "CONTROLLER://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092"},
    {**_CONTROLLER, "controller.listener.names": "OTHER"},
    {**_CONTROLLER, "controller.listener.names": "CONTROLLER,OTHER"},
    {**_CONTROLLER, "broker.heartbeat.interval.ms": "5000"},
    {**_CONTROLLER, "controller.quorum.auto.join.enable": "true"},
    {**_CONTROLLER, "process.roles": "controller,foo"},
    _BROKER,
    {
        **_BROKER,
        "controller.quorum.voters": "2@127.0.0.1:9093",
        "controller.quorum.bootstrap.servers": "",
    },
    {**_BROKER, "controller.listener.names": ""},
    {**_BROKER, "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"},
    {**_BROKER, "controller.quorum.auto.join.enable": "true"},
    {**_BROKER, "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"},
    {
        **_CONTROLLER,
        "process.roles": "broker,controller",
        "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
    },
    {**_CONTROLLER, "process.roles": "broker,controller"},
]


def _oracle_input() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = [{"kind": "definitions"}]
    cases += [{"kind": "topic_validate", "props": p} for p in TOPIC_CASES]
    for case in BROKER_CASES:
        extra = {k: v for k, v in case.items() if not k.startswith("dynamic_")}
        entry: dict[str, Any] = {"kind": "broker", "props": {**BASE, **extra}}
        for k in ("dynamic_default", "dynamic_broker"):
            if k in case:
                entry[k] = case[k]
        cases.append(entry)
    for case in DESCRIBE_TOPIC_CASES:
        cases.append({**case, "kind": "describe_topic", "props": {**BASE, **case["props"]}})
    for case in DESCRIBE_BROKER_CASES:
        cases.append(
            {
                **case,
                "kind": "describe_broker",
                "props": {**BASE, **case["props"]},
                "names": BROKER_DESCRIBE_NAMES,
            }
        )
    cases += [
        {"kind": "dynamic_validate", "props": p, "per_broker": per_broker}
        for p, per_broker in DYNAMIC_CASES
    ]
    cases += [
        {"kind": "properties", "data": base64.b64encode(data).decode()} for data in PROPERTIES_CASES
    ]
    cases += [{"kind": "kraft", "props": props} for props in KRAFT_CASES]
    return cases


@pytest.fixture(scope="module")
def kafka_libs() -> Path:
    return fetch_kafka_libs()


@pytest.fixture(scope="module")
def kafka(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Kafka's answers to every case, in ``_oracle_input()`` order."""
    source = tmp_path_factory.mktemp("config-oracle") / "ConfigOracle.java"
    source.write_text(ORACLE_JAVA, encoding="utf-8")
    cmd = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    cmd += ["-cp", f"{kafka_libs}/*", str(source)]
    proc = subprocess.run(
        cmd,
        input=json.dumps(_oracle_input()).encode(),
        capture_output=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"ConfigOracle failed:\n{proc.stderr.decode()[-4000:]}")
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    return results


def _offset(kind: str) -> int:
    return next(i for i, c in enumerate(_oracle_input()) if c["kind"] == kind)


def _outcome(fn: Any) -> dict[str, Any]:
    try:
        return {"ok": True, "value": fn()}
    except ConfigError as e:
        return {"error": str(e)}


def _entry(e: ConfigEntry) -> dict[str, Any]:
    return {
        "name": e.name,
        "value": e.value,
        "source": int(e.source),
        "sensitive": e.is_sensitive,
        "read_only": e.read_only,
        "synonyms": [[s.name, s.value, int(s.source)] for s in e.synonyms],
    }


def _broker(case: dict[str, Any], *, validate: bool = False) -> BrokerConfig:
    broker = BrokerConfig({**BASE, **case.get("props", {})})
    if "dynamic_default" in case or "dynamic_broker" in case:
        broker = broker.with_dynamic(
            case.get("dynamic_broker", {}), case.get("dynamic_default", {}), validate=validate
        )
    return broker


def _definitions(config_def: ConfigDef) -> dict[str, dict[str, Any]]:
    return {
        key.name: {
            "type": key.type.name,
            "default": convert_to_string(key.default_value(), key.type)
            if key.has_default
            else "<NO_DEFAULT>",
            "valid_values": key.valid_values,
            "importance": key.importance.name,
            "internal": key.internal,
        }
        for key in config_def.config_keys()
    }


def test_topic_configs_are_defined_exactly_as_kafka_defines_them(
    kafka: list[dict[str, Any]],
) -> None:
    assert _definitions(TOPIC_CONFIG_DEF) == kafka[_offset("definitions")]["topic"]


def test_broker_configs_are_defined_as_kafka_defines_them(kafka: list[dict[str, Any]]) -> None:
    theirs = kafka[_offset("definitions")]["broker"]
    ours = _definitions(BROKER_CONFIG_DEF)
    assert set(ours) - set(theirs) == KAFKACORE_ONLY_BROKER_CONFIGS
    differing = {
        name: (definition, theirs[name])
        for name, definition in ours.items()
        if name in theirs and name not in KAFKACORE_BROKER_DEVIATIONS and definition != theirs[name]
    }
    assert not differing, "\n".join(f"{n}: ours {o} Kafka {t}" for n, (o, t) in differing.items())
    dynamic_only = kafka[_offset("definitions")]["dynamic_only"]
    for name, definition in _definitions(DYNAMIC_ONLY_BROKER_CONFIG_DEF).items():
        assert definition == dynamic_only[name], name


def test_topic_synonyms_and_dynamic_modes_are_kafkas(kafka: list[dict[str, Any]]) -> None:
    definitions = kafka[_offset("definitions")]
    ours = {k: [s.name for s in v] for k, v in ALL_TOPIC_CONFIG_SYNONYMS.items()}
    assert ours == definitions["synonyms"]
    assert definitions["dynamic_modes"] == DYNAMIC_UPDATE_MODES


@pytest.mark.parametrize("index", range(len(TOPIC_CASES)))
def test_topic_validation_matches_kafka(kafka: list[dict[str, Any]], index: int) -> None:
    expected = kafka[_offset("topic_validate") + index]
    got = _outcome(lambda: LogConfig.validate(TOPIC_CASES[index]))
    if "error" in expected:
        assert got == {"error": expected["error"]}
    else:
        assert "error" not in got, got


@pytest.mark.parametrize("index", range(len(BROKER_CASES)))
def test_broker_config_matches_kafka(kafka: list[dict[str, Any]], index: int) -> None:
    expected = kafka[_offset("broker") + index]
    case = BROKER_CASES[index]
    props = {k: v for k, v in case.items() if not k.startswith("dynamic_")}

    def build() -> dict[str, Any]:
        b = _broker({"props": props, **{k: v for k, v in case.items() if k.startswith("dyn")}})
        extract = {}
        for name, value in sorted(b.extract_log_config_map().items()):
            extract[name] = ",".join(value) if isinstance(value, list) else _java(value)
        return {
            "log_retention_ms": b.log_retention_ms,
            "log_roll_ms": b.log_roll_ms,
            "log_roll_jitter_ms": b.log_roll_jitter_ms,
            "log_flush_interval_ms": b.log_flush_interval_ms,
            "node_id": b.node_id,
            "log_dirs": b.log_dirs,
            "extract": extract,
        }

    got = _outcome(build)
    if "error" in expected:
        assert got == {"error": expected["error"]}
    else:
        assert got.get("value") == expected


@pytest.mark.parametrize("index", range(len(KRAFT_CASES)))
def test_kraft_node_config_matches_kafka(kafka: list[dict[str, Any]], index: int) -> None:
    expected = kafka[_offset("kraft") + index]

    def build() -> dict[str, Any]:
        return {"node_id": BrokerConfig(KRAFT_CASES[index]).node_id}

    got = _outcome(build)
    if "error" in expected:
        assert got == {"error": expected["error"]}
    else:
        assert got.get("value") == expected


def _java(value: Any) -> str:
    from kafkacore.config.defs import java_str

    return java_str(value)


@pytest.mark.parametrize("index", range(len(DESCRIBE_TOPIC_CASES)))
def test_topic_describe_matches_kafka(kafka: list[dict[str, Any]], index: int) -> None:
    expected = kafka[_offset("describe_topic") + index]["entries"]
    case = DESCRIBE_TOPIC_CASES[index]
    topic = LogConfig(case["overrides"], _broker(case))
    assert [_entry(e) for e in topic.describe()] == expected


@pytest.mark.parametrize("index", range(len(DESCRIBE_BROKER_CASES)))
def test_broker_describe_matches_kafka(kafka: list[dict[str, Any]], index: int) -> None:
    """Both ways: every entry Kafka describes (every config it defines or was given) is
    ours too, equal, unless kafkacore does not define that config (Kafka 4's KRaft-only,
    share-group, streams-group, tiered-storage manager configs...; the definitions test
    lists them); and everything kafkacore describes, Kafka describes, but the configs of
    kafkacore's own (its ZooKeeper mode: ``KAFKACORE_ONLY_BROKER_CONFIGS``)."""
    expected = kafka[_offset("describe_broker") + index]["entries"]
    broker = _broker(DESCRIBE_BROKER_CASES[index])
    described = {e.name: _entry(e) for e in broker.describe()}
    defined = {key.name for key in BROKER_CONFIG_DEF.config_keys()}
    assert len(expected) > 200 and len(described) > 200
    for want in expected:
        name = want["name"]
        if name in described:
            assert described[name] == want
        elif want["value"] is None:  # Kafka describes a name it was handed even when unset
            assert name not in broker.originals, want
        else:
            assert name not in defined, f"Kafka describes {want}; kafkacore does not"
    ours_only = set(described) - {want["name"] for want in expected}
    assert ours_only <= KAFKACORE_ONLY_BROKER_CONFIGS, sorted(ours_only)


@pytest.mark.parametrize("index", range(len(DYNAMIC_CASES)))
def test_dynamic_validation_matches_kafka(kafka: list[dict[str, Any]], index: int) -> None:
    expected = kafka[_offset("dynamic_validate") + index]
    props, per_broker = DYNAMIC_CASES[index]
    base = BrokerConfig(BASE)
    if per_broker:
        got = _outcome(lambda: base.with_dynamic(per_broker=props))
    else:
        got = _outcome(lambda: base.with_dynamic(cluster_default=props))
    if "error" in expected:
        assert got == {"error": expected["error"]}
    else:
        assert "error" not in got, got


@pytest.mark.parametrize("index", range(len(PROPERTIES_CASES)))
def test_properties_match_java(kafka: list[dict[str, Any]], index: int) -> None:
    expected = kafka[_offset("properties") + index]["map"]
    assert parse_properties(PROPERTIES_CASES[index].decode("iso-8859-1")) == expected


ORACLE_JAVA = r"""import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.*;
import kafka.server.ConfigHelper;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.server.config.DynamicConfig;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;

/** Answers configuration questions with Apache Kafka's own classes (kafkacore interop tests). */
public class ConfigOracle {
    static final ObjectMapper M = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        JsonNode cases = M.readTree(System.in);
        ArrayNode out = M.createArrayNode();
        for (JsonNode c : cases) {
            ObjectNode r = M.createObjectNode();
            try {
                run(c, r);
            } catch (Throwable e) {
                r.removeAll();
                r.put("error", String.valueOf(e.getMessage()));
                r.put("exception", e.getClass().getName());
            }
            out.add(r);
        }
        System.out.println(M.writeValueAsString(out));
    }

    static Properties props(JsonNode n) {
        Properties p = new Properties();
        if (n != null) n.fields().forEachRemaining(e -> p.put(e.getKey(), e.getValue().asText()));
        return p;
    }

    static Map<String, String> map(JsonNode n) {
        Map<String, String> m = new LinkedHashMap<>();
        if (n != null) n.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }

    static String str(Object v) {
        if (v instanceof List<?> l) {
            StringJoiner j = new StringJoiner(",");
            for (Object o : l) j.add(String.valueOf(o));
            return j.toString();
        }
        return String.valueOf(v);
    }

    static KafkaConfig broker(JsonNode c) throws Exception {
        KafkaConfig config = KafkaConfig.fromProps(props(c.get("props")), false);
        var dyn = config.dynamicConfig();
        dyn.initialize(scala.Option.empty());
        if (c.has("dynamic_default"))
            dyn.updateDefaultConfig(props(c.get("dynamic_default")), false);
        if (c.has("dynamic_broker"))
            dyn.updateBrokerConfig(config.brokerId(), props(c.get("dynamic_broker")), false);
        return config;
    }

    static ObjectNode entry(DescribeConfigsResourceResult e) {
        ObjectNode n = M.createObjectNode();
        n.put("name", e.name());
        n.put("value", e.value());
        n.put("source", e.configSource());
        n.put("sensitive", e.isSensitive());
        n.put("read_only", e.readOnly());
        ArrayNode syn = n.putArray("synonyms");
        for (DescribeConfigsSynonym s : e.synonyms()) {
            ArrayNode a = syn.addArray();
            a.add(s.name());
            a.add(s.value());
            a.add(s.source());
        }
        return n;
    }

    static ObjectNode keys(Map<String, ConfigDef.ConfigKey> keys) {
        ObjectNode out = M.createObjectNode();
        for (ConfigDef.ConfigKey k : keys.values()) {
            ObjectNode n = out.putObject(k.name);
            n.put("type", k.type.name());
            n.put("default", k.hasDefault()
                ? ConfigDef.convertToString(k.defaultValue, k.type) : "<NO_DEFAULT>");
            n.put("valid_values", k.validator == null ? "" : k.validator.toString());
            n.put("importance", k.importance.name());
            n.put("internal", k.internalConfig);
        }
        return out;
    }

    static void run(JsonNode c, ObjectNode r) throws Exception {
        switch (c.get("kind").asText()) {
            case "topic_validate" -> {
                LogConfig.validate(map(c.get("props")));
                r.put("ok", true);
            }
            case "dynamic_validate" -> {
                boolean perBroker = c.get("per_broker").asBoolean();
                DynamicBrokerConfig.validateConfigs(props(c.get("props")), perBroker);
                r.put("ok", true);
            }
            case "properties" -> {
                Properties p = new Properties();
                byte[] data = Base64.getDecoder().decode(c.get("data").asText());
                p.load(new ByteArrayInputStream(data));
                ObjectNode m = r.putObject("map");
                for (String k : new TreeSet<>(p.stringPropertyNames())) m.put(k, p.getProperty(k));
            }
            case "kraft" -> {
                KafkaConfig k = KafkaConfig.fromProps(props(c.get("props")), false);
                r.put("node_id", k.nodeId());
            }
            case "broker" -> {
                KafkaConfig k = broker(c).dynamicConfig().currentKafkaConfig();
                r.put("log_retention_ms", k.logRetentionTimeMillis());
                r.put("log_roll_ms", k.logRollTimeMillis());
                r.put("log_roll_jitter_ms", k.logRollTimeJitterMillis());
                r.put("log_flush_interval_ms", k.logFlushIntervalMs());
                r.put("node_id", k.nodeId());
                ArrayNode dirs = r.putArray("log_dirs");
                for (String d : k.logDirs()) dirs.add(d);
                ObjectNode ex = r.putObject("extract");
                for (var e : new TreeMap<>(k.extractLogConfigMap()).entrySet())
                    ex.put(e.getKey(), str(e.getValue()));
            }
            case "describe_topic" -> {
                KafkaConfig config = broker(c);
                Properties overrides = props(c.get("overrides"));
                KafkaConfig current = config.dynamicConfig().currentKafkaConfig();
                LogConfig log = LogConfig.fromProps(current.extractLogConfigMap(), overrides);
                ConfigHelper helper = new ConfigHelper(null, config, null);
                ArrayNode entries = r.putArray("entries");
                Map<String, Object> all = new TreeMap<>(log.nonInternalValues());
                for (var e : all.entrySet())
                    entries.add(entry(helper.createTopicConfigEntry(
                        log, overrides, true, false, e.getKey(), e.getValue())));
            }
            case "describe_broker" -> {
                KafkaConfig config = broker(c);
                ConfigHelper helper = new ConfigHelper(null, config, null);
                Method m = ConfigHelper.class.getDeclaredMethod("createBrokerConfigEntry",
                    boolean.class, boolean.class, boolean.class, String.class, Object.class);
                m.setAccessible(true);
                Map<String, Object> all = new TreeMap<>();
                config.originals().forEach((k, v) -> { if (v != null) all.put(k, v); });
                all.putAll(config.nonInternalValues());
                ArrayNode entries = r.putArray("entries");
                Set<String> names = new TreeSet<>(all.keySet());
                for (JsonNode name : c.get("names")) names.add(name.asText());
                for (String n : names) {
                    Object e = m.invoke(helper, true, true, false, n, all.get(n));
                    entries.add(entry((DescribeConfigsResourceResult) e));
                }
            }
            case "definitions" -> {
                r.set("topic", keys(LogConfig.configKeys()));
                r.set("broker", keys(AbstractKafkaConfig.CONFIG_DEF.configKeys()));
                r.set("dynamic_only", keys(DynamicConfig.Broker.configKeys()));
                ObjectNode syn = r.putObject("synonyms");
                for (var e : ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS.entrySet()) {
                    ArrayNode names = syn.putArray(e.getKey());
                    for (var s : e.getValue()) names.add(s.name());
                }
                ObjectNode modes = r.putObject("dynamic_modes");
                DynamicBrokerConfig.dynamicConfigUpdateModes().forEach(modes::put);
            }
            default -> throw new IllegalArgumentException("unknown kind");
        }
    }
}
"""
