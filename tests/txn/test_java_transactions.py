"""Transactions through Kafka's own Java client (4.3.1, from the jars): ``tests/txn/java/
TxnClient.java`` runs every case in one JVM against the broker of ``txn_target`` and prints
what it observed as JSON; the assertions are here. The cases are those of
test_confluent_transactions.py as the Java client meets them: commit and abort over two
partitions, an open transaction under read_committed (endOffsets, offsetsForTimes,
seekToEnd, position), sendOffsetsToTransaction with the consumer's group metadata, a
fenced zombie, an expired transaction.

The errors of a fenced or expired producer depend on the transaction protocol the client
uses, which the broker decides (the finalized ``transaction.version`` feature): checked
against Kafka 4.3.1 formatted with ``transaction.version=1`` and with its default 2.
- Zombie: its Produce with the old epoch fails with INVALID_PRODUCER_EPOCH, which the
  client raises as the abortable ``InvalidProducerEpochException`` (KIP-588); its abort then
  fails with ``ProducerFencedException`` (EndTxn: PRODUCER_FENCED). Both versions alike.
- Expired: the commit fails with ``ProducerFencedException`` under TV0/TV1, with
  ``InvalidTxnStateException`` under TV2 (the coordinator's epoch was bumped twice).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from typing import Any

import pytest

from support.kafka_jars import JVM_FLAGS
from txn.conftest import TxnTarget

pytestmark = [pytest.mark.interop, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def observed(java: str, txn_target: TxnTarget) -> dict[str, Any]:
    """TxnClient's JSON (``java`` is its class path)."""
    prefix = f"java-{uuid.uuid4().hex[:8]}"
    run = subprocess.run(
        ["java", *JVM_FLAGS, "-cp", java, "TxnClient", txn_target.bootstrap, prefix],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    if run.returncode != 0:
        raise AssertionError(f"{run.stderr[-4000:]}\n{txn_target.log_tail()}")
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def triples(read: dict[str, Any]) -> list[tuple[int, int, str]]:
    return sorted((r["partition"], r["offset"], r["value"]) for r in read["records"])


def test_commit_and_abort_over_two_partitions(observed: dict[str, Any]) -> None:
    basic = observed["basic"]
    assert triples(basic["read_committed"]) == [(0, 2, "committed-0"), (1, 2, "committed-1")]
    assert triples(basic["read_uncommitted"]) == [
        (0, 0, "aborted-0"),
        (0, 2, "committed-0"),
        (1, 0, "aborted-1"),
        (1, 2, "committed-1"),
    ]
    assert basic["read_committed"]["end_offsets"] == [4, 4]
    assert basic["read_uncommitted"]["end_offsets"] == [4, 4]


def test_open_transaction_under_read_committed(observed: dict[str, Any]) -> None:
    """Kafka's testReadCommittedConsumerShouldNotSeeUndecidedData, on one partition: two
    plain records, then three in an open transaction."""
    opened = observed["open"]
    assert opened["end_offset_read_committed"] == 2  # the LSO
    assert opened["end_offset_read_uncommitted"] == 5  # the HW
    assert opened["offset_for_open_time"] is None
    assert opened["position_after_seek_to_end"] == 2
    assert [r["value"] for r in opened["seen_while_open"]] == ["plain-0", "plain-1"]
    assert opened["position_while_open"] == 2
    assert opened["lag_while_open"] == 0  # LSO 2 - position 2 (not HW 5 - 2)
    after = opened["after_commit"]
    assert [r["offset"] for r in after["records"]] == [0, 1, 2, 3, 4]
    assert after["end_offsets"] == [6]


def test_send_offsets_to_transaction(observed: dict[str, Any]) -> None:
    offsets = observed["offsets"]
    aborted, committed = offsets["attempts"]
    assert aborted["group_offsets_before_end"] == {}
    assert aborted["group_offsets_after_end"] == {}  # the abort drops the pending offsets
    assert committed["group_offsets_before_end"] == {}  # pending until the commit marker
    assert committed["group_offsets_after_end"] == {"0": 10}
    out = offsets["output_read_committed"]
    assert [r["value"] for r in out["records"]] == [f"out-{i}" for i in range(10)]
    # the aborted attempt's 10 records and ABORT marker come first: 11..20, COMMIT at 21
    assert [r["offset"] for r in out["records"]] == list(range(11, 21))
    assert out["end_offsets"] == [22]
    assert len(offsets["output_read_uncommitted"]["records"]) == 20


def test_zombie_is_fenced(observed: dict[str, Any]) -> None:
    fencing = observed["fencing"]
    assert fencing["zombie_error"][0] in (
        "InvalidProducerEpochException",
        "ProducerFencedException",
    )
    assert "ProducerFencedException" in fencing["zombie_abort_error"]
    assert triples(fencing["read_committed"]) == [(0, 2, "successor")]
    # zombie-0, the ABORT marker of the fenced transaction, successor, COMMIT
    assert triples(fencing["read_uncommitted"]) == [(0, 0, "zombie-0"), (0, 2, "successor")]
    assert fencing["read_committed"]["end_offsets"] == [4]


def test_expired_transaction_is_aborted_and_fenced(observed: dict[str, Any]) -> None:
    timeout = observed["timeout"]
    expected = (
        "InvalidTxnStateException"
        if observed["transaction_version"] >= 2
        else ("ProducerFencedException")
    )
    assert timeout["commit_error"][:1] == [expected], observed["transaction_version"]
    assert triples(timeout["read_committed"]) == [(0, 2, "after")]
    assert timeout["read_committed"]["end_offsets"] == [4]
