//! CRC-32C (Castagnoli; RecordBatch v2) and CRC-32 (IEEE; legacy messages),
//! both hardware-accelerated by their crates.

/// CRC-32C of `data` (what RecordBatch v2 stores at byte 17).
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// CRC-32 (IEEE) of `data` (what legacy v0/v1 messages store).
#[inline]
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn empty_input() {
        assert_eq!(crc32c(b""), 0);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn rfc3720_vectors() {
        // iSCSI (RFC 3720 B.4) test patterns for CRC-32C.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xFFu8; 32]), 0x62A8_AB43);
        let inc: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(&inc), 0x46DD_794E);
        let dec: Vec<u8> = (0u8..32).rev().collect();
        assert_eq!(crc32c(&dec), 0x113F_DB5C);
    }

    #[test]
    fn large_unaligned_input_matches_bytewise() {
        // Compare the accelerated path against a bitwise reference on odd offsets/lengths.
        fn reference(data: &[u8]) -> u32 {
            let mut crc = !0u32;
            for &b in data {
                crc ^= b as u32;
                for _ in 0..8 {
                    crc = if crc & 1 != 0 {
                        (crc >> 1) ^ 0x82F6_3B78
                    } else {
                        crc >> 1
                    };
                }
            }
            !crc
        }
        let data: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for (start, end) in [(0, 5000), (1, 4999), (3, 1027), (7, 8)] {
            assert_eq!(crc32c(&data[start..end]), reference(&data[start..end]));
        }
    }
}
