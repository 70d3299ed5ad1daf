"""One KRaft voter as a process, for the multi-process tests (``test_driver_quorum.py``):
a :class:`~kafkacore.raft.RaftClient` over a :class:`~kafkacore.raft.driver.RaftDriver`
with its metadata log in ``--dir``. While it leads it appends a record every
``--append-every-ms``: a string naming it, or with ``--metadata`` real metadata records
a Kafka controller can replay (the bootstrap feature levels into an empty log, then
NoOpRecords); every 50 ms it writes ``<dir>/status.json`` (state, epoch, leader, high
watermark, log end). SIGTERM shuts it down gracefully.

    python -m raft.quorum_node --id 1 --dir D --port P --voters 1@127.0.0.1:P,2@...
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import uuid
from pathlib import Path

from kafkacore.raft import (
    Endpoints,
    FileQuorumStateStore,
    Node,
    QuorumConfig,
    RaftClient,
    VoterSet,
    parse_voters,
)
from kafkacore.raft.client import NotLeaderError
from kafkacore.raft.driver import RaftDriver
from kafkacore.raft.metadata_log import MetadataLog
from kafkacore.raft.records import iter_batches
from raft.metadata_records import feature_level, no_op

LISTENER = "CONTROLLER"


# kafka-storage format --release-version 4.3's feature levels (kafka-features
# version-mapping): what an active controller writes into an empty log.
BOOTSTRAP = [
    feature_level("metadata.version", 30),
    feature_level("eligible.leader.replicas.version", 1),
    feature_level("group.version", 1),
    feature_level("share.version", 1),
    feature_level("streams.version", 1),
    feature_level("transaction.version", 2),
]


def _has_data(log: MetadataLog) -> bool:
    data = log.read(log.start_offset, 1 << 20) if log.end_offset > log.start_offset else b""
    return log.start_offset > 0 or any(not b.is_control for b in iter_batches(data, values=False))


def _directory_id(directory: Path) -> uuid.UUID:
    path = directory / "directory.id"
    if path.exists():
        return uuid.UUID(path.read_text())
    value = uuid.uuid4()
    path.write_text(str(value))
    return value


async def main(args: argparse.Namespace) -> None:
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    addresses = parse_voters(args.voters)
    config = QuorumConfig(
        election_timeout_ms=args.election_timeout_ms,
        fetch_timeout_ms=args.fetch_timeout_ms,
        request_timeout_ms=args.fetch_timeout_ms,
        append_linger_ms=5,
    )
    log = MetadataLog(directory)
    host, port = addresses[args.id]
    client = RaftClient(
        node_id=args.id,
        directory_id=_directory_id(directory),
        cluster_id=args.cluster_id,
        log=log,
        store=FileQuorumStateStore.in_dir(directory),
        config=config,
        static_voters=VoterSet.from_addresses(LISTENER, addresses),
        bootstrap_servers=[Node(i, h, p) for i, (h, p) in sorted(addresses.items())],
        listener=LISTENER,
        local_listeners=Endpoints.single(LISTENER, host, port),
        rng=random.Random(),
    )
    driver = RaftDriver(client, host=host, port=port, client_id=f"raft-{args.id}")
    await driver.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    sequence = 0
    status = directory / "status.json"
    try:
        while not stop.is_set():
            if driver.failure is not None:
                raise driver.failure
            if client.is_leader():
                sequence += 1
                if not args.metadata:
                    values = [f"{args.id}-{client.epoch}-{sequence}".encode()]
                elif client.high_watermark is None:
                    values = []  # the epoch's first commit comes first
                else:
                    values = [no_op()] if _has_data(log) else BOOTSTRAP
                with contextlib.suppress(NotLeaderError):
                    if values:
                        driver.append(values)
            state = {
                "pid": os.getpid(),
                "id": args.id,
                "state": client.state_name,
                "epoch": client.epoch,
                "leader": client.leader_and_epoch.leader_id,
                "hw": client.high_watermark,
                "leo": log.end_offset,
            }
            temp = status.with_suffix(".tmp")
            temp.write_text(json.dumps(state))
            os.replace(temp, status)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), args.append_every_ms / 1000)
    finally:
        await driver.shutdown(2000)
        log.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--id", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--voters", required=True)
    parser.add_argument("--append-every-ms", type=int, default=50)
    parser.add_argument("--cluster-id", default="kafkacore-raft-test")
    parser.add_argument("--metadata", action="store_true")
    parser.add_argument("--election-timeout-ms", type=int, default=500)
    parser.add_argument("--fetch-timeout-ms", type=int, default=1000)
    asyncio.run(main(parser.parse_args()))
