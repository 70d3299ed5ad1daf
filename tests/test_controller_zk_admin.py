"""The controller following ``/admin/reassign_partitions`` and
``/admin/preferred_replica_election`` (cluster.md §2.2 step 1, §2.7), against the
in-memory ZooKeeper of ``test_controller_cluster.py`` extended with the two nodes, and
the pure parts of ``kafkacore reassign-partitions`` / ``leader-election`` (Kafka's
formats, throttle lists, Java ``HashSet`` order). The same paths on a real cluster, with
Kafka's tools: ``tests/cluster/test_reassign_tools.py``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kafkacore._java import java_hash_set_order, java_string_hash
from kafkacore.admin.ordering import partition_hash
from kafkacore.admin.reassign import format_reassignment_json
from kafkacore.admin.throttles import PartitionMove, throttle_configs
from test_controller_cluster import (
    Cluster,
    FakeZk,
    _leader_is,
    alter_isr_request,
    new_topic,
    run,
    state,
    wait_for,
)


class AdminFakeZk(FakeZk):
    """FakeZk with the two admin nodes (``None`` = no node) and their one-shot watches."""

    def __init__(self) -> None:
        super().__init__()
        self.reassign: dict[tuple[str, int], tuple[int, ...]] | None = None
        self.election: list[tuple[str, int]] | None = None

    async def get_partition_reassignment(
        self, watch: Callable[[], None] | None = None
    ) -> dict[tuple[str, int], tuple[int, ...]] | None:
        self._watch("reassign_partitions", watch)
        return None if self.reassign is None else dict(self.reassign)

    async def set_partition_reassignment(
        self,
        partitions: Mapping[tuple[str, int], tuple[int, ...]],
        *,
        controller_epoch_zk_version: int,
    ) -> None:
        self._fence(controller_epoch_zk_version)
        self.reassign = dict(partitions) or None
        self._fire("reassign_partitions")

    async def delete_partition_reassignment(self, *, controller_epoch_zk_version: int) -> None:
        self._fence(controller_epoch_zk_version)
        self.reassign = None
        self._fire("reassign_partitions")

    async def get_preferred_replica_election(
        self, watch: Callable[[], None] | None = None
    ) -> list[tuple[str, int]] | None:
        self._watch("preferred_replica_election", watch)
        return None if self.election is None else list(self.election)

    async def delete_preferred_replica_election(self, *, controller_epoch_zk_version: int) -> None:
        self._fence(controller_epoch_zk_version)
        self.election = None
        self._fire("preferred_replica_election")

    # what an operator (or the old --zookeeper tools) writes
    def write_reassignment(self, partitions: dict[tuple[str, int], tuple[int, ...]]) -> None:
        self.reassign = dict(partitions)
        self._fire("reassign_partitions")

    def write_election(self, partitions: list[tuple[str, int]]) -> None:
        self.election = list(partitions)
        self._fire("preferred_replica_election")


async def admin_zk() -> AdminFakeZk:
    return AdminFakeZk()


async def _isr_grows(cl: Cluster, c: Any, zk: AdminFakeZk, topic_id: Any, isr: list[int]) -> int:
    """The leader (broker 1) reports ``isr`` for t-0; the response's error code."""
    _, epoch, _, _, pe = await state(zk, "t", 0)
    resp = await c.alter_partition(
        alter_isr_request(cl, topic_id, isr, leader_epoch=epoch, partition_epoch=pe), 3
    )
    return int(resp.topics[0].partitions[0].error_code)


def test_zk_reassignment_runs_and_its_entries_go() -> None:
    async def body(zk: AdminFakeZk) -> None:
        cl = Cluster(zk)
        await cl.start()
        c = cl.controllers[1]
        try:
            a = new_topic("t", {0: (1,), 1: (2, 3)})
            await zk.create_topic_assignment(a)
            await wait_for(lambda: _leader_is(zk, "t", 1, 2))
            zk.write_reassignment(
                {
                    ("t", 0): (1, 2),  # moves
                    ("t", 1): (2, 3),  # already there: dropped at once
                    ("u", 0): (1,),  # unknown topic: dropped
                    ("t", 9): (1,),  # unknown partition: dropped
                }
            )
            await c.wait_idle()
            await c.wait_idle()
            assert zk.reassign == {("t", 0): (1, 2)}
            assert await c.list_partition_reassignments() == {("t", 0): ([1, 2], [2], [])}
            # an ISR without the new replica does not complete it; with it, it does
            assert await _isr_grows(cl, c, zk, a.topic_id, [1, 2]) == 0
            await c.wait_idle()
            assert zk.reassign is None  # the last entry done: the node is deleted
            znode = await zk.get_topic_assignment("t")
            assert (znode.partitions[0], znode.adding, znode.removing) == ((1, 2), {}, {})
            # an API reassignment takes a partition out of the node
            zk.write_reassignment({("t", 0): (2, 1, 3), ("t", 1): (3, 2)})
            await c.wait_idle()
            await c.wait_idle()
            assert set(zk.reassign or {}) == {("t", 0)}  # t-1 (a new order) is done
            assert await c.alter_partition_reassignments({("t", 0): [1, 2]}) == {
                ("t", 0): (0, None)
            }
            assert zk.reassign is None
            # a broker that is no longer a replica cannot join the ISR
            assert await _isr_grows(cl, c, zk, a.topic_id, [1, 2, 3]) != 0
        finally:
            await cl.stop()

    run(admin_zk, body)


def test_zk_reassignment_pending_at_failover_is_started() -> None:
    async def body(zk: AdminFakeZk) -> None:
        zk.reassign = {("t", 0): (2,)}  # written while there was no controller
        await zk.create_topic_assignment(new_topic("t", {0: (1,)}))
        cl = Cluster(zk)
        await cl.start()
        c = cl.controllers[1]
        try:
            assert await c.list_partition_reassignments() == {("t", 0): ([2, 1], [2], [1])}
            assert zk.reassign == {("t", 0): (2,)}
        finally:
            await cl.stop()

    run(admin_zk, body)


def test_zk_preferred_election_runs_then_the_node_goes() -> None:
    async def body(zk: AdminFakeZk) -> None:
        # pending before the controller starts: run at failover
        zk.election = [("t", 0)]
        await zk.create_topic_assignment(new_topic("t", {0: (1, 2), 1: (2, 3)}))
        cl = Cluster(zk)
        await cl.start()
        c = cl.controllers[1]
        try:
            assert zk.election is None  # t-0 needed no election; the node went anyway
            # a new order of t-1's replicas: leader 2 stays, 3 is now preferred
            assert await c.alter_partition_reassignments({("t", 1): [3, 2]}) == {
                ("t", 1): (0, None)
            }
            await c.wait_idle()
            assert (await state(zk, "t", 1))[0] == 2
            zk.write_election([("t", 1), ("t", 0), ("nosuch", 0)])
            await wait_for(lambda: _leader_is(zk, "t", 1, 3))
            await c.wait_idle()
            assert zk.election is None
        finally:
            await cl.stop()

    run(admin_zk, body)


def test_reassignment_json_and_throttles_as_kafka_writes_them() -> None:
    assert format_reassignment_json({("b", 1): [3, 1], ("a", 0): [1]}) == (
        '{"version":1,"partitions":['
        '{"topic":"a","partition":0,"replicas":[1],"log_dirs":["any"]},'
        '{"topic":"b","partition":1,"replicas":[3,1],"log_dirs":["any","any"]}]}'
    )
    # sources = current replicas, destinations = added ones; "p:b" sorted as strings
    moves = {
        ("t", 0): PartitionMove(frozenset({1, 2}), frozenset({3})),
        ("t", 10): PartitionMove(frozenset({2}), frozenset({4, 2})),
        ("u", 0): PartitionMove(frozenset({5}), frozenset()),
    }
    assert throttle_configs(moves) == {"t": ("0:1,0:2,10:2", "0:3,10:4"), "u": ("0:5", "")}


def test_java_hash_set_order() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322  # "hello".hashCode()
    assert java_string_hash("polygenelubricants") == -2147483648
    # Integers hash to themselves: small ids come out sorted, larger ones by bucket
    assert java_hash_set_order([3, 1, 2], lambda i: i) == [1, 2, 3]
    assert java_hash_set_order([17, 1], lambda i: i) == [17, 1]  # same bucket: insertion order
    # TopicPartition(t, p).hashCode() = 31 * (31 + p) + t.hashCode()
    assert partition_hash(("a", 0)) == 31 * 31 + 97
