"""The znodes of a Kafka cluster in ZooKeeper mode: their paths and the exact JSON Kafka
2.8-3.9 keeps in them (Kafka's ``kafka.zk.ZkData``), as frozen dataclasses with
``encode() -> bytes`` and ``decode(bytes)``.

Values are compact JSON (no spaces, UTF-8). Kafka writes several numbers as *strings*
(``timestamp``, ``/cluster/id``'s ``version``, the producer id block's ``block_start`` and
``block_end``); these codecs do the same. Key order is not significant to any reader;
where Kafka's order is fixed we follow it.
"""

from __future__ import annotations

import base64
import json
import re
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ADMIN_PATH",
    "BALANCER_STATE_PATH",
    "BROKERS_PATH",
    "BROKER_IDS_PATH",
    "BROKER_SEQUENCE_ID_PATH",
    "CLUSTER_ID_PATH",
    "CONFIG_CHANGES_PATH",
    "CONFIG_CHANGE_PREFIX",
    "CONFIG_PATH",
    "CONFIG_TYPES",
    "CONTROLLER_EPOCH_PATH",
    "CONTROLLER_PATH",
    "DELETE_TOPICS_PATH",
    "FEATURE_PATH",
    "FEATURE_ZNODE_DISABLED",
    "FEATURE_ZNODE_ENABLED",
    "INITIAL_CONTROLLER_EPOCH",
    "ISR_CHANGE_NOTIFICATION_PATH",
    "ISR_CHANGE_PREFIX",
    "LOG_DIR_EVENT_NOTIFICATION_PATH",
    "LOG_DIR_EVENT_PREFIX",
    "PERSISTENT_ZK_PATHS",
    "PREFERRED_REPLICA_ELECTION_PATH",
    "PRODUCER_ID_BLOCK_PATH",
    "PRODUCER_ID_BLOCK_SIZE",
    "REASSIGN_PARTITIONS_PATH",
    "TOPICS_PATH",
    "BrokerRegistration",
    "ClusterId",
    "ConfigChangeNotification",
    "ControllerRegistration",
    "Endpoint",
    "EntityConfig",
    "FeatureZNode",
    "IsrChangeNotification",
    "LeaderIsrState",
    "LogDirEventNotification",
    "PartitionReassignment",
    "PreferredReplicaElection",
    "ProducerIdBlock",
    "TopicAssignment",
    "broker_path",
    "decode_controller_epoch",
    "delete_topic_path",
    "encode_controller_epoch",
    "entity_config_path",
    "entity_type_path",
    "partition_path",
    "partition_state_path",
    "partitions_path",
    "sequence_number",
    "topic_id_from_string",
    "topic_id_to_string",
    "topic_path",
]

# --- paths (ZkData's *ZNode.path) --------------------------------------------------------

CONTROLLER_PATH = "/controller"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
CONFIG_PATH = "/config"
BROKERS_PATH = "/brokers"
BROKER_IDS_PATH = "/brokers/ids"
TOPICS_PATH = "/brokers/topics"
BROKER_SEQUENCE_ID_PATH = "/brokers/seqid"
CONFIG_CHANGES_PATH = "/config/changes"
CONFIG_CHANGE_PREFIX = "config_change_"
ADMIN_PATH = "/admin"
DELETE_TOPICS_PATH = "/admin/delete_topics"
REASSIGN_PARTITIONS_PATH = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION_PATH = "/admin/preferred_replica_election"
ISR_CHANGE_NOTIFICATION_PATH = "/isr_change_notification"
ISR_CHANGE_PREFIX = "isr_change_"
LOG_DIR_EVENT_NOTIFICATION_PATH = "/log_dir_event_notification"
LOG_DIR_EVENT_PREFIX = "log_dir_event_"
CLUSTER_ID_PATH = "/cluster/id"
PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"
FEATURE_PATH = "/feature"
CONSUMERS_PATH = "/consumers"
# kafkacore's own node (not Kafka's): the partition balancer's state, written fenced by the
# controller epoch, read by the next controller (kafkacore.balancer.executor.BalancerState)
BALANCER_STATE_PATH = "/kafkacore/balancer"

# ConfigType.ALL
CONFIG_TYPES = ("topics", "clients", "users", "brokers", "ips")

# ZkData.PersistentZkPaths: created (empty) by every broker at start-up when missing.
PERSISTENT_ZK_PATHS = (
    CONSUMERS_PATH,
    BROKER_IDS_PATH,
    TOPICS_PATH,
    CONFIG_CHANGES_PATH,
    DELETE_TOPICS_PATH,
    BROKER_SEQUENCE_ID_PATH,
    ISR_CHANGE_NOTIFICATION_PATH,
    PRODUCER_ID_BLOCK_PATH,
    LOG_DIR_EVENT_NOTIFICATION_PATH,
    *(f"{CONFIG_PATH}/{t}" for t in CONFIG_TYPES),
)

# KafkaController.InitialControllerEpoch: /controller_epoch is created as 0, so the first
# elected controller has epoch 1.
INITIAL_CONTROLLER_EPOCH = 0
# ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
PRODUCER_ID_BLOCK_SIZE = 1000


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS_PATH}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS_PATH}/{topic}"


def partitions_path(topic: str) -> str:
    return f"{TOPICS_PATH}/{topic}/partitions"


def partition_path(topic: str, partition: int) -> str:
    return f"{TOPICS_PATH}/{topic}/partitions/{partition}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{TOPICS_PATH}/{topic}/partitions/{partition}/state"


def entity_type_path(entity_type: str) -> str:
    return f"{CONFIG_PATH}/{entity_type}"


def entity_config_path(entity_type: str, name: str) -> str:
    return f"{CONFIG_PATH}/{entity_type}/{name}"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS_PATH}/{topic}"


def sequence_number(node_name: str, prefix: str) -> str:
    """The 10-digit sequence suffix of a ``*_<seq>`` node name (``isr_change_0000000003``)."""
    index = node_name.rfind(prefix)
    return node_name[index + len(prefix) :] if index >= 0 else node_name


# --- JSON helpers --------------------------------------------------------------------------


def _dumps(value: Mapping[str, Any]) -> bytes:
    """Compact JSON like Jackson's default writer: no spaces, UTF-8 as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _loads(data: bytes | None, what: str) -> dict[str, Any]:
    if not data:
        raise ValueError(f"{what}: empty znode data")
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{what}: not JSON: {data[:200]!r}") from exc
    if not isinstance(value, dict):
        raise ValueError(f"{what}: not a JSON object: {data[:200]!r}")
    return value


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def topic_id_to_string(topic_id: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: URL-safe Base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode("ascii").rstrip("=")


def topic_id_from_string(text: str) -> uuid.UUID:
    """Kafka's ``Uuid.fromString`` (22 URL-safe Base64 characters)."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka Uuid: {text!r}")
    return uuid.UUID(bytes=raw)


def _tp_list(partitions: Iterable[tuple[str, int]]) -> list[dict[str, Any]]:
    return [{"topic": t, "partition": p} for t, p in partitions]


def _tp_parse(value: Any, what: str) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, list):
        raise ValueError(f"{what}: 'partitions' is not a list")
    return tuple((str(e["topic"]), int(e["partition"])) for e in value)


# --- /controller, /controller_epoch --------------------------------------------------------


@dataclass(frozen=True)
class ControllerRegistration:
    """``/controller`` (ephemeral). We write version 1 (``{"version":1,"brokerid":1,
    "timestamp":"…"}``, what 2.8-3.3 write and every 2.8-3.9 reader accepts); version 2
    (3.4+) adds ``kraftControllerEpoch`` and is decoded too."""

    broker_id: int
    timestamp: int | None = None  # ms; None = now when encoding
    kraft_controller_epoch: int | None = None  # version 2 only
    version: int = 1

    def encode(self) -> bytes:
        ts = str(self.timestamp if self.timestamp is not None else _now_ms())
        value: dict[str, Any] = {
            "version": self.version,
            "brokerid": self.broker_id,
            "timestamp": ts,
        }
        if self.version >= 2:
            epoch = self.kraft_controller_epoch
            value["kraftControllerEpoch"] = -1 if epoch is None else epoch
        return _dumps(value)

    @classmethod
    def decode(cls, data: bytes) -> ControllerRegistration:
        js = _loads(data, CONTROLLER_PATH)
        ts = js.get("timestamp")
        kraft = js.get("kraftControllerEpoch")
        return cls(
            broker_id=int(js["brokerid"]),
            timestamp=int(ts) if ts is not None else None,
            kraft_controller_epoch=int(kraft) if kraft is not None else None,
            version=int(js.get("version", 1)),
        )


def encode_controller_epoch(epoch: int) -> bytes:
    """``/controller_epoch`` is a bare integer as text, not JSON."""
    return str(epoch).encode("ascii")


def decode_controller_epoch(data: bytes) -> int:
    return int(data.decode("ascii").strip())


# --- /brokers/ids/<id> ---------------------------------------------------------------------

_ENDPOINT_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class Endpoint:
    listener: str
    host: str | None
    port: int
    security_protocol: str

    @property
    def connection_string(self) -> str:
        """``LISTENER://host:port`` (an IPv6 host in brackets), Kafka's
        ``EndPoint.connectionString``; a null host is written empty."""
        host = self.host or ""
        if ":" in host:
            host = f"[{host}]"
        return f"{self.listener}://{host}:{self.port}"

    @classmethod
    def parse(cls, text: str, protocol_map: Mapping[str, str]) -> Endpoint:
        m = _ENDPOINT_RE.match(text)
        if m is None:
            raise ValueError(f"not an endpoint: {text!r}")
        listener, host, port = m.group(1), m.group(2), int(m.group(3))
        protocol = protocol_map.get(listener)
        if protocol is None:
            # SocketServerConfigs.DEFAULT_NAME_TO_SECURITY_PROTO: a listener named after a
            # security protocol uses it.
            if listener.upper() not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
                raise ValueError(f"no security protocol for listener {listener!r} in {text!r}")
            protocol = listener.upper()
        return cls(listener, host or None, port, protocol)


@dataclass(frozen=True)
class BrokerRegistration:
    """``/brokers/ids/<id>`` (ephemeral), written as version 5 (IBP ≥ 2.7)::

        {"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},
         "endpoints":["PLAINTEXT://h1:9092"],"jmx_port":-1,"port":9092,"host":"h1",
         "version":5,"timestamp":"1690000000000","rack":"r1"}

    ``host``/``port`` come from the first PLAINTEXT endpoint (else ``null``/``-1``); ``rack``
    only when set. ``listener_security_protocol_map`` defaults to the endpoints' own."""

    id: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None
    listener_security_protocol_map: dict[str, str] = field(default_factory=dict)
    # feature name -> {"min_version": n, "max_version": m}
    features: dict[str, dict[str, int]] = field(default_factory=dict)
    jmx_port: int = -1
    timestamp: int | None = None  # ms; None = now when encoding
    version: int = 5

    def __post_init__(self) -> None:
        object.__setattr__(self, "endpoints", tuple(self.endpoints))
        if not self.listener_security_protocol_map:
            mapping = {e.listener: e.security_protocol for e in self.endpoints}
            object.__setattr__(self, "listener_security_protocol_map", mapping)

    def endpoint(self, listener: str) -> Endpoint | None:
        return next((e for e in self.endpoints if e.listener == listener), None)

    def encode(self) -> bytes:
        plaintext = next((e for e in self.endpoints if e.security_protocol == "PLAINTEXT"), None)
        ts = self.timestamp if self.timestamp is not None else _now_ms()
        value: dict[str, Any] = {}
        if self.version >= 5:
            value["features"] = {name: dict(rng) for name, rng in self.features.items()}
        if self.version >= 4:
            value["listener_security_protocol_map"] = dict(self.listener_security_protocol_map)
        value["endpoints"] = [e.connection_string for e in self.endpoints]
        value["jmx_port"] = self.jmx_port
        value["port"] = plaintext.port if plaintext is not None else -1
        value["host"] = plaintext.host if plaintext is not None else None
        value["version"] = self.version
        value["timestamp"] = str(ts)
        if self.rack is not None and self.version >= 3:
            value["rack"] = self.rack
        return _dumps(value)

    @classmethod
    def decode(cls, data: bytes, broker_id: int) -> BrokerRegistration:
        what = broker_path(broker_id)
        js = _loads(data, what)
        version = int(js["version"])
        if version < 1:
            raise ValueError(f"{what}: unsupported broker registration version {version}")
        if version == 1:
            endpoints: tuple[Endpoint, ...] = (
                Endpoint("PLAINTEXT", js.get("host"), int(js["port"]), "PLAINTEXT"),
            )
            protocol_map = {"PLAINTEXT": "PLAINTEXT"}
        else:
            protocol_map = {
                str(k): str(v) for k, v in (js.get("listener_security_protocol_map") or {}).items()
            }
            endpoints = tuple(Endpoint.parse(str(s), protocol_map) for s in js["endpoints"])
            if not protocol_map:
                protocol_map = {e.listener: e.security_protocol for e in endpoints}
        ts = js.get("timestamp")
        features = {
            str(name): {str(k): int(v) for k, v in rng.items()}
            for name, rng in (js.get("features") or {}).items()
        }
        rack = js.get("rack")
        return cls(
            id=broker_id,
            endpoints=endpoints,
            rack=str(rack) if rack is not None else None,
            listener_security_protocol_map=protocol_map,
            features=features,
            jmx_port=int(js.get("jmx_port", -1)),
            timestamp=int(ts) if ts is not None else None,
            version=version,
        )


# --- /brokers/topics/<t> and its partition states -------------------------------------------


@dataclass(frozen=True)
class TopicAssignment:
    """``/brokers/topics/<t>``, version 3::

        {"version":3,"partitions":{"0":[1,2,3]},"adding_replicas":{},
         "removing_replicas":{},"topic_id":"<22-char base64url>"}

    ``adding``/``removing`` list only the partitions being reassigned; ``topic_id`` is
    written when known. Versions 1-2 (no ids, no adding/removing) decode too."""

    topic: str
    partitions: dict[int, tuple[int, ...]]
    adding: dict[int, tuple[int, ...]] = field(default_factory=dict)
    removing: dict[int, tuple[int, ...]] = field(default_factory=dict)
    topic_id: uuid.UUID | None = None

    def __post_init__(self) -> None:
        for name in ("partitions", "adding", "removing"):
            value = getattr(self, name)
            object.__setattr__(
                self, name, {int(p): tuple(int(r) for r in rs) for p, rs in value.items()}
            )

    def encode(self) -> bytes:
        def as_json(m: Mapping[int, tuple[int, ...]]) -> dict[str, list[int]]:
            return {str(p): list(rs) for p, rs in sorted(m.items()) if rs}

        value: dict[str, Any] = {
            "version": 3,
            "partitions": {str(p): list(rs) for p, rs in sorted(self.partitions.items())},
            "adding_replicas": as_json(self.adding),
            "removing_replicas": as_json(self.removing),
        }
        if self.topic_id is not None:
            value["topic_id"] = topic_id_to_string(self.topic_id)
        return _dumps(value)

    @classmethod
    def decode(cls, data: bytes, topic: str) -> TopicAssignment:
        js = _loads(data, topic_path(topic))

        def replicas(key: str) -> dict[int, tuple[int, ...]]:
            return {int(p): tuple(int(r) for r in rs) for p, rs in (js.get(key) or {}).items()}

        tid = js.get("topic_id")
        return cls(
            topic=topic,
            partitions=replicas("partitions"),
            adding=replicas("adding_replicas"),
            removing=replicas("removing_replicas"),
            topic_id=topic_id_from_string(str(tid)) if tid is not None else None,
        )


@dataclass(frozen=True)
class LeaderIsrState:
    """``/brokers/topics/<t>/partitions/<p>/state``, version 1::

        {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}

    plus ``"leader_recovery_state":1`` only while RECOVERING. The znode's zkVersion is
    the partition epoch (kept next to the state, not in it)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    leader_recovery_state: int = 0  # 0 RECOVERED, 1 RECOVERING

    def __post_init__(self) -> None:
        object.__setattr__(self, "isr", tuple(int(r) for r in self.isr))

    def encode(self) -> bytes:
        value: dict[str, Any] = {
            "controller_epoch": self.controller_epoch,
            "leader": self.leader,
            "version": 1,
            "leader_epoch": self.leader_epoch,
            "isr": list(self.isr),
        }
        if self.leader_recovery_state != 0:
            value["leader_recovery_state"] = self.leader_recovery_state
        return _dumps(value)

    @classmethod
    def decode(cls, data: bytes) -> LeaderIsrState:
        js = _loads(data, "partition state")
        return cls(
            leader=int(js["leader"]),
            leader_epoch=int(js["leader_epoch"]),
            isr=tuple(int(r) for r in js["isr"]),
            controller_epoch=int(js["controller_epoch"]),
            leader_recovery_state=int(js.get("leader_recovery_state", 0)),
        )


# --- /feature --------------------------------------------------------------------------------


FEATURE_ZNODE_DISABLED = 0
FEATURE_ZNODE_ENABLED = 1


@dataclass(frozen=True)
class FeatureZNode:
    """``/feature``: the finalized features (KIP-584) as Kafka 3.9's ``FeatureZNode``,
    written as version 2 (IBP >= 3.3)::

        {"features":{"transaction.version":{"max_version_level":2}},"version":2,"status":1}

    Version 1 also carries ``min_version_level`` per feature (read, ignored). ``status``
    1 is enabled, 0 disabled (finalized features not in force). The znode's version is
    the finalized features' epoch. A level below 1 cannot be stored (a feature at 0 is
    absent), as Kafka refuses to read one."""

    features: Mapping[str, int] = field(default_factory=dict)
    status: int = FEATURE_ZNODE_ENABLED
    version: int = 2

    def encode(self) -> bytes:
        if self.version == 1:
            levels: dict[str, dict[str, int]] = {
                n: {"max_version_level": v, "min_version_level": v}
                for n, v in sorted(self.features.items())
            }
        else:
            levels = {n: {"max_version_level": v} for n, v in sorted(self.features.items())}
        return _dumps({"features": levels, "version": self.version, "status": self.status})

    @classmethod
    def decode(cls, data: bytes) -> FeatureZNode:
        """Kafka's ``FeatureZNode.decode``: ``ValueError`` with Kafka's reasons."""
        text = data.decode("utf-8", errors="replace")
        js = _loads(data, "feature information")
        version = int(js.get("version", 0))
        if version not in (1, 2):
            raise ValueError(f"Unsupported version: {version} of feature information: {text}")
        status = js.get("status")
        if status is None:
            raise ValueError(f"Status can not be absent in feature information: {text}")
        if int(status) not in (FEATURE_ZNODE_DISABLED, FEATURE_ZNODE_ENABLED):
            raise ValueError(f"Malformed status: {status} found in feature information: {text}")
        raw = js.get("features")
        if not isinstance(raw, dict):
            raise ValueError(f"Features map can not be absent in: {text}")
        features: dict[str, int] = {}
        for name, levels in raw.items():
            if version == 1 and "min_version_level" not in levels:
                raise ValueError(f"min_version_level absent in [{levels}]")
            if "max_version_level" not in levels:
                raise ValueError(f"max_version_level absent in [{levels}]")
            level = int(levels["max_version_level"])
            if level < 1:
                raise ValueError(f"Expected maxValue >= 1, but received maxValue: {level}")
            features[str(name)] = level
        return cls(features, int(status), version)


# --- /config ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntityConfig:
    """``/config/<type>/<name>``: ``{"version":1,"config":{"k":"v"}}`` (values strings)."""

    config: dict[str, str] = field(default_factory=dict)

    def encode(self) -> bytes:
        return _dumps({"version": 1, "config": {k: str(v) for k, v in self.config.items()}})

    @classmethod
    def decode(cls, data: bytes | None) -> EntityConfig:
        # Kafka reads a node without data (or without "config") as no overrides.
        if not data:
            return cls({})
        js = _loads(data, "entity config")
        config = js.get("config")
        if not isinstance(config, dict):
            return cls({})
        return cls({str(k): str(v) for k, v in config.items()})


@dataclass(frozen=True)
class ConfigChangeNotification:
    """``/config/changes/config_change_<seq>``: ``{"version":2,"entity_path":"topics/foo"}``.
    Version 1 (``entity_type`` + ``entity_name``) decodes to the same entity path."""

    entity_path: str

    def encode(self) -> bytes:
        return _dumps({"version": 2, "entity_path": self.entity_path})

    @classmethod
    def decode(cls, data: bytes) -> ConfigChangeNotification:
        js = _loads(data, "config change notification")
        version = int(js.get("version", 0))
        if version == 1:
            return cls(f"{js['entity_type']}/{js['entity_name']}")
        if version == 2:
            return cls(str(js["entity_path"]))
        raise ValueError(f"config change notification: unsupported version {version}")


# --- notifications and admin nodes ---------------------------------------------------------


@dataclass(frozen=True)
class IsrChangeNotification:
    """``/isr_change_notification/isr_change_<seq>``:
    ``{"version":1,"partitions":[{"topic":"t","partition":0}]}``."""

    partitions: tuple[tuple[str, int], ...]

    def encode(self) -> bytes:
        return _dumps({"version": 1, "partitions": _tp_list(self.partitions)})

    @classmethod
    def decode(cls, data: bytes) -> IsrChangeNotification:
        js = _loads(data, "isr change notification")
        return cls(_tp_parse(js["partitions"], "isr change notification"))


@dataclass(frozen=True)
class PreferredReplicaElection:
    """``/admin/preferred_replica_election``:
    ``{"version":1,"partitions":[{"topic":"t","partition":0}]}``."""

    partitions: tuple[tuple[str, int], ...]

    def encode(self) -> bytes:
        return _dumps({"version": 1, "partitions": _tp_list(self.partitions)})

    @classmethod
    def decode(cls, data: bytes) -> PreferredReplicaElection:
        js = _loads(data, PREFERRED_REPLICA_ELECTION_PATH)
        return cls(_tp_parse(js["partitions"], PREFERRED_REPLICA_ELECTION_PATH))


@dataclass(frozen=True)
class PartitionReassignment:
    """``/admin/reassign_partitions`` (deprecated since 2.4):
    ``{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[4,5,6]}]}``."""

    partitions: dict[tuple[str, int], tuple[int, ...]]

    def encode(self) -> bytes:
        entries = [
            {"topic": t, "partition": p, "replicas": list(rs)}
            for (t, p), rs in self.partitions.items()
        ]
        return _dumps({"version": 1, "partitions": entries})

    @classmethod
    def decode(cls, data: bytes) -> PartitionReassignment:
        js = _loads(data, REASSIGN_PARTITIONS_PATH)
        return cls(
            {
                (str(e["topic"]), int(e["partition"])): tuple(int(r) for r in e["replicas"])
                for e in js["partitions"]
            }
        )


@dataclass(frozen=True)
class LogDirEventNotification:
    """``/log_dir_event_notification/log_dir_event_<seq>``:
    ``{"version":1,"broker":1,"event":1}`` (event 1 = LogDirFailure)."""

    broker: int
    event: int = 1

    def encode(self) -> bytes:
        return _dumps({"version": 1, "broker": self.broker, "event": self.event})

    @classmethod
    def decode(cls, data: bytes) -> LogDirEventNotification:
        js = _loads(data, "log dir event notification")
        return cls(int(js["broker"]), int(js.get("event", 1)))


@dataclass(frozen=True)
class ClusterId:
    """``/cluster/id``: ``{"version":"1","id":"<cluster id>"}`` (the version a string)."""

    id: str

    def encode(self) -> bytes:
        return _dumps({"version": "1", "id": self.id})

    @classmethod
    def decode(cls, data: bytes) -> ClusterId:
        return cls(str(_loads(data, CLUSTER_ID_PATH)["id"]))


@dataclass(frozen=True)
class ProducerIdBlock:
    """``/latest_producer_id_block``:
    ``{"version":1,"broker":1,"block_start":"0","block_end":"999"}`` (ids inclusive, as
    strings)."""

    broker: int
    block_start: int
    block_end: int

    def encode(self) -> bytes:
        return _dumps(
            {
                "version": 1,
                "broker": self.broker,
                "block_start": str(self.block_start),
                "block_end": str(self.block_end),
            }
        )

    @classmethod
    def decode(cls, data: bytes) -> ProducerIdBlock:
        js = _loads(data, PRODUCER_ID_BLOCK_PATH)
        return cls(int(js["broker"]), int(js["block_start"]), int(js["block_end"]))
