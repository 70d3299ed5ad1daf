"""The definitions of every broker config kafkacore understands (Kafka 4.3's
``AbstractKafkaConfig.CONFIG_DEF`` and friends): names, types, defaults, validators,
importance and documentation, and the dynamic-only quota configs."""

from __future__ import annotations

from typing import Any, Final

from kafkacore.config.defs import (
    INT32_MAX,
    INT64_MAX,
    NO_DEFAULT,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigError,
    ConfigKey,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonNullValidator,
    Range,
    Type,
    Validator,
    ValidList,
    ValidString,
)
from kafkacore.config.quorum import BootstrapServersValidator, VotersValidator

HIGH, MEDIUM, LOW = Importance.HIGH, Importance.MEDIUM, Importance.LOW
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = (
    Type.BOOLEAN,
    Type.STRING,
    Type.INT,
    Type.SHORT,
    Type.LONG,
    Type.DOUBLE,
    Type.LIST,
    Type.CLASS,
    Type.PASSWORD,
)
at_least, between = Range.at_least, Range.between

BROKER_COMPRESSION_TYPES: Final = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
"""Kafka's ``BrokerCompressionType`` names, in Kafka's order (as its messages list them)."""

SECURITY_PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

# Kafka's compression level bounds (CompressionType.GZIP/LZ4/ZSTD).
GZIP_MIN_LEVEL, GZIP_MAX_LEVEL, GZIP_DEFAULT_LEVEL = 1, 9, -1
LZ4_MIN_LEVEL, LZ4_MAX_LEVEL, LZ4_DEFAULT_LEVEL = 1, 17, 9
ZSTD_MIN_LEVEL, ZSTD_MAX_LEVEL, ZSTD_DEFAULT_LEVEL = -131072, 22, 3


def _check_gzip_level(name: str, value: Any) -> None:
    if value is None:
        raise ConfigError(name, None, "Value must be non-null")
    level = int(value)
    if level > GZIP_MAX_LEVEL or (level < GZIP_MIN_LEVEL and level != GZIP_DEFAULT_LEVEL):
        raise ConfigError(
            name,
            value,
            f"Value must be between {GZIP_MIN_LEVEL} and {GZIP_MAX_LEVEL} "
            f"or equal to {GZIP_DEFAULT_LEVEL}",
        )


GZIP_LEVEL_VALIDATOR: Final = LambdaValidator(
    _check_gzip_level, f"[{GZIP_MIN_LEVEL},...,{GZIP_MAX_LEVEL}] or {GZIP_DEFAULT_LEVEL}"
)
LZ4_LEVEL_VALIDATOR: Final = between(LZ4_MIN_LEVEL, LZ4_MAX_LEVEL)
ZSTD_LEVEL_VALIDATOR: Final = between(ZSTD_MIN_LEVEL, ZSTD_MAX_LEVEL)

DEFAULT_MAX_MESSAGE_BYTES: Final = 1024 * 1024 + 12  # 1 MiB + Records.LOG_OVERHEAD
DEFAULT_SEGMENT_BYTES: Final = 1024 * 1024 * 1024
MIN_SEGMENT_BYTES: Final = 1024 * 1024
DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP: Final = (
    # Kafka builds it from a HashMap: this is that map's iteration order.
    "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
)


def parse_console_listener(name: str, entry: str) -> tuple[str, int]:
    """One ``console.listeners`` entry, ``http://host:port``, as ``(host, port)``: only
    plain HTTP; an empty host is the loopback address ``127.0.0.1`` (unlike Kafka's
    listeners, where it is every interface: the console is reachable from elsewhere only
    when a host says so). Raises :class:`ConfigError` with Kafka's message form."""
    scheme, sep, rest = entry.strip().partition("://")
    if not sep or scheme.lower() != "http":
        raise ConfigError(
            name, entry, "only http://host:port listeners are supported (empty host: 127.0.0.1)"
        )
    host, colon, port_text = rest.rstrip("/").rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ConfigError(name, entry, "expected http://host:port with a port in [0,...,65535]")
    return host or "127.0.0.1", int(port_text)


def _check_console_listeners(name: str, value: Any) -> None:
    if value is None:
        return
    ValidList.any_non_duplicate_values(True, True).ensure_valid(name, value)
    for entry in value:
        parse_console_listener(name, entry)


BALANCER_GOALS: Final = (
    "rack.awareness",
    "replica.count",
    "leader.count",
    "disk.usage",
    "log.dir.usage",
    "disk.high.water.mark",
)
"""The partition balancer's goals, in their default priority order (kafkacore.balancer)."""


def _check_broker_ids(name: str, value: Any) -> None:
    if value is None:
        raise ConfigError(name, None, "Value must be non-null")
    ValidList.any_non_duplicate_values(True, False).ensure_valid(name, value)
    for entry in value:
        if not str(entry).isdigit():
            raise ConfigError(name, value, f"{entry} is not a broker id")


def _k(
    name: str,
    type_: Type,
    default: Any = NO_DEFAULT,
    validator: Validator | None = None,
    importance: Importance = MEDIUM,
    doc: str = "",
    *,
    internal: bool = False,
) -> ConfigKey:
    return ConfigKey(name, type_, default, validator, importance, doc, internal=internal)


_any_list = ValidList.any_non_duplicate_values

BROKER_CONFIG_DEF: Final = ConfigDef(
    [
        # --- server (ServerConfigs) -----------------------------------------------------------
        _k("broker.id", INT, -1, None, HIGH, "The broker id; synonym of node.id."),
        _k("message.max.bytes", INT, DEFAULT_MAX_MESSAGE_BYTES, at_least(0), HIGH,
           "Largest record batch size the broker accepts (topic default for max.message.bytes)."),
        _k("num.io.threads", INT, 8, at_least(1), HIGH, "Threads processing requests."),
        _k("num.replica.alter.log.dirs.threads", INT, None, None, HIGH),
        _k("background.threads", INT, 10, at_least(1), HIGH),
        _k("request.timeout.ms", INT, 30000, None, HIGH),
        _k("socket.connection.setup.timeout.ms", LONG, 10000, None, MEDIUM),
        _k("socket.connection.setup.timeout.max.ms", LONG, 30000, None, MEDIUM),
        _k("authorizer.class.name", STRING, "", NonNullValidator(), LOW),
        # read by the authorizer (Kafka's StandardAuthorizer reads them from the originals,
        # so they are internal here: known, but never listed by DescribeConfigs)
        _k("super.users", STRING, None, None, LOW,
           "Semicolon-separated principals allowed everything.", internal=True),
        _k("allow.everyone.if.no.acl.found", BOOLEAN, False, None, LOW,
           "Allow access to a resource that has no ACL at all.", internal=True),
        _k("early.start.listeners", LIST, None, _any_list(True, True), HIGH),
        _k("broker.rack", STRING, None, None, MEDIUM),
        _k("controlled.shutdown.enable", BOOLEAN, True, None, MEDIUM),
        _k("delete.topic.enable", BOOLEAN, True, None, HIGH,
           "Whether DeleteTopics is allowed."),
        _k("compression.type", STRING, "producer", ValidString(BROKER_COMPRESSION_TYPES), HIGH,
           "Default final compression of topics; 'producer' keeps the producer's codec."),
        _k("compression.gzip.level", INT, GZIP_DEFAULT_LEVEL, GZIP_LEVEL_VALIDATOR, MEDIUM),
        _k("compression.lz4.level", INT, LZ4_DEFAULT_LEVEL, LZ4_LEVEL_VALIDATOR, MEDIUM),
        _k("compression.zstd.level", INT, ZSTD_DEFAULT_LEVEL, ZSTD_LEVEL_VALIDATOR, MEDIUM),
        _k("max.incremental.fetch.session.cache.slots", INT, 1000, at_least(0), MEDIUM),
        _k("fetch.max.bytes", INT, 55 * 1024 * 1024, at_least(1024), MEDIUM),
        _k("max.request.partition.size.limit", INT, 2000, at_least(1), MEDIUM),
        _k("unstable.api.versions.enable", BOOLEAN, False, None, HIGH, internal=True),
        _k("unstable.feature.versions.enable", BOOLEAN, False, None, HIGH, internal=True),
        # --- node identity and roles (KRaftConfigs; see the module docstring) ------------------
        _k("node.id", INT, -1, None, HIGH, "The node id; synonym of broker.id."),
        _k("process.roles", LIST, None,
           ValidList(("broker", "controller"), is_empty_allowed=False, is_null_allowed=True),
           HIGH),
        _k("controller.listener.names", LIST, None, _any_list(False, True), HIGH),
        _k("initial.broker.registration.timeout.ms", INT, 60000, None, MEDIUM),
        _k("broker.heartbeat.interval.ms", INT, 2000, None, MEDIUM),
        _k("broker.session.timeout.ms", INT, 9000, None, MEDIUM),
        _k("sasl.mechanism.controller.protocol", STRING, "GSSAPI", None, HIGH),
        _k("metadata.log.dir", STRING, None, None, HIGH),
        _k("metadata.log.segment.bytes", INT, DEFAULT_SEGMENT_BYTES, at_least(8 * 1024 * 1024),
           HIGH),
        _k("metadata.log.segment.ms", LONG, 7 * 24 * 3600 * 1000, None, HIGH),
        _k("metadata.max.retention.bytes", LONG, 100 * 1024 * 1024, None, HIGH),
        _k("metadata.max.retention.ms", LONG, 7 * 24 * 3600 * 1000, None, HIGH),
        _k("metadata.max.idle.interval.ms", INT, 500, at_least(0), LOW),
        _k("metadata.log.max.record.bytes.between.snapshots", LONG, 20 * 1024 * 1024,
           at_least(1), HIGH),
        _k("metadata.log.max.snapshot.interval.ms", LONG, 3600 * 1000, at_least(0), HIGH),
        _k("server.max.startup.time.ms", LONG, INT64_MAX, at_least(0), MEDIUM, internal=True),
        # --- controller quorum (QuorumConfig) ---------------------------------------------------
        _k("controller.quorum.voters", LIST, "", VotersValidator(), HIGH),
        _k("controller.quorum.bootstrap.servers", LIST, "", BootstrapServersValidator(), HIGH),
        _k("controller.quorum.auto.join.enable", BOOLEAN, False, None, LOW),
        _k("controller.quorum.fetch.max.bytes", INT, 1048576, at_least(1), LOW),
        _k("controller.quorum.fetch.snapshot.max.bytes", INT, 1048576, at_least(1), LOW),
        _k("controller.quorum.election.timeout.ms", INT, 1000, at_least(0), HIGH),
        _k("controller.quorum.fetch.timeout.ms", INT, 2000, at_least(0), HIGH),
        _k("controller.quorum.election.backoff.max.ms", INT, 1000, at_least(0), HIGH),
        _k("controller.quorum.append.linger.ms", INT, 25, at_least(0), MEDIUM),
        _k("controller.quorum.request.timeout.ms", INT, 2000, at_least(0), MEDIUM),
        _k("controller.quorum.retry.backoff.ms", INT, 20, at_least(0), LOW),
        # --- ZooKeeper (Kafka 3.9 ZkConfigs; kafkacore's multi-broker metadata store) ----------
        _k("zookeeper.connect", STRING, None, None, HIGH,
           "host:port[,host:port...][/chroot] of the ZooKeeper ensemble (multi-broker mode)."),
        _k("zookeeper.session.timeout.ms", INT, 18000, None, HIGH),
        _k("zookeeper.connection.timeout.ms", INT, None, None, HIGH),
        _k("zookeeper.set.acl", BOOLEAN, False, None, HIGH),
        _k("zookeeper.max.in.flight.requests", INT, 10, at_least(1), HIGH),
        # Kafka 3.9's controlled shutdown retries (ZooKeeper mode only; gone in Kafka 4)
        _k("controlled.shutdown.max.retries", INT, 3, None, MEDIUM),
        _k("controlled.shutdown.retry.backoff.ms", LONG, 5000, None, MEDIUM),
        # --- socket server (SocketServerConfigs) -----------------------------------------------
        _k("listeners", LIST, "PLAINTEXT://:9092", _any_list(False, False), HIGH,
           "Comma-separated NAME://host:port URIs to listen on; empty host = all interfaces."),
        _k("advertised.listeners", LIST, None, _any_list(False, True), HIGH,
           "Addresses given to clients (defaults to listeners); 0.0.0.0 is refused."),
        _k("listener.security.protocol.map", STRING, DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP,
           None, LOW),
        _k("socket.send.buffer.bytes", INT, 100 * 1024, None, HIGH),
        _k("socket.receive.buffer.bytes", INT, 100 * 1024, None, HIGH),
        _k("socket.request.max.bytes", INT, 100 * 1024 * 1024, at_least(1), HIGH),
        _k("socket.listen.backlog.size", INT, 50, at_least(1), MEDIUM),
        _k("max.connections.per.ip", INT, INT32_MAX, at_least(0), MEDIUM),
        _k("max.connections.per.ip.overrides", STRING, "", None, MEDIUM),
        _k("max.connections", INT, INT32_MAX, at_least(0), MEDIUM),
        _k("max.connection.creation.rate", INT, INT32_MAX, at_least(0), MEDIUM),
        _k("connections.max.idle.ms", LONG, 10 * 60 * 1000, None, MEDIUM),
        _k("connection.failed.authentication.delay.ms", INT, 100, at_least(0), LOW),
        _k("queued.max.requests", INT, 500, at_least(1), HIGH),
        _k("queued.max.request.bytes", LONG, -1, None, MEDIUM),
        _k("num.network.threads", INT, 3, at_least(1), HIGH),
        # --- TLS (SslConfigs, BrokerSecurityConfigs) -------------------------------------------
        # per listener: listener.name.<lower-cased name>.ssl.X overrides ssl.X
        _k("ssl.protocol", STRING, "TLSv1.3", None, MEDIUM),
        _k("ssl.provider", STRING, None, None, MEDIUM),
        _k("ssl.cipher.suites", LIST, "", None, MEDIUM),
        _k("ssl.enabled.protocols", LIST, "TLSv1.2,TLSv1.3", None, MEDIUM),
        _k("ssl.keystore.type", STRING, "JKS", None, MEDIUM),
        _k("ssl.keystore.location", STRING, None, None, MEDIUM),
        _k("ssl.keystore.password", PASSWORD, None, None, MEDIUM),
        _k("ssl.key.password", PASSWORD, None, None, MEDIUM),
        _k("ssl.keystore.key", PASSWORD, None, None, MEDIUM),
        _k("ssl.keystore.certificate.chain", PASSWORD, None, None, MEDIUM),
        _k("ssl.truststore.certificates", PASSWORD, None, None, MEDIUM),
        _k("ssl.truststore.type", STRING, "JKS", None, MEDIUM),
        _k("ssl.truststore.location", STRING, None, None, MEDIUM),
        _k("ssl.truststore.password", PASSWORD, None, None, MEDIUM),
        _k("ssl.keymanager.algorithm", STRING, "SunX509", None, MEDIUM),
        _k("ssl.trustmanager.algorithm", STRING, "PKIX", None, MEDIUM),
        _k("ssl.endpoint.identification.algorithm", STRING, "https", None, LOW),
        _k("ssl.secure.random.implementation", STRING, None, None, LOW),
        _k("ssl.client.auth", STRING, "none", ValidString(("required", "requested", "none")),
           MEDIUM),
        _k("ssl.principal.mapping.rules", STRING, "DEFAULT", None, LOW),
        _k("ssl.engine.factory.class", CLASS, None, None, LOW),
        _k("ssl.allow.dn.changes", BOOLEAN, False, None, LOW),
        _k("ssl.allow.san.changes", BOOLEAN, False, None, LOW),
        # --- SASL (SaslConfigs, BrokerSecurityConfigs) -----------------------------------------
        # per listener: listener.name.<l>.sasl.enabled.mechanisms and, per mechanism,
        # listener.name.<l>.<mechanism lower-cased>.sasl.jaas.config / .connections.max.reauth.ms
        _k("sasl.enabled.mechanisms", LIST, "GSSAPI", None, MEDIUM),
        _k("sasl.mechanism.inter.broker.protocol", STRING, "GSSAPI", None, MEDIUM),
        _k("sasl.jaas.config", PASSWORD, None, None, MEDIUM),
        _k("sasl.server.max.receive.size", INT, 524288, None, MEDIUM),
        _k("sasl.kerberos.service.name", STRING, None, None, MEDIUM),
        _k("sasl.server.callback.handler.class", CLASS, None, None, MEDIUM),
        _k("sasl.login.class", CLASS, None, None, MEDIUM),
        _k("sasl.login.callback.handler.class", CLASS, None, None, MEDIUM),
        _k("sasl.client.callback.handler.class", CLASS, None, None, MEDIUM),
        _k("connections.max.reauth.ms", LONG, 0, None, MEDIUM),
        _k("principal.builder.class", CLASS,
           "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder", None,
           MEDIUM),
        # --- replication (ReplicationConfigs) --------------------------------------------------
        _k("controller.socket.timeout.ms", INT, 30000, None, MEDIUM),
        _k("default.replication.factor", INT, 1, None, MEDIUM,
           "Replication factor of automatically created topics."),
        _k("replica.lag.time.max.ms", LONG, 30000, None, HIGH),
        _k("replica.socket.timeout.ms", INT, 30 * 1000, None, HIGH),
        _k("replica.socket.receive.buffer.bytes", INT, 64 * 1024, None, HIGH),
        _k("replica.fetch.max.bytes", INT, 1024 * 1024, at_least(0), MEDIUM),
        _k("replica.fetch.wait.max.ms", INT, 500, None, HIGH),
        _k("replica.fetch.backoff.ms", INT, 1000, at_least(0), MEDIUM),
        _k("replica.fetch.min.bytes", INT, 1, None, HIGH),
        _k("replica.fetch.response.max.bytes", INT, 10 * 1024 * 1024, at_least(0), MEDIUM),
        _k("num.replica.fetchers", INT, 1, at_least(1), HIGH),
        _k("replica.high.watermark.checkpoint.interval.ms", LONG, 5000, None, HIGH),
        _k("fetch.purgatory.purge.interval.requests", INT, 1000, None, MEDIUM),
        _k("producer.purgatory.purge.interval.requests", INT, 1000, None, MEDIUM),
        _k("delete.records.purgatory.purge.interval.requests", INT, 1, None, MEDIUM),
        _k("auto.leader.rebalance.enable", BOOLEAN, True, None, HIGH),
        _k("leader.imbalance.check.interval.seconds", LONG, 300, at_least(1), HIGH),
        _k("leader.imbalance.per.broker.percentage", INT, 10, None, HIGH),
        _k("unclean.leader.election.interval.ms", LONG, 5 * 60 * 1000, at_least(1), MEDIUM,
           internal=True),
        _k("unclean.leader.election.enable", BOOLEAN, False, None, HIGH),
        _k("security.inter.broker.protocol", STRING, "PLAINTEXT", ValidString(SECURITY_PROTOCOLS),
           MEDIUM),
        _k("inter.broker.listener.name", STRING, None, None, MEDIUM),
        _k("replica.selector.class", STRING, None, None, MEDIUM),
        _k("follower.fetch.last.tiered.offset.enable", BOOLEAN, False, None, MEDIUM),
        # --- group coordinator (GroupCoordinatorConfig) ----------------------------------------
        _k("group.min.session.timeout.ms", INT, 6000, None, MEDIUM),
        _k("group.max.session.timeout.ms", INT, 1800000, None, MEDIUM),
        _k("group.initial.rebalance.delay.ms", INT, 3000, None, MEDIUM),
        _k("group.max.size", INT, INT32_MAX, at_least(1), MEDIUM),
        _k("group.coordinator.rebalance.protocols", LIST, "classic,consumer,streams",
           ValidList(("consumer", "classic", "share", "streams"), is_empty_allowed=False),
           MEDIUM),
        _k("group.coordinator.threads", INT, 4, at_least(1), HIGH),
        _k("group.coordinator.background.threads", INT, 2, at_least(1), HIGH),
        _k("group.coordinator.append.linger.ms", INT, -1, at_least(-1), MEDIUM),
        _k("group.consumer.session.timeout.ms", INT, 45000, at_least(1), MEDIUM),
        _k("group.consumer.min.session.timeout.ms", INT, 45000, at_least(1), MEDIUM),
        _k("group.consumer.max.session.timeout.ms", INT, 60000, at_least(1), MEDIUM),
        _k("group.consumer.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM),
        _k("group.consumer.min.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM),
        _k("group.consumer.max.heartbeat.interval.ms", INT, 15000, at_least(1), MEDIUM),
        _k("group.consumer.max.size", INT, INT32_MAX, at_least(1), MEDIUM),
        _k("group.consumer.assignors", LIST, "uniform,range", _any_list(False, False), MEDIUM),
        _k("group.consumer.migration.policy", STRING, "bidirectional",
           CaseInsensitiveValidString(("bidirectional", "upgrade", "downgrade", "disabled")),
           MEDIUM),
        _k("group.consumer.assignment.interval.ms", INT, 1000, at_least(0), MEDIUM),
        _k("group.consumer.min.assignment.interval.ms", INT, 0, at_least(0), MEDIUM),
        _k("group.consumer.max.assignment.interval.ms", INT, 15000, at_least(0), MEDIUM),
        _k("group.consumer.regex.refresh.interval.ms", INT, 600000, at_least(10000), MEDIUM,
           internal=True),
        _k("offset.metadata.max.bytes", INT, 4096, None, HIGH),
        _k("offsets.load.buffer.size", INT, 5 * 1024 * 1024, at_least(1), HIGH),
        _k("offsets.topic.replication.factor", SHORT, 3, at_least(1), HIGH),
        _k("offsets.topic.num.partitions", INT, 50, at_least(1), HIGH),
        _k("offsets.topic.segment.bytes", INT, 100 * 1024 * 1024, at_least(1), HIGH),
        _k("offsets.topic.compression.codec", INT, 0, None, HIGH),
        _k("offsets.retention.minutes", INT, 7 * 24 * 60, at_least(1), HIGH),
        _k("offsets.retention.check.interval.ms", LONG, 600000, at_least(1), HIGH),
        _k("offsets.commit.timeout.ms", INT, 5000, at_least(1), HIGH),
        # --- share groups (GroupCoordinatorConfig, ShareGroupConfig) ---------------------------
        _k("group.share.session.timeout.ms", INT, 45000, at_least(1), MEDIUM),
        _k("group.share.min.session.timeout.ms", INT, 45000, at_least(1), MEDIUM),
        _k("group.share.max.session.timeout.ms", INT, 60000, at_least(1), MEDIUM),
        _k("group.share.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM),
        _k("group.share.min.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM),
        _k("group.share.max.heartbeat.interval.ms", INT, 15000, at_least(1), MEDIUM),
        _k("group.share.max.size", INT, 200, between(1, 1000), MEDIUM),
        _k("group.share.assignors", LIST, "simple", _any_list(False, False), MEDIUM),
        _k("group.share.assignment.interval.ms", INT, 1000, at_least(0), MEDIUM),
        _k("group.share.min.assignment.interval.ms", INT, 0, at_least(0), MEDIUM),
        _k("group.share.max.assignment.interval.ms", INT, 15000, at_least(0), MEDIUM),
        _k("group.share.initialize.retry.interval.ms", INT, 30000, at_least(1), LOW,
           internal=True),
        _k("group.share.delivery.count.limit", INT, 5, between(2, 10), MEDIUM),
        _k("group.share.max.delivery.count.limit", INT, 10, between(5, 25), MEDIUM),
        _k("group.share.min.delivery.count.limit", INT, 2, between(2, 5), MEDIUM),
        _k("group.share.record.lock.duration.ms", INT, 30000, between(1000, 3600000), MEDIUM),
        _k("group.share.min.record.lock.duration.ms", INT, 15000, between(1000, 30000), MEDIUM),
        _k("group.share.max.record.lock.duration.ms", INT, 60000, between(30000, 3600000),
           MEDIUM),
        _k("group.share.partition.max.record.locks", INT, 2000, between(100, 10000), MEDIUM),
        _k("group.share.max.partition.max.record.locks", INT, 4000, between(2000, 10000),
           MEDIUM),
        _k("group.share.min.partition.max.record.locks", INT, 100, between(100, 2000), MEDIUM),
        _k("share.fetch.purgatory.purge.interval.requests", INT, 1000, None, MEDIUM),
        _k("group.share.max.share.sessions", INT, 2000, at_least(1), MEDIUM),
        _k("group.share.persister.class.name", STRING,
           "org.apache.kafka.server.share.persister.DefaultStatePersister", None, MEDIUM,
           internal=True),
        # --- the share coordinator (ShareCoordinatorConfig) ------------------------------------
        _k("share.coordinator.state.topic.num.partitions", INT, 50, at_least(1), HIGH),
        _k("share.coordinator.state.topic.replication.factor", SHORT, 3, at_least(1), HIGH),
        _k("share.coordinator.state.topic.min.isr", SHORT, 2, at_least(1), HIGH),
        _k("share.coordinator.state.topic.segment.bytes", INT, 100 * 1024 * 1024, at_least(1),
           HIGH),
        _k("share.coordinator.threads", INT, 1, at_least(1), MEDIUM),
        _k("share.coordinator.snapshot.update.records.per.snapshot", INT, 500, between(0, 500),
           MEDIUM),
        _k("share.coordinator.load.buffer.size", INT, 5 * 1024 * 1024, at_least(1), HIGH),
        _k("share.coordinator.state.topic.compression.codec", INT, 0, None, HIGH),
        _k("share.coordinator.append.linger.ms", INT, -1, at_least(-1), MEDIUM),
        _k("share.coordinator.write.timeout.ms", INT, 5000, at_least(1), HIGH),
        _k("share.coordinator.state.topic.prune.interval.ms", INT, 300000, at_least(1), LOW,
           internal=True),
        _k("share.coordinator.cold.partition.snapshot.interval.ms", INT, 300000, at_least(1),
           LOW, internal=True),
        _k("share.coordinator.cached.buffer.max.bytes", INT, 1048588, at_least(524288),
           MEDIUM),
        # --- log cleaner (CleanerConfig) -------------------------------------------------------
        _k("log.cleaner.threads", INT, 1, at_least(0), MEDIUM),
        _k("log.cleaner.io.max.bytes.per.second", DOUBLE, 1.7976931348623157e308, None, MEDIUM),
        _k("log.cleaner.dedupe.buffer.size", LONG, 128 * 1024 * 1024, None, MEDIUM),
        _k("log.cleaner.io.buffer.size", INT, 512 * 1024, at_least(0), MEDIUM),
        _k("log.cleaner.io.buffer.load.factor", DOUBLE, 0.9, None, MEDIUM),
        _k("log.cleaner.backoff.ms", LONG, 15 * 1000, at_least(0), MEDIUM),
        _k("log.cleaner.min.cleanable.ratio", DOUBLE, 0.5, between(0, 1), MEDIUM),
        _k("log.cleaner.enable", BOOLEAN, True, None, MEDIUM),
        _k("log.cleaner.delete.retention.ms", LONG, 24 * 60 * 60 * 1000, at_least(0), MEDIUM),
        _k("log.cleaner.min.compaction.lag.ms", LONG, 0, at_least(0), MEDIUM),
        _k("log.cleaner.max.compaction.lag.ms", LONG, INT64_MAX, at_least(1), MEDIUM),
        # --- logs (LogConfig.SERVER_CONFIG_DEF) ------------------------------------------------
        _k("num.partitions", INT, 1, at_least(1), MEDIUM,
           "Partition count of automatically created topics."),
        _k("log.dir", LIST, "/tmp/kafka-logs", _any_list(False, False), HIGH,
           "Data directory, used when log.dirs is not set."),
        _k("log.dirs", LIST, None, _any_list(False, True), HIGH,
           "Data directories (comma-separated); wins over log.dir."),
        _k("cordoned.log.dirs", LIST, "", _any_list(True, True), MEDIUM),
        _k("log.segment.bytes", INT, DEFAULT_SEGMENT_BYTES, at_least(MIN_SEGMENT_BYTES), HIGH),
        _k("log.roll.ms", LONG, None, None, HIGH),
        _k("log.roll.hours", INT, 7 * 24, at_least(1), HIGH),
        _k("log.roll.jitter.ms", LONG, None, None, HIGH),
        _k("log.roll.jitter.hours", INT, 0, at_least(0), HIGH),
        _k("log.retention.ms", LONG, None, None, HIGH),
        _k("log.retention.minutes", INT, None, None, HIGH),
        _k("log.retention.hours", INT, 7 * 24, None, HIGH),
        _k("log.retention.bytes", LONG, -1, None, HIGH),
        _k("log.retention.check.interval.ms", LONG, 5 * 60 * 1000, at_least(1), MEDIUM),
        _k("log.cleanup.policy", LIST, "delete", ValidList(("compact", "delete")), MEDIUM),
        _k("log.index.size.max.bytes", INT, 10 * 1024 * 1024, at_least(4), MEDIUM),
        _k("log.index.interval.bytes", INT, 4096, at_least(0), MEDIUM),
        _k("log.flush.interval.messages", LONG, INT64_MAX, at_least(1), HIGH),
        _k("log.segment.delete.delay.ms", LONG, 60000, at_least(0), HIGH),
        _k("log.flush.scheduler.interval.ms", LONG, INT64_MAX, None, HIGH),
        _k("log.flush.interval.ms", LONG, None, None, HIGH),
        _k("log.flush.offset.checkpoint.interval.ms", INT, 60000, at_least(0), HIGH),
        _k("log.flush.start.offset.checkpoint.interval.ms", INT, 60000, at_least(0), HIGH),
        _k("log.preallocate", BOOLEAN, False, None, MEDIUM),
        _k("num.recovery.threads.per.data.dir", INT, 2, at_least(1), HIGH),
        _k("auto.create.topics.enable", BOOLEAN, True, None, HIGH),
        _k("min.insync.replicas", INT, 1, at_least(1), HIGH),
        _k("log.message.timestamp.type", STRING, "CreateTime",
           ValidString(("CreateTime", "LogAppendTime")), MEDIUM),
        _k("log.message.timestamp.before.max.ms", LONG, INT64_MAX, at_least(0), MEDIUM),
        _k("log.message.timestamp.after.max.ms", LONG, 3600000, at_least(0), MEDIUM),
        _k("create.topic.policy.class.name", CLASS, None, None, LOW),
        _k("alter.config.policy.class.name", CLASS, None, None, LOW),
        _k("log.dir.failure.timeout.ms", LONG, 30000, at_least(1), LOW),
        _k("log.initial.task.delay.ms", LONG, 30 * 1000, at_least(0), LOW, internal=True),
        # --- transactions (TransactionLogConfig, TransactionStateManagerConfig) ----------------
        _k("transaction.state.log.min.isr", INT, 2, at_least(1), HIGH),
        _k("transaction.state.log.load.buffer.size", INT, 5 * 1024 * 1024, at_least(1), HIGH),
        _k("transaction.state.log.replication.factor", SHORT, 3, at_least(1), HIGH),
        _k("transaction.state.log.num.partitions", INT, 50, at_least(1), HIGH),
        _k("transaction.state.log.segment.bytes", INT, 100 * 1024 * 1024, at_least(1), HIGH),
        _k("transaction.partition.verification.enable", BOOLEAN, True, None, LOW),
        _k("producer.id.expiration.ms", INT, 86400000, at_least(1), LOW),
        _k("producer.id.expiration.check.interval.ms", INT, 600000, at_least(1), LOW,
           internal=True),
        _k("add.partitions.to.txn.retry.backoff.max.ms", INT, 100, at_least(0), HIGH),
        _k("add.partitions.to.txn.retry.backoff.ms", INT, 20, at_least(1), HIGH),
        _k("transaction.two.phase.commit.enable", BOOLEAN, False, None, LOW),
        _k("transactional.id.expiration.ms", INT, 7 * 24 * 3600 * 1000, at_least(1), HIGH),
        _k("transaction.max.timeout.ms", INT, 15 * 60 * 1000, at_least(1), HIGH),
        _k("transaction.abort.timed.out.transaction.cleanup.interval.ms", INT, 10 * 1000,
           at_least(1), LOW),
        _k("transaction.remove.expired.transaction.cleanup.interval.ms", INT, 3600 * 1000,
           at_least(1), LOW),
        # --- quotas (QuotaConfig) --------------------------------------------------------------
        _k("quota.window.num", INT, 11, at_least(1), LOW),
        _k("replication.quota.window.num", INT, 11, at_least(1), LOW),
        _k("alter.log.dirs.replication.quota.window.num", INT, 11, at_least(1), LOW),
        _k("controller.quota.window.num", INT, 11, at_least(1), LOW),
        _k("quota.window.size.seconds", INT, 1, at_least(1), LOW),
        _k("replication.quota.window.size.seconds", INT, 1, at_least(1), LOW),
        _k("alter.log.dirs.replication.quota.window.size.seconds", INT, 1, at_least(1), LOW),
        _k("controller.quota.window.size.seconds", INT, 1, at_least(1), LOW),
        _k("client.quota.callback.class", CLASS, None, None, LOW),
        # --- the web console (kafkacore.console; not Kafka's) ---------------------------------
        _k("console.listeners", LIST, None,
           LambdaValidator(_check_console_listeners, "http://host:port, ..."), LOW,
           "Where the web console listens (http://host:port; empty host = 127.0.0.1); "
           "unset (the default): no console.", internal=True),
        _k("console.read.only", BOOLEAN, False, None, LOW,
           "The web console shows but changes nothing.", internal=True),
        _k("console.audit.topic", STRING, "__console_audit", NonEmptyString(), LOW,
           "The topic the web console writes every change to (JSON records).",
           internal=True),
        # --- the partition balancer (kafkacore.balancer; not Kafka's) --------------------------
        _k("auto.partition.balance.enable", BOOLEAN, False, None, MEDIUM,
           "Whether the controller moves replicas and preferred leaders by itself to keep "
           "racks, replica and leader counts and disk usage balanced (a kafkacore "
           "extension; off by default)."),
        _k("auto.partition.balance.paused", BOOLEAN, False, None, MEDIUM,
           "The balancer starts no new move (the moves in flight finish); set by "
           "`kafkacore balancer pause|resume`."),
        _k("auto.partition.balance.interval.ms", LONG, 10000, at_least(100), MEDIUM,
           "How often the controller's balancer looks at the cluster."),
        _k("auto.partition.balance.goals", LIST, ",".join(BALANCER_GOALS),
           ValidList(BALANCER_GOALS, is_empty_allowed=True), MEDIUM,
           "The goals the balancer plans for, in priority order (a later goal never undoes "
           "an earlier one)."),
        _k("auto.partition.balance.replica.imbalance.percentage", INT, 10,
           between(0, 1000), MEDIUM,
           "How far (percent of the mean) a broker's replica count may be from the mean."),
        _k("auto.partition.balance.leader.imbalance.percentage", INT, 10, between(0, 1000),
           MEDIUM,
           "How far (percent of the mean) a broker's preferred leader count may be from the "
           "mean."),
        _k("auto.partition.balance.disk.imbalance.percentage", INT, 10, between(0, 1000),
           MEDIUM,
           "How far (percent of the mean) the bytes of a broker's replicas may be from the "
           "mean."),
        _k("auto.partition.balance.log.dir.imbalance.percentage", INT, 20, between(0, 1000),
           MEDIUM,
           "How far (percent of the mean) the bytes in one log directory may be from the "
           "mean over the cluster's log directories."),
        _k("auto.partition.balance.disk.high.water.mark.percentage", INT, 85,
           between(1, 100), MEDIUM,
           "No log directory's volume should be fuller than this (percent used)."),
        _k("auto.partition.balance.max.moves.in.flight", INT, 2, at_least(1), MEDIUM,
           "At most this many of the balancer's reassignments run at once."),
        _k("auto.partition.balance.cooldown.ms", LONG, 30000, at_least(0), MEDIUM,
           "After a broker joins or leaves, the controller changes, or a round of moves "
           "ends, the balancer waits this long before it starts new moves."),
        _k("auto.partition.balance.throttle.bytes.per.second", LONG, 10 * 1024 * 1024,
           at_least(1), MEDIUM,
           "The replication throttle (leader.replication.throttled.rate and "
           "follower.replication.throttled.rate) on the brokers of the balancer's moves."),
        _k("auto.partition.balance.decommissioned.brokers", LIST, "",
           LambdaValidator(_check_broker_ids, "a list of broker ids"), MEDIUM,
           "Brokers the balancer drains: every replica moves off them, none moves to them."),
        # --- tiered storage switches (RemoteLogManagerConfig) ----------------------------------
        _k("remote.log.storage.system.enable", BOOLEAN, False, None, MEDIUM),
        _k("remote.log.storage.manager.impl.prefix", STRING, "rsm.config.", NonEmptyString(),
           MEDIUM),
        _k("remote.log.metadata.manager.impl.prefix", STRING, "rlmm.config.", NonEmptyString(),
           MEDIUM),
        _k("remote.log.storage.manager.class.name", STRING, None, NonEmptyString(), MEDIUM),
        _k("remote.log.storage.manager.class.path", STRING, None, None, MEDIUM),
        _k("remote.log.metadata.manager.class.name", STRING,
           "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager",
           NonEmptyString(), MEDIUM),
        _k("remote.log.metadata.manager.class.path", STRING, None, None, MEDIUM),
        _k("remote.log.metadata.manager.listener.name", STRING, None, NonEmptyString(), MEDIUM),
        _k("remote.log.metadata.custom.metadata.max.bytes", INT, 128, at_least(0), LOW),
        _k("remote.log.index.file.cache.total.size.bytes", LONG, 1 << 30, at_least(1), LOW),
        _k("remote.log.index.file.cache.ttl.ms", LONG, 900000, at_least(-1), LOW, internal=True),
        _k("remote.log.manager.thread.pool.size", INT, 2, at_least(1), MEDIUM),
        _k("remote.log.manager.copier.thread.pool.size", INT, 10, at_least(1), MEDIUM),
        _k("remote.log.manager.expiration.thread.pool.size", INT, 10, at_least(1), MEDIUM),
        _k("remote.log.manager.follower.thread.pool.size", INT, 2, at_least(1), MEDIUM),
        _k("remote.log.manager.task.interval.ms", LONG, 30000, at_least(1), LOW),
        _k("remote.log.manager.task.retry.backoff.ms", LONG, 500, at_least(1), LOW, internal=True),
        _k("remote.log.manager.task.retry.backoff.max.ms", LONG, 30000, at_least(1), LOW,
           internal=True),
        _k("remote.log.manager.task.retry.jitter", DOUBLE, 0.2, between(0, 0.5), LOW,
           internal=True),
        _k("remote.log.reader.threads", INT, 10, at_least(1), MEDIUM),
        _k("remote.log.reader.max.pending.tasks", INT, 100, at_least(1), MEDIUM),
        _k("log.local.retention.ms", LONG, -2, at_least(-2), MEDIUM),
        _k("log.local.retention.bytes", LONG, -2, at_least(-2), MEDIUM),
        _k("remote.log.manager.copy.max.bytes.per.second", LONG, INT64_MAX, at_least(1), MEDIUM),
        _k("remote.log.manager.copy.quota.window.num", INT, 11, at_least(1), MEDIUM),
        _k("remote.log.manager.copy.quota.window.size.seconds", INT, 1, at_least(1), MEDIUM),
        _k("remote.log.manager.fetch.max.bytes.per.second", LONG, INT64_MAX, at_least(1), MEDIUM),
        _k("remote.log.manager.fetch.quota.window.num", INT, 11, at_least(1), MEDIUM),
        _k("remote.log.manager.fetch.quota.window.size.seconds", INT, 1, at_least(1), MEDIUM),
        _k("remote.fetch.max.wait.ms", INT, 500, at_least(1), MEDIUM),
        _k("remote.list.offsets.request.timeout.ms", LONG, 30000, at_least(1), MEDIUM),
        # --- metrics (MetricConfigs) -----------------------------------------------------------
        _k("metric.reporters", LIST, "org.apache.kafka.common.metrics.JmxReporter",
           _any_list(True, False), LOW),
        _k("metrics.num.samples", INT, 2, at_least(1), LOW),
        _k("metrics.sample.window.ms", LONG, 30000, at_least(1), LOW),
        _k("metrics.recording.level", STRING, "INFO", None, LOW),
    ]
)  # fmt: skip
"""Every broker config kafkacore understands, with Kafka's definition."""

DYNAMIC_ONLY_BROKER_CONFIG_DEF: Final = ConfigDef(
    [
        _k("leader.replication.throttled.rate", LONG, INT64_MAX, at_least(0), MEDIUM),
        _k("follower.replication.throttled.rate", LONG, INT64_MAX, at_least(0), MEDIUM),
        _k("replica.alter.log.dirs.io.max.bytes.per.second", LONG, INT64_MAX, at_least(0), MEDIUM),
    ]
)
"""Broker configs that exist only as dynamic configs (Kafka's ``QuotaConfig.brokerQuotaConfigs``):
replication throttle rates, set with ``kafka-configs --alter --entity-type brokers``."""
