"""What timing requests for the request time quota (``request_percentage``) costs, in CPU
time (not wall time: CPU seconds do not count the time a process waits for a core on a
shared machine):

* the accounting one request does while some client has a request quota (three reads of
  the loop thread's CPU clock: the frame read, the handler's end, the response written;
  one recording into the client's rate), timed with ``timeit`` on ``time.process_time``;
* the broker's CPU per request: a kafkacore broker in a child process (utime + stime from
  ``/proc/<pid>/stat``) while one connection sends ``--requests`` cheap requests back to
  back (Metadata v12 for no topic), with no request quota anywhere (``off``: nothing is
  timed), with a quota on another client id (``other``: every request timed and recorded,
  none throttled), and with a quota on this client far above what it uses (``own``),
  alternating the three ``--rounds`` times; the medians and their spread.

    PYTHONPATH=python python benches/broker/request_quota_overhead.py [--requests 5000]

Prints both and the overhead against ``off``.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import struct
import sys
import time
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benches/_common.py
from _common import child_broker, cpu_seconds
from kafkacore.protocol import APIS_BY_NAME, RequestHeader, decode_response, encode_request
from kafkacore.server.client_quotas import ClientQuotaManager
from kafkacore.server.request_quota import NANOS_TO_PERCENTAGE, ConnectionTime, loop_time

CLIENT_ID = "bench-quota"


def accounting_ns(loops: int = 50_000) -> float:
    """The quota's accounting for one request, as the channel and the transport do it."""
    quotas = ClientQuotaManager()
    quotas.load({f"clients/{CLIENT_ID}": {"request_percentage": "1000000"}})
    clock = loop_time()
    reading = ConnectionTime(clock)

    def one_request() -> None:
        reading()  # the frame read
        handled = clock.take() + reading.get_and_reset()  # the handler's end
        quotas.record_request_time("ANONYMOUS", CLIENT_ID, handled * NANOS_TO_PERCENTAGE)
        reading()  # the response written

    timer = timeit.Timer(one_request, timer=time.process_time)
    return min(timer.repeat(number=loops, repeat=5)) / loops * 1e9


class _Connection:
    """Blocking requests over one connection (kafkacore's own codec)."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def call(self, name: str, version: int, request: Any) -> Any:
        self.sock.sendall(self.frame(name, version, request))
        body = self._read(struct.unpack(">i", self._read(4))[0])
        _, response = decode_response(body, APIS_BY_NAME[name].key, version)
        return response

    def frame(self, name: str, version: int, request: Any) -> bytes:
        api = APIS_BY_NAME[name]
        return bytes(encode_request(RequestHeader(api.key, version, 1, CLIENT_ID), request))

    def _read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("closed")
            out += chunk
        return bytes(out)

    def round_trip(self, frame: bytes) -> None:
        self.sock.sendall(frame)
        self._read(struct.unpack(">i", self._read(4))[0])

    def close(self) -> None:
        self.sock.close()


def set_request_quota(conn: _Connection, client_id: str, value: float | None) -> None:
    """AlterClientQuotas: ``request_percentage`` of ``client_id`` set (or removed: None)."""
    request: Any = APIS_BY_NAME["AlterClientQuotas"].request.cls
    entry = request.EntryData(
        entity=[request.EntityData(entity_type="client-id", entity_name=client_id)],
        ops=[request.OpData(key="request_percentage", value=value or 0.0, remove=value is None)],
    )
    response = conn.call("AlterClientQuotas", 1, request(entries=[entry], validate_only=False))
    if [e.error_code for e in response.entries] != [0]:
        raise RuntimeError(f"AlterClientQuotas failed: {response.entries}")
    time.sleep(0.5)  # the broker applies it from its metadata store


MODES = {"off": None, "other": ("someone-else", 10.0), "own": (CLIENT_ID, 1e6)}


def broker_cpu_per_request(requests: int, rounds: int) -> dict[str, list[float]]:
    per_mode: dict[str, list[float]] = {mode: [] for mode in MODES}
    with child_broker() as (bootstrap, pid):
        conn = _Connection(bootstrap)
        meta: Any = APIS_BY_NAME["Metadata"].request.cls
        frame = conn.frame("Metadata", 12, meta(topics=[], allow_auto_topic_creation=False))
        for _ in range(2000):  # warm up
            conn.round_trip(frame)
        current: tuple[str, float] | None = None
        for _ in range(rounds):
            for mode, quota in MODES.items():
                if current is not None and (quota is None or quota[0] != current[0]):
                    set_request_quota(conn, current[0], None)
                if quota is not None:
                    set_request_quota(conn, *quota)
                current = quota
                before = cpu_seconds(pid)
                for _ in range(requests):
                    conn.round_trip(frame)
                per_mode[mode].append((cpu_seconds(pid) - before) / requests * 1e9)
        conn.close()
    return per_mode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    accounting = accounting_ns()
    per_mode = broker_cpu_per_request(args.requests, args.rounds)
    print(f"accounting per request (CPU, in process):      {accounting:9.0f} ns")
    off = statistics.median(per_mode["off"])
    for mode, values in per_mode.items():
        median = statistics.median(values)
        print(
            f"broker CPU per Metadata request, quota {mode:<5}: {median:9.0f} ns"
            f" (range {min(values):.0f}-{max(values):.0f}, {len(values)} rounds)"
            f"  {median / off - 1:+7.2%}"
        )
    print(f"accounting / broker CPU per request (off):     {accounting / off:9.2%}")


if __name__ == "__main__":
    main()
