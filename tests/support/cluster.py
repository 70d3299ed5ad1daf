"""A kafkacore cluster for tests and ``make cluster``: brokers as subprocesses
(``support.brokers.Broker``, each with ``zookeeper.connect`` and its own ``node.id``) on
one real ZooKeeper server (``support.zookeeper``), started side by side, killed and
restarted one at a time, and read back through ZooKeeper with kazoo (the controller's
id, a partition's leader and ISR), the way Kafka's system tests read a cluster.

    cluster = Cluster(zk.connect_string + "/c1", tmp_path, size=3).start()
    cluster.bootstrap                 # "localhost:p1,localhost:p2,localhost:p3"
    cluster.controller_id()           # from /controller
    cluster.partition_state("t", 0)   # from /brokers/topics/t/partitions/0/state
    cluster.kill(2); cluster.restart(2)
    cluster.add_brokers(2)            # brokers 4 and 5, started and known to all
    cluster.stop()
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from support.brokers import Broker

_T = TypeVar("_T")

# Short timeouts so failures are detected in seconds, not Kafka's 18 s / 30 s.
FAST_FAILURE = (
    "zookeeper.session.timeout.ms=6000",
    "replica.lag.time.max.ms=6000",
    "replica.fetch.wait.max.ms=200",
    "replica.fetch.backoff.ms=200",
    "controlled.shutdown.retry.backoff.ms=200",
    "group.initial.rebalance.delay.ms=0",
    "offsets.topic.num.partitions=3",
)

# The confluent-kafka producer of the cluster tests and the fault campaign (with
# ``bootstrap.servers`` added): idempotent, acks=all, retrying a message for a minute, and
# quick to find a partition's new leader.
PRODUCER_CONFIG: Mapping[str, object] = {
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 5,
    "message.timeout.ms": 60000,
    "retry.backoff.ms": 100,
    "topic.metadata.refresh.interval.ms": 1000,
}


def wait_until(
    check: Callable[[], _T | None], timeout_s: float = 30.0, what: str = "condition"
) -> _T:
    """Poll ``check`` until it returns something truthy; that value."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # a broker restarting, a node not there yet
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what} (last: {last!r})")


class Cluster:
    def __init__(
        self,
        zookeeper_connect: str,
        directory: Path,
        *,
        size: int = 3,
        overrides: Iterable[str] = (),
        ports: Iterable[int] | None = None,
        first_id: int = 1,
        fast_failure: bool = True,
        broker_overrides: Mapping[int, Iterable[str]] | None = None,
    ) -> None:
        """``overrides`` go to every broker, then ``broker_overrides[node_id]`` to that
        broker only (later ones win: e.g. its own ``advertised.listeners``,
        ``zookeeper.connect`` or ``log.dirs``)."""
        self.zookeeper_connect = zookeeper_connect
        self.directory = Path(directory)
        port_list = list(ports) if ports is not None else [None] * size
        extra = [
            f"zookeeper.connect={zookeeper_connect}",
            *(FAST_FAILURE if fast_failure else ()),
            *overrides,
        ]
        self._extra = extra
        per_broker = broker_overrides or {}
        self.brokers: dict[int, Broker] = {
            first_id + i: Broker(
                self.directory / f"broker-{first_id + i}",
                [*extra, *per_broker.get(first_id + i, ())],
                node_id=first_id + i,
                port=port_list[i],
            )
            for i in range(size)
        }
        host, _, chroot = zookeeper_connect.partition("/")
        self._zk_hosts = host
        self._chroot = "/" + chroot if chroot else ""
        self._zk: KazooClient | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Cluster:
        for broker in self.brokers.values():
            broker.spawn()
        for broker in self.brokers.values():
            broker.wait_started(60.0)
        self.wait_for_brokers(len(self.brokers))
        self.wait_for_metadata()
        return self

    def wait_for_metadata(
        self, timeout_s: float = 60.0, *, others: Mapping[int, str] | None = None
    ) -> None:
        """Until every running broker's metadata (from the controller's UpdateMetadata)
        names the controller and every running broker, as clients need it: before the
        first UpdateMetadata a broker's Metadata lists no broker (Kafka's does the same),
        and librdkafka drops the brokers a Metadata answer leaves out, so a client that
        asked too early waits out its request timeout for one. ``others``: brokers of
        the same cluster outside this object (an Apache Kafka broker), id -> bootstrap;
        theirs is waited for too, and every broker's must list them."""
        everyone = {n for n, b in self.brokers.items() if b.running} | set(others or {})
        self._until_every_broker(
            lambda md: md.controller_id >= 0 and set(md.brokers) == everyone,
            "metadata",
            timeout_s,
            others,
        )

    def _until_every_broker(
        self,
        ready: Callable[[Any], bool],
        what: str,
        timeout_s: float,
        others: Mapping[int, str] | None = None,
    ) -> None:
        """Until ``ready`` holds for the Metadata (confluent-kafka's ``ClusterMetadata``)
        of each running broker and of ``others`` (id -> bootstrap). Each look is a new
        client's first request, so the broker it names as its one bootstrap answers."""
        from confluent_kafka.admin import AdminClient

        bootstraps = {n: b.bootstrap for n, b in self.brokers.items() if b.running}
        bootstraps.update(others or {})
        for node_id, bootstrap in sorted(bootstraps.items()):

            def check(bootstrap: str = bootstrap) -> bool:
                return ready(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=5))

            wait_until(check, timeout_s, f"broker {node_id}'s {what}")

    def stop(self) -> None:
        """SIGTERM every running broker (controlled shutdowns), then close ZooKeeper."""
        problems = []
        for broker in self.brokers.values():  # every one, even after one failed to stop
            if broker.running:
                try:
                    broker.stop(check=False)
                except AssertionError as exc:
                    problems.append(exc)
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()
            self._zk = None
        if problems:
            raise problems[0]

    def add_brokers(
        self, count: int = 1, broker_overrides: Mapping[int, Iterable[str]] | None = None
    ) -> list[int]:
        """Start ``count`` more brokers (the next ids) with the cluster's settings (and
        ``broker_overrides[node_id]`` after them), side by side, as Kafka's docs expand a
        cluster; their ids once every broker's metadata names them."""
        first = max(self.brokers) + 1
        added = list(range(first, first + count))
        for node_id in added:
            own = [*self._extra, *(broker_overrides or {}).get(node_id, ())]
            broker = Broker(self.directory / f"broker-{node_id}", own, node_id=node_id)
            self.brokers[node_id] = broker
            broker.spawn()
        for node_id in added:
            self.brokers[node_id].wait_started(60.0)
        self.wait_for_brokers(sum(1 for b in self.brokers.values() if b.running))
        self.wait_for_metadata()
        return added

    def kill(self, node_id: int) -> None:
        self.brokers[node_id].kill()

    def restart(self, node_id: int) -> None:
        """Start ``node_id`` again (stopping it first if it runs). After a SIGKILL this
        waits, as Kafka's hard-bounce system test does, until the dead process's ZooKeeper
        session has expired and taken ``/brokers/ids/<id>`` with it: a broker refuses to
        start while its id is still registered by another session."""
        broker = self.brokers[node_id]
        if broker.running:
            broker.stop(check=False)
        wait_until(
            lambda: node_id not in self.registered(), 60, f"/brokers/ids/{node_id} to expire"
        )
        broker.start()
        self.wait_for_metadata()

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values() if b.running)

    # -- reading the cluster through ZooKeeper -------------------------------------------

    @property
    def zk(self) -> KazooClient:
        if self._zk is None:
            client = KazooClient(hosts=self._zk_hosts + self._chroot)
            client.start(timeout=30)
            self._zk = client
        return self._zk

    def _json(self, path: str) -> Any:
        try:
            data, _ = self.zk.get(path)
        except NoNodeError:
            return None
        return json.loads(data) if data else None

    def registered(self) -> list[int]:
        try:
            return sorted(int(c) for c in self.zk.get_children("/brokers/ids"))
        except NoNodeError:
            return []

    def wait_for_brokers(self, count: int, timeout_s: float = 60.0) -> list[int]:
        def check() -> list[int] | None:
            ids = self.registered()
            return ids if len(ids) == count else None

        return wait_until(check, timeout_s, f"{count} registered brokers")

    def controller_id(self) -> int | None:
        data = self._json("/controller")
        return None if data is None else int(data["brokerid"])

    def controller_epoch(self) -> int | None:
        try:
            data, _ = self.zk.get("/controller_epoch")
        except NoNodeError:
            return None
        return int(data)

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        state: dict[str, Any] | None = self._json(
            f"/brokers/topics/{topic}/partitions/{partition}/state"
        )
        return state

    def leader(self, topic: str, partition: int) -> int:
        state = self.partition_state(topic, partition)
        return -1 if state is None else int(state["leader"])

    def wait_for_leader(
        self, topic: str, partition: int, *, not_in: Iterable[int] = (), timeout_s: float = 60.0
    ) -> int:
        excluded = set(not_in)

        def check() -> int | None:
            leader = self.leader(topic, partition)
            return leader if leader >= 0 and leader not in excluded else None

        return wait_until(check, timeout_s, f"a leader for {topic}-{partition}")

    def wait_for_isr(
        self, topic: str, partition: int, size: int, timeout_s: float = 60.0
    ) -> list[int]:
        def check() -> list[int] | None:
            state = self.partition_state(topic, partition)
            isr = [] if state is None else list(state["isr"])
            return isr if len(isr) == size else None

        return wait_until(check, timeout_s, f"{topic}-{partition} ISR of {size}")

    def wait_for_replicas(
        self, topic: str, replicas: Mapping[int, list[int]], timeout_s: float = 60.0
    ) -> None:
        """Until every running broker's Metadata gives ``topic``'s partitions these replica
        lists. The controller writes a reassignment's end to ZooKeeper (and stops listing
        it) before it sends the UpdateMetadata, as Kafka's does; a tool that reads the
        metadata of some broker (``--verify``) sees the new lists only after this."""
        wanted = {p: list(r) for p, r in replicas.items()}

        def ready(md: Any) -> bool:
            t = md.topics.get(topic)
            got = {} if t is None else {p: list(i.replicas) for p, i in t.partitions.items()}
            return all(got.get(p) == r for p, r in wanted.items())

        self._until_every_broker(ready, f"replicas of {topic}: {wanted}", timeout_s)
