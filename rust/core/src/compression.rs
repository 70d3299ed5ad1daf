//! Kafka's codecs: the id is attributes bits 0-2.
//!
//! Output follows Kafka's Java producer: gzip members at level 6; snappy with
//! snappy-java's xerial framing (`\x82SNAPPY\0`, i32 version, i32 compatible version,
//! then `[i32 length][raw snappy block]` per 32 KiB of input); the LZ4 frame format
//! with 64 KiB independent blocks and no checksums; one zstd frame at level 3.
//! Decoders accept what any Kafka client writes (raw or framed snappy, concatenated
//! gzip members and frames) and refuse to inflate past [`MAX_DECOMPRESSED_SIZE`].

use std::io::{Read, Write};

use crate::error::{Error, Result};

pub use cap::MAX_DECOMPRESSED_SIZE;
use cap::MAX_DECOMPRESSED_TEXT;

// `fuzzing` is a cfg only cargo-fuzz sets (`--cfg fuzzing`), unknown to Cargo's checks.
#[allow(unexpected_cfgs)]
mod cap {
    /// Decompressed data larger than this is treated as corrupt (a guard against bombs).
    #[cfg(not(fuzzing))]
    pub const MAX_DECOMPRESSED_SIZE: usize = 1 << 30;
    /// Under cargo-fuzz (`--cfg fuzzing`, `rust/fuzz`) the cap is 1 MiB instead: the
    /// same checks with a smaller constant. The fuzzers' inputs are at most 4 KiB, from
    /// which zstd inflates to ~128 MiB and gzip to ~4 MiB at most: the 1 GiB cap was out
    /// of their reach (its checks never ran), while every large output cost milliseconds
    /// to tens of milliseconds of page faults per execution (up to four times per input
    /// in `batch_v2`). At 1 MiB gzip and zstd reach the cap from a fuzzer's input (lz4
    /// nearly: at most 255 bytes per input byte), and an execution stays cheap.
    #[cfg(fuzzing)]
    pub const MAX_DECOMPRESSED_SIZE: usize = 1 << 20;

    /// [`MAX_DECOMPRESSED_SIZE`] as the error messages say it.
    #[cfg(not(fuzzing))]
    pub const MAX_DECOMPRESSED_TEXT: &str = "1 GiB";
    #[cfg(fuzzing)]
    pub const MAX_DECOMPRESSED_TEXT: &str = "1 MiB";
}

/// snappy-java's stream header magic.
pub const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER_LEN: usize = 16;
const XERIAL_VERSION: i32 = 1;
const XERIAL_COMPATIBLE_VERSION: i32 = 1;
/// snappy-java's default block size (what Kafka's `SnappyOutputStream` uses).
const SNAPPY_BLOCK_SIZE: usize = 32 * 1024;
const GZIP_LEVEL: u32 = 6;
const ZSTD_LEVEL: i32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    None = 0,
    Gzip = 1,
    Snappy = 2,
    Lz4 = 3,
    Zstd = 4,
}

impl Codec {
    /// Error::UnsupportedCompression for ids other than 0..=4.
    pub fn from_id(id: i32) -> Result<Codec> {
        match id {
            0 => Ok(Codec::None),
            1 => Ok(Codec::Gzip),
            2 => Ok(Codec::Snappy),
            3 => Ok(Codec::Lz4),
            4 => Ok(Codec::Zstd),
            _ => Err(Error::UnsupportedCompression(format!(
                "unknown compression codec id {id}"
            ))),
        }
    }

    /// The id stored in attributes bits 0-2.
    pub fn id(self) -> i32 {
        self as i32
    }

    /// Kafka's name for the codec.
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Gzip => "gzip",
            Codec::Snappy => "snappy",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }
}

/// Compress as Kafka's Java producer does (gzip level 6; snappy xerial-framed,
/// 32 KiB blocks; lz4 frame, 64 KiB independent blocks, no checksums; zstd level 3).
pub fn compress(codec: Codec, data: &[u8]) -> Result<Vec<u8>> {
    if codec == Codec::None {
        return Ok(data.to_vec());
    }
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    compress_into(codec, data, &mut out)?;
    Ok(out)
}

/// Like [`compress`], appending to `out` (lets a batch builder avoid a copy).
pub fn compress_into(codec: Codec, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let fail = |e: &dyn std::fmt::Display| {
        Error::InvalidArgument(format!("{} compression failed: {e}", codec.name()))
    };
    match codec {
        Codec::None => out.extend_from_slice(data),
        Codec::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::new(GZIP_LEVEL));
            enc.write_all(data).map_err(|e| fail(&e))?;
            enc.finish().map_err(|e| fail(&e))?;
        }
        Codec::Snappy => {
            out.reserve(
                XERIAL_HEADER_LEN + snap::raw::max_compress_len(data.len().min(SNAPPY_BLOCK_SIZE)),
            );
            out.extend_from_slice(&XERIAL_MAGIC);
            out.extend_from_slice(&XERIAL_VERSION.to_be_bytes());
            out.extend_from_slice(&XERIAL_COMPATIBLE_VERSION.to_be_bytes());
            let mut enc = snap::raw::Encoder::new();
            for chunk in data.chunks(SNAPPY_BLOCK_SIZE) {
                let max = snap::raw::max_compress_len(chunk.len());
                let len_at = out.len();
                out.resize(len_at + 4 + max, 0);
                let n = enc
                    .compress(chunk, &mut out[len_at + 4..])
                    .map_err(|e| fail(&e))?;
                out.truncate(len_at + 4 + n);
                out[len_at..len_at + 4].copy_from_slice(&(n as i32).to_be_bytes());
            }
        }
        Codec::Lz4 => {
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent)
                .block_checksums(false)
                .content_checksum(false);
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, out);
            enc.write_all(data).map_err(|e| fail(&e))?;
            enc.finish().map_err(|e| fail(&e))?;
        }
        Codec::Zstd => {
            let compressed = zstd::bulk::compress(data, ZSTD_LEVEL).map_err(|e| fail(&e))?;
            out.extend_from_slice(&compressed);
        }
    }
    Ok(())
}

fn corrupt(codec: Codec, reason: impl std::fmt::Display) -> Error {
    Error::corrupt(
        "buffer",
        0,
        format!("invalid {} compressed data: {reason}", codec.name()),
    )
}

/// Read a decoder to its end, refusing more than [`MAX_DECOMPRESSED_SIZE`] bytes.
fn read_bounded(codec: Codec, reader: impl Read, size_hint: usize) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(size_hint.min(MAX_DECOMPRESSED_SIZE));
    read_capped(codec, reader, &mut out)?;
    Ok(out)
}

/// Read `reader` to its end, appending to `out`, refusing to hold more than
/// [`MAX_DECOMPRESSED_SIZE`] bytes (see [`read_capped_to`]).
fn read_capped(codec: Codec, reader: impl Read, out: &mut Vec<u8>) -> Result<()> {
    read_capped_to(codec, reader, out, MAX_DECOMPRESSED_SIZE)
}

/// Read `reader` to its end, appending to `out`, refusing to hold more than `max` bytes.
/// The buffer doubles as it fills but its capacity never passes `max` + 1 byte: each
/// read is limited to the spare capacity, so `read_to_end` does not grow it (it would
/// double a full 1 GiB buffer to 2 GiB before learning that the data goes on).
fn read_capped_to(
    codec: Codec,
    mut reader: impl Read,
    out: &mut Vec<u8>,
    max: usize,
) -> Result<()> {
    const MIN_GROWTH: usize = 32 * 1024;
    let cap = max + 1;
    loop {
        let spare = out.capacity() - out.len();
        if spare == 0 {
            let grow = out.len().max(MIN_GROWTH).min(cap - out.len());
            out.reserve_exact(grow);
            continue;
        }
        let n = (&mut reader)
            .take(spare as u64)
            .read_to_end(out)
            .map_err(|e| corrupt(codec, e))?;
        if out.len() > max {
            return Err(corrupt(
                codec,
                if max == MAX_DECOMPRESSED_SIZE {
                    format!("decompressed size exceeds {MAX_DECOMPRESSED_TEXT}")
                } else {
                    format!("decompressed size exceeds {max} bytes")
                },
            ));
        }
        if n == 0 {
            return Ok(());
        }
    }
}

/// Decompress; snappy accepts raw and xerial-framed. Bad input is `Error::Corrupt`
/// with context "buffer" and position 0 (callers re-wrap with the batch position).
pub fn decompress(codec: Codec, data: &[u8]) -> Result<Vec<u8>> {
    let hint = data.len().saturating_mul(4).max(256);
    if data.is_empty() && codec != Codec::None {
        // No codec's stream is empty (gzip, lz4 and zstd need a header; snappy a length).
        return Err(corrupt(codec, "empty input"));
    }
    match codec {
        Codec::None => Ok(data.to_vec()),
        Codec::Gzip => decompress_gzip(data, hint),
        Codec::Snappy => {
            if data.starts_with(&XERIAL_MAGIC) {
                decompress_xerial(data)
            } else {
                decompress_snappy_raw(data)
            }
        }
        Codec::Lz4 => decompress_lz4(data, hint),
        Codec::Zstd => {
            let dec =
                zstd::stream::read::Decoder::with_buffer(data).map_err(|e| corrupt(codec, e))?;
            read_bounded(codec, dec, hint)
        }
    }
}

/// Decompress the value of a legacy (magic 0/1) wrapper message. Identical to
/// [`decompress`] except that for magic 0 LZ4 the frame header checksum is not
/// checked: Kafka before 0.10 computed it over the wrong bytes (KAFKA-3160), and
/// Kafka's own reader ignores it for magic 0.
pub fn decompress_legacy(codec: Codec, data: &[u8], magic: i8) -> Result<Vec<u8>> {
    if codec == Codec::Lz4 && magic == 0 {
        if let Some(fixed) = lz4_with_fixed_header_checksum(data) {
            return decompress(codec, &fixed);
        }
    }
    decompress(codec, data)
}

/// A copy of an LZ4 frame whose header checksum byte is recomputed, or `None` when the
/// checksum is already right or the data is not a recognisable LZ4 frame header.
fn lz4_with_fixed_header_checksum(data: &[u8]) -> Option<Vec<u8>> {
    const LZ4_MAGIC: [u8; 4] = [0x04, 0x22, 0x4D, 0x18];
    if !data.starts_with(&LZ4_MAGIC) {
        return None;
    }
    let flg = *data.get(4)?;
    let mut desc_len = 2; // FLG, BD
    if flg & 0x08 != 0 {
        desc_len += 8; // content size
    }
    if flg & 0x01 != 0 {
        desc_len += 4; // dictionary id
    }
    let descriptor = data.get(4..4 + desc_len)?;
    let hc_at = 4 + desc_len;
    let stored = *data.get(hc_at)?;
    let right = (xxh32_short(descriptor, 0) >> 8) as u8;
    if stored == right {
        return None;
    }
    let mut fixed = data.to_vec();
    fixed[hc_at] = right;
    Some(fixed)
}

/// Length of the LZ4 frame (or skippable frame) at the start of `data`, if it is
/// complete: walks only the frame and block headers, up to the end mark.
fn lz4_frame_len(data: &[u8]) -> Option<usize> {
    const LZ4_MAGIC: u32 = 0x184D_2204;
    let u32_at = |p: usize| -> Option<u32> {
        Some(u32::from_le_bytes(
            data.get(p..p.checked_add(4)?)?.try_into().ok()?,
        ))
    };
    let magic = u32_at(0)?;
    let end = if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
        // Skippable frame: magic, u32 size, payload.
        8usize.checked_add(u32_at(4)? as usize)?
    } else if magic == LZ4_MAGIC {
        let flg = *data.get(4)?;
        let descriptor =
            2 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
        let mut p = 4 + descriptor + 1;
        loop {
            let block = u32_at(p)?;
            p += 4;
            if block == 0 {
                if flg & 0x04 != 0 {
                    p += 4; // content checksum
                }
                break p;
            }
            p = p.checked_add((block & 0x7FFF_FFFF) as usize)?;
            if flg & 0x10 != 0 {
                p = p.checked_add(4)?; // block checksum
            }
            if p > data.len() {
                return None;
            }
        }
    } else {
        return None;
    };
    (end <= data.len()).then_some(end)
}

/// The first LZ4 frame of `data`; what follows it is ignored, as Kafka's
/// `Lz4BlockInputStream` (and liblz4) do. lz4_flex alone would take a missing end mark
/// for the end of the frame; Kafka calls that truncated, and so do we.
fn decompress_lz4(data: &[u8], hint: usize) -> Result<Vec<u8>> {
    let codec = Codec::Lz4;
    let frame = lz4_frame_len(data)
        .and_then(|len| data.get(..len))
        .ok_or_else(|| corrupt(codec, "truncated or invalid frame"))?;
    read_bounded(codec, lz4_flex::frame::FrameDecoder::new(frame), hint)
}

/// gzip members one after the other, as Java's `GZIPInputStream` reads them: after a
/// complete member, bytes that do not start another member (`1f 8b 08`) are ignored.
fn decompress_gzip(data: &[u8], hint: usize) -> Result<Vec<u8>> {
    const MEMBER_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];
    let codec = Codec::Gzip;
    let mut out = Vec::with_capacity(hint.min(MAX_DECOMPRESSED_SIZE));
    let mut rest = data;
    loop {
        let mut member = flate2::bufread::GzDecoder::new(rest);
        read_capped(codec, &mut member, &mut out)?;
        rest = member.into_inner();
        if !rest.starts_with(&MEMBER_MAGIC) {
            return Ok(out);
        }
    }
}

/// XXH32 of an input shorter than 16 bytes (all an LZ4 frame descriptor can be).
fn xxh32_short(input: &[u8], seed: u32) -> u32 {
    const P1: u32 = 0x9E37_79B1;
    const P2: u32 = 0x85EB_CA77;
    const P3: u32 = 0xC2B2_AE3D;
    const P4: u32 = 0x27D4_EB2F;
    const P5: u32 = 0x1656_67B1;
    debug_assert!(input.len() < 16);
    let mut h = seed.wrapping_add(P5).wrapping_add(input.len() as u32);
    let mut words = input.chunks_exact(4);
    for w in &mut words {
        let k = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        h = h.wrapping_add(k.wrapping_mul(P3));
        h = h.rotate_left(17).wrapping_mul(P4);
    }
    for &b in words.remainder() {
        h = h.wrapping_add((b as u32).wrapping_mul(P5));
        h = h.rotate_left(11).wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^= h >> 16;
    h
}

/// Most bytes one byte of a raw snappy block can expand to: a 3-byte copy element
/// writes at most 64 bytes (literals and 2-byte copies expand less).
const SNAPPY_MAX_EXPANSION: usize = 22;

/// The decompressed length a raw snappy block declares, refused before anything is
/// allocated when its elements could not produce it (or it exceeds the 1 GiB cap).
fn snappy_raw_len(block: &[u8]) -> Result<usize> {
    let codec = Codec::Snappy;
    let len = snap::raw::decompress_len(block).map_err(|e| corrupt(codec, e))?;
    if len > MAX_DECOMPRESSED_SIZE {
        return Err(corrupt(
            codec,
            format!("decompressed size exceeds {MAX_DECOMPRESSED_TEXT}"),
        ));
    }
    if len > block.len().saturating_mul(SNAPPY_MAX_EXPANSION) {
        return Err(corrupt(
            codec,
            format!(
                "block of {} bytes declares {len} decompressed bytes",
                block.len()
            ),
        ));
    }
    Ok(len)
}

fn decompress_snappy_raw(data: &[u8]) -> Result<Vec<u8>> {
    let codec = Codec::Snappy;
    let len = snappy_raw_len(data)?;
    let mut out = vec![0u8; len];
    let n = snap::raw::Decoder::new()
        .decompress(data, &mut out)
        .map_err(|e| corrupt(codec, e))?;
    out.truncate(n);
    Ok(out)
}

/// snappy-java's stream format; a header may also start again mid-stream
/// (concatenated streams), as `SnappyInputStream` allows.
fn decompress_xerial(data: &[u8]) -> Result<Vec<u8>> {
    let codec = Codec::Snappy;
    let mut dec = snap::raw::Decoder::new();
    let mut out: Vec<u8> = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let rest = &data[pos..];
        if rest.starts_with(&XERIAL_MAGIC) {
            if rest.len() < XERIAL_HEADER_LEN {
                return Err(corrupt(codec, "truncated xerial stream header"));
            }
            pos += XERIAL_HEADER_LEN;
            continue;
        }
        let len_bytes: [u8; 4] = rest
            .get(..4)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| corrupt(codec, "truncated xerial block length"))?;
        let len = i32::from_be_bytes(len_bytes);
        if len < 0 {
            return Err(corrupt(
                codec,
                format!("negative xerial block length {len}"),
            ));
        }
        let block = rest
            .get(4..4 + len as usize)
            .ok_or_else(|| corrupt(codec, "xerial block runs past the end of the data"))?;
        let n = snappy_raw_len(block)?;
        if out.len() + n > MAX_DECOMPRESSED_SIZE {
            return Err(corrupt(
                codec,
                format!("decompressed size exceeds {MAX_DECOMPRESSED_TEXT}"),
            ));
        }
        let at = out.len();
        out.resize(at + n, 0);
        let written = dec
            .decompress(block, &mut out[at..])
            .map_err(|e| corrupt(codec, e))?;
        out.truncate(at + written);
        pos += 4 + len as usize;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Codec; 5] = [
        Codec::None,
        Codec::Gzip,
        Codec::Snappy,
        Codec::Lz4,
        Codec::Zstd,
    ];

    fn sample(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    (i * 31 % 251) as u8
                } else {
                    b'a' + (i % 5) as u8
                }
            })
            .collect()
    }

    #[test]
    fn from_id() {
        for (i, c) in ALL.iter().enumerate() {
            assert_eq!(Codec::from_id(i as i32).unwrap(), *c);
            assert_eq!(c.id(), i as i32);
        }
        for bad in [-1, 5, 6, 7, 100] {
            assert!(matches!(
                Codec::from_id(bad),
                Err(Error::UnsupportedCompression(_))
            ));
        }
    }

    #[test]
    fn round_trip_every_codec() {
        for n in [0usize, 1, 100, 32 * 1024, 32 * 1024 + 1, 64 * 1024, 200_000] {
            let data = sample(n);
            for c in ALL {
                let z = compress(c, &data).unwrap();
                assert_eq!(decompress(c, &z).unwrap(), data, "{c:?} n={n}");
            }
        }
    }

    #[test]
    fn gzip_header_and_concatenated_members() {
        let a = compress(Codec::Gzip, b"hello ").unwrap();
        assert_eq!(&a[..3], &[0x1f, 0x8b, 0x08]);
        let b = compress(Codec::Gzip, b"world").unwrap();
        let mut both = a.clone();
        both.extend_from_slice(&b);
        assert_eq!(decompress(Codec::Gzip, &both).unwrap(), b"hello world");
        // Java's GZIPInputStream ignores trailing bytes that are not a member.
        let mut trailing = both.clone();
        trailing.extend_from_slice(b"\x00\x00junk");
        assert_eq!(decompress(Codec::Gzip, &trailing).unwrap(), b"hello world");
        // ... but a truncated second member is corrupt.
        let mut cut = a.clone();
        cut.extend_from_slice(&b[..b.len() - 3]);
        assert!(decompress(Codec::Gzip, &cut).is_err());
    }

    #[test]
    fn snappy_xerial_layout() {
        let data = sample(70_000); // three blocks: 32K, 32K, rest
        let z = compress(Codec::Snappy, &data).unwrap();
        assert_eq!(&z[..8], &XERIAL_MAGIC);
        assert_eq!(&z[8..16], &[0, 0, 0, 1, 0, 0, 0, 1]);
        let mut pos = 16;
        let mut blocks = Vec::new();
        while pos < z.len() {
            let len = i32::from_be_bytes(z[pos..pos + 4].try_into().unwrap()) as usize;
            let block = &z[pos + 4..pos + 4 + len];
            blocks.push(snap::raw::Decoder::new().decompress_vec(block).unwrap());
            pos += 4 + len;
        }
        assert_eq!(pos, z.len());
        assert_eq!(
            blocks.iter().map(Vec::len).collect::<Vec<_>>(),
            [32768, 32768, 70_000 - 65536]
        );
        assert_eq!(blocks.concat(), data);
    }

    #[test]
    fn snappy_raw_and_concatenated_xerial() {
        let data = sample(5000);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(Codec::Snappy, &raw).unwrap(), data);
        let mut two = compress(Codec::Snappy, b"abc").unwrap();
        two.extend_from_slice(&compress(Codec::Snappy, b"def").unwrap());
        assert_eq!(decompress(Codec::Snappy, &two).unwrap(), b"abcdef");
        // Empty raw snappy block (a single zero length byte).
        assert_eq!(decompress(Codec::Snappy, &[0]).unwrap(), b"");
    }

    #[test]
    fn lz4_frame_descriptor() {
        let z = compress(Codec::Lz4, b"hello hello hello").unwrap();
        assert_eq!(&z[..4], &[0x04, 0x22, 0x4D, 0x18]);
        // FLG: version 01, independent blocks, no checksums, no content size.
        assert_eq!(z[4], 0x60);
        // BD: 64 KiB max block size.
        assert_eq!(z[5], 0x40);
        // Our xxh32 agrees with lz4_flex's header checksum.
        assert_eq!(z[6], (xxh32_short(&z[4..6], 0) >> 8) as u8);
        assert!(lz4_with_fixed_header_checksum(&z).is_none());
    }

    #[test]
    fn xxh32_vectors() {
        assert_eq!(xxh32_short(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32_short(b"a", 0), 0x550D_7456);
        assert_eq!(xxh32_short(b"abc", 0), 0x32D1_53FF);
    }

    #[test]
    fn lz4_v0_broken_header_checksum() {
        let data = sample(1000);
        let mut z = compress(Codec::Lz4, &data).unwrap();
        // Kafka < 0.10 hashed magic + descriptor for the header checksum.
        z[6] = (xxh32_short(&z[0..6], 0) >> 8) as u8;
        assert!(decompress(Codec::Lz4, &z).is_err());
        assert!(decompress_legacy(Codec::Lz4, &z, 1).is_err());
        assert_eq!(decompress_legacy(Codec::Lz4, &z, 0).unwrap(), data);
    }

    #[test]
    fn garbage_is_corrupt() {
        let junk: Vec<u8> = (0..300u32).map(|i| (i * 97 % 256) as u8).collect();
        for c in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
            for input in [&junk[..], &[][..], &[0xff][..]] {
                match decompress(c, input) {
                    Err(Error::Corrupt {
                        context, position, ..
                    }) => {
                        assert_eq!(context, "buffer");
                        assert_eq!(position, 0);
                    }
                    other => panic!("{c:?} {input:?}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn truncated_streams_are_corrupt() {
        let data = sample(100_000);
        for c in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
            let z = compress(c, &data).unwrap();
            for cut in [1, z.len() / 2, z.len() - 1] {
                assert!(decompress(c, &z[..cut]).is_err(), "{c:?} cut {cut}");
            }
        }
    }

    #[test]
    fn lz4_truncation_at_block_boundaries() {
        let data = sample(300_000);
        let z = compress(Codec::Lz4, &data).unwrap();
        assert_eq!(lz4_frame_len(&z), Some(z.len()));
        // Walk the blocks and cut right after each one (before the end mark).
        let mut p = 7;
        loop {
            let block = u32::from_le_bytes(z[p..p + 4].try_into().unwrap());
            if block == 0 {
                break;
            }
            p += 4 + (block & 0x7FFF_FFFF) as usize;
            assert!(
                matches!(decompress(Codec::Lz4, &z[..p]), Err(Error::Corrupt { .. })),
                "cut {p}"
            );
        }
        assert_eq!(p + 4, z.len());
        // Only the first frame is read; what follows is ignored (Kafka, liblz4).
        let mut two = z.clone();
        two.extend_from_slice(&compress(Codec::Lz4, b"tail").unwrap());
        two.extend_from_slice(b"junk");
        let got = decompress(Codec::Lz4, &two).unwrap();
        assert_eq!(got.len(), data.len());
        assert!(got == data);
    }

    #[test]
    fn zstd_frame_without_content_size() {
        let data = sample(10_000);
        let streamed = zstd::stream::encode_all(&data[..], 3).unwrap();
        assert_eq!(decompress(Codec::Zstd, &streamed).unwrap(), data);
    }

    #[test]
    fn snappy_bomb_is_refused() {
        // A raw snappy preamble declaring ~4 GiB.
        let bomb = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00];
        assert!(matches!(
            decompress(Codec::Snappy, &bomb),
            Err(Error::Corrupt { .. })
        ));
    }

    /// Fuzz finding (decompress target): a raw snappy block of a few bytes declaring
    /// ~1 GiB made the decoder allocate the declared size before decoding anything.
    /// The declared length is now checked against what the block's bytes can produce.
    #[test]
    fn snappy_declared_length_beyond_the_block_is_refused_before_allocating() {
        // varint 0x3FFF_FFF8 (just under 1 GiB), then one literal byte.
        let tiny = [0xf8, 0xff, 0xff, 0xff, 0x03, 0x00, b'x'];
        match decompress(Codec::Snappy, &tiny) {
            Err(Error::Corrupt { reason, .. }) => assert!(reason.contains("declares"), "{reason}"),
            other => panic!("{other:?}"),
        }
        let mut framed = XERIAL_MAGIC.to_vec();
        framed.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, tiny.len() as u8]);
        framed.extend_from_slice(&tiny);
        match decompress(Codec::Snappy, &framed) {
            Err(Error::Corrupt { reason, .. }) => assert!(reason.contains("declares"), "{reason}"),
            other => panic!("{other:?}"),
        }
        // The bound is loose enough for the densest real block (runs of one byte).
        let dense = snap::raw::Encoder::new()
            .compress_vec(&[7u8; 60_000])
            .unwrap();
        assert_eq!(
            decompress(Codec::Snappy, &dense).unwrap(),
            vec![7u8; 60_000]
        );
    }

    /// A bomb (here an endless reader) past the cap is refused, and the buffer never grew
    /// past the cap: `read_to_end` alone on a reader limited to the cap + 1 byte doubled a
    /// full buffer (at 1 GiB: to 2 GiB) before the limit stopped it.
    #[test]
    fn bomb_refused_without_growing_past_the_cap() {
        let max = 3 << 20;
        let mut out = Vec::with_capacity(1024);
        match read_capped_to(Codec::Zstd, std::io::repeat(7), &mut out, max) {
            Err(Error::Corrupt { reason, .. }) => assert!(reason.contains("exceeds"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert!(out.capacity() <= max + 1, "{}", out.capacity());
        let mut out = Vec::new();
        read_capped_to(Codec::Zstd, &[1u8, 2, 3][..], &mut out, max).unwrap();
        assert_eq!(out, [1, 2, 3]);
        let mut exact = Vec::new();
        read_capped_to(Codec::Zstd, &vec![9u8; max][..], &mut exact, max).unwrap();
        assert_eq!(exact.len(), max);
    }
}
