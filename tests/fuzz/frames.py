"""Real request and response frames of every API and version kafkacore serves, and the
mutations the fuzzers apply to them.

The frames are what the protocol module's own encoders write for random valid values
(:mod:`kafkacore.protocol.samples`) - the same bytes a client sends, byte for byte, as
the round-trip and Kafka-interop tests of the codec establish. A mutation is a list of
operations, each drawn by Hypothesis (so failures shrink) or by a ``random.Random``:

* ``flip``: one byte set to a value (boundary values 0x00/0x7f/0x80/0xff likelier);
* ``cut``: the frame truncated;
* ``insert``: bytes inserted;
* ``dup``: a slice of the frame duplicated in place;
* ``int32``/``int16``: a big-endian length overwritten with a huge, negative or
  off-by-one value (array counts, bytes and string lengths);
* ``varint``: a huge unsigned varint inserted (compact lengths and tag counts).

Pure functions: thread-safe.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator, Sequence
from typing import Any

from hypothesis import strategies as st

from kafkacore.protocol import APIS, RequestHeader, encode_request, encode_response
from kafkacore.protocol.samples import sample

__all__ = ["Frame", "apply", "mutation_ops", "random_ops", "request_frames", "response_frames"]

Frame = tuple[int, int, bytes]  # (api key, version, frame without the size prefix)
Op = tuple[str, int, bytes]

_INT32S = (0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0xFFFFFFFE, 0x00010000, 0x40000000)
_INT16S = (0x7FFF, 0xFFFF, 0x8000, 0xFFFE, 0x0100)
_VARINTS = (
    b"\xff\xff\xff\xff\x0f",
    b"\xff\xff\xff\xff\x07",
    b"\x80\x80\x80\x80\x10",
    b"\xfe\xff\xff\xff\x0f",
    b"\xff\xff\xff\xff\xff\xff",
)
KINDS = ("flip", "cut", "insert", "dup", "int32", "int16", "varint")


def _versions(api: Any) -> range:
    return range(api.implemented_min, api.implemented_max + 1)


def request_frames(seed: int = 0, per_version: int = 2) -> list[Frame]:
    """``per_version`` request frames of every API key and implemented version."""
    rnd = random.Random(seed)
    out = []
    for api in APIS.values():
        for version in _versions(api):
            for i in range(per_version):
                value = sample(api.request, version, rnd, unknown_tags=i % 2 == 1)
                header = RequestHeader(api.key, version, rnd.randint(0, 2**31 - 1), "fuzz")
                out.append((api.key, version, encode_request(header, value)[4:]))
    return out


def response_frames(seed: int = 0, per_version: int = 1) -> list[Frame]:
    """``per_version`` response frames of every API key and implemented version."""
    rnd = random.Random(seed)
    out = []
    for api in APIS.values():
        for version in _versions(api):
            for _ in range(per_version):
                value = sample(api.response, version, rnd)
                frame = encode_response(rnd.randint(0, 2**31 - 1), value, api_version=version)
                out.append((api.key, version, frame[4:]))
    return out


def apply(frame: bytes, ops: Sequence[Op], keep_prefix: int = 0) -> bytes:
    """``frame`` with ``ops`` applied; positions are taken modulo the current length and
    the first ``keep_prefix`` bytes are left alone (the API key and version)."""
    data = bytearray(frame)
    for kind, where, arg in ops:
        span = len(data) - keep_prefix
        at = keep_prefix + (where % span if span > 0 else 0)
        if kind == "flip" and span > 0:
            data[at] = arg[0] if arg else 0
        elif kind == "cut" and span > 0:
            del data[at:]
        elif kind == "insert":
            data[at:at] = arg
        elif kind == "dup" and span > 0:
            length = 1 + (arg[0] if arg else 0)
            data[at:at] = data[at : at + length]
        elif kind in ("int32", "int16") and span > 0:
            fmt, values = (">I", _INT32S) if kind == "int32" else (">H", _INT16S)
            value = values[(arg[0] if arg else 0) % len(values)]
            if arg and arg[0] >= 0x80:  # off by one: a length one past what is there
                old = struct.unpack_from(fmt, data.ljust(at + 4, b"\0"), at)[0]
                value = (old + 1) & (0xFFFFFFFF if kind == "int32" else 0xFFFF)
            packed = struct.pack(fmt, value)
            data[at : at + len(packed)] = packed
        elif kind == "varint":
            data[at:at] = _VARINTS[(arg[0] if arg else 0) % len(_VARINTS)]
    return bytes(data)


_BOUNDARY = st.sampled_from([b"\x00", b"\x7f", b"\x80", b"\xff", b"\x01", b"\xfe"])


def mutation_ops(max_ops: int = 4) -> st.SearchStrategy[list[Op]]:
    """Hypothesis: 1..``max_ops`` mutation operations."""
    op = st.tuples(
        st.sampled_from(KINDS),
        st.integers(0, 2**16),
        st.one_of(_BOUNDARY, st.binary(min_size=1, max_size=8)),
    )
    return st.lists(op, min_size=1, max_size=max_ops)


def random_ops(rnd: random.Random, max_ops: int = 4) -> list[Op]:
    """The same operations drawn from ``rnd`` (for loops outside Hypothesis)."""
    ops = []
    for _ in range(rnd.randint(1, max_ops)):
        arg = rnd.choice((b"\x00", b"\x7f", b"\x80", b"\xff", rnd.randbytes(rnd.randint(1, 8))))
        ops.append((rnd.choice(KINDS), rnd.randint(0, 2**16), arg))
    return ops


def iter_mutants(frames: Sequence[Frame], n: int, seed: int = 0) -> Iterator[tuple[Frame, bytes]]:
    """``n`` mutants of random frames: ``((key, version, original), mutant)``."""
    rnd = random.Random(seed)
    for _ in range(n):
        frame = rnd.choice(frames)
        yield frame, apply(frame[2], random_ops(rnd), keep_prefix=rnd.choice((0, 4, 4, 4)))
