"""Things one test run builds once for all its pytest-xdist workers (compiled Java helpers,
files Kafka's code wrote): a directory the workers of the run share and an exclusive
file lock (``fcntl.flock``) around building into it.

    with build_once(tmp_path_factory, "interop-classes") as (directory, built):
        if not built:
            ...  # write into directory; it counts as built when the block ends normally

The first worker to take the lock builds; the others wait on the lock, then find it
built. A build that raises leaves the directory unbuilt (emptied) for the next one to
try. Without xdist the directory is in the session's own base temporary directory.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["build_once", "run_directory"]

_BUILT = ".built"


def run_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory every worker of this run shares: the parent of the xdist workers'
    base temporary directories (``pytest-of-<user>/pytest-<n>``), else the base one."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def build_once(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[tuple[Path, bool]]:
    """``(directory, built)`` under an exclusive lock on ``name`` for this run: build into
    ``directory`` when ``built`` is false."""
    root = run_directory(tmp_path_factory)
    directory = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            built = (directory / _BUILT).is_file()
            if not built:
                shutil.rmtree(directory, ignore_errors=True)
                directory.mkdir(parents=True)
            yield directory, built
            if not built:
                (directory / _BUILT).touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
