"""The broker as its web console sees it: a :class:`ServerView` of a running
:class:`~kafkacore.server.KafkaServer`, shaped as the console's
:class:`~kafkacore.console.broker_view.BrokerView` Protocol (structurally: the library
does not import the console). ``kafkacore server-start`` and
:class:`~kafkacore.embedded.EmbeddedBroker` hand one to
:func:`kafkacore.console.start_beside`.

Thread-safety: read on the broker's event loop, as the broker's own objects are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafkacore.config import BrokerConfig
    from kafkacore.log import LogManager, TopicPartition
    from kafkacore.log.cleaner import LogCleaner
    from kafkacore.security.acl import Authorizer
    from kafkacore.server.broker import KafkaServer
    from kafkacore.server.metrics import BrokerMetrics
    from kafkacore.server.partition import Partition

__all__ = ["ServerView"]


class ServerView:
    """The console's :class:`~kafkacore.console.broker_view.BrokerView` of a
    :class:`~kafkacore.server.KafkaServer`: its logs, replicas, cleaner, counters,
    authorizer and bound ports, read when asked (the broker fills them in as it starts)."""

    def __init__(self, server: KafkaServer) -> None:
        self._server = server

    @property
    def node_id(self) -> int:
        return self._server.node_id

    @property
    def config(self) -> BrokerConfig:
        return self._server.config

    @property
    def logs(self) -> LogManager | None:
        return self._server.logs

    @property
    def cleaner(self) -> LogCleaner | None:
        return self._server.cleaner

    @property
    def metrics(self) -> BrokerMetrics | None:
        return self._server.metrics

    @property
    def authorizer(self) -> Authorizer | None:
        services = self._server.services
        return services.authorizer if services is not None else None

    @property
    def bound_ports(self) -> Mapping[str, int]:
        sockets = self._server.socket_server
        return sockets.bound_ports if sockets is not None else {}

    def replica(self, tp: TopicPartition) -> Partition | None:
        replicas = self._server.replicas
        return replicas.get_partition(tp) if replicas is not None else None

    def topic_configs(self, topic: str) -> Mapping[str, str] | None:
        replicas = self._server.replicas
        return replicas.cache.topic_configs(topic) if replicas is not None else None
