"""Per-group dynamic configs (ConfigResource GROUP = 32; Kafka 4.3.1's ``GroupConfig``):
``consumer.*``, ``share.*`` and ``streams.*`` overrides of the broker's group coordinator
configs, altered with IncrementalAlterConfigs and described with DescribeConfigs, plus the
kafkacore extension ``share.key.ordering``.

Validation (Kafka's ``GroupConfig.validate``): unknown names are refused, each value is
parsed and checked by its definition, then against the broker's bounds (for example
``share.record.lock.duration.ms`` within ``group.share.min/max.record.lock.duration.ms``)
and the session timeout must exceed the heartbeat interval. Every failure is
:class:`~kafkacore.config.ConfigError` (INVALID_CONFIG on the wire).

``share.key.ordering`` (boolean, default false) is not a Kafka config: under it the
broker never has two records with the same key acquired by share consumers at once
(docs/share-groups.md).

Immutable definitions and pure functions: thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kafkacore.config.broker import BrokerConfig
from kafkacore.config.defs import (
    ConfigDef,
    ConfigError,
    ConfigKey,
    Importance,
    LambdaValidator,
    Range,
    Type,
    ValidString,
    convert_to_string,
)
from kafkacore.config.describe import ConfigEntry, ConfigSource

__all__ = [
    "GROUP_CONFIG_DEF",
    "KAFKACORE_GROUP_CONFIGS",
    "SHARE_KEY_ORDERING",
    "ShareGroupSettings",
    "describe_group_configs",
    "share_group_settings",
    "validate_group_configs",
]

SHARE_KEY_ORDERING: Final = "share.key.ordering"
"""The kafkacore extension: per-key order for share consumers."""

_BY_DURATION = re.compile(r"^by_duration:(.+)$")
_ISO_DURATION = re.compile(
    r"^(?P<sign>[-+]?)P(?:(?P<days>[-+]?\d+)D)?"
    r"(?:T(?:(?P<hours>[-+]?\d+)H)?(?:(?P<minutes>[-+]?\d+)M)?"
    r"(?:(?P<seconds>[-+]?\d+)(?:[.,](?P<fraction>\d{0,9}))?S)?)?$",
    re.IGNORECASE,
)


def parse_duration_ms(text: str) -> int | None:
    """``java.time.Duration.parse`` (``PnDTnHnMn.nS``) in milliseconds; None if invalid."""
    m = _ISO_DURATION.match(text.strip())
    if (
        m is None
        or text.strip().upper().endswith("T")
        or not any(m.group(g) for g in ("days", "hours", "minutes", "seconds"))
    ):
        return None
    sign = -1 if m.group("sign") == "-" else 1
    days = int(m.group("days") or 0)
    hours = int(m.group("hours") or 0)
    minutes = int(m.group("minutes") or 0)
    seconds = int(m.group("seconds") or 0)
    fraction = (m.group("fraction") or "").ljust(9, "0")[:9]
    nanos = int(fraction) if fraction else 0
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    return sign * (total * 1000 + nanos // 1_000_000)


def _check_auto_offset_reset(name: str, value: Any) -> None:
    """``ShareGroupAutoOffsetResetStrategy.Validator``."""
    text = str(value).strip().lower() if value is not None else ""
    if text in ("latest", "earliest"):
        return
    m = _BY_DURATION.match(text)
    if m is not None:
        duration = parse_duration_ms(m.group(1))
        if duration is not None and duration >= 0:
            return
        raise (
            ConfigError(name, value, "Invalid duration format for 'by_duration'")
            if duration is None
            else ConfigError(name, value, "Duration cannot be negative")
        )
    raise ConfigError(name, value, "Invalid value")


_k = ConfigKey
_INT, _STRING, _BOOLEAN = Type.INT, Type.STRING, Type.BOOLEAN
_MEDIUM = Importance.MEDIUM

GROUP_CONFIG_DEF: Final = ConfigDef(
    [
        _k("consumer.session.timeout.ms", _INT, 45000, Range.at_least(1), _MEDIUM, ""),
        _k("consumer.heartbeat.interval.ms", _INT, 5000, Range.at_least(1), _MEDIUM, ""),
        _k("consumer.assignment.interval.ms", _INT, 1000, Range.at_least(0), _MEDIUM, ""),
        _k("share.session.timeout.ms", _INT, 45000, Range.at_least(1), _MEDIUM, ""),
        _k("share.heartbeat.interval.ms", _INT, 5000, Range.at_least(1), _MEDIUM, ""),
        _k("share.record.lock.duration.ms", _INT, 30000, Range.at_least(1000), _MEDIUM, ""),
        _k("share.delivery.count.limit", _INT, 5, Range.at_least(2), _MEDIUM, ""),
        _k("share.partition.max.record.locks", _INT, 2000, Range.at_least(100), _MEDIUM, ""),
        _k(
            "share.auto.offset.reset",
            _STRING,
            "latest",
            LambdaValidator(
                _check_auto_offset_reset, "[latest, earliest, by_duration:PnDTnHnMn.nS]"
            ),
            _MEDIUM,
            "",
        ),
        _k(
            "share.isolation.level",
            _STRING,
            "read_uncommitted",
            ValidString(("read_committed", "read_uncommitted")),
            _MEDIUM,
            "",
        ),
        _k("share.renew.acknowledge.enable", _BOOLEAN, True, None, _MEDIUM, ""),
        _k("share.assignment.interval.ms", _INT, 1000, Range.at_least(0), _MEDIUM, ""),
        _k("streams.session.timeout.ms", _INT, 45000, Range.at_least(1), _MEDIUM, ""),
        _k("streams.heartbeat.interval.ms", _INT, 5000, Range.at_least(1), _MEDIUM, ""),
        _k("streams.num.standby.replicas", _INT, 0, Range.at_least(0), _MEDIUM, ""),
        _k("streams.initial.rebalance.delay.ms", _INT, 3000, Range.at_least(0), _MEDIUM, ""),
        _k("streams.assignment.interval.ms", _INT, 1000, Range.at_least(0), _MEDIUM, ""),
    ]
)
"""Kafka 4.3.1's ``GroupConfig.CONFIG_DEF``: names, types, defaults, validators."""

KAFKACORE_GROUP_CONFIGS: Final = ConfigDef(
    [_k(SHARE_KEY_ORDERING, _BOOLEAN, False, None, _MEDIUM, "kafkacore: per-key order")]
)
"""The group configs kafkacore adds (extensions, not in Kafka)."""

# (group config, broker min, broker max): the bounds GroupConfig.validate checks
_BOUNDS: Final = (
    ("consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms",
     "group.consumer.max.heartbeat.interval.ms"),
    ("consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
     "group.consumer.max.session.timeout.ms"),
    ("consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms",
     "group.consumer.max.assignment.interval.ms"),
    ("share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms",
     "group.share.max.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "group.share.min.session.timeout.ms",
     "group.share.max.session.timeout.ms"),
    ("share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms",
     "group.share.max.record.lock.duration.ms"),
    ("share.delivery.count.limit", "group.share.min.delivery.count.limit",
     "group.share.max.delivery.count.limit"),
    ("share.partition.max.record.locks", "group.share.min.partition.max.record.locks",
     "group.share.max.partition.max.record.locks"),
    ("share.assignment.interval.ms", "group.share.min.assignment.interval.ms",
     "group.share.max.assignment.interval.ms"),
)  # fmt: skip

# the broker config whose value a group config overrides (its default when not set)
_BROKER_DEFAULTS: Final = {
    "consumer.session.timeout.ms": "group.consumer.session.timeout.ms",
    "consumer.heartbeat.interval.ms": "group.consumer.heartbeat.interval.ms",
    "consumer.assignment.interval.ms": "group.consumer.assignment.interval.ms",
    "share.session.timeout.ms": "group.share.session.timeout.ms",
    "share.heartbeat.interval.ms": "group.share.heartbeat.interval.ms",
    "share.record.lock.duration.ms": "group.share.record.lock.duration.ms",
    "share.delivery.count.limit": "group.share.delivery.count.limit",
    "share.partition.max.record.locks": "group.share.partition.max.record.locks",
    "share.assignment.interval.ms": "group.share.assignment.interval.ms",
}


def _key(name: str) -> ConfigKey | None:
    return GROUP_CONFIG_DEF.get(name) or KAFKACORE_GROUP_CONFIGS.get(name)


def _broker_value(broker: BrokerConfig, name: str) -> Any:
    return getattr(broker, name.replace(".", "_"), None)


def validate_group_configs(props: Mapping[str, str], broker: BrokerConfig) -> dict[str, Any]:
    """``GroupConfig.validate``: the parsed values of ``props`` (the group's overrides
    after an alteration); raises :class:`ConfigError`."""
    for name in props:
        if _key(name) is None:
            raise ConfigError(name, None, None, message=f"Unknown group config name: {name}")
    parsed: dict[str, Any] = {}
    for name, text in props.items():
        key = _key(name)
        assert key is not None
        parsed[name] = key.parse(text)
    for name, low, high in _BOUNDS:
        if name not in parsed:
            continue
        lo, hi = _broker_value(broker, low), _broker_value(broker, high)
        if lo is not None and parsed[name] < lo:
            raise ConfigError(
                name, parsed[name], message=f"{name} must be greater than or equal to {low}"
            )
        if hi is not None and parsed[name] > hi:
            raise ConfigError(
                name, parsed[name], message=f"{name} must be less than or equal to {high}"
            )
    for prefix in ("consumer", "share", "streams"):
        session, heartbeat = f"{prefix}.session.timeout.ms", f"{prefix}.heartbeat.interval.ms"
        if session in parsed or heartbeat in parsed:
            s = parsed.get(session, _effective(broker, session))
            h = parsed.get(heartbeat, _effective(broker, heartbeat))
            if s is not None and h is not None and s <= h:
                raise ConfigError(session, s, message=f"{session} must be greater than {heartbeat}")
    return parsed


def _effective(broker: BrokerConfig, name: str) -> Any:
    broker_name = _BROKER_DEFAULTS.get(name)
    if broker_name is not None:
        value = _broker_value(broker, broker_name)
        if value is not None:
            return value
    key = _key(name)
    return None if key is None else key.default_value()


def describe_group_configs(
    props: Mapping[str, str], broker: BrokerConfig, names: list[str] | None = None
) -> list[ConfigEntry]:
    """DescribeConfigs of a GROUP resource: every group config, the group's value
    (DYNAMIC_GROUP_CONFIG) or the effective default (DEFAULT_CONFIG)."""
    out = []
    for key in [*GROUP_CONFIG_DEF.config_keys(), *KAFKACORE_GROUP_CONFIGS.config_keys()]:
        if names is not None and key.name not in names:
            continue
        value: str | None
        if key.name in props:
            value, source = props[key.name], ConfigSource.DYNAMIC_GROUP_CONFIG
        else:
            value = convert_to_string(_effective(broker, key.name), key.type)
            source = ConfigSource.DEFAULT_CONFIG
        out.append(
            ConfigEntry(
                name=key.name,
                value=value,
                source=source,
                is_sensitive=False,
                read_only=False,
                type=key.type,
            )
        )
    return out


@dataclass(frozen=True)
class ShareGroupSettings:
    """The share configs in force for one group (its overrides over the broker's)."""

    record_lock_duration_ms: int
    delivery_count_limit: int
    partition_max_record_locks: int
    session_timeout_ms: int
    heartbeat_interval_ms: int
    auto_offset_reset: str
    isolation_level: str
    renew_acknowledge_enable: bool
    key_ordering: bool

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == "read_committed"

    def reset_duration_ms(self) -> int | None:
        """``by_duration:<ISO-8601>``'s duration, else None."""
        m = _BY_DURATION.match(self.auto_offset_reset)
        return None if m is None else parse_duration_ms(m.group(1))


def share_group_settings(props: Mapping[str, str], broker: BrokerConfig) -> ShareGroupSettings:
    """The effective share settings of a group with overrides ``props`` (stored values
    that no longer parse fall back to the defaults, as Kafka's config manager keeps the
    last valid ones)."""

    def value(name: str) -> Any:
        text = props.get(name)
        key = _key(name)
        if text is not None and key is not None:
            try:
                return key.parse(text)
            except ConfigError:
                pass
        return _effective(broker, name)

    return ShareGroupSettings(
        record_lock_duration_ms=int(value("share.record.lock.duration.ms")),
        delivery_count_limit=int(value("share.delivery.count.limit")),
        partition_max_record_locks=int(value("share.partition.max.record.locks")),
        session_timeout_ms=int(value("share.session.timeout.ms")),
        heartbeat_interval_ms=int(value("share.heartbeat.interval.ms")),
        auto_offset_reset=str(value("share.auto.offset.reset")).strip().lower(),
        isolation_level=str(value("share.isolation.level")),
        renew_acknowledge_enable=bool(value("share.renew.acknowledge.enable")),
        key_ordering=bool(value(SHARE_KEY_ORDERING)),
    )
