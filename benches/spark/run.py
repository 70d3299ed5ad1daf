"""Spark batch-read benchmark: the same records read by Spark's own Kafka connector from
Apache Kafka 4.3.1 (the baseline), by the ``kafkacore`` data source from a kafkacore
broker (``kafka.bootstrap.servers``), and by the ``kafkacore`` data source straight from
that broker's log directory (``kafkacore.path``). One run, same machine, loopback only.

    make bench-spark                                  # builds, then runs this
    .venv/bin/python benches/spark/run.py [--records 1000000] [--repeat 5] [--paths ...]

Steps:

1. One SparkSession (``local[*]``) with the connector's jars (``scripts/spark-jars.sh``)
   and the ``kafkacore`` source registered (``spark.dataSource.register``).
2. Load: ``--records`` records (default 10 M, no key, 100-byte random values, one
   CreateTime timestamp) into one topic of ``--partitions`` partitions. The record
   batches (RecordBatch v2, uncompressed, ``--batch-records`` records each: ~64 KiB, as a
   producer with ``batch.size=65536`` writes them) are built once with kafkacore's native
   ``build_batch`` and produced unchanged (acks=1, one connection per partition) to each
   broker: both logs hold the same batches. The load's time is recorded, not compared.
3. Read: ``spark.read.format(...).load().selectExpr("count(1)", "sum(length(value))",
   "max(offset)")``: the sum makes every value materialise (a bare ``count()`` may
   skip them); the results are checked (count, bytes, offsets). Each path runs
   ``--repeat`` times (the first ones also warm up the JVM's JIT and the Python workers:
   on 2 cores the first read of a path takes 2-3x the later ones); the best time gives
   rows/s (the median is reported too: with other work on the machine, single reads of a
   few seconds vary by 2x). Order: Apache Kafka (stopped after its reads), the kafkacore
   broker, then the kafkacore broker stopped cleanly (SIGTERM: its high watermark
   checkpoint written) and its log directory read directly. Only one broker runs at a
   time. The machine's load average is recorded: other work on the machine skews every
   figure.

Rows/s, MB/s (value bytes, MiB) and the ratios to the baseline are printed and written to
``benches/results/spark_read.json``. Processes and temp dirs are removed at the end, also
on errors and Ctrl-C. Apache Kafka's start, stop and topic creation come from
``benches/broker/run.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benches"))  # run as a script: benches/_common.py
from _common import run_main, write_report  # noqa: E402

RESULTS = REPO / "benches" / "results"
TOPIC = "spark-read"
VALUE_SIZE = 100
DISTINCT_BATCHES = 16  # per partition; produced round-robin (values repeat every 16 batches)
PATHS = ("kafka", "broker", "direct")
LABELS = {
    "kafka": "Spark Kafka connector on Apache Kafka",
    "broker": "kafkacore source, broker path",
    "direct": "kafkacore source, direct path",
}
TARGETS = {"broker": 1.0, "direct": 2.0}  # x the baseline's rows/s (issue 6)


def load_broker_bench() -> ModuleType:
    """benches/broker/run.py as a module (its Kafka start/stop, topic creation, cleanup)."""
    path = REPO / "benches" / "broker" / "run.py"
    spec = importlib.util.spec_from_file_location("kafkacore_broker_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = load_broker_bench()
log = bench.log


# --------------------------------------------------------------------------- spark


def spark_jars() -> list[str]:
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "spark-jars.sh")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"scripts/spark-jars.sh failed:\n{proc.stderr[-3000:]}")
    directory = Path(proc.stdout.strip().splitlines()[-1])
    return sorted(str(p) for p in directory.glob("*.jar"))


def start_spark(jars: list[str], driver_memory: str) -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[*]")
        .appName("kafkacore-bench-spark")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", driver_memory)
        .config("spark.jars", ",".join(jars))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def register_kafkacore(spark: Any) -> str | None:
    """Register the ``kafkacore`` source; the reason when it cannot be."""
    try:
        from kafkacore.spark import KafkaCoreDataSource
    except Exception as exc:
        return f"kafkacore.spark not importable: {exc!r}"
    spark.dataSource.register(KafkaCoreDataSource)
    return None


# --------------------------------------------------------------------------- load


def make_batches(partitions: int, batch_records: int, seed: int) -> list[list[bytes]]:
    """DISTINCT_BATCHES RecordBatch v2 per partition, base offset 0, random values."""
    from kafkacore import _native

    rng = random.Random(seed)
    now_ms = int(time.time() * 1000)
    out = []
    for _ in range(partitions):
        batches = []
        for _ in range(DISTINCT_BATCHES):
            records = [
                (i, now_ms, None, rng.randbytes(VALUE_SIZE), []) for i in range(batch_records)
            ]
            batches.append(_native.build_batch(records))
        out.append(batches)
    return out


def counts_per_partition(records: int, partitions: int, batch_records: int) -> list[int]:
    """Records per partition: whole batches dealt round-robin, the last one cut short."""
    counts = [0] * partitions
    left, p = records, 0
    while left:
        n = min(batch_records, left)
        counts[p] += n
        left -= n
        p = (p + 1) % partitions
    return counts


def load(broker: Any, records: int, partitions: int, batch_records: int, seed: int) -> float:
    from kafkacore import _native
    from kafkacore.client import Client

    batches = make_batches(partitions, batch_records, seed)
    counts = counts_per_partition(records, partitions, batch_records)
    errors: list[BaseException] = []

    def produce(partition: int) -> None:
        try:
            with Client(broker.bootstrap, client_id="bench-spark-load") as client:
                left, i = counts[partition], 0
                while left:
                    batch = batches[partition][i % DISTINCT_BATCHES]
                    if left < batch_records:  # the last, shorter batch
                        records = _native.batch_records(batch)[:left]
                        batch = _native.build_batch(records)
                    client.produce(TOPIC, partition, batch, acks=1)
                    left -= min(left, batch_records)
                    i += 1
        except BaseException as exc:
            errors.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=produce, args=(p,)) for p in range(partitions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    elapsed = time.monotonic() - started
    with Client(broker.bootstrap) as client:
        ends = client.list_offsets({(TOPIC, p): -1 for p in range(partitions)})
    got = [ends[(TOPIC, p)][0] for p in range(partitions)]
    if got != counts:
        raise RuntimeError(f"{broker.name}: end offsets {got}, expected {counts}")
    return elapsed


# --------------------------------------------------------------------------- read


def read_once(spark: Any, fmt: str, options: dict[str, str]) -> tuple[float, list[int]]:
    reader = spark.read.format(fmt)
    for k, v in options.items():
        reader = reader.option(k, v)
    df = reader.load().selectExpr("count(1)", "sum(length(value))", "max(offset)")
    started = time.perf_counter()
    row = df.collect()[0]
    elapsed = time.perf_counter() - started
    return elapsed, [int(row[0]), int(row[1] or 0), int(row[2] if row[2] is not None else -1)]


def measure(
    spark: Any,
    path: str,
    fmt: str,
    options: dict[str, str],
    records: int,
    counts: list[int],
    repeat: int,
) -> dict[str, Any]:
    times = []
    for i in range(repeat):
        elapsed, got = read_once(spark, fmt, options)
        expected = [records, records * VALUE_SIZE, max(counts) - 1]
        if got != expected:
            raise RuntimeError(f"{path}: read {got} (count, value bytes, max offset), {expected}")
        times.append(round(elapsed, 3))
        rate = records / elapsed
        log(f"{LABELS[path]}: run {i + 1}/{repeat} {elapsed:.2f} s ({rate:,.0f} rows/s)")
    best = min(times)
    median = statistics.median(times)
    return {
        "label": LABELS[path],
        "format": fmt,
        "options": options,
        "seconds": times,
        "best_s": best,
        "median_s": round(median, 3),
        "rows_per_s": round(records / best, 1),
        "value_mib_per_s": round(records * VALUE_SIZE / best / 2**20, 2),
        "median_rows_per_s": round(records / median, 1),
    }


# --------------------------------------------------------------------------- report


def table(results: dict[str, Any], ratios: dict[str, float | None]) -> str:
    hdr = (
        f"{'path':<40} {'best s':>7} {'median s':>8} {'rows/s':>12} {'MiB/s':>7}"
        f" {'vs kafka':>9} {'target':>7}"
    )
    lines = [hdr, "-" * len(hdr)]
    for path in PATHS:
        r = results.get(path)
        if r is None:
            continue
        if "error" in r:
            lines.append(f"{LABELS[path]:<40} {'error: ' + r['error'][:60]}")
            continue
        ratio = ratios.get(path)
        target = f">= {TARGETS[path]:g}x" if path in TARGETS else ""
        lines.append(
            f"{LABELS[path]:<40} {r['best_s']:>7.2f} {r['median_s']:>8.2f}"
            f" {r['rows_per_s']:>12,.0f} {r['value_mib_per_s']:>7.1f}"
            f" {(f'{ratio}x' if ratio else '-'):>9} {target:>7}"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--records", type=int, default=10_000_000, help="records (10_000_000)")
    ap.add_argument("--partitions", type=int, default=4, help="topic partitions (4)")
    ap.add_argument(
        "--batch-records", type=int, default=600, help="records per batch (600: ~64 KiB)"
    )
    ap.add_argument("--repeat", type=int, default=5, help="reads per path; the best counts (5)")
    ap.add_argument(
        "--paths", default=",".join(PATHS), help=f"comma-separated subset of {','.join(PATHS)}"
    )
    ap.add_argument(
        "--connector-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra option for Spark's Kafka connector (e.g. kafka.max.partition.fetch.bytes"
        "=8388608); the baseline uses the defaults",
    )
    ap.add_argument("--driver-memory", default="2g", help="spark.driver.memory (2g)")
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--out", type=Path, default=RESULTS / "spark_read.json")
    args = ap.parse_args()
    paths = [p for p in args.paths.split(",") if p]
    unknown = set(paths) - set(PATHS)
    if unknown:
        ap.error(f"unknown paths {sorted(unknown)}")
    extra = dict(o.split("=", 1) for o in args.connector_option)
    extra = dict(o.split("=", 1) for o in args.connector_option)
    counts = counts_per_partition(args.records, args.partitions, args.batch_records)
    RESULTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    load_before = os.getloadavg()
    results: dict[str, Any] = {}
    loads: dict[str, float] = {}
    jars: list[str] = []
    spark = None
    with bench.cleaned_up():
        try:
            jars = spark_jars()
            log(f"Spark Kafka connector jars: {', '.join(Path(j).name for j in jars)}")
            spark = start_spark(jars, args.driver_memory)
            log(f"Spark {spark.version} up")
            missing = register_kafkacore(spark)
            if missing:
                log(f"kafkacore source unavailable: {missing}")

            if "kafka" in paths:
                libs = bench.kafka_libs()
                log("starting Apache Kafka (KRaft, single node)")
                kafka = bench.start_kafka(libs)
                try:
                    bench.create_topic(kafka, TOPIC, args.partitions)
                    loads["kafka"] = load(
                        kafka, args.records, args.partitions, args.batch_records, args.seed
                    )
                    log(f"loaded {args.records:,} records into kafka in {loads['kafka']:.1f} s")
                    options = {"kafka.bootstrap.servers": kafka.bootstrap, "subscribe": TOPIC}
                    options.update(extra)
                    results["kafka"] = measure(
                        spark, "kafka", "kafka", options, args.records, counts, args.repeat
                    )
                finally:
                    bench.stop(kafka.proc)

            if {"broker", "direct"} & set(paths):
                log("starting kafkacore")
                kc = bench.start_kafkacore()
                data_dir = kc.logfile.parent / "data"
                try:
                    bench.create_topic(kc, TOPIC, args.partitions)
                    loads["kafkacore"] = load(
                        kc, args.records, args.partitions, args.batch_records, args.seed
                    )
                    log(
                        f"loaded {args.records:,} records into kafkacore in "
                        f"{loads['kafkacore']:.1f} s"
                    )
                    if "broker" in paths:
                        if missing:
                            results["broker"] = {"error": missing}
                        else:
                            options = {"kafka.bootstrap.servers": kc.bootstrap, "subscribe": TOPIC}
                            results["broker"] = measure(
                                spark,
                                "broker",
                                "kafkacore",
                                options,
                                args.records,
                                counts,
                                args.repeat,
                            )
                finally:
                    code = bench.stop(kc.proc)
                    if code != 0:
                        log(f"kafkacore exited {code}:\n{kc.tail()}")
                if "direct" in paths:
                    if code != 0:
                        results["direct"] = {"error": f"kafkacore exited {code}"}
                    elif missing:
                        results["direct"] = {"error": missing}
                    else:
                        options = {"kafkacore.path": str(data_dir), "subscribe": TOPIC}
                        results["direct"] = measure(
                            spark,
                            "direct",
                            "kafkacore",
                            options,
                            args.records,
                            counts,
                            args.repeat,
                        )
        finally:
            if spark is not None:
                spark.stop()

    base = results.get("kafka", {}).get("rows_per_s")
    ratios = {p: bench.ratio(r.get("rows_per_s"), base) for p, r in results.items() if p != "kafka"}
    base_median = results.get("kafka", {}).get("median_rows_per_s")
    ratios_median = {
        p: bench.ratio(r.get("median_rows_per_s"), base_median)
        for p, r in results.items()
        if p != "kafka"
    }
    text = table(results, ratios)
    print()
    print(text)
    connector = Path(jars[0]).parent / ".connector" if jars else None
    doc = {
        "meta": {
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "kafkacore_rev": bench.git_rev(),
            "kafka_version": bench.KAFKA_VERSION,
            "spark_version": __import__("pyspark").__version__,
            "spark_kafka_connector": (
                connector.read_text().split()[0] if connector and connector.exists() else None
            ),
            "spark_jars": [Path(j).name for j in jars],
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": sys.version,
            },
            "settings": {
                "records": args.records,
                "value_bytes": VALUE_SIZE,
                "key": None,
                "partitions": args.partitions,
                "records_per_batch": args.batch_records,
                "compression": "none",
                "load": "the same RecordBatch v2 bytes produced to each broker (acks=1)",
                "spark_master": "local[*]",
                "spark.driver.memory": args.driver_memory,
                "query": 'selectExpr("count(1)", "sum(length(value))", "max(offset)")',
                "repeat": args.repeat,
                "connector_options": extra,
                "rows_per_s_from": "the best of the repeats (median_rows_per_s: the median)",
                "mib": "value bytes only, 2**20",
            },
            "load_s": {k: round(v, 1) for k, v in loads.items()},
            "loadavg_1_5_15": {
                "start": [round(x, 2) for x in load_before],
                "end": [round(x, 2) for x in os.getloadavg()],
            },
            "wall_s": round(time.monotonic() - started, 1),
        },
        "results": results,
        "ratios_vs_spark_kafka_on_kafka": ratios,
        "ratios_of_medians": ratios_median,
        "targets": {p: f">= {t:g}x" for p, t in TARGETS.items()},
        "targets_met": {
            p: (ratios.get(p) is not None and ratios[p] >= t)  # type: ignore[operator]
            for p, t in TARGETS.items()
            if p in ratios
        },
    }
    write_report(args.out, doc)
    return 0


if __name__ == "__main__":
    run_main(main)
