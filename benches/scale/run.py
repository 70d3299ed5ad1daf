"""Scale benchmark: 10,000 partitions and 10,000 idle connections on one broker, Apache
Kafka 4.3.1 (single-node KRaft from the jars of ``scripts/kafka-jars.sh``, started with
``kafka-server-start.sh``'s JVM flags) against kafkacore (``kafkacore server-start``), one
after the other on the same machine, loopback only.

    make bench-scale                              # builds, then runs this
    .venv/bin/python benches/scale/run.py [--quick] [--brokers kafkacore,kafka]
    .venv/bin/python benches/scale/run.py --partitions 10000 --connections 10000

For each broker:

* **connections** (a fresh broker, no topics): ``--connections`` TCP connections opened
  by this process (asyncio, at most 256 handshakes in flight), each sending one
  ApiVersions request and reading its answer, then left idle. Reported: the accept rate
  (connections answered per second, from the first connect to the last answer), and the
  broker's RSS and open files before and with all connections idle for 2 s: memory per
  connection = RSS delta / connections. This process raises its ``RLIMIT_NOFILE`` to
  100,000 when it may (root), else to the hard limit (the brokers inherit it); both
  brokers run with their defaults (``max.connections`` and ``max.connections.per.ip``
  unlimited in both, Kafka's ``num.network.threads`` 3, ``socket.listen.backlog.size``
  50).
* **partitions** (another fresh broker): ``--partitions`` partitions as one topic of
  1,000 partitions (``spread``) and topics of 10 partitions (``t00000``...), created with
  CreateTopics (100 topics a request); the time until Metadata shows them all with a
  leader. Then idle RSS, open files and memory maps; Metadata latency (v12, all topics and
  one 10-partition topic: median and p99 over repeated requests on one connection, and the
  response size; each round also times the answer's bytes alone, not decoded by this
  client, the ``wire`` figures: a 55 KB answer takes this client longer to decode than
  either broker to build); produce throughput spread over the 1,000 partitions of ``spread``
  (confluent-kafka, 1 KiB records, acks=all, round-robin partitions, linger.ms 5, for
  ``--seconds``) with the broker's CPU seconds (user + system, ``/proc/<pid>/stat``) per
  GiB. Then a clean shutdown (SIGTERM; its duration) and a restart, timed from the spawn
  to a Metadata answer with every partition led; then a SIGKILL right after another
  produce run and the restart after that unclean shutdown, timed the same way.

``--quick``: 1,000 partitions (``spread`` of 100), 1,000 connections, 5 s of produce.
Everything is printed as a table and written to ``benches/results/scale_vs_kafka.json``
(``scale_vs_kafka_quick.json`` with ``--quick``). All processes and temp dirs are removed
at the end, also on errors and Ctrl-C. Timings on a loaded machine are noisy; the
counts (open files, maps, response sizes) and CPU seconds less so.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import platform
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benches"))  # run as a script: benches/_common.py
sys.path.insert(0, str(REPO / "python"))
from _common import (  # noqa: E402
    KAFKA_JVM,
    KAFKA_VERSION,
    TOOL_JVM,
    cpu_seconds,
    free_port,
    kafka_libs,
    log,
    raise_fd_limit,
    run_main,
    write_report,
)
from kafkacore.protocol import (  # noqa: E402
    APIS_BY_NAME,
    RequestHeader,
    decode_response,
    encode_request,
)

RESULTS = REPO / "benches" / "results"
SPREAD = 1000  # the partitions produce is spread over (100 with --quick)
TOPIC_PARTITIONS = 10
PAGE = os.sysconf("SC_PAGE_SIZE")

_PROCS: list[subprocess.Popen[bytes]] = []
_TMPDIRS: list[Path] = []


def mktemp(prefix: str) -> Path:
    d = Path(tempfile.mkdtemp(prefix=prefix))
    _TMPDIRS.append(d)
    return d


def cleanup() -> None:
    for proc in list(_PROCS):
        with contextlib.suppress(Exception):
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    _PROCS.clear()
    for d in list(_TMPDIRS):
        shutil.rmtree(d, ignore_errors=True)
    _TMPDIRS.clear()


# --------------------------------------------------------------------------- process stats


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def memory_maps(pid: int) -> int:
    with open(f"/proc/{pid}/maps") as f:
        return sum(1 for _ in f)


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


# --------------------------------------------------------------------------- raw protocol


class Raw:
    """Blocking raw requests over one connection."""

    def __init__(self, port: int, timeout: float = 60) -> None:
        self.sock = socket.create_connection(("localhost", port), timeout=timeout)
        self.cid = 0
        self.last_size = 0

    def call(self, name: str, version: int, **fields: Any) -> Any:
        api = APIS_BY_NAME[name]
        cid, response = decode_response(self.call_raw(name, version, **fields), api.key, version)
        assert cid == self.cid
        return response

    def call_raw(self, name: str, version: int, **fields: Any) -> bytes:
        """The response frame's bytes, not decoded (what the broker's time is)."""
        self.cid += 1
        api = APIS_BY_NAME[name]
        header = RequestHeader(api.key, version, self.cid, "bench-scale")
        self.sock.sendall(encode_request(header, api.request.cls(**fields)))
        size = struct.unpack(">i", self._exactly(4))[0]
        self.last_size = size
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(min(n - len(out), 1 << 20))
            if not chunk:
                raise ConnectionError("closed")
            out += chunk
        return bytes(out)

    def close(self) -> None:
        self.sock.close()


def led_partitions(port: int) -> int:
    """Partitions with a leader in an all-topics Metadata v12 answer (-1: no answer)."""
    try:
        raw = Raw(port, timeout=30)
    except OSError:
        return -1
    try:
        m = raw.call("Metadata", 12, topics=None, allow_auto_topic_creation=False)
        return sum(
            1
            for t in m.topics
            if not t.is_internal
            for p in t.partitions
            if p.error_code == 0 and p.leader_id >= 0
        )
    except (OSError, ConnectionError, AssertionError):
        return -1
    finally:
        raw.close()


# --------------------------------------------------------------------------- brokers


@dataclass
class Broker:
    name: str
    home: Path
    port: int
    cport: int
    proc: subprocess.Popen[bytes] | None = None
    libs: Path | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def logfile(self) -> Path:
        return self.home / f"{self.name}.log"

    def tail(self) -> str:
        return self.logfile.read_text(errors="replace")[-3000:]

    def spawn(self) -> None:
        with self.logfile.open("ab") as out:
            if self.name == "kafka":
                assert self.libs is not None
                cmd = [
                    "java",
                    *KAFKA_JVM,
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                    "-cp",
                    f"{self.libs}/*",
                    "kafka.Kafka",
                    str(self.home / "server.properties"),
                ]
                env = None
            else:
                cmd = [
                    sys.executable,
                    "-m",
                    "kafkacore.cli",
                    "server-start",
                    str(self.home / "server.properties"),
                ]
                env = {
                    **os.environ,
                    "PYTHONPATH": os.pathsep.join(
                        filter(None, [str(REPO / "python"), os.environ.get("PYTHONPATH")])
                    ),
                }
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.home
            )
        _PROCS.append(self.proc)

    def wait_led(self, partitions: int, timeout: float = 600) -> float:
        """Seconds until Metadata shows ``partitions`` partitions led (from now)."""
        start = time.monotonic()
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode}:\n{self.tail()}")
            if led_partitions(self.port) >= partitions:
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise RuntimeError(f"{self.name}: {partitions} partitions not led:\n{self.tail()}")
            time.sleep(0.1)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 300) -> float:
        """Signal the broker and wait for it to exit; the seconds it took."""
        proc = self.proc
        assert proc is not None
        start = time.monotonic()
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        _PROCS.remove(proc)
        self.proc = None
        return time.monotonic() - start


def new_broker(name: str, libs: Path | None) -> Broker:
    home = mktemp(f"kafkacore-bench-scale-{name}-")
    broker = Broker(name, home, free_port(), free_port(), libs=libs)
    common = [
        f"log.dirs={home / 'data'}",
        "num.partitions=1",
        "default.replication.factor=1",
        "offsets.topic.replication.factor=1",
        "offsets.topic.num.partitions=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "group.initial.rebalance.delay.ms=0",
        "auto.create.topics.enable=false",
    ]
    if name == "kafka":
        assert libs is not None
        lines = [
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@localhost:{broker.cport}",
            f"listeners=PLAINTEXT://localhost:{broker.port},CONTROLLER://localhost:{broker.cport}",
            f"advertised.listeners=PLAINTEXT://localhost:{broker.port}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            *common,
        ]
        props = home / "server.properties"
        props.write_text("\n".join(lines) + "\n")
        cluster_id = "-"
        while cluster_id.startswith("-"):
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        subprocess.run(
            [
                *("java", *TOOL_JVM, "-cp", f"{libs}/*", "kafka.tools.StorageTool", "format"),
                *("-t", cluster_id, "-c", str(props)),
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )
    else:
        lines = ["node.id=1", f"listeners=PLAINTEXT://localhost:{broker.port}", *common]
        (home / "server.properties").write_text("\n".join(lines) + "\n")
    return broker


# --------------------------------------------------------------------------- connections


async def _open_connections(port: int, count: int) -> tuple[float, list[asyncio.StreamWriter]]:
    api = APIS_BY_NAME["ApiVersions"]
    gate = asyncio.Semaphore(256)
    writers: list[asyncio.StreamWriter] = []

    async def one(i: int) -> None:
        async with gate:
            reader, writer = await asyncio.open_connection("localhost", port)
            header = RequestHeader(api.key, 3, i, "idle")
            request = api.request.cls(client_software_name="bench", client_software_version="1")
            writer.write(encode_request(header, request))
            (size,) = struct.unpack(">i", await reader.readexactly(4))
            await reader.readexactly(size)
            writers.append(writer)

    start = time.monotonic()
    await asyncio.gather(*(one(i) for i in range(count)))
    return time.monotonic() - start, writers


def connections_case(broker: Broker, count: int) -> dict[str, Any]:
    broker.spawn()
    broker.wait_led(0, 180)
    time.sleep(2)
    pid = broker.pid
    before = {"rss": rss_bytes(pid), "fds": open_files(pid), "threads": threads(pid)}

    async def run() -> dict[str, Any]:
        elapsed, writers = await _open_connections(broker.port, count)
        await asyncio.sleep(2)
        during = {"rss": rss_bytes(pid), "fds": open_files(pid), "threads": threads(pid)}
        for w in writers:
            w.close()
        return {"seconds": elapsed, "during": during}

    got = asyncio.run(run())
    during = got["during"]
    result = {
        "connections": count,
        "accept_rate_per_s": count / got["seconds"],
        "open_seconds": got["seconds"],
        "rss_before_mib": before["rss"] / 2**20,
        "rss_with_connections_mib": during["rss"] / 2**20,
        "bytes_per_connection": (during["rss"] - before["rss"]) / count,
        "open_files_before": before["fds"],
        "open_files_with_connections": during["fds"],
        "threads_before": before["threads"],
        "threads_with_connections": during["threads"],
    }
    broker.stop()
    return result


# --------------------------------------------------------------------------- partitions


def topics_for(partitions: int, spread: int) -> list[tuple[str, int]]:
    rest = max(0, partitions - spread) // TOPIC_PARTITIONS
    return [("spread", spread)] + [(f"t{i:05d}", TOPIC_PARTITIONS) for i in range(rest)]


def create_topics(port: int, topics: list[tuple[str, int]]) -> None:
    cls: Any = APIS_BY_NAME["CreateTopics"].request.cls
    raw = Raw(port, timeout=300)
    try:
        for i in range(0, len(topics), 100):
            chunk = topics[i : i + 100]
            answer = raw.call(
                "CreateTopics",
                5,
                topics=[
                    cls.CreatableTopic(name=n, num_partitions=p, replication_factor=1)
                    for n, p in chunk
                ],
                timeout_ms=120_000,
            )
            bad = [(t.name, t.error_code) for t in answer.topics if t.error_code not in (0, 36)]
            if bad:
                raise RuntimeError(f"CreateTopics failed: {bad[:5]}")
    finally:
        raw.close()


def metadata_latency(port: int, one_topic: str, rounds_all: int, rounds_one: int) -> dict[str, Any]:
    meta: Any = APIS_BY_NAME["Metadata"].request.cls
    raw = Raw(port, timeout=120)
    out: dict[str, Any] = {}
    try:
        for label, topics, rounds in (
            ("all_topics", None, rounds_all),
            ("one_topic", [meta.MetadataRequestTopic(name=one_topic)], rounds_one),
        ):
            times, wire = [], []
            for _ in range(rounds):  # interleaved: decoded by this client, and bytes only
                start = time.perf_counter()
                raw.call("Metadata", 12, topics=topics, allow_auto_topic_creation=False)
                times.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                raw.call_raw("Metadata", 12, topics=topics, allow_auto_topic_creation=False)
                wire.append((time.perf_counter() - start) * 1000)
            times.sort()
            wire.sort()
            out[label] = {
                "median_ms": statistics.median(times),
                "p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))],
                # request sent to the last byte of the answer, nothing decoded: the
                # broker's time and the transfer, without this client's Python decoder
                "wire_median_ms": statistics.median(wire),
                "wire_p99_ms": wire[min(len(wire) - 1, int(len(wire) * 0.99))],
                "response_bytes": raw.last_size,
                "requests": rounds,
            }
    finally:
        raw.close()
    return out


def produce_spread(broker: Broker, spread: int, seconds: float, size: int = 1024) -> dict[str, Any]:
    from confluent_kafka import Producer

    delivered = [0, 0]  # ok, failed

    def on_delivery(err: Any, _msg: Any) -> None:
        delivered[0 if err is None else 1] += 1

    producer = Producer(
        {
            "bootstrap.servers": f"localhost:{broker.port}",
            "broker.address.family": "v4",
            "acks": "all",
            "linger.ms": 5,
            "batch.size": 65536,
            "queue.buffering.max.kbytes": 262144,
            "log_level": 0,
        }
    )
    value = b"x" * size
    cpu0 = cpu_seconds(broker.pid)
    start = time.monotonic()
    sent = 0
    end = start + seconds
    while time.monotonic() < end:
        for _ in range(1000):
            try:
                producer.produce("spread", value, partition=sent % spread, on_delivery=on_delivery)
                sent += 1
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    unflushed = producer.flush(120)  # still queued or in flight when the wait ends
    elapsed = time.monotonic() - start
    cpu = cpu_seconds(broker.pid) - cpu0
    ok = delivered[0]
    return {
        "seconds": elapsed,
        "records": ok,
        "sent": sent,
        "failed": delivered[1],
        "unflushed_after_120_s": unflushed,
        "records_per_s": ok / elapsed,
        "mib_per_s": ok * size / elapsed / 2**20,
        "broker_cpu_s": cpu,
        "broker_cpu_s_per_gib": cpu / (ok * size / 2**30) if ok else None,
    }


def partitions_case(broker: Broker, partitions: int, spread: int, seconds: float) -> dict[str, Any]:
    topics = topics_for(partitions, spread)
    total = sum(p for _, p in topics)
    out: dict[str, Any] = {"partitions": total, "topics": len(topics)}
    broker.spawn()
    broker.wait_led(0, 180)
    log(f"{broker.name}: creating {len(topics)} topics, {total} partitions")
    start = time.monotonic()
    create_topics(broker.port, topics)
    broker.wait_led(total)
    out["create_seconds"] = time.monotonic() - start
    time.sleep(5)
    pid = broker.pid
    out["idle"] = {
        "rss_mib": rss_bytes(pid) / 2**20,
        "open_files": open_files(pid),
        "memory_maps": memory_maps(pid),
        "threads": threads(pid),
    }
    log(f"{broker.name}: idle {out['idle']}")
    out["metadata"] = metadata_latency(broker.port, topics[-1][0], 100, 200)
    log(f"{broker.name}: metadata {out['metadata']}")
    out["produce"] = produce_spread(broker, spread, seconds)
    log(f"{broker.name}: produce {out['produce']}")
    out["shutdown_clean_seconds"] = broker.stop(signal.SIGTERM)
    start = time.monotonic()
    broker.spawn()
    out["startup_after_clean_seconds"] = broker.wait_led(total)
    log(f"{broker.name}: restart after a clean shutdown {out['startup_after_clean_seconds']:.1f} s")
    time.sleep(2)
    out["idle_after_restart"] = {
        "rss_mib": rss_bytes(broker.pid) / 2**20,
        "open_files": open_files(broker.pid),
        "memory_maps": memory_maps(broker.pid),
    }
    out["produce_before_kill"] = produce_spread(broker, spread, max(2.0, seconds / 2))
    broker.stop(signal.SIGKILL)
    broker.spawn()
    out["startup_after_kill_seconds"] = broker.wait_led(total)
    log(f"{broker.name}: restart after SIGKILL {out['startup_after_kill_seconds']:.1f} s")
    del start
    broker.stop(signal.SIGTERM)
    return out


# --------------------------------------------------------------------------- report


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


ROWS: list[tuple[str, tuple[str, ...], str]] = [
    # (label, path in the result, "lower" or "higher" is better)
    ("create topics (s)", ("partitions", "create_seconds"), "lower"),
    ("start-up after clean shutdown (s)", ("partitions", "startup_after_clean_seconds"), "lower"),
    ("start-up after SIGKILL (s)", ("partitions", "startup_after_kill_seconds"), "lower"),
    ("clean shutdown (s)", ("partitions", "shutdown_clean_seconds"), "lower"),
    ("idle RSS (MiB)", ("partitions", "idle", "rss_mib"), "lower"),
    ("idle open files", ("partitions", "idle", "open_files"), "lower"),
    ("idle memory maps", ("partitions", "idle", "memory_maps"), "lower"),
    (
        "Metadata all topics median (ms)",
        ("partitions", "metadata", "all_topics", "median_ms"),
        "lower",
    ),
    ("Metadata all topics p99 (ms)", ("partitions", "metadata", "all_topics", "p99_ms"), "lower"),
    (
        "Metadata all topics, bytes only, median (ms)",
        ("partitions", "metadata", "all_topics", "wire_median_ms"),
        "lower",
    ),
    (
        "Metadata one topic median (ms)",
        ("partitions", "metadata", "one_topic", "median_ms"),
        "lower",
    ),
    ("Metadata one topic p99 (ms)", ("partitions", "metadata", "one_topic", "p99_ms"), "lower"),
    ("produce spread (MiB/s)", ("partitions", "produce", "mib_per_s"), "higher"),
    ("broker CPU s per GiB produced", ("partitions", "produce", "broker_cpu_s_per_gib"), "lower"),
    ("accept rate (conn/s)", ("connections", "accept_rate_per_s"), "higher"),
    ("memory per idle connection (B)", ("connections", "bytes_per_connection"), "lower"),
    ("RSS with connections (MiB)", ("connections", "rss_with_connections_mib"), "lower"),
]


def dig(doc: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


def table(results: dict[str, dict[str, Any]]) -> str:
    kc, ka = results.get("kafkacore", {}), results.get("kafka", {})
    lines = [f"{'':40} {'kafkacore':>12} {'kafka':>12} {'kc/kafka':>9}"]
    for label, path, _ in ROWS:
        a, b = dig(kc, path), dig(ka, path)
        r = ratio(a, b)
        fmt = lambda v: "-" if v is None else f"{v:12.1f}"  # noqa: E731
        lines.append(f"{label:40} {fmt(a)} {fmt(b)} {'-' if r is None else f'{r:8.2f}x'}")
    return "\n".join(lines)


@contextlib.contextmanager
def cleaned_up() -> Iterator[None]:
    try:
        yield
    finally:
        cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--brokers", default="kafkacore,kafka")
    parser.add_argument("--partitions", type=int, default=None)
    parser.add_argument("--connections", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--skip", default="", help="cases to skip: connections,partitions")
    args = parser.parse_args()
    partitions = args.partitions or (1000 if args.quick else 10_000)
    connections = args.connections or (1000 if args.quick else 10_000)
    seconds = args.seconds or (5.0 if args.quick else 15.0)
    spread = min(SPREAD, partitions // 10) if args.quick else min(SPREAD, partitions)
    skip = set(filter(None, args.skip.split(",")))
    fd_limit = raise_fd_limit()
    names = [n.strip() for n in args.brokers.split(",") if n.strip()]
    libs = kafka_libs() if "kafka" in names else None
    started = time.monotonic()
    results: dict[str, dict[str, Any]] = {}
    with cleaned_up():
        for name in names:
            results[name] = {}
            if "connections" not in skip:
                log(f"{name}: {connections} idle connections")
                results[name]["connections"] = connections_case(new_broker(name, libs), connections)
                log(f"{name}: {results[name]['connections']}")
            if "partitions" not in skip:
                results[name]["partitions"] = partitions_case(
                    new_broker(name, libs), partitions, spread, seconds
                )
    text = table(results)
    print()
    print(text)
    doc = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
            "fd_limit": fd_limit,
        },
        "kafka_version": KAFKA_VERSION,
        "settings": {
            "partitions": partitions,
            "connections": connections,
            "produce_seconds": seconds,
            "spread": spread,
        },
        "wall_seconds": time.monotonic() - started,
        "results": results,
        "table": text.splitlines(),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_report(
        RESULTS / ("scale_vs_kafka_quick.json" if args.quick else "scale_vs_kafka.json"), doc
    )
    return 0


if __name__ == "__main__":
    run_main(main)
