//! Arbitrary bytes as HLO text: import, read, verify, evaluate on both
//! engines under small limits. Must never panic, hang or run out of memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xlaref::harness::engine::{Engine, Fast, Reference};
use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{read_module, Path, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::verify::{verify, VerifyOptions};

const MAX: i64 = 1 << 14;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(value) = xlaref_reference::hlo::hlo_to_json(text) else { return };
    let Ok(module) = read_module(&value, &Path::root(), ReadOptions { max_elements: MAX }) else { return };
    let Ok(verified) = verify(module, &VerifyOptions { max_elements: MAX, ..VerifyOptions::default() }) else { return };
    // Zero arguments of the parameters' shapes, where they are arrays.
    let args: Option<Vec<Literal>> =
        verified.entry_signature().params.iter().map(|s| s.as_array().map(|a| Literal::Array(ArrayLiteral::zeros(a)))).collect();
    let Some(args) = args else { return };
    for engine in [&Reference as &dyn Engine, &Fast] {
        let limits = Limits {
            max_elements: MAX,
            max_while_trips: 1000,
            deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(2)),
            ..Limits::default()
        };
        let _ = engine.run(&verified, args.clone(), &mut Env::new(limits));
    }
});
