"""Exceptions raised by kafkacore, by both backends (the Rust extension raises these
very classes through PyO3's ``import_exception!``)."""

from __future__ import annotations

__all__ = [
    "CorruptIndexError",
    "CorruptRecordError",
    "IndexFullError",
    "InvalidOffsetError",
    "InvalidRecordError",
    "KafkaCoreError",
    "StorageIOError",
    "UnsupportedCompressionError",
]


class KafkaCoreError(Exception):
    """Base class of every kafkacore error."""


class CorruptRecordError(KafkaCoreError):
    """Bytes that are not a valid record batch or message (Kafka's CORRUPT_MESSAGE).

    The message names the file (or ``buffer``) and ``position N``."""


class InvalidRecordError(KafkaCoreError):
    """A well-formed batch that Kafka refuses (Kafka's INVALID_RECORD)."""


class InvalidOffsetError(KafkaCoreError):
    """An offset a segment or index cannot hold, or one going backwards."""


class IndexFullError(KafkaCoreError):
    """The offset or time index has no room for the entries an append needs: roll."""


class CorruptIndexError(KafkaCoreError):
    """An index file failed its sanity check; rebuild it with ``Segment.recover()``."""


class UnsupportedCompressionError(KafkaCoreError):
    """A compression codec id other than 0-4 (Kafka's UNSUPPORTED_COMPRESSION_TYPE)."""


class StorageIOError(KafkaCoreError, OSError):
    """An I/O error on a named log, index or checkpoint file."""
