//! RecordBatch v2 (magic 2). See `DefaultRecordBatch` in Apache Kafka:
//!
//! ```text
//! 0  baseOffset            i64
//! 8  batchLength           i32   (size - 12)
//! 12 partitionLeaderEpoch  i32   (not covered by the CRC)
//! 16 magic                 i8 = 2
//! 17 crc                   u32   CRC-32C of bytes 21..end
//! 21 attributes            i16   bits 0-2 codec, 3 timestamp type, 4 transactional,
//!                                5 control, 6 delete horizon
//! 23 lastOffsetDelta       i32
//! 27 baseTimestamp         i64
//! 35 maxTimestamp          i64
//! 43 producerId            i64
//! 51 producerEpoch         i16
//! 53 baseSequence          i32
//! 57 recordsCount          i32
//! 61 records
//! ```

use crate::compression::Codec;
use crate::error::Result;

pub const BASE_OFFSET_OFFSET: usize = 0;
pub const LENGTH_OFFSET: usize = 8;
pub const LOG_OVERHEAD: usize = 12;
pub const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
pub const MAGIC_OFFSET: usize = 16;
pub const CRC_OFFSET: usize = 17;
pub const ATTRIBUTES_OFFSET: usize = 21;
pub const LAST_OFFSET_DELTA_OFFSET: usize = 23;
pub const BASE_TIMESTAMP_OFFSET: usize = 27;
pub const MAX_TIMESTAMP_OFFSET: usize = 35;
pub const PRODUCER_ID_OFFSET: usize = 43;
pub const PRODUCER_EPOCH_OFFSET: usize = 51;
pub const BASE_SEQUENCE_OFFSET: usize = 53;
pub const RECORDS_COUNT_OFFSET: usize = 57;
pub const RECORDS_OFFSET: usize = 61;
pub const RECORD_BATCH_OVERHEAD: usize = RECORDS_OFFSET;

pub const COMPRESSION_CODEC_MASK: i16 = 0x07;
pub const TIMESTAMP_TYPE_MASK: i16 = 0x08;
pub const TRANSACTIONAL_FLAG_MASK: i16 = 0x10;
pub const CONTROL_FLAG_MASK: i16 = 0x20;
pub const DELETE_HORIZON_FLAG_MASK: i16 = 0x40;

/// The 61-byte header, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub batch_length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

impl BatchHeader {
    pub fn last_offset(&self) -> i64 {
        self.base_offset + self.last_offset_delta as i64
    }
    /// Total bytes of the batch including the 12-byte log overhead.
    pub fn size_in_bytes(&self) -> usize {
        self.batch_length as usize + LOG_OVERHEAD
    }
}

/// One record, with absolute offset and absolute timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// Builder options (see `build_batch` in `_native.pyi` for the exact rules).
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub base_offset: Option<i64>,
    pub last_offset_delta: Option<i32>,
    pub codec: Codec,
    pub timestamp_type: i32,
    pub partition_leader_epoch: i32,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub transactional: bool,
    pub control: bool,
    pub delete_horizon_ms: i64,
}

/// Parse the header at `pos` (needs 61 bytes and magic 2; no CRC check).
/// `context` names the buffer or file in errors.
pub fn parse_header(buf: &[u8], pos: usize, context: &str) -> Result<BatchHeader> {
    todo!("R1")
}

/// Full validation of the batch at `pos`: sizes, magic, CRC-32C, then (after
/// decompression) every record: count, lengths, varint bounds, offset deltas
/// strictly increasing and <= lastOffsetDelta, UTF-8 header keys, no trailing bytes.
pub fn validate(buf: &[u8], pos: usize, context: &str) -> Result<BatchHeader> {
    todo!("R1")
}

/// Only the cheap checks Kafka's `ensureValid` makes: size >= 61, fits in `buf`,
/// magic 2, CRC-32C matches.
pub fn validate_shallow(buf: &[u8], pos: usize, context: &str) -> Result<BatchHeader> {
    todo!("R1")
}

/// Validate fully, then decode every record (decompressing if needed).
pub fn records(buf: &[u8], pos: usize, context: &str) -> Result<(BatchHeader, Vec<Record>)> {
    todo!("R1")
}

/// Build one batch. Errors: `InvalidArgument` for empty records, non-increasing
/// offsets, offsets below base_offset, deltas not fitting i32, bad timestamp type.
pub fn build(records: &[Record], opts: &BuildOptions) -> Result<Vec<u8>> {
    todo!("R1")
}

/// Rewrite the header of the batch at `buf[pos..]` in place: base offset, partition
/// leader epoch and, when `log_append_time_ms >= 0`, the timestamp-type bit and
/// maxTimestamp; then recompute the CRC. The batch must already be validated.
pub fn restamp(
    buf: &mut [u8],
    pos: usize,
    base_offset: i64,
    partition_leader_epoch: i32,
    log_append_time_ms: i64,
) {
    todo!("R1")
}
