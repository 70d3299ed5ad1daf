"""The Cluster view (``/cluster``): the brokers (endpoint, rack, controller, disk per log
dir), the partitions that need attention (under-replicated, under min ISR, offline) and
how replicas and leaders are spread over the brokers.

Sources, all through the Kafka protocol (so the view works against any cluster):
DescribeCluster (brokers, controller), Metadata (every partition's leader, replicas and
ISR), DescribeConfigs asking for ``min.insync.replicas`` only (inside the broker: its
metadata cache), DescribeLogDirs v4 to each broker (its log directories with total and
usable bytes and the size of each replica).

The counts are Kafka's: *under-replicated* = ISR smaller than the replica set (Kafka's
``UnderReplicatedPartitions``), *under min ISR* = ISR smaller than the topic's
``min.insync.replicas`` (``UnderMinIsrPartitionCount``), *offline* = no leader
(``OfflinePartitionsCount``). The spread is CMAK's: per broker its replicas and leaders,
their skew from the per-broker average in percent (``(n - avg) / avg``), and the topics
for which the broker is *skewed* (holds more replicas of the topic than
``ceil(replicas of the topic / brokers)``).

The log directories are kept per user for :data:`LOG_DIRS_TTL_S`, and outside the broker
each topic's ``min.insync.replicas`` for :data:`MIN_ISR_TTL_S`; both are asked again in the
background once that old (the page says as of when; a topic created since counts with a
minimum ISR of 1 until then). The partition states come from a fresh Metadata answer at
every view.

Thread-safety: the blocking admin calls run on the console's pool (``ctx.run_io``).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from kafkacore.console.context import Kept, console_of

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = [
    "NAV",
    "BrokerSpread",
    "PartitionInfo",
    "describe_log_dirs",
    "partition_health",
    "routes",
    "spread",
]

NAV: tuple[str, str] | None = ("Cluster", "/cluster")

DESCRIBE_LOG_DIRS_VERSION = 4
LOG_DIRS_TTL_S = 10.0
"""How long each user's DescribeLogDirs answers (every replica of every broker) are served
before they are asked again in the background."""
MIN_ISR_TTL_S = 60.0
"""Outside the broker, how long each user's ``min.insync.replicas`` of every topic is
served before it is asked again in the background (topic configs change rarely; asking
for 10,000 topics cost Kafka 4.3.1 8 to 18 s here)."""
DESCRIBE_CONFIGS_VERSION = 4
TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC


@dataclass(frozen=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass
class BrokerSpread:
    broker: int
    replicas: int = 0
    leaders: int = 0
    replica_skew_pct: float = 0.0
    leader_skew_pct: float = 0.0
    skewed_topics: list[str] = field(default_factory=list)


def partitions_of(metadata: Any) -> list[PartitionInfo]:
    """The partitions of a confluent-kafka ``ClusterMetadata``."""
    out = []
    for name, topic in metadata.topics.items():
        for p in topic.partitions.values():
            out.append(PartitionInfo(name, p.id, p.leader, tuple(p.replicas), tuple(p.isrs)))
    return out


def partition_health(
    partitions: Iterable[PartitionInfo], min_isr: Mapping[str, int]
) -> dict[str, list[PartitionInfo]]:
    """Kafka's three partition-state counts, with the partitions in each."""
    state: dict[str, list[PartitionInfo]] = {
        "under_replicated": [],
        "under_min_isr": [],
        "offline": [],
    }
    for p in partitions:
        if p.leader < 0:
            state["offline"].append(p)
        if len(p.isr) < len(p.replicas):
            state["under_replicated"].append(p)
        if len(p.isr) < min_isr.get(p.topic, 1):
            state["under_min_isr"].append(p)
    for group in state.values():
        group.sort(key=lambda p: (p.topic, p.partition))
    return state


def spread(brokers: Iterable[int], partitions: Iterable[PartitionInfo]) -> list[BrokerSpread]:
    """Replicas and leaders per broker, their skew from the average, and CMAK's skewed
    topics per broker."""
    rows = {b: BrokerSpread(b) for b in brokers}
    per_topic: dict[str, dict[int, int]] = {}
    for p in partitions:
        if p.leader in rows:
            rows[p.leader].leaders += 1
        counts = per_topic.setdefault(p.topic, {})
        for r in p.replicas:
            if r in rows:
                rows[r].replicas += 1
            counts[r] = counts.get(r, 0) + 1
    n = len(rows)
    if n:
        avg_replicas = sum(r.replicas for r in rows.values()) / n
        avg_leaders = sum(r.leaders for r in rows.values()) / n
        for row in rows.values():
            if avg_replicas:
                row.replica_skew_pct = 100 * (row.replicas - avg_replicas) / avg_replicas
            if avg_leaders:
                row.leader_skew_pct = 100 * (row.leaders - avg_leaders) / avg_leaders
        for topic, counts in sorted(per_topic.items()):
            fair = math.ceil(sum(counts.values()) / n)
            for b, c in counts.items():
                if b in rows and c > fair:
                    rows[b].skewed_topics.append(topic)
    return [rows[b] for b in sorted(rows)]


async def describe_log_dirs(
    ctx: ConsoleContext, request: Request, nodes: Iterable[Any]
) -> dict[int, Any]:
    """Each broker's DescribeLogDirs v4 answer (or the exception it failed with)."""
    from kafkacore.protocol import APIS_BY_NAME

    async def one(node: Any) -> Any:
        req = APIS_BY_NAME["DescribeLogDirs"].request.cls(topics=None)
        try:
            return await ctx.raw_request(
                request, "DESCRIBE_LOG_DIRS", DESCRIBE_LOG_DIRS_VERSION, req,
                node=(node.host, node.port),
            )  # fmt: skip
        except Exception as exc:
            return exc

    nodes = list(nodes)
    answers = await asyncio.gather(*(one(n) for n in nodes))
    return {n.id: a for n, a in zip(nodes, answers, strict=True)}


async def min_isr_of(ctx: ConsoleContext, request: Request, topics: list[str]) -> dict[str, int]:
    """Each topic's ``min.insync.replicas``: DescribeConfigs v4 asking for that one key
    (``configuration_keys``, which confluent-kafka does not expose), every topic in one
    request to the bootstrap broker, as the user. (Asked through the admin client, with
    every config of every topic, 10,000 topics took 37 s against Kafka 4.3.1 here; this
    way the answer holds one entry per topic.)"""
    from kafkacore.protocol import APIS_BY_NAME

    if not topics:
        return {}
    cls: Any = APIS_BY_NAME["DescribeConfigs"].request.cls
    req = cls(
        resources=[
            cls.DescribeConfigsResource(
                resource_type=TOPIC_RESOURCE,
                resource_name=t,
                configuration_keys=["min.insync.replicas"],
            )
            for t in topics
        ],
        include_synonyms=False,
        include_documentation=False,
    )
    answer = await ctx.raw_request(
        request, "DESCRIBE_CONFIGS", DESCRIBE_CONFIGS_VERSION, req, timeout_s=30
    )
    out: dict[str, int] = {}
    for result in answer.results:
        for entry in result.configs if result.error_code == 0 else ():
            if entry.name == "min.insync.replicas" and entry.value is not None:
                out[result.resource_name] = int(entry.value)
    return out


def _overview(admin: Any) -> tuple[Any, Any]:
    cluster = admin.describe_cluster(request_timeout=15).result()
    return cluster, admin.list_topics(timeout=15)


def _broker_min_isr(ctx: ConsoleContext, topics: Iterable[str]) -> dict[str, int]:
    """In the broker (on its loop): each topic's ``min.insync.replicas`` from its metadata
    cache, the topic's override else the broker's default (what DescribeConfigs answers,
    without a request per 500 topics)."""
    broker = ctx.broker
    assert broker is not None
    default = int(broker.config.min_insync_replicas)
    out = {}
    for topic in topics:
        value = (broker.topic_configs(topic) or {}).get("min.insync.replicas")
        out[topic] = int(value) if value is not None else default
    return out


def _log_dir_rows(answers: Mapping[int, Any]) -> list[dict[str, Any]]:
    from kafkacore.protocol import ErrorCode

    rows: list[dict[str, Any]] = []
    for broker, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            rows.append({"broker": broker, "dir": None, "error": str(answer)})
            continue
        for result in answer.results:
            size = sum(p.partition_size for t in result.topics for p in t.partitions)
            replicas = sum(len(t.partitions) for t in result.topics)
            total = getattr(result, "total_bytes", -1)
            usable = getattr(result, "usable_bytes", -1)
            rows.append(
                {
                    "broker": broker,
                    "dir": result.log_dir,
                    "error": None if result.error_code == 0 else ErrorCode(result.error_code).name,
                    "replicas": replicas,
                    "size": size,
                    "total": total if total >= 0 else None,
                    "usable": usable if usable >= 0 else None,
                    "used_pct": (100 * (total - usable) / total)
                    if total > 0 and usable >= 0
                    else None,
                }
            )
    return rows


async def cluster(request: Request) -> Response:
    ctx = console_of(request)
    admin = ctx.admin(request)
    info, metadata = await ctx.run_io(_overview, admin)
    min_isr_as_of = None
    if ctx.broker is not None:
        min_isr = _broker_min_isr(ctx, metadata.topics)
    else:
        topics = sorted(metadata.topics)
        min_isr, min_isr_as_of = await ctx.view_state(_min_isr_kept).get(
            ctx.user(request), lambda: min_isr_of(ctx, request, topics)
        )
    nodes = sorted(info.nodes, key=lambda n: n.id)
    partitions = partitions_of(metadata)
    health = partition_health(partitions, min_isr)
    rows = spread([n.id for n in nodes], partitions)

    async def fetch_log_dirs() -> list[dict[str, Any]]:
        return _log_dir_rows(await describe_log_dirs(ctx, request, nodes))

    log_dirs, log_dirs_as_of = await ctx.view_state(_log_dirs_kept).get(
        ctx.user(request), fetch_log_dirs
    )
    controller = info.controller.id if info.controller is not None else None
    internal = sum(1 for t in metadata.topics if t.startswith("__"))
    return ctx.render(
        request,
        "cluster.html",
        cluster_id=info.cluster_id,
        controller=controller,
        nodes=nodes,
        topic_count=len(metadata.topics),
        internal_count=internal,
        partition_count=len(partitions),
        replica_count=sum(len(p.replicas) for p in partitions),
        health=health,
        spread=rows,
        log_dirs=log_dirs,
        listeners=_local_listeners(ctx),
        log_dirs_as_of=time.strftime("%H:%M:%S", time.localtime(log_dirs_as_of)),
        min_isr_as_of=(
            time.strftime("%H:%M:%S", time.localtime(min_isr_as_of))
            if min_isr_as_of is not None
            else None
        ),
    )


def _min_isr_kept() -> Kept[str | None, dict[str, int]]:
    """Each user's topics' ``min.insync.replicas`` outside the broker (a view state)."""
    return Kept(MIN_ISR_TTL_S)


def _log_dirs_kept() -> Kept[str | None, list[dict[str, Any]]]:
    """Each user's DescribeLogDirs rows (a view state)."""
    return Kept(LOG_DIRS_TTL_S)


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    return [Route("/cluster", cluster)]


def _local_listeners(ctx: ConsoleContext) -> list[str]:
    """In the broker: its listeners with the bound ports (the other brokers' are not known
    through the protocol, which gives one endpoint per broker)."""
    broker = ctx.broker
    if broker is None:
        return []
    bound = broker.bound_ports
    out = []
    for e in broker.config.listener_endpoints():
        port = bound.get(e.listener_name, e.port)
        out.append(f"{e.listener_name}://{e.host or ''}:{port} ({e.security_protocol})")
    return out
