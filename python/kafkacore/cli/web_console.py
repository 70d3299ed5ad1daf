"""``kafkacore console``: the web console (:mod:`kafkacore.console`) as a process of its
own, against any Kafka-protocol cluster (kafkacore's or Apache Kafka's).

    kafkacore console --bootstrap-server localhost:9092 [--command-config client.properties]
                      [--listen http://127.0.0.1:8080] [--read-only] [--audit-topic T]

``--command-config`` is a Java client properties file, as for the other tools (translated
for confluent-kafka by :mod:`kafkacore.cli._client`). When it says SASL
(``security.protocol=SASL_PLAINTEXT`` or ``SASL_SSL``) without a username and password, the
console asks each user to log in with their own cluster credentials (``sasl.mechanism``:
PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512); with them, every user acts as that one account.
The views that read a broker's own files and counters are shown with a notice only (they
need the console inside a kafkacore broker: ``console.listeners``).

``--listen`` takes ``http://host:port`` (empty host: 127.0.0.1; repeatable). Stops on
SIGINT/SIGTERM. Needs ``kafkacore[console]`` and confluent-kafka.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

__all__ = ["console_context", "register", "run"]

PROG = "kafkacore console"
DEFAULT_LISTEN = "http://127.0.0.1:8080"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "console",
        prog=PROG,
        help="Serve the web console for a cluster (http://127.0.0.1:8080).",
    )
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    parser.add_argument("--command-config", metavar="FILE", help="client properties (security)")
    parser.add_argument(
        "--listen",
        action="append",
        default=[],
        metavar="URL",
        help=f"where to serve it (repeatable; default {DEFAULT_LISTEN})",
    )
    parser.add_argument("--read-only", action="store_true", help="show, change nothing")
    parser.add_argument("--audit-topic", default="__console_audit", metavar="TOPIC")
    parser.set_defaults(run=run, prog=PROG)


def console_context(args: argparse.Namespace) -> Any:
    """The :class:`~kafkacore.console.context.ConsoleContext` ``args`` describe."""
    from kafkacore.cli import UsageError
    from kafkacore.cli._client import librdkafka_config
    from kafkacore.config import load_properties
    from kafkacore.console import ConsoleContext, Login
    from kafkacore.net import client_security

    props: dict[str, str] = {}
    if args.command_config:
        try:
            props = dict(load_properties(args.command_config))
        except OSError as exc:
            raise UsageError(PROG, f"cannot read {args.command_config}: {exc.strerror}") from None
    try:
        config = librdkafka_config(props)
    except ValueError as exc:
        raise UsageError(PROG, str(exc)) from None
    protocol = config.get("security.protocol", "PLAINTEXT").upper()
    login = None
    raw_props = props
    if protocol.startswith("SASL") and not config.get("sasl.username"):
        mechanism = config.get("sasl.mechanism", "GSSAPI").upper()
        if mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise UsageError(PROG, f"sasl.mechanism={mechanism}: users log in with PLAIN or SCRAM")
        login = Login(mechanism, protocol)
        for key in ("sasl.mechanism", "security.protocol"):
            config.pop(key, None)
        # each user logs in: the console's own raw connections keep the TLS part only
        raw_props = {**props, "security.protocol": protocol.removeprefix("SASL_")}
    try:
        command_security = client_security(raw_props)
    except ValueError as exc:
        raise UsageError(PROG, str(exc)) from None
    return ConsoleContext(
        bootstrap=args.bootstrap_server,
        base_config=config,
        login=login,
        read_only=args.read_only,
        audit_topic=args.audit_topic,
        cluster_label=args.bootstrap_server,
        command_security=command_security,
    )


def run(args: argparse.Namespace) -> int:
    from kafkacore.cli import UsageError
    from kafkacore.config.broker_defs import parse_console_listener
    from kafkacore.config.defs import ConfigError

    try:
        from kafkacore.console import run_standalone
    except ImportError as exc:
        raise UsageError(PROG, f"{exc}: pip install 'kafkacore[console]'") from None
    listen = args.listen or [DEFAULT_LISTEN]
    for entry in listen:
        try:
            parse_console_listener("--listen", entry)
        except ConfigError as exc:
            raise UsageError(PROG, str(exc)) from None
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
    )
    ctx = console_context(args)
    try:
        return run_standalone(ctx, listen)
    except OSError as exc:
        sys.stderr.write(f"{PROG}: error: cannot listen on {' '.join(listen)}: {exc}\n")
        return 1
