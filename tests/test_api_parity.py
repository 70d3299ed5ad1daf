"""The pure twin exposes exactly the stub's API, with the same signatures."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import kafkacore
from kafkacore.native import load_backend

STUB = Path(kafkacore.__file__).with_name("_native.pyi")


def _stub_signature(fn: ast.FunctionDef) -> list[tuple[str, str, bool]]:
    a = fn.args
    params: list[tuple[str, str, bool]] = []
    positional = a.posonlyargs + a.args
    n_defaults = len(a.defaults)
    for i, arg in enumerate(positional):
        kind = "POSITIONAL_ONLY" if arg in a.posonlyargs else "POSITIONAL_OR_KEYWORD"
        params.append((arg.arg, kind, i >= len(positional) - n_defaults))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append((arg.arg, "KEYWORD_ONLY", default is not None))
    return [p for p in params if p[0] != "self"]


def _runtime_signature(obj: Any) -> list[tuple[str, str, bool]]:
    sig = inspect.signature(obj)
    return [
        (p.name, p.kind.name, p.default is not inspect.Parameter.empty)
        for p in sig.parameters.values()
        if p.name != "self"
    ]


def _stub_api() -> dict[str, Any]:
    api: dict[str, Any] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            api[node.name] = _stub_signature(node)
        elif isinstance(node, ast.ClassDef):
            members = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    is_prop = any(
                        isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list
                    )
                    members[item.name] = "property" if is_prop else _stub_signature(item)
            api[node.name] = members
    return api


def test_pure_twin_matches_stub() -> None:
    pure = load_backend("pure")
    api = _stub_api()
    public = {n for n in dir(pure) if not n.startswith("_") and callable(getattr(pure, n))}
    assert set(api) <= public, f"missing in pure: {set(api) - public}"
    for name, spec in api.items():
        obj = getattr(pure, name)
        if isinstance(spec, dict):
            for member, mspec in spec.items():
                attr = inspect.getattr_static(obj, member)
                if mspec == "property":
                    assert isinstance(attr, property), f"{name}.{member} must be a property"
                else:
                    assert _runtime_signature(getattr(obj, member)) == mspec, f"{name}.{member}"
        else:
            assert _runtime_signature(obj) == spec, name


def test_native_matches_stub_names() -> None:
    native = load_backend("native")
    for name, spec in _stub_api().items():
        obj = getattr(native, name)
        if isinstance(spec, dict):
            for member in spec:
                assert hasattr(obj, member), f"{name}.{member}"
        else:
            assert _runtime_signature(obj) == spec, name
