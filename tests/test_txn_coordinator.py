"""The transaction coordinator: its state machine alone (Kafka's valid previous states,
KIP-360 epoch bumps, fencing, producer id rotation), then through the raw protocol
against an in-process broker: FindCoordinator key type 1, InitProducerId bumps and
fencing, AddPartitionsToTxn (client and KIP-890 verify forms), AddOffsetsToTxn, EndTxn,
DescribeTransactions, ListTransactions with Kafka's error codes per version, the
``__transaction_state`` records (decoded with ``txn_records``, in the id's partition),
timed-out transactions and expired ids (through the coordinator's clock), and the
state read back after a restart."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest

from kafkacore import record
from kafkacore.config import BrokerConfig
from kafkacore.coordinator.records import partition_for_group
from kafkacore.coordinator.txn_records import (
    TRANSACTION_STATE_TOPIC,
    TransactionState,
    decode_txn_key,
    decode_txn_value,
    encode_txn_key,
    encode_txn_value,
    partition_for_transactional_id,
)
from kafkacore.log import LogManager, TopicPartition
from kafkacore.metadata import BrokerInfo, EmbeddedMetadataStore, MetadataCache
from kafkacore.net import broker_client
from kafkacore.placement import InvalidReplicationFactorError
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.security.acl import (
    CLUSTER_NAME,
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
from kafkacore.server.coordinator_writer import CoordinatorPartitionWriter
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.txn import TransactionCoordinator
from kafkacore.server.txn.manager import transaction_state_topic
from kafkacore.server.txn.markers import TransactionMarkerChannelManager
from kafkacore.server.txn.state import (
    VALID_PREVIOUS_STATES,
    IllegalTransitionError,
    TransactionMetadata,
)
from support.raw_client import OneShotClient, run_broker

pytestmark = pytest.mark.timeout(30)

S = TransactionState
PROPS = {"transaction.state.log.num.partitions": 5, "offsets.topic.num.partitions": 3}


# -- the state machine alone ---------------------------------------------------------------


def _metadata(state: TransactionState = S.EMPTY, epoch: int = 0) -> TransactionMetadata:
    return TransactionMetadata("t", 1000, -1, epoch, -1, 60000, state, last_update_timestamp_ms=0)


def test_valid_previous_states_are_kafkas() -> None:
    assert VALID_PREVIOUS_STATES[S.PREPARE_COMMIT] == {S.ONGOING}
    # Kafka 4's: TV2 aborts a transaction that added no partition
    assert VALID_PREVIOUS_STATES[S.PREPARE_ABORT] == {
        S.ONGOING,
        S.PREPARE_EPOCH_FENCE,
        S.EMPTY,
        S.COMPLETE_COMMIT,
        S.COMPLETE_ABORT,
    }
    assert VALID_PREVIOUS_STATES[S.DEAD] == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert S.PREPARE_COMMIT not in VALID_PREVIOUS_STATES[S.ONGOING]
    m = _metadata(S.EMPTY)
    with pytest.raises(IllegalTransitionError):
        m.prepare_abort_or_commit(S.PREPARE_COMMIT, 1)  # Empty -> PrepareCommit
    transit = m.prepare_add_partitions({TopicPartition("a", 0)}, 5)
    with pytest.raises(IllegalTransitionError):  # one pending transition at a time
        m.prepare_add_partitions({TopicPartition("a", 1)}, 6)
    m.complete_transition(transit)
    assert (m.state, m.start_timestamp_ms, m.pending_state) == (S.ONGOING, 5, None)
    transit = m.prepare_add_partitions({TopicPartition("a", 1)}, 9)
    assert transit.start_timestamp_ms == 5  # the first add starts the transaction
    assert transit.partitions == {TopicPartition("a", 0), TopicPartition("a", 1)}
    value = transit.to_log_value()
    assert value.partitions == {"a": [0, 1]}
    m.abort_transition()
    assert m.partitions == {TopicPartition("a", 0)}


def test_epoch_bumps_kip360_and_rotation() -> None:
    m = _metadata(S.COMPLETE_COMMIT, epoch=3)
    t = m.prepare_increment_producer_epoch(100, None, 1)
    assert not isinstance(t, int)
    assert (t.producer_epoch, t.last_producer_epoch, t.state) == (4, -1, S.EMPTY)
    m.complete_transition(t)
    t = m.prepare_increment_producer_epoch(100, 4, 2)  # KIP-360: expected = current
    assert not isinstance(t, int)
    assert (t.producer_epoch, t.last_producer_epoch) == (5, 4)
    m.complete_transition(t)
    t = m.prepare_increment_producer_epoch(100, 4, 3)  # the retry: the same answer
    assert not isinstance(t, int)
    assert (t.producer_epoch, t.last_producer_epoch) == (5, 4)
    m.abort_transition()
    assert m.prepare_increment_producer_epoch(100, 2, 4) == ErrorCode.PRODUCER_FENCED
    assert m.pending_state is None
    exhausted = _metadata(S.EMPTY, epoch=32766)
    assert exhausted.is_producer_epoch_exhausted
    with pytest.raises(IllegalTransitionError):
        exhausted.prepare_increment_producer_epoch(100, None, 1)
    rotated = exhausted.prepare_producer_id_rotation(2000, 100, 1, record_last_epoch=True)
    assert (rotated.producer_id, rotated.producer_epoch) == (2000, 0)
    assert (rotated.last_producer_id, rotated.last_producer_epoch) == (1000, 32766)


def test_fence_then_abort_carries_the_bumped_epoch() -> None:
    m = _metadata(S.EMPTY, epoch=7)
    m.complete_transition(m.prepare_add_partitions({TopicPartition("a", 0)}, 1))
    fence = m.prepare_fence_producer_epoch()
    assert (fence.state, fence.producer_epoch) == (S.PREPARE_EPOCH_FENCE, 8)
    abort = m.prepare_fenced_abort(fence.producer_epoch, 2)
    assert (abort.state, abort.producer_epoch, abort.partitions) == (
        S.PREPARE_ABORT,
        8,
        {TopicPartition("a", 0)},
    )
    m.complete_transition(abort)
    done = m.prepare_complete(3)
    assert (done.state, done.partitions) == (S.COMPLETE_ABORT, frozenset())


def test_tv2_bumps_the_epoch_at_the_end_and_rotates_when_exhausted() -> None:
    m = _metadata(S.EMPTY, epoch=7)
    m.complete_transition(m.prepare_add_partitions({TopicPartition("a", 0)}, 1, 2))
    assert m.client_transaction_version == 2
    commit = m.prepare_abort_or_commit(S.PREPARE_COMMIT, 2)
    assert (commit.producer_epoch, commit.last_producer_epoch) == (8, 7)  # the markers' epoch
    m.complete_transition(commit)
    done = m.prepare_complete(3)
    assert (done.producer_id, done.producer_epoch, done.state) == (1000, 8, S.COMPLETE_COMMIT)
    m.complete_transition(done)
    # a version 1 transaction keeps its epoch
    m.complete_transition(m.prepare_add_partitions({TopicPartition("a", 0)}, 4, 0))
    assert m.prepare_abort_or_commit(S.PREPARE_ABORT, 5).producer_epoch == 8
    m.abort_transition()
    # exhausted: the markers at 32767, then a new producer id at epoch 0
    worn = _metadata(S.ONGOING, epoch=32766)
    worn.partitions = {TopicPartition("a", 0)}
    end = worn.prepare_abort_or_commit(
        S.PREPARE_ABORT, 1, client_transaction_version=2, next_producer_id=2000
    )
    assert (end.producer_id, end.producer_epoch, end.next_producer_id) == (1000, 32767, 2000)
    worn.complete_transition(end)
    rotated = worn.prepare_complete(2)
    assert (rotated.producer_id, rotated.producer_epoch, rotated.last_producer_id) == (
        2000,
        0,
        1000,
    )
    assert rotated.next_producer_id == -1
    # a fence's abort keeps the fence's epoch (no second bump)
    fenced = _metadata(S.EMPTY, epoch=3)
    fenced.complete_transition(fenced.prepare_add_partitions({TopicPartition("a", 0)}, 1, 2))
    fence = fenced.prepare_fence_producer_epoch()
    assert fenced.prepare_fenced_abort(fence.producer_epoch, 2).producer_epoch == 4


# -- through the protocol ------------------------------------------------------------------

Client = OneShotClient


def run(
    tmp_path: Path, scenario: Callable[[KafkaServer, Client], Awaitable[None]], **props: Any
) -> None:
    async def with_server(server: KafkaServer) -> None:
        assert server.replicas is not None
        server.replicas.ensure_topic("t", 2)
        await scenario(server, Client(server.bound_port))

    run_broker(tmp_path, with_server, **{**PROPS, **props})


async def _init(c: Client, tid: str, version: int = 4, timeout: int = 60000, **kw: Any) -> Any:
    fields: dict[str, Any] = {"transactional_id": tid, "transaction_timeout_ms": timeout}
    if version >= 3:
        fields.update(producer_id=kw.get("pid", -1), producer_epoch=kw.get("epoch", -1))
    return await c.call("InitProducerId", version, **fields)


def _topics(cls: Any, partitions: dict[str, list[int]]) -> list[Any]:
    return [cls.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in partitions.items()]


async def _add(
    c: Client, tid: str, pid: int, epoch: int, partitions: dict[str, list[int]], version: int = 0
) -> dict[tuple[str, int], int]:
    cls = APIS_BY_NAME["AddPartitionsToTxn"].request.cls
    r = await c.call(
        "AddPartitionsToTxn",
        version,
        v3_and_below_transactional_id=tid,
        v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=_topics(cls, partitions),
    )
    return {
        (t.name, p.partition_index): p.partition_error_code
        for t in r.results_by_topic_v3_and_below
        for p in t.results_by_partition
    }


async def _verify(
    c: Client, *transactions: tuple[str, int, int, dict[str, list[int]]]
) -> list[tuple[str, str, int, int]]:
    """AddPartitionsToTxn v4 with ``VerifyOnly`` (the broker's form): ``(id, topic,
    partition, error)`` in answer order; the top-level error must be NONE."""
    cls = APIS_BY_NAME["AddPartitionsToTxn"].request.cls
    r = await c.call(
        "AddPartitionsToTxn",
        4,
        transactions=[
            cls.AddPartitionsToTxnTransaction(
                transactional_id=tid,
                producer_id=pid,
                producer_epoch=epoch,
                verify_only=True,
                topics=_topics(cls, partitions),
            )
            for tid, pid, epoch, partitions in transactions
        ],
    )
    assert r.error_code == 0
    return [
        (x.transactional_id, t.name, p.partition_index, p.partition_error_code)
        for x in r.results_by_transaction
        for t in x.topic_results
        for p in t.results_by_partition
    ]


async def _end(c: Client, tid: str, pid: int, epoch: int, commit: bool, version: int = 1) -> int:
    r = await c.call(
        "EndTxn",
        version,
        transactional_id=tid,
        producer_id=pid,
        producer_epoch=epoch,
        committed=commit,
    )
    return int(r.error_code)


async def _end_v5(c: Client, tid: str, pid: int, epoch: int, commit: bool) -> tuple[int, int, int]:
    """EndTxn v5 (transaction version 2): ``(error, producer id, producer epoch)``."""
    r = await c.call(
        "EndTxn", 5, transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit
    )
    return int(r.error_code), int(r.producer_id), int(r.producer_epoch)


async def _describe(c: Client, tid: str) -> Any:
    r = await c.call("DescribeTransactions", 0, transactional_ids=[tid])
    (state,) = r.transaction_states
    return state


async def _wait_state(c: Client, tid: str, state: str, timeout_s: float = 10) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        d = await _describe(c, tid)
        if d.transaction_state == state or time.monotonic() > deadline:
            return d
        await asyncio.sleep(0.05)


def _txn_records(server: KafkaServer, tid: str) -> list[tuple[str, Any]]:
    """``(transactional id, decoded value)`` of every record of the id's partition."""
    assert server.replicas is not None
    partitions = server.replicas.cache.partition_count(TRANSACTION_STATE_TOPIC)
    assert partitions is not None
    log = server.replicas.get_log(
        TRANSACTION_STATE_TOPIC, partition_for_transactional_id(tid, partitions)
    )
    assert log is not None
    out = []
    for data, pos in _batches(log):
        header = record.batch_header(data, pos)
        assert header.compression == 0 and not header.is_transactional
        for r in record.records(data, pos):
            assert r.key is not None
            out.append((decode_txn_key(r.key), decode_txn_value(r.value)))
    return [entry for entry in out if entry[0] == tid]


def _batches(log: Any) -> Iterator[tuple[bytes, int]]:
    """``(bytes, position)`` of every batch of ``log``, across its segments."""
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20).read_bytes()
        for pos, _magic, _size in record.iter_batches(data):
            offset = record.batch_header(data, pos).last_offset + 1
            yield data, pos


def _control_batches(
    server: KafkaServer, topic: str, partition: int
) -> list[tuple[int, int, bool, int]]:
    """``(producer id, epoch, commit, coordinator epoch)`` of each control batch."""
    assert server.replicas is not None
    log = server.replicas.get_log(topic, partition)
    assert log is not None
    out = []
    for data, pos in _batches(log):
        header = record.batch_header(data, pos)
        if not header.is_control:
            continue
        assert header.is_transactional
        [r] = list(record.records(data, pos))
        assert r.key is not None and r.value is not None
        kind = int.from_bytes(r.key[2:4], "big")
        coordinator_epoch = int.from_bytes(r.value[2:6], "big", signed=True)
        out.append((header.producer_id, header.producer_epoch, kind == 1, coordinator_epoch))
    return out


def test_find_coordinator_and_init_producer_id(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        r = await c.call("FindCoordinator", 3, key="tx-a", key_type=1)
        assert (r.error_code, r.node_id, r.port) == (0, 1, server.bound_port)
        r = await c.call("FindCoordinator", 4, key_type=1, coordinator_keys=["tx-a", "tx-b"])
        assert [(x.key, x.error_code, x.node_id) for x in r.coordinators] == [
            ("tx-a", 0, 1),
            ("tx-b", 0, 1),
        ]
        r = await c.call("FindCoordinator", 4, key_type=2, coordinator_keys=["x"])
        assert r.coordinators[0].error_code == ErrorCode.INVALID_REQUEST
        assert server.replicas is not None
        assert server.replicas.cache.partition_count(TRANSACTION_STATE_TOPIC) == 5
        configs = server.replicas.cache.topic_configs(TRANSACTION_STATE_TOPIC)
        assert configs["cleanup.policy"] == "compact"
        assert configs["compression.type"] == "uncompressed"

        first = await _init(c, "tx-a")
        assert (first.error_code, first.producer_epoch) == (0, 0)
        assert first.producer_id >= 0
        again = await _init(c, "tx-a")
        assert (again.producer_id, again.producer_epoch) == (first.producer_id, 1)
        # KIP-360: the current (pid, epoch) bumps; a retry of it answers the same epoch
        bumped = await _init(c, "tx-a", pid=first.producer_id, epoch=1)
        assert (bumped.error_code, bumped.producer_epoch) == (0, 2)
        retried = await _init(c, "tx-a", pid=first.producer_id, epoch=1)
        assert (retried.error_code, retried.producer_epoch) == (0, 2)
        # an unknown producer id is fenced: 90 from v4, 47 below
        assert (await _init(c, "tx-a", pid=first.producer_id + 999, epoch=0)).error_code == 90
        fenced_v3 = await _init(c, "tx-a", version=3, pid=first.producer_id + 999, epoch=0)
        assert (fenced_v3.error_code, fenced_v3.producer_id, fenced_v3.producer_epoch) == (
            47,
            -1,
            -1,
        )
        assert (await _init(c, "tx-a", pid=-1, epoch=3)).error_code == ErrorCode.INVALID_REQUEST
        assert (await _init(c, "tx-a", timeout=0)).error_code == 50
        assert (await _init(c, "tx-a", timeout=900001)).error_code == 50
        assert (await _init(c, "", version=1)).error_code == ErrorCode.INVALID_REQUEST
        # v0 and the idempotent path still work
        assert (await _init(c, "tx-v0", version=0)).producer_epoch == 0
        idem = await c.call("InitProducerId", 4, transactional_id=None, transaction_timeout_ms=1)
        assert (idem.error_code, idem.producer_epoch) == (0, 0)

        records = _txn_records(server, "tx-a")
        assert [v.producer_epoch for _k, v in records] == [0, 1, 2, 2]  # a retry writes too
        assert {v.state for _k, v in records} == {S.EMPTY}
        assert all(v.partitions is None and v.timeout_ms == 60000 for _k, v in records)

    run(tmp_path, scenario)


def test_add_partitions_end_txn_and_errors(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        init = await _init(c, "tx")
        pid, epoch = init.producer_id, init.producer_epoch
        assert await _end(c, "tx", pid, epoch, True) == ErrorCode.INVALID_TXN_STATE  # Empty
        assert await _add(c, "tx-unknown", pid, epoch, {"t": [0]}) == {("t", 0): 49}
        assert await _add(c, "tx", pid + 1, epoch, {"t": [0]}) == {("t", 0): 49}
        assert await _add(c, "tx", pid, epoch + 1, {"t": [0]}, version=1) == {("t", 0): 47}
        assert await _add(c, "tx", pid, epoch + 1, {"t": [0]}, version=2) == {("t", 0): 90}
        assert await _add(c, "tx", pid, epoch, {"t": [0], "nope": [0]}) == {
            ("t", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
            ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        }
        assert await _add(c, "tx", pid, epoch, {"t": [5]}) == {("t", 5): 3}
        # an internal topic is never written through AddPartitionsToTxn
        assert await _add(c, "tx", pid, epoch, {"__consumer_offsets": [0]}, version=3) == {
            ("__consumer_offsets", 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED
        }
        assert (await _describe(c, "tx")).transaction_state == "Empty"

        assert await _add(c, "tx", pid, epoch, {"t": [0]}) == {("t", 0): 0}
        assert await _add(c, "tx", pid, epoch, {"t": [0]}) == {("t", 0): 0}  # already in
        assert await _add(c, "tx", pid, epoch, {"t": [1]}, version=3) == {("t", 1): 0}
        r = await c.call(
            "AddOffsetsToTxn",
            0,
            transactional_id="tx",
            producer_id=pid,
            producer_epoch=epoch,
            group_id="g",
        )
        assert r.error_code == 0
        d = await _describe(c, "tx")
        assert (d.error_code, d.transaction_state, d.producer_id, d.producer_epoch) == (
            0,
            "Ongoing",
            pid,
            epoch,
        )
        assert d.transaction_timeout_ms == 60000 and d.transaction_start_time_ms > 0
        offsets_partition = TopicPartition("__consumer_offsets", partition_for_group("g", 3))
        assert {(t.topic, p) for t in d.topics for p in t.partitions} == {
            ("t", 0),
            ("t", 1),
            (offsets_partition.topic, offsets_partition.partition),
        }
        last = _txn_records(server, "tx")[-1][1]
        assert last.state is S.ONGOING
        assert last.partitions == {"__consumer_offsets": [offsets_partition.partition], "t": [0, 1]}

        # KIP-890 verification (v4+, the broker's form)
        assert await _verify(
            c, ("tx", pid, epoch, {"t": [0]}), ("tx", pid, epoch + 5, {"t": [1]})
        ) == [
            ("tx", "t", 0, 0),
            ("tx", "t", 1, ErrorCode.PRODUCER_FENCED),
        ]

        # describe / list
        assert (await _describe(c, "nobody")).error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
        r = await c.call(
            "ListTransactions", 1, state_filters=[], producer_id_filters=[], duration_filter=-1
        )
        assert sorted((x.transactional_id, x.transaction_state) for x in r.transaction_states) == [
            ("tx", "Ongoing")
        ]
        r = await c.call(
            "ListTransactions", 0, state_filters=["CompleteCommit", "Bogus"], producer_id_filters=[]
        )
        assert (r.error_code, r.unknown_state_filters, r.transaction_states) == (0, ["Bogus"], [])
        r = await c.call("ListTransactions", 0, state_filters=[], producer_id_filters=[pid])
        assert [x.producer_id for x in r.transaction_states] == [pid]

        # EndTxn: a wrong epoch, then the commit (answered once PrepareCommit is written)
        assert await _end(c, "tx", pid, epoch + 1, True) == 47
        assert await _end(c, "tx", pid, epoch + 1, True, version=2) == 90
        assert await _end(c, "tx", pid, epoch, True) == 0
        assert S.PREPARE_COMMIT in [v.state for _k, v in _txn_records(server, "tx")]
        # markers written: Complete* with no partitions; a retried commit is NONE, an
        # abort INVALID_TXN_STATE
        d = await _wait_state(c, "tx", "CompleteCommit")
        assert (d.transaction_state, d.topics) == ("CompleteCommit", [])
        assert await _end(c, "tx", pid, epoch, True) == 0
        assert await _end(c, "tx", pid, epoch, False) == ErrorCode.INVALID_TXN_STATE
        states = [v.state for _k, v in _txn_records(server, "tx")]
        assert states[-2:] == [S.PREPARE_COMMIT, S.COMPLETE_COMMIT]
        assert _txn_records(server, "tx")[-1][1].partitions == {}
        # each partition got one COMMIT control batch with the coordinator epoch
        for tp in ("t", 0), ("t", 1), (offsets_partition.topic, offsets_partition.partition):
            assert _control_batches(server, *tp) == [(pid, epoch, True, 0)]
        # the next transaction starts from CompleteCommit
        assert await _add(c, "tx", pid, epoch, {"t": [1]}) == {("t", 1): 0}
        assert await _end(c, "tx", pid, epoch, False) == 0
        assert (await _wait_state(c, "tx", "CompleteAbort")).transaction_state == "CompleteAbort"
        assert _control_batches(server, "t", 1)[-1] == (pid, epoch, False, 0)

    run(tmp_path, scenario)


def test_end_txn_v5_bumps_the_epoch_at_every_end(tmp_path: Path) -> None:
    """KIP-890 part 2: EndTxn v5 answers the bumped epoch, the markers carry it, a retry
    with the epoch before the bump gets the same answer, an abort of a transaction that
    added no partition is allowed, and the old epoch is fenced."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        init = await _init(c, "tv2")
        pid, e = init.producer_id, init.producer_epoch
        assert await _add(c, "tv2", pid, e, {"t": [0]}) == {("t", 0): 0}
        assert await _end_v5(c, "tv2", pid, e, True) == (0, pid, e + 1)
        await _wait_state(c, "tv2", "CompleteCommit")
        assert _control_batches(server, "t", 0)[-1][:3] == (pid, e + 1, True)
        assert await _end_v5(c, "tv2", pid, e, True) == (0, pid, e + 1)  # the retry
        assert await _end_v5(c, "tv2", pid, e, False) == (ErrorCode.INVALID_TXN_STATE, -1, -1)
        assert await _end_v5(c, "tv2", pid, e + 1, True) == (ErrorCode.INVALID_TXN_STATE, -1, -1)
        # nothing added: an abort still ends the (empty) transaction with a bump
        assert await _end_v5(c, "tv2", pid, e + 1, False) == (0, pid, e + 2)
        await _wait_state(c, "tv2", "CompleteAbort")
        assert await _end(c, "tv2", pid, e + 1, False, version=4) == ErrorCode.PRODUCER_FENCED
        assert await _add(c, "tv2", pid, e + 1, {"t": [1]}, version=3) == {("t", 1): 90}
        assert await _add(c, "tv2", pid, e + 2, {"t": [1]}) == {("t", 1): 0}
        assert await _end_v5(c, "tv2", pid, e + 2, False) == (0, pid, e + 3)
        await _wait_state(c, "tv2", "CompleteAbort")
        assert _control_batches(server, "t", 1)[-1][:3] == (pid, e + 3, False)
        assert (await _describe(c, "tv2")).producer_epoch == e + 3

    run(tmp_path, scenario)


async def _produce_txn(
    c: Client, tid: str, tp: tuple[str, int], pid: int, epoch: int, seq: int, version: int = 12
) -> int:
    """A transactional Produce of one record: its partition's error code."""
    req = APIS_BY_NAME["Produce"].request.cls
    batch = record.build_batch(
        [(0, int(time.time() * 1000), None, b"v", [])],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=True,
    )
    r = await c.call(
        "Produce",
        version,
        transactional_id=tid,
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            req.TopicProduceData(
                name=tp[0], partition_data=[req.PartitionProduceData(index=tp[1], records=batch)]
            )
        ],
    )
    return int(r.responses[0].partition_responses[0].error_code)


def test_produce_v12_adds_the_partition_and_a_late_write_is_fenced(tmp_path: Path) -> None:
    """KIP-890 part 2: Produce v12 adds its partition to the transaction (no
    AddPartitionsToTxn), EndTxn v5 ends it with the bumped epoch, and a late write of
    the ended transaction (the old epoch, after the marker) is refused, not left hanging."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        init = await _init(c, "imp")
        pid, e = init.producer_id, init.producer_epoch
        assert await _produce_txn(c, "imp", ("t", 0), pid, e, 0) == ErrorCode.NONE
        d = await _describe(c, "imp")
        assert d.transaction_state == "Ongoing"
        assert [(t.topic, list(t.partitions)) for t in d.topics] == [("t", [0])]
        assert await _end_v5(c, "imp", pid, e, True) == (0, pid, e + 1)
        await _wait_state(c, "imp", "CompleteCommit")
        before = len(_control_batches(server, "t", 0))
        late = await _produce_txn(c, "imp", ("t", 0), pid, e, 1)
        assert late == ErrorCode.INVALID_PRODUCER_EPOCH
        assert (await _describe(c, "imp")).transaction_state == "CompleteCommit"
        assert len(_control_batches(server, "t", 0)) == before
        # the next transaction runs at the bumped epoch, its sequence from 0
        assert await _produce_txn(c, "imp", ("t", 1), pid, e + 1, 0) == ErrorCode.NONE
        assert await _end_v5(c, "imp", pid, e + 1, False) == (0, pid, e + 2)
        await _wait_state(c, "imp", "CompleteAbort")
        assert _control_batches(server, "t", 1)[-1][:3] == (pid, e + 2, False)

    run(tmp_path, scenario)


def test_the_hanging_transaction_kip890_names(tmp_path: Path) -> None:
    """KIP-890's hanging transaction: a Produce of an ended transaction arriving after
    its marker. Version 1 without verification takes it and leaves a transaction open on
    the partition that no coordinator will end; version 2 refuses it (the marker bumped
    the epoch) whatever the verification config."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        assert server.replicas is not None
        log = server.replicas.get_log("t", 0)
        assert log is not None
        v1 = await _init(c, "v1")
        pid1, e1 = v1.producer_id, v1.producer_epoch
        assert await _add(c, "v1", pid1, e1, {"t": [0]}) == {("t", 0): 0}
        assert await _produce_txn(c, "v1", ("t", 0), pid1, e1, 0, version=11) == 0
        assert await _end(c, "v1", pid1, e1, True, version=4) == 0
        await _wait_state(c, "v1", "CompleteCommit")
        assert not log.has_ongoing_transaction(pid1, e1)
        assert await _produce_txn(c, "v1", ("t", 0), pid1, e1, 1, version=11) == 0  # late
        assert log.has_ongoing_transaction(pid1, e1)  # hanging: nobody will end it
        assert (await _describe(c, "v1")).transaction_state == "CompleteCommit"

        v2 = await _init(c, "v2")
        pid2, e2 = v2.producer_id, v2.producer_epoch
        assert await _produce_txn(c, "v2", ("t", 0), pid2, e2, 0) == 0
        assert await _end_v5(c, "v2", pid2, e2, True) == (0, pid2, e2 + 1)
        await _wait_state(c, "v2", "CompleteCommit")
        late = await _produce_txn(c, "v2", ("t", 0), pid2, e2, 1)
        assert late == ErrorCode.INVALID_PRODUCER_EPOCH
        assert not log.has_ongoing_transaction(pid2, e2)
        assert not log.has_ongoing_transaction(pid2, e2 + 1)

    run(tmp_path, scenario, **{"transaction.partition.verification.enable": False})


def test_txn_offset_commit_v5_adds_the_offsets_partition(tmp_path: Path) -> None:
    """KIP-890 part 2: TxnOffsetCommit v5 adds the group's ``__consumer_offsets``
    partition to the transaction (no AddOffsetsToTxn); the commit marker makes the
    offset visible."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        init = await _init(c, "eos")
        pid, e = init.producer_id, init.producer_epoch
        assert await _produce_txn(c, "eos", ("t", 0), pid, e, 0) == ErrorCode.NONE
        req = APIS_BY_NAME["TxnOffsetCommit"].request.cls
        await c.call("FindCoordinator", 3, key="g", key_type=0)  # creates the offsets topic
        r = await c.call(
            "TxnOffsetCommit",
            5,
            transactional_id="eos",
            group_id="g",
            producer_id=pid,
            producer_epoch=e,
            generation_id=-1,
            member_id="",
            group_instance_id=None,
            topics=[
                req.TxnOffsetCommitRequestTopic(
                    name="t",
                    partitions=[
                        req.TxnOffsetCommitRequestPartition(
                            partition_index=0, committed_offset=7, committed_metadata=""
                        )
                    ],
                )
            ],
        )
        assert [p.error_code for t in r.topics for p in t.partitions] == [0]
        d = await _describe(c, "eos")
        offsets = partition_for_group("g", 3)
        assert {(t.topic, p) for t in d.topics for p in t.partitions} == {
            ("t", 0),
            ("__consumer_offsets", offsets),
        }
        assert await _end_v5(c, "eos", pid, e, True) == (0, pid, e + 1)
        await _wait_state(c, "eos", "CompleteCommit")
        assert _control_batches(server, "__consumer_offsets", offsets)[-1][:3] == (
            pid,
            e + 1,
            True,
        )

    run(tmp_path, scenario)


def _coordinator(server: KafkaServer) -> Any:
    assert server.services is not None
    return server.services.txn_coordinator


def test_timed_out_transaction_is_fenced_and_aborted(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        init = await _init(c, "tx-to", timeout=1000)
        pid, epoch = init.producer_id, init.producer_epoch
        assert await _add(c, "tx-to", pid, epoch, {"t": [0]}, version=2) == {("t", 0): 0}
        coordinator = _coordinator(server)
        assert await coordinator.abort_timed_out_transactions() == []  # not yet
        now = coordinator.clock()
        coordinator.clock = lambda: now + 1001
        assert await coordinator.abort_timed_out_transactions() == ["tx-to"]
        last = _txn_records(server, "tx-to")[-1][1]
        assert (last.state, last.producer_id, last.producer_epoch) == (
            S.PREPARE_ABORT,
            pid,
            epoch + 1,
        )
        assert last.partitions == {"t": [0]}
        # the old producer is fenced (Kafka's testFencingOnTransactionExpiration)
        assert await _add(c, "tx-to", pid, epoch, {"t": [1]}, version=2) == {("t", 1): 90}
        assert await _end(c, "tx-to", pid, epoch, True, version=3) == 90
        d = await _wait_state(c, "tx-to", "CompleteAbort")
        assert (d.transaction_state, d.producer_epoch) == ("CompleteAbort", epoch + 1)
        assert _control_batches(server, "t", 0) == [(pid, epoch + 1, False, 0)]
        # the producer's next InitProducerId (KIP-360, with its old epoch) is fenced; a new
        # one gets the next epoch
        assert (await _init(c, "tx-to", pid=pid, epoch=epoch)).error_code == 90
        assert (await _init(c, "tx-to")).producer_epoch == epoch + 2

    run(tmp_path, scenario)


def test_exhausted_epoch_rotates_the_producer_id(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        first = await _init(c, "tx-x")
        _error, _epoch, metadata = _coordinator(server).state.get_state("tx-x")
        metadata.producer_epoch = 32766  # as after 32766 bumps
        rotated = await _init(c, "tx-x", pid=first.producer_id, epoch=32766)
        assert rotated.error_code == 0 and rotated.producer_id != first.producer_id
        assert rotated.producer_epoch == 0
        # KIP-360: the retry of that call (the old id at its exhausted epoch) gets the same
        again = await _init(c, "tx-x", pid=first.producer_id, epoch=32766)
        assert (again.error_code, again.producer_id, again.producer_epoch) == (
            0,
            rotated.producer_id,
            0,
        )
        # the old id at another epoch is fenced
        assert (await _init(c, "tx-x", pid=first.producer_id, epoch=3)).error_code == 90
        last = _txn_records(server, "tx-x")[-1][1]
        assert (last.producer_id, last.producer_epoch, last.state) == (
            rotated.producer_id,
            0,
            S.EMPTY,
        )

    run(tmp_path, scenario)


def test_init_producer_id_while_ongoing_fences_and_aborts(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        init = await _init(c, "tx-f")
        pid, epoch = init.producer_id, init.producer_epoch
        assert await _add(c, "tx-f", pid, epoch, {"t": [0, 1]}) == {("t", 0): 0, ("t", 1): 0}
        r = await _init(c, "tx-f")
        assert (r.error_code, r.producer_id, r.producer_epoch) == (51, -1, -1)
        last = _txn_records(server, "tx-f")[-1][1]
        assert (last.state, last.producer_epoch) == (S.PREPARE_ABORT, epoch + 1)
        assert await _end(c, "tx-f", pid, epoch, False) == 47  # the zombie, EndTxn v1
        await _wait_state(c, "tx-f", "CompleteAbort")
        for p in (0, 1):
            assert _control_batches(server, "t", p) == [(pid, epoch + 1, False, 0)]
        r = await _init(c, "tx-f")  # the retry: a second bump
        assert (r.error_code, r.producer_id, r.producer_epoch) == (0, pid, epoch + 2)

    run(tmp_path, scenario)


def test_expired_transactional_id_is_tombstoned(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        first = await _init(c, "tx-exp")
        kept = await _init(c, "tx-kept")
        coordinator = _coordinator(server)
        assert await coordinator.remove_expired_transactional_ids() == []
        assert await _add(c, "tx-kept", kept.producer_id, 0, {"t": [0]}) == {("t", 0): 0}
        now = coordinator.clock()
        coordinator.clock = lambda: now + 7 * 24 * 3600 * 1000 + 1
        # an Ongoing transaction never expires
        assert await coordinator.remove_expired_transactional_ids() == ["tx-exp"]
        key, value = _txn_records(server, "tx-exp")[-1]
        assert (key, value) == ("tx-exp", None)
        assert (await _describe(c, "tx-exp")).error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
        r = await c.call("ListTransactions", 0, state_filters=[], producer_id_filters=[])
        assert [x.transactional_id for x in r.transaction_states] == ["tx-kept"]
        assert await _add(c, "tx-exp", first.producer_id, 0, {"t": [0]}) == {("t", 0): 49}
        again = await _init(c, "tx-exp")
        assert again.error_code == 0 and again.producer_id != first.producer_id

    run(tmp_path, scenario)


def test_state_is_loaded_after_a_restart(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def before(server: KafkaServer, c: Client) -> None:
        init = await _init(c, "tx-r")
        seen["pid"] = init.producer_id
        assert await _add(c, "tx-r", init.producer_id, 0, {"t": [1]}) == {("t", 1): 0}

    async def after(server: KafkaServer, c: Client) -> None:
        d = await _describe(c, "tx-r")
        assert (d.error_code, d.transaction_state, d.producer_id, d.producer_epoch) == (
            0,
            "Ongoing",
            seen["pid"],
            0,
        )
        assert [(t.topic, t.partitions) for t in d.topics] == [("t", [1])]
        assert await _add(c, "tx-r", seen["pid"], 0, {"t": [0]}) == {("t", 0): 0}

    run(tmp_path, before)
    run(tmp_path, after)


# -- cluster mode: ownership by election (Kafka's onElection / onResignation) -------------


class Node:
    """A real replica manager and logs on a tmp dir, one node leading every partition,
    with a one-thread I/O executor a test can hold to keep a load under way."""

    def __init__(self, tmp_path: Path) -> None:
        self.config = BrokerConfig({"log.dirs": str(tmp_path / "logs"), "node.id": 1, **PROPS})
        (tmp_path / "meta").mkdir(exist_ok=True)
        self.store = EmbeddedMetadataStore(tmp_path / "meta", 1)
        self.logs = LogManager(
            broker_config=self.config, cluster_id=self.store.cluster_id, node_id=1, progress=None
        )
        self.logs.startup()
        self.cache = MetadataCache(controller_id=1)
        self.executor = ThreadPoolExecutor(max_workers=1)
        self.replicas = ReplicaManager(
            lambda: self.config, self.logs, self.store, self.cache, 1, self.executor
        )
        self.store.add_listener(self.replicas)
        self.cache.follow(self.store, ("1", "default"))
        self.replicas.load()
        if not self.cache.contains_topic("t"):
            self.replicas.ensure_topic("t", 2)

    def coordinator(self, *, cluster_mode: bool) -> TransactionCoordinator:
        async def allocate() -> int:
            return self.store.allocate_producer_id()

        markers = TransactionMarkerChannelManager(
            1,
            self.cache,
            self.replicas,
            lambda broker: broker_client(self.config, broker, "txn-marker-sender"),
        )
        return TransactionCoordinator(
            self.config,
            self.replicas,
            allocate,
            io_executor=self.executor,
            cluster_mode=cluster_mode,
            markers=markers,
        )

    def hold(self) -> threading.Event:
        gate = threading.Event()
        self.executor.submit(gate.wait, 10)
        return gate

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        self.logs.shutdown()


def test_cluster_ownership_follows_elections(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        writer = node.coordinator(cluster_mode=False)
        await writer.state.ensure_topic()
        init = await writer.init_producer_id("a", 60000)
        assert init.error_code == 0
        tp = TopicPartition("t", 0)
        assert await writer.add_partitions("a", init.producer_id, 0, {tp}) == 0
        p = writer.partition_for("a")
        await writer.stop()

        c = node.coordinator(cluster_mode=True)
        assert c.state.owned_partitions() == set()
        assert (await c.init_producer_id("a", 60000)).error_code == ErrorCode.NOT_COORDINATOR
        assert c.describe("a").error_code == ErrorCode.NOT_COORDINATOR
        gate = node.hold()
        c.on_leadership_change([(TopicPartition(TRANSACTION_STATE_TOPIC, p), 4)], [])
        assert c.describe("a").error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert await c.add_partitions("a", init.producer_id, 0, {tp}) == 14
        assert c.list_transactions([], [])[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        gate.set()
        deadline = time.monotonic() + 10
        while c.state.loading:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        d = c.describe("a")
        assert (d.error_code, d.state, d.producer_id, d.partitions) == (
            0,
            "Ongoing",
            init.producer_id,
            (("t", (0,)),),
        )
        assert c.state.get_state("a")[1] == 4  # the coordinator epoch is the leader epoch
        c.on_leadership_change([], [(TopicPartition(TRANSACTION_STATE_TOPIC, p), 3)])  # stale
        assert c.describe("a").error_code == 0
        c.on_leadership_change([], [(TopicPartition(TRANSACTION_STATE_TOPIC, p), 5)])
        assert c.describe("a").error_code == ErrorCode.NOT_COORDINATOR
        c.on_leadership_change([(TopicPartition(TRANSACTION_STATE_TOPIC, p), 4)], [])  # stale
        assert not c.state.loading
        c.on_leadership_change([(TopicPartition(TRANSACTION_STATE_TOPIC, p), 6)], [])
        while c.state.loading:
            await asyncio.sleep(0.01)
        assert c.state.get_state("a")[1] == 6
        assert (
            await c.init_producer_id("a", 60000)
        ).error_code == ErrorCode.CONCURRENT_TRANSACTIONS
        await c.stop()

    node = Node(tmp_path)
    try:
        asyncio.run(scenario(node))
    finally:
        node.close()


class _RecordingReplicas:
    def __init__(self, cache: MetadataCache) -> None:
        self.config = BrokerConfig(PROPS)
        self.cache = cache
        self.created: list[tuple[str, int, dict[str, str], list[list[int]]]] = []

    def create_topic(
        self, name: str, partitions: int, configs: dict[str, str], *, assignment: list[list[int]]
    ) -> None:
        self.created.append((name, partitions, configs, assignment))


def test_cluster_topic_gets_the_replication_factor_over_the_live_brokers() -> None:
    cache = MetadataCache(controller_id=1)
    for n in (1, 2):
        cache.register_broker(BrokerInfo(n, "h", 9090 + n))
    replicas = _RecordingReplicas(cache)
    writer = CoordinatorPartitionWriter(replicas)  # type: ignore[arg-type]
    topic = transaction_state_topic(writer, replicas.config, True)
    with pytest.raises(InvalidReplicationFactorError):  # 3 replicas by default
        topic.ensure_created()
    cache.register_broker(BrokerInfo(3, "h", 9093))
    topic.ensure_created()
    [(name, count, configs, assignment)] = replicas.created
    assert (name, count) == (TRANSACTION_STATE_TOPIC, 5)
    assert configs == {
        "cleanup.policy": "compact",
        "compression.type": "uncompressed",
        "unclean.leader.election.enable": "false",
        "segment.bytes": str(100 * 1024 * 1024),
        "min.insync.replicas": "2",
    }
    assert all(sorted(r) == [1, 2, 3] for r in assignment)


def test_prepare_commit_found_on_load_is_completed(tmp_path: Path) -> None:
    """A broker stopped between PrepareCommit and the markers (the record written here
    as the coordinator writes it) completes the transaction when it loads the partition:
    the markers are sent, CompleteCommit written, the read_committed end moves on."""
    seen: dict[str, int] = {}

    async def before(server: KafkaServer, c: Client) -> None:
        init = await _init(c, "tx-p")
        pid = seen["pid"] = init.producer_id
        assert await _add(c, "tx-p", pid, 0, {"t": [0]}) == {("t", 0): 0}
        batch = record.build_batch(
            [(0, 1, b"k", b"v", [])],
            producer_id=pid,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
        )
        cls = APIS_BY_NAME["Produce"].request.cls
        r = await c.call(
            "Produce",
            9,
            transactional_id="tx-p",
            acks=-1,
            timeout_ms=5000,
            topic_data=[
                cls.TopicProduceData(
                    name="t", partition_data=[cls.PartitionProduceData(index=0, records=batch)]
                )
            ],
        )
        assert r.responses[0].partition_responses[0].error_code == 0
        coordinator = _coordinator(server)
        [(_epoch, metadata)] = [
            (e, m) for e, m in coordinator.state.all_transactions() if m.transactional_id == "tx-p"
        ]
        value = metadata.prepare_abort_or_commit(
            S.PREPARE_COMMIT, coordinator.clock()
        ).to_log_value()
        metadata.abort_transition()
        index = coordinator.partition_for("tx-p")
        await coordinator.state.runtime.append(
            index, [(encode_txn_key("tx-p"), encode_txn_value(value))]
        )
        assert server.replicas is not None
        assert server.replicas.get_log("t", 0).first_unstable_offset == 0  # type: ignore[union-attr]

    async def after(server: KafkaServer, c: Client) -> None:
        d = await _wait_state(c, "tx-p", "CompleteCommit")
        assert (d.transaction_state, d.producer_id, d.topics) == (
            "CompleteCommit",
            seen["pid"],
            [],
        )
        assert _control_batches(server, "t", 0) == [(seen["pid"], 0, True, 0)]
        assert server.replicas is not None
        assert server.replicas.get_log("t", 0).first_unstable_offset is None  # type: ignore[union-attr]

    run(tmp_path, before)
    run(tmp_path, after)


# -- a real client -------------------------------------------------------------------------


def test_confluent_kafka_commit_and_abort(tmp_path: Path) -> None:
    """librdkafka's transactional producer (FindCoordinator key type 1, InitProducerId v4,
    AddPartitionsToTxn v0, EndTxn v1): an aborted then a committed transaction; a
    read_committed consumer sees only the committed record, read_uncommitted both."""

    def clients(port: int) -> tuple[list[bytes], list[bytes]]:
        bootstrap = f"localhost:{port}"
        producer = ck.Producer(
            {"bootstrap.servers": bootstrap, "transactional.id": "ck-tx", "linger.ms": 0}
        )
        producer.init_transactions(20)
        producer.begin_transaction()
        producer.produce("t", value=b"aborted", partition=0)
        assert producer.flush(10) == 0
        producer.abort_transaction(20)
        producer.begin_transaction()
        producer.produce("t", value=b"committed", partition=0)
        producer.commit_transaction(20)

        def read(isolation: str) -> list[bytes]:
            consumer = ck.Consumer(
                {
                    "bootstrap.servers": bootstrap,
                    "group.id": f"reader-{isolation}",
                    "isolation.level": isolation,
                    "enable.auto.commit": False,
                    "enable.partition.eof": True,
                }
            )
            consumer.assign([ck.TopicPartition("t", 0, ck.OFFSET_BEGINNING)])
            values: list[bytes] = []
            deadline = time.monotonic() + 15
            try:
                while time.monotonic() < deadline:
                    msg = consumer.poll(0.2)
                    if msg is None:
                        continue
                    if msg.error():
                        if msg.error().code() == ck.KafkaError._PARTITION_EOF:
                            break
                        raise AssertionError(msg.error())
                    values.append(msg.value())
            finally:
                consumer.close()
            return values

        return read("read_committed"), read("read_uncommitted")

    async def scenario(server: KafkaServer, c: Client) -> None:
        committed, uncommitted = await asyncio.to_thread(clients, server.bound_port)
        assert committed == [b"committed"]
        assert uncommitted == [b"aborted", b"committed"]
        d = await _wait_state(c, "ck-tx", "CompleteCommit")
        assert (d.transaction_state, d.producer_epoch) == ("CompleteCommit", 0)
        assert [ctrl[2] for ctrl in _control_batches(server, "t", 0)] == [False, True]

    run(tmp_path, scenario)


# -- authorization -------------------------------------------------------------------------


def test_authorization(tmp_path: Path) -> None:
    """WRITE on the TransactionalId (53), WRITE on the topics (29, the others 55), READ on
    the group (30), CLUSTER_ACTION for the v4+ form (31), DESCRIBE for Describe/List."""

    def acl(rt: ResourceType, name: str, op: AclOperation) -> AclBinding:
        return AclBinding(
            ResourcePattern(rt, name, PatternType.LITERAL),
            AccessControlEntry("User:ANONYMOUS", "*", op, AclPermissionType.ALLOW),
        )

    def use(server: KafkaServer, *bindings: AclBinding, super_user: bool = False) -> None:
        authorizer = Authorizer(
            AclStore(bindings), super_users=["User:ANONYMOUS"] if super_user else []
        )
        object.__setattr__(server.services, "authorizer", authorizer)

    async def scenario(server: KafkaServer, c: Client) -> None:
        use(server, super_user=True)
        a = await _init(c, "az-a")
        await _init(c, "az-b")
        pid = a.producer_id
        use(server)  # no ACL: everything refused
        assert (await _init(c, "az-a")).error_code == 53
        r = await c.call("FindCoordinator", 4, key_type=1, coordinator_keys=["az-a"])
        assert r.coordinators[0].error_code == 53
        assert await _add(c, "az-a", pid, 0, {"t": [0, 1]}) == {("t", 0): 53, ("t", 1): 53}
        r = await c.call(
            "AddOffsetsToTxn",
            0,
            transactional_id="az-a",
            producer_id=pid,
            producer_epoch=0,
            group_id="g",
        )
        assert r.error_code == 53
        assert await _end(c, "az-a", pid, 0, True) == 53
        assert (await _describe(c, "az-a")).error_code == 53
        r = await c.call("ListTransactions", 0, state_filters=[], producer_id_filters=[])
        assert (r.error_code, r.transaction_states) == (0, [])
        r = await c.call("AddPartitionsToTxn", 4, transactions=[])
        assert (r.error_code, r.results_by_transaction) == (31, [])

        txn_write = acl(ResourceType.TRANSACTIONAL_ID, "az-a", AclOperation.WRITE)
        use(server, txn_write)
        assert await _add(c, "az-a", pid, 0, {"t": [0], "az-missing": [0]}) == {
            ("t", 0): 29,
            ("az-missing", 0): 29,
        }
        topics_write = [
            acl(ResourceType.TOPIC, name, AclOperation.WRITE) for name in ("t", "az-missing")
        ]
        use(server, txn_write, *topics_write)
        assert await _add(c, "az-a", pid, 0, {"t": [0], "az-missing": [0]}) == {
            ("t", 0): 55,
            ("az-missing", 0): 3,
        }
        assert await _add(c, "az-a", pid, 0, {"t": [0]}) == {("t", 0): 0}
        r = await c.call(
            "AddOffsetsToTxn",
            0,
            transactional_id="az-a",
            producer_id=pid,
            producer_epoch=0,
            group_id="g",
        )
        assert r.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
        assert (await _describe(c, "az-a")).transaction_state == "Ongoing"  # WRITE implies DESCRIBE
        assert (await _describe(c, "az-b")).error_code == 53
        r = await c.call("ListTransactions", 0, state_filters=[], producer_id_filters=[])
        assert [x.transactional_id for x in r.transaction_states] == ["az-a"]
        use(server, acl(ResourceType.CLUSTER, CLUSTER_NAME, AclOperation.CLUSTER_ACTION))
        assert await _verify(c, ("az-a", pid, 0, {"t": [0, 1]})) == [
            ("az-a", "t", 0, 0),
            ("az-a", "t", 1, ErrorCode.TRANSACTION_ABORTABLE),
        ]

    run(tmp_path, scenario)
