"""The ``kafkacore`` command: one subcommand per Kafka tool, with Kafka's option names.

    kafkacore dump-log --files 00000000000000000000.log,00000000000000000000.index

Each subcommand lives in its own module with a ``register(subparsers)`` function that
adds its parser and sets the defaults ``run`` (``run(args) -> exit status``) and
``prog``. Bad arguments exit with status 1 and a one-line reason on stderr, as Kafka's
tools do.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["UsageError", "main"]

PROG = "kafkacore"


class UsageError(Exception):
    """Bad arguments: reported as ``<prog>: error: <reason>``, exit status 1."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse with Kafka's exit status for bad arguments (1, not argparse's 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, message)


def _build_parser() -> argparse.ArgumentParser:
    from kafkacore.cli import (
        acls,
        configs,
        consumer_groups,
        dump_log,
        leader_election,
        log_dirs,
        offsets,
        pipeline,
        reassign,
        server,
        storage,
        topics,
        web_console,
    )
    from kafkacore.cli import console as console_cli

    parser = _Parser(
        prog=PROG,
        description="Apache Kafka's tools over kafkacore's (= Kafka's) files and protocol.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    dump_log.register(subparsers)
    server.register(subparsers)
    storage.register(subparsers)
    topics.register(subparsers)
    configs.register(subparsers)
    console_cli.register(subparsers)
    offsets.register(subparsers)
    consumer_groups.register(subparsers)
    log_dirs.register(subparsers)
    pipeline.register(subparsers)
    reassign.register(subparsers)
    leader_election.register(subparsers)
    acls.register(subparsers)
    web_console.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kafkacore`` with ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    parser = _build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:
            prog = parser.prog if args.command is None else args.prog
            raise UsageError(prog, f"unrecognized arguments: {' '.join(unknown)}")
        if args.command is None:
            parser.print_help(sys.stderr)
            return 1
        status: int = args.run(args)
        return status
    except UsageError as exc:
        sys.stderr.write(f"{exc.prog}: error: {exc}\n")
        return 1
    except BrokenPipeError:
        # The reader went away (`kafkacore dump-log … | head`): stop quietly, like Kafka.
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        return 130


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
