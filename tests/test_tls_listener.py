"""TLS listeners end to end on an in-process broker: the mTLS principal every handler sees
(``User:<mapped DN>``, ANONYMOUS without a certificate), ``ssl.client.auth=required``,
principal mapping rules, SASL_SSL (the principal from SASL), fetched records sent through
TLS (no sendfile) byte for byte, and configuration errors naming the key."""

from __future__ import annotations

import asyncio
import ssl
import time
from pathlib import Path
from typing import Any

import pytest

from kafkacore.config import BrokerConfig
from kafkacore.config.defs import ConfigError
from kafkacore.protocol import ApiKey
from kafkacore.pure import build_batch
from kafkacore.security.ssl import client_context
from kafkacore.server import KafkaServer, channel
from kafkacore.server.broker import listener_security
from kafkacore.server.request_context import RequestContext
from support.certs import Pki, make_pki
from support.raw_client import RawClient, fetch_request, make_request, produce_request, run_broker

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret";'
)


@pytest.fixture(scope="module")
def pki() -> Pki:
    return make_pki()


def _listener_props(pki: Pki, client_auth: str = "required", **extra: str) -> dict[str, Any]:
    return {
        "listeners": "SSL://localhost:0",
        "security.inter.broker.protocol": "SSL",
        **pki.server_ssl_configs(client_auth, **extra),
    }


def _client_context(pki: Pki, with_cert: bool = True) -> ssl.SSLContext:
    return client_context(pki.client_ssl_configs(with_cert))


async def _connect(port: int, context: ssl.SSLContext) -> RawClient:
    return RawClient(*await asyncio.open_connection("localhost", port, ssl=context))


@pytest.fixture
def principals(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The principal of every DescribeCluster request the broker handles."""
    seen: list[str] = []
    original = channel.HANDLERS[ApiKey.DESCRIBE_CLUSTER]

    def recording(services: Any, context: RequestContext, request: Any) -> Any:
        seen.append(str(context.principal))
        return original(services, context, request)

    monkeypatch.setitem(channel.HANDLERS, ApiKey.DESCRIBE_CLUSTER, recording)
    return seen


async def _describe_cluster(client: RawClient) -> Any:
    return await client.call("DescribeCluster", 0, make_request("DescribeCluster"))


def test_mtls_principal_is_the_certificate_subject(
    tmp_path: Path, pki: Pki, principals: list[str]
) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await _connect(server.bound_port, _client_context(pki))
        assert (await _describe_cluster(client)).error_code == 0
        client.close()

    run_broker(tmp_path, scenario, **_listener_props(pki))
    assert principals == ["User:CN=alice,OU=Engineering,O=Kafkacore Test,C=US"]


def test_principal_mapping_rules_and_anonymous_without_a_certificate(
    tmp_path: Path, pki: Pki, principals: list[str]
) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await _connect(server.bound_port, _client_context(pki))
        await _describe_cluster(client)
        client.close()
        anonymous = await _connect(server.bound_port, _client_context(pki, with_cert=False))
        await _describe_cluster(anonymous)
        anonymous.close()

    rules = "RULE:^CN=(.*?),OU=(.*?),O=.*$/$1@$2/L,DEFAULT"
    props = _listener_props(pki, "requested", **{"ssl.principal.mapping.rules": rules})
    run_broker(tmp_path, scenario, **props)
    assert principals == ["User:alice@engineering", "User:ANONYMOUS"]


def test_client_auth_required_refuses_a_client_without_certificate(
    tmp_path: Path, pki: Pki
) -> None:
    async def scenario(server: KafkaServer) -> None:
        with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
            client = await _connect(server.bound_port, _client_context(pki, with_cert=False))
            # TLS 1.3: the server's refusal arrives with the first read
            await _describe_cluster(client)
        # an untrusted server certificate is refused by the client
        other = client_context(
            {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": pki.other_ca.cert_pem}
        )
        with pytest.raises(ssl.SSLError):
            await _connect(server.bound_port, other)

    run_broker(tmp_path, scenario, **_listener_props(pki))


def test_fetched_records_go_through_tls_byte_for_byte(tmp_path: Path, pki: Pki) -> None:
    """A Fetch response's records are file regions: over TLS they are read and encrypted
    (sendfile cannot), small ones inline, large ones on a worker thread."""

    async def scenario(server: KafkaServer) -> None:
        client = await _connect(server.bound_port, _client_context(pki))
        now = int(time.time() * 1000)
        small = bytes(build_batch([(0, now, None, b"x" * 100, [])]))
        large = bytes(
            build_batch([(i, now, None, bytes([i % 251]) * 1024, []) for i in range(400)])
        )
        await client.call(
            "CreateTopics",
            7,
            make_request(
                "CreateTopics",
                topics=[
                    make_request("CreateTopics").CreatableTopic(
                        name="t", num_partitions=1, replication_factor=1
                    )
                ],
                timeout_ms=5000,
            ),
        )
        for batch in (small, large):
            response = await client.call("Produce", 9, produce_request("t", 0, batch), cid=2)
            assert response.responses[0].partition_responses[0].error_code == 0
        fetched = await client.call("Fetch", 12, fetch_request("t", 0), cid=3)
        records = bytes(fetched.responses[0].partitions[0].records)
        assert len(records) == len(small) + len(large) > 256 * 1024
        # the broker sets each batch's base offset and leader epoch (bytes 0-7 and 12-15);
        # everything from the magic byte on (CRC included) is what was produced
        assert records[16 : len(small)] == small[16:]
        assert records[len(small) + 16 :] == large[16:]
        client.close()

    run_broker(tmp_path, scenario, **_listener_props(pki))


def test_sasl_ssl_principal_comes_from_sasl(
    tmp_path: Path, pki: Pki, principals: list[str]
) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await _connect(server.bound_port, _client_context(pki))
        handshake = await client.call(
            "SaslHandshake", 1, make_request("SaslHandshake", mechanism="PLAIN")
        )
        assert handshake.error_code == 0
        ok = await client.call(
            "SaslAuthenticate",
            2,
            make_request("SaslAuthenticate", auth_bytes=b"\0admin\0admin-secret"),
            cid=2,
        )
        assert ok.error_code == 0
        await _describe_cluster(client)
        client.close()

    props = _listener_props(pki, "required")
    props.update(
        {
            "listeners": "SASL_SSL://localhost:0",
            "security.inter.broker.protocol": "SASL_SSL",
            "sasl.enabled.mechanisms": "PLAIN",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        }
    )
    run_broker(tmp_path, scenario, **props)
    assert principals == ["User:admin"]


def test_tls_configuration_errors_name_the_key(pki: Pki) -> None:
    base = _listener_props(pki, "none")
    base["log.dirs"] = "/nonexistent"
    with pytest.raises(ConfigError) as e:
        listener_security(BrokerConfig({**base, "ssl.keystore.type": "JKS"}))
    assert e.value.name == "ssl.keystore.type"
    with pytest.raises(ConfigError) as e:
        listener_security(BrokerConfig({**base, "listener.name.ssl.ssl.keystore.key": "junk"}))
    assert e.value.name == "ssl.keystore.key"
    assert "junk" not in str(e.value)  # a secret prints hidden
    with pytest.raises(ConfigError) as e:
        BrokerConfig({**base, "ssl.client.auth": "sometimes"})
    assert e.value.name == "ssl.client.auth"
    for key in ("principal.builder.class", "listener.name.ssl.sasl.login.class"):
        with pytest.raises(ConfigError) as e:
            listener_security(BrokerConfig({**base, key: "com.example.Evil"}))
        assert e.value.name == key
    tls, sasl = listener_security(BrokerConfig(base))
    assert set(tls) == {"SSL"} and sasl == {}


def test_dynamic_keystore_update_applies_to_new_connections(tmp_path: Path, pki: Pki) -> None:
    """``listener.name.ssl.ssl.keystore.location`` altered dynamically (AlterConfigs): new
    connections get the new certificate; a keystore that does not load keeps the old one."""
    rotated = make_pki()
    first, second = tmp_path / "first.pem", tmp_path / "second.pem"
    first.write_text(pki.server.key_pem + pki.server.cert_pem)
    second.write_text(rotated.server.key_pem + rotated.server.cert_pem)
    broken = tmp_path / "broken.pem"
    broken.write_text(rotated.server.cert_pem)  # no key
    data = tmp_path / "data"
    data.mkdir()
    trust_both = client_context(
        {
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": pki.ca.cert_pem + rotated.ca.cert_pem,
        }
    )

    async def served_certificate(port: int) -> bytes:
        _, writer = await asyncio.open_connection("localhost", port, ssl=trust_both)
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        writer.close()
        return bytes(der)

    async def scenario(server: KafkaServer) -> None:
        assert server.services is not None
        holder = server.services.configs
        before = await served_certificate(server.bound_port)
        key = "listener.name.ssl.ssl.keystore.location"
        holder.update(holder.current.with_dynamic({key: str(broken)}))
        assert await served_certificate(server.bound_port) == before
        holder.update(holder.current.with_dynamic({key: str(second)}))
        after = await served_certificate(server.bound_port)
        assert after != before
        assert ssl.DER_cert_to_PEM_cert(after).split() == rotated.server.cert_pem.split()

    props = {
        "listeners": "SSL://localhost:0",
        "security.inter.broker.protocol": "SSL",
        "ssl.keystore.type": "PEM",
        "listener.name.ssl.ssl.keystore.location": str(first),
    }
    run_broker(data, scenario, **props)
