"""The request time quota, ``request_percentage`` (Kafka's ``ClientRequestQuotaManager``,
KIP-124): the time the broker's threads spend handling a client's requests, as a
percentage of one thread, measured over the quota window like the byte rates.

**What is measured.** Kafka records ``requestThreadTimeNanos`` (the request handler
thread's time on the request) converted with ``100 / 1e9`` per nanosecond, into a
``Rate``: the rate is then the percentage of one thread. kafkacore handles a request on
the event loop and, for blocking work, on the I/O threads (``BrokerServices.run_io``):
both are counted, the loop's share as the time the handler's coroutine runs between its
awaits (not the time it waits: a Fetch long-poll or a Produce waiting for its replicas
costs nothing, as in Kafka's purgatory), the I/O share as the time its ``run_io`` calls
take on their thread.

**Enforcement** (Kafka's ``KafkaApis``/``RequestHandlerHelper``): the throttle time is
``(rate - quota) / quota * window`` bounded by one window (``boundedThrottleTime``, 1 s);
it goes in the response's ``throttle_time_ms`` and the channel is muted for it. Produce
takes the larger of its byte-rate and request throttles; an ``acks=0`` Produce is not
recorded. A Fetch throttled by either quota sends no records and its bytes are taken back
from the byte rate (``getThrottledResponse``). Exempt, as Kafka sends them with
``sendResponseExemptThrottle``: the inter-broker APIs and followers' Fetches.

Cost when no ``request_percentage`` quota is configured anywhere: one attribute read.
"""

from __future__ import annotations

import contextvars
import inspect
import time
from collections.abc import Callable, Generator
from typing import Any, TypeVar

from kafkacore.protocol import ApiKey
from kafkacore.server.client_quotas import FETCH
from kafkacore.server.request_context import RequestContext

__all__ = [
    "CLIENT_THROTTLES_FROM",
    "EXEMPT_APIS",
    "NANOS_TO_PERCENTAGE",
    "client_throttles",
    "handle_with_request_quota",
    "io_timed",
]

_T = TypeVar("_T")

NANOS_TO_PERCENTAGE = 100.0 / 1e9  # ClientRequestQuotaManager.NanosToPercentagePerSecond

# sendResponseExemptThrottle in Kafka: the inter-broker requests
EXEMPT_APIS = frozenset(
    {
        ApiKey.LEADER_AND_ISR,
        ApiKey.STOP_REPLICA,
        ApiKey.UPDATE_METADATA,
        ApiKey.CONTROLLED_SHUTDOWN,
        ApiKey.ALTER_PARTITION,
        ApiKey.ALLOCATE_PRODUCER_IDS,
    }
)


# KIP-219: from these versions on the client waits out a throttle itself, so the broker
# answers at once and mutes the channel; to an older client (and for the APIs without a
# version here) it sends the answer only after the throttle time. Kafka's
# ``AbstractResponse.shouldClientThrottle`` overrides (0: every version).
CLIENT_THROTTLES_FROM: dict[int, int] = {
    ApiKey.PRODUCE: 6,
    ApiKey.FETCH: 8,
    ApiKey.LIST_OFFSETS: 3,
    ApiKey.METADATA: 6,
    ApiKey.OFFSET_COMMIT: 4,
    ApiKey.OFFSET_FETCH: 4,
    ApiKey.FIND_COORDINATOR: 2,
    ApiKey.JOIN_GROUP: 3,
    ApiKey.HEARTBEAT: 2,
    ApiKey.LEAVE_GROUP: 2,
    ApiKey.SYNC_GROUP: 2,
    ApiKey.DESCRIBE_GROUPS: 2,
    ApiKey.LIST_GROUPS: 2,
    ApiKey.API_VERSIONS: 2,
    ApiKey.CREATE_TOPICS: 3,
    ApiKey.DELETE_TOPICS: 2,
    ApiKey.DELETE_RECORDS: 1,
    ApiKey.INIT_PRODUCER_ID: 1,
    ApiKey.DESCRIBE_ACLS: 1,
    ApiKey.CREATE_ACLS: 1,
    ApiKey.DELETE_ACLS: 1,
    ApiKey.DESCRIBE_CONFIGS: 2,
    ApiKey.ALTER_CONFIGS: 1,
    ApiKey.DESCRIBE_LOG_DIRS: 1,
    ApiKey.CREATE_PARTITIONS: 1,
    ApiKey.DELETE_GROUPS: 1,
    ApiKey.ELECT_LEADERS: 0,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: 0,
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: 0,
    ApiKey.LIST_PARTITION_REASSIGNMENTS: 0,
    ApiKey.OFFSET_DELETE: 0,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: 0,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: 0,
}


def client_throttles(api_key: int, version: int) -> bool:
    """Whether a throttled response of ``api_key`` at ``version`` goes at once (KIP-219:
    the client waits) or only after the throttle time."""
    since = CLIENT_THROTTLES_FROM.get(api_key)
    return since is not None and version >= since


class _Timer:
    __slots__ = ("ns",)

    def __init__(self) -> None:
        self.ns = 0


_TIMER: contextvars.ContextVar[_Timer | None] = contextvars.ContextVar(
    "kafkacore_request_timer", default=None
)


def io_timed(fn: Callable[[], _T]) -> Callable[[], _T]:
    """``fn`` counting its run time against the request being handled (if it is measured);
    called on the event loop by ``run_io`` before handing ``fn`` to an I/O thread."""
    timer = _TIMER.get()
    if timer is None:
        return fn

    def timed() -> _T:
        start = time.perf_counter_ns()
        try:
            return fn()
        finally:
            timer.ns += time.perf_counter_ns() - start

    return timed


class _Timed:
    """Awaits ``awaitable`` adding the time each of its steps runs to ``timer``."""

    def __init__(self, awaitable: Any, timer: _Timer) -> None:
        self._awaitable = awaitable
        self._timer = timer

    def __await__(self) -> Generator[Any, Any, Any]:
        inner = self._awaitable.__await__()
        timer = self._timer
        send: Any = None
        error: BaseException | None = None
        while True:
            start = time.perf_counter_ns()
            try:
                yielded = inner.throw(error) if error is not None else inner.send(send)
            except StopIteration as stop:
                timer.ns += time.perf_counter_ns() - start
                return stop.value
            except BaseException:
                timer.ns += time.perf_counter_ns() - start
                raise
            timer.ns += time.perf_counter_ns() - start
            try:
                send, error = (yield yielded), None
            except BaseException as exc:
                send, error = None, exc


def _exempt(context: RequestContext, request: Any) -> bool:
    key = context.header.api_key
    if key in EXEMPT_APIS:
        return True
    if key == ApiKey.FETCH:
        return _replica_id(request) >= 0
    return key == ApiKey.PRODUCE and getattr(request, "acks", -1) == 0


def _replica_id(request: Any) -> int:
    state = getattr(request, "replica_state", None)
    replica = getattr(state, "replica_id", -1) if state is not None else -1
    return max(replica, getattr(request, "replica_id", -1))


async def handle_with_request_quota(
    services: Any, context: RequestContext, handler: Callable[..., Any], request: Any
) -> Any:
    """``handler(services, context, request)`` (awaited if need be); when the client has a
    ``request_percentage`` quota, its time is recorded and a throttle applied."""
    quotas = services.client_quotas
    if not quotas.has_request_quotas or _exempt(context, request):
        response = handler(services, context, request)
        if inspect.isawaitable(response):
            response = await response
        return response
    timer = _Timer()
    token = _TIMER.set(timer)
    try:
        start = time.perf_counter_ns()
        response = handler(services, context, request)
        timer.ns += time.perf_counter_ns() - start
        if inspect.isawaitable(response):
            response = await _Timed(response, timer)
    finally:
        _TIMER.reset(token)
    user, client_id = context.principal.name, context.header.client_id or ""
    throttle_ms = quotas.record_request_time(user, client_id, timer.ns * NANOS_TO_PERCENTAGE)
    if throttle_ms > 0:
        _throttle(quotas, context, response, throttle_ms, user, client_id)
    return response


def _throttle(
    quotas: Any, context: RequestContext, response: Any, throttle_ms: int, user: str, client: str
) -> None:
    if not hasattr(response, "throttle_time_ms"):
        return
    current = int(response.throttle_time_ms or 0)
    if context.header.api_key == ApiKey.FETCH and current == 0:
        # a Fetch over its request quota sends no records, and they are not counted
        size = sum(
            len(p.records)
            for t in response.responses
            for p in t.partitions
            if p.records is not None
        )
        if size:
            quotas.unrecord(FETCH, user, client, size)
        response.responses = []
    response.throttle_time_ms = max(current, throttle_ms)
