# Generated from write_txn_markers.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in write_txn_markers.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "WriteTxnMarkersRequest", "WriteTxnMarkersResponse"]

class WriteTxnMarkersRequest(KafkaStruct):
    """Kafka's ``WriteTxnMarkersRequestData``: versions 0-2, flexible 1+."""

    class WritableTxnMarker(KafkaStruct):
        producer_id: int
        producer_epoch: int
        transaction_result: bool
        topics: list[WriteTxnMarkersRequest.WritableTxnMarkerTopic]
        coordinator_epoch: int
        transaction_version: int  # versions 2+; default 0
        def __init__(
            self,
            *,
            producer_id: int = ...,
            producer_epoch: int = ...,
            transaction_result: bool = ...,
            topics: list[WriteTxnMarkersRequest.WritableTxnMarkerTopic] = ...,
            coordinator_epoch: int = ...,
            transaction_version: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class WritableTxnMarkerTopic(KafkaStruct):
        name: str
        partition_indexes: Sequence[int]
        def __init__(
            self,
            *,
            name: str = ...,
            partition_indexes: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    markers: list[WriteTxnMarkersRequest.WritableTxnMarker]
    def __init__(
        self,
        *,
        markers: list[WriteTxnMarkersRequest.WritableTxnMarker] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class WriteTxnMarkersResponse(KafkaStruct):
    """Kafka's ``WriteTxnMarkersResponseData``: versions 0-2, flexible 1+."""

    class WritableTxnMarkerResult(KafkaStruct):
        producer_id: int
        topics: list[WriteTxnMarkersResponse.WritableTxnMarkerTopicResult]
        def __init__(
            self,
            *,
            producer_id: int = ...,
            topics: list[WriteTxnMarkersResponse.WritableTxnMarkerTopicResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class WritableTxnMarkerTopicResult(KafkaStruct):
        name: str
        partitions: list[WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class WritableTxnMarkerPartitionResult(KafkaStruct):
        partition_index: int
        error_code: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    markers: list[WriteTxnMarkersResponse.WritableTxnMarkerResult]
    def __init__(
        self,
        *,
        markers: list[WriteTxnMarkersResponse.WritableTxnMarkerResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[WriteTxnMarkersRequest]
RESPONSE: MessageSchema[WriteTxnMarkersResponse]
