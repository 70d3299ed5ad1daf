"""Columnar decoding benchmarks (figures, not pass/fail): `make bench`.

~1e5 records of 100-byte values with 16-byte keys, in batches of 500 records as a Fetch
response or a segment holds them; ``decode_columns`` on its own and
``kafkacore.arrow.decode`` (the Spark source's hot path: buffers wrapped into a
``pyarrow.RecordBatch``), both backends in one run. The amount is the input bytes, so
report.py's MB/s and native/pure ratio compare the same work.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

import kafkacore.arrow
from kafkacore.native import load_backend

RECORDS = 100_000
PER_BATCH = 500
VALUE_SIZE = 100
CODEC_NAME = {0: "none", 3: "lz4"}
_DATA: dict[int, bytes] = {}


def info(benchmark: Any, op: str, impl: str, amount: int) -> None:
    benchmark.extra_info.update({"op": op, "impl": impl, "amount": amount, "unit": "bytes"})


def fetch_data(codec: int) -> bytes:
    """The stored batches (built once per codec by the native builder)."""
    if codec not in _DATA:
        native = load_backend("native")
        value = bytes(range(VALUE_SIZE))
        batches = []
        for base in range(0, RECORDS, PER_BATCH):
            records = [
                (o, 1_700_000_000_000 + o, b"key-%012d" % o, value, [])
                for o in range(base, base + PER_BATCH)
            ]
            batches.append(native.build_batch(records, compression=codec))
        _DATA[codec] = b"".join(batches)
    return _DATA[codec]


def run(benchmark: Any, backend_name: str, fn: Callable[[], Any]) -> None:
    # The pure backend takes seconds per call: a few rounds give a stable median.
    if backend_name == "pure":
        benchmark.pedantic(fn, rounds=3, iterations=1)
    else:
        benchmark(fn)


@pytest.mark.parametrize("codec", [0, 3], ids=["none", "lz4"])
def test_decode_columns(benchmark: Any, backend: ModuleType, backend_name: str, codec: int) -> None:
    data = fetch_data(codec)
    info(benchmark, f"decode_columns 1e5x100B {CODEC_NAME[codec]}", backend_name, len(data))
    result: list[Any] = []
    run(
        benchmark,
        backend_name,
        lambda: result.append(backend.decode_columns(data, 0, RECORDS, False)),
    )
    assert result[-1][0] == RECORDS


@pytest.mark.parametrize("codec", [0, 3], ids=["none", "lz4"])
def test_arrow_decode(
    benchmark: Any,
    backend: ModuleType,
    backend_name: str,
    codec: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = fetch_data(codec)
    monkeypatch.setattr(kafkacore.arrow, "backend", backend)
    info(benchmark, f"arrow.decode 1e5x100B {CODEC_NAME[codec]}", backend_name, len(data))
    result: list[Any] = []
    run(
        benchmark,
        backend_name,
        lambda: result.append(kafkacore.arrow.decode(data, "bench", 0, 0, RECORDS, True)),
    )
    assert result[-1][0].num_rows == RECORDS
