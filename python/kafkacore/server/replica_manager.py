"""Partitions of a single-node broker over the :class:`~kafkacore.log.LogManager` and the
:class:`~kafkacore.metadata.MetadataStore` (Kafka's ``ReplicaManager`` + topic admin,
reduced to one replica).

This node leads every partition with leader epoch 0 (the topic's stored epoch); the ISR is
``[node]``, so the high watermark is the log end offset and the last stable offset is the
high watermark (no transactions yet). Appends wake the delayed fetches of the partition.

Producer state: the broker's logs carry a ``ProducerStateManager``
(``kafkacore.log.producer_state``) that validates ``(producer id, epoch, sequence)`` under
the log's lock before anything is written. :meth:`ReplicaManager.append` turns a
duplicate (a retry of one of the producer's last 5 batches) into a success carrying the
original offsets, as Kafka does; out-of-order sequences and fenced epochs propagate as
``OutOfOrderSequenceError`` / ``InvalidProducerEpochError`` (OUT_OF_ORDER_SEQUENCE_NUMBER /
INVALID_PRODUCER_EPOCH).

Dynamic broker configs: :meth:`ReplicaManager.reconfigure` swaps the broker config and
re-derives every topic's :class:`LogConfig` (topic defaults such as ``log.retention.ms``
or ``message.max.bytes`` apply live to topics without their own override).

Thread-safety: event loop thread only (the logs lock themselves).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from kafkacore.config import BrokerConfig, LogConfig
from kafkacore.log import Log, LogAppendInfo, LogManager, TopicPartition
from kafkacore.log.producer_state import DuplicateSequenceError
from kafkacore.metadata import MetadataStore, TopicMetadata
from kafkacore.server.delayed import FetchPurgatory

__all__ = ["MAX_TOPIC_NAME_LENGTH", "ReplicaManager", "topic_name_error"]

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
        config: BrokerConfig,
        logs: LogManager,
        store: MetadataStore,
        purgatory: FetchPurgatory | None = None,
    ) -> None:
        self.config = config
        self.logs = logs
        self.store = store
        self.purgatory = purgatory or FetchPurgatory()
        self.node_id = config.node_id if config.node_id >= 0 else 1

    # -- start-up --------------------------------------------------------------------------

    def load(self) -> None:
        """Make the logs and the stored topics agree: every stored partition gets its log
        (with the topic's config and id); logs of unknown topics are adopted."""
        for topic in self.store.topics():
            config = self.topic_config(topic.name)
            self.logs.update_topic_config(topic.name, config)
            for partition in range(topic.partitions):
                self.logs.get_or_create_log(topic.name, partition, config, topic.topic_id)
        orphans: dict[str, list[Log]] = {}
        for log in self.logs.all_logs():
            if self.store.topic(log.topic_partition.topic) is None:
                orphans.setdefault(log.topic_partition.topic, []).append(log)
        for name, logs in orphans.items():
            ids = {log.topic_id for log in logs if log.topic_id is not None}
            count = max(log.topic_partition.partition for log in logs) + 1
            topic = self.store.create_topic(name, count, {}, next(iter(ids)) if ids else None)
            logger.info("Adopted topic %s (%d partitions) found on disk", name, count)
            for partition in range(count):
                self.logs.get_or_create_log(name, partition, None, topic.topic_id)

    # -- topics ----------------------------------------------------------------------------

    def topic_config(self, name: str, overrides: Mapping[str, str] | None = None) -> LogConfig:
        if overrides is None:
            topic = self.store.topic(name)
            overrides = topic.configs if topic is not None else {}
        return LogConfig(dict(overrides), self.config)

    def create_topic(
        self, name: str, partitions: int, configs: Mapping[str, str] | None = None
    ) -> TopicMetadata:
        """Create ``name`` (configs already validated) with its logs."""
        config = self.topic_config(name, configs or {})
        topic = self.store.create_topic(name, partitions, configs)
        for partition in range(partitions):
            self.logs.get_or_create_log(name, partition, config, topic.topic_id)
        logger.info(
            "Created topic %s with %d partition(s), id %s", name, partitions, topic.topic_id
        )
        return topic

    def add_partitions(self, name: str, count: int) -> None:
        topic = self.store.topic(name)
        assert topic is not None
        config = self.topic_config(name)
        for partition in range(topic.partitions, count):
            self.logs.get_or_create_log(name, partition, config, topic.topic_id)
        self.store.set_partitions(name, count)

    def delete_topic(self, name: str) -> TopicMetadata | None:
        topic = self.store.delete_topic(name)
        if topic is None:
            return None
        for partition in range(topic.partitions):
            tp = TopicPartition(name, partition)
            self.logs.delete_log(tp)
            self.purgatory.wake(tp)
        logger.info("Deleted topic %s", name)
        return topic

    # -- partitions ------------------------------------------------------------------------

    def get_log(self, topic: str, partition: int) -> Log | None:
        return self.logs.get_log(TopicPartition(topic, partition))

    def leader_epoch(self, topic: str) -> int:
        t = self.store.topic(topic)
        return t.leader_epoch if t is not None else -1

    @staticmethod
    def high_watermark(log: Log) -> int:
        """Single replica: the ISR is the leader, so HW = LEO."""
        return log.log_end_offset

    @staticmethod
    def last_stable_offset(log: Log) -> int:
        """No transactions yet: LSO = HW."""
        return log.log_end_offset

    @staticmethod
    def check_producer_state(log: Log, duplicate: DuplicateSequenceError) -> LogAppendInfo:
        """The answer to a duplicate idempotent batch (Kafka's ``UnifiedLog.append`` with
        ``analyzeAndValidateProducerState`` finding it): nothing is written and the
        producer is acked with the offsets and timestamp of the batch already stored."""
        logger.debug("%s", duplicate)
        return LogAppendInfo(
            duplicate.first_offset,
            duplicate.last_offset,
            duplicate.timestamp,
            duplicate.last_offset,
            duplicate.timestamp,
            log.log_start_offset,
            0,
            None,
            0,
            0,
            0,
        )

    def append(self, log: Log, records: bytes) -> LogAppendInfo:
        """Append a client batch as leader. Idempotent batches are validated by the log's
        producer state: a duplicate is acked with its original offsets (see
        :meth:`check_producer_state`); other sequence/epoch errors propagate."""
        try:
            info = log.append_as_leader(records, self.leader_epoch(log.topic_partition.topic))
        except DuplicateSequenceError as duplicate:
            return self.check_producer_state(log, duplicate)
        self.purgatory.wake(log.topic_partition)
        return info

    # -- dynamic broker configs ------------------------------------------------------------

    def reconfigure(self, config: BrokerConfig) -> None:
        """Use ``config`` (the static config with new dynamic values) from now on: topic
        configs are re-derived so broker-level topic defaults apply live."""
        self.config = config
        self.logs.reconfigure_default_log_config(LogConfig({}, config))
        for topic in self.store.topics():
            self.logs.update_topic_config(topic.name, self.topic_config(topic.name))
