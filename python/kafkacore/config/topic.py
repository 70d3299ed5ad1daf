"""Topic configuration (Kafka's ``LogConfig``): every topic-level config with Kafka's name,
type, default and validator, the broker config each one falls back to when the topic does not
override it, and DescribeConfigs entries with Kafka's sources and synonyms.

Facts follow Apache Kafka 4.3 (``TopicConfig``, ``LogConfig``, ``ServerTopicConfigSynonyms``).
Kafka 4 removed ``message.format.version``, ``message.downconversion.enable`` and
``message.timestamp.difference.max.ms``; they are unknown topic configs here too. Kafka 4 also
raised the floor of ``segment.bytes`` to 1 MiB; the internal ``internal.segment.bytes`` (which
Kafka's own tests use for small segments) overrides it without a floor.

A :class:`LogConfig` is immutable and safe to share between threads.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from kafkacore.config.broker import BrokerConfig, attribute_name
from kafkacore.config.broker_defs import (
    BROKER_COMPRESSION_TYPES,
    GZIP_DEFAULT_LEVEL,
    GZIP_LEVEL_VALIDATOR,
    LZ4_DEFAULT_LEVEL,
    LZ4_LEVEL_VALIDATOR,
    MIN_SEGMENT_BYTES,
    ZSTD_DEFAULT_LEVEL,
    ZSTD_LEVEL_VALIDATOR,
)
from kafkacore.config.defs import (
    INT64_MAX,
    ConfigDef,
    ConfigError,
    ConfigKey,
    Importance,
    Range,
    Type,
    ValidList,
    ValidString,
    convert_to_string,
    java_str,
    java_trim,
)
from kafkacore.config.describe import ConfigEntry, ConfigSource, ConfigSynonym
from kafkacore.config.synonyms import (
    ALL_TOPIC_CONFIG_SYNONYMS,
    TOPIC_CONFIG_SYNONYMS,
    broker_config_synonyms,
)

__all__ = ["TOPIC_CONFIG_DEF", "LogConfig", "ThrottledReplicaListValidator"]


class ThrottledReplicaListValidator:
    """``[partitionId]:[brokerId],...`` or the literal ``*`` (Kafka's validator of the
    ``*.replication.throttled.replicas`` topic configs)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if not isinstance(value, list):
            raise ConfigError(
                name, value, f"{name} must be a List but was {type(value).__qualname__}"
            )
        proposed = [java_trim(java_str(v)) for v in value]

        def is_replica(s: str) -> bool:
            left, colon, right = s.partition(":")
            return s == "" or (
                colon == ":"
                and left.isascii()
                and left.isdigit()
                and right.isascii()
                and right.isdigit()
            )

        if not (all(is_replica(s) for s in proposed) or "".join(proposed) == "*"):
            raise ConfigError(
                name,
                value,
                f"{name} must be the literal '*' or a list of replicas in the following format: "
                "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
            )

    def __str__(self) -> str:
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."


def _t(
    name: str,
    type_: Type,
    default: Any,
    validator: Any,
    doc: str,
    *,
    internal: bool = False,
) -> ConfigKey:
    synonyms = tuple(s.name for s in ALL_TOPIC_CONFIG_SYNONYMS.get(name, ()))
    return ConfigKey(
        name, type_, default, validator, Importance.MEDIUM, doc, synonyms, internal=internal
    )


_WEEK_MS: Final = 7 * 24 * 60 * 60 * 1000
_throttled = ThrottledReplicaListValidator()

TOPIC_CONFIG_DEF: Final = ConfigDef(
    [
        _t("segment.bytes", Type.INT, 1024 * 1024 * 1024, Range.at_least(MIN_SEGMENT_BYTES),
           "Size at which the active segment is rolled."),
        _t("segment.ms", Type.LONG, _WEEK_MS, Range.at_least(1),
           "Age at which the active segment is rolled even if not full."),
        _t("segment.jitter.ms", Type.LONG, 0, Range.at_least(0),
           "Maximum random time subtracted from segment.ms to spread rolls."),
        _t("segment.index.bytes", Type.INT, 10 * 1024 * 1024, Range.at_least(4),
           "Preallocated size of each offset (and time) index file."),
        _t("flush.messages", Type.LONG, INT64_MAX, Range.at_least(1),
           "Force an fsync after this many messages."),
        _t("flush.ms", Type.LONG, INT64_MAX, Range.at_least(0),
           "Force an fsync after this much time."),
        _t("retention.bytes", Type.LONG, -1, None,
           "Largest size a partition may reach before old segments are deleted; -1: no limit."),
        _t("retention.ms", Type.LONG, _WEEK_MS, Range.at_least(-1),
           "Age after which segments are deleted; -1: no limit."),
        _t("max.message.bytes", Type.INT, 1024 * 1024 + 12, Range.at_least(0),
           "Largest record batch (after compression) the topic accepts."),
        _t("index.interval.bytes", Type.INT, 4096, Range.at_least(0),
           "Bytes of log between two offset index entries."),
        _t("delete.retention.ms", Type.LONG, 24 * 60 * 60 * 1000, Range.at_least(0),
           "How long tombstones are kept in compacted topics."),
        _t("min.compaction.lag.ms", Type.LONG, 0, Range.at_least(0),
           "Minimum age of a message before it may be compacted."),
        _t("max.compaction.lag.ms", Type.LONG, INT64_MAX, Range.at_least(1),
           "Maximum time a message stays ineligible for compaction."),
        _t("file.delete.delay.ms", Type.LONG, 60000, Range.at_least(0),
           "Delay before a deleted segment's files are removed from disk."),
        _t("min.cleanable.dirty.ratio", Type.DOUBLE, 0.5, Range.between(0, 1),
           "Dirty/total ratio above which the log is compacted."),
        _t("cleanup.policy", Type.LIST, "delete", ValidList(("compact", "delete")),
           "delete, compact, both, or empty for infinite retention."),
        _t("unclean.leader.election.enable", Type.BOOLEAN, False, None,
           "Allow out-of-sync replicas to become leader (may lose data)."),
        _t("min.insync.replicas", Type.INT, 1, Range.at_least(1),
           "Replicas that must have a write for acks=all to succeed."),
        _t("compression.type", Type.STRING, "producer", ValidString(BROKER_COMPRESSION_TYPES),
           "Final compression codec; 'producer' keeps the producer's."),
        _t("compression.gzip.level", Type.INT, GZIP_DEFAULT_LEVEL, GZIP_LEVEL_VALIDATOR,
           "gzip level when compression.type is gzip."),
        _t("compression.lz4.level", Type.INT, LZ4_DEFAULT_LEVEL, LZ4_LEVEL_VALIDATOR,
           "lz4 level when compression.type is lz4."),
        _t("compression.zstd.level", Type.INT, ZSTD_DEFAULT_LEVEL, ZSTD_LEVEL_VALIDATOR,
           "zstd level when compression.type is zstd."),
        _t("preallocate", Type.BOOLEAN, False, None,
           "Preallocate segment files at their full size."),
        _t("message.timestamp.type", Type.STRING, "CreateTime",
           ValidString(("CreateTime", "LogAppendTime")),
           "CreateTime (the producer's) or LogAppendTime (the broker's)."),
        _t("message.timestamp.before.max.ms", Type.LONG, INT64_MAX, Range.at_least(0),
           "How far in the past a CreateTime timestamp may be."),
        _t("message.timestamp.after.max.ms", Type.LONG, 3600000, Range.at_least(0),
           "How far in the future a CreateTime timestamp may be."),
        _t("leader.replication.throttled.replicas", Type.LIST, "", _throttled,
           "Replicas whose leader-side replication is throttled."),
        _t("follower.replication.throttled.replicas", Type.LIST, "", _throttled,
           "Replicas whose follower-side replication is throttled."),
        _t("remote.storage.enable", Type.BOOLEAN, False, None,
           "Tiered storage for this topic."),
        _t("local.retention.ms", Type.LONG, -2, Range.at_least(-2),
           "Local retention time with tiered storage; -2: retention.ms."),
        _t("local.retention.bytes", Type.LONG, -2, Range.at_least(-2),
           "Local retention size with tiered storage; -2: retention.bytes."),
        _t("remote.log.copy.disable", Type.BOOLEAN, False, None,
           "Stop copying segments to remote storage."),
        _t("remote.log.delete.on.disable", Type.BOOLEAN, False, None,
           "Delete remote data when remote storage is disabled."),
        _t("internal.segment.bytes", Type.INT, None, None,
           "Segment size without segment.bytes' floor; for tests only.", internal=True),
    ]
)  # fmt: skip
"""Every topic config, in Kafka's definition order."""


class LogConfig:
    """A topic's effective configuration: its overrides on top of the broker's defaults.

    ``LogConfig(overrides, broker)`` validates every override (unknown names included) and
    raises :class:`ConfigError` naming the key, value and constraint in Kafka's words. A config
    the topic does not override takes the broker's value (``segment.bytes`` <-
    ``log.segment.bytes``, ``retention.ms`` <- ``log.retention.ms`` > ``.minutes`` >
    ``.hours``, ...); without a ``broker`` Kafka's broker defaults apply.

    Every topic config is an attribute named after it (``segment.bytes`` -> ``segment_bytes``)
    with Kafka's type, except that, as in Kafka's ``LogConfig``, ``segment_bytes`` is the
    effective segment size (``internal.segment.bytes`` when set). :meth:`get` returns any value
    exactly as parsed, by Kafka name.
    """

    segment_bytes: int
    segment_ms: int
    segment_jitter_ms: int
    segment_index_bytes: int
    flush_messages: int
    flush_ms: int
    retention_bytes: int
    retention_ms: int
    max_message_bytes: int
    index_interval_bytes: int
    delete_retention_ms: int
    min_compaction_lag_ms: int
    max_compaction_lag_ms: int
    file_delete_delay_ms: int
    min_cleanable_dirty_ratio: float
    cleanup_policy: list[str]
    unclean_leader_election_enable: bool
    min_insync_replicas: int
    compression_type: str
    compression_gzip_level: int
    compression_lz4_level: int
    compression_zstd_level: int
    preallocate: bool
    message_timestamp_type: str
    message_timestamp_before_max_ms: int
    message_timestamp_after_max_ms: int
    leader_replication_throttled_replicas: list[str]
    follower_replication_throttled_replicas: list[str]
    remote_storage_enable: bool
    local_retention_ms: int
    local_retention_bytes: int
    remote_log_copy_disable: bool
    remote_log_delete_on_disable: bool
    internal_segment_bytes: int | None

    CONFIG_DEF: ClassVar[ConfigDef] = TOPIC_CONFIG_DEF

    def __init__(
        self,
        overrides: Mapping[str, Any] | None = None,
        broker: BrokerConfig | None = None,
    ) -> None:
        self.originals: dict[str, Any] = dict(overrides or {})
        self.broker: BrokerConfig = broker if broker is not None else _default_broker()
        self.overridden_configs: frozenset[str] = frozenset(self.originals)
        self._values = _validate(self.originals, self.broker.extract_log_config_map(), self.broker)
        for name, value in self._values.items():
            setattr(self, attribute_name(name), list(value) if isinstance(value, list) else value)
        if self._values["internal.segment.bytes"] is not None:
            self.segment_bytes = self._values["internal.segment.bytes"]
        # Read on every append: computed once (a LogConfig is not changed after creation;
        # a config update makes a new one).
        policies = {p.lower() for p in self.cleanup_policy}
        self._compact = "compact" in policies
        self._delete = "delete" in policies

    # -- Kafka's LogConfig accessors ------------------------------------------------------

    @property
    def compact(self) -> bool:
        """``cleanup.policy`` contains ``compact`` (any case)."""
        return self._compact

    @property
    def delete(self) -> bool:
        """``cleanup.policy`` contains ``delete`` (any case)."""
        return self._delete

    def max_segment_ms(self) -> int:
        """Age at which to roll: ``segment.ms``, or ``max.compaction.lag.ms`` if compacted
        and smaller."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    def random_segment_jitter(self, rng: random.Random | None = None) -> int:
        """A random roll jitter in ``[0, min(segment.jitter.ms, segment.ms))``, 0 without
        jitter."""
        if self.segment_jitter_ms == 0:
            return 0
        value = (rng or random).getrandbits(31)
        return value % min(self.segment_jitter_ms, self.segment_ms)

    def init_file_size(self) -> int:
        """Initial size of a new segment file: the segment size when preallocating, else 0."""
        return self.segment_bytes if self.preallocate else 0

    def effective_local_retention_ms(self) -> int:
        """``local.retention.ms``, where -2 means ``retention.ms``."""
        return self.retention_ms if self.local_retention_ms == -2 else self.local_retention_ms

    def effective_local_retention_bytes(self) -> int:
        """``local.retention.bytes``, where -2 means ``retention.bytes``."""
        if self.local_retention_bytes == -2:
            return self.retention_bytes
        return self.local_retention_bytes

    def get(self, name: str) -> Any:
        """A config's parsed value by Kafka name; unknown names raise Kafka's
        ``Unknown configuration '<name>'``."""
        if name not in self._values:
            raise ConfigError(name, message=f"Unknown configuration '{name}'")
        value = self._values[name]
        return list(value) if isinstance(value, list) else value

    def values(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self._values.items()}

    # -- class-level API ------------------------------------------------------------------

    @staticmethod
    def names(include_internal: bool = False) -> list[str]:
        """Topic config names, sorted (what ``kafka-configs --entity-type topics`` lists)."""
        return sorted(
            k.name for k in TOPIC_CONFIG_DEF.config_keys() if include_internal or not k.internal
        )

    @staticmethod
    def validate(overrides: Mapping[str, Any], broker: BrokerConfig | None = None) -> None:
        """Validate topic overrides as CreateTopics / AlterConfigs do (Kafka's
        ``LogConfig.validate``): names, values, then cross-config rules. With a ``broker``
        the overrides are checked together with its defaults and tiered-storage switch."""
        _validate(
            dict(overrides),
            broker.extract_log_config_map() if broker is not None else {},
            broker,
        )

    @staticmethod
    def server_config_name(name: str) -> str | None:
        """The broker config a topic config falls back to (``retention.ms`` ->
        ``log.retention.ms``), ``None`` for topic-only configs."""
        return TOPIC_CONFIG_SYNONYMS.get(name)

    # -- DescribeConfigs ------------------------------------------------------------------

    def describe(
        self,
        names: Iterable[str] | None = None,
        *,
        include_synonyms: bool = True,
        include_documentation: bool = False,
    ) -> list[ConfigEntry]:
        """DescribeConfigs entries for this topic, sorted by name: value as Kafka prints it,
        source (DYNAMIC_TOPIC_CONFIG when overridden, else where the broker value comes
        from), and synonyms: the override, then the broker configs behind it."""
        wanted = None if names is None else set(names)
        entries = []
        for key in sorted(TOPIC_CONFIG_DEF.config_keys(), key=lambda k: k.name):
            if key.internal and key.name not in self.originals:
                continue
            if wanted is not None and key.name not in wanted:
                continue
            entries.append(self._entry(key, include_synonyms, include_documentation))
        return entries

    def _entry(
        self, key: ConfigKey, include_synonyms: bool, include_documentation: bool
    ) -> ConfigEntry:
        sensitive = key.type.is_sensitive
        text = None if sensitive else convert_to_string(self._values[key.name], key.type)
        synonyms: list[ConfigSynonym] = []
        if key.name in self.originals:
            synonyms.append(ConfigSynonym(key.name, text, ConfigSource.DYNAMIC_TOPIC_CONFIG))
        server_name = TOPIC_CONFIG_SYNONYMS.get(key.name)
        if server_name is not None:
            synonyms += self.broker.config_synonyms(
                server_name, broker_config_synonyms(server_name), sensitive
            )
        source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
        return ConfigEntry(
            name=key.name,
            value=text,
            source=source,
            is_sensitive=sensitive,
            read_only=False,
            synonyms=synonyms if include_synonyms else [],
            type=key.type,
            documentation=key.doc if include_documentation else None,
        )

    def __repr__(self) -> str:
        return f"LogConfig({self.originals!r})"


_DEFAULT_BROKER: list[BrokerConfig] = []


def _default_broker() -> BrokerConfig:
    if not _DEFAULT_BROKER:
        _DEFAULT_BROKER.append(BrokerConfig({}))
    return _DEFAULT_BROKER[0]


def _validate(
    overrides: dict[str, Any], broker_defaults: Mapping[str, Any], broker: BrokerConfig | None
) -> dict[str, Any]:
    """Kafka's topic config validation (``ControllerConfigurationValidator`` then
    ``LogConfig.validate``): nulls, names, values, then cross-config rules."""
    nulls = [name for name, value in overrides.items() if value is None]
    if nulls:
        raise ConfigError(
            nulls[0],
            None,
            "null value",
            message="Null value not supported for topic configs: " + ",".join(nulls),
        )
    for name in overrides:
        if name not in TOPIC_CONFIG_DEF:
            raise ConfigError(
                name,
                overrides[name],
                "unknown topic config",
                message=f"Unknown topic config name: {name}",
            )
    values = TOPIC_CONFIG_DEF.parse({**broker_defaults, **overrides})
    min_lag, max_lag = values["min.compaction.lag.ms"], values["max.compaction.lag.ms"]
    if min_lag > max_lag:
        raise ConfigError(
            "min.compaction.lag.ms",
            min_lag,
            f"> max.compaction.lag.ms ({max_lag})",
            message="conflict topic config setting "
            f"min.compaction.lag.ms ({min_lag}) > max.compaction.lag.ms ({max_lag})",
        )
    if broker is not None and values["remote.storage.enable"]:
        _validate_remote_storage(values, broker.remote_log_storage_system_enable)
    return values


def _validate_remote_storage(values: Mapping[str, Any], system_enabled: bool) -> None:
    """Kafka's tiered-storage rules for a topic with ``remote.storage.enable=true``."""
    if not system_enabled:
        raise ConfigError(
            "remote.storage.enable",
            True,
            "tiered storage is disabled in the broker",
            message="Tiered Storage functionality is disabled in the broker. "
            "Topic cannot be configured with remote log storage.",
        )
    policy = values["cleanup.policy"]
    if policy and policy != ["delete"]:
        raise ConfigError(
            "cleanup.policy",
            policy,
            "remote storage needs cleanup.policy=delete",
            message="Remote log storage only supports topics with cleanup.policy=delete or "
            "cleanup.policy being an empty list.",
        )
    for total_name, local_name in (
        ("retention.bytes", "local.retention.bytes"),
        ("retention.ms", "local.retention.ms"),
    ):
        total, local = values[total_name], values[local_name]
        # Kafka: retention.bytes counts as set when > -1, retention.ms when != -1.
        unlimited = total <= -1 if total_name == "retention.bytes" else total == -1
        if unlimited or local == -2:
            continue
        if local == -1:
            raise ConfigError(
                local_name, local, f"Value must not be -1 as {total_name} value is set as {total}."
            )
        if local > total:
            raise ConfigError(
                local_name,
                local,
                f"Value must not be more than {total_name} property value: {total}",
            )
    if values["remote.log.copy.disable"]:
        for total_name, local_name in (
            ("retention.bytes", "local.retention.bytes"),
            ("retention.ms", "local.retention.ms"),
        ):
            if values[local_name] not in (-2, values[total_name]):
                raise ConfigError(
                    local_name,
                    values[local_name],
                    f"must equal {total_name}",
                    message=f"When `remote.log.copy.disable` is set to true, the `{local_name}` "
                    f"and `{total_name}` must be set to the identical value because there will "
                    "be no more logs copied to the remote storage.",
                )
