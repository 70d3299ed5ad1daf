"""UpdateFeatures v0-2 (KIP-584; the finalized features ApiVersions reports).

ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED. The updates are checked with
Kafka 4.3.1's rules (:func:`kafkacore.features.update_features`: every feature or none;
INVALID_UPDATE_VERSION and "The update failed for all features since the following
feature had an error: ..."), then written, unless ``ValidateOnly`` (v1+). v0's
``AllowDowngrade`` means SAFE_DOWNGRADE. The answer is Kafka's ``QuorumController``'s:
the top-level error and message, and for v0-1 on success one result per feature.

Who decides: a single node itself, against its store (it is the only broker and the
controller); in a ZooKeeper cluster the active controller, which writes ``/feature``
(:meth:`~kafkacore.controller.KafkaController.update_features`); another broker answers
NOT_CONTROLLER and the client asks the controller.
"""

from __future__ import annotations

from kafkacore.features import FeatureUpdateError, requested_updates
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.errors import message as default_message
from kafkacore.protocol.messages.update_features import (
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.feature_control import update_single_node
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_update_features", "update_features_response"]


def update_features_response(
    code: int, message: str | None, request: UpdateFeaturesRequest, version: int
) -> UpdateFeaturesResponse:
    """The answer, broker or KRaft controller (Kafka's ``UpdateFeaturesResponse``): the
    top-level error and message; for v0-1 on success one result per feature."""
    results = []
    if code == ErrorCode.NONE and version <= 1:
        results = [
            UpdateFeaturesResponse.UpdatableFeatureResult(
                feature=key.feature, error_code=0, error_message=ErrorCode.NONE.name
            )
            for key in request.feature_updates
        ]
    return UpdateFeaturesResponse(
        throttle_time_ms=0, error_code=code, error_message=message, results=results
    )


async def handle_update_features(
    services: BrokerServices, context: RequestContext, request: UpdateFeaturesRequest
) -> UpdateFeaturesResponse:
    version = context.api_version
    if not authz.authorize_cluster(services, context, AclOperation.ALTER):
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return update_features_response(code, default_message(code), request, version)
    updates = requested_updates(request, version)
    validate_only = version >= 1 and bool(request.validate_only)
    try:
        if services.controller is not None:
            controller = services.active_controller
            if controller is None:
                code = ErrorCode.NOT_CONTROLLER
                return update_features_response(code, default_message(code), request, version)
            await controller.update_features(updates, validate_only)
        else:
            await services.run_io(
                update_single_node,
                services.metadata_store,
                services.node_id,
                services.supported_features,
                updates,
                validate_only,
            )
    except FeatureUpdateError as exc:
        if exc.code != ErrorCode.INVALID_UPDATE_VERSION:  # NOT_CONTROLLER, after a move
            return update_features_response(exc.code, default_message(exc.code), request, version)
        return update_features_response(exc.code, exc.response_message, request, version)
    return update_features_response(ErrorCode.NONE, None, request, version)
