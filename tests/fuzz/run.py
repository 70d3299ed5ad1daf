"""``make fuzz``: build the cargo-fuzz targets of ``rust/fuzz``, write their seed corpora
(:mod:`fuzz.seeds`), run each target for ``--runs`` executions, then the atheris
protocol-codec fuzzer (:mod:`fuzz.atheris_protocol`) for ``--atheris-runs``; one line per
target: executions, executions per second, seconds, corpus size, findings.

A finding is a file libFuzzer left in ``rust/fuzz/artifacts/<target>/`` (``crash-``,
``oom-``, ``timeout-``, ``leak-``, ``slow-unit-`` excepted): reproduce one with
``rust/fuzz/target/x86_64-unknown-linux-gnu/release/<target> <file>``. Corpora grow in
``rust/fuzz/corpus/<target>/`` (gitignored) and are reused by the next run.

libFuzzer's limits make the "no unbounded allocation" property a finding: inputs are at
most 4 KiB (``-max_len``), one allocation above 512 MiB (``-malloc_limit_mb``) or a
resident size above 2 GiB is reported as ``oom-``, one input taking over 10 s as
``timeout-``.

Why ``RUSTC_BOOTSTRAP=1``: cargo-fuzz compiles with ``-Zsanitizer=address`` and
SanitizerCoverage flags, which only a nightly compiler accepts; this machine (and the
project's toolchain) is stable. ``RUSTC_BOOTSTRAP=1`` lets the stable compiler accept
them, for this build only; nothing else is built that way.

Exit status: 1 if any target has a finding.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fuzz.seeds import TARGETS, write

ROOT = Path(__file__).resolve().parents[2]
FUZZ_DIR = ROOT / "rust" / "fuzz"
BIN_DIR = FUZZ_DIR / "target" / "x86_64-unknown-linux-gnu" / "release"
FLAGS = ["-max_len=4096", "-malloc_limit_mb=512", "-rss_limit_mb=2048", "-timeout=10"]
FINDING = re.compile(r"^(crash|oom|timeout|leak)-")


def build(env: dict[str, str]) -> None:
    cmd = ["cargo", "fuzz", "build", "-O", "--fuzz-dir", str(FUZZ_DIR)]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)


def _paths(target: str) -> tuple[Path, Path, Path, Path]:
    """``(corpus, seeds, artifacts, log)`` of ``target``, the directories created."""
    corpus = FUZZ_DIR / "corpus" / target
    artifacts = FUZZ_DIR / "artifacts" / target
    for d in (corpus, artifacts):
        d.mkdir(parents=True, exist_ok=True)
    return corpus, FUZZ_DIR / "corpus" / "seeds" / target, artifacts, artifacts.with_suffix(".log")


def run_target(target: str, runs: int, env: dict[str, str], seconds: int = 0) -> dict[str, object]:
    corpus, seeds, artifacts, log_path = _paths(target)
    cmd = [
        str(BIN_DIR / target),
        f"-runs={runs}",
        f"-max_total_time={seconds}",
        *FLAGS,
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/",
        str(corpus),
        str(seeds),
    ]
    started = time.monotonic()
    with log_path.open("w") as log:
        child = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        child.wait()
    # The file-backed targets' scratch directory (rust/fuzz/src/lib.rs, scratch_dir).
    for base in (Path("/dev/shm"), Path(tempfile.gettempdir())):
        shutil.rmtree(base / f"kafkacore-fuzz-{child.pid}", ignore_errors=True)
    proc = subprocess.CompletedProcess(cmd, child.returncode)
    return _summary(target, log_path, corpus, artifacts, time.monotonic() - started, proc)


def run_atheris(runs: int, seconds: int = 0) -> dict[str, object]:
    corpus, seeds, artifacts, log_path = _paths("protocol")
    cmd = [
        sys.executable,
        "-m",
        "fuzz.atheris_protocol",
        "--seeds",
        str(seeds),
        f"-runs={runs}",
        f"-max_total_time={seconds}",
        "-max_len=4096",
        "-rss_limit_mb=2048",
        "-timeout=10",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/",
        str(corpus),
        str(seeds),
    ]
    started = time.monotonic()
    with log_path.open("w") as log:
        proc = subprocess.run(
            cmd,
            cwd=Path(__file__).resolve().parents[1],
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    return _summary("protocol", log_path, corpus, artifacts, time.monotonic() - started, proc)


def _summary(
    target: str,
    log_path: Path,
    corpus: Path,
    artifacts: Path,
    elapsed: float,
    proc: subprocess.CompletedProcess[bytes],
) -> dict[str, object]:
    text = log_path.read_text(errors="replace")
    stats = dict(re.findall(r"stat::(\w+):\s+(\d+)", text))
    execs = int(stats.get("number_of_executed_units", 0))
    findings = sorted(p.name for p in artifacts.iterdir() if FINDING.match(p.name))
    return {
        "target": target,
        "execs": execs,
        "execs_per_s": round(execs / elapsed) if elapsed else 0,
        "seconds": round(elapsed, 1),
        "corpus": len(list(corpus.iterdir())),
        "peak_rss_mb": int(stats.get("peak_rss_mb", 0)),
        "exit": proc.returncode,
        "findings": findings,
        "log": str(log_path.relative_to(ROOT)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000_000)
    parser.add_argument("--atheris-runs", type=int, default=2_000_000)
    parser.add_argument("--targets", default=",".join([*TARGETS, "protocol"]))
    parser.add_argument(
        "--seconds", type=int, default=0, help="stop each target after this long (0: no limit)"
    )
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--json", type=Path, help="write the summary here too")
    args = parser.parse_args()
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    if not args.no_build:
        build(env)
    write(FUZZ_DIR / "corpus" / "seeds")
    results = []
    print(f"{'target':<12}{'execs':>12}{'execs/s':>10}{'seconds':>10}{'corpus':>8}  findings")
    for target in args.targets.split(","):
        if target == "protocol":
            r = run_atheris(args.atheris_runs, args.seconds)
        else:
            r = run_target(target, args.runs, env, args.seconds)
        results.append(r)
        found = ", ".join(r["findings"]) or "none"  # type: ignore[arg-type]
        print(
            f"{target:<12}{r['execs']:>12}{r['execs_per_s']:>10}{r['seconds']:>10}"
            f"{r['corpus']:>8}  {found}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if any(r["findings"] or r["exit"] != 0 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
