"""The share-state persister (Kafka's ``DefaultStatePersister`` with its
``PersisterStateManager``): how the partition leaders and the group coordinator reach the
share coordinator of a share partition.

The coordinator of a key is the leader of its ``__share_group_state`` partition. When this
broker is that leader the :class:`~kafkacore.server.share.coordinator.ShareCoordinator`
is called directly; otherwise the request goes over the inter-broker listener to the
leader the metadata names. A coordinator that moved, is loading or is not there yet
(NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS) is looked up
again and the request retried with a growing backoff, as Kafka's persister retries
(five attempts); other errors come back to the caller.

Thread-safety: event loop only.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from kafkacore.coordinator.share_records import SHARE_GROUP_STATE_TOPIC
from kafkacore.coordinator.share_state import (
    RecordState,
    ShareGroupOffset,
    SharePartitionKey,
    StateBatch,
)
from kafkacore.log import TopicPartition
from kafkacore.metadata import BrokerInfo, MetadataCache
from kafkacore.protocol import APIS_BY_NAME, ApiKey, ErrorCode
from kafkacore.server.share.coordinator import ShareCoordinator, StateAnswer
from kafkacore.server.share.partition import ReadState, ShareError

__all__ = ["BrokerClients", "RemoteClients", "SharePersister", "persister_error"]

logger = logging.getLogger("kafkacore.server.share")

_RETRIABLE = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    }
)
_ATTEMPTS = 5
_BACKOFF_S = 0.1
_BACKOFF_MAX_S = 1.0


class RemoteClients(Protocol):
    """A connection to another broker's inter-broker listener (``NodeClient.send``)."""

    async def send(
        self, broker: BrokerInfo, api_key: ApiKey, version: int, request: Any
    ) -> Any: ...


def persister_error(code: int, message: str | None) -> ShareError:
    """What a share partition raises for a persister's error
    (``SharePartition.fetchPersisterError``)."""
    if code in _RETRIABLE:
        return ShareError(ErrorCode.COORDINATOR_NOT_AVAILABLE, message)
    if code in (ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
        return ShareError(code, message)
    if code in (ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.FENCED_STATE_EPOCH):
        return ShareError(ErrorCode.NOT_LEADER_OR_FOLLOWER, message)
    if code in (ErrorCode.SASL_AUTHENTICATION_FAILED, ErrorCode.UNSUPPORTED_VERSION):
        return ShareError(
            ErrorCode.UNKNOWN_SERVER_ERROR, "Unable to complete operation due to server error."
        )
    return ShareError(ErrorCode.UNKNOWN_SERVER_ERROR, message)


_READ: Any = APIS_BY_NAME["ReadShareGroupState"].request.cls
_WRITE: Any = APIS_BY_NAME["WriteShareGroupState"].request.cls
_INIT: Any = APIS_BY_NAME["InitializeShareGroupState"].request.cls
_DELETE: Any = APIS_BY_NAME["DeleteShareGroupState"].request.cls
_SUMMARY: Any = APIS_BY_NAME["ReadShareGroupStateSummary"].request.cls


class SharePersister:
    """See the module documentation. ``remote``: how to reach another broker (``None``:
    a single node, where every coordinator is local)."""

    def __init__(
        self,
        coordinator: ShareCoordinator,
        cache: MetadataCache,
        node_id: int,
        remote: RemoteClients | None,
        *,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self.coordinator = coordinator
        self.cache = cache
        self.node_id = node_id
        self.remote = remote
        self._sleep = sleep

    def _coordinator_node(self, key: SharePartitionKey) -> int | None:
        """The broker leading ``key``'s ``__share_group_state`` partition (None: unknown)."""
        index = self.coordinator.partition_for(key)
        if self.coordinator.runtime.partition_error(index) == ErrorCode.NONE:
            return self.node_id
        state = self.cache.partition_state(TopicPartition(SHARE_GROUP_STATE_TOPIC, index))
        if state is None or state.leader < 0:
            if not self.coordinator.topic.exists():
                self.coordinator.create_topic()
            return None
        return state.leader

    async def _call(
        self,
        key: SharePartitionKey,
        local: Callable[[], Any],
        remote: Callable[[BrokerInfo], Any],
    ) -> StateAnswer:
        """The request to ``key``'s coordinator, retried while it moves."""
        backoff = _BACKOFF_S
        answer = StateAnswer(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        for attempt in range(_ATTEMPTS):
            node = self._coordinator_node(key)
            if node == self.node_id:
                answer = await local()
            elif node is not None and self.remote is not None:
                broker = self.cache.broker(node)
                if broker is None:
                    answer = StateAnswer(ErrorCode.COORDINATOR_NOT_AVAILABLE)
                else:
                    try:
                        answer = await remote(broker)
                    except (ConnectionError, OSError, asyncio.TimeoutError) as exc:
                        answer = StateAnswer(ErrorCode.COORDINATOR_NOT_AVAILABLE, str(exc))
            else:
                answer = StateAnswer(ErrorCode.COORDINATOR_NOT_AVAILABLE)
            if answer.error_code not in _RETRIABLE or attempt == _ATTEMPTS - 1:
                return answer
            await self._sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX_S)
        return answer

    # -- the operations ------------------------------------------------------------------

    async def read_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> ReadState:
        """ReadShareGroupState for a partition leader; raises :class:`ShareError`."""
        key = SharePartitionKey(group_id, topic_id, partition)

        async def remote(broker: BrokerInfo) -> StateAnswer:
            request = _READ(
                group_id=group_id,
                topics=[
                    _READ.ReadStateData(
                        topic_id=topic_id,
                        partitions=[
                            _READ.PartitionData(partition=partition, leader_epoch=leader_epoch)
                        ],
                    )
                ],
            )
            assert self.remote is not None
            response = await self.remote.send(broker, ApiKey.READ_SHARE_GROUP_STATE, 0, request)
            p = response.results[0].partitions[0]
            state = ShareGroupOffset(
                snapshot_epoch=0,
                state_epoch=p.state_epoch,
                leader_epoch=leader_epoch,
                start_offset=p.start_offset,
                state_batches=tuple(
                    StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                    for b in p.state_batches
                ),
            )
            return StateAnswer(p.error_code, p.error_message, state)

        answer = await self._call(
            key, lambda: self.coordinator.read_state(key, leader_epoch), remote
        )
        if answer.error_code:
            raise persister_error(answer.error_code, answer.error_message)
        assert answer.state is not None
        return ReadState(
            answer.state.state_epoch, answer.state.start_offset, list(answer.state.state_batches)
        )

    async def write_state(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: list[StateBatch],
    ) -> None:
        """WriteShareGroupState for a partition leader; raises :class:`ShareError`."""
        key = SharePartitionKey(group_id, topic_id, partition)

        async def remote(broker: BrokerInfo) -> StateAnswer:
            request = _WRITE(
                group_id=group_id,
                topics=[
                    _WRITE.WriteStateData(
                        topic_id=topic_id,
                        partitions=[
                            _WRITE.PartitionData(
                                partition=partition,
                                state_epoch=state_epoch,
                                leader_epoch=leader_epoch,
                                start_offset=start_offset,
                                delivery_complete_count=delivery_complete_count,
                                state_batches=[
                                    _WRITE.StateBatch(
                                        first_offset=b.first_offset,
                                        last_offset=b.last_offset,
                                        delivery_state=int(b.delivery_state),
                                        delivery_count=b.delivery_count,
                                    )
                                    for b in batches
                                ],
                            )
                        ],
                    )
                ],
            )
            assert self.remote is not None
            response = await self.remote.send(broker, ApiKey.WRITE_SHARE_GROUP_STATE, 1, request)
            p = response.results[0].partitions[0]
            return StateAnswer(p.error_code, p.error_message)

        answer = await self._call(
            key,
            lambda: self.coordinator.write_state(
                key,
                state_epoch,
                leader_epoch,
                start_offset,
                delivery_complete_count,
                [b._replace(delivery_state=RecordState(b.delivery_state)) for b in batches],
            ),
            remote,
        )
        if answer.error_code:
            raise persister_error(answer.error_code, answer.error_message)

    async def initialize_state(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        start_offset: int,
    ) -> StateAnswer:
        """InitializeShareGroupState of one share partition (the group coordinator's)."""
        key = SharePartitionKey(group_id, topic_id, partition)

        async def remote(broker: BrokerInfo) -> StateAnswer:
            request = _INIT(
                group_id=group_id,
                topics=[
                    _INIT.InitializeStateData(
                        topic_id=topic_id,
                        partitions=[
                            _INIT.PartitionData(
                                partition=partition,
                                state_epoch=state_epoch,
                                start_offset=start_offset,
                            )
                        ],
                    )
                ],
            )
            assert self.remote is not None
            response = await self.remote.send(
                broker, ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, request
            )
            p = response.results[0].partitions[0]
            return StateAnswer(p.error_code, p.error_message)

        return await self._call(
            key, lambda: self.coordinator.initialize_state(key, state_epoch, start_offset), remote
        )

    async def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> StateAnswer:
        """DeleteShareGroupState of one share partition."""
        key = SharePartitionKey(group_id, topic_id, partition)

        async def remote(broker: BrokerInfo) -> StateAnswer:
            request = _DELETE(
                group_id=group_id,
                topics=[
                    _DELETE.DeleteStateData(
                        topic_id=topic_id, partitions=[_DELETE.PartitionData(partition=partition)]
                    )
                ],
            )
            assert self.remote is not None
            response = await self.remote.send(broker, ApiKey.DELETE_SHARE_GROUP_STATE, 0, request)
            p = response.results[0].partitions[0]
            return StateAnswer(p.error_code, p.error_message)

        return await self._call(key, lambda: self.coordinator.delete_state(key), remote)

    async def read_summary(self, group_id: str, topic_id: uuid.UUID, partition: int) -> StateAnswer:
        """ReadShareGroupStateSummary of one share partition (DescribeShareGroupOffsets)."""
        key = SharePartitionKey(group_id, topic_id, partition)

        async def remote(broker: BrokerInfo) -> StateAnswer:
            request = _SUMMARY(
                group_id=group_id,
                topics=[
                    _SUMMARY.ReadStateSummaryData(
                        topic_id=topic_id,
                        partitions=[_SUMMARY.PartitionData(partition=partition, leader_epoch=0)],
                    )
                ],
            )
            assert self.remote is not None
            response = await self.remote.send(
                broker, ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 1, request
            )
            p = response.results[0].partitions[0]
            state = ShareGroupOffset(
                snapshot_epoch=0,
                state_epoch=p.state_epoch,
                leader_epoch=p.leader_epoch,
                start_offset=p.start_offset,
                delivery_complete_count=p.delivery_complete_count,
            )
            return StateAnswer(p.error_code, p.error_message, state)

        return await self._call(key, lambda: self.coordinator.read_summary(key), remote)


class BrokerClients:
    """:class:`RemoteClients` over the inter-broker listener: one connection per broker,
    opened on first use and dropped when it fails (the next request reconnects)."""

    def __init__(self, client_for: Callable[[BrokerInfo], Any]) -> None:
        self._client_for = client_for
        self._clients: dict[int, Any] = {}

    async def send(self, broker: BrokerInfo, api_key: ApiKey, version: int, request: Any) -> Any:
        client = self._clients.get(broker.node_id)
        if client is None:
            client = self._clients[broker.node_id] = self._client_for(broker)
        try:
            return await client.send(api_key, version, request)
        except BaseException:
            self._clients.pop(broker.node_id, None)
            await client.close()
            raise

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
