"""A KIP-848 consumer group driven by raw requests, the same on kafkacore and on Apache
Kafka 4.3.1, for the tests that compare the two: the answers field by field
(``interop/test_consumer_group_heartbeat_vs_kafka.py``) and the ``__consumer_offsets``
records both write (``interop/test_consumer_group_log_vs_kafka.py``).

The steps: a join, the steady state, a second member's join (the first revokes half its
partitions before the second gets them, which wait unreleased meanwhile), fencing (an
epoch ahead, an old epoch that is not the previous one, an unknown member), a static
member's temporary leave and rejoin under a new member id (and an instance id still
held: UNRELEASED_INSTANCE_ID), a leave, and bad requests (empty ids, an invalid epoch, a
missing rebalance timeout, an unknown assignor); then ConsumerGroupDescribe and
ListGroups of the group. Answers are normalized, honestly: topic ids (random per
cluster) become topic names, and the order of topics and partitions within an assignment
is sorted (it follows each broker's hash of its own topic ids)."""

from __future__ import annotations

import uuid
from typing import Any

from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from support.raw_brokers import Raw, until

__all__ = ["COMMON", "HB", "OTHER", "TOPIC", "Session", "prepared", "scenario"]

TOPIC = "hb"
OTHER = "hb-other"
COMMON = ["offsets.topic.num.partitions=1", "group.consumer.assignment.interval.ms=0"]
"""Both brokers' overrides: one ``__consumer_offsets`` partition, and no answer that
depends on timing."""
HB = "ConsumerGroupHeartbeat"


def prepared(raw: Raw) -> Raw:
    req = APIS_BY_NAME["CreateTopics"].request.cls
    for name, partitions in ((TOPIC, 4), (OTHER, 2)):
        created = raw.call(
            "CreateTopics",
            5,
            topics=[req.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)],
            timeout_ms=30_000,
        )
        assert created.topics[0].error_code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)
    meta = APIS_BY_NAME["Metadata"].request.cls

    def ready() -> bool:
        m = raw.call("Metadata", 12, topics=[meta.MetadataRequestTopic(name=TOPIC)])
        parts = m.topics[0].partitions
        return len(parts) == 4 and all(p.error_code == 0 and p.leader_id >= 0 for p in parts)

    until("the topic has leaders", ready)
    return raw


class Session:
    """Drives one broker; names topic ids back to topic names."""

    def __init__(self, raw: Raw) -> None:
        self.raw = raw
        meta = APIS_BY_NAME["Metadata"].request.cls
        m = raw.call(
            "Metadata",
            12,
            topics=[meta.MetadataRequestTopic(name=TOPIC), meta.MetadataRequestTopic(name=OTHER)],
        )
        self.names = {t.topic_id: t.name for t in m.topics}
        self.ids = {t.name: t.topic_id for t in m.topics}

    def owned(self, owned: dict[str, list[int]] | None) -> Any:
        if owned is None:
            return None
        cls = APIS_BY_NAME[HB].request.cls
        return [cls.TopicPartitions(topic_id=self.ids[t], partitions=ps) for t, ps in owned.items()]

    def heartbeat(
        self, version: int = 1, owned: dict[str, list[int]] | None = None, **fields: Any
    ) -> dict[str, Any]:
        fields.setdefault("rebalance_timeout_ms", -1)
        answer = self.raw.call(HB, version, topic_partitions=self.owned(owned), **fields)
        assignment = None
        if answer.assignment is not None:
            assignment = sorted(
                (self.names.get(tp.topic_id, "?"), sorted(tp.partitions))
                for tp in answer.assignment.topic_partitions
            )
        return {
            "throttle_time_ms": answer.throttle_time_ms,
            "error_code": ErrorCode(answer.error_code).name,
            "error_message": answer.error_message,
            "member_id": answer.member_id,
            "member_epoch": answer.member_epoch,
            "heartbeat_interval_ms": answer.heartbeat_interval_ms,
            "assignment": assignment,
        }

    def describe(self, group: str) -> list[dict[str, Any]]:
        answer = self.raw.call(
            "ConsumerGroupDescribe", 1, group_ids=[group], include_authorized_operations=False
        )
        out = []
        for g in answer.groups:
            members = sorted(
                (
                    m.member_id,
                    m.instance_id,
                    m.rack_id,
                    m.member_epoch,
                    m.client_id,
                    sorted(m.subscribed_topic_names),
                    m.subscribed_topic_regex,
                    sorted(
                        (tp.topic_name, sorted(tp.partitions))
                        for tp in m.assignment.topic_partitions
                    ),
                    sorted(
                        (tp.topic_name, sorted(tp.partitions))
                        for tp in m.target_assignment.topic_partitions
                    ),
                    m.member_type,
                )
                for m in g.members
            )
            out.append(
                {
                    "error_code": g.error_code,
                    "error_message": g.error_message,
                    "group_id": g.group_id,
                    "group_state": g.group_state,
                    "group_epoch": g.group_epoch,
                    "assignment_epoch": g.assignment_epoch,
                    "assignor_name": g.assignor_name,
                    "members": members,
                    "authorized_operations": g.authorized_operations,
                }
            )
        return out

    def listed(self, group: str, types: list[str]) -> list[tuple[str, str, str, str]]:
        answer = self.raw.call("ListGroups", 5, states_filter=[], types_filter=types)
        return sorted(
            (g.group_id, g.protocol_type, g.group_state, g.group_type)
            for g in answer.groups
            if g.group_id == group
        )


def await_coordinator(raw: Raw, group: str) -> None:
    """Until the broker coordinates ``group`` with its partition loaded (a coordinator is
    found before the partition is loaded)."""
    until(
        "coordinator",
        lambda: (
            raw.call("FindCoordinator", 4, key_type=0, coordinator_keys=[group])
            .coordinators[0]
            .error_code
            == 0
        ),
    )
    until(
        "the group's partition loaded",
        lambda: (
            raw.call("ConsumerGroupDescribe", 1, group_ids=[group]).groups[0].error_code
            == ErrorCode.GROUP_ID_NOT_FOUND
        ),
    )


def scenario(raw: Raw, group: str) -> list[tuple[str, Any]]:
    """The steps and their normalized answers."""
    s = Session(raw)
    await_coordinator(raw, group)
    out: list[tuple[str, Any]] = []

    def step(label: str, answer: Any) -> Any:
        out.append((label, answer))
        return answer

    join = {"group_id": group, "member_epoch": 0, "rebalance_timeout_ms": 30_000}
    a = step(
        "m1 joins", s.heartbeat(member_id="m1", subscribed_topic_names=[TOPIC], owned={}, **join)
    )
    step("m1 steady", s.heartbeat(group_id=group, member_id="m1", member_epoch=a["member_epoch"]))
    step(
        "m1 full heartbeat",
        s.heartbeat(
            group_id=group,
            member_id="m1",
            member_epoch=a["member_epoch"],
            rebalance_timeout_ms=30_000,
            subscribed_topic_names=[TOPIC],
            owned={TOPIC: [0, 1, 2, 3]},
        ),
    )
    b = step(
        "m2 joins", s.heartbeat(member_id="m2", subscribed_topic_names=[TOPIC], owned={}, **join)
    )
    step("describe while m2 waits", s.describe(group))
    r = step(
        "m1 asked to revoke",
        s.heartbeat(
            group_id=group,
            member_id="m1",
            member_epoch=a["member_epoch"],
            owned={TOPIC: [0, 1, 2, 3]},
        ),
    )
    kept = dict(r["assignment"] or [])
    r2 = step(
        "m1 revoked",
        s.heartbeat(group_id=group, member_id="m1", member_epoch=a["member_epoch"], owned=kept),
    )
    step(
        "m2 gets released partitions",
        s.heartbeat(group_id=group, member_id="m2", member_epoch=b["member_epoch"], owned={}),
    )
    step("describe reconciled", s.describe(group))
    step("epoch ahead is fenced", s.heartbeat(group_id=group, member_id="m2", member_epoch=99))
    step(
        "previous epoch owning more than assigned is fenced",
        s.heartbeat(
            group_id=group,
            member_id="m1",
            member_epoch=a["member_epoch"],
            owned={TOPIC: [0, 1, 2, 3]},
        ),
    )
    step("unknown member", s.heartbeat(group_id=group, member_id="nobody", member_epoch=3))
    step("unknown group", s.heartbeat(group_id=group + "-none", member_id="m9", member_epoch=1))
    step(
        "m2 subscribes to another topic too",
        s.heartbeat(
            group_id=group,
            member_id="m2",
            member_epoch=r2["member_epoch"],
            subscribed_topic_names=[TOPIC, OTHER],
        ),
    )
    # static membership
    st = {"group_id": group, "member_epoch": 0, "rebalance_timeout_ms": 30_000, "instance_id": "i1"}
    j = step(
        "static s1 joins",
        s.heartbeat(member_id="s1", subscribed_topic_names=[TOPIC], owned={}, **st),
    )
    step(
        "s2 takes i1 while held",
        s.heartbeat(member_id="s2", subscribed_topic_names=[TOPIC], owned={}, **st),
    )
    step(
        "s1 leaves for now",
        s.heartbeat(group_id=group, member_id="s1", member_epoch=-2, instance_id="i1"),
    )
    step(
        "s2 rejoins as i1",
        s.heartbeat(member_id="s2", subscribed_topic_names=[TOPIC], owned={}, **st),
    )
    step(
        "s1 is fenced by s2",
        s.heartbeat(
            group_id=group, member_id="s1", member_epoch=j["member_epoch"], instance_id="i1"
        ),
    )
    step("m1 leaves", s.heartbeat(group_id=group, member_id="m1", member_epoch=-1))
    step("m1 leaves again", s.heartbeat(group_id=group, member_id="m1", member_epoch=-1))
    step("describe after", s.describe(group))
    step("list consumer", s.listed(group, ["consumer"]))
    step("list classic", s.listed(group, ["classic"]))
    # bad input
    step(
        "empty group id",
        s.heartbeat(
            group_id="",
            member_id="x",
            member_epoch=0,
            rebalance_timeout_ms=1,
            subscribed_topic_names=[TOPIC],
            owned={},
        ),
    )
    step(
        "blank member id v1",
        s.heartbeat(
            group_id=group,
            member_id=" ",
            member_epoch=0,
            rebalance_timeout_ms=1,
            subscribed_topic_names=[TOPIC],
            owned={},
        ),
    )
    step("epoch -3", s.heartbeat(group_id=group, member_id="x", member_epoch=-3))
    step(
        "no rebalance timeout",
        s.heartbeat(
            group_id=group, member_id="x", member_epoch=0, subscribed_topic_names=[TOPIC], owned={}
        ),
    )
    step(
        "owned on join",
        s.heartbeat(
            group_id=group,
            member_id="x",
            member_epoch=0,
            rebalance_timeout_ms=1,
            subscribed_topic_names=[TOPIC],
            owned={TOPIC: [0]},
        ),
    )
    step(
        "no subscription on join",
        s.heartbeat(
            group_id=group, member_id="x", member_epoch=0, rebalance_timeout_ms=1, owned={}
        ),
    )
    step(
        "unknown assignor",
        s.heartbeat(
            group_id=group,
            member_id="x",
            member_epoch=0,
            rebalance_timeout_ms=1,
            subscribed_topic_names=[TOPIC],
            owned={},
            server_assignor="sticky",
        ),
    )
    step(
        "static leave without instance", s.heartbeat(group_id=group, member_id="x", member_epoch=-2)
    )
    step("describe unknown group", s.describe(group + "-none"))
    return out


# --- the online migration: classic members and consumer-protocol members in one group ------


def subscription_bytes(topics: list[str], version: int = 0) -> bytes:
    """A classic consumer's JoinGroup metadata (ConsumerProtocolSubscription at
    ``version``; no owned partitions, as an eager consumer rejoins)."""
    from kafkacore.coordinator.codec import write_message
    from kafkacore.coordinator.records import CONSUMER_PROTOCOL_SUBSCRIPTION

    body = write_message(CONSUMER_PROTOCOL_SUBSCRIPTION, {"topics": topics}, version)
    return version.to_bytes(2, "big", signed=True) + body


def assignment_of(data: bytes) -> list[tuple[str, list[int]]]:
    """A SyncGroup assignment's partitions, sorted (its version and bytes aside)."""
    from kafkacore.coordinator.records import decode_consumer_assignment

    if not data:
        return []
    decoded = decode_consumer_assignment(data)
    return sorted((tp["topic"], sorted(tp["partitions"])) for tp in decoded["assignedPartitions"])


class Classic:
    """A classic member driven by raw JoinGroup/SyncGroup/Heartbeat/LeaveGroup; the
    member ids the broker makes up are kept in ``ids`` (to compare two brokers' answers
    by their order of appearance)."""

    def __init__(self, raw: Raw, group: str, ids: list[str]) -> None:
        self.raw = raw
        self.group = group
        self.ids = ids
        self.member_id = ""
        self.generation = -1

    def _named(self, member_id: str, new: bool = False) -> str:
        if new and member_id and member_id not in self.ids:
            self.ids.append(member_id)
        return f"classic-{self.ids.index(member_id) + 1}" if member_id in self.ids else member_id

    def join(self, topics: list[str]) -> dict[str, Any]:
        req = APIS_BY_NAME["JoinGroup"].request.cls
        answer = self.raw.call(
            "JoinGroup",
            9,
            group_id=self.group,
            session_timeout_ms=45_000,
            rebalance_timeout_ms=30_000,
            member_id=self.member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=[
                req.JoinGroupRequestProtocol(name="range", metadata=subscription_bytes(topics))
            ],
            reason=None,
        )
        if answer.member_id:
            self.member_id = answer.member_id
        if answer.error_code == 0:
            self.generation = answer.generation_id
        return {
            "error_code": ErrorCode(answer.error_code).name,
            "generation_id": answer.generation_id,
            "protocol_type": answer.protocol_type,
            "protocol_name": answer.protocol_name,
            "leader": self._named(answer.leader),
            "skip_assignment": answer.skip_assignment,
            "member_id": self._named(answer.member_id, new=True),
            "members": [(self._named(m.member_id), m.group_instance_id) for m in answer.members],
        }

    def sync(self, assignments: dict[str, list[tuple[str, list[int]]]] | None = None) -> Any:
        from kafkacore.coordinator.records import encode_consumer_assignment

        req = APIS_BY_NAME["SyncGroup"].request.cls
        listed = [
            req.SyncGroupRequestAssignment(
                member_id=member, assignment=encode_consumer_assignment(parts, 0)
            )
            for member, parts in (assignments or {}).items()
        ]
        answer = self.raw.call(
            "SyncGroup",
            5,
            group_id=self.group,
            generation_id=self.generation,
            member_id=self.member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocol_name="range",
            assignments=listed,
        )
        return (
            ErrorCode(answer.error_code).name,
            answer.protocol_type,
            answer.protocol_name,
            assignment_of(bytes(answer.assignment)),
        )

    def heartbeat(self) -> str:
        answer = self.raw.call(
            "Heartbeat",
            4,
            group_id=self.group,
            generation_id=self.generation,
            member_id=self.member_id,
            group_instance_id=None,
        )
        return ErrorCode(answer.error_code).name

    def commit(self, offsets: dict[str, list[int]]) -> list[tuple[str, int, str]]:
        req = APIS_BY_NAME["OffsetCommit"].request.cls
        answer = self.raw.call(
            "OffsetCommit",
            8,
            group_id=self.group,
            generation_id_or_member_epoch=self.generation,
            member_id=self.member_id,
            group_instance_id=None,
            topics=[
                req.OffsetCommitRequestTopic(
                    name=topic,
                    partitions=[
                        req.OffsetCommitRequestPartition(
                            partition_index=p, committed_offset=20 + p, committed_metadata=""
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

    def leave(self) -> Any:
        req = APIS_BY_NAME["LeaveGroup"].request.cls
        answer = self.raw.call(
            "LeaveGroup",
            5,
            group_id=self.group,
            members=[req.MemberIdentity(member_id=self.member_id, group_instance_id=None)],
        )
        return (
            ErrorCode(answer.error_code).name,
            [(self._named(m.member_id), ErrorCode(m.error_code).name) for m in answer.members],
        )

    def describe(self) -> Any:
        answer = self.raw.call("DescribeGroups", 6, groups=[self.group])
        g = answer.groups[0]
        return (
            ErrorCode(g.error_code).name,
            g.group_state,
            g.protocol_type,
            g.protocol_data,
            sorted(self._named(m.member_id) for m in g.members),
        )


def migration_scenario(raw: Raw, group: str, ids: list[str]) -> list[tuple[str, Any]]:
    """A classic group with a live member is upgraded when a consumer-protocol member
    joins (the classic member rejoins and keeps half the partitions), then downgraded when
    that member leaves (the classic member rejoins the classic group): every answer."""
    await_coordinator(raw, group)
    s = Session(raw)
    c1 = Classic(raw, group, ids)
    out: list[tuple[str, Any]] = []

    def step(label: str, answer: Any) -> Any:
        out.append((label, answer))
        return answer

    def described() -> list[dict[str, Any]]:
        groups = s.describe(group)
        for g in groups:
            g["members"] = sorted((c1._named(m[0]), *m[1:]) for m in g["members"])
        return groups

    step("c1 joins: member id required", c1.join([TOPIC]))
    step("c1 joins the classic group", c1.join([TOPIC]))
    everything = [(TOPIC, [0, 1, 2, 3])]
    step("c1 syncs as leader", c1.sync({c1.member_id: everything}))
    step("c1 commits", c1.commit({TOPIC: [0, 1]}))
    step("classic group described", c1.describe())
    join = {"group_id": group, "member_epoch": 0, "rebalance_timeout_ms": 30_000}
    m = step(
        "m1 joins: the group is upgraded",
        s.heartbeat(member_id="m1", subscribed_topic_names=[TOPIC], owned={}, **join),
    )
    step("consumer group described", described())
    step("listed as a consumer group", s.listed(group, []))
    step("c1 heartbeat: rebalance", c1.heartbeat())
    step("c1 commits at its old generation", c1.commit({TOPIC: [0]}))
    step("c1 rejoins the consumer group", c1.join([TOPIC]))
    step("c1 syncs", c1.sync())
    step("c1 heartbeat", c1.heartbeat())
    step(
        "m1 gets the released partitions",
        s.heartbeat(group_id=group, member_id="m1", member_epoch=m["member_epoch"], owned={}),
    )
    step("c1 commits at its epoch", c1.commit({TOPIC: [0, 1]}))
    step("mixed group described", described())
    step("DescribeGroups of a consumer group", c1.describe())
    step(
        "m1 leaves: the group is downgraded",
        s.heartbeat(group_id=group, member_id="m1", member_epoch=-1),
    )
    step("classic again, rebalancing", c1.describe())
    step("c1 heartbeat: rebalance", c1.heartbeat())
    step("c1 rejoins the classic group", c1.join([TOPIC]))
    step("c1 syncs as leader again", c1.sync({c1.member_id: everything}))
    step("listed as a classic group", s.listed(group, []))
    step("c1 leaves", c1.leave())
    return out


# --- per-group dynamic configs (ConfigResource GROUP) ------------------------------------------

GROUP_RESOURCE = 32


def describe_group_configs(raw: Raw, group: str, names: list[str] | None = None) -> Any:
    req = APIS_BY_NAME["DescribeConfigs"].request.cls
    answer = raw.call(
        "DescribeConfigs",
        4,
        resources=[
            req.DescribeConfigsResource(
                resource_type=GROUP_RESOURCE, resource_name=group, configuration_keys=names
            )
        ],
        include_synonyms=True,
        include_documentation=False,
    )
    r = answer.results[0]
    return (
        ErrorCode(r.error_code).name,
        r.error_message,
        sorted(
            (
                c.name,
                c.value,
                c.read_only,
                c.config_source,
                c.is_sensitive,
                c.config_type,
                [(s.name, s.value, s.source) for s in c.synonyms],
            )
            for c in r.configs
            if c.name.startswith("consumer.")
        ),
    )


def alter_group_configs(
    raw: Raw, group: str, ops: list[tuple[str, int, str | None]], validate_only: bool = False
) -> tuple[str, str | None]:
    req = APIS_BY_NAME["IncrementalAlterConfigs"].request.cls
    answer = raw.call(
        "IncrementalAlterConfigs",
        1,
        resources=[
            req.AlterConfigsResource(
                resource_type=GROUP_RESOURCE,
                resource_name=group,
                configs=[
                    req.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops
                ],
            )
        ],
        validate_only=validate_only,
    )
    r = answer.responses[0]
    return ErrorCode(r.error_code).name, r.error_message


def group_config_scenario(raw: Raw, group: str) -> list[tuple[str, Any]]:
    """GROUP resources described and altered, good and bad values (Kafka's GroupConfig
    validation against the broker's bounds), and a consumer group's heartbeat interval
    following its group config."""
    await_coordinator(raw, group)
    out: list[tuple[str, Any]] = []

    def step(label: str, answer: Any) -> Any:
        out.append((label, answer))
        return answer

    set_, delete = 0, 1
    step("described before", describe_group_configs(raw, group))
    step(
        "heartbeat interval 6000",
        alter_group_configs(raw, group, [("consumer.heartbeat.interval.ms", set_, "6000")]),
    )
    step("described after", describe_group_configs(raw, group))
    step(
        "below the broker's minimum",
        alter_group_configs(raw, group, [("consumer.heartbeat.interval.ms", set_, "10")]),
    )
    step(
        "above the broker's maximum",
        alter_group_configs(raw, group, [("consumer.session.timeout.ms", set_, "600000")]),
    )
    step(
        "session not above heartbeat",
        alter_group_configs(
            raw,
            group,
            [
                ("consumer.session.timeout.ms", set_, "45000"),
                ("consumer.heartbeat.interval.ms", set_, "15000"),
            ],
        ),
    )
    step(
        "not a number",
        alter_group_configs(raw, group, [("consumer.session.timeout.ms", set_, "x")]),
    )
    step("unknown name", alter_group_configs(raw, group, [("consumer.nope", set_, "1")]))
    step(
        "validate only",
        alter_group_configs(raw, group, [("consumer.session.timeout.ms", set_, "50000")], True),
    )
    step("one name described", describe_group_configs(raw, group, ["consumer.session.timeout.ms"]))
    s = Session(raw)
    join = {"group_id": group, "member_epoch": 0, "rebalance_timeout_ms": 30_000}
    step(
        "the member gets the group's interval",
        s.heartbeat(member_id="m1", subscribed_topic_names=[TOPIC], owned={}, **join),
    )
    step(
        "deleted",
        alter_group_configs(raw, group, [("consumer.heartbeat.interval.ms", delete, None)]),
    )
    step("described at the end", describe_group_configs(raw, group))
    step("m1 leaves", s.heartbeat(group_id=group, member_id="m1", member_epoch=-1))
    return out


# --- OffsetCommit and OffsetFetch v10: topics by id -------------------------------------------


def offsets_by_id_scenario(raw: Raw, group: str) -> list[tuple[str, Any]]:
    """Simple commits and fetches naming topics by id (v10): a known topic (a partition of
    it that does not exist too), an id no topic has; fetch by id and fetch all."""
    await_coordinator(raw, group)
    s = Session(raw)
    unknown = uuid.UUID(int=0xFEEDFACE)
    commit_req = APIS_BY_NAME["OffsetCommit"].request.cls
    fetch_req = APIS_BY_NAME["OffsetFetch"].request.cls
    out: list[tuple[str, Any]] = []

    def commit(topics: dict[uuid.UUID, list[int]]) -> Any:
        answer = raw.call(
            "OffsetCommit",
            10,
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            topics=[
                commit_req.OffsetCommitRequestTopic(
                    topic_id=topic_id,
                    partitions=[
                        commit_req.OffsetCommitRequestPartition(
                            partition_index=p, committed_offset=5 + p, committed_metadata="v10"
                        )
                        for p in partitions
                    ],
                )
                for topic_id, partitions in topics.items()
            ],
        )
        return [
            (
                s.names.get(t.topic_id, str(t.topic_id)),
                sorted((p.partition_index, ErrorCode(p.error_code).name) for p in t.partitions),
            )
            for t in answer.topics
        ]

    def fetch(topics: dict[uuid.UUID, list[int]] | None) -> Any:
        answer = raw.call(
            "OffsetFetch",
            10,
            groups=[
                fetch_req.OffsetFetchRequestGroup(
                    group_id=group,
                    member_id=None,
                    member_epoch=-1,
                    topics=None
                    if topics is None
                    else [
                        fetch_req.OffsetFetchRequestTopics(topic_id=t, partition_indexes=ps)
                        for t, ps in topics.items()
                    ],
                )
            ],
            require_stable=False,
        )
        g = answer.groups[0]
        return (
            ErrorCode(g.error_code).name,
            [
                (
                    s.names.get(t.topic_id, str(t.topic_id)),
                    sorted(
                        (
                            p.partition_index,
                            p.committed_offset,
                            p.committed_leader_epoch,
                            p.metadata,
                            ErrorCode(p.error_code).name,
                        )
                        for p in t.partitions
                    ),
                )
                for t in g.topics
            ],
        )

    hb, other = s.ids[TOPIC], s.ids[OTHER]
    out.append(("commit by id", commit({hb: [0, 1, 9], unknown: [0], other: [1]})))
    out.append(("fetch by id", fetch({hb: [0, 1, 2], unknown: [3], other: [1]})))
    out.append(("fetch all", fetch(None)))
    return out


# --- regex subscriptions -------------------------------------------------------------------


def _create_topic(raw: Raw, name: str, partitions: int) -> None:
    req = APIS_BY_NAME["CreateTopics"].request.cls
    created = raw.call(
        "CreateTopics",
        5,
        topics=[req.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)],
        timeout_ms=30_000,
    )
    assert created.topics[0].error_code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)


def regex_scenario(raw: Raw, group: str, prefix: str) -> list[tuple[str, Any]]:
    """A member subscribed by regex (v1 ``SubscribedTopicRegex``, RE2J syntax): an invalid
    one refused (INVALID_REGULAR_EXPRESSION, RE2J's description), the topics matching
    assigned once resolved, and a topic created later picked up (on the next heartbeat
    after at least 10 s: Kafka's batching of regex refreshes). Only settled states are
    recorded: when a resolution lands depends on each broker's timing."""
    await_coordinator(raw, group)
    _create_topic(raw, f"{prefix}-a", 2)
    _create_topic(raw, f"no-{prefix}", 1)
    out: list[tuple[str, Any]] = []
    s = Session(raw)
    join = {"group_id": group, "member_epoch": 0, "rebalance_timeout_ms": 30_000, "owned": {}}
    out.append(
        ("an invalid regex", s.heartbeat(member_id="bad", subscribed_topic_regex="rx(", **join))
    )
    first = s.heartbeat(member_id="m1", subscribed_topic_regex=f"{prefix}-.*", **join)
    out.append(("joined", (first["error_code"], first["member_epoch"] > 0)))
    state = {"epoch": first["member_epoch"], "assignment": first["assignment"] or []}

    def assigned(topics: set[str], timeout: float = 60) -> Any:
        def settled() -> bool:
            every = raw.call("Metadata", 12, topics=None)  # ids of the topics made since
            s.names.update({t.topic_id: t.name for t in every.topics})
            answer = s.heartbeat(group_id=group, member_id="m1", member_epoch=state["epoch"])
            state["epoch"] = answer["member_epoch"]
            if answer["assignment"] is not None:
                state["assignment"] = answer["assignment"]
            return {t for t, _ in state["assignment"]} == topics

        until(f"m1 assigned {sorted(topics)}", settled, timeout)
        return sorted(state["assignment"])

    out.append(("the matching topic assigned", assigned({f"{prefix}-a"})))
    _create_topic(raw, f"{prefix}-b", 3)
    out.append(("a new matching topic picked up", assigned({f"{prefix}-a", f"{prefix}-b"}, 90)))
    described = s.describe(group)[0]
    out.append(
        (
            "described",
            (described["group_state"], [(m[0], m[5], m[6], m[7]) for m in described["members"]]),
        )
    )
    out.append(("m1 leaves", s.heartbeat(group_id=group, member_id="m1", member_epoch=-1)))
    return out
