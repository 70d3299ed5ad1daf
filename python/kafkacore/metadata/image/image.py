"""The metadata image and its delta (Kafka's ``MetadataImage``, ``MetadataDelta``,
``MetadataProvenance`` and ``ProducerIdsImage``).

A :class:`MetadataImage` is the whole cluster metadata at one offset of
``__cluster_metadata``: features, cluster, topics, configs, client quotas, producer ids,
ACLs, SCRAM credentials and delegation tokens. It is immutable: readers may hold it as
long as they like and never see a half-applied change. A :class:`MetadataDelta` replays
records one by one on top of an image (each part's delta created on first use) and
:meth:`MetadataDelta.apply` makes the next image; the delta itself says what changed,
which is what publishers act on (CONVENTIONS 26).

:meth:`MetadataImage.records` writes the image back as records (a snapshot's content,
Kafka's ``MetadataImage.write`` order: features first, so the metadata.version comes
first); replaying them into an empty image gives an equal image.

Immutable images; a delta is built and applied by one thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkacore.metadata.image.cluster import ClusterDelta, ClusterImage, MetadataReplayError
from kafkacore.metadata.image.configs import (
    ClientQuotasDelta,
    ClientQuotasImage,
    ConfigurationsDelta,
    ConfigurationsImage,
)
from kafkacore.metadata.image.features import FeaturesDelta, FeaturesImage
from kafkacore.metadata.image.security import (
    AclsDelta,
    AclsImage,
    DelegationTokenDelta,
    DelegationTokenImage,
    ScramDelta,
    ScramImage,
)
from kafkacore.metadata.image.topics import TopicsDelta, TopicsImage
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.metadata.versions import MetadataVersion

__all__ = [
    "EMPTY_IMAGE",
    "MetadataDelta",
    "MetadataImage",
    "MetadataProvenance",
    "ProducerIdsImage",
    "producer_ids_record",
]

T = MetadataRecordType
_PRODUCER_IDS: Any = RECORDS[T.PRODUCER_IDS_RECORD].cls


@dataclass(frozen=True, slots=True)
class MetadataProvenance:
    """Where an image comes from: the offset and epoch of the last record it contains,
    and that record's batch append time (Kafka's ``MetadataProvenance``)."""

    last_offset: int = -1
    last_epoch: int = -1
    last_log_time_ms: int = -1


def producer_ids_record(
    next_producer_id: int, broker_id: int = -1, broker_epoch: int = -1
) -> MetadataRecord:
    """A ProducerIdsRecord (version 0)."""
    return MetadataRecord(
        T.PRODUCER_IDS_RECORD,
        0,
        _PRODUCER_IDS(
            broker_id=broker_id, broker_epoch=broker_epoch, next_producer_id=next_producer_id
        ),
    )


@dataclass(frozen=True, slots=True)
class ProducerIdsImage:
    """The next producer id the controller hands out; -1 before any was."""

    next_producer_id: int = -1

    def is_empty(self) -> bool:
        return self.next_producer_id == -1

    def records(self) -> list[MetadataRecord]:
        return [] if self.next_producer_id < 0 else [producer_ids_record(self.next_producer_id)]


@dataclass(frozen=True, slots=True)
class MetadataImage:
    """The cluster metadata at :attr:`provenance` (see the module docstring)."""

    provenance: MetadataProvenance = field(default_factory=MetadataProvenance)
    features: FeaturesImage = field(default_factory=FeaturesImage)
    cluster: ClusterImage = field(default_factory=ClusterImage)
    topics: TopicsImage = field(default_factory=TopicsImage)
    configs: ConfigurationsImage = field(default_factory=ConfigurationsImage)
    client_quotas: ClientQuotasImage = field(default_factory=ClientQuotasImage)
    producer_ids: ProducerIdsImage = field(default_factory=ProducerIdsImage)
    acls: AclsImage = field(default_factory=AclsImage)
    scram: ScramImage = field(default_factory=ScramImage)
    delegation_tokens: DelegationTokenImage = field(default_factory=DelegationTokenImage)

    @property
    def offset(self) -> int:
        return self.provenance.last_offset

    def is_empty(self) -> bool:
        return (
            self.features.is_empty()
            and self.cluster.is_empty()
            and self.topics.is_empty()
            and self.configs.is_empty()
            and self.client_quotas.is_empty()
            and self.producer_ids.is_empty()
            and self.acls.is_empty()
            and self.scram.is_empty()
            and self.delegation_tokens.is_empty()
        )

    def same_content(self, other: MetadataImage) -> bool:
        """Equal but for the provenance (a snapshot's image against the log's)."""
        return (
            self.features,
            self.cluster,
            self.topics,
            self.configs,
            self.client_quotas,
            self.producer_ids,
            self.acls,
            self.scram,
            self.delegation_tokens,
        ) == (
            other.features,
            other.cluster,
            other.topics,
            other.configs,
            other.client_quotas,
            other.producer_ids,
            other.acls,
            other.scram,
            other.delegation_tokens,
        )

    def records(self, mv: MetadataVersion | None = None) -> list[MetadataRecord]:
        """The image as records, at ``mv`` (default: the image's own metadata.version),
        in Kafka's order. Parts ``mv`` cannot express are refused (Kafka's
        ``handleLoss``): ``MetadataReplayError``."""
        mv = mv or self.features.metadata_version_or_raise()
        if not mv.is_scram_supported and not self.scram.is_empty():
            raise MetadataReplayError(f"Metadata has been lost because {mv} has no SCRAM")
        if not mv.is_delegation_token_supported and not self.delegation_tokens.is_empty():
            raise MetadataReplayError(f"Metadata has been lost because {mv} has no tokens")
        return [
            *self.features.records(mv),
            *self.cluster.records(mv),
            *self.topics.records(mv, self.features.is_elr_enabled),
            *self.configs.records(),
            *self.client_quotas.records(),
            *self.producer_ids.records(),
            *self.acls.records(),
            *self.scram.records(),
            *self.delegation_tokens.records(),
        ]


EMPTY_IMAGE = MetadataImage()


class MetadataDelta:
    """Records replayed on top of :attr:`image` (see the module docstring). Each part's
    delta is ``None`` until a record touches it."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.features_delta: FeaturesDelta | None = None
        self.cluster_delta: ClusterDelta | None = None
        self.topics_delta: TopicsDelta | None = None
        self.configs_delta: ConfigurationsDelta | None = None
        self.client_quotas_delta: ClientQuotasDelta | None = None
        self.producer_ids_delta: int | None = None  # the next producer id
        self.acls_delta: AclsDelta | None = None
        self.scram_delta: ScramDelta | None = None
        self.delegation_tokens_delta: DelegationTokenDelta | None = None

    # -- each part's delta, made on first use ------------------------------------------

    def features(self) -> FeaturesDelta:
        if self.features_delta is None:
            self.features_delta = FeaturesDelta(self.image.features)
        return self.features_delta

    def cluster(self) -> ClusterDelta:
        if self.cluster_delta is None:
            self.cluster_delta = ClusterDelta(self.image.cluster)
        return self.cluster_delta

    def topics(self) -> TopicsDelta:
        if self.topics_delta is None:
            self.topics_delta = TopicsDelta(self.image.topics)
        return self.topics_delta

    def configs(self) -> ConfigurationsDelta:
        if self.configs_delta is None:
            self.configs_delta = ConfigurationsDelta(self.image.configs)
        return self.configs_delta

    def client_quotas(self) -> ClientQuotasDelta:
        if self.client_quotas_delta is None:
            self.client_quotas_delta = ClientQuotasDelta(self.image.client_quotas)
        return self.client_quotas_delta

    def acls(self) -> AclsDelta:
        if self.acls_delta is None:
            self.acls_delta = AclsDelta(self.image.acls)
        return self.acls_delta

    def scram(self) -> ScramDelta:
        if self.scram_delta is None:
            self.scram_delta = ScramDelta(self.image.scram)
        return self.scram_delta

    def delegation_tokens(self) -> DelegationTokenDelta:
        if self.delegation_tokens_delta is None:
            self.delegation_tokens_delta = DelegationTokenDelta(self.image.delegation_tokens)
        return self.delegation_tokens_delta

    @property
    def metadata_version_changed(self) -> MetadataVersion | None:
        delta = self.features_delta
        return None if delta is None else delta.metadata_version_change

    # -- replay ------------------------------------------------------------------------

    def replay(self, record: MetadataRecord) -> None:
        """Apply one record (Kafka's ``MetadataDelta.replay``). A record that cannot
        apply raises :class:`MetadataReplayError`; metadata transaction markers are the
        loader's (:mod:`kafkacore.metadata.image.loader`), not the delta's."""
        value = record.value
        match record.type:
            case T.REGISTER_BROKER_RECORD:
                self.cluster().replay_register_broker(value)
            case T.UNREGISTER_BROKER_RECORD:
                self.cluster().replay_unregister_broker(value)
            case T.TOPIC_RECORD:
                self.topics().replay_topic(value)
            case T.PARTITION_RECORD:
                self.topics().replay_partition(value)
            case T.CONFIG_RECORD:
                self.configs().replay(value)
            case T.PARTITION_CHANGE_RECORD:
                self.topics().replay_partition_change(value)
            case T.FENCE_BROKER_RECORD:
                self.cluster().replay_fence_broker(value)
            case T.UNFENCE_BROKER_RECORD:
                self.cluster().replay_unfence_broker(value)
            case T.REMOVE_TOPIC_RECORD:
                name = self.topics().replay_remove_topic(value)
                self.configs().replay_remove_topic(name)
            case T.DELEGATION_TOKEN_RECORD:
                self.delegation_tokens().replay(value)
            case T.USER_SCRAM_CREDENTIAL_RECORD:
                self.scram().replay(value)
            case T.FEATURE_LEVEL_RECORD:
                self.features().replay(value)
            case T.CLIENT_QUOTA_RECORD:
                self.client_quotas().replay(value)
            case T.PRODUCER_IDS_RECORD:
                self.producer_ids_delta = value.next_producer_id
            case T.BROKER_REGISTRATION_CHANGE_RECORD:
                self.cluster().replay_broker_registration_change(value)
            case T.ACCESS_CONTROL_ENTRY_RECORD:
                self.acls().replay(value)
            case T.REMOVE_ACCESS_CONTROL_ENTRY_RECORD:
                self.acls().replay_remove(value)
            case T.REMOVE_USER_SCRAM_CREDENTIAL_RECORD:
                self.scram().replay_remove(value)
            case T.REMOVE_DELEGATION_TOKEN_RECORD:
                self.delegation_tokens().replay_remove(value)
            case T.REGISTER_CONTROLLER_RECORD:
                self.cluster().replay_register_controller(value)
            case T.CLEAR_ELR_RECORD:
                self.topics().replay_clear_elr(value)
            case T.NO_OP_RECORD | T.ZK_MIGRATION_STATE_RECORD:
                pass  # nothing to apply (Kafka 4 ignores the ZooKeeper migration state)
            case _:
                raise MetadataReplayError(f"Unknown metadata record type {record.type.name}")

    def finish_snapshot(self) -> None:
        """After a snapshot's records: whatever the image had and the snapshot did not
        mention is removed (Kafka's ``finishSnapshot``)."""
        self.features().finish_snapshot()
        self.cluster().finish_snapshot()
        self.topics().finish_snapshot()
        self.configs().finish_snapshot()
        self.client_quotas().finish_snapshot()
        self.acls().finish_snapshot()
        self.scram().finish_snapshot()
        self.delegation_tokens().finish_snapshot()

    def apply(self, provenance: MetadataProvenance) -> MetadataImage:
        image = self.image
        return MetadataImage(
            provenance=provenance,
            features=image.features if self.features_delta is None else self.features_delta.apply(),
            cluster=image.cluster if self.cluster_delta is None else self.cluster_delta.apply(),
            topics=image.topics if self.topics_delta is None else self.topics_delta.apply(),
            configs=image.configs if self.configs_delta is None else self.configs_delta.apply(),
            client_quotas=(
                image.client_quotas
                if self.client_quotas_delta is None
                else self.client_quotas_delta.apply()
            ),
            producer_ids=(
                image.producer_ids
                if self.producer_ids_delta is None
                else ProducerIdsImage(self.producer_ids_delta)
            ),
            acls=image.acls if self.acls_delta is None else self.acls_delta.apply(),
            scram=image.scram if self.scram_delta is None else self.scram_delta.apply(),
            delegation_tokens=(
                image.delegation_tokens
                if self.delegation_tokens_delta is None
                else self.delegation_tokens_delta.apply()
            ),
        )
