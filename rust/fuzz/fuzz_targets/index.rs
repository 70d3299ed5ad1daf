//! `.index` and `.timeindex` files holding arbitrary bytes: open (misaligned lengths,
//! garbage entries), lookups, entries, sanity checks; then an append and a truncate.
#![no_main]

use kafkacore_core::index::{OffsetIndex, TimeIndex};
use kafkacore_fuzz::{expected_error, scratch_dir, Params};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let base = p.small_i64();
    let targets = [p.small_i64(), p.i64(), p.small_i64()];
    let log_size = p.small_i64() as u64;
    let max_size = 64 + p.u8() as usize * 4;
    let bytes = p.rest();
    let dir = scratch_dir();

    let path = dir.join("0.index");
    std::fs::write(&path, bytes).unwrap();
    match OffsetIndex::open(&path, base, max_size) {
        Ok(mut idx) => {
            for t in targets {
                let (off, _pos) = idx.lookup(t);
                // The answer is an entry (or the base offset when none is below).
                assert!(off == base || idx.to_vec().iter().any(|e| e.0 == off));
            }
            let n = idx.to_vec().len();
            let _ = idx.entry(n);
            let _ = idx.last_entry();
            let _ = idx.is_full();
            if let Err(e) = idx.sanity_check(log_size) {
                expected_error(&e, true);
            }
            if let Err(e) = idx.check_length() {
                expected_error(&e, true);
            }
            if let Err(e) = idx.append(targets[0], log_size) {
                expected_error(&e, true);
            }
            idx.truncate_to(targets[2]);
            assert!(idx.to_vec().len() <= n);
        }
        Err(e) => expected_error(&e, true),
    }

    let path = dir.join("0.timeindex");
    std::fs::write(&path, bytes).unwrap();
    match TimeIndex::open(&path, base, max_size) {
        Ok(mut idx) => {
            for t in targets {
                let _ = idx.lookup(t);
                let _ = idx.would_append(t);
            }
            let n = idx.to_vec().len();
            let _ = idx.entry(n);
            let _ = idx.last_entry();
            let _ = idx.last_timestamp();
            if let Err(e) = idx.sanity_check() {
                expected_error(&e, true);
            }
            if let Err(e) = idx.check_length() {
                expected_error(&e, true);
            }
            idx.truncate_to(targets[2]);
        }
        Err(e) => expected_error(&e, true),
    }
});
