"""A broker on the metadata quorum (Kafka's ``KafkaRaftManager`` and the raft listener of
``MetadataLoader``): ``__cluster_metadata-0`` in ``metadata.log.dir`` (default: the first
of ``log.dirs``), a :class:`~kafkacore.raft.RaftClient` as an **observer** (the broker's
node id, never a voter) fetching from the quorum's leader over the
:class:`~kafkacore.raft.driver.RaftDriver`, and the committed part of that log handed to
the :class:`~kafkacore.metadata.image.MetadataLoader`.

* **Whom to ask**: the static voters (``controller.quorum.voters``) or the bootstrap
  servers (``controller.quorum.bootstrap.servers``), on the first of
  ``controller.listener.names``.
* **What is committed**: the driver's listener events
  (:meth:`~kafkacore.raft.driver.RaftDriver.register_listener`: a snapshot to load when
  the log starts past what was read, then the committed batches), read on the event loop
  (the Raft client owns the log there) and replayed on the one metadata thread (Kafka's
  loader event queue), in order. Until the loader reaches the first high watermark it
  learns, it publishes nothing (Kafka's catching up).
* **Combined mode** (``process.roles=broker,controller``): the broker shares the
  controller's Raft replica (Kafka's ``SharedServer``): :meth:`BrokerRaftManager.shared`
  registers on its driver instead of starting an observer, and leaves it to the
  controller to stop.
* **Who controls**: the quorum's leader, on the controller listener
  (:meth:`BrokerRaftManager.controller`, Kafka's ``RaftControllerNodeProvider``).

Thread-safety: event loop; the loader runs on :attr:`BrokerRaftManager.metadata_executor`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from kafkacore.config import BrokerConfig
from kafkacore.metadata.image import MetadataLoader, MetadataProvenance
from kafkacore.metadata.records import MetadataParseError, decode_record
from kafkacore.metadata.storage import StorageError, read_formatted_directories
from kafkacore.net import ControllerNode
from kafkacore.net.timeouts import stop_task
from kafkacore.raft import (
    Endpoints,
    FileQuorumStateStore,
    QuorumConfig,
    RaftClient,
    VoterSet,
    bootstrap_nodes,
    parse_voters,
)
from kafkacore.raft.driver import RaftDriver
from kafkacore.raft.listener import Commit, ListenerEvent, LoadSnapshot
from kafkacore.raft.metadata_log import MetadataLog
from kafkacore.raft.snapshots import Snapshot
from kafkacore.raft.types import OffsetAndEpoch

__all__ = ["BrokerRaftManager", "metadata_log_dir"]

logger = logging.getLogger("kafkacore.server")


def metadata_log_dir(config: BrokerConfig) -> str:
    """``metadata.log.dir``, else the first of ``log.dirs`` (Kafka's ``metadataLogDir``)."""
    return config.metadata_log_dir or config.log_dirs[0]


class BrokerRaftManager:
    """See the module docstring. ``loader`` is fed on ``metadata_executor``;
    ``on_failure`` is told (on the loop) when the Raft client or the loading fails.
    :meth:`observer` builds one with its own Raft replica, :meth:`shared` one on a
    combined node's controller replica."""

    def __init__(
        self,
        node_id: int,
        cluster_id: str,
        directory_id: uuid.UUID,
        listener: str,
        voters: dict[int, tuple[str, int]],
        driver: RaftDriver,
        loader: MetadataLoader,
        *,
        owns_log: MetadataLog | None,
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.directory_id = directory_id
        self.listener = listener
        self._voters = voters
        self.driver = driver
        self.client = driver.client
        self.loader = loader
        # the observer's own log and driver (None: a combined node's controller owns them)
        self._own_log = owns_log
        self._owns_driver = owns_log is not None
        self._on_failure = on_failure
        self.metadata_executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"kafkacore-metadata-{node_id}"
        )
        self._caught_up = asyncio.Event()
        self._catch_up_known = False  # the first high watermark was seen
        self._watch: asyncio.Task[None] | None = None
        self._closed = False
        self.failure: BaseException | None = None

    @classmethod
    def observer(
        cls, config: BrokerConfig, node_id: int, loader: MetadataLoader
    ) -> BrokerRaftManager:
        """A broker-only node: its own Raft replica of ``__cluster_metadata`` as an
        observer (it never votes), fetching from the quorum's leader."""
        directory = metadata_log_dir(config)
        cluster_id, directory_id = read_formatted_directories(config, directory)
        listener = _controller_listener(config)
        voters = parse_voters(config.controller_quorum_voters)
        bootstrap = bootstrap_nodes(voters, config.controller_quorum_bootstrap_servers)
        if not bootstrap:
            raise StorageError(
                "If using process.roles, either controller.quorum.bootstrap.servers must "
                "contain the set of bootstrap controllers or controller.quorum.voters must "
                "contain a parseable set of controllers."
            )
        log = MetadataLog(
            directory,
            segment_bytes=config.get("metadata.log.segment.bytes"),
            segment_ms=config.get("metadata.log.segment.ms"),
        )
        client = RaftClient(
            node_id=node_id,
            directory_id=directory_id,
            cluster_id=cluster_id,
            log=log,
            store=FileQuorumStateStore.in_dir(log.directory),
            config=QuorumConfig.from_props(config.originals),
            static_voters=VoterSet.from_addresses(listener, voters),
            bootstrap_servers=bootstrap,
            listener=listener,
            local_listeners=Endpoints(),
        )
        driver = RaftDriver(
            client, host="", port=0, client_id=f"raft-client-{node_id}", listen=False
        )
        return cls(
            node_id,
            cluster_id,
            directory_id,
            listener,
            voters,
            driver,
            loader,
            owns_log=log,
        )

    @classmethod
    def shared(
        cls, config: BrokerConfig, driver: RaftDriver, loader: MetadataLoader
    ) -> BrokerRaftManager:
        """A combined node: the broker reads the controller's replica (already started
        and stopped by the controller)."""
        client = driver.client
        return cls(
            config.node_id,
            client.cluster_id,
            client.directory_id,
            _controller_listener(config),
            parse_voters(config.controller_quorum_voters),
            driver,
            loader,
            owns_log=None,
        )

    # -- life cycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Start fetching from the quorum (an observer) and loading what is committed."""
        if self._owns_driver:
            await self.driver.start()
        self.driver.register_listener(self._on_events)
        self._watch = asyncio.get_running_loop().create_task(
            self._watch_driver(), name=f"metadata-watch-{self.node_id}"
        )

    async def shutdown(self) -> None:
        self._closed = True
        if self._watch is not None:
            await stop_task(self._watch)
            self._watch = None
        if self._owns_driver:
            await self.driver.stop()
        await asyncio.to_thread(self.metadata_executor.shutdown, wait=True)
        if self._own_log is not None:
            self._own_log.close()

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

    async def wait_caught_up(self, timeout_s: float) -> None:
        """Until the loader first reached the high watermark it learned (TimeoutError)."""
        await asyncio.wait_for(self._caught_up.wait(), timeout_s)

    # -- following the log --------------------------------------------------------------

    async def _watch_driver(self) -> None:
        # a plain sleep: cancellation always ends it (asyncio.wait_for of Python 3.11 can
        # swallow a cancellation that races with its timeout)
        while self.failure is None:
            await asyncio.sleep(0.2)
            if self.driver.failure is not None:
                self._fail(self.driver.failure)

    def _fail(self, exc: BaseException) -> None:
        if self.failure is None:
            logger.error("[BrokerRaftManager id=%d] metadata loading failed: %r", self.node_id, exc)
            self.failure = exc
            if self._on_failure is not None:
                self._on_failure(exc)

    def _on_events(self, events: list[ListenerEvent]) -> None:
        """On the loop, after a round of the Raft client: what is new, to the metadata
        thread in order."""
        if self._closed or self.failure is not None:
            return
        hw = self.client.high_watermark
        if hw is not None and not self._catch_up_known:
            self.loader.catch_up_offset = hw - 1
            self._catch_up_known = True
            logger.info(
                "[BrokerRaftManager id=%d] the metadata log is committed up to offset %d: "
                "catching up",
                self.node_id,
                hw,
            )
        loads = [e for e in events if isinstance(e, LoadSnapshot | Commit)]
        if not loads and not (self._catch_up_known and not self._caught_up.is_set()):
            return
        future = self.metadata_executor.submit(self._load, loads)
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda f: loop.call_soon_threadsafe(self._loaded, f))

    def _loaded(self, future: Future[bool]) -> None:
        exc = future.exception()
        if exc is not None:
            self._fail(exc)
        elif future.result():
            self._caught_up.set()

    def _load(self, events: list[LoadSnapshot | Commit]) -> bool:
        """The metadata thread: replay ``events``; whether the loader caught up."""
        for event in events:
            match event:
                case LoadSnapshot(snapshot_id, snapshot):
                    self._load_snapshot(snapshot_id, snapshot)
                case Commit(batches):
                    self.loader.handle_commit(batches)
        return self._catch_up_known and self.loader.offset >= self.loader.catch_up_offset

    def _load_snapshot(self, snapshot_id: OffsetAndEpoch, snapshot: Snapshot) -> None:
        records = []
        for value in snapshot.values:
            try:
                records.append(decode_record(value))
            except MetadataParseError as exc:
                logger.error("Skipping an unreadable record of snapshot %s: %s", snapshot_id, exc)
        self.loader.load_snapshot(
            records,
            MetadataProvenance(
                snapshot_id.offset - 1, snapshot_id.epoch, snapshot.last_contained_log_timestamp
            ),
        )


def _controller_listener(config: BrokerConfig) -> str:
    names = config.controller_listener_names or []
    if not names:
        raise StorageError("controller.listener.names must be set in KRaft mode")
    return names[0]
