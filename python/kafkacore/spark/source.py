"""``KafkaCoreDataSource``: the ``kafkacore`` format for ``spark.read``, ``readStream``,
``write`` and ``writeStream``, a drop-in for Spark's ``kafka`` format (same schema, same
option names) over a kafkacore (or any Kafka) broker, or over a log directory on disk."""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafkacore.spark.options import INCLUDE_HEADERS, parse_read_options, parse_write_options

__all__ = ["KafkaCoreDataSource", "kafka_schema"]

_HEADERS = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


def kafka_schema(include_headers: bool = False) -> StructType:
    """Spark's Kafka source schema (``KafkaRecordToRowConverter.kafkaSchema``), every
    field nullable; ``headers`` only with ``includeHeaders``."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", _HEADERS))
    return StructType(fields)


class KafkaCoreDataSource(DataSource):
    """The ``kafkacore`` data source. Register it with
    ``spark.dataSource.register(KafkaCoreDataSource)``, or rely on the ``pyspark_kafkacore``
    package, which Spark registers on its own."""

    @classmethod
    def name(cls) -> str:
        return "kafkacore"

    def _include_headers(self) -> bool:
        return str(self.options.get(INCLUDE_HEADERS, "false")).strip().lower() == "true"

    def schema(self) -> StructType:
        return kafka_schema(self._include_headers())

    def _check_schema(self, schema: StructType) -> None:
        if schema != self.schema():
            raise ValueError(
                "requirement failed: Kafka source has a fixed schema and cannot be set with a "
                "custom one"
            )

    def reader(self, schema: StructType) -> DataSourceReader:
        from kafkacore.spark.reader import KafkaCoreBatchReader

        options = parse_read_options(self.options, streaming=False)
        self._check_schema(schema)
        return KafkaCoreBatchReader(options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from kafkacore.spark.reader import KafkaCoreStreamReader

        options = parse_read_options(self.options, streaming=True)
        self._check_schema(schema)
        return KafkaCoreStreamReader(options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from kafkacore.spark.writer import KafkaCoreBatchWriter, validate_sink_schema

        if overwrite:
            raise ValueError(
                'Save mode Overwrite not allowed for Kafka. Use mode("append") (Spark\'s '
                "default ErrorIfExists is not available to Python data sources)."
            )
        options = parse_write_options(self.options)
        validate_sink_schema(schema, options)
        return KafkaCoreBatchWriter(options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from kafkacore.spark.writer import KafkaCoreStreamWriter, validate_sink_schema

        options = parse_write_options(self.options)
        validate_sink_schema(schema, options)
        return KafkaCoreStreamWriter(options)
