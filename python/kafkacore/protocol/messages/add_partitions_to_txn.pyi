# Generated from add_partitions_to_txn.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in add_partitions_to_txn.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AddPartitionsToTxnRequest", "AddPartitionsToTxnResponse"]

class AddPartitionsToTxnRequest(KafkaStruct):
    """Kafka's ``AddPartitionsToTxnRequestData``: versions 0-5, flexible 3+."""

    class AddPartitionsToTxnTransaction(KafkaStruct):
        transactional_id: str  # versions 4+
        producer_id: int  # versions 4+
        producer_epoch: int  # versions 4+
        verify_only: bool  # versions 4+; default false
        topics: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic]  # versions 4+
        def __init__(
            self,
            *,
            transactional_id: str = ...,
            producer_id: int = ...,
            producer_epoch: int = ...,
            verify_only: bool = ...,
            topics: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AddPartitionsToTxnTopic(KafkaStruct):
        name: str
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    transactions: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction]  # versions 4+
    v3_and_below_transactional_id: str  # versions 0-3
    v3_and_below_producer_id: int  # versions 0-3
    v3_and_below_producer_epoch: int  # versions 0-3
    v3_and_below_topics: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic]  # versions 0-3
    def __init__(
        self,
        *,
        transactions: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction] = ...,
        v3_and_below_transactional_id: str = ...,
        v3_and_below_producer_id: int = ...,
        v3_and_below_producer_epoch: int = ...,
        v3_and_below_topics: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AddPartitionsToTxnResponse(KafkaStruct):
    """Kafka's ``AddPartitionsToTxnResponseData``: versions 0-5, flexible 3+."""

    class AddPartitionsToTxnResult(KafkaStruct):
        transactional_id: str  # versions 4+
        topic_results: list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult]  # versions 4+
        def __init__(
            self,
            *,
            transactional_id: str = ...,
            topic_results: list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AddPartitionsToTxnTopicResult(KafkaStruct):
        name: str
        results_by_partition: list[AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult]
        def __init__(
            self,
            *,
            name: str = ...,
            results_by_partition: list[
                AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult
            ] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AddPartitionsToTxnPartitionResult(KafkaStruct):
        partition_index: int
        partition_error_code: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            partition_error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int  # versions 4+
    results_by_transaction: list[AddPartitionsToTxnResponse.AddPartitionsToTxnResult]  # versions 4+
    # versions 0-3
    results_by_topic_v3_and_below: list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        results_by_transaction: list[AddPartitionsToTxnResponse.AddPartitionsToTxnResult] = ...,
        results_by_topic_v3_and_below: list[
            AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult
        ] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AddPartitionsToTxnRequest]
RESPONSE: MessageSchema[AddPartitionsToTxnResponse]
