"""Envelope (API key 58), version 0.

A request a broker forwards to the controller with its principal
(KIP-590). ``RequestData`` is the forwarded request, header included;
``RequestPrincipal`` is the principal serialized as :data:`PRINCIPAL` (an ``int16``
version, then ``DefaultPrincipalData`` at that version, as Kafka's
``DefaultKafkaPrincipalBuilder.serialize`` writes it); ``ClientHostAddress`` the raw 4
or 16 bytes.

Declared from the facts of Kafka 4.3.1's message definitions ``EnvelopeRequest.json``,
``EnvelopeResponse.json`` and ``DefaultPrincipalData.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = [
    "PRINCIPAL",
    "REQUEST",
    "RESPONSE",
    "DefaultPrincipalData",
    "EnvelopeRequest",
    "EnvelopeResponse",
]

REQUEST = message(
    "EnvelopeRequest",
    58,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("RequestData", "bytes", "0+", zero_copy=True),
        field("RequestPrincipal", "bytes", "0+", nullable="0+"),
        field("ClientHostAddress", "bytes", "0+"),
    ],
)

RESPONSE = message(
    "EnvelopeResponse",
    58,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ResponseData", "bytes", "0+", nullable="0+", default=NULL, zero_copy=True),
        field("ErrorCode", "int16", "0+"),
    ],
)

PRINCIPAL = message(
    "DefaultPrincipalData",
    -1,
    "data",
    valid="0",
    flexible="0+",
    fields=[
        field("Type", "string", "0+"),
        field("Name", "string", "0+"),
        field("TokenAuthenticated", "bool", "0+"),
    ],
)

EnvelopeRequest = REQUEST.cls
EnvelopeResponse = RESPONSE.cls
DefaultPrincipalData = PRINCIPAL.cls
