"""The protocol codec: round trips of every declared API x version, golden bytes, length
checks, header rules, the API table and the error codes."""

from __future__ import annotations

import random
import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore.protocol import (
    APIS,
    APIS_BY_NAME,
    ErrorCode,
    ProtocolError,
    RequestHeader,
    UnknownApiKey,
    UnsupportedVersion,
    api_versions_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    unsupported_api_versions_response,
)
from kafkacore.protocol import errors as protocol_errors
from kafkacore.protocol import types as t
from kafkacore.protocol.declared import DECLARED
from kafkacore.protocol.samples import sample
from support.budget import examples

# Every declared API at every version it declares, served or not.
CASES = [
    (api.key, version, kind)
    for api in DECLARED.values()
    for version in api.versions
    for kind in ("request", "response")
]
IDS = [f"{DECLARED[k].name}-v{v}-{kind}" for k, v, kind in CASES]
SERVED_CASES = [c for c in CASES if c[0] in APIS]
SERVED_IDS = [f"{DECLARED[k].name}-v{v}-{kind}" for k, v, kind in SERVED_CASES]

# The "Minimum protocol surface for kafkacore v1": key -> (advertised, implemented, flexible).
SURFACE = {
    18: ((0, 4), (0, 4), 3),
    3: ((0, 12), (0, 12), 9),
    0: ((0, 12), (3, 12), 9),
    1: ((4, 18), (4, 18), 12),
    2: ((1, 11), (1, 11), 6),
    10: ((0, 6), (0, 6), 3),
    11: ((0, 9), (0, 9), 6),
    14: ((0, 5), (0, 5), 4),
    12: ((0, 4), (0, 4), 4),
    13: ((0, 5), (0, 5), 4),
    8: ((2, 10), (2, 10), 8),
    9: ((1, 10), (1, 10), 6),
    16: ((0, 5), (0, 5), 3),
    15: ((0, 6), (0, 6), 5),
    42: ((0, 2), (0, 2), 2),
    47: ((0, 0), (0, 0), None),
    48: ((0, 1), (0, 1), 1),
    49: ((0, 1), (0, 1), 1),
    50: ((0, 0), (0, 0), 0),
    51: ((0, 0), (0, 0), 0),
    22: ((0, 5), (0, 5), 2),
    19: ((2, 7), (2, 7), 5),
    20: ((1, 6), (1, 6), 4),
    37: ((0, 3), (0, 3), 2),
    32: ((1, 4), (1, 4), 4),
    33: ((0, 2), (0, 2), 2),
    44: ((0, 1), (0, 1), 1),
    21: ((0, 2), (0, 2), 2),
    35: ((0, 5), (0, 5), 2),
    60: ((0, 1), (0, 1), 0),
    23: ((2, 4), (2, 4), 4),
    17: ((0, 1), (0, 1), None),
    36: ((0, 2), (0, 2), 2),
    29: ((1, 3), (1, 3), 2),
    30: ((1, 3), (1, 3), 2),
    31: ((1, 3), (1, 3), 2),
    43: ((0, 2), (0, 2), 2),
    45: ((0, 0), (0, 0), 0),
    46: ((0, 0), (0, 0), 0),
    28: ((0, 5), (0, 5), 3),
    # inter-broker (ZooKeeper-mode cluster)
    4: ((0, 7), (0, 7), 4),
    5: ((0, 4), (0, 4), 2),
    6: ((0, 8), (0, 8), 6),
    7: ((1, 3), (1, 3), 3),
    56: ((0, 3), (0, 3), 0),
    67: ((0, 0), (0, 0), 0),
    # transactions
    27: ((0, 1), (0, 1), 1),
    61: ((0, 0), (0, 0), 0),
    # KIP-848 consumer groups
    68: ((0, 1), (0, 1), 0),
    69: ((0, 1), (0, 1), 0),
    # KIP-932 share groups
    76: ((1, 1), (1, 1), 0),
    77: ((1, 1), (1, 1), 0),
    78: ((1, 2), (1, 2), 0),
    79: ((1, 2), (1, 2), 0),
    83: ((0, 0), (0, 0), 0),
    84: ((0, 0), (0, 0), 0),
    85: ((0, 1), (0, 1), 0),
    86: ((0, 0), (0, 0), 0),
    87: ((0, 1), (0, 1), 0),
    90: ((0, 1), (0, 1), 0),
    91: ((0, 0), (0, 0), 0),
    92: ((0, 0), (0, 0), 0),
    # transactions (the coordinator's)
    24: ((0, 5), (0, 5), 3),
    25: ((0, 4), (0, 4), 3),
    26: ((0, 5), (0, 5), 3),
    65: ((0, 0), (0, 0), 0),
    66: ((0, 1), (0, 1), 0),
    # KRaft: a broker forwards these to the controller
    55: ((0, 2), (0, 2), 0),
    # finalized features (KIP-584)
    57: ((0, 2), (0, 2), 0),
}


def _schema(key: int, kind: str):  # type: ignore[no-untyped-def]
    api = DECLARED[key]
    return api.request if kind == "request" else api.response


# --- the API table ------------------------------------------------------------------------


def test_api_table_is_the_surface_table() -> None:
    assert set(APIS) == set(SURFACE)
    for key, (advertised, implemented, flexible) in SURFACE.items():
        api = APIS[key]
        assert (api.min_version, api.max_version) == advertised, api.name
        assert (api.implemented_min, api.implemented_max) == implemented, api.name
        assert api.flexible_from == flexible, api.name
        assert api.response.flexible == api.request.flexible, api.name
        assert api.request.valid == api.response.valid, api.name
        assert api.request.valid.lo <= api.implemented_min <= api.implemented_max
        assert api.implemented_max <= api.request.valid.hi, api.name


def test_served_apis_are_declared_with_the_same_schemas() -> None:
    """The served table picks from the declarations; it declares nothing of its own."""
    for key, api in APIS.items():
        assert DECLARED[key].request is api.request, api.name
        assert DECLARED[key].response is api.response, api.name
        assert DECLARED[key].name == api.name


def test_declared_apis_carry_their_key_and_flexible_versions() -> None:
    # the APIs kafkacore declares but does not serve yet
    assert {api.name for key, api in DECLARED.items() if key not in APIS} >= {
        "BrokerRegistration",
        "Envelope",
    }
    for key, api in DECLARED.items():
        assert api.request.api_key == api.response.api_key == key, api.name
        assert api.request.flexible == api.response.flexible, api.name
        assert api.request.kind == "request" and api.response.kind == "response", api.name


def test_api_versions_response_lists_every_key() -> None:
    resp = api_versions_response()
    assert [(k.api_key, k.min_version, k.max_version) for k in resp.api_keys] == [
        (api.key, api.min_version, api.max_version) for api in APIS.values()
    ]
    assert (APIS_BY_NAME["Produce"].min_version, APIS_BY_NAME["Produce"].max_version) == (0, 12)


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "version", "kind"), CASES, ids=IDS)
@settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), unknown=st.booleans(), dense=st.booleans())
def test_round_trip(
    key: int, version: int, kind: str, seed: int, unknown: bool, dense: bool
) -> None:
    msg = _schema(key, kind)
    value = sample(msg, version, random.Random(seed), unknown_tags=unknown, dense=dense)
    data = msg.encode(value, version)
    assert msg.decode(data, version) == value
    assert msg.encode(msg.decode(data, version), version) == data


@pytest.mark.parametrize(("key", "version", "kind"), CASES, ids=IDS)
def test_defaults_round_trip(key: int, version: int, kind: str) -> None:
    msg = _schema(key, kind)
    value = msg.cls()
    data = msg.encode(value, version)
    assert msg.decode(data, version) == value


@pytest.mark.parametrize(("key", "version", "kind"), SERVED_CASES, ids=SERVED_IDS)
def test_defaults_round_trip_through_frames(key: int, version: int, kind: str) -> None:
    api = APIS[key]
    msg = _schema(key, kind)
    value = msg.cls()
    if kind == "response":
        frame = encode_response(RequestHeader(key, version, 77), value)
        assert struct.unpack(">i", frame[:4])[0] == len(frame) - 4
        assert decode_response(frame[4:], key, version) == (77, value)
        return
    header = RequestHeader(key, version, 1234, "client-é")
    frame = encode_request(header, value)
    if not api.implements(version):  # Produce v0-2 (as Kafka 4) and versions not served yet
        with pytest.raises(UnsupportedVersion) as info:
            decode_request(frame[4:])
        assert info.value.correlation_id == 1234
        assert info.value.client_id == "client-é"
        return
    assert decode_request(frame[4:]) == (header, value)


def test_records_are_views_of_the_frame() -> None:
    produce = APIS_BY_NAME["Produce"].request
    batch = bytes(range(256)) * 4
    req = produce.cls(
        acks=-1,
        timeout_ms=30000,
        topic_data=[
            produce.cls.TopicProduceData(
                name="t", partition_data=[produce.cls.PartitionProduceData(index=0, records=batch)]
            )
        ],
    )
    frame = encode_request(RequestHeader(0, 9, 5, "c"), req)[4:]
    _, decoded = decode_request(frame)
    records = decoded.topic_data[0].partition_data[0].records
    assert isinstance(records, memoryview)
    assert records == batch
    assert records.obj is frame  # no copy


# --- golden bytes ----------------------------------------------------------------------------


def test_api_versions_v3_request_as_librdkafka_sends_it() -> None:
    # Header v2: api key 18, version 3, correlation id 1, client id "rdkafka" with an int16
    # length (not compact), empty tag buffer; body: compact strings + empty tag buffer.
    expected = (
        b"\x00\x12\x00\x03\x00\x00\x00\x01"
        + b"\x00\x07rdkafka"
        + b"\x00"
        + b"\x0blibrdkafka"
        + b"\x062.3.0"
        + b"\x00"
    )
    req = APIS[18].request.cls(client_software_name="librdkafka", client_software_version="2.3.0")
    frame = encode_request(RequestHeader(18, 3, 1, "rdkafka"), req)
    assert frame == struct.pack(">i", len(expected)) + expected
    header, decoded = decode_request(expected)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        18,
        3,
        1,
        "rdkafka",
    )
    assert decoded.client_software_name == "librdkafka"
    assert decoded.client_software_version == "2.3.0"


def test_api_versions_v3_response_uses_header_v0() -> None:
    cls = APIS[18].response.cls
    resp = cls(error_code=0, api_keys=[cls.ApiVersion(api_key=0, min_version=0, max_version=11)])
    frame = encode_response(RequestHeader(18, 3, 9), resp)
    body = (
        b"\x00\x00"  # error code
        + b"\x02"  # compact array of 1
        + b"\x00\x00\x00\x00\x00\x0b\x00"  # key 0, 0..11, no tags
        + b"\x00\x00\x00\x00"  # throttle time
        + b"\x00"  # no tagged fields
    )
    # correlation id, then directly the body: no tag buffer in the header
    assert frame == struct.pack(">ii", 4 + len(body), 9) + body


def test_metadata_v1_request_and_v9_response_header() -> None:
    req = APIS[3].request.cls(topics=None)  # v1: null = all topics
    frame = encode_request(RequestHeader(3, 1, 2, None), req)
    assert frame == b"\x00\x00\x00\x0e\x00\x03\x00\x01\x00\x00\x00\x02\xff\xff\xff\xff\xff\xff"
    assert decode_request(frame[4:])[1].topics is None
    resp = encode_response(RequestHeader(3, 9, 2), APIS[3].response.cls())
    assert resp[4:9] == b"\x00\x00\x00\x02\x00"  # correlation id + empty header tag buffer


def test_fetch_v12_response_bytes() -> None:
    cls = APIS[1].response.cls
    part = cls.PartitionData(
        partition_index=1,
        high_watermark=10,
        last_stable_offset=10,
        log_start_offset=0,
        aborted_transactions=None,
        records=b"RB",
    )
    resp = cls(responses=[cls.FetchableTopicResponse(topic="t", partitions=[part])])
    body = APIS[1].response.encode(resp, 12)
    assert body == (
        b"\x00\x00\x00\x00"  # throttle
        + b"\x00\x00"  # error
        + b"\x00\x00\x00\x00"  # session id
        + b"\x02\x02t"  # one topic "t"
        + b"\x02"  # one partition
        + struct.pack(">ihqqq", 1, 0, 10, 10, 0)
        + b"\x00"  # aborted transactions: null
        + struct.pack(">i", -1)  # preferred read replica
        + b"\x03RB"  # compact records
        + b"\x00"  # no tagged fields: diverging epoch, leader, snapshot at defaults
        + b"\x00\x00"
    )
    part.current_leader = cls.LeaderIdAndEpoch(leader_id=3, leader_epoch=7)
    tagged = APIS[1].response.encode(resp, 12)
    assert b"\x01\x01\x09" + struct.pack(">ii", 3, 7) + b"\x00" in tagged  # 1 tag: 1, size 9


# --- length checks ---------------------------------------------------------------------------


def _expect_error(frame: bytes, correlation_id: int | None = 7) -> ProtocolError:
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolError) as info:
            decode_request(frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, "a declared length was allocated"
    assert info.value.correlation_id == correlation_id
    return info.value


def test_huge_string_length_in_tiny_frame() -> None:
    # ApiVersions v3: compact string of declared length 2^31 - 1 in a 30-byte frame.
    frame = b"\x00\x12\x00\x03\x00\x00\x00\x07\x00\x01c\x00" + t.write_uvarint(2**31)
    frame += b"x" * (30 - len(frame))
    assert len(frame) == 30
    err = _expect_error(frame)
    assert "2147483647" in str(err)
    assert (err.api_key, err.api_version) == (18, 3)


def test_huge_records_and_array_lengths() -> None:
    # Produce v3: transactional id null, acks, timeout, 1 topic "t", 1 partition,
    # records declared 2^31 - 1 bytes.
    head = b"\x00\x00\x00\x03\x00\x00\x00\x07\x00\x00"
    frame = head + b"\xff\xff" + struct.pack(">hii", 1, 1000, 1) + b"\x00\x01t"
    _expect_error(frame + struct.pack(">iii", 1, 0, 2**31 - 1))
    # ... an array of 2^31 - 1 topics
    _expect_error(head + b"\xff\xff" + struct.pack(">hii", 1, 1000, 2**31 - 1))
    # Metadata v1 with 2^31 - 1 topics
    _expect_error(b"\x00\x03\x00\x01\x00\x00\x00\x07\x00\x00" + struct.pack(">i", 2**31 - 1))


def test_negative_lengths() -> None:
    head = b"\x00\x00\x00\x03\x00\x00\x00\x07\x00\x00"
    # a topic name of length -1: not nullable
    _expect_error(head + b"\xff\xff" + struct.pack(">hiih", 1, 1000, 1, -1))
    # a string length of -2
    _expect_error(head + b"\xff\xfe" + struct.pack(">hii", 1, 1000, 0))
    # an array count of -2
    _expect_error(head + b"\xff\xff" + struct.pack(">hii", 1, 1000, -2))
    # null topics in Metadata v0 (nullable only from v1)
    _expect_error(b"\x00\x03\x00\x00\x00\x00\x00\x07\x00\x00" + struct.pack(">i", -1))


def test_truncated_frames_are_protocol_errors() -> None:
    msg = APIS_BY_NAME["Metadata"].request
    value = sample(msg, 12, random.Random(3))
    frame = encode_request(RequestHeader(3, 12, 7, "c"), value)[4:]
    for cut in range(8, len(frame)):
        _expect_error(frame[:cut])
    assert decode_request(frame)[1] == value
    err = _expect_error(frame[:5], correlation_id=None)
    assert err.api_key is None


@settings(max_examples=examples(300), deadline=None)
@given(key=st.sampled_from(sorted(APIS)), version=st.integers(0, 12), body=st.binary(max_size=64))
def test_random_bodies_never_crash(key: int, version: int, body: bytes) -> None:
    frame = struct.pack(">hhi", key, version, 11) + b"\x00\x01c" + body
    try:
        decode_request(frame)
    except ProtocolError as exc:
        assert exc.correlation_id == 11


# --- headers and versions --------------------------------------------------------------------


def test_header_versions() -> None:
    assert APIS[18].request_header_version(3) == 2
    assert APIS[18].response_header_version(3) == 0  # always v0
    assert APIS[18].response_header_version(4) == 0
    assert APIS[3].request_header_version(8) == 1
    assert APIS[3].request_header_version(9) == 2
    assert APIS[3].response_header_version(8) == 0
    assert APIS[3].response_header_version(9) == 1
    assert APIS[17].request_header_version(1) == 1  # SaslHandshake: never flexible


def test_unknown_api_key() -> None:
    with pytest.raises(UnknownApiKey) as info:
        decode_request(struct.pack(">hhi", 1000, 0, 42) + b"\x00\x00")
    assert info.value.correlation_id == 42


def test_unsupported_versions() -> None:
    for key, version in ((0, 2), (0, 13), (1, 3), (1, 19), (3, 13), (18, 5)):
        frame = struct.pack(">hhi", key, version, 8) + b"\x00\x03abc" + b"\x00" * 8
        with pytest.raises(UnsupportedVersion) as info:
            decode_request(frame)
        assert info.value.error_code == ErrorCode.UNSUPPORTED_VERSION
        assert (info.value.correlation_id, info.value.api_version) == (8, version)
        assert info.value.client_id == "abc"


def test_unsupported_api_versions_answer() -> None:
    frame = unsupported_api_versions_response(31)
    correlation_id, resp = decode_response(frame[4:], 18, 0)
    assert correlation_id == 31
    assert resp.error_code == 35
    assert len(resp.api_keys) == len(APIS)
    assert frame[8:10] == b"\x00\x23"  # header v0, then the error code


# --- error codes -----------------------------------------------------------------------------


def test_error_codes() -> None:
    e = ErrorCode
    assert (e.UNKNOWN_SERVER_ERROR, e.NONE, e.OFFSET_OUT_OF_RANGE, e.CORRUPT_MESSAGE) == (
        -1,
        0,
        1,
        2,
    )
    assert e.UNKNOWN_TOPIC_OR_PARTITION == 3
    assert e.UNSUPPORTED_VERSION == 35
    assert e.MEMBER_ID_REQUIRED == 79
    assert e.FENCED_INSTANCE_ID == 82
    assert e.SECURITY_DISABLED == 54
    assert e.INVALID_REQUEST == 42
    assert (e.FENCED_MEMBER_EPOCH, e.STALE_MEMBER_EPOCH, e.INVALID_RECORD_STATE) == (110, 113, 121)
    assert (e.POSITION_OUT_OF_RANGE, e.SHARE_SESSION_LIMIT_REACHED) == (99, 133)
    assert len(e) >= 135
    assert protocol_errors.message(35) == "The version of API is not supported."
    assert protocol_errors.message(0) is None
    assert protocol_errors.message(133) == "The limit of share sessions has been reached."


_FIXED_VALUES = {
    "b": st.integers(-(2**7), 2**7 - 1),
    "h": st.integers(-(2**15), 2**15 - 1),
    "H": st.integers(0, 2**16 - 1),
    "i": st.integers(-(2**31), 2**31 - 1),
    "I": st.integers(0, 2**32 - 1),
    "q": st.integers(-(2**63), 2**63 - 1),
    "d": st.floats(allow_nan=False),
    "?": st.booleans(),
}


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data(), compact=st.booleans())
def test_write_fixed_array_is_the_length_then_the_items(data: st.DataObject, compact: bool) -> None:
    """The one-``pack`` array writer the generated code uses gives the bytes of the
    length then each item, null included, on both sides of the 1-byte varint length."""
    fmt = data.draw(st.sampled_from(sorted(t.FIXED_FORMATS.values())))
    values = data.draw(
        st.none()
        | st.lists(_FIXED_VALUES[fmt], max_size=300)
        | st.lists(_FIXED_VALUES[fmt], min_size=125, max_size=130)
    )
    if values is None:
        wanted = t.write_length(-1, compact, True)
    else:
        wanted = t.write_length(len(values), compact, True) + b"".join(
            struct.pack(">" + fmt, v) for v in values
        )
    assert t.write_fixed_array(fmt, values, compact) == wanted
    assert t.write_fixed_array(fmt, values, compact) == wanted  # from the cached Struct
