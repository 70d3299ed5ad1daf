"""Regular expressions of KIP-848 subscriptions (``SubscribedTopicRegex``) as Kafka 4.3.1
reads them: with RE2J (``com.google.re2j.Pattern``, the RE2 syntax, not
``java.util.regex``), a topic matching when the whole name matches
(``Matcher.matches``). kafkacore compiles them with Google's RE2, which RE2J ports; where
the two differ, RE2J's answer is given (an escape RE2J refuses, RE2J's description of each
syntax error, as Kafka puts it in INVALID_REGULAR_EXPRESSION's message). The differences
are found by a differential test against RE2J itself (tests/interop/test_topic_regex_vs_re2j.py).

Pure functions; compiled patterns are cached (bounded). Thread-safe."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

import re2  # type: ignore[import-untyped]

__all__ = ["InvalidTopicRegex", "compile_topic_regex", "matching_topics"]


class InvalidTopicRegex(ValueError):
    """The regex does not compile; ``description`` is RE2J's
    (``PatternSyntaxException.getDescription``)."""

    def __init__(self, regex: str, description: str) -> None:
        super().__init__(description)
        self.regex = regex
        self.description = description


# RE2's error text (its ``RE2::ErrorCode`` strings) -> RE2J's ``ErrorCode`` descriptions
_DESCRIPTIONS: tuple[tuple[str, str], ...] = (
    ("missing ]", "missing closing ]"),
    ("missing )", "missing closing )"),
    # RE2J 1.8 answers an unopened ")" from its parse stack, not with its own error
    ("unexpected )", "regexp/syntax: internal error"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid UTF-8", "invalid UTF-8"),
    ("invalid named capture group", "invalid named capture"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("duplicate capture group name", "duplicate capture group name"),
)
# what RE2 accepts and RE2J refuses: the escape \C (any byte), a capture name used twice,
# and a repetition operator right after a "{" that is a literal (RE2J 1.8 takes it for a
# repetition, "invalid nested repetition operator"; RE2 and Go read the literal)
_UNSUPPORTED_ESCAPE = re.compile(r"\\C")
_CAPTURE_NAME = re.compile(r"\(\?P?<([^>]*)>")
_REPEAT = re.compile(r"\{\d+(?:,\d*)?\}")


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # an invalid regex is an answer, not a log line
    return options


@functools.lru_cache(maxsize=1024)
def compile_topic_regex(regex: str) -> Any:
    """The compiled pattern of ``regex``; raises :class:`InvalidTopicRegex` (RE2J's
    description) when RE2J would not compile it. RE2J stops at the first error it reads:
    of RE2's error and the ones only RE2J raises, the one earliest in ``regex``."""
    errors = _re2j_only_errors(regex)
    try:
        pattern = re2.compile(regex, _options())
    except re2.error as exc:
        text = _message(exc)
        fragment = text.partition(": ")[2]
        at = regex.find(fragment) if fragment else len(regex)
        if text.startswith(("missing )", "missing ]")):
            at = len(regex)  # an unclosed group or class is found at the end
        errors.append((at if at >= 0 else len(regex), _description(text)))
        pattern = None
    if errors:
        raise InvalidTopicRegex(regex, min(errors)[1])
    return pattern


def _re2j_only_errors(regex: str) -> list[tuple[int, str]]:
    """(position, description) of what RE2 accepts and RE2J refuses."""
    plain = _outside_classes(regex)
    errors = [(m.start(), "invalid escape sequence") for m in _UNSUPPORTED_ESCAPE.finditer(plain)]
    seen: set[str] = set()
    for m in _CAPTURE_NAME.finditer(plain):
        if m.group(1) in seen:
            errors.append((m.start(), "duplicate capture group name"))
        seen.add(m.group(1))
    for i, c in enumerate(plain):
        if c != "{" or _REPEAT.match(plain, i):
            continue  # not a brace, or a repetition
        if plain[i + 1 : i + 2] in ("*", "+", "?") or _REPEAT.match(plain, i + 1):
            errors.append((i, "invalid nested repetition operator"))
    return errors


def _outside_classes(regex: str) -> str:
    """``regex`` as RE2J's parser sees its operators: the inside of character classes
    and of ``\\Q...\\E`` quotes, and every escape but ``\\C``, blanked (same length)."""
    out = []
    in_class = False
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\" and regex[i + 1 : i + 2] == "Q" and not in_class:
            stop = regex.find("\\E", i + 2)
            stop = len(regex) if stop < 0 else stop + 2
            out.append(" " * (stop - i))
            i = stop
            continue
        if c == "\\" and i + 1 < len(regex):
            kept = not in_class and regex[i + 1] == "C"
            out.append("\\C" if kept else "  ")
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            if regex[i + 1 : i + 2] == "^":  # "]" first in a class is a member
                out.append(" ")
                i += 1
            if regex[i + 1 : i + 2] == "]":
                out.append(" ")
                i += 1
        elif c == "]" and in_class:
            in_class = False
            out.append(c)
        else:
            out.append(" " if in_class else c)
        i += 1
    return "".join(out)


def _message(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else str(exc)
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def _description(text: str) -> str:
    if text.startswith("invalid perl operator: (?<"):
        return "invalid named capture"  # RE2J reads "(?<" as a capture name, always
    for prefix, description in _DESCRIPTIONS:
        if text.startswith(prefix):
            return description
    return "regexp/syntax: internal error"


def matching_topics(regex: str, names: Iterable[str]) -> frozenset[str]:
    """The ``names`` ``regex`` matches whole (none for an invalid regex)."""
    try:
        pattern = compile_topic_regex(regex)
    except InvalidTopicRegex:
        return frozenset()
    return frozenset(n for n in names if pattern.fullmatch(n) is not None)
