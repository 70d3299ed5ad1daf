"""Values of kafkacore's declared messages in the JSON form of Kafka's generated
``*JsonConverter`` classes (what Kafka's ``read`` takes and ``write`` prints): helpers of
the tests that compare our codecs with Kafka's."""

from __future__ import annotations

import base64
from typing import Any

from kafkacore.protocol.schema import StructSchema

__all__ = [
    "first_difference",
    "json_element",
    "normalise_records",
    "to_kafka_json",
]


def _json_name(name: str) -> str:
    return name[0].lower() + name[1:]


def to_kafka_json(value: Any, s: StructSchema, version: int) -> dict[str, Any]:
    """``value`` as Kafka's ``*JsonConverter.read`` takes it."""
    out: dict[str, Any] = {}
    for f in s.fields:
        if version not in f.versions:
            continue
        v = getattr(value, f.attr)
        if f.tag is not None and v == f.default_value():
            continue  # Kafka neither writes nor prints a tagged field at its default
        if v is None:
            out[_json_name(f.name)] = None
        elif f.array:
            out[_json_name(f.name)] = [json_element(f.type, f.struct, e, version) for e in v]
        else:
            out[_json_name(f.name)] = json_element(f.type, f.struct, v, version)
    return out


def json_element(typ: str, sub: StructSchema | None, v: Any, version: int) -> Any:
    if typ in ("bytes", "records"):
        return base64.b64encode(bytes(v)).decode("ascii")
    if typ == "uuid":
        return base64.urlsafe_b64encode(v.bytes).rstrip(b"=").decode("ascii")
    if sub is not None:
        return to_kafka_json(v, sub, version)
    return v


def normalise_records(ours: Any, kafka: Any, s: StructSchema, version: int) -> Any:
    """Kafka's converter does not print unparsable ``records`` (the bytes are compared
    instead): take its form of them."""
    if not isinstance(ours, dict) or not isinstance(kafka, dict):
        return ours
    out = dict(ours)
    for f in s.fields:
        name = _json_name(f.name)
        if name not in ours or ours[name] is None:
            continue
        if f.type == "records" and name in kafka:
            out[name] = kafka[name]
        elif f.struct is not None and name in kafka and kafka[name] is not None:
            if f.array:
                out[name] = [
                    normalise_records(o, k, f.struct, version)
                    for o, k in zip(ours[name], kafka[name], strict=False)
                ]
            else:
                out[name] = normalise_records(ours[name], kafka[name], f.struct, version)
    return out


def first_difference(a: Any, b: Any, path: str) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k, "<absent>") != b.get(k, "<absent>"):
                return first_difference(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path}: ours {a!r} != Kafka's {b!r}"
