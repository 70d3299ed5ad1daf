"""kafkacore.pure exports exactly the stub's names, with the same parameter names, kinds
and default values (the stub is read as source: its defaults are literals)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import kafkacore.pure as pure

STUB = Path(pure.__file__).parent.parent / "_native.pyi"

Param = tuple[str, str, Any]
_NO_DEFAULT = "<none>"


def _params(fn: ast.FunctionDef) -> list[Param]:
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults: list[Any] = [_NO_DEFAULT] * (len(positional) - len(a.defaults))
    defaults += [ast.literal_eval(d) for d in a.defaults]
    out: list[Param] = []
    for arg, default in zip(positional, defaults, strict=True):
        kind = "POSITIONAL_ONLY" if arg in a.posonlyargs else "POSITIONAL_OR_KEYWORD"
        out.append((arg.arg, kind, default))
    for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        value = _NO_DEFAULT if kw_default is None else ast.literal_eval(kw_default)
        out.append((arg.arg, "KEYWORD_ONLY", value))
    return out


def _runtime(obj: Any) -> list[Param]:
    return [
        (p.name, p.kind.name, _NO_DEFAULT if p.default is inspect.Parameter.empty else p.default)
        for p in inspect.signature(obj).parameters.values()
    ]


def _stub() -> tuple[dict[str, list[Param]], dict[str, dict[str, Any]]]:
    functions: dict[str, list[Param]] = {}
    classes: dict[str, dict[str, Any]] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = _params(node)
        elif isinstance(node, ast.ClassDef):
            members: dict[str, Any] = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    decorators = {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
                    members[item.name] = "property" if "property" in decorators else _params(item)
            classes[node.name] = members
    return functions, classes


def test_exports_exactly_the_stub_names() -> None:
    functions, classes = _stub()
    assert sorted(pure.__all__) == sorted([*functions, *classes])
    for name in pure.__all__:
        assert getattr(pure, name) is not None


def test_function_signatures_match_the_stub() -> None:
    functions, _ = _stub()
    for name, params in functions.items():
        assert _runtime(getattr(pure, name)) == params, name


def test_segment_matches_the_stub() -> None:
    _, classes = _stub()
    for member, spec in classes["Segment"].items():
        attr = inspect.getattr_static(pure.Segment, member)
        if spec == "property":
            assert isinstance(attr, property), member
        else:
            assert _runtime(attr) == spec, member
    public = {n for n in vars(pure.Segment) if not n.startswith("_")}
    assert public == set(classes["Segment"]) - {"__init__"}
