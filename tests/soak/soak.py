"""The soak: one kafkacore broker under mixed load for a while, sampled, plotted and judged.

Run: ``PYTHONPATH=python:tests python -m soak.soak --minutes 30 --out soak-out`` (``make
soak``). The broker (a subprocess, ``support.brokers.Broker``, with a PLAINTEXT and a TLS
listener) gets, from client threads of this process, for the whole run:

* ``acks1``: a confluent-kafka producer, acks=1, 500 records/s of 200-1,000 bytes over 3
  partitions; each record's latency (send to delivery report) is kept; every producer
  has ``linger.ms`` 5 and at most 5 requests in flight (the Java producer's default);
* ``acksall``: an idempotent acks=all producer, 200 records/s, latencies kept too;
* ``compacted``: 100 records/s over 100 keys (``cleanup.policy=compact``, 64 KiB segments,
  ``min.cleanable.dirty.ratio`` 0.01, the cleaner every second);
* ``retained``: 200 records/s into 64 KiB segments under ``retention.bytes`` 512 KiB
  (retention checked every second), so segments roll and are deleted all the time;
* a consumer group (two members, ``subscribe``) reading ``acks1`` and ``acksall``, its
  offsets auto-committed every second;
* a topic created, produced to and deleted every few seconds;
* TLS connection churn: a new TLS connection (handshake, ApiVersions, close) every 100 ms;
* a probe: ApiVersions on one long-lived PLAINTEXT connection every 200 ms: its round trip
  is the broker's responsiveness (event-loop lag plus a trivial request), the nearest thing
  to loop lag visible from outside.

Every ``--interval`` seconds a sample: the broker's RSS (``/proc/<pid>/status``), open
files (``/proc/<pid>/fd``), threads, CPU seconds (``/proc/<pid>/stat``), records produced
and consumed, produce latency p50/p99 per producer (and, from librdkafka's statistics,
the acks=1 producer's broker round trip p99 and the p99 time its requests waited in the
client's queues, which tell the broker's share of a latency from the client's), probe p99
and max. Written to
``trace.csv`` and ``trace.json`` (with the verdict) and plotted to ``soak.png``.

Verdict (:func:`verdict`): per series, a Theil-Sen line over the second half of the
run (the first half is warm-up: caches, the cleaner's buffers, segment files reaching
their steady number); "growing" when the line's rise over that half exceeds the series'
tolerance (RSS: 5 % and 16 MiB; open files: 8; threads: 2; p99s: 50 % and 20 ms), else
"stable". The run is stable when every series is.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import random
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafkacore.protocol import APIS_BY_NAME, RequestHeader, encode_request
from kafkacore.security.ssl import client_context
from support.brokers import Broker
from support.certs import Pki, make_pki
from support.ports import free_port
from support.raw_client import make_request, receive_blocking

__all__ = ["Quiet", "Sample", "Soak", "main", "quiet_state", "verdict"]

BROKER_OVERRIDES = (
    "log.cleaner.backoff.ms=1000",
    "log.retention.check.interval.ms=1000",
    "log.segment.delete.delay.ms=1000",
    "log.initial.task.delay.ms=500",  # retention and flushes from the start, not after 30 s
    "group.initial.rebalance.delay.ms=0",
    "offsets.topic.num.partitions=4",
    "auto.create.topics.enable=false",
)
TOPICS: dict[str, tuple[int, dict[str, str]]] = {
    "acks1": (3, {}),
    "acksall": (2, {}),
    "compacted": (
        1,
        {
            "cleanup.policy": "compact",
            "internal.segment.bytes": "65536",
            "min.cleanable.dirty.ratio": "0.01",
        },
    ),
    "retained": (1, {"internal.segment.bytes": "65536", "retention.bytes": "524288"}),
}
#: Tolerances of the verdict: (relative, absolute) rise of the second half's fitted line.
TOLERANCES: dict[str, tuple[float, float]] = {
    "rss_mib": (0.05, 16.0),
    "open_files": (0.0, 8.0),
    "threads": (0.0, 2.0),
    "acks1_p99_ms": (0.5, 20.0),
    "acksall_p99_ms": (0.5, 20.0),
    "probe_p99_ms": (0.5, 20.0),
}


@dataclass
class Sample:
    t: float  # seconds since the load started
    rss_mib: float
    open_files: int
    threads: int
    cpu_s: float
    produced: int
    consumed: int
    acks1_p50_ms: float
    acks1_p99_ms: float
    acksall_p50_ms: float
    acksall_p99_ms: float
    acks1_rtt_p99_ms: float  # librdkafka: the broker round trip
    acks1_queued_p99_ms: float  # librdkafka: time in the client's queues
    probe_p99_ms: float
    probe_max_ms: float
    tls_connections: int
    topics_churned: int
    errors: int


def proc_status(pid: int) -> tuple[float, int]:
    """(RSS in MiB, threads) of ``pid``."""
    rss, threads = 0.0, 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class Quiet:
    """The broker between loads: its sockets, open regular files (and those of them whose
    file was deleted: a leak once ``log.segment.delete.delay.ms`` has passed), threads, RSS."""

    sockets: int
    files: list[str]
    deleted: list[str]
    threads: int
    rss_mib: float


def quiet_state(pid: int) -> Quiet:
    sockets, files, deleted = 0, [], []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:  # closed meanwhile
            continue
        if target.startswith("socket:"):
            sockets += 1
        elif target.startswith("/"):
            (deleted if target.endswith(" (deleted)") else files).append(target)
    rss, threads = proc_status(pid)
    return Quiet(sockets, sorted(files), sorted(deleted), threads, rss)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Counters:
    """Shared by the load threads (under ``lock``); the sampler takes the latencies."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    produced: int = 0
    consumed: int = 0
    tls: int = 0
    churned: int = 0
    errors: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    client: dict[str, tuple[float, float]] = field(default_factory=dict)  # rtt, queued ms
    latencies: dict[str, list[float]] = field(
        default_factory=lambda: {"acks1": [], "acksall": [], "probe": []}
    )

    def take(self) -> dict[str, list[float]]:
        with self.lock:
            out = self.latencies
            self.latencies = {k: [] for k in out}
        return out

    def error(self, what: str) -> None:
        """Count an error; the first few of each kind are printed."""
        with self.lock:
            self.errors += 1
            seen = self.kinds.get(what, 0)
            self.kinds[what] = seen + 1
        if seen < 3:
            print(f"soak: {what}", file=sys.stderr, flush=True)

    def add(self, name: str, value: float) -> None:
        with self.lock:
            self.latencies[name].append(value)


class Soak:
    """One run in ``out``: :meth:`run` starts the broker and the load, samples every
    ``interval`` seconds for ``seconds``, stops everything and returns the samples."""

    def __init__(self, out: Path, seconds: float, interval: float, *, tls: bool = True) -> None:
        self.out = out
        self.seconds = seconds
        self.interval = interval
        self.tls = tls
        self.stop = threading.Event()
        self.counters = Counters()
        self.pki: Pki | None = make_pki() if tls else None
        self.tls_port = free_port() if tls else None
        overrides = list(BROKER_OVERRIDES)
        if self.pki is not None:
            overrides += [f"{k}={v}" for k, v in self.pki.server_ssl_configs("none").items()]
        self.broker = Broker(out / "data", overrides)
        if self.tls_port is not None:
            port = self.broker.port
            self.broker.overrides.append(
                f"listeners=PLAINTEXT://localhost:{port},SSL://localhost:{self.tls_port}"
            )
        self.samples: list[Sample] = []
        self.threads: list[threading.Thread] = []
        self.before: Quiet | None = None
        self.after: Quiet | None = None

    # -- load -------------------------------------------------------------------------------

    def spawn(self, target: Callable[..., None], *args: Any) -> None:
        def guarded() -> None:
            try:
                target(*args)
            except Exception as exc:  # counted and shown: a load thread must not die silently
                self.counters.error(f"{target.__name__} failed: {exc!r}")

        thread = threading.Thread(target=guarded, name=target.__name__, daemon=True)
        thread.start()
        self.threads.append(thread)

    def produce(self, topic: str, rate: float, acks: str, keys: int | None) -> None:
        config: dict[str, Any] = {
            "bootstrap.servers": self.broker.bootstrap,
            "linger.ms": 5,
            # the Java producer's default (librdkafka's is 1,000,000: a backlog of tiny
            # requests queued on the broker's connection instead of bigger batches)
            "max.in.flight.requests.per.connection": 5,
        }
        config |= {"acks": "all", "enable.idempotence": True} if acks == "all" else {"acks": "1"}
        segment = TOPICS.get(topic, (0, {}))[1].get("internal.segment.bytes")
        if segment is not None:  # a batch must fit a segment (else RECORD_LIST_TOO_LARGE)
            config["batch.size"] = int(segment) // 2
        latency_name = topic if topic in ("acks1", "acksall") else None
        if latency_name is not None:
            # librdkafka's own view, to tell the broker's share of a latency from the
            # client's queueing: the broker round trip and the time in the client's queues
            config |= {
                "statistics.interval.ms": max(1000, int(self.interval * 1000)),
                "stats_cb": lambda text: self.client_stats(latency_name, text),
            }
        producer = Producer(config)
        rng = random.Random(topic)
        partitions = TOPICS[topic][0] if topic in TOPICS else 1

        def report(err: Any, _msg: Any, sent: float) -> None:
            if err is not None:
                self.counters.error(f"produce to {topic}: {err}")
                return
            with self.counters.lock:
                self.counters.produced += 1
            if latency_name is not None:
                self.counters.add(latency_name, (time.monotonic() - sent) * 1000)

        tick = 0.01
        per_tick = rate * tick
        owed = 0.0
        try:
            while not self.stop.is_set():
                owed += per_tick
                while owed >= 1:
                    owed -= 1
                    key = f"k{rng.randrange(keys)}" if keys else None
                    sent = time.monotonic()
                    producer.produce(
                        topic,
                        value=os.urandom(rng.randint(100, 500)).hex().encode(),
                        key=key,
                        partition=rng.randrange(partitions),
                        on_delivery=lambda err, msg, sent=sent: report(err, msg, sent),
                    )
                producer.poll(0)
                self.stop.wait(tick)
        finally:
            producer.flush(10)

    def client_stats(self, name: str, text: str) -> None:
        """librdkafka's statistics of producer ``name``: its brokers' round-trip p99
        (``rtt``) and the p99 time a request waited in the client (``int_latency``: from
        produce() to the request being built; ``outbuf_latency``: before it is sent)."""
        stats = json.loads(text)
        brokers = [b for b in stats.get("brokers", {}).values() if b.get("nodeid", -1) >= 0]
        rtt = max((b["rtt"]["p99"] for b in brokers), default=0) / 1000
        queued = max(
            (b["int_latency"]["p99"] + b["outbuf_latency"]["p99"] for b in brokers), default=0
        )
        with self.counters.lock:
            self.counters.client[name] = (rtt, queued / 1000)

    def consume(self, member: int) -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": self.broker.bootstrap,
                "group.id": "soak-group",
                "client.id": f"soak-member-{member}",
                "auto.offset.reset": "latest",
                "enable.auto.commit": True,
                "auto.commit.interval.ms": 1000,
            }
        )
        consumer.subscribe(["acks1", "acksall"])
        try:
            while not self.stop.is_set():
                messages = consumer.consume(500, 0.2)
                with self.counters.lock:
                    self.counters.consumed += sum(1 for m in messages if m.error() is None)
        finally:
            consumer.close()

    def churn_topics(self) -> None:
        admin = AdminClient({"bootstrap.servers": self.broker.bootstrap})
        producer = Producer({"bootstrap.servers": self.broker.bootstrap, "acks": "1"})
        generation = 0
        try:
            while not self.stop.is_set():
                name = f"churn-{generation}"
                generation += 1
                admin.create_topics([NewTopic(name, 2, 1)])[name].result(30)
                for i in range(200):
                    producer.produce(name, value=b"v%d" % i, partition=i % 2)
                producer.flush(10)
                self.stop.wait(2.0)
                admin.delete_topics([name])[name].result(30)
                with self.counters.lock:
                    self.counters.churned += 1
                self.stop.wait(1.0)
        finally:
            producer.flush(5)

    def tls_churn(self) -> None:
        assert self.pki is not None and self.tls_port is not None
        context = client_context(self.pki.client_ssl_configs(with_cert=False))
        frame = api_versions_frame()
        while not self.stop.is_set():
            with (
                socket.create_connection(("localhost", self.tls_port), timeout=10) as raw,
                context.wrap_socket(raw, server_hostname="localhost") as tls,
            ):
                tls.sendall(frame)
                receive_blocking(tls, "ApiVersions", 0)
            with self.counters.lock:
                self.counters.tls += 1
            self.stop.wait(0.1)

    def probe(self) -> None:
        frame = api_versions_frame()
        with socket.create_connection(("localhost", self.broker.port), timeout=10) as sock:
            while not self.stop.is_set():
                start = time.monotonic()
                sock.sendall(frame)
                receive_blocking(sock, "ApiVersions", 0)
                self.counters.add("probe", (time.monotonic() - start) * 1000)
                self.stop.wait(0.2)

    # -- the run ----------------------------------------------------------------------------

    def create_topics(self) -> None:
        admin = AdminClient({"bootstrap.servers": self.broker.bootstrap})
        new = [NewTopic(t, n, 1, config=c) for t, (n, c) in TOPICS.items()]
        for future in admin.create_topics(new).values():
            future.result(30)

    def sample(self, t: float, pid: int) -> Sample:
        latencies = self.counters.take()
        rss, threads = proc_status(pid)
        with self.counters.lock:
            c = self.counters
            client = dict(c.client)
            produced, consumed, tls, churned, errors = (
                c.produced,
                c.consumed,
                c.tls,
                c.churned,
                c.errors,
            )
        return Sample(
            t=round(t, 1),
            rss_mib=round(rss, 1),
            open_files=open_files(pid),
            threads=threads,
            cpu_s=round(cpu_seconds(pid), 2),
            produced=produced,
            consumed=consumed,
            acks1_p50_ms=round(percentile(latencies["acks1"], 0.5), 2),
            acks1_p99_ms=round(percentile(latencies["acks1"], 0.99), 2),
            acksall_p50_ms=round(percentile(latencies["acksall"], 0.5), 2),
            acksall_p99_ms=round(percentile(latencies["acksall"], 0.99), 2),
            acks1_rtt_p99_ms=round(client.get("acks1", (0.0, 0.0))[0], 2),
            acks1_queued_p99_ms=round(client.get("acks1", (0.0, 0.0))[1], 2),
            probe_p99_ms=round(percentile(latencies["probe"], 0.99), 2),
            probe_max_ms=round(max(latencies["probe"], default=0.0), 2),
            tls_connections=tls,
            topics_churned=churned,
            errors=errors,
        )

    def run(self, *, log: Callable[[str], None] = print, settle_s: float = 0.0) -> list[Sample]:
        """The run; with ``settle_s``, :attr:`before` and :attr:`after` are the broker's
        :class:`Quiet` state once the topics exist and ``settle_s`` after the load ended."""
        self.out.mkdir(parents=True, exist_ok=True)
        self.broker.start()
        try:
            proc = self.broker.proc
            assert proc is not None
            self.create_topics()
            if settle_s:
                time.sleep(settle_s)
                self.before = quiet_state(proc.pid)
            self.spawn(self.produce, "acks1", 500, "1", None)
            self.spawn(self.produce, "acksall", 200, "all", None)
            self.spawn(self.produce, "compacted", 100, "all", 100)
            self.spawn(self.produce, "retained", 200, "1", None)
            self.spawn(self.consume, 0)
            self.spawn(self.consume, 1)
            self.spawn(self.churn_topics)
            self.spawn(self.probe)
            if self.tls:
                self.spawn(self.tls_churn)
            start = time.monotonic()
            next_at = start + self.interval
            while next_at <= start + self.seconds + 1e-6:
                time.sleep(max(0.0, next_at - time.monotonic()))
                s = self.sample(time.monotonic() - start, proc.pid)
                self.samples.append(s)
                log(
                    f"{s.t:7.0f}s rss {s.rss_mib:6.1f} MiB  fds {s.open_files:4d}  threads "
                    f"{s.threads:3d}  cpu {s.cpu_s:7.1f}s  produced {s.produced:8d}  consumed "
                    f"{s.consumed:8d}  p99 acks1 {s.acks1_p99_ms:6.1f} ms acksall "
                    f"{s.acksall_p99_ms:6.1f} ms (acks1 rtt {s.acks1_rtt_p99_ms:.0f}, queued "
                    f"{s.acks1_queued_p99_ms:.0f})  probe p99 {s.probe_p99_ms:5.1f} ms  "
                    f"errors {s.errors}"
                )
                next_at += self.interval
            self.stop.set()
            for thread in self.threads:
                thread.join(30)
            if settle_s:
                time.sleep(settle_s)
                self.after = quiet_state(proc.pid)
        finally:
            self.stop.set()
            for thread in self.threads:
                thread.join(30)
            self.broker.stop()
        return self.samples


# -- the verdict, the trace and the plot --------------------------------------------------------


def slope(points: list[tuple[float, float]]) -> float:
    """Theil-Sen slope of ``(t, y)`` points (per second): the median of the pairwise
    slopes, so that a few spikes (a noisy machine) do not tilt it."""
    slopes = [
        (y2 - y1) / (t2 - t1)
        for i, (t1, y1) in enumerate(points)
        for t2, y2 in points[i + 1 :]
        if t2 > t1
    ]
    return statistics.median(slopes) if slopes else 0.0


def verdict(samples: list[Sample]) -> dict[str, Any]:
    """Per series of :data:`TOLERANCES`: its second half's mean, the rise of its fitted line
    over that half, the tolerance, and ``stable``/``growing``; ``overall`` last."""
    half = samples[len(samples) // 2 :]
    out: dict[str, Any] = {}
    for name, (relative, absolute) in TOLERANCES.items():
        points = [(s.t, float(getattr(s, name))) for s in half]
        mean = statistics.fmean(y for _, y in points) if points else 0.0
        span = (points[-1][0] - points[0][0]) if len(points) > 1 else 0.0
        rise = slope(points) * span
        allowed = max(relative * mean, absolute)
        out[name] = {
            "second_half_mean": round(mean, 2),
            "rise": round(rise, 2),
            "allowed": round(allowed, 2),
            "verdict": "growing" if rise > allowed else "stable",
        }
    growing = [k for k, v in out.items() if v["verdict"] == "growing"]
    out["overall"] = "growing: " + ", ".join(growing) if growing else "stable"
    return out


def write_trace(out: Path, samples: list[Sample], meta: dict[str, Any]) -> None:
    rows = [vars(s) for s in samples]
    with open(out / "trace.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (out / "trace.json").write_text(json.dumps({**meta, "samples": rows}, indent=1))


def plot(out: Path, samples: list[Sample], title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = [s.t / 60 for s in samples]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    (rss, files), (lat, rate) = axes
    rss.plot(minutes, [s.rss_mib for s in samples], color="tab:blue")
    rss.set_title("broker RSS (MiB)")
    rss.set_ylim(bottom=0)
    files.plot(minutes, [s.open_files for s in samples], label="open files", color="tab:green")
    files.plot(minutes, [s.threads for s in samples], label="threads", color="tab:purple")
    files.set_title("open files and threads")
    files.set_ylim(bottom=0)
    files.legend(loc="lower right")
    lat.plot(minutes, [s.acks1_p99_ms for s in samples], label="produce acks=1 p99")
    lat.plot(minutes, [s.acksall_p99_ms for s in samples], label="produce acks=all p99")
    lat.plot(minutes, [s.probe_p99_ms for s in samples], label="ApiVersions probe p99")
    lat.plot(
        minutes,
        [s.acks1_rtt_p99_ms for s in samples],
        label="acks=1 broker round trip p99 (librdkafka)",
        linestyle="--",
    )
    lat.plot(
        minutes,
        [s.acks1_queued_p99_ms for s in samples],
        label="acks=1 time in client queues p99 (librdkafka)",
        linestyle=":",
    )
    lat.set_title("latency per interval (ms)")
    lat.set_ylim(bottom=0)
    lat.legend(loc="upper left", fontsize="small")
    lat.set_xlabel("minutes")
    pairs = list(itertools.pairwise(samples))
    produced = [(b.produced - a.produced) / (b.t - a.t) for a, b in pairs]
    consumed = [(b.consumed - a.consumed) / (b.t - a.t) for a, b in pairs]
    cpu = [100 * (b.cpu_s - a.cpu_s) / (b.t - a.t) for a, b in pairs]
    rate.plot(minutes[1:], produced, label="produced records/s")
    rate.plot(minutes[1:], consumed, label="consumed records/s")
    rate.set_title("throughput (records/s) and broker CPU (%)")
    rate.set_ylim(bottom=0)
    rate.set_xlabel("minutes")
    cpu_axis = rate.twinx()
    cpu_axis.plot(minutes[1:], cpu, color="tab:red", linestyle=":", label="CPU %")
    cpu_axis.set_ylim(bottom=0)
    lines = rate.get_legend_handles_labels()
    more = cpu_axis.get_legend_handles_labels()
    rate.legend(lines[0] + more[0], lines[1] + more[1], loc="lower right", fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    path = out / "soak.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def api_versions_frame() -> bytes:
    header = RequestHeader(APIS_BY_NAME["ApiVersions"].key, 0, 1, "soak")
    return encode_request(header, make_request("ApiVersions"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m soak.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=None, help="seconds between samples")
    parser.add_argument("--out", type=Path, default=Path("soak-out"))
    parser.add_argument("--no-tls", action="store_true", help="leave out the TLS churn")
    args = parser.parse_args(argv)
    seconds = args.minutes * 60
    interval = args.interval or max(2.0, seconds / 180)
    soak = Soak(args.out, seconds, interval, tls=not args.no_tls)
    print(f"soak: {args.minutes:g} min, a sample every {interval:g} s, output in {args.out}")
    samples = soak.run(log=lambda line: print(line, flush=True))
    result = verdict(samples)
    meta = {"minutes": args.minutes, "interval_s": interval, "verdict": result}
    write_trace(args.out, samples, meta)
    title = f"kafkacore soak, {args.minutes:g} min: {result['overall']}"
    png = plot(args.out, samples, title)
    for name, v in result.items():
        if name != "overall":
            print(
                f"{name:>15}: {v['verdict']:8} second-half mean {v['second_half_mean']:9.2f}, "
                f"rise {v['rise']:8.2f} (allowed {v['allowed']:.2f})"
            )
    print(f"verdict: {result['overall']}; trace {args.out}/trace.csv, plot {png}")
    return 0 if result["overall"] == "stable" and samples[-1].errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
