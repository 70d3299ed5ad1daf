"""The client side of the SASL mechanisms a broker uses toward another broker
(``sasl.mechanism.inter.broker.protocol``): PLAIN and SCRAM-SHA-256/512 (RFC 5802/7677, as
Kafka's ``ScramSaslClient``: ``n,,n=<user>,r=<nonce>``, then the proof; the server's
signature is verified).

:func:`sasl_client` builds one for a mechanism; :meth:`evaluate_challenge` takes the server's
last ``AuthBytes`` (``b""`` to start) and returns the next message to send, or None when the
exchange is over. Not thread-safe: one instance per connection.
"""

from __future__ import annotations

import base64
import hmac
from typing import Protocol

from kafkacore.security import plain
from kafkacore.security.scram import ScramMechanism, escape_username, random_base36, salted_password

__all__ = ["PlainClient", "SaslClient", "SaslClientError", "ScramClient", "sasl_client"]


class SaslClientError(Exception):
    """The server's answer did not verify (a SCRAM server signature or nonce)."""


class SaslClient(Protocol):
    mechanism: str

    def evaluate_challenge(self, challenge: bytes) -> bytes | None: ...

    @property
    def complete(self) -> bool: ...


class PlainClient:
    mechanism = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self._message = plain.client_message(username, password)
        self._sent = False

    @property
    def complete(self) -> bool:
        return self._sent

    def evaluate_challenge(self, challenge: bytes) -> bytes | None:
        if self._sent:
            return None
        self._sent = True
        return self._message


class ScramClient:
    def __init__(self, mechanism: ScramMechanism, username: str, password: str) -> None:
        self.mechanism = mechanism.mechanism_name
        self._scram = mechanism
        self._password = password
        self._nonce = random_base36()
        self._client_first_bare = f"n={escape_username(username)},r={self._nonce}"
        self._step = 0
        self._server_signature = b""

    @property
    def complete(self) -> bool:
        return self._step == 3

    def evaluate_challenge(self, challenge: bytes) -> bytes | None:
        if self._step == 0:
            self._step = 1
            return f"n,,{self._client_first_bare}".encode()
        if self._step == 1:
            server_first = challenge.decode("utf-8")
            fields = dict(item.split("=", 1) for item in server_first.split(",") if "=" in item)
            nonce, salt, iterations = fields.get("r", ""), fields.get("s", ""), fields.get("i", "")
            if not nonce.startswith(self._nonce) or len(nonce) <= len(self._nonce):
                raise SaslClientError("Invalid server nonce: does not start with client nonce")
            mech = self._scram
            salted = salted_password(mech, self._password, base64.b64decode(salt), int(iterations))
            without_proof = f"c=biws,r={nonce}"
            auth_message = f"{self._client_first_bare},{server_first},{without_proof}".encode()
            client_key = mech.hmac(salted, b"Client Key")
            signature = mech.hmac(mech.hash(client_key), auth_message)
            proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
            self._server_signature = mech.hmac(mech.hmac(salted, b"Server Key"), auth_message)
            self._step = 2
            return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
        if self._step == 2:
            text = challenge.decode("utf-8")
            if text.startswith("e="):
                raise SaslClientError(f"Sasl authentication using {self.mechanism} failed: {text}")
            received = base64.b64decode(text[2:]) if text.startswith("v=") else b""
            if not hmac.compare_digest(received, self._server_signature):
                raise SaslClientError("Invalid server signature in server final message")
            self._step = 3
            return None
        return None


def sasl_client(mechanism: str, username: str, password: str) -> SaslClient:
    """A client for ``mechanism`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512); ValueError otherwise."""
    if mechanism == "PLAIN":
        return PlainClient(username, password)
    scram = ScramMechanism.from_name(mechanism)
    if scram is None:
        raise ValueError(f"SASL mechanism {mechanism} is not supported by kafkacore's client")
    return ScramClient(scram, username, password)
