"""The classic consumer-group coordinator (Kafka's ``GroupCoordinator`` for the classic
protocol): group membership, rebalances, committed offsets, persisted in
``__consumer_offsets`` in Kafka's record formats."""

from kafkacore.server.group.coordinator import GroupCoordinator

__all__ = ["GroupCoordinator"]
