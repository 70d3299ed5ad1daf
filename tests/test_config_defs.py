"""The ConfigDef machinery: Kafka's parsing rules, validators and messages.

Expected messages are Kafka 4.3's, as printed by its own ``ConfigDef`` (see
``interop/test_config_interop.py``, which checks many of them against the real classes)."""

from __future__ import annotations

import math

import pytest

from kafkacore._java import java_hash_set_order, java_string_hash
from kafkacore.config import (
    NO_DEFAULT,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigError,
    ConfigKey,
    ListSize,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Password,
    Range,
    Type,
    ValidList,
    ValidString,
    convert_to_string,
    parse_type,
)
from kafkacore.config.defs import java_double_str, java_str, java_trim
from kafkacore.errors import KafkaCoreError


def message(fn: object, *args: object) -> str:
    with pytest.raises(ConfigError) as info:
        fn(*args)  # type: ignore[operator]
    return str(info.value)


def test_config_error_carries_name_value_constraint() -> None:
    e = ConfigError("segment.bytes", -5, "Value must be at least 1048576")
    assert (
        str(e) == "Invalid value -5 for configuration segment.bytes: Value must be at least 1048576"
    )
    assert (e.name, e.value, e.constraint) == (
        "segment.bytes",
        -5,
        "Value must be at least 1048576",
    )
    assert isinstance(e, ValueError)
    assert isinstance(e, KafkaCoreError)
    assert str(ConfigError("x", None)) == "Invalid value null for configuration x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("true", True), ("FALSE", False), ("  True\t", True), ("tRuE", True)],
)
def test_booleans_are_true_or_false_in_any_case(text: str, expected: bool) -> None:
    assert parse_type("b", text, Type.BOOLEAN) is expected


def test_boolean_rejects_anything_else() -> None:
    assert message(parse_type, "b", "yes", Type.BOOLEAN) == (
        "Invalid value yes for configuration b: Expected value to be either true or false"
    )
    assert message(parse_type, "b", 1, Type.BOOLEAN) == (
        "Invalid value 1 for configuration b: Expected value to be either true or false"
    )


@pytest.mark.parametrize(
    ("text", "type_", "expected"),
    [
        ("42", Type.INT, 42),
        (" -7 ", Type.INT, -7),
        ("+5", Type.INT, 5),
        ("2147483647", Type.INT, 2**31 - 1),
        ("-2147483648", Type.INT, -(2**31)),
        ("32767", Type.SHORT, 32767),
        ("9223372036854775807", Type.LONG, 2**63 - 1),
        ("99999999999", Type.LONG, 99999999999),
    ],
)
def test_integers_parse_within_their_java_range(text: str, type_: Type, expected: int) -> None:
    assert parse_type("n", text, type_) == expected


@pytest.mark.parametrize(
    ("text", "type_"),
    [
        ("2147483648", Type.INT),
        ("99999999999", Type.INT),
        ("1.5", Type.INT),
        ("1_000", Type.INT),
        ("", Type.INT),
        ("0x10", Type.INT),
        ("40000", Type.SHORT),
        ("9223372036854775808", Type.LONG),
        ("abc", Type.LONG),
    ],
)
def test_bad_integers_are_not_a_number_of_their_type(text: str, type_: Type) -> None:
    assert message(parse_type, "n", text, type_) == (
        f"Invalid value {text} for configuration n: Not a number of type {type_.name}"
    )


def test_typed_integers_need_a_python_int_that_fits() -> None:
    assert parse_type("n", 7, Type.INT) == 7
    assert parse_type("n", 3, Type.SHORT) == 3
    assert message(parse_type, "n", 2**31, Type.INT) == (
        "Invalid value 2147483648 for configuration n: "
        "Expected value to be a 32-bit integer, but it was a java.lang.Long"
    )
    assert message(parse_type, "n", True, Type.LONG) == (
        "Invalid value true for configuration n: "
        "Expected value to be a 64-bit integer (long), but it was a java.lang.Boolean"
    )
    assert message(parse_type, "n", 1.5, Type.LONG) == (
        "Invalid value 1.5 for configuration n: "
        "Expected value to be a 64-bit integer (long), but it was a java.lang.Double"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.5", 0.5),
        ("1e-3", 0.001),
        (".5", 0.5),
        ("1.", 1.0),
        ("-2E2", -200.0),
        ("1.5f", 1.5),
        ("2d", 2.0),
        ("0x1p3", 8.0),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("1e400", math.inf),
    ],
)
def test_doubles_follow_java_parse_double(text: str, expected: float) -> None:
    assert parse_type("d", text, Type.DOUBLE) == expected


def test_double_nan_and_rejections() -> None:
    assert math.isnan(parse_type("d", "NaN", Type.DOUBLE))
    for text in ("nan", "inf", "1,5", "1_0", "."):
        assert message(parse_type, "d", text, Type.DOUBLE) == (
            f"Invalid value {text} for configuration d: Not a number of type DOUBLE"
        )
    assert parse_type("d", 3, Type.DOUBLE) == 3.0


def test_lists_split_on_commas_and_trim() -> None:
    assert parse_type("l", " a , b,c ", Type.LIST) == ["a", "b", "c"]
    assert parse_type("l", "", Type.LIST) == []
    assert parse_type("l", "   ", Type.LIST) == []
    assert parse_type("l", "a,,b,", Type.LIST) == ["a", "", "b", ""]
    assert parse_type("l", ("x", "y"), Type.LIST) == ["x", "y"]
    assert message(parse_type, "l", 5, Type.LIST) == (
        "Invalid value 5 for configuration l: Expected a comma separated list."
    )


def test_strings_are_java_trimmed_and_passwords_hidden() -> None:
    assert parse_type("s", "\t x \x00", Type.STRING) == "x"
    assert parse_type("s", "\u00a0x", Type.STRING) == "\u00a0x"  # not <= U+0020
    assert message(parse_type, "s", 5, Type.STRING) == (
        "Invalid value 5 for configuration s: "
        "Expected value to be a string, but it was a java.lang.Integer"
    )
    secret = parse_type("p", " s3cret ", Type.PASSWORD)
    assert isinstance(secret, Password)
    assert secret.value == "s3cret"
    assert str(secret) == repr(secret) == "[hidden]"
    assert parse_type("c", " org.Foo ", Type.CLASS) == "org.Foo"
    assert parse_type("x", None, Type.INT) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2.0, "2.0"),
        (0.5, "0.5"),
        (0.001, "0.001"),
        (1e-4, "1.0E-4"),
        (1234567.0, "1234567.0"),
        (12345678.0, "1.2345678E7"),
        (1e10, "1.0E10"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (-0.0, "-0.0"),
        (math.inf, "Infinity"),
        (math.nan, "NaN"),
        (1.25e-7, "1.25E-7"),
    ],
)
def test_doubles_print_as_java_double_to_string(value: float, expected: str) -> None:
    assert java_double_str(value) == expected


def test_values_print_as_java_prints_them() -> None:
    assert java_str(None) == "null"
    assert java_str(True) == "true"
    assert java_str(["a", "b"]) == "[a, b]"
    assert java_str([]) == "[]"
    assert java_trim(" \x01a b\n") == "a b"
    assert convert_to_string(["compact", "delete"], Type.LIST) == "compact,delete"
    assert convert_to_string(False, Type.BOOLEAN) == "false"
    assert convert_to_string(None, Type.INT) is None


def test_range_messages_and_descriptions() -> None:
    at_least = Range.at_least(1048576)
    assert str(at_least) == "[1048576,...]"
    assert message(at_least.ensure_valid, "segment.bytes", -5) == (
        "Invalid value -5 for configuration segment.bytes: Value must be at least 1048576"
    )
    ratio = Range.between(0, 1)
    assert str(ratio) == "[0,...,1]"
    assert message(ratio.ensure_valid, "min.cleanable.dirty.ratio", 2.0) == (
        "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: "
        "Value must be no more than 1"
    )
    assert message(Range.between(0.0, 0.5).ensure_valid, "r", 0.75) == (
        "Invalid value 0.75 for configuration r: Value must be no more than 0.5"
    )
    assert message(at_least.ensure_valid, "x", None) == (
        "Invalid value null for configuration x: Value must be non-null"
    )
    ratio.ensure_valid("r", 1)  # inclusive bounds


def test_valid_string_is_case_sensitive() -> None:
    v = ValidString.in_("CreateTime", "LogAppendTime")
    assert str(v) == "[CreateTime, LogAppendTime]"
    v.ensure_valid("t", "CreateTime")
    assert message(v.ensure_valid, "t", "createtime") == (
        "Invalid value createtime for configuration t: "
        "String must be one of: CreateTime, LogAppendTime"
    )


def test_valid_list_checks_each_element_and_emptiness() -> None:
    policy = ValidList.in_("compact", "delete")
    assert str(policy) == "[compact, delete]"
    policy.ensure_valid("cleanup.policy", [])
    assert message(policy.ensure_valid, "cleanup.policy", ["delete", "foo"]) == (
        "Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete"
    )
    assert message(policy.ensure_valid, "cleanup.policy", ["delete", ""]) == (
        "Configuration 'cleanup.policy' values must not be empty."
    )
    assert message(policy.ensure_valid, "cleanup.policy", ["delete", "delete"]) == (
        "Configuration 'cleanup.policy' values must not be duplicated."
    )
    assert message(policy.ensure_valid, "cleanup.policy", None) == (
        "Configuration 'cleanup.policy' values must not be null."
    )
    roles = ValidList(("broker", "controller"), is_empty_allowed=False)
    assert message(roles.ensure_valid, "process.roles", []) == (
        "Configuration 'process.roles' must not be empty. "
        "Valid values include: [broker, controller]"
    )
    dirs = ValidList.any_non_duplicate_values(False, True)
    assert str(dirs) == ""
    dirs.ensure_valid("log.dirs", None)
    assert message(dirs.ensure_valid, "log.dirs", []) == (
        "Configuration 'log.dirs' must not be empty. Valid values include: any non-empty value"
    )


def test_parsing_a_valid_list_drops_duplicates_first() -> None:
    key = ConfigKey("cleanup.policy", Type.LIST, "delete", ValidList.in_("compact", "delete"))
    assert key.parse("delete,compact,delete") == ["delete", "compact"]


def test_case_insensitive_valid_string_lists_names_in_java_hash_set_order() -> None:
    # Kafka 4.3's Valid Values for group.consumer.migration.policy, whose enum order is
    # BIDIRECTIONAL, UPGRADE, DOWNGRADE, DISABLED.
    v = CaseInsensitiveValidString.in_("bidirectional", "upgrade", "downgrade", "disabled")
    assert str(v) == "(case insensitive) [DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL]"
    v.ensure_valid("p", "Upgrade")
    assert message(v.ensure_valid, "p", "foo") == (
        "Invalid value foo for configuration p: String must be one of (case insensitive): "
        "DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL"
    )
    # The default listener.security.protocol.map is a HashMap in the same order.
    names = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
    assert java_hash_set_order(names, java_string_hash) == [
        "SASL_SSL",
        "PLAINTEXT",
        "SSL",
        "SASL_PLAINTEXT",
    ]


def test_other_validators() -> None:
    assert message(NonNullValidator().ensure_valid, "a", None) == (
        "Invalid value null for configuration a: entry must be non null"
    )
    assert message(NonEmptyString().ensure_valid, "a", "") == (
        "Invalid value  for configuration a: String must be non-empty"
    )
    assert message(NonEmptyStringWithoutControlChars().ensure_valid, "a", "x\ty\x7f") == (
        "Invalid value x\ty\x7f for configuration a: String may not contain control sequences "
        "but had the following ASCII chars: 9, 127"
    )
    assert message(ListSize.at_most_of_size(1).ensure_valid, "a", ["x", "y"]) == (
        "Invalid value [x, y] for configuration a: exceeds maximum list size of [1]."
    )
    both = CompositeValidator.of(Range.at_least(0), Range.between(0, 10))
    assert str(both) == "[0,...], [0,...,10]"
    assert message(both.ensure_valid, "a", 11) == (
        "Invalid value 11 for configuration a: Value must be no more than 10"
    )


def test_config_def_parses_defaults_and_reports_unknown_and_missing() -> None:
    d = ConfigDef(
        [
            ConfigKey("a", Type.INT, 1, Range.at_least(0)),
            ConfigKey("b", Type.LIST, "x,y"),
            ConfigKey("c", Type.STRING, NO_DEFAULT),
        ]
    )
    assert d.parse({"c": "v", "zzz": "1"}) == {"a": 1, "b": ["x", "y"], "c": "v"}
    assert d.unknown({"c": "v", "zzz": "1"}) == ["zzz"]
    assert message(d.parse, {}) == 'Missing required configuration "c" which has no default value.'
    assert message(d.parse, {"a": "-1", "c": "v"}) == (
        "Invalid value -1 for configuration a: Value must be at least 0"
    )
    assert d.default_values() == {"a": 1, "b": ["x", "y"]}
    # Defaults are copied: mutating one parse result leaves the next alone.
    first = d.parse({"c": "v"})
    first["b"].append("z")
    assert d.parse({"c": "v"})["b"] == ["x", "y"]
    assert message(d.define, ConfigKey("a", Type.INT, 2)) == "Configuration a is defined twice."


def test_a_key_validates_its_own_default() -> None:
    with pytest.raises(ConfigError, match="Value must be at least 10"):
        ConfigKey("a", Type.INT, 5, Range.at_least(10))
