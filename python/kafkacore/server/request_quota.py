"""The request time quota, ``request_percentage`` (Kafka's ``ClientRequestQuotaManager``,
KIP-124): the time the broker's threads spend on a client's requests, as a percentage of
one thread, measured over the quota window like the byte rates.

**What is measured.** Kafka records a request's handler thread time
(``requestThreadTimeNanos``) when the handler is done, and its network thread time
(reading the request, writing the response: ``KafkaChannel.networkThreadTimeNanos``) once
the response is sent, without throttling (``recordNoThrottle`` through the request's
``recordNetworkThreadTimeCallback``); both at ``100 / 1e9`` per nanosecond into a ``Rate``,
so the rate is the percentage of one thread. kafkacore does both jobs on the event loop,
plus blocking work on the I/O threads (``BrokerServices.run_io``):

* the loop's share is its thread's CPU time (:class:`LoopTime`), handed out span by span:
  the span that ends when a connection's frame is read whole (the transport's reading
  and the loop's dispatching that led to it) and the one that ends when a response is
  written (encoding, writing) to the connection (:class:`ConnectionTime`: Kafka's network
  thread time), charged with its next request; the spans ending as the handler's
  coroutine finishes a step (decoding, handling) to the request. Every CPU nanosecond of
  the loop so lands on one request, counted once; the loop's own overhead (``epoll``,
  scheduling) lands on the connection it was dispatching for. Time a request waits (a
  Fetch long-poll, a Produce waiting for its replicas) costs nothing, as in Kafka's
  purgatory: the thread's clock does not run while the loop sleeps.
* the I/O share is the time its ``run_io`` calls take on their thread (wall time, as
  Kafka's handler threads: a pool thread blocked in ``fsync`` serves no one else).

A span that started more than :data:`IDLE_NS` after the previous one was settled is not
charged: what the loop did meanwhile (timers, background tasks) served no request.

**Enforcement** (Kafka's ``KafkaApis``/``RequestHandlerHelper``): the throttle time is
``(rate - quota) / quota * window`` bounded by one window (``boundedThrottleTime``, 1 s);
it goes in the response's ``throttle_time_ms`` and the channel is muted for it. Produce
takes the larger of its byte-rate and request throttles; an ``acks=0`` Produce is not
recorded. A Fetch throttled by either quota sends no records and its bytes are taken back
from the byte rate (``getThrottledResponse``). Exempt, as Kafka sends them with
``sendResponseExemptThrottle``: the inter-broker APIs and followers' Fetches (their loop
time is settled and charged to no one).

Cost when no ``request_percentage`` quota is configured anywhere: a few attribute reads per
request. With one: three reads of the thread's CPU clock (one more per ``await`` of its
handler; a system call where the vDSO has no CPU clocks, about 1 µs) and one recording per
request, measured by ``benches/broker/request_quota_overhead.py``.
"""

from __future__ import annotations

import contextvars
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Generic, TypeVar

from kafkacore.protocol import ApiKey, KafkaStruct
from kafkacore.protocol.messages.fetch import FetchRequest, FetchResponse
from kafkacore.protocol.messages.produce import ProduceRequest
from kafkacore.protocol.requests import (
    fetch_replica_id,
    maybe_set_throttle_time_ms,
    throttle_time_ms,
)
from kafkacore.server.client_quotas import FETCH, ClientQuotaManager
from kafkacore.server.request_context import Handler, RequestContext

if TYPE_CHECKING:
    from kafkacore.server.services import BrokerServices

__all__ = [
    "CLIENT_THROTTLES_FROM",
    "EXEMPT_APIS",
    "IDLE_NS",
    "NANOS_TO_PERCENTAGE",
    "ConnectionTime",
    "LoopTime",
    "client_throttles",
    "handle_with_request_quota",
    "io_timed",
    "loop_time",
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


#: a span of the loop's time that began this long after the previous one was settled is
#: not charged: nothing was settled meanwhile, so the loop served no request
IDLE_NS = 1_000_000_000


class LoopTime:
    """The CPU time of one thread (the event loop's), settled span by span: each
    :meth:`take` returns the thread's CPU time since the previous one, whoever took it.
    Not thread-safe: one per thread (:func:`loop_time`)."""

    __slots__ = ("_cpu_ns", "_wall_ns")

    def __init__(self) -> None:
        self._cpu_ns = time.thread_time_ns()
        self._wall_ns = time.perf_counter_ns()

    def take(self) -> int:
        """The thread's CPU nanoseconds since the last take (0 when that was more than
        :data:`IDLE_NS` ago: the loop served no request meanwhile)."""
        cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
        spent = cpu - self._cpu_ns if wall - self._wall_ns <= IDLE_NS else 0
        self._cpu_ns, self._wall_ns = cpu, wall
        return spent


_THREAD = threading.local()


def loop_time() -> LoopTime:
    """This thread's :class:`LoopTime` (a process may run brokers on several loops)."""
    clock: LoopTime | None = getattr(_THREAD, "loop_time", None)
    if clock is None:
        clock = _THREAD.loop_time = LoopTime()
    return clock


class ConnectionTime:
    """One connection's loop time not charged yet (Kafka's
    ``KafkaChannel.networkThreadTimeNanos``): the transport calls it when a frame is read
    whole (``ConnectionInfo.on_frame_read``) and when a response is written
    (``Outcome.on_written``), each call settling the loop's time since the previous
    settlement; the next request on the connection takes the sum. Event loop thread
    only."""

    __slots__ = ("_clock", "_ns")

    def __init__(self, clock: LoopTime) -> None:
        self._clock = clock
        self._ns = 0

    def __call__(self) -> None:
        self._ns += self._clock.take()

    def get_and_reset(self) -> int:
        ns, self._ns = self._ns, 0
        return ns


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


class _Timed(Generic[_T]):
    """Awaits ``awaitable``, adding to ``timer`` the loop's time settled as each of its
    steps ends (the step, and the dispatching that led to it)."""

    def __init__(self, awaitable: Awaitable[_T], timer: _Timer, clock: LoopTime) -> None:
        self._awaitable = awaitable
        self._timer = timer
        self._clock = clock

    def __await__(self) -> Generator[object, object, _T]:
        inner = self._awaitable.__await__()
        timer, clock = self._timer, self._clock
        send: object = None
        error: BaseException | None = None
        while True:
            try:
                yielded = inner.throw(error) if error is not None else inner.send(send)
            except StopIteration as stop:
                timer.ns += clock.take()
                result: _T = stop.value  # the awaitable's result
                return result
            except BaseException:
                timer.ns += clock.take()
                raise
            timer.ns += clock.take()
            try:
                send, error = (yield yielded), None
            except BaseException as exc:
                send, error = None, exc


def _exempt(context: RequestContext, request: KafkaStruct) -> bool:
    if context.header.api_key in EXEMPT_APIS:
        return True
    if isinstance(request, FetchRequest):
        return fetch_replica_id(request, context.header.api_version) >= 0
    return isinstance(request, ProduceRequest) and request.acks == 0


async def handle_with_request_quota(
    services: BrokerServices,
    context: RequestContext,
    handler: Handler,
    request: KafkaStruct,
    connection_time: ConnectionTime | None,
) -> tuple[KafkaStruct, Callable[[], object] | None]:
    """``handler(services, context, request)`` (awaited if need be) and what the transport
    calls once the response is written (``None``: nothing to record). When some client has
    a ``request_percentage`` quota, the request is charged its connection's time not
    charged yet (``connection_time``: reading this frame, writing the previous response),
    the loop's time up to the handler's end (decoding, handling) and its I/O threads'
    time, and throttled; the loop's time from there until the response is written
    (encoding, writing) goes to ``connection_time``, charged with the connection's next
    request (Kafka records it at once, without a throttle: the rate is the same, with one
    recording per request instead of two)."""
    quotas = services.client_quotas
    if not quotas.has_request_quotas:
        response = handler(services, context, request)
        if inspect.isawaitable(response):
            response = await response
        return response, None
    clock = loop_time()
    timer = _Timer()
    token = _TIMER.set(timer)
    try:
        response = handler(services, context, request)
        if inspect.isawaitable(response):
            response = await _Timed(response, timer, clock)
        else:
            timer.ns += clock.take()
    finally:
        _TIMER.reset(token)
    if connection_time is None:  # the quota came in after the channel looked
        connection_time = ConnectionTime(clock)
    earlier_ns = connection_time.get_and_reset()
    if _exempt(context, request):
        return response, clock.take  # settled, charged to no one
    user, client_id = context.principal.name, context.header.client_id or ""
    spent = (earlier_ns + timer.ns) * NANOS_TO_PERCENTAGE
    throttle_ms = quotas.record_request_time(user, client_id, spent)
    if throttle_ms > 0:
        _throttle(quotas, context, response, throttle_ms, user, client_id)
    return response, connection_time


def _throttle(
    quotas: ClientQuotaManager,
    context: RequestContext,
    response: KafkaStruct,
    throttle_ms: int,
    user: str,
    client: str,
) -> None:
    current = throttle_time_ms(response)
    if isinstance(response, FetchResponse) and current == 0:
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
    maybe_set_throttle_time_ms(response, max(current, throttle_ms))
