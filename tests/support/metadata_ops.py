"""Random but valid histories of ``__cluster_metadata``: batches of metadata records a
controller could have written (the bootstrap features, then broker registrations with
their epochs = offsets, fencing, topics and partition changes with ELR, configs, client
quotas, producer ids, ACLs, SCRAM, delegation tokens, controller registrations, ClearElr,
topic removals), for the image tests and the image-against-Kafka test.

:func:`history` keeps a small model of what exists so every record is one Kafka would
replay; :func:`bad_record` makes one it must refuse.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from typing import Any

from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType

T = MetadataRecordType
__all__ = ["Batch", "bad_record", "history", "make"]


def make(kind: MetadataRecordType, version: int = 0, **fields: Any) -> MetadataRecord:
    return MetadataRecord(kind, version, RECORDS[kind].cls(**fields))


@dataclass
class Batch:
    """Records appended together, from ``base_offset``."""

    base_offset: int
    records: list[MetadataRecord]


@dataclass
class _Model:
    offset: int = 0
    brokers: dict[int, int] = field(default_factory=dict)  # id -> epoch
    topics: dict[uuid.UUID, tuple[str, int]] = field(default_factory=dict)  # id -> name, parts
    acls: list[uuid.UUID] = field(default_factory=list)
    users: set[tuple[str, int]] = field(default_factory=set)
    tokens: set[str] = field(default_factory=set)
    next_topic: int = 0
    topic_configs: bool = True


def _bootstrap() -> list[MetadataRecord]:
    levels = [
        ("metadata.version", 30),
        ("eligible.leader.replicas.version", 1),
        ("group.version", 1),
        ("share.version", 1),
        ("streams.version", 1),
        ("transaction.version", 2),
    ]
    return [make(T.FEATURE_LEVEL_RECORD, name=n, feature_level=v) for n, v in levels]


def _uuid(rnd: random.Random) -> uuid.UUID:
    return uuid.UUID(int=rnd.getrandbits(128) | (1 << 100))


def _register(rnd: random.Random, m: _Model, offset: int) -> MetadataRecord:
    cls = RECORDS[T.REGISTER_BROKER_RECORD].cls
    broker = rnd.randrange(1, 6)
    m.brokers[broker] = offset
    return make(
        T.REGISTER_BROKER_RECORD,
        4,
        broker_id=broker,
        incarnation_id=_uuid(rnd),
        broker_epoch=offset,
        end_points=[
            cls.BrokerEndpoint(name="PLAINTEXT", host=f"h{broker}", port=9092, security_protocol=0)
        ],
        features=[
            cls.BrokerFeature(
                name="metadata.version", min_supported_version=7, max_supported_version=30
            )
        ],
        rack=rnd.choice([None, "r1", "r2"]),
        fenced=rnd.random() < 0.7,
        log_dirs=sorted((_uuid(rnd) for _ in range(rnd.randrange(0, 3))), key=lambda u: u.int),
    )


def _partition(rnd: random.Random, m: _Model, topic_id: uuid.UUID, pid: int) -> MetadataRecord:
    replicas = rnd.sample(range(1, 6), rnd.randrange(1, 4))
    isr = replicas[: rnd.randrange(1, len(replicas) + 1)]
    elr = [r for r in replicas if r not in isr and rnd.random() < 0.5]
    return make(
        T.PARTITION_RECORD,
        2,
        partition_id=pid,
        topic_id=topic_id,
        replicas=replicas,
        isr=isr,
        leader=isr[0],
        leader_epoch=rnd.randrange(0, 3),
        partition_epoch=rnd.randrange(0, 3),
        directories=[_uuid(rnd) for _ in replicas],
        eligible_leader_replicas=elr or None,
        last_known_elr=[r for r in elr if rnd.random() < 0.5] or None,
    )


def _one(rnd: random.Random, m: _Model, offset: int) -> list[MetadataRecord]:
    """One operation's records; the first record is at ``offset``."""
    choice = rnd.randrange(18)
    if choice == 0 or not m.brokers:
        return [_register(rnd, m, offset)]
    if choice in (1, 2):
        broker = rnd.choice(sorted(m.brokers))
        epoch = m.brokers[broker]
        kind = rnd.randrange(3)
        if kind == 0:
            return [make(T.FENCE_BROKER_RECORD, id=broker, epoch=epoch)]
        if kind == 1:
            return [make(T.UNFENCE_BROKER_RECORD, id=broker, epoch=epoch)]
        version = rnd.choice([0, 1, 2])
        return [
            make(
                T.BROKER_REGISTRATION_CHANGE_RECORD,
                version,
                broker_id=broker,
                broker_epoch=epoch,
                fenced=rnd.choice([-1, 0, 1]),
                in_controlled_shutdown=rnd.choice([0, 1]) if version >= 1 else 0,
            )
        ]
    if choice == 3:
        broker = rnd.choice(sorted(m.brokers))
        del m.brokers[broker]
        return [make(T.UNREGISTER_BROKER_RECORD, broker_id=broker, broker_epoch=0)]
    if choice in (4, 5):
        topic_id = _uuid(rnd)
        name = f"t{m.next_topic}"
        m.next_topic += 1
        count = rnd.randrange(1, 4)
        m.topics[topic_id] = (name, count)
        return [
            make(T.TOPIC_RECORD, name=name, topic_id=topic_id),
            *(_partition(rnd, m, topic_id, p) for p in range(count)),
        ]
    if choice in (6, 7) and m.topics:
        topic_id = rnd.choice(sorted(m.topics, key=str))
        pid = rnd.randrange(m.topics[topic_id][1])
        fields: dict[str, Any] = {"partition_id": pid, "topic_id": topic_id}
        if rnd.random() < 0.5:
            fields["isr"] = rnd.sample(range(1, 6), rnd.randrange(1, 3))
        if rnd.random() < 0.5:
            fields["leader"] = rnd.choice([-1, 1, 2, 3])
        if rnd.random() < 0.3:
            fields["eligible_leader_replicas"] = rnd.sample(range(1, 6), rnd.randrange(0, 2))
            fields["last_known_elr"] = rnd.sample(range(1, 6), rnd.randrange(0, 2))
        if rnd.random() < 0.2:
            fields["leader_recovery_state"] = rnd.choice([0, 1])
        return [make(T.PARTITION_CHANGE_RECORD, 2, **fields)]
    if choice == 8 and m.topics:
        topic_id = rnd.choice(sorted(m.topics, key=str))
        del m.topics[topic_id]
        return [make(T.REMOVE_TOPIC_RECORD, topic_id=topic_id)]
    if choice == 9:
        names = [n for n, _ in m.topics.values()] if m.topic_configs else []
        resource = rnd.choice(
            [(2, n) for n in names] + [(4, ""), (4, "1"), (16, "metrics"), (32, "g")]
        )
        return [
            make(
                T.CONFIG_RECORD,
                resource_type=resource[0],
                resource_name=resource[1],
                name=rnd.choice(["retention.ms", "cleanup.policy", "x"]),
                value=rnd.choice([None, "1", "compact"]),
            )
        ]
    if choice == 10:
        cls = RECORDS[T.CLIENT_QUOTA_RECORD].cls
        parts = rnd.choice(
            [[("user", "alice")], [("user", None)], [("client-id", "c"), ("user", "bob")]]
        )
        return [
            make(
                T.CLIENT_QUOTA_RECORD,
                entity=[cls.EntityData(entity_type=t, entity_name=n) for t, n in parts],
                key=rnd.choice(["producer_byte_rate", "consumer_byte_rate"]),
                value=float(rnd.randrange(1, 10**6)),
                remove=rnd.random() < 0.3,
            )
        ]
    if choice == 11:
        return [
            make(
                T.PRODUCER_IDS_RECORD,
                broker_id=rnd.choice(sorted(m.brokers)),
                broker_epoch=0,
                next_producer_id=1000 * rnd.randrange(1, 50),
            )
        ]
    if choice == 12:
        if m.acls and rnd.random() < 0.4:
            acl_id = m.acls.pop(rnd.randrange(len(m.acls)))
            return [make(T.REMOVE_ACCESS_CONTROL_ENTRY_RECORD, id=acl_id)]
        acl_id = _uuid(rnd)
        m.acls.append(acl_id)
        return [
            make(
                T.ACCESS_CONTROL_ENTRY_RECORD,
                id=acl_id,
                resource_type=rnd.choice([2, 3, 4]),
                resource_name=rnd.choice(["t0", "g", "kafka-cluster"]),
                pattern_type=rnd.choice([3, 4]),
                principal="User:alice",
                host="*",
                operation=rnd.choice([2, 3, 4]),
                permission_type=rnd.choice([2, 3]),
            )
        ]
    if choice == 13:
        key = (rnd.choice(["alice", "bob"]), rnd.choice([1, 2]))
        if key in m.users and rnd.random() < 0.5:
            m.users.discard(key)
            return [make(T.REMOVE_USER_SCRAM_CREDENTIAL_RECORD, name=key[0], mechanism=key[1])]
        m.users.add(key)
        return [
            make(
                T.USER_SCRAM_CREDENTIAL_RECORD,
                name=key[0],
                mechanism=key[1],
                salt=rnd.randbytes(8),
                stored_key=rnd.randbytes(32),
                server_key=rnd.randbytes(32),
                iterations=4096,
            )
        ]
    if choice == 14:
        token = rnd.choice(["tok1", "tok2"])
        if token in m.tokens and rnd.random() < 0.5:
            m.tokens.discard(token)
            return [make(T.REMOVE_DELEGATION_TOKEN_RECORD, token_id=token)]
        m.tokens.add(token)
        return [
            make(
                T.DELEGATION_TOKEN_RECORD,
                owner="User:alice",
                requester="User:alice",
                renewers=["User:bob"],
                issue_timestamp=1,
                max_timestamp=3,
                expiration_timestamp=2,
                token_id=token,
            )
        ]
    if choice == 15:
        cls = RECORDS[T.REGISTER_CONTROLLER_RECORD].cls
        controller = rnd.randrange(100, 103)
        return [
            make(
                T.REGISTER_CONTROLLER_RECORD,
                controller_id=controller,
                incarnation_id=_uuid(rnd),
                end_points=[
                    cls.ControllerEndpoint(
                        name="CONTROLLER", host="c", port=9093, security_protocol=0
                    )
                ],
                features=[
                    cls.ControllerFeature(
                        name="kraft.version", min_supported_version=0, max_supported_version=1
                    )
                ],
            )
        ]
    if choice == 16:
        names = [n for n, _ in m.topics.values()]
        return [make(T.CLEAR_ELR_RECORD, topic_name=rnd.choice(["", *names]))]
    return [
        make(T.FEATURE_LEVEL_RECORD, name="group.version", feature_level=rnd.choice([0, 1])),
        make(T.NO_OP_RECORD),
    ]


def history(rnd: random.Random, operations: int, *, topic_configs: bool = True) -> list[Batch]:
    """The bootstrap batch, then ``operations`` operations, each a batch (or two joined
    into one). Without ``topic_configs`` no config names a topic: Kafka's delta keeps the
    configs of a topic removed in the same delta they were set in, so only such histories
    replay alike in one delta and batch by batch."""
    model = _Model(topic_configs=topic_configs)
    batches = [Batch(0, _bootstrap())]
    offset = len(batches[0].records)
    for _ in range(operations):
        records = _one(rnd, model, offset)
        if rnd.random() < 0.3 and batches[-1].base_offset > 0:
            batches[-1].records.extend(records)
        else:
            batches.append(Batch(offset, records))
        offset += len(records)
    return batches


def bad_record(rnd: random.Random, batches: list[Batch]) -> MetadataRecord:
    """A record no image of ``batches`` can replay (a broker or topic that does not
    exist, or a stale broker epoch)."""
    choice = rnd.randrange(4)
    if choice == 0:
        return make(T.FENCE_BROKER_RECORD, id=999, epoch=0)
    if choice == 1:
        return make(T.REMOVE_TOPIC_RECORD, topic_id=uuid.UUID(int=12345))
    if choice == 2:
        return make(T.PARTITION_CHANGE_RECORD, 2, partition_id=0, topic_id=uuid.UUID(int=99))
    return make(T.REMOVE_ACCESS_CONTROL_ENTRY_RECORD, id=uuid.UUID(int=77))
