"""After clients wrote to it and it stopped cleanly (SIGTERM), every .log/.index/.timeindex
of the broker's data directory is read by Kafka's own DumpLogSegments without error."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from compat.conftest import KafkaTools, start_broker

pytestmark = pytest.mark.timeout(120)

DUMP = "org.apache.kafka.tools.DumpLogSegments"


def test_dump_log_segments_reads_every_file_after_clean_stop(
    tmp_path: Path, kafka_tools: KafkaTools, kcat: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    broker = start_broker(data, "log.index.interval.bytes=512")
    try:
        for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
            lines = "".join(f"k{i}:{codec}-{i}-{'p' * 100}\n" for i in range(300))
            subprocess.run(
                [
                    kcat,
                    "-b",
                    broker.bootstrap,
                    "-P",
                    "-t",
                    f"dump-{codec}",
                    "-K:",
                    "-z",
                    codec,
                    "-X",
                    "batch.num.messages=20",
                ],
                input=lines,
                text=True,
                capture_output=True,
                timeout=60,
                check=True,
            )
    finally:
        assert broker.stop() == 0, broker.log_text()[-3000:]
    assert (data / ".kafka_cleanshutdown").exists()
    files = sorted(p for p in data.glob("*/*") if p.suffix in (".log", ".index", ".timeindex"))
    assert len([p for p in files if p.suffix == ".log"]) == 5
    assert all(p.stat().st_size > 0 for p in files if p.suffix == ".index"), "index entries"
    result = kafka_tools.run(DUMP, "--deep-iteration", "--files", ",".join(map(str, files)))
    result.check()
    out = result.stdout
    for p in files:
        assert f"Dumping {p}" in out
    for bad in ("Exception", "mismatch", "corrupt", "Found timestamp mismatch"):
        assert bad not in out + result.stderr, bad
    assert out.count("| offset:") >= 1500
