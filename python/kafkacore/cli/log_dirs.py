"""``kafkacore log-dirs``: Kafka's ``kafka-log-dirs.sh`` (``LogDirsCommand``).

    kafkacore log-dirs --bootstrap-server localhost:9092 --describe --topic-list t1,t2

Asks every broker (or those of ``--broker-list``) for its log directories with
DescribeLogDirs v4 and prints what Kafka's tool prints: two progress lines, then one JSON
line ``{"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"t-0","size":..,
"offsetLag":..,"isFuture":..}],"error":null,"logDir":".."}]}],"version":1}``, partitions
of the topics in ``--topic-list`` only (every topic without it).

Kafka builds that document from Java ``HashMap`` s, so its order is the maps' iteration
order; ``kafkacore._java`` computes it, which makes the output byte for byte the
same as Kafka's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from kafkacore._java import (
    java_hash_map_order,
    java_string_hash,
    topic_partition_hash,
)

__all__ = ["register", "run"]

PROG = "kafkacore log-dirs"
TIMEOUT = 30.0
DESCRIBE_LOG_DIRS_VERSION = 4


def register(subparsers: Any) -> None:
    from kafkacore.cli.topics import add_common

    parser = subparsers.add_parser(
        "log-dirs",
        prog=PROG,
        help="Describe the log directories of brokers: replicas, sizes, offset lags.",
    )
    add_common(parser)
    parser.add_argument("--describe", action="store_true")
    parser.add_argument("--broker-list", metavar="IDS")
    parser.add_argument("--topic-list", metavar="TOPICS", default="")
    parser.add_argument(
        "--remote-storage",
        action="store_true",
        help="kafkacore: after Kafka's output, each partition's local and remote tiers "
        "(tiered storage, KIP-405) for the topics of --topic-list",
    )
    parser.add_argument(
        "--metadata-partitions",
        type=int,
        default=50,
        help="the cluster's remote.log.metadata.topic.num.partitions (default 50)",
    )
    parser.set_defaults(run=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    from kafkacore.cli import UsageError
    from kafkacore.cli.topics import BrokerError, admin_client, error_text

    if not args.describe:
        raise UsageError(PROG, 'Missing required argument "[describe]"')
    wanted = _int_list(args.broker_list) if args.broker_list else []
    topics = {t for t in args.topic_list.split(",") if t}
    admin = admin_client(args)
    try:
        nodes = admin.list_topics(timeout=TIMEOUT).brokers
    except Exception as exc:
        sys.stderr.write(f"{error_text(exc)}\n")
        return 1
    cluster = {int(n): (b.host, int(b.port)) for n, b in nodes.items()}
    missing = sorted(set(wanted) - set(cluster))
    if missing:
        sys.stderr.write(
            "ERROR: The given brokers do not exist from --broker-list: "
            f"{_ids(missing)}. Current existent brokers: {_ids(cluster)}\n"
        )
        return 1
    brokers = sorted(set(wanted) or set(cluster))
    print("Querying brokers for log directories information", flush=True)
    try:
        results = asyncio.run(_describe_all({b: cluster[b] for b in brokers}))
    except BrokerError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    print(f"Received log directory information from brokers {_ids(brokers)}")
    print(json.dumps(_document(results, topics), separators=(",", ":")))
    if args.remote_storage:
        return _print_tiers(args, sorted(topics))
    return 0


def _print_tiers(args: argparse.Namespace, topics: list[str]) -> int:
    """One line per partition of each topic: offsets of both tiers, the tiered segments
    and bytes, the copy lag (:func:`kafkacore.client.tiered.tiering_summary`)."""
    from kafkacore.client.tiered import tiering_summary

    if not topics:
        sys.stderr.write("--remote-storage needs the topics of --topic-list\n")
        return 1
    print(
        "TOPIC\tPARTITION\tLOG-START\tLOCAL-START\tTIERED-UP-TO\tLOG-END\t"
        "REMOTE-SEGMENTS\tREMOTE-BYTES\tCOPY-LAG"
    )
    for topic in topics:
        try:
            rows = tiering_summary(
                args.bootstrap_server, topic, metadata_partitions=args.metadata_partitions
            )
        except Exception as exc:
            sys.stderr.write(f"{topic}: {exc}\n")
            return 1
        for r in rows:
            print(
                f"{topic}\t{r.partition}\t{r.log_start_offset}\t{r.local_log_start_offset}\t"
                f"{r.highest_tiered_offset}\t{r.log_end_offset}\t{r.remote_segments}\t"
                f"{r.remote_bytes}\t{r.copy_lag_offsets}"
            )
    return 0


def _int_list(text: str) -> list[int]:
    from kafkacore.cli import UsageError

    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(PROG, f"invalid --broker-list: {text!r}") from None


def _ids(ids: Any) -> str:
    return ",".join(str(i) for i in sorted(ids))


async def _describe_all(addresses: dict[int, tuple[str, int]]) -> dict[int, Any]:
    """Each broker's DescribeLogDirs response (every partition), asked concurrently."""
    answers = await asyncio.gather(*(_describe(host, port) for host, port in addresses.values()))
    return dict(zip(addresses, answers, strict=True))


async def _describe(host: str, port: int) -> Any:
    from kafkacore.cli.topics import BrokerError
    from kafkacore.net import NodeClient
    from kafkacore.protocol import APIS_BY_NAME, ApiKey

    request = APIS_BY_NAME["DescribeLogDirs"].request.cls(topics=None)
    client = NodeClient(host, port, client_id="kafkacore-log-dirs", request_timeout_s=TIMEOUT)
    try:
        return await client.send(ApiKey.DESCRIBE_LOG_DIRS, DESCRIBE_LOG_DIRS_VERSION, request)
    except (ConnectionError, TimeoutError, OSError) as exc:
        raise BrokerError(f"DescribeLogDirs to {host}:{port} failed: {exc}") from None
    finally:
        await client.close()


def _document(responses: dict[int, Any], topics: set[str]) -> dict[str, Any]:
    """Kafka's ``LogDirsCommand.formatAsJson`` (keys in its HashMaps' order)."""
    brokers = []
    for broker in java_hash_map_order(list(responses), lambda b: b):
        dirs = responses[broker].results
        log_dirs = []
        for result in java_hash_map_order(dirs, lambda r: java_string_hash(r.log_dir)):
            replicas = [(t.name, p) for t in result.topics for p in t.partitions]
            replicas = java_hash_map_order(
                replicas, lambda r: topic_partition_hash(r[0], r[1].partition_index)
            )
            log_dirs.append(
                {
                    "partitions": [
                        {
                            "partition": f"{name}-{p.partition_index}",
                            "size": p.partition_size,
                            "offsetLag": p.offset_lag,
                            "isFuture": p.is_future_key,
                        }
                        for name, p in replicas
                        if not topics or name in topics
                    ],
                    "error": _error_class(result.error_code),
                    "logDir": result.log_dir,
                }
            )
        brokers.append({"broker": broker, "logDirs": log_dirs})
    return {"brokers": brokers, "version": 1}


def _error_class(code: int) -> str | None:
    """Kafka names the exception class; the two errors a log directory reports."""
    from kafkacore.protocol import ErrorCode

    if code == 0:
        return None
    if code == ErrorCode.KAFKA_STORAGE_ERROR:
        return "org.apache.kafka.common.errors.KafkaStorageException"
    return f"org.apache.kafka.common.errors.{ErrorCode(code).name}"
