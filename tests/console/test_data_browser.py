"""The Messages and Storage views in a real browser (Debian's chromium through Playwright),
against a kafkacore broker serving the console, with seeded data of known shape: a plain
topic of several segments, a compacted topic the broker's cleaner has compacted, and a
transactional topic with a committed and an aborted transaction.

What is checked: the counts the Storage page shows equal ``kafkacore dump-log``'s over the
broker's own files; a key search finds every occurrence, the oldest segments' included; a
record produced through the browser is read back by a consumer (and audited); the SSE live
tail shows a record produced after the page opened; seeks by offset and timestamp, filters
and the JSON/CSV export."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from console.conftest import ConsoleBroker, screenshot, start_console_broker
from kafkacore.tools.dump_log import DumpOptions, dump_files
from support.brokers import BrokerFactory

SEGMENT = 20_000  # internal.segment.bytes: several segments from little data
PLAIN, COMPACTED, TXN = "orders", "users", "payments"
NEEDLE = b"needle-key"


@pytest.fixture(scope="module")
def seeded(broker_factory: BrokerFactory) -> ConsoleBroker:
    cb = start_console_broker(
        broker_factory, "log.cleaner.backoff.ms=100", "log.cleaner.min.compaction.lag.ms=0"
    )
    admin = AdminClient({"bootstrap.servers": cb.bootstrap})
    segment = {"internal.segment.bytes": str(SEGMENT)}
    futures = admin.create_topics(
        [
            NewTopic(PLAIN, 2, 1, config=segment),
            NewTopic(
                COMPACTED,
                1,
                1,
                config={
                    **segment,
                    "cleanup.policy": "compact",
                    "min.cleanable.dirty.ratio": "0.01",
                    "segment.ms": "100",
                },
            ),
            NewTopic(TXN, 1, 1, config=segment),
        ]
    )
    for f in futures.values():
        f.result(30)
    producer = Producer(
        {"bootstrap.servers": cb.bootstrap, "linger.ms": 5, "batch.num.messages": 20}
    )
    for i in range(600):
        key = NEEDLE if i in (3, 290, 597) else b"order-%d" % (i % 50)
        value = json.dumps({"n": i, "pad": "x" * 80}).encode()
        producer.produce(PLAIN, value, key, partition=0, headers=[("source", b"seed-%d" % (i % 3))])
    for i in range(100):
        producer.produce(PLAIN, b"p1-%d" % i, b"k%d" % i, partition=1)
    for i in range(900):
        producer.produce(COMPACTED, b"u" * 60 + b"%d" % i, b"user-%d" % (i % 10))
    assert producer.flush(30) == 0
    txn = Producer({"bootstrap.servers": cb.bootstrap, "transactional.id": "console-seed"})
    txn.init_transactions(30)
    for commit, n in ((True, 7), (False, 5), (True, 3)):
        txn.begin_transaction()
        for i in range(n):
            txn.produce(TXN, b"v%d" % i, b"t%d" % i)
        assert txn.flush(30) == 0  # written before the abort (else librdkafka drops them)
        if commit:
            txn.commit_transaction(30)
        else:
            txn.abort_transaction(30)
    # the cleaner compacts the closed segments of `users` (records of the same 10 keys)
    deadline = time.monotonic() + 30
    while not any((cb.data_dir / f"{COMPACTED}-0").glob("*.log")) or _cleaned_once(cb):
        assert time.monotonic() < deadline, "the cleaner did not compact users-0"
        time.sleep(0.2)
    return cb


def _cleaned_once(cb: ConsoleBroker) -> bool:
    """True while no cleaner checkpoint names users-0 yet (not compacted)."""
    path = cb.data_dir / "cleaner-offset-checkpoint"
    return not path.exists() or f"{COMPACTED} 0 " not in path.read_text()


def dump_log_counts(directory: Path) -> tuple[int, int, int]:
    """``(data records, control records, batches)`` of dump-log's batch lines over the
    partition's segments (the broker's live files, read-only)."""
    out = io.StringIO()
    files = sorted(str(p) for p in directory.glob("*.log"))
    dump_files(files, DumpOptions(progress=False), out=out, err=io.StringIO())
    data = control = batches = 0
    for m in re.finditer(r"count: (\d+) .*isControl: (\w+)", out.getvalue()):
        batches += 1
        if m.group(2) == "true":
            control += int(m.group(1))
        else:
            data += int(m.group(1))
    return data, control, batches


def number(page: Any, selector: str) -> int:
    return int(page.locator(selector).inner_text().replace(",", ""))


def test_storage_counts_equal_dump_log(seeded: ConsoleBroker, page: Any) -> None:
    for topic in (PLAIN, COMPACTED, TXN):
        page.goto(f"{seeded.console_url}/storage/{topic}/0")
        directory = seeded.data_dir / f"{topic}-0"
        data, control, batches = dump_log_counts(directory)
        assert number(page, "#record-count") == data, topic
        assert number(page, "#control-count") == control, topic
        assert number(page, "#batch-count") == batches, topic
        assert page.locator("#segments tr[data-base]").count() == len(list(directory.glob("*.log")))
        per_segment = page.locator("#segments td.seg-records").all_inner_texts()
        assert sum(int(t.replace(",", "")) for t in per_segment) == data
        log_bytes = sum(p.stat().st_size for p in directory.glob("*.log"))
        assert number(page, "#log-size") == log_bytes
        if topic == PLAIN:  # one record per offset, over several segments
            assert data == number(page, "#offset-span") == 600
            assert len(per_segment) > 3
        elif topic == COMPACTED:  # fewer records than offsets
            assert data < number(page, "#offset-span") == 900
            assert page.locator("#dirty-ratio").inner_text().startswith("0.")
        else:  # 15 records in 3 transactions (3 markers), the 5 of one aborted
            assert (data, control, number(page, "#offset-span")) == (15, 3, 18)
            assert number(page, "#aborted-count") == 5
        screenshot(page, f"storage-{topic}")
    # the dump-log view of the transactional segment: its batches, markers and records
    page.locator("#segments tr[data-base='0'] a", has_text="records").click()
    dump = page.locator("#dump").inner_text()
    assert dump.startswith("Dumping ") and "| offset: 0 " in dump
    assert dump.count("endTxnMarker: COMMIT") == 2 and dump.count("endTxnMarker: ABORT") == 1
    screenshot(page, "storage-dump")
    page.goto(f"{seeded.console_url}/storage")
    assert page.locator(f"#storage-partitions tr[data-tp='{PLAIN}-1']").count() == 1
    screenshot(page, "storage-list")


def test_key_search_finds_every_occurrence(seeded: ConsoleBroker, page: Any) -> None:
    page.goto(f"{seeded.console_url}/messages/{PLAIN}")
    page.fill("#key-search input[name=search]", NEEDLE.decode())
    page.click("#key-search button")
    summary = page.locator("#search-summary").inner_text()
    assert (
        summary.startswith("3 records") and "complete" in summary and "not complete" not in summary
    )
    offsets = [int(t) for t in page.locator("#records td.offset").all_inner_texts()]
    assert offsets == [3, 290, 597]  # offset 3 is in the oldest segment
    first_segment_end = sorted(int(p.stem) for p in (seeded.data_dir / f"{PLAIN}-0").glob("*.log"))[
        1
    ]
    assert offsets[0] < first_segment_end
    screenshot(page, "messages-key-search")
    page.fill("#key-search input[name=search]", "no-such-key")
    page.click("#key-search button")
    assert page.locator("#search-summary").inner_text().startswith("0 records")


def test_seek_filter_decode_and_export(seeded: ConsoleBroker, page: Any) -> None:
    base = f"{seeded.console_url}/messages/{PLAIN}"
    page.goto(base)  # newest 50
    offsets = [int(t) for t in page.locator("#records td.offset").all_inner_texts()]
    assert offsets == list(range(550, 600))
    assert '"n": 599' in page.locator("#records tr[data-offset='599'] pre.value").inner_text()
    screenshot(page, "messages-newest")
    page.goto(base + "?mode=offset&offset=100&count=5&decode=hex")
    assert [int(t) for t in page.locator("#records td.offset").all_inner_texts()] == [
        100,
        101,
        102,
        103,
        104,
    ]
    assert (
        page.locator("#records tr[data-offset='100'] pre.value").inner_text().startswith("7b 22 6e")
    )
    # by timestamp: the record's own timestamp finds it
    consumer = Consumer({"bootstrap.servers": seeded.bootstrap, "group.id": "t-seek"})
    consumer.assign([TopicPartition(PLAIN, 0, 400)])
    msg = consumer.consume(1, 10)[0]
    consumer.close()
    page.goto(base + f"?mode=timestamp&timestamp={msg.timestamp()[1]}&count=1")
    first = int(page.locator("#records td.offset").first.inner_text())
    assert first <= 400 and page.locator("#records td.offset").count() == 1
    # filters: header equals, value contains
    page.goto(
        base + "?mode=offset&offset=0&count=1000&header_key=source&header_value=seed-2&exact=1"
    )
    offsets = [int(t) for t in page.locator("#records td.offset").all_inner_texts()]
    assert offsets == [i for i in range(600) if i % 3 == 2]
    # export: the page as JSON and CSV
    response = page.request.get(base + "?mode=offset&offset=10&count=3&format=json")
    exported = response.json()
    assert [r["offset"] for r in exported] == [10, 11, 12] and exported[0]["headers"] == {
        "source": "seed-1"
    }
    response = page.request.get(base + "?mode=offset&offset=10&count=3&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.text())))
    assert [int(r["offset"]) for r in rows] == [10, 11, 12] and rows[0]["key"] == "order-10"


def test_produce_in_the_browser_is_seen_by_a_consumer(seeded: ConsoleBroker, page: Any) -> None:
    page.goto(f"{seeded.console_url}/messages/{PLAIN}?partition=1&produce=1")
    page.fill("#produce-key", "from-the-browser")
    page.fill("#produce-value", '{"hello": "console"}')
    page.fill("#produce-headers", "origin=playwright")
    page.click("#produce-submit")
    page.wait_for_url(re.compile(r".*produced=\d+"))
    offset = int(re.search(r"produced=(\d+)", page.url).group(1))  # type: ignore[union-attr]
    assert page.locator(f"#records tr[data-offset='{offset}']").count() == 1
    screenshot(page, "messages-produced")
    consumer = Consumer({"bootstrap.servers": seeded.bootstrap, "group.id": "t-produce"})
    consumer.assign([TopicPartition(PLAIN, 1, offset)])
    msg = consumer.consume(1, 10)[0]
    consumer.close()
    assert (msg.key(), msg.value(), msg.headers()) == (
        b"from-the-browser",
        b'{"hello": "console"}',
        [("origin", b"playwright")],
    )
    # and the change is in the audit topic
    audit = Consumer({"bootstrap.servers": seeded.bootstrap, "group.id": "t-audit"})
    audit.assign([TopicPartition("__console_audit", 0, 0)])
    actions: list[dict[str, Any]] = []
    deadline = time.monotonic() + 10
    while not any(a["action"] == "produce" for a in actions) and time.monotonic() < deadline:
        actions += [json.loads(m.value()) for m in audit.consume(10, 0.2) if m.error() is None]
    audit.close()
    assert any(a["action"] == "produce" and a["detail"]["offset"] == offset for a in actions)


def test_live_tail_shows_a_record_produced_after_the_page_opened(
    seeded: ConsoleBroker, page: Any
) -> None:
    page.goto(f"{seeded.console_url}/messages/{PLAIN}?partition=1")
    page.click("#tail-toggle")
    page.wait_for_function("document.getElementById('tail-state').textContent.startsWith('live')")
    producer = Producer({"bootstrap.servers": seeded.bootstrap})
    producer.produce(PLAIN, b"tailed value", b"tailed-key", partition=1)
    assert producer.flush(10) == 0
    row = page.locator("#tail-rows tr.record", has_text="tailed-key")
    row.wait_for(timeout=10_000)  # a hang guard, not a latency bound
    assert "tailed value" in row.inner_text()
    screenshot(page, "messages-live-tail")
    # the browser leaves the stream: its request ends as aborted, which is the point
    page.evaluate("window.consoleTail.close()")
    page.wait_for_timeout(300)
    page.errors[:] = [e for e in page.errors if "/tail?" not in e or "ERR_ABORTED" not in e]


def test_outside_the_broker_messages_read_through_a_consumer(
    seeded: ConsoleBroker, page: Any
) -> None:
    """The console as its own process (``kafkacore console``'s app, here on a thread):
    Messages works through a consumer and says that a key search is not complete there;
    Storage says it needs the broker."""
    import threading

    import uvicorn

    from kafkacore.console.app import create_app
    from kafkacore.console.context import ConsoleContext
    from support.ports import free_port

    ctx = ConsoleContext(bootstrap=seeded.bootstrap)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(ctx), host="127.0.0.1", port=port, lifespan="off", log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}"
        page.goto(f"{url}/messages/{PLAIN}?search={NEEDLE.decode()}")
        summary = page.locator("#search-summary").inner_text()
        assert summary.startswith("3 records") and "not complete" in summary
        assert "read through a consumer" in page.locator("main").inner_text()
        assert [int(t) for t in page.locator("#records td.offset").all_inner_texts()] == [
            3,
            290,
            597,
        ]
        screenshot(page, "messages-outside-broker")
        page.goto(f"{url}/messages/{PLAIN}?mode=offset&offset=100&count=3")
        assert [int(t) for t in page.locator("#records td.offset").all_inner_texts()] == [
            100,
            101,
            102,
        ]
        page.goto(f"{url}/messages/{PLAIN}")  # newest
        assert page.locator("#records td.offset").last.inner_text() == "599"
        page.goto(f"{url}/storage")
        assert "inside a kafkacore broker" in page.locator("main").inner_text()
    finally:
        server.should_exit = True
        thread.join(10)
        ctx.close()
