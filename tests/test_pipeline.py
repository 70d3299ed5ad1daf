"""The log pipeline example (examples/log_pipeline) without Spark: the agent's generated
logs, its line parsing and file following, the runner's broker and output line, and the
``kafkacore pipeline`` command. The end-to-end run is tests/spark/test_pipeline_end_to_end.py."""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from confluent_kafka import admin as admin_mod

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the examples package

from examples.log_pipeline import agent, runner, topics

START_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z


def event_ms(event: dict[str, object]) -> int:
    moment = datetime.fromisoformat(str(event["timestamp"]).replace("Z", "+00:00"))
    return round(moment.timestamp() * 1000)


def test_generated_logs_are_reproducible_and_consistent() -> None:
    events = agent.generate(5000, seed=3, start_ms=START_MS, span_ms=300_000)
    assert events == agent.generate(5000, seed=3, start_ms=START_MS, span_ms=300_000)
    assert events != agent.generate(5000, seed=4, start_ms=START_MS, span_ms=300_000)

    services = Counter(e["service"] for e in events)
    assert set(services) == {s.name for s in agent.SERVICES}
    for event in events:
        assert START_MS <= event_ms(event) < START_MS + 300_000
        assert json.loads(json.dumps(event)) == event
        status, latency = event["status"], event["latency_ms"]
        assert isinstance(status, int) and isinstance(latency, float) and latency > 0
        if status >= 500:
            assert event["level"] == "ERROR"
        elif status >= 400 or latency > 1000:
            assert event["level"] == "WARN"
        else:
            assert event["level"] in ("INFO", "DEBUG")
        assert event["host"].startswith(f"{event['service']}-")
        assert f" {status} " in event["message"]

    errors = sum(e["level"] == "ERROR" for e in events)
    assert 0.002 * len(events) < errors < 0.05 * len(events)
    latencies = sorted(e["latency_ms"] for e in events)
    p50, p99 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]
    assert p99 > 8 * p50  # a long tail
    assert statistics.median(e["latency_ms"] for e in events if e["service"] == "payments") > (
        statistics.median(e["latency_ms"] for e in events if e["service"] == "auth")
    )


def test_some_generated_events_arrive_late_by_at_most_the_bound() -> None:
    events = agent.generate(5000, seed=5, start_ms=START_MS, span_ms=300_000, max_lateness_ms=4000)
    times = [event_ms(e) for e in events]
    produced = [START_MS + i * 300_000 // 5000 for i in range(5000)]
    late = [p - t for t, p in zip(times, produced, strict=True) if t < p]
    assert 0.02 * len(events) < len(late) < 0.1 * len(events)
    assert max(late) <= 4000
    assert times != sorted(times)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            '{"ts": 1714557600.25, "severity": "warning", "msg": "disk 91% full", "host": "a"}',
            {
                "timestamp": "2024-05-01T10:00:00.250Z",
                "level": "WARN",
                "message": "disk 91% full",
                "host": "a",
                "service": "billing",
            },
        ),
        (
            "time=2024-05-01T10:00:01Z level=error service=api status=503"
            ' latency_ms=12.5ms msg="db down"',
            {
                "timestamp": "2024-05-01T10:00:01.000Z",
                "level": "ERROR",
                "service": "api",
                "status": 503,
                "latency_ms": 12.5,
                "message": "db down",
            },
        ),
        (
            "[2024-05-01 10:00:02,123] FATAL Out of memory",
            {
                "timestamp": "2024-05-01T10:00:02.123Z",
                "level": "ERROR",
                "message": "FATAL Out of memory",
                "service": "billing",
            },
        ),
        (
            "worker restarted",
            {
                "timestamp": "2025-01-01T00:00:00.000Z",
                "level": "INFO",
                "message": "worker restarted",
                "service": "billing",
            },
        ),
    ],
)
def test_parse_line(line: str, expected: dict[str, object]) -> None:
    assert agent.parse_line(line, "billing", START_MS) == expected


def test_parse_line_skips_blank_lines() -> None:
    assert agent.parse_line("  \r", "billing", START_MS) is None


def test_file_tailer_follows_appends_truncation_and_rotation(tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    tailer = agent.FileTailer(path)
    assert tailer.poll() == []  # not there yet
    path.write_text("one\ntwo\nthr")
    assert tailer.poll() == ["one", "two"]  # the partial line waits for its newline
    with path.open("a") as f:
        f.write("ee\r\n")
    assert tailer.poll() == ["three"]
    assert tailer.poll() == []

    path.write_text("new\n")  # truncated (copytruncate) and written again
    assert tailer.poll() == ["new"]

    with path.open("a") as f:
        f.write("last words\nunterminated")
    path.rename(tmp_path / "app.log.1")  # rotated; nothing at the name for a while
    assert tailer.poll() == ["last words"]
    path.write_text("fresh\n")
    assert tailer.poll() == ["unterminated", "fresh"]
    tailer.close()


def test_file_tailer_from_end_skips_what_is_there(tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    path.write_text("old\n")
    tailer = agent.FileTailer(path, from_end=True)
    assert tailer.poll() == []
    with path.open("a") as f:
        f.write("new\n")
    assert tailer.poll() == ["new"]
    tailer.close()

    later = agent.FileTailer(tmp_path / "later.log", from_end=True)
    assert later.poll() == []
    (tmp_path / "later.log").write_text("first\n")  # created after the start: read whole
    assert later.poll() == ["first"]
    later.close()


def test_format_stats_line() -> None:
    stats = {
        "window_start": "2025-01-01T00:03:00.000Z",
        "window_end": "2025-01-01T00:04:00.000Z",
        "service": "payments",
        "events": 812,
        "errors": 23,
        "p50_ms": 118.2,
        "p95_ms": 402.1,
        "p99_ms": None,
    }
    assert runner.format_stats(stats) == (
        "00:03:00-00:04  payments  events    812  errors   23 ( 2.8%)"
        "  p50    118  p95    402  p99      - ms"
    )


def test_runner_broker_creates_the_topics_and_stops_cleanly(tmp_path: Path) -> None:
    broker = runner.BrokerProcess(tmp_path).start()
    try:
        topics.create_topics(broker.bootstrap, {"logs": 3, "log-stats": 1})
        topics.create_topics(broker.bootstrap, {"logs": 3})  # exists: fine
        admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
        listed = admin.list_topics(timeout=10).topics
        assert len(listed["logs"].partitions) == 3
        assert len(listed["log-stats"].partitions) == 1
    finally:
        proc = broker.proc
        broker.stop()
    assert proc is not None and proc.returncode == 0
    assert (tmp_path / "data" / ".kafka_cleanshutdown").exists()


def test_cli_pipeline_needs_an_action(capsys: pytest.CaptureFixture[str]) -> None:
    from kafkacore.cli import main

    assert main(["pipeline"]) == 1
    assert capsys.readouterr().err == "kafkacore pipeline: error: an action is required: demo\n"
    assert main(["pipeline", "demo", "--rate", "fast"]) == 1
    assert "kafkacore pipeline demo: error: argument --rate" in capsys.readouterr().err
