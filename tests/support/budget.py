"""Hypothesis budgets that the profiles can deepen.

A test that needs its own number of examples (a costly example, or a cheap one drawn
many times) says how many it takes under the default ``ci`` profile with
:func:`examples`; under another profile (``HYPOTHESIS_PROFILE=thorough``) the number
grows by that profile's ``max_examples`` over ``ci``'s, as every other test's does.
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["examples"]


def examples(under_ci: int) -> int:
    """``under_ci`` examples scaled to the loaded profile (``ci``: unchanged)."""
    ci = settings.get_profile("ci").max_examples
    return max(under_ci, round(under_ci * settings.default.max_examples / ci))
