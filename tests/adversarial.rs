//! No panic on any input: thousands of malformed and adversarial modules —
//! mutations of the golden suite's modules and of a module per op — go
//! through read, verify and run under small limits. Each must end in a value
//! or an error, never a panic or a hang.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use xlaref::harness::case::case_files;
use xlaref::harness::engine::{Engine, Fast, Reference};
use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{self, read_module, Path as JsonPath, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::Shape;
use xlaref_reference::verify::{verify, VerifyOptions};

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const NASTY_INTEGERS: [i64; 14] = [0, 1, -1, 2, -2, 3, 7, 64, 65, 1 << 20, i32::MAX as i64, i32::MIN as i64, i64::MAX, i64::MIN];
const OP_NAMES: [&str; 48] = [
    "Add",
    "Sub",
    "Div",
    "Rem",
    "Pow",
    "ShiftLeft",
    "Eq",
    "LtTotalOrder",
    "Abs",
    "Sqrt",
    "Clz",
    "Not",
    "Broadcast",
    "BroadcastInDim",
    "Reshape",
    "Collapse",
    "Transpose",
    "Rev",
    "Slice",
    "ConcatInDim",
    "Pad",
    "Iota",
    "Select",
    "Clamp",
    "ConvertElementType",
    "BitcastConvertType",
    "ReducePrecision",
    "Tuple",
    "GetTupleElement",
    "DynamicSlice",
    "DynamicUpdateSlice",
    "Gather",
    "Scatter",
    "Reduce",
    "ReduceWindow",
    "SelectAndScatter",
    "Map",
    "Sort",
    "Dot",
    "DotGeneral",
    "Conv",
    "Fft",
    "Cholesky",
    "TriangularSolve",
    "BatchNormTraining",
    "Call",
    "While",
    "Conditional",
];
const SHAPES: [&str; 10] =
    ["f32[]", "s32[3]", "f32[0,2]", "pred[2,2]", "(f32[], s32[])", "u8[1,1,1]", "f64[99999999,99999999]", "c64[2]", "token[]", "f32[2,"];

/// Changes one random spot of a JSON value.
fn mutate(v: &mut Value, rng: &mut Rng) {
    let mut n = rng.below(count(v));
    let Some(target) = nth_mut(v, &mut n) else { return };
    *target = match (rng.below(8), &*target) {
        (0, _) => json!(NASTY_INTEGERS[rng.below(NASTY_INTEGERS.len())]),
        (1, Value::String(_)) => json!(OP_NAMES[rng.below(OP_NAMES.len())]),
        (2, Value::String(_)) => json!(SHAPES[rng.below(SHAPES.len())]),
        (3, Value::Array(a)) if !a.is_empty() => {
            let mut a = a.clone();
            a.remove(rng.below(a.len()));
            Value::Array(a)
        }
        (4, Value::Array(a)) => {
            let mut a = a.clone();
            a.push(json!(NASTY_INTEGERS[rng.below(NASTY_INTEGERS.len())]));
            Value::Array(a)
        }
        (5, Value::Object(o)) if !o.is_empty() => {
            let mut o = o.clone();
            let key = o.keys().nth(rng.below(o.len())).cloned().unwrap_or_default();
            o.remove(&key);
            Value::Object(o)
        }
        (6, _) => [json!("SAME"), json!(-1), json!(0), json!([1, -1])][rng.below(4)].clone(),
        (_, Value::Number(_)) => json!(NASTY_INTEGERS[rng.below(NASTY_INTEGERS.len())].wrapping_add(1)),
        (_, other) => other.clone(),
    };
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count).sum(),
        Value::Object(o) => o.values().map(count).sum(),
        _ => 0,
    }
}

/// The n-th node of `v` in pre-order.
fn nth_mut<'a>(v: &'a mut Value, n: &mut usize) -> Option<&'a mut Value> {
    if *n == 0 {
        return Some(v);
    }
    *n -= 1;
    match v {
        Value::Array(a) => a.iter_mut().find_map(|x| nth_mut(x, n)),
        Value::Object(o) => o.values_mut().find_map(|x| nth_mut(x, n)),
        _ => None,
    }
}

/// Zero-valued arguments for the entry parameters, when small enough.
fn zero_args(shapes: &[Shape]) -> Option<Vec<Literal>> {
    shapes
        .iter()
        .map(|s| match s {
            Shape::Array(a) if a.checked_element_count().is_some_and(|n| n <= 1 << 12) => Some(Literal::Array(ArrayLiteral::zeros(a))),
            Shape::Token => Some(Literal::Token),
            _ => None,
        })
        .collect()
}

/// Reads, verifies and runs one module on both engines under small limits.
fn exercise(module: &Value) {
    let limits = Limits {
        max_elements: 1 << 16,
        max_while_trips: 1000,
        deadline: Some(Instant::now() + Duration::from_secs(2)),
        ..Limits::default()
    };
    let Ok(m) = read_module(module, &JsonPath::root(), ReadOptions { max_elements: 1 << 16 }) else { return };
    let Ok(vm) = verify(m, &VerifyOptions { max_elements: 1 << 16, ..VerifyOptions::default() }) else { return };
    let Some(args) = zero_args(&vm.entry_signature().params) else { return };
    for engine in [&Reference as &dyn Engine, &Fast] {
        let mut env = Env::new(limits.clone());
        let _ = engine.run(&vm, args.clone(), &mut env);
    }
}

fn seed_modules() -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases");
    let mut out = Vec::new();
    for file in case_files(&root).unwrap_or_default() {
        let Ok(doc) = json::parse_json(&std::fs::read_to_string(&file).unwrap_or_default()) else { continue };
        match doc.get("cases").and_then(Value::as_array) {
            Some(list) => out.extend(list.iter().filter_map(|c| c.get("module").cloned())),
            None => out.extend(doc.get("module").cloned()),
        }
    }
    // One small module per op name, so every parser and verifier path is hit.
    for op in OP_NAMES {
        out.push(json!({"computations": {
            "f": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}], "instructions": [{"name": "s", "op": "Add", "operands": ["a", "b"]}]},
            "main": {"params": [{"name": "x", "shape": "f32[2,3]"}, {"name": "y", "shape": "s32[2]"}],
                "instructions": [{"name": "r", "op": op, "operands": ["x", "y"], "dimensions": [1], "computation": "f"}]}}}));
    }
    out
}

#[test]
fn malformed_and_adversarial_modules_never_panic() {
    let seeds = seed_modules();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut panics = Vec::new();
    let started = Instant::now();
    let rounds = 3000;
    for round in 0..rounds {
        let mut module = seeds[round % seeds.len()].clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut module, &mut rng);
        }
        if catch_unwind(AssertUnwindSafe(|| exercise(&module))).is_err() {
            panics.push(module.to_string());
        }
    }
    for p in panics.iter().take(5) {
        eprintln!("panicked on: {p}");
    }
    assert!(panics.is_empty(), "{} of {rounds} adversarial modules panicked", panics.len());
    assert!(started.elapsed() < Duration::from_secs(120), "adversarial inputs took too long: a hang?");
}

#[test]
fn malformed_json_text_never_panics() {
    let mut rng = Rng(42);
    let base = json!({"computations": {"main": {"params": [{"name": "x", "shape": "f32[2]"}], "instructions": [{"name": "y", "op": "Neg", "operands": ["x"]}]}}}).to_string();
    let mut texts: Vec<String> = vec![
        "".into(),
        "{".into(),
        "[]".into(),
        "null".into(),
        "1e999999".into(),
        "[".repeat(100_000),
        "{\"computations\":".repeat(10_000),
    ];
    for _ in 0..1000 {
        let mut bytes = base.clone().into_bytes();
        let at = rng.below(bytes.len());
        match rng.below(3) {
            0 => bytes[at] = b"{}[],:\"0-e."[rng.below(11)],
            1 => {
                bytes.remove(at);
            }
            _ => bytes.insert(at, b"{}[],:\"0-e."[rng.below(11)]),
        }
        texts.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    for t in &texts {
        let result = catch_unwind(|| {
            if let Ok(m) = json::parse_module(t, ReadOptions::default()) {
                let _ = verify(m, &VerifyOptions::default());
            }
        });
        assert!(result.is_ok(), "panicked on: {t}");
    }
}

/// A misspelt `XLAREF_FAST_ISA` would silently test the wrong kernels: the
/// CLI refuses it as bad input (exit code 2), naming the accepted values,
/// and takes every valid one.
#[test]
fn an_unknown_isa_cap_is_bad_input() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases/shape/transpose.json");
    let check = |isa: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_xlaref"))
            .args(["check", "--engine", "fast"])
            .arg(&case)
            .env("XLAREF_FAST_ISA", isa)
            .output()
            .expect("xlaref runs")
    };
    let out = check("avx9");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("XLAREF_FAST_ISA") && stderr.contains("avx512vbmi"), "{stderr}");
    for isa in ["portable", "avx2", "avx512", "avx512vbmi"] {
        let out = check(isa);
        assert!(out.status.success(), "{isa}: {}", String::from_utf8_lossy(&out.stdout));
    }
}
