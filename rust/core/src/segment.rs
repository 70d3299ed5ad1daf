//! One log segment (owned by the segment/index work).
