"""Differential tests of the cleaner's hot path: ``KeyMap`` and ``filter_batches`` of the
Rust backend against the pure-Python twin.

Hypothesis draws logs of batches (keys from a small set so that they repeat, tombstones,
keyless records, offset gaps, every codec, both timestamp types, producer ids,
transactional and control batches, empty batches, batches that already carry a delete
horizon), map capacities that fill up, dirty ranges, clocks and retention times. Both
backends must agree on every return value and exception class; filtered output must be
byte-identical for uncompressed batches, and hold the same headers and records for
compressed rebuilt ones (codec outputs may differ).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore import errors
from kafkacore.pure.cleaner import empty_header

T0 = 1_700_000_000_000
KEYS = [None, b"", b"a", b"b", b"c", b"key-d" * 20]
H_LENGTH, H_CRC, H_ATTRIBUTES = 1, 4, 5


def control_batch(native: ModuleType, offset: int, producer_id: int, commit: bool) -> bytes:
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 7)
    return bytes(
        native.build_batch(
            [(offset, T0, key, value, [])],
            producer_id=producer_id,
            producer_epoch=1,
            transactional=True,
            control=True,
        )
    )


@st.composite
def logs(draw: st.DrawFn, native: ModuleType) -> tuple[bytes, int, int]:
    """A buffer of batches; returns it with its first and next offsets."""
    offset = first = draw(st.integers(min_value=0, max_value=2**40))
    parts: list[bytes] = []
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        kind = draw(st.sampled_from(["data"] * 6 + ["control", "empty"]))
        producer_id = draw(st.sampled_from([-1, -1, 5, 9]))
        if kind == "control":
            parts.append(control_batch(native, offset, max(producer_id, 3), draw(st.booleans())))
            offset += 1
            continue
        if kind == "empty":
            span = draw(st.integers(min_value=0, max_value=3))
            header = (offset, 49, 4, 2, 0, 0, span, -1, T0, producer_id, 0, 0, 0)
            parts.append(empty_header(header))
            offset += span + 1
            continue
        records = []
        base = offset
        for _ in range(draw(st.integers(min_value=1, max_value=6))):
            key = draw(st.sampled_from(KEYS))
            value = draw(st.none() | st.binary(max_size=30))
            ts = T0 + draw(st.integers(min_value=-1000, max_value=1000))
            headers = draw(st.sampled_from([[], [("h", b"v")], [("x", None), ("", b"")]]))
            records.append((offset, ts, key, value, headers))
            offset += draw(st.sampled_from([1, 1, 2, 5]))
        extra = draw(st.sampled_from([0, 0, 3]))
        batch = native.build_batch(
            records,
            base_offset=base,
            last_offset_delta=records[-1][0] - base + extra,
            compression=draw(st.sampled_from([0, 0, 1, 2, 3, 4])),
            timestamp_type=draw(st.sampled_from([0, 0, 1])),
            partition_leader_epoch=draw(st.integers(min_value=-1, max_value=9)),
            producer_id=producer_id,
            producer_epoch=2 if producer_id >= 0 else -1,
            base_sequence=11 if producer_id >= 0 else -1,
            transactional=producer_id >= 0 and draw(st.booleans()),
            delete_horizon_ms=draw(st.sampled_from([-1, -1, T0, T0 + 5000])),
        )
        parts.append(bytes(batch))
        offset = records[-1][0] + extra + 1
    return b"".join(parts), first, offset


def outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", fn())
    except (errors.KafkaCoreError, ValueError) as exc:
        return ("raised", type(exc).__name__)


def batches(backend: ModuleType, data: bytes) -> list[tuple[tuple[int, ...], bytes, list[Any]]]:
    out = []
    pos = 0
    while pos < len(data):
        header = tuple(backend.batch_header(data, pos))
        size = header[H_LENGTH] + 12
        out.append((header, data[pos : pos + size], backend.batch_records(data, pos)))
        pos += size
    return out


def assert_same_output(native: ModuleType, a: bytes, b: bytes) -> None:
    """Byte-identical uncompressed batches; for compressed ones, the same header fields
    (but length and CRC) and the same records, each backend's batches valid."""
    left, right = batches(native, a), batches(native, b)
    assert len(left) == len(right)
    for (h1, raw1, r1), (h2, raw2, r2) in zip(left, right, strict=True):
        if h1[H_ATTRIBUTES] & 0x07 == 0:
            assert raw1 == raw2
        else:
            mask = [i for i in range(13) if i not in (H_LENGTH, H_CRC)]
            assert [h1[i] for i in mask] == [h2[i] for i in mask]
            assert r1 == r2


def build_map(
    backend: ModuleType, data: bytes, capacity: int, start: int, end: int
) -> tuple[Any, Any]:
    key_map = backend.KeyMap(capacity)
    return key_map, outcome(lambda: key_map.add_batches(data, start, end))


# ------------------------------------------------------------------------------- KeyMap


def test_key_map_api(backend: ModuleType) -> None:
    m = backend.KeyMap(2)
    assert (len(m), m.capacity, m.latest_offset, m.get(b"x")) == (0, 2, -1, -1)
    m.put(b"x", 10)
    m.put(b"", 11)
    m.put(b"x", 12)  # an existing key is updated in a full map
    assert (len(m), m.get(b"x"), m.get(b""), m.latest_offset) == (2, 12, 11, 12)
    with pytest.raises(ValueError):
        m.put(b"y", 13)
    m.update_latest_offset(99)
    assert m.latest_offset == 99
    m.clear()
    assert (len(m), m.latest_offset, m.get(b"x")) == (0, -1, -1)
    for bad in (0, -5):
        with pytest.raises(ValueError):
            backend.KeyMap(bad)
    with pytest.raises(OverflowError):
        backend.KeyMap(2**64)


def test_filter_refuses_the_other_backends_map(native: ModuleType, pure: ModuleType) -> None:
    data = native.build_batch([(0, T0, b"k", b"v", [])])
    for backend, other in ((native, pure), (pure, native)):
        with pytest.raises(TypeError):
            backend.filter_batches(data, other.KeyMap(1), now_ms=0, delete_retention_ms=0)
        with pytest.raises(ValueError):
            backend.filter_batches(data, backend.KeyMap(1), now_ms=-1, delete_retention_ms=0)


def test_keys_are_md5_digests(backend: ModuleType) -> None:
    """Keys with the same MD5 digest are one key (Kafka's collision policy). Two distinct
    byte strings with one MD5 (Wang & Yu's 2004 collision, 128 bytes each) prove it."""
    a = bytes.fromhex(
        "d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f89"
        "55ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5b"
        "d8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0"
        "e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70"
    )
    b = bytes.fromhex(
        "d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f89"
        "55ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5b"
        "d8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0"
        "e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70"
    )
    assert a != b and hashlib.md5(a).digest() == hashlib.md5(b).digest()
    m = backend.KeyMap(4)
    m.put(a, 3)
    assert (m.get(b), len(m)) == (3, 1)


@given(data=st.data(), capacity=st.integers(min_value=1, max_value=12))
def test_add_batches_agree(
    native: ModuleType, pure: ModuleType, data: st.DataObject, capacity: int
) -> None:
    buf, first, end = data.draw(logs(native))
    start = data.draw(st.integers(min_value=first - 2, max_value=end))
    stop = data.draw(st.integers(min_value=start, max_value=end + 2))
    cut = data.draw(st.sampled_from([len(buf), len(buf) - 1, len(buf) // 2]))
    n_map, n_out = build_map(native, buf[:cut], capacity, start, stop)
    p_map, p_out = build_map(pure, buf[:cut], capacity, start, stop)
    assert n_out == p_out
    assert (len(n_map), n_map.latest_offset) == (len(p_map), p_map.latest_offset)
    for key in KEYS:
        if key is not None:
            assert n_map.get(key) == p_map.get(key)


# ------------------------------------------------------------------------------- filter


@given(
    data=st.data(),
    capacity=st.integers(min_value=1, max_value=12),
    now=st.sampled_from([0, T0 - 1, T0, T0 + 4999, T0 + 5000, T0 + 10**6]),
    retention=st.sampled_from([0, 1000, 2**63 - 1]),
)
def test_filter_agrees(
    native: ModuleType,
    pure: ModuleType,
    data: st.DataObject,
    capacity: int,
    now: int,
    retention: int,
) -> None:
    buf, first, end = data.draw(logs(native))
    dirty = data.draw(st.integers(min_value=first, max_value=end))
    n_map, _ = build_map(native, buf, capacity, dirty, end)
    p_map, _ = build_map(pure, buf, capacity, dirty, end)
    round_end = data.draw(st.sampled_from([-1, end, n_map.latest_offset + 1]))
    producers = data.draw(
        st.dictionaries(
            st.sampled_from([3, 5, 9]), st.integers(min_value=first, max_value=end), max_size=2
        )
    )
    kwargs: dict[str, Any] = {
        "now_ms": now,
        "delete_retention_ms": retention,
        "round_end_offset": round_end,
        "producer_last_offsets": producers,
    }
    n_out = outcome(lambda: native.filter_batches(buf, n_map, **kwargs))
    p_out = outcome(lambda: pure.filter_batches(buf, p_map, **kwargs))
    assert n_out[0] == p_out[0], (n_out, p_out)
    if n_out[0] == "raised":
        assert n_out == p_out
        return
    n_data, *n_stats = n_out[1]
    p_data, *p_stats = p_out[1]
    assert n_stats == p_stats
    assert_same_output(native, n_data, p_data)
    # Each backend reads the other's output.
    for backend in (native, pure):
        for other in (n_data, p_data):
            batches(backend, other)


@given(data=st.data())
def test_filter_in_chunks_equals_filter_at_once(
    native: ModuleType, pure: ModuleType, data: st.DataObject
) -> None:
    buf, first, end = data.draw(logs(native))
    chunk = data.draw(st.integers(min_value=18, max_value=max(18, len(buf))))
    for backend in (native, pure):
        key_map, _ = build_map(backend, buf, 100, first, end)
        whole = backend.filter_batches(buf, key_map, now_ms=T0, delete_retention_ms=10)
        parts, position = [], 0
        while position < len(buf):
            out, consumed, *_ = backend.filter_batches(
                buf[position : position + chunk], key_map, now_ms=T0, delete_retention_ms=10
            )
            parts.append(out)
            if consumed == 0:
                chunk *= 2
            position += consumed
        assert b"".join(parts) == whole[0]
        assert whole[1] == len(buf)


@given(data=st.data())
def test_corrupt_input_agrees(native: ModuleType, pure: ModuleType, data: st.DataObject) -> None:
    buf, first, end = data.draw(logs(native))
    at = data.draw(st.integers(min_value=0, max_value=len(buf) - 1))
    mask = data.draw(st.sampled_from([0x01, 0x80, 0xFF]))
    bad = bytearray(buf)
    bad[at] ^= mask
    corrupted = bytes(bad)
    _, n_add = build_map(native, corrupted, 50, first, end)
    _, p_add = build_map(pure, corrupted, 50, first, end)
    assert n_add == p_add
    n_out = outcome(
        lambda: native.filter_batches(corrupted, native.KeyMap(3), now_ms=T0, delete_retention_ms=0)
    )
    p_out = outcome(
        lambda: pure.filter_batches(corrupted, pure.KeyMap(3), now_ms=T0, delete_retention_ms=0)
    )
    assert n_out[0] == p_out[0]
    if n_out[0] == "raised":
        assert n_out == p_out
    else:
        assert n_out[1][1:] == p_out[1][1:]
        assert_same_output(native, n_out[1][0], p_out[1][0])


def test_legacy_batches_are_refused(backend: ModuleType) -> None:
    legacy = backend.build_legacy([(0, T0, b"k", b"v", [])], 1)
    with pytest.raises(errors.InvalidRecordError):
        backend.KeyMap(5).add_batches(legacy, 0, 10)
    with pytest.raises(errors.InvalidRecordError):
        backend.filter_batches(legacy, backend.KeyMap(5), now_ms=0, delete_retention_ms=0)


# ------------------------------------------------------------------------------- rules


def test_rules_by_example(backend: ModuleType) -> None:
    """The stub's rules, spelled out on one log."""
    b = backend.build_batch
    log = b"".join(
        [
            b([(0, T0, b"k1", b"old", []), (1, T0, b"k2", b"v2", []), (2, T0, None, b"x", [])]),
            b([(3, T0 + 1, b"k1", b"new", [])], producer_id=4, producer_epoch=0, base_sequence=0),
            b([(4, T0 + 2, b"k3", None, [])]),  # a tombstone
            b([(5, T0 + 3, b"k2", b"v2'", [])], producer_id=6, producer_epoch=1, base_sequence=8),
            b([(6, T0 + 4, b"k2", b"v2''", [])]),
        ]
    )
    key_map = backend.KeyMap(10)
    assert key_map.add_batches(log, 0, 7) == (len(log), False)
    assert (key_map.get(b"k1"), key_map.get(b"k2"), key_map.latest_offset) == (3, 6, 6)
    out, read, n_read, n_kept, invalid = backend.filter_batches(
        log, key_map, now_ms=T0 + 100, delete_retention_ms=500, producer_last_offsets={6: 5}
    )
    assert (read, n_read, n_kept, invalid) == (len(log), 7, 3, 1)
    got = batches(backend, out)
    assert [[r[0] for r in rs] for _, _, rs in got] == [[3], [4], [], [6]]
    # The tombstone's batch got a delete horizon: attribute bit 6, baseTimestamp.
    header = got[1][0]
    assert header[H_ATTRIBUTES] & 0x40 and header[7] == T0 + 100 + 500
    # The producer's last batch is kept as an empty header.
    empty = got[2][0]
    assert (empty[0], empty[6], empty[9], empty[10], empty[11], empty[12]) == (5, 0, 6, 1, 8, 0)
    assert len(got[2][1]) == 61 and empty[7] == -1
    # Once the horizon passed, the tombstone goes (the batch with it).
    later, *_ = backend.filter_batches(out, key_map, now_ms=T0 + 600, delete_retention_ms=500)
    assert [[r[0] for r in rs] for _, _, rs in batches(backend, later)] == [[3], [6]]
