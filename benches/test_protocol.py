"""Protocol codec benchmarks (figures, not pass/fail): the two hot paths.

* decode a Produce v9 request carrying one 16 KiB record batch (the broker's input);
* encode a Fetch v12 response carrying 1 MiB of records (the broker's output).

``amount`` is one call (1 request / 1 response); ``report.py`` turns the median into
calls per second. The codec is pure Python: impl "python".
"""

from __future__ import annotations

from typing import Any

from kafkacore.protocol import (
    APIS_BY_NAME,
    RequestHeader,
    decode_request,
    encode_request,
    encode_response,
)

KiB, MiB = 1024, 1024 * 1024


def info(benchmark: Any, op: str, amount: int = 1, unit: str = "requests") -> None:
    benchmark.extra_info.update({"op": op, "impl": "python", "amount": amount, "unit": unit})


def test_decode_produce_v9_16kib(benchmark: Any) -> None:
    produce = APIS_BY_NAME["Produce"].request.cls
    request = produce(
        transactional_id=None,
        acks=-1,
        timeout_ms=30000,
        topic_data=[
            produce.TopicProduceData(
                name="orders",
                partition_data=[produce.PartitionProduceData(index=3, records=bytes(16 * KiB))],
            )
        ],
    )
    frame = encode_request(RequestHeader(0, 9, 17, "producer-1"), request)[4:]
    info(benchmark, "decode Produce v9 (16 KiB batch)")
    _, decoded = benchmark(decode_request, frame)
    assert len(decoded.topic_data[0].partition_data[0].records) == 16 * KiB


def test_encode_fetch_v12_1mib(benchmark: Any) -> None:
    fetch = APIS_BY_NAME["Fetch"].response.cls
    records = memoryview(bytes(MiB))
    header = RequestHeader(1, 12, 99, "consumer-1")

    def build_and_encode() -> bytes:
        part = fetch.PartitionData(
            partition_index=0,
            high_watermark=1000,
            last_stable_offset=1000,
            log_start_offset=0,
            aborted_transactions=None,
            records=records,
        )
        response = fetch(
            responses=[fetch.FetchableTopicResponse(topic="orders", partitions=[part])]
        )
        return encode_response(header, response)

    info(benchmark, "encode Fetch v12 (1 MiB records)", unit="responses")
    out = benchmark(build_and_encode)
    assert len(out) > MiB
