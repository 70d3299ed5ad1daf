"""Finalized features and producer id blocks (Kafka 4.3's ``FeatureControlManager``,
``QuorumFeatures`` and ``ProducerIdControlManager``).

UpdateFeatures (KIP-584) moves one or more features, all or nothing: an upgrade must be
supported by this controller, by every registered broker and by every registered
controller (and every voter must have registered); a downgrade needs the SAFE or UNSAFE
downgrade type, and a ``metadata.version`` downgrade across a level that changed the
metadata format is refused; dependencies between features (``Feature.validateVersion``)
are checked against the levels after the update. ``kraft.version`` is upgraded by the
Raft layer itself (a control record), not by a FeatureLevelRecord.

AllocateProducerIds hands brokers blocks of 1000 producer ids (KIP-730), remembered in a
ProducerIdsRecord.

Not thread-safe: the controller's event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkacore.controller.kraft.cluster_control import check_broker_epoch
from kafkacore.controller.kraft.result import ApiError, ControllerError, ControllerResult
from kafkacore.controller.kraft.state import ControllerState
from kafkacore.metadata.image.features import feature_level_record
from kafkacore.metadata.image.image import producer_ids_record
from kafkacore.metadata.records import MetadataRecord
from kafkacore.metadata.versions import (
    FEATURES,
    KRAFT_VERSION,
    METADATA_VERSION,
    MINIMUM_VERSION,
    FeatureVersionError,
    checks_metadata_changed,
    metadata_version,
    supported_range,
    validate_dependencies,
)
from kafkacore.protocol.errors import ErrorCode

__all__ = [
    "PRODUCER_ID_BLOCK_SIZE",
    "SAFE_DOWNGRADE",
    "UNSAFE_DOWNGRADE",
    "UPGRADE",
    "allocate_producer_ids",
    "local_supported_features",
    "update_features",
]

log = logging.getLogger("kafkacore.controller")

PRODUCER_ID_BLOCK_SIZE = 1000  # ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
UNKNOWN, UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 0, 1, 2, 3  # FeatureUpdate.UpgradeType


def local_supported_features(unstable: bool = False) -> dict[str, tuple[int, int]]:
    """What this node supports (its ApiVersions ``SupportedFeatures`` and its
    registrations): metadata.version and every production feature."""
    names = [METADATA_VERSION, *FEATURES]
    return {name: supported_range(name, unstable) for name in names}


def _reason_not_supported(
    state: ControllerState,
    name: str,
    level: int,
    local: Mapping[str, tuple[int, int]],
    node_id: int,
    voters: Iterable[int],
) -> str | None:
    """Kafka's ``reasonNotSupported``: this controller, every broker and every voter."""

    def check(who: str, supported: tuple[int, int] | None) -> str | None:
        if supported is None:
            return None if level == 0 else f"{who} does not support this feature."
        low, high = supported
        if not low <= level <= high:
            return f"{who} only supports versions {low}-{high}"
        return None

    reason = check(f"Local controller {node_id}", local.get(name))
    if reason:
        return reason
    for broker_id, broker in sorted(state.image.cluster.brokers.items()):
        reason = check(f"Broker {broker_id}", broker.supported_features.get(name))
        if reason:
            return reason
    mv = state.image.features.metadata_version
    if mv is not None and mv.is_controller_registration_supported:
        controllers = state.image.cluster.controllers
        for controller_id, controller in sorted(controllers.items()):
            if controller_id == node_id:
                continue
            reason = check(f"Controller {controller_id}", controller.supported_features.get(name))
            if reason:
                return reason
        for voter in sorted(voters):
            if voter != node_id and voter not in controllers:
                return f"controller {voter} has not registered, and may not support this feature"
    return None


def _invalid(feature: str, level: int, message: str) -> ApiError:
    return ApiError(
        ErrorCode.INVALID_UPDATE_VERSION,
        f"Invalid update version {level} for feature {feature}. {message}",
    )


def _update_metadata_version(
    state: ControllerState, level: int, unsafe: bool, records: list[MetadataRecord]
) -> ApiError:
    current = state.image.features.metadata_version_or_raise()

    def invalid(message: str) -> ApiError:
        return ApiError(
            ErrorCode.INVALID_UPDATE_VERSION, f"Invalid metadata.version {level}. {message}"
        )

    try:
        target = metadata_version(level)
    except FeatureVersionError:
        return invalid("Unknown metadata.version.")
    if target.level < MINIMUM_VERSION.level:
        return invalid(f"Unable to set a metadata.version less than {MINIMUM_VERSION}")
    if target.level < current.level:
        if checks_metadata_changed(current, target):
            if unsafe:
                return invalid("Unsafe metadata downgrade is not supported in this version.")
            return invalid(
                "Refusing to perform the requested downgrade because it might delete "
                "metadata information."
            )
        log.warning("Downgrading metadata.version from %s to %s.", current, target)
    else:
        log.warning("Upgrading metadata.version from %s to %s.", current, target)
    records.append(feature_level_record(METADATA_VERSION, level))
    return ApiError()


def update_features(
    state: ControllerState,
    updates: Mapping[str, int],
    upgrade_types: Mapping[str, int],
    validate_only: bool,
    *,
    node_id: int,
    voters: Iterable[int],
    kraft_version: int,
    upgrade_kraft_version: Callable[[int, bool], None],
    unstable: bool = False,
) -> ControllerResult[tuple[str | None, ApiError]]:
    """Kafka's ``updateFeatures``: ``(failed feature, error)`` and the records (none
    unless every update is valid)."""
    local = local_supported_features(unstable)
    finalized = state.image.features.all_levels()
    proposed = {**finalized, **updates}
    records: list[MetadataRecord] = []
    voter_ids = list(voters)
    for name, level in updates.items():
        kind = upgrade_types.get(name, UPGRADE)
        if name == METADATA_VERSION:
            current = state.image.features.level(METADATA_VERSION)
        elif name == KRAFT_VERSION:
            current = kraft_version
        else:
            current = finalized.get(name, 0)
        error = ApiError()
        if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            error = _invalid(name, level, "The controller does not support the given upgrade type.")
        elif level < 0:
            error = _invalid(name, level, "A feature version cannot be less than 0.")
        else:
            reason = _reason_not_supported(state, name, level, local, node_id, voter_ids)
            if reason is not None:
                error = _invalid(name, level, reason)
            elif level < current and kind == UPGRADE:
                error = _invalid(
                    name,
                    level,
                    "Can't downgrade the version of this feature without setting the upgrade "
                    "type to either safe or unsafe downgrade.",
                )
            elif level > current and kind != UPGRADE:
                error = _invalid(name, level, "Can't downgrade to a newer version.")
            elif name == METADATA_VERSION:
                error = _update_metadata_version(state, level, kind == UNSAFE_DOWNGRADE, records)
            elif name == KRAFT_VERSION:
                if kind == UPGRADE:
                    try:
                        upgrade_kraft_version(level, validate_only)
                    except ControllerError as exc:
                        error = exc.error
                    except ValueError as exc:
                        error = _invalid(name, level, str(exc))
                elif level != current:
                    error = _invalid(name, level, "Can't downgrade the version of this feature.")
            else:
                feature = FEATURES.get(name)
                try:
                    if feature is None:
                        raise FeatureVersionError(f"Feature {name} not found.")
                    validate_dependencies(name, feature.level(level), proposed)
                    records.append(feature_level_record(name, level))
                except FeatureVersionError as exc:
                    error = _invalid(name, level, str(exc))
        if error.is_failure:
            return ControllerResult([], (name, error))
    return ControllerResult([] if validate_only else records, (None, ApiError()))


def allocate_producer_ids(
    state: ControllerState, broker_id: int, broker_epoch: int
) -> ControllerResult[tuple[int, int]]:
    """AllocateProducerIds: ``(first id, count)`` of a new block."""
    check_broker_epoch(state, broker_id, broker_epoch)
    first = max(0, state.image.producer_ids.next_producer_id)
    if first > (1 << 63) - 1 - PRODUCER_ID_BLOCK_SIZE:
        raise ControllerError(
            ErrorCode.UNKNOWN_SERVER_ERROR,
            "Exhausted all producerIds as the next block's end producerId has exceeded the "
            "int64 type limit",
        )
    record = producer_ids_record(first + PRODUCER_ID_BLOCK_SIZE, broker_id, broker_epoch)
    return ControllerResult([record], (first, PRODUCER_ID_BLOCK_SIZE))


def feature_update_requests(request: Any, version: int) -> tuple[dict[str, int], dict[str, int]]:
    """UpdateFeatures' updates and upgrade types (v0 has ``AllowDowngrade`` instead)."""
    updates: dict[str, int] = {}
    types: dict[str, int] = {}
    for item in request.feature_updates:
        updates[item.feature] = item.max_version_level
        if version == 0:
            types[item.feature] = SAFE_DOWNGRADE if item.allow_downgrade else UPGRADE
        else:
            types[item.feature] = item.upgrade_type
    return updates, types
