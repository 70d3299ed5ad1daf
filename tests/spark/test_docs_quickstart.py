"""The README's Spark quickstart (``support/snippets.py``), run in this process so that its
``SparkSession.builder.getOrCreate()`` is the Spark tests' one session, against the Spark
tests' broker: the DataFrame it builds holds what was produced."""

from __future__ import annotations

import contextlib
import io
import uuid
from typing import Any

from confluent_kafka import Producer

from support.brokers import Broker
from support.snippets import pointed_at, snippets


def test_spark(spark: Any, broker: Broker) -> None:
    value = f"docs-{uuid.uuid4()}".encode()
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce("orders", key=b"order-1", value=value)
    assert producer.flush(30) == 0
    code = pointed_at(snippets()["spark"], "localhost:9092", broker.bootstrap)
    namespace: dict[str, Any] = {}
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        exec(compile(code, "README.md#spark", "exec"), namespace)
    assert namespace["spark"] is spark
    rows = namespace["orders"].where(f"CAST(value AS STRING) = '{value.decode()}'").collect()
    assert [(r.key, r.topic) for r in rows] == [(b"order-1", "orders")]
    assert "offset" in shown.getvalue()
