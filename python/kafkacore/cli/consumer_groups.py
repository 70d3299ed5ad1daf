# ruff: noqa: E501
"""``kafkacore consumer-groups``: Kafka 4.3.1's ``kafka-consumer-groups.sh`` (list with
types and states, describe offsets, members and state, with ``--verbose``, delete groups,
delete and reset committed offsets, validate a regular expression) for classic and
consumer (KIP-848) groups: option parsing and Kafka's output, byte for byte, over
:mod:`kafkacore.admin.groups`.

Kafka's tool prints its errors on stdout (``\\nError: ...``) and exits 0; this one prints
the same text and exits 1. Java's stack traces are not printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from kafkacore._java import java_length
from kafkacore.admin import Admin
from kafkacore.admin import groups as ops
from kafkacore.admin.ordering import partition_set_order, string_set_order
from kafkacore.cli.topics import BrokerError, add_common, admin_client, wire_sender

__all__ = ["register", "run"]

PROG = "kafkacore consumer-groups"
MISSING = "-"
ACTIONS = ("list", "describe", "delete", "reset-offsets", "delete-offsets", "validate-regex")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "consumer-groups", prog=PROG, help="List, describe, delete and reset consumer groups."
    )
    add_common(parser)
    actions = parser.add_mutually_exclusive_group()
    for name in ("list", "describe", "delete", "delete-offsets", "reset-offsets"):
        actions.add_argument(f"--{name}", action="store_true")
    actions.add_argument("--validate-regex", metavar="REGEX")
    parser.add_argument("--group", action="append", default=[])
    parser.add_argument("--all-groups", action="store_true")
    parser.add_argument("--topic", action="append", default=[])
    parser.add_argument("--all-topics", action="store_true")
    parser.add_argument("--members", action="store_true")
    parser.add_argument("--offsets", action="store_true")
    parser.add_argument("--state", nargs="?", const="", default=None)
    parser.add_argument("--type", nargs="?", const="", default=None)
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

    if args.validate_regex is not None:
        return _validate_regex(args.validate_regex)
    if not (args.list or args.describe or args.delete or args.delete_offsets or args.reset_offsets):
        raise UsageError(
            PROG,
            "Command must include exactly one action: "
            + ", ".join(f"--{name}" for name in ACTIONS),
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
    states = _states(args.state) if args.list else []
    types = _types(args.type) if args.list else []
    admin = Admin(admin_client(args), wire_sender("kafkacore-consumer-groups"))
    try:
        if args.list:
            return _list(admin, args, states, types)
        if args.describe:
            return _describe(admin, args)
        if args.delete:
            return _delete(admin, args)
        if args.delete_offsets:
            return _delete_offsets(admin, args)
        return _reset(admin, args)
    except BrokerError as exc:
        _error(f"Executing consumer group command failed due to {exc}")
        return 1


def _error(message: str) -> None:
    """Kafka's ``printError``: a line break and ``Error: ...`` on stdout."""
    sys.stdout.write(f"\nError: {message}\n")


def _pad(text: str, width: int) -> str:
    """Java's ``%-<width>s``."""
    return text + " " * (width - java_length(text))


def _line(cells: Sequence[tuple[str, int]], last: str | None = None) -> str:
    """Cells left-justified to their widths, one space apart; ``last`` unpadded."""
    text = " ".join(_pad(c, w) for c, w in cells)
    return text if last is None else f"{text} {last}" if cells else last


def _validate_regex(regex: str) -> int:
    from kafkacore.coordinator.topic_regex import InvalidTopicRegex, compile_topic_regex

    try:
        compile_topic_regex(regex)
    except InvalidTopicRegex as exc:
        print(f"The regular expression `{regex}` is invalid: {exc.description}.")
        return 1
    print(f"The regular expression `{regex}` is valid.")
    return 0


def _states(value: str | None) -> list[str]:
    """``--state``'s list as Kafka parses it (``GroupState.parse`` of each, any case),
    checked against the states of consumer groups."""
    from kafkacore.cli import UsageError

    if not value:
        return []
    parsed = [
        next((s for s in ops.GROUP_STATES if s.upper() == part.strip().upper()), "Unknown")
        for part in value.split(",")
    ]
    if any(s not in ops.CONSUMER_GROUP_STATES for s in parsed):
        raise UsageError(
            PROG,
            f"Invalid state list '{value}'. Valid states are: "
            + ", ".join(ops.CONSUMER_GROUP_STATES),
        )
    return list(dict.fromkeys(parsed))


def _types(value: str | None) -> list[str]:
    """``--type``'s list as Kafka parses it: ``classic`` and ``consumer``, any case."""
    from kafkacore.cli import UsageError

    if not value:
        return []
    parsed = [ops.type_name(part.strip()) for part in value.lower().split(",")]
    if any(t not in ("Classic", "Consumer") for t in parsed):
        raise UsageError(PROG, f"Invalid types list '{value}'. Valid types are: Classic, Consumer")
    return list(dict.fromkeys(parsed))


def _groups(admin: Admin, args: argparse.Namespace) -> list[str]:
    if args.all_groups:
        return [g.group_id for g in ops.list_groups(admin)]
    return list(args.group)


def _list(admin: Admin, args: argparse.Namespace, states: list[str], types: list[str]) -> int:
    include_type = args.type is not None
    include_state = args.state is not None
    if not (include_type or include_state):
        try:
            groups = ops.list_groups(admin)
        except BrokerError as exc:  # Kafka wraps this one's ExecutionException once more
            raise BrokerError(f"java.util.concurrent.ExecutionException: {exc}") from None
        for g in groups:
            print(g.group_id)
        return 0
    listings = ops.list_groups(admin, states=states, types=types)
    width = max((max(15, java_length(g.group_id)) for g in listings), default=15) + 10
    columns: list[tuple[str, Callable[[ops.GroupListing], str]]] = [("GROUP", lambda g: g.group_id)]
    if include_type:
        columns.append(("TYPE", lambda g: g.type))
    if include_state:
        columns.append(("STATE", lambda g: g.state))
    widths = [width] + [20] * (len(columns) - 1)
    out = [_line(list(zip([c for c, _ in columns], widths, strict=True)))]
    for g in listings:
        out.append(_line([(f(g), w) for (_, f), w in zip(columns, widths, strict=True)]))
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


def _member_state(group: str, state: str, rows: int | None) -> bool:
    """Kafka's ``shouldPrintMemberState``: what the tool says of the group's state before
    its table, and whether there is a table to print."""
    if rows is None:
        _error(f"The consumer group '{group}' does not exist.")
        return False
    if state == "Dead":
        _error(f"Consumer group '{group}' does not exist.")
    elif state == "Empty":
        sys.stderr.write(f"\nConsumer group '{group}' has no active members.\n")
    elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
        sys.stderr.write(f"\nWarning: Consumer group '{group}' is rebalancing.\n")
    elif state != "Stable":
        raise BrokerError(f"Expected a valid consumer group state, but found '{state}'.")
    return state != "Dead" and rows > 0


def _describe(admin: Admin, args: argparse.Namespace) -> int:
    groups = _groups(admin, args)
    descriptions = {d.group_id: d for d in ops.describe_groups(admin, groups)}
    for group in sorted(descriptions):
        desc = descriptions[group]
        if args.offsets or not (args.members or args.state is not None):
            _print_offsets(admin, desc, args.verbose)
        elif args.members:
            _print_members(desc, args.verbose)
        else:
            _print_state(desc, args.verbose)
    return 0


def _opt(value: object) -> str:
    return MISSING if value is None else str(value)


def _print_offsets(admin: Admin, desc: ops.GroupDescription, verbose: bool) -> None:
    rows = ops.partition_assignment_states(admin, desc)
    if not _member_state(desc.group_id, desc.state, len(rows)):
        return
    group_w = max([15, *(java_length(desc.group_id) for _ in rows)])
    topic_w = max([15, *(java_length(r.topic) for r in rows)])
    member_w = max([15, *(java_length(r.member.member_id if r.member else MISSING) for r in rows)])
    host_w = max([15, *(java_length(r.member.host if r.member else MISSING) for r in rows)])

    def line(cells: list[str]) -> str:
        widths = [group_w, topic_w, 10] + [15] * (len(cells) - 6) + [member_w, host_w]
        return "\n" + _line(list(zip(cells[:-1], widths, strict=True)), cells[-1])

    header = ["GROUP", "TOPIC", "PARTITION"]
    header += ["LEADER-EPOCH"] if verbose else []
    header += ["CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
    out = [line(header)]
    for r in rows:
        m = r.member
        cells = [desc.group_id, r.topic, str(r.partition)]
        cells += [_opt(r.leader_epoch)] if verbose else []
        cells += [
            _opt(r.offset),
            _opt(r.log_end_offset if r.log_end_offset >= 0 else None),
            _opt(r.lag),
            m.member_id if m else MISSING,
            m.host if m else MISSING,
            m.client_id if m else MISSING,
        ]
        out.append(line(cells))
    sys.stdout.write("".join(out) + "\n")


def assignment_text(partitions: Sequence[tuple[str, int]] | None) -> str:
    """Kafka's ``getAssignmentString``: ``topic:0,1;topic2:3``, each topic's partitions
    in order, the topics' texts sorted; ``-`` for none."""
    if not partitions:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return ";".join(
        sorted(f"{t}:" + ",".join(str(p) for p in sorted(ps)) for t, ps in by_topic.items())
    )


def _print_members(desc: ops.GroupDescription, verbose: bool) -> None:
    members = desc.members
    show = _member_state(desc.group_id, desc.state, len(members))
    group_w = member_w = host_w = client_w = 15
    instance_w = 17
    current_w = target_w = 20
    with_instance = classic = consumer = False
    if show:
        for m in members:
            group_w = max(group_w, java_length(desc.group_id))
            member_w = max(member_w, java_length(m.member_id))
            instance_w = max(instance_w, java_length(m.group_instance_id or ""))
            host_w = max(host_w, java_length(m.host))
            client_w = max(client_w, java_length(m.client_id))
            with_instance = with_instance or bool(m.group_instance_id)
            current_w = max(current_w, java_length(assignment_text(m.assignment)))
            target_w = max(target_w, java_length(assignment_text(m.target_assignment)))
            classic = classic or m.upgraded is False
            consumer = consumer or m.upgraded is True
    migrating = classic and consumer

    def line(member: list[str], extra: list[str]) -> str:
        widths = [group_w, member_w] + ([instance_w] if with_instance else [])
        widths += [host_w, client_w, 15]
        text = "".join(_pad(c, w) + " " for c, w in zip(member, widths, strict=True))
        if verbose:
            cells = list(zip(extra[:4], [15, current_w, 15, target_w], strict=True))
            text += _line(cells, extra[4] if migrating else None)
        return text

    head = ["GROUP", "CONSUMER-ID"] + (["GROUP-INSTANCE-ID"] if with_instance else [])
    head += ["HOST", "CLIENT-ID", "#PARTITIONS"]
    out = [
        "\n"
        + line(
            head,
            [
                "CURRENT-EPOCH",
                "CURRENT-ASSIGNMENT",
                "TARGET-EPOCH",
                "TARGET-ASSIGNMENT",
                "UPGRADED",
            ],
        )
    ]
    for m in members:
        cells = [desc.group_id, m.member_id] + (
            [m.group_instance_id or ""] if with_instance else []
        )
        cells += [m.host, m.client_id, str(len(m.assignment))]
        extra = [
            _opt(m.member_epoch),
            assignment_text(m.assignment),
            _opt(desc.target_assignment_epoch),
            assignment_text(m.target_assignment),
            "true" if m.upgraded else "false" if m.upgraded is False else MISSING,
        ]
        out.append(line(cells, extra))
    sys.stdout.write("".join(text + "\n" for text in out))


def _print_state(desc: ops.GroupDescription, verbose: bool) -> None:
    if not _member_state(desc.group_id, desc.state, 1):
        return
    node = desc.coordinator
    coordinator = f"{node.host}:{node.port}  ({node.id})" if node else MISSING
    group_w = max(15, java_length(desc.group_id))
    coordinator_w = max(25, java_length(coordinator))
    head: list[tuple[str, int]] = [
        ("GROUP", group_w),
        ("COORDINATOR (ID)", coordinator_w),
        ("ASSIGNMENT-STRATEGY", 20),
        ("STATE", 20),
    ]
    row = [
        (desc.group_id, group_w),
        (coordinator, coordinator_w),
        (desc.assignor or MISSING, 20),
        (desc.state, 20),
    ]
    if verbose:
        head += [("GROUP-EPOCH", 15), ("TARGET-ASSIGNMENT-EPOCH", 25)]
        row += [(_opt(desc.group_epoch), 15), (_opt(desc.target_assignment_epoch), 25)]
    text = "\n" + _line(head, "#MEMBERS") + "\n" + _line(row, str(len(desc.members)))
    sys.stdout.write(text + "\n")


def _delete(admin: Admin, args: argparse.Namespace) -> int:
    groups = _groups(admin, args)
    failed = ops.delete_groups(admin, groups)
    succeeded = [g for g in groups if g not in failed]
    if failed:
        _error("Deletion of some consumer groups failed:")
        for group in string_set_order(failed):
            print(f"* Group '{group}' could not be deleted due to: {failed[group]}")
        if succeeded:
            print(
                "\nThese consumer groups were deleted successfully: "
                + ", ".join(f"'{g}'" for g in string_set_order(succeeded))
            )
        return 1
    print(
        "Deletion of requested consumer groups ("
        + ", ".join(f"'{g}'" for g in string_set_order(groups))
        + ") was successful."
    )
    return 0


def _delete_offsets(admin: Admin, args: argparse.Namespace) -> int:
    from kafkacore.admin.cluster import exception_text
    from kafkacore.protocol import ErrorCode
    from kafkacore.protocol.errors import message

    group = args.group[0]
    results: dict[tuple[str, int], str | None] = {}
    tps: list[tuple[str, int]] = []
    for spec in dict.fromkeys(args.topic):
        topic, _, partitions = spec.partition(":")
        if partitions:
            tps.extend((topic, int(p)) for p in partitions.split(","))
            continue
        try:
            tps.extend(ops.topic_partitions(admin, [spec]))
        except BrokerError:
            # Kafka's DescribeTopics of a missing topic: an error row without a partition
            results[(spec, -1)] = exception_text(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    result = ops.delete_offsets(admin, group, list(dict.fromkeys(tps)))
    top = result.error
    if top == ErrorCode.NONE:
        # Like Kafka's AdminClient, a partition's error fails the whole request.
        top = next((c for c in result.partitions.values() if c != ErrorCode.NONE), top)
    for tp in tps:
        code = result.partitions.get(tp, result.error)
        results[tp] = None if code == ErrorCode.NONE else exception_text(code)
    if top == ErrorCode.NONE:
        print(f"Request succeeded for deleting offsets from group {group}.")
    elif top in (
        ErrorCode.INVALID_GROUP_ID,
        ErrorCode.GROUP_ID_NOT_FOUND,
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        ErrorCode.NON_EMPTY_GROUP,
    ):
        _error(message(top) or top.name)
    elif top in (
        ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ):
        _error("Encountered some partition-level error, see the follow-up details.")
    else:
        _error(f"Encountered some unknown error: {top.name}")
    topic_w = max([15, *(java_length(t) for t, _ in results)])
    out = ["\n" + _line([("TOPIC", topic_w), ("PARTITION", 10), ("STATUS", 15)])]
    for (topic, partition), error in sorted(results.items(), key=lambda e: f"{e[0][0]}{e[0][1]}"):
        status = "Successful" if error is None else f"Error: {error}"
        cells = [(topic, topic_w), (str(partition) if partition >= 0 else MISSING, 10)]
        out.append("\n" + _line([*cells, (status, 15)]))
    sys.stdout.write("".join(out) + "\n")
    return 0 if top == ErrorCode.NONE and all(e is None for e in results.values()) else 1


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


def _reset(admin: Admin, args: argparse.Namespace) -> int:
    from kafkacore.protocol import ErrorCode

    group = args.group[0]
    if not (args.dry_run or args.execute):
        sys.stderr.write(
            "WARN: No action will be performed as the --execute option is missing. In version 5.0, this command will require either --dry-run or --execute to be specified. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.\n"
        )
    try:
        state = next(ops.describe_groups(admin, [group])).state
    except ops.GroupError as exc:
        if exc.code != ErrorCode.GROUP_ID_NOT_FOUND:
            raise
        state = "Dead"
    if state not in ("Empty", "Dead"):
        _error(
            f"Assignments can only be reset if the group '{group}' is inactive, but the current state is {state}."
        )
        sys.stdout.write(ops.reset_table(group, {}))
        return 1
    try:
        targets = ops.reset_plan(
            admin, group, None if args.all_topics else list(args.topic), reset_spec(args), print
        )
    except ValueError as exc:
        from kafkacore.cli import UsageError

        raise UsageError(PROG, str(exc)) from None
    if args.execute and not args.dry_run:
        ops.execute_reset(admin, group, targets)
    if args.export:
        # Kafka's CSV (one group: topic,partition,offset), the partitions in its HashMap's
        # order, and println's line break after the last line's own
        for topic, partition in partition_set_order(targets):
            print(f"{topic},{partition},{targets[(topic, partition)]}")
        print()
        return 0
    sys.stdout.write(ops.reset_table(group, targets))
    return 0
