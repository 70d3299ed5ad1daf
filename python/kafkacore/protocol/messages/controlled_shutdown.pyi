# Generated from controlled_shutdown.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in controlled_shutdown.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ControlledShutdownRequest", "ControlledShutdownResponse"]

class ControlledShutdownRequest(KafkaStruct):
    """Kafka's ``ControlledShutdownRequestData``: versions 0-3, flexible 3+."""

    broker_id: int
    broker_epoch: int  # versions 2+; default -1
    def __init__(
        self,
        *,
        broker_id: int = ...,
        broker_epoch: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ControlledShutdownResponse(KafkaStruct):
    """Kafka's ``ControlledShutdownResponseData``: versions 0-3, flexible 3+."""

    class RemainingPartition(KafkaStruct):
        topic_name: str
        partition_index: int
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    error_code: int
    remaining_partitions: list[ControlledShutdownResponse.RemainingPartition]
    def __init__(
        self,
        *,
        error_code: int = ...,
        remaining_partitions: list[ControlledShutdownResponse.RemainingPartition] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ControlledShutdownRequest]
RESPONSE: MessageSchema[ControlledShutdownResponse]
