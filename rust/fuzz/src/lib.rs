//! Shared pieces of the fuzz targets: a reader that takes parameters (positions,
//! offsets, codec ids) from the front of the fuzzer's input, and the invariants every
//! target checks on what the parsers return.

use kafkacore_core::Error;

/// Parameters taken from the front of the input; what is left is the data.
pub struct Params<'a> {
    data: &'a [u8],
}

impl<'a> Params<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Params { data }
    }

    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    pub fn i64(&mut self) -> i64 {
        let mut raw = [0u8; 8];
        let n = self.data.len().min(8);
        raw[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        i64::from_be_bytes(raw)
    }

    /// A small offset/position: mostly near 0, sometimes anywhere.
    pub fn small_i64(&mut self) -> i64 {
        let sel = self.u8();
        match sel % 4 {
            0 => (sel >> 2) as i64 - 2,
            3 => self.i64(),
            _ => self.u8() as i64 * 8 + (sel >> 2) as i64,
        }
    }

    pub fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// The error kinds a parser may return on bad bytes (no `Io`, no panics). An `Io` error
/// is only acceptable from targets that touch files, which pass `files = true`.
pub fn expected_error(e: &Error, files: bool) {
    match e {
        Error::Io { .. } if !files => panic!("I/O error from an in-memory parser: {e}"),
        _ => {
            // Rendering the message must not panic either (it is what clients see).
            let _ = e.to_string();
        }
    }
}

/// A directory of this process for targets that need files (tmpfs when there is one),
/// created on the first call and then reused: each execution writes every file it
/// opens (`std::fs::write` truncates), so nothing of an earlier input is read. Removing
/// and re-creating the directory on every execution cost about a sixth of the `segment`
/// target's time (`remove_dir_all`'s open/getdents/unlink calls, then `mkdir`);
/// `make fuzz` removes the directory when the target exits. The parsers under test map
/// and read the files as the broker does.
pub fn scratch_dir() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("kafkacore-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    })
}
