# ruff: noqa: E501
"""``kafkacore topics``: Kafka's ``kafka-topics.sh`` over confluent-kafka's AdminClient.

Also holds the helpers the other admin subcommands share (client construction, broker
error reporting, ``--command-config``).
"""

from __future__ import annotations

import argparse
import base64
import sys
from typing import Any

from kafkacore._java import java_hash_map_order, java_string_hash
from kafkacore.admin.client import AdminError, RawSender, ck_module, error_text, wait

__all__ = [
    "BrokerError",
    "admin_client",
    "ck_module",
    "client_config",
    "error_text",
    "register",
    "run",
    "wait",
    "wire_sender",
]

PROG = "kafkacore topics"
TIMEOUT = 30.0

# Kafka's replication reports of ``--describe``: each alone, not with --topics-with-overrides.
REPORTS = (
    "under-replicated-partitions",
    "under-min-isr-partitions",
    "at-min-isr-partitions",
    "unavailable-partitions",
)
# Kafka's ``Topic.isInternal``: the only internal topics, whatever the name's prefix.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


BrokerError = AdminError
"""A failed request: printed as one line on stderr, exit status 1 (the admin library's
:class:`~kafkacore.admin.AdminError`)."""


def client_config(args: argparse.Namespace) -> dict[str, Any]:
    from kafkacore.cli import UsageError
    from kafkacore.cli._client import librdkafka_config
    from kafkacore.config import load_properties

    if not args.bootstrap_server:
        raise UsageError(args.prog, "--bootstrap-server must be specified")
    conf: dict[str, Any] = {}
    # --command-config, or the console tools' --producer.config / --consumer.config: Java
    # client properties, translated for librdkafka (kafkacore.cli._client)
    for option in ("command_config", "producer_config", "consumer_config"):
        path = getattr(args, option, None)
        if not path:
            continue
        try:
            conf.update(librdkafka_config(load_properties(path)))
        except OSError as exc:
            raise UsageError(args.prog, f"cannot read {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise UsageError(args.prog, str(exc)) from None
    conf["bootstrap.servers"] = args.bootstrap_server
    # librdkafka's informational lines (e.g. BGQUEUE "Purging 1 unserved events" when a
    # client closes with a callback pending) are not the tool's output; warnings stay, as
    # Kafka's tools log WARN to stderr
    conf.setdefault("log_level", 4)
    return conf


def admin_client(args: argparse.Namespace) -> Any:
    """confluent-kafka's AdminClient for the tool's ``--bootstrap-server`` and
    ``--command-config``; the tool's own raw requests (:mod:`kafkacore.cli._wire`) are
    secured the same way."""
    from kafkacore.cli import UsageError
    from kafkacore.cli._wire import use_security

    AdminClient = ck_module("confluent_kafka.admin").AdminClient
    conf = client_config(args)
    try:
        use_security(args)
    except ValueError as exc:
        raise UsageError(args.prog, str(exc)) from None
    return AdminClient(conf)


def wire_sender(client_id: str) -> RawSender:
    """The tools' raw requests (:class:`~kafkacore.admin.RawSender`): one blocking
    connection per request, secured as ``--command-config`` says (:mod:`kafkacore.cli.
    _wire`), with ``client_id``."""
    from kafkacore.admin.client import ConnectionClosed
    from kafkacore.cli._wire import call
    from kafkacore.net import ConnectionClosed as WireConnectionClosed
    from kafkacore.protocol import APIS_BY_NAME, ApiKey

    def send(host: str, port: int, api: str, version: int, request: Any) -> Any:
        key = ApiKey(APIS_BY_NAME[api].key)
        try:
            return call(host, port, key, version, request, client_id=client_id, timeout_s=TIMEOUT)
        except WireConnectionClosed as exc:
            raise ConnectionClosed(str(exc)) from None

    return send


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", metavar="SERVER")
    parser.add_argument("--command-config", metavar="FILE")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "topics", prog=PROG, help="Create, list, describe, alter and delete topics."
    )
    add_common(parser)
    actions = parser.add_mutually_exclusive_group()
    for name in ("create", "list", "describe", "alter", "delete"):
        actions.add_argument(f"--{name}", action="store_true")
    parser.add_argument("--topic")
    parser.add_argument("--partitions", type=int)
    parser.add_argument("--replication-factor", type=int)
    parser.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--if-not-exists", action="store_true")
    parser.add_argument("--if-exists", action="store_true")
    for report in REPORTS:
        parser.add_argument(f"--{report}", action="store_true")
    parser.add_argument("--topics-with-overrides", action="store_true")
    parser.add_argument("--exclude-internal", action="store_true")
    parser.set_defaults(run=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    from kafkacore.cli import UsageError

    if not (args.create or args.list or args.describe or args.alter or args.delete):
        raise UsageError(
            PROG,
            "Command must include exactly one action: --list, --describe, --create, --alter or --delete",
        )
    if (args.create or args.alter or args.delete) and not args.topic:
        raise UsageError(PROG, "--topic is required with --create, --alter and --delete")
    _check_describe_options(args)
    if args.alter and args.partitions is None:
        raise UsageError(PROG, "--partitions is required with --alter")
    if args.partitions is not None and args.partitions < 1:
        raise UsageError(PROG, "The partitions must be greater than 0")
    if args.replication_factor is not None and args.replication_factor < 1:
        raise UsageError(PROG, "The replication factor must be greater than 0")
    admin = admin_client(args)
    try:
        if args.create:
            _create(admin, args)
        elif args.list:
            for name in _topic_names(admin, args):
                print(name)
        elif args.describe:
            _describe(admin, args)
        elif args.alter:
            _alter(admin, args)
        else:
            _delete(admin, args)
    except BrokerError as exc:
        sys.stderr.write(f"Error while executing topic command : {exc}\n")
        return 1
    return 0


def _check_describe_options(args: argparse.Namespace) -> None:
    """Kafka's ``TopicCommandOptions.checkArgs`` for the describe-only options: the
    reports go together, but not with --topics-with-overrides nor another action."""
    from kafkacore.cli import UsageError

    given = [r for r in (*REPORTS, "topics-with-overrides") if _flag(args, r)]
    action = next((a for a in ("create", "list", "alter", "delete") if _flag(args, a)), None)
    if given and action is not None:
        raise UsageError(PROG, f'Option "[{given[0]}]" can\'t be used with option "[{action}]"')
    if len(given) > 1 and given[-1] == "topics-with-overrides":
        raise UsageError(
            PROG, f'Option "[{given[0]}]" can\'t be used with option "[topics-with-overrides]"'
        )


def _flag(args: argparse.Namespace, option: str) -> bool:
    return bool(getattr(args, option.replace("-", "_"), False))


def parse_configs(items: list[str], prog: str) -> dict[str, str]:
    from kafkacore.cli import UsageError

    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(prog, f"Invalid config: {item!r} (expected key=value)")
        out[key.strip()] = value
    return out


def _create(admin: Any, args: argparse.Namespace) -> None:
    NewTopic = ck_module("confluent_kafka.admin").NewTopic

    configs = parse_configs(args.config, PROG)
    topic = NewTopic(
        args.topic,
        num_partitions=args.partitions if args.partitions is not None else -1,
        replication_factor=args.replication_factor if args.replication_factor is not None else -1,
        config=configs,
    )
    try:
        wait(admin.create_topics([topic], operation_timeout=TIMEOUT)[args.topic])
    except BrokerError as exc:
        if args.if_not_exists and "already exists" in str(exc):
            return
        raise
    print(f"Created topic {args.topic}.")


def _topic_names(admin: Any, args: argparse.Namespace) -> list[str]:
    try:
        metadata = admin.list_topics(timeout=TIMEOUT)
    except Exception as exc:
        raise BrokerError(error_text(exc)) from None
    names = sorted(metadata.topics)
    if args.exclude_internal:
        names = [n for n in names if n not in INTERNAL_TOPICS]
    if args.topic:
        import re

        pattern = re.compile(args.topic)
        names = [n for n in names if pattern.fullmatch(n)]
    return names


def _uuid_text(topic_id: Any) -> str:
    try:
        raw = (topic_id.get_most_significant_bits() & (2**64 - 1)).to_bytes(8, "big") + (
            topic_id.get_least_significant_bits() & (2**64 - 1)
        ).to_bytes(8, "big")
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")
    except AttributeError:
        return str(topic_id).replace("+", "-").replace("/", "_").rstrip("=")


def _describe(admin: Any, args: argparse.Namespace) -> None:
    """Kafka's ``TopicService.describeTopic``: a topic line (unless a replication report
    is asked for) and a line per partition (unless --topics-with-overrides, which prints
    only the topics with a non-default config). The reports select partitions: under
    replicated (ISR smaller than the replicas), under min ISR (no leader or ISR smaller
    than the topic's ``min.insync.replicas``), at min ISR (ISR size equal to it),
    unavailable (no leader, or a leader that is not a live broker)."""
    TopicCollection = ck_module("confluent_kafka").TopicCollection
    ConfigResource = ck_module("confluent_kafka.admin").ConfigResource

    names = _topic_names(admin, args)
    if args.topic and not names and not args.if_exists:
        raise BrokerError(f"Topic '{args.topic}' does not exist as expected")
    if not names:
        return
    descriptions = admin.describe_topics(TopicCollection(names), request_timeout=TIMEOUT)
    resources = [ConfigResource("topic", n) for n in names]
    config_futures = admin.describe_configs(resources, request_timeout=TIMEOUT)
    configs_by_name = {res.name: fut for res, fut in config_futures.items()}
    reports = [r for r in REPORTS if _flag(args, r)]
    live_brokers: set[int] = set()
    if args.unavailable_partitions:
        try:
            live_brokers = set(admin.list_topics(timeout=TIMEOUT).brokers)
        except Exception as exc:
            raise BrokerError(error_text(exc)) from None
    # Kafka prints the topics in the order of the HashMap its admin client returns them in
    for name in java_hash_map_order(names, java_string_hash, len(names)):
        desc = wait(descriptions[name])
        entries = wait(configs_by_name[name])
        partitions = sorted(desc.partitions, key=lambda p: p.id)
        # in the order of the admin client's Config (a HashMap by name), as Kafka prints them
        in_java_order = java_hash_map_order(
            list(entries.values()), lambda e: java_string_hash(e.name)
        )
        overrides = [e for e in in_java_order if not e.is_default]
        if not reports and (not args.topics_with_overrides or overrides):
            rf = len(partitions[0].replicas) if partitions else 0
            configs = ",".join(
                f"{e.name}={'null' if e.value is None else e.value}" for e in overrides
            )
            print(
                f"Topic: {name}\tTopicId: {_uuid_text(desc.topic_id)}\t"
                f"PartitionCount: {len(partitions)}\tReplicationFactor: {rf}\tConfigs: {configs}"
            )
        if args.topics_with_overrides:
            continue
        min_isr_entry = entries.get("min.insync.replicas")
        min_isr = int(min_isr_entry.value) if min_isr_entry is not None else 1
        for p in partitions:
            replicas = [r.id for r in p.replicas]
            isr = [r.id for r in p.isr]
            selected = {
                "under-replicated-partitions": len(replicas) > len(isr),
                "under-min-isr-partitions": p.leader is None or len(isr) < min_isr,
                "at-min-isr-partitions": len(isr) == min_isr,
                "unavailable-partitions": p.leader is None or p.leader.id not in live_brokers,
            }
            if reports and not any(selected[r] for r in reports):
                continue
            leader = p.leader.id if p.leader is not None else "none"
            print(
                f"\tTopic: {name}\tPartition: {p.id}\tLeader: {leader}\t"
                f"Replicas: {','.join(map(str, replicas))}\tIsr: {','.join(map(str, isr))}\t"
                "Elr: N/A\tLastKnownElr: N/A"
            )


def _alter(admin: Any, args: argparse.Namespace) -> None:
    NewPartitions = ck_module("confluent_kafka.admin").NewPartitions

    if args.topic not in _topic_names(
        admin, argparse.Namespace(exclude_internal=False, topic=None)
    ):
        if args.if_exists:
            return
        raise BrokerError(f"Topic '{args.topic}' does not exist as expected")
    wait(admin.create_partitions([NewPartitions(args.topic, args.partitions)])[args.topic])


def _delete(admin: Any, args: argparse.Namespace) -> None:
    if args.topic not in _topic_names(
        admin, argparse.Namespace(exclude_internal=False, topic=None)
    ):
        if args.if_exists:
            return
        raise BrokerError(f"Topic '{args.topic}' does not exist as expected")
    wait(admin.delete_topics([args.topic], operation_timeout=TIMEOUT)[args.topic])
