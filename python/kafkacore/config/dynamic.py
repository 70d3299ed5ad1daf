"""Dynamic broker configs (AlterConfigs / ``kafka-configs --entity-type brokers``): which
configs may change at run time and how (Kafka's ``DynamicBrokerConfig`` update modes:
read-only, per-broker, cluster-wide), and the validation of a dynamic update."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

from kafkacore._java import java_hash_set_order, java_string_hash
from kafkacore.config.broker_defs import BROKER_CONFIG_DEF, DYNAMIC_ONLY_BROKER_CONFIG_DEF
from kafkacore.config.defs import ConfigError

if TYPE_CHECKING:
    from kafkacore.config.broker import BrokerConfig


_CLUSTER_WIDE: Final = (
    "background.threads",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.type",
    "compression.zstd.level",
    "config.providers",
    "follower.fetch.last.tiered.offset.enable",
    "follower.replication.throttled.rate",
    "group.consumer.assignment.interval.ms",
    "group.coordinator.cached.buffer.max.bytes",
    "group.share.assignment.interval.ms",
    "group.streams.assignment.interval.ms",
    "leader.replication.throttled.rate",
    "log.cleaner.backoff.ms",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.delete.retention.ms",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio",
    "log.cleaner.min.compaction.lag.ms",
    "log.cleaner.threads",
    "log.cleanup.policy",
    "log.flush.interval.messages",
    "log.flush.interval.ms",
    "log.index.interval.bytes",
    "log.index.size.max.bytes",
    "log.local.retention.bytes",
    "log.local.retention.ms",
    "log.message.timestamp.after.max.ms",
    "log.message.timestamp.before.max.ms",
    "log.message.timestamp.type",
    "log.preallocate",
    "log.retention.bytes",
    "log.retention.ms",
    "log.roll.jitter.ms",
    "log.roll.ms",
    "log.segment.bytes",
    "log.segment.delete.delay.ms",
    "max.connection.creation.rate",
    "max.connections",
    "max.connections.per.ip",
    "max.connections.per.ip.overrides",
    "message.max.bytes",
    "metric.reporters",
    "min.insync.replicas",
    "num.io.threads",
    "num.network.threads",
    "num.recovery.threads.per.data.dir",
    "num.replica.fetchers",
    "producer.id.expiration.ms",
    "remote.fetch.max.wait.ms",
    "remote.list.offsets.request.timeout.ms",
    "remote.log.index.file.cache.total.size.bytes",
    "remote.log.manager.copier.thread.pool.size",
    "remote.log.manager.copy.max.bytes.per.second",
    "remote.log.manager.expiration.thread.pool.size",
    "remote.log.manager.fetch.max.bytes.per.second",
    "remote.log.manager.follower.thread.pool.size",
    "remote.log.reader.threads",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    "share.coordinator.cached.buffer.max.bytes",
    "transaction.partition.verification.enable",
    "unclean.leader.election.enable",
)
_PER_BROKER: Final = (
    "cordoned.log.dirs",
    "listener.security.protocol.map",
    "listeners",
    "principal.builder.class",
    "sasl.enabled.mechanisms",
    "sasl.jaas.config",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.principal.to.local.rules",
    "sasl.kerberos.service.name",
    "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.ticket.renew.window.factor",
    "sasl.login.refresh.buffer.seconds",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.mechanism.inter.broker.protocol",
    "ssl.cipher.suites",
    "ssl.client.auth",
    "ssl.enabled.protocols",
    "ssl.endpoint.identification.algorithm",
    "ssl.engine.factory.class",
    "ssl.key.password",
    "ssl.keymanager.algorithm",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.keystore.type",
    "ssl.protocol",
    "ssl.provider",
    "ssl.secure.random.implementation",
    "ssl.trustmanager.algorithm",
    "ssl.truststore.certificates",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.type",
)

DYNAMIC_UPDATE_MODES: Final[dict[str, str]] = {
    **{name: "cluster-wide" for name in _CLUSTER_WIDE},
    **{name: "per-broker" for name in _PER_BROKER},
}
"""Every broker config Kafka lets AlterConfigs change without a restart, and how: "per-broker"
(only for one broker id) or "cluster-wide" (per broker or as the cluster default). Kafka's
``DynamicBrokerConfig.dynamicConfigUpdateModes()``; everything else is read-only."""

KAFKACORE_DYNAMIC_UPDATE_MODES: Final[dict[str, str]] = {
    name: "cluster-wide"
    for name in BROKER_CONFIG_DEF.names()
    if name.startswith("auto.partition.balance.")
}
"""kafkacore's own dynamic broker configs (the partition balancer's), not Kafka's: changed
as the cluster default (``kafkacore balancer pause``, a decommission) without a restart."""

DYNAMIC_CONFIGS: Final = frozenset(DYNAMIC_UPDATE_MODES) | frozenset(KAFKACORE_DYNAMIC_UPDATE_MODES)
PER_BROKER_CONFIGS: Final = frozenset(_PER_BROKER)

# SSL file/password configs: dynamically settable only with a listener.name.<l>. prefix.
_DYNAMIC_SECURITY_CONFIGS: Final = frozenset(
    [
        "ssl.key.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.type",
        "ssl.truststore.certificates",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.type",
    ]
)
_CLUSTER_LEVEL_LISTENER_CONFIGS: Final = frozenset(
    ("max.connections", "max.connection.creation.rate", "num.network.threads")
)
_LISTENER_CONFIG_RE: Final = re.compile(r"listener\.name\.[^.]*\.(.*)")
# Kafka's DynamicLogConfig.RECONFIGURABLE_CONFIGS: a change to one of these is checked
# (local retention against total retention).
_LOG_RECONFIGURABLE_CONFIGS: Final = frozenset(
    (
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.type",
        "compression.zstd.level",
        "cordoned.log.dirs",
        "log.cleaner.delete.retention.ms",
        "log.cleaner.max.compaction.lag.ms",
        "log.cleaner.min.cleanable.ratio",
        "log.cleaner.min.compaction.lag.ms",
        "log.cleanup.policy",
        "log.flush.interval.messages",
        "log.flush.interval.ms",
        "log.index.interval.bytes",
        "log.index.size.max.bytes",
        "log.local.retention.bytes",
        "log.local.retention.ms",
        "log.message.timestamp.after.max.ms",
        "log.message.timestamp.before.max.ms",
        "log.message.timestamp.type",
        "log.preallocate",
        "log.retention.bytes",
        "log.retention.ms",
        "log.roll.jitter.ms",
        "log.roll.ms",
        "log.segment.bytes",
        "log.segment.delete.delay.ms",
        "message.max.bytes",
        "min.insync.replicas",
        "unclean.leader.election.enable",
    )
)
_THREAD_POOL_CONFIGS: Final = (
    "num.io.threads",
    "num.replica.fetchers",
    "num.recovery.threads.per.data.dir",
    "background.threads",
)


def _java_set(names: Iterable[str]) -> str:
    return "[" + ", ".join(java_hash_set_order(names, java_string_hash)) + "]"


def _dynamic_problems(
    props: Mapping[str, str], per_broker_config: bool
) -> list[tuple[str, set[str]]]:
    names = list(props)
    non_dynamic = {n for n in names if n in BROKER_CONFIG_DEF and n not in DYNAMIC_CONFIGS}
    security = {n for n in names if n in _DYNAMIC_SECURITY_CONFIGS}
    problems = [
        ("Cannot update these configs dynamically", non_dynamic),
        (
            "These security configs can be dynamically updated only per-listener using the "
            "listener prefix",
            security,
        ),
    ]
    if not per_broker_config:
        per_broker = {n for n in names if n in PER_BROKER_CONFIGS}
        for n in names:
            m = _LISTENER_CONFIG_RE.fullmatch(n)
            if m and m.group(1) not in _CLUSTER_LEVEL_LISTENER_CONFIGS:
                per_broker.add(n)
        problems.append(
            (
                "Cannot update these configs at default cluster level, broker id must be specified",
                per_broker,
            )
        )
    return problems


def _base_name(name: str) -> str:
    m = _LISTENER_CONFIG_RE.fullmatch(name)
    return m.group(1) if m else name


def _parse_dynamic_value(name: str, value: str) -> None:
    key = BROKER_CONFIG_DEF.get(_base_name(name)) or DYNAMIC_ONLY_BROKER_CONFIG_DEF.get(
        _base_name(name)
    )
    if key is not None and (
        key.name in DYNAMIC_CONFIGS or key.name in DYNAMIC_ONLY_BROKER_CONFIG_DEF
    ):
        key.parse(value)


def _validate_dynamic(props: Mapping[str, str], *, per_broker_config: bool) -> None:
    """Kafka's ``DynamicBrokerConfig.validateConfigs``."""
    problems = _dynamic_problems(props, per_broker_config)
    for message, names in problems[:2]:
        if names:
            raise ConfigError(
                sorted(names)[0], None, message, message=f"{message}: {_java_set(names)}"
            )
    for name, value in props.items():
        _parse_dynamic_value(name, value)
    if not per_broker_config:
        message, names = problems[2]
        if names:
            raise ConfigError(
                sorted(names)[0], None, message, message=f"{message}: {_java_set(names)}"
            )


def _drop_invalid_dynamic(
    props: dict[str, str], per_broker_config: bool, ignored: dict[str, str]
) -> dict[str, str]:
    """Kafka's ``fromPersistentProps``: invalid dynamic entries are dropped, not fatal."""
    kept = dict(props)
    for name, value in props.items():
        try:
            _parse_dynamic_value(name, value)
        except ConfigError as e:
            ignored[name] = str(e)
            kept.pop(name)
    for message, names in _dynamic_problems(kept, per_broker_config):
        for name in names:
            ignored[name] = message
            kept.pop(name, None)
    return kept


def _validate_reconfiguration(old: BrokerConfig, new: BrokerConfig) -> None:
    """Kafka's checks on a dynamic update: thread pools may at most halve or double, and the
    local (tiered) retention may not exceed the total retention."""
    for name in _THREAD_POOL_CONFIGS:
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        prefix = f"Dynamic thread count update validation failed for {name}={after}"
        if after <= 0:
            raise ConfigError(name, after, message=f"{prefix}, value should be at least 1")
        if after < before // 2:
            raise ConfigError(
                name,
                after,
                message=f"{prefix}, value should be at least half the current value {before}",
            )
        if after > before * 2:
            raise ConfigError(
                name,
                after,
                message=f"{prefix}, value should not be greater than double the current value "
                f"{before}",
            )
    changed = {
        name
        for name in {*old.originals, *new.originals}
        if old.originals.get(name) != new.originals.get(name)
    }
    if not changed & _LOG_RECONFIGURABLE_CONFIGS:
        return
    retention, local = new.log_retention_ms, new.log_local_retention_ms
    if retention != -1 and local != -2:
        if local == -1:
            raise ConfigError(
                "log.local.retention.ms",
                local,
                f"Value must not be -1 as log.retention.ms value is set as {retention}.",
            )
        if local > retention:
            raise ConfigError(
                "log.local.retention.ms",
                local,
                f"Value must not be more than log.retention.ms property value: {retention}",
            )
    size, local_size = new.log_retention_bytes, new.log_local_retention_bytes
    if size > -1 and local_size != -2:
        if local_size == -1:
            raise ConfigError(
                "log.local.retention.bytes",
                local_size,
                f"Value must not be -1 as log.retention.bytes value is set as {size}.",
            )
        if local_size > size:
            raise ConfigError(
                "log.local.retention.bytes",
                local_size,
                f"Value must not be more than log.retention.bytes property value: {size}",
            )
