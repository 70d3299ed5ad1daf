"""A KRaft broker's features for ApiVersions (KIP-584; Kafka's ``FinalizedFeatures`` from
the metadata image and the node's ``SupportedFeatures``): the levels kafkacore supports
(:data:`~kafkacore.server.kraft.lifecycle.SUPPORTED_FEATURES`, also what it registers
with) and the finalized levels of the latest published image's FeatureLevelRecords as
:class:`kafkacore.features.FinalizedFeatures`, whose epoch is the image's offset (so it
never goes back).

Thread-safety: reads one image reference.
"""

from __future__ import annotations

from kafkacore.features import FinalizedFeatures
from kafkacore.server.kraft.lifecycle import SUPPORTED_FEATURES
from kafkacore.server.kraft.store import KRaftMetadataStore

__all__ = ["ImageFeatures"]


class ImageFeatures:
    """The :class:`~kafkacore.server.services.FeatureSource` of a KRaft broker."""

    def __init__(self, store: KRaftMetadataStore) -> None:
        self.store = store

    def supported_features(self) -> dict[str, tuple[int, int]]:
        return dict(SUPPORTED_FEATURES)

    def finalized_features(self) -> FinalizedFeatures:
        """The image's FeatureLevelRecords, at the image's offset as the epoch."""
        return self.store.finalized_features()
