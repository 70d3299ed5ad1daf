"""kafkacore's protocol codec against Apache Kafka's own generated message classes.

For every API and version kafkacore implements, random requests and responses are drawn
from our schema (``kafkacore.protocol.samples``); Kafka's ``*JsonConverter`` builds its
``*Data`` object from their field values (it fails if a field the version carries is
missing) and Kafka serializes it (java/ProtocolMessages.java, one JVM for all cases).
Our codec must produce the same bytes, decode Kafka's bytes to the same values, and
Kafka's reading of the values must equal ours.

Kafka 3.9.1's classes are the reference where Kafka 4's no longer are: the inter-broker
APIs of a ZooKeeper-mode cluster (LeaderAndIsr, StopReplica, UpdateMetadata,
ControlledShutdown, AlterPartition, WriteTxnMarkers; Kafka 4 removed the first four and
AlterPartition v0-1), every version kafkacore implements, and the versions of the other
APIs that Kafka 4 removed (KIP-896: Produce v0-2, DescribeLogDirs v0) but kafkacore still
serves, which Kafka 4's schemas no longer describe.
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkacore.protocol import APIS, ApiKey
from kafkacore.protocol.samples import sample
from kafkacore.protocol.schema import KafkaStruct, MessageSchema, StructSchema

pytestmark = [pytest.mark.interop, pytest.mark.downloads]

SEEDS = range(3)
# Versions inside our range that Kafka 4.x no longer serializes (KIP-896): Kafka 4 dropped
# them and simplified its schemas' version ranges (e.g. "2+" became "0+"), so Kafka 3.9's
# classes are their reference.
REMOVED_IN_KAFKA_4 = {0: range(3), 35: range(1)}
# Compared with Kafka 3.9's classes (the ZooKeeper-mode inter-broker APIs).
INTER_BROKER = {
    ApiKey.LEADER_AND_ISR,
    ApiKey.STOP_REPLICA,
    ApiKey.UPDATE_METADATA,
    ApiKey.CONTROLLED_SHUTDOWN,
    ApiKey.ALTER_PARTITION,
    ApiKey.WRITE_TXN_MARKERS,  # Kafka 4 removed v0 (KIP-896); 3.9 brokers still send it
}

ALL_CASES = [
    (api.key, version, kind)
    for api in APIS.values()
    for version in range(api.request.valid.lo, api.request.valid.hi + 1)
    for kind in ("request", "response")
]


def _kafka_3_9_case(case: tuple[int, int, str]) -> bool:
    key, version, _ = case
    return key in INTER_BROKER or version in REMOVED_IN_KAFKA_4.get(key, ())


CASES = [c for c in ALL_CASES if not _kafka_3_9_case(c)]
ZK_CASES = [c for c in ALL_CASES if _kafka_3_9_case(c)]


def _schema(key: int, kind: str) -> MessageSchema:
    api = APIS[key]
    return api.request if kind == "request" else api.response


def _json_name(name: str) -> str:
    return name[0].lower() + name[1:]


def to_kafka_json(value: Any, s: StructSchema, version: int) -> dict[str, Any]:
    """``value`` as Kafka's ``*JsonConverter.read`` takes it."""
    out: dict[str, Any] = {}
    for f in s.fields:
        if version not in f.versions:
            continue
        v = getattr(value, f.attr)
        if f.tag is not None and v == f.default_value():
            continue  # Kafka neither writes nor prints a tagged field at its default
        if v is None:
            out[_json_name(f.name)] = None
        elif f.array:
            out[_json_name(f.name)] = [_element(f.type, f.struct, e, version) for e in v]
        else:
            out[_json_name(f.name)] = _element(f.type, f.struct, v, version)
    return out


def _element(typ: str, sub: StructSchema | None, v: Any, version: int) -> Any:
    if typ in ("bytes", "records"):
        return base64.b64encode(bytes(v)).decode("ascii")
    if typ == "uuid":
        return base64.urlsafe_b64encode(v.bytes).rstrip(b"=").decode("ascii")
    if sub is not None:
        return to_kafka_json(v, sub, version)
    return v


def _normalise_records(ours: Any, kafka: Any, s: StructSchema, version: int) -> Any:
    """Kafka's converter does not print unparsable ``records`` (the bytes are compared
    instead): take its form of them."""
    if not isinstance(ours, dict) or not isinstance(kafka, dict):
        return ours
    out = dict(ours)
    for f in s.fields:
        name = _json_name(f.name)
        if name not in ours or ours[name] is None:
            continue
        if f.type == "records" and name in kafka:
            out[name] = kafka[name]
        elif f.struct is not None and name in kafka and kafka[name] is not None:
            if f.array:
                out[name] = [
                    _normalise_records(o, k, f.struct, version)
                    for o, k in zip(ours[name], kafka[name], strict=False)
                ]
            else:
                out[name] = _normalise_records(ours[name], kafka[name], f.struct, version)
    return out


def _first_difference(a: Any, b: Any, path: str) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k, "<absent>") != b.get(k, "<absent>"):
                return _first_difference(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path}: ours {a!r} != Kafka's {b!r}"


def _serialize(java: Any, cases: list[Any], directory: Path) -> dict[Any, Any]:
    """Per (key, version, kind, seed): (our value, Kafka's result line)."""
    values: dict[Any, KafkaStruct] = {}
    lines = []
    for key, version, kind in cases:
        msg = _schema(key, kind)
        for seed in SEEDS:
            rnd = random.Random(f"{key}-{version}-{kind}-{seed}")
            value = sample(msg, version, rnd)
            values[(key, version, kind, seed)] = value
            payload = json.dumps(to_kafka_json(value, msg.struct, version), ensure_ascii=False)
            lines.append(f"{key} {version} {kind} {payload}")
    path = directory / "cases.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = java.run("ProtocolMessages", str(path)).check()
    outputs = result.stdout.decode("utf-8").splitlines()
    assert len(outputs) == len(lines), result.stderr.decode(errors="replace")[-2000:]
    return {k: (values[k], out) for k, out in zip(values, outputs, strict=True)}


@pytest.fixture(scope="module")
def kafka_serialized(java: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[Any, Any]:
    """Kafka 4.x's serialization of every case but the inter-broker APIs."""
    return _serialize(java, CASES, tmp_path_factory.mktemp("protocol"))


@pytest.fixture(scope="module")
def kafka_zk_serialized(java_zk: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[Any, Any]:
    """Kafka 3.9's serialization of the inter-broker APIs and of the versions Kafka 4
    removed."""
    assert java_zk.version.startswith("3.9"), java_zk.version
    return _serialize(java_zk, ZK_CASES, tmp_path_factory.mktemp("protocol-zk"))


def _check_case(serialized: dict[Any, Any], key: int, version: int, kind: str) -> None:
    msg = _schema(key, kind)
    for seed in SEEDS:
        value, line = serialized[(key, version, kind, seed)]
        status, _, rest = line.partition(" ")
        assert status == "ok", f"Kafka refused our {msg.name} v{version} values: {rest}"
        hex_bytes, _, kafka_json = rest.partition(" ")
        kafka_bytes = bytes.fromhex(hex_bytes)
        assert msg.encode(value, version) == kafka_bytes, f"{msg.name} v{version} seed {seed}"
        assert msg.decode(kafka_bytes, version) == value
        ours = to_kafka_json(value, msg.struct, version)
        kafka = json.loads(kafka_json)
        ours = _normalise_records(ours, kafka, msg.struct, version)
        assert ours == kafka, _first_difference(ours, kafka, msg.name)


def _ids(cases: list[Any]) -> list[str]:
    return [f"{APIS[k].name}-v{v}-{kd}" for k, v, kd in cases]


@pytest.mark.parametrize(("key", "version", "kind"), CASES, ids=_ids(CASES))
def test_same_bytes_and_values_as_kafka(
    kafka_serialized: dict[Any, Any], key: int, version: int, kind: str
) -> None:
    _check_case(kafka_serialized, key, version, kind)


@pytest.mark.parametrize(("key", "version", "kind"), ZK_CASES, ids=_ids(ZK_CASES))
def test_inter_broker_and_removed_versions_same_bytes_and_values_as_kafka_3_9(
    kafka_zk_serialized: dict[Any, Any], key: int, version: int, kind: str
) -> None:
    _check_case(kafka_zk_serialized, key, version, kind)


def test_uuid_json_form() -> None:
    # Kafka's Uuid.toString(): URL-safe base64 without padding.
    u = uuid.UUID(int=1)
    assert _element("uuid", None, u, 0) == "AAAAAAAAAAAAAAAAAAAAAQ"
