"""``kafkacore configs --entity-type users|clients``: client quotas with Kafka's
``ConfigCommand`` behaviour and output, over DescribeClientQuotas / AlterClientQuotas v1
(sent with :mod:`kafkacore.cli._wire`, secured as ``--command-config`` says;
confluent-kafka has no quota API).

* ``--describe``: the entities matching the given types and names exactly (``strict``),
  a type without a name matching any name, one line each:
  ``Quota configs for user-principal 'u', client-id 'c' are producer_byte_rate=1024.0``.
* ``--alter``: ``--add-config k=v`` (values are numbers) and ``--delete-config k`` (a key
  the entity does not have is refused: ``Invalid config(s): k``), then
  ``Completed updating config for user u.`` / ``... default config for users in the cluster.``
* SCRAM credentials of a user (KIP-554), over confluent-kafka's AdminClient
  (AlterUserScramCredentials / DescribeUserScramCredentials): ``--add-config
  'SCRAM-SHA-256=[iterations=8192,password=...],SCRAM-SHA-512=[password=...]'`` (iterations
  default to 4096; the client salts the password, the broker never sees it),
  ``--delete-config SCRAM-SHA-512``; ``--describe`` of users adds, after the quota lines,
  ``SCRAM credential configs for user-principal 'u' are SCRAM-SHA-256=iterations=8192``
  (not with ``clients`` or ``--entity-default``). With Kafka's rules: SCRAM and quota
  changes cannot be mixed, nor SCRAM with the default user or a client id.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.security.scram import ScramMechanism
from kafkacore.server.client_quotas import CLIENT_QUOTA_KEYS, java_double

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
    from kafkacore.cli.config_changes import parse_config_changes

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
    scram = args.alter and _check_scram(types, names, adds, deletes)
    if scram:
        return _alter_scram(args, names[0], adds, deletes)
    from kafkacore.cli._wire import use_security

    try:
        use_security(args)
    except ValueError as exc:
        raise UsageError(PROG, str(exc)) from None
    client = _WireClient(args.bootstrap_server)
    try:
        if args.describe:
            for line in _describe(client, components):
                print(line)
            if "clients" not in types and "" not in names:
                for line in _describe_scram(args, names):
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


class _WireClient:
    """One request at a time to the first bootstrap broker that answers."""

    def __init__(self, bootstrap: str) -> None:
        self.brokers = []
        for entry in bootstrap.split(","):
            host, _, port = entry.strip().rpartition(":")
            self.brokers.append((host or "localhost", int(port)))

    def call(self, api_name: str, version: int, request: Any) -> Any:
        from kafkacore.cli._wire import call
        from kafkacore.protocol import ApiKey

        key = ApiKey(APIS_BY_NAME[api_name].key)
        failure: OSError | None = None
        for host, port in self.brokers:
            try:
                return call(
                    host, port, key, version, request, client_id="kafkacore-configs", timeout_s=30
                )
            except OSError as exc:
                failure = exc
        raise _Failed(f"{api_name} to {self.brokers}: {failure}")

    def close(self) -> None:
        pass


def _call(client: _WireClient, api: str, request: Any) -> Any:
    # one request to any reachable broker
    return client.call(api, _VERSION, request)


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


# -- SCRAM credentials (ConfigCommand.alterUserScramCredentialConfigs) -------------------------

_SCRAM_NAMES = {m.mechanism_name: m for m in ScramMechanism}
_CREDENTIAL = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)", re.DOTALL)
DEFAULT_SCRAM_ITERATIONS = 4096


def _scala_list(names: list[str]) -> str:
    return f"List({', '.join(names)})"


def _scala_set(names: list[str]) -> str:
    return f"Set({', '.join(names)})"


def _check_scram(
    types: list[str], names: list[str], adds: dict[str, str], deletes: list[str]
) -> bool:
    """Kafka's checks of a users/clients ``--alter``; True: a SCRAM credential change."""
    from kafkacore.cli import UsageError

    scram_adds = [k for k in adds if k in _SCRAM_NAMES]
    scram_deletes = [k for k in deletes if k in _SCRAM_NAMES]
    unknown_adds = [k for k in adds if k not in _SCRAM_NAMES and k not in CLIENT_QUOTA_KEYS]
    unknown_deletes = [k for k in deletes if k not in _SCRAM_NAMES and k not in CLIENT_QUOTA_KEYS]
    quota = any(k in CLIENT_QUOTA_KEYS for k in [*adds, *deletes])
    if types[0] == "clients" or len(types) == 2:
        if scram_adds:
            raise UsageError(
                PROG,
                "Only quota configs can be added for 'clients' using --bootstrap-server. "
                f"Unexpected config names: {_scala_set(unknown_adds + scram_adds)}",
            )
        if scram_deletes:
            raise UsageError(
                PROG,
                "Only quota configs can be deleted for 'clients' using --bootstrap-server. "
                f"Unexpected config names: {_scala_list(unknown_deletes + scram_deletes)}",
            )
        return False
    if not (scram_adds or scram_deletes):
        return False
    if unknown_adds:
        raise UsageError(
            PROG,
            "Only quota and SCRAM credential configs can be added for 'users' using "
            f"--bootstrap-server. Unexpected config names: {_scala_set(unknown_adds)}",
        )
    if unknown_deletes:
        raise UsageError(
            PROG,
            "Only quota and SCRAM credential configs can be deleted for 'users' using "
            f"--bootstrap-server. Unexpected config names: {_scala_list(unknown_deletes)}",
        )
    if "" in names:
        raise UsageError(
            PROG,
            "The use of --entity-default or --user-defaults is not allowed with User SCRAM "
            "Credentials using --bootstrap-server.",
        )
    if quota:
        raise UsageError(
            PROG,
            "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' "
            "using --bootstrap-server.",
        )
    return True


def _iterations_and_password(mechanism: ScramMechanism, text: str) -> tuple[int, bytes]:
    from kafkacore.cli import UsageError

    match = _CREDENTIAL.fullmatch(text)
    if match is None:
        raise UsageError(PROG, f"Invalid credential property {mechanism.name}={text}")
    given, password = match.groups()
    iterations = int(given) if given not in (None, "", "-1") else DEFAULT_SCRAM_ITERATIONS
    if iterations < mechanism.min_iterations:
        raise UsageError(
            PROG,
            f"Iterations {iterations} is less than the minimum {mechanism.min_iterations} "
            f"required for {mechanism.mechanism_name}",
        )
    return iterations, password.encode("utf-8")


def _alter_scram(
    args: argparse.Namespace, user: str, adds: dict[str, str], deletes: list[str]
) -> int:
    from kafkacore.cli.topics import BrokerError, admin_client, ck_module, wait

    admin_mod = ck_module("confluent_kafka.admin")
    alterations: list[Any] = [
        admin_mod.UserScramCredentialDeletion(
            user, getattr(admin_mod.ScramMechanism, _SCRAM_NAMES[name].name)
        )
        for name in deletes
        if name in _SCRAM_NAMES
    ]
    for name, text in adds.items():
        mechanism = _SCRAM_NAMES[name]
        iterations, password = _iterations_and_password(mechanism, text)
        info = admin_mod.ScramCredentialInfo(
            getattr(admin_mod.ScramMechanism, mechanism.name), iterations
        )
        alterations.append(admin_mod.UserScramCredentialUpsertion(user, info, password))
    admin = admin_client(args)
    try:
        for future in admin.alter_user_scram_credentials(alterations).values():
            wait(future)
    except BrokerError as exc:
        sys.stderr.write(f"Error while executing config command: {exc}\n")
        return 1
    print(f"Completed updating config for user {user}.")
    return 0


def _describe_scram(args: argparse.Namespace, names: list[str]) -> list[str]:
    """ConfigCommand's SCRAM lines: every described user except those without credentials
    (``DescribeUserScramCredentialsResult.users`` leaves out RESOURCE_NOT_FOUND)."""
    from kafkacore.cli.topics import admin_client, ck_module

    admin_mod = ck_module("confluent_kafka.admin")
    admin = admin_client(args)
    results: list[tuple[str, Any]] = []
    if names:
        futures = admin.describe_user_scram_credentials(list(names))
        for user in dict.fromkeys(names):
            try:
                results.append((user, futures[user].result(30)))
            except Exception as exc:  # KafkaException
                results.append((user, exc))
    else:
        described = admin.describe_user_scram_credentials().result(30)
        results = sorted(described.items())
    lines = []
    for user, description in results:
        if isinstance(description, Exception):
            error = description.args[0] if description.args else description
            code = error.code() if hasattr(error, "code") else None
            if code == ErrorCode.RESOURCE_NOT_FOUND:
                continue
            text = error.str() if hasattr(error, "str") else str(error)
            lines.append(
                f"Error retrieving SCRAM credential configs for user-principal '{user}': {text}"
            )
            continue
        infos = ", ".join(
            f"{_mechanism_name(admin_mod, i.mechanism)}=iterations={i.iterations}"
            for i in description.scram_credential_infos
        )
        lines.append(f"SCRAM credential configs for user-principal '{user}' are {infos}")
    return lines


def _mechanism_name(admin_mod: Any, mechanism: Any) -> str:
    return str(admin_mod.ScramMechanism(mechanism).name).replace("_", "-")
