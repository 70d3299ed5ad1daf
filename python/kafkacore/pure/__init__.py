"""The pure-Python twin of ``kafkacore._native``: the same names, signatures, results
and files (see ``kafkacore/_native.pyi``, the contract). It is the fallback backend, the
reference of the differential tests and the baseline of the benchmarks.

Modules, one format each (the layouts are drawn in their docstrings):

* :mod:`~kafkacore.pure.crc` - CRC-32C (table driven) and CRC-32
* :mod:`~kafkacore.pure.varint` - zig-zag varints of the v2 record
* :mod:`~kafkacore.pure.compression` - gzip, xerial snappy, lz4 frame, zstd
* :mod:`~kafkacore.pure.batch` - RecordBatch v2
* :mod:`~kafkacore.pure.legacy` - message sets v0/v1
* :mod:`~kafkacore.pure.index` - ``.index`` and ``.timeindex``
* :mod:`~kafkacore.pure.files` - segment file names
* :mod:`~kafkacore.pure.segment` - one log segment
* :mod:`~kafkacore.pure.cleaner` - compaction: the key -> offset map and the batch filter
* :mod:`~kafkacore.pure.columns` - the records of a run of batches as Arrow buffers
* :mod:`~kafkacore.pure.partitioner` - Kafka's murmur2 key hash
* :mod:`~kafkacore.pure.produce` - the native produce path: a client batch under a lease
"""

from __future__ import annotations

from kafkacore.pure.batch import batch_header, batch_records, build_batch, validate_batch
from kafkacore.pure.cleaner import KeyMap, filter_batches
from kafkacore.pure.columns import decode_columns
from kafkacore.pure.compression import compress, decompress
from kafkacore.pure.crc import crc32, crc32c
from kafkacore.pure.legacy import build_legacy, legacy_header, legacy_records
from kafkacore.pure.partitioner import murmur2
from kafkacore.pure.produce import ProduceLease, produce_append
from kafkacore.pure.segment import Segment

__all__ = [
    "KeyMap",
    "ProduceLease",
    "Segment",
    "batch_header",
    "batch_records",
    "build_batch",
    "build_legacy",
    "compress",
    "crc32",
    "crc32c",
    "decode_columns",
    "decompress",
    "filter_batches",
    "legacy_header",
    "legacy_records",
    "murmur2",
    "produce_append",
    "validate_batch",
]
