"""The Cluster and Topics views against a broker with seeded topics: the cluster page's
counts, the topic list (filter, pages), the detail's numbers (offsets, exact counts,
configs and their source), and the actions done in the browser (create, alter config, add
partitions, delete) checked with Kafka 4.3.1's own kafka-topics and kafka-configs; each
change is in the audit topic."""

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
TOPICS = BULK + 3
PARTITIONS = 3 + 1 + 2 + BULK


@pytest.fixture(scope="module")
def seeded(console_broker: ConsoleBroker) -> ConsoleBroker:
    create_topics(
        console_broker.bootstrap,
        ("orders", 3, {"retention.ms": "3600000"}),
        ("payments", 1, {}),
        ("strict", 2, {"min.insync.replicas": "2"}),  # one replica: under min ISR
        *[(f"bulk-{i:03d}", 1, {}) for i in range(BULK)],
    )
    produce(console_broker.bootstrap, "orders", SEED)
    return console_broker


def test_cluster_page(seeded: ConsoleBroker, page: Any) -> None:
    console_broker = seeded
    page.goto(console_broker.console_url + "/")
    assert page.url == console_broker.console_url + "/cluster"
    assert page.title().startswith("Cluster")
    row = page.locator("#brokers tr[data-broker='1']")
    assert "controller" in row.inner_text()
    assert console_broker.bootstrap.split(":")[1] in row.inner_text()
    assert row.locator("td.replicas").inner_text() == str(PARTITIONS)
    assert row.locator("td.leaders").inner_text() == str(PARTITIONS)
    assert page.locator("#topic-count").inner_text() == str(TOPICS)
    assert page.locator("#partition-count").inner_text() == str(PARTITIONS)
    assert page.locator("#urp").inner_text() == "0"
    assert page.locator("#offline").inner_text() == "0"
    assert page.locator("#under-min-isr").inner_text() == "2"
    rows = page.locator("#under_min_isr tr").all_inner_texts()[1:]
    assert [r.split()[:2] for r in rows] == [["strict", "0"], ["strict", "1"]]
    # the broker's one log directory, online, with every replica
    log_dir = page.locator("#log-dirs tr").nth(1).inner_text()
    assert str(console_broker.data_dir) in log_dir and "online" in log_dir
    assert log_dir.split()[2] == str(PARTITIONS)
    screenshot(page, "cluster")


def cell(page: Any, row: str, css: str) -> str:
    return str(page.locator(f"{row} td.{css}").inner_text()).strip()


def test_topic_list_filters_and_pages(seeded: ConsoleBroker, page: Any) -> None:
    page.goto(seeded.console_url + "/topics")
    total = TOPICS
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
    page.click("details.actions summary")
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

    # deleted in the browser too: the seeded "payments"
    page.goto(url + "/topics/payments")
    form = page.locator("#delete-topic")
    form.locator("input[name=confirm]").fill("payments")
    form.locator("button").click()
    page.wait_for_url(url + "/topics?done=deleted")

    # one JVM: kafka-topics --describe of both (its --topic is a regular expression)
    described = kafka_tools.run(
        KafkaTools.TOPICS, "--bootstrap-server", bootstrap, "--describe",
        "--topic", "browser-made|payments",
    )  # fmt: skip
    assert described.returncode == 0, described.stderr
    header = next(line for line in described.stdout.splitlines() if line.startswith("Topic:"))
    assert "Topic: browser-made" in header and "PartitionCount: 4" in header
    configs = header.split("Configs:")[1].strip().split(",")
    assert sorted(configs) == ["cleanup.policy=compact", "retention.ms=7200000"]
    assert "payments" not in described.stdout

    records = audit_records(bootstrap)
    actions = [(r["action"], r["detail"]["topic"], r["result"]) for r in records]
    assert actions == [
        ("topic.create", "browser-made", "ok"),
        ("topic.alter_config", "browser-made", "ok"),
        ("topic.add_partitions", "browser-made", "ok"),
        ("topic.add_partitions", "browser-made", actions[3][2]),
        ("topic.delete", "payments", "ok"),
    ]
    assert actions[3][2].startswith("INVALID_PARTITIONS")
    created = next(r for r in records if r["action"] == "topic.create")
    assert created["user"] == "ANONYMOUS"
    assert created["detail"] == {
        "topic": "browser-made", "partitions": 2, "replication_factor": -1,
        "configs": {"cleanup.policy": "compact"},
    }  # fmt: skip
    assert created["time"].endswith("Z")
