"""The transaction markers' sender (Kafka's ``TransactionMarkerChannelManager`` and
``TransactionMarkerRequestCompletionHandler``).

Once a PrepareCommit / PrepareAbort is written, the coordinator hands the transaction
here (:meth:`TransactionMarkerChannelManager.send_markers`): every partition of the
transaction gets a WriteTxnMarkers (one marker: producer id and epoch, COMMIT or ABORT,
the coordinator epoch) sent to its leader — in-process through the
``local_writer`` the assembly gives (over
:meth:`~kafkacore.server.replica_manager.ReplicaManager.append_txn_markers`, what the
WriteTxnMarkers handler calls) when this broker leads it, else over a
:class:`~kafkacore.net.NodeClient` to the leader's inter-broker listener (v1).
Answers per partition, as Kafka's completion handler:

* NONE: the partition is done (:attr:`on_partition_done` removes it from the
  transaction's partitions, so DescribeTransactions shows those still waiting);
* UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
  REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR, a lost connection: sent again (to the leader
  of then) after a backoff;
* INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED: every remaining marker of the
  transaction is cancelled (a newer producer or coordinator owns it);
* UNSUPPORTED_FOR_MESSAGE_FORMAT, UNSUPPORTED_VERSION: the partition is dropped from the
  wait;
* anything else (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, ...): Kafka's
  ``IllegalStateException``; logged as an error and retried, never completed silently
  (so is a request that failed in an unexpected way).

A partition the metadata no longer knows (its topic deleted) is skipped; one whose
leader is unknown or not alive waits for one. The sending stops (cancelled) as soon as
the coordinator no longer owns the transaction at that coordinator epoch.

Thread-safety: event loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from kafkacore.log import TopicPartition
from kafkacore.metadata import BrokerInfo, MetadataCache
from kafkacore.net import NodeClient
from kafkacore.protocol import APIS, ApiKey, ErrorCode
from kafkacore.protocol.messages.write_txn_markers import WriteTxnMarkersRequest
from kafkacore.server.replica_manager import TxnMarker

if TYPE_CHECKING:
    from kafkacore.server.replica_manager import ReplicaManager

__all__ = ["MarkerResult", "TransactionMarkerChannelManager"]

logger = logging.getLogger("kafkacore.server.txn")

_RETRY = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.KAFKA_STORAGE_ERROR,
    }
)
_CANCEL = frozenset({ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED})
_DROP = frozenset({ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrorCode.UNSUPPORTED_VERSION})

WRITE_TXN_MARKERS_VERSION = 1
"""The version sent to other brokers (Kafka 3.9's)."""


class MarkerResult:
    """How a transaction's marker round ended."""

    COMPLETED = "completed"
    """Every partition has its marker (or was skipped): write Complete*."""
    CANCELLED = "cancelled"
    """Fenced, or the coordinator moved: leave the transaction as it is."""


LocalWriter = Callable[[TxnMarker], Awaitable[list[int]]]
"""Writes one marker to the partitions this broker leads and answers the error code of
each, in the marker's partition order (in-process)."""


class TransactionMarkerChannelManager:
    """See the module documentation (Kafka's ``TransactionMarkerChannelManager(config,
    metadataCache, networkClient, ...)``). ``cache`` and ``replicas`` say who leads each
    partition; ``connect(broker)`` opens the client of another broker;
    ``local_writer(marker)`` writes the markers of partitions led by ``node_id`` without
    a connection (None: those go over the network too, as in Kafka)."""

    def __init__(
        self,
        node_id: int,
        cache: MetadataCache,
        replicas: ReplicaManager,
        connect: Callable[[BrokerInfo], NodeClient],
        *,
        local_writer: LocalWriter | None = None,
        retry_backoff_s: float = 0.1,
        max_backoff_s: float = 1.0,
    ) -> None:
        self.node_id = node_id
        self.cache = cache
        self.replicas = replicas
        self.connect = connect
        self.local_writer = local_writer
        self.retry_backoff_s = retry_backoff_s
        self.max_backoff_s = max_backoff_s
        self._clients: dict[int, NodeClient] = {}

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            with contextlib.suppress(Exception):
                await client.close()

    # -- one transaction -------------------------------------------------------------------

    async def send_markers(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        committed: bool,
        coordinator_epoch: int,
        partitions: set[TopicPartition],
        *,
        is_current: Callable[[], bool],
        on_partition_done: Callable[[TopicPartition], None],
    ) -> str:
        """Write the markers of one transaction to ``partitions``; a
        :class:`MarkerResult`. ``is_current()`` says whether the coordinator still owns
        the transaction at ``coordinator_epoch`` (checked before every round)."""
        remaining = set(partitions)
        marker = TxnMarker(producer_id, producer_epoch, coordinator_epoch, committed, ())
        backoff = self.retry_backoff_s
        while remaining:
            if not is_current():
                return MarkerResult.CANCELLED
            by_leader, skipped = self._route(remaining)
            for tp in skipped:
                logger.info(
                    "Couldn't find leader endpoint for partition %s while trying to send "
                    "transaction markers for %s; it is likely deleted already and hence skipped",
                    tp,
                    transactional_id,
                )
                remaining.discard(tp)
                on_partition_done(tp)
            rounds = [
                self._send_to(leader, dataclasses.replace(marker, partitions=tps))
                for leader, tps in by_leader.items()
            ]
            results: list[dict[TopicPartition, int]] = list(await asyncio.gather(*rounds))
            if not is_current():
                return MarkerResult.CANCELLED
            for answers in results:
                for tp, code in answers.items():
                    if code == ErrorCode.NONE:
                        remaining.discard(tp)
                        on_partition_done(tp)
                    elif code in _CANCEL:
                        logger.info(
                            "Sending %s's transaction marker for partition %s has permanently "
                            "failed with error %s with the current coordinator epoch %d; "
                            "cancel sending any more transaction markers",
                            transactional_id,
                            tp,
                            ErrorCode(code).name,
                            coordinator_epoch,
                        )
                        return MarkerResult.CANCELLED
                    elif code in _DROP:
                        logger.info(
                            "Sending %s's transaction marker for partition %s has failed with "
                            "error %s; not waiting for it",
                            transactional_id,
                            tp,
                            ErrorCode(code).name,
                        )
                        remaining.discard(tp)
                        on_partition_done(tp)
                    elif code not in _RETRY:
                        logger.error(
                            "Received fatal error %s while sending txn marker for %s to %s",
                            ErrorCode(code).name if code in ErrorCode._value2member_map_ else code,
                            transactional_id,
                            tp,
                        )
            if remaining:
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self.max_backoff_s)
        return MarkerResult.COMPLETED

    def _route(
        self, partitions: set[TopicPartition]
    ) -> tuple[dict[int, list[TopicPartition]], list[TopicPartition]]:
        """The partitions by leader (-1: leader unknown or not alive: wait), and those
        the metadata does not know (skipped)."""
        cache = self.cache
        by_leader: dict[int, list[TopicPartition]] = {}
        skipped: list[TopicPartition] = []
        for tp in sorted(partitions):
            local = self.replicas.get_partition(tp)
            if local is not None and local.is_leader:
                by_leader.setdefault(self.node_id, []).append(tp)
                continue
            state = cache.partition_state(tp)
            if state is None:
                skipped.append(tp)
                continue
            leader = state.leader if state.leader >= 0 and cache.broker(state.leader) else -1
            by_leader.setdefault(leader, []).append(tp)
        return by_leader, skipped

    @staticmethod
    def _request(marker: TxnMarker) -> WriteTxnMarkersRequest:
        cls = WriteTxnMarkersRequest
        by_topic: dict[str, list[int]] = {}
        for tp in marker.partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return cls(
            markers=[
                cls.WritableTxnMarker(
                    producer_id=marker.producer_id,
                    producer_epoch=marker.producer_epoch,
                    transaction_result=marker.committed,
                    topics=[
                        cls.WritableTxnMarkerTopic(name=t, partition_indexes=ps)
                        for t, ps in by_topic.items()
                    ],
                    coordinator_epoch=marker.coordinator_epoch,
                )
            ]
        )

    async def _send_to(self, leader: int, marker: TxnMarker) -> dict[TopicPartition, int]:
        """``marker`` to ``leader``; the error per partition (a transport failure or an
        unknown leader: NOT_LEADER_OR_FOLLOWER, i.e. retried). To this broker through
        the replica manager (as the WriteTxnMarkers handler writes), to another as one
        WriteTxnMarkers."""
        retry = {tp: int(ErrorCode.NOT_LEADER_OR_FOLLOWER) for tp in marker.partitions}
        if leader < 0:
            return retry
        try:
            if leader == self.node_id and self.local_writer is not None:
                codes = await self.local_writer(marker)
                return dict(zip(marker.partitions, codes, strict=True))
            client = self._client(leader)
            if client is None:
                return retry
            request = self._request(marker)
            response = await client.send(
                APIS[ApiKey.WRITE_TXN_MARKERS], WRITE_TXN_MARKERS_VERSION, request
            )
        except (ConnectionError, TimeoutError, OSError) as exc:
            logger.info("Sending transaction markers to broker %d failed: %s", leader, exc)
            self._clients.pop(leader, None)
            return retry
        except Exception:  # an undecodable answer, a bug: retried, as Kafka's sender does
            logger.exception("Sending transaction markers to broker %d failed", leader)
            return retry
        answers: dict[TopicPartition, int] = {}
        for result in response.markers:
            for topic in result.topics:
                for p in topic.partitions:
                    answers[TopicPartition(topic.name, p.partition_index)] = p.error_code
        for tp in marker.partitions:  # a partition the answer left out is sent again
            answers.setdefault(tp, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return answers

    def _client(self, node_id: int) -> NodeClient | None:
        client = self._clients.get(node_id)
        if client is not None and not client.closed:
            return client
        broker = self.cache.broker(node_id)
        if broker is None:
            return None
        client = self.connect(broker)
        self._clients[node_id] = client
        return client
