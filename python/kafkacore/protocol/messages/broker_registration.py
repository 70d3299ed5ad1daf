"""BrokerRegistration (API key 62), versions 0-4.

KRaft: a broker registers with the controller (v1 IsMigratingZkBroker,
v2 LogDirs, v3 PreviousBrokerEpoch of KIP-966, v4 allows MinSupportedVersion 0).

Declared from the facts of Kafka 4.3.1's message definitions
``BrokerRegistrationRequest.json`` and ``BrokerRegistrationResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "BrokerRegistrationRequest", "BrokerRegistrationResponse"]

REQUEST = message(
    "BrokerRegistrationRequest",
    62,
    "request",
    valid="0-4",
    flexible="0+",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("ClusterId", "string", "0+"),
        field("IncarnationId", "uuid", "0+"),
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
        field("Rack", "string", "0+", nullable="0+"),
        field("IsMigratingZkBroker", "bool", "1+", default=False),
        field("LogDirs", "[]uuid", "2+"),
        field("PreviousBrokerEpoch", "int64", "3+", default=-1),
    ],
)

RESPONSE = message(
    "BrokerRegistrationResponse",
    62,
    "response",
    valid="0-4",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("BrokerEpoch", "int64", "0+", default=-1),
    ],
)

BrokerRegistrationRequest = REQUEST.cls
BrokerRegistrationResponse = RESPONSE.cls
