"""AlterUserScramCredentials (API key 51), version 0 (KIP-554).

Declared from the facts of Kafka's message definitions
``AlterUserScramCredentialsRequest.json`` and ``AlterUserScramCredentialsResponse.json``.
``Mechanism``: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512. An upsertion carries the salt and
``SaltedPassword = Hi(password, salt, iterations)``, never the password.
"""

from kafkacore.protocol.schema import field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "AlterUserScramCredentialsRequest",
    "AlterUserScramCredentialsResponse",
]

REQUEST = message(
    "AlterUserScramCredentialsRequest",
    51,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field(
            "Deletions",
            "[]ScramCredentialDeletion",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("Mechanism", "int8", "0+"),
            ],
        ),
        field(
            "Upsertions",
            "[]ScramCredentialUpsertion",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("Mechanism", "int8", "0+"),
                field("Iterations", "int32", "0+"),
                field("Salt", "bytes", "0+"),
                field("SaltedPassword", "bytes", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "AlterUserScramCredentialsResponse",
    51,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Results",
            "[]AlterUserScramCredentialsResult",
            "0+",
            fields=[
                field("User", "string", "0+"),
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+"),
            ],
        ),
    ],
)

AlterUserScramCredentialsRequest = REQUEST.cls
AlterUserScramCredentialsResponse = RESPONSE.cls
