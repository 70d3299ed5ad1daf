# ruff: noqa: E501
"""``kafkacore get-offsets`` (Kafka's ``kafka-get-offsets.sh``) and ``kafkacore
delete-records`` (``kafka-delete-records.sh``) over confluent-kafka's AdminClient."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafkacore.cli.topics import BrokerError, add_common, admin_client, error_text, wait

__all__ = ["register", "run_delete_records", "run_get_offsets"]

GET_PROG = "kafkacore get-offsets"
DELETE_PROG = "kafkacore delete-records"


def register(subparsers: Any) -> None:
    get = subparsers.add_parser("get-offsets", prog=GET_PROG, help="Print partition offsets.")
    add_common(get)
    get.add_argument("--topic")
    get.add_argument("--topic-partitions")
    get.add_argument("--partitions")
    get.add_argument("--time", default="-1")
    get.add_argument("--exclude-internal-topics", action="store_true")
    get.set_defaults(run=run_get_offsets, prog=GET_PROG)
    delete = subparsers.add_parser(
        "delete-records", prog=DELETE_PROG, help="Delete records up to offsets."
    )
    add_common(delete)
    delete.add_argument("--offset-json-file")
    delete.set_defaults(run=run_delete_records, prog=DELETE_PROG)


def _offset_spec(text: str) -> Any:
    from kafkacore.cli.topics import ck_module

    OffsetSpec = ck_module("confluent_kafka.admin").OffsetSpec

    from kafkacore.cli import UsageError

    named = {"latest": -1, "earliest": -2, "max-timestamp": -3}
    try:
        value = named[text] if text in named else int(text)
    except ValueError:
        raise UsageError(
            GET_PROG,
            f"Malformed time argument {text}. Please use -1 or latest / -2 or earliest / -3 or max-timestamp, or a specified long format timestamp",
        ) from None
    if value == -1:
        return OffsetSpec.latest()
    if value == -2:
        return OffsetSpec.earliest()
    if value == -3:
        return OffsetSpec.max_timestamp()
    if value < 0:
        raise UsageError(GET_PROG, f"Malformed time argument {text}")
    return OffsetSpec.for_timestamp(value)


def _partition_filter(text: str | None) -> set[int] | None:
    from kafkacore.cli import UsageError

    if not text:
        return None
    out: set[int] = set()
    try:
        for part in text.split(","):
            lo, sep, hi = part.partition("-")
            if sep:
                out.update(range(int(lo), int(hi) + 1))
            else:
                out.add(int(part))
    except ValueError:
        raise UsageError(GET_PROG, f"Invalid partition list: {text}") from None
    return out


def run_get_offsets(args: argparse.Namespace) -> int:
    import re

    from kafkacore.cli.topics import ck_module

    TopicPartition = ck_module("confluent_kafka").TopicPartition

    spec = _offset_spec(args.time)
    wanted = _partition_filter(args.partitions)
    admin = admin_client(args)
    try:
        try:
            metadata = admin.list_topics(timeout=30)
        except Exception as exc:
            raise BrokerError(error_text(exc)) from None
        pattern = re.compile(args.topic) if args.topic else None
        requests: dict[Any, Any] = {}
        for name in sorted(metadata.topics):
            if pattern is not None and not pattern.fullmatch(name):
                continue
            if args.exclude_internal_topics and name.startswith("__"):
                continue
            for p in sorted(metadata.topics[name].partitions):
                if wanted is None or p in wanted:
                    requests[TopicPartition(name, p)] = spec
        if (
            args.topic
            and not requests
            and pattern is not None
            and args.topic not in metadata.topics
        ):
            raise BrokerError("Could not match any topic-partitions with the specified filters")
        if not requests:
            return 0
        futures = admin.list_offsets(requests, request_timeout=30)
        results = sorted(
            ((tp.topic, tp.partition, wait(f)) for tp, f in futures.items()),
            key=lambda r: (r[0], r[1]),
        )
    except BrokerError as exc:
        sys.stderr.write(f"Error occurred: {exc}\n")
        return 1
    for topic, partition, info in results:
        offset = info.offset
        print(f"{topic}:{partition}:{offset if offset >= 0 else ''}")
    return 0


def run_delete_records(args: argparse.Namespace) -> int:
    from kafkacore.cli.topics import ck_module

    TopicPartition = ck_module("confluent_kafka").TopicPartition

    from kafkacore.cli import UsageError

    if not args.offset_json_file:
        raise UsageError(DELETE_PROG, 'Missing required argument "[offset-json-file]"')
    try:
        with open(args.offset_json_file, encoding="utf-8") as fh:
            doc = json.load(fh)
        entries = [
            (str(e["topic"]), int(e["partition"]), int(e["offset"])) for e in doc["partitions"]
        ]
    except OSError as exc:
        raise UsageError(
            DELETE_PROG, f"cannot read {args.offset_json_file}: {exc.strerror}"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            DELETE_PROG, f"Offset json file doesn't match the expected format: {exc}"
        ) from None
    if len({(t, p) for t, p, _ in entries}) != len(entries):
        raise UsageError(DELETE_PROG, "Offset json file contains duplicate topic partitions")
    admin = admin_client(args)
    print("Executing records delete operation")
    futures = admin.delete_records(
        [TopicPartition(t, p, o) for t, p, o in entries], request_timeout=30
    )
    print("Records delete operation completed:")
    status = 0
    for tp, fut in sorted(futures.items(), key=lambda kv: (kv[0].topic, kv[0].partition)):
        try:
            result = wait(fut)
            print(f"partition: {tp.topic}-{tp.partition}\tlow_watermark: {result.low_watermark}")
        except BrokerError as exc:
            print(f"partition: {tp.topic}-{tp.partition}\terror: {exc}")
            status = 1
    return status
