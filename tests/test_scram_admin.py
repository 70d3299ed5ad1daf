"""SCRAM credential management (KIP-554): AlterUserScramCredentials and
DescribeUserScramCredentials with Kafka's validation and errors (ZkAdminManager), the
credentials stored salted in the user's entity config (never the password), and the
broker's credential cache fed from the metadata store at start-up and on every change."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from kafkacore.metadata import EmbeddedMetadataStore
from kafkacore.protocol import ErrorCode
from kafkacore.security.credentials import ScramCredentialCache
from kafkacore.security.scram import (
    ScramCredential,
    ScramMechanism,
    create_credential,
    credential_from_salted_password,
    salted_password,
)
from kafkacore.server import KafkaServer
from kafkacore.server.credential_sync import follow_scram_credentials
from support.raw_client import RawClient, make_request, run_broker

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
SALT = b"0123456789abcdef"


def upsertion(name: str, mechanism: int = 1, iterations: int = 4096, password: str = "pw") -> Any:
    cls = make_request("AlterUserScramCredentials", deletions=[], upsertions=[])
    mech = {1: SHA256, 2: SHA512}.get(mechanism, SHA256)
    return type(cls).ScramCredentialUpsertion(
        name=name,
        mechanism=mechanism,
        iterations=iterations,
        salt=SALT,
        salted_password=salted_password(mech, password, SALT, max(iterations, 1)),
    )


def deletion(name: str, mechanism: int = 1) -> Any:
    cls = make_request("AlterUserScramCredentials", deletions=[], upsertions=[])
    return type(cls).ScramCredentialDeletion(name=name, mechanism=mechanism)


async def alter(port: int, upsertions: list[Any], deletions: list[Any]) -> dict[str, Any]:
    client = await RawClient.connect(port)
    try:
        response = await client.call(
            "AlterUserScramCredentials",
            0,
            make_request("AlterUserScramCredentials", deletions=deletions, upsertions=upsertions),
        )
    finally:
        client.close()
    return {r.user: (r.error_code, r.error_message) for r in response.results}


async def describe(port: int, users: list[str] | None) -> Any:
    req = make_request("DescribeUserScramCredentials", users=None)
    request = make_request(
        "DescribeUserScramCredentials",
        users=None if users is None else [type(req).UserName(name=u) for u in users],
    )
    client = await RawClient.connect(port)
    try:
        response = await client.call("DescribeUserScramCredentials", 0, request)
    finally:
        client.close()
    return [
        (
            r.user,
            r.error_code,
            r.error_message,
            [(c.mechanism, c.iterations) for c in r.credential_infos],
        )
        for r in response.results
    ]


def _port(server: KafkaServer) -> int:
    assert server.socket_server is not None
    return next(iter(server.socket_server.bound_ports.values()))


def test_alter_validation_and_errors_as_kafka(tmp_path: Path) -> None:
    """Each failure and its message, from ZkAdminManager.alterUserScramCredentials."""

    async def scenario(server: KafkaServer) -> None:
        port = _port(server)
        # iterations out of bounds, empty user, unknown mechanism: the user fails whole
        got = await alter(
            port,
            [
                upsertion("few", iterations=4095),
                upsertion("many", mechanism=2, iterations=16385),
                upsertion(""),
                upsertion("unknown", mechanism=3),
                upsertion("ok1", iterations=4096),
                upsertion("ok2", mechanism=2, iterations=16384),
            ],
            [deletion("unknown-del", mechanism=0)],
        )
        assert got == {
            "few": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
            "many": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
            "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
            "unknown": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
            "unknown-del": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
            "ok1": (ErrorCode.NONE, ""),
            "ok2": (ErrorCode.NONE, ""),
        }
        # the same (user, mechanism) twice fails the user; another mechanism is fine
        got = await alter(
            port,
            [upsertion("dup"), upsertion("dup"), upsertion("two"), upsertion("two", 2)],
            [],
        )
        assert got == {
            "dup": (
                ErrorCode.DUPLICATE_RESOURCE,
                "A user credential cannot be altered twice in the same request",
            ),
            "two": (ErrorCode.NONE, ""),
        }
        # a deletion of a credential the user does not have fails the whole user
        got = await alter(port, [upsertion("ok1", 2)], [deletion("ok1", 2), deletion("ghost")])
        assert got["ghost"] == (
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to delete a user credential that does not exist",
        )
        assert got["ok1"][0] == ErrorCode.DUPLICATE_RESOURCE
        got = await alter(port, [upsertion("ok1", 2)], [deletion("ok1", 1), deletion("two", 2)])
        assert got == {"ok1": (0, ""), "two": (0, "")}
        assert await describe(port, None) == [
            ("ok1", 0, "", [(2, 4096)]),
            ("ok2", 0, "", [(2, 16384)]),
            ("two", 0, "", [(1, 4096)]),
        ]
        got = await alter(port, [], [deletion("ok1", 1)])
        assert got == {
            "ok1": (
                ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist",
            )
        }
        assert await describe(port, ["two", "nobody", "ok2", "ok2", ""]) == [
            ("two", 0, "", [(1, 4096)]),
            (
                "nobody",
                ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to describe a user credential that does not exist: nobody",
                [],
            ),
            (
                "ok2",
                ErrorCode.DUPLICATE_RESOURCE,
                "Cannot describe SCRAM credentials for the same user twice in a single "
                "request: ok2",
                [],
            ),
            ("", ErrorCode.RESOURCE_NOT_FOUND, "Username must not be empty", []),
        ]

    run_broker(tmp_path, scenario)


def test_credentials_are_stored_salted_and_feed_the_cache(tmp_path: Path) -> None:
    """The stored value is Kafka's credential string derived from the salted password;
    the password is nowhere in the metadata; the cache has it at once and after a
    restart; quotas of the same user live in the same entity and survive."""

    async def scenario(server: KafkaServer) -> None:
        port = _port(server)
        store = server.services.metadata_store  # type: ignore[union-attr]
        await asyncio.to_thread(
            store.set_quota_configs, "users/al%20ice", {"producer_byte_rate": "1024"}
        )
        got = await alter(
            port,
            [upsertion("al ice", 1, 8192, "alice-secret"), upsertion("al ice", 2, 4096, "s2")],
            [],
        )
        assert got == {"al ice": (0, "")}
        expected = create_credential(SHA256, "alice-secret", 8192, SALT)
        configs = store.quota_configs()["users/al%20ice"]
        assert configs["producer_byte_rate"] == "1024"
        assert configs["SCRAM-SHA-256"] == expected.to_kafka_string()
        assert ScramCredential.from_kafka_string(configs["SCRAM-SHA-512"]).iterations == 4096
        cache = server.services.scram_credentials  # type: ignore[union-attr]
        assert cache.get("SCRAM-SHA-256", "al ice") == expected
        assert cache.get("SCRAM-SHA-512", "al ice") == create_credential(SHA512, "s2", 4096, SALT)
        assert await alter(port, [], [deletion("al ice", 2)]) == {"al ice": (0, "")}
        assert cache.get("SCRAM-SHA-512", "al ice") is None
        assert cache.get("SCRAM-SHA-256", "al ice") == expected

    run_broker(tmp_path, scenario)
    text = ""
    for path in tmp_path.rglob("*.json"):
        text += path.read_text()
    assert "alice-secret" not in text
    data = next(
        json.loads(p.read_text())
        for p in tmp_path.rglob("*.json")
        if "quota_configs" in p.read_text()
    )
    assert set(data["quota_configs"]["users/al%20ice"]) == {"producer_byte_rate", "SCRAM-SHA-256"}

    async def after_restart(server: KafkaServer) -> None:
        cache = server.services.scram_credentials  # type: ignore[union-attr]
        assert cache.get("SCRAM-SHA-256", "al ice") == create_credential(
            SHA256, "alice-secret", 8192, SALT
        )
        assert cache.users() == ["al ice"]

    run_broker(tmp_path, after_restart)


def test_the_feeder_follows_user_entities_only(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, 1)
    credential = credential_from_salted_password(SHA512, b"s", b"k" * 64, 4096)
    store.set_quota_configs("users/bob", {"SCRAM-SHA-512": credential.to_kafka_string()})
    cache = ScramCredentialCache()
    follow_scram_credentials(store, cache)
    assert cache.get("SCRAM-SHA-512", "bob") == credential
    # the default user, a user with a client id and client entities hold no credentials
    for path in ("users/<default>", "users/carol/clients/c", "clients/carol"):
        store.set_quota_configs(path, {"SCRAM-SHA-512": credential.to_kafka_string()})
    assert cache.users() == ["bob"]
    store.set_quota_configs("users/a%2Ab", {"SCRAM-SHA-512": credential.to_kafka_string()})
    assert cache.get("SCRAM-SHA-512", "a*b") == credential
    store.set_quota_configs("users/bob", {"producer_byte_rate": "1"})
    assert cache.users() == ["a*b"]


@pytest.mark.parametrize("mechanism", [SHA256, SHA512])
def test_confluent_kafka_admin_client(tmp_path: Path, mechanism: ScramMechanism) -> None:
    """confluent-kafka (librdkafka) salts the password itself; the broker's stored
    credential verifies that password (a SCRAM login computes the same keys)."""
    import confluent_kafka.admin as admin_mod

    async def scenario(server: KafkaServer) -> None:
        port = _port(server)
        admin = admin_mod.AdminClient({"bootstrap.servers": f"localhost:{port}"})
        ck_mech = getattr(admin_mod.ScramMechanism, mechanism.name)
        info = admin_mod.ScramCredentialInfo(ck_mech, 8192)
        futures = admin.alter_user_scram_credentials(
            [admin_mod.UserScramCredentialUpsertion("carol", info, b"carol-secret")]
        )
        await asyncio.to_thread(futures["carol"].result, 10)
        described = await asyncio.to_thread(
            admin.describe_user_scram_credentials(["carol"])["carol"].result, 10
        )
        assert [(i.mechanism, i.iterations) for i in described.scram_credential_infos] == [
            (ck_mech, 8192)
        ]
        stored = server.services.scram_credentials.get(  # type: ignore[union-attr]
            mechanism.mechanism_name, "carol"
        )
        assert stored is not None and stored.iterations == 8192
        assert stored == create_credential(mechanism, "carol-secret", 8192, stored.salt)
        futures = admin.alter_user_scram_credentials(
            [admin_mod.UserScramCredentialDeletion("carol", ck_mech)]
        )
        await asyncio.to_thread(futures["carol"].result, 10)
        assert server.services.scram_credentials.users() == []  # type: ignore[union-attr]

    run_broker(tmp_path, scenario)


# -- secrets never shown ----------------------------------------------------------------------

SECRETS = {
    "ssl.keystore.key": "-----BEGIN PRIVATE KEY-----not-shown",
    "ssl.key.password": "key-secret",
    "ssl.truststore.password": "trust-secret",
    "sasl.jaas.config": 'x required password="jaas-secret";',
    "listener.name.sasl_ssl.plain.sasl.jaas.config": (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'user_alice="alice-secret";'
    ),
    "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": 'x required password="scram";',
}


def test_describe_configs_shows_sensitive_configs_as_null(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka's DescribeConfigs: a PASSWORD config (or one of unknown type) has value null
    and is_sensitive true, its synonyms too; the secret is nowhere in the response, nor
    in anything the broker logs (start-up included)."""
    caplog.set_level(logging.DEBUG)
    from kafkacore.protocol import APIS_BY_NAME

    async def scenario(server: KafkaServer) -> None:
        port = _port(server)
        cls: Any = APIS_BY_NAME["DescribeConfigs"].request.cls
        request = cls(
            resources=[cls.DescribeConfigsResource(resource_type=4, resource_name="1")],
            include_synonyms=True,
            include_documentation=False,
        )
        client = await RawClient.connect(port)
        try:
            client.send("DescribeConfigs", 4, 1, request)
            frame = await client.frame()
        finally:
            client.close()
        from kafkacore.protocol import decode_response

        _, response = decode_response(frame, APIS_BY_NAME["DescribeConfigs"].key, 4)
        configs = {c.name: c for c in response.results[0].configs}
        for name in SECRETS:
            entry = configs[name]
            assert entry.value is None and entry.is_sensitive, name
            assert entry.synonyms and all(s.value is None for s in entry.synonyms), name
        for secret in ("not-shown", "key-secret", "trust-secret", "jaas-secret", "alice-secret"):
            assert secret.encode() not in frame

    run_broker(tmp_path, scenario, **SECRETS)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "started" in logged  # the broker's logs were captured
    for secret in ("not-shown", "key-secret", "trust-secret", "jaas-secret", "alice-secret"):
        assert secret not in logged


# -- cluster mode: ZooKeeper ------------------------------------------------------------------


def test_cluster_mode_stores_as_kafka_and_every_broker_follows(
    tmp_path: Path, zk_chroot: str
) -> None:
    """Two brokers of a ZooKeeper-mode cluster: a credential altered through one is
    written as Kafka 3.9 writes it (``/config/users/<user>`` and a change notification)
    and reaches the other broker's credential cache through ``/config/changes``."""
    from kazoo.client import KazooClient

    from kafkacore.config import BrokerConfig

    async def main() -> None:
        servers = []
        for node in (1, 2):
            config = {
                "listeners": "PLAINTEXT://localhost:0",
                "log.dirs": str(tmp_path / f"b{node}"),
                "node.id": node,
                "zookeeper.connect": zk_chroot,
            }
            server = KafkaServer(BrokerConfig(config))
            await server.startup()
            servers.append(server)
        await asyncio.to_thread(zk.start)
        try:
            got = await alter(_port(servers[0]), [upsertion("a b", 2, 8192, "ab-secret")], [])
            assert got == {"a b": (0, "")}
            expected = create_credential(SHA512, "ab-secret", 8192, SALT)
            data, _ = await asyncio.to_thread(zk.get, "/config/users/a%20b")
            assert json.loads(data) == {
                "version": 1,
                "config": {"SCRAM-SHA-512": expected.to_kafka_string()},
            }
            for server in servers:
                cache = server.services.scram_credentials  # type: ignore[union-attr]
                for _ in range(100):
                    if cache.get("SCRAM-SHA-512", "a b") is not None:
                        break
                    await asyncio.sleep(0.1)
                assert cache.get("SCRAM-SHA-512", "a b") == expected
            assert await describe(_port(servers[1]), ["a b"]) == [("a b", 0, "", [(2, 8192)])]
            assert await alter(_port(servers[1]), [], [deletion("a b", 2)]) == {"a b": (0, "")}
            cache = servers[0].services.scram_credentials  # type: ignore[union-attr]
            for _ in range(100):
                if cache.get("SCRAM-SHA-512", "a b") is None:
                    break
                await asyncio.sleep(0.1)
            assert cache.users() == []
        finally:
            for server in servers:
                await server.shutdown()

    zk = KazooClient(hosts=zk_chroot)  # started once the brokers made the chroot
    try:
        asyncio.run(main())
        data, _ = zk.get("/config/users/a%20b")
        assert json.loads(data) == {"version": 1, "config": {}}
        changes = [
            json.loads(zk.get(f"/config/changes/{c}")[0])
            for c in sorted(zk.get_children("/config/changes"))
        ]
        assert {"version": 2, "entity_path": "users/a%20b"} in changes
    finally:
        zk.stop()
        zk.close()


def test_dynamic_config_log_lines_hide_secrets() -> None:
    from kafkacore.config.describe import loggable_broker_configs

    assert loggable_broker_configs(
        {
            "log.cleaner.threads": "2",
            "listener.name.sasl_ssl.plain.sasl.jaas.config": 'user_alice="alice-secret";',
            "ssl.key.password": "key-secret",
            "message.max.bytes": None,
        }
    ) == {
        "log.cleaner.threads": "2",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": "[hidden]",
        "ssl.key.password": "[hidden]",
        "message.max.bytes": None,
    }
