"""File and directory names of a log directory (Kafka's LogFileUtils / LocalLog names)."""

from __future__ import annotations

import re

import pytest

from kafkacore.log import files
from kafkacore.log.files import TopicPartition, parse_topic_partition_name


def test_segment_file_names_are_20_digit_offsets() -> None:
    assert files.filename_prefix_from_offset(0) == "00000000000000000000"
    assert files.filename_prefix_from_offset(2**63 - 1) == "09223372036854775807"
    assert files.log_file("/d", 42) == "/d/00000000000000000042.log"
    assert (
        files.log_file("/d", 42, files.DELETED_FILE_SUFFIX) == "/d/00000000000000000042.log.deleted"
    )
    assert files.offset_index_file("/d", 7) == "/d/00000000000000000007.index"
    assert files.time_index_file("/d", 7, ".swap") == "/d/00000000000000000007.timeindex.swap"
    assert files.transaction_index_file("/d", 7) == "/d/00000000000000000007.txnindex"
    assert files.producer_snapshot_file("/d", 99) == "/d/00000000000000000099.snapshot"
    with pytest.raises(ValueError):
        files.filename_prefix_from_offset(-1)


def test_suffixes_are_kafkas() -> None:
    assert (
        files.LOG_FILE_SUFFIX,
        files.INDEX_FILE_SUFFIX,
        files.TIME_INDEX_FILE_SUFFIX,
        files.TXN_INDEX_FILE_SUFFIX,
        files.PRODUCER_SNAPSHOT_FILE_SUFFIX,
        files.DELETED_FILE_SUFFIX,
        files.CLEANED_FILE_SUFFIX,
        files.SWAP_FILE_SUFFIX,
        files.DELETE_DIR_SUFFIX,
        files.FUTURE_DIR_SUFFIX,
        files.STRAY_DIR_SUFFIX,
    ) == (
        ".log",
        ".index",
        ".timeindex",
        ".txnindex",
        ".snapshot",
        ".deleted",
        ".cleaned",
        ".swap",
        "-delete",
        "-future",
        "-stray",
    )
    assert files.RECOVERY_POINT_CHECKPOINT_FILE == "recovery-point-offset-checkpoint"
    assert files.LOG_START_OFFSET_CHECKPOINT_FILE == "log-start-offset-checkpoint"
    assert files.REPLICATION_OFFSET_CHECKPOINT_FILE == "replication-offset-checkpoint"
    assert files.CLEANER_OFFSET_CHECKPOINT_FILE == "cleaner-offset-checkpoint"
    assert files.LEADER_EPOCH_CHECKPOINT_FILE == "leader-epoch-checkpoint"
    assert files.PARTITION_METADATA_FILE == "partition.metadata"
    assert files.META_PROPERTIES_FILE == "meta.properties"


def test_offset_from_file_name_and_kinds() -> None:
    assert files.offset_from_file_name("00000000000000000042.log") == 42
    assert files.offset_from_file_name("/x/00000000000000000042.timeindex.deleted") == 42
    with pytest.raises(ValueError):
        files.offset_from_file_name("leader-epoch-checkpoint")
    assert files.is_log_file("00000000000000000000.log")
    assert not files.is_log_file("00000000000000000000.log.deleted")
    assert files.is_index_file("0.index") and files.is_index_file("0.timeindex")
    assert files.is_index_file("0.txnindex") and not files.is_index_file("0.index.swap")
    assert files.replace_suffix("a.log.swap", ".swap", "") == "a.log"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("test_topic-143", TopicPartition("test_topic", 143)),
        ("my-dashed-topic-0", TopicPartition("my-dashed-topic", 0)),
        ("foo.bar-testtopic-42.0123456789abcdef0123456789abcdef-delete", ("foo.bar-testtopic", 42)),
        ("t-1.0123456789abcdef0123456789abcdef-future", TopicPartition("t", 1)),
        ("t-2.0123456789abcdef0123456789abcdef-stray", TopicPartition("t", 2)),
        ("/var/kafka/orders-7/", TopicPartition("orders", 7)),
    ],
)
def test_parse_topic_partition_name(name: str, expected: TopicPartition) -> None:
    assert parse_topic_partition_name(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "",
        "test_topic1999",
        "test_topic1999.-delete",
        "-1999",
        "test_topic-",
        "test_topic-1999a",
        "non_kafka_dir",
        "non_kafka_dir-delete",
        "topic-99999999999",
    ],
)
def test_parse_topic_partition_name_rejects(name: str) -> None:
    with pytest.raises(ValueError, match="is not in the form of topic-partition"):
        parse_topic_partition_name(name)


def test_marked_dir_names() -> None:
    tp = TopicPartition("foo", 3)
    assert str(tp) == "foo-3" and files.log_dir_name(tp) == "foo-3"
    name = files.log_delete_dir_name(tp)
    assert re.fullmatch(r"foo-3\.[0-9a-z]{32}-delete", name)
    assert parse_topic_partition_name(name) == tp
    long = files.log_delete_dir_name(TopicPartition("n" + "o" * 248, 5))
    assert len(long) == 255 and re.fullmatch(r"no{212}-5\.[0-9a-z]{32}-delete", long)
    assert re.fullmatch(r"foo-3\.[0-9a-z]{32}-future", files.log_future_dir_name(tp))
    assert re.fullmatch(r"foo-3\.[0-9a-z]{32}-stray", files.log_stray_dir_name(tp))
    assert files.log_delete_dir_name(tp, "abc") == "foo-3.abc-delete"
