"""Every API whose messages kafkacore declares, served or not (Kafka's ``ApiMessageType``).

:data:`kafkacore.protocol.api.APIS` is what the broker serves, with the versions it
advertises and implements. :data:`DECLARED` is every declaration of
:mod:`kafkacore.protocol.messages`, each at the whole version range Kafka 4.3.1 defines,
plus the older versions kafkacore still reads (Kafka 3.9's ZooKeeper-mode inter-broker
APIs, Produce v0-2). An API is declared before its behaviour exists; the feature that
implements it adds it to the served table. The codec compiles every version of every
entry, and the interop tests prove each against Kafka's own classes.

Immutable: thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from kafkacore.protocol import messages
from kafkacore.protocol.schema import MessageSchema, Versions

__all__ = ["DECLARED", "DECLARED_BY_NAME", "DeclaredApi"]


@dataclass(frozen=True, eq=False)
class DeclaredApi:
    """One API's declarations: its key, Kafka's name and its request/response schemas
    (both valid at :attr:`versions`)."""

    key: int
    name: str
    request: MessageSchema[Any]
    response: MessageSchema[Any]

    @property
    def versions(self) -> Versions:
        return self.request.valid


def _declared(module: ModuleType) -> DeclaredApi:
    request: MessageSchema[Any] = module.REQUEST
    response: MessageSchema[Any] = module.RESPONSE
    if (request.api_key, request.valid) != (response.api_key, response.valid):
        raise ValueError(f"{module.__name__}: request and response disagree on key or versions")
    return DeclaredApi(request.api_key, request.name.removesuffix("Request"), request, response)


DECLARED: dict[int, DeclaredApi] = {
    api.key: api
    for api in sorted(
        (_declared(getattr(messages, name)) for name in messages.__all__), key=lambda a: a.key
    )
}
"""Every declared API by key, in key order."""
DECLARED_BY_NAME: dict[str, DeclaredApi] = {api.name: api for api in DECLARED.values()}
