"""Free TCP ports for the servers the tests start (kafkacore brokers, ZooKeeper, Kafka's
JVMs), safe when several pytest processes pick ports at once (``make test`` runs
pytest-xdist workers side by side).

The port the kernel hands out for ``bind(0)`` is released before the server binds it,
and it comes from the ephemeral range (``net.ipv4.ip_local_port_range``, 32768-60999 by
default), the range every outgoing connection also takes its local port from: another
worker's ``bind(0)`` or any client socket could get it in between. So ports are taken
from below the ephemeral range instead, in a block of their own per process (the xdist
worker ``gwN`` gets block N + 1; a process outside xdist block 0), one after the other
from a random start in the block (two sessions at once rarely meet), each checked free
by binding it on every IPv4 address and on IPv6's loopback. A process hands a port out
again only after it went round its whole block (a stopped server keeps its port for a
restart meanwhile).

Thread-safe: tests pick ports from several threads.
"""

from __future__ import annotations

import errno
import os
import random
import re
import socket
import threading

__all__ = ["free_port", "port_block"]

LOWEST_PORT = 10_000
# Blocks for 15 workers and the non-xdist process; each block has ~1,400 ports, many
# more than a session starts servers.
BLOCKS = 16
_DEFAULT_EPHEMERAL_LOW = 32_768

_lock = threading.Lock()
_next: int | None = None


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return _DEFAULT_EPHEMERAL_LOW


def port_block(worker: str | None = None) -> range:
    """The ports of this process: its block below the ephemeral range (``worker`` is
    the xdist worker id, ``$PYTEST_XDIST_WORKER`` by default)."""
    if worker is None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    match = re.fullmatch(r"gw(\d+)", worker)
    index = 0 if match is None else 1 + int(match.group(1)) % (BLOCKS - 1)
    high = min(_ephemeral_low(), _DEFAULT_EPHEMERAL_LOW)
    size = (high - LOWEST_PORT) // BLOCKS
    start = LOWEST_PORT + index * size
    return range(start, start + size)


def _is_free(port: int) -> bool:
    """Nothing bound to ``port`` (TCP) on any IPv4 address nor on ``::1``, and no
    connection lingering on it (no SO_REUSEADDR in the probe: a TIME_WAIT counts)."""
    probes: list[tuple[socket.AddressFamily, str]] = [(socket.AF_INET, "0.0.0.0")]
    if socket.has_ipv6:
        probes.append((socket.AF_INET6, "::1"))
    for family, host in probes:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.bind((host, port))
        except OSError as exc:
            if family == socket.AF_INET6 and exc.errno in (
                errno.EADDRNOTAVAIL,
                errno.EAFNOSUPPORT,
            ):
                continue  # no IPv6 loopback here: nothing can listen there
            return False
    return True


def free_port() -> int:
    """A TCP port nothing uses now, the next free one of this process's block."""
    global _next
    block = port_block()
    with _lock:
        if _next is None:
            _next = random.randrange(len(block))
        for _ in range(len(block)):
            port = block[_next % len(block)]
            _next += 1
            if _is_free(port):
                return port
    raise AssertionError(f"no free TCP port in {block.start}-{block.stop - 1}")
