"""kafkacore's ``__cluster_metadata`` records against Apache Kafka 4.3.1's.

* **Declarations**: every metadata record type Kafka 4.3.1 defines (api keys 0-28), at its
  whole version range, equal to Kafka's definition field by field (the JSON in
  kafka-metadata's jar, ``support.kafka_schemas``).
* **Frames**: for every type and version, a dense value and hypothesis-drawn values are
  built by Kafka's ``MetadataJsonConverters`` from their JSON and framed by Kafka's
  ``MetadataRecordSerde`` (java/MetadataRecords.java, one JVM, record by record). Our
  ``encode_record`` must write the same frame, ``decode_record`` must read Kafka's frame to
  the same value, and Kafka's reading of its frame must print our value.
* **Refusals**: frames derived from valid ones (cut short, with bytes appended, with a
  replaced header, with a byte changed) are read by both; both must accept the same
  frames with the same values, and refuse the others with Kafka's message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore.metadata.records import (
    RECORDS,
    MetadataParseError,
    MetadataRecord,
    MetadataRecordType,
    decode_record,
    encode_record,
)
from kafkacore.protocol.samples import sample
from kafkacore.protocol.schema import KafkaStruct, snake_case
from support.budget import examples
from support.kafka_json import first_difference, to_kafka_json
from support.kafka_schemas import kafka_definitions, schema_differences
from support.sampled import check_samples

pytestmark = [pytest.mark.interop, pytest.mark.downloads]

CASES = [(t, v) for t, schema in RECORDS.items() for v in schema.valid]
PARSE_EXCEPTION = "org.apache.kafka.server.common.serialization.MetadataParseException"


@pytest.fixture(scope="module")
def definitions(kafka_libs: Path) -> dict[str, dict[str, Any]]:
    return {name: d for name, d in kafka_definitions(kafka_libs).items() if d["type"] == "metadata"}


@pytest.fixture(scope="module")
def serde(java: Any) -> Iterator[Any]:
    """MetadataRecords.java in its line mode."""
    with java.serve("MetadataRecords") as server:
        yield server


def test_every_kafka_record_type_is_declared(definitions: dict[str, dict[str, Any]]) -> None:
    kafka = {d["apiKey"]: (name, d["validVersions"]) for name, d in definitions.items()}
    ours = {t: (s.name, str(s.valid).replace("0-0", "0")) for t, s in RECORDS.items()}
    assert ours == kafka
    assert set(MetadataRecordType) == set(RECORDS)
    for record_type in MetadataRecordType:  # Kafka's MetadataRecordType names
        assert record_type.name == snake_case(RECORDS[record_type].name).upper()


@pytest.mark.parametrize("record_type", sorted(RECORDS), ids=lambda t: RECORDS[t].name)
def test_declaration_is_kafkas_definition(
    definitions: dict[str, dict[str, Any]], record_type: int
) -> None:
    schema = RECORDS[record_type]
    problems = schema_differences(schema, definitions[schema.name], list(schema.valid))
    assert not problems, "\n".join(problems)


def _kafka_frame(serde: Any, record: MetadataRecord) -> tuple[bytes, dict[str, Any]]:
    schema = RECORDS[record.type]
    ours = to_kafka_json(record.value, schema.struct, record.version)
    line = json.dumps(
        {"type": int(record.type), "version": record.version, "record": ours}, ensure_ascii=False
    )
    status, _, rest = serde.ask(line).partition(" ")
    assert status == "ok", f"Kafka refused our {schema.name} v{record.version}: {rest}"
    frame_hex, _, kafka_json = rest.partition(" ")
    return bytes.fromhex(frame_hex), json.loads(kafka_json)


@pytest.mark.parametrize(
    ("record_type", "version"), CASES, ids=[f"{RECORDS[t].name}-v{v}" for t, v in CASES]
)
def test_same_frames_as_kafka(serde: Any, record_type: int, version: int) -> None:
    schema = RECORDS[record_type]

    def check(value: KafkaStruct) -> None:
        record = MetadataRecord(MetadataRecordType(record_type), version, value)
        frame, kafka = _kafka_frame(serde, record)
        assert encode_record(record) == frame, f"{schema.name} v{version}: {value!r}"
        assert decode_record(frame) == record
        ours = to_kafka_json(value, schema.struct, version)
        assert ours == kafka, first_difference(ours, kafka, schema.name)

    check_samples(schema, version, check)


# --- refusals -------------------------------------------------------------------------------


def _our_reading(frame: bytes) -> str:
    try:
        record = decode_record(frame)
    except MetadataParseError as exc:
        return f"err {PARSE_EXCEPTION}: {exc}"
    value = to_kafka_json(record.value, RECORDS[record.type].struct, record.version)
    return f"ok {int(record.type)} {record.version} {json.dumps(value, ensure_ascii=False)}"


@st.composite
def _frames(draw: st.DrawFn) -> bytes:
    record_type, version = draw(st.sampled_from(CASES))
    rnd = draw(st.randoms(use_true_random=False))
    record = MetadataRecord(
        MetadataRecordType(record_type), version, sample(RECORDS[record_type], version, rnd)
    )
    frame = encode_record(record)
    how = draw(st.sampled_from(["intact", "cut", "append", "header", "byte"]))
    if how == "cut":
        return frame[: draw(st.integers(0, len(frame) - 1))]
    if how == "append":
        return frame + draw(st.binary(min_size=1, max_size=4))
    if how == "header":  # the three uvarints: frame version, type, version
        return draw(st.binary(max_size=8)) + frame[3:]
    if how == "byte":
        at = draw(st.integers(0, len(frame) - 1))
        return frame[:at] + bytes([draw(st.integers(0, 255))]) + frame[at + 1 :]
    return frame


@settings(
    max_examples=examples(400),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(frame=_frames())
def test_frames_read_as_kafka_reads_them(serde: Any, frame: bytes) -> None:
    kafka = serde.ask(f"decode {frame.hex()}")
    ours = _our_reading(frame)
    if kafka.startswith("ok ") and ours.startswith("ok "):
        k_head, k_json = kafka.split(" ", 3)[:3], json.loads(kafka.split(" ", 3)[3])
        o_head, o_json = ours.split(" ", 3)[:3], json.loads(ours.split(" ", 3)[3])
        assert o_head == k_head
        assert o_json == k_json, first_difference(o_json, k_json, "record")
    else:
        assert ours == kafka
