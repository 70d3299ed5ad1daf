"""A KRaft cluster of real processes for the KRaft tests, ``make chaos`` and the benches:
Apache Kafka 4.3.1 controllers and brokers (``kafka.Kafka`` from the jars) beside
kafkacore controllers, brokers and combined nodes (``kafkacore server-start`` with
``process.roles=controller``, ``broker`` or ``broker,controller``), with one cluster id
and static voters. Each node is formatted by its own kind's tool: Kafka's
``kafka-storage format`` for Kafka's, ``kafkacore storage format`` for kafkacore's (a
cluster without Kafka nodes needs no JVM at all).

    cluster = KRaftCluster(tmp_path, kafka_controllers=[3000], kafka_brokers=[1, 2],
                           kafkacore_brokers=[3]).start()
    cluster = KRaftCluster(tmp_path, kafka_controllers=(), kafkacore_combined=[1, 2, 3])
    cluster.bootstrap               # every running broker
    cluster.nodes[3].bootstrap      # one broker
    cluster.kill(1); cluster.restart(1)
    cluster.stop()

The features are formatted at ``transaction.version=0``, ``share.version=0`` and
``streams.version=0`` when kafkacore brokers are in the cluster: a controller refuses a
broker that cannot support a finalized level, and kafkacore supports level 0 of these
(``kafkacore.server.kraft.lifecycle.SUPPORTED_FEATURES``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafkacore.log.checkpoints import random_uuid, uuid_to_base64
from support.brokers import Broker
from support.cluster import wait_until
from support.kafka_jars import JVM_FLAGS, kafka_libs, require
from support.ports import free_port

SERVER_JVM = ("-Xmx400m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
CONTROLLER_LISTENER = "CONTROLLER"

#: Short timeouts, as the ZooKeeper cluster tests use: failures seen in seconds.
FAST_FAILURE = (
    "broker.session.timeout.ms=6000",
    "broker.heartbeat.interval.ms=500",
    "replica.lag.time.max.ms=6000",
    "replica.fetch.wait.max.ms=200",
    "replica.fetch.backoff.ms=200",
    "group.initial.rebalance.delay.ms=0",
    "offsets.topic.num.partitions=3",
    "controller.quorum.election.timeout.ms=500",
    "controller.quorum.fetch.timeout.ms=1000",
    "controller.quorum.request.timeout.ms=1000",
)

#: what a cluster with kafkacore brokers is formatted with (see the module docstring)
KAFKACORE_FEATURES = ("transaction.version=0", "share.version=0", "streams.version=0")


@dataclass
class Node:
    """One node: its id, kind (``kafka-controller``, ``kafka-broker``,
    ``kafkacore-broker``), client port (brokers) or controller port."""

    node_id: int
    kind: str
    port: int
    directory: Path
    controller_port: int | None = None  # a combined node's controller listener
    props: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    broker: Broker | None = None  # a kafkacore broker's process

    @property
    def is_broker(self) -> bool:
        return self.kind.endswith(("broker", "combined"))

    @property
    def is_voter(self) -> bool:
        return self.kind.endswith(("controller", "combined"))

    @property
    def voter_port(self) -> int:
        return self.controller_port if self.controller_port is not None else self.port

    @property
    def is_kafka(self) -> bool:
        return self.kind.startswith("kafka-")

    @property
    def bootstrap(self) -> str:
        return f"localhost:{self.port}"

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @property
    def log_file(self) -> Path:
        if self.broker is not None:
            return self.broker.log_file
        return self.directory / "server.log"

    @property
    def pid(self) -> int | None:
        if self.broker is not None:
            return self.broker.proc.pid if self.broker.proc is not None else None
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        if self.broker is not None:
            return self.broker.running
        return self.proc is not None and self.proc.poll() is None


class KRaftCluster:
    """See the module docstring. ``overrides`` go to every node; ``node_overrides[id]``
    to that node only."""

    def __init__(
        self,
        directory: Path,
        *,
        kafka_controllers: Sequence[int] = (3000,),
        kafka_brokers: Sequence[int] = (),
        kafkacore_brokers: Sequence[int] = (),
        kafkacore_controllers: Sequence[int] = (),
        kafkacore_combined: Sequence[int] = (),
        overrides: Iterable[str] = (),
        node_overrides: dict[int, Sequence[str]] | None = None,
        features: Sequence[str] | None = None,
        fast_failure: bool = True,
    ) -> None:
        self.directory = Path(directory)
        self.libs = kafka_libs() if kafka_controllers or kafka_brokers else None
        self.cluster_id = uuid_to_base64(random_uuid())
        self.features = (
            list(features)
            if features is not None
            else list(
                KAFKACORE_FEATURES
                if kafkacore_brokers or kafkacore_combined or kafkacore_controllers
                else ()
            )
        )
        self.nodes: dict[int, Node] = {}
        for node_id in kafka_controllers:
            self._add(node_id, "kafka-controller")
        for node_id in kafka_brokers:
            self._add(node_id, "kafka-broker")
        for node_id in kafkacore_controllers:
            self._add(node_id, "kafkacore-controller")
        for node_id in kafkacore_brokers:
            self._add(node_id, "kafkacore-broker")
        for node_id in kafkacore_combined:
            self._add(node_id, "kafkacore-combined")
            self.nodes[node_id].controller_port = free_port()
        voters = ",".join(
            f"{n.node_id}@127.0.0.1:{n.voter_port}" for n in self.nodes.values() if n.is_voter
        )
        self.voters = voters
        common = [
            f"controller.listener.names={CONTROLLER_LISTENER}",
            f"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,{CONTROLLER_LISTENER}:PLAINTEXT",
            f"controller.quorum.voters={voters}",
            *(FAST_FAILURE if fast_failure else ()),
            *overrides,
        ]
        for node in self.nodes.values():
            if node.kind.endswith("controller"):
                own = [
                    "process.roles=controller",
                    f"listeners={CONTROLLER_LISTENER}://127.0.0.1:{node.port}",
                ]
            elif node.kind.endswith("combined"):
                own = [
                    "process.roles=broker,controller",
                    f"listeners=PLAINTEXT://localhost:{node.port},"
                    f"{CONTROLLER_LISTENER}://127.0.0.1:{node.controller_port}",
                    f"advertised.listeners=PLAINTEXT://localhost:{node.port}",
                ]
            else:
                own = ["process.roles=broker", f"listeners=PLAINTEXT://localhost:{node.port}"]
            node.props = [
                f"node.id={node.node_id}",
                *own,
                f"log.dirs={node.data}",
                *common,
                *(node_overrides or {}).get(node.node_id, ()),
            ]

    def _add(self, node_id: int, kind: str) -> None:
        directory = self.directory / f"{kind}-{node_id}"
        directory.mkdir(parents=True, exist_ok=True)
        self.nodes[node_id] = Node(node_id, kind, free_port(), directory)

    # -- the nodes -----------------------------------------------------------------------

    @property
    def brokers(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.is_broker]

    @property
    def bootstrap(self) -> str:
        return ",".join(n.bootstrap for n in self.brokers if n.running)

    def _format(self, node: Node) -> None:
        props = node.directory / "server.properties"
        props.write_text("\n".join([*node.props, ""]))
        features = [arg for f in self.features for arg in ("--feature", f)]
        if not node.is_kafka:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "kafkacore",
                    "storage",
                    "format",
                    "-t",
                    self.cluster_id,
                    "-c",
                    str(props),
                    "--ignore-formatted",
                    *features,
                ],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, f"kafkacore storage format failed:\n{done.stderr}"
            return
        proc = subprocess.run(
            [
                require("java"),
                *SERVER_JVM,
                "-cp",
                f"{self.libs}/*",
                "kafka.tools.StorageTool",
                "format",
                "-t",
                self.cluster_id,
                "-c",
                str(props),
                "--ignore-formatted",
                *features,
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert proc.returncode == 0, f"kafka-storage format failed:\n{proc.stdout}{proc.stderr}"

    def _spawn(self, node: Node) -> None:
        if node.is_kafka:
            with open(node.log_file, "ab") as out:
                node.proc = subprocess.Popen(
                    [
                        require("java"),
                        *SERVER_JVM,
                        *JVM_FLAGS,
                        "-cp",
                        f"{self.libs}/*",
                        "kafka.Kafka",
                        str(node.directory / "server.properties"),
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
        else:
            if node.broker is None:
                # Broker adds listeners, log.dirs and node.id itself (the node's own
                # listeners override its PLAINTEXT one)
                own = [p for p in node.props if not p.startswith("log.dirs=")]
                node.broker = Broker(node.data, own, node_id=node.node_id, port=node.port)
            node.broker.spawn()

    def _wait_started(self, node: Node, timeout_s: float) -> None:
        if node.broker is not None and node.is_broker:
            node.broker.wait_started(timeout_s)
            return
        # Kafka logs at WARN here (no "started" line): a node is up once it accepts
        # connections; wait_for_brokers then waits for every broker in the metadata
        kind = "controller" if node.kind.endswith("controller") else "broker"
        wait_until(lambda: _accepts(node.port), timeout_s, f"{kind} {node.node_id}")

    def start(self, timeout_s: float = 180.0) -> KRaftCluster:
        for node in self.nodes.values():
            self._format(node)
        # controllers first, then brokers; combined nodes start together (their
        # brokers wait for a quorum among them)
        controllers = [n for n in self.nodes.values() if not n.is_broker]
        for node in controllers:
            self._spawn(node)
        for node in controllers:
            self._wait_started(node, timeout_s)
        for node in self.brokers:
            self._spawn(node)
        for node in self.brokers:
            self._wait_started(node, timeout_s)
        self.wait_for_brokers(timeout_s)
        return self

    def wait_for_brokers(self, timeout_s: float = 120.0) -> None:
        """Until every running broker's Metadata lists every running broker."""
        from confluent_kafka.admin import AdminClient

        running = {n.node_id for n in self.brokers if n.running}
        for node in self.brokers:
            if not node.running:
                continue

            def ready(node: Node = node) -> bool:
                metadata = AdminClient({"bootstrap.servers": node.bootstrap}).list_topics(timeout=5)
                return set(metadata.brokers) == running

            wait_until(ready, timeout_s, f"broker {node.node_id}'s metadata")

    def kill(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.broker is not None:
            node.broker.kill()
        elif node.proc is not None:
            node.proc.kill()
            node.proc.wait(30)
            node.proc = None

    def pause(self, node_id: int) -> None:
        pid = self.nodes[node_id].pid
        if pid is not None:
            os.kill(pid, signal.SIGSTOP)

    def resume(self, node_id: int) -> None:
        pid = self.nodes[node_id].pid
        if pid is not None:
            os.kill(pid, signal.SIGCONT)

    def stop_node(self, node_id: int, timeout_s: float = 60.0) -> None:
        node = self.nodes[node_id]
        if node.broker is not None:
            if node.broker.running:
                node.broker.stop(check=False)
            return
        proc = node.proc
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        node.proc = None

    def restart(self, node_id: int, timeout_s: float = 120.0) -> None:
        node = self.nodes[node_id]
        if node.running:
            self.stop_node(node_id)
        self._spawn(node)
        self._wait_started(node, timeout_s)

    def stop(self) -> None:
        """Brokers first (controlled shutdowns while the controllers are up), then the
        controllers; every node is stopped even when one fails to (the first failure is
        raised at the end), so that no process outlives the test."""
        failures: list[BaseException] = []

        def attempt(node: Node) -> None:
            try:
                self.stop_node(node.node_id)
            except BaseException as exc:  # raised again below
                failures.append(exc)
                self.kill(node.node_id)

        for node in self.brokers:
            if node.is_voter:
                continue  # combined: with the controllers (its quorum may be needed)
            if node.broker is not None and node.broker.proc is not None:
                self.resume(node.node_id)
            attempt(node)
        voters = [n for n in self.nodes.values() if n.is_voter]
        for node in voters:  # together: a quorum of combined nodes stays up meanwhile
            self.resume(node.node_id)
            proc = node.broker.proc if node.broker is not None else node.proc
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for node in voters:
            attempt(node)
        if failures:
            raise failures[0]


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False
