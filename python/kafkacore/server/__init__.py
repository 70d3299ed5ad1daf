"""The broker process: transport (:mod:`~kafkacore.server.network`), request channel
(:mod:`~kafkacore.server.channel`), handlers (:mod:`~kafkacore.server.handlers`), replica
manager and delayed fetches, assembled by :class:`~kafkacore.server.broker.KafkaServer`."""

from __future__ import annotations

from kafkacore.server.broker import KafkaServer

__all__ = ["KafkaServer"]
