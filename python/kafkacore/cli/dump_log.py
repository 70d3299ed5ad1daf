"""``kafkacore dump-log``: Kafka's ``kafka-dump-log.sh`` (``DumpLogSegments``).

Same options, same output (see :mod:`kafkacore.tools.dump_log`), ``--offsets-decoder``
and ``--transaction-log-decoder`` included; checkpoint files, which Kafka's tool ignores,
are printed in kafkacore's format (:mod:`kafkacore.tools._checkpoint_files`). Exit status
0, or 1 with a one-line reason on stderr: bad arguments, a file that does not exist, or a
file Kafka's tool would stop on (its output up to that point is printed, as Kafka's is).
"""

from __future__ import annotations

import argparse
import io
import sys
from typing import Any

from kafkacore.tools import (
    DEFAULT_MAX_MESSAGE_SIZE,
    INT_MAX,
    DumpFailure,
    DumpOptions,
    DumpUsageError,
    dump_files,
    files_option,
)

__all__ = ["register", "run"]

COMMAND = "dump-log"

_EPILOG = (
    "Besides Kafka's files, prints kafkacore's parse of the checkpoint files "
    "(recovery-point-offset-checkpoint, log-start-offset-checkpoint, "
    "replication-offset-checkpoint, cleaner-offset-checkpoint, leader-epoch-checkpoint, "
    "partition.metadata, meta.properties), which Kafka's tool ignores. "
    "Not supported yet: --cluster-metadata-decoder, "
    "--remote-log-metadata-decoder, --share-group-state-decoder, --key-decoder-class, "
    "--value-decoder-class."
)


def _java_int(text: str) -> int:
    """``Integer.valueOf``, as jopt-simple parses Kafka's integer options."""
    stripped = text[1:] if text[:1] in "+-" else text
    if stripped.isascii() and stripped.isdigit():
        value = int(text)
        if -(2**31) <= value <= INT_MAX:
            return value
    raise argparse.ArgumentTypeError(f"not a 32-bit integer: {text!r}")


def register(subparsers: Any) -> None:
    """Add ``dump-log`` to the ``kafkacore`` command."""
    parser = subparsers.add_parser(
        COMMAND,
        help="print the batches, records and index entries of segment files (kafka-dump-log)",
        description=(
            "This tool helps to parse a log file and dump its contents to the console, useful "
            "for debugging a seemingly corrupt log segment."
        ),
        epilog=_EPILOG,
    )
    parser.add_argument(
        "--files",
        required=True,
        metavar="file1, file2, ...",
        help="REQUIRED: The comma separated list of data and index log files to be dumped.",
    )
    parser.add_argument(
        "--print-data-log",
        action="store_true",
        help="If set, printing the messages content when dumping data logs. Automatically set "
        "if any decoder option is specified.",
    )
    parser.add_argument(
        "--deep-iteration",
        action="store_true",
        help="If set, uses deep instead of shallow iteration. Automatically set if "
        "print-data-log is enabled.",
    )
    parser.add_argument(
        "--verify-index-only",
        action="store_true",
        help="If set, just verify the index log without printing its content.",
    )
    parser.add_argument(
        "--index-sanity-check",
        action="store_true",
        help="If set, just checks the index sanity without printing its content. This is the "
        "same check that is executed on broker startup to determine if an index needs "
        "rebuilding or not.",
    )
    parser.add_argument(
        "--skip-record-metadata",
        action="store_true",
        help="Skip metadata when printing records. This flag also skips control records.",
    )
    parser.add_argument(
        "--offsets-decoder",
        action="store_true",
        help="If set, log data will be parsed as offset data from the __consumer_offsets topic.",
    )
    parser.add_argument(
        "--transaction-log-decoder",
        action="store_true",
        help="If set, log data will be parsed as transaction metadata from the "
        "__transaction_state topic.",
    )
    parser.add_argument(
        "--max-message-size",
        type=_java_int,
        default=DEFAULT_MAX_MESSAGE_SIZE,
        metavar="size",
        help=f"Size of largest message. (default: {DEFAULT_MAX_MESSAGE_SIZE})",
    )
    parser.add_argument(
        "--max-bytes",
        type=_java_int,
        default=INT_MAX,
        metavar="size",
        help="Limit the amount of total batches read in bytes avoiding reading the whole .log "
        f"file(s). (default: {INT_MAX})",
    )
    parser.set_defaults(run=run, prog=parser.prog)


def run(args: argparse.Namespace) -> int:
    options = DumpOptions(
        print_data_log=args.print_data_log,
        deep_iteration=args.deep_iteration,
        verify_index_only=args.verify_index_only,
        index_sanity_check=args.index_sanity_check,
        skip_record_metadata=args.skip_record_metadata,
        max_message_size=args.max_message_size,
        max_bytes=args.max_bytes,
        offsets_decoder=args.offsets_decoder,
        transaction_log_decoder=args.transaction_log_decoder,
    )
    out = sys.stdout
    if isinstance(out, io.TextIOWrapper):
        # What the JVM does with characters the terminal's encoding lacks: print "?".
        out.reconfigure(errors="replace")
    prog = f"kafkacore {COMMAND}"
    try:
        dump_files(files_option(args.files), options, out=out, err=sys.stderr)
    except DumpUsageError as exc:
        sys.stderr.write(f"{prog}: error: {exc}\n")
        return 1
    except DumpFailure as exc:
        out.flush()
        sys.stderr.write(f"{prog}: {exc.kind}: {exc.message}\n")
        return 1
    return 0
