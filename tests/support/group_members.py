"""Consumer group members as processes of different clients and protocols in one group,
and the check that every record was consumed once: for the tests of mixed groups and the
online migration (tests/compat/test_consumer_group_migration.py) and of the coordinator's
failover (tests/cluster/test_consumer_group_failover.py).

Each member (``tests/compat/clients/group_member.py`` for the Python clients,
``tests/interop/java/GroupMember.java`` for Kafka's Java consumer) consumes in batches and
commits each one synchronously, printing the batch before its commit and the commit's
outcome after it. A record is consumed once when exactly one member committed a batch
holding it; a member killed with SIGKILL (or stopped in the middle of a commit) may end
between its commit and the line telling it, so its last unanswered batch is "uncertain"
(committed or not): a record of it no other member consumed was consumed once by it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Member", "Producing", "check_consumed_once", "java_member", "python_member"]

CLIENT = Path(__file__).resolve().parents[1] / "compat" / "clients" / "group_member.py"

Record = tuple[int, int]  # partition, offset


class Member:
    """One member process; its JSON lines are read by a thread as they come."""

    def __init__(self, name: str, cmd: Sequence[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        self._stderr = log.open("ab")
        self.proc = subprocess.Popen(
            list(cmd), stdout=subprocess.PIPE, stderr=self._stderr, env=env, text=True
        )
        self.events: list[dict[str, Any]] = []
        self.killed = False
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            with self._lock:
                self.events.append(event)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.events)

    @property
    def assignment(self) -> list[Any]:
        for event in reversed(self.snapshot()):
            if "assigned" in event:
                return list(event["assigned"])
        return []

    def committed(self) -> list[Record]:
        """The records of the batches this member committed."""
        events = self.snapshot()
        ok = {e["committed"] for e in events if "committed" in e}
        return [
            (p, o) for e in events if "pending" in e and e["pending"] in ok for p, o in e["records"]
        ]

    def uncertain(self) -> list[Record]:
        """The records of the last batch the member printed without an outcome (killed,
        or stopped in the middle of the commit)."""
        events = self.snapshot()
        answered = {e.get("committed", e.get("failed")) for e in events}
        pending = [e for e in events if "pending" in e and e["pending"] not in answered]
        return [(p, o) for e in pending[-1:] for p, o in e["records"]]

    def stop(self, timeout_s: float = 60) -> None:
        """SIGTERM: the member closes its consumer (leaves the group) and exits."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
        self._reader.join(10)
        self._stderr.close()

    def kill(self) -> None:
        """SIGKILL: a crash (its session expires on the coordinator)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.killed = True
        self.proc.wait(30)
        self._reader.join(10)
        if not self._stderr.closed:
            self._stderr.close()

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def python_member(
    client: str,
    bootstrap: str,
    group: str,
    topic: str,
    name: str,
    log_dir: Path,
    path: Path | None = None,
) -> Member:
    """A ``group_member.py`` member: ``client`` is kafka-python, aiokafka (from ``path``, a
    pip --target directory) or confluent (this interpreter's)."""
    env = os.environ.copy()
    env["PYTHONUNBUFFERED"] = "1"
    if path is not None:
        env["PYTHONPATH"] = str(path)
    cmd = [sys.executable, str(CLIENT), client, bootstrap, group, topic, name]
    return Member(name, cmd, env, log_dir / f"{name}.log")


def java_member(
    classpath: str,
    bootstrap: str,
    group: str,
    topic: str,
    name: str,
    log_dir: Path,
    protocol: str = "consumer",
) -> Member:
    """Kafka's Java consumer (``GroupMember.java`` on ``classpath``) with
    ``group.protocol=protocol``."""
    from support.kafka_jars import JVM_FLAGS

    cmd = [
        "java",
        *JVM_FLAGS,
        "-cp",
        classpath,
        "GroupMember",
        bootstrap,
        group,
        topic,
        name,
        protocol,
    ]
    return Member(name, cmd, os.environ.copy(), log_dir / f"{name}.log")


class Producing:
    """A confluent-kafka producer writing ``rate`` records a second round-robin over the
    topic's partitions in a thread, until :meth:`stop`; ``acked`` holds each
    acknowledged record's (partition, offset)."""

    def __init__(self, config: dict[str, object], topic: str, partitions: int, rate: float) -> None:
        import confluent_kafka as ck

        self._producer = ck.Producer(config)
        self.topic = topic
        self.partitions = partitions
        self.rate = rate
        self.acked: list[Record] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked.append((msg.partition(), msg.offset()))

    def _run(self) -> None:
        n = 0
        start = time.monotonic()
        while not self._stop.is_set():
            due = int((time.monotonic() - start) * self.rate)
            while n < due:
                self._producer.produce(
                    self.topic,
                    value=b"r%d" % n,
                    partition=n % self.partitions,
                    on_delivery=self._delivered,
                )
                n += 1
            self._producer.poll(0.05)
        self._producer.flush(60)

    def stop(self) -> list[Record]:
        self._stop.set()
        self._thread.join(120)
        assert not self.errors, self.errors[:5]
        return list(self.acked)


def check_consumed_once(produced: Iterable[Record], members: Sequence[Member]) -> None:
    """Every produced record consumed (committed) by exactly one member: no record in two
    committed batches, and none missing but the records of a killed member's last
    unanswered batch (see the module documentation)."""
    produced_set = set(produced)
    committed = Counter(r for m in members for r in m.committed())
    twice = sorted(r for r, n in committed.items() if n > 1)
    assert not twice, f"{len(twice)} records consumed more than once, e.g. {twice[:10]}"
    uncertain = {r for m in members for r in m.uncertain()}
    missing = sorted(produced_set - set(committed) - uncertain)
    assert not missing, f"{len(missing)} records never consumed, e.g. {missing[:10]}"
    unexpected = sorted(set(committed) - produced_set)
    assert not unexpected, f"records consumed but not produced: {unexpected[:10]}"
