"""``kafkacore server-start [server.properties] [--override key=value ...]``: run the
node until SIGTERM/SIGINT (Kafka's ``kafka-server-start.sh``): the single-node broker, a
ZooKeeper-mode broker (``zookeeper.connect``), or a KRaft node (``process.roles``:
:class:`~kafkacore.server.controller_server.KRaftServer`, on directories formatted by
``kafkacore storage format``).

A bad config value exits with status 1 and Kafka's message (key, value, constraint);
unknown keys are warned about. Logs go to stderr.

With ``console.listeners`` set, the web console is started beside the broker once its
listeners are bound (:func:`kafkacore.console.start_beside`), on the same event loop,
seeing the broker through a :class:`~kafkacore.console.broker_view.BrokerView`
(:class:`~kafkacore.server.view.ServerView`), and stopped before it; the broker does not
know the console.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkacore.console import ConsoleServer
    from kafkacore.server import KafkaServer

__all__ = ["register", "run"]

PROG = "kafkacore server-start"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "server-start", prog=PROG, help="Start a node (single node, ZooKeeper or KRaft)."
    )
    parser.add_argument("config", nargs="?", help="server.properties")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="A property overriding server.properties (repeatable).",
    )
    parser.set_defaults(run=run, prog=PROG)


def _load(args: argparse.Namespace) -> dict[str, str]:
    from kafkacore.cli import UsageError
    from kafkacore.config import load_properties

    props: dict[str, str] = {}
    if args.config:
        try:
            props.update(load_properties(args.config))
        except OSError as exc:
            raise UsageError(PROG, f"cannot read {args.config}: {exc.strerror}") from None
    for item in args.override:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(PROG, f"--override expects key=value, not {item!r}")
        props[key.strip()] = value
    return props


def run(args: argparse.Namespace) -> int:
    from kafkacore.config import BrokerConfig, ConfigError

    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
    )
    props = _load(args)
    try:
        config = BrokerConfig(props)
        config.advertised_endpoints()
        config.listener_endpoints()
    except ConfigError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 1
    for name in config.unknown:
        logging.getLogger("kafkacore.config").warning(
            "The configuration '%s' was supplied but isn't a known config.", name
        )
    if config.process_roles:
        return asyncio.run(_serve_kraft(config))
    return asyncio.run(_serve(config))


async def _serve_kraft(config: Any) -> int:
    from kafkacore.metadata.storage import StorageError
    from kafkacore.server.controller_server import KRaftServer

    server = KRaftServer(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, _dump_tasks)
    try:
        await server.startup()
    except (StorageError, NotImplementedError, OSError) as exc:
        logging.getLogger("kafkacore.server").error("Fatal error during startup: %s", exc)
        await server.shutdown()
        return 1
    waits = {asyncio.ensure_future(stop.wait()), asyncio.ensure_future(server.fatal.wait())}
    _done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await server.shutdown()
    return server.exit_code


def _dump_tasks() -> None:
    out = io.StringIO()
    for task in asyncio.all_tasks():
        task.print_stack(file=out)
    logging.getLogger("kafkacore.server").warning("asyncio tasks:\n%s", out.getvalue())


async def _start_console(server: KafkaServer) -> ConsoleServer:
    from kafkacore.console import start_beside
    from kafkacore.server.view import ServerView

    console = await start_beside(ServerView(server))
    logging.getLogger("kafkacore.server").info(
        "[KafkaServer id=%d] console at %s%s",
        server.node_id,
        " ".join(console.urls),
        " (read-only)" if server.config.console_read_only else "",
    )
    return console


async def _serve(config: Any) -> int:
    from kafkacore.server import KafkaServer

    server = KafkaServer(config)
    console: ConsoleServer | None = None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # `kill -USR1 <pid>`: every asyncio task's stack in the log (the broker's jstack)
    loop.add_signal_handler(signal.SIGUSR1, _dump_tasks)
    try:
        await server.startup()
        if config.console_listeners:
            console = await _start_console(server)
    except Exception as exc:
        logging.getLogger("kafkacore.server").error("Fatal error during startup: %s", exc)
        await server.shutdown()
        return 1
    # SIGTERM/SIGINT, or the broker stopping on its own (every log directory failed)
    waits = {asyncio.ensure_future(stop.wait()), asyncio.ensure_future(server.fatal.wait())}
    _done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    if console is not None:
        await console.stop()
    await server.shutdown()
    return server.exit_code
