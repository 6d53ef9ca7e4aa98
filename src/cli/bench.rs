//! `xlaref bench [--ops NAME,...] [--quick]`: times a fixed set of
//! workloads on the reference and the fast engine and prints a table next
//! to XLA CPU's figures for the same workloads on the same machine.
//!
//! Each workload is built as an xla-json/1 module with the generators'
//! builder (`gen::Builder`), read and verified like any module. The reference is a plain interpreter, so it
//! runs a scaled-down instance when the full one would take too long and
//! its time is extrapolated by the reference's own cost model (elements,
//! flops, N² for its DFT, N log N for its sort); such times are marked `~`.
//! Memory-bound workloads run it at full size, since a small instance fits
//! in the caches and its time does not scale to the full one. Both engines
//! are timed warm, as a best of several runs.

use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};
use xlaref_reference::eval::elementwise::convert;
use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::ElementType;
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

use super::{bench_memory, bench_programs, EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::gen::Builder;
use crate::harness::engine::{self, Engine};

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Only these workloads (comma-separated names or op names, e.g. `dot,fft`).
    #[arg(long, value_delimiter = ',')]
    pub ops: Vec<String>,
    /// Small sizes and a single timed run each: finishes in seconds.
    #[arg(long)]
    pub quick: bool,
    /// Skip the reference engine.
    #[arg(long)]
    pub no_reference: bool,
    /// Add a column with the fast engine's peak memory over the bytes of
    /// the inputs and outputs, each workload measured in a child process.
    #[arg(long)]
    pub memory: bool,
    /// Time whole programs instead: the directory `tools/program_bench.py`
    /// wrote (HLO and StableHLO, `.npy` arguments, XLA CPU's result and
    /// times); each result is judged against XLA's.
    #[arg(long, value_name = "DIR")]
    pub programs: Option<String>,
    /// (Internal) measure one workload's peak memory and print it.
    #[arg(long, hide = true)]
    pub memory_child: bool,
}

/// What one run of a workload does, for the rate column.
#[derive(Clone, Copy, Debug)]
pub enum Work {
    /// Floating-point operations.
    Flops(f64),
    /// Bytes read and written.
    Bytes(f64),
    /// Only the time is reported.
    Time,
}

/// One built workload: a verified module and its arguments.
pub struct Instance {
    pub shape: String,
    pub module: VerifiedModule,
    pub args: Vec<Literal>,
    pub work: Work,
}

/// A workload at any size `n` (its meaning depends on the workload).
pub struct Spec {
    /// Unique name, e.g. `dot-f32`.
    pub name: &'static str,
    /// The op it exercises, as `--ops` may name it.
    pub op: &'static str,
    /// Sizes: full run, quick run, largest the reference runs.
    pub full: usize,
    pub quick: usize,
    pub reference_max: usize,
    /// Builds the instance of size `n`.
    pub build: fn(usize) -> Result<Instance, String>,
    /// The reference's cost at size `n` (for extrapolation).
    pub reference_cost: fn(usize) -> f64,
    /// XLA CPU's figure for the full size, recorded on a Zen 4 host
    /// (`tools/xla_bench.py`); a reference point, not a same-session
    /// measurement (the host's clock changes between sessions).
    pub xla: &'static str,
}

/// Deterministic pseudo-random values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 23) as f32) - 1.0
        })
        .collect()
}

/// A module of one instruction, `op` with `attrs` on parameters holding
/// `args`, built with the generators' [`Builder`] and read and verified
/// like any module. `setup` adds what the instruction needs besides: it
/// names computations in `attrs` and returns constant operands, which come
/// after the parameters.
fn one_op(
    op: &str,
    args: Vec<Literal>,
    mut attrs: Value,
    setup: impl FnOnce(&mut Builder, &mut Value) -> Vec<String>,
) -> Result<(VerifiedModule, Vec<Literal>), String> {
    let mut b = Builder::default();
    let mut operands: Vec<String> = args.into_iter().map(|a| b.param(a)).collect();
    operands.extend(setup(&mut b, &mut attrs));
    let refs: Vec<&str> = operands.iter().map(String::as_str).collect();
    b.push(op, &refs, attrs);
    let program = b.finish("bench");
    Ok((program.verified(1 << 30)?, program.args))
}

fn f32_array(dims: Vec<i64>, seed: u64) -> Literal {
    let n = dims.iter().product::<i64>() as usize;
    ArrayLiteral::from_vec(dims, values(n, seed)).into()
}

fn f32_scalar(v: f32) -> Literal {
    ArrayLiteral::from_vec(vec![], vec![v]).into()
}

fn dims_text(t: &str, dims: &[i64]) -> String {
    format!("{t}[{}]", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","))
}

fn dot(t: &'static str, n: usize) -> Result<Instance, String> {
    let d = vec![n as i64, n as i64];
    let arg = |seed| -> Literal {
        let v = values(n * n, seed);
        if t == "f64" {
            ArrayLiteral::from_vec(d.clone(), v.into_iter().map(f64::from).collect::<Vec<_>>()).into()
        } else {
            ArrayLiteral::from_vec(d.clone(), v).into()
        }
    };
    let (module, args) = one_op("Dot", vec![arg(1), arg(2)], json!({}), |_, _| vec![])?;
    Ok(Instance { shape: format!("{t} {n}x{n}x{n}"), module, args, work: Work::Flops(2.0 * (n as f64).powi(3)) })
}

fn elementwise(op: &str, binary: bool, n: usize) -> Result<Instance, String> {
    let args = if binary { vec![f32_array(vec![n as i64], 1), f32_array(vec![n as i64], 2)] } else { vec![f32_array(vec![n as i64], 1)] };
    elementwise_instance(op, n, args)
}

/// A unary op on values in [0.5, 4): inside the domain of Log (the other
/// workloads' values lie in [-1, 1)).
fn positive_elementwise(op: &str, n: usize) -> Result<Instance, String> {
    let values = values(n, 1).into_iter().map(|v| (v + 1.0) * 1.75 + 0.5).collect();
    elementwise_instance(op, n, vec![ArrayLiteral::from_vec(vec![n as i64], values).into()])
}

fn elementwise_instance(op: &str, n: usize, args: Vec<Literal>) -> Result<Instance, String> {
    // Each operand read once, the result written once.
    let bytes = 4.0 * n as f64 * (args.len() + 1) as f64;
    let (module, args) = one_op(op, args, json!({}), |_, _| vec![])?;
    Ok(Instance { shape: format!("f32[{n}]"), module, args, work: Work::Bytes(bytes) })
}

fn reduce_sum(n: usize) -> Result<Instance, String> {
    let (module, args) = one_op("Reduce", vec![f32_array(vec![n as i64], 3)], json!({"dimensions": [0]}), |b, attrs| {
        attrs["computation"] = b.binary_computation("Add", ElementType::F32).into();
        vec![b.constant(&f32_scalar(0.0))]
    })?;
    Ok(Instance { shape: format!("f32[{n}] -> f32[]"), module, args, work: Work::Bytes(4.0 * n as f64) })
}

fn transpose(n: usize) -> Result<Instance, String> {
    let d = vec![n as i64, n as i64];
    let (module, args) = one_op("Transpose", vec![f32_array(d, 4)], json!({"permutation": [1, 0]}), |_, _| vec![])?;
    Ok(Instance { shape: format!("f32[{n},{n}]"), module, args, work: Work::Bytes(8.0 * (n * n) as f64) })
}

/// A permutation that does not merge into a batch of matrix transposes:
/// the order of all three dimensions of an n³ cube reversed.
fn transpose_3d(n: usize) -> Result<Instance, String> {
    permuted(ElementType::F32, vec![n as i64; 3], &[2, 1, 0])
}

/// Attention heads moved ahead of the sequence, `[B, S, H, D] -> [B, H, S,
/// D]`, with short rows (D = 4): a batch of matrix transposes of 16-byte
/// elements.
fn transpose_heads(n: usize) -> Result<Instance, String> {
    permuted(ElementType::F32, vec![64, n as i64, 64, 4], &[0, 2, 1, 3])
}

/// A byte matrix (an image plane, a mask) transposed.
fn transpose_u8(n: usize) -> Result<Instance, String> {
    permuted(ElementType::U8, vec![n as i64; 2], &[1, 0])
}

fn permuted(t: ElementType, d: Vec<i64>, permutation: &[i64]) -> Result<Instance, String> {
    let n: i64 = d.iter().product();
    let x = match f32_array(d.clone(), 4) {
        Literal::Array(a) if t != ElementType::F32 => convert(&a, t).into(),
        x => x,
    };
    let (module, args) = one_op("Transpose", vec![x], json!({"permutation": permutation}), |_, _| vec![])?;
    Ok(Instance {
        shape: format!("{} {permutation:?}", dims_text(t.name(), &d)),
        module,
        args,
        work: Work::Bytes(2.0 * (t.byte_width() as i64 * n) as f64),
    })
}

/// N8 C64 n×n, 64 3x3 filters, SAME.
fn conv(n: usize) -> Result<Instance, String> {
    let (lhs, rhs) = (vec![8, 64, n as i64, n as i64], vec![64, 64, 3, 3]);
    let attrs = json!({"window_strides": [1, 1], "padding": "SAME"});
    let (module, args) = one_op("Conv", vec![f32_array(lhs, 5), f32_array(rhs, 6)], attrs, |_, _| vec![])?;
    let flops = 2.0 * 8.0 * (n * n) as f64 * 64.0 * 64.0 * 9.0;
    Ok(Instance { shape: format!("N8 C64 {n}x{n}, 64 3x3 SAME"), module, args, work: Work::Flops(flops) })
}

/// Max pooling 2x2 stride 2 on 8x64xnxn.
fn reduce_window(n: usize) -> Result<Instance, String> {
    let d = vec![8, 64, n as i64, n as i64];
    let attrs = json!({"window_dimensions": [1, 1, 2, 2], "window_strides": [1, 1, 2, 2], "padding": "VALID"});
    let (module, args) = one_op("ReduceWindow", vec![f32_array(d, 7)], attrs, |b, attrs| {
        attrs["computation"] = b.binary_computation("Max", ElementType::F32).into();
        vec![b.constant(&f32_scalar(f32::NEG_INFINITY))]
    })?;
    let elements = (8 * 64 * n * n) as f64;
    Ok(Instance { shape: format!("f32[8,64,{n},{n}] 2x2/2"), module, args, work: Work::Bytes(4.0 * elements * 1.25) })
}

fn sort(n: usize) -> Result<Instance, String> {
    let (module, args) = one_op("Sort", vec![f32_array(vec![n as i64], 8)], json!({"dimension": 0}), |b, attrs| {
        attrs["comparator"] = b.binary_computation("Lt", ElementType::F32).into();
        vec![]
    })?;
    Ok(Instance { shape: format!("f32[{n}]"), module, args, work: Work::Time })
}

fn fft(n: usize) -> Result<Instance, String> {
    let (re, im) = (values(n, 9), values(n, 10));
    let z: Vec<num_complex::Complex<f32>> = re.into_iter().zip(im).map(|(a, b)| num_complex::Complex::new(a, b)).collect();
    let x = ArrayLiteral::from_vec(vec![n as i64], z).into();
    let (module, args) = one_op("Fft", vec![x], json!({"fft_type": "FFT", "fft_length": [n]}), |_, _| vec![])?;
    let flops = 5.0 * n as f64 * (n.max(2) as f64).log2();
    Ok(Instance { shape: format!("c64[{n}]"), module, args, work: Work::Flops(flops) })
}

/// n scalars gathered from n at pseudo-random positions.
fn gather(n: usize) -> Result<Instance, String> {
    let idx: Vec<i32> =
        values(n, 11).into_iter().map(|v| (((v + 1.0) * 0.5 * n as f32) as usize).min(n.saturating_sub(1)) as i32).collect();
    let args = vec![f32_array(vec![n as i64], 12), ArrayLiteral::from_vec(vec![n as i64, 1], idx).into()];
    let attrs = json!({"offset_dims": [], "collapsed_slice_dims": [0], "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [1]});
    let (module, args) = one_op("Gather", args, attrs, |_, _| vec![])?;
    Ok(Instance { shape: format!("f32[{n}], {n} indices"), module, args, work: Work::Time })
}

fn cube(n: usize) -> f64 {
    (n as f64).powi(3)
}
fn linear(n: usize) -> f64 {
    n as f64
}
fn square(n: usize) -> f64 {
    (n as f64).powi(2)
}
fn n_log_n(n: usize) -> f64 {
    n as f64 * (n.max(2) as f64).log2()
}

/// The benchmark's workloads, in table order.
pub fn specs() -> Vec<Spec> {
    let m = 1 << 20;
    vec![
        Spec {
            name: "dot-f32",
            op: "dot",
            full: 1024,
            quick: 256,
            reference_max: 128,
            build: |n| dot("f32", n),
            reference_cost: cube,
            xla: "282 GFLOP/s",
        },
        Spec {
            name: "dot-f64",
            op: "dot",
            full: 1024,
            quick: 256,
            reference_max: 128,
            build: |n| dot("f64", n),
            reference_cost: cube,
            xla: "138 GFLOP/s",
        },
        Spec {
            name: "add",
            op: "add",
            full: 16 * m,
            quick: m,
            reference_max: 16 * m,
            build: |n| elementwise("Add", true, n),
            reference_cost: linear,
            xla: "10.8 GB/s",
        },
        Spec {
            name: "exp",
            op: "exp",
            full: 16 * m,
            quick: m,
            reference_max: 16 * m,
            build: |n| elementwise("Exp", false, n),
            reference_cost: linear,
            xla: "4.6 GB/s",
        },
        Spec {
            name: "reduce-sum",
            op: "reduce",
            full: 16 * m,
            quick: m,
            reference_max: m / 4,
            build: reduce_sum,
            reference_cost: linear,
            xla: "49.8 GB/s",
        },
        Spec {
            name: "transpose",
            op: "transpose",
            full: 4096,
            quick: 1024,
            reference_max: 4096,
            build: transpose,
            reference_cost: square,
            xla: "4.4 GB/s",
        },
        Spec { name: "conv", op: "conv", full: 56, quick: 8, reference_max: 8, build: conv, reference_cost: square, xla: "108 GFLOP/s" },
        Spec {
            name: "reduce-window",
            op: "reduce-window",
            full: 56,
            quick: 16,
            reference_max: 16,
            build: reduce_window,
            reference_cost: square,
            xla: "6.7 GB/s",
        },
        Spec {
            name: "sort",
            op: "sort",
            full: m,
            quick: 1 << 16,
            reference_max: 1 << 14,
            build: sort,
            reference_cost: n_log_n,
            xla: "270 ms",
        },
        Spec {
            name: "fft",
            op: "fft",
            full: m,
            quick: 1 << 16,
            reference_max: 1 << 10,
            build: fft,
            reference_cost: square,
            xla: "14.4 ms",
        },
        Spec {
            name: "gather",
            op: "gather",
            full: m,
            quick: 1 << 16,
            reference_max: m,
            build: gather,
            reference_cost: linear,
            xla: "1.0 ms",
        },
        // Beyond the table: permutations other than a matrix
        // transpose (XLA CPU's figures from tools/xla_bench.py).
        Spec {
            name: "transpose-3d",
            op: "transpose",
            full: 256,
            quick: 64,
            reference_max: 256,
            build: transpose_3d,
            reference_cost: cube,
            xla: "3.9 GB/s",
        },
        Spec {
            name: "transpose-heads",
            op: "transpose",
            full: 1024,
            quick: 64,
            reference_max: 1024,
            build: transpose_heads,
            reference_cost: linear,
            xla: "6.6 GB/s",
        },
        Spec {
            name: "transpose-u8",
            op: "transpose",
            full: 4096,
            quick: 256,
            reference_max: 4096,
            build: transpose_u8,
            reference_cost: square,
            xla: "0.51 GB/s",
        },
        // More f32 transcendentals, as `exp` (16M elements).
        Spec {
            name: "log",
            op: "log",
            full: 16 * m,
            quick: m,
            reference_max: 16 * m,
            build: |n| positive_elementwise("Log", n),
            reference_cost: linear,
            xla: "6.1 GB/s",
        },
        Spec {
            name: "tanh",
            op: "tanh",
            full: 16 * m,
            quick: m,
            reference_max: 16 * m,
            build: |n| elementwise("Tanh", false, n),
            reference_cost: linear,
            xla: "6.3 GB/s",
        },
        Spec {
            name: "logistic",
            op: "logistic",
            full: 16 * m,
            quick: m,
            reference_max: 16 * m,
            build: |n| elementwise("Logistic", false, n),
            reference_cost: linear,
            xla: "6.3 GB/s",
        },
        Spec {
            name: "sin",
            op: "sin",
            full: 16 * m,
            quick: m,
            reference_max: 16 * m,
            build: |n| elementwise("Sin", false, n),
            reference_cost: linear,
            xla: "2.3 GB/s",
        },
    ]
}

/// The outcome of timing one engine on one instance.
pub enum Timing {
    /// Seconds per run; `extrapolated` when measured on a smaller instance.
    Time {
        seconds: f64,
        extrapolated: bool,
    },
    NotImplemented,
    Failed(String),
}

/// One timed run. Engines that can read borrowed arguments run on the
/// instance's own (as XLA's timings run on inputs already in place); the
/// others get a copy made before the clock starts.
fn run_once(engine: &dyn Engine, inst: &Instance) -> Result<Duration, RunError> {
    let mut env = Env::new(Limits { max_elements: 1 << 30, ..Limits::default() });
    let start = Instant::now();
    if let Some(result) = engine.run_borrowed(&inst.module, &inst.args, &mut env) {
        return elapsed_since(start, result);
    }
    let args = inst.args.clone();
    let start = Instant::now();
    elapsed_since(start, engine.run(&inst.module, args, &mut env))
}

/// The time since `start`, taken before the result is freed.
fn elapsed_since(start: Instant, result: Result<Literal, RunError>) -> Result<Duration, RunError> {
    let result = result?;
    let elapsed = start.elapsed();
    drop(result);
    Ok(elapsed)
}

fn classify(e: RunError) -> Timing {
    match e {
        RunError::Unsupported(_) => Timing::NotImplemented,
        e => Timing::Failed(e.to_string()),
    }
}

/// Best time of at least `runs` runs (after a warm-up run), within about
/// `budget`. Short workloads repeat until they have been timed for
/// [`SHORT_WORKLOAD_TIME`] (at most [`MAX_RUNS`] runs): a best of five
/// sub-millisecond runs can all fall in a few milliseconds when the other
/// core is briefly busy, and then shows a parallel op at its one-thread
/// time (Gather measured 0.48 or 0.98 ms from one process to the next;
/// XLA's figures are a best of ten).
pub fn time(engine: &dyn Engine, inst: &Instance, runs: usize, budget: Duration) -> Timing {
    let first = match run_once(engine, inst) {
        Ok(d) => d,
        Err(e) => return classify(e),
    };
    let mut best = first;
    let started = Instant::now();
    let mut done = 1;
    let wanted = |done: usize, spent: Duration| done < runs || (spent < SHORT_WORKLOAD_TIME && done < MAX_RUNS);
    while wanted(done, started.elapsed()) {
        if started.elapsed() + best > budget {
            break;
        }
        match run_once(engine, inst) {
            Ok(d) => best = best.min(d),
            Err(e) => return classify(e),
        }
        done += 1;
    }
    Timing::Time { seconds: best.as_secs_f64(), extrapolated: false }
}

/// How long a short workload is timed for, at least.
const SHORT_WORKLOAD_TIME: Duration = Duration::from_millis(200);
/// Runs of a short workload, at most.
const MAX_RUNS: usize = 50;

fn show_time(t: &Timing) -> String {
    match t {
        Timing::Time { seconds, extrapolated } => {
            let mark = if *extrapolated { "~" } else { "" };
            if *seconds >= 1.0 {
                format!("{mark}{seconds:.2} s")
            } else {
                format!("{mark}{:.3} ms", seconds * 1e3)
            }
        }
        Timing::NotImplemented => "n/a".into(),
        Timing::Failed(_) => "failed".into(),
    }
}

fn rate(work: Work, t: &Timing) -> String {
    let Timing::Time { seconds, .. } = t else { return "n/a".into() };
    match work {
        Work::Flops(f) => format!("{:.1} GFLOP/s", f / seconds / 1e9),
        Work::Bytes(b) => format!("{:.1} GB/s", b / seconds / 1e9),
        Work::Time => "-".into(),
    }
}

pub fn run(a: BenchArgs) -> i32 {
    if let Some(dir) = &a.programs {
        return bench_programs::run(dir, a.no_reference, a.quick);
    }
    let wanted = |s: &Spec| a.ops.is_empty() || a.ops.iter().any(|o| o.eq_ignore_ascii_case(s.name) || o.eq_ignore_ascii_case(s.op));
    let specs: Vec<Spec> = specs().into_iter().filter(wanted).collect();
    if specs.is_empty() {
        eprintln!("error: no workload matches --ops {}", a.ops.join(","));
        return EXIT_BAD_INPUT;
    }
    if a.memory_child {
        return memory_child(&specs, a.quick);
    }
    let (runs, budget) = if a.quick { (2, Duration::from_millis(300)) } else { (5, Duration::from_secs(3)) };
    // The reference too is timed warm, best of a few runs: its first run
    // pays for fresh pages, and a single run of the same transpose read
    // 140 ms or 340 ms from one process to the next.
    let (reference_runs, reference_budget) = if a.quick { (1, Duration::ZERO) } else { (3, Duration::from_secs(2)) };
    out!("{}", if a.quick { "xlaref bench --quick (small sizes; XLA figures are for the full sizes)" } else { "xlaref bench" });
    // The ceilings for Dot and Conv (f64 has half of it) and for the
    // memory-bound workloads on this host today.
    out!(
        "machine: f32 multiply-add peak {:.1} GFLOP/s and memory copy {:.1} GB/s (read + written) on {} threads, measured now; fast kernels: {}",
        xlaref_fast::peak::fma_peak_gflops(),
        xlaref_fast::peak::copy_gbs(),
        rayon::current_num_threads(),
        xlaref_fast::isa::isa().name()
    );
    let header = ["op", "shape", "reference", "fast", "speedup", "fast rate", "XLA CPU (recorded)", "peak mem"];
    let mut rows: Vec<[String; 8]> = Vec::new();
    let mut failures = Vec::new();
    for s in &specs {
        let n = if a.quick { s.quick } else { s.full };
        let inst = match (s.build)(n) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("error: cannot build {}: {e}", s.name);
                return EXIT_FAILURE;
            }
        };
        let fast = time(&engine::Fast, &inst, runs, budget);
        let reference = if a.no_reference {
            Timing::NotImplemented
        } else if n <= s.reference_max {
            time(&engine::Reference, &inst, reference_runs, reference_budget)
        } else {
            match (s.build)(s.reference_max).map(|small| time(&engine::Reference, &small, reference_runs, reference_budget)) {
                Ok(Timing::Time { seconds, .. }) => {
                    Timing::Time { seconds: seconds * (s.reference_cost)(n) / (s.reference_cost)(s.reference_max), extrapolated: true }
                }
                Ok(other) => other,
                Err(e) => Timing::Failed(e),
            }
        };
        for (engine, t) in [("fast", &fast), ("reference", &reference)] {
            if let Timing::Failed(e) = t {
                failures.push(format!("{} on {engine}: {e}", s.name));
            }
        }
        let speedup = match (&reference, &fast) {
            (Timing::Time { seconds: r, .. }, Timing::Time { seconds: f, .. }) if r / f < 10.0 => format!("{:.1}x", r / f),
            (Timing::Time { seconds: r, .. }, Timing::Time { seconds: f, .. }) => format!("{:.0}x", r / f),
            _ => "n/a".into(),
        };
        rows.push([
            s.name.into(),
            inst.shape.clone(),
            show_time(&reference),
            show_time(&fast),
            speedup,
            rate(inst.work, &fast),
            s.xla.into(),
            if a.memory { bench_memory::measure(s.name, a.quick).map_or("n/a".into(), |r| format!("{r:.2}x")) } else { "-".into() },
        ]);
        if let (true, Some(r)) = (a.no_reference, rows.last_mut()) {
            r[2] = "skipped".into();
        }
    }
    print_rows(&header, &rows);
    out!("~ = the reference ran a smaller instance; its time is extrapolated by its own cost model.");
    out!(
        "XLA CPU (recorded): figures recorded on a Zen 4 host in an earlier session, where the clock may have differed; for a ratio, run `python3 tools/xla_bench.py` now, on this machine."
    );
    for f in &failures {
        eprintln!("failed: {f}");
    }
    if failures.is_empty() {
        0
    } else {
        EXIT_FAILURE
    }
}

/// `--memory-child`: the peak-memory ratio of the (single) selected workload.
fn memory_child(specs: &[Spec], quick: bool) -> i32 {
    let [s] = specs else {
        eprintln!("error: --memory-child measures exactly one workload");
        return EXIT_BAD_INPUT;
    };
    let measured = (s.build)(if quick { s.quick } else { s.full }).and_then(|inst| bench_memory::child(&inst));
    match measured {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            EXIT_FAILURE
        }
    }
}

/// Prints a Markdown table.
pub fn print_rows<R: AsRef<[String]>>(header: &[&str], rows: &[R]) {
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r.as_ref()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells.iter().zip(&width).map(|(c, w)| format!("{c:<w$}")).collect();
        out!("| {} |", parts.join(" | "));
    };
    line(header.to_vec());
    out!("|{}|", width.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("|"));
    for r in rows {
        line(r.as_ref().iter().map(|s| s.as_str()).collect());
    }
}
