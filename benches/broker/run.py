"""Side-by-side broker benchmark: Apache Kafka 4.3.1 (single-node KRaft, from the jars
fetched by ``scripts/kafka-jars.sh``) against kafkacore (``kafkacore server-start``), one
after the other on the same machine, loopback only.

    make bench-broker                              # builds, then runs this
    .venv/bin/python benches/broker/run.py [--quick] [--seconds 5] [--no-profile]
    .venv/bin/python benches/broker/run.py --cases ssl,sasl_ssl --seconds 10  # TLS cases only
    .venv/bin/python benches/broker/run.py --cases txn --seconds 10  # transactions only
    .venv/bin/python benches/broker/run.py --cases scaling  # 1 core vs 2 cores only
    make bench-broker ARGS="--half-load-reps 5 --half-load-seconds 10"  # longer latency runs
    .venv/bin/python benches/broker/run.py --cases light,light_scaling,spread  # C generator only

For each broker: start it with its data in a temp dir, wait until it answers, then for each
case of the matrix (record size 1 KiB / 100 B x acks=1 / acks=all x 1 / 6 partitions;
batch.size 64 KiB, linger.ms 5, no compression) and of the security cases (1 KiB, acks=1,
6 partitions over SSL and over SASL_SSL with SCRAM-SHA-512, or PLAIN with
``--sasl-mechanism PLAIN``; ``--cases plaintext`` adds the same case without TLS) create a
fresh topic with the admin client and measure

* ``peak``: Kafka's own ``org.apache.kafka.tools.ProducerPerformance`` with
  ``--throughput -1`` (records/s, MB/s, p50/p99/p99.9 latency from its final line);
* ``half_load``: ProducerPerformance throttled to half of *Kafka's* peak records/s of the
  case, ``--half-load-reps`` times (3), to compare p50/p99/p99.9 latency below saturation:
  the median of each percentile over the runs and the p99's range (if kafkacore's own peak
  is below that rate, it runs saturated and says so);
* ``confluent``: a confluent-kafka (librdkafka) producer in this process, as a second
  opinion (latency from the delivery reports);
* ``consume``: confluent-kafka consumer with ``assign()`` from offset 0, reading back
  everything the case's produce runs wrote;
* ``consumer_perf``: Kafka's own ``ConsumerPerformance`` (kafka-consumer-perf-test)
  subscribing with a new consumer group, reading the same records (its rate without the
  group join);

and, for the peak produce run and both consume runs, the broker process's CPU seconds
(user + system from ``/proc/<pid>/stat``, all its threads) per GiB moved
(``broker_cpu_s_per_gib``): what the broker spends per byte, which decides how it scales
on a bigger machine and does not depend on how loaded this one is.

and, as its own case set (``fetch``, in the default), one topic (1 KiB, 6 partitions)
filled once, then read from offset 0 over PLAINTEXT, SSL and SASL_SSL in turn, twice, with
the same consumer: over TLS neither broker can use sendfile, so this isolates the TLS
fetch path.

The transactional case (``txn``, in the default): a confluent-kafka transactional
producer (``transactional.id``, so idempotent and acks=all) writes 1 KiB records to a
6-partition topic in transactions of 1000 records (``--txn-records``), each committed
with ``commit_transaction()``, for ``--seconds`` after a warm-up run of half
``--warmup``; reported: records/s and MiB/s over the whole run (commits included), the
commit latency (p50/p99 of ``commit_transaction()``), and a read back of the topic under
read_committed (librdkafka's default isolation) that must see every committed record.

The scaling case (``scaling``, in the default): each broker started pinned to one core
(``taskset -c 0``), then to two (``-c 0,1``), a warm-up, a peak ProducerPerformance run
and a confluent-kafka read back of 1 KiB, acks=1, 6 partitions each time (clients not
pinned): records/s and CPU s/GiB per pinning and the two-core/one-core ratio.

The light generator's cases (``light``, ``light_scaling``, ``spread``, in the default; see
``light.py``): ``rdkafka_bench`` (C, librdkafka, built by the bench) pinned to cpu 1 and each
broker started pinned to cpu 0; for each case of the matrix (plaintext), produce as fast as
it goes then read it all back, with the broker's CPU time and system calls (``perf stat``)
per Produce or Fetch request; the same case 1 KiB, acks=1, 6 partitions on a broker pinned
to cpus 0,1 (``light_scaling``: one core against two, the generator sharing cpu 1); and
1 KiB records produced round-robin over 6, 1,000 and 10,000 partitions
(``--spread-partitions``; topics of at most 1,000), then read back (``spread``).

**Repetitions.** Everything runs ``--reps`` times (3; 1 with ``--quick``), Kafka then
kafkacore each time, every case set on fresh brokers; the tables show the medians, the JSON
keeps every run (``runs``) and, per compared cell (``cells``), the median of each broker, its
range over the runs, kafkacore / Kafka and whether the cell is met: at least Kafka's rate, at
most its CPU, system calls or latency. A cell counts as met only when it was met in this run
and in the previous full run (all case sets, 3 or more repetitions, not ``--quick``), read
from the report this run replaces.

Record counts are scaled so each measurement runs about ``--seconds`` (a warm-up run per
broker and record size estimates the rate). After kafkacore's matrix in the last
repetition, one more produce run (1 KiB, acks=1, 1 partition, on a fresh kafkacore) is
sampled with py-spy (installed into the venv if missing) and the top frames are
summarised. Everything is printed as a table and written to
``benches/results/broker_vs_kafka.json`` (``broker_vs_kafka_quick.json`` with ``--quick``;
collapsed py-spy stacks next to it). All processes and temp dirs are removed at the end,
also on errors and Ctrl-C.

The security cases run against both brokers started with three listeners (PLAINTEXT, SSL,
SASL_SSL) and the same certificates, generated at bench time into a temp dir (see
``security.py``): Kafka's SCRAM user comes from ``kafka-storage format --add-scram``,
kafkacore's from AlterUserScramCredentials. A listener that does not work fails its own
cases only. Without the matrix the report goes to ``broker_vs_kafka_<cases>.json``.
"""

from __future__ import annotations

import argparse
import base64
import collections
import contextlib
import functools
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benches"))  # run as a script: benches/_common.py
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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benches/broker/security.py
import light  # noqa: E402  (benches/broker/light.py: the C load generator)
from security import MECHANISMS, PROTOCOLS, Security, make_security  # noqa: E402

RESULTS = REPO / "benches" / "results"
BATCH_SIZE = 65536
LINGER_MS = 5
PYSPY_RATE = 100
STEADY_LINE = re.compile(
    r"(\d+) steady state records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), "
    r"([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, "
    r"(\d+) ms 99th, (\d+) ms 99.9th"
)
PERF_LINE = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th"
)

# Everything to undo at exit: processes (terminated, then killed) and temp dirs.
_PROCS: list[subprocess.Popen[bytes]] = []
_TMPDIRS: list[Path] = []


def spawn(args: list[str], out: Path, **kw: Any) -> subprocess.Popen[bytes]:
    with out.open("ab") as f:
        proc = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, **kw)
    _PROCS.append(proc)
    return proc


def stop(proc: subprocess.Popen[bytes], timeout: float = 30) -> int | None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    if proc in _PROCS:
        _PROCS.remove(proc)
    return proc.returncode


def cleanup() -> None:
    for proc in list(_PROCS):
        with contextlib.suppress(Exception):
            stop(proc, 15)
    for d in list(_TMPDIRS):
        shutil.rmtree(d, ignore_errors=True)
        _TMPDIRS.remove(d)


def discard(broker: Broker) -> None:
    """Delete a stopped broker's directory (its logs: GBs after the cases) and write back
    what is dirty: the next broker then runs without the last one's files in the page
    cache and their writeback on the disk (the second broker of a run used to)."""
    home = broker.logfile.parent
    shutil.rmtree(home, ignore_errors=True)
    if home in _TMPDIRS:
        _TMPDIRS.remove(home)
    os.sync()


def mktemp(prefix: str) -> Path:
    d = Path(tempfile.mkdtemp(prefix=prefix))
    _TMPDIRS.append(d)
    return d


# --------------------------------------------------------------------------- brokers


@dataclass
class Broker:
    name: str
    bootstrap: str  # the PLAINTEXT listener: admin calls and readiness
    proc: subprocess.Popen[bytes]
    logfile: Path
    security: Security | None = None
    listeners: dict[str, str] = field(default_factory=dict)  # security protocol -> host:port
    unavailable: dict[str, str] = field(default_factory=dict)  # protocol -> why it fails

    def tail(self) -> str:
        return self.logfile.read_text(errors="replace")[-3000:]

    def address(self, protocol: str) -> str:
        if protocol == "PLAINTEXT":
            return self.bootstrap
        if protocol not in self.listeners:
            raise RuntimeError(f"{self.name} was started without a {protocol} listener")
        if protocol in self.unavailable:
            raise RuntimeError(f"{protocol} unavailable: {self.unavailable[protocol]}")
        return self.listeners[protocol]

    def check_listeners(self, timeout: float = 20) -> None:
        """Connect through every secured listener; what fails is noted in ``unavailable`` (its
        cases then fail at once, the others still run)."""
        self.unavailable = {}
        for protocol in self.listeners:
            if protocol == "PLAINTEXT":
                continue
            try:
                wait_ready(self, timeout, protocol)
            except Exception as exc:
                self.unavailable[protocol] = str(exc).splitlines()[0]
                log(f"{self.name}: {protocol} does not work: {self.unavailable[protocol]}")


def listener_ports(security: Security | None) -> dict[str, int]:
    return {p: free_port() for p in (PROTOCOLS if security else ("PLAINTEXT",))}


def listener_configs(ports: dict[str, int], security: Security | None) -> dict[str, str]:
    if security is not None:
        return security.broker_configs(ports)
    return {"listeners": f"PLAINTEXT://localhost:{ports['PLAINTEXT']}"}


def pinned(cpus: str | None) -> list[str]:
    """The command prefix pinning a broker to ``cpus`` (``taskset -c``), or nothing."""
    return ["taskset", "-c", cpus] if cpus else []


def start_kafka(
    libs: Path,
    security: Security | None = None,
    cpus: str | None = None,
    extra: dict[str, str] | None = None,
) -> Broker:
    """Kafka (KRaft, one node) from ``libs``; ``extra``: more broker configs."""
    tmp = mktemp("kafkacore-bench-kafka-")
    ports, cport = listener_ports(security), free_port()
    port = ports["PLAINTEXT"]
    configs = listener_configs(ports, security) | (extra or {})
    configs.setdefault("advertised.listeners", configs["listeners"])
    configs["listeners"] += f",CONTROLLER://localhost:{cport}"
    configs["listener.security.protocol.map"] = (
        configs.get("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT")
        + ",CONTROLLER:PLAINTEXT"
    )
    configs["inter.broker.listener.name"] = "PLAINTEXT"
    props = tmp / "server.properties"
    props.write_text(
        "\n".join(
            [
                "process.roles=broker,controller",
                "node.id=1",
                f"controller.quorum.voters=1@localhost:{cport}",
                *(f"{k}={v}" for k, v in configs.items()),
                "controller.listener.names=CONTROLLER",
                f"log.dirs={tmp / 'data'}",
                "num.partitions=1",
                "default.replication.factor=1",
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                "auto.create.topics.enable=true",
                "",
            ]
        )
    )
    cluster_id = "-"
    while cluster_id.startswith("-"):  # kafka-storage would take it for an option
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    cp = ["-cp", f"{libs}/*"]
    subprocess.run(
        [
            "java",
            *TOOL_JVM,
            *cp,
            "kafka.tools.StorageTool",
            "format",
            "-t",
            cluster_id,
            "-c",
            str(props),
            *(security.kafka_add_scram() if security else []),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    logfile = tmp / "kafka.log"
    proc = spawn(
        [
            *pinned(cpus),
            "java",
            *KAFKA_JVM,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            *cp,
            "kafka.Kafka",
            str(props),
        ],
        logfile,
    )
    broker = Broker(
        "kafka",
        f"localhost:{port}",
        proc,
        logfile,
        security,
        {p: f"localhost:{n}" for p, n in ports.items()},
    )
    wait_ready(broker)
    broker.check_listeners()
    return broker


def start_kafkacore(
    security: Security | None = None,
    python_dir: Path | None = None,
    cpus: str | None = None,
    extra: dict[str, str] | None = None,
) -> Broker:
    """A kafkacore broker (``server-start``); ``extra``: more broker configs."""
    tmp = mktemp("kafkacore-bench-kc-")
    ports = listener_ports(security)
    configs = (
        listener_configs(ports, security)
        | {
            "log.dirs": str(tmp / "data"),
            # as Kafka is started above: a consumer group's first join is not held 3 s
            "group.initial.rebalance.delay.ms": "0",
        }
        | (extra or {})
    )
    overrides = [arg for k, v in configs.items() for arg in ("--override", f"{k}={v}")]
    logfile = tmp / "kafkacore.log"
    proc = spawn(
        [
            *pinned(cpus),
            sys.executable,
            "-m",
            "kafkacore.cli",
            "server-start",
            str(REPO / "config" / "server.properties"),
            *overrides,
        ],
        logfile,
        cwd=tmp,
        # this checkout's kafkacore (or --kafkacore-python's), also when the venv's editable
        # install is another checkout's
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(python_dir or REPO / "python"), os.environ.get("PYTHONPATH")])
            ),
        },
    )
    broker = Broker(
        "kafkacore",
        f"localhost:{ports['PLAINTEXT']}",
        proc,
        logfile,
        security,
        {p: f"localhost:{n}" for p, n in ports.items()},
    )
    wait_ready(broker)
    scram_error = None
    if security is not None:
        # Kafka got its SCRAM user from kafka-storage format; kafkacore through the API.
        try:
            security.create_scram_user(broker.bootstrap)
        except Exception as exc:
            scram_error = f"creating the SCRAM user failed: {exc}"
    broker.check_listeners()
    if scram_error is not None:
        broker.unavailable["SASL_SSL"] = scram_error
    return broker


def client_conf(broker: Broker, protocol: str = "PLAINTEXT") -> dict[str, Any]:
    conf = {"bootstrap.servers": broker.address(protocol), "broker.address.family": "v4"}
    if broker.security is not None:
        conf |= broker.security.confluent_conf(protocol)
    return conf


def wait_ready(broker: Broker, timeout: float = 90, protocol: str = "PLAINTEXT") -> None:
    from confluent_kafka.admin import AdminClient

    errors: list[str] = []
    conf: dict[str, Any] = {**client_conf(broker, protocol), "log_level": 0}
    conf["error_cb"] = lambda e: errors.append(str(e))
    admin = AdminClient(conf)
    deadline = time.monotonic() + timeout
    while True:
        if broker.proc.poll() is not None:
            raise RuntimeError(f"{broker.name} exited {broker.proc.returncode}:\n{broker.tail()}")
        try:
            md = admin.list_topics(timeout=2)
            if md.brokers:
                return
        except Exception as e:
            errors.append(str(e))
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{broker.name} did not answer on {protocol} within {timeout} s "
                f"(client errors: {errors[-3:]}):\n{broker.tail()}"
            )
        time.sleep(0.2)


def create_topic(broker: Broker, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(client_conf(broker))
    # a topic of a thousand partitions takes a broker seconds to create and lead
    wait_s = 30 + partitions / 20
    fut = admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=wait_s)[topic]
    fut.result(2 * wait_s)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=5).topics.get(topic)
        ready = md is not None and md.error is None and len(md.partitions) == partitions
        if ready and all(p.leader >= 0 for p in md.partitions.values()):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{broker.name}: topic {topic} has no leaders after {wait_s:.0f} s")


# --------------------------------------------------------------------------- load


@dataclass(frozen=True)
class Case:
    size: int
    acks: str
    partitions: int
    protocol: str = "PLAINTEXT"

    @property
    def name(self) -> str:
        size = "1KiB" if self.size == 1024 else f"{self.size}B"
        proto = "" if self.protocol == "PLAINTEXT" else f" {self.protocol}"
        return f"{size} acks={self.acks} p={self.partitions}{proto}"

    def topic(self, broker: str, tag: str = "") -> str:
        proto = "" if self.protocol == "PLAINTEXT" else f"-{self.protocol.lower()}"
        return f"bench-{broker}-{self.size}-{self.acks}-{self.partitions}{proto}{tag}"


def producer_perf(
    libs: Path,
    broker: Broker,
    topic: str,
    case: Case,
    records: int,
    throughput: float,
    warmup_records: int = 0,
) -> dict[str, Any]:
    """Kafka's ``ProducerPerformance``. ``warmup_records``: its ``--warmup-records`` (the
    first records, sent while the producer's JVM and connections warm up, are left out of
    a second, steady-state summary); the figures are then the steady state's, the whole
    run's under ``whole_run``."""
    args = ["java", *TOOL_JVM, "-cp", f"{libs}/*", "org.apache.kafka.tools.ProducerPerformance"]
    args += ["--topic", topic, "--num-records", str(records), "--record-size", str(case.size)]
    if warmup_records > 0:
        args += ["--warmup-records", str(warmup_records)]
    config = broker.security.java_client_config_file(case.protocol) if broker.security else None
    if config is not None:
        args += ["--command-config", str(config)]
    args += ["--throughput", str(int(throughput)), "--command-property"]
    args += [
        f"bootstrap.servers={broker.address(case.protocol)}",
        f"acks={case.acks}",
        f"batch.size={BATCH_SIZE}",
        f"linger.ms={LINGER_MS}",
    ]
    expect = records / max(throughput, 1) if throughput > 0 else 60
    started = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=max(120, 6 * expect))
    wall = time.monotonic() - started
    matches = PERF_LINE.findall(proc.stdout)
    if proc.returncode != 0 or not matches:
        raise RuntimeError(
            f"ProducerPerformance exited {proc.returncode}:\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    steady = STEADY_LINE.findall(proc.stdout) if warmup_records > 0 else []
    measured = steady[-1] if steady else matches[-1]
    return {
        "tool": "ProducerPerformance",
        **(
            {"warmup_records": warmup_records, "whole_run": _perf_figures(matches[-1])}
            if steady
            else {}
        ),
        **_perf_figures(measured),
        "target_records_per_s": throughput if throughput > 0 else None,
        "wall_s": round(wall, 2),
    }


def _perf_figures(match: tuple[str, ...]) -> dict[str, Any]:
    """One summary line of ProducerPerformance (the whole run's or the steady state's)."""
    sent, rps, mbps, avg, mx, p50, p95, p99, p999 = match
    return {
        "records": int(sent),
        "records_per_s": float(rps),
        "mb_per_s": float(mbps),  # MiB/s, as ProducerPerformance computes it
        "latency_ms": {
            "avg": float(avg),
            "max": float(mx),
            "p50": int(p50),
            "p95": int(p95),
            "p99": int(p99),
            "p99.9": int(p999),
        },
    }


def percentile(sorted_vals: list[float], q: float) -> float:
    if not sorted_vals:
        return float("nan")
    return sorted_vals[min(len(sorted_vals) - 1, int(q * len(sorted_vals)))]


def with_cpu(broker: Broker, nbytes: Any, measure: Any) -> dict[str, Any]:
    """``measure()``'s result plus the broker's CPU seconds during it and those per GiB
    moved (``nbytes(result)`` bytes)."""
    before = cpu_seconds(broker.proc.pid)
    res: dict[str, Any] = measure()
    used = cpu_seconds(broker.proc.pid) - before
    moved = nbytes(res)
    res["broker_cpu_s"] = round(used, 3)
    res["broker_cpu_s_per_gib"] = round(used / (moved / 2**30), 3) if moved else None
    return res


def confluent_produce(broker: Broker, topic: str, case: Case, seconds: float) -> dict[str, Any]:
    from confluent_kafka import KafkaException, Producer

    producer = Producer(
        {
            **client_conf(broker, case.protocol),
            "acks": case.acks if case.acks != "all" else -1,
            "batch.size": BATCH_SIZE,
            "linger.ms": LINGER_MS,
            # 32 MiB of buffer like the Java producer's buffer.memory: at saturation the
            # latency is then queueing in a comparable buffer, not in an unbounded one.
            "queue.buffering.max.kbytes": 32768,
        }
    )
    payload = os.urandom(case.size)
    latencies: list[float] = []
    errors: list[str] = []

    def report(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            latencies.append(msg.latency())

    sent = 0
    produce = producer.produce
    started = time.monotonic()
    end = started + seconds
    while time.monotonic() < end:
        for _ in range(1000):
            try:
                produce(topic, payload, on_delivery=report)
                sent += 1
            except BufferError:
                producer.poll(0.001)
        producer.poll(0)
    left = producer.flush(60)
    elapsed = time.monotonic() - started
    if left or errors:
        raise KafkaException(f"{left} undelivered, errors {errors[:3]}")
    latencies.sort()
    return {
        "tool": "confluent-kafka",
        "records": sent,
        "records_per_s": round(sent / elapsed, 1),
        "mb_per_s": round(sent * case.size / elapsed / 2**20, 2),
        "latency_ms": {
            k: round(percentile(latencies, q) * 1000, 1)
            for k, q in (("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999))
        },
    }


def confluent_consume(
    broker: Broker,
    topic: str,
    partitions: int,
    limit: int,
    seconds: float,
    protocol: str = "PLAINTEXT",
) -> dict[str, Any]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(
        {
            **client_conf(broker, protocol),
            # librdkafka insists on a group.id; assign() with explicit offsets never joins
            # or commits, so no group coordinator is needed.
            "group.id": "bench-assign",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        count = nbytes = 0
        first = None
        deadline = time.monotonic() + max(30, 4 * seconds)
        while count < limit and time.monotonic() < deadline:
            for msg in consumer.consume(10000, 1.0):
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                if first is None:
                    first = time.monotonic()
                count += 1
                nbytes += len(msg.value())
        elapsed = time.monotonic() - (first or time.monotonic())
    finally:
        consumer.close()
    return {
        "tool": "confluent-kafka assign()",
        "records": count,
        "bytes": nbytes,
        "complete": count >= limit,
        "records_per_s": round(count / elapsed, 1) if elapsed > 0 else None,
        "mb_per_s": round(nbytes / elapsed / 2**20, 2) if elapsed > 0 else None,
    }


CP_HEADER = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg"


def consumer_perf(
    libs: Path, broker: Broker, topic: str, records: int, protocol: str = "PLAINTEXT"
) -> dict[str, Any]:
    """Kafka's own ``org.apache.kafka.tools.ConsumerPerformance`` (kafka-consumer-perf-test):
    a Java consumer subscribing with a fresh consumer group, reading ``records`` records
    from the earliest offset. Its ``fetch.*`` figures exclude the group join (rebalance)
    time, which is reported separately."""
    args = ["java", *TOOL_JVM, "-cp", f"{libs}/*", "org.apache.kafka.tools.ConsumerPerformance"]
    args += ["--bootstrap-server", broker.address(protocol), "--topic", topic]
    args += ["--num-records", str(records), "--group", f"bench-cp-{uuid.uuid4().hex[:12]}"]
    args += ["--timeout", "30000"]
    config = broker.security.java_client_config_file(protocol) if broker.security else None
    if config is not None:
        args += ["--command-config", str(config)]
    started = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    wall = time.monotonic() - started
    lines = proc.stdout.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith(CP_HEADER)]
    if proc.returncode != 0 or not heads or heads[-1] + 1 >= len(lines):
        raise RuntimeError(
            f"ConsumerPerformance exited {proc.returncode}:\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    names = [c.strip() for c in lines[heads[-1]].split(",")]
    values = dict(zip(names, (c.strip() for c in lines[heads[-1] + 1].split(",")), strict=False))
    count = int(values["data.consumed.in.nMsg"])
    mib = float(values["data.consumed.in.MB"])
    return {
        "tool": "ConsumerPerformance (consumer group)",
        "records": count,
        "bytes": int(mib * 2**20),
        "complete": count >= records,
        "records_per_s": float(values["fetch.nMsg.sec"]),
        "mb_per_s": float(values["fetch.MB.sec"]),
        "records_per_s_with_join": float(values["nMsg.sec"]),
        "rebalance_ms": int(values["rebalance.time.ms"]),
        "fetch_ms": int(values["fetch.time.ms"]),
        "wall_s": round(wall, 2),
    }


TXN_CASE = "1KiB acks=all p=6 txn"
TXN_PARTITIONS = 6


def transactional_produce(
    broker: Broker, topic: str, size: int, txn_records: int, seconds: float
) -> dict[str, Any]:
    """Transactions of ``txn_records`` records of ``size`` bytes from one confluent-kafka
    transactional producer for about ``seconds`` (whole transactions: the last one started
    is committed); every record must be acknowledged and every commit succeed."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer(
        {
            **client_conf(broker),
            "transactional.id": f"bench-txn-{uuid.uuid4()}",
            "acks": "all",
            "batch.size": BATCH_SIZE,
            "linger.ms": LINGER_MS,
            "queue.buffering.max.kbytes": 32768,
        }
    )
    producer.init_transactions(60)
    payload = os.urandom(size)
    errors: list[str] = []

    def report(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    commits: list[float] = []
    sent = 0
    produce = producer.produce
    started = time.monotonic()
    end = started + seconds
    while time.monotonic() < end:
        producer.begin_transaction()
        for i in range(txn_records):
            while True:
                try:
                    produce(topic, payload, on_delivery=report)
                    break
                except BufferError:
                    producer.poll(0.001)
            if i % 1000 == 999:
                producer.poll(0)
        before = time.monotonic()
        producer.commit_transaction(60)
        commits.append(time.monotonic() - before)
        sent += txn_records
    elapsed = time.monotonic() - started
    producer.flush(60)
    if errors:
        raise KafkaException(f"errors {errors[:3]}")
    commits.sort()
    return {
        "tool": "confluent-kafka transactional producer",
        "records": sent,
        "transactions": len(commits),
        "records_per_transaction": txn_records,
        "records_per_s": round(sent / elapsed, 1),
        "mb_per_s": round(sent * size / elapsed / 2**20, 2),
        "commit_ms": {
            k: round(percentile(commits, q) * 1000, 1) for k, q in (("p50", 0.5), ("p99", 0.99))
        },
    }


def run_txn(broker: Broker, txn_records: int, seconds: float, warmup_s: float) -> dict[str, Any]:
    """The transactional case against one broker: a warm-up run on its own topic, the
    measured run, then the read back under read_committed."""
    warm = f"bench-{broker.name}-txn-warmup"
    create_topic(broker, warm, TXN_PARTITIONS)
    transactional_produce(broker, warm, 1024, txn_records, max(1.0, warmup_s / 2))
    topic = f"bench-{broker.name}-txn"
    create_topic(broker, topic, TXN_PARTITIONS)
    res: dict[str, Any] = {
        "produce": transactional_produce(broker, topic, 1024, txn_records, seconds)
    }
    written = res["produce"]["records"]
    res["consume_read_committed"] = confluent_consume(
        broker, topic, TXN_PARTITIONS, written, seconds
    )
    if not res["consume_read_committed"]["complete"]:
        raise RuntimeError(
            f"read_committed read back {res['consume_read_committed']['records']} of "
            f"{written} committed records"
        )
    pr = res["produce"]
    log(
        f"{broker.name} {TXN_CASE}: {pr['records_per_s']:,.0f} rec/s {pr['mb_per_s']} MiB/s, "
        f"{pr['transactions']} transactions, commit p50 {pr['commit_ms']['p50']} ms "
        f"p99 {pr['commit_ms']['p99']} ms | read_committed "
        f"{res['consume_read_committed']['records_per_s'] or 0:,.0f} rec/s"
    )
    return res


def txn_table(txn: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    hdr = (
        f"{'case':<24} {'broker':<9} {'rec/s':>10} {'MiB/s':>7} {'txns':>6} {'commit p50':>10}"
        f" {'p99':>6} | {'rc cons rec/s':>13}"
    )
    lines = [hdr, "-" * len(hdr)]
    for b in ("kafka", "kafkacore"):
        r = txn.get(b)
        if r is None:
            continue
        if "error" in r:
            first = r["error"].strip().splitlines()[0] if r["error"].strip() else "?"
            lines.append(f"{TXN_CASE:<24} {b:<9} FAILED: {first[:90]}")
            continue
        pr, co = r["produce"], r["consume_read_committed"]
        lines.append(
            f"{TXN_CASE:<24} {b:<9} {pr['records_per_s']:>10,.0f} {pr['mb_per_s']:>7.1f}"
            f" {pr['transactions']:>6} {pr['commit_ms']['p50']:>10} {pr['commit_ms']['p99']:>6}"
            f" | {co['records_per_s'] or 0:>13,.0f}"
        )
    ratios: dict[str, Any] = {}
    k, c = txn.get("kafka"), txn.get("kafkacore")
    if k and c and "error" not in k and "error" not in c:
        ratios = {
            "case": TXN_CASE,
            "records_per_s": ratio(c["produce"]["records_per_s"], k["produce"]["records_per_s"]),
            "commit_p50": ratio(c["produce"]["commit_ms"]["p50"], k["produce"]["commit_ms"]["p50"]),
            "commit_p99": ratio(c["produce"]["commit_ms"]["p99"], k["produce"]["commit_ms"]["p99"]),
            "consume_read_committed_records_per_s": ratio(
                c["consume_read_committed"]["records_per_s"],
                k["consume_read_committed"]["records_per_s"],
            ),
        }
        lines.append(
            f"{'':<24} {'kc/kafka':<9} {ratios['records_per_s']:>9}x {'':>7} {'':>6}"
            f" {ratios['commit_p50'] or '-':>9}x {ratios['commit_p99'] or '-':>5}x"
            f" | {ratios['consume_read_committed_records_per_s']:>12}x"
        )
    lines.append(
        "transactions of 1000 records (1 KiB, acks=all) from one confluent-kafka transactional "
        "producer; commit = commit_transaction() latency in ms; rc cons = read back under "
        "read_committed"
    )
    return "\n".join(lines), ratios


def fill_topic(broker: Broker, topic: str, size: int, records: int) -> None:
    """``records`` records of ``size`` bytes through the PLAINTEXT listener (acks=1)."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer(
        {
            **client_conf(broker),
            "acks": 1,
            "batch.size": BATCH_SIZE,
            "linger.ms": LINGER_MS,
            "queue.buffering.max.kbytes": 65536,
        }
    )
    payload = os.urandom(size)
    for _ in range(records):
        while True:
            try:
                producer.produce(topic, payload)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(120):
        raise KafkaException(f"{broker.name}: records left undelivered filling {topic}")


def fetch_over_protocols(
    broker: Broker, records: int, rounds: int, seconds: float
) -> dict[str, Any]:
    """The TLS fetch path alone: one topic (1 KiB, 6 partitions) filled once, then read from
    offset 0 over PLAINTEXT, SSL and SASL_SSL in turn, ``rounds`` times (the first round
    also warms Kafka's JIT up). Over TLS neither broker can use sendfile."""
    topic = f"bench-{broker.name}-fetch"
    create_topic(broker, topic, 6)
    fill_topic(broker, topic, 1024, records)
    out: dict[str, Any] = {"records": records, "partitions": 6, "record_size": 1024}
    for protocol in PROTOCOLS:
        out[protocol] = {"rounds": []}
    for _ in range(rounds):
        for protocol in PROTOCOLS:
            if protocol in broker.unavailable:
                out[protocol]["error"] = broker.unavailable[protocol]
                continue
            try:
                r = with_cpu(
                    broker,
                    lambda r: r["bytes"],
                    functools.partial(
                        confluent_consume, broker, topic, 6, records, seconds, protocol
                    ),
                )
            except Exception as exc:
                out[protocol]["error"] = str(exc)[-2000:]
                continue
            out[protocol]["rounds"].append(r)
    for protocol in PROTOCOLS:
        done = [r for r in out[protocol]["rounds"] if r["records_per_s"]]
        if done:
            best = max(done, key=lambda r: r["records_per_s"])
            out[protocol] |= {k: best[k] for k in ("records_per_s", "mb_per_s", "complete")}
            out[protocol]["rounds_records_per_s"] = [r["records_per_s"] for r in done]
            out[protocol]["broker_cpu_s_per_gib"] = min(
                (r["broker_cpu_s_per_gib"] for r in done if r.get("broker_cpu_s_per_gib")),
                default=None,
            )
    log(
        f"{broker.name} fetch (best of {rounds}): "
        + ", ".join(
            f"{p} {out[p].get('records_per_s') or 0:,.0f} rec/s"
            f" (rounds {', '.join(f'{v:,.0f}' for v in out[p].get('rounds_records_per_s', []))})"
            for p in PROTOCOLS
        )
    )
    return out


def fetch_table(fetch: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    any_run = next(iter(fetch.values()))
    hdr = (
        f"fetch of {any_run['records']:,} x 1 KiB records, 6 partitions, confluent-kafka assign()"
        f" from offset 0 (best of the rounds; MiB/s)"
    )
    cols = f"{'broker':<9} " + " ".join(f"{p + ' rec/s':>19}" for p in PROTOCOLS)
    cols += f" {'SSL/PLAIN':>10} {'SASL_SSL/PLAIN':>15}"
    lines = [hdr, cols, "-" * len(cols)]

    def rate(b: str, p: str) -> float | None:
        v = fetch.get(b, {}).get(p, {}).get("records_per_s")
        return float(v) if v else None

    for b, r in fetch.items():
        cells = []
        for p in PROTOCOLS:
            v, mb = rate(b, p), r[p].get("mb_per_s")
            cells.append(f"{v:>10,.0f} ({mb:>6.1f})" if v else f"{'FAILED':>19}")
        plain = rate(b, "PLAINTEXT")
        ssl_ratio = ratio(rate(b, "SSL"), plain)
        sasl_ratio = ratio(rate(b, "SASL_SSL"), plain)
        lines.append(f"{b:<9} {' '.join(cells)} {ssl_ratio or '-':>9}x {sasl_ratio or '-':>14}x")

    def cpu(b: str, p: str) -> float | None:
        v = fetch.get(b, {}).get(p, {}).get("broker_cpu_s_per_gib")
        return float(v) if v else None

    for b in fetch:
        lines.append(
            f"{b + ' cpu':<9} "
            + " ".join(f"{_cell(cpu(b, p), 13, '.2f')} s/GiB" for p in PROTOCOLS)
        )
    ratios: dict[str, Any] = {p: ratio(rate("kafkacore", p), rate("kafka", p)) for p in PROTOCOLS}
    ratios |= {f"{p}_cpu_s_per_gib": ratio(cpu("kafkacore", p), cpu("kafka", p)) for p in PROTOCOLS}
    if "kafka" in fetch and "kafkacore" in fetch:
        lines.append(f"{'kc/kafka':<9} " + " ".join(f"{ratios[p] or '-':>18}x" for p in PROTOCOLS))
        lines.append(
            f"{'cpu kc/k':<9} "
            + " ".join(f"{ratios[p + '_cpu_s_per_gib'] or '-':>18}x" for p in PROTOCOLS)
        )
    lines.append("cpu = the broker's CPU seconds per GiB read (the lowest of the rounds)")
    return "\n".join(lines), ratios


# --------------------------------------------------------------------------- scaling

SCALING_CASE = Case(1024, "1", 6)
SCALING_CPUS = ("0", "0,1")


def run_scaling(
    libs: Path, name: str, seconds: float, warmup_s: float, python_dir: Path | None
) -> dict[str, Any]:
    """How one broker uses more cores: started pinned to one core (``taskset -c 0``),
    then to two (``-c 0,1``), each time a warm-up, a peak ProducerPerformance run and a
    confluent-kafka read back of :data:`SCALING_CASE` (1 KiB, acks=1, 6 partitions); the
    clients are not pinned. Reported per pinning: records/s and the broker's CPU seconds
    per GiB, and the two-core/one-core throughput ratios."""
    case = SCALING_CASE
    out: dict[str, Any] = {"case": case.name}
    for cpus in SCALING_CPUS:
        broker = start_kafka(libs, cpus=cpus) if name == "kafka" else None
        if broker is None:
            broker = start_kafkacore(python_dir=python_dir, cpus=cpus)
        try:
            res = scaling_run(libs, broker, f"-{len(cpus)}", seconds, warmup_s)
            out[f"cpus {cpus}"] = res
            log(
                f"{name} pinned to cpus {cpus}: produce {res['produce']['records_per_s']:,.0f} "
                f"rec/s, consume {res['consume']['records_per_s'] or 0:,.0f} rec/s"
            )
        except Exception as exc:
            log(f"{name} scaling with cpus {cpus} failed: {exc}")
            out[f"cpus {cpus}"] = {"error": str(exc)[-3000:]}
        finally:
            stop(broker.proc)
            discard(broker)
    one, two = (out.get(f"cpus {c}", {}) for c in SCALING_CPUS)
    out["two_over_one_core"] = {
        k: ratio(_get(two, k, "records_per_s"), _get(one, k, "records_per_s"))
        for k in ("produce", "consume")
    }
    return out


def scaling_run(
    libs: Path, broker: Broker, tag: str, seconds: float, warmup_s: float
) -> dict[str, Any]:
    """One pinning of :func:`run_scaling`: warm-up, peak produce, read back."""
    case = SCALING_CASE
    warm = case.topic(broker.name, f"-scale-warm{tag}")
    create_topic(broker, warm, case.partitions)
    spent, r = 0.0, producer_perf(libs, broker, warm, case, 50_000, -1)
    while (spent := spent + r["records"] / r["records_per_s"]) < warmup_s / 2:
        n = max(50_000, int(r["records_per_s"] * min(4.0, warmup_s / 2 - spent)))
        r = producer_perf(libs, broker, warm, case, n, -1)
    topic = case.topic(broker.name, f"-scale{tag}")
    create_topic(broker, topic, case.partitions)
    n = max(20_000, int(r["records_per_s"] * seconds))
    res: dict[str, Any] = {
        "produce": with_cpu(
            broker,
            lambda r: r["records"] * case.size,
            lambda: producer_perf(libs, broker, topic, case, n, -1),
        )
    }
    written = res["produce"]["records"]
    res["consume"] = with_cpu(
        broker,
        lambda r: r["bytes"],
        lambda: confluent_consume(broker, topic, case.partitions, written, seconds),
    )
    return res


def scaling_table(scaling: dict[str, dict[str, Any]]) -> str:
    hdr = (
        f"scaling: {SCALING_CASE.name}, broker pinned with taskset (clients not pinned)\n"
        f"{'broker':<9} {'cpus':<5} {'produce rec/s':>13} {'cpu/G':>6} {'consume rec/s':>13}"
        f" {'cpu/G':>6}"
    )
    lines = [hdr, "-" * 58]
    for b, r in scaling.items():
        for cpus in SCALING_CPUS:
            row = r.get(f"cpus {cpus}", {})
            if "error" in row:
                lines.append(f"{b:<9} {cpus:<5} FAILED: {row['error'].strip()[:60]}")
                continue
            lines.append(
                f"{b:<9} {cpus:<5} {_cell(_get(row, 'produce', 'records_per_s'), 13, ',.0f')}"
                f" {_cell(_get(row, 'produce', 'broker_cpu_s_per_gib'), 6, '.2f')}"
                f" {_cell(_get(row, 'consume', 'records_per_s'), 13, ',.0f')}"
                f" {_cell(_get(row, 'consume', 'broker_cpu_s_per_gib'), 6, '.2f')}"
            )
        two = r.get("two_over_one_core", {})
        lines.append(
            f"{b:<9} {'2/1':<5} {_cell(two.get('produce'), 12)}x {'':>6}"
            f" {_cell(two.get('consume'), 12)}x"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- profile


def ensure_py_spy() -> str:
    exe = Path(sys.executable).parent / "py-spy"
    if not exe.exists():
        log("installing py-spy into the venv")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "py-spy"], check=True)
    return str(exe)


def frame_name(frame: str) -> str:
    # "function (path/to/file.py:123)" -> "function (file.py)"
    m = re.match(r"(.*) \((.*?)(?::\d+)?\)$", frame)
    if not m:
        return frame
    fn, path = m.groups()
    parts = Path(path).parts
    short = (
        "/".join(parts[parts.index("kafkacore") :])
        if "kafkacore" in parts
        else parts[-1]
        if parts
        else path
    )
    return f"{fn} ({short})"


def summarise_profile(raw: Path, expected: int, top: int = 15) -> dict[str, Any]:
    """Collapsed stacks of active (non-idle) samples, per thread (``--threads``): the event
    loop thread (the one in ``run_forever``) is the broker; its busy share is its active
    samples over the samples taken (``expected``); the rest is time waiting in epoll."""
    threads: dict[str, list[tuple[list[str], int]]] = collections.defaultdict(list)
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = [f for f in stack.split(";") if f]
        tid = frames[0] if frames[0].startswith(("thread", "process")) else "?"
        body = [frame_name(f) for f in frames if not f.startswith(("thread", "process"))]
        threads[tid].append((body, int(n)))

    def is_loop(stacks: list[tuple[list[str], int]]) -> bool:
        return any("run_forever" in f for body, _ in stacks for f in body)

    loop_tid = next((t for t, st in threads.items() if is_loop(st)), None)
    # With --native, waiting in epoll shows up as an active native frame: count as idle.
    loop = [
        (body, n)
        for body, n in (threads.get(loop_tid, []) if loop_tid else [])
        if not any(f.startswith(("epoll_wait", "EpollSelector.select")) for f in body[-4:])
    ]
    busy = sum(n for _, n in loop)
    self_counts: collections.Counter[str] = collections.Counter()
    incl_counts: collections.Counter[str] = collections.Counter()
    for body, n in loop:
        if body:
            self_counts[body[-1]] += n
        for f in set(body):
            incl_counts[f] += n

    def rows(counter: collections.Counter[str]) -> list[dict[str, Any]]:
        return [
            {"frame": f, "samples": c, "pct_of_busy": round(100 * c / busy, 1) if busy else 0.0}
            for f, c in counter.most_common(top)
        ]

    # Inclusive time of the broker's own code (kafkacore modules and the Rust extension),
    # without the frames every sample passes through (cli, asyncio runner).
    own = collections.Counter(
        {
            f: c
            for f, c in incl_counts.items()
            if ("kafkacore/" in f or "_native" in f) and c < 0.98 * busy
        }
    )
    others = {t: sum(n for _, n in st) for t, st in threads.items() if t != loop_tid}
    return {
        "samples_taken": expected,
        "event_loop_busy_pct": round(100 * busy / expected, 1) if expected else None,
        "other_threads_active_samples": others,
        "top_self": rows(self_counts),
        "top_inclusive_kafkacore": rows(own),
    }


def profile_kafkacore(libs: Path, broker: Broker, rate: float, seconds: float) -> dict[str, Any]:
    pyspy = ensure_py_spy()
    case = Case(1024, "1", 1)
    topic = case.topic(broker.name, "-profile")
    create_topic(broker, topic, 1)
    raw = RESULTS / "kafkacore-produce.txt"
    raw.unlink(missing_ok=True)
    duration = int(seconds)
    records = int(rate * (duration + 4))
    result: dict[str, Any] = {}

    def load() -> None:
        try:
            result.update(producer_perf(libs, broker, topic, case, records, -1))
        except Exception as exc:  # reported below
            result["error"] = str(exc)

    t = threading.Thread(target=load)
    t.start()
    time.sleep(2)  # past the producer JVM's start-up
    spy = py_spy(pyspy, broker, raw, duration)
    t.join()
    if spy.returncode != 0 or not raw.exists():
        return {"error": f"py-spy exited {spy.returncode}: {spy.stderr[-2000:]}", "load": result}
    out = {
        "case": case.name,
        "collapsed_stacks": str(raw.relative_to(REPO)),
        "load_while_sampled": result,
        **summarise_profile(raw, duration * PYSPY_RATE),
    }
    if result.get("records"):
        out["consume"] = profile_consume(pyspy, broker, topic, int(result["records"]), duration)
    return out


def py_spy(
    pyspy: str, broker: Broker, raw: Path, duration: int
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            pyspy,
            "record",
            "--pid",
            str(broker.proc.pid),
            "--duration",
            str(duration),
            "--rate",
            str(PYSPY_RATE),
            "--threads",
            "--native",
            "--format",
            "raw",
            "-o",
            str(raw),
        ],
        capture_output=True,
        text=True,
        timeout=duration + 60,
    )


def profile_consume(
    pyspy: str, broker: Broker, topic: str, records: int, duration: int
) -> dict[str, Any]:
    """py-spy on kafkacore while confluent-kafka consumers read the profile topic from
    offset 0 over and over (1 KiB records, 1 partition, about 1 MiB per fetch)."""
    raw = RESULTS / "kafkacore-consume.txt"
    raw.unlink(missing_ok=True)
    stop_at = time.monotonic() + duration + 1
    reads: list[dict[str, Any]] = []

    def load() -> None:
        with contextlib.suppress(Exception):  # the samples say what was read
            while time.monotonic() < stop_at:
                reads.append(confluent_consume(broker, topic, 1, records, duration))

    t = threading.Thread(target=load)
    t.start()
    time.sleep(0.5)
    spy = py_spy(pyspy, broker, raw, duration)
    t.join()
    if spy.returncode != 0 or not raw.exists():
        return {"error": f"py-spy exited {spy.returncode}: {spy.stderr[-2000:]}"}
    return {
        "case": "1KiB p=1 confluent-kafka consume from offset 0",
        "collapsed_stacks": str(raw.relative_to(REPO)),
        "load_while_sampled": {
            "reads": len(reads),
            "records_per_s": [r["records_per_s"] for r in reads],
        },
        **summarise_profile(raw, duration * PYSPY_RATE),
    }


# --------------------------------------------------------------------------- driver


def run_broker(
    libs: Path,
    broker: Broker,
    cases: list[Case],
    seconds: float,
    warmup_s: float,
    kafka_peaks: dict[str, float],
) -> dict[str, dict[str, Any]]:
    """All cases against one broker; ``{case name: {peak, half_load, confluent, consume}}``
    (``{case name: {error}}`` for a case that failed: the others still run)."""
    rates: dict[tuple[int, str], float] = {}
    for size, protocol in sorted({(c.size, c.protocol) for c in cases}, key=warmup_order):
        if protocol in broker.unavailable:
            continue
        warm = Case(size, "1", 1, protocol)
        topic = warm.topic(broker.name, "-warmup")
        create_topic(broker, topic, 1)
        # Warm-up (the JVM's JIT needs ~1M records to reach steady state; kafkacore gets
        # the same treatment): repeated runs until ~warmup_s of load or a stable rate.
        n, spent, prev, r = 30_000, 0.0, 0.0, {}
        try:
            while spent < warmup_s:
                r = producer_perf(libs, broker, topic, warm, n, -1)
                spent += r["records"] / r["records_per_s"]
                if prev and abs(r["records_per_s"] - prev) < 0.1 * prev and spent > warmup_s / 2:
                    break
                prev = r["records_per_s"]
                n = max(30_000, int(prev * min(4.0, warmup_s - spent)))
        except Exception as exc:
            log(f"{broker.name} warm-up {warm.name} failed: {exc}")
            continue
        rates[size, protocol] = r["records_per_s"]
    out: dict[str, dict[str, Any]] = {}
    for case in cases:
        try:
            out[case.name] = run_case(libs, broker, case, seconds, rates, kafka_peaks)
        except Exception as exc:
            log(f"{broker.name} {case.name} failed: {exc}")
            out[case.name] = {"error": str(exc)[-3000:]}
            if broker.proc.poll() is not None:
                log(f"{broker.name} exited {broker.proc.returncode}:\n{broker.tail()}")
                break
    return out


def warmup_order(key: tuple[int, str]) -> tuple[int, int]:
    return key[0], PROTOCOLS.index(key[1])


def run_case(
    libs: Path,
    broker: Broker,
    case: Case,
    seconds: float,
    rates: dict[tuple[int, str], float],
    kafka_peaks: dict[str, float],
) -> dict[str, Any]:
    broker.address(case.protocol)  # raises if the listener does not work
    if (case.size, case.protocol) not in rates:
        raise RuntimeError(f"no warm-up rate for {case.size} B over {case.protocol}")
    res: dict[str, Any] = {}
    topic = case.topic(broker.name)
    create_topic(broker, topic, case.partitions)
    n = max(20_000, int(rates[case.size, case.protocol] * seconds))
    res["peak"] = with_cpu(
        broker,
        lambda r: r["records"] * case.size,
        lambda: producer_perf(libs, broker, topic, case, n, -1),
    )
    peak = res["peak"]["records_per_s"]
    if res["peak"]["records"] / peak < 0.6 * seconds:
        # the rate estimate (warm-up: 1 partition, maybe a cold JIT) was far too low and the
        # run too short to be a measurement: it was one more warm-up, measure again
        short = res["peak"]
        res["peak"] = with_cpu(
            broker,
            lambda r: r["records"] * case.size,
            lambda: producer_perf(libs, broker, topic, case, int(peak * seconds), -1),
        )
        res["peak"]["discarded_short_run"] = {
            k: short[k] for k in ("records", "records_per_s", "wall_s")
        }
        peak = res["peak"]["records_per_s"]
    rates[case.size, case.protocol] = peak
    target = kafka_peaks.get(case.name, peak) / 2
    saturated = peak < 0.95 * target
    n_half = max(10_000, int(min(target, peak) * (HALF_LOAD["seconds"] or seconds)))
    # the first second's records warm the producer up (its JVM, metadata, connections) and
    # are left out of the percentiles: ProducerPerformance's own --warmup-records
    warm_half = int(min(target, peak) * HALF_LOAD_WARMUP_S)
    sent_half = n_half + warm_half
    reps = [
        producer_perf(libs, broker, topic, case, sent_half, target, warm_half)
        for _ in range(max(1, HALF_LOAD["reps"]))
    ]
    res["half_load"] = half_load_summary(reps, saturated)
    res["confluent"] = confluent_produce(broker, topic, case, seconds)
    # everything the runs wrote (several x --seconds of produce): long enough that the
    # consumer's start-up and first fetches do not dominate the rate
    produced = sum(res[k]["records"] for k in ("peak", "confluent")) + sent_half * len(reps)
    res["consume"] = with_cpu(
        broker,
        lambda r: r["bytes"],
        lambda: confluent_consume(broker, topic, case.partitions, produced, seconds, case.protocol),
    )
    try:
        res["consumer_perf"] = with_cpu(
            broker,
            lambda r: r["bytes"],
            lambda: consumer_perf(libs, broker, topic, produced, case.protocol),
        )
    except Exception as exc:  # reported in its cell; the case's other figures stand
        log(f"{broker.name} {case.name}: ConsumerPerformance failed: {exc}")
        res["consumer_perf"] = {"error": str(exc)[-3000:]}
    hl = res["half_load"]["latency_ms"]
    log(
        f"{broker.name} {case.name}: peak {peak:,.0f} rec/s {res['peak']['mb_per_s']} MiB/s "
        f"p99 {res['peak']['latency_ms']['p99']} ms, {res['peak']['broker_cpu_s_per_gib']} "
        f"CPU s/GiB | half-load p50/p99/p99.9 {hl['p50']}/{hl['p99']}/{hl['p99.9']} ms "
        f"(p99 over {len(reps)} runs {res['half_load']['spread']['p99']})"
        f"{' (saturated)' if saturated else ''} | "
        f"confluent {res['confluent']['records_per_s']:,.0f} rec/s | "
        f"consume {res['consume']['records_per_s'] or 0:,.0f} rec/s "
        f"{res['consume']['broker_cpu_s_per_gib']} CPU s/GiB | ConsumerPerformance "
        f"{res['consumer_perf'].get('records_per_s') or 0:,.0f} rec/s"
    )
    return res


# Repetitions and length of the half-load run (set from the command line in main()).
HALF_LOAD: dict[str, Any] = {"reps": 3, "seconds": None}
# Seconds of records at the start of each half-load run left out of its percentiles.
HALF_LOAD_WARMUP_S = 1.0


def half_load_summary(reps: list[dict[str, Any]], saturated: bool) -> dict[str, Any]:
    """Several half-load runs as one: the median of each percentile over the runs, their
    spread (min, max), and every run."""
    keys = ("p50", "p99", "p99.9")
    med = {k: sorted(r["latency_ms"][k] for r in reps)[len(reps) // 2] for k in keys}
    return {
        **{k: v for k, v in reps[len(reps) // 2].items() if k != "latency_ms"},
        "latency_ms": med,
        "spread": {
            k: [min(r["latency_ms"][k] for r in reps), max(r["latency_ms"][k] for r in reps)]
            for k in keys
        },
        "runs": [r["latency_ms"] for r in reps],
        "repetitions": len(reps),
        "saturated": saturated,
    }


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)


def _get(r: dict[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(r, dict) or key not in r:
            return None
        r = r[key]
    return r


def _cell(v: Any, width: int, fmt: str = "") -> str:
    return f"{'-' if v is None else format(v, fmt):>{width}}"


# (ratio name, path in a case's result): kafkacore / Kafka, one per figure of the table
RATIO_FIGURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("peak_records_per_s", ("peak", "records_per_s")),
    ("peak_p99", ("peak", "latency_ms", "p99")),
    ("produce_cpu_s_per_gib", ("peak", "broker_cpu_s_per_gib")),
    ("half_load_p50", ("half_load", "latency_ms", "p50")),
    ("half_load_p99", ("half_load", "latency_ms", "p99")),
    ("half_load_p99.9", ("half_load", "latency_ms", "p99.9")),
    ("confluent_records_per_s", ("confluent", "records_per_s")),
    ("consume_records_per_s", ("consume", "records_per_s")),
    ("consume_cpu_s_per_gib", ("consume", "broker_cpu_s_per_gib")),
    ("consumer_perf_records_per_s", ("consumer_perf", "records_per_s")),
    ("consumer_perf_cpu_s_per_gib", ("consumer_perf", "broker_cpu_s_per_gib")),
)


def table(
    cases: list[Case], results: dict[str, dict[str, dict[str, Any]]]
) -> tuple[str, list[dict[str, Any]]]:
    hdr = (
        f"{'case':<26} {'broker':<9} {'rec/s':>9} {'MiB/s':>6} {'p99':>5} {'cpu/G':>6}"
        f" | {'½load p50':>9} {'p99':>5} {'p99.9':>6} {'p99 range':>11}"
        f" | {'ck rec/s':>9} | {'cons rec/s':>10} {'MiB/s':>6} {'cpu/G':>6}"
        f" | {'CP rec/s':>9} {'cpu/G':>6}"
    )
    lines = [hdr, "-" * len(hdr)]
    ratios = []
    for case in cases:
        rows = {b: results.get(b, {}).get(case.name) for b in ("kafka", "kafkacore")}
        for b, r in rows.items():
            if not r:
                continue
            if "error" in r:
                first = r["error"].strip().splitlines()[0] if r["error"].strip() else "?"
                lines.append(f"{case.name:<26} {b:<9} FAILED: {first[:90]}")
                continue
            pk, hl = r["peak"], r["half_load"]
            sat = "*" if hl.get("saturated") else " "
            spread = hl.get("spread", {}).get("p99")
            rng = f"{spread[0]}-{spread[1]}" if spread else "-"
            lines.append(
                f"{case.name:<26} {b:<9} {_cell(pk['records_per_s'], 9, ',.0f')}"
                f" {_cell(pk['mb_per_s'], 6, '.1f')} {_cell(pk['latency_ms']['p99'], 5)}"
                f" {_cell(pk.get('broker_cpu_s_per_gib'), 6, '.2f')}"
                f" | {_cell(hl['latency_ms']['p50'], 9)} {_cell(hl['latency_ms']['p99'], 5)}"
                f" {_cell(hl['latency_ms']['p99.9'], 6)}{sat}{rng:>10}"
                f" | {_cell(_get(r, 'confluent', 'records_per_s'), 9, ',.0f')}"
                f" | {_cell(_get(r, 'consume', 'records_per_s'), 10, ',.0f')}"
                f" {_cell(_get(r, 'consume', 'mb_per_s'), 6, '.1f')}"
                f" {_cell(_get(r, 'consume', 'broker_cpu_s_per_gib'), 6, '.2f')}"
                f" | {_cell(_get(r, 'consumer_perf', 'records_per_s'), 9, ',.0f')}"
                f" {_cell(_get(r, 'consumer_perf', 'broker_cpu_s_per_gib'), 6, '.2f')}"
            )
        k, c = rows["kafka"], rows["kafkacore"]
        if k and c and "error" not in k and "error" not in c:
            r = {"case": case.name} | {
                name: ratio(_get(c, *path), _get(k, *path)) for name, path in RATIO_FIGURES
            }
            ratios.append(r)
            lines.append(
                f"{'':<26} {'kc/kafka':<9} {_cell(r['peak_records_per_s'], 8)}x {'':>6}"
                f" {_cell(r['peak_p99'], 5)} {_cell(r['produce_cpu_s_per_gib'], 6)}"
                f" | {_cell(r['half_load_p50'], 9)} {_cell(r['half_load_p99'], 5)}"
                f" {_cell(r['half_load_p99.9'], 6)} {'':>11}"
                f" | {_cell(r['confluent_records_per_s'], 8)}x"
                f" | {_cell(r['consume_records_per_s'], 9)}x {'':>6}"
                f" {_cell(r['consume_cpu_s_per_gib'], 6)}"
                f" | {_cell(r['consumer_perf_records_per_s'], 8)}x"
                f" {_cell(r['consumer_perf_cpu_s_per_gib'], 6)}"
            )
    lines.append(
        "latencies in ms (ProducerPerformance); cpu/G = the broker process's CPU seconds (user +"
        " system, /proc/<pid>/stat) per GiB produced (peak run) or consumed; ½load = "
        "ProducerPerformance at half of Kafka's peak, median of the repetitions, p99 range = "
        "min-max over them (* = kafkacore's peak is below that rate: saturated); ck = "
        "confluent-kafka producer; cons = confluent-kafka assign() consumer; CP = Kafka's "
        "ConsumerPerformance with a consumer group (rate without the group join)"
    )
    return "\n".join(lines), ratios


def profile_text(p: dict[str, Any]) -> str:
    if "error" in p:
        return f"profile: {p['error']}"
    lines = [
        f"py-spy on kafkacore during {p['case']} produce: event loop busy "
        f"{p['event_loop_busy_pct']}% of {p['samples_taken']} samples "
        f"(other threads' active samples: {p['other_threads_active_samples']});"
        f" load while sampled: {p['load_while_sampled'].get('records_per_s')} rec/s."
        "\nTop self frames of the event loop thread (% of its busy samples):"
    ]
    lines += [f"  {r['pct_of_busy']:>5}%  {r['frame']}" for r in p["top_self"]]
    lines.append("Top inclusive kafkacore frames (% of the event loop's busy samples):")
    lines += [f"  {r['pct_of_busy']:>5}%  {r['frame']}" for r in p["top_inclusive_kafkacore"]]
    consume = p.get("consume")
    if consume and "error" not in consume:
        lines.append(
            f"py-spy during a consume ({consume['case']}): event loop busy "
            f"{consume['event_loop_busy_pct']}% of {consume['samples_taken']} samples; "
            "top self frames (% of its busy samples):"
        )
        lines += [f"  {r['pct_of_busy']:>5}%  {r['frame']}" for r in consume["top_self"]]
    elif consume:
        lines.append(f"consume profile: {consume['error']}")
    return "\n".join(lines)


def git_rev() -> str:
    with contextlib.suppress(Exception):
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True
        )
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    return "unknown"


@contextlib.contextmanager
def cleaned_up() -> Iterator[None]:
    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        cleanup()


@dataclass
class BrokerRep:
    """One broker's share of one repetition: the runs with Kafka's tools (one broker
    started for them all), then the light generator's, each on a fresh broker; the
    results go into ``out``."""

    name: str
    libs: Path
    security: Security | None
    seconds: float
    warmup_s: float
    python_dir: Path | None
    out: dict[str, Any]
    _running: Broker | None = None

    def start(self, security: Security | None = None, cpus: str | None = None) -> Broker:
        if self.name == "kafka":
            return start_kafka(self.libs, security, cpus=cpus)
        return start_kafkacore(security, self.python_dir, cpus=cpus)

    def java_tools(
        self,
        cases: list[Case],
        kafka_peaks: dict[str, float],
        want_fetch: bool,
        want_txn: bool,
        args: argparse.Namespace,
        tls: dict[str, Any],
    ) -> None:
        """The matrix, the security cases, the fetch and the transactions cases."""
        log(f"starting {self.name}")
        try:
            broker = self.start(self.security)
        except Exception as exc:
            log(f"{self.name} did not start: {exc}")
            self.out["cases"] = {c.name: {"error": f"start: {exc}"} for c in cases}
            return
        log(f"{self.name} up on {broker.listeners} (pid {broker.proc.pid})")
        self._running = broker
        try:
            if self.security is not None:
                tls[self.name] = self.security.probe(broker.listeners["SSL"])
            self.out["cases"] = run_broker(
                self.libs, broker, cases, self.seconds, self.warmup_s, kafka_peaks
            )
            if want_fetch:
                try:
                    self.out["fetch"] = fetch_over_protocols(
                        broker, args.fetch_records, args.fetch_rounds, self.seconds
                    )
                except Exception as exc:
                    log(f"{self.name} fetch case failed: {exc}")
            if want_txn:
                try:
                    self.out["txn"] = run_txn(broker, args.txn_records, self.seconds, self.warmup_s)
                except Exception as exc:
                    log(f"{self.name} txn case failed: {exc}")
                    self.out["txn"] = {"error": str(exc)[-3000:]}
        finally:
            self._stop(broker)

    def profile(self, libs: Path, rate: float) -> dict[str, Any]:
        """py-spy during a produce and a consume, on a broker started for it."""
        broker = self.start()
        try:
            return profile_kafkacore(libs, broker, rate, 10)
        except Exception as exc:
            log(f"profile failed: {exc}")
            return {"error": str(exc)[-2000:]}
        finally:
            self._stop(broker)

    def light(
        self,
        exe: Path,
        cases: list[Case],
        spread_counts: list[int],
        cpus: str = light.BROKER_CPUS,
    ) -> dict[str, Any]:
        """The light generator's cases and spread cases on a broker pinned to ``cpus``
        (the generator to :data:`light.GENERATOR_CPUS`)."""
        out: dict[str, Any] = {
            "broker_cpus": cpus,
            "generator_cpus": light.GENERATOR_CPUS,
            "cases": {},
            "spread": {},
        }
        try:
            broker = self.start(cpus=cpus)
        except Exception as exc:
            log(f"{self.name} pinned to {cpus} did not start: {exc}")
            return {"error": f"start: {exc}"}
        pid = broker.proc.pid

        def create(topic: str, partitions: int) -> None:
            create_topic(broker, topic, partitions)

        try:
            sizes = sorted({c.size for c in cases} or {1024}, reverse=True)
            rates = light.warm_rates(exe, broker.bootstrap, self.name, sizes, self.warmup_s, create)
            out["warm_records_per_s"] = rates
            for case in cases:
                records = max(20_000, int(rates[case.size] * self.seconds))
                topic = light.case_topic(self.name, f"{case.name}-{cpus}")
                try:
                    r = light.light_case(
                        exe,
                        pid,
                        broker.bootstrap,
                        topic,
                        case.partitions,
                        case.size,
                        case.acks,
                        records,
                        create,
                    )
                except Exception as exc:
                    log(f"{self.name} light {case.name} failed: {exc}")
                    r = {"error": str(exc)[-3000:]}
                else:
                    log(f"{self.name} light (broker on cpus {cpus}) {light.summary(case.name, r)}")
                out["cases"][case.name] = r
            for count in spread_counts:
                records = max(20 * count, int(rates[1024] * self.seconds))
                try:
                    r = light.spread_case(
                        exe, pid, broker.bootstrap, self.name, count, records, create
                    )
                except Exception as exc:
                    log(f"{self.name} spread over {count} partitions failed: {exc}")
                    r = {"error": str(exc)[-3000:]}
                else:
                    log(f"{self.name} {light.summary(f'spread over {count} partitions', r)}")
                out["spread"][str(count)] = r
        finally:
            self._stop(broker)
        return out

    def _stop(self, broker: Broker) -> None:
        code = stop(broker.proc)
        if code not in (0, None, 143, -15) and self.name == "kafkacore":
            log(f"kafkacore exited {code}:\n{broker.tail()}")
        discard(broker)


def median_of(items: list[Any]) -> Any:
    """The repetitions of one result as one: the median of every number (over the
    repetitions that have it and did not fail), anything else from the first."""
    present = [i for i in items if i is not None]
    if not present:
        return None
    first = present[0]
    if isinstance(first, dict):
        ok = [i for i in present if isinstance(i, dict) and "error" not in i]
        if not ok:
            return first
        keys = dict.fromkeys(k for i in ok for k in i)
        return {k: median_of([i.get(k) for i in ok]) for k in keys}
    if isinstance(first, bool) or not isinstance(first, int | float):
        return first
    numbers = [i for i in present if isinstance(i, int | float) and not isinstance(i, bool)]
    return statistics.median(numbers)


# The figures compared cell by cell (kafkacore / Kafka): (leaf path, better), the leaf
# path below a case's result.
CASE_FIGURES: tuple[tuple[tuple[str, ...], str], ...] = tuple(
    (path, "lower" if ("cpu" in name or "p99" in name or "p50" in name) else "higher")
    for name, path in RATIO_FIGURES
)
LIGHT_FIGURES: tuple[tuple[tuple[str, ...], str], ...] = tuple(
    ((mode, *leaf), better)
    for mode in ("produce", "consume")
    for leaf, better in (
        (("records_per_s",), "higher"),
        (("broker_cpu_us_per_request",), "lower"),
        (("syscalls", "per_request"), "lower"),
        (("broker_cpu_s_per_gib",), "lower"),
    )
)


def cell_paths(
    cases: list[Case], light_cases: list[Case], spread_counts: list[int]
) -> list[tuple[tuple[str, ...], str]]:
    """Every compared cell: its path in a broker's result and which way is better."""
    out = [(("cases", c.name, *p), b) for c in cases for p, b in CASE_FIGURES]
    for protocol in PROTOCOLS:
        out += [
            (("fetch", protocol, "records_per_s"), "higher"),
            (("fetch", protocol, "broker_cpu_s_per_gib"), "lower"),
        ]
    out += [
        (("txn", "produce", "records_per_s"), "higher"),
        (("txn", "produce", "commit_ms", "p50"), "lower"),
        (("txn", "produce", "commit_ms", "p99"), "lower"),
        (("txn", "consume_read_committed", "records_per_s"), "higher"),
    ]
    out += [(("light", "cases", c.name, *p), b) for c in light_cases for p, b in LIGHT_FIGURES]
    out += [(("light", "spread", str(n), *p), b) for n in spread_counts for p, b in LIGHT_FIGURES]
    out += [(("light_scaling", "cases", SCALING_CASE.name, *p), b) for p, b in LIGHT_FIGURES]
    return out


def compare_cells(
    paths: list[tuple[tuple[str, ...], str]],
    runs: dict[str, list[dict[str, Any]]],
    combined: dict[str, Any],
    previous: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    """kafkacore / Kafka for every cell both brokers measured: the medians, each broker's
    range over the repetitions, whether the cell is met (at least Kafka's rate, at most
    its CPU, system calls or latency) in this run and in the previous full run."""
    cells = []
    for path, better in paths:
        kc, ka = _get(combined.get("kafkacore", {}), *path), _get(combined.get("kafka", {}), *path)
        if not isinstance(kc, int | float) or not isinstance(ka, int | float) or not ka:
            continue
        r = kc / ka
        met = r >= 1.0 if better == "higher" else r <= 1.0
        cell = "/".join(path)
        before = previous.get(cell, {}).get("met")
        cells.append(
            {
                "cell": cell,
                "better": better,
                "kafkacore": kc,
                "kafka": ka,
                "kafkacore_range": _range(runs.get("kafkacore", []), path),
                "kafka_range": _range(runs.get("kafka", []), path),
                "ratio": round(r, 3),
                "met": met,
                "met_previous_run": before,
                "met_two_consecutive_runs": met and before is True,
            }
        )
    return cells


def _range(reps: list[dict[str, Any]], path: tuple[str, ...]) -> list[float] | None:
    values = [v for v in (_get(r, *path) for r in reps) if isinstance(v, int | float)]
    return [min(values), max(values)] if values else None


# how the cells' paths are shown in the table (the JSON keeps them whole)
CELL_ABBREVIATIONS = (
    ("broker_cpu_us_per_request", "us CPU/req"),
    ("syscalls/per_request", "syscalls/req"),
    ("broker_cpu_s_per_gib", "cpu/G"),
    ("records_per_s", "rec/s"),
    ("latency_ms/", ""),
    ("consume_read_committed", "rc consume"),
    ("light_scaling/cases/", "light 2 cores/"),
    ("light/cases/", "light/"),
    ("light/spread/", "spread over "),
    ("cases/", "java/"),
)


def cells_table(cells: list[dict[str, Any]], reps: int) -> str:
    """The comparison cell by cell: medians of the repetitions, their ranges, met now
    and in the previous full run (Y met, n not, ? not measured then)."""
    hdr = (
        f"{'cell (median of ' + str(reps) + ' runs each)':<56} {'kafkacore':>10} {'range':>17}"
        f" {'kafka':>10} {'range':>17} {'kc/k':>6} met now/before/both"
    )
    lines = [hdr, "-" * len(hdr)]

    def num(v: float) -> str:
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"

    def rng(r: list[float] | None) -> str:
        return f"{num(r[0])}-{num(r[1])}" if r else "-"

    def flag(v: bool | None) -> str:
        return "?" if v is None else "Y" if v else "n"

    for c in cells:
        name = c["cell"]
        for long, short in CELL_ABBREVIATIONS:
            name = name.replace(long, short)
        lines.append(
            f"{name[:56]:<56} {num(c['kafkacore']):>10} {rng(c['kafkacore_range']):>17}"
            f" {num(c['kafka']):>10} {rng(c['kafka_range']):>17} {c['ratio']:>6.3f}"
            f" {flag(c['met']):>4}/{flag(c['met_previous_run'])}/"
            f"{flag(c['met_two_consecutive_runs'])}"
        )
    met = sum(c["met"] for c in cells)
    both = sum(c["met_two_consecutive_runs"] for c in cells)
    lines.append(
        f"{met} of {len(cells)} cells met in this run, {both} in this run and the previous "
        "full run (a cell counts as met only then); higher is better for rates, lower for "
        "CPU, system calls and latency"
    )
    return "\n".join(lines)


def light_table(light_runs: dict[str, dict[str, Any]], title: str) -> str:
    """The light generator's cells per broker: rate, the broker's CPU and system calls per
    request, records per request, CPU per GiB."""
    hdr = (
        f"{title}\n{'case':<26} {'broker':<9} {'mode':<7} {'rec/s':>10} {'us CPU/req':>10}"
        f" {'syscalls/req':>12} {'rec/req':>8} {'cpu/G':>6} {'p99 ms':>7}"
    )
    lines = [hdr, "-" * 100]
    for b, r in light_runs.items():
        if not r or "error" in r:
            lines.append(f"{'':<26} {b:<9} FAILED: {(r or {}).get('error', '?')[:60]}")
            continue
        rows = list(r.get("cases", {}).items()) + [
            (f"spread over {n} partitions", v) for n, v in r.get("spread", {}).items()
        ]
        for name, case in rows:
            if "error" in case:
                lines.append(f"{name:<26} {b:<9} FAILED: {case['error'].strip()[:60]}")
                continue
            for mode in ("produce", "consume"):
                m = case.get(mode) or {}
                lines.append(
                    f"{name:<26} {b:<9} {mode:<7} {_cell(m.get('records_per_s'), 10, ',.0f')}"
                    f" {_cell(m.get('broker_cpu_us_per_request'), 10, ',.1f')}"
                    f" {_cell(_get(m, 'syscalls', 'per_request'), 12, ',.1f')}"
                    f" {_cell(m.get('records_per_request'), 8, ',.1f')}"
                    f" {_cell(m.get('broker_cpu_s_per_gib'), 6, '.2f')}"
                    f" {_cell(_get(m, 'latency_ms', 'p99'), 7, '.1f')}"
                )
    lines.append(
        "rdkafka_bench (C, librdkafka) pinned to cpu "
        f"{light.GENERATOR_CPUS}; us CPU/req and syscalls/req = the broker's CPU time "
        "(/proc/<pid>/stat) and system calls (perf stat, raw_syscalls:sys_enter) per "
        "Produce (produce) or Fetch (consume) request the generator sent (librdkafka's "
        "statistics); cpu/G = broker CPU s per GiB"
    )
    return "\n".join(lines)


def light_scaling_table(
    one_core: dict[str, dict[str, Any]], two_cores: dict[str, dict[str, Any]]
) -> str:
    """The broker on one core, then on two, with the light generator (on cpu 1 both
    times: on a 2-core machine the two-core broker shares that one with it)."""
    name = SCALING_CASE.name
    lines = [
        f"scaling with the light generator: {name}, broker on cpu {light.BROKER_CPUS}, then "
        f"cpus {light.BOTH_CPUS}; generator on cpu {light.GENERATOR_CPUS}",
        f"{'broker':<9} {'mode':<7} {'1 core':>10} {'2 cores':>10} {'2/1':>6}",
        "-" * 46,
    ]
    for b in two_cores:
        for mode in ("produce", "consume"):
            one = _get(one_core.get(b, {}), "cases", name, mode, "records_per_s")
            two = _get(two_cores.get(b, {}), "cases", name, mode, "records_per_s")
            lines.append(
                f"{b:<9} {mode:<7} {_cell(one, 10, ',.0f')} {_cell(two, 10, ',.0f')}"
                f" {_cell(ratio(two, one), 6)}"
            )
    return "\n".join(lines)


CASE_SETS = (
    "matrix",
    "plaintext",
    "ssl",
    "sasl_ssl",
    "fetch",
    "txn",
    "scaling",
    "light",
    "light_scaling",
    "spread",
)
DEFAULT_CASES = "matrix,ssl,sasl_ssl,fetch,txn,scaling,light,light_scaling,spread"
# not produce cases of Kafka's tools
OWN_CASE_SETS = ("fetch", "txn", "scaling", "light", "light_scaling", "spread")
# The security cases: 1 KiB, acks=1, 6 partitions over each protocol (``plaintext`` is the
# same case without TLS, as the baseline a run of only these cases compares against).
# ``fetch`` is not a produce case: one filled topic read over each protocol in turn; ``txn``
# is its own case too (a transactional producer, see ``transactional_produce``).
SECURITY_CASE = {"plaintext": "PLAINTEXT", "ssl": "SSL", "sasl_ssl": "SASL_SSL"}


def select_cases(spec: str, quick: bool) -> list[Case]:
    keys = [k.strip().lower() for k in spec.split(",") if k.strip()]
    unknown = [k for k in keys if k not in CASE_SETS]
    if unknown or not keys:
        raise SystemExit(f"--cases {spec!r}: expected a comma-separated subset of {CASE_SETS}")
    cases: list[Case] = []
    for key in keys:
        if key in OWN_CASE_SETS:
            continue
        if key == "matrix":
            sizes, parts = ([1024], [1]) if quick else ([1024, 100], [1, 6])
            cases += [Case(s, a, p) for s in sizes for a in ("1", "all") for p in parts]
        else:
            cases.append(Case(1024, "1", 6, SECURITY_CASE[key]))
    return list(dict.fromkeys(cases))  # plaintext is also in the full matrix


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick", action="store_true", help="1 KiB only, 1 partition (acks=1 and all), 3 s"
    )
    ap.add_argument(
        "--seconds", type=float, default=None, help="target seconds per measurement (5)"
    )
    ap.add_argument(
        "--reps",
        type=int,
        default=None,
        help="repetitions, kafka and kafkacore alternating (default 3, 1 with --quick): the "
        "tables show their medians, the JSON every run and each cell's range",
    )
    ap.add_argument(
        "--spread-partitions",
        default=None,
        help="the spread cases' partition counts (default 6,1000,10000; 6,100 with --quick)",
    )
    ap.add_argument(
        "--cases",
        default=None,
        help=f"comma-separated subset of {', '.join(CASE_SETS)} (default {DEFAULT_CASES}); "
        "ssl, sasl_ssl and plaintext are 1 KiB, acks=1, 6 partitions",
    )
    ap.add_argument(
        "--brokers", default="kafka,kafkacore", help="which brokers to run (default both)"
    )
    ap.add_argument(
        "--sasl-mechanism",
        default="SCRAM-SHA-512",
        choices=MECHANISMS,
        help="the SASL_SSL case's mechanism, the same on both brokers (default SCRAM-SHA-512)",
    )
    ap.add_argument(
        "--warmup", type=float, default=None, help="warm-up seconds per record size and protocol"
    )
    ap.add_argument(
        "--half-load-reps",
        type=int,
        default=3,
        help="repetitions of each half-load run (default 3; the table shows their median "
        "and the p99 range)",
    )
    ap.add_argument(
        "--half-load-seconds",
        type=float,
        default=None,
        help="seconds per half-load run (default: --seconds)",
    )
    ap.add_argument("--no-profile", action="store_true", help="skip the py-spy run")
    ap.add_argument(
        "--fetch-records",
        type=int,
        default=1_000_000,
        help="records the fetch case fills its topic with (default 1000000, 1 KiB each; at"
        " 300000 a PLAINTEXT read lasted 0.3 s and its rounds differed by 60 %%)",
    )
    ap.add_argument(
        "--fetch-rounds", type=int, default=3, help="reads per protocol in the fetch case"
    )
    ap.add_argument(
        "--txn-records",
        type=int,
        default=1000,
        help="records per transaction in the txn case (default 1000)",
    )
    ap.add_argument(
        "--kafkacore-python",
        type=Path,
        default=None,
        help="the python/ directory of the kafkacore to run (default: this checkout's)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON report (default benches/results/broker_vs_kafka.json with the matrix, "
        "broker_vs_kafka_<cases>.json without it)",
    )
    args = ap.parse_args()
    args.cases_given = args.cases is not None
    args.cases = args.cases or DEFAULT_CASES
    args.spread_partitions = args.spread_partitions or ("6,100" if args.quick else "6,1000,10000")
    reps = args.reps or (1 if args.quick else 3)
    seconds = args.seconds or (3.0 if args.quick else 5.0)
    warmup_s = args.warmup if args.warmup is not None else 6.0 if args.quick else 12.0
    HALF_LOAD.update(reps=args.half_load_reps, seconds=args.half_load_seconds)
    cases = select_cases(args.cases, args.quick)
    brokers = [b.strip() for b in args.brokers.split(",") if b.strip()]
    if not brokers or any(b not in ("kafka", "kafkacore") for b in brokers):
        raise SystemExit(f"--brokers {args.brokers!r}: expected kafka and/or kafkacore")
    keys = [k.strip().lower() for k in args.cases.split(",") if k.strip()]
    default_cases = not args.cases_given
    full_run = default_cases and not args.quick and reps >= 3
    out = args.out or RESULTS / (
        "broker_vs_kafka_quick.json"
        if args.quick
        else "broker_vs_kafka.json"
        if "matrix" in keys
        else f"broker_vs_kafka_{'_'.join(keys)}.json"
    )
    profile_case = Case(1024, "1", 1)
    want_profile = not args.no_profile and "kafkacore" in brokers and profile_case in cases
    RESULTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    want_fetch = "fetch" in keys
    want_txn = "txn" in keys
    light_cases = select_cases("matrix", args.quick) if "light" in keys else []
    if "light_scaling" in keys and SCALING_CASE not in light_cases:
        light_cases.append(SCALING_CASE)  # the one-core figure of the light scaling
    spread_counts = [int(p) for p in args.spread_partitions.split(",")] if "spread" in keys else []
    tls: dict[str, Any] = {}
    # every repetition's results per broker, kafka and kafkacore alternating
    runs: dict[str, list[dict[str, Any]]] = {b: [] for b in brokers}
    profile: dict[str, Any] = {"skipped": True}
    fd_limit = raise_fd_limit()  # 10,000 partitions: Kafka's logs, indexes and sockets
    with cleaned_up():
        libs = kafka_libs()
        log(f"Kafka {KAFKA_VERSION} jars: {libs}; open files limit {fd_limit}")
        exe = (
            light.ensure_rdkafka_bench(log)
            if light_cases or spread_counts or "light_scaling" in keys
            else None
        )
        security = None
        if want_fetch or any(c.protocol != "PLAINTEXT" for c in cases):
            security = make_security(mktemp("kafkacore-bench-pki-"), args.sasl_mechanism)
            log(f"certificates and {security.mechanism} user generated in {security.directory}")
        for rep in range(reps):
            kafka_peaks: dict[str, float] = {}
            for name in brokers:
                log(f"run {rep + 1} of {reps}: {name}")
                one: dict[str, Any] = {}
                runs[name].append(one)
                broker_rep = BrokerRep(
                    name, libs, security, seconds, warmup_s, args.kafkacore_python, one
                )
                if cases or want_fetch or want_txn:
                    broker_rep.java_tools(cases, kafka_peaks, want_fetch, want_txn, args, tls)
                    if name == "kafka":
                        kafka_peaks = {
                            n: r["peak"]["records_per_s"]
                            for n, r in one["cases"].items()
                            if "error" not in r
                        }
                    measured_case = one["cases"].get(profile_case.name, {})
                    last = rep == reps - 1
                    if want_profile and name == "kafkacore" and last and "peak" in measured_case:
                        profile = broker_rep.profile(libs, measured_case["peak"]["records_per_s"])
                if "scaling" in keys:
                    log(f"scaling: {name} pinned to 1 core, then 2")
                    try:
                        one["scaling"] = run_scaling(
                            libs, name, seconds, warmup_s, args.kafkacore_python
                        )
                    except Exception as exc:
                        log(f"{name} scaling failed: {exc}")
                        one["scaling"] = {"error": str(exc)[-3000:]}
                if exe is not None and (light_cases or spread_counts):
                    one["light"] = broker_rep.light(exe, light_cases, spread_counts)
                if exe is not None and "light_scaling" in keys:
                    one["light_scaling"] = broker_rep.light(
                        exe, [SCALING_CASE], [], cpus=light.BOTH_CPUS
                    )

    combined = {b: median_of(r) for b, r in runs.items()}
    results: dict[str, dict[str, dict[str, Any]]] = {
        b: c.get("cases", {}) for b, c in combined.items() if c.get("cases")
    }
    fetch: dict[str, dict[str, Any]] = {
        b: c["fetch"] for b, c in combined.items() if c.get("fetch")
    }
    txn: dict[str, dict[str, Any]] = {b: c["txn"] for b, c in combined.items() if c.get("txn")}
    scaling: dict[str, dict[str, Any]] = {
        b: c["scaling"] for b, c in combined.items() if c.get("scaling")
    }
    text, ratios = table(cases, results)
    if cases:
        print()
        print(text)
    fetch_ratios: dict[str, Any] = {}
    if fetch:
        fetch_text, fetch_ratios = fetch_table(fetch)
        print()
        print(fetch_text)
    txn_ratios: dict[str, Any] = {}
    if txn:
        txn_text, txn_ratios = txn_table(txn)
        print()
        print(txn_text)
    if scaling:
        print()
        print(scaling_table(scaling))
    light_runs = {b: c["light"] for b, c in combined.items() if c.get("light")}
    if light_runs:
        print()
        print(light_table(light_runs, "light generator, broker pinned to cpu 0"))
    light_scaling = {b: c["light_scaling"] for b, c in combined.items() if c.get("light_scaling")}
    if light_scaling:
        print()
        print(light_scaling_table(light_runs, light_scaling))
    if want_profile:
        print()
        print(profile_text(profile))
    previous: dict[str, dict[str, Any]] = {}
    previous_date = None
    with contextlib.suppress(OSError, ValueError):
        before = json.loads(out.read_text())
        if before.get("meta", {}).get("full_run"):
            previous = {c["cell"]: c for c in before.get("cells", [])}
            previous_date = before["meta"].get("date")
    paths = cell_paths(cases, light_cases, spread_counts)
    cells = compare_cells(paths, runs, combined, previous)
    if cells:
        print()
        print(cells_table(cells, reps))
    doc = {
        "meta": {
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "kafka_version": KAFKA_VERSION,
            "kafkacore_rev": git_rev(),
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": sys.version,
            },
            "settings": {
                "batch.size": BATCH_SIZE,
                "linger.ms": LINGER_MS,
                "compression": "none",
                "seconds_per_measurement": seconds,
                "warmup_s_per_record_size": warmup_s,
                "quick": args.quick,
                "cases": keys,
                "security": None
                if security is None
                else {
                    "ssl.keystore.type": "PEM (ssl.keystore.location: PKCS#8 key + chain), "
                    "the same generated files for both brokers",
                    "certificates": "ECDSA P-256, generated at bench time",
                    "ssl.client.auth": "none",
                    "sasl.mechanism": security.mechanism,
                    "tls_session_seen_by_a_python_client": tls,
                },
                "kafka_jvm": list(KAFKA_JVM),
                "consumer": "confluent-kafka assign() from offset 0, then Kafka's "
                "ConsumerPerformance with a new consumer group, each reading all the records "
                "the case's produce runs wrote",
                "half_load": HALF_LOAD,
                "cpu": "broker process user+system seconds from /proc/<pid>/stat around the "
                "peak produce run and each consume run, per GiB of record payload",
                "mb": "MiB (2**20 bytes), as ProducerPerformance reports it",
            },
            "wall_s": round(time.monotonic() - started, 1),
        },
        "cases": [
            {
                "case": c.name,
                "record_size": c.size,
                "acks": c.acks,
                "partitions": c.partitions,
                "security_protocol": c.protocol,
            }
            | {b: results[b].get(c.name) for b in results}
            for c in cases
        ],
        "ratios_kafkacore_over_kafka": ratios,
        "fetch_over_protocols": fetch and {**fetch, "ratios_kafkacore_over_kafka": fetch_ratios},
        "transactions": txn
        and {
            **txn,
            "records_per_transaction": args.txn_records,
            "ratios_kafkacore_over_kafka": txn_ratios,
        },
        "scaling": scaling,
        "light": light_runs,
        "light_scaling": light_scaling,
        "cells": cells,
        "runs": runs,
        "profile": profile,
    }
    doc["meta"] |= {
        "repetitions": reps,
        "order": "each repetition runs kafka, then kafkacore (alternating); figures are medians",
        "full_run": full_run,
        "previous_full_run": previous_date,
        "light_generator": {
            "tool": "benches/broker/rdkafka_bench.c against Debian's librdkafka-dev",
            "broker_cpus": light.BROKER_CPUS,
            "generator_cpus": light.GENERATOR_CPUS,
            "syscalls": "perf stat -e raw_syscalls:sys_enter,syscalls:sys_enter_<name>... -p "
            "<broker pid>",
        },
        "load_average_at_end": os.getloadavg(),
    }
    write_report(out, doc)
    return 0


if __name__ == "__main__":
    run_main(main)
