"""Fetch from followers (KIP-392) with real clients on a three-broker kafkacore cluster
(ZooKeeper mode, brokers as processes), each broker in its own rack and the leaders
choosing with Kafka's ``RackAwareReplicaSelector``: confluent-kafka (librdkafka) and
Kafka's Java consumer (4.3.1, and 3.9.1) with ``client.rack`` set read from the follower
in their rack, as the brokers' ``FetchConsumer`` request counts (``/metrics``) show; a
consumer in the leader's rack stays on the leader; and a follower that dies (and so
leaves the ISR) while a consumer reads from it sends the consumer back to the leader with
no record lost or repeated.

One cluster for the module; the follower's death is the last test (it restarts it)."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from cluster.conftest import producer
from compat.conftest import KafkaTools
from support.cluster import Cluster, wait_until
from support.kafka_jars import KAFKA_ZK_VERSION, kafka_libs
from support.ports import free_port
from support.zookeeper import ZooKeeperServer, unique_chroot

pytestmark = pytest.mark.timeout(300)

SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
RACKS = {1: "rack-1", 2: "rack-2", 3: "rack-3"}
CONSOLES = {b: free_port() for b in RACKS}
TOPIC = "near"
RECORDS = 2000
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
_FETCH_CONSUMER = re.compile(
    r'^kafka_network_requestmetrics_requests_total\{request="FetchConsumer",version="\d+"\} '
    r"(\d+(?:\.\d+)?)$",
    re.M,
)
_BYTES_OUT = re.compile(
    rf'^kafka_server_brokertopicmetrics_bytesout_total\{{topic="{TOPIC}"\}} (\d+(?:\.\d+)?)$',
    re.M,
)


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperServer, tmp_path_factory: Any) -> Iterator[Cluster]:
    c = Cluster(
        unique_chroot(zookeeper.connect_string, "ffollower"),
        tmp_path_factory.mktemp("ffollower"),
        overrides=(f"replica.selector.class={SELECTOR}", "min.insync.replicas=2"),
        broker_overrides={
            b: [f"broker.rack={rack}", f"console.listeners=http://127.0.0.1:{CONSOLES[b]}"]
            for b, rack in RACKS.items()
        },
    )
    try:
        yield c.start()
    finally:
        c.stop()


@pytest.fixture(scope="module")
def topic(cluster: Cluster) -> str:
    """One partition led by broker 1, followed by 2 and 3, with RECORDS records."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics(
        [NewTopic(TOPIC, 1, replica_assignment=[[1, 2, 3]])], operation_timeout=30
    )
    futures[TOPIC].result(60)
    cluster.wait_for_leader(TOPIC, 0)
    cluster.wait_for_isr(TOPIC, 0, 3)
    p = producer(cluster)
    for i in range(RECORDS):
        p.produce(TOPIC, f"r-{i}".encode(), partition=0)
    assert p.flush(60) == 0
    return TOPIC


class Served(NamedTuple):
    """What a broker served consumers: Fetch requests (Kafka's ``FetchConsumer``
    RequestMetrics) and bytes of the topic's records (``BytesOutPerSec``, which leaves
    replication out)."""

    fetches: int
    bytes: int


def served(cluster: Cluster) -> dict[int, Served]:
    """Each running broker's :class:`Served`, once steady: a closed consumer's last
    long-polling fetch is counted when it ends (``fetch.wait.max.ms`` later)."""
    last = _served(cluster)
    while True:
        time.sleep(1.0)
        now = _served(cluster)
        if now == last:
            return now
        last = now


def _served(cluster: Cluster) -> dict[int, Served]:
    found = {}
    for b, port in CONSOLES.items():
        if not cluster.brokers[b].running:
            continue
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
            text = answer.read().decode()
        fetches = sum(int(float(n)) for n in _FETCH_CONSUMER.findall(text))  # every version
        out = _BYTES_OUT.search(text)
        found[b] = Served(fetches, int(float(out.group(1))) if out else 0)
    return found


def delta(before: dict[int, Served], after: dict[int, Served]) -> dict[int, Served]:
    zero = Served(0, 0)
    return {
        b: Served(a.fetches - before.get(b, zero).fetches, a.bytes - before.get(b, zero).bytes)
        for b, a in after.items()
    }


def rdkafka_read(
    cluster: Cluster,
    rack: str,
    count: int,
    stats: list[dict[str, Any]] | None = None,
    timeout_s: float = 60,
) -> list[bytes]:
    """``count`` records of partition 0 from the beginning, by a confluent-kafka consumer
    with ``client.rack``; librdkafka's statistics appended to ``stats``."""
    config: dict[str, Any] = {
        "bootstrap.servers": cluster.bootstrap,
        "group.id": f"near-{rack}",
        "enable.auto.commit": False,
        "client.rack": rack,
    }
    if stats is not None:
        config["statistics.interval.ms"] = 200
        config["stats_cb"] = lambda text: stats.append(json.loads(text))
    consumer = Consumer(config)
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        values: list[bytes] = []
        deadline = time.monotonic() + timeout_s
        while len(values) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
        # one more statistics report, taken while the consumer still fetches
        consumer.poll(0.5)
        return values
    finally:
        consumer.close()


def fetched_from(stats: list[dict[str, Any]]) -> set[int]:
    """The brokers librdkafka's statistics say partition 0 was fetched from."""
    seen = set()
    for report in stats:
        p = report.get("topics", {}).get(TOPIC, {}).get("partitions", {}).get("0")
        if p is not None and p.get("broker", -1) >= 0:
            seen.add(int(p["broker"]))
    return seen


def expected() -> list[bytes]:
    return [f"r-{i}".encode() for i in range(RECORDS)]


def test_confluent_kafka_reads_from_the_follower_in_its_rack(cluster: Cluster, topic: str) -> None:
    before = served(cluster)
    stats: list[dict[str, Any]] = []
    assert rdkafka_read(cluster, "rack-3", RECORDS, stats) == expected()
    d = delta(before, served(cluster))
    # the leader answers the first fetch with preferred_read_replica 3 and no records;
    # 3 serves every record
    assert d[1].fetches >= 1 and d[1].bytes == 0, d
    assert d[3].fetches >= 1 and d[3].bytes >= RECORDS * len(b"r-0000"), d
    assert d[2] == Served(0, 0), d
    assert 3 in fetched_from(stats), fetched_from(stats)


def test_a_consumer_in_the_leaders_rack_stays_on_the_leader(cluster: Cluster, topic: str) -> None:
    before = served(cluster)
    assert rdkafka_read(cluster, "rack-1", RECORDS) == expected()
    d = delta(before, served(cluster))
    assert d[1].bytes >= RECORDS * len(b"r-0000"), d
    assert d[2] == Served(0, 0) and d[3] == Served(0, 0), d


@pytest.mark.parametrize("version", [None, KAFKA_ZK_VERSION], ids=["4.3.1", "3.9.1"])
def test_kafkas_java_consumer_reads_from_the_follower_in_its_rack(
    cluster: Cluster, topic: str, version: str | None
) -> None:
    tools = KafkaTools(kafka_libs(version))
    before = served(cluster)
    out = tools.run(
        CONSOLE_CONSUMER,
        "--bootstrap-server",
        cluster.bootstrap,
        "--topic",
        TOPIC,
        "--partition",
        "0",
        "--offset",
        "earliest",
        "--max-messages",
        str(RECORDS),
        "--timeout-ms",
        "60000",
        # Kafka 4.3 renamed --consumer-property (still read, with a warning on stdout)
        "--consumer-property" if version == KAFKA_ZK_VERSION else "--command-property",
        "client.rack=rack-2",
    ).check()
    assert out.stdout.split() == [v.decode() for v in expected()]
    d = delta(before, served(cluster))
    assert d[1].fetches >= 1 and d[1].bytes == 0, d
    assert d[2].bytes >= RECORDS * len(b"r-0000"), d
    assert d[3] == Served(0, 0), d


def test_a_follower_leaving_the_isr_sends_the_consumer_back_to_the_leader(
    cluster: Cluster, topic: str
) -> None:
    """Broker 3 dies while a rack-3 consumer reads from it and acks=all writes go on (ISR
    {1, 2}, min.insync.replicas 2): the consumer ends on the leader and reads every
    record once, in order."""
    more = 3000
    stats: list[dict[str, Any]] = []
    read: list[bytes] = []
    done = threading.Event()

    def consume() -> None:
        read.extend(rdkafka_read(cluster, "rack-3", RECORDS + more, stats, 150))
        done.set()

    before = served(cluster)
    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    wait_until(lambda: 3 in fetched_from(stats), 60, "the consumer to fetch from broker 3")
    p = producer(cluster)
    for i in range(more):
        p.produce(TOPIC, f"r-{RECORDS + i}".encode(), partition=0)
        if i == more // 3:
            p.flush(30)
            cluster.kill(3)
        p.poll(0)
    assert p.flush(60) == 0
    wait_until(lambda: cluster.partition_state(TOPIC, 0)["isr"] == [1, 2], 60, "ISR [1, 2]")
    assert done.wait(180), f"the consumer read {len(read)} of {RECORDS + more}"
    reader.join()
    assert read == [f"r-{i}".encode() for i in range(RECORDS + more)]
    assert fetched_from(stats[-3:]) == {1}, [fetched_from([s]) for s in stats[-5:]]
    d = delta(before, served(cluster))
    assert d[1].bytes > 0 and d[2] == Served(0, 0), d
    cluster.restart(3)
