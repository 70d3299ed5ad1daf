"""CreateAcls (30), DescribeAcls (29) and DeleteAcls (31), v1-3, as Kafka's ``AclApis``
answers them (with KRaft's ``AclControlManager`` validation on a single node, and
``AclAuthorizer``'s ZooKeeper storage in cluster mode, through the metadata store).

* No authorizer configured: DescribeAcls answers SECURITY_DISABLED "No Authorizer is
  configured on the broker"; CreateAcls/DeleteAcls SECURITY_DISABLED "No Authorizer is
  configured." in every creation / filter result.
* CLUSTER ALTER is needed to create or delete ACLs and CLUSTER DESCRIBE to describe them;
  without it CLUSTER_AUTHORIZATION_FAILED (31) in every result (DescribeAcls: top-level).
* CreateAcls: a binding Kafka cannot even build (resource type ANY, pattern type ANY or
  MATCH, operation or permission ANY) fails the whole request with UNKNOWN_SERVER_ERROR
  (Kafka's ``IllegalArgumentException`` in ``ResourcePattern``/``AccessControlEntry``);
  UNKNOWN values (code 0 or unknown codes) are INVALID_REQUEST per creation (Kafka refuses
  to parse such a request and closes the connection); the CLUSTER resource must be named
  ``kafka-cluster`` and names may not be empty (INVALID_REQUEST, Kafka's messages); in
  cluster mode ZooKeeper cannot hold a name with ``/`` (INVALID_REQUEST "Failed to create
  ACL", as ``AclAuthorizer``). Creating an existing ACL succeeds.
* DescribeAcls: every ACL the filter matches, grouped by resource pattern.
* DeleteAcls: per filter, every ACL it matched and deleted (a binding matched by two
  filters is listed under both, as KRaft's ``AclControlManager`` lists it); a filter with
  an UNKNOWN part is INVALID_REQUEST "Unknown patternFilter." / "Unknown entryFilter.".

Writes run on the I/O threads: the metadata store persists them (file or ZooKeeper)
before the answer, and every broker's authorizer applies them.
"""

from __future__ import annotations

import enum
import logging
from collections import defaultdict
from collections.abc import Awaitable
from typing import TypeVar

from kafkacore.protocol import ErrorCode
from kafkacore.protocol.errors import message as default_message
from kafkacore.protocol.messages.create_acls import CreateAclsRequest, CreateAclsResponse
from kafkacore.protocol.messages.delete_acls import DeleteAclsRequest, DeleteAclsResponse
from kafkacore.protocol.messages.describe_acls import DescribeAclsRequest, DescribeAclsResponse
from kafkacore.security.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    InvalidAclError,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "acl_binding_filter",
    "handle_create_acls",
    "handle_delete_acls",
    "handle_describe_acls",
]

logger = logging.getLogger("kafkacore.server.acls")


NO_AUTHORIZER_DESCRIBE = "No Authorizer is configured on the broker"
NO_AUTHORIZER = "No Authorizer is configured."

_E = TypeVar("_E", bound=enum.IntEnum)


def _enum(cls: type[_E], code: int) -> _E:
    """Kafka's ``fromCode``: an unknown code is UNKNOWN."""
    try:
        return cls(code)
    except ValueError:
        return cls(0)


def _cluster_allowed(
    services: BrokerServices, context: RequestContext, operation: AclOperation
) -> bool:
    authorizer = services.authorizer
    if authorizer is None:
        return True
    return authorizer.allowed(
        str(context.principal),
        context.client_address,
        operation,
        ResourceType.CLUSTER,
        CLUSTER_NAME,
    )


def _denied_message() -> str | None:
    return default_message(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)


# -- CreateAcls -----------------------------------------------------------------------------


class _Unbuildable(Exception):
    """Kafka cannot build an ``AclBinding`` of this creation: the whole request fails."""


def _binding(creation: CreateAclsRequest.AclCreation) -> AclBinding:
    """The creation as a binding, or InvalidAclError (INVALID_REQUEST, this creation only)
    or _Unbuildable (UNKNOWN_SERVER_ERROR, the whole request)."""
    resource_type = _enum(ResourceType, creation.resource_type)
    pattern_type = _enum(PatternType, creation.resource_pattern_type)
    operation = _enum(AclOperation, creation.operation)
    permission = _enum(AclPermissionType, creation.permission_type)
    if resource_type is ResourceType.ANY:
        raise _Unbuildable("resourceType must not be ANY")
    if pattern_type in (PatternType.ANY, PatternType.MATCH):
        raise _Unbuildable(f"patternType must not be {pattern_type.name}")
    if operation is AclOperation.ANY:
        raise _Unbuildable("operation must not be ANY")
    if permission is AclPermissionType.ANY:
        raise _Unbuildable("permissionType must not be ANY")
    pattern = ResourcePattern(resource_type, creation.resource_name, pattern_type)
    entry = AccessControlEntry(creation.principal, creation.host, operation, permission)
    # AclApis.handleCreateAcls, then AclControlManager.validateNewAcl
    if resource_type is ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        raise InvalidAclError(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if not pattern.name:
        raise InvalidAclError("Invalid empty resource name")
    if resource_type is ResourceType.UNKNOWN:
        raise InvalidAclError(f"Invalid resourceType {resource_type.name}")
    if pattern_type is PatternType.UNKNOWN:
        raise InvalidAclError(f"Invalid patternType {pattern_type.name}")
    if operation is AclOperation.UNKNOWN:
        raise InvalidAclError(f"Invalid operation {operation.name}")
    if permission is AclPermissionType.UNKNOWN:
        raise InvalidAclError(f"Invalid permissionType {permission.name}")
    if ":" not in entry.principal:
        raise InvalidAclError(
            f"Could not parse principal from `{entry.principal}` (no colon is present "
            "separating the principal type from the principal name)"
        )
    entry.validate()
    return AclBinding(pattern, entry)


def _create_all(
    services: BrokerServices, creations: list[CreateAclsRequest.AclCreation]
) -> list[tuple[int, str | None]]:
    # Kafka leaves a success's message at the schema default: an empty string
    results: list[tuple[int, str | None]] = [(ErrorCode.NONE, "")] * len(creations)
    by_pattern: dict[ResourcePattern, list[tuple[int, AccessControlEntry]]] = defaultdict(list)
    for index, creation in enumerate(creations):
        try:
            binding = _binding(creation)
        except _Unbuildable as exc:
            logger.debug("CreateAcls refused: %s", exc)
            return [(ErrorCode.UNKNOWN_SERVER_ERROR, None)] * len(creations)
        except InvalidAclError as exc:
            results[index] = (ErrorCode.INVALID_REQUEST, str(exc))
            continue
        by_pattern[binding.pattern].append((index, binding.entry))
    store = services.metadata_store
    for pattern, items in by_pattern.items():
        entries = frozenset(entry for _, entry in items)

        def add(
            current: frozenset[AccessControlEntry],
            entries: frozenset[AccessControlEntry] = entries,
        ) -> frozenset[AccessControlEntry]:
            return current | entries

        try:
            store.update_acls(pattern, add)
        except InvalidAclError:
            for index, _ in items:
                results[index] = (ErrorCode.INVALID_REQUEST, "Failed to create ACL")
        except Exception:
            logger.exception("Could not create ACLs for %s", pattern)
            for index, _ in items:
                results[index] = (ErrorCode.UNKNOWN_SERVER_ERROR, None)
    return results


async def _create(services: BrokerServices, request: CreateAclsRequest) -> CreateAclsResponse:
    results = await services.run_io(_create_all, services, list(request.creations))
    return CreateAclsResponse(
        results=[
            CreateAclsResponse.AclCreationResult(error_code=c, error_message=m) for c, m in results
        ]
    )


def handle_create_acls(
    services: BrokerServices, context: RequestContext, request: CreateAclsRequest
) -> CreateAclsResponse | Awaitable[CreateAclsResponse]:
    def every(code: int, text: str | None) -> CreateAclsResponse:
        item = CreateAclsResponse.AclCreationResult
        results = [item(error_code=code, error_message=text) for _ in request.creations]
        return CreateAclsResponse(results=results)

    if not _cluster_allowed(services, context, AclOperation.ALTER):
        return every(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, _denied_message())
    if services.authorizer is None:
        return every(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    return _create(services, request)


# -- DescribeAcls ---------------------------------------------------------------------------


def acl_binding_filter(
    item: DescribeAclsRequest | DeleteAclsRequest.DeleteAclsFilter, *, delete: bool
) -> AclBindingFilter:
    """A Describe/Delete filter. A part sent as 0 (UNKNOWN) makes Kafka refuse to parse
    the request (it closes the connection; here: INVALID_REQUEST). An unknown code reads
    as UNKNOWN: it matches nothing in DescribeAcls, and DeleteAcls refuses the filter
    (``AclControlManager.validateFilter``)."""
    codes = (item.resource_type_filter, item.pattern_type_filter, item.operation)
    if 0 in (*codes, item.permission_type):
        raise InvalidAclError("The filter contains UNKNOWN elements")
    pattern = ResourcePatternFilter(
        _enum(ResourceType, item.resource_type_filter),
        item.resource_name_filter,
        _enum(PatternType, item.pattern_type_filter),
    )
    entry = AccessControlEntryFilter(
        item.principal_filter,
        item.host_filter,
        _enum(AclOperation, item.operation),
        _enum(AclPermissionType, item.permission_type),
    )
    if delete:
        if ResourceType.UNKNOWN is pattern.resource_type or (
            pattern.pattern_type is PatternType.UNKNOWN
        ):
            raise InvalidAclError("Unknown patternFilter.")
        if entry.operation is AclOperation.UNKNOWN or (
            entry.permission_type is AclPermissionType.UNKNOWN
        ):
            raise InvalidAclError("Unknown entryFilter.")
    return AclBindingFilter(pattern, entry)


def _resources(bindings: list[AclBinding]) -> list[DescribeAclsResponse.DescribeAclsResource]:
    grouped: dict[ResourcePattern, list[AccessControlEntry]] = defaultdict(list)
    for binding in bindings:
        grouped[binding.pattern].append(binding.entry)
    return [
        DescribeAclsResponse.DescribeAclsResource(
            resource_type=pattern.resource_type,
            resource_name=pattern.name,
            pattern_type=pattern.pattern_type,
            acls=[
                DescribeAclsResponse.AclDescription(
                    principal=e.principal,
                    host=e.host,
                    operation=e.operation,
                    permission_type=e.permission_type,
                )
                for e in sorted(entries)
            ],
        )
        for pattern, entries in sorted(grouped.items())
    ]


def handle_describe_acls(
    services: BrokerServices, context: RequestContext, request: DescribeAclsRequest
) -> DescribeAclsResponse:
    if not _cluster_allowed(services, context, AclOperation.DESCRIBE):
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return DescribeAclsResponse(error_code=code, error_message=_denied_message(), resources=[])
    authorizer = services.authorizer
    if authorizer is None:
        code = ErrorCode.SECURITY_DISABLED
        return DescribeAclsResponse(
            error_code=code, error_message=NO_AUTHORIZER_DESCRIBE, resources=[]
        )
    try:
        binding_filter = acl_binding_filter(request, delete=False)
    except InvalidAclError as exc:
        return DescribeAclsResponse(
            error_code=ErrorCode.INVALID_REQUEST, error_message=str(exc), resources=[]
        )
    bindings = authorizer.store.describe(binding_filter)
    return DescribeAclsResponse(
        error_code=ErrorCode.NONE, error_message="", resources=_resources(bindings)
    )


# -- DeleteAcls -----------------------------------------------------------------------------


def _matches_at_most_one(pattern: ResourcePatternFilter) -> ResourcePattern | None:
    """The one pattern a filter can match (Kafka's ``matchesAtMostOne``), else None."""
    if (
        pattern.resource_type not in (ResourceType.ANY, ResourceType.UNKNOWN)
        and pattern.name is not None
        and pattern.pattern_type.is_specific
    ):
        return ResourcePattern(pattern.resource_type, pattern.name, pattern.pattern_type)
    return None


def _delete_all(
    services: BrokerServices, items: list[DeleteAclsRequest.DeleteAclsFilter]
) -> list[DeleteAclsResponse.DeleteAclsFilterResult]:
    filters: list[tuple[int, AclBindingFilter]] = []
    errors: dict[int, str] = {}
    for index, item in enumerate(items):
        try:
            filters.append((index, acl_binding_filter(item, delete=True)))
        except InvalidAclError as exc:
            errors[index] = str(exc)
    store = services.metadata_store
    candidates = set(store.acls())
    for _, f in filters:
        exact = _matches_at_most_one(f.pattern)
        if exact is not None:
            candidates.add(exact)
    deleted: dict[int, list[AclBinding]] = defaultdict(list)
    failed: dict[int, str | None] = {}
    for pattern in sorted(candidates):
        matching = [(i, f) for i, f in filters if f.pattern.matches(pattern)]
        if not matching:
            continue
        found: dict[int, list[AclBinding]] = {}

        def update(
            current: frozenset[AccessControlEntry],
            pattern: ResourcePattern = pattern,
            matching: list[tuple[int, AclBindingFilter]] = matching,
            found: dict[int, list[AclBinding]] = found,
        ) -> frozenset[AccessControlEntry]:
            found.clear()  # the store may call this again after a lost race
            removed = set()
            for entry in sorted(current):
                for index, f in matching:
                    if f.entry.matches(entry):
                        found.setdefault(index, []).append(AclBinding(pattern, entry))
                        removed.add(entry)
            return current - removed

        try:
            store.update_acls(pattern, update)
        except Exception:
            logger.exception("Could not delete ACLs of %s", pattern)
            for index, _ in matching:
                failed[index] = None
            continue
        for index, bindings in found.items():
            deleted[index].extend(bindings)
    results = []
    for index in range(len(items)):
        code: int
        text: str | None
        acls: list[AclBinding]
        if index in errors:
            code, text, acls = ErrorCode.INVALID_REQUEST, errors[index], []
        elif index in failed:
            code, text, acls = ErrorCode.UNKNOWN_SERVER_ERROR, failed[index], []
        else:
            code, text, acls = ErrorCode.NONE, None, deleted.get(index, [])
        results.append(
            DeleteAclsResponse.DeleteAclsFilterResult(
                error_code=code,
                error_message=text,
                matching_acls=[
                    DeleteAclsResponse.DeleteAclsMatchingAcl(
                        error_code=ErrorCode.NONE,
                        error_message=None,
                        resource_type=b.pattern.resource_type,
                        resource_name=b.pattern.name,
                        pattern_type=b.pattern.pattern_type,
                        principal=b.entry.principal,
                        host=b.entry.host,
                        operation=b.entry.operation,
                        permission_type=b.entry.permission_type,
                    )
                    for b in acls
                ],
            )
        )
    return results


async def _delete(services: BrokerServices, request: DeleteAclsRequest) -> DeleteAclsResponse:
    results = await services.run_io(_delete_all, services, list(request.filters))
    return DeleteAclsResponse(filter_results=results)


def handle_delete_acls(
    services: BrokerServices, context: RequestContext, request: DeleteAclsRequest
) -> DeleteAclsResponse | Awaitable[DeleteAclsResponse]:
    def every(code: int, text: str | None) -> DeleteAclsResponse:
        item = DeleteAclsResponse.DeleteAclsFilterResult
        return DeleteAclsResponse(
            filter_results=[
                item(error_code=code, error_message=text, matching_acls=[]) for _ in request.filters
            ]
        )

    if not _cluster_allowed(services, context, AclOperation.ALTER):
        return every(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, _denied_message())
    if services.authorizer is None:
        return every(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    return _delete(services, request)
