"""Coordinator records: the key/value formats the group coordinator (and, next, the
transaction coordinator) writes to its internal topic, declared once with
:mod:`kafkacore.protocol.schema` and read, written and printed as Kafka's generated code
does (:mod:`kafkacore.coordinator.codec`, :mod:`kafkacore.coordinator.records`)."""

from kafkacore.coordinator import codec, records

__all__ = ["codec", "records"]
