"""The server-side partition assignors of KIP-848 groups: Kafka 4.3.1's ``uniform``
(``UniformAssignor``: ``UniformHomogeneousAssignmentBuilder`` when every member subscribes
to the same topics, ``UniformHeterogeneousAssignmentBuilder`` otherwise) and ``range``
(``RangeAssignor``), behind Kafka's assignor API (``GroupSpec``, ``MemberSubscription``,
``SubscribedTopicDescriber``, ``GroupAssignment`` of ``group-coordinator-api``).

Both give the assignment Kafka's classes give on the same input, and that depends on the
iteration order of Kafka's ``HashMap``\\ s and ``HashSet``\\ s (which of an over-quota
member's partitions it keeps, which member an unassigned partition goes to): the inputs
are :class:`~kafkacore._java.JavaHashMap`/:class:`~kafkacore._java.JavaHashSet` where
Kafka's are, and the outputs are built in the same containers, so that the records written
from them list topics and partitions as Kafka's do. Kafka 4.3.1's two assignors do not
read racks (``racksForPartition`` is offered to custom assignors only); neither do these.

Share groups' ``simple`` assignor will join here. Pure functions over their arguments:
thread-safe.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Protocol

from kafkacore._java import (
    JavaHashMap,
    JavaHashSet,
    java_float_div_int,
    java_string_key,
    kafka_uuid_key,
)
from kafkacore.errors import KafkaCoreError

__all__ = [
    "ASSIGNORS",
    "GroupSpec",
    "MemberSpec",
    "PartitionAssignor",
    "PartitionAssignorError",
    "RangeAssignor",
    "SubscribedTopicDescriber",
    "SubscriptionType",
    "UniformAssignor",
    "deep_copy_assignment",
]

Partitions = Mapping[uuid.UUID, Set[int]]
"""A member's partitions by topic id."""


class PartitionAssignorError(KafkaCoreError):
    """Kafka's ``PartitionAssignorException``: the assignor cannot assign (a subscribed
    topic missing from the metadata, partitions left over)."""


class SubscriptionType(enum.Enum):
    """Kafka's ``SubscriptionType``: every member subscribes to the same topics, or not."""

    HOMOGENEOUS = "Homogeneous"
    HETEROGENEOUS = "Heterogeneous"


class SubscribedTopicDescriber(Protocol):
    """Kafka's ``SubscribedTopicDescriber``: what an assignor may know of a topic."""

    def num_partitions(self, topic_id: uuid.UUID) -> int:
        """The topic's partition count, -1 when it does not exist."""

    def racks_for_partition(self, topic_id: uuid.UUID, partition: int) -> Set[str]:
        """The racks of the partition's replicas."""


@dataclass(frozen=True)
class MemberSpec:
    """One member as an assignor sees it (Kafka's ``MemberSubscriptionAndAssignmentImpl``):
    its rack, instance id, subscribed topic ids and current target assignment (an
    immutable map in Kafka: the assignors copy before changing it)."""

    rack_id: str | None
    instance_id: str | None
    subscribed_topic_ids: Set[uuid.UUID]
    assignment: Partitions = field(default_factory=dict)


class GroupSpec:
    """Kafka's ``GroupSpecImpl``: the members (iterated as Kafka's ``HashMap`` of them is),
    the subscription type and which partitions are assigned now (the inverted target
    assignment, topic id -> partition -> member id)."""

    def __init__(
        self,
        members: Mapping[str, MemberSpec],
        subscription_type: SubscriptionType,
        inverted: Mapping[uuid.UUID, Mapping[int, str]],
    ) -> None:
        self.members = members
        self.subscription_type = subscription_type
        self.inverted = inverted

    @property
    def member_ids(self) -> Collection[str]:
        return self.members.keys()

    def is_partition_assigned(self, topic_id: uuid.UUID, partition: int) -> bool:
        owners = self.inverted.get(topic_id)
        return owners is not None and partition in owners

    def member_subscription(self, member_id: str) -> MemberSpec:
        try:
            return self.members[member_id]
        except KeyError:
            raise ValueError(f"Member Id {member_id} not found.") from None

    def member_assignment(self, member_id: str) -> Partitions:
        member = self.members.get(member_id)
        return member.assignment if member is not None else {}


GroupAssignment = Mapping[str, Partitions]
"""Kafka's ``GroupAssignment``: each member's target partitions."""


class PartitionAssignor(Protocol):
    """Kafka's ``ConsumerGroupPartitionAssignor``."""

    @property
    def name(self) -> str: ...

    def assign(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment: ...


def deep_copy_assignment(assignment: Partitions) -> JavaHashMap[uuid.UUID, Set[int]]:
    """Kafka's ``AssignorHelpers.deepCopyAssignment``: ``new HashMap<>(size)`` with a
    ``new HashSet<>(partitions)`` per topic, in the source's order."""
    copy: JavaHashMap[uuid.UUID, Set[int]] = JavaHashMap(initial_capacity=len(assignment))
    for topic_id, partitions in assignment.items():
        copy[topic_id] = JavaHashSet(partitions)
    return copy


class _Frozen(dict[uuid.UUID, Set[int]]):
    """Marks a map as Kafka's ``Collections.unmodifiableMap`` (``isImmutableMap``): the
    assignors copy it before changing it. Iterates as the map it was made from."""

    def __init__(self, source: Partitions) -> None:
        super().__init__((k, source[k]) for k in source)


def _immutable(assignment: Partitions) -> bool:
    return isinstance(assignment, _Frozen) or not isinstance(assignment, JavaHashMap)


def frozen(assignment: Partitions) -> Partitions:
    """``Collections.unmodifiableMap(assignment)`` (the form an assignor is given)."""
    return assignment if isinstance(assignment, _Frozen) else _Frozen(assignment)


# --- uniform ------------------------------------------------------------------------------


class UniformAssignor:
    """Kafka's ``UniformAssignor`` (name ``uniform``): balanced and sticky."""

    name = "uniform"

    def assign(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        if not group.member_ids:
            return {}
        if group.subscription_type is SubscriptionType.HOMOGENEOUS:
            return _UniformHomogeneous(group, topics).build()
        return _UniformHeterogeneous(group, topics).build()


class _UniformHomogeneous:
    """``UniformHomogeneousAssignmentBuilder``: every member gets ``total // members``
    partitions and ``total % members`` of them one more; a member keeps what it had up to
    its quota (in its assignment's order), and the extra partition goes to the members
    that already hold it where possible (one that did not fill its quota passes the extra
    one on while enough members follow to take them all). The rest is handed out, in
    topic-then-partition order, to the members with room, in member order."""

    def __init__(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> None:
        self.group = group
        self.topics = topics
        first = next(iter(group.member_ids))
        self.subscribed: JavaHashSet[uuid.UUID] = JavaHashSet(
            group.member_subscription(first).subscribed_topic_ids
        )
        self.unfilled: list[tuple[str, int]] = []
        self.unassigned: list[tuple[uuid.UUID, int]] = []
        self.target: JavaHashMap[str, Partitions] = JavaHashMap()
        self.minimum_quota = 0
        self.extra = 0

    def build(self) -> GroupAssignment:
        if not self.subscribed:
            return {}
        total = 0
        for topic_id in self.subscribed:
            count = self.topics.num_partitions(topic_id)
            if count == -1:
                raise PartitionAssignorError(
                    f"Members are subscribed to topic {_kafka_id(topic_id)} which doesn't "
                    "exist in the topic metadata."
                )
            for p in range(count):
                if not self.group.is_partition_assigned(topic_id, p):
                    self.unassigned.append((topic_id, p))
            total += count
        members = len(self.group.member_ids)
        self.minimum_quota, self.extra = divmod(total, members)
        self._revoke()
        self._assign_remaining()
        return self.target

    def _revoke(self) -> None:
        members = len(self.group.member_ids)
        for position, member_id in enumerate(self.group.member_ids):
            old = self.group.member_assignment(member_id)
            if not _immutable(old):
                raise RuntimeError("The assignor expect an immutable map.")
            new: JavaHashMap[uuid.UUID, Set[int]] | None = None
            quota = self.minimum_quota
            extra = self.extra > 0
            if extra:
                quota += 1
            for topic_id, partitions in old.items():
                if topic_id in self.subscribed:
                    if len(partitions) <= quota:
                        quota -= len(partitions)
                        continue
                    for p in partitions:
                        if quota > 0:
                            quota -= 1
                            continue
                        if new is None:
                            new = deep_copy_assignment(old)
                        kept = new[topic_id]
                        assert isinstance(kept, JavaHashSet)
                        kept.discard(p)
                        if not kept:
                            del new[topic_id]
                        self.unassigned.append((topic_id, p))
                else:
                    if new is None:
                        new = deep_copy_assignment(old)
                    del new[topic_id]
            # a member that kept less than its quota leaves the extra partition to a later
            # member while enough of them remain to take every extra one (Kafka 4.3)
            if quota > 0 and extra and members - position > self.extra:
                quota -= 1
                extra = False
            if quota > 0:
                self.unfilled.append((member_id, quota))
            if extra:
                self.extra -= 1
            self.target[member_id] = old if new is None else new

    def _assign_remaining(self) -> None:
        index = 0
        for member_id, quota in self.unfilled:
            assignment = self.target[member_id]
            if _immutable(assignment):
                assignment = deep_copy_assignment(assignment)
                self.target[member_id] = assignment
            assert isinstance(assignment, JavaHashMap)
            taken = 0
            while taken < quota and index < len(self.unassigned):
                topic_id, p = self.unassigned[index]
                index += 1
                taken += 1
                partitions = assignment.compute_if_absent(topic_id, lambda _t: JavaHashSet())
                assert isinstance(partitions, JavaHashSet)
                partitions.add(p)
        if index < len(self.unassigned):
            raise PartitionAssignorError("Partitions were left unassigned")


_MAX_ITERATION_COUNT = 16


class _UniformHeterogeneous:
    """``UniformHeterogeneousAssignmentBuilder``: members keep the partitions of topics
    they still subscribe to; unassigned partitions go to the least loaded subscriber,
    topics with fewer partitions per subscriber first; then partitions move from the most
    to the least loaded subscribers of each topic until no two differ by more than one (at
    most 16 passes)."""

    def __init__(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> None:
        self.group = group
        self.topics = topics
        self.subscribed: JavaHashSet[uuid.UUID] = JavaHashSet()
        self.member_ids = list(group.member_ids)
        self.member_index = {m: i for i, m in enumerate(self.member_ids)}
        self.subscribers: JavaHashMap[uuid.UUID, list[int]] = JavaHashMap()
        self.target: JavaHashMap[str, Partitions] = JavaHashMap()
        self.sizes = [0] * len(self.member_ids)
        for index, member_id in enumerate(self.member_ids):
            for topic_id in group.member_subscription(member_id).subscribed_topic_ids:
                if topics.num_partitions(topic_id) == -1:
                    raise PartitionAssignorError(
                        f"Members are subscribed to topic {_kafka_id(topic_id)} which "
                        "doesn't exist in the topic metadata."
                    )
                self.subscribed.add(topic_id)
                self.subscribers.compute_if_absent(topic_id, lambda _t: []).append(index)
        self.owners: dict[uuid.UUID, list[int]] = {
            t: [-1] * topics.num_partitions(t) for t in self.subscribed
        }

    def _topic_key(self, topic_id: uuid.UUID) -> tuple[float, int, tuple[int, int]]:
        # descending partitions per subscriber, then ascending subscribers, then the id
        partitions = self.topics.num_partitions(topic_id)
        subscribers = len(self.subscribers[topic_id])
        return (-(partitions / subscribers), subscribers, kafka_uuid_key(topic_id))

    def _sorted_topics(self, topic_ids: Collection[uuid.UUID]) -> list[uuid.UUID]:
        return sorted(topic_ids, key=self._topic_key)

    def build(self) -> GroupAssignment:
        if not self.subscribed:
            return {}
        self._revoke()
        self._assign_remaining(self._unassigned())
        self._balance()
        return self.target

    def _revoke(self) -> None:
        for member_id in self.group.member_ids:
            index = self.member_index[member_id]
            old = self.group.member_assignment(member_id)
            if not _immutable(old):
                raise RuntimeError("The assignor expect an immutable map.")
            new: JavaHashMap[uuid.UUID, Set[int]] | None = None
            wanted = self.group.member_subscription(member_id).subscribed_topic_ids
            for topic_id, partitions in old.items():
                if topic_id in wanted:
                    self.sizes[index] += len(partitions)
                    owners = self.owners[topic_id]
                    for p in partitions:
                        owners[p] = index
                else:
                    if new is None:
                        new = deep_copy_assignment(old)
                    del new[topic_id]
            self.target[member_id] = old if new is None else new

    def _unassigned(self) -> JavaHashMap[uuid.UUID, list[int]]:
        out: JavaHashMap[uuid.UUID, list[int]] = JavaHashMap()
        for topic_id in self.subscribed:
            free = [p for p, owner in enumerate(self.owners[topic_id]) if owner == -1]
            if free:
                out[topic_id] = free
        return out

    def _assign_remaining(self, partitions: Mapping[uuid.UUID, list[int]]) -> None:
        balancer = _Balancer(self.sizes)
        for topic_id in self._sorted_topics(list(partitions)):
            balancer.initialize(self.subscribers[topic_id])
            for p in partitions[topic_id]:
                self._assign(topic_id, p, balancer.next_least_loaded())

    def _balance(self) -> None:
        candidates = JavaHashSet(self.subscribed)
        for topic_id in self.subscribed:
            if len(self.subscribers[topic_id]) < 2:
                candidates.discard(topic_id)
        if not candidates:
            return
        ordered = self._sorted_topics(list(candidates))
        last_moved = -1
        balancer = _Balancer(self.sizes)
        for _ in range(_MAX_ITERATION_COUNT):
            for position, topic_id in enumerate(ordered):
                if position == last_moved:
                    return
                moved = self._balance_topic(topic_id, balancer)
                if moved > 0 or last_moved == -1:
                    last_moved = position

    def _balance_topic(self, topic_id: uuid.UUID, balancer: _Balancer) -> int:
        moved = 0
        owners = self.owners[topic_id]
        if balancer.initialize(self.subscribers[topic_id]) <= 1:
            return moved
        ordered = sorted(range(len(owners)), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(ordered):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        while not balancer.is_balanced():
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if most not in end or end[most] - start[most] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            p = ordered[end[most] - 1]
            end[most] -= 1
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic_id, p, least)
            moved += 1
        return moved

    def _assign(self, topic_id: uuid.UUID, p: int, member: int) -> None:
        old = self.owners[topic_id][p]
        if old != -1:
            self._remove(topic_id, p, old)
        self._add(topic_id, p, member)

    def _mutable(self, member: int) -> JavaHashMap[uuid.UUID, Set[int]]:
        member_id = self.member_ids[member]
        assignment = self.target[member_id]
        if _immutable(assignment):
            assignment = deep_copy_assignment(assignment)
            self.target[member_id] = assignment
        assert isinstance(assignment, JavaHashMap)
        return assignment

    def _add(self, topic_id: uuid.UUID, p: int, member: int) -> None:
        def new_set(_t: uuid.UUID) -> Set[int]:
            subscribers = len(self.subscribers[topic_id])
            per_member = (self.topics.num_partitions(topic_id) + subscribers - 1) // subscribers
            return JavaHashSet(initial_capacity=java_float_div_int(per_member) + 1)

        partitions = self._mutable(member).compute_if_absent(topic_id, new_set)
        assert isinstance(partitions, JavaHashSet)
        partitions.add(p)
        self.owners[topic_id][p] = member
        self.sizes[member] += 1

    def _remove(self, topic_id: uuid.UUID, p: int, member: int) -> None:
        assignment = self._mutable(member)
        partitions = assignment.get(topic_id)
        if partitions is not None:
            assert isinstance(partitions, JavaHashSet)
            partitions.discard(p)
            if not partitions:
                del assignment[topic_id]
        self.owners[topic_id][p] = -1
        self.sizes[member] -= 1


class _Balancer:
    """``MemberAssignmentBalancer``: walks a topic's subscribers from the least loaded up
    and from the most loaded down, over ranges of equally loaded members."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.members: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: Sequence[int]) -> int:
        if not members:
            raise ValueError("Cannot balance an empty subscriber list.")
        sizes = self.sizes
        self.members = sorted(members, key=lambda m: (sizes[m], m))
        self.least_end = 0
        self.least_count = sizes[self.members[0]] - 1
        self.next_least = 0
        self.most_start = len(self.members)
        self.most_end = len(self.members)
        self.most_count = sizes[self.members[-1]] + 1
        self.next_most = len(self.members) - 1
        return sizes[self.members[-1]] - sizes[self.members[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while (
                self.least_end < len(self.members)
                and self.sizes[self.members[self.least_end]] == self.least_count
            ):
                self.least_end += 1
            self.next_least = 0
        member = self.members[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.members[self.most_start - 1]]
            else:
                self.most_count -= 1
            while (
                self.most_start > 0
                and self.sizes[self.members[self.most_start - 1]] == self.most_count
            ):
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.members[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        i = self.next_most + 1
        self.members[i], self.members[self.most_end - 1] = (
            self.members[self.most_end - 1],
            self.members[i],
        )
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


# --- range --------------------------------------------------------------------------------


class RangeAssignor:
    """Kafka's ``RangeAssignor`` (name ``range``): per topic, its subscribers sorted
    (static members by instance id first, then the others by member id) each get a
    contiguous range, the first ``partitions % subscribers`` one partition more. Not
    sticky."""

    name = "range"

    def assign(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        if not group.member_ids:
            return {}
        members = self._sorted_members(group)
        count = len(group.member_ids)
        out: JavaHashMap[str, Partitions] = JavaHashMap(
            initial_capacity=java_float_div_int(count) + 1
        )
        if group.subscription_type is SubscriptionType.HOMOGENEOUS:
            subscribed = group.member_subscription(members[0]).subscribed_topic_ids
            ranges = [_Ranges(t, self._partitions(topics, t), count) for t in subscribed]
            for member_id in members:
                assignment: JavaHashMap[uuid.UUID, Set[int]] = JavaHashMap(
                    initial_capacity=java_float_div_int(len(ranges)) + 1
                )
                for r in ranges:
                    r.take(assignment)
                out[member_id] = assignment
            return out
        by_topic: JavaHashMap[uuid.UUID, _Ranges] = JavaHashMap()
        for member_id in members:
            for topic_id in group.member_subscription(member_id).subscribed_topic_ids:
                by_topic.compute_if_absent(
                    topic_id, lambda t: _Ranges(t, self._partitions(topics, t), 0)
                ).members += 1
        for member_id in members:
            subscribed = group.member_subscription(member_id).subscribed_topic_ids
            assignment = JavaHashMap(initial_capacity=java_float_div_int(len(subscribed)) + 1)
            for topic_id in subscribed:
                by_topic[topic_id].take(assignment)
            out[member_id] = assignment
        return out

    @staticmethod
    def _partitions(topics: SubscribedTopicDescriber, topic_id: uuid.UUID) -> int:
        count = topics.num_partitions(topic_id)
        if count == -1:
            raise PartitionAssignorError("Member is subscribed to a non-existent topic")
        return count

    @staticmethod
    def _sorted_members(group: GroupSpec) -> list[str]:
        def key(member_id: str) -> tuple[int, bytes]:
            instance = group.member_subscription(member_id).instance_id
            if instance is not None:
                return (0, java_string_key(instance))
            return (1, java_string_key(member_id))

        return sorted(group.member_ids, key=key)


class _Ranges:
    """``RangeAssignor.TopicMetadata``: the next range of one topic to hand out."""

    def __init__(self, topic_id: uuid.UUID, partitions: int, members: int) -> None:
        self.topic_id = topic_id
        self.partitions = partitions
        self.members = members
        self.quota = -1
        self.extra = -1
        self.next = 0

    def take(self, assignment: JavaHashMap[uuid.UUID, Set[int]]) -> None:
        if self.quota == -1:
            self.quota, self.extra = divmod(self.partitions, self.members)
        quota = self.quota
        if self.extra > 0:
            quota += 1
            self.extra -= 1
        start, end = self.next, min(self.next + quota, self.partitions)
        self.next = end
        if start < end:
            assignment[self.topic_id] = _RangeSet(start, end)


class _RangeSet(Set[int]):
    """Kafka's ``RangeSet``: the partitions ``[start, end)``, iterated in order."""

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and self.start <= value < self.end

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(range(self.start, self.end))

    def __len__(self) -> int:
        return max(0, self.end - self.start)


def _kafka_id(topic_id: uuid.UUID) -> str:
    """A topic id as Kafka prints a ``Uuid`` (URL-safe base64, no padding)."""
    import base64

    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


ASSIGNORS: dict[str, Callable[[], PartitionAssignor]] = {
    UniformAssignor.name: UniformAssignor,
    RangeAssignor.name: RangeAssignor,
}
"""The assignors ``group.consumer.assignors`` may name, by name."""
