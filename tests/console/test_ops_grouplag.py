"""The lag-in-time computation over a real log (console/grouplag.py's
first_timestamp_in_log): the first data record at or after an offset, inside a
compressed batch, past a transaction marker, bounded by the high watermark; its
timestamps checked against what ``kafkacore dump-log`` prints for the segment."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kafkacore.console.grouplag import first_timestamp_in_log
from kafkacore.log import Log
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.record import Compression, build_batch


def _log(tmp_path: Path) -> Log:
    directory = tmp_path / "t-0"
    log = Log(directory, producer_state=ProducerStateManager(str(directory), topic_partition="t-0"))
    first = [(0, 1000, b"a", b"1", []), (1, 1001, b"b", b"2", []), (2, 1002, b"c", b"3", [])]
    log.append_as_leader(build_batch(first, compression=Compression.GZIP), 0)
    log.append_as_leader(
        build_batch([(0, 2000, b"d", b"4", []), (1, 2001, b"e", b"5", [])],
                    producer_id=7, producer_epoch=0, base_sequence=0, transactional=True),
        0,
    )  # fmt: skip
    log.append_txn_marker(7, 0, 0, True, 0, timestamp_ms=3000)
    log.append_as_leader(build_batch([(0, 4000, b"f", b"6", [])]), 0)
    return log


def _dumped_timestamps(segment: Path) -> dict[int, int]:
    out = subprocess.run(
        [sys.executable, "-m", "kafkacore.cli", "dump-log", "--files", str(segment),
         "--print-data-log"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    found = re.findall(r"\| offset: (\d+) (?:CreateTime|LogAppendTime): (\d+)", out)
    return {int(o): int(t) for o, t in found}


def test_first_unconsumed_timestamp(tmp_path: Path) -> None:
    log = _log(tmp_path)
    try:
        assert log.log_end_offset == 7
        assert first_timestamp_in_log(log, 1, 7) == 1001  # inside the gzip batch
        assert first_timestamp_in_log(log, 3, 7) == 2000
        assert first_timestamp_in_log(log, 5, 7) == 4000  # the COMMIT marker is skipped
        assert first_timestamp_in_log(log, 5, 6) is None  # only the marker below the bound
        assert first_timestamp_in_log(log, 7, 7) is None  # caught up
        segment = next((tmp_path / "t-0").glob("*.log"))
        log.flush()
        dumped = _dumped_timestamps(segment)
        for offset in (1, 3, 6):
            assert first_timestamp_in_log(log, offset, 7) == dumped[offset]
    finally:
        log.close()
