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

from kafkacore.native import backend
from kafkacore.protocol import APIS_BY_NAME
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
from support.raw_client import RawClient, fetch_request, make_request, run_broker

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


async def produce(client: RawClient, records: bytes) -> int:
    request = make_request(
        "Produce",
        transactional_id="tx",
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            APIS_BY_NAME["Produce"].request.cls.TopicProduceData(
                name=TOPIC,
                partition_data=[
                    APIS_BY_NAME["Produce"].request.cls.PartitionProduceData(
                        index=0, records=records
                    )
                ],
            )
        ],
    )
    response = await client.call("Produce", 9, request)
    part = response.responses[0].partition_responses[0]
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

    run_broker(tmp_path, scenario)


def test_markers_on_consumer_offsets_reach_the_group_coordinator_and_need_cluster_action(
    tmp_path: Path,
) -> None:
    async def scenario(server: Any) -> None:
        services = server.services
        rm = services.replica_manager
        await services.run_io(
            rm.ensure_topic, "__consumer_offsets", 2, {"cleanup.policy": "compact"}
        )
        told: list[tuple[int, int, bool]] = []
        original = services.group_coordinator.on_transaction_completed

        async def spy(partition: int, producer_id: int, committed: bool) -> None:
            told.append((partition, producer_id, committed))
            await original(partition, producer_id, committed)

        services.group_coordinator.on_transaction_completed = spy
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
