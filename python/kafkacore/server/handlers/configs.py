"""DescribeConfigs v1-4, AlterConfigs v0-2 and IncrementalAlterConfigs v0-1 (Kafka's
``ConfigHelper``, ``ConfigAdminManager`` and the controller's
``ConfigurationControlManager``, on one node).

Resources:

* TOPIC (2): every topic config with its value, source and synonyms
  (:meth:`LogConfig.describe`); overrides are stored in the metadata store and applied
  live to the topic's logs. Unknown topic: UNKNOWN_TOPIC_OR_PARTITION; illegal name:
  INVALID_TOPIC_EXCEPTION; a bad value: INVALID_CONFIG with :class:`ConfigError`'s message.
* BROKER (4): name = this node's id (per-broker dynamic configs) or ``""`` (cluster
  default). Only dynamic configs can be altered; every validation failure is
  INVALID_REQUEST, as Kafka's ``validateBrokerConfigChange`` answers (KAFKA-13609). New
  values apply live (:meth:`ReplicaManager.reconfigure`).
* BROKER_LOGGER (8): Python logger levels stand in for log4j's.
* GROUP (32): a group's dynamic configs (``consumer.*``, ``share.*``, ``streams.*``, and
  kafkacore's ``share.key.ordering``), validated as Kafka's ``GroupConfig`` validates them
  (:mod:`kafkacore.config.group`); IncrementalAlterConfigs and DescribeConfigs.
* anything else: INVALID_REQUEST ``Unsupported resource type``.

``validate_only`` checks everything and changes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping

from kafkacore.config import (
    BROKER_CONFIG_DEF,
    TOPIC_CONFIG_DEF,
    BrokerConfig,
    ConfigEntry,
    ConfigError,
    ConfigSource,
    LogConfig,
    Type,
)
from kafkacore.config.describe import loggable_broker_configs
from kafkacore.config.group import describe_group_configs, validate_group_configs
from kafkacore.metadata import MetadataStore
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.errors import message as default_message
from kafkacore.protocol.messages.alter_configs import AlterConfigsRequest, AlterConfigsResponse
from kafkacore.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)
from kafkacore.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.replica_manager import topic_name_error
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "DEFAULT_ENTITY",
    "handle_alter_configs",
    "handle_describe_configs",
    "handle_incremental_alter_configs",
    "with_stored_dynamic_configs",
]

logger = logging.getLogger("kafkacore.server")


TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
DEFAULT_ENTITY = "default"  # the metadata store's name for the cluster default ("")

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}

_LOG_LEVELS = {"TRACE": 5, "DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40, "FATAL": 50}
_LEVEL_NAMES = {
    logging.NOTSET: "INFO",
    5: "TRACE",
    10: "DEBUG",
    20: "INFO",
    30: "WARN",
    40: "ERROR",
    50: "FATAL",
}
_ROOT_LOGGER = "root"
# alterations read, then replace a resource's overrides: one at a time (Kafka's controller
# applies them in order), now that they run on several I/O threads
_ALTER_LOCK = threading.Lock()


class _Refused(Exception):
    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def with_stored_dynamic_configs(
    config: BrokerConfig, store: MetadataStore, node_id: int
) -> BrokerConfig:
    """``config`` with the dynamic broker configs of the metadata store applied (invalid
    stored entries are dropped, as Kafka's ``fromPersistentProps``)."""
    per_broker = store.broker_configs(str(node_id))
    default = store.broker_configs(DEFAULT_ENTITY)
    if not per_broker and not default:
        return config
    return config.with_dynamic(per_broker, default, validate=False)


# -- resources --------------------------------------------------------------------------


def _broker_entity(services: BrokerServices, name: str) -> str:
    """The store entity of a BROKER resource name, or INVALID_REQUEST."""
    if name == "":
        return DEFAULT_ENTITY
    try:
        node = int(name)
    except ValueError:
        raise _Refused(
            ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}"
        ) from None
    if node != services.node_id:
        raise _Refused(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {services.node_id} or empty string, but received "
            f"{name}",
        )
    return str(node)


def _check_topic(services: BrokerServices, name: str, *, describe: bool = False) -> None:
    """An illegal name or an unknown topic refused; DescribeConfigs answers the latter
    without a message (Kafka's ``ConfigHelper``), the controller with one."""
    problem = topic_name_error(name)
    if problem is not None:
        raise _Refused(ErrorCode.INVALID_TOPIC_EXCEPTION, problem)
    if not services.metadata_cache.contains_topic(name):
        message = None if describe else f"The topic '{name}' does not exist."
        raise _Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message)


def _check_logger_resource(services: BrokerServices, name: str) -> None:
    if not name:
        raise _Refused(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
    if name != str(services.node_id):
        raise _Refused(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {services.node_id} but received {name}",
        )


def _unsupported(resource_type: int) -> _Refused:
    return _Refused(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {resource_type}")


# -- DescribeConfigs --------------------------------------------------------------------


def _logger_levels() -> dict[str, str]:
    levels = {_ROOT_LOGGER: _LEVEL_NAMES.get(logging.getLogger().level, "INFO")}
    for name, item in sorted(logging.Logger.manager.loggerDict.items()):
        if isinstance(item, logging.Logger) and name.startswith("kafkacore"):
            levels[name] = _LEVEL_NAMES.get(item.getEffectiveLevel(), "INFO")
    return levels


def _logger_entries() -> list[ConfigEntry]:
    return [
        ConfigEntry(
            name=name,
            value=level,
            source=ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
            is_sensitive=False,
            read_only=False,
        )
        for name, level in _logger_levels().items()
    ]


def _wire_entry(entry: ConfigEntry) -> DescribeConfigsResponse.DescribeConfigsResourceResult:
    return DescribeConfigsResponse.DescribeConfigsResourceResult(
        name=entry.name,
        value=entry.value,
        read_only=entry.read_only,
        config_source=int(entry.source),
        is_sensitive=entry.is_sensitive,
        synonyms=[
            DescribeConfigsResponse.DescribeConfigsSynonym(
                name=s.name, value=s.value, source=int(s.source)
            )
            for s in entry.synonyms
        ],
        config_type=entry.type.value if entry.type is not None else 0,
        documentation=entry.documentation,
    )


def _describe_resource(
    services: BrokerServices,
    resource: DescribeConfigsRequest.DescribeConfigsResource,
    request: DescribeConfigsRequest,
) -> list[ConfigEntry]:
    keys = resource.configuration_keys
    names = list(keys) if keys else None
    synonyms = bool(request.include_synonyms)
    docs = bool(request.include_documentation)
    kind, name = resource.resource_type, resource.resource_name
    if kind == TOPIC:
        _check_topic(services, name, describe=True)
        config = services.replica_manager.topic_config(name)
        return config.describe(names, include_synonyms=synonyms, include_documentation=docs)
    if kind == BROKER:
        if _broker_entity(services, name) == DEFAULT_ENTITY:
            entries = services.config.describe_cluster_default(
                include_synonyms=synonyms, include_documentation=docs
            )
            return [e for e in entries if names is None or e.name in names]
        return services.config.describe(
            names, include_synonyms=synonyms, include_documentation=docs
        )
    if kind == BROKER_LOGGER:
        _check_logger_resource(services, name)
        return [e for e in _logger_entries() if names is None or e.name in names]
    if kind == _GROUP:
        return describe_group_configs(
            _group_overrides(services, name), services.config, names, synonyms
        )
    raise _unsupported(kind)


def _group_overrides(services: BrokerServices, name: str) -> dict[str, str]:
    share = services.share
    if share is not None:
        return share.group_configs.overrides(name)
    return services.metadata_store.group_configs().get(name, {})


def _alter_group(
    services: BrokerServices,
    name: str,
    ops: list[IncrementalAlterConfigsRequest.AlterableConfig],
    validate_only: bool,
) -> None:
    """IncrementalAlterConfigs of a GROUP resource (Kafka's ``GroupConfig.validate`` on
    the group's configs after the operations)."""
    if not name:
        raise _Refused(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    current = _group_overrides(services, name)
    configs = _apply_ops(services, _GROUP, name, ops, current)
    try:
        validate_group_configs(configs, services.config)
    except ConfigError as exc:
        raise _Refused(ErrorCode.INVALID_CONFIG, str(exc)) from None
    if not validate_only:
        services.metadata_store.set_group_configs(name, configs)
        logger.info("Updated configs of group %s: %s", name, configs)


_GROUP = 32
_CLIENT_METRICS = 16


def _resources(
    request: DescribeConfigsRequest | AlterConfigsRequest | IncrementalAlterConfigsRequest,
) -> list[tuple[int, str]]:
    return [(r.resource_type, r.resource_name) for r in request.resources]


def _config_denials(
    services: BrokerServices,
    context: RequestContext,
    resources: Iterable[tuple[int, str]],
    operation: AclOperation,
) -> dict[int, ErrorCode]:
    """By position among ``(resource type, name)`` of a request: the resources the principal may not
    DESCRIBE_/ALTER_CONFIGS (Kafka's ``ConfigHelper`` / ``authorizeAlterResource``):
    broker, broker logger and client metrics resources need it on the cluster
    (CLUSTER_AUTHORIZATION_FAILED), topics on the topic (TOPIC_...), groups on the group
    (GROUP_...)."""
    if not authz.enabled(services):
        return {}
    denied: dict[int, ErrorCode] = {}
    for index, (kind, name) in enumerate(resources):
        if kind in (BROKER, BROKER_LOGGER, _CLIENT_METRICS):
            if not authz.authorize_cluster(services, context, operation):
                denied[index] = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        elif kind == TOPIC:
            if not authz.authorize(services, context, operation, ResourceType.TOPIC, name):
                denied[index] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif kind == _GROUP and not authz.authorize(
            services, context, operation, ResourceType.GROUP, name
        ):
            denied[index] = ErrorCode.GROUP_AUTHORIZATION_FAILED
    return denied


def handle_describe_configs(
    services: BrokerServices, context: RequestContext, request: DescribeConfigsRequest
) -> DescribeConfigsResponse:
    denied = _config_denials(services, context, _resources(request), AclOperation.DESCRIBE_CONFIGS)
    results = []
    for index, resource in enumerate(request.resources):
        result = DescribeConfigsResponse.DescribeConfigsResult(
            error_code=0,
            error_message=None,
            resource_type=resource.resource_type,
            resource_name=resource.resource_name,
            configs=[],
        )
        try:
            if index in denied:
                raise _Refused(denied[index], default_message(denied[index]))
            entries = _describe_resource(services, resource, request)
        except _Refused as exc:
            result.error_code = exc.code
            result.error_message = exc.message
        else:
            result.configs = [_wire_entry(e) for e in entries]
            if resource.resource_type == _GROUP:
                result.error_message = ""  # Kafka's ConfigHelper answers a group so
        results.append(result)
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)


# -- altering ---------------------------------------------------------------------------


def _current_overrides(services: BrokerServices, kind: int, name: str) -> dict[str, str]:
    if kind == TOPIC:
        return services.metadata_cache.topic_configs(name) or {}
    return services.metadata_cache.broker_configs(_broker_entity(services, name))


def _validate_topic(services: BrokerServices, configs: Mapping[str, str | None]) -> None:
    try:
        LogConfig.validate(configs, services.config)
    except ConfigError as exc:
        raise _Refused(ErrorCode.INVALID_CONFIG, str(exc)) from None


def _new_broker_config(
    services: BrokerServices, entity: str, configs: Mapping[str, str]
) -> BrokerConfig:
    cache = services.metadata_cache
    per_broker = cache.broker_configs(str(services.node_id))
    default = cache.broker_configs(DEFAULT_ENTITY)
    if entity == DEFAULT_ENTITY:
        default = dict(configs)
    else:
        per_broker = dict(configs)
    try:
        return services.config.with_dynamic(per_broker, default, validate=True)
    except (ConfigError, ValueError) as exc:
        raise _Refused(ErrorCode.INVALID_REQUEST, str(exc)) from None


def _alter_resource(
    services: BrokerServices,
    kind: int,
    name: str,
    configs: Mapping[str, str | None],
    validate_only: bool,
) -> None:
    """Replace the overrides of one TOPIC/BROKER resource with ``configs`` (validated)."""
    values = {k: v for k, v in configs.items() if v is not None}
    if kind == TOPIC:
        _check_topic(services, name)
        _validate_topic(services, configs)  # refuses a null value
        if not validate_only:
            services.replica_manager.set_topic_configs(name, values)
            logger.info("Updated configs of topic %s: %s", name, values)
        return
    if kind == BROKER:
        entity = _broker_entity(services, name)
        nulls = [k for k, v in configs.items() if v is None]
        if nulls:
            raise _Refused(
                ErrorCode.INVALID_REQUEST, f"Null value not supported for : {','.join(nulls)}"
            )
        new = _new_broker_config(services, entity, values)
        if not validate_only:
            services.metadata_store.set_broker_configs(entity, values)
            services.configs.update(new)  # the replica manager re-derives topic configs
            logger.info(
                "Updated dynamic broker configs (%s): %s", entity, loggable_broker_configs(values)
            )
        return
    raise _unsupported(kind)


async def handle_alter_configs(
    services: BrokerServices, context: RequestContext, request: AlterConfigsRequest
) -> AlterConfigsResponse:
    """AlterConfigs: the resource's overrides become exactly the request's. Writes the
    metadata store: on the I/O executor."""
    denied = _config_denials(services, context, _resources(request), AclOperation.ALTER_CONFIGS)
    return await services.run_io(_alter_configs, services, request, denied)


def _alter_configs(
    services: BrokerServices, request: AlterConfigsRequest, denied: dict[int, ErrorCode]
) -> AlterConfigsResponse:
    with _ALTER_LOCK:
        return _alter_configs_locked(services, request, denied)


def _alter_configs_locked(
    services: BrokerServices, request: AlterConfigsRequest, denied: dict[int, ErrorCode]
) -> AlterConfigsResponse:
    responses = []
    for index, resource in enumerate(request.resources):
        kind, name = resource.resource_type, resource.resource_name
        code, message = 0, None
        try:
            if index in denied:
                raise _Refused(denied[index], default_message(denied[index]))
            if kind == BROKER_LOGGER:
                raise _Refused(
                    ErrorCode.INVALID_REQUEST,
                    "AlterConfigs is deprecated and does not support the resource type "
                    "BROKER_LOGGER",
                )
            configs = {c.name: c.value for c in resource.configs}
            _alter_resource(services, kind, name, configs, request.validate_only)
        except _Refused as exc:
            code, message = exc.code, exc.message
        responses.append(
            AlterConfigsResponse.AlterConfigsResourceResponse(
                error_code=code, error_message=message, resource_type=kind, resource_name=name
            )
        )
    return AlterConfigsResponse(throttle_time_ms=0, responses=responses)


def _config_type(kind: int, name: str) -> Type | None:
    key = TOPIC_CONFIG_DEF.get(name) if kind == TOPIC else BROKER_CONFIG_DEF.get(name)
    return key.type if key is not None else None


def _current_list(services: BrokerServices, kind: int, name: str, key: str) -> list[str]:
    """The value a list config has now (override, else the effective default)."""
    if kind == TOPIC:
        value: object = services.replica_manager.topic_config(name).get(key)
    else:
        value = getattr(services.config, key.replace(".", "_"), None)
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [v.strip() for v in str(value).split(",") if v.strip()]


def _apply_ops(
    services: BrokerServices,
    kind: int,
    name: str,
    ops: list[IncrementalAlterConfigsRequest.AlterableConfig],
    current: dict[str, str],
) -> dict[str, str]:
    """Kafka's ``incrementalAlterConfigResource``: SET/DELETE/APPEND/SUBTRACT on a copy."""
    result = dict(current)
    for op in ops:
        key, value, operation = op.name, op.value, op.config_operation
        if operation == SET:
            assert value is not None  # refused before ("Null value not supported")
            result[key] = value
        elif operation == DELETE:
            result.pop(key, None)
        elif operation in (APPEND, SUBTRACT):
            if _config_type(kind, key) is not Type.LIST:
                raise _Refused(
                    ErrorCode.INVALID_CONFIG,
                    f"Can't {_OP_NAMES[operation]} to key {key} because its type is not LIST.",
                )
            if key in result:
                items = [v.strip() for v in result[key].split(",") if v.strip()]
            else:
                items = _current_list(services, kind, name, key)
            given = [v.strip() for v in (value or "").split(",") if v.strip()]
            if operation == APPEND:
                items += [v for v in given if v not in items]
            else:
                items = [v for v in items if v not in given]
            result[key] = ",".join(items)
        else:
            raise _Refused(ErrorCode.INVALID_REQUEST, f"Unknown operation type {operation}")
    return result


def _set_logger_levels(
    ops: list[IncrementalAlterConfigsRequest.AlterableConfig], validate_only: bool
) -> None:
    changes: list[tuple[str, int]] = []
    for op in ops:
        if op.config_operation == DELETE:
            if op.name == _ROOT_LOGGER:
                raise _Refused(
                    ErrorCode.INVALID_REQUEST,
                    "Removing the log level of the root logger is not allowed",
                )
            changes.append((op.name, logging.NOTSET))
        elif op.config_operation == SET:
            level = _LOG_LEVELS.get((op.value or "").upper())
            if level is None:
                raise _Refused(
                    ErrorCode.INVALID_CONFIG,
                    f"Cannot set the log level of {op.name} to {op.value} as it is not a "
                    f"supported log level. Valid log levels are {', '.join(_LOG_LEVELS)}",
                )
            changes.append((op.name, level))
        else:
            raise _Refused(
                ErrorCode.INVALID_REQUEST,
                f"{_OP_NAMES.get(op.config_operation, op.config_operation)} operation is not "
                "allowed for the BROKER_LOGGER resource",
            )
    if not validate_only:
        for name, level in changes:
            logging.getLogger(None if name == _ROOT_LOGGER else name).setLevel(level)


async def handle_incremental_alter_configs(
    services: BrokerServices, context: RequestContext, request: IncrementalAlterConfigsRequest
) -> IncrementalAlterConfigsResponse:
    """Writes the metadata store: on the I/O executor."""
    denied = _config_denials(services, context, _resources(request), AclOperation.ALTER_CONFIGS)
    return await services.run_io(_incremental_alter_configs, services, request, denied)


def _incremental_alter_configs(
    services: BrokerServices, request: IncrementalAlterConfigsRequest, denied: dict[int, ErrorCode]
) -> IncrementalAlterConfigsResponse:
    with _ALTER_LOCK:
        return _incremental_alter_configs_locked(services, request, denied)


def _incremental_alter_configs_locked(
    services: BrokerServices, request: IncrementalAlterConfigsRequest, denied: dict[int, ErrorCode]
) -> IncrementalAlterConfigsResponse:
    responses = []
    for index, resource in enumerate(request.resources):
        kind, name = resource.resource_type, resource.resource_name
        code, message = 0, None
        try:
            ops = list(resource.configs)
            names = [op.name for op in ops]
            if len(set(names)) != len(names):
                raise _Refused(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
            nulls = [op.name for op in ops if op.value is None and op.config_operation != DELETE]
            if nulls:
                raise _Refused(
                    ErrorCode.INVALID_REQUEST, f"Null value not supported for : {','.join(nulls)}"
                )
            if index in denied:  # after Kafka's preprocessing checks
                raise _Refused(denied[index], default_message(denied[index]))
            if kind == BROKER_LOGGER:
                _check_logger_resource(services, name)
                _set_logger_levels(ops, request.validate_only)
            elif kind in (TOPIC, BROKER):
                if kind == TOPIC:
                    _check_topic(services, name)
                current = _current_overrides(services, kind, name)
                configs = _apply_ops(services, kind, name, ops, current)
                _alter_resource(services, kind, name, configs, request.validate_only)
            elif kind == _GROUP:
                _alter_group(services, name, ops, request.validate_only)
            else:
                raise _unsupported(kind)
        except _Refused as exc:
            code, message = exc.code, exc.message
        responses.append(
            IncrementalAlterConfigsResponse.AlterConfigsResourceResponse(
                error_code=code, error_message=message, resource_type=kind, resource_name=name
            )
        )
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=responses)
