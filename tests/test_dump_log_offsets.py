"""``__consumer_offsets`` records (``kafkacore.tools.offsets_records``) and the dump tool's
``--offsets-decoder`` and checkpoint files.

The byte layouts here are written out by hand from the format (an int16 record type or
version, then the struct); the comparison with Kafka's own serde and with
``DumpLogSegments --offsets-decoder`` is in ``tests/interop/test_dump_log_vs_kafka.py``.
"""

from __future__ import annotations

import io
import struct
import uuid
from pathlib import Path
from types import ModuleType

import pytest

from kafkacore.cli import main
from kafkacore.errors import InvalidRecordError
from kafkacore.log.checkpoints import (
    EpochEntry,
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadataFile,
)
from kafkacore.log.files import TopicPartition
from kafkacore.tools import offsets_records as orec
from kafkacore.tools.dump_log import DumpFailure, DumpOptions, DumpUsageError, dump_files

T0 = 1_700_000_000_000


def s16(text: str) -> bytes:
    """A non-flexible string: int16 length + UTF-8."""
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def b32(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


# --- the typed encoders: Kafka's byte layouts ------------------------------------------------


def test_offset_commit_key_layout() -> None:
    assert orec.offset_commit_key("grp", "tópic", 7) == (
        struct.pack(">h", 1) + s16("grp") + s16("tópic") + struct.pack(">i", 7)
    )


def test_group_metadata_key_layout() -> None:
    assert orec.group_metadata_key("grp") == struct.pack(">h", 2) + s16("grp")


def test_offset_commit_value_is_v3_or_v1_with_an_expiry() -> None:
    assert orec.offset_commit_value(42, 5, "meta", T0) == (
        struct.pack(">hqi", 3, 42, 5) + s16("meta") + struct.pack(">q", T0)
    )
    # v1: no leader epoch, the expire timestamp last
    assert orec.offset_commit_value(42, 5, "", T0, T0 + 9) == (
        struct.pack(">hq", 1, 42) + s16("") + struct.pack(">qq", T0, T0 + 9)
    )


def test_offset_commit_value_v4_is_flexible_with_a_tagged_topic_id() -> None:
    topic_id = uuid.UUID(int=0x0102030405060708090A0B0C0D0E0F10)
    assert orec.offset_commit_value(1, 2, "m", T0, version=4, topic_id=topic_id) == (
        struct.pack(">hqi", 4, 1, 2)
        + b"\x02m"  # compact string: length + 1
        + struct.pack(">q", T0)
        + b"\x01\x00\x10"  # one tagged field: tag 0, 16 bytes
        + topic_id.bytes
    )
    # without a topic id the tagged field is left out
    assert orec.offset_commit_value(1, 2, "m", T0, version=4).endswith(b"\x00")


def test_group_metadata_value_is_v3() -> None:
    member = orec.MemberMetadata(
        "m-1", "client", "/1.2.3.4", 10_000, b"sub", b"asg", 20_000, group_instance_id="static"
    )
    expected = (
        struct.pack(">h", 3)
        + s16("consumer")
        + struct.pack(">i", 4)
        + s16("range")
        + s16("m-1")
        + struct.pack(">q", T0)
        + struct.pack(">i", 1)  # one member
        + s16("m-1")
        + s16("static")
        + s16("client")
        + s16("/1.2.3.4")
        + struct.pack(">ii", 20_000, 10_000)
        + b32(b"sub")
        + b32(b"asg")
    )
    assert orec.group_metadata_value("consumer", 4, "range", "m-1", T0, [member]) == expected
    empty = orec.group_metadata_value("", 0, None, None, T0)
    assert empty == (struct.pack(">h", 3) + s16("") + struct.pack(">ihhqi", 0, -1, -1, T0, 0))


def test_typed_decoders_round_trip() -> None:
    assert orec.decode_key(orec.offset_commit_key("g", "t", 3)) == orec.OffsetCommitKey("g", "t", 3)
    assert orec.decode_key(orec.group_metadata_key("g")) == orec.GroupMetadataKey("g")
    for data, expected in [
        (orec.offset_commit_value(9, 2, "x", T0), (9, 2, "x", T0, -1, None, 3)),
        (orec.offset_commit_value(9, 2, "x", T0, T0 + 1), (9, -1, "x", T0, T0 + 1, None, 1)),
        (orec.offset_commit_value(9, 2, "x", T0, version=0), (9, -1, "x", T0, -1, None, 0)),
    ]:
        assert orec.decode_offset_commit_value(data) == orec.OffsetCommitValue(*expected)
    member = orec.MemberMetadata("m", "c", "/h", 1, b"s", b"a", 2, None)
    value = orec.decode_group_metadata_value(
        orec.group_metadata_value("consumer", 1, "range", "m", T0, [member])
    )
    assert value == orec.GroupMetadataValue("consumer", 1, "range", "m", T0, (member,), 3)
    # version 0 has neither rebalance timeout nor state timestamp: their defaults come back
    v0 = orec.decode_group_metadata_value(
        orec.group_metadata_value("consumer", 1, None, None, T0, [member], version=0)
    )
    assert (v0.current_state_timestamp, v0.members[0].rebalance_timeout) == (-1, -1)


def test_other_record_types_round_trip_generically() -> None:
    key = {"groupId": "g", "memberId": "m"}
    value = {
        "memberEpoch": 3,
        "previousMemberEpoch": 2,
        "state": 1,
        "assignedPartitions": [
            {"topicId": uuid.UUID(int=5), "partitions": [0, 1], "assignmentEpochs": [3, 3]}
        ],
    }
    key_bytes, value_bytes = orec.encode_record(8, key, 0, value)
    assert value_bytes is not None
    record = orec.decode_record(key_bytes, value_bytes)
    assert (record.type, record.version) == (8, 0)
    assert record.key["memberId"] == "m"
    assert record.value is not None
    assert record.value["assignedPartitions"][0]["assignmentEpochs"] == [3, 3]
    assert record.value["partitionsPendingRevocation"] == []
    assert orec.decode_record(key_bytes, None).is_tombstone


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (b"\x00", None, "Could not read version from key's buffer."),
        (b"\x00\x09", None, "Found an unknown record type 9"),
        (orec.group_metadata_key("g"), b"\x00\x05", "Found an unknown record version 5 for 2 type"),
        (
            orec.offset_commit_key("g", "t", 0),
            b"\x00\x03\x00",
            "Could not read record with version 3 from value's buffer due to: null.",
        ),
        (
            struct.pack(">hh", 2, -1),
            None,
            "Could not read record with version 2 from key's buffer due to: "
            "non-nullable field group was serialized as null.",
        ),
    ],
)
def test_malformed_records_raise_kafkas_message(
    key: bytes, value: bytes | None, message: str
) -> None:
    with pytest.raises(InvalidRecordError) as info:
        orec.decode_record(key, value)
    assert str(info.value) == message


def test_partition_for_group_is_javas_hash() -> None:
    # "polygenelubricants".hashCode() == Integer.MIN_VALUE, and Utils.abs(MIN_VALUE) == 0
    assert orec.partition_for_group("polygenelubricants") == 0
    assert orec.partition_for_group("") == 0
    assert orec.partition_for_group("a") == 97 % 50
    assert 0 <= orec.partition_for_group("any group", 3) < 3


# --- the decoder's text ------------------------------------------------------------------


def test_offsets_message_text() -> None:
    key = orec.offset_commit_key("g", "t", 0)
    assert orec.offsets_message_text(key, orec.offset_commit_value(5, 1, "", T0), 3) == (
        '{"type":"1","data":{"group":"g","topic":"t","partition":0}}',
        f'{{"version":"3","data":{{"offset":5,"leaderEpoch":1,"metadata":"","commitTimestamp":{T0}}}}}',
    )
    assert orec.offsets_message_text(key, None, 3)[1] == "<DELETE>"
    assert orec.offsets_message_text(b"\x00\x63", b"", 3) == (
        "Unknown record type 99 at offset 3, skipping.",
        None,
    )
    assert orec.offsets_message_text(key, b"\x00\x09", 4) == (
        "Error at offset 4, skipping. Found an unknown record version 9 for 1 type",
        None,
    )


def test_consumer_group_members_print_their_subscription_and_assignment() -> None:
    subscription = (
        struct.pack(">hi", 1, 1)
        + s16("orders")
        + b32(b"ud")
        + struct.pack(">i", 1)
        + s16("orders")
        + struct.pack(">iii", 2, 0, 1)
    )
    assignment = struct.pack(">hi", 0, 0) + struct.pack(">i", -1)
    member = orec.MemberMetadata("m", "c", "/h", 1, subscription, assignment, 2)
    for protocol_type, expected in [
        (
            "consumer",
            '"subscription":{"topics":["orders"],"userData":"dWQ=","ownedPartitions":'
            '[{"topic":"orders","partitions":[0,1]}]},'
            '"assignment":{"assignedPartitions":[],"userData":null}',
        ),
        (
            "connect",
            '"subscription":"AAEAAAABAAZvcmRlcnMAAAACdWQAAAABAAZvcmRlcnMAAAACAAAAAAAAAAE=",',
        ),
    ]:
        value = orec.group_metadata_value(protocol_type, 1, "range", "m", T0, [member])
        text = orec.offsets_message_text(orec.group_metadata_key("g"), value, 0)[1]
        assert text is not None and expected in text
    # bytes that do not parse stay base64, as Kafka leaves them
    odd = orec.MemberMetadata("m", "c", "/h", 1, b"\x00", b"", 2)
    value = orec.group_metadata_value("consumer", 1, "range", "m", T0, [odd])
    text = orec.offsets_message_text(orec.group_metadata_key("g"), value, 0)[1]
    assert text is not None and '"subscription":"AA==","assignment":""' in text


# --- dump-log --offsets-decoder -------------------------------------------------------------


@pytest.fixture
def offsets_log(backend: ModuleType, tmp_path: Path) -> Path:
    directory = tmp_path / "__consumer_offsets-3"
    directory.mkdir()
    segment = backend.Segment(str(directory), 0, index_interval_bytes=0)
    records = [
        (
            0,
            T0,
            orec.offset_commit_key("g", "t", 0),
            orec.offset_commit_value(10, 1, "", T0),
            [],
        ),
        (1, T0, orec.offset_commit_key("g", "t", 0), None, []),
        (2, T0, b"\x00\x2a", b"\x00\x00", []),
    ]
    segment.append(backend.build_batch(records, compression=1))
    segment.close()
    return Path(segment.log_path)


def run_dump(backend: ModuleType, files: list[Path], **options: bool) -> tuple[list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    dump_files([str(f) for f in files], DumpOptions(**options), out=out, err=err, backend=backend)  # type: ignore[arg-type]
    return out.getvalue().splitlines(), err.getvalue()


def test_offsets_decoder_prints_records(backend: ModuleType, offsets_log: Path) -> None:
    lines, _ = run_dump(backend, [offsets_log], offsets_decoder=True)
    records = [line for line in lines if line.startswith("| offset: ")]
    assert len(records) == 3
    assert records[0].endswith(
        ' key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: '
        f'{{"version":"3","data":{{"offset":10,"leaderEpoch":1,"metadata":"","commitTimestamp":{T0}}}}}'
    )
    assert records[1].endswith(" payload: <DELETE>")
    assert records[2].endswith(" key: Unknown record type 42 at offset 2, skipping.")
    skipped, _ = run_dump(backend, [offsets_log], offsets_decoder=True, skip_record_metadata=True)
    assert [line for line in skipped if line.startswith("| ")][1] == (
        '| key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: <DELETE>'
    )


def test_offsets_decoder_stops_at_a_record_without_key(backend: ModuleType, tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(backend.build_batch([(0, T0, None, b"v", [])]))
    out = io.StringIO()
    with pytest.raises(DumpFailure) as info:
        dump_files([str(log)], DumpOptions(offsets_decoder=True), out=out, backend=backend)
    assert info.value.kind == "RuntimeException"
    assert info.value.message == (
        "Failed to decode message at offset 0 using the specified decoder "
        "(message had a missing key)"
    )
    assert out.getvalue().endswith("headerKeys: []")  # the metadata, as Kafka printed it


def test_cli_offsets_decoder(offsets_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump-log", "--offsets-decoder", "--files", str(offsets_log)]) == 0
    assert "payload: <DELETE>" in capsys.readouterr().out


# --- checkpoint files ---------------------------------------------------------------------


def test_checkpoint_files_print_their_entries(backend: ModuleType, tmp_path: Path) -> None:
    partition = tmp_path / "orders-0"
    partition.mkdir()
    recovery = tmp_path / "recovery-point-offset-checkpoint"
    OffsetCheckpointFile(str(recovery)).write(
        {TopicPartition("orders", 0): 120, TopicPartition("orders", 1): 7}
    )
    log_start = tmp_path / "log-start-offset-checkpoint"
    OffsetCheckpointFile(str(log_start)).write({})
    epochs = partition / "leader-epoch-checkpoint"
    LeaderEpochCheckpointFile(str(epochs)).write([EpochEntry(0, 0), EpochEntry(3, 100)])
    topic_id = uuid.UUID(int=0x1234)
    PartitionMetadataFile.in_dir(str(partition)).write(topic_id)
    meta = tmp_path / "meta.properties"
    MetaProperties(1, "clusterA", 3, uuid.UUID(int=0x99)).write(str(meta))
    empty = tmp_path / "cleaner-offset-checkpoint"
    empty.write_bytes(b"")
    files = [recovery, log_start, epochs, partition / "partition.metadata", meta, empty]
    lines, err = run_dump(backend, files)
    assert err == ""
    assert lines == [
        f"Dumping {recovery}",
        "Checkpoint version: 0, entries: 2",
        "topic: orders partition: 0 offset: 120",
        "topic: orders partition: 1 offset: 7",
        f"Dumping {log_start}",
        "Checkpoint version: 0, entries: 0",
        f"Dumping {epochs}",
        "Checkpoint version: 0, entries: 2",
        "epoch: 0 startOffset: 0",
        "epoch: 3 startOffset: 100",
        f"Dumping {partition / 'partition.metadata'}",
        "version: 0 topicId: AAAAAAAAAAAAAAAAAAASNA",
        f"Dumping {meta}",
        "version: 1 cluster.id: clusterA node.id: 3 directory.id: AAAAAAAAAAAAAAAAAAAAmQ",
        f"Dumping {empty}",
        "Empty checkpoint file",
    ]


def test_corrupt_checkpoint_is_reported_and_the_dump_goes_on(
    backend: ModuleType, tmp_path: Path, offsets_log: Path
) -> None:
    bad = tmp_path / "replication-offset-checkpoint"
    bad.write_text("0\n2\norders 0 5\n")
    lines, err = run_dump(backend, [bad, offsets_log])
    assert lines[0] == f"Dumping {bad}"
    assert lines[1] == f"Dumping {offsets_log}"
    assert err.startswith("Expected [2] entries in checkpoint file [")


def test_missing_checkpoint_is_a_usage_error(backend: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(DumpUsageError):
        run_dump(backend, [tmp_path / "leader-epoch-checkpoint"])
    assert not (tmp_path / "leader-epoch-checkpoint").exists()  # nothing created
