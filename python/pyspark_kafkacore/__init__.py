"""Static registration of the ``kafkacore`` data source: Spark imports every installed
``pyspark_*`` module at start-up and registers its ``DefaultSource`` under its name."""

from __future__ import annotations

from kafkacore.spark import KafkaCoreDataSource as DefaultSource

__all__ = ["DefaultSource"]
