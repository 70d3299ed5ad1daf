"""The dynamic group configs in force on this broker (Kafka's ``GroupConfigManager``): each
group's overrides, as the metadata store holds them (ConfigResource GROUP), and the
effective share settings derived from them and the broker config.

Thread-safety: the store's listener may call from another thread; lookups and updates
swap whole dictionaries under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from kafkacore.config import BrokerConfig
from kafkacore.config.group import ShareGroupSettings, share_group_settings
from kafkacore.metadata import MetadataStore
from kafkacore.metadata.store import MetadataListener

__all__ = ["GroupConfigs"]


class GroupConfigs(MetadataListener):
    """See the module documentation; ``broker`` gives the broker config in force."""

    def __init__(self, store: MetadataStore, broker: Callable[[], BrokerConfig]) -> None:
        self._store = store
        self._broker = broker
        self._lock = threading.Lock()
        self._overrides: dict[str, dict[str, str]] = store.group_configs()
        self._share: dict[str, ShareGroupSettings] = {}
        self._share_for: BrokerConfig | None = None
        store.add_listener(self)

    def on_group_configs_changed(self, group: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            overrides = dict(self._overrides)
            if configs:
                overrides[group] = dict(configs)
            else:
                overrides.pop(group, None)
            self._overrides = overrides
            self._share.pop(group, None)

    def overrides(self, group: str) -> dict[str, str]:
        """``group``'s own configs (empty: none set)."""
        return dict(self._overrides.get(group, {}))

    def groups(self) -> list[str]:
        return sorted(self._overrides)

    def share(self, group: str) -> ShareGroupSettings:
        """The share settings in force for ``group`` (cached until its configs or the
        broker config change)."""
        broker = self._broker()
        with self._lock:
            if self._share_for is not broker:
                self._share.clear()
                self._share_for = broker
            found = self._share.get(group)
            if found is None:
                found = share_group_settings(self._overrides.get(group, {}), broker)
                self._share[group] = found
            return found

    def set(self, group: str, configs: Mapping[str, str]) -> None:
        """Store ``group``'s new configs (blocking: the metadata store)."""
        self._store.set_group_configs(group, configs)
