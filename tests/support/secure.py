"""Secured brokers for tests: PEM files from :mod:`support.certs`, a kafkacore broker run
in-process on its own event-loop thread (so a test can add SCRAM users to its credential
cache directly), and the JAAS / client properties Kafka's tools and librdkafka expect."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkacore.config import BrokerConfig
from kafkacore.security.scram import ScramMechanism, create_credential
from kafkacore.server import KafkaServer
from support.certs import Pki
from support.ports import free_port as free_port  # re-exported for the tests

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass(frozen=True)
class PemFiles:
    """``ca.pem`` (the trust store), ``server.pem`` (key + chain: a PEM key store)."""

    ca: Path
    server_keystore: Path
    client_cert: Path
    client_key: Path


def write_pem_files(directory: Path, pki: Pki) -> PemFiles:
    directory.mkdir(parents=True, exist_ok=True)
    files = PemFiles(
        directory / "ca.pem",
        directory / "server.pem",
        directory / "client-cert.pem",
        directory / "client-key.pem",
    )
    files.ca.write_text(pki.ca.cert_pem)
    files.server_keystore.write_text(pki.server.key_pem + pki.server.cert_pem)
    files.client_cert.write_text(pki.client.cert_pem)
    files.client_key.write_text(pki.client.key_pem)
    for path in (files.server_keystore, files.client_key):
        path.chmod(0o600)
    return files


def plain_jaas(username: str, password: str, users: Mapping[str, str]) -> str:
    options = " ".join(f'user_{u}="{p}"' for u, p in users.items())
    return f'{PLAIN_MODULE} required username="{username}" password="{password}" {options};'


def scram_jaas(username: str, password: str) -> str:
    return f'{SCRAM_MODULE} required username="{username}" password="{password}";'


def scram_config(password: str, mechanisms: tuple[str, ...] = ("SCRAM-SHA-512",)) -> dict[str, str]:
    """A user's SCRAM entity configs (what AlterUserScramCredentials stores)."""
    out = {}
    for name in mechanisms:
        mechanism = ScramMechanism.from_name(name)
        assert mechanism is not None
        out[name] = create_credential(mechanism, password).to_kafka_string()
    return out


class ThreadedBroker:
    """A :class:`KafkaServer` on its own event loop thread."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self.config = BrokerConfig(dict(props))
        self.server = KafkaServer(self.config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._started: concurrent.futures.Future[None] = concurrent.futures.Future()

    def start(self, timeout_s: float = 30.0) -> ThreadedBroker:
        self._thread = threading.Thread(target=self._run, name="threaded-broker", daemon=True)
        self._thread.start()
        self._started.result(timeout_s)
        return self

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                await self.server.startup()
            except BaseException as exc:
                self._started.set_exception(exc)
                raise
            self._started.set_result(None)
            await self._stop.wait()
            await self.server.shutdown()

        try:
            asyncio.run(main())
        except BaseException:
            if not self._started.done():
                raise

    def add_scram_user(self, user: str, password: str, *mechanisms: str) -> None:
        services = self.server.services
        assert services is not None
        services.scram_credentials.update_user(
            user, scram_config(password, mechanisms or ("SCRAM-SHA-512",))
        )

    def port(self, listener: str) -> int:
        assert self.server.socket_server is not None
        return self.server.socket_server.bound_ports[listener]

    def stop(self, timeout_s: float = 30.0) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout_s)
            assert not self._thread.is_alive(), "the broker did not stop"
