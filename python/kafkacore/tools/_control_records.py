"""Control records as Kafka's ``DumpLogSegments`` prints them (``printControlRecord``).

Transaction markers: `` endTxnMarker: COMMIT coordinatorEpoch: N``. The KRaft control
records (LeaderChange, SnapshotHeader, SnapshotFooter, KRaftVersion, KRaftVoters) are
read as Kafka reads them (flexible version 0: unsigned varints, compact arrays and
strings, tagged fields) and printed as Kafka's generated JSON converters write them;
other types as `` controlType: UNKNOWN(N)``. Pure functions.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable

from kafkacore._java import JavaException, json_string

__all__ = ["CONTROL_TYPES", "control_record_text"]

CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}


def control_record_text(key: bytes | None, value: bytes | None) -> str:
    """What ``DumpLogSegments.printControlRecord`` appends for a control record."""
    if key is None:
        raise JavaException("NullPointerException", "control record without a key")
    if len(key) < 4:
        raise JavaException(
            "InvalidRecordException",
            "Invalid value size found for control record key. Must have at least 4 bytes, "
            f"but found only {len(key)}",
        )
    version, type_id = struct.unpack_from(">hh", key)
    if version < 0:
        raise JavaException(
            "InvalidRecordException",
            f"Invalid version found for control record: {version}. May indicate data corruption",
        )
    name = CONTROL_TYPES.get(type_id, "UNKNOWN")
    if type_id in (0, 1):
        if value is None or len(value) < 6:
            raise JavaException(
                "BufferUnderflowException", "end transaction marker value too short"
            )
        marker_version, coordinator_epoch = struct.unpack_from(">hi", value)
        if marker_version < 0:
            raise JavaException(
                "InvalidRecordException",
                f"Invalid version found for end transaction marker: {marker_version}. "
                "May indicate data corruption",
            )
        return f" endTxnMarker: {name} coordinatorEpoch: {coordinator_epoch}"
    if 2 <= type_id <= 6:
        if value is None:
            raise JavaException("NullPointerException", f"{name} control record without a value")
        label, render = _KRAFT_CONTROL[type_id]
        try:
            return f" {label}{render(_FlexibleReader(value))}"
        except (struct.error, IndexError, ValueError) as exc:
            raise JavaException(
                "RuntimeException", f"malformed {name} control record: {exc}"
            ) from None
    return f" controlType: {name}({type_id})"


class _FlexibleReader:
    """Kafka's flexible-version message encoding (unsigned varints, compact arrays and
    strings, tagged fields), enough for the KRaft control records."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return int(value)

    def int16(self) -> int:
        return self._take(">h")

    def uint16(self) -> int:
        return self._take(">H")

    def int32(self) -> int:
        return self._take(">i")

    def int64(self) -> int:
        return self._take(">q")

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise ValueError("varint too long")

    def uuid(self) -> str:
        raw = self.data[self.pos : self.pos + 16]
        if len(raw) < 16:
            raise ValueError("truncated uuid")
        self.pos += 16
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    def string(self) -> str:
        length = self.uvarint() - 1
        if length < 0:
            raise ValueError("null string")
        raw = self.data[self.pos : self.pos + length]
        if len(raw) < length:
            raise ValueError("truncated string")
        self.pos += length
        return raw.decode("utf-8", "replace")

    def array(self, element: Callable[[], str]) -> str:
        length = self.uvarint() - 1
        if length < 0:
            raise ValueError("null array")
        return "[" + ",".join(element() for _ in range(length)) + "]"

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self.pos += self.uvarint()


def _json_object(*fields: tuple[str, object]) -> str:
    return "{" + ",".join(f'"{name}":{value}' for name, value in fields) + "}"


def _leader_change_json(r: _FlexibleReader) -> str:
    version, leader_id = r.int16(), r.int32()

    def voter() -> str:
        voter_id = r.int32()
        r.tagged_fields()
        if version >= 1:  # read as v0, written as the record's own version: the default uuid
            return _json_object(
                ("voterId", voter_id), ("voterDirectoryId", '"AAAAAAAAAAAAAAAAAAAAAA"')
            )
        return _json_object(("voterId", voter_id))

    voters, granting = r.array(voter), r.array(voter)
    r.tagged_fields()
    return _json_object(
        ("version", version),
        ("leaderId", leader_id),
        ("voters", voters),
        ("grantingVoters", granting),
    )


def _snapshot_header_json(r: _FlexibleReader) -> str:
    version, timestamp = r.int16(), r.int64()
    r.tagged_fields()
    return _json_object(("version", version), ("lastContainedLogTimestamp", timestamp))


def _snapshot_footer_json(r: _FlexibleReader) -> str:
    version = r.int16()
    r.tagged_fields()
    return _json_object(("version", version))


def _kraft_version_json(r: _FlexibleReader) -> str:
    version, kraft_version = r.int16(), r.int16()
    r.tagged_fields()
    return _json_object(("version", version), ("kRaftVersion", kraft_version))


def _voters_json(r: _FlexibleReader) -> str:
    version = r.int16()

    def endpoint() -> str:
        name, host, port = r.string(), r.string(), r.uint16()
        r.tagged_fields()
        return _json_object(
            ("name", json_string(name)), ("host", json_string(host)), ("port", port)
        )

    def voter() -> str:
        voter_id, directory_id = r.int32(), r.uuid()
        endpoints = r.array(endpoint)
        low, high = r.int16(), r.int16()
        r.tagged_fields()
        r.tagged_fields()
        return _json_object(
            ("voterId", voter_id),
            ("voterDirectoryId", json_string(directory_id)),
            ("endpoints", endpoints),
            (
                "kRaftVersionFeature",
                _json_object(("minSupportedVersion", low), ("maxSupportedVersion", high)),
            ),
        )

    voters = r.array(voter)
    r.tagged_fields()
    return _json_object(("version", version), ("voters", voters))


_KRAFT_CONTROL: dict[int, tuple[str, Callable[[_FlexibleReader], str]]] = {
    2: ("LeaderChange: ", _leader_change_json),
    3: ("SnapshotHeader ", _snapshot_header_json),
    4: ("SnapshotFooter ", _snapshot_footer_json),
    5: ("KRaftVersion ", _kraft_version_json),
    6: ("KRaftVoters ", _voters_json),
}
