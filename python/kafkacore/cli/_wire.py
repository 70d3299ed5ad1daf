"""One request frame out, one response frame back, on a connection of its own: for the
tools' few requests that the admin client does not make (OffsetDelete, the controller's
reassignment and election APIs).

The connection is secured as the tool's ``--command-config`` says (:func:`use_security`):
TLS with the ``ssl.*`` settings, then SaslHandshake v1 + SaslAuthenticate v1 with
``sasl.mechanism`` and the JAAS ``username``/``password``, as a Kafka client does before
its first request. One tool invocation is one process, so the setting is the module's."""

from __future__ import annotations

import argparse
import itertools
import socket
import struct
from collections.abc import Mapping
from typing import Any

from kafkacore.server.inter_broker import ClientSecurity

_security: ClientSecurity | None = None


def client_security(props: Mapping[str, str]) -> ClientSecurity | None:
    """The security of a Java client properties file (None: PLAINTEXT). Raises
    ``ValueError`` for an unusable combination."""
    from kafkacore.security.jaas import parse_jaas_config
    from kafkacore.security.ssl import client_context

    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ValueError(f"security.protocol={protocol}: not a security protocol")
    if protocol == "PLAINTEXT":
        return None
    context = client_context(props) if protocol.endswith("SSL") else None
    if not protocol.startswith("SASL"):
        return ClientSecurity(context)
    mechanism = props.get("sasl.mechanism", "GSSAPI")
    jaas = props.get("sasl.jaas.config")
    if mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512") or jaas is None:
        raise ValueError(
            f"sasl.mechanism={mechanism}: kafkacore's tools log in with PLAIN or SCRAM and "
            "the username and password of sasl.jaas.config"
        )
    options = parse_jaas_config(jaas, "sasl.jaas.config").options
    return ClientSecurity(
        context, mechanism, options.get("username", ""), options.get("password", "")
    )


def use_security(args: argparse.Namespace) -> None:
    """Secure this process's connections as ``args.command_config`` says."""
    from kafkacore.config import load_properties

    global _security
    path = getattr(args, "command_config", None)
    _security = client_security(load_properties(path)) if path else None


class ConnectionClosed(OSError):
    """The broker closed the connection before its whole response had arrived."""


def exchange(host: str, port: int, frame: bytes, timeout: float) -> bytes:
    """Send the encoded request ``frame`` to ``host:port``; the response frame without its
    size prefix. Raises ``OSError`` (``ConnectionClosed`` for a closed connection;
    ``AuthenticationFailed`` for a refused login)."""
    security = _security
    with socket.create_connection((host, port), timeout=timeout) as raw:
        sock: Any = raw
        if security is not None and security.ssl_context is not None:
            sock = security.ssl_context.wrap_socket(raw, server_hostname=host)
        if security is not None and security.sasl_mechanism is not None:
            _login(sock, security)
        sock.sendall(frame)
        return _read_frame(sock)


class AuthenticationFailed(OSError):
    """The broker refused the tool's SASL login (its message)."""


def _read_frame(sock: Any) -> bytes:
    data = b""
    size: int | None = None
    while size is None or len(data) < size + 4:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionClosed("connection closed")
        data += chunk
        if size is None and len(data) >= 4:
            size = struct.unpack(">i", data[:4])[0]
    return data[4 : 4 + size]


def _login(sock: Any, security: ClientSecurity) -> None:
    from kafkacore.protocol import RequestHeader, decode_response, encode_request
    from kafkacore.security.sasl import (
        SaslAuthenticateRefused,
        SaslClientError,
        SaslHandshakeRefused,
        sasl_login,
    )

    mechanism = security.sasl_mechanism
    assert mechanism is not None
    login = sasl_login(mechanism, security.username, security.password)
    try:
        key, request = next(login)
        for correlation_id in itertools.count():
            sock.sendall(
                encode_request(RequestHeader(key, 1, correlation_id, "kafkacore-tool"), request)
            )
            key, request = login.send(decode_response(_read_frame(sock), key, 1)[1])
    except StopIteration:
        return
    except SaslHandshakeRefused as exc:
        enabled = list(exc.response.mechanisms)
        raise AuthenticationFailed(
            f"Unsupported SASL mechanism {mechanism} (the broker enables {enabled})"
        ) from None
    except SaslAuthenticateRefused as exc:
        raise AuthenticationFailed(str(exc.response.error_message)) from None
    except SaslClientError as exc:
        raise AuthenticationFailed(str(exc)) from None
