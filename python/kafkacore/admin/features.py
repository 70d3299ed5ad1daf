"""Finalized features through an admin client (Kafka's ``Admin.describeFeatures`` and
``Admin.updateFeatures``), as ``kafka-features`` uses them.

* :func:`describe_features`: ApiVersions v4 to one broker (the first bootstrap server,
  or ``node_id``): what it supports, what is finalized and the features epoch.
* :func:`update_features`: UpdateFeatures v2 to the controller (again after
  NOT_CONTROLLER); the outcome per feature as Kafka's admin client reports it - a
  top-level error fails every feature with the broker's message.

Thread-safety: the functions block; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkacore._java import JavaHashMap
from kafkacore.admin.client import TIMEOUT, Admin, AdminError
from kafkacore.admin.cluster import controller_call, error_message, metadata
from kafkacore.features import FeatureUpdate, VersionRange
from kafkacore.protocol import APIS_BY_NAME, ErrorCode

__all__ = ["FeatureMetadata", "describe_features", "update_features"]

_UPDATE_VERSION = 2


@dataclass(frozen=True)
class FeatureMetadata:
    """Kafka's ``FeatureMetadata``: supported ranges and finalized levels by name, and
    the epoch (None when the broker knows none)."""

    supported: dict[str, VersionRange]
    finalized: dict[str, int]
    epoch: int | None


def describe_features(
    admin: Admin, bootstrap: tuple[str, int], node_id: int | None = None
) -> FeatureMetadata:
    """ApiVersions v4 to ``bootstrap``, or to broker ``node_id`` (found in the
    metadata; :class:`AdminError` when unknown)."""
    host, port = bootstrap
    if node_id is not None:
        broker = metadata(admin).brokers.get(node_id)
        if broker is None:
            raise AdminError(f"No node with id {node_id} found in the cluster metadata.")
        host, port = broker.host, broker.port
    request = APIS_BY_NAME["ApiVersions"].request.cls(
        client_software_name="kafkacore", client_software_version="1"
    )
    try:
        response = admin.send(host, port, "ApiVersions", 4, request)
    except OSError as exc:
        raise AdminError(f"org.apache.kafka.common.errors.TimeoutException: {exc}") from None
    if response.error_code != ErrorCode.NONE:
        raise AdminError(error_message(response.error_code, None))
    epoch = response.finalized_features_epoch
    return FeatureMetadata(
        {f.name: VersionRange(f.min_version, f.max_version) for f in response.supported_features},
        {f.name: f.max_version_level for f in response.finalized_features},
        None if epoch < 0 else epoch,
    )


def update_features(
    admin: Admin, updates: Mapping[str, FeatureUpdate], validate_only: bool
) -> dict[str, str | None]:
    """UpdateFeatures to the controller: per feature None (done, or would be) or the
    message its failure carries. The request lists the features in the order of a
    ``java.util.HashMap`` of them, as Kafka's tool sends them."""
    cls: Any = APIS_BY_NAME["UpdateFeatures"].request.cls
    ordered: JavaHashMap[str, FeatureUpdate] = JavaHashMap()
    for name, update in updates.items():
        ordered[name] = update
    request = cls(
        timeout_ms=int(TIMEOUT * 1000),
        feature_updates=[
            cls.FeatureUpdateKey(
                feature=name,
                max_version_level=u.level,
                allow_downgrade=u.upgrade_type != 1,
                upgrade_type=int(u.upgrade_type),
            )
            for name, u in ordered.items()
        ],
        validate_only=validate_only,
    )
    response = controller_call(admin, "UpdateFeatures", request, version=_UPDATE_VERSION)
    if response.error_code != ErrorCode.NONE:
        message = error_message(response.error_code, response.error_message)
        return dict.fromkeys(updates, message)
    failed = {
        r.feature: error_message(r.error_code, r.error_message)
        for r in response.results
        if r.error_code != ErrorCode.NONE
    }
    return {name: failed.get(name) for name in updates}
