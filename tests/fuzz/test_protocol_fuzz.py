"""The protocol codec on mutated real frames, over every API key and version served.

Property (the broker's contract with a hostile client): decoding a request either
succeeds or raises :class:`ProtocolError` (the broker answers Kafka's error code or
closes the connection) - never another exception, and never an allocation
proportional to a length the frame declares rather than the bytes it holds (peak traced
memory stays within a multiple of the frame's size). Responses (what the client and the
inter-broker fetchers decode) get the same treatment.

Time is not asserted per decode here (a wall-clock bound measures the machine as much as
the codec): a hang fails the test through its timeout, and the long, coverage-guided
version, ``make fuzz`` (tests/fuzz/atheris_protocol.py), reports any input slower than
libFuzzer's ``-timeout`` as a finding.
"""

from __future__ import annotations

import functools
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.frames import Frame, apply, mutation_ops, request_frames, response_frames
from kafkacore.protocol import APIS, ProtocolError, decode_request, decode_response
from support.budget import examples

# Peak Python allocation allowed for decoding a frame of n bytes: decoded objects take a
# few dozen times the bytes they came from (a 1-byte element becomes a Python object),
# plus a constant for exceptions and caches. A length honoured before it is checked
# would allocate gigabytes.
BYTES_PER_FRAME_BYTE = 200
CONSTANT_BYTES = 1 << 20

pytestmark = pytest.mark.timeout(600)  # a hang, not a slow decode: no per-frame time bound


@functools.cache
def _requests() -> list[Frame]:
    frames = request_frames()
    for _key, _version, frame in frames:
        decode_request(frame)  # a valid frame decodes (and its reader is compiled)
    return frames


@functools.cache
def _responses() -> list[Frame]:
    frames = response_frames()
    for key, version, frame in frames:
        decode_response(frame, key, version)
    return frames


@pytest.fixture(scope="module")
def traced() -> None:
    """Frames built and their readers compiled before anything is measured."""
    _requests()
    _responses()


def check_decode(decode: Callable[[bytes], Any], frame: bytes) -> None:
    """``decode(frame)`` succeeds or raises ProtocolError, in bounded memory."""
    tracemalloc.start()  # traced around the decode only: Hypothesis runs untraced
    try:
        decode(frame)
    except ProtocolError as exc:
        str(exc)  # the message is built from the frame: it must render
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak <= BYTES_PER_FRAME_BYTE * len(frame) + CONSTANT_BYTES, (peak, len(frame))


def test_frames_cover_every_api_and_version() -> None:
    served = {
        (api.key, v)
        for api in APIS.values()
        for v in range(api.implemented_min, api.implemented_max + 1)
    }
    assert {(k, v) for k, v, _ in _requests()} == served
    assert {(k, v) for k, v, _ in _responses()} == served
    assert len(served) > 200


@settings(max_examples=examples(600), deadline=None)
@given(st.data(), mutation_ops(), st.sampled_from([0, 4, 4, 8]))
def test_mutated_requests(traced: None, data: st.DataObject, ops: Any, keep: int) -> None:
    frames = _requests()
    _key, _version, frame = frames[data.draw(st.integers(0, len(frames) - 1), label="frame")]
    check_decode(decode_request, apply(frame, ops, keep_prefix=keep))


@settings(max_examples=examples(250), deadline=None)
@given(st.data(), mutation_ops())
def test_mutated_responses(traced: None, data: st.DataObject, ops: Any) -> None:
    frames = _responses()
    key, version, frame = frames[data.draw(st.integers(0, len(frames) - 1), label="frame")]
    check_decode(lambda b: decode_response(b, key, version), apply(frame, ops))


@pytest.mark.parametrize("value", [0x7FFFFFFF, 0xFFFFFFFE, 0x00007FFF])
def test_huge_lengths_everywhere(traced: None, value: int) -> None:
    """Every 4-byte window of one frame per API version set to a huge or negative value
    (an int32 array/bytes count, or half of one next to an int16 string length): each
    is refused or decoded without allocating what it declares."""
    seen: set[tuple[int, int]] = set()
    raw = value.to_bytes(4, "big")
    for key, version, frame in _requests():
        if (key, version) in seen:
            continue
        seen.add((key, version))
        for at in range(8, len(frame) - 3, 5 if len(frame) > 200 else 2):
            check_decode(decode_request, frame[:at] + raw + frame[at + 4 :])


def test_huge_compact_lengths_everywhere(traced: None) -> None:
    """A maximal unsigned varint written over (and inserted at) every position of the
    flexible versions' frames: compact array/string/bytes lengths and tag counts."""
    varint = b"\xff\xff\xff\xff\x0f"
    for key, version, frame in _requests()[::2]:
        if not APIS[key].is_flexible(version):
            continue
        for at in range(8, len(frame), 4 if len(frame) > 200 else 2):
            check_decode(decode_request, frame[:at] + varint + frame[at + 5 :])
            check_decode(decode_request, frame[:at] + varint + frame[at:])
