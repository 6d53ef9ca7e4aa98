//! `xlaref conform --backend CMD PATH...`: runs every case through another
//! backend (docs/backends.md), compares with the reference, and reports per
//! op: passed, failed, rejected-but-valid, accepted-but-invalid,
//! unsupported, implementation-defined differences, crashes.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value};
use xlaref_reference::json::{self as xjson, WriteOptions};
use xlaref_reference::literal::Literal;

use super::{read_text, LimitArgs, EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::harness::backend::{Backend, BackendEngine, EngineBackend, ProcessBackend, ProcessOptions, Reply};
use crate::harness::case::{case_files, judge, read_cases, run_case, Case, Expected, Outcome, RunOptions};
use crate::harness::compare::{compare, Mismatch};
use crate::harness::engine::{self, Engine, Reference};
use crate::harness::ftz;
use crate::harness::generated::generated_cases;
use crate::harness::lockstep::{self, lockstep};
use xlaref_reference::eval::Env;

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
    /// The backend: a command speaking docs/backends.md's protocol (run by
    /// `sh -c`), or `engine:fast` / `engine:reference` for an in-process engine.
    #[arg(long)]
    pub backend: String,
    /// Write each failing case here as a standalone case file.
    #[arg(long)]
    pub failures: Option<String>,
    /// Write a Markdown report here.
    #[arg(long)]
    pub report: Option<String>,
    /// Write the machine-readable results here (JSON).
    #[arg(long)]
    pub json: Option<String>,
    /// Cases known to deviate (one case name a line, `#` comments): reported
    /// as known deviations, not as failures.
    #[arg(long)]
    pub known_deviations: Option<String>,
    /// Seconds one case may take before the backend is restarted.
    #[arg(long, default_value_t = 60.0)]
    pub case_timeout: f64,
    /// Seconds the backend may take to start and print its handshake.
    #[arg(long, default_value_t = 120.0)]
    pub start_timeout: f64,
    /// The backend flushes subnormals to zero (FTZ/DAZ, as XLA CPU does): a
    /// difference that the reference on flushed operands, its result
    /// flushed, explains is reported as a known deviation.
    #[arg(long)]
    pub ftz: bool,
    /// Print a line for every case that does not pass.
    #[arg(long, short)]
    pub verbose: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// How a case came out. The order is the report's column order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    Passed,
    Failed,
    RejectedValid,
    AcceptedInvalid,
    Crashed,
    Unsupported,
    ImplementationDefined,
    KnownDeviation,
}

impl Verdict {
    pub const ALL: [Verdict; 8] = [
        Verdict::Passed,
        Verdict::Failed,
        Verdict::RejectedValid,
        Verdict::AcceptedInvalid,
        Verdict::Crashed,
        Verdict::Unsupported,
        Verdict::ImplementationDefined,
        Verdict::KnownDeviation,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed => "failed",
            Verdict::RejectedValid => "rejected-but-valid",
            Verdict::AcceptedInvalid => "accepted-but-invalid",
            Verdict::Crashed => "crashed",
            Verdict::Unsupported => "unsupported",
            Verdict::ImplementationDefined => "implementation-defined",
            Verdict::KnownDeviation => "known-deviation",
        }
    }

    fn short(self) -> &'static str {
        match self {
            Verdict::Passed => "pass",
            Verdict::Failed => "fail",
            Verdict::RejectedValid => "rej-valid",
            Verdict::AcceptedInvalid => "acc-invalid",
            Verdict::Crashed => "crash",
            Verdict::Unsupported => "unsup",
            Verdict::ImplementationDefined => "impl-def",
            Verdict::KnownDeviation => "known",
        }
    }

    /// Whether this is a real conformance failure (what the exit status reports).
    pub fn is_failure(self) -> bool {
        matches!(self, Verdict::Failed | Verdict::RejectedValid | Verdict::AcceptedInvalid | Verdict::Crashed)
    }
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub name: String,
    pub file: String,
    pub op: String,
    pub verdict: Verdict,
    pub detail: String,
}

/// The single place where a backend's value is held against the reference's;
/// the tolerance model plugs in here.
fn agree(case: &Case, actual: &Literal, reference: &Literal) -> Option<Mismatch> {
    compare(actual, reference, case.tolerance.as_ref())
}

/// Ops that only move values around; the op a case is about is the last
/// instruction of the entry computation that is not one of these.
const PLUMBING: [&str; 6] = ["Tuple", "GetTupleElement", "Constant", "Parameter", "AfterAll", "OptimizationBarrier"];

/// The op a case exercises: the root op of its entry computation (skipping
/// plumbing), or the family (the name before `/`) for HLO text modules.
pub fn case_op(case: &Case) -> String {
    let family = || case.name.split('/').next().unwrap_or("").to_string();
    let found = (|| {
        let m = case.module.as_object()?;
        let entry = m.get("entry").and_then(Value::as_str).unwrap_or("main");
        let comp = m.get("computations")?.get(entry)?;
        let instrs = comp.get("instructions")?.as_array()?;
        let op_of = |i: &Value| i.get("op").and_then(Value::as_str).map(String::from);
        if let Some(root) = comp.get("root").and_then(Value::as_str) {
            let r = instrs.iter().find(|i| i.get("name").and_then(Value::as_str) == Some(root))?;
            let op = op_of(r)?;
            if !PLUMBING.contains(&op.as_str()) {
                return Some(op);
            }
        }
        instrs.iter().rev().filter_map(op_of).find(|op| !PLUMBING.contains(&op.as_str()))
    })();
    found.unwrap_or_else(family)
}

/// Classifies the backend's reply against the reference's outcome.
pub fn classify(case: &Case, reference: &Outcome, reply: &Reply) -> (Verdict, String) {
    use Verdict::*;
    let (verdict, detail) = match (reply, &reference.result) {
        (Reply::Crash(e), _) => return (Crashed, e.clone()),
        (Reply::Unsupported(e), _) => return (Unsupported, e.clone()),
        (Reply::PerReplica(values), _) => match &case.expected {
            Expected::PerReplica(expected) if values.len() == expected.len() => {
                match values.iter().zip(expected).enumerate().find_map(|(i, (a, e))| agree(case, a, e).map(|m| (i, m))) {
                    None => (Passed, String::new()),
                    Some((i, m)) => (Failed, format!("replica {i}: {m}")),
                }
            }
            Expected::PerReplica(expected) => (Failed, format!("expected {} replica results, got {}", expected.len(), values.len())),
            _ => (Failed, "per-replica results for a single-replica case".into()),
        },
        (Reply::Error(_), Err(_)) => (Passed, String::new()),
        (Reply::Error(e), Ok(_)) => (RejectedValid, e.clone()),
        (Reply::Value { result, .. }, Err(e)) => {
            (AcceptedInvalid, format!("the reference rejects it ({e}); backend gave {}", result.shape()))
        }
        (Reply::Value { result, outfeed }, Ok(expected)) => match agree(case, result, expected) {
            Some(m) => (Failed, m.to_string()),
            None => match outfeed_mismatch(case, outfeed, &reference.outfeed) {
                Some(m) => (Failed, m),
                None => (Passed, String::new()),
            },
        },
    };
    if verdict != Passed && case.implementation_defined {
        return (ImplementationDefined, detail);
    }
    (verdict, detail)
}

fn outfeed_mismatch(case: &Case, actual: &[Literal], reference: &[Literal]) -> Option<String> {
    // Backends need not report outfeed; when they do, it must agree.
    if actual.is_empty() || case.outfeed.is_none() {
        return None;
    }
    if actual.len() != reference.len() {
        return Some(format!("outfeed: expected {} values, got {}", reference.len(), actual.len()));
    }
    actual.iter().zip(reference).enumerate().find_map(|(i, (a, e))| agree(case, a, e).map(|m| format!("outfeed[{i}]: {m}")))
}

/// Known deviations: case name → the reason written after it.
fn read_known(path: &str) -> Result<HashMap<String, String>, String> {
    let text = read_text(path)?;
    let mut known = HashMap::new();
    for line in text.lines() {
        let (name, comment) = match line.split_once('#') {
            Some((n, c)) => (n.trim(), c.trim()),
            None => (line.trim(), ""),
        };
        if !name.is_empty() {
            known.insert(name.to_string(), comment.to_string());
        }
    }
    Ok(known)
}

/// A case as read from a file: its name, the file, and the case or why it
/// could not be read.
pub struct LoadedCase {
    pub name: String,
    pub file: String,
    pub case: Result<Case, String>,
}

/// Every case under the paths, with the file it came from; cases that cannot
/// be read are returned as errors. (The hook for other case sources, such as
/// random-program generators: anything producing `Case`s can feed `check_all`.)
pub fn collect_cases(paths: &[String], options: &RunOptions) -> Result<Vec<LoadedCase>, String> {
    let mut out = Vec::new();
    for root in paths {
        let files = case_files(Path::new(root)).map_err(|e| format!("cannot read {root}: {e}"))?;
        for file in files {
            let shown = file.display().to_string();
            match read_text(&shown).and_then(|t| xjson::parse_json(&t).map_err(|e| e.to_string())) {
                Ok(doc) => out.extend(read_cases(&doc, &shown, options).into_iter().map(|(name, case)| LoadedCase {
                    name,
                    file: shown.clone(),
                    case,
                })),
                Err(e) => out.push(LoadedCase { name: shown.clone(), file: shown, case: Err(e) }),
            }
        }
    }
    Ok(out)
}

/// Runs every case through the backend and the reference and classifies it.
pub fn check_all(
    cases: &[LoadedCase],
    backend: &mut (dyn Backend + Send),
    options: &RunOptions,
    known: &HashMap<String, String>,
    ftz: bool,
    mut progress: impl FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let mut results = Vec::with_capacity(cases.len());
    for LoadedCase { name, file, case } in cases {
        let result = match case {
            Err(e) => CaseResult {
                name: name.clone(),
                file: file.clone(),
                op: "(malformed)".into(),
                verdict: Verdict::Failed,
                detail: format!("malformed case: {e}"),
            },
            Ok(case) => {
                let reply = backend.run(case);
                let reference = run_case(case, &Reference, options);
                let (mut verdict, mut detail) = classify(case, &reference, &reply);
                if verdict == Verdict::Failed && matches!(reply, Reply::Value { .. }) {
                    if let Some(judged) = judge_by_model(case, backend, options, ftz) {
                        (verdict, detail) = judged;
                    }
                }
                if let (Verdict::Failed, Reply::PerReplica(values), true) = (verdict, &reply, ftz) {
                    if flushing_explains_replicas(case, values, options) {
                        verdict = Verdict::KnownDeviation;
                        detail = format!("the backend flushes subnormals (--ftz): {detail}");
                    }
                }
                if judge(case, &reference).is_err() && verdict != Verdict::Passed {
                    detail = format!("{detail} (note: the reference does not pass this case itself)");
                }
                if verdict != Verdict::Passed && verdict != Verdict::ImplementationDefined {
                    if let Some(reason) = known.get(&case.name) {
                        verdict = Verdict::KnownDeviation;
                        detail = if reason.is_empty() { detail } else { format!("{reason}: {detail}") };
                    }
                }
                CaseResult { name: name.clone(), file: file.clone(), op: case_op(case), verdict, detail }
            }
        };
        progress(&result);
        results.push(result);
    }
    results
}

/// A value that differs from the reference's, held against the tolerance
/// model (docs/tolerance.md): the program runs again on the backend one
/// instruction at a time, on the reference's operands. `Passed` when every
/// instruction is within its allowance; `Failed` naming the first that is
/// not. Cases with their own `tolerance`, several replicas or an HLO text
/// module keep the direct comparison (`None`).
fn judge_by_model(case: &Case, backend: &mut (dyn Backend + Send), options: &RunOptions, ftz: bool) -> Option<(Verdict, String)> {
    if case.tolerance.is_some() || case.replicas > 1 || case.replica_args.is_some() || !case.module.is_object() {
        return None;
    }
    let module = xjson::read_module(&case.module, &xjson::Path::new("module"), options.read_options()).ok()?;
    let verified = xlaref_reference::verify::verify(module, &options.verify_options()).ok()?;
    let seed = case.seed.unwrap_or(0);
    let env = || {
        let mut env = Env::new(options.limits.clone());
        env.seed = seed;
        env.infeed = case.infeed.iter().cloned().collect();
        env
    };
    let other = BackendEngine::new(backend);
    Some(match lockstep(&verified, &case.args, &Reference, &other, &options.verify_options(), &env) {
        lockstep::Verdict::Agree(_) => (Verdict::Passed, String::new()),
        lockstep::Verdict::Disagree(d) => {
            let detail = format!("beyond the tolerance model at instruction `{}` ({}): {}", d.instruction, d.op, d.detail);
            if ftz && flushing_explains(&d, &other, options, &env) {
                (Verdict::KnownDeviation, format!("the backend flushes subnormals (--ftz): {detail}"))
            } else {
                (Verdict::Failed, detail)
            }
        }
    })
}

/// Whether the backend's value of the disagreeing instruction is the
/// reference's on flushed operands, flushed (harness::ftz).
fn flushing_explains(d: &lockstep::Disagreement, backend: &dyn Engine, options: &RunOptions, env: &dyn Fn() -> Env) -> bool {
    let Ok(single) = xlaref_reference::verify::verify(d.module.clone(), &options.verify_options()) else { return false };
    match backend.run(&single, d.args.clone(), &mut env()) {
        Ok(got) => ftz::explained_by_flushing(&single, &d.args, &got, env),
        Err(_) => false,
    }
}

/// A multi-replica program has no lockstep model: whether the reference on
/// flushed arguments, every replica's result flushed, gives exactly the
/// backend's values (a flushing backend also flushes intermediates, so this
/// explains single collectives and short programs, not every flushed run).
fn flushing_explains_replicas(case: &Case, got: &[Literal], options: &RunOptions) -> bool {
    let mut flushed = case.clone();
    flushed.args = case.args.iter().map(ftz::flush_subnormals).collect();
    flushed.replica_args = case.replica_args.as_ref().map(|r| r.iter().map(|a| a.iter().map(ftz::flush_subnormals).collect()).collect());
    let Some(values) = run_case(&flushed, &Reference, options).per_replica else { return false };
    values.len() == got.len()
        && values.iter().zip(got).all(|(v, g)| agree(case, &ftz::flush_subnormals(g), &ftz::flush_subnormals(v)).is_none())
}

/// The generated programs of `--generate`, as loaded cases.
fn generated(n: u64, ops: &[String], seed: u64, options: &RunOptions) -> Result<Vec<LoadedCase>, String> {
    let file = format!("--generate {n} --seed {seed}");
    Ok(generated_cases(n, ops, seed, options)?.into_iter().map(|g| LoadedCase { name: g.name, file: file.clone(), case: g.case }).collect())
}

/// Per-op counts, ops sorted by name.
pub fn tally(results: &[CaseResult]) -> BTreeMap<String, BTreeMap<Verdict, usize>> {
    let mut t: BTreeMap<String, BTreeMap<Verdict, usize>> = BTreeMap::new();
    for r in results {
        *t.entry(r.op.clone()).or_default().entry(r.verdict).or_default() += 1;
    }
    t
}

fn totals(results: &[CaseResult]) -> BTreeMap<Verdict, usize> {
    let mut t = BTreeMap::new();
    for r in results {
        *t.entry(r.verdict).or_default() += 1;
    }
    t
}

/// The columns that are non-zero somewhere (always `passed`).
fn columns(results: &[CaseResult]) -> Vec<Verdict> {
    let t = totals(results);
    Verdict::ALL.into_iter().filter(|v| *v == Verdict::Passed || t.contains_key(v)).collect()
}

fn terminal_table(results: &[CaseResult]) -> String {
    let cols = columns(results);
    let width = tally(results).keys().map(String::len).max().unwrap_or(2).max(5);
    let mut s = format!("{:width$}", "op");
    for c in &cols {
        let _ = write!(s, " {:>11}", c.short());
    }
    s.push('\n');
    let row = |s: &mut String, name: &str, counts: &BTreeMap<Verdict, usize>| {
        let _ = write!(s, "{name:width$}");
        for c in &cols {
            match counts.get(c) {
                Some(n) => {
                    let _ = write!(s, " {n:>11}");
                }
                None => {
                    let _ = write!(s, " {:>11}", ".");
                }
            }
        }
        s.push('\n');
    };
    for (op, counts) in tally(results) {
        if counts.keys().any(|v| *v != Verdict::Passed) {
            row(&mut s, &op, &counts);
        }
    }
    row(&mut s, "total", &totals(results));
    s
}

fn markdown(results: &[CaseResult], backend: &str, elapsed: Duration) -> String {
    let cols = columns(results);
    let mut s = format!("# Conformance of {backend} against the xlaref reference\n\n");
    let _ = writeln!(s, "{} cases in {:.1} s.\n", results.len(), elapsed.as_secs_f64());
    s.push_str("| op |");
    for c in &cols {
        let _ = write!(s, " {} |", c.name());
    }
    s.push_str("\n|---|");
    for _ in &cols {
        s.push_str("---:|");
    }
    s.push('\n');
    let row = |s: &mut String, name: &str, counts: &BTreeMap<Verdict, usize>| {
        let _ = write!(s, "| {name} |");
        for c in &cols {
            let _ = write!(s, " {} |", counts.get(c).copied().unwrap_or(0));
        }
        s.push('\n');
    };
    for (op, counts) in tally(results) {
        row(&mut s, &op, &counts);
    }
    row(&mut s, "**total**", &totals(results));
    let others: Vec<&CaseResult> = results.iter().filter(|r| r.verdict != Verdict::Passed).collect();
    if !others.is_empty() {
        s.push_str("\n## Cases that did not pass\n\n| case | op | verdict | detail |\n|---|---|---|---|\n");
        for r in others {
            let detail = r.detail.replace('|', "\\|").replace('\n', " ");
            let _ = writeln!(s, "| `{}` | {} | {} | {} |", r.name, r.op, r.verdict.name(), truncate(&detail, 300));
        }
    }
    s
}

fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn json_report(results: &[CaseResult], backend: &str) -> Value {
    let counts = |c: &BTreeMap<Verdict, usize>| {
        Value::Object(Verdict::ALL.iter().map(|v| (v.name().to_string(), Value::from(c.get(v).copied().unwrap_or(0)))).collect())
    };
    let mut m = Map::new();
    m.insert("backend".into(), Value::from(backend));
    m.insert("totals".into(), counts(&totals(results)));
    m.insert("ops".into(), Value::Object(tally(results).iter().map(|(op, c)| (op.clone(), counts(c))).collect()));
    let cases = results
        .iter()
        .map(|r| {
            let mut c = Map::new();
            c.insert("name".into(), Value::from(r.name.clone()));
            c.insert("file".into(), Value::from(r.file.clone()));
            c.insert("op".into(), Value::from(r.op.clone()));
            c.insert("verdict".into(), Value::from(r.verdict.name()));
            if !r.detail.is_empty() {
                c.insert("detail".into(), Value::from(r.detail.clone()));
            }
            Value::Object(c)
        })
        .collect();
    m.insert("cases".into(), Value::Array(cases));
    Value::Object(m)
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
            err.insert("error".into(), Value::from(e.clone()));
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

fn write_failures(dir: &str, cases: &[LoadedCase], results: &[CaseResult], options: &RunOptions) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {dir}: {e}"))?;
    let mut n = 0;
    for (loaded, r) in cases.iter().zip(results) {
        let Ok(case) = &loaded.case else { continue };
        if !r.verdict.is_failure() && r.verdict != Verdict::KnownDeviation {
            continue;
        }
        let reference = run_case(case, &Reference, options);
        let file: String = case.name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        let path = Path::new(dir).join(format!("{file}.json"));
        let text = serde_json::to_string_pretty(&failure_case(case, &reference, r)).unwrap_or_default();
        std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        n += 1;
    }
    Ok(n)
}

pub fn run(a: ConformArgs) -> i32 {
    let options = a.limits.run_options();
    let known = match a.known_deviations.as_deref().map(read_known).transpose() {
        Ok(k) => k.unwrap_or_default(),
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let generated = a.generate.map(|n| generated(n, &a.ops, a.seed, &options)).transpose();
    let cases = match (collect_cases(&a.paths, &options), generated) {
        (Ok(mut c), Ok(g)) => {
            c.extend(g.unwrap_or_default());
            c
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let mut backend: Box<dyn Backend + Send> = match a.backend.strip_prefix("engine:") {
        Some(name) => match engine::by_name(name) {
            Some(engine) => Box::new(EngineBackend { engine, options: options.clone() }),
            None => {
                eprintln!("error: unknown engine `{name}` (expected engine:reference or engine:fast)");
                return EXIT_BAD_INPUT;
            }
        },
        None => {
            let secs = |s: f64| Duration::from_secs_f64(s.clamp(0.001, 1e6));
            let po = ProcessOptions {
                command: a.backend.clone(),
                start_timeout: secs(a.start_timeout),
                case_timeout: secs(a.case_timeout),
                max_elements: options.limits.max_elements,
            };
            match ProcessBackend::start(po) {
                Ok(b) => Box::new(b),
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_BAD_INPUT;
                }
            }
        }
    };
    let described = backend.describe();
    eprintln!("backend: {described}; {} cases", cases.len());
    let bar = ProgressBar::new(cases.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} eta {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    let mut bad = 0usize;
    let verbose = a.verbose;
    let results = check_all(&cases, backend.as_mut(), &options, &known, a.ftz, |r| {
        if r.verdict.is_failure() {
            bad += 1;
            bar.set_message(format!("{bad} failing"));
        }
        if verbose && r.verdict != Verdict::Passed {
            let line = format!("{:<12} {} [{}]: {}", r.verdict.name(), r.name, r.op, truncate(&r.detail, 200));
            if bar.is_hidden() {
                println!("{line}");
            } else {
                bar.println(line);
            }
        }
        bar.inc(1);
    });
    bar.finish_and_clear();
    drop(backend);
    let elapsed = start.elapsed();
    print!("{}", terminal_table(&results));
    let t = totals(&results);
    let summary: Vec<String> = Verdict::ALL.iter().filter_map(|v| t.get(v).map(|n| format!("{n} {}", v.name()))).collect();
    println!("{} cases in {:.1} s: {}", results.len(), elapsed.as_secs_f64(), summary.join(", "));
    let mut status = if results.iter().any(|r| r.verdict.is_failure()) { EXIT_FAILURE } else { 0 };
    let mut write = |path: &Option<String>, text: String| {
        if let Some(p) = path {
            if let Err(e) = std::fs::write(p, text) {
                eprintln!("error: cannot write {p}: {e}");
                status = EXIT_BAD_INPUT;
            }
        }
    };
    write(&a.report, markdown(&results, &described, elapsed));
    write(&a.json, serde_json::to_string_pretty(&json_report(&results, &described)).unwrap_or_default() + "\n");
    if let Some(dir) = &a.failures {
        match write_failures(dir, &cases, &results, &options) {
            Ok(n) => eprintln!("{n} failing cases written to {dir}"),
            Err(e) => {
                eprintln!("error: {e}");
                status = EXIT_BAD_INPUT;
            }
        }
    }
    status
}
