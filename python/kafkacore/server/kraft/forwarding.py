"""Client requests a KRaft broker forwards to the active controller (Kafka's
``ForwardingManager``, KIP-590): CreateTopics, DeleteTopics, CreatePartitions, CreateAcls,
DeleteAcls, AlterConfigs, IncrementalAlterConfigs, ElectLeaders,
AlterPartitionReassignments, ListPartitionReassignments, AlterClientQuotas,
AlterUserScramCredentials, DescribeQuorum, UpdateFeatures - every served API whose
``ApiKeys.forwardable`` is true.

The request is serialized again with its own header, wrapped in an Envelope v0 with the
principal (``DefaultPrincipalData`` v0 behind its ``int16`` version, as Kafka's
``DefaultKafkaPrincipalBuilder.serialize``) and the client's raw address, and sent to the
controller over the broker's :class:`~kafkacore.net.ControllerChannel`; the controller
authorizes the inner request as that principal. The answer:

* the Envelope carries the response (header and body): it is decoded at the request's
  version and answered;
* UNSUPPORTED_VERSION in the Envelope: the controller changed under the client, whose
  connection is closed (:class:`CloseConnection`) so that it renegotiates;
* any other Envelope error, or a response that does not decode: UNKNOWN_SERVER_ERROR;
* no answer within ``request.timeout.ms``: REQUEST_TIMED_OUT.

Thread-safety: one event loop.
"""

from __future__ import annotations

import ipaddress
import logging
import struct

from kafkacore.net import ControllerChannel
from kafkacore.protocol import (
    APIS,
    ApiKey,
    ErrorCode,
    ProtocolError,
    RequestHeader,
    decode_response,
    encode_request,
)
from kafkacore.protocol.api import FORWARDABLE_APIS
from kafkacore.protocol.messages.envelope import (
    PRINCIPAL,
    DefaultPrincipalData,
    EnvelopeRequest,
    EnvelopeResponse,
)
from kafkacore.protocol.schema import KafkaStruct

__all__ = [
    "FORWARDED_APIS",
    "CloseConnection",
    "ForwardingFailed",
    "ForwardingManager",
    "serialize_principal",
]

logger = logging.getLogger("kafkacore.server")

_PRINCIPAL_VERSION = 0
_VERSION_PREFIX = struct.Struct(">h")

FORWARDED_APIS = frozenset(key for key in FORWARDABLE_APIS if key in APIS)
"""The served APIs a KRaft broker forwards (Kafka's forwardable client APIs)."""


class ForwardingFailed(Exception):
    """The forwarded request gets the API's error response with :attr:`error_code`."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code


class CloseConnection(Exception):
    """The client's connection must be closed (the controller no longer serves the
    version the client negotiated)."""


def serialize_principal(principal_type: str, name: str, token_authenticated: bool = False) -> bytes:
    """Kafka's ``DefaultKafkaPrincipalBuilder.serialize``: the version, then the data."""
    data = DefaultPrincipalData(
        type=principal_type, name=name, token_authenticated=token_authenticated
    )
    return _VERSION_PREFIX.pack(_PRINCIPAL_VERSION) + PRINCIPAL.encode(data, _PRINCIPAL_VERSION)


def _address_bytes(host: str) -> bytes:
    """The client's address as Java's ``InetAddress.getAddress`` (4 or 16 bytes)."""
    try:
        return ipaddress.ip_address(host).packed
    except ValueError:
        return b"\x7f\x00\x00\x01"


class ForwardingManager:
    """See the module docstring."""

    def __init__(self, channel: ControllerChannel, timeout_s: float) -> None:
        self.channel = channel
        self.timeout_s = timeout_s

    async def forward(
        self,
        header: RequestHeader,
        request: KafkaStruct,
        principal_type: str,
        principal_name: str,
        client_address: str,
    ) -> KafkaStruct:
        """The controller's response to ``request``; :class:`ForwardingFailed` with the
        error to answer, :class:`CloseConnection` for an UNSUPPORTED_VERSION envelope."""
        name = ApiKey(header.api_key).name
        frame = encode_request(header, request)
        envelope = EnvelopeRequest(
            request_data=frame[4:],  # without the size prefix
            request_principal=serialize_principal(principal_type, principal_name),
            client_host_address=_address_bytes(client_address),
        )
        try:
            answer = await self.channel.send(ApiKey.ENVELOPE, 0, envelope, timeout_s=self.timeout_s)
            assert isinstance(answer, EnvelopeResponse)
        except (TimeoutError, ConnectionError) as exc:
            raise ForwardingFailed(
                ErrorCode.REQUEST_TIMED_OUT, f"Forwarding {name} failed: {exc}"
            ) from None
        if answer.error_code == ErrorCode.UNSUPPORTED_VERSION:
            raise CloseConnection(f"the controller refused {name}")
        if answer.error_code != ErrorCode.NONE or answer.response_data is None:
            raise ForwardingFailed(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"Forwarded {name} failed with error {answer.error_code} in the envelope response",
            )
        try:
            _correlation_id, response = decode_response(
                bytes(answer.response_data), header.api_key, header.api_version
            )
        except ProtocolError as exc:
            raise ForwardingFailed(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"Failed to parse the response from the envelope for {name}: {exc}",
            ) from None
        return response
