"""The Spark tests' shared fixtures: ONE local SparkSession for the whole run (starting a
JVM costs seconds), with the ``kafkacore`` data source registered and Spark's own Kafka
connector jars (``scripts/spark-jars.sh``) on its classpath, and one kafkacore broker.

Python workers must import kafkacore: they run ``sys.executable`` (PYSPARK_PYTHON), the
interpreter of the virtualenv running pytest.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from support.brokers import Broker

REPO = Path(__file__).resolve().parents[2]
SPARK_JARS_SCRIPT = REPO / "scripts" / "spark-jars.sh"


@cache
def spark_kafka_jars() -> tuple[list[str], str | None]:
    """``(jars, error)``: the jars of Spark's Kafka connector listed by
    ``scripts/spark-jars.sh`` (run once; ``make test`` has run it before, so it only
    reads its cache), or the reason there are none."""
    if not SPARK_JARS_SCRIPT.exists():
        return [], f"{SPARK_JARS_SCRIPT} does not exist"
    env = dict(os.environ, PYTHON=sys.executable)
    done = subprocess.run(
        ["bash", str(SPARK_JARS_SCRIPT)], capture_output=True, text=True, env=env, timeout=900
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return [], f"spark-jars.sh failed ({done.returncode}): {done.stderr[-2000:]}"
    jars = sorted(glob.glob(os.path.join(lines[-1].strip(), "*.jar")))
    if not jars:
        return [], f"spark-jars.sh listed no jar in {lines[-1]!r}"
    return jars, None


@pytest.fixture(scope="session")
def spark_jars() -> list[str]:
    """The connector's jars on the session's classpath; fails the test asking for them
    when they could not be fetched."""
    jars, error = spark_kafka_jars()
    if error is not None:
        pytest.fail(f"Spark's Kafka connector jars are missing: {error}")
    return jars


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from kafkacore.spark import KafkaCoreDataSource

    jars, _ = spark_kafka_jars()
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("kafkacore-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.streaming.stopTimeout", "30s")
    )
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(KafkaCoreDataSource)
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """A kafkacore broker for the Spark tests (modules may override it with their own)."""
    b = Broker(tmp_path_factory.mktemp("spark-broker") / "data").start()
    yield b
    b.stop()
