# ruff: noqa: E501
"""``kafkacore console-producer`` / ``console-consumer``: Kafka's console tools over
confluent-kafka's Producer and Consumer, with Kafka's ``--property`` names and output."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from kafkacore.cli.topics import add_common, client_config

__all__ = ["register", "run_consumer", "run_producer"]

PRODUCER_PROG = "kafkacore console-producer"
CONSUMER_PROG = "kafkacore console-consumer"
_CODECS = {"none", "gzip", "snappy", "lz4", "zstd"}


def register(subparsers: Any) -> None:
    prod = subparsers.add_parser(
        "console-producer", prog=PRODUCER_PROG, help="Produce stdin lines."
    )
    add_common(prod)
    prod.add_argument("--topic")
    prod.add_argument("--property", action="append", default=[])
    prod.add_argument("--reader-property", action="append", default=[], dest="reader_property")
    prod.add_argument("--producer-property", action="append", default=[])
    prod.add_argument("--producer.config", dest="producer_config")
    prod.add_argument("--compression-codec", nargs="?", const="gzip")
    prod.add_argument("--request-required-acks", default="-1")
    prod.add_argument("--sync", action="store_true")
    prod.set_defaults(run=run_producer, prog=PRODUCER_PROG)
    cons = subparsers.add_parser(
        "console-consumer", prog=CONSUMER_PROG, help="Print consumed records."
    )
    add_common(cons)
    cons.add_argument("--topic")
    cons.add_argument("--from-beginning", action="store_true")
    cons.add_argument("--partition", type=int)
    cons.add_argument("--offset", default="latest")
    cons.add_argument("--group")
    cons.add_argument("--max-messages", type=int)
    cons.add_argument("--timeout-ms", type=int)
    cons.add_argument("--property", action="append", default=[])
    cons.add_argument(
        "--formatter-property", action="append", default=[], dest="formatter_property"
    )
    cons.add_argument("--consumer-property", action="append", default=[])
    cons.add_argument("--consumer.config", dest="consumer_config")
    cons.add_argument("--isolation-level")
    cons.set_defaults(run=run_consumer, prog=CONSUMER_PROG)


def _props(items: list[str], prog: str) -> dict[str, str]:
    from kafkacore.cli import UsageError

    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(prog, f"Invalid property: {item!r} (expected key=value)")
        out[key.strip()] = value
    return out


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _unescape(text: str) -> str:
    return text.replace("\\t", "\t").replace("\\n", "\n")


def run_producer(args: argparse.Namespace) -> int:
    from kafkacore.cli.topics import ck_module

    _ckm = ck_module("confluent_kafka")
    KafkaException = _ckm.KafkaException
    Producer = _ckm.Producer

    from kafkacore.cli import UsageError

    if not args.topic:
        raise UsageError(PRODUCER_PROG, 'Missing required argument "[topic]"')
    if args.compression_codec is not None and args.compression_codec not in _CODECS:
        raise UsageError(PRODUCER_PROG, f"Unknown compression codec: {args.compression_codec}")
    if args.request_required_acks not in {"0", "1", "-1", "all"}:
        raise UsageError(
            PRODUCER_PROG, f"Invalid value {args.request_required_acks} for --request-required-acks"
        )
    props = _props(args.property + args.reader_property, PRODUCER_PROG)
    parse_key = _truthy(props.get("parse.key"))
    parse_headers = _truthy(props.get("parse.headers"))
    key_sep = _unescape(props.get("key.separator", "\t"))
    headers_delim = _unescape(props.get("headers.delimiter", "\t"))
    headers_sep = props.get("headers.separator", ",")
    headers_key_sep = props.get("headers.key.separator", ":")
    null_marker = props.get("null.marker")
    conf = client_config(args)
    conf.update(_props(args.producer_property, PRODUCER_PROG))
    conf["acks"] = "all" if args.request_required_acks == "-1" else args.request_required_acks
    if args.compression_codec is not None:
        conf["compression.type"] = args.compression_codec
    errors: list[str] = []

    def report(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err.str()))

    try:
        producer = Producer(conf)
    except KafkaException as exc:
        raise UsageError(PRODUCER_PROG, str(exc)) from None
    for lineno, raw in enumerate(sys.stdin, 1):
        line = raw.rstrip("\n")
        headers: list[tuple[str, bytes | None]] = []
        key: str | None = None
        if parse_headers:
            head, sep, line = line.partition(headers_delim)
            if not sep:
                sys.stderr.write(
                    f"{PRODUCER_PROG}: error: No headers delimiter found on line number {lineno}: '{raw.rstrip()}'\n"
                )
                return 1
            if head != "NO_HEADERS":
                for pair in head.split(headers_sep):
                    hk, hsep, hv = pair.partition(headers_key_sep)
                    headers.append((hk, hv.encode() if hsep and hv != null_marker else None))
        if parse_key:
            key, sep, line = line.partition(key_sep)
            if not sep:
                sys.stderr.write(
                    f"{PRODUCER_PROG}: error: No key separator found on line number {lineno}: '{raw.rstrip()}'\n"
                )
                return 1
            if key == null_marker:
                key = None
        value: str | None = None if line == null_marker else line
        while True:
            try:
                producer.produce(
                    args.topic, value=value, key=key, headers=headers or None, on_delivery=report
                )
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
        if args.sync:
            producer.flush(30)
    remaining = producer.flush(30)
    if remaining:
        errors.append(f"{remaining} messages were not delivered before the timeout")
    if errors:
        sys.stderr.write(f"{PRODUCER_PROG}: error: {errors[0]}\n")
        return 1
    return 0


def _format(msg: Any, props: dict[str, str]) -> str:
    key_sep = _unescape(props.get("key.separator", "\t"))
    line_sep = _unescape(props.get("line.separator", "\n"))
    null_literal = props.get("null.literal", "null")

    def text(data: bytes | None) -> str:
        return null_literal if data is None else data.decode("utf-8", "replace")

    parts: list[str] = []
    if _truthy(props.get("print.timestamp")):
        kind, ts = msg.timestamp()
        parts.append({1: f"CreateTime:{ts}", 2: f"LogAppendTime:{ts}"}.get(kind, "NO_TIMESTAMP"))
    if _truthy(props.get("print.partition")):
        parts.append(f"Partition:{msg.partition()}")
    if _truthy(props.get("print.offset")):
        parts.append(f"Offset:{msg.offset()}")
    if _truthy(props.get("print.headers")):
        headers = msg.headers() or []
        hsep = props.get("headers.separator", ",")
        hksep = props.get("headers.key.separator", ":")
        parts.append(
            hsep.join(f"{k}{hksep}{text(v)}" for k, v in headers) if headers else "NO_HEADERS"
        )
    if _truthy(props.get("print.key")):
        parts.append(text(msg.key()))
    if props.get("print.value", "true").lower() != "false":
        parts.append(text(msg.value()))
    return key_sep.join(parts) + line_sep


def run_consumer(args: argparse.Namespace) -> int:
    import uuid

    from confluent_kafka import (
        OFFSET_BEGINNING,
        OFFSET_END,
        Consumer,
        KafkaException,
        TopicPartition,
    )

    from kafkacore.cli import UsageError

    if not args.topic:
        raise UsageError(CONSUMER_PROG, "Exactly one of whitelist/topic is required.")
    if args.partition is None and args.offset != "latest":
        raise UsageError(CONSUMER_PROG, "The partition is required when offset is specified.")
    if args.partition is not None and args.from_beginning and args.offset != "latest":
        raise UsageError(
            CONSUMER_PROG, "Options from-beginning and offset cannot be specified together."
        )
    if args.offset == "earliest" or (args.from_beginning and args.offset == "latest"):
        start = OFFSET_BEGINNING
    elif args.offset == "latest":
        start = OFFSET_END
    else:
        try:
            start = int(args.offset)
        except ValueError:
            raise UsageError(
                CONSUMER_PROG,
                f"The provided offset value '{args.offset}' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.",
            ) from None
        if start < 0:
            raise UsageError(
                CONSUMER_PROG, f"The provided offset value '{args.offset}' is incorrect."
            )
    props = _props(args.property + args.formatter_property, CONSUMER_PROG)
    conf = client_config(args)
    conf.update(_props(args.consumer_property, CONSUMER_PROG))
    conf["group.id"] = args.group or f"console-consumer-{uuid.uuid4().int % 100000}"
    conf["auto.offset.reset"] = "earliest" if start == OFFSET_BEGINNING else "latest"
    conf["enable.auto.commit"] = bool(args.group)
    if args.isolation_level:
        conf["isolation.level"] = args.isolation_level
    consumer = Consumer(conf)
    count = 0
    status = 0
    try:
        if args.group is not None and args.partition is None:
            consumer.subscribe([args.topic])
        else:
            metadata = consumer.list_topics(args.topic, timeout=30)
            topic_md = metadata.topics.get(args.topic)
            if topic_md is None or topic_md.error is not None or not topic_md.partitions:
                raise KafkaException(topic_md.error if topic_md is not None else "unknown topic")
            partitions = (
                [args.partition] if args.partition is not None else sorted(topic_md.partitions)
            )
            consumer.assign([TopicPartition(args.topic, p, start) for p in partitions])
        deadline = None if args.timeout_ms is None else time.monotonic() + args.timeout_ms / 1000
        while args.max_messages is None or count < args.max_messages:
            wait_s = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            msg = consumer.poll(wait_s)
            if msg is None:
                if deadline is not None and time.monotonic() >= deadline:
                    sys.stderr.write(
                        "ERROR Error processing message, terminating consumer process:  (org.apache.kafka.tools.consumer.ConsoleConsumer$)\norg.apache.kafka.common.errors.TimeoutException\n"
                    )
                    break
                continue
            if msg.error():
                if msg.error().code() == -191:  # type: ignore[union-attr]  # _PARTITION_EOF
                    continue
                raise KafkaException(msg.error())
            if deadline is not None:
                deadline = time.monotonic() + args.timeout_ms / 1000
            sys.stdout.write(_format(msg, props))
            sys.stdout.flush()
            count += 1
    except KafkaException as exc:
        sys.stderr.write(
            f"{CONSUMER_PROG}: error: {exc.args[0].str() if hasattr(exc.args[0], 'str') else exc}\n"
        )
        status = 1
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()
        sys.stderr.write(f"Processed a total of {count} messages\n")
    return status
