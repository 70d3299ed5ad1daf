"""Kafka's small text files, byte for byte: offset checkpoints, the leader-epoch
checkpoint, ``partition.metadata`` and ``meta.properties``.

Checkpoint format (Kafka's ``CheckpointFile``), UTF-8, ``\\n`` line ends::

    0                       <- version
    2                       <- number of entries
    my-topic 0 1234         <- one entry per line, fields separated by one space
    my-topic 1 99

* :class:`OffsetCheckpointFile` - entries ``<topic> <partition> <offset>``: the per-log-dir
  ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
  ``replication-offset-checkpoint`` and ``cleaner-offset-checkpoint``.
* :class:`LeaderEpochCheckpointFile` - entries ``<epoch> <start offset>``: the
  per-partition ``leader-epoch-checkpoint``.
* :class:`PartitionMetadataFile` - ``version: 0\\ntopic_id: <id>`` (no final newline),
  the id written as Kafka's ``Uuid.toString()``: the 16 bytes in URL-safe base64
  without padding (22 characters).
* :class:`MetaProperties` - a Java properties file at the root of each log dir. KRaft
  (version 1) has ``cluster.id``, ``node.id`` and usually ``directory.id``; version 0
  (ZooKeeper era) may have ``broker.id`` instead of ``node.id``.

Every write goes to ``<name>.tmp``, is fsynced, renamed over ``<name>`` (atomic on POSIX)
and the directory is fsynced (Kafka's ``Utils.atomicMoveWithFallback``). Reads validate
the format and raise :class:`~kafkacore.errors.CorruptCheckpointError` with Kafka's
messages (``Malformed line in checkpoint file [<path>]: <line>``, ...). As in Kafka,
constructing a checkpoint file object creates an empty file when none exists, and an
empty file reads as no entries.

Thread-safety: each object serializes its own reads and writes with a lock.
"""

from __future__ import annotations

import base64
import os
import re
import threading
import time as _time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Generic, NamedTuple, Protocol, TypeVar

from kafkacore.errors import CorruptCheckpointError, StorageIOError
from kafkacore.log.files import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    META_PROPERTIES_FILE,
    PARTITION_METADATA_FILE,
    TEMP_FILE_SUFFIX,
    TopicPartition,
)

__all__ = [
    "CheckpointFile",
    "EntryFormatter",
    "EpochEntry",
    "LeaderEpochCheckpointFile",
    "MetaProperties",
    "OffsetCheckpointFile",
    "PartitionMetadata",
    "PartitionMetadataFile",
    "fsync_dir",
    "random_uuid",
    "uuid_from_base64",
    "uuid_to_base64",
    "write_atomically",
]

T = TypeVar("T")

_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_WHITESPACE = re.compile(r"\s+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*={0,2}")


# -- atomic writes -----------------------------------------------------------------------


def fsync_dir(directory: str) -> None:
    """fsync a directory so that a rename or a new file in it survives a crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: str, data: bytes, *, fsync: bool = True) -> None:
    """Replace ``path`` with ``data``: write ``path.tmp``, fsync it, rename it over
    ``path`` and fsync the directory. ``StorageIOError`` naming the file on failure."""
    tmp = path + TEMP_FILE_SUFFIX
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
        if fsync:
            fsync_dir(os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        raise StorageIOError(
            exc.errno or 0, f"Error while writing to checkpoint file: {exc.strerror}", path
        ) from exc


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise StorageIOError(
            exc.errno or 0, f"Error while reading checkpoint file: {exc.strerror}", path
        ) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptCheckpointError(f"Checkpoint file [{path}] is not valid UTF-8: {exc}") from exc


def _lines(text: str) -> list[str]:
    """Java's ``BufferedReader.readLine`` over ``text``: ``\\n``, ``\\r`` or ``\\r\\n``."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _java_split_whitespace(line: str) -> list[str]:
    """Java's ``Pattern.compile("\\\\s+").split(line)``: a leading separator gives an empty
    first field, trailing empty fields are dropped."""
    parts = _WHITESPACE.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _java_int(text: str, lo: int, hi: int) -> int:
    """Java's ``Integer.parseInt``/``Long.parseLong``: optional sign and ASCII digits."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ValueError(text)
    value = int(text)
    if not lo <= value <= hi:
        raise ValueError(text)
    return value


# -- the generic checkpoint file ----------------------------------------------------------


class EntryFormatter(Protocol[T]):
    """Turns one entry into its line and back (``None``: the line is malformed)."""

    def to_line(self, entry: T) -> str: ...

    def from_line(self, line: str) -> T | None: ...


class CheckpointFile(Generic[T]):
    """``version``, entry count, then one line per entry (Kafka's ``CheckpointFile``)."""

    def __init__(
        self, path: str, version: int, formatter: EntryFormatter[T], *, create: bool = True
    ) -> None:
        """``create``: create the file if missing, as Kafka does; False for read-only
        readers (then :meth:`read` of a missing file raises ``StorageIOError``)."""
        self.path = os.path.abspath(path)
        self.version = version
        self._formatter = formatter
        self._lock = threading.Lock()
        if not create:
            return
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            pass
        except OSError as exc:
            raise StorageIOError(
                exc.errno or 0, f"Cannot create checkpoint file: {exc.strerror}", self.path
            ) from exc
        else:
            os.close(fd)

    def encode(self, entries: Iterable[T]) -> bytes:
        """The file's bytes for ``entries``."""
        lines = [self._formatter.to_line(entry) for entry in entries]
        text = f"{self.version}\n{len(lines)}\n" + "".join(line + "\n" for line in lines)
        return text.encode("utf-8")

    def write(self, entries: Iterable[T]) -> None:
        """Atomically replace the file with ``entries``."""
        data = self.encode(entries)
        with self._lock:
            write_atomically(self.path, data)

    def write_if_dir_exists(self, entries: Iterable[T]) -> None:
        """:meth:`write`, doing nothing if the directory is gone (a deleted partition)."""
        try:
            self.write(entries)
        except StorageIOError as exc:
            if not os.path.isdir(os.path.dirname(self.path)):
                return
            raise exc

    def read(self) -> list[T]:
        """The entries; ``[]`` for an empty file. ``CorruptCheckpointError`` if the
        version differs, a line is malformed or the count does not match."""
        with self._lock:
            text = _read_text(self.path)
        lines = _lines(text)
        if not lines:
            return []
        read_version = self._to_int(lines[0])
        if read_version != self.version:
            raise CorruptCheckpointError(
                f"Unrecognised version:{read_version}, expected version: {self.version} "
                f"in checkpoint file at: {self.path}"
            )
        if len(lines) < 2:
            return []
        expected_size = self._to_int(lines[1])
        entries: list[T] = []
        for line in lines[2:]:
            entry = self._formatter.from_line(line)
            if entry is None:
                raise self._malformed(line)
            entries.append(entry)
        if len(entries) != expected_size:
            raise CorruptCheckpointError(
                f"Expected [{expected_size}] entries in checkpoint file [{self.path}], "
                f"but found only [{len(entries)}]"
            )
        return entries

    def _to_int(self, line: str) -> int:
        try:
            return _java_int(line, _I32_MIN, _I32_MAX)
        except ValueError:
            raise self._malformed(line) from None

    def _malformed(self, line: str) -> CorruptCheckpointError:
        return CorruptCheckpointError(f"Malformed line in checkpoint file [{self.path}]: {line}")


# -- offset checkpoints ---------------------------------------------------------------------


class _TopicPartitionOffsetFormatter:
    def to_line(self, entry: tuple[TopicPartition, int]) -> str:
        tp, offset = entry
        return f"{tp.topic} {tp.partition} {offset}"

    def from_line(self, line: str) -> tuple[TopicPartition, int] | None:
        parts = _java_split_whitespace(line)
        if len(parts) != 3:
            return None
        try:
            partition = _java_int(parts[1], _I32_MIN, _I32_MAX)
            offset = _java_int(parts[2], _I64_MIN, _I64_MAX)
        except ValueError:
            return None
        return TopicPartition(parts[0], partition), offset


class OffsetCheckpointFile:
    """``(topic, partition) -> offset`` (Kafka's ``OffsetCheckpointFile``, version 0).

    Entries are written in the mapping's iteration order."""

    CURRENT_VERSION = 0

    def __init__(self, path: str, *, create: bool = True) -> None:
        self._file = CheckpointFile(
            path, self.CURRENT_VERSION, _TopicPartitionOffsetFormatter(), create=create
        )

    @property
    def path(self) -> str:
        return self._file.path

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._file.write((TopicPartition(*tp), offset) for tp, offset in offsets.items())

    def read(self) -> dict[TopicPartition, int]:
        return dict(self._file.read())


# -- leader epochs ------------------------------------------------------------------------


class EpochEntry(NamedTuple):
    """The first offset written under a leader epoch."""

    epoch: int
    start_offset: int


class _EpochEntryFormatter:
    def to_line(self, entry: EpochEntry) -> str:
        return f"{entry.epoch} {entry.start_offset}"

    def from_line(self, line: str) -> EpochEntry | None:
        parts = _java_split_whitespace(line)
        if len(parts) != 2:
            return None
        try:
            return EpochEntry(
                _java_int(parts[0], _I32_MIN, _I32_MAX), _java_int(parts[1], _I64_MIN, _I64_MAX)
            )
        except ValueError:
            return None


class LeaderEpochCheckpointFile:
    """``leader-epoch-checkpoint``: ``<epoch> <start offset>`` lines, version 0."""

    CURRENT_VERSION = 0

    def __init__(self, path: str) -> None:
        self._file = CheckpointFile(path, self.CURRENT_VERSION, _EpochEntryFormatter())

    @classmethod
    def in_dir(cls, partition_dir: str) -> LeaderEpochCheckpointFile:
        """The checkpoint of the partition directory ``partition_dir``."""
        return cls(os.path.join(partition_dir, LEADER_EPOCH_CHECKPOINT_FILE))

    @property
    def path(self) -> str:
        return self._file.path

    def write(self, entries: Iterable[EpochEntry]) -> None:
        self._file.write(entries)

    def write_if_dir_exists(self, entries: Iterable[EpochEntry]) -> None:
        self._file.write_if_dir_exists(entries)

    def read(self) -> list[EpochEntry]:
        return self._file.read()

    @classmethod
    def encode(cls, entries: Iterable[EpochEntry]) -> bytes:
        """The bytes of a checkpoint holding ``entries`` (the tiered copy of a segment's
        leader epochs is this file, Kafka's ``LeaderEpochCheckpointFile`` format)."""
        return CheckpointFile(
            "-", cls.CURRENT_VERSION, _EpochEntryFormatter(), create=False
        ).encode(entries)

    @classmethod
    def decode(cls, data: bytes) -> list[EpochEntry]:
        """The entries of checkpoint bytes (``CorruptCheckpointError`` as :meth:`read`)."""
        lines = _lines(data.decode("utf-8", errors="replace"))
        if not lines:
            return []
        formatter = _EpochEntryFormatter()
        if lines[0].strip() != str(cls.CURRENT_VERSION) or len(lines) < 2:
            raise CorruptCheckpointError(f"Unrecognised leader epoch checkpoint: {lines[0]!r}")
        entries = [formatter.from_line(line) for line in lines[2:]]
        if any(e is None for e in entries) or str(len(entries)) != lines[1].strip():
            raise CorruptCheckpointError("Malformed leader epoch checkpoint")
        return [e for e in entries if e is not None]


# -- Kafka's Uuid ---------------------------------------------------------------------------

_ZERO_UUID = uuid.UUID(int=0)
_ONE_UUID = uuid.UUID(int=1)  # also METADATA_TOPIC_ID


def uuid_to_base64(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString()``: URL-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_from_base64(text: str) -> uuid.UUID:
    """Kafka's ``Uuid.fromString`` (``ValueError`` with its messages)."""
    if len(text) > 24:
        raise ValueError(
            f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID"
        )
    if not _BASE64URL.fullmatch(text):
        raise ValueError(f"Input string `{text}` is not URL-safe base64")
    try:
        raw = base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    except ValueError as exc:
        raise ValueError(f"Input string `{text}` is not valid base64: {exc}") from None
    if len(raw) != 16:
        raise ValueError(
            f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the "
            "expected 16 bytes of a base64-encoded UUID"
        )
    return uuid.UUID(bytes=raw)


def random_uuid() -> uuid.UUID:
    """Kafka's ``Uuid.randomUuid()``: a version-4 UUID, never 0 or 1 and never one whose
    string starts with ``-`` (it would read as a command-line option)."""
    while True:
        value = uuid.uuid4()
        if value not in (_ZERO_UUID, _ONE_UUID) and not uuid_to_base64(value).startswith("-"):
            return value


# -- partition.metadata ----------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionMetadata:
    """The content of ``partition.metadata``."""

    version: int
    topic_id: uuid.UUID

    def encode(self) -> str:
        return f"version: {self.version}\ntopic_id: {uuid_to_base64(self.topic_id)}"


class PartitionMetadataFile:
    """``partition.metadata`` of one partition directory (Kafka's ``PartitionMetadataFile``)."""

    CURRENT_VERSION = 0
    _FIELD_SEPARATOR = re.compile(r":\s+")

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self._lock = threading.Lock()

    @classmethod
    def in_dir(cls, partition_dir: str) -> PartitionMetadataFile:
        return cls(os.path.join(partition_dir, PARTITION_METADATA_FILE))

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def write(self, topic_id: uuid.UUID) -> None:
        data = PartitionMetadata(self.CURRENT_VERSION, topic_id).encode().encode("utf-8")
        with self._lock:
            write_atomically(self.path, data)

    def read(self) -> PartitionMetadata:
        with self._lock:
            lines = _lines(_read_text(self.path))
        line = lines[0] if lines else ""
        fields = self._split(line)
        try:
            version = _java_int(fields[1], _I32_MIN, _I32_MAX)
        except ValueError:
            raise self._malformed(line) from None
        if version < self.CURRENT_VERSION:
            raise CorruptCheckpointError(
                f"Unrecognized version of partition metadata file + ({self.path}): {version}"
            )
        line = lines[1] if len(lines) > 1 else ""
        fields = self._split(line)
        try:
            topic_id = uuid_from_base64(fields[1])
        except ValueError as exc:
            raise CorruptCheckpointError(
                f"Malformed line in checkpoint file [{self.path}]: {line} ({exc})"
            ) from None
        if topic_id == _ZERO_UUID:
            raise CorruptCheckpointError(
                f"Invalid topic ID in partition metadata file ({self.path})"
            )
        return PartitionMetadata(version, topic_id)

    def _split(self, line: str) -> list[str]:
        fields = self._FIELD_SEPARATOR.split(line)
        while fields and fields[-1] == "":
            fields.pop()
        if len(fields) != 2:
            raise self._malformed(line)
        return fields

    def _malformed(self, line: str) -> CorruptCheckpointError:
        return CorruptCheckpointError(f"Malformed line in checkpoint file [{self.path}]: {line}")

    def delete(self) -> None:
        os.remove(self.path)


# -- meta.properties ------------------------------------------------------------------------


def _java_properties_escape(text: str, *, is_key: bool) -> str:
    """``java.util.Properties.saveConvert`` (escapeUnicode=true)."""
    out: list[str] = []
    for i, ch in enumerate(text):
        code = ord(ch)
        if ch == " ":
            out.append("\\ " if (i == 0 or is_key) else " ")
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[ch])
        elif ch in "=:#!":
            out.append("\\" + ch)
        elif code < 0x20 or code > 0x7E:
            units = ch.encode("utf-16-be")
            out.extend(f"\\u{units[j] << 8 | units[j + 1]:04X}" for j in range(0, len(units), 2))
        else:
            out.append(ch)
    return "".join(out)


def _java_properties_load(text: str, path: str) -> dict[str, str]:
    """``java.util.Properties.load``: comments (``#``/``!``), ``key=value``, ``key: value``
    or ``key value``, backslash line continuation and escapes."""
    props: dict[str, str] = {}
    physical = _LINE_BREAK.split(text)
    i = 0
    while i < len(physical):
        line = physical[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        # join continuation lines: an odd number of trailing backslashes
        while (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            line = line[:-1]
            if i >= len(physical):
                break
            line += physical[i].lstrip(" \t\f")
            i += 1
        key_end = len(line)
        j = 0
        while j < len(line):
            ch = line[j]
            if ch == "\\":
                j += 2
                continue
            if ch in "=: \t\f":
                key_end = j
                break
            j += 1
        value_start = key_end
        while value_start < len(line) and line[value_start] in " \t\f":
            value_start += 1
        if value_start < len(line) and line[value_start] in "=:":
            value_start += 1
            while value_start < len(line) and line[value_start] in " \t\f":
                value_start += 1
        key = _java_properties_unescape(line[:key_end], path)
        props[key] = _java_properties_unescape(line[value_start:], path)
    return props


def _java_properties_unescape(text: str, path: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= len(text):
            break
        esc = text[i]
        i += 1
        if esc == "u":
            digits = text[i : i + 4]
            if len(digits) != 4 or not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                raise CorruptCheckpointError(
                    f"Malformed \\uxxxx encoding in properties file {path}"
                )
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(esc, esc))
    # surrogate pairs written as two \\u escapes
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")


def _java_date(epoch_seconds: float) -> str:
    """``java.util.Date.toString()``: ``EEE MMM dd HH:mm:ss zzz yyyy`` in local time."""
    return _time.strftime("%a %b %d %H:%M:%S %Z %Y", _time.localtime(epoch_seconds))


@dataclass(frozen=True)
class MetaProperties:
    """``meta.properties`` at the root of a log directory (Kafka's ``MetaProperties``).

    Version 1 (KRaft) requires ``cluster_id`` and ``node_id``; version 0 has them optional
    and stores the node id as ``broker.id``. ``directory_id`` is the log dir's Uuid."""

    version: int = 1
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: uuid.UUID | None = None

    VERSION_PROP: ClassVar[str] = "version"
    CLUSTER_ID_PROP: ClassVar[str] = "cluster.id"
    BROKER_ID_PROP: ClassVar[str] = "broker.id"
    NODE_ID_PROP: ClassVar[str] = "node.id"
    DIRECTORY_ID_PROP: ClassVar[str] = "directory.id"

    def __post_init__(self) -> None:
        if self.version not in (0, 1):
            raise ValueError(f"Unknown meta.properties version number {self.version}")
        if self.version != 0:
            if self.cluster_id is None:
                raise ValueError("cluster.id was not found.")
            if self.node_id is None:
                raise ValueError("node.id was not found.")

    @staticmethod
    def path_in(log_dir: str) -> str:
        """The path of ``meta.properties`` in ``log_dir``."""
        return os.path.join(log_dir, META_PROPERTIES_FILE)

    def to_properties(self) -> dict[str, str]:
        props = {self.VERSION_PROP: str(self.version)}
        if self.cluster_id is not None:
            props[self.CLUSTER_ID_PROP] = self.cluster_id
        if self.node_id is not None:
            props[self.BROKER_ID_PROP if self.version == 0 else self.NODE_ID_PROP] = str(
                self.node_id
            )
        if self.directory_id is not None:
            props[self.DIRECTORY_ID_PROP] = uuid_to_base64(self.directory_id)
        return props

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> MetaProperties:
        """Parse as Kafka's ``MetaProperties.Builder(Properties)`` (``ValueError``)."""
        version_text = props.get(cls.VERSION_PROP, "0")
        try:
            version = _java_int(version_text.strip(), _I32_MIN, _I32_MAX)
        except ValueError:
            raise ValueError(f"Invalid meta.properties version string '{version_text}'") from None
        if version not in (0, 1):
            raise ValueError(f"Unknown meta.properties version number {version}")
        id_prop = cls.BROKER_ID_PROP if version == 0 else cls.NODE_ID_PROP
        node_id: int | None = None
        if id_prop in props or version != 0:
            value = props.get(id_prop)
            if value is None:
                raise ValueError(f"Failed to find {id_prop}")
            try:
                node_id = _java_int(value, _I32_MIN, _I32_MAX)
            except ValueError:
                raise ValueError(f"Unable to read {id_prop} as a base-10 number.") from None
        directory_id = None
        if cls.DIRECTORY_ID_PROP in props:
            try:
                directory_id = uuid_from_base64(props[cls.DIRECTORY_ID_PROP])
            except ValueError as exc:
                raise ValueError(f"Unable to read directory.id as a Uuid: {exc}") from None
        return cls(version, props.get(cls.CLUSTER_ID_PROP), node_id, directory_id)

    def encode(self, *, timestamp: float | None = None) -> bytes:
        """The file as Java's ``Properties.store(writer, "")`` writes it: an empty comment
        line, a date comment, then ``key=value`` lines sorted by key (JDK 18+ order;
        older JDKs wrote hash order, which readers do not depend on)."""
        when = _time.time() if timestamp is None else timestamp
        lines = ["#", "#" + _java_date(when)]
        for key, value in sorted(self.to_properties().items()):
            lines.append(
                f"{_java_properties_escape(key, is_key=True)}="
                f"{_java_properties_escape(value, is_key=False)}"
            )
        return ("\n".join(lines) + "\n").encode("utf-8")

    def write(self, path: str, *, timestamp: float | None = None) -> None:
        """Atomically write to ``path`` (``<path>.tmp``, fsync, rename, fsync dir)."""
        write_atomically(path, self.encode(timestamp=timestamp))

    @classmethod
    def read(cls, path: str) -> MetaProperties:
        """Read ``path``; ``FileNotFoundError`` if absent, ``CorruptCheckpointError`` if
        its content is not valid meta.properties."""
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise StorageIOError(
                exc.errno or 0, f"Error while reading meta.properties: {exc.strerror}", path
            ) from exc
        # Properties.load(InputStream) reads ISO-8859-1 (non-Latin-1 text is \\u-escaped)
        props = _java_properties_load(raw.decode("latin-1"), path)
        try:
            return cls.from_properties(props)
        except ValueError as exc:
            raise CorruptCheckpointError(f"Invalid meta.properties file {path}: {exc}") from None
