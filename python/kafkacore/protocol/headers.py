"""Request and response headers (Kafka's ``RequestHeader.json``/``ResponseHeader.json``).

Request header:

* v0: ``api_key int16, api_version int16, correlation_id int32`` (only
  ControlledShutdown v0, which kafkacore does not serve);
* v1: + ``client_id`` NULLABLE_STRING (int16 length, -1 = null);
* v2: + a tag buffer. ``client_id`` keeps its int16 length even here
  (``"flexibleVersions": "none"``) so that any broker can read the header of any
  ApiVersions request.

Response header: v0 ``correlation_id int32``; v1 adds a tag buffer.

Which version: a flexible API version uses request header v2 / response header v1, a
non-flexible one v1 / v0 -- except that an **ApiVersions response always uses header
v0** (KIP-511), so that a client can read it whatever version it asked for.

Immutable data and pure functions: thread-safe.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from kafkacore.protocol import types as t

__all__ = [
    "API_VERSIONS_KEY",
    "RequestHeader",
    "ResponseHeader",
    "read_request_header",
    "read_response_header",
    "request_header_version",
    "response_header_version",
    "write_request_header",
    "write_response_header",
]

API_VERSIONS_KEY = 18
_PREFIX = struct.Struct(">hhi")  # api key, api version, correlation id


@dataclass(slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = field(default=())


@dataclass(slots=True)
class ResponseHeader:
    correlation_id: int
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = field(default=())


def request_header_version(flexible: bool) -> int:
    """2 for a flexible API version, else 1."""
    return 2 if flexible else 1


def response_header_version(api_key: int, flexible: bool) -> int:
    """1 for a flexible API version, else 0; always 0 for ApiVersions (KIP-511)."""
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if flexible else 0


def _read_tags(buf: Any, pos: int, end: int) -> tuple[tuple[tuple[int, bytes], ...], int]:
    count, pos = t.read_uvarint(buf, pos)
    tags = []
    for _ in range(count):
        tag, size, pos = t.read_tag_header(buf, pos, end)
        tags.append((tag, bytes(buf[pos : pos + size])))
        pos += size
    return tuple(tags), pos


def read_request_header(buf: Any, version: int) -> tuple[RequestHeader, int]:
    """The header at the start of ``buf`` and the position of the body."""
    end = len(buf)
    api_key, api_version, correlation_id = _PREFIX.unpack_from(buf, 0)
    header = RequestHeader(api_key, api_version, correlation_id)
    pos = 8
    if version >= 1:
        header.client_id, pos = t.read_string(buf, pos, end, False, True, "client_id")
    if version >= 2:
        header.unknown_tagged_fields, pos = _read_tags(buf, pos, end)
    return header, pos


def write_request_header(header: RequestHeader, version: int, out: list[Any]) -> None:
    out.append(_PREFIX.pack(header.api_key, header.api_version, header.correlation_id))
    if version >= 1:
        t.write_string(out, header.client_id, False, "client_id")
    if version >= 2:
        t.write_tagged(out, header.unknown_tagged_fields)


def read_response_header(buf: Any, version: int) -> tuple[ResponseHeader, int]:
    header = ResponseHeader(t.INT32.unpack_from(buf, 0)[0])
    pos = 4
    if version >= 1:
        header.unknown_tagged_fields, pos = _read_tags(buf, pos, len(buf))
    return header, pos


def write_response_header(header: ResponseHeader, version: int, out: list[Any]) -> None:
    out.append(t.INT32.pack(header.correlation_id))
    if version >= 1:
        if header.unknown_tagged_fields:
            t.write_tagged(out, header.unknown_tagged_fields)
        else:
            out.append(b"\x00")
