"""Security: TLS contexts and SSL principals (:mod:`.ssl`), SASL mechanisms
(:mod:`.scram`, each a sans-IO state machine over SaslAuthenticate's ``AuthBytes``) and
ACLs with Kafka's authorizer semantics (:mod:`.acl`)."""

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
