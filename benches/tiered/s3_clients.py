"""Which S3 client serves tiered storage better: obstore (Rust's ``object_store`` behind
PyO3) or boto3 (botocore), each against the same S3Proxy, driven as the remote log
manager drives it, from worker threads.

* **multipart upload**: a segment-sized object (``--upload-mib``) put with multipart by
  ``--threads`` threads at once (each its own object), MiB/s over the whole run;
* **ranged reads**: ``--reads`` GETs of ``--read-kib`` at random positions of one object by
  ``--threads`` threads, reads/s and p50/p99 latency;
* **small puts** (index files): ``--small`` objects of 64 KiB, puts/s.

Both clients share one process and one server; the order of the two runs alternates per
repetition and the medians of ``--repeat`` runs are kept. Writes
``benches/results/s3_clients.json`` (date, machine, command, figures).

    .venv/bin/python benches/tiered/s3_clients.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from support.object_store import ACCESS_KEY, REGION, SECRET_KEY, ObjectStoreServer  # noqa: E402


class Client:
    name = ""

    def put_multipart(self, key: str, data: bytes) -> None:
        raise NotImplementedError

    def put(self, key: str, data: bytes) -> None:
        raise NotImplementedError

    def get_range(self, key: str, start: int, end: int) -> bytes:
        raise NotImplementedError


class Obstore(Client):
    name = "obstore"

    def __init__(self, endpoint: str, bucket: str) -> None:
        from obstore.store import S3Store

        self.store = S3Store(
            bucket,
            endpoint=endpoint,
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
            region=REGION,
            client_options={"allow_http": True},
        )

    def put_multipart(self, key: str, data: bytes) -> None:
        import obstore

        obstore.put(self.store, key, data, use_multipart=True, chunk_size=8 << 20)

    def put(self, key: str, data: bytes) -> None:
        import obstore

        obstore.put(self.store, key, data, use_multipart=False)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        import obstore

        return bytes(obstore.get_range(self.store, key, start=start, end=end))


class Boto3(Client):
    name = "boto3"

    def __init__(self, endpoint: str, bucket: str) -> None:
        import boto3
        from botocore.config import Config

        self.bucket = bucket
        # One client shared by the threads (botocore clients are thread-safe), with a
        # connection pool as large as the thread count.
        self.client = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
            config=Config(max_pool_connections=32, s3={"addressing_style": "path"}),
        )
        from boto3.s3.transfer import TransferConfig

        self.transfer = TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=8 << 20)

    def put_multipart(self, key: str, data: bytes) -> None:
        import io

        self.client.upload_fileobj(io.BytesIO(data), self.bucket, key, Config=self.transfer)

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=key, Body=data)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        r = self.client.get_object(Bucket=self.bucket, Key=key, Range=f"bytes={start}-{end - 1}")
        return bytes(r["Body"].read())


def run_threads(threads: int, jobs: list[Callable[[], Any]]) -> list[float]:
    """Run ``jobs`` on ``threads`` workers; each job's latency in seconds."""
    latencies: list[float] = []
    lock = threading.Lock()

    def timed(job: Callable[[], Any]) -> None:
        t0 = time.perf_counter()
        job()
        dt = time.perf_counter() - t0
        with lock:
            latencies.append(dt)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(timed, jobs))
    return latencies


def measure(client: Client, args: argparse.Namespace, run: int) -> dict[str, float]:
    rng = random.Random(run)
    big = os.urandom(args.upload_mib << 20)
    t0 = time.perf_counter()
    run_threads(
        args.threads,
        [
            (lambda i=i: client.put_multipart(f"{client.name}/{run}/seg-{i}.log", big))
            for i in range(args.threads)
        ],
    )
    upload_s = time.perf_counter() - t0
    read_kib = args.read_kib << 10
    key = f"{client.name}/{run}/seg-0.log"
    positions = [rng.randrange(0, len(big) - read_kib) for _ in range(args.reads)]
    t0 = time.perf_counter()
    lat = run_threads(
        args.threads, [(lambda p=p: client.get_range(key, p, p + read_kib)) for p in positions]
    )
    read_s = time.perf_counter() - t0
    # correctness, once: the bytes are the object's
    p = positions[0]
    assert client.get_range(key, p, p + read_kib) == big[p : p + read_kib]
    small = os.urandom(64 << 10)
    t0 = time.perf_counter()
    run_threads(
        args.threads,
        [
            (lambda i=i: client.put(f"{client.name}/{run}/idx-{i}", small))
            for i in range(args.small)
        ],
    )
    small_s = time.perf_counter() - t0
    lat.sort()
    return {
        "upload_mib_per_s": args.threads * args.upload_mib / upload_s,
        "ranged_reads_per_s": args.reads / read_s,
        "ranged_read_p50_ms": 1000 * lat[len(lat) // 2],
        "ranged_read_p99_ms": 1000 * lat[int(len(lat) * 0.99)],
        "small_puts_per_s": args.small / small_s,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--upload-mib", type=int, default=64)
    ap.add_argument("--reads", type=int, default=400)
    ap.add_argument("--read-kib", type=int, default=1024)
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--out", default=str(ROOT / "benches" / "results" / "s3_clients.json"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kc-s3bench-") as tmp:
        server = ObjectStoreServer(Path(tmp)).start()
        try:
            bucket = "bench"
            (server.data_dir / bucket).mkdir(parents=True)  # filesystem provider: a bucket
            clients: list[Client] = [
                Obstore(server.endpoint, bucket),
                Boto3(server.endpoint, bucket),
            ]
            runs: dict[str, list[dict[str, float]]] = {c.name: [] for c in clients}
            for run in range(args.repeat):
                order = clients if run % 2 == 0 else clients[::-1]
                for client in order:
                    runs[client.name].append(measure(client, args, run))
                    print(client.name, run, runs[client.name][-1], flush=True)
        finally:
            server.stop()
    medians = {
        name: {k: round(statistics.median(r[k] for r in rs), 2) for k in rs[0]}
        for name, rs in runs.items()
    }
    import boto3
    import obstore

    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "command": "python benches/tiered/s3_clients.py " + " ".join(sys.argv[1:]),
        "server": "S3Proxy (filesystem-nio2) on loopback",
        "versions": {"obstore": obstore.__version__, "boto3": boto3.__version__},
        "parameters": {k: v for k, v in vars(args).items() if k != "out"},
        "medians": medians,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
