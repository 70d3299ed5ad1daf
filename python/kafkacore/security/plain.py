"""SASL/PLAIN (RFC 4616) as Kafka's ``PlainSaslServer`` and ``PlainServerCallbackHandler``
do it: the client's single message is ``[authzid] NUL authcid NUL passwd``; the password is
checked against the listener's JAAS option ``user_<name>``, compared in constant time.

Every failure raises :class:`PlainAuthenticationError`, whose message (Kafka's own text) the
client receives with SASL_AUTHENTICATION_FAILED: Kafka throws ``SaslAuthenticationException``
for all of them. Not thread-safe: one :class:`PlainServer` per connection.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping

from kafkacore.errors import KafkaCoreError

__all__ = ["PlainAuthenticationError", "PlainServer", "client_message", "jaas_users"]

USER_PREFIX = "user_"


class PlainAuthenticationError(KafkaCoreError):
    """A failed PLAIN login; the message is what the client sees."""

    client_visible = True

    def client_message(self, mechanism: str = "PLAIN", *, reauthentication: bool = False) -> str:
        return str(self)


def jaas_users(options: Mapping[str, str]) -> dict[str, str]:
    """``user_<name>="<password>"`` JAAS options as name -> password."""
    return {k[len(USER_PREFIX) :]: v for k, v in options.items() if k.startswith(USER_PREFIX)}


def client_message(username: str, password: str, authorization_id: str = "") -> bytes:
    """The client's PLAIN message (what a broker sends as an inter-broker client)."""
    return f"{authorization_id}\0{username}\0{password}".encode()


def _tokens(text: str) -> list[str]:
    # Kafka's extractTokens: at most 4 pieces split at NUL; exactly 3 are valid
    tokens: list[str] = []
    start = 0
    for _ in range(4):
        end = text.find("\0", start)
        if end == -1:
            tokens.append(text[start:])
            break
        tokens.append(text[start:end])
        start = end + 1
    if len(tokens) != 3:
        raise PlainAuthenticationError(
            f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}"
        )
    return tokens


class PlainServer:
    """One connection's PLAIN exchange. ``password_of(user)``: the expected password or None."""

    mechanism = "PLAIN"

    def __init__(self, password_of: Callable[[str], str | None]) -> None:
        self._password_of = password_of
        self.complete = False
        self.authorization_id: str | None = None

    def evaluate_response(self, response: bytes) -> bytes:
        if self.complete:
            raise PlainAuthenticationError("Authentication exchange has completed")
        authzid, username, password = _tokens(response.decode("utf-8", errors="replace"))
        if not username:
            raise PlainAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise PlainAuthenticationError("Authentication failed: password not specified")
        expected = self._password_of(username)
        # constant time over the password bytes (Kafka's Utils.isEqualConstantTime)
        ok = hmac.compare_digest(
            password.encode("utf-8"), (expected if expected is not None else "").encode("utf-8")
        )
        if expected is None or not ok:
            raise PlainAuthenticationError("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise PlainAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different "
                "from username"
            )
        self.authorization_id = username
        self.complete = True
        return b""
