"""Kafka's coordinator records read, written and printed as Kafka's generated Java code
does: the second back end on :mod:`kafkacore.protocol.schema`'s declarations.

Kafka declares its protocol messages, its coordinator records and the consumer protocol
in one JSON dialect and generates a Java class per message: its ``read``, ``write`` and a
``*JsonConverter``. :mod:`kafkacore.protocol.schema` compiles the declarations into the
broker's wire codec; this module interprets the same declarations (:func:`message`,
:func:`field`, :class:`Versions` are re-exported from there) the way the generated classes
behave, for the records of ``__consumer_offsets`` and the dump tool:

* ``int8``, ``int16``, ``uint16``, ``int32``, ``int64``, ``bool``: big-endian;
  ``uuid``: two int64s;
* ``string``: an int16 length (-1 = null) or, in flexible versions, an unsigned varint
  length + 1 (0 = null), then UTF-8; ``bytes``: the same with an int32 length;
* ``[]T``: an int32 count (-1 = null) or, flexible, an unsigned varint count + 1;
* a struct: its fields in order; a nullable struct is preceded by an int8 (-1 = null);
* in flexible versions every struct ends with its tagged fields: an unsigned varint count,
  then per field ``tag``, ``size`` (unsigned varints) and the value; a tagged field is
  written only when it differs from its default.

Kafka's generated code tests a version only where the field's versions do not cover all
the versions the enclosing struct is generated for (``VersionConditional``): the top
struct is generated for the message's valid versions, a common struct for all versions,
an inline struct for its field's versions within its parent's; a nested struct refuses
to read above its highest version (``Can't read version N of S``). Both are reproduced,
because Kafka reads coordinator keys at the record type, not at version 0, and reads
consumer-protocol bytes at whatever version they announce.

Decoded values are plain data: a struct is a ``dict`` of its fields by JSON name (in
declaration order) plus :data:`UNKNOWN_TAGS` (unknown tagged fields, ``(tag, bytes)``),
arrays are lists, uuids :class:`uuid.UUID`, strings decoded as Java's
``new String(bytes, UTF_8)`` decodes them. Read errors raise
:class:`~kafkacore._java.JavaException` with the exception Kafka's code throws
(``BufferUnderflowException``: message ``null``, as Java's ``getMessage()`` gives it).

:func:`to_json` prints a value as the generated ``*JsonConverter.write`` builds it and
Jackson's ``JsonNode.toString()`` writes it: fields in declaration order, tagged fields
only when not default, ints as numbers, bytes as standard base64, uuids as Kafka's
``Uuid.toString()``.

Pure functions over immutable declarations (the per-message layout is computed once; a
race computes it twice, harmlessly): thread-safe.
"""

from __future__ import annotations

import base64
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkacore._java import JavaException, decode_utf8, i32, json_string, read_unsigned_varint
from kafkacore.protocol.schema import NULL, Field, MessageSchema, StructSchema, Versions
from kafkacore.protocol.schema import field as _schema_field
from kafkacore.protocol.schema import message as _schema_message
from kafkacore.protocol.types import write_uvarint

__all__ = [
    "NULL",
    "UNKNOWN_TAGS",
    "Field",
    "MessageSchema",
    "Reader",
    "Versions",
    "default_value",
    "field",
    "message",
    "read_message",
    "to_json",
    "write_message",
]

field = _schema_field
message = _schema_message

UNKNOWN_TAGS = "_unknownTaggedFields"
"""The key of a decoded struct's unknown tagged fields: a list of ``(tag, bytes)``."""

_MAX_VERSION = 0x7FFF
_MAX_STRING = 0x7FFF
_PRIMITIVES = {
    "bool": struct.Struct(">?"),
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}
_UUID_SIZE = 16
_ZERO_UUID = uuid.UUID(int=0)
_ALL_VERSIONS = Versions(0, _MAX_VERSION)


# --- the generated code's layout ------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Struct:
    """A struct as Kafka generates its class: the versions its code is generated for,
    ``read_max`` (reading above it throws; ``None``: no such check), its fields, the
    layouts of its struct-typed fields (by field name) and its tagged fields by tag."""

    name: str
    versions: Versions
    read_max: int | None
    fields: tuple[Field, ...]
    children: dict[str, _Struct]
    tagged: dict[int, Field]


_LAYOUTS: dict[int, tuple[MessageSchema[Any], _Struct]] = {}


def _layout(msg: MessageSchema[Any]) -> _Struct:
    cached = _LAYOUTS.get(id(msg))
    if cached is not None and cached[0] is msg:
        return cached[1]
    top = _build(msg.struct, msg.valid, None)
    _LAYOUTS[id(msg)] = (msg, top)
    return top


def _build(s: StructSchema, versions: Versions, read_max: int | None) -> _Struct:
    children: dict[str, _Struct] = {}
    for f in s.fields:
        if f.struct is None:
            continue
        if f.common:
            children[f.name] = _build(f.struct, _ALL_VERSIONS, None)
        else:  # inline: generated for the field's versions in its parent
            sub = f.versions.intersect(versions)
            children[f.name] = _build(f.struct, sub, sub.hi if f.versions.hi > sub.hi else None)
    tagged = {f.tag: f for f in s.fields if f.tag is not None}
    return _Struct(s.name, versions, read_max, s.fields, children, tagged)


def default_value(f: Field) -> Any:
    """The value a field has when a message does not carry it (Kafka's constructor): the
    declared default, else the type's own (0, false, "", empty bytes, the zero uuid, an
    empty list, a struct of defaults). :data:`NULL` declares null."""
    if f.has_default:
        return f.default
    if f.array:
        return []
    if f.type == "struct":
        assert f.struct is not None
        return {g.name: default_value(g) for g in f.struct.fields} | {UNKNOWN_TAGS: []}
    return _TYPE_DEFAULTS.get(f.type, 0)


_TYPE_DEFAULTS: dict[str, Any] = {"bool": False, "string": "", "bytes": b"", "uuid": _ZERO_UUID}


# --- reading -----------------------------------------------------------------------------


def _underflow() -> JavaException:
    return JavaException("BufferUnderflowException", "null")


def _runtime(message_text: str) -> JavaException:
    return JavaException("RuntimeException", message_text)


class Reader:
    """Kafka's ``ByteBufferAccessor`` over ``data``: the same reads, the same failures."""

    def __init__(self, data: bytes, position: int = 0) -> None:
        self.data = data
        self.pos = position

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def _fixed(self, fmt: struct.Struct) -> Any:
        if self.remaining() < fmt.size:
            raise _underflow()
        (value,) = fmt.unpack_from(self.data, self.pos)
        self.pos += fmt.size
        return value

    def int8(self) -> int:
        return int(self._fixed(_PRIMITIVES["int8"]))

    def int16(self) -> int:
        return int(self._fixed(_PRIMITIVES["int16"]))

    def int32(self) -> int:
        return int(self._fixed(_PRIMITIVES["int32"]))

    def primitive(self, type_: str) -> Any:
        if type_ == "bool":
            return self.int8() != 0
        return self._fixed(_PRIMITIVES[type_])

    def uuid(self) -> uuid.UUID:
        if self.remaining() < _UUID_SIZE:
            raise _underflow()
        raw = self.data[self.pos : self.pos + _UUID_SIZE]
        self.pos += _UUID_SIZE
        return uuid.UUID(bytes=raw)

    def uvarint(self) -> int:
        """``ByteUtils.readUnsignedVarint``: a Java ``int`` (five bytes may overflow it)."""
        value, self.pos = read_unsigned_varint(self.data, self.pos)
        return value

    def array(self, size: int) -> bytes:
        """``readArray``."""
        remaining = self.remaining()
        if size > remaining:
            raise _runtime(
                f"Error reading byte array of {size} byte(s): only {remaining} byte(s) available"
            )
        if size < 0:
            raise JavaException("NegativeArraySizeException", str(size))
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out

    def byte_buffer(self, size: int) -> bytes:
        """``readByteBuffer`` (zero-copy bytes): a slice limited to ``size``."""
        remaining = self.remaining()
        if size > remaining:
            raise JavaException(
                "IllegalArgumentException", f"newLimit > capacity: ({size} > {remaining})"
            )
        return self.array(size)


def read_message(msg: MessageSchema[Any], reader: Reader, version: int) -> dict[str, Any]:
    """``msg.read(readable, version)``: the decoded struct."""
    return _read_struct(reader, _layout(msg), version, msg.flexible)


def _read_struct(r: Reader, s: _Struct, version: int, flexible: Versions) -> dict[str, Any]:
    if s.read_max is not None and version > s.read_max:
        raise JavaException(
            "UnsupportedVersionException", f"Can't read version {version} of {s.name}"
        )
    is_flexible = flexible.guards(version, s.versions)
    out: dict[str, Any] = {}
    for f in s.fields:
        if f.tagged is not None or not f.versions.guards(version, s.versions):
            out[f.name] = default_value(f)
        else:
            out[f.name] = _read_field(r, f, s, version, is_flexible, flexible)
    unknown: list[tuple[int, bytes]] = []
    if is_flexible:
        for _ in range(r.uvarint()):
            tag = r.uvarint()
            size = r.uvarint()
            known = s.tagged.get(tag)
            if known is None:
                unknown.append((tag, r.array(size)))
            elif (
                known.type == "struct"
                and not known.array
                and known.nullable.guards(version, s.versions)
            ):
                present = r.uvarint() > 0
                out[known.name] = (
                    _read_struct(r, s.children[known.name], version, flexible) if present else None
                )
            else:
                out[known.name] = _read_field(r, known, s, version, True, flexible)
    out[UNKNOWN_TAGS] = unknown
    return out


def _read_length(r: Reader, flexible: bool, wide: bool) -> int:
    if flexible:
        return i32(r.uvarint() - 1)
    return r.int32() if wide else r.int16()


def _read_field(
    r: Reader, f: Field, s: _Struct, version: int, flexible: bool, flexible_versions: Versions
) -> Any:
    nullable = f.nullable.guards(version, s.versions)
    if f.array:
        length = _read_length(r, flexible, True)
        if length < 0:
            if nullable:
                return None
            raise _runtime(f"non-nullable field {f.name} was serialized as null")
        if length > r.remaining():
            raise _runtime(
                f"Tried to allocate a collection of size {length}, but there are only "
                f"{r.remaining()} bytes remaining."
            )
        return [
            _read_element(r, f, s, f"{f.name} element", False, version, flexible, flexible_versions)
            for _ in range(length)
        ]
    return _read_element(r, f, s, f.name, nullable, version, flexible, flexible_versions)


def _read_element(
    r: Reader,
    f: Field,
    s: _Struct,
    name: str,
    nullable: bool,
    version: int,
    flexible: bool,
    flexible_versions: Versions,
) -> Any:
    type_ = f.type
    if type_ == "string":
        length = _read_length(r, flexible, False)
        if length < 0:
            if nullable:
                return None
            raise _runtime(f"non-nullable field {name} was serialized as null")
        if length > _MAX_STRING:
            raise _runtime(f"string field {name} had invalid length {length}")
        return decode_utf8(r.array(length))
    if type_ == "bytes":
        length = _read_length(r, flexible, True)
        if length < 0:
            if nullable:
                return None
            raise _runtime(f"non-nullable field {name} was serialized as null")
        return r.byte_buffer(length) if f.zero_copy else r.array(length)
    if type_ == "uuid":
        return r.uuid()
    if type_ == "struct":
        if nullable and not f.array and r.int8() < 0:
            return None
        return _read_struct(r, s.children[f.name], version, flexible_versions)
    return r.primitive(type_)


# --- writing -----------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def raw(self, data: bytes) -> None:
        self.parts.append(data)

    def uvarint(self, value: int) -> None:
        self.parts.append(write_uvarint(value))  # a Java int: -1 is 0xFFFFFFFF

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def write_message(msg: MessageSchema[Any], value: dict[str, Any], version: int) -> bytes:
    """``msg.write(writable, cache, version)`` of a decoded-form ``value`` (missing fields
    take their defaults)."""
    w = _Writer()
    _write_struct(w, _layout(msg), value, version, msg.flexible)
    return w.getvalue()


def _get(value: dict[str, Any], f: Field) -> Any:
    return value[f.name] if f.name in value else default_value(f)


def _write_struct(
    w: _Writer, s: _Struct, value: dict[str, Any], version: int, flexible_versions: Versions
) -> None:
    is_flexible = flexible_versions.guards(version, s.versions)
    for f in s.fields:
        if f.tagged is None and f.versions.guards(version, s.versions):
            nullable = f.nullable.guards(version, s.versions)
            _write_field(w, f, s, _get(value, f), version, is_flexible, flexible_versions, nullable)
    if not is_flexible:
        return
    tagged = [
        f
        for f in sorted(s.tagged.values(), key=lambda g: g.tag or 0)
        if f.versions.guards(version, s.versions) and not _is_default(f, _get(value, f))
    ]
    unknown: list[tuple[int, bytes]] = value.get(UNKNOWN_TAGS) or []
    w.uvarint(len(tagged) + len(unknown))
    for f in tagged:
        v = _get(value, f)
        assert f.tag is not None
        w.uvarint(f.tag)
        if v is None:  # a null nullable string, bytes, array or struct
            w.uvarint(1)
            w.uvarint(0)
            continue
        inner = _Writer()
        if f.type == "struct" and not f.array and f.nullable.guards(version, s.versions):
            _write_struct(inner, s.children[f.name], v, version, flexible_versions)
            body = inner.getvalue()
            w.uvarint(len(body) + 1)
            w.uvarint(1)
            w.raw(body)
            continue
        _write_field(inner, f, s, v, version, True, flexible_versions, False)
        body = inner.getvalue()
        w.uvarint(len(body))
        w.raw(body)
    for tag, data in unknown:
        w.uvarint(tag)
        w.uvarint(len(data))
        w.raw(data)


def _write_length(w: _Writer, length: int, flexible: bool, wide: bool) -> None:
    if flexible:
        w.uvarint(length + 1)
    else:
        w.raw(struct.pack(">i" if wide else ">h", length))


def _write_field(
    w: _Writer,
    f: Field,
    s: _Struct,
    v: Any,
    version: int,
    flexible: bool,
    flexible_versions: Versions,
    nullable: bool,
) -> None:
    if f.array:
        if v is None:
            _write_length(w, -1, flexible, True)
            return
        _write_length(w, len(v), flexible, True)
        for element in v:
            _write_element(w, f, s, element, version, flexible, flexible_versions, nullable=False)
        return
    _write_element(w, f, s, v, version, flexible, flexible_versions, nullable=nullable)


def _write_element(
    w: _Writer,
    f: Field,
    s: _Struct,
    v: Any,
    version: int,
    flexible: bool,
    flexible_versions: Versions,
    *,
    nullable: bool,
) -> None:
    type_ = f.type
    if type_ == "string":
        if v is None:
            _write_length(w, -1, flexible, False)
            return
        raw = v.encode("utf-8", "surrogatepass")
        if len(raw) > _MAX_STRING:
            raise ValueError(f"'{f.name}' field is too long to be serialized")
        _write_length(w, len(raw), flexible, False)
        w.raw(raw)
    elif type_ == "bytes":
        if v is None:
            _write_length(w, -1, flexible, True)
            return
        _write_length(w, len(v), flexible, True)
        w.raw(bytes(v))
    elif type_ == "uuid":
        w.raw(v.bytes)
    elif type_ == "struct":
        if nullable:  # non-tagged nullable struct: an int8 presence marker
            if v is None:
                w.raw(b"\xff")
                return
            w.raw(b"\x01")
        _write_struct(w, s.children[f.name], v, version, flexible_versions)
    else:
        w.raw(_PRIMITIVES[type_].pack(v))


def _is_default(f: Field, v: Any) -> bool:
    """Kafka's test for writing a tagged field (and printing it in JSON): the value is
    its default (a null array or struct is never the default: it is written as null)."""
    if v is None:
        return default_value(f) is None
    if f.type == "struct" and not f.array:
        return bool(_struct_equal(v, default_value(f)))
    return bool(v == default_value(f))


def _struct_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """``Struct.equals``: every field, and the unknown tagged fields (none == empty)."""

    def normal(d: dict[str, Any]) -> dict[str, Any]:
        return {**d, UNKNOWN_TAGS: list(d.get(UNKNOWN_TAGS) or [])}

    return normal(a) == normal(b)


# --- JSON --------------------------------------------------------------------------------


BytesJson = Callable[[Field, bytes], "str | None"]


def to_json(
    msg: MessageSchema[Any],
    value: dict[str, Any],
    version: int,
    bytes_json: BytesJson | None = None,
) -> str:
    """``<Message>JsonConverter.write(value, version).toString()``. ``bytes_json`` may
    print a ``bytes`` field its own way (``None``: as base64)."""
    return _struct_json(_layout(msg), value, version, bytes_json)


def _struct_json(
    s: _Struct, value: dict[str, Any], version: int, bytes_json: BytesJson | None
) -> str:
    parts = []
    for f in s.fields:
        if not f.versions.guards(version, s.versions):
            continue
        v = _get(value, f)
        if f.tagged is not None and _is_default(f, v):
            continue
        parts.append(f"{json_string(f.name)}:{_field_json(f, s, v, version, bytes_json)}")
    return "{" + ",".join(parts) + "}"


def _field_json(f: Field, s: _Struct, v: Any, version: int, bytes_json: BytesJson | None) -> str:
    if v is None:
        return "null"
    if f.array:
        return "[" + ",".join(_element_json(f, s, e, version, bytes_json) for e in v) + "]"
    return _element_json(f, s, v, version, bytes_json)


def _element_json(f: Field, s: _Struct, v: Any, version: int, bytes_json: BytesJson | None) -> str:
    type_ = f.type
    if type_ == "string":
        return json_string(v)
    if type_ == "bytes":
        if bytes_json is not None:
            custom = bytes_json(f, v)
            if custom is not None:
                return custom
        return '"' + base64.b64encode(v).decode("ascii") + '"'
    if type_ == "uuid":
        return '"' + base64.urlsafe_b64encode(v.bytes).rstrip(b"=").decode("ascii") + '"'
    if type_ == "struct":
        return _struct_json(s.children[f.name], v, version, bytes_json)
    if type_ == "bool":
        return "true" if v else "false"
    return str(int(v))
