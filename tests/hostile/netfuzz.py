"""A network fuzzer for a running broker: real request frames, mutated, sent over many
connections, with a well-behaved client producing and consuming on another connection.

Seeds: a request of every API at every version the broker implements, encoded by
kafkacore's codec (each API's defaults, and values drawn from its schema by
:func:`kafkacore.protocol.samples.sample`), and the frames of a real client's session
(confluent-kafka producing with every codec, consuming in a group, administering:
:mod:`hostile.capture`). Mutations: bit flips, truncation, a wrong
size field, another API key or version (unknown, negative, one past the newest), huge
array and string lengths (int32 and unsigned varint), bytes inserted or dropped,
frames spliced together.

The property, for each mutated frame: the broker answers it (an answer with the
request's correlation id that decodes as that API's response) or closes the connection,
in time. A frame the codec cannot decode must be answered or closed within
``--answer-s``; a decodable one may wait (a Fetch's ``max_wait_ms``, a JoinGroup's
rebalance: the client asked for it), and is only counted. Throughout: the broker process
stays up, its memory stays bounded, its log shows no handler error (UNKNOWN_SERVER_ERROR)
and no transport error, and the well-behaved client keeps being served.

Not sent (their mutations are, when they no longer decode): requests that would make
the broker do a client-requested amount of work out of proportion (CreateTopics or
CreatePartitions of more than 100 partitions: Kafka would attempt them too), and,
unless ``--control-apis``, the controller's requests (LeaderAndIsr, UpdateMetadata,
StopReplica, ControlledShutdown): on a broker without an authorizer any client may send
them, as to a Kafka broker in ZooKeeper mode, and a valid one rewrites the broker's view
of the cluster (its leaders, its live brokers), which is what they are for.

Run: ``make fuzz-net`` (``NETFUZZ_SECONDS``, ``NETFUZZ_CONNECTIONS``), or
``python -m hostile.netfuzz --seconds 60`` from ``tests/``. Findings (frame, outcome,
log excerpt) are written to ``--findings`` for replay.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import struct
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkacore.protocol import (
    APIS_BY_NAME,
    RequestHeader,
    decode_request,
    decode_response,
    encode_request,
)
from kafkacore.protocol.samples import sample

__all__ = ["CONTROL_APIS", "Fuzzer", "Report", "main", "seeds"]

_SIZE = struct.Struct(">i")
_WASTEFUL = {"CreateTopics", "CreatePartitions"}
CONTROL_APIS = ("LeaderAndIsr", "UpdateMetadata", "StopReplica", "ControlledShutdown")
_MAX_PARTITIONS = 100
_INTERESTING_INT32 = [0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x7FFFFFF0, 0x00FFFFFF, 0x10000]
_HUGE_UVARINT = [b"\xff\xff\xff\xff\x0f", b"\xff\xff\xff\x7f", b"\x80\x80\x80\x80\x80\x01"]


def seeds(
    rnd: random.Random, samples_per_version: int = 2, control_apis: bool = True
) -> list[bytes]:
    """Request frames (size prefix included): every API, every implemented version."""
    out: list[bytes] = []
    for api in APIS_BY_NAME.values():
        lo, hi = api.implemented_min, api.implemented_max
        if lo < 0 or hi < lo:
            continue
        for version in range(lo, hi + 1):
            candidates: list[Any] = []
            with contextlib.suppress(Exception):
                candidates.append(api.request.cls())
            for _ in range(samples_per_version):
                candidates.append(sample(api.request, version, rnd, max_items=2))
            for request in candidates:
                header = RequestHeader(api.key, version, rnd.randrange(1 << 31), "netfuzz")
                try:
                    frame = bytes(encode_request(header, request))
                except Exception:
                    continue  # a default the version cannot carry
                if _acceptable(frame, control_apis):
                    out.append(frame)
    return out


def _acceptable(frame: bytes, control_apis: bool) -> bool:
    """False for a decodable request that asks for a wasteful amount of work, or a
    controller's request when they are not fuzzed."""
    try:
        header, request = decode_request(memoryview(frame)[4:])
    except Exception:
        return True
    name = _name_of(header.api_key)
    if name in CONTROL_APIS:
        return control_apis
    if name not in _WASTEFUL:
        return True
    counts: list[int] = []
    for topic in getattr(request, "topics", None) or ():
        counts.append(int(getattr(topic, "num_partitions", 0) or 0))
        counts.append(int(getattr(topic, "count", 0) or 0))
        counts.append(len(getattr(topic, "assignments", None) or ()))
    return all(c <= _MAX_PARTITIONS for c in counts)


def _name_of(api_key: int) -> str:
    for api in APIS_BY_NAME.values():
        if api.key == api_key:
            return api.name
    return "?"


def mutate(frame: bytes, rnd: random.Random, corpus: list[bytes]) -> tuple[str, bytes]:
    """``(mutation name, mutated frame)``: the size field is kept consistent with the
    body unless the mutation is about the size."""
    body = bytearray(frame[4:])
    kind = rnd.choice(
        [
            "flip",
            "flip",
            "truncate",
            "size",
            "api",
            "version",
            "int32",
            "uvarint",
            "insert",
            "delete",
            "splice",
            "header",
        ]
    )
    if kind == "flip":
        for _ in range(rnd.randint(1, 8)):
            if body:
                body[rnd.randrange(len(body))] ^= 1 << rnd.randrange(8)
    elif kind == "truncate":
        body = body[: rnd.randrange(len(body) + 1)]
    elif kind == "size":
        declared = rnd.choice(
            [
                len(body) + rnd.randint(1, 64),
                max(len(body) - rnd.randint(1, 8), 0),
                -1,
                -(2**31),
                2**31 - 1,
                rnd.randrange(2**31),
            ]
        )
        return kind, _SIZE.pack(declared) + bytes(body)
    elif kind == "api" and len(body) >= 2:
        key = rnd.choice([rnd.randrange(100), -1, 0x7FFF, rnd.randrange(1 << 16) - (1 << 15)])
        body[0:2] = struct.pack(">h", key)
    elif kind == "version" and len(body) >= 4:
        body[2:4] = struct.pack(">h", rnd.choice([-1, 0x7FFF, rnd.randrange(100), 99]))
    elif kind == "int32" and len(body) >= 8:
        pos = rnd.randrange(4, len(body) - 3)
        body[pos : pos + 4] = struct.pack(">I", rnd.choice(_INTERESTING_INT32))
    elif kind == "uvarint" and len(body) > 8:
        pos = rnd.randrange(8, len(body))
        body[pos : pos + 1] = rnd.choice(_HUGE_UVARINT)
    elif kind == "insert":
        pos = rnd.randrange(len(body) + 1)
        body[pos:pos] = rnd.randbytes(rnd.randint(1, 16))
    elif kind == "delete" and body:
        pos = rnd.randrange(len(body))
        del body[pos : pos + rnd.randint(1, 16)]
    elif kind == "splice":
        other = rnd.choice(corpus)[4:]
        cut = rnd.randrange(len(body) + 1)
        body = body[:cut] + other[rnd.randrange(len(other) + 1) :]
    elif kind == "header" and len(body) >= 10:
        # the client id's int16 length (after key, version, correlation id)
        body[8:10] = struct.pack(">h", rnd.choice([-2, -32768, 0x7FFF, len(body)]))
    return kind, _SIZE.pack(len(body)) + bytes(body)


@dataclass
class Report:
    sends: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    mutations: Counter[str] = field(default_factory=Counter)
    findings: list[str] = field(default_factory=list)
    probe_rounds: int = 0
    probe_worst_s: float = 0.0
    rss_start: int = 0
    rss_peak: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        rate = self.sends / self.seconds if self.seconds else 0.0
        lines = [
            f"sends {self.sends} in {self.seconds:.1f} s ({rate:.0f} sends/s)",
            "outcomes " + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items())),
            "mutations " + ", ".join(f"{k} {v}" for k, v in sorted(self.mutations.items())),
            f"probe rounds {self.probe_rounds}, worst {self.probe_worst_s * 1000:.0f} ms",
            f"broker RSS {self.rss_start >> 20} MiB at start, {self.rss_peak >> 20} MiB peak",
            f"findings {len(self.findings)}",
        ]
        lines += [f"  {f}" for f in self.findings[:20]]
        return "\n".join(lines)


class Fuzzer:
    """Fuzz the broker at ``host:port`` (process ``pid``, log file ``log``)."""

    def __init__(
        self,
        host: str,
        port: int,
        pid: int,
        log: Path,
        *,
        seed: int = 0,
        connections: int = 16,
        answer_s: float = 5.0,
        findings_dir: Path | None = None,
        control_apis: bool = False,
        captured: list[bytes] | None = None,
        probe_bootstrap: str | None = None,
    ) -> None:
        self.host, self.port, self.pid, self.log = host, port, pid, log
        self.rnd = random.Random(seed)
        self.connections = connections
        self.answer_s = answer_s
        self.findings_dir = findings_dir
        self.control_apis = control_apis
        self.corpus = seeds(self.rnd, control_apis=control_apis)
        self.captured = [f for f in captured or () if _acceptable(f, control_apis)]
        self.corpus += self.captured
        self.probe_bootstrap = probe_bootstrap or f"{host}:{port}"
        self.report = Report()
        self._log_seen = log.stat().st_size if log.exists() else 0

    # -- the broker's health -------------------------------------------------------------

    def rss(self) -> int:
        with open(f"/proc/{self.pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def alive(self) -> bool:
        try:
            with open(f"/proc/{self.pid}/stat", encoding="ascii") as f:
                return f.read().split()[2] not in ("Z", "X")
        except FileNotFoundError:
            return False

    def _finding(self, what: str, frame: bytes | None = None) -> None:
        n = len(self.report.findings)
        self.report.findings.append(what)
        if self.findings_dir is not None and frame is not None:
            self.findings_dir.mkdir(parents=True, exist_ok=True)
            (self.findings_dir / f"finding-{n:04d}.bin").write_bytes(frame)
            (self.findings_dir / f"finding-{n:04d}.txt").write_text(what + "\n")

    # -- one connection ------------------------------------------------------------------

    async def _worker(self, deadline: float) -> None:
        reader: asyncio.StreamReader | None = None
        writer: asyncio.StreamWriter | None = None
        while time.monotonic() < deadline and self.alive():
            if writer is None:
                try:
                    reader, writer = await asyncio.open_connection(self.host, self.port)
                except OSError as exc:
                    self._finding(f"connect failed: {exc!r}")
                    await asyncio.sleep(0.5)
                    continue
            assert reader is not None
            seed = self.rnd.choice(self.corpus)
            kind, frame = mutate(seed, self.rnd, self.corpus)
            if not _acceptable(frame, self.control_apis):
                self.report.outcomes["skipped"] += 1
                continue
            self.report.sends += 1
            self.report.mutations[kind] += 1
            outcome = await self._exchange(reader, writer, frame)
            self.report.outcomes[outcome] += 1
            if outcome != "answered":
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
                reader = writer = None
        if writer is not None:
            writer.close()

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, frame: bytes
    ) -> str:
        declared = _SIZE.unpack_from(frame)[0]
        consistent = declared == len(frame) - 4
        decodable = False
        header: Any = None
        if consistent:
            with contextlib.suppress(Exception):
                header, _ = decode_request(memoryview(frame)[4:])
                decodable = True
        try:
            writer.write(frame)
            await writer.drain()
        except OSError:
            return "closed"
        try:
            head = await asyncio.wait_for(reader.readexactly(4), self.answer_s)
            size = _SIZE.unpack(head)[0]
            body = await asyncio.wait_for(reader.readexactly(size), self.answer_s)
        except (asyncio.IncompleteReadError, ConnectionError):
            return "closed"
        except TimeoutError:
            if consistent and not decodable:
                self._finding(
                    f"no answer and no close in {self.answer_s:g} s: {frame[:64].hex()}", frame
                )
            return "waiting" if decodable else "unanswered"
        if not consistent:
            return "answered-misframed"  # the broker read a frame of the declared size
        sent_cid = struct.unpack_from(">i", frame, 8)[0]
        if len(body) < 4 or struct.unpack_from(">i", body)[0] != sent_cid:
            self._finding(f"answer with another correlation id: {frame[:64].hex()}", frame)
            return "answered"
        if decodable and header is not None:
            try:
                decode_response(body, header.api_key, header.api_version)
            except Exception as exc:
                if header.api_key != 18:  # ApiVersions: answered at v0 when unsupported
                    self._finding(f"undecodable answer ({exc}) to {frame[:64].hex()}", frame)
        return "answered"

    # -- the well-behaved client -----------------------------------------------------------

    def _probe(self, stop: threading.Event) -> None:
        from kafkacore.client import Client
        from kafkacore.native import load_backend

        backend = load_backend("native")
        records = bytes(backend.build_batch([(0, 1_700_000_000_000, b"k", b"v" * 100, [])]))
        topic = f"netfuzz-probe-{self.rnd.randrange(1 << 30)}"
        try:
            with Client(self.probe_bootstrap, timeout_s=15) as client:
                client.create_topic(topic, 1)
                while not stop.is_set():
                    start = time.monotonic()
                    offset = client.produce(topic, 0, records)
                    got = client.fetch(topic, 0, offset)
                    if not got.records:
                        self._finding("the probe's record was not fetched back")
                    took = time.monotonic() - start
                    self.report.probe_rounds += 1
                    self.report.probe_worst_s = max(self.report.probe_worst_s, took)
                    stop.wait(0.1)
        except Exception as exc:
            self._finding(f"the well-behaved client failed: {exc!r}")

    # -- the run ---------------------------------------------------------------------------

    async def _run(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        workers = [asyncio.create_task(self._worker(deadline)) for _ in range(self.connections)]
        while not all(w.done() for w in workers):
            self.report.rss_peak = max(self.report.rss_peak, self.rss())
            await asyncio.sleep(0.5)
        await asyncio.gather(*workers)

    def run(self, seconds: float) -> Report:
        self.report.rss_start = self.report.rss_peak = self.rss()
        stop = threading.Event()
        probe = threading.Thread(target=self._probe, args=(stop,), daemon=True)
        probe.start()
        start = time.monotonic()
        try:
            asyncio.run(self._run(seconds))
        finally:
            self.report.seconds = time.monotonic() - start
            stop.set()
            probe.join(30)
        if probe.is_alive():
            self._finding("the well-behaved client hung")
        if not self.alive():
            self._finding("the broker process died")
        self._check_log()
        return self.report

    def _check_log(self) -> None:
        """A handler error (answered UNKNOWN_SERVER_ERROR) or a transport error in the
        broker's log is a finding: one per distinct message."""
        text = self.log.read_bytes()[self._log_seen :].decode("utf-8", "replace")
        seen: set[str] = set()
        for line in text.splitlines():
            if "Error handling" in line or "Unexpected error on connection" in line:
                message = line.split("] ", 1)[-1].split(" from ", 1)[0]
                if message not in seen:
                    seen.add(message)
                    self._finding(f"broker log: {line.strip()[:300]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--answer-s", type=float, default=5.0)
    parser.add_argument("--findings", type=Path, default=Path("netfuzz-findings"))
    parser.add_argument(
        "--control-apis", action="store_true", help="also LeaderAndIsr, UpdateMetadata, ..."
    )
    parser.add_argument("--work", type=Path, default=None, help="the broker's data (a temp dir)")
    args = parser.parse_args(argv)
    import tempfile

    from hostile.capture import Proxy, capture_confluent
    from support.brokers import Broker
    from support.ports import free_port

    with tempfile.TemporaryDirectory(prefix="netfuzz-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        proxy_port = free_port()
        broker = Broker(
            work / "data",
            [
                "connections.max.idle.ms=10000",
                "group.initial.rebalance.delay.ms=0",
                f"advertised.listeners=PLAINTEXT://localhost:{proxy_port}",
            ],
        ).start()
        proxy = Proxy(("127.0.0.1", broker.port), proxy_port).start()
        try:
            assert broker.proc is not None
            captured = capture_confluent(proxy)
            fuzzer = Fuzzer(
                "localhost",
                broker.port,
                broker.proc.pid,
                broker.log_file,
                seed=args.seed,
                connections=args.connections,
                answer_s=args.answer_s,
                findings_dir=args.findings,
                control_apis=args.control_apis,
                captured=captured,
                probe_bootstrap=f"localhost:{proxy_port}",
            )
            print(
                f"seed {args.seed}; {len(fuzzer.corpus)} seed frames "
                f"({len(fuzzer.captured)} from confluent-kafka); broker on {broker.port}"
            )
            report = fuzzer.run(args.seconds)
        finally:
            proxy.stop()
            if broker.running:
                broker.stop(check=False)
    print(report.summary())
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
