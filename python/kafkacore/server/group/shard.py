"""The group coordinator's shard: the classic groups and committed offsets of one
``__consumer_offsets`` partition (Kafka's ``GroupCoordinatorShard``, with its
``GroupMetadataManager`` and ``OffsetMetadataManager`` for classic groups), rebuilt from
the partition's records by ``replay`` and served once the coordinator runtime installs it
(:mod:`kafkacore.coordinator.runtime`). KIP-848 consumer groups live here too
(:attr:`GroupShard.consumer_groups`, record types 3-8 and 16 dispatched by
:meth:`GroupShard.replay`), as do KIP-932 share groups (:attr:`GroupShard.share_groups`,
10-15).

:class:`GroupsByPartition` is the coordinator's view of the groups of every installed
shard, by group id.

Thread-safety: a shard is replayed on an I/O thread before it is installed, then used on
the event loop only."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, MutableMapping, ValuesView

from kafkacore.coordinator import records as recs
from kafkacore.coordinator.consumer_group import CONSUMER_GROUP_RECORD_TYPES, ConsumerGroup
from kafkacore.coordinator.runtime import CoordinatorRecord, CoordinatorRuntime
from kafkacore.coordinator.share_group import SHARE_GROUP_RECORD_TYPES, ShareGroup
from kafkacore.server.group.group import EMPTY, STABLE, Group, Member, Offset

__all__ = ["GroupShard", "GroupsByPartition"]

logger = logging.getLogger("kafkacore.server.group")


class GroupShard:
    """The groups of ``__consumer_offsets-<partition>``. The last record of a key wins.

    Transactions (Kafka's ``OffsetMetadataManager.replay`` and
    ``replayEndTransactionMarker``): an offset in a transactional batch is pending under
    the batch's producer id; the producer's COMMIT marker materialises its pending
    offsets (each unless a later record already committed that partition), its ABORT
    marker drops them; a tombstone removes the partition's committed and pending offsets.
    Offsets still pending at the log end stay pending in their group
    (:attr:`Group.pending_txn`), for the marker the transaction coordinator will write."""

    def __init__(
        self, partition: int, on_loaded: Callable[[GroupShard], None] | None = None
    ) -> None:
        self.partition = partition
        self.groups: dict[str, Group] = {}
        self.consumer_groups: dict[str, ConsumerGroup] = {}
        """The KIP-848 consumer groups (a group id is in one of the maps)."""
        self.share_groups: dict[str, ShareGroup] = {}
        """The KIP-932 share groups."""
        self._on_loaded = on_loaded
        self._with_metadata: set[str] = set()
        self._pending_groups: dict[int, set[str]] = {}  # producer id -> groups it wrote

    def replay(self, record: CoordinatorRecord) -> None:
        try:
            key = recs.decode_key(record.key)
        except Exception as exc:  # a foreign record: skip it, as Kafka logs
            logger.warning("Skipping undecodable offsets record: %s", exc)
            return
        if isinstance(key, recs.OffsetCommitKey):
            self._replay_offset(key, record)
        elif isinstance(key, recs.GroupMetadataKey):
            self._replay_group(key, record.value)
        elif key.type in CONSUMER_GROUP_RECORD_TYPES:
            self._replay_consumer(key, record.key, record.value)
        elif key.type in SHARE_GROUP_RECORD_TYPES:
            self._replay_share(record.key, record.value)

    def replay_consumer_record(self, key: bytes, value: bytes | None) -> None:
        """Apply a consumer group record just appended (the coordinator's write path)."""
        decoded = recs.decode_key(key)
        if isinstance(decoded, recs.OffsetCommitKey):
            self._replay_offset(decoded, CoordinatorRecord(-1, -1, key, value))
        elif isinstance(decoded, recs.GroupMetadataKey):
            self._replay_group(decoded, value)
        elif decoded.type in CONSUMER_GROUP_RECORD_TYPES:
            self._replay_consumer(decoded, key, value)
        elif decoded.type in SHARE_GROUP_RECORD_TYPES:
            self._replay_share(key, value)

    def _replay_share(self, key_bytes: bytes, value: bytes | None) -> None:
        """Kafka's ``getOrMaybeCreatePersistedShareGroup`` then the record's replay: a
        value makes the group, the group epoch's tombstone deletes it."""
        decoded = recs.decode_record(key_bytes, value)
        group_id = decoded.key["groupId"]
        group = self.share_groups.get(group_id)
        if group is None:
            if value is None:
                return
            group = self.share_groups[group_id] = ShareGroup(group_id)
        group.replay(decoded.type, decoded.key, decoded.value)
        if group.deleted:
            del self.share_groups[group_id]

    def _replay_consumer(
        self, key: recs.CoordinatorRecord, key_bytes: bytes, value: bytes | None
    ) -> None:
        """Kafka's ``getOrMaybeCreatePersistedConsumerGroup`` then the record's replay: a
        value makes the group (a classic group known by offsets only gives it its
        offsets, as Kafka's simple group is replaced); the group epoch's tombstone
        deletes it (its offsets, if any remain, stay as a simple group's)."""
        decoded = recs.decode_record(key_bytes, value)
        group_id = decoded.key["groupId"]
        group = self.consumer_groups.get(group_id)
        if group is None:
            if value is None:
                return
            group = ConsumerGroup(group_id)
            simple = self.groups.pop(group_id, None)
            if simple is not None:
                group.take_offsets(simple)
            self.consumer_groups[group_id] = group
        group.replay(decoded.type, decoded.key, decoded.value)
        if group.deleted:
            del self.consumer_groups[group_id]
            if group.has_offsets():
                self.groups.setdefault(group_id, Group(group_id)).take_offsets(group)

    def offsets_owner(self, group_id: str) -> Group | ConsumerGroup | None:
        """Where ``group_id``'s offsets live: its consumer group, else its classic one."""
        return self.consumer_groups.get(group_id) or self.groups.get(group_id)

    def _replay_offset(self, key: recs.OffsetCommitKey, record: CoordinatorRecord) -> None:
        """An offset (or its tombstone) into its group: the consumer group of that id, else
        the classic group, made (as a simple group) by a value."""
        owner: Group | ConsumerGroup | None = self.offsets_owner(key.group)
        tp = (key.topic, key.partition)
        if record.value is None:
            if owner is not None:
                owner.remove_offset(tp)
            return
        v = recs.decode_offset_commit_value(record.value)
        if owner is None:
            owner = self.groups.setdefault(key.group, Group(key.group))
        expire = None if v.expire_timestamp == recs.NO_EXPIRE_TIMESTAMP else v.expire_timestamp
        offset = Offset(
            v.offset,
            v.leader_epoch,
            v.metadata,
            v.commit_timestamp,
            expire,
            record.offset,
            v.topic_id,
        )
        if record.producer_id >= 0:
            owner.add_pending_txn(record.producer_id, tp, offset)
            self._pending_groups.setdefault(record.producer_id, set()).add(key.group)
        else:
            owner.offsets[tp] = offset

    def _replay_group(self, key: recs.GroupMetadataKey, value: bytes | None) -> None:
        if value is None:
            old = self.groups.pop(key.group, None)
            self._with_metadata.discard(key.group)
            if old is not None and old.has_offsets():
                # the group's metadata is gone, not its offsets (Kafka keeps them apart)
                self.groups[key.group] = Group(key.group)
                self.groups[key.group].take_offsets(old)
            return
        self._with_metadata.add(key.group)
        g = recs.decode_group_metadata_value(value)
        group = self.groups.setdefault(key.group, Group(key.group))
        group.protocol_type, group.generation = g.protocol_type, g.generation
        group.protocol, group.leader = g.protocol, g.leader
        group.state_timestamp = g.current_state_timestamp
        # Kafka's GroupMetadata.loadGroup: the members of the stored generation come back,
        # Stable (Empty without members), so that a coordinator failover does not make
        # every member of every group rejoin; their sessions restart in on_loaded
        group.members = {
            m.member_id: Member(
                member_id=m.member_id,
                instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                session_timeout=m.session_timeout,
                rebalance_timeout=(
                    m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout
                ),
                protocol_type=g.protocol_type,
                protocols=[(g.protocol or "", m.subscription)],
                assignment=m.assignment,
            )
            for m in g.members
        }
        group.static = {
            m.group_instance_id: m.member_id for m in g.members if m.group_instance_id is not None
        }
        group.set_loaded_state(STABLE if group.members else EMPTY)

    def replay_end_transaction_marker(self, producer_id: int, committed: bool) -> None:
        for group_id in self._pending_groups.pop(producer_id, ()):
            group = self.offsets_owner(group_id)
            if group is not None:
                group.complete_transaction(producer_id, committed)

    def complete_transaction(self, producer_id: int, committed: bool) -> int:
        """A COMMIT or ABORT marker of ``producer_id`` written to this partition after the
        load (Kafka's ``onTransactionCompleted``): how many offsets were materialised."""
        owners: list[Group | ConsumerGroup] = [
            *self.groups.values(),
            *self.consumer_groups.values(),
        ]
        return sum(
            group.complete_transaction(producer_id, committed)
            for group in owners
            if producer_id in group.pending_txn
        )

    def on_loaded(self) -> None:
        """Installed: a group known only by offsets whose every offset was tombstoned is
        gone; the loaded members' sessions start now (Kafka's ``onGroupLoaded``)."""
        for group_id in [g for g, v in self.groups.items() if not v.has_offsets()]:
            if group_id not in self._with_metadata:
                del self.groups[group_id]
        self._with_metadata.clear()
        self._pending_groups.clear()
        for group in self.groups.values():
            for member in group.members.values():
                member.renew_session()
        if self.groups or self.consumer_groups or self.share_groups:
            logger.info(
                "Loaded %d groups of partition %d",
                len(self.groups) + len(self.consumer_groups) + len(self.share_groups),
                self.partition,
            )
        if self._on_loaded is not None:
            self._on_loaded(self)

    def on_unloaded(self) -> None:
        """Resigned: every group is Dead here and its waiting members are answered
        NOT_COORDINATOR (:meth:`Group.unload`)."""
        for group in self.groups.values():
            group.unload()
        if self.groups:
            logger.info("Unloaded %d groups of partition %d", len(self.groups), self.partition)
        self.groups.clear()
        self.consumer_groups.clear()
        self.share_groups.clear()


class GroupsByPartition(MutableMapping[str, Group]):
    """The groups of every installed shard, by group id: each lives in the shard of its
    ``__consumer_offsets`` partition. Storing a group for a partition not owned here is a
    ``KeyError`` (the coordinator checks ownership first)."""

    def __init__(self, runtime: CoordinatorRuntime[GroupShard]) -> None:
        self._runtime = runtime

    def _shard(self, group_id: str) -> GroupShard | None:
        return self._runtime.shard(self._runtime.topic.partition_for(group_id))

    def __getitem__(self, group_id: str) -> Group:
        shard = self._shard(group_id)
        if shard is None:
            raise KeyError(group_id)
        return shard.groups[group_id]

    def __setitem__(self, group_id: str, group: Group) -> None:
        shard = self._shard(group_id)
        if shard is None:
            raise KeyError(f"the partition of group {group_id} is not owned here")
        shard.groups[group_id] = group

    def __delitem__(self, group_id: str) -> None:
        shard = self._shard(group_id)
        if shard is None:
            raise KeyError(group_id)
        del shard.groups[group_id]

    def __iter__(self) -> Iterator[str]:
        for shard in self._runtime.shards():
            yield from list(shard.groups)

    def __len__(self) -> int:
        return sum(len(shard.groups) for shard in self._runtime.shards())

    def values(self) -> ValuesView[Group]:
        return _Values(self)


class _Values(ValuesView[Group]):
    """Every group, read straight from the shards (no lookup by id)."""

    def __init__(self, groups: GroupsByPartition) -> None:
        super().__init__(groups)
        self._groups = groups

    def __iter__(self) -> Iterator[Group]:
        for shard in self._groups._runtime.shards():
            yield from list(shard.groups.values())
