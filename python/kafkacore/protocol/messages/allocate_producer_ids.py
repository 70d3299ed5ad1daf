"""AllocateProducerIds (API key 67), version 0: a ZooKeeper-mode broker asks the
controller for a block of producer ids (KIP-730). Kafka 3.x brokers at IBP 3.0 or later
take their idempotent and transactional producer ids this way instead of writing
``/latest_producer_id_block`` themselves; until a block arrives they answer
InitProducerId with COORDINATOR_LOAD_IN_PROGRESS.

Declared from the facts of Kafka 3.9's message definitions
``AllocateProducerIdsRequest.json`` and ``AllocateProducerIdsResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "AllocateProducerIdsRequest", "AllocateProducerIdsResponse"]

REQUEST = message(
    "AllocateProducerIdsRequest",
    67,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("BrokerEpoch", "int64", "0+", default=-1),
    ],
)

RESPONSE = message(
    "AllocateProducerIdsResponse",
    67,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ProducerIdStart", "int64", "0+"),
        field("ProducerIdLen", "int32", "0+"),
    ],
)

AllocateProducerIdsRequest = REQUEST.cls
AllocateProducerIdsResponse = RESPONSE.cls
