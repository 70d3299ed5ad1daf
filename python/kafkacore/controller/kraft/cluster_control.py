"""Broker and controller registration, broker sessions and their states (Kafka's
``ClusterControlManager`` and ``BrokerHeartbeatManager``).

**Registration** (BrokerRegistration v0-4): a broker registers with its cluster id, a
random incarnation id per process, its listeners, the feature ranges it supports
(``metadata.version`` required), rack and log directories. A new incarnation gets a new
broker epoch - the offset its RegisterBrokerRecord will have - and starts fenced; the
same incarnation registering again amends its registration and keeps its epoch. Refused
with Kafka's codes and messages: another cluster (INCONSISTENT_CLUSTER_ID), a second live
incarnation of the same id while the first one's session lasts
(DUPLICATE_BROKER_REGISTRATION), a ZooKeeper broker (BROKER_ID_NOT_REGISTERED), a
finalized feature level outside the broker's range (UNSUPPORTED_VERSION), missing,
reserved, duplicate or foreign log directories (INVALID_REGISTRATION).

**Sessions** (only on the active controller, soft state): each heartbeat renews a
broker's session; an unfenced broker silent for ``broker.session.timeout.ms`` is fenced.
A heartbeat moves a broker between FENCED, UNFENCED, CONTROLLED_SHUTDOWN and
SHUTDOWN_NOW as :meth:`BrokerHeartbeatManager.next_state` decides (Kafka's
``calculateNextBrokerState``); the partition changes that go with it are the
replication control's.

**Controllers** (ControllerRegistration, KIP-919): each controller registers its
listeners and supported features, written as a RegisterControllerRecord.

Not thread-safe: the controller's event loop.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkacore.controller.kraft.result import ControllerError
from kafkacore.controller.kraft.state import ControllerState
from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.metadata.image.cluster import (
    BrokerRegistration,
    ControllerRegistration,
    Endpoint,
    sorted_directories,
)
from kafkacore.metadata.image.topics import (
    LOST_DIRECTORY,
    MIGRATING_DIRECTORY,
    UNASSIGNED_DIRECTORY,
)
from kafkacore.metadata.records import MetadataRecord
from kafkacore.metadata.versions import METADATA_VERSION, MetadataVersion
from kafkacore.protocol.errors import ErrorCode

__all__ = [
    "BrokerControlState",
    "BrokerHeartbeatManager",
    "check_broker_epoch",
    "controller_registration_record",
    "register_broker",
]

log = logging.getLogger("kafkacore.controller")

_RESERVED_DIRECTORIES = frozenset({MIGRATING_DIRECTORY, UNASSIGNED_DIRECTORY, LOST_DIRECTORY})


class BrokerControlState(enum.Enum):
    """Kafka's ``BrokerControlState``: ``(fenced, in controlled shutdown, should shut down)``."""

    FENCED = (True, False, False)
    UNFENCED = (False, False, False)
    CONTROLLED_SHUTDOWN = (False, True, False)
    SHUTDOWN_NOW = (True, False, True)

    @property
    def fenced(self) -> bool:
        return self.value[0]

    @property
    def in_controlled_shutdown(self) -> bool:
        return self.value[1]

    @property
    def should_shut_down(self) -> bool:
        return self.value[2]


@dataclass(slots=True)
class _Session:
    last_contact_ms: int
    metadata_offset: int = -1
    controlled_shutdown_offset: int = -1


class BrokerHeartbeatManager:
    """Broker sessions on the active controller (Kafka's ``BrokerHeartbeatManager``).
    Whether a broker is fenced or shutting down comes from the state; the session keeps
    when it was last heard of, its metadata offset and, once in controlled shutdown, the
    offset its shutdown records must be replicated past."""

    def __init__(self, session_timeout_ms: int, clock: Callable[[], int]) -> None:
        self.session_timeout_ms = session_timeout_ms
        self.clock = clock
        self._sessions: dict[int, _Session] = {}

    def touch(self, broker_id: int, metadata_offset: int) -> None:
        session = self._sessions.get(broker_id)
        if session is None:
            session = self._sessions[broker_id] = _Session(self.clock())
        session.last_contact_ms = self.clock()
        session.metadata_offset = metadata_offset

    def begin(self, broker_id: int) -> None:
        """A broker (re)registered: a fresh session."""
        self._sessions[broker_id] = _Session(self.clock())

    def remove(self, broker_id: int) -> None:
        self._sessions.pop(broker_id, None)

    def has_valid_session(self, state: ControllerState, broker_id: int) -> bool:
        """Kafka's ``hasValidSession``: unfenced and heard of within the session timeout."""
        broker = state.broker(broker_id)
        session = self._sessions.get(broker_id)
        if broker is None or broker.fenced or session is None:
            return False
        return session.last_contact_ms + self.session_timeout_ms >= self.clock()

    def stale_brokers(self, state: ControllerState) -> list[int]:
        """Unfenced brokers whose session expired (Kafka fences them one at a time)."""
        stale = []
        for broker_id, broker in sorted(state.image.cluster.brokers.items()):
            if broker.fenced:
                continue
            session = self._sessions.get(broker_id)
            if session is None:  # unfenced before this controller became active
                self._sessions[broker_id] = _Session(self.clock())
                continue
            if session.last_contact_ms + self.session_timeout_ms < self.clock():
                stale.append(broker_id)
        return stale

    def set_controlled_shutdown_offset(self, broker_id: int, offset: int) -> None:
        session = self._sessions.get(broker_id)
        if session is not None and session.controlled_shutdown_offset < 0:
            session.controlled_shutdown_offset = offset

    def lowest_active_offset(self, state: ControllerState) -> int:
        """The lowest metadata offset any active broker reported (Kafka's
        ``lowestActiveOffset``): every broker has seen the log up to it."""
        offsets = [
            self._sessions[b].metadata_offset
            for b in state.image.cluster.brokers
            if state.is_active(b) and b in self._sessions
        ]
        return min(offsets) if offsets else 1 << 63

    @staticmethod
    def current_state(state: ControllerState, broker_id: int) -> BrokerControlState:
        broker = state.broker(broker_id)
        if broker is None:
            raise ControllerError(
                ErrorCode.BROKER_ID_NOT_REGISTERED, f"Broker {broker_id} is not registered."
            )
        if broker.fenced:
            return BrokerControlState.FENCED
        if broker.in_controlled_shutdown:
            return BrokerControlState.CONTROLLED_SHUTDOWN
        return BrokerControlState.UNFENCED

    def next_state(
        self,
        state: ControllerState,
        broker_id: int,
        request: Any,
        register_offset: int,
        has_leaderships: Callable[[], bool],
    ) -> tuple[BrokerControlState, BrokerControlState]:
        """``(current, next)`` for a heartbeat (Kafka's ``calculateNextBrokerState``)."""
        current = self.current_state(state, broker_id)
        s = BrokerControlState
        if current is s.FENCED:
            if request.want_shut_down:
                log.info(
                    "Fenced broker %d has requested and been granted an immediate shutdown.",
                    broker_id,
                )
                return current, s.SHUTDOWN_NOW
            if not request.want_fence and request.current_metadata_offset >= register_offset:
                log.info(
                    "The request from broker %d to unfence has been granted because it has "
                    "caught up with the offset of its register broker record %d.",
                    broker_id,
                    register_offset,
                )
                return current, s.UNFENCED
            return current, s.FENCED
        if current is s.UNFENCED:
            if request.want_fence:
                return current, s.SHUTDOWN_NOW if request.want_shut_down else s.FENCED
            if request.want_shut_down:
                if has_leaderships():
                    log.info(
                        "Unfenced broker %d has requested and been granted a controlled shutdown.",
                        broker_id,
                    )
                    return current, s.CONTROLLED_SHUTDOWN
                return current, s.SHUTDOWN_NOW
            return current, s.UNFENCED
        # CONTROLLED_SHUTDOWN
        if has_leaderships():
            return current, s.CONTROLLED_SHUTDOWN
        session = self._sessions.get(broker_id)
        shutdown_offset = -1 if session is None else session.controlled_shutdown_offset
        if shutdown_offset <= self.lowest_active_offset(state):
            log.info(
                "The request from broker %d to shut down has been granted since the lowest "
                "active offset is now greater than the broker's controlled shutdown offset %d.",
                broker_id,
                shutdown_offset,
            )
            return current, s.SHUTDOWN_NOW
        return current, s.CONTROLLED_SHUTDOWN


def check_broker_epoch(state: ControllerState, broker_id: int, broker_epoch: int) -> None:
    """Kafka's ``checkBrokerEpoch``: STALE_BROKER_EPOCH for an unknown broker or another
    epoch."""
    broker = state.broker(broker_id)
    if broker is None:
        raise ControllerError(
            ErrorCode.STALE_BROKER_EPOCH, f"No broker registration found for broker id {broker_id}"
        )
    if broker.epoch != broker_epoch:
        raise ControllerError(
            ErrorCode.STALE_BROKER_EPOCH,
            f"Expected broker epoch {broker.epoch}, but got broker epoch {broker_epoch}",
        )


def _feature_range(broker_id: int, finalized: dict[str, int], feature: Any) -> tuple[int, int]:
    """Kafka's ``processRegistrationFeature``: the broker must support the finalized level
    (0 when the feature is not finalized)."""
    level = finalized.get(feature.name, 0)
    low, high = feature.min_supported_version, feature.max_supported_version
    if not low <= level <= high:
        raise ControllerError(
            ErrorCode.UNSUPPORTED_VERSION,
            f"Unable to register because the broker does not support finalized version "
            f"{level} of {feature.name}. The broker wants a version between {low} and "
            f"{high}, inclusive.",
        )
    return low, high


def register_broker(
    state: ControllerState,
    request: Any,
    *,
    cluster_id: str,
    new_epoch: int,
    heartbeats: BrokerHeartbeatManager,
) -> tuple[BrokerRegistration, bool, bool]:
    """Validate a BrokerRegistration and decide the registration: ``(registration,
    new incarnation, clean shutdown of the previous one)``. Raises
    :class:`ControllerError` with Kafka's refusal."""
    if request.cluster_id != cluster_id:
        raise ControllerError(
            ErrorCode.INCONSISTENT_CLUSTER_ID,
            f"Expected cluster ID {cluster_id}, but got cluster ID {request.cluster_id}",
        )
    broker_id = request.broker_id
    existing = state.broker(broker_id)
    if (
        existing is not None
        and heartbeats.has_valid_session(state, broker_id)
        and request.incarnation_id != existing.incarnation_id
    ):
        raise ControllerError(
            ErrorCode.DUPLICATE_BROKER_REGISTRATION,
            "Another broker is registered with that broker id. If the broker was recently "
            "restarted this should self-resolve once the heartbeat manager expires the "
            "broker's session.",
        )
    if request.is_migrating_zk_broker:
        raise ControllerError(
            ErrorCode.BROKER_ID_NOT_REGISTERED,
            "Controller does not support registering ZK brokers.",
        )
    mv = state.image.features.metadata_version_or_raise()
    directories = list(request.log_dirs or [])
    if mv.is_directory_assignment_supported:
        if not directories:
            raise ControllerError(
                ErrorCode.INVALID_REGISTRATION, "No directories specified in request"
            )
        if any(d in _RESERVED_DIRECTORIES for d in directories):
            raise ControllerError(
                ErrorCode.INVALID_REGISTRATION, "Reserved directory ID in request"
            )
        if len(set(directories)) != len(directories):
            raise ControllerError(
                ErrorCode.INVALID_REGISTRATION, "Duplicate directory ID in request"
            )
        for other in state.image.cluster.brokers.values():
            if other.id == broker_id:
                continue
            for directory in directories:
                if directory in other.directories:
                    raise ControllerError(
                        ErrorCode.INVALID_REGISTRATION,
                        f"Broker {other.id} is already registered with directory "
                        f"{uuid_to_base64(directory)}",
                    )
    finalized = state.image.features.all_levels()
    features: dict[str, tuple[int, int]] = {}
    for feature in request.features:
        features[feature.name] = _feature_range(broker_id, finalized, feature)
    if METADATA_VERSION not in features:
        raise ControllerError(
            ErrorCode.INVALID_REGISTRATION, "Request features do not contain 'metadata.version'"
        )
    for name, level in finalized.items():  # every finalized feature must be supported
        if level != 0 and name not in features:
            raise ControllerError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"Unable to register because the broker does not support finalized version "
                f"{level} of {name}. The broker wants a version between 0 and 0, inclusive.",
            )
    if existing is None or request.incarnation_id != existing.incarnation_id:
        new_incarnation, epoch, fenced, shutting_down = True, new_epoch, True, False
    else:  # the same process registering again: its registration is amended
        new_incarnation, epoch = False, existing.epoch
        fenced, shutting_down = existing.fenced, existing.in_controlled_shutdown
    clean = existing is None or request.previous_broker_epoch == existing.epoch
    registration = BrokerRegistration(
        id=broker_id,
        epoch=epoch,
        incarnation_id=request.incarnation_id,
        listeners=tuple(
            Endpoint(listener.name, listener.host, listener.port, listener.security_protocol)
            for listener in request.listeners
        ),
        supported_features=features,
        rack=request.rack,
        fenced=fenced,
        in_controlled_shutdown=shutting_down,
        directories=sorted_directories(directories) if mv.is_directory_assignment_supported else (),
    )
    if new_incarnation:
        heartbeats.remove(broker_id)
    heartbeats.begin(broker_id)
    return registration, new_incarnation, clean


def controller_registration_record(request: Any, mv: MetadataVersion) -> MetadataRecord:
    """The RegisterControllerRecord of a ControllerRegistration (KIP-919); refused below
    3.7-IV0 with Kafka's message."""
    if not mv.is_controller_registration_supported:
        raise ControllerError(
            ErrorCode.UNSUPPORTED_VERSION,
            "The current MetadataVersion is too old to support controller registrations.",
        )
    registration = ControllerRegistration(
        id=request.controller_id,
        incarnation_id=request.incarnation_id,
        listeners=tuple(
            Endpoint(listener.name, listener.host, listener.port, listener.security_protocol)
            for listener in request.listeners
        ),
        supported_features={
            f.name: (f.min_supported_version, f.max_supported_version) for f in request.features
        },
        zk_migration_ready=request.zk_migration_ready,
    )
    return registration.to_record(mv)
