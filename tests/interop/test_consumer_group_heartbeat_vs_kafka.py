"""Raw ConsumerGroupHeartbeat sequences answered by kafkacore and by Apache Kafka 4.3.1
(KRaft, one node, from its jars), compared field by field: a join, the steady state, a
second member's join (the first revokes half its partitions before the second gets them,
which wait unreleased meanwhile), fencing (an epoch ahead, an old epoch that is not the
previous one, an unknown member), a static member's temporary leave and rejoin under a
new member id (and an instance id still held: UNRELEASED_INSTANCE_ID), a leave, and bad
requests (empty ids, an invalid epoch, a missing rebalance timeout, an unknown assignor);
then ConsumerGroupDescribe and ListGroups of the group.

Every response field is compared. Normalized, honestly: topic ids (random per cluster)
become topic names, and the order of topics and partitions within an assignment is
sorted (it follows each broker's hash of its own topic ids). Member ids are chosen by the
client (v1, KIP-1082), so they are compared as they are. Both brokers run with
``group.consumer.assignment.interval.ms=0`` so that no answer depends on timing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.brokers import Broker
from support.consumer_group_scenario import (
    COMMON,
    group_config_scenario,
    migration_scenario,
    offsets_by_id_scenario,
    prepared,
    regex_scenario,
    scenario,
)
from support.raw_brokers import KafkaNode, Raw

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def kafka(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    node = KafkaNode(kafka_libs, tmp_path_factory.mktemp("kafka"), COMMON).start()
    try:
        yield prepared(Raw(node.port, node.home / "data"))
    finally:
        node.stop()


@pytest.fixture(scope="module")
def kafkacore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    data = tmp_path_factory.mktemp("kafkacore") / "data"
    broker = Broker(data, COMMON).start()
    try:
        yield prepared(Raw(broker.port, data))
    finally:
        broker.stop()


def test_heartbeat_sequences_answer_as_kafka(kafka: Raw, kafkacore: Raw) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    theirs = scenario(kafka, group)
    ours = scenario(kafkacore, group)
    mismatches = [(t[0], t[1], o[1]) for t, o in zip(theirs, ours, strict=True) if t != o]
    assert not mismatches, "\n".join(
        f"{label}:\n  Kafka {t}\n  ours  {o}" for label, t, o in mismatches
    )


def test_migration_sequences_answer_as_kafka(kafka: Raw, kafkacore: Raw) -> None:
    """A classic group upgraded by a consumer-protocol member and downgraded when it
    leaves: every answer to the classic and the consumer member equal (the member ids
    each broker makes up compared by order of appearance)."""
    group = f"mig-{uuid.uuid4().hex[:8]}"
    theirs = migration_scenario(kafka, group, [])
    ours = migration_scenario(kafkacore, group, [])
    mismatches = [(t[0], t[1], o[1]) for t, o in zip(theirs, ours, strict=True) if t != o]
    assert not mismatches, "\n".join(
        f"{label}:\n  Kafka {t}\n  ours  {o}" for label, t, o in mismatches
    )


def test_group_configs_answer_as_kafka(kafka: Raw, kafkacore: Raw) -> None:
    """ConfigResource GROUP: DescribeConfigs and IncrementalAlterConfigs of a group's
    ``consumer.*`` configs (Kafka's GroupConfig validation, its messages), and the
    heartbeat interval a member is given following the group's config."""
    group = f"cfg-{uuid.uuid4().hex[:8]}"
    theirs = group_config_scenario(kafka, group)
    ours = group_config_scenario(kafkacore, group)
    mismatches = [(t[0], t[1], o[1]) for t, o in zip(theirs, ours, strict=True) if t != o]
    assert not mismatches, "\n".join(
        f"{label}:\n  Kafka {t}\n  ours  {o}" for label, t, o in mismatches
    )


def test_offsets_by_topic_id_answer_as_kafka(kafka: Raw, kafkacore: Raw) -> None:
    """OffsetCommit and OffsetFetch v10 (topics by id): known and unknown ids, a partition
    that does not exist, fetch by id and fetch all."""
    group = f"v10-{uuid.uuid4().hex[:8]}"
    theirs = offsets_by_id_scenario(kafka, group)
    ours = offsets_by_id_scenario(kafkacore, group)
    mismatches = [(t[0], t[1], o[1]) for t, o in zip(theirs, ours, strict=True) if t != o]
    assert not mismatches, "\n".join(
        f"{label}:\n  Kafka {t}\n  ours  {o}" for label, t, o in mismatches
    )


def test_regex_subscription_answers_as_kafka(kafka: Raw, kafkacore: Raw) -> None:
    """A regex subscription (RE2J syntax): an invalid one refused with RE2J's message, the
    topics matching assigned, and a topic created later picked up."""
    group = f"rx-{uuid.uuid4().hex[:8]}"
    prefix = f"rx{uuid.uuid4().hex[:6]}"
    theirs = regex_scenario(kafka, group, prefix)
    ours = regex_scenario(kafkacore, group, prefix)
    mismatches = [(t[0], t[1], o[1]) for t, o in zip(theirs, ours, strict=True) if t != o]
    assert not mismatches, "\n".join(
        f"{label}:\n  Kafka {t}\n  ours  {o}" for label, t, o in mismatches
    )
