"""Transactions across a clean broker restart, through confluent-kafka: what the broker
rebuilds from its files. One partition holds an aborted transaction, a committed one and
an open one; after the restart read_committed sees the same (the aborted records stay
hidden: ``.txnindex``), stops at the same last stable offset (the open transaction's first
offset: the producer state's snapshot), and the open transaction's producer, still the same
client, commits it (the coordinator reloaded it from ``__transaction_state``)."""

from __future__ import annotations

import uuid

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from txn.conftest import TxnTarget, create_topic, read_to_end, wait_for

pytestmark = pytest.mark.timeout(180)


def producer(target: TxnTarget, txn_id: str) -> ck.Producer:
    p = ck.Producer({"bootstrap.servers": target.bootstrap, "transactional.id": txn_id})
    p.init_transactions(15)
    return p


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
    wait_for("the partition's leader", lambda: partition_led(bootstrap, topic))
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


def partition_led(bootstrap: str, topic: str) -> bool:
    """Whether ``topic``'s partition 0 has a leader again."""
    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    try:
        meta = admin.list_topics(topic, timeout=5).topics[topic]
    except ck.KafkaException:
        return False
    return meta.error is None and bool(meta.partitions) and meta.partitions[0].leader >= 0
