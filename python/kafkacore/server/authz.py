"""What the request handlers ask the authorizer (Kafka's ``AuthHelper``).

Every helper takes the :class:`~kafkacore.server.services.BrokerServices` and the request's
:class:`~kafkacore.server.request_context.RequestContext` and asks
``services.authorizer`` for ``(str(context.principal), context.client_address)``. With no
authorizer (``services.authorizer is None``, no ``authorizer.class.name``) everything is
allowed and the helpers return at once: the plaintext hot path pays one attribute read.

* :func:`authorize` - one action on one resource (``AuthHelper.authorize``);
* :func:`authorize_cluster` - an operation on the ``kafka-cluster`` resource;
* :func:`filter_authorized` - the names of a batch that pass (``filterByAuthorized``,
  each distinct name asked once); :func:`allowed_topics` - the same for topics, None when
  there is no authorizer;
* :func:`authorize_by_resource_type` - the operation on *some* resource of a type
  (InitProducerId without a transactional id: WRITE on any topic);
* :func:`authorized_operations` - the ``*_authorized_operations`` bit set: bit ``code`` set
  for each operation the resource type supports that is allowed (``Utils.to32BitField``);
  :data:`NOT_REQUESTED` (INT32_MIN) is the schema default when the client did not ask;
* :func:`java_host_address` - the client address as Kafka writes it, so that an ACL
  host for an IPv6 client (``0:0:0:0:0:0:0:1``) matches as on Kafka;
* :func:`cluster_denied` - the CLUSTER_AUTHORIZATION_FAILED response of a request that
  needs one cluster operation as a whole (the inter-broker APIs' ``authorizeClusterOperation``);
* :func:`requires_cluster` - a handler decorator that answers with :func:`cluster_denied`'s
  response before the handler runs.

Thread-safety: as the authorizer's; handlers call these on the event loop.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from kafkacore.protocol import APIS, ErrorCode, KafkaStruct
from kafkacore.security.acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    AclOperation,
    AuthorizationResult,
    Authorizer,
    ResourceType,
)
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "NOT_REQUESTED",
    "allowed_topics",
    "authorize",
    "authorize_by_resource_type",
    "authorize_cluster",
    "authorized_operations",
    "cluster_authorized_operations",
    "cluster_denied",
    "enabled",
    "filter_authorized",
    "java_host_address",
    "requires_cluster",
]

NOT_REQUESTED = -(2**31)
"""The ``*_authorized_operations`` value when the client did not ask for them."""

_ALL_BITS: dict[ResourceType, int] = {
    rt: sum(1 << op for op in ops) for rt, ops in SUPPORTED_OPERATIONS.items()
}


@functools.lru_cache(maxsize=1024)
def java_host_address(address: str) -> str:
    """``address`` as Kafka's ``InetAddress.getHostAddress`` writes it, the form ACL hosts
    are compared with: IPv4 unchanged; an IPv4-mapped IPv6 address as its IPv4 address
    (Java makes it an ``Inet4Address``); other IPv6 addresses as eight hex groups without
    leading zeros or ``::`` compression (``0:0:0:0:0:0:0:1``), any ``%scope`` kept."""
    if ":" not in address:
        return address
    base, percent, scope = address.partition("%")
    try:
        ip = ipaddress.IPv6Address(base)
    except ValueError:
        return address
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    groups = ":".join(format(int(g, 16), "x") for g in ip.exploded.split(":"))
    return groups + percent + scope


def _host(context: RequestContext) -> str:
    return java_host_address(context.client_address)


def _authorizer(services: BrokerServices) -> Authorizer | None:
    # stand-in services (unit tests' fakes without the field) have no authorizer
    return getattr(services, "authorizer", None)


def enabled(services: BrokerServices) -> bool:
    """Is an authorizer configured? (False: every request is allowed.)"""
    return getattr(services, "authorizer", None) is not None


def authorize(
    services: BrokerServices,
    context: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str | None,
) -> bool:
    """May the request's principal, from its address, do ``operation`` on the resource?
    A null name (Kafka passes it through) never matches a named ACL."""
    authorizer = _authorizer(services)
    if authorizer is None:
        return True
    return authorizer.allowed(
        str(context.principal), _host(context), operation, resource_type, name or ""
    )


def authorize_cluster(
    services: BrokerServices, context: RequestContext, operation: AclOperation
) -> bool:
    authorizer = _authorizer(services)
    if authorizer is None:
        return True
    return authorizer.allowed(
        str(context.principal),
        _host(context),
        operation,
        ResourceType.CLUSTER,
        CLUSTER_NAME,
    )


def filter_authorized(
    services: BrokerServices,
    context: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
    names: Iterable[str],
) -> set[str]:
    """The names among ``names`` the principal may do ``operation`` on (all of them with
    no authorizer)."""
    authorizer = _authorizer(services)
    wanted = set(names)
    if authorizer is None:
        return wanted
    principal, host = str(context.principal), _host(context)
    return {
        name
        for name in wanted
        if authorizer.allowed(principal, host, operation, resource_type, name)
    }


def allowed_topics(
    services: BrokerServices, context: RequestContext, operation: AclOperation, names: Iterable[str]
) -> set[str] | None:
    """The topics among ``names`` the principal may do ``operation`` on; None with no
    authorizer (every topic is allowed: the handler need not look)."""
    if not enabled(services):
        return None
    return filter_authorized(services, context, operation, ResourceType.TOPIC, names)


def authorize_by_resource_type(
    services: BrokerServices,
    context: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
) -> bool:
    authorizer = _authorizer(services)
    if authorizer is None:
        return True
    result = authorizer.authorize_by_resource_type(
        str(context.principal), _host(context), operation, resource_type
    )
    return result is AuthorizationResult.ALLOWED


def authorized_operations(
    services: BrokerServices,
    context: RequestContext,
    resource_type: ResourceType,
    name: str,
) -> int:
    """The 32-bit field of the allowed operations among those ``resource_type`` supports
    (every supported one with no authorizer)."""
    authorizer = _authorizer(services)
    if authorizer is None:
        return _ALL_BITS[resource_type]
    principal, host = str(context.principal), _host(context)
    bits = 0
    for operation in SUPPORTED_OPERATIONS[resource_type]:
        if authorizer.allowed(principal, host, operation, resource_type, name):
            bits |= 1 << operation
    return bits


def cluster_authorized_operations(services: BrokerServices, context: RequestContext) -> int:
    """Metadata v8-10 / DescribeCluster when asked: 0 without DESCRIBE on the cluster,
    else the bit set (Kafka asks DESCRIBE first)."""
    if not authorize_cluster(services, context, AclOperation.DESCRIBE):
        return 0
    return authorized_operations(services, context, ResourceType.CLUSTER, CLUSTER_NAME)


def cluster_denied(
    services: BrokerServices, context: RequestContext, operation: AclOperation
) -> KafkaStruct | None:
    """None when allowed; else the request's CLUSTER_AUTHORIZATION_FAILED response (top
    level error, empty lists)."""
    if authorize_cluster(services, context, operation):
        return None
    cls: type[KafkaStruct] = APIS[context.header.api_key].response.cls
    if "error_code" in cls.__slots__:
        return cls(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    return cls()


Req = TypeVar("Req", bound=KafkaStruct)


def requires_cluster(
    operation: AclOperation,
) -> Callable[
    [Callable[[BrokerServices, RequestContext, Req], Awaitable[KafkaStruct]]],
    Callable[[BrokerServices, RequestContext, Req], Awaitable[KafkaStruct]],
]:
    """Decorates a handler whose request as a whole needs *operation* on the cluster: a
    refused request gets :func:`cluster_denied`'s response and the handler does not run."""

    def decorate(
        handler: Callable[[BrokerServices, RequestContext, Req], Awaitable[KafkaStruct]],
    ) -> Callable[[BrokerServices, RequestContext, Req], Awaitable[KafkaStruct]]:
        @functools.wraps(handler)
        async def checked(
            services: BrokerServices, context: RequestContext, request: Req
        ) -> KafkaStruct:
            denied = cluster_denied(services, context, operation)
            if denied is not None:
                return denied
            return await handler(services, context, request)

        return checked

    return decorate
