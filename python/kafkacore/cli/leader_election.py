"""``kafkacore leader-election``: Kafka's ``kafka-leader-election.sh``
(``LeaderElectionCommand``): the same options, JSON file and output lines.

Option parsing and printing over :mod:`kafkacore.admin.elections` (ElectLeaders v1 to the
controller, with kafkacore's own codec, so the broker's error messages reach the output as
Kafka's AdminClient reports them; the partition sets in Kafka's ``HashSet`` order).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafkacore.admin import TP, Admin
from kafkacore.admin.elections import ElectionType, elect_leaders, election_lines
from kafkacore.cli.topics import BrokerError, admin_client, wire_sender

__all__ = ["register", "run"]

PROG = "kafkacore leader-election"
_CLIENT_ID = "reassign-partitions-tool"


class _Failed(Exception):
    """Kafka's ``AdminCommandFailedException``: the message on stderr, exit status 1."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "leader-election",
        prog=PROG,
        help="Preferred or unclean leader election (kafka-leader-election).",
    )
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT")
    parser.add_argument("--admin.config", dest="admin_config", metavar="FILE")
    parser.add_argument("--command-config", metavar="FILE")
    parser.add_argument("--path-to-json-file", metavar="FILE")
    parser.add_argument("--topic")
    parser.add_argument("--partition", type=int)
    parser.add_argument("--all-topic-partitions", action="store_true")
    parser.add_argument("--election-type", metavar="PREFERRED|UNCLEAN")
    parser.set_defaults(run=run, prog=PROG)


def _validate(args: argparse.Namespace) -> ElectionType:
    missing = [
        name
        for name, value in (
            ("bootstrap-server", args.bootstrap_server),
            ("election-type", args.election_type),
        )
        if value is None
    ]
    if missing:
        raise _Failed("Missing required option(s): " + ", ".join(missing))
    kind = ElectionType.__members__.get(args.election_type.upper())
    if kind is None:
        raise _Failed(f"Value for argument election-type not recognized: {args.election_type}")
    if args.admin_config and args.command_config:
        raise _Failed("Option admin.config can't be used with command-config")
    chosen = [args.topic is not None, args.all_topic_partitions, args.path_to_json_file is not None]
    if sum(chosen) != 1:
        raise _Failed(
            "One and only one of the following options is required: "
            "topic, all-topic-partitions, path-to-json-file"
        )
    if args.topic is not None and args.partition is None:
        raise _Failed("Missing required option(s): partition")
    if args.topic is None and args.partition is not None:
        raise _Failed("Option partition is only allowed if topic is used")
    return kind


def parse_election_json(text: str) -> list[TP]:
    try:
        js = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Failed(f"Replica election data is not valid JSON: {exc}") from None
    if not isinstance(js, dict) or "partitions" not in js:
        raise _Failed('Replica election data is missing "partitions" field')
    out: list[TP] = [(str(e["topic"]), int(e["partition"])) for e in js["partitions"]]
    dups = {tp for tp in out if out.count(tp) > 1}
    if dups:
        raise _Failed(
            "Replica election data contains duplicate partitions: ["
            + ", ".join(f"{t}-{p}" for t, p in sorted(dups))
            + "]"
        )
    return out


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except _Failed as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except BrokerError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1


def _run(args: argparse.Namespace) -> int:
    kind = _validate(args)
    if args.admin_config:
        print(
            "Option --admin.config has been deprecated and will be removed in a future "
            "version. Use --command-config instead."
        )
        args.command_config = args.admin_config
    partitions: list[TP] | None = None
    if args.path_to_json_file is not None:
        try:
            with open(args.path_to_json_file, encoding="utf-8") as f:
                partitions = parse_election_json(f.read())
        except OSError as exc:
            raise _Failed(f"{args.path_to_json_file}: {exc.strerror}") from None
    elif args.topic is not None:
        partitions = [(args.topic, args.partition)]
    result = elect_leaders(Admin(admin_client(args), wire_sender(_CLIENT_ID)), kind, partitions)
    for line in election_lines(kind, result):
        print(line)
    if result.failed:
        raise _Failed(f"{len(result.failed)} replica(s) could not be elected")
    return 0
