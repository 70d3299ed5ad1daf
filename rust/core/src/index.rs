//! `.index` and `.timeindex` (owned by the segment/index work).
