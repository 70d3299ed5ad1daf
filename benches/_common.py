"""What the stand-alone benchmark scripts (``benches/broker/run.py``,
``benches/spark/run.py``) share: writing their JSON report and the ``__main__`` wrapper
that turns Ctrl-C into exit status 130."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[1]


def write_report(out: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` as indented JSON to ``out`` and say where (relative to the repository
    when it is inside it)."""
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")


def run_main(main: Callable[[], int]) -> NoReturn:
    """``sys.exit(main())``; an interrupt exits 130 (the scripts clean up their processes
    and temporary directories in ``finally`` blocks on the way out)."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted; processes and temp dirs cleaned up", file=sys.stderr)
        sys.exit(130)
