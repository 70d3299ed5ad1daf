//! Zigzag varint (i32) / varlong (i64) as Kafka's `ByteUtils`, plus unsigned varints.
//! Readers return `None` on truncation or on an over-long encoding (> 5 bytes for
//! varint, > 10 for varlong), never panic.
//!
//! Readers take a slice starting at the varint and return `(value, bytes_read)`.
//! As in Kafka, the payload bits of the last allowed byte that do not fit the type
//! (the high bits of a 5th varint byte, of a 10th varlong byte) are ignored.

/// Longest encoding of a 32-bit varint.
pub const MAX_VARINT_LEN: usize = 5;
/// Longest encoding of a 64-bit varlong.
pub const MAX_VARLONG_LEN: usize = 10;

#[inline]
pub fn zigzag_encode_i32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

#[inline]
pub fn zigzag_decode_i32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

#[inline]
pub fn zigzag_encode_i64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub fn zigzag_decode_i64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Read an unsigned varint (at most 5 bytes).
#[inline]
pub fn read_unsigned_varint(buf: &[u8]) -> Option<(u32, usize)> {
    // Fast path: one byte.
    let first = *buf.first()?;
    if first < 0x80 {
        return Some((first as u32, 1));
    }
    let mut value = (first & 0x7f) as u32;
    let mut shift = 7u32;
    for i in 1..MAX_VARINT_LEN {
        let b = *buf.get(i)?;
        if b < 0x80 {
            // shift <= 28; bits shifted past 32 are dropped, as Kafka does.
            return Some((value | ((b as u32) << shift), i + 1));
        }
        value |= ((b & 0x7f) as u32) << shift;
        shift += 7;
    }
    None
}

/// Read an unsigned varlong (at most 10 bytes).
#[inline]
pub fn read_unsigned_varlong(buf: &[u8]) -> Option<(u64, usize)> {
    let first = *buf.first()?;
    if first < 0x80 {
        return Some((first as u64, 1));
    }
    let mut value = (first & 0x7f) as u64;
    let mut shift = 7u32;
    for i in 1..MAX_VARLONG_LEN {
        let b = *buf.get(i)?;
        if b < 0x80 {
            return Some((value | ((b as u64) << shift), i + 1));
        }
        value |= ((b & 0x7f) as u64) << shift;
        shift += 7;
    }
    None
}

/// Read a zigzag varint (Kafka `readVarint`).
#[inline]
pub fn read_varint(buf: &[u8]) -> Option<(i32, usize)> {
    read_unsigned_varint(buf).map(|(v, n)| (zigzag_decode_i32(v), n))
}

/// Read a zigzag varlong (Kafka `readVarlong`).
#[inline]
pub fn read_varlong(buf: &[u8]) -> Option<(i64, usize)> {
    read_unsigned_varlong(buf).map(|(v, n)| (zigzag_decode_i64(v), n))
}

#[inline]
pub fn write_unsigned_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
pub fn write_unsigned_varlong(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
pub fn write_varint(out: &mut Vec<u8>, v: i32) {
    write_unsigned_varint(out, zigzag_encode_i32(v));
}

#[inline]
pub fn write_varlong(out: &mut Vec<u8>, v: i64) {
    write_unsigned_varlong(out, zigzag_encode_i64(v));
}

#[inline]
pub fn size_of_unsigned_varint(v: u32) -> usize {
    // 1 + floor((bits - 1) / 7), with 0 taking one byte.
    let bits = 32 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

#[inline]
pub fn size_of_unsigned_varlong(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

#[inline]
pub fn size_of_varint(v: i32) -> usize {
    size_of_unsigned_varint(zigzag_encode_i32(v))
}

#[inline]
pub fn size_of_varlong(v: i64) -> usize {
    size_of_unsigned_varlong(zigzag_encode_i64(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc32(v: i32) -> Vec<u8> {
        let mut out = Vec::new();
        write_varint(&mut out, v);
        out
    }

    fn enc64(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        write_varlong(&mut out, v);
        out
    }

    #[test]
    fn known_encodings() {
        // Values from Kafka's ByteUtilsTest.
        assert_eq!(enc32(0), [0x00]);
        assert_eq!(enc32(-1), [0x01]);
        assert_eq!(enc32(1), [0x02]);
        assert_eq!(enc32(63), [0x7e]);
        assert_eq!(enc32(-64), [0x7f]);
        assert_eq!(enc32(64), [0x80, 0x01]);
        assert_eq!(enc32(-65), [0x81, 0x01]);
        assert_eq!(enc32(8191), [0xfe, 0x7f]);
        assert_eq!(enc32(-8192), [0xff, 0x7f]);
        assert_eq!(enc32(8192), [0x80, 0x80, 0x01]);
        assert_eq!(enc32(i32::MAX), [0xfe, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(enc32(i32::MIN), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(
            enc64(i64::MAX),
            [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        assert_eq!(
            enc64(i64::MIN),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        assert_eq!(enc64(-1), [0x01]);
    }

    #[test]
    fn round_trip_and_sizes() {
        let vals32 = [
            0,
            1,
            -1,
            63,
            64,
            -64,
            -65,
            127,
            128,
            8191,
            8192,
            -8193,
            1 << 20,
            -(1 << 20),
            1 << 27,
            (1 << 28) - 1,
            1 << 28,
            i32::MAX,
            i32::MIN,
            i32::MAX - 1,
            i32::MIN + 1,
        ];
        for v in vals32 {
            let e = enc32(v);
            assert_eq!(e.len(), size_of_varint(v), "{v}");
            assert_eq!(read_varint(&e), Some((v, e.len())), "{v}");
            // Trailing bytes are not consumed.
            let mut more = e.clone();
            more.extend_from_slice(&[0xff, 0x00]);
            assert_eq!(read_varint(&more), Some((v, e.len())));
            // Any truncation fails.
            for cut in 0..e.len() {
                assert_eq!(read_varint(&e[..cut]), None);
            }
        }
        let vals64 = [
            0i64,
            1,
            -1,
            300,
            -300,
            1 << 35,
            -(1 << 35),
            1 << 62,
            i64::MAX,
            i64::MIN,
            i64::MAX - 1,
            i64::MIN + 1,
            i32::MAX as i64 + 1,
            i32::MIN as i64 - 1,
        ];
        for v in vals64 {
            let e = enc64(v);
            assert_eq!(e.len(), size_of_varlong(v), "{v}");
            assert_eq!(read_varlong(&e), Some((v, e.len())), "{v}");
            for cut in 0..e.len() {
                assert_eq!(read_varlong(&e[..cut]), None);
            }
        }
        assert_eq!(size_of_unsigned_varint(0), 1);
        assert_eq!(size_of_unsigned_varint(127), 1);
        assert_eq!(size_of_unsigned_varint(128), 2);
        assert_eq!(size_of_unsigned_varint(u32::MAX), 5);
        assert_eq!(size_of_unsigned_varlong(u64::MAX), 10);
        assert_eq!(size_of_unsigned_varlong(1 << 63), 10);
        assert_eq!(size_of_unsigned_varlong((1 << 63) - 1), 9);
    }

    #[test]
    fn unsigned_round_trip() {
        for v in [0u32, 1, 127, 128, 16383, 16384, u32::MAX] {
            let mut out = Vec::new();
            write_unsigned_varint(&mut out, v);
            assert_eq!(out.len(), size_of_unsigned_varint(v));
            assert_eq!(read_unsigned_varint(&out), Some((v, out.len())));
        }
        for v in [0u64, 1, 127, 128, u32::MAX as u64 + 1, u64::MAX] {
            let mut out = Vec::new();
            write_unsigned_varlong(&mut out, v);
            assert_eq!(out.len(), size_of_unsigned_varlong(v));
            assert_eq!(read_unsigned_varlong(&out), Some((v, out.len())));
        }
    }

    #[test]
    fn overlong_is_rejected() {
        // 6 bytes for a varint.
        assert_eq!(read_varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), None);
        assert_eq!(read_unsigned_varint(&[0xff; 6]), None);
        // 11 bytes for a varlong.
        let mut v = vec![0x80u8; 10];
        v.push(0x00);
        assert_eq!(read_varlong(&v), None);
        // A 5-byte varint with a padded zero last byte is accepted (Kafka does too).
        assert_eq!(read_varint(&[0x80, 0x80, 0x80, 0x80, 0x00]), Some((0, 5)));
        // High bits of the 5th byte are dropped, as in Kafka.
        assert_eq!(
            read_unsigned_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f]),
            Some((u32::MAX, 5))
        );
        assert_eq!(
            read_unsigned_varlong(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
            Some((u64::MAX, 10))
        );
    }

    #[test]
    fn empty_input() {
        assert_eq!(read_varint(&[]), None);
        assert_eq!(read_varlong(&[]), None);
    }
}
