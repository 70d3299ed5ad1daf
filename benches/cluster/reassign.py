"""``make bench-cluster`` (reassignment case): move 6 partitions holding 1 GiB in total
to a new broker, without and then with a replication throttle, on a kafkacore cluster
(Apache ZooKeeper, ``kafkacore reassign-partitions``) and on an Apache Kafka 4.3.1
cluster (KRaft, Kafka's own ``kafka-reassign-partitions``), one after the other on this
machine. Each cluster has five brokers; the topic (replication factor 3,
``min.insync.replicas=2``) starts on brokers 1-3 and brokers 4 and 5 hold nothing:

1. fill the topic with 1 GiB of 1 KiB records (Kafka's ``ProducerPerformance``);
2. move one replica of every partition onto broker 4, no throttle;
3. move those replicas from broker 4 onto broker 5 with ``--throttle`` (the tool sets
   the leader and follower rates and the throttled-replica lists; ``--verify`` clears
   them at the end).

Each move is timed from ``--execute`` until ``--verify`` reports every partition
complete, while an acks=all producer writes 1 KiB records at a fixed rate to the topic
being moved; its p50/p99 delivery latency during the move is reported.

Writes ``benches/results/reassign_vs_kafka.json``.

    .venv/bin/python benches/cluster/reassign.py [--gib 1.0] [--throttle-mib 40]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benches"))
sys.path.insert(0, str(REPO / "benches" / "cluster"))
sys.path.insert(0, str(REPO / "tests"))
from run import PARTITIONS, create_topic, single, start_kafka_cluster  # noqa: E402

from _common import run_main, write_report  # noqa: E402
from support.cluster import Cluster  # noqa: E402
from support.zookeeper import ZooKeeperServer, zookeeper_libs  # noqa: E402

TOPIC = "bench-reassign"
RECORD = 1024
SIZE = 5
REASSIGN_CLASS = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


class Tool:
    """``kafka-reassign-partitions`` as one system runs it: Kafka's class from the jars,
    or ``python -m kafkacore reassign-partitions`` with the same flags."""

    def __init__(self, libs: Path, kafkacore: bool, bootstrap: str, work: Path) -> None:
        self.libs, self.kafkacore, self.bootstrap, self.work = libs, kafkacore, bootstrap, work

    def run(self, *flags: str) -> str:
        if self.kafkacore:
            cmd = [sys.executable, "-m", "kafkacore", "reassign-partitions"]
        else:
            cmd = ["java", *single.TOOL_JVM, "-cp", f"{self.libs}/*", REASSIGN_CLASS]
        cmd += ["--bootstrap-server", self.bootstrap, *flags]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[-6:])}: exit {proc.returncode}\n{proc.stderr}")
        return proc.stdout

    def move(self, plan: dict[str, Any], throttle: int | None) -> float:
        """Execute ``plan`` and poll ``--verify`` until nothing moves; seconds taken."""
        path = self.work / f"plan-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(plan))
        extra = ["--throttle", str(throttle)] if throttle else []
        started = time.monotonic()
        self.run("--execute", "--reassignment-json-file", str(path), *extra)
        while True:
            out = self.run("--verify", "--reassignment-json-file", str(path))
            if "is still in progress" not in out and "is complete" in out:
                return time.monotonic() - started
            if time.monotonic() - started > 3600:
                raise RuntimeError(f"reassignment not done after an hour:\n{out}")
            time.sleep(1.0)


class RateProducer:
    """An acks=all confluent-kafka producer writing ``rate`` 1 KiB records a second
    until stopped; delivery latencies in ms."""

    def __init__(self, bootstrap: str, rate: int) -> None:
        from confluent_kafka import Producer

        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "broker.address.family": "v4",
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
            }
        )
        self.rate = rate
        self.latencies: list[float] = []
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        payload = b"x" * RECORD
        interval = 1.0 / self.rate
        next_at = time.monotonic()
        while not self._stop.is_set():
            sent = time.monotonic()

            def done(err: Any, _msg: Any, sent: float = sent) -> None:
                if err is not None:
                    self.errors += 1
                else:
                    self.latencies.append((time.monotonic() - sent) * 1000)

            self.producer.produce(TOPIC, payload, on_delivery=done)
            self.producer.poll(0)
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def __enter__(self) -> RateProducer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.producer.flush(60)

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies)
        return {
            "records": len(lat),
            "errors": self.errors,
            "p50_ms": round(single.percentile(lat, 0.50), 1) if lat else None,
            "p99_ms": round(single.percentile(lat, 0.99), 1) if lat else None,
        }


def current(bootstrap: str) -> dict[int, list[int]]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    md = admin.list_topics(TOPIC, timeout=10).topics[TOPIC]
    return {p: list(md.partitions[p].replicas) for p in md.partitions}


def plan(assignment: dict[int, list[int]], old: int | None, new: int) -> dict[str, Any]:
    """Replace ``old`` (or, when None, the last replica) of every partition by ``new``."""
    parts = []
    for p, replicas in sorted(assignment.items()):
        gone = old if old is not None else replicas[-1]
        parts.append(
            {
                "topic": TOPIC,
                "partition": p,
                "replicas": [new if r == gone else r for r in replicas],
                "log_dirs": ["any"] * len(replicas),
            }
        )
    return {"version": 1, "partitions": parts}


def measure(
    libs: Path, name: str, bootstrap: str, kafkacore: bool, args: argparse.Namespace
) -> dict[str, Any]:
    create_topic(bootstrap, TOPIC, [[1 + (p + i) % 3 for i in range(3)] for p in range(PARTITIONS)])
    records = int(args.gib * 1024 * 1024)
    single.log(f"{name}: filling {TOPIC} with {records} records of 1 KiB")
    endpoint = single.Broker(name, bootstrap, None, Path("/dev/null"))  # type: ignore[arg-type]
    case = single.Case(size=RECORD, acks="1", partitions=PARTITIONS)
    fill = single.producer_perf(libs, endpoint, TOPIC, case, records, -1)
    tool = Tool(libs, kafkacore, bootstrap, single.mktemp(f"kafkacore-bench-{name}-plans-"))
    out: dict[str, Any] = {"fill": fill}
    for label, old, new, throttle in (
        ("unthrottled", None, 4, None),
        ("throttled", 4, 5, args.throttle_mib * 1024 * 1024),
    ):
        moves = plan(current(bootstrap), old, new)
        single.log(f"{name}: moving {PARTITIONS} replicas onto broker {new} ({label})")
        with RateProducer(bootstrap, args.rate) as producer:
            seconds = tool.move(moves, throttle)
        moved_mib = args.gib * 1024
        out[label] = {
            "seconds": round(seconds, 1),
            "moved_mib": moved_mib,
            "mib_per_s": round(moved_mib / seconds, 1),
            "throttle_bytes_per_s": throttle,
            "producer": producer.summary(),
        }
        single.log(f"{name}: {label}: {out[label]}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gib", type=float, default=1.0, help="data to move (GiB)")
    parser.add_argument("--throttle-mib", type=int, default=40, help="throttle (MiB/s)")
    parser.add_argument("--rate", type=int, default=1000, help="producer records/s meanwhile")
    parser.add_argument(
        "--kafkacore-tool",
        choices=("kafkacore", "kafka"),
        default="kafkacore",
        help="the reassignment tool run against kafkacore (Kafka's own works too)",
    )
    args = parser.parse_args()
    libs = single.kafka_libs()
    doc: dict[str, Any] = {
        "case": {
            "moved_gib": args.gib,
            "partitions": PARTITIONS,
            "replication_factor": 3,
            "brokers": SIZE,
            "throttle_mib_per_s": args.throttle_mib,
            "producer_records_per_s": args.rate,
            "record_size": RECORD,
            "kafkacore_tool": args.kafkacore_tool,
        },
        "kafka_version": single.KAFKA_VERSION,
        "git": single.git_rev(),
    }
    with single.cleaned_up():
        zookeeper = ZooKeeperServer(
            single.mktemp("kafkacore-bench-zk-"), libs=zookeeper_libs()
        ).start()
        cluster = Cluster(
            f"{zookeeper.connect_string}/bench",
            single.mktemp("kafkacore-bench-cluster-"),
            size=SIZE,
            fast_failure=False,
            overrides=["offsets.topic.replication.factor=3"],
        )
        try:
            cluster.start()
            doc["kafkacore"] = measure(
                libs, "kafkacore", cluster.bootstrap, args.kafkacore_tool == "kafkacore", args
            )
        finally:
            cluster.stop()
            zookeeper.stop()
        brokers, bootstrap = start_kafka_cluster(libs, SIZE)
        try:
            doc["kafka"] = measure(libs, "kafka", bootstrap, False, args)
        finally:
            for b in reversed(brokers):  # broker-only nodes before the controllers
                single.stop(b.proc)
    for label in ("unthrottled", "throttled"):
        kc, kf = doc["kafkacore"][label], doc["kafka"][label]
        doc.setdefault("ratio", {})[label] = {
            "seconds": single.ratio(kc["seconds"], kf["seconds"]),
            "producer_p99": single.ratio(kc["producer"]["p99_ms"], kf["producer"]["p99_ms"]),
        }
        print(
            f"{label:11}: kafkacore {kc['seconds']} s ({kc['mib_per_s']} MiB/s) "
            f"p99 {kc['producer']['p99_ms']} ms | Kafka {kf['seconds']} s "
            f"({kf['mib_per_s']} MiB/s) p99 {kf['producer']['p99_ms']} ms"
        )
    single.RESULTS.mkdir(parents=True, exist_ok=True)
    write_report(single.RESULTS / "reassign_vs_kafka.json", doc)
    return 0


if __name__ == "__main__":
    run_main(main)
