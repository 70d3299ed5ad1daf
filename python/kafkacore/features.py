"""Finalized features (KIP-584) as Kafka 4.3.1 defines them, and Kafka's rules for
changing them: one home for every mode (the single node's store, ZooKeeper mode's
``/feature``, the KRaft controller's ``FeatureLevelRecord``\\ s), for the broker's
ApiVersions and UpdateFeatures and for ``kafkacore features``.

* **The features.** ``metadata.version`` (:class:`MetadataVersion`, levels 7 = 3.3-IV3 to
  30 = 4.3-IV0 in production, 31 = 4.4-IV0 for testing) and the production features of
  :data:`FEATURES`, in Kafka's order (``Feature.PRODUCTION_FEATURES``): ``kraft.version``,
  ``transaction.version``, ``group.version``, ``eligible.leader.replicas.version``,
  ``share.version``, ``streams.version``; each level with the metadata.version that
  bootstraps it and the levels of other features it needs (``FeatureVersion``).
* **What a node supports** (:func:`supported_features`, Kafka's
  ``BrokerFeatures.defaultSupportedFeatures`` / ``QuorumFeatures.defaultSupportedFeatureMap``):
  metadata.version 7-30 and each feature from its minimum to its latest production level
  (latest testing with ``unstable.feature.versions.enable``).
* **A new cluster** (:func:`default_feature_levels`, what ``kafka-storage format
  --release-version`` finalizes and ``kafka-features version-mapping`` prints): the
  metadata.version of the release and each feature's last level whose bootstrap
  metadata.version it reaches; at Kafka 4.3.1's default release (:data:`LATEST_PRODUCTION`)
  metadata.version 30, kraft.version 1, transaction.version 2, group.version 1,
  eligible.leader.replicas.version 1, share.version 1, streams.version 1.
* **Changing them** (:func:`update_features`, Kafka's ``FeatureControlManager.updateFeatures``):
  every update is checked in turn - a known upgrade type, a level >= 0 that this node, every
  broker and every controller support, no downgrade without a downgrade type and no "downgrade"
  to a newer level, metadata.version downgrades only where no level in between changed the
  metadata format (never UNSAFE), kraft.version never downgraded, each feature's dependencies
  met by the levels proposed - and the first failure fails them all
  (:class:`FeatureUpdateError`: INVALID_UPDATE_VERSION and Kafka's message). A level of 0
  removes the feature.
* **The finalized set** (:class:`FinalizedFeatures`): the levels and the features epoch
  ApiVersions carries (never decreasing; Kafka 4 clients trust the node with the highest).

Facts from Kafka 4.3.1's ``server-common`` and ``metadata`` jars (``MetadataVersion``,
``Feature``, ``QuorumFeatures``, ``FeatureControlManager``); ``tests/test_features.py``
checks the rules and ``tests/interop/test_features_vs_kafka.py`` every table row against
Kafka's classes and every rule against a Kafka 4.3.1 controller.

Immutable tables, pure functions: thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from kafkacore._java import JavaHashMap
from kafkacore.protocol import ErrorCode

__all__ = [
    "ELIGIBLE_LEADER_REPLICAS_VERSION",
    "FEATURES",
    "GROUP_VERSION",
    "KRAFT_VERSION",
    "LATEST_PRODUCTION",
    "LATEST_TESTING",
    "METADATA_VERSION",
    "METADATA_VERSIONS",
    "MINIMUM_VERSION",
    "SHARE_VERSION",
    "STREAMS_VERSION",
    "TRANSACTION_VERSION",
    "Feature",
    "FeatureLevel",
    "FeatureUpdate",
    "FeatureUpdateError",
    "FeatureVersionError",
    "FinalizedFeatures",
    "MetadataVersion",
    "UpgradeType",
    "VersionRange",
    "default_feature_levels",
    "feature",
    "metadata_version",
    "metadata_version_from_string",
    "new_cluster_features",
    "supported_features",
    "update_features",
    "validate_dependencies",
]

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"

_SHORT_MAX = 32767


class FeatureVersionError(ValueError):
    """A level that does not exist, or whose dependencies are not met (Kafka's
    ``IllegalArgumentException``, with its message)."""


# -- metadata.version ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataVersion:
    """One ``metadata.version`` level (a ``MetadataVersion`` constant): ``version`` is its
    name ("4.3-IV0"), ``did_metadata_change`` whether it changed the metadata format (a
    downgrade across it could lose metadata)."""

    level: int
    version: str
    did_metadata_change: bool

    @property
    def release(self) -> str:
        """``shortVersion``: "4.3"."""
        return self.version.split("-", 1)[0]

    @property
    def production(self) -> bool:
        return self.level <= _LATEST_PRODUCTION_LEVEL

    @property
    def is_controller_registration_supported(self) -> bool:
        """3.7-IV0 and later: controllers register their supported features."""
        return self.level >= 15

    def __str__(self) -> str:
        return self.version


_LATEST_PRODUCTION_LEVEL = 30

# (level, name, didMetadataChange), from MetadataVersion.VERSIONS
_METADATA_VERSIONS = (
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
    level: MetadataVersion(level, name, changed) for level, name, changed in _METADATA_VERSIONS
}
"""Every ``metadata.version`` by level, in order."""

MINIMUM_VERSION = METADATA_VERSIONS[7]
LATEST_PRODUCTION = METADATA_VERSIONS[_LATEST_PRODUCTION_LEVEL]
LATEST_TESTING = METADATA_VERSIONS[31]


def metadata_version(level: int) -> MetadataVersion:
    """``MetadataVersion.fromFeatureLevel``: :class:`FeatureVersionError` for a level
    that does not exist."""
    mv = METADATA_VERSIONS.get(level)
    if mv is None:
        raise FeatureVersionError(f"No MetadataVersion with feature level {level}")
    return mv


def metadata_version_from_string(text: str) -> MetadataVersion:
    """``MetadataVersion.fromVersionString``: a name ("4.2-IV1") or a release ("4.2": its
    last level), with Kafka's message when neither."""
    for mv in reversed(METADATA_VERSIONS.values()):
        if text in (mv.version, mv.release):
            return mv
    supported = ", ".join(mv.version for mv in METADATA_VERSIONS.values())
    raise FeatureVersionError(
        f"Unknown metadata.version '{text}'. Supported metadata.version are: {supported}"
    )


def metadata_changed_between(a: MetadataVersion, b: MetadataVersion) -> bool:
    """``MetadataVersion.checkIfMetadataChanged``: some level above the lower of ``a``
    and ``b`` and at most the higher changed the metadata format."""
    low, high = sorted((a.level, b.level))
    return any(METADATA_VERSIONS[level].did_metadata_change for level in range(low + 1, high + 1))


# -- the other features --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FeatureLevel:
    """One level of a feature (Kafka's ``FeatureVersion``): the metadata.version that
    bootstraps it in a new cluster and the levels of other features it needs."""

    level: int
    bootstrap_metadata_version: int
    dependencies: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Feature:
    """A feature other than ``metadata.version`` (Kafka's ``Feature``)."""

    name: str
    levels: tuple[FeatureLevel, ...]
    latest_production: int
    latest_testing: int

    @property
    def minimum_production(self) -> int:
        return self.levels[0].level

    def level(self, level: int) -> FeatureLevel:
        """``fromFeatureLevel``: :class:`FeatureVersionError` with Kafka's message."""
        for candidate in self.levels:
            if candidate.level == level:
                return candidate
        raise FeatureVersionError(f"No feature:{self.name} with feature level {level}")

    def default_level(self, mv: MetadataVersion) -> int:
        """``defaultLevel``: the last level whose bootstrap metadata.version ``mv`` reaches."""
        chosen = 0
        for candidate in self.levels:
            if candidate.bootstrap_metadata_version <= mv.level:
                chosen = candidate.level
        return chosen

    def max_level(self, unstable: bool = False) -> int:
        return self.latest_testing if unstable else self.latest_production


def _levels(*rows: tuple[int, int] | tuple[int, int, dict[str, int]]) -> tuple[FeatureLevel, ...]:
    return tuple(FeatureLevel(*row) for row in rows)


FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
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


def feature(name: str) -> Feature:
    """``Feature.featureFromName``: :class:`FeatureVersionError` ("Feature X not found.")."""
    found = FEATURES.get(name)
    if found is None:
        raise FeatureVersionError(f"Feature {name} not found.")
    return found


def validate_dependencies(name: str, level: int, proposed: Mapping[str, int]) -> None:
    """``Feature.validateVersion``: a level above 0 needs a metadata.version of at least
    the minimum, and each dependency at least its level, in ``proposed`` (every level
    the change would leave); :class:`FeatureVersionError` with Kafka's message."""
    mv = proposed.get(METADATA_VERSION)
    if level >= 1 and (mv is None or mv < MINIMUM_VERSION.level):
        raise FeatureVersionError(
            f"{name} could not be set to {level} because it depends on "
            f"metadata.version={MINIMUM_VERSION.level} ({MINIMUM_VERSION})"
        )
    for dependency, needed in feature(name).level(level).dependencies.items():
        have = proposed.get(dependency)
        if have is None or have < needed:
            raise FeatureVersionError(
                f"{name} could not be set to {level} because it depends on "
                f"{dependency} level {needed}"
            )


# -- what a node supports, what a new cluster finalizes ------------------------------------


@dataclass(frozen=True, slots=True)
class VersionRange:
    """The levels a node supports of one feature (Kafka's ``VersionRange`` /
    ``SupportedVersionRange``); a feature a node does not know is :data:`DISABLED`."""

    min: int
    max: int

    def contains(self, level: int) -> bool:
        return self.min <= level <= self.max

    def __str__(self) -> str:
        return f"{self.min}+" if self.max == _SHORT_MAX else f"{self.min}-{self.max}"


DISABLED = VersionRange(0, 0)
"""The range of a feature a node does not know (Kafka's ``QuorumFeatures.DISABLED``)."""


def supported_features(unstable: bool = False) -> dict[str, VersionRange]:
    """The features this node supports, by name: metadata.version from the minimum to
    the latest production level (latest testing when ``unstable``), and every feature
    whose latest level is above 0 from its minimum (Kafka's
    ``BrokerFeatures.defaultSupportedFeatures``; ``unstable`` is
    ``unstable.feature.versions.enable``)."""
    latest = LATEST_TESTING if unstable else LATEST_PRODUCTION
    out = {METADATA_VERSION: VersionRange(MINIMUM_VERSION.level, latest.level)}
    for f in FEATURES.values():
        if f.max_level(unstable) > 0:
            out[f.name] = VersionRange(f.minimum_production, f.max_level(unstable))
    return out


def default_feature_levels(mv: MetadataVersion = LATEST_PRODUCTION) -> dict[str, int]:
    """The levels a cluster formatted at ``mv`` finalizes: metadata.version, then each
    feature's default (``kafka-features version-mapping --release-version``), in Kafka's
    order; 0 for a feature it leaves off."""
    levels = {METADATA_VERSION: mv.level}
    for f in FEATURES.values():
        levels[f.name] = f.default_level(mv)
    return levels


@dataclass(frozen=True, slots=True)
class FinalizedFeatures:
    """The finalized features of a cluster: ``levels`` by name (metadata.version
    included; a feature at level 0 is absent), and ``epoch``, which grows with every
    change and never goes back (-1: unknown; Kafka's ``FinalizedFeatures``)."""

    levels: Mapping[str, int]
    epoch: int

    def level(self, name: str) -> int:
        """The finalized level of ``name``; 0 when not finalized."""
        return self.levels.get(name, 0)

    @property
    def transaction_version(self) -> int:
        return self.level(TRANSACTION_VERSION)

    @property
    def group_version(self) -> int:
        return self.level(GROUP_VERSION)

    @property
    def share_version(self) -> int:
        return self.level(SHARE_VERSION)

    def with_levels(self, changes: Mapping[str, int]) -> FinalizedFeatures:
        """The features after ``changes`` (a level of 0 removes the feature, except
        metadata.version), at the next epoch."""
        levels = dict(self.levels)
        for name, level in changes.items():
            if level == 0 and name != METADATA_VERSION:
                levels.pop(name, None)
            else:
                levels[name] = level
        return FinalizedFeatures(levels, max(self.epoch, -1) + 1)

    def in_kafka_order(self) -> list[tuple[str, int]]:
        """The levels as a Kafka 4.3.1 broker lists them in ApiVersions (a
        ``java.util.HashMap`` of the features, then metadata.version put last)."""
        others: JavaHashMap[str, int] = JavaHashMap.copy_of(
            {n: v for n, v in sorted(self.levels.items()) if n != METADATA_VERSION}
        )
        if METADATA_VERSION in self.levels:
            others[METADATA_VERSION] = self.levels[METADATA_VERSION]
        return list(others.items())


EMPTY = FinalizedFeatures({}, -1)
"""No finalized features at all (what a ZooKeeper-mode Kafka 3.9 cluster starts with)."""


def new_cluster_features(mv: MetadataVersion = LATEST_PRODUCTION) -> FinalizedFeatures:
    """The finalized features of a new cluster formatted at ``mv`` (epoch 0)."""
    levels = {n: v for n, v in default_feature_levels(mv).items() if v > 0}
    return FinalizedFeatures(levels, 0)


# -- changing them -------------------------------------------------------------------------


class UpgradeType(IntEnum):
    """``FeatureUpdate.UpgradeType``: UpdateFeatures v1+ ``UpgradeType`` (v0's
    ``AllowDowngrade`` true is SAFE_DOWNGRADE)."""

    UNKNOWN = 0
    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3

    @classmethod
    def from_wire(cls, code: int) -> UpgradeType:
        try:
            return cls(code)
        except ValueError:
            return cls.UNKNOWN


@dataclass(frozen=True, slots=True)
class FeatureUpdate:
    """One requested change: ``feature`` to ``level`` (0: disable) as ``upgrade_type``."""

    feature: str
    level: int
    upgrade_type: UpgradeType = UpgradeType.UPGRADE


class FeatureUpdateError(Exception):
    """An update refused: ``code`` (INVALID_UPDATE_VERSION) and Kafka's message."""

    def __init__(self, message: str, code: int = ErrorCode.INVALID_UPDATE_VERSION) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message

    @property
    def response_message(self) -> str:
        """What the UpdateFeatures response carries (Kafka's ``QuorumController``)."""
        return (
            "The update failed for all features since the following feature had an error: "
            f"{self.message}"
        )


def _invalid(name: str, level: int, reason: str) -> FeatureUpdateError:
    return FeatureUpdateError(f"Invalid update version {level} for feature {name}. {reason}")


def _reason_not_supported(level: int, who: str, supported: VersionRange) -> str | None:
    """``QuorumFeatures.reasonNotSupported``."""
    if supported.contains(level):
        return None
    if supported.max == 0:
        return f"{who} does not support this feature."
    return f"{who} only supports versions {supported}"


@dataclass(frozen=True, slots=True)
class QuorumSupport:
    """Who must support a new level (Kafka's ``QuorumFeatures`` and
    ``ClusterFeatureSupportDescriber``): the node deciding (``controller_id`` with
    ``local``), every registered broker (in the order Kafka iterates them) and every
    registered controller, and the ids of the controller quorum."""

    controller_id: int
    local: Mapping[str, VersionRange]
    brokers: Mapping[int, Mapping[str, VersionRange]] = field(default_factory=dict)
    controllers: Mapping[int, Mapping[str, VersionRange]] = field(default_factory=dict)
    quorum_node_ids: tuple[int, ...] = ()

    def reason_not_supported(self, name: str, level: int, mv: MetadataVersion) -> str | None:
        """``FeatureControlManager.reasonNotSupported``: the first node that cannot run
        ``name`` at ``level``."""
        reason = _reason_not_supported(
            level, f"Local controller {self.controller_id}", self.local.get(name, DISABLED)
        )
        if reason is not None:
            return reason
        for broker, ranges in self.brokers.items():
            reason = _reason_not_supported(level, f"Broker {broker}", ranges.get(name, DISABLED))
            if reason is not None:
                return reason
        if mv.is_controller_registration_supported:
            found = {self.controller_id}
            for controller, ranges in self.controllers.items():
                if controller == self.controller_id:
                    continue
                reason = _reason_not_supported(
                    level, f"Controller {controller}", ranges.get(name, DISABLED)
                )
                if reason is not None:
                    return reason
                found.add(controller)
            for node in self.quorum_node_ids:
                if node not in found:
                    return f"controller {node} has not registered, and may not support this feature"
        return None


def _update_metadata_version(current: MetadataVersion, level: int, unsafe: bool) -> None:
    """``FeatureControlManager.updateMetadataVersion``'s checks."""
    target = METADATA_VERSIONS.get(level)
    if target is None:
        raise FeatureUpdateError(
            f"Invalid metadata.version {level}. Valid versions are from "
            f"{MINIMUM_VERSION.level} to {LATEST_TESTING.level}."
        )
    if target.level < current.level and metadata_changed_between(current, target):
        reason = (
            "Unsafe metadata downgrade is not supported in this version."
            if unsafe
            else "Refusing to perform the requested downgrade because it might delete "
            "metadata information."
        )
        raise FeatureUpdateError(
            f"Unsupported metadata.version downgrade from {current.level} to {target.level}. "
            f"{reason}"
        )


def _update_one(
    name: str,
    level: int,
    upgrade_type: UpgradeType,
    current_levels: Mapping[str, int],
    proposed: Mapping[str, int],
    support: QuorumSupport,
) -> None:
    """``FeatureControlManager.updateFeature``'s checks for one update."""
    if upgrade_type is UpgradeType.UNKNOWN:
        raise _invalid(name, level, "The controller does not support the given upgrade type.")
    mv = metadata_version(current_levels[METADATA_VERSION])
    current = current_levels.get(name, 0)
    if level < 0:
        raise _invalid(name, level, "A feature version cannot be less than 0.")
    reason = support.reason_not_supported(name, level, mv)
    if reason is not None:
        raise _invalid(name, level, reason)
    if level < current and upgrade_type is UpgradeType.UPGRADE:
        raise _invalid(
            name,
            level,
            "Can't downgrade the version of this feature without setting the upgrade type "
            "to either safe or unsafe downgrade.",
        )
    if level > current and upgrade_type is not UpgradeType.UPGRADE:
        raise _invalid(name, level, "Can't downgrade to a newer version.")
    if name == METADATA_VERSION:
        _update_metadata_version(mv, level, upgrade_type is UpgradeType.UNSAFE_DOWNGRADE)
        return
    if name == KRAFT_VERSION:
        if upgrade_type is not UpgradeType.UPGRADE and level != current:
            raise _invalid(name, level, "Can't downgrade the version of this feature.")
        return
    try:
        feature(name).level(level)
        validate_dependencies(name, level, proposed)
    except FeatureVersionError as exc:
        raise _invalid(name, level, str(exc)) from None


def update_features(
    current: FinalizedFeatures, updates: Iterable[FeatureUpdate], support: QuorumSupport
) -> dict[str, int]:
    """Kafka's ``FeatureControlManager.updateFeatures``: the levels to write (0 removes a
    feature), once every update passed its checks (see the module documentation);
    :class:`FeatureUpdateError` for the first that fails, in the order Kafka meets
    them (a ``java.util.HashMap`` of the request's features). ``current`` must finalize
    metadata.version. Nothing is written here: a ``validateOnly`` request stops at the
    answer."""
    requested: JavaHashMap[str, FeatureUpdate] = JavaHashMap()
    for update in updates:
        if update.feature not in requested:  # Kafka's request collection keeps the first
            requested[update.feature] = update
    current_levels = dict(current.levels)
    if METADATA_VERSION not in current_levels:
        raise FeatureUpdateError("Unknown metadata version for FeatureControlManager")
    proposed = dict(current_levels)
    proposed.update({name: u.level for name, u in requested.items()})
    for name, update in requested.items():
        _update_one(name, update.level, update.upgrade_type, current_levels, proposed, support)
    return {name: u.level for name, u in requested.items()}
