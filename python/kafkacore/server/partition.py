"""One partition's leader state over its log (Kafka's ``kafka.cluster.Partition``):
assignment, leader and leader epoch, partition epoch, ISR, high watermark and last
stable offset, with methods named for what they decide.

A single node is the replication-factor-1 case: the replicas and the ISR are
``[this node]``, so :meth:`Partition.maybe_increment_leader_hw` moves the high watermark
to the log end offset after every append, and the last stable offset is the high
watermark (no transactions yet). Follower LEOs and ISR changes land here with
replication.

Thread-safety (as ``Partition.scala`` states it):

* ``_leader_isr_lock`` (Kafka's ``leaderIsrUpdateLock``) guards the leader epoch,
  partition epoch, assignment and ISR. :meth:`make_leader` takes it to change them;
  appends take it so that no leader change happens between their epoch check and the
  log append (Kafka takes the read side; one re-entrant lock here: appends to one log
  are serialised by the log's own lock anyway).
* The high watermark only moves under the same lock (:meth:`maybe_increment_leader_hw`)
  and never backwards; readers read it without the lock (one int: a value that is at
  worst one append old, never a torn one).
* The log locks itself; callers may append and read from any thread.
"""

from __future__ import annotations

import logging
import threading

from kafkacore.errors import KafkaCoreError
from kafkacore.log import Log, LogAppendInfo, TopicPartition
from kafkacore.log.log import AppendOrigin
from kafkacore.log.producer_state import DuplicateSequenceError
from kafkacore.metadata import PartitionState

__all__ = ["NotEnoughReplicasError", "NotLeaderOrFollowerError", "Partition"]

logger = logging.getLogger("kafkacore.server")


class NotLeaderOrFollowerError(KafkaCoreError):
    """This broker does not lead the partition (NOT_LEADER_OR_FOLLOWER)."""


class NotEnoughReplicasError(KafkaCoreError):
    """``acks=-1`` with fewer in-sync replicas than ``min.insync.replicas``
    (NOT_ENOUGH_REPLICAS)."""


class Partition:
    def __init__(self, topic_partition: TopicPartition, log: Log, local_broker_id: int) -> None:
        self.topic_partition = topic_partition
        self.log = log
        self.local_broker_id = local_broker_id
        self._leader_isr_lock = threading.RLock()
        self._leader_id = -1
        self._leader_epoch = -1
        self._partition_epoch = -1
        self._replicas: tuple[int, ...] = ()
        self._isr: frozenset[int] = frozenset()
        self._high_watermark = 0

    def __repr__(self) -> str:
        return (
            f"Partition({self.topic_partition}, leader={self._leader_id}, "
            f"epoch={self._leader_epoch}, isr={sorted(self._isr)}, hw={self._high_watermark})"
        )

    # -- state -----------------------------------------------------------------------------

    @property
    def leader_id(self) -> int:
        return self._leader_id

    @property
    def leader_epoch(self) -> int:
        return self._leader_epoch

    @property
    def partition_epoch(self) -> int:
        return self._partition_epoch

    @property
    def replicas(self) -> tuple[int, ...]:
        return self._replicas

    @property
    def isr(self) -> frozenset[int]:
        return self._isr

    @property
    def is_leader(self) -> bool:
        return self._leader_id == self.local_broker_id

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def last_stable_offset(self) -> int:
        """No transactions yet: the first offset of no open transaction is the HW."""
        return self._high_watermark

    # -- leadership ------------------------------------------------------------------------

    def make_leader(self, state: PartitionState) -> bool:
        """Take ``state`` (this node must be its leader); whether the leader epoch
        changed. The high watermark is then re-derived from the ISR's log end offsets
        (Kafka's ``makeLeader`` followed by ``maybeIncrementLeaderHW``)."""
        if state.leader != self.local_broker_id:
            raise ValueError(f"{self.topic_partition}: node {state.leader} leads, not us")
        with self._leader_isr_lock:
            if state.partition_epoch < self._partition_epoch:
                return False  # a stale update
            changed = state.leader_epoch != self._leader_epoch
            self._leader_id = state.leader
            self._leader_epoch = state.leader_epoch
            self._partition_epoch = state.partition_epoch
            self._replicas = state.replicas
            self._isr = frozenset(state.isr)
            self.maybe_increment_leader_hw()
            return changed

    # -- appends ---------------------------------------------------------------------------

    def append_records_to_leader(
        self,
        records: bytes,
        *,
        required_acks: int = 1,
        origin: AppendOrigin = AppendOrigin.CLIENT,
    ) -> LogAppendInfo:
        """Append a batch as leader (Kafka's ``appendRecordsToLeader``): refused when this
        node does not lead, or with ``acks=-1`` when the ISR is smaller than
        ``min.insync.replicas``; a duplicate idempotent batch is answered with its
        original offsets and nothing written. The high watermark follows."""
        with self._leader_isr_lock:
            if not self.is_leader:
                raise NotLeaderOrFollowerError(
                    f"Leader not local for partition {self.topic_partition} on broker "
                    f"{self.local_broker_id}"
                )
            self.ensure_enough_replicas(required_acks)
            try:
                info = self.log.append_as_leader(records, self._leader_epoch, origin=origin)
            except DuplicateSequenceError as duplicate:
                return self._answer_for_duplicate(duplicate)
            self.maybe_increment_leader_hw()
            return info

    def ensure_enough_replicas(self, required_acks: int) -> None:
        """``acks=-1`` needs at least ``min.insync.replicas`` in the ISR (Kafka checks it
        before the append, with this message)."""
        min_isr = self.log.config.min_insync_replicas
        isr = self._isr
        if required_acks == -1 and len(isr) < min_isr:
            raise NotEnoughReplicasError(
                f"The size of the current ISR Set({', '.join(str(r) for r in sorted(isr))}) "
                f"is insufficient to satisfy the min.isr requirement of {min_isr} for "
                f"partition {self.topic_partition}"
            )

    def _answer_for_duplicate(self, duplicate: DuplicateSequenceError) -> LogAppendInfo:
        """Kafka's ``UnifiedLog.append`` finding a duplicate in
        ``analyzeAndValidateProducerState``: nothing is written, and the producer is acked
        with the offsets and timestamp of the batch already stored."""
        logger.debug("%s", duplicate)
        return LogAppendInfo(
            first_offset=duplicate.first_offset,
            last_offset=duplicate.last_offset,
            max_timestamp=duplicate.timestamp,
            offset_of_max_timestamp=duplicate.last_offset,
            log_append_time=duplicate.timestamp,
            log_start_offset=self.log.log_start_offset,
            valid_bytes=0,
            last_leader_epoch=None,
            source_compression=0,
            num_batches=0,
            num_records=0,
        )

    def maybe_increment_leader_hw(self) -> bool:
        """Move the high watermark up to the smallest log end offset in the ISR (only
        this replica's is known: replication factor 1); whether it moved."""
        with self._leader_isr_lock:
            new_hw = self.log.log_end_offset
            if new_hw > self._high_watermark:
                self._high_watermark = new_hw
                return True
            return False
