"""``python -m kafkacore.demo DATA_DIR`` (what ``make run`` runs today)."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from kafkacore import demo
from kafkacore.native import backend, backend_name


def test_demo_writes_a_partition_and_dumps_its_first_segment(tmp_path: Path) -> None:
    partition = tmp_path / "demo-0"
    partition.mkdir()
    (partition / "stale.log").write_bytes(b"left from an older run")
    out = io.StringIO()
    assert demo.main([str(tmp_path)], out=out) == 0

    names = sorted(p.name for p in partition.iterdir())
    assert "stale.log" not in names
    logs = [n for n in names if n.endswith(".log")]
    assert len(logs) >= 3
    for log in logs:
        stem = log.removesuffix(".log")
        assert re.fullmatch(r"\d{20}", stem)
        assert {f"{stem}.index", f"{stem}.timeindex"} <= set(names)
        assert (partition / log).stat().st_size <= demo.SEGMENT_BYTES
    # Segments follow each other: every base offset is the previous segment's next offset.
    bases = [int(n.removesuffix(".log")) for n in logs]
    assert bases[0] == 0 and bases == sorted(bases)
    records = 0
    for n, base in enumerate(bases):
        segment = backend.Segment(str(partition), base)
        try:
            assert segment.next_offset > base
            records += segment.next_offset - base
            if n + 1 < len(bases):
                assert segment.next_offset == bases[n + 1]
            assert segment.offset_index()  # sealed with index entries
        finally:
            segment.close()
    assert records == demo.RECORDS + 3  # and one transaction: two records and its marker

    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0].startswith(f"kafkacore demo ({backend_name} backend): wrote {records} records")
    for name in names:  # the listing, with sizes
        size = (partition / name).stat().st_size
        assert re.search(rf"^  {re.escape(name)}\s+{size} bytes$", text, re.MULTILINE)
    first_log = partition / logs[0]
    first_index = partition / logs[0].replace(".log", ".index")
    start = lines.index(f"Dumping {first_log}")
    assert lines[start - 1] == f"$ kafkacore dump-log --files {first_log},{first_index}"
    assert lines[start + 1] == "Log starting offset: 0"
    batch_lines = lines[start + 2 : start + 2 + demo.SHOWN_BATCH_LINES]
    assert all(line.startswith("baseOffset: ") for line in batch_lines)
    assert batch_lines[0].startswith("baseOffset: 0 lastOffset: 0 count: 1 ")
    assert "compresscodec: zstd" in "\n".join(batch_lines)
    assert lines[start + 2 + demo.SHOWN_BATCH_LINES] == "..."
    assert f"Dumping {first_index}" in lines
    index_lines = lines[lines.index(f"Dumping {first_index}") + 1 :]
    assert re.fullmatch(r"offset: \d+ position: \d+", index_lines[0])


def test_demo_as_a_module(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacore.demo", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Dumping " in proc.stdout
    assert len(list((tmp_path / "data" / "demo-0").glob("*.log"))) >= 3


def test_demo_rejects_options() -> None:
    assert demo.main(["--help"], out=io.StringIO()) == 1
