"""``.txnindex`` files holding arbitrary bytes (a torn append, a bad disk, a hostile
copy): every read either answers or raises :class:`CorruptIndexError`, and truncation
leaves a file of whole, valid entries at most as long as it was. The ``.index`` and
``.timeindex`` (native) have the cargo-fuzz targets ``index`` and ``segment``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkacore.errors import CorruptIndexError
from kafkacore.log.txn_index import ABORTED_TXN_SIZE, AbortedTxn, TransactionIndex
from support.budget import examples

VALID = b"".join(AbortedTxn(7, 10 * i, 10 * i + 5, 10 * i + 6).encode() for i in range(4))


@st.composite
def index_bytes(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from([VALID, VALID[:50], b""])))
    for _ in range(draw(st.integers(0, 3))):
        if data and draw(st.booleans()):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        else:
            at = draw(st.integers(0, len(data)))
            data[at:at] = draw(st.binary(min_size=1, max_size=40))
    return bytes(data)


@settings(max_examples=examples(150), deadline=None)
@given(index_bytes(), st.integers(-5, 60), st.integers(-5, 60), st.integers(0, 30))
def test_txn_index_on_arbitrary_bytes(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, fetch: int, upper: int, start: int
) -> None:
    path: Path = tmp_path_factory.mktemp("txn") / f"{start:020d}.txnindex"
    path.write_bytes(data)
    index = TransactionIndex(start, str(path))
    for read in (
        index.all_aborted,
        lambda: index.collect(fetch, upper),
        index.last_offset,
        index.sanity_check,
    ):
        with contextlib.suppress(CorruptIndexError):
            read()
    with contextlib.suppress(CorruptIndexError):
        index.truncate_to(fetch)
        after = path.read_bytes() if path.exists() else b""
        assert len(after) <= len(data)
        assert len(after) % ABORTED_TXN_SIZE == 0
        assert all(e.last_offset < fetch for e in TransactionIndex(start, str(path)).entries())
