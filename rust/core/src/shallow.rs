//! A magic-agnostic view of one batch in a buffer (v2 batch, or one legacy shallow
//! message), walked the way Kafka's `FileLogInputStream.nextBatch` walks a file.

use crate::batch::Record;
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShallowBatch {
    pub position: usize,
    pub base_offset: i64,
    pub last_offset: i64,
    /// Total bytes including the 12-byte log overhead.
    pub size: usize,
    pub magic: i8,
    /// v2: maxTimestamp; v1: the message timestamp; v0: -1.
    pub max_timestamp: i64,
    /// v2 only; -1 for legacy.
    pub partition_leader_epoch: i32,
    pub crc: u32,
}

/// The next batch at `pos`, like `FileLogInputStream.nextBatch`:
/// * `Ok(None)` when fewer than 17 bytes remain, or the declared size runs past the end
///   (a partial batch at the tail);
/// * `Err(Corrupt)` when the size field is below 14 (`RECORD_OVERHEAD_V0`), or magic is
///   not 0, 1 or 2.
///
/// No CRC check: see [`ensure_valid`]. For legacy compressed wrappers base_offset ==
/// last_offset == the wrapper's offset (shallow, as Kafka's shallow view).
pub fn next_batch(buf: &[u8], pos: usize, context: &str) -> Result<Option<ShallowBatch>> {
    todo!("R1")
}

/// Kafka's `ensureValid`: size >= the magic's minimum overhead, CRC matches
/// (v2 CRC-32C, legacy CRC-32), last_offset >= base_offset.
pub fn ensure_valid(buf: &[u8], batch: &ShallowBatch, context: &str) -> Result<()> {
    todo!("R1")
}

/// Deep records of the batch (v2 via `batch::records`, legacy via `legacy::records`).
pub fn records(buf: &[u8], batch: &ShallowBatch, context: &str) -> Result<Vec<Record>> {
    todo!("R1")
}
