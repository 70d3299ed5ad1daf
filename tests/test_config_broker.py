"""Broker configs: Kafka 4.3's defaults and checks, retention/roll precedence, listeners, dynamic
updates and DescribeConfigs."""

from __future__ import annotations

import typing

import pytest

from kafkacore.config import (
    BROKER_CONFIG_DEF,
    DYNAMIC_CONFIGS,
    DYNAMIC_UPDATE_MODES,
    KAFKACORE_DYNAMIC_UPDATE_MODES,
    PER_BROKER_CONFIGS,
    TOPIC_CONFIG_SYNONYMS,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    ConfigSynonym,
    Endpoint,
    Type,
    broker_config_synonyms,
)

HOUR = 3600 * 1000
LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


def error(props: dict[str, typing.Any], **kwargs: typing.Any) -> str:
    with pytest.raises(ConfigError) as info:
        BrokerConfig(props, **kwargs)
    return str(info.value)


def test_defaults_are_kafkas() -> None:
    b = BrokerConfig({})
    assert b.unknown == []
    assert b.listeners == ["PLAINTEXT://:9092"]
    assert b.advertised_listeners is None
    assert b.log_dirs == ["/tmp/kafka-logs"]
    assert b.num_partitions == 1
    assert b.default_replication_factor == 1
    assert b.auto_create_topics_enable is True
    assert b.delete_topic_enable is True
    assert b.message_max_bytes == 1048588
    assert b.socket_request_max_bytes == 100 * 1024 * 1024
    assert b.socket_send_buffer_bytes == b.socket_receive_buffer_bytes == 102400
    assert (b.num_io_threads, b.num_network_threads) == (8, 3)
    assert b.connections_max_idle_ms == 600000
    assert b.max_connections == b.max_connections_per_ip == INT_MAX
    assert b.queued_max_requests == 500
    assert b.log_segment_bytes == 1024**3
    assert b.log_roll_ms == 168 * HOUR
    assert b.log_roll_jitter_ms == 0
    assert b.log_retention_ms == 168 * HOUR
    assert b.log_retention_bytes == -1
    assert b.log_retention_check_interval_ms == 300000
    assert b.log_index_size_max_bytes == 10 * 1024 * 1024
    assert b.log_index_interval_bytes == 4096
    assert b.log_flush_interval_messages == LONG_MAX
    assert b.log_flush_interval_ms == LONG_MAX
    assert b.log_flush_scheduler_interval_ms == LONG_MAX
    assert b.log_flush_offset_checkpoint_interval_ms == 60000
    assert b.log_flush_start_offset_checkpoint_interval_ms == 60000
    assert b.log_cleanup_policy == ["delete"]
    assert b.log_cleaner_enable is True
    assert b.log_cleaner_threads == 1
    assert b.log_cleaner_dedupe_buffer_size == 128 * 1024 * 1024
    assert b.log_cleaner_io_buffer_size == 512 * 1024
    assert b.log_cleaner_io_buffer_load_factor == 0.9
    assert b.log_cleaner_io_max_bytes_per_second == 1.7976931348623157e308
    assert b.log_cleaner_backoff_ms == 15000
    assert b.log_cleaner_min_cleanable_ratio == 0.5
    assert b.log_cleaner_delete_retention_ms == 24 * HOUR
    assert b.log_segment_delete_delay_ms == 60000
    assert b.log_message_timestamp_type == "CreateTime"
    assert b.log_message_timestamp_after_max_ms == HOUR
    assert b.log_preallocate is False
    assert b.num_recovery_threads_per_data_dir == 2
    assert b.min_insync_replicas == 1
    assert b.unclean_leader_election_enable is False
    assert b.compression_type == "producer"
    assert b.offsets_topic_num_partitions == 50
    assert b.offsets_topic_replication_factor == 3
    assert b.offsets_topic_segment_bytes == 100 * 1024 * 1024
    assert b.offsets_retention_minutes == 10080
    assert b.offsets_retention_check_interval_ms == 600000
    assert b.offsets_commit_timeout_ms == 5000
    assert b.offsets_load_buffer_size == 5 * 1024 * 1024
    assert b.offsets_topic_compression_codec == 0
    assert b.group_initial_rebalance_delay_ms == 3000
    assert (b.group_min_session_timeout_ms, b.group_max_session_timeout_ms) == (6000, 1800000)
    assert b.group_max_size == INT_MAX
    assert b.transaction_state_log_replication_factor == 3
    assert b.transaction_state_log_min_isr == 2
    assert b.transaction_max_timeout_ms == 900000
    assert b.replica_lag_time_max_ms == 30000
    assert b.listener_security_protocol_map == (
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
    )
    # kafkacore's own: no id configured yet, and no KRaft roles.
    assert (b.node_id, b.broker_id, b.process_roles) == (-1, -1, None)


def test_attributes_cover_every_config_with_its_kafka_type() -> None:
    hints = typing.get_type_hints(BrokerConfig)
    python_types = {
        Type.BOOLEAN: bool,
        Type.INT: int,
        Type.SHORT: int,
        Type.LONG: int,
        Type.DOUBLE: float,
        Type.STRING: str,
        Type.LIST: list,
        Type.CLASS: str,
    }
    b = BrokerConfig({})
    for key in BROKER_CONFIG_DEF.config_keys():
        attribute = key.name.replace(".", "_")
        assert attribute in hints, key.name
        value = getattr(b, attribute)
        if value is not None:
            assert type(value) is python_types[key.type], key.name


def test_unknown_configs_are_collected_or_refused() -> None:
    b = BrokerConfig(
        {"foo.bar": "1", "num.partitions": "3", "leader.replication.throttled.rate": "5"}
    )
    assert b.unknown == ["foo.bar"]
    assert b.num_partitions == 3
    assert b.leader_replication_throttled_rate == 5
    assert error({"foo.bar": "1"}, strict=True) == "Unknown broker config name: foo.bar"


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({}, 168 * HOUR),
        ({"log.retention.hours": "1"}, HOUR),
        ({"log.retention.minutes": "5", "log.retention.hours": "1"}, 5 * 60 * 1000),
        ({"log.retention.ms": "77", "log.retention.minutes": "5"}, 77),
        ({"log.retention.ms": "-1"}, -1),
        ({"log.retention.ms": "-7"}, -1),  # any negative value means unlimited
        ({"log.retention.hours": "-1"}, -1),
    ],
)
def test_retention_precedence(props: dict[str, str], expected: int) -> None:
    assert BrokerConfig(props).log_retention_ms == expected


def test_retention_of_zero_is_refused() -> None:
    assert error({"log.retention.ms": "0"}) == (
        "requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1"
    )


def test_roll_jitter_and_flush_precedence() -> None:
    assert BrokerConfig({"log.roll.hours": "2"}).log_roll_ms == 2 * HOUR
    assert BrokerConfig({"log.roll.ms": "1000", "log.roll.hours": "2"}).log_roll_ms == 1000
    assert BrokerConfig({"log.roll.jitter.hours": "1"}).log_roll_jitter_ms == HOUR
    assert (
        BrokerConfig({"log.roll.jitter.ms": "5", "log.roll.jitter.hours": "1"}).log_roll_jitter_ms
        == 5
    )
    assert BrokerConfig({"log.flush.scheduler.interval.ms": "77"}).log_flush_interval_ms == 77
    b = BrokerConfig({"log.flush.interval.ms": "5", "log.flush.scheduler.interval.ms": "77"})
    assert b.log_flush_interval_ms == 5
    assert b.get("log.roll.ms") is None  # get() is the raw value
    assert (
        error({"log.roll.ms": "0"})
        == "requirement failed: log.roll.ms must be greater than or equal to 1"
    )
    assert error({"log.roll.jitter.ms": "-1"}) == (
        "requirement failed: log.roll.jitter.ms must be greater than or equal to 0"
    )


def test_log_dirs_win_over_log_dir() -> None:
    assert BrokerConfig({"log.dirs": "/a, /b", "log.dir": "/c"}).log_dirs == ["/a", "/b"]
    assert BrokerConfig({"log.dir": "/c"}).log_dirs == ["/c"]
    assert BrokerConfig({"log.dirs": "/a,/a"}).log_dirs == ["/a"]
    assert error({"log.dirs": ""}) == (
        "Configuration 'log.dirs' must not be empty. Valid values include: any non-empty value"
    )
    assert error({"log.dirs": "/a,,/b"}) == "Configuration 'log.dirs' values must not be empty."


def test_node_id_and_broker_id() -> None:
    assert (BrokerConfig({"node.id": "3"}).broker_id, BrokerConfig({"broker.id": "4"}).node_id) == (
        3,
        4,
    )
    assert error({"node.id": "1", "broker.id": "2"}) == (
        "You must set `node.id` to the same value as `broker.id`."
    )
    assert (
        error({"node.id": "-5"})
        == "Invalid value -5 for configuration node.id: Value must be at least 0"
    )
    assert error({"process.roles": ""}) == (
        "Configuration 'process.roles' must not be empty. "
        "Valid values include: [broker, controller]"
    )


def test_listeners_parse_into_endpoints() -> None:
    b = BrokerConfig(
        {
            "listeners": "PLAINTEXT://:9092,internal://127.0.0.1:9093,V6://[::1]:9094",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,V6:SSL",
            "advertised.listeners": "PLAINTEXT://broker.example:9092",
        }
    )
    assert b.listener_endpoints() == [
        Endpoint("PLAINTEXT", "PLAINTEXT", None, 9092),
        Endpoint("INTERNAL", "PLAINTEXT", "127.0.0.1", 9093),
        Endpoint("V6", "SSL", "::1", 9094),
    ]
    assert b.advertised_endpoints() == [Endpoint("PLAINTEXT", "PLAINTEXT", "broker.example", 9092)]
    assert b.listener_endpoints()[2].connection_string == "V6://[::1]:9094"
    assert b.inter_broker_listener() == ("PLAINTEXT", "PLAINTEXT")
    # Without advertised.listeners, clients are given the listeners.
    assert BrokerConfig({}).advertised_endpoints() == [
        Endpoint("PLAINTEXT", "PLAINTEXT", None, 9092)
    ]


@pytest.mark.parametrize(
    "props",
    [
        {"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
        {"listeners": "PLAINTEXT://0.0.0.0:9092"},  # advertised defaults to listeners
    ],
)
def test_advertising_the_wildcard_address_is_refused(props: dict[str, str]) -> None:
    with pytest.raises(ConfigError) as info:
        BrokerConfig(props)
    assert str(info.value) == (
        "requirement failed: advertised.listeners cannot use the nonroutable meta-address "
        "0.0.0.0. Use a routable IP address."
    )
    assert info.value.name == "advertised.listeners"


def test_binding_the_wildcard_address_is_fine_when_advertising_a_host() -> None:
    b = BrokerConfig(
        {"listeners": "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://h:9092"}
    )
    assert b.listener_endpoints()[0].host == "0.0.0.0"


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        (
            {"listeners": "FOO://:9092"},
            "Error creating broker listeners from '[FOO://:9092]': "
            "No security protocol defined for listener FOO",
        ),
        (
            {"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9094"},
            "Error creating broker listeners from '[PLAINTEXT://:9092, PLAINTEXT://:9094]': "
            "Each listener must have a different name, listeners: "
            "[PLAINTEXT://:9092, PLAINTEXT://:9094]",
        ),
        (
            {"listeners": "PLAINTEXT://:9092,SSL://:9092"},
            "Error creating broker listeners from '[PLAINTEXT://:9092, SSL://:9092]': "
            "Each listener must have a different port, listeners: "
            "[PLAINTEXT://:9092, SSL://:9092]",
        ),
        (
            {"listeners": "garbage"},
            "Error creating broker listeners from '[garbage]': "
            "Unable to parse garbage to a broker endpoint",
        ),
        (
            {"listeners": ""},
            "Configuration 'listeners' must not be empty. "
            "Valid values include: any non-empty value",
        ),
        (
            {"inter.broker.listener.name": "FOO"},
            "Listener with name FOO defined in inter.broker.listener.name not found in "
            "listener.security.protocol.map.",
        ),
        (
            {"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "SSL"},
            "Only one of inter.broker.listener.name and security.inter.broker.protocol "
            "should be set.",
        ),
        (
            {"listener.security.protocol.map": "PLAINTEXT:FOO"},
            "Invalid security protocol `FOO` defined in listener.security.protocol.map",
        ),
        (
            {
                "listeners": "PLAINTEXT://:9092,SSL://:9093",
                "inter.broker.listener.name": "SSL",
                "advertised.listeners": "PLAINTEXT://h:9092",
            },
            "requirement failed: inter.broker.listener.name must be a listener name defined in "
            "advertised.listeners. The valid options based on currently configured listeners "
            "are PLAINTEXT",
        ),
        (
            {"advertised.listeners": "PLAINTEXT://h:9092,SSL://h:9095"},
            "requirement failed: advertised.listeners listener names must be equal to or a "
            "subset of the ones defined in listeners. Found PLAINTEXT,SSL. The valid options "
            "based on the current configuration are PLAINTEXT",
        ),
    ],
)
def test_listener_errors(props: dict[str, str], expected: str) -> None:
    assert error(props) == expected


def test_ipv4_and_ipv6_may_share_a_port() -> None:
    BrokerConfig(
        {
            "listeners": "PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092",
            "advertised.listeners": "PLAINTEXT://h:9092",
        }
    )


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        (
            {"log.cleaner.dedupe.buffer.size": "1048576"},
            "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner "
            "thread.",
        ),
        ({"log.cleaner.threads": "0"}, "/ by zero"),
        (
            {"replica.fetch.wait.max.ms": "40000"},
            "requirement failed: replica.socket.timeout.ms should always be at least "
            "replica.fetch.wait.max.ms to prevent unnecessary socket timeouts",
        ),
        (
            {"replica.fetch.wait.max.ms": "31000", "replica.socket.timeout.ms": "40000"},
            "requirement failed: replica.fetch.wait.max.ms should always be less than or equal "
            "to replica.lag.time.max.ms to prevent frequent changes in ISR",
        ),
        (
            {"queued.max.request.bytes": "10"},
            "requirement failed: queued.max.request.bytes must be larger or equal to "
            "socket.request.max.bytes",
        ),
        (
            {"max.connections.per.ip": "0"},
            "requirement failed: max.connections.per.ip can be set to zero only if "
            "max.connections.per.ip.overrides property is set.",
        ),
        (
            {"connection.failed.authentication.delay.ms": "700000"},
            "requirement failed: connection.failed.authentication.delay.ms=700000 should always "
            "be less than connections.max.idle.ms=600000 to prevent failed authentication "
            "responses from timing out",
        ),
        (
            {"log.segment.bytes": "1000"},
            "Invalid value 1000 for configuration log.segment.bytes: "
            "Value must be at least 1048576",
        ),
        (
            {"num.partitions": "1.5"},
            "Invalid value 1.5 for configuration num.partitions: Not a number of type INT",
        ),
        (
            {"offsets.topic.replication.factor": "40000"},
            "Invalid value 40000 for configuration offsets.topic.replication.factor: "
            "Not a number of type SHORT",
        ),
        (
            {"group.consumer.migration.policy": "foo"},
            "Invalid value foo for configuration group.consumer.migration.policy: String must be "
            "one of (case insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL",
        ),
    ],
)
def test_cross_config_requirements(props: dict[str, str], expected: str) -> None:
    assert error(props) == expected


def test_values_are_trimmed_and_case_insensitive_where_kafka_is() -> None:
    b = BrokerConfig(
        {
            "auto.create.topics.enable": " TRUE ",
            "max.connections.per.ip": "0",
            "max.connections.per.ip.overrides": "127.0.0.1:5",
        }
    )
    assert b.auto_create_topics_enable is True


def test_extract_log_config_map_covers_every_topic_config_with_a_broker_synonym() -> None:
    assert set(BrokerConfig({}).extract_log_config_map()) == set(TOPIC_CONFIG_SYNONYMS)


def test_dynamic_configs_are_kafkas() -> None:
    assert "log.retention.ms" in DYNAMIC_CONFIGS
    assert "log.retention.hours" not in DYNAMIC_CONFIGS  # only the primary synonym
    assert "num.partitions" not in DYNAMIC_CONFIGS
    assert "advertised.listeners" not in DYNAMIC_CONFIGS
    assert {
        "message.max.bytes",
        "num.io.threads",
        "log.cleaner.threads",
        "log.segment.bytes",
        "min.insync.replicas",
        "unclean.leader.election.enable",
    } <= DYNAMIC_CONFIGS
    assert DYNAMIC_UPDATE_MODES["listeners"] == "per-broker"
    assert DYNAMIC_UPDATE_MODES["log.cleaner.threads"] == "cluster-wide"
    assert PER_BROKER_CONFIGS <= DYNAMIC_CONFIGS
    assert len(DYNAMIC_UPDATE_MODES) == 102  # Kafka's
    # and kafkacore's own: the partition balancer's, all changed as the cluster default
    assert set(DYNAMIC_UPDATE_MODES) | set(KAFKACORE_DYNAMIC_UPDATE_MODES) == DYNAMIC_CONFIGS
    assert set(KAFKACORE_DYNAMIC_UPDATE_MODES.values()) == {"cluster-wide"}
    assert "auto.partition.balance.paused" in KAFKACORE_DYNAMIC_UPDATE_MODES


def test_dynamic_precedence_per_broker_over_default_over_static() -> None:
    static = BrokerConfig({"message.max.bytes": "1000", "num.io.threads": "4"})
    assert static.with_dynamic({}, {"message.max.bytes": "2000"}).message_max_bytes == 2000
    both = static.with_dynamic({"message.max.bytes": "3000"}, {"message.max.bytes": "2000"})
    assert both.message_max_bytes == 3000
    assert both.num_io_threads == 4
    assert static.message_max_bytes == 1000  # immutable
    assert both.dynamic_broker_props == {"message.max.bytes": "3000"}
    assert both.dynamic_default_props == {"message.max.bytes": "2000"}


def test_a_dynamic_value_replaces_its_static_synonyms() -> None:
    # Static log.retention.minutes beats static log.retention.hours; a dynamic log.retention.ms
    # removes both from the effective configuration.
    b = BrokerConfig({"log.retention.minutes": "5"}).with_dynamic({"log.retention.ms": "1000"})
    assert b.log_retention_ms == 1000
    assert b.get("log.retention.minutes") is None
    assert "log.retention.minutes" not in b.originals


@pytest.mark.parametrize(
    ("per_broker", "cluster_default", "expected"),
    [
        (
            {"log.retention.hours": "5"},
            {},
            "Cannot update these configs dynamically: [log.retention.hours]",
        ),
        (
            {"num.partitions": "5", "log.retention.hours": "5", "auto.create.topics.enable": "x"},
            {},
            "Cannot update these configs dynamically: "
            "[log.retention.hours, num.partitions, auto.create.topics.enable]",
        ),
        (
            {},
            {"listeners": "PLAINTEXT://:9092"},
            "Cannot update these configs at default cluster level, broker id must be specified: "
            "[listeners]",
        ),
        (
            {"ssl.keystore.location": "/x"},
            {},
            "These security configs can be dynamically updated only per-listener using the "
            "listener prefix: [ssl.keystore.location]",
        ),
        (
            {"log.retention.ms": "abc"},
            {},
            "Invalid value abc for configuration log.retention.ms: Not a number of type LONG",
        ),
        (
            {"leader.replication.throttled.rate": "-1"},
            {},
            "Invalid value -1 for configuration leader.replication.throttled.rate: "
            "Value must be at least 0",
        ),
        (
            {"num.io.threads": "17"},
            {},
            "Dynamic thread count update validation failed for num.io.threads=17, value should "
            "not be greater than double the current value 8",
        ),
        (
            {"num.io.threads": "3"},
            {},
            "Dynamic thread count update validation failed for num.io.threads=3, value should be "
            "at least half the current value 8",
        ),
        (
            {"log.local.retention.ms": "5000", "log.retention.ms": "1000"},
            {},
            "Invalid value 5000 for configuration log.local.retention.ms: "
            "Value must not be more than log.retention.ms property value: 1000",
        ),
    ],
)
def test_dynamic_update_errors(
    per_broker: dict[str, str], cluster_default: dict[str, str], expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        BrokerConfig({}).with_dynamic(per_broker, cluster_default)
    assert str(info.value) == expected


def test_stored_dynamic_values_that_are_invalid_are_ignored() -> None:
    b = BrokerConfig({}).with_dynamic(
        {"log.retention.ms": "bad", "message.max.bytes": "5000", "num.partitions": "9"},
        {"listeners": "PLAINTEXT://:1"},
        validate=False,
    )
    assert b.message_max_bytes == 5000
    assert b.log_retention_ms == 168 * HOUR
    assert b.num_partitions == 1
    assert b.listeners == ["PLAINTEXT://:9092"]
    assert set(b.ignored_dynamic) == {"log.retention.ms", "num.partitions", "listeners"}
    # Custom (unknown) dynamic configs are kept.
    assert BrokerConfig({}).with_dynamic({"custom.x": "1"}).originals["custom.x"] == "1"


def test_broker_config_synonyms() -> None:
    assert broker_config_synonyms("log.retention.hours") == [
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.hours",
    ]
    assert broker_config_synonyms("log.roll.ms") == ["log.roll.ms", "log.roll.hours"]
    assert broker_config_synonyms("log.flush.interval.ms") == [
        "log.flush.interval.ms",
        "log.flush.scheduler.interval.ms",
    ]
    assert broker_config_synonyms("listener.name.internal.ssl.keystore.location") == [
        "listener.name.internal.ssl.keystore.location",
        "ssl.keystore.location",
    ]
    assert broker_config_synonyms("listener.name.internal.plain.sasl.jaas.config") == [
        "listener.name.internal.plain.sasl.jaas.config",
        "sasl.jaas.config",
    ]
    assert broker_config_synonyms("log.segment.bytes") == ["log.segment.bytes"]


def test_describe_sources_synonyms_and_read_only() -> None:
    b = BrokerConfig({"log.retention.minutes": "5", "node.id": "1", "foo.bar": "x"}).with_dynamic(
        {"log.retention.ms": "1000"}
    )
    entries = {e.name: e for e in b.describe()}
    ms = entries["log.retention.ms"]
    assert (ms.value, ms.source, ms.read_only) == (
        "1000",
        ConfigSource.DYNAMIC_BROKER_CONFIG,
        False,
    )
    assert ms.synonyms == [
        ConfigSynonym("log.retention.ms", "1000", ConfigSource.DYNAMIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.minutes", "5", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    ]
    minutes = entries["log.retention.minutes"]
    # Replaced by the dynamic log.retention.ms, so unset (null) in the effective config.
    assert (minutes.value, minutes.source, minutes.read_only) == (
        None,
        ConfigSource.STATIC_BROKER_CONFIG,
        True,
    )
    hours = entries["log.retention.hours"]
    assert (hours.value, hours.source, hours.is_default) == (
        "168",
        ConfigSource.DEFAULT_CONFIG,
        True,
    )
    assert hours.synonyms == [
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG)
    ]
    node = entries["node.id"]
    assert (node.value, node.source, node.synonyms) == (
        "1",
        ConfigSource.STATIC_BROKER_CONFIG,
        [ConfigSynonym("node.id", "1", ConfigSource.STATIC_BROKER_CONFIG)],
    )
    assert entries["broker.id"].synonyms == [
        ConfigSynonym("broker.id", "1", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("broker.id", "-1", ConfigSource.DEFAULT_CONFIG),
    ]
    # A config Kafka does not know could hold a secret: it is described as sensitive.
    unknown = entries["foo.bar"]
    assert (unknown.value, unknown.is_sensitive, unknown.read_only) == (None, True, True)
    assert entries["listeners"].value == "PLAINTEXT://:9092"
    assert entries["log.cleaner.io.max.bytes.per.second"].value == "1.7976931348623157E308"
    assert entries["log.cleanup.policy"].value == "delete"
    # Internal configs are not described unless set.
    assert "log.initial.task.delay.ms" not in entries
    assert [e.name for e in b.describe(["num.io.threads"])] == ["num.io.threads"]


def test_describe_cluster_default() -> None:
    b = BrokerConfig({"message.max.bytes": "1000"}).with_dynamic(
        {"num.io.threads": "9"}, {"message.max.bytes": "2000"}
    )
    [entry] = b.describe_cluster_default()
    assert (entry.name, entry.value, entry.source) == (
        "message.max.bytes",
        "2000",
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    assert entry.synonyms == [
        ConfigSynonym("message.max.bytes", "2000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    ]
