"""``kafkacore configs --entity-type users|clients``: client quotas with Kafka's
``ConfigCommand`` behaviour and output, over DescribeClientQuotas / AlterClientQuotas v1
(sent with :class:`kafkacore.client.Client`; confluent-kafka has no quota API).

* ``--describe``: the entities matching the given types and names exactly (``strict``),
  a type without a name matching any name, one line each:
  ``Quota configs for user-principal 'u', client-id 'c' are producer_byte_rate=1024.0``.
* ``--alter``: ``--add-config k=v`` (values are numbers) and ``--delete-config k`` (a key
  the entity does not have is refused: ``Invalid config(s): k``), then
  ``Completed updating config for user u.`` / ``... default config for users in the cluster.``
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.server.client_quotas import java_double

__all__ = ["run_quotas"]

PROG = "kafkacore configs"
_ENTITY_TYPES = {"users": "user", "clients": "client-id"}
_LABELS = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
_VERSION = 1


def _request(api: str) -> Any:
    return APIS_BY_NAME[api].request.cls


class _Failed(Exception):
    pass


def run_quotas(args: argparse.Namespace, types: list[str], names: list[str]) -> int:
    from kafkacore.cli import UsageError
    from kafkacore.cli.configs import parse_config_changes

    if any(t not in _ENTITY_TYPES for t in types) or len(set(types)) != len(types):
        raise UsageError(
            PROG, "Only one entity type is valid, unless the entity types are users and clients"
        )
    if len(names) > len(types):
        raise UsageError(PROG, "--entity-name or --entity-default must follow an --entity-type")
    if args.alter and len(names) != len(types):
        raise UsageError(PROG, "an entity name must be specified with --alter of users, clients")
    if not args.bootstrap_server:
        raise UsageError(PROG, "--bootstrap-server must be specified")
    # entity components: (quota entity type, name | "" for the default | None for any)
    components = [
        (_ENTITY_TYPES[t], names[i] if i < len(names) else None) for i, t in enumerate(types)
    ]
    adds, deletes = parse_config_changes(args, PROG)
    from kafkacore.client import Client

    client = Client(args.bootstrap_server, client_id="kafkacore-configs")
    try:
        if args.describe:
            for line in _describe(client, components):
                print(line)
        else:
            _alter(client, components, adds, deletes)
            head_type, head_name = types[0], names[0]
            if head_name:
                print(f"Completed updating config for {head_type[:-1]} {head_name}.")
            else:
                print(f"Completed updating default config for {head_type} in the cluster.")
    except Exception as exc:  # _Failed, KafkaError and connection failures
        sys.stderr.write(f"Error while executing config command: {exc}\n")
        return 1
    finally:
        client.close()
    return 0


def _call(client: Any, api: str, request: Any) -> Any:
    # one request to any reachable broker (the client's own routing)
    return client._call_any(api, _VERSION, request)


def _quotas(
    client: Any, components: list[tuple[str, str | None]]
) -> list[tuple[list[tuple[str, str | None]], dict[str, float]]]:
    req = _request("DescribeClientQuotas")
    request = req(
        components=[
            req.ComponentData(
                entity_type=entity_type,
                match_type=2 if name is None else 1 if name == "" else 0,
                match=name or None,
            )
            for entity_type, name in components
        ],
        strict=True,
    )
    response = _call(client, "DescribeClientQuotas", request)
    if response.error_code != ErrorCode.NONE:
        raise _Failed(response.error_message or ErrorCode(response.error_code).name)
    return [
        (
            [(e.entity_type, e.entity_name) for e in entry.entity],
            {v.key: v.value for v in entry.values},
        )
        for entry in response.entries or []
    ]


def _describe(client: Any, components: list[tuple[str, str | None]]) -> list[str]:
    lines = []
    for entity, values in _quotas(client, components):
        parts = []
        for entity_type in ("user", "client-id", "ip"):
            for t, name in entity:
                if t == entity_type:
                    label = _LABELS[t]
                    parts.append(
                        f"{label} '{name}'" if name is not None else f"the default {label}"
                    )
        configs = ", ".join(f"{k}={java_double(v)}" for k, v in values.items())
        lines.append(f"Quota configs for {', '.join(parts)} are {configs}")
    return lines


def _alter(
    client: Any,
    components: list[tuple[str, str | None]],
    adds: dict[str, str],
    deletes: list[str],
) -> None:
    if deletes:
        current = _quotas(client, components)
        have = set().union(*(set(values) for _, values in current)) if current else set()
        missing = [k for k in deletes if k not in have]
        if missing:
            raise _Failed(f"Invalid config(s): {','.join(missing)}")
    req = _request("AlterClientQuotas")
    ops = []
    for key, text in adds.items():
        try:
            value = float(text)
        except ValueError:
            raise _Failed(f"Cannot parse quota configuration value for {key}: {text}") from None
        ops.append(req.OpData(key=key, value=value, remove=False))
    ops.extend(req.OpData(key=key, value=0.0, remove=True) for key in deletes)
    entity = [req.EntityData(entity_type=t, entity_name=name or None) for t, name in components]
    response = _call(
        client,
        "AlterClientQuotas",
        req(entries=[req.EntryData(entity=entity, ops=ops)], validate_only=False),
    )
    for entry in response.entries:
        if entry.error_code != ErrorCode.NONE:
            raise _Failed(entry.error_message or ErrorCode(entry.error_code).name)
