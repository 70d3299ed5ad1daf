"""The record formats' byte layout, named once for the code above the backends.

Kafka's ``DefaultRecordBatch`` writes the v2 batch header as a chain of ``X_OFFSET =
PREV_OFFSET + PREV_LENGTH`` constants ending in ``RECORD_BATCH_OVERHEAD = 61``; the
pure-Python twin keeps that chain (:mod:`kafkacore.pure.batch`, which also draws the
layout) and the legacy v0/v1 one (:mod:`kafkacore.pure.legacy`). This module re-exports
them, so the log, the producer state, the request handlers and the dump tool read a
header field by its name instead of re-typing ``21`` or ``0x07``.

The offsets are from the start of a batch (or of a legacy message's 12-byte log
header). ``LOG_OVERHEAD`` (base offset + length) and the magic byte at 16 are common to
every format, so ``HEADER_SIZE_UP_TO_MAGIC`` bytes are enough to tell them apart.
"""

from __future__ import annotations

from kafkacore.pure.batch import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    BASE_SEQUENCE_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LAST_OFFSET_DELTA_OFFSET,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_V2,
    MAX_TIMESTAMP_OFFSET,
    MIN_BATCH_LENGTH,
    PARTITION_LEADER_EPOCH_OFFSET,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    RECORDS_COUNT_OFFSET,
    RECORDS_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kafkacore.pure.legacy import (
    CRC_OFFSET as LEGACY_CRC_OFFSET,
)
from kafkacore.pure.legacy import (
    RECORD_OVERHEAD_V0,
    RECORD_OVERHEAD_V1,
)

__all__ = [
    "ATTRIBUTES_OFFSET",
    "BASE_OFFSET_OFFSET",
    "BASE_SEQUENCE_OFFSET",
    "BASE_TIMESTAMP_OFFSET",
    "COMPRESSION_CODEC_MASK",
    "CONTROL_FLAG_MASK",
    "CRC_OFFSET",
    "DELETE_HORIZON_FLAG_MASK",
    "HEADER_SIZE_UP_TO_MAGIC",
    "LAST_OFFSET_DELTA_OFFSET",
    "LEGACY_CRC_OFFSET",
    "LEGACY_MAGIC_OFFSET",
    "LENGTH_OFFSET",
    "LOG_OVERHEAD",
    "MAGIC_OFFSET",
    "MAGIC_V2",
    "MAX_TIMESTAMP_OFFSET",
    "MIN_BATCH_LENGTH",
    "MIN_SIZE_BY_MAGIC",
    "PARTITION_LEADER_EPOCH_OFFSET",
    "PRODUCER_EPOCH_OFFSET",
    "PRODUCER_ID_OFFSET",
    "RECORDS_COUNT_OFFSET",
    "RECORDS_OFFSET",
    "RECORD_BATCH_OVERHEAD",
    "RECORD_OVERHEAD_V0",
    "RECORD_OVERHEAD_V1",
    "TIMESTAMP_TYPE_MASK",
    "TRANSACTIONAL_FLAG_MASK",
]

#: The magic byte's offset inside a legacy message (after its ``LOG_OVERHEAD``): its CRC
#: covers the message from there to the end.
LEGACY_MAGIC_OFFSET = MAGIC_OFFSET - LOG_OVERHEAD  # 4

#: The smallest value of the length field (bytes after ``LOG_OVERHEAD``) per magic.
MIN_SIZE_BY_MAGIC = {0: RECORD_OVERHEAD_V0, 1: RECORD_OVERHEAD_V1, 2: MIN_BATCH_LENGTH}
