"""DescribeClientQuotas v0-1 and AlterClientQuotas v0-1 (KIP-546), as Kafka's
``ZkAdminManager`` answers them in ZooKeeper mode.

* Entities: ``user``, ``client-id`` (alone or together) and ``ip``; a null name is the
  default entity. Stored through the metadata store at Kafka's ``/config`` paths
  (:mod:`kafkacore.server.client_quotas`), so every broker of a cluster applies them.
* AlterClientQuotas: each entry succeeds or fails alone; a key the entity type does not
  have is INVALID_REQUEST ``Invalid configuration key <k>``; a LONG quota given a
  fractional value is INVALID_REQUEST; ``validate_only`` checks and writes nothing.
* DescribeClientQuotas: filter components match an exact name (0), the default (1) or any
  name (2); with ``strict`` an entity must have no other type than the components'.
  A repeated entity type, or ``ip`` with ``user``/``client-id``, is INVALID_REQUEST; an
  unknown entity type UNSUPPORTED_VERSION (Kafka's "Custom entity type ... not supported").
* DescribeUserScramCredentials v0 (KIP-554; ``kafka-configs --describe --entity-type users``
  sends it): the SCRAM credentials stored with a user's quotas (``SCRAM-SHA-256`` /
  ``SCRAM-SHA-512`` keys of ``/config/users/<user>``, as Kafka stores them); a named user
  without any is RESOURCE_NOT_FOUND, a user named twice DUPLICATE_RESOURCE.
"""

from __future__ import annotations

import logging
import threading

from kafkacore.protocol import ErrorCode
from kafkacore.protocol.errors import message as default_message
from kafkacore.protocol.messages.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
)
from kafkacore.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
)
from kafkacore.protocol.messages.describe_client_quotas import (
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
from kafkacore.protocol.messages.describe_user_scram_credentials import (
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from kafkacore.security.acl import AclOperation
from kafkacore.security.scram import ScramMechanism, credential_from_salted_password
from kafkacore.server import authz
from kafkacore.server.client_quotas import (
    CLIENT_ID,
    CLIENT_QUOTA_KEYS,
    IP,
    IP_QUOTA_KEYS,
    USER,
    QuotaEntityError,
    entity_from_path,
    entity_path,
    sanitize,
    stored_quota_value,
)
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "handle_alter_client_quotas",
    "handle_alter_user_scram_credentials",
    "handle_describe_client_quotas",
    "handle_describe_user_scram_credentials",
]

SCRAM_MECHANISMS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}

logger = logging.getLogger("kafkacore.quotas")

MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2
_ENTITY_ORDER = {USER: 0, CLIENT_ID: 1, IP: 2}
# read-modify-write of one entity at a time (they run on several I/O threads)
_ALTER_LOCK = threading.Lock()


# -- AlterClientQuotas ----------------------------------------------------------------------


def _alter_entry(
    services: BrokerServices, entry: AlterClientQuotasRequest.EntryData, validate_only: bool
) -> None:
    entity: dict[str, str | None] = {e.entity_type: e.entity_name for e in entry.entity}
    path, keys = entity_path(entity)
    store = services.metadata_store
    with _ALTER_LOCK:
        configs = dict(store.quota_configs().get(path, {}))
        for op in entry.ops:
            if op.remove:
                configs.pop(op.key, None)
            else:
                configs[op.key] = stored_quota_value(op.key, op.value, keys)
        if not validate_only:
            store.set_quota_configs(path, configs)


def _alter_all(
    services: BrokerServices, request: AlterClientQuotasRequest
) -> AlterClientQuotasResponse:
    entries = []
    for entry in request.entries:
        code, message = ErrorCode.NONE, None
        try:
            _alter_entry(services, entry, request.validate_only)
        except QuotaEntityError as exc:
            code = ErrorCode.UNSUPPORTED_VERSION if exc.unsupported else ErrorCode.INVALID_REQUEST
            message = str(exc)
        entries.append(
            AlterClientQuotasResponse.EntryData(
                error_code=code,
                error_message=message,
                entity=[
                    AlterClientQuotasResponse.EntityData(
                        entity_type=e.entity_type, entity_name=e.entity_name
                    )
                    for e in entry.entity
                ],
            )
        )
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=entries)


async def handle_alter_client_quotas(
    services: BrokerServices, context: RequestContext, request: AlterClientQuotasRequest
) -> AlterClientQuotasResponse:
    if not authz.authorize_cluster(services, context, AclOperation.ALTER_CONFIGS):  # authz
        denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return AlterClientQuotasResponse(
            throttle_time_ms=0,
            entries=[
                AlterClientQuotasResponse.EntryData(
                    error_code=denied,
                    error_message=default_message(denied),
                    entity=[
                        AlterClientQuotasResponse.EntityData(
                            entity_type=e.entity_type, entity_name=e.entity_name
                        )
                        for e in entry.entity
                    ],
                )
                for entry in request.entries
            ],
        )
    return await services.run_io(_alter_all, services, request)


# -- DescribeClientQuotas -------------------------------------------------------------------


def _filter(request: DescribeClientQuotasRequest) -> dict[str, tuple[int, str | None]]:
    components: dict[str, tuple[int, str | None]] = {}
    for c in request.components:
        if c.entity_type == "":
            raise QuotaEntityError("Unexpected empty filter component entity type")
        if c.entity_type not in _ENTITY_ORDER:
            raise QuotaEntityError(
                f"Custom entity type '{c.entity_type}' not supported", unsupported=True
            )
        if c.entity_type in components:
            kind = "client" if c.entity_type == CLIENT_ID else c.entity_type
            raise QuotaEntityError(f"Duplicate {kind} filter component entity type")
        if c.match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY):
            raise QuotaEntityError(f"Unexpected match type: {c.match_type}")
        components[c.entity_type] = (c.match_type, c.match)
    if IP in components and (USER in components or CLIENT_ID in components):
        raise QuotaEntityError(
            "Invalid entity filter component combination, IP filter component should not be "
            "used with user or clientId filter component."
        )
    return components


def _matches(
    entity: dict[str, str | None], components: dict[str, tuple[int, str | None]], strict: bool
) -> bool:
    for entity_type in _ENTITY_ORDER:
        component = components.get(entity_type)
        if component is None:
            if strict and entity_type in entity:
                return False
            continue
        if entity_type not in entity:
            return False
        match_type, match = component
        name = entity[entity_type]
        if match_type == MATCH_DEFAULT and name is not None:
            return False
        if match_type == MATCH_EXACT and name != match:
            return False
    return True


def describe_quotas(
    configs: dict[str, dict[str, str]], components: dict[str, tuple[int, str | None]], strict: bool
) -> list[tuple[dict[str, str | None], dict[str, float]]]:
    """The entities (and their quota values) of ``configs`` that the filter selects."""
    out = []
    for path, values in sorted(configs.items()):
        entity = entity_from_path(path)
        if entity is None or not _matches(entity, components, strict):
            continue
        keys = IP_QUOTA_KEYS if IP in entity else CLIENT_QUOTA_KEYS
        quotas = {}
        for key, value in values.items():
            if key not in keys:
                continue
            try:
                quotas[key] = float(value)
            except ValueError:
                continue
        if quotas:
            out.append((entity, quotas))
    return out


def handle_describe_client_quotas(
    services: BrokerServices, context: RequestContext, request: DescribeClientQuotasRequest
) -> DescribeClientQuotasResponse:
    if not authz.authorize_cluster(services, context, AclOperation.DESCRIBE_CONFIGS):  # authz
        denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return DescribeClientQuotasResponse(
            throttle_time_ms=0,
            error_code=denied,
            error_message=default_message(denied),
            entries=None,
        )
    try:
        components = _filter(request)
    except QuotaEntityError as exc:
        return DescribeClientQuotasResponse(
            throttle_time_ms=0,
            error_code=ErrorCode.UNSUPPORTED_VERSION
            if exc.unsupported
            else ErrorCode.INVALID_REQUEST,
            error_message=str(exc),
            entries=None,
        )
    found = describe_quotas(services.metadata_store.quota_configs(), components, request.strict)
    entries = [
        DescribeClientQuotasResponse.EntryData(
            entity=[
                DescribeClientQuotasResponse.EntityData(entity_type=t, entity_name=n)
                for t, n in sorted(entity.items(), key=lambda kv: _ENTITY_ORDER[kv[0]])
            ],
            values=[
                DescribeClientQuotasResponse.ValueData(key=k, value=v)
                for k, v in sorted(quotas.items())
            ],
        )
        for entity, quotas in found
    ]
    return DescribeClientQuotasResponse(
        throttle_time_ms=0, error_code=0, error_message=None, entries=entries
    )


# -- DescribeUserScramCredentials -----------------------------------------------------------


def _credentials(
    configs: dict[str, str],
) -> list[DescribeUserScramCredentialsResponse.CredentialInfo]:
    infos = []
    for name, mechanism in SCRAM_MECHANISMS.items():
        stored = configs.get(name)
        if stored is None:
            continue
        fields = dict(part.partition("=")[::2] for part in stored.split(","))
        try:
            iterations = int(fields.get("iterations", ""))
        except ValueError:
            continue
        infos.append(
            DescribeUserScramCredentialsResponse.CredentialInfo(
                mechanism=mechanism, iterations=iterations
            )
        )
    return infos


def _scram_users(
    services: BrokerServices,
) -> dict[str, list[DescribeUserScramCredentialsResponse.CredentialInfo]]:
    users: dict[str, list[DescribeUserScramCredentialsResponse.CredentialInfo]] = {}
    for path, configs in services.metadata_store.quota_configs().items():
        entity = entity_from_path(path)
        user = None if entity is None or set(entity) != {USER} else entity[USER]
        infos = [] if user is None else _credentials(configs)
        if user is not None and infos:
            users[user] = infos
    return users


def _describe_scram(
    services: BrokerServices, request: DescribeUserScramCredentialsRequest
) -> DescribeUserScramCredentialsResponse:
    users = _scram_users(services)
    results = []
    if not request.users:
        for user in sorted(users):
            results.append(
                DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult(
                    user=user, error_code=0, error_message="", credential_infos=users[user]
                )
            )
    else:
        names = [u.name for u in request.users]
        for name in dict.fromkeys(names):
            code, message, infos = ErrorCode.NONE, "", users.get(name, [])
            if name == "":
                code, message, infos = ErrorCode.RESOURCE_NOT_FOUND, _EMPTY_USER, []
            elif names.count(name) > 1:
                code = ErrorCode.DUPLICATE_RESOURCE
                message = (
                    "Cannot describe SCRAM credentials for the same user twice in a single "
                    f"request: {name}"
                )
                infos = []
            elif not infos:
                code = ErrorCode.RESOURCE_NOT_FOUND
                message = f"Attempt to describe a user credential that does not exist: {name}"
            results.append(
                DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult(
                    user=name, error_code=code, error_message=message, credential_infos=infos
                )
            )
    # Kafka 3.9 leaves the messages of successes unset: "" (the field's default), not null
    return DescribeUserScramCredentialsResponse(
        throttle_time_ms=0, error_code=0, error_message="", results=results
    )


async def handle_describe_user_scram_credentials(
    services: BrokerServices, context: RequestContext, request: DescribeUserScramCredentialsRequest
) -> DescribeUserScramCredentialsResponse:
    if not authz.authorize_cluster(services, context, AclOperation.DESCRIBE):  # authz
        denied, text = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None
        return DescribeUserScramCredentialsResponse(
            throttle_time_ms=0,
            error_code=denied,
            error_message=text,
            results=[
                DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult(
                    user="", error_code=denied, error_message=text, credential_infos=[]
                )
                for _ in request.users or []
            ],
        )
    return await services.run_io(_describe_scram, services, request)


# -- AlterUserScramCredentials --------------------------------------------------------------
#
# Kafka's ZkAdminManager.alterUserScramCredentials: a user with an empty name, an unknown
# mechanism or iterations outside [4096, 16384] fails whole (UNACCEPTABLE_CREDENTIAL /
# UNSUPPORTED_SASL_MECHANISM); then a (user, mechanism) pair named twice fails its user
# (DUPLICATE_RESOURCE); then deleting a credential the user does not have fails its user
# (RESOURCE_NOT_FOUND). The remaining users get their deletions, then their upsertions
# (stored as Kafka's credential string: salt, stored key, server key, iterations, never
# the password) applied to their entity config, shared with their quotas.

_EMPTY_USER = "Username must not be empty"
_UNKNOWN_MECHANISM = "Unknown SCRAM mechanism"
_TOO_FEW = "Too few iterations"
_TOO_MANY = "Too many iterations"
_MECHANISMS_BY_TYPE = {m.type_id: m for m in ScramMechanism}


def _illegal_users(request: AlterUserScramCredentialsRequest) -> dict[str, str]:
    """User -> the message of its first illegal deletion or upsertion (an upsertion's
    message wins, as Kafka's map concatenation does)."""
    illegal: dict[str, str] = {}
    for deletion in request.deletions:
        if deletion.name == "":
            illegal[deletion.name] = _EMPTY_USER
        elif deletion.mechanism not in _MECHANISMS_BY_TYPE:
            illegal[deletion.name] = _UNKNOWN_MECHANISM
    upserts: dict[str, str] = {}
    for upsertion in request.upsertions:
        mechanism = _MECHANISMS_BY_TYPE.get(upsertion.mechanism)
        if upsertion.name == "":
            upserts[upsertion.name] = _EMPTY_USER
        elif mechanism is None:
            upserts[upsertion.name] = _UNKNOWN_MECHANISM
        elif upsertion.iterations > mechanism.max_iterations:
            upserts[upsertion.name] = _TOO_MANY
        elif upsertion.iterations < mechanism.min_iterations:
            upserts[upsertion.name] = _TOO_FEW
    illegal.update(upserts)
    return illegal


def _alter_scram(
    services: BrokerServices, request: AlterUserScramCredentialsRequest
) -> AlterUserScramCredentialsResponse:
    results: list[AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult] = []

    def result(user: str, code: int, message: str | None) -> None:
        results.append(
            AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult(
                user=user, error_code=code, error_message=message
            )
        )

    illegal = _illegal_users(request)
    for user, message in illegal.items():
        code = (
            ErrorCode.UNSUPPORTED_SASL_MECHANISM
            if message == _UNKNOWN_MECHANISM
            else ErrorCode.UNACCEPTABLE_CREDENTIAL
        )
        result(user, code, message)
    pairs = [(u.name, u.mechanism) for u in request.upsertions if u.name not in illegal]
    pairs += [(d.name, d.mechanism) for d in request.deletions if d.name not in illegal]
    duplicated = list(dict.fromkeys(u for u, m in pairs if pairs.count((u, m)) > 1))
    for user in duplicated:
        result(
            user,
            ErrorCode.DUPLICATE_RESOURCE,
            "A user credential cannot be altered twice in the same request",
        )
    candidates = list(dict.fromkeys(user for user, _ in pairs if user not in duplicated))
    store = services.metadata_store
    with _ALTER_LOCK:
        stored = store.quota_configs()
        configs = {user: dict(stored.get(f"users/{sanitize(user)}", {})) for user in candidates}
        missing = list(
            dict.fromkeys(
                d.name
                for d in request.deletions
                if d.name in configs
                and _MECHANISMS_BY_TYPE[d.mechanism].mechanism_name not in configs[d.name]
            )
        )
        for user in missing:
            result(
                user,
                ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist",
            )
        for user in candidates:
            if user in missing:
                continue
            updated = configs[user]
            for d in request.deletions:
                if d.name == user:
                    updated.pop(_MECHANISMS_BY_TYPE[d.mechanism].mechanism_name, None)
            for u in request.upsertions:
                if u.name == user:
                    mechanism = _MECHANISMS_BY_TYPE[u.mechanism]
                    credential = credential_from_salted_password(
                        mechanism, u.salt, u.salted_password, u.iterations
                    )
                    updated[mechanism.mechanism_name] = credential.to_kafka_string()
            try:
                store.set_quota_configs(f"users/{sanitize(user)}", updated)
            except Exception:
                logger.info(
                    "Error encountered while altering user SCRAM credentials", exc_info=True
                )
                result(user, ErrorCode.UNKNOWN_SERVER_ERROR, None)
                continue
            result(user, ErrorCode.NONE, "")  # unset in Kafka 3.9: the default, ""
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=results)


async def handle_alter_user_scram_credentials(
    services: BrokerServices, context: RequestContext, request: AlterUserScramCredentialsRequest
) -> AlterUserScramCredentialsResponse:
    if not authz.authorize_cluster(services, context, AclOperation.ALTER):  # authz
        # Kafka's getErrorResponse: every user named, sorted, with the exception's message
        denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        names = {d.name for d in request.deletions} | {u.name for u in request.upsertions}
        return AlterUserScramCredentialsResponse(
            throttle_time_ms=0,
            results=[
                AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult(
                    user=name, error_code=denied, error_message=default_message(denied)
                )
                for name in sorted(names)
            ],
        )
    return await services.run_io(_alter_scram, services, request)
