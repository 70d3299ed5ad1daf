"""Topic configs (LogConfig): Kafka 4.3's names, defaults, validation messages, fallback to the
broker's log.* settings, and DescribeConfigs sources and synonyms."""

from __future__ import annotations

import random
import typing

import pytest

from kafkacore.config import (
    TOPIC_CONFIG_DEF,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    ConfigSynonym,
    LogConfig,
    Type,
)

DAY = 24 * 60 * 60 * 1000
LONG_MAX = 2**63 - 1


def error(overrides: dict[str, typing.Any], broker: BrokerConfig | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        LogConfig(overrides, broker)
    return info.value


def test_every_kafka_4_topic_config_and_nothing_else() -> None:
    assert LogConfig.names() == [
        "cleanup.policy",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.type",
        "compression.zstd.level",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "index.interval.bytes",
        "leader.replication.throttled.replicas",
        "local.retention.bytes",
        "local.retention.ms",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "preallocate",
        "remote.log.copy.disable",
        "remote.log.delete.on.disable",
        "remote.storage.enable",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
    ]
    assert LogConfig.names(include_internal=True) == sorted(
        [*LogConfig.names(), "internal.segment.bytes"]
    )


def test_defaults_are_kafkas() -> None:
    c = LogConfig()
    assert c.segment_bytes == 1024**3
    assert c.segment_ms == 7 * DAY
    assert c.segment_jitter_ms == 0
    assert c.segment_index_bytes == 10 * 1024 * 1024
    assert c.index_interval_bytes == 4096
    assert c.retention_ms == 7 * DAY
    assert c.retention_bytes == -1
    assert c.cleanup_policy == ["delete"]
    assert (c.delete, c.compact) == (True, False)
    assert c.file_delete_delay_ms == 60000
    assert c.flush_messages == LONG_MAX
    assert c.flush_ms == LONG_MAX
    assert c.max_message_bytes == 1048588
    assert c.message_timestamp_type == "CreateTime"
    assert c.message_timestamp_before_max_ms == LONG_MAX
    assert c.message_timestamp_after_max_ms == 3600000  # one hour since Kafka 4.0
    assert c.preallocate is False
    assert c.delete_retention_ms == DAY
    assert c.min_cleanable_dirty_ratio == 0.5
    assert c.min_compaction_lag_ms == 0
    assert c.max_compaction_lag_ms == LONG_MAX
    assert c.compression_type == "producer"
    assert (c.compression_gzip_level, c.compression_lz4_level, c.compression_zstd_level) == (
        -1,
        9,
        3,
    )
    assert c.min_insync_replicas == 1
    assert c.unclean_leader_election_enable is False
    assert c.leader_replication_throttled_replicas == []
    assert c.remote_storage_enable is False
    assert (c.local_retention_ms, c.local_retention_bytes) == (-2, -2)
    assert c.internal_segment_bytes is None
    assert c.originals == {}
    assert c.overridden_configs == frozenset()


def test_attributes_cover_every_config_with_its_kafka_type() -> None:
    hints = typing.get_type_hints(LogConfig)
    python_types = {
        Type.BOOLEAN: bool,
        Type.INT: int,
        Type.LONG: int,
        Type.DOUBLE: float,
        Type.STRING: str,
        Type.LIST: list,
    }
    c = LogConfig()
    for key in TOPIC_CONFIG_DEF.config_keys():
        attribute = key.name.replace(".", "_")
        assert attribute in hints, key.name
        value = getattr(c, attribute)
        if value is not None:
            assert type(value) is python_types[key.type], key.name


def test_string_and_typed_overrides() -> None:
    c = LogConfig(
        {
            "segment.bytes": "2000000",
            "retention.ms": 1000,
            "cleanup.policy": "compact, delete",
            "min.cleanable.dirty.ratio": 0.1,
            "preallocate": "TRUE",
            "leader.replication.throttled.replicas": ["0:1", "1:2"],
            "compression.type": "zstd",
            "compression.zstd.level": "-5",
        }
    )
    assert c.segment_bytes == 2000000
    assert c.retention_ms == 1000
    assert c.cleanup_policy == ["compact", "delete"]
    assert (c.compact, c.delete) == (True, True)
    assert c.min_cleanable_dirty_ratio == 0.1
    assert c.preallocate is True
    assert c.leader_replication_throttled_replicas == ["0:1", "1:2"]
    assert c.compression_zstd_level == -5
    assert c.originals["retention.ms"] == 1000
    assert c.overridden_configs == frozenset(c.originals)
    assert c.get("cleanup.policy") == ["compact", "delete"]
    with pytest.raises(ConfigError, match=r"^Unknown configuration 'segment\.size'$"):
        c.get("segment.size")


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        # Kafka 4 raised segment.bytes' floor from 14 (LegacyRecord.RECORD_OVERHEAD_V0) to 1 MiB.
        (
            {"segment.bytes": "-5"},
            "Invalid value -5 for configuration segment.bytes: Value must be at least 1048576",
        ),
        (
            {"segment.bytes": "abc"},
            "Invalid value abc for configuration segment.bytes: Not a number of type INT",
        ),
        (
            {"retention.ms": "-2"},
            "Invalid value -2 for configuration retention.ms: Value must be at least -1",
        ),
        (
            {"min.cleanable.dirty.ratio": "2"},
            "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: "
            "Value must be no more than 1",
        ),
        (
            {"cleanup.policy": "foo"},
            "Invalid value foo for configuration cleanup.policy: "
            "String must be one of: compact, delete",
        ),
        (
            {"cleanup.policy": "delete,,compact"},
            "Configuration 'cleanup.policy' values must not be empty.",
        ),
        (
            {"compression.gzip.level": "12"},
            "Invalid value 12 for configuration compression.gzip.level: "
            "Value must be between 1 and 9 or equal to -1",
        ),
        (
            {"compression.lz4.level": "18"},
            "Invalid value 18 for configuration compression.lz4.level: "
            "Value must be no more than 17",
        ),
        (
            {"compression.type": "GZIP"},
            "Invalid value GZIP for configuration compression.type: "
            "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
        ),
        (
            {"message.timestamp.type": "createtime"},
            "Invalid value createtime for configuration message.timestamp.type: "
            "String must be one of: CreateTime, LogAppendTime",
        ),
        (
            {"unclean.leader.election.enable": "yes"},
            "Invalid value yes for configuration unclean.leader.election.enable: "
            "Expected value to be either true or false",
        ),
        (
            {"leader.replication.throttled.replicas": "foo"},
            "Invalid value [foo] for configuration leader.replication.throttled.replicas: "
            "leader.replication.throttled.replicas must be the literal '*' or a list of replicas "
            "in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ),
        (
            {"max.message.bytes": "99999999999"},
            "Invalid value 99999999999 for configuration max.message.bytes: "
            "Not a number of type INT",
        ),
        (
            {"min.insync.replicas": "0"},
            "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
        ),
        (
            {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
            "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)",
        ),
        # Removed in Kafka 4.0: unknown like any other name.
        (
            {"message.timestamp.difference.max.ms": "5"},
            "Unknown topic config name: message.timestamp.difference.max.ms",
        ),
        ({"message.format.version": "3.0"}, "Unknown topic config name: message.format.version"),
        (
            {"message.downconversion.enable": "true"},
            "Unknown topic config name: message.downconversion.enable",
        ),
        ({"retention.ms": None}, "Null value not supported for topic configs: retention.ms"),
    ],
)
def test_validation_messages_are_kafkas(overrides: dict[str, typing.Any], expected: str) -> None:
    assert str(error(overrides)) == expected
    with pytest.raises(ConfigError) as info:
        LogConfig.validate(overrides)
    assert str(info.value) == expected


def test_errors_name_the_key_value_and_constraint() -> None:
    e = error({"segment.bytes": "-5"})
    assert (e.name, e.value, e.constraint) == (
        "segment.bytes",
        -5,
        "Value must be at least 1048576",
    )
    e = error({"no.such.config": "1"})
    assert (e.name, e.value) == ("no.such.config", "1")


def test_accepted_edge_values() -> None:
    LogConfig.validate({"cleanup.policy": ""})  # an empty policy: infinite retention
    LogConfig.validate({"cleanup.policy": "delete,delete"})  # duplicates are dropped
    LogConfig.validate({"leader.replication.throttled.replicas": "*"})
    LogConfig.validate({"follower.replication.throttled.replicas": " 0:1 , 1:2 "})
    LogConfig.validate({"compression.gzip.level": "-1"})
    LogConfig.validate({"segment.bytes": " 1048576 "})
    LogConfig.validate({"retention.bytes": "-5"})
    assert LogConfig({"cleanup.policy": "delete,delete"}).cleanup_policy == ["delete"]
    assert LogConfig({"cleanup.policy": ""}).cleanup_policy == []


def test_internal_segment_bytes_gives_small_segments() -> None:
    c = LogConfig({"internal.segment.bytes": "1024", "preallocate": "true"})
    assert c.segment_bytes == 1024
    assert c.get("segment.bytes") == 1024**3
    assert c.init_file_size() == 1024
    assert LogConfig().init_file_size() == 0


def test_topic_configs_fall_back_to_broker_log_settings() -> None:
    broker = BrokerConfig(
        {
            "log.segment.bytes": "2000000",
            "log.roll.hours": "2",
            "log.roll.jitter.hours": "1",
            "log.retention.minutes": "5",
            "log.retention.hours": "1",
            "log.retention.bytes": "1000000",
            "log.index.size.max.bytes": "4096",
            "log.index.interval.bytes": "100",
            "log.flush.interval.messages": "10",
            "log.flush.scheduler.interval.ms": "77",
            "log.segment.delete.delay.ms": "5",
            "log.cleaner.delete.retention.ms": "6",
            "log.cleaner.min.compaction.lag.ms": "7",
            "log.cleaner.max.compaction.lag.ms": "8000",
            "log.cleaner.min.cleanable.ratio": "0.25",
            "log.cleanup.policy": "compact",
            "message.max.bytes": "5000",
            "min.insync.replicas": "2",
            "compression.type": "lz4",
            "compression.lz4.level": "3",
            "unclean.leader.election.enable": "true",
            "log.preallocate": "true",
            "log.message.timestamp.type": "LogAppendTime",
            "log.message.timestamp.before.max.ms": "11",
            "log.message.timestamp.after.max.ms": "12",
            "log.local.retention.ms": "13",
        }
    )
    c = LogConfig({}, broker)
    assert c.segment_bytes == 2000000
    assert c.segment_ms == 2 * 3600 * 1000
    assert c.segment_jitter_ms == 3600 * 1000
    assert c.retention_ms == 5 * 60 * 1000  # minutes win over hours
    assert c.retention_bytes == 1000000
    assert c.segment_index_bytes == 4096
    assert c.index_interval_bytes == 100
    assert c.flush_messages == 10
    assert c.flush_ms == 77  # log.flush.interval.ms unset: the scheduler interval
    assert c.file_delete_delay_ms == 5
    assert c.delete_retention_ms == 6
    assert c.min_compaction_lag_ms == 7
    assert c.max_compaction_lag_ms == 8000
    assert c.min_cleanable_dirty_ratio == 0.25
    assert c.cleanup_policy == ["compact"]
    assert c.max_message_bytes == 5000
    assert c.min_insync_replicas == 2
    assert (c.compression_type, c.compression_lz4_level) == ("lz4", 3)
    assert c.unclean_leader_election_enable is True
    assert c.preallocate is True
    assert c.message_timestamp_type == "LogAppendTime"
    assert (c.message_timestamp_before_max_ms, c.message_timestamp_after_max_ms) == (11, 12)
    assert c.local_retention_ms == 13
    # A topic override beats the broker.
    assert LogConfig({"retention.ms": "42", "segment.ms": "43"}, broker).retention_ms == 42
    # max_segment_ms: compacted topics roll by max.compaction.lag.ms when it is sooner.
    assert c.max_segment_ms() == 8000
    assert LogConfig({"cleanup.policy": "delete"}, broker).max_segment_ms() == 2 * 3600 * 1000


def test_flush_ms_prefers_log_flush_interval_ms() -> None:
    broker = BrokerConfig({"log.flush.interval.ms": "5", "log.flush.scheduler.interval.ms": "77"})
    assert LogConfig({}, broker).flush_ms == 5


def test_broker_values_are_validated_as_topic_values() -> None:
    broker = BrokerConfig({"log.flush.interval.ms": "-5"})
    assert str(error({}, broker)) == (
        "Invalid value -5 for configuration flush.ms: Value must be at least 0"
    )


def test_jitter_and_local_retention_helpers() -> None:
    c = LogConfig({"segment.jitter.ms": "1000", "segment.ms": "100"})
    rng = random.Random(7)
    assert all(0 <= c.random_segment_jitter(rng) < 100 for _ in range(200))
    assert LogConfig().random_segment_jitter() == 0
    d = LogConfig({"retention.ms": "500", "retention.bytes": "600"})
    assert (d.effective_local_retention_ms(), d.effective_local_retention_bytes()) == (500, 600)
    e = LogConfig({"local.retention.ms": "5", "local.retention.bytes": "6"})
    assert (e.effective_local_retention_ms(), e.effective_local_retention_bytes()) == (5, 6)


def test_tiered_storage_rules() -> None:
    assert str(error({"remote.storage.enable": "true"})) == (
        "Tiered Storage functionality is disabled in the broker. "
        "Topic cannot be configured with remote log storage."
    )
    LogConfig.validate({"remote.storage.enable": "true"})  # without a broker: names and values
    tiered = BrokerConfig({"remote.log.storage.system.enable": "true"})
    LogConfig({"remote.storage.enable": "true"}, tiered)
    assert str(error({"remote.storage.enable": "true", "cleanup.policy": "compact"}, tiered)) == (
        "Remote log storage only supports topics with cleanup.policy=delete or "
        "cleanup.policy being an empty list."
    )
    assert str(
        error(
            {"remote.storage.enable": "true", "retention.ms": "100", "local.retention.ms": "200"},
            tiered,
        )
    ) == (
        "Invalid value 200 for configuration local.retention.ms: "
        "Value must not be more than retention.ms property value: 100"
    )
    assert str(
        error(
            {
                "remote.storage.enable": "true",
                "retention.bytes": "100",
                "local.retention.bytes": "-1",
            },
            tiered,
        )
    ) == (
        "Invalid value -1 for configuration local.retention.bytes: "
        "Value must not be -1 as retention.bytes value is set as 100."
    )


def test_describe_sources_and_synonyms() -> None:
    broker = BrokerConfig({"log.retention.minutes": "5", "log.segment.bytes": "2000000"})
    topic = LogConfig({"retention.bytes": "10", "cleanup.policy": "compact,delete"}, broker)
    entries = {e.name: e for e in topic.describe()}
    assert set(entries) == set(LogConfig.names())

    overridden = entries["retention.bytes"]
    assert overridden.value == "10"
    assert overridden.source is ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert overridden.synonyms == [
        ConfigSynonym("retention.bytes", "10", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        ConfigSynonym("log.retention.bytes", "-1", ConfigSource.DEFAULT_CONFIG),
    ]
    assert not overridden.is_default and not overridden.read_only and not overridden.is_sensitive
    assert entries["cleanup.policy"].value == "compact,delete"

    static = entries["segment.bytes"]
    assert (static.value, static.source) == ("2000000", ConfigSource.STATIC_BROKER_CONFIG)
    assert static.synonyms == [
        ConfigSynonym("log.segment.bytes", "2000000", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.segment.bytes", "1073741824", ConfigSource.DEFAULT_CONFIG),
    ]

    # Kafka lists synonyms only from the primary broker name (log.retention.ms) on: a value
    # coming from log.retention.minutes is reported as DEFAULT_CONFIG without synonyms.
    retention = entries["retention.ms"]
    assert (retention.value, retention.source, retention.synonyms) == (
        "300000",
        ConfigSource.DEFAULT_CONFIG,
        [],
    )
    assert retention.is_default

    # Topic-only configs have no broker synonym.
    assert entries["remote.storage.enable"].synonyms == []
    assert entries["leader.replication.throttled.replicas"].value == ""

    # Java prints doubles and longs its way.
    assert entries["min.cleanable.dirty.ratio"].value == "0.5"
    assert entries["max.compaction.lag.ms"].value == str(LONG_MAX)


def test_describe_with_dynamic_broker_configs() -> None:
    broker = BrokerConfig({"log.retention.hours": "24"}).with_dynamic(
        per_broker={"log.segment.bytes": "3000000"},
        cluster_default={"log.retention.ms": "1000", "log.cleaner.min.cleanable.ratio": "0.2"},
    )
    entries = {e.name: e for e in LogConfig({}, broker).describe()}
    assert entries["segment.bytes"].source is ConfigSource.DYNAMIC_BROKER_CONFIG
    assert entries["retention.ms"].value == "1000"
    assert entries["retention.ms"].synonyms == [
        ConfigSynonym("log.retention.ms", "1000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "24", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    ]
    ratio = entries["min.cleanable.dirty.ratio"]
    assert (ratio.value, ratio.source) == ("0.2", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)


def test_describe_filters_and_options() -> None:
    topic = LogConfig({"retention.ms": "5"})
    [entry] = topic.describe(["retention.ms"], include_synonyms=False, include_documentation=True)
    assert entry.name == "retention.ms"
    assert entry.synonyms == []
    assert entry.type is Type.LONG
    assert entry.documentation
    assert LogConfig.server_config_name("retention.ms") == "log.retention.ms"
    assert LogConfig.server_config_name("remote.storage.enable") is None
