# Generated from describe_log_dirs.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_log_dirs.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeLogDirsRequest", "DescribeLogDirsResponse"]

class DescribeLogDirsRequest(KafkaStruct):
    """Kafka's ``DescribeLogDirsRequestData``: versions 0-5, flexible 2+."""

    class DescribableLogDirTopic(KafkaStruct):
        topic: str
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            topic: str = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[DescribeLogDirsRequest.DescribableLogDirTopic] | None  # versions 0+; nullable 0+
    def __init__(
        self,
        *,
        topics: list[DescribeLogDirsRequest.DescribableLogDirTopic] | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeLogDirsResponse(KafkaStruct):
    """Kafka's ``DescribeLogDirsResponseData``: versions 0-5, flexible 2+."""

    class DescribeLogDirsResult(KafkaStruct):
        error_code: int
        log_dir: str
        topics: list[DescribeLogDirsResponse.DescribeLogDirsTopic]
        total_bytes: int  # versions 4+; default -1
        usable_bytes: int  # versions 4+; default -1
        is_cordoned: bool  # versions 5+; default false
        def __init__(
            self,
            *,
            error_code: int = ...,
            log_dir: str = ...,
            topics: list[DescribeLogDirsResponse.DescribeLogDirsTopic] = ...,
            total_bytes: int = ...,
            usable_bytes: int = ...,
            is_cordoned: bool = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribeLogDirsTopic(KafkaStruct):
        name: str
        partitions: list[DescribeLogDirsResponse.DescribeLogDirsPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[DescribeLogDirsResponse.DescribeLogDirsPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribeLogDirsPartition(KafkaStruct):
        partition_index: int
        partition_size: int
        offset_lag: int
        is_future_key: bool
        def __init__(
            self,
            *,
            partition_index: int = ...,
            partition_size: int = ...,
            offset_lag: int = ...,
            is_future_key: bool = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int  # versions 3+
    results: list[DescribeLogDirsResponse.DescribeLogDirsResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        results: list[DescribeLogDirsResponse.DescribeLogDirsResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeLogDirsRequest]
RESPONSE: MessageSchema[DescribeLogDirsResponse]
