"""kafkacore.client against a real broker subprocess: metadata, topic creation, produce and
fetch round trips, ListOffsets specs, idempotent sequences, error codes, response-size cap,
reconnection after a broker restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkacore.client import Client, KafkaError
from kafkacore.protocol import ErrorCode
from kafkacore.record import Record, batch_header, build_batch, iter_batches, records
from support.brokers import Broker

pytestmark = pytest.mark.timeout(60)

T0 = 1_700_000_000_000


def _batch(first: int, count: int, **kw: object) -> bytes:
    return build_batch(
        [
            (i, T0 + first + i, b"k%d" % (first + i), b"v%d" % (first + i), [("h", b"%d" % i)])
            for i in range(count)
        ],
        **kw,  # type: ignore[arg-type]
    )


def _decode(data: bytes, start: int = 0) -> list[Record]:
    """What a consumer does with a Fetch answer: whole batches only, offsets >= start."""
    out: list[Record] = []
    for position, _, _ in iter_batches(data):
        out += [r for r in records(data, position) if r.offset >= start]
    return out


def _read_all(client: Client, topic: str, partition: int, max_bytes: int) -> list[Record]:
    offset, end = 0, client.list_offsets({(topic, partition): -1})[(topic, partition)][0]
    out: list[Record] = []
    while offset < end:
        got = _decode(client.fetch(topic, partition, offset, max_bytes=max_bytes).records, offset)
        assert got, f"no progress at offset {offset}"
        out += got
        offset = got[-1].offset + 1
    return out


def test_metadata_and_create_topic(client: Client) -> None:
    client.create_topic("meta", 3, configs={"retention.ms": "3600000"})
    client.create_topic("meta", 3)  # exist_ok
    assert client.topics()["meta"] == 3
    assert client.partitions("meta") == [0, 1, 2]
    with pytest.raises(KafkaError) as info:
        client.create_topic("meta", 3, exist_ok=False)
    assert info.value.code == ErrorCode.TOPIC_ALREADY_EXISTS
    assert info.value.name == "TOPIC_ALREADY_EXISTS"
    with pytest.raises(KafkaError) as info:
        client.create_topic("bad", 1, configs={"cleanup.policy": "nonsense"})
    assert info.value.code == ErrorCode.INVALID_CONFIG


def test_unknown_topic_is_an_error_and_not_created(client: Client) -> None:
    with pytest.raises(KafkaError) as info:
        client.partitions("missing")
    assert info.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert "missing" in str(info.value) and "UNKNOWN_TOPIC_OR_PARTITION" in str(info.value)
    for call in (
        lambda: client.fetch("missing", 0, 0),
        lambda: client.produce("missing", 0, _batch(0, 1)),
        lambda: client.list_offsets({("missing", 0): -1}),
    ):
        with pytest.raises(KafkaError) as info:
            call()
        assert info.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert "missing" not in client.topics()
    assert client.partitions("auto", auto_create=True) == [0]  # broker defaults
    client.create_topic("one", 1)
    with pytest.raises(KafkaError) as info:
        client.fetch("one", 5, 0)
    assert info.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_produce_fetch_round_trip(client: Client) -> None:
    client.create_topic("rt", 2)
    sent = [_batch(0, 5), _batch(5, 3, compression=1), _batch(8, 4, compression=4)]
    bases = [client.produce("rt", 1, b) for b in sent]
    assert bases == [0, 5, 8]
    got = client.fetch("rt", 1, 0)
    assert got.high_watermark == 12 and got.log_start_offset == 0
    assert got.last_stable_offset == 12
    want = [r._replace(offset=i) for i, r in enumerate(r for b in sent for r in records(b))]
    assert _decode(got.records) == want
    assert client.fetch("rt", 0, 0).records == b""  # empty partition: no records
    assert client.fetch("rt", 1, 12).records == b""  # at the end: nothing yet


def test_fetch_from_mid_batch_and_small_max_bytes(client: Client) -> None:
    """The broker answers whole stored batches: the first may start before the offset asked
    (the caller skips), a max_bytes smaller than a batch still returns one batch (KIP-74),
    and a tail cut short (as Apache Kafka may send) is dropped by iter_batches."""
    client.create_topic("mid", 1)
    for first in range(0, 30, 6):
        client.produce("mid", 0, _batch(first, 6))
    answer = client.fetch("mid", 0, 8)
    first = batch_header(answer.records)
    assert first.base_offset == 6  # the batch holding offset 8
    assert [r.offset for r in _decode(answer.records, 8)] == list(range(8, 30))
    one = client.fetch("mid", 0, 8, max_bytes=10).records
    assert len(list(iter_batches(one))) == 1 and len(one) == first.size_in_bytes
    cut = answer.records[: first.size_in_bytes * 2 + 20]  # two batches and a partial third
    assert [r.offset for r in _decode(cut, 8)] == list(range(8, 18))
    assert [r.value for r in _read_all(client, "mid", 0, 200)] == [b"v%d" % i for i in range(30)]


def test_list_offsets_specs(client: Client) -> None:
    client.create_topic("lo", 2)
    assert client.list_offsets({("lo", 0): -2, ("lo", 1): -1}) == {
        ("lo", 0): (0, -1),
        ("lo", 1): (0, -1),
    }
    client.produce("lo", 0, _batch(0, 4))  # timestamps T0 .. T0+3
    client.produce("lo", 0, _batch(10, 2))  # T0+10, T0+11
    tp = ("lo", 0)
    assert client.list_offsets({tp: -2})[tp][0] == 0
    assert client.list_offsets({tp: -1})[tp][0] == 6
    assert client.list_offsets({tp: -3})[tp] == (5, T0 + 11)
    assert client.list_offsets({tp: T0 + 2})[tp] == (2, T0 + 2)
    assert client.list_offsets({tp: T0 + 5})[tp] == (4, T0 + 10)
    assert client.list_offsets({tp: T0 + 12})[tp][0] == -1
    assert client.list_offsets({tp: 0})[tp] == (0, T0)


def test_offset_out_of_range(client: Client) -> None:
    client.create_topic("oor", 1)
    client.produce("oor", 0, _batch(0, 3))
    with pytest.raises(KafkaError) as info:
        client.fetch("oor", 0, 4)
    assert info.value.code == 1 and info.value.name == "OFFSET_OUT_OF_RANGE"
    assert "oor-0" in str(info.value)
    assert _decode(client.fetch("oor", 0, 2).records, 2)[0].value == b"v2"  # still usable


def test_idempotent_sequences(client: Client) -> None:
    client.create_topic("idem", 1)
    pid, epoch = client.init_producer_id()
    assert pid >= 0 and epoch == 0
    assert client.init_producer_id()[0] != pid

    def batch(first: int, sequence: int) -> bytes:
        return _batch(first, 2, producer_id=pid, producer_epoch=epoch, base_sequence=sequence)

    assert client.produce("idem", 0, batch(0, 0)) == 0
    assert client.produce("idem", 0, batch(2, 2)) == 2
    assert client.produce("idem", 0, batch(0, 0)) == 0  # a retry: original offsets, no write
    with pytest.raises(KafkaError) as info:
        client.produce("idem", 0, batch(4, 9))  # a gap
    assert info.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert client.list_offsets({("idem", 0): -1})[("idem", 0)][0] == 4


def test_response_size_cap(broker: Broker, client: Client) -> None:
    client.create_topic("cap", 1)
    client.produce("cap", 0, _batch(0, 50))
    with Client(broker.bootstrap, timeout_s=10, max_response_bytes=200) as small:
        small.partitions("cap")
        with pytest.raises(KafkaError) as info:
            small.fetch("cap", 0, 0)
        assert info.value.code == ErrorCode.CORRUPT_MESSAGE
        assert "limit 200" in str(info.value)
        assert small.partitions("cap") == [0]  # a fresh connection serves the next request


def test_reconnects_after_broker_restart(tmp_path: Path) -> None:
    b = Broker(tmp_path / "data").start()
    try:
        with Client(b.bootstrap, timeout_s=10) as c:
            c.create_topic("re", 1)
            c.produce("re", 0, _batch(0, 2))
            b.restart()
            assert c.produce("re", 0, _batch(2, 2)) == 2
            assert [r.value for r in _decode(c.fetch("re", 0, 0).records)] == [
                b"v0",
                b"v1",
                b"v2",
                b"v3",
            ]
    finally:
        b.stop()


def test_unreachable_broker() -> None:
    from support.brokers import free_port

    with Client(f"localhost:{free_port()}", timeout_s=2) as c, pytest.raises(KafkaError) as info:
        c.topics()
    assert info.value.code == ErrorCode.NETWORK_EXCEPTION
