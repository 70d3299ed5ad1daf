"""Kafka's own message definitions, read from its release jars, and a field-by-field
comparison of kafkacore's declarations with them.

Kafka ships the JSON it generates its message classes from inside its jars
(``common/message/*.json`` in kafka-clients and the coordinator jars,
``common/metadata/*.json`` in kafka-metadata). :func:`kafka_definitions` reads them;
:func:`schema_differences` says, version by version, where one of our declarations
(:class:`~kafkacore.protocol.schema.MessageSchema`) differs from Kafka's: the flexible
versions, the fields a version carries and their order, each field's type,
nullability, tag and default, down every nested struct. The versions compared are those
both sides declare; kafkacore may keep versions a Kafka release dropped (they are then
compared with an older release's definitions).
"""

from __future__ import annotations

import json
import uuid
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kafkacore.protocol.schema import Field, MessageSchema, StructSchema, Versions

__all__ = ["STORAGE_DEFINITION_DIRS", "kafka_definitions", "schema_differences"]

_DEFINITION_DIRS = ("common/message/", "common/metadata/")
STORAGE_DEFINITION_DIRS = ("message/",)
"""Where kafka-storage keeps the remote log metadata records' definitions."""
_INT_TYPES = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})
_NATURAL_DEFAULTS: dict[str, Any] = {
    **dict.fromkeys(_INT_TYPES, 0),
    "float64": 0.0,
    "bool": False,
    "string": "",
    "bytes": b"",
    "records": None,
    "uuid": uuid.UUID(int=0),
}


def _strip_comments(text: str) -> str:
    """Kafka's definitions carry ``//`` comments (outside strings), which JSON lacks."""
    lines = []
    for line in text.splitlines():
        cut = line.find("//")
        while cut >= 0 and line[:cut].count('"') % 2:
            cut = line.find("//", cut + 2)
        lines.append(line if cut < 0 else line[:cut])
    return "\n".join(lines)


def kafka_definitions(
    libs: Path, prefixes: tuple[str, ...] = _DEFINITION_DIRS
) -> dict[str, dict[str, Any]]:
    """Every message definition under ``prefixes`` in the Kafka jars of ``libs``, by its
    ``name`` (:data:`STORAGE_DEFINITION_DIRS` for the remote log metadata records)."""
    found: dict[str, dict[str, Any]] = {}
    for jar in sorted(libs.glob("kafka*.jar")):
        with zipfile.ZipFile(jar) as z:
            for entry in z.namelist():
                if entry.endswith(".json") and entry.startswith(prefixes):
                    definition = json.loads(_strip_comments(z.read(entry).decode("utf-8")))
                    found[definition["name"]] = definition
    return found


def _versions(text: str | None) -> Versions:
    return Versions.parse(text) if text else Versions(1, 0)


def _present(f: dict[str, Any], version: int) -> bool:
    return version in _versions(f.get("versions") or f.get("taggedVersions"))


def _lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def _kafka_default(f: dict[str, Any], element: str, array: bool) -> Any:
    """The default Kafka's generated class gives ``f``: ``"struct"`` for a new struct."""
    d = f.get("default")
    if d is None:  # absent, or a JSON null (the generator reads it as absent)
        if array:
            return []
        return _NATURAL_DEFAULTS.get(element, "struct")
    if d == "null":
        return None
    if element in _INT_TYPES:
        return d if isinstance(d, int) else int(d, 0)
    if element == "bool":
        return d if isinstance(d, bool) else d == "true"
    if element == "float64":
        return float(d)
    if element == "uuid":
        return uuid.UUID(int=0) if d in ("", "AAAAAAAAAAAAAAAAAAAAAA") else d
    return d


def _our_default(f: Field) -> Any:
    value = f.default_value()
    if f.struct is not None and not f.array and value is not None:
        return "struct" if value == f.struct.cls() else value
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _compare_struct(
    ours: StructSchema,
    theirs: list[dict[str, Any]],
    commons: dict[str, list[dict[str, Any]]],
    version: int,
    path: str,
) -> Iterator[str]:
    our_fields = [f for f in ours.fields if version in f.versions]
    their_fields = [f for f in theirs if _present(f, version)]

    def untagged_at(f: Field) -> bool:
        return f.tagged is None or version not in f.tagged

    def their_untagged(f: dict[str, Any]) -> bool:
        return version not in _versions(f.get("taggedVersions"))

    our_names = [_lower_first(f.name) for f in our_fields if untagged_at(f)]
    their_names = [_lower_first(f["name"]) for f in their_fields if their_untagged(f)]
    if our_names != their_names:
        yield f"{path}: fields {our_names} != Kafka's {their_names}"
        return
    our_tags = {f.tag: _lower_first(f.name) for f in our_fields if not untagged_at(f)}
    their_tags = {f["tag"]: _lower_first(f["name"]) for f in their_fields if not their_untagged(f)}
    if our_tags != their_tags:
        yield f"{path}: tagged fields {our_tags} != Kafka's {their_tags}"
        return
    by_name = {_lower_first(f["name"]): f for f in their_fields}
    for f in our_fields:
        k = by_name[_lower_first(f.name)]
        where = f"{path}.{f.name}"
        array = k["type"].startswith("[]")
        element = k["type"].removeprefix("[]")
        their_struct = element not in _NATURAL_DEFAULTS
        if f.array != array or (f.struct is not None) != their_struct:
            yield f"{where}: type {'[]' if f.array else ''}{f.type} != Kafka's {k['type']}"
            continue
        if not their_struct and f.type != element:
            yield f"{where}: type {f.type} != Kafka's {element}"
            continue
        if (version in f.nullable) != (version in _versions(k.get("nullableVersions"))):
            yield f"{where}: nullable at v{version} differs from Kafka's"
        ours_default, their_default = _our_default(f), _kafka_default(k, element, array)
        if ours_default != their_default:
            yield f"{where}: default {ours_default!r} != Kafka's {their_default!r}"
        if f.struct is not None:
            fields = k["fields"] if "fields" in k else commons.get(element)
            if fields is None:
                yield f"{where}: Kafka's struct {element} is not defined"
                continue
            if f.struct.name != element:
                yield f"{where}: struct {f.struct.name} != Kafka's {element}"
            yield from _compare_struct(f.struct, fields, commons, version, where)


def schema_differences(
    ours: MessageSchema, theirs: dict[str, Any], versions: Iterable[int]
) -> list[str]:
    """Where ``ours`` differs from Kafka's definition ``theirs`` at ``versions`` (each
    must be valid in both)."""
    problems: list[str] = []
    commons = {c["name"]: c["fields"] for c in theirs.get("commonStructs", ())}
    their_flexible = _versions(theirs.get("flexibleVersions"))
    for version in versions:
        if version not in ours.valid or version not in _versions(theirs["validVersions"]):
            problems.append(f"{ours.name}: v{version} is not valid on both sides")
            continue
        if (version in ours.flexible) != (version in their_flexible):
            problems.append(f"{ours.name} v{version}: flexibility differs from Kafka's")
        where = f"{ours.name} v{version}"
        problems.extend(_compare_struct(ours.struct, theirs["fields"], commons, version, where))
    return problems
