"""ControllerRegistration (API key 70), version 0.

KRaft: a controller registers its endpoints and features (KIP-919).

Declared from the facts of Kafka 4.3.1's message definitions
``ControllerRegistrationRequest.json`` and ``ControllerRegistrationResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "ControllerRegistrationRequest", "ControllerRegistrationResponse"]

REQUEST = message(
    "ControllerRegistrationRequest",
    70,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("ControllerId", "int32", "0+"),
        field("IncarnationId", "uuid", "0+"),
        field("ZkMigrationReady", "bool", "0+"),
        field(
            "Listeners",
            "[]Listener",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("Host", "string", "0+"),
                field("Port", "uint16", "0+"),
                field("SecurityProtocol", "int16", "0+"),
            ],
        ),
        field(
            "Features",
            "[]Feature",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("MinSupportedVersion", "int16", "0+"),
                field("MaxSupportedVersion", "int16", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "ControllerRegistrationResponse",
    70,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
    ],
)

ControllerRegistrationRequest = REQUEST.cls
ControllerRegistrationResponse = RESPONSE.cls
