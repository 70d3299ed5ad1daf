"""SASL on a listener, driven with raw frames: Kafka's SaslServerAuthenticator state machine
(ApiVersions, SaslHandshake v0/v1, SaslAuthenticate), PLAIN from the listener's JAAS config,
SCRAM-SHA-512 from the credential cache, failures with Kafka's codes and messages after the
delayed close, the pre-authentication frame bound and KIP-368 re-authentication."""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafkacore.config import BrokerConfig
from kafkacore.config.defs import ConfigError
from kafkacore.protocol import ApiKey, ErrorCode, RequestHeader, decode_response, encode_request
from kafkacore.security.sasl import sasl_client
from kafkacore.security.scram import ScramMechanism, create_credential
from kafkacore.server import KafkaServer, network
from kafkacore.server.channel import RequestChannel
from kafkacore.server.network import ConnectionInfo, Outcome, SocketServer
from kafkacore.server.request_context import RequestContext
from kafkacore.server.sasl import sasl_listener_settings
from support.raw_client import RawClient, make_request, run_broker

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" '
    'user_alice="alice-secret" user_bob="bob-secret";'
)
DELAY_MS = 300
BASE: dict[str, Any] = {
    "listeners": "SASL_PLAINTEXT://localhost:0",
    "security.inter.broker.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
    "connection.failed.authentication.delay.ms": str(DELAY_MS),
}


def _run(tmp_path: Path, scenario: Any, **extra: str) -> None:
    run_broker(tmp_path, scenario, **{**BASE, **extra})


def _add_scram_user(server: KafkaServer, user: str, password: str) -> None:
    assert server.services is not None
    credential = create_credential(ScramMechanism.SCRAM_SHA_512, password)
    server.services.scram_credentials.update_user(
        user, {"SCRAM-SHA-512": credential.to_kafka_string()}
    )


async def _closed(client: RawClient, timeout_s: float = 3.0) -> bool:
    """Whether the broker closed the connection (EOF) without sending anything more."""
    try:
        data = await asyncio.wait_for(client.reader.read(1), timeout_s)
    except (ConnectionError, TimeoutError):
        return False
    return data == b""


async def _handshake(client: RawClient, mechanism: str, version: int = 1) -> Any:
    return await client.call(
        "SaslHandshake", version, make_request("SaslHandshake", mechanism=mechanism)
    )


async def _authenticate(client: RawClient, token: bytes, version: int = 2, cid: int = 2) -> Any:
    return await client.call(
        "SaslAuthenticate", version, make_request("SaslAuthenticate", auth_bytes=token), cid
    )


async def _plain_login(client: RawClient, user: str, password: str, version: int = 2) -> Any:
    handshake = await _handshake(client, "PLAIN")
    assert handshake.error_code == 0
    return await _authenticate(client, f"\0{user}\0{password}".encode(), version)


async def _scram_login(client: RawClient, user: str, password: str) -> Any:
    assert (await _handshake(client, "SCRAM-SHA-512")).error_code == 0
    sasl = sasl_client("SCRAM-SHA-512", user, password)
    token = sasl.evaluate_challenge(b"")
    response = None
    cid = 2
    while token is not None:
        response = await _authenticate(client, token, cid=cid)
        cid += 1
        if response.error_code:
            return response
        token = sasl.evaluate_challenge(bytes(response.auth_bytes))
    assert sasl.complete
    return response


async def _metadata(client: RawClient, cid: int = 9) -> Any:
    return await client.call("Metadata", 12, make_request("Metadata", topics=None), cid)


def test_plain_login_after_api_versions_then_requests_are_served(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await RawClient.connect(server.bound_port)
        versions = await client.call(
            "ApiVersions", 3, make_request("ApiVersions", client_software_name="t")
        )
        assert versions.error_code == 0 and len(versions.api_keys) > 40
        handshake = await _handshake(client, "PLAIN")
        assert (handshake.error_code, list(handshake.mechanisms)) == (
            0,
            ["PLAIN", "SCRAM-SHA-512"],
        )
        ok = await _authenticate(client, b"\0alice\0alice-secret")
        assert (ok.error_code, ok.error_message, ok.session_lifetime_ms) == (0, None, 0)
        assert [b.node_id for b in (await _metadata(client)).brokers] == [1]
        # after authentication the SASL APIs reach KafkaApis: ILLEGAL_SASL_STATE
        again = await _handshake(client, "PLAIN")
        assert (again.error_code, list(again.mechanisms)) == (ErrorCode.ILLEGAL_SASL_STATE, [])
        token = await _authenticate(client, b"\0alice\0alice-secret", cid=11)
        assert token.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert token.error_message == (
            "SaslAuthenticate request received after successful authentication"
        )
        client.close()

    _run(tmp_path, scenario)


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
        (b"\0nobody\0alice-secret", "Authentication failed: Invalid username or password"),
        (b"\0\0alice-secret", "Authentication failed: username not specified"),
        (b"\0alice\0", "Authentication failed: password not specified"),
        (b"alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"),
        (
            b"bob\0alice\0alice-secret",
            "Authentication failed: Client requested an authorization id that is different "
            "from username",
        ),
    ],
)
def test_failed_plain_login_is_58_with_kafkas_message_then_a_delayed_close(
    tmp_path: Path, token: bytes, message: str
) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await RawClient.connect(server.bound_port)
        assert (await _handshake(client, "PLAIN")).error_code == 0
        start = time.monotonic()
        failed = await _authenticate(client, token)
        elapsed = time.monotonic() - start
        assert (failed.error_code, failed.error_message) == (
            ErrorCode.SASL_AUTHENTICATION_FAILED,
            message,
        )
        assert elapsed >= DELAY_MS / 1000 * 0.9  # connection.failed.authentication.delay.ms
        assert await _closed(client)

    _run(tmp_path, scenario)


def test_scram_sha_512_login_and_wrong_password(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        _add_scram_user(server, "carol", "carol-secret")
        client = await RawClient.connect(server.bound_port)
        final = await _scram_login(client, "carol", "carol-secret")
        assert final is not None and final.error_code == 0
        assert (await _metadata(client)).brokers
        client.close()
        for user, password in (("carol", "wrong"), ("nobody", "x")):
            bad = await RawClient.connect(server.bound_port)
            failed = await _scram_login(bad, user, password)
            assert failed is not None
            assert (failed.error_code, failed.error_message) == (
                ErrorCode.SASL_AUTHENTICATION_FAILED,
                "Authentication failed during authentication due to invalid credentials with "
                "SASL mechanism SCRAM-SHA-512",
            )
            assert await _closed(bad)

    _run(tmp_path, scenario)


def test_unknown_mechanism_is_33_with_the_enabled_list_then_closed(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        for mechanism in ("GSSAPI", "SCRAM-SHA-256", "plain"):
            client = await RawClient.connect(server.bound_port)
            handshake = await _handshake(client, mechanism)
            assert (handshake.error_code, list(handshake.mechanisms)) == (
                ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                ["PLAIN", "SCRAM-SHA-512"],
            )
            assert await _closed(client)

    _run(tmp_path, scenario)


def test_request_before_the_handshake_closes_without_a_response(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        for first in ("Metadata", "SaslAuthenticate"):
            client = await RawClient.connect(server.bound_port)
            if first == "Metadata":
                client.send("Metadata", 12, 1, make_request("Metadata", topics=None))
            else:
                client.send("SaslAuthenticate", 2, 1, make_request("SaslAuthenticate"))
            assert await _closed(client)
        # after ApiVersions too; and a second ApiVersions is not a handshake
        client = await RawClient.connect(server.bound_port)
        await client.call("ApiVersions", 3, make_request("ApiVersions"))
        client.send("ApiVersions", 3, 2, make_request("ApiVersions"))
        assert await _closed(client)
        # not a Kafka request at all (a GSSAPI token; GSSAPI is not enabled)
        client = await RawClient.connect(server.bound_port)
        client.writer.write(struct.pack(">i", 6) + b"\x60\x82\x01\x02\x03\x04")
        assert await _closed(client)

    _run(tmp_path, scenario)


def test_other_request_while_authenticating_gets_its_response_with_34_then_close(
    tmp_path: Path,
) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await RawClient.connect(server.bound_port)
        assert (await _handshake(client, "PLAIN")).error_code == 0
        response = await client.call("DescribeCluster", 0, make_request("DescribeCluster"), cid=7)
        assert response.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert await _closed(client)

    _run(tmp_path, scenario)


def test_oversized_frames_before_authentication_close_the_connection(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        # sasl.server.max.receive.size (524288): checked on the size, before any body
        client = await RawClient.connect(server.bound_port)
        client.writer.write(struct.pack(">i", 524289))
        assert await _closed(client, 2.0)
        client = await RawClient.connect(server.bound_port)
        assert (await _handshake(client, "PLAIN")).error_code == 0
        client.writer.write(struct.pack(">i", 2**31 - 1))
        assert await _closed(client, 2.0)
        # exactly the bound: the broker waits for the body
        client = await RawClient.connect(server.bound_port)
        client.writer.write(struct.pack(">i", 524288))
        assert not await _closed(client, 1.0)
        client.close()
        # after authentication socket.request.max.bytes applies
        client = await RawClient.connect(server.bound_port)
        assert (await _plain_login(client, "alice", "alice-secret")).error_code == 0
        client.writer.write(struct.pack(">i", 600_000))
        assert not await _closed(client, 1.0)
        client.close()

    _run(tmp_path, scenario)


def test_handshake_v0_then_raw_token_frames(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await RawClient.connect(server.bound_port)
        assert (await _handshake(client, "PLAIN", version=0)).error_code == 0
        token = b"\0alice\0alice-secret"
        client.writer.write(struct.pack(">i", len(token)) + token)
        assert await client.frame() == b""  # PLAIN's empty server response, raw
        assert (await _metadata(client)).brokers
        client.close()
        # a wrong password on the legacy path: no response, a delayed close
        client = await RawClient.connect(server.bound_port)
        assert (await _handshake(client, "PLAIN", version=0)).error_code == 0
        token = b"\0alice\0nope"
        client.writer.write(struct.pack(">i", len(token)) + token)
        assert await _closed(client)

    _run(tmp_path, scenario)


def test_principal_is_the_authorization_id_for_every_request(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        assert server.services is not None
        _add_scram_user(server, "dave", "dave-secret")
        settings = sasl_listener_settings(server.config, "SASL_PLAINTEXT")
        channel = RequestChannel(server.services, {"SASL_PLAINTEXT": settings})
        listener = "SASL_PLAINTEXT"
        connection = ConnectionInfo("c1", listener, "127.0.0.1", 5000, 9092, listener)
        channel.on_connection(connection)
        assert connection.max_frame_bytes == 524288

        async def call(cid: int, name: str, version: int, request: Any) -> Any:
            api = {"SaslHandshake": 17, "SaslAuthenticate": 36, "Metadata": 3}[name]
            header = RequestHeader(api, version, cid, "t")
            frame = encode_request(header, request)[4:]
            return header, await channel.process(frame, connection)

        await call(1, "SaslHandshake", 1, make_request("SaslHandshake", mechanism="SCRAM-SHA-512"))
        sasl = sasl_client("SCRAM-SHA-512", "dave", "dave-secret")
        first = sasl.evaluate_challenge(b"")
        assert first is not None
        _, outcome = await call(
            2, "SaslAuthenticate", 2, make_request("SaslAuthenticate", auth_bytes=first)
        )
        assert outcome.parts and not outcome.close
        assert connection.principal_name == "ANONYMOUS"
        header = RequestHeader(ApiKey.METADATA, 12, 3, "t")
        assert str(RequestContext.for_connection(header, connection).principal) == "User:ANONYMOUS"
        _, response = decode_response(b"".join(bytes(p) for p in outcome.parts)[4:], 36, 2)
        final = sasl.evaluate_challenge(bytes(response.auth_bytes))
        assert final is not None
        _, outcome = await call(
            3, "SaslAuthenticate", 2, make_request("SaslAuthenticate", auth_bytes=final)
        )
        assert not outcome.close
        assert connection.principal_name == "dave"
        assert connection.max_frame_bytes is None
        assert str(RequestContext.for_connection(header, connection).principal) == "User:dave"

    _run(tmp_path, scenario)


def test_reauthentication_kip_368(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await RawClient.connect(server.bound_port)
        first = await _plain_login(client, "alice", "alice-secret")
        assert (first.error_code, first.session_lifetime_ms) == (0, 1500)
        # v0 has no SessionLifetimeMs field; the session still has its lifetime
        # re-authenticate as the same user before expiry
        again = await _plain_login(client, "alice", "alice-secret")
        assert (again.error_code, again.session_lifetime_ms) == (0, 1500)
        assert (await _metadata(client)).brokers
        # (a re-authentication's frames are bounded like the first login's)
        bounded = await RawClient.connect(server.bound_port)
        assert (await _plain_login(bounded, "alice", "alice-secret")).error_code == 0
        assert (await _handshake(bounded, "PLAIN")).error_code == 0
        bounded.writer.write(struct.pack(">i", 524289))
        assert await _closed(bounded, 2.0)
        # another principal is refused
        other = await _plain_login(client, "bob", "bob-secret")
        assert (other.error_code, other.error_message) == (
            ErrorCode.SASL_AUTHENTICATION_FAILED,
            "Cannot change principals during re-authentication from User.alice: User.bob",
        )
        assert await _closed(client)
        # an expired session is closed at its next request
        client = await RawClient.connect(server.bound_port)
        assert (await _plain_login(client, "alice", "alice-secret")).error_code == 0
        await asyncio.sleep(1.6)
        client.send("Metadata", 12, 5, make_request("Metadata", topics=None))
        assert await _closed(client)
        # another mechanism on re-authentication: handshake answered, then closed
        _add_scram_user(server, "alice", "alice-secret")
        client = await RawClient.connect(server.bound_port)
        assert (await _plain_login(client, "alice", "alice-secret")).error_code == 0
        assert (await _handshake(client, "SCRAM-SHA-512")).error_code == 0
        client.send("SaslAuthenticate", 2, 3, make_request("SaslAuthenticate", auth_bytes=b"n,,"))
        assert await _closed(client)

    _run(
        tmp_path,
        scenario,
        **{"listener.name.sasl_plaintext.plain.connections.max.reauth.ms": "1500"},
    )


def test_sasl_apis_on_a_plaintext_listener_answer_illegal_sasl_state(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        client = await RawClient.connect(server.bound_port)
        handshake = await _handshake(client, "PLAIN")
        assert (handshake.error_code, list(handshake.mechanisms)) == (34, [])
        assert (await _metadata(client)).brokers
        client.close()

    run_broker(tmp_path, scenario)


def _config(**extra: str) -> BrokerConfig:
    return BrokerConfig({**BASE, "log.dirs": "/nonexistent", **extra})


def test_listener_settings_refuse_what_kafkacore_cannot_serve() -> None:
    with pytest.raises(ConfigError) as e:
        sasl_listener_settings(
            _config(
                **{"sasl.enabled.mechanisms": "GSSAPI,PLAIN"},
            ),
            "SASL_PLAINTEXT",
        )
    assert e.value.name == "sasl.enabled.mechanisms"
    assert "GSSAPI is not supported" in str(e.value)
    config = BrokerConfig(
        {
            "listeners": "SASL_PLAINTEXT://localhost:0,PLAINTEXT://localhost:0",
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        }
    )
    with pytest.raises(ConfigError) as e:
        sasl_listener_settings(config, "SASL_PLAINTEXT")
    assert e.value.name == "listener.name.sasl_plaintext.plain.sasl.jaas.config"
    jndi = 'com.sun.security.auth.module.JndiLoginModule required user.provider.url="ldap://x/";'
    config = BrokerConfig(
        {
            "listeners": "SASL_PLAINTEXT://localhost:0,PLAINTEXT://localhost:0",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": jndi,
        }
    )
    with pytest.raises(ConfigError) as e:
        sasl_listener_settings(config, "SASL_PLAINTEXT")
    assert e.value.name == "listener.name.sasl_plaintext.plain.sasl.jaas.config"
    assert "JndiLoginModule is not supported" in str(e.value)
    assert "ldap" not in str(e.value)  # the value is shown hidden
    settings = sasl_listener_settings(_config(), "SASL_PLAINTEXT")
    assert dict(settings.plain_users) == {
        "admin": "admin-secret",
        "alice": "alice-secret",
        "bob": "bob-secret",
    }
    assert "secret" not in repr(settings)


async def _until(check: Callable[[], bool], timeout_s: float = 5) -> None:
    """Polls ``check`` until it holds; AssertionError after ``timeout_s``."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def test_no_read_ahead_before_authentication(monkeypatch: pytest.MonkeyPatch) -> None:
    """While a frame of an unauthenticated connection is processed, the transport reads
    nothing further (not even the next size), so an unauthenticated peer holds at most one
    bounded frame in memory; once authenticated, frames are read ahead again."""
    read_sizes: list[int] = []  # the declared sizes, as the transport takes each frame
    original = network._Connection._size_allowed

    def recording(self: network._Connection, size: int) -> bool:
        read_sizes.append(size)
        return original(self, size)

    monkeypatch.setattr(network._Connection, "_size_allowed", recording)

    class Blocking:
        def __init__(self) -> None:
            self.release = asyncio.Event()
            self.seen: list[bytes] = []

        def on_connection(self, info: ConnectionInfo) -> None:
            info.max_frame_bytes = 1000

        async def process(self, frame: bytes, info: ConnectionInfo) -> Any:
            self.seen.append(frame)
            await self.release.wait()
            self.release.clear()
            if frame == b"login":
                info.max_frame_bytes = None
            return Outcome([struct.pack(">i", 2) + b"ok"])

    async def main() -> None:
        processor = Blocking()
        server = SocketServer(processor, [("SASL_PLAINTEXT", "localhost", 0)])
        await server.start()
        reader, writer = await asyncio.open_connection(
            "localhost", server.bound_ports["SASL_PLAINTEXT"]
        )
        for body in (b"first", b"login", b"after-1", b"after-2"):
            writer.write(struct.pack(">i", len(body)) + body)
        await writer.drain()
        await _until(lambda: processor.seen == [b"first"])
        await asyncio.sleep(0.3)  # time for a read ahead, which must not happen
        assert read_sizes == [5]  # frame 2 is not even sized yet
        processor.release.set()
        await _until(lambda: processor.seen == [b"first", b"login"])
        await asyncio.sleep(0.3)
        assert read_sizes == [5, 5]
        processor.release.set()  # authenticated: the next two are read ahead
        await _until(lambda: read_sizes[2:] == [7, 7])
        await _until(lambda: len(processor.seen) == 3)
        processor.release.set()
        await _until(lambda: len(processor.seen) == 4)
        processor.release.set()
        for _ in range(4):
            assert await asyncio.wait_for(reader.readexactly(6), 2) == b"\0\0\0\2ok"
        writer.close()
        await server.stop_accepting()
        await server.close_connections()

    asyncio.run(main())
