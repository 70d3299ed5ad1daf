"""LeaderEpochFileCache: Kafka's LeaderEpochFileCacheTest, case by case, plus persistence."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkacore.log import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEntry,
    LeaderEpochCheckpointFile,
    LeaderEpochFileCache,
)

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


@pytest.fixture
def checkpoint(tmp_path: Path) -> LeaderEpochCheckpointFile:
    return LeaderEpochCheckpointFile.in_dir(str(tmp_path))


@pytest.fixture
def cache(checkpoint: LeaderEpochCheckpointFile) -> LeaderEpochFileCache:
    return LeaderEpochFileCache(checkpoint, topic_partition="t-0")


def E(epoch: int, offset: int) -> EpochEntry:
    return EpochEntry(epoch, offset)


def test_previous_epoch(cache: LeaderEpochFileCache) -> None:
    assert cache.previous_epoch() is None
    cache.assign(2, 10)
    assert cache.previous_epoch() is None
    cache.assign(4, 15)
    assert cache.previous_epoch() == 2
    cache.assign(10, 20)
    assert cache.previous_epoch() == 4
    cache.truncate_from_end(18)
    assert cache.previous_epoch() == 2


def test_add_epoch_and_end_offset_is_log_end_for_latest(cache: LeaderEpochFileCache) -> None:
    cache.assign(2, 10)
    assert cache.latest_epoch() == 2
    assert cache.entries() == [E(2, 10)]
    assert cache.end_offset_for(2, 11) == (2, 11)
    cache.assign(2, 12)
    assert cache.end_offset_for(2, 14) == (2, 14)


def test_undefined_epoch_requested(cache: LeaderEpochFileCache) -> None:
    assert cache.end_offset_for(UNDEFINED_EPOCH, 73) == UNDEFINED  # empty cache
    cache.assign(2, 11)
    cache.assign(3, 12)
    assert cache.end_offset_for(UNDEFINED_EPOCH, 0) == UNDEFINED


def test_assign_rules(cache: LeaderEpochFileCache) -> None:
    cache.assign(2, 9)
    cache.assign(2, 10)  # same epoch, later offset: ignored
    assert cache.entries() == [E(2, 9)]
    cache.assign(3, 9)  # new epoch, same offset: replaces
    assert cache.entries() == [E(3, 9)]
    cache.assign(4, 8)  # offset going backwards: the conflicting entry goes
    assert cache.entries() == [E(4, 8)]
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        cache.assign(-1, 5)
    with pytest.raises(ValueError):
        cache.assign(5, -1)


def test_no_epoch_recorded(cache: LeaderEpochFileCache) -> None:
    assert cache.end_offset_for(0, 0) == UNDEFINED
    assert cache.end_offset_for(7, 0) == UNDEFINED
    assert cache.latest_epoch() is None


def test_requested_epoch_below_first_epoch(cache: LeaderEpochFileCache) -> None:
    cache.assign(5, 11)
    cache.assign(6, 12)
    cache.assign(7, 13)
    assert cache.end_offset_for(4, 0) == (4, 11)


def test_matching_epoch_with_earlier_start_truncates(cache: LeaderEpochFileCache) -> None:
    cache.assign(5, 11)
    cache.assign(6, 12)
    cache.assign(7, 13)
    cache.assign(7, 12)  # epoch 7 starts at an earlier offset
    assert cache.entries() == [E(5, 11), E(7, 12)]
    assert cache.end_offset_for(5, 0) == (5, 12)
    assert cache.end_offset_for(6, 0) == (5, 12)


def test_previous_epoch_gets_next_epochs_start(cache: LeaderEpochFileCache) -> None:
    for epoch, offset in [(1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)]:
        cache.assign(epoch, offset)
    assert cache.end_offset_for(2, 17) == (2, 15)


def test_kip_279_largest_epoch_at_or_below_requested(cache: LeaderEpochFileCache) -> None:
    cache.assign(0, 10)
    cache.assign(2, 13)
    cache.assign(4, 17)
    # epoch 1 and 3 never existed here: answer with the largest epoch below them
    assert cache.end_offset_for(1, 0) == (0, 13)
    assert cache.end_offset_for(2, 0) == (2, 17)
    assert cache.end_offset_for(3, 0) == (2, 17)
    assert cache.end_offset_for(4, 20) == (4, 20)
    assert cache.end_offset_for(5, 20) == UNDEFINED  # above the latest epoch


def test_untracked_higher_epoch(cache: LeaderEpochFileCache) -> None:
    cache.assign(2, 100)
    assert cache.end_offset_for(3, 100) == UNDEFINED


def test_monotonic_epochs_truncate_conflicts(cache: LeaderEpochFileCache) -> None:
    cache.assign(1, 5)
    cache.assign(2, 6)
    cache.assign(1, 7)  # an older epoch later in the log: later epochs are dropped
    assert cache.latest_epoch() == 1
    assert cache.end_offset_for(1, 8) == (1, 8)
    assert cache.end_offset_for(2, 8) == UNDEFINED
    assert cache.entries() == [E(1, 7)]


def test_epochs_as_leaders_change(cache: LeaderEpochFileCache) -> None:
    cache.assign(0, 0)
    cache.assign(1, 0)
    assert cache.latest_epoch() == 1
    assert cache.end_offset_for(1, 0) == (1, 0)
    assert cache.end_offset_for(0, 0) == (0, 0)
    assert cache.end_offset_for(1, 5) == (1, 5)
    cache.assign(2, 5)
    assert cache.end_offset_for(2, 10) == (2, 10)
    assert cache.end_offset_for(1, 10) == (1, 5)
    assert cache.end_offset_for(0, 10) == (0, 0)


def test_epochs_as_follower_receives_messages(cache: LeaderEpochFileCache) -> None:
    for offset in range(0, 3):
        cache.assign(0, offset)
    for offset in range(3, 6):
        cache.assign(1, offset)
    for offset in range(6, 9):
        cache.assign(2, offset)
    assert cache.entries() == [E(0, 0), E(1, 3), E(2, 6)]
    assert cache.end_offset_for(2, 9) == (2, 9)
    assert cache.end_offset_for(0, 9) == (0, 3)
    assert cache.end_offset_for(1, 9) == (1, 6)


@pytest.fixture
def three(cache: LeaderEpochFileCache) -> LeaderEpochFileCache:
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(4, 11)
    return cache


@pytest.mark.parametrize(
    ("end_offset", "expected"),
    [
        (8, [E(2, 6)]),  # inclusive: the entry starting at 8 goes too
        (9, [E(2, 6), E(3, 8)]),
        (UNDEFINED_EPOCH_OFFSET, [E(2, 6), E(3, 8), E(4, 11)]),
        (12, [E(2, 6), E(3, 8), E(4, 11)]),
        (6, []),
    ],
)
def test_truncate_from_end(
    three: LeaderEpochFileCache, end_offset: int, expected: list[EpochEntry]
) -> None:
    three.truncate_from_end(end_offset)
    assert three.entries() == expected


@pytest.mark.parametrize(
    ("start_offset", "expected"),
    [
        (8, [E(3, 8), E(4, 11)]),  # on a boundary: kept as is
        (9, [E(3, 9), E(4, 11)]),  # between boundaries: moved up
        (1, [E(2, 6), E(3, 8), E(4, 11)]),
        (6, [E(2, 6), E(3, 8), E(4, 11)]),
        (11, [E(4, 11)]),
        (15, [E(4, 15)]),
        (UNDEFINED_EPOCH_OFFSET, [E(2, 6), E(3, 8), E(4, 11)]),
    ],
)
def test_truncate_from_start(
    three: LeaderEpochFileCache, start_offset: int, expected: list[EpochEntry]
) -> None:
    three.truncate_from_start(start_offset)
    assert three.entries() == expected


def test_truncate_from_start_keeps_first_epoch(cache: LeaderEpochFileCache) -> None:
    cache.assign(0, 0)
    cache.assign(1, 7)
    cache.assign(2, 10)
    cache.truncate_from_start(5)
    assert cache.entries() == [E(0, 5), E(1, 7), E(2, 10)]


def test_truncation_of_empty_cache_and_clear(
    cache: LeaderEpochFileCache, checkpoint: LeaderEpochCheckpointFile
) -> None:
    cache.truncate_from_start(7)
    cache.truncate_from_end(7)
    assert cache.entries() == []
    cache.assign(2, 6)
    cache.clear_and_flush()
    assert cache.entries() == [] and checkpoint.read() == []


def test_lookups(cache: LeaderEpochFileCache) -> None:
    assert cache.previous_entry(2) is None
    cache.assign(2, 10)
    assert cache.previous_entry(2) is None
    cache.assign(4, 15)
    assert cache.previous_entry(4) == E(2, 10) and cache.previous_epoch(4) == 2
    cache.assign(10, 20)
    assert cache.previous_entry(10) == E(4, 15) and cache.previous_epoch(10) == 4
    assert cache.previous_epoch(7) == 4  # no entry 7: the largest below it
    cache.truncate_from_end(18)
    assert cache.previous_entry(4) == E(2, 10)
    assert cache.next_epoch(-1) == 2 and cache.next_epoch(2) == 4 and cache.next_epoch(4) is None
    assert cache.epoch_entry(4) == E(4, 15) and cache.epoch_entry(3) is None
    assert cache.earliest_entry() == E(2, 10) and cache.latest_entry() == E(4, 15)


def test_epoch_for_offset(cache: LeaderEpochFileCache) -> None:
    cache.assign(0, 10)
    cache.assign(1, 20)
    cache.assign(5, 30)
    assert cache.epoch_for_offset(25) == 1
    assert cache.epoch_for_offset(20) == 1
    assert cache.epoch_for_offset(30) == 5
    assert cache.epoch_for_offset(50) == 5
    assert cache.epoch_for_offset(5) is None


def test_epoch_entries_in_range(three: LeaderEpochFileCache) -> None:
    assert three.epoch_entries_in_range(9, 11) == [E(3, 9)]
    assert three.epoch_entries_in_range(-1, 9) == [E(2, 6), E(3, 8)]
    assert three.entries() == [E(2, 6), E(3, 8), E(4, 11)]  # unchanged


def test_every_change_is_persisted(
    tmp_path: Path, checkpoint: LeaderEpochCheckpointFile, three: LeaderEpochFileCache
) -> None:
    path = tmp_path / "leader-epoch-checkpoint"
    assert path.read_bytes() == b"0\n3\n2 6\n3 8\n4 11\n"
    three.truncate_from_end(11)
    three.truncate_from_start(8)
    assert checkpoint.read() == [E(3, 8)]
    assert path.read_bytes() == b"0\n1\n3 8\n"
    # a new cache over the same file (a restart) sees the same entries
    again = LeaderEpochFileCache(LeaderEpochCheckpointFile.in_dir(str(tmp_path)))
    assert again.entries() == [E(3, 8)]
    three.assign_all([E(5, 20), E(6, 30)])
    assert LeaderEpochFileCache(LeaderEpochCheckpointFile(str(path))).entries() == [
        E(3, 8),
        E(5, 20),
        E(6, 30),
    ]


def test_in_memory_cache() -> None:
    cache = LeaderEpochFileCache(None)
    cache.assign(1, 0)
    assert cache.entries() == [E(1, 0)] and len(cache) == 1 and cache.non_empty()
