"""Small helpers shared by the pure backend: integer ranges of Kafka's Java types and
the error messages (context + ``position N``) both backends use."""

from __future__ import annotations

from kafkacore.errors import CorruptRecordError

I16_MIN, I16_MAX = -(2**15), 2**15 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U32_MAX = 2**32 - 1

BUFFER_CONTEXT = "buffer"


def corrupt(context: str, position: int, detail: str) -> CorruptRecordError:
    """``CorruptRecordError`` naming the file (or ``buffer``) and the batch position."""
    return CorruptRecordError(f"{context}, position {position}: {detail}")


def check_range(name: str, value: int, low: int, high: int) -> int:
    """``value`` if ``low <= value <= high``, else ``ValueError`` (a bad argument)."""
    if not low <= value <= high:
        raise ValueError(f"{name}={value} is out of range [{low}, {high}]")
    return value


def fit(name: str, value: int, bits: int = 64) -> int:
    """``value`` if it fits a signed ``bits``-bit integer, else ``OverflowError``.

    Arguments are typed with Java's integer types; an int that does not fit the type at
    all is refused the way the native backend's argument conversion refuses it (PyO3
    raises ``OverflowError``), before any check of its meaning (``ValueError``)."""
    limit = 1 << (bits - 1)
    if not -limit <= value < limit:
        raise OverflowError(f"{name}={value} does not fit a {bits}-bit signed integer")
    return value


def wrap_i64(value: int) -> int:
    """``value`` reduced to a signed 64-bit integer, as Java's ``long`` arithmetic wraps."""
    if I64_MIN <= value <= I64_MAX:
        return value
    return ((value - I64_MIN) & 0xFFFFFFFFFFFFFFFF) + I64_MIN
