//! The compaction cleaner's hot path (Kafka's `LogCleaner` + `SkimpyOffsetMap` +
//! `MemoryRecords.filterTo`): a key -> latest offset map built over the dirty section of a
//! log, and the per-batch filter that rewrites a segment keeping the latest record of each
//! key. The contract (every rule, for both backends) is the `KeyMap` / `filter_batches`
//! section of `python/kafkacore/_native.pyi`; the pure-Python twin is
//! `kafkacore/pure/cleaner.py`. Choosing logs, grouping segments and swapping files is the
//! Python layer's (`kafkacore/log/cleaner.py`).
//!
//! **Keys** are stored as their MD5 digest (16 bytes, Kafka's default
//! `log.cleaner.hash.algorithm`), as `SkimpyOffsetMap` stores them: two distinct keys with
//! the same digest are one key to the cleaner (the older record of the two may be removed;
//! the chance is about n^2 / 2^129 for n keys). The map holds at most `capacity` digests
//! (the caller derives it from `log.cleaner.dedupe.buffer.size` and the load factor).
//!
//! **Walking a buffer** (both functions): batches are taken in order from position 0 with
//! [`shallow::next_batch`]: the walk stops, without error, at a tail of 17 bytes or fewer or
//! at a batch whose declared size runs past the end (the caller reads more and calls again);
//! a size below 14 or an unknown magic is `Corrupt`. Legacy (magic 0/1) batches are refused
//! with `InvalidRecord` (not compacted here). Every v2 batch is validated completely
//! (CRC-32C, every record) before it is used.
//!
//! **Filter rules** for one v2 batch (`now`, `delete_retention_ms`, the map `m`):
//!
//! 1. A record is *retained* when: the batch is a control batch; or its offset is above
//!    `m.latest_offset` (not covered by the map); or it has a key, its offset is >= `m[key]`
//!    (-1 when absent) and it has a value or the batch's delete horizon has not passed
//!    (no horizon bit, or `now < baseTimestamp`). A keyless record covered by the map is
//!    removed and counted as invalid.
//! 2. Some record retained: the batch is copied byte for byte when every record is retained
//!    and no retained tombstone (null value) needs a new delete horizon; otherwise it is
//!    rebuilt with `batch::build` from the retained records, keeping base offset,
//!    lastOffsetDelta, partition leader epoch, codec, timestamp type, producer id/epoch,
//!    base sequence and the transactional/control bits. Its delete horizon is
//!    `now + delete_retention_ms` (saturating) when it retains a tombstone and had no
//!    horizon, else the horizon it had (or none).
//! 3. No record retained: an *empty header* is written (Kafka's `writeEmptyHeader`: 61
//!    bytes, recordsCount 0, codec none, no delete horizon, baseTimestamp -1, maxTimestamp,
//!    offsets, epoch, producer fields and timestamp-type/transactional/control bits kept)
//!    when the batch's last offset + 1 is `round_end_offset` (the last batch of a cleaning
//!    round keeps the log's end offset) or it is the last batch of an active producer
//!    (`producer_last_offsets[producer_id] == last offset`); otherwise the batch is dropped.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::batch::{
    self, BatchHeader, BuildOptions, Record, ATTRIBUTES_OFFSET, COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK, CRC_OFFSET, DELETE_HORIZON_FLAG_MASK, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK,
};
use crate::compression::Codec;
use crate::crc::crc32c;
use crate::error::{Error, Result};
use crate::shallow;

/// Kafka's `RecordBatch.NO_TIMESTAMP`.
const NO_TIMESTAMP: i64 = -1;

// ---------------------------------------------------------------------------------------
// MD5 (RFC 1321): the digest Kafka's SkimpyOffsetMap stores for each key (RustCrypto's
// `md-5` crate).

/// The MD5 digest of `data`.
pub fn md5(data: &[u8]) -> [u8; 16] {
    use md5::Digest;
    md5::Md5::digest(data).into()
}

// ---------------------------------------------------------------------------------------
// The key map.

/// Hashes a digest (already uniformly distributed) by folding it to 64 bits.
#[derive(Debug, Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only reached for non-u128 keys; FNV-1a keeps it correct.
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = (v as u64) ^ ((v >> 64) as u64);
    }
}

type DigestMap = HashMap<u128, i64, BuildHasherDefault<DigestHasher>>;

fn digest_key(key: &[u8]) -> u128 {
    u128::from_le_bytes(md5(key))
}

/// Kafka's `SkimpyOffsetMap`: the MD5 digest of each key -> the latest offset seen for it,
/// at most `capacity` digests, plus `latest_offset`, the last offset the map covers.
/// Not thread-safe (`&mut self` to change it).
#[derive(Debug, Clone)]
pub struct KeyMap {
    map: DigestMap,
    capacity: usize,
    latest_offset: i64,
}

/// What `add_batches` did: bytes of whole batches consumed, and whether it stopped because
/// the map is full (then `consumed` is the position of the batch it could not finish).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddResult {
    pub consumed: usize,
    pub full: bool,
}

impl KeyMap {
    /// An empty map for at most `capacity` keys (>= 1).
    pub fn new(capacity: i64) -> Result<KeyMap> {
        let capacity = usize::try_from(capacity)
            .ok()
            .filter(|&c| c >= 1)
            .ok_or_else(|| {
                Error::InvalidArgument(format!("key map capacity must be >= 1, not {capacity}"))
            })?;
        let mut map = DigestMap::default();
        // Grow as needed: a big dedupe buffer should not cost its memory up front.
        map.reserve(capacity.min(1 << 16));
        Ok(KeyMap {
            map,
            capacity,
            latest_offset: -1,
        })
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    pub fn is_full(&self) -> bool {
        self.map.len() >= self.capacity
    }
    /// The last offset the map covers (-1 when nothing was added).
    pub fn latest_offset(&self) -> i64 {
        self.latest_offset
    }
    /// Set `latest_offset` (Kafka's `updateLatestOffset`: the end of a scanned segment).
    pub fn update_latest_offset(&mut self, offset: i64) {
        self.latest_offset = offset;
    }
    /// Forget every key; `latest_offset` back to -1. The memory is kept for the next round.
    pub fn clear(&mut self) {
        self.map.clear();
        self.latest_offset = -1;
    }

    /// Map `key` to `offset` (and set `latest_offset` to it). `InvalidArgument` if `key` is
    /// new and the map already holds `capacity` keys.
    pub fn put(&mut self, key: &[u8], offset: i64) -> Result<()> {
        let digest = digest_key(key);
        if self.is_full() && !self.map.contains_key(&digest) {
            return Err(Error::InvalidArgument(format!(
                "the key map is full ({} keys)",
                self.capacity
            )));
        }
        self.map.insert(digest, offset);
        self.latest_offset = offset;
        Ok(())
    }

    /// The offset mapped to `key`, -1 if none.
    pub fn get(&self, key: &[u8]) -> i64 {
        self.map.get(&digest_key(key)).copied().unwrap_or(-1)
    }

    /// Kafka's `buildOffsetMapForSegment` over the batches of `buf`: every record with a
    /// key and `start_offset <= offset < end_offset` of a non-control batch is put; before
    /// each put, a map holding `capacity` keys stops the scan (`full`). After each batch
    /// whose last offset is >= `start_offset`, `latest_offset` becomes that last offset.
    /// Batches whose base offset is >= `end_offset` are skipped (consumed, not validated).
    /// See the module docs for the walk. After an error the map's content is unspecified.
    pub fn add_batches(
        &mut self,
        buf: &[u8],
        start_offset: i64,
        end_offset: i64,
        context: &str,
    ) -> Result<AddResult> {
        let mut pos = 0usize;
        while let Some(shallow) = next_v2_batch(buf, pos, context)? {
            let header = batch::parse_header(buf, pos, context)?;
            if header.base_offset >= end_offset {
                pos = shallow.end();
                continue;
            }
            let mut full = false;
            if header.attributes & CONTROL_FLAG_MASK != 0 {
                batch::validate(buf, pos, context)?;
            } else {
                let capacity = self.capacity;
                let map = &mut self.map;
                let latest = &mut self.latest_offset;
                batch::for_each_record(buf, pos, context, |r| {
                    if full {
                        return;
                    }
                    if let Some(key) = r.key {
                        if r.offset >= start_offset && r.offset < end_offset {
                            if map.len() >= capacity {
                                full = true;
                                return;
                            }
                            map.insert(digest_key(key), r.offset);
                            *latest = r.offset;
                        }
                    }
                })?;
            }
            if full {
                return Ok(AddResult {
                    consumed: pos,
                    full: true,
                });
            }
            if header.last_offset() >= start_offset {
                self.latest_offset = header.last_offset();
            }
            pos = shallow.end();
        }
        Ok(AddResult {
            consumed: pos,
            full: false,
        })
    }
}

/// The next whole batch at `pos` (see the module docs), refusing legacy batches.
fn next_v2_batch(buf: &[u8], pos: usize, context: &str) -> Result<Option<shallow::ShallowBatch>> {
    let Some(batch) = shallow::next_batch(buf, pos, context)? else {
        return Ok(None);
    };
    if batch.magic != 2 {
        return Err(Error::InvalidRecord(format!(
            "{context}: position {pos}: the cleaner does not compact legacy (magic {}) messages",
            batch.magic
        )));
    }
    Ok(Some(batch))
}

// ---------------------------------------------------------------------------------------
// The filter.

/// The per-call settings of [`filter_batches`] (see the module docs).
#[derive(Debug, Clone)]
pub struct FilterOptions {
    pub now_ms: i64,
    pub delete_retention_ms: i64,
    /// The end offset of the cleaning round (-1: none).
    pub round_end_offset: i64,
    /// Active producers: producer id -> offset of its last data record.
    pub producer_last_offsets: HashMap<i64, i64>,
}

/// What [`filter_batches`] produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterOutcome {
    /// The retained batches, concatenated.
    pub data: Vec<u8>,
    /// Bytes of whole batches read from the input.
    pub bytes_read: usize,
    pub records_read: u64,
    pub records_retained: u64,
    /// Keyless records removed.
    pub records_invalid: u64,
}

/// Filter the batches of `buf` with `map` (see the module docs for every rule).
/// `InvalidArgument` if `now_ms` or `delete_retention_ms` is negative.
pub fn filter_batches(
    buf: &[u8],
    map: &KeyMap,
    opts: &FilterOptions,
    context: &str,
) -> Result<FilterOutcome> {
    if opts.now_ms < 0 || opts.delete_retention_ms < 0 {
        return Err(Error::InvalidArgument(format!(
            "now_ms ({}) and delete_retention_ms ({}) must be >= 0",
            opts.now_ms, opts.delete_retention_ms
        )));
    }
    let mut out = FilterOutcome {
        data: Vec::with_capacity(buf.len()),
        ..FilterOutcome::default()
    };
    let mut keep: Vec<bool> = Vec::new();
    let mut pos = 0usize;
    while let Some(shallow) = next_v2_batch(buf, pos, context)? {
        let end = shallow.end();
        let header = batch::parse_header(buf, pos, context)?;
        let attributes = header.attributes;
        let control = attributes & CONTROL_FLAG_MASK != 0;
        let has_horizon = attributes & DELETE_HORIZON_FLAG_MASK != 0;
        let retain_deletes = !has_horizon || opts.now_ms < header.base_timestamp;

        // Pass 1: decide, without allocating per record.
        keep.clear();
        let mut tombstones = false;
        let mut invalid = 0u64;
        batch::for_each_record(buf, pos, context, |r| {
            let retained = if control || r.offset > map.latest_offset {
                true
            } else if let Some(key) = r.key {
                r.offset >= map.get(key) && (r.value.is_some() || retain_deletes)
            } else {
                invalid += 1;
                false
            };
            tombstones |= retained && r.value.is_none();
            keep.push(retained);
        })?;
        let read = keep.len();
        let kept = keep.iter().filter(|&&k| k).count();
        out.records_read += read as u64;
        out.records_retained += kept as u64;
        out.records_invalid += invalid;

        if kept > 0 {
            let needs_horizon = tombstones && !has_horizon;
            if kept == read && !needs_horizon {
                out.data.extend_from_slice(&buf[pos..end]);
            } else {
                let horizon = if needs_horizon {
                    opts.now_ms.saturating_add(opts.delete_retention_ms)
                } else if has_horizon {
                    header.base_timestamp
                } else {
                    NO_TIMESTAMP
                };
                let rebuilt = rebuild(buf, pos, context, &header, &keep, kept, horizon)?;
                out.data.extend_from_slice(&rebuilt);
            }
        } else if retain_empty(&header, opts) {
            out.data.extend_from_slice(&empty_header(&header));
        }
        pos = end;
    }
    out.bytes_read = pos;
    Ok(out)
}

fn retain_empty(header: &BatchHeader, opts: &FilterOptions) -> bool {
    let last = header.last_offset();
    (opts.round_end_offset >= 0 && last.checked_add(1) == Some(opts.round_end_offset))
        || (header.producer_id >= 0
            && opts.producer_last_offsets.get(&header.producer_id) == Some(&last))
}

/// Pass 2: the batch at `pos` rebuilt from the records flagged in `keep`.
fn rebuild(
    buf: &[u8],
    pos: usize,
    context: &str,
    header: &BatchHeader,
    keep: &[bool],
    kept: usize,
    delete_horizon_ms: i64,
) -> Result<Vec<u8>> {
    let mut records: Vec<Record> = Vec::with_capacity(kept);
    let mut index = 0usize;
    batch::for_each_record(buf, pos, context, |r| {
        if keep.get(index).copied().unwrap_or(false) {
            records.push(r.to_record());
        }
        index += 1;
    })?;
    let attributes = header.attributes;
    let codec = Codec::from_id((attributes & COMPRESSION_CODEC_MASK) as i32)?;
    batch::build(
        &records,
        &BuildOptions {
            base_offset: Some(header.base_offset),
            last_offset_delta: Some(header.last_offset_delta),
            codec,
            timestamp_type: i32::from(attributes & TIMESTAMP_TYPE_MASK != 0),
            partition_leader_epoch: header.partition_leader_epoch,
            producer_id: header.producer_id,
            producer_epoch: header.producer_epoch,
            base_sequence: header.base_sequence,
            transactional: attributes & TRANSACTIONAL_FLAG_MASK != 0,
            control: attributes & CONTROL_FLAG_MASK != 0,
            delete_horizon_ms,
        },
    )
}

/// Kafka's `DefaultRecordBatch.writeEmptyHeader` for `header`'s batch.
pub fn empty_header(header: &BatchHeader) -> [u8; RECORD_BATCH_OVERHEAD] {
    let attributes =
        header.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK);
    let mut out = [0u8; RECORD_BATCH_OVERHEAD];
    let mut at = 0usize;
    let mut put = |bytes: &[u8]| {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(&header.base_offset.to_be_bytes());
    put(&((RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i32).to_be_bytes());
    put(&header.partition_leader_epoch.to_be_bytes());
    put(&[2u8]);
    put(&0u32.to_be_bytes()); // crc, below
    put(&attributes.to_be_bytes());
    put(&header.last_offset_delta.to_be_bytes());
    put(&NO_TIMESTAMP.to_be_bytes());
    put(&header.max_timestamp.to_be_bytes());
    put(&header.producer_id.to_be_bytes());
    put(&header.producer_epoch.to_be_bytes());
    put(&header.base_sequence.to_be_bytes());
    put(&0i32.to_be_bytes());
    let crc = crc32c(&out[ATTRIBUTES_OFFSET..]);
    out[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: [u8; 16]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn rec(offset: i64, ts: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Record {
        Record {
            offset,
            timestamp: ts,
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            headers: Vec::new(),
        }
    }

    fn opts() -> BuildOptions {
        BuildOptions {
            partition_leader_epoch: 3,
            ..Default::default()
        }
    }

    fn filter_opts(now_ms: i64) -> FilterOptions {
        FilterOptions {
            now_ms,
            delete_retention_ms: 1000,
            round_end_offset: -1,
            producer_last_offsets: HashMap::new(),
        }
    }

    type Decoded = (i64, Option<Vec<u8>>, Option<Vec<u8>>);

    fn decoded(buf: &[u8]) -> Vec<Decoded> {
        let mut pos = 0;
        let mut out = Vec::new();
        while pos < buf.len() {
            let (h, rs) = batch::records(buf, pos, "buffer").unwrap();
            out.extend(rs.into_iter().map(|r| (r.offset, r.key, r.value)));
            pos += h.size_in_bytes();
        }
        out
    }

    #[test]
    fn md5_vectors() {
        assert_eq!(hex(md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(md5(b"The quick brown fox jumps over the lazy dog")),
            "9e107d9d372bb6826bd81d3542a419d6"
        );
        assert_eq!(
            hex(md5(
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"
            )),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
        // 55, 56, 63, 64 bytes: the padding edges.
        assert_eq!(hex(md5(&[b'a'; 55])), "ef1772b6dff9a122358552954ad0df65");
        assert_eq!(hex(md5(&[b'a'; 56])), "3b0c8ac703f828b04c6c197006d17218");
        assert_eq!(hex(md5(&[b'a'; 64])), "014842d480b571495a4a0363793f7367");
    }

    #[test]
    fn key_map_put_get_capacity() {
        let mut m = KeyMap::new(2).unwrap();
        assert_eq!(m.get(b"a"), -1);
        m.put(b"a", 5).unwrap();
        m.put(b"b", 6).unwrap();
        m.put(b"a", 7).unwrap(); // an existing key fits in a full map
        assert!(m.put(b"c", 8).is_err());
        assert_eq!(
            (m.get(b"a"), m.get(b"b"), m.len(), m.latest_offset()),
            (7, 6, 2, 7)
        );
        m.clear();
        assert_eq!((m.len(), m.latest_offset(), m.get(b"a")), (0, -1, -1));
        assert!(KeyMap::new(0).is_err());
    }

    #[test]
    fn add_batches_stops_when_full_and_at_partial_tail() {
        let a = batch::build(
            &[
                rec(0, 1, Some(b"k1"), Some(b"v")),
                rec(1, 1, Some(b"k2"), Some(b"v")),
            ],
            &opts(),
        )
        .unwrap();
        let b = batch::build(
            &[
                rec(2, 1, Some(b"k3"), Some(b"v")),
                rec(3, 1, None, Some(b"v")),
            ],
            &opts(),
        )
        .unwrap();
        let mut buf = a.clone();
        buf.extend_from_slice(&b);
        let mut m = KeyMap::new(10).unwrap();
        let r = m
            .add_batches(&buf[..buf.len() - 1], 0, 100, "buffer")
            .unwrap();
        assert_eq!(
            r,
            AddResult {
                consumed: a.len(),
                full: false
            }
        );
        assert_eq!(m.latest_offset(), 1);
        let mut m = KeyMap::new(2).unwrap();
        let r = m.add_batches(&buf, 0, 100, "buffer").unwrap();
        assert_eq!(
            r,
            AddResult {
                consumed: a.len(),
                full: true
            }
        );
        assert_eq!(m.latest_offset(), 1);
        // start offset: records below it are not put, but the batch still counts.
        let mut m = KeyMap::new(10).unwrap();
        m.add_batches(&buf, 1, 100, "buffer").unwrap();
        assert_eq!(
            (m.get(b"k1"), m.get(b"k2"), m.get(b"k3"), m.latest_offset()),
            (-1, 1, 2, 3)
        );
        // Legacy input is refused.
        let legacy =
            crate::legacy::build(&[rec(0, 1, Some(b"k"), Some(b"v"))], 1, Codec::None, 0).unwrap();
        assert!(matches!(
            m.add_batches(&legacy, 0, 10, "buffer"),
            Err(Error::InvalidRecord(_))
        ));
    }

    #[test]
    fn filter_keeps_latest_and_copies_untouched_batches() {
        let a = batch::build(
            &[
                rec(0, 10, Some(b"k1"), Some(b"old")),
                rec(1, 11, Some(b"k2"), Some(b"v2")),
            ],
            &opts(),
        )
        .unwrap();
        let b = batch::build(&[rec(2, 12, Some(b"k1"), Some(b"new"))], &opts()).unwrap();
        let mut buf = a.clone();
        buf.extend_from_slice(&b);
        let mut m = KeyMap::new(10).unwrap();
        m.add_batches(&buf, 0, 3, "buffer").unwrap();
        let out = filter_batches(&buf, &m, &filter_opts(0), "buffer").unwrap();
        assert_eq!(
            decoded(&out.data),
            vec![
                (1, Some(b"k2".to_vec()), Some(b"v2".to_vec())),
                (2, Some(b"k1".to_vec()), Some(b"new".to_vec()))
            ]
        );
        assert_eq!(&out.data[out.data.len() - b.len()..], &b[..]); // copied as is
        let h = batch::validate(&out.data, 0, "buffer").unwrap();
        assert_eq!(
            (h.base_offset, h.last_offset_delta, h.partition_leader_epoch),
            (0, 1, 3)
        );
        assert_eq!(
            (out.records_read, out.records_retained, out.bytes_read),
            (3, 2, buf.len())
        );
    }

    #[test]
    fn tombstones_get_a_horizon_then_go() {
        let a = batch::build(
            &[
                rec(0, 10, Some(b"k1"), Some(b"v")),
                rec(1, 11, Some(b"k1"), None),
            ],
            &opts(),
        )
        .unwrap();
        let mut m = KeyMap::new(10).unwrap();
        m.add_batches(&a, 0, 2, "buffer").unwrap();
        let first = filter_batches(&a, &m, &filter_opts(5000), "buffer").unwrap();
        let h = batch::validate(&first.data, 0, "buffer").unwrap();
        assert_ne!(h.attributes & DELETE_HORIZON_FLAG_MASK, 0);
        assert_eq!(h.base_timestamp, 6000);
        assert_eq!(decoded(&first.data), vec![(1, Some(b"k1".to_vec()), None)]);
        // Before the horizon: copied unchanged; at the horizon: gone (no empty header).
        let again = filter_batches(&first.data, &m, &filter_opts(5999), "buffer").unwrap();
        assert_eq!(again.data, first.data);
        let gone = filter_batches(&first.data, &m, &filter_opts(6000), "buffer").unwrap();
        assert!(gone.data.is_empty());
        // ... unless it ends the round.
        let mut o = filter_opts(6000);
        o.round_end_offset = 2;
        let kept = filter_batches(&first.data, &m, &o, "buffer").unwrap();
        assert_eq!(kept.data.len(), RECORD_BATCH_OVERHEAD);
        let h = batch::validate(&kept.data, 0, "buffer").unwrap();
        assert_eq!(
            (h.records_count, h.base_offset, h.last_offset_delta),
            (0, 0, 1)
        );
        assert_eq!((h.base_timestamp, h.max_timestamp), (-1, 11));
    }

    #[test]
    fn producer_last_batch_is_kept_empty() {
        let a = batch::build(
            &[rec(0, 10, Some(b"k"), Some(b"v"))],
            &BuildOptions {
                producer_id: 7,
                producer_epoch: 2,
                base_sequence: 40,
                transactional: true,
                ..opts()
            },
        )
        .unwrap();
        let b = batch::build(&[rec(1, 11, Some(b"k"), Some(b"w"))], &opts()).unwrap();
        let mut buf = a.clone();
        buf.extend_from_slice(&b);
        let mut m = KeyMap::new(10).unwrap();
        m.add_batches(&buf, 0, 2, "buffer").unwrap();
        let mut o = filter_opts(0);
        assert_eq!(filter_batches(&buf, &m, &o, "buffer").unwrap().data, b);
        o.producer_last_offsets.insert(7, 0);
        let out = filter_batches(&buf, &m, &o, "buffer").unwrap();
        let h = batch::validate(&out.data, 0, "buffer").unwrap();
        assert_eq!(
            (
                h.records_count,
                h.producer_id,
                h.producer_epoch,
                h.base_sequence
            ),
            (0, 7, 2, 40)
        );
        assert_eq!(h.attributes, TRANSACTIONAL_FLAG_MASK);
        assert_eq!(&out.data[RECORD_BATCH_OVERHEAD..], &b[..]);
    }

    #[test]
    fn keyless_records_are_removed_and_compressed_batches_rebuilt() {
        for codec in [Codec::None, Codec::Gzip, Codec::Zstd] {
            let a = batch::build(
                &[
                    rec(5, 10, None, Some(b"x")),
                    rec(6, 11, Some(b"k"), Some(b"y")),
                    rec(9, 12, Some(b"j"), Some(b"z")),
                ],
                &BuildOptions {
                    codec,
                    base_offset: Some(4),
                    last_offset_delta: Some(6),
                    ..opts()
                },
            )
            .unwrap();
            let mut m = KeyMap::new(10).unwrap();
            m.add_batches(&a, 0, 11, "buffer").unwrap();
            let out = filter_batches(&a, &m, &filter_opts(0), "buffer").unwrap();
            let h = batch::validate(&out.data, 0, "buffer").unwrap();
            assert_eq!(
                (h.base_offset, h.last_offset_delta, h.attributes),
                (4, 6, codec as i16)
            );
            assert_eq!(out.records_invalid, 1);
            assert_eq!(decoded(&out.data).len(), 2);
        }
    }

    #[test]
    fn records_past_the_map_are_kept() {
        let a = batch::build(
            &[
                rec(0, 1, Some(b"k"), Some(b"v")),
                rec(1, 1, None, Some(b"x")),
            ],
            &opts(),
        )
        .unwrap();
        let m = KeyMap::new(1).unwrap(); // latest_offset -1: nothing covered
        let out = filter_batches(&a, &m, &filter_opts(0), "buffer").unwrap();
        assert_eq!(out.data, a);
        assert!(filter_batches(
            &a,
            &m,
            &FilterOptions {
                now_ms: -1,
                ..filter_opts(0)
            },
            "b"
        )
        .is_err());
    }
}
