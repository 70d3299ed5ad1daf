"""``__cluster_metadata`` records: every type and version round-trips through its frame,
the frame's layout, and the refusals of a broken frame in Kafka's words (the interop test
tests/interop/test_metadata_records_vs_kafka.py compares all of it with Kafka's
``MetadataRecordSerde``)."""

from __future__ import annotations

import random

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
from support.budget import examples

CASES = [(t, v) for t, schema in RECORDS.items() for v in schema.valid]


@pytest.mark.parametrize(
    ("record_type", "version"), CASES, ids=[f"{RECORDS[t].name}-v{v}" for t, v in CASES]
)
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rnd=st.randoms(use_true_random=False), dense=st.booleans())
def test_round_trip(record_type: int, version: int, rnd: random.Random, dense: bool) -> None:
    value = sample(RECORDS[record_type], version, rnd, dense=dense)
    record = MetadataRecord(MetadataRecordType(record_type), version, value)
    frame = encode_record(record)
    assert frame[:3] == bytes([1, record_type, version])  # small uvarints: one byte each
    assert decode_record(frame) == record
    assert decode_record(memoryview(frame)) == record


def test_version_out_of_range_is_refused_on_write() -> None:
    topic = RECORDS[MetadataRecordType.TOPIC_RECORD].cls(name="t")
    with pytest.raises(ValueError, match="TopicRecord has no version 1"):
        encode_record(MetadataRecord(MetadataRecordType.TOPIC_RECORD, 1, topic))


def test_newer_versions_read_as_kafka_reads_them() -> None:
    """Kafka's generated code reads a version above the newest it knows with the newest
    layout, unless it meets a nested struct."""
    topic = RECORDS[MetadataRecordType.TOPIC_RECORD].cls(name="t")
    frame = encode_record(MetadataRecord(MetadataRecordType.TOPIC_RECORD, 0, topic))
    newer = decode_record(frame[:2] + b"\x07" + frame[3:])
    assert (newer.version, newer.value) == (7, topic)
    quota = RECORDS[MetadataRecordType.CLIENT_QUOTA_RECORD]
    entity = quota.cls.EntityData(entity_type="user", entity_name="u")
    with_struct = encode_record(
        MetadataRecord(MetadataRecordType.CLIENT_QUOTA_RECORD, 0, quota.cls(entity=[entity]))
    )
    with pytest.raises(MetadataParseError, match="Failed to deserialize record with type 14"):
        decode_record(with_struct[:2] + b"\x01" + with_struct[3:])
    empty = encode_record(MetadataRecord(MetadataRecordType.CLIENT_QUOTA_RECORD, 0, quota.cls()))
    assert decode_record(empty[:2] + b"\x01" + empty[3:]).version == 1


def test_frame_layout() -> None:
    """The frame written for a TopicRecord, byte by byte (uvarints, then the record)."""
    topic = RECORDS[MetadataRecordType.TOPIC_RECORD].cls(name="foo")
    frame = encode_record(MetadataRecord(MetadataRecordType.TOPIC_RECORD, 0, topic))
    assert frame == b"\x01\x02\x00" + b"\x04foo" + bytes(16) + b"\x00"


def test_refusals_name_kafkas_reasons() -> None:
    """The refusals a broken frame header meets, in Kafka's words (the differential test
    above compares them with Kafka's at random; these are the reasons it must see)."""
    cases = {
        b"": "Error while reading frame version",
        b"\x00": "Could not deserialize metadata record with frame version 0. Note that "
        "upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.",
        b"\x02": "Could not deserialize metadata record due to unknown frame version 2(only "
        "frame version 1 is supported)",
        b"\x01\xff\xff\x03": "Value for type was too large.",
        b"\x01\x06\x00": "org.apache.kafka.common.errors.UnsupportedVersionException: "
        "Unknown metadata id 6",
        b"\x01\x02\x01": "Failed to deserialize record with type 2",
        b"\x01\x14\x00\x00\x07": "Found 1 byte(s) of garbage after 20",
    }
    for frame, reason in cases.items():
        with pytest.raises(MetadataParseError) as info:
            decode_record(frame)
        assert str(info.value) == reason
    noop = decode_record(b"\x01\x14\x00\x00")  # NoOpRecord v0: no fields, no tags
    assert (noop.type, noop.version) == (MetadataRecordType.NO_OP_RECORD, 0)
