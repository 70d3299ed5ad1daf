"""What a KRaft broker asks the controller for itself, from its I/O threads (the
:class:`~kafkacore.server.kraft.store.ControllerRequests` of its metadata store):

* an internal topic (``__consumer_offsets``, ``__transaction_state``) with the assignment
  its coordinator chose: CreateTopics v7 (Kafka's ``AutoTopicCreationManager`` sends it
  without an Envelope when no client request started it);
* a block of producer ids: AllocateProducerIds v0 with the broker id and epoch (Kafka's
  ``RPCProducerIdManager``).

Each call sends on the event loop through the broker's
:class:`~kafkacore.net.ControllerChannel` and waits for the answer on the calling thread.

Thread-safety: any thread but the event loop's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

from kafkacore.net import ControllerChannel
from kafkacore.protocol import ApiKey, ErrorCode, KafkaStruct
from kafkacore.protocol.messages.allocate_producer_ids import (
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
)
from kafkacore.protocol.messages.create_topics import CreateTopicsRequest, CreateTopicsResponse

__all__ = ["ChannelControllerRequests"]

_CREATE_TOPICS_VERSION = 7


class ChannelControllerRequests:
    """See the module docstring. ``broker_epoch()`` is this broker's registration epoch."""

    def __init__(
        self,
        channel: ControllerChannel,
        loop: asyncio.AbstractEventLoop,
        node_id: int,
        broker_epoch: Callable[[], int],
        timeout_s: float,
    ) -> None:
        self.channel = channel
        self.loop = loop
        self.node_id = node_id
        self._broker_epoch = broker_epoch
        self.timeout_s = timeout_s

    def _send(self, api_key: ApiKey, version: int, request: KafkaStruct) -> KafkaStruct:
        future = asyncio.run_coroutine_threadsafe(
            self.channel.send(api_key, version, request, timeout_s=self.timeout_s), self.loop
        )
        response: KafkaStruct = future.result(self.timeout_s + 5)
        return response

    def create_topic(
        self, name: str, assignment: Sequence[Sequence[int]], configs: Mapping[str, str]
    ) -> None:
        cls = CreateTopicsRequest
        request = cls(
            topics=[
                cls.CreatableTopic(
                    name=name,
                    num_partitions=-1,
                    replication_factor=-1,
                    assignments=[
                        cls.CreatableReplicaAssignment(partition_index=i, broker_ids=list(r))
                        for i, r in enumerate(assignment)
                    ],
                    configs=[cls.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
                )
            ],
            timeout_ms=int(self.timeout_s * 1000),
            validate_only=False,
        )
        response = self._send(ApiKey.CREATE_TOPICS, _CREATE_TOPICS_VERSION, request)
        assert isinstance(response, CreateTopicsResponse)
        for topic in response.topics:
            if topic.error_code == ErrorCode.TOPIC_ALREADY_EXISTS:
                raise KeyError(name)
            if topic.error_code != ErrorCode.NONE:
                raise ValueError(
                    f"Creating {name} failed: {ErrorCode(topic.error_code).name} "
                    f"({topic.error_message})"
                )

    def allocate_producer_ids(self) -> tuple[int, int]:
        request = AllocateProducerIdsRequest(
            broker_id=self.node_id, broker_epoch=self._broker_epoch()
        )
        response = self._send(ApiKey.ALLOCATE_PRODUCER_IDS, 0, request)
        assert isinstance(response, AllocateProducerIdsResponse)
        if response.error_code != ErrorCode.NONE:
            raise ValueError(f"AllocateProducerIds failed: {ErrorCode(response.error_code).name}")
        return response.producer_id_start, response.producer_id_len
