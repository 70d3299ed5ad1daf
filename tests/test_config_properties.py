"""Java ``.properties`` parsing (``java.util.Properties.load`` semantics; the interop test
checks these cases, and more, against Java itself)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kafkacore.config import ConfigError, load_properties, parse_properties


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=b\n", {"a": "b"}),
        ("a:b\n", {"a": "b"}),
        ("a b\n", {"a": "b"}),
        ("a\tb", {"a": "b"}),
        ("  a = b  \n", {"a": "b  "}),  # leading blanks go, trailing ones stay
        ("a = = b\n", {"a": "= b"}),  # only one separator is skipped
        ("a  :  b\n", {"a": "b"}),
        ("key\n", {"key": ""}),
        ("=value\n", {"": "value"}),
        ("a=\n", {"a": ""}),
        ("# comment\n! comment\n   # indented comment\n\n\t\n", {}),
        ("a=x # not a comment\n", {"a": "x # not a comment"}),
        ("a=1\na=2\n", {"a": "2"}),
    ],
)
def test_key_value_forms(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


def test_line_continuation_drops_the_backslash_and_leading_blanks() -> None:
    assert parse_properties("a=one\\\n    two\\\n\tthree\n") == {"a": "onetwothree"}
    # An even number of backslashes is an escaped backslash, not a continuation.
    assert parse_properties("a=x\\\\\nb=y\n") == {"a": "x\\", "b": "y"}
    # CRLF and CR line ends.
    assert parse_properties("a=1\\\r\n  2\r\nb=3\rc=4") == {"a": "12", "b": "3", "c": "4"}
    # A comment line does not continue, even when it ends in a backslash.
    assert parse_properties("#a\\\nb=c\n") == {"b": "c"}
    # A backslash at the very end of the input is dropped.
    assert parse_properties("a=b\\") == {"a": "b"}
    # A continued line followed by an empty line just ends.
    assert parse_properties("a=b\\\n\nc=d") == {"a": "b", "c": "d"}


def test_escapes() -> None:
    assert parse_properties("t=a\\tb\\nc\\rd\\fe\\qz\\\\\n") == {"t": "a\tb\nc\rd\feqz\\"}
    assert parse_properties("k\\ e\\=y\\:=v\n") == {"k e=y:": "v"}
    assert parse_properties("u=\\u0041\\u00e9\\u4E2D\n") == {"u": "Aé中"}
    # UTF-16 surrogate pairs combine into one character.
    assert parse_properties("e=\\uD83D\\uDE00\n") == {"e": "\U0001f600"}


@pytest.mark.parametrize("text", ["a=\\u12", "a=\\u12zz", "a=\\uXYZW"])
def test_malformed_unicode_escape(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^Malformed \\uxxxx encoding\.$"):
        parse_properties(text)


def test_files_are_read_as_iso_8859_1_like_kafka(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_bytes(b"# Kafka broker\nlog.dirs=/data/\xe9t\xe9\nnode.id = 1\n")
    expected = {"log.dirs": "/data/\u00e9t\u00e9", "node.id": "1"}
    assert load_properties(path) == expected
    assert load_properties(str(path)) == expected
    assert load_properties(path.read_bytes()) == expected
    assert load_properties(io.BytesIO(path.read_bytes())) == expected
    assert load_properties(io.StringIO("a=\u00e9")) == {"a": "\u00e9"}
    utf8 = tmp_path / "utf8.properties"
    utf8.write_text("a=\u00e9\n", encoding="utf-8")
    assert load_properties(utf8) == {"a": "\u00c3\u00a9"}  # what Kafka sees
    assert load_properties(utf8, encoding="utf-8") == {"a": "\u00e9"}
