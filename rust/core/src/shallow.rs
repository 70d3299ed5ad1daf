//! A magic-agnostic view of one batch in a buffer (v2 batch, or one legacy shallow
//! message), walked the way Kafka's `FileLogInputStream.nextBatch` walks a file.

use crate::batch::{self, Record, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD};
use crate::crc;
use crate::error::{Error, Result};
use crate::legacy;

/// Bytes up to and including the magic byte (offset, size, epoch/crc, magic).
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// Smallest legacy v0 message (`LegacyRecord.RECORD_OVERHEAD_V0`): the smallest size
/// field of any batch.
pub const RECORD_OVERHEAD_V0: usize = 14;
/// Smallest legacy v1 message (`LegacyRecord.RECORD_OVERHEAD_V1`).
pub const RECORD_OVERHEAD_V1: usize = 22;

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

impl ShallowBatch {
    /// Position just after this batch.
    pub fn end(&self) -> usize {
        self.position + self.size
    }
}

fn be_i64(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The next batch at `pos`, like `FileLogInputStream.nextBatch`:
/// * `Ok(None)` when 17 bytes or fewer remain (Kafka: `position >= end - 17`), or the
///   declared size runs past the end (a partial batch at the tail);
/// * `Err(Corrupt)` when the size field is below 14 (`RECORD_OVERHEAD_V0`), or magic is
///   not 0, 1 or 2 (checked after the partial-tail test, as Kafka reads magic last).
///
/// No CRC check: see [`ensure_valid`]. For legacy compressed wrappers base_offset ==
/// last_offset == the wrapper's offset (shallow, as Kafka's shallow view).
///
/// A v2 batch too small to hold its 61-byte header (size 26..72) still comes back, with
/// the header fields it lacks defaulted (last_offset = base_offset, max_timestamp = -1);
/// [`ensure_valid`] rejects it.
pub fn next_batch(buf: &[u8], pos: usize, context: &str) -> Result<Option<ShallowBatch>> {
    let remaining = buf.len().saturating_sub(pos);
    let header = buf.get(pos..(pos + RECORD_BATCH_OVERHEAD).min(buf.len()));
    next_batch_header(header.unwrap_or(&[]), pos, remaining, context)
}

/// [`next_batch`] from the batch's first bytes only: `head` holds the bytes from `pos`
/// (at least the first 61, or all `remaining` when fewer remain), `remaining` how many
/// bytes the walk has from `pos` on (the file's). Every field a [`ShallowBatch`] holds
/// lies in those 61 bytes, so a walk that only needs sizes and offsets (a fetch locating
/// its region) reads headers instead of whole batches; the verdict is `next_batch`'s.
pub fn next_batch_header(
    head: &[u8],
    pos: usize,
    remaining: usize,
    context: &str,
) -> Result<Option<ShallowBatch>> {
    if remaining <= HEADER_SIZE_UP_TO_MAGIC {
        return Ok(None);
    }
    let full = head;
    let Some(head) = full.get(..HEADER_SIZE_UP_TO_MAGIC) else {
        return Ok(None);
    };
    let base_offset = be_i64(head, 0).unwrap_or(0);
    let size_field = be_i32(head, 8).unwrap_or(0);
    if size_field < RECORD_OVERHEAD_V0 as i32 {
        return Err(Error::corrupt(
            context,
            pos as u64,
            format!(
                "found record size {size_field} smaller than minimum record overhead ({RECORD_OVERHEAD_V0})"
            ),
        ));
    }
    let size = size_field as usize + LOG_OVERHEAD;
    if size > remaining {
        return Ok(None);
    }
    // the header fields only (a batch smaller than its header: its own bytes)
    let batch = &full[..size.min(full.len())];
    let magic = head[16] as i8;
    let shallow = match magic {
        2 => {
            let last_offset = be_i32(batch, batch::LAST_OFFSET_DELTA_OFFSET)
                .map_or(base_offset, |d| base_offset.wrapping_add(d as i64));
            ShallowBatch {
                position: pos,
                base_offset,
                last_offset,
                size,
                magic,
                max_timestamp: be_i64(batch, batch::MAX_TIMESTAMP_OFFSET).unwrap_or(-1),
                partition_leader_epoch: be_i32(batch, batch::PARTITION_LEADER_EPOCH_OFFSET)
                    .unwrap_or(-1),
                crc: be_i32(batch, batch::CRC_OFFSET).unwrap_or(0) as u32,
            }
        }
        0 | 1 => ShallowBatch {
            position: pos,
            base_offset,
            last_offset: base_offset,
            size,
            magic,
            max_timestamp: if magic == 1 {
                be_i64(batch, 18).unwrap_or(-1)
            } else {
                -1
            },
            partition_leader_epoch: -1,
            crc: be_i32(batch, 12).unwrap_or(0) as u32,
        },
        _ => {
            return Err(Error::corrupt(
                context,
                pos as u64,
                format!("unknown magic {magic} (expected 0, 1 or 2)"),
            ))
        }
    };
    Ok(Some(shallow))
}

/// Kafka's `ensureValid`: size >= the magic's minimum overhead, CRC matches
/// (v2 CRC-32C, legacy CRC-32), last_offset >= base_offset.
pub fn ensure_valid(buf: &[u8], batch: &ShallowBatch, context: &str) -> Result<()> {
    let pos = batch.position;
    let fail = |reason: String| Error::corrupt(context, pos as u64, reason);
    let (min_size, crc_from) = match batch.magic {
        2 => (RECORD_BATCH_OVERHEAD, batch::ATTRIBUTES_OFFSET),
        1 => (LOG_OVERHEAD + RECORD_OVERHEAD_V1, 16),
        0 => (LOG_OVERHEAD + RECORD_OVERHEAD_V0, 16),
        m => return Err(fail(format!("unknown magic {m} (expected 0, 1 or 2)"))),
    };
    if batch.size < min_size {
        return Err(fail(format!(
            "record batch size {} is smaller than the minimum allowed overhead {min_size}",
            batch.size
        )));
    }
    let bytes = pos
        .checked_add(batch.size)
        .and_then(|end| buf.get(pos..end))
        .ok_or_else(|| {
            fail(format!(
                "batch of {} bytes runs past the end of the data",
                batch.size
            ))
        })?;
    let stored = be_i32(
        bytes,
        if batch.magic == 2 {
            batch::CRC_OFFSET
        } else {
            12
        },
    )
    .unwrap_or(0) as u32;
    let covered = bytes.get(crc_from..).unwrap_or(&[]);
    let computed = if batch.magic == 2 {
        crc::crc32c(covered)
    } else {
        crc::crc32(covered)
    };
    if stored != computed {
        return Err(fail(format!(
            "record is corrupt (stored crc = {stored}, computed crc = {computed})"
        )));
    }
    if batch.last_offset < batch.base_offset {
        return Err(fail(format!(
            "last offset {} is below base offset {}",
            batch.last_offset, batch.base_offset
        )));
    }
    Ok(())
}

/// Deep records of the batch (v2 via `batch::records`, legacy via `legacy::records`).
pub fn records(buf: &[u8], batch: &ShallowBatch, context: &str) -> Result<Vec<Record>> {
    let bytes = batch
        .position
        .checked_add(batch.size)
        .and_then(|end| buf.get(..end))
        .ok_or_else(|| {
            Error::corrupt(
                context,
                batch.position as u64,
                "batch runs past the end of the data",
            )
        })?;
    if batch.magic == 2 {
        batch::records(bytes, batch.position, context).map(|(_, r)| r)
    } else {
        legacy::records(bytes, batch.position, context).map(|(_, r)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::BuildOptions;
    use crate::compression::Codec;

    fn rec(offset: i64, timestamp: i64, value: &[u8]) -> Record {
        Record {
            offset,
            timestamp,
            key: None,
            value: Some(value.to_vec()),
            headers: Vec::new(),
        }
    }

    fn v2(records: &[Record], ple: i32) -> Vec<u8> {
        batch::build(
            records,
            &BuildOptions {
                partition_leader_epoch: ple,
                ..Default::default()
            },
        )
        .unwrap()
    }

    /// v1 message, v0 message, v1 gzip wrapper, v2 batch, back to back.
    fn mixed() -> (Vec<u8>, Vec<usize>) {
        let parts = [
            legacy::build(&[rec(0, 100, b"a")], 1, Codec::None, 0).unwrap(),
            legacy::build(&[rec(1, 200, b"b")], 0, Codec::None, 0).unwrap(),
            legacy::build(&[rec(2, 300, b"c"), rec(3, 250, b"d")], 1, Codec::Gzip, 0).unwrap(),
            v2(&[rec(4, 400, b"e"), rec(6, 500, b"f")], 9),
        ];
        let mut buf = Vec::new();
        let mut starts = Vec::new();
        for p in &parts {
            starts.push(buf.len());
            buf.extend_from_slice(p);
        }
        (buf, starts)
    }

    fn walk(buf: &[u8]) -> Result<Vec<ShallowBatch>> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(b) = next_batch(buf, pos, "buffer")? {
            pos = b.end();
            out.push(b);
        }
        Ok(out)
    }

    #[test]
    fn walks_mixed_magics() {
        let (buf, starts) = mixed();
        let batches = walk(&buf).unwrap();
        assert_eq!(
            batches.iter().map(|b| b.position).collect::<Vec<_>>(),
            starts
        );
        let summary: Vec<_> = batches
            .iter()
            .map(|b| {
                (
                    b.magic,
                    b.base_offset,
                    b.last_offset,
                    b.max_timestamp,
                    b.partition_leader_epoch,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (1, 0, 0, 100, -1),
                (0, 1, 1, -1, -1),
                (1, 3, 3, 300, -1),
                (2, 4, 6, 500, 9)
            ]
        );
        assert_eq!(batches[3].size, buf.len() - starts[3]);
        assert_eq!(
            batches[3].crc,
            batch::parse_header(&buf, starts[3], "b").unwrap().crc
        );
        assert_eq!(
            batches[0].crc,
            legacy::parse_header(&buf, 0, "b").unwrap().crc
        );
        let mut offsets = Vec::new();
        for b in &batches {
            ensure_valid(&buf, b, "buffer").unwrap();
            offsets.extend(records(&buf, b, "buffer").unwrap().iter().map(|r| r.offset));
        }
        assert_eq!(offsets, [0, 1, 2, 3, 4, 6]);
    }

    #[test]
    fn partial_tails_end_the_walk() {
        let (buf, starts) = mixed();
        let ends: Vec<usize> = starts.iter().skip(1).copied().chain([buf.len()]).collect();
        for cut in 0..=buf.len() {
            let batches = walk(&buf[..cut]).unwrap();
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(batches.len(), whole, "cut {cut}");
        }
        // Positions at or past the end.
        assert_eq!(next_batch(&buf, buf.len(), "b").unwrap(), None);
        assert_eq!(next_batch(&buf, usize::MAX, "b").unwrap(), None);
    }

    #[test]
    fn size_and_magic_errors() {
        let (buf, starts) = mixed();
        let mut bad = buf.clone();
        bad[starts[1] + 8..starts[1] + 12].copy_from_slice(&13i32.to_be_bytes());
        let batches = walk(&bad);
        match batches {
            Err(Error::Corrupt { position, .. }) => assert_eq!(position, starts[1] as u64),
            other => panic!("{other:?}"),
        }
        let mut bad = buf.clone();
        bad[starts[3] + 16] = 3;
        assert!(walk(&bad).is_err());
        // Exactly 17 bytes left: Kafka stops before reading the size.
        let mut tail = buf.clone();
        tail.extend_from_slice(&[0u8; 17]);
        assert_eq!(walk(&tail).unwrap().len(), 4);
        // 18 bytes with a size below 14: corrupt.
        tail.push(0);
        assert!(walk(&tail).is_err());
        // A partial batch with a bad magic is still just a partial batch.
        let mut partial = v2(&[rec(0, 1, b"x")], -1);
        partial[16] = 9;
        assert_eq!(
            next_batch(&partial[..partial.len() - 1], 0, "b").unwrap(),
            None
        );
        assert!(next_batch(&partial, 0, "b").is_err());
    }

    #[test]
    fn ensure_valid_checks() {
        let (buf, _) = mixed();
        let batches = walk(&buf).unwrap();
        for b in &batches {
            // (v2 bytes 12..16 are the leader epoch, outside the CRC; legacy 12..16 is the CRC.)
            let first = if b.magic == 2 { 17 } else { 12 };
            for i in [b.position + first, b.position + 20, b.end() - 1] {
                let mut c = buf.clone();
                c[i] ^= 0x10;
                let fresh = next_batch(&c, b.position, "f").unwrap().unwrap();
                assert!(
                    ensure_valid(&c, &fresh, "f").is_err(),
                    "magic {} byte {i}",
                    b.magic
                );
            }
        }
        // A v2 batch whose size (40) is below the 61-byte header.
        let mut small = v2(&[rec(0, 1, b"x")], -1)[..40].to_vec();
        small[8..12].copy_from_slice(&28i32.to_be_bytes());
        let b = next_batch(&small, 0, "f").unwrap().unwrap();
        assert_eq!((b.size, b.last_offset, b.max_timestamp), (40, 0, -1));
        assert!(ensure_valid(&small, &b, "f").is_err());
        // A v1 message of size 20 (below the v1 overhead of 22).
        let mut m = legacy::build(&[rec(0, 1, b"")], 0, Codec::None, 0).unwrap();
        m[16] = 1;
        m.extend_from_slice(&[0; 6]);
        m[8..12].copy_from_slice(&20i32.to_be_bytes());
        let crc = crc::crc32(&m[16..]);
        m[12..16].copy_from_slice(&crc.to_be_bytes());
        let b = next_batch(&m, 0, "f").unwrap().unwrap();
        assert!(ensure_valid(&m, &b, "f").is_err());
        // lastOffsetDelta < 0 with a good CRC.
        let mut neg = v2(&[rec(0, 1, b"x")], -1);
        neg[23..27].copy_from_slice(&(-1i32).to_be_bytes());
        let crc = crc::crc32c(&neg[21..]);
        neg[17..21].copy_from_slice(&crc.to_be_bytes());
        let b = next_batch(&neg, 0, "f").unwrap().unwrap();
        assert!(ensure_valid(&neg, &b, "f").is_err());
    }
}

#[cfg(test)]
mod fuzz {
    //! Deterministic mutation fuzzing: no input may panic any reader.
    use super::*;
    use crate::batch::BuildOptions;
    use crate::compression::Codec;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // xorshift64*
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    fn seeds() -> Vec<Vec<u8>> {
        let rs: Vec<Record> = (0..4)
            .map(|i| Record {
                offset: 10 + i,
                timestamp: 1000 + i,
                key: Some(vec![b'k'; i as usize]),
                value: Some(vec![b'v'; 3 * i as usize]),
                headers: vec![("h".to_string(), Some(b"x".to_vec()))],
            })
            .collect();
        let mut out = Vec::new();
        for codec in [
            Codec::None,
            Codec::Gzip,
            Codec::Snappy,
            Codec::Lz4,
            Codec::Zstd,
        ] {
            let o = BuildOptions {
                base_offset: None,
                last_offset_delta: None,
                codec,
                timestamp_type: 0,
                partition_leader_epoch: 0,
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: -1,
                transactional: false,
                control: false,
                delete_horizon_ms: -1,
            };
            out.push(batch::build(&rs, &o).unwrap());
            if codec != Codec::Zstd {
                for magic in [0, 1] {
                    let plain: Vec<Record> = rs
                        .iter()
                        .map(|r| Record {
                            headers: Vec::new(),
                            ..r.clone()
                        })
                        .collect();
                    out.push(legacy::build(&plain, magic, codec, 0).unwrap());
                }
            }
        }
        out
    }

    fn exercise(buf: &[u8]) {
        let _ = batch::parse_header(buf, 0, "f");
        let _ = batch::validate_shallow(buf, 0, "f");
        let _ = batch::records(buf, 0, "f");
        let _ = legacy::parse_header(buf, 0, "f");
        let _ = legacy::records(buf, 0, "f");
        let mut pos = 0;
        while let Ok(Some(b)) = next_batch(buf, pos, "f") {
            let _ = ensure_valid(buf, &b, "f");
            let _ = records(buf, &b, "f");
            pos = b.end();
        }
        let mut copy = buf.to_vec();
        batch::restamp(&mut copy, 0, 1, 2, 3);
    }

    #[test]
    fn mutated_inputs_never_panic() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for seed in seeds() {
            exercise(&seed);
            for _ in 0..400 {
                let mut m = seed.clone();
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(m.len());
                    m[i] = rng.next() as u8;
                }
                // Keep the CRC right half of the time so the record parsers get exercised.
                if rng.below(2) == 0 && m.len() > 21 {
                    if m[16] == 2 {
                        let c = crc::crc32c(&m[21..]);
                        m[17..21].copy_from_slice(&c.to_be_bytes());
                    } else {
                        let c = crc::crc32(&m[16..]);
                        m[12..16].copy_from_slice(&c.to_be_bytes());
                    }
                }
                let cut = rng.below(m.len() + 1);
                exercise(&m);
                exercise(&m[..cut]);
            }
        }
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut rng = Rng(12345);
        for _ in 0..2000 {
            let len = rng.below(200);
            let mut b: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if len > 17 {
                b[16] = (rng.below(3)) as u8;
                let size = (len as i32 - 12).max(0);
                b[8..12].copy_from_slice(&size.to_be_bytes());
            }
            exercise(&b);
        }
    }
}
