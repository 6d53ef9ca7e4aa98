//! `xlaref bench --programs DIR`: whole programs, as `tools/program_bench.py`
//! writes them (HLO text and StableHLO, `.npy` arguments, XLA CPU's result
//! and its times measured when the directory was made).
//!
//! For each program and each of its two forms this times the execute phase
//! on the fast engine (warm, best of several runs, arguments in place, as
//! XLA's run time is measured) and on the reference (one run), judges both
//! results against XLA's within the program's tolerance, and times the
//! whole `xlaref eval --engine fast ... --out-npy` command as a user runs
//! it (a child process; file reading and writing included), next to XLA's
//! compile-plus-first-run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use xlaref_reference::json::{self, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::Shape;
use xlaref_reference::verify::{self, VerifiedModule, VerifyOptions};

use super::bench::{self, Instance, Timing, Work};
use super::{EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::harness::engine;
use crate::npy;

/// One program of the directory, from its manifest `NAME.json`.
struct Program {
    dir: PathBuf,
    name: String,
    args: usize,
    results: usize,
    atol: f64,
    rtol: f64,
    xla_run_ms: f64,
    xla_first_call_ms: f64,
}

impl Program {
    fn read(manifest: &Path) -> Result<Program, String> {
        let text = std::fs::read_to_string(manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", manifest.display()))?;
        let num = |path: &[&str]| -> Result<f64, String> {
            path.iter()
                .try_fold(&v, |v, k| v.get(k))
                .and_then(Value::as_f64)
                .ok_or_else(|| format!("{}: no number at {}", manifest.display(), path.join(".")))
        };
        let count =
            |key: &str| num(&[key]).map(|n| n as usize).and_then(|n| if n <= 64 { Ok(n) } else { Err(format!("{key}: {n} is too many")) });
        Ok(Program {
            dir: manifest.parent().unwrap_or(Path::new(".")).to_path_buf(),
            name: v.get("name").and_then(Value::as_str).ok_or_else(|| format!("{}: no name", manifest.display()))?.to_string(),
            args: count("args")?,
            results: count("results")?,
            atol: num(&["tolerance", "atol"])?,
            rtol: num(&["tolerance", "rtol"])?,
            xla_run_ms: num(&["xla", "run_ms"])?,
            xla_first_call_ms: num(&["xla", "first_call_ms"])?,
        })
    }

    fn file(&self, suffix: &str) -> PathBuf {
        self.dir.join(format!("{}.{suffix}", self.name))
    }

    fn arg_files(&self) -> Vec<PathBuf> {
        (0..self.args).map(|i| self.file(&format!("arg{i}.npy"))).collect()
    }
}

/// The programs' manifests in `dir`, by name.
fn manifests(dir: &str) -> Result<Vec<PathBuf>, String> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{dir}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(format!("{dir}: no program manifests (NAME.json); make them with tools/program_bench.py"));
    }
    Ok(found)
}

/// Reads, verifies and loads the arguments of one form of a program.
fn load(p: &Program, form: &str) -> Result<Instance, String> {
    let path = p.file(form);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let m = json::parse_module(&text, ReadOptions { max_elements: 1 << 30 }).map_err(|e| format!("{}: {e}", path.display()))?;
    let module: VerifiedModule = verify::verify(m, &VerifyOptions { max_elements: 1 << 30, ..VerifyOptions::default() })
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let params = module.entry_signature().params.clone();
    let args = p
        .arg_files()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let bytes = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
            npy::read_npy(&bytes, params.get(i), 1 << 30).map_err(|e| format!("{}: {e}", f.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Instance { shape: form.into(), module, args, work: Work::Time })
}

/// XLA's result, one array per result of the program, read as the
/// program's result types (`result`: raw two-byte `<V2` files are bf16
/// only by that type).
fn expected(p: &Program, result: &Shape) -> Result<Vec<ArrayLiteral>, String> {
    let types: Vec<&Shape> = match result {
        Shape::Tuple(parts) => parts.iter().collect(),
        one => vec![one],
    };
    (0..p.results)
        .map(|i| {
            let f = p.file(&format!("out{i}.npy"));
            let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            npy::read_npy(&bytes, types.get(i).copied(), 1 << 30)
                .map_err(|e| format!("{}: {e}", f.display()))?
                .into_array()
                .ok_or_else(|| format!("{}: not an array", f.display()))
        })
        .collect()
}

/// How far `got` is from XLA's `want`, as a multiple of the allowed error
/// `atol + rtol·|want|` (≤ 1 passes) for the floating types; integer and
/// other types must match bit for bit (0 or infinity).
fn error_ratio(got: &ArrayLiteral, want: &ArrayLiteral, atol: f64, rtol: f64) -> f64 {
    if got.dims() != want.dims() || got.element_type() != want.element_type() {
        return f64::INFINITY;
    }
    let ratio = |g: f64, w: f64| {
        if g == w || (g.is_nan() && w.is_nan()) {
            0.0
        } else {
            (g - w).abs() / (atol + rtol * w.abs())
        }
    };
    let worst = |it: &mut dyn Iterator<Item = f64>| it.fold(0.0f64, |m, r| if r.is_nan() { f64::INFINITY } else { m.max(r) });
    if let (Some(g), Some(w)) = (got.typed::<f32>(), want.typed::<f32>()) {
        worst(&mut g.iter().zip(w).map(|(&g, &w)| ratio(g as f64, w as f64)))
    } else if let (Some(g), Some(w)) = (got.typed::<f64>(), want.typed::<f64>()) {
        worst(&mut g.iter().zip(w).map(|(&g, &w)| ratio(g, w)))
    } else if let (Some(g), Some(w)) = (got.typed::<half::bf16>(), want.typed::<half::bf16>()) {
        worst(&mut g.iter().zip(w).map(|(&g, &w)| ratio(g.to_f64(), w.to_f64())))
    } else if let (Some(g), Some(w)) = (got.typed::<half::f16>(), want.typed::<half::f16>()) {
        worst(&mut g.iter().zip(w).map(|(&g, &w)| ratio(g.to_f64(), w.to_f64())))
    } else if got.bits_equal(want) {
        0.0
    } else {
        f64::INFINITY
    }
}

/// The worst [`error_ratio`] over all results.
fn judge(result: &Literal, want: &[ArrayLiteral], p: &Program) -> f64 {
    let got: Vec<&Literal> = match result {
        Literal::Tuple(items) => items.iter().collect(),
        other => vec![other],
    };
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    got.iter().zip(want).map(|(g, w)| g.as_array().map_or(f64::INFINITY, |g| error_ratio(g, w, p.atol, p.rtol))).fold(0.0, f64::max)
}

/// One run of `engine`, judged against XLA's result.
fn judged_run(engine: &dyn engine::Engine, inst: &Instance, want: &[ArrayLiteral], p: &Program) -> Result<f64, String> {
    let mut env = xlaref_reference::eval::Env::new(xlaref_reference::eval::Limits { max_elements: 1 << 30, ..Default::default() });
    let result = engine.run(&inst.module, inst.args.clone(), &mut env).map_err(|e| e.to_string())?;
    Ok(judge(&result, want, p))
}

/// Best wall time of `runs` whole `xlaref eval --engine fast` commands.
fn eval_command(p: &Program, form: &str, runs: usize) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::env::temp_dir().join(format!("xlaref-bench-{}-{}.npy", std::process::id(), p.name));
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("eval").arg(p.file(form)).args(["--engine", "fast", "--out-npy"]).arg(&out);
        for a in p.arg_files() {
            cmd.arg("--arg-npy").arg(a);
        }
        let start = Instant::now();
        let status = cmd.stdout(std::process::Stdio::null()).status().map_err(|e| e.to_string())?;
        let t = start.elapsed().as_secs_f64();
        if !status.success() {
            return Err(format!("xlaref eval {} failed ({status})", p.file(form).display()));
        }
        best = best.min(t);
    }
    for i in 0..p.results {
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(out.with_extension(format!("{i}.npy")));
    }
    Ok(best)
}

fn ms(seconds: f64) -> String {
    milliseconds(seconds * 1e3)
}

/// Three significant digits down to a microsecond: the programs' times
/// differ by a few percent, which a tenth of a millisecond hides.
fn milliseconds(ms: f64) -> String {
    match ms {
        x if x >= 100.0 => format!("{x:.0} ms"),
        x if x >= 10.0 => format!("{x:.1} ms"),
        x if x >= 1.0 => format!("{x:.2} ms"),
        x => format!("{x:.3} ms"),
    }
}

fn timing_ms(t: &Timing) -> Option<f64> {
    match t {
        Timing::Time { seconds, .. } => Some(seconds * 1e3),
        _ => None,
    }
}

fn verdict(r: &Result<f64, String>) -> String {
    match r {
        Ok(x) if *x <= 1.0 => format!("ok ({x:.2})"),
        Ok(x) => format!("MISMATCH ({x:.3e})"),
        Err(_) => "failed".into(),
    }
}

/// `xlaref bench --programs DIR`.
pub fn run(dir: &str, no_reference: bool, quick: bool) -> i32 {
    let found = match manifests(dir) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    out!("xlaref bench --programs {dir} (XLA CPU's times were measured by tools/program_bench.py when it wrote {dir})");
    out!("fast kernels: {}, {} threads", xlaref_fast::isa::isa().name(), rayon::current_num_threads());
    let header = [
        "program",
        "form",
        "reference",
        "fast",
        "XLA run",
        "fast/XLA",
        "fast vs XLA",
        "reference vs XLA",
        "eval (whole)",
        "XLA first call",
        "eval/XLA",
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut failures = Vec::new();
    let (runs, budget) = if quick { (2, Duration::from_millis(500)) } else { (10, Duration::from_secs(5)) };
    // More runs for a profiler to sample (`XLAREF_BENCH_RUNS=300 perf record ...`).
    let runs = std::env::var("XLAREF_BENCH_RUNS").ok().and_then(|v| v.parse::<usize>().ok()).filter(|&r| r > 0).unwrap_or(runs);
    let budget = if runs > 10 { budget.max(Duration::from_secs(60)) } else { budget };
    for manifest in found {
        let p = match Program::read(&manifest) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_BAD_INPUT;
            }
        };
        for form in ["hlo", "mlir"] {
            if !p.file(form).exists() {
                continue;
            }
            let inst = match load(&p, form) {
                Ok(i) => i,
                Err(e) => {
                    failures.push(format!("{} ({form}): {e}", p.name));
                    continue;
                }
            };
            let want = match expected(&p, &inst.module.entry_signature().result) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_BAD_INPUT;
                }
            };
            let fast = bench::time(&engine::Fast, &inst, runs, budget);
            let fast_judged = judged_run(&engine::Fast, &inst, &want, &p);
            let (reference, reference_judged) = if no_reference {
                (Timing::NotImplemented, Err("skipped".to_string()))
            } else {
                let start = Instant::now();
                let judged = judged_run(&engine::Reference, &inst, &want, &p);
                (Timing::Time { seconds: start.elapsed().as_secs_f64(), extrapolated: false }, judged)
            };
            let whole = eval_command(&p, form, if quick { 1 } else { 3 });
            for (what, r) in [("fast", &fast_judged), ("reference", &reference_judged)] {
                match r {
                    Err(e) if e != "skipped" => failures.push(format!("{} ({form}) on {what}: {e}", p.name)),
                    Ok(x) if *x > 1.0 => {
                        failures.push(format!("{} ({form}) on {what}: differs from XLA by {x:.3e}× the tolerance", p.name))
                    }
                    _ => {}
                }
            }
            if let Err(e) = &whole {
                failures.push(format!("{} ({form}) xlaref eval: {e}", p.name));
            }
            let fast_ms = timing_ms(&fast);
            rows.push(vec![
                p.name.clone(),
                form.into(),
                if no_reference { "skipped".into() } else { timing_ms(&reference).map_or("failed".into(), |t| ms(t / 1e3)) },
                fast_ms.map_or("failed".into(), |t| ms(t / 1e3)),
                milliseconds(p.xla_run_ms),
                fast_ms.map_or("n/a".into(), |t| format!("{:.2}", t / p.xla_run_ms)),
                verdict(&fast_judged),
                if no_reference { "skipped".into() } else { verdict(&reference_judged) },
                whole.as_ref().map_or("failed".into(), |&t| ms(t)),
                format!("{:.0} ms", p.xla_first_call_ms),
                whole.as_ref().map_or("n/a".into(), |&t| format!("{:.2}", t * 1e3 / p.xla_first_call_ms)),
            ]);
        }
    }
    bench::print_rows(&header, &rows);
    out!("fast/XLA: the execute phase, both warm, best of several runs; eval/XLA: the whole `xlaref eval --engine fast` command (reading, verifying, running, writing .npy) against XLA's compile and first run.");
    out!("vs XLA: the worst error as a multiple of the program's tolerance (atol + rtol·|XLA|); at most 1 passes.");
    for f in &failures {
        eprintln!("failed: {f}");
    }
    if failures.is_empty() {
        0
    } else {
        EXIT_FAILURE
    }
}
