"""kafkacore's finalized-feature table (kafkacore.metadata.versions) against Apache
Kafka 4.3.1's ``MetadataVersion`` and ``Feature`` (java/KRaftFeatures.java): every
metadata.version level with what it selects, every production feature with its levels,
bootstrap metadata.versions, dependencies, latest levels and default level per
metadata.version."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kafkacore.metadata.versions import (
    FEATURES,
    METADATA_VERSIONS,
    PRODUCTION_FEATURES,
)

pytestmark = [pytest.mark.interop, pytest.mark.downloads]


@pytest.fixture(scope="module")
def kafka_rows(java: Any) -> list[dict[str, Any]]:
    out = java.run("KRaftFeatures").check().stdout.decode()
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_metadata_versions_are_kafkas(kafka_rows: list[dict[str, Any]]) -> None:
    kafka = {row["mv"]: row for row in kafka_rows if "mv" in row}
    assert sorted(kafka) == sorted(METADATA_VERSIONS)
    for level, mv in METADATA_VERSIONS.items():
        ours = {
            "mv": mv.level,
            "version": mv.version,
            "release": mv.release,
            "didMetadataChange": mv.did_metadata_change,
            "production": mv.production,
            "scram": mv.is_scram_supported,
            "epochBumpOnIsrShrink": mv.is_leader_epoch_bump_required_on_isr_shrink,
            "metadataTransactions": mv.is_metadata_transaction_supported,
            "delegationTokens": mv.is_delegation_token_supported,
            "controllerRegistration": mv.is_controller_registration_supported,
            "directoryAssignment": mv.is_directory_assignment_supported,
            "elr": mv.is_elr_supported,
            "cordonedLogDirs": mv.is_cordoned_log_dirs_supported,
            "registerBrokerRecordVersion": mv.register_broker_record_version,
            "partitionRecordVersion": mv.partition_record_version,
            "partitionChangeRecordVersion": mv.partition_change_record_version,
            "fetchRequestVersion": mv.fetch_request_version,
            "listOffsetRequestVersion": mv.list_offset_request_version,
        }
        assert ours == kafka[level]


def test_features_are_kafkas(kafka_rows: list[dict[str, Any]]) -> None:
    kafka = {row["feature"]: row for row in kafka_rows if "feature" in row}
    assert list(kafka) == list(PRODUCTION_FEATURES)
    for name, feature in FEATURES.items():
        row = kafka[name]
        levels = [
            [v.level, v.bootstrap_metadata_version, dict(v.dependencies)] for v in feature.levels
        ]
        assert levels == row["levels"]
        assert (feature.latest_production, feature.latest_testing) == (
            row["latestProduction"],
            row["latestTesting"],
        )
        defaults = {
            str(level): feature.default_level(mv) for level, mv in METADATA_VERSIONS.items()
        }
        assert defaults == row["defaults"]
