"""Committed metadata into images, images out to publishers (Kafka's ``MetadataLoader``,
``MetadataBatchLoader``, ``MetadataPublisher``, ``SnapshotManifest`` and
``LogDeltaManifest``).

The owner feeds the loader what the Raft layer committed, in order: a snapshot
(:meth:`MetadataLoader.load_snapshot`: the image is replaced, whatever the snapshot does
not mention is gone) or committed batches (:meth:`MetadataLoader.handle_commit`). Each
call ends with one publication: every publisher gets the delta since the image it last
saw, the new image and a manifest. Two things hold a publication back:

* **metadata transactions** (BeginTransaction ... EndTransaction, KIP-868): their records
  are published together once ended, and dropped if aborted;
* **catching up** (Kafka's ``stillNeedToCatchUp``): until the loaded offset reaches
  ``catch_up_offset`` (the high watermark a broker learned at start-up), nothing is
  published, so a broker never acts on a state older than the one it restarted in.

A publisher installed later first gets the whole current image as a delta from the empty
one (Kafka's ``initializeNewPublishers``).

Not thread-safe: one owner (the broker's metadata task, a controller's event loop).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kafkacore.metadata.image.image import (
    EMPTY_IMAGE,
    MetadataDelta,
    MetadataImage,
    MetadataProvenance,
)
from kafkacore.metadata.records import MetadataRecord, MetadataRecordType, decode_record
from kafkacore.raft.records import RaftBatch

__all__ = [
    "LogDeltaManifest",
    "MetadataLoader",
    "MetadataPublisher",
    "SnapshotManifest",
    "decode_batch",
]

log = logging.getLogger("kafkacore.metadata")

T = MetadataRecordType


@dataclass(frozen=True, slots=True)
class SnapshotManifest:
    """The publication followed a snapshot load."""

    provenance: MetadataProvenance


@dataclass(frozen=True, slots=True)
class LogDeltaManifest:
    """The publication followed committed batches: how many, and their bytes."""

    provenance: MetadataProvenance
    num_batches: int
    num_bytes: int


LoaderManifest = SnapshotManifest | LogDeltaManifest


class MetadataPublisher(Protocol):
    """Kafka's ``MetadataPublisher``: told of each new image with the delta that made it
    (the replica manager, the metadata cache, dynamic configs, quotas, the authorizer, the
    SCRAM cache on a broker; the controller's own registration on a controller)."""

    @property
    def name(self) -> str: ...

    def on_metadata_update(
        self, delta: MetadataDelta, image: MetadataImage, manifest: LoaderManifest
    ) -> None: ...


def decode_batch(batch: RaftBatch) -> list[MetadataRecord]:
    """The metadata records of a data batch (``MetadataParseError`` for one Kafka
    would refuse)."""
    return [decode_record(value) for value in batch.values if value is not None]


class MetadataLoader:
    """See the module docstring."""

    def __init__(
        self, publishers: Sequence[MetadataPublisher] = (), *, catch_up_offset: int = -1
    ) -> None:
        self.image: MetadataImage = EMPTY_IMAGE
        self._publishers = list(publishers)
        self.catch_up_offset = catch_up_offset
        # records committed since the published image: each replayed at publication
        self._pending: list[MetadataRecord] = []
        self._pending_snapshot = False
        self._provenance = self.image.provenance
        self._batches = 0
        self._bytes = 0
        # inside a metadata transaction: where in _pending it began
        self._transaction_start: int | None = None

    # -- publishers ---------------------------------------------------------------------

    def install_publisher(self, publisher: MetadataPublisher) -> None:
        """Add ``publisher``; it gets the current image at once if there is one."""
        self._publishers.append(publisher)
        if not self.image.is_empty():
            delta = MetadataDelta(EMPTY_IMAGE)
            for record in self.image.records():
                delta.replay(record)
            publisher.on_metadata_update(delta, self.image, SnapshotManifest(self.image.provenance))

    def remove_publisher(self, publisher: MetadataPublisher) -> None:
        self._publishers.remove(publisher)

    # -- input --------------------------------------------------------------------------

    @property
    def offset(self) -> int:
        """The last offset loaded (published or not)."""
        return self._provenance.last_offset

    def load_snapshot(
        self, records: Iterable[MetadataRecord], provenance: MetadataProvenance
    ) -> None:
        """Replace everything loaded with a snapshot's ``records``."""
        self._pending = list(records)
        self._pending_snapshot = True
        self._transaction_start = None
        self._provenance = provenance
        self._maybe_publish()

    def handle_commit(self, batches: Iterable[RaftBatch]) -> None:
        """Committed batches, in offset order (control batches only move the offset)."""
        for batch in batches:
            self._batches += 1
            self._bytes += batch.header.size_in_bytes
            self._provenance = MetadataProvenance(
                batch.last_offset, batch.epoch, batch.header.max_timestamp
            )
            if batch.is_control:
                continue
            for record in decode_batch(batch):
                self._add(record)
        self._maybe_publish()

    def _add(self, record: MetadataRecord) -> None:
        match record.type:
            case T.BEGIN_TRANSACTION_RECORD:
                if self._transaction_start is not None:
                    log.warning("a metadata transaction began inside another")
                self._transaction_start = len(self._pending)
            case T.END_TRANSACTION_RECORD:
                self._transaction_start = None
            case T.ABORT_TRANSACTION_RECORD:
                if self._transaction_start is not None:
                    del self._pending[self._transaction_start :]
                self._transaction_start = None
            case _:
                self._pending.append(record)

    # -- output -------------------------------------------------------------------------

    def _maybe_publish(self) -> None:
        if self._transaction_start is not None or self.offset < self.catch_up_offset:
            return
        if not self._pending and not self._pending_snapshot and self._batches == 0:
            return
        delta = MetadataDelta(self.image)
        for record in self._pending:
            delta.replay(record)
        manifest: LoaderManifest
        if self._pending_snapshot:
            delta.finish_snapshot()
            manifest = SnapshotManifest(self._provenance)
        else:
            manifest = LogDeltaManifest(self._provenance, self._batches, self._bytes)
        self.image = delta.apply(self._provenance)
        self._pending = []
        self._pending_snapshot = False
        self._batches = self._bytes = 0
        for publisher in self._publishers:
            publisher.on_metadata_update(delta, self.image, manifest)
