"""Client quota entities, precedence, the windowed rate and the DescribeClientQuotas filter
(kafkacore.server.client_quotas, kafkacore.server.handlers.quotas), without a broker."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kafkacore.metadata import EmbeddedMetadataStore
from kafkacore.protocol import APIS_BY_NAME, ApiKey, RequestHeader
from kafkacore.server.channel import _client_throttles, _quota_throttle_ms
from kafkacore.server.client_quotas import (
    CLIENT_QUOTA_KEYS,
    ClientQuotaManager,
    QuotaEntityError,
    WindowedRate,
    entity_from_path,
    entity_path,
    sanitize,
    stored_quota_value,
)
from kafkacore.server.handlers.fetch import _apply_fetch_quota
from kafkacore.server.handlers.quotas import MATCH_ANY, MATCH_DEFAULT, MATCH_EXACT, describe_quotas
from kafkacore.server.request_context import ANONYMOUS

# Kafka's documented order, most specific first, for user "u" and client id "c"
PRECEDENCE = [
    "users/u/clients/c",
    "users/u/clients/<default>",
    "users/u",
    "users/<default>/clients/c",
    "users/<default>/clients/<default>",
    "users/<default>",
    "clients/c",
    "clients/<default>",
]


@pytest.mark.parametrize("winner", range(len(PRECEDENCE)))
def test_precedence(winner: int) -> None:
    manager = ClientQuotaManager()
    # every entity from the winner down defines a quota; the winner's applies
    manager.load({path: {"producer_byte_rate": str(1000 + i)} for i, path in enumerate(PRECEDENCE)})
    for path in PRECEDENCE[:winner]:
        manager.on_quota_configs_changed(path, {})
    assert manager.quota("producer_byte_rate", "u", "c") == 1000 + winner
    # another user and client id only match the defaults (entries 4, 5 and 7)
    other = next(i for i in (4, 5, 7) if i >= winner)
    assert manager.quota("producer_byte_rate", "x", "y") == 1000 + other


def test_precedence_per_key_and_unlimited() -> None:
    manager = ClientQuotaManager()
    assert manager.quota("producer_byte_rate", "u", "c") is None
    manager.on_quota_configs_changed("users/u", {"consumer_byte_rate": "10"})
    manager.on_quota_configs_changed("clients/c", {"producer_byte_rate": "20"})
    # users/u has no producer quota: the lookup goes on to clients/c
    assert manager.quota("producer_byte_rate", "u", "c") == 20
    assert manager.quota("consumer_byte_rate", "u", "c") == 10
    assert manager.quota("consumer_byte_rate", "v", "c") is None


def test_defaults_apply_to_everyone() -> None:
    manager = ClientQuotaManager()
    manager.on_quota_configs_changed("users/<default>", {"producer_byte_rate": "5"})
    manager.on_quota_configs_changed("clients/<default>", {"producer_byte_rate": "7"})
    assert manager.quota("producer_byte_rate", "anyone", "any") == 5
    manager.on_quota_configs_changed("users/<default>", {})
    assert manager.quota("producer_byte_rate", "anyone", "any") == 7


def test_sanitized_names() -> None:
    assert sanitize("User:CN=a b,O=x*") == "User%3ACN%3Da%20b%2CO%3Dx%2A"
    assert sanitize(None) == "<default>"
    manager = ClientQuotaManager()
    manager.on_quota_configs_changed(f"users/{sanitize('a b')}", {"producer_byte_rate": "3"})
    assert manager.quota("producer_byte_rate", "a b", "c") == 3
    assert entity_from_path("users/a%20b/clients/<default>") == {
        "user": "a b",
        "client-id": None,
    }


def test_entity_paths_and_validation() -> None:
    assert entity_path({"user": "u", "client-id": "c"})[0] == "users/u/clients/c"
    assert entity_path({"user": None})[0] == "users/<default>"
    assert entity_path({"client-id": None})[0] == "clients/<default>"
    assert entity_path({"ip": "127.0.0.1"})[0] == "ips/127.0.0.1"
    for bad, message in [
        ({}, "Invalid empty client quota entity"),
        ({"user": ""}, "Empty user not supported"),
        ({"group": "g"}, "Unhandled client quota entity type: group"),
        ({"ip": "1.2.3.4", "user": "u"}, "IP entity should not be used"),
    ]:
        with pytest.raises(QuotaEntityError, match=message):
            entity_path(bad)


def test_stored_values_as_kafka_writes_them() -> None:
    assert stored_quota_value("producer_byte_rate", 1024.0, CLIENT_QUOTA_KEYS) == "1024"
    assert stored_quota_value("request_percentage", 50.0, CLIENT_QUOTA_KEYS) == "50.0"
    assert stored_quota_value("controller_mutation_rate", 1e7, CLIENT_QUOTA_KEYS) == "1.0E7"
    with pytest.raises(QuotaEntityError, match="Configuration producer_byte_rate must be a LONG"):
        stored_quota_value("producer_byte_rate", 1.5, CLIENT_QUOTA_KEYS)
    with pytest.raises(QuotaEntityError, match="Invalid configuration key foo"):
        stored_quota_value("foo", 1.0, CLIENT_QUOTA_KEYS)


def test_windowed_rate_counts_at_least_ten_windows() -> None:
    rate = WindowedRate()
    rate.record(1000, 0)
    # one sample: the elapsed time is padded to (11 - 1) windows of 1 s
    assert rate.window_size_ms(0) == 10_000
    assert rate.measure(0) == pytest.approx(100.0)
    for second in range(1, 20):
        rate.record(1000, second * 1000)
    # steady 1000 B/s: the 11 live samples span 10 s plus the current one
    assert rate.measure(19_000) == pytest.approx(11_000 / 10, rel=0.01)
    # samples older than 11 windows are purged
    assert rate.measure(40_000) == 0


def test_throttle_time_is_kafkas_formula() -> None:
    now = [0.0]
    manager = ClientQuotaManager(clock_ms=lambda: now[0])
    manager.on_quota_configs_changed("clients/c", {"producer_byte_rate": "100"})
    assert manager.record("producer_byte_rate", "u", "c", 1000) == 0  # 100 B/s: on the quota
    # 3000 B over a 10 s window is 300 B/s: (300 - 100) / 100 * 10 s
    assert manager.record("producer_byte_rate", "u", "c", 2000) == 20_000
    # the rate is shared by every user of client id c (a clients/<c> quota)
    assert manager.record("producer_byte_rate", "other", "c", 0) == 20_000
    # without a quota nothing is throttled
    assert manager.record("producer_byte_rate", "u", "d", 10**9) == 0
    manager.unrecord("producer_byte_rate", "u", "c", 3000)
    assert manager.record("producer_byte_rate", "u", "c", 0) == 0


CONFIGS = {
    "users/alice": {"producer_byte_rate": "1"},
    "users/alice/clients/app": {"consumer_byte_rate": "2"},
    "users/<default>": {"producer_byte_rate": "3"},
    "clients/app": {"request_percentage": "4.5"},
    "clients/<default>": {"producer_byte_rate": "5"},
    "users/bob": {"unrelated": "x"},  # no quota key: never described
    "ips/<default>": {"connection_creation_rate": "6"},
}


def _described(components: dict[str, tuple[int, str | None]], strict: bool) -> set[str]:
    return {entity_path(entity)[0] for entity, _ in describe_quotas(CONFIGS, components, strict)}


def test_describe_filters() -> None:
    everything = set(CONFIGS) - {"users/bob"}
    assert _described({}, strict=False) == everything
    assert _described({}, strict=True) == set()
    assert _described({"user": (MATCH_ANY, None)}, strict=True) == {
        "users/alice",
        "users/<default>",
    }
    assert _described({"user": (MATCH_ANY, None)}, strict=False) == {
        "users/alice",
        "users/alice/clients/app",
        "users/<default>",
    }
    assert _described({"user": (MATCH_EXACT, "alice")}, strict=False) == {
        "users/alice",
        "users/alice/clients/app",
    }
    assert _described({"client-id": (MATCH_DEFAULT, None)}, strict=True) == {"clients/<default>"}
    assert _described(
        {"user": (MATCH_EXACT, "alice"), "client-id": (MATCH_EXACT, "app")}, strict=True
    ) == {"users/alice/clients/app"}
    assert _described({"ip": (MATCH_ANY, None)}, strict=True) == {"ips/<default>"}
    values = describe_quotas(CONFIGS, {"client-id": (MATCH_EXACT, "app")}, True)
    assert values == [({"client-id": "app"}, {"request_percentage": 4.5})]


# -- the Produce / Fetch hooks and the channel ---------------------------------------------------


def _context(client_id: str) -> Any:
    header = RequestHeader(ApiKey.FETCH, 12, 1, client_id)
    return SimpleNamespace(principal=ANONYMOUS, header=header)


def test_a_throttled_fetch_sends_no_records() -> None:
    now = [0.0]
    quotas = ClientQuotaManager(clock_ms=lambda: now[0])
    quotas.on_quota_configs_changed("clients/slow", {"consumer_byte_rate": "100"})
    services = SimpleNamespace(client_quotas=quotas)
    cls: Any = APIS_BY_NAME["Fetch"].response.cls

    def response() -> Any:
        data = cls.PartitionData(partition_index=0, records=b"r" * 1500)
        topics = [cls.FetchableTopicResponse(topic="t", partitions=[data])]
        return cls(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)

    first = response()
    _apply_fetch_quota(services, _context("slow"), first)  # type: ignore[arg-type]
    # 1500 B over a 10 s window is 150 B/s: throttled 5 s, and the records taken back
    assert (first.throttle_time_ms, first.responses) == (5000, [])
    assert quotas.record("consumer_byte_rate", "ANONYMOUS", "slow", 0) == 0
    # a client id without a quota gets everything
    other = response()
    _apply_fetch_quota(services, _context("fast"), other)  # type: ignore[arg-type]
    assert other.throttle_time_ms == 0 and len(other.responses) == 1


def test_the_channel_mutes_after_a_throttled_response() -> None:
    fetch_v12 = RequestHeader(ApiKey.FETCH, 12, 1, "c")
    produce_v5 = RequestHeader(ApiKey.PRODUCE, 5, 1, "c")
    throttled = SimpleNamespace(throttle_time_ms=250)
    assert _quota_throttle_ms(fetch_v12, throttled) == 250
    # any API may be throttled by the request time quota (request_percentage)
    metadata_v12 = RequestHeader(ApiKey.METADATA, 12, 1, "c")
    assert _quota_throttle_ms(metadata_v12, throttled) == 250
    assert _quota_throttle_ms(metadata_v12, SimpleNamespace()) == 0
    assert _client_throttles(metadata_v12)
    # KIP-219: Fetch v8+ / Produce v6+ clients wait themselves; older ones get a late answer
    assert _client_throttles(fetch_v12) and not _client_throttles(produce_v5)


def test_the_embedded_store_keeps_quotas(tmp_path: Any) -> None:
    """A single node (``make run``) stores quotas in its metadata file and tells the
    quota manager; a restart reads them back."""
    store = EmbeddedMetadataStore(tmp_path, 1)
    manager = ClientQuotaManager()
    store.add_listener(manager)
    store.set_quota_configs("users/u/clients/c", {"producer_byte_rate": "10"})
    assert manager.quota("producer_byte_rate", "u", "c") == 10
    store.set_quota_configs("clients/<default>", {"consumer_byte_rate": "20"})
    store.set_quota_configs("clients/<default>", {})
    reopened = EmbeddedMetadataStore(tmp_path, 1)
    assert reopened.quota_configs() == {"users/u/clients/c": {"producer_byte_rate": "10"}}
