//! Legacy MessageSet v0/v1 (Kafka's `LegacyRecord`): read path, plus a builder for tests.
//!
//! ```text
//! 0  offset      i64
//! 8  size        i32   (bytes after this field)
//! 12 crc         u32   CRC-32 of bytes 16..end
//! 16 magic       i8    0 or 1
//! 17 attributes  i8    bits 0-2 codec, bit 3 timestamp type (v1)
//! 18 timestamp   i64   (v1 only)
//!    key         i32 length (-1 = null) + bytes
//!    value       i32 length (-1 = null) + bytes
//! ```

use crate::batch::Record;
use crate::error::Result;

/// Shallow header of the message at `pos`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyHeader {
    pub offset: i64,
    pub size: i32,
    pub crc: u32,
    pub magic: i8,
    pub attributes: i8,
    /// -1 for magic 0.
    pub timestamp: i64,
}

impl LegacyHeader {
    pub fn size_in_bytes(&self) -> usize {
        self.size as usize + 12
    }
}

/// Parse the shallow header (no CRC check): needs the full message to be in `buf`,
/// magic 0 or 1, size >= the v0/v1 minimum overhead.
pub fn parse_header(buf: &[u8], pos: usize, context: &str) -> Result<LegacyHeader> {
    todo!("R1")
}

/// Shallow validation: header + CRC-32.
pub fn validate_shallow(buf: &[u8], pos: usize, context: &str) -> Result<LegacyHeader> {
    todo!("R1")
}

/// Deep iteration of the message at `pos`: an uncompressed message yields itself; a
/// compressed wrapper yields its inner messages (each CRC-checked) with absolute offsets
/// (v1: inner offsets are relative, the wrapper carries the last one) and, when the
/// wrapper uses LogAppendTime, the wrapper's timestamp. Headers are always empty.
pub fn records(buf: &[u8], pos: usize, context: &str) -> Result<(LegacyHeader, Vec<Record>)> {
    todo!("R1")
}

/// Build a message set (tests only). `codec` 0 = one message per record; otherwise one
/// wrapper holding all records (v1: relative inner offsets). Records carry absolute offsets.
pub fn build(records: &[Record], magic: i8, codec: crate::compression::Codec, timestamp_type: i32) -> Result<Vec<u8>> {
    todo!("R1")
}
