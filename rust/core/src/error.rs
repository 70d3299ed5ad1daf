//! One error enum for the whole core. The binding layer maps each variant onto
//! an exception class defined in Python (`kafkacore/errors.py`).

use std::io;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bytes that are not a valid record batch / message. `context` is a file path
    /// or `"buffer"`, `position` the byte position of the batch (or of the bad byte).
    /// Maps to `CorruptRecordError`.
    #[error("{context}: corrupt record data at position {position}: {reason}")]
    Corrupt {
        context: String,
        position: u64,
        reason: String,
    },
    /// Structurally valid data that Kafka refuses (e.g. an empty producer batch).
    /// Maps to `InvalidRecordError`.
    #[error("{0}")]
    InvalidRecord(String),
    /// An offset outside what a segment or index can hold, or going backwards.
    /// Maps to `InvalidOffsetError`.
    #[error("{0}")]
    InvalidOffset(String),
    /// An append needs index entries that no longer fit. Maps to `IndexFullError`.
    #[error("{0}")]
    IndexFull(String),
    /// An index file that fails its sanity check. Maps to `CorruptIndexError`.
    #[error("{0}")]
    CorruptIndex(String),
    /// Unknown codec id, or compressed bytes the codec cannot decode.
    /// Maps to `UnsupportedCompressionError` (unknown id) — bad compressed bytes are `Corrupt`.
    #[error("{0}")]
    UnsupportedCompression(String),
    /// A bad argument from the caller. Maps to `ValueError`.
    #[error("{0}")]
    InvalidArgument(String),
    /// An I/O error on a named file. Maps to `StorageIOError` (an `OSError`).
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl Error {
    pub fn corrupt(context: &str, position: u64, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            context: context.to_string(),
            position,
            reason: reason.into(),
        }
    }

    pub fn io(path: &std::path::Path, source: io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
