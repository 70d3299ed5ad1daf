"""The transaction coordinator (Kafka's ``TransactionCoordinator``): transactional ids'
state machine persisted in ``__transaction_state`` in Kafka's record formats, the
transaction markers sent to the partition leaders, timeouts and expiry."""

from kafkacore.server.txn.coordinator import TransactionCoordinator

__all__ = ["TransactionCoordinator"]
