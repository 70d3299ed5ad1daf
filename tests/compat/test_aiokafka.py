"""aiokafka (latest, 0.14) from its own pip --target directory in a subprocess
(clients/aiokafka_client.py): every codec with keys and headers, the idempotent producer,
CreateTime and LogAppendTime, offsets_for_times, beginning/end offsets, and create/delete
topics through AIOKafkaAdminClient. Consumers use assign()."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from compat.conftest import Broker, batch_attributes, run_python_client

pytestmark = pytest.mark.timeout(120)

VERSION = "0.14.0"
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.fixture(scope="module")
def result(test_clients: dict[str, Path], broker: Broker) -> dict[str, Any]:
    got = run_python_client(
        test_clients[f"aiokafka-{VERSION}"], "aiokafka_client.py", broker.bootstrap, "aio"
    )
    assert got["version"] == VERSION
    return dict(got)


def ok(result: dict[str, Any], scenario: str) -> Any:
    got = result[scenario]
    assert not (isinstance(got, dict) and "error" in got), f"{scenario}: {got}"
    return got


def first_batch_producer(partition_dir: Path) -> tuple[int, int, int]:
    """(producerId, producerEpoch, baseSequence) of the first batch on disk."""
    data = (partition_dir / "00000000000000000000.log").read_bytes()
    return struct.unpack_from(">qhi", data, 43)


@pytest.mark.parametrize("codec", [*CODECS, "idempotent-lz4"])
def test_codec_keys_headers(result: dict[str, Any], broker: Broker, codec: str) -> None:
    got = ok(result, codec if codec.startswith("idem") else f"codec-{codec}")
    assert got["produced_offsets"] == list(range(50))
    topic_dir = broker.data / (
        "aio-codec-lz4-idem-0" if codec.startswith("idem") else f"aio-codec-{codec}-0"
    )
    attrs = batch_attributes(topic_dir)
    assert {a & 7 for a in attrs} == {CODECS.get(codec, 3)}, attrs
    pid, epoch, seq = first_batch_producer(topic_dir)
    if codec.startswith("idem"):
        assert pid >= 0 and epoch == 0 and seq == 0
    else:  # aiokafka writes baseSequence 0 without a producer id; Kafka keeps it as sent
        assert (pid, epoch) == (-1, -1)
    consumed = got["consumed"]
    assert [r["offset"] for r in consumed] == list(range(50))
    assert [r["key"] for r in consumed] == [f"k{i}" for i in range(50)]
    assert consumed[7]["value"] == "v7-yy"
    assert consumed[7]["headers"] == [["h", "7"], ["const", "c"]]
    assert {r["timestamp_type"] for r in consumed} == {0}


def test_create_time_offsets_for_times(result: dict[str, Any]) -> None:
    got = ok(result, "create_time")
    assert [(r["value"], r["timestamp"], r["timestamp_type"]) for r in got["consumed"]] == [
        ("t0", 1000, 0),
        ("t1", 2000, 0),
        ("t2", 3000, 0),
    ]
    assert got["for_1500"] == [1, 2000]
    assert got["for_10000"] is None
    assert got["begin_end"] == [0, 3]


def test_admin_create_log_append_time_delete(result: dict[str, Any]) -> None:
    assert ok(result, "admin") == {
        "create_errors": [0],
        "listed_after_create": True,
        "duplicate_errors": [36],  # TOPIC_ALREADY_EXISTS
        "partitions": [0, 1, 2],
        "record_metadata_ts_ge_before": True,
        "lat_type": 1,
        "lat_ts_ge_before": True,
        "delete_errors": [0],
        "listed_after_delete": False,
    }
