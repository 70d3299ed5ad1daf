"""One chaos run and the seeded campaign (``make chaos``).

    PYTHONPATH=python:tests python -m chaos.campaign --seeds 20 --duration 60 --out chaos-runs

A run: ZooKeeper, then three kafkacore brokers, each behind a :class:`~chaos.proxy.FaultProxy`
for Kafka traffic (its ``advertised.listeners`` name the proxy, so clients and the other
brokers go through it) and another in front of ZooKeeper (its ``zookeeper.connect``).
Broker 3 has two log dirs, the second on a 64 MiB tmpfs this run mounts (for ``disk-full``).
A topic of 6 partitions, RF 3, ``min.insync.replicas=2``; two idempotent acks=all producers
and a group of two consumers (manual synchronous commits) run while the faults of
:func:`chaos.schedule.make_schedule` come and go; then the cluster is healed, every
partition is read from offset 0 by a fresh consumer and every replica's segment files are
read; everything goes to ``history.jsonl``, which :mod:`chaos.check` judges.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from chaos.check import Result, check, read_history
from chaos.proxy import FaultProxy, ProxyLoop
from chaos.schedule import Fault, make_schedule
from support.brokers import free_port
from support.cluster import PRODUCER_CONFIG, Cluster, wait_until
from support.tmpfs import write_until_full
from support.zookeeper import ZooKeeperServer, unique_chroot

TOPIC = "chaos"
PARTITIONS = 6
GROUP = "chaos-group"
DISK_BROKER = 3
TMPFS_SIZE = "64m"
BROKER_CONFIG = (
    "min.insync.replicas=2",
    "default.replication.factor=3",
    "offsets.topic.replication.factor=3",
    "unclean.leader.election.enable=false",
    "log.index.size.max.bytes=262144",
    "log.segment.bytes=4194304",
    # Kafka's default, checked often: leaderships go back to the preferred replicas after a
    # restart, so broker 3 leads partitions again (some of them on its tmpfs) for disk-full.
    "auto.leader.rebalance.enable=true",
    "leader.imbalance.check.interval.seconds=5",
)


class History:
    """The history file: one JSON object per line, flushed as written (a thread-safe
    append: the producers' delivery callbacks, the consumers and the nemesis all write)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115
        self._lock = threading.Lock()
        self._t0 = time.monotonic()

    def now(self) -> float:
        return round(time.monotonic() - self._t0, 3)

    def write(self, type_: str, **fields: Any) -> None:
        line = json.dumps({"t": self.now(), "type": type_, **fields}, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


# -- the cluster behind its proxies ---------------------------------------------------------


class ChaosCluster:
    def __init__(self, zk: ZooKeeperServer, directory: Path, *, disk_fault: bool) -> None:
        self.directory = directory
        self.loop = ProxyLoop()
        self.kafka_proxies: dict[int, FaultProxy] = {}
        self.zk_proxies: dict[int, FaultProxy] = {}
        self.tmpfs: Path | None = directory / "tmpfs" if disk_fault else None
        chroot = unique_chroot(zk.connect_string, "chaos")
        path = chroot.partition("/")[2]
        ids = (1, 2, 3)
        per_broker: dict[int, list[str]] = {}
        for i in ids:
            kp = FaultProxy(self.loop, f"kafka-{i}", ("localhost", 0), kafka=True)
            zp = FaultProxy(self.loop, f"zk-{i}", ("127.0.0.1", zk.port), kafka=False)
            self.kafka_proxies[i] = kp.start()
            self.zk_proxies[i] = zp.start()
            per_broker[i] = [
                f"advertised.listeners=PLAINTEXT://127.0.0.1:{kp.port}",
                f"zookeeper.connect=127.0.0.1:{zp.port}/{path}",
            ]
        # The brokers' own ports are picked once the proxies hold theirs (picked before, a
        # proxy's ephemeral port could be the one a broker then fails to bind).
        real_ports = {i: free_port() for i in ids}
        for i in ids:
            self.kafka_proxies[i].target = ("localhost", real_ports[i])
        if self.tmpfs is not None:
            self.tmpfs.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(self.tmpfs)],
                check=True,
            )
            normal = directory / f"broker-{DISK_BROKER}"
            per_broker[DISK_BROKER].append(f"log.dirs={normal},{self.tmpfs}")
        self.cluster = Cluster(
            chroot,
            directory,
            overrides=BROKER_CONFIG,
            ports=[real_ports[i] for i in ids],
            broker_overrides=per_broker,
        )

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p.port}" for p in self.kafka_proxies.values())

    def log_dirs(self, broker: int) -> list[Path]:
        dirs = [self.directory / f"broker-{broker}"]
        if broker == DISK_BROKER and self.tmpfs is not None:
            dirs.append(self.tmpfs)
        return dirs

    def heal_all(self) -> None:
        for proxy in [*self.kafka_proxies.values(), *self.zk_proxies.values()]:
            proxy.heal()
        for broker in self.cluster.brokers.values():
            if broker.proc is not None:
                with suppress(ProcessLookupError):
                    broker.proc.send_signal(signal.SIGCONT)
        if self.tmpfs is not None:
            with suppress(FileNotFoundError):
                (self.tmpfs / "filler").unlink()

    def close(self) -> None:
        try:
            self.heal_all()
            for broker in self.cluster.brokers.values():
                if broker.running:
                    broker.kill()
            with suppress(Exception):
                self.cluster.stop()
        finally:
            for proxy in [*self.kafka_proxies.values(), *self.zk_proxies.values()]:
                with suppress(Exception):
                    proxy.stop()
            self.loop.close()
            if self.tmpfs is not None:
                unmount(self.tmpfs)


def unmount(path: Path) -> None:
    if subprocess.run(["mountpoint", "-q", str(path)], check=False).returncode != 0:
        return
    if subprocess.run(["umount", str(path)], check=False).returncode != 0:
        subprocess.run(["umount", "-l", str(path)], check=False)


# -- the workload ---------------------------------------------------------------------------


class Workload:
    def __init__(self, chaos: ChaosCluster, history: History, *, rate: float) -> None:
        self.chaos = chaos
        self.history = history
        self.rate = rate
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def start(self) -> None:
        for i in range(2):
            self._spawn(f"producer-{i}", self._produce, i)
        for i in range(2):
            self._spawn(f"consumer-{i}", self._consume, i)
        self._spawn("observer", self._observe)

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(120)

    def _spawn(self, name: str, fn: Any, *args: Any) -> None:
        def guarded() -> None:
            try:
                fn(*args)
            except BaseException as exc:  # recorded: the harness must not hide its own bugs
                self.errors.append(exc)
                self.history.write("harness-error", thread=name, error=repr(exc))

        thread = threading.Thread(target=guarded, name=name, daemon=True)
        thread.start()
        self.threads.append(thread)

    def _produce(self, index: int) -> None:
        history = self.history
        producer = Producer(
            {"bootstrap.servers": self.chaos.bootstrap, **PRODUCER_CONFIG, "log_level": 3}
        )

        def delivered(err: KafkaError | None, msg: Any) -> None:
            value = msg.value().decode()
            if err is None:
                history.write("ack", value=value, partition=msg.partition(), offset=msg.offset())
            else:
                history.write("fail", value=value, partition=msg.partition(), error=str(err))

        seq = 0
        interval = 2.0 / self.rate  # two producers share the rate
        next_at = time.monotonic()
        while not self.stopping.is_set():
            value = f"p{index}-{seq}"
            partition = seq % PARTITIONS
            history.write("send", producer=index, value=value, partition=partition)
            while True:
                try:
                    producer.produce(
                        TOPIC, value=value.encode(), partition=partition, on_delivery=delivered
                    )
                    break
                except BufferError:
                    producer.poll(0.1)
            seq += 1
            producer.poll(0)
            next_at += interval
            pause = next_at - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            else:
                next_at = time.monotonic()
        remaining = producer.flush(90)
        history.write("producer-closed", producer=index, unflushed=remaining)

    def _consume(self, index: int) -> None:
        history = self.history
        consumer = Consumer(
            {
                "bootstrap.servers": self.chaos.bootstrap,
                "group.id": GROUP,
                "client.id": f"chaos-consumer-{index}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 10000,
                "heartbeat.interval.ms": 1000,
                "topic.metadata.refresh.interval.ms": 1000,
                "log_level": 3,
            }
        )
        consumer.subscribe([TOPIC])
        positions: dict[int, int] = {}
        last_commit = time.monotonic()
        try:
            while not self.stopping.is_set():
                for msg in consumer.consume(200, 0.5):
                    if msg.error():
                        continue
                    history.write(
                        "read",
                        consumer=index,
                        partition=msg.partition(),
                        offset=msg.offset(),
                        value=msg.value().decode(),
                    )
                    positions[msg.partition()] = msg.offset() + 1
                if positions and time.monotonic() - last_commit > 1.0:
                    last_commit = time.monotonic()
                    offsets = [TopicPartition(TOPIC, p, o) for p, o in positions.items()]
                    try:
                        done = consumer.commit(offsets=offsets, asynchronous=False) or []
                    except KafkaException as exc:
                        history.write("commit-fail", consumer=index, error=str(exc))
                    else:
                        for tp in done:
                            if tp.error is None:
                                history.write(
                                    "commit",
                                    consumer=index,
                                    partition=tp.partition,
                                    offset=tp.offset,
                                )
                    positions.clear()
        finally:
            consumer.close()

    def _observe(self) -> None:
        """The group's committed offsets as its coordinator answers OffsetFetch."""
        observer = Consumer(
            {
                "bootstrap.servers": self.chaos.bootstrap,
                "group.id": GROUP,
                "client.id": "chaos-observer",
                "enable.auto.commit": False,
            }
        )
        try:
            while not self.stopping.wait(1.0):
                try:
                    tps = observer.committed(
                        [TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=5
                    )
                except KafkaException:
                    continue
                for tp in tps:
                    if tp.error is None and tp.offset >= 0:
                        self.history.write("committed", partition=tp.partition, offset=tp.offset)
        finally:
            observer.close()


# -- the nemesis ----------------------------------------------------------------------------


class Nemesis:
    def __init__(self, chaos: ChaosCluster, history: History) -> None:
        self.chaos = chaos
        self.cluster = chaos.cluster
        self.history = history

    def leader_of(self, partition: int) -> int:
        leader = self.cluster.leader(TOPIC, partition)
        if leader < 0:
            leader = 1 + partition % 3
        return leader

    def led_by(self, broker: int) -> list[int]:
        return [p for p in range(PARTITIONS) if self.cluster.leader(TOPIC, p) == broker]

    def run(self, fault: Fault) -> None:
        getattr(self, "_" + fault.kind.replace("-", "_"))(fault)
        self.history.write("state", after=fault.kind, partitions=self.states())

    def states(self) -> dict[int, Any]:
        """``partition -> [leader, isr]`` from ZooKeeper."""
        out: dict[int, Any] = {}
        for p in range(PARTITIONS):
            state = self.cluster.partition_state(TOPIC, p) or {}
            out[p] = [state.get("leader"), state.get("isr")]
        return out

    def _hold(self, fault: Fault, since: float) -> None:
        time.sleep(max(0.0, fault.duration_s - (time.monotonic() - since)))

    def _kill_broker(self, fault: Fault, victim: int) -> None:
        led = self.led_by(victim)
        self.history.write("fault", kind=fault.kind, broker=victim, leads=led)
        start = time.monotonic()
        self.cluster.kill(victim)
        self._measure_recovery(victim, led, start)
        self._hold(fault, start)
        self.cluster.restart(victim)
        self.history.write("heal", kind=fault.kind, broker=victim)

    def _measure_recovery(self, victim: int, partitions: list[int], start: float) -> None:
        pending = set(partitions)
        deadline = start + 60
        while pending and time.monotonic() < deadline:
            for p in sorted(pending):
                leader = self.cluster.leader(TOPIC, p)
                if leader >= 0 and leader != victim:
                    pending.discard(p)
                    self.history.write(
                        "recovery",
                        partition=p,
                        old_leader=victim,
                        new_leader=leader,
                        seconds=round(time.monotonic() - start, 3),
                    )
            time.sleep(0.05)
        for p in pending:
            self.history.write("no-recovery", partition=p, old_leader=victim)

    def _kill(self, fault: Fault) -> None:
        self._kill_broker(fault, self.leader_of(fault.partition))

    def _kill_controller(self, fault: Fault) -> None:
        controller = self.cluster.controller_id() or 1
        self._kill_broker(fault, controller)

    def _pause(self, fault: Fault) -> None:
        victim = self.leader_of(fault.partition)
        proc = self.cluster.brokers[victim].proc
        if proc is None:
            return
        self.history.write("fault", kind=fault.kind, broker=victim)
        proc.send_signal(signal.SIGSTOP)
        time.sleep(fault.duration_s)
        proc.send_signal(signal.SIGCONT)
        self.history.write("heal", kind=fault.kind, broker=victim)

    def _cut(self, a: int, b: int, direction: str = "both") -> None:
        self.chaos.kafka_proxies[a].block(f"broker-{b}", direction)
        self.chaos.kafka_proxies[b].block(f"broker-{a}", direction)

    def _partition_leader_controller(self, fault: Fault) -> None:
        leader = self.leader_of(fault.partition)
        controller = self.cluster.controller_id() or 1
        if controller == leader:  # the leader is the controller: cut it from everyone else
            others = [b for b in self.cluster.brokers if b != leader]
        else:
            others = [controller]
        self.history.write(
            "fault", kind=fault.kind, broker=leader, controller=controller, cut_from=others
        )
        for other in others:
            self._cut(leader, other)
        time.sleep(fault.duration_s)
        for other in others:
            self.chaos.kafka_proxies[leader].heal()
            self.chaos.kafka_proxies[other].heal()
        self.history.write("heal", kind=fault.kind, broker=leader)

    def _partition_zookeeper(self, fault: Fault) -> None:
        victim = 1 + int(fault.pick * 3)
        self.history.write("fault", kind=fault.kind, broker=victim)
        self.chaos.zk_proxies[victim].block("*", "both")
        time.sleep(fault.duration_s)
        self.chaos.zk_proxies[victim].heal()
        self.history.write("heal", kind=fault.kind, broker=victim)

    def _one_way(self, fault: Fault) -> None:
        leader = self.leader_of(fault.partition)
        direction = "in" if fault.pick < 0.5 else "out"
        proxy = self.chaos.kafka_proxies[leader]
        self.history.write("fault", kind=fault.kind, broker=leader, direction=direction)
        for other in self.cluster.brokers:
            if other != leader:
                proxy.block(f"broker-{other}", direction)
        time.sleep(fault.duration_s)
        proxy.heal()
        self.history.write("heal", kind=fault.kind, broker=leader)

    def _reset(self, fault: Fault) -> None:
        victim = 1 + int(fault.pick * 3)
        self.history.write("fault", kind=fault.kind, broker=victim)
        self.chaos.kafka_proxies[victim].reset()
        time.sleep(fault.duration_s)
        self.history.write("heal", kind=fault.kind, broker=victim)

    def _disk_full(self, fault: Fault) -> None:
        tmpfs = self.chaos.tmpfs
        if tmpfs is None:
            return
        filler = tmpfs / "filler"
        written = fill(filler)
        on_tmpfs = sorted(int(d.name.rsplit("-", 1)[1]) for d in tmpfs.glob(f"{TOPIC}-*"))
        self.history.write(
            "fault",
            kind=fault.kind,
            broker=DISK_BROKER,
            filled_bytes=written,
            partitions_on_tmpfs=on_tmpfs,
            states=self.states(),
        )
        time.sleep(fault.duration_s)
        with suppress(FileNotFoundError):
            filler.unlink()
        # The broker took the full log dir offline (its replicas there moved away); as in
        # Kafka, the dir comes back only with a restart, which an operator does once the
        # disk has room again: a clean (SIGTERM) restart here.
        self.cluster.restart(DISK_BROKER)
        self.history.write("heal", kind=fault.kind, broker=DISK_BROKER, states=self.states())

    def revive_dead(self) -> None:
        """A broker that died on its own (not one we killed) is recorded and restarted, and
        so is one whose restart failed."""
        for node_id, broker in self.cluster.brokers.items():
            proc = broker.proc
            if proc is not None and proc.poll() is None:
                continue
            if proc is not None:
                tail = broker.log_text()[-1500:]
                self.history.write("exited", broker=node_id, code=proc.returncode, log_tail=tail)
                broker.proc, broker.returncode = None, proc.returncode
            else:
                self.history.write("down", broker=node_id)
            try:
                self.cluster.restart(node_id)
            except AssertionError as exc:
                self.history.write("restart-failed", broker=node_id, error=str(exc)[-1500:])


def fill(path: Path) -> int:
    """Write zeros to ``path`` until its file system has not one byte left (unbuffered, in
    ever smaller chunks: a buffered writer can leave up to a chunk free)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        return write_until_full(fd, (1 << 20, 1 << 12, 1))
    finally:
        os.close(fd)


# -- after the run: reading it all back -----------------------------------------------------


def read_batches(partition_dir: Path) -> list[list[int]]:
    """``[base offset, last offset, crc]`` of every batch in the segment files (v2 batches:
    base offset int64, length int32, leader epoch int32, magic int8, crc uint32,
    attributes int16, last offset delta int32)."""
    batches: list[list[int]] = []
    for segment in sorted(partition_dir.glob("*.log")):
        data = segment.read_bytes()
        pos = 0
        while pos + 27 <= len(data):
            base, length = struct.unpack_from(">qi", data, pos)
            if length <= 0 or pos + 12 + length > len(data):
                break
            (crc,) = struct.unpack_from(">I", data, pos + 17)
            (delta,) = struct.unpack_from(">i", data, pos + 23)
            batches.append([base, base + delta, crc])
            pos += 12 + length
    return batches


def wait_settled(chaos: ChaosCluster, history: History, timeout_s: float = 90.0) -> bool:
    try:
        for p in range(PARTITIONS):
            chaos.cluster.wait_for_isr(TOPIC, p, 3, timeout_s)
        return True
    except AssertionError as exc:
        history.write("not-settled", error=str(exc)[:500])
        return False


def record_replicas(chaos: ChaosCluster, history: History) -> None:
    """Every replica's batches, once their ends agree (or after 30 s, as they are)."""
    deadline = time.monotonic() + 30
    while True:
        found: dict[int, dict[int, list[list[int]]]] = {}
        for broker in chaos.cluster.brokers:
            for log_dir in chaos.log_dirs(broker):
                for p in range(PARTITIONS):
                    path = log_dir / f"{TOPIC}-{p}"
                    if path.is_dir():
                        found.setdefault(p, {})[broker] = read_batches(path)
        ends_agree = all(
            len({(b[-1][1] if b else -1) for b in by_broker.values()}) == 1
            for by_broker in found.values()
        )
        if ends_agree or time.monotonic() > deadline:
            break
        time.sleep(1)
    for p, by_broker in sorted(found.items()):
        for broker, batches in sorted(by_broker.items()):
            history.write("replica", broker=broker, partition=p, batches=batches)


def final_read(chaos: ChaosCluster, history: History, timeout_s: float = 90.0) -> None:
    consumer = Consumer(
        {
            "bootstrap.servers": chaos.bootstrap,
            "group.id": "chaos-final-reader",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
            "log_level": 3,
        }
    )
    try:
        ends: dict[int, int] = {}
        for p in range(PARTITIONS):

            def end(p: int = p) -> int | None:
                _, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=5)
                return high + 1

            ends[p] = wait_until(end, timeout_s, f"the end of {TOPIC}-{p}") - 1
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        positions = dict.fromkeys(range(PARTITIONS), 0)
        deadline = time.monotonic() + timeout_s
        while any(positions[p] < ends[p] for p in ends) and time.monotonic() < deadline:
            for msg in consumer.consume(500, 1.0):
                if msg.error():
                    continue
                history.write(
                    "final",
                    partition=msg.partition(),
                    offset=msg.offset(),
                    value=msg.value().decode(),
                )
                positions[msg.partition()] = msg.offset() + 1
        history.write("final-end", ends=ends, positions=positions)
    finally:
        consumer.close()


# -- one run --------------------------------------------------------------------------------


@contextmanager
def zookeeper_server(directory: Path) -> Iterator[ZooKeeperServer]:
    server = ZooKeeperServer(directory / "zookeeper").start()
    try:
        yield server
    finally:
        server.stop()


def run_once(
    zk: ZooKeeperServer,
    directory: Path,
    seed: int,
    *,
    duration_s: float = 60.0,
    rate: float = 200.0,
    disk_fault: bool = True,
    hold_s: tuple[float, float] = (3.0, 8.0),
) -> Result:
    directory.mkdir(parents=True, exist_ok=True)
    history = History(directory / "history.jsonl")
    schedule = make_schedule(
        seed, duration_s, partitions=PARTITIONS, disk_fault=disk_fault, hold_s=hold_s
    )
    history.write(
        "meta",
        seed=seed,
        topic=TOPIC,
        partitions=PARTITIONS,
        duration_s=duration_s,
        schedule=[f.__dict__ for f in schedule],
    )
    chaos = ChaosCluster(zk, directory, disk_fault=disk_fault)
    workload: Workload | None = None
    try:
        chaos.cluster.start()
        admin = AdminClient({"bootstrap.servers": chaos.bootstrap})
        admin.create_topics(
            [NewTopic(TOPIC, PARTITIONS, 3, config={"min.insync.replicas": "2"})],
            operation_timeout=30,
        )[TOPIC].result(60)
        del admin  # a client handle: it would keep reconnecting to the stopped proxies
        for p in range(PARTITIONS):
            chaos.cluster.wait_for_leader(TOPIC, p)
        workload = Workload(chaos, history, rate=rate)
        workload.start()
        nemesis = Nemesis(chaos, history)
        t0 = time.monotonic()
        for fault in schedule:
            delay = fault.start_s - (time.monotonic() - t0)
            if delay > 0:
                time.sleep(delay)
            nemesis.revive_dead()
            try:
                nemesis.run(fault)
            except Exception as exc:  # a fault that could not be applied is recorded
                history.write("fault-error", kind=fault.kind, error=repr(exc)[:500])
                chaos.heal_all()
        time.sleep(max(0.0, duration_s - (time.monotonic() - t0)))
        chaos.heal_all()
        nemesis.revive_dead()
        workload.stop()
        workload = None
        settled = wait_settled(chaos, history)
        final_read(chaos, history)
        if settled:
            record_replicas(chaos, history)
        history.write("end")
    finally:
        if workload is not None:
            workload.stopping.set()
        chaos.close()
        history.close()
    return check(read_history(directory / "history.jsonl"))


# -- the campaign ---------------------------------------------------------------------------


def table(results: list[Result]) -> str:
    head = (
        f"{'seed':>4} {'faults':>6} {'acked':>7} {'lost':>5} {'dup':>5} {'diverged':>8} "
        f"{'commit<':>7} {'exited':>6} {'rec p50':>8} {'rec p99':>8} {'w p50':>8} {'w p99':>8}  ok"
    )
    rows = [head]

    def secs(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}s"

    for r in results:
        rows.append(
            f"{r.seed:>4} {r.faults:>6} {r.acked:>7} {r.lost:>5} {r.duplicated:>5} "
            f"{r.diverged:>8} {r.commit_regressions:>7} {r.exited:>6} "
            f"{secs(r.percentile(0.5)):>8} {secs(r.percentile(0.99)):>8} "
            f"{secs(r.percentile(0.5, 'write_recoveries')):>8} "
            f"{secs(r.percentile(0.99, 'write_recoveries')):>8}  {'yes' if r.ok else 'NO'}"
        )
    total = Result(seed=-1)
    for r in results:
        total.faults += r.faults
        total.acked += r.acked
        total.lost += r.lost
        total.duplicated += r.duplicated
        total.diverged += r.diverged
        total.commit_regressions += r.commit_regressions
        total.exited += r.exited
        total.recoveries += r.recoveries
        total.write_recoveries += r.write_recoveries
    rows.append(
        f"{'all':>4} {total.faults:>6} {total.acked:>7} {total.lost:>5} {total.duplicated:>5} "
        f"{total.diverged:>8} {total.commit_regressions:>7} {total.exited:>6} "
        f"{secs(total.percentile(0.5)):>8} {secs(total.percentile(0.99)):>8} "
        f"{secs(total.percentile(0.5, 'write_recoveries')):>8} "
        f"{secs(total.percentile(0.99, 'write_recoveries')):>8}  "
        f"{sum(r.ok for r in results)}/{len(results)}"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="chaos.campaign", description=__doc__)
    parser.add_argument("--seeds", type=int, default=20, help="runs, seeds FIRST..FIRST+N-1")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of faults per run")
    parser.add_argument("--rate", type=float, default=200.0, help="records/s produced")
    parser.add_argument("--out", type=Path, default=Path("chaos-runs"))
    parser.add_argument(
        "--hold",
        type=float,
        nargs=2,
        default=(3.0, 8.0),
        metavar=("MIN", "MAX"),
        help="how long a fault holds, seconds (longer than zookeeper.session.timeout.ms=6 s "
        "and replica.lag.time.max.ms=6 s: sessions expire, ISRs shrink)",
    )
    parser.add_argument(
        "--disk-fault",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="include the full-disk fault (a tmpfs log dir on broker 3; needs root)",
    )
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    with zookeeper_server(args.out) as zk:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            started = time.monotonic()
            try:
                result = run_once(
                    zk,
                    args.out / f"seed-{seed}",
                    seed,
                    duration_s=args.duration,
                    rate=args.rate,
                    disk_fault=args.disk_fault,
                    hold_s=(args.hold[0], args.hold[1]),
                )
            except Exception as exc:  # the harness failed (e.g. a cluster that did not start)
                print(f"seed={seed} HARNESS ERROR {exc!r:.300}", flush=True)
                result = check(read_history(args.out / f"seed-{seed}" / "history.jsonl"))
                result.harness_error = repr(exc)[:1000]
            results.append(result)
            (args.out / f"seed-{seed}" / "result.json").write_text(
                json.dumps(result.to_json(), indent=1), encoding="utf-8"
            )
            print(f"{result.summary()} wall={time.monotonic() - started:.0f}s", flush=True)
    print(table(results))
    (args.out / "table.txt").write_text(table(results) + "\n", encoding="utf-8")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
