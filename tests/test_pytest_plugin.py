"""The pytest plugin (kafkacore.pytest_plugin, entry point ``pytest11``), run on test
files of a user's project through ``pytester``: the fixtures, the markers, the isolation
between tests in both modes."""

from __future__ import annotations

# Imported here, before pytester's in-process runs, so that they are not imported anew by
# each run (pytester drops the modules a run imported): the C part of asyncio is never
# re-imported, so a second copy of asyncio would have a CancelledError its tasks don't
# raise.
import asyncio  # noqa: F401

import pytest

import kafkacore.embedded
import kafkacore.server  # noqa: F401

pytest_plugins = ["pytester"]


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A user's project whose sessions load the plugin exactly once: by ``-p`` here (the
    entry point is only there once the package is installed; autoload is off so an
    installed one cannot register it twice)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeini("[pytest]\naddopts = -p kafkacore.pytest_plugin\n")
    return pytester


FIVE_LINES = """
from confluent_kafka import Producer

def test_produce(kafkacore_broker):
    producer = Producer({"bootstrap.servers": kafkacore_broker.bootstrap_servers})
    producer.produce("orders", b"hello")
    assert producer.flush(10) == 0
"""


def test_the_readme_example(project: pytest.Pytester) -> None:
    project.makepyfile(test_readme=FIVE_LINES)
    project.runpytest_inprocess().assert_outcomes(passed=1)


ISOLATION = """
import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

SEEN = {}

def topics(broker):
    listed = AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics(timeout=10)
    return {t: len(m.partitions) for t, m in listed.topics.items() if not t.startswith("__")}

@pytest.mark.kafkacore_topics("plain", {"wide": 4})
def test_first(kafkacore_broker):
    SEEN["first"] = kafkacore_broker.bootstrap_servers
    assert topics(kafkacore_broker) == {"plain": 1, "wide": 4}
    producer = Producer({"bootstrap.servers": kafkacore_broker.bootstrap_servers})
    producer.produce("plain", b"x")
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": kafkacore_broker.bootstrap_servers,
                         "group.id": "left-behind", "auto.offset.reset": "earliest"})
    consumer.subscribe(["plain"])
    msg = None
    for _ in range(60):
        msg = consumer.poll(0.5)
        if msg is not None:
            break
    assert msg is not None and msg.value() == b"x"
    consumer.commit(asynchronous=False)
    consumer.close()

def test_second_sees_an_empty_broker(kafkacore_broker):
    SEEN["second"] = kafkacore_broker.bootstrap_servers
    assert topics(kafkacore_broker) == {}
    admin = AdminClient({"bootstrap.servers": kafkacore_broker.bootstrap_servers})
    assert admin.list_consumer_groups().result(10).valid == []

def test_how_brokers_were_shared():
    print("SHARED" if SEEN["first"] == SEEN["second"] else "SEPARATE")
"""


def test_reset_mode_reuses_one_broker_emptied_between_tests(project: pytest.Pytester) -> None:
    project.makepyfile(test_isolation=ISOLATION)
    result = project.runpytest_inprocess("-s")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*SHARED*"])


def test_fresh_mode_gives_each_test_its_own_broker(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\naddopts = -p kafkacore.pytest_plugin\nkafkacore_isolation = fresh\n")
    project.makepyfile(test_isolation=ISOLATION)
    result = project.runpytest_inprocess("-s")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*SEPARATE*"])


def test_bad_isolation_mode_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\naddopts = -p kafkacore.pytest_plugin\nkafkacore_isolation = x\n")
    project.makepyfile("def test_x(kafkacore_broker):\n    pass\n")
    result = project.runpytest_inprocess()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*kafkacore_isolation must be one of reset, fresh, not 'x'*"])


def test_a_broker_that_cannot_be_reset_is_replaced(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_leak="""
        from confluent_kafka import Consumer
        from confluent_kafka.admin import AdminClient
        import pytest

        LEAKED = []

        @pytest.mark.kafkacore_topics("t")
        def test_leaves_an_active_member(kafkacore_broker):
            consumer = Consumer({"bootstrap.servers": kafkacore_broker.bootstrap_servers,
                                 "group.id": "active", "session.timeout.ms": 45000})
            consumer.subscribe(["t"])
            for _ in range(20):
                consumer.poll(0.2)
                if consumer.assignment():
                    break
            assert consumer.assignment()
            LEAKED.append((consumer, kafkacore_broker))  # never closed: the group stays busy

        def test_next_test_is_still_clean(kafkacore_broker):
            consumer, old = LEAKED[0]
            assert old is not kafkacore_broker and not old.running
            admin = AdminClient({"bootstrap.servers": kafkacore_broker.bootstrap_servers})
            assert admin.list_consumer_groups().result(10).valid == []
            assert [t for t in admin.list_topics(timeout=10).topics if t == "t"] == []
        """
    )
    project.runpytest_inprocess().assert_outcomes(passed=2)


def test_configs_marker_and_session_fixture(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_configs="""
        import pytest
        from confluent_kafka import Producer
        from confluent_kafka.admin import AdminClient

        @pytest.mark.kafkacore_configs({"auto.create.topics.enable": "false"})
        def test_no_auto_creation(kafkacore_broker):
            assert kafkacore_broker.server.config.auto_create_topics_enable is False
            errors = []
            producer = Producer({"bootstrap.servers": kafkacore_broker.bootstrap_servers,
                                 "message.timeout.ms": 1500})
            producer.produce("missing", b"x", on_delivery=lambda e, m: errors.append(e))
            producer.flush(10)
            assert errors and errors[0] is not None

        def test_session_one(kafkacore_broker_session):
            kafkacore_broker_session.create_topics({"shared": 2})

        def test_session_two(kafkacore_broker_session, kafkacore_broker):
            admin = AdminClient({"bootstrap.servers": kafkacore_broker_session.bootstrap_servers})
            assert len(admin.list_topics("shared", timeout=10).topics["shared"].partitions) == 2
            assert kafkacore_broker.bootstrap_servers != kafkacore_broker_session.bootstrap_servers
        """
    )
    project.runpytest_inprocess().assert_outcomes(passed=3)


def test_markers_are_registered_for_strict_markers(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("--markers")
    result.stdout.fnmatch_lines(["*kafkacore_topics(*topics)*", "*kafkacore_configs(configs)*"])
    project.makepyfile(
        """
        import pytest

        @pytest.mark.kafkacore_topics(42)
        def test_x(kafkacore_broker):
            pass
        """
    )
    result = project.runpytest_inprocess("--strict-markers")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*kafkacore_topics takes topic names*not 42*"])
