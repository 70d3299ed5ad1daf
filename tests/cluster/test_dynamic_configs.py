"""Dynamic configs on a three-broker ZooKeeper cluster, set with Kafka 3.9.1's own
``kafka-configs --bootstrap-server`` (``kafka.admin.ConfigCommand`` from the jars) and with
``kafkacore configs``: topics, brokers (one broker and ``<default>``), clients and users.

Each change must be stored as Kafka stores it (``/config/<type>/<name>`` holding
``{"version":1,"config":{...}}`` and a ``/config/changes`` notification naming the entity
path) and be visible on every broker (DescribeConfigs / DescribeClientQuotas sent to each
one). A producer given ``producer_byte_rate`` is throttled (``throttle_time_ms > 0``)
and its rate settles near the quota.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from cluster.conftest import create_topic
from kafkacore.client import Client
from kafkacore.config import ConfigSource
from kafkacore.protocol import APIS_BY_NAME
from support.cluster import Cluster, wait_until
from support.kafka_jars import JVM_FLAGS, KAFKA_ZK_VERSION, kafka_libs

pytestmark = [pytest.mark.downloads]

CONFIG_COMMAND = "kafka.admin.ConfigCommand"
TOPIC, BROKER = 2, 4


# -- helpers ---------------------------------------------------------------------------------


def kafka_configs(cluster: Cluster, *args: str) -> str:
    """Kafka 3.9.1's ``kafka-configs.sh --bootstrap-server`` (its ConfigCommand)."""
    libs = kafka_libs(KAFKA_ZK_VERSION)
    cmd = ["java", *JVM_FLAGS, "-cp", f"{libs}/*", CONFIG_COMMAND]
    cmd += ["--bootstrap-server", cluster.bootstrap, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"{args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def kafkacore_configs(cluster: Cluster, *args: str) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkacore",
            "configs",
            "--bootstrap-server",
            cluster.bootstrap,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"{args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def call(cluster: Cluster | str, node: int, api: str, version: int, request: Any) -> Any:
    """One request to broker ``node`` (not routed elsewhere), or to the address given."""
    address = cluster if isinstance(cluster, str) else cluster.brokers[node].bootstrap
    client = Client(address, client_id="dynamic-configs-test")
    try:
        return client._call_any(api, version, request)
    finally:
        client.close()


def describe_quotas(
    cluster: Cluster | str, node: int = 0
) -> dict[tuple[tuple[str, str | None], ...], Any]:
    cls = APIS_BY_NAME["DescribeClientQuotas"].request.cls
    response = call(cluster, node, "DescribeClientQuotas", 1, cls(components=[], strict=False))
    assert response.error_code == 0, response.error_message
    return {
        tuple((e.entity_type, e.entity_name) for e in entry.entity): {
            v.key: v.value for v in entry.values
        }
        for entry in response.entries
    }


def describe_configs(cluster: Cluster | str, node: int, kind: int, name: str) -> dict[str, Any]:
    """``{config: (value, source name, [synonym sources])}`` as broker ``node`` describes
    the resource."""
    cls = APIS_BY_NAME["DescribeConfigs"].request.cls
    request = cls(
        resources=[cls.DescribeConfigsResource(resource_type=kind, resource_name=name)],
        include_synonyms=True,
        include_documentation=False,
    )
    response = call(cluster, node, "DescribeConfigs", 4, request)
    (result,) = response.results
    assert result.error_code == 0, result.error_message
    return {
        c.name: (
            c.value,
            ConfigSource(c.config_source).name,
            [ConfigSource(s.source).name for s in c.synonyms],
        )
        for c in result.configs
    }


def on_every_broker(cluster: Cluster, what: str, check: Any) -> None:
    for node in cluster.brokers:
        wait_until(lambda node=node: check(node), 20, f"{what} on broker {node}")


def znode(cluster: Cluster, path: str) -> Any:
    data, _ = cluster.zk.get(path)
    return json.loads(data)


def notified(cluster: Cluster, entity_path: str) -> bool:
    changes = cluster.zk.get_children("/config/changes")
    return any(
        json.loads(cluster.zk.get(f"/config/changes/{c}")[0])
        == {"version": 2, "entity_path": entity_path}
        for c in changes
    )


@pytest.fixture(scope="module")
def configs_cluster(cluster: Cluster) -> Iterator[Cluster]:
    kafka_libs(KAFKA_ZK_VERSION)  # fetched (or found cached) before anything is timed
    yield cluster


# -- client quotas ----------------------------------------------------------------------------


def test_client_quotas_with_kafkas_config_command(configs_cluster: Cluster) -> None:
    cluster = configs_cluster
    jobs = [
        (
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
            "--entity-type",
            "clients",
            "--entity-name",
            "app",
            "--add-config",
            "producer_byte_rate=1024,request_percentage=50",
        ),
        (
            "--alter",
            "--entity-type",
            "clients",
            "--entity-default",
            "--add-config",
            "consumer_byte_rate=2048",
        ),
        (
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "bob",
            "--add-config",
            "consumer_byte_rate=4096",
        ),
    ]
    with ThreadPoolExecutor(3) as pool:
        outputs = list(pool.map(lambda a: kafka_configs(cluster, *a), jobs))
    assert outputs[0].strip() == "Completed updating config for user alice."
    assert outputs[1].strip() == "Completed updating default config for clients in the cluster."

    # stored as Kafka stores them, with Kafka's notifications
    assert znode(cluster, "/config/users/alice/clients/app") == {
        "version": 1,
        "config": {"producer_byte_rate": "1024", "request_percentage": "50.0"},
    }
    assert znode(cluster, "/config/clients/<default>") == {
        "version": 1,
        "config": {"consumer_byte_rate": "2048"},
    }
    assert notified(cluster, "users/alice/clients/app")
    assert notified(cluster, "clients/<default>")
    assert notified(cluster, "users/bob")

    expected = {
        (("user", "alice"), ("client-id", "app")): {
            "producer_byte_rate": 1024.0,
            "request_percentage": 50.0,
        },
        (("client-id", None),): {"consumer_byte_rate": 2048.0},
        (("user", "bob"),): {"consumer_byte_rate": 4096.0},
    }
    on_every_broker(cluster, "the quotas", lambda n: describe_quotas(cluster, n) == expected)

    # Kafka's ConfigCommand reads them back (DescribeClientQuotas, strict)
    out = kafka_configs(
        cluster,
        "--describe",
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
        "--entity-type",
        "clients",
        "--entity-name",
        "app",
    )
    line = out.strip()
    assert line.startswith("Quota configs for user-principal 'alice', client-id 'app' are "), out
    assert sorted(line.split(" are ")[1].split(", ")) == [
        "producer_byte_rate=1024.0",
        "request_percentage=50.0",
    ]
    # and kafkacore configs prints the same line for it
    ours = kafkacore_configs(
        cluster,
        "--describe",
        "--entity-type",
        "clients",
        "--entity-default",
    )
    assert ours.strip() == "Quota configs for the default client-id are consumer_byte_rate=2048.0"


def test_client_quotas_with_kafkacore_configs(configs_cluster: Cluster) -> None:
    cluster = configs_cluster
    out = kafkacore_configs(
        cluster,
        "--alter",
        "--entity-type",
        "users",
        "--entity-default",
        "--add-config",
        "producer_byte_rate=500000",
    )
    assert out.strip() == "Completed updating default config for users in the cluster."
    kafkacore_configs(
        cluster,
        "--alter",
        "--entity-type",
        "clients",
        "--entity-name",
        "svc",
        "--add-config",
        "consumer_byte_rate=777",
    )
    assert znode(cluster, "/config/users/<default>") == {
        "version": 1,
        "config": {"producer_byte_rate": "500000"},
    }
    assert notified(cluster, "users/<default>")

    def has(node: int) -> bool:
        quotas = describe_quotas(cluster, node)
        return quotas.get((("user", None),)) == {"producer_byte_rate": 500000.0} and quotas.get(
            (("client-id", "svc"),)
        ) == {"consumer_byte_rate": 777.0}

    on_every_broker(cluster, "the new quotas", has)
    out = kafkacore_configs(cluster, "--describe", "--entity-type", "clients")
    assert "Quota configs for client-id 'svc' are consumer_byte_rate=777.0" in out.splitlines()

    kafkacore_configs(
        cluster,
        "--alter",
        "--entity-type",
        "clients",
        "--entity-name",
        "svc",
        "--delete-config",
        "consumer_byte_rate",
    )
    on_every_broker(
        cluster,
        "the quota removed",
        lambda n: (("client-id", "svc"),) not in describe_quotas(cluster, n),
    )
    assert znode(cluster, "/config/clients/svc") == {"version": 1, "config": {}}
    # Kafka's message for a key that is not a quota
    cls = APIS_BY_NAME["AlterClientQuotas"].request.cls
    response = call(
        cluster,
        1,
        "AlterClientQuotas",
        1,
        cls(
            entries=[
                cls.EntryData(
                    entity=[cls.EntityData(entity_type="user", entity_name="x")],
                    ops=[cls.OpData(key="segment.bytes", value=1.0, remove=False)],
                )
            ],
            validate_only=False,
        ),
    )
    (entry,) = response.entries
    assert (entry.error_code, entry.error_message) == (
        42,
        "Invalid configuration key segment.bytes",
    )


# -- topics and brokers ------------------------------------------------------------------------


def test_topic_and_broker_configs(configs_cluster: Cluster) -> None:
    cluster = configs_cluster
    create_topic(cluster, "dyn-configs", 1, 3)
    with ThreadPoolExecutor(3) as pool:
        outputs = list(
            pool.map(
                lambda a: kafka_configs(cluster, *a),
                [
                    (
                        "--alter",
                        "--entity-type",
                        "topics",
                        "--entity-name",
                        "dyn-configs",
                        "--add-config",
                        "retention.ms=123456",
                    ),
                    (
                        "--alter",
                        "--entity-type",
                        "brokers",
                        "--entity-default",
                        "--add-config",
                        "log.cleaner.threads=2",
                    ),
                    (
                        "--alter",
                        "--entity-type",
                        "brokers",
                        "--entity-name",
                        "2",
                        "--add-config",
                        "log.cleaner.threads=3",
                    ),
                ],
            )
        )
    assert outputs[0].strip() == "Completed updating config for topic dyn-configs."
    assert outputs[1].strip() == "Completed updating default config for brokers in the cluster."
    assert outputs[2].strip() == "Completed updating config for broker 2."
    assert znode(cluster, "/config/topics/dyn-configs")["config"] == {"retention.ms": "123456"}
    assert znode(cluster, "/config/brokers/<default>") == {
        "version": 1,
        "config": {"log.cleaner.threads": "2"},
    }
    assert znode(cluster, "/config/brokers/2")["config"] == {"log.cleaner.threads": "3"}
    assert notified(cluster, "brokers/<default>") and notified(cluster, "brokers/2")

    on_every_broker(
        cluster,
        "the topic config",
        lambda n: (
            describe_configs(cluster, n, TOPIC, "dyn-configs")["retention.ms"][:2]
            == ("123456", "DYNAMIC_TOPIC_CONFIG")
        ),
    )

    def broker_view(node: int) -> Any:
        return describe_configs(cluster, node, BROKER, str(node))["log.cleaner.threads"]

    # broker 2: its own value, then the default, then the static default (Kafka's synonyms)
    expected = {
        1: (
            "2",
            "DYNAMIC_DEFAULT_BROKER_CONFIG",
            ["DYNAMIC_DEFAULT_BROKER_CONFIG", "DEFAULT_CONFIG"],
        ),
        2: (
            "3",
            "DYNAMIC_BROKER_CONFIG",
            ["DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG", "DEFAULT_CONFIG"],
        ),
        3: (
            "2",
            "DYNAMIC_DEFAULT_BROKER_CONFIG",
            ["DYNAMIC_DEFAULT_BROKER_CONFIG", "DEFAULT_CONFIG"],
        ),
    }
    for node in cluster.brokers:
        with contextlib.suppress(AssertionError):
            wait_until(lambda n=node: broker_view(n) == expected[n], 20, "the broker configs")
        assert broker_view(node) == expected[node], node

    # kafkacore configs: remove broker 2's own value; the default applies there again
    out = kafkacore_configs(
        cluster,
        "--alter",
        "--entity-type",
        "brokers",
        "--entity-name",
        "2",
        "--delete-config",
        "log.cleaner.threads",
    )
    assert out.strip() == "Completed updating config for broker 2."
    wait_until(lambda: broker_view(2) == expected[1], 20, "broker 2 back on the default")
    # both commands describe broker 2 and the default alike
    describes = [
        ("--describe", "--entity-type", "brokers", *entity)
        for entity in (("--entity-name", "2"), ("--entity-default",))
    ]
    with ThreadPoolExecutor(2) as pool:
        theirs = list(pool.map(lambda a: kafka_configs(cluster, *a), describes))
    for args, expected_output in zip(describes, theirs, strict=True):
        assert kafkacore_configs(cluster, *args) == expected_output, args


# -- throttling --------------------------------------------------------------------------------


@pytest.mark.serial  # the producer's achieved rate is measured (within 20 %)
def test_producer_byte_rate_throttles_a_producer(configs_cluster: Cluster) -> None:
    from confluent_kafka import Producer

    cluster = configs_cluster
    quota = 100_000  # bytes per second
    create_topic(cluster, "throttled", 1, 1)
    # users/<user>/clients/<client> wins over the users/<default> quota set above
    kafka_configs(
        cluster,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "ANONYMOUS",
        "--entity-type",
        "clients",
        "--entity-name",
        "throttled-producer",
        "--add-config",
        f"producer_byte_rate={quota}",
    )
    on_every_broker(
        cluster,
        "the producer quota",
        lambda n: (
            describe_quotas(cluster, n).get(
                (("user", "ANONYMOUS"), ("client-id", "throttled-producer"))
            )
            == {"producer_byte_rate": float(quota)}
        ),
    )
    throttles: list[int] = []

    def on_stats(text: str) -> None:
        for broker in json.loads(text).get("brokers", {}).values():
            throttle = broker.get("throttle", {})
            if throttle.get("max", 0) > 0:
                throttles.append(int(throttle["max"]))

    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "client.id": "throttled-producer",
            "acks": 1,
            "linger.ms": 5,
            "batch.size": 16384,
            "queue.buffering.max.kbytes": 256,
            "statistics.interval.ms": 500,
            "stats_cb": on_stats,
        }
    )
    acked: list[tuple[float, int]] = []
    start = time.monotonic()

    def delivered(err: Any, msg: Any) -> None:
        if err is None:
            acked.append((time.monotonic() - start, len(msg.value())))

    value = b"x" * 1000
    duration = 11.0
    while time.monotonic() - start < duration:
        try:
            producer.produce("throttled", value, on_delivery=delivered)
        except BufferError:
            producer.poll(0.05)
            continue
        producer.poll(0)
    producer.purge()  # the backlog is not measured: do not wait for it
    producer.flush(5)
    assert throttles, "no throttle_time_ms > 0 seen by the producer"
    # Kafka's rate is taken over the quota window (11 samples of 1 s, at least 10 s of
    # them counted): a burst of about 10 s worth goes through at once, then every request
    # waits its throttle time. Over the window the producer gets its quota ...
    per_second = [sum(size for t, size in acked if int(t) == s) for s in range(int(duration))]
    rate = sum(per_second) / duration
    assert 0.8 * quota <= rate <= 1.2 * quota, (
        f"{rate:.0f} B/s for a quota of {quota} B/s; per second: {per_second}"
    )
    # ... and after the burst it is throttled, not stopped
    assert sum(1 for got in per_second[2:] if got) >= 5, per_second


# -- the same through a Kafka 3.9.1 broker ------------------------------------------------------

KAFKA_ID = 4


def alter_quotas(address: str, entity: dict[str, str | None], ops: list[tuple[str, float]]) -> Any:
    cls = APIS_BY_NAME["AlterClientQuotas"].request.cls
    request = cls(
        entries=[
            cls.EntryData(
                entity=[cls.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
                ops=[cls.OpData(key=k, value=v, remove=False) for k, v in ops],
            )
        ],
        validate_only=True,
    )
    (entry,) = call(address, 0, "AlterClientQuotas", 1, request).entries
    return entry.error_code, entry.error_message


def describe_quotas_error(address: str, components: list[tuple[str, int, str | None]]) -> Any:
    cls = APIS_BY_NAME["DescribeClientQuotas"].request.cls
    request = cls(
        components=[
            cls.ComponentData(entity_type=t, match_type=m, match=n) for t, m, n in components
        ],
        strict=False,
    )
    response = call(address, 0, "DescribeClientQuotas", 1, request)
    return response.error_code, response.error_message


def test_a_kafka_broker_agrees(configs_cluster: Cluster, tmp_path: Any) -> None:
    """Kafka 3.9.1 joins the cluster as broker 4: it reads the quotas kafkacore stored,
    describes broker configs with the same sources and synonyms, and refuses bad quota
    requests with the same errors."""
    from cluster.test_mixed_cluster import KafkaBroker

    cluster = configs_cluster
    kafka = KafkaBroker(tmp_path / "kafka", cluster.zookeeper_connect)
    kafka.props.write_text(kafka.props.read_text().replace("broker.id=3", f"broker.id={KAFKA_ID}"))
    try:
        kafka.start()
        wait_until(lambda: KAFKA_ID in cluster.registered(), 120, "Kafka registered")
        ours = describe_quotas(cluster, 1)
        assert ours, "the quotas of the earlier tests"
        wait_until(lambda: describe_quotas(kafka.bootstrap) == ours, 60, "Kafka's quotas")

        with ThreadPoolExecutor(2) as pool:
            list(
                pool.map(
                    lambda node: kafka_configs(
                        cluster,
                        "--alter",
                        "--entity-type",
                        "brokers",
                        "--entity-name",
                        str(node),
                        "--add-config",
                        # at most double the running cleaner's threads (Kafka's rule)
                        "log.cleaner.threads=2",
                    ),
                    [1, KAFKA_ID],
                )
            )
        keys = ("log.cleaner.threads", "replica.lag.time.max.ms", "log.cleaner.backoff.ms")

        def view(address: Cluster | str, node: int) -> Any:
            described = describe_configs(address, node, BROKER, str(node))
            return {k: described[k] for k in keys}

        wait_until(
            lambda: (
                view(kafka.bootstrap, KAFKA_ID)["log.cleaner.threads"][1] == "DYNAMIC_BROKER_CONFIG"
            ),
            30,
            "Kafka",
        )
        wait_until(
            lambda: view(cluster, 1)["log.cleaner.threads"][1] == "DYNAMIC_BROKER_CONFIG",
            30,
            "broker 1",
        )
        assert view(cluster, 1) == view(kafka.bootstrap, KAFKA_ID)

        for entity, ops in [
            ({"user": "x"}, [("segment.bytes", 1.0)]),
            ({"client-id": "x"}, [("producer_byte_rate", 1.5)]),
            ({}, [("producer_byte_rate", 1.0)]),
            ({"user": ""}, [("producer_byte_rate", 1.0)]),
            ({"ip": "127.0.0.1", "user": "u"}, [("connection_creation_rate", 1.0)]),
            ({"ip": "127.0.0.1"}, [("producer_byte_rate", 1.0)]),
            ({"user": "x", "client-id": None}, [("request_percentage", 12.5)]),
        ]:
            assert alter_quotas(cluster.bootstrap, entity, ops) == alter_quotas(
                kafka.bootstrap, entity, ops
            ), entity
        for components in [
            [("user", 2, None), ("user", 0, "a")],
            [("ip", 2, None), ("client-id", 2, None)],
            [("group", 2, None)],
            [("", 2, None)],
        ]:
            assert describe_quotas_error(cluster.bootstrap, components) == describe_quotas_error(
                kafka.bootstrap, components
            ), components
        for users in [None, ["nobody"], ["twice", "twice"], ["alice", "bob"]]:
            assert describe_scram(cluster.bootstrap, users) == describe_scram(
                kafka.bootstrap, users
            ), users
        # and Kafka's ConfigCommand describes a user (quotas, then SCRAM credentials)
        out = kafka_configs(cluster, "--describe", "--entity-type", "users", "--entity-name", "bob")
        assert out.strip() == "Quota configs for user-principal 'bob' are consumer_byte_rate=4096.0"
    finally:
        kafka.stop()


def describe_scram(address: str, users: list[str] | None) -> Any:
    cls = APIS_BY_NAME["DescribeUserScramCredentials"].request.cls
    request = cls(users=None if users is None else [cls.UserName(name=u) for u in users])
    response = call(address, 0, "DescribeUserScramCredentials", 0, request)
    return response.error_code, [
        (r.user, r.error_code, r.error_message, len(r.credential_infos)) for r in response.results
    ]
