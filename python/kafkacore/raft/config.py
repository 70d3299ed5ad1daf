"""The quorum's configuration (Kafka's ``QuorumConfig``): Kafka's keys and defaults; the
parsing of ``controller.quorum.voters`` and ``controller.quorum.bootstrap.servers`` is
:mod:`kafkacore.config.quorum`'s, re-exported here.

Immutable: thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

# the parsing of the quorum's addresses is the config package's (its validators use it)
from kafkacore.config.quorum import QuorumConfigError, parse_bootstrap_servers, parse_voters

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
