"""Followers fetching from leaders (Kafka's ``ReplicaFetcherManager`` /
``ReplicaFetcherThread`` / ``AbstractFetcherThread``), as asyncio tasks.

:class:`ReplicaFetcherManager` keeps one :class:`ReplicaFetcher` per (source broker,
fetcher index), the index being a stable hash of the partition modulo
``num.replica.fetchers``. A fetcher's
partitions each have a fetch state: the next offset, the leader epoch the LeaderAndIsr
gave, and whether it must truncate first. Each round:

1. **Truncation** (partitions just added, KIP-101/279; with ``truncate_on_fetch``, the
   default as in Kafka 3.9, only those whose log has no leader epoch - they truncate to
   the high watermark - the others go straight to 2): OffsetForLeaderEpoch v4 with
   ``replica_id`` = this broker and the follower's latest epoch; the answer
   ``(epoch, end offset)`` is applied with :func:`truncation_offset` - a known epoch
   truncates to ``min(leader end, own end for it, LEO)`` and is done, an unknown one
   truncates to the end of the follower's own largest epoch below it and asks again; an
   undefined answer (or no epoch at all here) truncates to the high watermark.
2. **Fetch** v12 with ``replica_id`` and each partition's ``last_fetched_epoch``, in a
   fetch session with the leader (KIP-227, :class:`FetchSessionHandler`: after the first
   full request only the partitions whose fetch state changed are sent, and the leader
   answers only those with news); records
   are appended unchanged on the I/O executor, the follower HW becomes
   ``min(leader HW, LEO)`` and the log start follows the leader's; a ``DivergingEpoch``
   in the answer truncates as in 1; OFFSET_OUT_OF_RANGE asks the leader for its log end
   and start offsets (ListOffsets with ``replica_id``) and truncates to the leader's end
   (when ours is beyond it), or restarts empty at the leader's start (when ours is below
   it), or else resumes at our own end.

Replication throttles (KIP-73): a partition throttled on this broker
(``follower.replication.throttled.replicas``) that is not in sync (behind the leader's
high watermark at its last fetch, or not fetched yet) is left out of the Fetch while the
follower quota is exceeded; a fetch with nothing left backs off; the records appended for
throttled partitions count against the quota.

Errors back off ``replica.fetch.backoff.ms``: a transport error the whole fetcher (and
drops the connection), a partition error (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
UNKNOWN_LEADER_EPOCH, ...) that partition, retried until a LeaderAndIsr re-adds or
removes it.

Thread-safety: :meth:`ReplicaFetcherManager.add_partitions` and ``remove_partitions``
may be called from any thread (the LeaderAndIsr handler applies on an I/O thread); the
fetchers run on the event loop given to :meth:`ReplicaFetcherManager.start`. A removed
partition may still see the append of a response already read; the partition refuses
it when it is no longer a follower at that leader epoch.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ParamSpec, Protocol, TypeVar

from kafkacore.config import BrokerConfig
from kafkacore.log import TopicPartition
from kafkacore.metadata import MetadataCache
from kafkacore.net import ClientSecurity, NodeClient, NodeClientFactory, node_client_factory
from kafkacore.net.timeouts import stop_task, within
from kafkacore.protocol import APIS, ApiKey, ErrorCode
from kafkacore.protocol.messages.fetch import FetchRequest, FetchResponse
from kafkacore.protocol.messages.list_offsets import ListOffsetsRequest
from kafkacore.protocol.messages.offset_for_leader_epoch import OffsetForLeaderEpochRequest
from kafkacore.protocol.types import memory_records
from kafkacore.server.fetch_session import FetchSessionHandler

if TYPE_CHECKING:
    from kafkacore.server.partition import Partition
    from kafkacore.server.replica_manager import ReplicaManager

__all__ = ["ReplicaFetcher", "ReplicaFetcherManager", "RunIo", "truncation_offset"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


class RunIo(Protocol):
    """``fn(*args, **kwargs)`` on the I/O executor, awaited from the event loop
    (``BrokerServices.run_io``, which also counts the time against a request quota)."""

    def __call__(
        self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs
    ) -> Awaitable[_T]: ...


logger = logging.getLogger("kafkacore.server")

FETCH_VERSION = 12
EPOCHS_VERSION = 4
LIST_OFFSETS_VERSION = 4
LIST_OFFSETS_EARLIEST_LOCAL_VERSION = 8  # KIP-405's -4 needs v8
_LATEST = -1
_EARLIEST = -2
_EARLIEST_LOCAL = -4  # KIP-405: the leader's local log start


def truncation_offset(
    partition: Partition, leader_epoch: int, leader_end_offset: int
) -> tuple[int, bool]:
    """Where to truncate for the leader's ``(epoch, end offset)`` answer, and whether
    truncation is then complete (Kafka's ``getOffsetTruncationState``)."""
    log = partition.log
    leo = log.log_end_offset
    if leader_epoch < 0 or leader_end_offset < 0:
        return min(partition.high_watermark, leo), True
    own = log.end_offset_for_epoch(leader_epoch)
    if own is None:
        return min(partition.high_watermark, leo), True
    own_epoch, own_end = own
    if own_epoch != leader_epoch:
        # the leader's epoch is unknown here: back to the end of our largest epoch below
        # it, then ask again with that one (KIP-279)
        return min(own_end, leo), False
    return min(own_end, leader_end_offset, leo), True


@dataclass(slots=True)
class _FetchState:
    fetch_offset: int
    leader_epoch: int
    truncating: bool = True
    delayed_until: float = 0.0
    # the leader's high watermark minus our next offset at the last fetch (None: no
    # fetch yet); 0 is Kafka's isReplicaInSync, which exempts from the throttle
    lag: int | None = None

    @property
    def in_sync(self) -> bool:
        return self.lag is not None and self.lag <= 0


class ReplicaFetcher:
    """The fetches from one source broker for some of its partitions."""

    def __init__(self, manager: ReplicaFetcherManager, source: int, index: int) -> None:
        self.manager = manager
        self.source = source
        self.index = index
        self.name = f"ReplicaFetcher-{manager.node_id}-{source}-{index}"
        self._states: dict[TopicPartition, _FetchState] = {}
        self._changed = asyncio.Event()
        self._client: NodeClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.session = FetchSessionHandler()  # with the leader (KIP-227)

    # called on the loop
    def add(self, tp: TopicPartition, state: _FetchState) -> None:
        self._states[tp] = state
        self._changed.set()

    def remove(self, tp: TopicPartition) -> None:
        self._states.pop(tp, None)

    @property
    def partitions(self) -> set[TopicPartition]:
        return set(self._states)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=self.name)

    async def shutdown(self) -> None:
        self._closing = True
        if self._task is not None:
            await stop_task(self._task)
            self._task = None
        await self._drop_client()

    async def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    def _connection(self) -> NodeClient:
        if self._client is None or self._client.closed:
            broker = self.manager.cache.broker(self.source)
            if broker is None:
                raise ConnectionError(f"broker {self.source} is not alive")
            host, port = broker.endpoint(self.manager.listener)
            self._client = self.manager.client_factory(host, port)
        return self._client

    @property
    def _config(self) -> BrokerConfig:
        return self.manager.config()

    async def _run(self) -> None:
        backoff_s = self._config.replica_fetch_backoff_ms / 1000
        while not self._closing:
            now = time.monotonic()
            ready = {tp: s for tp, s in self._states.items() if s.delayed_until <= now}
            if not ready:
                self._changed.clear()
                wait = min((s.delayed_until - now for s in self._states.values()), default=None)
                with contextlib.suppress(TimeoutError):
                    await within(self._changed.wait(), wait)
                continue
            try:
                truncating = {tp: s for tp, s in ready.items() if s.truncating}
                if truncating:
                    await self._truncate(truncating)
                fetching = {
                    tp: s
                    for tp, s in ready.items()
                    if not s.truncating and self._states.get(tp) is s
                }
                if fetching:
                    await self._fetch(fetching)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.info("%s: error (%s), backing off", self.name, exc)
                await self._drop_client()
                await asyncio.sleep(backoff_s)

    def _delay(self, tp: TopicPartition, state: _FetchState) -> None:
        state.delayed_until = time.monotonic() + self._config.replica_fetch_backoff_ms / 1000

    def _should_throttle(self, tp: TopicPartition, state: _FetchState) -> bool:
        """Leave ``tp`` out of this fetch (Kafka's ``shouldFollowerThrottle``): it is not
        in sync, it is throttled here and the follower quota is exceeded."""
        quota = self.manager.replica_manager.follower_quota
        return (
            not state.in_sync
            and quota.is_throttled(tp.topic, tp.partition)
            and quota.is_quota_exceeded()
        )

    # -- truncation ----------------------------------------------------------------------

    async def _truncate(self, states: Mapping[TopicPartition, _FetchState]) -> None:
        manager = self.manager
        asking: dict[TopicPartition, tuple[_FetchState, int]] = {}
        for tp, state in states.items():
            partition = manager.replica_manager.get_partition(tp)
            if partition is None:
                self.remove(tp)
                continue
            latest = partition.log.latest_epoch
            if latest is None:
                # nothing to compare: back to the high watermark
                await manager.run_io(partition.truncate_to, partition.high_watermark)
                self._truncated(tp, state, partition)
                continue
            asking[tp] = (state, latest)
        if not asking:
            return
        topics: dict[str, list[OffsetForLeaderEpochRequest.OffsetForLeaderPartition]] = {}
        for tp, (state, latest) in asking.items():
            topics.setdefault(tp.topic, []).append(
                OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                    partition=tp.partition,
                    current_leader_epoch=state.leader_epoch,
                    leader_epoch=latest,
                )
            )
        request = OffsetForLeaderEpochRequest(
            replica_id=manager.node_id,
            topics=[
                OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=t, partitions=ps)
                for t, ps in topics.items()
            ],
        )
        response = await self._connection().send(
            APIS[ApiKey.OFFSET_FOR_LEADER_EPOCH], EPOCHS_VERSION, request
        )
        for topic in response.topics:
            for answer in topic.partitions:
                tp = TopicPartition(topic.topic, answer.partition)
                entry = asking.get(tp)
                if entry is None or self._states.get(tp) is not entry[0]:
                    continue
                state = entry[0]
                if answer.error_code != ErrorCode.NONE:
                    logger.info(
                        "%s: OffsetForLeaderEpoch of %s: error %d", self.name, tp, answer.error_code
                    )
                    self._delay(tp, state)
                    continue
                partition = manager.replica_manager.get_partition(tp)
                if partition is None:
                    continue
                await self._apply_truncation(
                    tp, state, partition, answer.leader_epoch, answer.end_offset
                )

    async def _apply_truncation(
        self,
        tp: TopicPartition,
        state: _FetchState,
        partition: Partition,
        leader_epoch: int,
        end_offset: int,
    ) -> None:
        offset, done = truncation_offset(partition, leader_epoch, end_offset)
        if offset < partition.log.log_end_offset:
            logger.info(
                "%s: truncating %s to %d (leader epoch %d ends at %d)",
                self.name,
                tp,
                offset,
                leader_epoch,
                end_offset,
            )
        await self.manager.run_io(partition.truncate_to, offset)
        if done:
            self._truncated(tp, state, partition)
        else:
            state.fetch_offset = partition.log.log_end_offset

    def _truncated(self, tp: TopicPartition, state: _FetchState, partition: Partition) -> None:
        state.truncating = False
        state.fetch_offset = partition.log.log_end_offset

    # -- fetching ------------------------------------------------------------------------

    async def _fetch(self, states: Mapping[TopicPartition, _FetchState]) -> None:
        manager = self.manager
        config = self._config
        wanted: dict[tuple[str, int], FetchRequest.FetchPartition] = {}
        throttled = False
        for tp, state in states.items():
            partition = manager.replica_manager.get_partition(tp)
            if partition is None:
                self.remove(tp)
                continue
            if self._should_throttle(tp, state):
                throttled = True
                continue
            latest = partition.log.latest_epoch
            wanted[(tp.topic, tp.partition)] = FetchRequest.FetchPartition(
                partition=tp.partition,
                current_leader_epoch=state.leader_epoch,
                fetch_offset=state.fetch_offset,
                last_fetched_epoch=-1 if latest is None else latest,
                log_start_offset=partition.log.log_start_offset,
                partition_max_bytes=config.replica_fetch_max_bytes,
            )
        if not wanted:
            if throttled:
                # nothing to ask for: Kafka's fetcher backs off with an empty request
                await asyncio.sleep(config.replica_fetch_backoff_ms / 1000)
            return
        session_id, epoch, topics, forgotten = self.session.build(wanted)  # KIP-227
        request = FetchRequest(
            replica_id=manager.node_id,
            max_wait_ms=config.replica_fetch_wait_max_ms,
            min_bytes=config.replica_fetch_min_bytes,
            max_bytes=config.replica_fetch_response_max_bytes,
            isolation_level=0,
            session_id=session_id,
            session_epoch=epoch,
            topics=topics,
            forgotten_topics_data=forgotten,
            rack_id="",
        )
        client = self._connection()
        timeout = config.replica_fetch_wait_max_ms / 1000 + config.replica_socket_timeout_ms / 1000
        response = await within(client.send(APIS[ApiKey.FETCH], FETCH_VERSION, request), timeout)
        if not self.session.handle_response(response):
            return  # a session error: the next request is a full one
        if response.error_code != ErrorCode.NONE:
            raise ConnectionError(f"Fetch answered error {response.error_code}")
        for topic in response.responses:
            for data in topic.partitions:
                tp = TopicPartition(topic.topic, data.partition_index)
                fetched = states.get(tp)
                if fetched is None or self._states.get(tp) is not fetched:
                    continue  # removed meanwhile
                partition = manager.replica_manager.get_partition(tp)
                if partition is None:
                    continue
                await self._process(tp, fetched, partition, data, client)

    async def _process(
        self,
        tp: TopicPartition,
        state: _FetchState,
        partition: Partition,
        data: FetchResponse.PartitionData,
        client: NodeClient,
    ) -> None:
        code = data.error_code
        if code == ErrorCode.NONE:
            diverging = data.diverging_epoch
            if diverging is not None and (diverging.epoch >= 0 or diverging.end_offset >= 0):
                await self._apply_truncation(
                    tp, state, partition, diverging.epoch, diverging.end_offset
                )
                state.fetch_offset = partition.log.log_end_offset
                return
            records = memory_records(data.records)
            if records is not None and len(records) > 0:
                payload = records if isinstance(records, bytes) else bytes(records)
                await self.manager.run_io(
                    partition.append_records_as_follower, payload, state.leader_epoch
                )
                self.manager.on_appended(tp.topic, len(payload))
                quota = self.manager.replica_manager.follower_quota
                if quota.is_throttled(tp.topic, tp.partition):
                    quota.record(len(payload))
            state.fetch_offset = partition.log.log_end_offset
            state.lag = max(0, data.high_watermark - state.fetch_offset)
            partition.update_follower_high_watermark(data.high_watermark, data.log_start_offset)
            return
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            await self._handle_out_of_range(tp, state, partition, client)
            return
        if code == ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE:
            await self._build_remote_log_aux_state(tp, state, partition, client)
            return
        logger.info("%s: fetch of %s answered error %d", self.name, tp, code)
        self._delay(tp, state)

    async def _handle_out_of_range(
        self, tp: TopicPartition, state: _FetchState, partition: Partition, client: NodeClient
    ) -> None:
        """Kafka's ``fetchOffsetAndTruncate``."""
        leader_end = await self._leader_offset(client, tp, state, _LATEST)
        leader_start = await self._leader_offset(client, tp, state, _EARLIEST)
        if leader_end is None or leader_start is None:
            self._delay(tp, state)
            return
        leo = partition.log.log_end_offset
        if leader_end < leo:
            logger.warning(
                "%s: %s is ahead of the leader (%d > %d): truncating",
                self.name,
                tp,
                leo,
                leader_end,
            )
            await self.manager.run_io(partition.truncate_to, leader_end)
        elif leader_start > leo:
            logger.info("%s: %s restarts at the leader's log start %d", self.name, tp, leader_start)
            await self.manager.run_io(partition.truncate_fully_and_start_at, leader_start)
        state.fetch_offset = partition.log.log_end_offset

    async def _build_remote_log_aux_state(
        self, tp: TopicPartition, state: _FetchState, partition: Partition, client: NodeClient
    ) -> None:
        """KIP-405 (Kafka's ``TierStateMachine.buildRemoteLogAuxState``): the leader's local
        log starts above our fetch offset, the rest being tiered: restart at the end of the
        tiered segment holding the offset just below the leader's local start (found under
        that offset's leader epoch), with its leader epochs and producer snapshot."""
        tiering = self.manager.replica_manager.tiering
        local = await self._leader_offset_and_epoch(client, tp, state, _EARLIEST_LOCAL)
        log_start = await self._leader_offset(client, tp, state, _EARLIEST)
        if tiering is None or local is None or log_start is None:
            self._delay(tp, state)
            return
        local_start, local_epoch = local
        previous_epoch = await self._epoch_before(client, tp, state, local_start, local_epoch)
        try:
            next_offset = await self.manager.run_io(
                tiering.build_remote_log_aux_state, tp, local_start, log_start, previous_epoch
            )
        except Exception as exc:  # the metadata not loaded yet, the store down: retried
            logger.info("%s: building the remote state of %s failed: %s", self.name, tp, exc)
            self._delay(tp, state)
            return
        logger.info("%s: %s restarts at %d from the remote tier", self.name, tp, next_offset)
        state.fetch_offset = next_offset

    async def _epoch_before(
        self,
        client: NodeClient,
        tp: TopicPartition,
        state: _FetchState,
        local_start: int,
        local_epoch: int,
    ) -> int | None:
        """The leader epoch of the offset just below the leader's local log start (Kafka's
        ``TierStateMachine``): the local start's own epoch when it is 0, else the epoch
        before it, asked of the leader (OffsetForLeaderEpoch), when that epoch ends past
        the offset (an epoch that wrote nothing is skipped so). ``None``: unknown (the
        tiered segment holding the offset is then found by offset alone)."""
        if local_epoch < 0:
            return None
        if local_epoch == 0:
            return 0
        request = OffsetForLeaderEpochRequest(
            replica_id=self.manager.node_id,
            topics=[
                OffsetForLeaderEpochRequest.OffsetForLeaderTopic(
                    topic=tp.topic,
                    partitions=[
                        OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                            partition=tp.partition,
                            current_leader_epoch=state.leader_epoch,
                            leader_epoch=local_epoch - 1,
                        )
                    ],
                )
            ],
        )
        response = await client.send(APIS[ApiKey.OFFSET_FOR_LEADER_EPOCH], EPOCHS_VERSION, request)
        for topic in response.topics:
            for answer in topic.partitions:
                if answer.partition != tp.partition or answer.error_code != ErrorCode.NONE:
                    continue
                if answer.end_offset > local_start - 1:
                    return int(answer.leader_epoch) if answer.leader_epoch >= 0 else None
                return local_epoch
        return None

    async def _leader_offset(
        self, client: NodeClient, tp: TopicPartition, state: _FetchState, timestamp: int
    ) -> int | None:
        found = await self._leader_offset_and_epoch(client, tp, state, timestamp)
        return None if found is None else found[0]

    async def _leader_offset_and_epoch(
        self, client: NodeClient, tp: TopicPartition, state: _FetchState, timestamp: int
    ) -> tuple[int, int] | None:
        """The leader's answer to ListOffsets ``timestamp`` (offset, leader epoch; -1:
        none), ``None`` on an error. EARLIEST_LOCAL needs ListOffsets v8 (Kafka's
        ``timestampMinSupportedVersion``)."""
        request = ListOffsetsRequest(
            replica_id=self.manager.node_id,
            isolation_level=0,
            topics=[
                ListOffsetsRequest.ListOffsetsTopic(
                    name=tp.topic,
                    partitions=[
                        ListOffsetsRequest.ListOffsetsPartition(
                            partition_index=tp.partition,
                            current_leader_epoch=state.leader_epoch,
                            timestamp=timestamp,
                        )
                    ],
                )
            ],
        )
        version = (
            LIST_OFFSETS_EARLIEST_LOCAL_VERSION
            if timestamp == _EARLIEST_LOCAL
            else LIST_OFFSETS_VERSION
        )
        response = await client.send(APIS[ApiKey.LIST_OFFSETS], version, request)
        for topic in response.topics:
            for p in topic.partitions:
                if p.partition_index == tp.partition and p.error_code == ErrorCode.NONE:
                    return int(p.offset), int(p.leader_epoch)
        return None


class ReplicaFetcherManager:
    def __init__(
        self,
        node_id: int,
        replica_manager: ReplicaManager,
        cache: MetadataCache,
        config: Callable[[], BrokerConfig],
        *,
        run_io: RunIo | None = None,
        listener: str | None = None,
        security: ClientSecurity | None = None,
        client_factory: NodeClientFactory | None = None,
        truncate_on_fetch: bool = True,
        on_appended: Callable[[str, int], None] | None = None,
    ) -> None:
        self.node_id = node_id
        # Kafka's isTruncationOnFetchSupported (IBP >= 2.7-IV1): a partition whose log has
        # a leader epoch skips OffsetForLeaderEpoch and relies on DivergingEpoch
        self.truncate_on_fetch = truncate_on_fetch
        self.replica_manager = replica_manager
        self.cache = cache
        self.config = config
        self.listener = listener
        # TLS/SASL toward the leaders (inter_broker_security)
        self.client_factory = client_factory or node_client_factory(
            f"broker-{node_id}-fetcher",
            request_timeout_s=max(30.0, config().replica_socket_timeout_ms / 1000),
            security=security,
        )
        self._run_io = run_io
        # told (topic, bytes) of every append (the broker's replication-in metrics)
        self.on_appended: Callable[[str, int], None] = on_appended or (lambda topic, size: None)
        self._fetchers: dict[tuple[int, int], ReplicaFetcher] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run_io(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        if self._run_io is not None:
            return await self._run_io(fn, *args, **kwargs)
        loop = asyncio.get_running_loop()
        call = functools.partial(fn, *args, **kwargs)
        return await loop.run_in_executor(self.replica_manager.io_executor, call)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()

    async def shutdown(self) -> None:
        fetchers = list(self._fetchers.values())
        self._fetchers.clear()
        for fetcher in fetchers:
            await fetcher.shutdown()

    def fetcher_index(self, tp: TopicPartition) -> int:
        # a stable hash (Python's str hash is salted per process)
        return (sum(tp.topic.encode()) * 31 + tp.partition) % self.config().num_replica_fetchers

    def fetchers(self) -> list[ReplicaFetcher]:
        return list(self._fetchers.values())

    def _on_loop(self, fn: Callable[[], None]) -> None:
        loop = self._loop
        if loop is None:
            raise RuntimeError("ReplicaFetcherManager.start was not called")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            fn()
        else:
            done = threading.Event()

            def call() -> None:
                try:
                    fn()
                finally:
                    done.set()

            loop.call_soon_threadsafe(call)
            done.wait()

    def add_partitions(self, partitions: Mapping[TopicPartition, tuple[int, int, int]]) -> None:
        """Fetch each ``tp`` from ``(leader id, initial offset, leader epoch)``, truncating
        first."""
        items = dict(partitions)

        def add() -> None:
            for tp, (leader, offset, epoch) in items.items():
                self._remove_now({tp})
                key = (leader, self.fetcher_index(tp))
                fetcher = self._fetchers.get(key)
                if fetcher is None:
                    fetcher = ReplicaFetcher(self, leader, key[1])
                    self._fetchers[key] = fetcher
                    fetcher.start()
                partition = self.replica_manager.get_partition(tp)
                known_epoch = partition is not None and partition.log.latest_epoch is not None
                truncating = not (self.truncate_on_fetch and known_epoch)
                fetcher.add(tp, _FetchState(offset, epoch, truncating))
                logger.info(
                    "Fetching %s from broker %d at offset %d (epoch %d)", tp, leader, offset, epoch
                )

        self._on_loop(add)

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> None:
        removed = set(tps)
        self._on_loop(lambda: self._remove_now(removed))

    def _remove_now(self, tps: set[TopicPartition]) -> None:
        for fetcher in self._fetchers.values():
            for tp in tps:
                fetcher.remove(tp)

    def fetch_state(self, tp: TopicPartition) -> tuple[int, int, bool] | None:
        """``(source broker, next offset, truncating)`` of ``tp``, for tests."""
        for fetcher in self._fetchers.values():
            state = fetcher._states.get(tp)
            if state is not None:
                return fetcher.source, state.fetch_offset, state.truncating
        return None
