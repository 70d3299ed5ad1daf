"""The CreateAcls / DescribeAcls / DeleteAcls request pieces ACL tests build (raw frames),
and the ACLs of a DescribeAcls response as comparable rows. Codes are the wire values
(Kafka's ``ResourceType``, ``PatternType``, ``AclOperation``, ``AclPermissionType``)."""

from __future__ import annotations

from typing import Any

from kafkacore.protocol import APIS_BY_NAME

__all__ = ["acl_row", "acl_rows", "creation", "filter_fields"]

_Creation: Any = APIS_BY_NAME["CreateAcls"].request.cls.AclCreation

# resource types
TOPIC, GROUP, CLUSTER, TXN, TOKEN, USER = 2, 3, 4, 5, 6, 7
# pattern types (ANY also: any resource type, operation, permission)
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
# operations
ALL, READ, WRITE, CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, CREATE_TOKENS = 2, 3, 4, 5, 7, 8, 9, 13
# permission types
DENY, ALLOW = 2, 3


def creation(
    rtype: int = TOPIC,
    name: str = "orders",
    pattern: int = LITERAL,
    principal: str = "User:alice",
    host: str = "*",
    op: int = READ,
    perm: int = ALLOW,
) -> Any:
    """One CreateAcls ``AclCreation`` (by default: alice may READ the topic orders)."""
    return _Creation(
        resource_type=rtype,
        resource_name=name,
        resource_pattern_type=pattern,
        principal=principal,
        host=host,
        operation=op,
        permission_type=perm,
    )


def filter_fields(
    rtype: int = ANY,
    name: str | None = None,
    pattern: int = ANY,
    principal: str | None = None,
    host: str | None = None,
    op: int = ANY,
    perm: int = ANY,
) -> dict[str, Any]:
    """The fields of an ACL filter (DescribeAcls request, DeleteAcls filter); by default
    it matches every ACL."""
    return {
        "resource_type_filter": rtype,
        "resource_name_filter": name,
        "pattern_type_filter": pattern,
        "principal_filter": principal,
        "host_filter": host,
        "operation": op,
        "permission_type": perm,
    }


def acl_row(resource: Any, acl: Any) -> tuple[Any, ...]:
    """(resource type, name, pattern type, principal, host, operation, permission type) of
    one ACL of a response: its resource's fields and its own (a DeleteAcls matching ACL
    carries both: ``acl_row(m, m)``)."""
    return (
        resource.resource_type,
        resource.resource_name,
        resource.pattern_type,
        acl.principal,
        acl.host,
        acl.operation,
        acl.permission_type,
    )


def acl_rows(response: Any) -> set[tuple[Any, ...]]:
    """A DescribeAcls response's ACLs, as :func:`acl_row` each."""
    return {acl_row(r, a) for r in response.resources for a in r.acls}
