//! One log segment: `<dir>/<20-digit base offset>.log` with its `.index` and `.timeindex`
//! (Kafka's `LogSegment` over `FileRecords`, `OffsetIndex` and `TimeIndex`).
//!
//! The contract is the `Segment` class of `python/kafkacore/_native.pyi`; the pure-Python
//! twin implements the same rules, and both must produce identical files. In short:
//!
//! * **Index rules** (Kafka's `LogSegment.recover`, applied per batch on append and on
//!   recovery): before counting a batch, if `bytes_since_last_entry > index_interval_bytes`,
//!   append `(batch last offset, batch position)` to the offset index and
//!   `(max_timestamp, offset_of_max_timestamp)` to the time index (only if greater than its
//!   last timestamp, -1 when empty), then reset the counter; then add the batch size.
//!   `max_timestamp` is updated from the batch before that check.
//! * **Index sizes** (Kafka's `LogSegment`/`AbstractIndex`): a new index file is
//!   preallocated to `max_index_size` (rounded down to the entry size); an existing one is
//!   mapped at its length as found, so an inactive segment opened on load never touches
//!   its trimmed indexes. [`Segment::resize_indexes`] grows the indexes of the segment that
//!   becomes active after loading; `truncate_to` grows them too (the truncated segment is
//!   the active one); `seal`, `close` and `recover` trim them to their entries.
//! * **Walks** use [`shallow::next_batch`] (end of the walk at 17 or fewer remaining
//!   bytes or at a partial tail; corrupt at a size below 14 or an unknown magic) plus a
//!   size check against the magic's header (v2: 49, v1: 22, v0: 14), reading the file
//!   with `pread` in growing chunks. Lookups raise `Corrupt` at a corrupt batch; opening,
//!   reading the first batch's timestamp and `recover` stop there silently.
//!
//! Thread-safety: a `Segment` is not thread-safe (one writer, no reader concurrent with a
//! writer). `&self` methods only read (mmap and `pread`), `&mut self` methods write.
//!
//! File naming lives here too, as Kafka's `LogFileUtils`: [`file_name`] and the suffixes.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::batch::{self, Record};
use crate::error::{Error, Result};
use crate::index::{
    OffsetIndex, TimeIndex, MAX_RELATIVE_OFFSET, NO_TIMESTAMP, TIME_INDEX_ENTRY_SIZE,
};
use crate::shallow::{
    self, ShallowBatch, HEADER_SIZE_UP_TO_MAGIC, RECORD_OVERHEAD_V0, RECORD_OVERHEAD_V1,
};

pub const LOG_FILE_SUFFIX: &str = ".log";
pub const INDEX_FILE_SUFFIX: &str = ".index";
pub const TIME_INDEX_FILE_SUFFIX: &str = ".timeindex";
pub const TXN_INDEX_FILE_SUFFIX: &str = ".txnindex";
pub const PRODUCER_SNAPSHOT_FILE_SUFFIX: &str = ".snapshot";
pub const DELETED_FILE_SUFFIX: &str = ".deleted";
pub const CLEANED_FILE_SUFFIX: &str = ".cleaned";
pub const SWAP_FILE_SUFFIX: &str = ".swap";

/// Kafka's `LogFileUtils.filenamePrefixFromOffset` + suffix: the offset zero-padded to 20
/// digits, e.g. `00000000000000000000.log`.
pub fn file_name(offset: i64, suffix: &str) -> String {
    format!("{offset:020}{suffix}")
}

/// Defaults of `Segment(...)` (Kafka's `index.interval.bytes`, `segment.index.bytes`).
pub const DEFAULT_INDEX_INTERVAL_BYTES: i64 = 4096;
pub const DEFAULT_MAX_INDEX_SIZE: i64 = 10 * 1024 * 1024;

/// A segment cannot grow past what a `u32` index position and Kafka's `int` sizes hold.
pub const MAX_SEGMENT_BYTES: u64 = i32::MAX as u64;

/// First read of a lookup scan; each refill doubles, up to the maximum.
const SCAN_CHUNK_MIN: usize = 16 * 1024;
const SCAN_CHUNK_MAX: usize = 8 * 1024 * 1024;
/// A header walk refills its window with this many bytes after a batch of `size`
/// bytes: the header alone after a big batch, a chunk of several headers after small ones.
fn header_chunk(size: usize) -> usize {
    if size >= SCAN_CHUNK_MIN / 4 {
        batch::RECORD_BATCH_OVERHEAD
    } else {
        SCAN_CHUNK_MIN
    }
}
/// Recovery reads big chunks from the start.
const RECOVER_CHUNK: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentConfig {
    pub index_interval_bytes: i64,
    pub max_index_size: i64,
}

impl Default for SegmentConfig {
    fn default() -> Self {
        SegmentConfig {
            index_interval_bytes: DEFAULT_INDEX_INTERVAL_BYTES,
            max_index_size: DEFAULT_MAX_INDEX_SIZE,
        }
    }
}

/// What `append` returns (see `Segment.append` in `_native.pyi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendResult {
    pub first_offset: i64,
    pub last_offset: i64,
    pub max_timestamp: i64,
    pub offset_of_max_timestamp: i64,
    pub bytes_written: u64,
}

/// A batch located in the log: `(last_offset, position, size)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetPosition {
    pub last_offset: i64,
    pub position: u64,
    pub size: u64,
}

/// A record found by timestamp: `(timestamp, offset, leader_epoch)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampAndOffset {
    pub timestamp: i64,
    pub offset: i64,
    pub leader_epoch: i32,
}

/// The state the index rules carry from batch to batch.
#[derive(Debug, Clone, Copy)]
struct IndexState {
    bytes_since_last_entry: i64,
    max_timestamp: i64,
    offset_of_max_timestamp: i64,
}

struct OpenFiles {
    log: File,
    offset_index: OffsetIndex,
    time_index: TimeIndex,
}

/// One batch of an append, after offset assignment.
struct PlannedBatch {
    position: usize,
    base_offset: i64,
    last_offset: i64,
    max_timestamp: i64,
    size: usize,
}

pub struct Segment {
    base_offset: i64,
    log_path: PathBuf,
    index_path: PathBuf,
    time_index_path: PathBuf,
    /// The log path as errors name it.
    context: String,
    index_interval_bytes: i64,
    max_index_size: i64,
    files: Option<OpenFiles>,
    size: u64,
    next_offset: i64,
    rolling_based_timestamp: i64,
    state: IndexState,
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment")
            .field("log_path", &self.log_path)
            .field("size", &self.size)
            .field("next_offset", &self.next_offset)
            .field("closed", &self.files.is_none())
            .finish()
    }
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

impl Segment {
    /// Open the segment with base offset `base_offset` in `dir`, creating missing files.
    pub fn open(dir: impl AsRef<Path>, base_offset: i64, config: SegmentConfig) -> Result<Segment> {
        if base_offset < 0 {
            return Err(Error::InvalidArgument(format!(
                "base offset must be >= 0, got {base_offset}"
            )));
        }
        let i32_range = 0..=i32::MAX as i64;
        if !i32_range.contains(&config.index_interval_bytes) {
            return Err(Error::InvalidArgument(format!(
                "index_interval_bytes={} is out of range [0, {}]",
                config.index_interval_bytes,
                i32::MAX
            )));
        }
        // Kafka refuses an index smaller than one entry; both indexes share the size.
        if !(TIME_INDEX_ENTRY_SIZE as i64..=i32::MAX as i64).contains(&config.max_index_size) {
            return Err(Error::InvalidArgument(format!(
                "max_index_size={} is out of range [{TIME_INDEX_ENTRY_SIZE}, {}]",
                config.max_index_size,
                i32::MAX
            )));
        }
        let max_index_size = config.max_index_size as usize;
        let dir = dir.as_ref();
        let log_path = dir.join(file_name(base_offset, LOG_FILE_SUFFIX));
        let index_path = dir.join(file_name(base_offset, INDEX_FILE_SUFFIX));
        let time_index_path = dir.join(file_name(base_offset, TIME_INDEX_FILE_SUFFIX));
        let log = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&log_path)
            .map_err(io_at(&log_path))?;
        let size = log.metadata().map_err(io_at(&log_path))?.len();
        let offset_index = OffsetIndex::open(&index_path, base_offset, max_index_size)?;
        let time_index = TimeIndex::open(&time_index_path, base_offset, max_index_size)?;
        let (max_timestamp, offset_of_max_timestamp) =
            time_index.last_entry().unwrap_or((NO_TIMESTAMP, -1));
        let mut segment = Segment {
            base_offset,
            context: log_path.display().to_string(),
            log_path,
            index_path,
            time_index_path,
            index_interval_bytes: config.index_interval_bytes,
            max_index_size: config.max_index_size,
            files: Some(OpenFiles {
                log,
                offset_index,
                time_index,
            }),
            size,
            next_offset: base_offset,
            rolling_based_timestamp: NO_TIMESTAMP,
            state: IndexState {
                bytes_since_last_entry: 0,
                max_timestamp,
                offset_of_max_timestamp,
            },
        };
        segment.next_offset = segment.scan_next_offset()?;
        segment.rolling_based_timestamp = segment.first_batch_max_timestamp()?;
        Ok(segment)
    }

    // ---- properties -------------------------------------------------------------------

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }
    pub fn index_path(&self) -> &Path {
        &self.index_path
    }
    pub fn time_index_path(&self) -> &Path {
        &self.time_index_path
    }
    /// Bytes in the `.log`.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// The offset after the last batch (`base_offset` when empty).
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }
    pub fn max_timestamp(&self) -> i64 {
        self.state.max_timestamp
    }
    pub fn offset_of_max_timestamp(&self) -> i64 {
        self.state.offset_of_max_timestamp
    }
    pub fn rolling_based_timestamp(&self) -> i64 {
        self.rolling_based_timestamp
    }
    pub fn bytes_since_last_entry(&self) -> i64 {
        self.state.bytes_since_last_entry
    }
    /// The size a new index file is preallocated to, and `resize_indexes`' default.
    pub fn max_index_size(&self) -> i64 {
        self.max_index_size
    }
    /// True when the offset or the time index is full (by the size it is mapped at now:
    /// a trimmed index is full until [`Segment::resize_indexes`]); always true once closed.
    pub fn index_is_full(&self) -> bool {
        match &self.files {
            Some(f) => f.offset_index.is_full() || f.time_index.is_full(),
            None => true,
        }
    }
    pub fn closed(&self) -> bool {
        self.files.is_none()
    }

    fn files(&self) -> Result<&OpenFiles> {
        self.files
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument(format!("{}: segment is closed", self.context)))
    }

    fn files_mut(&mut self) -> Result<&mut OpenFiles> {
        match self.files.as_mut() {
            Some(f) => Ok(f),
            None => Err(Error::InvalidArgument(format!(
                "{}: segment is closed",
                self.context
            ))),
        }
    }

    fn scanner(&self, end: u64, chunk: usize) -> Result<Scanner<'_>> {
        Ok(Scanner::new(
            &self.files()?.log,
            &self.log_path,
            &self.context,
            end,
            chunk,
        ))
    }

    // ---- append -----------------------------------------------------------------------

    /// Validate, stamp and append one or more concatenated v2 batches (see
    /// `Segment.append` in `_native.pyi`). Nothing is written unless every check passes.
    pub fn append(
        &mut self,
        data: &[u8],
        partition_leader_epoch: i32,
        log_append_time_ms: i64,
        assign_offsets: bool,
    ) -> Result<AppendResult> {
        self.files()?;
        if data.is_empty() {
            // Nothing to append (Kafka skips an empty append).
            return Ok(AppendResult {
                first_offset: -1,
                last_offset: -1,
                max_timestamp: NO_TIMESTAMP,
                offset_of_max_timestamp: -1,
                bytes_written: 0,
            });
        }
        // 1. Every batch validated completely.
        let mut headers = Vec::new();
        let mut pos = 0usize;
        while pos < data.len() {
            let header = batch::validate(data, pos, "buffer")?;
            headers.push((pos, header));
            pos += header.size_in_bytes();
        }
        // 2. Offsets.
        let mut next = self.next_offset;
        let mut planned = Vec::with_capacity(headers.len());
        for (pos, header) in &headers {
            let base = if assign_offsets {
                if header.records_count == 0 {
                    return Err(Error::InvalidRecord(format!(
                        "{}: record batch at position {pos} of the append has no records",
                        self.context
                    )));
                }
                next
            } else {
                if header.base_offset < next {
                    return Err(Error::InvalidOffset(format!(
                        "{}: batch at position {pos} of the append has base offset {} below the next offset {next}",
                        self.context, header.base_offset
                    )));
                }
                header.base_offset
            };
            // 0 <= last - base, last - segment base <= 2**31 - 1, and last < i64::MAX so
            // that the next offset exists.
            let last = base
                .checked_add(header.last_offset_delta as i64)
                .filter(|&last| {
                    header.last_offset_delta >= 0
                        && last < i64::MAX
                        && last - self.base_offset <= MAX_RELATIVE_OFFSET
                })
                .ok_or_else(|| {
                    Error::InvalidOffset(format!(
                        "{}: batch at position {pos} of the append (base offset {base}, last offset delta {}) does not fit the segment (last offset at most {})",
                        self.context,
                        header.last_offset_delta,
                        self.base_offset + MAX_RELATIVE_OFFSET
                    ))
                })?;
            let max_timestamp = if assign_offsets && log_append_time_ms >= 0 {
                log_append_time_ms
            } else {
                header.max_timestamp
            };
            planned.push(PlannedBatch {
                position: *pos,
                base_offset: base,
                last_offset: last,
                max_timestamp,
                size: header.size_in_bytes(),
            });
            next = last + 1;
        }
        if self.size + data.len() as u64 > MAX_SEGMENT_BYTES {
            return Err(Error::InvalidArgument(format!(
                "{}: append of {} bytes is too large for a segment of {} bytes",
                self.context,
                data.len(),
                self.size
            )));
        }
        // 3. Room for the index entries the batches need.
        self.check_index_room(&planned)?;
        // 4. Stamp and write.
        let bytes: Cow<'_, [u8]> = if assign_offsets {
            let mut owned = data.to_vec();
            for b in &planned {
                batch::restamp(
                    &mut owned,
                    b.position,
                    b.base_offset,
                    partition_leader_epoch,
                    log_append_time_ms,
                );
            }
            Cow::Owned(owned)
        } else {
            Cow::Borrowed(data)
        };
        let start = self.size;
        let files = self.files.as_mut().expect("checked open above");
        if let Err(e) = files.log.write_all_at(&bytes, start) {
            // Leave no partial batch behind.
            let _ = files.log.set_len(start);
            return Err(Error::io(&self.log_path, e));
        }
        // 5. Index entries and state.
        let mut result = AppendResult {
            first_offset: planned[0].base_offset,
            last_offset: planned[planned.len() - 1].last_offset,
            max_timestamp: NO_TIMESTAMP,
            offset_of_max_timestamp: -1,
            bytes_written: data.len() as u64,
        };
        if start == 0 {
            self.rolling_based_timestamp = planned[0].max_timestamp;
        }
        // The index state is only kept once every batch is indexed (as the pure twin does);
        // a failed index write (ENOSPC) undoes the whole append: entries, state and bytes.
        let saved_state = self.state;
        let saved_entries = (files.offset_index.entries(), files.time_index.entries());
        for b in &planned {
            if b.max_timestamp > result.max_timestamp {
                result.max_timestamp = b.max_timestamp;
                result.offset_of_max_timestamp = b.last_offset;
            }
            let indexed = index_batch(
                &mut self.state,
                files,
                self.index_interval_bytes,
                b.last_offset,
                b.max_timestamp,
                start + b.position as u64,
                b.size,
            );
            if let Err(e) = indexed {
                self.state = saved_state;
                files.offset_index.keep_entries(saved_entries.0);
                files.time_index.keep_entries(saved_entries.1);
                let _ = files.log.set_len(start);
                return Err(e);
            }
        }
        self.size = start + data.len() as u64;
        self.next_offset = next;
        Ok(result)
    }

    /// Simulate the index rules over `planned`: `IndexFull` if, at a batch where the rules
    /// add an entry, the offset index is full (entries >= max) or the time index is full
    /// (entries >= max - 1; Kafka's `maybeAppend` checks that before comparing timestamps).
    fn check_index_room(&self, planned: &[PlannedBatch]) -> Result<()> {
        let files = self.files()?;
        let (oi, ti) = (&files.offset_index, &files.time_index);
        let mut bytes_since = self.state.bytes_since_last_entry;
        let mut max_timestamp = self.state.max_timestamp;
        let mut offset_entries = oi.entries();
        let mut time_entries = ti.entries();
        let mut last_time = ti.last_timestamp();
        for b in planned {
            if b.max_timestamp > max_timestamp {
                max_timestamp = b.max_timestamp;
            }
            if bytes_since > self.index_interval_bytes {
                if offset_entries >= oi.max_entries() {
                    return Err(Error::IndexFull(format!(
                        "{}: offset index full ({offset_entries} entries): roll the log",
                        oi.path().display()
                    )));
                }
                if time_entries + 1 >= ti.max_entries() {
                    return Err(Error::IndexFull(format!(
                        "{}: time index full ({time_entries} entries): roll the log",
                        ti.path().display()
                    )));
                }
                offset_entries += 1;
                if max_timestamp > last_time {
                    time_entries += 1;
                    last_time = max_timestamp;
                }
                bytes_since = 0;
            }
            bytes_since = bytes_since.saturating_add(b.size as i64);
        }
        Ok(())
    }

    // ---- reads ------------------------------------------------------------------------

    /// `(position, length)` of whole batches serving a fetch from `start_offset` (see
    /// `Segment.read`). A negative `max_position` means the end of the file. The walk over
    /// further batches raises at a corrupt one, as every lookup walk does.
    pub fn read(
        &self,
        start_offset: i64,
        max_bytes: i64,
        max_position: i64,
        min_one_batch: bool,
    ) -> Result<Option<(u64, u64)>> {
        if max_bytes < 0 {
            return Err(Error::InvalidArgument(format!(
                "{}: invalid max_bytes {max_bytes}",
                self.context
            )));
        }
        let (mut scanner, first) = self.locate(start_offset, 0)?;
        let Some(first) = first else {
            return Ok(None);
        };
        let limit = if max_position < 0 {
            self.size as i64
        } else {
            max_position
        };
        let position = first.position as u64;
        let fits_position = |end: usize| (end as i64) <= limit;
        if first.size as i64 > max_bytes {
            let length = if min_one_batch && fits_position(first.end()) {
                first.size as u64
            } else {
                0
            };
            return Ok(Some((position, length)));
        }
        if !fits_position(first.end()) {
            return Ok(Some((position, 0)));
        }
        let mut pos = first.end() as u64;
        // Jump over the whole batches the offset index vouches for: its entries are
        // batch starts, so every batch before the last entry at or below the region's
        // furthest end ends at or before it; then walk the few batches after it by
        // their headers only.
        let furthest = (position as i64).saturating_add(max_bytes).min(limit);
        if furthest > pos as i64 {
            if let Some(p) = self.files()?.offset_index.lookup_position(furthest as u64) {
                if p as u64 > pos {
                    pos = p as u64;
                }
            }
        }
        let mut total = (pos - position) as i64;
        let mut chunk = header_chunk(first.size);
        while let Some(b) = scanner.next_header(pos, chunk)? {
            if total + b.size as i64 > max_bytes || !fits_position(b.end()) {
                break;
            }
            total += b.size as i64;
            chunk = header_chunk(b.size);
            pos = b.end() as u64;
        }
        Ok(Some((position, total as u64)))
    }

    /// Up to `length` bytes of the `.log` from `position` (fewer at the end of the file).
    pub fn read_bytes(&self, position: i64, length: i64) -> Result<Vec<u8>> {
        let n = self.readable_len(position, length)?;
        let mut out = vec![0u8; n];
        self.read_exact_into(position as u64, &mut out)?;
        Ok(out)
    }

    /// How many bytes `read_bytes(position, length)` returns: up to the end of the file
    /// as it is on disk (bytes of an append that failed after writing, beyond `size`,
    /// included, as the pure twin reads them).
    pub fn readable_len(&self, position: i64, length: i64) -> Result<usize> {
        let files = self.files()?;
        if position < 0 || length < 0 {
            return Err(Error::InvalidArgument(format!(
                "{}: invalid read of {length} bytes at position {position}",
                self.context
            )));
        }
        let file_len = files.log.metadata().map_err(io_at(&self.log_path))?.len();
        Ok((length as u64).min(file_len.saturating_sub(position as u64)) as usize)
    }

    /// Fill `out` from `position` (the caller sized it with [`Segment::readable_len`]).
    pub fn read_exact_into(&self, position: u64, out: &mut [u8]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        self.files()?
            .log
            .read_exact_at(out, position)
            .map_err(io_at(&self.log_path))
    }

    /// Kafka's `translateOffset`: the first batch at or after max(index lookup,
    /// `starting_position`) whose last offset >= `offset`.
    pub fn translate_offset(
        &self,
        offset: i64,
        starting_position: i64,
    ) -> Result<Option<LogOffsetPosition>> {
        Ok(self
            .locate(offset, starting_position)?
            .1
            .map(|b| LogOffsetPosition {
                last_offset: b.last_offset,
                position: b.position as u64,
                size: b.size as u64,
            }))
    }

    fn locate(
        &self,
        offset: i64,
        starting_position: i64,
    ) -> Result<(Scanner<'_>, Option<ShallowBatch>)> {
        let files = self.files()?;
        let (_, index_position) = files.offset_index.lookup(offset);
        let mut pos = (index_position as i64).max(starting_position) as u64;
        let mut scanner = self.scanner(self.size, SCAN_CHUNK_MIN)?;
        let mut chunk = SCAN_CHUNK_MIN;
        while let Some(b) = scanner.next_header(pos, chunk)? {
            if b.last_offset >= offset {
                return Ok((scanner, Some(b)));
            }
            chunk = header_chunk(b.size);
            pos = b.end() as u64;
        }
        Ok((scanner, None))
    }

    /// Largest offset-index entry with offset <= `offset`; `(base_offset, 0)` if none.
    pub fn lookup_index(&self, offset: i64) -> Result<(i64, u32)> {
        Ok(self.files()?.offset_index.lookup(offset))
    }

    /// Largest time-index entry with timestamp <= `timestamp`; `(-1, base_offset)` if none.
    pub fn lookup_time_index(&self, timestamp: i64) -> Result<(i64, i64)> {
        Ok(self.files()?.time_index.lookup(timestamp))
    }

    /// Kafka's `findOffsetByTimestamp` (see `_native.pyi`).
    pub fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let files = self.files()?;
        let (_, time_offset) = files.time_index.lookup(timestamp);
        let (_, position) = files.offset_index.lookup(time_offset.max(starting_offset));
        let mut scanner = self.scanner(self.size, SCAN_CHUNK_MIN)?;
        let mut pos = position as u64;
        while let Some(b) = scanner.next(pos)? {
            if b.max_timestamp >= timestamp {
                for record in scanner.records(&b)? {
                    if record.timestamp >= timestamp && record.offset >= starting_offset {
                        return Ok(Some(TimestampAndOffset {
                            timestamp: record.timestamp,
                            offset: record.offset,
                            leader_epoch: b.partition_leader_epoch,
                        }));
                    }
                }
            }
            pos = b.end() as u64;
        }
        Ok(None)
    }

    /// All offset-index entries as `(absolute offset, position)`.
    pub fn offset_index_entries(&self) -> Result<Vec<(i64, u32)>> {
        Ok(self.files()?.offset_index.to_vec())
    }

    /// All time-index entries as `(timestamp, absolute offset)`.
    pub fn time_index_entries(&self) -> Result<Vec<(i64, i64)>> {
        Ok(self.files()?.time_index.to_vec())
    }

    /// Deep records of every batch in the log (tests and tools; stops at a partial tail).
    pub fn records(&self) -> Result<Vec<Record>> {
        let mut scanner = self.scanner(self.size, RECOVER_CHUNK)?;
        let mut out = Vec::new();
        let mut pos = 0u64;
        while let Some(b) = scanner.next(pos)? {
            out.extend(scanner.records(&b)?);
            pos = b.end() as u64;
        }
        Ok(out)
    }

    // ---- open-time state --------------------------------------------------------------

    /// The offset after the last batch, scanning from the last offset-index entry and
    /// stopping silently at a partial or corrupt tail (I/O errors still fail). As Kafka's
    /// `readNextOffset`, batches before the first one whose last offset reaches the indexed
    /// offset (the base offset when the index is empty) do not count.
    fn scan_next_offset(&self) -> Result<i64> {
        let (indexed_offset, start) = self
            .files()?
            .offset_index
            .last_entry()
            .map_or((self.base_offset, 0), |(o, p)| (o, p as u64));
        let mut scanner = self.scanner(self.size, SCAN_CHUNK_MIN)?;
        let mut pos = start;
        let mut last: Option<i64> = None;
        loop {
            match scanner.next(pos) {
                Ok(Some(b)) => {
                    // Kafka's readNextOffset: from the first batch reaching the indexed
                    // offset, the last batch.
                    if last.is_some() || b.last_offset >= indexed_offset {
                        last = Some(b.last_offset);
                    }
                    pos = b.end() as u64;
                }
                Ok(None) => break,
                Err(e @ Error::Io { .. }) => return Err(e),
                Err(_) => break,
            }
        }
        Ok(last.map_or(self.base_offset, |l| l.saturating_add(1)))
    }

    /// Max timestamp of the first batch; -1 when there is none (or it is unreadable).
    fn first_batch_max_timestamp(&self) -> Result<i64> {
        let mut scanner = self.scanner(self.size, SCAN_CHUNK_MIN)?;
        match scanner.next(0) {
            Ok(Some(b)) => Ok(b.max_timestamp),
            Ok(None) => Ok(NO_TIMESTAMP),
            Err(e @ Error::Io { .. }) => Err(e),
            Err(_) => Ok(NO_TIMESTAMP),
        }
    }

    // ---- recovery, checks, truncation -------------------------------------------------

    /// Rebuild both indexes from the log and truncate it at the first invalid byte;
    /// returns the number of bytes truncated (see `Segment.recover`). The indexes are
    /// preallocated for the rebuild and trimmed to their entries at the end, whatever
    /// their size before (Kafka's `LogSegment.recover`).
    pub fn recover(&mut self) -> Result<u64> {
        // The walk covers the log as this segment knows it (Kafka's cached size).
        let file_size = self.size;
        {
            let files = self.files_mut()?;
            files.offset_index.reset()?;
            files.time_index.reset()?;
        }
        // The rules run with a counter of their own: the appends' counter is left as it
        // was, as in Kafka's `LogSegment.recover`.
        let appends_counter = self.state.bytes_since_last_entry;
        self.state = IndexState {
            bytes_since_last_entry: 0,
            max_timestamp: NO_TIMESTAMP,
            offset_of_max_timestamp: -1,
        };
        let walked = self.rebuild_indexes(file_size);
        self.state.bytes_since_last_entry = appends_counter;
        let (valid, previous_last, first_max_timestamp) = walked?;
        let files = self.files.as_mut().expect("checked open above");
        if valid < file_size {
            files.log.set_len(valid).map_err(io_at(&self.log_path))?;
        }
        self.size = valid;
        self.next_offset = previous_last.map_or(self.base_offset, |last| last + 1);
        self.rolling_based_timestamp = first_max_timestamp;
        if self.state.max_timestamp > files.time_index.last_timestamp() {
            files.time_index.maybe_append(
                self.state.max_timestamp,
                self.state.offset_of_max_timestamp,
                true,
            )?;
        }
        // Kafka's `trimToValidSize`: a recovered segment is left as a sealed one; the log
        // grows the active segment's indexes again with `resize_indexes`.
        files.offset_index.trim()?;
        files.time_index.trim()?;
        Ok(file_size - valid)
    }

    /// The walk of `recover`: applies the index rules to every valid batch; returns the
    /// valid length, the last valid batch's last offset and the first batch's max timestamp.
    fn rebuild_indexes(&mut self, file_size: u64) -> Result<(u64, Option<i64>, i64)> {
        let mut valid = 0u64;
        let mut previous_last: Option<i64> = None;
        let mut first_max_timestamp = NO_TIMESTAMP;
        {
            let files = self.files.as_mut().expect("checked open above");
            let mut scanner = Scanner::new(
                &files.log,
                &self.log_path,
                &self.context,
                file_size,
                RECOVER_CHUNK,
            );
            loop {
                let b = match scanner.next(valid) {
                    Ok(Some(b)) => b,
                    Ok(None) => break,
                    Err(e @ Error::Io { .. }) => return Err(e),
                    Err(_) => break,
                };
                if scanner.ensure_valid(&b).is_err()
                    || b.base_offset < self.base_offset
                    || previous_last.is_some_and(|last| b.base_offset <= last)
                    || b.last_offset < b.base_offset
                    || b.last_offset - self.base_offset > MAX_RELATIVE_OFFSET
                {
                    break;
                }
                // Index rules, on the real indexes (the scanner only borrows the log).
                index_batch_split(
                    &mut self.state,
                    &mut files.offset_index,
                    &mut files.time_index,
                    self.index_interval_bytes,
                    b.last_offset,
                    b.max_timestamp,
                    valid,
                    b.size,
                )?;
                if previous_last.is_none() {
                    first_max_timestamp = b.max_timestamp;
                }
                previous_last = Some(b.last_offset);
                valid += b.size as u64;
            }
        }
        Ok((valid, previous_last, first_max_timestamp))
    }

    /// `CorruptIndex` naming the file if an index fails its checks (see `_native.pyi`).
    pub fn sanity_check(&self) -> Result<()> {
        let files = self.files()?;
        files.offset_index.check_length()?;
        files.time_index.check_length()?;
        files.offset_index.sanity_check(self.size)?;
        files.time_index.sanity_check()
    }

    /// Remove every batch from the one containing `offset` onward and the index entries
    /// with offset >= `offset`; returns the bytes removed. As Kafka's `truncateTo`: both
    /// indexes are preallocated again, the counter is reset, the max timestamp (when >= 0)
    /// comes back through `readLargestTimestamp`, and `next_offset` is rescanned as on open.
    pub fn truncate_to(&mut self, offset: i64) -> Result<u64> {
        let mapping = self.translate_offset(offset, 0)?;
        let files = self.files.as_mut().expect("translate_offset checked open");
        files.offset_index.truncate_to(offset);
        files.time_index.truncate_to(offset);
        // The segment may be active again: indexes back to their full size (Kafka).
        files.offset_index.resize_to_max()?;
        files.time_index.resize_to_max()?;
        let removed = match mapping {
            Some(m) => {
                files
                    .log
                    .set_len(m.position)
                    .map_err(io_at(&self.log_path))?;
                let removed = self.size - m.position;
                self.size = m.position;
                removed
            }
            None => 0,
        };
        if self.size == 0 {
            self.rolling_based_timestamp = NO_TIMESTAMP;
        }
        self.state.bytes_since_last_entry = 0;
        if self.state.max_timestamp >= 0 {
            let (max_timestamp, offset_of_max_timestamp) = self.read_largest_timestamp()?;
            self.state.max_timestamp = max_timestamp;
            self.state.offset_of_max_timestamp = offset_of_max_timestamp;
        }
        self.next_offset = self.scan_next_offset()?;
        Ok(removed)
    }

    /// Kafka's `readLargestTimestamp`: the time index's last entry, or a greater batch max
    /// timestamp found in the log after that entry's offset (first such batch wins).
    fn read_largest_timestamp(&self) -> Result<(i64, i64)> {
        let files = self.files()?;
        let (last_timestamp, last_offset) =
            files.time_index.last_entry().unwrap_or((NO_TIMESTAMP, -1));
        let (_, position) = files.offset_index.lookup(last_offset.max(self.base_offset));
        let mut scanner = self.scanner(self.size, SCAN_CHUNK_MIN)?;
        let mut pos = position as u64;
        let (mut best_timestamp, mut best_offset) = (NO_TIMESTAMP, -1);
        while let Some(b) = scanner.next(pos)? {
            if b.max_timestamp > best_timestamp {
                (best_timestamp, best_offset) = (b.max_timestamp, b.last_offset);
            }
            pos = b.end() as u64;
        }
        Ok(if best_timestamp > last_timestamp {
            (best_timestamp, best_offset)
        } else {
            (last_timestamp, last_offset)
        })
    }

    /// Kafka's `resizeIndexes`: resize both index files to `size` (`None`: the max index
    /// size) rounded down to each entry size, never below the bytes their entries use.
    /// `InvalidArgument` for a size outside `0..=i32::MAX` or a closed segment.
    pub fn resize_indexes(&mut self, size: Option<i64>) -> Result<()> {
        let size = size.unwrap_or(self.max_index_size);
        if !(0..=i32::MAX as i64).contains(&size) {
            return Err(Error::InvalidArgument(format!(
                "max_index_size={size} is out of range [0, {}]",
                i32::MAX
            )));
        }
        let files = self.files_mut()?;
        files.offset_index.resize(size as usize)?;
        files.time_index.resize(size as usize)
    }

    /// Log roll: add the final time-index entry if greater than the last, trim both indexes.
    pub fn seal(&mut self) -> Result<()> {
        let (max_timestamp, offset) =
            (self.state.max_timestamp, self.state.offset_of_max_timestamp);
        let files = self.files_mut()?;
        if max_timestamp > files.time_index.last_timestamp() {
            files.time_index.maybe_append(max_timestamp, offset, true)?;
        }
        files.offset_index.trim()?;
        files.time_index.trim()
    }

    /// fsync the `.log`, msync + fsync both indexes.
    pub fn flush(&self) -> Result<()> {
        let files = self.files()?;
        files.log.sync_all().map_err(io_at(&self.log_path))?;
        files.offset_index.flush()?;
        files.time_index.flush()
    }

    /// `seal()`, flush and close every file. Idempotent. Even when sealing or flushing
    /// fails, both indexes are trimmed to their entries and every file is closed (the first
    /// error is returned).
    pub fn close(&mut self) -> Result<()> {
        if self.files.is_none() {
            return Ok(());
        }
        let mut result = self.seal().and_then(|_| self.flush());
        if let Some(mut files) = self.files.take() {
            let trimmed = files
                .offset_index
                .trim()
                .and_then(|_| files.time_index.trim());
            result = result.and(trimmed);
        }
        result
    }

    /// `close()`, then remove the three files (missing ones are fine).
    pub fn delete(&mut self) -> Result<()> {
        self.close()?;
        for path in [&self.log_path, &self.index_path, &self.time_index_path] {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        Ok(())
    }
}

/// The index rules for one batch (see the module docs).
fn index_batch(
    state: &mut IndexState,
    files: &mut OpenFiles,
    index_interval_bytes: i64,
    last_offset: i64,
    max_timestamp: i64,
    position: u64,
    size: usize,
) -> Result<()> {
    index_batch_split(
        state,
        &mut files.offset_index,
        &mut files.time_index,
        index_interval_bytes,
        last_offset,
        max_timestamp,
        position,
        size,
    )
}

#[allow(clippy::too_many_arguments)]
fn index_batch_split(
    state: &mut IndexState,
    offset_index: &mut OffsetIndex,
    time_index: &mut TimeIndex,
    index_interval_bytes: i64,
    last_offset: i64,
    max_timestamp: i64,
    position: u64,
    size: usize,
) -> Result<()> {
    if max_timestamp > state.max_timestamp {
        state.max_timestamp = max_timestamp;
        state.offset_of_max_timestamp = last_offset;
    }
    if state.bytes_since_last_entry > index_interval_bytes {
        offset_index.append(last_offset, position)?;
        time_index.maybe_append(state.max_timestamp, state.offset_of_max_timestamp, false)?;
        state.bytes_since_last_entry = 0;
    }
    state.bytes_since_last_entry = state.bytes_since_last_entry.saturating_add(size as i64);
    Ok(())
}

/// Walks the batches of the log with [`shallow::next_batch`] over a window of the file read
/// with `pread`. The window always holds the whole batch at hand (or the rest of the file
/// when the batch runs past it), so `next_batch` sees exactly what it would see in the whole
/// file. Positions in returned batches and errors are absolute file positions.
struct Scanner<'a> {
    file: &'a File,
    path: &'a Path,
    context: &'a str,
    /// End of the readable log (its size).
    end: u64,
    window_start: u64,
    /// `buf[..window_len]` holds the file bytes from `window_start`.
    buf: Vec<u8>,
    window_len: usize,
    chunk: usize,
}

impl<'a> Scanner<'a> {
    fn new(file: &'a File, path: &'a Path, context: &'a str, end: u64, chunk: usize) -> Self {
        Scanner {
            file,
            path,
            context,
            end,
            window_start: 0,
            buf: Vec::new(),
            window_len: 0,
            chunk,
        }
    }

    /// Make the window hold `[pos, upto)` (`upto <= end`).
    fn cover(&mut self, pos: u64, upto: u64) -> Result<()> {
        if self.holds(pos, upto) {
            return Ok(());
        }
        self.fill(pos, upto, self.chunk)?;
        self.chunk = (self.chunk * 2).min(SCAN_CHUNK_MAX);
        Ok(())
    }

    /// Whether the window holds `[pos, upto)`.
    fn holds(&self, pos: u64, upto: u64) -> bool {
        pos >= self.window_start && upto <= self.window_start + self.window_len as u64
    }

    /// Read `[pos, upto)`, or `chunk` bytes from `pos` if more, into the window (clipped
    /// at the end).
    fn fill(&mut self, pos: u64, upto: u64, chunk: usize) -> Result<()> {
        let len = ((upto - pos) as usize)
            .max(chunk)
            .min((self.end - pos) as usize);
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        self.file
            .read_exact_at(&mut self.buf[..len], pos)
            .map_err(|e| Error::io(self.path, e))?;
        self.window_start = pos;
        self.window_len = len;
        Ok(())
    }

    fn relative(&self, pos: u64) -> usize {
        (pos - self.window_start) as usize
    }

    fn absolute_error(&self, e: Error) -> Error {
        match e {
            Error::Corrupt {
                context,
                position,
                reason,
            } => Error::Corrupt {
                context,
                position: position + self.window_start,
                reason,
            },
            other => other,
        }
    }

    /// The batch at `pos` (see [`shallow::next_batch`]): `None` at the end or at a partial
    /// tail, `Corrupt` for a bad size or magic.
    fn next(&mut self, pos: u64) -> Result<Option<ShallowBatch>> {
        if pos >= self.end {
            return Ok(None);
        }
        // Enough bytes to tell "17 or fewer remain" and to read the size field.
        let header_end = (pos + HEADER_SIZE_UP_TO_MAGIC as u64 + 1).min(self.end);
        self.cover(pos, header_end)?;
        let rel = self.relative(pos);
        if self.window_len - rel >= 12 {
            let b = &self.buf[rel + 8..rel + 12];
            let size = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            if size >= RECORD_OVERHEAD_V0 as i32 {
                let batch_end = (pos + 12 + size as u64).min(self.end);
                self.cover(pos, batch_end)?;
            }
        }
        let rel = self.relative(pos);
        let found = shallow::next_batch(&self.buf[..self.window_len], rel, self.context);
        self.walked(found, pos)
    }

    /// A walk's verdict on the batch at `pos` (`found`, parsed from the window): the walk
    /// also refuses a size below its magic's header, as the pure twin's walk does
    /// (`next_batch` leaves that to `ensure_valid`); positions made absolute.
    fn walked(
        &self,
        found: Result<Option<ShallowBatch>>,
        pos: u64,
    ) -> Result<Option<ShallowBatch>> {
        match found {
            Ok(Some(mut b)) => {
                let minimum = match b.magic {
                    2 => batch::RECORD_BATCH_OVERHEAD - batch::LOG_OVERHEAD,
                    1 => RECORD_OVERHEAD_V1,
                    _ => RECORD_OVERHEAD_V0,
                };
                if b.size - batch::LOG_OVERHEAD < minimum {
                    return Err(Error::corrupt(
                        self.context,
                        pos,
                        format!(
                            "v{} batch size {} is below the minimum {minimum}",
                            b.magic,
                            b.size - batch::LOG_OVERHEAD
                        ),
                    ));
                }
                b.position = pos as usize;
                Ok(Some(b))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(self.absolute_error(e)),
        }
    }

    /// [`Scanner::next`] reading the batch's 61-byte header only, not the whole batch:
    /// the same verdict (partial tail, corrupt size or magic), for walks that need sizes
    /// and offsets only (a fetch's region, an offset's batch). The window is refilled
    /// with `header_chunk` bytes when the header is not in it: small when batches are
    /// big (one short `pread` per batch), a chunk when they are small (many headers
    /// per `pread`).
    fn next_header(&mut self, pos: u64, header_chunk: usize) -> Result<Option<ShallowBatch>> {
        if pos >= self.end {
            return Ok(None);
        }
        let header_end = (pos + batch::RECORD_BATCH_OVERHEAD as u64).min(self.end);
        if !self.holds(pos, header_end) {
            self.fill(pos, header_end, header_chunk)?;
        }
        let rel = self.relative(pos);
        let head_end = self.relative(header_end);
        let remaining = (self.end - pos) as usize;
        let head = &self.buf[rel..head_end];
        let found = shallow::next_batch_header(head, rel, remaining, self.context);
        self.walked(found, pos)
    }

    /// `b` as the window sees it (`b` was just returned by `next`).
    fn in_window(&self, b: &ShallowBatch) -> ShallowBatch {
        ShallowBatch {
            position: self.relative(b.position as u64),
            ..*b
        }
    }

    fn ensure_valid(&self, b: &ShallowBatch) -> Result<()> {
        shallow::ensure_valid(
            &self.buf[..self.window_len],
            &self.in_window(b),
            self.context,
        )
        .map_err(|e| self.absolute_error(e))
    }

    fn records(&self, b: &ShallowBatch) -> Result<Vec<Record>> {
        shallow::records(
            &self.buf[..self.window_len],
            &self.in_window(b),
            self.context,
        )
        .map_err(|e| self.absolute_error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::Codec;

    fn opts(base_offset: i64) -> batch::BuildOptions {
        batch::BuildOptions {
            base_offset: Some(base_offset),
            ..Default::default()
        }
    }

    /// A batch of `count` records of `value_size` bytes; record i has timestamp `ts + i`.
    fn make_batch(count: i64, value_size: usize, ts: i64) -> Vec<u8> {
        let records: Vec<Record> = (0..count)
            .map(|i| Record {
                offset: i,
                timestamp: ts + i,
                key: Some(format!("k{i}").into_bytes()),
                value: Some(vec![b'v'; value_size]),
                headers: vec![],
            })
            .collect();
        batch::build(&records, &opts(0)).unwrap()
    }

    fn config(interval: i64, max_index_size: i64) -> SegmentConfig {
        SegmentConfig {
            index_interval_bytes: interval,
            max_index_size,
        }
    }

    /// `n` batches of 5 records each, timestamps 1000 + 10 * batch + record.
    fn fill(seg: &mut Segment, n: i64) -> Vec<(u64, u64)> {
        let mut spans = Vec::new();
        for b in 0..n {
            let before = seg.size();
            seg.append(&make_batch(5, 200, 1000 + 10 * b), 3, -1, true)
                .unwrap();
            spans.push((before, seg.size() - before));
        }
        spans
    }

    fn file_bytes(seg: &Segment) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        (
            std::fs::read(seg.log_path()).unwrap(),
            std::fs::read(seg.index_path()).unwrap(),
            std::fs::read(seg.time_index_path()).unwrap(),
        )
    }

    #[test]
    fn file_names_are_twenty_digits() {
        assert_eq!(file_name(0, LOG_FILE_SUFFIX), "00000000000000000000.log");
        assert_eq!(
            file_name(1234, TIME_INDEX_FILE_SUFFIX),
            "00000000000000001234.timeindex"
        );
        let dir = tempfile::tempdir().unwrap();
        let seg = Segment::open(dir.path(), 42, SegmentConfig::default()).unwrap();
        assert!(seg.log_path().ends_with("00000000000000000042.log"));
        assert_eq!(
            std::fs::metadata(seg.index_path()).unwrap().len(),
            10 * 1024 * 1024
        );
        assert_eq!(
            std::fs::metadata(seg.time_index_path()).unwrap().len(),
            10 * 1024 * 1024 / 12 * 12
        );
        assert_eq!(
            (seg.next_offset(), seg.size(), seg.max_timestamp()),
            (42, 0, -1)
        );
        assert_eq!(
            (seg.offset_of_max_timestamp(), seg.rolling_based_timestamp()),
            (-1, -1)
        );
        assert!(Segment::open(dir.path(), -1, SegmentConfig::default()).is_err());
        assert!(matches!(
            Segment::open(dir.path(), 7, config(4096, 10)),
            Err(Error::InvalidArgument(_))
        ));
        assert!(!dir.path().join(file_name(7, LOG_FILE_SUFFIX)).exists());
    }

    #[test]
    fn append_assigns_offsets_stamps_and_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 100, config(4096, 1 << 20)).unwrap();
        let data = [make_batch(3, 10, 500), make_batch(2, 10, 400)].concat();
        let r = seg.append(&data, 7, -1, true).unwrap();
        assert_eq!(
            (
                r.first_offset,
                r.last_offset,
                r.max_timestamp,
                r.offset_of_max_timestamp
            ),
            (100, 104, 502, 102)
        );
        assert_eq!(r.bytes_written, data.len() as u64);
        assert_eq!((seg.next_offset(), seg.size()), (105, data.len() as u64));
        assert_eq!(seg.rolling_based_timestamp(), 502);
        let log = std::fs::read(seg.log_path()).unwrap();
        let h0 = batch::validate(&log, 0, "t").unwrap();
        assert_eq!((h0.base_offset, h0.partition_leader_epoch), (100, 7));
        let h1 = batch::validate(&log, h0.size_in_bytes(), "t").unwrap();
        assert_eq!(h1.base_offset, 103);
        // LogAppendTime: the max timestamp becomes the append time.
        let r = seg.append(&make_batch(1, 10, 5), -1, 9999, true).unwrap();
        assert_eq!((r.max_timestamp, r.offset_of_max_timestamp), (9999, 105));
        assert_eq!(
            (seg.max_timestamp(), seg.offset_of_max_timestamp()),
            (9999, 105)
        );
        let records = seg.records().unwrap();
        assert_eq!(records.last().unwrap().timestamp, 9999);
        assert_eq!(
            records.iter().map(|r| r.offset).collect::<Vec<_>>(),
            (100..106).collect::<Vec<_>>()
        );
    }

    #[test]
    fn append_rejects_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(100, 1 << 20)).unwrap();
        let good = make_batch(2, 10, 1);
        let mut bad = good.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        let err = seg
            .append(&[good.clone(), bad].concat(), -1, -1, true)
            .unwrap_err();
        assert!(
            matches!(&err, Error::Corrupt { context, position, .. } if context == "buffer" && *position == good.len() as u64)
        );
        assert!(matches!(
            seg.append(&good[..good.len() - 1], -1, -1, true),
            Err(Error::Corrupt { .. })
        ));
        let nothing = seg.append(b"", -1, -1, true).unwrap();
        assert_eq!(
            (
                nothing.first_offset,
                nothing.last_offset,
                nothing.bytes_written
            ),
            (-1, -1, 0)
        );
        // An empty batch (no records) on the producer path.
        let mut empty = make_batch(1, 0, 1);
        // Rewrite it into a zero-record batch: header only, recordsCount 0, fixed CRC.
        empty.truncate(batch::RECORDS_OFFSET);
        empty[8..12].copy_from_slice(&((batch::RECORDS_OFFSET - 12) as i32).to_be_bytes());
        empty[57..61].copy_from_slice(&0i32.to_be_bytes());
        let crc = crate::crc::crc32c(&empty[21..]);
        empty[17..21].copy_from_slice(&crc.to_be_bytes());
        assert!(matches!(
            seg.append(&empty, -1, -1, true),
            Err(Error::InvalidRecord(_))
        ));
        // Replica path: offsets must not go backwards.
        seg.append(&good, -1, -1, true).unwrap();
        assert_eq!(seg.next_offset(), 2);
        let replica = {
            let records: Vec<Record> = (1..3)
                .map(|o| Record {
                    offset: o,
                    timestamp: 5,
                    key: None,
                    value: None,
                    headers: vec![],
                })
                .collect();
            batch::build(&records, &opts(1)).unwrap()
        };
        assert!(matches!(
            seg.append(&replica, -1, -1, false),
            Err(Error::InvalidOffset(_))
        ));
        // Beyond the relative-offset range.
        let far_batch = {
            let records = vec![Record {
                offset: 1i64 << 31,
                timestamp: 5,
                key: None,
                value: None,
                headers: vec![],
            }];
            batch::build(&records, &opts(1i64 << 31)).unwrap()
        };
        assert!(matches!(
            seg.append(&far_batch, -1, -1, false),
            Err(Error::InvalidOffset(_))
        ));
        assert_eq!(seg.size(), good.len() as u64);
        assert_eq!(
            std::fs::metadata(seg.log_path()).unwrap().len(),
            good.len() as u64
        );
        // The replica path writes batches unchanged.
        let replica = {
            let records: Vec<Record> = (10..12)
                .map(|o| Record {
                    offset: o,
                    timestamp: 5,
                    key: None,
                    value: None,
                    headers: vec![],
                })
                .collect();
            batch::build(&records, &opts(10)).unwrap()
        };
        let r = seg.append(&replica, 4, 77, false).unwrap();
        assert_eq!((r.first_offset, r.last_offset), (10, 11));
        assert_eq!(seg.next_offset(), 12);
        assert_eq!(
            &std::fs::read(seg.log_path()).unwrap()[good.len()..],
            &replica[..]
        );
    }

    #[test]
    fn index_full_appends_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // 3 offset entries, 2 time entries (one usable before seal).
        let mut seg = Segment::open(dir.path(), 0, config(0, 24)).unwrap();
        let b = make_batch(1, 10, 10);
        seg.append(&b, -1, -1, true).unwrap(); // counter 0: no entry
        seg.append(&make_batch(1, 10, 20), -1, -1, true).unwrap(); // entry 1 (time entry 1)
        assert!(seg.index_is_full(), "time index: entries >= max - 1");
        let size = seg.size();
        let err = seg
            .append(&make_batch(1, 10, 30), -1, -1, true)
            .unwrap_err();
        assert!(matches!(err, Error::IndexFull(_)));
        assert_eq!(seg.size(), size);
        // Kafka: a full time index refuses any index entry point, even when the
        // timestamp would not be appended.
        assert!(matches!(
            seg.append(&make_batch(1, 10, 5), -1, -1, true),
            Err(Error::IndexFull(_))
        ));
        assert_eq!(seg.offset_index_entries().unwrap().len(), 1);
        // A big interval: no entry point, appends go on.
        let mut seg = Segment::open(dir.path(), 100, config(1 << 20, 24)).unwrap();
        for _ in 0..5 {
            seg.append(&make_batch(1, 10, 5), -1, -1, true).unwrap();
        }
    }

    /// `read` (header walk plus the offset-index jump) against a plain walk over the
    /// batches' spans, for index intervals from every batch to none, every start batch,
    /// byte limits around batch boundaries and position limits.
    #[test]
    fn read_with_index_jump_matches_a_walk_of_whole_batches() {
        for interval in [0, 1000, 5000, 1 << 30] {
            let dir = tempfile::tempdir().unwrap();
            let mut seg = Segment::open(dir.path(), 0, config(interval, 1 << 20)).unwrap();
            let spans = fill(&mut seg, 30);
            let size = spans[0].1 as i64;
            let walk = |first: usize, max_bytes: i64, limit: i64| -> (u64, u64) {
                let start = spans[first].0;
                let mut total = spans[first].1;
                for &(pos, len) in &spans[first + 1..] {
                    if (total + len) as i64 > max_bytes || (pos + len) as i64 > limit {
                        break;
                    }
                    total += len;
                }
                (start, total)
            };
            for (first, &(start, _)) in spans.iter().enumerate() {
                let offset = first as i64 * 5 + 2;
                for max_bytes in [
                    size,
                    size + 1,
                    3 * size - 1,
                    3 * size,
                    7 * size + 5,
                    1 << 30,
                ] {
                    for limit in [-1, seg.size() as i64 / 2, start as i64 + 4 * size] {
                        let end = if limit < 0 { seg.size() as i64 } else { limit };
                        let got = seg.read(offset, max_bytes, limit, true).unwrap().unwrap();
                        let want = if start as i64 + size > end {
                            (start, 0)
                        } else {
                            walk(first, max_bytes, end)
                        };
                        assert_eq!(
                            got, want,
                            "interval {interval} first {first} max {max_bytes} limit {limit}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn read_translate_and_lookups() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(1000, 1 << 20)).unwrap();
        let spans = fill(&mut seg, 40);
        let batch_size = spans[0].1;
        assert!(spans.iter().all(|s| s.1 == batch_size));
        assert_eq!(seg.next_offset(), 200);
        // Index rules: an entry whenever more than 1000 bytes were counted.
        let per_entry = 1000 / batch_size + 1;
        let index = seg.offset_index_entries().unwrap();
        let mut expected = Vec::new();
        let mut counter = 0u64;
        for (b, &(pos, size)) in spans.iter().enumerate() {
            if counter > 1000 {
                expected.push((b as i64 * 5 + 4, pos as u32));
                counter = 0;
            }
            counter += size;
        }
        assert_eq!(index, expected);
        assert!(per_entry >= 1);
        for offset in 0..200i64 {
            let b = (offset / 5) as usize;
            let t = seg.translate_offset(offset, 0).unwrap().unwrap();
            assert_eq!(
                t,
                LogOffsetPosition {
                    last_offset: b as i64 * 5 + 4,
                    position: spans[b].0,
                    size: batch_size
                }
            );
            let (io, ip) = seg.lookup_index(offset).unwrap();
            assert!(io <= offset || (io, ip) == (0, 0));
        }
        assert_eq!(seg.translate_offset(200, 0).unwrap(), None);
        assert_eq!(
            seg.translate_offset(3, spans[5].0 as i64)
                .unwrap()
                .unwrap()
                .position,
            spans[5].0
        );
        // read: whole batches within max_bytes and max_position.
        assert_eq!(seg.read(200, 1 << 20, -1, true).unwrap(), None);
        assert_eq!(
            seg.read(7, 3 * batch_size as i64 + 5, -1, true).unwrap(),
            Some((spans[1].0, 3 * batch_size))
        );
        assert_eq!(
            seg.read(7, 10, -1, true).unwrap(),
            Some((spans[1].0, batch_size))
        );
        assert_eq!(seg.read(7, 10, -1, false).unwrap(), Some((spans[1].0, 0)));
        assert_eq!(
            seg.read(7, 10, spans[1].0 as i64 + 5, true).unwrap(),
            Some((spans[1].0, 0))
        );
        assert_eq!(
            seg.read(7, 1 << 30, spans[4].0 as i64 + 1, true).unwrap(),
            Some((spans[1].0, 3 * batch_size))
        );
        assert_eq!(
            seg.read(0, 1 << 30, -1, true).unwrap(),
            Some((0, seg.size()))
        );
        assert!(seg.read(0, -1, -1, true).is_err());
        // read_bytes is short at the end.
        let all = std::fs::read(seg.log_path()).unwrap();
        assert_eq!(seg.read_bytes(10, 20).unwrap(), &all[10..30]);
        assert_eq!(
            seg.read_bytes(seg.size() as i64 - 3, 20).unwrap(),
            &all[all.len() - 3..]
        );
        assert!(seg
            .read_bytes(seg.size() as i64 + 3, 20)
            .unwrap()
            .is_empty());
        // Time index and timestamp search.
        let times = seg.time_index_entries().unwrap();
        assert!(!times.is_empty());
        assert_eq!(seg.lookup_time_index(0).unwrap(), (-1, 0));
        assert_eq!(seg.lookup_time_index(times[1].0).unwrap(), times[1]);
        for target in [0i64, 1000, 1003, 1005, 1057, 1234, 1394] {
            let found = seg.find_offset_by_timestamp(target, -1).unwrap().unwrap();
            // Batch b holds timestamps 1000 + 10b .. 1000 + 10b + 4.
            let want = if target <= 1000 {
                (1000, 0)
            } else {
                let b = (target - 1000) / 10;
                let r = (target - 1000) % 10;
                if r <= 4 {
                    (target, b * 5 + r)
                } else {
                    (1000 + 10 * (b + 1), (b + 1) * 5)
                }
            };
            assert_eq!(
                (found.timestamp, found.offset, found.leader_epoch),
                (want.0, want.1, 3),
                "target {target}"
            );
        }
        assert_eq!(seg.find_offset_by_timestamp(1395, -1).unwrap(), None);
        let found = seg.find_offset_by_timestamp(1000, 33).unwrap().unwrap();
        assert_eq!((found.timestamp, found.offset), (1063, 33));
    }

    #[test]
    fn seal_close_and_reopen_restore_state() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(500, 1 << 16)).unwrap();
        fill(&mut seg, 30);
        let (entries, times) = (
            seg.offset_index_entries().unwrap(),
            seg.time_index_entries().unwrap(),
        );
        let (max_ts, max_off) = (seg.max_timestamp(), seg.offset_of_max_timestamp());
        seg.close().unwrap();
        seg.close().unwrap();
        assert!(seg.closed());
        assert!(matches!(
            seg.append(&make_batch(1, 1, 1), -1, -1, true),
            Err(Error::InvalidArgument(_))
        ));
        assert_eq!(
            std::fs::metadata(seg.index_path()).unwrap().len(),
            entries.len() as u64 * 8
        );
        // seal added the final (max_timestamp, offset) entry.
        let mut times_sealed = times.clone();
        if !matches!(times.last(), Some(t) if t.0 >= max_ts) {
            times_sealed.push((max_ts, max_off));
        }
        assert_eq!(
            std::fs::metadata(seg.time_index_path()).unwrap().len(),
            times_sealed.len() as u64 * 12
        );
        let mut seg = Segment::open(dir.path(), 0, config(500, 1 << 16)).unwrap();
        assert_eq!(seg.offset_index_entries().unwrap(), entries);
        assert_eq!(seg.time_index_entries().unwrap(), times_sealed);
        assert_eq!(
            (
                seg.next_offset(),
                seg.max_timestamp(),
                seg.offset_of_max_timestamp()
            ),
            (150, max_ts, max_off)
        );
        assert_eq!(seg.rolling_based_timestamp(), 1004);
        // Reopened as found (trimmed): full until the log makes it active again.
        assert_eq!(
            std::fs::metadata(seg.index_path()).unwrap().len(),
            entries.len() as u64 * 8
        );
        assert!(seg.index_is_full());
        seg.sanity_check().unwrap();
        seg.resize_indexes(None).unwrap();
        assert_eq!(std::fs::metadata(seg.index_path()).unwrap().len(), 1 << 16);
        assert!(!seg.index_is_full());
        // Appends continue.
        let r = seg.append(&make_batch(2, 1, 5000), -1, -1, true).unwrap();
        assert_eq!(r.first_offset, 150);
        seg.delete().unwrap();
        assert!(
            !seg.log_path().exists()
                && !seg.index_path().exists()
                && !seg.time_index_path().exists()
        );
    }

    #[test]
    fn index_sizes_new_reopened_resized_recovered_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let len = |p: &Path| std::fs::metadata(p).unwrap().len();
        let sizes = |seg: &Segment| (len(seg.index_path()), len(seg.time_index_path()));
        let mut seg = Segment::open(dir.path(), 0, config(500, 1000)).unwrap();
        // New files: preallocated, rounded down to the entry size.
        assert_eq!(sizes(&seg), (1000, 996));
        fill(&mut seg, 30);
        seg.close().unwrap();
        let (oi, ti) = sizes(&seg);
        assert!(oi > 0 && ti > 0 && oi < 1000);
        let mut seg = Segment::open(dir.path(), 0, config(500, 1000)).unwrap();
        assert_eq!(sizes(&seg), (oi, ti));
        assert!(seg.index_is_full());
        // Explicit sizes round down, never below the entries; the default is the max.
        assert!(ti > oi + 20, "the time index holds more entries here");
        seg.resize_indexes(Some(oi as i64 + 20)).unwrap();
        assert_eq!(sizes(&seg), (oi + 16, ti));
        seg.resize_indexes(Some(ti as i64 + 23)).unwrap();
        assert_eq!(sizes(&seg), ((ti + 23) / 8 * 8, ti + 12));
        seg.resize_indexes(Some(0)).unwrap();
        assert_eq!(sizes(&seg), (oi, ti));
        for bad in [-1, i32::MAX as i64 + 1] {
            assert!(matches!(
                seg.resize_indexes(Some(bad)),
                Err(Error::InvalidArgument(_))
            ));
        }
        seg.resize_indexes(None).unwrap();
        assert_eq!(sizes(&seg), (1000, 996));
        assert!(!seg.index_is_full());
        // recover trims (Kafka's trimToValidSize), from either size.
        assert_eq!(seg.recover().unwrap(), 0);
        assert_eq!(sizes(&seg), (oi, ti));
        assert!(seg.index_is_full());
        assert_eq!(seg.recover().unwrap(), 0);
        assert_eq!(sizes(&seg), (oi, ti));
        // truncate_to makes it the active segment again: preallocated.
        seg.truncate_to(seg.next_offset()).unwrap();
        assert_eq!(sizes(&seg), (1000, 996));
        seg.close().unwrap();
        assert!(matches!(
            seg.resize_indexes(None),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn recover_rebuilds_identical_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(700, 1 << 16)).unwrap();
        fill(&mut seg, 50);
        // Multi-batch appends count per batch too.
        let data = [
            make_batch(3, 300, 2000),
            make_batch(3, 300, 1500),
            make_batch(3, 300, 2500),
        ]
        .concat();
        seg.append(&data, 1, -1, true).unwrap();
        let state = (
            seg.next_offset(),
            seg.max_timestamp(),
            seg.offset_of_max_timestamp(),
            seg.rolling_based_timestamp(),
        );
        seg.seal().unwrap();
        let appended = file_bytes(&seg);
        seg.close().unwrap();
        // Lose the indexes entirely, then recover.
        std::fs::remove_file(dir.path().join(file_name(0, INDEX_FILE_SUFFIX))).unwrap();
        std::fs::remove_file(dir.path().join(file_name(0, TIME_INDEX_FILE_SUFFIX))).unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(700, 1 << 16)).unwrap();
        assert_eq!(seg.recover().unwrap(), 0);
        assert_eq!(
            (
                seg.next_offset(),
                seg.max_timestamp(),
                seg.offset_of_max_timestamp(),
                seg.rolling_based_timestamp()
            ),
            state
        );
        seg.seal().unwrap();
        assert_eq!(file_bytes(&seg), appended);
        seg.sanity_check().unwrap();
    }

    #[test]
    fn recover_leaves_the_append_counter_and_close_trims_even_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(1 << 20, 1 << 16)).unwrap();
        fill(&mut seg, 3);
        let counter = seg.bytes_since_last_entry();
        assert!(counter > 0);
        seg.recover().unwrap();
        assert_eq!(
            seg.bytes_since_last_entry(),
            counter,
            "Kafka's recover: a local counter"
        );
        seg.close().unwrap();
        // A time index whose last offset is above what the segment holds: sealing fails,
        // closing still trims and closes.
        let tpath = dir.path().join(file_name(0, TIME_INDEX_FILE_SUFFIX));
        let mut entry = Vec::new();
        entry.extend_from_slice(&5i64.to_be_bytes());
        entry.extend_from_slice(&1000u32.to_be_bytes());
        std::fs::write(&tpath, &entry).unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(1 << 20, 1 << 16)).unwrap();
        assert_eq!(seg.max_timestamp(), 5);
        seg.append(&make_batch(1, 1, 99), -1, -1, true).unwrap();
        assert!(matches!(seg.close(), Err(Error::InvalidOffset(_))));
        assert!(seg.closed());
        assert_eq!(std::fs::metadata(&tpath).unwrap().len(), 12);
        assert_eq!(std::fs::metadata(seg.index_path()).unwrap().len(), 0);
    }

    #[test]
    fn recover_truncates_at_a_corrupt_byte_and_a_partial_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(700, 1 << 16)).unwrap();
        let spans = fill(&mut seg, 20);
        seg.close().unwrap();
        let log_path = dir.path().join(file_name(0, LOG_FILE_SUFFIX));
        // Flip a byte inside batch 12's records.
        let mut log = std::fs::read(&log_path).unwrap();
        log[spans[12].0 as usize + 100] ^= 0x55;
        std::fs::write(&log_path, &log).unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(700, 1 << 16)).unwrap();
        assert_eq!(seg.next_offset(), 100, "open does not check CRCs");
        let removed = seg.recover().unwrap();
        assert_eq!(removed, log.len() as u64 - spans[12].0);
        assert_eq!((seg.size(), seg.next_offset()), (spans[12].0, 60));
        assert_eq!(std::fs::metadata(&log_path).unwrap().len(), spans[12].0);
        assert_eq!(seg.max_timestamp(), 1000 + 10 * 11 + 4);
        assert!(seg.offset_index_entries().unwrap().iter().all(|e| e.0 < 60));
        // A partial batch at the tail (written behind the segment's back: reopen).
        seg.close().unwrap();
        let extra = make_batch(2, 10, 1);
        let mut f = OpenOptions::new().append(true).open(&log_path).unwrap();
        std::io::Write::write_all(&mut f, &extra[..extra.len() - 3]).unwrap();
        drop(f);
        let mut seg = Segment::open(dir.path(), 0, config(700, 1 << 16)).unwrap();
        assert_eq!(seg.next_offset(), 60);
        assert_eq!(seg.recover().unwrap(), extra.len() as u64 - 3);
        assert_eq!(seg.size(), spans[12].0);
        // Offsets going backwards end the valid part too.
        seg.append(&make_batch(2, 10, 1), -1, -1, true).unwrap();
        let good_size = seg.size();
        seg.close().unwrap();
        let mut f = OpenOptions::new().append(true).open(&log_path).unwrap();
        let backwards = batch::build(
            &[Record {
                offset: 3,
                timestamp: 1,
                key: None,
                value: None,
                headers: vec![],
            }],
            &opts(3),
        )
        .unwrap();
        std::io::Write::write_all(&mut f, &backwards).unwrap();
        drop(f);
        let mut seg = Segment::open(dir.path(), 0, config(700, 1 << 16)).unwrap();
        assert_eq!(seg.recover().unwrap(), backwards.len() as u64);
        assert_eq!((seg.size(), seg.next_offset()), (good_size, 62));
    }

    #[test]
    fn truncate_to_cuts_batches_and_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(3000, 1 << 16)).unwrap();
        let spans = fill(&mut seg, 30);
        seg.seal().unwrap();
        assert_eq!(seg.truncate_to(1000).unwrap(), 0);
        // Offset 42 is inside batch 8 (offsets 40..44): the whole batch goes.
        let removed = seg.truncate_to(42).unwrap();
        assert_eq!(removed, spans[29].0 + spans[29].1 - spans[8].0);
        assert_eq!((seg.size(), seg.next_offset()), (spans[8].0, 40));
        assert!(seg.offset_index_entries().unwrap().iter().all(|e| e.0 < 42));
        let times = seg.time_index_entries().unwrap();
        assert_eq!(times, vec![(1034, 19), (1064, 34)]);
        // Kafka's readLargestTimestamp: batches after the last time entry count too
        // (batch 7, offsets 35..39, holds the largest timestamp left).
        assert_eq!(
            (seg.max_timestamp(), seg.offset_of_max_timestamp()),
            (1074, 39)
        );
        assert_eq!(seg.bytes_since_last_entry(), 0);
        assert_eq!(std::fs::metadata(seg.index_path()).unwrap().len(), 1 << 16);
        let r = seg.append(&make_batch(1, 10, 9000), -1, -1, true).unwrap();
        assert_eq!(r.first_offset, 40);
        let size = seg.size();
        assert_eq!(seg.truncate_to(0).unwrap(), size);
        assert_eq!(
            (seg.size(), seg.next_offset(), seg.rolling_based_timestamp()),
            (0, 0, -1)
        );
        assert!(seg.offset_index_entries().unwrap().is_empty());
    }

    #[test]
    fn legacy_messages_are_read_and_recovered() {
        let dir = tempfile::tempdir().unwrap();
        let records: Vec<Record> = (0..4)
            .map(|o| Record {
                offset: o,
                timestamp: 100 + o,
                key: None,
                value: Some(vec![b'x'; 50]),
                headers: vec![],
            })
            .collect();
        let v1 = crate::legacy::build(&records, 1, Codec::None, 0).unwrap();
        let wrapped: Vec<Record> = (4..7)
            .map(|o| Record {
                offset: o,
                timestamp: 100 + o,
                key: None,
                value: Some(vec![b'y'; 50]),
                headers: vec![],
            })
            .collect();
        let v1z = crate::legacy::build(&wrapped, 1, Codec::Gzip, 0).unwrap();
        std::fs::write(
            dir.path().join(file_name(0, LOG_FILE_SUFFIX)),
            [v1.clone(), v1z.clone()].concat(),
        )
        .unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(100, 1 << 16)).unwrap();
        assert_eq!(seg.next_offset(), 7);
        assert_eq!(seg.rolling_based_timestamp(), 100);
        assert_eq!(seg.recover().unwrap(), 0);
        assert_eq!(seg.next_offset(), 7);
        assert_eq!(
            (seg.max_timestamp(), seg.offset_of_max_timestamp()),
            (106, 6)
        );
        let t = seg.translate_offset(5, 0).unwrap().unwrap();
        assert_eq!(
            (t.last_offset, t.position, t.size),
            (6, v1.len() as u64, v1z.len() as u64)
        );
        let found = seg.find_offset_by_timestamp(105, -1).unwrap().unwrap();
        assert_eq!(
            (found.timestamp, found.offset, found.leader_epoch),
            (105, 5, -1)
        );
        // v2 appends follow.
        let r = seg.append(&make_batch(1, 1, 1), -1, -1, true).unwrap();
        assert_eq!(r.first_offset, 7);
    }

    #[test]
    fn scans_cross_chunk_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(1 << 30, 1 << 16)).unwrap();
        // Batches of ~7 KiB and ~40 KiB interleaved so windows end mid-batch.
        let mut expected_next = 0;
        for i in 0..60 {
            let size = if i % 3 == 0 { 40_000 } else { 7_000 };
            seg.append(&make_batch(2, size, i), -1, -1, true).unwrap();
            expected_next += 2;
        }
        assert!(seg.offset_index_entries().unwrap().is_empty());
        for offset in (0..expected_next).step_by(7) {
            let t = seg.translate_offset(offset, 0).unwrap().unwrap();
            assert_eq!(t.last_offset, offset | 1);
        }
        assert_eq!(
            seg.read(0, i64::MAX, -1, true).unwrap(),
            Some((0, seg.size()))
        );
        seg.close().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(1 << 30, 1 << 16)).unwrap();
        assert_eq!(seg.next_offset(), expected_next);
        assert_eq!(seg.recover().unwrap(), 0);
        assert_eq!(seg.records().unwrap().len() as i64, expected_next);
    }

    #[test]
    fn scan_errors_name_the_file_and_absolute_position() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::open(dir.path(), 0, config(1 << 30, 1 << 16)).unwrap();
        let spans = fill(&mut seg, 200);
        seg.close().unwrap();
        let log_path = dir.path().join(file_name(0, LOG_FILE_SUFFIX));
        let mut log = std::fs::read(&log_path).unwrap();
        let bad = spans[150].0 as usize;
        log[bad + 16] = 9; // magic 9
        std::fs::write(&log_path, &log).unwrap();
        let seg = Segment::open(dir.path(), 0, config(1 << 30, 1 << 16)).unwrap();
        assert_eq!(
            seg.next_offset(),
            750,
            "open stops silently at the corrupt batch"
        );
        let err = seg.translate_offset(799, 0).unwrap_err();
        match err {
            Error::Corrupt {
                context, position, ..
            } => {
                assert!(context.ends_with("00000000000000000000.log"));
                assert_eq!(position, bad as u64);
            }
            other => panic!("unexpected {other:?}"),
        }
        // A read walks one batch past what it returns: it fails only if that one is bad.
        let size = spans[0].1 as i64;
        assert_eq!(
            seg.read(740, size, -1, true).unwrap(),
            Some((spans[148].0, size as u64))
        );
        assert!(matches!(
            seg.read(740, 2 * size, -1, true),
            Err(Error::Corrupt { .. })
        ));
    }
}
