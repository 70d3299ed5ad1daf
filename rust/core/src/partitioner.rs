//! Kafka's default partitioner for keyed records: `Utils.murmur2` (MurmurHash2, 32-bit,
//! seed `0x9747b28c`, little-endian 4-byte blocks) and
//! `partition = (murmur2(key) & 0x7fffffff) % num_partitions`
//! (`BuiltInPartitioner.partitionForKey`). Arithmetic wraps as Java's `int` does.

const SEED: u32 = 0x9747_b28c;
const M: u32 = 0x5bd1_e995;
const R: u32 = 24;

/// `org.apache.kafka.common.utils.Utils.murmur2`, as the signed 32-bit Java int.
pub fn murmur2(data: &[u8]) -> i32 {
    // Java takes the length as an int: keys are far below 2 GiB, truncation as Java would.
    let mut h: u32 = SEED ^ (data.len() as u32);
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        // Java's switch falls through: 3 -> 2 -> 1.
        if let Some(&b) = tail.get(2) {
            h ^= u32::from(b) << 16;
        }
        if let Some(&b) = tail.get(1) {
            h ^= u32::from(b) << 8;
        }
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// `Utils.toPositive`: the sign bit cleared (not the absolute value).
pub fn to_positive(n: i32) -> i32 {
    n & 0x7fff_ffff
}

/// `BuiltInPartitioner.partitionForKey`; `None` when `num_partitions` < 1.
pub fn partition_for_key(key: &[u8], num_partitions: i32) -> Option<i32> {
    (num_partitions > 0).then(|| to_positive(murmur2(key)) % num_partitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // Kafka's UtilsTest vectors (the interop test checks many more against the jar).
        let cases: [(&[u8], i32); 6] = [
            (b"21", -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            (b"abc", 479_470_107),
        ];
        for (key, expected) in cases {
            assert_eq!(murmur2(key), expected, "{:?}", String::from_utf8_lossy(key));
        }
        assert_eq!(to_positive(i32::MIN), 0);
        assert_eq!(to_positive(-1), i32::MAX);
        assert_eq!(partition_for_key(b"x", 0), None);
        for len in 0..16 {
            let key: Vec<u8> = (0..len).map(|i| (i * 37 + 200) as u8).collect();
            let p = partition_for_key(&key, 7).unwrap();
            assert!((0..7).contains(&p));
        }
    }
}
