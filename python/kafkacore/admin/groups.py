"""Consumer groups over an admin client, as Kafka's ``ConsumerGroupCommand`` reads and
changes them: list, describe (members, and per partition the committed offset, the log
end offset and the lag: Kafka's ``PartitionAssignmentState``), committed and end offsets,
delete groups, delete offsets (OffsetDelete to the coordinator), and offset resets with
Kafka's clamping and table. ``kafkacore consumer-groups`` parses options and prints; the
console shows the same facts and texts.

Both group types, classic and consumer (KIP-848). Listing and describing are the raw
requests Kafka 4.3.1's admin client makes (confluent-kafka's client knows neither the
KIP-848 states nor the epochs): ListGroups v5 to every broker with Kafka's type, state
and protocol type filters; FindCoordinator, ConsumerGroupDescribe v1 and, for the groups
that are not consumer groups, DescribeGroups v6 at the coordinator. Errors carry Kafka's
exception text.

Thread-safety: the functions block; any thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kafkacore._java import java_length
from kafkacore.admin.client import (
    TIMEOUT,
    TP,
    Admin,
    AdminError,
    ConnectionClosed,
    ck_module,
    error_text,
    wait,
)
from kafkacore.admin.cluster import exception_text, metadata
from kafkacore.admin.ordering import partition_set_order, string_set_order
from kafkacore.protocol import ErrorCode

__all__ = [
    "CONSUMER_GROUP_STATES",
    "GROUP_STATES",
    "GROUP_TYPES",
    "GroupDescription",
    "GroupError",
    "GroupListing",
    "GroupMember",
    "GroupNode",
    "OffsetDeleteResult",
    "PartitionAssignmentState",
    "ResetSpec",
    "committed_offsets",
    "committed_offsets_and_epochs",
    "delete_groups",
    "delete_offsets",
    "describe_groups",
    "execute_reset",
    "find_coordinators",
    "kafka_error",
    "list_groups",
    "list_offsets",
    "partition_assignment_states",
    "reset_plan",
    "reset_table",
    "state_name",
    "topic_partitions",
    "type_name",
]

# Kafka's ``GroupState`` and ``GroupType`` as their ``toString`` prints them.
GROUP_STATES = (
    "Unknown",
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    "Empty",
    "Assigning",
    "Reconciling",
    "NotReady",
)
GROUP_TYPES = ("Unknown", "Consumer", "Classic", "Share", "Streams")
#: ``GroupState.groupStatesForType(GroupType.CONSUMER)``: what ``--state`` may name
CONSUMER_GROUP_STATES = (
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    "Empty",
    "Assigning",
    "Reconciling",
)


def state_name(state: Any) -> str:
    """A group state as Kafka's tool prints it (``PreparingRebalance``, ``Stable``...):
    ``GroupState.parse`` (any case; ``Unknown`` when not a state) of a broker's string,
    or of a confluent-kafka ``ConsumerGroupState``."""
    name = str(getattr(state, "name", state))
    name = {"PREPARING_REBALANCING": "PreparingRebalance"}.get(name, name)
    name = {"COMPLETING_REBALANCING": "CompletingRebalance"}.get(name, name)
    key = name.replace("_", "").upper()
    return next((s for s in GROUP_STATES if s.upper() == key), "Unknown")


def type_name(group_type: str) -> str:
    """A group type as Kafka's tool prints it (``GroupType.parse``, any case:
    ``Consumer``, ``Classic``...; ``Unknown`` when not a type)."""
    return next((t for t in GROUP_TYPES if t.lower() == group_type.lower()), "Unknown")


def kafka_error(exc: BaseException) -> str:
    """Kafka's exception text for a confluent-kafka error of a group operation (a
    broker's error code as Java names it; librdkafka's own errors as it words them)."""
    err: Any = exc.args[0] if exc.args else None
    code = err.code() if callable(getattr(err, "code", None)) else None
    if isinstance(code, int) and code >= -1 and code != 0:
        try:
            return exception_text(code)
        except ValueError:  # a code kafkacore does not know
            pass
    return error_text(exc)


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    #: as Kafka's tool prints it (:func:`state_name`)
    state: str
    #: as Kafka's tool prints it (:func:`type_name`): ``Classic``, ``Consumer``...
    type: str = "Unknown"


@dataclass(frozen=True)
class GroupNode:
    """A broker as a group description names it (its coordinator)."""

    id: int
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port} ({self.id})"


@dataclass(frozen=True)
class GroupMember:
    """Kafka's ``MemberDescription``. The last four are a consumer group's (KIP-848;
    None for a classic group's members): its epoch, the assignment the coordinator
    targets for it, and ``upgraded``: True for a member of the consumer protocol, False
    for a classic member of a consumer group (``ConsumerGroupDescribe`` v1's
    ``MemberType``)."""

    member_id: str
    client_id: str
    #: as Kafka's tool prints it: ``/`` and the address
    host: str
    #: the partitions assigned to it (a consumer group's: those it owns, its partitions
    #: pending revocation included), sorted
    assignment: tuple[TP, ...]
    group_instance_id: str | None = None
    member_epoch: int | None = None
    target_assignment: tuple[TP, ...] | None = None
    upgraded: bool | None = None


@dataclass(frozen=True)
class GroupDescription:
    """Kafka's ``ConsumerGroupDescription``; ``group_epoch`` and
    ``target_assignment_epoch`` are a consumer group's (None for a classic group)."""

    group_id: str
    #: as Kafka's tool prints it (:func:`state_name`)
    state: str
    assignor: str
    coordinator: GroupNode | None
    members: list[GroupMember]
    #: as Kafka's tool prints it (:func:`type_name`)
    type: str = "Classic"
    group_epoch: int | None = None
    target_assignment_epoch: int | None = None


@dataclass(frozen=True)
class PartitionAssignmentState:
    """Kafka's ``PartitionAssignmentState``: a partition the group has an offset for or is
    assigned, its committed ``offset`` (None: none) and the leader epoch committed with
    it, ``log_end_offset`` (the latest offset a read_uncommitted consumer sees, the high
    watermark; -1: unknown) and owner."""

    topic: str
    partition: int
    offset: int | None
    log_end_offset: int
    member: GroupMember | None
    leader_epoch: int | None = None

    @property
    def lag(self) -> int | None:
        if self.offset is None or self.log_end_offset < 0:
            return None
        return self.log_end_offset - self.offset


class GroupError(AdminError):
    """A broker's error for a group: Kafka's exception text, and the ``code``."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(exception_text(code, message))
        self.code = ErrorCode(code)


# Errors after which Kafka's admin client asks again (for the call's timeout).
_RETRIABLE = frozenset(
    {
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
    }
)
_RETRY_BACKOFF_S = 0.1


def _timed_out(call: str) -> AdminError:
    return AdminError(
        "org.apache.kafka.common.errors.TimeoutException: "
        f"Timed out waiting for a node assignment. Call: {call}"
    )


def _brokers(admin: Admin) -> list[GroupNode]:
    md = metadata(admin)
    return [GroupNode(b.id, b.host, b.port) for _, b in sorted(md.brokers.items())]


def list_groups(
    admin: Admin,
    *,
    states: Iterable[str] = (),
    types: Iterable[str] = ("Classic", "Consumer"),
    protocol_types: Iterable[str] | None = ("", "consumer"),
) -> list[GroupListing]:
    """ListGroups (v5) of every broker, as Kafka's ``Admin.listGroups`` with
    ``ListGroupsOptions.forConsumerGroups()`` (the defaults): the groups of ``types``
    (empty: every type) in ``states`` (empty: any), those whose protocol type is one of
    ``protocol_types`` (None: any), in the order of Kafka's ``HashMap`` of them by id. A
    broker loading its groups is asked again; another error fails the call with Kafka's
    exception text."""
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["ListGroups"].request.cls
    request = cls(states_filter=list(states), types_filter=list(types))
    wanted = None if protocol_types is None else set(protocol_types)
    deadline = time.monotonic() + TIMEOUT
    out: dict[str, GroupListing] = {}
    for broker in _brokers(admin):
        while True:
            try:
                response = admin.send(broker.host, broker.port, "ListGroups", 5, request)
            except OSError:
                response = None
            code = ErrorCode.COORDINATOR_NOT_AVAILABLE if response is None else response.error_code
            if code not in _RETRIABLE - {ErrorCode.NOT_COORDINATOR}:
                break
            if time.monotonic() > deadline:
                raise _timed_out("listGroups")
            time.sleep(_RETRY_BACKOFF_S)
        assert response is not None
        if code != ErrorCode.NONE:
            raise AdminError(exception_text(code))
        for g in response.groups:
            if wanted is None or g.protocol_type in wanted:
                out[g.group_id] = GroupListing(
                    g.group_id, state_name(g.group_state), type_name(g.group_type)
                )
    return [out[group] for group in string_set_order(out)]


def find_coordinators(
    admin: Admin, groups: Iterable[str], deadline: float | None = None
) -> tuple[dict[str, GroupNode], dict[str, AdminError]]:
    """The coordinator of each group (FindCoordinator v4, asked again while one is not
    available), and the groups it was refused for (Kafka's exception text)."""
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["FindCoordinator"].request.cls
    pending = list(dict.fromkeys(groups))
    found: dict[str, GroupNode] = {}
    failed: dict[str, AdminError] = {}
    deadline = time.monotonic() + TIMEOUT if deadline is None else deadline
    brokers = _brokers(admin)
    attempt = 0
    while pending:
        broker = brokers[attempt % len(brokers)]
        attempt += 1
        request = cls(key_type=0, coordinator_keys=pending)
        try:
            response = admin.send(broker.host, broker.port, "FindCoordinator", 4, request)
        except OSError:
            response = None
        retry = []
        for c in response.coordinators if response is not None else []:
            if c.error_code == ErrorCode.NONE:
                found[c.key] = GroupNode(c.node_id, c.host, c.port)
            elif c.error_code in _RETRIABLE:
                retry.append(c.key)
            else:
                failed[c.key] = GroupError(c.error_code, c.error_message)
        pending = pending if response is None else retry
        if pending:
            if time.monotonic() > deadline:
                raise _timed_out("findCoordinator")
            time.sleep(_RETRY_BACKOFF_S)
    return found, failed


def _partitions(assignment: Any) -> tuple[TP, ...]:
    return tuple(
        sorted((t.topic_name, p) for t in assignment.topic_partitions for p in t.partitions)
    )


def _consumer_description(described: Any, coordinator: GroupNode) -> GroupDescription:
    """A ``ConsumerGroupDescribe`` group as Kafka's admin client describes it."""
    upgraded = {0: False, 1: True}
    return GroupDescription(
        described.group_id,
        state_name(described.group_state),
        described.assignor_name,
        coordinator,
        [
            GroupMember(
                m.member_id,
                m.client_id,
                m.client_host,
                _partitions(m.assignment),
                m.instance_id,
                m.member_epoch,
                _partitions(m.target_assignment),
                upgraded.get(m.member_type),
            )
            for m in described.members
        ],
        "Consumer",
        described.group_epoch,
        described.assignment_epoch,
    )


def _classic_description(described: Any, coordinator: GroupNode) -> GroupDescription:
    """A ``DescribeGroups`` group as Kafka's admin client describes it: its members'
    assignments decoded when the group is a consumer group (protocol type
    ``consumer``)."""
    from kafkacore.coordinator.records import decode_consumer_assignment

    members = []
    for m in described.members:
        assignment: tuple[TP, ...] = ()
        if described.protocol_type == "consumer" and m.member_assignment:
            decoded = decode_consumer_assignment(bytes(m.member_assignment))
            assignment = tuple(
                sorted(
                    (t["topic"], p) for t in decoded["assignedPartitions"] for p in t["partitions"]
                )
            )
        members.append(
            GroupMember(m.member_id, m.client_id, m.client_host, assignment, m.group_instance_id)
        )
    return GroupDescription(
        described.group_id,
        state_name(described.group_state),
        described.protocol_data,
        coordinator,
        members,
        "Classic",
    )


def _describe_at(
    admin: Admin, coordinator: GroupNode, groups: list[str]
) -> tuple[dict[str, GroupDescription | AdminError], list[str]]:
    """``groups`` described by their ``coordinator`` as Kafka's
    ``DescribeConsumerGroupsHandler`` does: ConsumerGroupDescribe (v1), then
    DescribeGroups (v6) for the groups that are not consumer groups. The answers, and the
    groups to ask again (the coordinator moved or is loading)."""
    from kafkacore.protocol import APIS_BY_NAME

    out: dict[str, GroupDescription | AdminError] = {}
    retry: list[str] = []
    classic: list[str] = []
    cls: Any = APIS_BY_NAME["ConsumerGroupDescribe"].request.cls
    try:
        response = admin.send(
            coordinator.host, coordinator.port, "ConsumerGroupDescribe", 1, cls(group_ids=groups)
        )
    except OSError:
        return out, groups
    for d in response.groups:
        if d.error_code == ErrorCode.NONE:
            out[d.group_id] = _consumer_description(d, coordinator)
        elif d.error_code in (ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.UNSUPPORTED_VERSION):
            classic.append(d.group_id)
        elif d.error_code in _RETRIABLE:
            retry.append(d.group_id)
        else:
            out[d.group_id] = GroupError(d.error_code, d.error_message)
    if not classic:
        return out, retry
    cls = APIS_BY_NAME["DescribeGroups"].request.cls
    try:
        response = admin.send(
            coordinator.host, coordinator.port, "DescribeGroups", 6, cls(groups=classic)
        )
    except OSError:
        return out, retry + classic
    for d in response.groups:
        if d.error_code in _RETRIABLE:
            retry.append(d.group_id)
        elif d.error_code != ErrorCode.NONE:
            out[d.group_id] = GroupError(d.error_code, d.error_message)
        elif d.protocol_type not in ("consumer", ""):
            out[d.group_id] = AdminError(
                "java.lang.IllegalArgumentException: "
                f"GroupId {d.group_id} is not a consumer group ({d.protocol_type})."
            )
        else:
            try:
                out[d.group_id] = _classic_description(d, coordinator)
            except Exception as exc:  # a member's assignment Kafka could not read either
                out[d.group_id] = AdminError(str(exc))
    return out, retry


def describe_groups(admin: Admin, groups: list[str]) -> Iterator[GroupDescription]:
    """Kafka's ``Admin.describeConsumerGroups`` of ``groups``: each found by its
    coordinator and described there (:func:`_describe_at`; a consumer group with its
    epochs and target assignments). The descriptions in order as asked for, an
    :class:`~kafkacore.admin.client.AdminError` (Kafka's exception text) at the first
    that failed."""
    deadline = time.monotonic() + TIMEOUT
    pending = list(dict.fromkeys(groups))
    answers: dict[str, GroupDescription | AdminError] = {}
    while pending:
        coordinators, failed = find_coordinators(admin, pending, deadline)
        answers.update(failed)
        by_node: dict[GroupNode, list[str]] = {}
        for group, node in coordinators.items():
            by_node.setdefault(node, []).append(group)
        pending = []
        for node, ids in by_node.items():
            described, retry = _describe_at(admin, node, ids)
            answers.update(described)
            pending.extend(retry)
        if pending:
            if time.monotonic() > deadline:
                raise _timed_out("describeConsumerGroups")
            time.sleep(_RETRY_BACKOFF_S)
    for group in groups:
        answer = answers[group]
        if isinstance(answer, AdminError):
            raise answer
        yield answer


def committed_offsets_and_epochs(admin: Admin, group: str) -> dict[TP, tuple[int, int | None]]:
    """``group``'s committed offsets (OffsetFetch), those it has (>= 0), each with the
    leader epoch committed with it (None: none)."""
    ConsumerGroupTopicPartitions = ck_module("confluent_kafka").ConsumerGroupTopicPartitions
    futures = admin.client.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=TIMEOUT
    )
    result = wait(futures[group])
    out: dict[TP, tuple[int, int | None]] = {}
    for tp in result.topic_partitions:
        if tp.offset >= 0:
            epoch = getattr(tp, "leader_epoch", None)
            out[(tp.topic, tp.partition)] = (
                tp.offset,
                epoch if epoch is not None and epoch >= 0 else None,
            )
    return out


def committed_offsets(admin: Admin, group: str) -> dict[TP, int]:
    """``group``'s committed offsets (OffsetFetch), those it has (>= 0)."""
    return {tp: offset for tp, (offset, _) in committed_offsets_and_epochs(admin, group).items()}


def list_offsets(
    admin: Admin,
    partitions: Iterable[TP],
    spec: Literal["earliest", "latest"] | int = "latest",
) -> dict[TP, int]:
    """ListOffsets of ``partitions``: the earliest, the latest (the high watermark) or the
    first at or after a timestamp (ms; -1 when none)."""
    ck = ck_module("confluent_kafka")
    OffsetSpec = ck_module("confluent_kafka.admin").OffsetSpec
    wanted = list(partitions)
    if not wanted:
        return {}
    if spec == "earliest":
        offset_spec = OffsetSpec.earliest()
    elif spec == "latest":
        offset_spec = OffsetSpec.latest()
    else:
        offset_spec = OffsetSpec.for_timestamp(spec)
    futures = admin.client.list_offsets(
        {ck.TopicPartition(t, p): offset_spec for t, p in wanted}, request_timeout=TIMEOUT
    )
    return {(tp.topic, tp.partition): int(wait(f).offset) for tp, f in futures.items()}


def partition_assignment_states(
    admin: Admin,
    description: GroupDescription,
    committed: Mapping[TP, int] | None = None,
) -> list[PartitionAssignmentState]:
    """Every partition the group has an offset for or is assigned, with its offsets and
    owner, in the order of Kafka's ``collectGroupsOffsets``: the members with partitions,
    most partitions first, each's partitions by topic and partition; then the partitions
    with an offset and no owner, by topic and partition (``committed``: the group's
    offsets, when already read; their leader epochs are then not known)."""
    epochs: dict[TP, int | None] = {}
    if committed is None:
        read = committed_offsets_and_epochs(admin, description.group_id)
        committed = {tp: offset for tp, (offset, _) in read.items()}
        epochs = {tp: epoch for tp, (_, epoch) in read.items()}
    owned: list[tuple[TP, GroupMember | None]] = []
    members = [m for m in description.members if m.assignment]
    for m in sorted(members, key=lambda m: -len(m.assignment)):
        owned.extend((tp, m) for tp in sorted(set(m.assignment)))
    assigned = {tp for tp, _ in owned}
    owned.extend((tp, None) for tp in sorted(tp for tp in committed if tp not in assigned))
    ends = list_offsets(admin, dict.fromkeys(tp for tp, _ in owned))
    return [
        PartitionAssignmentState(
            tp[0], tp[1], committed.get(tp), ends.get(tp, -1), member, epochs.get(tp)
        )
        for tp, member in owned
    ]


def delete_groups(admin: Admin, groups: list[str]) -> dict[str, str]:
    """DeleteGroups of ``groups``; Kafka's error text of each that could not be deleted."""
    futures = admin.client.delete_consumer_groups(groups, request_timeout=TIMEOUT)
    failed: dict[str, str] = {}
    for group in groups:
        try:
            futures[group].result()
        except Exception as exc:  # confluent_kafka.KafkaException
            failed[group] = kafka_error(exc)
    return failed


def topic_partitions(admin: Admin, specs: list[str]) -> list[TP]:
    """The partitions of ``topic`` / ``topic:p,q`` specs (a topic alone: all its
    partitions); ``Topic 'x' does not exist`` for a topic the cluster lacks."""
    try:
        md = admin.client.list_topics(timeout=TIMEOUT)
    except Exception as exc:
        raise AdminError(error_text(exc)) from None
    out: list[TP] = []
    for spec in specs:
        name, _, parts = spec.partition(":")
        if name not in md.topics:
            raise AdminError(f"Topic '{name}' does not exist")
        ids = [int(p) for p in parts.split(",")] if parts else sorted(md.topics[name].partitions)
        out.extend((name, p) for p in ids)
    return out


@dataclass(frozen=True)
class OffsetDeleteResult:
    """OffsetDelete's answer: the request's error and each partition's."""

    error: ErrorCode
    partitions: dict[TP, ErrorCode]


def delete_offsets(admin: Admin, group: str, partitions: list[TP]) -> OffsetDeleteResult:
    """OffsetDelete (API 47) of ``group``'s offsets of ``partitions``, sent to the group's
    coordinator (confluent-kafka's AdminClient has no ``delete_consumer_group_offsets``)."""
    from kafkacore.protocol import APIS_BY_NAME

    coordinators, failed = find_coordinators(admin, [group])
    if group in failed:
        raise failed[group]
    coord = coordinators[group]
    cls: Any = APIS_BY_NAME["OffsetDelete"].request.cls
    by_topic: dict[str, list[int]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(p)
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
        response = admin.send(coord.host, coord.port, "OffsetDelete", 0, request)
    except ConnectionClosed:
        raise AdminError("connection closed by the coordinator") from None
    except OSError as exc:
        raise AdminError(f"coordinator {coord.host}:{coord.port}: {exc}") from None
    return OffsetDeleteResult(
        ErrorCode(response.error_code),
        {
            (t.name, p.partition_index): ErrorCode(p.error_code)
            for t in response.topics
            for p in t.partitions
        },
    )


@dataclass(frozen=True)
class ResetSpec:
    """One of the tool's reset specifications: ``kind`` is ``to-earliest``, ``to-latest``,
    ``to-current``, ``to-offset`` (``value``: the offset), ``shift-by`` (``value``: the
    shift), ``to-datetime`` (``value``: epoch ms) or ``by-duration`` (``value``: ms)."""

    kind: str
    value: int = 0


def reset_plan(
    admin: Admin,
    group: str,
    topics: list[str] | None,
    spec: ResetSpec,
    warn: Callable[[str], None] | None = None,
) -> dict[TP, int]:
    """The new offsets a reset of ``group`` would commit, as Kafka's ``OffsetsUtils``
    plans them: over ``topics`` (``topic`` or ``topic:p,q`` specs) or, when None, every
    partition the group has an offset for (``--all-topics``). An offset or a shift is
    clamped to [earliest, latest]; ``to-current`` keeps the committed offset, the latest
    for a partition without one; a time with no record at or after it falls back to the
    latest, each such partition told to ``warn`` in Kafka's words. ``ValueError`` (Kafka's
    text) for a shift of a partition without a committed offset."""
    committed = committed_offsets(admin, group)
    tps = sorted(committed) if topics is None else topic_partitions(admin, topics)
    earliest = list_offsets(admin, tps, "earliest")
    latest = list_offsets(admin, tps, "latest")
    by_time: dict[TP, int] = {}
    if spec.kind in ("to-datetime", "by-duration"):
        ts = spec.value if spec.kind == "to-datetime" else int(time.time() * 1000) - spec.value
        by_time = list_offsets(admin, tps, ts)
        for topic, partition in partition_set_order(tp for tp in tps if by_time.get(tp, -1) < 0):
            if warn is not None:
                warn(
                    f"\nWarn: Partition {partition} from topic {topic} is empty. "
                    "Falling back to latest known offset."
                )
    targets: dict[TP, int] = {}
    for key in tps:
        lo, hi = earliest.get(key, 0), latest.get(key, 0)
        if spec.kind == "to-earliest":
            targets[key] = lo
        elif spec.kind == "to-latest":
            targets[key] = hi
        elif spec.kind == "to-current":
            targets[key] = committed.get(key, hi)
        elif spec.kind in ("to-offset", "shift-by"):
            if spec.kind == "to-offset":
                target = spec.value
            elif key in committed:
                target = committed[key] + spec.value
            else:
                raise ValueError(
                    f"Cannot shift offset for partition {key[0]}-{key[1]} since there is no "
                    "current committed offset"
                )
            targets[key] = min(max(target, lo), hi)
        else:
            found = by_time.get(key, -1)
            targets[key] = hi if found < 0 else found
    return targets


def reset_table(group: str, targets: Mapping[TP, int]) -> str:
    """What the tool prints for a reset (dry run or executed), as Kafka's
    ``printOffsetsToReset``: each line starts with a line break, the group and topic
    columns are at least 15 wide, the partition column 10, the partitions in the order
    of Java's ``HashMap``; a line break at the end. The header even when there is
    nothing to reset (a group that is not inactive)."""
    group_width = max(15, java_length(group))
    topic_width = max([15, *(java_length(t) for t, _ in targets)])

    def line(*cells: object) -> str:
        g, t, p, o = (str(c) for c in cells)
        return f"\n{g.ljust(group_width)} {t.ljust(topic_width)} {p.ljust(10)} {o}"

    lines = [line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
    lines.extend(line(group, t, p, targets[(t, p)]) for t, p in partition_set_order(targets))
    return "".join(lines) + "\n"


def execute_reset(admin: Admin, group: str, targets: Mapping[TP, int]) -> None:
    """Commit ``targets`` for ``group`` (AlterConsumerGroupOffsets; the group must have
    no active members)."""
    ck = ck_module("confluent_kafka")
    offsets = [ck.TopicPartition(t, p, o) for (t, p), o in targets.items()]
    futures = admin.client.alter_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions(group, offsets)], request_timeout=TIMEOUT
    )
    wait(futures[group])
