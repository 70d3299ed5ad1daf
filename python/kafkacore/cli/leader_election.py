# ruff: noqa: E501
"""``kafkacore leader-election``: Kafka's ``kafka-leader-election.sh``
(``LeaderElectionCommand``): the same options, JSON file and output lines.

The ElectLeaders request (v1) goes to the controller with kafkacore's own codec, so the
broker's error messages reach the output as Kafka's AdminClient reports them; the
partition sets are printed in the order Kafka's ``HashSet`` iterates them.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafkacore.cli.reassign import (
    TP,
    _controller_call,
    _error_message,
    _java_tp_hash,
    exception_name,
    java_set_order,
)
from kafkacore.cli.topics import BrokerError, admin_client

__all__ = ["elect_leaders", "register", "run"]

PROG = "kafkacore leader-election"
_TYPES = {"PREFERRED": 0, "UNCLEAN": 1}


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


def _validate(args: argparse.Namespace) -> int:
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
    kind = _TYPES.get(args.election_type.upper())
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
    admin = admin_client(args)
    succeeded, noop, failed = elect_leaders(admin, kind, partitions)
    name = args.election_type.upper()
    if succeeded:
        print(
            f"Successfully completed leader election ({name}) for partitions "
            + ", ".join(f"{t}-{p}" for t, p in java_set_order(succeeded, _java_tp_hash))
        )
    if noop:
        print(
            "Valid replica already elected for partitions "
            + ", ".join(f"{t}-{p}" for t, p in java_set_order(noop, _java_tp_hash))
        )
    if failed:
        for tp in java_set_order(failed, _java_tp_hash):
            print(
                f"Error completing leader election ({name}) for partition: {tp[0]}-{tp[1]}: {failed[tp]}"
            )
        raise _Failed(f"{len(failed)} replica(s) could not be elected")
    return 0


def elect_leaders(
    admin: Any, kind: int, partitions: list[TP] | None
) -> tuple[list[TP], list[TP], dict[TP, str]]:
    """ElectLeaders v1 (``kind`` 0 preferred, 1 unclean) for ``partitions`` (None: all)
    sent to the controller: the partitions elected, those that needed no election
    (ELECTION_NOT_NEEDED) and those that failed with Kafka's exception text."""
    from kafkacore.protocol import APIS_BY_NAME, ErrorCode

    cls: Any = APIS_BY_NAME["ElectLeaders"].request.cls
    topic_partitions = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for t, p in dict.fromkeys(partitions):
            by_topic.setdefault(t, []).append(p)
        topic_partitions = [
            cls.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()
        ]
    request = cls(election_type=kind, topic_partitions=topic_partitions, timeout_ms=30000)
    response = _controller_call(admin, "ElectLeaders", request, version=1)
    if response.error_code:
        raise _Failed(_error_message(response.error_code, None))
    succeeded: list[TP] = []
    noop: list[TP] = []
    failed: dict[TP, str] = {}
    for result in response.replica_election_results:
        for p in result.partition_result:
            tp = (result.topic, p.partition_id)
            if p.error_code == 0:
                succeeded.append(tp)
            elif p.error_code == ErrorCode.ELECTION_NOT_NEEDED:
                noop.append(tp)
            else:
                failed[tp] = (
                    f"org.apache.kafka.common.errors.{exception_name(p.error_code)}: "
                    + _error_message(p.error_code, p.error_message)
                )
    return succeeded, noop, failed
