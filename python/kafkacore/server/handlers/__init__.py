"""Request handlers: each takes ``(services, context, request)`` - the
:class:`~kafkacore.server.services.BrokerServices`, the request's
:class:`~kafkacore.server.request_context.RequestContext` (header, connection,
principal) and the decoded body - and returns the response object, or an awaitable of it
(for work done on the I/O threads, or a delayed Fetch). No sockets, no bytes.

:data:`HANDLERS` maps API keys to handlers; an advertised API without one gets
:func:`~kafkacore.server.handlers.unimplemented.unimplemented_response`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from kafkacore.protocol import ApiKey
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
from kafkacore.server.handlers.unimplemented import error_response, unimplemented_response
from kafkacore.server.request_context import ApiHandler, Handler
from kafkacore.server.share.handlers import SHARE_HANDLERS
from kafkacore.server.txn.handlers import TXN_HANDLERS

__all__ = ["HANDLERS", "Handler", "error_response", "unimplemented_response"]


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
        **GROUP_HANDLERS,
        **CONSUMER_GROUP_HANDLERS,
        **TXN_HANDLERS,
        **SHARE_HANDLERS,
    }
)
