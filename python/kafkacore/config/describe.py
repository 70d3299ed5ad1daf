"""The shapes of DescribeConfigs results: where a value comes from (:class:`ConfigSource`),
its synonyms, and one result entry."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkacore.config.defs import (
    Type,
)

# ---------------------------------------------------------------------------------------------
# DescribeConfigs shapes


class ConfigSource(enum.IntEnum):
    """Where a config value comes from: Kafka's admin ``ConfigEntry.ConfigSource`` names with
    the DescribeConfigs wire ids (``TOPIC_CONFIG`` on the wire is ``DYNAMIC_TOPIC_CONFIG``)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    DYNAMIC_CLIENT_METRICS_CONFIG = 7
    DYNAMIC_GROUP_CONFIG = 8


class ConfigSynonym(NamedTuple):
    """One place a config's value is or could be set, highest precedence first in a list."""

    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    """One DescribeConfigs result entry. ``value`` is printed as Kafka prints it and is
    ``None`` for sensitive configs (and for unset ones with no default)."""

    name: str
    value: str | None
    source: ConfigSource
    is_sensitive: bool
    read_only: bool
    synonyms: list[ConfigSynonym] = field(default_factory=list)
    type: Type | None = None
    documentation: str | None = None

    @property
    def is_default(self) -> bool:
        return self.source is ConfigSource.DEFAULT_CONFIG


# ---------------------------------------------------------------------------------------------
# Secrets in logs

HIDDEN = "[hidden]"  # Kafka's Password.HIDDEN, what its loggableConfig prints for a secret


def loggable_broker_configs(configs: Mapping[str, str | None]) -> dict[str, str | None]:
    """``configs`` fit for a log line, as Kafka's ``DynamicBrokerConfig`` logs them: the
    value of a sensitive config (PASSWORD type, or unknown, as DescribeConfigs treats it;
    listener-prefixed names included) is ``[hidden]``."""
    from kafkacore.config.broker import broker_config_type

    out: dict[str, str | None] = {}
    for name, value in configs.items():
        type_ = broker_config_type(name)
        sensitive = type_ is None or type_.is_sensitive
        out[name] = HIDDEN if sensitive and value is not None else value
    return out
