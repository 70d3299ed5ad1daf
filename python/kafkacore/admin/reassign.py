"""Partition reassignment over an admin client, as Kafka's ``ReassignPartitionsCommand``
(3.9) has it: ``generateAssignment``, ``executeAssignment``, ``verifyAssignment``,
``cancelAssignment`` and the current reassignments, with Kafka's JSON, checks and texts.
``kafkacore reassign-partitions`` parses options and prints; the console shows the same
lines.

* the reassignment JSON: :func:`format_reassignment_json`, :func:`parse_reassignment_json`,
  :func:`parse_topics_json`, :func:`check_reassignment`;
* the controller's requests: :func:`list_reassignments` (ListPartitionReassignments, as
  :class:`OngoingReassignment`\\ s), :func:`alter_reassignments`
  (AlterPartitionReassignments; ``None`` cancels);
* the operations: :func:`generate_assignment`, :func:`execute_assignment`,
  :func:`verify_assignment` (with :func:`partition_reassignment_states` giving typed
  :class:`PartitionReassignmentState`\\ s), :func:`cancel_assignment`;
* the move map (:func:`proposed_move_map`, Kafka's ``calculateProposedMoveMap``) the
  throttles are computed from (:mod:`kafkacore.admin.throttles`).

Moving replicas between log directories (``log_dirs`` other than ``"any"``) is not
supported (the broker has no AlterReplicaLogDirs) and is refused; so there are no log-dir
move states.

Thread-safety: the functions block; any thread.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kafkacore.admin.client import TIMEOUT, TP, Admin, AdminError
from kafkacore.admin.cluster import (
    controller_call,
    error_message,
    metadata,
    nodes,
    replica_assignment,
)
from kafkacore.admin.throttles import PartitionMove, clear_all_throttles, set_throttles

__all__ = [
    "ANY_LOG_DIR",
    "OngoingReassignment",
    "PartitionReassignmentState",
    "ReassignmentRefused",
    "alter_reassignments",
    "cancel_assignment",
    "cancel_reassignments",
    "cancelled_text",
    "check_reassignment",
    "execute_assignment",
    "format_reassignment_json",
    "generate_assignment",
    "list_reassignments",
    "ongoing_reassignments_text",
    "parse_broker_list",
    "parse_reassignment_json",
    "parse_topics_json",
    "partition_reassignment_states",
    "partition_reassignment_states_text",
    "proposed_move_map",
    "tp_text",
    "verify_assignment",
]

ANY_LOG_DIR = "any"

_T = TypeVar("_T")

EXISTING_ASSIGNMENT = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to "
    "override this and create a new partition assignment in addition to the existing one. The "
    "--additional flag can also be used to change the throttle by resubmitting the current "
    "reassignment."
)
VERIFY_WARNING = (
    "Warning: You must run --verify periodically, until the reassignment completes, to ensure "
    "the throttle is removed."
)


class ReassignmentRefused(AdminError):
    """Kafka's ``TerseException`` from the reassignment operations: the tool prints only
    the message (an existing reassignment, partitions the controller refused)."""


@dataclass(frozen=True)
class OngoingReassignment:
    """Kafka's ``PartitionReassignment``: a moving partition's replicas (the union of the
    old and new ones), and those being added and removed."""

    replicas: list[int]
    adding: list[int]
    removing: list[int]


@dataclass(frozen=True)
class PartitionReassignmentState:
    """Kafka's ``PartitionReassignmentState``: the replicas now, the ones asked for, and
    whether the partition is no longer moving."""

    current_replicas: list[int]
    target_replicas: list[int]
    done: bool


def tp_text(tp: TP) -> str:
    """``topic-partition``, as Kafka's ``TopicPartition.toString``."""
    return f"{tp[0]}-{tp[1]}"


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


# -- JSON ------------------------------------------------------------------------------------


def format_reassignment_json(parts: Mapping[TP, list[int]]) -> str:
    """Kafka's ``formatAsReassignmentJson`` (sorted by topic, partition; log dirs "any")."""
    entries = [
        {
            "topic": tp[0],
            "partition": tp[1],
            "replicas": list(parts[tp]),
            "log_dirs": [ANY_LOG_DIR] * len(parts[tp]),
        }
        for tp in sorted(parts)
    ]
    return json.dumps({"version": 1, "partitions": entries}, separators=(",", ":"))


def _parse_json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AdminError(f"The input string is not a valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise AdminError("The input string is not a valid JSON object")
    version = value.get("version", 1)
    if version != 1:
        raise AdminError(f"Not supported version field value {version}")
    return value


def parse_broker_list(text: str) -> list[int]:
    """``--broker-list`` (``1,2,3``): the broker ids, refused when one is repeated."""
    try:
        brokers = [int(b) for b in text.split(",")]
    except ValueError as exc:
        raise AdminError(f"For input string: {exc}") from None
    dups = _duplicates(brokers)
    if dups:
        raise AdminError(f"Broker list contains duplicate entries: {_jlist(dups)}")
    return brokers


def parse_topics_json(text: str) -> list[str]:
    """The topics of a ``--topics-to-move-json-file``."""
    js = _parse_json(text)
    try:
        return [str(t["topic"]) for t in js.get("topics", [])]
    except (KeyError, TypeError) as exc:
        raise AdminError(f"Invalid topics JSON: {exc}") from None


def parse_reassignment_json(text: str) -> list[tuple[TP, list[int]]]:
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
                raise AdminError(
                    f"Size of replicas list {_jlist(replicas)} is different from size of log dirs "
                    f"list {_jlist(dirs)} for partition {tp_text(tp)}"
                )
            if any(d != ANY_LOG_DIR for d in dirs):
                raise AdminError(
                    f"moving replicas between log directories is not supported ({tp_text(tp)})"
                )
            out.append((tp, replicas))
    except (KeyError, TypeError, ValueError) as exc:
        raise AdminError(f"Invalid reassignment JSON: {exc}") from None
    return out


def check_reassignment(entries: Sequence[tuple[TP, list[int]]]) -> dict[TP, list[int]]:
    """Kafka's checks of a reassignment before it is executed (not empty, no empty
    replica list, no partition twice, no replica twice in a list)."""
    if not entries:
        raise AdminError("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in entries):
        raise AdminError("Partition replica list cannot be empty")
    dups = _duplicates(tp for tp, _ in entries)
    if dups:
        raise AdminError(
            "Partition reassignment contains duplicate topic partitions: "
            + ",".join(tp_text(tp) for tp in dups)
        )
    bad = [(tp, _duplicates(replicas)) for tp, replicas in entries if _duplicates(replicas)]
    if bad:
        raise AdminError(
            "Partition replica lists may not contain duplicate entries: "
            + ". ".join(
                f"{tp_text(tp)} contains multiple entries for {','.join(map(str, d))}"
                for tp, d in bad
            )
        )
    return dict(entries)


# -- the controller's requests ---------------------------------------------------------------


def list_reassignments(
    admin: Admin, partitions: Iterable[TP] | None = None
) -> dict[TP, OngoingReassignment]:
    """ListPartitionReassignments of ``partitions`` (all when None): each moving one."""
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
    response = controller_call(
        admin,
        "ListPartitionReassignments",
        cls(timeout_ms=int(TIMEOUT * 1000), topics=topics),
    )
    if response.error_code:
        raise AdminError(error_message(response.error_code, response.error_message))
    return {
        (t.name, p.partition_index): OngoingReassignment(
            list(p.replicas), list(p.adding_replicas), list(p.removing_replicas)
        )
        for t in response.topics
        for p in t.partitions
    }


def alter_reassignments(admin: Admin, targets: Mapping[TP, list[int] | None]) -> dict[TP, str]:
    """AlterPartitionReassignments (a ``None`` target cancels); the errors, per partition."""
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["AlterPartitionReassignments"].request.cls
    by_topic: dict[str, list[Any]] = {}
    for (t, p), replicas in targets.items():
        by_topic.setdefault(t, []).append(
            cls.ReassignablePartition(partition_index=p, replicas=replicas)
        )
    response = controller_call(
        admin,
        "AlterPartitionReassignments",
        cls(
            timeout_ms=int(TIMEOUT * 1000),
            topics=[cls.ReassignableTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
        ),
    )
    if response.error_code:  # the whole request failed: every partition did
        return dict.fromkeys(targets, error_message(response.error_code, response.error_message))
    errors: dict[TP, str] = {}
    for t in response.responses:
        for p in t.partitions:
            if p.error_code:
                errors[(t.name, p.partition_index)] = error_message(p.error_code, p.error_message)
    return errors


# -- the operations --------------------------------------------------------------------------


def generate_assignment(
    admin: Admin, topics: list[str], brokers: list[int], rack_aware: bool
) -> tuple[dict[TP, list[int]], dict[TP, list[int]]]:
    """Kafka's ``generateAssignment``: the current assignment of ``topics`` and a new one
    over ``brokers`` (``assignReplicasToBrokers``, rack-aware when asked)."""
    from kafkacore.placement import BrokerMetadata, assign_replicas_to_brokers

    dups = _duplicates(brokers)
    if dups:
        raise AdminError(f"Broker list contains duplicate entries: {_jlist(dups)}")
    dup_topics = _duplicates(topics)
    if dup_topics:
        raise AdminError(
            f"List of topics to reassign contains duplicate entries: {_jlist(dup_topics)}"
        )
    current = replica_assignment(metadata(admin), dict.fromkeys(topics))
    wanted = set(brokers)
    metas = [
        BrokerMetadata(n.id, n.rack if rack_aware and n.rack else None)
        for n in sorted(nodes(admin), key=lambda n: n.id)
        if n.id in wanted
    ]
    racked = sum(1 for m in metas if m.rack is not None)
    if rack_aware and racked not in (0, len(metas)):
        raise AdminError(
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
            raise AdminError(str(exc)) from None
        for p, replicas in placed.items():
            proposed[(topic, p)] = replicas
    return current, proposed


def proposed_move_map(
    ongoing: Mapping[TP, OngoingReassignment],
    proposed: Mapping[TP, list[int]],
    current: Mapping[TP, list[int]],
) -> dict[TP, PartitionMove]:
    """Kafka's ``calculateProposedMoveMap``: where each partition moves from and to, the
    ongoing reassignments included (their sources are their replicas less the added)."""
    moves: dict[TP, PartitionMove] = {}
    for tp, reassignment in ongoing.items():
        adding = frozenset(reassignment.adding)
        moves[tp] = PartitionMove(frozenset(reassignment.replicas) - adding, adding)
    for tp, replicas in proposed.items():
        sources = moves[tp].sources if tp in moves else frozenset(current[tp])
        moves[tp] = PartitionMove(sources, frozenset(replicas) - sources)
    return moves


def execute_assignment(
    admin: Admin,
    entries: Sequence[tuple[TP, list[int]]],
    *,
    additional: bool,
    throttle: int = -1,
    log_dir_throttle: int = -1,
    emit: Callable[[str], None],
) -> None:
    """Kafka's ``executeAssignment``: check ``entries`` (a reassignment JSON's partitions),
    refuse when a reassignment is going on (unless ``additional``), an unknown broker or
    partition; emit the current assignment (the rollback JSON), set the throttles
    (``throttle`` B/s when >= 0), start the reassignment (AlterPartitionReassignments) and
    emit the result. ``emit`` gets each text the tool prints, as it goes."""
    proposed = check_reassignment(entries)
    ongoing = list_reassignments(admin)
    if not additional and ongoing:
        raise ReassignmentRefused(EXISTING_ASSIGNMENT)
    known = {n.id for n in nodes(admin)}
    for tp in proposed:
        for b in proposed[tp]:
            if b not in known:
                raise AdminError(f"Unknown broker id {b}")
    md = metadata(admin)
    current_all = replica_assignment(
        md, [t for t in dict.fromkeys(t for t, _ in proposed) if t in md.topics]
    )
    missing = [tp for tp in proposed if tp not in current_all]
    if missing:
        raise AdminError(
            "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
            "Unable to find partition: " + ", ".join(tp_text(tp) for tp in missing)
        )
    current = {tp: current_all[tp] for tp in proposed}
    emit(
        "Current partition replica assignment\n\n"
        f"{format_reassignment_json(current)}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback"
    )
    if throttle >= 0 or log_dir_throttle >= 0:
        emit(VERIFY_WARNING)
        if throttle >= 0:
            emit(set_throttles(admin, proposed_move_map(ongoing, proposed, current), throttle))
        if log_dir_throttle >= 0:
            emit(f"The replica-alter-dir throttle limit was set to {log_dir_throttle} B/s")
    errors = alter_reassignments(admin, dict(proposed))
    if errors:
        raise ReassignmentRefused(
            "Error reassigning partition(s):\n"
            + "\n".join(f"{tp_text(tp)}: {errors[tp]}" for tp in sorted(errors))
        )
    emit(
        "Successfully started partition reassignment"
        + ("" if len(proposed) == 1 else "s")
        + " for "
        + ",".join(tp_text(tp) for tp in sorted(proposed))
    )


def partition_reassignment_states(
    admin: Admin, targets: Sequence[tuple[TP, list[int]]]
) -> tuple[dict[TP, PartitionReassignmentState], bool]:
    """Kafka's ``findPartitionReassignmentStates``: the state of each target partition,
    and whether any reassignment at all is going on."""
    ongoing = list_reassignments(admin)
    md = metadata(admin)
    states: dict[TP, PartitionReassignmentState] = {}
    for tp, target in targets:
        if tp in ongoing:
            states[tp] = PartitionReassignmentState(ongoing[tp].replicas, target, False)
            continue
        topic = md.topics.get(tp[0])
        info = topic.partitions.get(tp[1]) if topic is not None else None
        current = [] if info is None else list(info.replicas)
        states[tp] = PartitionReassignmentState(current, target, True)
    return states, bool(ongoing)


def partition_reassignment_states_text(states: Mapping[TP, PartitionReassignmentState]) -> str:
    """Kafka's ``partitionReassignmentStatesToString``."""
    lines = ["Status of partition reassignment:"]
    for tp in sorted(states):
        state = states[tp]
        if not state.done:
            lines.append(f"Reassignment of partition {tp_text(tp)} is still in progress.")
        elif state.current_replicas == state.target_replicas:
            lines.append(f"Reassignment of partition {tp_text(tp)} is completed.")
        else:
            lines.append(
                f"There is no active reassignment of partition {tp_text(tp)}, but replica set "
                f"is {','.join(map(str, state.current_replicas))} rather than "
                f"{','.join(map(str, state.target_replicas))}."
            )
    return "\n".join(lines)


def verify_assignment(
    admin: Admin,
    targets: Sequence[tuple[TP, list[int]]],
    *,
    preserve_throttles: bool,
    emit: Callable[[str], None],
) -> bool:
    """Kafka's ``verifyAssignment``: emit the state of each target partition (and the
    empty log-dir move states); once nothing moves, clear the throttles unless
    ``preserve_throttles``. True when no reassignment is going on."""
    states, ongoing = partition_reassignment_states(admin, targets)
    emit(partition_reassignment_states_text(states))
    emit("")  # the (empty) log-dir move states
    if not ongoing and not preserve_throttles:
        clear_all_throttles(admin, targets, emit)
    return not ongoing


def cancel_reassignments(admin: Admin, partitions: Iterable[TP]) -> list[TP]:
    """Cancel the reassignments of ``partitions`` (AlterPartitionReassignments with no
    target); those cancelled, sorted. :class:`ReassignmentRefused` with Kafka's text when
    the controller refused some."""
    wanted = list(dict.fromkeys(partitions))
    if not wanted:
        return []
    errors = alter_reassignments(admin, dict.fromkeys(wanted))
    if errors:
        raise ReassignmentRefused(
            f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:\n"
            + "\n".join(f"{tp_text(tp)}: {errors[tp]}" for tp in sorted(errors))
        )
    return sorted(wanted)


def cancel_assignment(admin: Admin, targets: Sequence[tuple[TP, list[int]]]) -> list[TP]:
    """Kafka's ``cancelAssignment``, its partition part: cancel the ongoing reassignments
    of ``targets`` that Kafka's tool cancels (those adding no replica, or removing some);
    those cancelled, sorted."""
    wanted = {tp for tp, _ in targets}
    moving = [
        tp
        for tp, reassignment in list_reassignments(admin, wanted).items()
        if not reassignment.adding or reassignment.removing
    ]
    return cancel_reassignments(admin, moving)


def cancelled_text(cancelled: Sequence[TP]) -> str:
    """What the tool prints for the partitions a cancel stopped."""
    if not cancelled:
        return "None of the specified partition reassignments are active."
    return (
        f"Successfully cancelled partition reassignment{'' if len(cancelled) == 1 else 's'} "
        "for: " + ",".join(tp_text(tp) for tp in sorted(cancelled))
    )


def ongoing_reassignments_text(ongoing: Mapping[TP, OngoingReassignment]) -> str:
    """``--list``: each moving partition's replicas, adding and removing ones."""
    lines = []
    for tp in sorted(ongoing):
        reassignment = ongoing[tp]
        line = f"{tp_text(tp)}: replicas: {','.join(map(str, reassignment.replicas))}."
        if reassignment.adding:
            line += f" adding: {','.join(map(str, reassignment.adding))}."
        if reassignment.removing:
            line += f" removing: {','.join(map(str, reassignment.removing))}."
        lines.append(line)
    if not lines:
        return "No partition reassignments found."
    return "Current partition reassignments:\n" + "\n".join(lines)
