"""The broker's tiered storage (KIP-405): its remote log manager over an S3 bucket
and ``__remote_log_metadata``, built from the broker config, told by
the replica manager which partitions it leads and follows and which are deleted, and
asked by the replica manager's Fetch and ListOffsets paths for what lies below a log's
local start (Kafka's ``asyncRead`` and ``asyncOffsetRead``: futures on the remote log
manager's reader pool, which the replica manager awaits in a ``DelayedRemoteFetch`` or
a delayed ListOffsets).

``remote.log.storage.system.enable=true`` turns it on; the bucket is configured under
``rsm.config.`` (``remote.log.storage.manager.impl.prefix``; see
:mod:`kafkacore.log.remote.object_store`), the metadata topic under ``rlmm.config.``
(Kafka's ``remote.log.metadata.topic.num.partitions``, ``...replication.factor``,
``...retention.ms``, ``remote.log.metadata.consume.wait.ms``). The metadata manager is a
client of the broker's own listener (``remote.log.metadata.manager.listener.name``, else
the inter-broker listener), as Kafka's is: :meth:`TieredStorage.start` runs once the
listeners are bound; leadership changes heard before are kept and applied then.

Thread-safety: the leadership and deletion hooks run on the event loop and never block
(the managers' threads do the network work); reads run on the remote log manager's
reader pool.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from kafkacore.client.tiered import ClientMetadataTopic
from kafkacore.config import BrokerConfig
from kafkacore.log.files import TopicPartition
from kafkacore.log.log import TimestampAndOffset
from kafkacore.log.remote.errors import RemoteStorageNotReadyError
from kafkacore.log.remote.manager import (
    RemoteFetchResult,
    RemoteLogManager,
    RemoteLogManagerConfig,
    RemoteLogReadResult,
    RemoteStorageFetchInfo,
    TieringStatus,
)
from kafkacore.log.remote.metadata import TopicBasedRemoteLogMetadataManager
from kafkacore.log.remote.object_store import S3ObjectStore
from kafkacore.log.remote.storage import RemoteStorageManager

if TYPE_CHECKING:
    from kafkacore.log.manager import LogManager
    from kafkacore.server.partition import Partition

__all__ = ["TieredStorage"]

logger = logging.getLogger(__name__)

# rlmm.config. settings (Kafka's TopicBasedRemoteLogMetadataManagerConfig) and defaults
_RLMM_DEFAULTS = {
    "remote.log.metadata.topic.num.partitions": 50,
    "remote.log.metadata.topic.replication.factor": 3,
    "remote.log.metadata.topic.retention.ms": -1,
    "remote.log.metadata.consume.wait.ms": 120_000,
}


def _prefixed(config: BrokerConfig, prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in config.originals.items() if k.startswith(prefix)}


class TieredStorage:
    """See the module docstring. ``high_watermark(tp)`` is the partition's high watermark
    (the copy task tiers only what is below its last stable offset)."""

    def __init__(
        self,
        config: BrokerConfig,
        logs: LogManager,
        high_watermark: Callable[[TopicPartition], int],
        *,
        node_id: int,
    ) -> None:
        self.config = config
        self._logs = logs
        self._high_watermark = high_watermark
        self.node_id = node_id
        self.rsm = RemoteStorageManager(
            S3ObjectStore(_prefixed(config, config.remote_log_storage_manager_impl_prefix))
        )
        rlmm_values = {**_RLMM_DEFAULTS}
        rlmm_values.update(
            {
                k: int(v)
                for k, v in _prefixed(
                    config, config.remote_log_metadata_manager_impl_prefix
                ).items()
                if k in _RLMM_DEFAULTS
            }
        )
        self._rlmm_values = rlmm_values
        self.rlm_config = RemoteLogManagerConfig.from_values(config.values())
        self.rlm: RemoteLogManager | None = None
        self.rlmm: TopicBasedRemoteLogMetadataManager | None = None
        self._lock = threading.Lock()
        # leadership heard before start(): tp -> (topic id, leader epoch, leader?)
        self._pending: dict[TopicPartition, tuple[uuid.UUID, int, bool]] = {}

    @classmethod
    def build(
        cls,
        config: BrokerConfig,
        logs: LogManager,
        high_watermark: Callable[[TopicPartition], int],
        *,
        node_id: int,
    ) -> TieredStorage | None:
        """The broker's tiered storage, or ``None`` without
        ``remote.log.storage.system.enable``."""
        if not config.remote_log_storage_system_enable:
            return None
        return cls(config, logs, high_watermark, node_id=node_id)

    def metadata_listener(self) -> str:
        """The listener the metadata manager connects to (Kafka's
        ``remote.log.metadata.manager.listener.name``; default: the inter-broker one)."""
        name = self.config.remote_log_metadata_manager_listener_name
        return name or self.config.inter_broker_listener()[0]

    def start(self, bootstrap: str) -> None:
        """Connect the metadata manager to ``bootstrap`` (this broker's own listener),
        create ``__remote_log_metadata`` when missing (in the background, retried) and
        start the tasks; leadership heard so far applies now."""
        v = self._rlmm_values
        rlmm = TopicBasedRemoteLogMetadataManager(
            ClientMetadataTopic(bootstrap, client_id=f"rlmm-broker-{self.node_id}"),
            broker_id=self.node_id,
            num_partitions=v["remote.log.metadata.topic.num.partitions"],
            replication_factor=v["remote.log.metadata.topic.replication.factor"],
            retention_ms=v["remote.log.metadata.topic.retention.ms"],
            consume_wait_ms=v["remote.log.metadata.consume.wait.ms"],
        )
        log_dir = self._logs.log_dirs[0]
        rlm = RemoteLogManager(
            self.rlm_config,
            broker_id=self.node_id,
            log_dir=log_dir,
            rsm=self.rsm,
            rlmm=rlmm,
            get_log=lambda tp: self._logs.get_log(tp),
            high_watermark=self._high_watermark,
        )
        rlmm.start(wait=False)
        rlm.start()
        with self._lock:
            self.rlmm, self.rlm = rlmm, rlm
            pending, self._pending = self._pending, {}
        self._apply(pending)
        logger.info("Tiered storage started: %s, metadata through %s", self.rsm.store, bootstrap)

    def close(self) -> None:
        with self._lock:
            rlm, rlmm = self.rlm, self.rlmm
            self.rlm = self.rlmm = None
        if rlm is not None:
            rlm.close()
        if rlmm is not None:
            rlmm.close()

    # -- the replica manager's hooks (event loop; never block) ----------------------------------

    def on_leadership(self, leaders: Iterable[Partition], followers: Iterable[Partition]) -> None:
        """Partitions that became leaders or followers here: the tiered ones are handed
        to the remote log manager."""
        changes: dict[TopicPartition, tuple[uuid.UUID, int, bool]] = {}
        for partitions, leader in ((leaders, True), (followers, False)):
            for p in partitions:
                log = p.log
                if log.remote_log_enabled and log.topic_id is not None:
                    changes[p.topic_partition] = (log.topic_id, p.leader_epoch, leader)
        if changes:
            self._apply(changes)

    def _apply(self, changes: Mapping[TopicPartition, tuple[uuid.UUID, int, bool]]) -> None:
        with self._lock:
            rlm = self.rlm
            if rlm is None:
                self._pending.update(changes)
                return
        rlm.on_leadership_change(
            {tp: (t, e) for tp, (t, e, leader) in changes.items() if leader},
            {tp: (t, e) for tp, (t, e, leader) in changes.items() if not leader},
        )

    def on_config_changed(self, partitions: Iterable[Partition]) -> None:
        """A topic's configs changed: partitions newly tiered start tiering; partitions
        no longer tiered stop (their remote data deleted with
        ``remote.log.delete.on.disable``, Kafka's KIP-950)."""
        rlm = self.rlm
        started: list[Partition] = []
        stopped: dict[TopicPartition, uuid.UUID] = {}
        delete = False
        for p in partitions:
            log = p.log
            tiered = rlm is not None and rlm.is_tiered(p.topic_partition)
            if log.remote_log_enabled and not tiered:
                started.append(p)
            elif not log.remote_log_enabled and tiered and log.topic_id is not None:
                stopped[p.topic_partition] = log.topic_id
                delete = delete or log.config.remote_log_delete_on_disable
        leaders = [p for p in started if p.is_leader]
        self.on_leadership(leaders, [p for p in started if not p.is_leader])
        if stopped and rlm is not None:
            rlm.stop_partitions(stopped, delete_remote=delete)

    def on_deleted(self, partitions: Mapping[TopicPartition, uuid.UUID | None]) -> None:
        """Partitions deleted here (topic deletion): their tiered segments are deleted
        (Kafka's ``stopPartitions(deleteRemoteLog=true)``), in the background."""
        with self._lock:
            rlm = self.rlm
            for tp in partitions:
                self._pending.pop(tp, None)
        tiered = {tp: t for tp, t in partitions.items() if t is not None}
        if rlm is not None and tiered:
            ours = {tp: t for tp, t in tiered.items() if rlm.is_tiered(tp)}
            if ours:
                rlm.stop_partitions(ours, delete_remote=True)

    # -- reads (Kafka's RemoteLogManager.asyncRead and AsyncOffsetReader) ------------------------

    def fetch_throttled(self) -> bool:
        """Whether remote reads are over ``remote.log.manager.fetch.max.bytes.per.second``
        (Kafka's ``getFetchThrottleTimeMs() > 0``): a Fetch then reads nothing remote."""
        rlm = self.rlm
        return rlm is not None and rlm.fetch_quota.is_quota_exceeded()

    def async_read(self, info: RemoteStorageFetchInfo) -> Future[RemoteLogReadResult]:
        """A Fetch partition below the local log start, read from the bucket on the
        remote log manager's reader pool (its future never fails). Before the manager
        started, or for a partition it does not tier yet, nothing is read this time (the
        client retries). ``RemoteStorageError`` when too many reads already wait."""
        rlm = self.rlm
        if rlm is None or not rlm.is_tiered(info.topic_partition):
            done: Future[RemoteLogReadResult] = Future()
            done.set_result(RemoteLogReadResult(RemoteFetchResult(b"", [], None)))
            return done
        return rlm.async_read(info)

    def async_offset_read(
        self,
        tp: TopicPartition,
        timestamp: int,
        start_offset: int,
        local_search: Callable[[], TimestampAndOffset | None],
    ) -> Future[TimestampAndOffset | None]:
        """ListOffsets by time on a tiered log (Kafka's ``AsyncOffsetReader``): the tiered
        segments, then ``local_search``, on the reader pool; before the manager started,
        the local segments only."""
        rlm = self.rlm
        if rlm is None or not rlm.is_tiered(tp):
            done: Future[TimestampAndOffset | None] = Future()
            try:
                done.set_result(local_search())
            except Exception as exc:
                done.set_exception(exc)
            return done
        return rlm.async_offset_read(tp, timestamp, start_offset, local_search)

    def build_remote_log_aux_state(
        self,
        tp: TopicPartition,
        leader_local_log_start_offset: int,
        leader_log_start_offset: int,
        epoch_for_previous_offset: int | None,
    ) -> int:
        """A follower's catch-up from remote state (see
        :meth:`RemoteLogManager.build_remote_log_aux_state`); blocking.
        ``RemoteStorageNotReadyError`` before the manager started."""
        rlm = self.rlm
        if rlm is None:
            raise RemoteStorageNotReadyError("Tiered storage is not started yet")
        return rlm.build_remote_log_aux_state(
            tp, leader_local_log_start_offset, leader_log_start_offset, epoch_for_previous_offset
        )

    def status(self, tp: TopicPartition) -> TieringStatus | None:
        rlm = self.rlm
        return None if rlm is None else rlm.status(tp)
