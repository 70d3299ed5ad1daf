"""KIP-848 regex subscriptions (``SubscribedTopicRegex``) resolved as Kafka 4.3.1 resolves
them, against RE2J itself (``java/TopicRegex.java`` over the re2j jar Kafka ships, one JVM
for the module): for hypothesis-drawn regexes - RE2 syntax pieces, Perl syntax RE2 refuses,
and broken ones - and topic names, the same topics matched whole, or the same syntax error
description (what INVALID_REGULAR_EXPRESSION's message carries)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from interop.conftest import Java
from kafkacore.coordinator.topic_regex import InvalidTopicRegex, compile_topic_regex
from support.kafka_jars import JVM_FLAGS

pytestmark = pytest.mark.interop


class Re2j:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc

    def ask(self, regex: str, names: list[str]) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        hexed = ",".join(n.encode().hex() for n in names)
        self.proc.stdin.write(f"{regex.encode().hex()} {hexed}\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().rstrip("\n")
        assert answer, f"TopicRegex exited {self.proc.poll()}"
        return answer


@pytest.fixture(scope="module")
def re2j(java: Java) -> Iterator[Re2j]:
    proc = subprocess.Popen(
        ["java", *JVM_FLAGS, "-cp", java.classpath, "TopicRegex"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        yield Re2j(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def ours(regex: str, names: list[str]) -> str:
    try:
        pattern = compile_topic_regex(regex)
    except InvalidTopicRegex as exc:
        return f"ERR {exc.description}"
    return "OK " + ",".join(str(i) for i, n in enumerate(names) if pattern.fullmatch(n))


_ATOMS = st.sampled_from(
    [
        "a", "b", "t", "x", ".", "-", "_", "1", "\\.", "\\d", "\\w", "\\s", "\\D", "\\W",
        "[abc]", "[^a]", "[a-c]", "[[:alpha:]]", "[[:digit:]]", "\\pL", "\\p{Greek}",
        "\\PL", "(?i)", "(?s)", "(?U)", "\\b", "\\B", "^", "$", "\\A", "\\z", "\\Q.*\\E",
        "\\x41", "\\x{42}", "\\101", "\\n", "\\t",
    ]
)  # fmt: skip
_BROKEN = st.sampled_from(
    [
        "(", ")", "[", "]", "{", "}", "*", "+", "?", "\\", "\\q", "\\Z", "\\C", "(?=a)",
        "(?!a)", "(?<=a)", "a**", "a++", "x{2,1}", "x{1001}", "[z-a]", "[[:foo:]]",
        "(?P<n>a)(?P<n>b)", "(?P<>a)", "\\pX", "\\x{110000}", "(?<n>a)", "{,3}", "a{,3}",
        "|", "(?:", "(?i", "\\8", "[\\C]",
    ]
)  # fmt: skip


@st.composite
def regexes(draw: st.DrawFn) -> str:
    def piece() -> str:
        atom = draw(st.one_of(_ATOMS, _BROKEN) if draw(st.integers(0, 5)) == 0 else _ATOMS)
        kind = draw(st.integers(0, 6))
        if kind == 1:
            atom = f"({atom})"
        elif kind == 2:
            atom = f"(?:{atom}|{draw(_ATOMS)})"
        quantifier = draw(st.sampled_from(["", "", "", "*", "+", "?", "{2}", "{1,3}", "*?"]))
        return atom + quantifier

    return "".join(piece() for _ in range(draw(st.integers(1, 5))))


names = st.lists(st.text("abctx1._-AB\nΣ", min_size=1, max_size=6), max_size=8)  # no "" topic


@given(regexes(), names)
@example("a)", [])
@example("\\C", ["a"])
@example("[\\C]", ["C"])
@example("hb.*", ["hb", "hb-other", "other-hb", "HB"])
# differences found by this test, each answered as RE2J does
@example("(?P<n>a)(?P<n>b)", [])  # RE2 accepts a capture name used twice
@example("{*", ["{"])  # RE2J: a repetition after a literal "{" is nested
@example("(?<=a)", [])  # RE2J: "(?<" starts a capture name
@example("(\\C", [])  # RE2J stops at \C before it finds the group unclosed
def test_same_topics_or_same_error_as_re2j(re2j: Re2j, regex: str, topics: list[str]) -> None:
    assert ours(regex, topics) == re2j.ask(regex, topics)
