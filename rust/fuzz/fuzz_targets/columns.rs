//! The Arrow column decoder (measure, then fill) on arbitrary bytes, with arbitrary
//! offset bounds and with and without the headers column.
#![no_main]

use kafkacore_core::columns;
use kafkacore_fuzz::{expected_error, Params};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let flags = p.u8();
    let start = p.small_i64();
    let end = if flags & 2 != 0 {
        i64::MAX
    } else {
        p.small_i64()
    };
    let data = p.rest();
    match columns::decode_columns(data, start, end, flags & 1 != 0, "fuzz") {
        Ok(c) => {
            assert_eq!(c.offsets.len(), c.count * 8);
            assert_eq!(c.timestamps.len(), c.count * 8);
            for col in [&c.keys, &c.values] {
                assert_eq!(col.offsets.len(), (c.count + 1) * 4);
                let last = &col.offsets[col.offsets.len() - 4..];
                assert_eq!(
                    i32::from_le_bytes(last.try_into().unwrap()) as usize,
                    col.data.len()
                );
            }
            // Every row's offset is in the range asked for.
            for b in c.offsets.chunks_exact(8) {
                let o = i64::from_le_bytes(b.try_into().unwrap());
                assert!(o >= start && o < end, "offset {o} outside [{start}, {end})");
            }
        }
        Err(e) => expected_error(&e, false),
    }
});
