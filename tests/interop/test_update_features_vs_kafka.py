"""Finalized features answered by kafkacore and by a real Apache Kafka 4.3.1 node for the
same raw requests, compared field by field: ApiVersions v3 and v4 (supported features,
finalized features, in Kafka's order; v3 without the supported features whose minimum is
0, KAFKA-17011), and UpdateFeatures v1/v2.

Both start as new clusters at Kafka 4.3.1's defaults (Kafka formatted ``--standalone``,
kraft.version 1), but for what kafkacore does not run yet
(:data:`kafkacore.features.NOT_YET_RUN`: transaction.version 2, which Kafka is formatted
without): kafkacore's supported ranges are Kafka's cut to those levels, and the drawn
requests stay within them. Hypothesis draws UpdateFeatures requests - known and unknown features,
levels around each feature's range, every upgrade type - sent with ``ValidateOnly`` so
neither broker changes: every answer (error code, message, per-feature results) must be
equal. Then one sequence of real changes (downgrades, a disable, upgrades back) runs on
both, compared after each step with ApiVersions' finalized features (in Kafka's order,
which a disable and re-enable changes) and with the error a KIP-848 ConsumerGroupHeartbeat
gets (UNSUPPORTED_VERSION while group.version is 0); each change raises the features
epoch on both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore.features import FEATURES, METADATA_VERSION, NOT_YET_RUN, UpgradeType, runnable_level
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from support.brokers import Broker
from support.raw_brokers import KafkaNode, Raw, until

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

_UPDATE = APIS_BY_NAME["UpdateFeatures"].request.cls


@pytest.fixture(scope="module")
def kafka(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    node = KafkaNode(
        kafka_libs,
        tmp_path_factory.mktemp("kafka"),
        standalone=True,
        format_args=[arg for n, v in NOT_YET_RUN.items() for arg in ("--feature", f"{n}={v}")],
    ).start()
    try:
        yield Raw(node.port)
    finally:
        node.stop()


@pytest.fixture(scope="module")
def kafkacore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    data = tmp_path_factory.mktemp("kafkacore") / "data"
    broker = Broker(data).start()
    try:
        yield Raw(broker.port)
    finally:
        broker.stop()


def features_of(raw: Raw, version: int) -> dict[str, Any]:
    r = raw.call("ApiVersions", version, client_software_name="t", client_software_version="1")
    return {
        "supported": [(f.name, f.min_version, f.max_version) for f in r.supported_features],
        "finalized": [
            (f.name, f.min_version_level, f.max_version_level) for f in r.finalized_features
        ],
        "epoch": r.finalized_features_epoch,
    }


@pytest.mark.parametrize("version", [3, 4])
def test_api_versions_features(kafka: Raw, kafkacore: Raw, version: int) -> None:
    theirs, ours = features_of(kafka, version), features_of(kafkacore, version)
    assert ours["supported"] == [
        (name, low, runnable_level(name, high)) for name, low, high in theirs["supported"]
    ]
    assert ours["finalized"] == theirs["finalized"]
    assert ours["epoch"] >= 0 and theirs["epoch"] >= 0
    if version == 3:
        assert [name for name, _, _ in ours["supported"]] == [METADATA_VERSION]


def answer(raw: Raw, version: int, updates: list[tuple[str, int, int]], validate: bool) -> Any:
    keys = [
        _UPDATE.FeatureUpdateKey(
            feature=name, max_version_level=level, upgrade_type=kind, allow_downgrade=kind != 1
        )
        for name, level, kind in updates
    ]
    r = raw.call(
        "UpdateFeatures", version, timeout_ms=30_000, feature_updates=keys, validate_only=validate
    )
    return (
        r.error_code,
        r.error_message,
        [(x.feature, x.error_code, x.error_message) for x in r.results],
    )


_NAMES = [METADATA_VERSION, *FEATURES, "foo.bar", ""]
_LEVELS = st.one_of(st.integers(-1, 3), st.integers(5, 32))
_UPDATES = st.lists(
    st.tuples(st.sampled_from(_NAMES), _LEVELS, st.sampled_from([0, 1, 2, 3, 4])),
    min_size=1,
    max_size=3,
    unique_by=lambda u: u[0],
).filter(lambda updates: all(level <= runnable_level(name, level) for name, level, _ in updates))


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(version=st.sampled_from([1, 2]), updates=_UPDATES)
def test_validate_only_updates_are_judged_alike(
    kafka: Raw, kafkacore: Raw, version: int, updates: list[tuple[str, int, int]]
) -> None:
    theirs = answer(kafka, version, updates, validate=True)
    ours = answer(kafkacore, version, updates, validate=True)
    assert ours == theirs, updates


def heartbeat_error(raw: Raw) -> int:
    """A new member's first ConsumerGroupHeartbeat (KIP-848), again while the group's
    coordinator is not ready (the offsets topic created and loaded): its error code."""

    def attempt() -> int | None:
        if raw.call("FindCoordinator", 1, key="g", key_type=0).error_code != 0:
            return None  # a first FindCoordinator creates __consumer_offsets
        r = raw.call(
            "ConsumerGroupHeartbeat",
            0,
            group_id="g",
            member_id="",
            member_epoch=0,
            rebalance_timeout_ms=30_000,
            subscribed_topic_names=["t"],
            topic_partitions=[],
        )
        code = int(r.error_code)
        not_ready = (
            ErrorCode.NOT_COORDINATOR,
            ErrorCode.COORDINATOR_NOT_AVAILABLE,
            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        )
        return None if code in not_ready else code + 1  # + 1: NONE is truthy

    result: int = until("the group coordinator", attempt) - 1
    return result


STEPS: list[tuple[int, list[tuple[str, int, int]]]] = [
    (2, [("transaction.version", 1, UpgradeType.SAFE_DOWNGRADE)]),
    (1, [("transaction.version", 0, UpgradeType.SAFE_DOWNGRADE), ("group.version", 0, 2)]),
    (0, [("transaction.version", 1, UpgradeType.UPGRADE)]),
    (1, [("group.version", 1, UpgradeType.UPGRADE), ("share.version", 0, 3)]),
    (2, [("share.version", 1, UpgradeType.UPGRADE), ("metadata.version", 29, 2)]),
    (1, [("share.version", 1, UpgradeType.UPGRADE)]),
]


def test_changes_apply_alike(kafka: Raw, kafkacore: Raw) -> None:
    epochs = {"kafka": features_of(kafka, 4)["epoch"], "ours": features_of(kafkacore, 4)["epoch"]}
    for version, updates in STEPS:
        theirs = answer(kafka, version, updates, validate=False)
        ours = answer(kafkacore, version, updates, validate=False)
        assert ours == theirs, updates
        kafka_now, ours_now = features_of(kafka, 4), features_of(kafkacore, 4)
        assert ours_now["finalized"] == kafka_now["finalized"], updates
        if theirs[0] == 0:
            assert kafka_now["epoch"] > epochs["kafka"] and ours_now["epoch"] > epochs["ours"]
        assert heartbeat_error(kafkacore) == heartbeat_error(kafka), updates
        epochs = {"kafka": kafka_now["epoch"], "ours": ours_now["epoch"]}
