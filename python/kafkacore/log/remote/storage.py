"""Kafka's ``RemoteStorageManager`` over one bucket: copy a closed segment's files, fetch
a byte range of its log or a whole index, delete a copy; the key layout is
:mod:`kafkacore.log.remote.layout`'s.

Integrity: the copy returns, as the segment's *custom metadata* (Kafka's
``RemoteLogSegmentMetadata.CustomMetadata``, kept in ``__remote_log_metadata``), a CRC-32C
and size of every file it uploaded (Kafka's files carry no checksum of their own, but
their batches do). :meth:`fetch_index` checks the whole object against them;
:meth:`fetch_log_segment`'s callers check each batch's own CRC. A mismatch raises
:class:`~kafkacore.log.remote.errors.CorruptRemoteDataError`: reported, never served.

Custom metadata layout (Kafka's default limit is 128 bytes,
``remote.log.metadata.custom.metadata.max.bytes``)::

    version int8 (1) | count int8 | count x (kind int8, size int64, crc32c uint32)

Thread-safety: stateless over a thread-safe object store; any thread may call it.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping
from typing import NamedTuple

from kafkacore.log.remote.errors import CorruptRemoteDataError, RemoteResourceNotFoundError
from kafkacore.log.remote.layout import IndexType, object_key, segment_prefix
from kafkacore.log.remote.model import RemoteLogSegmentMetadata, TopicIdPartition
from kafkacore.log.remote.object_store import ObjectStore

__all__ = ["LogSegmentData", "RemoteStorageManager", "decode_checksums"]

_CUSTOM_VERSION = 1
_KINDS = (
    IndexType.SEGMENT,
    IndexType.OFFSET,
    IndexType.TIMESTAMP,
    IndexType.TRANSACTION,
    IndexType.PRODUCER_SNAPSHOT,
    IndexType.LEADER_EPOCH,
)
_ENTRY = struct.Struct(">bqI")


class LogSegmentData(NamedTuple):
    """Kafka's ``LogSegmentData``: the files of one closed segment (paths) and its leader
    epochs as checkpoint bytes. ``transaction_index`` is ``None`` when the segment has
    no aborted transaction (nothing is uploaded then)."""

    log_segment: str
    offset_index: str
    time_index: str
    transaction_index: str | None
    producer_snapshot: str | None
    leader_epoch_index: bytes


def _crc32c(data: bytes | memoryview) -> int:
    from kafkacore.native import backend

    return int(backend.crc32c(bytes(data)))


def _file_crc(path: str) -> tuple[int, int]:
    with open(path, "rb") as f:
        data = f.read()
    return len(data), _crc32c(data)


def encode_checksums(sums: Mapping[IndexType, tuple[int, int]]) -> bytes:
    out = [struct.pack(">bb", _CUSTOM_VERSION, len(sums))]
    for kind, (size, crc) in sums.items():
        out.append(_ENTRY.pack(_KINDS.index(kind), size, crc))
    return b"".join(out)


def decode_checksums(custom: bytes | None) -> dict[IndexType, tuple[int, int]]:
    """``{file kind: (size, crc32c)}`` from a segment's custom metadata (empty when the
    segment was copied by another storage manager)."""
    if not custom or len(custom) < 2 or custom[0] != _CUSTOM_VERSION:
        return {}
    count = custom[1]
    sums: dict[IndexType, tuple[int, int]] = {}
    for i in range(count):
        pos = 2 + i * _ENTRY.size
        if pos + _ENTRY.size > len(custom):
            break
        kind, size, crc = _ENTRY.unpack_from(custom, pos)
        if 0 <= kind < len(_KINDS):
            sums[_KINDS[kind]] = (size, crc)
    return sums


class RemoteStorageManager:
    """Kafka's ``RemoteStorageManager`` over an :class:`ObjectStore`."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    def copy_log_segment_data(
        self, metadata: RemoteLogSegmentMetadata, data: LogSegmentData
    ) -> bytes:
        """Upload the segment's files (indexes first, the log last); returns the custom
        metadata (sizes and CRCs). A failure leaves whatever was uploaded: the copy is
        not committed, and the caller deletes the folder (Kafka's orphan clean-up)."""
        sums: dict[IndexType, tuple[int, int]] = {}
        files = [
            (IndexType.OFFSET, data.offset_index),
            (IndexType.TIMESTAMP, data.time_index),
            (IndexType.TRANSACTION, data.transaction_index),
            (IndexType.PRODUCER_SNAPSHOT, data.producer_snapshot),
        ]
        for kind, path in files:
            if path is None or not os.path.exists(path):
                continue
            sums[kind] = _file_crc(path)
            self.store.put_file(object_key(metadata, kind), path)
        epochs = data.leader_epoch_index
        sums[IndexType.LEADER_EPOCH] = (len(epochs), _crc32c(epochs))
        self.store.put(object_key(metadata, IndexType.LEADER_EPOCH), epochs)
        sums[IndexType.SEGMENT] = _file_crc(data.log_segment)
        self.store.put_file(object_key(metadata, IndexType.SEGMENT), data.log_segment)
        return encode_checksums(sums)

    def fetch_log_segment(
        self,
        metadata: RemoteLogSegmentMetadata,
        start_position: int,
        end_position: int | None = None,
    ) -> bytes:
        """Bytes ``[start_position, end_position]`` (inclusive, as Kafka's) of the log,
        one ranged GET; to its end when ``end_position`` is None."""
        end = metadata.segment_size_in_bytes if end_position is None else end_position + 1
        end = min(end, metadata.segment_size_in_bytes)
        return self.store.get_range(object_key(metadata, IndexType.SEGMENT), start_position, end)

    def fetch_index(self, metadata: RemoteLogSegmentMetadata, kind: IndexType) -> bytes:
        """A whole index (or snapshot, or leader-epoch checkpoint), checked against the
        CRC the copy recorded. The transaction index of a segment without aborted
        transactions is empty (nothing was uploaded);
        ``RemoteResourceNotFoundError`` for any other missing object."""
        sums = decode_checksums(metadata.custom_metadata)
        if kind is IndexType.TRANSACTION and (
            metadata.txn_index_empty or (sums and kind not in sums)
        ):
            return b""
        data = self.store.get(object_key(metadata, kind))
        expected = sums.get(kind)
        if expected is not None and (len(data), _crc32c(data)) != expected:
            raise CorruptRemoteDataError(
                f"{object_key(metadata, kind)}: {len(data)} bytes with CRC-32C "
                f"{_crc32c(data):08x}, copied as {expected[0]} bytes with {expected[1]:08x}"
            )
        return data

    def verify_log_segment(self, metadata: RemoteLogSegmentMetadata) -> None:
        """Read the whole log object back and check its size and CRC (tools, tests)."""
        expected = decode_checksums(metadata.custom_metadata).get(IndexType.SEGMENT)
        data = self.store.get(object_key(metadata, IndexType.SEGMENT))
        if expected is not None and (len(data), _crc32c(data)) != expected:
            raise CorruptRemoteDataError(f"{object_key(metadata, IndexType.SEGMENT)} is corrupt")

    def delete_log_segment_data(self, metadata: RemoteLogSegmentMetadata) -> None:
        """Delete every object of this copy (whatever a failed copy left too)."""
        prefix = segment_prefix(metadata)
        self.store.delete(info.key for info in self.store.list(prefix))

    def delete_partition_data(self, tip: TopicIdPartition) -> int:
        """Delete every object of a partition (topic deletion's last sweep); how many."""
        from kafkacore.log.remote.layout import partition_prefix

        keys = [info.key for info in self.store.list(partition_prefix(tip))]
        self.store.delete(keys)
        return len(keys)

    def exists(self, metadata: RemoteLogSegmentMetadata) -> bool:
        try:
            self.store.size(object_key(metadata, IndexType.SEGMENT))
        except RemoteResourceNotFoundError:
            return False
        return True
