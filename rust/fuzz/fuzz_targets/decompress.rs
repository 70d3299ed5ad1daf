//! The four codecs on arbitrary bytes (first byte: codec and, for legacy, magic).
//! Output must stay within MAX_DECOMPRESSED_SIZE and never be preallocated from a
//! length the input declares but cannot back: libFuzzer's -malloc_limit_mb (set by
//! `make fuzz`) turns any single allocation beyond it into a finding.
#![no_main]

use kafkacore_core::compression::{self, Codec, MAX_DECOMPRESSED_SIZE};
use kafkacore_fuzz::{expected_error, Params};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let sel = p.u8();
    let rest = p.rest();
    let codec = match Codec::from_id((sel % 5) as i32) {
        Ok(c) => c,
        Err(_) => unreachable!(),
    };
    let out = if sel & 0x80 != 0 {
        compression::decompress_legacy(codec, rest, ((sel >> 3) & 1) as i8)
    } else {
        compression::decompress(codec, rest)
    };
    match out {
        Ok(bytes) => {
            assert!(bytes.len() <= MAX_DECOMPRESSED_SIZE);
            // Whatever decodes re-encodes and decodes back to itself.
            if sel & 0x40 != 0 && bytes.len() <= 1 << 20 {
                let again = compression::compress(codec, &bytes).expect("compress");
                assert_eq!(
                    compression::decompress(codec, &again).expect("round trip"),
                    bytes
                );
            }
        }
        Err(e) => expected_error(&e, false),
    }
});
