"""Offline tools over kafkacore's (= Apache Kafka's) on-disk files.

:mod:`kafkacore.tools.dump_log` is ``kafka-dump-log``; the ``kafkacore`` command
(:mod:`kafkacore.cli`) exposes each tool as a subcommand.
:mod:`kafkacore.tools.offsets_records` encodes and decodes the records of
``__consumer_offsets`` (the group coordinator's key/value formats) and prints them as
``kafka-dump-log --offsets-decoder`` does.

The other faces (the command, the console, the demo) run a tool through the names
exported here, never through its modules.
"""

from __future__ import annotations

from kafkacore.tools.dump_log import (
    DEFAULT_MAX_MESSAGE_SIZE,
    INT_MAX,
    DumpFailure,
    DumpOptions,
    DumpUsageError,
    dump_files,
    files_option,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INT_MAX",
    "DumpFailure",
    "DumpOptions",
    "DumpUsageError",
    "dump_files",
    "files_option",
]
