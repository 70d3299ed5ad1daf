"""Authentication building blocks (SASL mechanisms) for the broker's SASL listeners.

Not wired into the broker yet: each mechanism is a sans-IO state machine that takes the
``AuthBytes`` of one SaslAuthenticate request and returns the bytes of the response."""

from kafkacore.security.scram import (
    DelegationTokenCredential,
    ScramAuthenticationError,
    ScramCredential,
    ScramMechanism,
    ScramServer,
    create_credential,
    salted_password,
)

__all__ = [
    "DelegationTokenCredential",
    "ScramAuthenticationError",
    "ScramCredential",
    "ScramMechanism",
    "ScramServer",
    "create_credential",
    "salted_password",
]
