//! Zigzag varint (i32) / varlong (i64) as Kafka's `ByteUtils`, plus unsigned varints.
//! Readers return `None` on truncation or on an over-long encoding (> 5 bytes for
//! varint, > 10 for varlong), never panic.
