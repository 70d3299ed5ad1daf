"""The broker's registration, heartbeats and states in a KRaft cluster (Kafka's
``BrokerLifecycleManager``, KIP-631).

States (Kafka's ``BrokerState`` ids): NOT_RUNNING -> **STARTING** (registered, catching up
with the metadata log) -> **RECOVERY** (the controller says it caught up; logs being made
ready) -> **RUNNING** (unfenced) -> **PENDING_CONTROLLED_SHUTDOWN** (leaderships moving off)
-> **SHUTTING_DOWN**.

* **Registration**: BrokerRegistration v4 (the highest the controller's ApiVersions
  allows, down to v0): node id, cluster id, a random incarnation id per process, the
  advertised listeners, the supported features, rack, log directory ids (sorted as
  Kafka's ``Uuid.compareTo``) and the epoch of the previous run (the clean shutdown
  marker's, KIP-966). The broker epoch is the controller's answer. A refusal or a
  transport failure is retried with Kafka's exponential backoff (100 ms doubling up to
  ``broker.session.timeout.ms``, 2 % jitter); no registration within
  ``initial.broker.registration.timeout.ms`` fails the start-up.
* **Heartbeats** (BrokerHeartbeat v2) every ``broker.heartbeat.interval.ms`` (10 ms while
  STARTING, 50 ms after the first answer in controlled shutdown): the broker epoch, the
  last metadata offset loaded, ``WantFence`` until the broker is ready to be unfenced,
  ``WantShutDown`` in controlled shutdown, the offline log directories. The answers
  move the state: ``IsCaughtUp`` -> RECOVERY, not ``IsFenced`` -> RUNNING,
  ``ShouldShutDown`` -> SHUTTING_DOWN. An error (STALE_BROKER_EPOCH from a controller
  that replaced this registration, NOT_CONTROLLER, ...) is retried after the backoff, as
  Kafka does; the controller fences a broker whose heartbeats stop.

Thread-safety: one event loop; every method runs on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import random
import socket
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kafkacore._java import kafka_uuid_key
from kafkacore.config import BrokerConfig
from kafkacore.features import (
    SHARE_VERSION,
    STREAMS_VERSION,
    TRANSACTION_VERSION,
    supported_features,
)
from kafkacore.net import ControllerChannel
from kafkacore.net.timeouts import stop_task, within
from kafkacore.protocol import ApiKey, ErrorCode
from kafkacore.protocol.messages.broker_heartbeat import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
)
from kafkacore.protocol.messages.broker_registration import (
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)

__all__ = [
    "SUPPORTED_FEATURES",
    "BrokerLifecycleManager",
    "BrokerState",
    "Listener",
    "RegistrationTimeoutError",
]

logger = logging.getLogger("kafkacore.server")

REGISTRATION_VERSION = 4
HEARTBEAT_VERSION = 2

#: what kafkacore's broker does not implement yet, capped below Kafka's levels: its
#: transaction coordinator writes TransactionLogValue v0 and serves EndTxn up to v4
#: (transaction.version 2 is KIP-890 part 2), and there are no share groups (KIP-932)
#: nor Streams groups (KIP-1071)
_NOT_YET = {TRANSACTION_VERSION: 0, SHARE_VERSION: 0, STREAMS_VERSION: 0}

SUPPORTED_FEATURES: Mapping[str, tuple[int, int]] = {
    name: (r.min, min(r.max, _NOT_YET.get(name, r.max))) for name, r in supported_features().items()
} | {name: (0, 0) for name in _NOT_YET if name not in supported_features()}
"""The feature levels a kafkacore broker supports (its registration's ``Features`` and
its ApiVersions' ``SupportedFeatures``): Kafka 4.3.1's (:func:`kafkacore.features.
supported_features`) but for :data:`_NOT_YET`. A controller refuses a broker that cannot
support a finalized level, so a cluster with kafkacore brokers is formatted with
``transaction.version``, ``share.version`` and ``streams.version`` at 0."""


class BrokerState(enum.IntEnum):
    """Kafka's ``BrokerState``."""

    NOT_RUNNING = 0
    STARTING = 1
    RECOVERY = 2
    RUNNING = 3
    PENDING_CONTROLLED_SHUTDOWN = 6
    SHUTTING_DOWN = 7
    UNKNOWN = 127


class RegistrationTimeoutError(TimeoutError):
    """No registration within ``initial.broker.registration.timeout.ms``: the node stops
    (``kafkacore server-start`` exits 1, as Kafka's broker does)."""


@dataclass(frozen=True, slots=True)
class Listener:
    """An advertised listener as BrokerRegistration carries it."""

    name: str
    host: str
    port: int
    security_protocol: int


def _backoff_ms(attempts: int, max_ms: int, rng: random.Random) -> float:
    """Kafka's ``ExponentialBackoff(100, 2, max, 0.02)``."""
    if max_ms <= 100:
        return max_ms
    term = 100.0 * 2.0 ** min(attempts, 62)
    jitter = rng.uniform(1 - 0.02, 1 + 0.02)
    return float(min(term, max_ms) * jitter)


class BrokerLifecycleManager:
    """See the module docstring. ``highest_metadata_offset()`` is the last metadata offset
    the broker loaded; ``log_dirs`` its online log directory ids."""

    def __init__(
        self,
        config: BrokerConfig,
        node_id: int,
        channel: ControllerChannel,
        *,
        cluster_id: str,
        log_dirs: Sequence[uuid.UUID],
        highest_metadata_offset: Callable[[], int],
        previous_broker_epoch: int = -1,
        supported_features: Mapping[str, tuple[int, int]] = SUPPORTED_FEATURES,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.node_id = node_id
        self.channel = channel
        self.cluster_id = cluster_id
        self.log_dirs = sorted(log_dirs, key=kafka_uuid_key)
        self._highest_metadata_offset = highest_metadata_offset
        self.previous_broker_epoch = previous_broker_epoch
        self.supported_features = dict(supported_features)
        self._rng = rng or random.Random()
        self.incarnation_id = uuid.uuid4()
        self.state = BrokerState.NOT_RUNNING
        self.broker_epoch = -1
        self.registered = False
        #: set once the controller says the broker caught up (STARTING -> RECOVERY)
        self.initial_catch_up = asyncio.Event()
        #: set once the broker was first unfenced (RECOVERY -> RUNNING)
        self.initial_unfence = asyncio.Event()
        #: set once the controller let the broker go (or it had nothing to hand over)
        self.controlled_shutdown_done = asyncio.Event()
        self._ready_to_unfence = False
        self._offline_dirs: dict[uuid.UUID, bool] = {}  # dir -> told the controller
        self._got_controlled_shutdown_answer = False
        self._failed_attempts = 0
        self._listeners: list[Listener] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._prefix = f"[BrokerLifecycleManager id={node_id}]"
        #: set when the start-up must fail (no registration in time)
        self.failure: BaseException | None = None

    # -- the broker's calls ---------------------------------------------------------------

    def start(self, listeners: Sequence[Listener]) -> None:
        """STARTING: register now, then heartbeat."""
        self._listeners = list(listeners)
        self.state = BrokerState.STARTING
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._run(), name=f"broker-lifecycle-{self.node_id}")
        logger.info(
            "%s Incarnation %s of broker %d in cluster %s is now STARTING.",
            self._prefix,
            self.incarnation_id,
            self.node_id,
            self.cluster_id,
        )

    async def wait_registered(self) -> None:
        """Until the first registration succeeded (RegistrationTimeoutError after
        ``initial.broker.registration.timeout.ms``)."""
        timeout_s = self.config.initial_broker_registration_timeout_ms / 1000
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self.registered:
            if self.failure is not None:
                raise self.failure
            if loop.time() >= deadline:
                raise RegistrationTimeoutError(
                    "Shutting down because we were unable to register with the controller quorum."
                )
            await asyncio.sleep(0.01)

    def set_ready_to_unfence(self) -> None:
        """The broker has published its first metadata: ask to be unfenced."""
        self._ready_to_unfence = True
        self._wake.set()

    def begin_controlled_shutdown(self) -> None:
        """RUNNING -> PENDING_CONTROLLED_SHUTDOWN (heartbeats with ``WantShutDown``); in any
        other state the broker has nothing to hand over and shuts down at once."""
        if self.state == BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            logger.info("%s already in controlled shutdown", self._prefix)
        elif self.state == BrokerState.RUNNING:
            logger.info("%s Beginning controlled shutdown.", self._prefix)
            self.state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
            self._wake.set()
        else:
            logger.info(
                "%s Skipping controlled shutdown because we are in state %s.",
                self._prefix,
                self.state.name,
            )
            self._begin_shutdown()

    def report_offline_dir(self, directory: uuid.UUID) -> None:
        """A log directory failed: the next heartbeat lists it (at once if registered)."""
        self._offline_dirs.setdefault(directory, False)
        if self.registered:
            self._wake.set()

    async def close(self) -> None:
        self._begin_shutdown()
        if self._task is not None:
            await stop_task(self._task)
            self._task = None

    def _begin_shutdown(self) -> None:
        if self.state != BrokerState.SHUTTING_DOWN:
            logger.info("%s Transitioning from %s to SHUTTING_DOWN.", self._prefix, self.state.name)
        self.state = BrokerState.SHUTTING_DOWN
        self.controlled_shutdown_done.set()
        self._wake.set()

    # -- the communication loop -----------------------------------------------------------

    def _shutting_down(self) -> bool:
        return self.state == BrokerState.SHUTTING_DOWN

    async def _run(self) -> None:
        delay_s = 0.0
        while not self._shutting_down():
            # a wake-up asked for while a request was in flight is not lost (Kafka's
            # nextSchedulingShouldBeImmediate): the event stays set until used here
            if delay_s > 0 and not self._wake.is_set():
                with contextlib.suppress(TimeoutError):
                    await within(self._wake.wait(), delay_s)
            self._wake.clear()
            if self._shutting_down():
                return
            try:
                if self.registered:
                    delay_s = await self._heartbeat()
                else:
                    delay_s = await self._register()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a transport failure or no controller: back off
                delay_s = self._after_failure(f"{type(exc).__name__}: {exc}")

    def _after_failure(self, reason: str) -> float:
        delay_ms = _backoff_ms(
            self._failed_attempts, self.config.broker_session_timeout_ms, self._rng
        )
        self._failed_attempts += 1
        logger.info("%s %s; retrying in %.0f ms", self._prefix, reason, delay_ms)
        return delay_ms / 1000

    def _after_success(self) -> float:
        self._failed_attempts = 0
        return self.config.broker_heartbeat_interval_ms / 1000

    @property
    def _timeout_s(self) -> float:
        return max(1.0, self.config.broker_session_timeout_ms / 1000)

    def registration_request(self) -> BrokerRegistrationRequest:
        cls = BrokerRegistrationRequest
        return cls(
            broker_id=self.node_id,
            cluster_id=self.cluster_id,
            incarnation_id=self.incarnation_id,
            listeners=[
                cls.Listener(
                    name=li.name, host=li.host, port=li.port, security_protocol=li.security_protocol
                )
                for li in self._listeners
            ],
            features=[
                cls.Feature(name=name, min_supported_version=lo, max_supported_version=hi)
                for name, (lo, hi) in self.supported_features.items()
            ],
            rack=self.config.broker_rack,
            is_migrating_zk_broker=False,
            log_dirs=list(self.log_dirs),
            previous_broker_epoch=self.previous_broker_epoch,
        )

    async def _register(self) -> float:
        response = await self.channel.send(
            ApiKey.BROKER_REGISTRATION,
            REGISTRATION_VERSION,
            self.registration_request(),
            timeout_s=self._timeout_s,
        )
        assert isinstance(response, BrokerRegistrationResponse)
        if response.error_code != ErrorCode.NONE:
            return self._after_failure(
                f"Unable to register broker {self.node_id} because the controller returned "
                f"error {ErrorCode(response.error_code).name}"
            )
        self.broker_epoch = response.broker_epoch
        self.registered = True
        logger.info(
            "%s Successfully registered broker %d with broker epoch %d",
            self._prefix,
            self.node_id,
            self.broker_epoch,
        )
        self._failed_attempts = 0
        return 0.0  # heartbeat at once

    async def _heartbeat(self) -> float:
        offline = list(self._offline_dirs)
        request = BrokerHeartbeatRequest(
            broker_id=self.node_id,
            broker_epoch=self.broker_epoch,
            current_metadata_offset=self._highest_metadata_offset(),
            want_fence=not self._ready_to_unfence,
            want_shut_down=self.state == BrokerState.PENDING_CONTROLLED_SHUTDOWN,
            offline_log_dirs=offline,
        )
        response = await self.channel.send(
            ApiKey.BROKER_HEARTBEAT, HEARTBEAT_VERSION, request, timeout_s=self._timeout_s
        )
        assert isinstance(response, BrokerHeartbeatResponse)
        if response.error_code != ErrorCode.NONE:
            return self._after_failure(
                f"Broker {self.node_id} sent a heartbeat request but received error "
                f"{ErrorCode(response.error_code).name}"
            )
        for directory in offline:
            self._offline_dirs[directory] = True
        return self._on_heartbeat_answer(response)

    def _on_heartbeat_answer(self, response: BrokerHeartbeatResponse) -> float:
        """Kafka's ``BrokerHeartbeatResponseEvent``: the state the answer moves to, and
        when to send the next heartbeat."""
        match self.state:
            case BrokerState.STARTING:
                if response.is_caught_up:
                    logger.info(
                        "%s The broker has caught up. Transitioning from STARTING to RECOVERY.",
                        self._prefix,
                    )
                    self.state = BrokerState.RECOVERY
                    self.initial_catch_up.set()
                self._failed_attempts = 0
                return 0.01
            case BrokerState.RECOVERY:
                if not response.is_fenced:
                    logger.info(
                        "%s The broker has been unfenced. Transitioning from RECOVERY to RUNNING.",
                        self._prefix,
                    )
                    self.state = BrokerState.RUNNING
                    self.initial_unfence.set()
                return self._after_success()
            case BrokerState.PENDING_CONTROLLED_SHUTDOWN:
                if response.should_shut_down:
                    logger.info(
                        "%s The controller has asked us to exit controlled shutdown.",
                        self._prefix,
                    )
                    self._begin_shutdown()
                    return 0.0
                first = not self._got_controlled_shutdown_answer
                self._got_controlled_shutdown_answer = True
                return 0.05 if first else self._after_success()
            case _:
                return self._after_success()


def listeners_of(
    config: BrokerConfig, bound_ports: Mapping[str, int], protocol_ids: Mapping[str, int]
) -> list[Listener]:
    """The advertised listeners to register (the bound port where the config says 0)."""
    out = []
    for e in config.advertised_endpoints():
        port = e.port or bound_ports.get(e.listener_name, next(iter(bound_ports.values())))
        out.append(
            Listener(
                e.listener_name,
                e.host or socket.getfqdn(),
                port,
                protocol_ids[e.security_protocol],
            )
        )
    return out
