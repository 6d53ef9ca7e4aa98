//! The HLO text importer: XLA dump syntax (`%` names, operand shapes,
//! layouts, fusions, `/*index=*/` comments), every program of
//! `oracle-cases/programs/` round-tripped through `xlaref import`, errors
//! with line and column, and no panic on any truncation of real HLO.

use std::process::Command;

use serde_json::Value;
use xlaref::harness::case::{read_case, run_case, RunOptions};
use xlaref::harness::engine::{Fast, Reference};
use xlaref_reference::hlo::{hlo_to_json, is_hlo_text};
use xlaref_reference::json::{self, Path, ReadOptions};
use xlaref_reference::verify::{verify, VerifyOptions};

/// An XLA dump in the long form: `%` names, operand shapes, layouts, a
/// loop fusion with a broadcast constant, a reduce and a tuple root.
const DUMP: &str = r#"HloModule module_0042.jit_f, entry_computation_layout={(f32[2,3]{1,0})->(f32[2]{0}, f32[2,3]{1,0})}

%add_f32 (lhs: f32[], rhs: f32[]) -> f32[] {
  %lhs = f32[] parameter(0)
  %rhs = f32[] parameter(1)
  ROOT %add = f32[] add(f32[] %lhs, f32[] %rhs)
}

%fused_computation (param_0.1: f32[2,3]) -> f32[2,3] {
  %param_0.1 = f32[2,3]{1,0} parameter(0)
  %constant.1 = f32[] constant(0.5)
  %broadcast.1 = f32[2,3]{1,0} broadcast(f32[] %constant.1), dimensions={}, metadata={op_name="mul" source_file="x.py" source_line=3}
  ROOT %multiply.1 = f32[2,3]{1,0} multiply(f32[2,3]{1,0} %param_0.1, f32[2,3]{1,0} %broadcast.1)
}

ENTRY %main.7 (Arg_0.1: f32[2,3]) -> (f32[2], f32[2,3]) {
  %Arg_0.1 = f32[2,3]{1,0} parameter(0), sharding={replicated}
  %fusion = f32[2,3]{1,0} fusion(f32[2,3]{1,0} %Arg_0.1), kind=kLoop, calls=%fused_computation
  %constant.2 = f32[] constant(-0)
  %reduce.3 = f32[2]{0} reduce(f32[2,3]{1,0} %fusion, f32[] %constant.2), dimensions={1}, to_apply=%add_f32
  ROOT %tuple.4 = (f32[2]{0}, /*index=1*/f32[2,3]{1,0}) tuple(f32[2]{0} %reduce.3, f32[2,3]{1,0} %fusion)
}
"#;

fn case_with(module: &str, args: Value, expected: Value) -> serde_json::Value {
    serde_json::json!({"format": "xla-json/1", "name": "hlo", "module": module, "args": args, "expected": expected})
}

#[test]
fn an_xla_dump_with_a_fusion_evaluates_on_both_engines() {
    assert!(is_hlo_text(DUMP));
    let case = case_with(
        DUMP,
        serde_json::json!([{"shape": "f32[2,3]", "value": [[1, 2, 3], [4, 5, -6]]}]),
        serde_json::json!({"shape": "(f32[2], f32[2,3])", "value": {"tuple": [[3, 1.5], [[0.5, 1, 1.5], [2, 2.5, -3]]]}}),
    );
    let options = RunOptions::default();
    let case = read_case(&case, &Path::root(), &options).expect("the case reads");
    for engine in [&Reference as &dyn xlaref::harness::engine::Engine, &Fast] {
        let outcome = run_case(&case, engine, &options);
        assert!(xlaref::harness::case::judge(&case, &outcome).is_ok(), "{}: {:?}", engine.name(), outcome.result);
    }
}

fn program_modules() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("oracle-cases/programs").expect("oracle-cases/programs exists") {
        let path = entry.expect("a directory entry").path();
        // `stablehlo/` holds the same programs as StableHLO (tests/stablehlo_import.rs).
        if path.is_dir() {
            continue;
        }
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
        if let Some(text) = doc["module"].as_str() {
            out.push((path.display().to_string(), text.to_string()));
        }
    }
    assert!(out.len() >= 12, "expected the 12 JAX programs, found {}", out.len());
    out
}

#[test]
fn every_program_round_trips_through_import() {
    let options = ReadOptions { max_elements: 1 << 24 };
    for (name, text) in program_modules() {
        let value = hlo_to_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let module = json::read_module(&value, &Path::root(), options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let verified =
            verify(module, &VerifyOptions { max_elements: 1 << 24, ..VerifyOptions::default() }).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Written out and read back: the same module.
        let written = json::write_module(verified.module());
        let again = json::read_module(&written, &Path::root(), options).expect("the written module reads");
        let again = verify(again, &VerifyOptions { max_elements: 1 << 24, ..VerifyOptions::default() }).expect("and verifies");
        assert_eq!(json::write_module(again.module()), written, "{name}");
    }
}

#[test]
fn no_truncation_of_real_hlo_panics() {
    for (_, text) in program_modules() {
        let step = (text.len() / 150).max(1);
        for cut in (0..text.len()).step_by(step) {
            let Some(prefix) = text.get(..cut) else { continue };
            if let Ok(v) = hlo_to_json(prefix) {
                if let Ok(m) = json::read_module(&v, &Path::root(), ReadOptions { max_elements: 1 << 20 }) {
                    let _ = verify(m, &VerifyOptions { max_elements: 1 << 20, ..VerifyOptions::default() });
                }
            }
        }
    }
}

#[test]
fn errors_name_the_line_column_and_opcode() {
    let bad_opcode = "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] frobnicate(p)\n}\n";
    let e = hlo_to_json(bad_opcode).expect_err("unknown opcode");
    assert_eq!(e.line, 5);
    assert!(e.message.contains("`frobnicate`"), "{e}");
    assert!(e.to_string().starts_with("HLO line 5, column "), "{e}");

    let bad_shape = "HloModule m\nENTRY e {\n  ROOT p = f32[2 parameter(0)\n}\n";
    let e = hlo_to_json(bad_shape).expect_err("unclosed shape");
    assert_eq!(e.line, 3);

    let unclosed = "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n";
    assert!(hlo_to_json(unclosed).expect_err("unclosed").message.contains("not closed"));

    let no_param = "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(1)\n}\n";
    assert!(hlo_to_json(no_param).expect_err("gap").message.contains("parameter(0)"));
}

/// SelectAndScatter has no dilations: a window that asks for them is an
/// error, not silently read as undilated (a different program).
#[test]
fn a_dilated_select_and_scatter_window_is_an_error() {
    let program = |window: &str| {
        format!(
            "HloModule m\n\nge {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}}\n\n\
             add {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}}\n\n\
             ENTRY e {{\n  x = f32[4] parameter(0)\n  s = f32[2] parameter(1)\n  z = f32[] constant(0)\n  \
             ROOT r = f32[4] select-and-scatter(x, s, z), window={{{window}}}, select=ge, scatter=add\n}}\n"
        )
    };
    assert!(hlo_to_json(&program("size=2 stride=2")).is_ok());
    let e = hlo_to_json(&program("size=2 stride=2 lhs_dilate=2")).expect_err("lhs_dilate");
    assert!(e.message.contains("has no dilations"), "{e}");
    let e = hlo_to_json(&program("size=2 stride=2 rhs_dilate=2")).expect_err("rhs_dilate");
    assert!(e.message.contains("has no dilations"), "{e}");
}

/// Errors found after the import (a literal that does not fit its shape, a
/// rule of the document) name the place in the HLO text, not a JSON path of
/// the converted module the user never wrote.
#[test]
fn errors_after_the_import_name_the_line_and_column() {
    let long_literal =
        "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  c = f32[2] constant({1,2,3})\n  ROOT a = f32[2] add(p, c)\n}\n";
    let e = json::parse_module(long_literal, ReadOptions::default()).expect_err("3 entries for 2");
    assert_eq!(e.path, "line 4 column 23", "{e}");
    assert!(e.message.contains("dimension 0 of f32[2] has 3 entries"), "{e}");
    // A bounded shape's literal is checked by the JSON reader, after the import.
    let bounded = long_literal.replace("c = f32[2]", "c = f32[<=2]");
    let e = json::parse_module(&bounded, ReadOptions::default()).expect_err("3 entries for at most 2");
    assert_eq!(e.path, "line 4 column 16", "{e}");
    assert!(e.message.contains("instruction `c`") && e.message.contains("3 entries"), "{e}");

    let mismatch = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  c = f32[3] constant({1,2,3})\n  ROOT a = f32[2] add(p, c)\n}\n";
    let module = json::parse_module(mismatch, ReadOptions::default()).expect("reads");
    let e = verify(module, &VerifyOptions::default()).expect_err("f32[2] + f32[3]");
    assert_eq!((e.instruction.as_str(), e.location.as_deref()), ("a", Some("line 5 column 19")), "{e}");
    assert!(e.to_string().starts_with("line 5 column 19: instruction `a` (Add)"), "{e}");
}

/// `compile().as_text()` prints stack-frame tables before the first
/// computation (metadata: skipped), and optimized HLO has element-type
/// bitcasts of the same width (read as BitcastConvertType).
#[test]
fn stack_frame_tables_and_element_type_bitcasts_of_optimized_hlo() {
    let module = |tables: &str, bitcast: &str| {
        format!("HloModule m\n\n{tables}\n\nENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  ROOT b = {bitcast}(p)\n}}\n")
    };
    let tables = "FileNames\n1 \"<string>\"\n\nFunctionNames\n1 \"f\"\n\nFileLocations\n1 {file_name_id=1 function_name_id=1 line=3}\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}";
    let json = hlo_to_json(&module(tables, "s32[2]{0} bitcast")).expect("reads");
    let text = json.to_string();
    assert!(text.contains("BitcastConvertType") && text.contains("\"new_element_type\":\"s32\""), "{text}");
    let case = case_with(
        &module(tables, "s32[2]{0} bitcast"),
        serde_json::json!([{"shape": "f32[2]", "value": [1, -2]}]),
        serde_json::json!({"shape": "s32[2]", "value": [1065353216, -1073741824]}),
    );
    let case = read_case(&case, &Path::root(), &RunOptions::default()).expect("case");
    for engine in [&Reference as &dyn xlaref::harness::engine::Engine, &Fast] {
        let outcome = run_case(&case, engine, &RunOptions::default());
        assert_eq!(xlaref::harness::case::judge(&case, &outcome), Ok(()), "{}", engine.name());
    }
    // Another width, or other dimensions, depends on layouts.
    let e = hlo_to_json(&module(tables, "s64[1]{0} bitcast")).expect_err("width");
    assert!(e.message.contains("depends on layouts"), "{e}");
    // A table row must look like one.
    let e = hlo_to_json(&module("FileNames\nnot a row", "f32[2]{0} bitcast")).expect_err("row");
    assert!(e.message.contains("FileNames table") && e.line == 4, "{e}");
}

#[test]
fn import_and_eval_with_npy_arguments_on_the_command_line() {
    let dir = std::env::temp_dir().join(format!("xlaref-hlo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let hlo = dir.join("prog.hlo");
    std::fs::write(&hlo, DUMP).expect("write");
    let out =
        Command::new(env!("CARGO_BIN_EXE_xlaref")).arg("import").arg(&hlo).arg("-o").arg(dir.join("prog.json")).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let imported: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("prog.json")).expect("written")).expect("JSON");
    assert_eq!(imported["format"], "xla-json/1");
    assert_eq!(imported["entry"], "main.7");

    let x = xlaref_reference::literal::ArrayLiteral::from_vec(vec![2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, -6.0]);
    std::fs::write(dir.join("x.npy"), xlaref::npy::write_npy(&x)).expect("write x.npy");
    let out = Command::new(env!("CARGO_BIN_EXE_xlaref"))
        .arg("eval")
        .arg(&hlo)
        .arg("--arg-npy")
        .arg(dir.join("x.npy"))
        .arg("--out-npy")
        .arg(dir.join("y.npy"))
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The result went to a file: standard output gets a summary line.
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.trim().ends_with("y.npy") && summary.contains(" -> "), "{summary}");
    // `-o` writes the typed literal; `--timings` reports each phase.
    let out = Command::new(env!("CARGO_BIN_EXE_xlaref"))
        .arg("eval")
        .arg(&hlo)
        .arg("--arg-npy")
        .arg(dir.join("x.npy"))
        .arg("-o")
        .arg(dir.join("y.json"))
        .arg("--timings")
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("y.json")).expect("y.json")).expect("a typed literal");
    assert_eq!(printed["value"]["tuple"][0], serde_json::json!([3.0, 1.5]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let phases: Vec<&str> = stderr.lines().filter_map(|l| l.split_once(": ").map(|(p, _)| p)).collect();
    assert_eq!(phases, ["parse", "verify", "args", "execute", "write", "peak"], "{stderr}");
    assert!(stderr.lines().all(|l| l.ends_with(" ms") || l.ends_with(" MiB")), "{stderr}");
    let y0 = std::fs::read(dir.join("y.0.npy")).expect("y.0.npy");
    let back = xlaref::npy::read_npy(&y0, None, 100).expect("reads");
    assert_eq!(
        back,
        xlaref_reference::literal::Literal::Array(xlaref_reference::literal::ArrayLiteral::from_vec(vec![2], vec![3.0f32, 1.5]))
    );
    assert!(dir.join("y.1.npy").exists());

    // `XLAREF_FAST_PROFILE` adds the fast engine's time per instruction.
    let out = Command::new(env!("CARGO_BIN_EXE_xlaref"))
        .args(["eval", "--engine", "fast"])
        .arg(&hlo)
        .arg("--arg-npy")
        .arg(dir.join("x.npy"))
        .arg("-o")
        .arg(dir.join("z.json"))
        .env("XLAREF_FAST_PROFILE", "1")
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("fast engine profile"), "{stderr}");
    let rows: Vec<&str> = stderr.lines().skip(2).collect();
    assert!(!rows.is_empty() && rows.iter().all(|r| r.split_whitespace().next().is_some_and(|ms| ms.parse::<f64>().is_ok())), "{stderr}");
    assert!(rows.iter().any(|r| r.contains(" = Parameter f32[2,3]")), "{stderr}");

    // A wrong argument file is bad input (exit 2), not a crash.
    std::fs::write(dir.join("bad.npy"), b"not numpy").expect("write");
    let out =
        Command::new(env!("CARGO_BIN_EXE_xlaref")).arg("eval").arg(&hlo).arg("--arg-npy").arg(dir.join("bad.npy")).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// XLA prints replica groups in the iota form `[groups,size]<=[dims]T(perm)`.
#[test]
fn iota_replica_groups_are_read() {
    let module = |groups: &str| {
        format!(
            "HloModule m\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}}\n\nENTRY e {{\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] all-reduce(p), replica_groups={groups}, to_apply=add\n}}\n"
        )
    };
    for (groups, want) in [("[2,2]<=[4]", "[[0,1],[2,3]]"), ("[2,2]<=[2,2]T(1,0)", "[[0,2],[1,3]]"), ("{{0,3},{1,2}}", "[[0,3],[1,2]]")] {
        let json = hlo_to_json(&module(groups)).expect("reads");
        let text = json.to_string();
        assert!(text.contains(&format!("\"replica_groups\":{want}")), "{groups}: {text}");
    }
}
