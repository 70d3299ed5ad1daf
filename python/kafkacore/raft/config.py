"""The quorum's configuration (Kafka's ``QuorumConfig``): Kafka's keys, defaults and the
parsing of ``controller.quorum.voters`` and ``controller.quorum.bootstrap.servers``.

Immutable: thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "MAX_BATCH_SIZE_BYTES",
    "MAX_FETCH_WAIT_MS",
    "QuorumConfig",
    "QuorumConfigError",
    "parse_bootstrap_servers",
    "parse_voters",
]

#: ``KafkaRaftClient.MAX_BATCH_SIZE_BYTES``: the largest batch a leader builds.
MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024
#: ``KafkaRaftClient.MAX_FETCH_WAIT_MS``: how long a follower's Fetch may wait at the leader.
MAX_FETCH_WAIT_MS = 500
_NON_ROUTABLE_HOST = "0.0.0.0"


class QuorumConfigError(ValueError):
    """A quorum configuration Kafka refuses (Kafka's ``ConfigException`` text)."""


@dataclass(frozen=True)
class QuorumConfig:
    """``controller.quorum.*`` with Kafka 4.3.1's defaults (``QuorumConfig.CONFIG_DEF``)."""

    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    request_timeout_ms: int = 2000
    retry_backoff_ms: int = 20
    append_linger_ms: int = 25
    fetch_max_bytes: int = 1048576
    fetch_snapshot_max_bytes: int = 1048576
    auto_join: bool = False
    fetch_max_wait_ms: int = MAX_FETCH_WAIT_MS

    _KEYS: ClassVar[dict[str, str]] = {
        "controller.quorum.election.timeout.ms": "election_timeout_ms",
        "controller.quorum.fetch.timeout.ms": "fetch_timeout_ms",
        "controller.quorum.election.backoff.max.ms": "election_backoff_max_ms",
        "controller.quorum.request.timeout.ms": "request_timeout_ms",
        "controller.quorum.retry.backoff.ms": "retry_backoff_ms",
        "controller.quorum.append.linger.ms": "append_linger_ms",
        "controller.quorum.fetch.max.bytes": "fetch_max_bytes",
        "controller.quorum.fetch.snapshot.max.bytes": "fetch_snapshot_max_bytes",
    }

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> QuorumConfig:
        """From Kafka's property names (values as strings or numbers); absent keys keep
        the defaults."""
        values: dict[str, Any] = {}
        for key, attr in cls._KEYS.items():
            if key in props:
                try:
                    value = int(props[key])
                except (TypeError, ValueError):
                    raise QuorumConfigError(
                        f"Invalid value {props[key]} for configuration {key}: Not a number of "
                        "type INT"
                    ) from None
                if value < 0:
                    raise QuorumConfigError(
                        f"Invalid value {value} for configuration {key}: Value must be at least 0"
                    )
                values[attr] = value
        auto_join = props.get("controller.quorum.auto.join.enable")
        if auto_join is not None:
            values["auto_join"] = str(auto_join).strip().lower() == "true"
        return cls(**values)


def _entries(value: str | Sequence[str]) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value)
    return [item.strip() for item in items if item.strip()]


def parse_voters(value: str | Sequence[str]) -> dict[int, tuple[str, int]]:
    """``controller.quorum.voters`` (``{id}@{host}:{port}``, comma-separated) as
    ``{id: (host, port)}``, with Kafka's ``parseVoterConnections`` errors."""
    voters: dict[int, tuple[str, int]] = {}
    for entry in _entries(value):
        ident, at, address = entry.partition("@")
        host, colon, port_text = address.rpartition(":")
        try:
            node_id = int(ident)
            port = int(port_text)
        except ValueError:
            node_id, port = -1, -1
        if not at or not colon or not host or node_id < 0 or not 0 <= port <= 65535:
            raise QuorumConfigError(
                "Invalid configuration value for controller.quorum.voters. Each entry should "
                "be in the form `{id}@{host}:{port}`."
            )
        if host == _NON_ROUTABLE_HOST:
            raise QuorumConfigError(f"Host string ({host}) is not routeable")
        voters[node_id] = (host.strip("[]"), port)
    return voters


def parse_bootstrap_servers(value: str | Sequence[str]) -> list[tuple[str, int]]:
    """``controller.quorum.bootstrap.servers`` (``{host}:{port}``) as addresses."""
    servers = []
    key = "controller.quorum.bootstrap.servers"
    for entry in _entries(value):
        host, colon, port_text = entry.rpartition(":")
        if not colon or not host:
            raise QuorumConfigError(
                f"Failed to parse host name from {entry} for the configuration {key}. Each "
                'entry should be in the form "{host}:{port}"'
            )
        try:
            port = int(port_text)
        except ValueError:
            raise QuorumConfigError(
                f"Failed to parse host port from {entry} for the configuration {key}. Each "
                'entry should be in the form "{host}:{port}"'
            ) from None
        servers.append((host.strip("[]"), port))
    return servers
