"""``__consumer_offsets`` as kafkacore and Apache Kafka 4.3.1 write it for the same
KIP-848 consumer group: both brokers are driven through the same raw requests (the
heartbeat scenario of ``support.consumer_group_scenario``: joins, a revocation, fencing,
static members, then offset commits at member epochs, leaves, an OffsetDelete, a commit
to the empty group and its deletion; then the online migration of a classic group with a
live member, upgraded and downgraded), stopped, and their partition dumped by Kafka's own
``DumpLogSegments --offsets-decoder``. The dumps must be the same line for line: the same
batches at the same offsets and positions, each record's key and value the same.

Normalized, honestly, only what differs between any two clusters: each broker's topic
ids (random per cluster) become topic names, and the lists a broker orders by its own
topic ids' hashes are sorted by topic; the member ids each broker made up for the classic
member become ``classic-1``..., and the records a broker orders by those random ids'
hashes (a batch's run of one record type naming them) are sorted, in place; wall-clock
times (batch and record CreateTime, the batch CRC that covers them, commit and assignment
timestamps) become ``T``. The metadata hash (KIP-1101) covers the topic ids, so it
differs too: each hash a broker wrote is first checked against the hash of that broker's
own topics
(:func:`kafkacore.coordinator.consumer_group.topic_hash`), then named by the topics it
covers."""

from __future__ import annotations

import itertools
import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafkacore.coordinator.consumer_group import group_hash, topic_hash
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from support.brokers import Broker
from support.consumer_group_scenario import (
    COMMON,
    OTHER,
    TOPIC,
    Session,
    migration_scenario,
    prepared,
    scenario,
)
from support.raw_brokers import KafkaNode, Raw

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

GROUP = "g-log"
MIGRATED = "g-migrated"
OVERRIDES = [*COMMON, "group.initial.rebalance.delay.ms=0"]


@dataclass
class Stopped:
    """A broker's ``__consumer_offsets-0`` after the scenario, the broker stopped, and its
    topics (name -> (id, partitions))."""

    partition: Path
    topics: dict[str, tuple[uuid.UUID, int]]
    answers: list[tuple[str, Any]]
    ids: list[str]
    """The member ids the broker made up, in order of appearance."""


def _topics(raw: Raw) -> dict[str, tuple[uuid.UUID, int]]:
    meta = APIS_BY_NAME["Metadata"].request.cls
    m = raw.call(
        "Metadata",
        12,
        topics=[meta.MetadataRequestTopic(name=TOPIC), meta.MetadataRequestTopic(name=OTHER)],
    )
    return {t.name: (t.topic_id, len(t.partitions)) for t in m.topics}


def _commit(raw: Raw, member: str, epoch: int, offsets: Mapping[str, list[int]]) -> Any:
    req = APIS_BY_NAME["OffsetCommit"].request.cls
    answer = raw.call(
        "OffsetCommit",
        9,
        group_id=GROUP,
        generation_id_or_member_epoch=epoch,
        member_id=member,
        group_instance_id=None,
        topics=[
            req.OffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    req.OffsetCommitRequestPartition(
                        partition_index=p,
                        committed_offset=10 + p,
                        committed_leader_epoch=0,
                        committed_metadata=f"m{p}",
                    )
                    for p in partitions
                ],
            )
            for topic, partitions in offsets.items()
        ],
    )
    return sorted(
        (t.name, p.partition_index, ErrorCode(p.error_code).name)
        for t in answer.topics
        for p in t.partitions
    )


def log_scenario(raw: Raw) -> list[tuple[str, Any]]:
    """The heartbeat scenario, then offsets and the group's end; every answer."""
    out = scenario(raw, GROUP)
    answers = dict(out)
    s = Session(raw)
    m2 = answers["m2 subscribes to another topic too"]["member_epoch"]
    s2 = answers["s2 rejoins as i1"]["member_epoch"]

    def step(label: str, answer: Any) -> None:
        out.append((label, answer))

    step("m2 commits", _commit(raw, "m2", m2, {TOPIC: [0, 1, 2, 3], OTHER: [0]}))
    step("s2 commits at its epoch", _commit(raw, "s2", s2, {TOPIC: [1]}))
    step("s2 commits ahead of its epoch", _commit(raw, "s2", s2 + 1, {TOPIC: [1]}))
    step("a simple commit to the live group", _commit(raw, "", -1, {TOPIC: [0]}))
    step("m2 leaves", s.heartbeat(group_id=GROUP, member_id="m2", member_epoch=-1))
    step(
        "s2 leaves for good",
        s.heartbeat(group_id=GROUP, member_id="s2", member_epoch=-1, instance_id="i1"),
    )
    delete = APIS_BY_NAME["OffsetDelete"].request.cls
    deleted = raw.call(
        "OffsetDelete",
        0,
        group_id=GROUP,
        topics=[
            delete.OffsetDeleteRequestTopic(
                name=OTHER, partitions=[delete.OffsetDeleteRequestPartition(partition_index=0)]
            )
        ],
    )
    step(
        "offset delete",
        (
            deleted.error_code,
            [(p.partition_index, p.error_code) for p in deleted.topics[0].partitions],
        ),
    )
    step("a simple commit to the empty group", _commit(raw, "", -1, {TOPIC: [0]}))
    gone = raw.call("DeleteGroups", 2, groups_names=[GROUP])
    step("delete", [(r.group_id, r.error_code) for r in gone.results])
    return out


@pytest.fixture(scope="module")
def kafka(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Stopped:
    node = KafkaNode(kafka_libs, tmp_path_factory.mktemp("kafka"), OVERRIDES).start()
    try:
        raw = prepared(Raw(node.port))
        ids: list[str] = []
        answers = log_scenario(raw) + migration_scenario(raw, MIGRATED, ids)
        topics = _topics(raw)
    finally:
        node.stop()
    return Stopped(node.home / "data" / "__consumer_offsets-0", topics, answers, ids)


@pytest.fixture(scope="module")
def kafkacore(tmp_path_factory: pytest.TempPathFactory) -> Stopped:
    data = tmp_path_factory.mktemp("kafkacore") / "data"
    broker = Broker(data, OVERRIDES).start()
    try:
        raw = prepared(Raw(broker.port))
        ids: list[str] = []
        answers = log_scenario(raw) + migration_scenario(raw, MIGRATED, ids)
        topics = _topics(raw)
    finally:
        broker.stop()
    return Stopped(data / "__consumer_offsets-0", topics, answers, ids)


_WALL_CLOCK = re.compile(r"(CreateTime: |crc: )-?\d+")
_WALL_CLOCK_FIELD = re.compile(
    r'("(?:commitTimestamp|assignmentTimestamp|currentStateTimestamp|timestamp)":)-?\d+'
)
_HASH = re.compile(r'"metadataHash":(-?\d+)')


def _hash_names(topics: Mapping[str, tuple[uuid.UUID, int]]) -> dict[int, str]:
    """Each metadata hash the broker may write (of every subset of its topics), named by
    the topics it covers: ``topic_hash`` over the broker's own topic ids, as Kafka's."""

    class Image:
        def topic_id(self, name: str) -> uuid.UUID | None:
            return topics[name][0] if name in topics else None

        def partition_count(self, topic_id: uuid.UUID) -> int:
            return next(n for i, n in topics.values() if i == topic_id)

        def partition_racks(self, topic_id: uuid.UUID, partition: int) -> list[str]:
            return []

    image = Image()
    names: dict[int, str] = {0: "none"}
    for size in range(1, len(topics) + 1):
        for subset in itertools.combinations(sorted(topics), size):
            hashes = {name: topic_hash(image, name) for name in subset}  # type: ignore[arg-type]
            names[group_hash(hashes)] = "+".join(subset)
    return names


_RECORD = re.compile(
    r"^\| offset: (?P<offset>\d+) CreateTime: T keySize: (?P<rest>-?\d+ valueSize: -?\d+) "
    r"sequence: (?P<sequence>-?\d+) headerKeys: \[\] key: (?P<key>\{.*?\}) payload: (?P<value>.*)$"
)
_BY_TOPIC_ID = ("topicPartitions", "assignedPartitions", "partitionsPendingRevocation")


def _sorted_by_topic(value: Any) -> Any:
    """The JSON ``value`` with its lists of partitions by topic sorted: a broker lists
    them in the order its own (random) topic ids hash to."""
    if isinstance(value, dict):
        return {
            k: sorted((_sorted_by_topic(x) for x in v), key=json.dumps)
            if k in _BY_TOPIC_ID and isinstance(v, list)
            else _sorted_by_topic(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_sorted_by_topic(x) for x in value]
    return value


def _normalized(dump: str, stopped: Stopped) -> list[str]:
    from kafkacore.log.checkpoints import uuid_to_base64

    topics = stopped.topics
    hashes = _hash_names(topics)
    lines: list[str] = []
    for line in dump.splitlines():
        if line.startswith("Dumping ") or line.startswith("Log starting offset"):
            continue
        for n, member_id in enumerate(stopped.ids, 1):
            line = line.replace(member_id, f"classic-{n}")
        for name, (topic_id, _) in topics.items():
            line = line.replace(uuid_to_base64(topic_id), f"<{name}>")
        line = _WALL_CLOCK.sub(r"\1T", line)
        line = _WALL_CLOCK_FIELD.sub(r'\1"T"', line)

        def named(match: re.Match[str], line: str = line) -> str:
            value = int(match.group(1))
            assert value in hashes, f"a metadata hash of no set of topics: {line}"
            return f'"metadataHash":"{hashes[value]}"'

        line = _HASH.sub(named, line)
        record = _RECORD.match(line)
        if record is not None and record["value"].startswith("{"):
            value = json.dumps(_sorted_by_topic(json.loads(record["value"])), separators=(",", ":"))
            line = line[: record.start("value")] + value
        lines.append(line)
    return _members_in_order(lines)


def _members_in_order(lines: list[str]) -> list[str]:
    """Runs of records of one type in one batch that name a member id the broker made up
    sorted (a broker writes them in the order its own random ids hash to); their offsets
    and sequence numbers stay where they were."""
    out = list(lines)
    i = 0
    while i < len(out):
        first = _RECORD.match(out[i])
        if first is None:
            i += 1
            continue
        kind = json.loads(first["key"])["type"]
        j = i
        while j < len(out):
            m = _RECORD.match(out[j])
            if m is None or json.loads(m["key"])["type"] != kind:
                break
            j += 1
        run = out[i:j]
        if len(run) > 1 and any("classic-" in line for line in run):
            matches = [_RECORD.match(line) for line in run]
            moved = sorted((m["rest"], m["key"], m["value"]) for m in matches if m is not None)
            out[i:j] = [
                f"| offset: {m['offset']} CreateTime: T keySize: {rest} sequence: {m['sequence']} "
                f"headerKeys: [] key: {key} payload: {value}"
                for m, (rest, key, value) in zip(matches, moved, strict=True)
                if m is not None
            ]
        i = max(j, i + 1)
    return out


def _dump(java: Any, partition: Path) -> str:
    files = sorted(partition.glob("*.log"))
    assert files, partition
    result = java.dump_log_segments(files, "--offsets-decoder", "--deep-iteration").check()
    text: str = result.stdout.decode("utf-8")
    return text


def test_same_answers(kafka: Stopped, kafkacore: Stopped) -> None:
    mismatches = [
        (t[0], t[1], o[1]) for t, o in zip(kafka.answers, kafkacore.answers, strict=True) if t != o
    ]
    assert not mismatches, "\n".join(
        f"{label}:\n  Kafka {t}\n  ours  {o}" for label, t, o in mismatches
    )


def test_consumer_offsets_line_identical(kafka: Stopped, kafkacore: Stopped, java: Any) -> None:
    dumps = {"kafka": _dump(java, kafka.partition), "kafkacore": _dump(java, kafkacore.partition)}
    for text in dumps.values():  # every value decoded (Kafka's decoder prints JSON)
        for line in text.splitlines():
            if " payload: {" in line:
                json.loads(line.split(" payload: ", 1)[1])
    theirs = _normalized(dumps["kafka"], kafka)
    ours = _normalized(dumps["kafkacore"], kafkacore)
    assert any('"type":"8"' in line for line in theirs)  # the scenario wrote group records
    assert any('"classicMemberMetadata":{' in line for line in theirs)  # and the migration
    assert any("<DELETE>" in line for line in theirs)
    if theirs != ours:
        diff = [
            f"{i}:\n  Kafka {t}\n  ours  {o}"
            for i, (t, o) in enumerate(itertools.zip_longest(theirs, ours))
            if t != o
        ]
        raise AssertionError(f"{len(diff)} lines differ:\n" + "\n".join(diff[:20]))
