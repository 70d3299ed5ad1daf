"""The partition leader's side of transactions over the wire (one in-process broker per
test, raw protocol): WriteTxnMarkers (27) over the wire and in-process, Fetch
read_committed (last stable offset, aborted transactions, a delayed fetch completed by a
marker), ListOffsets isolation levels, Produce's transactional errors
(INVALID_TXN_STATE, INVALID_PRODUCER_EPOCH), DescribeProducers (61), and the
CLUSTER_ACTION check of WriteTxnMarkers."""

from __future__ import annotations

import asyncio
import heapq
from pathlib import Path
from typing import Any

from kafkacore.log import TopicPartition
from kafkacore.native import backend
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.record import batch_header, iter_batches
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
from kafkacore.server.handlers.txn_markers import write_txn_markers
from kafkacore.server.txn.markers import MarkerResult
from support.raw_client import (
    OneShotClient,
    RawClient,
    fetch_request,
    make_request,
    produce_request,
    run_broker,
)

TOPIC = "txn"
P1, P2, P3 = 4000, 5000, 6000
_MARKERS: Any = APIS_BY_NAME["WriteTxnMarkers"].request.cls
_LIST: Any = APIS_BY_NAME["ListOffsets"].request.cls


def txn_batch(pid: int, seq: int, *, epoch: int = 0, transactional: bool = True) -> bytes:
    return backend.build_batch(
        [(0, 1_000, b"k", b"v%d" % pid, [])],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=transactional,
    )


def markers_request(*markers: tuple[int, int, bool, int, str, list[int]]) -> Any:
    """WriteTxnMarkers of ``(producer id, epoch, commit, coordinator epoch, topic,
    partitions)`` each."""
    return _MARKERS(
        markers=[
            _MARKERS.WritableTxnMarker(
                producer_id=pid,
                producer_epoch=epoch,
                transaction_result=commit,
                topics=[_MARKERS.WritableTxnMarkerTopic(name=topic, partition_indexes=parts)],
                coordinator_epoch=coordinator_epoch,
            )
            for pid, epoch, commit, coordinator_epoch, topic, parts in markers
        ]
    )


def codes(response: Any) -> list[list[int]]:
    return [[p.error_code for t in m.topics for p in t.partitions] for m in response.markers]


async def produce_answer(
    client: RawClient, records: bytes, *, transactional_id: str = "tx", version: int = 9
) -> Any:
    """The partition answer of a Produce of ``records`` to partition 0 (acks=-1)."""
    request = produce_request(TOPIC, 0, records)
    request.transactional_id = transactional_id
    response = await client.call("Produce", version, request)
    return response.responses[0].partition_responses[0]


async def produce(client: RawClient, records: bytes) -> int:
    """The error code, or -1000 - the base offset."""
    part = await produce_answer(client, records)
    return part.error_code if part.error_code else -part.base_offset - 1000


def committed_fetch(offset: int = 0, *, wait_ms: int = 0) -> Any:
    request = fetch_request(TOPIC, 0, fetch_offset=offset)
    request.isolation_level = 1
    request.max_wait_ms = wait_ms
    return request


def visible(data: Any) -> list[int]:
    """What a read_committed client returns from a fetched partition (Kafka's
    ``CompletedFetch.nextFetchedRecord``): offsets of data records not aborted."""
    aborted = [(a.first_offset, a.producer_id) for a in data.aborted_transactions]
    heapq.heapify(aborted)
    aborting: set[int] = set()
    out: list[int] = []
    raw = bytes(data.records)
    for position, _magic, _size in iter_batches(raw):
        h = batch_header(raw, position)
        while aborted and aborted[0][0] <= h.last_offset:
            aborting.add(heapq.heappop(aborted)[1])
        if h.is_control:
            aborting.discard(h.producer_id)
        elif not (h.is_transactional and h.producer_id in aborting):
            out.extend(range(h.base_offset, h.last_offset + 1))
    return out


async def list_offset(client: RawClient, timestamp: int, isolation: int) -> tuple[int, int]:
    request = _LIST(
        replica_id=-1,
        isolation_level=isolation,
        topics=[
            _LIST.ListOffsetsTopic(
                name=TOPIC,
                partitions=[
                    _LIST.ListOffsetsPartition(
                        partition_index=0, current_leader_epoch=-1, timestamp=timestamp
                    )
                ],
            )
        ],
    )
    answer = (await client.call("ListOffsets", 7, request)).topics[0].partitions[0]
    assert answer.error_code == 0
    return answer.offset, answer.timestamp


def test_markers_lso_fetch_list_offsets_and_produce_errors(tmp_path: Path) -> None:
    async def scenario(server: Any) -> None:
        services = server.services
        await services.run_io(services.replica_manager.create_topic, TOPIC, 1)
        client = await RawClient.connect(server.bound_port)
        try:
            assert await produce(client, txn_batch(P1, 0)) == -1000  # offset 0
            assert await produce(client, txn_batch(P2, 0)) == -1001  # offset 1
            # transactional batches without a transactional id: refused, nothing appended
            orphan = produce_request(TOPIC, 0, txn_batch(P3, 0))
            answer = (await client.call("Produce", 9, orphan)).responses[0]
            assert [(p.error_code, p.base_offset) for p in answer.partition_responses] == [(53, -1)]
            # a non-transactional write of a producer with an open transaction
            assert await produce(client, txn_batch(P1, 1, transactional=False)) == 48

            response = await client.call("Fetch", 12, committed_fetch())
            data = response.responses[0].partitions[0]
            assert (data.high_watermark, data.last_stable_offset) == (2, 0)
            assert len(data.records) == 0 and data.aborted_transactions == []
            uncommitted = (await client.call("Fetch", 12, fetch_request(TOPIC, 0))).responses
            assert uncommitted[0].partitions[0].aborted_transactions is None
            assert await list_offset(client, -1, 1) == (0, -1)
            assert await list_offset(client, -1, 0) == (2, -1)
            assert await list_offset(client, 0, 1) == (-1, -1)  # hit at 0 >= LSO
            assert await list_offset(client, 0, 0) == (0, 1_000)

            # a read_committed fetch waiting for data is completed by the ABORT of P1
            waiter = await RawClient.connect(server.bound_port)
            delayed = asyncio.create_task(
                waiter.call("Fetch", 12, committed_fetch(wait_ms=5_000), cid=9)
            )
            await asyncio.sleep(0.3)
            assert not delayed.done()
            answer = await client.call(
                "WriteTxnMarkers", 1, markers_request((P1, 0, False, 3, TOPIC, [0]))
            )
            assert codes(answer) == [[0]]
            data = (await asyncio.wait_for(delayed, 5)).responses[0].partitions[0]
            waiter.close()
            assert data.last_stable_offset == 1  # P2's transaction is still open at 1
            assert [(a.producer_id, a.first_offset) for a in data.aborted_transactions] == [(P1, 0)]
            assert visible(data) == []

            # the coordinator's in-process call commits P2
            answer = await write_txn_markers(
                services, markers_request((P2, 0, True, 3, TOPIC, [0]))
            )
            assert codes(answer) == [[0]]
            data = (await client.call("Fetch", 12, committed_fetch())).responses[0].partitions[0]
            assert (data.high_watermark, data.last_stable_offset) == (4, 4)
            assert [(a.producer_id, a.first_offset) for a in data.aborted_transactions] == [(P1, 0)]
            assert visible(data) == [1]
            assert await list_offset(client, -1, 1) == (4, -1)
            assert await list_offset(client, 0, 1) == (0, 1_000)

            # fencing: a marker below the producer's epoch, a zombie coordinator
            assert await produce(client, txn_batch(P2, 0, epoch=1)) == -1004
            assert await produce(client, txn_batch(P2, 1, epoch=0)) == 47
            answer = await client.call(
                "WriteTxnMarkers",
                0,
                markers_request(
                    (P2, 0, True, 3, TOPIC, [0]),
                    (P2, 1, True, 2, TOPIC, [0]),
                    (P3, 0, True, 3, "nope", [0]),
                    (P3, 0, True, 3, TOPIC, [7]),
                ),
            )
            assert codes(answer) == [[47], [52], [3], [3]]
            assert await list_offset(client, -1, 1) == (4, -1)  # still open at 4

            described = await client.call(
                "DescribeProducers",
                0,
                make_request(
                    "DescribeProducers",
                    topics=[
                        APIS_BY_NAME["DescribeProducers"].request.cls.TopicRequest(
                            name=TOPIC, partition_indexes=[0, 3]
                        )
                    ],
                ),
            )
            [found, missing] = described.topics[0].partitions
            assert (found.error_code, missing.error_code) == (0, 3)
            states = {
                p.producer_id: (
                    p.producer_epoch,
                    p.last_sequence,
                    p.coordinator_epoch,
                    p.current_txn_start_offset,
                )
                for p in found.active_producers
            }
            assert states == {P1: (0, 0, 3, -1), P2: (1, 0, 3, 4)}
        finally:
            client.close()

    # made-up producer ids, no coordinator: the KIP-890 verification is the next test's
    run_broker(tmp_path, scenario, **{"transaction.partition.verification.enable": "false"})


async def offsets_topic_told(services: Any) -> list[tuple[int, int, bool]]:
    """``__consumer_offsets`` (2 partitions) made, and a list that gets every
    ``(partition, producer id, committed)`` the group coordinator is told of."""
    rm = services.replica_manager
    await services.run_io(rm.ensure_topic, "__consumer_offsets", 2, {"cleanup.policy": "compact"})
    told: list[tuple[int, int, bool]] = []
    original = services.group_coordinator.on_transaction_completed

    async def spy(partition: int, producer_id: int, committed: bool) -> None:
        told.append((partition, producer_id, committed))
        await original(partition, producer_id, committed)

    services.group_coordinator.on_transaction_completed = spy
    return told


def test_markers_on_consumer_offsets_reach_the_group_coordinator_and_need_cluster_action(
    tmp_path: Path,
) -> None:
    async def scenario(server: Any) -> None:
        services = server.services
        rm = services.replica_manager
        told = await offsets_topic_told(services)
        answer = await write_txn_markers(
            services,
            markers_request(
                (P1, 0, True, 0, "__consumer_offsets", [1]),
                (P2, 0, False, 0, "__consumer_offsets", [0, 5]),
            ),
        )
        assert codes(answer) == [[0], [0, 3]]
        assert told == [(1, P1, True), (0, P2, False)]
        log = rm.get_log("__consumer_offsets", 1)
        assert log is not None and log.log_end_offset == 1

        client = await RawClient.connect(server.bound_port)
        try:
            allow = AccessControlEntry(
                "User:ANONYMOUS", "*", AclOperation.ALL, AclPermissionType.ALLOW
            )
            topics_only = AclBinding(
                ResourcePattern(ResourceType.TOPIC, "*", PatternType.LITERAL), allow
            )
            object.__setattr__(services, "authorizer", Authorizer(AclStore([topics_only])))
            request = markers_request((P3, 0, True, 0, "__consumer_offsets", [0, 1]))
            assert codes(await client.call("WriteTxnMarkers", 1, request)) == [[31, 31]]
            assert told[2:] == []
            cluster = AclBinding(
                ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL),
                AccessControlEntry(
                    "User:ANONYMOUS", "*", AclOperation.CLUSTER_ACTION, AclPermissionType.ALLOW
                ),
            )
            object.__setattr__(services, "authorizer", Authorizer(AclStore([cluster])))
            assert codes(await client.call("WriteTxnMarkers", 1, request)) == [[0, 0]]
            assert told[2:] == [(0, P3, True), (1, P3, True)]
        finally:
            client.close()

    run_broker(tmp_path, scenario, **{"offsets.topic.num.partitions": 2})


def test_the_marker_channel_writes_local_markers_through_the_replica_manager(
    tmp_path: Path,
) -> None:
    """The coordinator's marker channel, for partitions this broker leads, calls
    ReplicaManager.append_txn_markers as the WriteTxnMarkers handler does: the markers
    land, the group coordinator hears of the one in ``__consumer_offsets``, a fenced
    producer epoch cancels the round."""

    async def scenario(server: Any) -> None:
        services = server.services
        rm = services.replica_manager
        await services.run_io(rm.create_topic, TOPIC, 1)
        told = await offsets_topic_told(services)
        client = await RawClient.connect(server.bound_port)
        try:
            assert await produce(client, txn_batch(P1, 0)) == -1000
        finally:
            client.close()
        channel = services.txn_coordinator.markers  # the broker's own, as assembled
        partitions = {TopicPartition(TOPIC, 0), TopicPartition("__consumer_offsets", 1)}
        done: list[TopicPartition] = []
        result = await channel.send_markers(
            "tx", P1, 0, True, 3, partitions, is_current=lambda: True, on_partition_done=done.append
        )
        assert (result, set(done), told) == (MarkerResult.COMPLETED, partitions, [(1, P1, True)])
        log = rm.get_log(TOPIC, 0)
        assert log is not None and log.log_end_offset == 2
        assert rm.get_partition(TopicPartition(TOPIC, 0)).last_stable_offset == 2
        # a marker below the producer's epoch now: INVALID_PRODUCER_EPOCH cancels the round
        assert await produce_with_epoch(server, 1) == -1002
        result = await channel.send_markers(
            "tx",
            P1,
            0,
            False,
            3,
            partitions,
            is_current=lambda: True,
            on_partition_done=done.append,
        )
        assert result == MarkerResult.CANCELLED

    run_broker(tmp_path, scenario, **{"transaction.partition.verification.enable": "false"})


async def produce_with_epoch(server: Any, epoch: int) -> int:
    client = await RawClient.connect(server.bound_port)
    try:
        return await produce(client, txn_batch(P1, 0, epoch=epoch))
    finally:
        client.close()


def test_transactional_produce_is_verified_with_the_coordinator(tmp_path: Path) -> None:
    """KIP-890 part 1 against the in-process coordinator: a transactional write to a
    partition not in the transaction is refused (INVALID_TXN_STATE up to Produce 10,
    TRANSACTION_ABORTABLE at 11), also after the commit (no hanging transaction); once
    added it is appended, and EndTxn's markers move the LSO."""

    async def scenario(server: Any) -> None:
        services = server.services
        await services.run_io(services.replica_manager.create_topic, TOPIC, 2)
        c = OneShotClient(server.bound_port)
        assert (await c.call("FindCoordinator", 3, key="v-tx", key_type=1)).error_code == 0
        init = await c.call(
            "InitProducerId",
            4,
            transactional_id="v-tx",
            transaction_timeout_ms=60_000,
            producer_id=-1,
            producer_epoch=-1,
        )
        assert init.error_code == 0
        pid, epoch = init.producer_id, init.producer_epoch
        client = await RawClient.connect(server.bound_port)

        async def send(seq: int, version: int = 9) -> tuple[int, str | None]:
            records = txn_batch(pid, seq, epoch=epoch)
            answer = await produce_answer(client, records, transactional_id="v-tx", version=version)
            return answer.error_code, answer.error_message

        try:
            assert await send(0) == (48, "Partition was not added to the transaction")
            assert (await send(0, version=11))[0] == 120
            added = await c.call(
                "AddPartitionsToTxn",
                0,
                v3_and_below_transactional_id="v-tx",
                v3_and_below_producer_id=pid,
                v3_and_below_producer_epoch=epoch,
                v3_and_below_topics=[
                    APIS_BY_NAME["AddPartitionsToTxn"].request.cls.AddPartitionsToTxnTopic(
                        name=TOPIC, partitions=[0]
                    )
                ],
            )
            assert (
                added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
                == 0
            )
            # the same question over the wire (what a leader asks a remote coordinator)
            rm = services.replica_manager
            other = TopicPartition(TOPIC, 1)
            answers = await rm.verify_transaction_remotely(
                services.node_id, "v-tx", pid, epoch, {TopicPartition(TOPIC, 0), other}
            )
            assert answers == {TopicPartition(TOPIC, 0): 0, other: 120}
            fenced = await rm.verify_transaction_remotely(
                services.node_id, "v-tx", pid, epoch + 1, {other}
            )
            assert fenced == {other: 90}
            assert await send(0) == (0, None)
            assert await send(1) == (0, None)  # the transaction is open here: not asked
            assert await list_offset(client, -1, 1) == (0, -1)
            ended = await c.call(
                "EndTxn",
                1,
                transactional_id="v-tx",
                producer_id=pid,
                producer_epoch=epoch,
                committed=True,
            )
            assert ended.error_code == 0
            for _ in range(100):  # the markers are written after EndTxn's answer
                if await list_offset(client, -1, 1) == (3, -1):
                    break
                await asyncio.sleep(0.05)
            assert await list_offset(client, -1, 1) == (3, -1)
            # a late write of the ended transaction does not open a new one. Until the
            # coordinator has written CompleteCommit (after the markers) the verification
            # answers CONCURRENT_TRANSACTIONS, which a Produce reports as the retriable
            # NOT_ENOUGH_REPLICAS (19), as Kafka's does; a producer retries it.
            for _ in range(100):
                late = (await send(2))[0]
                if late != ErrorCode.NOT_ENOUGH_REPLICAS:
                    break
                await asyncio.sleep(0.05)
            assert late == 48
            assert await list_offset(client, -1, 1) == (3, -1)
        finally:
            client.close()

    run_broker(tmp_path, scenario, **{"transaction.state.log.num.partitions": 1})
