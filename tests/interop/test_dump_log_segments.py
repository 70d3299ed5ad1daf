"""Segments written by kafkacore, read by Apache Kafka's own code.

kafkacore's ``Segment`` writes three segments (every codec, CreateTime and LogAppendTime
both from ``build_batch`` and from ``Segment.append(log_append_time_ms=...)``, headers,
null and empty keys and values, idempotent and transactional batches, COMMIT/ABORT
markers, the replica path with offset gaps, a delete horizon, index intervals from 0 to
4096 bytes). Then, in parallel JVMs, Kafka's ``DumpLogSegments`` dumps every file deeply,
verifies the indexes (``--verify-index-only``) and runs the broker's start-up index sanity
check (``--index-sanity-check``), and Kafka's ``LogSegment`` replays the same appends
(java/ReplaySegments.java). The tests assert that Kafka sees every batch and record as
kafkacore meant it, and that Kafka's segment files are kafkacore's, byte for byte.
"""

from __future__ import annotations

import random
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.interop

CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
TIMESTAMP_TYPE_NAMES = ("CreateTime", "LogAppendTime")
T0 = 1_700_000_000_000
MAX_INDEX_SIZE = 1 << 20
COMMIT, ABORT = 1, 0

Headers = list[tuple[str, bytes | None]]
Record = tuple[int, int, bytes | None, bytes | None, Headers]


# --------------------------------------------------------------------------- inputs


def records(count: int, *, salt: int = 0, value_size: int = 0, first: int = 0) -> list[Record]:
    """Records at offsets first..first+count-1: null/empty/plain keys and values, UTF-8
    text (the dump prints payloads as UTF-8 strings), headers of every shape, timestamps
    that go back (negative deltas, and batches whose max is below an earlier one).

    ``value_size``: values of that many bytes of random two-byte UTF-8 characters, which
    lz4 and snappy cannot shrink (lz4 stores such blocks uncompressed)."""
    rng = random.Random(salt)
    out: list[Record] = []
    for i in range(count):
        key = (None, b"", f"key-{salt}-{i}".encode())[min(i % 4, 2)]
        value: bytes | None
        if i % 5 == 3:
            value = None
        elif i % 5 == 4:
            value = b""
        else:
            filler = "".join(chr(rng.randrange(0x80, 0x800)) for _ in range(value_size // 2))
            value = f"välue {salt}/{i} {filler or 'x' * 7 * i}".encode()
        headers: Headers = [
            [],
            [("trace-id", f"t{i}".encode())],
            [("héader", b"first"), ("null-value", None), ("héader", b"")],
        ][i % 3]
        ts = T0 + 1000 * salt + (-37 * i if i % 3 == 2 else 11 * i)
        out.append((first + i, ts, key, value, headers))
    return out


def control_record(marker: int, coordinator_epoch: int, ts: int) -> Record:
    """An end-transaction marker: key = i16 version 0, i16 type (0 abort, 1 commit);
    value = i16 version 0, i32 coordinator epoch."""
    key = struct.pack(">hh", 0, marker)
    value = struct.pack(">hi", 0, coordinator_epoch)
    return (0, ts, key, value, [])


@dataclass
class Batch:
    """One batch to build with ``build_batch`` (records at their offsets)."""

    records: list[Record]
    options: dict[str, Any] = field(default_factory=dict)
    marker: tuple[str, int] | None = None  # ("COMMIT"|"ABORT", coordinator epoch)


@dataclass
class Written:
    """A batch as kafkacore should have written it."""

    position: int
    size: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    timestamp_type: int
    codec: int
    records: list[Record]
    producer_id: int
    producer_epoch: int
    base_sequence: int
    partition_leader_epoch: int
    transactional: bool
    control: bool
    delete_horizon_ms: int
    marker: tuple[str, int] | None


class SegmentScenario:
    """Appends to a kafkacore Segment and keeps what the files must then hold."""

    def __init__(
        self, backend: ModuleType, directory: Path, base_offset: int, index_interval_bytes: int
    ) -> None:
        directory.mkdir(parents=True)
        self.backend = backend
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.segment = backend.Segment(
            str(directory),
            base_offset,
            index_interval_bytes=index_interval_bytes,
            max_index_size=MAX_INDEX_SIZE,
        )
        self.written: list[Written] = []
        self.appends: list[tuple[int, int, int]] = []  # (position, length, largest offset)
        self.offset_index: list[tuple[int, int]] = []
        self.time_index: list[tuple[int, int]] = []

    def append(
        self,
        batches: list[Batch],
        *,
        assign_offsets: bool = True,
        partition_leader_epoch: int = -1,
        log_append_time_ms: int = -1,
    ) -> None:
        built = [self.backend.build_batch(b.records, **b.options) for b in batches]
        data = b"".join(built)
        position = self.segment.size
        next_offset = self.segment.next_offset
        result = self.segment.append(
            data,
            assign_offsets=assign_offsets,
            partition_leader_epoch=partition_leader_epoch,
            log_append_time_ms=log_append_time_ms,
        )
        first = None
        max_ts, offset_of_max = -1, -1
        for batch, raw in zip(batches, built, strict=True):
            # What the inputs ask for (build_batch's documented rules), not what kafkacore
            # reads back: Kafka's dump is the reader here.
            opts = batch.options
            stored_base = opts.get("base_offset", batch.records[0][0])
            last_delta = opts.get("last_offset_delta", batch.records[-1][0] - stored_base)
            base = next_offset if assign_offsets else stored_base
            stamped = assign_offsets and log_append_time_ms >= 0
            timestamp_type = 1 if stamped else opts.get("timestamp_type", 0)
            batch_max_ts = log_append_time_ms if stamped else max(r[1] for r in batch.records)
            assert self.backend.batch_header(raw, 0)[6] == last_delta
            expected_records = [
                (
                    base + offset - stored_base,
                    batch_max_ts if timestamp_type == 1 else ts,
                    key,
                    value,
                    headers,
                )
                for offset, ts, key, value, headers in batch.records
            ]
            self.written.append(
                Written(
                    position=position,
                    size=len(raw),
                    base_offset=base,
                    last_offset=base + last_delta,
                    max_timestamp=batch_max_ts,
                    timestamp_type=timestamp_type,
                    codec=opts.get("compression", 0),
                    records=expected_records,
                    producer_id=opts.get("producer_id", -1),
                    producer_epoch=opts.get("producer_epoch", -1),
                    base_sequence=opts.get("base_sequence", -1),
                    partition_leader_epoch=(
                        partition_leader_epoch
                        if assign_offsets
                        else opts.get("partition_leader_epoch", -1)
                    ),
                    transactional=opts.get("transactional", False),
                    control=opts.get("control", False),
                    delete_horizon_ms=opts.get("delete_horizon_ms", -1),
                    marker=batch.marker,
                )
            )
            if first is None:
                first = base
            if batch_max_ts > max_ts:
                max_ts, offset_of_max = batch_max_ts, base + last_delta
            position += len(raw)
            next_offset = base + last_delta + 1
        last = self.written[-1].last_offset
        assert result == (first, last, max_ts, offset_of_max, len(data))
        self.appends.append((position - len(data), len(data), last))

    def close(self) -> None:
        # seal() adds the final time-index entry; keep what kafkacore says it indexed.
        self.segment.seal()
        self.offset_index = list(self.segment.offset_index())
        self.time_index = list(self.segment.time_index())
        self.segment.close()

    @property
    def name(self) -> str:
        return f"{self.base_offset:020d}"

    def path(self, suffix: str) -> Path:
        return self.directory / f"{self.name}{suffix}"

    def expected_indexes(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Kafka's LogSegment rules, per batch: before counting a batch, index it when
        more than index.interval.bytes were written since the last entry; a time entry
        only when its timestamp is greater than the last; one more at close."""
        offsets: list[tuple[int, int]] = []
        times: list[tuple[int, int]] = []
        since, max_ts, offset_of_max = 0, -1, -1
        for w in self.written:
            if w.max_timestamp > max_ts:
                max_ts, offset_of_max = w.max_timestamp, w.last_offset
            if since > self.index_interval_bytes:
                offsets.append((w.last_offset, w.position))
                if max_ts > (times[-1][0] if times else -1):
                    times.append((max_ts, offset_of_max))
                since = 0
            since += w.size
        if max_ts > (times[-1][0] if times else -1):
            times.append((max_ts, offset_of_max))
        return offsets, times


def write_segments(backend: ModuleType, root: Path) -> list[SegmentScenario]:
    lat = T0 + 555_000
    scenarios = []

    # Leader path: kafkacore assigns offsets; an entry every ~256 bytes.
    a = SegmentScenario(backend, root / "leader", 0, 256)
    for codec in range(5):
        a.append([Batch(records(6, salt=codec), {"compression": codec})])
        a.append([Batch(records(5, salt=10 + codec), {"compression": codec, "timestamp_type": 1})])
        a.append(
            [Batch(records(4, salt=20 + codec), {"compression": codec})], log_append_time_ms=lat
        )
        lat += 1000
    # Larger than a snappy chunk (32 KiB) and an lz4 block (64 KiB) once compressed away.
    for codec in range(1, 5):
        a.append([Batch(records(3, salt=30 + codec, value_size=70_000), {"compression": codec})])
    producer = {"producer_id": 7001, "producer_epoch": 4}
    a.append(
        [Batch(records(4, salt=40), {**producer, "base_sequence": 0, "transactional": True})],
        partition_leader_epoch=3,
    )
    a.append(
        [
            Batch(
                [control_record(COMMIT, 17, T0 + 41_000)],
                {**producer, "transactional": True, "control": True},
                marker=("COMMIT", 17),
            )
        ],
        partition_leader_epoch=3,
    )
    a.append(
        [Batch(records(3, salt=42), {**producer, "base_sequence": 4, "transactional": True})],
        partition_leader_epoch=3,
    )
    a.append(
        [
            Batch(
                [control_record(ABORT, 18, T0 + 43_000)],
                {**producer, "transactional": True, "control": True},
                marker=("ABORT", 18),
            )
        ],
        partition_leader_epoch=4,
        log_append_time_ms=lat,
    )
    # Several batches in one append call (idempotent producer, sequences wrapping i32).
    idempotent = {"producer_id": 9, "producer_epoch": 0}
    a.append(
        [
            Batch(records(3, salt=50), {**idempotent, "base_sequence": 2**31 - 2}),
            Batch(records(5, salt=51), {**idempotent, "base_sequence": 1, "compression": 4}),
            Batch(records(2, salt=52), {**idempotent, "base_sequence": 6, "compression": 2}),
        ],
        partition_leader_epoch=4,
    )
    a.close()
    scenarios.append(a)

    # Replica path: batches keep their offsets (gaps), epochs and timestamps; every batch
    # after the first is indexed (interval 0).
    b = SegmentScenario(backend, root / "replica", 1000, 0)
    b.append([Batch(records(5, salt=60, first=1000), {"partition_leader_epoch": 2})])
    # A compacted-looking batch: its base offset below the first record, gaps between.
    gapped = [(1007 + 3 * r[0], *r[1:]) for r in records(4, salt=61)]
    b.append([Batch(gapped, {"base_offset": 1005, "partition_leader_epoch": 2, "compression": 1})])
    b.append(
        [
            Batch(records(3, salt=62, first=1030), {"last_offset_delta": 9, "timestamp_type": 1}),
            Batch(
                records(3, salt=63, first=1040),
                {"delete_horizon_ms": T0 + 86_400_000, "compression": 3},
            ),
        ]
    )
    b.append([Batch(records(2, salt=64, first=1100), {"partition_leader_epoch": 5})])
    b.close()
    scenarios.append(b)

    # Default interval (4096): entries only past a few large batches.
    c = SegmentScenario(backend, root / "default-interval", 2_000_000_000, 4096)
    for i in range(12):
        c.append([Batch(records(8, salt=70 + i, value_size=900), {"compression": i % 5})])
    c.close()
    scenarios.append(c)
    return scenarios


# --------------------------------------------------------------------------- Kafka's view


def dump_sections(stdout: bytes) -> dict[str, list[bytes]]:
    """DumpLogSegments output split per file: {path: its lines}."""
    sections: dict[str, list[bytes]] = {}
    current: list[bytes] | None = None
    for line in stdout.split(b"\n"):
        if line.startswith(b"Dumping "):
            current = sections.setdefault(line[len(b"Dumping ") :].decode(), [])
        elif line and current is not None:
            current.append(line)
    return sections


FIELD = re.compile(rb"(\w+): (\S*)")


def parse_batch_line(line: bytes) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in FIELD.findall(line)}


RECORD_META = re.compile(
    rb"^\| offset: (\d+) (CreateTime|LogAppendTime): (-?\d+) keySize: (-?\d+) "
    rb"valueSize: (-?\d+) sequence: (-?\d+) headerKeys: \[(.*?)\]"
)


def parse_record_line(line: bytes) -> dict[str, Any]:
    """A deep-iteration record line; key and payload are cut by their printed sizes, so
    they may hold any UTF-8 text."""
    m = RECORD_META.match(line)
    assert m, line
    offset, ts_type, ts, key_size, value_size, sequence, header_keys = m.groups()
    rest = line[m.end() :]
    out: dict[str, Any] = {
        "offset": int(offset),
        "timestamp_type": ts_type.decode(),
        "timestamp": int(ts),
        "key_size": int(key_size),
        "value_size": int(value_size),
        "sequence": int(sequence),
        "header_keys": header_keys.decode().split(",") if header_keys else [],
        "marker": None,
        "key": None,
        "value": None,
    }
    marker = re.match(rb" endTxnMarker: (\w+) coordinatorEpoch: (-?\d+)", rest)
    if marker:
        out["marker"] = (marker.group(1).decode(), int(marker.group(2)))
        return out | {"rest": rest[marker.end() :]}
    for name, size, prefix in (
        ("key", int(key_size), b" key: "),
        ("value", int(value_size), b" payload: "),
    ):
        if size >= 0:
            assert rest.startswith(prefix), (line, rest)
            out[name] = rest[len(prefix) : len(prefix) + size]
            rest = rest[len(prefix) + size :]
    return out | {"rest": rest}


def sequence_of(base_sequence: int, delta: int) -> int:
    """Kafka's sequence arithmetic: -1 stays -1, otherwise wraps past i32 max to 0."""
    if base_sequence < 0:
        return -1
    return (base_sequence + delta) % (2**31)


def expected_batch_fields(w: Written, crc: int) -> dict[str, str]:
    delta = w.last_offset - w.base_offset
    horizon = (
        f"OptionalLong[{w.delete_horizon_ms}]" if w.delete_horizon_ms >= 0 else "OptionalLong.empty"
    )
    return {
        "baseOffset": str(w.base_offset),
        "lastOffset": str(w.last_offset),
        "count": str(len(w.records)),
        "baseSequence": str(w.base_sequence),
        "lastSequence": str(sequence_of(w.base_sequence, delta)),
        "producerId": str(w.producer_id),
        "producerEpoch": str(w.producer_epoch),
        "partitionLeaderEpoch": str(w.partition_leader_epoch),
        "isTransactional": str(w.transactional).lower(),
        "isControl": str(w.control).lower(),
        "deleteHorizonMs": horizon,
        "position": str(w.position),
        TIMESTAMP_TYPE_NAMES[w.timestamp_type]: str(w.max_timestamp),
        "size": str(w.size),
        "magic": "2",
        "compresscodec": CODEC_NAMES[w.codec],
        "crc": str(crc),
        "isvalid": "true",
    }


def expected_record_fields(w: Written, record: Record) -> dict[str, Any]:
    offset, ts, key, value, headers = record
    return {
        "offset": offset,
        "timestamp_type": TIMESTAMP_TYPE_NAMES[w.timestamp_type],
        "timestamp": ts,
        "key_size": -1 if key is None else len(key),
        "value_size": -1 if value is None else len(value),
        "sequence": sequence_of(w.base_sequence, offset - w.base_offset),
        "header_keys": [k for k, _ in headers],
        "marker": w.marker,
        "key": None if w.control else key,
        "value": None if w.control else value,
        "rest": b"",
    }


def log_lines(lines: list[bytes]) -> Iterator[tuple[dict[str, str], list[dict[str, Any]]]]:
    """(batch fields, its record lines) for each batch of a dumped .log."""
    assert lines[0].startswith(b"Log starting offset: "), lines[0]
    batch: dict[str, str] | None = None
    rows: list[dict[str, Any]] = []
    for line in lines[1:]:
        if line.startswith(b"| "):
            rows.append(parse_record_line(line))
            continue
        if batch is not None:
            yield batch, rows
        assert line.startswith(b"baseOffset: "), line
        batch, rows = parse_batch_line(line), []
    if batch is not None:
        yield batch, rows


@dataclass
class KafkaView:
    scenarios: list[SegmentScenario]
    dump_stdout: dict[str, list[bytes]]
    dump_stderr: str
    verify_stdout: str
    verify_stderr: str
    sanity_stdout: str
    sanity_stderr: str
    replay_root: Path


@pytest.fixture(scope="module")
def kafka_view(
    backend: ModuleType, backend_name: str, java: Any, tmp_path_factory: pytest.TempPathFactory
) -> KafkaView:
    root = tmp_path_factory.mktemp(f"segments-{backend_name}")
    scenarios = write_segments(backend, root / "kafkacore")
    logs = [s.path(".log") for s in scenarios]
    indexes = [p for s in scenarios for p in (s.path(".index"), s.path(".timeindex"))]

    replay_root = root / "kafka"
    plan = []
    for s in scenarios:
        plan.append(
            f"segment {replay_root / s.directory.name} {s.base_offset} "
            f"{s.index_interval_bytes} {MAX_INDEX_SIZE}"
        )
        plan.extend(f"append {s.path('.log')} {p} {n} {last}" for p, n, last in s.appends)
        plan.append("close")
    (root / "replay.plan").write_text("\n".join(plan) + "\n")

    files = ",".join(map(str, logs + indexes))
    index_files = ",".join(map(str, indexes))
    dump_class = "org.apache.kafka.tools.DumpLogSegments"
    dump, verify, sanity, replay = java.run_all(
        [
            (dump_class, "--deep-iteration", "--print-data-log", "--files", files),
            (dump_class, "--verify-index-only", "--files", index_files),
            (dump_class, "--index-sanity-check", "--files", index_files),
            ("ReplaySegments", str(root / "replay.plan")),
        ]
    )
    for result in (dump, verify, sanity, replay):
        result.check()
    return KafkaView(
        scenarios=scenarios,
        dump_stdout=dump_sections(dump.stdout),
        dump_stderr=dump.stderr.decode(),
        verify_stdout=verify.stdout.decode(),
        verify_stderr=verify.stderr.decode(),
        sanity_stdout=sanity.stdout.decode(),
        sanity_stderr=sanity.stderr.decode(),
        replay_root=replay_root,
    )


SCENARIOS = ["leader", "replica", "default-interval"]


def scenario(view: KafkaView, name: str) -> SegmentScenario:
    return next(s for s in view.scenarios if s.directory.name == name)


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("name", SCENARIOS)
def test_dump_shows_every_batch_as_written(
    name: str, kafka_view: KafkaView, backend: ModuleType
) -> None:
    s = scenario(kafka_view, name)
    data = s.path(".log").read_bytes()
    dumped = list(log_lines(kafka_view.dump_stdout[str(s.path(".log"))]))
    assert len(dumped) == len(s.written)
    for (batch, rows), w in zip(dumped, s.written, strict=True):
        raw = data[w.position : w.position + w.size]
        stored_crc = backend.batch_header(raw, 0)[4]
        assert batch == expected_batch_fields(w, stored_crc)  # isvalid: Kafka checked the CRC
        assert stored_crc == backend.crc32c(raw[21:])
        assert rows == [expected_record_fields(w, r) for r in w.records]
    assert sum(w.size for w in s.written) == len(data)


def test_dump_reports_no_errors(kafka_view: KafkaView) -> None:
    """Only the offset gaps kafkacore wrote on purpose are reported, nothing else: no
    index mismatch, no invalid trailing bytes."""
    expected = []
    for s in kafka_view.scenarios:
        last = -1
        pairs = []
        for w in s.written:
            for offset, *_ in w.records:
                if offset != last + 1:
                    pairs.append(f"  {last} is followed by {offset}")
                last = offset
        if pairs:  # Kafka names only the files that have some
            expected.append((f"Non-consecutive offsets in {s.path('.log')}", pairs))
    lines = kafka_view.dump_stderr.splitlines()
    got = []
    for line in lines:
        if line.startswith("Non-consecutive offsets in "):
            got.append((line, []))
        else:
            assert got and line.startswith("  "), kafka_view.dump_stderr
            got[-1][1].append(line)
    assert sorted(got) == sorted(expected)
    for section in kafka_view.dump_stdout.values():
        assert not any(b"invalid bytes" in line for line in section)


@pytest.mark.parametrize("name", SCENARIOS)
def test_kafka_reads_the_indexes_kafkacore_wrote(name: str, kafka_view: KafkaView) -> None:
    s = scenario(kafka_view, name)
    offsets, times = s.expected_indexes()
    assert s.offset_index == offsets
    assert s.time_index == times
    if s.index_interval_bytes == 0:  # every batch but the first is indexed
        assert len(offsets) == len(s.written) - 1
    else:
        assert len(offsets) >= {"leader": 10, "default-interval": 2}[name]
    dumped_offsets = kafka_view.dump_stdout[str(s.path(".index"))]
    dumped_times = kafka_view.dump_stdout[str(s.path(".timeindex"))]
    assert dumped_offsets == [f"offset: {o} position: {p}".encode() for o, p in offsets]
    assert dumped_times == [f"timestamp: {t} offset: {o}".encode() for t, o in times]
    assert s.path(".index").stat().st_size == 8 * len(offsets)
    assert s.path(".timeindex").stat().st_size == 12 * len(times)


def test_verify_index_only_finds_no_mismatch(kafka_view: KafkaView) -> None:
    assert kafka_view.verify_stderr == ""
    expected = [
        f"Dumping {s.path(suffix)}"
        for s in kafka_view.scenarios
        for suffix in (".index", ".timeindex")
    ]
    assert kafka_view.verify_stdout.splitlines() == expected


def test_index_sanity_check_passes(kafka_view: KafkaView) -> None:
    """The check a broker runs at start-up to decide whether to rebuild an index."""
    assert kafka_view.sanity_stderr == ""
    expected = []
    for s in kafka_view.scenarios:
        for suffix in (".index", ".timeindex"):
            expected += [f"Dumping {s.path(suffix)}", f"{s.path(suffix)} passed sanity check."]
    assert kafka_view.sanity_stdout.splitlines() == expected


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.parametrize("suffix", [".log", ".index", ".timeindex"])
def test_kafka_log_segment_writes_the_same_files(
    name: str, suffix: str, kafka_view: KafkaView
) -> None:
    """The same appends through Kafka's LogSegment give the same bytes on disk."""
    s = scenario(kafka_view, name)
    theirs = (kafka_view.replay_root / name / f"{s.name}{suffix}").read_bytes()
    assert s.path(suffix).read_bytes() == theirs
