"""Finalized features in the image (Kafka's ``FeaturesImage`` and ``FeaturesDelta``):
``metadata.version`` (absent until the bootstrap records are replayed) and every other
feature's finalized level; a FeatureLevelRecord at level 0 removes a feature.

Immutable values; a delta is built and applied by one thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkacore.metadata.image._changes import apply_changes, remove_unmentioned
from kafkacore.metadata.image.cluster import MetadataReplayError
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.metadata.versions import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    METADATA_VERSION,
    FeatureVersionError,
    MetadataVersion,
    metadata_version,
)

__all__ = ["FeaturesDelta", "FeaturesImage", "feature_level_record"]

_FEATURE_LEVEL: Any = RECORDS[MetadataRecordType.FEATURE_LEVEL_RECORD].cls


def feature_level_record(name: str, level: int) -> MetadataRecord:
    """A FeatureLevelRecord (version 0)."""
    return MetadataRecord(
        MetadataRecordType.FEATURE_LEVEL_RECORD, 0, _FEATURE_LEVEL(name=name, feature_level=level)
    )


@dataclass(frozen=True, slots=True)
class FeaturesImage:
    """``metadata_version`` (None before bootstrap) and the other finalized features."""

    finalized: Mapping[str, int] = field(default_factory=dict)
    metadata_version: MetadataVersion | None = None

    def is_empty(self) -> bool:
        return not self.finalized and self.metadata_version is None

    def metadata_version_or_raise(self) -> MetadataVersion:
        if self.metadata_version is None:
            raise MetadataReplayError("No metadata.version has been finalized")
        return self.metadata_version

    def level(self, name: str) -> int:
        """A feature's finalized level (0 when not finalized; metadata.version's level)."""
        if name == METADATA_VERSION:
            return 0 if self.metadata_version is None else self.metadata_version.level
        return self.finalized.get(name, 0)

    def all_levels(self) -> dict[str, int]:
        """Every finalized level, metadata.version included (ApiVersions'
        ``FinalizedFeatures``)."""
        levels = dict(self.finalized)
        if self.metadata_version is not None:
            levels[METADATA_VERSION] = self.metadata_version.level
        return levels

    @property
    def is_elr_enabled(self) -> bool:
        """Kafka's ``isElrEnabled``: ELR is used once eligible.leader.replicas.version >= 1."""
        return self.finalized.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) >= 1

    def records(self, mv: MetadataVersion) -> list[MetadataRecord]:
        """``write``: metadata.version first, then the others."""
        out = [feature_level_record(METADATA_VERSION, mv.level)]
        out.extend(
            feature_level_record(name, level)
            for name, level in self.finalized.items()
            if name != METADATA_VERSION
        )
        return out


class FeaturesDelta:
    """Changes to the finalized features: per feature its new level or ``None``."""

    def __init__(self, image: FeaturesImage) -> None:
        self.image = image
        self.changes: dict[str, int | None] = {}
        self.metadata_version_change: MetadataVersion | None = None

    def finish_snapshot(self) -> None:
        remove_unmentioned(self.image.finalized, self.changes)

    def replay(self, record: Any) -> None:
        if record.name == METADATA_VERSION:
            try:
                self.metadata_version_change = metadata_version(record.feature_level)
            except FeatureVersionError as exc:
                raise MetadataReplayError(str(exc)) from None
        else:
            self.changes[record.name] = record.feature_level or None

    def apply(self) -> FeaturesImage:
        mv = self.metadata_version_change or self.image.metadata_version
        return FeaturesImage(apply_changes(self.image.finalized, self.changes), mv)
