"""``__consumer_offsets``: the group coordinator's topic. Its records are Kafka's
(OffsetCommitKey v1 + OffsetCommitValue v4, or v1 with an expire timestamp;
GroupMetadataKey v2 + GroupMetadataValue v3; null values as tombstones:
:mod:`kafkacore.coordinator.records`), and a group's partition is
``Utils.abs(groupId.hashCode()) % partitions``.

The topic is created on the first FindCoordinator for a group (a single node: on its first
write too), compacted, with ``offsets.topic.num.partitions`` partitions; in a cluster with
``offsets.topic.replication.factor`` replicas assigned over the live brokers (Kafka's
``AdminUtils``), and with fewer live brokers the creation fails and FindCoordinator keeps
answering COORDINATOR_NOT_AVAILABLE."""

from __future__ import annotations

from kafkacore.config import BrokerConfig
from kafkacore.coordinator import records as recs
from kafkacore.coordinator.runtime import CoordinatorTopic, PartitionWriter

__all__ = ["OFFSETS_TOPIC", "offsets_topic"]

OFFSETS_TOPIC = "__consumer_offsets"


def offsets_topic(
    writer: PartitionWriter, config: BrokerConfig, cluster_mode: bool
) -> CoordinatorTopic:
    """``__consumer_offsets`` as ``config`` defines it, reached through ``writer``."""
    return CoordinatorTopic(
        OFFSETS_TOPIC,
        writer,
        num_partitions=config.offsets_topic_num_partitions,
        replication_factor=config.offsets_topic_replication_factor,
        configs={
            "cleanup.policy": "compact",
            "segment.bytes": str(config.offsets_topic_segment_bytes),
            "compression.type": "producer",
        },
        partitioner=recs.partition_for_group,
        cluster_mode=cluster_mode,
    )
