"""A broker on the metadata quorum (Kafka's ``KafkaRaftManager`` and the raft listener of
``MetadataLoader``): ``__cluster_metadata-0`` in ``metadata.log.dir`` (default: the first
of ``log.dirs``), a :class:`~kafkacore.raft.RaftClient` as an **observer** (the broker's
node id, never a voter) fetching from the quorum's leader over the
:class:`~kafkacore.raft.driver.RaftDriver`, and the committed part of that log handed to
the :class:`~kafkacore.metadata.image.MetadataLoader`.

* **Whom to ask**: the static voters (``controller.quorum.voters``) or the bootstrap
  servers (``controller.quorum.bootstrap.servers``), on the first of
  ``controller.listener.names``.
* **What is committed**: everything below the high watermark the leader sends. Batches
  are read on the event loop (the Raft client owns the log there; a read copies) and
  replayed on the one metadata thread (Kafka's loader event queue), in order: the latest
  snapshot first when the log starts past what was loaded (a snapshot fetched from the
  leader, or the log's own after a restart), then the batches. Until the loader reaches
  the first high watermark it learns, it publishes nothing (Kafka's catching up).
* **Who controls**: the quorum's leader, on the controller listener
  (:meth:`BrokerRaftManager.controller`, Kafka's ``RaftControllerNodeProvider``).

Thread-safety: event loop; the loader runs on :attr:`BrokerRaftManager.metadata_executor`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from kafkacore.config import BrokerConfig
from kafkacore.errors import CorruptRecordError
from kafkacore.log.checkpoints import MetaProperties
from kafkacore.metadata.image import MetadataLoader, MetadataProvenance
from kafkacore.metadata.records import MetadataParseError, decode_record
from kafkacore.net import ControllerNode
from kafkacore.net.timeouts import stop_task
from kafkacore.raft import (
    Endpoints,
    FileQuorumStateStore,
    Node,
    QuorumConfig,
    RaftClient,
    VoterSet,
    parse_bootstrap_servers,
    parse_voters,
)
from kafkacore.raft.driver import RaftDriver
from kafkacore.raft.metadata_log import DEFAULT_SEGMENT_BYTES, MetadataLog
from kafkacore.raft.records import RaftBatch, iter_batches
from kafkacore.raft.snapshots import read_snapshot

__all__ = ["BrokerRaftManager", "MetadataDirectoryError", "metadata_log_dir"]

logger = logging.getLogger("kafkacore.server")

#: how much of the log one read takes (Kafka's loader reads batch by batch; this bounds
#: the bytes copied per step)
_READ_BYTES = 8 * 1024 * 1024


class MetadataDirectoryError(RuntimeError):
    """The metadata log directory is not formatted for this node and cluster (Kafka's
    start-up refusal)."""


def metadata_log_dir(config: BrokerConfig) -> str:
    """``metadata.log.dir``, else the first of ``log.dirs`` (Kafka's ``metadataLogDir``)."""
    return config.metadata_log_dir or config.log_dirs[0]


def _formatted(directory: str, node_id: int) -> MetaProperties:
    """The ``meta.properties`` ``kafka-storage format`` wrote in ``directory``."""
    path = MetaProperties.path_in(directory)
    try:
        props = MetaProperties.read(path)
    except FileNotFoundError:
        raise MetadataDirectoryError(
            f"No meta.properties found in {directory} (have you run `kafka-storage.sh` to "
            "format the directory?)"
        ) from None
    if props.version != 1 or props.cluster_id is None:
        raise MetadataDirectoryError(f"{path} is not a KRaft meta.properties (version 1)")
    if props.node_id != node_id:
        raise MetadataDirectoryError(
            f"Stored node id {props.node_id} doesn't match previous node id {node_id} in {path}"
        )
    if props.directory_id is None:
        raise MetadataDirectoryError(f"{path} has no directory.id")
    return props


class BrokerRaftManager:
    """See the module docstring. ``loader`` is fed on ``metadata_executor``;
    ``on_failure`` is told (on the loop) when the Raft client or the loading fails."""

    def __init__(
        self,
        config: BrokerConfig,
        node_id: int,
        loader: MetadataLoader,
        *,
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.config = config
        self.node_id = node_id
        self.loader = loader
        self._on_failure = on_failure
        directory = metadata_log_dir(config)
        props = _formatted(directory, node_id)
        assert props.cluster_id is not None and props.directory_id is not None
        self.cluster_id: str = props.cluster_id
        self.directory_id: uuid.UUID = props.directory_id
        names = config.controller_listener_names or []
        if not names:
            raise MetadataDirectoryError("controller.listener.names must be set in KRaft mode")
        self.listener = names[0]
        self._voters = parse_voters(config.controller_quorum_voters)
        bootstrap = (
            [Node(i, h, p) for i, (h, p) in sorted(self._voters.items())]
            if self._voters
            else [
                Node(-2 - n, h, p)
                for n, (h, p) in enumerate(
                    parse_bootstrap_servers(config.controller_quorum_bootstrap_servers)
                )
            ]
        )
        if not bootstrap:
            raise MetadataDirectoryError(
                "If using process.roles, either controller.quorum.bootstrap.servers must "
                "contain the set of bootstrap controllers or controller.quorum.voters must "
                "contain a parseable set of controllers."
            )
        self.log = MetadataLog(
            directory,
            segment_bytes=int(
                config.originals.get("metadata.log.segment.bytes", DEFAULT_SEGMENT_BYTES)
            ),
        )
        self.client = RaftClient(
            node_id=node_id,
            directory_id=self.directory_id,
            cluster_id=self.cluster_id,
            log=self.log,
            store=FileQuorumStateStore.in_dir(self.log.directory),
            config=QuorumConfig.from_props(config.originals),
            static_voters=VoterSet.from_addresses(self.listener, self._voters),
            bootstrap_servers=bootstrap,
            listener=self.listener,
            local_listeners=Endpoints(),
        )
        self.driver = RaftDriver(
            self.client, host="", port=0, client_id=f"raft-client-{node_id}", listen=False
        )
        self.metadata_executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"kafkacore-metadata-{node_id}"
        )
        self._task: asyncio.Task[None] | None = None
        self._caught_up = asyncio.Event()
        self.failure: BaseException | None = None

    # -- life cycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Start fetching from the quorum and loading what is committed."""
        await self.driver.start()
        self._task = asyncio.get_running_loop().create_task(
            self._follow(), name=f"metadata-loader-{self.node_id}"
        )

    async def shutdown(self) -> None:
        if self._task is not None:
            await stop_task(self._task)
            self._task = None
        await self.driver.stop()
        await asyncio.to_thread(self.metadata_executor.shutdown, wait=True)
        self.log.close()

    # -- what the broker asks -----------------------------------------------------------

    def controller(self) -> ControllerNode | None:
        """The active controller: the quorum's leader on the controller listener
        (Kafka's ``RaftControllerNodeProvider``); None while no leader is known."""
        leader = self.client.leader_and_epoch
        if leader.leader_id is None or leader.leader_id < 0:
            return None
        address = leader.endpoints.address(self.listener)
        if address is None:
            address = self._voters.get(leader.leader_id)
        if address is None:
            return None
        return ControllerNode(leader.leader_id, *address)

    @property
    def high_watermark(self) -> int | None:
        return self.client.high_watermark

    def highest_metadata_offset(self) -> int:
        """The last offset the loader has (published or not): a heartbeat's
        ``CurrentMetadataOffset``."""
        return self.loader.offset

    async def wait_caught_up(self, timeout_s: float) -> None:
        """Until the loader first reached the high watermark it learned (TimeoutError)."""
        await asyncio.wait_for(self._caught_up.wait(), timeout_s)

    # -- following the log --------------------------------------------------------------

    async def _follow(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                await self.driver.changed(0.5)
                if self.driver.failure is not None:
                    raise self.driver.failure
                hw = self.client.high_watermark
                if hw is None:
                    continue
                if self.loader.catch_up_offset < 0:
                    self.loader.catch_up_offset = hw - 1
                    logger.info(
                        "[BrokerRaftManager id=%d] the metadata log is committed up to offset "
                        "%d: catching up",
                        self.node_id,
                        hw,
                    )
                while self.loader.offset + 1 < hw:
                    before = self.loader.offset
                    await self._load_next(loop, hw)
                    if self.loader.offset == before:
                        break  # the rest is not in the local log yet
                if self.loader.offset >= self.loader.catch_up_offset:
                    self._caught_up.set()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            logger.exception("[BrokerRaftManager id=%d] metadata loading failed", self.node_id)
            self.failure = exc
            if self._on_failure is not None:
                self._on_failure(exc)

    async def _load_next(self, loop: asyncio.AbstractEventLoop, hw: int) -> None:
        """One step towards ``hw``: the latest snapshot if the log starts past what was
        loaded, else the committed batches of one read."""
        start = self.loader.offset + 1
        log = self.log
        if log.start_offset > start:
            snapshot_id = log.latest_snapshot_id()
            if snapshot_id is None:
                raise CorruptRecordError(
                    f"the metadata log starts at {log.start_offset} with no snapshot"
                )
            data = log.read_snapshot(snapshot_id)
            if data is None:
                raise CorruptRecordError(f"snapshot {snapshot_id} vanished")
            await loop.run_in_executor(
                self.metadata_executor,
                self._load_snapshot,
                data,
                snapshot_id.offset,
                snapshot_id.epoch,
            )
            return
        data = log.read(start, _READ_BYTES)
        batches = [b for b in iter_batches(data, decode=False) if b.last_offset < hw]
        if not batches:
            return
        size = sum(b.header.size_in_bytes for b in batches)
        await loop.run_in_executor(self.metadata_executor, self._load_batches, data[:size])

    def _load_snapshot(self, data: bytes, end_offset: int, epoch: int) -> None:
        snapshot = read_snapshot(data)
        records = []
        for value in snapshot.values:
            try:
                records.append(decode_record(value))
            except MetadataParseError as exc:
                logger.error("Skipping an unreadable record of snapshot %d: %s", end_offset, exc)
        self.loader.load_snapshot(
            records,
            MetadataProvenance(end_offset - 1, epoch, snapshot.last_contained_log_timestamp),
        )

    def _load_batches(self, data: bytes) -> None:
        batches: list[RaftBatch] = list(iter_batches(data))
        self.loader.handle_commit(batches)
