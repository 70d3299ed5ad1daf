//! MessageSet v0/v1 (legacy) on arbitrary bytes: header parse, shallow validation and
//! the deep read (compressed wrappers decompressed, inner messages walked).
#![no_main]

use kafkacore_core::legacy;
use kafkacore_fuzz::expected_error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ctx = "fuzz";
    for pos in [0usize, 1, 12] {
        if let Err(e) = legacy::parse_header(data, pos, ctx) {
            expected_error(&e, false);
        }
    }
    let shallow = legacy::validate_shallow(data, 0, ctx);
    match legacy::records(data, 0, ctx) {
        Ok((header, _records)) => {
            let s = shallow.expect("records accepted a message validate_shallow refused");
            assert_eq!(s.offset, header.offset);
            assert!(header.size_in_bytes() <= data.len());
        }
        Err(e) => expected_error(&e, false),
    }
});
