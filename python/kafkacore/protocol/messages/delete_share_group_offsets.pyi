# Generated from delete_share_group_offsets.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in delete_share_group_offsets.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "DeleteShareGroupOffsetsRequest",
    "DeleteShareGroupOffsetsResponse",
]

class DeleteShareGroupOffsetsRequest(KafkaStruct):
    """Kafka's ``DeleteShareGroupOffsetsRequestData``: versions 0-0, flexible 0+."""

    class DeleteShareGroupOffsetsRequestTopic(KafkaStruct):
        topic_name: str
        def __init__(
            self,
            *,
            topic_name: str = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    topics: list[DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DeleteShareGroupOffsetsResponse(KafkaStruct):
    """Kafka's ``DeleteShareGroupOffsetsResponseData``: versions 0-0, flexible 0+."""

    class DeleteShareGroupOffsetsResponseTopic(KafkaStruct):
        topic_name: str
        topic_id: uuid.UUID
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: uuid.UUID = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+; default null
    responses: list[DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        responses: list[DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DeleteShareGroupOffsetsRequest]
RESPONSE: MessageSchema[DeleteShareGroupOffsetsResponse]
