"""Dynamic configs and client quotas on the controller (Kafka 4.3's
``ConfigurationControlManager`` with its ``ControllerConfigurationValidator``, and
``ClientQuotaControlManager``).

* AlterConfigs (a resource's dynamic configs replaced) and IncrementalAlterConfigs
  (SET, DELETE, APPEND, SUBTRACT): topic configs validated with the topic config
  definitions (``LogConfig``), broker configs (a broker id, or ``""`` for the cluster
  default) with the dynamic broker config rules; ConfigRecords with a null value delete.
  With ELR on, changing ``min.insync.replicas`` clears the ELR it guarded (a ClearElrRecord
  for the topic, or for every topic at the cluster level), and a broker-level
  ``min.insync.replicas`` or the removal of the cluster-level one is refused.
* AlterClientQuotas: entities of ``user``, ``client-id`` (together or alone) or ``ip``,
  quota keys with their types and bounds, as ClientQuotaRecords.

Not thread-safe: the controller's event loop.
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any

from kafkacore.config import BrokerConfig, ConfigError, LogConfig
from kafkacore.config.broker_defs import BROKER_CONFIG_DEF
from kafkacore.config.defs import Type
from kafkacore.config.topic import TOPIC_CONFIG_DEF
from kafkacore.controller.kraft.result import ApiError, ControllerError, ControllerResult
from kafkacore.controller.kraft.state import ControllerState
from kafkacore.metadata.image.configs import (
    ConfigResource,
    ConfigResourceType,
    config_record,
    quota_entity,
    quota_record,
)
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.protocol.declared import DECLARED
from kafkacore.protocol.errors import ErrorCode
from kafkacore.zk.admin import validate_topic_name
from kafkacore.zk.errors import InvalidTopicError

__all__ = ["ConfigControl", "alter_client_quotas"]

_CLEAR_ELR: Any = RECORDS[MetadataRecordType.CLEAR_ELR_RECORD].cls
_ALTER_QUOTAS: Any = DECLARED[49].response.cls
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {SET: "set", DELETE: "delete", APPEND: "append", SUBTRACT: "subtract"}
MIN_ISR = "min.insync.replicas"
MAX_CONFIG_VALUE_BYTES = 32767


def _clear_elr(topic: str) -> MetadataRecord:
    return MetadataRecord(MetadataRecordType.CLEAR_ELR_RECORD, 0, _CLEAR_ELR(topic_name=topic))


class ConfigControl:
    """See the module docstring; ``config`` is the controller's static config (the
    defaults topic and broker configs are validated against)."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config

    def _check_resource(self, state: ControllerState, resource: ConfigResource) -> None:
        if resource.type == ConfigResourceType.TOPIC:
            try:
                validate_topic_name(resource.name)
            except InvalidTopicError as exc:
                raise ControllerError(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc)) from None
            if resource.name not in state.image.topics.by_name:
                raise ControllerError(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    "This server does not host this topic-partition.",
                )
        elif resource.type == ConfigResourceType.BROKER:
            if resource.name and not resource.name.lstrip("-").isdigit():
                raise ControllerError(
                    ErrorCode.INVALID_REQUEST, "Invalid broker name " + resource.name
                )
        elif resource.type not in (ConfigResourceType.CLIENT_METRICS, ConfigResourceType.GROUP):
            raise ControllerError(
                ErrorCode.INVALID_REQUEST, f"Unsupported config resource type {resource.type}"
            )

    def _validate(
        self,
        resource: ConfigResource,
        configs: dict[str, str],
        elr_enabled: bool,
        old: dict[str, str],
    ) -> None:
        for name, value in configs.items():
            if len(value.encode("utf-8")) > MAX_CONFIG_VALUE_BYTES:
                raise ControllerError(
                    ErrorCode.INVALID_CONFIG,
                    "The configuration value cannot be added because it exceeds the maximum "
                    "value size of 32767 bytes.",
                )
            del name
        if resource.type == ConfigResourceType.TOPIC:
            try:
                LogConfig(configs, self.config)
            except ConfigError as exc:
                raise ControllerError(ErrorCode.INVALID_CONFIG, str(exc)) from None
        elif resource.type == ConfigResourceType.BROKER:
            if elr_enabled and resource.name and (configs.get(MIN_ISR) != old.get(MIN_ISR)):
                raise ControllerError(
                    ErrorCode.INVALID_CONFIG,
                    "Broker-level min.insync.replicas cannot be altered while ELR is enabled.",
                )
            if elr_enabled and not resource.name and MIN_ISR in old and MIN_ISR not in configs:
                raise ControllerError(
                    ErrorCode.INVALID_CONFIG,
                    "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
                )
            try:
                if resource.name:
                    self.config.with_dynamic(configs, {}, validate=True)
                else:
                    self.config.with_dynamic({}, configs, validate=True)
            except ConfigError as exc:
                raise ControllerError(ErrorCode.INVALID_CONFIG, str(exc)) from None

    def _records(
        self, state: ControllerState, resource: ConfigResource, new: dict[str, str]
    ) -> list[MetadataRecord]:
        old = dict(state.image.configs.configs(resource))
        elr = state.image.features.is_elr_enabled
        self._validate(resource, new, elr, old)
        records = [config_record(resource, k, v) for k, v in new.items() if old.get(k) != v]
        records += [config_record(resource, k, None) for k in old if k not in new]
        if elr and old.get(MIN_ISR) != new.get(MIN_ISR):
            if resource.type == ConfigResourceType.TOPIC:
                records.append(_clear_elr(resource.name))
            elif resource.type == ConfigResourceType.BROKER and not resource.name:
                records.append(_clear_elr(""))
        return records

    def alter_configs(
        self, state: ControllerState, request: Any, incremental: bool
    ) -> ControllerResult[list[tuple[ConfigResource, ApiError]]]:
        """AlterConfigs (``incremental=False``) or IncrementalAlterConfigs: per resource
        its error; the records of every resource that passed (each all or nothing)."""
        results: list[tuple[ConfigResource, ApiError]] = []
        records: list[MetadataRecord] = []
        for item in request.resources:
            resource = ConfigResource(item.resource_type, item.resource_name)
            try:
                self._check_resource(state, resource)
                current = dict(state.image.configs.configs(resource))
                if incremental:
                    new = self._apply_ops(state, resource, item.configs, current)
                else:
                    nulls = [c.name for c in item.configs if c.value is None]
                    if nulls and resource.type == ConfigResourceType.TOPIC:
                        raise ControllerError(
                            ErrorCode.INVALID_REQUEST,
                            f"Null value not supported for : {','.join(nulls)}",
                        )
                    new = {c.name: c.value for c in item.configs if c.value is not None}
                records.extend(self._records(state, resource, new))
                results.append((resource, ApiError()))
            except ControllerError as exc:
                results.append((resource, exc.error))
        return ControllerResult([] if request.validate_only else records, results, atomic=False)

    def _apply_ops(
        self, state: ControllerState, resource: ConfigResource, ops: Any, current: dict[str, str]
    ) -> dict[str, str]:
        result = dict(current)
        definitions = (
            TOPIC_CONFIG_DEF if resource.type == ConfigResourceType.TOPIC else BROKER_CONFIG_DEF
        )
        for op in ops:
            key, value, operation = op.name, op.value, op.config_operation
            if operation == SET:
                if value is None:
                    result.pop(key, None)
                else:
                    result[key] = value
            elif operation == DELETE:
                result.pop(key, None)
            elif operation in (APPEND, SUBTRACT):
                definition = definitions.get(key)
                if definition is None or definition.type is not Type.LIST:
                    raise ControllerError(
                        ErrorCode.INVALID_CONFIG,
                        f"Can't {_OP_NAMES[operation]} to key {key} because its type is not LIST.",
                    )
                if key in result:
                    items = [v.strip() for v in result[key].split(",") if v.strip()]
                else:
                    items = self._default_list(definition, key)
                given = [v.strip() for v in (value or "").split(",") if v.strip()]
                if operation == APPEND:
                    items += [v for v in given if v not in items]
                else:
                    items = [v for v in items if v not in given]
                result[key] = ",".join(items)
            else:
                raise ControllerError(
                    ErrorCode.INVALID_REQUEST, f"Unknown operation type {operation}"
                )
        return result

    def _default_list(self, definition: Any, key: str) -> list[str]:
        default = definition.default
        if isinstance(default, list):
            return [str(v) for v in default]
        if default in (None, ""):
            return []
        return [v.strip() for v in str(default).split(",") if v.strip()]


# -- client quotas ---------------------------------------------------------------------------

USER, CLIENT_ID, IP = "user", "client-id", "ip"
_CLIENT_KEYS = {
    "producer_byte_rate": "LONG",
    "consumer_byte_rate": "LONG",
    "request_percentage": "DOUBLE",
    "controller_mutation_rate": "DOUBLE",
}
_IP_KEYS = {"connection_creation_rate": "INT"}
_LIMITS = {"SHORT": (1 << 15) - 1, "INT": (1 << 31) - 1, "LONG": (1 << 63) - 1}


def _validate_entity(entity: list[tuple[str, str | None]]) -> dict[str, str]:
    """Kafka's ``validateEntity``: the keys (with types) the entity takes."""
    if not entity:
        raise ControllerError(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
    seen: dict[str, str | None] = {}
    for entity_type, name in entity:
        if entity_type in seen:
            raise ControllerError(
                ErrorCode.INVALID_REQUEST,
                f"Invalid client quota entity, duplicate entity entry {entity_type}",
            )
        if entity_type not in (USER, CLIENT_ID, IP):
            raise ControllerError(
                ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {entity_type}"
            )
        if name is not None and name == "":
            raise ControllerError(ErrorCode.INVALID_REQUEST, f"Empty {entity_type} not supported")
        seen[entity_type] = name
    if IP in seen:
        if len(seen) > 1:
            raise ControllerError(
                ErrorCode.INVALID_REQUEST,
                "Invalid quota entity combination, IP entity shouldnot be combined with User "
                "or ClientId",
            )
        ip = seen[IP]
        if ip is not None:
            try:
                ipaddress.ip_address(ip)
            except ValueError:
                raise ControllerError(
                    ErrorCode.INVALID_REQUEST, f"{ip} is not a valid IP or resolvable host."
                ) from None
        return _IP_KEYS
    return _CLIENT_KEYS


def _validate_value(key: str, value: float, keys: dict[str, str]) -> None:
    kind = keys.get(key)
    if kind is None:
        raise ControllerError(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}")
    if value <= 0:
        raise ControllerError(ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0")
    if kind in _LIMITS:
        article = "an" if kind == "INT" else "a"
        if value > _LIMITS[kind]:
            raise ControllerError(
                ErrorCode.INVALID_REQUEST,
                f"Proposed value for {key} is too large for {article} {kind}.",
            )
        if math.floor(value) != value:
            raise ControllerError(ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value.")


def alter_client_quotas(state: ControllerState, request: Any) -> ControllerResult[Any]:
    """AlterClientQuotas: per entry its error; the records of the valid entries."""
    records: list[MetadataRecord] = []
    entries = []
    for entry in request.entries:
        parts = [(e.entity_type, e.entity_name) for e in entry.entity]
        error = ApiError()
        try:
            keys = _validate_entity(parts)
            entity = quota_entity(parts)
            changed: list[MetadataRecord] = []
            seen: set[str] = set()
            for op in entry.ops:
                if op.key in seen:
                    continue  # Kafka: "Duplicate quota key ... not updating quota"
                seen.add(op.key)
                if op.remove:
                    if op.key not in keys:
                        raise ControllerError(
                            ErrorCode.INVALID_REQUEST, f"Invalid configuration key {op.key}"
                        )
                    changed.append(quota_record(entity, op.key, None))
                else:
                    _validate_value(op.key, op.value, keys)
                    changed.append(quota_record(entity, op.key, op.value))
            records.extend(changed)
        except ControllerError as exc:
            error = exc.error
        entries.append(
            _ALTER_QUOTAS.EntryData(
                error_code=error.code,
                error_message=error.message,
                entity=[_ALTER_QUOTAS.EntityData(entity_type=t, entity_name=n) for t, n in parts],
            )
        )
    response = _ALTER_QUOTAS(throttle_time_ms=0, entries=entries)
    return ControllerResult([] if request.validate_only else records, response, atomic=False)
