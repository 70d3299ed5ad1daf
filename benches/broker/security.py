"""TLS and SASL_SSL setup shared by both brokers of ``benches/broker/run.py``.

One throwaway PKI is generated at bench time (``cryptography``, in a temp dir that is removed
at exit; no key is committed): a CA, and a server certificate for ``localhost``/``127.0.0.1``.
Both brokers get the *same* files through the same Kafka config names
(``ssl.keystore.type=PEM``, ``ssl.keystore.location`` = one PEM file with the PKCS#8 key and
the chain). The key is not encrypted: Kafka 4.3.1 on Java 17 fails to load the PBES2
(PBKDF2 + AES) encrypted key ``cryptography`` writes (``SecretKeyFactory.getInstance`` in
``DefaultSslEngineFactory$PemStore``), and the key password does not change the measurement.
Each broker listens on three listeners at once: ``PLAINTEXT`` (admin calls, readiness),
``SSL`` and ``SASL_SSL`` (SCRAM-SHA-512 by default, or PLAIN from the listener's JAAS config).

Clients: the Java producer (``ProducerPerformance``) reads ``ssl.truststore.type=PEM`` /
``ssl.truststore.location``, ``sasl.mechanism`` and ``sasl.jaas.config`` from a properties
file; confluent-kafka gets ``ssl.ca.location``, ``sasl.mechanism``/``sasl.username``/
``sasl.password``. Host name verification stays on (the certificate names ``localhost``).
"""

from __future__ import annotations

import secrets
import socket
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_SSL")
MECHANISMS = ("SCRAM-SHA-512", "PLAIN")
SCRAM_ITERATIONS = 4096  # Kafka's minimum for SCRAM-SHA-512, and what --add-scram uses
USER = "bench"

_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


@dataclass(frozen=True)
class Security:
    """Files and secrets of one bench run (everything under ``directory``)."""

    directory: Path
    ca_pem: Path  # the CA certificate: the clients' trust store
    keystore_pem: Path  # PKCS#8 key + server certificate + CA certificate (mode 0600)
    mechanism: str
    user: str
    password: str

    # ----------------------------------------------------------------- broker side

    def broker_configs(self, listener_ports: dict[str, int]) -> dict[str, str]:
        """Kafka's broker configs for the three listeners (the same for Kafka and kafkacore;
        Kafka adds its CONTROLLER listener to ``listeners`` and the protocol map)."""
        listeners = ",".join(f"{p}://localhost:{listener_ports[p]}" for p in PROTOCOLS)
        configs = {
            "listeners": listeners,
            "advertised.listeners": listeners,
            "listener.security.protocol.map": ",".join(f"{p}:{p}" for p in PROTOCOLS),
            "inter.broker.listener.name": "PLAINTEXT",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.keystore_pem),
            "ssl.client.auth": "none",
            "sasl.enabled.mechanisms": self.mechanism,
        }
        prefix = f"listener.name.sasl_ssl.{self.mechanism.lower()}.sasl.jaas.config"
        if self.mechanism == "PLAIN":
            configs[prefix] = (
                f"{_LOGIN_MODULES['PLAIN']} required "
                f'user_{self.user}="{self.password}";'  # the users PLAIN accepts
            )
        else:
            # SCRAM users live in the metadata (Kafka: kafka-storage --add-scram;
            # kafkacore: AlterUserScramCredentials); the broker still needs a login module.
            configs[prefix] = f"{_LOGIN_MODULES[self.mechanism]} required;"
        return configs

    def kafka_add_scram(self) -> list[str]:
        """``kafka-storage format`` arguments that store the SCRAM user in the metadata log."""
        if self.mechanism == "PLAIN":
            return []
        spec = (
            f"{self.mechanism}=[name={self.user},iterations={SCRAM_ITERATIONS},"
            f"password={self.password}]"
        )
        return ["--add-scram", spec]

    def create_scram_user(self, bootstrap_plaintext: str) -> None:
        """The SCRAM user through AlterUserScramCredentials (API 51) on the PLAINTEXT
        listener, as ``kafka-configs --alter --add-config 'SCRAM-SHA-512=[...]'`` does."""
        if self.mechanism == "PLAIN":
            return
        from confluent_kafka.admin import (
            AdminClient,
            ScramCredentialInfo,
            ScramMechanism,
            UserScramCredentialUpsertion,
        )

        admin = AdminClient({"bootstrap.servers": bootstrap_plaintext})
        upsert = UserScramCredentialUpsertion(
            self.user,
            ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS),
            self.password.encode(),
        )
        for fut in admin.alter_user_scram_credentials([upsert], request_timeout=30).values():
            fut.result(60)

    # ----------------------------------------------------------------- client side

    def confluent_conf(self, protocol: str) -> dict[str, Any]:
        if protocol == "PLAINTEXT":
            return {}
        conf: dict[str, Any] = {
            "security.protocol": protocol,
            "ssl.ca.location": str(self.ca_pem),
            "ssl.endpoint.identification.algorithm": "https",
        }
        if protocol.startswith("SASL_"):
            conf |= {
                "sasl.mechanism": self.mechanism,
                "sasl.username": self.user,
                "sasl.password": self.password,
            }
        return conf

    def java_client_props(self, protocol: str) -> dict[str, str]:
        if protocol == "PLAINTEXT":
            return {}
        props = {
            "security.protocol": protocol,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca_pem),
        }
        if protocol.startswith("SASL_"):
            props |= {
                "sasl.mechanism": self.mechanism,
                "sasl.jaas.config": (
                    f'{_LOGIN_MODULES[self.mechanism]} required username="{self.user}" '
                    f'password="{self.password}";'
                ),
            }
        return props

    def probe(self, address: str) -> dict[str, Any]:
        """The TLS version and cipher suite the broker's SSL listener settles on with a
        Python (OpenSSL) client, for the report."""
        host, _, port = address.rpartition(":")
        ctx = ssl.create_default_context(cafile=str(self.ca_pem))
        try:
            with (
                socket.create_connection((host, int(port)), timeout=10) as raw,
                ctx.wrap_socket(raw, server_hostname=host) as tls,
            ):
                cipher = tls.cipher()
                return {"version": tls.version(), "cipher": cipher[0] if cipher else None}
        except (OSError, ssl.SSLError) as e:
            return {"error": str(e)}

    def java_client_config_file(self, protocol: str) -> Path | None:
        """A ``--command-config`` file for Kafka's tools (secrets stay off the command line)."""
        props = self.java_client_props(protocol)
        if not props:
            return None
        path = self.directory / f"client-{protocol.lower()}.properties"
        if not path.exists():
            path.write_text("".join(f"{k}={_escape(v)}\n" for k, v in props.items()))
            path.chmod(0o600)
        return path


def _escape(value: str) -> str:
    # java.util.Properties: a backslash escapes; nothing here needs more than that.
    return value.replace("\\", "\\\\")


def make_security(directory: Path, mechanism: str = "SCRAM-SHA-512") -> Security:
    """Generate the PKI into ``directory`` (mode 0700) and random passwords."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"unsupported SASL mechanism {mechanism}; expected one of {MECHANISMS}")
    sys.path.insert(0, str(REPO))
    try:
        from tests.support.certs import make_pki
    finally:
        sys.path.remove(str(REPO))
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    pki = make_pki()
    ca_pem = directory / "ca.pem"
    ca_pem.write_text(pki.ca.cert_pem)
    keystore = directory / "server-keystore.pem"
    keystore.write_text(pki.server.key_pem + pki.server.cert_pem + pki.ca.cert_pem)
    keystore.chmod(0o600)
    return Security(
        directory=directory,
        ca_pem=ca_pem,
        keystore_pem=keystore,
        mechanism=mechanism,
        user=USER,
        password=secrets.token_hex(12),
    )
