"""The whole pipeline in one command: broker, agent, Spark job, and the aggregates printed.

``kafkacore pipeline demo`` (or ``python -m examples.log_pipeline.runner``):

1. starts a kafkacore broker (``python -m kafkacore.cli server-start``) on a free port with
   its data in the work directory, unless ``--bootstrap-server`` names a running one;
2. creates the topics ``logs`` (3 partitions) and ``log-stats``;
3. runs the log agent in generate mode (event time runs ``--speed`` times faster than the
   wall clock, so a 1-minute window closes every ``60 / speed`` seconds);
4. runs the Spark job (local[2]) from ``logs`` to ``log-stats`` and Parquet;
5. prints each aggregate as it arrives on ``log-stats`` until ``--duration`` seconds have
   passed or Ctrl-C, then stops everything it started.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from kafkacore.cli.pipeline import add_demo_arguments

from . import agent, job
from .topics import create_topics, end_offsets

__all__ = ["BrokerProcess", "demo", "format_stats", "main", "run"]

LOGS_PARTITIONS = 3
REPO_CONFIG = Path(__file__).resolve().parents[2] / "config" / "server.properties"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


class BrokerProcess:
    """A kafkacore broker subprocess on a free port, its data and log under ``workdir``.

    It runs in its own session, so a Ctrl-C in the terminal reaches the runner (which stops
    the Spark job first) and not the broker; :meth:`stop` sends SIGTERM, a clean shutdown.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.log_path = workdir / "broker.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"localhost:{self.port}"

    def start(self, timeout: float = 30.0) -> BrokerProcess:
        command = [sys.executable, "-m", "kafkacore.cli", "server-start"]
        if REPO_CONFIG.exists():
            command.append(str(REPO_CONFIG))
        overrides = [
            "node.id=1",
            f"log.dirs={self.workdir / 'data'}",
            f"listeners=PLAINTEXT://localhost:{self.port}",
        ]
        for override in overrides:
            command += ["--override", override]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                command, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the broker exited:\n{self._log_tail()}")
            try:
                with socket.create_connection(("localhost", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the broker did not start in {timeout:.0f} s:\n{self._log_tail()}")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def _log_tail(self) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])


def format_stats(stats: dict[str, Any]) -> str:
    """One aggregate as a line: window, service, events, errors, percentiles."""
    start, end = stats["window_start"][11:19], stats["window_end"][11:16]
    events, errors = stats["events"], stats["errors"]
    rate = 100.0 * errors / events if events else 0.0

    def ms(key: str) -> str:
        value = stats.get(key)
        return "     -" if value is None else f"{value:6.0f}"

    return (
        f"{start}-{end}  {stats['service']:<9} events {events:6d}  errors {errors:4d}"
        f" ({rate:4.1f}%)  p50 {ms('p50_ms')}  p95 {ms('p95_ms')}  p99 {ms('p99_ms')} ms"
    )


def _window_service(stats: dict[str, Any]) -> tuple[str, str]:
    return stats["window_start"], stats["service"]


def demo(
    *,
    bootstrap: str | None = None,
    duration: float = 120.0,
    rate: float = 200.0,
    speed: float = 6.0,
    seed: int | None = None,
    workdir: str | None = None,
    keep: bool = False,
    out: TextIO = sys.stdout,
) -> int:
    """Run the pipeline for ``duration`` seconds (or until Ctrl-C); the exit status."""
    from confluent_kafka import Consumer, TopicPartition

    temporary = workdir is None
    work = Path(tempfile.mkdtemp(prefix="kafkacore-pipeline-") if workdir is None else workdir)
    work.mkdir(parents=True, exist_ok=True)
    settings = job.Settings(bootstrap="", output=str(work / "output"))

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    broker: BrokerProcess | None = None
    stop = threading.Event()
    agent_thread: threading.Thread | None = None
    queries: list[Any] = []
    spark: Any = None
    consumer: Any = None
    deliveries = agent.Deliveries()
    printed = 0
    failed: list[Any] = []
    try:
        if bootstrap is None:
            broker = BrokerProcess(work).start()
            bootstrap = broker.bootstrap
            say(f"broker: kafkacore on {bootstrap} (data and broker.log in {work})")
        else:
            say(f"broker: {bootstrap}")
        create_topics(bootstrap, {settings.source_topic: LOGS_PARTITIONS, settings.stats_topic: 1})
        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "log-pipeline-demo", "log_level": 3}
        )
        # Only this run: the job starts where `logs` ends now, the printer where `log-stats` does.
        starting = {
            settings.source_topic: {
                str(p): o for p, o in end_offsets(consumer, settings.source_topic).items()
            }
        }
        consumer.assign(
            [
                TopicPartition(settings.stats_topic, p, o)
                for p, o in end_offsets(consumer, settings.stats_topic).items()
            ]
        )
        settings = job.Settings(
            bootstrap=bootstrap,
            output=settings.output,
            sink_id=job.sink_id_for(settings.output),
            starting_offsets=json.dumps(starting),
        )

        def produce_logs() -> None:
            producer = agent.make_producer(bootstrap, log_level=3)
            agent.run_generate(
                producer,
                settings.source_topic,
                rate=rate,
                seed=seed,
                speed=speed,
                stop=stop,
                on_delivery=deliveries,
            )

        agent_thread = threading.Thread(target=produce_logs, name="log-agent", daemon=True)
        agent_thread.start()
        say(
            f"agent: {rate:g} events/s to '{settings.source_topic}', event time x{speed:g}"
            f" (a 1-minute window closes every {60 / speed:.0f} s)"
        )
        say("job: starting Spark (local[2]) ...")
        spark = job.session("log-pipeline-demo")
        spark.sparkContext.setLogLevel("ERROR")
        queries = job.start(spark, settings, trigger={"processingTime": "2 seconds"})
        say(
            f"job: '{settings.source_topic}' -> '{settings.stats_topic}' and Parquet in"
            f" {settings.parquet_path}; windows of {settings.window}, watermark"
            f" {settings.watermark}"
        )
        say(
            f"aggregates on '{settings.stats_topic}' for {duration:g} s (Ctrl-C stops);"
            " the first ones come once the watermark passes the end of a window:"
        )
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline and not failed:
            failed = [q for q in queries if q.exception() is not None]
            for query in failed:
                say(f"error: query {query.name} failed: {query.exception()}")
            # A micro-batch's aggregates arrive together: print them by window and service.
            batch = [m for m in consumer.consume(1000, 0.5) if not m.error()]
            for stats in sorted((json.loads(m.value()) for m in batch), key=_window_service):
                say(format_stats(stats))
                printed += 1
    except KeyboardInterrupt:
        say("interrupted")
    finally:
        stop.set()
        if agent_thread is not None:
            agent_thread.join(30)
        if spark is not None:
            # Stopping interrupts a running micro-batch, which Spark logs as errors: expected.
            spark.sparkContext.setLogLevel("OFF")
            for query in queries:
                query.stop()
            spark.stop()
        if consumer is not None:
            consumer.close()
        if broker is not None:
            broker.stop()
        say(
            f"done: {deliveries.delivered} events produced, {printed} aggregates received"
            + (f", {deliveries.failed} deliveries failed" if deliveries.failed else "")
        )
        if temporary and not keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            say(f"kept {work}")
    return 0 if deliveries.failed == 0 and not failed else 1


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    return demo(
        bootstrap=args.bootstrap_server,
        duration=args.duration,
        rate=args.rate,
        speed=args.speed,
        seed=args.seed,
        workdir=args.workdir,
        keep=args.keep,
        out=out,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.log_pipeline.runner", description=__doc__.splitlines()[0]
    )
    add_demo_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
