"""A small tmpfs that a test mounts, fills and unmounts: the full disk of the fault
campaign (needs root: ``mount -t tmpfs``)."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["fill", "tmpfs", "write_until_full"]


@contextlib.contextmanager
def tmpfs(path: Path, size: str = "8m") -> Iterator[Path]:
    """``path`` (created) with a tmpfs of ``size`` mounted on it; always unmounted."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        # lazy: a broker that is still running (a failed test) must not keep it mounted
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(directory: Path, name: str = "filler") -> Path:
    """Write ``directory/name`` until the file system is full (ENOSPC); the file, for the
    test to delete to free the space again."""
    path = directory / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        write_until_full(fd, (65536, 512))  # big chunks, then whatever fits
    finally:
        os.close(fd)
    return path


def write_until_full(fd: int, chunk_sizes: Iterable[int]) -> int:
    """Write zeros to ``fd`` in chunks of each size in turn, each size until the file
    system answers ENOSPC; the bytes written."""
    written = 0
    for size in chunk_sizes:
        chunk = b"\0" * size
        while True:
            try:
                written += os.write(fd, chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
    return written
