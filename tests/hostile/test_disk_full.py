"""A full disk under a running broker (a real one, a small tmpfs as one of its two log
directories), as Kafka's ``LogDirFailureChannel`` handles it:

* the append that meets ENOSPC is answered KAFKA_STORAGE_ERROR (56) and the directory
  goes offline: its partitions answer 56 to Produce and Fetch, DescribeLogDirs reports
  it with 56, the other directory keeps being served;
* nothing already written is damaged: ``kafkacore dump-log --deep-iteration`` and Kafka's
  own ``DumpLogSegments`` read every acknowledged batch of the offline directory whole;
* an offline directory stays offline until a restart (Kafka's rule); after the space
  returns and a restart, every acknowledged record is there and the directory is online.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hostile.common import batch, frame, read_response
from kafkacore.client import Client, KafkaError
from kafkacore.protocol import ErrorCode
from support import kafka_jars
from support.brokers import Broker
from support.raw_client import make_request
from support.tmpfs import fill, tmpfs

STORAGE_ERROR = int(ErrorCode.KAFKA_STORAGE_ERROR)
assert STORAGE_ERROR == 56


class Disk:
    """The module's broker on ``normal`` and ``small`` (a tmpfs), and what it acked."""

    def __init__(self, root: Path, small: Path) -> None:
        self.normal = root / "normal"
        self.small = small
        self.broker = Broker(
            self.normal, [f"log.dirs={self.normal},{small}", "log.segment.bytes=1048576"]
        )
        self.acked: dict[int, int] = {}
        self.small_partition = -1
        self.copies = root / "copies"


@pytest.fixture(scope="module")
def disk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Disk]:
    root = tmp_path_factory.mktemp("diskfull")
    with tmpfs(root / "small", "8m") as small:
        d = Disk(root, small)
        try:
            yield d
        finally:
            if d.broker.running:
                d.broker.stop(check=False)


@pytest.fixture(scope="module")
def kafka_libs() -> Path:
    """Kafka's jars, for its DumpLogSegments."""
    return kafka_jars.kafka_libs()


def _log_dirs(broker: Broker) -> dict[str, int]:
    """DescribeLogDirs: error code per log directory."""
    with socket.create_connection(("localhost", broker.port), timeout=10) as sock:
        sock.sendall(frame("DescribeLogDirs", 4, 3, make_request("DescribeLogDirs", topics=None)))
        _, response = read_response(sock, "DescribeLogDirs", 4)
    return {r.log_dir: int(r.error_code) for r in response.results}


def _count_records(client: Client, partition: int) -> int:
    from kafkacore.native import load_backend

    backend = load_backend("native")
    offset, count = 0, 0
    while True:
        got = client.fetch("t", partition, offset, max_bytes=4 << 20)
        data = got.records
        if not data:
            return count
        pos = 0
        while pos + 12 <= len(data):
            size = int.from_bytes(data[pos + 8 : pos + 12], "big") + 12
            if pos + size > len(data):
                break
            backend.validate_batch(data, pos)
            records = backend.batch_records(data, pos)
            count += len(records)
            offset = records[-1][0] + 1
            pos += size


def test_a_full_log_dir_answers_56_goes_offline_and_the_other_is_served(disk: Disk) -> None:
    broker = disk.broker.start()
    with Client(broker.bootstrap, timeout_s=10) as client:
        client.create_topic("t", 2)
        small = [p for p in (0, 1) if (disk.small / f"t-{p}").is_dir()]
        assert len(small) == 1, "one partition in each directory"
        disk.small_partition = sp = small[0]
        other = 1 - sp
        records = batch(16, 1000)
        disk.acked = {0: 0, 1: 0}
        for _ in range(40):  # 640 kB in each
            for p in (0, 1):
                client.produce("t", p, records)
                disk.acked[p] += 16
        fill(disk.small)
        codes = []
        for _ in range(200):
            try:
                client.produce("t", sp, records)
            except KafkaError as exc:
                codes.append(exc.code)
                break
            disk.acked[sp] += 16
        assert codes == [STORAGE_ERROR]
        # offline now: the partition answers 56 to Produce and Fetch, even for what fits
        with pytest.raises(KafkaError) as produce_error:
            client.produce("t", sp, batch(1, 1))
        assert produce_error.value.code == STORAGE_ERROR
        with pytest.raises(KafkaError) as fetch_error:
            client.fetch("t", sp, 0)
        assert fetch_error.value.code == STORAGE_ERROR
        # the other directory is served
        client.produce("t", other, records)
        disk.acked[other] += 16
        assert _count_records(client, other) == disk.acked[other]
    dirs = _log_dirs(broker)
    assert dirs == {str(disk.normal): 0, str(disk.small): STORAGE_ERROR}
    assert "is now offline" in broker.log_text()
    assert broker.running
    broker.stop()
    # what the offline directory holds, for the checks of the next tests
    shutil.copytree(disk.small / f"t-{sp}", disk.copies)


def _acked_batches_in_dump(text: str) -> int:
    """The records counted by a dump's batch lines (``count: N`` / ``lastOffset``)."""
    return sum(int(n) for n in re.findall(r"count: (\d+)", text))


def _check_dump(command: list[str], disk: Disk) -> None:
    """``command --deep-iteration --files <the offline partition's segments>`` reads
    every acknowledged record, in batches none of which is invalid."""
    assert disk.copies.is_dir(), "the first test did not run"
    logs = sorted(str(p) for p in disk.copies.glob("*.log"))
    proc = subprocess.run(
        [*command, "--deep-iteration", "--files", ",".join(logs)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "isValid: false" not in out and "invalid" not in out.lower(), out[-2000:]
    assert _acked_batches_in_dump(out) >= disk.acked[disk.small_partition]


def test_nothing_acknowledged_was_damaged_kafkacore_dump_log(disk: Disk) -> None:
    _check_dump([sys.executable, "-m", "kafkacore.cli", "dump-log"], disk)


def test_nothing_acknowledged_was_damaged_kafkas_dump_log_segments(
    disk: Disk, kafka_libs: Path
) -> None:
    java = shutil.which("java")
    assert java
    _check_dump([java, "-cp", f"{kafka_libs}/*", "org.apache.kafka.tools.DumpLogSegments"], disk)


def test_after_space_returns_and_a_restart_everything_acked_is_there_and_the_dir_is_online(
    disk: Disk,
) -> None:
    assert disk.acked, "the first test did not run"
    (disk.small / "filler").unlink()
    broker = disk.broker.start()
    try:
        assert _log_dirs(broker) == {str(disk.normal): 0, str(disk.small): 0}
        with Client(broker.bootstrap, timeout_s=10) as client:
            for p in (0, 1):
                assert _count_records(client, p) == disk.acked[p]
                ends: Any = client.list_offsets({("t", p): -1})
                assert ends[("t", p)][0] == disk.acked[p]
            client.produce("t", disk.small_partition, batch(4, 100))  # writable again
    finally:
        broker.stop()
