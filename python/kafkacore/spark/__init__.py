"""The ``kafkacore`` PySpark data source: Spark's Kafka source and sink, read and write,
batch and streaming, over a kafkacore broker or straight from a log directory.

    from kafkacore.spark import KafkaCoreDataSource
    spark.dataSource.register(KafkaCoreDataSource)   # or install kafkacore: auto-registered
    df = (spark.read.format("kafkacore")
          .option("kafka.bootstrap.servers", "localhost:9092")
          .option("subscribe", "logs").load())

Needs pyspark 4.1+ (the Arrow writers) and pyarrow; admission control
(``maxOffsetsPerTrigger`` as a ``ReadLimit``) and ``trigger(availableNow=True)`` with
pyspark 4.2+.
"""

from __future__ import annotations

from kafkacore.spark.access import DataLossError
from kafkacore.spark.source import KafkaCoreDataSource, kafka_schema

__all__ = ["DataLossError", "KafkaCoreDataSource", "kafka_schema"]
