"""A log compacted by kafkacore's cleaner, read by Apache Kafka's ``DumpLogSegments``.

kafkacore writes a compacted partition (every codec, tombstones, keys rewritten across
segments, an idempotent producer, a transaction with its COMMIT marker), cleans it twice
(the first round stamps delete horizons on the batches that keep tombstones; the second,
past ``delete.retention.ms``, drops those tombstones and groups the small segments), and
after each round Kafka dumps every segment deeply, verifies the indexes and runs its
start-up index sanity check. Kafka must find every batch valid, report nothing but the
offset gaps compaction leaves, and see exactly the records kafkacore says survive, with
their offsets, keys, values and delete horizons.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.log import AppendOrigin, Log, MockScheduler, MockTime, TopicPartition
from kafkacore.log.cleaner import CleanerConfig, LogCleaner

pytestmark = pytest.mark.interop

T0 = 1_700_000_000_000
RETENTION = 60_000
TP = TopicPartition("compacted", 0)
CODECS = (0, 1, 2, 3, 4)
RECORD_LINE = re.compile(rb"^\| offset: (\d+) ")
FIELD = re.compile(rb"(\w+): (\S*)")

Row = tuple[int, bytes | None, bytes | None]


def write_log(root: Path, backend: ModuleType) -> tuple[Log, MockTime, list[Row]]:
    clock = MockTime(T0)
    config = LogConfig(
        {
            "cleanup.policy": "compact",
            "internal.segment.bytes": 2500,
            "delete.retention.ms": RETENTION,
            "file.delete.delay.ms": 0,
            "index.interval.bytes": 300,
        }
    )
    log = Log(root / str(TP), config, backend=backend, time=clock, scheduler=MockScheduler(clock))
    written: list[Row] = []

    def append(records: list[tuple[bytes | None, bytes | None]], **opts: Any) -> None:
        origin = AppendOrigin.COORDINATOR if opts.get("control") else AppendOrigin.CLIENT
        batch = backend.build_batch(
            [
                (i, clock.milliseconds() + i, k, v, [("h", b"x")])
                for i, (k, v) in enumerate(records)
            ],
            **opts,
        )
        info = log.append_as_leader(batch, leader_epoch=3, origin=origin)
        written.extend(
            (info.first_offset + i, k, v)
            for i, (k, v) in enumerate(records)
            if not opts.get("control")
        )

    for round_ in range(6):
        for codec in CODECS:
            keys = [f"k{(round_ * 7 + codec * 3 + j) % 13}".encode() for j in range(4)]
            values: list[bytes | None] = [f"v{round_}-{codec}-{j}".encode() for j in range(4)]
            if (round_ + codec) % 5 == 0:  # a key written, then deleted
                keys[1] = f"gone-{round_}-{codec}".encode()
                append([(keys[1], b"alive")], compression=codec)
                values[1] = None
            append(list(zip(keys, values, strict=True)), compression=codec)
            clock.sleep(10)
        append(
            [(b"idem", f"i{round_}".encode())],
            producer_id=77,
            producer_epoch=1,
            base_sequence=round_,
        )
    append(
        [(b"txn-a", b"1"), (b"txn-b", b"2")],
        producer_id=88,
        producer_epoch=0,
        base_sequence=0,
        transactional=True,
    )
    commit = (struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 5))
    append([commit], producer_id=88, producer_epoch=0, transactional=True, control=True)
    log.roll()
    append([(b"k0", b"tail")])  # the active segment: never cleaned
    return log, clock, written


def reopen(log: Log, backend: ModuleType, clock: MockTime) -> Log:
    return Log(log.dir, log.config, backend=backend, time=clock, scheduler=MockScheduler(clock))


def kafkacore_view(
    log: Log, backend: ModuleType
) -> list[tuple[int, bytes | None, bytes | None, bool]]:
    """(offset, key, value, batch has a delete horizon) of every record, segment by segment."""
    rows = []
    for segment in log.segments:
        data = segment.segment.read_bytes(0, segment.size)
        pos = 0
        while pos < len(data):
            header = backend.batch_header(data, pos)
            horizon = bool(header[5] & 0x40)
            rows += [(r[0], r[2], r[3], horizon) for r in backend.batch_records(data, pos)]
            pos += header[1] + 12
    return rows


def dump(java: Any, log: Log) -> dict[str, Any]:
    directory = Path(log.dir)
    logs = sorted(directory.glob("*.log"))
    indexes = sorted([*directory.glob("*.index"), *directory.glob("*.timeindex")])
    cls = "org.apache.kafka.tools.DumpLogSegments"
    deep, verify, sanity = java.run_all(
        [
            (cls, "--deep-iteration", "--files", ",".join(map(str, logs))),
            (cls, "--verify-index-only", "--files", ",".join(map(str, indexes))),
            (cls, "--index-sanity-check", "--files", ",".join(map(str, indexes))),
        ]
    )
    for result in (deep, verify, sanity):
        result.check()
    batches: list[dict[str, str]] = []
    offsets: list[int] = []
    for line in deep.stdout.split(b"\n"):
        if line.startswith(b"baseOffset: "):
            batches.append({k.decode(): v.decode() for k, v in FIELD.findall(line)})
        elif m := RECORD_LINE.match(line):
            offsets.append(int(m.group(1)))
    return {
        "batches": batches,
        "offsets": offsets,
        "deep_stdout": deep.stdout.decode(),
        "deep_stderr": deep.stderr.decode(),
        "verify": (verify.stdout.decode(), verify.stderr.decode()),
        "sanity": (sanity.stdout.decode(), sanity.stderr.decode()),
        "indexes": indexes,
    }


def check_kafka_agrees(view: dict[str, Any], rows: list[Any]) -> None:
    assert view["offsets"] == [r[0] for r in rows]
    assert all(b["isvalid"] == "true" for b in view["batches"])
    assert "invalid bytes" not in view["deep_stdout"]
    # The only complaint: the offset gaps compaction leaves.
    for line in view["deep_stderr"].splitlines():
        assert line.startswith(("Non-consecutive offsets in ", "  ")), line
        if line.startswith("  "):
            assert re.fullmatch(r"  -?\d+ is followed by \d+", line), line
    verify_out, verify_err = view["verify"]
    assert verify_err == "" and "Mismatches" not in verify_out
    sanity_out, sanity_err = view["sanity"]
    assert sanity_err == ""
    for index in view["indexes"]:
        assert (
            f"{index} passed sanity check." in sanity_out or f"{index} is empty." in sanity_out
        ), index


def test_kafka_reads_the_compacted_log(
    backend: ModuleType, backend_name: str, java: Any, tmp_path: Path
) -> None:
    log, clock, written = write_log(tmp_path / backend_name, backend)

    def latest_before(end: int) -> dict[bytes | None, int]:
        return {key: offset for offset, key, _ in written if offset < end}

    logs = [log]
    cleaner = LogCleaner(lambda: logs, CleanerConfig(), clock)

    first = cleaner.clean(log)
    assert first is not None and first.end_offset == log.active_segment.base_offset
    rows = kafkacore_view(log, backend)
    # Below the end offset only the latest record of each key; tombstones kept, with a
    # delete horizon on their batches; the COMMIT marker kept.
    latest = latest_before(first.end_offset)
    cleaned = [r for r in rows if r[0] < first.end_offset]
    data = [r for r in cleaned if r[1] in latest]
    assert sorted(o for o, _, _, _ in data) == sorted(latest.values())
    assert all(latest[k] == o for o, k, _, _ in data)
    tombstones = [r for r in cleaned if r[2] is None]
    assert tombstones and all(r[3] for r in tombstones)
    log.close()  # trims the active segment's preallocated indexes, as Kafka's tools expect
    view = dump(java, log)
    check_kafka_agrees(view, rows)
    log = reopen(log, backend, clock)
    logs[0] = log
    horizon = f"OptionalLong[{clock.milliseconds() + RETENTION}]"
    assert any(b["deleteHorizonMs"] == horizon for b in view["batches"])
    assert any(b["isControl"] == "true" for b in view["batches"])

    clock.sleep(RETENTION)
    segments_before = log.number_of_segments
    second = cleaner.clean(log, force=True)
    assert second is not None and any(len(g) > 1 for g in second.groups)
    assert log.number_of_segments < segments_before
    rows = kafkacore_view(log, backend)
    latest = latest_before(second.end_offset)
    survivors = {o for o, k, v in written if latest.get(k) == o and v is not None}
    assert {r[0] for r in rows if r[0] < second.end_offset and r[1] in latest} == survivors
    assert not [r for r in rows if r[0] < second.end_offset and r[2] is None]
    log.close()
    check_kafka_agrees(dump(java, log), rows)
