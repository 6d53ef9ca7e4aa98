//! Statistical conformance of RngUniform and RngNormal (document §RngUniform,
//! §RngNormal): Kolmogorov–Smirnov against U[a, b) and N(mu, sigma),
//! chi-square on integer ranges. Fixed seeds and a fixed significance level
//! make every test deterministic; each runs on both engines, and the two
//! engines must agree bit for bit (they implement the same documented
//! stream, docs/semantics-decisions.md).

use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};
use xlaref::harness::engine::{Engine, Fast, Reference};
use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{parse_module, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::verify::{verify, VerifiedModule, VerifyOptions};

/// Rejection threshold of every test: a correct generator fails one test
/// with this probability (and, with fixed seeds, then fails it forever).
const SIGNIFICANCE: f64 = 1e-3;
const N: usize = 100_000;
const ENGINES: [&dyn Engine; 2] = [&Reference, &Fast];

fn module(text: &str) -> VerifiedModule {
    let m = parse_module(text, ReadOptions::default()).expect("module reads");
    verify(m, &VerifyOptions::default()).expect("module verifies")
}

/// `op(a, b)` of shape `t[n]`.
fn rng_module(op: &str, t: &str, n: usize) -> VerifiedModule {
    module(&format!(
        r#"{{"format": "xla-json/1", "computations": {{"main": {{
            "params": [{{"name": "a", "shape": "{t}[]"}}, {{"name": "b", "shape": "{t}[]"}}],
            "instructions": [{{"name": "r", "op": "{op}", "operands": ["a", "b"], "shape": "{t}[{n}]"}}]}}}}}}"#
    ))
}

fn scalar(data: Data) -> Literal {
    ArrayLiteral::new(vec![], data).into()
}

fn run(engine: &dyn Engine, m: &VerifiedModule, args: Vec<Literal>, seed: u64) -> Literal {
    let mut env = Env::new(Limits::default());
    env.seed = seed;
    engine.run(m, args, &mut env).unwrap_or_else(|e| panic!("{} engine: {e}", engine.name()))
}

/// Draws on both engines, checks they agree bit for bit, returns the values.
fn draw(op: &str, t: &str, a: Data, b: Data, seed: u64) -> Data {
    let m = rng_module(op, t, N);
    let args = vec![scalar(a), scalar(b)];
    let reference = run(&Reference, &m, args.clone(), seed);
    let fast = run(&Fast, &m, args, seed);
    assert!(reference.bits_equal(&fast), "{op} {t}: the engines' streams differ");
    reference.into_array().expect("an array").data
}

fn as_f64(d: &Data) -> Vec<f64> {
    match d {
        Data::F32(v) => v.iter().map(|&x| x as f64).collect(),
        Data::F64(v) => v.clone(),
        _ => panic!("not f32/f64"),
    }
}

/// The Kolmogorov–Smirnov p-value of `sample` against `cdf` (asymptotic
/// Kolmogorov distribution with Stephens' small-sample correction).
fn ks_p_value(mut sample: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    sample.sort_by(|x, y| x.total_cmp(y));
    let n = sample.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in sample.iter().enumerate() {
        let f = cdf(x);
        d = d.max(f - i as f64 / n).max((i + 1) as f64 / n - f);
    }
    let lambda = (n.sqrt() + 0.12 + 0.11 / n.sqrt()) * d;
    let mut p = 0.0;
    for k in 1..=100 {
        let k = k as f64;
        p += 2.0 * (-1f64).powf(k - 1.0) * (-2.0 * k * k * lambda * lambda).exp();
    }
    p.clamp(0.0, 1.0)
}

/// The chi-square p-value of `counts` against equal expected counts.
fn chi_square_p_value(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    let expected = total as f64 / counts.len() as f64;
    let stat: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
    let dist = ChiSquared::new((counts.len() - 1) as f64).expect("degrees of freedom");
    dist.sf(stat)
}

#[test]
fn uniform_f32_is_uniform_on_a_b() {
    for seed in [1, 2] {
        let v = as_f64(&draw("RngUniform", "f32", Data::F32(vec![-2.0]), Data::F32(vec![3.0]), seed));
        assert!(v.iter().all(|&x| (-2.0..3.0).contains(&x)), "a value outside [a, b)");
        let p = ks_p_value(v, |x| ((x + 2.0) / 5.0).clamp(0.0, 1.0));
        assert!(p > SIGNIFICANCE, "seed {seed}: KS p-value {p}");
    }
}

#[test]
fn uniform_f64_is_uniform_on_a_b() {
    let v = as_f64(&draw("RngUniform", "f64", Data::F64(vec![10.0]), Data::F64(vec![10.5]), 3));
    assert!(v.iter().all(|&x| (10.0..10.5).contains(&x)));
    let p = ks_p_value(v, |x| ((x - 10.0) / 0.5).clamp(0.0, 1.0));
    assert!(p > SIGNIFICANCE, "KS p-value {p}");
}

#[test]
fn normal_f32_is_normal() {
    let v = as_f64(&draw("RngNormal", "f32", Data::F32(vec![1.5]), Data::F32(vec![2.0]), 4));
    let dist = Normal::new(1.5, 2.0).expect("normal");
    let p = ks_p_value(v, |x| dist.cdf(x));
    assert!(p > SIGNIFICANCE, "KS p-value {p}");
}

#[test]
fn normal_f64_is_standard_normal() {
    for seed in [5, 6] {
        let v = as_f64(&draw("RngNormal", "f64", Data::F64(vec![0.0]), Data::F64(vec![1.0]), seed));
        let dist = Normal::new(0.0, 1.0).expect("normal");
        let p = ks_p_value(v, |x| dist.cdf(x));
        assert!(p > SIGNIFICANCE, "seed {seed}: KS p-value {p}");
    }
}

#[test]
fn uniform_s32_is_uniform_on_its_range() {
    let d = draw("RngUniform", "s32", Data::S32(vec![-3]), Data::S32(vec![7]), 7);
    let Data::S32(v) = d else { panic!("s32") };
    let mut counts = [0u64; 10];
    for x in v {
        assert!((-3..7).contains(&x), "{x} outside [-3, 7)");
        counts[(x + 3) as usize] += 1;
    }
    let p = chi_square_p_value(&counts);
    assert!(p > SIGNIFICANCE, "chi-square p-value {p}, counts {counts:?}");
}

#[test]
fn uniform_u8_covers_every_value() {
    let d = draw("RngUniform", "u8", Data::U8(vec![0]), Data::U8(vec![255]), 8);
    let Data::U8(v) = d else { panic!("u8") };
    let mut counts = [0u64; 255];
    for x in v {
        assert!(x < 255);
        counts[x as usize] += 1;
    }
    let p = chi_square_p_value(&counts);
    assert!(p > SIGNIFICANCE, "chi-square p-value {p}");
}

#[test]
fn uniform_s64_full_range_is_uniform() {
    let d = draw("RngUniform", "s64", Data::S64(vec![i64::MIN]), Data::S64(vec![i64::MAX]), 9);
    let Data::S64(v) = d else { panic!("s64") };
    // 16 bins by the top four bits of x - MIN (the last one 1 short of 2^60).
    let mut counts = [0u64; 16];
    for x in v {
        assert!(x < i64::MAX);
        counts[((x as u64) ^ (1 << 63)) as usize >> 60] += 1;
    }
    let p = chi_square_p_value(&counts);
    assert!(p > SIGNIFICANCE, "chi-square p-value {p}");
}

#[test]
fn streams_are_deterministic_per_seed_and_fresh_per_execution() {
    // Two RngUniform in one module read different streams; a run repeats
    // with its seed, and another seed gives other values.
    let m = module(
        r#"{"format": "xla-json/1", "computations": {"main": {
            "params": [{"name": "a", "shape": "u32[]"}, {"name": "b", "shape": "u32[]"}],
            "instructions": [
                {"name": "x", "op": "RngUniform", "operands": ["a", "b"], "shape": "u32[64]"},
                {"name": "y", "op": "RngUniform", "operands": ["a", "b"], "shape": "u32[64]"},
                {"name": "t", "op": "Tuple", "operands": ["x", "y"]}]}}}"#,
    );
    let args = || vec![scalar(Data::U32(vec![0])), scalar(Data::U32(vec![u32::MAX]))];
    for engine in ENGINES {
        let first = run(engine, &m, args(), 11);
        let again = run(engine, &m, args(), 11);
        let other = run(engine, &m, args(), 12);
        assert!(first.bits_equal(&again), "{}: not deterministic", engine.name());
        assert!(!first.bits_equal(&other), "{}: the seed is ignored", engine.name());
        let t = first.as_tuple().expect("tuple");
        assert!(!t[0].bits_equal(&t[1]), "{}: two executions share a stream", engine.name());
    }
    assert!(run(&Reference, &m, args(), 11).bits_equal(&run(&Fast, &m, args(), 11)));
}

#[test]
fn bit_generator_engines_agree_on_large_outputs() {
    // Large enough for the fast engine's parallel chunks; the reference is
    // pinned to XLA CPU by oracle-cases/rng on small shapes.
    for (alg, state, shape) in [
        ("PHILOX", "u64[3]", "u32[100003]"),
        ("PHILOX", "u64[2]", "u64[3,16667]"),
        ("DEFAULT", "u64[3]", "u8[40001]"),
        ("THREE_FRY", "u64[2]", "u32[5,20001]"),
        ("THREE_FRY", "u64[2]", "f16[40000,1]"),
        ("THREE_FRY", "u64[2]", "s64[33333]"),
    ] {
        let m = module(&format!(
            r#"{{"format": "xla-json/1", "computations": {{"main": {{
                "params": [{{"name": "s", "shape": "{state}"}}],
                "instructions": [{{"name": "r", "op": "RngBitGenerator", "operands": ["s"], "algorithm": "{alg}", "shape": "{shape}"}}]}}}}}}"#
        ));
        let n = if state == "u64[3]" { 3 } else { 2 };
        let s: Literal = ArrayLiteral::new(vec![n], Data::U64(vec![0x0123_4567_89AB_CDEF, u64::MAX - 7, 3][..n as usize].to_vec())).into();
        let reference = run(&Reference, &m, vec![s.clone()], 0);
        let fast = run(&Fast, &m, vec![s], 0);
        assert!(reference.bits_equal(&fast), "{alg} {shape}: the engines differ");
    }
}
