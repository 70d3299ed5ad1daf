"""Transactional offsets in the group coordinator (Kafka's TxnOffsetCommit and
``GroupCoordinator.onTransactionCompleted``), through the raw protocol against a real
broker: a TxnOffsetCommit writes a transactional batch of the producer to
``__consumer_offsets`` and its offsets stay pending - invisible to OffsetFetch, answered
UNSTABLE_OFFSET_COMMIT under RequireStable - until the producer's COMMIT marker lands on
that partition (then visible, unless a later plain commit won) or its ABORT (dropped); a
restart replays the transactional batches and the markers of the log; Kafka's checks
(authorization, the KIP-447 member fields, unknown partitions, metadata size, a fenced
producer epoch) answer Kafka's codes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest

from kafkacore import record
from kafkacore.coordinator import records as recs
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclStore,
    Authorizer,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkacore.server import KafkaServer
from kafkacore.server.group.offsets import OFFSETS_TOPIC
from support.raw_client import OneShotClient as Client
from support.raw_client import run_broker
from test_group_protocol import PROPS, _commit, _first_member, _join, _sync

pytestmark = pytest.mark.timeout(60)

PID, EPOCH = 4000, 0


def run(
    tmp_path: Path, scenario: Callable[[KafkaServer, Client], Awaitable[None]], **props: Any
) -> None:
    async def with_server(server: KafkaServer) -> None:
        assert server.replicas is not None
        if server.replicas.partition("t", 0) is None:
            await asyncio.to_thread(server.replicas.ensure_topic, "t", 2)
        await scenario(server, Client(server.bound_port))

    run_broker(tmp_path, with_server, **{**PROPS, **props})


def run_unverified(
    tmp_path: Path, scenario: Callable[[KafkaServer, Client], Awaitable[None]]
) -> None:
    """:func:`run` with ``transaction.partition.verification.enable=false``: the
    coordinator's own rules, for made-up producers without a transaction coordinator
    (KIP-890's verification has its own test)."""
    run(tmp_path, scenario, **{"transaction.partition.verification.enable": "false"})


async def _txn_commit(
    c: Client,
    group: str,
    offsets: dict[int, int],
    *,
    version: int = 3,
    pid: int = PID,
    epoch: int = EPOCH,
    topic: str = "t",
    gen: int = -1,
    member: str = "",
    instance: str | None = None,
    metadata: str = "txn",
) -> list[tuple[str, int, int]]:
    """(topic, partition, error code) of a TxnOffsetCommit of ``offsets`` (partition ->
    offset)."""
    cls = APIS_BY_NAME["TxnOffsetCommit"].request.cls
    r = await c.call(
        "TxnOffsetCommit",
        version,
        transactional_id="tx",
        group_id=group,
        producer_id=pid,
        producer_epoch=epoch,
        generation_id=gen,
        member_id=member,
        group_instance_id=instance,
        topics=[
            cls.TxnOffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    cls.TxnOffsetCommitRequestPartition(
                        partition_index=p,
                        committed_offset=o,
                        committed_leader_epoch=1,
                        committed_metadata=metadata,
                    )
                    for p, o in offsets.items()
                ],
            )
        ],
    )
    return [(t.name, p.partition_index, p.error_code) for t in r.topics for p in t.partitions]


async def _fetch(
    c: Client, group: str, *, stable: bool, version: int = 8, partitions: tuple[int, ...] = (0, 1)
) -> dict[int, tuple[int, int]]:
    """partition -> (committed offset, error code) of an OffsetFetch naming ``partitions``
    of ``t``."""
    cls = APIS_BY_NAME["OffsetFetch"].request.cls
    if version >= 8:
        r = await c.call(
            "OffsetFetch",
            version,
            groups=[
                cls.OffsetFetchRequestGroup(
                    group_id=group,
                    topics=[cls.OffsetFetchRequestTopics(name="t", partition_indexes=partitions)],
                )
            ],
            require_stable=stable,
        )
        assert r.groups[0].error_code == ErrorCode.NONE
        topics = r.groups[0].topics
    else:
        r = await c.call(
            "OffsetFetch",
            version,
            group_id=group,
            topics=[cls.OffsetFetchRequestTopic(name="t", partition_indexes=partitions)],
            require_stable=stable,
        )
        assert r.error_code == ErrorCode.NONE  # UNSTABLE_OFFSET_COMMIT is per partition
        topics = r.topics
    return {
        p.partition_index: (p.committed_offset, p.error_code) for t in topics for p in t.partitions
    }


async def _marker(server: KafkaServer, group: str, committed: bool, pid: int = PID) -> None:
    """A COMMIT/ABORT marker of ``pid`` on the group's ``__consumer_offsets`` partition
    (``Log.append_txn_marker``), then the coordinator told, as the WriteTxnMarkers handler
    does."""
    assert server.replicas is not None and server.groups is not None
    index = server.groups.topic.partition_for(group)
    partition = server.replicas.partition(OFFSETS_TOPIC, index)
    log = server.replicas.get_log(OFFSETS_TOPIC, index)
    assert partition is not None and log is not None
    await asyncio.to_thread(log.append_txn_marker, pid, EPOCH, 0, committed, partition.leader_epoch)
    await server.groups.on_transaction_completed(index, pid, committed)


def _offsets_batches(server: KafkaServer, group: str) -> list[record.BatchHeader]:
    assert server.replicas is not None and server.groups is not None
    log = server.replicas.get_log(OFFSETS_TOPIC, server.groups.topic.partition_for(group))
    assert log is not None
    data = log.read(log.log_start_offset, 1 << 20).read_bytes()
    return [record.batch_header(data, pos) for pos, _m, _s in record.iter_batches(data)]


UNSTABLE = ErrorCode.UNSTABLE_OFFSET_COMMIT


def test_offsets_pending_until_commit_marker_and_dropped_at_abort(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        assert await _commit(c, "g", 3) == ErrorCode.NONE  # a plain commit of t-0 first
        assert await _txn_commit(c, "g", {0: 10, 1: 20}) == [("t", 0, 0), ("t", 1, 0)]
        # the batch: transactional, under the producer's id and epoch, base sequence 0
        txn = _offsets_batches(server, "g")[-1]
        assert txn.is_transactional and not txn.is_control
        assert (txn.producer_id, txn.producer_epoch, txn.base_sequence) == (PID, EPOCH, 0)
        assert txn.records_count == 2
        # pending: the committed offsets are served without RequireStable ...
        assert await _fetch(c, "g", stable=False) == {0: (3, 0), 1: (-1, 0)}
        # ... and UNSTABLE_OFFSET_COMMIT per partition with it (v7 and v8+ alike)
        assert await _fetch(c, "g", stable=True) == {0: (-1, UNSTABLE), 1: (-1, UNSTABLE)}
        assert await _fetch(c, "g", stable=True, version=7) == {
            0: (-1, UNSTABLE),
            1: (-1, UNSTABLE),
        }
        await _marker(server, "g", committed=True)
        assert await _fetch(c, "g", stable=True) == {0: (10, 0), 1: (20, 0)}
        assert await _fetch(c, "g", stable=False, version=7) == {0: (10, 0), 1: (20, 0)}

        # the next transaction of the producer aborts: its offsets are dropped
        assert await _txn_commit(c, "g", {0: 11}) == [("t", 0, 0)]
        assert await _fetch(c, "g", stable=True) == {0: (-1, UNSTABLE), 1: (20, 0)}
        cls = APIS_BY_NAME["OffsetFetch"].request.cls
        every = await c.call(  # all topics: the committed partitions, unstable ones marked
            "OffsetFetch",
            8,
            groups=[cls.OffsetFetchRequestGroup(group_id="g", topics=None)],
            require_stable=True,
        )
        assert [
            (p.partition_index, p.committed_offset, p.error_code)
            for t in every.groups[0].topics
            for p in t.partitions
        ] == [(0, -1, UNSTABLE), (1, 20, 0)]
        await _marker(server, "g", committed=False)
        assert await _fetch(c, "g", stable=True) == {0: (10, 0), 1: (20, 0)}

        # a marker of another producer, or on another partition, decides nothing
        assert await _txn_commit(c, "g", {1: 21}) == [("t", 1, 0)]
        await _marker(server, "g", committed=True, pid=PID + 1)
        assert server.groups is not None
        other = (server.groups.topic.partition_for("g") + 1) % 3
        await server.groups.on_transaction_completed(other, PID, True)
        assert await _fetch(c, "g", stable=True) == {0: (10, 0), 1: (-1, UNSTABLE)}
        await _marker(server, "g", committed=True)
        assert await _fetch(c, "g", stable=True) == {0: (10, 0), 1: (21, 0)}

    run_unverified(tmp_path, scenario)


def test_a_later_plain_commit_wins_over_the_transaction(tmp_path: Path) -> None:
    """Kafka's rule: the offset whose record is later in the log is the committed one."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        assert await _txn_commit(c, "g", {0: 5}) == [("t", 0, 0)]
        assert await _commit(c, "g", 7) == ErrorCode.NONE
        await _marker(server, "g", committed=True)
        assert await _fetch(c, "g", stable=True, partitions=(0,)) == {0: (7, 0)}

    run_unverified(tmp_path, scenario)


def test_restart_replays_pending_offsets_and_markers(tmp_path: Path) -> None:
    async def before(server: KafkaServer, c: Client) -> None:
        assert await _txn_commit(c, "committed", {0: 1}, pid=1) == [("t", 0, 0)]
        await _marker(server, "committed", committed=True, pid=1)
        assert await _commit(c, "aborted", 2) == ErrorCode.NONE
        assert await _txn_commit(c, "aborted", {0: 3}, pid=2) == [("t", 0, 0)]
        await _marker(server, "aborted", committed=False, pid=2)
        assert await _txn_commit(c, "open", {0: 4, 1: 5}, pid=3) == [("t", 0, 0), ("t", 1, 0)]
        assert await _commit(c, "late", 6) == ErrorCode.NONE
        assert await _txn_commit(c, "late", {0: 7}, pid=4) == [("t", 0, 0)]
        assert await _commit(c, "late", 8) == ErrorCode.NONE
        await _marker(server, "late", committed=True, pid=4)

    async def after(server: KafkaServer, c: Client) -> None:
        assert await _fetch(c, "committed", stable=True, partitions=(0,)) == {0: (1, 0)}
        assert await _fetch(c, "aborted", stable=True, partitions=(0,)) == {0: (2, 0)}
        assert await _fetch(c, "late", stable=True, partitions=(0,)) == {0: (8, 0)}
        # the open transaction's offsets are pending again, and its marker still counts
        assert await _fetch(c, "open", stable=True) == {0: (-1, UNSTABLE), 1: (-1, UNSTABLE)}
        assert await _fetch(c, "open", stable=False) == {0: (-1, 0), 1: (-1, 0)}
        await _marker(server, "open", committed=True, pid=3)
        assert await _fetch(c, "open", stable=True) == {0: (4, 0), 1: (5, 0)}

    run_unverified(tmp_path, before)
    run_unverified(tmp_path, after)


def test_reload_after_election_replays_the_log(tmp_path: Path) -> None:
    """The coordinator's load of a partition (an election) rebuilds pending offsets from
    the log, as a restart does."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        assert server.groups is not None
        assert await _txn_commit(c, "g", {0: 9}) == [("t", 0, 0)]
        index = server.groups.topic.partition_for("g")
        rebuilt = (
            await asyncio.to_thread(server.groups.runtime.replay_partition, index, -1)
        ).groups
        assert rebuilt["g"].pending_txn == {
            PID: {("t", 0): server.groups.groups["g"].pending_txn[PID][("t", 0)]}
        }
        assert rebuilt["g"].offsets == {}
        await _marker(server, "g", committed=True)
        rebuilt = (
            await asyncio.to_thread(server.groups.runtime.replay_partition, index, -1)
        ).groups
        assert rebuilt["g"].pending_txn == {}
        assert rebuilt["g"].offsets[("t", 0)].offset == 9
        assert rebuilt["g"].offsets == server.groups.groups["g"].offsets

    run_unverified(tmp_path, scenario)


def test_errors_as_kafka_answers_them(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        none = ErrorCode.NONE
        # unknown topic / partition: refused before the coordinator
        assert await _txn_commit(c, "g", {0: 1}, topic="nope") == [
            ("nope", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        ]
        assert await _txn_commit(c, "g", {0: 1, 5: 1}) == [
            ("t", 5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ("t", 0, none),
        ]
        # an empty group id
        assert await _txn_commit(c, "", {0: 1}) == [("t", 0, ErrorCode.INVALID_GROUP_ID)]
        # metadata over offset.metadata.max.bytes (4096)
        assert await _txn_commit(c, "g", {0: 1}, metadata="x" * 4097) == [
            ("t", 0, ErrorCode.OFFSET_METADATA_TOO_LARGE)
        ]
        # KIP-447: a generation for a group that does not exist
        assert await _txn_commit(c, "nogroup", {0: 1}, gen=1, member="m") == [
            ("t", 0, ErrorCode.ILLEGAL_GENERATION)
        ]
        # a member of a real group: wrong member, wrong generation, right one
        member, gen = await _first_member(c)
        assert await _txn_commit(c, "g", {0: 2}, gen=gen, member="other") == [
            ("t", 0, ErrorCode.UNKNOWN_MEMBER_ID)
        ]
        assert await _txn_commit(c, "g", {0: 2}, gen=gen + 1, member=member) == [
            ("t", 0, ErrorCode.ILLEGAL_GENERATION)
        ]
        assert await _txn_commit(c, "g", {0: 2}, gen=gen, member=member, instance="i") == [
            ("t", 0, ErrorCode.UNKNOWN_MEMBER_ID)
        ]
        assert await _txn_commit(c, "g", {0: 2}, gen=gen, member=member) == [("t", 0, none)]
        # v0-2 carry no member: accepted in a group with members (older protocol)
        assert await _txn_commit(c, "g", {1: 2}, version=2) == [("t", 1, none)]
        # a fenced producer epoch: the log refuses an epoch below the one it has
        assert await _txn_commit(c, "g", {0: 3}, pid=77, epoch=5) == [("t", 0, none)]
        assert await _txn_commit(c, "g", {0: 3}, pid=77, epoch=4) == [
            ("t", 0, ErrorCode.INVALID_PRODUCER_EPOCH)
        ]

    run_unverified(tmp_path, scenario)


def test_static_member_fenced(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        r = await _join(c, instance="i1")
        assert r.error_code == ErrorCode.NONE
        assert (await _sync(c, r.generation_id, r.member_id, {})).error_code == ErrorCode.NONE
        got = await _txn_commit(c, "g", {0: 1}, gen=r.generation_id, member="x", instance="i1")
        assert got == [("t", 0, ErrorCode.FENCED_INSTANCE_ID)]
        got = await _txn_commit(
            c, "g", {0: 1}, gen=r.generation_id, member=r.member_id, instance="i1"
        )
        assert got == [("t", 0, ErrorCode.NONE)]

    run_unverified(tmp_path, scenario)


def _allow(rt: ResourceType, name: str, op: AclOperation) -> AclBinding:
    return AclBinding(
        ResourcePattern(rt, name, PatternType.LITERAL),
        AccessControlEntry("User:ANONYMOUS", "*", op, AclPermissionType.ALLOW),
    )


def test_authorization_order(tmp_path: Path) -> None:
    """WRITE on the transactional id, then READ on the group, then READ per topic
    (Kafka 3.9's ``handleTxnOffsetCommitRequest``)."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        await asyncio.to_thread(server.replicas.ensure_topic, "secret", 1)  # type: ignore[union-attr]

        def grant(*bindings: AclBinding) -> None:
            object.__setattr__(server.services, "authorizer", Authorizer(AclStore(list(bindings))))

        async def both() -> list[tuple[str, int, int]]:
            return await _txn_commit(c, "g", {0: 1}) + await _txn_commit(
                c, "g", {0: 1}, topic="secret"
            )

        txn = _allow(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE)
        group = _allow(ResourceType.GROUP, "g", AclOperation.READ)
        topic = _allow(ResourceType.TOPIC, "t", AclOperation.READ)
        grant(group, topic)
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert await both() == [("t", 0, code), ("secret", 0, code)]
        grant(txn, topic)
        code = ErrorCode.GROUP_AUTHORIZATION_FAILED
        assert await both() == [("t", 0, code), ("secret", 0, code)]
        grant(txn, group, topic)
        assert await both() == [
            ("t", 0, ErrorCode.NONE),
            ("secret", 0, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        ]

    run_unverified(tmp_path, scenario)


def test_pending_offsets_block_expiry_and_go_with_the_group(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        groups = server.groups
        assert groups is not None
        assert await _txn_commit(c, "g", {0: 1}) == [("t", 0, 0)]
        # an Empty group whose only offsets are pending is not expired away
        assert await groups.cleanup_expired(now_ms=groups.clock() + 10**12) == 0
        assert "g" in groups.groups
        deleted = await c.call("DeleteGroups", 2, groups_names=["g"])
        assert deleted.results[0].error_code == ErrorCode.NONE
        # the pending partition got a tombstone: a COMMIT marker now brings nothing back
        last = _offsets_batches(server, "g")[-1]
        assert last.records_count == 2  # the offset tombstone and the metadata tombstone
        await _marker(server, "g", committed=True)
        assert await _fetch(c, "g", stable=True, partitions=(0,)) == {0: (-1, 0)}

    run_unverified(tmp_path, scenario)


def test_offset_commit_key_of_the_batch(tmp_path: Path) -> None:
    """The batch's records are Kafka's OffsetCommitKey/Value (readable by Kafka's
    offsets decoder), without an expire timestamp."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        assert await _txn_commit(c, "g", {1: 42}) == [("t", 1, 0)]
        assert server.groups is not None
        entries = list(server.groups.topic.read(server.groups.topic.partition_for("g")))
        entry = entries[-1]
        assert entry.producer_id == PID and entry.marker is None
        assert recs.decode_key(entry.key) == recs.OffsetCommitKey(group="g", topic="t", partition=1)
        value = recs.decode_offset_commit_value(entry.value or b"")
        assert (value.offset, value.leader_epoch, value.metadata) == (42, 1, "txn")
        assert value.expire_timestamp == recs.NO_EXPIRE_TIMESTAMP

    run_unverified(tmp_path, scenario)


def test_confluent_kafka_send_offsets_to_transaction(tmp_path: Path) -> None:
    """librdkafka's consume-transform-produce: offsets sent in a committed transaction
    are the group's once the coordinator's markers land (its ``committed()`` asks with
    RequireStable, so a pending offset would keep it waiting); an aborted transaction's
    offsets are never seen."""

    def flow(port: int) -> list[int]:
        bootstrap = f"localhost:{port}"
        producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": "ctp"})
        producer.init_transactions(30)
        consumer = ck.Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "ctp-group", "enable.auto.commit": False}
        )
        seen: list[int] = []
        try:
            consumer.assign([ck.TopicPartition("t", 0)])
            for offset, commit in ((5, True), (9, False), (7, True)):
                producer.begin_transaction()
                producer.produce("t", b"out", partition=1)
                producer.send_offsets_to_transaction(
                    [ck.TopicPartition("t", 0, offset)], consumer.consumer_group_metadata(), 30
                )
                if commit:
                    producer.commit_transaction(30)
                else:
                    producer.abort_transaction(30)
                (committed,) = consumer.committed([ck.TopicPartition("t", 0)], 10)
                seen.append(committed.offset)
        finally:
            consumer.close()
        return seen

    async def scenario(server: KafkaServer, c: Client) -> None:
        assert await asyncio.to_thread(flow, server.bound_port) == [5, 5, 7]
        assert await _fetch(c, "ctp-group", stable=True, partitions=(0,)) == {0: (7, 0)}

    run(tmp_path, scenario)


async def _until_none(call: Callable[[], Awaitable[Any]], code_of: Callable[[Any], int]) -> Any:
    """``call()`` again while it answers a retriable coordinator error (the transaction
    state topic is created and loaded on first use)."""
    retriable = {
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    }
    for _ in range(100):
        response = await call()
        if code_of(response) not in retriable:
            return response
        await asyncio.sleep(0.1)
    raise AssertionError(f"still {code_of(response)}")


def test_offsets_partition_must_be_in_the_transaction(tmp_path: Path) -> None:
    """KIP-890 verification (``transaction.partition.verification.enable``, on by
    default): a TxnOffsetCommit before AddOffsetsToTxn put the group's
    ``__consumer_offsets`` partition in the transaction is refused - INVALID_TXN_STATE
    before v4, TRANSACTION_ABORTABLE from v4 - and nothing is written; after it, accepted;
    a stale epoch is INVALID_PRODUCER_EPOCH."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        init = await _until_none(
            lambda: c.call(
                "InitProducerId",
                4,
                transactional_id="tx",
                transaction_timeout_ms=60000,
                producer_id=-1,
                producer_epoch=-1,
            ),
            lambda r: r.error_code,
        )
        assert init.error_code == ErrorCode.NONE
        pid, epoch = init.producer_id, init.producer_epoch
        args = {"pid": pid, "epoch": epoch}
        # before __consumer_offsets exists, and after
        assert await _txn_commit(c, "g", {0: 1}, **args) == [("t", 0, ErrorCode.INVALID_TXN_STATE)]
        assert await _commit(c, "g", 3) == ErrorCode.NONE  # a plain commit: no verification
        assert await _txn_commit(c, "g", {0: 1}, **args) == [("t", 0, ErrorCode.INVALID_TXN_STATE)]
        assert await _txn_commit(c, "g", {0: 1}, version=4, **args) == [
            ("t", 0, ErrorCode.TRANSACTION_ABORTABLE)
        ]
        assert not any(b.is_transactional for b in _offsets_batches(server, "g"))  # no write
        added = await _until_none(
            lambda: c.call(
                "AddOffsetsToTxn",
                0,
                transactional_id="tx",
                producer_id=pid,
                producer_epoch=epoch,
                group_id="g",
            ),
            lambda r: r.error_code,
        )
        assert added.error_code == ErrorCode.NONE
        assert await _txn_commit(c, "g", {0: 1}, pid=pid, epoch=epoch - 1) == [
            ("t", 0, ErrorCode.INVALID_PRODUCER_EPOCH)
        ]
        assert await _txn_commit(c, "g", {0: 1}, **args) == [("t", 0, ErrorCode.NONE)]
        assert await _fetch(c, "g", stable=True, partitions=(0,)) == {0: (-1, UNSTABLE)}

    run(tmp_path, scenario)
