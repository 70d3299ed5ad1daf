"""The partitions this broker holds (Kafka's ``ReplicaManager``, plus the topic admin a
single node does itself): a :class:`~kafkacore.server.partition.Partition` per
partition over the :class:`~kafkacore.log.LogManager`'s logs, created from the
:class:`~kafkacore.metadata.MetadataCache`'s partition states (Kafka's
``becomeLeaderOrFollower``), and every append to them, ``__consumer_offsets`` included.

Single node: topic creation, new partitions, config changes and deletion write the
:class:`~kafkacore.metadata.MetadataStore` (the controller's part); the replica manager,
a store listener registered before the metadata cache, applies each change (logs,
partitions, leadership) before the cache shows it, so a handler that finds a topic in the
cache finds its partitions here. This node leads every partition; see
:mod:`~kafkacore.server.partition` for the high watermark and the last stable offset.

Producer state: the broker's logs carry a ``ProducerStateManager`` that validates
``(producer id, epoch, sequence)`` under the log's lock; a duplicate is acked with its
original offsets (:meth:`Partition.append_records_to_leader`), out-of-order sequences and
fenced epochs propagate as ``OutOfOrderSequenceError`` / ``InvalidProducerEpochError``.

Dynamic broker configs: :meth:`ReplicaManager.reconfigure` (a listener of the
:class:`~kafkacore.server.services.BrokerConfigHolder`) re-derives every topic's
:class:`LogConfig`, so topic defaults such as ``log.retention.ms`` apply live.

Offline log directories (Kafka's ``handleLogDirFailure``): :meth:`handle_log_dir_failure`
stops serving every partition whose log is in the failed directory - fetchers dropped,
leadership given up, the partition moved from the table to :meth:`offline_partitions`
(produce, fetch, LeaderAndIsr and StopReplica answer KAFKA_STORAGE_ERROR for them), the
logs closed by the log manager.

Thread-safety: the partition table is guarded by a lock; topic admin and appends may run
on I/O threads (:meth:`append_records` does, and wakes delayed fetches back on the event
loop). The purgatory is event-loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

from kafkacore.config import BrokerConfig, LogConfig
from kafkacore.errors import OffsetOutOfRangeError, error_code_for
from kafkacore.log import (
    FetchDataInfo,
    Log,
    LogAppendInfo,
    LogManager,
    TimestampAndOffset,
    TopicPartition,
)
from kafkacore.log.log import AppendOrigin
from kafkacore.log.remote.errors import OffsetMovedToTieredStorageError
from kafkacore.log.remote.manager import RemoteStorageFetchInfo
from kafkacore.log.txn_index import AbortedTxn
from kafkacore.log.validator import validate_produce_records
from kafkacore.metadata import (
    BrokerInfo,
    MetadataCache,
    MetadataListener,
    MetadataStore,
    PartitionState,
    TopicMetadata,
)
from kafkacore.net import NodeClient, broker_client, inter_broker_security
from kafkacore.protocol import APIS, ApiKey, ErrorCode
from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrRequest, LeaderAndIsrResponse
from kafkacore.protocol.messages.stop_replica import StopReplicaRequest, StopReplicaResponse
from kafkacore.protocol.messages.update_metadata import UpdateMetadataRequest
from kafkacore.protocol.requests import (
    NO_EPOCH,
    LeaderAndIsrPartition,
    leader_and_isr_partition_states,
    stop_replica_partitions,
    update_metadata_partition_states,
)
from kafkacore.server.delayed import (
    DelayedFetch,
    DelayedRemoteFetch,
    FetchPurgatory,
    ProducePurgatory,
)
from kafkacore.server.metrics import BrokerMetrics
from kafkacore.server.partition import (
    AlterPartitionSubmitter,
    FencedLeaderEpochError,
    FetchIsolation,
    FetchParams,
    FetchPartitionData,
    KafkaStorageError,
    LogReadInfo,
    NotLeaderOrFollowerError,
    Partition,
    RemoteOffsetSearch,
    UnknownLeaderEpochError,
    UnknownTopicOrPartitionError,
)
from kafkacore.server.replication_quota import ReplicationQuota
from kafkacore.server.tiering import TieredStorage

if TYPE_CHECKING:
    from kafkacore.server.replica_fetcher import RunIo

__all__ = [
    "INTERNAL_TOPICS",
    "MAX_TOPIC_NAME_LENGTH",
    "ListOffsetsResult",
    "LogReadResult",
    "OffsetLookup",
    "ReplicaManager",
    "TxnMarker",
    "topic_name_error",
]

logger = logging.getLogger("kafkacore.server")

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
_GROUP_METADATA_TOPIC = "__consumer_offsets"


# StopReplica leader epochs that always apply (Kafka's LeaderAndIsr.EpochDuringDelete/NoEpoch)
_EPOCH_DURING_DELETE = -2
# UpdateMetadata leader of a partition being deleted (LeaderAndIsr.LeaderDuringDelete)
_LEADER_DURING_DELETE = -2
_ZERO_UUID = uuid.UUID(int=0)


LeadershipChange = Callable[
    [list[tuple[TopicPartition, int]], list[tuple[TopicPartition, int]]], None
]
"""Told, on the event loop, which partitions became leaders and which followers here, with
their leader epochs (Kafka's ``onLeadershipChange``: the coordinators load or drop their
``__consumer_offsets`` and ``__transaction_state`` partitions)."""


class ReplicaFetcherManagerLike(Protocol):
    """What the replica manager asks of the
    :class:`~kafkacore.server.replica_fetcher.ReplicaFetcherManager`."""

    def add_partitions(self, partitions: Mapping[TopicPartition, tuple[int, int, int]]) -> None: ...

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> None: ...


def topic_name_error(name: str) -> str | None:
    """Kafka's ``Topic.validate`` message for an illegal name, else ``None``."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return (
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, "
            f"topic name: {name}"
        )
    if not _LEGAL_TOPIC.fullmatch(name):
        return (
            f'Topic name "{name}" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'"
        )
    return None


class InlineAppends:
    """Whether the broker may run small appends on its event loop (see
    ``handlers/produce.py``): yes, unless one of them took longer than ``slow_s`` within
    the last ``pause_s`` - a disk that stalls writes into the page cache (writeback
    throttling, a failing device) then gets every append on the I/O threads again, where
    a stall holds up only its own request. Used on the event loop only."""

    slow_s = 0.05
    pause_s = 5.0

    def __init__(self) -> None:
        self._paused_until = 0.0

    def allowed(self) -> bool:
        return time.monotonic() >= self._paused_until

    def took(self, seconds: float) -> None:
        """An inline append took ``seconds``."""
        if seconds > self.slow_s:
            self._paused_until = time.monotonic() + self.pause_s
            logger.info(
                "An append on the event loop took %.1f ms: appends run on the I/O threads "
                "for the next %.0f s",
                seconds * 1000,
                self.pause_s,
            )


class LogReadResult(NamedTuple):
    """One partition's answer to a Fetch (Kafka's ``LogReadResult``): its error code, the
    records' file region (``None``: no records), the truncation point of a diverged
    follower, the offsets the answer carries (-1: unknown) and, for a read_committed
    consumer, the aborted transactions overlapping what it read. A consumer's read below
    a tiered log's local start carries the remote read to make (``remote_fetch``, Kafka's
    ``delayedRemoteStorageFetch``), then the records it read (``remote_records``). (A
    tuple: one is made per partition read.)"""

    topic_partition: TopicPartition
    error_code: int = ErrorCode.NONE
    fetched: FetchDataInfo | None = None
    diverging_epoch: tuple[int, int] | None = None
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    aborted_transactions: Sequence[AbortedTxn] = ()
    remote_fetch: RemoteStorageFetchInfo | None = None
    remote_records: bytes | None = None


class OffsetLookup(NamedTuple):
    """One partition of a ListOffsets (Kafka's ``ListOffsetsPartition``): the timestamp
    to look up (or a special one: -1 latest, -2 earliest, -3 max timestamp, -4 earliest
    local, -5 latest tiered, -6 earliest pending upload) and the requester's leader epoch
    (-1: not checked)."""

    topic_partition: TopicPartition
    timestamp: int
    current_leader_epoch: int = -1


class ListOffsetsResult(NamedTuple):
    """One partition's ListOffsets answer: its error code and what was found (``None``:
    not found, offset and timestamp -1)."""

    error_code: int
    found: TimestampAndOffset | None = None


# the first ListOffsets version that knows each special timestamp (Kafka's
# ReplicaManager.timestampMinSupportedVersion); any other negative one is unsupported
_TIMESTAMP_MIN_VERSION = {-2: 1, -1: 1, -3: 7, -4: 8, -5: 9, -6: 11}


@dataclass(frozen=True, slots=True)
class TxnMarker:
    """One transaction's COMMIT or ABORT marker for some partitions (Kafka's
    ``TxnMarkerEntry``): the producer and its epoch, the coordinator epoch, the result."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    committed: bool
    partitions: Sequence[TopicPartition]


class ReplicaManager(MetadataListener):
    """See the module documentation. ``config()`` is the broker config in force;
    ``topic_config_loader(topic)`` (cluster mode) reads a topic's config overrides from
    ZooKeeper into the cache before its first log is made; ``metrics`` counts the
    followers' appends; ``tiering`` (KIP-405) is told of leadership, deletions and config
    changes."""

    def __init__(
        self,
        config: Callable[[], BrokerConfig],
        logs: LogManager,
        store: MetadataStore,
        cache: MetadataCache,
        node_id: int,
        io_executor: Executor | None = None,
        purgatory: FetchPurgatory | None = None,
        *,
        topic_config_loader: Callable[[str], Awaitable[None]] | None = None,
        metrics: BrokerMetrics | None = None,
        tiering: TieredStorage | None = None,
    ) -> None:
        self._config = config
        #: tiered storage (KIP-405), told of leadership, deletions and config changes
        self.tiering = tiering
        self.logs = logs
        self.store = store
        self.cache = cache
        self.node_id = node_id
        self.io_executor = io_executor
        self.purgatory = purgatory or FetchPurgatory()
        self.produce_purgatory = ProducePurgatory()
        self.inline_appends = InlineAppends()
        self._partitions: dict[TopicPartition, Partition] = {}
        # partitions whose log directory failed (Kafka's HostedPartition.Offline)
        self._offline_partitions: set[TopicPartition] = set()
        self._lock = threading.Lock()
        # replication (cluster mode; all unset on a single node)
        self.broker_epoch = -1  # this broker's epoch (czxid of its registration); -1: no check
        self.controller_epoch = -1  # the latest controller epoch seen
        # made by start_replication (cluster mode)
        self.alter_partition_manager: AlterPartitionSubmitter | None = None
        self.fetcher_manager: ReplicaFetcherManagerLike | None = None
        self._topic_config_loader = topic_config_loader
        self._metrics = metrics
        self._loop: asyncio.AbstractEventLoop | None = None
        self._checkpointed_hws: dict[TopicPartition, int] | None = None
        self._replication_tasks: list[asyncio.Task[None]] = []
        # topic admin one at a time: a topic is visible in the cache as soon as the store
        # has it, its partitions only once applied; ensure_topic must not see the former
        # alone
        self._admin_lock = threading.RLock()
        # KIP-73 replication throttles: bytes this broker sends as leader / fetches as
        # follower for the partitions its topics' *.replication.throttled.replicas name
        initial = config()
        self.leader_quota = ReplicationQuota(
            initial.leader_replication_throttled_rate,
            samples=initial.replication_quota_window_num,
            window_size_s=initial.replication_quota_window_size_seconds,
        )
        self.follower_quota = ReplicationQuota(
            initial.follower_replication_throttled_rate,
            samples=initial.replication_quota_window_num,
            window_size_s=initial.replication_quota_window_size_seconds,
        )
        # KIP-890 verification requests to other brokers' transaction coordinators (Kafka's
        # AddPartitionsToTxnManager), one connection per broker; event loop only
        self._txn_verification_clients: dict[int, NodeClient] = {}

    @property
    def config(self) -> BrokerConfig:
        """The broker config in force."""
        return self._config()

    # -- start-up --------------------------------------------------------------------------

    def load(self) -> None:
        """Make the logs and the stored topics agree: every stored partition gets its log
        (with the topic's config and id) and its :class:`Partition`; logs of unknown
        topics are adopted (written to the store as topics of this node)."""
        for topic in self.cache.topics():
            self.logs.update_topic_config(topic.name, self.topic_config(topic.name))
            self._apply_topic(topic)
        orphans: dict[str, list[Log]] = {}
        for log in self.logs.all_logs():
            if not self.cache.contains_topic(log.topic_partition.topic):
                orphans.setdefault(log.topic_partition.topic, []).append(log)
        for name, logs in orphans.items():
            ids = {log.topic_id for log in logs if log.topic_id is not None}
            count = max(log.topic_partition.partition for log in logs) + 1
            # applied through on_topic_changed
            self.store.create_topic(
                name, self._assignment(count), {}, next(iter(ids)) if ids else None
            )
            logger.info("Adopted topic %s (%d partitions) found on disk", name, count)

    def _assignment(self, partitions: int) -> list[list[int]]:
        """Single node: every replica here."""
        return [[self.node_id] for _ in range(partitions)]

    def _apply_topic(self, topic: TopicMetadata) -> None:
        """Kafka's ``becomeLeaderOrFollower`` for ``topic``'s partitions led here: the log
        (created if missing) and the partition made leader with the stored state."""
        config = self.topic_config(topic.name, topic.configs)
        led: list[Partition] = []
        for index, state in enumerate(topic.partitions):
            if state.leader != self.node_id:
                continue  # followers arrive with replication
            tp = TopicPartition(topic.name, index)
            if tp in self._offline_partitions:
                continue  # its log directory failed
            with self._lock:
                partition = self._partitions.get(tp)
            if partition is None:
                log = self.logs.get_or_create_log(topic.name, index, config, topic.topic_id)
                partition = self._new_partition(tp, log)
                with self._lock:
                    partition = self._partitions.setdefault(tp, partition)
            partition.make_leader(state)
            led.append(partition)
        if self.tiering is not None:
            self.tiering.on_leadership(led, [])

    def _new_partition(self, tp: TopicPartition, log: Log) -> Partition:
        partition = Partition(
            tp,
            log,
            self.node_id,
            alter_partition=self.alter_partition_manager,
            is_broker_alive=self.cache.is_broker_alive,
        )
        partition.on_high_watermark = self._on_high_watermark
        partition.log_manager = self.logs
        partition.replica_lag_time_max_ms = self.config.replica_lag_time_max_ms
        return partition

    def set_alter_partition_manager(self, manager: AlterPartitionSubmitter | None) -> None:
        """Where partitions led here propose ISR changes (cluster mode)."""
        self.alter_partition_manager = manager
        for partition in self.partitions():
            partition.alter_partition = manager

    def topic_id_of(self, tp: TopicPartition) -> uuid.UUID | None:
        log = self.get_log(tp.topic, tp.partition)
        return log.topic_id if log is not None else None

    def _on_high_watermark(self, tp: TopicPartition) -> None:
        """A partition's high watermark or leadership changed (any thread): delayed
        produces re-check, delayed fetches re-read (on the event loop)."""
        self.produce_purgatory.wake(tp)
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self.purgatory.wake(tp)
        else:
            loop.call_soon_threadsafe(self.purgatory.wake, tp)

    # -- MetadataListener (the store's changes, applied before the cache sees them) --------

    def on_topic_changed(self, topic: TopicMetadata) -> None:
        self.logs.update_topic_config(topic.name, self.topic_config(topic.name, topic.configs))
        self.update_throttled_replicas(topic.name, topic.configs)
        self._apply_topic(topic)
        self._tiering_config_changed(topic.name)

    def _tiering_config_changed(self, topic: str) -> None:
        if self.tiering is not None:
            self.tiering.on_config_changed(
                p for p in self.partitions() if p.topic_partition.topic == topic
            )

    def on_topic_deleted(self, name: str) -> None:
        with self._lock:
            gone = [tp for tp in self._partitions if tp.topic == name]
            topic_ids = {tp: self._partitions[tp].log.topic_id for tp in gone}
            for tp in gone:
                del self._partitions[tp]
            self._offline_partitions -= {tp for tp in self._offline_partitions if tp.topic == name}
        if self.tiering is not None:
            self.tiering.on_deleted(topic_ids)
        for tp in gone:
            self.logs.delete_log(tp)
        self.leader_quota.remove_throttle(name)
        self.follower_quota.remove_throttle(name)

    def on_topic_configs_changed(self, name: str, configs: Mapping[str, str]) -> None:
        """Cluster mode: a topic config change (ZooKeeper notification) applies to its
        logs and to the replication throttles here."""
        self.logs.update_topic_config(name, self.topic_config(name, configs))
        self.update_throttled_replicas(name, configs)
        self._tiering_config_changed(name)

    # -- replication throttles (KIP-73) ----------------------------------------------------

    def update_throttled_replicas(self, topic: str, configs: Mapping[str, str]) -> None:
        """``topic``'s ``leader``/``follower.replication.throttled.replicas`` as this
        broker's throttled partitions (Kafka's ``TopicConfigHandler``)."""
        for quota, key in (
            (self.leader_quota, "leader.replication.throttled.replicas"),
            (self.follower_quota, "follower.replication.throttled.replicas"),
        ):
            try:
                quota.update_throttled_replicas(topic, configs.get(key), self.node_id)
            except ValueError:
                logger.warning("Ignoring invalid %s of topic %s: %r", key, topic, configs[key])

    def should_leader_throttle(self, partition: Partition, replica_id: int) -> bool:
        """A follower's fetch of ``partition`` gets no records now (Kafka's
        ``shouldLeaderThrottle``): the follower is not in the ISR, the partition is
        throttled here and the leader quota is exceeded."""
        tp = partition.topic_partition
        quota = self.leader_quota
        return (
            replica_id not in partition.isr
            and quota.is_throttled(tp.topic, tp.partition)
            and quota.is_quota_exceeded()
        )

    # -- topics ----------------------------------------------------------------------------

    def topic_config(self, name: str, overrides: Mapping[str, str] | None = None) -> LogConfig:
        if overrides is None:
            overrides = self.cache.topic_configs(name) or {}
        return LogConfig(dict(overrides), self.config)

    def create_topic(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str] | None = None,
        *,
        assignment: Sequence[Sequence[int]] | None = None,
    ) -> TopicMetadata:
        """Create ``name`` with ``assignment`` (default: every partition on this node): the
        store, then (as its listener) the logs and partitions. Raises ``ConfigError`` before
        the store is touched when ``configs`` are refused (an internal topic's segment.bytes
        below Kafka's 1 MiB minimum, say: the store would keep a topic whose every config
        read raises). Blocking (file writes): off the event loop."""
        self.topic_config(name, dict(configs or {}))
        with self._admin_lock:
            replicas = assignment if assignment is not None else self._assignment(partitions)
            topic = self.store.create_topic(name, replicas, configs)
        logger.info(
            "Created topic %s with %d partition(s), id %s", name, partitions, topic.topic_id
        )
        return topic

    def ensure_topic(
        self, name: str, partitions: int, configs: Mapping[str, str] | None = None
    ) -> None:
        """Create ``name`` unless it exists; either way its partitions are in place on
        return (a concurrent creation is waited for). Blocking: off the event loop."""
        with self._admin_lock:
            if not self.cache.contains_topic(name):
                self.create_topic(name, partitions, configs)

    def add_partitions(
        self, name: str, count: int, *, new_replicas: Sequence[Sequence[int]] | None = None
    ) -> None:
        """Grow ``name`` to ``count`` partitions, the new ones on ``new_replicas`` (default:
        this node). Blocking: off the event loop."""
        with self._admin_lock:
            topic = self.cache.topic(name)
            existing = [list(p.replicas) for p in topic.partitions] if topic is not None else []
            added = (
                [list(r) for r in new_replicas]
                if new_replicas is not None
                else self._assignment(count)[len(existing) :]
            )
            self.store.set_partitions(name, existing + added)

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        """Replace ``name``'s overrides (validated); its logs take them as the store's
        listener."""
        self.store.set_topic_configs(name, configs)

    def delete_topic(self, name: str) -> TopicMetadata | None:
        """Delete ``name`` and its logs; the deleted partitions, for the caller to wake
        their delayed fetches on the event loop. Blocking: off the event loop."""
        with self._admin_lock:
            topic = self.store.delete_topic(name)  # partitions and logs go as its listener
            if topic is None:
                return None
        logger.info("Deleted topic %s", name)
        return topic

    # -- partitions ------------------------------------------------------------------------

    def get_partition(self, tp: TopicPartition) -> Partition | None:
        return self._partitions.get(tp)

    def partition(self, topic: str, partition: int) -> Partition | None:
        return self._partitions.get(TopicPartition(topic, partition))

    def is_offline(self, tp: TopicPartition) -> bool:
        """Whether ``tp``'s log was in a log directory that failed."""
        return tp in self._offline_partitions

    def offline_partitions(self) -> list[TopicPartition]:
        with self._lock:
            return sorted(self._offline_partitions)

    def handle_log_dir_failure(
        self, log_dir: str, on_leadership_change: LeadershipChange | None = None
    ) -> list[TopicPartition]:
        """Stop serving the partitions in the failed ``log_dir`` (Kafka's
        ``ReplicaManager.handleLogDirFailure``): their fetchers go, they leave the
        partition table for the offline set (leaderships given up: delayed produces and
        fetches are answered, ``on_leadership_change`` hears of the partitions no longer
        led), then the log manager closes and drops the directory's logs. The partitions,
        in order. Blocking: on an I/O thread."""
        key = os.path.abspath(log_dir)
        with self._lock:
            failed = {
                tp: p for tp, p in self._partitions.items() if os.path.dirname(p.log.dir) == key
            }
        fetchers = self.fetcher_manager
        if fetchers is not None and failed:
            fetchers.remove_partitions(set(failed))
        with self._lock:
            for tp in failed:
                self._partitions.pop(tp, None)
            self._offline_partitions.update(failed)
        led = [(tp, p.leader_epoch) for tp, p in failed.items() if p.is_leader]
        for partition in failed.values():
            partition.stop_leading()
        gone = self.logs.handle_log_dir_failure(key)
        with self._lock:
            self._offline_partitions.update(gone)
        for tp in failed:
            self._on_high_watermark(tp)
        if led and on_leadership_change is not None:
            loop = self._loop
            if loop is not None and not loop.is_closed():
                # the coordinators drop the groups they kept in those partitions
                loop.call_soon_threadsafe(on_leadership_change, [], led)
        logger.warning(
            "Broker %d stopped fetchers and leadership for partitions %s because they are "
            "in the failed log directory %s",
            self.node_id,
            ",".join(str(tp) for tp in sorted(failed)) or "(none)",
            key,
        )
        return sorted(set(failed) | set(gone))

    def partitions(self) -> list[Partition]:
        with self._lock:
            return list(self._partitions.values())

    def get_log(self, topic: str, partition: int) -> Log | None:
        found = self._partitions.get(TopicPartition(topic, partition))
        return found.log if found is not None else None

    def high_watermarks(self) -> dict[TopicPartition, int]:
        """Every partition's high watermark (for ``replication-offset-checkpoint``)."""
        return {p.topic_partition: p.high_watermark for p in self.partitions()}

    # -- reads -----------------------------------------------------------------------------

    async def fetch_messages(
        self,
        params: FetchParams,
        partitions: Sequence[tuple[TopicPartition, FetchPartitionData]],
    ) -> list[LogReadResult]:
        """A Fetch's partitions, in order (Kafka's ``fetchMessages``): read at once
        (:meth:`read_from_log`, follower fetch state updated). When a consumer's partition
        lies below a tiered log's local start, the first such one is read from the remote
        tier and awaited (:meth:`_fetch_remote`); otherwise, with fewer than
        ``params.min_bytes`` and no error, a :class:`DelayedFetch` waits up to
        ``params.max_wait_ms`` for appends to them and re-reads without updating the
        follower state. On the event loop; the remote read never runs on it."""
        results = self.read_from_log(params, partitions, update_fetch_state=True)
        remote = next((r for r in results if r.remote_fetch is not None), None)
        if remote is not None:
            return await self._fetch_remote(remote, results)
        if _fetch_complete(params, results) or not partitions:
            return results
        delayed = DelayedFetch(
            self.purgatory,
            [tp for tp, _fetch in partitions],
            params.max_wait_ms,
            lambda: self.read_from_log(params, partitions, update_fetch_state=False),
            lambda found: _fetch_complete(params, found),
        )
        return await delayed.complete(results)

    async def _fetch_remote(
        self, remote: LogReadResult, results: list[LogReadResult]
    ) -> list[LogReadResult]:
        """Kafka's ``processRemoteFetch`` and ``DelayedRemoteFetch``: ``remote``'s read
        from the bucket, on the remote log manager's reader pool, awaited at most
        ``remote.fetch.max.wait.ms`` (or until a partition of the fetch is no longer
        hosted here); the other partitions keep what they read. Not read in time: the
        partition answers no records and no error; a read that failed: its error code."""
        info = remote.remote_fetch
        assert info is not None and self.tiering is not None
        index = results.index(remote)
        try:
            read = self.tiering.async_read(info)
        except Exception as exc:  # too many pending reads (Kafka's RejectedExecution)
            logger.warning("Unable to fetch %s from remote storage: %s", info.topic_partition, exc)
            results[index] = LogReadResult(remote.topic_partition, error_code_for(exc))
            return results
        tps = [r.topic_partition for r in results]
        delayed = DelayedRemoteFetch(
            self.purgatory,
            tps,
            self.config.remote_fetch_max_wait_ms,
            read,
            lambda: all(self.get_partition(tp) is not None for tp in tps),
        )
        done = await delayed.complete()
        if done is None:
            results[index] = remote._replace(remote_fetch=None)
        elif done.error is not None:
            results[index] = LogReadResult(remote.topic_partition, error_code_for(done.error))
        else:
            fetched = done.fetched
            assert fetched is not None
            results[index] = remote._replace(
                remote_fetch=None,
                remote_records=fetched.records,
                aborted_transactions=fetched.aborted_transactions,
            )
        return results

    def read_from_log(
        self,
        params: FetchParams,
        partitions: Sequence[tuple[TopicPartition, FetchPartitionData]],
        *,
        update_fetch_state: bool,
    ) -> list[LogReadResult]:
        """Kafka's ``readFromLog``: each partition in turn, at most its ``max_bytes`` and
        what is left of ``params.max_bytes``, the first batch found returned whole
        (KIP-74)."""
        remaining = max(0, params.max_bytes)
        total = 0
        results: list[LogReadResult] = []
        for tp, fetch in partitions:
            result = self._read_partition(
                params,
                tp,
                fetch,
                max(0, min(fetch.max_bytes, remaining)),
                total == 0,
                update_fetch_state,
            )
            if result.fetched is not None:
                total += result.fetched.length
                remaining -= result.fetched.length
            results.append(result)
        return results

    def _read_partition(
        self,
        params: FetchParams,
        tp: TopicPartition,
        fetch: FetchPartitionData,
        max_bytes: int,
        min_one_message: bool,
        update_fetch_state: bool,
    ) -> LogReadResult:
        """One partition (Kafka's ``readFromLog.read``): not hosted -> NOT_LEADER_OR_FOLLOWER
        (KAFKA_STORAGE_ERROR when its log directory failed); the partition's own checks
        and read (:meth:`Partition.fetch_records`); a throttled follower's records held
        back (KIP-73); a read_committed consumer's aborted transactions."""
        partition = self.get_partition(tp)
        if partition is None:
            offline = self.is_offline(tp)
            return LogReadResult(
                tp,
                ErrorCode.KAFKA_STORAGE_ERROR if offline else ErrorCode.NOT_LEADER_OR_FOLLOWER,
            )
        try:
            info = partition.fetch_records(
                params, fetch, max_bytes, min_one_message, update_fetch_state
            )
        except (NotLeaderOrFollowerError, FencedLeaderEpochError, UnknownLeaderEpochError) as exc:
            return LogReadResult(tp, exc.error_code)
        read_error = info.read_error
        if isinstance(read_error, OffsetMovedToTieredStorageError):
            return self._tiered_offset(params, tp, fetch, max_bytes, min_one_message, info)
        if read_error is not None:
            # the offsets stay only with OFFSET_OUT_OF_RANGE (the consumer resets from them)
            out_of_range = isinstance(read_error, OffsetOutOfRangeError)
            return LogReadResult(
                tp,
                error_code_for(read_error),
                high_watermark=info.high_watermark if out_of_range else -1,
                last_stable_offset=info.last_stable_offset if out_of_range else -1,
                log_start_offset=info.log_start_offset,
            )
        fetched = info.fetched
        aborted: Sequence[AbortedTxn] = ()
        if fetched is None or fetched.length == 0:
            fetched = None
        elif params.replica_id >= 0 and self.should_leader_throttle(partition, params.replica_id):
            fetched = None  # KIP-73: no records while the leader's throttle is exceeded
        elif params.isolation is FetchIsolation.TXN_COMMITTED:
            aborted = partition.log.aborted_transactions_for(fetched)
        return LogReadResult(
            tp,
            ErrorCode.NONE,
            fetched,
            info.diverging_epoch,
            info.high_watermark,
            info.last_stable_offset,
            info.log_start_offset,
            aborted,
        )

    def _tiered_offset(
        self,
        params: FetchParams,
        tp: TopicPartition,
        fetch: FetchPartitionData,
        max_bytes: int,
        min_one_message: bool,
        info: LogReadInfo,
    ) -> LogReadResult:
        """Kafka's ``handleOffsetOutOfRangeError`` for an offset below a tiered log's local
        start: a follower is answered OFFSET_MOVED_TO_TIERED_STORAGE with the offsets (it
        builds its state from the remote tier); a consumer's read is to be made from the
        remote tier (none while the remote fetch quota is exceeded); without a remote log
        manager, OFFSET_OUT_OF_RANGE."""
        if self.tiering is None:
            return LogReadResult(
                tp,
                ErrorCode.OFFSET_OUT_OF_RANGE,
                high_watermark=info.high_watermark,
                last_stable_offset=info.last_stable_offset,
                log_start_offset=info.log_start_offset,
            )
        if params.is_from_follower:
            return LogReadResult(
                tp,
                ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE,
                high_watermark=info.high_watermark,
                log_start_offset=info.log_start_offset,
            )
        remote = None
        if not self.tiering.fetch_throttled():
            remote = RemoteStorageFetchInfo(
                tp,
                fetch.fetch_offset,
                max_bytes,
                min_one_message,
                params.isolation is FetchIsolation.TXN_COMMITTED,
            )
        return LogReadResult(
            tp,
            ErrorCode.NONE,
            high_watermark=info.high_watermark,
            last_stable_offset=info.last_stable_offset,
            log_start_offset=info.log_start_offset,
            remote_fetch=remote,
        )

    async def fetch_offsets(
        self,
        lookups: Sequence[OffsetLookup],
        isolation: FetchIsolation,
        version: int,
        timeout_ms: int = 0,
    ) -> list[ListOffsetsResult]:
        """ListOffsets' partitions, in order (Kafka's ``fetchOffset``): a special
        timestamp the request's version does not know is UNSUPPORTED_VERSION; each other
        one asks :meth:`fetch_offset_for_timestamp`, its error code from what it raised.
        Searches under way in tiered logs are awaited together (Kafka's
        ``DelayedRemoteListOffsets``), off the event loop, for ``timeout_ms`` (ListOffsets
        v10's, KIP-1075) or else ``remote.list.offsets.request.timeout.ms``; one not done
        by then is REQUEST_TIMED_OUT."""
        results: list[ListOffsetsResult] = []
        pending: dict[int, RemoteOffsetSearch] = {}
        for lookup in lookups:
            timestamp = lookup.timestamp
            minimum = _TIMESTAMP_MIN_VERSION.get(timestamp, 0 if timestamp >= 0 else None)
            if minimum is None or version < minimum:
                results.append(ListOffsetsResult(ErrorCode.UNSUPPORTED_VERSION))
                continue
            try:
                found = self.fetch_offset_for_timestamp(
                    lookup.topic_partition,
                    lookup.timestamp,
                    isolation,
                    lookup.current_leader_epoch,
                )
            except Exception as exc:
                results.append(ListOffsetsResult(error_code_for(exc)))
                continue
            if isinstance(found, RemoteOffsetSearch):
                pending[len(results)] = found
                results.append(ListOffsetsResult(ErrorCode.REQUEST_TIMED_OUT))
            else:
                results.append(ListOffsetsResult(ErrorCode.NONE, found))
        if pending:
            delay_ms = timeout_ms
            if delay_ms <= 0:
                delay_ms = self.config.remote_list_offsets_request_timeout_ms
            searches = {index: asyncio.wrap_future(p.search) for index, p in pending.items()}
            await asyncio.wait(searches.values(), timeout=delay_ms / 1000)
            for index, search in searches.items():
                if not search.done():
                    search.cancel()  # REQUEST_TIMED_OUT stays
                    continue
                failure = search.exception()
                if failure is not None:
                    results[index] = ListOffsetsResult(error_code_for(failure))
                    continue
                hit = search.result()
                if hit is not None and hit.offset >= pending[index].last_fetchable_offset:
                    hit = None  # not fetchable yet under the isolation level
                results[index] = ListOffsetsResult(ErrorCode.NONE, hit)
        return results

    def fetch_offset_for_timestamp(
        self,
        tp: TopicPartition,
        timestamp: int,
        isolation: FetchIsolation,
        current_leader_epoch: int = -1,
    ) -> TimestampAndOffset | RemoteOffsetSearch | None:
        """ListOffsets for one partition (Kafka's ``fetchOffsetForTimestamp``): see
        :meth:`Partition.fetch_offset_for_timestamp` (a timestamp on a tiered log is
        searched by the tiered storage, under way when returned). A partition not hosted
        here raises ``UnknownTopicOrPartitionError`` (``KafkaStorageError`` when its log
        directory failed)."""
        return self._hosted_partition(tp).fetch_offset_for_timestamp(
            timestamp, isolation, current_leader_epoch, self.tiering
        )

    def last_offset_for_leader_epoch(
        self, tp: TopicPartition, current_leader_epoch: int, leader_epoch: int
    ) -> tuple[int, int] | None:
        """OffsetForLeaderEpoch for one partition, on its leader (Kafka's
        ``lastOffsetForLeaderEpoch``): see :meth:`Partition.last_offset_for_leader_epoch`;
        a partition not hosted here raises as :meth:`fetch_offset_for_timestamp`."""
        return self._hosted_partition(tp).last_offset_for_leader_epoch(
            current_leader_epoch, leader_epoch
        )

    def _hosted_partition(self, tp: TopicPartition) -> Partition:
        partition = self.get_partition(tp)
        if partition is None:
            if self.is_offline(tp):
                raise KafkaStorageError(f"The log directory of {tp} is offline")
            raise UnknownTopicOrPartitionError(f"This server does not host {tp}")
        return partition

    # -- appends ---------------------------------------------------------------------------

    def append_to_leader(
        self,
        partition: Partition,
        records: bytes,
        *,
        required_acks: int = 1,
        origin: AppendOrigin = AppendOrigin.CLIENT,
        verification_guard: tuple[int, int] | None = None,
    ) -> LogAppendInfo:
        """Append ``records`` to ``partition`` as leader, on the calling thread; the
        caller wakes the delayed fetches (:meth:`FetchPurgatory.wake`) on the event loop.
        See :meth:`Partition.append_records_to_leader` for what is refused."""
        return partition.append_records_to_leader(
            records,
            required_acks=required_acks,
            origin=origin,
            verification_guard=verification_guard,
        )

    def append_client_records(
        self,
        partition: Partition,
        records: bytes | bytearray | memoryview | None,
        *,
        required_acks: int = 1,
        verification_guard: tuple[int, int] | None = None,
    ) -> LogAppendInfo:
        """One partition's records of a Produce, on the calling thread: exactly one
        magic-2 batch (:func:`~kafkacore.log.validator.validate_produce_records`, asked
        before the partition as Kafka's ``KafkaApis`` does), then :meth:`append_to_leader`
        (leadership, ``acks=-1`` ISR size, the log's validator). Raises what they raise."""
        data = validate_produce_records(records)
        return partition.append_records_to_leader(
            data, required_acks=required_acks, verification_guard=verification_guard
        )

    async def append_records(
        self,
        partition: Partition,
        records: bytes,
        *,
        required_acks: int = 1,
        origin: AppendOrigin = AppendOrigin.CLIENT,
    ) -> LogAppendInfo:
        """:meth:`append_to_leader` on the I/O executor (the event loop stays free during
        the write, a roll or a ``flush.messages`` fsync); delayed fetches of the
        partition are woken here, back on the loop."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        info = await loop.run_in_executor(
            self.io_executor,
            lambda: self.append_to_leader(
                partition, records, required_acks=required_acks, origin=origin
            ),
        )
        self.purgatory.wake(partition.topic_partition)
        return info

    async def append_txn_marker(
        self,
        partition: Partition,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
    ) -> LogAppendInfo:
        """:meth:`Partition.append_txn_marker` (``acks=-1``: refused under
        ``min.insync.replicas``) on the I/O executor; delayed fetches of the partition
        (read_committed ones wait for the last stable offset) are woken back on the loop.
        The caller waits for the replication (:meth:`wait_for_replication`)."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        info = await loop.run_in_executor(
            self.io_executor,
            lambda: partition.append_txn_marker(
                producer_id, producer_epoch, coordinator_epoch, commit, required_acks=-1
            ),
        )
        self.purgatory.wake(partition.topic_partition)
        return info

    async def append_txn_markers(
        self,
        markers: Sequence[TxnMarker],
        timeout_ms: int,
        on_offsets_marker: Callable[[int, int, bool], Awaitable[None]] | None = None,
    ) -> list[list[int]]:
        """Write transaction markers as leader (Kafka's ``handleWriteTxnMarkersRequest``
        over ``appendRecords`` with ``AppendOrigin.COORDINATOR`` and ``acks=-1``), for the
        WriteTxnMarkers handler and the coordinator's marker channel alike: per marker,
        per partition in order, the error code. A partition not hosted here is
        UNKNOWN_TOPIC_OR_PARTITION (KAFKA_STORAGE_ERROR when its log directory failed);
        the append's refusals carry their codes (NOT_LEADER_OR_FOLLOWER,
        NOT_ENOUGH_REPLICAS, INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED, ...);
        the markers written then wait for the high watermark up to ``timeout_ms``
        (:meth:`wait_for_replication`). A marker that reached ``__consumer_offsets-N``
        is then told to ``on_offsets_marker(N, producer id, committed)`` (the group
        coordinator's ``onTransactionCompleted``); its failure does not change the
        answer, the marker is written. On the event loop."""
        codes: list[list[int]] = []
        # (marker index, partition index in it, partition, offset the HW must reach)
        written: list[tuple[int, int, TopicPartition, int]] = []
        for m, marker in enumerate(markers):
            marker_codes: list[int] = []
            codes.append(marker_codes)
            for i, tp in enumerate(marker.partitions):
                marker_codes.append(ErrorCode.NONE)
                partition = self.get_partition(tp)
                if partition is None:
                    marker_codes[i] = (
                        ErrorCode.KAFKA_STORAGE_ERROR
                        if self.is_offline(tp)
                        else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    )
                    continue
                try:
                    info = await self.append_txn_marker(
                        partition,
                        marker.producer_id,
                        marker.producer_epoch,
                        marker.coordinator_epoch,
                        marker.committed,
                    )
                except Exception as exc:
                    code = error_code_for(exc)
                    if code == ErrorCode.UNKNOWN_SERVER_ERROR:
                        logger.exception("Error writing a transaction marker to %s", tp)
                    else:
                        logger.debug("Transaction marker for %s refused: %s", tp, exc)
                    marker_codes[i] = code
                    continue
                written.append((m, i, tp, info.last_offset + 1))
        if written:
            replicated = await self.wait_for_replication(
                [(tp, offset) for _m, _i, tp, offset in written], timeout_ms
            )
            for (m, i, _tp, _offset), code in zip(written, replicated, strict=True):
                codes[m][i] = code
        if on_offsets_marker is not None:
            for m, i, tp, _offset in written:
                if tp.topic != _GROUP_METADATA_TOPIC or codes[m][i] != ErrorCode.NONE:
                    continue
                marker = markers[m]
                try:
                    await on_offsets_marker(tp.partition, marker.producer_id, marker.committed)
                except Exception:  # the marker is written: the answer stands
                    logger.exception(
                        "The group coordinator failed to complete the transaction of "
                        "producer %d on %s",
                        marker.producer_id,
                        tp,
                    )
        return codes

    async def wait_for_replication(
        self, required: Sequence[tuple[TopicPartition, int]], timeout_ms: int
    ) -> list[ErrorCode]:
        """Kafka's ``DelayedProduce`` for ``acks=-1`` appends: for each ``(partition,
        offset its high watermark must reach)`` the outcome of
        :meth:`check_enough_replicas_reach_offset` once decided - NONE,
        NOT_ENOUGH_REPLICAS_AFTER_APPEND or NOT_LEADER_OR_FOLLOWER - and
        REQUEST_TIMED_OUT for what is still waiting after ``timeout_ms``. Re-checked on
        every high watermark move."""
        codes: list[ErrorCode | None] = [None] * len(required)
        deadline = time.monotonic() + max(0, timeout_ms) / 1000
        while True:
            waiting: list[TopicPartition] = []
            for index, (tp, offset) in enumerate(required):
                if codes[index] is not None:
                    continue
                code = self.check_enough_replicas_reach_offset(tp, offset)
                if code is None:
                    waiting.append(tp)
                else:
                    codes[index] = code
            remaining = deadline - time.monotonic()
            if not waiting or remaining <= 0:
                break
            # re-checked once the waiter is registered: a move on an I/O thread between
            # the check above and the registration is not lost (it would have cost the
            # 0.5 s bound, a latency tail); the bound stays as a safety net
            watched = set(waiting)
            pairs = [(tp, offset) for tp, offset in required if tp in watched]

            def ready(pairs: list[tuple[TopicPartition, int]] = pairs) -> bool:
                return any(
                    self.check_enough_replicas_reach_offset(tp, offset) is not None
                    for tp, offset in pairs
                )

            await self.produce_purgatory.wait(waiting, min(remaining, 0.5), ready)
        return [ErrorCode.REQUEST_TIMED_OUT if code is None else code for code in codes]

    async def verify_transaction_remotely(
        self,
        coordinator_id: int,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
    ) -> dict[TopicPartition, int]:
        """Ask the transaction coordinator on broker ``coordinator_id`` whether
        ``partitions`` are in the producer's transaction (AddPartitionsToTxn v4
        ``VerifyOnly``, Kafka's ``AddPartitionsToTxnManager``); the error per partition,
        NETWORK_EXCEPTION when the broker cannot be reached, COORDINATOR_NOT_AVAILABLE
        when it is not known."""
        unreachable = dict.fromkeys(partitions, int(ErrorCode.NETWORK_EXCEPTION))
        client = self._txn_verification_clients.get(coordinator_id)
        if client is None or client.closed:
            broker = self.cache.broker(coordinator_id)
            if broker is None:
                return dict.fromkeys(partitions, int(ErrorCode.COORDINATOR_NOT_AVAILABLE))
            client = broker_client(self.config, broker, f"broker-{self.node_id}-txn-verification")
            self._txn_verification_clients[coordinator_id] = client
        api = APIS[ApiKey.ADD_PARTITIONS_TO_TXN]
        cls = api.request.cls
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(partitions):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = cls(
            transactions=[
                cls.AddPartitionsToTxnTransaction(
                    transactional_id=transactional_id,
                    producer_id=producer_id,
                    producer_epoch=producer_epoch,
                    verify_only=True,
                    topics=[
                        cls.AddPartitionsToTxnTopic(name=name, partitions=indexes)
                        for name, indexes in by_topic.items()
                    ],
                )
            ]
        )
        try:
            response = await client.send(api, 4, request)
        except (ConnectionError, TimeoutError, OSError) as exc:
            logger.info("Transaction verification with broker %d failed: %s", coordinator_id, exc)
            self._txn_verification_clients.pop(coordinator_id, None)
            return unreachable
        if response.error_code != ErrorCode.NONE:
            return dict.fromkeys(partitions, int(response.error_code))
        answers: dict[TopicPartition, int] = {}
        for result in response.results_by_transaction:
            for topic in result.topic_results:
                for p in topic.results_by_partition:
                    answers[TopicPartition(topic.name, p.partition_index)] = p.partition_error_code
        for tp in partitions:
            answers.setdefault(tp, int(ErrorCode.NETWORK_EXCEPTION))
        return answers

    def check_enough_replicas_reach_offset(
        self, tp: TopicPartition, required_offset: int
    ) -> ErrorCode | None:
        """A delayed ``acks=-1`` produce's state for one partition (Kafka's
        ``checkEnoughReplicasReachOffset``): ``None`` while the high watermark is below
        ``required_offset``; NONE once it is there with enough replicas in sync;
        NOT_ENOUGH_REPLICAS_AFTER_APPEND when it is there but the ISR shrank below the
        minimum; NOT_LEADER_OR_FOLLOWER when this broker no longer leads."""
        partition = self.get_partition(tp)
        if partition is None or not partition.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if partition.high_watermark < required_offset:
            return None
        min_isr = (
            partition.effective_min_isr()
            if len(partition.replicas) > 1
            else partition.log.config.min_insync_replicas
        )
        if len(partition.maximal_isr) < min_isr:
            return ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return ErrorCode.NONE

    # -- replication: controller requests ------------------------------------------------

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop delayed fetches wait on (woken from I/O threads through it)."""
        self._loop = loop

    def _check_controller(self, controller_epoch: int, broker_epoch: int) -> ErrorCode:
        """The request-wide checks of LeaderAndIsr, UpdateMetadata and StopReplica."""
        if controller_epoch < self.controller_epoch:
            return ErrorCode.STALE_CONTROLLER_EPOCH
        if self.broker_epoch >= 0 and broker_epoch != -1 and broker_epoch < self.broker_epoch:
            return ErrorCode.STALE_BROKER_EPOCH
        return ErrorCode.NONE

    async def become_leader_or_follower(
        self,
        request: LeaderAndIsrRequest,
        version: int,
        on_leadership_change: LeadershipChange | None = None,
    ) -> LeaderAndIsrResponse:
        """LeaderAndIsr (Kafka's ``becomeLeaderOrFollower``): request-wide controller and
        broker epoch checks, then per partition: INCONSISTENT_TOPIC_ID, this broker not a
        replica -> UNKNOWN_TOPIC_OR_PARTITION, a leader epoch not above ours ->
        STALE_CONTROLLER_EPOCH; the others become leaders or followers (logs created on
        the I/O executor), fetchers stopped or started; ``on_leadership_change`` is told
        of the new leaders and followers (Kafka's callback from ``KafkaApis``)."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        entries = list(leader_and_isr_partition_states(request))
        code = self._check_controller(request.controller_epoch, request.broker_epoch)
        errors: dict[tuple[str, int], ErrorCode] = {}
        if code == ErrorCode.NONE and self._topic_config_loader is not None:
            # Kafka reads a new topic's config from ZooKeeper when it makes its log
            for topic in {t for t, _i, _ps in entries}:
                if not self.cache.knows_topic_configs(topic):
                    await self._topic_config_loader(topic)
                # the logs loaded at start-up had no topic config yet (Kafka's LogManager
                # reads the overrides from ZooKeeper when it loads them)
                if self.logs.logs_by_topic(topic):
                    self.logs.update_topic_config(topic, self.topic_config(topic))
        if code == ErrorCode.NONE:
            self.controller_epoch = request.controller_epoch
            self.cache.set_controller(request.controller_id)
            errors, new_leaders, new_followers = await loop.run_in_executor(
                self.io_executor, self._apply_leader_and_isr, entries
            )
            if on_leadership_change is not None:
                # KafkaApis' onLeadershipChange: the coordinators load or drop partitions
                on_leadership_change(new_leaders, new_followers)
        else:
            errors = {(t, ps.partition_index): code for t, _i, ps in entries}
        return self._leader_and_isr_response(version, code, entries, errors)

    def _leader_and_isr_response(
        self,
        version: int,
        code: ErrorCode,
        entries: list[LeaderAndIsrPartition],
        errors: Mapping[tuple[str, int], ErrorCode],
    ) -> LeaderAndIsrResponse:
        cls = LeaderAndIsrResponse
        if version < 5:
            return cls(
                error_code=code,
                partition_errors=[
                    cls.LeaderAndIsrPartitionError(
                        topic_name=t,
                        partition_index=ps.partition_index,
                        error_code=errors.get((t, ps.partition_index), ErrorCode.NONE),
                    )
                    for t, _i, ps in entries
                ],
            )
        by_topic: dict[
            str, tuple[uuid.UUID | None, list[LeaderAndIsrResponse.LeaderAndIsrPartitionError]]
        ] = {}
        for t, topic_id, ps in entries:
            by_topic.setdefault(t, (topic_id, []))[1].append(
                cls.LeaderAndIsrPartitionError(
                    partition_index=ps.partition_index,
                    error_code=errors.get((t, ps.partition_index), ErrorCode.NONE),
                )
            )
        return cls(
            error_code=code,
            topics=[
                cls.LeaderAndIsrTopicError(topic_id=topic_id or _ZERO_UUID, partition_errors=pe)
                for topic_id, pe in by_topic.values()
            ],
        )

    def _apply_leader_and_isr(
        self, entries: list[LeaderAndIsrPartition]
    ) -> tuple[
        dict[tuple[str, int], ErrorCode],
        list[tuple[TopicPartition, int]],
        list[tuple[TopicPartition, int]],
    ]:
        errors: dict[tuple[str, int], ErrorCode] = {}
        leaders: list[tuple[Partition, PartitionState]] = []
        followers: list[tuple[Partition, PartitionState]] = []
        for topic, topic_id, ps in entries:
            key = (topic, ps.partition_index)
            tp = TopicPartition(topic, ps.partition_index)
            state = PartitionState(
                tuple(ps.replicas),
                ps.leader,
                ps.leader_epoch,
                tuple(ps.isr),
                ps.partition_epoch,
            )
            if tp in self._offline_partitions:
                errors[key] = ErrorCode.KAFKA_STORAGE_ERROR
                continue
            partition = self.get_partition(tp)
            if (
                partition is not None
                and topic_id is not None
                and partition.log.topic_id is not None
                and partition.log.topic_id != topic_id
            ):
                errors[key] = ErrorCode.INCONSISTENT_TOPIC_ID
                continue
            if self.node_id not in state.replicas:
                errors[key] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            current_epoch = partition.leader_epoch if partition is not None else -1
            if partition is not None and state.leader_epoch <= current_epoch:
                logger.info(
                    "Ignoring LeaderAndIsr for %s: leader epoch %d not above %d",
                    tp,
                    state.leader_epoch,
                    current_epoch,
                )
                errors[key] = ErrorCode.STALE_CONTROLLER_EPOCH
                continue
            try:
                if partition is None:
                    config = self.topic_config(topic)
                    log = self.logs.get_or_create_log(
                        topic, ps.partition_index, config, topic_id, ps.is_new
                    )
                    created = self._new_partition(tp, log)
                    self.update_throttled_replicas(topic, self.cache.topic_configs(topic) or {})
                    checkpointed = self._checkpointed_high_watermark(tp)
                    if checkpointed is not None:
                        created.initialize_high_watermark(checkpointed)
                    with self._lock:
                        partition = self._partitions.setdefault(tp, created)
            except Exception as exc:
                logger.exception("Cannot create the log of %s", tp)
                errors[key] = ErrorCode(error_code_for(exc))
                if errors[key] == ErrorCode.KAFKA_STORAGE_ERROR:
                    # no log while a log dir is offline: it may have been there
                    with self._lock:
                        self._offline_partitions.add(tp)
                continue
            errors[key] = ErrorCode.NONE
            if state.leader == self.node_id:
                leaders.append((partition, state))
            else:
                followers.append((partition, state))
        fetchers = self.fetcher_manager
        if fetchers is not None and leaders:
            fetchers.remove_partitions({p.topic_partition for p, _s in leaders})
        now = int(time.monotonic() * 1000)
        for partition, state in leaders:
            partition.make_leader(state, now, record_epoch_start=True)
            logger.info(
                "%s: leader at epoch %d, ISR %s",
                partition.topic_partition,
                state.leader_epoch,
                list(state.isr),
            )
        to_fetch: dict[TopicPartition, tuple[int, int, int]] = {}
        for partition, state in followers:
            partition.make_follower(state)
            if fetchers is not None:
                fetchers.remove_partitions({partition.topic_partition})
            if state.leader >= 0:
                to_fetch[partition.topic_partition] = (
                    state.leader,
                    partition.log.log_end_offset,
                    state.leader_epoch,
                )
        if fetchers is not None and to_fetch:
            fetchers.add_partitions(to_fetch)
        if self.tiering is not None:
            self.tiering.on_leadership([p for p, _s in leaders], [p for p, _s in followers])
        return (
            errors,
            [(p.topic_partition, st.leader_epoch) for p, st in leaders],
            [(p.topic_partition, st.leader_epoch) for p, st in followers],
        )

    def maybe_update_metadata_cache(self, request: UpdateMetadataRequest) -> ErrorCode:
        """UpdateMetadata (Kafka's ``maybeUpdateMetadataCache``): after the controller and
        broker epoch checks, the cache takes the live brokers, the controller and the
        listed partitions' states (leader -2: the partition is dropped)."""
        code = self._check_controller(request.controller_epoch, request.broker_epoch)
        if code != ErrorCode.NONE:
            return code
        self.controller_epoch = request.controller_epoch
        self.cache.set_controller(request.controller_id)
        brokers = []
        for b in request.live_brokers:
            endpoints = tuple(
                (e.listener or "PLAINTEXT", e.host, e.port, e.security_protocol)
                for e in b.endpoints
            )
            if endpoints:
                host, port = endpoints[0][1], endpoints[0][2]
            else:
                host, port = b.v0_host, b.v0_port
            brokers.append(BrokerInfo(b.id, host, port, b.rack, endpoints))
        self.cache.set_alive_brokers(brokers)
        topics: dict[str, tuple[uuid.UUID | None, dict[int, PartitionState | None]]] = {}
        for topic, topic_id, ps in update_metadata_partition_states(request):
            entry = topics.setdefault(topic, (topic_id, {}))
            if ps.leader == _LEADER_DURING_DELETE:
                entry[1][ps.partition_index] = None
            else:
                entry[1][ps.partition_index] = PartitionState(
                    tuple(ps.replicas), ps.leader, ps.leader_epoch, tuple(ps.isr), ps.zk_version
                )
        for topic, (topic_id, states) in topics.items():
            self.cache.update_partition_states(topic, topic_id, states)
        return ErrorCode.NONE

    async def stop_replicas(
        self, request: StopReplicaRequest, version: int = 4
    ) -> StopReplicaResponse:
        """StopReplica (Kafka's ``stopReplicas``): after the request-wide checks, per
        partition a leader epoch older than ours -> FENCED_LEADER_EPOCH; otherwise the
        fetcher stops and, with ``delete_partition``, the partition and its log go."""
        response_cls = StopReplicaResponse
        entries: list[tuple[str, int, int, bool]] = list(stop_replica_partitions(request))
        code = self._check_controller(request.controller_epoch, request.broker_epoch)
        if code != ErrorCode.NONE:
            return response_cls(error_code=code, partition_errors=[])
        self.controller_epoch = request.controller_epoch
        loop = asyncio.get_running_loop()
        errors = await loop.run_in_executor(self.io_executor, self._stop_partitions, entries)
        for topic, index, _e, _d in entries:
            self._on_high_watermark(TopicPartition(topic, index))
        return response_cls(
            error_code=ErrorCode.NONE,
            partition_errors=[
                response_cls.StopReplicaPartitionError(
                    topic_name=topic, partition_index=index, error_code=errors[(topic, index)]
                )
                for topic, index, _e, _d in entries
            ],
        )

    def _stop_partitions(
        self, entries: list[tuple[str, int, int, bool]]
    ) -> dict[tuple[str, int], ErrorCode]:
        errors: dict[tuple[str, int], ErrorCode] = {}
        stopped: list[tuple[TopicPartition, bool]] = []
        for topic, index, epoch, delete in entries:
            tp = TopicPartition(topic, index)
            if tp in self._offline_partitions:
                errors[(topic, index)] = ErrorCode.KAFKA_STORAGE_ERROR
                continue
            partition = self.get_partition(tp)
            if (
                partition is not None
                and epoch not in (_EPOCH_DURING_DELETE, NO_EPOCH)
                and epoch < partition.leader_epoch
            ):
                errors[(topic, index)] = ErrorCode.FENCED_LEADER_EPOCH
                continue
            errors[(topic, index)] = ErrorCode.NONE
            stopped.append((tp, delete))
        if self.fetcher_manager is not None and stopped:
            self.fetcher_manager.remove_partitions({tp for tp, _d in stopped})
        if self.tiering is not None:
            self.tiering.on_deleted({tp: self.topic_id_of(tp) for tp, delete in stopped if delete})
        for tp, delete in stopped:
            if not delete:
                continue
            with self._lock:
                partition = self._partitions.pop(tp, None)
            if partition is not None:
                partition.stop_leading()
            try:
                self.logs.delete_log(tp)
            except Exception:
                logger.exception("Cannot delete the log of %s", tp)
                errors[(tp.topic, tp.partition)] = ErrorCode.KAFKA_STORAGE_ERROR
        return errors

    # -- replication: start and stop -------------------------------------------------------

    def start_replication(
        self, *, listener: str | None = None, run_io: RunIo | None = None
    ) -> None:
        """Cluster mode, on the event loop: the replica fetchers, the AlterPartition
        manager (its requests carry :attr:`broker_epoch`), the ``isr-expiration`` task and
        the periodic high watermark checkpoint. ``listener``: the inter-broker listener
        name whose endpoints are used (default: each broker's first); the connections are
        secured as :func:`~kafkacore.net.inter_broker_security` says."""
        from kafkacore.server.alter_partition import AlterPartitionManager
        from kafkacore.server.replica_fetcher import ReplicaFetcherManager

        loop = asyncio.get_running_loop()
        self._loop = loop
        security = inter_broker_security(self.config)
        metrics = self._metrics
        fetchers = ReplicaFetcherManager(
            self.node_id,
            self,
            self.cache,
            self._config,
            run_io=run_io,
            listener=listener,
            security=security,
            on_appended=None if metrics is None else metrics.record_replication_in,
        )
        fetchers.start()
        self.fetcher_manager = fetchers
        alter = AlterPartitionManager(
            self.node_id,
            self.cache,
            broker_epoch=lambda: self.broker_epoch,
            topic_id=self.topic_id_of,
            listener=listener,
            security=security,
        )
        alter.start()
        self.set_alter_partition_manager(alter)
        self._replication_tasks = [
            loop.create_task(self.run_isr_expiration(), name="isr-expiration"),
            loop.create_task(self.run_high_watermark_checkpoints(), name="hw-checkpoint"),
        ]

    async def shutdown_replication(self) -> None:
        """Stop what :meth:`start_replication` started (before the logs close): no
        fetcher appends afterwards."""
        from kafkacore.net.timeouts import stop_task

        for task in self._replication_tasks:
            await stop_task(task)
        self._replication_tasks = []
        fetchers = self.fetcher_manager
        if fetchers is not None and hasattr(fetchers, "shutdown"):
            await fetchers.shutdown()
        self.fetcher_manager = None
        alter = self.alter_partition_manager
        if alter is not None and hasattr(alter, "shutdown"):
            await alter.shutdown()
        clients, self._txn_verification_clients = self._txn_verification_clients, {}
        for client in clients.values():
            with contextlib.suppress(Exception):
                await client.close()
        self.produce_purgatory.wake_all()

    # -- replication: high watermark checkpoints -------------------------------------------

    def _checkpointed_high_watermark(self, tp: TopicPartition) -> int | None:
        """``tp``'s high watermark in ``replication-offset-checkpoint`` (read once)."""
        if self._checkpointed_hws is None:
            try:
                self._checkpointed_hws = self.logs.read_high_watermarks()
            except Exception:
                logger.exception("Cannot read the high watermark checkpoints")
                self._checkpointed_hws = {}
        return self._checkpointed_hws.get(tp)

    def high_watermark_of(self, tp: TopicPartition) -> int | None:
        """``tp``'s high watermark (bounds retention: Kafka deletes only below it)."""
        partition = self.get_partition(tp)
        return partition.high_watermark if partition is not None else None

    def checkpoint_high_watermarks(self) -> None:
        """Write ``replication-offset-checkpoint`` in every log dir. Blocking."""
        self.logs.checkpoint_high_watermarks(self.high_watermarks())

    async def run_high_watermark_checkpoints(self) -> None:
        """Every ``replica.high.watermark.checkpoint.interval.ms`` until cancelled, on the
        I/O executor."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.config.replica_high_watermark_checkpoint_interval_ms / 1000)
            try:
                await loop.run_in_executor(self.io_executor, self.checkpoint_high_watermarks)
            except Exception:
                logger.exception("High watermark checkpoint failed")

    # -- replication: ISR expiration -------------------------------------------------------

    def maybe_shrink_isrs(self, now: int | None = None) -> None:
        """One ``isr-expiration`` pass over the partitions led here."""
        lag_ms = self.config.replica_lag_time_max_ms
        for partition in self.partitions():
            if partition.is_leader and len(partition.replicas) > 1:
                partition.maybe_shrink_isr(now, lag_ms)

    async def run_isr_expiration(self) -> None:
        """The ``isr-expiration`` task: every ``replica.lag.time.max.ms / 2`` until
        cancelled."""
        self._loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.config.replica_lag_time_max_ms / 2000)
            try:
                self.maybe_shrink_isrs()
            except Exception:
                logger.exception("ISR expiration failed")

    # -- dynamic broker configs ------------------------------------------------------------

    def reconfigure(self, config: BrokerConfig) -> None:
        """``config`` is in force from now on: topic configs are re-derived so
        broker-level topic defaults apply live."""
        self.logs.reconfigure_default_log_config(LogConfig({}, config))
        self.leader_quota.update_quota(config.leader_replication_throttled_rate)
        self.follower_quota.update_quota(config.follower_replication_throttled_rate)
        for partition in self.partitions():
            partition.replica_lag_time_max_ms = config.replica_lag_time_max_ms
        for topic in self.cache.topics():
            self.logs.update_topic_config(topic.name, LogConfig(dict(topic.configs), config))


def _fetch_complete(params: FetchParams, results: Sequence[LogReadResult]) -> bool:
    """Whether a Fetch is answered now (Kafka's ``fetchMessages``/``DelayedFetch``): it
    has ``min_bytes``, or a partition has an error. (A plain loop: once per Fetch.)"""
    total = 0
    for result in results:
        if result.error_code != ErrorCode.NONE:
            return True
        fetched = result.fetched
        if fetched is not None:
            total += fetched.length
    return total >= params.min_bytes
