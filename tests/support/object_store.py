"""A real S3-compatible object store for the tiered-storage tests, ``make cluster TIERED=1``
and the tiering benches: S3Proxy (fetched once by ``scripts/s3proxy.sh`` into
``$KAFKACORE_CACHE``) serving the S3 REST API on a free loopback port over a local
directory (jclouds' ``filesystem-nio2`` provider), with SigV4 authentication.

    server = ObjectStoreServer(tmp_dir).start()   # waits until it answers HTTP
    server.endpoint                               # "http://127.0.0.1:<port>"
    server.create_bucket("tiered")
    server.kill(); server.start()                 # SIGKILL, then again on the same port/data
    server.stop()

The objects are plain files under ``server.data_dir/<bucket>/<key>``; tests read the
bucket through S3 (the product's own client), never through that directory, except to
corrupt an object on purpose.

pytest fixture: ``object_store`` (one server per test module; registered in
``tests/conftest.py``); :func:`bucket_name` gives each test its own bucket.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.kafka_jars import JVM_FLAGS, REPO, require
from support.ports import free_port
from support.server_process import ServerProcess

ACCESS_KEY = "kafkacore"
SECRET_KEY = "kafkacore-secret-key"
REGION = "us-east-1"


@functools.cache
def s3proxy_jar() -> Path:
    """S3Proxy's self-contained jar, fetched by ``scripts/s3proxy.sh`` on first use."""
    require("java")
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "s3proxy.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"scripts/s3proxy.sh failed:\n{proc.stderr[-4000:]}")
    jar = Path(proc.stdout.strip().splitlines()[-1])
    assert jar.is_file(), jar
    return jar


def bucket_name(prefix: str = "kc") -> str:
    """A fresh bucket name (S3's rules: 3-63 lower-case letters, digits and hyphens)."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


class ObjectStoreServer(ServerProcess):
    """One S3Proxy process over ``directory/data``."""

    name = "S3Proxy"

    def __init__(self, directory: Path, *, port: int | None = None) -> None:
        super().__init__(directory, port if port is not None else free_port())

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    def broker_overrides(self, bucket: str) -> list[str]:
        """The broker configs that point kafkacore's remote storage at this store and
        ``bucket`` (``remote.log.storage.manager.impl.prefix`` = ``rsm.config.``)."""
        return [
            "remote.log.storage.system.enable=true",
            f"rsm.config.s3.endpoint={self.endpoint}",
            f"rsm.config.s3.bucket={bucket}",
            f"rsm.config.s3.region={REGION}",
            f"rsm.config.s3.access.key.id={ACCESS_KEY}",
            f"rsm.config.s3.secret.access.key={SECRET_KEY}",
        ]

    def storage_config(self, bucket: str) -> dict[str, str]:
        """The same as a ``rsm.config.``-stripped dict, for building a store in a test."""
        prefix = "rsm.config."
        return {
            k.removeprefix(prefix): v
            for k, _, v in (o.partition("=") for o in self.broker_overrides(bucket))
            if k.startswith(prefix)
        }

    def command(self) -> list[str]:
        jar = s3proxy_jar()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cfg = self.directory / "s3proxy.conf"
        cfg.write_text(
            "\n".join(
                [
                    f"s3proxy.endpoint={self.endpoint}",
                    "s3proxy.authorization=aws-v2-or-v4",
                    f"s3proxy.identity={ACCESS_KEY}",
                    f"s3proxy.credential={SECRET_KEY}",
                    "jclouds.provider=filesystem-nio2",
                    f"jclouds.filesystem.basedir={self.data_dir}",
                    "",
                ]
            ),
            encoding="utf-8",
        )
        return [
            "java",
            "-Xms32m",
            "-Xmx256m",
            *JVM_FLAGS,
            "-DLOG_LEVEL=warn",
            "-DJETTY_LOG_LEVEL=warn",
            "-jar",
            str(jar),
            "--properties",
            str(cfg),
        ]

    def answers(self) -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
        try:
            conn.request("GET", "/")
            return conn.getresponse().status in (200, 403)  # anonymous: AccessDenied
        finally:
            conn.close()

    def create_bucket(self, name: str) -> str:
        """Create bucket ``name`` (through S3, with the product's client)."""
        from kafkacore.log.remote.object_store import S3ObjectStore

        store = S3ObjectStore(self.storage_config(name))
        store.create_bucket()
        return name

    def pause(self) -> None:
        """SIGSTOP: the store accepts connections and answers nothing (a hung store)."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGCONT)

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM (resumed first if paused), SIGKILL if it lingers."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGCONT)
        super().stop(timeout)


@pytest.fixture(scope="module")
def object_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObjectStoreServer]:
    """One S3Proxy per test module (tests isolate with their own bucket:
    :func:`bucket_name` and ``create_bucket``)."""
    server = ObjectStoreServer(tmp_path_factory.mktemp("s3proxy")).start()
    try:
        yield server
    finally:
        server.stop()
