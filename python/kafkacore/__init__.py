"""kafkacore — Apache Kafka's log engine, embeddable in Python, with a Rust hot path.

``kafkacore.native.backend`` is the selected implementation of the storage core
(``KAFKACORE_BACKEND=native|pure``); ``kafkacore.record`` wraps it with named types.
:class:`EmbeddedBroker` / :class:`AsyncEmbeddedBroker` (:mod:`kafkacore.embedded`) run the
broker in-process; they are imported on first use, so ``import kafkacore`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkacore import errors
from kafkacore.native import backend, backend_name

if TYPE_CHECKING:
    from kafkacore.embedded import AsyncEmbeddedBroker, EmbeddedBroker

__all__ = [
    "AsyncEmbeddedBroker",
    "EmbeddedBroker",
    "__version__",
    "backend",
    "backend_name",
    "errors",
]

__version__ = "0.1.0"

_LAZY = {"AsyncEmbeddedBroker": "kafkacore.embedded", "EmbeddedBroker": "kafkacore.embedded"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kafkacore' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
