"""Where a broker decides on its finalized features (Kafka's ``FeatureControlManager`` in
the place a single node has it): UpdateFeatures checked with
:func:`kafkacore.features.update_features` and written to the store. In a ZooKeeper
cluster the active controller decides instead (it writes ``/feature``).

Blocking (a store write): called on the I/O threads. Thread-safe: the store's
read-modify-write is atomic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafkacore.features import (
    FeatureUpdate,
    FinalizedFeatures,
    QuorumSupport,
    VersionRange,
    update_features,
)
from kafkacore.metadata import MetadataStore

__all__ = ["update_single_node"]


def update_single_node(
    store: MetadataStore,
    node_id: int,
    supported: Mapping[str, VersionRange],
    updates: Sequence[FeatureUpdate],
    validate_only: bool,
) -> FinalizedFeatures:
    """A single node's UpdateFeatures: it is the controller, the only broker and the
    only voter, supporting ``supported``; the features in force after it
    (:class:`~kafkacore.features.FeatureUpdateError` when refused, nothing written)."""
    support = QuorumSupport(
        node_id, supported, {node_id: supported}, {node_id: supported}, (node_id,)
    )

    def decide(current: FinalizedFeatures) -> dict[str, int]:
        return update_features(current, updates, support)

    if validate_only:
        current = store.finalized_features()
        decide(current)
        return current
    return store.update_finalized_features(decide)
