"""``sasl.jaas.config`` values (Kafka's ``JaasConfig`` grammar), parsed without loading anything.

A value is a list of login module entries, each ``<class name> <flag> [key=value ...];`` where
the flag is ``required``, ``requisite``, ``sufficient`` or ``optional`` (any case) and a value is
a bare word or a double-quoted string (``\\`` escapes the next character). ``//`` and ``/* */``
comments are skipped, as Java's ``StreamTokenizer`` does for Kafka.

kafkacore never instantiates a login module, loads a class or opens a URL named in a JAAS
config (the class of CVE-2023-25194, where ``JndiLoginModule`` options made a broker fetch
remote objects): a class name is only compared with the login modules kafkacore implements
(:data:`KNOWN_LOGIN_MODULES`); any other name is refused with a
:class:`~kafkacore.config.defs.ConfigError` naming the key, the hidden value and the constraint.

Pure functions; immutable results: thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from kafkacore.config.defs import ConfigError, Password

__all__ = [
    "KNOWN_LOGIN_MODULES",
    "PLAIN_LOGIN_MODULE",
    "SCRAM_LOGIN_MODULE",
    "JaasEntry",
    "parse_jaas_config",
]

PLAIN_LOGIN_MODULE: Final = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE: Final = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTHBEARER_LOGIN_MODULE: Final = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)
KNOWN_LOGIN_MODULES: Final = frozenset(
    {PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE, OAUTHBEARER_LOGIN_MODULE}
)
"""The login modules a JAAS config may name: Kafka's own, whose options are plain data."""

_FLAGS: Final = ("required", "requisite", "sufficient", "optional")

# Words as Kafka's StreamTokenizer sees them (letters, digits and . - _ $ and more), quoted
# strings, the two punctuation marks, comments.
_TOKEN: Final = re.compile(
    r"""\s+
    | //[^\n]*
    | /\*.*?\*/
    | (?P<quoted>"(?:[^"\\]|\\.)*")
    | (?P<word>[^\s=;"]+)
    | (?P<punct>[=;])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class JaasEntry:
    """One login module entry: its class name, control flag (lower case) and options."""

    login_module: str
    flag: str
    options: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:  # options hold passwords: never printed
        return f"JaasEntry({self.login_module!r}, {self.flag!r}, options=[hidden])"


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"unexpected character {text[pos]!r} at offset {pos}")
        pos = m.end()
        if m.group("quoted") is not None:
            out.append(("str", re.sub(r"\\(.)", r"\1", m.group("quoted")[1:-1], flags=re.DOTALL)))
        elif m.group("word") is not None:
            out.append(("word", m.group("word")))
        elif m.group("punct") is not None:
            out.append((m.group("punct"), m.group("punct")))
    return out


def _parse(text: str) -> list[JaasEntry]:
    tokens = _tokens(text)
    entries: list[JaasEntry] = []
    i = 0
    while i < len(tokens):
        kind, module = tokens[i]
        if kind != "word":
            raise ValueError(f"expected a login module class name, found {module!r}")
        i += 1
        if i >= len(tokens) or tokens[i][0] != "word":
            raise ValueError("Login module control flag not specified in JAAS config")
        flag = tokens[i][1].lower()
        if flag not in _FLAGS:
            raise ValueError(f"Invalid login module control flag '{tokens[i][1]}' in JAAS config")
        i += 1
        options: dict[str, str] = {}
        while True:
            if i >= len(tokens):
                raise ValueError("JAAS config entry not terminated by semi-colon")
            kind, value = tokens[i]
            if kind == ";":
                i += 1
                break
            if kind != "word":
                raise ValueError(f"Unexpected token in JAAS config: {value!r}")
            if i + 1 >= len(tokens) or tokens[i + 1][0] != "=":
                raise ValueError(f"Value not specified for key '{value}' in JAAS config")
            if i + 2 >= len(tokens) or tokens[i + 2][0] not in ("word", "str"):
                raise ValueError(f"Value not specified for key '{value}' in JAAS config")
            options[value] = tokens[i + 2][1]
            i += 3
        entries.append(JaasEntry(module, flag, options))
    return entries


def parse_jaas_config(
    value: object, key: str = "sasl.jaas.config", *, expected_module: str | None = None
) -> JaasEntry:
    """The single login module entry of a ``sasl.jaas.config`` value (Kafka allows exactly one
    per mechanism). ``expected_module``: the mechanism's login module, when it must be that one.
    Raises :class:`ConfigError` (the value is shown hidden) for bad syntax, a count other than
    one, or a login module kafkacore does not know."""
    text = value.value if isinstance(value, Password) else str(value)
    hidden = Password(text)
    try:
        entries = _parse(text)
    except ValueError as exc:
        raise ConfigError(key, hidden, str(exc)) from None
    if len(entries) != 1:
        raise ConfigError(
            key,
            hidden,
            f"JAAS config property contains {len(entries)} login modules, should be 1 module",
        )
    entry = entries[0]
    if entry.login_module not in KNOWN_LOGIN_MODULES:
        raise ConfigError(
            key,
            hidden,
            f"login module {entry.login_module} is not supported (kafkacore loads no classes; "
            f"known: {', '.join(sorted(KNOWN_LOGIN_MODULES))})",
        )
    if expected_module is not None and entry.login_module != expected_module:
        raise ConfigError(
            key,
            hidden,
            f"login module {entry.login_module} does not serve this mechanism "
            f"(expected {expected_module})",
        )
    return entry
