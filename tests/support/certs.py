"""Throwaway PKI for TLS tests, generated at test time with ``cryptography`` (no key is committed).

:func:`make_pki` returns a CA, a server certificate for ``localhost`` / ``127.0.0.1`` and a client
certificate, each as PEM text; keys are PKCS#8 as Kafka's PEM stores require, optionally encrypted.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Identity:
    """A certificate (PEM, signed by the CA) and its private key (PKCS#8 PEM)."""

    cert_pem: str
    key_pem: str
    key: ec.EllipticCurvePrivateKey

    def encrypted_key_pem(self, password: str) -> str:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(password.encode()),
        ).decode()

    def pkcs1_like_key_pem(self) -> str:
        """The key in OpenSSL's traditional format (``BEGIN EC PRIVATE KEY``): not PKCS#8."""
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ).decode()


@dataclass(frozen=True)
class Pki:
    ca: Identity
    server: Identity
    client: Identity
    other_ca: Identity  # a CA that signed nothing here: trusting only it must fail

    def server_ssl_configs(self, client_auth: str = "none", **extra: Any) -> dict[str, Any]:
        """A listener's ssl.* configs: the server certificate, trusting the CA."""
        return {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.certificate.chain": self.server.cert_pem,
            "ssl.keystore.key": self.server.key_pem,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": self.ca.cert_pem,
            "ssl.client.auth": client_auth,
            **extra,
        }

    def client_ssl_configs(self, with_cert: bool = True, **extra: Any) -> dict[str, Any]:
        """A client's ssl.* configs: trusting the CA, with the client certificate or not."""
        configs: dict[str, Any] = {
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": self.ca.cert_pem,
        }
        if with_cert:
            configs.update(
                {
                    "ssl.keystore.type": "PEM",
                    "ssl.keystore.certificate.chain": self.client.cert_pem,
                    "ssl.keystore.key": self.client.key_pem,
                }
            )
        configs.update(extra)
        return configs


def _name(cn: str, ou: str | None = None) -> x509.Name:
    attributes = [
        x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Kafkacore Test"),
    ]
    if ou is not None:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attributes)


def _pem(cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> Identity:
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return Identity(cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem, key)


def _ca(cn: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(
    subject: x509.Name,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    *,
    server: bool,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    return builder.sign(ca_key, hashes.SHA256()), key


def make_pki(client_cn: str = "alice", client_ou: str | None = "Engineering") -> Pki:
    ca_cert, ca_key = _ca("Kafkacore Test CA")
    server = _leaf(_name("localhost"), ca_cert, ca_key, server=True)
    client = _leaf(_name(client_cn, client_ou), ca_cert, ca_key, server=False)
    other_cert, other_key = _ca("Unrelated CA")
    return Pki(_pem(ca_cert, ca_key), _pem(*server), _pem(*client), _pem(other_cert, other_key))


def self_signed_der(subject: x509.Name) -> bytes:
    """A throwaway self-signed certificate with ``subject``, DER-encoded (for DN printing)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.DER)
