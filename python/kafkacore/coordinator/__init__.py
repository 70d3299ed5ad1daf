"""The coordinators' floor: the key/value formats the group and transaction coordinators
write to their internal topics, declared once with :mod:`kafkacore.protocol.schema` and
read, written and printed as Kafka's generated code does (:mod:`kafkacore.coordinator.codec`,
:mod:`kafkacore.coordinator.records`, :mod:`kafkacore.coordinator.txn_records`), and the
runtime both run on (:mod:`kafkacore.coordinator.runtime`, Kafka's ``coordinator-common``)."""

from kafkacore.coordinator import codec, records

__all__ = ["codec", "records"]
