"""Installing kafkacore is enough for ``format("kafkacore")``: a new Spark application
that never calls ``spark.dataSource.register`` finds ``pyspark_kafkacore.DefaultSource``
through PySpark's static data source import (its own JVM, so the shared session's explicit
registration cannot help it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support.brokers import Broker

pytestmark = pytest.mark.timeout(300)

SCRIPT = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    path = sys.argv[1]
    df = spark.read.format("kafkacore").option("kafkacore.path", path).option(
        "subscribe", "static").load()
    rows = sorted((r.offset, bytes(r.value).decode()) for r in df.collect())
    print("ROWS", rows)
    spark.stop()
    """
)


def test_format_kafkacore_without_register(tmp_path: Path) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    broker = Broker(tmp_path / "data").start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("static", 1, 1)])["static"].result(30)
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        for i in range(3):
            producer.produce("static", value=f"v{i}".encode())
        assert producer.flush(30) == 0
    finally:
        broker.stop()  # clean shutdown: the high watermark checkpoint is written
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "ROWS [(0, 'v0'), (1, 'v1'), (2, 'v2')]" in proc.stdout, proc.stdout
