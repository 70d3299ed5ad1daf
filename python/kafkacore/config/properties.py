"""Java ``.properties`` files, read exactly as ``java.util.Properties.load`` reads them (which is
how Kafka reads ``server.properties``).

* A logical line may span several natural lines: a line ending in an odd number of
  backslashes continues on the next, whose leading whitespace is dropped.
* Lines whose first non-blank character is ``#`` or ``!`` are comments (a comment does not
  continue onto the next line); blank lines are skipped. Whitespace is space, tab, form feed.
* The key runs to the first unescaped ``=``, ``:`` or whitespace; then whitespace, at most one
  ``=``/``:``, and more whitespace are skipped; the rest of the line is the value (trailing
  whitespace kept).
* Escapes: ``\\t \\n \\r \\f``, ``\\uXXXX`` (a malformed one raises :class:`ConfigError`
  ``Malformed \\uxxxx encoding.``); a backslash before any other character yields that
  character.
* A key given twice keeps its last value.

Files are decoded as ISO-8859-1, as ``Properties.load(InputStream)`` does (Kafka's
``Utils.loadProps``); pass ``encoding=`` to read them otherwise.
"""

from __future__ import annotations

import os
from typing import BinaryIO, TextIO

from kafkacore.config.defs import ConfigError

__all__ = ["load_properties", "parse_properties"]

_BLANK = " \t\f"
_EOL = "\r\n"
_HEX = "0123456789abcdefABCDEF"


def _logical_lines(text: str) -> list[str]:
    """Java's ``LineReader.readLine``, run over the whole text."""
    lines: list[str] = []
    buf: list[str] = []
    n = len(text)
    i = 0
    skip_white = True
    appended_line_begin = False
    preceding_backslash = False
    while i < n:
        c = text[i]
        i += 1
        if skip_white:
            if c in _BLANK:
                continue
            if not appended_line_begin and c in _EOL:
                continue
            skip_white = False
            appended_line_begin = False
        if not buf and c in "#!":
            # A comment: skip to the end of the natural line.
            while i < n and text[i] not in _EOL:
                i += 1
            skip_white = True
            continue
        if c not in _EOL:
            buf.append(c)
            preceding_backslash = (not preceding_backslash) if c == "\\" else False
            continue
        if not buf:
            skip_white = True
            continue
        if preceding_backslash:
            # Line continuation: drop the backslash and the next line's leading whitespace.
            buf.pop()
            skip_white = True
            appended_line_begin = True
            preceding_backslash = False
            if c == "\r" and i < n and text[i] == "\n":
                i += 1
        else:
            lines.append("".join(buf))
            buf = []
    if buf:
        if preceding_backslash:
            buf.pop()
        lines.append("".join(buf))
    return lines


def _convert(s: str) -> str:
    """Java's ``loadConvert``: resolve escapes; ``\\uXXXX`` code units may pair up into one
    character (UTF-16 surrogates)."""
    if "\\" not in s:
        return s
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i == n:  # unreachable from _logical_lines, which drops a trailing lone backslash
            break
        c = s[i]
        i += 1
        if c == "u":
            digits = s[i : i + 4]
            if len(digits) < 4 or any(d not in _HEX for d in digits):
                raise ConfigError(None, message="Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(c, c))
    joined = "".join(out)
    return joined.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _split(line: str) -> tuple[str, str]:
    """Java's ``load0``: key, separator, value of one logical line."""
    limit = len(line)
    key_len = 0
    value_start = limit
    has_sep = False
    preceding_backslash = False
    while key_len < limit:
        c = line[key_len]
        if c in "=:" and not preceding_backslash:
            value_start = key_len + 1
            has_sep = True
            break
        if c in _BLANK and not preceding_backslash:
            value_start = key_len + 1
            break
        preceding_backslash = (not preceding_backslash) if c == "\\" else False
        key_len += 1
    while value_start < limit:
        c = line[value_start]
        if c not in _BLANK:
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return _convert(line[:key_len]), _convert(line[value_start:])


def parse_properties(text: str) -> dict[str, str]:
    """Parse ``.properties`` text into an ordered ``{key: value}`` (first-seen key order,
    last value wins)."""
    result: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        result[key] = value
    return result


def load_properties(
    source: str | os.PathLike[str] | bytes | BinaryIO | TextIO,
    *,
    encoding: str = "iso-8859-1",
) -> dict[str, str]:
    """Read a ``.properties`` file: a path, raw bytes, or an open file (binary files are
    decoded with ``encoding``; text files are taken as they are)."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            data: str | bytes = f.read()
    elif isinstance(source, bytes):
        data = source
    else:
        data = source.read()
    text = data.decode(encoding) if isinstance(data, bytes) else data
    return parse_properties(text)
