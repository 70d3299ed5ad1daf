"""The Consumer groups, Charts and /metrics views against one broker with a seeded group:
the lag in records and in time on the group's page, a reset done in the browser whose
dry run must print what Kafka 4.3.1's kafka-consumer-groups prints and whose effect
kafka-consumer-groups --describe must show, a delete, the live charts, and /metrics
against the bytes the partitions hold on disk."""

from __future__ import annotations

import re
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from console.conftest import ConsoleBroker, KafkaTools, create_topics, screenshot

CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
TOPIC = "lagged"
GROUP = "seeded"
COUNTS = {0: 30, 1: 20}
COMMITTED = {0: 10, 1: 20}
AGE_MS = 600_000  # the first record of each partition is this old; one per second after


@pytest.fixture(scope="module")
def seeded(console_broker: ConsoleBroker) -> ConsoleBroker:
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    bootstrap = console_broker.bootstrap
    create_topics(bootstrap, (TOPIC, 2, {}), ("spare", 1, {}))
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    start = int(time.time() * 1000) - AGE_MS
    for partition, n in COUNTS.items():
        for i in range(n):
            producer.produce(
                TOPIC, key=f"k{i}".encode(), value=b"x" * 50, partition=partition,
                timestamp=start + i * 1000,
            )  # fmt: skip
    assert producer.flush(30) == 0
    for group in (GROUP, "doomed"):
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
        deadline = time.monotonic() + 30
        while True:  # the first commit creates __consumer_offsets: retried until it is there
            try:
                consumer.commit(
                    offsets=[TopicPartition(TOPIC, p, o) for p, o in COMMITTED.items()],
                    asynchronous=False,
                )
                break
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        consumer.close()
    console_broker.seed_start_ms = start  # type: ignore[attr-defined]
    return console_broker


def _row(page: Any, partition: int) -> Any:
    return page.locator(f'#partitions tr[data-tp="{TOPIC}-{partition}"]')


def test_group_page_shows_lag_in_records_and_time(seeded: ConsoleBroker, page: Any) -> None:
    page.goto(seeded.console_url + "/groups")
    row = page.locator(f'#groups tr[data-group="{GROUP}"]')
    assert row.locator("td.lag").inner_text() == "20"
    page.click(f'#groups a:text-is("{GROUP}")')
    assert page.locator("#total-lag").inner_text() == "20"
    assert page.locator("#group-state").inner_text() == "Empty"
    cells = [c.strip() for c in _row(page, 0).locator("td").all_inner_texts()]
    assert cells[:6] == [TOPIC, "0", "10", "30", "30", "20"]
    # offset 10 of partition 0 was stamped start + 10 s: its age is now - that
    lag_ms = int(_row(page, 0).locator("td.lag-time").get_attribute("data-ms"))
    expected = int(time.time() * 1000) - (seeded.seed_start_ms + 10_000)  # type: ignore[attr-defined]
    assert expected - 60_000 <= lag_ms <= expected, (lag_ms, expected)
    assert re.fullmatch(r"\d+ min \d+ s", _row(page, 0).locator("td.lag-time").inner_text())
    cells = [c.strip() for c in _row(page, 1).locator("td").all_inner_texts()]
    assert cells[:7] == [TOPIC, "1", "20", "20", "20", "0", "0.0 s"]
    screenshot(page, "ops-group")


def test_lag_in_time_by_fetch_outside_the_broker(seeded: ConsoleBroker) -> None:
    """``kafkacore console`` (no broker in the process) reads the first unconsumed
    record's timestamp with a consumer: the same answer as the broker's log."""
    from concurrent.futures import ThreadPoolExecutor

    from confluent_kafka.admin import AdminClient

    from kafkacore.admin import Admin
    from kafkacore.cli.topics import wire_sender
    from kafkacore.console.grouplag import describe_group

    config = {"bootstrap.servers": seeded.bootstrap}
    # the group is described as Kafka's admin client does (FindCoordinator and
    # ConsumerGroupDescribe/DescribeGroups, raw requests); the lag needs only the consumer
    admin = Admin(AdminClient(config), wire_sender("test"))
    # on a thread of its own, as the console's run_io: this one has Playwright's loop
    with ThreadPoolExecutor(1) as pool:
        state = pool.submit(describe_group, admin, GROUP, consumer_config=config).result()
    assert state.time_source == "fetch"
    by_partition = {p.partition: p for p in state.partitions}
    assert by_partition[0].first_unconsumed_ms == seeded.seed_start_ms + 10_000  # type: ignore[attr-defined]
    assert by_partition[0].lag == 20
    assert (by_partition[1].lag, by_partition[1].lag_ms) == (0, 0)


def test_reset_in_the_browser_matches_kafka_tools(
    seeded: ConsoleBroker, page: Any, kafka_tools: KafkaTools
) -> None:
    page.goto(f"{seeded.console_url}/groups/{GROUP}")
    # by time: the first record stamped at or after start + 15 s is offset 15 in both
    at = seeded.seed_start_ms + 15_000  # type: ignore[attr-defined]
    when = datetime.fromtimestamp(at / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
    page.select_option("#reset-offsets select[name=spec]", "to-datetime")
    page.fill("#reset-offsets input[name=value]", when[:-3])
    page.click('#reset-offsets button[value="dry-run"]')
    rows = [line.split() for line in page.locator("#result").inner_text().splitlines()[1:]]
    assert sorted(rows) == [[GROUP, TOPIC, "0", "15"], [GROUP, TOPIC, "1", "15"]]
    page.select_option("#reset-offsets select[name=topic]", TOPIC)
    page.select_option("#reset-offsets select[name=spec]", "to-earliest")
    page.click('#reset-offsets button[value="dry-run"]')
    dry_run = page.locator("#result").inner_text()
    assert page.locator("#total-lag").inner_text() == "20"  # a dry run changes nothing
    page.select_option("#reset-offsets select[name=topic]", TOPIC)
    page.select_option("#reset-offsets select[name=spec]", "to-earliest")
    page.click('#reset-offsets button[value="execute"]')
    assert page.locator("#total-lag").inner_text() == "50"
    screenshot(page, "ops-group-reset")
    bootstrap = seeded.bootstrap
    kafka_dry, described = kafka_tools.run_all(
        (CONSUMER_GROUPS, "--bootstrap-server", bootstrap, "--group", GROUP, "--topic", TOPIC,
         "--reset-offsets", "--to-earliest", "--dry-run"),
        (CONSUMER_GROUPS, "--bootstrap-server", bootstrap, "--group", GROUP, "--describe"),
    )  # fmt: skip
    assert kafka_dry.returncode == 0, kafka_dry.stderr
    # the page shows the text Kafka's tool prints (the browser drops the leading blank line)
    assert dry_run.strip() == kafka_dry.stdout.strip()
    assert described.returncode == 0, described.stderr
    rows = {
        int(parts[2]): parts
        for line in described.stdout.splitlines()
        if (parts := line.split()) and parts[0] == GROUP
    }
    assert {p: (r[3], r[4], r[5]) for p, r in rows.items()} == {
        0: ("0", "30", "30"),
        1: ("0", "20", "20"),
    }


def test_delete_with_a_dry_run(seeded: ConsoleBroker, page: Any) -> None:
    from confluent_kafka.admin import AdminClient

    page.goto(f"{seeded.console_url}/groups/doomed")
    page.click('#delete-group button[value="dry-run"]')
    assert "would remove its 2 committed offset(s)" in page.locator("#result").inner_text()
    page.click('#delete-group button[value="execute"]')
    page.wait_for_url("**/groups?deleted=doomed*")
    assert page.locator('#groups tr[data-group="doomed"]').count() == 0
    admin = AdminClient({"bootstrap.servers": seeded.bootstrap})
    listed = admin.list_consumer_groups(request_timeout=10).result()
    assert "doomed" not in {g.group_id for g in listed.valid}
    assert GROUP in {g.group_id for g in listed.valid}


def _log_bytes(data_dir: Path, topic: str) -> int:
    return sum(f.stat().st_size for f in data_dir.glob(f"{topic}-*/*.log"))


def test_metrics_count_the_bytes_on_disk(seeded: ConsoleBroker) -> None:
    with urllib.request.urlopen(seeded.console_url + "/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name, value = line.rsplit(" ", 1)
        samples[name] = float(value)
    assert samples[f'kafka_server_brokertopicmetrics_messagesin_total{{topic="{TOPIC}"}}'] == 50
    on_disk = _log_bytes(seeded.data_dir, TOPIC)
    assert on_disk > 50 * 50
    assert samples[f'kafka_server_brokertopicmetrics_bytesin_total{{topic="{TOPIC}"}}'] == on_disk
    # the transport's count of Produce requests and the Produce handler's agree
    produced = samples["kafka_server_brokertopicmetrics_totalproducerequests_total"]
    assert produced >= 1
    by_version = [
        v
        for k, v in samples.items()
        if k.startswith('kafka_network_requestmetrics_requests_total{request="Produce",version=')
    ]
    assert sum(by_version) == produced
    assert samples['kafka_network_requestmetrics_totaltimems_count{request="Produce"}'] == produced
    assert 'kafka_network_requestmetrics_totaltimems{quantile="0.99",request="Produce"}' in samples


def test_charts_update_live(seeded: ConsoleBroker, page: Any) -> None:
    page.goto(f"{seeded.console_url}/charts?window=300&topic={TOPIC}")
    page.wait_for_function("window.chartUpdates >= 2", timeout=15_000)
    assert page.locator("#charts canvas").count() == 4  # bytes, records, latency, topic
    # the topic's 10 s points add up to the 50 records produced (once their slot closed)
    deadline = time.monotonic() + 15
    while True:
        data = page.evaluate(f"fetch('/charts/data?window=300&topic={TOPIC}').then(r => r.json())")
        total = sum(data["topic"]["records_in"]) * 10
        if total == 50 or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert total == 50
    assert len(data["broker"]["time"]) == 300
    assert data["broker"]["time"][-1] >= time.time() - 3
    screenshot(page, "ops-charts")


def test_consumer_group_page_shows_epochs_and_assignments(seeded: ConsoleBroker, page: Any) -> None:
    """A consumer group (KIP-848, two confluent-kafka members with
    ``group.protocol=consumer``): the list shows its type, its page the protocol, the
    group and target assignment epochs, and per member its epoch, its current and target
    assignments and that it has reconciled, as ConsumerGroupDescribe answers them."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient

    from kafkacore.admin import Admin
    from kafkacore.admin import groups as ops
    from kafkacore.cli.topics import wire_sender

    group, topic = "modern", "modern-topic"
    create_topics(seeded.bootstrap, (topic, 4, {}))
    stop = threading.Event()
    members = [
        Consumer(
            {
                "bootstrap.servers": seeded.bootstrap,
                "group.id": group,
                "group.protocol": "consumer",
                "client.id": f"modern-{i}",
            }
        )
        for i in range(2)
    ]

    def poll(consumer: Any) -> None:
        consumer.subscribe([topic])
        while not stop.is_set():
            consumer.poll(0.2)

    threads = [threading.Thread(target=poll, args=(c,), daemon=True) for c in members]
    for t in threads:
        t.start()
    admin = Admin(AdminClient({"bootstrap.servers": seeded.bootstrap}), wire_sender("test"))

    def settled() -> ops.GroupDescription | None:
        try:
            d = next(ops.describe_groups(admin, [group]))
        except ops.GroupError:
            return None
        at_target = all(
            m.assignment == m.target_assignment and m.member_epoch == d.target_assignment_epoch
            for m in d.members
        )
        return d if d.state == "Stable" and len(d.members) == 2 and at_target else None

    try:
        deadline = time.monotonic() + 60
        with ThreadPoolExecutor(1) as pool:  # off Playwright's event loop
            while (desc := pool.submit(settled).result()) is None:
                assert time.monotonic() < deadline, "the consumer group did not settle"
                time.sleep(0.5)
        assert sorted(len(m.assignment) for m in desc.members) == [2, 2]

        page.goto(seeded.console_url + "/groups")
        row = page.locator(f'#groups tr[data-group="{group}"]')
        assert row.locator("td.type").inner_text() == "Consumer"
        page.goto(f"{seeded.console_url}/groups/{group}")
        assert page.locator("#group-type").inner_text() == "Consumer"
        assert page.locator("#group-protocol").inner_text() == "consumer"
        assert page.locator("#group-state").inner_text() == "Stable"
        assert page.locator("#group-epoch").inner_text() == str(desc.group_epoch)
        assert page.locator("#target-epoch").inner_text() == str(desc.target_assignment_epoch)
        for m in desc.members:
            cells = page.locator(f'#members tr[data-member="{m.member_id}"]')
            assert cells.locator("td.protocol").inner_text() == "consumer"
            assert cells.locator("td.member-epoch").inner_text() == str(m.member_epoch)
            text = ", ".join(f"{t}-{p}" for t, p in m.assignment)
            assert cells.locator("td.current").inner_text().strip() == text
            assert cells.locator("td.target").inner_text().strip() == text
            assert cells.locator("td.reconciliation").inner_text() == "stable"
        screenshot(page, "ops-consumer-group")
    finally:
        stop.set()
        for t in threads:
            t.join(10)
        for c in members:
            c.close()
