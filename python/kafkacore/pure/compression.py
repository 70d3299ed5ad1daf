"""Compression codecs of Kafka's record formats, written as Kafka's Java producer writes
them and read as its Java consumer reads them.

Codec ids (attribute bits 0-2): 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.

gzip
    One gzip member (RFC 1952), deflate level 6 (``Deflater.DEFAULT_COMPRESSION``).
    Reading (``java.util.zip.GZIPInputStream``): concatenated members are decoded; after
    a complete member, trailing bytes that do not start a new member (``1f 8b 08``) are
    ignored, as Java ignores them.
snappy
    xerial framing (``org.xerial.snappy.SnappyOutputStream``)::

        0  magic   82 53 4E 41 50 50 59 00   ("\\x82SNAPPY\\0")
        8  version i32 BE = 1
        12 compat  i32 BE = 1
        16 chunks  [i32 BE length][raw snappy block], one per 32 KiB of input

    Reading accepts this framing (also several concatenated framed streams) and, when the
    magic is absent, one raw snappy block (librdkafka and older clients write raw).
lz4
    The LZ4 frame format as Kafka's ``Lz4BlockOutputStream`` writes it: FLG 0x60
    (version 1, independent blocks, no block checksum, no content size, no content
    checksum), BD 0x40 (64 KiB blocks), header checksum, blocks, end mark. Reading
    decodes the first frame and ignores what follows, as ``Lz4BlockInputStream`` does.
    Legacy magic 0 messages were written with a wrong header checksum (computed over the
    magic number too); Kafka ignores that byte for magic 0, so :func:`decompress_legacy`
    recomputes it before decoding.
zstd
    One frame, level 3, streaming (no content size, like ``ZstdOutputStream``). Reading
    is streaming (frames may lack the content size) and decodes concatenated frames; a
    truncated frame or trailing bytes that are not a frame are corrupt.

Decoding refuses to inflate past :data:`MAX_DECOMPRESSED_SIZE` (1 GiB, a guard against
bombs, as the native backend): gzip, lz4 and zstd stop decoding once the output passes it;
a raw snappy block whose declared length exceeds it, or exceeds what its bytes can
produce (22 bytes per byte), is refused before anything is allocated. An LZ4 match of
offset 0 (invalid in the block format) is corrupt, as the native decoder has it.

Thread-safe: compressor objects are per thread.
"""

from __future__ import annotations

import struct
import threading
import zlib
from typing import Any

import cramjam
import lz4.frame
import zstandard

from kafkacore.errors import UnsupportedCompressionError
from kafkacore.pure._util import BUFFER_CONTEXT, corrupt, fit

__all__ = [
    "CODEC_NAMES",
    "GZIP",
    "LZ4",
    "MAX_DECOMPRESSED_SIZE",
    "NONE",
    "SNAPPY",
    "ZSTD",
    "compress",
    "decompress",
    "decompress_legacy",
    "fix_lz4_header_checksum",
    "xxh32",
]

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

GZIP_LEVEL = 6
GZIP_WBITS = 31  # zlib: 16 + 15 -> gzip wrapper, 32 KiB window
GZIP_MEMBER_MAGIC = b"\x1f\x8b\x08"

# xerial snappy framing, byte offsets
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
SNAPPY_MAGIC_LENGTH = len(SNAPPY_MAGIC)  # 8
SNAPPY_VERSION_OFFSET = SNAPPY_MAGIC_LENGTH  # 8
SNAPPY_COMPAT_OFFSET = SNAPPY_VERSION_OFFSET + 4  # 12
SNAPPY_HEADER_LENGTH = SNAPPY_COMPAT_OFFSET + 4  # 16
SNAPPY_HEADER = SNAPPY_MAGIC + struct.pack(">ii", 1, 1)
SNAPPY_BLOCK_SIZE = 32 * 1024
_CHUNK_LENGTH = struct.Struct(">i")

ZSTD_LEVEL = 3

MAX_DECOMPRESSED_SIZE = 1 << 30
"""Decompressed data larger than this is corrupt (read at each call: tests lower it)."""
# Most bytes one byte of a raw snappy block can expand to (a 3-byte copy writes <= 64).
_SNAPPY_MAX_EXPANSION = 22
# zstd input is fed in pieces of this size, so that one piece cannot inflate far past
# the cap (a 4-byte RLE block writes 128 KiB: at most 32 MiB per piece).
_ZSTD_PIECE = 1024

# LZ4 frame header: magic (LE u32), FLG, BD, [content size u64], HC
LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
LZ4_FLG_OFFSET = 4
LZ4_FLG_CONTENT_SIZE = 0x08
LZ4_CONTENT_SIZE_LENGTH = 8
LZ4_FLG_DICT_ID = 0x01
LZ4_DICT_ID_LENGTH = 4

_local = threading.local()


def _zstd_compressor() -> Any:
    comp = getattr(_local, "zstd_compressor", None)
    if comp is None:
        comp = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=False)
        _local.zstd_compressor = comp
    return comp


def _zstd_decompressor() -> Any:
    dec = getattr(_local, "zstd_decompressor", None)
    if dec is None:
        dec = zstandard.ZstdDecompressor()
        _local.zstd_decompressor = dec
    return dec


def _unsupported(codec: int) -> UnsupportedCompressionError:
    return UnsupportedCompressionError(f"unsupported compression codec {codec}: expected 0-4")


# ------------------------------------------------------------------ compress


def _snappy_framed(data: bytes | memoryview) -> bytes:
    out = bytearray(SNAPPY_HEADER)
    view = memoryview(data)
    for start in range(0, len(view), SNAPPY_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + SNAPPY_BLOCK_SIZE]))
        out += _CHUNK_LENGTH.pack(len(block))
        out += block
    return bytes(out)


def compress(codec: int, data: bytes, /) -> bytes:
    """Compress as Kafka's Java producer does (see the module docstring).

    Codec 0 returns the input. Unknown codec -> ``UnsupportedCompressionError``.
    """
    fit("codec", codec)
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        comp = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP_WBITS)
        return comp.compress(data) + comp.flush()
    if codec == SNAPPY:
        return _snappy_framed(data)
    if codec == LZ4:
        return bytes(
            lz4.frame.compress(
                data,
                block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                block_linked=False,
                content_checksum=False,
                block_checksum=False,
                store_size=False,
            )
        )
    if codec == ZSTD:
        return bytes(_zstd_compressor().compress(data))
    raise _unsupported(codec)


# ------------------------------------------------------------------ decompress


class _Undecodable(Exception):
    """Internal: the codec's bytes are not decodable; becomes ``CorruptRecordError``."""


def _gunzip(data: bytes) -> bytes:
    parts = []
    rest = data
    room = MAX_DECOMPRESSED_SIZE
    while True:
        dec = zlib.decompressobj(GZIP_WBITS)
        try:
            part = dec.decompress(rest, room + 1)
        except zlib.error as exc:
            raise _Undecodable(str(exc)) from None
        if len(part) > room:
            raise _Undecodable("decompressed size exceeds 1 GiB")
        room -= len(part)
        parts.append(part)
        if not dec.eof:
            raise _Undecodable("truncated gzip member")
        rest = dec.unused_data
        # Java's GZIPInputStream reads a following member, ignores anything else.
        if not rest.startswith(GZIP_MEMBER_MAGIC):
            return b"".join(parts)


def _snappy_declared_length(block: bytes | memoryview) -> int:
    """The uvarint length at the start of a raw snappy block (at most 32 bits)."""
    value = 0
    for i in range(min(len(block), 5)):
        b = block[i]
        value |= (b & 0x7F) << (7 * i)
        if b < 0x80:
            if value > 0xFFFFFFFF:
                break
            return value
    raise _Undecodable("invalid snappy length header")


def _snappy_raw(block: bytes | memoryview) -> bytes:
    declared = _snappy_declared_length(block)
    if declared > MAX_DECOMPRESSED_SIZE:
        raise _Undecodable("decompressed size exceeds 1 GiB")
    if declared > len(block) * _SNAPPY_MAX_EXPANSION:
        raise _Undecodable(f"block of {len(block)} bytes declares {declared} decompressed bytes")
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except Exception as exc:  # cramjam.DecompressionError
        raise _Undecodable(str(exc)) from None


def _unsnappy(data: bytes) -> bytes:
    if not data.startswith(SNAPPY_MAGIC):
        return _snappy_raw(data)
    view = memoryview(data)
    n = len(view)
    parts = []
    pos = 0
    total = 0
    while pos < n:
        if data.startswith(SNAPPY_MAGIC, pos):  # a (further) stream header
            if n - pos < SNAPPY_HEADER_LENGTH:
                raise _Undecodable("truncated xerial snappy header")
            pos += SNAPPY_HEADER_LENGTH
            continue
        if n - pos < _CHUNK_LENGTH.size:
            raise _Undecodable("truncated xerial snappy chunk length")
        (length,) = _CHUNK_LENGTH.unpack_from(data, pos)
        pos += _CHUNK_LENGTH.size
        if length < 0 or length > n - pos:
            raise _Undecodable(f"xerial snappy chunk of {length} bytes runs past the end")
        part = _snappy_raw(view[pos : pos + length])
        total += len(part)
        if total > MAX_DECOMPRESSED_SIZE:
            raise _Undecodable("decompressed size exceeds 1 GiB")
        parts.append(part)
        pos += length
    return b"".join(parts)


def _unlz4(data: bytes) -> bytes:
    dec = lz4.frame.LZ4FrameDecompressor()
    try:
        out = dec.decompress(data, max_length=MAX_DECOMPRESSED_SIZE + 1)
    except Exception as exc:  # RuntimeError from liblz4
        raise _Undecodable(str(exc)) from None
    if len(out) > MAX_DECOMPRESSED_SIZE:
        raise _Undecodable("decompressed size exceeds 1 GiB")
    if not dec.eof:
        raise _Undecodable("frame incomplete")
    if _lz4_has_zero_offset(data):
        raise _Undecodable("match offset zero")
    return bytes(out)


def _lz4_has_zero_offset(frame: bytes) -> bool:
    """Whether a compressed block of the (decoded) first frame holds a match of offset
    0, which the LZ4 block format declares invalid: liblz4 copies the output onto itself
    there, the native backend (lz4_flex) refuses the block, and so do we."""
    flags = frame[LZ4_FLG_OFFSET]
    pos = LZ4_FLG_OFFSET + 3  # FLG, BD, header checksum
    if flags & LZ4_FLG_CONTENT_SIZE:
        pos += LZ4_CONTENT_SIZE_LENGTH
    if flags & LZ4_FLG_DICT_ID:
        pos += LZ4_DICT_ID_LENGTH
    try:
        while True:
            (size,) = struct.unpack_from("<I", frame, pos)
            pos += 4
            if size == 0:
                return False
            end = pos + (size & 0x7FFFFFFF)
            if not size & 0x80000000 and _lz4_block_has_zero_offset(frame, pos, end):
                return True
            pos = end + (4 if flags & 0x10 else 0)  # block checksum
    except (struct.error, IndexError):
        return False


def _lz4_block_has_zero_offset(block: bytes, pos: int, end: int) -> bool:
    while pos < end:
        token = block[pos]
        pos += 1
        literals = token >> 4
        if literals == 15:
            while True:
                b = block[pos]
                pos += 1
                literals += b
                if b != 255:
                    break
        pos += literals
        if pos >= end:  # the last sequence has literals only
            return False
        if block[pos] == 0 and block[pos + 1] == 0:
            return True
        pos += 2
        if token & 15 == 15:
            while block[pos] == 255:
                pos += 1
            pos += 1
    return False


def _unzstd(data: bytes) -> bytes:
    parts = []
    rest = data
    dec = _zstd_decompressor()
    total = 0
    while True:
        obj = dec.decompressobj()
        fed = 0
        while not obj.eof and fed < len(rest):
            try:
                part = obj.decompress(rest[fed : fed + _ZSTD_PIECE])
            except Exception as exc:  # zstandard.ZstdError
                raise _Undecodable(str(exc)) from None
            fed += _ZSTD_PIECE
            total += len(part)
            if total > MAX_DECOMPRESSED_SIZE:
                raise _Undecodable("decompressed size exceeds 1 GiB")
            parts.append(part)
        if not obj.eof:
            raise _Undecodable("truncated zstd frame")
        rest = obj.unused_data + rest[fed:]
        if not rest:
            return b"".join(parts)


_DECODERS = {GZIP: _gunzip, SNAPPY: _unsnappy, LZ4: _unlz4, ZSTD: _unzstd}


def decompress_at(codec: int, data: bytes, context: str, position: int) -> bytes:
    """:func:`decompress` with the error naming ``context`` and ``position``."""
    fit("codec", codec)
    if codec == NONE:
        return bytes(data)
    decoder = _DECODERS.get(codec)
    if decoder is None:
        raise _unsupported(codec)
    try:
        return decoder(bytes(data))
    except _Undecodable as exc:
        raise corrupt(context, position, f"undecodable {CODEC_NAMES[codec]} data: {exc}") from None


def decompress(codec: int, data: bytes, /) -> bytes:
    """Inverse of :func:`compress`; snappy accepts raw blocks and xerial framing.

    Undecodable input -> ``CorruptRecordError``; unknown codec ->
    ``UnsupportedCompressionError``.
    """
    return decompress_at(codec, data, BUFFER_CONTEXT, 0)


# ------------------------------------------------------------------ legacy lz4


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 (the LZ4 frame's checksum), for the few bytes of a frame descriptor."""
    n = len(data)
    pos = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while pos <= n - 16:
            for i in range(4):
                lane = int.from_bytes(data[pos : pos + 4], "little")
                v[i] = (_rotl((v[i] + lane * _P2) & _M32, 13) * _P1) & _M32
                pos += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        h = (h + int.from_bytes(data[pos : pos + 4], "little") * _P3) & _M32
        h = (_rotl(h, 17) * _P4) & _M32
        pos += 4
    while pos < n:
        h = (h + data[pos] * _P5) & _M32
        h = (_rotl(h, 11) * _P1) & _M32
        pos += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


def fix_lz4_header_checksum(data: bytes) -> bytes:
    """The LZ4 frame with the header checksum a standard reader expects. Magic 0 frames
    carry the checksum of Kafka before 0.10 (computed over the frame magic too,
    KAFKA-3160), which Kafka ignores when it reads magic 0. Anything that is not an LZ4
    frame with a complete descriptor is returned unchanged. (The dump tool uses it too.)"""
    if not data.startswith(LZ4_FRAME_MAGIC) or len(data) < LZ4_FLG_OFFSET + 3:
        return data
    descriptor_end = LZ4_FLG_OFFSET + 2  # FLG, BD
    flags = data[LZ4_FLG_OFFSET]
    if flags & LZ4_FLG_CONTENT_SIZE:
        descriptor_end += LZ4_CONTENT_SIZE_LENGTH
    if flags & LZ4_FLG_DICT_ID:
        descriptor_end += LZ4_DICT_ID_LENGTH
    if len(data) <= descriptor_end:
        return data
    checksum = (xxh32(data[LZ4_FLG_OFFSET:descriptor_end]) >> 8) & 0xFF
    return data[:descriptor_end] + bytes((checksum,)) + data[descriptor_end + 1 :]


def decompress_legacy(codec: int, data: bytes, magic: int, context: str, position: int) -> bytes:
    """Decompress the value of a legacy (magic 0/1) wrapper message."""
    if codec == LZ4 and magic == 0:
        data = fix_lz4_header_checksum(bytes(data))
    return decompress_at(codec, data, context, position)
