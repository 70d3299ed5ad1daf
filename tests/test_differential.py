"""Differential tests: the Rust backend and its pure-Python twin must agree exactly.

Hypothesis draws records, codecs, timestamp types, index intervals and operation
sequences; every return value, every raised exception class and every byte of the
``.log``/``.index``/``.timeindex`` files must be the same on both backends.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore import errors

TS = st.integers(min_value=0, max_value=2**41)
headers_st = st.lists(
    st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=16)), max_size=3
)
record_body = st.tuples(
    TS,
    st.none() | st.binary(max_size=40),
    st.none() | st.binary(max_size=300),
    headers_st,
)


@st.composite
def record_lists(draw: st.DrawFn, max_size: int = 25) -> list[tuple[Any, ...]]:
    bodies = draw(st.lists(record_body, min_size=1, max_size=max_size))
    offset = draw(st.integers(min_value=0, max_value=2**40))
    out = []
    for ts, key, value, headers in bodies:
        out.append((offset, ts, key, value, list(headers)))
        offset += draw(st.sampled_from([1, 1, 1, 2, 7]))  # gaps, as compaction leaves
    return out


batch_opts = st.fixed_dictionaries(
    {
        "compression": st.sampled_from([0, 1, 2, 3, 4]),
        "timestamp_type": st.sampled_from([0, 1]),
        "partition_leader_epoch": st.integers(min_value=-1, max_value=2**31 - 1),
        "producer_id": st.sampled_from([-1, 0, 4242, 2**62]),
        "producer_epoch": st.integers(min_value=-1, max_value=2**15 - 1),
        "base_sequence": st.integers(min_value=-1, max_value=2**31 - 1),
        "transactional": st.booleans(),
        "delete_horizon_ms": st.sampled_from([-1, -1, 0, 2**40]),
    }
)


def outcome(fn: Callable[[], Any]) -> Any:
    """The result of ``fn()``, or the class of the kafkacore/ValueError it raised."""
    try:
        return ("ok", fn())
    except (errors.KafkaCoreError, ValueError) as exc:
        return ("raised", type(exc).__name__)


# ---------------------------------------------------------------- checksums & codecs


@given(st.binary(max_size=5000))
def test_crc_agree(native: ModuleType, pure: ModuleType, data: bytes) -> None:
    assert native.crc32c(data) == pure.crc32c(data)
    assert native.crc32(data) == pure.crc32(data)


@given(st.sampled_from([0, 1, 2, 3, 4]), st.binary(max_size=100_000))
def test_codecs_cross_decode(native: ModuleType, pure: ModuleType, codec: int, data: bytes) -> None:
    for writer, reader in ((native, pure), (pure, native), (native, native), (pure, pure)):
        assert reader.decompress(codec, writer.compress(codec, data)) == data


def test_codec_zero_is_identity_and_bad_codec_refused(native: ModuleType, pure: ModuleType) -> None:
    for b in (native, pure):
        assert b.compress(0, b"abc") == b"abc"
        with pytest.raises(errors.UnsupportedCompressionError):
            b.compress(5, b"abc")
        with pytest.raises(errors.UnsupportedCompressionError):
            b.decompress(7, b"abc")
        with pytest.raises(errors.CorruptRecordError):
            b.decompress(4, b"definitely not zstd")


# ---------------------------------------------------------------- record batches


@given(record_lists(), batch_opts)
def test_build_batch_agrees(
    native: ModuleType, pure: ModuleType, records: list[Any], opts: dict[str, Any]
) -> None:
    a = native.build_batch(records, **opts)
    b = pure.build_batch(records, **opts)
    if opts["compression"] == 0:
        assert a == b  # the format is deterministic: byte-identical
    else:
        # Compressed bytes may differ between codec libraries; each side must read both.
        # Same header fields apart from the length (8..12) and the CRC (17..21).
        assert a[:8] == b[:8] and a[12:17] == b[12:17] and a[21:61] == b[21:61]
    for data in (a, b):
        assert native.batch_header(data) == pure.batch_header(data)
        assert native.validate_batch(data) == pure.validate_batch(data)
        expected = native.batch_records(data)
        assert expected == pure.batch_records(data)
    got = native.batch_records(a)
    if opts["timestamp_type"] == 0:
        assert got == [tuple(r) for r in records]
    else:
        max_ts = max(r[1] for r in records)
        assert got == [(r[0], max_ts, r[2], r[3], r[4]) for r in records]


@given(record_lists(max_size=6), batch_opts, st.data())
def test_corrupted_batches_same_verdict(
    native: ModuleType,
    pure: ModuleType,
    records: list[Any],
    opts: dict[str, Any],
    data: st.DataObject,
) -> None:
    good = bytearray(pure.build_batch(records, **opts))
    mutation = data.draw(st.sampled_from(["flip", "truncate", "extend"]))
    if mutation == "flip":
        pos = data.draw(st.integers(0, len(good) - 1))
        good[pos] ^= data.draw(st.integers(1, 255))
    elif mutation == "truncate":
        del good[data.draw(st.integers(0, len(good) - 1)) :]
    else:
        good += data.draw(st.binary(min_size=1, max_size=10))
    buf = bytes(good)
    for name in ("batch_header", "validate_batch", "batch_records"):
        assert outcome(lambda n=name: getattr(native, n)(buf)) == outcome(
            lambda n=name: getattr(pure, n)(buf)
        ), name


@given(record_lists(max_size=8), st.sampled_from([0, 1]), st.sampled_from([0, 1, 2, 3]))
def test_legacy_agrees(
    native: ModuleType, pure: ModuleType, records: list[Any], magic: int, codec: int
) -> None:
    # Legacy messages have no headers; v0 has no timestamps.
    records = [(o, ts if magic else -1, k, v, []) for o, ts, k, v, _ in records]
    if codec and magic == 1:
        # v1 wrappers use relative inner offsets: consecutive offsets from the first.
        records = [(records[0][0] + i, *r[1:]) for i, r in enumerate(records)]
    for builder in (native, pure):
        data = builder.build_legacy(records, magic, codec)
        pos, decoded = 0, []
        while pos < len(data):
            header = native.legacy_header(data, pos)
            assert header == pure.legacy_header(data, pos)
            assert header[3] == magic
            batch = native.legacy_records(data, pos)
            assert batch == pure.legacy_records(data, pos)
            decoded += batch
            pos += header[1] + 12
        assert decoded == [tuple(r) for r in records]


# ---------------------------------------------------------------- segments


def _dir(tmp: Path, name: str) -> str:
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    return str(d)


def _files(directory: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(directory).iterdir())}


def _state(seg: Any) -> tuple[Any, ...]:
    return (
        seg.size,
        seg.next_offset,
        seg.max_timestamp,
        seg.offset_of_max_timestamp,
        seg.rolling_based_timestamp,
        seg.index_is_full,
        seg.offset_index(),
        seg.time_index(),
    )


def _probe(seg: Any, offsets: list[int], timestamps: list[int]) -> list[Any]:
    out: list[Any] = []
    for o in offsets:
        out.append(outcome(lambda o=o: seg.lookup_index(o)))
        out.append(outcome(lambda o=o: seg.translate_offset(o)))
        out.append(outcome(lambda o=o: seg.read(o, 1000)))
        out.append(outcome(lambda o=o: seg.read(o, 10, -1, False)))
        out.append(outcome(lambda o=o: seg.read(o, 100_000, seg.size // 2)))
    for t in timestamps:
        out.append(outcome(lambda t=t: seg.lookup_time_index(t)))
        out.append(outcome(lambda t=t: seg.find_offset_by_timestamp(t)))
        out.append(outcome(lambda t=t: seg.find_offset_by_timestamp(t, seg.base_offset + 3)))
    return out


segment_batches = st.lists(
    st.tuples(record_lists(max_size=12), batch_opts, st.sampled_from([-1, -1, 2**40 + 5])),
    min_size=1,
    max_size=25,
)


@given(
    batches=segment_batches,
    base_offset=st.sampled_from([0, 100, 2**33]),
    interval=st.sampled_from([0, 1, 100, 600, 4096]),
    max_index_size=st.sampled_from([10 * 1024 * 1024, 64, 100]),
    group=st.integers(1, 3),
    data=st.data(),
)
def test_segment_append_agrees(
    native: ModuleType,
    pure: ModuleType,
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[Any],
    base_offset: int,
    interval: int,
    max_index_size: int,
    group: int,
    data: st.DataObject,
) -> None:
    tmp = tmp_path_factory.mktemp("seg")
    dirs = {"native": _dir(tmp, "n"), "pure": _dir(tmp, "p")}
    impls = {"native": native, "pure": pure}
    segs = {
        k: impls[k].Segment(
            d, base_offset, index_interval_bytes=interval, max_index_size=max_index_size
        )
        for k, d in dirs.items()
    }
    encoded = [(pure.build_batch(recs, **opts), lat, opts) for recs, opts, lat in batches]
    # Appends of one or several concatenated batches, each with its own stamping.
    for i in range(0, len(encoded), group):
        chunk = encoded[i : i + group]
        blob = b"".join(c[0] for c in chunk)
        ple = chunk[0][2]["partition_leader_epoch"]
        results = {
            k: outcome(
                lambda s=s, blob=blob, ple=ple, lat=chunk[0][1]: s.append(
                    blob, partition_leader_epoch=ple, log_append_time_ms=lat
                )
            )
            for k, s in segs.items()
        }
        assert results["native"] == results["pure"]
        assert _state(segs["native"]) == _state(segs["pure"])

    nxt = segs["pure"].next_offset
    extra = data.draw(st.lists(st.integers(base_offset, max(base_offset, nxt)), max_size=5))
    offsets = [base_offset - 1, base_offset, nxt - 1, nxt, nxt + 5, *extra]
    timestamps = [-1, 0, 2**40 + 5, 2**42, *data.draw(st.lists(TS, max_size=5))]
    assert _probe(segs["native"], offsets, timestamps) == _probe(segs["pure"], offsets, timestamps)
    pos_len = segs["pure"].read(base_offset, 10**9)
    if pos_len is not None:
        assert segs["native"].read_bytes(*pos_len) == segs["pure"].read_bytes(*pos_len)

    for s in segs.values():
        s.close()
    assert _files(dirs["native"]) == _files(dirs["pure"])

    # Reopen, recover: identical state and files again (the index rules are the same on
    # append and on recovery, so recovery rebuilds exactly what the appends wrote).
    segs = {
        k: impls[k].Segment(
            d, base_offset, index_interval_bytes=interval, max_index_size=max_index_size
        )
        for k, d in dirs.items()
    }
    assert _state(segs["native"]) == _state(segs["pure"])
    assert outcome(segs["native"].sanity_check) == outcome(segs["pure"].sanity_check)
    assert outcome(segs["native"].recover) == outcome(segs["pure"].recover) == ("ok", 0)
    assert _state(segs["native"]) == _state(segs["pure"])
    cut = data.draw(st.integers(base_offset, max(base_offset, nxt)))
    assert outcome(lambda: segs["native"].truncate_to(cut)) == outcome(
        lambda: segs["pure"].truncate_to(cut)
    )
    assert _state(segs["native"]) == _state(segs["pure"])
    for s in segs.values():
        s.close()
    assert _files(dirs["native"]) == _files(dirs["pure"])


@given(batches=segment_batches, data=st.data())
def test_segment_replica_append_agrees(
    native: ModuleType,
    pure: ModuleType,
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[Any],
    data: st.DataObject,
) -> None:
    """assign_offsets=False keeps the leader's bytes; offsets must only go forward."""
    tmp = tmp_path_factory.mktemp("replica")
    segs = {"native": native.Segment(_dir(tmp, "n"), 0), "pure": pure.Segment(_dir(tmp, "p"), 0)}
    for recs, opts, _ in batches:
        blob = pure.build_batch(recs, **opts)
        res = {
            k: outcome(lambda s=s, blob=blob: s.append(blob, assign_offsets=False))
            for k, s in segs.items()
        }
        assert res["native"] == res["pure"]
    assert _state(segs["native"]) == _state(segs["pure"])
    for s in segs.values():
        s.close()
    assert _files(str(tmp / "n")) == _files(str(tmp / "p"))


def _index_sizes(seg: Any) -> tuple[int, int]:
    return Path(seg.index_path).stat().st_size, Path(seg.time_index_path).stat().st_size


def _entry_counts(seg: Any) -> tuple[int, int]:
    return len(seg.offset_index()), len(seg.time_index())


segment_ops = st.lists(
    st.one_of(
        st.just(("reopen",)),
        st.just(("crash",)),
        st.just(("recover",)),
        st.just(("seal",)),
        st.tuples(st.just("resize"), st.none() | st.integers(-20, 5000) | st.just(2**31)),
        st.tuples(st.just("truncate"), st.integers(0, 400)),
        st.tuples(st.just("append"), st.integers(1, 4)),
    ),
    min_size=1,
    max_size=12,
)


@given(
    batches=segment_batches,
    interval=st.sampled_from([0, 100, 600]),
    max_index_size=st.sampled_from([10 * 1024 * 1024, 96, 100, 1000]),
    ops=segment_ops,
)
def test_segment_index_sizes_agree(
    native: ModuleType,
    pure: ModuleType,
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[Any],
    interval: int,
    max_index_size: int,
    ops: list[tuple[Any, ...]],
) -> None:
    """Index file sizes through open (new or existing), resize_indexes, recover,
    truncate_to, seal, a crash (dropped without close, reopened) and close: identical
    files on both backends after every step, and the sizes the contract gives."""
    tmp = tmp_path_factory.mktemp("sizes")
    dirs = {"native": _dir(tmp, "n"), "pure": _dir(tmp, "p")}
    impls = {"native": native, "pure": pure}
    preallocated = (max_index_size // 8 * 8, max_index_size // 12 * 12)

    def open_all() -> dict[str, Any]:
        return {
            k: impls[k].Segment(d, 0, index_interval_bytes=interval, max_index_size=max_index_size)
            for k, d in dirs.items()
        }

    def same(call: Callable[[Any], Any]) -> Any:
        """``call`` on both segments: the same outcome; returns the pure one's."""
        got = {k: outcome(lambda seg=seg: call(seg)) for k, seg in segs.items()}
        assert got["native"] == got["pure"]
        return got["pure"]

    segs = open_all()
    assert _index_sizes(segs["native"]) == _index_sizes(segs["pure"]) == preallocated
    pending = [pure.build_batch(recs, **opts) for recs, opts, _ in batches]
    for blob in pending:
        same(lambda seg, blob=blob: seg.append(blob))
    for seg in segs.values():
        seg.close()
    assert _files(dirs["native"]) == _files(dirs["pure"])
    segs = open_all()
    for op in ops:
        before = _index_sizes(segs["pure"])
        entries = _entry_counts(segs["pure"])
        if op[0] == "reopen":
            for seg in segs.values():
                seg.close()
            trimmed = _index_sizes(segs["pure"])
            segs = open_all()
            assert _index_sizes(segs["pure"]) == trimmed  # an existing file: as found
        elif op[0] == "crash":
            image = _files(dirs["pure"])
            crashed = segs  # never closed: nothing trimmed, as a SIGKILL leaves them
            segs = open_all()
            del crashed
            assert _files(dirs["pure"]) == image  # opening writes nothing
            assert _index_sizes(segs["pure"]) == before
        elif op[0] == "resize":
            if same(lambda seg, size=op[1]: seg.resize_indexes(size))[0] == "ok":
                size = max_index_size if op[1] is None else op[1]
                assert _index_sizes(segs["pure"]) == (
                    max(size // 8 * 8, 8 * entries[0]),
                    max(size // 12 * 12, 12 * entries[1]),
                )
            else:
                assert _index_sizes(segs["pure"]) == before
        elif op[0] == "recover":
            if same(lambda seg: seg.recover())[0] == "ok":
                after = _entry_counts(segs["pure"])
                assert _index_sizes(segs["pure"]) == (8 * after[0], 12 * after[1])
        elif op[0] == "seal":
            same(lambda seg: seg.seal())
        elif op[0] == "truncate":
            if same(lambda seg, offset=op[1]: seg.truncate_to(offset))[0] == "ok":
                after = _entry_counts(segs["pure"])  # more than fit only after a crash
                assert _index_sizes(segs["pure"]) == (
                    max(preallocated[0], 8 * after[0]),
                    max(preallocated[1], 12 * after[1]),
                )
        else:
            blob = b"".join(pending[: op[1]])
            same(lambda seg, blob=blob: seg.append(blob))
        assert _state(segs["native"]) == _state(segs["pure"])
        assert _files(dirs["native"]) == _files(dirs["pure"])
    for seg in segs.values():
        seg.close()
    assert _files(dirs["native"]) == _files(dirs["pure"])
