"""The broker's transport alone (``server/network.py``), plaintext and TLS: a client in
another process sends ``--frames`` request frames of ``--size`` bytes, up to 5 in flight
(as a producer pipelines), each answered with 16 bytes by a processor that does nothing
else. Reported per mode: MiB/s received and the server process's CPU seconds per GiB
received (user + system), so the figure is the transport's reading, framing and TLS work,
without decoding, handlers or the log.

    .venv/bin/python benches/transport/run.py [--rounds 3] [--python-dir DIR]

``--python-dir``: import ``kafkacore`` from there instead (another checkout's ``python/``,
with the extension copied in: a before/after comparison on one machine). The TLS
certificate is made with ``openssl`` in a temp dir and removed after.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_CLIENT = """
import socket, ssl, struct, sys, time
port, tls, size, frames, inflight = sys.argv[1:6]
size, frames, inflight = int(size), int(frames), int(inflight)
s = socket.create_connection(('127.0.0.1', int(port)))
if tls == 'tls':
    c = ssl.create_default_context(); c.check_hostname = False; c.verify_mode = ssl.CERT_NONE
    s = c.wrap_socket(s)
frame = struct.pack('>i', size) + bytes(size)
def answer():
    got = b''
    while len(got) < 16:
        got += s.recv(16 - len(got))
start = time.perf_counter()
for i in range(frames):
    s.sendall(frame)
    if i >= inflight - 1:
        answer()
for _ in range(min(inflight - 1, frames)):
    answer()
print(time.perf_counter() - start)
"""


def _certificate(directory: Path) -> tuple[str, str]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=localhost"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return str(cert), str(key)


async def _one(mode: str, size: int, frames: int, pem: tuple[str, str]) -> tuple[float, float]:
    from kafkacore.server.network import Outcome, SocketServer, TlsListener

    answer = struct.pack(">i", 12) + bytes(12)

    class Answer:
        async def process(self, frame: object, info: object) -> Outcome:
            return Outcome(parts=[answer])

    tls = None
    if mode == "tls":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*pem)
        tls = {"L": TlsListener(context, lambda _obj: "ANONYMOUS")}
    server = SocketServer(Answer(), [("L", "127.0.0.1", 0)], tls=tls)  # type: ignore[arg-type]
    await server.start()
    try:
        port = str(server.bound_ports["L"])
        before = resource.getrusage(resource.RUSAGE_SELF)
        client = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _CLIENT, port, mode, str(size), str(frames), "5",
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await client.communicate()
        after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        await server.stop_accepting()
        await server.close_connections()
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    gib = size * frames / 2**30
    return size * frames / float(out) / 2**20, cpu / gib


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--python-dir", default=str(REPO / "python"))
    args = parser.parse_args()
    sys.path.insert(0, args.python_dir)
    results: dict[str, list[tuple[float, float]]] = {"plain": [], "tls": []}
    with tempfile.TemporaryDirectory(prefix="bench-transport-") as tmp:
        pem = _certificate(Path(tmp))
        for _ in range(args.rounds):
            for mode in results:
                results[mode].append(asyncio.run(_one(mode, args.size, args.frames, pem)))
    for mode, runs in results.items():
        rates = [r for r, _ in runs]
        cpus = [c for _, c in runs]
        print(
            f"{mode:5}: {statistics.median(rates):7.0f} MiB/s "
            f"({min(rates):.0f}-{max(rates):.0f}), server CPU "
            f"{statistics.median(cpus):.2f} s/GiB ({min(cpus):.2f}-{max(cpus):.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
