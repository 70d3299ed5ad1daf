"""A small synchronous Kafka client over kafkacore's own protocol codec.

Why not confluent-kafka: the Spark reader needs the raw record-batch bytes of a Fetch to
decode them natively into Arrow, and the exactly-once sink
(:mod:`kafkacore.client.exactly_once`) replays Produce requests with a fixed producer id,
epoch and sequence; librdkafka exposes neither.
"""

from __future__ import annotations

from kafkacore.client._client import Client, FetchResult, KafkaError

__all__ = ["Client", "FetchResult", "KafkaError"]
