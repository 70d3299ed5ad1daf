"""Per-key order for share consumers: a kafkacore extension, the group config
``share.key.ordering=true`` (not a Kafka config; see docs/share-groups.md).

Share groups hand records of one partition to many consumers at once, so two records with
the same key may be processed concurrently and out of order. Under key ordering the share
partition asks this index before it acquires a record: a record is acquirable only while
it is the *head* of its key, the earliest record of that key not yet in a terminal state
(acknowledged or archived). Hence

* two records with the same key are never acquired at once (only a head can be, and a key
  has one head);
* a key's next record is handed out only after the previous one is acknowledged (it
  becomes the head once the previous one is terminal and the state write is done);
* a released or timed-out record stays its key's head, so it comes back before the key's
  later records.

Records without a key (and control records) belong to no key: always acquirable.

Not thread-safe: the share partition uses it on the event loop only.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

__all__ = ["KeyIndex"]


class KeyIndex:
    """The keys of a share partition's in-flight records and, per key, its records not
    yet terminal, in offset order (the first one is the key's head)."""

    def __init__(self) -> None:
        self._key_of: dict[int, bytes] = {}
        self._pending: dict[bytes, list[int]] = {}

    def __len__(self) -> int:
        return len(self._key_of)

    def add(self, offset: int, key: bytes | None) -> None:
        """A record entered the in-flight window (keyless records are not tracked)."""
        if key is None or offset in self._key_of:
            return
        self._key_of[offset] = key
        offsets = self._pending.setdefault(key, [])
        if not offsets or offsets[-1] < offset:
            offsets.append(offset)
        else:  # a gap re-read below the window's end
            bisect.insort(offsets, offset)

    def knows(self, offset: int) -> bool:
        return offset in self._key_of

    def is_head(self, offset: int) -> bool:
        """Whether the record at ``offset`` may be acquired: it has no key, or it is the
        earliest non-terminal record of its key."""
        key = self._key_of.get(offset)
        if key is None:
            return True
        return self._pending[key][0] == offset

    def done(self, offset: int) -> None:
        """The record at ``offset`` reached a terminal state: its key's next record (if
        any) becomes the head."""
        key = self._key_of.pop(offset, None)
        if key is None:
            return
        offsets = self._pending[key]
        i = bisect.bisect_left(offsets, offset)
        if i < len(offsets) and offsets[i] == offset:
            del offsets[i]
        if not offsets:
            del self._pending[key]

    def forget_below(self, offset: int) -> None:
        """Records below the share partition's start offset left the window."""
        for o in [o for o in self._key_of if o < offset]:
            self.done(o)

    def keys_in_flight(self) -> int:
        return len(self._pending)

    def clear(self) -> None:
        self._key_of.clear()
        self._pending.clear()

    def offsets(self) -> Iterable[int]:
        return self._key_of.keys()
