"""A declarative configuration model with Apache Kafka's semantics (Kafka's ``ConfigDef``).

A :class:`ConfigDef` holds :class:`ConfigKey` definitions: name, :class:`Type`, default (or
:data:`NO_DEFAULT`), validator, importance and documentation. :meth:`ConfigDef.parse` turns
user-supplied values (``.properties`` strings, or already-typed Python values) into typed values
exactly as Kafka does, and every failure raises :class:`ConfigError` carrying Kafka's message,
``Invalid value <value> for configuration <name>: <reason>``, with the value printed as Java
prints it (``true``, ``1.0E10``, ``[a, b]``, ``null``).

Parsing rules (Kafka's ``ConfigDef.parseType``): strings are trimmed as Java's ``String.trim``
does; booleans are ``true``/``false`` in any case; INT/SHORT/LONG are decimal integers with an
optional sign that must fit 32/16/64 bits; DOUBLE follows ``Double.parseDouble``; LIST splits on
commas with the whitespace around them removed (an empty string is an empty list); PASSWORD
values are wrapped in :class:`Password`, which prints as ``[hidden]``; CLASS values stay class
names (there is no JVM to load them).

Everything here is immutable after construction and safe to share between threads.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final, Protocol, runtime_checkable

from kafkacore._java import java_hash_set_order, java_string_hash
from kafkacore.errors import KafkaCoreError

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "NO_DEFAULT",
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "ConfigDef",
    "ConfigError",
    "ConfigKey",
    "Importance",
    "LambdaValidator",
    "ListSize",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "Password",
    "Range",
    "Type",
    "ValidList",
    "ValidString",
    "Validator",
    "convert_to_string",
    "java_str",
    "java_trim",
    "parse_type",
]

INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
INT16_MIN: Final = -(2**15)
INT16_MAX: Final = 2**15 - 1
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1


class ConfigError(KafkaCoreError, ValueError):
    """An invalid configuration (Kafka's ``ConfigException`` / ``InvalidConfigurationException``;
    both answer requests with the INVALID_CONFIG error code).

    ``name``, ``value`` and ``constraint`` say which key, which value and which rule; the
    message is Kafka's: ``Invalid value <value> for configuration <name>[: <constraint>]``,
    unless a whole-message form (``message=``) is Kafka's wording for that failure (unknown
    topic config names, cross-config requirements, listener errors)."""

    error_code = 40  # INVALID_CONFIG

    def __init__(
        self,
        name: str | None,
        value: object = None,
        constraint: str | None = None,
        *,
        message: str | None = None,
    ) -> None:
        self.name = name
        self.value = value
        self.constraint = constraint
        if message is None:
            message = f"Invalid value {java_str(value)} for configuration {name}"
            if constraint is not None:
                message += f": {constraint}"
        self.message = message
        super().__init__(message)


class _NoDefault:
    """The sentinel type of :data:`NO_DEFAULT` (Kafka's ``ConfigDef.NO_DEFAULT_VALUE``)."""

    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault()
"""Marks a key that must be supplied: parsing without it raises ``Missing required
configuration "<name>" which has no default value.``"""


class Type(enum.Enum):
    """Kafka's ``ConfigDef.Type``; the value is the DescribeConfigs wire ``ConfigType`` id."""

    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9

    @property
    def is_sensitive(self) -> bool:
        return self is Type.PASSWORD


class Importance(enum.Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Password:
    """A secret value: ``str()`` and ``repr()`` print ``[hidden]``; ``.value`` is the secret."""

    HIDDEN: Final = "[hidden]"
    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __str__(self) -> str:
        return self.HIDDEN

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


# ---------------------------------------------------------------------------------------------
# Java's way of printing and reading values


def java_double_str(x: float) -> str:
    """``Double.toString``: shortest round-trip digits, ``1.0E10`` outside [1e-3, 1e7)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    magnitude = abs(x)
    _, digit_tuple, exponent = Decimal(repr(magnitude)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    # Decimal exponent of the first significant digit.
    point = len(digit_tuple) + exponent - 1
    if 1e-3 <= magnitude < 1e7:
        if point >= 0:
            whole = (digits + "0" * (point + 1))[: point + 1]
            frac = digits[point + 1 :] or "0"
        else:
            whole = "0"
            frac = "0" * (-point - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point}"


def java_str(value: object) -> str:
    """``String.valueOf(value)`` as Java would print the equivalent object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "[" + ", ".join(java_str(v) for v in sorted(value, key=java_str)) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{java_str(k)}={java_str(v)}" for k, v in value.items()) + "}"
    return str(value)


_JAVA_WHITESPACE = "".join(chr(c) for c in range(0x21))


def java_trim(s: str) -> str:
    """``String.trim``: strip every char <= U+0020 (not Unicode spaces) from both ends."""
    return s.strip(_JAVA_WHITESPACE)


def _java_class_name(value: object) -> str:
    if isinstance(value, bool):
        return "java.lang.Boolean"
    if isinstance(value, int):
        if INT32_MIN <= value <= INT32_MAX:
            return "java.lang.Integer"
        if INT64_MIN <= value <= INT64_MAX:
            return "java.lang.Long"
        return "java.math.BigInteger"
    if isinstance(value, float):
        return "java.lang.Double"
    if isinstance(value, str):
        return "java.lang.String"
    if isinstance(value, (list, tuple)):
        return "java.util.ArrayList"
    return type(value).__qualname__


_INT_RE = re.compile(r"[+-]?\d+")
_DOUBLE_RE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?)"
)
_HEX_DOUBLE_RE = re.compile(
    r"([+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?"
)


def _parse_java_int(s: str, lo: int, hi: int) -> int | None:
    if not _INT_RE.fullmatch(s):
        return None
    n = int(s)
    return n if lo <= n <= hi else None


def _parse_java_double(s: str) -> float | None:
    if _DOUBLE_RE.fullmatch(s):
        body = s[:-1] if s[-1] in "fFdD" else s
        if body.endswith("NaN"):
            return math.nan
        if body.endswith("Infinity"):
            return -math.inf if body.startswith("-") else math.inf
        return float(body)
    m = _HEX_DOUBLE_RE.fullmatch(s)
    if m:
        return float.fromhex(m.group(1))
    return None


_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")


def parse_type(name: str, value: object, type_: Type) -> Any:
    """Kafka's ``ConfigDef.parseType``: a supplied value (string or typed) to its typed form."""
    if value is None:
        return None
    trimmed = java_trim(value) if isinstance(value, str) else None
    not_a_number = f"Not a number of type {type_.name}"
    if type_ is Type.BOOLEAN:
        if trimmed is not None:
            if trimmed.lower() == "true":
                return True
            if trimmed.lower() == "false":
                return False
        elif isinstance(value, bool):
            return value
        raise ConfigError(name, value, "Expected value to be either true or false")
    if type_ is Type.PASSWORD:
        if isinstance(value, Password):
            return value
        if trimmed is not None:
            return Password(trimmed)
        raise ConfigError(
            name,
            value,
            f"Expected value to be a string, but it was a {_java_class_name(value)}",
        )
    if type_ is Type.STRING:
        if trimmed is not None:
            return trimmed
        raise ConfigError(
            name,
            value,
            f"Expected value to be a string, but it was a {_java_class_name(value)}",
        )
    if type_ in (Type.INT, Type.SHORT, Type.LONG):
        lo, hi, what = {
            Type.INT: (INT32_MIN, INT32_MAX, "a 32-bit integer"),
            Type.SHORT: (INT16_MIN, INT16_MAX, "a 16-bit integer (short)"),
            Type.LONG: (INT64_MIN, INT64_MAX, "a 64-bit integer (long)"),
        }[type_]
        if trimmed is not None:
            n = _parse_java_int(trimmed, lo, hi)
            if n is None:
                raise ConfigError(name, value, not_a_number)
            return n
        # Python has one int type: accept any int that fits (Kafka would want the exact boxed
        # type, Integer for INT, Short for SHORT, Integer or Long for LONG).
        if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi:
            return value
        raise ConfigError(
            name,
            value,
            f"Expected value to be {what}, but it was a {_java_class_name(value)}",
        )
    if type_ is Type.DOUBLE:
        if trimmed is not None:
            d = _parse_java_double(trimmed)
            if d is None:
                raise ConfigError(name, value, not_a_number)
            return d
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(
            name,
            value,
            f"Expected value to be a double, but it was a {_java_class_name(value)}",
        )
    if type_ is Type.LIST:
        if isinstance(value, (list, tuple)):
            return list(value)
        if trimmed is not None:
            return [] if not trimmed else _COMMA_WITH_WHITESPACE.split(trimmed)
        raise ConfigError(name, value, "Expected a comma separated list.")
    if type_ is Type.CLASS:
        if trimmed is not None:
            return trimmed
        if isinstance(value, type):
            return f"{value.__module__}.{value.__qualname__}"
        raise ConfigError(name, value, "Expected a Class instance or class name.")
    raise AssertionError(f"unknown type {type_}")


def convert_to_string(value: object, type_: Type | None) -> str | None:
    """Kafka's ``ConfigDef.convertToString``: how DescribeConfigs prints a parsed value."""
    if value is None:
        return None
    if type_ is Type.LIST and isinstance(value, (list, tuple)):
        return ",".join(java_str(v) for v in value)
    return java_str(value)


def convert_to_string_with_password(value: object) -> str | None:
    """Kafka's ``convertToStringMapWithPasswordValues`` for one value: passwords in clear."""
    if isinstance(value, Password):
        return value.value
    if isinstance(value, (list, tuple)):
        return convert_to_string(value, Type.LIST)
    return convert_to_string(value, None)


# ---------------------------------------------------------------------------------------------
# Validators


@runtime_checkable
class Validator(Protocol):
    """Kafka's ``ConfigDef.Validator``; ``str(validator)`` is the "Valid Values" text."""

    def ensure_valid(self, name: str, value: Any) -> None: ...


def _fmt_number(n: float) -> str:
    return java_str(n)


class Range:
    """Numeric bounds: ``Value must be at least <min>`` / ``Value must be no more than <max>``.

    Bounds keep their Java type when printed (``0`` for an int bound, ``0.0`` for a double
    bound); comparison is done on doubles as Kafka does."""

    __slots__ = ("max", "min")

    def __init__(self, min: float | None, max: float | None) -> None:
        self.min = min
        self.max = max

    @classmethod
    def at_least(cls, min: float) -> Range:
        return cls(min, None)

    @classmethod
    def between(cls, min: float, max: float) -> Range:
        return cls(min, max)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, None, "Value must be non-null")
        n = float(value)
        if self.min is not None and n < float(self.min):
            raise ConfigError(name, value, f"Value must be at least {_fmt_number(self.min)}")
        if self.max is not None and n > float(self.max):
            raise ConfigError(name, value, f"Value must be no more than {_fmt_number(self.max)}")

    def __str__(self) -> str:
        lo = None if self.min is None else _fmt_number(self.min)
        hi = None if self.max is None else _fmt_number(self.max)
        if lo is None:
            return "[...]" if hi is None else f"[...,{hi}]"
        return f"[{lo},...]" if hi is None else f"[{lo},...,{hi}]"

    def __repr__(self) -> str:
        return f"Range{self}"


class ValidString:
    """One of a fixed, case-sensitive set: ``String must be one of: a, b``."""

    __slots__ = ("valid_strings",)

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings: tuple[str, ...] = tuple(valid_strings)

    @classmethod
    def in_(cls, *valid_strings: str) -> ValidString:
        return cls(valid_strings)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value not in self.valid_strings:
            raise ConfigError(
                name, value, "String must be one of: " + ", ".join(self.valid_strings)
            )

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid_strings) + "]"

    def __repr__(self) -> str:
        return f"ValidString{self}"


class ValidList:
    """A list validator (Kafka 4.x ``ValidList``): every element is a non-empty string from
    ``valid_strings`` (any string when that is empty), no element repeats, and the list may be
    empty / null only when allowed. :meth:`ConfigKey.parse` drops repeated elements before
    this check, as Kafka does (it logs a warning)."""

    __slots__ = ("is_empty_allowed", "is_null_allowed", "valid_string")

    def __init__(
        self,
        valid_strings: Iterable[str] = (),
        *,
        is_empty_allowed: bool = True,
        is_null_allowed: bool = False,
    ) -> None:
        self.valid_string = ValidString(valid_strings)
        self.is_empty_allowed = is_empty_allowed
        self.is_null_allowed = is_null_allowed

    @classmethod
    def in_(cls, *valid_strings: str, is_empty_allowed: bool = True) -> ValidList:
        return cls(valid_strings, is_empty_allowed=is_empty_allowed)

    @classmethod
    def any_non_duplicate_values(cls, is_empty_allowed: bool, is_null_allowed: bool) -> ValidList:
        return cls((), is_empty_allowed=is_empty_allowed, is_null_allowed=is_null_allowed)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            if self.is_null_allowed:
                return
            raise ConfigError(
                name,
                None,
                "values must not be null",
                message=f"Configuration '{name}' values must not be null.",
            )
        if not self.is_empty_allowed and len(value) == 0:
            allowed = str(self) or "any non-empty value"
            raise ConfigError(
                name,
                value,
                "must not be empty",
                message=f"Configuration '{name}' must not be empty. "
                f"Valid values include: {allowed}",
            )
        if len(set(map(java_str, value))) != len(value):
            raise ConfigError(
                name,
                value,
                "values must not be duplicated",
                message=f"Configuration '{name}' values must not be duplicated.",
            )
        for element in value:
            if isinstance(element, str):
                if element == "":
                    raise ConfigError(
                        name,
                        value,
                        "values must not be empty",
                        message=f"Configuration '{name}' values must not be empty.",
                    )
                if self.valid_string.valid_strings:
                    self.valid_string.ensure_valid(name, element)

    def __str__(self) -> str:
        return str(self.valid_string) if self.valid_string.valid_strings else ""

    def __repr__(self) -> str:
        return f"ValidList{self.valid_string}"


class CaseInsensitiveValidString:
    """One of a fixed set ignoring case. The message lists the upper-cased names in Java
    ``HashSet`` order, as Kafka's does."""

    __slots__ = ("valid_strings",)

    def __init__(self, valid_strings: Iterable[str]) -> None:
        upper = [s.upper() for s in valid_strings]
        self.valid_strings: tuple[str, ...] = tuple(java_hash_set_order(upper, java_string_hash))

    @classmethod
    def in_(cls, *valid_strings: str) -> CaseInsensitiveValidString:
        return cls(valid_strings)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None or str(value).upper() not in self.valid_strings:
            raise ConfigError(
                name,
                value,
                "String must be one of (case insensitive): " + ", ".join(self.valid_strings),
            )

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid_strings) + "]"


class NonNullValidator:
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            # Kafka passes the string "null" here.
            raise ConfigError(name, "null", "entry must be non null")

    def __str__(self) -> str:
        return "non-null string"


class NonEmptyString:
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is not None and value == "":
            raise ConfigError(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


class NonEmptyStringWithoutControlChars:
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return
        if value == "":
            raise ConfigError(name, value, "String may not be empty")
        # Java's Character.isISOControl: U+0000..U+001F and U+007F..U+009F.
        bad = [ord(c) for c in value if ord(c) <= 0x1F or 0x7F <= ord(c) <= 0x9F]
        if bad:
            raise ConfigError(
                name,
                value,
                "String may not contain control sequences but had the following ASCII chars: "
                + ", ".join(map(str, bad)),
            )

    def __str__(self) -> str:
        return "non-empty string without ISO control characters"


class ListSize:
    __slots__ = ("max_size",)

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size

    @classmethod
    def at_most_of_size(cls, max_size: int) -> ListSize:
        return cls(max_size)

    def ensure_valid(self, name: str, value: Any) -> None:
        if len(value) > self.max_size:
            raise ConfigError(name, value, f"exceeds maximum list size of [{self.max_size}].")

    def __str__(self) -> str:
        return f"List containing maximum of {self.max_size} elements"


class CompositeValidator:
    __slots__ = ("validators",)

    def __init__(self, validators: Iterable[Validator]) -> None:
        self.validators: tuple[Validator, ...] = tuple(validators)

    @classmethod
    def of(cls, *validators: Validator) -> CompositeValidator:
        return cls(validators)

    def ensure_valid(self, name: str, value: Any) -> None:
        for v in self.validators:
            v.ensure_valid(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)


class LambdaValidator:
    """A validator from a function ``(name, value) -> None`` (raising :class:`ConfigError`)
    and its "Valid Values" description."""

    __slots__ = ("_check", "_description")

    def __init__(self, check: Callable[[str, Any], None], description: str) -> None:
        self._check = check
        self._description = description

    @classmethod
    def with_(cls, check: Callable[[str, Any], None], description: str) -> LambdaValidator:
        return cls(check, description)

    def ensure_valid(self, name: str, value: Any) -> None:
        self._check(name, value)

    def __str__(self) -> str:
        return self._description


# ---------------------------------------------------------------------------------------------
# Keys and definitions


def _distinct(values: list[Any]) -> list[Any]:
    seen: set[str] = set()
    out = []
    for v in values:
        key = java_str(v)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


@dataclass(frozen=True)
class ConfigKey:
    """One configuration: Kafka name, type, default, validator, importance, documentation.

    The default is parsed and validated when the key is created (as Kafka's ``ConfigKey``
    constructor does), so ``default`` holds the typed value. ``synonyms`` lists the broker
    configs a topic config falls back to, in precedence order; ``internal`` keys are left out
    of describe output and docs (Kafka's ``defineInternal``)."""

    name: str
    type: Type
    default: Any = NO_DEFAULT
    validator: Validator | None = None
    importance: Importance = Importance.MEDIUM
    doc: str = ""
    synonyms: tuple[str, ...] = ()
    internal: bool = False
    _default_is_list: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.default is not NO_DEFAULT:
            parsed = parse_type(self.name, self.default, self.type)
            if self.validator is not None:
                self.validator.ensure_valid(self.name, parsed)
            if isinstance(parsed, list):
                parsed = tuple(parsed)  # frozen; copied back into a list on every parse
                object.__setattr__(self, "_default_is_list", True)
            object.__setattr__(self, "default", parsed)

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def default_value(self) -> Any:
        """The typed default (a fresh list for LIST keys); :data:`NO_DEFAULT` if none."""
        if self._default_is_list:
            return list(self.default)
        return self.default

    def parse(self, value: object, is_set: bool = True) -> Any:
        """Parse and validate one value (or the default when ``is_set`` is false)."""
        if is_set:
            parsed = parse_type(self.name, value, self.type)
        elif not self.has_default:
            raise ConfigError(
                self.name,
                message=f'Missing required configuration "{self.name}" which has no default value.',
            )
        else:
            parsed = self.default_value()
        if isinstance(self.validator, ValidList) and isinstance(parsed, list):
            parsed = _distinct(parsed)
        if self.validator is not None:
            self.validator.ensure_valid(self.name, parsed)
        return parsed

    @property
    def valid_values(self) -> str:
        """The "Valid Values" column of Kafka's documentation."""
        return "" if self.validator is None else str(self.validator)


class ConfigDef:
    """An ordered set of :class:`ConfigKey` (Kafka's ``ConfigDef``). Immutable once built."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Iterable[ConfigKey] = ()) -> None:
        self._keys: dict[str, ConfigKey] = {}
        for key in keys:
            self._define(key)

    def _define(self, key: ConfigKey) -> None:
        if key.name in self._keys:
            raise ConfigError(key.name, message=f"Configuration {key.name} is defined twice.")
        self._keys[key.name] = key

    def define(self, key: ConfigKey) -> ConfigDef:
        """A new definition with ``key`` added."""
        return ConfigDef([*self._keys.values(), key])

    def merged(self, *others: ConfigDef) -> ConfigDef:
        return ConfigDef([*self._keys.values(), *(k for o in others for k in o.config_keys())])

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __getitem__(self, name: str) -> ConfigKey:
        return self._keys[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, name: str) -> ConfigKey | None:
        return self._keys.get(name)

    def config_keys(self) -> list[ConfigKey]:
        return list(self._keys.values())

    def names(self) -> list[str]:
        return list(self._keys)

    def default_values(self) -> dict[str, Any]:
        """Every key with a default (including ``None`` defaults), typed."""
        return {k.name: k.default_value() for k in self._keys.values() if k.has_default}

    def unknown(self, props: Mapping[str, object]) -> list[str]:
        """The supplied names this definition does not know, in supplied order."""
        return [name for name in props if name not in self._keys]

    def parse(self, props: Mapping[str, object]) -> dict[str, Any]:
        """Parse every defined key from ``props`` (defaults for the missing ones); unknown
        names are ignored here (see :meth:`unknown`). Raises the first :class:`ConfigError`,
        in definition order."""
        return {
            key.name: key.parse(props.get(key.name), key.name in props)
            for key in self._keys.values()
        }
