"""The Security view (``/security``): the cluster's ACLs (list, create, delete), its SCRAM
users (list, create or change a password, delete) and its client quotas (list).

ACLs: DescribeAcls with a match-anything filter, CreateAcls, DeleteAcls with the exact
binding as filter. SCRAM users: DescribeUserScramCredentials / AlterUserScramCredentials
(the client salts and hashes the password; the cluster never sees it). Quotas:
DescribeClientQuotas v1 with an empty, non-strict filter (every entity), sent on a
connection of its own (confluent-kafka has no quota API). All as the logged-in user, so
the cluster's authorizer decides (Describe/Alter on the cluster); a refusal is shown as
Kafka's error.

Thread-safety: blocking client calls run on the console's pool.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from kafkacore.console.context import console_of, kafka_admin
from kafkacore.console.views.topics import _error_text

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = ["NAV", "routes"]

NAV: tuple[str, str] | None = ("Security", "/security")

RESOURCE_TYPES = ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER")
PATTERN_TYPES = ("LITERAL", "PREFIXED")
OPERATIONS = (
    "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
    "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
)  # fmt: skip
PERMISSIONS = ("ALLOW", "DENY")
ACL_FIELDS = ("resource_type", "name", "pattern", "principal", "host", "operation", "permission")
"""The form fields of an ACL (and the audit record's detail)."""
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM_ITERATIONS = 4096
_DONE = {
    "acl": "ACL created.",
    "acl-deleted": "ACL deleted.",
    "user": "SCRAM credential saved.",
    "user-deleted": "SCRAM credential deleted.",
}


def _acls(admin: Any) -> list[dict[str, str]]:
    ck = kafka_admin()
    match_all = ck.AclBindingFilter(
        ck.ResourceType.ANY, None, ck.ResourcePatternType.ANY, None, None,
        ck.AclOperation.ANY, ck.AclPermissionType.ANY,
    )  # fmt: skip
    bindings = admin.describe_acls(match_all, request_timeout=10).result()
    rows = [
        {
            "resource_type": b.restype.name,
            "name": b.name,
            "pattern": b.resource_pattern_type.name,
            "principal": b.principal,
            "host": b.host,
            "operation": b.operation.name,
            "permission": b.permission_type.name,
        }
        for b in bindings
    ]
    rows.sort(key=lambda r: (r["resource_type"], r["name"], r["principal"], r["operation"]))
    return rows


def _binding(form: dict[str, str], *, as_filter: bool = False) -> Any:
    ck = kafka_admin()
    cls = ck.AclBindingFilter if as_filter else ck.AclBinding
    resource_type = form.get("resource_type", "TOPIC")
    name = form.get("name", "").strip()
    if resource_type == "CLUSTER":
        name = "kafka-cluster"
    principal = form.get("principal", "").strip()
    if not principal.startswith("User:") and ":" not in principal:
        principal = f"User:{principal}"
    pattern = ck.ResourcePatternType[form.get("pattern", "LITERAL")]
    return cls(
        ck.ResourceType[resource_type], name, pattern, principal,
        form.get("host", "").strip() or "*",
        ck.AclOperation[form.get("operation", "READ")],
        ck.AclPermissionType[form.get("permission", "ALLOW")],
    )  # fmt: skip


def _scram_users(admin: Any) -> tuple[list[dict[str, Any]], str | None]:
    ck = kafka_admin()
    try:
        described = admin.describe_user_scram_credentials(request_timeout=10).result(15)
    except Exception as exc:
        return [], _error_text(exc)
    users = []
    for user, description in sorted(described.items()):
        mechanisms = [
            f"{str(ck.ScramMechanism(i.mechanism).name).replace('_', '-')} "
            f"(iterations {i.iterations})"
            for i in description.scram_credential_infos
        ]
        users.append({"user": user, "mechanisms": mechanisms})
    return users, None


async def _quotas(ctx: ConsoleContext, request: Request) -> tuple[list[dict[str, Any]], str | None]:
    from kafkacore.protocol import APIS_BY_NAME, ErrorCode

    req = APIS_BY_NAME["DescribeClientQuotas"].request.cls(components=[], strict=False)
    try:
        answer = await ctx.raw_request(request, "DESCRIBE_CLIENT_QUOTAS", 1, req)
    except Exception as exc:
        return [], f"DescribeClientQuotas failed: {exc}"
    if answer.error_code != ErrorCode.NONE:
        return [], f"{ErrorCode(answer.error_code).name}: {answer.error_message or ''}"
    rows = []
    for entry in answer.entries or []:
        entity = ", ".join(
            f"{e.entity_type}={e.entity_name if e.entity_name is not None else '<default>'}"
            for e in entry.entity
        )
        for value in sorted(entry.values, key=lambda v: v.key):
            rows.append({"entity": entity, "key": value.key, "value": value.value})
    rows.sort(key=lambda r: (r["entity"], r["key"]))
    return rows, None


async def page(request: Request, error: str | None = None, status: int = 200) -> Response:
    ctx = console_of(request)
    admin = ctx.admin(request)
    try:
        acls, acl_error = await ctx.run_io(_acls, admin), None
    except Exception as exc:
        acls, acl_error = [], _error_text(exc)
    users, user_error = await ctx.run_io(_scram_users, admin)
    quotas, quota_error = await _quotas(ctx, request)
    return ctx.render(
        request,
        "security.html",
        status_code=status,
        acls=acls,
        acl_error=acl_error,
        users=users,
        user_error=user_error,
        quotas=quotas,
        quota_error=quota_error,
        resource_types=RESOURCE_TYPES,
        pattern_types=PATTERN_TYPES,
        operations=OPERATIONS,
        permissions=PERMISSIONS,
        mechanisms=SCRAM_MECHANISMS,
        done=_DONE.get(request.query_params.get("done", "")),
        error=error,
    )


async def act(
    request: Request, action: str, detail: dict[str, Any], call: Any, done: str
) -> Response:
    ctx = console_of(request)
    try:
        futures = call()
        for future in futures.values() if isinstance(futures, dict) else [futures]:
            result = await ctx.run_io(future.result, 20)
            if isinstance(result, list) and action == "acl.delete" and not result:
                raise ValueError("no such ACL")
    except Exception as exc:
        error = _error_text(exc)
        await ctx.audit(request, action, detail, result=error)
        return await page(request, error=f"{action}: {error}", status=400)
    audited = await ctx.audit(request, action, detail)
    flag = "" if audited else "&audit=failed"
    return RedirectResponse(f"/security?done={done}{flag}", status_code=303)


async def acl_create(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    admin = ctx.admin(request)
    detail = {k: form.get(k, "") for k in ACL_FIELDS}
    return await act(
        request, "acl.create", detail,
        lambda: admin.create_acls([_binding(form)], request_timeout=15), "acl",
    )  # fmt: skip


async def acl_delete(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    admin = ctx.admin(request)
    detail = {k: form.get(k, "") for k in ACL_FIELDS}
    return await act(
        request, "acl.delete", detail,
        lambda: admin.delete_acls([_binding(form, as_filter=True)], request_timeout=15),
        "acl-deleted",
    )  # fmt: skip


async def user_upsert(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    ck = kafka_admin()
    user = form.get("user", "").strip()
    mechanism = form.get("mechanism", "SCRAM-SHA-256")
    iterations = int(form.get("iterations") or SCRAM_ITERATIONS)
    password = form.get("password", "")
    admin = ctx.admin(request)
    info = ck.ScramCredentialInfo(ck.ScramMechanism[mechanism.replace("-", "_")], iterations)
    change = ck.UserScramCredentialUpsertion(user, info, password.encode(), secrets.token_bytes(32))
    return await act(
        request, "scram.upsert",
        {"user": user, "mechanism": mechanism, "iterations": iterations},
        lambda: admin.alter_user_scram_credentials([change], request_timeout=15), "user",
    )  # fmt: skip


async def user_delete(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    ck = kafka_admin()
    user = form.get("user", "").strip()
    mechanism = form.get("mechanism", "SCRAM-SHA-256")
    admin = ctx.admin(request)
    change = ck.UserScramCredentialDeletion(user, ck.ScramMechanism[mechanism.replace("-", "_")])
    return await act(
        request, "scram.delete", {"user": user, "mechanism": mechanism},
        lambda: admin.alter_user_scram_credentials([change], request_timeout=15),
        "user-deleted",
    )  # fmt: skip


async def get_page(request: Request) -> Response:
    return await page(request)


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    return [
        Route("/security", get_page, methods=["GET"]),
        Route("/security/acls/create", acl_create, methods=["POST"]),
        Route("/security/acls/delete", acl_delete, methods=["POST"]),
        Route("/security/users/upsert", user_upsert, methods=["POST"]),
        Route("/security/users/delete", user_delete, methods=["POST"]),
    ]
