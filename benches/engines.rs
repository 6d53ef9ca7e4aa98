//! `cargo bench`: the workloads of `xlaref bench` at small sizes, on both
//! engines (divan). The reference only runs the sizes it handles quickly.

use std::sync::OnceLock;

use xlaref::cli::bench::{specs, Instance, Spec};
use xlaref::harness::engine::{Engine, Fast, Reference};
use xlaref_reference::eval::{Env, Limits};

fn main() {
    divan::main();
}

/// The workload named `name` at its `--quick` size (the reference's size
/// when `reference`).
fn instance(name: &str, reference: bool) -> Instance {
    let all = specs();
    let s: &Spec = all.iter().find(|s| s.name == name).expect("a known workload");
    let n = if reference { s.quick.min(s.reference_max) } else { s.quick };
    (s.build)(n).expect("the workload builds")
}

fn run(bencher: divan::Bencher, engine: &'static dyn Engine, inst: &'static Instance) {
    bencher.with_inputs(|| inst.args.clone()).bench_values(|args| {
        let mut env = Env::new(Limits::default());
        // A kernel that is not written yet fails: that is timed too, and cheap.
        let _ = engine.run(&inst.module, args, &mut env);
    });
}

const NAMES: &[&str] = &["dot-f32", "dot-f64", "add", "exp", "reduce-sum", "transpose", "conv", "reduce-window", "sort", "fft", "gather"];

fn cached(reference: bool, name: &str) -> &'static Instance {
    static FAST: OnceLock<Vec<Instance>> = OnceLock::new();
    static REFERENCE: OnceLock<Vec<Instance>> = OnceLock::new();
    let list = if reference { &REFERENCE } else { &FAST };
    let all = list.get_or_init(|| NAMES.iter().map(|n| instance(n, reference)).collect());
    let i = NAMES.iter().position(|n| *n == name).expect("a known workload");
    &all[i]
}

#[divan::bench(args = NAMES, sample_count = 10)]
fn fast(bencher: divan::Bencher, name: &str) {
    run(bencher, &Fast, cached(false, name));
}

#[divan::bench(args = NAMES, sample_count = 3, sample_size = 1)]
fn reference(bencher: divan::Bencher, name: &str) {
    run(bencher, &Reference, cached(true, name));
}
