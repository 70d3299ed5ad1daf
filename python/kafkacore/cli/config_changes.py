"""``--add-config`` / ``--delete-config`` as Kafka's ``ConfigCommand`` parses them, for
``kafkacore configs`` (topics and brokers, :mod:`kafkacore.cli.configs`) and its client
quotas and SCRAM credentials (:mod:`kafkacore.cli.quotas`).

Thread-safety: pure functions.
"""

from __future__ import annotations

import argparse

__all__ = ["parse_add_config", "parse_config_changes"]

PROG = "kafkacore configs"


def parse_add_config(text: str) -> dict[str, str]:
    """``k1=v1,k2=[a,b]`` → ``{"k1": "v1", "k2": "a,b"}`` (Kafka's syntax)."""
    from kafkacore.cli import UsageError

    out: dict[str, str] = {}
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    for part in parts:
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                PROG,
                'Invalid entity config: all configs to be added must be in the format "key=val" '
                f"(got {part!r})",
            )
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = value[1:-1]
        out[key.strip()] = value
    return out


def parse_config_changes(args: argparse.Namespace, prog: str) -> tuple[dict[str, str], list[str]]:
    """``--add-config`` and ``--delete-config`` (each may repeat): the configs to set and
    the names to delete; ``--alter`` needs at least one of them (Kafka's message, as
    ``prog``)."""
    from kafkacore.cli import UsageError

    adds: dict[str, str] = {}
    for item in args.add_config:
        adds.update(parse_add_config(item))
    deletes = [k.strip() for item in args.delete_config for k in item.split(",") if k.strip()]
    if args.alter and not adds and not deletes:
        raise UsageError(
            prog, "At least one of --add-config or --delete-config must be specified with --alter"
        )
    return adds, deletes
