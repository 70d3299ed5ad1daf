"""The storage backend contract as one type: what ``kafkacore._native`` and its pure twin
``kafkacore.pure`` both offer (documented in ``_native.pyi``; ``tests/test_api_parity.py``
checks the pure twin against the stub, ``stubtest`` the extension).

Code above the backends (the log, the dump tool, benchmarks) takes a :class:`Backend`
instead of a ``ModuleType``, so mypy checks every call; :func:`kafkacore.native.load_backend`
returns one, and the assignments at the end of :mod:`kafkacore.native` make mypy prove that
both modules satisfy it. The stub's type aliases (``BatchHeaderTuple``, ...) are reused.

A module satisfies a ``Protocol`` structurally; a class member (``Segment``, ``KeyMap``)
appears here as the constructor it is, returning the structural type of its instances.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kafkacore._native import (
        AppendResult,
        BatchHeaderTuple,
        ColumnsTuple,
        FilterResult,
        LeasedAppendResult,
        LegacyHeaderTuple,
        RecordTuple,
    )

__all__ = ["Backend", "KeyMapFiles", "LeaseState", "SegmentFiles"]


class SegmentFiles(Protocol):
    """A backend ``Segment``: one ``.log`` with its ``.index`` and ``.timeindex``. Not
    thread-safe (see ``_native.pyi``)."""

    @property
    def base_offset(self) -> int: ...
    @property
    def log_path(self) -> str: ...
    @property
    def index_path(self) -> str: ...
    @property
    def time_index_path(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def next_offset(self) -> int: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def offset_of_max_timestamp(self) -> int: ...
    @property
    def rolling_based_timestamp(self) -> int: ...
    @property
    def index_is_full(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def append(
        self,
        data: bytes,
        *,
        partition_leader_epoch: int = -1,
        log_append_time_ms: int = -1,
        assign_offsets: bool = True,
    ) -> AppendResult: ...
    def read(
        self,
        start_offset: int,
        max_bytes: int,
        max_position: int = -1,
        min_one_batch: bool = True,
    ) -> tuple[int, int] | None: ...
    def read_bytes(self, position: int, length: int) -> bytes: ...
    def translate_offset(
        self, offset: int, starting_position: int = 0
    ) -> tuple[int, int, int] | None: ...
    def lookup_index(self, offset: int) -> tuple[int, int]: ...
    def lookup_time_index(self, timestamp: int) -> tuple[int, int]: ...
    def find_offset_by_timestamp(
        self, timestamp: int, starting_offset: int = -1
    ) -> tuple[int, int, int] | None: ...
    def offset_index(self) -> list[tuple[int, int]]: ...
    def time_index(self) -> list[tuple[int, int]]: ...
    def recover(self) -> int: ...
    def sanity_check(self) -> None: ...
    def truncate_to(self, offset: int) -> int: ...
    def resize_indexes(self, max_index_size: int | None = None) -> None: ...
    def seal(self) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def delete(self) -> None: ...


class KeyMapFiles(Protocol):
    """A backend ``KeyMap`` (the cleaner's key -> latest offset map)."""

    @property
    def capacity(self) -> int: ...
    @property
    def latest_offset(self) -> int: ...
    def __len__(self) -> int: ...
    def put(self, key: bytes, offset: int) -> None: ...
    def get(self, key: bytes) -> int: ...
    def update_latest_offset(self, offset: int) -> None: ...
    def clear(self) -> None: ...
    def add_batches(self, buf: bytes, start_offset: int, end_offset: int) -> tuple[int, bool]: ...


class LeaseState(Protocol):
    """A backend ``ProduceLease``: one partition's lease (see ``_native.pyi``)."""

    @property
    def leader_epoch(self) -> int: ...
    def producer(self, producer_id: int) -> tuple[int, int, bool] | None: ...


class Backend(Protocol):
    """Every function and class of ``_native.pyi``, as either backend module offers it."""

    def crc32c(self, data: bytes, /) -> int: ...
    def crc32(self, data: bytes, /) -> int: ...
    def compress(self, codec: int, data: bytes, /) -> bytes: ...
    def decompress(self, codec: int, data: bytes, /) -> bytes: ...
    def build_batch(
        self,
        records: Sequence[RecordTuple],
        *,
        base_offset: int | None = None,
        last_offset_delta: int | None = None,
        compression: int = 0,
        timestamp_type: int = 0,
        partition_leader_epoch: int = -1,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        transactional: bool = False,
        control: bool = False,
        delete_horizon_ms: int = -1,
    ) -> bytes: ...
    def batch_header(self, buf: bytes, pos: int = 0, /) -> BatchHeaderTuple: ...
    def validate_batch(self, buf: bytes, pos: int = 0, /) -> BatchHeaderTuple: ...
    def batch_records(self, buf: bytes, pos: int = 0, /) -> list[RecordTuple]: ...
    def legacy_header(self, buf: bytes, pos: int = 0, /) -> LegacyHeaderTuple: ...
    def legacy_records(self, buf: bytes, pos: int = 0, /) -> list[RecordTuple]: ...
    def build_legacy(
        self,
        records: Sequence[RecordTuple],
        magic: int,
        compression: int = 0,
        timestamp_type: int = 0,
    ) -> bytes: ...
    def Segment(
        self,
        directory: str,
        base_offset: int,
        *,
        index_interval_bytes: int = 4096,
        max_index_size: int = 10485760,
    ) -> SegmentFiles: ...
    def KeyMap(self, capacity: int) -> KeyMapFiles: ...
    def filter_batches(
        self,
        buf: bytes,
        key_map: Any,  # this backend's KeyMap (each backend refuses the other's)
        *,
        now_ms: int,
        delete_retention_ms: int,
        round_end_offset: int = -1,
        producer_last_offsets: dict[int, int] | None = None,
    ) -> FilterResult: ...
    def decode_columns(
        self, data: bytes, start_offset: int, end_offset: int, include_headers: bool, /
    ) -> ColumnsTuple: ...
    def murmur2(self, data: bytes, /) -> int: ...
    def ProduceLease(
        self,
        *,
        leader_epoch: int,
        max_message_bytes: int,
        segment_bytes: int,
        log_append_time: bool,
        timestamp_before_max_ms: int,
        timestamp_after_max_ms: int,
        roll_after_ms: int,
        segment_created_ms: int,
        max_last_offset: int,
        producers: dict[int, tuple[int, int, bool]],
    ) -> LeaseState: ...
    def produce_append(
        self,
        appends: Sequence[tuple[Any, Any, bytes]],  # this backend's Segment and ProduceLease
        now_ms: int,
        /,
    ) -> list[LeasedAppendResult | None]: ...
