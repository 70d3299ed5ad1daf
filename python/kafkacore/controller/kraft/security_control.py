"""SCRAM credentials and ACLs on the controller (Kafka 4.3's ``ScramControlManager`` and
``AclControlManager``).

* AlterUserScramCredentials: upsertions become UserScramCredentialRecords (the stored
  and server keys derived from the salted password, as Kafka does), deletions
  RemoveUserScramCredentialRecords; each user all or nothing, with Kafka's refusals
  (empty user, unknown mechanism, iterations out of bounds, a user altered twice, the
  deletion of a credential that does not exist).
* CreateAcls: each binding validated, an AccessControlEntryRecord with a new id (an
  existing identical binding is left as it is); DeleteAcls: every binding a filter
  matches, a RemoveAccessControlEntryRecord each. DescribeAcls reads the image.

Not thread-safe: the controller's event loop.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafkacore.controller.kraft.result import ApiError, ControllerError, ControllerResult
from kafkacore.controller.kraft.state import ControllerState
from kafkacore.metadata.image.security import ScramCredentialData, acl_record
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.protocol.declared import DECLARED
from kafkacore.protocol.errors import ErrorCode
from kafkacore.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    InvalidAclError,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkacore.security.scram import ScramMechanism, credential_from_salted_password

__all__ = ["alter_scram_credentials", "create_acls", "delete_acls", "matching_acls"]

_REMOVE_SCRAM: Any = RECORDS[MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD].cls
_REMOVE_ACL: Any = RECORDS[MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD].cls
_ALTER_SCRAM: Any = DECLARED[51].response.cls
_CREATE_ACLS: Any = DECLARED[30].response.cls
_DELETE_ACLS: Any = DECLARED[31].response.cls
_MECHANISMS = {m.type_id: m for m in ScramMechanism}
MAX_ACLS_PER_DELETE = 10000


def alter_scram_credentials(state: ControllerState, request: Any) -> ControllerResult[Any]:
    mv = state.image.features.metadata_version_or_raise()
    results: list[Any] = []
    records: list[MetadataRecord] = []

    def result(user: str, code: int, message: str | None) -> None:
        results.append(
            _ALTER_SCRAM.AlterUserScramCredentialsResult(
                user=user, error_code=code, error_message=message
            )
        )

    if not mv.is_scram_supported:
        for user in dict.fromkeys(
            [*(u.name for u in request.upsertions), *(d.name for d in request.deletions)]
        ):
            result(
                user,
                ErrorCode.UNSUPPORTED_VERSION,
                "The current metadata.version does not support SCRAM",
            )
        return ControllerResult([], _ALTER_SCRAM(throttle_time_ms=0, results=results))
    seen: dict[tuple[str, int], int] = {}
    for item in [*request.deletions, *request.upsertions]:
        seen[(item.name, item.mechanism)] = seen.get((item.name, item.mechanism), 0) + 1
    failed: dict[str, ApiError] = {}
    pending: dict[str, list[MetadataRecord]] = {}
    for deletion in request.deletions:
        user = deletion.name
        if user in failed:
            continue
        error = _check(user, deletion.mechanism, None, seen)
        if error is None and state.image.scram.credential(deletion.mechanism, user) is None:
            error = ApiError(
                ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist",
            )
        if error is not None:
            failed[user] = error
            continue
        pending.setdefault(user, []).append(
            MetadataRecord(
                MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD,
                0,
                _REMOVE_SCRAM(name=user, mechanism=deletion.mechanism),
            )
        )
    for upsertion in request.upsertions:
        user = upsertion.name
        if user in failed:
            continue
        error = _check(user, upsertion.mechanism, upsertion.iterations, seen)
        if error is not None:
            failed[user] = error
            continue
        mechanism = _MECHANISMS[upsertion.mechanism]
        credential = credential_from_salted_password(
            mechanism, bytes(upsertion.salt), bytes(upsertion.salted_password), upsertion.iterations
        )
        data = ScramCredentialData(
            credential.salt, credential.stored_key, credential.server_key, credential.iterations
        )
        pending.setdefault(user, []).append(data.to_record(user, upsertion.mechanism))
    for user in dict.fromkeys(
        [*(d.name for d in request.deletions), *(u.name for u in request.upsertions)]
    ):
        if user in failed:
            result(user, failed[user].code, failed[user].message)
        else:
            records.extend(pending.get(user, []))
            result(user, ErrorCode.NONE, None)
    return ControllerResult(
        records, _ALTER_SCRAM(throttle_time_ms=0, results=results), atomic=False
    )


def _check(
    user: str, mechanism_type: int, iterations: int | None, seen: dict[tuple[str, int], int]
) -> ApiError | None:
    if not user:
        return ApiError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    mechanism = _MECHANISMS.get(mechanism_type)
    if mechanism is None:
        return ApiError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
    if seen.get((user, mechanism_type), 0) > 1:
        return ApiError(
            ErrorCode.DUPLICATE_RESOURCE,
            "A user credential cannot be altered twice in the same request",
        )
    if iterations is not None:
        if iterations < mechanism.min_iterations:
            return ApiError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
        if iterations > mechanism.max_iterations:
            return ApiError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    return None


def _binding(creation: Any) -> AclBinding:
    """A requested binding, checked as Kafka's ``validateNewAcl``."""
    try:
        resource_type = ResourceType(creation.resource_type)
        pattern_type = PatternType(creation.resource_pattern_type)
        operation = AclOperation(creation.operation)
        permission = AclPermissionType(creation.permission_type)
    except ValueError as exc:
        raise ControllerError(ErrorCode.INVALID_REQUEST, str(exc)) from None
    if not creation.resource_name:
        raise ControllerError(ErrorCode.INVALID_REQUEST, "Resource name should not be empty")
    if ":" not in creation.principal:
        raise ControllerError(
            ErrorCode.INVALID_REQUEST,
            f"Could not parse principal from `{creation.principal}` (no colon is present "
            "separating the principal type from the principal name)",
        )
    binding = AclBinding(
        ResourcePattern(resource_type, creation.resource_name, pattern_type),
        AccessControlEntry(creation.principal, creation.host, operation, permission),
    )
    try:
        binding.pattern.validate()
        binding.entry.validate()
    except InvalidAclError as exc:
        raise ControllerError(ErrorCode.INVALID_REQUEST, str(exc)) from None
    return binding


def create_acls(state: ControllerState, request: Any) -> ControllerResult[Any]:
    existing = set(state.image.acls.acls.values())
    records: list[MetadataRecord] = []
    results = []
    for creation in request.creations:
        try:
            binding = _binding(creation)
            if binding not in existing:
                existing.add(binding)
                records.append(acl_record(uuid.uuid4(), binding))
            results.append(_CREATE_ACLS.AclCreationResult(error_code=0, error_message=None))
        except ControllerError as exc:
            results.append(
                _CREATE_ACLS.AclCreationResult(error_code=exc.code, error_message=exc.message)
            )
    return ControllerResult(
        records, _CREATE_ACLS(throttle_time_ms=0, results=results), atomic=False
    )


def matching_acls(
    state: ControllerState, binding_filter: AclBindingFilter
) -> list[tuple[uuid.UUID, AclBinding]]:
    return [
        (acl_id, binding)
        for acl_id, binding in state.image.acls.acls.items()
        if binding_filter.matches(binding)
    ]


def delete_acls(
    state: ControllerState, filters: list[AclBindingFilter | ApiError]
) -> ControllerResult[list[list[AclBinding] | ApiError]]:
    """Per filter the bindings it removed, or the error it got."""
    removed: set[uuid.UUID] = set()
    records: list[MetadataRecord] = []
    results: list[list[AclBinding] | ApiError] = []
    for binding_filter in filters:
        if isinstance(binding_filter, ApiError):
            results.append(binding_filter)
            continue
        matched = [(i, b) for i, b in matching_acls(state, binding_filter) if i not in removed]
        if len(removed) + len(matched) > MAX_ACLS_PER_DELETE:
            results.append(
                ApiError(
                    ErrorCode.INVALID_REQUEST,
                    "Cannot remove more than 10000 acls in a single delete operation.",
                )
            )
            continue
        for acl_id, _ in matched:
            removed.add(acl_id)
            records.append(
                MetadataRecord(
                    MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD, 0, _REMOVE_ACL(id=acl_id)
                )
            )
        results.append([b for _, b in matched])
    return ControllerResult(records, results, atomic=False)
