"""Leader elections over an admin client (Kafka's ``Admin.electLeaders`` and the text of
``kafka-leader-election.sh``'s ``LeaderElectionCommand``): ElectLeaders v1 to the
controller, so the broker's error messages reach the output as Kafka's AdminClient reports
them; the partition sets in the order Kafka's ``HashSet`` iterates them.

Thread-safety: the functions block; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from kafkacore.admin.client import TP, Admin, AdminError
from kafkacore.admin.cluster import controller_call, error_message, exception_name
from kafkacore.admin.ordering import partition_set_order

__all__ = ["ElectionResult", "ElectionType", "elect_leaders", "election_lines"]


class ElectionType(IntEnum):
    """Kafka's ``ElectionType``: its id in ElectLeaders."""

    PREFERRED = 0
    UNCLEAN = 1


@dataclass(frozen=True)
class ElectionResult:
    """The partitions elected, those that needed no election (ELECTION_NOT_NEEDED) and
    those that failed, with Kafka's exception text."""

    succeeded: list[TP] = field(default_factory=list)
    noop: list[TP] = field(default_factory=list)
    failed: dict[TP, str] = field(default_factory=dict)


def elect_leaders(admin: Admin, kind: ElectionType, partitions: list[TP] | None) -> ElectionResult:
    """ElectLeaders v1 of ``kind`` for ``partitions`` (None: all) sent to the controller;
    :class:`~kafkacore.admin.client.AdminError` when the whole request failed."""
    from kafkacore.protocol import APIS_BY_NAME, ErrorCode

    cls: Any = APIS_BY_NAME["ElectLeaders"].request.cls
    topic_partitions = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for t, p in dict.fromkeys(partitions):
            by_topic.setdefault(t, []).append(p)
        topic_partitions = [
            cls.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()
        ]
    request = cls(election_type=int(kind), topic_partitions=topic_partitions, timeout_ms=30000)
    response = controller_call(admin, "ElectLeaders", request, version=1)
    if response.error_code:
        raise AdminError(error_message(response.error_code, None))
    result = ElectionResult()
    for topic in response.replica_election_results:
        for p in topic.partition_result:
            tp = (topic.topic, p.partition_id)
            if p.error_code == 0:
                result.succeeded.append(tp)
            elif p.error_code == ErrorCode.ELECTION_NOT_NEEDED:
                result.noop.append(tp)
            else:
                result.failed[tp] = (
                    f"org.apache.kafka.common.errors.{exception_name(p.error_code)}: "
                    + error_message(p.error_code, p.error_message)
                )
    return result


def election_lines(kind: ElectionType, result: ElectionResult) -> list[str]:
    """The lines ``kafka-leader-election --election-type <kind>`` prints for ``result``."""
    name = kind.name
    lines = []
    if result.succeeded:
        lines.append(
            f"Successfully completed leader election ({name}) for partitions "
            + ", ".join(f"{t}-{p}" for t, p in partition_set_order(result.succeeded))
        )
    if result.noop:
        lines.append(
            "Valid replica already elected for partitions "
            + ", ".join(f"{t}-{p}" for t, p in partition_set_order(result.noop))
        )
    for tp in partition_set_order(result.failed):
        lines.append(
            f"Error completing leader election ({name}) for partition: {tp[0]}-{tp[1]}: "
            f"{result.failed[tp]}"
        )
    return lines
