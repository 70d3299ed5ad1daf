//! Columnar decoding: the records of a run of stored batches, as Arrow buffers.
//!
//! The input is what a Fetch response or a segment file holds: batches one after the
//! other, RecordBatch v2 (any codec) or legacy v0/v1 message sets. The output is one
//! set of Arrow-layout buffers per column of Spark's Kafka schema, so the Python side
//! wraps them with `pyarrow.Array.from_buffers` and never touches a record:
//!
//! ```text
//! keys, values     binary      validity (LSB bit order, 1 = valid; None without nulls),
//!                              offsets i32 LE (rows + 1, from 0), data
//! offsets          int64 LE    one per row
//! timestamps       int64 LE    microseconds: ms * 1000 (wrapping as Java's long)
//! timestamp_types  int32 LE    0 CreateTime, 1 LogAppendTime (v0: 0)
//! headers          list<struct<key: utf8, value: binary>>
//!                  list offsets i32 LE (rows + 1), key offsets + key data,
//!                  value validity (None without nulls) + value offsets + value data
//! ```
//!
//! Walk (identical in the pure twin, `kafkacore/pure/columns.py`):
//!
//! 1. Fewer than 12 bytes left, or a declared size (`length + 12`) beyond what is left:
//!    the walk ends silently (a Fetch response may end in a partial batch). A size
//!    field below 14 (`RECORD_OVERHEAD_V0`) or a magic other than 0, 1, 2 is corrupt.
//! 2. A v2 batch whose base offset is >= `end_offset` ends the walk (not validated).
//! 3. Every other batch is validated completely (`batch::validate`, or
//!    `legacy::records` for v0/v1): a failure is `Error::Corrupt` naming its position.
//! 4. Control batches give no rows; a record with offset < `start_offset` is skipped;
//!    the first record with offset >= `end_offset` ends the walk.
//!
//! `next_offset` is `end_offset` when the walk ended because of `end_offset`, else
//! max(`start_offset`, last offset of the last complete batch + 1).
//!
//! Two passes, so every buffer is allocated once at its exact size and written in
//! place (the binding fills Python `bytes` objects directly, no copy): [`measure`]
//! validates and counts, [`fill`] writes. Nothing is allocated per record.

use crate::batch::{self, CONTROL_FLAG_MASK, LOG_OVERHEAD, TIMESTAMP_TYPE_MASK};
use crate::error::{Error, Result};
use crate::legacy::{self, RECORD_OVERHEAD_V0};

/// Byte position of the magic in every format (v2: after the leader epoch; v0/v1: after
/// the CRC).
const MAGIC_OFFSET: usize = 16;
/// Legacy v1 attributes bit 3: LogAppendTime.
const LEGACY_TIMESTAMP_TYPE_MASK: i8 = 0x08;
/// Arrow's `binary`/`utf8` use i32 offsets: no column may hold more data than this.
pub const MAX_COLUMN_BYTES: usize = i32::MAX as usize;
/// Microseconds per millisecond (Spark's timestamps are microseconds).
const MICROS_PER_MILLI: i64 = 1000;

/// Where the walk hands the rows: the measuring pass counts, the filling pass writes.
trait Sink {
    fn row(
        &mut self,
        offset: i64,
        timestamp_ms: i64,
        timestamp_type: i32,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    );
    /// One header of the row just given (only when headers are asked for).
    fn header(&mut self, key: &[u8], value: Option<&[u8]>);
    /// The row's headers are complete.
    fn end_row(&mut self);
}

/// Walk the batches of `data` (see the module docs) and hand each row to `sink`;
/// returns `next_offset`.
fn walk<S: Sink>(
    data: &[u8],
    start_offset: i64,
    end_offset: i64,
    include_headers: bool,
    context: &str,
    sink: &mut S,
) -> Result<i64> {
    let mut reached_end = false;
    // Whether the record at `offset` is a row (false once the end is reached).
    let admit = |offset: i64, reached_end: &mut bool| -> bool {
        if *reached_end {
            return false;
        }
        if offset >= end_offset {
            *reached_end = true;
            return false;
        }
        offset >= start_offset
    };
    let mut last_offset: Option<i64> = None;
    let mut pos = 0usize;
    while let Some(size) = complete_batch_size(data, pos, context)? {
        let magic = data[pos + MAGIC_OFFSET] as i8;
        match magic {
            2 => {
                let base_offset = be_i64(data, pos).unwrap_or(0);
                if base_offset >= end_offset {
                    reached_end = true;
                    break;
                }
                // The size field is >= 14, so the attributes (bytes 21-22) are inside
                // the batch; `for_each_record` validates everything before any use.
                let attributes = be_i16(data, pos + batch::ATTRIBUTES_OFFSET).unwrap_or(0);
                let control = attributes & CONTROL_FLAG_MASK != 0;
                let timestamp_type = i32::from(attributes & TIMESTAMP_TYPE_MASK != 0);
                let header = batch::for_each_record(data, pos, context, |r| {
                    if control || !admit(r.offset, &mut reached_end) {
                        return;
                    }
                    sink.row(r.offset, r.timestamp, timestamp_type, r.key, r.value);
                    if include_headers {
                        for (k, v) in r.headers() {
                            sink.header(k.as_bytes(), v);
                        }
                    }
                    sink.end_row();
                })?;
                last_offset = Some(header.last_offset());
            }
            0 | 1 => {
                let (header, records) = legacy::records(data, pos, context)?;
                let timestamp_type =
                    i32::from(magic == 1 && header.attributes & LEGACY_TIMESTAMP_TYPE_MASK != 0);
                for r in &records {
                    if admit(r.offset, &mut reached_end) {
                        // Legacy messages carry no headers: an empty list.
                        let (key, value) = (r.key.as_deref(), r.value.as_deref());
                        sink.row(r.offset, r.timestamp, timestamp_type, key, value);
                        sink.end_row();
                    }
                }
                last_offset = records.last().map(|r| r.offset).or(last_offset);
            }
            _ => {
                return Err(Error::corrupt(
                    context,
                    pos as u64,
                    format!("unknown magic {magic} (expected 0, 1 or 2)"),
                ))
            }
        }
        if reached_end {
            break;
        }
        pos += size;
    }
    Ok(if reached_end {
        end_offset
    } else {
        last_offset.map_or(start_offset, |last| {
            last.saturating_add(1).max(start_offset)
        })
    })
}

/// Byte sizes of one binary column's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BinarySizes {
    /// `None` when no slot is null (no bitmap).
    pub validity: Option<usize>,
    pub offsets: usize,
    pub data: usize,
}

/// Byte sizes of the headers column's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeadersSizes {
    pub list_offsets: usize,
    /// Keys are never null: `keys.validity` is `None`.
    pub keys: BinarySizes,
    pub values: BinarySizes,
}

/// What the measuring pass found: the row count, `next_offset` and the exact size of
/// every buffer, so the filling pass writes into buffers allocated once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub count: usize,
    pub next_offset: i64,
    pub keys: BinarySizes,
    pub values: BinarySizes,
    /// `count * 8`.
    pub offsets: usize,
    /// `count * 8`.
    pub timestamps: usize,
    /// `count * 4`.
    pub timestamp_types: usize,
    pub headers: Option<HeadersSizes>,
}

#[derive(Debug, Default)]
struct BinaryCounter {
    slots: usize,
    nulls: usize,
    bytes: usize,
}

impl BinaryCounter {
    #[inline]
    fn push(&mut self, value: Option<&[u8]>) {
        self.slots += 1;
        match value {
            Some(v) => self.bytes += v.len(),
            None => self.nulls += 1,
        }
    }

    fn sizes(&self, column: &str) -> Result<BinarySizes> {
        if self.bytes > MAX_COLUMN_BYTES || self.slots > MAX_COLUMN_BYTES {
            return Err(Error::InvalidArgument(format!(
                "the {column} column would hold {} bytes in {} slots, more than Arrow's \
                 2 GiB binary limit: decode a smaller offset range",
                self.bytes, self.slots
            )));
        }
        Ok(BinarySizes {
            validity: (self.nulls > 0).then(|| self.slots.div_ceil(8)),
            offsets: (self.slots + 1) * 4,
            data: self.bytes,
        })
    }
}

#[derive(Debug, Default)]
struct Counter {
    rows: usize,
    keys: BinaryCounter,
    values: BinaryCounter,
    header_keys: BinaryCounter,
    header_values: BinaryCounter,
}

impl Sink for Counter {
    #[inline]
    fn row(&mut self, _: i64, _: i64, _: i32, key: Option<&[u8]>, value: Option<&[u8]>) {
        self.rows += 1;
        self.keys.push(key);
        self.values.push(value);
    }

    #[inline]
    fn header(&mut self, key: &[u8], value: Option<&[u8]>) {
        self.header_keys.push(Some(key));
        self.header_values.push(value);
    }

    #[inline]
    fn end_row(&mut self) {}
}

/// The measuring pass: validate and walk `data` (see [`decode_columns`]), counting.
pub fn measure(
    data: &[u8],
    start_offset: i64,
    end_offset: i64,
    include_headers: bool,
    context: &str,
) -> Result<Layout> {
    let mut counter = Counter::default();
    let next_offset = walk(
        data,
        start_offset,
        end_offset,
        include_headers,
        context,
        &mut counter,
    )?;
    let count = counter.rows;
    let headers = if include_headers {
        Some(HeadersSizes {
            list_offsets: (count + 1) * 4,
            keys: counter.header_keys.sizes("header key")?,
            values: counter.header_values.sizes("header value")?,
        })
    } else {
        None
    };
    Ok(Layout {
        count,
        next_offset,
        keys: counter.keys.sizes("key")?,
        values: counter.values.sizes("value")?,
        offsets: count * 8,
        timestamps: count * 8,
        timestamp_types: count * 4,
        headers,
    })
}

/// Buffers of one binary column, sized as [`BinarySizes`] says.
#[derive(Debug)]
pub struct BinaryBuffers<'a> {
    pub validity: Option<&'a mut [u8]>,
    pub offsets: &'a mut [u8],
    pub data: &'a mut [u8],
}

/// Buffers of the headers column, sized as [`HeadersSizes`] says.
#[derive(Debug)]
pub struct HeadersBuffers<'a> {
    pub list_offsets: &'a mut [u8],
    pub keys: BinaryBuffers<'a>,
    pub values: BinaryBuffers<'a>,
}

/// Every buffer of the output, sized as the [`Layout`] says (contents are overwritten).
#[derive(Debug)]
pub struct ColumnBuffers<'a> {
    pub keys: BinaryBuffers<'a>,
    pub values: BinaryBuffers<'a>,
    pub offsets: &'a mut [u8],
    pub timestamps: &'a mut [u8],
    pub timestamp_types: &'a mut [u8],
    pub headers: Option<HeadersBuffers<'a>>,
}

/// Writes into a byte slice; remembers (instead of panicking) a write past its end.
struct SliceWriter<'a> {
    buf: &'a mut [u8],
    pos: usize,
    overflow: bool,
}

impl<'a> SliceWriter<'a> {
    fn new(buf: &'a mut [u8]) -> Self {
        SliceWriter {
            buf,
            pos: 0,
            overflow: false,
        }
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        match self.buf.get_mut(self.pos..self.pos + bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.pos += bytes.len();
            }
            None => self.overflow = true,
        }
    }

    /// Every byte written, none past the end.
    fn complete(&self) -> bool {
        !self.overflow && self.pos == self.buf.len()
    }
}

struct BinaryWriter<'a> {
    validity: Option<&'a mut [u8]>,
    slots: usize,
    offsets: SliceWriter<'a>,
    data: SliceWriter<'a>,
}

impl<'a> BinaryWriter<'a> {
    fn new(b: BinaryBuffers<'a>) -> Self {
        let mut validity = b.validity;
        if let Some(bits) = validity.as_deref_mut() {
            bits.fill(0);
        }
        let mut offsets = SliceWriter::new(b.offsets);
        offsets.put(&0i32.to_le_bytes());
        BinaryWriter {
            validity,
            slots: 0,
            offsets,
            data: SliceWriter::new(b.data),
        }
    }

    #[inline]
    fn push(&mut self, value: Option<&[u8]>) {
        if let Some(v) = value {
            self.data.put(v);
            if let Some(byte) = self
                .validity
                .as_deref_mut()
                .and_then(|bits| bits.get_mut(self.slots / 8))
            {
                *byte |= 1 << (self.slots % 8);
            }
        }
        self.slots += 1;
        // The measuring pass checked that the data fits in an i32.
        self.offsets.put(&(self.data.pos as i32).to_le_bytes());
    }

    fn complete(&self) -> bool {
        self.offsets.complete() && self.data.complete()
    }
}

struct Writer<'a> {
    keys: BinaryWriter<'a>,
    values: BinaryWriter<'a>,
    offsets: SliceWriter<'a>,
    timestamps: SliceWriter<'a>,
    timestamp_types: SliceWriter<'a>,
    headers: Option<(SliceWriter<'a>, BinaryWriter<'a>, BinaryWriter<'a>)>,
}

impl Sink for Writer<'_> {
    #[inline]
    fn row(
        &mut self,
        offset: i64,
        timestamp_ms: i64,
        timestamp_type: i32,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) {
        self.keys.push(key);
        self.values.push(value);
        self.offsets.put(&offset.to_le_bytes());
        let micros = timestamp_ms.wrapping_mul(MICROS_PER_MILLI);
        self.timestamps.put(&micros.to_le_bytes());
        self.timestamp_types.put(&timestamp_type.to_le_bytes());
    }

    #[inline]
    fn header(&mut self, key: &[u8], value: Option<&[u8]>) {
        if let Some((_, keys, values)) = self.headers.as_mut() {
            keys.push(Some(key));
            values.push(value);
        }
    }

    #[inline]
    fn end_row(&mut self) {
        if let Some((list_offsets, keys, _)) = self.headers.as_mut() {
            list_offsets.put(&(keys.slots as i32).to_le_bytes());
        }
    }
}

/// The filling pass: walk `data` again and write the rows into `out`, whose buffers
/// have the sizes [`measure`] returned for the same arguments. `Error::InvalidArgument`
/// if they do not (nothing is written past a buffer's end).
pub fn fill(
    data: &[u8],
    start_offset: i64,
    end_offset: i64,
    context: &str,
    out: ColumnBuffers<'_>,
) -> Result<()> {
    let include_headers = out.headers.is_some();
    let mut writer = Writer {
        keys: BinaryWriter::new(out.keys),
        values: BinaryWriter::new(out.values),
        offsets: SliceWriter::new(out.offsets),
        timestamps: SliceWriter::new(out.timestamps),
        timestamp_types: SliceWriter::new(out.timestamp_types),
        headers: out.headers.map(|h| {
            let mut list_offsets = SliceWriter::new(h.list_offsets);
            list_offsets.put(&0i32.to_le_bytes());
            (
                list_offsets,
                BinaryWriter::new(h.keys),
                BinaryWriter::new(h.values),
            )
        }),
    };
    walk(
        data,
        start_offset,
        end_offset,
        include_headers,
        context,
        &mut writer,
    )?;
    let complete = writer.keys.complete()
        && writer.values.complete()
        && writer.offsets.complete()
        && writer.timestamps.complete()
        && writer.timestamp_types.complete()
        && writer
            .headers
            .as_ref()
            .is_none_or(|(l, k, v)| l.complete() && k.complete() && v.complete());
    if !complete {
        return Err(Error::InvalidArgument(
            "column buffers do not have the sizes the measuring pass gave".to_string(),
        ));
    }
    Ok(())
}

/// A binary column in Arrow's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryColumn {
    /// `None` when no slot is null.
    pub validity: Option<Vec<u8>>,
    /// i32 LE, rows + 1 entries, from 0.
    pub offsets: Vec<u8>,
    pub data: Vec<u8>,
}

impl BinaryColumn {
    fn zeroed(sizes: &BinarySizes) -> Self {
        BinaryColumn {
            validity: sizes.validity.map(|n| vec![0; n]),
            offsets: vec![0; sizes.offsets],
            data: vec![0; sizes.data],
        }
    }

    fn buffers(&mut self) -> BinaryBuffers<'_> {
        BinaryBuffers {
            validity: self.validity.as_deref_mut(),
            offsets: &mut self.offsets,
            data: &mut self.data,
        }
    }
}

/// The `headers` column: `list<struct<key: utf8, value: binary>>` in Arrow's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadersColumn {
    /// i32 LE, rows + 1 entries: row i has headers `list_offsets[i]..list_offsets[i+1]`.
    pub list_offsets: Vec<u8>,
    /// Keys are UTF-8 (validated by the batch decoder), never null: no validity.
    pub keys: BinaryColumn,
    pub values: BinaryColumn,
}

/// Everything [`decode_columns`] returns, in owned buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    pub count: usize,
    pub next_offset: i64,
    pub keys: BinaryColumn,
    pub values: BinaryColumn,
    /// int64 LE per row.
    pub offsets: Vec<u8>,
    /// int64 LE microseconds per row.
    pub timestamps: Vec<u8>,
    /// int32 LE per row.
    pub timestamp_types: Vec<u8>,
    pub headers: Option<HeadersColumn>,
}

/// Decode the records of the batches in `data` with `start_offset <= offset <
/// end_offset` into Arrow buffers (see the module docs for the walk): [`measure`], then
/// [`fill`] into buffers allocated once. `context` names the buffer in errors.
/// `Error::Corrupt` for a complete batch that fails validation,
/// `Error::UnsupportedCompression` for zstd in a legacy message, `Error::InvalidArgument`
/// when a binary column would exceed 2 GiB.
pub fn decode_columns(
    data: &[u8],
    start_offset: i64,
    end_offset: i64,
    include_headers: bool,
    context: &str,
) -> Result<Columns> {
    let layout = measure(data, start_offset, end_offset, include_headers, context)?;
    let mut columns = Columns {
        count: layout.count,
        next_offset: layout.next_offset,
        keys: BinaryColumn::zeroed(&layout.keys),
        values: BinaryColumn::zeroed(&layout.values),
        offsets: vec![0; layout.offsets],
        timestamps: vec![0; layout.timestamps],
        timestamp_types: vec![0; layout.timestamp_types],
        headers: layout.headers.map(|h| HeadersColumn {
            list_offsets: vec![0; h.list_offsets],
            keys: BinaryColumn::zeroed(&h.keys),
            values: BinaryColumn::zeroed(&h.values),
        }),
    };
    let buffers = ColumnBuffers {
        keys: columns.keys.buffers(),
        values: columns.values.buffers(),
        offsets: &mut columns.offsets,
        timestamps: &mut columns.timestamps,
        timestamp_types: &mut columns.timestamp_types,
        headers: columns.headers.as_mut().map(|h| HeadersBuffers {
            list_offsets: &mut h.list_offsets,
            keys: h.keys.buffers(),
            values: h.values.buffers(),
        }),
    };
    fill(data, start_offset, end_offset, context, buffers)?;
    Ok(columns)
}

/// Size of the batch at `pos` if it is complete: `Ok(None)` when fewer than 12 bytes
/// are left or the declared size runs past the end (a partial tail), `Err` when the size
/// field is below 14. Kafka's `ByteBufferLogInputStream` makes the same three cases.
fn complete_batch_size(data: &[u8], pos: usize, context: &str) -> Result<Option<usize>> {
    let remaining = data.len().saturating_sub(pos);
    if remaining < LOG_OVERHEAD {
        return Ok(None);
    }
    let size_field = be_i32(data, pos + 8).unwrap_or(0);
    if size_field < RECORD_OVERHEAD_V0 as i32 {
        return Err(Error::corrupt(
            context,
            pos as u64,
            format!(
                "record size {size_field} is smaller than the minimum record overhead \
                 ({RECORD_OVERHEAD_V0})"
            ),
        ));
    }
    let size = size_field as usize + LOG_OVERHEAD;
    Ok((size <= remaining).then_some(size))
}

fn be_i64(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_be_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

fn be_i16(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{build, BuildOptions, Record};
    use crate::compression::Codec;

    fn rec(
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&str, Option<&[u8]>)],
    ) -> Record {
        Record {
            offset,
            timestamp,
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.map(<[u8]>::to_vec)))
                .collect(),
        }
    }

    fn opts() -> BuildOptions {
        BuildOptions::default()
    }

    fn i32s(b: &[u8]) -> Vec<i32> {
        b.chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn i64s(b: &[u8]) -> Vec<i64> {
        b.chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// Three batches: offsets 0-2 (gzip), a control batch at 3, 5 and 7 (a gap),
    /// LogAppendTime.
    fn sample() -> Vec<u8> {
        let mut data = build(
            &[
                rec(0, 10, Some(b"k0"), Some(b"v0"), &[("h", Some(b"x"))]),
                rec(1, 11, None, Some(b"v1"), &[]),
                rec(2, 12, Some(b""), None, &[("a", None), ("b", Some(b""))]),
            ],
            &BuildOptions {
                codec: Codec::Gzip,
                ..opts()
            },
        )
        .unwrap();
        data.extend(
            build(
                &[rec(3, 13, Some(&[0, 0, 0, 0]), Some(&[0, 0, 0, 1]), &[])],
                &BuildOptions {
                    control: true,
                    ..opts()
                },
            )
            .unwrap(),
        );
        let mut lat = build(
            &[
                rec(5, 15, Some(b"k5"), Some(b"v5"), &[]),
                rec(7, 17, Some(b"k7"), Some(b"v7"), &[]),
            ],
            &BuildOptions {
                timestamp_type: 1,
                base_offset: Some(4),
                last_offset_delta: Some(4),
                ..opts()
            },
        )
        .unwrap();
        // maxTimestamp = 99 (what a LogAppendTime broker stamps), CRC fixed.
        lat[batch::MAX_TIMESTAMP_OFFSET..batch::MAX_TIMESTAMP_OFFSET + 8]
            .copy_from_slice(&99i64.to_be_bytes());
        let crc = crate::crc::crc32c(&lat[batch::ATTRIBUTES_OFFSET..]);
        lat[batch::CRC_OFFSET..batch::CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        data.extend(lat);
        data
    }

    #[test]
    fn decodes_every_column() {
        let c = decode_columns(&sample(), 0, i64::MAX, true, "buffer").unwrap();
        assert_eq!(c.count, 5);
        assert_eq!(c.next_offset, 9);
        assert_eq!(i64s(&c.offsets), [0, 1, 2, 5, 7]);
        assert_eq!(
            i64s(&c.timestamps),
            [10_000, 11_000, 12_000, 99_000, 99_000]
        );
        assert_eq!(i32s(&c.timestamp_types), [0, 0, 0, 1, 1]);
        assert_eq!(c.keys.validity, Some(vec![0b1_1101]));
        assert_eq!(i32s(&c.keys.offsets), [0, 2, 2, 2, 4, 6]);
        assert_eq!(c.keys.data, b"k0k5k7");
        assert_eq!(c.values.validity, Some(vec![0b1_1011]));
        assert_eq!(c.values.data, b"v0v1v5v7");
        let h = c.headers.unwrap();
        assert_eq!(i32s(&h.list_offsets), [0, 1, 1, 3, 3, 3]);
        assert_eq!(h.keys.data, b"hab");
        assert_eq!(h.keys.validity, None);
        assert_eq!(i32s(&h.keys.offsets), [0, 1, 2, 3]);
        assert_eq!(h.values.validity, Some(vec![0b101]));
        assert_eq!(i32s(&h.values.offsets), [0, 1, 1, 1]);
        assert_eq!(h.values.data, b"x");
    }

    #[test]
    fn no_nulls_no_bitmap_and_no_headers() {
        let data = build(&[rec(0, 1, Some(b"k"), Some(b"v"), &[])], &opts()).unwrap();
        let c = decode_columns(&data, 0, 100, false, "buffer").unwrap();
        assert_eq!(c.keys.validity, None);
        assert_eq!(c.values.validity, None);
        assert!(c.headers.is_none());
        assert_eq!(c.next_offset, 1);
    }

    #[test]
    fn offset_window_and_next_offset() {
        let data = sample();
        // Stop inside the first batch.
        let c = decode_columns(&data, 1, 2, false, "buffer").unwrap();
        assert_eq!((c.count, c.next_offset), (1, 2));
        assert_eq!(i64s(&c.offsets), [1]);
        // The window ends in the compaction gap of the last batch: no record reaches
        // end_offset, so next_offset is that batch's end.
        let c = decode_columns(&data, 0, 7, false, "buffer").unwrap();
        assert_eq!((c.count, c.next_offset), (4, 7));
        let c = decode_columns(&data, 6, 7, false, "buffer").unwrap();
        assert_eq!((c.count, c.next_offset), (0, 7));
        // A batch starting at end_offset stops the walk.
        let c = decode_columns(&data, 0, 3, false, "buffer").unwrap();
        assert_eq!((c.count, c.next_offset), (3, 3));
        // Only the control batch: no row, next_offset moves past it.
        let c = decode_columns(&data, 3, 4, false, "buffer").unwrap();
        assert_eq!((c.count, c.next_offset), (0, 4));
        // start beyond the data.
        let c = decode_columns(&data, 50, 60, false, "buffer").unwrap();
        assert_eq!((c.count, c.next_offset), (0, 50));
        // Empty input.
        let c = decode_columns(&[], 5, 60, true, "buffer").unwrap();
        assert_eq!((c.count, c.next_offset), (0, 5));
        assert_eq!(i32s(&c.keys.offsets), [0]);
        assert_eq!(i32s(&c.headers.unwrap().list_offsets), [0]);
    }

    #[test]
    fn partial_tail_is_ignored_and_corruption_is_reported() {
        let data = sample();
        let first = batch::validate(&data, 0, "buffer").unwrap().size_in_bytes();
        for cut in first..data.len() {
            let c = decode_columns(&data[..cut], 0, i64::MAX, false, "buffer").unwrap();
            assert!(c.count >= 3, "{cut}");
        }
        let mut bad = data.clone();
        bad[first + 30] ^= 1;
        match decode_columns(&bad, 0, i64::MAX, false, "buffer") {
            Err(e @ Error::Corrupt { .. }) => {
                assert!(e.to_string().contains(&format!("position {first}")), "{e}")
            }
            other => panic!("{other:?}"),
        }
        let mut small = data[..first].to_vec();
        small.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 13]);
        assert!(matches!(
            decode_columns(&small, 0, i64::MAX, false, "buffer"),
            Err(Error::Corrupt { position, .. }) if position == first as u64
        ));
        let mut magic = data[..first].to_vec();
        magic.extend_from_slice(&data[..first]);
        magic[first + MAGIC_OFFSET] = 3;
        assert!(matches!(
            decode_columns(&magic, 0, i64::MAX, false, "buffer"),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn fill_refuses_buffers_of_other_sizes() {
        let data = sample();
        let layout = measure(&data, 0, i64::MAX, false, "buffer").unwrap();
        assert_eq!(layout.count, 5);
        assert_eq!(layout.values.data, 8);
        let mut c = decode_columns(&data, 0, i64::MAX, false, "buffer").unwrap();
        c.values.data.pop(); // one byte short: no panic, an error
        let out = ColumnBuffers {
            keys: c.keys.buffers(),
            values: c.values.buffers(),
            offsets: &mut c.offsets,
            timestamps: &mut c.timestamps,
            timestamp_types: &mut c.timestamp_types,
            headers: None,
        };
        assert!(matches!(
            fill(&data, 0, i64::MAX, "buffer", out),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn legacy_messages() {
        let rs = [
            rec(10, 1_000, Some(b"a"), Some(b"1"), &[]),
            rec(11, 2_000, None, None, &[]),
        ];
        let mut data = legacy::build(&rs, 0, Codec::None, 0).unwrap();
        data.extend(
            legacy::build(
                &[
                    rec(12, 3_000, Some(b"c"), Some(b"3"), &[]),
                    rec(13, 4_000, Some(b"d"), Some(b"4"), &[]),
                ],
                1,
                Codec::Snappy,
                1,
            )
            .unwrap(),
        );
        let c = decode_columns(&data, 11, 100, true, "buffer").unwrap();
        assert_eq!(c.count, 3);
        assert_eq!(c.next_offset, 14);
        assert_eq!(i64s(&c.offsets), [11, 12, 13]);
        assert_eq!(i64s(&c.timestamps), [-1000, 4_000_000, 4_000_000]);
        assert_eq!(i32s(&c.timestamp_types), [0, 1, 1]);
        assert_eq!(i32s(&c.headers.unwrap().list_offsets), [0, 0, 0, 0]);
        let c = decode_columns(&data, 0, 13, false, "buffer").unwrap();
        assert_eq!((c.count, c.next_offset), (3, 13));
    }
}
