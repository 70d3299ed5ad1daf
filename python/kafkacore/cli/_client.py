"""Client properties written for Kafka's Java tools (``--command-config``,
``--producer.config``, ``--consumer.config``), given to confluent-kafka: the same file
serves Kafka's tools and kafkacore's.

Most names are the same in both clients (``security.protocol``, ``sasl.mechanism``,
``ssl.key.password``, ``client.id``...). The rest is translated:

* ``sasl.jaas.config``: the ``username`` and ``password`` of a PlainLoginModule or
  ScramLoginModule line become ``sasl.username`` / ``sasl.password``;
* PEM stores: ``ssl.truststore.location`` -> ``ssl.ca.location``,
  ``ssl.truststore.certificates`` -> ``ssl.ca.pem``, a PEM ``ssl.keystore.location`` (key
  and chain in one file) -> ``ssl.certificate.location`` and ``ssl.key.location``,
  ``ssl.keystore.certificate.chain`` / ``ssl.keystore.key`` -> ``ssl.certificate.pem`` /
  ``ssl.key.pem``;
* ``ssl.endpoint.identification.algorithm`` empty (Java's "no host name check") ->
  ``none``;
* Java-only names (store types and store passwords, which PEM does not use, and the
  Java client's class and timeout settings librdkafka does not have) are dropped.

JKS and PKCS#12 stores cannot be used by librdkafka's PEM paths: a UsageError says so.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

__all__ = ["librdkafka_config"]

_RENAMED = {
    "ssl.truststore.location": "ssl.ca.location",
    "ssl.truststore.certificates": "ssl.ca.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.keystore.key": "ssl.key.pem",
}
_DROPPED = frozenset(
    {
        "ssl.truststore.type",
        "ssl.keystore.type",
        "ssl.truststore.password",
        "ssl.keystore.password",
        "key.serializer",
        "value.serializer",
        "key.deserializer",
        "value.deserializer",
        "default.api.timeout.ms",
        "sasl.login.callback.handler.class",
        "sasl.client.callback.handler.class",
        "ssl.engine.factory.class",
    }
)


def librdkafka_config(props: Mapping[str, str]) -> dict[str, str]:
    """``props`` (Java client names) as confluent-kafka configuration. Raises
    ``ValueError`` for a key or trust store librdkafka cannot read."""
    out: dict[str, str] = {}
    for key in ("ssl.keystore.type", "ssl.truststore.type"):
        kind = props.get(key)
        if kind and kind.upper() != "PEM":
            raise ValueError(
                f"{key}={kind}: only PEM stores can be given to kafkacore's tools "
                "(librdkafka reads PEM files)"
            )
    for key, value in props.items():
        if key == "sasl.jaas.config":
            out.update(_jaas_credentials(value))
        elif key == "ssl.endpoint.identification.algorithm":
            out[key] = value or "none"
        elif key == "ssl.keystore.location":
            out["ssl.certificate.location"] = value
            out["ssl.key.location"] = value
        elif key in _RENAMED:
            out[_RENAMED[key]] = value
        elif key not in _DROPPED:
            out[key] = value
    return out


def _jaas_credentials(jaas: str) -> dict[str, str]:
    """``username="u" password="p"`` of a PlainLoginModule / ScramLoginModule line."""
    out = {}
    for token in shlex.split(jaas.strip().rstrip(";")):
        key, sep, value = token.partition("=")
        if sep and key in ("username", "password"):
            out[f"sasl.{key}"] = value
    return out
