"""KIP-73 replication throttles: the sampled rate, the quota and the throttled replica
lists (:mod:`kafkacore.server.replication_quota`), on a simulated clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkacore.config import BrokerConfig
from kafkacore.config.defs import ConfigError
from kafkacore.log import LogManager
from kafkacore.metadata import EmbeddedMetadataStore, MetadataCache
from kafkacore.server.assembly import BrokerConfigHandler
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.replication_quota import (
    ALL_PARTITIONS,
    UNBOUNDED,
    ReplicationQuota,
    SampledRate,
    parse_throttled_partitions,
)
from kafkacore.server.services import BrokerConfigHolder
from support.budget import examples

MB = 1024 * 1024


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms

    def advance(self, ms: int) -> None:
        self.ms += ms


# -- the throttled replica lists --------------------------------------------------------


def test_star_throttles_every_partition() -> None:
    assert parse_throttled_partitions("*", 3) == ALL_PARTITIONS
    assert parse_throttled_partitions(" * ", 3) == ALL_PARTITIONS
    assert parse_throttled_partitions(["*"], 3) == ALL_PARTITIONS


def test_only_this_brokers_pairs_count() -> None:
    value = "0:1,0:2, 1:3 ,2:1,3:11"
    assert parse_throttled_partitions(value, 1) == {0, 2}
    assert parse_throttled_partitions(value, 3) == {1}
    assert parse_throttled_partitions(value, 4) == frozenset()
    assert parse_throttled_partitions("", 1) == frozenset()
    assert parse_throttled_partitions(["0:1", "5:1"], 1) == {0, 5}


@given(
    st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 20)), max_size=30),
    st.integers(0, 20),
)
def test_parsing_keeps_the_pairs_of_the_broker(pairs: list[tuple[int, int]], broker: int) -> None:
    value = ",".join(f"{p}:{b}" for p, b in pairs)
    assert parse_throttled_partitions(value, broker) == {p for p, b in pairs if b == broker}


def test_quota_applies_and_removes_lists() -> None:
    quota = ReplicationQuota()
    quota.update_throttled_replicas("t", "0:1,1:2", 1)
    assert quota.is_throttled("t", 0)
    assert not quota.is_throttled("t", 1)
    assert not quota.is_throttled("other", 0)
    quota.update_throttled_replicas("t", "*", 1)
    assert quota.is_throttled("t", 7)
    quota.update_throttled_replicas("t", "", 1)
    assert not quota.is_throttled("t", 0)
    quota.mark_throttled("t", frozenset({2}))
    assert quota.is_throttled("t", 2)
    quota.remove_throttle("t")
    assert not quota.is_throttled("t", 2)


# -- the rate ----------------------------------------------------------------------------


def test_unbounded_is_never_exceeded() -> None:
    clock = Clock()
    quota = ReplicationQuota(clock=clock)
    assert quota.upper_bound == UNBOUNDED == 2**63 - 1
    quota.record(10**15)
    assert not quota.is_quota_exceeded()


def test_first_window_counts_as_one_whole_window() -> None:
    clock = Clock()
    quota = ReplicationQuota(MB, clock=clock)
    quota.record(MB)
    clock.advance(10)
    # 1 MB over (at least) one second: at the bound, not above it
    assert quota.rate() == pytest.approx(MB)
    assert not quota.is_quota_exceeded()
    quota.record(1)
    assert quota.is_quota_exceeded()


def test_rate_is_over_the_time_since_the_oldest_sample() -> None:
    clock = Clock()
    quota = ReplicationQuota(MB, clock=clock)
    quota.record(10 * MB)
    clock.advance(5000)
    assert quota.rate() == pytest.approx(2 * MB)
    assert quota.is_quota_exceeded()
    clock.advance(5000)
    assert quota.rate() == pytest.approx(MB)
    assert not quota.is_quota_exceeded()
    # the sample's last event is num * size = 11 s old: purged
    clock.advance(1000)
    assert quota.rate() == 0
    assert not quota.is_quota_exceeded()


def test_samples_roll_and_expire() -> None:
    clock = Clock()
    rate = SampledRate(samples=3, window_ms=1000)
    for second in range(10):
        if second:
            clock.advance(1000)
        rate.record(100, clock())
    clock.advance(500)
    # an event every second: the samples whose last event is under 3 s old are kept
    assert rate.total(clock()) == 300
    assert rate.window_size_ms(clock()) == 2500
    assert rate.measure(clock()) == pytest.approx(300 / 2.5)
    clock.advance(3000)
    assert rate.total(clock()) == 0
    assert rate.window_size_ms(clock()) == 1000


def test_bound_changes_apply_at_once() -> None:
    clock = Clock()
    quota = ReplicationQuota(MB, clock=clock)
    quota.record(2 * MB)
    assert quota.is_quota_exceeded()
    quota.update_quota(4 * MB)
    assert not quota.is_quota_exceeded()
    quota.update_quota(UNBOUNDED)
    quota.record(100 * MB)
    assert not quota.is_quota_exceeded()


def _simulate(bound: int, chunk: int, pause_ms: int, seconds: int, samples: int = 11) -> float:
    """A greedy replica that moves ``chunk`` bytes whenever the quota allows and waits
    ``pause_ms`` otherwise (a fetch backoff); the bytes per second it reaches between
    the 15th second and the end."""
    clock = Clock()
    quota = ReplicationQuota(bound, samples=samples, clock=clock)
    start = clock()
    moved_at_15 = None
    moved = 0
    while clock() - start < seconds * 1000:
        if moved_at_15 is None and clock() - start >= 15_000:
            moved_at_15 = moved
        if quota.is_quota_exceeded():
            clock.advance(pause_ms)
            continue
        quota.record(chunk)
        moved += chunk
        clock.advance(5)  # a round trip
    assert moved_at_15 is not None
    return (moved - moved_at_15) / (seconds - 15)


@settings(max_examples=examples(25), deadline=None)
@given(
    bound=st.integers(256 * 1024, 8 * MB),
    chunks_per_second=st.integers(4, 64),
    pause_ms=st.sampled_from([50, 100, 200]),
    samples=st.integers(5, 11),
)
def test_steady_rate_is_the_bound(
    bound: int, chunks_per_second: int, pause_ms: int, samples: int
) -> None:
    rate = _simulate(bound, bound // chunks_per_second, pause_ms, 75, samples)
    assert rate == pytest.approx(bound, rel=0.1)


def test_window_configs_have_kafkas_defaults_and_validators() -> None:
    config = BrokerConfig({})
    assert config.replication_quota_window_num == 11
    assert config.replication_quota_window_size_seconds == 1
    assert config.leader_replication_throttled_rate == UNBOUNDED
    assert config.follower_replication_throttled_rate == UNBOUNDED
    for key in ("replication.quota.window.num", "replication.quota.window.size.seconds"):
        with pytest.raises(ConfigError):
            BrokerConfig({key: 0})
    with pytest.raises(ConfigError):
        BrokerConfig({"leader.replication.throttled.rate": -1})


# -- the replica manager's wiring --------------------------------------------------------


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[ReplicaManager]:
    static = BrokerConfig({"log.dirs": str(tmp_path / "logs"), "replication.quota.window.num": 3})
    config = static.with_dynamic({"leader.replication.throttled.rate": "1000"})
    (tmp_path / "meta").mkdir()
    store = EmbeddedMetadataStore(tmp_path / "meta", 1)
    logs = LogManager(broker_config=config, cluster_id=store.cluster_id, node_id=1, progress=None)
    logs.startup()
    cache = MetadataCache(controller_id=1)
    manager = ReplicaManager(lambda: config, logs, store, cache, 1)
    store.add_listener(manager)
    cache.follow(store, ("1", "default"))
    try:
        yield manager
    finally:
        logs.shutdown()


def test_replica_manager_quotas_follow_the_configs(replicas: ReplicaManager) -> None:
    leader, follower = replicas.leader_quota, replicas.follower_quota
    assert leader.upper_bound == 1000
    assert follower.upper_bound == UNBOUNDED
    assert leader._rate.samples == 3 and leader._rate.window_ms == 1000
    replicas.reconfigure(replicas.config.with_dynamic({"follower.replication.throttled.rate": 5}))
    assert leader.upper_bound == UNBOUNDED and follower.upper_bound == 5
    replicas.on_topic_configs_changed(
        "t",
        {
            "leader.replication.throttled.replicas": "0:1,1:2",
            "follower.replication.throttled.replicas": "*",
        },
    )
    assert leader.is_throttled("t", 0) and not leader.is_throttled("t", 1)
    assert follower.is_throttled("t", 9)
    replicas.on_topic_configs_changed("t", {})
    assert not leader.is_throttled("t", 0) and not follower.is_throttled("t", 9)


def test_broker_config_notifications_reload_this_brokers_configs(tmp_path: Path) -> None:
    """Kafka's BrokerConfigHandler: a change of this broker's dynamic configs in the store
    (its id or the default, by another broker or a tool) is put in force; another
    broker's is not."""
    store = EmbeddedMetadataStore(tmp_path, 1)
    configs = BrokerConfigHolder(BrokerConfig({"log.dirs": str(tmp_path / "logs")}))
    seen: list[tuple[int, int]] = []
    configs.add_listener(
        lambda c: seen.append(
            (c.leader_replication_throttled_rate, c.follower_replication_throttled_rate)
        )
    )
    store.add_listener(BrokerConfigHandler(store, configs, 1))
    store.set_broker_configs("2", {"leader.replication.throttled.rate": "1"})
    assert seen == []
    store.set_broker_configs("1", {"leader.replication.throttled.rate": "7"})
    store.set_broker_configs("default", {"follower.replication.throttled.rate": "9"})
    assert seen == [(7, UNBOUNDED), (7, 9)]
    assert configs.current.leader_replication_throttled_rate == 7


def test_leader_throttles_only_followers_out_of_the_isr(replicas: ReplicaManager) -> None:
    replicas.create_topic("t", 1)
    partition = replicas.partition("t", 0)
    assert partition is not None and partition.isr == {1}
    replicas.on_topic_configs_changed("t", {"leader.replication.throttled.replicas": "0:1"})
    replicas.leader_quota.record(10_000)  # far above 1000 B/s
    assert replicas.should_leader_throttle(partition, 2)
    assert not replicas.should_leader_throttle(partition, 1)  # in the ISR
    replicas.on_topic_configs_changed("t", {"leader.replication.throttled.replicas": "0:2"})
    assert not replicas.should_leader_throttle(partition, 2)  # not throttled on broker 1
    replicas.on_topic_configs_changed("t", {"leader.replication.throttled.replicas": "*"})
    replicas.reconfigure(replicas.config.with_dynamic({}))  # the rate back to unbounded
    assert not replicas.should_leader_throttle(partition, 2)
