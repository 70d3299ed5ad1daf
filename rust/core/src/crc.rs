//! CRC-32C (Castagnoli; RecordBatch v2) and CRC-32 (IEEE; legacy messages),
//! both hardware-accelerated by their crates.

/// CRC-32C of `data` (what RecordBatch v2 stores at byte 17).
pub fn crc32c(data: &[u8]) -> u32 {
    todo!("R1")
}

/// CRC-32 (IEEE) of `data` (what legacy v0/v1 messages store).
pub fn crc32(data: &[u8]) -> u32 {
    todo!("R1")
}
