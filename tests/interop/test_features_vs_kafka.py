"""``kafkacore.features`` against Kafka 4.3.1's own classes (``java/Features.java``): every
metadata.version, every production feature with its levels, bootstrap versions and
dependencies, the supported ranges of a node and each feature's default level at every
metadata.version (what ``kafka-features version-mapping`` prints)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from interop.conftest import Java
from kafkacore.features import (
    FEATURES,
    LATEST_PRODUCTION,
    LATEST_TESTING,
    METADATA_VERSIONS,
    MINIMUM_VERSION,
    supported_features,
)

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def kafka(java: Java) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(java.run("Features").check().stdout)
    return result


def test_metadata_versions(kafka: dict[str, Any]) -> None:
    ours = [
        {
            "level": mv.level,
            "version": mv.version,
            "changed": mv.did_metadata_change,
            "release": mv.release,
            "controller_registration": mv.is_controller_registration_supported,
        }
        for mv in METADATA_VERSIONS.values()
    ]
    assert ours == kafka["metadata_versions"]
    assert (MINIMUM_VERSION.level, LATEST_PRODUCTION.level, LATEST_TESTING.level) == (
        kafka["minimum"],
        kafka["latest_production"],
        kafka["latest_testing"],
    )


def test_features_levels_and_defaults(kafka: dict[str, Any]) -> None:
    ours = [
        {
            "name": f.name,
            "latest_production": f.latest_production,
            "latest_testing": f.latest_testing,
            "minimum_production": f.minimum_production,
            "levels": [
                {
                    "level": level.level,
                    "bootstrap": level.bootstrap_metadata_version,
                    "dependencies": dict(level.dependencies),
                }
                for level in f.levels
            ],
            "defaults": {str(mv.level): f.default_level(mv) for mv in METADATA_VERSIONS.values()},
        }
        for f in FEATURES.values()
    ]
    assert ours == kafka["features"]


@pytest.mark.parametrize("unstable", [False, True])
def test_supported_ranges(kafka: dict[str, Any], unstable: bool) -> None:
    ours = {name: [r.min, r.max] for name, r in supported_features(unstable).items()}
    assert ours == kafka["supported_unstable" if unstable else "supported"]
