"""The SCRAM credentials the broker's SASL listeners check logins against: user ->
mechanism -> :class:`~kafkacore.security.scram.ScramCredential`, kept current from the
metadata store's user configs (Kafka keeps them, salted, in the ``users`` entity's
config: ``SCRAM-SHA-256`` = ``salt=...,stored_key=...,server_key=...,iterations=N``).

Thread-safe: the metadata store's thread replaces a user's credentials while the event
loop reads them; each read sees a user's old or new credentials, never a mix.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from kafkacore.security.scram import ScramCredential, ScramMechanism

__all__ = ["ScramCredentialCache"]


class ScramCredentialCache:
    """``get(mechanism, user)``: the credential a login is checked against, or None."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, dict[str, ScramCredential]] = {}

    def get(self, mechanism: str, user: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def update_user(self, user: str, configs: Mapping[str, str]) -> None:
        """Replace ``user``'s credentials with those in its entity ``configs`` (the other
        keys, quotas, are ignored; an unreadable credential is skipped)."""
        credentials: dict[str, ScramCredential] = {}
        for mechanism in ScramMechanism:
            stored = configs.get(mechanism.mechanism_name)
            if stored is None:
                continue
            try:
                credentials[mechanism.mechanism_name] = ScramCredential.from_kafka_string(stored)
            except ValueError:
                continue
        with self._lock:
            if credentials:
                self._users[user] = credentials
            else:
                self._users.pop(user, None)

    def users(self) -> list[str]:
        return sorted(self._users)
