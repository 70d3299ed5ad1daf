"""A group's committed offsets and the offsets of its open transactions, for both kinds of
group a ``__consumer_offsets`` shard keeps (the classic ``Group`` and the KIP-848
``ConsumerGroup``): Kafka 4.3.1's ``OffsetMetadataManager`` for one group id.

Kafka keeps them in nested ``TimelineHashMap``\\ s (group -> topic -> partition ->
offset; per producer id for the pending ones, with ``OpenTransactions`` group -> topic ->
partition -> producer ids), and the order those maps iterate is the order of the
tombstones it writes when a group is deleted (``deleteAllOffsets``). :class:`OffsetMap`
keeps the same shape (:class:`~kafkacore._java.TimelineHashMap`), so kafkacore writes
them in the same order.

Transactions (Kafka's ``OffsetMetadataManager.replay`` and ``replayEndTransactionMarker``):
an offset of a transactional batch is pending under the batch's producer id, invisible to
OffsetFetch; the producer's COMMIT marker materialises its pending offsets (each unless a
later record already committed that partition), its ABORT drops them; a tombstone removes
the partition's committed and pending offsets. Not thread-safe: a shard's groups live on
the event loop (or, before the shard is installed, on the I/O thread that loads it)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import TypeVar

from kafkacore._java import TimelineHashMap

__all__ = ["GroupOffsets", "Offset", "OffsetMap", "TopicPartitionKey"]

logger = logging.getLogger("kafkacore.server.group")

TopicPartitionKey = tuple[str, int]


@dataclass
class Offset:
    """A committed offset; ``expire_timestamp``: when it expires regardless of the
    group's state (an OffsetCommit v2-4 RetentionTimeMs), else ``None``: after
    ``offsets.retention.minutes``. ``record_offset``: where its record is in
    ``__consumer_offsets`` (Kafka's ``OffsetAndMetadata.recordOffset``; -1 unknown): a
    transactional offset materialised at its COMMIT marker replaces a committed one only
    if its record is the later one in the log. ``topic_id``: the id of the topic it was
    committed for (OffsetCommitValue v4), if known: an OffsetFetch v10 naming another id
    (the topic deleted and made again) finds no offset."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None = None
    record_offset: int = -1
    topic_id: uuid.UUID | None = None


_V = TypeVar("_V")


def _without_partition(
    topics: TimelineHashMap[str, TimelineHashMap[int, _V]], tp: TopicPartitionKey
) -> TimelineHashMap[str, TimelineHashMap[int, _V]]:
    """``topics`` (topic -> partition -> value) without ``tp``'s entry, a topic left with
    no partition removed; a fresh map once none is left (an emptied map is dropped, as
    Kafka drops it, so a later put starts a fresh one: iteration stays Kafka's order)."""
    partitions = topics[tp[0]]
    del partitions[tp[1]]
    if not partitions:
        del topics[tp[0]]
        if not topics:
            return TimelineHashMap()
    return topics


class OffsetMap(MutableMapping[TopicPartitionKey, Offset]):
    """Offsets by ``(topic, partition)``, kept as Kafka's ``Offsets`` keeps one group's
    (a ``TimelineHashMap`` of topics, each a ``TimelineHashMap`` of partitions; an emptied
    map is dropped, so a later put starts a fresh one): iteration is Kafka's order."""

    __slots__ = ("_topics",)

    def __init__(self) -> None:
        self._topics: TimelineHashMap[str, TimelineHashMap[int, Offset]] = TimelineHashMap()

    def __getitem__(self, tp: TopicPartitionKey) -> Offset:
        return self._topics[tp[0]][tp[1]]

    def __setitem__(self, tp: TopicPartitionKey, offset: Offset) -> None:
        self._topics.compute_if_absent(tp[0], lambda _t: TimelineHashMap())[tp[1]] = offset

    def __delitem__(self, tp: TopicPartitionKey) -> None:
        self._topics = _without_partition(self._topics, tp)

    def __contains__(self, tp: object) -> bool:
        if not isinstance(tp, tuple) or len(tp) != 2:
            return False
        partitions = self._topics.get(tp[0])
        return partitions is not None and tp[1] in partitions

    def __len__(self) -> int:
        return sum(len(partitions) for partitions in self._topics.values())

    def __iter__(self) -> Iterator[TopicPartitionKey]:
        return iter([(topic, p) for topic, partitions in self._topics.items() for p in partitions])

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{tp}: {o}" for tp, o in self.items()) + "}"


@dataclass(kw_only=True)
class GroupOffsets:
    """The offsets of one group id (see the module documentation): ``offsets`` committed,
    ``pending_txn`` written by open transactions, by producer id. A base of both kinds of
    group, so that the offsets go with the group id whatever its protocol."""

    offsets: OffsetMap = field(default_factory=OffsetMap, repr=False)
    pending_txn: dict[int, OffsetMap] = field(default_factory=dict, repr=False)
    """Transactional offsets whose transaction is not decided yet, by producer id (Kafka's
    ``pendingTransactionalOffsets``): invisible to OffsetFetch until the producer's COMMIT
    marker, dropped at its ABORT."""
    _open_txn: TimelineHashMap[str, TimelineHashMap[int, set[int]]] = field(
        default_factory=TimelineHashMap, repr=False
    )
    """Kafka's ``OpenTransactions`` of the group: topic -> partition -> producer ids."""

    def add_pending_txn(self, producer_id: int, tp: TopicPartitionKey, offset: Offset) -> None:
        """An offset written by ``producer_id``'s open transaction."""
        pending = self.pending_txn.get(producer_id)
        if pending is None:
            pending = self.pending_txn[producer_id] = OffsetMap()
        pending[tp] = offset
        partitions = self._open_txn.compute_if_absent(tp[0], lambda _t: TimelineHashMap())
        partitions.compute_if_absent(tp[1], lambda _p: set()).add(producer_id)

    def has_pending_txn(self, tp: TopicPartitionKey) -> bool:
        """Some open transaction wrote an offset of ``tp`` (Kafka's
        ``hasPendingTransactionalOffsets``: OffsetFetch with RequireStable answers
        UNSTABLE_OFFSET_COMMIT for it)."""
        partitions = self._open_txn.get(tp[0])
        return partitions is not None and tp[1] in partitions

    def _close_txn(self, tp: TopicPartitionKey, producer_id: int | None) -> None:
        partitions = self._open_txn.get(tp[0])
        if partitions is None or tp[1] not in partitions:
            return
        producers = partitions[tp[1]]
        if producer_id is None:
            producers.clear()
        else:
            producers.discard(producer_id)
        if not producers:
            self._open_txn = _without_partition(self._open_txn, tp)

    def drop_pending_txn(self, tp: TopicPartitionKey) -> None:
        """Forget every open transaction's offset of ``tp`` (a tombstone of ``tp``
        removes them too, as Kafka's ``OffsetMetadataManager.replay``)."""
        for producer_id, offsets in list(self.pending_txn.items()):
            offsets.pop(tp, None)
            if not offsets:
                del self.pending_txn[producer_id]
        self._close_txn(tp, None)

    def remove_offset(self, tp: TopicPartitionKey) -> None:
        """A tombstone of ``tp``: its committed offset and its open transactions' go."""
        self.offsets.pop(tp, None)
        self.drop_pending_txn(tp)

    def complete_transaction(self, producer_id: int, committed: bool) -> int:
        """Kafka's ``replayEndTransactionMarker`` for this group: ``producer_id``'s pending
        offsets become committed (each unless the committed offset's record is later in
        the log) or are dropped; how many were materialised."""
        pending = self.pending_txn.pop(producer_id, None)
        if not pending:
            return 0
        for tp in pending:
            self._close_txn(tp, producer_id)
        if not committed:
            return 0
        materialised = 0
        for tp, offset in pending.items():
            existing = self.offsets.get(tp)
            if existing is None or offset.record_offset > existing.record_offset:
                self.offsets[tp] = offset
                materialised += 1
            else:
                logger.info(
                    "Skipped the materialization of transactional offset commit %s for "
                    "producer id %d with topic %s, partition %d since its record offset %d "
                    "is smaller than the record offset %d of the last committed offset.",
                    offset,
                    producer_id,
                    tp[0],
                    tp[1],
                    offset.record_offset,
                    existing.record_offset,
                )
        return materialised

    def offsets_to_delete(self) -> list[TopicPartitionKey]:
        """Kafka's ``deleteAllOffsets``: every committed offset's partition, then every
        partition only an open transaction wrote, in the order Kafka writes their
        tombstones."""
        listed = list(self.offsets)
        for topic, partitions in self._open_txn.items():
            listed.extend((topic, p) for p in partitions if (topic, p) not in self.offsets)
        return listed

    def take_offsets(self, other: GroupOffsets) -> None:
        """The offsets of ``other`` (the group of the same id it replaces) become these."""
        self.offsets, self.pending_txn, self._open_txn = (
            other.offsets,
            other.pending_txn,
            other._open_txn,
        )

    def clear_offsets(self) -> None:
        """Every offset tombstoned (the group deleted)."""
        self.offsets = OffsetMap()
        self.pending_txn = {}
        self._open_txn = TimelineHashMap()

    def has_offsets(self) -> bool:
        return bool(self.offsets) or bool(self.pending_txn)
