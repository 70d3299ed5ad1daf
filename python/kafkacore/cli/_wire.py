"""The tools' few requests that the admin client does not make (OffsetDelete, the
controller's reassignment and election APIs, client quotas): one request on a connection
of its own (:func:`kafkacore.net.send_once`), secured as the tool's ``--command-config``
says (:func:`use_security`). One tool invocation is one process, so the setting is the
module's."""

from __future__ import annotations

import argparse
from typing import Any

from kafkacore.net import ClientSecurity, client_security, send_once
from kafkacore.protocol import ApiKey
from kafkacore.protocol.schema import KafkaStruct

_security: ClientSecurity | None = None


def use_security(args: argparse.Namespace) -> None:
    """Secure this process's connections as ``args.command_config`` says."""
    from kafkacore.config import load_properties

    global _security
    path = getattr(args, "command_config", None)
    _security = client_security(load_properties(path)) if path else None


def call(
    host: str,
    port: int,
    api_key: ApiKey,
    version: int,
    request: KafkaStruct,
    *,
    client_id: str,
    timeout_s: float,
) -> Any:
    """``request`` to ``host:port``; the decoded response. Raises ``OSError``
    (``kafkacore.net.ConnectionClosed`` for a closed connection,
    ``kafkacore.net.AuthenticationError`` for a refused login, ``TimeoutError``)."""
    return send_once(
        host,
        port,
        api_key,
        version,
        request,
        client_id=client_id,
        timeout_s=timeout_s,
        security=_security,
    )
