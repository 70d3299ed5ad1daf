"""The partition balancer seen and steered through an admin client:
``kafkacore balancer status|plan|pause|resume|decommission|recommission`` and the
console's Balancer page both call these.

* :func:`balancer_settings` - ``auto.partition.balance.*`` as the controller has them
  (DescribeConfigs of the controller's broker);
* :func:`cluster_model` - the same picture the controller plans from, built from
  Metadata, DescribeCluster (racks), ListPartitionReassignments, DescribeConfigs
  (``min.insync.replicas``) and DescribeLogDirs of every broker (sizes, KIP-1066
  cordoning);
* :func:`balancer_status` - that picture, the moves in flight with their progress (bytes
  the adding replicas hold of the partition's size), and the plan the balancer's own
  planner makes from it: the moves and the skew before and after;
* :func:`set_paused`, :func:`set_decommissioned` - the cluster-wide dynamic configs the
  controller's balancer reads on its next look (IncrementalAlterConfigs of the broker
  default), so they hold across controller failovers.

Thread-safety: the functions block; any thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkacore.admin.client import TIMEOUT, TP, Admin, AdminError, ck_module, wait
from kafkacore.admin.cluster import error_message, metadata, nodes
from kafkacore.admin.reassign import OngoingReassignment, list_reassignments
from kafkacore.balancer import (
    BalancerConfig,
    BrokerModel,
    ClusterModel,
    LogDirModel,
    PartitionModel,
    Plan,
    plan,
)
from kafkacore.config import BrokerConfig
from kafkacore.log import TopicPartition

__all__ = [
    "BalancerStatus",
    "MoveProgress",
    "balancer_settings",
    "balancer_status",
    "cluster_model",
    "set_decommissioned",
    "set_paused",
    "skew_text",
    "status_text",
]

_PREFIX = "auto.partition.balance."
_BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER
_SET, _DELETE = 0, 1  # AlterConfigOp.OpType
PAUSED = "auto.partition.balance.paused"
DECOMMISSIONED = "auto.partition.balance.decommissioned.brokers"


@dataclass(frozen=True)
class MoveProgress:
    """A partition being reassigned (by the balancer or anyone): its replicas (old and
    new), those being added and removed, and how many bytes the added replicas hold of
    what they must copy (the partition's size for each)."""

    tp: TP
    replicas: list[int]
    adding: list[int]
    removing: list[int]
    copied_bytes: int
    total_bytes: int

    @property
    def percent(self) -> float:
        if self.total_bytes <= 0:
            return 100.0
        return min(100.0, 100.0 * self.copied_bytes / self.total_bytes)


@dataclass(frozen=True)
class BalancerStatus:
    """The balancer's settings, the controller, the brokers as planned over, the moves
    in flight and the plan the balancer would make now."""

    settings: BalancerConfig
    controller: int
    brokers: list[BrokerModel]
    in_flight: list[MoveProgress]
    plan: Plan

    @property
    def state(self) -> str:
        s = self.settings
        if not s.enabled:
            return "disabled"
        if s.paused:
            return "paused"
        if self.in_flight:
            return "moving"
        return "balanced" if not self.plan.moves else "planned"


def balancer_settings(admin: Admin, broker: int | None = None) -> BalancerConfig:
    """``auto.partition.balance.*`` in force on ``broker`` (default: the controller,
    whose balancer runs): DescribeConfigs' values parsed as the broker parses them."""
    md = metadata(admin)
    target = md.controller_id if broker is None else broker
    adm = ck_module("confluent_kafka.admin")
    resource = adm.ConfigResource(adm.ResourceType.BROKER, str(target))
    futures = admin.client.describe_configs([resource], request_timeout=TIMEOUT)
    entries = wait(futures[resource])
    props = {
        name: entry.value
        for name, entry in entries.items()
        if name.startswith(_PREFIX) and entry.value is not None
    }
    return BalancerConfig.from_broker_config(BrokerConfig(props))


def _topic_min_isr(admin: Admin, topics: Iterable[str]) -> dict[str, int]:
    adm = ck_module("confluent_kafka.admin")
    resources = [adm.ConfigResource(adm.ResourceType.TOPIC, t) for t in sorted(topics)]
    if not resources:
        return {}
    futures = admin.client.describe_configs(resources, request_timeout=TIMEOUT)
    out = {}
    for resource, future in futures.items():
        entry = wait(future).get("min.insync.replicas")
        out[resource.name] = int(entry.value) if entry is not None and entry.value else 1
    return out


def _log_dirs(admin: Admin, host: str, port: int) -> tuple[LogDirModel, ...]:
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["DescribeLogDirs"].request.cls
    for version in (5, 4):
        try:
            response = admin.send(host, port, "DescribeLogDirs", version, cls(topics=None))
        except OSError:
            continue
        if response.error_code:
            continue
        return tuple(
            LogDirModel(
                r.log_dir,
                int(r.total_bytes),
                int(r.usable_bytes),
                bool(r.is_cordoned) if version >= 5 else False,
                {
                    TopicPartition(t.name, p.partition_index): int(p.partition_size)
                    for t in r.topics
                    for p in t.partitions
                    if not p.is_future_key
                },
            )
            for r in response.results
            if r.error_code == 0
        )
    return ()


def cluster_model(
    admin: Admin, settings: BalancerConfig
) -> tuple[ClusterModel, dict[TP, OngoingReassignment]]:
    """The cluster as the controller's balancer sees it (see the module documentation),
    and the reassignments in progress. Internal topics are included, as the controller
    includes them."""
    md = metadata(admin)
    racks = {n.id: n.rack for n in nodes(admin)}
    ongoing = list_reassignments(admin)
    min_isr = _topic_min_isr(admin, md.topics)
    brokers: dict[int, BrokerModel] = {}
    for b in sorted(md.brokers.values(), key=lambda b: b.id):
        brokers[b.id] = BrokerModel(
            b.id,
            racks.get(b.id),
            True,
            b.id in settings.decommissioned,
            _log_dirs(admin, b.host, b.port),
        )
    sizes: dict[TopicPartition, int] = {}
    for broker in brokers.values():
        for d in broker.log_dirs:
            for tp, size in d.sizes.items():
                sizes[tp] = max(size, sizes.get(tp, 0))
    partitions = []
    for name, topic in sorted(md.topics.items()):
        for index, info in sorted(topic.partitions.items()):
            moving = ongoing.get((name, index))
            replicas = list(info.replicas)
            if moving is not None:
                replicas = [r for r in moving.replicas if r not in moving.removing]
            for r in replicas:
                if r not in brokers:
                    brokers[r] = BrokerModel(r, None, alive=False)
            tp = TopicPartition(name, index)
            partitions.append(
                PartitionModel(
                    tp,
                    tuple(replicas),
                    int(info.leader),
                    tuple(info.isrs),
                    sizes.get(tp, 0),
                    min_isr.get(name, 1),
                    moving is not None,
                )
            )
    return ClusterModel.of(brokers.values(), partitions), ongoing


def balancer_status(admin: Admin) -> BalancerStatus:
    """Settings, picture, moves in flight with their progress, and the plan now."""
    settings = balancer_settings(admin)
    model, ongoing = cluster_model(admin, settings)
    in_flight = []
    for (topic, p), moving in sorted(ongoing.items()):
        tp = TopicPartition(topic, p)
        size = model.partitions[tp].size if tp in model.partitions else 0
        copied = 0
        for b in moving.adding:
            broker = model.brokers.get(b)
            d = broker.dir_of(tp) if broker is not None else None
            copied += d.sizes.get(tp, 0) if d is not None else 0
        in_flight.append(
            MoveProgress(
                (topic, p),
                list(moving.replicas),
                list(moving.adding),
                list(moving.removing),
                copied,
                size * len(moving.adding),
            )
        )
    md_controller = metadata(admin).controller_id
    return BalancerStatus(
        settings,
        int(md_controller),
        sorted(model.brokers.values(), key=lambda b: b.id),
        in_flight,
        plan(model, settings),
    )


def _set_default(admin: Admin, entries: Mapping[str, str | None]) -> None:
    """IncrementalAlterConfigs of the cluster's default broker config (resource name "",
    as ``kafka-configs --entity-default``; confluent-kafka refuses an empty name, so the
    request goes out raw, to any broker)."""
    from kafkacore.protocol import APIS_BY_NAME

    cls: Any = APIS_BY_NAME["IncrementalAlterConfigs"].request.cls
    request = cls(
        resources=[
            cls.AlterConfigsResource(
                resource_type=_BROKER_RESOURCE,
                resource_name="",
                configs=[
                    cls.AlterableConfig(
                        name=name,
                        config_operation=_SET if value is not None else _DELETE,
                        value=value,
                    )
                    for name, value in entries.items()
                ],
            )
        ],
        validate_only=False,
    )
    md = metadata(admin)
    last: str | None = None
    for broker in sorted(md.brokers.values(), key=lambda b: b.id):
        try:
            response = admin.send(broker.host, broker.port, "IncrementalAlterConfigs", 1, request)
        except OSError as exc:
            last = str(exc)
            continue
        (result,) = response.responses
        if result.error_code:
            raise AdminError(error_message(result.error_code, result.error_message))
        return
    raise AdminError(f"No broker answered IncrementalAlterConfigs ({last})")


def set_paused(admin: Admin, paused: bool) -> None:
    """``auto.partition.balance.paused`` as the cluster default: the balancer starts no
    new move (those in flight finish) until resumed (set ``false``, which overrides a
    static ``true`` too)."""
    _set_default(admin, {PAUSED: "true" if paused else "false"})


def set_decommissioned(admin: Admin, brokers: Iterable[int]) -> None:
    """The brokers the balancer drains (``auto.partition.balance.decommissioned.brokers``
    as the cluster default; empty: none)."""
    ids = sorted(set(brokers))
    if any(b < 0 for b in ids):
        raise AdminError(f"Invalid broker id in {ids}")
    _set_default(admin, {DECOMMISSIONED: ",".join(map(str, ids)) if ids else None})


def _spread_text(name: str, spread: Any) -> str:
    if spread is None:
        return f"  {name:<14} unknown (no log directory sizes)"
    mark = "ok" if spread.balanced else "OUT OF TOLERANCE"
    return (
        f"  {name:<14} min {spread.min:g}  max {spread.max:g}  mean {spread.mean:.1f}  "
        f"band [{spread.lower:g}, {spread.upper:g}]  {mark}"
    )


def skew_text(skew: Any) -> list[str]:
    """A skew's lines (the CLI's and the console's plain text)."""
    lines = [
        _spread_text("replicas", skew.replicas),
        _spread_text("leaders", skew.leaders),
        _spread_text("broker bytes", skew.disk_bytes),
        _spread_text("log dir bytes", skew.log_dir_bytes),
    ]
    usage = skew.max_disk_usage_percent
    lines.append(f"  {'fullest disk':<14} {'unknown' if usage is None else f'{usage}%'}")
    lines.append(f"  {'rack misses':<14} {skew.rack_violations} partition(s)")
    lines.append(f"  {'to drain':<14} {skew.on_decommissioned} replica(s)")
    return lines


def status_text(status: BalancerStatus, *, with_plan: bool = False) -> list[str]:
    """``kafkacore balancer status`` (and ``plan`` with ``with_plan``) as lines."""
    s = status.settings
    lines = [
        f"Balancer: {status.state} (controller {status.controller}; "
        f"auto.partition.balance.enable={str(s.enabled).lower()}, "
        f"paused={str(s.paused).lower()})",
        f"Goals: {', '.join(s.goals)}; at most {s.max_moves_in_flight} move(s) in flight; "
        f"throttle {s.throttle_bytes_per_second} B/s; cool-down {s.cooldown_ms} ms",
        "Decommissioned brokers: "
        + (", ".join(map(str, sorted(s.decommissioned))) if s.decommissioned else "none"),
        f"Moves in flight: {len(status.in_flight)}",
    ]
    for m in status.in_flight:
        lines.append(
            f"  {m.tp[0]}-{m.tp[1]} replicas {m.replicas} adding {m.adding} removing "
            f"{m.removing}: {m.copied_bytes}/{m.total_bytes} bytes ({m.percent:.0f}%)"
        )
    lines.append("Skew now:")
    lines.extend(skew_text(status.plan.before))
    lines.append(f"Planned moves: {len(status.plan.moves)} ({status.plan.bytes} bytes)")
    if with_plan:
        lines.extend(f"  {m.describe()}" for m in status.plan.moves)
        lines.append("Skew after the plan:")
        lines.extend(skew_text(status.plan.after))
    lines.extend(f"Unmet: {u}" for u in status.plan.unmet)
    return lines
