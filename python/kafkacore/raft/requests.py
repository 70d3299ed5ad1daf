"""One request in flight per destination, with timeouts and backoff (Kafka's
``RequestManager``).

A destination is ready (no state), awaiting a response (until ``request.timeout.ms``) or
backing off after a failed response (for ``retry.backoff.ms``). A response is handled
only if it answers the destination's request in flight; anything else is stale. Fetch
has one more rule: at most one Fetch in flight over all destinations, else a follower
could write the same offset twice.

Not thread-safe (the Raft client's).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass

from kafkacore.raft.types import Node

__all__ = ["RequestManager"]


class _State(enum.Enum):
    AWAITING_RESPONSE = "awaiting"
    BACKING_OFF = "backoff"
    READY = "ready"


@dataclass
class _Connection:
    state: _State = _State.READY
    last_send_ms: int = 0
    last_fail_ms: int = 0
    in_flight: int | None = None

    def backoff_complete(self, now: int, backoff_ms: int) -> bool:
        return self.state is _State.BACKING_OFF and now >= self.last_fail_ms + backoff_ms

    def timed_out(self, now: int, timeout_ms: int) -> bool:
        return self.state is _State.AWAITING_RESPONSE and now >= self.last_send_ms + timeout_ms


class RequestManager:
    def __init__(
        self,
        bootstrap_servers: Sequence[Node],
        retry_backoff_ms: int,
        request_timeout_ms: int,
        rng: random.Random,
    ) -> None:
        self._connections: dict[int, _Connection] = {}
        self.bootstrap_servers = list(bootstrap_servers)
        self._backoff_ms = retry_backoff_ms
        self._timeout_ms = request_timeout_ms
        self._rng = rng

    def _expire(self, now: int) -> None:
        """Forget connections whose backoff ended or whose request timed out (ready)."""
        for node_id in [
            k
            for k, c in self._connections.items()
            if c.timed_out(now, self._timeout_ms) or c.backoff_complete(now, self._backoff_ms)
        ]:
            del self._connections[node_id]

    def has_any_inflight_request(self, now: int) -> bool:
        self._expire(now)
        return any(c.state is _State.AWAITING_RESPONSE for c in self._connections.values())

    def find_ready_bootstrap_server(self, now: int) -> Node | None:
        """A random ready bootstrap server, none while any request is in flight."""
        if self.has_any_inflight_request(now) or not self.bootstrap_servers:
            return None
        start = self._rng.randrange(len(self.bootstrap_servers))
        for i in range(len(self.bootstrap_servers)):
            node = self.bootstrap_servers[(start + i) % len(self.bootstrap_servers)]
            if self.is_ready(node, now):
                return node
        return None

    def backoff_before_available_bootstrap_server(self, now: int) -> int:
        minimum = self._backoff_ms
        self._expire(now)
        for connection in self._connections.values():
            if connection.state is _State.AWAITING_RESPONSE:
                return connection.last_send_ms + self._timeout_ms - now
            if connection.state is _State.BACKING_OFF:
                minimum = min(minimum, connection.last_fail_ms + self._backoff_ms - now)
        if any(self.is_ready(node, now) for node in self.bootstrap_servers):
            return 0
        return minimum

    def has_request_timed_out(self, node: Node, now: int) -> bool:
        connection = self._connections.get(node.id)
        return connection is not None and connection.timed_out(now, self._timeout_ms)

    def is_ready(self, node: Node, now: int) -> bool:
        connection = self._connections.get(node.id)
        if connection is None:
            return True
        if connection.backoff_complete(now, self._backoff_ms) or connection.timed_out(
            now, self._timeout_ms
        ):
            del self._connections[node.id]
            return True
        return False

    def is_backing_off(self, node: Node, now: int) -> bool:
        connection = self._connections.get(node.id)
        return (
            connection is not None
            and connection.state is _State.BACKING_OFF
            and not connection.backoff_complete(now, self._backoff_ms)
        )

    def remaining_request_time_ms(self, node: Node, now: int) -> int:
        connection = self._connections.get(node.id)
        if connection is None or connection.state is not _State.AWAITING_RESPONSE:
            return 0
        return max(0, connection.last_send_ms + self._timeout_ms - now)

    def remaining_backoff_ms(self, node: Node, now: int) -> int:
        if not self.is_backing_off(node, now):
            return 0
        connection = self._connections[node.id]
        return connection.last_fail_ms + self._backoff_ms - now

    def is_response_expected(self, node: Node, correlation_id: int) -> bool:
        connection = self._connections.get(node.id)
        return connection is not None and connection.in_flight == correlation_id

    def on_response_result(self, node: Node, correlation_id: int, success: bool, now: int) -> None:
        if not self.is_response_expected(node, correlation_id):
            return
        if success:
            self.reset(node)
        else:
            connection = self._connections[node.id]
            connection.last_fail_ms = now
            connection.state = _State.BACKING_OFF
            connection.in_flight = None

    def on_request_sent(self, node: Node, correlation_id: int, now: int) -> None:
        connection = self._connections.setdefault(node.id, _Connection())
        connection.last_send_ms = now
        connection.in_flight = correlation_id
        connection.state = _State.AWAITING_RESPONSE

    def reset(self, node: Node) -> None:
        self._connections.pop(node.id, None)

    def reset_all(self) -> None:
        self._connections.clear()
