"""kafkacore's ``__remote_log_metadata`` records against Apache Kafka 4.3.1's.

* **Declarations**: the four remote log metadata records equal Kafka's definitions (the
  JSON in kafka-storage's jar) field by field.
* **Frames**: hypothesis-drawn segment metadata, updates and partition deletions are
  framed by our ``serialize``; Kafka's ``RemoteLogMetadataSerde`` reads each into its own
  model object and writes it back byte for byte the same (java/RemoteLogMetadataRecords.java,
  one JVM), its ``toString`` shows our values, and our ``deserialize`` reads the frame back
  to the value we wrote.
* **Partitioner**: the ``__remote_log_metadata`` partition of a user partition is Kafka's
  ``RemoteLogMetadataTopicPartitioner``'s.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.log.remote.model import (
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
)
from kafkacore.log.remote.records import (
    RECORDS,
    RemoteLogMetadataParseError,
    deserialize,
    metadata_partition,
    serialize,
)
from support.budget import examples
from support.kafka_schemas import STORAGE_DEFINITION_DIRS, kafka_definitions, schema_differences

pytestmark = [pytest.mark.interop, pytest.mark.downloads]


@pytest.fixture(scope="module")
def serde(java: Any) -> Iterator[Any]:
    with java.serve("RemoteLogMetadataRecords") as server:
        yield server


@pytest.mark.parametrize("api_key", sorted(RECORDS), ids=lambda k: RECORDS[k].name)
def test_declaration_is_kafkas_definition(kafka_libs: Path, api_key: int) -> None:
    definitions = kafka_definitions(kafka_libs, STORAGE_DEFINITION_DIRS)
    schema = RECORDS[api_key]
    assert definitions[schema.name]["apiKey"] == api_key
    problems = schema_differences(schema, definitions[schema.name], list(schema.valid))
    assert not problems, "\n".join(problems)


uuids = st.uuids(version=4).filter(lambda u: u.int != 0)
topics = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=40)
tips = st.builds(TopicIdPartition, uuids, topics, st.integers(0, 2**31 - 1))
segment_ids = st.builds(RemoteLogSegmentId, tips, uuids)
longs = st.integers(0, 2**63 - 1)
custom = st.none() | st.binary(max_size=64)


@st.composite
def segment_metadata(draw: st.DrawFn) -> RemoteLogSegmentMetadata:
    start = draw(st.integers(0, 2**62))
    end = draw(st.integers(start, 2**62 + 2**40))
    epochs = draw(st.dictionaries(st.integers(0, 2**31 - 1), st.integers(start, end), min_size=1))
    return RemoteLogSegmentMetadata(
        segment_id=draw(segment_ids),
        start_offset=start,
        end_offset=end,
        max_timestamp_ms=draw(st.integers(-1, 2**62)),
        broker_id=draw(st.integers(0, 2**31 - 1)),
        event_timestamp_ms=draw(longs),
        segment_size_in_bytes=draw(st.integers(0, 2**31 - 1)),
        segment_leader_epochs=epochs,
        state=draw(st.sampled_from(RemoteLogSegmentState)),
        custom_metadata=draw(custom),
        txn_index_empty=draw(st.booleans()),
    )


updates = st.builds(
    RemoteLogSegmentMetadataUpdate,
    segment_id=segment_ids,
    event_timestamp_ms=longs,
    custom_metadata=custom,
    state=st.sampled_from(
        [s for s in RemoteLogSegmentState if s is not RemoteLogSegmentState.COPY_SEGMENT_STARTED]
    ),
    broker_id=st.integers(0, 2**31 - 1),
)
deletes = st.builds(
    RemotePartitionDeleteMetadata,
    topic_id_partition=tips,
    state=st.sampled_from(RemotePartitionDeleteState),
    event_timestamp_ms=longs,
    broker_id=st.integers(0, 2**31 - 1),
)


def _kafka_round_trip(serde: Any, frame: bytes) -> tuple[bytes, str]:
    answer = serde.ask("decode " + frame.hex())
    assert answer.startswith("ok "), answer
    _, hex_frame, text = answer.split(" ", 2)
    return bytes.fromhex(hex_frame), text


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(metadata=st.one_of(segment_metadata(), updates, deletes))
def test_kafka_reads_and_writes_our_frames(serde: Any, metadata: Any) -> None:
    frame = serialize(metadata)
    kafka_frame, text = _kafka_round_trip(serde, frame)
    assert kafka_frame == frame
    assert deserialize(kafka_frame) == metadata
    # Kafka's toString names what it read
    tip = metadata.topic_id_partition
    assert f"{uuid_to_base64(tip.topic_id)}:{tip.topic}-{tip.partition}" in text
    assert f"state={metadata.state.name}" in text or metadata.state.name in text
    if isinstance(metadata, RemoteLogSegmentMetadata):
        assert f"startOffset={metadata.start_offset}" in text
        assert f"endOffset={metadata.end_offset}" in text
        assert f"segmentSizeInBytes={metadata.segment_size_in_bytes}" in text


def test_a_frame_kafka_refuses_we_refuse(serde: Any) -> None:
    tip = TopicIdPartition(uuid.uuid4(), "t", 0)
    good = serialize(
        RemotePartitionDeleteMetadata(tip, RemotePartitionDeleteState.DELETE_PARTITION_MARKED, 1, 2)
    )
    for bad in (good[:-3], good + b"\x00", b"\x02" + good[1:], good[:1] + b"\x09" + good[2:]):
        assert serde.ask("decode " + bad.hex()).startswith("err "), bad.hex()
        with pytest.raises(RemoteLogMetadataParseError):
            deserialize(bad)


@settings(max_examples=examples(60), deadline=None)
@given(topic_id=uuids, partition=st.integers(0, 2**31 - 1), partitions=st.integers(1, 200))
def test_metadata_partition_is_kafkas(
    serde: Any, topic_id: uuid.UUID, partition: int, partitions: int
) -> None:
    answer = serde.ask(f"partition {uuid_to_base64(topic_id)} {partition} {partitions}")
    tip = TopicIdPartition(topic_id, "t", partition)
    assert answer == f"ok {metadata_partition(tip, partitions)}"
