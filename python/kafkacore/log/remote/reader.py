"""Reading a tiered partition straight from the bucket, without a broker in the data path:
for engines that scan months of a topic in parallel (the Spark source's partition per
tiered segment) and for tools.

* :class:`TieredSegmentReader` - one segment's record batches from its ``.log`` object,
  by ranged GETs of ``chunk_bytes``, whole batches only, each batch's CRC checked (a
  corrupt batch raises :class:`~kafkacore.log.remote.errors.CorruptRemoteDataError`),
  from the offset index's position; and the aborted transactions a read_committed reader
  needs for a range, from the ``.txnindex`` objects of that segment and the ones after.

Which segments to read (the committed ones) is asked of the cluster:
:func:`kafkacore.client.tiered.committed_segments`.

The batches are the bytes Kafka wrote: decode them as a Fetch answer's
(``kafkacore.arrow.decode``, ``kafkacore.record``).

Thread-safety: a reader holds no state besides its (thread-safe) store; use it from any
thread, or one per Spark task.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from kafkacore.log.remote.errors import CorruptRemoteDataError
from kafkacore.log.remote.layout import IndexType
from kafkacore.log.remote.model import RemoteLogSegmentMetadata
from kafkacore.log.remote.object_store import ObjectStore, S3ObjectStore
from kafkacore.log.remote.storage import RemoteStorageManager
from kafkacore.log.txn_index import ABORTED_TXN_SIZE, AbortedTxn

__all__ = ["TieredSegmentReader"]

_HEADER = 61
_LENGTH = struct.Struct(">i")
_OFFSET_ENTRY = struct.Struct(">II")


class TieredSegmentReader:
    """Reads tiered segments from a bucket (``store``: an object store, or the
    ``s3.*`` settings of one, as a broker's ``rsm.config.``)."""

    def __init__(self, store: ObjectStore | dict[str, Any]) -> None:
        self.store: ObjectStore = S3ObjectStore(store) if isinstance(store, dict) else store
        self._rsm = RemoteStorageManager(self.store)

    def _position(self, metadata: RemoteLogSegmentMetadata, offset: int) -> int:
        if offset <= metadata.start_offset:
            return 0
        index = self._rsm.fetch_index(metadata, IndexType.OFFSET)
        best = 0
        for i in range(len(index) // _OFFSET_ENTRY.size):
            relative, position = _OFFSET_ENTRY.unpack_from(index, i * _OFFSET_ENTRY.size)
            if metadata.start_offset + relative > offset:
                break
            best = position
        return best

    def batches(
        self,
        metadata: RemoteLogSegmentMetadata,
        start: int | None = None,
        end: int | None = None,
        *,
        chunk_bytes: int = 8 << 20,
    ) -> Iterator[bytes]:
        """Chunks of whole batches of the segment holding offsets in ``[start, end)``
        (default: all of it); a chunk's first batch may begin before ``start``."""
        from kafkacore.native import backend

        start = metadata.start_offset if start is None else start
        end = metadata.end_offset + 1 if end is None else end
        size = metadata.segment_size_in_bytes
        position = self._position(metadata, start)
        carry = b""
        while position < size:
            data = carry + self._rsm.fetch_log_segment(
                metadata, position, min(position + chunk_bytes, size) - 1
            )
            read_to = min(position + chunk_bytes, size)
            pos = 0
            out_start = None
            stop = False
            while pos + _HEADER <= len(data):
                batch_size = _LENGTH.unpack_from(data, pos + 8)[0] + 12
                if batch_size < _HEADER:
                    raise CorruptRemoteDataError(
                        f"{metadata.segment_id}: batch size {batch_size} in the segment"
                    )
                if pos + batch_size > len(data):
                    break
                base = struct.unpack_from(">q", data, pos)[0]
                last = base + struct.unpack_from(">i", data, pos + 23)[0]
                if base >= end:
                    stop = True
                    break
                crc = struct.unpack_from(">I", data, pos + 17)[0]
                if int(backend.crc32c(data[pos + 21 : pos + batch_size])) != crc:
                    raise CorruptRemoteDataError(
                        f"Remote segment {metadata.segment_id} ({metadata.topic_id_partition}): "
                        f"the batch at offset {base} fails its CRC"
                    )
                if last >= start and out_start is None:
                    out_start = pos
                pos += batch_size
            if out_start is not None and pos > out_start:
                yield data[out_start:pos]
            if stop:
                return
            carry = data[pos:]
            if read_to >= size:
                if carry:
                    raise CorruptRemoteDataError(
                        f"{metadata.segment_id}: {len(carry)} bytes of a partial batch at its end"
                    )
                return
            position = read_to

    def aborted_transactions(
        self, segments: list[RemoteLogSegmentMetadata], start: int, end: int
    ) -> tuple[list[AbortedTxn], bool]:
        """The aborted transactions overlapping ``[start, end)`` from the ``.txnindex`` of
        the segment holding ``start`` and the later ones of ``segments`` (Kafka's
        ``collectAbortedTransactions``), and whether the search is complete: an entry's
        last stable offset reaches ``end``, or the last segment's producer snapshot shows
        no transaction still open from before ``end`` (``False``: one may end in the part
        of the log not tiered yet)."""
        found: list[AbortedTxn] = []
        for m in segments:
            if m.end_offset < start:
                continue
            index = self._rsm.fetch_index(m, IndexType.TRANSACTION)
            for p in range(0, len(index) - ABORTED_TXN_SIZE + 1, ABORTED_TXN_SIZE):
                entry = AbortedTxn.decode(index, p)
                if entry.last_offset >= start and entry.first_offset < end:
                    found.append(entry)
                if entry.last_stable_offset >= end:
                    return found, True
        return found, self._no_open_transaction_before(segments, end)

    def _no_open_transaction_before(
        self, segments: list[RemoteLogSegmentMetadata], end: int
    ) -> bool:
        """Whether the producer snapshot at the end of the last segment (taken when the
        next one was rolled) shows no transaction open since before ``end``: then every
        transaction overlapping a range below ``end`` ended in these segments."""
        from kafkacore.log.producer_state import parse_snapshot
        from kafkacore.log.remote.errors import RemoteResourceNotFoundError
        from kafkacore.native import backend

        if not segments:
            return False
        try:
            snapshot = self._rsm.fetch_index(segments[-1], IndexType.PRODUCER_SNAPSHOT)
        except RemoteResourceNotFoundError:
            return False
        rows = parse_snapshot(snapshot, backend.crc32c)
        return all(row[7] < 0 or row[7] >= end for row in rows)  # current txn first offset
