"""Finalized features (:mod:`kafkacore.features`): the tables and Kafka's rules for
changing them. Expected values are what Kafka 4.3.1 answers (its ``kafka-features`` tool
against a node, and ``version-mapping``); every rule is also compared with a Kafka 4.3.1
controller over drawn requests in ``interop/test_features_vs_kafka.py``."""

from __future__ import annotations

import pytest

from kafkacore.features import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    FEATURES,
    GROUP_VERSION,
    KRAFT_VERSION,
    LATEST_PRODUCTION,
    METADATA_VERSION,
    TRANSACTION_VERSION,
    FeatureUpdate,
    FeatureUpdateError,
    FinalizedFeatures,
    QuorumSupport,
    UpgradeType,
    VersionRange,
    default_feature_levels,
    metadata_version,
    metadata_version_from_string,
    new_cluster_features,
    supported_features,
    update_features,
)

SUPPORTED = supported_features()
ONE_NODE = QuorumSupport(1, SUPPORTED, {1: SUPPORTED}, {1: SUPPORTED}, (1,))


def new_cluster() -> FinalizedFeatures:
    return new_cluster_features()


def refused(updates: list[FeatureUpdate], current: FinalizedFeatures | None = None) -> str:
    with pytest.raises(FeatureUpdateError) as info:
        update_features(current or new_cluster(), updates, ONE_NODE)
    assert info.value.code == 95  # INVALID_UPDATE_VERSION
    return info.value.message


def test_version_mapping_of_43_is_kafkas() -> None:
    # kafka-features version-mapping (Kafka 4.3.1, no --release-version)
    assert default_feature_levels() == {
        METADATA_VERSION: 30,
        KRAFT_VERSION: 1,
        TRANSACTION_VERSION: 2,
        GROUP_VERSION: 1,
        ELIGIBLE_LEADER_REPLICAS_VERSION: 1,
        "share.version": 1,
        "streams.version": 1,
    }
    assert LATEST_PRODUCTION.version == "4.3-IV0"


def test_version_mapping_of_older_releases() -> None:
    assert default_feature_levels(metadata_version_from_string("3.9")) == {
        METADATA_VERSION: 21,
        KRAFT_VERSION: 1,
        TRANSACTION_VERSION: 0,
        GROUP_VERSION: 0,
        ELIGIBLE_LEADER_REPLICAS_VERSION: 0,
        "share.version": 0,
        "streams.version": 0,
    }
    assert default_feature_levels(metadata_version(7))[KRAFT_VERSION] == 0
    assert default_feature_levels(metadata_version_from_string("4.0-IV2"))[TRANSACTION_VERSION] == 2
    with pytest.raises(ValueError, match=r"Unknown metadata\.version '9\.9'\. Supported"):
        metadata_version_from_string("9.9")


def test_supported_ranges_are_a_431_brokers() -> None:
    assert {
        METADATA_VERSION: VersionRange(7, 30),
        KRAFT_VERSION: VersionRange(0, 1),
        TRANSACTION_VERSION: VersionRange(0, 2),
        GROUP_VERSION: VersionRange(0, 1),
        ELIGIBLE_LEADER_REPLICAS_VERSION: VersionRange(0, 1),
        "share.version": VersionRange(0, 1),
        "streams.version": VersionRange(0, 1),
    } == SUPPORTED
    assert supported_features(unstable=True)[METADATA_VERSION] == VersionRange(7, 31)
    assert list(FEATURES) == [
        KRAFT_VERSION,
        TRANSACTION_VERSION,
        GROUP_VERSION,
        ELIGIBLE_LEADER_REPLICAS_VERSION,
        "share.version",
        "streams.version",
    ]


def test_upgrade_downgrade_and_disable() -> None:
    current = new_cluster()
    down = update_features(
        current, [FeatureUpdate(TRANSACTION_VERSION, 1, UpgradeType.SAFE_DOWNGRADE)], ONE_NODE
    )
    assert down == {TRANSACTION_VERSION: 1}
    after = current.with_levels(down)
    assert after.transaction_version == 1 and after.epoch == current.epoch + 1
    up = update_features(after, [FeatureUpdate(TRANSACTION_VERSION, 2)], ONE_NODE)
    assert after.with_levels(up).transaction_version == 2
    disabled = after.with_levels({GROUP_VERSION: 0})
    assert GROUP_VERSION not in disabled.levels and disabled.group_version == 0
    # an upgrade to the level in force is accepted (Kafka's "can be upgraded to 1")
    assert update_features(current, [FeatureUpdate(GROUP_VERSION, 1)], ONE_NODE)


def test_refusals_carry_kafkas_messages() -> None:
    assert refused([FeatureUpdate(TRANSACTION_VERSION, 3)]) == (
        "Invalid update version 3 for feature transaction.version. "
        "Local controller 1 only supports versions 0-2"
    )
    assert refused([FeatureUpdate(TRANSACTION_VERSION, 1)]) == (
        "Invalid update version 1 for feature transaction.version. Can't downgrade the version "
        "of this feature without setting the upgrade type to either safe or unsafe downgrade."
    )
    assert refused([FeatureUpdate("foo.bar", 1)]) == (
        "Invalid update version 1 for feature foo.bar. "
        "Local controller 1 does not support this feature."
    )
    assert refused([FeatureUpdate(METADATA_VERSION, 29, UpgradeType.SAFE_DOWNGRADE)]) == (
        "Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the "
        "requested downgrade because it might delete metadata information."
    )
    assert refused([FeatureUpdate(METADATA_VERSION, 29, UpgradeType.UNSAFE_DOWNGRADE)]) == (
        "Unsupported metadata.version downgrade from 30 to 29. "
        "Unsafe metadata downgrade is not supported in this version."
    )
    assert refused([FeatureUpdate(KRAFT_VERSION, 0, UpgradeType.SAFE_DOWNGRADE)]) == (
        "Invalid update version 0 for feature kraft.version. "
        "Can't downgrade the version of this feature."
    )
    assert refused([FeatureUpdate(GROUP_VERSION, -1, UpgradeType.SAFE_DOWNGRADE)]) == (
        "Invalid update version -1 for feature group.version. "
        "A feature version cannot be less than 0."
    )
    assert refused([FeatureUpdate("foo.bar", 0, UpgradeType.SAFE_DOWNGRADE)]) == (
        "Invalid update version 0 for feature foo.bar. Feature foo.bar not found."
    )
    assert refused([FeatureUpdate(GROUP_VERSION, 1, UpgradeType.UNKNOWN)]) == (
        "Invalid update version 1 for feature group.version. "
        "The controller does not support the given upgrade type."
    )


def test_a_broker_that_lacks_the_level_refuses_it() -> None:
    old = {**SUPPORTED, TRANSACTION_VERSION: VersionRange(0, 1)}
    support = QuorumSupport(1, SUPPORTED, {1: SUPPORTED, 2: old, 3: {}}, {}, ())
    current = new_cluster().with_levels({TRANSACTION_VERSION: 0})
    with pytest.raises(FeatureUpdateError, match=r"Broker 2 only supports versions 0-1$"):
        update_features(current, [FeatureUpdate(TRANSACTION_VERSION, 2)], support)
    with pytest.raises(FeatureUpdateError, match=r"Broker 3 does not support this feature\.$"):
        update_features(current, [FeatureUpdate(TRANSACTION_VERSION, 1)], support)
    unregistered = QuorumSupport(1, SUPPORTED, {1: SUPPORTED}, {1: SUPPORTED}, (1, 2))
    with pytest.raises(FeatureUpdateError, match="controller 2 has not registered"):
        update_features(current, [FeatureUpdate(TRANSACTION_VERSION, 1)], unregistered)


def test_dependencies_are_checked_against_the_proposed_levels() -> None:
    at_40 = FinalizedFeatures({METADATA_VERSION: 22}, 5)
    with pytest.raises(FeatureUpdateError) as info:
        update_features(at_40, [FeatureUpdate(ELIGIBLE_LEADER_REPLICAS_VERSION, 1)], ONE_NODE)
    assert info.value.message == (
        "Invalid update version 1 for feature eligible.leader.replicas.version. "
        "eligible.leader.replicas.version could not be set to 1 because it depends on "
        "metadata.version level 23"
    )
    both = [FeatureUpdate(ELIGIBLE_LEADER_REPLICAS_VERSION, 1), FeatureUpdate(METADATA_VERSION, 23)]
    assert update_features(at_40, both, ONE_NODE) == {
        ELIGIBLE_LEADER_REPLICAS_VERSION: 1,
        METADATA_VERSION: 23,
    }


def test_features_in_a_431_brokers_apiversions_order() -> None:
    # what a Kafka 4.3.1 node formatted with static voters (kraft.version 0) lists
    assert [n for n, _ in new_cluster().with_levels({KRAFT_VERSION: 0}).in_kafka_order()] == [
        GROUP_VERSION,
        "streams.version",
        TRANSACTION_VERSION,
        ELIGIBLE_LEADER_REPLICAS_VERSION,
        "share.version",
        METADATA_VERSION,
    ]
    # and with kraft.version 1
    assert [n for n, _ in new_cluster().in_kafka_order()] == [
        GROUP_VERSION,
        KRAFT_VERSION,
        "share.version",
        METADATA_VERSION,
        "streams.version",
        TRANSACTION_VERSION,
        ELIGIBLE_LEADER_REPLICAS_VERSION,
    ]
