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

Thread-safety: the partition table is guarded by a lock; topic admin and appends may run
on I/O threads (:meth:`append_records` does, and wakes delayed fetches back on the event
loop). The purgatory is event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor

from kafkacore.config import BrokerConfig, LogConfig
from kafkacore.log import Log, LogAppendInfo, LogManager, TopicPartition
from kafkacore.log.log import AppendOrigin
from kafkacore.metadata import MetadataCache, MetadataStore, TopicMetadata
from kafkacore.server.delayed import FetchPurgatory
from kafkacore.server.partition import Partition

__all__ = ["INTERNAL_TOPICS", "MAX_TOPIC_NAME_LENGTH", "ReplicaManager", "topic_name_error"]

logger = logging.getLogger("kafkacore.server")

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


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


class ReplicaManager:
    def __init__(
        self,
        config: Callable[[], BrokerConfig],
        logs: LogManager,
        store: MetadataStore,
        cache: MetadataCache,
        node_id: int,
        io_executor: Executor | None = None,
        purgatory: FetchPurgatory | None = None,
    ) -> None:
        self._config = config
        self.logs = logs
        self.store = store
        self.cache = cache
        self.node_id = node_id
        self.io_executor = io_executor
        self.purgatory = purgatory or FetchPurgatory()
        self._partitions: dict[TopicPartition, Partition] = {}
        self._lock = threading.Lock()
        # topic admin one at a time: a topic is visible in the cache as soon as the store
        # has it, its partitions only once applied; ensure_topic must not see the former
        # alone
        self._admin_lock = threading.RLock()

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
        for index, state in enumerate(topic.partitions):
            if state.leader != self.node_id:
                continue  # followers arrive with replication
            tp = TopicPartition(topic.name, index)
            with self._lock:
                partition = self._partitions.get(tp)
            if partition is None:
                log = self.logs.get_or_create_log(topic.name, index, config, topic.topic_id)
                partition = Partition(tp, log, self.node_id)
                with self._lock:
                    partition = self._partitions.setdefault(tp, partition)
            partition.make_leader(state)

    # -- MetadataListener (the store's changes, applied before the cache sees them) --------

    def on_topic_changed(self, topic: TopicMetadata) -> None:
        self.logs.update_topic_config(topic.name, self.topic_config(topic.name, topic.configs))
        self._apply_topic(topic)

    def on_topic_deleted(self, name: str) -> None:
        with self._lock:
            gone = [tp for tp in self._partitions if tp.topic == name]
            for tp in gone:
                del self._partitions[tp]
        for tp in gone:
            self.logs.delete_log(tp)

    def on_broker_configs_changed(self, entity: str, configs: Mapping[str, str]) -> None:
        pass  # applied through the BrokerConfigHolder

    def on_cluster_id(self, cluster_id: str) -> None:
        pass

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
        """Create ``name`` (configs already validated) with ``assignment`` (default: every
        partition on this node): the store, then (as its listener) the logs and
        partitions. Blocking (file writes): off the event loop."""
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

    def partitions(self) -> list[Partition]:
        with self._lock:
            return list(self._partitions.values())

    def get_log(self, topic: str, partition: int) -> Log | None:
        found = self._partitions.get(TopicPartition(topic, partition))
        return found.log if found is not None else None

    def high_watermarks(self) -> dict[TopicPartition, int]:
        """Every partition's high watermark (for ``replication-offset-checkpoint``)."""
        return {p.topic_partition: p.high_watermark for p in self.partitions()}

    # -- appends ---------------------------------------------------------------------------

    def append_to_leader(
        self,
        partition: Partition,
        records: bytes,
        *,
        required_acks: int = 1,
        origin: AppendOrigin = AppendOrigin.CLIENT,
    ) -> LogAppendInfo:
        """Append ``records`` to ``partition`` as leader, on the calling thread; the
        caller wakes the delayed fetches (:meth:`FetchPurgatory.wake`) on the event loop.
        See :meth:`Partition.append_records_to_leader` for what is refused."""
        return partition.append_records_to_leader(
            records, required_acks=required_acks, origin=origin
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
        info = await loop.run_in_executor(
            self.io_executor,
            lambda: self.append_to_leader(
                partition, records, required_acks=required_acks, origin=origin
            ),
        )
        self.purgatory.wake(partition.topic_partition)
        return info

    # -- dynamic broker configs ------------------------------------------------------------

    def reconfigure(self, config: BrokerConfig) -> None:
        """``config`` is in force from now on: topic configs are re-derived so
        broker-level topic defaults apply live."""
        self.logs.reconfigure_default_log_config(LogConfig({}, config))
        for topic in self.cache.topics():
            self.logs.update_topic_config(topic.name, LogConfig(dict(topic.configs), config))
