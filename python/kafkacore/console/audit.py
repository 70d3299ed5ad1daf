"""The console's audit trail: every change made through the console is a record in the
audit topic (``console.audit.topic``, default ``__console_audit``; ``--audit-topic`` for
``kafkacore console``).

A record's key is the user (``ANONYMOUS`` without a login), its value one JSON object::

    {"time": "2026-11-25T08:01:02.345Z", "user": "alice", "action": "topic.create",
     "detail": {"topic": "orders", "partitions": 3}, "result": "ok"}

``result`` is ``ok`` or the error the cluster answered. The topic is created on first use
(one partition, the cluster's default replication factor, ``cleanup.policy=delete``) and
written with the acting user's own client, so the user needs Write (and Create, the first
time) on it when the cluster has an authorizer; a record that cannot be written is logged
as an error and the page says so.

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

__all__ = ["AuditError", "AuditLog", "audit_record"]

logger = logging.getLogger("kafkacore.console.audit")

ANONYMOUS = "ANONYMOUS"


class AuditError(Exception):
    """The audit record could not be written."""


def audit_record(user: str, action: str, detail: dict[str, Any], result: str) -> bytes:
    now = datetime.now(timezone.utc)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    value = {"time": stamp, "user": user, "action": action, "detail": detail, "result": result}
    return json.dumps(value, separators=(",", ":"), default=str).encode()


class AuditLog:
    def __init__(self, ctx: ConsoleContext, topic: str) -> None:
        self.ctx = ctx
        self.topic = topic
        self._producers: dict[str, Producer] = {}
        self._created = False
        self._lock = threading.Lock()

    async def write(
        self, request: Request, action: str, detail: dict[str, Any], result: str
    ) -> None:
        user = self.ctx.user(request) or ANONYMOUS
        config = self.ctx.client_config(request)
        value = audit_record(user, action, detail, result)
        try:
            await self.ctx.run_io(self._write, request, user, config, value)
        except Exception as exc:
            logger.error("audit record not written (%s): %s", exc, value.decode())
            raise AuditError(str(exc)) from exc

    def _write(self, request: Request, user: str, config: dict[str, str], value: bytes) -> None:
        from confluent_kafka import KafkaException, Producer

        self._ensure_topic(request)
        with self._lock:
            producer = self._producers.get(user)
            if producer is None:
                producer = Producer({**config, "acks": "all", "linger.ms": 0})
                self._producers[user] = producer
        failures: list[str] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                failures.append(str(err.str()))

        producer.produce(self.topic, value=value, key=user.encode(), on_delivery=delivered)
        if producer.flush(10) > 0:
            raise KafkaException("audit record not delivered within 10 s")
        if failures:
            raise KafkaException(failures[0])

    def _ensure_topic(self, request: Request) -> None:
        from confluent_kafka import KafkaError, KafkaException

        from kafkacore.console.context import kafka_admin

        if self._created:
            return
        admin = self.ctx.admin(request)
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
