"""The transaction crash sweep (issue 13): one kafkacore broker SIGKILLed at seeded points
while it handles a transactional producer's EndTxn (commit or abort): frozen before the
request is sent, let go, and killed a seeded 0-20 ms into handling it (while
PrepareCommit/PrepareAbort is written, answered, while the markers are written), then
started again on the same data, round after round (chained: each round recovers what the
previous ones left). The rounds are :func:`txn_chaos.sweep.run_round`; after each:

* every transaction is all or nothing to a read_committed consumer, no aborted or open
  transaction's record is read, no committed one is missing (``support.txn_checker``);
* the LSO equals the high watermark on every partition once the open transactions are
  decided (an abandoned one is timed out by the coordinator after the restart);
* the ``.txnindex`` files hold exactly one entry per ABORT marker that closed a
  transaction, with that producer's first offset, the marker's offset and the LSO then,
  and the read_committed read is the raw log minus those ranges' records and the markers;
* a new producer on the same ``transactional.id`` initialises and commits;
* a consume-transform-produce copier (offsets committed in its transactions), killed in
  its own commit in one round, ends with exactly one visible copy of each committed value.

``python -m txn_chaos.sweep --target kafka`` runs the same rounds against Apache Kafka.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from support.txn_checker import History
from txn_chaos.campaign import COPY_TOPIC, KafkacoreNode, create_topic
from txn_chaos.sweep import PARTITIONS, TOPIC, Round, run_round
from txn_chaos.workload import read_txnindex

MASTER_SEED = 20261125
ROUNDS = 3  # kills in a commit, an abort, the copier's commit (make chaos: 20 rounds)

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkacoreNode]:
    target = KafkacoreNode(tmp_path_factory.mktemp("txn-sweep"))
    target.start()
    try:
        create_topic(target.bootstrap, 1, TOPIC, COPY_TOPIC, partitions=PARTITIONS)
        yield target
    finally:
        target.stop()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return History(tmp_path_factory.mktemp("txn-sweep-history") / "history.jsonl")


@pytest.fixture(scope="module")
def copy_history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return History(tmp_path_factory.mktemp("txn-sweep-history") / "copy-history.jsonl")


@pytest.mark.parametrize("seed", range(ROUNDS))
def test_kill_during_end_txn(
    node: KafkacoreNode, history: History, copy_history: History, seed: int
) -> None:
    r = Round.draw(MASTER_SEED, seed)
    started = time.monotonic()
    notes: list[str] = []
    result = run_round(node, history, r, notes, copy_history)
    print(f"{r} {result.summary()} {time.monotonic() - started:.1f}s {notes}")
    assert result.ok, (
        f"{r}: {result.summary()}\n{result.details()}\n{notes}\n{node.log_text()[-4000:]}"
    )
    assert any(e["type"] == "fault" for e in history.events)
    # the round's transactions really ran: some committed, some aborted
    assert result.outcomes["committed"] >= 2 and result.outcomes["aborted"] >= 1, result.summary()
    # the aborted transactions left .txnindex entries (which the round checked)
    entries = [read_txnindex(node.broker.data / f"{TOPIC}-{p}") for p in range(PARTITIONS)]
    assert sum(map(len, entries)) >= 1, entries
