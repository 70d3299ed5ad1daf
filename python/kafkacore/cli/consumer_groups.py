# ruff: noqa: E501
"""``kafkacore consumer-groups``: Kafka's ``kafka-consumer-groups.sh`` (list/describe/delete
groups, list/alter/delete committed offsets): option parsing and Kafka's output over
:mod:`kafkacore.admin.groups`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkacore.admin import Admin
from kafkacore.admin import groups as ops
from kafkacore.cli.topics import BrokerError, add_common, admin_client, wire_sender

__all__ = ["register", "run"]

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
    admin = Admin(admin_client(args), wire_sender("kafkacore-consumer-groups"))
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


def _groups(admin: Admin, args: argparse.Namespace) -> list[str]:
    if args.all_groups:
        return [g.group_id for g in ops.list_groups(admin)]
    return list(args.group)


def _list(admin: Admin, args: argparse.Namespace) -> int:
    groups = ops.list_groups(admin)
    if args.state is None:
        for g in groups:
            print(g.group_id)
        return 0
    wanted = {s.strip().lower() for s in args.state.split(",") if s.strip()}
    rows = [(g.group_id, g.state) for g in groups if not wanted or g.state.lower() in wanted]
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


def _describe(admin: Admin, args: argparse.Namespace) -> int:
    groups = _groups(admin, args)
    status = 0
    for desc in ops.describe_groups(admin, groups):
        group = desc.group_id
        if (
            desc.state in ("Dead", "Unknown")
            and not desc.members
            and not ops.committed_offsets(admin, group)
        ):
            sys.stderr.write(f"Error: Consumer group '{group}' does not exist.\n")
            status = 1
            continue
        if not (args.members and args.state is None and not desc.members):
            print()
        if args.state is not None:
            _table(
                ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
                [[group, str(desc.coordinator), desc.assignor, desc.state, str(len(desc.members))]],
            )
            continue
        if args.members:
            rows = [
                [group, m.member_id, m.host, m.client_id, str(len(m.assignment))]
                for m in desc.members
            ]
            if not rows:
                sys.stderr.write(f"\nConsumer group '{group}' has no active members.\n")
                continue
            _table(["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"], rows)
            continue
        states = ops.partition_assignment_states(admin, desc)
        if not desc.members:
            sys.stderr.write(f"\nConsumer group '{group}' has no active members.\n")
        rows = []
        for p in states:
            m = p.member
            rows.append(
                [
                    group,
                    p.topic,
                    str(p.partition),
                    str(p.offset) if p.offset is not None else "-",
                    str(p.log_end_offset) if p.log_end_offset >= 0 else "-",
                    str(p.lag) if p.lag is not None else "-",
                    m.member_id if m else "-",
                    m.host if m else "-",
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


def _delete(admin: Admin, args: argparse.Namespace) -> int:
    groups = _groups(admin, args)
    failed = ops.delete_groups(admin, groups)
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


def _delete_offsets(admin: Admin, args: argparse.Namespace) -> int:
    from kafkacore.protocol import ErrorCode

    group = args.group[0]
    tps = ops.topic_partitions(admin, args.topic)
    result = ops.delete_offsets(admin, group, tps)
    errors = result.partitions
    # Like Kafka's AdminClient, a partition's error fails the whole request.
    top = result.error
    if top == ErrorCode.NONE:
        top = next((c for c in errors.values() if c != ErrorCode.NONE), top)
    topics = ", ".join(dict.fromkeys(t for t, _ in tps))
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
        code = errors.get(tp, top)
        status = (
            "Successful"
            if code == ErrorCode.NONE
            else "Error: " + ops.KAFKA_ERRORS.get(code.name, code.name)
        )
        rows.append([tp[0], str(tp[1]), status])
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


def reset_spec(args: argparse.Namespace) -> ops.ResetSpec:
    if args.to_earliest:
        return ops.ResetSpec("to-earliest")
    if args.to_latest:
        return ops.ResetSpec("to-latest")
    if args.to_current:
        return ops.ResetSpec("to-current")
    if args.to_offset is not None:
        return ops.ResetSpec("to-offset", args.to_offset)
    if args.shift_by is not None:
        return ops.ResetSpec("shift-by", args.shift_by)
    if args.to_datetime is not None:
        return ops.ResetSpec("to-datetime", _parse_datetime(args.to_datetime))
    return ops.ResetSpec("by-duration", _parse_duration(args.by_duration))


def _reset(admin: Admin, args: argparse.Namespace) -> None:
    group = args.group[0]
    targets = ops.reset_plan(
        admin, group, None if args.all_topics else list(args.topic), reset_spec(args)
    )
    if args.export:
        for (topic, partition), offset in targets.items():
            print(f"{topic},{partition},{offset}")
        return
    if args.execute:
        ops.execute_reset(admin, group, targets)
    elif not args.dry_run:
        print(
            "WARN: No action will be performed as the --execute option is missing. In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting."
        )
    sys.stdout.write(ops.reset_table(group, targets))
