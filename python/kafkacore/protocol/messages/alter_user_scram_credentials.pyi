# Generated from alter_user_scram_credentials.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in alter_user_scram_credentials.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "AlterUserScramCredentialsRequest",
    "AlterUserScramCredentialsResponse",
]

class AlterUserScramCredentialsRequest(KafkaStruct):
    """Kafka's ``AlterUserScramCredentialsRequestData``: versions 0-0, flexible 0+."""

    class ScramCredentialDeletion(KafkaStruct):
        name: str
        mechanism: int
        def __init__(
            self,
            *,
            name: str = ...,
            mechanism: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ScramCredentialUpsertion(KafkaStruct):
        name: str
        mechanism: int
        iterations: int
        salt: bytes
        salted_password: bytes
        def __init__(
            self,
            *,
            name: str = ...,
            mechanism: int = ...,
            iterations: int = ...,
            salt: bytes = ...,
            salted_password: bytes = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    deletions: list[AlterUserScramCredentialsRequest.ScramCredentialDeletion]
    upsertions: list[AlterUserScramCredentialsRequest.ScramCredentialUpsertion]
    def __init__(
        self,
        *,
        deletions: list[AlterUserScramCredentialsRequest.ScramCredentialDeletion] = ...,
        upsertions: list[AlterUserScramCredentialsRequest.ScramCredentialUpsertion] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AlterUserScramCredentialsResponse(KafkaStruct):
    """Kafka's ``AlterUserScramCredentialsResponseData``: versions 0-0, flexible 0+."""

    class AlterUserScramCredentialsResult(KafkaStruct):
        user: str
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            user: str = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    results: list[AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AlterUserScramCredentialsRequest]
RESPONSE: MessageSchema[AlterUserScramCredentialsResponse]
