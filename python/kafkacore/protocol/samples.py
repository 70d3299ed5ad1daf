"""Random, valid values of any message at any version, drawn from its schema.

For tests (round trips, interop with Kafka's own classes) and for the broker's tests:
every field the version carries gets a value of its type (null only where the version
allows it); fields the version does not carry keep their defaults, so a value survives
``encode``/``decode`` unchanged. A ``dense`` sample gives every field it carries a value
other than its default (arrays of at least one item, no nulls, every tagged field
written), so a comparison of it leaves no field unexamined.

Pure functions of the ``random.Random`` passed in: thread-safe for distinct generators.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from kafkacore.protocol.schema import Field, KafkaStruct, MessageSchema, StructSchema

__all__ = ["sample"]

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_ALPHABET = "abcdefghijklmnopqrstuvwxyz-._0123456789ÄéΩ字🙂"


def sample(
    msg: MessageSchema[Any],
    version: int,
    rnd: random.Random,
    *,
    max_items: int = 2,
    unknown_tags: bool = False,
    dense: bool = False,
) -> KafkaStruct:
    """A random ``msg`` value at ``version``: arrays of up to ``max_items``; with
    ``unknown_tags``, some structs of flexible versions carry unknown tagged fields; with
    ``dense``, no field the version carries keeps its default."""
    flexible = version in msg.flexible
    gen = _Gen(rnd, max_items, unknown_tags and flexible, dense)
    return gen.struct(msg.struct, version)


class _Gen:
    """One sample's drawing state."""

    def __init__(self, rnd: random.Random, max_items: int, unknown: bool, dense: bool) -> None:
        self.rnd = rnd
        self.max_items = max_items
        self.unknown = unknown
        self.dense = dense

    def struct(self, s: StructSchema, version: int) -> KafkaStruct:
        rnd = self.rnd
        values: dict[str, Any] = {}
        for f in s.fields:
            if version not in f.versions:
                continue
            if f.tag is not None and not self.dense and rnd.random() < 0.3:
                continue  # leave a tagged field at its default: not written
            values[f.attr] = self.field(f, version)
            for _ in range(20 if self.dense else 0):  # redraw a value equal to the default
                if values[f.attr] != f.default_value():
                    break
                values[f.attr] = self.field(f, version)
        if self.unknown and rnd.random() < 0.3:
            tags = sorted(rnd.sample(range(1000, 1100), rnd.randint(1, 2)))
            values["_unknown_tagged_fields"] = tuple(
                (tag, rnd.randbytes(rnd.randint(0, 4))) for tag in tags
            )
        return s.cls(**values)

    def field(self, f: Field, version: int) -> Any:
        rnd = self.rnd
        if version in f.nullable and not self.dense and rnd.random() < 0.2:
            return None
        if f.array:
            count = (
                rnd.randint(1, max(1, self.max_items))
                if self.dense
                else rnd.randint(0, self.max_items)
            )
            return [self.scalar(f, version) for _ in range(count)]
        return self.scalar(f, version)

    def scalar(self, f: Field, version: int) -> Any:
        rnd = self.rnd
        typ = f.type
        if typ in _INT_RANGES:
            lo, hi = _INT_RANGES[typ]
            return (
                rnd.choice((0, -1, 1, lo, hi, rnd.randint(lo, hi)))
                if lo < 0
                else rnd.randint(lo, hi)
            )
        if typ == "bool":
            return rnd.random() < 0.5
        if typ == "float64":
            return rnd.choice((0.0, -1.5, 1e300, rnd.random()))
        low = 1 if self.dense else 0
        if typ == "string":
            return "".join(rnd.choice(_ALPHABET) for _ in range(rnd.randint(low, 12)))
        if typ == "bytes":
            return rnd.randbytes(rnd.randint(low, 16))
        if typ == "records":
            return rnd.randbytes(rnd.randint(low, 80))
        if typ == "uuid":
            return uuid.UUID(int=rnd.getrandbits(128))
        assert f.struct is not None
        return self.struct(f.struct, version)
