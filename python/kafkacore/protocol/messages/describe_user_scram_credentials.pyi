# Generated from describe_user_scram_credentials.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_user_scram_credentials.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "DescribeUserScramCredentialsRequest",
    "DescribeUserScramCredentialsResponse",
]

class DescribeUserScramCredentialsRequest(KafkaStruct):
    """Kafka's ``DescribeUserScramCredentialsRequestData``: versions 0-0, flexible 0+."""

    class UserName(KafkaStruct):
        name: str
        def __init__(
            self,
            *,
            name: str = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    users: list[DescribeUserScramCredentialsRequest.UserName] | None  # versions 0+; nullable 0+
    def __init__(
        self,
        *,
        users: list[DescribeUserScramCredentialsRequest.UserName] | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeUserScramCredentialsResponse(KafkaStruct):
    """Kafka's ``DescribeUserScramCredentialsResponseData``: versions 0-0, flexible 0+."""

    class DescribeUserScramCredentialsResult(KafkaStruct):
        user: str
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+
        credential_infos: list[DescribeUserScramCredentialsResponse.CredentialInfo]
        def __init__(
            self,
            *,
            user: str = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            credential_infos: list[DescribeUserScramCredentialsResponse.CredentialInfo] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class CredentialInfo(KafkaStruct):
        mechanism: int
        iterations: int
        def __init__(
            self,
            *,
            mechanism: int = ...,
            iterations: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    results: list[DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        results: list[
            DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
        ] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeUserScramCredentialsRequest]
RESPONSE: MessageSchema[DescribeUserScramCredentialsResponse]
