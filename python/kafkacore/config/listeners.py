"""Listener parsing as Kafka's ``CoreUtils.listenerListToEndPoints`` does it (``listeners``,
``advertised.listeners``), and Kafka's ``Csv.parseCsvMap`` (``listener.security.protocol.map``)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Final, NamedTuple

from kafkacore.config.defs import (
    ConfigError,
    java_str,
    java_trim,
)

# ---------------------------------------------------------------------------------------------
# Listeners


class Endpoint(NamedTuple):
    """A parsed listener: ``host`` is ``None`` for the wildcard (empty host in the URI)."""

    listener_name: str
    security_protocol: str
    host: str | None
    port: int

    @property
    def connection_string(self) -> str:
        if self.host is None:
            return f"{self.listener_name}://:{self.port}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener_name}://{host}:{self.port}"


_LISTENER_URI_RE: Final = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _requirement(message: str, name: str | None = None, value: object = None) -> ConfigError:
    """Scala's ``require`` failing in KafkaConfig: IllegalArgumentException's message."""
    return ConfigError(name, value, message, message=f"requirement failed: {message}")


def parse_listeners(
    listeners: list[str],
    protocol_map: Mapping[str, str],
    *,
    require_distinct_ports: bool = True,
) -> list[Endpoint]:
    """Kafka's ``listenerListToEndPoints``: ``NAME://host:port`` entries to endpoints, with
    Kafka's checks (known security protocol, distinct names, distinct ports unless one is
    IPv4 and the other IPv6) and messages."""
    shown = java_str(listeners)

    def fail(reason: str) -> ConfigError:
        return ConfigError(
            "listeners",
            listeners,
            reason,
            message=f"Error creating broker listeners from '{shown}': {reason}",
        )

    endpoints: list[Endpoint] = []
    for entry in listeners:
        m = _LISTENER_URI_RE.fullmatch(entry)
        if m is None:
            raise fail(f"Unable to parse {entry} to a broker endpoint")
        name = m.group(1).upper()
        host: str | None = m.group(2) or None
        port_text = m.group(3)
        port = int(port_text)
        if not -(2**31) <= port < 2**31:
            raise fail(f'For input string: "{port_text}"')
        protocol = protocol_map.get(name)
        if protocol is None:
            raise fail(f"No security protocol defined for listener {name}")
        endpoints.append(Endpoint(name, protocol, host, port))

    if len({e.listener_name for e in endpoints}) != len(endpoints):
        raise fail(f"Each listener must have a different name, listeners: {shown}")
    if require_distinct_ports:
        by_port: dict[int, list[Endpoint]] = {}
        for e in endpoints:
            if e.port != 0:
                by_port.setdefault(e.port, []).append(e)
        for port, group in by_port.items():
            if len(group) < 2:
                continue
            with_ip = [e for e in group if e.host is not None and _is_ip(e.host)]
            without_ip = [e for e in group if e not in with_ip]
            if len(without_ip) > 1:
                raise fail(f"Each listener must have a different port, listeners: {shown}")
            if len(with_ip) == 2:
                a, b = (ipaddress.ip_address(e.host or "") for e in with_ip)
                if a.version == b.version or without_ip:
                    raise fail(
                        "If you have two listeners on the same port then one needs to be IPv4 "
                        f"and the other IPv6, listeners: {shown}, port: {port}"
                    )
            elif len(with_ip) > 2:
                raise fail(
                    "Each listener must have a different port unless exactly one listener has "
                    f"an IPv4 address and the other IPv6 address, listeners: {shown}, port: {port}"
                )
    return endpoints


def parse_csv_map(text: str) -> dict[str, str]:
    """Kafka's ``Csv.parseCsvMap``: ``k:v,k:v`` split at each entry's last colon."""
    result: dict[str, str] = {}
    if not text:
        return result
    for entry in re.split(r"\s*,\s*", text):
        key, _, value = entry.rpartition(":")
        result[java_trim(key)] = java_trim(value)
    return result
