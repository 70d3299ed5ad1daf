# ruff: noqa: E501
"""``kafkacore reassign-partitions``: Kafka's ``kafka-reassign-partitions.sh`` (3.9's
``ReassignPartitionsCommand``): the same options, JSON files and output.

confluent-kafka's AdminClient has no AlterPartitionReassignments /
ListPartitionReassignments, so those two requests are sent to the controller with
kafkacore's own protocol codec; everything else (metadata, DescribeCluster,
IncrementalAlterConfigs for the throttles) goes through the AdminClient.

Moving replicas between log directories (``log_dirs`` other than ``"any"``) is not
supported (the broker has no AlterReplicaLogDirs yet) and is refused.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from kafkacore._java import java_hash_set_order as java_set_order
from kafkacore._java import java_string_hash, topic_partition_hash
from kafkacore.cli.topics import BrokerError, add_common, admin_client, ck_module, error_text, wait

__all__ = [
    "alter_reassignments",
    "clear_all_throttles",
    "format_reassignment_json",
    "java_set_order",
    "list_reassignments",
    "propose",
    "register",
    "run",
    "set_throttles",
]

PROG = "kafkacore reassign-partitions"
ANY_LOG_DIR = "any"
TIMEOUT = 30.0

_T = TypeVar("_T")
TP = tuple[str, int]

BROKER_LEVEL_THROTTLES = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
)
TOPIC_LEVEL_THROTTLES = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)
_EXISTING = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to "
    "override this and create a new partition assignment in addition to the existing one. The "
    "--additional flag can also be used to change the throttle by resubmitting the current "
    "reassignment."
)
_VERIFY_WARNING = (
    "Warning: You must run --verify periodically, until the reassignment completes, to ensure "
    "the throttle is removed."
)
_ACTIONS = ("generate", "execute", "verify", "cancel", "list")


class Terse(Exception):
    """Kafka's ``TerseException``: only the message, on stdout, exit status 1."""


# --- Java's HashSet iteration order (Kafka prints some sets as they iterate) -------------


def _java_tp_hash(tp: TP) -> int:
    """``TopicPartition.hashCode`` of a ``(topic, partition)`` pair."""
    return topic_partition_hash(*tp)


def _int_order(ids: Iterable[int]) -> list[int]:
    return java_set_order(ids, lambda i: i)


def _str_order(names: Iterable[str]) -> list[str]:
    return java_set_order(names, java_string_hash)


def _tp_str(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


def _sorted_tps(tps: Iterable[TP]) -> list[TP]:
    return sorted(tps)


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
    admin = admin_client(args)
    try:
        if action == "verify":
            verify(admin, args, _read(args.reassignment_json_file), args.preserve_throttles)
        elif action == "generate":
            generate(
                admin,
                _read(args.topics_to_move_json_file),
                args.broker_list,
                not args.disable_rack_aware,
            )
        elif action == "execute":
            execute(
                admin,
                args,
                _read(args.reassignment_json_file),
                additional=args.additional,
                throttle=-1 if args.throttle is None else args.throttle,
                log_dir_throttle=(
                    -1
                    if args.replica_alter_log_dirs_throttle is None
                    else args.replica_alter_log_dirs_throttle
                ),
            )
        elif action == "cancel":
            cancel(admin, args, _read(args.reassignment_json_file), args.preserve_throttles)
        else:
            print(current_reassignments_text(admin, args))
    except Terse as exc:
        print(exc)
        return 1
    except BrokerError as exc:
        print(f"Error: {exc}")
        return 1
    sys.stdout.flush()
    return 0


# --- JSON --------------------------------------------------------------------------------


def format_reassignment_json(parts: dict[TP, list[int]]) -> str:
    """Kafka's ``formatAsReassignmentJson`` (sorted by topic, partition; log dirs "any")."""
    entries = [
        {
            "topic": tp[0],
            "partition": tp[1],
            "replicas": list(parts[tp]),
            "log_dirs": [ANY_LOG_DIR] * len(parts[tp]),
        }
        for tp in _sorted_tps(parts)
    ]
    return json.dumps({"version": 1, "partitions": entries}, separators=(",", ":"))


def _parse_json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BrokerError(f"The input string is not a valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise BrokerError("The input string is not a valid JSON object")
    version = value.get("version", 1)
    if version != 1:
        raise BrokerError(f"Not supported version field value {version}")
    return value


def parse_topics(text: str) -> list[str]:
    js = _parse_json(text)
    try:
        return [str(t["topic"]) for t in js.get("topics", [])]
    except (KeyError, TypeError) as exc:
        raise BrokerError(f"Invalid topics JSON: {exc}") from None


def parse_reassignment(text: str) -> list[tuple[TP, list[int]]]:
    """The ``partitions`` of a reassignment JSON, in file order (duplicates kept)."""
    js = _parse_json(text)
    out: list[tuple[TP, list[int]]] = []
    try:
        for e in js.get("partitions", []):
            tp = (str(e["topic"]), int(e["partition"]))
            replicas = [int(r) for r in e["replicas"]]
            dirs = e.get("log_dirs")
            dirs = [ANY_LOG_DIR] * len(replicas) if dirs is None else [str(d) for d in dirs]
            if len(dirs) != len(replicas):
                raise BrokerError(
                    f"Size of replicas list {_jlist(replicas)} is different from size of log dirs "
                    f"list {_jlist(dirs)} for partition {_tp_str(tp)}"
                )
            if any(d != ANY_LOG_DIR for d in dirs):
                raise BrokerError(
                    f"moving replicas between log directories is not supported ({_tp_str(tp)})"
                )
            out.append((tp, replicas))
    except (KeyError, TypeError, ValueError) as exc:
        raise BrokerError(f"Invalid reassignment JSON: {exc}") from None
    return out


def _jlist(items: Sequence[object]) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def _duplicates(items: Iterable[_T]) -> list[_T]:
    seen: set[_T] = set()
    dups: dict[_T, None] = {}
    for item in items:
        if item in seen:
            dups[item] = None
        seen.add(item)
    return list(dups)


# --- cluster reads -------------------------------------------------------------------------


def _metadata(admin: Any) -> Any:
    try:
        return admin.list_topics(timeout=TIMEOUT)
    except Exception as exc:
        raise BrokerError(error_text(exc)) from None


def _nodes(admin: Any) -> list[Any]:
    """DescribeCluster's nodes (id, host, port, rack)."""
    return list(wait(admin.describe_cluster(request_timeout=TIMEOUT)).nodes)


def _assignment(md: Any, topics: Iterable[str]) -> dict[TP, list[int]]:
    out: dict[TP, list[int]] = {}
    for topic in topics:
        t = md.topics.get(topic)
        if t is None or (t.error is not None and not t.partitions):
            raise BrokerError(
                f"org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic {topic} not found."
            )
        for p, info in t.partitions.items():
            out[(topic, p)] = list(info.replicas)
    return out


def _controller_call(admin: Any, api_name: str, request: Any, version: int = 0) -> Any:
    """Send ``request`` to the controller, again after NOT_CONTROLLER."""
    from kafkacore.cli._wire import call
    from kafkacore.protocol import APIS_BY_NAME, ApiKey, ErrorCode

    key = ApiKey(APIS_BY_NAME[api_name].key)
    deadline = time.monotonic() + TIMEOUT
    while True:
        md = _metadata(admin)
        controller = md.brokers.get(md.controller_id)
        if controller is not None:
            try:
                response = call(
                    controller.host,
                    controller.port,
                    key,
                    version,
                    request,
                    client_id="reassign-partitions-tool",
                    timeout_s=TIMEOUT,
                )
            except OSError:
                response = None
            if response is not None and response.error_code != ErrorCode.NOT_CONTROLLER:
                return response
        if time.monotonic() > deadline:
            raise BrokerError(
                "org.apache.kafka.common.errors.TimeoutException: no controller answered "
                f"{api_name}"
            )
        time.sleep(0.2)


def _error_message(code: int, message: str | None) -> str:
    from kafkacore.protocol import ErrorCode
    from kafkacore.protocol.errors import message as default_message

    if message:
        return message
    return default_message(code) or ErrorCode(code).name


def list_reassignments(
    admin: Any, partitions: Iterable[TP] | None = None
) -> dict[TP, tuple[list[int], list[int], list[int]]]:
    """ListPartitionReassignments: ``(replicas, adding, removing)`` per moving partition."""
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["ListPartitionReassignments"].request.cls
    topics = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for t, p in partitions:
            by_topic.setdefault(t, []).append(p)
        topics = [
            cls.ListPartitionReassignmentsTopics(name=t, partition_indexes=ps)
            for t, ps in by_topic.items()
        ]
    response = _controller_call(
        admin,
        "ListPartitionReassignments",
        cls(timeout_ms=int(TIMEOUT * 1000), topics=topics),
    )
    if response.error_code:
        raise BrokerError(_error_message(response.error_code, response.error_message))
    return {
        (t.name, p.partition_index): (
            list(p.replicas),
            list(p.adding_replicas),
            list(p.removing_replicas),
        )
        for t in response.topics
        for p in t.partitions
    }


def alter_reassignments(admin: Any, targets: dict[TP, list[int] | None]) -> dict[TP, str]:
    """AlterPartitionReassignments (None cancels); the errors, per partition."""
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["AlterPartitionReassignments"].request.cls
    by_topic: dict[str, list[Any]] = {}
    for (t, p), replicas in targets.items():
        by_topic.setdefault(t, []).append(
            cls.ReassignablePartition(partition_index=p, replicas=replicas)
        )
    response = _controller_call(
        admin,
        "AlterPartitionReassignments",
        cls(
            timeout_ms=int(TIMEOUT * 1000),
            topics=[cls.ReassignableTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
        ),
    )
    if response.error_code:
        text = _error_message(response.error_code, response.error_message)
        return dict.fromkeys(targets, text)
    errors: dict[TP, str] = {}
    for t in response.responses:
        for p in t.partitions:
            if p.error_code:
                errors[(t.name, p.partition_index)] = _error_message(p.error_code, p.error_message)
    return errors


def exception_name(code: int) -> str:
    """The Java exception class Kafka's clients raise for an error code."""
    from kafkacore.protocol import ErrorCode

    name = ErrorCode(code).name
    if name == "INVALID_TOPIC_EXCEPTION":
        return "InvalidTopicException"
    return "".join(w.capitalize() for w in name.split("_")) + "Exception"


def _wait_java(future: Any) -> Any:
    """:func:`wait`, the broker's errors worded as Kafka's ``ExecutionException``."""
    try:
        return future.result(timeout=TIMEOUT)
    except Exception as exc:
        err: Any = exc.args[0] if exc.args else None
        code = err.code() if hasattr(err, "code") else None
        text = error_text(exc)
        if isinstance(code, int) and code > 0:
            with contextlib.suppress(ValueError):
                text = f"org.apache.kafka.common.errors.{exception_name(code)}: {text}"
        raise BrokerError(text) from None


def _incremental_alter(
    admin: Any, ops: dict[tuple[str, str], list[tuple[str, str | None]]]
) -> None:
    """IncrementalAlterConfigs: ``{(type, name): [(key, value or None = DELETE)]}``."""
    if not ops:
        return
    adm = ck_module("confluent_kafka.admin")
    resources = []
    for (kind, name), entries in ops.items():
        restype = adm.ResourceType.TOPIC if kind == "topic" else adm.ResourceType.BROKER
        resources.append(
            adm.ConfigResource(
                restype,
                name,
                incremental_configs=[
                    adm.ConfigEntry(
                        key,
                        value,
                        incremental_operation=(
                            adm.AlterConfigOpType.DELETE
                            if value is None
                            else adm.AlterConfigOpType.SET
                        ),
                    )
                    for key, value in entries
                ],
            )
        )
    # librdkafka takes one BROKER resource per request
    topics = [r for r in resources if r.restype == adm.ResourceType.TOPIC]
    batches = ([topics] if topics else []) + [[r] for r in resources if r not in topics]
    for batch in batches:
        futures = admin.incremental_alter_configs(batch, request_timeout=TIMEOUT)
        for future in futures.values():
            _wait_java(future)


# --- actions -------------------------------------------------------------------------------


def generate(admin: Any, topics_json: str, broker_list: str, rack_aware: bool) -> None:
    try:
        brokers = [int(b) for b in broker_list.split(",")]
    except ValueError as exc:
        raise BrokerError(f"For input string: {exc}") from None
    dups = _duplicates(brokers)  # checked before the topics are read, as Kafka's tool does
    if dups:
        raise BrokerError(f"Broker list contains duplicate entries: {_jlist(dups)}")
    current, proposed = propose(admin, parse_topics(topics_json), brokers, rack_aware)
    print(f"Current partition replica assignment\n{format_reassignment_json(current)}\n")
    print(f"Proposed partition reassignment configuration\n{format_reassignment_json(proposed)}")


def propose(
    admin: Any, topics: list[str], brokers: list[int], rack_aware: bool
) -> tuple[dict[TP, list[int]], dict[TP, list[int]]]:
    """``--generate``: the current assignment of ``topics`` and a new one over
    ``brokers`` (Kafka's ``assignReplicasToBrokers``, rack-aware when asked)."""
    from kafkacore.placement import BrokerMetadata, assign_replicas_to_brokers

    dups = _duplicates(brokers)
    if dups:
        raise BrokerError(f"Broker list contains duplicate entries: {_jlist(dups)}")
    dup_topics = _duplicates(topics)
    if dup_topics:
        raise BrokerError(
            f"List of topics to reassign contains duplicate entries: {_jlist(dup_topics)}"
        )
    current = _assignment(_metadata(admin), dict.fromkeys(topics))
    wanted = set(brokers)
    metas = [
        BrokerMetadata(n.id, n.rack if rack_aware and n.rack else None)
        for n in sorted(_nodes(admin), key=lambda n: n.id)
        if n.id in wanted
    ]
    racked = sum(1 for m in metas if m.rack is not None)
    if rack_aware and racked not in (0, len(metas)):
        raise BrokerError(
            "Not all brokers have rack information. Add --disable-rack-aware in command line "
            "to make replica assignment without rack information."
        )
    proposed: dict[TP, list[int]] = {}
    rng = random.Random()
    by_topic: dict[str, list[TP]] = {}
    for tp in current:
        by_topic.setdefault(tp[0], []).append(tp)
    for topic, tps in by_topic.items():
        rf = len(current[tps[0]])
        try:
            placed = assign_replicas_to_brokers(metas, len(tps), rf, rng=rng)
        except Exception as exc:
            raise BrokerError(str(exc)) from None
        for p, replicas in placed.items():
            proposed[(topic, p)] = replicas
    return current, proposed


def _check_reassignment(entries: list[tuple[TP, list[int]]]) -> dict[TP, list[int]]:
    if not entries:
        raise BrokerError("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in entries):
        raise BrokerError("Partition replica list cannot be empty")
    dups = _duplicates(tp for tp, _ in entries)
    if dups:
        raise BrokerError(
            "Partition reassignment contains duplicate topic partitions: "
            + ",".join(_tp_str(tp) for tp in dups)
        )
    bad = [(tp, _duplicates(replicas)) for tp, replicas in entries if _duplicates(replicas)]
    if bad:
        raise BrokerError(
            "Partition replica lists may not contain duplicate entries: "
            + ". ".join(
                f"{_tp_str(tp)} contains multiple entries for {','.join(map(str, d))}"
                for tp, d in bad
            )
        )
    return dict(entries)


def execute(
    admin: Any,
    args: argparse.Namespace,
    text: str,
    *,
    additional: bool,
    throttle: int,
    log_dir_throttle: int,
) -> None:
    proposed = _check_reassignment(parse_reassignment(text))
    ongoing = list_reassignments(admin)
    if not additional and ongoing:
        raise Terse(_EXISTING)
    known = {n.id for n in _nodes(admin)}
    for tp in proposed:
        for b in proposed[tp]:
            if b not in known:
                raise BrokerError(f"Unknown broker id {b}")
    md = _metadata(admin)
    current_all = _assignment(
        md, [t for t in dict.fromkeys(t for t, _ in proposed) if t in md.topics]
    )
    missing = [tp for tp in proposed if tp not in current_all]
    if missing:
        raise BrokerError(
            "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find partition: "
            + ", ".join(_tp_str(tp) for tp in missing)
        )
    current = {tp: current_all[tp] for tp in proposed}
    print(
        "Current partition replica assignment\n\n"
        f"{format_reassignment_json(current)}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback"
    )
    if throttle >= 0 or log_dir_throttle >= 0:
        print(_VERIFY_WARNING)
        if throttle >= 0:
            moves = _move_map(ongoing, proposed, current)
            print(set_throttles(admin, moves, throttle))
        if log_dir_throttle >= 0:
            print(f"The replica-alter-dir throttle limit was set to {log_dir_throttle} B/s")
    errors = alter_reassignments(admin, dict(proposed))
    if errors:
        raise Terse(
            "Error reassigning partition(s):\n"
            + "\n".join(f"{_tp_str(tp)}: {errors[tp]}" for tp in _sorted_tps(errors))
        )
    print(
        "Successfully started partition reassignment"
        + ("" if len(proposed) == 1 else "s")
        + " for "
        + ",".join(_tp_str(tp) for tp in _sorted_tps(proposed))
    )


def _move_map(
    ongoing: dict[TP, tuple[list[int], list[int], list[int]]],
    proposed: dict[TP, list[int]],
    current: dict[TP, list[int]],
) -> dict[TP, tuple[set[int], set[int]]]:
    """Kafka's ``calculateProposedMoveMap``: ``(sources, destinations)`` per partition,
    the ongoing reassignments included."""
    moves: dict[TP, tuple[set[int], set[int]]] = {}
    for tp, (replicas, adding, _) in ongoing.items():
        moves[tp] = (set(replicas) - set(adding), set(adding))
    for tp, replicas in proposed.items():
        sources = set(moves[tp][0]) if tp in moves else set(current[tp])
        moves[tp] = (sources, set(replicas) - sources)
    return moves


def throttle_configs(
    moves: dict[TP, tuple[set[int], set[int]]],
) -> dict[str, tuple[str, str]]:
    """Per topic ``(leader…replicas, follower…replicas)``: ``p:<each source>`` and
    ``p:<each destination not a source>``, each sorted as strings (a Java TreeSet)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for (topic, p), (sources, dests) in moves.items():
        leader, follower = out.setdefault(topic, (set(), set()))
        leader.update(f"{p}:{s}" for s in sources)
        follower.update(f"{p}:{d}" for d in dests if d not in sources)
    return {t: (",".join(sorted(lead)), ",".join(sorted(fol))) for t, (lead, fol) in out.items()}


def set_throttles(admin: Any, moves: dict[TP, tuple[set[int], set[int]]], rate: int) -> str:
    """The replication throttles of ``moves`` at ``rate`` B/s (topic throttled replicas,
    broker rates); the line the tool prints."""
    ops: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for topic, (leader, follower) in throttle_configs(moves).items():
        ops[("topic", topic)] = [
            ("leader.replication.throttled.replicas", leader),
            ("follower.replication.throttled.replicas", follower),
        ]
    _incremental_alter(admin, ops)
    brokers = sorted({b for s, d in moves.values() for b in s | d})
    _incremental_alter(
        admin,
        {
            ("broker", str(b)): [
                ("leader.replication.throttled.rate", str(rate)),
                ("follower.replication.throttled.rate", str(rate)),
            ]
            for b in brokers
        },
    )
    return f"The inter-broker throttle limit was set to {rate} B/s"


def _clear_all_throttles(admin: Any, targets: list[tuple[TP, list[int]]]) -> None:
    clear_all_throttles(admin, targets, print)


def clear_all_throttles(
    admin: Any, targets: list[tuple[TP, list[int]]], emit: Callable[[str], None]
) -> None:
    """Remove the replication throttles of every broker and of ``targets``' topics;
    ``emit`` gets each line the tool prints, before the step it announces (so the lines
    before a failing step are out when it raises)."""
    brokers = _int_order([*(n.id for n in _nodes(admin)), *(b for _, rs in targets for b in rs)])
    emit(
        f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} "
        + ",".join(map(str, brokers))
    )
    _incremental_alter(
        admin,
        {("broker", str(b)): [(k, None) for k in BROKER_LEVEL_THROTTLES] for b in brokers},
    )
    topics = _str_order(tp[0] for tp, _ in targets)
    emit(
        f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} "
        + ",".join(topics)
    )
    _incremental_alter(
        admin, {("topic", t): [(k, None) for k in TOPIC_LEVEL_THROTTLES] for t in topics}
    )


def reassignment_states(
    admin: Any, targets: list[tuple[TP, list[int]]]
) -> tuple[dict[TP, tuple[list[int], list[int], bool]], bool]:
    """Kafka's ``findPartitionReassignmentStates``: per partition ``(current replicas,
    target, done)``, and whether any reassignment at all is going on."""
    ongoing = list_reassignments(admin)
    md = _metadata(admin)
    states: dict[TP, tuple[list[int], list[int], bool]] = {}
    for tp, target in targets:
        if tp in ongoing:
            states[tp] = (ongoing[tp][0], target, False)
            continue
        topic = md.topics.get(tp[0])
        info = topic.partitions.get(tp[1]) if topic is not None else None
        states[tp] = ([] if info is None else list(info.replicas), target, True)
    return states, bool(ongoing)


def verify(admin: Any, args: argparse.Namespace, text: str, preserve: bool) -> bool:
    targets = parse_reassignment(text)
    states, ongoing = reassignment_states(admin, targets)
    lines = ["Status of partition reassignment:"]
    for tp in _sorted_tps(states):
        current, target, done = states[tp]
        if not done:
            lines.append(f"Reassignment of partition {_tp_str(tp)} is still in progress.")
        elif current == target:
            lines.append(f"Reassignment of partition {_tp_str(tp)} is completed.")
        else:
            lines.append(
                f"There is no active reassignment of partition {_tp_str(tp)}, but replica set is "
                f"{','.join(map(str, current))} rather than {','.join(map(str, target))}."
            )
    print("\n".join(lines))
    print("")  # the (empty) log-dir move states
    if not ongoing and not preserve:
        _clear_all_throttles(admin, targets)
    return not ongoing


def cancel(admin: Any, args: argparse.Namespace, text: str, preserve: bool) -> None:
    targets = parse_reassignment(text)
    wanted = {tp for tp, _ in targets}
    moving = {
        tp
        for tp, (_, adding, removing) in list_reassignments(admin, wanted).items()
        if not adding or removing
    }
    if moving:
        errors = alter_reassignments(admin, dict.fromkeys(moving))
        if errors:
            raise Terse(
                f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:\n"
                + "\n".join(f"{_tp_str(tp)}: {errors[tp]}" for tp in _sorted_tps(errors))
            )
        print(
            f"Successfully cancelled partition reassignment{'' if len(moving) == 1 else 's'} for: "
            + ",".join(_tp_str(tp) for tp in _sorted_tps(moving))
        )
    else:
        print("None of the specified partition reassignments are active.")
    # Kafka prints this one without a line break
    sys.stdout.write("None of the specified partition moves are active.")
    if not preserve:
        _clear_all_throttles(admin, targets)


def current_reassignments_text(admin: Any, args: argparse.Namespace) -> str:
    ongoing = list_reassignments(admin)
    lines = []
    for tp in _sorted_tps(ongoing):
        replicas, adding, removing = ongoing[tp]
        line = f"{_tp_str(tp)}: replicas: {','.join(map(str, replicas))}."
        if adding:
            line += f" adding: {','.join(map(str, adding))}."
        if removing:
            line += f" removing: {','.join(map(str, removing))}."
        lines.append(line)
    if not lines:
        return "No partition reassignments found."
    return "Current partition reassignments:\n" + "\n".join(lines)
