"""The cluster in the image: registered brokers (with their epochs, incarnations,
listeners, supported features, fencing, controlled shutdown and log directories) and
registered controllers (KIP-919). Kafka's ``BrokerRegistration``,
``ControllerRegistration``, ``ClusterImage`` and ``ClusterDelta``.

A broker's epoch is the offset of its RegisterBrokerRecord; FenceBroker, UnfenceBroker
and BrokerRegistrationChange records name the epoch they apply to, and a record naming
another epoch (or an unknown broker) cannot be replayed: Kafka's
``IllegalStateException``, :class:`~kafkacore.metadata.image.MetadataReplayError` here.

Immutable values; a delta is built and applied by one thread.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kafkacore._java import kafka_uuid_key
from kafkacore.metadata.image._changes import apply_changes, remove_unmentioned
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.metadata.versions import MetadataVersion

__all__ = [
    "BrokerRegistration",
    "ClusterDelta",
    "ClusterImage",
    "ControllerRegistration",
    "Endpoint",
    "MetadataReplayError",
]

_REGISTER_BROKER: Any = RECORDS[MetadataRecordType.REGISTER_BROKER_RECORD].cls
_REGISTER_CONTROLLER: Any = RECORDS[MetadataRecordType.REGISTER_CONTROLLER_RECORD].cls

# BrokerRegistrationChangeRecord's Fenced and InControlledShutdown values
# (BrokerRegistrationFencingChange, BrokerRegistrationInControlledShutdownChange)
FENCE, NO_FENCING_CHANGE, UNFENCE = 1, 0, -1
NO_SHUTDOWN_CHANGE, IN_CONTROLLED_SHUTDOWN = 0, 1


class MetadataReplayError(RuntimeError):
    """A record that cannot be applied to the image it meets (Kafka's
    ``IllegalStateException``/``RuntimeException`` from a delta's replay)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A listener of a registered node (Kafka's ``Endpoint``)."""

    name: str
    host: str
    port: int
    security_protocol: int  # SecurityProtocol id: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL


FeatureRanges = Mapping[str, tuple[int, int]]
"""Supported features: name -> ``(min, max)`` level (Kafka's ``VersionRange``)."""


def sorted_directories(directories: Sequence[uuid.UUID]) -> tuple[uuid.UUID, ...]:
    """Log directory ids in Kafka's ``Uuid.compareTo`` order (as registrations keep them)."""
    return tuple(sorted(directories, key=kafka_uuid_key))


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """A registered broker (Kafka's ``BrokerRegistration``). ``epoch`` is the offset of
    its RegisterBrokerRecord; ``directories`` its online log directories, sorted."""

    id: int
    epoch: int
    incarnation_id: uuid.UUID
    listeners: tuple[Endpoint, ...]
    supported_features: FeatureRanges
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    is_migrating_zk_broker: bool = False
    directories: tuple[uuid.UUID, ...] = ()
    cordoned_directories: tuple[uuid.UUID, ...] = ()

    def listener(self, name: str) -> Endpoint | None:
        for endpoint in self.listeners:
            if endpoint.name == name:
                return endpoint
        return None

    def has_online_dir(self, directory: uuid.UUID) -> bool:
        return directory in self.directories

    @classmethod
    def from_record(cls, record: Any) -> BrokerRegistration:
        return cls(
            id=record.broker_id,
            epoch=record.broker_epoch,
            incarnation_id=record.incarnation_id,
            listeners=tuple(
                Endpoint(e.name, e.host, e.port, e.security_protocol) for e in record.end_points
            ),
            supported_features={
                f.name: (f.min_supported_version, f.max_supported_version) for f in record.features
            },
            rack=record.rack,
            fenced=record.fenced,
            in_controlled_shutdown=record.in_controlled_shutdown,
            is_migrating_zk_broker=record.is_migrating_zk_broker,
            directories=sorted_directories(record.log_dirs or ()),
            cordoned_directories=sorted_directories(record.cordoned_log_dirs or ()),
        )

    def to_record(self, mv: MetadataVersion) -> MetadataRecord:
        """Kafka's ``toRecord``: the RegisterBrokerRecord at ``mv``'s version."""
        cls = _REGISTER_BROKER
        value = cls(
            broker_id=self.id,
            is_migrating_zk_broker=self.is_migrating_zk_broker,
            incarnation_id=self.incarnation_id,
            broker_epoch=self.epoch,
            end_points=[
                cls.BrokerEndpoint(
                    name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol
                )
                for e in self.listeners
            ],
            features=[
                cls.BrokerFeature(name=name, min_supported_version=lo, max_supported_version=hi)
                for name, (lo, hi) in self.supported_features.items()
            ],
            rack=self.rack,
            fenced=self.fenced,
            in_controlled_shutdown=self.in_controlled_shutdown,
            log_dirs=list(self.directories),
            cordoned_log_dirs=(
                list(self.cordoned_directories)
                if self.cordoned_directories and mv.is_cordoned_log_dirs_supported
                else None
            ),
        )
        return MetadataRecord(
            MetadataRecordType.REGISTER_BROKER_RECORD, mv.register_broker_record_version, value
        )

    def with_changes(
        self,
        fenced: bool | None = None,
        in_controlled_shutdown: bool | None = None,
        directories: Sequence[uuid.UUID] | None = None,
        cordoned_directories: Sequence[uuid.UUID] | None = None,
    ) -> BrokerRegistration:
        """Kafka's ``cloneWith``: ``None`` keeps a value."""
        return replace(
            self,
            fenced=self.fenced if fenced is None else fenced,
            in_controlled_shutdown=(
                self.in_controlled_shutdown
                if in_controlled_shutdown is None
                else in_controlled_shutdown
            ),
            directories=(
                self.directories if directories is None else sorted_directories(directories)
            ),
            cordoned_directories=(
                self.cordoned_directories
                if cordoned_directories is None
                else sorted_directories(cordoned_directories)
            ),
        )


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    """A registered controller (KIP-919, Kafka's ``ControllerRegistration``)."""

    id: int
    incarnation_id: uuid.UUID
    listeners: tuple[Endpoint, ...]
    supported_features: FeatureRanges
    zk_migration_ready: bool = False

    @classmethod
    def from_record(cls, record: Any) -> ControllerRegistration:
        return cls(
            id=record.controller_id,
            incarnation_id=record.incarnation_id,
            listeners=tuple(
                Endpoint(e.name, e.host, e.port, e.security_protocol) for e in record.end_points
            ),
            supported_features={
                f.name: (f.min_supported_version, f.max_supported_version) for f in record.features
            },
            zk_migration_ready=record.zk_migration_ready,
        )

    def to_record(self, mv: MetadataVersion) -> MetadataRecord:
        cls = _REGISTER_CONTROLLER
        value = cls(
            controller_id=self.id,
            incarnation_id=self.incarnation_id,
            zk_migration_ready=self.zk_migration_ready,
            end_points=[
                cls.ControllerEndpoint(
                    name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol
                )
                for e in self.listeners
            ],
            features=[
                cls.ControllerFeature(name=name, min_supported_version=lo, max_supported_version=hi)
                for name, (lo, hi) in self.supported_features.items()
            ],
        )
        return MetadataRecord(
            MetadataRecordType.REGISTER_CONTROLLER_RECORD,
            mv.register_controller_record_version,
            value,
        )


@dataclass(frozen=True, slots=True)
class ClusterImage:
    """Brokers and controllers by node id (Kafka's ``ClusterImage``)."""

    brokers: Mapping[int, BrokerRegistration] = field(default_factory=dict)
    controllers: Mapping[int, ControllerRegistration] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.brokers

    def broker(self, node_id: int) -> BrokerRegistration | None:
        return self.brokers.get(node_id)

    def broker_epoch(self, node_id: int) -> int:
        """The broker's epoch, -1 if it is not registered."""
        broker = self.brokers.get(node_id)
        return -1 if broker is None else broker.epoch

    def unfenced_brokers(self) -> list[BrokerRegistration]:
        """Registered, unfenced brokers, by id (the live brokers clients see)."""
        return [b for _, b in sorted(self.brokers.items()) if not b.fenced]

    def records(self, mv: MetadataVersion) -> list[MetadataRecord]:
        """``write``: every registration (controllers only where ``mv`` supports them)."""
        out = [broker.to_record(mv) for _, broker in sorted(self.brokers.items())]
        if self.controllers and mv.is_controller_registration_supported:
            out.extend(c.to_record(mv) for _, c in sorted(self.controllers.items()))
        return out


class ClusterDelta:
    """Changes to the cluster (Kafka's ``ClusterDelta``): per node its new registration,
    or ``None`` once unregistered."""

    def __init__(self, image: ClusterImage) -> None:
        self.image = image
        self.changed_brokers: dict[int, BrokerRegistration | None] = {}
        self.changed_controllers: dict[int, ControllerRegistration | None] = {}

    def broker(self, node_id: int) -> BrokerRegistration | None:
        """The broker as the delta now has it."""
        if node_id in self.changed_brokers:
            return self.changed_brokers[node_id]
        return self.image.broker(node_id)

    def finish_snapshot(self) -> None:
        remove_unmentioned(self.image.brokers, self.changed_brokers)
        remove_unmentioned(self.image.controllers, self.changed_controllers)

    def _broker_at_epoch(self, node_id: int, epoch: int, action: str) -> BrokerRegistration:
        broker = self.broker(node_id)
        if broker is None:
            raise MetadataReplayError(
                f"Tried to {action} broker {node_id}, but that broker was not registered."
            )
        if broker.epoch != epoch:
            raise MetadataReplayError(
                f"Tried to {action} broker {node_id}, but the given epoch, {epoch}, did not "
                f"match the current broker epoch, {broker.epoch}"
            )
        return broker

    def replay_register_broker(self, record: Any) -> None:
        broker = BrokerRegistration.from_record(record)
        self.changed_brokers[broker.id] = broker

    def replay_unregister_broker(self, record: Any) -> None:
        self.changed_brokers[record.broker_id] = None

    def replay_register_controller(self, record: Any) -> None:
        controller = ControllerRegistration.from_record(record)
        self.changed_controllers[controller.id] = controller

    def replay_fence_broker(self, record: Any) -> None:
        broker = self._broker_at_epoch(record.id, record.epoch, "fence")
        self.changed_brokers[record.id] = broker.with_changes(fenced=True)

    def replay_unfence_broker(self, record: Any) -> None:
        broker = self._broker_at_epoch(record.id, record.epoch, "unfence")
        self.changed_brokers[record.id] = broker.with_changes(fenced=False)

    def replay_broker_registration_change(self, record: Any) -> None:
        broker = self._broker_at_epoch(record.broker_id, record.broker_epoch, "change")
        fenced = {FENCE: True, NO_FENCING_CHANGE: None, UNFENCE: False}
        if record.fenced not in fenced:
            raise MetadataReplayError(
                f"Unable to replay {record}: unknown value for fenced field: {record.fenced}"
            )
        if record.in_controlled_shutdown not in (NO_SHUTDOWN_CHANGE, IN_CONTROLLED_SHUTDOWN):
            raise MetadataReplayError(
                f"Unable to replay {record}: unknown value for inControlledShutdown field: "
                f"{record.in_controlled_shutdown}"
            )
        changed = broker.with_changes(
            fenced=fenced[record.fenced],
            in_controlled_shutdown=(
                True if record.in_controlled_shutdown == IN_CONTROLLED_SHUTDOWN else None
            ),
            directories=record.log_dirs or None,
            cordoned_directories=record.cordoned_log_dirs,
        )
        if changed != broker:
            self.changed_brokers[record.broker_id] = changed

    def apply(self) -> ClusterImage:
        return ClusterImage(
            apply_changes(self.image.brokers, self.changed_brokers),
            apply_changes(self.image.controllers, self.changed_controllers),
        )
