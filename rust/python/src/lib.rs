//! PyO3 glue: exposes kafkacore-core as `kafkacore._native`. The contract is
//! `python/kafkacore/_native.pyi`; every rule lives in kafkacore-core, this crate only
//! converts arguments and results and maps errors.
//!
//! GIL: CRC over large buffers, compression, validation, building, appends, scans,
//! recovery, truncation and fsync run detached (`py.detach`). Arguments are borrowed
//! (`&[u8]` of an immutable `bytes`) or copied into Rust values before detaching.
//!
//! Threading: `Segment` is a regular (`Send + Sync`) class guarded by PyO3's runtime borrow
//! flag. Calls from different threads one after the other are fine (e.g.
//! `asyncio.to_thread(segment.flush)`); a call made while another thread is inside a
//! mutating method (which runs with the GIL released) raises `RuntimeError` ("already
//! borrowed") instead of racing. Reading methods take a shared borrow and may overlap.

mod cleaner;
mod columns;
mod produce;

use std::path::PathBuf;

use kafkacore_core::batch::{self, BatchHeader, BuildOptions, Record};
use kafkacore_core::compression::{self, Codec};
use kafkacore_core::legacy::{self, LegacyHeader};
use kafkacore_core::segment::{Segment, SegmentConfig};
use kafkacore_core::{crc, Error};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

pyo3::import_exception!(kafkacore.errors, CorruptRecordError);
pyo3::import_exception!(kafkacore.errors, InvalidRecordError);
pyo3::import_exception!(kafkacore.errors, InvalidOffsetError);
pyo3::import_exception!(kafkacore.errors, IndexFullError);
pyo3::import_exception!(kafkacore.errors, CorruptIndexError);
pyo3::import_exception!(kafkacore.errors, UnsupportedCompressionError);
pyo3::import_exception!(kafkacore.errors, StorageIOError);

/// Buffers at least this large are checksummed with the GIL released.
const DETACH_THRESHOLD: usize = 64 * 1024;

/// The error of every binding: a core error, converted into the exception class
/// `kafkacore/errors.py` defines for it (a local type because both `Error` and `PyErr` are
/// foreign here), or an exception already raised by Python-side conversion.
enum NativeError {
    Core(Error),
    Python(PyErr),
}

impl From<Error> for NativeError {
    fn from(e: Error) -> Self {
        NativeError::Core(e)
    }
}

impl From<PyErr> for NativeError {
    fn from(e: PyErr) -> Self {
        NativeError::Python(e)
    }
}

impl From<NativeError> for PyErr {
    fn from(e: NativeError) -> PyErr {
        match e {
            NativeError::Core(e) => core_error_to_py(e),
            NativeError::Python(e) => e,
        }
    }
}

/// The one mapping from `Error` variants to exception classes.
fn core_error_to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match e {
        Error::Corrupt { .. } => CorruptRecordError::new_err(message),
        Error::InvalidRecord(_) => InvalidRecordError::new_err(message),
        Error::InvalidOffset(_) => InvalidOffsetError::new_err(message),
        Error::IndexFull(_) => IndexFullError::new_err(message),
        Error::CorruptIndex(_) => CorruptIndexError::new_err(message),
        Error::UnsupportedCompression(_) => UnsupportedCompressionError::new_err(message),
        Error::InvalidArgument(_) => PyValueError::new_err(message),
        // OSError's (errno, strerror, filename) form, so `errno` and `filename` are set.
        Error::Io { path, source } => match source.raw_os_error() {
            Some(errno) => {
                // std appends " (os error N)"; OSError prints the errno itself.
                let text = source.to_string();
                let strerror = match text.rfind(" (os error ") {
                    Some(cut) => text[..cut].to_string(),
                    None => text,
                };
                StorageIOError::new_err((errno, strerror, path))
            }
            None => StorageIOError::new_err(message),
        },
    }
}

type NativeResult<T> = Result<T, NativeError>;

fn codec(id: i64) -> NativeResult<Codec> {
    let id = i32::try_from(id)
        .map_err(|_| Error::UnsupportedCompression(format!("unknown compression codec id {id}")))?;
    Ok(Codec::from_id(id)?)
}

fn position(pos: i64) -> NativeResult<usize> {
    usize::try_from(pos)
        .map_err(|_| Error::InvalidArgument(format!("invalid position {pos}")).into())
}

fn detach_if_large<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len >= DETACH_THRESHOLD {
        py.detach(f)
    } else {
        f()
    }
}

// ---- records in and out ---------------------------------------------------------------

type PyHeaders = Vec<(String, Option<PyBackedBytes>)>;
type PyRecord = (
    i64,
    i64,
    Option<PyBackedBytes>,
    Option<PyBackedBytes>,
    PyHeaders,
);

fn to_records(records: Vec<PyRecord>) -> Vec<Record> {
    records
        .into_iter()
        .map(|(offset, timestamp, key, value, headers)| Record {
            offset,
            timestamp,
            key: key.map(|k| k.to_vec()),
            value: value.map(|v| v.to_vec()),
            headers: headers
                .into_iter()
                .map(|(k, v)| (k, v.map(|v| v.to_vec())))
                .collect(),
        })
        .collect()
}

fn opt_bytes<'py>(py: Python<'py>, b: &Option<Vec<u8>>) -> Bound<'py, PyAny> {
    match b {
        Some(b) => PyBytes::new(py, b).into_any(),
        None => py.None().into_bound(py),
    }
}

fn records_to_py<'py>(py: Python<'py>, records: &[Record]) -> PyResult<Bound<'py, PyList>> {
    let items = records
        .iter()
        .map(|r| {
            let headers = r
                .headers
                .iter()
                .map(|(k, v)| PyTuple::new(py, [k.into_pyobject(py)?.into_any(), opt_bytes(py, v)]))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(
                py,
                [
                    r.offset.into_pyobject(py)?.into_any(),
                    r.timestamp.into_pyobject(py)?.into_any(),
                    opt_bytes(py, &r.key),
                    opt_bytes(py, &r.value),
                    PyList::new(py, headers)?.into_any(),
                ],
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// The 13-tuple of the stored header fields (more than PyO3's tuple conversions take).
fn header_tuple<'py>(py: Python<'py>, h: &BatchHeader) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            h.base_offset,
            h.batch_length as i64,
            h.partition_leader_epoch as i64,
            h.magic as i64,
            h.crc as i64,
            h.attributes as i64,
            h.last_offset_delta as i64,
            h.base_timestamp,
            h.max_timestamp,
            h.producer_id,
            h.producer_epoch as i64,
            h.base_sequence as i64,
            h.records_count as i64,
        ],
    )
}

fn legacy_tuple(h: &LegacyHeader) -> (i64, i32, u32, i8, i8, i64) {
    (h.offset, h.size, h.crc, h.magic, h.attributes, h.timestamp)
}

// ---- functions ------------------------------------------------------------------------

/// CRC-32C (Castagnoli) of ``data``, as stored in RecordBatch v2.
#[pyfunction]
#[pyo3(signature = (data, /))]
fn crc32c(py: Python<'_>, data: &[u8]) -> u32 {
    detach_if_large(py, data.len(), || crc::crc32c(data))
}

/// CRC-32 (IEEE) of ``data``, as stored in legacy v0/v1 messages.
#[pyfunction]
#[pyo3(signature = (data, /))]
fn crc32(py: Python<'_>, data: &[u8]) -> u32 {
    detach_if_large(py, data.len(), || crc::crc32(data))
}

/// Compress as Kafka's Java producer does.
#[pyfunction]
#[pyo3(signature = (codec, data, /))]
fn compress<'py>(py: Python<'py>, codec: i64, data: &[u8]) -> NativeResult<Bound<'py, PyBytes>> {
    let codec = self::codec(codec)?;
    let out = py.detach(|| compression::compress(codec, data))?;
    Ok(PyBytes::new(py, &out))
}

/// Inverse of :func:`compress`; snappy accepts raw blocks and xerial framing.
#[pyfunction]
#[pyo3(signature = (codec, data, /))]
fn decompress<'py>(py: Python<'py>, codec: i64, data: &[u8]) -> NativeResult<Bound<'py, PyBytes>> {
    let codec = self::codec(codec)?;
    let out = py.detach(|| compression::decompress(codec, data))?;
    Ok(PyBytes::new(py, &out))
}

/// Build one RecordBatch v2 exactly as Kafka's ``MemoryRecordsBuilder`` lays it out.
#[pyfunction]
#[pyo3(signature = (
    records,
    *,
    base_offset = None,
    last_offset_delta = None,
    compression = 0,
    timestamp_type = 0,
    partition_leader_epoch = -1,
    producer_id = -1,
    producer_epoch = -1,
    base_sequence = -1,
    transactional = false,
    control = false,
    delete_horizon_ms = -1,
), text_signature = "(records, *, base_offset=None, last_offset_delta=None, compression=0, \
    timestamp_type=0, partition_leader_epoch=-1, producer_id=-1, producer_epoch=-1, \
    base_sequence=-1, transactional=False, control=False, delete_horizon_ms=-1)")]
#[allow(clippy::too_many_arguments)]
fn build_batch<'py>(
    py: Python<'py>,
    records: Vec<PyRecord>,
    base_offset: Option<i64>,
    last_offset_delta: Option<i64>,
    compression: i64,
    timestamp_type: i64,
    partition_leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    control: bool,
    delete_horizon_ms: i64,
) -> NativeResult<Bound<'py, PyBytes>> {
    let opts = BuildOptions {
        base_offset,
        last_offset_delta: last_offset_delta
            .map(|d| {
                i32::try_from(d).map_err(|_| {
                    Error::InvalidArgument(format!("last_offset_delta {d} does not fit an i32"))
                })
            })
            .transpose()?,
        codec: codec(compression)?,
        timestamp_type: i32::try_from(timestamp_type).map_err(|_| {
            Error::InvalidArgument(format!(
                "timestamp_type must be 0 or 1, not {timestamp_type}"
            ))
        })?,
        partition_leader_epoch,
        producer_id,
        producer_epoch,
        base_sequence,
        transactional,
        control,
        delete_horizon_ms,
    };
    let records = to_records(records);
    let out = py.detach(|| batch::build(&records, &opts))?;
    Ok(PyBytes::new(py, &out))
}

/// The stored header of the v2 batch at ``pos``. No CRC check.
#[pyfunction]
#[pyo3(signature = (buf, pos = 0, /))]
fn batch_header<'py>(py: Python<'py>, buf: &[u8], pos: i64) -> NativeResult<Bound<'py, PyTuple>> {
    let header = batch::parse_header(buf, position(pos)?, "buffer")?;
    Ok(header_tuple(py, &header)?)
}

/// Validate the v2 batch at ``pos`` completely and return its header.
#[pyfunction]
#[pyo3(signature = (buf, pos = 0, /))]
fn validate_batch<'py>(py: Python<'py>, buf: &[u8], pos: i64) -> NativeResult<Bound<'py, PyTuple>> {
    let pos = position(pos)?;
    let header = detach_if_large(py, buf.len(), || batch::validate(buf, pos, "buffer"))?;
    Ok(header_tuple(py, &header)?)
}

/// Validate and decode every record of the v2 batch at ``pos``.
#[pyfunction]
#[pyo3(signature = (buf, pos = 0, /))]
fn batch_records<'py>(py: Python<'py>, buf: &[u8], pos: i64) -> NativeResult<Bound<'py, PyList>> {
    let pos = position(pos)?;
    let (_, records) = detach_if_large(py, buf.len(), || batch::records(buf, pos, "buffer"))?;
    Ok(records_to_py(py, &records)?)
}

/// Shallow header of the legacy (magic 0/1) message at ``pos``. No CRC check.
#[pyfunction]
#[pyo3(signature = (buf, pos = 0, /))]
fn legacy_header(buf: &[u8], pos: i64) -> NativeResult<(i64, i32, u32, i8, i8, i64)> {
    Ok(legacy_tuple(&legacy::parse_header(
        buf,
        position(pos)?,
        "buffer",
    )?))
}

/// Deep records of the legacy message at ``pos`` (CRC-32 checked, wrapper and inner).
#[pyfunction]
#[pyo3(signature = (buf, pos = 0, /))]
fn legacy_records<'py>(py: Python<'py>, buf: &[u8], pos: i64) -> NativeResult<Bound<'py, PyList>> {
    let pos = position(pos)?;
    let (_, records) = detach_if_large(py, buf.len(), || legacy::records(buf, pos, "buffer"))?;
    Ok(records_to_py(py, &records)?)
}

/// Build a legacy message set (tests).
#[pyfunction]
#[pyo3(signature = (records, magic, compression = 0, timestamp_type = 0))]
fn build_legacy<'py>(
    py: Python<'py>,
    records: Vec<PyRecord>,
    magic: i64,
    compression: i64,
    timestamp_type: i64,
) -> NativeResult<Bound<'py, PyBytes>> {
    let magic = i8::try_from(magic)
        .map_err(|_| Error::InvalidArgument(format!("legacy magic must be 0 or 1, not {magic}")))?;
    let timestamp_type = i32::try_from(timestamp_type).map_err(|_| {
        Error::InvalidArgument(format!(
            "timestamp_type must be 0 or 1, not {timestamp_type}"
        ))
    })?;
    let codec = codec(compression)?;
    let records = to_records(records);
    let out = py.detach(|| legacy::build(&records, magic, codec, timestamp_type))?;
    Ok(PyBytes::new(py, &out))
}

// ---- Segment --------------------------------------------------------------------------

/// One log segment: ``<dir>/<20-digit base offset>.log`` with its ``.index`` and
/// ``.timeindex``. Not thread-safe: one writer, and no reader concurrent with a writer
/// (a concurrent call raises ``RuntimeError``).
#[pyclass(name = "Segment", module = "kafkacore._native")]
struct PySegment {
    inner: Segment,
}

#[pymethods]
impl PySegment {
    #[new]
    #[pyo3(signature = (directory, base_offset, *, index_interval_bytes = 4096, max_index_size = 10485760))]
    fn new(
        py: Python<'_>,
        directory: PathBuf,
        base_offset: i64,
        index_interval_bytes: i64,
        max_index_size: i64,
    ) -> NativeResult<Self> {
        let config = SegmentConfig {
            index_interval_bytes,
            max_index_size,
        };
        let inner = py.detach(|| Segment::open(&directory, base_offset, config))?;
        Ok(PySegment { inner })
    }

    /// The work is done by `__new__`; this `__init__` only exists so that
    /// `Segment.__init__` reports the class signature (what the stub and `stubtest` see).
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __init__(&self, _args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) {}

    #[getter]
    fn base_offset(&self) -> i64 {
        self.inner.base_offset()
    }
    #[getter]
    fn log_path(&self) -> String {
        self.inner.log_path().display().to_string()
    }
    #[getter]
    fn index_path(&self) -> String {
        self.inner.index_path().display().to_string()
    }
    #[getter]
    fn time_index_path(&self) -> String {
        self.inner.time_index_path().display().to_string()
    }
    /// Bytes in the ``.log`` file.
    #[getter]
    fn size(&self) -> u64 {
        self.inner.size()
    }
    /// The offset after the last batch (``base_offset`` when empty).
    #[getter]
    fn next_offset(&self) -> i64 {
        self.inner.next_offset()
    }
    /// Largest batch max timestamp so far (-1 if none).
    #[getter]
    fn max_timestamp(&self) -> i64 {
        self.inner.max_timestamp()
    }
    /// Last offset of the batch holding ``max_timestamp`` (-1 if none).
    #[getter]
    fn offset_of_max_timestamp(&self) -> i64 {
        self.inner.offset_of_max_timestamp()
    }
    /// Max timestamp of the first batch (-1 when empty): what ``segment.ms`` uses.
    #[getter]
    fn rolling_based_timestamp(&self) -> i64 {
        self.inner.rolling_based_timestamp()
    }
    /// True when the offset or the time index is full (the log must roll).
    #[getter]
    fn index_is_full(&self) -> bool {
        self.inner.index_is_full()
    }
    #[getter]
    fn closed(&self) -> bool {
        self.inner.closed()
    }

    /// Validate, stamp and append one or more concatenated v2 batches.
    #[pyo3(
        signature = (data, *, partition_leader_epoch = -1, log_append_time_ms = -1, assign_offsets = true),
        text_signature = "($self, data, *, partition_leader_epoch=-1, log_append_time_ms=-1, assign_offsets=True)"
    )]
    fn append(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        partition_leader_epoch: i64,
        log_append_time_ms: i64,
        assign_offsets: bool,
    ) -> NativeResult<(i64, i64, i64, i64, u64)> {
        let partition_leader_epoch = i32::try_from(partition_leader_epoch).map_err(|_| {
            Error::InvalidArgument(format!(
                "partition_leader_epoch={partition_leader_epoch} is out of the i32 range"
            ))
        })?;
        let r = py.detach(|| {
            self.inner.append(
                data,
                partition_leader_epoch,
                log_append_time_ms,
                assign_offsets,
            )
        })?;
        Ok((
            r.first_offset,
            r.last_offset,
            r.max_timestamp,
            r.offset_of_max_timestamp,
            r.bytes_written,
        ))
    }

    /// Locate whole batches to serve a fetch from ``start_offset``.
    #[pyo3(
        signature = (start_offset, max_bytes, max_position = -1, min_one_batch = true),
        text_signature = "($self, start_offset, max_bytes, max_position=-1, min_one_batch=True)"
    )]
    fn read(
        &self,
        py: Python<'_>,
        start_offset: i64,
        max_bytes: i64,
        max_position: i64,
        min_one_batch: bool,
    ) -> NativeResult<Option<(u64, u64)>> {
        Ok(py.detach(|| {
            self.inner
                .read(start_offset, max_bytes, max_position, min_one_batch)
        })?)
    }

    /// ``length`` bytes of the ``.log`` from ``position`` (short at the end of file).
    fn read_bytes<'py>(
        &self,
        py: Python<'py>,
        position: i64,
        length: i64,
    ) -> NativeResult<Bound<'py, PyBytes>> {
        let n = self.inner.readable_len(position, length)?;
        let mut failure: Option<Error> = None;
        // One allocation: the file is read straight into the new bytes object, which no
        // other code can see yet, so filling it with the GIL released is safe.
        let bytes = PyBytes::new_with(py, n, |buf| {
            if let Err(e) = py.detach(|| self.inner.read_exact_into(position as u64, buf)) {
                failure = Some(e);
            }
            Ok(())
        })?;
        match failure {
            Some(e) => Err(e.into()),
            None => Ok(bytes),
        }
    }

    /// ``(batch_last_offset, position, size)`` of the first batch whose last offset >=
    /// ``offset``.
    #[pyo3(signature = (offset, starting_position = 0))]
    fn translate_offset(
        &self,
        py: Python<'_>,
        offset: i64,
        starting_position: i64,
    ) -> NativeResult<Option<(i64, u64, u64)>> {
        let found = py.detach(|| self.inner.translate_offset(offset, starting_position))?;
        Ok(found.map(|m| (m.last_offset, m.position, m.size)))
    }

    /// Largest offset-index entry with offset <= ``offset``; ``(base_offset, 0)`` if none.
    fn lookup_index(&self, offset: i64) -> NativeResult<(i64, u32)> {
        Ok(self.inner.lookup_index(offset)?)
    }

    /// Largest time-index entry with timestamp <= ``timestamp``; ``(-1, base_offset)`` if none.
    fn lookup_time_index(&self, timestamp: i64) -> NativeResult<(i64, i64)> {
        Ok(self.inner.lookup_time_index(timestamp)?)
    }

    /// Kafka's ``findOffsetByTimestamp``: ``(timestamp, offset, leader_epoch)`` or ``None``.
    #[pyo3(
        signature = (timestamp, starting_offset = -1),
        text_signature = "($self, timestamp, starting_offset=-1)"
    )]
    fn find_offset_by_timestamp(
        &self,
        py: Python<'_>,
        timestamp: i64,
        starting_offset: i64,
    ) -> NativeResult<Option<(i64, i64, i32)>> {
        let found = py.detach(|| {
            self.inner
                .find_offset_by_timestamp(timestamp, starting_offset)
        })?;
        Ok(found.map(|t| (t.timestamp, t.offset, t.leader_epoch)))
    }

    /// All offset-index entries as ``(absolute offset, position)``.
    fn offset_index(&self) -> NativeResult<Vec<(i64, u32)>> {
        Ok(self.inner.offset_index_entries()?)
    }

    /// All time-index entries as ``(timestamp, absolute offset)``.
    fn time_index(&self) -> NativeResult<Vec<(i64, i64)>> {
        Ok(self.inner.time_index_entries()?)
    }

    /// Rebuild both indexes from the log and truncate at the first invalid byte.
    fn recover(&mut self, py: Python<'_>) -> NativeResult<u64> {
        Ok(py.detach(|| self.inner.recover())?)
    }

    /// ``CorruptIndexError`` (naming the file) if an index fails its checks.
    fn sanity_check(&self, py: Python<'_>) -> NativeResult<()> {
        Ok(py.detach(|| self.inner.sanity_check())?)
    }

    /// Remove every batch from the one containing ``offset`` onward; returns bytes removed.
    fn truncate_to(&mut self, py: Python<'_>, offset: i64) -> NativeResult<u64> {
        Ok(py.detach(|| self.inner.truncate_to(offset))?)
    }

    /// Kafka's ``resizeIndexes``: both index files to ``max_index_size`` (default: the
    /// segment's) rounded down to the entry size, never below their entries.
    #[pyo3(signature = (max_index_size = None))]
    fn resize_indexes(&mut self, py: Python<'_>, max_index_size: Option<i64>) -> NativeResult<()> {
        Ok(py.detach(|| self.inner.resize_indexes(max_index_size))?)
    }

    /// Log roll: add the final time-index entry and trim both index files.
    fn seal(&mut self, py: Python<'_>) -> NativeResult<()> {
        Ok(py.detach(|| self.inner.seal())?)
    }

    /// fsync the ``.log`` and both indexes.
    fn flush(&self, py: Python<'_>) -> NativeResult<()> {
        Ok(py.detach(|| self.inner.flush())?)
    }

    /// ``seal()``, flush and close every file. Idempotent.
    fn close(&mut self, py: Python<'_>) -> NativeResult<()> {
        Ok(py.detach(|| self.inner.close())?)
    }

    /// Close and remove the three files.
    fn delete(&mut self, py: Python<'_>) -> NativeResult<()> {
        Ok(py.detach(|| self.inner.delete())?)
    }

    fn __repr__(&self) -> String {
        format!(
            "Segment(log_path={:?}, size={}, next_offset={}, closed={})",
            self.inner.log_path().display().to_string(),
            self.inner.size(),
            self.inner.next_offset(),
            self.inner.closed()
        )
    }
}

/// The type aliases `_native.pyi` declares, so the module matches its stub at runtime.
const TYPE_ALIASES: [(&str, &std::ffi::CStr); 6] = [
    ("Headers", c"list[tuple[str, bytes | None]]"),
    (
        "RecordTuple",
        c"tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]",
    ),
    (
        "BatchHeaderTuple",
        c"tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]",
    ),
    ("LegacyHeaderTuple", c"tuple[int, int, int, int, int, int]"),
    ("AppendResult", c"tuple[int, int, int, int, int]"),
    (
        "LeasedAppendResult",
        c"tuple[int, int, int, int, int, int, int, int, int, int, int, int]",
    ),
];

// `gil_used = false` (PyO3's default since 0.28, stated here because it is a claim about
// this crate): the module is safe on a free-threaded interpreter. It has no static or
// thread-local state, and nothing Python-owned crosses a `py.detach`: the detached closures
// see Rust values (copies, such as the records `to_records` builds), slices of immutable
// `bytes` (PyO3 extracts `&[u8]` only from `bytes`, and the caller's reference keeps the
// object alive), or the buffer of a `bytes` object created by the call and not yet
// visible to any other thread (`read_bytes`, `decode_columns`). `Segment` and `KeyMap`
// are guarded by PyO3's per-object borrow flag, which is atomic in free-threaded builds: a
// call racing a mutating one raises `RuntimeError` ("already borrowed") instead of racing.
#[pymodule(gil_used = false)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(crc32c, m)?)?;
    m.add_function(wrap_pyfunction!(crc32, m)?)?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(decompress, m)?)?;
    m.add_function(wrap_pyfunction!(build_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch_header, m)?)?;
    m.add_function(wrap_pyfunction!(validate_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch_records, m)?)?;
    m.add_function(wrap_pyfunction!(legacy_header, m)?)?;
    m.add_function(wrap_pyfunction!(legacy_records, m)?)?;
    m.add_function(wrap_pyfunction!(build_legacy, m)?)?;
    m.add_class::<PySegment>()?;
    cleaner::register(m)?;
    columns::register(m)?;
    produce::register(m)?;
    let py = m.py();
    for (name, expr) in TYPE_ALIASES {
        m.add(name, py.eval(expr, None, None)?)?;
    }
    // `add` keeps an `__all__` the stub does not declare; the facade modules own `__all__`.
    m.as_any().delattr("__all__")?;
    Ok(())
}
