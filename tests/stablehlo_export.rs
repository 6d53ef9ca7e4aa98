//! `xlaref export --to stablehlo`: exact text of small modules, every
//! oracle-case module and generated program written without error, and —
//! when jax / IREE are installed — every written text parsed and verified by
//! StableHLO's own parser (tools/stablehlo_parse.py, one Python process)
//! and a sample compiled by IREE for llvm-cpu.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use xlaref::gen;
use xlaref::harness::campaign::draw;
use xlaref::harness::case::{case_files, read_cases, RunOptions};
use xlaref_reference::json::{parse_json, read_module, Path as JsonPath, ReadOptions};
use xlaref_reference::stablehlo::{write_stablehlo, ExportError, ExportErrorKind, UNWRITABLE_OPS};
use xlaref_reference::verify::{verify, VerifyOptions};

fn export_json(module: &serde_json::Value) -> Result<String, String> {
    let options = ReadOptions { max_elements: 1 << 28 };
    let m = read_module(module, &JsonPath::root(), options).map_err(|e| format!("read: {e}"))?;
    let v = verify(m, &VerifyOptions::default()).map_err(|e| format!("verify: {e}"))?;
    write_stablehlo(&v).map_err(|e| format!("export: {e}"))
}

fn export_text(text: &str) -> String {
    let value = parse_json(text).expect("test module is JSON");
    export_json(&value).unwrap_or_else(|e| panic!("{e}"))
}

fn contains_all(text: &str, fragments: &[&str]) {
    for f in fragments {
        assert!(text.contains(f), "missing `{f}` in\n{text}");
    }
}

#[test]
fn binary_with_scalar_broadcasts_the_scalar_first() {
    let text = export_text(
        r#"{"format": "xla-json/1", "computations": {"main": {
            "params": [{"name": "x", "shape": "f32[2,3]"}, {"name": "s", "shape": "f32[]"}],
            "instructions": [{"name": "r", "op": "Add", "operands": ["x", "s"]}]}}}"#,
    );
    contains_all(
        &text,
        &[
            "module @main {",
            "func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> (tensor<2x3xf32>) {",
            r#"%0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3xf32>"#,
            r#"%1 = "stablehlo.add"(%arg0, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>"#,
            r#""func.return"(%1) : (tensor<2x3xf32>) -> ()"#,
        ],
    );
}

#[test]
fn broadcast_dimensions_map_the_lower_rank_operand() {
    let text = export_text(
        r#"{"format": "xla-json/1", "computations": {"main": {
            "params": [{"name": "x", "shape": "s32[2,3]"}, {"name": "v", "shape": "s32[2]"}],
            "instructions": [{"name": "r", "op": "Lt", "operands": ["v", "x"], "broadcast_dimensions": [0]}]}}}"#,
    );
    contains_all(
        &text,
        &[
            r#""stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x3xi32>"#,
            "compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>",
            "-> tensor<2x3xi1>",
        ],
    );
}

#[test]
fn constants_are_exact() {
    let text = export_text(
        r#"{"format": "xla-json/1", "computations": {"main": {"params": [],
            "instructions": [
              {"name": "f", "op": "Constant", "shape": "f32[2]", "literal": [1, "0x7fc00001"]},
              {"name": "b", "op": "Constant", "shape": "pred[2]", "literal": [true, false]},
              {"name": "u", "op": "Constant", "shape": "u64[]", "literal": "18446744073709551615"},
              {"name": "c", "op": "Constant", "shape": "c64[]", "literal": [1, -2]},
              {"name": "e", "op": "Constant", "shape": "bf16[0,3]", "literal": []},
              {"name": "t", "op": "Tuple", "operands": ["f", "b", "u", "c", "e"]}]}}}"#,
    );
    contains_all(
        &text,
        &[
            r#"value = dense<"0x0000803F0100C07F"> : tensor<2xf32>"#,
            "value = dense<[true, false]> : tensor<2xi1>",
            "value = dense<18446744073709551615> : tensor<ui64>",
            r#"value = dense<"0x0000803F000000C0"> : tensor<complex<f32>>"#,
            "value = dense<> : tensor<0x3xbf16>",
            "-> (tensor<2xf32>, tensor<2xi1>, tensor<ui64>, tensor<complex<f32>>, tensor<0x3xbf16>)",
        ],
    );
}

#[test]
fn reduce_inlines_its_computation_as_a_region_with_scalar_arguments() {
    let text = export_text(
        r#"{"format": "xla-json/1", "entry": "main", "computations": {
            "add": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
                    "instructions": [{"name": "s", "op": "Add", "operands": ["a", "b"]}]},
            "main": {"params": [{"name": "m", "shape": "f32[2,3]"}],
                     "instructions": [
                       {"name": "zero", "op": "Constant", "shape": "f32[]", "literal": 0},
                       {"name": "rows", "op": "Reduce", "operands": ["m", "zero"], "computation": "add", "dimensions": [1]}]}}}"#,
    );
    contains_all(
        &text,
        &[
            r#"= "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 1>}> ({"#,
            "^bb0(%1: tensor<f32>, %2: tensor<f32>):",
            r#"%3 = "stablehlo.add"(%1, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>"#,
            r#""stablehlo.return"(%3) : (tensor<f32>) -> ()"#,
            "}) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>",
        ],
    );
}

#[test]
fn call_becomes_a_private_function_and_while_takes_tuple_leaves() {
    let text = export_text(
        r#"{"format": "xla-json/1", "entry": "main", "computations": {
            "twice": {"params": [{"name": "x", "shape": "f32[2]"}],
                      "instructions": [{"name": "y", "op": "Add", "operands": ["x", "x"]}]},
            "cond": {"params": [{"name": "s", "shape": "(s32[], f32[2])"}],
                     "instructions": [{"name": "i", "op": "GetTupleElement", "operands": ["s"], "index": 0},
                                      {"name": "n", "op": "Constant", "shape": "s32[]", "literal": 3},
                                      {"name": "c", "op": "Lt", "operands": ["i", "n"]}]},
            "body": {"params": [{"name": "s", "shape": "(s32[], f32[2])"}],
                     "instructions": [{"name": "i", "op": "GetTupleElement", "operands": ["s"], "index": 0},
                                      {"name": "x", "op": "GetTupleElement", "operands": ["s"], "index": 1},
                                      {"name": "one", "op": "Constant", "shape": "s32[]", "literal": 1},
                                      {"name": "j", "op": "Add", "operands": ["i", "one"]},
                                      {"name": "y", "op": "Call", "operands": ["x"], "computation": "twice"},
                                      {"name": "t", "op": "Tuple", "operands": ["j", "y"]}]},
            "main": {"params": [{"name": "x", "shape": "f32[2]"}],
                     "instructions": [{"name": "zero", "op": "Constant", "shape": "s32[]", "literal": 0},
                                      {"name": "init", "op": "Tuple", "operands": ["zero", "x"]},
                                      {"name": "w", "op": "While", "operands": ["init"], "condition": "cond", "body": "body"},
                                      {"name": "r", "op": "GetTupleElement", "operands": ["w"], "index": 1}]}}}"#,
    );
    contains_all(
        &text,
        &[
            r#":2 = "stablehlo.while"(%0, %arg0) ({"#,
            r#""func.call"("#,
            "<{callee = @twice}> : (tensor<2xf32>) -> tensor<2xf32>",
            "}) : (tensor<i32>, tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>)",
            "func.func private @twice(%arg0: tensor<2xf32>) -> (tensor<2xf32>) {",
        ],
    );
    assert!(!text.contains("tuple"), "no tuple op or type is needed:\n{text}");
}

#[test]
fn conv_same_padding_is_resolved_and_dimension_numbers_are_explicit() {
    let text = export_text(
        r#"{"format": "xla-json/1", "computations": {"main": {
            "params": [{"name": "x", "shape": "f32[1,2,5,5]"}, {"name": "k", "shape": "f32[3,2,3,3]"}],
            "instructions": [{"name": "c", "op": "Conv", "operands": ["x", "k"], "window_strides": [2, 2], "padding": "SAME"}]}}}"#,
    );
    contains_all(
        &text,
        &[
            "dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>",
            "padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>",
            "window_strides = array<i64: 2, 2>",
            "-> tensor<1x3x3x3xf32>",
        ],
    );
}

#[test]
fn every_unary_and_binary_op_has_a_name() {
    for (name, op) in xlaref_reference::ir::UnaryOp::ALL {
        assert!(xlaref_reference::stablehlo::unary_op_name(op).is_some(), "unary {name} has no StableHLO name");
    }
    for (name, op) in xlaref_reference::ir::BinaryOp::ALL {
        assert!(xlaref_reference::stablehlo::binary_op_name(op).is_some(), "binary {name} has no StableHLO name");
    }
}

#[test]
fn send_is_a_listed_export_error() {
    let module = json!({"format": "xla-json/1", "computations": {"main": {
        "params": [{"name": "x", "shape": "f32[2]"}],
        "instructions": [{"name": "s", "op": "Send", "operands": ["x"], "channel_id": 1},
                         {"name": "d", "op": "SendDone", "operands": ["s"], "channel_id": 1}]}}});
    let m = read_module(&module, &JsonPath::root(), ReadOptions { max_elements: 1 << 20 }).expect("reads");
    let v = verify(m, &VerifyOptions::default()).expect("verifies");
    let e: ExportError = write_stablehlo(&v).expect_err("Send cannot be written");
    assert_eq!(e.kind, ExportErrorKind::NoStableHloOp);
    assert_eq!(e.instruction, "s");
    assert!(UNWRITABLE_OPS.contains(&e.op.as_str()));
}

/// Where the exported texts of a suite go (under `target/`).
fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("stablehlo-export").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("can create the output directory");
    dir
}

/// Tallies of one suite.
#[derive(Default)]
struct Tally {
    exported: usize,
    not_verified: usize,
    /// ExportErrors of a listed kind (docs/stablehlo.md).
    listed: Vec<String>,
    /// Any other ExportError: a writer bug.
    failed: Vec<String>,
}

fn export_into(dir: &Path, name: &str, module: &serde_json::Value, tally: &mut Tally) {
    let options = ReadOptions { max_elements: 1 << 28 };
    let Ok(m) = read_module(module, &JsonPath::root(), options) else {
        tally.not_verified += 1;
        return;
    };
    let Ok(v) = verify(m, &VerifyOptions::default()) else {
        tally.not_verified += 1;
        return;
    };
    match write_stablehlo(&v) {
        Ok(text) => {
            let file: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
            std::fs::write(dir.join(format!("{:05}-{file}.mlir", tally.exported)), text).expect("can write");
            tally.exported += 1;
        }
        // Ops with no counterpart, and the Unsupported forms docs/stablehlo.md lists.
        Err(e) if e.kind != ExportErrorKind::Internal => tally.listed.push(format!("{name}: {e}")),
        Err(e) => tally.failed.push(format!("{name}: {e}")),
    }
}

/// Parses every file of `dir` with StableHLO's parser, or says why not.
/// Returns the failures' lines.
fn parse_all(dir: &Path, iree: bool) -> Option<Vec<String>> {
    let probe = if iree { "import iree.compiler" } else { "import jaxlib.mlir" };
    let ok = Command::new("python3").args(["-c", probe]).output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        eprintln!("SKIPPED: `python3 -c \"{probe}\"` fails; install jax (and iree-base-compiler) to check with StableHLO's parser");
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools").join("stablehlo_parse.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script);
    if iree {
        cmd.arg("--iree");
    }
    let out = cmd.arg(dir).output().expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    eprintln!("{}", stdout.lines().last().unwrap_or(""));
    Some(stdout.lines().filter(|l| l.starts_with("FAIL")).map(String::from).collect())
}

#[test]
fn every_oracle_case_module_is_exported_and_parsed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases");
    let dir = out_dir("oracle");
    let options = RunOptions::default();
    let mut tally = Tally::default();
    for file in case_files(&root).expect("oracle-cases is readable") {
        let shown = file.display().to_string();
        let text = std::fs::read_to_string(&file).expect("case file is readable");
        let Ok(doc) = parse_json(&text) else { continue };
        for (name, case) in read_cases(&doc, &shown, &options) {
            if let Ok(case) = case {
                export_into(&dir, &name, &case.module, &mut tally);
            }
        }
    }
    eprintln!(
        "oracle-cases: {} modules exported, {} listed export errors, {} other export errors, {} do not verify",
        tally.exported,
        tally.listed.len(),
        tally.failed.len(),
        tally.not_verified
    );
    for l in &tally.listed {
        eprintln!("LISTED {l}");
    }
    for f in &tally.failed {
        eprintln!("EXPORT FAIL {f}");
    }
    assert!(tally.failed.is_empty(), "{} oracle modules could not be exported", tally.failed.len());
    assert!(tally.exported > 2500, "only {} oracle modules exported", tally.exported);
    if let Some(failures) = parse_all(&dir, false) {
        for f in &failures {
            eprintln!("{f}");
        }
        assert!(failures.is_empty(), "{} exported oracle modules do not parse", failures.len());
    }
}

#[test]
fn generated_programs_are_exported_and_parsed() {
    let per_op: u64 = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let dir = out_dir("generated");
    let mut tally = Tally::default();
    for (op, strategy) in gen::generators() {
        for i in 0..per_op {
            if let Some(p) = draw(&strategy, 0x5ab1e, i) {
                export_into(&dir, &format!("{op}-{i}"), &p.module, &mut tally);
            }
        }
    }
    eprintln!("generated: {} programs exported, {} other export errors", tally.exported, tally.failed.len());
    for f in &tally.failed {
        eprintln!("EXPORT FAIL {f}");
    }
    assert!(tally.failed.is_empty(), "{} generated programs could not be exported", tally.failed.len());
    if let Some(failures) = parse_all(&dir, false) {
        for f in &failures {
            eprintln!("{f}");
        }
        assert!(failures.is_empty(), "{} exported generated programs do not parse", failures.len());
    }
}

/// A chain of `n` computations, each a Conditional over `branches` copies
/// of the next (the last returns its parameter).
fn conditional_chain(n: usize, branches: usize) -> serde_json::Value {
    let mut comps = serde_json::Map::new();
    for i in 0..n {
        let instructions = if i + 1 == n {
            json!([{"name": "r", "op": "Neg", "operands": ["x"]}])
        } else {
            let mut operands = vec!["k".to_string()];
            operands.extend(std::iter::repeat_n("x".to_string(), branches));
            json!([{"name": "k", "op": "Constant", "shape": "s32[]", "literal": 0},
                   {"name": "r", "op": "Conditional", "operands": operands,
                    "branch_computations": vec![format!("c{}", i + 1); branches]}])
        };
        comps.insert(format!("c{i}"), json!({"params": [{"name": "x", "shape": "f32[]"}], "instructions": instructions}));
    }
    json!({"format": "xla-json/1", "entry": "c0", "computations": comps})
}

#[test]
fn deeply_nested_regions_are_an_error_not_a_crash() {
    // The writer recurses once per region: run on a small stack as tests do.
    let module = conditional_chain(1000, 1);
    let err = export_json(&module).expect_err("too deep");
    assert!(err.contains("nest deeper"), "{err}");
}

#[test]
fn text_multiplied_by_inlining_is_an_error_not_a_hang() {
    let module = conditional_chain(40, 2);
    let err = export_json(&module).expect_err("too large");
    assert!(err.contains("would exceed"), "{err}");
}

#[test]
fn a_sample_compiles_with_iree() {
    // One module in 40 of oracle-cases (70 or so), exported fresh.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases");
    let dir = out_dir("iree-sample");
    let mut tally = Tally::default();
    let mut seen = 0;
    for file in case_files(&root).expect("oracle-cases is readable") {
        let text = std::fs::read_to_string(&file).expect("case file is readable");
        let Ok(doc) = parse_json(&text) else { continue };
        for (name, case) in read_cases(&doc, &file.display().to_string(), &RunOptions::default()) {
            if let Ok(case) = case {
                seen += 1;
                if seen % 40 == 0 {
                    export_into(&dir, &name, &case.module, &mut tally);
                }
            }
        }
    }
    let Some(failures) = parse_all(&dir, true) else { return };
    for f in &failures {
        eprintln!("{f}");
    }
    // IREE does not lower everything StableHLO has (batch norm grad,
    // all_reduce outside a device mesh, f8 RNG...): failures are reported;
    // most of the sample must compile.
    let compiled = tally.exported - failures.len();
    eprintln!("IREE llvm-cpu: {compiled} of {} sampled modules compile", tally.exported);
    assert!(compiled * 4 >= tally.exported * 3, "only {compiled} of {} sampled modules compile with IREE", tally.exported);
}
