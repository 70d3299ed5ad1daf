"""ListOffsets against Apache Kafka 4.3.1: the same records on a kafkacore broker and on a
Kafka KRaft node from its jars, then every special timestamp (-1 latest, -2 earliest, -3
max timestamp, -4 earliest local, -5 latest tiered, -6 earliest pending upload, and
negative ones no version knows) and real ones, asked at every version both serve,
compared field by field (error code, timestamp, offset, leader epoch).

What it pins: Kafka's ``timestampMinSupportedVersion`` (a special timestamp asked below
the version that introduced it is UNSUPPORTED_VERSION for that partition alone), and the
tiered specs on a topic without tiered storage (-4 the log start, -5 and -6 nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kafkacore import backend
from kafkacore.protocol import APIS, APIS_BY_NAME, ApiKey
from support.brokers import Broker
from support.fetch_session_scenario import TOPIC, Raw, prepare
from support.kafka_jars import KraftNode

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

COMMON = ["offsets.topic.num.partitions=1", "group.initial.rebalance.delay.ms=0"]
_BASE_TS = 1_700_000_000_000  # fixed: the same batches on both brokers
_LIST: Any = APIS_BY_NAME["ListOffsets"].request.cls
_PRODUCE: Any = APIS_BY_NAME["Produce"].request.cls
SPECIAL = [-1, -2, -3, -4, -5, -6, -7, -100]
REAL = [_BASE_TS, _BASE_TS + 7, _BASE_TS + 25, _BASE_TS + 10_000]


@pytest.fixture(scope="module")
def both(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """(kafkacore port, Kafka port), each with the same three batches in partition 0."""
    kafka = KraftNode(kafka_libs, tmp_path_factory.mktemp("kafka"), *COMMON)
    ours = Broker(tmp_path_factory.mktemp("kafkacore") / "data", COMMON)
    try:
        with ThreadPoolExecutor(2) as pool:
            for started in [pool.submit(kafka.start), pool.submit(ours.start)]:
                started.result()
        for port in (ours.port, kafka.port):
            _seed(port)
        yield ours.port, kafka.port
    finally:
        kafka.stop()
        ours.stop()


def _seed(port: int) -> None:
    raw = Raw(port)
    try:
        prepare(raw)
        for b in range(3):
            # the batch's largest timestamp is its second record's: -3 finds it mid-batch
            stamps = [_BASE_TS + 10 * b, _BASE_TS + 10 * b + 9, _BASE_TS + 10 * b + 1]
            batch = bytes(
                backend.build_batch([(i, ts, None, b"v", []) for i, ts in enumerate(stamps)])
            )
            answer = raw.call(
                "Produce",
                9,
                _PRODUCE(
                    acks=-1,
                    timeout_ms=10_000,
                    topic_data=[
                        _PRODUCE.TopicProduceData(
                            name=TOPIC,
                            partition_data=[_PRODUCE.PartitionProduceData(index=0, records=batch)],
                        )
                    ],
                ),
            )
            assert answer.responses[0].partition_responses[0].error_code == 0
    finally:
        raw.close()


def _answers(port: int, version: int) -> list[tuple[int, int, int, int, int]]:
    """(timestamp asked, error code, timestamp, offset, leader epoch) for every spec, each
    in a request of its own (one partition, so that the answers do not depend on the
    order a broker answers partitions in)."""
    raw = Raw(port)
    out = []
    try:
        for spec in SPECIAL + REAL:
            request = _LIST(
                replica_id=-1,
                isolation_level=0,
                timeout_ms=5_000,
                topics=[
                    _LIST.ListOffsetsTopic(
                        name=TOPIC,
                        partitions=[
                            _LIST.ListOffsetsPartition(
                                partition_index=0, current_leader_epoch=-1, timestamp=spec
                            )
                        ],
                    )
                ],
            )
            p = raw.call("ListOffsets", version, request).topics[0].partitions[0]
            epoch = p.leader_epoch if version >= 4 else -1
            out.append((spec, p.error_code, p.timestamp, p.offset, epoch))
    finally:
        raw.close()
    return out


@pytest.mark.parametrize("version", range(1, APIS[ApiKey.LIST_OFFSETS].implemented_max + 1))
def test_list_offsets_answers_as_kafka(both: tuple[int, int], version: int) -> None:
    ours, theirs = both
    assert _answers(ours, version) == _answers(theirs, version)
