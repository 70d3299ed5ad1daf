"""Declarative Kafka message schemas and the codec compiled from them.

Each API declares its request and response once (:func:`message`, :func:`field`) with
the facts of Kafka's JSON message definitions: field names (Kafka's CamelCase; the
Python attribute is their snake_case), types, ``versions``, ``nullableVersions``,
``taggedVersions``/``tag`` and defaults, and the message's valid and flexible versions.
The same declarations describe Kafka's coordinator records (``__consumer_offsets``'
keys and values, the consumer protocol): :mod:`kafkacore.coordinator.codec` reads,
writes and prints them as Kafka's generated Java code does, a second back end on this
module's declarations (Kafka too runs one generator for messages and records).

Decoded values are instances of a light class generated per struct (``__slots__``, an
``__init__`` taking every field by keyword with Kafka's default, ``__eq__``,
``__repr__``); a field the version does not carry keeps its default. Unknown tagged
fields are kept, as ``(tag, bytes)`` pairs in ``_unknown_tagged_fields``, and written back.

For speed the codec is not an interpreter: on first use of a ``(message, version)`` it
generates the Python source of one reader and one writer function per struct, with
runs of fixed-size fields packed by one ``struct.Struct``, and compiles it; later calls
run the compiled functions. ``records`` are read as ``memoryview`` slices of the frame
and written without copying. Writing ignores fields the version does not carry.

Declarations are immutable; compilation is idempotent (a race compiles twice, harmlessly):
thread-safe.
"""

from __future__ import annotations

import keyword
import re
import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from kafkacore.protocol import types as t

__all__ = [
    "NULL",
    "Field",
    "KafkaStruct",
    "MessageSchema",
    "StructSchema",
    "Versions",
    "field",
    "message",
    "snake_case",
]

NULL = "null"
"""A schema ``"default": "null"``: the field's default is null (``None``)."""

_NATURAL: Any = object()  # no declared default: the type's own
_MAX_VERSION = 0x7FFF
_PRIMITIVE_TYPES = frozenset(t.FIXED_FORMATS) | {"string", "bytes", "uuid", "records"}


@dataclass(frozen=True)
class Versions:
    """An inclusive version range ``lo..hi`` (empty when ``lo > hi``)."""

    lo: int
    hi: int

    @classmethod
    def parse(cls, text: str) -> Versions:
        """``"none"``, ``"3"``, ``"3+"`` or ``"1-3"``."""
        if text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX_VERSION)
        lo, _, hi = text.partition("-")
        return cls(int(lo), int(hi or lo))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lo <= version <= self.hi

    def __iter__(self) -> Any:
        return iter(range(self.lo, self.hi + 1))

    @property
    def empty(self) -> bool:
        return self.lo > self.hi

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

    def __str__(self) -> str:
        if self.lo > self.hi:
            return "none"
        return f"{self.lo}+" if self.hi == _MAX_VERSION else f"{self.lo}-{self.hi}"


def snake_case(name: str) -> str:
    """Kafka's CamelCase field name as a Python attribute: ``TopicId`` -> ``topic_id``."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()
    return s + "_" if keyword.iskeyword(s) else s


class KafkaStruct:
    """Base of the generated struct classes."""

    __slots__ = ()
    _schema: StructSchema
    _unknown_tagged_fields: tuple[tuple[int, bytes], ...]
    """Tagged fields this version of kafkacore does not know, kept and written back."""

    if TYPE_CHECKING:  # the fields are generated per struct, typed in messages/*.pyi

        def __init__(self, **fields: Any) -> None: ...

    def __repr__(self) -> str:
        parts = ", ".join(f"{f.attr}={getattr(self, f.attr)!r}" for f in self._schema.fields)
        return f"{type(self).__name__}({parts})"

    def to_dict(self) -> dict[str, Any]:
        """Field values by Kafka's JSON names, nested structs as dicts (for printing and
        tests)."""
        return {f.name: _plain(getattr(self, f.attr)) for f in self._schema.fields}


def _plain(value: Any) -> Any:
    if isinstance(value, KafkaStruct):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, memoryview):
        return bytes(value)
    return value


@dataclass(frozen=True, eq=False)
class Field:
    """One field. ``type`` is a primitive name or ``struct`` (then ``struct`` is set);
    ``array`` makes it ``[]type``; ``tag`` is set for a tagged field; ``common``: the
    struct is one of the message's ``commonStructs`` (else declared inline);
    ``zero_copy``: Kafka's ``zeroCopy`` bytes (a slice of the buffer)."""

    name: str
    attr: str
    type: str
    array: bool
    versions: Versions
    nullable: Versions
    tagged: Versions | None
    tag: int | None
    default: Any
    struct: StructSchema | None
    common: bool = False
    zero_copy: bool = False

    @property
    def has_default(self) -> bool:
        """The declaration gives a default (``default`` is it); else the type's own."""
        return self.default is not _NATURAL

    def default_value(self) -> Any:
        """A fresh default (Kafka's constructor): the declared one, else the type's own."""
        if self.default is not _NATURAL:
            return self.default
        if self.array:
            return []
        if self.struct is not None:
            return self.struct.cls()
        return _TYPE_DEFAULTS[self.type]


_TYPE_DEFAULTS: dict[str, Any] = {
    **dict.fromkeys(t.FIXED_FORMATS, 0),
    "float64": 0.0,
    "bool": False,
    "string": "",
    "bytes": b"",
    "records": None,
    "uuid": t.ZERO_UUID,
}


class StructSchema:
    """A struct: its fields and the class its values are instances of."""

    def __init__(self, name: str, fields: tuple[Field, ...]) -> None:
        self.name = name
        self.fields = fields
        self.cls: type[KafkaStruct] = _make_class(self)


S = TypeVar("S", bound=KafkaStruct)
"""The class a message's values are instances of (``ProduceRequest``, ...)."""

Reader = Callable[[t.Buffer, int, int], tuple[S, int]]
Writer = Callable[[S, list[Any]], None]


@dataclass(eq=False)
class MessageSchema(Generic[S]):
    """A request or response of one API: key, valid and flexible versions, top struct.

    Generic in the class of its values: a declaration module's stub (``messages/*.pyi``,
    generated by :mod:`kafkacore.protocol.stubgen`) declares ``REQUEST`` as, e.g.,
    ``MessageSchema[ProduceRequest]``, so ``cls``, ``decode`` and ``reader`` are typed."""

    name: str
    api_key: int
    kind: str
    valid: Versions
    flexible: Versions
    struct: StructSchema

    def __post_init__(self) -> None:
        self._readers: dict[int, Reader[S]] = {}
        self._writers: dict[int, Writer[S]] = {}

    @property
    def cls(self) -> type[S]:
        return cast("type[S]", self.struct.cls)

    def reader(self, version: int) -> Reader[S]:
        """``read(buf, pos, end) -> (value, pos)`` for ``version``."""
        fn = self._readers.get(version)
        if fn is None:
            self._check_version(version)
            fn = _compile(self, version)[0]
        return fn

    def writer(self, version: int) -> Writer[S]:
        """``write(value, out)`` for ``version``: appends byte chunks to ``out``."""
        fn = self._writers.get(version)
        if fn is None:
            self._check_version(version)
            fn = _compile(self, version)[1]
        return fn

    def _check_version(self, version: int) -> None:
        if version not in self.valid:
            raise ValueError(f"{self.name} has no version {version} (valid {self.valid})")

    def decode(self, data: t.Buffer, version: int) -> S:
        """The whole of ``data`` as one message (trailing bytes are an error)."""
        buf = data if isinstance(data, memoryview) else memoryview(data)
        try:
            value, pos = self.reader(version)(buf, 0, len(buf))
        except (struct.error, IndexError) as exc:
            raise t.MalformedMessage(f"{self.name} v{version}: truncated ({exc})") from None
        if pos != len(buf):
            raise t.MalformedMessage(f"{self.name} v{version}: {len(buf) - pos} trailing bytes")
        return value

    def encode(self, value: S, version: int) -> bytes:
        out: list[Any] = []
        self.writer(version)(value, out)
        return b"".join(out)


# --- declarations ----------------------------------------------------------------------


@dataclass(frozen=True)
class FieldDecl:
    name: str
    type: str
    versions: str | None
    nullable: str
    tagged: str | None
    tag: int | None
    default: Any
    fields: tuple[FieldDecl, ...] | None
    zero_copy: bool = False


def field(
    name: str,
    type_: str,
    versions: str | None = "0+",
    *,
    nullable: str = "none",
    tagged: str | None = None,
    tag: int | None = None,
    default: Any = _NATURAL,
    fields: Sequence[FieldDecl] | None = None,
    zero_copy: bool = False,
) -> FieldDecl:
    """A field as Kafka's JSON declares it: ``type_`` like ``"int32"``, ``"[]string"``,
    ``"[]Topic"`` (a struct: ``fields`` inline, else a common struct of the message);
    ``default`` as the JSON's (:data:`NULL` for ``"null"``); ``versions=None``: the
    tagged versions; ``zero_copy`` as the JSON's ``zeroCopy``."""
    return FieldDecl(
        name,
        type_,
        versions,
        nullable,
        tagged,
        tag,
        default,
        tuple(fields) if fields is not None else None,
        zero_copy,
    )


def message(
    name: str,
    api_key: int,
    kind: str,
    valid: str,
    flexible: str,
    fields: Sequence[FieldDecl],
    common: dict[str, Sequence[FieldDecl]] | None = None,
) -> MessageSchema[Any]:
    """A request or response (``kind``; a coordinator record's ``"key"`` or ``"value"``,
    ``api_key`` then its record type) from its declaration; ``common`` are its
    ``commonStructs``."""
    commons: dict[str, StructSchema] = {}
    for struct_name, decls in (common or {}).items():
        commons[struct_name] = _struct(struct_name, decls, commons)
    top = _struct(name, fields, commons)
    pending = [top]
    while pending:  # every nested struct's class is reachable from the top one
        for f in pending.pop().fields:
            if f.struct is not None and not hasattr(top.cls, f.struct.name):
                setattr(top.cls, f.struct.name, f.struct.cls)
                pending.append(f.struct)
    return MessageSchema(name, api_key, kind, Versions.parse(valid), Versions.parse(flexible), top)


def _struct(
    name: str, decls: Sequence[FieldDecl], commons: dict[str, StructSchema]
) -> StructSchema:
    built = tuple(_field(decl, commons) for decl in decls)
    schema = StructSchema(name, built)
    return schema


def _field(decl: FieldDecl, commons: dict[str, StructSchema]) -> Field:
    array = decl.type.startswith("[]")
    element = decl.type[2:] if array else decl.type
    tagged = Versions.parse(decl.tagged) if decl.tagged is not None else None
    if decl.versions is not None:
        versions = Versions.parse(decl.versions)
    elif tagged is not None:
        versions = tagged
    else:
        raise ValueError(f"field {decl.name} has no versions")
    sub: StructSchema | None = None
    if element not in _PRIMITIVE_TYPES:
        sub = (
            _struct(element, decl.fields, commons) if decl.fields is not None else commons[element]
        )
        element = "struct"
    common = sub is not None and decl.fields is None
    default = decl.default
    if default == NULL:
        default = None
    elif default is not _NATURAL and element == "uuid":
        default = uuid.UUID(int=0)
    return Field(
        decl.name,
        snake_case(decl.name),
        element,
        array,
        versions,
        Versions.parse(decl.nullable),
        tagged,
        decl.tag,
        default,
        sub,
        common,
        decl.zero_copy,
    )


# --- generated classes -------------------------------------------------------------------

_UNKNOWN = "_unknown_tagged_fields"


def _make_class(schema: StructSchema) -> type[KafkaStruct]:
    attrs = [f.attr for f in schema.fields]
    ns: dict[str, Any] = {"_F": schema.fields, "_MISSING": _NATURAL}
    params = []
    body = []
    for i, f in enumerate(schema.fields):
        immutable = f.array is False and f.struct is None
        if immutable:
            d = f.default_value()
            ns[f"_d{i}"] = d
            params.append(f"{f.attr}=_d{i}")
            body.append(f"    self.{f.attr} = {f.attr}")
        else:
            params.append(f"{f.attr}=_MISSING")
            body.append(
                f"    self.{f.attr} = _F[{i}].default_value() if {f.attr} is _MISSING else {f.attr}"
            )
    body.append(f"    self.{_UNKNOWN} = {_UNKNOWN}")
    params.append(f"{_UNKNOWN}=()")
    src = "def __init__(self, *, " + ", ".join(params) + "):\n" + "\n".join(body) + "\n"
    key = "(" + "".join(f"self.{a}, " for a in [*attrs, _UNKNOWN]) + ")"
    okey = key.replace("self.", "other.")
    src += (
        "def __eq__(self, other):\n"
        "    if type(other) is not type(self):\n"
        "        return NotImplemented\n"
        f"    return {key} == {okey}\n"
    )
    exec(src, ns)  # the source is built from the declaration above
    cls = type(
        schema.name,
        (KafkaStruct,),
        {
            "__slots__": (*attrs, _UNKNOWN),
            "__init__": ns["__init__"],
            "__eq__": ns["__eq__"],
            "__hash__": None,
            "_schema": schema,
            "__module__": "kafkacore.protocol.messages",
        },
    )
    return cls


# --- the compiler --------------------------------------------------------------------------


class _Gen:
    """Collects the generated functions of one ``(message, version)``."""

    def __init__(self, msg: MessageSchema[Any], version: int) -> None:
        self.version = version
        self.flexible = version in msg.flexible
        self.ns: dict[str, Any] = {
            "t": t,
            "_unpack": struct.unpack_from,
            "_uv": t.write_uvarint,
            "_ruv": t.read_uvarint,
            "_UUID": uuid.UUID,
            "_MM": t.MalformedMessage,
        }
        self.src: list[str] = []
        self.readers: dict[int, str] = {}
        self.writers: dict[int, str] = {}
        self.counter = 0

    def const(self, value: Any) -> str:
        self.counter += 1
        name = f"_c{self.counter}"
        self.ns[name] = value
        return name

    def present(self, f: Field) -> bool:
        return self.version in f.versions

    # ---- reading

    def reader(self, s: StructSchema) -> str:
        name = self.readers.get(id(s))
        if name is not None:
            return name
        name = f"r_{s.name}_{len(self.readers)}"
        self.readers[id(s)] = name
        v = self.version
        lines = [f"def {name}(buf, pos, end):", f"    o = _new({self.const(s.cls)})"]
        self.ns["_new"] = object.__new__
        fields = [f for f in s.fields if self.present(f) and f.tag is None]
        absent = [f for f in s.fields if f not in fields]
        i = 0
        while i < len(fields):
            f = fields[i]
            if _is_fixed(f):
                run = [f]
                while i + len(run) < len(fields) and _is_fixed(fields[i + len(run)]):
                    run.append(fields[i + len(run)])
                fmt = struct.Struct(">" + "".join(t.FIXED_FORMATS[g.type] for g in run))
                targets = ", ".join(f"o.{g.attr}" for g in run)
                lines.append(f"    ({targets},) = {self.const(fmt)}.unpack_from(buf, pos)")
                lines.append(f"    pos += {fmt.size}")
                i += len(run)
                continue
            lines.extend("    " + ln for ln in self.read_value(f, f"o.{f.attr}", v in f.nullable))
            i += 1
        for f in absent:
            idx = s.fields.index(f)
            lines.append(f"    o.{f.attr} = {self.const(s.fields)}[{idx}].default_value()")
        lines.append(f"    o.{_UNKNOWN} = ()")
        if self.flexible:
            tagged = {f.tag: f for f in s.fields if f.tag is not None and self.present(f)}
            readers = {}
            for tag, f in tagged.items():
                fn = f"rt_{name}_{tag}"
                body = [f"def {fn}(buf, pos, end):"]
                body.extend("    " + ln for ln in self.read_value(f, "value", v in f.nullable))
                body.append("    return value, pos")
                self.src.append("\n".join(body))
                readers[tag] = (f.attr, fn)
            table = (
                "{" + ", ".join(f"{tag}: ({a!r}, {fn})" for tag, (a, fn) in readers.items()) + "}"
            )
            lines.append("    if buf[pos] == 0:")
            lines.append("        pos += 1")
            lines.append("    else:")
            lines.append(f"        pos = _read_tags(buf, pos, end, o, {table})")
            self.ns["_read_tags"] = _read_tags
        lines.append("    return o, pos")
        self.src.append("\n".join(lines))
        return name

    def read_value(self, f: Field, target: str, nullable: bool) -> list[str]:
        compact = self.flexible
        if f.array:
            out = [
                f"n, pos = t.read_array_count(buf, pos, end, {compact}, {nullable}, {f.name!r})",
                "if n < 0:",
                f"    {target} = None",
                "else:",
            ]
            if f.type in t.FIXED_FORMATS:
                size = t.FIXED_SIZES[f.type]
                fmt = t.FIXED_FORMATS[f.type]
                out += [
                    f"    {target} = list(_unpack('>%d{fmt}' % n, buf, pos))",
                    f"    pos += n * {size}",
                ]
            else:
                out += ["    lst = []", "    for _ in range(n):"]
                out += ["        " + ln for ln in self.read_scalar(f, "e", False)]
                out += ["        lst.append(e)", f"    {target} = lst"]
            return out
        return self.read_scalar(f, target, nullable)

    def read_scalar(self, f: Field, target: str, nullable: bool) -> list[str]:
        compact = self.flexible
        typ = f.type
        if typ in t.FIXED_FORMATS:
            fmt = struct.Struct(">" + t.FIXED_FORMATS[typ])
            return [f"{target} = {self.const(fmt)}.unpack_from(buf, pos)[0]", f"pos += {fmt.size}"]
        if typ == "uuid":
            return [f"{target}, pos = t.read_uuid(buf, pos)"]
        if typ in ("string", "bytes", "records"):
            return [
                f"{target}, pos = t.read_{typ}(buf, pos, end, {compact}, {nullable}, {f.name!r})"
            ]
        assert f.struct is not None
        fn = self.reader(f.struct)
        if nullable and f.tag is None:
            return [
                f"if {self.const(t.INT8)}.unpack_from(buf, pos)[0] < 0:",
                f"    pos += 1; {target} = None",
                "else:",
                f"    {target}, pos = {fn}(buf, pos + 1, end)",
            ]
        if nullable:  # a tagged nullable struct: an unsigned varint presence marker
            return [
                "present, pos = _ruv(buf, pos)",
                f"if not present: {target} = None",
                f"else: {target}, pos = {fn}(buf, pos, end)",
            ]
        return [f"{target}, pos = {fn}(buf, pos, end)"]

    # ---- writing

    def writer(self, s: StructSchema) -> str:
        name = self.writers.get(id(s))
        if name is not None:
            return name
        name = f"w_{s.name}_{len(self.writers)}"
        self.writers[id(s)] = name
        v = self.version
        lines = [f"def {name}(o, out):", "    a = out.append"]
        fields = [f for f in s.fields if self.present(f) and f.tag is None]
        i = 0
        while i < len(fields):
            f = fields[i]
            if _is_fixed(f):
                run = [f]
                while i + len(run) < len(fields) and _is_fixed(fields[i + len(run)]):
                    run.append(fields[i + len(run)])
                fmt = struct.Struct(">" + "".join(t.FIXED_FORMATS[g.type] for g in run))
                args = ", ".join(f"o.{g.attr}" for g in run)
                lines.append(f"    a({self.const(fmt)}.pack({args}))")
                i += len(run)
                continue
            lines.extend("    " + ln for ln in self.write_value(f, f"o.{f.attr}", v in f.nullable))
            i += 1
        if self.flexible:
            tagged = sorted(
                (f for f in s.fields if f.tag is not None and self.present(f)),
                key=lambda g: g.tag or 0,
            )
            if not tagged:
                lines += [
                    f"    u = o.{_UNKNOWN}",
                    "    if u:",
                    "        t.write_tagged(out, u)",
                    "    else:",
                    "        a(b'\\x00')",
                ]
            else:
                lines.append(f"    tags = list(o.{_UNKNOWN})")
                for f in tagged:
                    dflt = self.const(f.default_value())
                    lines.append(f"    x = o.{f.attr}")
                    cond = f"x != {dflt}" if f.default_value() is not None else "x is not None"
                    if f.default_value() is None:
                        cond = "x is not None"
                    lines.append(f"    if {cond}:")
                    lines.append("        sub = []")
                    body = self.write_value(f, "x", v in f.nullable, out="sub")
                    lines.extend("        " + ln for ln in body)
                    lines.append(f"        tags.append(({f.tag}, b''.join(sub)))")
                lines.append("    t.write_tagged(out, tags)")
        self.src.append("\n".join(lines))
        return name

    def write_value(self, f: Field, src: str, nullable: bool, out: str = "out") -> list[str]:
        compact = self.flexible
        app = f"{out}.append"
        if f.array:
            if f.type in t.FIXED_FORMATS:
                fmt = t.FIXED_FORMATS[f.type]
                return [f"{app}(t.write_fixed_array({fmt!r}, {src}, {compact}))"]
            return [
                f"if {src} is None:",
                f"    {app}(t.write_length(-1, {compact}, True))",
                "else:",
                f"    {app}(t.write_length(len({src}), {compact}, True))",
                f"    for e in {src}:",
                *("        " + ln for ln in self.write_scalar(f, "e", False, out)),
            ]
        return self.write_scalar(f, src, nullable, out)

    def write_scalar(self, f: Field, src: str, nullable: bool, out: str) -> list[str]:
        compact = self.flexible
        typ = f.type
        app = f"{out}.append"
        if typ in t.FIXED_FORMATS:
            fmt = struct.Struct(">" + t.FIXED_FORMATS[typ])
            return [f"{app}({self.const(fmt)}.pack({src}))"]
        if typ == "uuid":
            return [f"{app}({src}.bytes)"]
        if typ == "string":
            return [f"t.write_string({out}, {src}, {compact}, {f.name!r})"]
        if typ in ("bytes", "records"):
            return [f"t.write_bytes({out}, {src}, {compact})"]
        assert f.struct is not None
        fn = self.writer(f.struct)
        if nullable and f.tag is None:
            return [
                f"if {src} is None:",
                f"    {app}(b'\\xff')",
                "else:",
                f"    {app}(b'\\x01')",
                f"    {fn}({src}, {out})",
            ]
        if nullable:
            return [
                f"if {src} is None:",
                f"    {app}(b'\\x00')",
                "else:",
                f"    {app}(b'\\x01')",
                f"    {fn}({src}, {out})",
            ]
        return [f"{fn}({src}, {out})"]


def _is_fixed(f: Field) -> bool:
    """A fixed-size, untagged, non-array field: packed with its neighbours."""
    return f.type in t.FIXED_FORMATS and f.tag is None and not f.array


def _read_tags(buf: Any, pos: int, end: int, o: Any, known: dict[int, tuple[str, Any]]) -> int:
    count, pos = t.read_uvarint(buf, pos)
    unknown: list[tuple[int, bytes]] = []
    for _ in range(count):
        tag, size, pos = t.read_tag_header(buf, pos, end)
        entry = known.get(tag)
        if entry is None:
            unknown.append((tag, bytes(buf[pos : pos + size])))
        else:
            value, after = entry[1](buf, pos, pos + size)
            if after != pos + size:
                raise t.MalformedMessage(f"tagged field {tag} has size {size}, read {after - pos}")
            setattr(o, entry[0], value)
        pos += size
    if unknown:
        setattr(o, _UNKNOWN, tuple(unknown))
    return pos


def _compile(msg: MessageSchema[S], version: int) -> tuple[Reader[S], Writer[S]]:
    gen = _Gen(msg, version)
    r = gen.reader(msg.struct)
    w = gen.writer(msg.struct)
    source = "\n\n".join(gen.src) + "\n"
    code = compile(source, f"<kafkacore.protocol {msg.name} v{version}>", "exec")
    exec(code, gen.ns)  # the source is generated from the declaration
    reader, writer = gen.ns[r], gen.ns[w]
    msg._readers[version] = reader
    msg._writers[version] = writer
    return reader, writer


def generated_source(msg: MessageSchema[Any], version: int) -> str:
    """The Python source the codec compiles for ``msg`` at ``version`` (for debugging)."""
    gen = _Gen(msg, version)
    gen.reader(msg.struct)
    gen.writer(msg.struct)
    return "\n\n".join(gen.src) + "\n"
