"""The broker-to-broker client's security: ``inter_broker_security`` from the inter-broker
listener's configs, and ``NodeClient`` logging in over TLS with SCRAM-SHA-512 and PLAIN
(SaslHandshake v1 + SaslAuthenticate) before its first request; a refused login is a
ConnectionError carrying Kafka's message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkacore.config import BrokerConfig
from kafkacore.config.defs import ConfigError
from kafkacore.net import ClientSecurity, NodeClient, inter_broker_security
from kafkacore.protocol import ApiKey
from kafkacore.security.ssl import client_context
from kafkacore.server import KafkaServer
from support.certs import make_pki
from support.raw_client import make_request, run_broker
from support.secure import plain_jaas, scram_config, scram_jaas, write_pem_files


def _props(tmp_path: Path) -> dict[str, Any]:
    pem = write_pem_files(tmp_path / "pki", make_pki())
    return {
        "listeners": "SASL_SSL://localhost:0",
        "security.inter.broker.protocol": "SASL_SSL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": scram_jaas("broker", "pw"),
        "listener.name.sasl_ssl.plain.sasl.jaas.config": plain_jaas(
            "broker", "pw", {"broker": "pw"}
        ),
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pem.server_keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pem.ca),
        "connection.failed.authentication.delay.ms": "0",
    }


def test_inter_broker_security_from_the_listener_configs(tmp_path: Path) -> None:
    props = {**_props(tmp_path), "log.dirs": str(tmp_path / "d")}
    security = inter_broker_security(BrokerConfig(props))
    assert security is not None and security.ssl_context is not None
    assert (security.sasl_mechanism, security.username, security.password) == (
        "SCRAM-SHA-512",
        "broker",
        "pw",
    )
    assert "pw" not in repr(security)
    plain = {**props, "sasl.mechanism.inter.broker.protocol": "PLAIN"}
    assert inter_broker_security(BrokerConfig(plain)).sasl_mechanism == "PLAIN"  # type: ignore[union-attr]
    missing = dict(props)
    del missing["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"]
    with pytest.raises(ConfigError) as e:
        inter_broker_security(BrokerConfig(missing))
    assert e.value.name == "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"
    assert inter_broker_security(BrokerConfig({"log.dirs": str(tmp_path)})) is None


def test_node_client_logs_in_over_tls(tmp_path: Path) -> None:
    props = _props(tmp_path / "certs")
    (tmp_path / "data").mkdir()

    async def scenario(server: KafkaServer) -> None:
        assert server.services is not None
        server.services.scram_credentials.update_user("broker", scram_config("pw"))
        security = inter_broker_security(server.config)
        assert security is not None
        request = make_request("Metadata", topics=None)
        for mechanism in ("SCRAM-SHA-512", "PLAIN"):
            good = ClientSecurity(security.ssl_context, mechanism, "broker", "pw")
            client = NodeClient("localhost", server.bound_port, client_id="b", security=good)
            response = await client.send(ApiKey.METADATA, 12, request)
            assert [b.node_id for b in response.brokers] == [1]
            await client.close()
        bad = ClientSecurity(security.ssl_context, "SCRAM-SHA-512", "broker", "nope")
        client = NodeClient("localhost", server.bound_port, client_id="b", security=bad)
        with pytest.raises(ConnectionError, match="invalid credentials with SASL mechanism"):
            await client.send(ApiKey.METADATA, 12, request)
        assert client.closed
        # TLS only, no SASL login: the broker closes the connection at the first request
        tls_only = ClientSecurity(security.ssl_context)
        client = NodeClient("localhost", server.bound_port, client_id="b", security=tls_only)
        with pytest.raises(ConnectionError):
            await client.send(ApiKey.METADATA, 12, request)
        await client.close()
        # no TLS at all
        untrusted = ClientSecurity(client_context({}), "PLAIN", "broker", "pw")
        client = NodeClient("localhost", server.bound_port, client_id="b", security=untrusted)
        with pytest.raises(ConnectionError):
            await client.send(ApiKey.METADATA, 12, request)

    run_broker(tmp_path / "data", scenario, **props)
