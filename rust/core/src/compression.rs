//! Kafka's codecs: the id is attributes bits 0-2.

use crate::error::Result;

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
        todo!("R1")
    }
}

/// Compress as Kafka's Java producer does (gzip level 6; snappy xerial-framed,
/// 32 KiB blocks; lz4 frame, 64 KiB independent blocks, no checksums; zstd level 3).
pub fn compress(codec: Codec, data: &[u8]) -> Result<Vec<u8>> {
    todo!("R1")
}

/// Decompress; snappy accepts raw and xerial-framed. Bad input is `Error::Corrupt`
/// with context "buffer" and position 0 (callers re-wrap with the batch position).
pub fn decompress(codec: Codec, data: &[u8]) -> Result<Vec<u8>> {
    todo!("R1")
}
