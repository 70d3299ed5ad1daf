//! kafkacore-core: Apache Kafka's on-disk formats in plain Rust (no Python).
//!
//! * [`crc`] — CRC-32C (record batch v2) and CRC-32 (legacy messages).
//! * [`varint`] — zigzag varint/varlong and unsigned varint.
//! * [`compression`] — gzip, snappy (raw and xerial-framed), lz4 (frame), zstd.
//! * [`batch`] — RecordBatch v2: layout constants, header, build, validate, iterate.
//! * [`legacy`] — MessageSet v0/v1 (read path, plus a builder for tests).
//! * [`shallow`] — a magic-agnostic view of the batches in a buffer, as Kafka's
//!   `FileLogInputStream` walks a file.
//! * [`index`] — `.index` and `.timeindex`: memory-mapped, preallocated, trimmed.
//! * [`segment`] — one `.log` with its two indexes: append, read, lookups, recovery.
//! * [`cleaner`] — compaction: the key -> offset map and the per-batch filter.
//! * [`columns`] — the records of a run of batches as Arrow column buffers.
//! * [`partitioner`] — Kafka's murmur2 key partitioner.
//! * [`produce`] — the native produce path: a client batch appended under Python's lease.
//!
//! Every function returns [`error::Result`]; nothing here panics on bad input.

pub mod batch;
pub mod cleaner;
pub mod columns;
pub mod compression;
pub mod crc;
pub mod error;
pub mod index;
pub mod legacy;
pub mod partitioner;
pub mod produce;
pub mod segment;
pub mod shallow;
pub mod varint;

pub use error::{Error, Result};
