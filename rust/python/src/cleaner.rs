//! Glue for the compaction cleaner (`kafkacore_core::cleaner`): the `KeyMap` class and
//! `filter_batches`. The rules live in the core crate and in `_native.pyi`.
//!
//! GIL: `add_batches` and `filter_batches` run detached; their buffers are borrowed from
//! immutable `bytes`, the map is borrowed from its Python object (a concurrent call on the
//! same `KeyMap` from another thread raises `RuntimeError` instead of racing).

use std::collections::HashMap;

use kafkacore_core::cleaner::{self, FilterOptions, KeyMap};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::NativeResult;

const CONTEXT: &str = "buffer";

/// Kafka's ``SkimpyOffsetMap``: MD5 digest of each key -> latest offset.
#[pyclass(name = "KeyMap", module = "kafkacore._native")]
struct PyKeyMap {
    inner: KeyMap,
}

#[pymethods]
impl PyKeyMap {
    #[new]
    #[pyo3(signature = (capacity))]
    fn new(capacity: i64) -> NativeResult<Self> {
        Ok(PyKeyMap {
            inner: KeyMap::new(capacity)?,
        })
    }

    /// The work is done by `__new__`; this `__init__` only exists so that
    /// `KeyMap.__init__` reports the class signature (what the stub and `stubtest` see).
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __init__(&self, _args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) {}

    /// The most keys the map holds.
    #[getter]
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }

    /// The last offset the map covers (-1 when nothing was added).
    #[getter]
    fn latest_offset(&self) -> i64 {
        self.inner.latest_offset()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Map ``key`` to ``offset``; ``latest_offset`` becomes ``offset``.
    fn put(&mut self, key: &[u8], offset: i64) -> NativeResult<()> {
        Ok(self.inner.put(key, offset)?)
    }

    /// The offset mapped to ``key``, -1 if none.
    fn get(&self, key: &[u8]) -> i64 {
        self.inner.get(key)
    }

    /// Set ``latest_offset``.
    fn update_latest_offset(&mut self, offset: i64) {
        self.inner.update_latest_offset(offset);
    }

    /// Forget every key; ``latest_offset`` back to -1.
    fn clear(&mut self) {
        self.inner.clear();
    }

    /// Put the keys of the batches in ``buf``; returns ``(bytes consumed, full)``.
    fn add_batches(
        &mut self,
        py: Python<'_>,
        buf: &[u8],
        start_offset: i64,
        end_offset: i64,
    ) -> NativeResult<(usize, bool)> {
        let inner = &mut self.inner;
        let r = py.detach(|| inner.add_batches(buf, start_offset, end_offset, CONTEXT))?;
        Ok((r.consumed, r.full))
    }

    fn __repr__(&self) -> String {
        format!(
            "KeyMap(len={}, capacity={}, latest_offset={})",
            self.inner.len(),
            self.inner.capacity(),
            self.inner.latest_offset()
        )
    }
}

type FilterResult<'py> = (Bound<'py, PyBytes>, usize, u64, u64, u64);

/// Filter the batches of ``buf`` against ``key_map`` (the cleaner's per-batch rules).
#[pyfunction]
#[pyo3(
    signature = (buf, key_map, *, now_ms, delete_retention_ms, round_end_offset = -1, producer_last_offsets = None),
    text_signature = "(buf, key_map, *, now_ms, delete_retention_ms, round_end_offset=-1, producer_last_offsets=None)"
)]
fn filter_batches<'py>(
    py: Python<'py>,
    buf: &[u8],
    key_map: PyRef<'py, PyKeyMap>,
    now_ms: i64,
    delete_retention_ms: i64,
    round_end_offset: i64,
    producer_last_offsets: Option<HashMap<i64, i64>>,
) -> NativeResult<FilterResult<'py>> {
    let opts = FilterOptions {
        now_ms,
        delete_retention_ms,
        round_end_offset,
        producer_last_offsets: producer_last_offsets.unwrap_or_default(),
    };
    let map = &key_map.inner;
    let out = py.detach(|| cleaner::filter_batches(buf, map, &opts, CONTEXT))?;
    Ok((
        PyBytes::new(py, &out.data),
        out.bytes_read,
        out.records_read,
        out.records_retained,
        out.records_invalid,
    ))
}

/// Add the cleaner's names to the module (one call from the `#[pymodule]` function).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKeyMap>()?;
    m.add_function(wrap_pyfunction!(filter_batches, m)?)?;
    // The alias `_native.pyi` declares, so the module matches its stub at runtime.
    let alias = m
        .py()
        .eval(c"tuple[bytes, int, int, int, int]", None, None)?;
    m.add("FilterResult", alias)?;
    Ok(())
}
