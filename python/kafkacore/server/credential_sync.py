"""Keeps a broker's :class:`~kafkacore.security.credentials.ScramCredentialCache` equal to
the SCRAM credentials in the metadata store.

Kafka keeps a user's credentials in the ``users`` entity config (``/config/users/<user>``
in ZooKeeper mode), next to its quotas; a broker loads them at start-up and follows the
config change notifications (``ZkConfigManager`` -> ``UserConfigHandler`` ->
``CredentialProvider.updateCredentials``). Here the store already reports every change of
a quota entity (on every broker of a cluster: the ZooKeeper store follows
``/config/changes``); :class:`ScramCredentialFeeder` passes the ``users/<user>`` ones to
the cache. The default user (``users/<default>``) and ``users/<u>/clients/<c>`` entities
hold no credentials and are ignored.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping

from kafkacore.metadata.store import MetadataStore, QuotaConfigListener
from kafkacore.security.credentials import ScramCredentialCache

__all__ = ["ScramCredentialFeeder", "follow_scram_credentials"]


def _user_of(path: str) -> str | None:
    """The user of a ``users/<sanitized user>`` entity path (Kafka's ``Sanitizer``:
    URL-encoded), None for any other entity or the default user."""
    kind, _, name = path.partition("/")
    if kind != "users" or not name or "/" in name or name == "<default>":
        return None
    return urllib.parse.unquote(name)


class ScramCredentialFeeder(QuotaConfigListener):
    """A metadata store listener: only user entity config changes do anything."""

    def __init__(self, cache: ScramCredentialCache) -> None:
        self.cache = cache

    def load(self, quota_configs: Mapping[str, Mapping[str, str]]) -> None:
        for path, configs in quota_configs.items():
            self.on_quota_configs_changed(path, configs)

    def on_quota_configs_changed(self, path: str, configs: Mapping[str, str]) -> None:
        user = _user_of(path)
        if user is not None:
            self.cache.update_user(user, configs)


def follow_scram_credentials(
    store: MetadataStore, cache: ScramCredentialCache
) -> ScramCredentialFeeder:
    """Fill ``cache`` from ``store`` (a :class:`~kafkacore.metadata.store.MetadataStore`)
    now and keep it current from then on."""
    feeder = ScramCredentialFeeder(cache)
    store.add_listener(feeder)
    feeder.load(store.quota_configs())
    return feeder
