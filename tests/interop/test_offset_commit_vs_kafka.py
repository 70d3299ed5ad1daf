"""OffsetCommit answered by kafkacore and by a real Apache Kafka 4.3.1 broker (started from
its jars, KRaft, one node) for the same raw requests, compared field by field.

One scenario drives a classic group through every state a client can reach over the
wire and commits at each: CompletingRebalance (after the only member's JoinGroup),
Stable (after its SyncGroup), PreparingRebalance (a second member's JoinGroup in flight),
Empty (both left), and after DeleteGroups (Kafka's Dead group is removed at once, so a
commit then finds no group: a simple commit creates one, a generation is refused). Each
commit mixes partitions of a missing topic, a missing partition and over-long metadata
with valid ones, at OffsetCommit v2 (with RetentionTimeMs), v8 and v9. Only the
OffsetCommit responses are compared (the setup steps are asserted to succeed on both);
then both brokers' ``__consumer_offsets`` is dumped by Kafka's ``DumpLogSegments
--offsets-decoder``: the same offset records, with the same value versions, and an
expire timestamp RetentionTimeMs after the commit for the v2 commits that set one."""

from __future__ import annotations

import base64
import json
import re
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from support.brokers import Broker
from support.raw_brokers import KafkaNode, Raw, until

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

TOPIC = "t"
SESSION_MS = 10_000
REBALANCE_MS = 5_000
METADATA_MAX = 4096  # offset.metadata.max.bytes, the same default on both
COMMON = ["offsets.topic.num.partitions=1", "group.initial.rebalance.delay.ms=0"]


# --- a raw client ---------------------------------------------------------------------------


# --- the two brokers ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kafka(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    broker = KafkaNode(kafka_libs, tmp_path_factory.mktemp("kafka"), COMMON).start()
    try:
        yield _prepared(Raw(broker.port, broker.home / "data"))
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def kafkacore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    data = tmp_path_factory.mktemp("kafkacore") / "data"
    broker = Broker(data, COMMON).start()
    try:
        yield _prepared(Raw(broker.port, data))
    finally:
        broker.stop()


def _prepared(raw: Raw) -> Raw:
    """The topic the scenario commits to (2 partitions), with a leader for each."""
    req = APIS_BY_NAME["CreateTopics"].request.cls
    created = raw.call(
        "CreateTopics",
        5,
        topics=[req.CreatableTopic(name=TOPIC, num_partitions=2, replication_factor=1)],
        timeout_ms=30_000,
    )
    assert created.topics[0].error_code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)
    meta = APIS_BY_NAME["Metadata"].request.cls

    def ready() -> bool:
        m = raw.call("Metadata", 9, topics=[meta.MetadataRequestTopic(name=TOPIC)])
        parts = m.topics[0].partitions
        return len(parts) == 2 and all(p.error_code == 0 and p.leader_id >= 0 for p in parts)

    until("the topic has leaders", ready)
    return raw


# --- the scenario ---------------------------------------------------------------------------


def _subscription() -> bytes:
    """ConsumerProtocolSubscription v0 for [TOPIC], no user data."""
    name = TOPIC.encode()
    return struct.pack(">hih", 0, 1, len(name)) + name + struct.pack(">i", -1)


class Scenario:
    """Drives one broker; ``answers`` collects the OffsetCommit responses to compare."""

    def __init__(self, raw: Raw, group: str) -> None:
        self.raw = raw
        self.group = group
        self.answers: list[tuple[str, dict[str, Any]]] = []

    def coordinator_ready(self, group: str) -> None:
        """Until ``group``'s coordinator is found and has loaded its offsets partition:
        FindCoordinator answers before the load ends, and on a busy machine Kafka's
        commits would answer COORDINATOR_LOAD_IN_PROGRESS where ours do not."""
        until(
            f"coordinator of {group}",
            lambda: self.raw.call("FindCoordinator", 1, key=group, key_type=0).error_code == 0,
        )
        until(
            f"offsets of {group} loaded",
            lambda: (
                self.raw.call("OffsetFetch", 2, group_id=group, topics=None).error_code
                == ErrorCode.NONE
            ),
        )

    def commit(
        self,
        label: str,
        version: int,
        generation: int = -1,
        member: str = "",
        instance: str | None = None,
        group: str | None = None,
        retention_ms: int = -1,
        topics: list[tuple[str, list[tuple[int, str | None]]]] | None = None,
    ) -> None:
        cls = APIS_BY_NAME["OffsetCommit"].request.cls
        if topics is None:  # the mix: a missing topic and partition, over-long metadata
            topics = [
                (TOPIC, [(0, "m"), (9, None), (1, "x" * (METADATA_MAX + 1))]),
                ("no-such-topic", [(0, "")]),
            ]
        response = self.raw.call(
            "OffsetCommit",
            version,
            group_id=self.group if group is None else group,
            generation_id_or_member_epoch=generation,
            member_id=member,
            group_instance_id=instance,
            retention_time_ms=retention_ms,
            topics=[
                cls.OffsetCommitRequestTopic(
                    name=name,
                    partitions=[
                        cls.OffsetCommitRequestPartition(
                            partition_index=p,
                            committed_offset=10 + p,
                            committed_leader_epoch=-1,
                            committed_metadata=meta,
                        )
                        for p, meta in partitions
                    ],
                )
                for name, partitions in topics
            ],
        )
        self.answers.append((label, response.to_dict()))

    def join(self, member: str = "") -> Any:
        return self.raw.call("JoinGroup", 5, **self._join_fields(member))

    def _join_fields(self, member: str) -> dict[str, Any]:
        cls = APIS_BY_NAME["JoinGroup"].request.cls
        return {
            "group_id": self.group,
            "session_timeout_ms": SESSION_MS,
            "rebalance_timeout_ms": REBALANCE_MS,
            "member_id": member,
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [cls.JoinGroupRequestProtocol(name="range", metadata=_subscription())],
        }

    def state(self) -> str:
        described = self.raw.call("DescribeGroups", 0, groups=[self.group])
        return str(described.groups[0].group_state)

    def wait_state(self, state: str) -> None:
        until(f"{self.group} {state}", lambda: self.state() == state, 30)

    def run(self) -> list[tuple[str, dict[str, Any]]]:
        self.coordinator_ready(self.group)
        self.coordinator_ready("")  # the empty group id's partition, for its case
        for version in (2, 8, 9):  # all partitions unknown: the group is never consulted
            self.commit(
                f"only-unknown-v{version}",
                version,
                generation=5,
                member="nobody",
                topics=[("no-such-topic", [(0, "")]), (TOPIC, [(7, "")])],
            )
        self.commit("empty-group-id-v8", 8, group="")
        for version in (8, 9):  # no group yet, with a generation
            self.commit(f"no-group-generation-v{version}", version, generation=1, member="m")

        # CompletingRebalance: the only member joined, the leader has not synced
        first = self.join()
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
        joined = self.join(first.member_id)
        assert joined.error_code == 0, joined
        m1, gen = joined.member_id, joined.generation_id
        assert self.state() == "CompletingRebalance"
        self.commit("completing-member-v8", 8, gen, m1)
        self.commit("completing-simple-v8", 8)
        self.commit("completing-wrong-generation-v8", 8, gen + 6, m1)
        self.commit("completing-unknown-member-v8", 8, gen, "unknown-member")
        self.commit("completing-unknown-instance-v8", 8, gen, m1, instance="i-1")

        # Stable
        sync_cls = APIS_BY_NAME["SyncGroup"].request.cls
        synced = self.raw.call(
            "SyncGroup",
            3,
            group_id=self.group,
            generation_id=gen,
            member_id=m1,
            group_instance_id=None,
            assignments=[sync_cls.SyncGroupRequestAssignment(member_id=m1, assignment=b"")],
        )
        assert synced.error_code == 0, synced
        assert self.state() == "Stable"
        for version in (2, 8, 9):
            self.commit(f"stable-member-v{version}", version, gen, m1)
        self.commit("stable-member-retention-v2", 2, gen, m1, retention_ms=60_000)
        self.commit("stable-simple-v8", 8)
        self.commit("stable-wrong-generation-v9", 9, gen + 1, m1)

        # PreparingRebalance: a second member's JoinGroup waits for the first to rejoin
        second = self.join()
        assert second.error_code == ErrorCode.MEMBER_ID_REQUIRED
        pending = self.raw.send("JoinGroup", 5, **self._join_fields(second.member_id))
        self.wait_state("PreparingRebalance")
        self.commit("preparing-member-v8", 8, gen, m1)
        self.commit("preparing-simple-v8", 8)
        self.commit("preparing-wrong-generation-v8", 8, gen + 1, m1)

        # Empty: the first member leaves (the second is alone in generation 2), then it
        leave_cls = APIS_BY_NAME["LeaveGroup"].request.cls
        left = self.raw.call(
            "LeaveGroup", 3, group_id=self.group, members=[leave_cls.MemberIdentity(member_id=m1)]
        )
        assert left.error_code == 0, left
        rejoined = Raw.receive(pending[0], "JoinGroup", 5, pending[1])
        assert rejoined.error_code == 0, rejoined
        m2 = rejoined.member_id
        left = self.raw.call(
            "LeaveGroup", 3, group_id=self.group, members=[leave_cls.MemberIdentity(member_id=m2)]
        )
        assert left.error_code == 0, left
        self.wait_state("Empty")
        self.commit("empty-simple-v8", 8)
        self.commit("empty-simple-retention-v2", 2, retention_ms=60_000)
        self.commit("empty-old-member-v8", 8, rejoined.generation_id, m2)
        self.commit("empty-unknown-instance-v8", 8, instance="i-1")

        # deleted (Dead, and removed)
        deleted = self.raw.call("DeleteGroups", 1, groups_names=[self.group])
        assert deleted.results[0].error_code == 0, deleted
        for version in (8, 9):
            self.commit(f"deleted-generation-v{version}", version, generation=1, member=m2)
        self.commit("deleted-simple-v9", 9)
        return self.answers


def _topic_id(raw: Raw) -> str:
    """The broker's id of TOPIC, as Kafka's ``Uuid.toString()`` prints it."""
    meta = APIS_BY_NAME["Metadata"].request.cls
    m = raw.call("Metadata", 12, topics=[meta.MetadataRequestTopic(name=TOPIC)])
    topic_id: uuid.UUID = m.topics[0].topic_id
    return base64.urlsafe_b64encode(topic_id.bytes).rstrip(b"=").decode()


_RECORD = re.compile(r"key: (\{.*?\}) payload: (\{.*\}|<DELETE>)$")


def _offset_records(java: Any, raw: Raw, group: str) -> list[tuple[Any, ...]]:
    """``(topic, partition, value version, value fields but the timestamps, expire -
    commit timestamp)`` of ``group``'s offset records (tombstones: version
    ``"<DELETE>"``) as Kafka's DumpLogSegments decodes them from the broker's
    ``__consumer_offsets``."""
    assert raw.data is not None
    files = sorted(raw.data.glob("__consumer_offsets-*/*.log"))
    dumped = java.dump_log_segments(files, "--offsets-decoder").check()
    out: list[tuple[Any, ...]] = []
    for line in dumped.stdout.decode().splitlines():
        found = _RECORD.search(line)
        if found is None:
            continue
        key = json.loads(found.group(1))
        if key["type"] != "1" or key["data"]["group"] != group:
            continue
        topic, partition = key["data"]["topic"], key["data"]["partition"]
        if found.group(2) == "<DELETE>":
            out.append((topic, partition, "<DELETE>", None, None))
            continue
        payload = json.loads(found.group(2))
        value = dict(payload["data"])
        if "topicId" in value:  # each broker's own id of the topic
            value["topicId"] = "<id of t>" if value["topicId"] == _topic_id(raw) else "?"
        commit = value.pop("commitTimestamp")
        expire = value.pop("expireTimestamp", None)
        lifetime = None if expire is None else expire - commit
        out.append((topic, partition, payload["version"], value, lifetime))
    return out


def test_offset_commit_answers_as_kafka_does(kafka: Raw, kafkacore: Raw, java: Any) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    theirs = Scenario(kafka, group).run()
    ours = Scenario(kafkacore, group).run()
    assert [label for label, _ in ours] == [label for label, _ in theirs]
    differences = [
        f"{label}:\n  kafkacore {mine}\n  Kafka     {kafkas}"
        for (label, mine), (_, kafkas) in zip(ours, theirs, strict=True)
        if mine != kafkas
    ]
    assert not differences, "\n".join(differences)
    # the scenario exercised the errors it is about, on both brokers
    codes = {
        p["ErrorCode"]
        for _, answer in theirs
        for topic in answer["Topics"]
        for p in topic["Partitions"]
    }
    assert {
        ErrorCode.NONE,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.OFFSET_METADATA_TOO_LARGE,
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.ILLEGAL_GENERATION,
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.GROUP_ID_NOT_FOUND,
    } <= codes

    # the records written: the same, with RetentionTimeMs as an expire timestamp (v1)
    their_records = _offset_records(java, kafka, group)
    assert _offset_records(java, kafkacore, group) == their_records
    assert [r for r in their_records if r[4] is not None] == [
        ("t", 0, "1", {"offset": 10, "metadata": "m"}, 60_000)
    ] * 2
