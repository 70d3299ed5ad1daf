//! `.index` and `.timeindex`, as Apache Kafka's `OffsetIndex` and `TimeIndex` lay them out:
//!
//! ```text
//! .index      8-byte entries   0 relativeOffset u32 BE   4 position u32 BE
//! .timeindex 12-byte entries   0 timestamp i64 BE        8 relativeOffset u32 BE
//! ```
//!
//! `relativeOffset = offset - base offset of the segment`. Both files are sparse (one entry
//! per `index.interval.bytes` of log) and memory-mapped while open. Sizes follow Kafka's
//! `AbstractIndex`: a new file is preallocated to `max_index_size` rounded down to the entry
//! size; an existing file is mapped at its length as found, never grown at open, and its
//! entry count is that length divided by the entry size (Kafka trusts the length;
//! `sanity_check` and recovery deal with a bad file). Only [`OffsetIndex::resize`] and
//! friends change the length: the segment grows the indexes of the active segment and
//! trims them (to their entries) on roll, close and recovery, so that a crash leaves every
//! inactive segment's index exactly as it was written.
//!
//! Removed entries are zeroed (Kafka only moves its position): the preallocated tail of a
//! file that was not trimmed (a crash) is then the same for both backends. Bytes never
//! part of an entry (the stray tail of a misaligned file) are left as they are.
//!
//! Lookups are Kafka's `AbstractIndex.indexSlotRangeFor`: the warm tail (the last
//! `8192 / entry size` entries) is searched first, because in-sync readers look near the
//! end and those pages stay in the page cache.
//!
//! Not thread-safe: the owning segment serialises every call.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use memmap2::{MmapMut, MmapOptions};

use crate::error::{Error, Result};

/// Bytes per `.index` entry.
pub const OFFSET_INDEX_ENTRY_SIZE: usize = 8;
/// Bytes per `.timeindex` entry.
pub const TIME_INDEX_ENTRY_SIZE: usize = 12;
/// The warm section of an index: the entries in its last 8 KiB (Kafka's `warmEntries`).
pub const WARM_SECTION_BYTES: usize = 8192;
/// The largest relative offset an index can hold (Kafka stores it as an `int`).
pub const MAX_RELATIVE_OFFSET: i64 = i32::MAX as i64;
/// Kafka's `RecordBatch.NO_TIMESTAMP`.
pub const NO_TIMESTAMP: i64 = -1;
/// The granularity at which an entry counts as reaching a new page of the file (see
/// `write_slot`): the smallest page size; a larger one starts at one of its multiples.
const ALLOCATION_PAGE: usize = 4096;

fn round_down(n: usize, factor: usize) -> usize {
    n - n % factor
}

/// The memory-mapped file under both index kinds: length, entry count, growth and trim.
///
/// No descriptor is kept once the file is mapped (Kafka's `AbstractIndex` closes its
/// `RandomAccessFile` too): a broker with 10,000 partitions would otherwise hold two
/// descriptors per segment for its indexes alone. The rare operations that need one (a
/// resize, the `pwrite` of an entry reaching a new page, the fsync of a flush) open the
/// path for themselves; a segment's files are only renamed once it is closed.
struct IndexFile {
    path: PathBuf,
    mmap: MmapMut,
    entry_size: usize,
    entries: usize,
    max_index_size: usize,
    /// The file length at open when it was not a multiple of the entry size; reported by
    /// the sanity check until entries are truncated (truncate_to, reset), since from then
    /// on the file is rewritten from a known entry count.
    misaligned_length: Option<u64>,
}

impl IndexFile {
    fn open(path: &Path, entry_size: usize, max_index_size: usize) -> Result<IndexFile> {
        let (file, created) = match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(f) => (f, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(path)
                    .map_err(|e| Error::io(path, e))?,
                false,
            ),
            Err(e) => return Err(Error::io(path, e)),
        };
        if created && max_index_size < entry_size {
            let _ = std::fs::remove_file(path);
            return Err(Error::InvalidArgument(format!(
                "{}: invalid max index size {max_index_size} (entry size {entry_size})",
                path.display()
            )));
        }
        let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let length = usize::try_from(file_len).map_err(|_| {
            Error::CorruptIndex(format!(
                "{}: index file too large ({file_len} bytes)",
                path.display()
            ))
        })?;
        let entries = length / entry_size;
        let misaligned_length = (length % entry_size != 0).then_some(file_len);
        // A new file is preallocated; an existing one is mapped at its length as found
        // (Kafka's `createAndAssignMmap`): only `resize` grows it, for the active segment.
        let mapped = if created {
            let preallocated = round_down(max_index_size, entry_size);
            file.set_len(preallocated as u64)
                .map_err(|e| Error::io(path, e))?;
            preallocated
        } else {
            length
        };
        Ok(IndexFile {
            path: path.to_path_buf(),
            mmap: map(&file, path, mapped)?,
            entry_size,
            entries,
            max_index_size,
            misaligned_length,
        })
    }

    fn max_entries(&self) -> usize {
        self.mmap.len() / self.entry_size
    }

    /// The file, opened for reading and writing (never created: it exists since `open`).
    fn open_file(&self) -> Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| Error::io(&self.path, e))
    }

    fn slot(&self, n: usize) -> &[u8] {
        &self.mmap[n * self.entry_size..(n + 1) * self.entry_size]
    }

    /// Resize the file (and its mapping) to `new_size` rounded down to the entry size,
    /// never below the bytes the entries use.
    fn resize(&mut self, new_size: usize) -> Result<()> {
        let target = round_down(new_size, self.entry_size).max(self.entries * self.entry_size);
        if target == self.mmap.len() {
            return Ok(());
        }
        let file = self.open_file()?;
        file.set_len(target as u64)
            .map_err(|e| Error::io(&self.path, e))?;
        self.mmap = map(&file, &self.path, target)?;
        Ok(())
    }

    /// Remove every entry and grow the file back to the max index size, all zeros. The
    /// file system zeroes it (cut to nothing, then extended sparse) rather than a write
    /// through the mapping: an index found preallocated after an unclean shutdown counts
    /// every slot of its 10 MiB as an entry, and zeroing those by hand touched every page
    /// (tens of ms per segment at start-up, for nothing).
    fn reset(&mut self) -> Result<()> {
        self.misaligned_length = None;
        self.entries = 0;
        let target = round_down(self.max_index_size, self.entry_size);
        let file = self.open_file()?;
        file.set_len(0).map_err(|e| Error::io(&self.path, e))?;
        file.set_len(target as u64)
            .map_err(|e| Error::io(&self.path, e))?;
        self.mmap = map(&file, &self.path, target)?;
        Ok(())
    }

    /// Keep the first `entries` entries; the removed ones are zeroed.
    fn truncate_to_entries(&mut self, entries: usize) {
        self.misaligned_length = None;
        if entries < self.entries {
            let es = self.entry_size;
            let end = (self.entries * es).min(self.mmap.len());
            self.mmap[entries * es..end].fill(0);
            self.entries = entries;
        }
    }

    /// Write the next entry. An entry that reaches into a page no earlier entry touched is
    /// first written with `pwrite`: the file is preallocated sparse, and storing into an
    /// unbacked page of a full file system (a full tmpfs) through the mapping raises
    /// SIGBUS, which would kill the process; `pwrite` allocates the page or fails with
    /// ENOSPC, an error the caller handles (the log directory goes offline).
    fn write_slot(&mut self, bytes: &[u8]) -> Result<()> {
        let start = self.entries * self.entry_size;
        let end = start + bytes.len();
        let new_page = start == 0 || (start - 1) / ALLOCATION_PAGE != (end - 1) / ALLOCATION_PAGE;
        if new_page {
            self.open_file()?
                .write_all_at(bytes, start as u64)
                .map_err(|e| Error::io(&self.path, e))?;
        }
        self.mmap[start..end].copy_from_slice(bytes);
        self.entries += 1;
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.mmap.flush().map_err(|e| Error::io(&self.path, e))?;
        File::open(&self.path)
            .and_then(|file| file.sync_all())
            .map_err(|e| Error::io(&self.path, e))
    }

    fn misaligned_check(&self) -> Result<()> {
        match self.misaligned_length {
            Some(length) => Err(Error::CorruptIndex(format!(
                "{}: corrupt index: length {length} is not a multiple of the entry size {}",
                self.path.display(),
                self.entry_size
            ))),
            None => Ok(()),
        }
    }

    /// Kafka's `indexSlotRangeFor(..., LARGEST_LOWER_BOUND)`: the slot of the largest entry
    /// whose key is <= `target`, searching the warm tail first. `None` when the index is
    /// empty or its first key is above `target`.
    fn largest_lower_bound(&self, target: i64, key: impl Fn(usize) -> i64) -> Option<usize> {
        if self.entries == 0 {
            return None;
        }
        let warm_entries = WARM_SECTION_BYTES / self.entry_size;
        let first_hot = (self.entries - 1).saturating_sub(warm_entries);
        if key(first_hot) < target {
            return Some(binary_search(target, &key, first_hot, self.entries - 1));
        }
        if key(0) > target {
            return None;
        }
        Some(binary_search(target, &key, 0, first_hot))
    }
}

/// Kafka's `binarySearch` for the largest lower bound in `[begin, end]`.
fn binary_search(target: i64, key: &impl Fn(usize) -> i64, begin: usize, end: usize) -> usize {
    let (mut lo, mut hi) = (begin, end);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let found = key(mid);
        if found > target {
            hi = mid - 1;
        } else if found < target {
            lo = mid;
        } else {
            return mid;
        }
    }
    lo
}

fn map(file: &File, path: &Path, len: usize) -> Result<MmapMut> {
    // SAFETY: the index file is owned by this process's segment (Kafka's model: one log
    // directory, one owner); we never shrink it below the mapped length without remapping
    // first, and every access stays below `len`, which equals the file length we just set
    // or read. Another process truncating the file under us would be outside that contract.
    let mmap =
        unsafe { MmapOptions::new().len(len).map_mut(file) }.map_err(|e| Error::io(path, e))?;
    // Lookups are binary searches and appends touch one page at a time: no read-ahead.
    // With it, the first read of a preallocated (sparse) index found after an unclean
    // shutdown faulted in and zeroed a whole read-ahead window of page cache, ~10 ms a
    // segment at start-up. The advice is only a hint: its failure changes nothing.
    if len > 0 {
        let _ = mmap.advise(memmap2::Advice::Random);
    }
    Ok(mmap)
}

fn relative_offset(base_offset: i64, offset: i64, path: &Path) -> Result<u32> {
    let relative = offset.wrapping_sub(base_offset);
    if offset < base_offset || relative > MAX_RELATIVE_OFFSET {
        return Err(Error::InvalidOffset(format!(
            "{}: offset {offset} does not fit an index with base offset {base_offset}",
            path.display()
        )));
    }
    Ok(relative as u32)
}

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn be_i64(b: &[u8]) -> i64 {
    i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// The methods `OffsetIndex` and `TimeIndex` share: both are an [`IndexFile`] of fixed-size
/// slots (`inner`) above a `base_offset`, whose entries are ordered by offset (`offset_at`).
macro_rules! index_file_methods {
    ($index:ty) => {
        impl $index {
            pub fn path(&self) -> &Path {
                &self.inner.path
            }
            pub fn base_offset(&self) -> i64 {
                self.base_offset
            }
            pub fn entries(&self) -> usize {
                self.inner.entries
            }
            pub fn max_entries(&self) -> usize {
                self.inner.max_entries()
            }
            /// Current length of the file in bytes.
            pub fn file_len(&self) -> usize {
                self.inner.mmap.len()
            }

            /// Remove every entry with offset >= `offset` (Kafka's `truncateTo`, which
            /// searches the entries by offset).
            pub fn truncate_to(&mut self, offset: i64) {
                let new_entries = match self
                    .inner
                    .largest_lower_bound(offset, |n| self.offset_at(n))
                {
                    None => 0,
                    Some(slot) if self.offset_at(slot) == offset => slot,
                    Some(slot) => slot + 1,
                };
                self.inner.truncate_to_entries(new_entries);
            }

            /// Remove every entry.
            pub fn truncate(&mut self) {
                self.inner.truncate_to_entries(0);
            }

            /// Keep the first `entries` entries (undo the entries of a failed append).
            pub fn keep_entries(&mut self, entries: usize) {
                self.inner.truncate_to_entries(entries);
            }

            /// Remove every entry and grow the file back to the max index size.
            pub fn reset(&mut self) -> Result<()> {
                self.inner.reset()
            }

            /// Resize the file to `new_size` rounded down to the entry size (never below
            /// the entries).
            pub fn resize(&mut self, new_size: usize) -> Result<()> {
                self.inner.resize(new_size)
            }

            pub fn resize_to_max(&mut self) -> Result<()> {
                self.inner.resize(self.inner.max_index_size)
            }

            /// Trim the file to its entries.
            pub fn trim(&mut self) -> Result<()> {
                self.inner.resize(0)
            }

            /// msync the mapping and fsync the file.
            pub fn flush(&self) -> Result<()> {
                self.inner.flush()
            }
        }
    };
}

index_file_methods!(OffsetIndex);
index_file_methods!(TimeIndex);

/// `.index`: sparse map from offset to the byte position of the batch holding it.
pub struct OffsetIndex {
    inner: IndexFile,
    base_offset: i64,
}

impl OffsetIndex {
    /// Open (creating and preallocating if missing) the offset index at `path`.
    pub fn open(path: impl AsRef<Path>, base_offset: i64, max_index_size: usize) -> Result<Self> {
        Ok(OffsetIndex {
            inner: IndexFile::open(path.as_ref(), OFFSET_INDEX_ENTRY_SIZE, max_index_size)?,
            base_offset,
        })
    }

    /// Full when entries >= max entries.
    pub fn is_full(&self) -> bool {
        self.inner.entries >= self.inner.max_entries()
    }

    fn offset_at(&self, n: usize) -> i64 {
        self.base_offset + be_u32(&self.inner.slot(n)[0..4]) as i64
    }

    fn position_at(&self, n: usize) -> u32 {
        be_u32(&self.inner.slot(n)[4..8])
    }

    /// Entry `n` as `(absolute offset, position)`.
    pub fn entry(&self, n: usize) -> Option<(i64, u32)> {
        (n < self.inner.entries).then(|| (self.offset_at(n), self.position_at(n)))
    }

    pub fn last_entry(&self) -> Option<(i64, u32)> {
        self.inner
            .entries
            .checked_sub(1)
            .and_then(|n| self.entry(n))
    }

    /// Kafka's `lastOffset`: the last entry's offset, the base offset when empty.
    pub fn last_offset(&self) -> i64 {
        self.last_entry().map_or(self.base_offset, |(o, _)| o)
    }

    /// Largest entry with offset <= `target`; `(base_offset, 0)` if none.
    pub fn lookup(&self, target: i64) -> (i64, u32) {
        match self
            .inner
            .largest_lower_bound(target, |n| self.offset_at(n))
        {
            Some(slot) => (self.offset_at(slot), self.position_at(slot)),
            None => (self.base_offset, 0),
        }
    }

    /// Position of the last entry whose position is <= `target` (positions grow with
    /// offsets), `None` if there is none: a batch start at or before `target`.
    pub fn lookup_position(&self, target: u64) -> Option<u32> {
        let target = i64::try_from(target).unwrap_or(i64::MAX);
        self.inner
            .largest_lower_bound(target, |n| self.position_at(n) as i64)
            .map(|slot| self.position_at(slot))
    }

    /// Append `(offset, position)`. `IndexFull` when full; `InvalidOffset` when the offset
    /// is not above the last one or does not fit as a relative offset.
    pub fn append(&mut self, offset: i64, position: u64) -> Result<()> {
        if self.is_full() {
            return Err(Error::IndexFull(format!(
                "{}: attempt to append to a full index ({} entries)",
                self.path().display(),
                self.entries()
            )));
        }
        if let Some((last, _)) = self.last_entry() {
            if offset <= last {
                return Err(Error::InvalidOffset(format!(
                    "{}: attempt to append offset {offset} no larger than the last offset {last}",
                    self.path().display()
                )));
            }
        }
        let relative = relative_offset(self.base_offset, offset, self.path())?;
        let position = u32::try_from(position).map_err(|_| {
            Error::InvalidArgument(format!(
                "{}: position {position} does not fit the index",
                self.path().display()
            ))
        })?;
        let mut slot = [0u8; OFFSET_INDEX_ENTRY_SIZE];
        slot[0..4].copy_from_slice(&relative.to_be_bytes());
        slot[4..8].copy_from_slice(&position.to_be_bytes());
        self.inner.write_slot(&slot)?;
        Ok(())
    }

    /// `CorruptIndex` if the file length (at open) was not a multiple of 8, or offsets are
    /// not strictly increasing and >= the base offset, or positions are not strictly
    /// increasing or lie beyond `log_size`.
    pub fn sanity_check(&self, log_size: u64) -> Result<()> {
        self.check_length()?;
        let path = self.path().display();
        let mut previous: Option<(i64, u32)> = None;
        for n in 0..self.entries() {
            let (offset, position) = (self.offset_at(n), self.position_at(n));
            if offset < self.base_offset {
                return Err(Error::CorruptIndex(format!(
                    "{path}: corrupt index: entry {n} has offset {offset} below the base offset {}",
                    self.base_offset
                )));
            }
            if let Some((prev_offset, prev_position)) = previous {
                if offset <= prev_offset {
                    return Err(Error::CorruptIndex(format!(
                        "{path}: corrupt index: entry {n} has offset {offset} not above the previous {prev_offset}"
                    )));
                }
                if position <= prev_position {
                    return Err(Error::CorruptIndex(format!(
                        "{path}: corrupt index: entry {n} has position {position} not above the previous {prev_position}"
                    )));
                }
            }
            if position as u64 > log_size {
                return Err(Error::CorruptIndex(format!(
                    "{path}: corrupt index: entry {n} has position {position} beyond the log size {log_size}"
                )));
            }
            previous = Some((offset, position));
        }
        Ok(())
    }

    /// `CorruptIndex` if the file length found at open was not a multiple of 8.
    pub fn check_length(&self) -> Result<()> {
        self.inner.misaligned_check()
    }

    /// Every entry as `(absolute offset, position)`.
    pub fn to_vec(&self) -> Vec<(i64, u32)> {
        (0..self.entries())
            .map(|n| (self.offset_at(n), self.position_at(n)))
            .collect()
    }
}

/// `.timeindex`: sparse map from a timestamp to the offset from which to search for it.
pub struct TimeIndex {
    inner: IndexFile,
    base_offset: i64,
}

impl TimeIndex {
    /// Open (creating and preallocating if missing) the time index at `path`.
    pub fn open(path: impl AsRef<Path>, base_offset: i64, max_index_size: usize) -> Result<Self> {
        Ok(TimeIndex {
            inner: IndexFile::open(path.as_ref(), TIME_INDEX_ENTRY_SIZE, max_index_size)?,
            base_offset,
        })
    }

    /// Full when entries >= max entries - 1: the last slot is kept for the entry that
    /// `seal`/`close` add.
    pub fn is_full(&self) -> bool {
        self.inner.entries + 1 >= self.inner.max_entries()
    }

    fn timestamp_at(&self, n: usize) -> i64 {
        be_i64(&self.inner.slot(n)[0..8])
    }

    fn offset_at(&self, n: usize) -> i64 {
        self.base_offset + be_u32(&self.inner.slot(n)[8..12]) as i64
    }

    /// Entry `n` as `(timestamp, absolute offset)`.
    pub fn entry(&self, n: usize) -> Option<(i64, i64)> {
        (n < self.inner.entries).then(|| (self.timestamp_at(n), self.offset_at(n)))
    }

    /// The last entry; `None` when empty.
    pub fn last_entry(&self) -> Option<(i64, i64)> {
        self.inner
            .entries
            .checked_sub(1)
            .and_then(|n| self.entry(n))
    }

    /// The timestamp a new entry must exceed: the last entry's, -1 when empty (Kafka's
    /// `lastEntry` is `(NO_TIMESTAMP, baseOffset)` for an empty index).
    pub fn last_timestamp(&self) -> i64 {
        self.last_entry().map_or(NO_TIMESTAMP, |(t, _)| t)
    }

    /// Largest entry with timestamp <= `target`; `(-1, base_offset)` if none.
    pub fn lookup(&self, target: i64) -> (i64, i64) {
        match self
            .inner
            .largest_lower_bound(target, |n| self.timestamp_at(n))
        {
            Some(slot) => (self.timestamp_at(slot), self.offset_at(slot)),
            None => (NO_TIMESTAMP, self.base_offset),
        }
    }

    /// Would `maybe_append(timestamp, ..)` write an entry?
    pub fn would_append(&self, timestamp: i64) -> bool {
        timestamp > self.last_timestamp()
    }

    /// Kafka's `maybeAppend`: unless `skip_full_check` (seal/close/recover, which may use
    /// the reserved last slot and, on a trimmed file, grow it by one entry), a full index is
    /// `IndexFull` whether or not an entry would be written; an offset below the last
    /// entry's is `InvalidOffset`; then `(timestamp, offset)` is appended if `timestamp` is
    /// greater than the last entry's (-1 when empty). Returns whether it was appended.
    pub fn maybe_append(
        &mut self,
        timestamp: i64,
        offset: i64,
        skip_full_check: bool,
    ) -> Result<bool> {
        if !skip_full_check && self.is_full() {
            return Err(Error::IndexFull(format!(
                "{}: attempt to append to a full time index ({} entries)",
                self.path().display(),
                self.entries()
            )));
        }
        if let Some((_, last_offset)) = self.last_entry() {
            if offset < last_offset {
                return Err(Error::InvalidOffset(format!(
                    "{}: attempt to append offset {offset} below the last time-indexed offset {last_offset}",
                    self.path().display()
                )));
            }
        }
        if !self.would_append(timestamp) {
            return Ok(false);
        }
        let relative = relative_offset(self.base_offset, offset, self.path())?;
        if self.inner.entries >= self.inner.max_entries() {
            let grown = (self.inner.entries + 1) * TIME_INDEX_ENTRY_SIZE;
            self.inner.resize(grown)?;
        }
        let mut slot = [0u8; TIME_INDEX_ENTRY_SIZE];
        slot[0..8].copy_from_slice(&timestamp.to_be_bytes());
        slot[8..12].copy_from_slice(&relative.to_be_bytes());
        self.inner.write_slot(&slot)?;
        Ok(true)
    }

    /// `CorruptIndex` if the file length (at open) was not a multiple of 12, timestamps
    /// are not strictly increasing, or offsets are not non-decreasing and >= the base offset.
    pub fn sanity_check(&self) -> Result<()> {
        self.check_length()?;
        let path = self.path().display();
        let mut previous: Option<(i64, i64)> = None;
        for n in 0..self.entries() {
            let (timestamp, offset) = (self.timestamp_at(n), self.offset_at(n));
            if offset < self.base_offset {
                return Err(Error::CorruptIndex(format!(
                    "{path}: corrupt time index: entry {n} has offset {offset} below the base offset {}",
                    self.base_offset
                )));
            }
            if let Some((prev_timestamp, prev_offset)) = previous {
                if timestamp <= prev_timestamp {
                    return Err(Error::CorruptIndex(format!(
                        "{path}: corrupt time index: entry {n} has timestamp {timestamp} not above the previous {prev_timestamp}"
                    )));
                }
                if offset < prev_offset {
                    return Err(Error::CorruptIndex(format!(
                        "{path}: corrupt time index: entry {n} has offset {offset} below the previous {prev_offset}"
                    )));
                }
            }
            previous = Some((timestamp, offset));
        }
        Ok(())
    }

    /// `CorruptIndex` if the file length found at open was not a multiple of 12.
    pub fn check_length(&self) -> Result<()> {
        self.inner.misaligned_check()
    }

    /// Every entry as `(timestamp, absolute offset)`.
    pub fn to_vec(&self) -> Vec<(i64, i64)> {
        (0..self.entries())
            .map(|n| (self.timestamp_at(n), self.offset_at(n)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset_index(dir: &Path, base: i64, max: usize) -> OffsetIndex {
        OffsetIndex::open(dir.join("0.index"), base, max).unwrap()
    }

    fn time_index(dir: &Path, base: i64, max: usize) -> TimeIndex {
        TimeIndex::open(dir.join("0.timeindex"), base, max).unwrap()
    }

    /// Largest lower bound by brute force.
    fn brute<T: Copy>(entries: &[(i64, T)], target: i64) -> Option<(i64, T)> {
        entries.iter().rev().find(|(k, _)| *k <= target).copied()
    }

    #[test]
    fn new_index_is_preallocated_to_max_rounded_down() {
        let dir = tempfile::tempdir().unwrap();
        let oi = offset_index(dir.path(), 0, 100);
        let ti = time_index(dir.path(), 0, 100);
        assert_eq!(std::fs::metadata(oi.path()).unwrap().len(), 96);
        assert_eq!(std::fs::metadata(ti.path()).unwrap().len(), 96);
        assert_eq!((oi.max_entries(), ti.max_entries()), (12, 8));
        assert_eq!((oi.entries(), ti.entries()), (0, 0));
        let small = OffsetIndex::open(dir.path().join("1.index"), 0, 7);
        assert!(matches!(small, Err(Error::InvalidArgument(_))));
        assert!(!dir.path().join("1.index").exists());
    }

    #[test]
    fn offset_lookup_largest_lower_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut oi = offset_index(dir.path(), 1000, 1024);
        assert_eq!(oi.lookup(5000), (1000, 0));
        for i in 1..=10i64 {
            oi.append(1000 + i * 10, (i * 100) as u64).unwrap();
        }
        assert_eq!(oi.lookup(999), (1000, 0));
        assert_eq!(oi.lookup(1009), (1000, 0));
        assert_eq!(oi.lookup(1010), (1010, 100));
        assert_eq!(oi.lookup(1055), (1050, 500));
        assert_eq!(oi.lookup(i64::MAX), (1100, 1000));
        assert_eq!(oi.last_offset(), 1100);
        // Appends must go forward and fit a relative offset.
        assert!(matches!(
            oi.append(1100, 2000),
            Err(Error::InvalidOffset(_))
        ));
        assert!(matches!(oi.append(999, 2000), Err(Error::InvalidOffset(_))));
        assert!(matches!(
            oi.append(1000 + MAX_RELATIVE_OFFSET + 1, 2000),
            Err(Error::InvalidOffset(_))
        ));
        // The bytes on disk: relative offset, position, big-endian.
        oi.flush().unwrap();
        let bytes = std::fs::read(oi.path()).unwrap();
        assert_eq!(&bytes[..8], &[0, 0, 0, 10, 0, 0, 0, 100]);
    }

    #[test]
    fn lookups_across_the_warm_and_cold_sections() {
        let dir = tempfile::tempdir().unwrap();
        // 3000 offset entries: warm section = last 1024 + 1, cold = the rest.
        let mut oi = offset_index(dir.path(), 0, 3000 * 8);
        let mut expected = Vec::new();
        for i in 0..3000i64 {
            oi.append(i * 3 + 1, (i * 7) as u64).unwrap();
            expected.push((i * 3 + 1, (i * 7) as u32));
        }
        assert!(oi.is_full());
        assert!(matches!(oi.append(100_000, 1), Err(Error::IndexFull(_))));
        for target in -5..9010i64 {
            let want = brute(&expected, target).unwrap_or((0, 0));
            assert_eq!(oi.lookup(target), want, "offset target {target}");
        }
        // 2000 time entries: warm section = last 682 + 1.
        let mut ti = time_index(dir.path(), 0, 2001 * 12);
        let mut expected = Vec::new();
        for i in 0..2000i64 {
            assert!(ti.maybe_append(i * 5 + 100, i * 2, false).unwrap());
            expected.push((i * 5 + 100, i * 2));
        }
        assert!(ti.is_full());
        for target in 90..10_110i64 {
            let want = brute(&expected, target).unwrap_or((-1, 0));
            assert_eq!(ti.lookup(target), want, "time target {target}");
        }
    }

    #[test]
    fn full_rules_keep_the_last_time_slot() {
        let dir = tempfile::tempdir().unwrap();
        let mut oi = offset_index(dir.path(), 0, 32);
        for i in 0..4 {
            assert!(!oi.is_full());
            oi.append(i, i as u64).unwrap();
        }
        assert!(oi.is_full());
        assert!(matches!(oi.append(9, 9), Err(Error::IndexFull(_))));

        let mut ti = time_index(dir.path(), 0, 36);
        assert!(!ti.is_full());
        ti.maybe_append(10, 0, false).unwrap();
        ti.maybe_append(20, 1, false).unwrap();
        assert!(ti.is_full(), "entries >= max - 1");
        assert!(matches!(
            ti.maybe_append(30, 2, false),
            Err(Error::IndexFull(_))
        ));
        // Kafka checks fullness first, even when no entry would be written.
        assert!(matches!(
            ti.maybe_append(20, 2, false),
            Err(Error::IndexFull(_))
        ));
        assert!(!ti.maybe_append(20, 2, true).unwrap());
        assert!(matches!(
            ti.maybe_append(50, 0, true),
            Err(Error::InvalidOffset(_))
        ));
        // The reserved slot is for seal/close.
        assert!(ti.maybe_append(30, 2, true).unwrap());
        assert_eq!(ti.entries(), 3);
        // A trimmed index grows by one entry for a final entry.
        ti.trim().unwrap();
        assert!(ti.maybe_append(40, 3, true).unwrap());
        assert_eq!(ti.file_len(), 48);
    }

    #[test]
    fn time_index_appends_only_greater_timestamps() {
        let dir = tempfile::tempdir().unwrap();
        let mut ti = time_index(dir.path(), 50, 120);
        assert_eq!(ti.lookup(0), (-1, 50));
        // Empty: the last timestamp is -1, so -1 is not appended and 0 is.
        assert!(!ti.maybe_append(-1, 50, false).unwrap());
        assert!(ti.maybe_append(0, 50, false).unwrap());
        assert!(!ti.maybe_append(0, 51, false).unwrap());
        assert!(ti.maybe_append(7, 53, false).unwrap());
        assert_eq!(ti.to_vec(), vec![(0, 50), (7, 53)]);
        assert_eq!(ti.last_entry(), Some((7, 53)));
        assert_eq!(ti.lookup(6), (0, 50));
        assert_eq!(ti.lookup(-7), (-1, 50));
        ti.flush().unwrap();
        let bytes = std::fs::read(ti.path()).unwrap();
        assert_eq!(&bytes[12..24], &[0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 3]);
    }

    #[test]
    fn truncate_to_removes_and_zeroes_entries_at_or_above() {
        let dir = tempfile::tempdir().unwrap();
        let mut oi = offset_index(dir.path(), 0, 80);
        let mut ti = time_index(dir.path(), 0, 120);
        for i in 1..=5i64 {
            oi.append(i * 10, (i * 100) as u64).unwrap();
            ti.maybe_append(i * 1000, i * 10, false).unwrap();
        }
        oi.truncate_to(1000);
        assert_eq!(oi.entries(), 5, "above the last entry: no effect");
        oi.truncate_to(30);
        assert_eq!(
            oi.to_vec(),
            vec![(10, 100), (20, 200)],
            "exact entry removed"
        );
        oi.truncate_to(15);
        assert_eq!(oi.to_vec(), vec![(10, 100)], "between entries");
        ti.truncate_to(35);
        assert_eq!(ti.to_vec(), vec![(1000, 10), (2000, 20), (3000, 30)]);
        ti.truncate_to(10);
        assert_eq!(ti.entries(), 0);
        oi.truncate_to(5);
        assert_eq!(oi.entries(), 0, "below the first entry");
        // Removed entries are zeroed.
        oi.flush().unwrap();
        ti.flush().unwrap();
        assert!(std::fs::read(oi.path()).unwrap().iter().all(|&b| b == 0));
        assert!(std::fs::read(ti.path()).unwrap().iter().all(|&b| b == 0));
        // Reset grows back to the max size.
        oi.append(7, 7).unwrap();
        oi.trim().unwrap();
        assert_eq!(oi.file_len(), 8);
        oi.reset().unwrap();
        assert_eq!((oi.entries(), oi.file_len()), (0, 80));
        oi.flush().unwrap();
        assert!(std::fs::read(oi.path()).unwrap().iter().all(|&b| b == 0));
        // a full preallocated file found at open (every slot counts as an entry) resets
        // to zeros too
        drop(oi);
        std::fs::write(dir.path().join("full.index"), [0xffu8; 80]).unwrap();
        let mut full = OffsetIndex::open(dir.path().join("full.index"), 0, 80).unwrap();
        assert_eq!(full.entries(), 10);
        full.reset().unwrap();
        assert_eq!((full.entries(), full.file_len()), (0, 80));
        assert!(std::fs::read(full.path()).unwrap().iter().all(|&b| b == 0));
    }

    #[test]
    fn reopen_keeps_entries_and_length_until_resized() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut oi = offset_index(dir.path(), 0, 800);
            oi.append(3, 10).unwrap();
            oi.append(9, 20).unwrap();
            oi.trim().unwrap();
            assert_eq!(std::fs::metadata(oi.path()).unwrap().len(), 16);
        }
        let mut oi = offset_index(dir.path(), 0, 800);
        assert_eq!(oi.to_vec(), vec![(3, 10), (9, 20)]);
        // Mapped as found: not grown, so full until resized.
        assert_eq!(oi.file_len(), 16);
        assert_eq!(std::fs::metadata(oi.path()).unwrap().len(), 16);
        assert!(oi.is_full());
        oi.sanity_check(20).unwrap();
        assert!(matches!(oi.sanity_check(19), Err(Error::CorruptIndex(_))));
        oi.resize_to_max().unwrap();
        assert_eq!((oi.file_len(), oi.max_entries()), (800, 100));
        assert_eq!(std::fs::metadata(oi.path()).unwrap().len(), 800);
        assert!(!oi.is_full());
        oi.append(12, 30).unwrap();
        // Rounded down to the entry size, never below the entries.
        oi.resize(45).unwrap();
        assert_eq!(oi.file_len(), 40);
        oi.resize(0).unwrap();
        assert_eq!(oi.file_len(), 24);
        assert_eq!(oi.to_vec(), vec![(3, 10), (9, 20), (12, 30)]);
        // An existing empty file stays empty: an index with no room.
        std::fs::write(dir.path().join("1.timeindex"), b"").unwrap();
        let ti = TimeIndex::open(dir.path().join("1.timeindex"), 0, 120).unwrap();
        assert_eq!((ti.file_len(), ti.entries(), ti.is_full()), (0, 0, true));
    }

    #[test]
    fn sanity_checks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.index");
        // A misaligned file: 2 entries + 3 stray bytes.
        let mut raw = vec![0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 9, 1, 2, 3];
        std::fs::write(&path, &raw).unwrap();
        let mut oi = OffsetIndex::open(&path, 0, 80).unwrap();
        assert_eq!(oi.entries(), 2);
        assert_eq!(std::fs::read(&path).unwrap(), raw, "open changes nothing");
        let err = oi.sanity_check(100).unwrap_err();
        assert!(matches!(&err, Error::CorruptIndex(m) if m.contains("0.index")));
        oi.trim().unwrap();
        assert!(
            oi.sanity_check(100).is_err(),
            "trimming keeps the length found at open"
        );
        oi.truncate_to(1000);
        oi.sanity_check(100).unwrap();
        drop(oi);
        // Offsets going backwards.
        raw.truncate(16);
        raw[3] = 3;
        std::fs::write(&path, &raw).unwrap();
        let oi = OffsetIndex::open(&path, 0, 80).unwrap();
        assert!(matches!(oi.sanity_check(100), Err(Error::CorruptIndex(_))));
        // An untrimmed index after a crash: trailing zero entries.
        let tpath = dir.path().join("0.timeindex");
        let mut t = vec![0u8; 36];
        t[7] = 5; // (5, 0)
        std::fs::write(&tpath, &t).unwrap();
        let ti = TimeIndex::open(&tpath, 0, 36).unwrap();
        assert_eq!(ti.entries(), 3);
        assert!(matches!(ti.sanity_check(), Err(Error::CorruptIndex(_))));
    }
}
