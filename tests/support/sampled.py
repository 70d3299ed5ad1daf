"""Sampled values for the tests that compare our codecs with Kafka's: one dense value that
leaves no field at its default (so no field goes uncompared), then values hypothesis
draws (nulls, empty arrays and defaults included)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore.protocol.samples import sample
from kafkacore.protocol.schema import KafkaStruct, MessageSchema, StructSchema
from support.budget import examples

__all__ = ["EXAMPLES", "check_samples", "field_paths", "non_default_paths"]

EXAMPLES = examples(8)
"""Hypothesis examples per message and version, besides the dense one."""


def check_samples(
    msg: MessageSchema,
    version: int,
    check: Callable[[KafkaStruct], None],
    *,
    examples: int = EXAMPLES,
) -> None:
    """``check`` a dense sample of ``msg`` at ``version`` (asserting it gives every field
    a non-default value), then ``examples`` hypothesis-drawn samples."""
    dense = sample(msg, version, random.Random(f"{msg.name}-{version}"), dense=True)
    assert non_default_paths(dense, msg.struct, version) == field_paths(msg.struct, version)
    check(dense)

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(rnd=st.randoms(use_true_random=False))
    def drawn(rnd: random.Random) -> None:
        check(sample(msg, version, rnd))

    drawn()


def non_default_paths(value: Any, s: StructSchema, version: int, prefix: str = "") -> set[str]:
    """The fields (as paths) a value of ``s`` gives a value other than their default."""
    found: set[str] = set()
    for f in s.fields:
        if version not in f.versions:
            continue
        v = getattr(value, f.attr)
        path = f"{prefix}.{f.name}"
        if v is not None and v != f.default_value() and v != []:
            found.add(path)
        if f.struct is not None and v is not None:
            for e in v if f.array else [v]:
                found |= non_default_paths(e, f.struct, version, path)
    return found


def field_paths(s: StructSchema, version: int, prefix: str = "") -> set[str]:
    """Every field a value of ``s`` carries at ``version``, as paths."""
    found: set[str] = set()
    for f in s.fields:
        if version in f.versions:
            found.add(f"{prefix}.{f.name}")
            if f.struct is not None:
                found |= field_paths(f.struct, version, f"{prefix}.{f.name}")
    return found
