"""The type aliases of ``kafkacore/_native.pyi``, spelled the same way."""

from __future__ import annotations

from typing import TypeAlias

Headers: TypeAlias = list[tuple[str, bytes | None]]
RecordTuple: TypeAlias = tuple[int, int, bytes | None, bytes | None, Headers]
BatchHeaderTuple: TypeAlias = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]
LegacyHeaderTuple: TypeAlias = tuple[int, int, int, int, int, int]
AppendResult: TypeAlias = tuple[int, int, int, int, int]
LeasedAppendResult: TypeAlias = tuple[int, int, int, int, int, int, int, int, int, int, int, int]
