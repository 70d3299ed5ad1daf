"""``group.consumer.migration.policy`` as Kafka 4.3.1 applies it (``GroupMetadataManager``'s
``validateOnlineUpgrade``, ``throwIfClassicMemberCannotJoinConsumerGroup`` and the
downgrade checks), driven with raw requests on brokers configured each way: with
``disabled`` a ConsumerGroupHeartbeat cannot join a classic group with members
(GROUP_ID_NOT_FOUND, Kafka's message) nor a classic member a consumer group
(INCONSISTENT_GROUP_PROTOCOL); with ``upgrade`` a group is upgraded but stays a consumer
group when its last consumer-protocol member leaves (its classic members carry on in it);
empty groups convert whatever the policy. (The default, ``bidirectional``, is compared
with Kafka itself in interop/test_consumer_group_heartbeat_vs_kafka.py.)"""

from __future__ import annotations

import pytest

from support.brokers import BrokerFactory
from support.consumer_group_scenario import TOPIC, Classic, Session, await_coordinator, prepared
from support.raw_brokers import Raw

pytestmark = pytest.mark.timeout(120)

COMMON = ["group.initial.rebalance.delay.ms=0", "group.consumer.assignment.interval.ms=0"]
JOIN = {"member_epoch": 0, "rebalance_timeout_ms": 30_000}


def _raw(broker_factory: BrokerFactory, policy: str) -> Raw:
    broker = broker_factory(*COMMON, f"group.consumer.migration.policy={policy}", name=policy)
    return prepared(Raw(broker.port))


def test_disabled_refuses_both_ways(broker_factory: BrokerFactory) -> None:
    raw = _raw(broker_factory, "disabled")
    await_coordinator(raw, "classic-g")
    s = Session(raw)
    c1 = Classic(raw, "classic-g", [])
    c1.join([TOPIC])
    assert c1.join([TOPIC])["error_code"] == "NONE"
    assert c1.sync({c1.member_id: [(TOPIC, [0, 1, 2, 3])]})[0] == "NONE"
    refused = s.heartbeat(
        group_id="classic-g", member_id="m1", subscribed_topic_names=[TOPIC], owned={}, **JOIN
    )
    assert refused["error_code"] == "GROUP_ID_NOT_FOUND"
    assert refused["error_message"] == (
        "Cannot upgrade classic group classic-g to consumer group because online upgrade is "
        "disabled."
    )
    assert c1.heartbeat() == "NONE"  # the classic group goes on

    await_coordinator(raw, "consumer-g")
    joined = s.heartbeat(
        group_id="consumer-g", member_id="m2", subscribed_topic_names=[TOPIC], owned={}, **JOIN
    )
    assert joined["error_code"] == "NONE"
    c2 = Classic(raw, "consumer-g", [])
    assert c2.join([TOPIC])["error_code"] == "INCONSISTENT_GROUP_PROTOCOL"


def test_upgrade_only_keeps_the_consumer_group(broker_factory: BrokerFactory) -> None:
    raw = _raw(broker_factory, "upgrade")
    await_coordinator(raw, "g")
    s = Session(raw)
    c1 = Classic(raw, "g", [])
    c1.join([TOPIC])
    c1.join([TOPIC])
    c1.sync({c1.member_id: [(TOPIC, [0, 1, 2, 3])]})
    m = s.heartbeat(group_id="g", member_id="m1", subscribed_topic_names=[TOPIC], owned={}, **JOIN)
    assert m["error_code"] == "NONE"
    assert s.listed("g", []) == [("g", "consumer", "Reconciling", "consumer")]
    assert c1.heartbeat() == "REBALANCE_IN_PROGRESS"
    assert c1.join([TOPIC])["error_code"] == "NONE"
    assert c1.sync()[0] == "NONE"
    s.heartbeat(group_id="g", member_id="m1", member_epoch=-1)
    # no downgrade: the classic member stays, alone, in the consumer group
    assert [g[3] for g in s.listed("g", [])] == ["consumer"]
    assert c1.heartbeat() in ("NONE", "REBALANCE_IN_PROGRESS")
    assert c1.describe()[0] == "GROUP_ID_NOT_FOUND"  # DescribeGroups: not a classic group
