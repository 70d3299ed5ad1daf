"""The balancer as a controller runs it, controller-agnostic: :class:`Balancer` looks at
the cluster each time the controller asks (:meth:`Balancer.tick`), decides with
:func:`~kafkacore.balancer.executor.step` and acts through the
:class:`BalancerController` the controller implements; :func:`sample_log_dirs` asks every
broker for its log directories (DescribeLogDirs, with KIP-1066's cordoned flag), which the
controller does before it queues the tick so its event queue never waits on the network.

The seam for the controllers: the ZooKeeper-mode ``KafkaController`` implements
:class:`BalancerController` in :mod:`kafkacore.controller.balancing` (its context as the
picture, its reassignment and preferred-election machinery, throttles as ZooKeeper
configs, the state in ``/kafkacore/balancer`` fenced by the controller epoch) and calls
:meth:`Balancer.tick` from its event queue (a ``BalancerTick`` event). The KRaft
``QuorumController`` implements the same six methods over its metadata image and
records - reassignments as its AlterPartitionReassignments path makes them, elections as
its ElectLeaders path, throttles as ``ConfigRecord``\\ s, the state in a record of its
own - and calls :meth:`Balancer.tick` from its event queue; nothing here changes.

Thread-safety: a :class:`Balancer` is used by one task (the controller's event task).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from kafkacore.balancer.config import BalancerConfig
from kafkacore.balancer.executor import BalancerState, Decision, Throttles, step
from kafkacore.balancer.model import ClusterModel, LogDirModel, Move
from kafkacore.log import TopicPartition
from kafkacore.net import NodeClient, NodeClientFactory
from kafkacore.protocol import APIS_BY_NAME, ApiKey, ErrorCode

__all__ = ["Balancer", "BalancerController", "sample_log_dirs"]

log = logging.getLogger(__name__)

LogDirSamples = Mapping[int, tuple[LogDirModel, ...]]
"""Per broker id, its log directories as it answered DescribeLogDirs."""


class BalancerController(Protocol):
    """What the balancer needs of the active controller - the whole seam between the
    balancer and a controller (ZooKeeper-mode today, KRaft through the same methods)."""

    async def cluster_model(self, log_dirs: LogDirSamples) -> ClusterModel:
        """The cluster as the controller knows it now: every registered broker (alive or
        not: a replica on an unknown broker is on a dead one) with its rack and
        ``log_dirs``' entry, every partition with its replicas - a partition being
        reassigned with its *target* replicas and ``reassigning`` set - leader, ISR,
        size (from ``log_dirs``) and its topic's ``min.insync.replicas``."""
        ...

    async def reassign(self, moves: Sequence[Move]) -> Mapping[TopicPartition, int]:
        """Start the reassignment of each move's partition to its ``after`` replicas,
        through the controller's own reassignment machinery; the error code of each."""
        ...

    async def elect_preferred(self, partitions: Sequence[TopicPartition]) -> None:
        """A preferred leader election of ``partitions``."""
        ...

    async def apply_throttles(self, before: Throttles, after: Throttles) -> None:
        """Make the replication throttles the balancer set ``after`` instead of
        ``before`` (topic ``*.replication.throttled.replicas``, broker
        ``*.replication.throttled.rate``); entries only in ``before`` are removed."""
        ...

    async def load_state(self) -> bytes | None:
        """The state the balancer stored (None: none)."""
        ...

    async def save_state(self, data: bytes) -> None:
        """Store the balancer's state, fenced: a deposed controller cannot."""
        ...


class Balancer:
    """The balancer of one active controller (:meth:`deactivate` when it resigns)."""

    def __init__(
        self,
        controller: BalancerController,
        *,
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self._controller = controller
        self._clock_ms = clock_ms
        self._state: BalancerState | None = None
        self._saved: bytes | None = None
        self._activated = False
        self.last: Decision | None = None

    @property
    def state(self) -> BalancerState | None:
        return self._state

    def deactivate(self) -> None:
        """The controller resigned: forget everything (the next controller's balancer
        takes over from the stored state)."""
        self._state = None
        self._saved = None
        self.last = None

    async def tick(self, config: BalancerConfig, log_dirs: LogDirSamples) -> Decision:
        """One look: decide, then store the state (with the moves about to start), put
        the throttles in force, start the moves, run the elections."""
        controller = self._controller
        if self._state is None:
            self._saved = await controller.load_state()
            self._state = BalancerState.from_json(self._saved)
            self._activated = True
        state = self._state
        model = await controller.cluster_model(log_dirs)
        decision = step(state, model, config, self._clock_ms(), activated=self._activated)
        self._activated = False
        new_state = decision.state
        await self._save(new_state)
        if decision.throttles != state.throttles:
            await controller.apply_throttles(state.throttles, decision.throttles)
        if decision.start:
            results = await controller.reassign(decision.start)
            refused = {tp for tp, code in results.items() if code != ErrorCode.NONE}
            for move in decision.start:
                if move.tp in refused:
                    log.warning(
                        "balancer: the reassignment of %s was refused (error %d)",
                        move.tp,
                        results[move.tp],
                    )
                else:
                    log.info("balancer: started %s", move.describe())
            if refused:
                in_flight = {tp: f for tp, f in new_state.in_flight.items() if tp not in refused}
                new_state = _replace_in_flight(new_state, in_flight, len(refused))
                await self._save(new_state)
        if decision.elect:
            await controller.elect_preferred(decision.elect)
        if decision.status != (self.last.status if self.last else None):
            log.info("balancer: %s", decision.status)
        self._state = new_state
        self.last = decision
        return decision

    async def _save(self, state: BalancerState) -> None:
        data = state.to_json()
        if data != self._saved:
            await self._controller.save_state(data)
            self._saved = data


def _replace_in_flight(
    state: BalancerState, in_flight: Mapping[TopicPartition, Any], refused: int
) -> BalancerState:
    return replace(state, in_flight=dict(in_flight), abandoned=state.abandoned + refused)


async def sample_log_dirs(
    brokers: Mapping[int, tuple[str, int]],
    client_factory: NodeClientFactory,
    *,
    timeout_s: float = 10.0,
) -> dict[int, tuple[LogDirModel, ...]]:
    """Each broker's log directories (DescribeLogDirs v5 - v4 from a broker without
    KIP-1066's ``IsCordoned``), asked side by side; a broker that does not answer in
    ``timeout_s`` or answers with an error is left out (its sizes are then unknown)."""

    async def one(broker: int, host: str, port: int) -> tuple[int, tuple[LogDirModel, ...]]:
        client: NodeClient = client_factory(host, port)
        try:
            for version in (5, 4):
                try:
                    response = await asyncio.wait_for(
                        client.send(ApiKey.DESCRIBE_LOG_DIRS, version, _all_log_dirs()),
                        timeout_s,
                    )
                except (ConnectionError, OSError):
                    await client.close()
                    client = client_factory(host, port)
                    continue
                if getattr(response, "error_code", 0) == ErrorCode.UNSUPPORTED_VERSION:
                    continue
                return broker, _log_dirs_of(response, version)
            return broker, ()
        finally:
            await client.close()

    results = await asyncio.gather(
        *(one(b, h, p) for b, (h, p) in sorted(brokers.items())), return_exceptions=True
    )
    out: dict[int, tuple[LogDirModel, ...]] = {}
    for result in results:
        if isinstance(result, BaseException):
            log.debug("balancer: a broker's log directories could not be read: %s", result)
            continue
        broker, dirs = result
        if dirs:
            out[broker] = dirs
    return out


def _all_log_dirs() -> Any:
    cls: Any = APIS_BY_NAME["DescribeLogDirs"].request.cls
    return cls(topics=None)


def _log_dirs_of(response: Any, version: int) -> tuple[LogDirModel, ...]:
    if response.error_code != ErrorCode.NONE:
        return ()
    dirs = []
    for result in response.results:
        if result.error_code != ErrorCode.NONE:
            continue  # an offline directory holds nothing the balancer can count on
        sizes = {
            TopicPartition(t.name, p.partition_index): int(p.partition_size)
            for t in result.topics
            for p in t.partitions
            if not p.is_future_key
        }
        dirs.append(
            LogDirModel(
                result.log_dir,
                int(result.total_bytes),
                int(result.usable_bytes),
                bool(result.is_cordoned) if version >= 5 else False,
                sizes,
            )
        )
    return tuple(dirs)
