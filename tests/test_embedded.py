"""kafkacore.EmbeddedBroker / AsyncEmbeddedBroker: the in-process broker, used by real
clients (confluent-kafka here; kafka-python and aiokafka in subprocesses with their own
PYTHONPATH, as tests/compat runs them), restarted under a connected client, stopped by
SIGTERM in a service."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

import kafkacore
from kafkacore.config import ConfigError
from kafkacore.embedded import AsyncEmbeddedBroker, EmbeddedBroker

REPO = Path(__file__).resolve().parents[1]
SOURCES = REPO / "python"


def produce(bootstrap: str, topic: str, values: list[bytes], partition: int = 0) -> list[int]:
    """Produce ``values`` with acks=all; the acknowledged offsets."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    offsets: list[int] = []

    def on_delivery(err: Any, msg: Any) -> None:
        assert err is None, err
        offsets.append(msg.offset())

    for value in values:
        producer.produce(topic, value, partition=partition, on_delivery=on_delivery)
    assert producer.flush(20) == 0
    return offsets


def consume(bootstrap: str, topic: str, count: int, partition: int = 0) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "embedded-test"})
    consumer.assign([TopicPartition(topic, partition, 0)])
    got: list[bytes] = []
    deadline = time.monotonic() + 20
    try:
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
    finally:
        consumer.close()
    return got


def test_context_manager_topics_and_temporary_directory() -> None:
    with EmbeddedBroker(topics={"orders": 3, "audit": 1}) as broker:
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) == broker.port > 0
        data = broker.log_dir
        assert data.is_dir() and data.name.startswith("kafkacore-embedded-")
        metadata = AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics(
            timeout=10
        )
        assert {t: len(m.partitions) for t, m in metadata.topics.items()} == {
            "orders": 3,
            "audit": 1,
        }
        assert produce(broker.bootstrap_servers, "orders", [b"a", b"b"], partition=2) == [0, 1]
        assert consume(broker.bootstrap_servers, "orders", 2, partition=2) == [b"a", b"b"]
        assert (data / "orders-2" / "00000000000000000000.log").stat().st_size > 0
        health = broker.health()
        assert health.ok and health.running
        assert health.bootstrap_servers == broker.bootstrap_servers
        # 4 partitions + the one of __consumer_offsets (TEST_DEFAULTS), created by the
        # consumer's group coordinator lookup
        assert health.logs is not None and health.logs.partitions == 5
    assert not data.exists(), "the temporary directory is removed at exit"
    assert not broker.running and not broker.health().ok


def test_configs_by_kafka_name_and_bad_config_refused_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"num\.partitions"):
        EmbeddedBroker(configs={"num.partitions": 0})
    with EmbeddedBroker(configs={"num.partitions": 4, "log.retention.ms": 60_000}) as broker:
        config = broker.server.config
        assert config.num_partitions == 4
        # auto-creation (Kafka's default) uses num.partitions
        produce(broker.bootstrap_servers, "auto", [b"x"])
        metadata = AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics(
            "auto", timeout=10
        )
        assert len(metadata.topics["auto"].partitions) == 4


def test_given_log_dir_is_kept_and_reopened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with EmbeddedBroker(log_dir=data, topics=["events"]) as broker:
        assert broker.log_dir == data
        produce(broker.bootstrap_servers, "events", [b"one", b"two"])
    assert (data / ".kafka_cleanshutdown").exists(), "a clean shutdown"
    assert (data / "events-0").is_dir()
    with EmbeddedBroker(log_dir=data) as broker:
        assert consume(broker.bootstrap_servers, "events", 2) == [b"one", b"two"]
        assert produce(broker.bootstrap_servers, "events", [b"three"]) == [2]


def test_restart_keeps_port_and_data_and_clients_reconnect() -> None:
    with EmbeddedBroker(topics=["t"]) as broker:
        bootstrap = broker.bootstrap_servers
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        producer.produce("t", b"before", partition=0)
        assert producer.flush(20) == 0
        old_server = broker.server
        broker.restart()
        assert broker.server is not old_server
        assert broker.bootstrap_servers == bootstrap
        # the same producer object, its connection broken by the restart, delivers again
        delivered: list[tuple[Any, int]] = []
        producer.produce(
            "t", b"after", partition=0, on_delivery=lambda e, m: delivered.append((e, m.offset()))
        )
        assert producer.flush(30) == 0
        assert delivered == [(None, 1)]
        assert consume(bootstrap, "t", 2) == [b"before", b"after"]


def test_stop_then_start_and_white_box_access() -> None:
    broker = EmbeddedBroker(topics={"w": 2})
    with pytest.raises(RuntimeError, match="not running"):
        broker.bootstrap_servers  # noqa: B018
    broker.start()
    try:
        produce(broker.bootstrap_servers, "w", [b"x"] * 3, partition=1)

        def log_end_offset() -> int:
            logs = broker.server.logs
            assert logs is not None
            log = logs.get_log(("w", 1))
            assert log is not None
            return log.log_end_offset

        assert broker.call(log_end_offset) == 3
        port = broker.port
        broker.stop()
        assert not broker.running and broker.log_dir.is_dir()
        assert (broker.log_dir / ".kafka_cleanshutdown").exists()
        broker.start()
        assert broker.port == port
        assert broker.call(log_end_offset) == 3
    finally:
        broker.close()
    assert not broker.log_dir.exists()


def test_reset_deletes_topics_and_groups() -> None:
    with EmbeddedBroker(topics={"a": 2, "b": 1}) as broker:
        bootstrap = broker.bootstrap_servers
        produce(bootstrap, "a", [b"1"])
        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "g1", "auto.offset.reset": "earliest"}
        )
        consumer.subscribe(["a"])
        deadline = time.monotonic() + 30
        msg = None
        while msg is None and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
        assert msg is not None and msg.error() is None
        consumer.commit(asynchronous=False)
        consumer.close()
        admin = AdminClient({"bootstrap.servers": bootstrap})
        assert [g.group_id for g in admin.list_consumer_groups().result(10).valid] == ["g1"]
        broker.reset()
        assert set(admin.list_topics(timeout=10).topics) <= {"__consumer_offsets"}
        assert admin.list_consumer_groups().result(10).valid == []
        assert not (broker.log_dir / "a-0").exists() or not any((broker.log_dir / "a-0").iterdir())
        # the same names can be created again, empty
        broker.create_topics({"a": 3})
        assert len(admin.list_topics("a", timeout=10).topics["a"].partitions) == 3
        assert produce(bootstrap, "a", [b"again"]) == [0]


def test_async_embedded_broker_on_the_callers_loop() -> None:
    async def main() -> tuple[list[int], str, bool]:
        async with AsyncEmbeddedBroker(topics={"orders": 2}) as broker:
            assert asyncio.get_running_loop() is not None
            # a blocking client from another thread, while the broker serves on this loop
            offsets = await asyncio.to_thread(
                produce, broker.bootstrap_servers, "orders", [b"x", b"y"], 1
            )
            await broker.restart()
            await broker.create_topics(["more"], {"cleanup.policy": "compact"})
            health = broker.health()
            described = await asyncio.to_thread(
                lambda: AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics(
                    timeout=10
                )
            )
            assert set(described.topics) == {"orders", "more"}
            return offsets, str(broker.log_dir), health.ok

    offsets, data, healthy = asyncio.run(main())
    assert offsets == [0, 1] and healthy
    assert not Path(data).exists()


def test_import_kafkacore_stays_light_and_exports_lazily() -> None:
    code = textwrap.dedent(
        """
        import sys, kafkacore
        assert "kafkacore.embedded" not in sys.modules
        assert "kafkacore.server" not in sys.modules
        assert "EmbeddedBroker" in kafkacore.__all__ and "EmbeddedBroker" in dir(kafkacore)
        cls = kafkacore.EmbeddedBroker
        assert cls.__module__ == "kafkacore.embedded", cls.__module__
        assert "kafkacore.server" not in sys.modules  # imported when a broker starts
        try:
            kafkacore.NoSuchThing
        except AttributeError as exc:
            print("OK", exc)
        """
    )
    out = _python(code)
    assert out.startswith("OK ") and "NoSuchThing" in out
    assert kafkacore.AsyncEmbeddedBroker is AsyncEmbeddedBroker


def test_python_dash_m_kafkacore_is_the_kafkacore_command() -> None:
    env = {**os.environ, "PYTHONPATH": str(SOURCES)}
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacore", "topics", "--list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    # kafka-topics' own complaint, exit status 1: the same command as `kafkacore`
    assert proc.returncode == 1
    assert "--bootstrap-server must be specified" in proc.stderr or "bootstrap" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacore", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and "server-start" in proc.stdout
    assert proc.stdout.startswith("usage: kafkacore ")


def _python(code: str, *, env: dict[str, str] | None = None, timeout: float = 60) -> str:
    full_env = {**os.environ, "PYTHONPATH": str(SOURCES), **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


# --------------------------------------------------------------------------- SIGTERM

SERVICE = """
import sys
from kafkacore import EmbeddedBroker

mode, data = sys.argv[1], sys.argv[2]
broker = EmbeddedBroker(log_dir=data, topics=["jobs"])
if mode == "serve_forever":
    broker.start()
    print(broker.bootstrap_servers, flush=True)
    broker.serve_forever()
    print("stopped", flush=True)
elif mode == "async_serve_forever":
    import asyncio
    from kafkacore import AsyncEmbeddedBroker

    async def main():
        broker = AsyncEmbeddedBroker(log_dir=data, topics=["jobs"])
        await broker.start()
        print(broker.bootstrap_servers, flush=True)
        await broker.serve_forever()
        assert not broker.running
        print("stopped", flush=True)

    asyncio.run(main())
else:  # a service with a main loop of its own
    broker.start()
    broker.stop_on_signals()
    print(broker.bootstrap_servers, flush=True)
    import time
    while True:
        time.sleep(0.1)
"""


@pytest.mark.parametrize("mode", ["serve_forever", "async_serve_forever", "stop_on_signals"])
def test_service_shuts_down_cleanly_on_sigterm(tmp_path: Path, mode: str) -> None:
    data = tmp_path / "data"
    script = tmp_path / "service.py"
    script.write_text(SERVICE)
    env = {**os.environ, "PYTHONPATH": str(SOURCES)}
    proc = subprocess.Popen(
        [sys.executable, str(script), mode, str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        bootstrap = proc.stdout.readline().strip()
        assert bootstrap.startswith("127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
        assert produce(bootstrap, "jobs", [b"j1", b"j2"]) == [0, 1]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-4000:]
    if mode != "stop_on_signals":
        assert out.strip() == "stopped"
    assert "Traceback" not in err, err[-4000:]
    assert (data / ".kafka_cleanshutdown").exists(), "clean shutdown marker"
    with EmbeddedBroker(log_dir=data) as broker:
        assert consume(broker.bootstrap_servers, "jobs", 2) == [b"j1", b"j2"]


# --------------------------------------------------------------------------- other clients


@pytest.fixture(scope="module")
def client_dirs() -> dict[str, Path]:
    """scripts/install-test-clients.sh (cached): ``{"aiokafka-0.14.0": dir, ...}``."""
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "install-test-clients.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    dirs = {}
    for line in proc.stdout.splitlines():
        name, sep, path = line.partition("=")
        if sep:
            dirs[name] = Path(path)
    return dirs


def run_with_client(target: Path, code: str, timeout: float = 120) -> Any:
    """``code`` with ``target`` (a pip --target dir) and kafkacore's sources on the path;
    the JSON document of its last stdout line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(SOURCES)])}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.strip(), (
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


AIOKAFKA = """
import asyncio, json
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from kafkacore import AsyncEmbeddedBroker

async def main():
    # the broker and the client on one event loop: the AsyncEmbeddedBroker use case
    async with AsyncEmbeddedBroker(topics={"orders": 3}) as broker:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers)
        await producer.start()
        try:
            sent = [(await producer.send_and_wait("orders", b"v%d" % i, partition=2)).offset
                    for i in range(3)]
        finally:
            await producer.stop()
        await broker.restart()
        consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
        await consumer.start()
        try:
            tp = TopicPartition("orders", 2)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            got = []
            for _ in range(40):
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    got += [r.value.decode() for r in records]
                if len(got) >= 3:
                    break
            partitions = sorted(consumer.partitions_for_topic("orders") or ())
        finally:
            await consumer.stop()
        print(json.dumps({"sent": sent, "got": got, "partitions": partitions}))

asyncio.run(main())
"""

KAFKA_PYTHON = """
import json
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafkacore import EmbeddedBroker

with EmbeddedBroker(topics={"orders": 2}) as broker:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, acks="all")
    sent = [producer.send("orders", b"k%d" % i, partition=1).get(timeout=20).offset
            for i in range(3)]
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers,
                             consumer_timeout_ms=5000)
    tp = TopicPartition("orders", 1)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = []
    for record in consumer:
        got.append(record.value.decode())
        if len(got) == 3:
            break
    partitions = sorted(consumer.partitions_for_topic("orders") or ())
    consumer.close()
    print(json.dumps({"sent": sent, "got": got, "partitions": partitions}))
"""


def test_aiokafka_with_async_embedded_broker(client_dirs: dict[str, Path]) -> None:
    result = run_with_client(client_dirs["aiokafka-0.14.0"], AIOKAFKA)
    assert result == {"sent": [0, 1, 2], "got": ["v0", "v1", "v2"], "partitions": [0, 1, 2]}


@pytest.mark.parametrize("version", ["2.3.3", "3.0.12"])
def test_kafka_python_with_embedded_broker(client_dirs: dict[str, Path], version: str) -> None:
    result = run_with_client(client_dirs[f"kafka-python-{version}"], KAFKA_PYTHON)
    assert result == {"sent": [0, 1, 2], "got": ["k0", "k1", "k2"], "partitions": [0, 1]}


def test_confluent_kafka_error_when_stopped() -> None:
    """A stopped broker is really gone: a client sees a transport error, not a hang."""
    broker = EmbeddedBroker().start()
    bootstrap = broker.bootstrap_servers
    broker.close()
    errors: list[Any] = []
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "x", "error_cb": errors.append}
    )
    try:
        deadline = time.monotonic() + 10
        while not errors and time.monotonic() < deadline:
            consumer.poll(0.2)
    finally:
        consumer.close()
    assert errors and errors[0].code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN)
