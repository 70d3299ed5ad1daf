# Generated from describe_cluster.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_cluster.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeClusterRequest", "DescribeClusterResponse"]

class DescribeClusterRequest(KafkaStruct):
    """Kafka's ``DescribeClusterRequestData``: versions 0-2, flexible 0+."""

    include_cluster_authorized_operations: bool
    endpoint_type: int  # versions 1+; default 1
    include_fenced_brokers: bool  # versions 2+
    def __init__(
        self,
        *,
        include_cluster_authorized_operations: bool = ...,
        endpoint_type: int = ...,
        include_fenced_brokers: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeClusterResponse(KafkaStruct):
    """Kafka's ``DescribeClusterResponseData``: versions 0-2, flexible 0+."""

    class DescribeClusterBroker(KafkaStruct):
        broker_id: int
        host: str
        port: int
        rack: str | None  # versions 0+; nullable 0+; default null
        is_fenced: bool  # versions 2+
        def __init__(
            self,
            *,
            broker_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            is_fenced: bool = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+; default null
    endpoint_type: int  # versions 1+; default 1
    cluster_id: str
    controller_id: int  # versions 0+; default -1
    brokers: list[DescribeClusterResponse.DescribeClusterBroker]
    cluster_authorized_operations: int  # versions 0+; default -2147483648
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        endpoint_type: int = ...,
        cluster_id: str = ...,
        controller_id: int = ...,
        brokers: list[DescribeClusterResponse.DescribeClusterBroker] = ...,
        cluster_authorized_operations: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeClusterRequest]
RESPONSE: MessageSchema[DescribeClusterResponse]
