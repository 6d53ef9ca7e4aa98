//! Writing a module and reading it back gives the same module: every module
//! of the golden suite goes through `write_module` twice with equal output.

use std::path::Path;

use serde_json::Value;
use xlaref::harness::case::case_files;
use xlaref_reference::json::{self, read_module, write_module, Path as JsonPath, ReadOptions};
use xlaref_reference::verify::{verify, VerifyOptions};

fn modules(doc: &Value) -> Vec<&Value> {
    match doc.get("cases").and_then(Value::as_array) {
        Some(list) => list.iter().filter_map(|c| c.get("module")).collect(),
        None => doc.get("module").into_iter().collect(),
    }
}

#[test]
fn every_oracle_module_round_trips() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases");
    let mut checked = 0;
    for file in case_files(&root).unwrap() {
        let doc = json::parse_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for m in modules(&doc) {
            let Ok(module) = read_module(m, &JsonPath::root(), ReadOptions::default()) else { continue };
            let written = write_module(&module);
            let again = read_module(&written, &JsonPath::root(), ReadOptions::default())
                .unwrap_or_else(|e| panic!("{}: written module does not read back: {e}\n{written}", file.display()));
            assert_eq!(write_module(&again), written, "{}: module changed in a round trip", file.display());
            let (a, b) = (verify(module, &VerifyOptions::default()), verify(again, &VerifyOptions::default()));
            assert_eq!(a.is_ok(), b.is_ok(), "{}: verification differs after a round trip", file.display());
            checked += 1;
        }
    }
    assert!(checked > 0);
}
