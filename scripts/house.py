"""The house in figures: the package import graph and the counts that issue 26 tracks.

    .venv/bin/python scripts/house.py            # a report on stdout
    .venv/bin/python scripts/house.py --json     # the same as JSON

Packages are ``kafkacore``'s direct children (``kafkacore.server``, ``kafkacore.cli``, a
top-level module such as ``kafkacore.embedded``). The graph comes from grimp (import-linter's
graph library), which reads every import, including those inside functions; a cycle is a
strongly connected set of two or more packages. The counts are read from the source text
with ``ast``: private names (``_x``) imported from another package, ``Any`` outside import
lines, functions longer than a bound, and file sizes.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PKG_DIR = ROOT / "python" / "kafkacore"


def top(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def package_graph() -> dict[str, set[str]]:
    sys.path.insert(0, str(ROOT / "python"))
    graph = grimp.build_graph("kafkacore", include_external_packages=False)
    edges: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        src = top(module)
        edges.setdefault(src, set())
        for imported in graph.find_modules_directly_imported_by(module):
            dst = top(imported)
            if dst != src and dst != "kafkacore":
                edges[src].add(dst)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two or more nodes (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def module_name(path: Path, source_root: Path) -> str:
    rel = path.relative_to(source_root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def private_cross_imports(pkg_dir: Path = PKG_DIR) -> list[str]:
    """``path:line module.name`` of each private name imported from another package."""
    found = []
    source_root = pkg_dir.parent
    for path in sorted(pkg_dir.rglob("*.py")):
        current = module_name(path, source_root)
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = resolve(node, current, path.name == "__init__.py")
            if not target.startswith("kafkacore") or top(target) == top(current):
                continue
            for alias in node.names:
                if alias.name.startswith("__") or f"{target}.{alias.name}" in FACADE_OF_NATIVE:
                    continue
                private_module = any(
                    p.startswith("_") and p != "__init__" for p in target.split(".")[2:]
                )
                if alias.name.startswith("_") or private_module:
                    rel = path.relative_to(source_root.parent)
                    found.append(f"{rel}:{node.lineno} {target}.{alias.name}")
    return found


# The extension's one facade (native.py) imports it by design.
FACADE_OF_NATIVE = {"kafkacore._native", "kafkacore._native._native"}

ANY = re.compile(r"\bAny\b")


def any_count(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*.py"):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")) or stripped.startswith("#"):
                continue
            total += len(ANY.findall(line))
    return total


def shown(path: Path) -> str:
    """``path`` relative to the checkout when it is in it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def long_functions(folder: Path, bound: int) -> list[tuple[str, int]]:
    out = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > bound:
                    out.append((f"{shown(path)}:{node.lineno} {node.name}", length))
    return sorted(out, key=lambda x: -x[1])


def big_files(folder: Path, bound: int) -> list[tuple[str, int]]:
    out = []
    for path in sorted(folder.rglob("*.py")):
        n = len(path.read_text().splitlines())
        if n > bound:
            out.append((shown(path), n))
    return sorted(out, key=lambda x: -x[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    edges = package_graph()
    report = {
        "packages": len(edges),
        "edges": sum(len(v) for v in edges.values()),
        "cycles": cycles(edges),
        "private_cross_package_imports": private_cross_imports(),
        "any_in_server": any_count(PKG_DIR / "server"),
        "any_total": any_count(PKG_DIR),
        "handler_functions_over_120": long_functions(PKG_DIR / "server" / "handlers", 120),
        "console_functions_over_120": long_functions(PKG_DIR / "console", 120),
        "console_files_over_800": big_files(PKG_DIR / "console", 800),
        "files_over_1000": big_files(PKG_DIR, 1000),
        "readme_lines": len((ROOT / "README.md").read_text().splitlines()),
    }
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return
    print(f"packages {report['packages']}, edges {report['edges']}, cycles {len(report['cycles'])}")
    for cyc in report["cycles"]:
        print("  cycle:", " <-> ".join(cyc))
    priv = report["private_cross_package_imports"]
    print(f"private names imported across packages: {len(priv)}")
    for line in priv:
        print("  ", line)
    print(f"Any in server/: {report['any_in_server']} (all of kafkacore: {report['any_total']})")
    for key in (
        "handler_functions_over_120",
        "console_functions_over_120",
        "console_files_over_800",
        "files_over_1000",
    ):
        rows = report[key]
        print(f"{key.replace('_', ' ')}: {len(rows)}")
        for name, n in rows:
            print(f"   {n:5d} {name}")
    print(f"README lines: {report['readme_lines']}")


if __name__ == "__main__":
    main()
