"""The code snippets the README's quickstarts show, as the tests run them.

A snippet is a fenced code block right after a ``<!-- snippet: NAME -->`` line. The tests
that run them (``tests/test_docs_quickstarts.py``, ``tests/cluster/test_docs_quickstart.py``,
``tests/spark/test_docs_quickstart.py``) take each one from here, so the README cannot show
code that no longer runs. A snippet that talks to ``localhost:9092`` (what ``make run`` and
``make cluster`` listen on) is run with that address replaced by a broker the test started
(:func:`pointed_at`).
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["README", "SNIPPET_NAMES", "pointed_at", "snippets"]

README = Path(__file__).resolve().parents[2] / "README.md"

# every snippet the README marks, each run by one test
SNIPPET_NAMES = frozenset({"single-node", "pytest", "embedded", "cluster", "console", "spark"})

_SNIPPET = re.compile(
    r"^<!-- snippet: (?P<name>[\w-]+) -->\n```(?P<lang>\w+)\n(?P<code>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)


def snippets(path: Path = README) -> dict[str, str]:
    """``{name: code}`` of the marked snippets of ``path`` (names must be unique)."""
    found: dict[str, str] = {}
    for match in _SNIPPET.finditer(path.read_text(encoding="utf-8")):
        name = match["name"]
        assert name not in found, f"snippet {name!r} is marked twice in {path.name}"
        found[name] = match["code"]
    return found


def pointed_at(code: str, address: str, bootstrap: str) -> str:
    """``code`` with the quoted ``address`` (which it must contain) replaced by ``bootstrap``."""
    quoted = f'"{address}"'
    assert quoted in code, f"the snippet no longer connects to {quoted}"
    return code.replace(quoted, f'"{bootstrap}"')
