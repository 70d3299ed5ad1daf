"""Measurements that see the broker: a light C load generator (``rdkafka_bench.c``, on
librdkafka) beside Kafka's Java tools, pinned apart from the broker, with the broker's
CPU time and system calls per request.

* **The generator** is built by :func:`ensure_rdkafka_bench` with ``gcc`` against Debian's
  ``librdkafka-dev`` (``apt-get download`` of it and ``librdkafka1``, unpacked with
  ``dpkg-deb -x``: no root, nothing installed), cached under
  ``$KAFKACORE_CACHE/rdkafka-bench/`` by the source's hash.
* **Pinned**: the broker is started with ``taskset -c 0`` and the generator runs with
  ``taskset -c 1``, so the two do not take each other's core (on a 2-core machine the
  Java tools took the cores and the broker got what was left).
* **Per request**: librdkafka's statistics count the Produce and Fetch requests the
  generator sent; the broker's CPU seconds (``/proc/<pid>/stat``, all threads) and system
  calls over the run are divided by them. System calls are counted with ``perf stat -e
  raw_syscalls:sys_enter,syscalls:sys_enter_<name>... -p <pid>`` (tracepoint counters in
  the kernel: the broker runs at its speed). ``strace -c -f -p`` also works here, but
  stops the broker at every system call, so what it counts is a slowed broker.

:func:`light_session` runs, against one pinned broker, the light matrix (produce then read
back, per case) and the spread cases (produce round-robin over 6, 1,000 and 10,000
partitions, then read them all back). Thread-safety: none needed (one run at a time).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import cpu_seconds  # benches/_common.py (run.py puts benches/ on the path)

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "rdkafka_bench.c"
DEBIAN_PACKAGES = ("librdkafka-dev", "librdkafka1")
BROKER_CPUS = "0"
GENERATOR_CPUS = "1"
BOTH_CPUS = "0,1"  # the light scaling case's broker (sharing cpu 1 with the generator)
# The system calls counted one by one (besides the total): a broker's per-request work
SYSCALLS = (
    "read",
    "write",
    "readv",
    "writev",
    "recvfrom",
    "sendto",
    "recvmsg",
    "sendmsg",
    "pread64",
    "pwrite64",
    "pwritev",
    "sendfile64",
    "epoll_wait",
    "epoll_pwait",
    "epoll_ctl",
    "poll",
    "ppoll",
    "select",
    "futex",
    "ioctl",
    "fsync",
    "fdatasync",
    "lseek",
    "newfstatat",
    "fstat",
    "openat",
    "close",
    "mmap",
    "munmap",
    "madvise",
    "getrusage",
    "clock_nanosleep",
    "sched_yield",
)
TRACEPOINTS = Path("/sys/kernel/tracing/events/syscalls")
# spread cases: topics of at most this many partitions (10,000 = 10 topics of 1,000)
SPREAD_TOPIC_PARTITIONS = 1000


def _cache() -> Path:
    return Path(os.environ.get("KAFKACORE_CACHE", Path.home() / ".cache" / "kafkacore"))


def ensure_rdkafka_bench(log: Callable[[str], None]) -> Path:
    """The generator's executable, built once per version of its source."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    home = _cache() / "rdkafka-bench"
    exe = home / f"rdkafka_bench-{digest}"
    if exe.exists():
        return exe
    multiarch = subprocess.run(
        ["gcc", "-print-multiarch"], check=True, capture_output=True, text=True
    ).stdout.strip()
    sysroot = home / "librdkafka"
    if not (sysroot / "usr" / "include" / "librdkafka" / "rdkafka.h").exists():
        log(f"fetching Debian's {', '.join(DEBIAN_PACKAGES)} into {sysroot}")
        _unpack_debian_packages(sysroot, log)
    libdir = sysroot / "usr" / "lib" / multiarch
    home.mkdir(parents=True, exist_ok=True)
    partial = exe.with_suffix(".tmp")
    subprocess.run(
        [
            *("gcc", "-O2", "-Wall", "-Wextra", "-o", str(partial), str(SOURCE)),
            *("-I", str(sysroot / "usr" / "include"), "-L", str(libdir), "-lrdkafka"),
            f"-Wl,-rpath,{libdir}",
        ],
        check=True,
    )
    partial.rename(exe)
    log(f"built {exe}")
    return exe


def _unpack_debian_packages(sysroot: Path, log: Callable[[str], None]) -> None:
    with tempfile.TemporaryDirectory(prefix="kafkacore-rdkafka-") as work:
        os.chmod(work, 0o755)  # apt's download user writes here

        def download() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["apt-get", "download", *DEBIAN_PACKAGES], cwd=work, capture_output=True, text=True
            )

        got = download()
        if got.returncode != 0 and os.geteuid() == 0:
            log("apt-get download failed; apt-get update, then again")
            subprocess.run(["apt-get", "update", "-qq"], check=False, capture_output=True)
            got = download()
        if got.returncode != 0:
            raise RuntimeError(f"apt-get download {' '.join(DEBIAN_PACKAGES)}: {got.stderr}")
        sysroot.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="librdkafka-", dir=sysroot.parent))
        try:
            for deb in sorted(Path(work).glob("*.deb")):
                subprocess.run(["dpkg-deb", "-x", str(deb), str(staging)], check=True)
            shutil.rmtree(sysroot, ignore_errors=True)
            staging.rename(sysroot)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


# --------------------------------------------------------------------------- counting


class SyscallCounter:
    """``perf stat`` counting a process's system calls (all its threads at the start)
    until :meth:`stop`; ``None`` counts when perf cannot (its error is kept)."""

    def __init__(self, pid: int) -> None:
        self.error: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        events = ["raw_syscalls:sys_enter"] + [
            f"syscalls:sys_enter_{name}"
            for name in SYSCALLS
            if (TRACEPOINTS / f"sys_enter_{name}").exists()  # the kernel's own list
        ]
        fd, out = tempfile.mkstemp(prefix="kafkacore-perf-", suffix=".csv")
        os.close(fd)
        self._out = Path(out)
        perf = shutil.which("perf")
        if perf is None:
            self.error = "perf is not installed"
            return
        self._proc = subprocess.Popen(
            [perf, "stat", "-x,", "-o", out, "-e", ",".join(events), "-p", str(pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(0.3)  # attached to every thread before the load starts
        if self._proc.poll() is not None:
            self.error = (self._proc.stderr.read() if self._proc.stderr else b"").decode()[-500:]

    def stop(self) -> dict[str, int] | None:
        """The counts by system call (``total``: every one), or None."""
        proc = self._proc
        if proc is None or self.error is not None:
            self._out.unlink(missing_ok=True)
            return None
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        counts: dict[str, int] = {}
        text = self._out.read_text()
        self._out.unlink(missing_ok=True)
        for line in text.splitlines():
            cells = line.split(",")
            if len(cells) < 3 or not cells[0].strip().isdigit():
                continue
            name = cells[2].rpartition(":")[2].removeprefix("sys_enter_")
            counts["total" if name == "sys_enter" else name] = int(cells[0])
        if "total" not in counts:
            self.error = "perf printed no counts"
            return None
        return counts


# --------------------------------------------------------------------------- runs


def generator(
    exe: Path,
    mode: str,
    bootstrap: str,
    topics: Sequence[str],
    records: int,
    *,
    size: int = 1024,
    acks: str = "1",
    partitions: int = 1,
    round_robin: bool = False,
    conf: dict[str, str] | None = None,
    cpus: str | None = GENERATOR_CPUS,
    timeout_s: float = 300,
) -> dict[str, Any]:
    """One run of the generator; its JSON answer."""
    args = [*(["taskset", "-c", cpus] if cpus else []), str(exe), mode, "-b", bootstrap]
    args += ["-t", ",".join(topics), "-n", str(records), "-s", str(size), "-a", acks]
    args += ["-p", str(partitions), "-T", str(timeout_s)] + (["-R"] if round_robin else [])
    for key, value in (conf or {}).items():
        args += ["-X", f"{key}={value}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s + 180)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"rdkafka_bench {mode} exited {proc.returncode}: {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    if proc.returncode != 0:
        raise RuntimeError(f"rdkafka_bench {mode} exited {proc.returncode}: {result}")
    return result


def measured(pid: int, run: Callable[[], dict[str, Any]], request_type: str) -> dict[str, Any]:
    """``run()``'s result with the broker's CPU and system calls during it, in total and
    per ``request_type`` request the generator sent."""
    counter = SyscallCounter(pid)
    cpu_before = cpu_seconds(pid)
    try:
        result = run()
    finally:
        cpu = cpu_seconds(pid) - cpu_before
        syscalls = counter.stop()
    requests = int(result.get("requests", {}).get(request_type) or 0)
    result["request_type"] = request_type
    result["broker_cpu_s"] = round(cpu, 3)
    nbytes = result.get("bytes") or 0
    result["broker_cpu_s_per_gib"] = round(cpu / (nbytes / 2**30), 3) if nbytes else None
    result["broker_cpu_us_per_request"] = round(cpu / requests * 1e6, 1) if requests else None
    result["records_per_request"] = round(result["records"] / requests, 1) if requests else None
    if syscalls is None:
        result["syscalls"] = {"error": counter.error}
    else:
        result["syscalls"] = {
            "total": syscalls["total"],
            "per_request": round(syscalls["total"] / requests, 1) if requests else None,
            "per_request_by_call": {
                name: round(n / requests, 2)
                for name, n in sorted(syscalls.items(), key=lambda kv: -kv[1])
                if name != "total" and n and requests
            },
        }
    return result


def topic_names(prefix: str, partitions: int) -> list[tuple[str, int]]:
    """The topics a spread over ``partitions`` partitions uses: one topic up to
    :data:`SPREAD_TOPIC_PARTITIONS`, else topics of that many."""
    if partitions <= SPREAD_TOPIC_PARTITIONS:
        return [(prefix, partitions)]
    count = -(-partitions // SPREAD_TOPIC_PARTITIONS)
    return [(f"{prefix}-{i:02d}", SPREAD_TOPIC_PARTITIONS) for i in range(count)]


_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def case_topic(broker: str, name: str) -> str:
    return f"light-{broker}-" + _SAFE.sub("-", name)


# --------------------------------------------------------------------------- sessions


def warm_rates(
    exe: Path,
    bootstrap: str,
    broker: str,
    sizes: Sequence[int],
    warmup_s: float,
    create_topic: Callable[[str, int], None],
) -> dict[int, float]:
    """Records/s of each record size after a warm-up of about ``warmup_s`` (the JVM's JIT
    needs it; kafkacore gets the same): the rate sizes each case's run."""
    rates: dict[int, float] = {}
    for size in sizes:
        topic = case_topic(broker, f"warm-{size}")
        create_topic(topic, 1)
        n, spent, rate = 50_000 * max(1, 1024 // size), 0.0, 0.0
        while spent < warmup_s:
            r = generator(exe, "produce", bootstrap, [topic], n, size=size)
            spent += r["seconds"]
            rate = r["records_per_s"]
            n = max(n, int(rate * min(4.0, max(1.0, warmup_s - spent))))
        rates[size] = rate
    return rates


def light_case(
    exe: Path,
    pid: int,
    bootstrap: str,
    topic: str,
    partitions: int,
    size: int,
    acks: str,
    records: int,
    create_topic: Callable[[str, int], None],
) -> dict[str, Any]:
    """Produce ``records`` records to a new topic, then read them all back: both
    measured (:func:`measured`)."""
    create_topic(topic, partitions)
    produce = measured(
        pid,
        lambda: generator(exe, "produce", bootstrap, [topic], records, size=size, acks=acks),
        "Produce",
    )
    consume = measured(
        pid,
        lambda: generator(
            exe, "consume", bootstrap, [topic], produce["records"], partitions=partitions
        ),
        "Fetch",
    )
    return {"produce": produce, "consume": consume}


def spread_case(
    exe: Path,
    pid: int,
    bootstrap: str,
    broker: str,
    partitions: int,
    records: int,
    create_topic: Callable[[str, int], None],
) -> dict[str, Any]:
    """1 KiB records, acks=1, round-robin over ``partitions`` partitions (topics of at
    most :data:`SPREAD_TOPIC_PARTITIONS`), then all of them read back."""
    topics = topic_names(case_topic(broker, f"spread-{partitions}"), partitions)
    started = time.monotonic()
    for name, count in topics:
        create_topic(name, count)
    created_s = time.monotonic() - started
    names = [name for name, _ in topics]
    per_topic = topics[0][1]
    produce = measured(
        pid,
        lambda: generator(
            exe, "produce", bootstrap, names, records, partitions=per_topic, round_robin=True
        ),
        "Produce",
    )
    consume = measured(
        pid,
        lambda: generator(
            exe, "consume", bootstrap, names, produce["records"], partitions=per_topic
        ),
        "Fetch",
    )
    return {
        "partitions": partitions,
        "topics": len(topics),
        "create_s": round(created_s, 1),
        "produce": produce,
        "consume": consume,
    }


def summary(name: str, result: dict[str, Any]) -> str:
    """One log line for a light case's result."""
    parts = []
    for mode in ("produce", "consume"):
        r = result.get(mode) or {}
        sc = r.get("syscalls", {}).get("per_request")
        parts.append(
            f"{mode} {r.get('records_per_s') or 0:,.0f} rec/s, "
            f"{r.get('broker_cpu_us_per_request')} us CPU/{r.get('request_type')}, "
            f"{sc} syscalls/{r.get('request_type')}"
        )
    return f"{name}: " + " | ".join(parts)
