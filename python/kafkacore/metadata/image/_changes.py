"""The one rule every keyed delta of the image follows (Kafka's ``*Delta.apply``): a
change maps a key to its new value, or to ``None`` for a removal; the new map is the old
one with the changes laid over it. A snapshot replaces the image: every key it did not
mention is removed (``finishSnapshot``).

Pure functions: thread-safe.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, MutableMapping
from typing import TypeVar

__all__ = ["apply_changes", "remove_unmentioned"]

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


def apply_changes(base: Mapping[_K, _V], changes: Mapping[_K, _V | None]) -> dict[_K, _V]:
    """``base`` with ``changes`` applied (``None`` removes the key)."""
    if not changes:
        return dict(base)
    result = dict(base)
    for key, value in changes.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def remove_unmentioned(base: Mapping[_K, object], changes: MutableMapping[_K, _V | None]) -> None:
    """``finishSnapshot``: every key of ``base`` not in ``changes`` is removed."""
    for key in base:
        if key not in changes:
            changes[key] = None
