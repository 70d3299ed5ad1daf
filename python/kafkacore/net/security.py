"""How a client secures its connections (Kafka's ``ChannelBuilders.clientChannelBuilder``):
TLS with the ``ssl.*`` configs, then a SASL login with a mechanism and a username and
password, before the first request.

Two sources, one result (:class:`ClientSecurity`):

* :func:`client_security`: a Java client's properties (a tool's ``--command-config``, the
  console's admin connection): ``security.protocol``, ``ssl.*``, ``sasl.mechanism`` and
  the ``username`` / ``password`` options of ``sasl.jaas.config``;
* :func:`inter_broker_security`: a broker's connections to the others, on the
  ``inter.broker.listener.name`` / ``security.inter.broker.protocol`` listener: TLS with
  that listener's ``ssl.*`` configs (``client_context``: the peer's certificate is
  verified, and its host name unless ``ssl.endpoint.identification.algorithm`` is empty);
  SASL with ``sasl.mechanism.inter.broker.protocol``, the credentials being the
  ``username`` / ``password`` options of that listener's JAAS config for the mechanism,
  as Kafka's broker uses them.

Thread-safety: the results are immutable; SSL contexts may be shared between threads.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafkacore.config import BrokerConfig
from kafkacore.config.defs import ConfigError
from kafkacore.security.jaas import parse_jaas_config
from kafkacore.security.ssl import client_context, listener_ssl_configs

__all__ = ["ClientSecurity", "client_security", "inter_broker_security"]


@dataclass(frozen=True)
class ClientSecurity:
    """TLS context and SASL mechanism + credentials of a connection (None: none)."""

    ssl_context: ssl.SSLContext | None = None
    sasl_mechanism: str | None = None
    username: str = ""
    password: str = field(default="", repr=False)


_TOOL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def client_security(props: Mapping[str, str]) -> ClientSecurity | None:
    """The security of a Java client properties file (None: PLAINTEXT). Raises
    ``ValueError`` for an unusable combination."""
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ValueError(f"security.protocol={protocol}: not a security protocol")
    if protocol == "PLAINTEXT":
        return None
    context = client_context(props) if protocol.endswith("SSL") else None
    if not protocol.startswith("SASL"):
        return ClientSecurity(context)
    mechanism = props.get("sasl.mechanism", "GSSAPI")
    jaas = props.get("sasl.jaas.config")
    if mechanism not in _TOOL_MECHANISMS or jaas is None:
        raise ValueError(
            f"sasl.mechanism={mechanism}: kafkacore's tools log in with PLAIN or SCRAM and "
            "the username and password of sasl.jaas.config"
        )
    options = parse_jaas_config(jaas, "sasl.jaas.config").options
    return ClientSecurity(
        context, mechanism, options.get("username", ""), options.get("password", "")
    )


_SECURITY_KEYS = ("ssl.", "sasl.", "listener.", "security.", "inter.broker.")


def inter_broker_security(config: BrokerConfig) -> ClientSecurity | None:
    """The security of this broker's connections to other brokers (None: PLAINTEXT).
    Raises :class:`~kafkacore.config.defs.ConfigError` for an unusable configuration."""
    listener, protocol = config.inter_broker_listener()
    return _listener_security(
        _relevant(config), config, listener, protocol, config.sasl_mechanism_inter_broker_protocol
    )


def controller_security(config: BrokerConfig) -> ClientSecurity | None:
    """The security of a KRaft broker's connections to the controllers: the first of
    ``controller.listener.names``, its protocol from ``listener.security.protocol.map``,
    SASL with ``sasl.mechanism.controller.protocol`` (None: PLAINTEXT)."""
    names = config.controller_listener_names or []
    if not names:
        return None
    listener = names[0].upper()
    protocol = config.effective_listener_security_protocol_map().get(listener, "PLAINTEXT")
    return _listener_security(
        _relevant(config), config, listener, protocol, config.sasl_mechanism_controller_protocol
    )


def _relevant(config: BrokerConfig) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted((k, str(v)) for k, v in config.originals.items() if k.startswith(_SECURITY_KEYS))
    )


@functools.lru_cache(maxsize=8)
def _listener_security(
    key: tuple[tuple[str, str], ...],
    config: BrokerConfig,
    listener: str,
    protocol: str,
    mechanism: str,
) -> ClientSecurity | None:
    """Built once per distinct set of security configs (``key``): an SSL context loads
    its key and trust stores from disk."""
    if protocol == "PLAINTEXT":
        return None
    context = None
    if protocol in ("SSL", "SASL_SSL"):
        context = client_context(listener_ssl_configs(config.originals, listener))
    if protocol == "SSL":
        return ClientSecurity(context)
    jaas = config.listener_value(listener, "sasl.jaas.config", mechanism)
    jaas_key = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
    if jaas is None:
        raise ConfigError(
            jaas_key, None, "required: the username and password this broker logs in with"
        )
    options = parse_jaas_config(jaas, jaas_key).options
    if "username" not in options or "password" not in options:
        raise ConfigError(
            jaas_key,
            jaas,
            "the login module needs username and password options for inter-broker SASL",
        )
    return ClientSecurity(context, mechanism, options["username"], options["password"])
