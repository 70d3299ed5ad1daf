"""Corruption: a flipped byte or a truncated file is found by CRC and cut at the first
bad batch; ``recover()`` keeps exactly the valid prefix and rebuilds correct indexes.

The expected prefix is computed independently of the backends, from the positions of
the batches as they were written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.errors import CorruptRecordError

CODECS = [0, 1, 2, 3, 4]


def _write_segment(
    backend: ModuleType, directory: Path, n_batches: int, codec: int
) -> list[tuple[int, int, int, int]]:
    """Write batches; return ``(position, size, first_offset, last_offset)`` of each."""
    seg = backend.Segment(str(directory), 0, index_interval_bytes=64)
    layout = []
    for i in range(n_batches):
        recs = [
            (j, 1_700_000_000_000 + i * 10 + j, b"k%d" % j, b"v" * (20 + 7 * i), [])
            for j in range(1 + i % 4)
        ]
        pos = seg.size
        first, last, _, _, size = seg.append(backend.build_batch(recs, compression=codec))
        layout.append((pos, size, first, last))
    seg.close()
    return layout


def _recover(backend: ModuleType, directory: Path) -> tuple[Any, int]:
    seg = backend.Segment(str(directory), 0, index_interval_bytes=64)
    truncated = seg.recover()
    return seg, truncated


def _check_indexes(seg: Any, layout: list[tuple[int, int, int, int]]) -> None:
    by_pos = {pos: last for pos, _, _, last in layout}
    for offset, position in seg.offset_index():
        assert by_pos[position] == offset  # each entry points at the batch ending at `offset`
    for _, first, last in [(p, f, last) for p, _, f, last in layout if p < seg.size]:
        found = seg.translate_offset(first)
        assert found is not None and found[0] == last


@given(data=st.data(), codec=st.sampled_from(CODECS))
def test_flip_any_byte_keeps_exact_valid_prefix(
    backend: ModuleType, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, codec: int
) -> None:
    d = tmp_path_factory.mktemp("flip")
    layout = _write_segment(backend, d, 8, codec)
    log = d / f"{0:020d}.log"
    raw = bytearray(log.read_bytes())
    # Bytes 0-7 (base offset) and 12-15 (leader epoch) are outside the CRC; every other
    # byte of a batch is covered by the length field, the magic or the CRC.
    k = data.draw(st.integers(0, len(layout) - 1))
    pos, size, _, _ = layout[k]
    rel = data.draw(st.sampled_from(list(range(8, 12)) + list(range(16, size))))
    raw[pos + rel] ^= data.draw(st.integers(1, 255))
    log.write_bytes(bytes(raw))
    seg, truncated = _recover(backend, d)
    assert seg.size == pos
    assert truncated == len(raw) - pos
    assert seg.next_offset == (layout[k - 1][3] + 1 if k else 0)
    _check_indexes(seg, layout)
    seg.close()
    assert log.read_bytes() == bytes(raw[:pos])


@given(data=st.data(), codec=st.sampled_from(CODECS))
def test_truncate_anywhere_keeps_whole_batches(
    backend: ModuleType, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, codec: int
) -> None:
    d = tmp_path_factory.mktemp("cut")
    layout = _write_segment(backend, d, 6, codec)
    log = d / f"{0:020d}.log"
    raw = log.read_bytes()
    cut = data.draw(st.integers(0, len(raw)))
    os.truncate(log, cut)
    seg, truncated = _recover(backend, d)
    kept = [b for b in layout if b[0] + b[1] <= cut]
    expected_size = kept[-1][0] + kept[-1][1] if kept else 0
    assert (seg.size, truncated) == (expected_size, cut - expected_size)
    assert seg.next_offset == (kept[-1][3] + 1 if kept else 0)
    _check_indexes(seg, layout)
    seg.close()


def test_recover_rebuilds_deleted_and_garbage_indexes(backend: ModuleType, tmp_path: Path) -> None:
    layout = _write_segment(backend, tmp_path, 30, 0)
    index = tmp_path / f"{0:020d}.index"
    good_index = index.read_bytes()
    assert len(good_index) > 8
    index.write_bytes(b"\xff" * len(good_index))
    seg = backend.Segment(str(tmp_path), 0, index_interval_bytes=64)
    with pytest.raises(Exception, match=re.escape(str(index))):
        seg.sanity_check()
    assert seg.recover() == 0
    seg.sanity_check()
    _check_indexes(seg, layout)
    seg.close()
    assert index.read_bytes() == good_index


@pytest.mark.parametrize("codec", CODECS)
def test_corrupt_batch_error_names_position(backend: ModuleType, codec: int) -> None:
    a = backend.build_batch([(0, 1, b"k", b"v" * 50, [("h", b"x")])], compression=codec)
    b = bytearray(backend.build_batch([(1, 2, None, b"w" * 50, [])], compression=codec))
    b[-3] ^= 0x55
    buf = a + bytes(b)
    with pytest.raises(CorruptRecordError, match=rf"position {len(a)}\b"):
        backend.validate_batch(buf, len(a))
    with pytest.raises(CorruptRecordError, match=rf"position {len(a)}\b"):
        backend.batch_records(buf, len(a))
    assert backend.validate_batch(buf, 0)[12] == 1


def test_append_refuses_corrupt_batch_and_writes_nothing(
    backend: ModuleType, tmp_path: Path
) -> None:
    seg = backend.Segment(str(tmp_path), 0)
    good = backend.build_batch([(0, 5, b"a", b"b", [])])
    bad = bytearray(good)
    bad[-1] ^= 1
    with pytest.raises(CorruptRecordError, match="position"):
        seg.append(good + bytes(bad))
    assert (seg.size, seg.next_offset) == (0, 0)
    seg.append(good)
    assert (seg.size, seg.next_offset) == (len(good), 1)
    seg.close()
