"""What a control manager decides (Kafka's ``ControllerResult`` and ``ApiError``): the
records to write and the answer to give once they are committed; or an error, with
Kafka's code and message, and nothing written.

Immutable: thread-safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from kafkacore.metadata.records import MetadataRecord
from kafkacore.protocol.errors import ErrorCode

__all__ = ["ApiError", "ControllerError", "ControllerResult"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class ApiError:
    """An error code and message (Kafka's ``ApiError``); ``NONE`` is success."""

    code: int = ErrorCode.NONE
    message: str | None = None

    @property
    def is_failure(self) -> bool:
        return self.code != ErrorCode.NONE

    @classmethod
    def of(cls, code: int, message: str | None = None) -> ApiError:
        return cls(int(code), message)


class ControllerError(Exception):
    """Kafka's ``ApiException`` thrown by a control manager: the request fails with
    ``code`` and ``message`` and writes nothing."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message or ErrorCode(code).name)
        self.code = int(code)
        self.message = message

    @property
    def error(self) -> ApiError:
        return ApiError(self.code, self.message)


@dataclass(frozen=True)
class ControllerResult(Generic[_T]):
    """``records`` to append (in one batch when ``atomic``) and then ``response``."""

    records: Sequence[MetadataRecord]
    response: _T
    atomic: bool = True
