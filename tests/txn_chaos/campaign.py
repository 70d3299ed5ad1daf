"""Seeded runs of the transactional workload (:mod:`txn_chaos.workload`) under broker
faults, judged by :mod:`support.txn_checker`; the longer campaign of ``make chaos``:

    PYTHONPATH=python:tests python -m txn_chaos.campaign --seeds 5 --duration 60 \\
        --target kafkacore --out chaos-runs/txn

A run: a target (``kafkacore``: one kafkacore broker; ``cluster``: three kafkacore brokers
on ZooKeeper, topics and ``__transaction_state`` with RF 3 and min.insync.replicas 2;
``kafka``: one Apache Kafka 4.3.1 KRaft node from the jars, the reference), a topic of
four partitions, transactional workers and a live read_committed reader, and a nemesis
that SIGKILLs a broker (in the cluster: the transaction coordinator of a worker's id, or
a partition leader, or any broker) for 0.5-2 s at seeded moments and starts it again.
Then the faults stop, the workers stop, the run waits until LSO = HW on every partition,
reads everything with a fresh read_committed consumer and every partition's raw log
(read_uncommitted) and, on the single nodes, its ``.txnindex`` files; the history goes to
``history.jsonl``. Re-check one: ``python -m txn_chaos.campaign --check DIR/history.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from confluent_kafka.admin import AdminClient, NewTopic

from kafkacore.coordinator.txn_records import partition_for_transactional_id
from support.brokers import Broker, free_port
from support.kafka_jars import kafka_libs, kraft_single_node_props, start_kraft_node
from support.txn_checker import (
    History,
    Result,
    check,
    check_copy,
    check_partition_log,
    read_history,
    txn_of,
)
from txn_chaos.workload import (
    CopyWorker,
    LiveReader,
    TxnWorker,
    drain_copier,
    final_read,
    raw_log,
    read_txnindex,
    wait_stable,
)

TOPIC = "txn-chaos"
COPY_TOPIC = "txn-chaos-copy"
PARTITIONS = 4
TXN_STATE_PARTITIONS = 50
# Broker settings every target gets: timed-out transactions found within a second.
TXN_BROKER_CONFIG = (
    "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
    "transaction.max.timeout.ms=60000",
)


class Target(Protocol):
    bootstrap: str

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def nodes(self) -> list[int]: ...
    def kill(self, node: int) -> None: ...
    def signal(self, node: int, sig: int) -> None: ...
    def restart(self, node: int) -> None: ...
    def partition_dir(self, topic: str, partition: int) -> Path | None: ...
    def coordinator_node(self, transactional_id: str) -> int | None: ...
    def leader_node(self, topic: str, partition: int) -> int | None: ...


class KafkacoreNode:
    """One kafkacore broker (``support.brokers.Broker``)."""

    def __init__(self, directory: Path, *extra: str) -> None:
        self.broker = Broker(
            directory / "data",
            [
                "offsets.topic.replication.factor=1",
                # few internal partitions: a restart after SIGKILL recovers every log
                "offsets.topic.num.partitions=1",
                "transaction.state.log.num.partitions=4",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                *TXN_BROKER_CONFIG,
                *extra,
            ],
        )

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def start(self) -> None:
        self.broker.start()

    def stop(self) -> None:
        self.broker.stop(check=False)

    def nodes(self) -> list[int]:
        return [1]

    def kill(self, node: int) -> None:
        self.broker.kill()

    def signal(self, node: int, sig: int) -> None:
        if self.broker.proc is not None:
            self.broker.proc.send_signal(sig)

    def restart(self, node: int) -> None:
        self.broker.start()

    def partition_dir(self, topic: str, partition: int) -> Path | None:
        return self.broker.data / f"{topic}-{partition}"

    def coordinator_node(self, transactional_id: str) -> int | None:
        return 1

    def leader_node(self, topic: str, partition: int) -> int | None:
        return 1

    def log_text(self) -> str:
        return self.broker.log_text()


class KafkaNode:
    """One Apache Kafka KRaft node from the jars (``support.kafka_jars``); restarted on
    the same storage after a kill."""

    def __init__(self, directory: Path, *extra: str, version: str = "4.3.1") -> None:
        self.home = directory / "kafka"
        self.home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.libs = kafka_libs(version)
        self.props = self.home / "server.properties"
        self.props.write_text(
            kraft_single_node_props(
                self.home,
                self.port,
                free_port(),
                "group.initial.rebalance.delay.ms=0",
                *TXN_BROKER_CONFIG,
                *extra,
            )
        )
        self.proc: subprocess.Popen[bytes] | None = None
        self.bootstrap = f"localhost:{self.port}"

    def start(self) -> None:
        self.proc = start_kraft_node(self.libs, self.props, self.home / "kafka.log")
        self._wait_up()

    def _wait_up(self) -> None:
        from kafkacore.client import Client

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with Client(self.bootstrap, timeout_s=2) as c:
                    c.topics()
                    return
            except Exception:
                time.sleep(0.3)
        raise AssertionError("Kafka did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def nodes(self) -> list[int]:
        return [1]

    def kill(self, node: int) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(30)
            self.proc = None

    def signal(self, node: int, sig: int) -> None:
        if self.proc is not None:
            self.proc.send_signal(sig)

    def restart(self, node: int) -> None:
        from support.kafka_jars import _QUIET_LOGGER, _SERVER_JVM_FLAGS, require

        with (self.home / "kafka.log").open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    require("java"),
                    *_SERVER_JVM_FLAGS,
                    _QUIET_LOGGER,
                    "-cp",
                    f"{self.libs}/*",
                    "kafka.Kafka",
                    str(self.props),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self._wait_up()

    def partition_dir(self, topic: str, partition: int) -> Path | None:
        return self.home / "data" / f"{topic}-{partition}"

    def coordinator_node(self, transactional_id: str) -> int | None:
        return 1

    def leader_node(self, topic: str, partition: int) -> int | None:
        return 1

    def log_text(self) -> str:
        return (self.home / "kafka.log").read_text(errors="replace")


class KafkacoreCluster:
    """Three kafkacore brokers on ZooKeeper (``support.cluster.Cluster``), RF 3 for the
    topics and ``__transaction_state``, min.insync.replicas 2."""

    def __init__(self, zookeeper_connect: str, directory: Path, *extra: str) -> None:
        from support.cluster import Cluster

        self.cluster = Cluster(
            zookeeper_connect,
            directory,
            overrides=(
                "min.insync.replicas=2",
                "default.replication.factor=3",
                "offsets.topic.replication.factor=3",
                "transaction.state.log.replication.factor=3",
                "transaction.state.log.min.isr=2",
                "unclean.leader.election.enable=false",
                *TXN_BROKER_CONFIG,
                *extra,
            ),
        )
        self._all = ",".join(b.bootstrap for b in self.cluster.brokers.values())

    @property
    def bootstrap(self) -> str:
        return self._all

    def start(self) -> None:
        self.cluster.start()

    def stop(self) -> None:
        self.cluster.stop()

    def nodes(self) -> list[int]:
        return sorted(self.cluster.brokers)

    def kill(self, node: int) -> None:
        self.cluster.kill(node)

    def signal(self, node: int, sig: int) -> None:
        proc = self.cluster.brokers[node].proc
        if proc is not None:
            proc.send_signal(sig)

    def restart(self, node: int) -> None:
        self.cluster.restart(node)

    def partition_dir(self, topic: str, partition: int) -> Path | None:
        return None  # replicas differ in where they are; the raw log is read by Fetch

    def coordinator_node(self, transactional_id: str) -> int | None:
        p = partition_for_transactional_id(transactional_id, TXN_STATE_PARTITIONS)
        leader = self.cluster.leader("__transaction_state", p)
        return leader if leader >= 0 else None

    def leader_node(self, topic: str, partition: int) -> int | None:
        leader = self.cluster.leader(topic, partition)
        return leader if leader >= 0 else None

    def log_text(self) -> str:
        return "\n".join(
            f"--- broker {n}\n{b.log_text()[-3000:]}" for n, b in self.cluster.brokers.items()
        )


def create_topic(
    bootstrap: str, replication_factor: int, *names: str, partitions: int = PARTITIONS
) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = names or (TOPIC,)
    futures = admin.create_topics(
        [NewTopic(name, partitions, replication_factor) for name in topics], operation_timeout=30
    )
    for name in topics:
        futures[name].result(60)


def nemesis_schedule(seed: int, duration_s: float, gap_s: tuple[float, float]) -> list[float]:
    """The seeded start times of the faults (seconds into the run)."""
    rng = random.Random(f"nemesis/{seed}")
    times, t = [], rng.uniform(3.0, 5.0)
    while t < duration_s - 2:
        times.append(round(t, 2))
        t += rng.uniform(*gap_s)
    return times


def run_once(
    target: Target,
    directory: Path,
    seed: int,
    *,
    duration_s: float = 20.0,
    workers: int = 2,
    gap_s: tuple[float, float] = (6.0, 10.0),
    down_s: tuple[float, float] = (0.2, 1.5),
    replication_factor: int = 1,
    copy: bool = True,
    log: Callable[[str], None] = lambda s: None,
) -> Result:
    """One seeded run against a started ``target``; the checker's result (history and
    log-level checks merged)."""
    directory.mkdir(parents=True, exist_ok=True)
    history = History(directory / "history.jsonl")
    rng = random.Random(f"run/{seed}")
    faults = nemesis_schedule(seed, duration_s, gap_s)
    history.write("meta", seed=seed, topic=TOPIC, partitions=PARTITIONS, faults=faults)
    create_topic(target.bootstrap, replication_factor, TOPIC, COPY_TOPIC)
    names = [f"txnchaos-{seed}-w{i}" for i in range(workers)]
    pool = [
        TxnWorker(target.bootstrap, TOPIC, PARTITIONS, name, history, seed=seed, pause_s=0.01)
        for name in names
    ]
    reader = LiveReader(target.bootstrap, TOPIC, PARTITIONS, "live", history)
    copy_history = History(directory / "copy-history.jsonl")
    copier = None
    if copy:
        copier = CopyWorker(
            target.bootstrap,
            TOPIC,
            COPY_TOPIC,
            PARTITIONS,
            f"txnchaos-{seed}-copier",
            copy_history,
            seed=seed,
        )
        names.append(copier.txn_name)
        copier.start()
    for w in pool:
        w.start()
    reader.start()
    # the faults start once every worker committed a transaction (the coordinator and
    # __transaction_state exist): a warm-up outside the run's duration
    warm = time.monotonic() + 60
    while time.monotonic() < warm and not all(w.committed for w in pool):
        time.sleep(0.1)
    history.write("warm", committed={w.txn_name: w.committed for w in pool})
    t0 = time.monotonic()
    try:
        for at in faults:
            time.sleep(max(0.0, at - (time.monotonic() - t0)))
            nodes = target.nodes()
            choice = rng.random()
            if choice < 0.4:
                node = target.coordinator_node(rng.choice(names))
                why = "coordinator"
            elif choice < 0.8:
                node = target.leader_node(TOPIC, rng.randrange(PARTITIONS))
                why = "leader"
            else:
                node, why = None, "any"
            if node is None:
                node = rng.choice(nodes)
            history.write("fault", kind="kill", node=node, why=why)
            log(f"t={time.monotonic() - t0:.1f}s kill {node} ({why})")
            target.kill(node)
            time.sleep(rng.uniform(*down_s))
            target.restart(node)
            history.write("heal", node=node)
            log(f"t={time.monotonic() - t0:.1f}s restarted {node}")
        time.sleep(max(0.0, duration_s - (time.monotonic() - t0)))
    finally:
        for w in pool:
            w.stop()
        for w in pool:
            w.join(90)
    stuck = [w.txn_name for w in pool if w.is_alive()]
    history.write("workers-stopped", stuck=stuck, txns={w.txn_name: w.done_txns for w in pool})
    ends = wait_stable(target.bootstrap, TOPIC, PARTITIONS, timeout_s=60)
    final = final_read(target.bootstrap, TOPIC, PARTITIONS, history, ends)
    if copier is not None:
        # the copier catches up with everything committed, then its output is read
        def replacement(attempt: int) -> CopyWorker:
            again = CopyWorker(
                target.bootstrap,
                TOPIC,
                COPY_TOPIC,
                PARTITIONS,
                f"txnchaos-{seed}-copier",
                copy_history,
                seed=seed,
            )
            again.txn_prefix = f"txnchaos-{seed}-copier-r{attempt}"
            return again

        copier = drain_copier(copier, ends, replacement, wait_s=30)
        history.write("copier-stopped", errors=copier.errors[-5:])
        copy_ends = wait_stable(target.bootstrap, COPY_TOPIC, PARTITIONS, timeout_s=60)
        final_read(target.bootstrap, COPY_TOPIC, PARTITIONS, copy_history, copy_ends)
    copy_history.close()
    time.sleep(0.5)
    reader.stop()
    reader.join(30)
    history.close()
    result = check(history.events)
    if copier is not None:
        sources = [value for p in final for _, value in final[p]]
        result.merge(check(copy_history.events), "copy:")
        result.merge(check_copy(copy_history.events, sources))
    outcomes = _outcomes_of(history.events)
    for p in range(PARTITIONS):
        batches = raw_log(target.bootstrap, TOPIC, p)
        pdir = target.partition_dir(TOPIC, p)
        index = read_txnindex(pdir) if pdir is not None else None
        part, open_at_end = check_partition_log(p, batches, index, outcomes, final[p])
        if open_at_end:
            part.flag("open_at_end", {"partition": p, "first_offsets": open_at_end})
        result.merge(part)
    errors = [e for w in pool for e in w.errors]
    (directory / "result.json").write_text(
        json.dumps(
            {
                "seed": seed,
                "summary": result.summary(),
                "anomalies": result.anomalies,
                "counts": dict(result.counts),
                "worker_errors": errors[:50],
                "stuck_workers": stuck,
                "live_reads": reader.count,
            },
            indent=1,
            default=str,
        ),
        encoding="utf-8",
    )
    if stuck:
        result.flag("stuck_worker", stuck)
    return result


def _outcomes_of(events: list[dict[str, object]]) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    for e in events:
        if e["type"] == "send":
            outcomes.setdefault(txn_of(str(e["value"])), "open")
        elif e["type"] == "outcome":
            outcomes[str(e["txn"])] = str(e["outcome"])
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="txn_chaos.campaign", description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of faults per run")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument(
        "--gap",
        type=float,
        nargs=2,
        default=(6.0, 10.0),
        metavar=("MIN", "MAX"),
        help="seconds between the starts of two faults",
    )
    parser.add_argument("--target", choices=("kafkacore", "cluster", "kafka"), default="kafkacore")
    parser.add_argument("--out", type=Path, default=Path("chaos-runs/txn"))
    parser.add_argument("--check", type=Path, help="only re-check this history.jsonl")
    args = parser.parse_args(argv)
    if args.check is not None:
        result = check(read_history(args.check))
        print(result.summary())
        print(result.details())
        return 0 if result.ok else 1
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    zk = None
    if args.target == "cluster":
        from support.zookeeper import ZooKeeperServer

        zk = ZooKeeperServer(out / "zookeeper").start()
    try:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            directory = out / f"{args.target}-seed-{seed}"
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir(parents=True, exist_ok=True)
            target: Target
            if args.target == "kafkacore":
                target = KafkacoreNode(directory)
                rf = 1
            elif args.target == "kafka":
                target = KafkaNode(directory)
                rf = 1
            else:
                assert zk is not None
                target = KafkacoreCluster(f"{zk.connect_string}/txn-seed-{seed}", directory)
                rf = 3
            started = time.monotonic()
            target.start()
            try:
                result = run_once(
                    target,
                    directory,
                    seed,
                    duration_s=args.duration,
                    workers=args.workers,
                    gap_s=(args.gap[0], args.gap[1]),
                    replication_factor=rf,
                    log=lambda s: print(f"  {s}", flush=True),
                )
                row = f"seed={seed} {result.summary()} wall={time.monotonic() - started:.0f}s"
                row += " OK" if result.ok else " FAILED"
            except Exception as exc:
                row = f"seed={seed} HARNESS ERROR {exc!r:.300}"
                result = None
            finally:
                target.stop()
            print(row, flush=True)
            rows.append((row, result is not None and result.ok))
    finally:
        if zk is not None:
            zk.stop()
    (out / f"table-{args.target}.txt").write_text("\n".join(r for r, _ in rows) + "\n")
    return 0 if all(ok for _, ok in rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
