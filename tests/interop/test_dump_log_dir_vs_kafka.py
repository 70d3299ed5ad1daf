"""A whole log directory written by ``kafkacore.log.Log``, dumped by Apache Kafka's own
``DumpLogSegments`` and by ``kafkacore dump-log``: the same output, line for line.

The directory is what a broker's ``log.dirs`` entry holds after a clean shutdown:
``meta.properties`` and the offset checkpoints at its root, and three partitions, each
with its ``partition.metadata`` and ``leader-epoch-checkpoint``:

* ``orders-0``: a leader's log over three leader epochs, every codec, an idempotent
  producer and a committed transaction, rolled by size into several segments;
* ``__consumer_offsets-0``: the group coordinator's records (offset commits, group
  metadata, tombstones; :mod:`kafkacore.tools.offsets_records`) with the offset gaps a
  compacted log has, appended as a replica would, several segments;
* ``compacted-0``: keyed records with offset gaps and a delete horizon, as the cleaner
  leaves them.

Kafka's tool reads every ``.log``, ``.index`` and ``.timeindex`` of the directory in one
JVM (and the offsets partition once more with ``--offsets-decoder``, in parallel): it must
report no index or timestamp problem, list exactly the batches and offsets kafkacore
appended, and print what kafkacore's dump prints. kafkacore's dump of the checkpoint files
(which Kafka's tool ignores) must show the offsets and epochs the logs hold.
"""

from __future__ import annotations

import bisect
import io
import itertools
import re
import struct
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.log import Log
from kafkacore.log.checkpoints import MetaProperties, OffsetCheckpointFile, uuid_to_base64
from kafkacore.log.files import TopicPartition
from kafkacore.log.log import AppendOrigin
from kafkacore.native import backend as default_backend
from kafkacore.native import load_backend
from kafkacore.tools import offsets_records as orec
from kafkacore.tools.dump_log import DumpOptions, dump_files

pytestmark = pytest.mark.interop

T0 = 1_700_000_000_000
DUMP = "org.apache.kafka.tools.DumpLogSegments"
SEGMENT_FILE = re.compile(r"^\d{20}\.(log|index|timeindex)$")
BATCH = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) count: (\d+) ")
RECORD = re.compile(r"^\| offset: (\d+) ")
_JVM_NOISE = re.compile(
    r"^(SLF4J[(:]|OpenJDK 64-Bit Server VM warning|\[[^\]]*\] (WARN|ERROR|INFO) )"
)


def _records(first: int, count: int, ts: int, tag: str) -> list[tuple[Any, ...]]:
    return [
        (first + i, ts + i, f"{tag}-key-{i % 5}".encode(), f"{tag} välue {i}".encode(), [])
        for i in range(count)
    ]


@dataclass
class LogDir:
    root: Path
    offsets: dict[str, list[int]]  # partition dir name -> every offset appended
    batches: dict[str, list[tuple[int, int]]]  # partition dir name -> (base, last) per batch
    logs: dict[str, Log]  # closed

    def segment_files(self, partition: str | None = None) -> list[Path]:
        dirs = [self.root / partition] if partition else sorted(self.root.glob("*-[0-9]*"))
        return [f for d in dirs for f in sorted(d.iterdir()) if SEGMENT_FILE.match(f.name)]


def _write_orders(root: Path, be: ModuleType) -> tuple[Log, list[tuple[int, int]]]:
    log = Log(
        root / "orders-0",
        LogConfig({"internal.segment.bytes": 2000, "index.interval.bytes": 300}),
        topic_id=uuid.UUID(int=0xC0FFEE),
        backend=be,
    )
    batches = []
    ts = T0
    for n in range(36):
        epoch = n // 12  # three leader epochs
        data = be.build_batch(
            _records(0, 1 + n % 7, ts, f"o{n}"), compression=n % 5, timestamp_type=(n // 5) % 2
        )
        info = log.append_as_leader(data, leader_epoch=epoch)
        batches.append((info.first_offset, info.last_offset))
        ts += 250
    pid = 4242
    info = log.append_as_leader(
        be.build_batch(
            _records(0, 3, ts, "idem"), producer_id=pid, producer_epoch=0, base_sequence=0
        ),
        leader_epoch=2,
    )
    batches.append((info.first_offset, info.last_offset))
    info = log.append_as_leader(
        be.build_batch(
            _records(0, 2, ts, "txn"),
            producer_id=pid + 1,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
        ),
        leader_epoch=2,
    )
    batches.append((info.first_offset, info.last_offset))
    marker = (0, ts + 1, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 2), [])
    info = log.append_as_leader(
        be.build_batch(
            [marker], producer_id=pid + 1, producer_epoch=0, transactional=True, control=True
        ),
        leader_epoch=2,
        origin=AppendOrigin.COORDINATOR,
    )
    batches.append((info.first_offset, info.last_offset))
    return log, batches


def _write_offsets(root: Path, be: ModuleType) -> tuple[Log, list[tuple[int, int]]]:
    """The coordinator's records, as a replica copies a compacted ``__consumer_offsets``
    partition: offsets kept, with gaps where older commits were cleaned away."""
    log = Log(
        root / "__consumer_offsets-0",
        LogConfig({"cleanup.policy": "compact", "internal.segment.bytes": 3000}),
        topic_id=uuid.UUID(int=0x0FF5E7),
        backend=be,
    )
    member = orec.MemberMetadata(
        "consumer-1-7f3a",
        "consumer-1",
        "/10.1.2.3",
        45_000,
        struct.pack(">hi", 0, 1) + struct.pack(">h", 6) + b"orders" + struct.pack(">i", -1),
        struct.pack(">hi", 0, 1)
        + struct.pack(">h", 6)
        + b"orders"
        + struct.pack(">iii", 2, 0, 1)
        + struct.pack(">i", -1),
        300_000,
    )
    batches = []
    offset = 0
    for n in range(40):
        group = f"group-{n % 4}"
        if n % 5 == 4:
            records = [
                (
                    0,
                    T0 + n,
                    orec.group_metadata_key(group),
                    orec.group_metadata_value(
                        "consumer", n, "range", member.member_id, T0 + n, [member]
                    ),
                    [],
                )
            ]
        else:
            records = [
                (
                    i,
                    T0 + n,
                    orec.offset_commit_key(group, "orders", p),
                    None
                    if (n + p) % 9 == 0
                    else orec.offset_commit_value(100 * n + p, n // 10, "", T0 + n),
                    [],
                )
                for i, p in enumerate(range(n % 3 + 1))
            ]
        offset += 1 + n % 4  # the offsets the cleaner removed
        recs = [(offset + i, ts, k, v, h) for i, (_, ts, k, v, h) in enumerate(records)]
        data = be.build_batch(recs, compression=(n % 2) * 4, partition_leader_epoch=n // 10)
        info = log.append_as_follower(data)
        batches.append((info.first_offset, info.last_offset))
        offset += len(recs)
    return log, batches


def _write_compacted(root: Path, be: ModuleType) -> tuple[Log, list[tuple[int, int]]]:
    """Batches as the cleaner leaves them: records removed from inside batches (offset
    gaps within and between batches), a batch with a delete horizon."""
    log = Log(
        root / "compacted-0",
        LogConfig({"cleanup.policy": "compact", "internal.segment.bytes": 2500}),
        topic_id=uuid.UUID(int=0xC0C0A),
        backend=be,
    )
    batches = []
    base = 0
    for n in range(30):
        kept = [base + i for i in range(10) if (i * 7 + n) % 3 != 0]
        recs = [(o, T0 + o, f"k{o % 13}".encode(), b"v" * (o % 40), []) for o in kept]
        data = be.build_batch(
            recs,
            base_offset=base,
            last_offset_delta=9,
            compression=n % 5,
            partition_leader_epoch=5,
            delete_horizon_ms=T0 + 86_400_000 if n == 29 else -1,
        )
        info = log.append_as_follower(data)
        batches.append((info.first_offset, info.last_offset))
        base += 10 + n % 4
    return log, batches


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> LogDir:
    root = tmp_path_factory.mktemp("log-dir")
    be = default_backend
    MetaProperties(1, "kafkacore-cluster", 1, uuid.UUID(int=0xD1)).write(
        str(root / "meta.properties")
    )
    logs, batches = {}, {}
    for write in (_write_orders, _write_offsets, _write_compacted):
        log, appended = write(root, be)
        name = Path(log.dir).name
        logs[name], batches[name] = log, appended
    # What Kafka's LogManager writes at a clean shutdown, after closing the logs.
    for log in logs.values():
        log.close()
    tps = {
        TopicPartition(log.topic_partition.topic, log.topic_partition.partition): log
        for log in logs.values()
    }
    OffsetCheckpointFile(str(root / "recovery-point-offset-checkpoint")).write(
        {tp: log.recovery_point for tp, log in tps.items()}
    )
    OffsetCheckpointFile(str(root / "log-start-offset-checkpoint")).write(
        {tp: log.log_start_offset for tp, log in tps.items()}
    )
    offsets = {}
    for name in logs:
        data = b"".join(f.read_bytes() for f in sorted((root / name).glob("*.log")))
        offsets[name] = [r[0] for _, h in _walk(be, data) for r in be.batch_records(data, h)]
    return LogDir(root, offsets, batches, logs)


def _walk(be: ModuleType, data: bytes) -> list[tuple[int, int]]:
    out, position = [], 0
    while position < len(data):
        header = be.batch_header(data, position)
        out.append((header[0], position))
        position += header[1] + 12
    return out


@pytest.fixture(scope="module")
def kafka_dir_dumps(java: Any, log_dir: LogDir) -> dict[str, tuple[int, str, str]]:
    every = ",".join(map(str, log_dir.segment_files()))
    offsets = ",".join(
        str(f) for f in log_dir.segment_files("__consumer_offsets-0") if f.suffix == ".log"
    )
    jobs = {
        "print-data-log": (DUMP, "--print-data-log", "--files", every),
        "offsets-decoder": (DUMP, "--offsets-decoder", "--files", offsets),
    }
    results = java.run_all(list(jobs.values()))
    return {
        name: (r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8"))
        for name, r in zip(jobs, results, strict=True)
    }


def _ours(be: ModuleType, files: list[Path], **options: bool) -> tuple[list[str], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    dump_files(
        [str(f) for f in files],
        DumpOptions(progress=False, **options),
        out=out,
        err=err,
        backend=be,
    )  # type: ignore[arg-type]
    return out.getvalue().splitlines(), err.getvalue().splitlines()


def _kafka_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not _JVM_NOISE.match(line)]


def test_the_directory_has_what_it_is_for(log_dir: LogDir) -> None:
    for name in ("orders-0", "__consumer_offsets-0", "compacted-0"):
        assert len([f for f in log_dir.segment_files(name) if f.suffix == ".log"]) >= 3, name
        assert (log_dir.root / name / "leader-epoch-checkpoint").is_file()
        assert (log_dir.root / name / "partition.metadata").is_file()
    gaps = [b - a for a, b in itertools.pairwise(log_dir.offsets["compacted-0"]) if b - a > 1]
    assert gaps


def test_kafka_reads_every_file_without_error_and_the_same_offsets(
    log_dir: LogDir, kafka_dir_dumps: dict[str, tuple[int, str, str]]
) -> None:
    returncode, stdout, stderr = kafka_dir_dumps["print-data-log"]
    assert returncode == 0, stderr
    problems = [
        line
        for line in _kafka_lines(stderr)
        if not line.startswith(("Non-consecutive offsets in ", "  "))
    ]
    assert problems == []
    # Kafka reports every offset gap: where a segment starts (its walk starts from -1)
    # and, in the compacted logs only, the offsets the cleaner removed.
    gaps: dict[str, set[tuple[int, int]]] = {}
    path = Path()
    for line in _kafka_lines(stderr):
        if line.startswith("Non-consecutive offsets in "):
            path = Path(line.removeprefix("Non-consecutive offsets in "))
        else:
            previous, _, following = line.strip().partition(" is followed by ")
            gaps.setdefault(path.parent.name, set()).add((int(previous), int(following)))
    for name, offsets in log_dir.offsets.items():
        bases = {int(f.stem) for f in log_dir.segment_files(name) if f.suffix == ".log"}
        first_offsets = {offsets[bisect.bisect_left(offsets, base)] for base in bases}
        removed = {(a, b) for a, b in itertools.pairwise(offsets) if b != a + 1} - {
            (a, b) for a, b in itertools.pairwise(offsets) if b in first_offsets
        }
        assert gaps.get(name, set()) == {(-1, o) for o in first_offsets if o} | removed, name
        assert bool(removed) == (name != "orders-0"), name
    per_dir: dict[str, list[tuple[int, int]]] = {}
    records: dict[str, list[int]] = {}
    current = ""
    for line in stdout.splitlines():
        if line.startswith("Dumping "):
            current = Path(line.removeprefix("Dumping ")).parent.name
            is_log = line.endswith(".log")
        elif (m := BATCH.match(line)) and is_log:
            per_dir.setdefault(current, []).append((int(m[1]), int(m[2])))
        elif m := RECORD.match(line):
            records.setdefault(current, []).append(int(m[1]))
        assert "isvalid: false" not in line
    assert per_dir == log_dir.batches
    assert records == log_dir.offsets


@pytest.mark.parametrize("backend_name", ["native", "pure"])
def test_same_output_as_kafka_over_the_directory(
    backend_name: str, log_dir: LogDir, kafka_dir_dumps: dict[str, tuple[int, str, str]]
) -> None:
    be = load_backend(backend_name)
    _, stdout, stderr = kafka_dir_dumps["print-data-log"]
    out, err = _ours(be, log_dir.segment_files(), print_data_log=True)
    assert out == stdout.splitlines()
    assert err == _kafka_lines(stderr)
    _, stdout, stderr = kafka_dir_dumps["offsets-decoder"]
    files = [f for f in log_dir.segment_files("__consumer_offsets-0") if f.suffix == ".log"]
    out, err = _ours(be, files, offsets_decoder=True)
    assert out == stdout.splitlines()
    assert err == _kafka_lines(stderr)
    assert sum("payload: <DELETE>" in line for line in out) > 0
    assert sum('"subscription":{"topics":["orders"]' in line for line in out) > 0


def test_checkpoint_files_show_what_the_logs_hold(log_dir: LogDir) -> None:
    root = log_dir.root
    files = [root / "meta.properties", root / "recovery-point-offset-checkpoint"]
    for name in log_dir.logs:
        files += [root / name / "leader-epoch-checkpoint", root / name / "partition.metadata"]
    out, err = _ours(default_backend, files)
    assert err == []
    text = "\n".join(out)
    assert "version: 1 cluster.id: kafkacore-cluster node.id: 1 directory.id: " in text
    for name, log in log_dir.logs.items():
        tp = log.topic_partition
        assert f"topic: {tp.topic} partition: {tp.partition} offset: {log.log_end_offset}" in text
        assert f"version: 0 topicId: {uuid_to_base64(log.topic_id)}" in text  # type: ignore[arg-type]
        epochs = log.leader_epoch_cache.entries()
        block = out[out.index(f"Dumping {root / name / 'leader-epoch-checkpoint'}") + 1 :][
            : len(epochs) + 1
        ]
        assert block == [f"Checkpoint version: 0, entries: {len(epochs)}"] + [
            f"epoch: {e.epoch} startOffset: {e.start_offset}" for e in epochs
        ]
    orders_epochs = log_dir.logs["orders-0"].leader_epoch_cache.entries()
    assert [e.epoch for e in orders_epochs] == [0, 1, 2]
