"""The controller's side of an offline log directory (Kafka's ``onBrokerLogDirFailure``),
with the fake ZooKeeper and fake brokers of ``test_controller_cluster.py``: a log dir
event notification makes the controller send the broker a LeaderAndIsr for all its
replicas; the partitions answered KAFKA_STORAGE_ERROR are its offline replicas - new
leaders are elected among the other replicas (never the offline one, not even by a
preferred election), the replica leaves the ISR, the notification is deleted. The other
replicas of that broker are untouched."""

from __future__ import annotations

from typing import Any

from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode
from test_controller_cluster import (
    Cluster,
    FakeBroker,
    FakeZk,
    _has_states,
    new_topic,
    run,
    state,
    wait_for,
)


def _failing_dir(
    broker: FakeBroker, topic_ids: dict[Any, str], offline: set[TopicPartition]
) -> None:
    """``broker`` answers KAFKA_STORAGE_ERROR in LeaderAndIsr for ``offline``."""
    answer = broker._answer

    def failing(name: str, request: Any) -> Any:
        response = answer(name, request)
        if name == "LeaderAndIsr":
            for topic in response.topics:
                for pe in topic.partition_errors:
                    tp = TopicPartition(topic_ids[topic.topic_id], pe.partition_index)
                    if tp in offline:
                        pe.error_code = ErrorCode.KAFKA_STORAGE_ERROR
        return response

    broker._answer = failing  # type: ignore[method-assign]


async def _scenario(zk: Any) -> None:
    cl = Cluster(zk)
    await cl.start()
    c = cl.controllers[1]
    try:
        assignment = new_topic("t", {0: (2, 1, 3), 1: (2, 3, 1), 2: (1, 2, 3)})
        await zk.create_topic_assignment(assignment)
        await wait_for(lambda: _has_states(zk, "t", 3))
        await cl.settle(c)
        offline = {TopicPartition("t", 0), TopicPartition("t", 2)}
        _failing_dir(cl.brokers[2], {assignment.topic_id: "t"}, offline)
        before = len(cl.brokers[2].of("LeaderAndIsr"))
        await zk.create_log_dir_event_notification(2)

        async def moved() -> bool:
            return (await state(zk, "t", 0))[0] not in (-1, 2) and 2 not in (
                await state(zk, "t", 2)
            )[2]

        await wait_for(moved)
        await cl.settle(c)
        leader, epoch, isr, _ce, _v = await state(zk, "t", 0)
        assert leader == 1 and 2 not in isr and epoch >= 1
        assert (await state(zk, "t", 2))[:3] == (1, 1, [1, 3])
        assert (await state(zk, "t", 1))[:3] == (2, 0, [2, 3, 1])  # its other dir is fine
        assert c.ctx.replicas_on_offline_dirs == {2: offline}
        assert zk.log_dir_events == {}
        # the notification made the controller ask broker 2 about all its replicas
        asked = {
            p.partition_index
            for r in cl.brokers[2].of("LeaderAndIsr")[before:]
            for t in r.topic_states
            for p in t.partition_states
        }
        assert asked == {0, 1, 2}
        # a preferred election does not hand t-0 back to the offline replica
        await c.elect_preferred([TopicPartition("t", 0)])
        assert (await state(zk, "t", 0))[0] == 1
        # UpdateMetadata names the offline replica (the latest state of each partition)
        offline_replicas: dict[int, list[int]] = {}
        for um in cl.brokers[3].of("UpdateMetadata"):
            for t in um.topic_states:
                for p in t.partition_states:
                    offline_replicas[p.partition_index] = list(p.offline_replicas)
        assert offline_replicas == {0: [2], 1: [], 2: [2]}
    finally:
        await cl.stop()


def test_the_controller_moves_the_replicas_of_an_offline_log_dir() -> None:
    async def fake_zk() -> Any:
        return FakeZk()

    run(fake_zk, _scenario)
