"""The KRaft controller listener's request processor (Kafka's ``ControllerApis``): frame
in, outcome out, for the APIs of :data:`~kafkacore.protocol.api.CONTROLLER_APIS`.

* the quorum APIs (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot,
  DescribeQuorum, Add/Remove/UpdateRaftVoter) go to the Raft client
  (:meth:`RaftDriver.serve <kafkacore.raft.driver.RaftDriver.serve>`);
* ApiVersions lists the controller's APIs with the supported features, and the
  finalized ones with their epoch (what ``kafka-features describe --bootstrap-controller``
  reads);
* DescribeCluster (KIP-919): the registered controllers, and the active one;
* the broker's RPCs (BrokerRegistration, BrokerHeartbeat, AlterPartition,
  AllocateProducerIds, AssignReplicasToDirs, UnregisterBroker), ControllerRegistration
  and the admin APIs go to the :class:`~kafkacore.controller.kraft.QuorumController`; a
  refusal is answered with Kafka's code in every error field of the API's response
  (Kafka's ``getErrorResponse``): NOT_CONTROLLER from a standby controller;
* Envelope (KIP-590): a request a broker forwards, answered as if its client had sent it
  here, its response wrapped back (an undecodable principal:
  PRINCIPAL_DESERIALIZATION_FAILURE; an API the controller does not serve:
  UNSUPPORTED_VERSION).

Errors are data (CONVENTIONS 14): a malformed request whose header could be read gets
INVALID_REQUEST in its response, an unknown API or an unreadable header closes the
connection, a handler failure is UNKNOWN_SERVER_ERROR; the controller keeps serving.
Authorization is not checked yet on this listener (Kafka checks CLUSTER_ACTION and the
admin operations when an authorizer is configured).

Thread-safety: event loop thread.
"""

from __future__ import annotations

import logging
import struct
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from kafkacore.controller.kraft import ApiError, ControllerError, QuorumController
from kafkacore.controller.kraft import events as ev
from kafkacore.controller.kraft.feature_control import (
    feature_update_requests,
    local_supported_features,
)
from kafkacore.controller.kraft.security_control import matching_acls
from kafkacore.metadata.versions import KRAFT_VERSION
from kafkacore.protocol.api import (
    API_VERSIONS,
    CONTROLLER_APIS,
    ApiKey,
    api_for,
    decode_request,
    encode_response,
    unsupported_api_versions_response,
)
from kafkacore.protocol.errors import (
    ErrorCode,
    ProtocolError,
    UnknownApiKey,
    UnsupportedVersion,
)
from kafkacore.protocol.errors import message as default_message
from kafkacore.protocol.headers import RequestHeader
from kafkacore.protocol.messages import envelope
from kafkacore.protocol.types import MalformedMessage
from kafkacore.raft.driver import RaftDriver
from kafkacore.security.acl import AclBinding, InvalidAclError
from kafkacore.server.handlers.acls import acl_binding_filter
from kafkacore.server.handlers.unimplemented import error_response
from kafkacore.server.network import CLOSE, ConnectionInfo, Outcome

__all__ = ["ControllerApis"]

logger = logging.getLogger("kafkacore.controller")

_RAFT_APIS = frozenset(
    {
        ApiKey.VOTE,
        ApiKey.BEGIN_QUORUM_EPOCH,
        ApiKey.END_QUORUM_EPOCH,
        ApiKey.FETCH,
        ApiKey.FETCH_SNAPSHOT,
        ApiKey.DESCRIBE_QUORUM,
        ApiKey.ADD_RAFT_VOTER,
        ApiKey.REMOVE_RAFT_VOTER,
        ApiKey.UPDATE_RAFT_VOTER,
    }
)
_FORWARDABLE = frozenset(
    {
        ApiKey.CREATE_TOPICS,
        ApiKey.DELETE_TOPICS,
        ApiKey.CREATE_PARTITIONS,
        ApiKey.CREATE_ACLS,
        ApiKey.DELETE_ACLS,
        ApiKey.ALTER_CONFIGS,
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        ApiKey.ELECT_LEADERS,
        ApiKey.ALTER_PARTITION_REASSIGNMENTS,
        ApiKey.LIST_PARTITION_REASSIGNMENTS,
        ApiKey.ALTER_CLIENT_QUOTAS,
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
        ApiKey.UPDATE_FEATURES,
        ApiKey.UNREGISTER_BROKER,
        ApiKey.DESCRIBE_QUORUM,
        ApiKey.ADD_RAFT_VOTER,
        ApiKey.REMOVE_RAFT_VOTER,
    }
)
_PRINCIPAL: Any = envelope.PRINCIPAL  # DefaultPrincipalData
ZERO_UUID = uuid.UUID(int=0)


def _response_cls(key: int) -> Any:
    return api_for(key).response.cls


class ControllerApis:
    """Implements the transport's ``RequestProcessor`` for the controller listener."""

    def __init__(self, controller: QuorumController, raft: RaftDriver) -> None:
        self.controller = controller
        self.raft = raft
        self._handlers: dict[int, Callable[[RequestHeader, Any], Awaitable[Any]]] = {
            ApiKey.API_VERSIONS: self._api_versions,
            ApiKey.DESCRIBE_CLUSTER: self._describe_cluster,
            ApiKey.BROKER_REGISTRATION: self._broker_registration,
            ApiKey.BROKER_HEARTBEAT: self._broker_heartbeat,
            ApiKey.UNREGISTER_BROKER: self._unregister_broker,
            ApiKey.CONTROLLER_REGISTRATION: self._controller_registration,
            ApiKey.ALTER_PARTITION: self._alter_partition,
            ApiKey.ALLOCATE_PRODUCER_IDS: self._allocate_producer_ids,
            ApiKey.ASSIGN_REPLICAS_TO_DIRS: self._assign_replicas_to_dirs,
            ApiKey.CREATE_TOPICS: self._create_topics,
            ApiKey.DELETE_TOPICS: self._delete_topics,
            ApiKey.CREATE_PARTITIONS: self._create_partitions,
            ApiKey.ELECT_LEADERS: self._elect_leaders,
            ApiKey.ALTER_PARTITION_REASSIGNMENTS: self._alter_reassignments,
            ApiKey.LIST_PARTITION_REASSIGNMENTS: self._list_reassignments,
            ApiKey.ALTER_CONFIGS: self._alter_configs,
            ApiKey.INCREMENTAL_ALTER_CONFIGS: self._incremental_alter_configs,
            ApiKey.ALTER_CLIENT_QUOTAS: self._alter_client_quotas,
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS: self._alter_scram,
            ApiKey.CREATE_ACLS: self._create_acls,
            ApiKey.DELETE_ACLS: self._delete_acls,
            ApiKey.DESCRIBE_ACLS: self._describe_acls,
            ApiKey.UPDATE_FEATURES: self._update_features,
            ApiKey.ENVELOPE: self._envelope,
        }

    # -- the transport's RequestProcessor -----------------------------------------------------

    async def process(self, frame: bytes, connection: ConnectionInfo) -> Outcome:
        try:
            header, request = decode_request(frame, CONTROLLER_APIS)
        except ProtocolError as exc:
            return self._refuse(exc)
        response = await self.handle(header, request)
        return Outcome([encode_response(header, response)])

    async def handle(self, header: RequestHeader, request: Any) -> Any:
        """The response to one decoded request (never raises)."""
        key = header.api_key
        try:
            if key in _RAFT_APIS:
                return await self.raft.serve(key, header.api_version, request)
            handler = self._handlers.get(key)
            if handler is None:
                return error_response(key, ErrorCode.UNSUPPORTED_VERSION)
            return await handler(header, request)
        except ControllerError as exc:
            return _error_response(key, header.api_version, request, exc.code, exc.message)
        except Exception:
            logger.exception("Unexpected error handling %s", ApiKey(key).name)
            return _error_response(
                key, header.api_version, request, ErrorCode.UNKNOWN_SERVER_ERROR, None
            )

    def _refuse(self, exc: ProtocolError) -> Outcome:
        cid, key, version = exc.correlation_id, exc.api_key, exc.api_version
        logger.info("Refusing a controller request: %s", exc)
        if cid is None or key is None or version is None or isinstance(exc, UnknownApiKey):
            return CLOSE
        if key == ApiKey.API_VERSIONS and isinstance(exc, UnsupportedVersion):
            return Outcome([unsupported_api_versions_response(cid)])
        api = CONTROLLER_APIS.get(key)
        if api is None or not api.min_version <= version <= api.max_version:
            return CLOSE
        header = RequestHeader(key, version, cid, exc.client_id)
        try:
            return Outcome([encode_response(header, error_response(key, exc.error_code, str(exc)))])
        except Exception:
            return CLOSE

    # -- ApiVersions and DescribeCluster ---------------------------------------------------

    async def _api_versions(self, header: RequestHeader, request: Any) -> Any:
        cls: Any = API_VERSIONS.response.cls
        version = header.api_version
        keys = [
            cls.ApiVersion(
                api_key=api.key, min_version=api.min_version, max_version=api.max_version
            )
            for api in CONTROLLER_APIS.values()
        ]
        supported = local_supported_features()
        supported[KRAFT_VERSION] = self.raft.client.quorum.local_kraft_versions
        state = self.controller.committed
        finalized = state.image.features.all_levels()
        finalized[KRAFT_VERSION] = self.raft.client.control.last_kraft_version()
        return cls(
            error_code=0,
            api_keys=keys,
            throttle_time_ms=0,
            supported_features=[
                cls.SupportedFeatureKey(name=name, min_version=low, max_version=high)
                for name, (low, high) in sorted(supported.items())
                if version >= 4 or low != 0  # KAFKA-17011: v3 omits features whose min is 0
            ],
            finalized_features_epoch=state.offset if state.offset >= 0 else -1,
            finalized_features=[
                cls.FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
                for name, level in sorted(finalized.items())
                if level > 0
            ],
        )

    async def _describe_cluster(self, header: RequestHeader, request: Any) -> Any:
        """KIP-919: the controllers (EndpointType 2); brokers are not described here."""
        cls = _response_cls(ApiKey.DESCRIBE_CLUSTER)
        version = header.api_version
        endpoint_type = request.endpoint_type if version >= 1 else 1
        state = self.controller.committed
        mv = state.image.features.metadata_version
        if mv is None or not mv.is_controller_registration_supported:
            return cls(
                error_code=ErrorCode.UNSUPPORTED_VERSION,
                error_message="Direct-to-controller communication is not supported with the "
                "current MetadataVersion.",
                endpoint_type=endpoint_type,
                cluster_id=self.controller.cluster_id,
                brokers=[],
            )
        if endpoint_type != 2:
            return cls(
                error_code=ErrorCode.INVALID_REQUEST,
                error_message="The controller only supports EndpointType CONTROLLER",
                endpoint_type=endpoint_type,
                cluster_id=self.controller.cluster_id,
                brokers=[],
            )
        listener = self.raft.listener
        brokers = []
        for node_id, controller in sorted(state.image.cluster.controllers.items()):
            endpoint = next((e for e in controller.listeners if e.name == listener), None)
            if endpoint is None and controller.listeners:
                endpoint = controller.listeners[0]
            if endpoint is not None:
                brokers.append(
                    cls.DescribeClusterBroker(
                        broker_id=node_id, host=endpoint.host, port=endpoint.port, rack=None
                    )
                )
        leader = self.controller.active_controller_id
        return cls(
            throttle_time_ms=0,
            error_code=0,
            error_message=None,
            endpoint_type=2,
            cluster_id=self.controller.cluster_id,
            controller_id=-1 if leader is None else leader,
            brokers=brokers,
        )

    # -- the brokers' and controllers' RPCs -------------------------------------------------

    async def _broker_registration(self, header: RequestHeader, request: Any) -> Any:
        epoch = await self.controller.call(ev.RegisterBroker(request, header.api_version))
        cls = _response_cls(ApiKey.BROKER_REGISTRATION)
        return cls(throttle_time_ms=0, error_code=0, broker_epoch=epoch)

    async def _broker_heartbeat(self, header: RequestHeader, request: Any) -> Any:
        caught_up, state = await self.controller.call(
            ev.BrokerHeartbeat(request, header.api_version)
        )
        cls = _response_cls(ApiKey.BROKER_HEARTBEAT)
        return cls(
            throttle_time_ms=0,
            error_code=0,
            is_caught_up=caught_up,
            is_fenced=state.fenced,
            should_shut_down=state.should_shut_down,
        )

    async def _unregister_broker(self, header: RequestHeader, request: Any) -> Any:
        await self.controller.call(ev.UnregisterBroker(request.broker_id))
        cls = _response_cls(ApiKey.UNREGISTER_BROKER)
        return cls(throttle_time_ms=0, error_code=0, error_message=None)

    async def _controller_registration(self, header: RequestHeader, request: Any) -> Any:
        await self.controller.call(ev.RegisterController(request))
        cls = _response_cls(ApiKey.CONTROLLER_REGISTRATION)
        return cls(throttle_time_ms=0, error_code=0, error_message=None)

    async def _alter_partition(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.AlterPartition(request, header.api_version))

    async def _allocate_producer_ids(self, header: RequestHeader, request: Any) -> Any:
        first, count = await self.controller.call(
            ev.AllocateProducerIds(request.broker_id, request.broker_epoch)
        )
        cls = _response_cls(ApiKey.ALLOCATE_PRODUCER_IDS)
        return cls(throttle_time_ms=0, error_code=0, producer_id_start=first, producer_id_len=count)

    async def _assign_replicas_to_dirs(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.AssignReplicasToDirs(request))

    # -- admin APIs --------------------------------------------------------------------------

    async def _create_topics(self, header: RequestHeader, request: Any) -> Any:
        response = await self.controller.call(ev.CreateTopics(request, header.api_version))
        for result in response.topics:  # creation of the metadata topic is refused outright
            if result.name == "__cluster_metadata" and result.error_code == 0:
                result.error_code = ErrorCode.INVALID_REQUEST
                result.error_message = (
                    "Creation of internal topic __cluster_metadata is prohibited."
                )
        return response

    async def _delete_topics(self, header: RequestHeader, request: Any) -> Any:
        """Kafka's ``ControllerApis.deleteTopics``: names and ids resolved against the
        committed state, each checked, the known ones removed."""
        cls = _response_cls(ApiKey.DELETE_TOPICS)
        version = header.api_version
        state = await self.controller.call(ev.ReadState())
        by_name = state.image.topics.by_name
        by_id = state.image.topics.by_id
        results: list[Any] = []
        ids: list[uuid.UUID] = []
        wanted: list[tuple[str | None, uuid.UUID | None]] = []
        if version <= 5:
            wanted = [(name, None) for name in request.topic_names]
        else:
            wanted = [
                (t.name, t.topic_id if t.topic_id != ZERO_UUID else None) for t in request.topics
            ]
        seen_names: set[str] = set()
        seen_ids: set[uuid.UUID] = set()
        for name, topic_id in wanted:
            result = cls.DeletableTopicResult(
                name=name, topic_id=topic_id or ZERO_UUID, error_code=0
            )
            results.append(result)
            if name is None and topic_id is None:
                result.error_code, result.error_message = (
                    ErrorCode.INVALID_REQUEST,
                    ("Neither topic name nor id were specified."),
                )
            elif name is not None and topic_id is not None:
                result.error_code, result.error_message = (
                    ErrorCode.INVALID_REQUEST,
                    ("You may not specify both topic name and topic id."),
                )
            elif name is not None:
                if name in seen_names:
                    result.error_code, result.error_message = (
                        ErrorCode.INVALID_REQUEST,
                        "Duplicate topic name.",
                    )
                    continue
                seen_names.add(name)
                topic = by_name.get(name)
                if topic is None:
                    result.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    result.error_message = default_message(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                elif topic.id in seen_ids:
                    result.error_code, result.error_message = (
                        ErrorCode.INVALID_REQUEST,
                        ("The provided topic name maps to an ID that was already supplied."),
                    )
                else:
                    seen_ids.add(topic.id)
                    result.topic_id = topic.id
                    ids.append(topic.id)
            else:
                assert topic_id is not None
                if topic_id in seen_ids:
                    result.error_code, result.error_message = (
                        ErrorCode.INVALID_REQUEST,
                        "Duplicate topic id.",
                    )
                    continue
                seen_ids.add(topic_id)
                topic = by_id.get(topic_id)
                if topic is None:
                    result.error_code = ErrorCode.UNKNOWN_TOPIC_ID
                    result.error_message = default_message(ErrorCode.UNKNOWN_TOPIC_ID)
                else:
                    result.name = topic.name
                    ids.append(topic_id)
        if not self.controller.config.get("delete.topic.enable") and ids:
            for result in results:
                if result.error_code == 0:
                    result.error_code = ErrorCode.TOPIC_DELETION_DISABLED
                    result.error_message = "This version does not support topic deletion."
            return cls(throttle_time_ms=0, responses=results)
        if ids:
            outcome = await self.controller.call(ev.DeleteTopics(tuple(ids)))
            for result in results:
                error = outcome.get(result.topic_id)
                if result.error_code == 0 and error is not None and error.is_failure:
                    result.error_code, result.error_message = error.code, error.message
        for result in results:
            if version < 5:
                result.error_message = None
        return cls(throttle_time_ms=0, responses=results)

    async def _create_partitions(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.CreatePartitions(request))

    async def _elect_leaders(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.ElectLeaders(request))

    async def _alter_reassignments(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.AlterPartitionReassignments(request))

    async def _list_reassignments(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.ListPartitionReassignments(request))

    async def _configs(self, header: RequestHeader, request: Any, incremental: bool) -> Any:
        results = await self.controller.call(ev.AlterConfigs(request, incremental))
        cls = _response_cls(header.api_key)
        return cls(
            throttle_time_ms=0,
            responses=[
                cls.AlterConfigsResourceResponse(
                    error_code=error.code,
                    error_message=error.message,
                    resource_type=resource.type,
                    resource_name=resource.name,
                )
                for resource, error in results
            ],
        )

    async def _alter_configs(self, header: RequestHeader, request: Any) -> Any:
        return await self._configs(header, request, False)

    async def _incremental_alter_configs(self, header: RequestHeader, request: Any) -> Any:
        return await self._configs(header, request, True)

    async def _alter_client_quotas(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.AlterClientQuotas(request))

    async def _alter_scram(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.AlterScramCredentials(request))

    async def _create_acls(self, header: RequestHeader, request: Any) -> Any:
        return await self.controller.call(ev.CreateAcls(request))

    async def _delete_acls(self, header: RequestHeader, request: Any) -> Any:
        filters: list[Any] = []
        for item in request.filters:
            try:
                filters.append(acl_binding_filter(item, delete=True))
            except InvalidAclError as exc:
                filters.append(ApiError(ErrorCode.INVALID_REQUEST, str(exc)))
        results = await self.controller.call(ev.DeleteAcls(tuple(filters)))
        cls = _response_cls(ApiKey.DELETE_ACLS)
        out = []
        for result in results:
            if isinstance(result, list):
                out.append(
                    cls.DeleteAclsFilterResult(
                        error_code=0,
                        error_message=None,
                        matching_acls=[_matching(cls, b) for b in result],
                    )
                )
            else:
                out.append(
                    cls.DeleteAclsFilterResult(
                        error_code=result.code, error_message=result.message, matching_acls=[]
                    )
                )
        return cls(throttle_time_ms=0, filter_results=out)

    async def _describe_acls(self, header: RequestHeader, request: Any) -> Any:
        cls = _response_cls(ApiKey.DESCRIBE_ACLS)
        try:
            binding_filter = acl_binding_filter(request, delete=False)
        except InvalidAclError as exc:
            return cls(
                throttle_time_ms=0,
                error_code=ErrorCode.INVALID_REQUEST,
                error_message=str(exc),
                resources=[],
            )
        state = await self.controller.call(ev.ReadState())
        grouped: dict[Any, list[Any]] = {}
        for _, binding in matching_acls(state, binding_filter):
            grouped.setdefault(binding.pattern, []).append(binding.entry)
        resources = [
            cls.DescribeAclsResource(
                resource_type=int(pattern.resource_type),
                resource_name=pattern.name,
                pattern_type=int(pattern.pattern_type),
                acls=[
                    cls.AclDescription(
                        principal=e.principal,
                        host=e.host,
                        operation=int(e.operation),
                        permission_type=int(e.permission_type),
                    )
                    for e in entries
                ],
            )
            for pattern, entries in grouped.items()
        ]
        return cls(throttle_time_ms=0, error_code=0, error_message=None, resources=resources)

    async def _update_features(self, header: RequestHeader, request: Any) -> Any:
        version = header.api_version
        updates, types = feature_update_requests(request, version)
        validate_only = bool(getattr(request, "validate_only", False)) if version >= 1 else False
        failed, error = await self.controller.call(
            ev.UpdateFeatures(tuple(updates.items()), tuple(types.items()), validate_only)
        )
        cls = _response_cls(ApiKey.UPDATE_FEATURES)
        if version >= 2:
            return cls(
                throttle_time_ms=0, error_code=error.code, error_message=error.message, results=[]
            )
        if failed is None:
            results = [
                cls.UpdatableFeatureResult(feature=f, error_code=0, error_message=None)
                for f in updates
            ]
            return cls(throttle_time_ms=0, error_code=0, error_message=None, results=results)
        results = [
            cls.UpdatableFeatureResult(
                feature=f,
                error_code=error.code,
                error_message=(
                    error.message
                    if f == failed
                    else "Unable to update this feature due to another feature's error"
                ),
            )
            for f in updates
        ]
        return cls(
            throttle_time_ms=0,
            error_code=error.code,
            error_message="The update failed for all features since the following feature had "
            f"an error: {failed}",
            results=results,
        )

    # -- Envelope ------------------------------------------------------------------------------

    async def _envelope(self, header: RequestHeader, request: Any) -> Any:
        cls = _response_cls(ApiKey.ENVELOPE)
        principal = request.request_principal
        if principal is None or not _principal_decodes(bytes(principal)):
            return cls(response_data=None, error_code=ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE)
        data = bytes(request.request_data)
        try:
            inner_header, inner = decode_request(data, CONTROLLER_APIS)
        except (UnknownApiKey, UnsupportedVersion):
            return cls(response_data=None, error_code=ErrorCode.UNSUPPORTED_VERSION)
        except ProtocolError:
            return cls(response_data=None, error_code=ErrorCode.INVALID_REQUEST)
        if inner_header.api_key not in _FORWARDABLE:
            return cls(response_data=None, error_code=ErrorCode.INVALID_REQUEST)
        response = await self.handle(inner_header, inner)
        frame = encode_response(inner_header, response)
        return cls(response_data=frame[4:], error_code=0)


def _principal_decodes(data: bytes) -> bool:
    """Whether ``DefaultPrincipalData`` (its version, then the struct) reads whole."""
    if len(data) < 2:
        return False
    version = struct.unpack_from(">h", data, 0)[0]
    if version not in _PRINCIPAL.valid:
        return False
    try:
        _, end = _PRINCIPAL.reader(version)(memoryview(data), 2, len(data))
    except (struct.error, IndexError, ValueError, MalformedMessage):
        return False
    return bool(end == len(data))


def _matching(cls: Any, binding: AclBinding) -> Any:
    return cls.DeleteAclsMatchingAcl(
        error_code=0,
        error_message=None,
        resource_type=int(binding.pattern.resource_type),
        resource_name=binding.pattern.name,
        pattern_type=int(binding.pattern.pattern_type),
        principal=binding.entry.principal,
        host=binding.entry.host,
        operation=int(binding.entry.operation),
        permission_type=int(binding.entry.permission_type),
    )


def _error_response(key: int, version: int, request: Any, code: int, message: str | None) -> Any:
    """Kafka's ``AbstractRequest.getErrorResponse`` for the controller's APIs: ``code``
    in every error field the response has for the request's items."""
    cls = _response_cls(key)
    text = message if message is not None else default_message(code)
    match key:
        case ApiKey.CREATE_TOPICS:
            return cls(
                throttle_time_ms=0,
                topics=[
                    cls.CreatableTopicResult(
                        name=t.name,
                        topic_id=ZERO_UUID,
                        error_code=code,
                        error_message=text,
                        num_partitions=-1,
                        replication_factor=-1,
                        configs=None if version >= 5 else [],
                    )
                    for t in request.topics
                ],
            )
        case ApiKey.DELETE_TOPICS:
            items = request.topic_names if version <= 5 else [t.name for t in request.topics]
            return cls(
                throttle_time_ms=0,
                responses=[
                    cls.DeletableTopicResult(
                        name=n,
                        topic_id=ZERO_UUID,
                        error_code=code,
                        error_message=text if version >= 5 else None,
                    )
                    for n in items
                ],
            )
        case ApiKey.CREATE_PARTITIONS:
            return cls(
                throttle_time_ms=0,
                results=[
                    cls.CreatePartitionsTopicResult(
                        name=t.name, error_code=code, error_message=text
                    )
                    for t in request.topics
                ],
            )
        case ApiKey.ELECT_LEADERS:
            return cls(throttle_time_ms=0, error_code=code, replica_election_results=[])
        case ApiKey.ALTER_PARTITION_REASSIGNMENTS | ApiKey.LIST_PARTITION_REASSIGNMENTS:
            response = error_response(key, code, text)
            return response
        case ApiKey.ALTER_CONFIGS | ApiKey.INCREMENTAL_ALTER_CONFIGS:
            return cls(
                throttle_time_ms=0,
                responses=[
                    cls.AlterConfigsResourceResponse(
                        error_code=code,
                        error_message=text,
                        resource_type=r.resource_type,
                        resource_name=r.resource_name,
                    )
                    for r in request.resources
                ],
            )
        case ApiKey.ALTER_CLIENT_QUOTAS:
            return cls(
                throttle_time_ms=0,
                entries=[
                    cls.EntryData(
                        error_code=code,
                        error_message=text,
                        entity=[
                            cls.EntityData(entity_type=e.entity_type, entity_name=e.entity_name)
                            for e in entry.entity
                        ],
                    )
                    for entry in request.entries
                ],
            )
        case ApiKey.ALTER_USER_SCRAM_CREDENTIALS:
            users = dict.fromkeys(
                [*(d.name for d in request.deletions), *(u.name for u in request.upsertions)]
            )
            return cls(
                throttle_time_ms=0,
                results=[
                    cls.AlterUserScramCredentialsResult(user=u, error_code=code, error_message=text)
                    for u in users
                ],
            )
        case ApiKey.CREATE_ACLS:
            return cls(
                throttle_time_ms=0,
                results=[
                    cls.AclCreationResult(error_code=code, error_message=text)
                    for _ in request.creations
                ],
            )
        case ApiKey.DELETE_ACLS:
            return cls(
                throttle_time_ms=0,
                filter_results=[
                    cls.DeleteAclsFilterResult(
                        error_code=code, error_message=text, matching_acls=[]
                    )
                    for _ in request.filters
                ],
            )
        case ApiKey.ALTER_PARTITION:
            return cls(throttle_time_ms=0, error_code=code, topics=[])
        case _:
            return error_response(key, code, text)
