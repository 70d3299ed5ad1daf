"""Transactions through confluent-kafka (librdkafka: InitProducerId v4, AddPartitionsToTxn
v0, AddOffsetsToTxn v0, EndTxn v1, TxnOffsetCommit v3, Produce ≤ 10): the cases of
Kafka's ``TransactionsTest`` a librdkafka user meets, against the broker of
``txn_target`` (kafkacore; Apache Kafka with ``KAFKACORE_TXN_TESTS_AGAINST=kafka``).

- Commit and abort over two partitions (``testBasicTransactions``): read_committed sees
  the committed records only, read_uncommitted all; the markers take offsets.
- Interleaved producers on one partition, one aborting: read_committed skips exactly the
  aborted producer's records (the Fetch ``aborted_transactions``), and its end offset is
  the last stable offset until the other commits.
- An open transaction: read_committed's end offset (ListOffsets), ``offsets_for_times``
  and position stop at the LSO (``testReadCommittedConsumerShouldNotSeeUndecidedData``).
- Consume-transform-produce with ``send_offsets_to_transaction``: the group's offsets
  move only with a commit, an abort leaves them, the output is the input exactly once.
- A zombie fenced by a second producer with the same transactional.id (fatal ``_FENCED``).
- A transaction that outlives ``transaction.timeout.ms``: aborted by the broker (an ABORT
  marker), its producer fenced (``testFencingOnTransactionExpiration``).
- A clean broker restart with an aborted, a committed and an open transaction on one
  partition: read_committed sees the same after it (the aborted records stay hidden:
  ``.txnindex``) and stops at the same LSO (the producer state's snapshot), and the open
  transaction's producer, the same client, commits it (the coordinator reloaded it from
  ``__transaction_state``). Last in the module: it restarts the module's broker.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from txn.conftest import (
    Record,
    TxnTarget,
    consumer,
    create_topic,
    end_offsets,
    read_to_end,
    wait_for,
)

pytestmark = pytest.mark.timeout(120)


def producer(target: TxnTarget, txn_id: str, **conf: object) -> ck.Producer:
    """A transactional producer with ``init_transactions`` done."""
    p = ck.Producer({"bootstrap.servers": target.bootstrap, "transactional.id": txn_id, **conf})
    p.init_transactions(15)
    return p


def values(records: list[Record]) -> list[tuple[int, int, bytes]]:
    """(partition, offset, value) in partition order: a consumer interleaves partitions
    as it likes."""
    return sorted((r.partition, r.offset, r.value) for r in records)


def fatal_error(action: Callable[[], object]) -> ck.KafkaError:
    """The KafkaError ``action()`` raises."""
    with pytest.raises(ck.KafkaException) as info:
        action()
    err: ck.KafkaError = info.value.args[0]
    return err


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_commit_and_abort_over_two_partitions(txn_target: TxnTarget) -> None:
    topic = create_topic(txn_target.bootstrap, unique("basic"), partitions=2)
    p = producer(txn_target, unique("tx-basic"))
    p.begin_transaction()
    for part in (0, 1):
        p.produce(topic, b"aborted-%d" % part, partition=part)
    p.flush(30)  # sent, so the abort has records to abort (it purges unsent ones)
    p.abort_transaction(30)
    p.begin_transaction()
    for part in (0, 1):
        p.produce(topic, b"committed-%d" % part, partition=part)
    p.commit_transaction(30)

    committed, committed_ends = read_to_end(txn_target.bootstrap, topic, [0, 1], "read_committed")
    everything, hw = read_to_end(txn_target.bootstrap, topic, [0, 1], "read_uncommitted")
    assert values(committed) == [(0, 2, b"committed-0"), (1, 2, b"committed-1")]
    assert values(everything) == [
        (0, 0, b"aborted-0"),
        (0, 2, b"committed-0"),
        (1, 0, b"aborted-1"),
        (1, 2, b"committed-1"),
    ]
    # record, ABORT marker, record, COMMIT marker: each partition ends at 4
    assert hw == committed_ends == [4, 4], txn_target.log_tail()


def test_interleaved_producers_one_aborting(txn_target: TxnTarget) -> None:
    topic = create_topic(txn_target.bootstrap, unique("interleaved"))
    aborting = producer(txn_target, unique("tx-aborting"))
    committing = producer(txn_target, unique("tx-committing"))
    aborting.begin_transaction()
    committing.begin_transaction()
    for p, value in ((aborting, b"a0"), (committing, b"c0"), (aborting, b"a1")):
        p.produce(topic, value, partition=0)
        p.flush(30)  # offsets 0, 1, 2 in this order
    aborting.abort_transaction(30)  # ABORT marker at 3
    reader = consumer(txn_target.bootstrap, "read_committed")
    try:
        # the committing producer's transaction (from offset 1) is still open: LSO 1
        wait_for("LSO 1", lambda: end_offsets(reader, topic, [0]) == [1])
        committing.produce(topic, b"c1", partition=0)
        committing.commit_transaction(30)  # c1 at 4, COMMIT marker at 5
        wait_for("LSO 6", lambda: end_offsets(reader, topic, [0]) == [6])
    finally:
        reader.close()
    committed, _ = read_to_end(txn_target.bootstrap, topic, [0], "read_committed")
    everything, hw = read_to_end(txn_target.bootstrap, topic, [0], "read_uncommitted")
    assert values(committed) == [(0, 1, b"c0"), (0, 4, b"c1")], txn_target.log_tail()
    assert [r.offset for r in everything] == [0, 1, 2, 4]
    assert hw == [6]


def test_read_committed_stops_at_the_last_stable_offset(txn_target: TxnTarget) -> None:
    topic = create_topic(txn_target.bootstrap, unique("lso"))
    tp = ck.TopicPartition(topic, 0)
    plain = ck.Producer({"bootstrap.servers": txn_target.bootstrap})
    old = int(time.time() * 1000) - 60_000
    for i in range(2):
        plain.produce(topic, b"plain-%d" % i, partition=0, timestamp=old + i)
    assert plain.flush(30) == 0
    p = producer(txn_target, unique("tx-lso"))
    p.begin_transaction()
    opened = int(time.time() * 1000)
    for i in range(3):
        p.produce(topic, b"open-%d" % i, partition=0, timestamp=opened + i)
    p.flush(30)  # offsets 2..4, transaction open

    committed_reader = consumer(txn_target.bootstrap, "read_committed")
    uncommitted_reader = consumer(txn_target.bootstrap, "read_uncommitted")
    try:
        assert end_offsets(committed_reader, topic, [0]) == [2]  # the LSO
        assert end_offsets(uncommitted_reader, topic, [0]) == [5]  # the HW
        # a timestamp whose first hit is at or past the LSO: not found under read_committed
        at_open = [ck.TopicPartition(topic, 0, opened)]
        assert committed_reader.offsets_for_times(at_open, 10)[0].offset == -1
        assert uncommitted_reader.offsets_for_times(at_open, 10)[0].offset == 2
        at_old = [ck.TopicPartition(topic, 0, old)]
        assert committed_reader.offsets_for_times(at_old, 10)[0].offset == 0

        committed_reader.assign([ck.TopicPartition(topic, 0, 0)])
        seen = []
        deadline = time.monotonic() + 1.5  # long enough to fetch past the LSO if it could
        while time.monotonic() < deadline:
            msg = committed_reader.poll(0.2)
            if msg is not None:
                assert msg.error() is None, msg.error()
                seen.append((msg.offset(), msg.value()))
        assert seen == [(0, b"plain-0"), (1, b"plain-1")], txn_target.log_tail()
        assert committed_reader.position([tp])[0].offset == 2

        p.commit_transaction(30)  # COMMIT marker at 5
        wait_for("LSO 6", lambda: end_offsets(committed_reader, topic, [0]) == [6])
        deadline = time.monotonic() + 20
        while len(seen) < 5 or committed_reader.position([tp])[0].offset < 6:
            assert time.monotonic() < deadline, (seen, txn_target.log_tail())
            msg = committed_reader.poll(0.2)
            if msg is not None:
                assert msg.error() is None, msg.error()
                seen.append((msg.offset(), msg.value()))
        assert seen[2:] == [(2, b"open-0"), (3, b"open-1"), (4, b"open-2")]
        assert committed_reader.offsets_for_times(at_open, 10)[0].offset == 2
    finally:
        committed_reader.close()
        uncommitted_reader.close()


def _group_offsets(admin: admin_mod.AdminClient, group: str, topic: str) -> dict[int, int]:
    """The group's committed offsets as OffsetFetch without RequireStable returns them."""
    request = ck.ConsumerGroupTopicPartitions(group)
    answer = admin.list_consumer_group_offsets([request])[group].result(30)
    return {
        tp.partition: tp.offset
        for tp in answer.topic_partitions
        if tp.topic == topic and tp.offset >= 0
    }


def test_consume_transform_produce_exactly_once(txn_target: TxnTarget) -> None:
    """The eos-transactions loop of confluent-kafka's examples, batches of 7 records, every
    third batch aborted and re-processed after a rewind to the committed offsets."""
    bootstrap = txn_target.bootstrap
    source = create_topic(bootstrap, unique("ctp-in"), partitions=2)
    sink = create_topic(bootstrap, unique("ctp-out"), partitions=2)
    group = unique("ctp-group")
    per_partition = 20
    plain = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for part in (0, 1):
        for i in range(per_partition):
            plain.produce(source, b"in-%d-%d" % (part, i), partition=part)
    assert plain.flush(30) == 0

    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    c = consumer(bootstrap, "read_committed", **{"group.id": group})
    c.subscribe([source])
    p = producer(txn_target, unique("tx-ctp"))
    batches = aborted = 0
    try:
        deadline = time.monotonic() + 60
        committed: dict[int, int] = {}
        while committed != {0: per_partition, 1: per_partition}:
            assert time.monotonic() < deadline, (committed, txn_target.log_tail())
            messages = c.consume(num_messages=7, timeout=0.5)
            if not messages:
                continue
            p.begin_transaction()
            for msg in messages:
                assert msg.error() is None, msg.error()
                p.produce(sink, msg.value().replace(b"in-", b"out-"), partition=msg.partition())
            positions = c.position(c.assignment())
            p.send_offsets_to_transaction(positions, c.consumer_group_metadata(), 30)
            p.flush(30)
            # pending transactional offsets are not the group's offsets yet
            assert _group_offsets(admin, group, source) == committed
            batches += 1
            if batches % 3 == 0:
                p.abort_transaction(30)
                aborted += len(messages)
                assert _group_offsets(admin, group, source) == committed
                for tp in c.committed(c.assignment(), timeout=30):  # rewind
                    c.seek(ck.TopicPartition(source, tp.partition, max(tp.offset, 0)))
            else:
                p.commit_transaction(30)
                # librdkafka leaves out the partitions not consumed yet (no position)
                want = {
                    **committed,
                    **{tp.partition: tp.offset for tp in positions if tp.offset >= 0},
                }
                wait_for(
                    "offsets committed with the transaction",
                    lambda want=want: _group_offsets(admin, group, source) == want,  # type: ignore[misc]
                )
                committed = want
    finally:
        c.close()
    assert aborted > 0

    output, _ = read_to_end(bootstrap, sink, [0, 1], "read_committed")
    for part in (0, 1):
        got = [r.value for r in output if r.partition == part]
        assert got == [b"out-%d-%d" % (part, i) for i in range(per_partition)], (
            txn_target.log_tail()
        )
    everything, _ = read_to_end(bootstrap, sink, [0, 1], "read_uncommitted")
    assert len(everything) == 2 * per_partition + aborted


def test_zombie_producer_is_fenced(txn_target: TxnTarget) -> None:
    topic = create_topic(txn_target.bootstrap, unique("fence"))
    txn_id = unique("tx-fence")
    zombie = producer(txn_target, txn_id)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie-0", partition=0)
    zombie.flush(30)
    successor = producer(txn_target, txn_id)  # bumps the epoch, aborts the open transaction
    successor.begin_transaction()
    successor.produce(topic, b"successor", partition=0)

    def zombie_goes_on() -> None:
        zombie.produce(topic, b"zombie-1", partition=0)
        zombie.flush(30)
        zombie.commit_transaction(30)

    err = fatal_error(zombie_goes_on)
    assert err.code() == ck.KafkaError._FENCED and err.fatal(), err
    successor.commit_transaction(30)

    committed, _ = read_to_end(txn_target.bootstrap, topic, [0], "read_committed")
    assert [r.value for r in committed] == [b"successor"], txn_target.log_tail()
    everything, _ = read_to_end(txn_target.bootstrap, topic, [0], "read_uncommitted")
    assert b"zombie-0" in [r.value for r in everything]
    assert b"zombie-1" not in [r.value for r in everything]


def test_transaction_timeout_aborts_and_fences(txn_target: TxnTarget) -> None:
    topic = create_topic(txn_target.bootstrap, unique("timeout"))
    txn_id = unique("tx-timeout")
    # librdkafka wants message.timeout.ms <= transaction.timeout.ms
    # (2 s, not less: a busy machine must still deliver the record within message.timeout.ms)
    p = producer(txn_target, txn_id, **{"transaction.timeout.ms": 2000, "message.timeout.ms": 2000})
    p.begin_transaction()
    p.produce(topic, b"expired", partition=0)
    p.flush(30)
    reader = consumer(txn_target.bootstrap, "read_uncommitted")
    try:
        # the broker aborts it (record 0, ABORT marker 1) without the producer doing anything
        wait_for("the broker's abort marker", lambda: end_offsets(reader, topic, [0]) == [2], 15)
    finally:
        reader.close()
    err = fatal_error(lambda: p.commit_transaction(30))
    assert err.code() == ck.KafkaError._FENCED and err.fatal(), err

    successor = producer(txn_target, txn_id)
    successor.begin_transaction()
    successor.produce(topic, b"after", partition=0)
    successor.commit_transaction(30)
    committed, ends = read_to_end(txn_target.bootstrap, topic, [0], "read_committed")
    assert values(committed) == [(0, 2, b"after")], txn_target.log_tail()
    assert ends == [4]


def test_transactions_survive_a_restart(txn_target: TxnTarget) -> None:
    bootstrap = txn_target.bootstrap
    tag = uuid.uuid4().hex[:8]
    topic = create_topic(bootstrap, f"restart-{tag}")
    aborting = producer(txn_target, f"restart-aborting-{tag}")
    aborting.begin_transaction()
    for value in (b"a0", b"a1"):
        aborting.produce(topic, value, partition=0)
    aborting.flush(30)
    aborting.abort_transaction(30)  # 0, 1, ABORT at 2
    committing = producer(txn_target, f"restart-committing-{tag}")
    committing.begin_transaction()
    committing.produce(topic, b"c0", partition=0)
    committing.commit_transaction(30)  # 3, COMMIT at 4
    opened = producer(txn_target, f"restart-open-{tag}")
    opened.begin_transaction()
    for value in (b"o0", b"o1"):
        opened.produce(topic, value, partition=0)
    opened.flush(30)  # 5, 6: open

    def views() -> tuple[list[tuple[int, bytes]], list[int], list[int]]:
        committed, lso = read_to_end(bootstrap, topic, [0], "read_committed", settled=False)
        everything, hw = read_to_end(bootstrap, topic, [0], "read_uncommitted", settled=False)
        assert [r.offset for r in everything] == [0, 1, 3, 5, 6]
        return [(r.offset, r.value) for r in committed], lso, hw

    before = views()
    assert before == ([(3, b"c0")], [5], [7]), txn_target.log_tail()
    txn_target.restart()
    wait_for("the partition served again", lambda: partition_serving(bootstrap, topic), 60)
    assert views() == before, txn_target.log_tail()

    opened.commit_transaction(30)  # COMMIT at 7
    committed, lso = read_to_end(bootstrap, topic, [0], "read_committed")
    assert [(r.offset, r.value) for r in committed] == [(3, b"c0"), (5, b"o0"), (6, b"o1")]
    assert lso == [8], txn_target.log_tail()
    # the aborting producer's id goes on after the restart too
    again = producer(txn_target, f"restart-aborting-{tag}")
    again.begin_transaction()
    again.produce(topic, b"a2", partition=0)
    again.commit_transaction(30)  # 8, COMMIT at 9
    committed, lso = read_to_end(bootstrap, topic, [0], "read_committed")
    assert [r.value for r in committed] == [b"c0", b"o0", b"o1", b"a2"]
    assert lso == [10]


def partition_serving(bootstrap: str, topic: str) -> bool:
    """Whether ``topic``'s partition 0 answers ListOffsets again (after a restart, Kafka
    names the leader in its metadata before the partition is loaded: NOT_LEADER meanwhile)."""
    c = consumer(bootstrap, "read_committed")
    try:
        end_offsets(c, topic, [0])
        return True
    except ck.KafkaException:
        return False
    finally:
        c.close()
