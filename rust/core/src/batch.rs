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

use crate::compression::{self, Codec};
use crate::crc::crc32c;
use crate::error::{Error, Result};
use crate::varint::{
    read_varint, read_varlong, size_of_varint, size_of_varlong, write_varint, write_varlong,
};

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
/// The attribute bits Kafka knows (`computeAttributes` writes no others).
pub const KNOWN_ATTRIBUTES_MASK: i16 = 0x7F;

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
        self.base_offset.wrapping_add(self.last_offset_delta as i64)
    }
    /// Total bytes of the batch including the 12-byte log overhead.
    pub fn size_in_bytes(&self) -> usize {
        // A negative length (only in an unvalidated header) counts as 0, never wraps.
        self.batch_length.max(0) as usize + LOG_OVERHEAD
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

impl Default for BuildOptions {
    /// A plain producer batch: no codec, CreateTime, no producer id, epoch or sequence,
    /// offsets from the records (the defaults of `build_batch`).
    fn default() -> Self {
        BuildOptions {
            base_offset: None,
            last_offset_delta: None,
            codec: Codec::None,
            timestamp_type: 0,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            control: false,
            delete_horizon_ms: -1,
        }
    }
}

/// Parse the header at `pos` (needs 61 bytes and magic 2; no CRC check).
/// `context` names the buffer or file in errors.
pub fn parse_header(buf: &[u8], pos: usize, context: &str) -> Result<BatchHeader> {
    let raw = header_bytes(buf, pos, context)?;
    let header = decode_header(raw);
    check_magic(&header, pos, context)?;
    Ok(header)
}

/// Full validation of the batch at `pos`: sizes, magic, CRC-32C, then (after
/// decompression) every record: count, lengths, varint bounds, offset deltas
/// strictly increasing and <= lastOffsetDelta, UTF-8 header keys, no trailing bytes.
pub fn validate(buf: &[u8], pos: usize, context: &str) -> Result<BatchHeader> {
    for_each_record(buf, pos, context, |_| {})
}

/// Only the cheap checks Kafka's `ensureValid` makes: size >= 61, fits in `buf`,
/// magic 2, CRC-32C matches.
pub fn validate_shallow(buf: &[u8], pos: usize, context: &str) -> Result<BatchHeader> {
    validate_shallow_inner(buf, pos, context).map(|(header, _)| header)
}

/// Validate fully, then decode every record (decompressing if needed).
pub fn records(buf: &[u8], pos: usize, context: &str) -> Result<(BatchHeader, Vec<Record>)> {
    let mut out: Vec<Record> = Vec::new();
    let header = for_each_record(buf, pos, context, |r| {
        if out.capacity() == 0 {
            out.reserve(r.records_count_hint);
        }
        out.push(r.to_record());
    })?;
    Ok((header, out))
}

/// A record borrowed from its batch (or from the batch's decompressed records), as
/// [`for_each_record`] hands it out: no allocation per record.
#[derive(Debug, Clone, Copy)]
pub struct RecordRef<'a> {
    pub offset_delta: i32,
    /// baseOffset + offsetDelta.
    pub offset: i64,
    /// maxTimestamp for LogAppendTime batches, else baseTimestamp + timestampDelta.
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub header_count: usize,
    /// The encoded headers (already validated).
    headers_raw: &'a [u8],
    records_count_hint: usize,
}

impl<'a> RecordRef<'a> {
    /// The headers as `(key, value)`.
    pub fn headers(&self) -> HeaderIter<'a> {
        HeaderIter {
            cursor: Cursor::new(self.headers_raw),
            remaining: self.header_count,
        }
    }

    /// An owned copy.
    pub fn to_record(&self) -> Record {
        Record {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self
                .headers()
                .map(|(k, v)| (k.to_string(), v.map(<[u8]>::to_vec)))
                .collect(),
        }
    }
}

/// Iterator over the headers of a [`RecordRef`].
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    cursor: Cursor<'a>,
    remaining: usize,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = (&'a str, Option<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let key = match self.cursor.length_prefixed() {
            Some(Some(k)) => std::str::from_utf8(k).ok()?,
            _ => return None,
        };
        let value = self.cursor.length_prefixed()?;
        Some((key, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining))
    }
}

/// Validate the batch at `pos` completely (as [`validate`]) and call `f` with every
/// record, in order. Nothing is allocated per record; a compressed batch is
/// decompressed once. Errors leave `f` called for the records before the bad one.
pub fn for_each_record<'b, F>(
    buf: &'b [u8],
    pos: usize,
    context: &str,
    mut f: F,
) -> Result<BatchHeader>
where
    F: FnMut(RecordRef<'_>),
{
    let (header, end) = validate_shallow_inner(buf, pos, context)?;
    // validate_shallow_inner guarantees pos + 61 <= end <= buf.len().
    let section: &'b [u8] = buf.get(pos + RECORDS_OFFSET..end).unwrap_or(&[]);
    let codec_id = (header.attributes & COMPRESSION_CODEC_MASK) as i32;
    let codec = Codec::from_id(codec_id).map_err(|_| {
        Error::corrupt(
            context,
            pos as u64,
            format!("unknown compression codec id {codec_id}"),
        )
    })?;
    let scan_result = if codec == Codec::None || section.is_empty() {
        scan_records(&header, section, &mut f)
    } else {
        let inflated =
            compression::decompress(codec, section).map_err(|e| rewrap(e, context, pos))?;
        scan_records(&header, &inflated, &mut f)
    };
    scan_result.map_err(|reason| Error::corrupt(context, pos as u64, reason))?;
    Ok(header)
}

/// Build one batch. Errors: `InvalidArgument` for empty records, non-increasing
/// offsets, offsets below base_offset, deltas not fitting i32, bad timestamp type.
pub fn build(records: &[Record], opts: &BuildOptions) -> Result<Vec<u8>> {
    let first = records
        .first()
        .ok_or_else(|| invalid("a record batch needs at least one record".to_string()))?;
    if opts.timestamp_type != 0 && opts.timestamp_type != 1 {
        return Err(invalid(format!(
            "timestamp_type must be 0 (CreateTime) or 1 (LogAppendTime), not {}",
            opts.timestamp_type
        )));
    }
    let records_count = i32::try_from(records.len())
        .map_err(|_| invalid(format!("too many records: {}", records.len())))?;
    let base_offset = opts.base_offset.unwrap_or(first.offset);
    let has_delete_horizon = opts.delete_horizon_ms >= 0;
    let base_timestamp = if has_delete_horizon {
        opts.delete_horizon_ms
    } else {
        first.timestamp
    };

    // Pass 1: check every argument and size the records section exactly.
    let mut max_timestamp = i64::MIN;
    let mut previous: Option<i64> = None;
    let mut last_delta = 0i32;
    let mut section_len = 0usize;
    for (i, r) in records.iter().enumerate() {
        if r.offset < base_offset {
            return Err(invalid(format!(
                "record {i}: offset {} is below base_offset {base_offset}",
                r.offset
            )));
        }
        if let Some(p) = previous {
            if r.offset <= p {
                return Err(invalid(format!(
                    "record {i}: offset {} does not follow {p} (offsets must strictly increase)",
                    r.offset
                )));
            }
        }
        previous = Some(r.offset);
        let delta = offset_delta(r.offset, base_offset)
            .ok_or_else(|| invalid(format!("record {i}: offset delta of {} from base_offset {base_offset} does not fit in an i32", r.offset)))?;
        last_delta = delta;
        max_timestamp = max_timestamp.max(r.timestamp);
        let body = record_body_size(delta, r.timestamp.wrapping_sub(base_timestamp), r)
            .ok_or_else(|| invalid(format!("record {i} is too large for a record batch")))?;
        section_len = section_len
            .checked_add(size_of_varint(body) + body as usize)
            .ok_or_else(|| invalid("records too large for a record batch".to_string()))?;
    }
    let last_offset_delta = match opts.last_offset_delta {
        Some(d) if d < last_delta => {
            return Err(invalid(format!(
                "last_offset_delta {d} is below the last record's offset delta {last_delta}"
            )))
        }
        Some(d) => d,
        None => last_delta,
    };

    // Pass 2: write.
    let mut out: Vec<u8>;
    if opts.codec == Codec::None {
        out = Vec::with_capacity(RECORDS_OFFSET + section_len);
        out.resize(RECORDS_OFFSET, 0);
        write_records(&mut out, records, base_offset, base_timestamp);
    } else {
        let mut plain = Vec::with_capacity(section_len);
        write_records(&mut plain, records, base_offset, base_timestamp);
        out = Vec::with_capacity(RECORDS_OFFSET + section_len / 2 + 64);
        out.resize(RECORDS_OFFSET, 0);
        compression::compress_into(opts.codec, &plain, &mut out)?;
    }
    let batch_length = i32::try_from(out.len() - LOG_OVERHEAD)
        .map_err(|_| invalid("records too large for a record batch".to_string()))?;

    let attributes = (opts.codec as i16)
        | ((opts.timestamp_type as i16) << 3)
        | if opts.transactional {
            TRANSACTIONAL_FLAG_MASK
        } else {
            0
        }
        | if opts.control { CONTROL_FLAG_MASK } else { 0 }
        | if has_delete_horizon {
            DELETE_HORIZON_FLAG_MASK
        } else {
            0
        };
    let header = BatchHeader {
        base_offset,
        batch_length,
        partition_leader_epoch: opts.partition_leader_epoch,
        magic: 2,
        crc: 0,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id: opts.producer_id,
        producer_epoch: opts.producer_epoch,
        base_sequence: opts.base_sequence,
        records_count,
    };
    if let Some(raw) = out.get_mut(..RECORDS_OFFSET) {
        encode_header(&header, raw);
    }
    let crc = crc32c(out.get(ATTRIBUTES_OFFSET..).unwrap_or(&[]));
    if let Some(slot) = out.get_mut(CRC_OFFSET..ATTRIBUTES_OFFSET) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
    Ok(out)
}

/// Rewrite the header of the batch at `buf[pos..]` in place: base offset, partition
/// leader epoch and, when `log_append_time_ms >= 0`, the timestamp-type bit and
/// maxTimestamp; then recompute the CRC. The batch must already be validated.
///
/// As Kafka's `setMaxTimestamp(LOG_APPEND_TIME, t)`: nothing under the CRC changes
/// when the batch already has the LogAppendTime bit and maxTimestamp `t` (the CRC is
/// then left as is: base offset and leader epoch lie outside it); otherwise the
/// attributes are rebuilt from their known bits 0-6 (bits 7-15 dropped) with bit 3
/// set, maxTimestamp is written and the CRC recomputed. A batch whose length field
/// is below 49 or that does not fit in `buf` is left untouched.
pub fn restamp(
    buf: &mut [u8],
    pos: usize,
    base_offset: i64,
    partition_leader_epoch: i32,
    log_append_time_ms: i64,
) {
    let Some(end) = batch_end(buf, pos) else {
        return;
    };
    let Some(batch) = buf.get_mut(pos..end) else {
        return;
    };
    let Some(raw) = batch.get_mut(..RECORDS_OFFSET) else {
        return;
    };
    raw[BASE_OFFSET_OFFSET..LENGTH_OFFSET].copy_from_slice(&base_offset.to_be_bytes());
    raw[PARTITION_LEADER_EPOCH_OFFSET..MAGIC_OFFSET]
        .copy_from_slice(&partition_leader_epoch.to_be_bytes());
    if log_append_time_ms < 0 {
        return;
    }
    let attributes = i16::from_be_bytes([raw[ATTRIBUTES_OFFSET], raw[ATTRIBUTES_OFFSET + 1]]);
    let new_max = log_append_time_ms.to_be_bytes();
    if attributes & TIMESTAMP_TYPE_MASK != 0
        && raw[MAX_TIMESTAMP_OFFSET..PRODUCER_ID_OFFSET] == new_max
    {
        return;
    }
    // Kafka's `computeAttributes` rebuilds them from the known bits: 7-15 are dropped.
    let new_attributes = (attributes & KNOWN_ATTRIBUTES_MASK) | TIMESTAMP_TYPE_MASK;
    raw[ATTRIBUTES_OFFSET..LAST_OFFSET_DELTA_OFFSET].copy_from_slice(&new_attributes.to_be_bytes());
    raw[MAX_TIMESTAMP_OFFSET..PRODUCER_ID_OFFSET].copy_from_slice(&new_max);
    let crc = crc32c(batch.get(ATTRIBUTES_OFFSET..).unwrap_or(&[]));
    if let Some(slot) = batch.get_mut(CRC_OFFSET..ATTRIBUTES_OFFSET) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
}

// ---------------------------------------------------------------------------------
// Internals.

fn invalid(msg: String) -> Error {
    Error::InvalidArgument(msg)
}

/// Re-attach a codec error (context "buffer", position 0) to this batch.
fn rewrap(e: Error, context: &str, pos: usize) -> Error {
    match e {
        Error::Corrupt { reason, .. } => Error::corrupt(context, pos as u64, reason),
        other => Error::corrupt(context, pos as u64, other.to_string()),
    }
}

/// End (exclusive) of the batch at `pos` if its declared length is sane and it fits.
fn batch_end(buf: &[u8], pos: usize) -> Option<usize> {
    let raw = buf.get(pos..pos.checked_add(RECORDS_OFFSET)?)?;
    let len = i32::from_be_bytes([raw[8], raw[9], raw[10], raw[11]]);
    if len < (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i32 {
        return None;
    }
    let end = pos.checked_add(LOG_OVERHEAD + len as usize)?;
    (end <= buf.len()).then_some(end)
}

fn header_bytes<'a>(buf: &'a [u8], pos: usize, context: &str) -> Result<&'a [u8; RECORDS_OFFSET]> {
    pos.checked_add(RECORDS_OFFSET)
        .and_then(|end| buf.get(pos..end))
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| {
            Error::corrupt(
                context,
                pos as u64,
                format!(
                    "record batch header needs {RECORDS_OFFSET} bytes, only {} remain",
                    buf.len().saturating_sub(pos)
                ),
            )
        })
}

fn check_magic(header: &BatchHeader, pos: usize, context: &str) -> Result<()> {
    if header.magic != 2 {
        return Err(Error::corrupt(
            context,
            pos as u64,
            format!(
                "unsupported magic {} for a record batch (expected 2)",
                header.magic
            ),
        ));
    }
    Ok(())
}

/// The shallow checks; returns the header and the batch's end position.
fn validate_shallow_inner(buf: &[u8], pos: usize, context: &str) -> Result<(BatchHeader, usize)> {
    let raw = header_bytes(buf, pos, context)?;
    let header = decode_header(raw);
    let min_length = (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i32;
    if header.batch_length < min_length {
        return Err(Error::corrupt(
            context,
            pos as u64,
            format!(
                "record batch size {} is smaller than the minimum allowed overhead {RECORD_BATCH_OVERHEAD}",
                header.batch_length as i64 + LOG_OVERHEAD as i64
            ),
        ));
    }
    let size = header.batch_length as usize + LOG_OVERHEAD;
    let end = pos
        .checked_add(size)
        .filter(|&end| end <= buf.len())
        .ok_or_else(|| {
            Error::corrupt(
                context,
                pos as u64,
                format!(
                    "record batch of {size} bytes runs past the end of the data ({} bytes remain)",
                    buf.len().saturating_sub(pos)
                ),
            )
        })?;
    check_magic(&header, pos, context)?;
    let computed = crc32c(buf.get(pos + ATTRIBUTES_OFFSET..end).unwrap_or(&[]));
    if computed != header.crc {
        return Err(Error::corrupt(
            context,
            pos as u64,
            format!(
                "record batch is corrupt (stored crc = {}, computed crc = {computed})",
                header.crc
            ),
        ));
    }
    Ok((header, end))
}

#[inline]
fn decode_header(h: &[u8; RECORDS_OFFSET]) -> BatchHeader {
    let i64_at = |at: usize| {
        i64::from_be_bytes([
            h[at],
            h[at + 1],
            h[at + 2],
            h[at + 3],
            h[at + 4],
            h[at + 5],
            h[at + 6],
            h[at + 7],
        ])
    };
    let i32_at = |at: usize| i32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    let i16_at = |at: usize| i16::from_be_bytes([h[at], h[at + 1]]);
    BatchHeader {
        base_offset: i64_at(BASE_OFFSET_OFFSET),
        batch_length: i32_at(LENGTH_OFFSET),
        partition_leader_epoch: i32_at(PARTITION_LEADER_EPOCH_OFFSET),
        magic: h[MAGIC_OFFSET] as i8,
        crc: i32_at(CRC_OFFSET) as u32,
        attributes: i16_at(ATTRIBUTES_OFFSET),
        last_offset_delta: i32_at(LAST_OFFSET_DELTA_OFFSET),
        base_timestamp: i64_at(BASE_TIMESTAMP_OFFSET),
        max_timestamp: i64_at(MAX_TIMESTAMP_OFFSET),
        producer_id: i64_at(PRODUCER_ID_OFFSET),
        producer_epoch: i16_at(PRODUCER_EPOCH_OFFSET),
        base_sequence: i32_at(BASE_SEQUENCE_OFFSET),
        records_count: i32_at(RECORDS_COUNT_OFFSET),
    }
}

/// Write `h` into the first 61 bytes of `out` (`out.len() >= 61`).
fn encode_header(h: &BatchHeader, out: &mut [u8]) {
    let mut put = |at: usize, bytes: &[u8]| {
        if let Some(slot) = out.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
    };
    put(BASE_OFFSET_OFFSET, &h.base_offset.to_be_bytes());
    put(LENGTH_OFFSET, &h.batch_length.to_be_bytes());
    put(
        PARTITION_LEADER_EPOCH_OFFSET,
        &h.partition_leader_epoch.to_be_bytes(),
    );
    put(MAGIC_OFFSET, &h.magic.to_be_bytes());
    put(CRC_OFFSET, &h.crc.to_be_bytes());
    put(ATTRIBUTES_OFFSET, &h.attributes.to_be_bytes());
    put(LAST_OFFSET_DELTA_OFFSET, &h.last_offset_delta.to_be_bytes());
    put(BASE_TIMESTAMP_OFFSET, &h.base_timestamp.to_be_bytes());
    put(MAX_TIMESTAMP_OFFSET, &h.max_timestamp.to_be_bytes());
    put(PRODUCER_ID_OFFSET, &h.producer_id.to_be_bytes());
    put(PRODUCER_EPOCH_OFFSET, &h.producer_epoch.to_be_bytes());
    put(BASE_SEQUENCE_OFFSET, &h.base_sequence.to_be_bytes());
    put(RECORDS_COUNT_OFFSET, &h.records_count.to_be_bytes());
}

fn offset_delta(offset: i64, base_offset: i64) -> Option<i32> {
    i32::try_from(offset as i128 - base_offset as i128).ok()
}

#[inline]
fn bytes_field_size(b: Option<&[u8]>) -> Option<i64> {
    match b {
        None => Some(1),
        Some(b) => {
            let len = i32::try_from(b.len()).ok()?;
            Some(size_of_varint(len) as i64 + len as i64)
        }
    }
}

/// Size of a record's body (everything after its length varint), or `None` if it
/// does not fit in an i32.
fn record_body_size(offset_delta: i32, timestamp_delta: i64, r: &Record) -> Option<i32> {
    let mut size: i64 = 1 // attributes
        + size_of_varlong(timestamp_delta) as i64
        + size_of_varint(offset_delta) as i64
        + bytes_field_size(r.key.as_deref())?
        + bytes_field_size(r.value.as_deref())?;
    let count = i32::try_from(r.headers.len()).ok()?;
    size += size_of_varint(count) as i64;
    for (k, v) in &r.headers {
        size += bytes_field_size(Some(k.as_bytes()))? + bytes_field_size(v.as_deref())?;
    }
    i32::try_from(size).ok()
}

#[inline]
fn write_bytes_field(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => write_varint(out, -1),
        Some(b) => {
            write_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
    }
}

/// Encode the records (sizes already checked by `record_body_size`).
fn write_records(out: &mut Vec<u8>, records: &[Record], base_offset: i64, base_timestamp: i64) {
    for r in records {
        let delta = offset_delta(r.offset, base_offset).unwrap_or(0);
        let ts_delta = r.timestamp.wrapping_sub(base_timestamp);
        let body = record_body_size(delta, ts_delta, r).unwrap_or(0);
        write_varint(out, body);
        out.push(0); // attributes: unused
        write_varlong(out, ts_delta);
        write_varint(out, delta);
        write_bytes_field(out, r.key.as_deref());
        write_bytes_field(out, r.value.as_deref());
        write_varint(out, r.headers.len() as i32);
        for (k, v) in &r.headers {
            write_bytes_field(out, Some(k.as_bytes()));
            write_bytes_field(out, v.as_deref());
        }
    }
}

/// A bounds-checked reader over a record body.
#[derive(Debug, Clone)]
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    #[inline]
    fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    #[inline]
    fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    #[inline]
    fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    #[inline]
    fn varint(&mut self) -> Option<i32> {
        let (v, n) = read_varint(self.rest())?;
        self.pos += n;
        Some(v)
    }

    #[inline]
    fn varlong(&mut self) -> Option<i64> {
        let (v, n) = read_varlong(self.rest())?;
        self.pos += n;
        Some(v)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }

    /// A varint length (-1 = null) and that many bytes. `None` on a bad length or
    /// truncation; `Some(None)` for null.
    #[inline]
    fn length_prefixed(&mut self) -> Option<Option<&'a [u8]>> {
        match self.varint()? {
            -1 => Some(None),
            n if n < 0 => None,
            n => self.take(n as usize).map(Some),
        }
    }
}

/// Walk `data` (the records section, decompressed) as `header` describes it.
fn scan_records<'a, F>(
    header: &BatchHeader,
    data: &'a [u8],
    f: &mut F,
) -> std::result::Result<(), String>
where
    F: FnMut(RecordRef<'a>),
{
    if header.records_count < 0 {
        return Err(format!("invalid record count {}", header.records_count));
    }
    let log_append_time = header.attributes & TIMESTAMP_TYPE_MASK != 0;
    // The smallest record is 7 bytes; never reserve more than the data could hold.
    let count_hint = (header.records_count as usize).min(data.len() / 7 + 1);
    let mut outer = Cursor::new(data);
    // Kafka sets no lower bound on the first delta; only the order is checked.
    let mut previous_delta: i64 = i64::MIN;
    for i in 0..header.records_count {
        let length = outer.varint().ok_or_else(|| {
            format!(
                "record {i}: invalid or truncated record length ({} bytes remain)",
                outer.remaining()
            )
        })?;
        if length < 0 {
            return Err(format!("record {i}: invalid record length {length}"));
        }
        let body = outer.take(length as usize).ok_or_else(|| {
            format!(
                "record {i}: record length {length} runs past the end of the records ({} bytes remain)",
                outer.remaining()
            )
        })?;
        let mut c = Cursor::new(body);
        let bad = |what: &str| format!("record {i}: invalid or truncated {what}");
        c.byte().ok_or_else(|| bad("attributes"))?;
        let timestamp_delta = c.varlong().ok_or_else(|| bad("timestamp delta"))?;
        let offset_delta = c.varint().ok_or_else(|| bad("offset delta"))?;
        if (offset_delta as i64) <= previous_delta {
            return Err(format!(
                "record {i}: offset delta {offset_delta} does not follow {previous_delta} (deltas must strictly increase)"
            ));
        }
        if offset_delta > header.last_offset_delta {
            return Err(format!(
                "record {i}: offset delta {offset_delta} exceeds lastOffsetDelta {}",
                header.last_offset_delta
            ));
        }
        previous_delta = offset_delta as i64;
        let key = c.length_prefixed().ok_or_else(|| bad("key"))?;
        let value = c.length_prefixed().ok_or_else(|| bad("value"))?;
        let header_count = c.varint().ok_or_else(|| bad("header count"))?;
        if header_count < 0 || header_count as usize > c.remaining() {
            return Err(format!("record {i}: invalid header count {header_count}"));
        }
        let headers_start = c.pos;
        for h in 0..header_count {
            match c.length_prefixed() {
                Some(Some(k)) => {
                    if std::str::from_utf8(k).is_err() {
                        return Err(format!("record {i}: header {h} key is not valid UTF-8"));
                    }
                }
                Some(None) => return Err(format!("record {i}: header {h} has a null key")),
                None => return Err(format!("record {i}: invalid or truncated header {h} key")),
            }
            c.length_prefixed()
                .ok_or_else(|| format!("record {i}: invalid or truncated header {h} value"))?;
        }
        if c.pos != body.len() {
            return Err(format!(
                "record {i}: record length {length} but its fields take {} bytes",
                c.pos
            ));
        }
        let timestamp = if log_append_time {
            header.max_timestamp
        } else {
            header.base_timestamp.wrapping_add(timestamp_delta)
        };
        f(RecordRef {
            offset_delta,
            offset: header.base_offset.wrapping_add(offset_delta as i64),
            timestamp,
            key,
            value,
            header_count: header_count as usize,
            headers_raw: body.get(headers_start..).unwrap_or(&[]),
            records_count_hint: count_hint,
        });
    }
    if outer.remaining() != 0 {
        return Err(format!(
            "{} bytes left after the last of {} records",
            outer.remaining(),
            header.records_count
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::write_varint;

    fn rec(offset: i64, timestamp: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Record {
        Record {
            offset,
            timestamp,
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            headers: Vec::new(),
        }
    }

    fn opts() -> BuildOptions {
        BuildOptions::default()
    }

    fn sample_records() -> Vec<Record> {
        let mut rs = vec![
            rec(100, 1_000, Some(b"key-0"), Some(b"value-0")),
            rec(101, 990, None, Some(b"")),
            rec(103, 1_500, Some(b""), None),
            rec(110, -1, None, None),
        ];
        rs[0].headers = vec![
            ("h1".to_string(), Some(b"v1".to_vec())),
            ("ключ".to_string(), None),
            (String::new(), Some(Vec::new())),
        ];
        rs[2].headers = vec![("x".to_string(), Some(vec![0u8; 300]))];
        rs.push(rec(
            200,
            2_000,
            Some(&[7u8; 1000]),
            Some(&vec![b'z'; 70_000]),
        ));
        rs
    }

    /// Rewrite the records section of `batch`, fixing length, count and CRC.
    fn with_section(batch: &[u8], section: &[u8], count: i32) -> Vec<u8> {
        let mut out = batch[..RECORDS_OFFSET].to_vec();
        out.extend_from_slice(section);
        let len = (out.len() - LOG_OVERHEAD) as i32;
        out[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&len.to_be_bytes());
        out[RECORDS_COUNT_OFFSET..RECORDS_COUNT_OFFSET + 4].copy_from_slice(&count.to_be_bytes());
        fix_crc(&mut out);
        out
    }

    fn fix_crc(b: &mut [u8]) {
        let crc = crc32c(&b[ATTRIBUTES_OFFSET..]);
        b[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    }

    fn corrupt_reason(r: Result<BatchHeader>) -> String {
        match r {
            Err(Error::Corrupt { reason, .. }) => reason,
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn hand_checked_layout() {
        let b = build(&[rec(0, 1000, Some(b"k"), Some(b"v"))], &opts()).unwrap();
        let mut expected: Vec<u8> = Vec::new();
        expected.extend_from_slice(&0i64.to_be_bytes()); // base offset
        expected.extend_from_slice(&58i32.to_be_bytes()); // batch length = 70 - 12
        expected.extend_from_slice(&(-1i32).to_be_bytes()); // partition leader epoch
        expected.push(2); // magic
        expected.extend_from_slice(&[0, 0, 0, 0]); // crc, patched below
        expected.extend_from_slice(&[0, 0]); // attributes
        expected.extend_from_slice(&0i32.to_be_bytes()); // last offset delta
        expected.extend_from_slice(&1000i64.to_be_bytes()); // base timestamp
        expected.extend_from_slice(&1000i64.to_be_bytes()); // max timestamp
        expected.extend_from_slice(&(-1i64).to_be_bytes()); // producer id
        expected.extend_from_slice(&(-1i16).to_be_bytes()); // producer epoch
        expected.extend_from_slice(&(-1i32).to_be_bytes()); // base sequence
        expected.extend_from_slice(&1i32.to_be_bytes()); // records count
                                                         // length 8, attributes, ts delta 0, offset delta 0, key len 1, 'k', value len 1, 'v', 0 headers
        expected.extend_from_slice(&[0x10, 0x00, 0x00, 0x00, 0x02, b'k', 0x02, b'v', 0x00]);
        // CRC-32C by a bitwise reference, independent of the crate.
        let mut crc = !0u32;
        for &byte in &expected[21..] {
            crc ^= byte as u32;
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0x82F6_3B78
                } else {
                    crc >> 1
                };
            }
        }
        expected[17..21].copy_from_slice(&(!crc).to_be_bytes());
        assert_eq!(b, expected);
        let h = validate(&b, 0, "buffer").unwrap();
        assert_eq!(h.size_in_bytes(), 70);
        assert_eq!(h.crc, !crc);
    }

    #[test]
    fn round_trip_every_codec_and_flag() {
        let rs = sample_records();
        for codec in [
            Codec::None,
            Codec::Gzip,
            Codec::Snappy,
            Codec::Lz4,
            Codec::Zstd,
        ] {
            for timestamp_type in [0, 1] {
                for (transactional, control) in
                    [(false, false), (true, false), (true, true), (false, true)]
                {
                    for delete_horizon_ms in [-1i64, 0, 5_000] {
                        let o = BuildOptions {
                            codec,
                            timestamp_type,
                            transactional,
                            control,
                            delete_horizon_ms,
                            partition_leader_epoch: 7,
                            producer_id: 12345,
                            producer_epoch: 3,
                            base_sequence: 42,
                            ..opts()
                        };
                        let b = build(&rs, &o).unwrap();
                        let shallow = validate_shallow(&b, 0, "buffer").unwrap();
                        let (h, out) = records(&b, 0, "buffer").unwrap();
                        assert_eq!(h, shallow);
                        assert_eq!(h, parse_header(&b, 0, "buffer").unwrap());
                        assert_eq!(h.size_in_bytes(), b.len());
                        assert_eq!(h.base_offset, 100);
                        assert_eq!(h.last_offset_delta, 100);
                        assert_eq!(h.last_offset(), 200);
                        assert_eq!(h.records_count, 5);
                        assert_eq!(h.partition_leader_epoch, 7);
                        assert_eq!(
                            (h.producer_id, h.producer_epoch, h.base_sequence),
                            (12345, 3, 42)
                        );
                        assert_eq!(h.max_timestamp, 2_000);
                        let expect_base = if delete_horizon_ms >= 0 {
                            delete_horizon_ms
                        } else {
                            1_000
                        };
                        assert_eq!(h.base_timestamp, expect_base);
                        let attrs = codec as i16
                            | (timestamp_type as i16) << 3
                            | (transactional as i16) << 4
                            | (control as i16) << 5
                            | ((delete_horizon_ms >= 0) as i16) << 6;
                        assert_eq!(h.attributes, attrs);
                        assert_eq!(out.len(), rs.len());
                        for (got, want) in out.iter().zip(&rs) {
                            assert_eq!(got.offset, want.offset);
                            let ts = if timestamp_type == 1 {
                                2_000
                            } else {
                                want.timestamp
                            };
                            assert_eq!(got.timestamp, ts);
                            assert_eq!(got.key, want.key);
                            assert_eq!(got.value, want.value);
                            assert_eq!(got.headers, want.headers);
                        }
                        if codec != Codec::None {
                            // The records section is the codec's encoding of the plain records.
                            let plain = build(
                                &rs,
                                &BuildOptions {
                                    codec: Codec::None,
                                    ..o.clone()
                                },
                            )
                            .unwrap();
                            let inflated =
                                compression::decompress(codec, &b[RECORDS_OFFSET..]).unwrap();
                            assert_eq!(inflated, &plain[RECORDS_OFFSET..]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn build_defaults_and_explicit_offsets() {
        let rs = [rec(10, 5, None, Some(b"a")), rec(12, 3, None, Some(b"b"))];
        let b = build(
            &rs,
            &BuildOptions {
                base_offset: Some(8),
                last_offset_delta: Some(9),
                ..opts()
            },
        )
        .unwrap();
        let (h, out) = records(&b, 0, "buffer").unwrap();
        assert_eq!(
            (
                h.base_offset,
                h.last_offset_delta,
                h.base_timestamp,
                h.max_timestamp
            ),
            (8, 9, 5, 5)
        );
        assert_eq!(
            out.iter()
                .map(|r| (r.offset, r.timestamp))
                .collect::<Vec<_>>(),
            [(10, 5), (12, 3)]
        );
        // Negative timestamp deltas round-trip.
        let rs = [rec(0, i64::MAX - 1, None, None), rec(1, 0, None, None)];
        let (_, out) = records(&build(&rs, &opts()).unwrap(), 0, "buffer").unwrap();
        assert_eq!(out[0].timestamp, i64::MAX - 1);
        assert_eq!(out[1].timestamp, 0);
    }

    #[test]
    fn build_argument_errors() {
        let is_invalid = |r: Result<Vec<u8>>| matches!(r, Err(Error::InvalidArgument(_)));
        assert!(is_invalid(build(&[], &opts())));
        let rs = [rec(5, 0, None, None), rec(5, 0, None, None)];
        assert!(is_invalid(build(&rs, &opts())));
        let rs = [rec(5, 0, None, None), rec(4, 0, None, None)];
        assert!(is_invalid(build(&rs, &opts())));
        let rs = [rec(5, 0, None, None)];
        assert!(is_invalid(build(
            &rs,
            &BuildOptions {
                base_offset: Some(6),
                ..opts()
            }
        )));
        let rs = [
            rec(0, 0, None, None),
            rec(i32::MAX as i64 + 1, 0, None, None),
        ];
        assert!(is_invalid(build(&rs, &opts())));
        let rs = [rec(0, 0, None, None), rec(i32::MAX as i64, 0, None, None)];
        assert!(build(&rs, &opts()).is_ok());
        let rs = [rec(0, 0, None, None), rec(3, 0, None, None)];
        assert!(is_invalid(build(
            &rs,
            &BuildOptions {
                last_offset_delta: Some(2),
                ..opts()
            }
        )));
        assert!(build(
            &rs,
            &BuildOptions {
                last_offset_delta: Some(3),
                ..opts()
            }
        )
        .is_ok());
        assert!(is_invalid(build(
            &rs,
            &BuildOptions {
                timestamp_type: 2,
                ..opts()
            }
        )));
        assert!(is_invalid(build(
            &rs,
            &BuildOptions {
                timestamp_type: -1,
                ..opts()
            }
        )));
        // Extreme base offsets do not overflow.
        let rs = [rec(i64::MIN, 0, None, None), rec(i64::MAX, 0, None, None)];
        assert!(is_invalid(build(&rs, &opts())));
    }

    #[test]
    fn flipping_any_byte_is_detected() {
        let b = build(&sample_records()[..3], &opts()).unwrap();
        for i in 0..b.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut c = b.clone();
                c[i] ^= mask;
                let r = validate(&c, 0, "file.log");
                if i < LENGTH_OFFSET || (PARTITION_LEADER_EPOCH_OFFSET..MAGIC_OFFSET).contains(&i) {
                    // Base offset and leader epoch are outside the CRC.
                    assert!(r.is_ok(), "byte {i}");
                } else {
                    match r {
                        Err(Error::Corrupt {
                            context, position, ..
                        }) => {
                            assert_eq!(context, "file.log");
                            assert_eq!(position, 0);
                        }
                        other => panic!("byte {i} mask {mask:#x}: {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn truncation_at_every_length_fails() {
        for codec in [Codec::None, Codec::Gzip] {
            let b = build(&sample_records()[..3], &BuildOptions { codec, ..opts() }).unwrap();
            for cut in 0..b.len() {
                assert!(
                    matches!(validate(&b[..cut], 0, "buffer"), Err(Error::Corrupt { .. })),
                    "{cut}"
                );
                assert!(records(&b[..cut], 0, "buffer").is_err());
                assert!(validate_shallow(&b[..cut], 0, "buffer").is_err());
                let mut copy = b[..cut].to_vec();
                restamp(&mut copy, 0, 1, 1, 1); // must not panic
                assert_eq!(copy, &b[..cut]);
            }
        }
    }

    #[test]
    fn positions_and_errors_name_the_batch() {
        let one = build(&[rec(0, 1, None, Some(b"x"))], &opts()).unwrap();
        let mut buf = one.clone();
        buf.extend_from_slice(&one);
        assert_eq!(validate(&buf, one.len(), "buffer").unwrap().base_offset, 0);
        buf[one.len() + 40] ^= 1;
        match validate(&buf, one.len(), "/tmp/x.log") {
            Err(e @ Error::Corrupt { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("/tmp/x.log"), "{msg}");
                assert!(msg.contains(&format!("position {}", one.len())), "{msg}");
                assert!(msg.contains("crc"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        // Positions past the end, huge positions.
        assert!(parse_header(&buf, buf.len(), "buffer").is_err());
        assert!(parse_header(&buf, usize::MAX, "buffer").is_err());
        assert!(validate(&buf, usize::MAX - 3, "buffer").is_err());
    }

    #[test]
    fn header_checks() {
        let mut b = build(&[rec(0, 1, None, Some(b"x"))], &opts()).unwrap();
        b[MAGIC_OFFSET] = 1;
        assert!(corrupt_reason(parse_header(&b, 0, "buffer")).contains("magic"));
        assert!(corrupt_reason(validate_shallow(&b, 0, "buffer")).contains("magic"));
        let mut b = build(&[rec(0, 1, None, Some(b"x"))], &opts()).unwrap();
        b[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&48i32.to_be_bytes());
        assert!(corrupt_reason(validate(&b, 0, "buffer")).contains("minimum"));
        b[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(validate(&b, 0, "buffer").is_err());
        b[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(corrupt_reason(validate(&b, 0, "buffer")).contains("past the end"));
        // parse_header does not look at the length or the CRC.
        assert!(parse_header(&b, 0, "buffer").is_ok());
    }

    #[test]
    fn empty_batch_is_valid() {
        let b = build(&[rec(0, 1, None, None)], &opts()).unwrap();
        let e = with_section(&b, &[], 0);
        let (h, out) = records(&e, 0, "buffer").unwrap();
        assert_eq!(h.records_count, 0);
        assert!(out.is_empty());
        // Compressed flag with an empty records section: nothing to decompress.
        let b = build(
            &[rec(0, 1, None, None)],
            &BuildOptions {
                codec: Codec::Gzip,
                ..opts()
            },
        )
        .unwrap();
        let e = with_section(&b, &[], 0);
        assert!(validate(&e, 0, "buffer").is_ok());
    }

    #[test]
    fn record_level_corruption() {
        let b = build(
            &[rec(0, 1, Some(b"k"), Some(b"v")), rec(1, 2, None, None)],
            &opts(),
        )
        .unwrap();
        let section = b[RECORDS_OFFSET..].to_vec();
        let expect = |s: &[u8], count: i32, needle: &str| {
            let c = with_section(&b, s, count);
            let reason = corrupt_reason(validate(&c, 0, "buffer"));
            assert!(reason.contains(needle), "{needle}: {reason}");
        };
        expect(&section, 3, "record 2");
        expect(&section, 1, "left after");
        expect(&section, -1, "record count");
        let mut trailing = section.clone();
        trailing.push(0);
        expect(&trailing, 2, "left after");

        // Hand-made records: length varint, then body.
        let mk = |body: &[u8]| {
            let mut s = Vec::new();
            write_varint(&mut s, body.len() as i32);
            s.extend_from_slice(body);
            s
        };
        // offset delta 2 > lastOffsetDelta 1
        expect(&mk(&[0, 0, 4, 1, 1, 0]), 1, "exceeds lastOffsetDelta");
        // A negative first offset delta is accepted (Kafka checks none).
        let neg = with_section(&b, &mk(&[0, 0, 1, 1, 1, 0]), 1);
        assert_eq!(records(&neg, 0, "buffer").unwrap().1[0].offset, -1);
        // deltas not increasing
        let mut two = mk(&[0, 0, 2, 1, 1, 0]);
        two.extend(mk(&[0, 0, 2, 1, 1, 0]));
        expect(&two, 2, "strictly increase");
        // key length -2
        expect(&mk(&[0, 0, 0, 3, 1, 0]), 1, "key");
        // key longer than the body
        expect(&mk(&[0, 0, 0, 8, 1, 0]), 1, "key");
        // value length -2
        expect(&mk(&[0, 0, 0, 1, 3, 0]), 1, "value");
        // negative header count
        expect(&mk(&[0, 0, 0, 1, 1, 1]), 1, "header count");
        // null header key
        expect(&mk(&[0, 0, 0, 1, 1, 2, 1, 1]), 1, "null key");
        // non-UTF-8 header key
        expect(&mk(&[0, 0, 0, 1, 1, 2, 2, 0xff, 1]), 1, "UTF-8");
        // header value length -2
        expect(&mk(&[0, 0, 0, 1, 1, 2, 0, 3]), 1, "header 0 value");
        // record length larger than its fields
        expect(&mk(&[0, 0, 0, 1, 1, 0, 0]), 1, "fields take");
        // record length runs past the data
        expect(&[0x20, 0, 0, 0, 1, 1, 0], 1, "past the end");
        // negative record length
        expect(&[0x01], 1, "record length");
        // overlong varints: 6-byte offset delta, 11-byte timestamp delta
        expect(
            &mk(&[0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 1, 1, 0]),
            1,
            "offset delta",
        );
        let mut long_ts = vec![0u8];
        long_ts.extend_from_slice(&[0x80; 10]);
        long_ts.extend_from_slice(&[0x00, 0, 1, 1, 0]);
        expect(&mk(&long_ts), 1, "timestamp delta");
        // A valid hand-made record passes: header "" -> null value.
        let ok = with_section(&b, &mk(&[0, 0, 0, 1, 1, 2, 0, 1]), 1);
        let (_, out) = records(&ok, 0, "buffer").unwrap();
        assert_eq!(out[0].headers, vec![(String::new(), None)]);
    }

    #[test]
    fn bad_compressed_section_is_corrupt_at_batch_position() {
        let b = build(
            &[rec(0, 1, None, Some(b"x"))],
            &BuildOptions {
                codec: Codec::Lz4,
                ..opts()
            },
        )
        .unwrap();
        let mut buf = vec![0u8; 5];
        buf.extend(with_section(&b, b"not lz4 at all", 1));
        match validate(&buf, 5, "seg.log") {
            Err(Error::Corrupt {
                context, position, ..
            }) => assert_eq!((context.as_str(), position), ("seg.log", 5)),
            other => panic!("{other:?}"),
        }
        // Unknown codec id 5 in the attributes.
        let mut c = build(&[rec(0, 1, None, Some(b"x"))], &opts()).unwrap();
        c[ATTRIBUTES_OFFSET + 1] |= 5;
        fix_crc(&mut c);
        assert!(corrupt_reason(validate(&c, 0, "buffer")).contains("codec"));
        assert!(validate_shallow(&c, 0, "buffer").is_ok());
    }

    #[test]
    fn restamp_rewrites_header() {
        let rs = sample_records();
        for codec in [Codec::None, Codec::Zstd] {
            let b = build(&rs, &BuildOptions { codec, ..opts() }).unwrap();
            let mut buf = vec![9u8; 3];
            buf.extend_from_slice(&b);

            let mut c = buf.clone();
            restamp(&mut c, 3, 5000, 17, -1);
            let h = validate(&c, 3, "buffer").unwrap();
            assert_eq!((h.base_offset, h.partition_leader_epoch), (5000, 17));
            assert_eq!(h.attributes, codec as i16);
            assert_eq!(h.max_timestamp, 2_000);
            assert_eq!(&c[3 + 16..], &buf[3 + 16..]); // nothing under the CRC changed

            restamp(&mut c, 3, 6000, 18, 123_456);
            let (h, out) = records(&c, 3, "buffer").unwrap();
            assert_eq!((h.base_offset, h.partition_leader_epoch), (6000, 18));
            assert_eq!(h.attributes, codec as i16 | TIMESTAMP_TYPE_MASK);
            assert_eq!(h.max_timestamp, 123_456);
            assert!(out.iter().all(|r| r.timestamp == 123_456));
            assert_eq!(out[0].offset, 6000);
            assert_eq!(out.last().unwrap().offset, 6100);
            // Same as building with LogAppendTime and that max timestamp.
            let mut direct = build(
                &rs,
                &BuildOptions {
                    codec,
                    timestamp_type: 1,
                    base_offset: Some(100),
                    ..opts()
                },
            )
            .unwrap();
            direct[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8]
                .copy_from_slice(&123_456i64.to_be_bytes());
            fix_crc(&mut direct);
            restamp(&mut direct, 0, 6000, 18, -1);
            if codec == Codec::None {
                assert_eq!(&c[3..], &direct[..]);
            }
            assert_eq!(&c[..3], &[9, 9, 9]);
        }
    }

    #[test]
    fn restamp_drops_unknown_attribute_bits() {
        let mut b = build(&[rec(0, 1, None, Some(b"x"))], &opts()).unwrap();
        b[ATTRIBUTES_OFFSET] = 0x81; // bits 8 and 15
        fix_crc(&mut b);
        let mut c = b.clone();
        restamp(&mut c, 0, 0, 0, -1);
        assert_eq!(c[ATTRIBUTES_OFFSET], 0x81); // no LogAppendTime: untouched
        restamp(&mut c, 0, 0, 0, 50);
        assert_eq!(
            validate(&c, 0, "buffer").unwrap().attributes,
            TIMESTAMP_TYPE_MASK
        );
        // Already LogAppendTime with that max timestamp: nothing under the CRC changes.
        let mut d = b.clone();
        d[ATTRIBUTES_OFFSET + 1] |= TIMESTAMP_TYPE_MASK as u8;
        d[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8].copy_from_slice(&50i64.to_be_bytes());
        fix_crc(&mut d);
        let before = d.clone();
        restamp(&mut d, 0, 7, 8, 50);
        assert_eq!(&d[16..], &before[16..]);
    }

    #[test]
    fn for_each_record_borrows() {
        let rs = sample_records();
        let b = build(
            &rs,
            &BuildOptions {
                codec: Codec::Snappy,
                ..opts()
            },
        )
        .unwrap();
        let mut seen = Vec::new();
        for_each_record(&b, 0, "buffer", |r| {
            seen.push((
                r.offset,
                r.offset_delta,
                r.timestamp,
                r.key.map(<[u8]>::len),
                r.headers().count(),
            ));
        })
        .unwrap();
        assert_eq!(seen[0], (100, 0, 1000, Some(5), 3));
        assert_eq!(seen[4], (200, 100, 2000, Some(1000), 0));
    }
}
