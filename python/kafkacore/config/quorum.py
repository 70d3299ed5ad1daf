"""``controller.quorum.voters`` and ``controller.quorum.bootstrap.servers`` (Kafka 4.3's
``QuorumConfig.parseVoterConnections`` and ``parseBootstrapServers``, and their config
validators), with Kafka's messages.

Pure functions: thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kafkacore.config.defs import ConfigError

__all__ = [
    "BootstrapServersValidator",
    "QuorumConfigError",
    "VotersValidator",
    "parse_bootstrap_servers",
    "parse_voter_ids",
    "parse_voters",
]

_NON_ROUTABLE_HOST = "0.0.0.0"
# Kafka's Utils.HOST_PORT_PATTERN and VALID_HOST_CHARACTERS
_HOST_PORT = re.compile(r".*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)")
_VALID_HOST = re.compile(r"([0-9a-zA-Z\-%._:]*)")
_VOTERS = "controller.quorum.voters"
_BOOTSTRAP = "controller.quorum.bootstrap.servers"


class QuorumConfigError(ValueError):
    """A quorum configuration Kafka refuses (Kafka's ``ConfigException`` text)."""


def _entries(value: str | Sequence[str]) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value)
    return [item.strip() for item in items if item.strip()]


def _host_port(entry: str) -> tuple[str | None, int | None]:
    """Kafka's ``Utils.getHost`` and ``Utils.getPort``."""
    match = _HOST_PORT.fullmatch(entry)
    if match is None:
        return None, None
    try:
        return match.group(1), int(match.group(2))
    except ValueError:
        return match.group(1), None


def parse_voters(
    value: str | Sequence[str], *, routable: bool = True
) -> dict[int, tuple[str, int]]:
    """``controller.quorum.voters`` (``{id}@{host}:{port}``, comma-separated) as
    ``{id: (host, port)}``, with Kafka's ``parseVoterConnections`` errors."""
    voters: dict[int, tuple[str, int]] = {}
    for entry in _entries(value):
        parts = [p for p in entry.split("@")]
        while parts and parts[-1] == "":  # Java's String.split drops trailing empties
            parts.pop()
        if len(parts) != 2:
            raise QuorumConfigError(
                "Invalid configuration value for controller.quorum.voters. Each entry should "
                "be in the form `{id}@{host}:{port}`."
            )
        try:
            node_id = int(parts[0])
        except ValueError:
            raise QuorumConfigError(
                f"Failed to parse voter ID as an integer from {parts[0]}"
            ) from None
        host, port = _host_port(parts[1])
        if host is None or not _VALID_HOST.fullmatch(host):
            raise QuorumConfigError(
                f"Failed to parse host name from entry {entry} for the configuration "
                "controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."
            )
        if port is None:
            raise QuorumConfigError(
                f"Failed to parse host port from entry {entry} for the configuration "
                "controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."
            )
        if routable and host == _NON_ROUTABLE_HOST:
            raise QuorumConfigError(f"Host string ({host}) is not routeable")
        voters[node_id] = (host, port)
    return voters


def parse_voter_ids(value: str | Sequence[str]) -> set[int]:
    """``QuorumConfig.parseVoterIds``: the voters' ids (addresses need not be routable)."""
    return set(parse_voters(value, routable=False))


def parse_bootstrap_servers(value: str | Sequence[str]) -> list[tuple[str, int]]:
    """``controller.quorum.bootstrap.servers`` (``{host}:{port}``) as addresses."""
    servers = []
    for entry in _entries(value):
        host, port = _host_port(entry)
        if host is None:
            raise QuorumConfigError(
                f"Failed to parse host name from {entry} for the configuration {_BOOTSTRAP}. "
                'Each entry should be in the form "{host}:{port}"'
            )
        if port is None:
            raise QuorumConfigError(
                f"Failed to parse host port from {entry} for the configuration {_BOOTSTRAP}. "
                'Each entry should be in the form "{host}:{port}"'
            )
        servers.append((host, port))
    return servers


class VotersValidator:
    """``ControllerQuorumVotersValidator``."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, None, "null")
        try:
            parse_voters(value, routable=False)  # routability is the Raft client's check
        except QuorumConfigError as exc:
            raise ConfigError(name, value, str(exc), message=str(exc)) from None

    def __str__(self) -> str:
        return "non-empty list"


class BootstrapServersValidator:
    """``ControllerQuorumBootstrapServersValidator``."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, None, "null")
        try:
            parse_bootstrap_servers(value)
        except QuorumConfigError as exc:
            raise ConfigError(name, value, str(exc), message=str(exc)) from None

    def __str__(self) -> str:
        return "non-empty list"
