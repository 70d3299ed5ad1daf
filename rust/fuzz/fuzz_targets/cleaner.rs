//! The cleaner on arbitrary segment bytes: the key -> offset map built from them
//! (`add_batches`), then the filter; what the filter keeps must be valid batches.
#![no_main]

use std::collections::HashMap;

use kafkacore_core::cleaner::{filter_batches, FilterOptions, KeyMap};
use kafkacore_core::{batch, shallow};
use kafkacore_fuzz::{expected_error, Params};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let capacity = 1 + (p.u8() % 16) as i64;
    let start = p.small_i64();
    let end = p.small_i64().max(start);
    let now_ms = p.small_i64().max(0) * 1000;
    let retention = p.small_i64().max(0);
    let round_end = p.small_i64();
    let pid = p.small_i64();
    let pid_last = p.small_i64();
    let buf = p.rest();
    let ctx = "fuzz";

    let mut map = KeyMap::new(capacity).expect("capacity > 0");
    match map.add_batches(buf, start, end, ctx) {
        Ok(r) => {
            assert!(r.consumed <= buf.len());
            assert!(map.len() <= capacity as usize);
        }
        Err(e) => expected_error(&e, false),
    }
    let opts = FilterOptions {
        now_ms,
        delete_retention_ms: retention,
        round_end_offset: round_end,
        producer_last_offsets: HashMap::from([(pid, pid_last)]),
    };
    match filter_batches(buf, &map, &opts, ctx) {
        Ok(out) => {
            assert!(out.bytes_read <= buf.len());
            assert!(out.records_retained <= out.records_read);
            let mut pos = 0;
            while pos < out.data.len() {
                let b = shallow::next_batch(&out.data, pos, ctx)
                    .expect("the filter wrote a bad batch")
                    .expect("the filter wrote a partial batch");
                if b.magic == 2 {
                    batch::validate(&out.data, pos, ctx)
                        .expect("the filter wrote an invalid batch");
                }
                pos = b.end();
            }
        }
        Err(e) => expected_error(&e, false),
    }
});
