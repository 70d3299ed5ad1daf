"""kafka-python 2.0.2 (ApiVersions v0, sniffs the broker release), 2.3.3 (latest 2.x) and
3.0.12 (latest 3.x, idempotent producer by default), each from its own pip --target
directory in a subprocess (clients/kafka_python_client.py): every codec with keys and
headers, CreateTime and LogAppendTime, offsets_for_times, beginning/end offsets, and
create/delete topics through KafkaAdminClient. Consumers use assign()."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compat.conftest import Broker, batch_attributes, run_python_client

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

VERSIONS = ["2.0.2", "2.3.3", "3.0.12"]
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.fixture(scope="module", params=VERSIONS)
def run_result(
    request: pytest.FixtureRequest, test_clients: dict[str, Path], broker: Broker
) -> tuple[str, dict[str, Any], Broker]:
    version = str(request.param)
    prefix = "kp" + version.replace(".", "")
    result = run_python_client(
        test_clients[f"kafka-python-{version}"],
        "kafka_python_client.py",
        broker.bootstrap,
        prefix,
        timeout=150,
    )
    assert result["version"] == version
    return prefix, result, broker


def ok(result: dict[str, Any], scenario: str) -> Any:
    got = result[scenario]
    assert not (isinstance(got, dict) and "error" in got), f"{scenario}: {got}"
    return got


@pytest.mark.parametrize("codec", list(CODECS))
def test_codec_keys_headers(run_result: tuple[str, dict[str, Any], Broker], codec: str) -> None:
    prefix, result, broker = run_result
    got = ok(result, f"codec-{codec}")
    assert got["produced_offsets"] == list(range(50))
    attrs = batch_attributes(broker.data / f"{prefix}-codec-{codec}-0")
    assert {a & 7 for a in attrs} == {CODECS[codec]}, attrs
    if result["version"] == "2.0.2" and codec == "zstd":
        # kafka-python 2.0.2's consumer always fetches with Fetch v4, and Kafka answers a
        # zstd batch below Fetch v10 with UNSUPPORTED_COMPRESSION_TYPE: nothing arrives.
        assert got["consumed"] == []
        return
    consumed = got["consumed"]
    assert [r["offset"] for r in consumed] == list(range(50))
    assert [r["key"] for r in consumed] == [f"k{i}" for i in range(50)]
    assert consumed[7]["value"] == "v7-yy"
    assert consumed[7]["headers"] == [["h", "7"], ["const", "c"]]
    assert {r["timestamp_type"] for r in consumed} == {0}


def test_create_time_offsets_for_times(run_result: tuple[str, dict[str, Any], Broker]) -> None:
    _, result, _ = run_result
    got = ok(result, "create_time")
    assert [(r["value"], r["timestamp"], r["timestamp_type"]) for r in got["consumed"]] == [
        ("t0", 1000, 0),
        ("t1", 2000, 0),
        ("t2", 3000, 0),
    ]
    assert got["for_1500"] == [1, 2000]
    assert got["for_10000"] is None
    assert got["begin_end"] == [0, 3]


def test_admin_create_log_append_time_delete(
    run_result: tuple[str, dict[str, Any], Broker],
) -> None:
    _, result, _ = run_result
    got = ok(result, "admin")
    assert got == {
        "listed_after_create": True,
        "duplicate": "TopicAlreadyExistsError",
        "partitions": [0, 1, 2],
        "record_metadata_ts_ge_before": True,
        "lat_type": 1,
        "lat_ts_ge_before": True,
        "listed_after_delete": False,
    }
