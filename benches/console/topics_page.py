"""The console's topic list with 10,000 topics: the first view (the list is fetched: one
Metadata request for every topic), then timed GETs of /topics pages (first page, a
filtered page, the last page) every 0.5 s, while the kept list is refreshed in the
background every LIST_TTL_S seconds.

    python benches/console/topics_page.py [--topics 10000] [--rounds 20] [--target kafka]

``--target kafkacore`` (default): a kafkacore broker serving the console itself
(``console.listeners``). ``--target kafka``: Apache Kafka 4.3.1 (KRaft, from the jars)
and ``kafkacore console`` as its own process (kafkacore creates topics at about 15 a
second on a loaded machine, so 10,000 take many minutes; Kafka's are quicker).

Prints one JSON object: per kind of page, the median and p90 in milliseconds, and the
page's size in bytes. Wall-clock figures: on a loaded machine they say little; the HTML
size and the number of rows rendered do not depend on load.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> tuple[float, int]:
    ms, body = get_body(url)
    return ms, len(body)


def get_body(url: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as answer:
        body = answer.read()
        assert answer.status == 200
    return (time.perf_counter() - start) * 1000, body


def listed(body: bytes) -> str:
    """The page's "N of M" topic count."""
    found = re.search(rb'id="topic-total">([^<]*)<', body)
    return found.group(1).decode() if found else "?"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--target", choices=("kafkacore", "kafka"), default="kafkacore")
    args = parser.parse_args()
    from confluent_kafka.admin import AdminClient, NewTopic

    work = Path(tempfile.mkdtemp(prefix="console-bench-", dir="/dev/shm"))
    port, http = free_port(), free_port()
    log = (work / "broker.log").open("wb")
    procs = []
    if args.target == "kafkacore":
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "kafkacore.cli", "server-start",
             "--override", f"listeners=PLAINTEXT://localhost:{port}",
             "--override", f"log.dirs={work / 'data'}",
             "--override", f"console.listeners=http://127.0.0.1:{http}"],
            stdout=log, stderr=subprocess.STDOUT,
        ))  # fmt: skip
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
        from support.kafka_jars import kafka_libs, kraft_single_node_props, start_kraft_node

        props = work / "server.properties"
        props.write_text(kraft_single_node_props(work, port, free_port()))
        procs.append(start_kraft_node(kafka_libs(), props, work / "kafka.log"))
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "kafkacore.cli", "console",
             "--bootstrap-server", f"localhost:{port}", "--listen", f"http://127.0.0.1:{http}"],
            stdout=log, stderr=subprocess.STDOUT,
        ))  # fmt: skip
    try:
        url = f"http://127.0.0.1:{http}"
        deadline = time.monotonic() + 60
        while True:
            try:
                get(url + "/static/console.css")
                break
            except OSError:
                assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
                time.sleep(0.2)
        admin = AdminClient({"bootstrap.servers": f"localhost:{port}"})
        start = time.monotonic()
        names = [f"topic-{i:05d}" for i in range(args.topics)]
        for i in range(0, len(names), 100):
            while True:
                futures = admin.create_topics(
                    [NewTopic(n, 1, 1) for n in names[i : i + 100]], request_timeout=600
                )
                try:
                    for future in futures.values():
                        future.result(900)
                    break
                except Exception as exc:  # Kafka not up yet, or a topic already made
                    if "TOPIC_ALREADY_EXISTS" in str(exc):
                        break
                    assert time.monotonic() - start < 900, exc
                    time.sleep(1)
        created_s = time.monotonic() - start
        # Kafka's brokers learn the new topics from the metadata log a little later: wait
        # until a Metadata request lists them all
        while len([t for t in admin.list_topics(timeout=60).topics if t in set(names)]) < len(
            names
        ):
            assert time.monotonic() - start < 1800, "the topics never all showed"
            time.sleep(2)
        visible_s = time.monotonic() - start
        pages = {
            "first page (50 rows)": "/topics",
            "filtered (q=topic-09, 50 of 1000)": "/topics?q=topic-09",
            "last page (250 rows)": f"/topics?size=250&page={args.topics // 250}",
        }
        # the first view fetches the list (one Metadata request for every topic); later
        # views use the kept list, refreshed in the background every LIST_TTL_S seconds
        first_ms, _ = get(url + "/topics")
        out: dict[str, object] = {
            "topics": args.topics,
            "create_s": round(created_s, 1),
            "all_in_metadata_s": round(visible_s, 1),
            "first_view_ms": round(first_ms, 1),
        }
        for label, path in pages.items():
            samples = []
            body = b""
            for _ in range(args.rounds):
                time.sleep(0.5)
                ms, body = get_body(url + path)
                samples.append(ms)
            size = len(body)
            samples.sort()
            out[label] = {
                "ms_median": round(statistics.median(samples), 1),
                "ms_p90": round(samples[max(0, int(0.9 * len(samples)) - 1)], 1),
                "html_bytes": size,
                "listed": listed(body),
            }
        # the Cluster page: Metadata of every topic, DescribeLogDirs of every replica (and,
        # outside the broker, DescribeConfigs of every topic in chunks of 500) per view
        cluster = sorted(get(url + "/cluster")[0] for _ in range(3))
        out["cluster page"] = {"ms_median": round(cluster[1], 1), "ms_max": round(cluster[2], 1)}
        print(json.dumps(out, indent=1))
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(60)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
