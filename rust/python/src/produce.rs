//! Glue for the native produce path (`kafkacore_core::produce`): the `ProduceLease` class
//! and `produce_append`. The rules live in the core crate and in `_native.pyi`.
//!
//! GIL: `produce_append` borrows every segment and lease of the call mutably, then runs
//! all the appends in one detached closure; the records are borrowed from `bytes` (a
//! `bytearray` is copied first). The caller holds each partition's log lock, so no other
//! thread uses those objects; one that did would get `RuntimeError` ("already borrowed").

use std::collections::HashMap;

use kafkacore_core::produce::{self, Lease, LeasedAppend, ProducerSequence};
use kafkacore_core::segment::Segment;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyDict, PyTuple};

use crate::PySegment;

/// One leased append's result: see ``LeasedAppendResult`` in the stub.
type Outcome = (i64, i64, i64, i64, u64, i64, i64, i64, i16, i32, i32, i16);

fn outcome(a: &LeasedAppend) -> Outcome {
    (
        a.first_offset,
        a.last_offset,
        a.max_timestamp,
        a.offset_of_max_timestamp,
        a.bytes_written,
        a.log_append_time,
        a.batch_max_timestamp,
        a.producer_id,
        a.producer_epoch,
        a.last_sequence,
        a.records_count,
        a.codec,
    )
}

/// Python's decisions for one partition's produce path (see ``_native.pyi``).
#[pyclass(name = "ProduceLease", module = "kafkacore._native")]
struct PyProduceLease {
    inner: Lease,
}

#[pymethods]
impl PyProduceLease {
    #[new]
    #[pyo3(signature = (
        *, leader_epoch, max_message_bytes, segment_bytes, log_append_time,
        timestamp_before_max_ms, timestamp_after_max_ms, roll_after_ms, segment_created_ms,
        max_last_offset, producers
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        leader_epoch: i32,
        max_message_bytes: i64,
        segment_bytes: i64,
        log_append_time: bool,
        timestamp_before_max_ms: i64,
        timestamp_after_max_ms: i64,
        roll_after_ms: i64,
        segment_created_ms: i64,
        max_last_offset: i64,
        producers: HashMap<i64, (i16, i32, bool)>,
    ) -> Self {
        let producers = producers
            .into_iter()
            .map(|(id, (epoch, last_sequence, in_transaction))| {
                let known = ProducerSequence {
                    epoch,
                    last_sequence,
                    in_transaction,
                };
                (id, known)
            })
            .collect();
        PyProduceLease {
            inner: Lease {
                leader_epoch,
                max_message_bytes,
                segment_bytes,
                log_append_time,
                timestamp_before_max_ms,
                timestamp_after_max_ms,
                roll_after_ms,
                segment_created_ms,
                max_last_offset,
                producers,
            },
        }
    }

    /// The work is done by `__new__`; this `__init__` only exists so that
    /// `ProduceLease.__init__` reports the class signature (what `stubtest` sees).
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __init__(&self, _args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) {}

    #[getter]
    fn leader_epoch(&self) -> i32 {
        self.inner.leader_epoch
    }

    /// ``(epoch, last sequence, in transaction)`` of a producer the lease knows.
    fn producer(&self, producer_id: i64) -> Option<(i16, i32, bool)> {
        self.inner
            .producers
            .get(&producer_id)
            .map(|p| (p.epoch, p.last_sequence, p.in_transaction))
    }
}

/// Append each ``(segment, lease, records)`` as its lease allows, in one call without the
/// GIL; ``None`` for each one the Python path must append.
#[pyfunction]
#[pyo3(signature = (appends, now_ms, /))]
fn produce_append(
    py: Python<'_>,
    appends: Vec<(
        Bound<'_, PySegment>,
        Bound<'_, PyProduceLease>,
        PyBackedBytes,
    )>,
    now_ms: i64,
) -> PyResult<Vec<Option<Outcome>>> {
    let mut segments = Vec::with_capacity(appends.len());
    let mut leases = Vec::with_capacity(appends.len());
    for (segment, lease, _) in &appends {
        segments.push(segment.try_borrow_mut()?);
        leases.push(lease.try_borrow_mut()?);
    }
    let mut work: Vec<(&mut Segment, &mut Lease, &[u8])> = segments
        .iter_mut()
        .zip(leases.iter_mut())
        .zip(appends.iter())
        .map(|((segment, lease), (_, _, data))| (&mut segment.inner, &mut lease.inner, &data[..]))
        .collect();
    let outcomes = py.detach(|| {
        work.iter_mut()
            .map(|(segment, lease, data)| {
                produce::append_leased(segment, lease, data, now_ms).map(|a| outcome(&a))
            })
            .collect()
    });
    Ok(outcomes)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyProduceLease>()?;
    m.add_function(wrap_pyfunction!(produce_append, m)?)?;
    Ok(())
}
