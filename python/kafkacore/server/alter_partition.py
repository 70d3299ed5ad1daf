"""ISR changes from partition leaders to the controller (Kafka's
``AlterPartitionManager``, KIP-497): each :class:`~kafkacore.server.partition.Partition`
submits at most one proposal at a time; the manager batches the pending ones into an
AlterPartition request to the controller named by the metadata cache, retries the
request on transport errors and on NOT_CONTROLLER (or any request-wide error), and hands
each partition its answer: ``callback(error code, (leader epoch, ISR, partition epoch))``.
Partition-level errors are the partition's to handle (it waits for a LeaderAndIsr after
FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION and proposes again after others).

Thread-safety: :meth:`AlterPartitionManager.submit` may be called from any thread; the
sending runs as one task on the event loop given to :meth:`start`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from kafkacore.log import TopicPartition
from kafkacore.metadata import MetadataCache
from kafkacore.net import ClientSecurity, NodeClient, NodeClientFactory, node_client_factory
from kafkacore.net.timeouts import stop_task
from kafkacore.protocol import APIS, ApiKey, ErrorCode
from kafkacore.protocol.messages.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
)
from kafkacore.server.partition import AlterPartitionCallback

__all__ = ["AlterPartitionManager"]

logger = logging.getLogger("kafkacore.server")

_ZERO_UUID = uuid.UUID(int=0)


@dataclass(slots=True)
class _Proposal:
    tp: TopicPartition
    topic_id: uuid.UUID | None
    leader_epoch: int
    new_isr: tuple[int, ...]
    partition_epoch: int
    callback: AlterPartitionCallback


class AlterPartitionManager:
    def __init__(
        self,
        broker_id: int,
        cache: MetadataCache,
        *,
        broker_epoch: Callable[[], int] = lambda: -1,
        topic_id: Callable[[TopicPartition], uuid.UUID | None] = lambda tp: None,
        listener: str | None = None,
        security: ClientSecurity | None = None,
        client_factory: NodeClientFactory | None = None,
        retry_backoff_s: float = 0.1,
        version: int = 3,
    ) -> None:
        self.broker_id = broker_id
        self.cache = cache
        self._broker_epoch = broker_epoch
        self._topic_id = topic_id
        self._listener = listener
        # TLS/SASL toward the controller (inter_broker_security)
        self._client_factory = client_factory or node_client_factory(
            f"broker-{broker_id}-alter-partition", security=security
        )
        self._retry_backoff_s = retry_backoff_s
        self.version = version
        self._lock = threading.Lock()
        self._unsent: dict[TopicPartition, _Proposal] = {}
        self._in_flight: set[TopicPartition] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._client: NodeClient | None = None
        self._client_node = -1
        self._closing = False

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start sending on the running event loop."""
        self._loop = asyncio.get_running_loop()
        self._wakeup = asyncio.Event()
        self._task = self._loop.create_task(self._run(), name="alter-partition-manager")
        if self._unsent:
            self._wakeup.set()

    async def shutdown(self) -> None:
        self._closing = True
        if self._task is not None:
            await stop_task(self._task)
            self._task = None
        await self._drop_client()

    # -- proposals ---------------------------------------------------------------------

    def submit(
        self,
        tp: TopicPartition,
        leader_epoch: int,
        new_isr: tuple[int, ...],
        partition_epoch: int,
        callback: AlterPartitionCallback,
    ) -> bool:
        """Queue a proposal; ``False`` (nothing queued) while one for ``tp`` is pending."""
        with self._lock:
            if tp in self._in_flight:
                return False
            self._in_flight.add(tp)
            self._unsent[tp] = _Proposal(
                tp, self._topic_id(tp), leader_epoch, tuple(new_isr), partition_epoch, callback
            )
        self._kick()
        return True

    def pending(self) -> int:
        return len(self._in_flight)

    def _kick(self) -> None:
        loop, wakeup = self._loop, self._wakeup
        if loop is None or wakeup is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wakeup.set()
        else:
            loop.call_soon_threadsafe(wakeup.set)

    # -- sending -----------------------------------------------------------------------

    async def _run(self) -> None:
        assert self._wakeup is not None
        while not self._closing:
            await self._wakeup.wait()
            self._wakeup.clear()
            with self._lock:
                batch = list(self._unsent.values())
                self._unsent.clear()
            if not batch:
                continue
            try:
                response = await self._send(batch)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.info("AlterPartition failed (%s); retrying", exc)
                await self._drop_client()
                self._requeue(batch)
                await asyncio.sleep(self._retry_backoff_s)
                continue
            if response.error_code != ErrorCode.NONE:
                logger.info("AlterPartition answered %d; retrying", response.error_code)
                if response.error_code == ErrorCode.NOT_CONTROLLER:
                    await self._drop_client()
                self._requeue(batch)
                await asyncio.sleep(self._retry_backoff_s)
                continue
            self._deliver(batch, response)

    def _requeue(self, batch: list[_Proposal]) -> None:
        with self._lock:
            for proposal in batch:
                # a newer proposal cannot exist (one in flight per partition)
                self._unsent.setdefault(proposal.tp, proposal)
        assert self._wakeup is not None
        self._wakeup.set()

    def _deliver(self, batch: list[_Proposal], response: AlterPartitionResponse) -> None:
        answers: dict[tuple[uuid.UUID | str | None, int], AlterPartitionResponse.PartitionData] = {}
        for topic in response.topics:
            key: uuid.UUID | str | None = topic.topic_id if self.version >= 2 else topic.topic_name
            for p in topic.partitions:
                answers[(key, p.partition_index)] = p
        for proposal in batch:
            key = proposal.topic_id if self.version >= 2 else proposal.tp.topic
            answer = answers.get((key, proposal.tp.partition))
            with self._lock:
                self._in_flight.discard(proposal.tp)
            if answer is None:
                error, result = int(ErrorCode.UNKNOWN_SERVER_ERROR), None
            elif answer.error_code != ErrorCode.NONE:
                error, result = int(answer.error_code), None
            else:
                error = 0
                result = (answer.leader_epoch, tuple(answer.isr), answer.partition_epoch)
            try:
                proposal.callback(error, result)
            except Exception:
                logger.exception("AlterPartition callback of %s failed", proposal.tp)

    def _request(self, batch: list[_Proposal]) -> AlterPartitionRequest:
        cls = AlterPartitionRequest
        version = self.version
        if version >= 2 and any(p.topic_id is None for p in batch):
            version = 1  # topic ids unknown: by name
        self.version = version
        by_id: dict[uuid.UUID, list[AlterPartitionRequest.PartitionData]] = {}
        by_name: dict[str, list[AlterPartitionRequest.PartitionData]] = {}
        for p in batch:
            data = cls.PartitionData(
                partition_index=p.tp.partition,
                leader_epoch=p.leader_epoch,
                partition_epoch=p.partition_epoch,
                leader_recovery_state=0,
            )
            if version >= 3:
                data.new_isr_with_epochs = [
                    cls.BrokerState(broker_id=b, broker_epoch=-1) for b in p.new_isr
                ]
            else:
                data.new_isr = list(p.new_isr)
            if p.topic_id is not None and version >= 2:
                by_id.setdefault(p.topic_id, []).append(data)
            else:
                by_name.setdefault(p.tp.topic, []).append(data)
        return cls(
            broker_id=self.broker_id,
            broker_epoch=self._broker_epoch(),
            topics=[
                *(cls.TopicData(topic_id=key, partitions=parts) for key, parts in by_id.items()),
                *(cls.TopicData(topic_name=n, partitions=parts) for n, parts in by_name.items()),
            ],
        )

    async def _send(self, batch: list[_Proposal]) -> AlterPartitionResponse:
        controller = self.cache.controller_id
        broker = self.cache.broker(controller) if controller >= 0 else None
        if broker is None:
            raise ConnectionError(f"no live controller known (controller id {controller})")
        if self._client is None or self._client.closed or self._client_node != controller:
            await self._drop_client()
            host, port = broker.endpoint(self._listener)
            self._client = self._client_factory(host, port)
            self._client_node = controller
        request = self._request(batch)
        return await self._client.send(APIS[ApiKey.ALTER_PARTITION], self.version, request)

    async def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()
