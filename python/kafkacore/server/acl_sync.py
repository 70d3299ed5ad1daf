"""The broker's authorizer, built from its config and kept in step with the ACLs stored in
the metadata store (the embedded file, or ZooKeeper on every broker of a cluster).

* ``authorizer.class.name`` empty: no authorizer (:func:`build_authorizer` returns None;
  every request is allowed and the ACL APIs answer SECURITY_DISABLED, as Kafka does).
* One of :data:`AUTHORIZER_CLASS_NAMES`: kafkacore's own name or Kafka's
  ``StandardAuthorizer`` (KRaft) / ``AclAuthorizer`` (ZooKeeper mode), which all mean the
  same decisions (:class:`~kafkacore.security.acl.Authorizer`). Anything else is a
  :class:`~kafkacore.config.ConfigError` naming the key, the value and the accepted names.
* ``super.users`` (``User:a;User:b``) and ``allow.everyone.if.no.acl.found``.

The authorizer's :class:`~kafkacore.security.acl.AclStore` is loaded from the metadata
store once and then follows it (:class:`AclFollower`, an ``on_acls_changed`` listener),
whatever thread the store tells it on: the store swaps immutable snapshots.
"""

from __future__ import annotations

from kafkacore.config import BrokerConfig
from kafkacore.config.defs import ConfigError
from kafkacore.metadata import MetadataListener, MetadataStore
from kafkacore.security.acl import (
    AccessControlEntry,
    AclStore,
    Authorizer,
    ResourcePattern,
    parse_super_users,
)

__all__ = [
    "AUTHORIZER_CLASS_NAMES",
    "KAFKACORE_AUTHORIZER",
    "AclFollower",
    "build_authorizer",
]

KAFKACORE_AUTHORIZER = "kafkacore.security.acl.Authorizer"
AUTHORIZER_CLASS_NAMES = (
    KAFKACORE_AUTHORIZER,
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
)


class AclFollower(MetadataListener):
    """A metadata listener applying each stored ACL change to an :class:`AclStore`."""

    def __init__(self, acls: AclStore) -> None:
        self.acls = acls

    def on_acls_changed(
        self, pattern: ResourcePattern, entries: frozenset[AccessControlEntry]
    ) -> None:
        self.acls.set_entries(pattern, entries)


def authorizer_class(config: BrokerConfig) -> str | None:
    """The configured authorizer name (None: none), or a ConfigError."""
    name = (config.authorizer_class_name or "").strip()
    if not name:
        return None
    if name not in AUTHORIZER_CLASS_NAMES:
        raise ConfigError(
            "authorizer.class.name",
            name,
            "kafkacore's authorizer answers to " + ", ".join(AUTHORIZER_CLASS_NAMES),
        )
    return name


def build_authorizer(config: BrokerConfig, store: MetadataStore) -> Authorizer | None:
    """The broker's authorizer (None when ``authorizer.class.name`` is empty), loaded with
    the stored ACLs and following the store from now on."""
    if authorizer_class(config) is None:
        return None
    acls = AclStore()
    store.add_listener(AclFollower(acls))
    acls.replace(store.acls())
    return Authorizer(
        acls,
        super_users=parse_super_users(config.get("super.users")),
        allow_everyone_if_no_acl_found=bool(config.get("allow.everyone.if.no.acl.found")),
    )
