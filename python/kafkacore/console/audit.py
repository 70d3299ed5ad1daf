"""The console's audit trail: every change made through the console is a record in the
audit topic (``console.audit.topic``, default ``__console_audit``; ``--audit-topic`` for
``kafkacore console``).

A record's key is the user (``ANONYMOUS`` without a login), its value one JSON object::

    {"time": "2026-11-25T08:01:02.345Z", "user": "alice", "action": "topic.create",
     "detail": {"topic": "orders", "partitions": 3}, "result": "ok"}

``result`` is ``ok`` or the error the cluster answered. The topic is created on first use
(one partition, the cluster's default replication factor, ``cleanup.policy=delete``).

Who writes it: inside the broker, the broker itself (a client on its inter-broker listener
with the broker's own credentials, so users need no rights on the audit topic and cannot
skip it); in ``kafkacore console``, the ``--command-config`` account, or with a login the
acting user (who then needs Write, and Create the first time, on the audit topic when the
cluster has an authorizer). A record that cannot be written is logged as an error
(``kafkacore.console.audit``) and :meth:`AuditLog.write` returns False.

Thread-safety: :meth:`AuditLog.write` runs on the loop; its blocking part runs on the
console's pool; the producer cache is locked.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

if TYPE_CHECKING:
    from confluent_kafka import Producer

    from kafkacore.console.context import ConsoleContext

__all__ = ["AuditLog", "audit_record"]

logger = logging.getLogger("kafkacore.console.audit")

ANONYMOUS = "ANONYMOUS"


def audit_record(user: str, action: str, detail: dict[str, Any], result: str) -> bytes:
    now = datetime.now(timezone.utc)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    value = {"time": stamp, "user": user, "action": action, "detail": detail, "result": result}
    return json.dumps(value, separators=(",", ":"), default=str).encode()


class AuditLog:
    """The audit topic's writer; ``service_config``: the librdkafka settings of the
    identity that writes every record (None: each user's own)."""

    def __init__(
        self, ctx: ConsoleContext, topic: str, service_config: dict[str, str] | None = None
    ) -> None:
        self.ctx = ctx
        self.topic = topic
        self.service_config = service_config
        self._producers: dict[str, Producer] = {}
        self._created = False
        self._lock = threading.Lock()

    async def write(
        self, request: Request, action: str, detail: dict[str, Any], result: str
    ) -> bool:
        """Write one record; False (and an error in the log) when it could not be."""
        user = self.ctx.user(request) or ANONYMOUS
        value = audit_record(user, action, detail, result)
        if self.service_config is not None:
            writer, config = "", self.service_config
        else:
            writer, config = user, self.ctx.client_config(request)
        try:
            await self.ctx.run_io(self._write, writer, config, user, value)
        except Exception as exc:
            logger.error("audit record not written (%s): %s", exc, value.decode())
            return False
        return True

    def _write(self, writer: str, config: dict[str, str], user: str, value: bytes) -> None:
        from confluent_kafka import KafkaException, Producer

        self._ensure_topic(config)
        with self._lock:
            producer = self._producers.get(writer)
            if producer is None:
                producer = Producer({**config, "acks": "all", "linger.ms": 0})
                self._producers[writer] = producer
        failures: list[str] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                failures.append(str(err.str()))

        producer.produce(self.topic, value=value, key=user.encode(), on_delivery=delivered)
        if producer.flush(10) > 0:
            raise KafkaException("audit record not delivered within 10 s")
        if failures:
            raise KafkaException(failures[0])

    def _ensure_topic(self, config: dict[str, str]) -> None:
        from confluent_kafka import KafkaError, KafkaException

        from kafkacore.console.context import kafka_admin

        if self._created:
            return
        admin = kafka_admin().AdminClient(dict(config))
        if self.topic not in admin.list_topics(timeout=10).topics:
            topic = kafka_admin().NewTopic(
                self.topic, num_partitions=1, replication_factor=-1,
                config={"cleanup.policy": "delete"},
            )  # fmt: skip
            future = admin.create_topics([topic], request_timeout=10)[self.topic]
            try:
                future.result(timeout=15)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise
        self._created = True

    def close(self) -> None:
        with self._lock:
            producers = list(self._producers.values())
            self._producers.clear()
        for producer in producers:
            producer.flush(5)
