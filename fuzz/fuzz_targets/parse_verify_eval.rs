//! Arbitrary bytes as an xla-json/1 case (or case file) → parse → verify →
//! evaluate on both engines under small limits. Any outcome but a panic,
//! hang or OOM is fine: bad input must become an error.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use xlaref::harness::case::{read_cases, run_case, RunOptions};
use xlaref::harness::engine::{Fast, Reference};
use xlaref_reference::eval::Limits;
use xlaref_reference::json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(doc) = json::parse_json(text) else { return };
    let options = RunOptions {
        limits: Limits {
            max_elements: 1 << 14,
            max_while_trips: 1000,
            max_call_depth: 64,
            deadline: Some(Instant::now() + Duration::from_secs(2)),
            ..Limits::default()
        },
    };
    for (_, case) in read_cases(&doc, "fuzz", &options) {
        if let Ok(case) = case {
            let _ = run_case(&case, &Reference, &options);
            let _ = run_case(&case, &Fast, &options);
        }
    }
});
