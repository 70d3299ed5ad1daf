//! A segment directory holding arbitrary `.log`, `.index` and `.timeindex` bytes (what a
//! crash or a bad disk leaves): open, the lookups a fetch and ListOffsets make, the
//! sanity check; then recovery, after which the segment must pass its sanity check and
//! a second recovery must truncate nothing.
#![no_main]

use kafkacore_core::segment::{file_name, Segment, SegmentConfig};
use kafkacore_fuzz::{expected_error, scratch_dir, Params};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let base = (p.u8() as i64) * 3;
    let index_len = p.u8() as usize;
    let time_len = p.u8() as usize;
    let interval = [0i64, 1, 40, 4096][(p.u8() % 4) as usize];
    let targets = [p.small_i64(), p.small_i64(), p.i64()];
    let rest = p.rest();
    let index_len = index_len.min(rest.len());
    let (index, rest) = rest.split_at(index_len);
    let time_len = time_len.min(rest.len());
    let (time, log) = rest.split_at(time_len);

    let dir = scratch_dir();
    std::fs::write(dir.join(file_name(base, ".log")), log).unwrap();
    std::fs::write(dir.join(file_name(base, ".index")), index).unwrap();
    std::fs::write(dir.join(file_name(base, ".timeindex")), time).unwrap();
    let config = SegmentConfig {
        index_interval_bytes: interval,
        max_index_size: 1024,
    };
    let mut seg = match Segment::open(dir, base, config) {
        Ok(s) => s,
        Err(e) => return expected_error(&e, true),
    };
    for t in targets {
        if let Err(e) = seg.translate_offset(t, 0) {
            expected_error(&e, true);
        }
        if let Err(e) = seg.find_offset_by_timestamp(t, base) {
            expected_error(&e, true);
        }
        if let Err(e) = seg.read(t, 1000, -1, true) {
            expected_error(&e, true);
        }
    }
    if let Err(e) = seg.sanity_check() {
        expected_error(&e, true);
    }
    match seg.recover() {
        Ok(_) => {
            if let Err(e) = seg.sanity_check() {
                panic!("a recovered segment fails its sanity check: {e}");
            }
            // Recovery keeps every batch that passes Kafka's `ensureValid` (sizes and
            // CRC, as `LogSegment.recover`): a second recovery truncates nothing.
            match seg.recover() {
                Ok(0) => {}
                Ok(n) => panic!("a second recovery truncated {n} more bytes"),
                Err(e) => panic!("a recovered segment fails recovery again: {e}"),
            }
            // Records behind a matching CRC may still not decode (Kafka keeps such a
            // batch too): reading them is a `Corrupt` error then, never an I/O one.
            if let Err(e) = seg.records() {
                expected_error(&e, false);
            }
        }
        Err(e) => expected_error(&e, true),
    }
    let _ = seg.close();
});
