"""Kafka's message schemas, declared once, read, written and printed as Kafka's generated
code does.

Kafka declares each of its messages (protocol requests, coordinator records, the consumer
protocol) in a JSON schema and generates a Java class per message: its ``read``,
``write`` and a ``*JsonConverter``. This module is that generator's behaviour driven
directly by a declaration (:func:`message`, :func:`field`), for the types the coordinator
records use:

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
the versions the enclosing struct is generated for (``VersionConditional``); a nested
struct refuses to read above its highest version (``Can't read version N of S``). Both
are reproduced, because Kafka reads coordinator keys at the record type, not at version
0, and reads consumer-protocol bytes at whatever version they announce.

Decoded values are plain data: a struct is a ``dict`` of its fields by JSON name (in
declaration order) plus :data:`UNKNOWN_TAGS` (unknown tagged fields, ``(tag, bytes)``),
arrays are lists, uuids :class:`uuid.UUID`, strings decoded as Java's
``new String(bytes, UTF_8)`` decodes them. Read errors raise
:class:`~kafkacore.tools._java.JavaException` with the exception Kafka's code throws
(``BufferUnderflowException``: message ``null``, as Java's ``getMessage()`` gives it).

:func:`to_json` prints a value as the generated ``*JsonConverter.write`` builds it and
Jackson's ``JsonNode.toString()`` writes it: fields in declaration order, tagged fields
only when not default, ints as numbers, bytes as standard base64, uuids as Kafka's
``Uuid.toString()``.

Pure functions over immutable declarations: thread-safe.
"""

from __future__ import annotations

import base64
import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from kafkacore.tools._java import JavaException, decode_utf8, i32, json_string

__all__ = [
    "NULL",
    "UNKNOWN_TAGS",
    "Field",
    "Message",
    "Reader",
    "Struct",
    "Versions",
    "default_value",
    "field",
    "message",
    "read_message",
    "to_json",
    "write_message",
]

UNKNOWN_TAGS = "_unknownTaggedFields"
"""The key of a decoded struct's unknown tagged fields: a list of ``(tag, bytes)``."""

NULL = "null"
"""A schema ``"default": "null"``: the field's default is null (``None``)."""

_MAX_VERSION = 0x7FFF
_MAX_STRING = 0x7FFF
_PRIMITIVES = {
    "bool": struct.Struct(">?"),
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"),
}
_UUID_SIZE = 16
_ZERO_UUID = uuid.UUID(int=0)
_NATURAL = object()  # no "default" in the schema: the type's own default


@dataclass(frozen=True)
class Versions:
    """A version range ``lo..hi`` (empty when ``lo > hi``), as Kafka's ``Versions``."""

    lo: int
    hi: int

    @classmethod
    def parse(cls, text: str) -> Versions:
        """``"none"``, ``"3"``, ``"3+"`` or ``"1-3"``."""
        if text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX_VERSION)
        lo, _, hi = text.partition("-")
        return cls(int(lo), int(hi or lo))

    @property
    def empty(self) -> bool:
        return self.lo > self.hi

    def __contains__(self, version: int) -> bool:
        return self.lo <= version <= self.hi

    def intersect(self, other: Versions) -> Versions:
        return Versions(max(self.lo, other.lo), min(self.hi, other.hi))

    def guards(self, version: int, possible: Versions) -> bool:
        """Kafka's ``VersionConditional``: code generated for the ``possible`` versions
        tests only the bounds of this range that lie inside them, so a version outside
        ``possible`` passes a test the generator left out."""
        if self.intersect(possible).empty:
            return False
        if self.lo > possible.lo and version < self.lo:
            return False
        return not (self.hi < possible.hi and version > self.hi)


NO_VERSIONS = Versions(1, 0)
ALL_VERSIONS = Versions(0, _MAX_VERSION)


@dataclass(frozen=True)
class Field:
    """One field of a struct. ``type`` is a primitive name, ``string``, ``bytes``,
    ``uuid`` or ``struct`` (then ``struct`` is set); ``array`` makes it ``[]type``;
    ``tagged``/``tag`` are set for a tagged field. ``default`` is the declared default
    (``None``: null); :func:`default_value` resolves it."""

    name: str
    type: str
    array: bool
    versions: Versions
    nullable: Versions
    tagged: Versions | None
    tag: int | None
    default: Any
    struct: Struct | None = None
    zero_copy: bool = False


@dataclass(frozen=True)
class Struct:
    """A struct: its fields and the versions its code is generated for (``versions``);
    ``read_max``: reading above it throws (``None``: no such check)."""

    name: str
    versions: Versions
    fields: tuple[Field, ...]
    read_max: int | None = None
    tagged: dict[int, Field] = dataclass_field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Message:
    """A top-level message: its record type (``api_key``), valid and flexible versions."""

    name: str
    api_key: int
    valid: Versions
    flexible: Versions
    struct: Struct


# --- declarations ----------------------------------------------------------------------


@dataclass(frozen=True)
class _FieldDecl:
    name: str
    type: str
    versions: str | None
    nullable: str
    tagged: str | None
    tag: int | None
    default: Any
    fields: tuple[_FieldDecl, ...] | None
    zero_copy: bool


def field(
    name: str,
    type_: str,
    versions: str | None = "0+",
    *,
    nullable: str = "none",
    tagged: str | None = None,
    tag: int | None = None,
    default: Any = _NATURAL,
    fields: Sequence[_FieldDecl] | None = None,
    zero_copy: bool = False,
) -> _FieldDecl:
    """A field as the JSON schema declares it (``name`` in its JSON, camelCase spelling;
    ``type_`` like ``"int32"``, ``"[]string"``, ``"[]TopicPartition"``; a struct type
    names a common struct unless ``fields`` declares it inline). ``versions=None`` means
    the tagged versions, as in Kafka."""
    return _FieldDecl(
        name,
        type_,
        versions,
        nullable,
        tagged,
        tag,
        _NATURAL if default is None else default,
        tuple(fields) if fields is not None else None,
        zero_copy,
    )


def message(
    name: str,
    api_key: int,
    valid: str,
    flexible: str,
    fields: Sequence[_FieldDecl],
    common: dict[str, Sequence[_FieldDecl]] | None = None,
) -> Message:
    """A message from its declaration; ``common`` are its ``commonStructs`` (all ``0+``)."""
    valid_versions = Versions.parse(valid)
    commons: dict[str, Struct] = {}
    for struct_name, decls in (common or {}).items():
        commons[struct_name] = _struct(struct_name, ALL_VERSIONS, decls, None, commons)
    top = _struct(name, valid_versions, fields, None, commons)
    return Message(name, api_key, valid_versions, Versions.parse(flexible), top)


def _struct(
    name: str,
    versions: Versions,
    decls: Sequence[_FieldDecl],
    read_max: int | None,
    commons: dict[str, Struct],
) -> Struct:
    built = tuple(_field(decl, versions, commons) for decl in decls)
    tagged = {f.tag: f for f in built if f.tag is not None}
    return Struct(name, versions, built, read_max, tagged)


def _field(decl: _FieldDecl, possible: Versions, commons: dict[str, Struct]) -> Field:
    array = decl.type.startswith("[]")
    element = decl.type[2:] if array else decl.type
    tagged = Versions.parse(decl.tagged) if decl.tagged is not None else None
    if decl.versions is not None:
        versions = Versions.parse(decl.versions)
    elif tagged is not None:
        versions = tagged
    else:
        raise ValueError(f"field {decl.name} has no versions")
    sub: Struct | None = None
    if element not in _PRIMITIVES and element not in ("string", "bytes", "uuid"):
        if decl.fields is not None:  # inline: generated for the field's versions in its parent
            struct_versions = versions.intersect(possible)
            read_max = struct_versions.hi if versions.hi > struct_versions.hi else None
            sub = _struct(element, struct_versions, decl.fields, read_max, commons)
        else:
            sub = commons[element]
        element = "struct"
    return Field(
        decl.name,
        element,
        array,
        versions,
        Versions.parse(decl.nullable),
        tagged,
        decl.tag,
        None if decl.default == NULL else decl.default,
        sub,
        decl.zero_copy,
    )


def default_value(f: Field) -> Any:
    """The value a field has when a message does not carry it (Kafka's constructor): the
    declared default, else the type's own (0, false, "", empty bytes, the zero uuid, an
    empty list, a struct of defaults). A JSON ``null`` default is no default, as for
    Kafka's generator; the string ``"null"`` (:data:`NULL`) is null."""
    default = f.default
    if default is None:
        return None
    if default is not _NATURAL:
        return default
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
        result = 0
        for shift in (0, 7, 14, 21):
            byte = self.int8()
            if byte >= 0:
                return i32(result | byte << shift)
            result |= (byte & 0x7F) << shift
        byte = self.int8()
        result = i32(result | (byte << 28 & 0xFFFFFFFF))
        if byte < 0:
            raise JavaException(
                "IllegalArgumentException",
                "Varint is too long, the most significant bit in the 5th byte is set, "
                f"converted value: {result & 0xFFFFFFFF:x}",
            )
        return result

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


def read_message(msg: Message, reader: Reader, version: int) -> dict[str, Any]:
    """``msg.read(readable, version)``: the decoded struct."""
    return _read_struct(reader, msg.struct, version, msg.flexible)


def _read_struct(r: Reader, s: Struct, version: int, flexible: Versions) -> dict[str, Any]:
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
                assert known.struct is not None
                out[known.name] = (
                    _read_struct(r, known.struct, version, flexible) if present else None
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
    r: Reader, f: Field, s: Struct, version: int, flexible: bool, flexible_versions: Versions
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
            _read_element(r, f, f"{f.name} element", False, version, flexible, flexible_versions)
            for _ in range(length)
        ]
    return _read_element(r, f, f.name, nullable, version, flexible, flexible_versions)


def _read_element(
    r: Reader,
    f: Field,
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
        assert f.struct is not None
        if nullable and not f.array and r.int8() < 0:
            return None
        return _read_struct(r, f.struct, version, flexible_versions)
    return r.primitive(type_)


# --- writing -----------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def raw(self, data: bytes) -> None:
        self.parts.append(data)

    def uvarint(self, value: int) -> None:
        value &= 0xFFFFFFFF
        out = bytearray()
        while value >= 0x80:
            out.append(value & 0x7F | 0x80)
            value >>= 7
        out.append(value)
        self.parts.append(bytes(out))

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def write_message(msg: Message, value: dict[str, Any], version: int) -> bytes:
    """``msg.write(writable, cache, version)`` of a decoded-form ``value`` (missing fields
    take their defaults)."""
    w = _Writer()
    _write_struct(w, msg.struct, value, version, msg.flexible)
    return w.getvalue()


def _get(value: dict[str, Any], f: Field) -> Any:
    return value[f.name] if f.name in value else default_value(f)


def _write_struct(
    w: _Writer, s: Struct, value: dict[str, Any], version: int, flexible_versions: Versions
) -> None:
    is_flexible = flexible_versions.guards(version, s.versions)
    for f in s.fields:
        if f.tagged is None and f.versions.guards(version, s.versions):
            nullable = f.nullable.guards(version, s.versions)
            _write_field(w, f, _get(value, f), version, is_flexible, flexible_versions, nullable)
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
            assert f.struct is not None
            _write_struct(inner, f.struct, v, version, flexible_versions)
            body = inner.getvalue()
            w.uvarint(len(body) + 1)
            w.uvarint(1)
            w.raw(body)
            continue
        _write_field(inner, f, v, version, True, flexible_versions, False)
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
            _write_element(w, f, element, version, flexible, flexible_versions, nullable=False)
        return
    _write_element(w, f, v, version, flexible, flexible_versions, nullable=nullable)


def _write_element(
    w: _Writer,
    f: Field,
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
        assert f.struct is not None
        if nullable:  # non-tagged nullable struct: an int8 presence marker
            if v is None:
                w.raw(b"\xff")
                return
            w.raw(b"\x01")
        _write_struct(w, f.struct, v, version, flexible_versions)
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
    msg: Message | Struct, value: dict[str, Any], version: int, bytes_json: BytesJson | None = None
) -> str:
    """``<Message>JsonConverter.write(value, version).toString()``. ``bytes_json`` may
    print a ``bytes`` field its own way (``None``: as base64)."""
    s = msg.struct if isinstance(msg, Message) else msg
    return _struct_json(s, value, version, bytes_json)


def _struct_json(
    s: Struct, value: dict[str, Any], version: int, bytes_json: BytesJson | None
) -> str:
    parts = []
    for f in s.fields:
        if not f.versions.guards(version, s.versions):
            continue
        v = _get(value, f)
        if f.tagged is not None and _is_default(f, v):
            continue
        parts.append(f"{json_string(f.name)}:{_field_json(f, v, version, bytes_json)}")
    return "{" + ",".join(parts) + "}"


def _field_json(f: Field, v: Any, version: int, bytes_json: BytesJson | None) -> str:
    if v is None:
        return "null"
    if f.array:
        return "[" + ",".join(_element_json(f, e, version, bytes_json) for e in v) + "]"
    return _element_json(f, v, version, bytes_json)


def _element_json(f: Field, v: Any, version: int, bytes_json: BytesJson | None) -> str:
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
        assert f.struct is not None
        return _struct_json(f.struct, v, version, bytes_json)
    if type_ == "bool":
        return "true" if v else "false"
    return str(int(v))
