"""The Topics view against a broker with seeded topics: the list (filter, pages), the
detail's numbers (offsets, exact counts, configs and their source), and the actions done
in the browser (create, alter config, add partitions, delete) checked with Kafka 4.3.1's
own kafka-topics and kafka-configs; each change is in the audit topic."""

from __future__ import annotations

import json
from typing import Any

import pytest

from console.conftest import (
    ConsoleBroker,
    KafkaTools,
    create_topics,
    produce,
    screenshot,
)

SEED = {0: 7, 1: 11, 2: 13}
BULK = 60


@pytest.fixture(scope="module")
def seeded(console_broker: ConsoleBroker) -> ConsoleBroker:
    create_topics(
        console_broker.bootstrap,
        ("orders", 3, {"retention.ms": "3600000"}),
        ("payments", 1, {}),
        *[(f"bulk-{i:03d}", 1, {}) for i in range(BULK)],
    )
    produce(console_broker.bootstrap, "orders", SEED)
    return console_broker


def cell(page: Any, row: str, css: str) -> str:
    return str(page.locator(f"{row} td.{css}").inner_text()).strip()


def test_topic_list_filters_and_pages(seeded: ConsoleBroker, page: Any) -> None:
    page.goto(seeded.console_url + "/topics")
    total = BULK + 2
    assert page.locator("#topic-total").inner_text() == f"{total} of {total}"
    assert page.locator("#topics tr[data-topic]").count() == 50
    assert "page 1 of 2" in page.locator(".pager").inner_text()
    screenshot(page, "topics-list")
    page.click("a[rel=next]")
    assert page.locator("#topics tr[data-topic]").count() == total - 50
    page.fill("input[name=q]", "ORD")
    page.click("#filter button")
    rows = page.locator("#topics tr[data-topic]")
    assert rows.count() == 1
    assert rows.first.get_attribute("data-topic") == "orders"
    assert [c.strip() for c in rows.first.locator("td").all_inner_texts()][1:] == [
        "3", "1", "0", "0"
    ]  # fmt: skip


def test_topic_detail_numbers(seeded: ConsoleBroker, page: Any) -> None:
    page.goto(seeded.console_url + "/topics/orders")
    for partition, n in SEED.items():
        row = f"#partitions tr[data-partition='{partition}']"
        assert cell(page, row, "start") == "0"
        assert cell(page, row, "hw") == str(n)
        assert cell(page, row, "leo") == str(n)
        assert cell(page, row, "span") == str(n)
        assert cell(page, row, "records") == str(n)
        assert cell(page, row, "size") != "-"
    assert page.locator("#exact-total").inner_text() == str(sum(SEED.values()))
    retention = page.locator("#configs tr[data-config='retention.ms']")
    assert retention.locator("td.value").inner_text() == "3600000"
    assert retention.locator("td.source").inner_text() == "DYNAMIC_TOPIC_CONFIG"
    segment = page.locator("#configs tr[data-config='segment.bytes']")
    assert segment.locator("td.source").inner_text() == "DEFAULT_CONFIG"
    screenshot(page, "topic-detail")


def audit_records(bootstrap: str, topic: str = "__console_audit") -> list[dict[str, Any]]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "audit-reader", "enable.auto.commit": False}
    )
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[dict[str, Any]] = []
        while len(out) < end:
            msg = consumer.poll(5)
            assert msg is not None, f"read {len(out)} of {end} audit records"
            assert msg.error() is None, msg.error()
            record = json.loads(msg.value())
            assert msg.key().decode() == record["user"]
            out.append(record)
        return out
    finally:
        consumer.close()


def test_topic_actions_checked_with_kafka_tools(
    seeded: ConsoleBroker, page: Any, kafka_tools: KafkaTools
) -> None:
    url, bootstrap = seeded.console_url, seeded.bootstrap
    page.goto(url + "/topics")
    form = page.locator("#create-topic")
    form.locator("input[name=name]").fill("browser-made")
    form.locator("input[name=partitions]").fill("2")
    form.locator("textarea[name=configs]").fill("cleanup.policy=compact")
    form.locator("button").click()
    page.wait_for_url(url + "/topics/browser-made?done=created")
    assert page.locator("#partition-count").inner_text() == "2"

    form = page.locator("#alter-config")
    form.locator("select[name=config]").select_option("retention.ms")
    form.locator("input[name=value]").fill("7200000")
    form.locator("button").click()
    page.wait_for_url(url + "/topics/browser-made?done=config")

    form = page.locator("#add-partitions")
    form.locator("input[name=count]").fill("4")
    form.locator("button").click()
    page.wait_for_url(url + "/topics/browser-made?done=partitions")
    assert page.locator("#partition-count").inner_text() == "4"
    screenshot(page, "topic-after-actions")

    # a refused change shows Kafka's error and changes nothing
    form = page.locator("#add-partitions")
    form.locator("input[name=count]").evaluate("e => e.removeAttribute('min')")
    form.locator("input[name=count]").fill("2")
    form.locator("button").click()
    assert "INVALID_PARTITIONS" in page.locator("#error").inner_text()

    topics, configs = kafka_tools.run_all(
        (KafkaTools.TOPICS, "--bootstrap-server", bootstrap, "--describe",
         "--topic", "browser-made"),
        (KafkaTools.CONFIGS, "--bootstrap-server", bootstrap, "--describe",
         "--entity-type", "topics", "--entity-name", "browser-made"),
    )  # fmt: skip
    assert topics.returncode == 0, topics.stderr
    assert "PartitionCount: 4" in topics.stdout
    assert "cleanup.policy=compact" in topics.stdout
    assert configs.returncode == 0, configs.stderr
    assert "retention.ms=7200000" in configs.stdout

    form = page.locator("#delete-topic")
    form.locator("input[name=confirm]").fill("browser-made")
    form.locator("button").click()
    page.wait_for_url(url + "/topics?done=deleted")
    listed = kafka_tools.run(KafkaTools.TOPICS, "--bootstrap-server", bootstrap, "--list")
    assert listed.returncode == 0, listed.stderr
    assert "browser-made" not in listed.stdout.split()
    assert "orders" in listed.stdout.split()

    records = audit_records(bootstrap)
    actions = [
        (r["action"], r["result"]) for r in records if r["detail"].get("topic") == "browser-made"
    ]
    assert actions == [
        ("topic.create", "ok"),
        ("topic.alter_config", "ok"),
        ("topic.add_partitions", "ok"),
        ("topic.add_partitions", actions[3][1]),
        ("topic.delete", "ok"),
    ]
    assert actions[3][1].startswith("INVALID_PARTITIONS")
    created = next(r for r in records if r["action"] == "topic.create")
    assert created["user"] == "ANONYMOUS"
    assert created["detail"] == {
        "topic": "browser-made", "partitions": 2, "replication_factor": -1,
        "configs": {"cleanup.policy": "compact"},
    }  # fmt: skip
    assert created["time"].endswith("Z")
