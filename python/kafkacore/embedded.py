"""An in-process Kafka broker for Python services and tests: no JVM, no Docker.

    from kafkacore import EmbeddedBroker

    with EmbeddedBroker(topics={"orders": 3}) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})

:class:`EmbeddedBroker` runs a :class:`~kafkacore.server.KafkaServer` on an event loop of
its own (a daemon thread), so synchronous code and any client library can use it;
:class:`AsyncEmbeddedBroker` runs it on the caller's running loop (``async with``). Both:

* listen on ``127.0.0.1`` port 0 (a free port) unless ``configs`` names ``listeners``;
* keep their data in a temporary directory removed on exit, unless ``log_dir`` is given
  (or ``configs`` names ``log.dirs``), which is kept;
* take any broker config by its Kafka name in ``configs``; a few defaults suit a
  one-node broker in tests, as testcontainers' Kafka module sets them
  (:data:`TEST_DEFAULTS`: one ``__consumer_offsets`` partition, no initial rebalance
  delay), each overridable;
* ``stop()`` shuts the broker down cleanly (flush, checkpoints, the clean-shutdown
  marker) and keeps the data; ``start()`` comes back on the same port with the same
  data, and ``restart()`` does both, for tests of client reconnection;
* create topics through the Kafka protocol (CreateTopics, as any client would);
* expose the :class:`~kafkacore.server.KafkaServer` as ``server`` for white-box tests,
  and ``health()`` (a :class:`BrokerHealth`) for a service's readiness probe.

A service that embeds the broker gets a clean shutdown on SIGTERM from
:meth:`EmbeddedBroker.serve_forever` (or :meth:`EmbeddedBroker.stop_on_signals` when the
service has a main loop of its own) and :meth:`AsyncEmbeddedBroker.serve_forever`.

Thread-safety: an :class:`EmbeddedBroker`'s methods may be called from any thread, one
at a time (start/stop/restart are not meant to race each other); ``server`` belongs to
the broker's loop thread (use :meth:`EmbeddedBroker.call` to run code there). An
:class:`AsyncEmbeddedBroker` belongs to the loop that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kafkacore.config import BrokerConfig
    from kafkacore.console import ConsoleServer
    from kafkacore.log import LogManagerHealth
    from kafkacore.server import KafkaServer

__all__ = [
    "TEST_DEFAULTS",
    "AsyncEmbeddedBroker",
    "BrokerHealth",
    "EmbeddedBroker",
]

T = TypeVar("T")

TEST_DEFAULTS: Mapping[str, str] = {
    "node.id": "1",
    # One node: the internal topics cannot have three replicas, and one partition of
    # __consumer_offsets is created in a millisecond where fifty take longer.
    "offsets.topic.num.partitions": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    # A consumer group's first rebalance would otherwise wait 3 s for more members.
    "group.initial.rebalance.delay.ms": "0",
}
"""The defaults an embedded broker starts with, on top of Kafka's (the values
testcontainers' Kafka module gives its broker); ``configs`` overrides any of them."""

TopicsSpec = Mapping[str, int] | Iterable[str]
"""Topics to create: ``{"orders": 3}`` (name -> partitions) or ``["orders"]`` (one
partition each)."""


@dataclass(frozen=True)
class BrokerHealth:
    """``health()`` of an embedded broker."""

    running: bool
    """Started and not stopped."""
    bootstrap_servers: str | None
    """``host:port`` clients connect to, ``None`` when not running."""
    uptime_s: float
    """Seconds since the last start (0 when not running)."""
    logs: LogManagerHealth | None
    """The storage engine's health, ``None`` when not running."""

    @property
    def ok(self) -> bool:
        return self.running and self.logs is not None and self.logs.ok


def _broker_config(props: Mapping[str, object]) -> BrokerConfig:
    from kafkacore.config import BrokerConfig

    config = BrokerConfig({k: str(v) for k, v in props.items()})
    config.listener_endpoints()  # raises ConfigError for bad listeners now, not at start
    config.advertised_endpoints()
    return config


def _topic_items(topics: TopicsSpec | None) -> list[tuple[str, int]]:
    if topics is None:
        return []
    if isinstance(topics, Mapping):
        return [(str(name), int(partitions)) for name, partitions in topics.items()]
    if isinstance(topics, str):
        return [(topics, 1)]
    return [(str(name), 1) for name in topics]


def _delete_everything(client: Any) -> None:
    """Delete the non-internal topics and the groups a broker has (see ``reset``)."""
    from kafkacore.client import KafkaError
    from kafkacore.protocol import APIS_BY_NAME, ErrorCode

    def request(api: str, **fields: Any) -> Any:
        return APIS_BY_NAME[api].request.cls(**fields)

    # kafkacore.client has no admin calls beyond CreateTopics: its request routing is
    # reused (any broker; one node here) with requests built from the protocol schemas.
    topics = sorted(client.topics())
    if topics:
        response = client._call_any(
            "DeleteTopics", 5, request("DeleteTopics", topic_names=topics, timeout_ms=30_000)
        )
        for result in response.responses:
            if result.error_code not in (ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
                raise KafkaError(result.error_code, f"deleting topic {result.name!r}")
    listed = client._call_any("ListGroups", 3, request("ListGroups"))
    if listed.error_code != ErrorCode.NONE:
        raise KafkaError(listed.error_code, "listing groups")
    groups = sorted(g.group_id for g in listed.groups)
    if groups:
        response = client._call_any("DeleteGroups", 2, request("DeleteGroups", groups_names=groups))
        for result in response.results:
            if result.error_code not in (ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND):
                raise KafkaError(result.error_code, f"deleting group {result.group_id!r}")


class AsyncEmbeddedBroker:
    """A kafkacore broker on the running event loop (see the module docstring).

    ``configs``: broker configs by Kafka name (``{"num.partitions": 3}``), on top of
    :data:`TEST_DEFAULTS`; ``topics``: created at start, through CreateTopics;
    ``log_dir``: keep the data there (default: a temporary directory removed by
    :meth:`close`); ``host``/``port``: the listener when ``configs`` has no
    ``listeners``; ``log_manager_options``: passed to
    :class:`~kafkacore.server.KafkaServer` (e.g. ``backend=``).

        async with AsyncEmbeddedBroker(topics={"orders": 3}) as broker:
            producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    """

    def __init__(
        self,
        configs: Mapping[str, object] | None = None,
        *,
        topics: TopicsSpec | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        **log_manager_options: Any,
    ) -> None:
        props: dict[str, object] = dict(TEST_DEFAULTS)
        props.update(configs or {})
        self._owns_dir = log_dir is None and "log.dirs" not in props and "log.dir" not in props
        self._explicit_listeners = "listeners" in props
        self._host = host
        self._port = port
        self._props = props
        self._log_dir: str | None = None if log_dir is None else os.fspath(log_dir)
        self._topics = _topic_items(topics)
        self._log_manager_options = log_manager_options
        self._server: KafkaServer | None = None
        self._console: ConsoleServer | None = None
        self._started_at = 0.0
        self._closed = False
        self._topics_created = False
        self._own_loop = False  # True under EmbeddedBroker: nothing else runs on the loop
        # fail on a bad config here, not at start (without the directory, not created yet)
        _broker_config({**props, **self._placement(log_dir="-")})

    # --- configuration ------------------------------------------------------------------

    def _placement(self, log_dir: str | None = None) -> dict[str, object]:
        """``listeners`` (the same port after the first start) and ``log.dirs``."""
        placed: dict[str, object] = {}
        if not self._explicit_listeners:
            host = f"[{self._host}]" if ":" in self._host else self._host
            placed["listeners"] = f"PLAINTEXT://{host}:{self._port}"
        directory = log_dir or self._log_dir
        if directory is not None and "log.dirs" not in self._props:
            placed["log.dirs"] = directory
        return placed

    def _config(self) -> BrokerConfig:
        if self._log_dir is None and self._owns_dir:
            self._log_dir = tempfile.mkdtemp(prefix="kafkacore-embedded-")
        config = _broker_config({**self._props, **self._placement()})
        if self._log_dir is None:
            self._log_dir = config.log_dirs[0]
        return config

    def _fix_port(self, server: KafkaServer) -> None:
        """After the first start on port 0: later starts bind the same port."""
        bound = server.bound_port
        if not self._explicit_listeners:
            self._port = bound
            return
        endpoints = server.config.listener_endpoints()
        if len(endpoints) == 1 and endpoints[0].port == 0:
            self._props["listeners"] = endpoints[0]._replace(port=bound).connection_string

    # --- state --------------------------------------------------------------------------

    @property
    def server(self) -> KafkaServer:
        """The running :class:`~kafkacore.server.KafkaServer` (white-box tests)."""
        if self._server is None:
            raise RuntimeError("the embedded broker is not running")
        return self._server

    @property
    def console_urls(self) -> list[str]:
        """The web console's URLs (``console.listeners``; port 0 gives a free port), or
        none when the broker serves no console."""
        return list(self._console.urls) if self._console is not None else []

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        """The listener's port (the bound one after a start on port 0)."""
        if self._server is not None:
            return self._server.bound_port
        return self._port

    @property
    def host(self) -> str:
        if self._explicit_listeners and self._server is not None:
            advertised = self._server.config.advertised_endpoints()[0]
            return advertised.host or "localhost"
        return self._host

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` for a client's ``bootstrap.servers``."""
        self.server  # noqa: B018 - raises when not running
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def log_dir(self) -> Path:
        """The (first) log directory."""
        if self._log_dir is None:
            raise RuntimeError("the embedded broker has not been started")
        return Path(self._log_dir)

    def health(self) -> BrokerHealth:
        server = self._server
        if server is None or server.logs is None:
            return BrokerHealth(False, None, 0.0, None)
        return BrokerHealth(
            True,
            self.bootstrap_servers,
            time.monotonic() - self._started_at,
            server.logs.health(),
        )

    # --- lifecycle ----------------------------------------------------------------------

    async def start(self) -> AsyncEmbeddedBroker:
        """Start the broker (and create ``topics`` on the first start); a no-op if running."""
        from kafkacore.server import KafkaServer

        if self._closed:
            raise RuntimeError("the embedded broker is closed")
        if self._server is not None:
            return self
        server = KafkaServer(self._config(), **self._log_manager_options)
        try:
            await server.startup()
            if server.config.console_listeners:
                # the console face, started beside the broker through its public entry
                # point (as `kafkacore server-start` does); the broker does not know it
                from kafkacore.console import start_beside
                from kafkacore.server.view import ServerView

                self._console = await start_beside(ServerView(server))
        except BaseException:
            await server.shutdown()
            raise
        self._server = server
        self._started_at = time.monotonic()
        self._fix_port(server)
        if not self._topics_created:
            self._topics_created = True
            if self._topics:
                await asyncio.to_thread(self.create_topics_blocking, dict(self._topics))
        return self

    async def stop(self) -> None:
        """A clean shutdown (flush, checkpoints, clean-shutdown marker); the data stays."""
        server, self._server = self._server, None
        console, self._console = self._console, None
        if console is not None:
            await console.stop()
        if server is None:
            return
        await server.shutdown()

    async def restart(self) -> None:
        """Stop, then start on the same port with the same data."""
        await self.stop()
        await self.start()

    async def close(self) -> None:
        """Stop, and remove the data unless it was given (``log_dir``/``log.dirs``)."""
        try:
            await self.stop()
        finally:
            await asyncio.to_thread(self._discard)

    def _discard(self) -> None:
        """Closed for good: the temporary directory (if ours) is removed."""
        self._closed = True
        if self._owns_dir and self._log_dir is not None:
            shutil.rmtree(self._log_dir, ignore_errors=True)

    async def __aenter__(self) -> AsyncEmbeddedBroker:
        try:
            return await self.start()
        except BaseException:
            await self.close()
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def serve_forever(
        self, signals: Iterable[signal.Signals] = (signal.SIGTERM, signal.SIGINT)
    ) -> None:
        """Run until one of ``signals`` arrives, then stop cleanly (main thread's loop only).
        Starts the broker if needed."""
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        installed = list(signals)
        for sig in installed:
            loop.add_signal_handler(sig, stop.set)
        try:
            await self.start()
            await stop.wait()
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
            await self.stop()

    # --- topics -------------------------------------------------------------------------

    async def create_topics(
        self, topics: TopicsSpec, configs: Mapping[str, object] | None = None
    ) -> None:
        """Create ``topics`` through CreateTopics, with topic ``configs`` by Kafka name
        (``{"cleanup.policy": "compact"}``); existing topics are left as they are."""
        await asyncio.to_thread(self.create_topics_blocking, topics, configs)

    def create_topics_blocking(
        self, topics: TopicsSpec, configs: Mapping[str, object] | None = None
    ) -> None:
        """:meth:`create_topics` for a thread other than the broker's loop."""
        from kafkacore.client import Client

        topic_configs = {k: str(v) for k, v in (configs or {}).items()} or None
        with Client(self.bootstrap_servers, client_id="kafkacore-embedded") as client:
            for name, partitions in _topic_items(topics):
                client.create_topic(name, partitions, configs=topic_configs)

    async def reset(self) -> None:
        """Back to an empty broker: every topic but the internal ones and every consumer
        group are deleted (DeleteTopics, ListGroups + DeleteGroups). A group that still has
        members cannot be deleted (NON_EMPTY_GROUP): :class:`~kafkacore.client.KafkaError`."""
        await asyncio.to_thread(self.reset_blocking)

    def reset_blocking(self) -> None:
        """:meth:`reset` for a thread other than the broker's loop."""
        from kafkacore.client import Client

        with Client(self.bootstrap_servers, client_id="kafkacore-embedded") as client:
            _delete_everything(client)


class EmbeddedBroker:
    """A kafkacore broker on its own event loop thread (see the module docstring).

    Takes the arguments of :class:`AsyncEmbeddedBroker`; ``start_timeout_s`` bounds
    start and stop.

        with EmbeddedBroker(configs={"num.partitions": 3}, topics={"orders": 3}) as broker:
            Producer({"bootstrap.servers": broker.bootstrap_servers})
    """

    def __init__(
        self,
        configs: Mapping[str, object] | None = None,
        *,
        topics: TopicsSpec | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        start_timeout_s: float = 60.0,
        **log_manager_options: Any,
    ) -> None:
        self.broker = AsyncEmbeddedBroker(
            configs, topics=topics, log_dir=log_dir, host=host, port=port, **log_manager_options
        )
        self.broker._own_loop = True
        self.timeout_s = start_timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.RLock()

    # --- the loop thread ----------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            thread = threading.Thread(target=run, name="kafkacore-embedded-broker", daemon=True)
            thread.start()
            ready.wait()
            self._loop, self._thread = loop, thread
        return self._loop

    def _stop_loop(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is None or thread is None:
            return

        async def drain() -> None:
            # let tasks the server left behind see their cancellation before the loop ends
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await loop.shutdown_default_executor()

        asyncio.run_coroutine_threadsafe(drain(), loop).result(self.timeout_s)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(self.timeout_s)
        loop.close()

    def _run(self, coro: Awaitable[T]) -> T:
        loop = self._ensure_loop()

        async def wrapper() -> T:
            return await coro

        future: Future[T] = asyncio.run_coroutine_threadsafe(wrapper(), loop)
        return future.result(self.timeout_s)

    def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` on the broker's loop thread (where ``server`` may be touched)
        and return its result."""

        async def on_loop() -> T:
            return function()

        return self._run(on_loop())

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> EmbeddedBroker:
        with self._lock:
            try:
                self._run(self.broker.start())
            except BaseException:
                if not self.broker.running:
                    self._stop_loop()
                raise
            return self

    def stop(self) -> None:
        """A clean shutdown; the data and the port stay for :meth:`start`."""
        with self._lock:
            if self._loop is not None:
                try:
                    self._run(self.broker.stop())
                finally:
                    self._stop_loop()

    def restart(self) -> None:
        """Stop, then start on the same port with the same data (clients reconnect)."""
        with self._lock:
            self._run(self.broker.stop())
            self._run(self.broker.start())

    def close(self) -> None:
        """Stop, and remove the data unless ``log_dir`` was given."""
        with self._lock:
            try:
                self.stop()
            finally:
                self.broker._discard()

    def __enter__(self) -> EmbeddedBroker:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def stop_on_signals(
        self, signals: Iterable[signal.Signals] = (signal.SIGTERM, signal.SIGINT)
    ) -> None:
        """On one of ``signals``: stop the broker cleanly, then run the handler that was
        there before, or exit with status 0 if that was the default (call from the main
        thread, as ``signal.signal`` requires)."""
        for sig in signals:
            previous = signal.getsignal(sig)

            def handler(
                signum: int,
                frame: FrameType | None,
                previous: Any = previous,
            ) -> None:
                self.close()
                if callable(previous):
                    previous(signum, frame)
                elif previous == signal.SIG_DFL:
                    raise SystemExit(0)

            signal.signal(sig, handler)

    def serve_forever(
        self, signals: Iterable[signal.Signals] = (signal.SIGTERM, signal.SIGINT)
    ) -> None:
        """Start if needed, block until one of ``signals``, stop cleanly and return (main
        thread only): the whole of a service whose job is to be a broker."""
        received = threading.Event()
        previous = {sig: signal.getsignal(sig) for sig in signals}
        for sig in previous:
            signal.signal(sig, lambda signum, frame: received.set())
        try:
            self.start()
            while not received.wait(0.5):
                pass
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.close()

    # --- delegated state ----------------------------------------------------------------

    @property
    def server(self) -> KafkaServer:
        """The :class:`~kafkacore.server.KafkaServer`; it lives on the broker's loop thread."""
        return self.broker.server

    @property
    def console_urls(self) -> list[str]:
        """The web console's URLs (``console.listeners``), or none."""
        return self.broker.console_urls

    @property
    def running(self) -> bool:
        return self.broker.running

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` for a client's ``bootstrap.servers``."""
        return self.broker.bootstrap_servers

    @property
    def host(self) -> str:
        return self.broker.host

    @property
    def port(self) -> int:
        return self.broker.port

    @property
    def log_dir(self) -> Path:
        return self.broker.log_dir

    def health(self) -> BrokerHealth:
        with contextlib.suppress(RuntimeError):  # the loop stopped meanwhile
            if self._loop is not None:
                return self.call(self.broker.health)
        return self.broker.health()

    def create_topics(
        self, topics: TopicsSpec, configs: Mapping[str, object] | None = None
    ) -> None:
        """Create ``topics`` through CreateTopics, with topic ``configs`` by Kafka name;
        existing topics are left as they are."""
        self.broker.create_topics_blocking(topics, configs)

    def reset(self) -> None:
        """Delete every non-internal topic and every consumer group (see
        :meth:`AsyncEmbeddedBroker.reset`)."""
        self.broker.reset_blocking()
