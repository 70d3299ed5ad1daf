"""``python -m broker_crash.launch server-start ...``: the ``kafkacore`` command with one
kill point injected, for the broker crash sweep.

``KAFKACORE_CRASH_AT=<module>:<qualified name>:<n>[:after]`` wraps that function (e.g.
``kafkacore.log.log:Log.append_as_leader:12``, ``os:replace:40``) so that its ``n``-th call
in this process SIGKILLs the process, before the call runs (or, with ``:after``, once it
has returned). The count is over all threads; the kill is the whole process's, at once.
Without the variable this is ``python -m kafkacore.cli``.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["install", "main"]

ENV = "KAFKACORE_CRASH_AT"


def install(spec: str) -> None:
    """Wrap the function ``spec`` names (see the module docstring)."""
    module_name, qualname, count, *rest = spec.split(":")
    after = rest == ["after"]
    kill_at = int(count)
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original: Callable[..., Any] = getattr(owner, name)
    calls = 0
    lock = threading.Lock()

    def due() -> bool:
        nonlocal calls
        with lock:
            calls += 1
            return calls == kill_at

    @functools.wraps(original)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        if not after and due():
            os.kill(os.getpid(), signal.SIGKILL)
        result = original(*args, **kwargs)
        if after and due():
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, name, hooked)


def main() -> int:
    spec = os.environ.get(ENV)
    if spec:
        install(spec)
    from kafkacore.cli import main as kafkacore_main

    return kafkacore_main()


if __name__ == "__main__":
    sys.exit(main())
