"""Typed stubs (``.pyi``) for the message classes, generated from the declarations.

The codec compiles each declaration into a light runtime class (:mod:`.schema`); mypy
cannot see those fields, so this module writes what Kafka's generator writes as
``ProduceRequestData``: one class per struct carrying every field of every version (a
field a version does not carry keeps its default), the message's nested structs as
classes inside the top one (``ProduceRequest.TopicProduceData``, as at runtime), and
``REQUEST``/``RESPONSE`` as ``MessageSchema[ProduceRequest]``. An array of structs is a
``list``; an array of a primitive type (replica ids, partition indexes) a ``Sequence``:
decoded it is a list, and the writer takes any sequence, so the broker answers with the
immutable tuples of its metadata without copying them. Beside them the stub-only module
``api_table.pyi`` types :data:`~kafkacore.protocol.api.APIS` (a plain ``dict`` at runtime):
``APIS[ApiKey.PRODUCE]`` is an ``Api[ProduceRequest, ProduceResponse]``.

Every module of the ``messages`` package gets its stub, whether the broker serves its API
or only declares it (:mod:`kafkacore.protocol.declared`), and the KRaft control records of
``raft_records`` too. A module exports each declaration's class under the declared name
(``ProduceRequest = REQUEST.cls``); any other export is an ``IntEnum`` (copied) or a value
annotated in the module (its annotation is the stub's). Anything else fails the
generation: this module is the one place that turns a declaration into a class's shape.

The stubs are committed; ``tests/test_protocol_stubs.py`` regenerates them and fails on
any difference, as ``mypy.stubtest`` keeps ``_native.pyi`` honest. After changing a
declaration::

    python -m kafkacore.protocol.stubgen          # rewrites the stubs in the package
    python -m kafkacore.protocol.stubgen --check  # exit 1 and a diff if they are stale

Pure functions of the (immutable) declarations: thread-safe.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import pkgutil
import re
import sys
from collections.abc import Iterator
from enum import IntEnum
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from kafkacore.protocol import messages
from kafkacore.protocol.schema import Field, MessageSchema, StructSchema

__all__ = [
    "declarations",
    "generate",
    "main",
    "message_modules",
    "nested_structs",
    "stale",
    "write",
]

_HEADER = (
    "# Generated from {source} by `python -m kafkacore.protocol.stubgen`:\n"
    "# do not edit (tests/test_protocol_stubs.py fails when this is stale).\n"
)
_LINE = 100
_SCALARS = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "int",
    "uint16": "int",
    "uint32": "int",
    "float64": "float",
    "bool": "bool",
    "string": "str",
    "bytes": "bytes",
    "records": "Records",
    "uuid": "uuid.UUID",
}
_UNKNOWN_TYPE = "tuple[tuple[int, bytes], ...]"


def message_modules() -> list[ModuleType]:
    """Every module of the :mod:`kafkacore.protocol.messages` package, by name: the APIs
    (served or only declared) and any other declarations kept there (the KRaft control
    records of ``raft_records``)."""
    names = sorted(m.name for m in pkgutil.iter_modules(messages.__path__))
    return [importlib.import_module(f"{messages.__name__}.{name}") for name in names]


def generate() -> dict[str, str]:
    """Every stub's text by its path relative to the ``kafkacore/protocol`` directory."""
    out: dict[str, str] = {}
    for module in message_modules():
        short = module.__name__.rsplit(".", 1)[1]
        out[f"messages/{short}.pyi"] = _module_stub(module, short)
    out["api_table.pyi"] = _api_table_stub()
    return out


# --- one declaration module --------------------------------------------------------------


class _Exports(NamedTuple):
    """What a declaration module exports (its ``__all__``), as its stub describes it."""

    schemas: list[tuple[str, MessageSchema[Any]]]
    """Each declaration (``REQUEST``, the Envelope's ``PRINCIPAL``, ...), whose class the
    module also exports under the declared name (``ProduceRequest = REQUEST.cls``)."""
    enums: list[type[IntEnum]]
    """Enumerations defined there (``raft_records.ControlRecordType``)."""
    constants: list[tuple[str, str]]
    """Any other value, with the annotation the module gives it."""


_BUILTINS = frozenset({"dict", "list", "tuple", "set", "frozenset", "int", "str", "bytes", "bool"})


def _exports(module: ModuleType) -> _Exports:
    exported = [(name, getattr(module, name)) for name in module.__all__]
    schemas = [(name, value) for name, value in exported if isinstance(value, MessageSchema)]
    if not schemas:
        raise TypeError(f"{module.__name__} declares no message")
    classes = [schema.cls for _, schema in schemas]
    for name, schema in schemas:  # the runtime name the stub promises
        if (
            getattr(module, schema.name, None) is not schema.cls
            or schema.name not in module.__all__
        ):
            raise TypeError(f"{module.__name__} lacks an exported `{schema.name} = {name}.cls`")
    enums: list[type[IntEnum]] = []
    constants: list[tuple[str, str]] = []
    annotations: dict[str, str] = getattr(module, "__annotations__", {})
    known = {*module.__all__, *_BUILTINS, "Any", "KafkaStruct", "MessageSchema"}
    for name, value in exported:
        if isinstance(value, MessageSchema) or any(value is cls for cls in classes):
            continue
        if isinstance(value, type) and issubclass(value, IntEnum):
            enums.append(value)
            continue
        annotation = annotations.get(name)
        if annotation is None:
            raise TypeError(f"{module.__name__}.{name}: annotate it so its stub can say its type")
        unknown = set(re.findall(r"[A-Za-z_]\w*", annotation)) - known
        if unknown:
            raise TypeError(f"{module.__name__}.{name}: the stub cannot name {sorted(unknown)}")
        constants.append((name, annotation))
    return _Exports(schemas, enums, constants)


def declarations(module: ModuleType) -> list[tuple[str, MessageSchema[Any]]]:
    """The declarations a module of :mod:`kafkacore.protocol.messages` exports, by name
    (``[("REQUEST", ...), ("RESPONSE", ...)]``), each with its class beside it. Raises
    :class:`TypeError` for a module whose stub could not describe it."""
    return _exports(module).schemas


def _module_stub(module: ModuleType, short: str) -> str:
    exports = _exports(module)
    uses: set[str] = set()
    classes = [_message_class(schema, uses) for _, schema in exports.schemas]
    typing = ["Any"] if any(re.search(r"\bAny\b", a) for _, a in exports.constants) else []
    lines = [
        *_HEADER.format(source=f"{short}.py").splitlines(),
        "",
        f'"""Typed classes of the messages declared in {short}.py."""',
        "",
    ]
    stdlib = ["import uuid"] if "uuid" in uses else []
    if "Sequence" in uses:
        stdlib.append("from collections.abc import Sequence")
    if exports.enums:
        stdlib.append("from enum import IntEnum")
    if typing:
        stdlib.append(f"from typing import {', '.join(typing)}")
    if stdlib:
        lines += [*stdlib, ""]
    lines.append("from kafkacore.protocol.schema import KafkaStruct, MessageSchema")
    if "Records" in uses:
        lines.append("from kafkacore.protocol.types import Records")
    lines.append("")
    lines += _bracketed("__all__ = [", [f'"{n}"' for n in module.__all__], "]", "")
    for enum in exports.enums:
        lines += ["", f"class {enum.__name__}(IntEnum):"]
        lines += [f"    {member.name} = {member.value}" for member in enum]
    for cls in classes:
        lines.append("")
        lines += cls
    lines.append("")
    lines += [f"{name}: MessageSchema[{schema.name}]" for name, schema in exports.schemas]
    lines += [f"{name}: {annotation}" for name, annotation in exports.constants]
    return "\n".join(lines) + "\n"


def _bracketed(open_: str, items: list[str], close: str, indent: str) -> list[str]:
    """``open_ items close`` on one line if it fits, else one item a line (ruff's way)."""
    flat = f"{indent}{open_}{', '.join(items)}{close}"
    if len(flat) <= _LINE:
        return [flat]
    return [f"{indent}{open_}", *(f"{indent}    {item}," for item in items), f"{indent}{close}"]


def _import(module: str, names: list[str]) -> list[str]:
    """``from module import names``, parenthesized one a line when too long (as ruff)."""
    flat = f"from {module} import {', '.join(names)}"
    if len(flat) <= _LINE:
        return [flat]
    return [f"from {module} import (", *(f"    {n}," for n in names), ")"]


def nested_structs(top: StructSchema) -> list[StructSchema]:
    """The nested structs of a message, depth first in declaration order, each once."""
    seen: dict[str, StructSchema] = {}

    def walk(s: StructSchema) -> Iterator[StructSchema]:
        for f in s.fields:
            sub = f.struct
            if sub is None:
                continue
            known = seen.get(sub.name)
            if known is not None:
                if known is not sub:
                    raise ValueError(f"{top.name}: two structs are named {sub.name}")
                continue
            seen[sub.name] = sub
            yield sub
            yield from walk(sub)

    return list(walk(top))


def _message_class(msg: MessageSchema[Any], uses: set[str]) -> list[str]:
    top = msg.struct
    flexible = f", flexible {msg.flexible}" if not msg.flexible.empty else ""
    # Kafka's generator suffixes Data to a request's, response's or header's class only
    java = f"{top.name}Data" if msg.kind in ("request", "response") else top.name
    lines = [
        f"class {top.name}(KafkaStruct):",
        f'    """Kafka\'s ``{java}``: versions {msg.valid}{flexible}."""',
        "",
    ]
    for sub in nested_structs(top):
        lines.append(f"    class {sub.name}(KafkaStruct):")
        lines += _fields_and_init(top.name, sub, uses, "        ")
        lines.append("")
    lines += _fields_and_init(top.name, top, uses, "    ")
    return lines


def _fields_and_init(top: str, s: StructSchema, uses: set[str], indent: str) -> list[str]:
    lines: list[str] = []
    params: list[tuple[str, str]] = []
    for f in s.fields:
        annotation = _annotation(top, f, uses)
        lines += _attribute(indent, f.attr, annotation, _note(f))
        params.append((f.attr, annotation))
    params.append(("_unknown_tagged_fields", _UNKNOWN_TYPE))
    lines += [f"{indent}def __init__(", f"{indent}    self,", f"{indent}    *,"]
    for name, annotation in params:
        lines += _parameter(f"{indent}    ", name, annotation)
    lines.append(f"{indent}) -> None: ...")
    return lines


def _parameter(indent: str, name: str, annotation: str) -> list[str]:
    """``name: annotation = ...,`` wrapped as ruff format wraps a long one."""
    line = f"{indent}{name}: {annotation} = ...,"
    if len(line) <= _LINE:
        return [line]
    element, optional = annotation, annotation.endswith(" | None")
    if optional:
        element = annotation[: -len(" | None")]
        head = f"{indent}{name}: {element}"
        if len(head) <= _LINE:
            return [head, f"{indent}| None = ...,"]
    if element.startswith("list[") and not optional:
        return [f"{indent}{name}: list[", f"{indent}    {element[5:-1]}", f"{indent}] = ...,"]
    raise ValueError(f"no layout for the long parameter {name}: {annotation}")


def _annotation(top: str, f: Field, uses: set[str]) -> str:
    if f.struct is not None:
        base = f"{top}.{f.struct.name}"
    else:
        base = _SCALARS[f.type]
        if base in ("Records", "uuid.UUID"):
            uses.add(base.split(".")[0])
    if f.array and f.struct is None:
        base = f"Sequence[{base}]"  # see _module_stub
        uses.add("Sequence")
    elif f.array:
        base = f"list[{base}]"
    optional = not f.nullable.empty or (f.has_default and f.default is None)
    optional = optional or (f.type == "records" and not f.array)  # Kafka's records: null
    return f"{base} | None" if optional else base


def _note(f: Field) -> str:
    """The field's versions, nullable versions, tag and declared default, as Kafka's JSON
    gives them (what an absent field reads as)."""
    parts = [f"versions {f.versions}"]
    if not f.nullable.empty:
        parts.append(f"nullable {f.nullable}")
    if f.tag is not None:
        parts.append(f"tag {f.tag}")
    if f.has_default:
        parts.append(f"default {_default_text(f.default)}")
    return "; ".join(parts)


def _default_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _attribute(indent: str, name: str, annotation: str, note: str) -> list[str]:
    """``name: annotation  # note``, wrapped as ruff format wraps a long one, with the
    note on a line of its own above when the line is too long; no note for a field of
    every version with nothing else to say."""
    line = f"{indent}{name}: {annotation}"
    if len(line) <= _LINE:
        body = [line]
    elif annotation.startswith("list[") and annotation.endswith("]"):
        body = [f"{indent}{name}: list[", f"{indent}    {annotation[5:-1]}", f"{indent}]"]
    else:
        raise ValueError(f"no layout for the long attribute {name}: {annotation}")
    if note == "versions 0+":
        return body
    inline = f"{line}  # {note}"
    if len(body) == 1 and len(inline) <= _LINE:
        return [inline]
    return [f"{indent}# {note}", *body]


# --- the API table -----------------------------------------------------------------------


def _api_table_stub() -> str:
    from kafkacore.protocol.api import APIS, ApiKey

    by_request = {id(getattr(m, "REQUEST", None)): m for m in message_modules()}
    imports: dict[str, list[str]] = {}
    overloads: list[str] = []
    for key, api in APIS.items():
        module = by_request[id(api.request)]
        req, resp = api.request.name, api.response.name
        imports[module.__name__] = [req, resp]
        overloads += [
            "    @overload",
            "    def __getitem__(",
            "        self,",
            f"        key: Literal[ApiKey.{ApiKey(key).name}],",
            "        /,",
            f"    ) -> Api[{req}, {resp}]: ...",
        ]
    lines = [
        *_HEADER.format(source="kafkacore.protocol.messages").splitlines(),
        "",
        '"""The type of ``APIS``, per key: ``APIS[ApiKey.PRODUCE]`` is an ``Api[ProduceRequest,',
        'ProduceResponse]``. Stub only: at runtime ``APIS`` is a plain ``dict``."""',
        "",
        "from typing import Any, Literal, overload",
        "",
        "from kafkacore.protocol.api import Api, ApiKey",
        *(line for module in sorted(imports) for line in _import(module, imports[module])),
        "",
        '__all__ = ["ApiTable"]',
        "",
        "class ApiTable(dict[int, Api[Any, Any]]):",
        '    """The served APIs by key; indexed with an :class:`ApiKey` member, typed."""',
        "",
        *overloads,
        "    @overload",
        "    def __getitem__(self, key: int, /) -> Api[Any, Any]: ...",
    ]
    return "\n".join(lines) + "\n"


# --- the command ---------------------------------------------------------------------------


def _package_dir() -> Path:
    return Path(__file__).resolve().parent


def write(directory: Path) -> list[Path]:
    """Writes every stub under ``directory`` (the ``kafkacore/protocol`` layout)."""
    written = []
    for rel, text in generate().items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written


def stale(directory: Path) -> list[str]:
    """A unified diff per stub under ``directory`` that differs from the declarations."""
    diffs = []
    for rel, text in generate().items():
        path = directory / rel
        current = path.read_text() if path.exists() else ""
        if current != text:
            diffs.append(
                "".join(
                    difflib.unified_diff(
                        current.splitlines(keepends=True),
                        text.splitlines(keepends=True),
                        f"{rel} (committed)",
                        f"{rel} (generated)",
                    )
                )
            )
    return diffs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafkacore.protocol.stubgen")
    parser.add_argument(
        "--out", type=Path, default=None, help="write here instead of into the package"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the stubs are stale")
    args = parser.parse_args(argv)
    directory = args.out or _package_dir()
    if args.check:
        diffs = stale(directory)
        sys.stdout.write("".join(diffs))
        return 1 if diffs else 0
    for path in write(directory):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
