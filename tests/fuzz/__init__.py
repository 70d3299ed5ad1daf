"""Fuzzing (issue 14): the protocol codec and the record parsers on mutated real bytes.

* :mod:`fuzz.frames` - real request/response frames of every API and version, and the
  mutations applied to them;
* ``test_*.py`` - bounded Hypothesis runs in ``make test``;
* :mod:`fuzz.atheris_protocol` - the coverage-guided codec fuzzer of ``make fuzz``;
* :mod:`fuzz.seeds` - seed corpora of the cargo-fuzz targets in ``rust/fuzz``.
"""
