"""The records of ``__share_group_state``: Kafka's share coordinator key/value formats
(KIP-932), declared with :mod:`kafkacore.protocol.schema` for
:mod:`kafkacore.coordinator.codec`, as Kafka 4.3.1's
``share-coordinator/src/main/resources/common/message/*.json`` define them.

Layout (Kafka's ``CoordinatorRecordSerde``, as for ``__consumer_offsets``)::

    key   = record_type int16 | key struct (version 0, not flexible)
    value = version int16     | value struct (flexible); null = tombstone

====  =============  ===============================================================
type  record         value (version 0)
====  =============  ===============================================================
0     ShareSnapshot  snapshotEpoch, stateEpoch, leaderEpoch, startOffset,
                     deliveryCompleteCount (tagged 0, default -1), createTimestamp,
                     writeTimestamp, stateBatches
1     ShareUpdate    a delta: snapshotEpoch, leaderEpoch, startOffset,
                     deliveryCompleteCount (tagged 0, default -1), stateBatches
====  =============  ===============================================================

Both keys are ``{groupId, topicId, partition}``: one share partition's state. A state
batch is ``{firstOffset, lastOffset, deliveryState int8, deliveryCount int16}``.

Immutable declarations: thread-safe.
"""

from __future__ import annotations

from typing import Any

from kafkacore.coordinator.codec import MessageSchema, field, message

__all__ = [
    "SHARE_GROUP_STATE_TOPIC",
    "SHARE_SNAPSHOT",
    "SHARE_STATE_RECORDS",
    "SHARE_UPDATE",
]

SHARE_GROUP_STATE_TOPIC = "__share_group_state"
SHARE_SNAPSHOT = 0
SHARE_UPDATE = 1

_f = field

_SHARE_PARTITION = (
    _f("groupId", "string", "0"),
    _f("topicId", "uuid", "0"),
    _f("partition", "int32", "0"),
)
_STATE_BATCHES = _f(
    "stateBatches",
    "[]StateBatch",
    fields=(
        _f("firstOffset", "int64"),
        _f("lastOffset", "int64"),
        _f("deliveryState", "int8"),
        _f("deliveryCount", "int16"),
    ),
)
_DELIVERY_COMPLETE_COUNT = _f("deliveryCompleteCount", "int32", tagged="0+", tag=0, default=-1)

SHARE_STATE_RECORDS: dict[int, tuple[MessageSchema[Any], MessageSchema[Any]]] = {
    SHARE_SNAPSHOT: (
        message("ShareSnapshotKey", SHARE_SNAPSHOT, "key", "0", "none", _SHARE_PARTITION),
        message(
            "ShareSnapshotValue",
            SHARE_SNAPSHOT,
            "value",
            "0",
            "0+",
            (
                _f("snapshotEpoch", "int32"),
                _f("stateEpoch", "int32"),
                _f("leaderEpoch", "int32"),
                _f("startOffset", "int64"),
                _DELIVERY_COMPLETE_COUNT,
                _f("createTimestamp", "int64"),
                _f("writeTimestamp", "int64"),
                _STATE_BATCHES,
            ),
        ),
    ),
    SHARE_UPDATE: (
        message("ShareUpdateKey", SHARE_UPDATE, "key", "0", "none", _SHARE_PARTITION),
        message(
            "ShareUpdateValue",
            SHARE_UPDATE,
            "value",
            "0",
            "0+",
            (
                _f("snapshotEpoch", "int32"),
                _f("leaderEpoch", "int32"),
                _f("startOffset", "int64"),
                _DELIVERY_COMPLETE_COUNT,
                _STATE_BATCHES,
            ),
        ),
    ),
}
"""``__share_group_state``'s (key, value) declarations by record type."""
