"""The transaction crash sweep's rounds (``test_txn_crash_sweep.py``; also runnable by
hand against either target: ``python -m txn_chaos.sweep --target kafka|kafkacore``).

A round (one seed) on a running single-node target whose data outlives the rounds:

1. an *orphan* producer (its own ``transactional.id``, ``transaction.timeout.ms`` 3 s)
   begins a transaction, writes to two partitions, flushes and is abandoned open;
2. a transactional worker runs transactions of 2-6 records over up to three partitions
   (a quarter aborted, the records flushed before the EndTxn); at the first EndTxn of the
   round's kind (commit or abort) after its ``skip``-th transaction, the broker is frozen
   (SIGSTOP) before the client sends the EndTxn, let go 100 ms later (SIGCONT: it reads
   the EndTxn) and SIGKILLed the round's delay (0-20 ms) after that: while it handles the
   EndTxn, writes PrepareCommit/PrepareAbort, answers or writes the markers; it is started
   again at once; the worker retries its commit or abort (librdkafka resumes after a
   timeout) and finishes its transactions; a copier (consume-transform-produce with
   ``send_offsets_to_transaction``; one consumer group and ``transactional.id`` resumed in
   every round) copies the topic meanwhile; in the rounds of kind ``copy`` the kill hits
   the copier's EndTxn (commit) instead;
3. a new producer on the worker's ``transactional.id`` (``init_transactions`` fences the
   old one) commits one more transaction: the producer can continue;
4. checks: LSO = HW on every partition once the orphan timed out (the coordinator must
   abort it after the restart); a fresh read_committed consumer reads every partition
   from 0; :func:`support.txn_checker.check` over the history (every transaction all or
   nothing, no aborted/uncommitted read, no committed value lost, ...), and per partition
   :func:`support.txn_checker.check_partition_log`: the raw log (read_uncommitted) against
   the ``.txnindex`` files (each aborted transaction's entry: its producer, first offset,
   ABORT marker offset and LSO) and against the read_committed read; once the copier has
   caught up, exactly one copy of every committed value is visible in the copy topic.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Producer

from support.txn_checker import History, Result, check, check_copy, check_partition_log
from txn_chaos.campaign import COPY_TOPIC, KafkacoreNode, KafkaNode, Target, create_topic
from txn_chaos.workload import (
    PRODUCER_BASE,
    CopyWorker,
    TxnWorker,
    drain_copier,
    final_read,
    raw_log,
    read_txnindex,
    wait_stable,
)

TOPIC = "txn-chaos"  # the campaign's topics, with three partitions here
PARTITIONS = 3
ORPHAN_TIMEOUT_MS = 3000
FROZEN_S = 0.1  # how long the broker stays stopped while the client sends its EndTxn
ORPHANS: list[Producer] = []


@dataclass(frozen=True)
class Round:
    seed: int
    kind: str  # "commit", "abort" or "copy" (the copier's commit): the EndTxn the kill hits
    skip: int  # transactions before the one whose EndTxn is hit
    delay_s: float

    @classmethod
    def draw(cls, master: int, seed: int) -> Round:
        rng = random.Random(f"{master}/{seed}")
        return cls(
            seed,
            ("commit", "abort", "copy")[seed % 3],
            rng.randint(1, 4),
            round(rng.uniform(0.0, 0.02), 3),
        )


def _orphan(target: Target, history: History, seed: int) -> None:
    name = f"sweep-orphan-{seed}"
    producer = Producer(
        {
            "bootstrap.servers": target.bootstrap,
            "transactional.id": name,
            **PRODUCER_BASE,
            "transaction.timeout.ms": ORPHAN_TIMEOUT_MS,
            "message.timeout.ms": ORPHAN_TIMEOUT_MS - 500,
        }
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    txn = f"{name}.0"
    for i, p in enumerate((0, PARTITIONS - 1)):
        value = f"{txn}#{i}"
        history.write("send", txn=txn, value=value, partition=p, producer=name)
        producer.produce(TOPIC, value=value.encode(), partition=p)
    assert producer.flush(30) == 0, "the orphan's records were not written"
    # abandoned open: no outcome; the coordinator must time it out
    ORPHANS.append(producer)  # kept (never destroyed) until the process ends


def run_round(
    target: Target, history: History, r: Round, log: list[str], copy_history: History
) -> Result:
    """One round (see the module docstring); the checker's result. ``copy_history``
    records the copier (the same one, resuming, in every round)."""
    t0 = time.monotonic()

    def mark(what: str) -> None:
        log.append(f"{time.monotonic() - t0:.1f}s {what}")

    _orphan(target, history, r.seed)
    mark("orphan open")
    name = f"sweep-{r.seed}"
    fired = threading.Event()
    killed = threading.Event()
    seen = [0]

    def on_end(txn: str, commit: bool) -> None:
        seen[0] += 1
        if (
            fired.is_set()
            or r.kind == "copy"
            or seen[0] <= r.skip
            or commit != (r.kind == "commit")
        ):
            return
        freeze_then_kill(txn)

    def on_copier_end(txn: str, commit: bool) -> None:
        if not fired.is_set() and r.kind == "copy" and commit:
            freeze_then_kill(txn)

    def freeze_then_kill(txn: str) -> None:
        fired.set()
        # frozen before the EndTxn leaves the client: the broker takes it from its socket
        # when it is let go, and dies delay_s into handling it
        target.signal(1, signal.SIGSTOP)

        def kill() -> None:
            time.sleep(FROZEN_S)
            target.signal(1, signal.SIGCONT)
            time.sleep(r.delay_s)
            target.kill(1)
            history.write("fault", kind="kill", txn=txn, delay_s=r.delay_s)
            killed.set()

        threading.Thread(target=kill, daemon=True).start()

    worker = TxnWorker(
        target.bootstrap,
        TOPIC,
        PARTITIONS,
        name,
        history,
        seed=r.seed,
        max_txns=r.skip + 8,
        on_end=on_end,
        patience_s=30.0,
    )
    copier = CopyWorker(
        target.bootstrap,
        TOPIC,
        COPY_TOPIC,
        PARTITIONS,
        "sweep-copier",
        copy_history,
        seed=r.seed,
        on_end=on_copier_end,
    )
    copier.txn_prefix = f"sweep-copier-{r.seed}"
    copier.start()
    worker.start()
    if not killed.wait(60):
        raise AssertionError(f"round {r}: the kill point was never reached: {worker.errors[-5:]}")
    mark("killed")
    target.restart(1)
    history.write("heal", node=1)
    mark("restarted")
    worker.join(120)
    assert not worker.is_alive(), f"round {r}: the worker is stuck: {worker.errors[-5:]}"
    mark(f"worker done, errors {worker.errors[-3:]}")

    # the producer can continue: a new one on the same id
    again = TxnWorker(
        target.bootstrap,
        TOPIC,
        PARTITIONS,
        name,
        history,
        seed=r.seed + 1000,
        abort_rate=0.0,
        max_txns=1,
        patience_s=30.0,
        txn_prefix=f"{name}-again",
    )
    again.run()
    last = [e for e in history.events if e["type"] == "outcome" and e["txn"] == f"{name}-again.0"]
    assert last and last[-1]["outcome"] == "committed", (
        f"round {r}: the new producer on {name} could not commit: {again.errors}"
    )

    mark("new producer committed")
    ends = wait_stable(target.bootstrap, TOPIC, PARTITIONS, timeout_s=30 + ORPHAN_TIMEOUT_MS / 1000)
    mark("LSO = HW")
    reader = f"final-{r.seed}"
    final = final_read(target.bootstrap, TOPIC, PARTITIONS, history, ends, name=reader)
    events = [e for e in history.events if not e.get("final") or e["consumer"] == reader]
    mark("final read")

    # the copier copies everything committed once, whatever the kill did to it
    def replacement(attempt: int) -> CopyWorker:
        again = CopyWorker(
            target.bootstrap,
            TOPIC,
            COPY_TOPIC,
            PARTITIONS,
            "sweep-copier",
            copy_history,
            seed=r.seed,
        )
        again.txn_prefix = f"sweep-copier-{r.seed}-r{attempt}"
        return again

    copier = drain_copier(
        copier, ends, replacement, wait_s=float(os.environ.get("TXNCHAOS_COPIER_WAIT", "15"))
    )
    copy_ends = wait_stable(target.bootstrap, COPY_TOPIC, PARTITIONS, timeout_s=30)
    final_read(target.bootstrap, COPY_TOPIC, PARTITIONS, copy_history, copy_ends, name=reader)
    copy_events = [e for e in copy_history.events if not e.get("final") or e["consumer"] == reader]
    mark(f"copier caught up, errors {copier.errors[-3:]}")
    result = check(events)
    result.merge(check(copy_events), "copy:")
    result.merge(check_copy(copy_events, [v for p in final for _, v in final[p]]))
    outcomes: dict[str, str] = {}
    for e in events:
        if e["type"] == "send":
            outcomes.setdefault(e["txn"], "open")
        elif e["type"] == "outcome":
            outcomes[e["txn"]] = e["outcome"]
    for p in range(PARTITIONS):
        batches = raw_log(target.bootstrap, TOPIC, p)
        pdir = target.partition_dir(TOPIC, p)
        index = read_txnindex(pdir) if pdir is not None else None
        part, open_at_end = check_partition_log(p, batches, index, outcomes, final[p])
        if open_at_end:
            part.flag(
                "open_at_end", {"partition": p, "first_offsets": open_at_end, "lso=hw": ends[p]}
            )
        result.merge(part)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="txn_chaos.sweep", description=__doc__)
    parser.add_argument("--target", choices=("kafkacore", "kafka"), default="kafkacore")
    parser.add_argument("--master-seed", type=int, default=20261125)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path("chaos-runs/txn-sweep"))
    args = parser.parse_args(argv)
    out = args.out.resolve()
    import shutil

    shutil.rmtree(out / args.target, ignore_errors=True)
    (out / args.target).mkdir(parents=True)
    target: Target = (
        KafkacoreNode(out / args.target)
        if args.target == "kafkacore"
        else KafkaNode(out / args.target)
    )
    target.start()
    ok = True
    try:
        create_topic(target.bootstrap, 1, TOPIC, COPY_TOPIC, partitions=PARTITIONS)
        history = History(out / args.target / "history.jsonl")
        copy_history = History(out / args.target / "copy-history.jsonl")
        for seed in range(args.rounds):
            r = Round.draw(args.master_seed, seed)
            started = time.monotonic()
            notes: list[str] = []
            result = run_round(target, history, r, notes, copy_history)
            print(f"{r} {result.summary()} {time.monotonic() - started:.1f}s", flush=True)
            if not result.ok:
                ok = False
                print(result.details(), flush=True)
    finally:
        target.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
