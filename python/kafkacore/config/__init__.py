"""Kafka's configuration model: every broker and topic config with Kafka's name, type,
default, validator, error message and precedence.

* :class:`BrokerConfig` -- ``server.properties`` (plus dynamic updates) parsed and checked as
  Kafka's ``KafkaConfig`` does.
* :class:`LogConfig` -- a topic's overrides on top of the broker's ``log.*`` defaults.
* :class:`ConfigDef` and the validators -- the declarative machinery both are built from.
* :func:`load_properties` -- Java ``.properties`` files, read as Java reads them.

Every invalid value raises :class:`ConfigError` (a ``ValueError``) with Kafka's message.
"""

from __future__ import annotations

from kafkacore.config.broker import (
    BROKER_CONFIG_DEF,
    DYNAMIC_CONFIGS,
    DYNAMIC_UPDATE_MODES,
    KAFKACORE_DYNAMIC_UPDATE_MODES,
    PER_BROKER_CONFIGS,
    BrokerConfig,
    ConfigEntry,
    ConfigSource,
    ConfigSynonym,
    Endpoint,
    parse_listeners,
)
from kafkacore.config.defs import (
    NO_DEFAULT,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigError,
    ConfigKey,
    Importance,
    LambdaValidator,
    ListSize,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Password,
    Range,
    Type,
    Validator,
    ValidList,
    ValidString,
    convert_to_string,
    parse_type,
)
from kafkacore.config.properties import load_properties, parse_properties
from kafkacore.config.synonyms import (
    ALL_TOPIC_CONFIG_SYNONYMS,
    TOPIC_CONFIG_SYNONYMS,
    broker_config_synonyms,
)
from kafkacore.config.topic import TOPIC_CONFIG_DEF, LogConfig

__all__ = [
    "ALL_TOPIC_CONFIG_SYNONYMS",
    "BROKER_CONFIG_DEF",
    "DYNAMIC_CONFIGS",
    "DYNAMIC_UPDATE_MODES",
    "KAFKACORE_DYNAMIC_UPDATE_MODES",
    "NO_DEFAULT",
    "PER_BROKER_CONFIGS",
    "TOPIC_CONFIG_DEF",
    "TOPIC_CONFIG_SYNONYMS",
    "BrokerConfig",
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "ConfigDef",
    "ConfigEntry",
    "ConfigError",
    "ConfigKey",
    "ConfigSource",
    "ConfigSynonym",
    "Endpoint",
    "Importance",
    "LambdaValidator",
    "ListSize",
    "LogConfig",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "Password",
    "Range",
    "Type",
    "ValidList",
    "ValidString",
    "Validator",
    "broker_config_synonyms",
    "convert_to_string",
    "load_properties",
    "parse_listeners",
    "parse_properties",
    "parse_type",
]
