"""protocol/requests.py flattens the versions of LeaderAndIsr, UpdateMetadata and
StopReplica: the same partitions, sent at any version and decoded, come out the same."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from kafkacore.protocol.messages import leader_and_isr, stop_replica, update_metadata
from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrRequest
from kafkacore.protocol.messages.stop_replica import StopReplicaRequest
from kafkacore.protocol.messages.update_metadata import UpdateMetadataRequest
from kafkacore.protocol.requests import (
    NO_EPOCH,
    StopReplicaPartition,
    leader_and_isr_partition_states,
    stop_replica_partitions,
    update_metadata_partition_states,
)

# (topic, partition, leader, leader epoch): topics in order, partitions unique per topic
_partitions = st.lists(
    st.tuples(
        st.sampled_from(["orders", "payments", "__consumer_offsets"]),
        st.integers(0, 50),
        st.integers(-2, 5),
        st.integers(0, 1000),
    ),
    max_size=12,
    unique_by=lambda p: (p[0], p[1]),
).map(lambda ps: sorted(ps, key=lambda p: p[0]))
_TOPIC_IDS = {
    "orders": uuid.UUID(int=7),
    "payments": uuid.UUID(int=0),
    "__consumer_offsets": uuid.UUID(int=9),
}


def _grouped(partitions: list[tuple[str, int, int, int]]) -> dict[str, list[tuple[int, int, int]]]:
    topics: dict[str, list[tuple[int, int, int]]] = {}
    for topic, partition, leader, epoch in partitions:
        topics.setdefault(topic, []).append((partition, leader, epoch))
    return topics


def _expected_topic_id(topic: str, version: int, since: int) -> uuid.UUID | None:
    topic_id = _TOPIC_IDS[topic]
    return topic_id if version >= since and topic_id.int != 0 else None


@given(_partitions, st.integers(0, 7))
def test_leader_and_isr_states_are_the_same_at_every_version(
    partitions: list[tuple[str, int, int, int]], version: int
) -> None:
    cls = LeaderAndIsrRequest
    state = cls.LeaderAndIsrPartitionState
    if version < 2:
        request = cls(
            ungrouped_partition_states=[
                state(
                    topic_name=t,
                    partition_index=p,
                    leader=leader,
                    leader_epoch=e,
                    partition_epoch=e,
                )
                for t, p, leader, e in partitions
            ]
        )
    else:
        request = cls(
            topic_states=[
                cls.LeaderAndIsrTopicState(
                    topic_name=t,
                    topic_id=_TOPIC_IDS[t],
                    partition_states=[
                        state(partition_index=p, leader=leader, leader_epoch=e, partition_epoch=e)
                        for p, leader, e in ps
                    ],
                )
                for t, ps in _grouped(partitions).items()
            ]
        )
    schema = leader_and_isr.REQUEST
    decoded = schema.decode(schema.encode(request, version), version)
    flat = [
        (p.topic, p.topic_id, p.state.partition_index, p.state.leader, p.state.partition_epoch)
        for p in leader_and_isr_partition_states(decoded)
    ]
    assert flat == [
        (t, _expected_topic_id(t, version, 5), p, leader, e) for t, p, leader, e in partitions
    ]


@given(_partitions, st.integers(0, 8))
def test_update_metadata_states_are_the_same_at_every_version(
    partitions: list[tuple[str, int, int, int]], version: int
) -> None:
    cls = UpdateMetadataRequest
    state = cls.UpdateMetadataPartitionState
    if version < 5:
        request = cls(
            ungrouped_partition_states=[
                state(topic_name=t, partition_index=p, leader=leader, zk_version=e)
                for t, p, leader, e in partitions
            ]
        )
    else:
        request = cls(
            topic_states=[
                cls.UpdateMetadataTopicState(
                    topic_name=t,
                    topic_id=_TOPIC_IDS[t],
                    partition_states=[
                        state(partition_index=p, leader=leader, zk_version=e) for p, leader, e in ps
                    ],
                )
                for t, ps in _grouped(partitions).items()
            ]
        )
    schema = update_metadata.REQUEST
    decoded = schema.decode(schema.encode(request, version), version)
    flat = [
        (p.topic, p.topic_id, p.state.partition_index, p.state.leader, p.state.zk_version)
        for p in update_metadata_partition_states(decoded)
    ]
    assert flat == [
        (t, _expected_topic_id(t, version, 7), p, leader, e) for t, p, leader, e in partitions
    ]


@given(_partitions, st.integers(0, 4), st.booleans())
def test_stop_replica_partitions_are_the_same_at_every_version(
    partitions: list[tuple[str, int, int, int]], version: int, delete: bool
) -> None:
    cls = StopReplicaRequest
    if version == 0:
        request = cls(
            delete_partitions=delete,
            ungrouped_partitions=[
                cls.StopReplicaPartitionV0(topic_name=t, partition_index=p)
                for t, p, _l, _e in partitions
            ],
        )
    elif version < 3:
        request = cls(
            delete_partitions=delete,
            topics=[
                cls.StopReplicaTopicV1(name=t, partition_indexes=[p for p, _l, _e in ps])
                for t, ps in _grouped(partitions).items()
            ],
        )
    else:
        request = cls(
            topic_states=[
                cls.StopReplicaTopicState(
                    topic_name=t,
                    partition_states=[
                        cls.StopReplicaPartitionState(
                            partition_index=p, leader_epoch=e, delete_partition=delete
                        )
                        for p, _l, e in ps
                    ],
                )
                for t, ps in _grouped(partitions).items()
            ]
        )
    schema = stop_replica.REQUEST
    decoded = schema.decode(schema.encode(request, version), version)
    assert list(stop_replica_partitions(decoded)) == [
        StopReplicaPartition(t, p, e if version >= 3 else NO_EPOCH, delete)
        for t, p, _l, e in partitions
    ]
