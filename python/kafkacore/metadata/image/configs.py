"""Dynamic configs and client quotas in the image (Kafka's ``ConfigurationsImage``,
``ConfigurationsDelta``, ``ClientQuotasImage`` and ``ClientQuotasDelta``).

Configs are kept per resource (type and name: a topic, a broker id or ``""`` for the
cluster default, a client metrics subscription, a group), key to string value; a
ConfigRecord with a null value deletes its key, a RemoveTopicRecord deletes the topic's
resource. Client quotas are kept per entity (its ``(type, name)`` parts, name ``None``
for a default entity), key to float value.

Immutable values; a delta is built and applied by one thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from kafkacore.metadata.image._changes import apply_changes, remove_unmentioned
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType

__all__ = [
    "ClientQuotaEntity",
    "ClientQuotasDelta",
    "ClientQuotasImage",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigurationsDelta",
    "ConfigurationsImage",
    "config_record",
    "quota_entity",
]

_CONFIG: Any = RECORDS[MetadataRecordType.CONFIG_RECORD].cls
_QUOTA: Any = RECORDS[MetadataRecordType.CLIENT_QUOTA_RECORD].cls


class ConfigResourceType(IntEnum):
    """Kafka's ``ConfigResource.Type`` ids."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


@dataclass(frozen=True, slots=True, order=True)
class ConfigResource:
    type: int
    name: str


def config_record(resource: ConfigResource, name: str, value: str | None) -> MetadataRecord:
    """A ConfigRecord (version 0): ``value`` None deletes the key."""
    return MetadataRecord(
        MetadataRecordType.CONFIG_RECORD,
        0,
        _CONFIG(resource_type=resource.type, resource_name=resource.name, name=name, value=value),
    )


@dataclass(frozen=True, slots=True)
class ConfigurationsImage:
    """Every resource's dynamic configs."""

    data: Mapping[ConfigResource, Mapping[str, str]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.data

    def configs(self, resource: ConfigResource) -> Mapping[str, str]:
        return self.data.get(resource, {})

    def records(self) -> list[MetadataRecord]:
        return [
            config_record(resource, name, value)
            for resource, configs in sorted(self.data.items())
            for name, value in configs.items()
        ]


class ConfigurationsDelta:
    """Per changed resource, per key its new value or ``None`` (deleted)."""

    def __init__(self, image: ConfigurationsImage) -> None:
        self.image = image
        self.changes: dict[ConfigResource, dict[str, str | None]] = {}

    def _changes(self, resource: ConfigResource) -> dict[str, str | None]:
        return self.changes.setdefault(resource, {})

    def finish_snapshot(self) -> None:
        for resource, configs in self.image.data.items():
            remove_unmentioned(configs, self._changes(resource))

    def replay(self, record: Any) -> None:
        resource = ConfigResource(record.resource_type, record.resource_name)
        self._changes(resource)[record.name] = record.value

    def replay_remove_topic(self, topic: str) -> None:
        """The topic's configs go - those of the image: as Kafka's, configs set in this
        same delta stay."""
        resource = ConfigResource(ConfigResourceType.TOPIC, topic)
        if resource in self.image.data:
            self.changes[resource] = dict.fromkeys(self.image.data[resource])

    def apply(self) -> ConfigurationsImage:
        data = dict(self.image.data)
        for resource, changes in self.changes.items():
            configs = apply_changes(self.image.data.get(resource, {}), changes)
            if configs:
                data[resource] = configs
            else:
                data.pop(resource, None)
        return ConfigurationsImage(data)


ClientQuotaEntity = tuple[tuple[str, str | None], ...]
"""A quota entity: its ``(entity type, name)`` parts sorted by type (``user``,
``client-id``, ``ip``); a ``None`` name is that type's default entity."""


def quota_entity(parts: Iterable[tuple[str, str | None]]) -> ClientQuotaEntity:
    return tuple(sorted(parts))


def quota_record(entity: ClientQuotaEntity, key: str, value: float | None) -> MetadataRecord:
    """A ClientQuotaRecord (version 0): ``value`` None removes the key."""
    return MetadataRecord(
        MetadataRecordType.CLIENT_QUOTA_RECORD,
        0,
        _QUOTA(
            entity=[_QUOTA.EntityData(entity_type=t, entity_name=n) for t, n in entity],
            key=key,
            value=0.0 if value is None else value,
            remove=value is None,
        ),
    )


@dataclass(frozen=True, slots=True)
class ClientQuotasImage:
    """Every entity's quotas."""

    entities: Mapping[ClientQuotaEntity, Mapping[str, float]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.entities

    def records(self) -> list[MetadataRecord]:
        return [
            quota_record(entity, key, value)
            for entity, quotas in sorted(self.entities.items(), key=lambda e: repr(e[0]))
            for key, value in quotas.items()
        ]


class ClientQuotasDelta:
    """Per changed entity, per key its new value or ``None`` (removed)."""

    def __init__(self, image: ClientQuotasImage) -> None:
        self.image = image
        self.changes: dict[ClientQuotaEntity, dict[str, float | None]] = {}

    def finish_snapshot(self) -> None:
        for entity, quotas in self.image.entities.items():
            remove_unmentioned(quotas, self.changes.setdefault(entity, {}))

    def replay(self, record: Any) -> None:
        entity = quota_entity((e.entity_type, e.entity_name) for e in record.entity)
        self.changes.setdefault(entity, {})[record.key] = None if record.remove else record.value

    def apply(self) -> ClientQuotasImage:
        entities = dict(self.image.entities)
        for entity, changes in self.changes.items():
            quotas = apply_changes(self.image.entities.get(entity, {}), changes)
            if quotas:
                entities[entity] = quotas
            else:
                entities.pop(entity, None)
        return ClientQuotasImage(entities)
