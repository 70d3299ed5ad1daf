# Generated from delete_topics.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in delete_topics.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DeleteTopicsRequest", "DeleteTopicsResponse"]

class DeleteTopicsRequest(KafkaStruct):
    """Kafka's ``DeleteTopicsRequestData``: versions 1-6, flexible 4+."""

    class DeleteTopicState(KafkaStruct):
        name: str | None  # versions 6+; nullable 6+; default null
        topic_id: uuid.UUID  # versions 6+
        def __init__(
            self,
            *,
            name: str | None = ...,
            topic_id: uuid.UUID = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[DeleteTopicsRequest.DeleteTopicState]  # versions 6+
    topic_names: Sequence[str]  # versions 1-5
    timeout_ms: int  # versions 1+
    def __init__(
        self,
        *,
        topics: list[DeleteTopicsRequest.DeleteTopicState] = ...,
        topic_names: Sequence[str] = ...,
        timeout_ms: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DeleteTopicsResponse(KafkaStruct):
    """Kafka's ``DeleteTopicsResponseData``: versions 1-6, flexible 4+."""

    class DeletableTopicResult(KafkaStruct):
        name: str | None  # versions 1+; nullable 6+
        topic_id: uuid.UUID  # versions 6+
        error_code: int  # versions 1+
        error_message: str | None  # versions 5+; nullable 5+; default null
        def __init__(
            self,
            *,
            name: str | None = ...,
            topic_id: uuid.UUID = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    responses: list[DeleteTopicsResponse.DeletableTopicResult]  # versions 1+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        responses: list[DeleteTopicsResponse.DeletableTopicResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DeleteTopicsRequest]
RESPONSE: MessageSchema[DeleteTopicsResponse]
