"""BrokerHeartbeat (API key 63), versions 0-2.

KRaft: a broker's heartbeat to the controller (v1 OfflineLogDirs,
v2 CordonedLogDirs of KIP-1066).

Declared from the facts of Kafka 4.3.1's message definitions
``BrokerHeartbeatRequest.json`` and ``BrokerHeartbeatResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "BrokerHeartbeatRequest", "BrokerHeartbeatResponse"]

REQUEST = message(
    "BrokerHeartbeatRequest",
    63,
    "request",
    valid="0-2",
    flexible="0+",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("BrokerEpoch", "int64", "0+", default=-1),
        field("CurrentMetadataOffset", "int64", "0+"),
        field("WantFence", "bool", "0+"),
        field("WantShutDown", "bool", "0+"),
        field("OfflineLogDirs", "[]uuid", "1+", tagged="1+", tag=0),
        field("CordonedLogDirs", "[]uuid", "2+", nullable="2+", tagged="2+", tag=1, default=NULL),
    ],
)

RESPONSE = message(
    "BrokerHeartbeatResponse",
    63,
    "response",
    valid="0-2",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("IsCaughtUp", "bool", "0+", default=False),
        field("IsFenced", "bool", "0+", default=True),
        field("ShouldShutDown", "bool", "0+"),
    ],
)

BrokerHeartbeatRequest = REQUEST.cls
BrokerHeartbeatResponse = RESPONSE.cls
