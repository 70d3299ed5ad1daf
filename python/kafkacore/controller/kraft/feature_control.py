"""Finalized features and producer id blocks (Kafka 4.3's ``FeatureControlManager``,
``QuorumFeatures`` and ``ProducerIdControlManager``).

UpdateFeatures (KIP-584) is decided by Kafka's rules in one place,
:func:`kafkacore.features.update_features` (every update supported by this controller,
every registered broker and every registered controller, downgrade types, metadata.version
downgrades, dependencies; all or nothing): here the image supplies the levels and who
supports what, and the decision becomes FeatureLevelRecords. ``kraft.version`` is upgraded
by the Raft layer itself (a control record), not by a FeatureLevelRecord.

AllocateProducerIds hands brokers blocks of 1000 producer ids (KIP-730), remembered in a
ProducerIdsRecord.

Not thread-safe: the controller's event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from kafkacore.controller.kraft.cluster_control import check_broker_epoch
from kafkacore.controller.kraft.result import ApiError, ControllerError, ControllerResult
from kafkacore.controller.kraft.state import ControllerState
from kafkacore.features import (
    KRAFT_VERSION,
    METADATA_VERSION,
    FeatureUpdate,
    FeatureUpdateError,
    FinalizedFeatures,
    QuorumSupport,
    VersionRange,
    supported_features,
)
from kafkacore.features import update_features as decide_feature_updates
from kafkacore.metadata.image.features import feature_level_record
from kafkacore.metadata.image.image import producer_ids_record
from kafkacore.protocol.errors import ErrorCode

__all__ = [
    "PRODUCER_ID_BLOCK_SIZE",
    "allocate_producer_ids",
    "local_supported_features",
    "update_features",
]

log = logging.getLogger("kafkacore.controller")

PRODUCER_ID_BLOCK_SIZE = 1000  # ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE


def local_supported_features(unstable: bool = False) -> dict[str, tuple[int, int]]:
    """What this node supports (:func:`kafkacore.features.supported_features`) as a
    registration carries it: ``(min, max)`` by name."""
    return {name: (r.min, r.max) for name, r in supported_features(unstable).items()}


def _quorum_support(
    state: ControllerState, node_id: int, voters: Iterable[int], unstable: bool
) -> QuorumSupport:
    """Who must run a new level: this controller, every registered broker and controller
    (their registrations' ranges), and the voters."""
    cluster = state.image.cluster

    def ranges(features: Mapping[str, tuple[int, int]]) -> dict[str, VersionRange]:
        return {name: VersionRange(low, high) for name, (low, high) in features.items()}

    return QuorumSupport(
        node_id,
        supported_features(unstable),
        {b: ranges(r.supported_features) for b, r in sorted(cluster.brokers.items())},
        {c: ranges(r.supported_features) for c, r in sorted(cluster.controllers.items())},
        tuple(sorted(voters)),
    )


def update_features(
    state: ControllerState,
    updates: Sequence[FeatureUpdate],
    validate_only: bool,
    *,
    node_id: int,
    voters: Iterable[int],
    kraft_version: int,
    upgrade_kraft_version: Callable[[int, bool], None],
    unstable: bool = False,
) -> ControllerResult[ApiError]:
    """Kafka's ``updateFeatures``: the error (Kafka's top-level code and message) and the
    records (none unless every update is valid, none for ``validate_only``)."""
    levels = {**state.image.features.all_levels(), KRAFT_VERSION: kraft_version}
    current = FinalizedFeatures(levels, -1)
    support = _quorum_support(state, node_id, voters, unstable)
    try:
        changes = decide_feature_updates(current, updates, support)
        kraft = changes.pop(KRAFT_VERSION, kraft_version)
        if kraft != kraft_version:
            try:
                upgrade_kraft_version(kraft, validate_only)
            except ControllerError as exc:
                raise FeatureUpdateError(exc.message or "", exc.code) from None
    except FeatureUpdateError as exc:
        if exc.code != ErrorCode.INVALID_UPDATE_VERSION:
            return ControllerResult([], ApiError(exc.code, exc.message))
        return ControllerResult([], ApiError(exc.code, exc.response_message))
    if METADATA_VERSION in changes and changes[METADATA_VERSION] != levels.get(METADATA_VERSION):
        log.warning(
            "Changing metadata.version from %s to %s.",
            levels.get(METADATA_VERSION),
            changes[METADATA_VERSION],
        )
    records = [feature_level_record(name, level) for name, level in changes.items()]
    return ControllerResult([] if validate_only else records, ApiError())


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
