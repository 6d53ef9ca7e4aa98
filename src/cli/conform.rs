//! `xlaref conform --backend CMD PATH...`: runs every case through another
//! backend (docs/backends.md), compares with the reference, and reports per
//! op: passed, failed, rejected-but-valid, accepted-but-invalid,
//! unsupported, implementation-defined differences, known deviations,
//! crashes. The judging is `harness::conformance`'s; this file reads the
//! arguments, starts the backend and writes the reports.

use std::path::Path;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Map, Value};
use xlaref_reference::json::{self as xjson, WriteOptions};
use xlaref_reference::literal::Literal;

use super::{read_text, LimitArgs, EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::harness::backend::{Backend, EngineBackend, ProcessBackend, ProcessOptions};
use crate::harness::case::{run_case, Case, Expected, Outcome, RunOptions};
use crate::harness::conformance::{check_all, collect_cases, shard_cases, CaseResult, Known, LoadedCase, Stop, Verdict};
use crate::harness::deviation::Class;
use crate::harness::engine::{self, Reference};
use crate::harness::generated::generated_cases;
use crate::harness::interrupt;
use crate::harness::progress::Progress;
use crate::harness::report::{self, truncate, Report, RunInfo};
use crate::harness::shard::Shard;

#[derive(Args, Debug)]
pub struct ConformArgs {
    /// Case files or directories (searched for *.json).
    #[arg(required_unless_present = "generate")]
    pub paths: Vec<String>,
    /// Also run this many random valid programs from the differential
    /// generators (src/gen/), spread evenly over the selected ops; each is
    /// judged against the reference under the tolerance model.
    #[arg(long)]
    pub generate: Option<u64>,
    /// With --generate: only these ops (comma-separated generator names).
    #[arg(long, value_delimiter = ',')]
    pub ops: Vec<String>,
    /// With --generate: the campaign's seed (same seed, same programs).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run only shard K of N (K from 0): the cases and programs whose
    /// position i has i mod N = K. The N shards together are the whole run
    /// (docs/campaigns.md); `xlaref report merge` joins their reports.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// The backend: a command speaking docs/backends.md's protocol (run by
    /// `sh -c`), or `engine:fast` / `engine:reference` for an in-process engine.
    #[arg(long)]
    pub backend: String,
    /// Write each failing case here as a standalone case file (known
    /// deviations go to its `known-deviations/` subdirectory).
    #[arg(long)]
    pub failures: Option<String>,
    /// Write a Markdown report here.
    #[arg(long)]
    pub report: Option<String>,
    /// Write the machine-readable results here (JSON).
    #[arg(long)]
    pub json: Option<String>,
    /// What the backend is known to do differently: one case name a line,
    /// or `class:ID` for a deviation class that is matched on the values of
    /// any case, generated ones included (docs/backends.md); `#` comments.
    #[arg(long)]
    pub known_deviations: Option<String>,
    /// Seconds one case may take before the backend is restarted.
    #[arg(long, default_value_t = 60.0, value_parser = super::seconds)]
    pub case_timeout: f64,
    /// Seconds the backend may take to start and print its handshake.
    #[arg(long, default_value_t = 120.0, value_parser = super::seconds)]
    pub start_timeout: f64,
    /// The backend flushes subnormals to zero (FTZ/DAZ, as XLA CPU does):
    /// the deviation class `class:ftz`.
    #[arg(long)]
    pub ftz: bool,
    /// Print a line for every case that does not pass.
    #[arg(long, short)]
    pub verbose: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// A failing case as a standalone case file: the original case with the
/// reference's outcome as `expected` and the backend's answer in `comment`.
fn failure_case(case: &Case, reference: &Outcome, result: &CaseResult) -> Value {
    let exact = WriteOptions { exact_bits: true };
    let typed = |l: &Literal| xjson::write_typed_literal(l, exact);
    let list = |l: &[Literal]| Value::Array(l.iter().map(typed).collect());
    let mut m = Map::new();
    m.insert("format".into(), Value::from("xla-json/1"));
    m.insert("name".into(), Value::from(case.name.clone()));
    if let Some(s) = &case.source {
        m.insert("source".into(), Value::from(s.clone()));
    }
    m.insert("module".into(), case.module.clone());
    match &case.replica_args {
        Some(per) => {
            m.insert("replicas".into(), Value::from(case.replicas));
            m.insert("replica_args".into(), Value::Array(per.iter().map(|a| list(a)).collect()));
        }
        None => {
            m.insert("args".into(), list(&case.args));
        }
    }
    match (&case.expected, &reference.result) {
        (Expected::PerReplica(e), _) => {
            m.insert("expected_per_replica".into(), list(e));
        }
        (_, Ok(v)) => {
            m.insert("expected".into(), typed(v));
        }
        (_, Err(e)) => {
            let mut err = Map::new();
            err.insert("error".into(), Value::from(e.to_string()));
            m.insert("expected".into(), Value::Object(err));
        }
    }
    if let Some(t) = &case.tolerance {
        let mut tm = Map::new();
        for (k, v) in [("abs", t.abs), ("rel", t.rel), ("ulp", t.ulp)] {
            if let Some(v) = v {
                tm.insert(k.into(), Value::from(v));
            }
        }
        m.insert("tolerance".into(), Value::Object(tm));
    }
    if !case.infeed.is_empty() {
        m.insert("infeed".into(), list(&case.infeed));
    }
    if let Some(seed) = case.seed {
        m.insert("seed".into(), Value::from(seed));
    }
    if case.implementation_defined {
        m.insert("implementation_defined".into(), Value::from(true));
    }
    m.insert("comment".into(), Value::from(format!("conform: {}: {}", result.verdict.name(), result.detail)));
    Value::Object(m)
}

/// Failing cases and known deviations written by `--failures`.
#[derive(Default)]
struct Written {
    failing: usize,
    known: usize,
}

/// Writes each failing case to `dir` and each known deviation to
/// `dir/known-deviations/` (they are not failures; a reader fixing
/// failures should not meet them).
fn write_failures(dir: &str, cases: &[LoadedCase], results: &[CaseResult], options: &RunOptions) -> Result<Written, String> {
    let known_dir = Path::new(dir).join("known-deviations");
    let mut written = Written { failing: 0, known: 0 };
    // The results are those of the first cases, in order (a stopped run
    // has fewer).
    for (loaded, r) in cases.iter().zip(results) {
        let Ok(case) = &loaded.case else { continue };
        let target = if r.verdict.is_failure() {
            written.failing += 1;
            Path::new(dir).to_path_buf()
        } else if r.verdict == Verdict::KnownDeviation {
            written.known += 1;
            known_dir.clone()
        } else {
            continue;
        };
        std::fs::create_dir_all(&target).map_err(|e| format!("cannot create {}: {e}", target.display()))?;
        let reference = run_case(case, &Reference, options);
        let file: String = case.name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        let path = target.join(format!("{file}.json"));
        let text = serde_json::to_string_pretty(&failure_case(case, &reference, r)).unwrap_or_default();
        std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(written)
}

/// Generated programs are made, run and dropped this many at a time: a
/// campaign of a million programs holds one batch of cases, not a million,
/// and reports progress from the start.
const BATCH: u64 = 1000;

/// The cases of the run, in batches: this shard's share of the cases under
/// the paths, then of the generated programs, which are numbered after all
/// the files' cases (program `i` is the run's item `files + i`).
struct Batches<'a> {
    a: &'a ConformArgs,
    options: &'a RunOptions,
    shard: Shard,
    files: Option<Vec<LoadedCase>>,
    from_files: u64,
    next: u64,
}

impl<'a> Batches<'a> {
    fn new(a: &'a ConformArgs, options: &'a RunOptions, shard: Shard) -> Result<Self, String> {
        let files = collect_cases(&a.paths, options)?;
        let from_files = files.len() as u64;
        // An unknown generator name is an error before anything runs.
        generated_cases(0..0, &a.ops, a.seed, options, &|_| true)?;
        Ok(Batches { a, options, shard, files: Some(shard_cases(files, shard)), from_files, next: 0 })
    }

    /// How many cases this shard runs.
    fn total(&self) -> u64 {
        let files = self.files.as_ref().map_or(0, |f| f.len() as u64);
        files + (0..self.a.generate.unwrap_or(0)).filter(|&i| self.shard.owns(self.from_files + i)).count() as u64
    }

    fn next_batch(&mut self) -> Result<Option<Vec<LoadedCase>>, String> {
        if let Some(files) = self.files.take() {
            return Ok(Some(files));
        }
        let n = self.a.generate.unwrap_or(0);
        if self.next >= n {
            return Ok(None);
        }
        let range = self.next..n.min(self.next.saturating_add(BATCH));
        self.next = range.end;
        let (shard, from_files) = (self.shard, self.from_files);
        let file = format!("--generate {n} --seed {}", self.a.seed);
        let generated = generated_cases(range, &self.a.ops, self.a.seed, self.options, &|i| shard.owns(from_files + i))?;
        Ok(Some(generated.into_iter().map(|g| LoadedCase { name: g.name, file: file.clone(), case: g.case }).collect()))
    }
}

fn start_backend(a: &ConformArgs, options: &RunOptions) -> Result<Box<dyn Backend + Send>, String> {
    if let Some(name) = a.backend.strip_prefix("engine:") {
        let engine = engine::by_name(name).ok_or_else(|| format!("unknown engine `{name}` (expected engine:reference or engine:fast)"))?;
        return Ok(Box::new(EngineBackend { engine, options: options.clone() }));
    }
    let secs = |s: f64| Duration::from_secs_f64(s.clamp(0.001, 1e6));
    let po = ProcessOptions {
        command: a.backend.clone(),
        start_timeout: secs(a.start_timeout),
        case_timeout: secs(a.case_timeout),
        max_elements: options.limits.max_elements,
    };
    Ok(Box::new(ProcessBackend::start(po)?))
}

pub fn run(a: ConformArgs) -> i32 {
    interrupt::install();
    let options = a.limits.run_options();
    let shard = a.shard.unwrap_or_default();
    let known = a.known_deviations.as_deref().map(|p| read_text(p).and_then(|t| Known::parse(&t).map_err(|e| format!("{p}: {e}"))));
    let mut known = match known.transpose() {
        Ok(k) => k.unwrap_or_default(),
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            return EXIT_BAD_INPUT;
        }
    };
    if a.ftz {
        known.add_class(Class::FlushesSubnormals);
    }
    let mut batches = match Batches::new(&a, &options, shard) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            return EXIT_BAD_INPUT;
        }
    };
    let mut backend = match start_backend(&a, &options) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            return EXIT_BAD_INPUT;
        }
    };
    let described = backend.describe();
    let of_shard = a.shard.map(|s| format!(" (shard {s})")).unwrap_or_default();
    let total = batches.total();
    eprintln!("backend: {described}; {total} cases{of_shard}");
    let mut progress = Progress::new("conform", total, false);
    let start = Instant::now();
    let (mut done, mut bad) = (0u64, 0usize);
    let verbose = a.verbose;
    let (mut results, mut run_stopped, mut written) = (Vec::new(), None, Ok(Written::default()));
    loop {
        let cases = match batches.next_batch() {
            Ok(Some(cases)) => cases,
            Ok(None) => break,
            Err(e) => {
                progress.println(&format!("error: {}", xlaref_reference::error::printable(&e)));
                break;
            }
        };
        let run = check_all(&cases, backend.as_mut(), &options, &known, |r| {
            done += 1;
            bad += usize::from(r.verdict.is_failure());
            if verbose && r.verdict != Verdict::Passed {
                progress.println(&format!("{:<12} {} [{}]: {}", r.verdict.name(), r.name, r.op, truncate(&r.detail, 200)));
            }
            progress.set(done, || if bad > 0 { format!("{bad} failing") } else { String::new() });
        });
        // Failing cases are written while their batch is still held.
        if let (Some(dir), Ok(w)) = (&a.failures, &mut written) {
            match write_failures(dir, &cases, &run.results, &options) {
                Ok(n) => (w.failing, w.known) = (w.failing + n.failing, w.known + n.known),
                Err(e) => written = Err(e),
            }
        }
        results.extend(run.results);
        if run.stopped.is_some() {
            run_stopped = run.stopped;
            break;
        }
    }
    progress.finish();
    drop(backend);
    let stopped = run_stopped.as_ref().map(|s| match s {
        Stop::Signal(sig) => format!("{} after {} of {total} cases", interrupt::name(*sig), results.len()),
        Stop::BackendDown(why) => format!("the backend could not be restarted: {why}"),
    });
    let info = RunInfo {
        backend: described,
        seconds: start.elapsed().as_secs_f64(),
        stopped,
        shards: a.shard.iter().map(Shard::to_string).collect(),
    };
    let report = Report { info, results };
    print!("{}", report::terminal_table(&report.results));
    out!("{}", report::summary(&report));
    let status = match write_reports(&a, &report, written) {
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            EXIT_BAD_INPUT
        }
        Ok(()) if report.results.iter().any(|r| r.verdict.is_failure()) => EXIT_FAILURE,
        Ok(()) => 0,
    };
    match run_stopped {
        Some(Stop::Signal(sig)) => interrupt::exit_status(sig),
        Some(Stop::BackendDown(why)) => {
            eprintln!("error: the backend could not be restarted, the run stopped: {why}");
            EXIT_BAD_INPUT
        }
        None => status,
    }
}

/// Writes `--report`, `--json` and `--failures`.
fn write_reports(a: &ConformArgs, report: &Report, written: Result<Written, String>) -> Result<(), String> {
    let write = |path: &Option<String>, text: String| match path {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("cannot write {p}: {e}")),
        None => Ok(()),
    };
    write(&a.report, report::markdown(report))?;
    write(&a.json, serde_json::to_string_pretty(&report::to_json(report)).unwrap_or_default() + "\n")?;
    if let Some(dir) = &a.failures {
        let n = written?;
        eprintln!("{} failing cases written to {dir}, {} known deviations to {dir}/known-deviations", n.failing, n.known);
    }
    Ok(())
}
