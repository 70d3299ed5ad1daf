"""The log agent: application log events as JSON on the ``logs`` topic, keyed by service.

Two sources of events:

- ``--generate``: a synthetic fleet of services (:data:`SERVICES`) serving HTTP requests,
  with per-endpoint latencies drawn from a log-normal distribution plus a long tail, error
  ratios of a few percent, short incidents that raise a service's errors and latencies,
  and a small fraction of events that arrive late (their event time lies a few seconds
  before the events produced around them, as with agents that buffer). Seeded, so a run
  can be reproduced; ``--speed`` makes event time run faster than the wall clock.
- ``--tail FILE...``: follows files like ``tail -F`` (rotation and truncation included)
  and turns each line into an event: JSON lines are taken as they are, ``key=value``
  (logfmt) lines are parsed, anything else becomes a message with its level guessed.

Every event is one JSON object; the fields the Spark job reads are ``timestamp`` (ISO 8601,
UTC, milliseconds), ``service``, ``level``, ``status`` and ``latency_ms``::

    python -m examples.log_pipeline.agent --bootstrap localhost:9092 --generate --rate 500
    python -m examples.log_pipeline.agent --bootstrap localhost:9092 --tail /var/log/app.log
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = [
    "SERVICES",
    "Deliveries",
    "FileTailer",
    "LogGenerator",
    "Service",
    "format_timestamp",
    "generate",
    "main",
    "make_producer",
    "parse_line",
    "produce",
]

DEFAULT_TOPIC = "logs"
LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    median_ms: float  # typical latency of a successful request
    weight: float  # share of the service's traffic


@dataclass(frozen=True)
class Service:
    name: str
    hosts: int
    error_rate: float  # share of requests answered 5xx outside incidents
    client_error_rate: float  # share answered 4xx
    endpoints: tuple[Endpoint, ...]
    weight: float  # share of the fleet's traffic


SERVICES: tuple[Service, ...] = (
    Service(
        "frontend",
        hosts=4,
        error_rate=0.005,
        client_error_rate=0.03,
        weight=0.35,
        endpoints=(
            Endpoint("GET", "/", 18.0, 0.3),
            Endpoint("GET", "/products", 35.0, 0.35),
            Endpoint("GET", "/products/{id}", 28.0, 0.25),
            Endpoint("GET", "/static/app.js", 4.0, 0.1),
        ),
    ),
    Service(
        "search",
        hosts=3,
        error_rate=0.01,
        client_error_rate=0.01,
        weight=0.25,
        endpoints=(
            Endpoint("GET", "/api/search", 65.0, 0.8),
            Endpoint("GET", "/api/suggest", 12.0, 0.2),
        ),
    ),
    Service(
        "checkout",
        hosts=2,
        error_rate=0.02,
        client_error_rate=0.04,
        weight=0.15,
        endpoints=(
            Endpoint("GET", "/api/cart", 25.0, 0.5),
            Endpoint("POST", "/api/cart/items", 40.0, 0.3),
            Endpoint("POST", "/api/checkout", 140.0, 0.2),
        ),
    ),
    Service(
        "payments",
        hosts=2,
        error_rate=0.03,
        client_error_rate=0.02,
        weight=0.1,
        endpoints=(
            Endpoint("POST", "/v1/charges", 220.0, 0.7),
            Endpoint("POST", "/v1/refunds", 180.0, 0.1),
            Endpoint("GET", "/v1/charges/{id}", 30.0, 0.2),
        ),
    ),
    Service(
        "auth",
        hosts=2,
        error_rate=0.002,
        client_error_rate=0.06,
        weight=0.15,
        endpoints=(
            Endpoint("POST", "/oauth/token", 45.0, 0.4),
            Endpoint("GET", "/userinfo", 9.0, 0.6),
        ),
    ),
)

_SERVER_ERRORS = (
    (500, "internal server error"),
    (502, "bad gateway from upstream"),
    (503, "service unavailable: connection pool exhausted"),
    (504, "upstream request timed out"),
)
_CLIENT_ERRORS = ((400, "bad request"), (401, "unauthorized"), (404, "not found"))
_SLOW_MS = 1000.0  # a successful request slower than this is logged as WARN
_DEBUG_RATE = 0.03


def format_timestamp(ms: int) -> str:
    """ISO 8601 in UTC with milliseconds: ``2025-01-01T00:00:00.000Z``."""
    moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class LogGenerator:
    """Synthetic request logs of :data:`SERVICES`; deterministic for a given seed.

    Each service has occasional incidents (on average one every few minutes of event time,
    lasting 20 to 60 s) during which its 5xx rate is multiplied by ten and its latencies by
    three, so error counts and percentiles move visibly from one window to the next.
    Not thread-safe.
    """

    def __init__(
        self,
        seed: int | None = None,
        *,
        services: Sequence[Service] = SERVICES,
        late_fraction: float = 0.05,
        max_lateness_ms: int = 5000,
        incidents_per_hour: float = 12.0,
    ) -> None:
        self.rng = random.Random(seed)
        self.services = tuple(services)
        self.weights = [s.weight for s in self.services]
        self.late_fraction = late_fraction
        self.max_lateness_ms = max_lateness_ms
        self.incidents_per_hour = incidents_per_hour
        self.incident_until: dict[str, int] = {}
        self.last_ms: int | None = None

    def event(self, now_ms: int, *, not_before_ms: int | None = None) -> dict[str, Any]:
        """One request log event produced at ``now_ms``; a late event's time is earlier,
        but not before ``not_before_ms``."""
        rng = self.rng
        service = rng.choices(self.services, self.weights)[0]
        self._update_incidents(now_ms)
        incident = self.incident_until.get(service.name, -1) > now_ms
        endpoint = rng.choices(service.endpoints, [e.weight for e in service.endpoints])[0]

        latency = endpoint.median_ms * math.exp(0.45 * rng.gauss(0.0, 1.0))
        if rng.random() < 0.02:  # the long tail: GC pauses, cold caches, retries
            latency *= rng.uniform(4.0, 25.0)
        if incident:
            latency *= 3.0
        error_rate = min(service.error_rate * (10.0 if incident else 1.0), 0.5)
        roll = rng.random()
        if roll < error_rate:
            status, reason = rng.choice(_SERVER_ERRORS)
            if status == 504:
                latency = 3000.0 + rng.uniform(0.0, 2000.0)  # the client's timeout
        elif roll < error_rate + service.client_error_rate:
            status, reason = rng.choice(_CLIENT_ERRORS)
            latency *= 0.3
        else:
            status, reason = (201 if endpoint.method == "POST" else 200), "ok"
        latency = round(max(latency, 0.1), 1)

        if status >= 500:
            level = "ERROR"
        elif status >= 400 or latency > _SLOW_MS:
            level = "WARN"
        elif rng.random() < _DEBUG_RATE:
            level = "DEBUG"
        else:
            level = "INFO"

        event_ms = now_ms
        if rng.random() < self.late_fraction:
            event_ms -= rng.randint(1, self.max_lateness_ms)
            if not_before_ms is not None:
                event_ms = max(event_ms, not_before_ms)
        path = endpoint.path.replace("{id}", str(rng.randint(1000, 99999)))
        message = f"{endpoint.method} {path} {status} {latency} ms"
        if reason != "ok":
            message += f": {reason}"
        return {
            "timestamp": format_timestamp(event_ms),
            "service": service.name,
            "host": f"{service.name}-{rng.randrange(service.hosts)}",
            "level": level,
            "method": endpoint.method,
            "path": path,
            "status": status,
            "latency_ms": latency,
            "trace_id": f"{rng.getrandbits(64):016x}",
            "message": message,
        }

    def _update_incidents(self, now_ms: int) -> None:
        elapsed = 0 if self.last_ms is None else max(now_ms - self.last_ms, 0)
        self.last_ms = now_ms
        if not elapsed:
            return
        chance = self.incidents_per_hour * elapsed / 3_600_000 / len(self.services)
        for service in self.services:
            if self.incident_until.get(service.name, -1) <= now_ms and self.rng.random() < chance:
                self.incident_until[service.name] = now_ms + self.rng.randint(20_000, 60_000)


def generate(
    count: int,
    *,
    seed: int,
    start_ms: int,
    span_ms: int,
    late_fraction: float = 0.05,
    max_lateness_ms: int = 5000,
) -> list[dict[str, Any]]:
    """``count`` events produced evenly over ``[start_ms, start_ms + span_ms)``, in production
    order; late events never fall before ``start_ms``. Deterministic."""
    gen = LogGenerator(seed, late_fraction=late_fraction, max_lateness_ms=max_lateness_ms)
    times = (start_ms + i * span_ms // count for i in range(count))
    return [gen.event(t, not_before_ms=start_ms) for t in times]


# -- tailing files ---------------------------------------------------------------------------


class FileTailer:
    """Follows one file by name, as ``tail -F`` does. Not thread-safe.

    :meth:`poll` returns the complete lines appended since the last call. A file that does
    not exist yet is waited for. When the name points at a new file (rotation: the old file
    was renamed or deleted and a new one created), the rest of the old file is read first,
    then the new file from its start. When the file shrinks below the position read so far
    (truncation, ``copytruncate`` rotation), reading restarts at its beginning. A last line
    without its newline is held back until the newline arrives, or until rotation.
    """

    def __init__(self, path: str | os.PathLike[str], *, from_end: bool = False) -> None:
        self.path = Path(path)
        self.skip_existing = from_end  # only what the file holds now; a later file is read whole
        self.file: Any = None  # binary file object
        self.identity: tuple[int, int] | None = None  # (st_dev, st_ino)
        self.partial = b""

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def poll(self) -> list[str]:
        lines: list[str] = []
        if self.file is None:
            opened = self._open()
            self.skip_existing = False
            if not opened:
                return lines
        lines += self._read_available()
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return lines  # removed: keep the old handle until a new file appears
        if (st.st_dev, st.st_ino) != self.identity:
            lines += self._read_available()  # whatever was written before the rotation
            if self.partial:
                lines.append(self.partial.decode("utf-8", "replace"))
                self.partial = b""
            self.close()
            if self._open():
                lines += self._read_available()
        elif st.st_size < self.file.tell():  # (a file truncated and refilled past it is missed)
            self.file.seek(0)
            self.partial = b""
            lines += self._read_available()
        return lines

    def _open(self) -> bool:
        try:
            self.file = open(self.path, "rb")  # noqa: SIM115 - kept open while following
        except FileNotFoundError:
            return False
        st = os.fstat(self.file.fileno())
        self.identity = (st.st_dev, st.st_ino)
        if self.skip_existing:
            self.file.seek(0, os.SEEK_END)
        return True

    def _read_available(self) -> list[str]:
        chunk = self.file.read()
        if not chunk:
            return []
        data = self.partial + chunk
        *complete, self.partial = data.split(b"\n")
        return [line.rstrip(b"\r").decode("utf-8", "replace") for line in complete]


_ISO_PREFIX = re.compile(
    r"^\[?(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\]?\s*"
)
_LEVEL_WORD = re.compile(r"\b(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)\b", re.IGNORECASE)
_LOGFMT_PAIR = re.compile(r'(\w[\w.-]*)=("(?:[^"\\]|\\.)*"|\S+)')
_LEVEL_ALIASES = {"TRACE": "DEBUG", "WARNING": "WARN", "FATAL": "ERROR", "CRITICAL": "ERROR"}


def _normalize_level(level: object) -> str:
    text = str(level).upper()
    return _LEVEL_ALIASES.get(text, text if text in LEVELS else "INFO")


def _normalize_timestamp(value: object, now_ms: int) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        ms = int(value * 1000) if value < 1e11 else int(value)  # seconds or milliseconds
        return format_timestamp(ms)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace(",", "."))
        except ValueError:
            return format_timestamp(now_ms)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return format_timestamp(int(moment.timestamp() * 1000))
    return format_timestamp(now_ms)


def _number(value: object) -> float | None:
    try:
        return float(str(value).removesuffix("ms"))
    except ValueError:
        return None


def parse_line(line: str, service: str, now_ms: int) -> dict[str, Any] | None:
    """One log line as an event (``None`` for a blank line).

    A JSON object keeps its fields; ``ts``/``time``/``@timestamp`` and ``severity`` are
    accepted for ``timestamp`` and ``level``. A ``key=value`` line (logfmt) becomes those
    fields. Anything else becomes ``message``, with a leading ISO timestamp and the first
    level word picked out. ``service`` and ``now_ms`` fill what the line does not say.
    """
    text = line.strip()
    if not text:
        return None
    fields: dict[str, Any] = {}
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            fields = parsed
    if not fields:
        pairs = dict((k, v.strip('"')) for k, v in _LOGFMT_PAIR.findall(text))
        if len(pairs) >= 2 and ("level" in pairs or "msg" in pairs or "message" in pairs):
            fields = pairs
        else:
            match = _ISO_PREFIX.match(text)
            if match:
                fields["timestamp"] = match.group(1)
                text = text[match.end() :]
            level = _LEVEL_WORD.search(text)
            fields["level"] = level.group(1) if level else "INFO"
            fields["message"] = text

    event = dict(fields)
    for alias in ("@timestamp", "ts", "time"):
        if "timestamp" not in event and alias in event:
            event["timestamp"] = event.pop(alias)
    if "level" not in event and "severity" in event:
        event["level"] = event.pop("severity")
    if "message" not in event and "msg" in event:
        event["message"] = event.pop("msg")
    event["timestamp"] = _normalize_timestamp(event.get("timestamp"), now_ms)
    event["level"] = _normalize_level(event.get("level", "INFO"))
    event["service"] = str(event.get("service") or service)
    for key, kind in (("status", int), ("latency_ms", float)):
        if key in event:
            number = _number(event[key])
            event[key] = None if number is None else kind(number)
    return event


# -- producing -------------------------------------------------------------------------------


def make_producer(bootstrap: str, **config: Any) -> Any:
    """A confluent-kafka producer for the agent: idempotent, batched, lz4-compressed."""
    from confluent_kafka import Producer

    settings: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "client.id": "log-agent",
        "enable.idempotence": True,
        "linger.ms": 50,
        "compression.type": "lz4",
    }
    settings.update(config)
    return Producer(settings)


class Deliveries:
    """Counts delivery reports (the producer's ``on_delivery`` callback); keeps the first error."""

    def __init__(self) -> None:
        self.delivered = 0
        self.failed = 0
        self.first_error: str | None = None

    def __call__(self, err: Any, _msg: Any) -> None:
        if err is None:
            self.delivered += 1
        else:
            self.failed += 1
            self.first_error = self.first_error or str(err)


def produce(
    producer: Any,
    topic: str,
    events: Iterable[dict[str, Any]],
    on_delivery: Callable[[Any, Any], None] | None = None,
) -> int:
    """Queue ``events`` on ``topic`` (key = service); the number queued. Call ``flush``."""
    n = 0
    for event in events:
        value = json.dumps(event, separators=(",", ":")).encode()
        while True:
            try:
                producer.produce(
                    topic, value=value, key=event["service"].encode(), on_delivery=on_delivery
                )
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                producer.poll(0.1)
        n += 1
        if n % 1000 == 0:
            producer.poll(0)
    return n


def run_generate(
    producer: Any,
    topic: str,
    *,
    rate: float,
    count: int | None = None,
    seed: int | None = None,
    speed: float = 1.0,
    stop: threading.Event | None = None,
    on_delivery: Callable[[Any, Any], None] | None = None,
) -> int:
    """Produce generated events at ``rate`` per second (0: as fast as possible) until
    ``count`` events or ``stop``; the number produced. Event time
    starts at the wall clock and runs ``speed`` times faster than it."""
    gen = LogGenerator(seed)
    stop = stop or threading.Event()
    began = time.monotonic()
    start_ms = int(time.time() * 1000)
    sent = 0
    while not stop.is_set():
        elapsed = time.monotonic() - began
        due = sent + 1000 if rate <= 0 else int(elapsed * rate) + 1
        if count is not None:
            due = min(due, count)
        if due <= sent:
            if count is not None and sent >= count:
                break
            stop.wait(min(0.01, 1 / rate))
            producer.poll(0)
            continue
        now_ms = start_ms + int(elapsed * speed * 1000)
        batch = (gen.event(now_ms) for _ in range(due - sent))
        sent += produce(producer, topic, batch, on_delivery)
        producer.poll(0)
    producer.flush(30)
    return sent


def run_tail(
    producer: Any,
    topic: str,
    paths: Sequence[str],
    *,
    service: str | None = None,
    from_end: bool = False,
    interval: float = 0.25,
    stop: threading.Event | None = None,
    on_delivery: Callable[[Any, Any], None] | None = None,
) -> int:
    """Follow ``paths`` and produce every line as an event until ``stop``; the number sent.
    A file's service name defaults to its name without extensions (``checkout.log``)."""
    stop = stop or threading.Event()
    tailers = [(FileTailer(p, from_end=from_end), service or _stem(p)) for p in paths]
    sent = 0
    try:
        while not stop.is_set():
            now_ms = int(time.time() * 1000)
            events = [
                event
                for tailer, name in tailers
                for line in tailer.poll()
                if (event := parse_line(line, name, now_ms)) is not None
            ]
            sent += produce(producer, topic, events, on_delivery)
            producer.poll(0)
            if not events:
                stop.wait(interval)
    finally:
        for tailer, _ in tailers:
            tailer.close()
        producer.flush(30)
    return sent


def _stem(path: str) -> str:
    return Path(path).name.split(".")[0] or "app"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.log_pipeline.agent",
        description="Produce application log events as JSON to a kafkacore (Kafka) topic.",
    )
    parser.add_argument("--bootstrap", "--bootstrap-server", required=True, metavar="HOST:PORT")
    parser.add_argument("--topic", default=DEFAULT_TOPIC)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--generate", action="store_true", help="synthetic service logs")
    mode.add_argument("--tail", nargs="+", metavar="FILE", help="follow files (tail -F)")
    parser.add_argument("--rate", type=float, default=200.0, help="events/s (0: unthrottled)")
    parser.add_argument("--count", type=int, help="stop after this many events")
    parser.add_argument("--duration", type=float, help="stop after this many seconds")
    parser.add_argument("--seed", type=int, help="random seed (reproducible logs)")
    parser.add_argument("--speed", type=float, default=1.0, help="event-time speed-up")
    parser.add_argument("--service", help="service name for tailed lines (default: file name)")
    parser.add_argument("--from-end", action="store_true", help="skip what the files hold")
    args = parser.parse_args(argv)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.duration is not None:
        timer = threading.Timer(args.duration, stop.set)
        timer.daemon = True
        timer.start()
    producer = make_producer(args.bootstrap)
    deliveries = Deliveries()
    try:
        if args.generate:
            run_generate(
                producer,
                args.topic,
                rate=args.rate,
                count=args.count,
                seed=args.seed,
                speed=args.speed,
                stop=stop,
                on_delivery=deliveries,
            )
        else:
            run_tail(
                producer,
                args.topic,
                args.tail,
                service=args.service,
                from_end=args.from_end,
                stop=stop,
                on_delivery=deliveries,
            )
    except KeyboardInterrupt:
        pass
    undelivered = producer.flush(30)
    print(
        f"delivered {deliveries.delivered} events to {args.topic}, {deliveries.failed} failed"
        + (f" ({deliveries.first_error})" if deliveries.first_error else "")
        + (f", {undelivered} still queued" if undelivered else ""),
        file=sys.stderr,
    )
    return 0 if deliveries.failed == 0 and undelivered == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
