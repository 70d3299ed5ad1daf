"""Finalized features (KIP-584) as Kafka 4.3.1 defines them: ``metadata.version`` levels
(Kafka's ``MetadataVersion``) with what each level selects, and the other features
(Kafka's ``Feature``: ``kraft.version``, ``transaction.version``, ``group.version``,
``eligible.leader.replicas.version``, ``share.version``, ``streams.version``) with their
levels, the metadata.version that bootstraps each level and their dependencies.

Facts from Kafka 4.3.1's ``server-common`` jar (``MetadataVersion.values()``,
``Feature.values()``, ``kafka-features version-mapping``); the test
``tests/interop/test_kraft_features_vs_kafka.py`` compares every row with Kafka's classes.

Immutable tables, pure functions: thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "FEATURES",
    "KRAFT_VERSION",
    "LATEST_PRODUCTION",
    "LATEST_TESTING",
    "METADATA_VERSION",
    "MINIMUM_VERSION",
    "PRODUCTION_FEATURES",
    "Feature",
    "FeatureLevel",
    "FeatureVersionError",
    "MetadataVersion",
    "metadata_version",
]

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"


class FeatureVersionError(ValueError):
    """A feature level that does not exist or whose dependencies are not met (Kafka's
    ``IllegalArgumentException`` text)."""


@dataclass(frozen=True, slots=True)
class MetadataVersion:
    """One ``metadata.version`` level (Kafka's ``MetadataVersion`` enum constant); the
    properties are the choices Kafka makes from it."""

    level: int
    version: str  # "4.3-IV0"
    did_metadata_change: bool
    production: bool = True

    @property
    def release(self) -> str:
        """``shortVersion``: "4.3"."""
        return self.version.split("-", 1)[0]

    def __str__(self) -> str:
        return self.version

    def at_least(self, level: int) -> bool:
        return self.level >= level

    # what the level turns on (thresholds: the first level that has it)
    @property
    def is_scram_supported(self) -> bool:
        return self.level >= 11  # 3.5-IV2

    @property
    def is_leader_epoch_bump_required_on_isr_shrink(self) -> bool:
        return self.level < 12  # before 3.6-IV0

    @property
    def is_metadata_transaction_supported(self) -> bool:
        return self.level >= 13  # 3.6-IV1

    @property
    def is_delegation_token_supported(self) -> bool:
        return self.level >= 14  # 3.6-IV2

    @property
    def is_controller_registration_supported(self) -> bool:
        return self.level >= 15  # 3.7-IV0

    @property
    def is_directory_assignment_supported(self) -> bool:
        return self.level >= 17  # 3.7-IV2

    @property
    def is_elr_supported(self) -> bool:
        return self.level >= 23  # 4.0-IV1

    @property
    def is_cordoned_log_dirs_supported(self) -> bool:
        return self.level >= 30  # 4.3-IV0

    @property
    def register_broker_record_version(self) -> int:
        if self.is_cordoned_log_dirs_supported:
            return 4
        if self.is_directory_assignment_supported:
            return 3
        return 2 if self.level >= 8 else 1

    @property
    def register_controller_record_version(self) -> int:
        if not self.is_controller_registration_supported:
            raise FeatureVersionError(
                f"Controller registration is not supported in MetadataVersion {self}"
            )
        return 0

    @property
    def partition_record_version(self) -> int:
        if self.is_elr_supported:
            return 2
        return 1 if self.is_directory_assignment_supported else 0

    @property
    def partition_change_record_version(self) -> int:
        return self.partition_record_version

    @property
    def broker_registration_change_record_version(self) -> int:
        """BrokerRegistrationChangeRecord: v3 carries CordonedLogDirs, v2 LogDirs, v1
        InControlledShutdown."""
        if self.is_cordoned_log_dirs_supported:
            return 3
        return 2 if self.is_directory_assignment_supported else 1

    @property
    def fetch_request_version(self) -> int:
        for level, version in ((27, 18), (21, 17), (19, 16), (10, 15), (9, 14)):
            if self.level >= level:
                return version
        return 13

    @property
    def list_offset_request_version(self) -> int:
        for level, version in ((29, 11), (25, 10), (21, 9), (9, 8)):
            if self.level >= level:
                return version
        return 7


_LEVELS: tuple[tuple[int, str, bool], ...] = (
    (7, "3.3-IV3", True),
    (8, "3.4-IV0", True),
    (9, "3.5-IV0", False),
    (10, "3.5-IV1", False),
    (11, "3.5-IV2", True),
    (12, "3.6-IV0", False),
    (13, "3.6-IV1", True),
    (14, "3.6-IV2", True),
    (15, "3.7-IV0", True),
    (16, "3.7-IV1", False),
    (17, "3.7-IV2", True),
    (18, "3.7-IV3", False),
    (19, "3.7-IV4", False),
    (20, "3.8-IV0", False),
    (21, "3.9-IV0", False),
    (22, "4.0-IV0", False),
    (23, "4.0-IV1", True),
    (24, "4.0-IV2", False),
    (25, "4.0-IV3", False),
    (26, "4.1-IV0", False),
    (27, "4.1-IV1", False),
    (28, "4.2-IV0", False),
    (29, "4.2-IV1", False),
    (30, "4.3-IV0", True),
    (31, "4.4-IV0", False),
)

METADATA_VERSIONS: dict[int, MetadataVersion] = {
    level: MetadataVersion(level, name, changed, production=level <= 30)
    for level, name, changed in _LEVELS
}
"""Every ``metadata.version`` by feature level."""

MINIMUM_VERSION = METADATA_VERSIONS[7]
LATEST_PRODUCTION = METADATA_VERSIONS[30]
LATEST_TESTING = METADATA_VERSIONS[31]


def metadata_version(level: int) -> MetadataVersion:
    """``MetadataVersion.fromFeatureLevel``, with Kafka's message."""
    mv = METADATA_VERSIONS.get(level)
    if mv is None:
        raise FeatureVersionError(
            f"No MetadataVersion with feature level {level}. Valid feature levels are from "
            f"{MINIMUM_VERSION.level} to {LATEST_TESTING.level}."
        )
    return mv


def metadata_version_from_string(text: str, *, unstable: bool = False) -> MetadataVersion:
    """``MetadataVersion.fromVersionString``: "4.3-IV0", or a release ("4.3": its latest
    level); levels not yet production only with ``unstable`` (Kafka's
    ``unstable.feature.versions.enable``). Kafka's message names the levels it would take."""
    candidates = [mv for mv in METADATA_VERSIONS.values() if unstable or mv.production]
    for mv in reversed(candidates):
        if text in (mv.version, mv.release):
            return mv
    supported = ", ".join(mv.version for mv in candidates)
    raise FeatureVersionError(
        f"Unknown metadata.version '{text}'. Supported metadata.version are: {supported}"
    )


def checks_metadata_changed(source: MetadataVersion, target: MetadataVersion) -> bool:
    """``MetadataVersion.checkIfMetadataChanged``: a level strictly above ``target``
    and at most ``source`` changed the metadata format (a downgrade would lose it)."""
    low, high = sorted((source.level, target.level))
    return any(METADATA_VERSIONS[level].did_metadata_change for level in range(low + 1, high + 1))


@dataclass(frozen=True, slots=True)
class FeatureLevel:
    """One level of a feature (Kafka's ``FeatureVersion``): the metadata.version that
    bootstraps it by default and the levels of other features it needs."""

    level: int
    bootstrap_metadata_version: int
    dependencies: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Feature:
    """A finalized feature other than ``metadata.version`` (Kafka's ``Feature``)."""

    name: str
    levels: tuple[FeatureLevel, ...]
    latest_production: int
    latest_testing: int
    production: bool = True

    @property
    def minimum_production(self) -> int:
        return self.levels[0].level

    def level(self, level: int) -> FeatureLevel:
        """``fromFeatureLevel``, with Kafka's message."""
        for candidate in self.levels:
            if candidate.level == level:
                return candidate
        raise FeatureVersionError(f"No feature:{self.name} with feature level {level}")

    def default_level(self, mv: MetadataVersion) -> int:
        """``defaultLevel``: the last level, in order, whose bootstrap metadata.version
        is at most ``mv``."""
        chosen = 0
        for candidate in self.levels:
            if candidate.bootstrap_metadata_version > mv.level:
                break
            chosen = candidate.level
        return chosen

    def max_level(self, unstable: bool = False) -> int:
        return self.latest_testing if unstable else self.latest_production


def validate_dependencies(name: str, level: FeatureLevel, finalized: Mapping[str, int]) -> None:
    """``Feature.validateVersion``: ``FeatureVersionError`` with Kafka's message when a
    level's dependency is not finalized at least at its level (a level above 0 needs a
    metadata.version at all)."""
    mv = finalized.get(METADATA_VERSION)
    if level.level >= 1 and (mv is None or mv < MINIMUM_VERSION.level):
        raise FeatureVersionError(
            f"{name} could not be set to {level.level} because it depends on "
            f"metadata.version={MINIMUM_VERSION.level} ({MINIMUM_VERSION})"
        )
    for dependency, needed in level.dependencies.items():
        have = finalized.get(dependency)
        if have is None or have < needed:
            raise FeatureVersionError(
                f"{name} could not be set to {level.level} because it depends on "
                f"{dependency} level {needed}"
            )


def _levels(*rows: tuple[int, int] | tuple[int, int, dict[str, int]]) -> tuple[FeatureLevel, ...]:
    return tuple(FeatureLevel(*row) for row in rows)


FEATURES: dict[str, Feature] = {
    feature.name: feature
    for feature in (
        Feature(KRAFT_VERSION, _levels((0, 7), (1, 21)), 1, 1),
        Feature(TRANSACTION_VERSION, _levels((0, 7), (1, 24), (2, 24)), 2, 2),
        Feature(GROUP_VERSION, _levels((0, 7), (1, 22)), 1, 1),
        Feature(
            ELIGIBLE_LEADER_REPLICAS_VERSION,
            _levels((0, 7), (1, 26, {METADATA_VERSION: 23})),
            1,
            1,
        ),
        Feature(SHARE_VERSION, _levels((0, 7), (1, 28)), 1, 1),
        Feature(STREAMS_VERSION, _levels((0, 7), (1, 29)), 1, 1),
    )
}
"""Kafka's production features other than ``metadata.version``, in Kafka's order."""

PRODUCTION_FEATURES: tuple[str, ...] = tuple(FEATURES)


def default_feature_levels(mv: MetadataVersion) -> dict[str, int]:
    """What ``kafka-storage format --release-version`` finalizes for ``mv``: the
    metadata.version and every feature's default level (``kafka-features
    version-mapping``)."""
    levels = {METADATA_VERSION: mv.level}
    for name, feature in FEATURES.items():
        levels[name] = feature.default_level(mv)
    return levels


def supported_range(name: str, unstable: bool = False) -> tuple[int, int]:
    """The levels this node supports of ``name`` (its ``SupportedFeatureKey``):
    metadata.version from the minimum to the latest production (testing with
    ``unstable.feature.versions.enable``)."""
    if name == METADATA_VERSION:
        latest = LATEST_TESTING if unstable else LATEST_PRODUCTION
        return MINIMUM_VERSION.level, latest.level
    feature = FEATURES[name]
    return feature.minimum_production, feature.max_level(unstable)
