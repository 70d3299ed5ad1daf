//! Glue for `kafkacore_core::columns` (`decode_columns`) and
//! `kafkacore_core::partitioner` (`murmur2`). The rules live in the core crate and in
//! `_native.pyi`; `kafkacore.arrow` wraps the returned buffers into Arrow arrays.
//!
//! GIL: both decoding passes run detached; `data` is borrowed from an immutable `bytes`.
//! The returned `bytes` objects are allocated once, at their exact sizes, between the
//! passes and filled in place by the second one (orjson's one-allocation output).

use kafkacore_core::columns::{self, BinaryBuffers, BinarySizes, ColumnBuffers, HeadersBuffers};
use kafkacore_core::partitioner;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::NativeResult;

const CONTEXT: &str = "buffer";

type PyBinaryColumn<'py> = (
    Option<Bound<'py, PyBytes>>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);
type PyHeadersColumn<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Option<Bound<'py, PyBytes>>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);
type PyColumns<'py> = (
    usize,
    i64,
    PyBinaryColumn<'py>,
    PyBinaryColumn<'py>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Option<PyHeadersColumn<'py>>,
);

/// A new zero-filled `bytes` of `len` bytes and its buffer, to be filled in place.
fn new_bytes<'py>(py: Python<'py>, len: usize) -> PyResult<(Bound<'py, PyBytes>, &'py mut [u8])> {
    let bytes = PyBytes::new_with(py, len, |_| Ok(()))?;
    // SAFETY: `bytes` was just created, holds `len` initialised (zeroed) bytes and no
    // other code can see it yet: nothing reads or hashes it until `decode_columns`
    // returns it, after the buffer was filled. The object is kept alive (owned by the
    // returned tuple) for as long as the slice is used.
    let buffer = unsafe {
        let ptr = ffi::PyBytes_AsString(bytes.as_ptr()).cast::<u8>();
        std::slice::from_raw_parts_mut(ptr, len)
    };
    Ok((bytes, buffer))
}

fn binary<'py>(
    py: Python<'py>,
    sizes: &BinarySizes,
) -> PyResult<(PyBinaryColumn<'py>, BinaryBuffers<'py>)> {
    let validity = sizes.validity.map(|n| new_bytes(py, n)).transpose()?;
    let (offsets, offsets_buf) = new_bytes(py, sizes.offsets)?;
    let (data, data_buf) = new_bytes(py, sizes.data)?;
    let (validity, validity_buf) = match validity {
        Some((b, buf)) => (Some(b), Some(buf)),
        None => (None, None),
    };
    Ok((
        (validity, offsets, data),
        BinaryBuffers {
            validity: validity_buf,
            offsets: offsets_buf,
            data: data_buf,
        },
    ))
}

/// The records of the batches in ``data`` with ``start_offset <= offset < end_offset``
/// as Arrow column buffers.
#[pyfunction]
#[pyo3(signature = (data, start_offset, end_offset, include_headers, /))]
fn decode_columns<'py>(
    py: Python<'py>,
    data: &[u8],
    start_offset: i64,
    end_offset: i64,
    include_headers: bool,
) -> NativeResult<PyColumns<'py>> {
    // Pass 1 validates and sizes every buffer; pass 2 writes into `bytes` objects
    // allocated once at those sizes (no intermediate buffer, no copy).
    let layout =
        py.detach(|| columns::measure(data, start_offset, end_offset, include_headers, CONTEXT))?;
    let (keys, keys_buf) = binary(py, &layout.keys)?;
    let (values, values_buf) = binary(py, &layout.values)?;
    let (offsets, offsets_buf) = new_bytes(py, layout.offsets)?;
    let (timestamps, timestamps_buf) = new_bytes(py, layout.timestamps)?;
    let (timestamp_types, timestamp_types_buf) = new_bytes(py, layout.timestamp_types)?;
    let (headers, headers_buf) = match &layout.headers {
        Some(h) => {
            let (list_offsets, list_offsets_buf) = new_bytes(py, h.list_offsets)?;
            let ((_, key_offsets, key_data), keys_buf) = binary(py, &h.keys)?;
            let ((value_validity, value_offsets, value_data), values_buf) = binary(py, &h.values)?;
            (
                Some((
                    list_offsets,
                    key_offsets,
                    key_data,
                    value_validity,
                    value_offsets,
                    value_data,
                )),
                Some(HeadersBuffers {
                    list_offsets: list_offsets_buf,
                    keys: keys_buf,
                    values: values_buf,
                }),
            )
        }
        None => (None, None),
    };
    let out = ColumnBuffers {
        keys: keys_buf,
        values: values_buf,
        offsets: offsets_buf,
        timestamps: timestamps_buf,
        timestamp_types: timestamp_types_buf,
        headers: headers_buf,
    };
    py.detach(|| columns::fill(data, start_offset, end_offset, CONTEXT, out))?;
    Ok((
        layout.count,
        layout.next_offset,
        keys,
        values,
        offsets,
        timestamps,
        timestamp_types,
        headers,
    ))
}

/// Kafka's ``Utils.murmur2`` of ``data``, as a signed 32-bit int.
#[pyfunction]
#[pyo3(signature = (data, /))]
fn murmur2(data: &[u8]) -> i32 {
    partitioner::murmur2(data)
}

/// The type aliases `_native.pyi` declares for these functions.
const TYPE_ALIASES: [(&str, &std::ffi::CStr); 3] = [
    ("BinaryColumn", c"tuple[bytes | None, bytes, bytes]"),
    (
        "HeadersColumn",
        c"tuple[bytes, bytes, bytes, bytes | None, bytes, bytes]",
    ),
    (
        "ColumnsTuple",
        c"tuple[int, int, tuple[bytes | None, bytes, bytes], tuple[bytes | None, bytes, bytes], \
          bytes, bytes, bytes, tuple[bytes, bytes, bytes, bytes | None, bytes, bytes] | None]",
    ),
];

/// Add the names to the module (one call from the `#[pymodule]` function).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode_columns, m)?)?;
    m.add_function(wrap_pyfunction!(murmur2, m)?)?;
    let py = m.py();
    for (name, expr) in TYPE_ALIASES {
        m.add(name, py.eval(expr, None, None)?)?;
    }
    Ok(())
}
