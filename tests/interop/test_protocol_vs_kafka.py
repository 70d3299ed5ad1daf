"""kafkacore's protocol declarations and codec against Apache Kafka's own.

Every declared API (``kafkacore.protocol.declared``, served or not) is checked at every
version it declares against the Kafka release that defines that version: Kafka 4.3.1, or
Kafka 3.9.1 (the last release with ZooKeeper mode) for the versions 4.x dropped (Produce
v0-2, DescribeLogDirs v0, WriteTxnMarkers v0, AlterPartition v0-1) and for the
ZooKeeper-mode inter-broker APIs (LeaderAndIsr, StopReplica, UpdateMetadata,
ControlledShutdown). Two checks:

* **the declaration is Kafka's definition**: the JSON Kafka generates its classes from,
  read from the release's jars; per version the fields carried, their order, types,
  nullability, tags and defaults (``support.kafka_schemas``);
* **the bytes**: hypothesis draws field values from our schema (``samples.sample`` driven
  by a hypothesis ``Random``), plus one dense value where no field keeps its default.
  Kafka's ``*JsonConverter`` builds its ``*Data`` object from them, Kafka serializes it and
  reads its bytes back (java/ProtocolMessages.java, one JVM per release and module, case by
  case). Our codec must write the same bytes (tagged fields in ascending tag order, absent
  at their default), decode Kafka's bytes to the same values, and Kafka's reading of its
  bytes must print our values.

Error codes are compared with Kafka 4.3.1's ``Errors`` too.
"""

from __future__ import annotations

import contextlib
import json
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.protocol import ErrorCode
from kafkacore.protocol import errors as protocol_errors
from kafkacore.protocol.declared import DECLARED
from kafkacore.protocol.messages import envelope
from kafkacore.protocol.samples import sample
from kafkacore.protocol.schema import KafkaStruct, MessageSchema
from support.kafka_jars import KAFKA_ZK_VERSION
from support.kafka_json import first_difference, json_element, normalise_records, to_kafka_json
from support.kafka_schemas import kafka_definitions, schema_differences
from support.sampled import check_samples

pytestmark = [pytest.mark.interop, pytest.mark.downloads]

KAFKA_4 = "4.3.1"
RELEASES = (KAFKA_4, KAFKA_ZK_VERSION)  # in order of preference

CASES = [
    (api.key, version, kind)
    for api in DECLARED.values()
    for version in api.versions
    for kind in ("request", "response")
]
MESSAGES = [(api.key, kind) for api in DECLARED.values() for kind in ("request", "response")]


def _schema(key: int, kind: str) -> MessageSchema:
    api = DECLARED[key]
    return api.request if kind == "request" else api.response


# --- Kafka's side ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def definitions(kafka_libs: Path, kafka_zk_libs: Path) -> dict[str, dict[str, Any]]:
    """Each release's message definitions, by message name."""
    assert kafka_libs.parent.name == f"kafka-{KAFKA_4}", kafka_libs
    return {
        KAFKA_4: kafka_definitions(kafka_libs),
        KAFKA_ZK_VERSION: kafka_definitions(kafka_zk_libs),
    }


def reference(definitions: dict[str, dict[str, Any]], name: str, version: int) -> str | None:
    """The release whose definition of message ``name`` has ``version`` (newest first)."""
    for release in RELEASES:
        definition = definitions[release].get(name)
        if definition is not None and version in _versions(definition["validVersions"]):
            return release
    return None


def _versions(text: str) -> range:
    if text == "none":
        return range(0)
    lo, _, hi = text.partition("-")
    return range(int(lo), int(hi or lo) + 1)


@pytest.fixture(scope="module")
def kafka_codecs(java: Any, java_zk: Any) -> Iterator[dict[str, Any]]:
    """ProtocolMessages in its line mode, one JVM per release."""
    with contextlib.ExitStack() as stack:
        yield {
            KAFKA_4: stack.enter_context(java.serve("ProtocolMessages")),
            KAFKA_ZK_VERSION: stack.enter_context(java_zk.serve("ProtocolMessages")),
        }


def compare_with_kafka(
    codec: Any, msg: MessageSchema, value: KafkaStruct, version: int, name: str, kind: str
) -> None:
    """Kafka builds ``value`` from its JSON, serializes it and reads it back (``name`` and
    ``kind`` name the message to ProtocolMessages); ours must match at every step."""
    ours = to_kafka_json(value, msg.struct, version)
    answer = codec.ask(f"{name} {version} {kind} {json.dumps(ours, ensure_ascii=False)}")
    status, _, rest = answer.partition(" ")
    assert status == "ok", f"Kafka refused our {msg.name} v{version}: {rest}"
    hex_bytes, _, kafka_json = rest.partition(" ")
    kafka_bytes = bytes.fromhex(hex_bytes)
    assert msg.encode(value, version) == kafka_bytes, f"{msg.name} v{version}: {value!r}"
    assert msg.decode(kafka_bytes, version) == value, f"{msg.name} v{version}"
    kafka = json.loads(kafka_json)
    ours = normalise_records(ours, kafka, msg.struct, version)
    assert ours == kafka, first_difference(ours, kafka, msg.name)


# --- the declarations -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "kind"), MESSAGES, ids=[f"{DECLARED[k].name}-{kd}" for k, kd in MESSAGES]
)
def test_declaration_is_kafkas_definition(
    definitions: dict[str, dict[str, Any]], key: int, kind: str
) -> None:
    msg = _schema(key, kind)
    problems = []
    for version in msg.valid:
        release = reference(definitions, msg.name, version)
        assert release is not None, f"no Kafka release defines {msg.name} v{version}"
        problems += schema_differences(msg, definitions[release][msg.name], [version])
    assert not problems, "\n".join(problems)


def test_declared_ranges_cover_kafka_4(definitions: dict[str, dict[str, Any]]) -> None:
    """Each declared message has at least every version Kafka 4.3.1 defines."""
    for api in DECLARED.values():
        for msg in (api.request, api.response):
            kafka = _versions(definitions[KAFKA_4][msg.name]["validVersions"])
            assert set(kafka) <= set(msg.valid), f"{msg.name}: {msg.valid} lacks {kafka}"


# --- the bytes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "version", "kind"), CASES, ids=[f"{DECLARED[k].name}-v{v}-{kd}" for k, v, kd in CASES]
)
def test_same_bytes_and_values_as_kafka(
    definitions: dict[str, dict[str, Any]],
    kafka_codecs: dict[str, Any],
    key: int,
    version: int,
    kind: str,
) -> None:
    msg = _schema(key, kind)
    release = reference(definitions, msg.name, version)
    assert release is not None, f"no Kafka release defines {msg.name} v{version}"
    codec = kafka_codecs[release]
    check_samples(
        msg, version, lambda value: compare_with_kafka(codec, msg, value, version, str(key), kind)
    )


def test_default_principal_data_as_kafka(java: Any) -> None:
    """The principal an Envelope carries (not an API's message)."""
    msg = envelope.PRINCIPAL
    with java.serve("ProtocolMessages") as codec:
        for seed in range(5):
            value = sample(msg, 0, random.Random(seed), dense=seed == 0)
            compare_with_kafka(codec, msg, value, 0, "DefaultPrincipalData", "data")


# --- error codes ----------------------------------------------------------------------------


def _kafka_errors(java: Any) -> dict[int, tuple[str, str | None]]:
    out = java.run("ProtocolMessages", "--errors").check().stdout.decode("utf-8")
    errors = {}
    for line in out.splitlines():
        code, name, text = line.split("\t")
        errors[int(code)] = (name, None if text == "null" else text)
    return errors


def test_error_codes_are_kafkas(java: Any, java_zk: Any) -> None:
    """Every code of Kafka 4.3.1's ``Errors`` with its name; its default message, except
    where kafkacore keeps Kafka 3.9's wording (errors.py says which)."""
    kafka = _kafka_errors(java)
    assert {c.value: c.name for c in ErrorCode} == {code: name for code, (name, _) in kafka.items()}
    kept_from_3_9 = {
        code
        for code, (_, text) in kafka.items()
        if code != ErrorCode.NONE and protocol_errors.message(code) != text
    }
    assert kept_from_3_9 == {ErrorCode.INVALID_GROUP_ID, ErrorCode.GROUP_MAX_SIZE_REACHED}
    kafka_3_9 = _kafka_errors(java_zk)
    for code in kept_from_3_9:
        assert protocol_errors.message(code) == kafka_3_9[code][1]


def test_uuid_json_form() -> None:
    # Kafka's Uuid.toString(): URL-safe base64 without padding.
    u = uuid.UUID(int=1)
    assert json_element("uuid", None, u, 0) == "AAAAAAAAAAAAAAAAAAAAAQ"
