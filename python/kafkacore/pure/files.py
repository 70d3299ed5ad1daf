"""Segment file names, as Kafka's ``LogFileUtils`` spells them: the base offset
zero-padded to 20 digits plus a suffix."""

from __future__ import annotations

import os

__all__ = [
    "INDEX_FILE_SUFFIX",
    "LOG_FILE_SUFFIX",
    "TIME_INDEX_FILE_SUFFIX",
    "filename_prefix_from_offset",
    "segment_file",
]

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"


def filename_prefix_from_offset(offset: int) -> str:
    """``offset`` as 20 zero-padded digits (Java's ``%020d``)."""
    return f"{offset:020d}"


def segment_file(directory: str, base_offset: int, suffix: str) -> str:
    """The path of the ``suffix`` file of the segment at ``base_offset``."""
    return os.path.join(directory, filename_prefix_from_offset(base_offset) + suffix)
