"""KRaft's metadata image and deltas (Kafka's ``org.apache.kafka.image``): the records of
``__cluster_metadata`` replayed one by one into an immutable :class:`MetadataImage`,
each :class:`MetadataDelta` saying what changed (CONVENTIONS 26).

Why here, in ``metadata/``: the image is the KRaft form of the cluster metadata the other
modules of this package hold for the single node and ZooKeeper modes, and both users of
it sit above: the quorum controller (``kafkacore.controller.kraft``) keeps its state as
images, and a KRaft broker's metadata loader publishes deltas to its replica manager,
cache and coordinators. Kafka too keeps the image beside the records, in its
``kafka-metadata`` jar.

* :mod:`~kafkacore.metadata.image.features` - finalized features;
* :mod:`~kafkacore.metadata.image.cluster` - brokers and controllers;
* :mod:`~kafkacore.metadata.image.topics` - topics and partitions (ELR included), and
  what a delta means for one broker (:class:`LocalReplicaChanges`);
* :mod:`~kafkacore.metadata.image.configs` - dynamic configs and client quotas;
* :mod:`~kafkacore.metadata.image.security` - ACLs, SCRAM credentials, delegation tokens;
* :mod:`~kafkacore.metadata.image.image` - the image, the delta, provenance, producer ids;
* :mod:`~kafkacore.metadata.image.loader` - committed batches and snapshots in,
  publications out.
"""

from __future__ import annotations

from kafkacore.metadata.image.cluster import (
    BrokerRegistration,
    ClusterDelta,
    ClusterImage,
    ControllerRegistration,
    Endpoint,
    MetadataReplayError,
)
from kafkacore.metadata.image.configs import (
    ClientQuotaEntity,
    ClientQuotasDelta,
    ClientQuotasImage,
    ConfigResource,
    ConfigResourceType,
    ConfigurationsDelta,
    ConfigurationsImage,
)
from kafkacore.metadata.image.features import FeaturesDelta, FeaturesImage
from kafkacore.metadata.image.image import (
    EMPTY_IMAGE,
    MetadataDelta,
    MetadataImage,
    MetadataProvenance,
    ProducerIdsImage,
)
from kafkacore.metadata.image.loader import (
    LogDeltaManifest,
    MetadataLoader,
    MetadataPublisher,
    SnapshotManifest,
)
from kafkacore.metadata.image.security import (
    AclsDelta,
    AclsImage,
    DelegationTokenData,
    DelegationTokenDelta,
    DelegationTokenImage,
    ScramCredentialData,
    ScramDelta,
    ScramImage,
)
from kafkacore.metadata.image.topics import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    LocalReplicaChanges,
    PartitionInfo,
    PartitionRegistration,
    TopicDelta,
    TopicImage,
    TopicsDelta,
    TopicsImage,
)

__all__ = [
    "EMPTY_IMAGE",
    "NO_LEADER",
    "NO_LEADER_CHANGE",
    "AclsDelta",
    "AclsImage",
    "BrokerRegistration",
    "ClientQuotaEntity",
    "ClientQuotasDelta",
    "ClientQuotasImage",
    "ClusterDelta",
    "ClusterImage",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigurationsDelta",
    "ConfigurationsImage",
    "ControllerRegistration",
    "DelegationTokenData",
    "DelegationTokenDelta",
    "DelegationTokenImage",
    "Endpoint",
    "FeaturesDelta",
    "FeaturesImage",
    "LocalReplicaChanges",
    "LogDeltaManifest",
    "MetadataDelta",
    "MetadataImage",
    "MetadataLoader",
    "MetadataProvenance",
    "MetadataPublisher",
    "MetadataReplayError",
    "PartitionInfo",
    "PartitionRegistration",
    "ProducerIdsImage",
    "ScramCredentialData",
    "ScramDelta",
    "ScramImage",
    "SnapshotManifest",
    "TopicDelta",
    "TopicImage",
    "TopicsDelta",
    "TopicsImage",
]
