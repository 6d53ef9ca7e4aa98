//! The verifier's rules are numbered, listed in docs/rules.md, and each is
//! broken by at least one oracle case.
//!
//! The coverage check reads every case under `oracle-cases/` that expects an
//! error, verifies its module with the reference's default options and
//! records which rule the verifier reports (the typed `VerifyError::rule`,
//! not its text). Every rule needs a rejection case in
//! `oracle-cases/verifier/`, the verifier's own suite, so that the suite
//! alone rejects every rule; cases elsewhere are checked for their expected
//! text too. Only the reference is built, so numbering a family and writing
//! its cases is a quick loop: `cargo test -p xlaref-reference --test rules`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use xlaref_reference::json::{self, ReadOptions};
use xlaref_reference::verify::{self, VerifyOptions};
use xlaref_reference::{hlo, mlir};

/// Where every rule's rejection case must be (relative to the repository).
const VERIFIER_SUITE: &str = "oracle-cases/verifier/";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn case_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("oracle-cases is readable").map(|e| e.expect("a directory entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            case_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// The module of a case, as JSON (HLO and MLIR text imported).
fn module_of(case: &Value) -> Option<Value> {
    match case.get("module")? {
        Value::String(text) if mlir::is_mlir_text(text) => mlir::mlir_to_json(text).ok(),
        Value::String(text) => hlo::hlo_to_json(text).ok(),
        module => Some(module.clone()),
    }
}

/// For every rule id the oracle cases break, the cases that break it
/// (`file (case name)`), in file order.
fn rules_broken_by_cases() -> BTreeMap<&'static str, Vec<String>> {
    let mut files = Vec::new();
    case_files(&root().join("oracle-cases"), &mut files);
    let mut broken = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a case file is readable");
        let Ok(doc) = json::parse_json(&text) else { continue };
        let cases = match doc.get("cases").and_then(Value::as_array) {
            Some(list) => list.clone(),
            None => vec![doc],
        };
        for case in &cases {
            let expects_error = case.get("expected").and_then(|e| e.get("error")).is_some();
            let Some(module) = module_of(case).filter(|_| expects_error) else { continue };
            let Ok(module) = json::read_module(&module, &json::Path::root(), ReadOptions::default()) else { continue };
            if let Err(e) = verify::verify(module, &VerifyOptions::default()) {
                let name = case.get("name").and_then(Value::as_str).unwrap_or("(unnamed)");
                // The harness's judgement of such a case, repeated here so
                // that a family's cases can be checked without the engines.
                let wanted = case["expected"]["error"].as_str().unwrap_or_default().to_lowercase();
                let message = e.to_string();
                assert!(
                    message.to_lowercase().contains(&wanted),
                    "{} ({name}): expected an error containing {wanted:?}, got: {message}",
                    file.display()
                );
                let relative = file.strip_prefix(root()).unwrap_or(&file);
                broken.entry(e.rule.id).or_insert_with(Vec::new).push(format!("{} ({name})", relative.display()));
            }
        }
    }
    broken
}

#[test]
fn rule_ids_are_unique_and_numbered_within_their_family() {
    let mut seen = BTreeSet::new();
    for rule in verify::all_rules() {
        assert!(seen.insert(rule.id), "rule id {} is declared twice", rule.id);
        let (family, number) = rule.id.split_once(".c").unwrap_or_else(|| panic!("rule id {} is not `family.cN`", rule.id));
        assert!(!family.is_empty() && family.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "family of {}", rule.id);
        assert!(number.parse::<u32>().is_ok_and(|n| n >= 1), "number of {}", rule.id);
        assert!(!rule.says.is_empty(), "{} says nothing", rule.id);
    }
}

#[test]
fn every_rule_has_a_rejection_case() {
    let broken = rules_broken_by_cases();
    let in_verifier_suite = |id: &str| broken.get(id).is_some_and(|cases| cases.iter().any(|c| c.starts_with(VERIFIER_SUITE)));
    let missing: Vec<String> = verify::all_rules()
        .filter(|r| !r.says.starts_with("(invariant)") && !in_verifier_suite(r.id))
        .map(|r| match broken.get(r.id) {
            Some(elsewhere) => format!("{} (broken only by {})", r.id, elsewhere.join(", ")),
            None => r.id.to_string(),
        })
        .collect();
    assert!(missing.is_empty(), "{} rules have no rejection case in {VERIFIER_SUITE}:\n{}", missing.len(), missing.join("\n"));
    assert!(!broken.contains_key("unnumbered"), "a case breaks a check that names no rule: {:?}", broken.get("unnumbered"));
}

#[test]
fn docs_rules_md_is_generated_from_the_code() {
    let path = root().join("docs/rules.md");
    let generated = verify::rules_markdown();
    if std::env::var_os("XLAREF_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("docs/rules.md is writable");
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(on_disk == generated, "docs/rules.md is stale: run `XLAREF_BLESS=1 cargo test -p xlaref-reference --test rules`");
}
