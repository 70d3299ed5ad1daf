"""The server-side assignors against Kafka 4.3.1's own classes (``UniformAssignor`` with
its homogeneous and heterogeneous builders, ``RangeAssignor``), on generated groups:
members with or without instance ids, subscriptions over existing and missing topics, and
current assignments (sticky inputs: partitions kept, over quota, of topics no longer
subscribed). ``tests/interop/java/Assignors.java`` fills Kafka's HashMaps and HashSets in
the order drawn, as ours are filled; the answers must be equal, down to the iteration
order of members, topics and partitions (the order Kafka's records list them in)."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore._java import JavaHashMap, JavaHashSet
from kafkacore.coordinator.assignor import (
    GroupSpec,
    MemberSpec,
    PartitionAssignorError,
    RangeAssignor,
    SubscriptionType,
    UniformAssignor,
    frozen,
)
from support.budget import examples

pytestmark = pytest.mark.interop

KAFKA_ASSIGNOR_ERROR = "org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException"


def kafka_id(topic_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def from_kafka_id(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


@pytest.fixture(scope="module")
def kafka(java: Any) -> Iterator[Any]:
    with java.serve("Assignors") as server:
        yield server


class Topics:
    def __init__(self, counts: dict[uuid.UUID, int]) -> None:
        self.counts = counts

    def num_partitions(self, topic_id: uuid.UUID) -> int:
        return self.counts.get(topic_id, -1)

    def racks_for_partition(self, topic_id: uuid.UUID, partition: int) -> set[str]:
        return set()


@st.composite
def groups(draw: st.DrawFn) -> dict[str, Any]:
    """A case as Assignors.java reads it."""
    topic_ids = draw(st.lists(st.uuids(), min_size=1, max_size=5, unique=True))
    counts = {t: draw(st.integers(0, 24)) for t in topic_ids}
    missing = draw(st.sampled_from([None, *[None] * 9, uuid.uuid4()]))
    known = list(counts)
    homogeneous = draw(st.booleans())
    id_alphabet = st.sampled_from("abcdefgMNOPxyz0123456789-")
    member_ids = draw(
        st.lists(
            st.one_of(st.uuids().map(str), st.text(id_alphabet, min_size=1, max_size=6)),
            min_size=1,
            max_size=9,
            unique=True,
        )
    )
    shared = draw(st.lists(st.sampled_from(known), min_size=1, unique=True))
    if missing is not None:
        shared = [*shared, missing]
    owner: dict[tuple[uuid.UUID, int], str] = {}
    members = []
    for member_id in member_ids:
        subscribed = (
            shared
            if homogeneous
            else draw(st.lists(st.sampled_from(known), min_size=0, unique=True))
        )
        assignment: list[list[Any]] = []
        for topic_id in draw(st.lists(st.sampled_from(known), unique=True, max_size=3)):
            free = [p for p in range(counts[topic_id]) if (topic_id, p) not in owner]
            taken = draw(st.lists(st.sampled_from(free), unique=True)) if free else []
            for p in taken:
                owner[(topic_id, p)] = member_id
            if taken:
                assignment.append([kafka_id(topic_id), taken])
        members.append(
            {
                "id": member_id,
                "instance": draw(st.sampled_from([None, None, f"i-{member_id}"])),
                "rack": draw(st.sampled_from([None, "r1", "r2"])),
                "subscribed": [kafka_id(t) for t in subscribed],
                "assignment": assignment,
            }
        )
    return {
        "assignor": draw(st.sampled_from(["uniform", "range"])),
        "type": "HOMOGENEOUS" if homogeneous else "HETEROGENEOUS",
        "topics": [[kafka_id(t), c] for t, c in counts.items()],
        "members": members,
    }


def ours(case: dict[str, Any]) -> str:
    """Our answer in Assignors.java's form."""
    counts = {from_kafka_id(t): c for t, c in case["topics"]}
    members: JavaHashMap[str, MemberSpec] = JavaHashMap()
    inverted: dict[uuid.UUID, dict[int, str]] = {}
    for m in case["members"]:
        subscribed: JavaHashSet[uuid.UUID] = JavaHashSet()
        for t in m["subscribed"]:
            subscribed.add(from_kafka_id(t))
        assignment: JavaHashMap[uuid.UUID, Any] = JavaHashMap()
        for t, ps in m["assignment"]:
            topic_id = from_kafka_id(t)
            parts: JavaHashSet[int] = JavaHashSet()
            for p in ps:
                parts.add(p)
                inverted.setdefault(topic_id, {})[p] = m["id"]
            assignment[topic_id] = parts
        members[m["id"]] = MemberSpec(m["rack"], m["instance"], subscribed, frozen(assignment))
    spec = GroupSpec(members, SubscriptionType[case["type"]], inverted)
    assignor = RangeAssignor() if case["assignor"] == "range" else UniformAssignor()
    try:
        result = assignor.assign(spec, Topics(counts))
    except PartitionAssignorError as exc:
        return (
            f"err org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException: {exc}"
        )
    return json.dumps(
        [
            [member_id, [[kafka_id(t), list(ps)] for t, ps in assignment.items()]]
            for member_id, assignment in result.items()
        ],
        separators=(",", ":"),
    )


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=groups())
def test_assignment_equals_kafkas(kafka: Any, case: dict[str, Any]) -> None:
    theirs = kafka.ask(json.dumps(case, separators=(",", ":")))
    assert ours(case) == theirs, case


def test_unknown_topic_is_kafkas_error(kafka: Any) -> None:
    known, missing = uuid.UUID(int=1), uuid.UUID(int=2)
    case = {
        "assignor": "uniform",
        "type": "HOMOGENEOUS",
        "topics": [[kafka_id(known), 3]],
        "members": [
            {
                "id": "m",
                "instance": None,
                "rack": None,
                "subscribed": [kafka_id(known), kafka_id(missing)],
                "assignment": [],
            }
        ],
    }
    theirs = kafka.ask(json.dumps(case))
    assert theirs.startswith("err ") and "doesn't exist in the topic metadata" in theirs
    assert ours(case) == theirs
