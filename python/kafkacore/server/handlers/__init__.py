"""Request handlers: each takes ``(services, context, request)`` - the
:class:`~kafkacore.server.services.BrokerServices`, the request's
:class:`~kafkacore.server.request_context.RequestContext` (header, connection,
principal) and the decoded body - and returns the response object, or an awaitable of it
(for work done on the I/O threads, or a delayed Fetch). No sockets, no bytes.

:data:`HANDLERS` maps API keys to handlers; an advertised API without one gets
:func:`~kafkacore.server.handlers.unimplemented.unimplemented_response`. On a KRaft broker
the APIs the controller handles are forwarded to it (Kafka's ``maybeForwardToController``:
:func:`maybe_forwarded`), whatever their handler here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import cast

from kafkacore.protocol import ApiKey, ErrorCode, KafkaStruct
from kafkacore.server.group.consumer_handlers import CONSUMER_GROUP_HANDLERS
from kafkacore.server.group.handlers import GROUP_HANDLERS
from kafkacore.server.handlers.acls import (
    handle_create_acls,
    handle_delete_acls,
    handle_describe_acls,
)
from kafkacore.server.handlers.admin import (
    handle_alter_partition_reassignments,
    handle_elect_leaders,
    handle_list_partition_reassignments,
)
from kafkacore.server.handlers.cluster import (
    handle_api_versions,
    handle_describe_cluster,
    handle_find_coordinator,
    handle_init_producer_id,
    handle_metadata,
    shared_metadata_answer,
)
from kafkacore.server.handlers.configs import (
    handle_alter_configs,
    handle_describe_configs,
    handle_incremental_alter_configs,
)
from kafkacore.server.handlers.controller import (
    handle_allocate_producer_ids,
    handle_alter_partition,
    handle_controlled_shutdown,
)
from kafkacore.server.handlers.epochs import handle_offset_for_leader_epoch
from kafkacore.server.handlers.features import handle_update_features
from kafkacore.server.handlers.fetch import handle_fetch, handle_list_offsets
from kafkacore.server.handlers.logdirs import handle_describe_log_dirs
from kafkacore.server.handlers.produce import handle_produce
from kafkacore.server.handlers.quotas import (
    handle_alter_client_quotas,
    handle_alter_user_scram_credentials,
    handle_describe_client_quotas,
    handle_describe_user_scram_credentials,
)
from kafkacore.server.handlers.records import handle_delete_records
from kafkacore.server.handlers.replication import (
    handle_leader_and_isr,
    handle_stop_replica,
    handle_update_metadata,
)
from kafkacore.server.handlers.sasl import handle_sasl_authenticate, handle_sasl_handshake
from kafkacore.server.handlers.topics import (
    handle_create_partitions,
    handle_create_topics,
    handle_delete_topics,
)
from kafkacore.server.handlers.txn_markers import (
    handle_describe_producers,
    handle_write_txn_markers,
)
from kafkacore.server.handlers.unimplemented import (
    error_response,
    request_error_response,
    unimplemented_response,
)
from kafkacore.server.kraft.forwarding import FORWARDED_APIS, ForwardingFailed
from kafkacore.server.request_context import ApiHandler, Handler, HandlerResult, RequestContext
from kafkacore.server.services import BrokerServices, Forwarder
from kafkacore.server.share.handlers import SHARE_HANDLERS
from kafkacore.server.txn.handlers import TXN_HANDLERS

__all__ = [
    "HANDLERS",
    "SHARED_ANSWERS",
    "AnswerKey",
    "Handler",
    "error_response",
    "maybe_forwarded",
    "unimplemented_response",
]


def maybe_forwarded(handler: Handler) -> Handler:
    """``handler``, unless the broker forwards (KRaft): then the controller's answer, or
    the request answered with the forwarding's error (REQUEST_TIMED_OUT when the
    controller did not answer in time, UNKNOWN_SERVER_ERROR for an envelope error)."""

    def forward_or_handle(
        services: BrokerServices, context: RequestContext, request: KafkaStruct
    ) -> HandlerResult:
        forwarding = services.forwarding
        if forwarding is None:
            return handler(services, context, request)
        return _forward(forwarding, context, request)

    return forward_or_handle


def _kraft_only(
    services: BrokerServices, context: RequestContext, request: KafkaStruct
) -> KafkaStruct:
    """An API only a KRaft broker serves, asked of another: UNSUPPORTED_VERSION."""
    return request_error_response(context.header, request, ErrorCode.UNSUPPORTED_VERSION)


async def _forward(
    forwarding: Forwarder, context: RequestContext, request: KafkaStruct
) -> KafkaStruct:
    principal = context.principal
    try:
        return await forwarding.forward(
            context.header,
            request,
            principal.principal_type,
            principal.name,
            context.client_address,
        )
    except ForwardingFailed as failed:
        return request_error_response(context.header, request, failed.error_code)


def _by_api_key(handlers: Mapping[ApiKey, ApiHandler]) -> dict[ApiKey, Handler]:
    """The table as the channel calls it. Each handler takes its API's own request class
    and the codec decodes exactly that class for the key (``APIS[key].request``), so
    calling it with the decoded request is sound; the cast records that pairing once
    (Kafka's ``request.body[ProduceRequest]``)."""
    return cast("dict[ApiKey, Handler]", dict(handlers))


HANDLERS: dict[ApiKey, Handler] = _by_api_key(
    {
        ApiKey.PRODUCE: handle_produce,
        ApiKey.ALTER_PARTITION: handle_alter_partition,
        ApiKey.CONTROLLED_SHUTDOWN: handle_controlled_shutdown,
        ApiKey.ALLOCATE_PRODUCER_IDS: handle_allocate_producer_ids,
        ApiKey.FETCH: handle_fetch,
        ApiKey.LIST_OFFSETS: handle_list_offsets,
        ApiKey.METADATA: handle_metadata,
        ApiKey.FIND_COORDINATOR: handle_find_coordinator,
        ApiKey.API_VERSIONS: handle_api_versions,
        ApiKey.SASL_HANDSHAKE: handle_sasl_handshake,
        ApiKey.SASL_AUTHENTICATE: handle_sasl_authenticate,
        ApiKey.CREATE_TOPICS: handle_create_topics,
        ApiKey.DELETE_TOPICS: handle_delete_topics,
        ApiKey.DELETE_RECORDS: handle_delete_records,
        ApiKey.INIT_PRODUCER_ID: handle_init_producer_id,
        ApiKey.OFFSET_FOR_LEADER_EPOCH: handle_offset_for_leader_epoch,
        ApiKey.DESCRIBE_CONFIGS: handle_describe_configs,
        ApiKey.ALTER_CONFIGS: handle_alter_configs,
        ApiKey.DESCRIBE_LOG_DIRS: handle_describe_log_dirs,
        ApiKey.CREATE_PARTITIONS: handle_create_partitions,
        ApiKey.ELECT_LEADERS: handle_elect_leaders,
        ApiKey.INCREMENTAL_ALTER_CONFIGS: handle_incremental_alter_configs,
        ApiKey.ALTER_PARTITION_REASSIGNMENTS: handle_alter_partition_reassignments,
        ApiKey.LIST_PARTITION_REASSIGNMENTS: handle_list_partition_reassignments,
        ApiKey.UPDATE_FEATURES: handle_update_features,
        ApiKey.DESCRIBE_CLUSTER: handle_describe_cluster,
        ApiKey.DESCRIBE_CLIENT_QUOTAS: handle_describe_client_quotas,
        ApiKey.ALTER_CLIENT_QUOTAS: handle_alter_client_quotas,
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: handle_describe_user_scram_credentials,
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS: handle_alter_user_scram_credentials,
        ApiKey.LEADER_AND_ISR: handle_leader_and_isr,
        ApiKey.UPDATE_METADATA: handle_update_metadata,
        ApiKey.STOP_REPLICA: handle_stop_replica,
        ApiKey.DESCRIBE_ACLS: handle_describe_acls,
        ApiKey.CREATE_ACLS: handle_create_acls,
        ApiKey.DELETE_ACLS: handle_delete_acls,
        ApiKey.WRITE_TXN_MARKERS: handle_write_txn_markers,
        ApiKey.DESCRIBE_PRODUCERS: handle_describe_producers,
        # only a KRaft broker advertises this, and forwards it (maybe_forwarded below);
        # UpdateFeatures is every mode's (a KRaft broker forwards it too)
        ApiKey.DESCRIBE_QUORUM: _kraft_only,
        **GROUP_HANDLERS,
        **CONSUMER_GROUP_HANDLERS,
        **TXN_HANDLERS,
        **SHARE_HANDLERS,
    }
)


AnswerKey = Callable[[BrokerServices, RequestContext, KafkaStruct], "tuple[Hashable, ...] | None"]
"""``key(services, context, request)``: the key under which the request's answer may be
shared with other requests while the metadata cache does not change (``None``: not
shareable). The channel keeps such answers encoded."""

SHARED_ANSWERS: dict[ApiKey, AnswerKey] = cast(
    "dict[ApiKey, AnswerKey]", {ApiKey.METADATA: shared_metadata_answer}
)
for _key in FORWARDED_APIS:
    HANDLERS[_key] = maybe_forwarded(HANDLERS[_key])
