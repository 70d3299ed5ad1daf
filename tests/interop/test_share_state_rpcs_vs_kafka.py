"""The share-state RPCs (what partition leaders send the share coordinator) sent raw to
Apache Kafka 4.3.1 and to kafkacore: Read before any state, Initialize, Write, Read,
ReadSummary, a stale Write, Delete and Read again answer field for field alike."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from support.brokers import Broker
from support.raw_brokers import KafkaNode, Raw, until
from support.share_raw import ShareBroker

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

OVERRIDES = [
    "offsets.topic.num.partitions=1",
    "share.coordinator.state.topic.num.partitions=1",
    "share.coordinator.state.topic.replication.factor=1",
    "share.coordinator.state.topic.min.isr=1",
]
GROUP = "state-rpcs"
_LOADING = (
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_COORDINATOR,
)


@pytest.fixture(scope="module")
def kafka(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    node = KafkaNode(kafka_libs, tmp_path_factory.mktemp("kafka"), OVERRIDES).start()
    try:
        yield Raw(node.port)
    finally:
        node.stop()


@pytest.fixture(scope="module")
def kafkacore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    broker = Broker(tmp_path_factory.mktemp("kafkacore") / "data", OVERRIDES).start()
    try:
        yield Raw(broker.port)
    finally:
        broker.stop()


def _coordinator_ready(raw: Raw, topic_id: uuid.UUID) -> None:
    """FindCoordinator (key type SHARE, key ``group:topic id (base64):partition``) until
    the share coordinator answers (the first lookup creates ``__share_group_state``),
    then reads until it has loaded."""

    def found() -> bool:
        answer = raw.call(
            "FindCoordinator",
            6,
            key_type=2,
            coordinator_keys=[f"{GROUP}:{uuid_to_base64(topic_id)}:0"],
        )
        return bool(answer.coordinators[0].error_code == ErrorCode.NONE)

    until("the share coordinator", found, 120)
    read = APIS_BY_NAME["ReadShareGroupState"].request.cls
    topic = read.ReadStateData(
        topic_id=topic_id, partitions=[read.PartitionData(partition=0, leader_epoch=0)]
    )

    def loaded() -> bool:
        answer = raw.call("ReadShareGroupState", 0, group_id=GROUP, topics=[topic])
        return answer.results[0].partitions[0].error_code not in _LOADING

    until("the share coordinator's load", loaded, 120)


def _partitions(answer: Any, topic_id: uuid.UUID) -> list[dict[str, Any]]:
    out = []
    for result in answer.results:
        assert result.topic_id == topic_id
        for p in result.partitions:
            fields = p.to_dict()  # Kafka's field names
            if "StateBatches" in fields:
                fields["StateBatches"] = [
                    (b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                    for b in p.state_batches
                ]
            out.append(fields)
    return out


def _steps(raw: Raw) -> list[tuple[str, list[dict[str, Any]]]]:
    """The sequence on one broker, about partition 0 of a new topic (the share
    coordinator checks that the partition exists)."""
    broker = ShareBroker(raw)
    broker.create_topic("state-rpcs")
    topic_id = broker.ids["state-rpcs"]
    _coordinator_ready(raw, topic_id)

    def req(name: str) -> Any:
        return APIS_BY_NAME[name].request.cls

    def call(name: str, version: int, **partition: Any) -> tuple[str, list[dict[str, Any]]]:
        data = {
            "InitializeShareGroupState": "InitializeStateData",
            "ReadShareGroupState": "ReadStateData",
            "WriteShareGroupState": "WriteStateData",
            "DeleteShareGroupState": "DeleteStateData",
            "ReadShareGroupStateSummary": "ReadStateSummaryData",
        }[name]
        cls = req(name)
        topic = getattr(cls, data)(
            topic_id=topic_id, partitions=[cls.PartitionData(partition=0, **partition)]
        )
        return name, _partitions(raw.call(name, version, group_id=GROUP, topics=[topic]), topic_id)

    batch = req("WriteShareGroupState").StateBatch
    write = {
        "state_epoch": 0,
        "leader_epoch": 0,
        "start_offset": 10,
        "delivery_complete_count": 1,
        "state_batches": [
            batch(first_offset=10, last_offset=12, delivery_state=2, delivery_count=1),
            batch(first_offset=13, last_offset=13, delivery_state=0, delivery_count=2),
        ],
    }
    return [
        call("ReadShareGroupState", 0, leader_epoch=0),
        call("InitializeShareGroupState", 0, state_epoch=0, start_offset=5),
        call("ReadShareGroupState", 0, leader_epoch=0),
        call("WriteShareGroupState", 1, **write),
        call("ReadShareGroupState", 0, leader_epoch=1),
        call("ReadShareGroupStateSummary", 1, leader_epoch=1),
        call("WriteShareGroupState", 1, **{**write, "leader_epoch": -5}),
        call("InitializeShareGroupState", 0, state_epoch=0, start_offset=5),
        call("DeleteShareGroupState", 0),
        call("ReadShareGroupState", 0, leader_epoch=2),
    ]


def test_share_state_rpcs_answer_as_kafka(kafka: Raw, kafkacore: Raw) -> None:
    theirs = _steps(kafka)
    ours = _steps(kafkacore)
    for t, o in zip(theirs, ours, strict=True):
        assert o == t, f"{t[0]}:\n kafka     {t[1]}\n kafkacore {o[1]}"
    # the write was read back (not an answer both got wrong the same way)
    assert ours[4][1][0]["StartOffset"] == 10, ours[4]
    assert ours[4][1][0]["StateBatches"] == [(10, 12, 2, 1), (13, 13, 0, 2)], ours[4]
