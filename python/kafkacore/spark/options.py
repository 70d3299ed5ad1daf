"""Options of the ``kafkacore`` data source, with the names and the checks of Spark's own
Kafka source and sink (``KafkaSourceProvider``): the same option keys, the same defaults
and the same error texts, so that Spark Kafka code only changes its format name.

Options arrive as a case-insensitive mapping of strings. :func:`parse_read_options` and
:func:`parse_write_options` turn them into frozen, picklable dataclasses (they travel to
the executors inside the readers and writers); every error is a :class:`ValueError`,
which is what Spark's ``IllegalArgumentException`` becomes here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kafkacore.log.files import TopicPartition

__all__ = [
    "BOOTSTRAP_SERVERS",
    "EARLIEST",
    "LATEST",
    "LOG_PATH",
    "OffsetLimit",
    "ReadOptions",
    "Subscription",
    "WriteOptions",
    "parse_read_options",
    "parse_write_options",
    "tp_string",
]

# Option keys, lower-cased as Spark compares them.
BOOTSTRAP_SERVERS = "kafka.bootstrap.servers"
LOG_PATH = "kafkacore.path"
TIERED_PREFIX = "kafkacore.tiered."
TIERED_S3 = TIERED_PREFIX + "s3."
TIERED_METADATA_PARTITIONS = TIERED_PREFIX + "metadata.partitions"
SINK_ID = "kafkacore.sinkid"
ASSIGN = "assign"
SUBSCRIBE = "subscribe"
SUBSCRIBE_PATTERN = "subscribepattern"
STRATEGY_OPTION_KEYS = (SUBSCRIBE, SUBSCRIBE_PATTERN, ASSIGN)  # Spark's order in its message
STARTING_OFFSETS = "startingoffsets"
ENDING_OFFSETS = "endingoffsets"
STARTING_TIMESTAMP = "startingtimestamp"
ENDING_TIMESTAMP = "endingtimestamp"
STARTING_OFFSETS_BY_TIMESTAMP = "startingoffsetsbytimestamp"
ENDING_OFFSETS_BY_TIMESTAMP = "endingoffsetsbytimestamp"
STARTING_OFFSETS_BY_TIMESTAMP_STRATEGY = "startingoffsetsbytimestampstrategy"
MAX_OFFSETS_PER_TRIGGER = "maxoffsetspertrigger"
MIN_PARTITIONS = "minpartitions"
MAX_RECORDS_PER_PARTITION = "maxrecordsperpartition"
FAIL_ON_DATA_LOSS = "failondataloss"
INCLUDE_HEADERS = "includeheaders"
TOPIC = "topic"
FETCH_MAX_BYTES = "kafka.max.partition.fetch.bytes"
ISOLATION_LEVEL = "kafka.isolation.level"
COMPRESSION_TYPE = "kafka.compression.type"
ACKS = "kafka.acks"

#: Spark's (and Kafka's ListOffsets) sentinels in offset JSON.
EARLIEST = -2
LATEST = -1

_DEFAULT_FETCH_MAX_BYTES = 8 << 20
_COMPRESSION_CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

_OFFSETS_EXAMPLE = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
_PARTITIONS_EXAMPLE = '{"topicA":[0,1],"topicB":[0,1]}'
_TIMESTAMPS_EXAMPLE = (
    '{"topicA": {"0": 123456789, "1": 123456789},\n"topicB": {"0": 123456789, "1": 123456789}}'
)

_CONSUMER_UNSUPPORTED = {
    "kafka.auto.offset.reset": (
        "\nKafka option 'auto.offset.reset' is not supported.\n"
        "Instead set the source option 'startingoffsets' to 'earliest' or 'latest'\n"
        "to specify where to start. Structured Streaming manages which offsets are consumed\n"
        "internally, rather than relying on the kafkaConsumer to do it. This will ensure that no\n"
        "data is missed when new topics/partitions are dynamically subscribed. Note that\n"
        "'startingoffsets' only applies when a new Streaming query is started, and\n"
        "that resuming will always pick up from where the query left off. See the docs for more\n"
        "details.\n"
    ),
    "kafka.key.deserializer": (
        "Kafka option 'key.deserializer' is not supported as keys are deserialized as byte "
        "arrays with ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize "
        "the keys."
    ),
    "kafka.value.deserializer": (
        "Kafka option 'value.deserializer' is not supported as values are deserialized as byte "
        "arrays with ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize "
        "the values."
    ),
    "kafka.enable.auto.commit": "Kafka option 'enable.auto.commit' is not supported",
    "kafka.interceptor.classes": "Kafka option 'interceptor.classes' is not supported",
}

_PRODUCER_UNSUPPORTED = {
    "kafka.key.serializer": (
        "Kafka option 'key.serializer' is not supported as keys are serialized with "
        "ByteArraySerializer."
    ),
    "kafka.value.serializer": (
        "Kafka option 'value.serializer' is not supported as value are serialized with "
        "ByteArraySerializer."
    ),
}


def tp_string(tp: tuple[str, int]) -> str:
    """Java's ``TopicPartition.toString()``: ``topic-partition``."""
    return f"{tp[0]}-{tp[1]}"


# -- subscription -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Subscription:
    """Which partitions to read: exactly one of ``assign``, ``subscribe`` and
    ``subscribePattern`` (Java regex; Python's ``re`` agrees on the common subset)."""

    kind: Literal["assign", "subscribe", "subscribePattern"]
    topics: tuple[str, ...] = ()
    pattern: str = ""
    assigned: tuple[TopicPartition, ...] = ()

    def matches(self, topic: str) -> bool:
        """Whether ``topic`` belongs to a subscribe/subscribePattern subscription."""
        if self.kind == "subscribe":
            return topic in self.topics
        if self.kind == "subscribePattern":
            return re.fullmatch(self.pattern, topic) is not None
        return any(tp.topic == topic for tp in self.assigned)

    def describe(self) -> str:
        if self.kind == "assign":
            return f"Assign[{', '.join(tp_string(tp) for tp in self.assigned)}]"
        if self.kind == "subscribe":
            return f"Subscribe[{', '.join(self.topics)}]"
        return f"SubscribePattern[{self.pattern}]"


def _parse_subscription(params: Mapping[str, str]) -> Subscription:
    specified = [key for key in STRATEGY_OPTION_KEYS if key in params]
    if not specified:
        raise ValueError(
            "One of the following options must be specified for Kafka source: "
            + ", ".join(STRATEGY_OPTION_KEYS)
            + ". See the docs for more details."
        )
    if len(specified) > 1:
        raise ValueError(
            "Only one of the following options can be specified for Kafka source: "
            + ", ".join(STRATEGY_OPTION_KEYS)
            + ". See the docs for more details."
        )
    key = specified[0]
    value = params[key]
    if key == ASSIGN:
        if not value.strip().startswith("{"):
            raise ValueError(
                f"No topicpartitions to assign as specified value for option 'assign' is '{value}'"
            )
        return Subscription("assign", assigned=tuple(_parse_partitions(value)))
    if key == SUBSCRIBE:
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise ValueError(
                f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'"
            )
        return Subscription("subscribe", topics=topics)
    pattern = value.strip()
    if not pattern:
        raise ValueError(
            "Pattern to subscribe is empty as specified value for option "
            f"'subscribePattern' is '{value}'"
        )
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"Invalid subscribePattern '{pattern}': {exc}") from None
    return Subscription("subscribePattern", pattern=pattern)


# -- JSON values (Spark's JsonUtils) -------------------------------------------------------------


def _is_long(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def _partition_key(key: str) -> int:
    if not re.fullmatch(r"-?[0-9]+", key.strip()):
        raise ValueError(key)
    value = int(key)
    if not -(2**31) <= value < 2**31:
        raise ValueError(key)
    return value


def _parse_partitions(text: str) -> list[TopicPartition]:
    """``{"topicA":[0,1],"topicB":[0,1]}``."""
    try:
        parsed = json.loads(text)
        if not isinstance(parsed, dict):
            raise ValueError(text)
        result: list[TopicPartition] = []
        for topic, partitions in parsed.items():
            if not isinstance(partitions, list):
                raise ValueError(text)
            for p in partitions:
                if not _is_long(p) or not -(2**31) <= p < 2**31:
                    raise ValueError(text)
                result.append(TopicPartition(topic, p))
        return result
    except ValueError:
        raise ValueError(f"Expected e.g. {_PARTITIONS_EXAMPLE}, got {text}") from None


def _parse_partition_longs(text: str, example: str) -> dict[TopicPartition, int]:
    try:
        parsed = json.loads(text)
        if not isinstance(parsed, dict):
            raise ValueError(text)
        result: dict[TopicPartition, int] = {}
        for topic, offsets in parsed.items():
            if not isinstance(offsets, dict):
                raise ValueError(text)
            for key, value in offsets.items():
                if not _is_long(value):
                    raise ValueError(text)
                result[TopicPartition(topic, _partition_key(key))] = value
        return result
    except ValueError:
        raise ValueError(f"Expected e.g. {example}, got {text}") from None


# -- offset limits ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OffsetLimit:
    """Where a read starts or ends (Spark's ``KafkaOffsetRangeLimit``):

    * ``earliest`` / ``latest``;
    * ``offsets``: per partition, an offset or -2 (earliest) / -1 (latest);
    * ``timestamp``: one timestamp (ms) for every partition;
    * ``timestamps``: a timestamp per partition.

    ``strategy`` (``error`` or ``latest``) says what a starting timestamp without a
    matching record gives (``startingOffsetsByTimestampStrategy``).
    """

    kind: Literal["earliest", "latest", "offsets", "timestamp", "timestamps"]
    offsets: tuple[tuple[TopicPartition, int], ...] = ()
    timestamp: int = -1
    strategy: Literal["error", "latest"] = "error"

    @property
    def per_partition(self) -> dict[TopicPartition, int]:
        return dict(self.offsets)


def _offset_limit(
    params: Mapping[str, str],
    timestamp_key: str,
    by_timestamp_key: str,
    offsets_key: str,
    default: Literal["earliest", "latest"],
    strategy: Literal["error", "latest"],
) -> OffsetLimit:
    """Spark's ``getKafkaOffsetRangeLimit``: a global timestamp wins over timestamps per
    partition, which win over offsets."""
    if timestamp_key in params:
        text = params[timestamp_key].strip()
        if not re.fullmatch(r"[+-]?[0-9]+", text) or not -(2**63) <= int(text) < 2**63:
            raise ValueError(f"Expected a single long value, got {text}")
        return OffsetLimit("timestamp", timestamp=int(text), strategy=strategy)
    if by_timestamp_key in params:
        text = params[by_timestamp_key].strip()
        timestamps = _parse_partition_longs(text, _TIMESTAMPS_EXAMPLE)
        return OffsetLimit("timestamps", offsets=tuple(timestamps.items()), strategy=strategy)
    if offsets_key in params:
        text = params[offsets_key].strip()
        if text.lower() == "latest":
            return OffsetLimit("latest")
        if text.lower() == "earliest":
            return OffsetLimit("earliest")
        offsets = _parse_partition_longs(text, _OFFSETS_EXAMPLE)
        return OffsetLimit("offsets", offsets=tuple(offsets.items()))
    return OffsetLimit(default)


def _parse_bool(params: Mapping[str, str], key: str, default: bool) -> bool:
    """Scala's ``String.toBoolean``."""
    if key not in params:
        return default
    text = params[key].strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f'For input string: "{params[key]}" (option {key})')
    return text == "true"


def _parse_int(params: Mapping[str, str], key: str, name: str, bits: int = 64) -> int | None:
    if key not in params:
        return None
    text = params[key].strip()
    if not re.fullmatch(r"[+-]?[0-9]+", text) or not -(2 ** (bits - 1)) <= int(text) < 2 ** (
        bits - 1
    ):
        raise ValueError(f'For input string: "{params[key]}" (option {name})')
    return int(text)


# -- read options --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadOptions:
    """Everything a reader needs, resolved from the options (picklable)."""

    subscription: Subscription
    bootstrap_servers: str | None
    log_path: str | None
    starting: OffsetLimit
    ending: OffsetLimit
    fail_on_data_loss: bool = True
    include_headers: bool = False
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    fetch_max_bytes: int = _DEFAULT_FETCH_MAX_BYTES
    read_committed: bool = False
    """``kafka.isolation.level=read_committed``: the latest offset is the last stable
    offset, and records of aborted transactions are skipped (Kafka's consumer)."""
    tiered_store: tuple[tuple[str, str], ...] | None = None
    """``kafkacore.tiered.s3.*`` as ``s3.*`` settings: read the tiered segments from this
    bucket (:mod:`kafkacore.spark.tiered`)."""
    tiered_metadata_partitions: int = 50
    """``kafkacore.tiered.metadata.partitions``: the cluster's
    ``remote.log.metadata.topic.num.partitions``."""


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in options.items()}


def _connection(params: Mapping[str, str], *, allow_path: bool) -> tuple[str | None, str | None]:
    bootstrap = params.get(BOOTSTRAP_SERVERS, "").strip() or None
    path = params.get(LOG_PATH, "").strip() or None
    if bootstrap and path:
        raise ValueError(
            "Options 'kafka.bootstrap.servers' and 'kafkacore.path' are mutually exclusive: "
            "read either through a broker or directly from a log directory."
        )
    if path and not allow_path:
        raise ValueError(
            "Option 'kafkacore.path' can only be used to read; writes go through a broker: "
            "set 'kafka.bootstrap.servers'."
        )
    if not bootstrap and not path:
        if allow_path:
            raise ValueError(
                "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka "
                "consumer (or 'kafkacore.path' to read a log directory directly)"
            )
        raise ValueError(
            "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka producer"
        )
    return bootstrap, path


def _validate_general(params: Mapping[str, str]) -> None:
    for key, message in _CONSUMER_UNSUPPORTED.items():
        if key in params:
            raise ValueError(message)
    _read_committed(params)


def _read_committed(params: Mapping[str, str]) -> bool:
    """``kafka.isolation.level`` as Kafka's ``ConsumerConfig`` validates it (case
    insensitive; Spark passes it to its consumers unchanged): read_committed or
    read_uncommitted (the default)."""
    level = params.get(ISOLATION_LEVEL, "read_uncommitted").strip().lower()
    if level not in ("read_committed", "read_uncommitted"):
        raise ValueError(
            f"Invalid value {params[ISOLATION_LEVEL]} for configuration isolation.level: "
            "String must be one of (case insensitive): read_committed, read_uncommitted"
        )
    return level == "read_committed"


def parse_read_options(options: Mapping[str, str], *, streaming: bool) -> ReadOptions:
    """Validate ``options`` as Spark's ``validateBatchOptions``/``validateStreamOptions``."""
    params = _lower(options)
    strategy_text = params.get(STARTING_OFFSETS_BY_TIMESTAMP_STRATEGY, "error").strip().lower()
    if strategy_text not in ("error", "latest"):
        raise ValueError(
            f"No value found for '{strategy_text.upper()}' "
            "(startingOffsetsByTimestampStrategy: error or latest)"
        )
    strategy: Literal["error", "latest"] = "error" if strategy_text == "error" else "latest"
    if streaming:
        if ENDING_OFFSETS in params:
            raise ValueError("ending offset not valid in streaming queries")
        if ENDING_OFFSETS_BY_TIMESTAMP in params or ENDING_TIMESTAMP in params:
            raise ValueError("ending timestamp not valid in streaming queries")
    starting = _offset_limit(
        params,
        STARTING_TIMESTAMP,
        STARTING_OFFSETS_BY_TIMESTAMP,
        STARTING_OFFSETS,
        "latest" if streaming else "earliest",
        strategy,
    )
    ending = _offset_limit(
        params, ENDING_TIMESTAMP, ENDING_OFFSETS_BY_TIMESTAMP, ENDING_OFFSETS, "latest", strategy
    )
    if not streaming:
        if starting.kind == "latest":
            raise ValueError("starting offset can't be latest for batch queries on Kafka")
        for tp, offset in starting.offsets if starting.kind == "offsets" else ():
            if offset == LATEST:
                raise ValueError(
                    f"startingOffsets for {tp_string(tp)} can't be latest for batch queries "
                    "on Kafka"
                )
        if ending.kind == "earliest":
            raise ValueError("ending offset can't be earliest for batch queries on Kafka")
        for tp, offset in ending.offsets if ending.kind == "offsets" else ():
            if offset == EARLIEST:
                raise ValueError(
                    f"ending offset for {tp_string(tp)} can't be earliest for batch queries "
                    "on Kafka"
                )
    subscription = _parse_subscription(params)
    min_partitions = _parse_int(params, MIN_PARTITIONS, "minPartitions", 32)
    if min_partitions is not None and min_partitions <= 0:
        raise ValueError("minPartitions must be positive")
    max_records = _parse_int(params, MAX_RECORDS_PER_PARTITION, "maxRecordsPerPartition")
    if max_records is not None and max_records <= 0:
        raise ValueError("maxRecordsPerPartition must be positive")
    max_offsets = _parse_int(params, MAX_OFFSETS_PER_TRIGGER, "maxOffsetsPerTrigger")
    if max_offsets is not None and max_offsets <= 0:
        raise ValueError("maxOffsetsPerTrigger must be positive")
    _validate_general(params)
    bootstrap, path = _connection(params, allow_path=True)
    fetch_max_bytes = _parse_int(params, FETCH_MAX_BYTES, "kafka.max.partition.fetch.bytes", 32)
    if fetch_max_bytes is not None and fetch_max_bytes <= 0:
        raise ValueError("kafka.max.partition.fetch.bytes must be positive")
    return ReadOptions(
        subscription=subscription,
        bootstrap_servers=bootstrap,
        log_path=path,
        starting=starting,
        ending=ending,
        fail_on_data_loss=_parse_bool(params, FAIL_ON_DATA_LOSS, True),
        include_headers=_parse_bool(params, INCLUDE_HEADERS, False),
        max_offsets_per_trigger=max_offsets,
        min_partitions=min_partitions,
        max_records_per_partition=max_records,
        fetch_max_bytes=fetch_max_bytes or _DEFAULT_FETCH_MAX_BYTES,
        read_committed=_read_committed(params),
        tiered_store=_tiered_store(params, bootstrap),
        tiered_metadata_partitions=_parse_int(
            params, TIERED_METADATA_PARTITIONS, "kafkacore.tiered.metadata.partitions"
        )
        or 50,
    )


def _tiered_store(
    params: Mapping[str, str], bootstrap: str | None
) -> tuple[tuple[str, str], ...] | None:
    store = tuple(
        sorted((k[len(TIERED_PREFIX) :], v) for k, v in params.items() if k.startswith(TIERED_S3))
    )
    if not store:
        return None
    if bootstrap is None:
        raise ValueError(
            "Options 'kafkacore.tiered.s3.*' read a topic's tiered segments from its bucket; "
            "its other records and its metadata come from the brokers: set "
            "'kafka.bootstrap.servers'."
        )
    if not dict(store).get("s3.bucket"):
        raise ValueError("Option 'kafkacore.tiered.s3.bucket' must name the bucket")
    return store


# -- write options ------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteOptions:
    """The sink's options (Spark's ``KafkaSourceProvider.createRelation``/``createSink``)."""

    bootstrap_servers: str
    topic: str | None = None
    sink_id: str | None = None
    compression: int = 0
    acks: int = -1


def parse_write_options(options: Mapping[str, str]) -> WriteOptions:
    params = _lower(options)
    for key, message in _PRODUCER_UNSUPPORTED.items():
        if key in params:
            raise ValueError(message)
    bootstrap, _ = _connection(params, allow_path=False)
    assert bootstrap is not None
    topic = params.get(TOPIC, "").strip() or None
    codec_name = params.get(COMPRESSION_TYPE, "none").strip().lower()
    if codec_name not in _COMPRESSION_CODECS:
        raise ValueError(
            f"Invalid value {params[COMPRESSION_TYPE]} for configuration compression.type: "
            f"String must be one of: {', '.join(_COMPRESSION_CODECS)}"
        )
    acks_text = params.get(ACKS, "all").strip().lower()
    if acks_text not in ("all", "-1", "0", "1"):
        raise ValueError(
            f"Invalid value {params[ACKS]} for configuration acks: String must be one of: "
            "all, -1, 0, 1"
        )
    return WriteOptions(
        bootstrap_servers=bootstrap,
        topic=topic,
        sink_id=params.get(SINK_ID, "").strip() or None,
        compression=_COMPRESSION_CODECS[codec_name],
        acks=-1 if acks_text == "all" else int(acks_text),
    )
