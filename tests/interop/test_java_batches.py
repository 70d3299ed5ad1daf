"""Batches written by Apache Kafka's own ``MemoryRecordsBuilder`` (java/BuildBatches.java),
read and rebuilt by kafkacore.

For every case: kafkacore's reading of the bytes (headers, CRCs, every record) equals the
builder's inputs and Kafka's own reading of the same bytes; an uncompressed batch built
by kafkacore from the same inputs is the same bytes as Kafka's; a compressed one has the
same header fields and the same records once decompressed (compressed bytes may differ
between implementations).
"""

from __future__ import annotations

import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.interop

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

# The cases of BuildBatches.java, spelled out so each one is its own test.
V2_CASES = [
    *(
        f"v2_{codec}_{kind}"
        for codec in CODECS
        for kind in ("createtime", "logappendtime", "large")
    ),
    "v2_none_many",
    "v2_gzip_many",
    "v2_none_idempotent",
    "v2_lz4_idempotent",
    "v2_none_transactional",
    "v2_none_control_commit",
    "v2_none_control_abort",
    "v2_none_offset_gaps",
    "v2_none_last_offset_override",
    "v2_none_delete_horizon",
    "v2_none_no_timestamps",
]
LEGACY_CASES = [
    *(f"v{magic}_{codec}" for magic in (0, 1) for codec in CODECS[:4]),
    "v1_none_logappendtime",
    "v1_gzip_logappendtime",
    "v0_gzip_offset_gaps",
    "v1_gzip_offset_gaps",
]
ALL_CASES = V2_CASES + LEGACY_CASES

Record = tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def _hex(value: str | None) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def _records(rows: list[Any]) -> list[Record]:
    return [
        (offset, ts, _hex(key), _hex(value), [(hk, _hex(hv)) for hk, hv in headers])
        for offset, ts, key, value, headers in rows
    ]


def expected_records(case: dict[str, Any]) -> list[Record]:
    """What a reader must return for the builder's inputs: LogAppendTime replaces every
    timestamp, magic 0 has none, legacy messages have no headers."""
    out = []
    for offset, ts, key, value, headers in _records(case["records"]):
        if case["magic"] == 0:
            ts = -1
        elif case["timestamp_type"] == 1:
            ts = case["log_append_time"]
        out.append((offset, ts, key, value, headers if case["magic"] == 2 else []))
    return out


@pytest.fixture(scope="module")
def cases(java_batches: Any) -> dict[str, dict[str, Any]]:
    return {case["name"]: case for case in java_batches.cases}


def test_manifest_has_every_case(java_batches: Any, java: Any) -> None:
    assert [c["name"] for c in java_batches.cases] == ALL_CASES
    assert java_batches.kafka_version == java.version


@pytest.mark.parametrize("name", ALL_CASES)
def test_kafka_reads_back_the_inputs(name: str, cases: dict[str, dict[str, Any]]) -> None:
    """The manifest's own consistency: Kafka's reader returns the expected records."""
    case = cases[name]
    assert _records(case["kafka_records"]) == expected_records(case)
    assert all(batch["is_valid"] for batch in case["kafka_batches"])


# --------------------------------------------------------------------------- parsing


def _attributes_fields(attributes: int) -> dict[str, Any]:
    return {
        "codec": attributes & 0x7,
        "timestamp_type": (attributes >> 3) & 1,
        "transactional": bool(attributes & 0x10),
        "control": bool(attributes & 0x20),
    }


def read_v2(backend: ModuleType, data: bytes) -> tuple[list[dict[str, Any]], list[Record]]:
    """kafkacore's reading of a file of v2 batches, in the manifest's terms."""
    batches: list[dict[str, Any]] = []
    records: list[Record] = []
    pos = 0
    while pos < len(data):
        header = backend.validate_batch(data, pos)
        (base, length, epoch, magic, crc, attributes, last_delta, _base_ts, max_ts) = header[:9]
        producer_id, producer_epoch, base_sequence, count = header[9:]
        batches.append(
            {
                "position": pos,
                "size": length + 12,
                "magic": magic,
                "base_offset": base,
                "last_offset": base + last_delta,
                "crc": crc,
                "max_timestamp": max_ts,
                "producer_id": producer_id,
                "producer_epoch": producer_epoch,
                "base_sequence": base_sequence,
                "partition_leader_epoch": epoch,
                "count": count,
                **_attributes_fields(attributes),
            }
        )
        records.extend(backend.batch_records(data, pos))
        pos += length + 12
    return batches, records


def read_legacy(backend: ModuleType, data: bytes) -> tuple[list[dict[str, Any]], list[Record]]:
    """kafkacore's reading of a legacy message set, in the manifest's terms."""
    batches: list[dict[str, Any]] = []
    records: list[Record] = []
    pos = 0
    while pos < len(data):
        offset, size, crc, magic, attributes, timestamp = backend.legacy_header(data, pos)
        inner = backend.legacy_records(data, pos)
        batches.append(
            {
                "position": pos,
                "size": size + 12,
                "magic": magic,
                "base_offset": inner[0][0],
                "last_offset": offset,
                "crc": crc,
                "codec": attributes & 0x7,
                "timestamp_type": -1 if magic == 0 else (attributes >> 3) & 1,
                "max_timestamp": timestamp,
            }
        )
        records.extend(inner)
        pos += size + 12
    return batches, records


@pytest.mark.parametrize("name", V2_CASES)
def test_v2_batches_parse(
    name: str, cases: dict[str, dict[str, Any]], java_batches: Any, backend: ModuleType
) -> None:
    case = cases[name]
    data = java_batches.data(case)
    batches, records = read_v2(backend, data)
    kafka = [{k: b[k] for k in batches[0]} for b in case["kafka_batches"]]
    assert batches == kafka
    assert records == expected_records(case)
    # The stored CRC is the CRC-32C of everything after it.
    for batch in batches:
        start, end = batch["position"], batch["position"] + batch["size"]
        assert backend.crc32c(data[start + 21 : end]) == batch["crc"]


@pytest.mark.parametrize("name", LEGACY_CASES)
def test_legacy_message_sets_parse(
    name: str, cases: dict[str, dict[str, Any]], java_batches: Any, backend: ModuleType
) -> None:
    case = cases[name]
    data = java_batches.data(case)
    batches, records = read_legacy(backend, data)
    kafka = [{k: b[k] for k in batches[0]} for b in case["kafka_batches"]]
    assert batches == kafka
    assert records == expected_records(case)
    for batch in batches:
        start, end = batch["position"], batch["position"] + batch["size"]
        assert backend.crc32(data[start + 16 : end]) == batch["crc"]


# --------------------------------------------------------------------------- building


def build_like_kafka(backend: ModuleType, case: dict[str, Any], directory: Path) -> bytes:
    """kafkacore's batch for the builder inputs of ``case``.

    CreateTime: ``build_batch``. LogAppendTime: Kafka's builder stamps maxTimestamp with
    the append time, which kafkacore does where the broker does, in ``Segment.append``:
    so append a CreateTime batch to a segment at the case's base offset with that time
    and the partition leader epoch, and read the stamped batch back.
    """
    records = _records(case["records"])
    last_offset_delta = None
    if case["last_offset_override"] is not None:
        last_offset_delta = case["last_offset_override"] - case["base_offset"]
    batch = backend.build_batch(
        records,
        base_offset=case["base_offset"],
        last_offset_delta=last_offset_delta,
        compression=case["codec"],
        timestamp_type=0,
        partition_leader_epoch=case["partition_leader_epoch"],
        producer_id=case["producer_id"],
        producer_epoch=case["producer_epoch"],
        base_sequence=case["base_sequence"],
        transactional=case["transactional"],
        control=case["control"],
        delete_horizon_ms=case["delete_horizon_ms"],
    )
    if case["timestamp_type"] == 0:
        return bytes(batch)
    segment = backend.Segment(str(directory), case["base_offset"])
    try:
        segment.append(
            batch,
            partition_leader_epoch=case["partition_leader_epoch"],
            log_append_time_ms=case["log_append_time"],
        )
        return bytes(segment.read_bytes(0, segment.size))
    finally:
        segment.close()


UNCOMPRESSED_V2 = [n for n in V2_CASES if n.startswith("v2_none_")]
COMPRESSED_V2 = [n for n in V2_CASES if not n.startswith("v2_none_")]


@pytest.mark.parametrize("name", UNCOMPRESSED_V2)
def test_uncompressed_v2_identical_to_kafka(
    name: str,
    cases: dict[str, dict[str, Any]],
    java_batches: Any,
    backend: ModuleType,
    tmp_path: Path,
) -> None:
    case = cases[name]
    assert build_like_kafka(backend, case, tmp_path) == java_batches.data(case)


@pytest.mark.parametrize("name", COMPRESSED_V2)
def test_compressed_v2_same_header_and_records_as_kafka(
    name: str,
    cases: dict[str, dict[str, Any]],
    java_batches: Any,
    backend: ModuleType,
    tmp_path: Path,
) -> None:
    case = cases[name]
    ours = build_like_kafka(backend, case, tmp_path)
    theirs = java_batches.data(case)
    # Everything but batchLength (8..12) and the CRC (17..21) is the same...
    assert ours[:8] == theirs[:8]
    assert ours[12:17] == theirs[12:17]
    assert ours[21:61] == theirs[21:61]
    # ...and the records section decompresses to the same bytes.
    codec = case["codec"]
    assert backend.decompress(codec, ours[61:]) == backend.decompress(codec, theirs[61:])


def _legacy_value(message: bytes) -> bytes:
    """The value of one legacy message (its 12-byte log overhead included)."""
    magic = message[16]
    pos = 18 + (8 if magic == 1 else 0)
    (key_len,) = struct.unpack_from(">i", message, pos)
    pos += 4 + max(key_len, 0)
    (value_len,) = struct.unpack_from(">i", message, pos)
    return message[pos + 4 : pos + 4 + value_len]


# build_legacy numbers v1 inner messages 0..n-1 (its contract), so it cannot express the
# offset gaps Kafka's builder keeps (inner offset = offset - base offset): parsing of those
# is covered above.
BUILD_LEGACY_CASES = [n for n in LEGACY_CASES if n != "v1_gzip_offset_gaps"]


@pytest.mark.parametrize("name", BUILD_LEGACY_CASES)
def test_build_legacy_like_kafka(
    name: str, cases: dict[str, dict[str, Any]], java_batches: Any, backend: ModuleType
) -> None:
    """Uncompressed: the same bytes. Wrapped: the same wrapper header fields and the same
    inner message set (Kafka's v0 lz4 frames carry its historical wrong header checksum,
    so those are compared through legacy_records only)."""
    case = cases[name]
    theirs = java_batches.data(case)
    records = expected_records(case)
    timestamp_type = max(case["timestamp_type"], 0)  # magic 0: NoTimestampType (-1)
    ours = bytes(backend.build_legacy(records, case["magic"], case["codec"], timestamp_type))
    if case["codec"] == 0:
        assert ours == theirs
        return
    ours_header = backend.legacy_header(ours, 0)
    theirs_header = backend.legacy_header(theirs, 0)
    # offset, magic, attributes, timestamp (size and crc follow the compressed bytes)
    assert [ours_header[i] for i in (0, 3, 4, 5)] == [theirs_header[i] for i in (0, 3, 4, 5)]
    assert backend.legacy_records(ours, 0) == backend.legacy_records(theirs, 0)
    if (case["magic"], case["codec"]) != (0, 3):
        codec = case["codec"]
        assert backend.decompress(codec, _legacy_value(ours)) == backend.decompress(
            codec, _legacy_value(theirs)
        )
