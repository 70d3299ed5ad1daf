"""Produce's per-partition refusals over the wire, now decided below the handler: the
shape of the records (one whole magic-2 batch), leadership before ``acks=-1``'s ISR
check (Kafka's ``Partition.appendRecordsToLeader``), and the log validator's CreateTime
window. Codes and messages as the broker answered them before the checks moved."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kafkacore.log import TopicPartition
from kafkacore.metadata import PartitionState
from kafkacore.native import backend
from kafkacore.protocol import ErrorCode
from support.raw_client import RawClient, produce_request, run_broker

HOUR = 3_600_000


def batch(timestamp_ms: int, count: int = 1) -> bytes:
    return backend.build_batch([(i, timestamp_ms, b"k", b"v", []) for i in range(count)])


async def answer(client: RawClient, topic: str, records: bytes | None, acks: int = 1) -> Any:
    request = produce_request(topic, 0, records, acks=acks)  # type: ignore[arg-type]
    response = await client.call("Produce", 9, request)
    return response.responses[0].partition_responses[0]


def test_produce_refusals_keep_their_codes_and_messages(tmp_path: Path) -> None:
    async def scenario(server: Any) -> None:
        rm = server.services.replica_manager
        await server.services.run_io(rm.create_topic, "t", 1)
        await server.services.run_io(
            rm.create_topic, "appended", 1, {"message.timestamp.type": "LogAppendTime"}
        )
        client = await RawClient.connect(server.bound_port)
        try:
            now = int(time.time() * 1000)
            good = batch(now)
            cases: list[tuple[bytes | None, int, str]] = [
                (
                    None,
                    ErrorCode.INVALID_RECORD,
                    "Produce requests with version 3 or later must have at least one record batch",
                ),
                (good[:40], ErrorCode.CORRUPT_MESSAGE, "Record batch is shorter than its header"),
                (
                    good + good,
                    ErrorCode.INVALID_RECORD,
                    "Produce requests with version 3 or later must have exactly one record batch",
                ),
                (good[:-1], ErrorCode.CORRUPT_MESSAGE, "Record batch is truncated"),
                (
                    good[:16] + b"\x01" + good[17:],
                    ErrorCode.INVALID_RECORD,
                    "Produce requests with version 3 or later must use record batch magic v2",
                ),
            ]
            for records, code, message in cases:
                part = await answer(client, "t", records)
                assert (part.error_code, part.error_message, part.base_offset) == (
                    code,
                    message,
                    -1,
                )
            future = batch(now + 2 * HOUR)
            part = await answer(client, "t", future)
            assert part.error_code == ErrorCode.INVALID_TIMESTAMP
            assert part.error_message.startswith(
                f"Timestamp {now + 2 * HOUR} of message with offset 0 is out of range. "
                "The timestamp should be within ["
            )
            log = rm.get_log("t", 0)
            assert log is not None and log.log_end_offset == 0  # nothing was written
            assert (await answer(client, "t", good)).base_offset == 0
            # a LogAppendTime topic stamps the broker's time: nothing to refuse
            assert (await answer(client, "appended", future)).error_code == ErrorCode.NONE

            # a follower answers acks=-1 NOT_LEADER_OR_FOLLOWER (so the producer refreshes
            # its metadata), not NOT_ENOUGH_REPLICAS for the ISR it does not keep
            partition = rm.get_partition(TopicPartition("t", 0))
            partition.make_follower(PartitionState((1, 2), 2, 5, (2,), 5))
            part = await answer(client, "t", good, acks=-1)
            assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
            # ... and the shape is still checked first, as Kafka's KafkaApis does
            part = await answer(client, "t", good + good, acks=-1)
            assert part.error_code == ErrorCode.INVALID_RECORD
        finally:
            client.close()

    run_broker(tmp_path, scenario)
