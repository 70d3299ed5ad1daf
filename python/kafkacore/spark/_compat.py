"""Admission control names of ``pyspark.sql.streaming.datasource`` (pyspark 4.2+), with
stand-ins on 4.0/4.1 where the engine calls ``latestOffset()`` without arguments and
``trigger(availableNow=True)`` is not offered to Python sources."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["ReadAllAvailable", "ReadLimit", "ReadMaxRows", "SupportsTriggerAvailableNow"]

if TYPE_CHECKING:
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )
else:
    try:
        from pyspark.sql.streaming.datasource import (
            ReadAllAvailable,
            ReadLimit,
            ReadMaxRows,
            SupportsTriggerAvailableNow,
        )
    except ImportError:  # pyspark < 4.2
        from dataclasses import dataclass

        class ReadLimit:
            pass

        @dataclass
        class ReadAllAvailable(ReadLimit):
            pass

        @dataclass
        class ReadMaxRows(ReadLimit):
            max_rows: int

        class SupportsTriggerAvailableNow:
            def prepareForTriggerAvailableNow(self) -> None:
                pass
