//! The StableHLO reader: a JAX-lowered program with every structured
//! construct (case with captured values, while, sort, reduce_window,
//! a variadic reduce in a called function, CHLO top_k) on both engines; the
//! JAX programs of `oracle-cases/programs/stablehlo/`; the generic and the
//! pretty form read alike; errors with line and column; no panic on any
//! truncation or on hostile nesting.

use std::process::Command;

use serde_json::{json, Value};
use xlaref::harness::case::{judge, read_case, run_case, RunOptions};
use xlaref::harness::engine::{Engine, Fast, Reference};
use xlaref_reference::json::{self, Path, ReadOptions};
use xlaref_reference::mlir::{is_mlir_text, mlir_to_json, read_test_file, CheckExpected, CheckKind};
use xlaref_reference::verify::{verify, VerifyOptions};

/// `jax.jit(f).lower(True, x, 1).as_text()` (jax 0.10.2) for
/// `f(p, x, i)` = cond, switch, fori_loop, sort, reduce_window SAME,
/// argmax, isinf and top_k.
const JAX_PROGRAM: &str = r#"module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i1>, %arg1: tensor<4xf32>, %arg2: tensor<i32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<i32> {jax.result_info = "result[3]"}, tensor<4xi1> {jax.result_info = "result[4]"}, tensor<2xf32> {jax.result_info = "result[5][0]"}, tensor<2xi32> {jax.result_info = "result[5][1]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<i1>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %12 = stablehlo.add %arg1, %11 : tensor<4xf32>
      stablehlo.return %12 : tensor<4xf32>
    }, {
      %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %12 = stablehlo.multiply %arg1, %11 : tensor<4xf32>
      stablehlo.return %12 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    %2 = stablehlo.convert %arg2 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<2> : tensor<i32>
    %3 = stablehlo.clamp %c, %2, %c_0 : tensor<i32>
    %4 = "stablehlo.case"(%3) ({
      stablehlo.return %1 : tensor<4xf32>
    }, {
      %11 = stablehlo.negate %1 : tensor<4xf32>
      stablehlo.return %11 : tensor<4xf32>
    }, {
      %11 = stablehlo.multiply %1, %1 : tensor<4xf32>
      stablehlo.return %11 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5:3 = stablehlo.while(%iterArg = %arg1, %iterArg_2 = %c_1, %iterArg_3 = %4) : tensor<4xf32>, tensor<i32>, tensor<4xf32>
    cond {
      %c_4 = stablehlo.constant dense<3> : tensor<i32>
      %11 = stablehlo.compare LT, %iterArg_2, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %11 : tensor<i1>
    } do {
      %11 = func.call @closed_call(%iterArg, %iterArg_3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %12 = stablehlo.add %iterArg_2, %c_4 : tensor<i32>
      stablehlo.return %iterArg, %12, %11 : tensor<4xf32>, tensor<i32>, tensor<4xf32>
    }
    %6 = "stablehlo.sort"(%arg1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %11 = stablehlo.compare EQ, %arg3, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %12 = stablehlo.select %11, %cst_3, %arg3 : tensor<i1>, tensor<f32>
      %13 = stablehlo.compare NE, %arg3, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %14 = stablehlo.select %13, %cst_4, %12 : tensor<i1>, tensor<f32>
      %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %15 = stablehlo.compare EQ, %arg4, %cst_5, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %16 = stablehlo.select %15, %cst_6, %arg4 : tensor<i1>, tensor<f32>
      %17 = stablehlo.compare NE, %arg4, %arg4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_7 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %18 = stablehlo.select %17, %cst_7, %16 : tensor<i1>, tensor<f32>
      %19 = stablehlo.compare LT, %14, %18, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %19 : tensor<i1>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %8 = "stablehlo.reduce_window"(%arg1, %7) <{base_dilations = array<i64: 1>, padding = dense<[[0, 1]]> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 2>, window_strides = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %11 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %9 = call @argmax(%arg1) : (tensor<4xf32>) -> tensor<i32>
    %10 = call @isinf(%arg1) : (tensor<4xf32>) -> tensor<4xi1>
    %values, %indices = chlo.top_k(%arg1, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)
    return %5#2, %6, %8, %9, %10, %values, %indices : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>, tensor<4xi1>, tensor<2xf32>, tensor<2xi32>
  }
  func.func private @closed_call(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg1, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @argmax(%arg0: tensor<4xf32>) -> tensor<i32> {
    %0 = stablehlo.iota dim = 0 : tensor<4xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<i32>
  }
  func.func private @isinf(%arg0: tensor<4xf32>) -> tensor<4xi1> {
    %0 = stablehlo.abs %arg0 : tensor<4xf32>
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.compare EQ, %0, %1, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    return %2 : tensor<4xi1>
  }
}
"#;

fn engines() -> [&'static dyn Engine; 2] {
    [&Reference, &Fast]
}

/// Runs `module` (MLIR text) on `args` and judges it against `expected`
/// on both engines.
fn assert_runs(module: &str, args: Value, expected: Value) {
    let case = json!({"format": "xla-json/1", "name": "mlir", "module": module, "args": args, "expected": expected});
    let options = RunOptions::default();
    let case = read_case(&case, &Path::root(), &options).unwrap_or_else(|e| panic!("the case reads: {e}"));
    for engine in engines() {
        let outcome = run_case(&case, engine, &options);
        assert!(judge(&case, &outcome).is_ok(), "{}: {:?}", engine.name(), outcome.result);
    }
}

#[test]
fn a_jax_program_with_regions_and_captures_runs_on_both_engines() {
    assert!(is_mlir_text(JAX_PROGRAM));
    // XLA CPU's result for p = true, x = [1.5, -2, 3, 0.25], i = 1.
    assert_runs(
        JAX_PROGRAM,
        json!([{"shape": "pred[]", "value": true}, {"shape": "f32[4]", "value": [1.5, -2, 3, 0.25]}, {"shape": "s32[]", "value": 1}]),
        json!({"shape": "(f32[4], f32[4], f32[4], s32[], pred[4], f32[2], s32[2])", "value": {"tuple": [
            [1.5, -2, 3, 0.25], [-2, 0.25, 1.5, 3], [-0.5, 1, 3.25, 0.25], 2, [false, false, false, false], [3, 1.5], [2, 0]
        ]}}),
    );
}

#[test]
fn captured_values_become_loop_state_and_branch_operands() {
    let module = mlir_to_json(JAX_PROGRAM).expect("reads");
    let comps = module["computations"].as_object().expect("computations");
    // The case branches read %arg1 from outside: each takes a tuple of it.
    let branch = comps.iter().find(|(k, _)| k.contains("branch0")).map(|(_, v)| v).expect("a branch computation");
    assert_eq!(branch["params"][0]["shape"], "(f32[4])");
    // The loop state is the three loop values; the body calls @closed_call.
    let body = comps.iter().find(|(k, _)| k.ends_with(".body")).map(|(_, v)| v).expect("a loop body");
    assert_eq!(body["params"][0]["shape"], "(f32[4], s32[], f32[4])");
    assert_eq!(module["entry"], "main");
}

const GENERIC: &str = r#"func.func @main(%arg0: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%2) : (tensor<f32>) -> ()
  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %3 = "stablehlo.transpose"(%1) <{permutation = array<i64: 0>}> : (tensor<3xf32>) -> tensor<3xf32>
  "func.return"(%3) : (tensor<3xf32>) -> ()
}
"#;

const PRETTY: &str = r#"func.func @main(%arg0: tensor<2x3xf32>) -> tensor<3xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = stablehlo.transpose %0, dims = [0] : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
"#;

#[test]
fn the_generic_and_the_pretty_form_mean_the_same() {
    let args = json!([{"shape": "f32[2,3]", "value": [[1, 2, 3], [4, 5, -6.5]]}]);
    let expected = json!({"shape": "f32[3]", "value": [5, 7, -3.5]});
    assert_runs(GENERIC, args.clone(), expected.clone());
    assert_runs(PRETTY, args, expected);
}

#[test]
fn dense_literals_in_every_form() {
    let module = r#"func.func @main() -> (tensor<2xf32>, tensor<2x2xbf16>, tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xui64>, tensor<0x2xi8>, tensor<2xf16>, tensor<2xi16>) {
  %0 = stablehlo.constant dense<[0x7FC00001, -0.000000e+00]> : tensor<2xf32>
  %1 = stablehlo.constant dense<1.5> : tensor<2x2xbf16>
  %2 = stablehlo.constant dense<[(1.0, -2.0), (0.5, 0x7F800000)]> : tensor<2xcomplex<f32>>
  %3 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
  %4 = stablehlo.constant dense<[18446744073709551615, 7]> : tensor<2xui64>
  %5 = stablehlo.constant dense<> : tensor<0x2xi8>
  %6 = stablehlo.constant dense<"0x003C00C0"> : tensor<2xf16>
  %7 = stablehlo.constant dense<"0xFFFF"> : tensor<2xi16>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2xf32>, tensor<2x2xbf16>, tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xui64>, tensor<0x2xi8>, tensor<2xf16>, tensor<2xi16>
}"#;
    assert_runs(
        module,
        json!([]),
        json!({"shape": "(f32[2], bf16[2,2], c64[2], pred[3], u64[2], s8[0,2], f16[2], s16[2])", "value": {"tuple": [
            ["0x7fc00001", "-0"], [[1.5, 1.5], [1.5, 1.5]], [[1, -2], [0.5, "inf"]], [true, false, true],
            ["18446744073709551615", 7], [], [1, -2], [-1, -1]
        ]}}),
    );
}

#[test]
fn every_jax_program_as_stablehlo_reads_and_verifies() {
    let mut n = 0;
    for entry in std::fs::read_dir("oracle-cases/programs/stablehlo").expect("oracle-cases/programs/stablehlo exists") {
        let path = entry.expect("an entry").path();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
        let text = doc["module"].as_str().expect("a module string");
        assert!(is_mlir_text(text), "{}", path.display());
        let value = mlir_to_json(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let module = json::read_module(&value, &Path::root(), ReadOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        verify(module, &VerifyOptions { max_elements: 1 << 24, ..VerifyOptions::default() })
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        n += 1;
    }
    // Their values are checked with every other oracle case (tests/oracle.rs).
    assert!(n >= 12, "expected the 12 JAX programs, found {n}");
}

#[test]
fn checks_of_a_test_file_read_as_checks() {
    let text = "// RUN: stablehlo-translate --interpret -split-input-file %s\n\nfunc.func @add_op_test() {\n  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n  %1 = stablehlo.add %0, %0 : tensor<2xi32>\n  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>\n  func.return\n}\n\n// -----\n\nfunc.func @close() {\n  %0 = stablehlo.constant dense<0.5> : tensor<f32>\n  %1 = stablehlo.sine %0 : tensor<f32>\n  check.expect_almost_eq %1, %0 : tensor<f32>\n  func.return\n}\n";
    let file = read_test_file(text);
    assert_eq!(file.disabled, None);
    assert_eq!(file.modules.len(), 2);
    assert_eq!(file.modules[0].name, "add_op_test");
    assert_eq!(file.modules[0].checks[0].kind, CheckKind::Eq);
    assert_eq!(file.modules[0].checks[0].line, 6);
    assert_eq!(
        file.modules[0].checks[0].expected,
        CheckExpected::Const(json!({"shape": "s32[2]", "value": {"bytes": "0200000004000000"}}))
    );
    assert_eq!(file.modules[1].line, 11);
    assert_eq!(file.modules[1].checks[0].kind, CheckKind::AlmostEq { tolerance: None });
    assert_eq!(file.modules[1].checks[0].expected, CheckExpected::Output(1));
    let disabled = read_test_file("// RUN-DISABLED: the interpreter lacks this op\nfunc.func @main() {\n  func.return\n}\n");
    assert_eq!(disabled.disabled.as_deref(), Some("the interpreter lacks this op"));
}

#[test]
fn errors_name_the_line_column_and_construct() {
    let cases = [
        ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.frobnicate %a : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}", 2, "`stablehlo.frobnicate`"),
        ("func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {\n  return %a : tensor<?xf32>\n}", 1, "unbounded"),
        ("func.func @main(%a: tensor<2xi4>) -> tensor<2xi4> {\n  return %a : tensor<2xi4>\n}", 1, "`i4`"),
        ("func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 1.0>>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}", 1, "quantized"),
        ("func.func @main() -> tensor<2xf32> {\n  return %zz : tensor<2xf32>\n}", 2, "`%zz` is not defined"),
        ("func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}", 2, "3 items where the type has 2"),
        ("func.func @main(%a: tensor<1xi64>) -> tensor<2xf32> {\n  %0 = stablehlo.dynamic_iota %a, dim = 0 : (tensor<1xi64>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}", 2, "dynamic shapes"),
        ("func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n", 1, "not closed"),
    ];
    for (text, line, needle) in cases {
        let e = mlir_to_json(text).expect_err(text);
        assert_eq!(e.line, line, "{e}");
        assert!(e.message.contains(needle), "{e} does not say {needle}");
        assert!(e.to_string().starts_with(&format!("MLIR line {line}, column ")), "{e}");
    }
    // A rule of the document broken: the verifier names the op's place.
    let text = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %a : tensor<3xf32>\n  return %0 : tensor<2xf32>\n}";
    let module = json::parse_module(text, ReadOptions::default()).expect("reads");
    let e = verify(module, &VerifyOptions::default()).expect_err("declared f32[3]");
    assert_eq!(e.location.as_deref(), Some("line 2 column 8"), "{e}");
}

#[test]
fn hostile_nesting_and_truncations_are_errors_not_crashes() {
    let deep_types = format!("func.func @main(%a: {}tensor<f32>{}) {{\n  return\n}}", "tuple<".repeat(100_000), ">".repeat(100_000));
    assert!(mlir_to_json(&deep_types).expect_err("deep tuple").message.contains("nested too deeply"));
    let deep_dense = format!(
        "func.func @main() {{\n  %0 = stablehlo.constant dense<{}1{}> : tensor<f32>\n  return\n}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(mlir_to_json(&deep_dense).is_err());
    let mut regions = String::from("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n");
    for _ in 0..5000 {
        regions.push_str("%r = \"stablehlo.case\"(%i) ({\n");
    }
    assert!(mlir_to_json(&regions).is_err());
    let deep_attrs = format!("func.func @main() attributes {{a = {}1{}}} {{\n  return\n}}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(mlir_to_json(&deep_attrs).is_err());
    for cut in (0..JAX_PROGRAM.len()).step_by(37) {
        let Some(prefix) = JAX_PROGRAM.get(..cut) else { continue };
        if let Ok(v) = mlir_to_json(prefix) {
            if let Ok(m) = json::read_module(&v, &Path::root(), ReadOptions { max_elements: 1 << 20 }) {
                let _ = verify(m, &VerifyOptions { max_elements: 1 << 20, ..VerifyOptions::default() });
            }
        }
    }
}

#[test]
fn eval_and_import_take_mlir_on_the_command_line() {
    let dir = std::env::temp_dir().join(format!("xlaref-mlir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // No `.mlir` suffix: the format is told by content.
    let prog = dir.join("prog.txt");
    std::fs::write(&prog, PRETTY).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_xlaref"))
        .arg("eval")
        .arg(&prog)
        .arg("--arg")
        .arg("f32[2,3]=[[1,2,3],[4,5,6]]")
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).expect("a typed literal");
    assert_eq!(result, json!({"shape": "f32[3]", "value": [5.0, 7.0, 9.0]}));

    let out = Command::new(env!("CARGO_BIN_EXE_xlaref")).arg("import").arg(&prog).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let imported: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(imported["format"], "xla-json/1");

    let bad = dir.join("bad.mlir");
    std::fs::write(&bad, "func.func @main() {\n  %0 = stablehlo.add %x : tensor<f32>\n  return\n}\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_xlaref")).arg("eval").arg(&bad).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn infeed_and_outfeed_carry_their_tokens() {
    let module = r#"func.func @main() -> tensor<2xi32> {
  %t = stablehlo.after_all : !stablehlo.token
  %0:3 = "stablehlo.infeed"(%t) <{infeed_config = ""}> : (!stablehlo.token) -> (tensor<2xi32>, tensor<f32>, !stablehlo.token)
  %1 = "stablehlo.outfeed"(%0#1, %0#2) <{outfeed_config = ""}> : (tensor<f32>, !stablehlo.token) -> !stablehlo.token
  return %0#0 : tensor<2xi32>
}"#;
    let case = json!({"format": "xla-json/1", "name": "feeds", "module": module, "args": [],
        "infeed": [{"shape": "(s32[2], f32[])", "value": {"tuple": [[3, -4], 2.5]}}],
        "outfeed": [{"shape": "f32[]", "value": 2.5}],
        "expected": {"shape": "s32[2]", "value": [3, -4]}});
    let options = RunOptions::default();
    let case = read_case(&case, &Path::root(), &options).unwrap_or_else(|e| panic!("the case reads: {e}"));
    for engine in engines() {
        let outcome = run_case(&case, engine, &options);
        assert!(judge(&case, &outcome).is_ok(), "{}: {:?}", engine.name(), outcome.result);
    }
}

#[test]
fn send_and_recv_pair_across_replicas() {
    let module = r#"func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %id = stablehlo.replica_id : tensor<ui32>
  %zero = stablehlo.constant dense<0> : tensor<ui32>
  %is0 = stablehlo.compare EQ, %id, %zero : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %r = "stablehlo.if"(%is0) ({
    %t = stablehlo.after_all : !stablehlo.token
    %done = "stablehlo.send"(%x, %t) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false}> : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
    %n = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %n : tensor<2xf32>
  }, {
    %t = stablehlo.after_all : !stablehlo.token
    %d:2 = "stablehlo.recv"(%t) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false}> : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
    stablehlo.return %d#0 : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}"#;
    let case = json!({"format": "xla-json/1", "name": "send_recv", "module": module, "replicas": 2,
        "replica_args": [[{"shape": "f32[2]", "value": [1.5, -2]}], [{"shape": "f32[2]", "value": [7, 8]}]],
        "expected_per_replica": [{"shape": "f32[2]", "value": [-1.5, 2]}, {"shape": "f32[2]", "value": [1.5, -2]}]});
    let options = RunOptions::default();
    let case = read_case(&case, &Path::root(), &options).unwrap_or_else(|e| panic!("the case reads: {e}"));
    for engine in engines() {
        let outcome = run_case(&case, engine, &options);
        assert!(judge(&case, &outcome).is_ok(), "{}: {:?}", engine.name(), outcome.result);
    }
}
