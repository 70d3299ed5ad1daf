"""What ``__consumer_offsets`` holds, read back for a test: every data record of every
partition as ``(decoded key, value)`` (``None``: a tombstone), in log order per partition,
through the coordinator's own topic reader."""

from __future__ import annotations

from kafkacore.coordinator import records as recs
from kafkacore.server.group.coordinator import GroupCoordinator


def offsets_records(coordinator: GroupCoordinator) -> list[tuple[object, bytes | None]]:
    """Blocking (log reads)."""
    topic = coordinator.topic
    if not topic.exists():
        return []
    return [
        (recs.decode_key(r.key), r.value)
        for partition in range(topic.partitions)
        for r in topic.read(partition)
        if r.marker is None
    ]
