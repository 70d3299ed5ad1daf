# ruff: noqa: E501
"""``kafkacore consumer-groups``: Kafka's ``kafka-consumer-groups.sh`` over confluent-kafka's
AdminClient (list/describe/delete groups, list/alter/delete committed offsets)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

from kafkacore.cli.topics import BrokerError, add_common, admin_client, error_text, wait

__all__ = [
    "ResetSpec",
    "execute_reset",
    "register",
    "reset_plan",
    "reset_spec",
    "reset_table",
    "run",
    "table_text",
]

PROG = "kafkacore consumer-groups"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "consumer-groups", prog=PROG, help="List, describe, delete and reset consumer groups."
    )
    add_common(parser)
    actions = parser.add_mutually_exclusive_group()
    for name in ("list", "describe", "delete", "delete-offsets", "reset-offsets"):
        actions.add_argument(f"--{name}", action="store_true")
    parser.add_argument("--group", action="append", default=[])
    parser.add_argument("--all-groups", action="store_true")
    parser.add_argument("--topic", action="append", default=[])
    parser.add_argument("--all-topics", action="store_true")
    parser.add_argument("--members", action="store_true")
    parser.add_argument("--offsets", action="store_true")
    parser.add_argument("--state", nargs="?", const="", default=None)
    parser.add_argument("--verbose", action="store_true")
    resets = parser.add_mutually_exclusive_group()
    resets.add_argument("--to-earliest", action="store_true")
    resets.add_argument("--to-latest", action="store_true")
    resets.add_argument("--to-current", action="store_true")
    resets.add_argument("--to-offset", type=int)
    resets.add_argument("--shift-by", type=int)
    resets.add_argument("--to-datetime")
    resets.add_argument("--by-duration")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--execute", action="store_true")
    parser.add_argument("--export", action="store_true")
    parser.set_defaults(run=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    from kafkacore.cli import UsageError

    if not (args.list or args.describe or args.delete or args.delete_offsets or args.reset_offsets):
        raise UsageError(
            PROG,
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets",
        )
    if (args.describe or args.delete or args.delete_offsets or args.reset_offsets) and not (
        args.group or args.all_groups
    ):
        raise UsageError(PROG, "Option --group or --all-groups is required")
    if args.delete_offsets and not args.topic:
        raise UsageError(PROG, "Option --topic is required with --delete-offsets")
    if args.reset_offsets:
        if not (args.topic or args.all_topics):
            raise UsageError(
                PROG, "One of the reset scopes should be defined: --all-topics, --topic."
            )
        specs = [
            args.to_earliest,
            args.to_latest,
            args.to_current,
            args.to_offset is not None,
            args.shift_by is not None,
            args.to_datetime is not None,
            args.by_duration is not None,
        ]
        if not any(specs):
            raise UsageError(
                PROG,
                "One of the reset specifications must be defined: --to-datetime, --by-duration, --to-earliest, --to-latest, --shift-by, --to-current, --to-offset.",
            )
    admin = admin_client(args)
    try:
        if args.list:
            return _list(admin, args)
        if args.describe:
            return _describe(admin, args)
        if args.delete:
            return _delete(admin, args)
        if args.delete_offsets:
            return _delete_offsets(admin, args)
        _reset(admin, args)
    except BrokerError as exc:
        sys.stderr.write(f"Error: Executing consumer group command failed due to {exc}\n")
        return 1
    return 0


def _listed(admin: Any) -> list[Any]:
    """The groups of every broker; a broker's error (in ``result.errors``, not raised by
    confluent-kafka) fails the command like Kafka's ``listConsumerGroups``."""
    result = wait(admin.list_consumer_groups(request_timeout=30))
    errors = list(getattr(result, "errors", None) or [])
    if errors:
        raise BrokerError("; ".join(error_text(e) for e in errors))
    return sorted(result.valid, key=lambda g: g.group_id)


def _groups(admin: Any, args: argparse.Namespace) -> list[str]:
    if args.all_groups:
        return [g.group_id for g in _listed(admin)]
    return list(args.group)


def _state_name(state: Any) -> str:
    name = str(getattr(state, "name", state))
    return {
        "PREPARING_REBALANCE": "PreparingRebalance",
        "COMPLETING_REBALANCE": "CompletingRebalance",
    }.get(name, name.title())


def _list(admin: Any, args: argparse.Namespace) -> int:
    groups = _listed(admin)
    if args.state is None:
        for g in groups:
            print(g.group_id)
        return 0
    wanted = {s.strip().lower() for s in args.state.split(",") if s.strip()}
    rows = [
        (g.group_id, _state_name(g.state))
        for g in groups
        if not wanted or _state_name(g.state).lower() in wanted
    ]
    _table(["GROUP", "STATE"], [list(r) for r in rows])
    return 0


def table_text(headers: list[str], rows: list[list[str]]) -> str:
    """The tool's table: columns as wide as their widest cell, one space apart."""
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    lines = [" ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in rows:
        lines.append(" ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines) + "\n"


def _table(headers: list[str], rows: list[list[str]]) -> None:
    sys.stdout.write(table_text(headers, rows))


def _committed(admin: Any, group: str) -> list[Any]:
    from kafkacore.cli.topics import ck_module

    ConsumerGroupTopicPartitions = ck_module("confluent_kafka").ConsumerGroupTopicPartitions

    futures = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=30
    )
    result = wait(futures[group])
    return [tp for tp in result.topic_partitions if tp.offset >= 0]


def _end_offsets(admin: Any, tps: list[Any], spec: Any = None) -> dict[tuple[str, int], int]:
    from kafkacore.cli.topics import ck_module

    TopicPartition = ck_module("confluent_kafka").TopicPartition
    from kafkacore.cli.topics import ck_module

    OffsetSpec = ck_module("confluent_kafka.admin").OffsetSpec

    if not tps:
        return {}
    spec = spec if spec is not None else OffsetSpec.latest()
    futures = admin.list_offsets(
        {TopicPartition(t.topic, t.partition): spec for t in tps}, request_timeout=30
    )
    return {(tp.topic, tp.partition): int(wait(f).offset) for tp, f in futures.items()}


def _describe(admin: Any, args: argparse.Namespace) -> int:
    groups = _groups(admin, args)
    descriptions = admin.describe_consumer_groups(groups, request_timeout=30)
    status = 0
    for group in groups:
        desc = wait(descriptions[group])
        state = _state_name(desc.state)
        if state in ("Dead", "Unknown") and not desc.members and not _committed(admin, group):
            sys.stderr.write(f"Error: Consumer group '{group}' does not exist.\n")
            status = 1
            continue
        if not (args.members and args.state is None and not desc.members):
            print()
        if args.state is not None:
            coord = desc.coordinator
            _table(
                ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
                [
                    [
                        group,
                        f"{coord.host}:{coord.port} ({coord.id})",
                        desc.partition_assignor or "",
                        state,
                        str(len(desc.members)),
                    ]
                ],
            )
            continue
        if args.members:
            rows = [
                [
                    group,
                    m.member_id,
                    "/" + m.host.lstrip("/"),
                    m.client_id,
                    str(len(m.assignment.topic_partitions) if m.assignment else 0),
                ]
                for m in desc.members
            ]
            if not rows:
                sys.stderr.write(f"\nConsumer group '{group}' has no active members.\n")
                continue
            _table(["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"], rows)
            continue
        owner: dict[tuple[str, int], Any] = {}
        for m in desc.members:
            for tp in m.assignment.topic_partitions if m.assignment else []:
                owner[(tp.topic, tp.partition)] = m
        committed = _committed(admin, group)
        keys = {(tp.topic, tp.partition): tp.offset for tp in committed}
        for key in owner:
            keys.setdefault(key, -1)
        from kafkacore.cli.topics import ck_module

        TopicPartition = ck_module("confluent_kafka").TopicPartition

        ends = _end_offsets(admin, [TopicPartition(t, p) for t, p in keys])
        if not desc.members:
            sys.stderr.write(f"\nConsumer group '{group}' has no active members.\n")
        rows = []
        for (topic, partition), offset in sorted(keys.items()):
            end = ends.get((topic, partition), -1)
            m = owner.get((topic, partition))
            rows.append(
                [
                    group,
                    topic,
                    str(partition),
                    str(offset) if offset >= 0 else "-",
                    str(end) if end >= 0 else "-",
                    str(end - offset) if offset >= 0 and end >= 0 else "-",
                    m.member_id if m else "-",
                    ("/" + m.host.lstrip("/")) if m else "-",
                    m.client_id if m else "-",
                ]
            )
        _table(
            [
                "GROUP",
                "TOPIC",
                "PARTITION",
                "CURRENT-OFFSET",
                "LOG-END-OFFSET",
                "LAG",
                "CONSUMER-ID",
                "HOST",
                "CLIENT-ID",
            ],
            rows,
        )
    return status


# Kafka's exception text for the group errors a delete commonly meets.
_KAFKA_ERRORS = {
    "GROUP_ID_NOT_FOUND": "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.",
    "NON_EMPTY_GROUP": "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.",
    "GROUP_SUBSCRIBED_TO_TOPIC": "The consumer group is actively subscribed to the topic.",
    "UNKNOWN_TOPIC_OR_PARTITION": "This server does not host this topic-partition.",
}


def _kafka_error(exc: BaseException) -> str:
    err = exc.args[0] if exc.args else None
    name = str(getattr(err, "name", lambda: "")()) if callable(getattr(err, "name", None)) else ""
    return _KAFKA_ERRORS.get(name, error_text(exc))


def _delete(admin: Any, args: argparse.Namespace) -> int:
    groups = _groups(admin, args)
    futures = admin.delete_consumer_groups(groups, request_timeout=30)
    failed: dict[str, str] = {}
    for group in groups:
        try:
            futures[group].result()
        except Exception as exc:  # confluent_kafka.KafkaException
            failed[group] = _kafka_error(exc)
    succeeded = [g for g in groups if g not in failed]
    if failed:
        sys.stderr.write("Error: Deletion of some consumer groups failed:\n")
        for group, reason in failed.items():
            print(f"* Group '{group}' could not be deleted due to: {reason}")
        if succeeded:
            print(
                "These consumer groups were deleted successfully: "
                + ", ".join(f"'{g}'" for g in succeeded)
            )
        return 1
    print(
        "Deletion of requested consumer groups ("
        + ", ".join(f"'{g}'" for g in groups)
        + ") was successful."
    )
    return 0


def _topic_partitions(admin: Any, topics: list[str]) -> list[Any]:
    from kafkacore.cli.topics import ck_module

    TopicPartition = ck_module("confluent_kafka").TopicPartition

    try:
        metadata = admin.list_topics(timeout=30)
    except Exception as exc:
        raise BrokerError(error_text(exc)) from None
    out: list[Any] = []
    for spec in topics:
        name, _, parts = spec.partition(":")
        if name not in metadata.topics:
            raise BrokerError(f"Topic '{name}' does not exist")
        ids = (
            [int(p) for p in parts.split(",")]
            if parts
            else sorted(metadata.topics[name].partitions)
        )
        out.extend(TopicPartition(name, p) for p in ids)
    return out


def _offset_delete_request(host: str, port: int, group: str, tps: list[Any]) -> Any:
    """OffsetDelete (API 47) sent to the group's coordinator: confluent-kafka's AdminClient
    has no ``delete_consumer_group_offsets`` (librdkafka's DeleteConsumerGroupOffsets is not
    exposed), so the request is made with kafkacore's own protocol codec."""
    from kafkacore.cli._wire import call
    from kafkacore.net import ConnectionClosed
    from kafkacore.protocol import APIS_BY_NAME, ApiKey

    api = APIS_BY_NAME["OffsetDelete"]
    cls: Any = api.request.cls
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    request = cls(
        group_id=group,
        topics=[
            cls.OffsetDeleteRequestTopic(
                name=name,
                partitions=[cls.OffsetDeleteRequestPartition(partition_index=p) for p in parts],
            )
            for name, parts in by_topic.items()
        ],
    )
    try:
        return call(
            host,
            port,
            ApiKey(api.key),
            0,
            request,
            client_id="kafkacore-consumer-groups",
            timeout_s=30,
        )
    except ConnectionClosed:
        raise BrokerError("connection closed by the coordinator") from None
    except OSError as exc:
        raise BrokerError(f"coordinator {host}:{port}: {exc}") from None


def _delete_offsets(admin: Any, args: argparse.Namespace) -> int:
    from kafkacore.protocol import ErrorCode

    group = args.group[0]
    tps = _topic_partitions(admin, args.topic)
    desc = wait(admin.describe_consumer_groups([group], request_timeout=30)[group])
    coord = desc.coordinator
    response = _offset_delete_request(coord.host, coord.port, group, tps)
    errors = {
        (t.name, p.partition_index): ErrorCode(p.error_code)
        for t in response.topics
        for p in t.partitions
    }
    # Like Kafka's AdminClient, a partition's error fails the whole request.
    top = ErrorCode(response.error_code)
    if top == ErrorCode.NONE:
        top = next((c for c in errors.values() if c != ErrorCode.NONE), top)
    topics = ", ".join(dict.fromkeys(tp.topic for tp in tps))
    if top == ErrorCode.NONE:
        print(f"Request succeed for deleting offsets with topic {topics} group {group}")
    else:
        message = {
            "INVALID_GROUP_ID": f"'{group}' is not valid.",
            "GROUP_ID_NOT_FOUND": f"'{group}' does not exist.",
            "GROUP_AUTHORIZATION_FAILED": f"Access to '{group}' is not authorized.",
            "NON_EMPTY_GROUP": f"Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty.",
            "GROUP_SUBSCRIBED_TO_TOPIC": "Encounter some partition level error, see the follow-up details:",
            "TOPIC_AUTHORIZATION_FAILED": "Encounter some partition level error, see the follow-up details:",
            "UNKNOWN_TOPIC_OR_PARTITION": "Encounter some partition level error, see the follow-up details:",
        }.get(top.name, f"Encounter some unknown error: {top.name}")
        sys.stderr.write(f"Error: {message}\n")
    rows = []
    for tp in tps:
        code = errors.get((tp.topic, tp.partition), top)
        status = (
            "Successful"
            if code == ErrorCode.NONE
            else "Error: " + _KAFKA_ERRORS.get(code.name, code.name)
        )
        rows.append([tp.topic, str(tp.partition), status])
    if top == ErrorCode.NONE or errors:
        _table(["TOPIC", "PARTITION", "STATUS"], rows)
    return 0 if top == ErrorCode.NONE else 1


def _parse_duration(text: str) -> int:
    import re

    m = re.fullmatch(r"(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", text)
    if not m:
        raise BrokerError(f"Invalid duration: {text}")
    sign, d, h, mi, s = m.groups()
    ms = int((int(d or 0) * 86400 + int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0)) * 1000)
    return -ms if sign else ms


def _parse_datetime(text: str) -> int:
    from datetime import datetime, timezone

    for fmt in ("%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S"):
        try:
            value = datetime.strptime(text, fmt)
        except ValueError:
            continue
        if value.tzinfo is None:
            value = value.astimezone()
        return int(value.astimezone(timezone.utc).timestamp() * 1000)
    raise BrokerError(f"Error parsing timestamp {text}: expected yyyy-MM-ddTHH:mm:SS.sss")


@dataclass(frozen=True)
class ResetSpec:
    """One of the tool's reset specifications: ``kind`` is ``to-earliest``, ``to-latest``,
    ``to-current``, ``to-offset`` (``value``: the offset), ``shift-by`` (``value``: the
    shift), ``to-datetime`` (``value``: epoch ms) or ``by-duration`` (``value``: ms)."""

    kind: str
    value: int = 0


def reset_spec(args: argparse.Namespace) -> ResetSpec:
    if args.to_earliest:
        return ResetSpec("to-earliest")
    if args.to_latest:
        return ResetSpec("to-latest")
    if args.to_current:
        return ResetSpec("to-current")
    if args.to_offset is not None:
        return ResetSpec("to-offset", args.to_offset)
    if args.shift_by is not None:
        return ResetSpec("shift-by", args.shift_by)
    if args.to_datetime is not None:
        return ResetSpec("to-datetime", _parse_datetime(args.to_datetime))
    return ResetSpec("by-duration", _parse_duration(args.by_duration))


def reset_plan(admin: Any, group: str, topics: list[str] | None, spec: ResetSpec) -> list[Any]:
    """The new offsets (confluent-kafka ``TopicPartition`` with ``offset``) a reset of
    ``group`` would commit: over ``topics`` (``topic`` or ``topic:p,q`` specs) or, when
    None, every partition the group has an offset for (``--all-topics``); each clamped to
    [earliest, latest], as Kafka's tool does."""
    import time

    from kafkacore.cli.topics import ck_module

    TopicPartition = ck_module("confluent_kafka").TopicPartition
    OffsetSpec = ck_module("confluent_kafka.admin").OffsetSpec

    committed = {(tp.topic, tp.partition): tp.offset for tp in _committed(admin, group)}
    if topics is None:
        tps = [TopicPartition(t, p) for t, p in sorted(committed)]
    else:
        tps = _topic_partitions(admin, topics)
    earliest = _end_offsets(admin, tps, OffsetSpec.earliest())
    latest = _end_offsets(admin, tps, OffsetSpec.latest())
    by_time: dict[tuple[str, int], int] = {}
    if spec.kind in ("to-datetime", "by-duration"):
        ts = spec.value if spec.kind == "to-datetime" else int(time.time() * 1000) - spec.value
        by_time = _end_offsets(admin, tps, OffsetSpec.for_timestamp(ts))
    targets = []
    for tp in tps:
        key = (tp.topic, tp.partition)
        lo, hi = earliest.get(key, 0), latest.get(key, 0)
        current = committed.get(key, lo)
        if spec.kind == "to-earliest":
            target = lo
        elif spec.kind == "to-latest":
            target = hi
        elif spec.kind == "to-current":
            target = current
        elif spec.kind == "to-offset":
            target = spec.value
        elif spec.kind == "shift-by":
            target = current + spec.value
        else:
            target = by_time.get(key, -1)
            target = hi if target < 0 else target
        target = min(max(target, lo), hi)
        targets.append(TopicPartition(tp.topic, tp.partition, target))
    return targets


def reset_table(group: str, targets: list[Any]) -> str:
    """What the tool prints for a reset (dry run or executed), as Kafka's
    ``printOffsetsToReset``: each line starts with a line break, the group and topic
    columns are at least 15 wide, the partition column 10, the partitions in the order
    of Java's ``HashMap``; a line break at the end."""
    from kafkacore.cli.reassign import _java_tp_hash, java_set_order

    if not targets:
        return "\n"
    group_width = max(15, len(group))
    topic_width = max(15, *(len(tp.topic) for tp in targets))

    def line(*cells: object) -> str:
        g, t, p, o = (str(c) for c in cells)
        return f"\n{g.ljust(group_width)} {t.ljust(topic_width)} {p.ljust(10)} {o}"

    offsets = {(tp.topic, tp.partition): tp.offset for tp in targets}
    order = java_set_order(offsets, _java_tp_hash)
    lines = [line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
    lines.extend(line(group, t, p, offsets[(t, p)]) for t, p in order)
    return "".join(lines) + "\n"


def execute_reset(admin: Any, group: str, targets: list[Any]) -> None:
    """Commit ``targets`` for ``group`` (AlterConsumerGroupOffsets; the group must have
    no active members)."""
    from kafkacore.cli.topics import ck_module

    ConsumerGroupTopicPartitions = ck_module("confluent_kafka").ConsumerGroupTopicPartitions
    futures = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, targets)], request_timeout=30
    )
    wait(futures[group])


def _reset(admin: Any, args: argparse.Namespace) -> None:
    group = args.group[0]
    targets = reset_plan(
        admin, group, None if args.all_topics else list(args.topic), reset_spec(args)
    )
    if args.export:
        for tp in targets:
            print(f"{tp.topic},{tp.partition},{tp.offset}")
        return
    if args.execute:
        execute_reset(admin, group, targets)
    elif not args.dry_run:
        print(
            "WARN: No action will be performed as the --execute option is missing. In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting."
        )
    sys.stdout.write(reset_table(group, targets))
