"""Request handlers: each takes ``(context, header, request)`` and returns the response
object (or an awaitable of it, for Fetch's delayed answer). No sockets, no bytes.

:data:`HANDLERS` maps API keys to handlers; an advertised API without one gets
:func:`~kafkacore.server.handlers.unimplemented.unimplemented_response`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkacore.protocol import RequestHeader
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
from kafkacore.server.handlers.context import BrokerContext
from kafkacore.server.handlers.epochs import handle_offset_for_leader_epoch
from kafkacore.server.handlers.fetch import handle_fetch, handle_list_offsets
from kafkacore.server.handlers.logdirs import handle_describe_log_dirs
from kafkacore.server.handlers.produce import handle_produce
from kafkacore.server.handlers.records import handle_delete_records
from kafkacore.server.handlers.topics import (
    handle_create_partitions,
    handle_create_topics,
    handle_delete_topics,
)
from kafkacore.server.handlers.unimplemented import error_response, unimplemented_response


def _group_handlers() -> dict[int, Handler]:
    from kafkacore.server.group.handlers import GROUP_HANDLERS

    return GROUP_HANDLERS


__all__ = ["HANDLERS", "BrokerContext", "Handler", "error_response", "unimplemented_response"]

Handler = Callable[[BrokerContext, RequestHeader, Any], Any]

HANDLERS: dict[int, Handler] = {
    0: handle_produce,
    1: handle_fetch,
    2: handle_list_offsets,
    3: handle_metadata,
    10: handle_find_coordinator,
    18: handle_api_versions,
    19: handle_create_topics,
    20: handle_delete_topics,
    21: handle_delete_records,
    22: handle_init_producer_id,
    23: handle_offset_for_leader_epoch,
    32: handle_describe_configs,
    33: handle_alter_configs,
    35: handle_describe_log_dirs,
    37: handle_create_partitions,
    43: handle_elect_leaders,
    44: handle_incremental_alter_configs,
    45: handle_alter_partition_reassignments,
    46: handle_list_partition_reassignments,
    60: handle_describe_cluster,
}
HANDLERS.update(_group_handlers())
