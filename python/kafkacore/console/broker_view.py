"""What the console sees of the broker it is started beside: :class:`BrokerView`, a narrow
read-only Protocol (its logs, each replica's high watermark and follower progress, the
cleaner, the counters, the authorizer, the listeners' bound ports), never the whole
broker. Kafka's and Redpanda's consoles live outside the broker and see it through the
protocol and its metrics; this one also reads the files, so it is handed exactly that
much.

The broker's assembly (``kafkacore server-start``, :mod:`kafkacore.cli.server`) builds the
view and starts the console with it (:func:`kafkacore.console.serve.start_beside`); the
broker itself does not know the console exists.

Thread-safety: the objects behind a view lock themselves (a ``Log``, a ``Partition``, the
log manager); a view's own members are read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kafkacore.config import BrokerConfig
    from kafkacore.log import Log, LogManager, TopicPartition
    from kafkacore.log.cleaner import LogCleaner
    from kafkacore.security.acl import Authorizer
    from kafkacore.server.metrics import BrokerMetrics

__all__ = ["BrokerView", "FollowerView", "ReplicaView"]


class FollowerView(Protocol):
    """A follower's progress as its leader knows it (from its fetches)."""

    @property
    def log_end_offset(self) -> int: ...


class ReplicaView(Protocol):
    """One replica the broker hosts (Kafka's ``Partition``): its log, whether it leads,
    its high watermark and last stable offset, and as leader each follower's progress."""

    @property
    def log(self) -> Log: ...

    @property
    def is_leader(self) -> bool: ...

    @property
    def high_watermark(self) -> int: ...

    @property
    def last_stable_offset(self) -> int: ...

    def follower_state(self, replica_id: int) -> FollowerView | None: ...


class BrokerView(Protocol):
    """The broker as the console reads it (see the module docstring). ``logs`` is None
    until the broker has loaded its logs; ``authorizer`` None without
    ``authorizer.class.name``; ``bound_ports`` maps each listener name to its port."""

    @property
    def node_id(self) -> int: ...

    @property
    def config(self) -> BrokerConfig: ...

    @property
    def logs(self) -> LogManager | None: ...

    @property
    def cleaner(self) -> LogCleaner | None: ...

    @property
    def metrics(self) -> BrokerMetrics | None: ...

    @property
    def authorizer(self) -> Authorizer | None: ...

    @property
    def bound_ports(self) -> Mapping[str, int]: ...

    def replica(self, tp: TopicPartition) -> ReplicaView | None:
        """The replica of ``tp`` this broker hosts, if any."""
        ...

    def topic_configs(self, topic: str) -> Mapping[str, str] | None:
        """``topic``'s config overrides as the broker's metadata holds them."""
        ...
