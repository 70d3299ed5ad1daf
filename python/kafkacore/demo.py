"""``python -m kafkacore.demo [DATA_DIR]`` — what ``make run`` shows today.

Writes a partition directory ``<DATA_DIR>/demo-0`` (an old one is removed first) the way
a broker would: about 2000 keyed records with headers, in producer-sized batches that
cycle through every codec (plus one transaction and its COMMIT marker), appended with
:class:`Segment` (offsets assigned, leader epoch stamped) and rolled by size into several
segments, each sealed. Then it lists the directory and prints the first segment's
``.log`` and ``.index`` with the dump tool (``kafkacore dump-log``), shortened.

The files are Apache Kafka's own format: ``kafka-dump-log.sh --files …`` prints the same.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from kafkacore.native import backend, backend_name
from kafkacore.tools import DumpOptions, dump_files

__all__ = ["DemoSummary", "main", "write_partition"]

TOPIC_PARTITION = "demo-0"
RECORDS = 2000
SEGMENT_BYTES = 32 * 1024  # small, to roll a few segments (Kafka's default: 1 GiB)
INDEX_INTERVAL_BYTES = 4096  # Kafka's default index.interval.bytes
PARTITION_LEADER_EPOCH = 0
PRODUCER_ID = 4000
SHOWN_BATCH_LINES = 10
CODECS = (0, 1, 2, 3, 4)  # none, gzip, snappy, lz4, zstd
_CONTROL_COMMIT_KEY = b"\x00\x00\x00\x01"  # version 0, type 1 (COMMIT)
_CONTROL_VALUE = b"\x00\x00\x00\x00\x00\x00"  # version 0, coordinator epoch 0


class DemoSummary:
    """What :func:`write_partition` wrote."""

    def __init__(self, directory: str, segments: list[str], records: int, batches: int) -> None:
        self.directory = directory
        self.segments = segments  # the .log paths, oldest first
        self.records = records
        self.batches = batches


def _producer_batches(start_ms: int) -> list[bytes]:
    """The batches a producer would send: sizes 1..40, keys, headers, every codec."""
    batches: list[bytes] = []
    written = 0
    n = 0
    while written < RECORDS:
        size = min(1 + (n * 7) % 40, RECORDS - written)
        records = []
        for i in range(size):
            seq = written + i
            headers: list[tuple[str, bytes | None]] = [("source", b"kafkacore.demo")]
            if seq % 3 == 0:
                headers.append(("trace-id", f"{seq:08x}".encode()))
            key = None if seq % 50 == 49 else f"user-{seq % 97}".encode()
            value = f'{{"event": {seq}, "kind": "click", "page": "/p/{seq % 13}"}}'.encode()
            records.append((i, start_ms + seq, key, value, headers))
        batches.append(backend.build_batch(records, compression=CODECS[n % len(CODECS)]))
        written += size
        n += 1
    return batches


def _transaction(timestamp: int) -> list[bytes]:
    """One transactional batch and the COMMIT marker that ends it."""
    data = backend.build_batch(
        [(0, timestamp, b"order-1", b'{"total": 42}', []), (1, timestamp, b"order-2", b"{}", [])],
        producer_id=PRODUCER_ID,
        producer_epoch=0,
        base_sequence=0,
        transactional=True,
    )
    marker = backend.build_batch(
        [(0, timestamp, _CONTROL_COMMIT_KEY, _CONTROL_VALUE, [])],
        producer_id=PRODUCER_ID,
        producer_epoch=0,
        transactional=True,
        control=True,
    )
    return [data, marker]


def write_partition(data_dir: str, *, now_ms: int | None = None) -> DemoSummary:
    """Write ``<data_dir>/demo-0`` afresh; roll a segment when the next batch would take
    the active one past ``SEGMENT_BYTES`` (Kafka's ``segment.bytes`` rule)."""
    directory = os.path.join(data_dir, TOPIC_PARTITION)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    start = now_ms if now_ms is not None else int(time.time() * 1000)
    batches = _producer_batches(start)
    batches[len(batches) // 2 : len(batches) // 2] = _transaction(start + RECORDS // 2)
    segment = backend.Segment(directory, 0, index_interval_bytes=INDEX_INTERVAL_BYTES)
    segments = [segment.log_path]
    records = 0
    try:
        for data in batches:
            if segment.size > 0 and segment.size + len(data) > SEGMENT_BYTES:
                segment.close()  # seal + flush: the segment is no longer active
                segment = backend.Segment(
                    directory, segment.next_offset, index_interval_bytes=INDEX_INTERVAL_BYTES
                )
                segments.append(segment.log_path)
            first, last, *_ = segment.append(data, partition_leader_epoch=PARTITION_LEADER_EPOCH)
            records += last - first + 1
    finally:
        segment.close()
    return DemoSummary(directory, segments, records, len(batches))


def _listing(directory: str) -> list[str]:
    names = sorted(os.listdir(directory))
    width = max(len(name) for name in names)
    return [
        f"  {name:<{width}}  {os.path.getsize(os.path.join(directory, name)):>8} bytes"
        for name in names
    ]


def _shortened_dump(paths: Sequence[str]) -> list[str]:
    """The dump of ``paths``, each file's lines cut after the first ``SHOWN_BATCH_LINES``."""
    out = io.StringIO()
    dump_files(paths, DumpOptions(progress=False), out=out, err=out)
    sections: list[list[str]] = []
    for line in out.getvalue().splitlines():
        if line.startswith("Dumping ") or not sections:
            sections.append([])
        sections[-1].append(line)
    lines: list[str] = []
    for section in sections:
        head = 2 if len(section) > 1 and section[1].startswith("Log starting offset:") else 1
        body = section[head:]
        lines += section[:head] + body[:SHOWN_BATCH_LINES]
        if len(body) > SHOWN_BATCH_LINES:
            lines.append("...")
    return lines


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = out if out is not None else sys.stdout
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.stderr.write("usage: python -m kafkacore.demo [DATA_DIR]   (default: ./data)\n")
        return 1
    data_dir = args[0] if args else "data"
    began = time.perf_counter()
    summary = write_partition(data_dir)
    elapsed = time.perf_counter() - began
    write = out.write
    write(
        f"kafkacore demo ({backend_name} backend): wrote {summary.records} records in "
        f"{summary.batches} batches to {len(summary.segments)} segments in {elapsed:.2f} s\n\n"
    )
    write(f"{summary.directory}/\n")
    write("\n".join(_listing(summary.directory)) + "\n\n")
    first_log = summary.segments[0]
    first_index = first_log[: -len(".log")] + ".index"
    write(f"$ kafkacore dump-log --files {first_log},{first_index}\n")
    write("\n".join(_shortened_dump([first_log, first_index])) + "\n\n")
    write(
        "Apache Kafka's own tool reads these files as they are:\n"
        f"  kafka-dump-log.sh --files {first_log} --print-data-log\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
