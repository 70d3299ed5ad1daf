"""kcat (librdkafka, the Debian build: kcat 1.7 on librdkafka 2.0, i.e. before 2.11.1, so
its exact-version feature checks apply) against a kafkacore broker: -L metadata, -P with
-K/-H/-z per codec, -C with -o beginning/offset/negative and -e, -J, -Q."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from compat.conftest import Broker, batch_attributes

pytestmark = pytest.mark.timeout(120)

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def run(kcat: str, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        [kcat, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, f"kcat {' '.join(args)} exited {proc.returncode}: {proc.stderr}"
    return proc.stdout


def consume_json(kcat: str, bootstrap: str, topic: str, *opts: str) -> list[dict[str, object]]:
    out = run(kcat, "-b", bootstrap, "-C", "-t", topic, "-e", "-q", "-J", *opts)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("codec", list(CODECS))
def test_produce_with_keys_headers_and_codec_then_consume(
    kcat: str, broker: Broker, codec: str
) -> None:
    topic = f"kcat-{codec}"
    lines = "".join(f"key{i}:value-{i}-{'x' * (i % 7)}\n" for i in range(200))
    run(
        kcat,
        "-b",
        broker.bootstrap,
        "-P",
        "-t",
        topic,
        "-K:",
        "-H",
        "trace=abc",
        "-H",
        "n=1",
        "-z",
        codec,
        "-X",
        "linger.ms=50",
        stdin=lines,
    )
    attrs = batch_attributes(broker.data / f"{topic}-0")
    assert attrs, "no batch on disk"
    # librdkafka sends a batch uncompressed when compressing would make it larger (a small
    # batch cut by linger.ms), so: each batch has the codec or none, and the codec is used.
    codecs_on_disk = {a & 7 for a in attrs}
    assert codecs_on_disk <= {0, CODECS[codec]} and CODECS[codec] in codecs_on_disk, attrs
    msgs = consume_json(kcat, broker.bootstrap, topic, "-o", "beginning")
    assert [m["offset"] for m in msgs] == list(range(200))
    assert [m["key"] for m in msgs] == [f"key{i}" for i in range(200)]
    assert msgs[13]["payload"] == "value-13-xxxxxx"
    assert all(m["headers"] == ["trace", "abc", "n", "1"] for m in msgs)
    assert all(m["tstype"] == "create" and m["partition"] == 0 for m in msgs)


def test_consume_from_offset_negative_offset_and_format(kcat: str, broker: Broker) -> None:
    topic = "kcat-offsets"
    run(
        kcat, "-b", broker.bootstrap, "-P", "-t", topic, stdin="".join(f"m{i}\n" for i in range(10))
    )
    from_7 = consume_json(kcat, broker.bootstrap, topic, "-o", "7")
    assert [(m["offset"], m["payload"]) for m in from_7] == [(7, "m7"), (8, "m8"), (9, "m9")]
    last_2 = consume_json(kcat, broker.bootstrap, topic, "-o", "-2")
    assert [m["payload"] for m in last_2] == ["m8", "m9"]
    fmt = run(
        kcat,
        "-b",
        broker.bootstrap,
        "-C",
        "-t",
        topic,
        "-o",
        "3",
        "-c",
        "2",
        "-e",
        "-q",
        "-f",
        "%t/%p/%o %s\n",
    )
    assert fmt == f"{topic}/0/3 m3\n{topic}/0/4 m4\n"
    at_end = consume_json(kcat, broker.bootstrap, topic, "-o", "end")
    assert at_end == []


def test_metadata_listing(kcat: str, broker: Broker) -> None:
    run(kcat, "-b", broker.bootstrap, "-P", "-t", "kcat-meta", stdin="x\n")
    meta = json.loads(run(kcat, "-b", broker.bootstrap, "-L", "-J"))
    assert meta["brokers"] == [{"id": 1, "name": broker.bootstrap}]
    assert meta["controllerid"] == 1
    topics = {t["topic"]: t for t in meta["topics"]}
    (part,) = topics["kcat-meta"]["partitions"]
    assert part["partition"] == 0 and part["leader"] == 1
    assert part["replicas"] == [{"id": 1}] and part["isrs"] == [{"id": 1}]
    one = json.loads(run(kcat, "-b", broker.bootstrap, "-L", "-J", "-t", "kcat-meta"))
    assert [t["topic"] for t in one["topics"]] == ["kcat-meta"]
    assert "err" not in one["topics"][0]


def test_query_offsets_by_timestamp(kcat: str, broker: Broker) -> None:
    topic = "kcat-times"
    run(kcat, "-b", broker.bootstrap, "-P", "-t", topic, stdin="a\nb\n")
    time.sleep(0.05)
    middle = int(time.time() * 1000)
    time.sleep(0.05)
    run(kcat, "-b", broker.bootstrap, "-P", "-t", topic, stdin="c\n")
    msgs = consume_json(kcat, broker.bootstrap, topic, "-o", "beginning")
    stamps = [m["ts"] for m in msgs]
    assert stamps[0] < middle < stamps[2]

    def query(ts: int) -> str:
        return run(kcat, "-b", broker.bootstrap, "-Q", "-t", f"{topic}:0:{ts}").strip()

    assert query(0) == f"{topic} [0] offset 0"
    assert query(middle) == f"{topic} [0] offset 2"
    assert query(stamps[2] + 60_000) == f"{topic} [0] offset -1"
    # -o s@<ts>: start consuming at the first message at or after the timestamp.
    from_ts = consume_json(kcat, broker.bootstrap, topic, "-o", f"s@{middle}")
    assert [m["payload"] for m in from_ts] == ["c"]
