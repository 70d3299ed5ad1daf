"""Replication throttles, as Kafka's ``ReassignPartitionsCommand`` sets and clears them
around a reassignment: the moving replicas named in the topics'
``leader/follower.replication.throttled.replicas`` and a rate in the brokers'
``leader/follower.replication.throttled.rate`` (IncrementalAlterConfigs).

* :class:`PartitionMove` - Kafka's ``PartitionMove``: the replicas a partition moves
  from (``sources``) and to (``destinations``);
* :func:`throttle_configs` - the topic configs of a move map (Kafka's
  ``calculateLeaderThrottles``/``calculateFollowerThrottles``);
* :func:`set_throttles` / :func:`clear_all_throttles` - ``--execute --throttle`` and what
  ``--verify``/``--cancel`` do once nothing moves.

Thread-safety: the functions block; any thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkacore.admin.client import TIMEOUT, TP, Admin, AdminError, ck_module, error_text
from kafkacore.admin.cluster import exception_name, nodes
from kafkacore.admin.ordering import int_set_order, string_set_order

__all__ = [
    "BROKER_LEVEL_THROTTLES",
    "TOPIC_LEVEL_THROTTLES",
    "PartitionMove",
    "clear_all_throttles",
    "incremental_alter",
    "set_throttles",
    "throttle_configs",
]

BROKER_LEVEL_THROTTLES = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
)
TOPIC_LEVEL_THROTTLES = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


@dataclass(frozen=True)
class PartitionMove:
    """Kafka's ``PartitionMove``: a partition's replicas before the move (``sources``) and
    the ones it adds (``destinations``)."""

    sources: frozenset[int]
    destinations: frozenset[int]


def _wait_java(future: Any) -> Any:
    """:func:`~kafkacore.admin.client.wait`, the broker's errors worded as Kafka's
    ``ExecutionException``."""
    try:
        return future.result(timeout=TIMEOUT)
    except Exception as exc:
        err: Any = exc.args[0] if exc.args else None
        code = err.code() if hasattr(err, "code") else None
        text = error_text(exc)
        if isinstance(code, int) and code > 0:
            with contextlib.suppress(ValueError):
                text = f"org.apache.kafka.common.errors.{exception_name(code)}: {text}"
        raise AdminError(text) from None


def incremental_alter(
    admin: Admin, ops: Mapping[tuple[str, str], list[tuple[str, str | None]]]
) -> None:
    """IncrementalAlterConfigs: ``{(type, name): [(key, value or None = DELETE)]}``, type
    ``"topic"`` or ``"broker"``; the topics in one request, each broker in its own
    (librdkafka takes one BROKER resource per request)."""
    if not ops:
        return
    adm = ck_module("confluent_kafka.admin")
    resources = []
    for (kind, name), entries in ops.items():
        restype = adm.ResourceType.TOPIC if kind == "topic" else adm.ResourceType.BROKER
        resources.append(
            adm.ConfigResource(
                restype,
                name,
                incremental_configs=[
                    adm.ConfigEntry(
                        key,
                        value,
                        incremental_operation=(
                            adm.AlterConfigOpType.DELETE
                            if value is None
                            else adm.AlterConfigOpType.SET
                        ),
                    )
                    for key, value in entries
                ],
            )
        )
    topics = [r for r in resources if r.restype == adm.ResourceType.TOPIC]
    batches = ([topics] if topics else []) + [[r] for r in resources if r not in topics]
    for batch in batches:
        futures = admin.client.incremental_alter_configs(batch, request_timeout=TIMEOUT)
        for future in futures.values():
            _wait_java(future)


def throttle_configs(moves: Mapping[TP, PartitionMove]) -> dict[str, tuple[str, str]]:
    """Per topic ``(leader…replicas, follower…replicas)``: ``p:<each source>`` and
    ``p:<each destination not a source>``, each sorted as strings (a Java TreeSet)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for (topic, p), move in moves.items():
        leader, follower = out.setdefault(topic, (set(), set()))
        leader.update(f"{p}:{s}" for s in move.sources)
        follower.update(f"{p}:{d}" for d in move.destinations if d not in move.sources)
    return {t: (",".join(sorted(lead)), ",".join(sorted(fol))) for t, (lead, fol) in out.items()}


def set_throttles(admin: Admin, moves: Mapping[TP, PartitionMove], rate: int) -> str:
    """The replication throttles of ``moves`` at ``rate`` B/s (topic throttled replicas,
    broker rates); the line the tool prints."""
    ops: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for topic, (leader, follower) in throttle_configs(moves).items():
        ops[("topic", topic)] = [
            ("leader.replication.throttled.replicas", leader),
            ("follower.replication.throttled.replicas", follower),
        ]
    incremental_alter(admin, ops)
    brokers = sorted({b for move in moves.values() for b in move.sources | move.destinations})
    incremental_alter(
        admin,
        {
            ("broker", str(b)): [
                ("leader.replication.throttled.rate", str(rate)),
                ("follower.replication.throttled.rate", str(rate)),
            ]
            for b in brokers
        },
    )
    return f"The inter-broker throttle limit was set to {rate} B/s"


def clear_all_throttles(
    admin: Admin, partitions: Iterable[tuple[TP, list[int]]], emit: Callable[[str], None]
) -> None:
    """Remove the replication throttles of every broker (those of ``partitions``' target
    replicas included) and of ``partitions``' topics (Kafka's ``clearAllThrottles``);
    ``emit`` gets each line the tool prints, before the step it announces (so the lines
    before a failing step are out when it raises)."""
    targets = list(partitions)
    brokers = int_set_order([*(n.id for n in nodes(admin)), *(b for _, rs in targets for b in rs)])
    emit(
        f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} "
        + ",".join(map(str, brokers))
    )
    incremental_alter(
        admin,
        {("broker", str(b)): [(k, None) for k in BROKER_LEVEL_THROTTLES] for b in brokers},
    )
    topics = string_set_order(tp[0] for tp, _ in targets)
    emit(
        f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} "
        + ",".join(topics)
    )
    incremental_alter(
        admin, {("topic", t): [(k, None) for k in TOPIC_LEVEL_THROTTLES] for t in topics}
    )
