"""Broker configuration: Kafka's broker config names, types, defaults and validators, the
cross-config checks ``KafkaConfig`` makes at start-up, and dynamic (AlterConfigs) updates with
Kafka's precedence DYNAMIC_BROKER_CONFIG > DYNAMIC_DEFAULT_BROKER_CONFIG > STATIC_BROKER_CONFIG
> DEFAULT_CONFIG.

Facts follow Apache Kafka 4.3 (``AbstractKafkaConfig.CONFIG_DEF``, ``KafkaConfig``,
``DynamicBrokerConfig``, ``ConfigHelper``); ``tests/interop/test_config_interop.py`` checks the
definitions, messages and describe output against Kafka's own classes. Where kafkacore's
broker is not a KRaft node it keeps Kafka 3.x semantics, and says so:

* ``node.id`` defaults to -1 (unset) and ``process.roles`` / ``controller.listener.names`` may be
  left unset: kafkacore's controller is embedded (or ZooKeeper-backed), not a KRaft quorum.
  Kafka 4 requires all three; an explicit ``node.id`` below 0 is refused with Kafka 4's message.
* ``zookeeper.connect`` and its four companions, and ``controlled.shutdown.max.retries`` /
  ``controlled.shutdown.retry.backoff.ms``, are Kafka 3.9's definitions, kept for the
  ZooKeeper-backed multi-broker mode.
* With ``process.roles`` set, Kafka 4.3's KRaft checks are made (``_validate_kraft``: the
  voters or bootstrap servers, the node id among the voters of a controller, the controller
  listeners, the heartbeat interval against the session timeout); the entries of
  ``controller.quorum.voters`` / ``controller.quorum.bootstrap.servers`` are parsed with
  Kafka's messages (:mod:`kafkacore.config.quorum`).

:class:`BrokerConfig` objects are immutable; ``with_dynamic`` returns a new one. They are safe
to share between threads.

The definitions are in :mod:`kafkacore.config.broker_defs`, the dynamic update modes and the
validation of dynamic updates in :mod:`kafkacore.config.dynamic`, listener parsing in
:mod:`kafkacore.config.listeners` and the DescribeConfigs shapes in
:mod:`kafkacore.config.describe`; their public names are importable from here too.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from kafkacore.config.broker_defs import (
    BROKER_COMPRESSION_TYPES,
    BROKER_CONFIG_DEF,
    DYNAMIC_ONLY_BROKER_CONFIG_DEF,
    SECURITY_PROTOCOLS,
)
from kafkacore.config.defs import (
    ConfigError,
    Password,
    Type,
    convert_to_string,
    convert_to_string_with_password,
)
from kafkacore.config.describe import ConfigEntry, ConfigSource, ConfigSynonym
from kafkacore.config.dynamic import (
    DYNAMIC_CONFIGS,
    DYNAMIC_UPDATE_MODES,
    KAFKACORE_DYNAMIC_UPDATE_MODES,
    PER_BROKER_CONFIGS,
    _drop_invalid_dynamic,
    _validate_dynamic,
    _validate_reconfiguration,
)
from kafkacore.config.listeners import Endpoint, _requirement, parse_csv_map, parse_listeners
from kafkacore.config.quorum import parse_voter_ids
from kafkacore.config.synonyms import broker_config_synonyms

logger = logging.getLogger("kafkacore.config")

__all__ = [
    "BROKER_COMPRESSION_TYPES",
    "BROKER_CONFIG_DEF",
    "DYNAMIC_CONFIGS",
    "DYNAMIC_ONLY_BROKER_CONFIG_DEF",
    "DYNAMIC_UPDATE_MODES",
    "KAFKACORE_DYNAMIC_UPDATE_MODES",
    "PER_BROKER_CONFIGS",
    "BrokerConfig",
    "ConfigEntry",
    "ConfigSource",
    "ConfigSynonym",
    "Endpoint",
    "attribute_name",
    "broker_config_type",
    "parse_listeners",
]

# ---------------------------------------------------------------------------------------------
# BrokerConfig


def attribute_name(config_name: str) -> str:
    """``log.retention.ms`` -> ``log_retention_ms``."""
    return config_name.replace(".", "_").replace("-", "_")


def _to_strings(props: Mapping[str, object]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in props.items():
        s = convert_to_string_with_password(v)
        if s is not None:
            out[k] = s
    return out


def _override(props: dict[str, object], overrides: Mapping[str, object]) -> None:
    """Kafka's ``overrideProps``: a dynamic value replaces its synonyms too, so a dynamic
    ``log.retention.hours`` beats a static ``log.retention.ms``."""
    for name, value in overrides.items():
        for synonym in broker_config_synonyms(name, match_listener_override=False):
            props.pop(synonym, None)
        props[name] = value


_LISTENER_OVERRIDE_RE: Final = re.compile(r"listener\.name\.[^.]+\.(?:[a-z0-9-]+\.)?(.+)")


def _is_listener_override(name: str) -> bool:
    """``listener.name.<l>.<known key>`` or ``listener.name.<l>.<mechanism>.<known key>``."""
    m = _LISTENER_OVERRIDE_RE.fullmatch(name)
    if m is None:
        return False
    rest = name[len("listener.name.") :].split(".", 1)[1]
    return rest in BROKER_CONFIG_DEF or m.group(1) in BROKER_CONFIG_DEF


class BrokerConfig:
    """A broker's configuration, parsed and checked as Kafka's ``KafkaConfig`` does.

    ``BrokerConfig(props)`` takes the static configuration (``server.properties`` strings, or
    typed values); unknown names are collected in :attr:`unknown` (for the caller to warn
    about), or refused with ``strict=True``. Every known config is an attribute named after it
    (``log.segment.bytes`` -> ``log_segment_bytes``) holding Kafka's typed value; a few
    attributes hold the value Kafka derives rather than the raw setting:

    * ``log_retention_ms``: ``log.retention.ms``, else ``log.retention.minutes``, else
      ``log.retention.hours``, in milliseconds; any negative value becomes -1 (unlimited).
    * ``log_roll_ms`` / ``log_roll_jitter_ms``: the ``.ms`` setting, else the ``.hours`` one.
    * ``log_flush_interval_ms``: falls back to ``log.flush.scheduler.interval.ms``.
    * ``log_dirs``: ``log.dirs`` if set, else ``log.dir`` (always a list).
    * ``node_id`` / ``broker_id``: each falls back to the other.

    :meth:`get` returns the raw parsed value of any config by its Kafka name.
    Raises :class:`ConfigError` with Kafka's message for any invalid value or combination.
    """

    # Annotations of the config attributes (set in __init__ from BROKER_CONFIG_DEF).
    broker_id: int
    message_max_bytes: int
    num_io_threads: int
    num_replica_alter_log_dirs_threads: int | None
    background_threads: int
    request_timeout_ms: int
    socket_connection_setup_timeout_ms: int
    socket_connection_setup_timeout_max_ms: int
    authorizer_class_name: str
    super_users: str | None
    allow_everyone_if_no_acl_found: bool
    early_start_listeners: list[str] | None
    broker_rack: str | None
    controlled_shutdown_enable: bool
    controlled_shutdown_max_retries: int
    controlled_shutdown_retry_backoff_ms: int
    delete_topic_enable: bool
    compression_type: str
    compression_gzip_level: int
    compression_lz4_level: int
    compression_zstd_level: int
    max_incremental_fetch_session_cache_slots: int
    fetch_max_bytes: int
    max_request_partition_size_limit: int
    unstable_api_versions_enable: bool
    unstable_feature_versions_enable: bool
    node_id: int
    process_roles: list[str] | None
    controller_listener_names: list[str] | None
    initial_broker_registration_timeout_ms: int
    broker_heartbeat_interval_ms: int
    broker_session_timeout_ms: int
    sasl_mechanism_controller_protocol: str
    metadata_log_dir: str | None
    metadata_log_segment_bytes: int
    metadata_log_segment_ms: int
    metadata_max_retention_bytes: int
    metadata_max_retention_ms: int
    metadata_max_idle_interval_ms: int
    metadata_log_max_record_bytes_between_snapshots: int
    metadata_log_max_snapshot_interval_ms: int
    server_max_startup_time_ms: int
    controller_quorum_voters: list[str]
    controller_quorum_bootstrap_servers: list[str]
    controller_quorum_election_timeout_ms: int
    controller_quorum_fetch_timeout_ms: int
    controller_quorum_election_backoff_max_ms: int
    controller_quorum_append_linger_ms: int
    controller_quorum_request_timeout_ms: int
    controller_quorum_retry_backoff_ms: int
    controller_quorum_auto_join_enable: bool
    controller_quorum_fetch_max_bytes: int
    controller_quorum_fetch_snapshot_max_bytes: int
    zookeeper_connect: str | None
    zookeeper_session_timeout_ms: int
    zookeeper_connection_timeout_ms: int | None
    zookeeper_set_acl: bool
    zookeeper_max_in_flight_requests: int
    listeners: list[str]
    console_listeners: list[str] | None
    console_read_only: bool
    console_audit_topic: str
    advertised_listeners: list[str] | None
    listener_security_protocol_map: str
    socket_send_buffer_bytes: int
    socket_receive_buffer_bytes: int
    socket_request_max_bytes: int
    socket_listen_backlog_size: int
    max_connections_per_ip: int
    max_connections_per_ip_overrides: str
    max_connections: int
    max_connection_creation_rate: int
    connections_max_idle_ms: int
    connection_failed_authentication_delay_ms: int
    queued_max_requests: int
    queued_max_request_bytes: int
    num_network_threads: int
    controller_socket_timeout_ms: int
    default_replication_factor: int
    replica_lag_time_max_ms: int
    replica_socket_timeout_ms: int
    replica_socket_receive_buffer_bytes: int
    replica_fetch_max_bytes: int
    replica_fetch_wait_max_ms: int
    replica_fetch_backoff_ms: int
    replica_fetch_min_bytes: int
    replica_fetch_response_max_bytes: int
    num_replica_fetchers: int
    replica_high_watermark_checkpoint_interval_ms: int
    fetch_purgatory_purge_interval_requests: int
    producer_purgatory_purge_interval_requests: int
    delete_records_purgatory_purge_interval_requests: int
    auto_leader_rebalance_enable: bool
    leader_imbalance_check_interval_seconds: int
    leader_imbalance_per_broker_percentage: int
    unclean_leader_election_interval_ms: int
    unclean_leader_election_enable: bool
    security_inter_broker_protocol: str
    inter_broker_listener_name: str | None
    replica_selector_class: str | None
    follower_fetch_last_tiered_offset_enable: bool
    group_min_session_timeout_ms: int
    group_max_session_timeout_ms: int
    group_initial_rebalance_delay_ms: int
    group_max_size: int
    group_coordinator_rebalance_protocols: list[str]
    group_coordinator_threads: int
    group_coordinator_background_threads: int
    group_coordinator_append_linger_ms: int
    group_consumer_session_timeout_ms: int
    group_consumer_min_session_timeout_ms: int
    group_consumer_max_session_timeout_ms: int
    group_consumer_heartbeat_interval_ms: int
    group_consumer_min_heartbeat_interval_ms: int
    group_consumer_max_heartbeat_interval_ms: int
    group_consumer_max_size: int
    group_consumer_assignors: list[str]
    group_consumer_migration_policy: str
    group_consumer_assignment_interval_ms: int
    group_consumer_min_assignment_interval_ms: int
    group_consumer_max_assignment_interval_ms: int
    group_consumer_regex_refresh_interval_ms: int
    group_share_session_timeout_ms: int
    group_share_min_session_timeout_ms: int
    group_share_max_session_timeout_ms: int
    group_share_heartbeat_interval_ms: int
    group_share_min_heartbeat_interval_ms: int
    group_share_max_heartbeat_interval_ms: int
    group_share_max_size: int
    group_share_assignors: list[str]
    group_share_assignment_interval_ms: int
    group_share_min_assignment_interval_ms: int
    group_share_max_assignment_interval_ms: int
    group_share_initialize_retry_interval_ms: int
    group_share_delivery_count_limit: int
    group_share_max_delivery_count_limit: int
    group_share_min_delivery_count_limit: int
    group_share_record_lock_duration_ms: int
    group_share_min_record_lock_duration_ms: int
    group_share_max_record_lock_duration_ms: int
    group_share_partition_max_record_locks: int
    group_share_max_partition_max_record_locks: int
    group_share_min_partition_max_record_locks: int
    group_share_max_share_sessions: int
    group_share_persister_class_name: str
    share_fetch_purgatory_purge_interval_requests: int
    share_coordinator_threads: int
    share_coordinator_load_buffer_size: int
    share_coordinator_state_topic_compression_codec: int
    share_coordinator_append_linger_ms: int
    share_coordinator_cached_buffer_max_bytes: int
    share_coordinator_state_topic_num_partitions: int
    share_coordinator_state_topic_replication_factor: int
    share_coordinator_state_topic_min_isr: int
    share_coordinator_state_topic_segment_bytes: int
    share_coordinator_snapshot_update_records_per_snapshot: int
    share_coordinator_write_timeout_ms: int
    share_coordinator_state_topic_prune_interval_ms: int
    share_coordinator_cold_partition_snapshot_interval_ms: int
    offset_metadata_max_bytes: int
    offsets_load_buffer_size: int
    offsets_topic_replication_factor: int
    offsets_topic_num_partitions: int
    offsets_topic_segment_bytes: int
    offsets_topic_compression_codec: int
    offsets_retention_minutes: int
    offsets_retention_check_interval_ms: int
    offsets_commit_timeout_ms: int
    log_cleaner_threads: int
    log_cleaner_io_max_bytes_per_second: float
    log_cleaner_dedupe_buffer_size: int
    log_cleaner_io_buffer_size: int
    log_cleaner_io_buffer_load_factor: float
    log_cleaner_backoff_ms: int
    log_cleaner_min_cleanable_ratio: float
    log_cleaner_enable: bool
    log_cleaner_delete_retention_ms: int
    log_cleaner_min_compaction_lag_ms: int
    log_cleaner_max_compaction_lag_ms: int
    num_partitions: int
    log_dir: list[str]
    log_dirs: list[str]
    cordoned_log_dirs: list[str] | None
    auto_partition_balance_enable: bool
    auto_partition_balance_paused: bool
    auto_partition_balance_interval_ms: int
    auto_partition_balance_goals: list[str]
    auto_partition_balance_replica_imbalance_percentage: int
    auto_partition_balance_leader_imbalance_percentage: int
    auto_partition_balance_disk_imbalance_percentage: int
    auto_partition_balance_log_dir_imbalance_percentage: int
    auto_partition_balance_disk_high_water_mark_percentage: int
    auto_partition_balance_max_moves_in_flight: int
    auto_partition_balance_cooldown_ms: int
    auto_partition_balance_throttle_bytes_per_second: int
    auto_partition_balance_decommissioned_brokers: list[str]
    log_segment_bytes: int
    log_roll_ms: int
    log_roll_hours: int
    log_roll_jitter_ms: int
    log_roll_jitter_hours: int
    log_retention_ms: int
    log_retention_minutes: int | None
    log_retention_hours: int
    log_retention_bytes: int
    log_retention_check_interval_ms: int
    log_cleanup_policy: list[str]
    log_index_size_max_bytes: int
    log_index_interval_bytes: int
    log_flush_interval_messages: int
    log_segment_delete_delay_ms: int
    log_flush_scheduler_interval_ms: int
    log_flush_interval_ms: int
    log_flush_offset_checkpoint_interval_ms: int
    log_flush_start_offset_checkpoint_interval_ms: int
    log_preallocate: bool
    num_recovery_threads_per_data_dir: int
    auto_create_topics_enable: bool
    min_insync_replicas: int
    log_message_timestamp_type: str
    log_message_timestamp_before_max_ms: int
    log_message_timestamp_after_max_ms: int
    create_topic_policy_class_name: str | None
    alter_config_policy_class_name: str | None
    log_dir_failure_timeout_ms: int
    log_initial_task_delay_ms: int
    transaction_state_log_min_isr: int
    transaction_state_log_load_buffer_size: int
    transaction_state_log_replication_factor: int
    transaction_state_log_num_partitions: int
    transaction_state_log_segment_bytes: int
    transaction_partition_verification_enable: bool
    producer_id_expiration_ms: int
    producer_id_expiration_check_interval_ms: int
    add_partitions_to_txn_retry_backoff_max_ms: int
    add_partitions_to_txn_retry_backoff_ms: int
    transaction_two_phase_commit_enable: bool
    transactional_id_expiration_ms: int
    transaction_max_timeout_ms: int
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int
    transaction_remove_expired_transaction_cleanup_interval_ms: int
    quota_window_num: int
    replication_quota_window_num: int
    alter_log_dirs_replication_quota_window_num: int
    controller_quota_window_num: int
    quota_window_size_seconds: int
    replication_quota_window_size_seconds: int
    alter_log_dirs_replication_quota_window_size_seconds: int
    controller_quota_window_size_seconds: int
    client_quota_callback_class: str | None
    remote_log_storage_system_enable: bool
    remote_log_storage_manager_impl_prefix: str
    remote_log_metadata_manager_impl_prefix: str
    remote_log_storage_manager_class_name: str | None
    remote_log_storage_manager_class_path: str | None
    remote_log_metadata_manager_class_name: str
    remote_log_metadata_manager_class_path: str | None
    remote_log_metadata_manager_listener_name: str | None
    remote_log_metadata_custom_metadata_max_bytes: int
    remote_log_index_file_cache_total_size_bytes: int
    remote_log_index_file_cache_ttl_ms: int
    remote_log_manager_thread_pool_size: int
    remote_log_manager_copier_thread_pool_size: int
    remote_log_manager_expiration_thread_pool_size: int
    remote_log_manager_follower_thread_pool_size: int
    remote_log_manager_task_interval_ms: int
    remote_log_manager_task_retry_backoff_ms: int
    remote_log_manager_task_retry_backoff_max_ms: int
    remote_log_manager_task_retry_jitter: float
    remote_log_reader_threads: int
    remote_log_reader_max_pending_tasks: int
    log_local_retention_ms: int
    log_local_retention_bytes: int
    remote_log_manager_copy_max_bytes_per_second: int
    remote_log_manager_copy_quota_window_num: int
    remote_log_manager_copy_quota_window_size_seconds: int
    remote_log_manager_fetch_max_bytes_per_second: int
    remote_log_manager_fetch_quota_window_num: int
    remote_log_manager_fetch_quota_window_size_seconds: int
    remote_fetch_max_wait_ms: int
    remote_list_offsets_request_timeout_ms: int
    metric_reporters: list[str]
    metrics_num_samples: int
    metrics_sample_window_ms: int
    metrics_recording_level: str
    ssl_protocol: str
    ssl_provider: str | None
    ssl_cipher_suites: list[str] | None
    ssl_enabled_protocols: list[str]
    ssl_keystore_type: str
    ssl_keystore_location: str | None
    ssl_keystore_password: Password | None
    ssl_key_password: Password | None
    ssl_keystore_key: Password | None
    ssl_keystore_certificate_chain: Password | None
    ssl_truststore_certificates: Password | None
    ssl_truststore_type: str
    ssl_truststore_location: str | None
    ssl_truststore_password: Password | None
    ssl_keymanager_algorithm: str
    ssl_trustmanager_algorithm: str
    ssl_endpoint_identification_algorithm: str
    ssl_secure_random_implementation: str | None
    ssl_client_auth: str
    ssl_principal_mapping_rules: str
    ssl_engine_factory_class: str | None
    ssl_allow_dn_changes: bool
    ssl_allow_san_changes: bool
    sasl_enabled_mechanisms: list[str]
    sasl_mechanism_inter_broker_protocol: str
    sasl_jaas_config: Password | None
    sasl_server_max_receive_size: int
    sasl_kerberos_service_name: str | None
    sasl_server_callback_handler_class: str | None
    sasl_login_class: str | None
    sasl_login_callback_handler_class: str | None
    sasl_client_callback_handler_class: str | None
    connections_max_reauth_ms: int
    principal_builder_class: str
    # Dynamic-only (DYNAMIC_ONLY_BROKER_CONFIG_DEF).
    leader_replication_throttled_rate: int
    follower_replication_throttled_rate: int
    replica_alter_log_dirs_io_max_bytes_per_second: int

    CONFIG_DEF: Final = BROKER_CONFIG_DEF

    def __init__(self, props: Mapping[str, Any] | None = None, *, strict: bool = False) -> None:
        static = dict(props or {})
        # KafkaConfig.populateSynonyms: node.id and broker.id stand in for each other.
        if "broker.id" not in static and "node.id" in static:
            static["broker.id"] = static["node.id"]
        elif "broker.id" in static and "node.id" not in static:
            static["node.id"] = static["broker.id"]
        self._init(static, {}, {}, strict=strict)

    def _init(
        self,
        static: dict[str, Any],
        dynamic_default: dict[str, str],
        dynamic_broker: dict[str, str],
        *,
        strict: bool,
    ) -> None:
        self.static_props: dict[str, Any] = static
        self.dynamic_default_props: dict[str, str] = dynamic_default
        self.dynamic_broker_props: dict[str, str] = dynamic_broker
        effective: dict[str, Any] = dict(static)
        _override(effective, dynamic_default)
        _override(effective, dynamic_broker)
        self.originals: dict[str, Any] = effective
        self._static_strings = _to_strings(static)
        self.ignored_dynamic: dict[str, str] = {}
        self.unknown: list[str] = [
            name
            for name in BROKER_CONFIG_DEF.unknown(static)
            if name not in DYNAMIC_ONLY_BROKER_CONFIG_DEF and not _is_listener_override(name)
        ]
        if strict and self.unknown:
            name = self.unknown[0]
            raise ConfigError(
                name,
                static[name],
                "unknown broker config",
                message=f"Unknown broker config name: {name}",
            )
        self._values: dict[str, Any] = BROKER_CONFIG_DEF.parse(effective)
        self._values.update(DYNAMIC_ONLY_BROKER_CONFIG_DEF.parse(effective))
        for name, value in self._values.items():
            setattr(self, attribute_name(name), list(value) if isinstance(value, list) else value)
        self._derive()
        self._validate()

    # -- derived values (KafkaConfig's accessors) ---------------------------------------------

    def _derive(self) -> None:
        v = self._values
        # An explicit node.id (or broker.id, its synonym) below 0 is refused with Kafka 4's
        # validator message; unset, both are -1 and the broker picks its id.
        if "node.id" in self.originals and v["node.id"] < 0:
            raise ConfigError("node.id", v["node.id"], "Value must be at least 0")
        self.node_id = v["node.id"]
        self.broker_id = v["broker.id"]
        self.log_dirs = list(v["log.dirs"] if v["log.dirs"] is not None else v["log.dir"])
        hour = 60 * 60 * 1000
        roll = v["log.roll.ms"]
        self.log_roll_ms = roll if roll is not None else hour * v["log.roll.hours"]
        jitter = v["log.roll.jitter.ms"]
        self.log_roll_jitter_ms = (
            jitter if jitter is not None else hour * v["log.roll.jitter.hours"]
        )
        flush = v["log.flush.interval.ms"]
        self.log_flush_interval_ms = (
            flush if flush is not None else v["log.flush.scheduler.interval.ms"]
        )
        if v["log.retention.ms"] is not None:
            millis = v["log.retention.ms"]
        elif v["log.retention.minutes"] is not None:
            millis = 60 * 1000 * v["log.retention.minutes"]
        else:
            millis = hour * v["log.retention.hours"]
        self.log_retention_ms = -1 if millis < 0 else millis

    # -- KafkaConfig.validateValues (the parts that apply to kafkacore) ------------------------

    def _validate(self) -> None:
        if self.node_id != self.broker_id:
            raise ConfigError(
                "node.id",
                self.node_id,
                "must equal broker.id",
                message="You must set `node.id` to the same value as `broker.id`.",
            )
        if self.log_roll_ms < 1:
            raise _requirement("log.roll.ms must be greater than or equal to 1", "log.roll.ms")
        if self.log_roll_jitter_ms < 0:
            raise _requirement(
                "log.roll.jitter.ms must be greater than or equal to 0", "log.roll.jitter.ms"
            )
        if self.log_retention_ms < 1 and self.log_retention_ms != -1:
            raise _requirement(
                "log.retention.ms must be unlimited (-1) or, greater than or equal to 1",
                "log.retention.ms",
            )
        if not self.log_dirs:
            raise _requirement(
                "At least one log directory must be defined via log.dirs or log.dir."
            )
        if self.log_cleaner_threads == 0:
            # Kafka divides by the thread count here and fails with ArithmeticException.
            raise ConfigError("log.cleaner.threads", 0, "/ by zero", message="/ by zero")
        if self.log_cleaner_dedupe_buffer_size // self.log_cleaner_threads <= 1024 * 1024:
            raise _requirement(
                "log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.",
                "log.cleaner.dedupe.buffer.size",
            )
        if self.replica_fetch_wait_max_ms > self.replica_socket_timeout_ms:
            raise _requirement(
                "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms"
                " to prevent unnecessary socket timeouts",
                "replica.socket.timeout.ms",
            )
        if self.replica_fetch_wait_max_ms > self.replica_lag_time_max_ms:
            raise _requirement(
                "replica.fetch.wait.max.ms should always be less than or equal to "
                "replica.lag.time.max.ms to prevent frequent changes in ISR",
                "replica.fetch.wait.max.ms",
            )
        self._validate_kraft()
        self._validate_listeners()
        self._validate_sasl()
        if 0 < self.queued_max_request_bytes < self.socket_request_max_bytes:
            raise _requirement(
                "queued.max.request.bytes must be larger or equal to socket.request.max.bytes",
                "queued.max.request.bytes",
            )
        if self.max_connections_per_ip == 0 and not parse_csv_map(
            self.max_connections_per_ip_overrides
        ):
            raise _requirement(
                "max.connections.per.ip can be set to zero only if "
                "max.connections.per.ip.overrides property is set.",
                "max.connections.per.ip",
            )
        delay, idle = self.connection_failed_authentication_delay_ms, self.connections_max_idle_ms
        if idle >= 0 and delay >= idle:
            raise _requirement(
                f"connection.failed.authentication.delay.ms={delay} should always be less than"
                f" connections.max.idle.ms={idle} to prevent failed"
                " authentication responses from timing out",
                "connection.failed.authentication.delay.ms",
            )
        if "classic" not in self.group_coordinator_rebalance_protocols:
            raise ConfigError(
                "group.coordinator.rebalance.protocols",
                self.group_coordinator_rebalance_protocols,
                "must contain classic",
                message="Disabling the 'classic' protocol is not supported.",
            )

    def effective_listener_security_protocol_map(self) -> dict[str, str]:
        """Listener name -> security protocol (``listener.security.protocol.map``; with
        ``process.roles`` set and no explicit map, controller listeners default to PLAINTEXT
        unless SSL or SASL is in use, as Kafka does)."""
        result: dict[str, str] = {}
        for name, protocol in parse_csv_map(self.listener_security_protocol_map).items():
            if protocol.upper() not in SECURITY_PROTOCOLS:
                raise ConfigError(
                    "listener.security.protocol.map",
                    self.listener_security_protocol_map,
                    f"Invalid security protocol `{protocol}`",
                    message=f"Invalid security protocol `{protocol}` defined in "
                    "listener.security.protocol.map",
                )
            result[name.upper()] = protocol.upper()
        controller_names = self.controller_listener_names or []
        if self.process_roles and "listener.security.protocol.map" not in self.originals:
            secure = {"SSL", "SASL_SSL", "SASL_PLAINTEXT"}
            listener_names = []
            for entry in self.listeners:
                colon = entry.find(":")
                if colon < 0:
                    raise ConfigError(
                        "listeners",
                        self.listeners,
                        "Unable to parse a listener name",
                        message=f"Unable to parse a listener name from {entry}",
                    )
                listener_names.append(entry[:colon].upper())
            if not any(n in secure for n in [*controller_names, *listener_names]):
                for name in controller_names:
                    if name != "PLAINTEXT":
                        result.setdefault(name, "PLAINTEXT")
        return result

    def listener_endpoints(self) -> list[Endpoint]:
        """The parsed ``listeners`` (what the broker binds)."""
        return parse_listeners(self.listeners, self.effective_listener_security_protocol_map())

    def advertised_endpoints(self) -> list[Endpoint]:
        """What the broker tells clients: ``advertised.listeners`` (else ``listeners``) minus
        controller listeners."""
        if self.advertised_listeners is not None:
            endpoints = parse_listeners(
                self.advertised_listeners,
                self.effective_listener_security_protocol_map(),
                require_distinct_ports=False,
            )
        else:
            endpoints = self.listener_endpoints()
        controller_names = set(self.controller_listener_names or [])
        return [e for e in endpoints if e.listener_name not in controller_names]

    def inter_broker_listener(self) -> tuple[str, str]:
        """(listener name, security protocol) brokers use between themselves."""
        name = self.inter_broker_listener_name
        if name is not None:
            if "security.inter.broker.protocol" in self.originals:
                raise ConfigError(
                    "inter.broker.listener.name",
                    name,
                    "conflicts with security.inter.broker.protocol",
                    message="Only one of inter.broker.listener.name and "
                    "security.inter.broker.protocol should be set.",
                )
            normalised = name.upper()
            protocol = self.effective_listener_security_protocol_map().get(normalised)
            if protocol is None:
                raise ConfigError(
                    "inter.broker.listener.name",
                    name,
                    "not found in listener.security.protocol.map",
                    message=f"Listener with name {normalised} defined in "
                    "inter.broker.listener.name not found in listener.security.protocol.map.",
                )
            return normalised, protocol
        protocol = self.security_inter_broker_protocol
        return protocol, protocol

    def _validate_sasl(self) -> None:
        """Kafka's check that the inter-broker SASL mechanism is enabled on that listener."""
        listener, protocol = self.inter_broker_listener()
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
            mechanism = self.sasl_mechanism_inter_broker_protocol
            enabled = self.listener_value(listener, "sasl.enabled.mechanisms") or []
            if mechanism not in enabled:
                raise _requirement(
                    "sasl.mechanism.inter.broker.protocol must be included in "
                    "sasl.enabled.mechanisms when SASL is used for inter-broker communication",
                    "sasl.mechanism.inter.broker.protocol",
                    mechanism,
                )

    def _validate_kraft(self) -> None:
        """Kafka 4.3's ``KafkaConfig.validateValues`` checks of a KRaft node (made when
        ``process.roles`` is set; without it kafkacore runs a single node or a ZooKeeper
        broker, see the module docstring)."""
        roles = self.process_roles
        if not roles or self.dynamic_default_props or self.dynamic_broker_props:
            return  # a dynamic update is checked by its own rules
        for role in roles:
            if role not in ("broker", "controller"):
                raise ConfigError(
                    "process.roles",
                    self.process_roles,
                    "unknown role",
                    message=f"Unknown process role '{role}' (only 'broker' and 'controller' "
                    "are allowed roles)",
                )
        interval, session = self.broker_heartbeat_interval_ms, self.broker_session_timeout_ms
        if interval * 2 > session:  # Kafka only warns
            logger.warning(
                "broker.heartbeat.interval.ms (%d ms) must be less than or equal to half of the "
                "broker.session.timeout.ms (%d ms).",
                interval,
                session,
            )
        voter_ids = sorted(parse_voter_ids(self.controller_quorum_voters))
        shown_voters = "Set(" + ", ".join(map(str, voter_ids)) + ")"  # Scala's Set
        if not voter_ids and not self.controller_quorum_bootstrap_servers:
            raise ConfigError(
                "process.roles",
                roles,
                "no controllers",
                message="If using process.roles, either controller.quorum.bootstrap.servers "
                "must contain the set of bootstrap controllers or controller.quorum.voters "
                "must contain a parseable set of controllers.",
            )
        names = self.controller_listener_names or []
        listener_names = [e.partition(":")[0].upper() for e in self.listeners]
        is_controller = "controller" in roles
        if is_controller:
            self.listener_endpoints()  # Kafka parses the listeners first
            if voter_ids and self.node_id not in voter_ids:
                raise _requirement(
                    "If process.roles contains the 'controller' role, the node id "
                    f"{self.node_id} must be included in the set of voters "
                    f"controller.quorum.voters={shown_voters}"
                )
            if not any(n in listener_names for n in names):
                raise _requirement(
                    "controller.listener.names must contain at least one value appearing in "
                    "the 'listeners' configuration when running the KRaft controller role"
                )
            if not all(n in listener_names for n in names):
                raise _requirement(
                    "controller.listener.names must only contain values appearing in the "
                    "'listeners' configuration when running the KRaft controller role"
                )
            if roles == ["controller"]:
                if any(n not in names for n in listener_names):
                    raise _requirement(
                        "The listeners config must only contain KRaft controller listeners "
                        "from controller.listener.names when process.roles=controller"
                    )
                ibl = self.inter_broker_listener_name
                if ibl is not None and ibl.upper() in names:
                    raise _requirement(
                        "controller.listener.names must not contain an explicitly set "
                        "inter.broker.listener.name configuration value when "
                        "process.roles=controller'"
                    )
        else:
            if self.node_id in voter_ids:
                raise _requirement(
                    "If process.roles contains just the 'broker' role, the node id "
                    f"{self.node_id} must not be included in the set of voters "
                    f"controller.quorum.voters={shown_voters}"
                )
            if not names:
                raise _requirement(
                    "controller.listener.names must contain at least one value when running "
                    "KRaft with just the broker role"
                )
            if any(n in listener_names for n in names):
                raise _requirement(
                    "controller.listener.names must not contain a value appearing in the "
                    "'listeners' configuration when running KRaft with just the broker role"
                )
            protocols = self.effective_listener_security_protocol_map()
            for name in names:
                if name.upper() not in protocols:
                    raise ConfigError(
                        "controller.listener.names",
                        names,
                        "not in listener.security.protocol.map",
                        message=f"Controller listener with name {name.upper()} defined in "
                        "controller.listener.names not found in listener.security.protocol.map"
                        "  (an explicit security mapping for each controller listener is "
                        "required if listener.security.protocol.map is non-empty, or if there "
                        "are security protocols other than PLAINTEXT in use)",
                    )
        if self.get("controller.quorum.auto.join.enable") and not is_controller:
            raise _requirement(
                "controller.quorum.auto.join.enable is only supported when process.roles "
                "contains the 'controller' role.",
                "controller.quorum.auto.join.enable",
            )

    def _validate_listeners(self) -> None:
        if self.process_roles == ["controller"]:
            return  # a controller has no broker listener (checked in _validate_kraft)
        # Kafka's order: the advertised listeners are parsed first, then the inter-broker
        # listener, then the bound listeners.
        advertised = self.advertised_endpoints()
        advertised_names = list(dict.fromkeys(e.listener_name for e in advertised))
        if not advertised_names:
            hint = (
                " Perhaps all listeners appear in controller.listener.names?"
                if self.process_roles and "broker" in self.process_roles
                else ""
            )
            raise _requirement(
                "There must be at least one broker advertised listener." + hint,
                "advertised.listeners",
            )
        inter_broker_name, _ = self.inter_broker_listener()
        if inter_broker_name not in advertised_names:
            raise _requirement(
                "inter.broker.listener.name must be a listener name defined in "
                "advertised.listeners. The valid options based on currently configured "
                f"listeners are {','.join(advertised_names)}",
                "inter.broker.listener.name",
            )
        listener_names = list(dict.fromkeys(e.listener_name for e in self.listener_endpoints()))
        if not set(advertised_names) <= set(listener_names):
            raise _requirement(
                "advertised.listeners listener names must be equal to or a subset of the ones "
                f"defined in listeners. Found {','.join(advertised_names)}. The valid options "
                f"based on the current configuration are {','.join(listener_names)}",
                "advertised.listeners",
            )
        if any(e.host == "0.0.0.0" for e in advertised):
            raise _requirement(
                "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
                "Use a routable IP address.",
                "advertised.listeners",
                self.advertised_listeners
                if self.advertised_listeners is not None
                else self.listeners,
            )

    # -- per-listener configs (listener.name.<l>.<key>) ------------------------------------

    def listener_value(self, listener: str, name: str, mechanism: str | None = None) -> Any:
        """The value of ``name`` for ``listener`` (Kafka's ``valuesWithPrefixOverride``):
        ``listener.name.<lower l>.<lower mechanism>.<name>`` (with ``mechanism``), then
        ``listener.name.<lower l>.<name>``, then the broker-wide value (parsed, with its
        default). A prefixed value is parsed with ``name``'s type and validator; a bad one
        raises :class:`ConfigError` naming the prefixed key."""
        prefix = f"listener.name.{listener.lower()}."
        candidates = [f"{prefix}{name}"]
        if mechanism is not None:
            candidates.insert(0, f"{prefix}{mechanism.lower()}.{name}")
        for key in candidates:
            if key in self.originals:
                definition = BROKER_CONFIG_DEF.get(name)
                raw = self.originals[key]
                if definition is None:
                    return raw
                try:
                    return definition.parse(raw)
                except ConfigError as exc:
                    shown = Password(str(raw)) if definition.type.is_sensitive else raw
                    raise ConfigError(key, shown, exc.constraint) from None
        return self.get(name)

    def listener_originals(self, listener: str, prefix_of: str) -> dict[str, Any]:
        """The set configs starting with ``prefix_of`` (``ssl.``) as ``listener`` sees them:
        ``listener.name.<lower l>.<key>`` overrides ``<key>``; defaults are not included."""
        prefix = f"listener.name.{listener.lower()}."
        out = {k: v for k, v in self.originals.items() if k.startswith(prefix_of)}
        for key, value in self.originals.items():
            if key.startswith(prefix) and key[len(prefix) :].startswith(prefix_of):
                out[key[len(prefix) :]] = value
        return out

    # -- access ---------------------------------------------------------------------------

    def get(self, name: str) -> Any:
        """The parsed value of a config by its Kafka name, as set (``None`` if unset and
        without default). Unknown names raise Kafka's ``Unknown configuration '<name>'``."""
        if name in self._values:
            value = self._values[name]
            return list(value) if isinstance(value, list) else value
        raise ConfigError(name, message=f"Unknown configuration '{name}'")

    def values(self) -> dict[str, Any]:
        """Every config by Kafka name with its parsed value."""
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self._values.items()}

    def extract_log_config_map(self) -> dict[str, Any]:
        """The broker-level defaults of topic configs (Kafka's ``extractLogConfigMap``),
        keyed by topic config name, typed, after synonym resolution."""
        v = self._values
        return {
            "segment.bytes": v["log.segment.bytes"],
            "segment.ms": self.log_roll_ms,
            "segment.jitter.ms": self.log_roll_jitter_ms,
            "segment.index.bytes": v["log.index.size.max.bytes"],
            "flush.messages": v["log.flush.interval.messages"],
            "flush.ms": self.log_flush_interval_ms,
            "retention.bytes": v["log.retention.bytes"],
            "retention.ms": self.log_retention_ms,
            "max.message.bytes": v["message.max.bytes"],
            "index.interval.bytes": v["log.index.interval.bytes"],
            "delete.retention.ms": v["log.cleaner.delete.retention.ms"],
            "min.compaction.lag.ms": v["log.cleaner.min.compaction.lag.ms"],
            "max.compaction.lag.ms": v["log.cleaner.max.compaction.lag.ms"],
            "file.delete.delay.ms": v["log.segment.delete.delay.ms"],
            "min.cleanable.dirty.ratio": v["log.cleaner.min.cleanable.ratio"],
            "cleanup.policy": list(v["log.cleanup.policy"]),
            "min.insync.replicas": v["min.insync.replicas"],
            "compression.type": v["compression.type"],
            "compression.gzip.level": v["compression.gzip.level"],
            "compression.lz4.level": v["compression.lz4.level"],
            "compression.zstd.level": v["compression.zstd.level"],
            "unclean.leader.election.enable": v["unclean.leader.election.enable"],
            "preallocate": v["log.preallocate"],
            "message.timestamp.type": v["log.message.timestamp.type"],
            "message.timestamp.before.max.ms": v["log.message.timestamp.before.max.ms"],
            "message.timestamp.after.max.ms": v["log.message.timestamp.after.max.ms"],
            "local.retention.ms": v["log.local.retention.ms"],
            "local.retention.bytes": v["log.local.retention.bytes"],
        }

    # -- dynamic configuration ------------------------------------------------------------

    def with_dynamic(
        self,
        per_broker: Mapping[str, Any] | None = None,
        cluster_default: Mapping[str, Any] | None = None,
        *,
        validate: bool = True,
    ) -> BrokerConfig:
        """A new config with dynamic overrides applied: ``per_broker`` (DYNAMIC_BROKER_CONFIG,
        this broker's id) over ``cluster_default`` (DYNAMIC_DEFAULT_BROKER_CONFIG) over the
        static config over defaults. Each call replaces all previous dynamic values.

        With ``validate`` (an AlterConfigs request), names and values are checked as Kafka
        does: read-only configs, per-broker configs at cluster level, SSL configs without a
        listener prefix, bad values and thread counts changed by more than a factor of two all
        raise :class:`ConfigError`. Without it (values loaded from the metadata store), invalid
        entries are dropped as Kafka drops them and listed in :attr:`ignored_dynamic`."""
        per_broker_s = _to_strings(per_broker or {})
        default_s = _to_strings(cluster_default or {})
        ignored: dict[str, str] = {}
        if validate:
            _validate_dynamic(per_broker_s, per_broker_config=True)
            _validate_dynamic(default_s, per_broker_config=False)
        else:
            per_broker_s = _drop_invalid_dynamic(per_broker_s, True, ignored)
            default_s = _drop_invalid_dynamic(default_s, False, ignored)
        new = object.__new__(BrokerConfig)
        new._init(dict(self.static_props), default_s, per_broker_s, strict=False)
        new.ignored_dynamic = ignored
        if validate:
            _validate_reconfiguration(self, new)
        return new

    # -- DescribeConfigs ------------------------------------------------------------------

    def config_synonyms(
        self, name: str, synonym_names: Iterable[str], is_sensitive: bool
    ) -> list[ConfigSynonym]:
        """Kafka's ``ConfigHelper.configSynonyms``: every place one of ``synonym_names`` is
        set, by precedence (dynamic per-broker, dynamic default, static, default), dropping
        entries before the first one named ``name``."""
        names = list(synonym_names)
        found: list[ConfigSynonym] = []
        for mapping, source in (
            (self.dynamic_broker_props, ConfigSource.DYNAMIC_BROKER_CONFIG),
            (self.dynamic_default_props, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            (self._static_strings, ConfigSource.STATIC_BROKER_CONFIG),
            (_STATIC_DEFAULT_STRINGS, ConfigSource.DEFAULT_CONFIG),
        ):
            for synonym in names:
                if synonym in mapping:
                    value = None if is_sensitive else mapping[synonym]
                    found.append(ConfigSynonym(synonym, value, source))
        while found and found[0].name != name:
            found.pop(0)
        return found

    def describe(
        self,
        names: Iterable[str] | None = None,
        *,
        include_synonyms: bool = True,
        include_documentation: bool = False,
    ) -> list[ConfigEntry]:
        """DescribeConfigs for this broker (resource name = its id): every set or defined
        config, sorted by name, with Kafka's value printing, source, sensitivity, read-only
        flag (everything not in :data:`DYNAMIC_CONFIGS`) and synonyms."""
        configs: dict[str, Any] = {k: v for k, v in self.originals.items() if v is not None}
        for key in BROKER_CONFIG_DEF.config_keys():
            if not key.internal:
                configs[key.name] = self._values[key.name]
        for name in DYNAMIC_ONLY_BROKER_CONFIG_DEF:
            if name in self.originals:
                configs[name] = self._values[name]
        wanted = None if names is None else set(names)
        entries = []
        for name in sorted(configs):
            if wanted is not None and name not in wanted:
                continue
            entries.append(
                self._entry(name, configs[name], True, include_synonyms, include_documentation)
            )
        return entries

    def describe_cluster_default(
        self, *, include_synonyms: bool = True, include_documentation: bool = False
    ) -> list[ConfigEntry]:
        """DescribeConfigs for the cluster-default broker resource (empty resource name):
        only the dynamic cluster-wide values."""
        return [
            self._entry(name, value, False, include_synonyms, include_documentation)
            for name, value in sorted(self.dynamic_default_props.items())
        ]

    def _entry(
        self,
        name: str,
        value: Any,
        per_broker_config: bool,
        include_synonyms: bool,
        include_documentation: bool,
    ) -> ConfigEntry:
        type_ = broker_config_type(name)
        sensitive = type_ is None or type_.is_sensitive
        if sensitive:
            text = None
        elif isinstance(value, str):
            text = value
        else:
            text = convert_to_string(value, type_)
        synonyms = self.config_synonyms(
            name, broker_config_synonyms(name, match_listener_override=True), sensitive
        )
        if not per_broker_config:
            synonyms = [
                s for s in synonyms if s.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
            ]
        source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
        doc = None
        if include_documentation:
            key = BROKER_CONFIG_DEF.get(name) or DYNAMIC_ONLY_BROKER_CONFIG_DEF.get(name)
            doc = key.doc if key is not None else None
        return ConfigEntry(
            name=name,
            value=text,
            source=source,
            is_sensitive=sensitive,
            read_only=name not in DYNAMIC_CONFIGS,
            synonyms=synonyms if include_synonyms else [],
            type=type_,
            documentation=doc,
        )

    def __repr__(self) -> str:
        return f"BrokerConfig(node_id={self.node_id}, overrides={sorted(self.static_props)})"


_STATIC_DEFAULT_STRINGS: Final = {
    name: value
    for name, value in _to_strings(
        {**BROKER_CONFIG_DEF.default_values(), **DYNAMIC_ONLY_BROKER_CONFIG_DEF.default_values()}
    ).items()
    # node.id has no default in Kafka 4 (kafkacore's -1 only means "unset"): describe it so.
    if name != "node.id"
}


def broker_config_type(name: str) -> Type | None:
    """The type of a broker config, also for listener-prefixed names
    (``listener.name.x.<config>``); ``None`` when unknown (Kafka then treats it as sensitive)."""
    for candidate in [name, *broker_config_synonyms(name, match_listener_override=True)]:
        key = BROKER_CONFIG_DEF.get(candidate) or DYNAMIC_ONLY_BROKER_CONFIG_DEF.get(candidate)
        if key is not None:
            return key.type
    return None
