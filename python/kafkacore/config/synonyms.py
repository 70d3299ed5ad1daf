"""Which broker configs stand behind each topic config, and which broker configs are synonyms
of each other (Kafka's ``ServerTopicConfigSynonyms`` and
``DynamicBrokerConfig.brokerConfigSynonyms``, Kafka 4.3).

A topic config that is not overridden takes the broker's value; where the broker has several
names for it, the first one that is set wins (``log.retention.ms`` > ``log.retention.minutes``
> ``log.retention.hours``). The unit factor converts each synonym to the topic config's unit.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

__all__ = [
    "ALL_TOPIC_CONFIG_SYNONYMS",
    "TOPIC_CONFIG_SYNONYMS",
    "ServerSynonym",
    "broker_config_synonyms",
]

_HOURS: Final = 60 * 60 * 1000
_MINUTES: Final = 60 * 1000


class ServerSynonym(NamedTuple):
    """A broker config a topic config falls back to; ``to_topic_unit`` multiplies its value
    into the topic config's unit (hours and minutes to milliseconds)."""

    name: str
    to_topic_unit: int = 1


def _same(name: str) -> tuple[ServerSynonym, ...]:
    return (ServerSynonym(name),)


def _log(name: str) -> tuple[ServerSynonym, ...]:
    return (ServerSynonym("log." + name),)


def _cleaner(name: str) -> tuple[ServerSynonym, ...]:
    return (ServerSynonym("log.cleaner." + name),)


ALL_TOPIC_CONFIG_SYNONYMS: Final[dict[str, tuple[ServerSynonym, ...]]] = {
    "segment.bytes": _log("segment.bytes"),
    "segment.ms": (ServerSynonym("log.roll.ms"), ServerSynonym("log.roll.hours", _HOURS)),
    "segment.jitter.ms": (
        ServerSynonym("log.roll.jitter.ms"),
        ServerSynonym("log.roll.jitter.hours", _HOURS),
    ),
    "segment.index.bytes": _log("index.size.max.bytes"),
    "flush.messages": _log("flush.interval.messages"),
    "flush.ms": (
        ServerSynonym("log.flush.interval.ms"),
        ServerSynonym("log.flush.scheduler.interval.ms"),
    ),
    "retention.bytes": _log("retention.bytes"),
    "retention.ms": (
        ServerSynonym("log.retention.ms"),
        ServerSynonym("log.retention.minutes", _MINUTES),
        ServerSynonym("log.retention.hours", _HOURS),
    ),
    "max.message.bytes": _same("message.max.bytes"),
    "index.interval.bytes": _log("index.interval.bytes"),
    "delete.retention.ms": _cleaner("delete.retention.ms"),
    "min.compaction.lag.ms": _cleaner("min.compaction.lag.ms"),
    "max.compaction.lag.ms": _cleaner("max.compaction.lag.ms"),
    "file.delete.delay.ms": _log("segment.delete.delay.ms"),
    "min.cleanable.dirty.ratio": _cleaner("min.cleanable.ratio"),
    "cleanup.policy": _log("cleanup.policy"),
    "unclean.leader.election.enable": _same("unclean.leader.election.enable"),
    "min.insync.replicas": _same("min.insync.replicas"),
    "compression.type": _same("compression.type"),
    "compression.gzip.level": _same("compression.gzip.level"),
    "compression.lz4.level": _same("compression.lz4.level"),
    "compression.zstd.level": _same("compression.zstd.level"),
    "preallocate": _log("preallocate"),
    "message.timestamp.type": _log("message.timestamp.type"),
    "message.timestamp.before.max.ms": _log("message.timestamp.before.max.ms"),
    "message.timestamp.after.max.ms": _log("message.timestamp.after.max.ms"),
    "local.retention.ms": _log("local.retention.ms"),
    "local.retention.bytes": _log("local.retention.bytes"),
}
"""Topic config -> the broker configs it falls back to, in precedence order. Topic configs
missing here (remote.storage.enable, remote.log.copy.disable, remote.log.delete.on.disable and
the two replication throttle lists) have no broker-level default."""

TOPIC_CONFIG_SYNONYMS: Final[dict[str, str]] = {
    topic: synonyms[0].name for topic, synonyms in ALL_TOPIC_CONFIG_SYNONYMS.items()
}
"""Topic config -> its primary broker config (the one DescribeConfigs reports synonyms for)."""

_BROKER_SYNONYM_GROUPS: Final = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)

# sasl.* configs set per mechanism: listener.name.<l>.<mechanism>.<config>.
_LISTENER_MECHANISM_CONFIGS: Final = (
    "sasl.jaas.config",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.server.callback.handler.class",
    "connections.max.reauth.ms",
)
_LISTENER_CONFIG_RE: Final = re.compile(r"listener\.name\.[^.]*\.(.*)")


def broker_config_synonyms(name: str, match_listener_override: bool = True) -> list[str]:
    """The broker configs that set the same thing as ``name``, highest precedence first
    (``log.retention.hours`` -> ``[log.retention.ms, log.retention.minutes,
    log.retention.hours]``; ``listener.name.x.ssl.key.password`` -> itself then
    ``ssl.key.password``)."""
    for group in _BROKER_SYNONYM_GROUPS:
        if name in group:
            return list(group)
    if name == "log.flush.interval.ms":
        # log.flush.scheduler.interval.ms is its default.
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    if match_listener_override:
        m = _LISTENER_CONFIG_RE.fullmatch(name)
        if m:
            base = m.group(1)
            mechanism = next((c for c in _LISTENER_MECHANISM_CONFIGS if base.endswith(c)), None)
            return [name, mechanism or base]
    return [name]
