//! RecordBatch v2 on arbitrary bytes: header parse, shallow and full validation, record
//! decoding (with decompression), the record iterator and the shallow walk.
#![no_main]

use kafkacore_core::{batch, shallow};
use kafkacore_fuzz::expected_error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ctx = "fuzz";
    for pos in [0usize, 1, 12] {
        if let Err(e) = batch::parse_header(data, pos, ctx) {
            expected_error(&e, false);
        }
        if let Err(e) = batch::validate_shallow(data, pos, ctx) {
            expected_error(&e, false);
        }
    }
    let validated = batch::validate(data, 0, ctx);
    match batch::records(data, 0, ctx) {
        Ok((header, records)) => {
            // What `records` accepts, `validate` accepts too, with the same header.
            let v = validated.expect("records accepted a batch validate refused");
            assert_eq!(v.base_offset, header.base_offset);
            assert_eq!(records.len() as i64, header.records_count as i64);
            assert!(header.size_in_bytes() <= data.len());
            let mut n = 0usize;
            batch::for_each_record(data, 0, ctx, |r| {
                let rec = r.to_record();
                assert_eq!(rec.key, records[n].key);
                assert_eq!(rec.value, records[n].value);
                for h in r.headers() {
                    let _ = h;
                }
                n += 1;
            })
            .expect("for_each_record refused what records accepted");
            assert_eq!(n, records.len());
        }
        Err(e) => {
            expected_error(&e, false);
            let mut n = 0usize;
            let r = batch::for_each_record(data, 0, ctx, |_| n += 1);
            assert!(
                r.is_err(),
                "for_each_record accepted what records refused: {e}"
            );
        }
    }
    // The shallow walk over everything, as a segment read does.
    let mut pos = 0usize;
    loop {
        match shallow::next_batch(data, pos, ctx) {
            Ok(Some(b)) => {
                assert!(b.end() <= data.len() && b.end() > pos);
                if let Err(e) = shallow::ensure_valid(data, &b, ctx) {
                    expected_error(&e, false);
                } else if let Err(e) = shallow::records(data, &b, ctx) {
                    expected_error(&e, false);
                }
                pos = b.end();
            }
            Ok(None) => break,
            Err(e) => {
                expected_error(&e, false);
                break;
            }
        }
    }
});
