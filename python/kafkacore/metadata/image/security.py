"""ACLs, SCRAM credentials and delegation tokens in the image (Kafka's ``AclsImage``,
``AclsDelta``, ``ScramImage``, ``ScramDelta``, ``DelegationTokenImage`` and
``DelegationTokenDelta``).

ACLs are kept by their id (the AccessControlEntryRecord's uuid; the StandardAuthorizer
removes them by id), SCRAM credentials by mechanism then user, tokens by id.

Immutable values; a delta is built and applied by one thread.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkacore.metadata.image._changes import apply_changes, remove_unmentioned
from kafkacore.metadata.image.cluster import MetadataReplayError
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

__all__ = [
    "SCRAM_MECHANISMS",
    "AclsDelta",
    "AclsImage",
    "DelegationTokenData",
    "DelegationTokenDelta",
    "DelegationTokenImage",
    "ScramCredentialData",
    "ScramDelta",
    "ScramImage",
    "acl_record",
]

_ACL: Any = RECORDS[MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD].cls
_SCRAM: Any = RECORDS[MetadataRecordType.USER_SCRAM_CREDENTIAL_RECORD].cls
_TOKEN: Any = RECORDS[MetadataRecordType.DELEGATION_TOKEN_RECORD].cls

SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
"""Kafka's ``ScramMechanism`` types."""


def acl_from_record(record: Any) -> AclBinding:
    """Kafka's ``StandardAcl.fromRecord``."""
    try:
        return AclBinding(
            ResourcePattern(
                ResourceType(record.resource_type),
                record.resource_name,
                PatternType(record.pattern_type),
            ),
            AccessControlEntry(
                record.principal,
                record.host,
                AclOperation(record.operation),
                AclPermissionType(record.permission_type),
            ),
        )
    except ValueError as exc:
        raise MetadataReplayError(f"Unable to replay {record}: {exc}") from None


def acl_record(acl_id: uuid.UUID, binding: AclBinding) -> MetadataRecord:
    """An AccessControlEntryRecord (version 0)."""
    return MetadataRecord(
        MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD,
        0,
        _ACL(
            id=acl_id,
            resource_type=int(binding.pattern.resource_type),
            resource_name=binding.pattern.name,
            pattern_type=int(binding.pattern.pattern_type),
            principal=binding.entry.principal,
            host=binding.entry.host,
            operation=int(binding.entry.operation),
            permission_type=int(binding.entry.permission_type),
        ),
    )


@dataclass(frozen=True, slots=True)
class AclsImage:
    acls: Mapping[uuid.UUID, AclBinding] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.acls

    def records(self) -> list[MetadataRecord]:
        return [acl_record(i, b) for i, b in self.acls.items()]


class AclsDelta:
    """Per ACL id its binding, or ``None`` once removed (insertion order kept, as Kafka's
    ``LinkedHashMap``: the authorizer applies changes in order)."""

    def __init__(self, image: AclsImage) -> None:
        self.image = image
        self.changes: dict[uuid.UUID, AclBinding | None] = {}

    def finish_snapshot(self) -> None:
        remove_unmentioned(self.image.acls, self.changes)

    def replay(self, record: Any) -> None:
        self.changes[record.id] = acl_from_record(record)

    def replay_remove(self, record: Any) -> None:
        if record.id in self.image.acls:
            self.changes[record.id] = None
        elif record.id in self.changes:
            del self.changes[record.id]
        else:
            raise MetadataReplayError(
                f"Failed to find existing ACL with ID {record.id} in either image or changes"
            )

    def apply(self) -> AclsImage:
        return AclsImage(apply_changes(self.image.acls, self.changes))


@dataclass(frozen=True, slots=True)
class ScramCredentialData:
    """One user's credential for one mechanism (Kafka's ``ScramCredentialData``)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_record(self, user: str, mechanism: int) -> MetadataRecord:
        return MetadataRecord(
            MetadataRecordType.USER_SCRAM_CREDENTIAL_RECORD,
            0,
            _SCRAM(
                name=user,
                mechanism=mechanism,
                salt=self.salt,
                stored_key=self.stored_key,
                server_key=self.server_key,
                iterations=self.iterations,
            ),
        )


@dataclass(frozen=True, slots=True)
class ScramImage:
    """Credentials by mechanism type (1, 2), then user."""

    mechanisms: Mapping[int, Mapping[str, ScramCredentialData]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.mechanisms

    def credential(self, mechanism: int, user: str) -> ScramCredentialData | None:
        return self.mechanisms.get(mechanism, {}).get(user)

    def records(self) -> list[MetadataRecord]:
        return [
            data.to_record(user, mechanism)
            for mechanism, users in sorted(self.mechanisms.items())
            for user, data in users.items()
        ]


class ScramDelta:
    def __init__(self, image: ScramImage) -> None:
        self.image = image
        self.changes: dict[int, dict[str, ScramCredentialData | None]] = {}

    def finish_snapshot(self) -> None:
        for mechanism, users in self.image.mechanisms.items():
            remove_unmentioned(users, self.changes.setdefault(mechanism, {}))

    def _mechanism(self, record: Any) -> dict[str, ScramCredentialData | None]:
        if record.mechanism not in SCRAM_MECHANISMS:
            raise MetadataReplayError(f"Unknown SCRAM mechanism {record.mechanism}")
        return self.changes.setdefault(record.mechanism, {})

    def replay(self, record: Any) -> None:
        self._mechanism(record)[record.name] = ScramCredentialData(
            bytes(record.salt),
            bytes(record.stored_key),
            bytes(record.server_key),
            record.iterations,
        )

    def replay_remove(self, record: Any) -> None:
        self._mechanism(record)[record.name] = None

    def apply(self) -> ScramImage:
        mechanisms = dict(self.image.mechanisms)
        for mechanism, changes in self.changes.items():
            users = apply_changes(self.image.mechanisms.get(mechanism, {}), changes)
            if users:
                mechanisms[mechanism] = users
            else:
                mechanisms.pop(mechanism, None)
        return ScramImage(mechanisms)


@dataclass(frozen=True, slots=True)
class DelegationTokenData:
    """A delegation token's information (Kafka's ``TokenInformation``)."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int

    @classmethod
    def from_record(cls, record: Any) -> DelegationTokenData:
        return cls(
            record.token_id,
            record.owner,
            record.requester,
            tuple(record.renewers),
            record.issue_timestamp,
            record.max_timestamp,
            record.expiration_timestamp,
        )

    def to_record(self) -> MetadataRecord:
        return MetadataRecord(
            MetadataRecordType.DELEGATION_TOKEN_RECORD,
            0,
            _TOKEN(
                owner=self.owner,
                requester=self.requester,
                renewers=list(self.renewers),
                issue_timestamp=self.issue_timestamp,
                max_timestamp=self.max_timestamp,
                expiration_timestamp=self.expiration_timestamp,
                token_id=self.token_id,
            ),
        )


@dataclass(frozen=True, slots=True)
class DelegationTokenImage:
    tokens: Mapping[str, DelegationTokenData] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.tokens

    def records(self) -> list[MetadataRecord]:
        return [token.to_record() for _, token in sorted(self.tokens.items())]


class DelegationTokenDelta:
    def __init__(self, image: DelegationTokenImage) -> None:
        self.image = image
        self.changes: dict[str, DelegationTokenData | None] = {}

    def finish_snapshot(self) -> None:
        remove_unmentioned(self.image.tokens, self.changes)

    def replay(self, record: Any) -> None:
        self.changes[record.token_id] = DelegationTokenData.from_record(record)

    def replay_remove(self, record: Any) -> None:
        self.changes[record.token_id] = None

    def apply(self) -> DelegationTokenImage:
        return DelegationTokenImage(apply_changes(self.image.tokens, self.changes))
