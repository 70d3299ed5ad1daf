"""The API table and the request/response codec entry points (sans-IO).

:data:`APIS` lists every API kafkacore serves with the range it **advertises** in
ApiVersions and the range it **implements** (decodes); they differ for Produce, which is
advertised from v0 for old librdkafka's feature checks but whose v0-2 requests are
answered UNSUPPORTED_VERSION, as Kafka 4 does (KAFKA-18659).

Frames: ``decode_request``/``decode_response`` take one frame *without* its 4-byte size
prefix (the transport strips it); ``encode_request``/``encode_response`` return the
bytes to send, size prefix included.

Immutable table, pure functions: thread-safe.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from kafkacore.protocol import headers as h
from kafkacore.protocol import messages as m
from kafkacore.protocol import types as t
from kafkacore.protocol.errors import (
    ErrorCode,
    ProtocolError,
    UnknownApiKey,
    UnsupportedVersion,
)
from kafkacore.protocol.schema import KafkaStruct, MessageSchema

if TYPE_CHECKING:  # a stub-only module: the table's type, per key
    from kafkacore.protocol.api_table import ApiTable

__all__ = [
    "APIS",
    "APIS_BY_NAME",
    "CONTROLLER_APIS",
    "FORWARDABLE_APIS",
    "Api",
    "ApiKey",
    "api_for",
    "api_versions_response",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "unsupported_api_versions_response",
]

_SIZE = struct.Struct(">i")


class ApiKey(IntEnum):
    """The API keys the codec knows, with Kafka's names (``org.apache.kafka.common.protocol.
    ApiKeys``): exactly the keys of :data:`APIS` (the broker's listeners) and of
    :data:`CONTROLLER_APIS` (the KRaft controller listener)."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    ELECT_LEADERS = 43
    INCREMENTAL_ALTER_CONFIGS = 44
    ALTER_PARTITION_REASSIGNMENTS = 45
    LIST_PARTITION_REASSIGNMENTS = 46
    OFFSET_DELETE = 47
    DESCRIBE_CLIENT_QUOTAS = 48
    ALTER_CLIENT_QUOTAS = 49
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    ALTER_PARTITION = 56
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    ALLOCATE_PRODUCER_IDS = 67
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69
    SHARE_GROUP_HEARTBEAT = 76
    SHARE_GROUP_DESCRIBE = 77
    SHARE_FETCH = 78
    SHARE_ACKNOWLEDGE = 79
    INITIALIZE_SHARE_GROUP_STATE = 83
    READ_SHARE_GROUP_STATE = 84
    WRITE_SHARE_GROUP_STATE = 85
    DELETE_SHARE_GROUP_STATE = 86
    READ_SHARE_GROUP_STATE_SUMMARY = 87
    DESCRIBE_SHARE_GROUP_OFFSETS = 90
    ALTER_SHARE_GROUP_OFFSETS = 91
    DELETE_SHARE_GROUP_OFFSETS = 92
    # KRaft: the controller listener's own APIs (CONTROLLER_APIS)
    VOTE = 52
    BEGIN_QUORUM_EPOCH = 53
    END_QUORUM_EPOCH = 54
    DESCRIBE_QUORUM = 55
    UPDATE_FEATURES = 57
    ENVELOPE = 58
    FETCH_SNAPSHOT = 59
    BROKER_REGISTRATION = 62
    BROKER_HEARTBEAT = 63
    UNREGISTER_BROKER = 64
    CONTROLLER_REGISTRATION = 70
    ASSIGN_REPLICAS_TO_DIRS = 73
    ADD_RAFT_VOTER = 80
    REMOVE_RAFT_VOTER = 81
    UPDATE_RAFT_VOTER = 82


Req = TypeVar("Req", bound=KafkaStruct)
Resp = TypeVar("Resp", bound=KafkaStruct)


@dataclass(frozen=True, eq=False)
class Api(Generic[Req, Resp]):
    """One API: its key and name, the range advertised in ApiVersions, the range decoded
    (``implemented``), and its request/response schemas, typed by their classes
    (``APIS[ApiKey.PRODUCE]`` is an ``Api[ProduceRequest, ProduceResponse]``)."""

    key: ApiKey
    name: str
    min_version: int
    max_version: int
    implemented_min: int
    implemented_max: int
    request: MessageSchema[Req]
    response: MessageSchema[Resp]

    @property
    def flexible_from(self) -> int | None:
        flex = self.request.flexible
        return flex.lo if flex.lo <= flex.hi else None

    def is_flexible(self, version: int) -> bool:
        return version in self.request.flexible

    def implements(self, version: int) -> bool:
        return self.implemented_min <= version <= self.implemented_max

    def request_header_version(self, version: int) -> int:
        return h.request_header_version(self.is_flexible(version))

    def response_header_version(self, version: int) -> int:
        return h.response_header_version(self.key, self.is_flexible(version))


def _api(
    name: str, module: Any, advertise: tuple[int, int], implement: tuple[int, int]
) -> Api[Any, Any]:
    req: MessageSchema[Any] = module.REQUEST
    resp: MessageSchema[Any] = module.RESPONSE
    return Api(ApiKey(req.api_key), name, *advertise, *implement, req, resp)


# The "Minimum protocol surface for kafkacore v1": name, module, advertised, implemented.
_TABLE = [
    _api("Produce", m.produce, (0, 12), (3, 12)),
    # v18 (KIP-1166): a Kafka 4.3 follower fetches at the version its cluster's
    # metadata.version implies, whatever a leader's ApiVersions says
    _api("Fetch", m.fetch, (4, 18), (4, 18)),
    _api("ListOffsets", m.list_offsets, (1, 11), (1, 11)),
    _api("Metadata", m.metadata, (0, 12), (0, 12)),
    _api("OffsetCommit", m.offset_commit, (2, 10), (2, 10)),
    _api("OffsetFetch", m.offset_fetch, (1, 10), (1, 10)),
    _api("FindCoordinator", m.find_coordinator, (0, 6), (0, 6)),
    _api("JoinGroup", m.join_group, (0, 9), (0, 9)),
    _api("Heartbeat", m.heartbeat, (0, 4), (0, 4)),
    _api("LeaveGroup", m.leave_group, (0, 5), (0, 5)),
    _api("SyncGroup", m.sync_group, (0, 5), (0, 5)),
    _api("DescribeGroups", m.describe_groups, (0, 6), (0, 6)),
    _api("ListGroups", m.list_groups, (0, 5), (0, 5)),
    _api("SaslHandshake", m.sasl_handshake, (0, 1), (0, 1)),
    _api("ApiVersions", m.api_versions, (0, 4), (0, 4)),
    _api("CreateTopics", m.create_topics, (2, 7), (2, 7)),
    _api("DeleteTopics", m.delete_topics, (1, 6), (1, 6)),
    _api("DeleteRecords", m.delete_records, (0, 2), (0, 2)),
    _api("InitProducerId", m.init_producer_id, (0, 5), (0, 5)),
    _api("OffsetForLeaderEpoch", m.offset_for_leader_epoch, (2, 4), (2, 4)),
    _api("AddPartitionsToTxn", m.add_partitions_to_txn, (0, 5), (0, 5)),
    _api("AddOffsetsToTxn", m.add_offsets_to_txn, (0, 4), (0, 4)),
    _api("EndTxn", m.end_txn, (0, 5), (0, 5)),
    _api("TxnOffsetCommit", m.txn_offset_commit, (0, 5), (0, 5)),
    _api("DescribeAcls", m.describe_acls, (1, 3), (1, 3)),
    _api("CreateAcls", m.create_acls, (1, 3), (1, 3)),
    _api("DeleteAcls", m.delete_acls, (1, 3), (1, 3)),
    _api("DescribeConfigs", m.describe_configs, (1, 4), (1, 4)),
    _api("AlterConfigs", m.alter_configs, (0, 2), (0, 2)),
    _api("DescribeLogDirs", m.describe_log_dirs, (0, 5), (0, 5)),
    _api("SaslAuthenticate", m.sasl_authenticate, (0, 2), (0, 2)),
    _api("CreatePartitions", m.create_partitions, (0, 3), (0, 3)),
    _api("DeleteGroups", m.delete_groups, (0, 2), (0, 2)),
    _api("ElectLeaders", m.elect_leaders, (0, 2), (0, 2)),
    _api("IncrementalAlterConfigs", m.incremental_alter_configs, (0, 1), (0, 1)),
    _api("AlterPartitionReassignments", m.alter_partition_reassignments, (0, 0), (0, 0)),
    _api("ListPartitionReassignments", m.list_partition_reassignments, (0, 0), (0, 0)),
    _api("OffsetDelete", m.offset_delete, (0, 0), (0, 0)),
    _api("DescribeClientQuotas", m.describe_client_quotas, (0, 1), (0, 1)),
    _api("AlterClientQuotas", m.alter_client_quotas, (0, 1), (0, 1)),
    _api("DescribeUserScramCredentials", m.describe_user_scram_credentials, (0, 0), (0, 0)),
    _api("AlterUserScramCredentials", m.alter_user_scram_credentials, (0, 0), (0, 0)),
    _api("UpdateFeatures", m.update_features, (0, 2), (0, 2)),
    _api("DescribeCluster", m.describe_cluster, (0, 1), (0, 1)),
    _api("DescribeProducers", m.describe_producers, (0, 0), (0, 0)),
    _api("DescribeTransactions", m.describe_transactions, (0, 0), (0, 0)),
    _api("ListTransactions", m.list_transactions, (0, 1), (0, 1)),
    _api("ConsumerGroupHeartbeat", m.consumer_group_heartbeat, (0, 1), (0, 1)),
    _api("ConsumerGroupDescribe", m.consumer_group_describe, (0, 1), (0, 1)),
    # KRaft brokers forward these to the controller (advertised only by a KRaft broker)
    _api("DescribeQuorum", m.describe_quorum, (0, 2), (0, 2)),
    _api("UpdateFeatures", m.update_features, (0, 2), (0, 2)),
    # KIP-932 share groups (Kafka 4.3.1's versions; served whatever share.version is, and
    # answered UNSUPPORTED_VERSION while it is below 1, as Kafka does)
    _api("ShareGroupHeartbeat", m.share_group_heartbeat, (1, 1), (1, 1)),
    _api("ShareGroupDescribe", m.share_group_describe, (1, 1), (1, 1)),
    _api("ShareFetch", m.share_fetch, (1, 2), (1, 2)),
    _api("ShareAcknowledge", m.share_acknowledge, (1, 2), (1, 2)),
    _api("InitializeShareGroupState", m.initialize_share_group_state, (0, 0), (0, 0)),
    _api("ReadShareGroupState", m.read_share_group_state, (0, 0), (0, 0)),
    _api("WriteShareGroupState", m.write_share_group_state, (0, 1), (0, 1)),
    _api("DeleteShareGroupState", m.delete_share_group_state, (0, 0), (0, 0)),
    _api("ReadShareGroupStateSummary", m.read_share_group_state_summary, (0, 1), (0, 1)),
    _api("DescribeShareGroupOffsets", m.describe_share_group_offsets, (0, 1), (0, 1)),
    _api("AlterShareGroupOffsets", m.alter_share_group_offsets, (0, 0), (0, 0)),
    _api("DeleteShareGroupOffsets", m.delete_share_group_offsets, (0, 0), (0, 0)),
    # Inter-broker APIs of a ZooKeeper-mode cluster (Kafka 3.9 at IBP 3.9). ControlledShutdown
    # v0 has a request header without client id, which kafkacore does not read.
    _api("LeaderAndIsr", m.leader_and_isr, (0, 7), (0, 7)),
    _api("StopReplica", m.stop_replica, (0, 4), (0, 4)),
    _api("UpdateMetadata", m.update_metadata, (0, 8), (0, 8)),
    _api("ControlledShutdown", m.controlled_shutdown, (1, 3), (1, 3)),
    _api("AlterPartition", m.alter_partition, (0, 3), (0, 3)),
    _api("AllocateProducerIds", m.allocate_producer_ids, (0, 0), (0, 0)),
    _api("WriteTxnMarkers", m.write_txn_markers, (0, 1), (0, 1)),
]

APIS = cast("ApiTable", {api.key: api for api in sorted(_TABLE, key=lambda a: a.key)})
"""Every served API by key, in key order. A plain ``dict`` (lookups stay the interpreter's
specialized ``dict`` subscript); for mypy an ``ApiTable`` (``api_table.pyi``, generated by
:mod:`~kafkacore.protocol.stubgen`) whose ``__getitem__`` is overloaded per
:class:`ApiKey` member: ``APIS[ApiKey.PRODUCE]`` is an ``Api[ProduceRequest,
ProduceResponse]``, a key known only as an ``int`` an ``Api[Any, Any]``."""
APIS_BY_NAME: dict[str, Api[Any, Any]] = {api.name: api for api in APIS.values()}

# The KRaft controller listener (Kafka 4.3.1's ``ApiMessageType`` entries listing
# "controller"), at the versions Kafka's controller advertises: what kafkacore's
# ControllerApis serves. The broker's APIs keep their broker ranges above; a controller
# answers those it shares at the ranges below.
_CONTROLLER_TABLE = [
    _api("Fetch", m.fetch, (4, 18), (4, 18)),
    _api("ApiVersions", m.api_versions, (0, 4), (0, 4)),
    _api("CreateTopics", m.create_topics, (2, 7), (2, 7)),
    _api("DeleteTopics", m.delete_topics, (1, 6), (1, 6)),
    _api("DescribeAcls", m.describe_acls, (1, 3), (1, 3)),
    _api("CreateAcls", m.create_acls, (1, 3), (1, 3)),
    _api("DeleteAcls", m.delete_acls, (1, 3), (1, 3)),
    _api("AlterConfigs", m.alter_configs, (0, 2), (0, 2)),
    _api("CreatePartitions", m.create_partitions, (0, 3), (0, 3)),
    _api("ElectLeaders", m.elect_leaders, (0, 2), (0, 2)),
    _api("IncrementalAlterConfigs", m.incremental_alter_configs, (0, 1), (0, 1)),
    _api("AlterPartitionReassignments", m.alter_partition_reassignments, (0, 1), (0, 1)),
    _api("ListPartitionReassignments", m.list_partition_reassignments, (0, 0), (0, 0)),
    _api("AlterClientQuotas", m.alter_client_quotas, (0, 1), (0, 1)),
    _api("AlterUserScramCredentials", m.alter_user_scram_credentials, (0, 0), (0, 0)),
    _api("Vote", m.vote, (0, 2), (0, 2)),
    _api("BeginQuorumEpoch", m.begin_quorum_epoch, (0, 1), (0, 1)),
    _api("EndQuorumEpoch", m.end_quorum_epoch, (0, 1), (0, 1)),
    _api("DescribeQuorum", m.describe_quorum, (0, 2), (0, 2)),
    _api("AlterPartition", m.alter_partition, (2, 3), (2, 3)),
    _api("UpdateFeatures", m.update_features, (0, 2), (0, 2)),
    _api("Envelope", m.envelope, (0, 0), (0, 0)),
    _api("FetchSnapshot", m.fetch_snapshot, (0, 1), (0, 1)),
    _api("DescribeCluster", m.describe_cluster, (0, 2), (0, 2)),
    _api("BrokerRegistration", m.broker_registration, (0, 4), (0, 4)),
    _api("BrokerHeartbeat", m.broker_heartbeat, (0, 2), (0, 2)),
    _api("UnregisterBroker", m.unregister_broker, (0, 0), (0, 0)),
    _api("AllocateProducerIds", m.allocate_producer_ids, (0, 0), (0, 0)),
    _api("ControllerRegistration", m.controller_registration, (0, 0), (0, 0)),
    _api("AssignReplicasToDirs", m.assign_replicas_to_dirs, (0, 0), (0, 0)),
    _api("AddRaftVoter", m.add_raft_voter, (0, 1), (0, 1)),
    _api("RemoveRaftVoter", m.remove_raft_voter, (0, 0), (0, 0)),
    _api("UpdateRaftVoter", m.update_raft_voter, (0, 0), (0, 0)),
]

CONTROLLER_APIS: dict[int, Api[Any, Any]] = {
    api.key: api for api in sorted(_CONTROLLER_TABLE, key=lambda a: a.key)
}
"""Every API the KRaft controller listener serves, by key, in key order."""


FORWARDABLE_APIS = frozenset(
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
"""The APIs a broker may forward to the KRaft controller inside an Envelope (Kafka's
``ApiKeys.forwardable``): what the controller accepts there, and - those a broker
listener serves - what a KRaft broker forwards."""


def api_for(key: int) -> Api[Any, Any]:
    """The API of ``key`` on a broker listener, else on the controller listener
    (``KeyError`` for neither): what a client encodes a request with."""
    api = APIS.get(key)
    return api if api is not None else CONTROLLER_APIS[key]


for _api_entry in [*APIS.values(), *CONTROLLER_APIS.values()]:
    # let a request/response object find its API (one schema object per API: the broker's
    # wins where both tables have it, the codec is the same)
    _api_entry.request.cls._message = api_for(_api_entry.key).request
    _api_entry.response.cls._message = api_for(_api_entry.key).response

API_VERSIONS = APIS[h.API_VERSIONS_KEY]


def _message_of(value: KafkaStruct) -> MessageSchema[Any]:
    msg = getattr(type(value), "_message", None)
    if not isinstance(msg, MessageSchema):
        raise TypeError(f"{type(value).__name__} is not a request or response")
    return msg


def _frame(parts: list[Any]) -> bytes:
    size = sum(map(len, parts))
    parts[0] = _SIZE.pack(size)
    return b"".join(parts)


# --- requests -----------------------------------------------------------------------------


def decode_request(
    frame: t.Buffer, apis: dict[int, Api[Any, Any]] = APIS
) -> tuple[h.RequestHeader, KafkaStruct]:
    """``(header, request)`` from one request frame (no size prefix), served from
    ``apis`` (a broker listener's, or :data:`CONTROLLER_APIS`).

    Raises :class:`UnknownApiKey`, :class:`UnsupportedVersion` (the broker answers
    UNSUPPORTED_VERSION; for ApiVersions see :func:`unsupported_api_versions_response`)
    or :class:`ProtocolError` for malformed bytes; each carries the correlation id, API
    key and version when they could be read. Bytes after the body are ignored, as Kafka
    ignores them."""
    buf = frame if isinstance(frame, memoryview) else memoryview(frame)
    if len(buf) < 8:
        raise ProtocolError(f"request frame of {len(buf)} bytes is shorter than a header")
    api_key, version, correlation_id = struct.unpack_from(">hhi", buf, 0)
    ids = {"correlation_id": correlation_id, "api_key": api_key, "api_version": version}
    api = apis.get(api_key)
    if api is None:
        raise UnknownApiKey(f"unknown API key {api_key}", **ids)
    if not api.implements(version):
        client_id = None
        try:  # best effort: an unknown (newer) version is assumed flexible, as Kafka does
            hv = api.request_header_version(version) if version <= api.max_version else 2
            client_id = h.read_request_header(buf, hv)[0].client_id
        except (struct.error, IndexError, ValueError):
            pass
        raise UnsupportedVersion(
            f"{api.name} v{version} is not supported "
            f"(implemented {api.implemented_min}-{api.implemented_max})",
            client_id=client_id,
            **ids,
        )
    client_id = None
    try:
        header, pos = h.read_request_header(buf, api.request_header_version(version))
        client_id = header.client_id
        request, _ = api.request.reader(version)(buf, pos, len(buf))
    except (struct.error, IndexError) as exc:
        raise ProtocolError(
            f"{api.name} v{version} request is truncated ({exc})", client_id=client_id, **ids
        ) from None
    except t.MalformedMessage as exc:
        raise ProtocolError(
            f"{api.name} v{version} request is malformed: {exc}", client_id=client_id, **ids
        ) from None
    return header, request


def encode_request(header: h.RequestHeader, request: KafkaStruct) -> bytes:
    """The framed request; the API key and version are the header's."""
    api = api_for(header.api_key)
    parts: list[Any] = [b""]
    h.write_request_header(header, api.request_header_version(header.api_version), parts)
    api.request.writer(header.api_version)(request, parts)
    return _frame(parts)


# --- responses ----------------------------------------------------------------------------


def encode_response(
    header: h.RequestHeader | int, response: KafkaStruct, api_version: int | None = None
) -> bytes:
    """The framed response to ``header`` (or to a bare correlation id; then
    ``api_version`` is required), at the request's version unless ``api_version``."""
    msg = _message_of(response)
    api = api_for(msg.api_key)
    if isinstance(header, h.RequestHeader):
        correlation_id = header.correlation_id
        version = header.api_version if api_version is None else api_version
    else:
        if api_version is None:
            raise TypeError("api_version is required with a bare correlation id")
        correlation_id, version = header, api_version
    parts: list[Any] = [b""]
    h.write_response_header(
        h.ResponseHeader(correlation_id), api.response_header_version(version), parts
    )
    api.response.writer(version)(response, parts)
    return _frame(parts)


def decode_response(frame: t.Buffer, api_key: int, api_version: int) -> tuple[int, KafkaStruct]:
    """``(correlation_id, response)`` from one response frame (no size prefix)."""
    api = api_for(api_key)
    buf = frame if isinstance(frame, memoryview) else memoryview(frame)
    try:
        header, pos = h.read_response_header(buf, api.response_header_version(api_version))
        response, end = api.response.reader(api_version)(buf, pos, len(buf))
    except (struct.error, IndexError) as exc:
        raise ProtocolError(f"{api.name} v{api_version} response is truncated ({exc})") from None
    except t.MalformedMessage as exc:
        raise ProtocolError(f"{api.name} v{api_version} response is malformed: {exc}") from None
    if end != len(buf):
        raise ProtocolError(f"{api.name} v{api_version} response has {len(buf) - end} extra bytes")
    return header.correlation_id, response


# --- ApiVersions ---------------------------------------------------------------------------


def api_versions_response(
    error_code: int = ErrorCode.NONE,
    throttle_time_ms: int = 0,
    apis: dict[int, Api[Any, Any]] = APIS,
) -> m.api_versions.ApiVersionsResponse:
    """An ApiVersions response listing every advertised API of ``apis``
    (version-independent)."""
    cls = m.api_versions.ApiVersionsResponse
    keys = [
        cls.ApiVersion(api_key=api.key, min_version=api.min_version, max_version=api.max_version)
        for api in apis.values()
    ]
    return cls(error_code=error_code, api_keys=keys, throttle_time_ms=throttle_time_ms)


def unsupported_api_versions_response(correlation_id: int) -> bytes:
    """Kafka's answer to an ApiVersions request of a version it does not know: a v0
    body (header v0) with UNSUPPORTED_VERSION and the full key list, so the client can
    retry with a version the broker serves."""
    return encode_response(
        correlation_id, api_versions_response(ErrorCode.UNSUPPORTED_VERSION), api_version=0
    )
