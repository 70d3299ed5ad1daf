"""``kafkacore dump-log`` against Apache Kafka's own ``DumpLogSegments``, line for line.

One corpus of files, written through kafkacore's API (``Segment``, ``build_batch``,
``build_legacy``) plus the legacy message sets Kafka's own builder writes
(java/BuildBatches.java): every codec, CreateTime and LogAppendTime, idempotent batches
(a sequence that wraps), transactions with COMMIT and ABORT markers, KRaft control
records, a delete horizon, offset gaps, UTF-8 and malformed payloads, legacy v0/v1 plain
and compressed; and damaged files: index entries that point at the wrong batch, zeroed
index tails, time indexes out of order or pointing inside a batch, a batch with a bad
CRC, partial batches at the end, an empty index; a transaction index, producer-state
snapshots (one valid, one with a bad CRC, one of an unknown version), a KRaft snapshot
and unknown files. Twenty damaged partitions make Kafka's report maps (``HashMap``) grow
past their first table size, so the order of the reports is exercised too.

Both tools dump the whole corpus with each set of options; stdout and stderr must be the
same, line for line (JVM log lines aside). Then the files on which Kafka's tool throws:
the output up to that point must be the same, and Kafka's exception must carry our
message.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.coordinator.codec import write_message
from kafkacore.native import backend as default_backend
from kafkacore.native import load_backend
from kafkacore.tools import offsets_records
from kafkacore.tools.dump_log import DumpFailure, DumpOptions, dump_files

pytestmark = pytest.mark.interop

T0 = 1_700_000_000_000
INT_MAX = 2**31 - 1
Record = tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]

OPTION_SETS: list[tuple[str, ...]] = [
    (),
    ("--deep-iteration",),
    ("--print-data-log",),
    ("--print-data-log", "--skip-record-metadata"),
    ("--deep-iteration", "--skip-record-metadata"),
    ("--verify-index-only",),
    ("--index-sanity-check",),
    ("--print-data-log", "--max-bytes", "2500"),
]

DUMP = "org.apache.kafka.tools.DumpLogSegments"

_JVM_NOISE = re.compile(
    r"^(SLF4J[(:]|OpenJDK 64-Bit Server VM warning|\[[^\]]*\] (WARN|ERROR|INFO) )"
)


def _without_jvm_noise(text: str) -> list[str]:
    return [line for line in text.splitlines() if not _JVM_NOISE.match(line)]


def _options(flags: tuple[str, ...]) -> DumpOptions:
    max_bytes = int(flags[flags.index("--max-bytes") + 1]) if "--max-bytes" in flags else INT_MAX
    return DumpOptions(
        print_data_log="--print-data-log" in flags,
        deep_iteration="--deep-iteration" in flags,
        verify_index_only="--verify-index-only" in flags,
        index_sanity_check="--index-sanity-check" in flags,
        skip_record_metadata="--skip-record-metadata" in flags,
        max_bytes=max_bytes,
        offsets_decoder="--offsets-decoder" in flags,
        progress=False,
    )


@dataclass
class Ours:
    stdout: list[str]
    stderr: list[str]
    failure: DumpFailure | None


def ours(backend: ModuleType, files: list[Path], flags: tuple[str, ...]) -> Ours:
    out, err = io.StringIO(), io.StringIO()
    failure = None
    try:
        dump_files([str(f) for f in files], _options(flags), out=out, err=err, backend=backend)  # type: ignore[arg-type]
    except DumpFailure as exc:
        failure = exc
    return Ours(out.getvalue().splitlines(), err.getvalue().splitlines(), failure)


# --------------------------------------------------------------------------- the corpus


def _records(first: int, count: int, ts: int, salt: int) -> list[Record]:
    out: list[Record] = []
    for i in range(count):
        key = (None, b"", f"key-{salt}-{i}".encode(), b"\xed\xa0\x80k\xff")[i % 4]
        value = (
            f"välue {salt}/{i} ✓".encode(),
            None,
            b"",
            b"\xc3\x28 \xe2\x82 \xf0\x9f\x98",
            f"{{'n': {i}}}".encode() * (1 + i % 3),
        )[i % 5]
        headers: list[tuple[str, bytes | None]] = [
            [],
            [("trace-id", f"t{i}".encode())],
            [("héader", b"x"), ("null-value", None)],
        ][i % 3]
        out.append((first + i, ts + (-13 * i if i % 3 == 2 else 7 * i), key, value, headers))
    return out


def _control(marker: int, epoch: int, ts: int) -> Record:
    return (0, ts, struct.pack(">hh", 0, marker), struct.pack(">hi", 0, epoch), [])


def write_partition(backend: ModuleType, directory: Path) -> list[Path]:
    """Three segments rolled by size: every codec and timestamp type, transactions,
    a wrapping idempotent sequence, a delete horizon."""
    directory.mkdir(parents=True)
    batches: list[tuple[bytes, int]] = []  # (batch, log append time or -1)
    ts = T0
    for n in range(40):
        codec = n % 5
        data = backend.build_batch(
            _records(0, 1 + (n * 3) % 9, ts, n), compression=codec, timestamp_type=(n // 5) % 2
        )
        batches.append((data, ts + 50 if n % 7 == 3 else -1))
        ts += 100
    pid = 9000
    batches.append(
        (
            backend.build_batch(
                _records(0, 4, ts, 99), producer_id=pid, producer_epoch=3, base_sequence=INT_MAX - 1
            ),
            -1,
        )
    )
    for marker in (1, 0):
        batches.append(
            (
                backend.build_batch(
                    _records(0, 3, ts, 98),
                    compression=3,
                    producer_id=pid + 1,
                    producer_epoch=0,
                    base_sequence=marker * 3,
                    transactional=True,
                ),
                -1,
            )
        )
        batches.append(
            (
                backend.build_batch(
                    [_control(marker, 5 + marker, ts + 1)],
                    producer_id=pid + 1,
                    producer_epoch=0,
                    transactional=True,
                    control=True,
                ),
                -1,
            )
        )
    batches.append((backend.build_batch(_records(0, 2, ts, 97), delete_horizon_ms=ts + 10_000), -1))
    files: list[Path] = []
    segment = backend.Segment(str(directory), 0, index_interval_bytes=300)
    for data, append_time in batches:
        if segment.size > 0 and segment.size + len(data) > 3000:
            segment.close()
            files += _segment_files(segment)
            segment = backend.Segment(str(directory), segment.next_offset, index_interval_bytes=300)
        segment.append(data, partition_leader_epoch=2, log_append_time_ms=append_time)
    segment.close()
    return files + _segment_files(segment)


def _segment_files(segment: object) -> list[Path]:
    return [Path(segment.log_path), Path(segment.index_path), Path(segment.time_index_path)]  # type: ignore[attr-defined]


def _flexible_string(text: str) -> bytes:
    raw = text.encode()
    return bytes([len(raw) + 1]) + raw


def kraft_control_batches(backend: ModuleType) -> list[bytes]:
    """LeaderChange, SnapshotHeader, SnapshotFooter, KRaftVersion, KRaftVoters and an
    unknown control type (flexible message encodings, by hand)."""
    uuid = bytes(range(16))
    voters = b"".join(
        struct.pack(">i", v)
        + uuid
        + bytes([2])
        + _flexible_string("CONTROLLER")
        + _flexible_string(f'host"\n{v}')
        + struct.pack(">H", 9093)
        + b"\x00"
        + struct.pack(">hh", 0, 1)
        + b"\x00\x00"
        for v in (1, 2)
    )
    values = {
        2: struct.pack(">hi", 0, 1)
        + bytes([3])
        + struct.pack(">i", 1)
        + b"\x00"
        + struct.pack(">i", 2)
        + b"\x00"
        + bytes([2])
        + struct.pack(">i", 1)
        + b"\x00\x00",
        3: struct.pack(">hq", 0, 1234) + b"\x00",
        4: struct.pack(">h", 0) + b"\x00",
        5: struct.pack(">hh", 0, 1) + b"\x00",
        6: struct.pack(">h", 0) + bytes([3]) + voters + b"\x00",
        11: b"opaque",
    }
    return [
        backend.build_batch(
            [(1000 + n, T0 + n, struct.pack(">hh", 0, kind), value, [])], control=True
        )
        for n, (kind, value) in enumerate(values.items())
    ]


def write_gapped_partition(backend: ModuleType, directory: Path) -> list[Path]:
    """Base offset 1000, the replica path: offset gaps, KRaft control records."""
    directory.mkdir(parents=True)
    segment = backend.Segment(str(directory), 1000, index_interval_bytes=0)
    for batch in kraft_control_batches(backend):
        segment.append(batch, assign_offsets=False)
    for first in (1010, 1013, 1020, 1100):
        segment.append(
            backend.build_batch(_records(first, 3, T0 + first, first)), assign_offsets=False
        )
    segment.close()
    return _segment_files(segment)


def write_legacy(backend: ModuleType, java_batches: Any, directory: Path) -> list[Path]:
    files: list[Path] = []
    for case in java_batches.cases:
        if case["magic"] == 2:
            continue
        path = directory / f"java-{case['name']}-0" / "00000000000000000000.log"
        path.parent.mkdir(parents=True)
        path.write_bytes(java_batches.data(case))
        files.append(path)
    ours_dir = directory / "kafkacore-legacy-0"
    ours_dir.mkdir()
    data = b""
    offset = 0
    for magic in (0, 1):
        for codec in range(4):
            recs = [
                (offset + i, T0 + i, r[2], r[3], [])
                for i, r in enumerate(_records(0, 3, T0, codec))
            ]
            data += backend.build_legacy(recs, magic, codec, codec % 2)
            offset += 3
    path = ours_dir / "00000000000000000000.log"
    path.write_bytes(data)
    return [*files, path]


def write_damaged(backend: ModuleType, directory: Path, count: int) -> list[Path]:
    """``count`` small partitions whose indexes and logs are damaged (without making
    Kafka's tool throw)."""
    files: list[Path] = []
    for p in range(count):
        d = directory / f"damaged-{p}"
        d.mkdir(parents=True)
        segment = backend.Segment(str(d), 0, index_interval_bytes=0)
        for n in range(6):
            segment.append(
                backend.build_batch(_records(0, 2 + n % 3, T0 + 100 * n, n), compression=n % 5)
            )
        segment.close()
        log, index, time_index = _segment_files(segment)
        entries = bytearray(index.read_bytes())
        if p % 4 != 3:
            struct.pack_into(
                ">i", entries, 8 * (1 + p % 3) + 4, struct.unpack_from(">i", entries, 4)[0]
            )
        entries += bytes(8 * (p % 3))  # a zeroed, preallocated tail
        index.write_bytes(bytes(entries))
        times = bytearray(time_index.read_bytes())
        if p % 2 == 0 and len(times) >= 24:
            struct.pack_into(">q", times, 12, struct.unpack_from(">q", times, 0)[0] - 1)
        times += struct.pack(">qi", T0 + 99_999, 2)  # offset 2 is not a batch's last
        time_index.write_bytes(bytes(times))
        data = bytearray(log.read_bytes())
        if p % 3 == 0:
            data[70] ^= 0x20  # the first batch's CRC no longer matches
        if p % 5 == 1:
            data += data[:30]  # a partial batch at the end
        log.write_bytes(bytes(data))
        files += [log, index, time_index]
    empty = directory / "damaged-0" / "00000000000000000099.index"
    empty.write_bytes(b"")
    (directory / "damaged-0" / "00000000000000000099.log").write_bytes(b"")
    return [*files, empty]


def write_misc(backend: ModuleType, directory: Path) -> list[Path]:
    directory.mkdir(parents=True)
    txn = directory / "00000000000000000000.txnindex"
    txn.write_bytes(
        struct.pack(">hqqqq", 0, 7, 10, 20, 15)
        + struct.pack(">hqqqq", 0, 8, 30, 40, 35)
        + b"\0" * 5
    )

    def snapshot(entries: list[tuple[int, ...]], version: int = 1, bad_crc: bool = False) -> bytes:
        body = struct.pack(">i", len(entries)) + b"".join(
            struct.pack(">qhiqiqiq", *e) for e in entries
        )
        return struct.pack(">hI", version, backend.crc32c(body) ^ int(bad_crc)) + body

    snapshots = []
    for n, content in enumerate(
        [
            snapshot(
                [
                    (1, 0, 5, 10, 2, T0, 3, -1),
                    (2, 1, -1, -1, 0, T0 + 1, 0, 8),
                    (3, 0, 1, 20, 4, T0, 0, -1),
                ]
            ),
            snapshot([(1, 0, 5, 10, 2, T0, 3, -1)], bad_crc=True),
            snapshot([], version=2),
        ]
    ):
        path = directory / f"{n * 10:020d}.snapshot"
        path.write_bytes(content)
        snapshots.append(path)
    kraft = directory / "00000000000000001000-0000000002.checkpoint"
    kraft.write_bytes(b"".join(kraft_control_batches(backend)[1:3]))
    unknown = directory / "replication-offset-checkpoint.tmp"  # a checkpoint mid-write
    unknown.write_text("0\n1\n0 0\n")
    dotless = directory / "notes"
    dotless.write_text("x")
    return [txn, *snapshots, kraft, unknown, dotless]


def _corrupt_batch_size(log: Path, nth: int) -> None:
    """Set the size field of the ``nth`` batch (negative: from the end) to 7."""
    data = bytearray(log.read_bytes())
    positions = []
    position = 0
    while position < len(data):
        positions.append(position)
        position += struct.unpack_from(">i", data, position + 8)[0] + 12
    struct.pack_into(">i", data, positions[nth] + 8, 7)
    log.write_bytes(bytes(data))


@dataclass
class Corpus:
    files: list[Path]
    crashes: list[tuple[str, list[Path], tuple[str, ...]]]


@pytest.fixture(scope="module")
def corpus(java_batches: Any, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("dump-log-corpus")
    be = default_backend
    files = write_partition(be, root / "topic-0")
    files += write_gapped_partition(be, root / "topic-1")
    files += write_legacy(be, java_batches, root)
    files += write_damaged(be, root, 20)
    files += write_misc(be, root / "misc")
    # Paths as a user may type them: Java's File normalises them.
    files.append(Path(f"{files[0].parent}//./{files[0].name}"))

    crashes: list[tuple[str, list[Path], tuple[str, ...]]] = []
    bad_size = write_partition(be, root / "bad-size-0")
    _corrupt_batch_size(bad_size[0], 2)
    crashes.append(("corrupt batch size", [bad_size[0]], ("--print-data-log",)))
    late_bad_size = write_partition(be, root / "late-bad-size-0")
    _corrupt_batch_size(late_bad_size[0], -2)  # after the position the index sends to
    crashes.append(("time index over a corrupt log", [late_bad_size[2]], ()))
    bad_index = write_partition(be, root / "bad-index-0")
    index = bad_index[1]
    entries = bytearray(index.read_bytes())
    struct.pack_into(">i", entries, len(entries) - 8, -5)
    index.write_bytes(bytes(entries))
    crashes.append(("index sanity", [bad_index[0], index], ("--index-sanity-check",)))
    time_index = bad_index[2]
    time_index.write_bytes(time_index.read_bytes() + b"\x01")
    crashes.append(("time index sanity", [time_index], ("--index-sanity-check",)))
    return Corpus(files, crashes)


@pytest.fixture(scope="module")
def kafka_dumps(java: Any, corpus: Corpus) -> dict[tuple[str, ...], tuple[int, str, str]]:
    """Kafka's tool over the corpus with every option set, and over each crash case."""
    jobs = [
        (
            "org.apache.kafka.tools.DumpLogSegments",
            *flags,
            "--files",
            ",".join(map(str, corpus.files)),
        )
        for flags in OPTION_SETS
    ]
    jobs += [
        ("org.apache.kafka.tools.DumpLogSegments", *flags, "--files", ",".join(map(str, files)))
        for _, files, flags in corpus.crashes
    ]
    results = java.run_all(jobs)
    return {
        job[1:]: (r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8"))
        for job, r in zip(jobs, results, strict=True)
    }


@pytest.fixture(scope="module", params=["native", "pure"])
def dump_backend(request: pytest.FixtureRequest) -> ModuleType:
    return load_backend(request.param)


@pytest.mark.parametrize("flags", OPTION_SETS, ids=lambda f: " ".join(f) or "shallow")
def test_same_output_as_kafka(
    flags: tuple[str, ...],
    corpus: Corpus,
    kafka_dumps: dict[tuple[str, ...], tuple[int, str, str]],
    dump_backend: ModuleType,
) -> None:
    returncode, stdout, stderr = kafka_dumps[(*flags, "--files", ",".join(map(str, corpus.files)))]
    assert returncode == 0, stderr
    result = ours(dump_backend, corpus.files, flags)
    assert result.failure is None
    assert result.stdout == stdout.splitlines()
    assert result.stderr == _without_jvm_noise(stderr)
    # The corpus does exercise what it is for.
    if flags == ("--verify-index-only",):
        assert sum(line.startswith("Mismatches in :") for line in result.stderr) >= 14
        assert any(line.startswith("Found out of order timestamp in :") for line in result.stderr)
        assert any(line.startswith("The following indexed offsets") for line in result.stderr)
    if flags == ("--print-data-log",):
        assert any("isvalid: false" in line for line in result.stdout)
        assert any(" endTxnMarker: ABORT " in line for line in result.stdout)
        assert any(" KRaftVoters {" in line for line in result.stdout)
        assert any(" isValid: true crc: " in line for line in result.stdout)
        assert any(
            line.startswith("Found 30 invalid bytes at the end of") for line in result.stdout
        )
        assert any("Non-consecutive offsets in" in line for line in result.stderr)


def test_same_output_where_kafka_throws(
    corpus: Corpus,
    kafka_dumps: dict[tuple[str, ...], tuple[int, str, str]],
    dump_backend: ModuleType,
) -> None:
    for name, files, flags in corpus.crashes:
        returncode, stdout, stderr = kafka_dumps[(*flags, "--files", ",".join(map(str, files)))]
        assert returncode != 0, name
        result = ours(dump_backend, files, flags)
        assert result.failure is not None, name
        assert result.stdout == stdout.splitlines(), name
        thrown = _without_jvm_noise(stderr)[0]
        assert thrown.endswith(f".{result.failure.kind}: {result.failure.message}"), (name, thrown)


def test_command_line_matches_kafka(
    corpus: Corpus, kafka_dumps: dict[tuple[str, ...], tuple[int, str, str]]
) -> None:
    """The installed entry point, end to end: same bytes on stdout, same reports."""
    flags = ("--print-data-log",)
    files = ",".join(map(str, corpus.files))
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacore.cli", "dump-log", *flags, "--files", files],
        capture_output=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    returncode, stdout, stderr = kafka_dumps[(*flags, "--files", files)]
    assert proc.returncode == returncode == 0
    assert proc.stdout.decode("utf-8") == stdout
    assert proc.stderr.decode("utf-8").splitlines() == _without_jvm_noise(stderr)


# ------------------------------------------------------------- __consumer_offsets records

OFFSETS_OPTION_SETS: list[tuple[str, ...]] = [
    ("--offsets-decoder",),
    ("--offsets-decoder", "--skip-record-metadata"),
]


def _uuid(n: int) -> uuid.UUID:
    return uuid.UUID(bytes=bytes((n * 17 + i) % 256 for i in range(16)))


def _consumer_protocol(schema: Any, version: int, value: dict[str, Any]) -> bytes:
    return struct.pack(">h", version) + write_message(schema, value, version)


def _member(n: int, subscription: bytes, assignment: bytes, **extra: Any) -> dict[str, Any]:
    return {
        "memberId": f"consumer-{n}-5d1c",
        "groupInstanceId": extra.get("instance"),
        "clientId": f"client-{n}",
        "clientHost": f"/10.0.0.{n}",
        "rebalanceTimeout": 300_000,
        "sessionTimeout": 45_000,
        "subscription": subscription,
        "assignment": assignment,
    }


def offsets_records_corpus() -> list[tuple[int, dict[str, Any], int, dict[str, Any] | None]]:
    """Every record type of the group coordinator (0-23), every OffsetCommitValue and
    GroupMetadataValue version, consumer-protocol subscriptions and assignments of every
    version (and some Kafka's decoder leaves as bytes), tagged fields set and null,
    tombstones, strings that JSON must escape."""
    sub, asg = (
        offsets_records.CONSUMER_PROTOCOL_SUBSCRIPTION,
        offsets_records.CONSUMER_PROTOCOL_ASSIGNMENT,
    )
    owned = [{"topic": "orders", "partitions": [0, 2]}, {"topic": "payments", "partitions": []}]
    subscriptions = [
        _consumer_protocol(sub, 0, {"topics": ["orders", "pay\u00e9"], "userData": None}),
        _consumer_protocol(
            sub, 1, {"topics": ["orders"], "userData": b"\x00\x01", "ownedPartitions": owned}
        ),
        _consumer_protocol(sub, 2, {"topics": [], "userData": b"", "generationId": 7}),
        _consumer_protocol(sub, 3, {"topics": ["t"], "ownedPartitions": owned, "rackId": "rack-1"}),
        _consumer_protocol(
            sub, 4, {"topics": ["t"], "ownedPartitions": owned}
        ),  # read throws: bytes
        _consumer_protocol(sub, 5, {"topics": ["t"], "generationId": 3, "rackId": None}),
        b"",  # no version: left as bytes
        b"\x00\x00\x00\x00\x00\x05",  # truncated: left as bytes
    ]
    assignments = [
        _consumer_protocol(asg, 0, {"assignedPartitions": owned, "userData": None}),
        _consumer_protocol(asg, 3, {"assignedPartitions": [], "userData": b"\xff"}),
        _consumer_protocol(asg, 4, {"assignedPartitions": owned}),  # read throws: bytes
        _consumer_protocol(asg, 7, {"assignedPartitions": []}),
    ]
    records: list[tuple[int, dict[str, Any], int, dict[str, Any] | None]] = []
    commit_key = {"group": 'gr"oup\\1\n', "topic": "orders", "partition": 3}
    for version in range(5):
        records.append(
            (
                1,
                commit_key,
                version,
                {
                    "offset": 1000 + version,
                    "leaderEpoch": 4,
                    "metadata": "m\u00e9ta\u0001\u001f\t\u2028\U0001f600\x7f"
                    if version == 3
                    else "",
                    "commitTimestamp": T0 + version,
                    "expireTimestamp": T0 + 86_400_000,
                    "topicId": _uuid(version) if version == 4 else uuid.UUID(int=0),
                },
            )
        )
    records.append(
        (1, commit_key, 4, {"offset": 5, "leaderEpoch": -1, "metadata": "x", "commitTimestamp": T0})
    )
    records.append((1, commit_key, -1, None))
    records.append(
        (
            0,
            {"group": "legacy", "topic": "t", "partition": 0},
            0,
            {"offset": 9, "metadata": "old", "commitTimestamp": T0},
        )
    )
    for version in range(5):
        members = [
            _member(
                n,
                subscriptions[(version * 2 + n) % len(subscriptions)],
                assignments[(version + n) % len(assignments)],
                instance=f"instance-{n}" if n == 1 else None,
            )
            for n in range(3)
        ]
        records.append(
            (
                2,
                {"group": f"group-{version}"},
                version,
                {
                    "protocolType": "consumer",
                    "generation": version + 1,
                    "protocol": "range" if version % 2 else "cooperative-sticky",
                    "leader": members[0]["memberId"],
                    "currentStateTimestamp": T0,
                    "members": members,
                },
            )
        )
    # every subscription and assignment shape, version 3 as Kafka writes it
    records.append(
        (
            2,
            {"group": "all-shapes"},
            3,
            {
                "protocolType": "consumer",
                "generation": 1,
                "protocol": "range",
                "leader": "consumer-0-5d1c",
                "currentStateTimestamp": -1,
                "members": [
                    _member(
                        n, subscriptions[n % len(subscriptions)], assignments[n % len(assignments)]
                    )
                    for n in range(len(subscriptions))
                ],
            },
        )
    )
    records.append(
        (
            2,
            {"group": "connect-cluster"},
            3,
            {
                "protocolType": "connect",
                "generation": 2,
                "protocol": "sessioned",
                "leader": None,
                "currentStateTimestamp": T0,
                "members": [_member(0, subscriptions[0], assignments[0])],
            },
        )
    )
    records.append(
        (
            2,
            {"group": "empty"},
            3,
            {
                "protocolType": "",
                "generation": 0,
                "protocol": None,
                "leader": None,
                "currentStateTimestamp": T0,
                "members": [],
            },
        )
    )
    records.append((2, {"group": "gone"}, -1, None))
    gm = {"groupId": "kip848"}
    member = {"groupId": "kip848", "memberId": "m-1"}
    tps = [{"topicId": _uuid(1), "partitions": [0, 1, 5]}]
    tps_epochs = [
        {"topicId": _uuid(2), "partitions": [1], "assignmentEpochs": [3]},
        {"topicId": _uuid(3), "partitions": [], "assignmentEpochs": None},
    ]
    classic = {
        "sessionTimeoutMs": 45_000,
        "supportedProtocols": [{"name": "range", "metadata": subscriptions[3]}],
    }
    records += [
        (3, gm, 0, {"epoch": 12, "metadataHash": 0}),
        (3, gm, 0, {"epoch": 13, "metadataHash": -7_000_000_000}),
        (
            4,
            gm,
            0,
            {
                "topics": [
                    {
                        "topicId": _uuid(4),
                        "topicName": "orders",
                        "numPartitions": 2,
                        "partitionMetadata": [
                            {"partition": 0, "racks": ["r1", "r2"]},
                            {"partition": 1, "racks": []},
                        ],
                    }
                ]
            },
        ),
        (
            5,
            member,
            0,
            {
                "instanceId": None,
                "rackId": "r1",
                "clientId": "c",
                "clientHost": "/h",
                "subscribedTopicNames": ["a", "b"],
                "subscribedTopicRegex": None,
                "rebalanceTimeoutMs": 30_000,
                "serverAssignor": "uniform",
            },
        ),
        (
            5,
            member,
            0,
            {
                "instanceId": "i",
                "rackId": None,
                "clientId": "c",
                "clientHost": "/h",
                "subscribedTopicNames": [],
                "subscribedTopicRegex": "o.*",
                "serverAssignor": None,
                "classicMemberMetadata": classic,
            },
        ),
        (5, member, 0, {"clientId": "c", "clientHost": "/h", "classicMemberMetadata": None}),
        (6, gm, 0, {"assignmentEpoch": 5}),
        (6, gm, 0, {"assignmentEpoch": 5, "assignmentTimestamp": T0}),
        (7, member, 0, {"topicPartitions": tps}),
        (
            8,
            member,
            0,
            {
                "memberEpoch": 5,
                "previousMemberEpoch": 4,
                "state": 1,
                "assignedPartitions": tps_epochs,
                "partitionsPendingRevocation": tps,
            },
        ),
        (
            10,
            member,
            0,
            {
                "rackId": None,
                "clientId": "share",
                "clientHost": "/h",
                "subscribedTopicNames": ["s"],
            },
        ),
        (11, gm, 0, {"epoch": 1, "metadataHash": 99}),
        (12, gm, 0, {"assignmentEpoch": 2, "assignmentTimestamp": 0}),
        (13, member, 0, {"topicPartitions": tps}),
        (
            14,
            member,
            0,
            {"memberEpoch": 2, "previousMemberEpoch": 1, "state": -1, "assignedPartitions": tps},
        ),
        (
            15,
            gm,
            0,
            {
                "initializingTopics": [{"topicId": _uuid(5), "topicName": "x", "partitions": [0]}],
                "initializedTopics": [],
                "deletingTopics": [{"topicId": _uuid(6), "topicName": "y"}],
            },
        ),
        (
            16,
            {"groupId": "kip848", "regularExpression": "orders-.*"},
            0,
            {"topics": ["orders-1"], "version": 3, "timestamp": T0},
        ),
        (17, gm, 0, {"epoch": 1, "metadataHash": 2}),
        (
            17,
            gm,
            0,
            {
                "epoch": 1,
                "metadataHash": 2,
                "validatedTopologyEpoch": 4,
                "lastAssignmentConfigs": [{"key": "num.standby.replicas", "value": "1"}],
            },
        ),
        (17, gm, 0, {"epoch": 1, "metadataHash": 2, "lastAssignmentConfigs": None}),
        (
            19,
            member,
            0,
            {
                "instanceId": None,
                "rackId": None,
                "clientId": "c",
                "clientHost": "/h",
                "rebalanceTimeoutMs": 1,
                "topologyEpoch": 2,
                "processId": "p",
                "userEndpoint": {"host": "h", "port": 65535},
                "clientTags": [{"key": "k", "value": "v"}],
            },
        ),
        (
            19,
            member,
            0,
            {"clientId": "c", "clientHost": "/h", "processId": "p", "userEndpoint": None},
        ),
        (20, gm, 0, {"assignmentEpoch": 3, "assignmentTimestamp": 1}),
        (
            21,
            member,
            0,
            {
                "activeTasks": [{"subtopologyId": "0", "partitions": [0]}],
                "standbyTasks": [],
                "warmupTasks": [],
            },
        ),
        (
            22,
            member,
            0,
            {
                "memberEpoch": 1,
                "previousMemberEpoch": 0,
                "state": 0,
                "activeTasks": [
                    {"subtopologyId": "0", "partitions": [0, 1], "assignmentEpochs": [1, 1]}
                ],
                "standbyTasksPendingRevocation": [
                    {"subtopologyId": "1", "partitions": [2], "assignmentEpochs": None}
                ],
            },
        ),
        (
            23,
            gm,
            0,
            {
                "epoch": 1,
                "subtopologies": [
                    {
                        "subtopologyId": "0",
                        "sourceTopics": ["in"],
                        "sourceTopicRegex": [],
                        "stateChangelogTopics": [
                            {
                                "name": "cl",
                                "partitions": 0,
                                "replicationFactor": 3,
                                "topicConfigs": [{"key": "cleanup.policy", "value": "compact"}],
                            }
                        ],
                        "repartitionSinkTopics": ["rp"],
                        "repartitionSourceTopics": [],
                        "copartitionGroups": [
                            {
                                "sourceTopics": [0],
                                "sourceTopicRegex": [],
                                "repartitionSourceTopics": [1, 2],
                            }
                        ],
                    }
                ],
            },
        ),
        (23, gm, -1, None),
    ]
    return records


def typed_offsets_records() -> list[tuple[bytes, bytes | None]]:
    """The classic group's records through the typed encoders, as the coordinator writes
    them."""
    m = offsets_records.MemberMetadata(
        "consumer-1-ab",
        "client-1",
        "/10.0.0.1",
        45_000,
        b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff",
        b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff",
        rebalance_timeout=300_000,
        group_instance_id="static-1",
    )
    return [
        (
            offsets_records.offset_commit_key("g", "t", 0),
            offsets_records.offset_commit_value(42, 3, "meta", T0),
        ),
        (
            offsets_records.offset_commit_key("g", "t", 1),
            offsets_records.offset_commit_value(43, -1, "", T0, T0 + 1),
        ),
        (
            offsets_records.offset_commit_key("g", "t", 2),
            offsets_records.offset_commit_value(44, 1, "", T0, version=4, topic_id=_uuid(9)),
        ),
        (offsets_records.offset_commit_key("g", "t", 3), None),
        (
            offsets_records.group_metadata_key("g"),
            offsets_records.group_metadata_value("consumer", 3, "range", m.member_id, T0, [m]),
        ),
        (
            offsets_records.group_metadata_key("h"),
            offsets_records.group_metadata_value("", 0, None, None, T0),
        ),
    ]


def malformed_offsets_records() -> list[tuple[bytes, bytes | None]]:
    """Records Kafka's decoder reports instead of printing: unknown types, truncated
    keys and values, unknown versions, bad lengths; and odd but valid ones."""
    key = offsets_records.offset_commit_key("g", "t", 0)
    value = offsets_records.offset_commit_value(1, 2, "m", T0)
    flexible_key = struct.pack(">h", 3) + b"\x00\x01g"  # ConsumerGroupMetadataKey "g"
    return [
        (struct.pack(">h", 9), b"\x00\x00"),  # no type 9
        (struct.pack(">h", 99), None),
        (struct.pack(">h", -1), b""),
        (b"", value),  # no type at all
        (b"\x00", value),
        (key[:-2], value),  # truncated key
        (struct.pack(">hh", 1, -1) + b"\x00\x01t\x00\x00\x00\x00", value),  # null group
        (key, struct.pack(">h", 7)),  # no version 7
        (key, struct.pack(">h", -1)),
        (key, b"\x00"),  # no version
        (key, value[:-3]),  # truncated value
        (key, value[:14] + b"\x7f\xff" + value[16:]),  # metadata longer than the value
        (
            key,
            struct.pack(">hqi", 3, 1, 2) + b"\x00\x02\xc3\x28" + struct.pack(">q", T0),
        ),  # bad UTF-8
        (flexible_key, struct.pack(">hi", 0, 1) + b"\x02\x05\x02hi\x03\x00"),  # unknown tags
        (flexible_key, struct.pack(">hi", 0, 1) + b"\x01\x00\x08" + struct.pack(">q", 5) + b"\x00"),
        (key, value + b"\x00\x00\x00"),  # trailing bytes are ignored
        (key, struct.pack(">hqi", 4, 1, 2) + b"\x02m" + struct.pack(">q", T0) + b"\x01\x09\x01z"),
        (flexible_key, struct.pack(">hi", 0, 1) + b"\x01\x07\xff\xff\xff\xff\x7f"),  # size < 0
        (
            flexible_key,
            struct.pack(">hi", 0, 1) + b"\x01\x07\xff\xff\xff\xff\xff",
        ),  # varint too long
        (flexible_key, struct.pack(">hi", 0, 1) + b"\x01\x07\x09abc"),  # tag body short
        (
            struct.pack(">h", 4) + b"\x00\x01g",
            struct.pack(">h", 0) + b"\xff\xff\x03\x00",
        ),  # huge array
        (
            struct.pack(">h", 5) + b"\x00\x01g\x00\x01m",
            struct.pack(">h", 0)
            + b"\x00\x00\x00\x00\x00\xff\xff\xff\xff\x7f\x00\x00\x00\x00\x01\x00\x00",
        ),  # null clientId
        (
            struct.pack(">h", 2) + b"\x00\x01g",
            struct.pack(">h", 3)
            + b"\x00\x08consumer\x00\x00\x00\x01\xff\xff\xff\xff"
            + struct.pack(">qi", T0, -1),
        ),  # null members
    ]


def write_offsets_partition(
    backend: ModuleType, directory: Path
) -> tuple[list[Path], list[tuple[bytes, bytes | None]]]:
    """A ``__consumer_offsets`` partition: the corpus in batches of every codec, a
    transactional offset commit with its marker, the typed and malformed records."""
    directory.mkdir(parents=True)
    encoded = [offsets_records.encode_record(*r) for r in offsets_records_corpus()]
    everything = encoded + typed_offsets_records() + malformed_offsets_records()
    segment = backend.Segment(str(directory), 0, index_interval_bytes=500)
    for n in range(0, len(everything), 7):
        chunk = everything[n : n + 7]
        recs = [(i, T0 + n + i, k, v, []) for i, (k, v) in enumerate(chunk)]
        segment.append(
            backend.build_batch(recs, compression=(n // 7) % 5), partition_leader_epoch=1
        )
    pid = 7000
    segment.append(
        backend.build_batch(
            [(0, T0, *typed_offsets_records()[0], [])],
            producer_id=pid,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
        )
    )
    segment.append(
        backend.build_batch(
            [_control(1, 0, T0 + 1)],
            producer_id=pid,
            producer_epoch=0,
            transactional=True,
            control=True,
        )
    )
    segment.close()
    return _segment_files(segment), encoded


def write_offsets_crash(backend: ModuleType, directory: Path) -> Path:
    """A record without a key: Kafka's decoder throws."""
    directory.mkdir(parents=True)
    data = backend.build_batch(
        [(0, T0, *typed_offsets_records()[0], []), (1, T0, None, b"\x00\x03", [])]
    )
    path = directory / "00000000000000000000.log"
    path.write_bytes(data)
    return path


@dataclass
class OffsetsRun:
    files: list[Path]
    crash: Path
    ours_bytes: list[tuple[bytes, bytes | None]]
    typed: list[tuple[bytes, bytes | None]]
    groups: list[str]
    kafka_bytes: list[tuple[bytes, bytes | None]]
    kafka_partitions: list[int]
    dumps: dict[tuple[str, ...], tuple[int, str, str]]


GROUP_NAMES = [
    "my-group",
    "",
    "g",
    "polygenelubricants",
    "Aa",
    "BB",
    "gr\u00f6\u00dfe-\U0001f600",
    "x" * 300,
]


@pytest.fixture(scope="module")
def offsets_run(java: Any, tmp_path_factory: pytest.TempPathFactory) -> OffsetsRun:
    """Kafka's serde over the corpus and Kafka's DumpLogSegments --offsets-decoder over the
    segment kafkacore wrote, in one parallel batch of JVMs."""
    root = tmp_path_factory.mktemp("offsets")
    files, encoded = write_offsets_partition(default_backend, root / "__consumer_offsets-7")
    crash = write_offsets_crash(default_backend, root / "__consumer_offsets-8")
    typed = typed_offsets_records()
    cases = []
    for key, value in encoded + typed:
        record = offsets_records.decode_record(key, value)
        key_json, value_json = offsets_records.record_to_json(record)
        cases.append(
            f'{{"type":{record.type},"key":{key_json},"version":{record.version},'
            f'"value":{"null" if value_json is None else value_json}}}'
        )
    groups = ",".join(json.dumps(g) for g in GROUP_NAMES)
    cases_file = root / "cases.json"
    cases_file.write_text(
        f'{{"records":[{",".join(cases)}],"groups":[{groups}]}}', encoding="utf-8"
    )
    out_file = root / "kafka-records.txt"
    jobs = [("CoordinatorRecords", str(cases_file), str(out_file))]
    dump_jobs = [
        (DUMP, *flags, "--files", ",".join(map(str, files))) for flags in OFFSETS_OPTION_SETS
    ]
    dump_jobs.append((DUMP, "--offsets-decoder", "--files", str(crash)))
    results = java.run_all(jobs + dump_jobs)
    results[0].check()
    lines = out_file.read_text(encoding="utf-8").splitlines()
    kafka_bytes = [
        (bytes.fromhex(k), None if v == "-" else bytes.fromhex(v))
        for k, v in (line.split(" ") for line in lines[: len(cases)])
    ]
    return OffsetsRun(
        files,
        crash,
        encoded,
        typed,
        GROUP_NAMES,
        kafka_bytes,
        [int(line) for line in lines[len(cases) :]],
        {
            job[1:]: (r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8"))
            for job, r in zip(dump_jobs, results[1:], strict=True)
        },
    )


def test_offsets_records_encode_as_kafka_does(offsets_run: OffsetsRun) -> None:
    """kafkacore's encoder writes the bytes Kafka's GroupCoordinatorRecordSerde writes, for
    every record type, and the typed encoders too; groups map to Kafka's partitions."""
    ours_all = offsets_run.ours_bytes + offsets_run.typed
    assert len(offsets_run.kafka_bytes) == len(ours_all)
    for n, (ours_pair, kafka_pair) in enumerate(
        zip(ours_all, offsets_run.kafka_bytes, strict=True)
    ):
        assert ours_pair == kafka_pair, (n, offsets_records.decode_record(*ours_pair))
    assert offsets_run.kafka_partitions == [
        offsets_records.partition_for_group(g) for g in offsets_run.groups
    ]


@pytest.mark.parametrize("flags", OFFSETS_OPTION_SETS, ids=" ".join)
def test_offsets_decoder_same_output_as_kafka(
    flags: tuple[str, ...], offsets_run: OffsetsRun, dump_backend: ModuleType
) -> None:
    returncode, stdout, stderr = offsets_run.dumps[
        (*flags, "--files", ",".join(map(str, offsets_run.files)))
    ]
    assert returncode == 0, stderr
    result = ours(dump_backend, offsets_run.files, flags)
    assert result.failure is None
    assert result.stdout == stdout.splitlines()
    assert result.stderr == _without_jvm_noise(stderr)
    if flags == ("--offsets-decoder",):  # the corpus does exercise what it is for
        text = "\n".join(result.stdout)
        for expected in (
            '"subscription":{"topics":',
            '"assignment":{"assignedPartitions":',
            '"classicMemberMetadata":null',
            "payload: <DELETE>",
            "Unknown record type 9 at offset",
            "Error at offset",
            "Found an unknown record version 7 for 1 type",
            '"type":"23"',
            " endTxnMarker: COMMIT coordinatorEpoch: 0",
        ):
            assert expected in text, expected


def test_offsets_decoder_stops_where_kafka_does(
    offsets_run: OffsetsRun, dump_backend: ModuleType
) -> None:
    flags = ("--offsets-decoder",)
    returncode, stdout, stderr = offsets_run.dumps[(*flags, "--files", str(offsets_run.crash))]
    assert returncode != 0
    result = ours(dump_backend, [offsets_run.crash], flags)
    assert result.failure is not None
    assert result.stdout == stdout.splitlines()
    thrown = _without_jvm_noise(stderr)[0]
    assert thrown.endswith(f".{result.failure.kind}: {result.failure.message}"), thrown


def test_offsets_decoder_command_line(offsets_run: OffsetsRun) -> None:
    files = ",".join(map(str, offsets_run.files))
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacore.cli", "dump-log", "--offsets-decoder", "--files", files],
        capture_output=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    returncode, stdout, _ = offsets_run.dumps[("--offsets-decoder", "--files", files)]
    assert proc.returncode == returncode == 0
    assert proc.stdout.decode("utf-8") == stdout
