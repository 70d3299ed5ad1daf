"""A mixed cluster: an Apache Kafka 3.9.1 broker (ZooKeeper mode) joins a kafkacore
broker's ZooKeeper and follows a kafkacore leader. Kafka's replica fetcher sends Fetch
v17 (topic ids, the tagged ReplicaState), so the partition reaching an ISR of both
brokers, acks=all writes with ``min.insync.replicas=2`` being acknowledged, and Kafka's
copy of the log being byte-identical to the leader's show that kafkacore's Fetch v13-17
serves a real Kafka follower. Kafka's broker also takes its producer ids from the
kafkacore controller (AllocateProducerIds, KIP-730): without that answer it refuses every
InitProducerId with COORDINATOR_LOAD_IN_PROGRESS, so an idempotent producer that happens
to ask it for an id never delivers anything."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from cluster.conftest import producer
from kafkacore.net import send_once
from kafkacore.protocol import APIS_BY_NAME, ApiKey, ErrorCode
from support.brokers import free_port
from support.cluster import PRODUCER_CONFIG, Cluster, wait_until
from support.kafka_jars import KAFKA_ZK_VERSION, kafka_libs
from support.zookeeper import ZooKeeperServer, unique_chroot

pytestmark = pytest.mark.timeout(300)

KAFKA_ID = 2


class KafkaBroker:
    """Kafka 3.9.1's ``kafka.Kafka`` in ZooKeeper mode, as a subprocess."""

    def __init__(self, directory: Path, zookeeper_connect: str, libs: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.log_dirs = directory / "logs"
        directory.mkdir(parents=True, exist_ok=True)
        self.properties = directory / "server.properties"
        self.properties.write_text(
            "\n".join(
                [
                    f"broker.id={KAFKA_ID}",
                    f"zookeeper.connect={zookeeper_connect}",
                    f"listeners=PLAINTEXT://localhost:{self.port}",
                    f"log.dirs={self.log_dirs}",
                    "offsets.topic.replication.factor=1",
                    "zookeeper.session.timeout.ms=6000",
                    "replica.fetch.wait.max.ms=200",
                    "",
                ]
            ),
            encoding="utf-8",
        )
        self.libs = libs
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> KafkaBroker:
        output = (self.directory / "kafka.log").open("wb")
        self.proc = subprocess.Popen(
            [
                "java",
                "-Xmx512m",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                f"{self.libs}/*",
                "kafka.Kafka",
                str(self.properties),
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        output.close()
        return self

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture
def mixed(zookeeper: ZooKeeperServer, tmp_path: Path) -> Iterator[tuple[Cluster, KafkaBroker]]:
    libs = kafka_libs(KAFKA_ZK_VERSION)
    connect = unique_chroot(zookeeper.connect_string, "mixed")
    (tmp_path / "kafkacore").mkdir()
    cluster = Cluster(connect, tmp_path / "kafkacore", size=1)
    kafka = KafkaBroker(tmp_path / "kafka", connect, libs)
    try:
        cluster.start()  # creates the chroot Kafka then joins
        kafka.start()
        cluster.wait_for_brokers(2, 120)
        yield cluster, kafka
    finally:
        kafka.stop()
        cluster.stop()


def test_kafka_39_broker_follows_a_kafkacore_leader(mixed: tuple[Cluster, KafkaBroker]) -> None:
    cluster, kafka = mixed
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    wait_until(lambda: len(admin.list_topics(timeout=10).brokers) == 2 or None, 60, "both brokers")
    topic = NewTopic(
        "mixed", 1, replica_assignment=[[1, KAFKA_ID]], config={"min.insync.replicas": "2"}
    )
    admin.create_topics([topic], operation_timeout=30)["mixed"].result(60)
    assert cluster.wait_for_leader("mixed", 0) == 1
    cluster.wait_for_isr("mixed", 0, 2)

    errors: list[object] = []
    p = producer(cluster)
    for i in range(300):
        p.produce(
            "mixed",
            value=b"value-%d" % i,
            partition=0,
            on_delivery=lambda err, _msg: errors.append(err) if err else None,
        )
    assert p.flush(60) == 0
    assert errors == []

    leader_copy = cluster.brokers[1].data / "mixed-0"
    kafka_copy = kafka.log_dirs / "mixed-0"

    def identical() -> int | None:
        ours = b"".join(p.read_bytes() for p in sorted(leader_copy.glob("*.log")))
        theirs = b"".join(p.read_bytes() for p in sorted(kafka_copy.glob("*.log")))
        return len(ours) if ours and ours == theirs else None

    assert wait_until(identical, 60, "Kafka's copy identical to the leader's") > 0
    state = cluster.partition_state("mixed", 0)
    assert state is not None and (state["leader"], sorted(state["isr"])) == (1, [1, KAFKA_ID])


def _allocate(cluster: Cluster, broker_id: int, broker_epoch: int) -> tuple[int, int, int]:
    api = APIS_BY_NAME["AllocateProducerIds"]
    request = api.request.cls(broker_id=broker_id, broker_epoch=broker_epoch)
    response = send_once(
        "localhost",
        cluster.brokers[1].port,
        ApiKey(api.key),
        0,
        request,
        client_id="test",
        timeout_s=30,
    )
    return response.error_code, response.producer_id_start, response.producer_id_len


def test_kafka_39_broker_takes_producer_ids_from_the_kafkacore_controller(
    mixed: tuple[Cluster, KafkaBroker],
) -> None:
    cluster, kafka = mixed
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic("pids", 1, replica_assignment=[[KAFKA_ID, 1]])])["pids"].result(
        60
    )
    cluster.wait_for_isr("pids", 0, 2)

    # Kafka's broker answers InitProducerId itself once the controller gave it a block
    # (its first answers may be COORDINATOR_LOAD_IN_PROGRESS while the block is on its way;
    # without AllocateProducerIds they are that forever).
    def kafka_init_producer_id() -> int | None:
        api = APIS_BY_NAME["InitProducerId"]
        request = api.request.cls(
            transactional_id=None, transaction_timeout_ms=-1, producer_id=-1, producer_epoch=-1
        )
        answer = send_once(
            "localhost", kafka.port, ApiKey(api.key), 4, request, client_id="test", timeout_s=30
        )
        assert answer.error_code in (ErrorCode.NONE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
        return int(answer.producer_id) if answer.error_code == ErrorCode.NONE else None

    assert wait_until(kafka_init_producer_id, 30, "Kafka's broker to hand out an id") >= 0

    # An idempotent producer that only knows the Kafka broker delivers, whichever broker
    # librdkafka then asks for its id.
    errors: list[object] = []
    p = Producer({**PRODUCER_CONFIG, "bootstrap.servers": f"localhost:{kafka.port}"})
    for i in range(50):
        p.produce("pids", b"v%d" % i, on_delivery=lambda e, _m: errors.append(e) if e else None)
    assert p.flush(60) == 0
    assert errors == []
    block = json.loads(cluster.zk.get("/latest_producer_id_block")[0])
    assert int(block["block_end"]) - int(block["block_start"]) == 999  # strings in Kafka's JSON

    # The controller's answers, Kafka's processAllocateProducerIds: the registered epoch
    # (the czxid of /brokers/ids/<id>) gets the next block, anything else an error.
    epoch = cluster.zk.get(f"/brokers/ids/{KAFKA_ID}")[1].czxid
    assert _allocate(cluster, KAFKA_ID, epoch) == (
        ErrorCode.NONE,
        int(block["block_end"]) + 1,
        1000,
    )
    assert _allocate(cluster, KAFKA_ID, epoch - 1)[0] == ErrorCode.STALE_BROKER_EPOCH
    assert _allocate(cluster, 42, 1)[0] == ErrorCode.BROKER_ID_NOT_REGISTERED
