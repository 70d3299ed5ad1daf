//! PyO3 glue: exposes kafkacore-core as `kafkacore._native`.
use pyo3::prelude::*;

#[pymodule]
fn _native(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
