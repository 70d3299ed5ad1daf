# Generated from kafkacore.protocol.messages by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""The type of ``APIS``, per key: ``APIS[ApiKey.PRODUCE]`` is an ``Api[ProduceRequest,
ProduceResponse]``. Stub only: at runtime ``APIS`` is a plain ``dict``."""

from typing import Any, Literal, overload

from kafkacore.protocol.api import Api, ApiKey
from kafkacore.protocol.messages.add_offsets_to_txn import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)
from kafkacore.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
)
from kafkacore.protocol.messages.allocate_producer_ids import (
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
)
from kafkacore.protocol.messages.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
)
from kafkacore.protocol.messages.alter_configs import AlterConfigsRequest, AlterConfigsResponse
from kafkacore.protocol.messages.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
)
from kafkacore.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
)
from kafkacore.protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
)
from kafkacore.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
)
from kafkacore.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafkacore.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
from kafkacore.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from kafkacore.protocol.messages.controlled_shutdown import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)
from kafkacore.protocol.messages.create_acls import CreateAclsRequest, CreateAclsResponse
from kafkacore.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
)
from kafkacore.protocol.messages.create_topics import CreateTopicsRequest, CreateTopicsResponse
from kafkacore.protocol.messages.delete_acls import DeleteAclsRequest, DeleteAclsResponse
from kafkacore.protocol.messages.delete_groups import DeleteGroupsRequest, DeleteGroupsResponse
from kafkacore.protocol.messages.delete_records import DeleteRecordsRequest, DeleteRecordsResponse
from kafkacore.protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
)
from kafkacore.protocol.messages.delete_share_group_state import (
    DeleteShareGroupStateRequest,
    DeleteShareGroupStateResponse,
)
from kafkacore.protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicsResponse
from kafkacore.protocol.messages.describe_acls import DescribeAclsRequest, DescribeAclsResponse
from kafkacore.protocol.messages.describe_client_quotas import (
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
from kafkacore.protocol.messages.describe_cluster import (
    DescribeClusterRequest,
    DescribeClusterResponse,
)
from kafkacore.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)
from kafkacore.protocol.messages.describe_groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from kafkacore.protocol.messages.describe_log_dirs import (
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from kafkacore.protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersResponse,
)
from kafkacore.protocol.messages.describe_quorum import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
)
from kafkacore.protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
)
from kafkacore.protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from kafkacore.protocol.messages.describe_user_scram_credentials import (
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from kafkacore.protocol.messages.elect_leaders import ElectLeadersRequest, ElectLeadersResponse
from kafkacore.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from kafkacore.protocol.messages.fetch import FetchRequest, FetchResponse
from kafkacore.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafkacore.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from kafkacore.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from kafkacore.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from kafkacore.protocol.messages.initialize_share_group_state import (
    InitializeShareGroupStateRequest,
    InitializeShareGroupStateResponse,
)
from kafkacore.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrRequest, LeaderAndIsrResponse
from kafkacore.protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
from kafkacore.protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from kafkacore.protocol.messages.list_offsets import ListOffsetsRequest, ListOffsetsResponse
from kafkacore.protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kafkacore.protocol.messages.list_transactions import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafkacore.protocol.messages.metadata import MetadataRequest, MetadataResponse
from kafkacore.protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponse
from kafkacore.protocol.messages.offset_delete import OffsetDeleteRequest, OffsetDeleteResponse
from kafkacore.protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchResponse
from kafkacore.protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafkacore.protocol.messages.produce import ProduceRequest, ProduceResponse
from kafkacore.protocol.messages.read_share_group_state import (
    ReadShareGroupStateRequest,
    ReadShareGroupStateResponse,
)
from kafkacore.protocol.messages.read_share_group_state_summary import (
    ReadShareGroupStateSummaryRequest,
    ReadShareGroupStateSummaryResponse,
)
from kafkacore.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from kafkacore.protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse
from kafkacore.protocol.messages.share_acknowledge import (
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
)
from kafkacore.protocol.messages.share_fetch import ShareFetchRequest, ShareFetchResponse
from kafkacore.protocol.messages.share_group_describe import (
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)
from kafkacore.protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from kafkacore.protocol.messages.stop_replica import StopReplicaRequest, StopReplicaResponse
from kafkacore.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
from kafkacore.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from kafkacore.protocol.messages.update_features import (
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
from kafkacore.protocol.messages.update_metadata import (
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from kafkacore.protocol.messages.write_share_group_state import (
    WriteShareGroupStateRequest,
    WriteShareGroupStateResponse,
)
from kafkacore.protocol.messages.write_txn_markers import (
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)

__all__ = ["ApiTable"]

class ApiTable(dict[int, Api[Any, Any]]):
    """The served APIs by key; indexed with an :class:`ApiKey` member, typed."""

    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.PRODUCE],
        /,
    ) -> Api[ProduceRequest, ProduceResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.FETCH],
        /,
    ) -> Api[FetchRequest, FetchResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.LIST_OFFSETS],
        /,
    ) -> Api[ListOffsetsRequest, ListOffsetsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.METADATA],
        /,
    ) -> Api[MetadataRequest, MetadataResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.LEADER_AND_ISR],
        /,
    ) -> Api[LeaderAndIsrRequest, LeaderAndIsrResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.STOP_REPLICA],
        /,
    ) -> Api[StopReplicaRequest, StopReplicaResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.UPDATE_METADATA],
        /,
    ) -> Api[UpdateMetadataRequest, UpdateMetadataResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.CONTROLLED_SHUTDOWN],
        /,
    ) -> Api[ControlledShutdownRequest, ControlledShutdownResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.OFFSET_COMMIT],
        /,
    ) -> Api[OffsetCommitRequest, OffsetCommitResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.OFFSET_FETCH],
        /,
    ) -> Api[OffsetFetchRequest, OffsetFetchResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.FIND_COORDINATOR],
        /,
    ) -> Api[FindCoordinatorRequest, FindCoordinatorResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.JOIN_GROUP],
        /,
    ) -> Api[JoinGroupRequest, JoinGroupResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.HEARTBEAT],
        /,
    ) -> Api[HeartbeatRequest, HeartbeatResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.LEAVE_GROUP],
        /,
    ) -> Api[LeaveGroupRequest, LeaveGroupResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.SYNC_GROUP],
        /,
    ) -> Api[SyncGroupRequest, SyncGroupResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_GROUPS],
        /,
    ) -> Api[DescribeGroupsRequest, DescribeGroupsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.LIST_GROUPS],
        /,
    ) -> Api[ListGroupsRequest, ListGroupsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.SASL_HANDSHAKE],
        /,
    ) -> Api[SaslHandshakeRequest, SaslHandshakeResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.API_VERSIONS],
        /,
    ) -> Api[ApiVersionsRequest, ApiVersionsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.CREATE_TOPICS],
        /,
    ) -> Api[CreateTopicsRequest, CreateTopicsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DELETE_TOPICS],
        /,
    ) -> Api[DeleteTopicsRequest, DeleteTopicsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DELETE_RECORDS],
        /,
    ) -> Api[DeleteRecordsRequest, DeleteRecordsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.INIT_PRODUCER_ID],
        /,
    ) -> Api[InitProducerIdRequest, InitProducerIdResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.OFFSET_FOR_LEADER_EPOCH],
        /,
    ) -> Api[OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ADD_PARTITIONS_TO_TXN],
        /,
    ) -> Api[AddPartitionsToTxnRequest, AddPartitionsToTxnResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ADD_OFFSETS_TO_TXN],
        /,
    ) -> Api[AddOffsetsToTxnRequest, AddOffsetsToTxnResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.END_TXN],
        /,
    ) -> Api[EndTxnRequest, EndTxnResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.WRITE_TXN_MARKERS],
        /,
    ) -> Api[WriteTxnMarkersRequest, WriteTxnMarkersResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.TXN_OFFSET_COMMIT],
        /,
    ) -> Api[TxnOffsetCommitRequest, TxnOffsetCommitResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_ACLS],
        /,
    ) -> Api[DescribeAclsRequest, DescribeAclsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.CREATE_ACLS],
        /,
    ) -> Api[CreateAclsRequest, CreateAclsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DELETE_ACLS],
        /,
    ) -> Api[DeleteAclsRequest, DeleteAclsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_CONFIGS],
        /,
    ) -> Api[DescribeConfigsRequest, DescribeConfigsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ALTER_CONFIGS],
        /,
    ) -> Api[AlterConfigsRequest, AlterConfigsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_LOG_DIRS],
        /,
    ) -> Api[DescribeLogDirsRequest, DescribeLogDirsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.SASL_AUTHENTICATE],
        /,
    ) -> Api[SaslAuthenticateRequest, SaslAuthenticateResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.CREATE_PARTITIONS],
        /,
    ) -> Api[CreatePartitionsRequest, CreatePartitionsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DELETE_GROUPS],
        /,
    ) -> Api[DeleteGroupsRequest, DeleteGroupsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ELECT_LEADERS],
        /,
    ) -> Api[ElectLeadersRequest, ElectLeadersResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.INCREMENTAL_ALTER_CONFIGS],
        /,
    ) -> Api[IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ALTER_PARTITION_REASSIGNMENTS],
        /,
    ) -> Api[AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.LIST_PARTITION_REASSIGNMENTS],
        /,
    ) -> Api[ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.OFFSET_DELETE],
        /,
    ) -> Api[OffsetDeleteRequest, OffsetDeleteResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_CLIENT_QUOTAS],
        /,
    ) -> Api[DescribeClientQuotasRequest, DescribeClientQuotasResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ALTER_CLIENT_QUOTAS],
        /,
    ) -> Api[AlterClientQuotasRequest, AlterClientQuotasResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS],
        /,
    ) -> Api[DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ALTER_USER_SCRAM_CREDENTIALS],
        /,
    ) -> Api[AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_QUORUM],
        /,
    ) -> Api[DescribeQuorumRequest, DescribeQuorumResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ALTER_PARTITION],
        /,
    ) -> Api[AlterPartitionRequest, AlterPartitionResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.UPDATE_FEATURES],
        /,
    ) -> Api[UpdateFeaturesRequest, UpdateFeaturesResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_CLUSTER],
        /,
    ) -> Api[DescribeClusterRequest, DescribeClusterResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_PRODUCERS],
        /,
    ) -> Api[DescribeProducersRequest, DescribeProducersResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_TRANSACTIONS],
        /,
    ) -> Api[DescribeTransactionsRequest, DescribeTransactionsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.LIST_TRANSACTIONS],
        /,
    ) -> Api[ListTransactionsRequest, ListTransactionsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ALLOCATE_PRODUCER_IDS],
        /,
    ) -> Api[AllocateProducerIdsRequest, AllocateProducerIdsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.CONSUMER_GROUP_HEARTBEAT],
        /,
    ) -> Api[ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.CONSUMER_GROUP_DESCRIBE],
        /,
    ) -> Api[ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.SHARE_GROUP_HEARTBEAT],
        /,
    ) -> Api[ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.SHARE_GROUP_DESCRIBE],
        /,
    ) -> Api[ShareGroupDescribeRequest, ShareGroupDescribeResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.SHARE_FETCH],
        /,
    ) -> Api[ShareFetchRequest, ShareFetchResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.SHARE_ACKNOWLEDGE],
        /,
    ) -> Api[ShareAcknowledgeRequest, ShareAcknowledgeResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.INITIALIZE_SHARE_GROUP_STATE],
        /,
    ) -> Api[InitializeShareGroupStateRequest, InitializeShareGroupStateResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.READ_SHARE_GROUP_STATE],
        /,
    ) -> Api[ReadShareGroupStateRequest, ReadShareGroupStateResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.WRITE_SHARE_GROUP_STATE],
        /,
    ) -> Api[WriteShareGroupStateRequest, WriteShareGroupStateResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DELETE_SHARE_GROUP_STATE],
        /,
    ) -> Api[DeleteShareGroupStateRequest, DeleteShareGroupStateResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.READ_SHARE_GROUP_STATE_SUMMARY],
        /,
    ) -> Api[ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS],
        /,
    ) -> Api[DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.ALTER_SHARE_GROUP_OFFSETS],
        /,
    ) -> Api[AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse]: ...
    @overload
    def __getitem__(
        self,
        key: Literal[ApiKey.DELETE_SHARE_GROUP_OFFSETS],
        /,
    ) -> Api[DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse]: ...
    @overload
    def __getitem__(self, key: int, /) -> Api[Any, Any]: ...
