"""``kafkacore reassign-partitions``: Kafka's ``kafka-reassign-partitions.sh`` (3.9's
``ReassignPartitionsCommand``): the same options, JSON files and output, printed over the
operations of :mod:`kafkacore.admin.reassign`.

confluent-kafka's AdminClient has no AlterPartitionReassignments /
ListPartitionReassignments, so those two requests are sent to the controller with
kafkacore's own protocol codec (:func:`kafkacore.cli.topics.wire_sender`); everything else
(metadata, DescribeCluster, IncrementalAlterConfigs for the throttles) goes through the
AdminClient.

Moving replicas between log directories (``log_dirs`` other than ``"any"``) is not
supported (the broker has no AlterReplicaLogDirs yet) and is refused.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkacore.admin import Admin
from kafkacore.admin import reassign as ops
from kafkacore.admin.throttles import clear_all_throttles
from kafkacore.cli.topics import BrokerError, add_common, admin_client, wire_sender

__all__ = ["register", "run"]

PROG = "kafkacore reassign-partitions"
CLIENT_ID = "reassign-partitions-tool"

_ACTIONS = ("generate", "execute", "verify", "cancel", "list")


# --- arguments -----------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reassign-partitions",
        prog=PROG,
        help="Move partition replicas between brokers (kafka-reassign-partitions).",
    )
    add_common(parser)
    for action in _ACTIONS:
        parser.add_argument(f"--{action}", action="store_true")
    parser.add_argument("--reassignment-json-file", metavar="FILE")
    parser.add_argument("--topics-to-move-json-file", metavar="FILE")
    parser.add_argument("--broker-list", metavar="IDS")
    parser.add_argument("--disable-rack-aware", action="store_true")
    parser.add_argument("--throttle", type=int, default=None, metavar="BYTES_PER_S")
    parser.add_argument(
        "--replica-alter-log-dirs-throttle", type=int, default=None, metavar="BYTES_PER_S"
    )
    parser.add_argument("--timeout", type=int, default=None, metavar="MS")
    parser.add_argument("--additional", action="store_true")
    parser.add_argument("--preserve-throttles", action="store_true")
    parser.set_defaults(run=run, prog=PROG)


_REQUIRED = {
    "verify": ("reassignment_json_file",),
    "generate": ("topics_to_move_json_file", "broker_list"),
    "execute": ("reassignment_json_file",),
    "cancel": ("reassignment_json_file",),
    "list": (),
}
_PERMITTED = {
    "verify": ("preserve_throttles",),
    "generate": ("disable_rack_aware",),
    "execute": ("additional", "throttle", "replica_alter_log_dirs_throttle", "timeout"),
    "cancel": ("preserve_throttles", "timeout"),
    "list": (),
}
_OPTIONS = (
    "reassignment_json_file",
    "topics_to_move_json_file",
    "broker_list",
    "disable_rack_aware",
    "throttle",
    "replica_alter_log_dirs_throttle",
    "timeout",
    "additional",
    "preserve_throttles",
)


def _validate(args: argparse.Namespace) -> str:
    from kafkacore.cli import UsageError

    chosen = [a for a in _ACTIONS if getattr(args, a)]
    if len(chosen) != 1:
        raise UsageError(
            PROG,
            "Command must include exactly one action: " + ", ".join(f"--{a}" for a in _ACTIONS),
        )
    action = chosen[0]
    if not args.bootstrap_server:
        raise UsageError(PROG, "Please specify either --bootstrap-server or --bootstrap-controller")
    for name in _REQUIRED[action]:
        if getattr(args, name) in (None, False):
            raise UsageError(PROG, f'Missing required argument "[{name.replace("_", "-")}]"')
    for name in _OPTIONS:
        value = getattr(args, name)
        if value not in (None, False) and name not in _REQUIRED[action] + _PERMITTED[action]:
            raise UsageError(
                PROG,
                f'Option "[{name.replace("_", "-")}]" can\'t be used with action "[{action}]"',
            )
    return action


def _read(path: str) -> str:
    from kafkacore.cli import UsageError

    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(PROG, f"cannot read {path}: {exc.strerror}") from None


def run(args: argparse.Namespace) -> int:
    action = _validate(args)
    admin = Admin(admin_client(args), wire_sender(CLIENT_ID))
    try:
        if action == "verify":
            targets = ops.parse_reassignment_json(_read(args.reassignment_json_file))
            ops.verify_assignment(
                admin, targets, preserve_throttles=args.preserve_throttles, emit=print
            )
        elif action == "generate":
            _generate(admin, args)
        elif action == "execute":
            ops.execute_assignment(
                admin,
                ops.parse_reassignment_json(_read(args.reassignment_json_file)),
                additional=args.additional,
                throttle=-1 if args.throttle is None else args.throttle,
                log_dir_throttle=(
                    -1
                    if args.replica_alter_log_dirs_throttle is None
                    else args.replica_alter_log_dirs_throttle
                ),
                emit=print,
            )
        elif action == "cancel":
            _cancel(admin, args)
        else:
            print(ops.ongoing_reassignments_text(ops.list_reassignments(admin)))
    except ops.ReassignmentRefused as exc:  # Kafka's TerseException: the message only
        print(exc)
        return 1
    except BrokerError as exc:
        print(f"Error: {exc}")
        return 1
    sys.stdout.flush()
    return 0


def _generate(admin: Admin, args: argparse.Namespace) -> None:
    text = _read(args.topics_to_move_json_file)
    # the broker list is checked before the topics are read, as Kafka's tool does
    brokers = ops.parse_broker_list(args.broker_list)
    current, proposed = ops.generate_assignment(
        admin, ops.parse_topics_json(text), brokers, not args.disable_rack_aware
    )
    print(f"Current partition replica assignment\n{ops.format_reassignment_json(current)}\n")
    print(
        f"Proposed partition reassignment configuration\n{ops.format_reassignment_json(proposed)}"
    )


def _cancel(admin: Admin, args: argparse.Namespace) -> None:
    targets = ops.parse_reassignment_json(_read(args.reassignment_json_file))
    print(ops.cancelled_text(ops.cancel_assignment(admin, targets)))
    # Kafka prints this one without a line break
    sys.stdout.write("None of the specified partition moves are active.")
    if not args.preserve_throttles:
        clear_all_throttles(admin, targets, print)
