"""Fetch from followers (KIP-392) between real in-process brokers, the test playing the
controller (``test_replication_cluster``'s harness): the leader's ``preferred_read_replica``
under Kafka's ``RackAwareReplicaSelector`` and under the default (no selector), followers
serving Fetch v11+ consumers up to the high watermark they know, the errors that send a
consumer back (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, OFFSET_OUT_OF_RANGE,
NOT_LEADER_OR_FOLLOWER), fetch sessions held by a follower, read_committed on a follower
(its own last stable offset and aborted transactions), and ListOffsets'
OFFSET_NOT_AVAILABLE while a new leader's high watermark lags its epoch start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.log import TopicPartition
from kafkacore.protocol import APIS_BY_NAME, ApiKey, ErrorCode
from kafkacore.server.replica_selector import (
    RACK_AWARE_REPLICA_SELECTOR,
    ClientMetadata,
    RackAwareReplicaSelector,
    ReplicaView,
    create_replica_selector,
    partition_view,
)
from support.raw_client import fetch_request, produce_request
from test_replication_cluster import TOPIC, TOPIC_ID, Cluster, batch, eventually, run_cluster
from test_txn_markers import markers_request, txn_batch

RACKS = {1: "a", 2: "b", 3: "c"}
RACK_AWARE = {"replica.selector.class": RACK_AWARE_REPLICA_SELECTOR}
_FETCH: Any = APIS_BY_NAME["Fetch"].request.cls
_LIST: Any = APIS_BY_NAME["ListOffsets"].request.cls
_STOP: Any = APIS_BY_NAME["StopReplica"].request.cls


def consumer_fetch(
    rack: str,
    *,
    offset: int = 0,
    epoch: int = -1,
    read_committed: bool = False,
    session: tuple[int, int] = (0, -1),
) -> Any:
    request = fetch_request(TOPIC, 0, fetch_offset=offset, current_leader_epoch=epoch)
    request.rack_id = rack
    request.isolation_level = 1 if read_committed else 0
    request.session_id, request.session_epoch = session
    return request


async def fetched(cluster: Cluster, node: int, request: Any, version: int = 12) -> Any:
    response = await cluster.send(node, ApiKey.FETCH, version, request)
    assert response.error_code == 0
    return response.responses[0].partitions[0] if response.responses else None


async def three_replicas_caught_up(cluster: Cluster, records: int = 4) -> None:
    """Leader 1 at epoch 1, ISR {1, 2, 3}, ``records`` acked by all, every replica's high
    watermark at the log end."""
    cluster.racks = dict(RACKS)
    await cluster.update_metadata(1, 1, (1, 2, 3))
    for node in (1, 2, 3):
        assert await cluster.leader_and_isr(node, 1, 1, (1, 2, 3)) == 0
    assert (await cluster.produce(1, batch(records, b"x"), acks=-1)).error_code == 0
    await eventually(lambda: all(cluster.partition(n).high_watermark == records for n in RACKS))


def test_the_rack_aware_leader_names_the_follower_in_the_consumer_rack(tmp_path: Path) -> None:
    async def scenario(cluster: Cluster) -> None:
        await three_replicas_caught_up(cluster)
        leader_bytes = cluster.log_bytes(1)
        for rack, preferred in (("b", 2), ("c", 3), ("a", -1), ("", -1), ("z", -1)):
            data = await fetched(cluster, 1, consumer_fetch(rack, epoch=1))
            assert (data.error_code, data.preferred_read_replica) == (0, preferred), rack
            if preferred >= 0:
                # Kafka skips the read: the offsets only, no records
                assert len(data.records or b"") == 0
                assert (data.high_watermark, data.last_stable_offset) == (4, 4)
                assert data.log_start_offset == 0
            else:
                assert bytes(data.records) == leader_bytes
        # before v11 a fetch carries no client metadata: the leader serves it
        data = await fetched(cluster, 1, consumer_fetch("b", epoch=1), version=10)
        assert (data.preferred_read_replica, bytes(data.records)) == (-1, leader_bytes)
        # a follower's own fetch is never redirected
        follower = consumer_fetch("b", epoch=1)
        follower.replica_id = 2
        data = await fetched(cluster, 1, follower)
        assert data.preferred_read_replica == -1

        # the follower serves the consumer sent to it, up to its high watermark
        data = await fetched(cluster, 2, consumer_fetch("b", epoch=1))
        assert (data.error_code, data.preferred_read_replica) == (0, -1)
        assert bytes(data.records) == leader_bytes
        assert data.high_watermark == cluster.partition(2).high_watermark == 4

        # a follower out of the ISR is no longer named: the leader serves its rack
        for node in (1, 2, 3):
            assert await cluster.leader_and_isr(node, 1, 2, (1, 3)) == 0
        data = await fetched(cluster, 1, consumer_fetch("b", epoch=2))
        assert (data.preferred_read_replica, bytes(data.records)) == (-1, leader_bytes)
        data = await fetched(cluster, 1, consumer_fetch("c", epoch=2))
        assert data.preferred_read_replica == 3

    run_cluster(tmp_path, 3, scenario, **RACK_AWARE)


def test_without_a_selector_the_leader_serves_and_followers_still_serve_v11(
    tmp_path: Path,
) -> None:
    """Kafka's default (``replica.selector.class`` unset): no preferred replica, yet a
    follower answers a v11+ consumer that comes to it and refuses an older one."""

    async def scenario(cluster: Cluster) -> None:
        await three_replicas_caught_up(cluster)
        data = await fetched(cluster, 1, consumer_fetch("b", epoch=1))
        assert (data.preferred_read_replica, bytes(data.records)) == (-1, cluster.log_bytes(1))
        data = await fetched(cluster, 2, consumer_fetch("b", epoch=1))
        assert (data.error_code, bytes(data.records)) == (0, cluster.log_bytes(1))
        data = await fetched(cluster, 2, consumer_fetch("b", epoch=1), version=10)
        assert data.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER

    run_cluster(tmp_path, 3, scenario)


def test_a_follower_sends_the_consumer_back_with_kafkas_errors(tmp_path: Path) -> None:
    """On a follower: an older epoch FENCED_LEADER_EPOCH, a newer one
    UNKNOWN_LEADER_EPOCH, an offset past its log end OFFSET_OUT_OF_RANGE, and once it is
    no replica (StopReplica with delete) NOT_LEADER_OR_FOLLOWER with the current leader
    (v16+) - each makes Kafka's consumer drop the preferred replica."""

    async def scenario(cluster: Cluster) -> None:
        await three_replicas_caught_up(cluster)
        for epoch, code in (
            (0, ErrorCode.FENCED_LEADER_EPOCH),
            (2, ErrorCode.UNKNOWN_LEADER_EPOCH),
            (1, ErrorCode.NONE),
            (-1, ErrorCode.NONE),
        ):
            data = await fetched(cluster, 2, consumer_fetch("b", epoch=epoch))
            assert data.error_code == code, epoch
        data = await fetched(cluster, 2, consumer_fetch("b", offset=99, epoch=1))
        assert data.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
        await stop_replica(cluster, 2, delete=True)
        by_id = consumer_fetch("b", epoch=1)
        by_id.topics[0].topic_id = TOPIC_ID
        data = await fetched(cluster, 2, by_id, version=16)
        assert data.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert (data.current_leader.leader_id, data.current_leader.leader_epoch) == (1, 1)

    run_cluster(tmp_path, 3, scenario, **RACK_AWARE)


def test_a_follower_serves_only_up_to_the_high_watermark_it_knows(tmp_path: Path) -> None:
    """Replica 3 stops fetching (StopReplica without delete) but stays in the ISR, so the
    leader's HW stays at 3 while follower 2 appends up to 5: a consumer on follower 2
    reads offsets 0-2 only, gets nothing (no error) at 3 and 5, OFFSET_OUT_OF_RANGE
    past its log end."""

    async def scenario(cluster: Cluster) -> None:
        await three_replicas_caught_up(cluster, records=3)
        await stop_replica(cluster, 3, delete=False)
        assert (await cluster.produce(1, batch(2, b"y"), acks=1)).error_code == 0
        follower = cluster.partition(2)
        await eventually(lambda: follower.log.log_end_offset == 5)
        assert (follower.high_watermark, cluster.partition(1).high_watermark) == (3, 3)
        data = await fetched(cluster, 2, consumer_fetch("b"))
        first_three = cluster.servers[1].replicas.get_log(TOPIC, 0).read(0, 1 << 20, 3)  # type: ignore[union-attr]
        assert (data.error_code, data.high_watermark) == (0, 3)
        assert bytes(data.records) == first_three.read_bytes()
        for offset, code in ((3, 0), (5, 0), (6, ErrorCode.OFFSET_OUT_OF_RANGE)):
            data = await fetched(cluster, 2, consumer_fetch("b", offset=offset))
            assert (data.error_code, len(bytes(data.records or b""))) == (code, 0), offset

    run_cluster(tmp_path, 3, scenario, **RACK_AWARE)


async def stop_replica(cluster: Cluster, node: int, *, delete: bool) -> None:
    """StopReplica of the partition to ``node`` (at leader epoch 1)."""
    stop = _STOP(
        controller_id=1,
        controller_epoch=cluster.controller_epoch,
        broker_epoch=-1,
        delete_partitions=False,
        topic_states=[
            _STOP.StopReplicaTopicState(
                topic_name=TOPIC,
                partition_states=[
                    _STOP.StopReplicaPartitionState(
                        partition_index=0, leader_epoch=1, delete_partition=delete
                    )
                ],
            )
        ],
    )
    response = await cluster.send(node, ApiKey.STOP_REPLICA, 4, stop)
    assert response.error_code == 0


def test_fetch_sessions_against_a_follower(tmp_path: Path) -> None:
    """A consumer's fetch session (KIP-227) on a follower: the full request creates it,
    an incremental one with nothing new carries no partition, one after the follower's
    high watermark moved carries the partition and its records."""

    async def scenario(cluster: Cluster) -> None:
        await three_replicas_caught_up(cluster)
        follower = cluster.partition(2)
        response = await cluster.send(
            2, ApiKey.FETCH, 12, consumer_fetch("b", epoch=1, session=(0, 0))
        )
        session = response.session_id
        assert session > 0 and response.error_code == 0
        assert len(bytes(response.responses[0].partitions[0].records)) > 0
        # the consumer's next position: the follower has nothing past it
        same = consumer_fetch("b", offset=4, epoch=1, session=(session, 1))
        response = await cluster.send(2, ApiKey.FETCH, 12, same)
        assert (response.error_code, response.session_id, response.responses) == (0, session, [])
        assert (await cluster.produce(1, batch(3, b"z"), acks=-1)).error_code == 0
        await eventually(lambda: follower.high_watermark == 7)
        # nothing changed in the request: the session carries the partition's offset
        again = consumer_fetch("b", offset=4, epoch=1, session=(session, 2))
        again.topics = []
        response = await cluster.send(2, ApiKey.FETCH, 12, again)
        (topic,) = response.responses
        data = topic.partitions[0]
        assert (data.error_code, data.high_watermark) == (0, 7)
        log = cluster.servers[2].replicas.get_log(TOPIC, 0)  # type: ignore[union-attr]
        assert bytes(data.records) == log.read(4, 1 << 20).read_bytes()

    run_cluster(tmp_path, 3, scenario, **RACK_AWARE)


def test_read_committed_from_a_follower_uses_its_last_stable_offset(tmp_path: Path) -> None:
    """A read_committed consumer on a follower reads up to the follower's last stable
    offset (an open transaction holds it at the transaction's first offset) and gets the
    aborted transactions from the follower's own ``.txnindex``."""

    async def scenario(cluster: Cluster) -> None:
        await three_replicas_caught_up(cluster, records=2)
        follower = cluster.partition(2)
        pid = 4000
        for seq in (0, 1):
            await _produce_transactional(cluster, txn_batch(pid, seq))
        await eventually(lambda: follower.high_watermark == 4)
        data = await fetched(cluster, 2, consumer_fetch("b", read_committed=True))
        assert (data.error_code, data.high_watermark, data.last_stable_offset) == (0, 4, 2)
        before = len(bytes(data.records))
        # committed: the follower's LSO passes the marker once its HW does
        await _markers(cluster, pid, commit=True)
        await eventually(lambda: follower.high_watermark == 5)
        data = await fetched(cluster, 2, consumer_fetch("b", read_committed=True))
        assert data.last_stable_offset == 5 and len(bytes(data.records)) > before
        assert list(data.aborted_transactions) == []
        # an aborted one: listed from the follower's transaction index
        for seq in (2, 3):
            await _produce_transactional(cluster, txn_batch(pid, seq))
        await _markers(cluster, pid, commit=False)
        await eventually(lambda: follower.high_watermark == 8)
        data = await fetched(cluster, 2, consumer_fetch("b", offset=5, read_committed=True))
        assert data.last_stable_offset == 8
        assert [(a.producer_id, a.first_offset) for a in data.aborted_transactions] == [(pid, 5)]

    run_cluster(
        tmp_path, 3, scenario, **RACK_AWARE, **{"transaction.partition.verification.enable": False}
    )


async def _produce_transactional(cluster: Cluster, records: bytes) -> None:
    request = produce_request(TOPIC, 0, records, acks=-1)
    request.transactional_id = "tx"
    response = await cluster.send(1, ApiKey.PRODUCE, 9, request)
    assert response.responses[0].partition_responses[0].error_code == 0


async def _markers(cluster: Cluster, pid: int, *, commit: bool) -> None:
    response = await cluster.send(
        1, ApiKey.WRITE_TXN_MARKERS, 1, markers_request((pid, 0, commit, 0, TOPIC, [0]))
    )
    assert response.markers[0].topics[0].partitions[0].error_code == 0


def test_list_offsets_offset_not_available_while_the_hw_lags_the_epoch_start(
    tmp_path: Path,
) -> None:
    """Kafka's ``fetchOffsetForTimestamp``: a consumer's LATEST (or a timestamp not
    found) from a leader whose HW is below the start of its epoch is OFFSET_NOT_AVAILABLE
    (LEADER_NOT_AVAILABLE before v5); EARLIEST and a follower's request are answered."""

    async def scenario(cluster: Cluster) -> None:
        cluster.racks = dict(RACKS)
        await cluster.update_metadata(1, 1, (1, 2))
        # only the leader hears of the partition: replica 2 never fetches, the HW stays 0
        assert await cluster.leader_and_isr(1, 1, 1, (1, 2)) == 0
        assert (await cluster.produce(1, batch(3, b"x"), acks=1)).error_code == 0
        assert await cluster.leader_and_isr(1, 1, 2, (1, 2)) == 0  # epoch 2 starts at 3
        assert cluster.partition(1).high_watermark == 0

        def request(timestamp: int, replica: int = -1) -> Any:
            return _LIST(
                replica_id=replica,
                isolation_level=0,
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

        async def code(timestamp: int, version: int, replica: int = -1) -> int:
            response = await cluster.send(
                1, ApiKey.LIST_OFFSETS, version, request(timestamp, replica)
            )
            return int(response.topics[0].partitions[0].error_code)

        assert await code(-1, 5) == ErrorCode.OFFSET_NOT_AVAILABLE
        assert await code(-1, 4) == ErrorCode.LEADER_NOT_AVAILABLE
        assert await code(10**13, 7) == ErrorCode.OFFSET_NOT_AVAILABLE
        assert await code(-2, 7) == ErrorCode.NONE
        assert await code(-1, 7, replica=2) == ErrorCode.NONE

    run_cluster(tmp_path, 2, scenario)


# -- the selector on its own (Kafka's ReplicaSelectorTest) ---------------------------------


def _client(rack: str) -> ClientMetadata:
    return ClientMetadata(rack, "c", "127.0.0.1", "User:ANONYMOUS", "PLAINTEXT")


def test_rack_aware_selector_cases() -> None:
    """Kafka's ``ReplicaSelectorTest.testSameRackSelector`` and friends."""
    selector = create_replica_selector(RACK_AWARE_REPLICA_SELECTOR)
    assert isinstance(selector, RackAwareReplicaSelector)
    tp = TopicPartition(TOPIC, 0)
    racks: dict[int, str | None] = {1: "a", 2: "b", 3: "b", 4: None}
    view = partition_view([(2, 10, 5), (3, 12, 9), (4, 12, 0)], racks, (1, 12))
    # the most caught-up of the rack: the larger log end offset wins
    assert selector.select(tp, _client("b"), view) == ReplicaView(3, "b", 12, 9)
    # same log end offset: the one caught up more recently
    view = partition_view([(2, 12, 5), (3, 12, 9)], racks, (1, 12))
    assert selector.select(tp, _client("b"), view) == ReplicaView(2, "b", 12, 5)
    # the leader in the client's rack, no rack, an unknown rack: the leader
    for rack in ("a", "", "x"):
        assert selector.select(tp, _client(rack), view) == view.leader
    # a replica without an endpoint on the listener is Node.noNode(): never matched
    view = partition_view([(5, 12, 0)], {1: "a"}, (1, 12))
    assert selector.select(tp, _client("b"), view) == view.leader
    assert create_replica_selector(None) is None and create_replica_selector(" ") is None


def test_an_unknown_selector_class_is_refused() -> None:
    with pytest.raises(Exception, match="cannot be found"):
        create_replica_selector("org.example.NoSuchSelector")
    with pytest.raises(Exception, match="is not an instance"):
        create_replica_selector("collections.OrderedDict")


@given(
    st.lists(
        st.tuples(st.integers(2, 9), st.integers(0, 50), st.integers(0, 100)),
        unique_by=lambda t: t[0],
        max_size=8,
    ),
    st.sampled_from(["a", "b", "c", ""]),
)
def test_rack_aware_selector_property(
    followers: list[tuple[int, int, int]], client_rack: str
) -> None:
    """Whatever the candidates: the choice is the leader unless the client has a rack the
    leader is not in and some candidate is; then it is in that rack and no candidate of
    the rack is more caught up (larger LEO, or equal LEO and caught up more recently)."""
    racks: dict[int, str | None] = {b: "abc"[b % 3] for b, _l, _s in followers}
    racks[1] = "a"
    view = partition_view(followers, racks, (1, 50))
    chosen = RackAwareReplicaSelector().select(TopicPartition("t", 0), _client(client_rack), view)
    in_rack = [r for r in view.replicas if r.rack == client_rack]
    if not client_rack or client_rack == "a" or not in_rack:
        assert chosen == view.leader
    else:
        assert chosen is not None and chosen.rack == client_rack
        for other in in_rack:
            assert (other.log_end_offset, -other.time_since_last_caught_up_ms) <= (
                chosen.log_end_offset,
                -chosen.time_since_last_caught_up_ms,
            )
