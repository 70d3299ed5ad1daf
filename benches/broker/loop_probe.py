"""Run ``kafkacore server-start`` with two probes for latency tails, to tell a broker that
stalls its own event loop from a machine that does not schedule it:

* **loop lag**: a task sleeping 1 ms in a loop records how late it wakes; for each wake
  later than 5 ms it also records the event loop thread's CPU time over the interval
  (``time.thread_time``). A stall the loop spent running (CPU close to the lag) is the
  broker's own work (a long callback, a blocking call on the loop); one without CPU is
  the thread waiting for a core (or for the GIL held by another thread of the broker).
* **garbage collection**: every collection's generation and pause (``gc.callbacks``).

``kill -USR2 <pid>`` writes what was gathered since the last signal to
``loop-probe-<pid>.txt`` in the working directory and starts over; so: signal, run the
load, signal, read the file.

    cd /tmp/kc && PYTHONPATH=<checkout>/python .venv/bin/python \\
        benches/broker/loop_probe.py server-start config/server.properties \\
        --override log.dirs=/tmp/kc/data

Measured on the shared 2-core machine (load average above 20) during a 1 KiB, acks=all,
1-partition ProducerPerformance run: 1,116 wakes later than 5 ms (p99.9 43 ms, max
244 ms), none with the loop thread busy for 80 % of it, one with more than 5 ms of loop
CPU (8.8 ms); one gen-0 collection (0.4 ms). The tail there is scheduling, not the broker.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import time
from typing import Any

_gc: list[tuple[int, float]] = []
_gc_started = [0.0]
_lags: list[float] = []
_stalls: list[tuple[float, float]] = []  # (lag, loop-thread CPU seconds over it)


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        _gc.append((int(info["generation"]), time.perf_counter() - _gc_started[0]))


def _quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def _dump(*_: Any) -> None:
    lines = []
    for generation in sorted({g for g, _ in _gc}):
        pauses = sorted(d for g, d in _gc if g == generation)
        lines.append(
            f"gc gen{generation}: {len(pauses)} collections, max {pauses[-1] * 1000:.2f} ms, "
            f"total {sum(pauses) * 1000:.1f} ms"
        )
    lags = sorted(_lags)
    ms = [f"{q} {_quantile(lags, v) * 1000:.2f}" for q, v in (("p50", 0.5), ("p99", 0.99))]
    lines.append(
        f"loop lag: {len(lags)} wakes, {', '.join(ms)}, p99.9 {_quantile(lags, 0.999) * 1000:.2f}"
        f", max {(lags[-1] if lags else 0) * 1000:.2f} ms"
    )
    own = sum(1 for lag, cpu in _stalls if cpu >= 0.8 * lag)
    lines.append(
        f"stalls > 5 ms: {len(_stalls)}; the loop thread busy >= 80 % of the stall: {own}; "
        f"with >= 5 ms of loop CPU: {sum(1 for _, cpu in _stalls if cpu >= 0.005)}; "
        f"max loop CPU in a stall {max((c for _, c in _stalls), default=0.0) * 1000:.1f} ms"
    )
    with open(f"loop-probe-{os.getpid()}.txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    _gc.clear()
    _lags.clear()
    _stalls.clear()


async def _probe() -> None:
    while True:
        wall, cpu = time.perf_counter(), time.thread_time()
        await asyncio.sleep(0.001)
        lag = time.perf_counter() - wall - 0.001
        _lags.append(lag)
        if lag > 0.005:
            _stalls.append((lag, time.thread_time() - cpu))


def main() -> int:
    gc.callbacks.append(_on_gc)
    signal.signal(signal.SIGUSR2, _dump)
    run_until_complete = asyncio.BaseEventLoop.run_until_complete

    def with_probe(self: asyncio.BaseEventLoop, future: Any) -> Any:
        probe = self.create_task(_probe())
        try:
            return run_until_complete(self, future)
        finally:
            probe.cancel()

    asyncio.BaseEventLoop.run_until_complete = with_probe  # type: ignore[method-assign]
    from kafkacore.cli import main as kafkacore_main

    return kafkacore_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
