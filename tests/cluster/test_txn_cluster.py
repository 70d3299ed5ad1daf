"""Transactions across a failing three-broker kafkacore cluster (ZooKeeper mode;
``__transaction_state`` and the topic with RF 3 and min.insync.replicas 2):

* the transaction coordinator's broker (the leader of ``__transaction_state-<partition of
  the transactional id>``) is SIGKILLed at seeded moments right after
  ``commit_transaction`` is called: the transaction commits, on the coordinator elected
  next (which loads the state and finishes a PrepareCommit it finds), with every record;
* a partition leader is frozen (SIGSTOP) before ``commit_transaction``, so the
  coordinator persists PrepareCommit and answers while its marker for that partition
  cannot land, and is then SIGKILLed: the marker goes to the new leader; the commit is
  complete on every partition;
* (with ``TXN_COORDINATOR_ROUNDS=commit,abort``) an aborted transaction the same way.

Each case is judged by :func:`support.txn_checker.check` (the transaction is all or
nothing to a read_committed consumer; commits that returned are all visible; no aborted
read) after LSO = HW on every partition, and by
:func:`support.txn_checker.check_partition_log` on the raw logs (markers agree with the
outcomes; the read_committed read is the log without the aborted records)."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaException, Producer

from cluster.conftest import create_topic, new_cluster
from kafkacore.coordinator.txn_records import partition_for_transactional_id
from support.cluster import Cluster, wait_until
from support.txn_checker import History, Result, check, check_partition_log
from support.zookeeper import ZooKeeperServer
from txn_chaos.workload import PRODUCER_BASE, final_read, raw_log, wait_stable

pytestmark = pytest.mark.timeout(300)

TOPIC = "txn-atomic"
PARTITIONS = 3
TXN_PARTITIONS = 50
SEED = 11
# The EndTxn each coordinator kill follows (commit); ``make chaos``'s cluster campaign kills
# coordinators under aborts too (TXN_COORDINATOR_ROUNDS=commit,abort runs both here).
COORDINATOR_ROUNDS = tuple(
    kind == "commit" for kind in os.environ.get("TXN_COORDINATOR_ROUNDS", "commit").split(",")
)
CLUSTER_CONFIG = (
    "min.insync.replicas=2",
    "default.replication.factor=3",
    "offsets.topic.replication.factor=3",
    "transaction.state.log.replication.factor=3",
    "transaction.state.log.min.isr=2",
    "unclean.leader.election.enable=false",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
)


@pytest.fixture(scope="module")
def txn_cluster(
    zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    c = new_cluster(zookeeper, tmp_path_factory.mktemp("txn"), *CLUSTER_CONFIG)
    try:
        c.start()
        create_topic(c, TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
        yield c
    finally:
        c.stop()


def coordinator_of(cluster: Cluster, transactional_id: str) -> int:
    return cluster.wait_for_leader(
        "__transaction_state", partition_for_transactional_id(transactional_id, TXN_PARTITIONS)
    )


class Txns:
    """A transactional producer on ``transactional_id`` recording into ``history``."""

    def __init__(self, cluster: Cluster, transactional_id: str, history: History) -> None:
        self.id = transactional_id
        self.history = history
        self.n = 0
        self.producer = Producer(
            {
                "bootstrap.servers": cluster.bootstrap,
                "transactional.id": transactional_id,
                **PRODUCER_BASE,
                "transaction.timeout.ms": 30000,
                "message.timeout.ms": 29000,
            }
        )
        self.producer.init_transactions(60)

    def write(self, records_per_partition: int = 2) -> str:
        """Begins a transaction and writes to every partition; flushed."""
        txn = f"{self.id}.{self.n}"
        self.n += 1
        self.producer.begin_transaction()
        i = 0
        for p in range(PARTITIONS):
            for _ in range(records_per_partition):
                value = f"{txn}#{i}"
                i += 1
                self.history.write("send", txn=txn, value=value, partition=p)
                self.producer.produce(
                    TOPIC,
                    value=value.encode(),
                    partition=p,
                    on_delivery=lambda err, msg: (
                        err is None
                        and self.history.write(
                            "ack",
                            value=msg.value().decode(),
                            partition=msg.partition(),
                            offset=msg.offset(),
                        )
                    ),
                )
        assert self.producer.flush(60) == 0
        return txn

    def end(self, txn: str, commit: bool, patience_s: float = 90.0) -> str:
        """commit/abort, retried while retriable; the outcome recorded and returned."""
        self.history.write("end", txn=txn, commit=commit)
        deadline = time.monotonic() + patience_s
        errors = []
        while True:
            try:
                if commit:
                    self.producer.commit_transaction(10)
                else:
                    self.producer.abort_transaction(10)
                outcome = "committed" if commit else "aborted"
                break
            except KafkaException as exc:
                err = exc.args[0]
                errors.append(str(err))
                if err.retriable() and not err.fatal() and time.monotonic() < deadline:
                    continue
                if commit and err.txn_requires_abort():
                    # librdkafka gave up on the commit: aborted if the coordinator agrees
                    try:
                        self.producer.abort_transaction(30)
                        outcome = "failed"
                        break
                    except KafkaException as again:
                        errors.append(str(again.args[0]))
                outcome = "unknown" if commit else "aborted"
                break
        self.history.write("outcome", txn=txn, outcome=outcome, errors=errors[-3:])
        return outcome


def judge(cluster: Cluster, history: History, name: str) -> Result:
    ends = wait_stable(cluster.bootstrap, TOPIC, PARTITIONS, timeout_s=60)
    final = final_read(cluster.bootstrap, TOPIC, PARTITIONS, history, ends, name=name)
    events = [e for e in history.events if not e.get("final") or e["consumer"] == name]
    result = check(events)
    outcomes = {e["txn"]: e["outcome"] for e in events if e["type"] == "outcome"}
    for e in events:
        if e["type"] == "send":
            outcomes.setdefault(e["txn"], "open")
    for p in range(PARTITIONS):
        part, open_at_end = check_partition_log(
            p, raw_log(cluster.bootstrap, TOPIC, p), None, outcomes, final[p]
        )
        if open_at_end:
            part.flag("open_at_end", {"partition": p, "first_offsets": open_at_end})
        result.merge(part)
    return result


def broker_logs(cluster: Cluster) -> str:
    return "\n".join(f"--- broker {n}\n{b.log_text()[-2500:]}" for n, b in cluster.brokers.items())


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return History(tmp_path_factory.mktemp("txn-history") / "history.jsonl")


def test_coordinator_killed_mid_commit(txn_cluster: Cluster, history: History) -> None:
    rng = random.Random(SEED)
    for round_, commit in enumerate(COORDINATOR_ROUNDS):
        txns = Txns(txn_cluster, f"txn-coord-{SEED}-{round_}", history)
        warm = txns.write()
        assert txns.end(warm, True) == "committed"
        coordinator = coordinator_of(txn_cluster, txns.id)
        txn = txns.write()
        delay = rng.uniform(0.0, 0.05)

        def kill(node: int = coordinator, delay: float = delay) -> None:
            time.sleep(delay)
            history.write("fault", kind="kill", node=node, why="coordinator")
            txn_cluster.kill(node)

        killer = threading.Thread(target=kill)
        killer.start()
        outcome = txns.end(txn, commit)
        killer.join()
        # a commit either returns or (an abortable error from librdkafka) is aborted with
        # the coordinator's consent; never undecided
        assert outcome in (("committed", "failed") if commit else ("aborted",)), history.events[-1]
        txn_partition = partition_for_transactional_id(txns.id, TXN_PARTITIONS)
        txn_cluster.wait_for_leader("__transaction_state", txn_partition, not_in=[coordinator])
        # the producer continues on the new coordinator
        after = txns.write()
        assert txns.end(after, True) == "committed"
        result = judge(txn_cluster, history, f"final-coord-{round_}")
        assert result.ok, (
            f"round {round_}: {result.summary()}\n{result.details()}\n{broker_logs(txn_cluster)}"
        )
        txn_cluster.restart(coordinator)


def test_partition_leader_killed_between_prepare_and_markers(
    txn_cluster: Cluster, history: History
) -> None:
    # an id whose coordinator does not lead partition 0; that leader gets frozen
    for i in range(100):
        transactional_id = f"txn-markers-{SEED}-{i}"
        coordinator = coordinator_of(txn_cluster, transactional_id)
        leader = txn_cluster.wait_for_leader(TOPIC, 0)
        if coordinator != leader:
            break
    txns = Txns(txn_cluster, transactional_id, history)
    warm = txns.write()
    assert txns.end(warm, True) == "committed"
    txn = txns.write()
    broker = txn_cluster.brokers[leader]
    assert broker.proc is not None
    broker.proc.send_signal(signal.SIGSTOP)
    history.write("fault", kind="pause", node=leader, why="leader of partition 0")
    try:
        # PrepareCommit needs the ISR of its __transaction_state partition: a frozen
        # follower there is dropped from the ISR after replica.lag.time.max.ms
        outcome = txns.end(txn, True)
    finally:
        history.write("fault", kind="kill", node=leader)
        txn_cluster.kill(leader)
    assert outcome == "committed", history.events[-1]
    new_leader = txn_cluster.wait_for_leader(TOPIC, 0, not_in=[leader])
    assert new_leader != leader
    after = txns.write()
    assert txns.end(after, True) == "committed"
    result = judge(txn_cluster, history, "final-markers")
    assert result.ok, f"{result.summary()}\n{result.details()}\n{broker_logs(txn_cluster)}"
    committed = [
        e for e in history.events if e["type"] == "outcome" and e["outcome"] == "committed"
    ]
    assert len(committed) >= 3
    txn_cluster.restart(leader)
    wait_until(
        lambda: len(txn_cluster.partition_state(TOPIC, 0)["isr"]) == 3, 60, "the ISR back to 3"
    )
