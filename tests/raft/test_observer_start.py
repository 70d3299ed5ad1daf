"""An observer started before any voter listens (a KRaft broker started before its
controllers): its first Fetches fail to connect, and it must still learn the leader once
the quorum is up - Kafka's observer keeps asking a bootstrap server (its
``pollUnattachedAsObserver``), and each answer must reach the client."""

from __future__ import annotations

import asyncio
import random
import uuid
from pathlib import Path

from kafkacore.raft import Endpoints, FileQuorumStateStore, Node, QuorumConfig, RaftClient, VoterSet
from kafkacore.raft.driver import RaftDriver
from kafkacore.raft.metadata_log import MetadataLog
from support.ports import free_port

LISTENER = "CONTROLLER"
CLUSTER_ID = "AAAAAAAAAAAAAAAAAAAAAA"


def _client(directory: Path, node_id: int, port: int, *, voter: bool) -> RaftClient:
    directory.mkdir(parents=True)
    addresses = {1: ("127.0.0.1", port)}
    return RaftClient(
        node_id=node_id,
        directory_id=uuid.uuid4(),
        cluster_id=CLUSTER_ID,
        log=MetadataLog(directory),
        store=FileQuorumStateStore.in_dir(directory),
        config=QuorumConfig(election_timeout_ms=300, fetch_timeout_ms=600, request_timeout_ms=600),
        static_voters=VoterSet.from_addresses(LISTENER, addresses),
        bootstrap_servers=[Node(1, "127.0.0.1", port)],
        listener=LISTENER,
        local_listeners=Endpoints.single(LISTENER, "127.0.0.1", port) if voter else Endpoints(),
        rng=random.Random(7),
    )


def test_an_observer_started_before_the_quorum_learns_the_leader(tmp_path: Path) -> None:
    async def scenario() -> None:
        port = free_port()
        observer = RaftDriver(
            _client(tmp_path / "observer", 2, port, voter=False),
            host="",
            port=0,
            listen=False,
            client_id="observer",
        )
        voter = RaftDriver(
            _client(tmp_path / "voter", 1, port, voter=True), host="127.0.0.1", port=port
        )
        await observer.start()
        try:
            await asyncio.sleep(1.5)  # its Fetches are refused meanwhile
            assert observer.client.leader_and_epoch.leader_id is None
            await voter.start()
            deadline = asyncio.get_running_loop().time() + 15
            while observer.client.leader_and_epoch.leader_id != 1:
                assert observer.failure is None
                assert asyncio.get_running_loop().time() < deadline, "no leader learned"
                await asyncio.sleep(0.05)
            assert observer.client.state_name == "Follower"
        finally:
            await observer.stop()
            await voter.stop()
            observer.client.log.close()
            voter.client.log.close()

    asyncio.run(scenario())
