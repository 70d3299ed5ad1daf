"""``make bench-cluster``: three kafkacore brokers (on Apache ZooKeeper) against three
Apache Kafka 4.3.1 brokers (KRaft, each node broker and controller), on this machine, one
cluster after the other: Kafka's own ``ProducerPerformance``, 1 KiB records, acks=all, a
topic of 6 partitions with replication factor 3 and ``min.insync.replicas=2``.

Writes ``benches/results/cluster_vs_kafka.json``: records/s, MiB/s and latency
percentiles for each, and the kafkacore/Kafka ratios (throughput: higher is better for
kafkacore above 1; p99: kafkacore's divided by Kafka's).

    .venv/bin/python benches/cluster/run.py [--records N] [--runs R]
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benches"))
sys.path.insert(0, str(REPO / "tests"))
from _common import run_main, write_report  # noqa: E402

# benches/broker/run.py: its Kafka launcher pieces, ProducerPerformance runner, clean-up
_spec = importlib.util.spec_from_file_location("broker_bench", REPO / "benches/broker/run.py")
assert _spec is not None and _spec.loader is not None
single: Any = importlib.util.module_from_spec(_spec)
sys.modules["broker_bench"] = single  # its dataclasses look their module up
_spec.loader.exec_module(single)

from support.cluster import Cluster  # noqa: E402
from support.zookeeper import ZooKeeperServer, zookeeper_libs  # noqa: E402

PARTITIONS = 6
CASE = single.Case(size=1024, acks="all", partitions=PARTITIONS)
TOPIC_CONFIG = {"min.insync.replicas": "2"}


def start_kafka_cluster(libs: Path, size: int = 3) -> tuple[list[single.Broker], str]:
    """Three KRaft nodes (broker+controller each) formatted with one cluster id, then
    ``size - 3`` broker-only nodes (ids 4, 5, ...) of the same cluster."""
    ports = [single.free_port() for _ in range(size)]
    cports = [single.free_port() for _ in range(3)]
    voters = ",".join(f"{i + 1}@localhost:{c}" for i, c in enumerate(cports))
    cluster_id = "-"
    while cluster_id.startswith("-"):
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    brokers = []
    cp = ["-cp", f"{libs}/*"]
    props_files = []
    for i in range(size):
        tmp = single.mktemp(f"kafkacore-bench-kafka{i + 1}-")
        props = tmp / "server.properties"
        voter = i < 3
        listeners = f"PLAINTEXT://localhost:{ports[i]}"
        props.write_text(
            "\n".join(
                [
                    f"process.roles={'broker,controller' if voter else 'broker'}",
                    f"node.id={i + 1}",
                    f"controller.quorum.voters={voters}",
                    f"listeners={listeners}"
                    + (f",CONTROLLER://localhost:{cports[i]}" if voter else ""),
                    f"advertised.listeners=PLAINTEXT://localhost:{ports[i]}",
                    "controller.listener.names=CONTROLLER",
                    "inter.broker.listener.name=PLAINTEXT",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    f"log.dirs={tmp / 'data'}",
                    "offsets.topic.replication.factor=3",
                    "transaction.state.log.replication.factor=3",
                    "transaction.state.log.min.isr=2",
                    "group.initial.rebalance.delay.ms=0",
                    "",
                ]
            )
        )
        single.subprocess.run(
            [
                "java",
                *single.TOOL_JVM,
                *cp,
                "kafka.tools.StorageTool",
                "format",
                "-t",
                cluster_id,
                "-c",
                str(props),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        props_files.append((tmp, props, ports[i]))
    for i, (tmp, props, port) in enumerate(props_files):
        logfile = tmp / "kafka.log"
        proc = single.spawn(
            [
                "java",
                *single.KAFKA_JVM,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                *cp,
                "kafka.Kafka",
                str(props),
            ],
            logfile,
        )
        brokers.append(single.Broker(f"kafka-{i + 1}", f"localhost:{port}", proc, logfile))
    for b in brokers:
        single.wait_ready(b)
    return brokers, ",".join(b.bootstrap for b in brokers)


def create_topic(bootstrap: str, topic: str, assignment: list[list[int]] | None = None) -> None:
    """Create ``topic`` (6 partitions, replication factor 3, on the brokers of
    ``assignment`` when given) and wait until every partition has a leader and a full ISR."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    new = (
        NewTopic(topic, PARTITIONS, replica_assignment=assignment, config=TOPIC_CONFIG)
        if assignment
        else NewTopic(topic, PARTITIONS, 3, config=TOPIC_CONFIG)
    )
    admin.create_topics([new], operation_timeout=30)[topic].result(60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=5).topics.get(topic)
        if (
            md is not None
            and md.error is None
            and len(md.partitions) == PARTITIONS
            and all(p.leader >= 0 and len(p.isrs) == 3 for p in md.partitions.values())
        ):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{topic}: not fully replicated after 60 s")


def measure(libs: Path, bootstrap: str, name: str, records: int, runs: int) -> dict[str, Any]:
    results = []
    endpoint = single.Broker(name, bootstrap, None, Path("/dev/null"))  # type: ignore[arg-type]
    for r in range(runs):
        topic = f"bench-cluster-{name}-{r}"
        create_topic(bootstrap, topic)
        single.log(f"{name}: run {r + 1}/{runs}, {records} records")
        results.append(single.producer_perf(libs, endpoint, topic, CASE, records, -1))
    return {
        "runs": results,
        "records_per_s_median": statistics.median(x["records_per_s"] for x in results),
        "mb_per_s_median": statistics.median(x["mb_per_s"] for x in results),
        "p99_ms_median": statistics.median(x["latency_ms"]["p99"] for x in results),
        "p50_ms_median": statistics.median(x["latency_ms"]["p50"] for x in results),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    libs = single.kafka_libs()
    doc: dict[str, Any] = {
        "case": {
            "record_size": 1024,
            "acks": "all",
            "partitions": PARTITIONS,
            "replication_factor": 3,
            "min.insync.replicas": 2,
            "tool": "org.apache.kafka.tools.ProducerPerformance",
            "batch.size": single.BATCH_SIZE,
            "linger.ms": single.LINGER_MS,
        },
        "kafka_version": single.KAFKA_VERSION,
        "git": single.git_rev(),
    }
    with single.cleaned_up():
        zk_dir = single.mktemp("kafkacore-bench-zk-")
        zookeeper = ZooKeeperServer(zk_dir, libs=zookeeper_libs()).start()
        cluster = Cluster(
            f"{zookeeper.connect_string}/bench",
            single.mktemp("kafkacore-bench-cluster-"),
            fast_failure=False,
            overrides=["offsets.topic.replication.factor=3"],
        )
        try:
            cluster.start()
            doc["kafkacore"] = measure(
                libs, cluster.bootstrap, "kafkacore", args.records, args.runs
            )
        finally:
            cluster.stop()
            zookeeper.stop()
        brokers, bootstrap = start_kafka_cluster(libs)
        try:
            doc["kafka"] = measure(libs, bootstrap, "kafka", args.records, args.runs)
        finally:
            for b in brokers:
                single.stop(b.proc)
    kc, kf = doc["kafkacore"], doc["kafka"]
    doc["ratio"] = {
        "records_per_s": single.ratio(kc["records_per_s_median"], kf["records_per_s_median"]),
        "p99_ms": single.ratio(kc["p99_ms_median"], kf["p99_ms_median"]),
    }
    single.RESULTS.mkdir(parents=True, exist_ok=True)
    write_report(single.RESULTS / "cluster_vs_kafka.json", doc)
    print(
        f"kafkacore {kc['records_per_s_median']:.0f} rec/s p99 {kc['p99_ms_median']} ms | "
        f"Kafka {kf['records_per_s_median']:.0f} rec/s p99 {kf['p99_ms_median']} ms | "
        f"ratio {doc['ratio']['records_per_s']}"
    )
    return 0


if __name__ == "__main__":
    run_main(main)
