"""Client quotas (Kafka's ``ClientQuotaManager`` with its ``DefaultQuotaCallback``, KIP-55
and KIP-219): the quota entities, how their configs are stored, and the byte-rate
quotas applied to Produce and Fetch.

**Entities and storage.** A quota entity is a user, a client id, a user with a client id,
or an IP, each name possibly the default (``<default>``). It is stored where Kafka's
``AdminZkClient`` stores it, and named here by that path below ``/config``:
``users/<user>``, ``clients/<client-id>``, ``users/<user>/clients/<client-id>``,
``ips/<ip>``; names are sanitized as Kafka's ``Sanitizer`` does (URL-encoded).

**Precedence.** For a request of user ``u`` and client id ``c`` the first of these
entities that defines the quota applies (Kafka's documentation, "Quotas")::

    users/u/clients/c, users/u/clients/<default>, users/u,
    users/<default>/clients/c, users/<default>/clients/<default>, users/<default>,
    clients/c, clients/<default>

Which one matched also decides who shares the measured rate, as Kafka's metric tags do:
a quota of ``users/u`` (or ``users/<default>``) is shared by all of ``u``'s clients, one of
``clients/c`` by every user of client id ``c``, the others are per (user, client id).

**Rate.** Kafka's windowed ``Rate``: ``quota.window.num`` (11) samples of
``quota.window.size.seconds`` (1 s); the rate is the samples' sum over the time since the
oldest sample, counted as at least ``num - 1`` full windows. A request whose recording
takes the rate over the quota is throttled for ``(rate - quota) / quota * window``
(``QuotaUtils.throttleTime``).

Thread-safety: :class:`ClientQuotaManager` takes its lock in every public method (the
stores call it from their threads, handlers from the event loop and the I/O threads).
"""

from __future__ import annotations

import ipaddress
import math
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafkacore.metadata.store import QuotaConfigListener

__all__ = [
    "CLIENT_ID",
    "CLIENT_QUOTA_KEYS",
    "DEFAULT_NAME",
    "FETCH",
    "IP",
    "IP_QUOTA_KEYS",
    "PRODUCE",
    "REQUEST_PERCENTAGE",
    "USER",
    "ClientQuotaManager",
    "QuotaEntityError",
    "WindowedRate",
    "desanitize",
    "entity_from_path",
    "entity_path",
    "java_double",
    "quota_candidates",
    "sanitize",
    "stored_quota_value",
]

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
DEFAULT_NAME = "<default>"  # Kafka's ConfigEntityName.DEFAULT

PRODUCE = "producer_byte_rate"
FETCH = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"

# Kafka's QuotaConfigs: the keys of user / client-id entities and their types.
CLIENT_QUOTA_KEYS: dict[str, str] = {
    "producer_byte_rate": "LONG",
    "consumer_byte_rate": "LONG",
    "request_percentage": "DOUBLE",
    "controller_mutation_rate": "DOUBLE",
}
IP_QUOTA_KEYS: dict[str, str] = {"connection_creation_rate": "INT"}

QUOTA_WINDOW_NUM = 11  # quota.window.num
QUOTA_WINDOW_SIZE_MS = 1000  # quota.window.size.seconds


class QuotaEntityError(ValueError):
    """A request Kafka answers INVALID_REQUEST (``str()`` is Kafka's message), or
    UNSUPPORTED_VERSION when ``unsupported``."""

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


# -- names ----------------------------------------------------------------------------------


def sanitize(name: str | None) -> str:
    """Kafka's ``sanitizeEntityName``: None is ``<default>``; otherwise ``Sanitizer.sanitize``
    (``URLEncoder`` with ``*`` as ``%2A`` and a space as ``%20``)."""
    if name is None:
        return DEFAULT_NAME
    return urllib.parse.quote(name, safe="").replace("~", "%7E")


def desanitize(name: str) -> str | None:
    return None if name == DEFAULT_NAME else urllib.parse.unquote(name)


def entity_path(entity: Mapping[str, str | None]) -> tuple[str, dict[str, str]]:
    """The stored path of ``entity`` and the quota keys (with types) it accepts, validated
    as Kafka's ``ZkAdminManager.parseAndSanitizeQuotaEntity``."""
    if not entity:
        raise QuotaEntityError("Invalid empty client quota entity")
    for entity_type, name in entity.items():
        if entity_type not in (USER, CLIENT_ID, IP):
            raise QuotaEntityError(f"Unhandled client quota entity type: {entity_type}")
        if name is not None and name == "":
            raise QuotaEntityError(f"Empty {entity_type} not supported")
    if IP in entity:
        if len(entity) > 1:
            raise QuotaEntityError(
                "Invalid quota entity combination, IP entity should not be used with "
                "user/client ID entity."
            )
        ip = entity[IP]
        if ip is not None and not _valid_ip_entity(ip):
            raise QuotaEntityError(f"{ip} is not a valid IP or resolvable host.")
        return f"ips/{DEFAULT_NAME if ip is None else ip}", IP_QUOTA_KEYS
    if USER in entity and CLIENT_ID in entity:
        return (
            f"users/{sanitize(entity[USER])}/clients/{sanitize(entity[CLIENT_ID])}",
            CLIENT_QUOTA_KEYS,
        )
    if USER in entity:
        return f"users/{sanitize(entity[USER])}", CLIENT_QUOTA_KEYS
    return f"clients/{sanitize(entity[CLIENT_ID])}", CLIENT_QUOTA_KEYS


def entity_from_path(path: str) -> dict[str, str | None] | None:
    """The entity stored at ``path`` (see :func:`entity_path`), None if not a quota path."""
    parts = path.split("/")
    if len(parts) == 2 and parts[0] == "users":
        return {USER: desanitize(parts[1])}
    if len(parts) == 2 and parts[0] == "clients":
        return {CLIENT_ID: desanitize(parts[1])}
    if len(parts) == 4 and parts[0] == "users" and parts[2] == "clients":
        return {USER: desanitize(parts[1]), CLIENT_ID: desanitize(parts[3])}
    if len(parts) == 2 and parts[0] == "ips":
        return {IP: None if parts[1] == DEFAULT_NAME else parts[1]}
    return None


def _valid_ip_entity(ip: str) -> bool:
    try:
        ipaddress.ip_address(ip)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(ip, None)
        return True
    except OSError:
        return False


def stored_quota_value(key: str, value: float, keys: Mapping[str, str]) -> str:
    """The string Kafka stores for ``key = value`` (``ZkAdminManager.alterClientQuotas``):
    a double as Java prints it, a LONG/INT as an integer within 1e-6."""
    kind = keys.get(key)
    if kind is None:
        raise QuotaEntityError(f"Invalid configuration key {key}")
    if kind == "DOUBLE":
        return java_double(value)
    epsilon = 1e-6
    as_int = math.trunc(value + epsilon)
    if abs(as_int - value) > epsilon:
        raise QuotaEntityError(f"Configuration {key} must be a {kind} value")
    return str(as_int)


def java_double(value: float) -> str:
    """``Double.toString`` for the values a quota takes (``100.0``, ``1.5``, ``1.0E7``)."""
    if value == int(value) and abs(value) < 1e7:
        return f"{value:.1f}"
    if 1e-3 <= abs(value) < 1e7:
        return repr(value)
    mantissa, _, exponent = f"{value!r}".partition("e")
    if not exponent:  # large integral value: repr has no exponent
        mantissa, _, exponent = f"{value:e}".partition("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}E{int(exponent)}"


def quota_candidates(user: str, client_id: str) -> list[tuple[str, tuple[str, str]]]:
    """The entity paths that may hold the quota of ``(user, client_id)``, in precedence
    order, each with the key of the rate it is measured against (Kafka's metric tags)."""
    u, c, d = sanitize(user), sanitize(client_id), DEFAULT_NAME
    both = (user, client_id)
    return [
        (f"users/{u}/clients/{c}", both),
        (f"users/{u}/clients/{d}", both),
        (f"users/{u}", (user, "")),
        (f"users/{d}/clients/{c}", both),
        (f"users/{d}/clients/{d}", both),
        (f"users/{d}", (user, "")),
        (f"clients/{c}", ("", client_id)),
        (f"clients/{d}", ("", client_id)),
    ]


# -- the rate -------------------------------------------------------------------------------


class WindowedRate:
    """Kafka's ``Rate`` over a ``SampledStat`` (see the module documentation). Not
    thread-safe: the manager's lock guards it."""

    def __init__(self, samples: int = QUOTA_WINDOW_NUM, window_ms: int = QUOTA_WINDOW_SIZE_MS):
        self.samples = samples
        self.window_ms = window_ms
        self._samples: list[list[float]] = []  # [start ms, value]
        self._current = 0

    def record(self, value: float, now_ms: float) -> None:
        if not self._samples:
            self._samples.append([now_ms, 0.0])
            self._current = 0
        elif now_ms - self._samples[self._current][0] >= self.window_ms:
            self._current = (self._current + 1) % self.samples
            if self._current >= len(self._samples):
                self._samples.append([now_ms, 0.0])
            else:
                self._samples[self._current] = [now_ms, 0.0]
        self._samples[self._current][1] += value

    def _purge(self, now_ms: float) -> None:
        expire = self.samples * self.window_ms
        for sample in self._samples:
            if now_ms - sample[0] >= expire:
                sample[0], sample[1] = now_ms, 0.0

    def window_size_ms(self, now_ms: float) -> float:
        self._purge(now_ms)
        oldest = min((s[0] for s in self._samples), default=now_ms)
        elapsed = now_ms - oldest
        full = int(elapsed // self.window_ms)
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return elapsed

    def measure(self, now_ms: float) -> float:
        """Units per second."""
        window = self.window_size_ms(now_ms)
        return sum(s[1] for s in self._samples) / (window / 1000.0)


# -- the manager -----------------------------------------------------------------------------


_RESOLVED_MAX = 10_000


@dataclass(frozen=True, slots=True)
class _Quota:
    bound: float
    sensor: tuple[str, str]


class ClientQuotaManager(QuotaConfigListener):
    """The quota configs this broker knows (fed by the metadata store) and the measured
    rates of Produce and Fetch. It is a metadata store listener: only
    :meth:`on_quota_configs_changed` does anything."""

    def __init__(self, clock_ms: Callable[[], float] | None = None) -> None:
        self._lock = threading.Lock()
        self._configs: dict[str, dict[str, str]] = {}
        self._rates: dict[tuple[str, tuple[str, str]], WindowedRate] = {}
        self._clock = clock_ms or (lambda: time.monotonic() * 1000)
        # (key, user, client id) -> the quota in force, until the configs change: looked up
        # for every request while a request quota exists
        self._resolved: dict[tuple[str, str, str], _Quota | None] = {}
        # whether any entity has a request_percentage quota: requests are only timed then
        self.has_request_quotas = False

    # -- configs ----------------------------------------------------------------------------

    def load(self, configs: Mapping[str, Mapping[str, str]]) -> None:
        with self._lock:
            self._configs = {p: dict(c) for p, c in configs.items() if c}
            self._configs_changed()

    def on_quota_configs_changed(self, path: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            if configs:
                self._configs[path] = dict(configs)
            else:
                self._configs.pop(path, None)
            self._configs_changed()

    def _configs_changed(self) -> None:
        self._resolved.clear()
        self.has_request_quotas = any(REQUEST_PERCENTAGE in c for c in self._configs.values())

    def configs(self) -> dict[str, dict[str, str]]:
        with self._lock:
            return {p: dict(c) for p, c in self._configs.items()}

    def _quota(self, key: str, user: str, client_id: str) -> _Quota | None:
        resolved = self._resolved
        lookup = (key, user, client_id)
        if lookup in resolved:
            return resolved[lookup]
        if len(resolved) >= _RESOLVED_MAX:  # client ids come from the network
            resolved.clear()
        resolved[lookup] = found = self._find_quota(key, user, client_id)
        return found

    def _find_quota(self, key: str, user: str, client_id: str) -> _Quota | None:
        for path, sensor in quota_candidates(user, client_id):
            value = self._configs.get(path, {}).get(key)
            if value is None:
                continue
            try:
                return _Quota(float(value), sensor)
            except ValueError:
                continue
        return None

    def quota(self, key: str, user: str, client_id: str) -> float | None:
        """The quota ``key`` in force for ``(user, client_id)``; None: unlimited."""
        with self._lock:
            found = self._quota(key, user, client_id)
        return None if found is None else found.bound

    def max_fetch_bytes(self, user: str, client_id: str) -> int:
        """The most a consumer's Fetch may return: what its ``consumer_byte_rate`` admits
        in a quota window with nothing recorded (``getMaxValueInQuotaWindow``: the quota
        times ``quota.window.num - 1`` windows), unbounded without a quota. More would be
        throttled for sure, and the consumer would never progress."""
        if not self._configs:  # no quota anywhere: the common case, without the lock
            return 2**31 - 1
        with self._lock:
            quota = self._quota(FETCH, user, client_id)
        if quota is None:
            return 2**31 - 1
        window_s = QUOTA_WINDOW_SIZE_MS / 1000
        return int(min(quota.bound * (QUOTA_WINDOW_NUM - 1) * window_s, 2**31 - 1))

    # -- recording --------------------------------------------------------------------------

    def record(self, key: str, user: str, client_id: str, value: float) -> int:
        """Record ``value`` (bytes) against ``key``'s quota; the throttle time in ms
        (0 within the quota, or without one)."""
        now = self._clock()
        with self._lock:
            quota = self._quota(key, user, client_id)
            if quota is None:
                return 0
            rate = self._rates.get((key, quota.sensor))
            if rate is None:
                rate = self._rates[(key, quota.sensor)] = WindowedRate()
            rate.record(value, now)
            observed = rate.measure(now)
            if observed <= quota.bound or quota.bound <= 0:
                return 0
            return round((observed - quota.bound) / quota.bound * rate.window_size_ms(now))

    def record_request_time(self, user: str, client_id: str, percent_seconds: float) -> int:
        """Record request handling time (``nanoseconds * 100 / 1e9``) against the
        ``request_percentage`` quota; the throttle time in ms, bounded by one quota window
        (``ClientRequestQuotaManager``'s ``boundedThrottleTime``)."""
        if not self.has_request_quotas:
            return 0
        throttle_ms = self.record(REQUEST_PERCENTAGE, user, client_id, percent_seconds)
        return min(throttle_ms, QUOTA_WINDOW_SIZE_MS)

    def unrecord(self, key: str, user: str, client_id: str, value: float) -> None:
        """Take back a recorded ``value`` (a throttled Fetch sends no data)."""
        now = self._clock()
        with self._lock:
            quota = self._quota(key, user, client_id)
            rate = None if quota is None else self._rates.get((key, quota.sensor))
            if rate is not None:
                rate.record(-value, now)
