"""One request frame out, one response frame back, on a connection of its own: for the
tools' few requests that the admin client does not make (OffsetDelete, the controller's
reassignment and election APIs)."""

from __future__ import annotations

import socket
import struct


class ConnectionClosed(OSError):
    """The broker closed the connection before its whole response had arrived."""


def exchange(host: str, port: int, frame: bytes, timeout: float) -> bytes:
    """Send the encoded request ``frame`` to ``host:port``; the response frame without its
    size prefix. Raises ``OSError`` (``ConnectionClosed`` for a closed connection)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(frame)
        data = b""
        size: int | None = None
        while size is None or len(data) < size + 4:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionClosed("connection closed")
            data += chunk
            if size is None and len(data) >= 4:
                size = struct.unpack(">i", data[:4])[0]
    return data[4 : 4 + size]
