"""Request handlers: each takes ``(context, header, request)`` and returns the response
object (or an awaitable of it, for Fetch's delayed answer). No sockets, no bytes.

:data:`HANDLERS` maps API keys to handlers; an advertised API without one gets
:func:`~kafkacore.server.handlers.unimplemented.unimplemented_response`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkacore.protocol import RequestHeader
from kafkacore.server.handlers.cluster import (
    handle_api_versions,
    handle_describe_cluster,
    handle_find_coordinator,
    handle_init_producer_id,
    handle_metadata,
)
from kafkacore.server.handlers.context import BrokerContext
from kafkacore.server.handlers.fetch import handle_fetch, handle_list_offsets
from kafkacore.server.handlers.produce import handle_produce
from kafkacore.server.handlers.topics import (
    handle_create_partitions,
    handle_create_topics,
    handle_delete_topics,
)
from kafkacore.server.handlers.unimplemented import error_response, unimplemented_response

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
    22: handle_init_producer_id,
    37: handle_create_partitions,
    60: handle_describe_cluster,
}
