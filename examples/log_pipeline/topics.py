"""Topic administration the pipeline needs, over confluent-kafka's AdminClient and Consumer."""

from __future__ import annotations

from typing import Any

__all__ = ["create_topics", "end_offsets"]


def create_topics(bootstrap: str, topics: dict[str, int], timeout: float = 30.0) -> None:
    """Create ``topics`` (name -> partitions); a topic that exists already is fine."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()])
    for future in futures.values():
        try:
            future.result(timeout)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise


def end_offsets(consumer: Any, topic: str, timeout: float = 10.0) -> dict[int, int]:
    """Partition -> the next offset to be written (the high watermark)."""
    from confluent_kafka import TopicPartition

    partitions = consumer.list_topics(topic, timeout=timeout).topics[topic].partitions
    return {
        p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)[1]
        for p in sorted(partitions)
    }
