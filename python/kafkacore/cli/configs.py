# ruff: noqa: E501
"""``kafkacore configs``: Kafka's ``kafka-configs.sh`` (topics and brokers) over
confluent-kafka's AdminClient (DescribeConfigs, IncrementalAlterConfigs); ``clients`` and
``users`` (client quotas) over kafkacore's own client (DescribeClientQuotas,
AlterClientQuotas), with Kafka's ``ConfigCommand`` output. ``--entity-type`` may be
repeated, each followed by its ``--entity-name`` or ``--entity-default``
(``--entity-type users --entity-name u --entity-type clients --entity-name c``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkacore.cli.config_changes import parse_config_changes
from kafkacore.cli.topics import BrokerError, add_common, admin_client, ck_module, wait

__all__ = ["register", "run"]

PROG = "kafkacore configs"
_SINGULAR = {"topics": "topic", "brokers": "broker", "clients": "client", "users": "user"}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "configs", prog=PROG, help="Describe and alter topic and broker configs."
    )
    add_common(parser)
    actions = parser.add_mutually_exclusive_group()
    actions.add_argument("--describe", action="store_true")
    actions.add_argument("--alter", action="store_true")
    parser.add_argument(
        "--entity-type", dest="entity_types", action="append", choices=sorted(_SINGULAR)
    )
    parser.add_argument("--entity-name", dest="entity_names", action=_EntityName)
    parser.add_argument("--entity-default", dest="entity_names", action=_EntityName, nargs=0)
    parser.add_argument("--topic", help="Same as --entity-type topics --entity-name TOPIC.")
    parser.add_argument("--broker", help="Same as --entity-type brokers --entity-name ID.")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--add-config", action="append", default=[])
    parser.add_argument("--delete-config", action="append", default=[])
    parser.set_defaults(run=run, prog=PROG)


class _EntityName(argparse.Action):
    """``--entity-name N`` and ``--entity-default`` (``""``) into one ordered list, as
    Kafka's ``ConfigCommand`` pairs them with the ``--entity-type`` options."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        names = list(getattr(namespace, self.dest, None) or [])
        names.append(values if isinstance(values, str) else "")
        setattr(namespace, self.dest, names)


def run(args: argparse.Namespace) -> int:
    from kafkacore.cli import UsageError

    types: list[str] = list(args.entity_types or [])
    names: list[str] = list(args.entity_names or [])
    if args.topic:
        types, names = ["topics"], [args.topic]
    if args.broker:
        types, names = ["brokers"], [args.broker]
    args.entity_type = types[0] if types else None
    args.entity_name = names[0] if names and names[0] != "" else None
    args.entity_default = bool(names) and names[0] == ""
    if not (args.describe or args.alter):
        raise UsageError(PROG, "Command must include exactly one action: --describe, --alter")
    if args.entity_type is None:
        raise UsageError(PROG, "--entity-type must be specified")
    if args.entity_type in ("clients", "users"):
        from kafkacore.cli.quotas import run_quotas

        return run_quotas(args, types, names)
    if len(types) > 1:
        raise UsageError(
            PROG, "Only one entity type is valid, unless the entity types are users and clients"
        )
    if (
        args.entity_name is None
        and not args.entity_default
        and not (args.describe and args.entity_type == "brokers")
    ):
        raise UsageError(
            PROG,
            "an entity name must be specified with --alter of topics"
            if args.alter
            else "--entity-name or --entity-default must be specified",
        )
    if args.entity_type == "topics" and args.entity_default:
        raise UsageError(PROG, "--entity-default is not supported for topics")
    adds, deletes = parse_config_changes(args, PROG)
    admin = admin_client(args)
    try:
        if args.describe:
            _describe(admin, args)
        else:
            _alter(admin, args, adds, deletes)
    except BrokerError as exc:
        sys.stderr.write(
            f"Error while executing config command with args '{' '.join(sys.argv[1:])}'\n{exc}\n"
            if False
            else f"Error while executing config command: {exc}\n"
        )
        return 1
    return 0


def _resource(args: argparse.Namespace, name: str) -> Any:
    from kafkacore.cli.topics import ck_module

    ConfigResource = ck_module("confluent_kafka.admin").ConfigResource

    return ConfigResource("topic" if args.entity_type == "topics" else "broker", name)


def _entity_label(args: argparse.Namespace, name: str) -> str:
    if args.entity_type == "brokers" and not name:
        return (
            "default config for brokers in the cluster"
            if args.alter
            else "configs for brokers in the cluster"
        )
    return (
        f"config for {_SINGULAR[args.entity_type]} {name}"
        if args.alter
        else f"configs for {_SINGULAR[args.entity_type]} {name}"
    )


def _describe(admin: Any, args: argparse.Namespace) -> None:
    if args.entity_name is not None:
        names = [args.entity_name]
    elif args.entity_default:
        names = [""]
    else:  # all brokers
        metadata = admin.list_topics(timeout=30)
        names = [str(b) for b in sorted(metadata.brokers)] + [""]
    for name in names:
        if args.entity_type == "brokers" and name and not name.isdigit():
            raise BrokerError(
                f"The entity name for brokers must be a valid integer broker id, found: {name}"
            )
        if args.entity_type == "brokers":
            entries = _describe_broker(args, name)
        else:
            futures = admin.describe_configs([_resource(args, name)], request_timeout=30)
            entries = wait(next(iter(futures.values())))
        # Kafka's ConfigCommand shows only the entity's own dynamic values (a broker's
        # values from the default are not "its" dynamic configs)
        dynamic_sources = (
            {"DYNAMIC_TOPIC_CONFIG"}
            if args.entity_type == "topics"
            else {"DYNAMIC_BROKER_CONFIG"}
            if name
            else {"DYNAMIC_DEFAULT_BROKER_CONFIG"}
        )
        shown = [e for e in entries.values() if args.all or _source(e) in dynamic_sources]
        if not name:
            header = "Default configs for brokers in the cluster are:"
        else:
            header = f"{'All' if args.all else 'Dynamic'} configs for {_SINGULAR[args.entity_type]} {name} are:"
        print(header)
        for e in sorted(shown, key=lambda e: e.name):
            value = "null" if e.is_sensitive or e.value is None else e.value
            synonyms = ", ".join(
                f"{_source(s)}:{s.name}={'null' if s.is_sensitive or s.value is None else s.value}"
                for s in e.synonyms.values()
            )
            print(
                f"  {e.name}={value} sensitive={str(bool(e.is_sensitive)).lower()} synonyms={{{synonyms}}}"
            )


def _source(entry: Any) -> str:
    source = entry.source
    if isinstance(source, int):
        try:
            return str(ck_module("confluent_kafka.admin").ConfigSource(source).name)
        except ValueError:
            return "UNKNOWN"
    return str(getattr(source, "name", source))


def _alter(admin: Any, args: argparse.Namespace, adds: dict[str, str], deletes: list[str]) -> None:
    from kafkacore.cli.topics import ck_module

    _ckm = ck_module("confluent_kafka.admin")
    AlterConfigOpType = _ckm.AlterConfigOpType
    ConfigEntry = _ckm.ConfigEntry

    name = "" if args.entity_default else args.entity_name
    if args.entity_type == "brokers" and not name:
        _alter_broker_default(args, adds, deletes)
        print(f"Completed updating {_entity_label(args, name)}.")
        return
    resource = _resource(args, name)
    for key, value in adds.items():
        resource.add_incremental_config(
            ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)
        )
    for key in deletes:
        resource.add_incremental_config(
            ConfigEntry(key, None, incremental_operation=AlterConfigOpType.DELETE)
        )
    futures = admin.incremental_alter_configs([resource], request_timeout=30)
    wait(next(iter(futures.values())))
    print(f"Completed updating {_entity_label(args, name)}.")


# -- brokers over kafkacore's own client ---------------------------------------------------------
# confluent-kafka refuses a broker resource named "" (the <default> entity), and its
# synonyms, keyed by name, lose all but one of a config's synonyms of the same name: broker
# configs are described (DescribeConfigs v4) and the default altered (IncrementalAlterConfigs
# v1) with kafkacore's client; a broker's own configs are asked of that broker.

_SOURCE_NAMES = {
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
}


class _Entry:
    """The fields of confluent-kafka's ConfigEntry that :func:`_describe` prints."""

    def __init__(self, name: str, value: str | None, sensitive: bool, source: int) -> None:
        self.name = name
        self.value = value
        self.is_sensitive = sensitive
        self.source = _SOURCE_NAMES.get(source, "UNKNOWN")
        self.synonyms: dict[str, _Entry] = {}


def _raw_call(
    args: argparse.Namespace, api: str, version: int, request: Any, node: int | None = None
) -> Any:
    """``request`` to broker ``node`` (found in the cluster metadata), else to any broker."""
    from kafkacore.client import Client

    client = Client(args.bootstrap_server, client_id="kafkacore-configs")
    try:
        if node is None:
            return client._call_any(api, version, request)
        client.topics()  # the brokers' addresses
        return client._call(node, api, version, request)
    except Exception as exc:
        raise BrokerError(str(exc)) from None
    finally:
        client.close()


def _describe_broker(args: argparse.Namespace, name: str) -> dict[str, _Entry]:
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["DescribeConfigs"].request.cls
    request = cls(
        resources=[cls.DescribeConfigsResource(resource_type=4, resource_name=name)],
        include_synonyms=True,
        include_documentation=False,
    )
    node = int(name) if name else None
    (result,) = _raw_call(args, "DescribeConfigs", 4, request, node).results
    if result.error_code:
        raise BrokerError(result.error_message or f"error {result.error_code}")
    entries = {}
    for c in result.configs:
        entry = _Entry(c.name, c.value, c.is_sensitive, c.config_source)
        for s in c.synonyms:
            # keyed by source too: a config's synonyms often share its name
            entry.synonyms[f"{s.source}:{s.name}"] = _Entry(
                s.name, s.value, c.is_sensitive, s.source
            )
        entries[c.name] = entry
    return entries


def _alter_broker_default(
    args: argparse.Namespace, adds: dict[str, str], deletes: list[str]
) -> None:
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["IncrementalAlterConfigs"].request.cls
    configs = [
        cls.AlterableConfig(name=k, config_operation=0, value=v) for k, v in adds.items()
    ] + [cls.AlterableConfig(name=k, config_operation=1, value=None) for k in deletes]
    request = cls(
        resources=[cls.AlterConfigsResource(resource_type=4, resource_name="", configs=configs)],
        validate_only=False,
    )
    (result,) = _raw_call(args, "IncrementalAlterConfigs", 1, request).responses
    if result.error_code:
        raise BrokerError(result.error_message or f"error {result.error_code}")
