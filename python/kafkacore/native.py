"""Backend selection: the Rust extension ``kafkacore._native`` or its pure-Python twin.

``KAFKACORE_BACKEND=native`` (the default) or ``pure``. When the extension has not been
built, importing kafkacore falls back to the pure backend with one ``RuntimeWarning``.
Both backends expose exactly the names of ``_native.pyi``, typed as one
:class:`~kafkacore._backend.Backend` protocol; :func:`load_backend` gives either one
explicitly (differential tests and benchmarks use both in one process).
"""

from __future__ import annotations

import importlib
import os
import warnings
from typing import TYPE_CHECKING, cast

from kafkacore._backend import Backend, KeyMapFiles, SegmentFiles

__all__ = [
    "BACKENDS",
    "Backend",
    "KeyMapFiles",
    "SegmentFiles",
    "backend",
    "backend_name",
    "load_backend",
]

BACKENDS = ("native", "pure")
_MODULES = {"native": "kafkacore._native", "pure": "kafkacore.pure"}


def load_backend(name: str) -> Backend:
    """The backend module called ``name`` (``"native"`` or ``"pure"``)."""
    try:
        module_name = _MODULES[name]
    except KeyError:
        raise ValueError(
            f"unknown kafkacore backend {name!r}: expected one of {BACKENDS}"
        ) from None
    # the static proof that both modules are a Backend is at the end of this module
    return cast(Backend, importlib.import_module(module_name))


def _select() -> tuple[str, Backend]:
    requested = os.environ.get("KAFKACORE_BACKEND", "native").strip().lower() or "native"
    if requested not in BACKENDS:
        raise ValueError(
            f"KAFKACORE_BACKEND={requested!r} is not valid: expected one of {', '.join(BACKENDS)}"
        )
    if requested == "pure":
        return "pure", load_backend("pure")
    try:
        return "native", load_backend("native")
    except ImportError as exc:
        warnings.warn(
            f"kafkacore: the native extension is not available ({exc}); falling back to the "
            "pure-Python backend, which is much slower. Build it with `make build` "
            "(or install a kafkacore wheel), or set KAFKACORE_BACKEND=pure to silence this.",
            RuntimeWarning,
            stacklevel=2,
        )
        return "pure", load_backend("pure")


if TYPE_CHECKING:
    from kafkacore import _native as backend

    backend_name: str

    # mypy proves here that each backend module satisfies the Backend protocol
    from kafkacore import _native, pure

    _NATIVE: Backend = _native
    _PURE: Backend = pure
else:
    backend_name, backend = _select()
