"""Finalized features in a ZooKeeper-mode cluster of three kafkacore brokers: ``/feature``
as Kafka 3.9 keeps it (created enabled and empty by the controller, so that a Kafka 3.9
broker, which supports no feature, can join; the znode version is the features epoch),
UpdateFeatures decided by the active controller against every live broker's registered
features and written there, and every broker's ApiVersions following the znode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cluster.conftest import new_cluster
from kafkacore.features import zookeeper_supported_features
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from support.cluster import Cluster, wait_until
from support.raw_brokers import Raw
from support.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.timeout(300)

_UPDATE = APIS_BY_NAME["UpdateFeatures"].request.cls


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    c = new_cluster(zookeeper, Path(tmp_path_factory.mktemp("features")))
    try:
        yield c.start()
    finally:
        c.stop()


def feature_znode(cluster: Cluster) -> tuple[dict[str, Any], int]:
    data, stat = cluster.zk.get("/feature")
    return json.loads(data), stat.version


def finalized(cluster: Cluster, node: int) -> tuple[dict[str, int], int]:
    r = Raw(cluster.brokers[node].port).call(
        "ApiVersions", 4, client_software_name="t", client_software_version="1"
    )
    return {f.name: f.max_version_level for f in r.finalized_features}, r.finalized_features_epoch


def update(cluster: Cluster, node: int, name: str, level: int, kind: int = 1) -> Any:
    key = _UPDATE.FeatureUpdateKey(feature=name, max_version_level=level, upgrade_type=kind)
    return Raw(cluster.brokers[node].port).call(
        "UpdateFeatures", 1, timeout_ms=30_000, feature_updates=[key], validate_only=False
    )


def test_a_new_cluster_has_kafka_39s_empty_feature_znode(cluster: Cluster) -> None:
    node, version = feature_znode(cluster)
    assert node == {"features": {}, "version": 2, "status": 1}
    for broker in cluster.brokers:
        assert finalized(cluster, broker) == ({}, version)
        registration = json.loads(cluster.zk.get(f"/brokers/ids/{broker}")[0])
        assert registration["features"] == {
            name: {"min_version": r.min, "max_version": r.max}
            for name, r in zookeeper_supported_features().items()
        }


def test_the_controller_finalizes_and_every_broker_follows(cluster: Cluster) -> None:
    controller = cluster.controller_id()
    assert controller is not None
    other = next(b for b in cluster.brokers if b != controller)
    refused = update(cluster, other, "transaction.version", 2)
    assert refused.error_code == ErrorCode.NOT_CONTROLLER
    done = update(cluster, controller, "transaction.version", 2)
    assert (done.error_code, [r.error_code for r in done.results]) == (0, [0])
    node, version = feature_znode(cluster)
    assert node == {
        "features": {"transaction.version": {"max_version_level": 2}},
        "version": 2,
        "status": 1,
    }
    for broker in cluster.brokers:
        wait_until(
            lambda b=broker: finalized(cluster, b) == ({"transaction.version": 2}, version),
            30,
            f"broker {broker} to follow /feature",
        )
    down = update(cluster, controller, "transaction.version", 1, kind=2)
    assert down.error_code == ErrorCode.NONE
    assert feature_znode(cluster)[0]["features"] == {
        "transaction.version": {"max_version_level": 1}
    }
    wait_until(lambda: finalized(cluster, other)[0] == {"transaction.version": 1}, 30, "TV1")


def test_kraft_features_are_not_zookeeper_modes(cluster: Cluster) -> None:
    controller = cluster.controller_id()
    assert controller is not None
    refused = update(cluster, controller, "metadata.version", 30)
    assert refused.error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert refused.error_message == (
        "The update failed for all features since the following feature had an error: "
        "Invalid update version 30 for feature metadata.version. "
        f"Local controller {controller} does not support this feature."
    )
