"""The broker's own counters (Kafka's ``BrokerTopicStats`` and ``RequestMetrics``): bytes
and records in and out per topic and for the broker, request counts and latency per API,
kept as lifetime totals and as a history of the last hour for the console's charts, and
written in Prometheus's text exposition format for ``/metrics``.

What is counted, and where:

* **Produce** (:meth:`BrokerMetrics.record_produce`, called by the Produce handler once
  its appends returned): per topic the request (``TotalProduceRequestsPerSec``), and for
  each partition appended to the batch's bytes (``BytesInPerSec``) and its records-count
  header field (``MessagesInPerSec``); a partition that failed (``FailedProduceRequestsPerSec``
  counts the topic) adds no bytes.
* **Fetch** (:meth:`BrokerMetrics.record_fetch`, called by the Fetch handler with its
  response): per topic the request and the bytes of the records returned, as
  ``BytesOutPerSec`` for consumers and ``ReplicationBytesOutPerSec`` for followers (Kafka
  counts replication traffic apart). Records out are not counted: the records of a Fetch
  response are a file region the transport sends without reading it, and Kafka has no
  ``MessagesOutPerSec`` either.
* **Replication in** (:meth:`BrokerMetrics.record_replication_in`): a follower's appends
  (``ReplicationBytesInPerSec``).
* **Requests** (:meth:`BrokerMetrics.record_request`, called by the transport once a
  response is written): per API the count (``RequestsPerSec``) and the time from the
  start of processing to the response handed to the socket (Kafka's ``TotalTimeMs``,
  without the time the frame waited in the connection's queue) in a histogram with
  fixed log-scale buckets: :data:`BUCKETS_PER_DECADE` per decade from
  :data:`MIN_BUCKET_MS`, so a percentile read from it is within
  ``10 ** (1 / BUCKETS_PER_DECADE)`` (12 %) of the true value.

History: the broker totals every second over the last hour (:data:`HISTORY_S`), per
topic and per API every :data:`SLOT_S` seconds, kept only for the slots in which a topic
or an API had traffic (memory follows activity, not the number of topics).

Prometheus names follow what the JMX exporter's example Kafka rules
(``kafka-2_0_0.yml``) make of Kafka's MBeans, lower-cased, so dashboards written for
them read these (see :meth:`BrokerMetrics.prometheus_text` for the full mapping).

Thread-safety: the ``record_*`` methods run on the broker's event loop thread only
(the handlers call them there, after their I/O-executor work returned), so they take
no lock: a record is one dict lookup and a few integer additions. The readers
(:meth:`prometheus_text`, :meth:`broker_series`, :meth:`topic_series`,
:meth:`latency_series`, :meth:`totals`) are meant for the same thread; called from
another they see values at most one update old, never an error.
"""

from __future__ import annotations

import bisect
import math
import struct
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypedDict

from kafkacore.protocol import APIS
from kafkacore.protocol.messages.fetch import FetchResponse
from kafkacore.protocol.messages.produce import ProduceRequest, ProduceResponse
from kafkacore.record.layout import RECORD_BATCH_OVERHEAD, RECORDS_COUNT_OFFSET

__all__ = [
    "BUCKETS_PER_DECADE",
    "BUCKET_BOUNDS_MS",
    "HISTORY_S",
    "MIN_BUCKET_MS",
    "SLOT_S",
    "BrokerMetrics",
    "MetricTotals",
    "quantile_ms",
]


class MetricTotals(TypedDict):
    """:meth:`BrokerMetrics.totals`: counter name -> value for the broker and per topic,
    and the request count per API name."""

    broker: dict[str, int]
    topics: dict[str, dict[str, int]]
    requests: dict[str, int]


HISTORY_S = 3600
"""How far back the history goes (seconds)."""
SLOT_S = 10
"""The resolution of the per-topic and per-API history (seconds)."""
BUCKETS_PER_DECADE = 20
MIN_BUCKET_MS = 0.01
_DECADES = 7  # 10 us .. 100 s
BUCKET_BOUNDS_MS: tuple[float, ...] = tuple(
    MIN_BUCKET_MS * 10 ** (k / BUCKETS_PER_DECADE) for k in range(_DECADES * BUCKETS_PER_DECADE + 1)
)
"""Upper bounds (inclusive) of the latency buckets; one more bucket holds the rest."""
_N_BUCKETS = len(BUCKET_BOUNDS_MS) + 1
# the buckets written to Prometheus (every 5th bound: 4 per decade, 1 - 1.78 - 3.16 - 5.62)
_EXPORTED = tuple(range(0, len(BUCKET_BOUNDS_MS), 5))
_SUMMARY_QUANTILES = (0.5, 0.75, 0.95, 0.98, 0.99, 0.999)
_SUMMARY_WINDOW_S = 300  # the summary's quantiles: over the last 5 minutes

_RECORDS_COUNT = struct.Struct(">i")

# per-topic counters, indexes into a topic's list
BYTES_IN, RECORDS_IN, BYTES_OUT, REPL_BYTES_IN, REPL_BYTES_OUT = 0, 1, 2, 3, 4
PRODUCE_REQUESTS, FETCH_REQUESTS, FAILED_PRODUCE = 5, 6, 7
_N_COUNTERS = 8
# the counters kept in the history (rates in the charts)
_CHARTED = (BYTES_IN, RECORDS_IN, BYTES_OUT, REPL_BYTES_IN, REPL_BYTES_OUT)
# the broker's per-second series: the charted counters (same indexes), then requests
_BROKER_SERIES = (
    "bytes_in",
    "records_in",
    "bytes_out",
    "replication_bytes_in",
    "replication_bytes_out",
    "requests",
)
_REQUESTS = 5
# a topic's list: its counters, then the charted ones at the last slot boundary
_TOPIC_SLOTS = _N_COUNTERS + len(_CHARTED)
_CHART_NAMES = (
    "bytes_in",
    "records_in",
    "bytes_out",
    "replication_bytes_in",
    "replication_bytes_out",
)


class _SecondRing:
    """A value per second over the last :data:`HISTORY_S` seconds."""

    __slots__ = ("stamps", "values")

    def __init__(self) -> None:
        self.values = [0] * HISTORY_S
        self.stamps = [-1] * HISTORY_S

    def add(self, second: int, n: int) -> None:
        i = second % HISTORY_S
        if self.stamps[i] == second:
            self.values[i] += n
        else:
            self.stamps[i] = second
            self.values[i] = n

    def series(self, last: int, count: int) -> list[int]:
        values, stamps = self.values, self.stamps
        out = []
        for second in range(last - count + 1, last + 1):
            i = second % HISTORY_S
            out.append(values[i] if stamps[i] == second else 0)
        return out


class _Api:
    """One API's request count, total time and latency histogram (lifetime), and the
    histogram at the last slot boundary (the slot's own is the difference)."""

    __slots__ = ("buckets", "count", "name", "previous", "previous_count", "total_ms")

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.total_ms = 0.0
        self.buckets = [0] * _N_BUCKETS
        self.previous = [0] * _N_BUCKETS
        self.previous_count = 0


@dataclass(frozen=True, slots=True)
class _Slot:
    """What changed in one :data:`SLOT_S` slot: per topic the change of its charted
    counters, per API the slot's own histogram (sparse)."""

    index: int  # time // SLOT_S
    topics: dict[str, tuple[int, ...]]
    apis: dict[str, dict[int, int]]


def quantile_ms(buckets: dict[int, int] | list[int], q: float) -> float | None:
    """The ``q`` quantile of a latency histogram (bucket index -> count): the upper bound
    of the bucket holding it (``None`` without samples; the overflow bucket reads as
    its lower bound)."""
    items = sorted(buckets.items()) if isinstance(buckets, dict) else list(enumerate(buckets))
    total = sum(n for _, n in items)
    if total == 0:
        return None
    rank = q * total
    seen = 0
    for index, n in items:
        seen += n
        if n and seen >= rank:
            return BUCKET_BOUNDS_MS[min(index, len(BUCKET_BOUNDS_MS) - 1)]
    return BUCKET_BOUNDS_MS[-1]


class BrokerMetrics:
    """The counters of one broker. ``clock``: wall-clock seconds (the history is stamped
    with it, the charts' time axis)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.started = clock()
        # wall clock = monotonic (the transport's loop.time()) + this
        self._wall_offset = self.started - time.monotonic()
        self._topics: dict[str, list[int]] = {}
        self._active_topics: set[str] = set()
        self._apis: dict[int, _Api] = {}
        self._slot = int(self.started) // SLOT_S
        self._history: deque[_Slot] = deque(maxlen=HISTORY_S // SLOT_S)
        self._broker = [_SecondRing() for _ in _BROKER_SERIES]
        self._broker_totals = [0] * _N_COUNTERS
        # the current second and the broker's counts in it (into the rings when it ends)
        self._second = int(self.started)
        self._now = [0] * len(_BROKER_SERIES)

    # -- the hooks (event loop thread) -------------------------------------------------------

    def record_produce(self, request: ProduceRequest, response: ProduceResponse) -> None:
        """A Produce request's appends: ``response`` answers ``request`` topic by topic,
        partition by partition, in order."""
        second = int(self._clock())
        if second != self._second:
            self._next_second(second)
        topics = self._topics
        total_bytes = total_records = 0
        for topic_data, answer in zip(request.topic_data, response.responses, strict=False):
            name = topic_data.name
            c = topics.get(name)
            if c is None:
                c = topics[name] = [0] * _TOPIC_SLOTS
            c[PRODUCE_REQUESTS] += 1
            failed = False
            for pdata, presult in zip(
                topic_data.partition_data, answer.partition_responses, strict=False
            ):
                if presult.error_code:
                    failed = True
                    continue
                records = pdata.records
                if not isinstance(records, (bytes, memoryview)):  # decoded: a memoryview
                    continue
                size = len(records)
                # the batch header's records count
                count = (
                    _RECORDS_COUNT.unpack_from(records, RECORDS_COUNT_OFFSET)[0]
                    if size >= RECORD_BATCH_OVERHEAD
                    else 0
                )
                c[BYTES_IN] += size
                c[RECORDS_IN] += count
                total_bytes += size
                total_records += count
            if failed:
                c[FAILED_PRODUCE] += 1
            self._active_topics.add(name)
        b = self._broker_totals
        b[BYTES_IN] += total_bytes
        b[RECORDS_IN] += total_records
        b[PRODUCE_REQUESTS] += 1
        now = self._now
        now[BYTES_IN] += total_bytes
        now[RECORDS_IN] += total_records

    def record_fetch(
        self, topics: Iterable[FetchResponse.FetchableTopicResponse], from_follower: bool
    ) -> None:
        """A Fetch response's topics (``FetchableTopicResponse``): the records' bytes, as
        replication traffic when the fetch came from a follower."""
        second = int(self._clock())
        if second != self._second:
            self._next_second(second)
        counter = REPL_BYTES_OUT if from_follower else BYTES_OUT
        counters = self._topics
        total = 0
        for topic in topics:
            name = topic.topic
            if not name:  # a v13+ topic id the broker does not know
                continue
            size = 0
            for p in topic.partitions:
                records = p.records
                if records is not None:
                    size += len(records)
            c = counters.get(name)
            if c is None:
                c = counters[name] = [0] * _TOPIC_SLOTS
            c[counter] += size
            c[FETCH_REQUESTS] += 1
            total += size
            self._active_topics.add(name)
        b = self._broker_totals
        b[counter] += total
        b[FETCH_REQUESTS] += 1
        self._now[counter] += total

    def record_replication_in(self, topic: str, size: int) -> None:
        """A follower appended ``size`` bytes of ``topic`` fetched from its leader."""
        second = int(self._clock())
        if second != self._second:
            self._next_second(second)
        c = self._topics.get(topic)
        if c is None:
            c = self._topics[topic] = [0] * _TOPIC_SLOTS
        c[REPL_BYTES_IN] += size
        self._active_topics.add(topic)
        self._broker_totals[REPL_BYTES_IN] += size
        self._now[REPL_BYTES_IN] += size

    def record_request(self, frame: bytes, started: float, finished: float) -> None:
        """A request answered: ``frame`` its bytes (the API key is its first two),
        ``started``/``finished`` monotonic seconds (``time.monotonic``, the event loop's
        clock)."""
        if len(frame) < 2:
            return
        api = self._apis.get((frame[0] << 8) | frame[1])
        if api is None:
            api = self._new_api((frame[0] << 8) | frame[1])
            if api is None:
                return
        ms = (finished - started) * 1000.0
        api.count += 1
        api.total_ms += ms
        api.buckets[bisect.bisect_left(BUCKET_BOUNDS_MS, ms)] += 1
        second = int(finished + self._wall_offset)
        if second != self._second:
            self._next_second(second)
        self._now[_REQUESTS] += 1

    def _new_api(self, key: int) -> _Api | None:
        known = APIS.get(key)
        if known is None:
            return None
        api = self._apis[key] = _Api(known.name)
        return api

    def _next_second(self, second: int) -> None:
        """The second changed: the last one's broker counts into the rings, and the
        history's slot closed if it ended. A second earlier than the current one (a
        request that started before a produce recorded a later second) counts in the
        current one."""
        if second < self._second:
            return
        for ring, n in zip(self._broker, self._now, strict=True):
            if n:
                ring.add(self._second, n)
        self._now = [0] * len(_BROKER_SERIES)
        self._second = second
        if second // SLOT_S != self._slot:
            self._roll(second // SLOT_S)

    # -- history ---------------------------------------------------------------------------

    def _roll(self, slot: int) -> None:
        """Close the current slot (its topics' counters and its APIs' histograms into the
        history) and start ``slot``."""
        topics: dict[str, tuple[int, ...]] = {}
        for name in self._active_topics:
            c = self._topics[name]
            topics[name] = tuple(c[i] - c[_N_COUNTERS + k] for k, i in enumerate(_CHARTED))
            for k, i in enumerate(_CHARTED):
                c[_N_COUNTERS + k] = c[i]
        apis: dict[str, dict[int, int]] = {}
        for api in self._apis.values():
            if api.count == api.previous_count:
                continue
            api.previous_count = api.count
            now, before = api.buckets, api.previous
            apis[api.name] = {
                i: now[i] - before[i] for i in range(_N_BUCKETS) if now[i] != before[i]
            }
            api.previous = list(now)
        if topics or apis:
            self._history.append(_Slot(self._slot, topics, apis))
        self._active_topics = set()
        self._slot = slot

    def _catch_up(self) -> int:
        """Move to the current second (readers call it: with no traffic nothing else
        does); the current second."""
        second = int(self._clock())
        if second != self._second:
            self._next_second(second)
        return max(second, self._second)

    def broker_series(self, seconds: int = HISTORY_S) -> dict[str, list[float]]:
        """The broker's rates per second over the last ``seconds`` (complete seconds
        only): ``time`` (epoch seconds), ``bytes_in``, ``records_in``, ``bytes_out``,
        ``replication_bytes_in``, ``replication_bytes_out``, ``requests``."""
        seconds = max(1, min(seconds, HISTORY_S - 1))
        last = self._catch_up() - 1
        out: dict[str, list[float]] = {
            "time": [float(t) for t in range(last - seconds + 1, last + 1)]
        }
        for name, ring in zip(_BROKER_SERIES, self._broker, strict=True):
            out[name] = [float(v) for v in ring.series(last, seconds)]
        return out

    def topic_names(self) -> list[str]:
        return sorted(self._topics)

    def topic_series(self, topic: str) -> dict[str, list[float]]:
        """A topic's rates per second, one point per :data:`SLOT_S` slot over the last
        hour (the slot's average): ``time`` (the slot's start, epoch seconds) and the
        charted counters (``bytes_in``, ``records_in``, ``bytes_out``,
        ``replication_bytes_in``, ``replication_bytes_out``)."""
        current = self._catch_up() // SLOT_S
        first = current - HISTORY_S // SLOT_S + 1
        deltas = {s.index: s.topics[topic] for s in self._history if topic in s.topics}
        out: dict[str, list[float]] = {"time": [], **{name: [] for name in _CHART_NAMES}}
        zero = (0,) * len(_CHARTED)
        for index in range(first, current):
            values = deltas.get(index, zero)
            out["time"].append(float(index * SLOT_S))
            for k, name in enumerate(_CHART_NAMES):
                out[name].append(values[k] / SLOT_S)
        return out

    def latency_series(
        self, quantiles: tuple[float, ...] = (0.5, 0.99, 0.999), api: str | None = None
    ) -> dict[str, list[float | None]]:
        """Request latency percentiles (ms) per :data:`SLOT_S` slot over the last hour, of
        one API or of all: ``time`` and ``p50``, ``p99``, ``p99.9`` (names from the
        quantiles; ``None`` for a slot without requests)."""
        current = self._catch_up() // SLOT_S
        first = current - HISTORY_S // SLOT_S + 1
        by_slot = {s.index: s for s in self._history if s.index >= first}
        names = [_quantile_name(q) for q in quantiles]
        out: dict[str, list[float | None]] = {"time": [], **{n: [] for n in names}}
        for index in range(first, current):
            merged: dict[int, int] = {}
            slot = by_slot.get(index)
            if slot is not None:
                for name, hist in slot.apis.items():
                    if api is None or name == api:
                        for b, count in hist.items():
                            merged[b] = merged.get(b, 0) + count
            out["time"].append(float(index * SLOT_S))
            for q, column in zip(quantiles, names, strict=True):
                out[column].append(quantile_ms(merged, q))
        return out

    def api_names(self) -> list[str]:
        return sorted(api.name for api in self._apis.values())

    def totals(self) -> MetricTotals:
        """Lifetime totals: ``broker`` (counter name -> value) and ``topics`` (topic ->
        counter name -> value), for tests and the console's tables."""
        names = (
            "bytes_in",
            "records_in",
            "bytes_out",
            "replication_bytes_in",
            "replication_bytes_out",
            "produce_requests",
            "fetch_requests",
            "failed_produce_requests",
        )
        return {
            "broker": dict(zip(names, self._broker_totals, strict=True)),
            "topics": {
                t: dict(zip(names, c, strict=False)) for t, c in sorted(self._topics.items())
            },
            "requests": {a.name: a.count for a in self._apis.values()},
        }

    # -- Prometheus ------------------------------------------------------------------------

    def prometheus_text(self) -> str:
        """The counters in Prometheus's text exposition format (version 0.0.4).

        Each counter is named as the JMX exporter names Kafka's MBean
        ``kafka.server:type=BrokerTopicMetrics,name=<X>PerSec[,topic=T]`` (its ``Count``):
        ``kafka_server_brokertopicmetrics_<x>_total`` with ``<x>`` one of ``bytesin``,
        ``messagesin``, ``bytesout``, ``replicationbytesin``, ``replicationbytesout``,
        ``totalproducerequests``, ``totalfetchrequests``, ``failedproducerequests``.

        Requests, per API (``request="Produce"``, Kafka's ``request=`` tag):
        ``kafka_network_requestmetrics_requests_total`` (``name=RequestsPerSec``) and
        ``kafka_network_requestmetrics_totaltimems`` (``name=TotalTimeMs``), a summary
        whose quantiles 0.5 … 0.999 (the MBean's ``50thPercentile`` …
        ``999thPercentile``) are over the last 5 minutes and ``_sum``/``_count`` over the
        broker's life. The histogram itself, which Prometheus can aggregate across
        brokers, is ``kafkacore_request_latency_seconds`` (4 buckets per decade).

        The broker-wide series have no ``topic`` label (Kafka's MBean without ``topic=``);
        topics carry ``topic="T"``.
        """
        now_slot = self._catch_up() // SLOT_S
        lines: list[str] = []
        counters = (
            ("bytesin", BYTES_IN, "Bytes of records appended by producers"),
            ("messagesin", RECORDS_IN, "Records appended by producers"),
            ("bytesout", BYTES_OUT, "Bytes of records sent to consumers"),
            ("replicationbytesin", REPL_BYTES_IN, "Bytes of records appended by this follower"),
            ("replicationbytesout", REPL_BYTES_OUT, "Bytes of records sent to followers"),
            (
                "totalproducerequests",
                PRODUCE_REQUESTS,
                "Produce requests (per topic: requests naming it)",
            ),
            (
                "totalfetchrequests",
                FETCH_REQUESTS,
                "Fetch requests (per topic: requests naming it)",
            ),
            ("failedproducerequests", FAILED_PRODUCE, "Produce requests with a failed partition"),
        )
        for short, index, help_text in counters:
            name = f"kafka_server_brokertopicmetrics_{short}_total"
            lines.append(f"# HELP {name} {help_text}.")
            lines.append(f"# TYPE {name} counter")
            lines.append(f"{name} {self._broker_totals[index]}")
            for topic, c in sorted(self._topics.items()):
                lines.append(f'{name}{{topic="{_escape(topic)}"}} {c[index]}')
        apis = sorted(self._apis.values(), key=lambda a: a.name)
        name = "kafka_network_requestmetrics_requests_total"
        lines.append(f"# HELP {name} Requests answered, per API.")
        lines.append(f"# TYPE {name} counter")
        for api in apis:
            lines.append(f'{name}{{request="{api.name}"}} {api.count}')
        name = "kafka_network_requestmetrics_totaltimems"
        lines.append(
            f"# HELP {name} Request processing time in ms, per API "
            "(quantiles over the last 5 minutes)."
        )
        lines.append(f"# TYPE {name} summary")
        recent = self._recent_histograms(now_slot)
        for api in apis:
            hist = dict(recent.get(api.name, {}))
            current = {
                i: api.buckets[i] - api.previous[i]
                for i in range(_N_BUCKETS)
                if api.buckets[i] != api.previous[i]
            }
            for b, n in current.items():
                hist[b] = hist.get(b, 0) + n
            for q in _SUMMARY_QUANTILES:
                value = quantile_ms(hist, q)
                text = "NaN" if value is None else _number(value)
                lines.append(f'{name}{{request="{api.name}",quantile="{q}"}} {text}')
            lines.append(f'{name}_sum{{request="{api.name}"}} {_number(api.total_ms)}')
            lines.append(f'{name}_count{{request="{api.name}"}} {api.count}')
        name = "kafkacore_request_latency_seconds"
        lines.append(f"# HELP {name} Request processing time, per API.")
        lines.append(f"# TYPE {name} histogram")
        for api in apis:
            cumulative = 0
            exported = iter(_EXPORTED)
            target = next(exported)
            for i, n in enumerate(api.buckets[:-1]):
                cumulative += n
                if i == target:
                    le = _number(BUCKET_BOUNDS_MS[i] / 1000)
                    lines.append(f'{name}_bucket{{request="{api.name}",le="{le}"}} {cumulative}')
                    target = next(exported, -1)
            lines.append(f'{name}_bucket{{request="{api.name}",le="+Inf"}} {api.count}')
            lines.append(f'{name}_sum{{request="{api.name}"}} {_number(api.total_ms / 1000)}')
            lines.append(f'{name}_count{{request="{api.name}"}} {api.count}')
        return "\n".join(lines) + "\n"

    def _recent_histograms(self, now_slot: int) -> dict[str, dict[int, int]]:
        first = now_slot - _SUMMARY_WINDOW_S // SLOT_S
        merged: dict[str, dict[int, int]] = {}
        for slot in self._history:
            if slot.index < first:
                continue
            for name, hist in slot.apis.items():
                target = merged.setdefault(name, {})
                for b, n in hist.items():
                    target[b] = target.get(b, 0) + n
        return merged


def _quantile_name(q: float) -> str:
    text = f"{q * 100:.10g}"
    return f"p{text}"


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return f"{value:.6g}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
