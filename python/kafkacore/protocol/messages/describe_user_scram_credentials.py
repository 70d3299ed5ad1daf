"""DescribeUserScramCredentials (API key 50), version 0 (KIP-554).

Declared from the facts of Kafka's message definitions
``DescribeUserScramCredentialsRequest.json`` and
``DescribeUserScramCredentialsResponse.json``. ``Users`` null or empty: every user.
``Mechanism``: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.
"""

from kafkacore.protocol.schema import field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "DescribeUserScramCredentialsRequest",
    "DescribeUserScramCredentialsResponse",
]

REQUEST = message(
    "DescribeUserScramCredentialsRequest",
    50,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field(
            "Users",
            "[]UserName",
            "0+",
            nullable="0+",
            fields=[field("Name", "string", "0+")],
        ),
    ],
)

RESPONSE = message(
    "DescribeUserScramCredentialsResponse",
    50,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
        field(
            "Results",
            "[]DescribeUserScramCredentialsResult",
            "0+",
            fields=[
                field("User", "string", "0+"),
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+"),
                field(
                    "CredentialInfos",
                    "[]CredentialInfo",
                    "0+",
                    fields=[
                        field("Mechanism", "int8", "0+"),
                        field("Iterations", "int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

DescribeUserScramCredentialsRequest = REQUEST.cls
DescribeUserScramCredentialsResponse = RESPONSE.cls
