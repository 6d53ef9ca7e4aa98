//! Conformance of a backend (docs/backends.md): every case runs on the
//! backend and on the reference, and the backend's answer gets a
//! [`Verdict`]. A value that differs is held against the tolerance model
//! one instruction at a time, and a difference that a documented deviation
//! class explains ([`super::deviation`]) is reported as that deviation.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use xlaref_reference::eval::Env;
use xlaref_reference::json as xjson;
use xlaref_reference::literal::Literal;

use super::backend::{Backend, BackendEngine, Reply};
use super::case::{case_files, judge, read_cases, run_case, Case, Expected, Outcome, RunOptions};
use super::compare::{compare, Mismatch};
use super::deviation::{self, Class};
use super::engine::{Engine, Reference};
use super::ftz;
use super::interrupt;
use super::lockstep::{self, lockstep};
use super::shard::Shard;

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

    pub fn from_name(name: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn short(self) -> &'static str {
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
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    pub name: String,
    pub file: String,
    pub op: String,
    pub verdict: Verdict,
    pub detail: String,
}

/// What a backend is known to do differently (a known-deviations file):
/// case names with the reason written after them, and deviation classes.
#[derive(Clone, Debug, Default)]
pub struct Known {
    pub cases: HashMap<String, String>,
    pub classes: Vec<KnownClass>,
}

/// A deviation class as listed: `class:ID [op=A,B]  # reason`.
#[derive(Clone, Debug, PartialEq)]
pub struct KnownClass {
    pub class: Class,
    /// The ops it is known for (all when empty).
    pub ops: Vec<String>,
    /// `ulps=N`: the bound of [`Class::Accuracy`].
    pub ulps: Option<f64>,
    pub reason: String,
}

impl KnownClass {
    fn applies_to(&self, op: &str) -> bool {
        self.ops.is_empty() || self.ops.iter().any(|o| o == op)
    }

    fn reason(&self) -> &str {
        if self.reason.is_empty() {
            self.class.rule()
        } else {
            &self.reason
        }
    }
}

impl Known {
    /// Reads a known-deviations file: one case name or `class:ID [op=A,B]`
    /// a line, a reason after `#`.
    pub fn parse(text: &str) -> Result<Known, String> {
        let mut known = Known::default();
        for (n, line) in text.lines().enumerate() {
            let (name, comment) = match line.split_once('#') {
                Some((n, c)) => (n.trim(), c.trim().to_string()),
                None => (line.trim(), String::new()),
            };
            if let Some(spec) = name.strip_prefix("class:") {
                let mut words = spec.split_whitespace();
                let id = words.next().unwrap_or("");
                let class = Class::from_id(id).ok_or_else(|| {
                    let ids: Vec<&str> = Class::ALL.iter().map(|c| c.id()).collect();
                    format!("line {}: unknown deviation class `{id}` (known: {})", n + 1, ids.join(", "))
                })?;
                let (mut ops, mut ulps) = (Vec::new(), None);
                for w in words {
                    if let Some(list) = w.strip_prefix("op=") {
                        ops.extend(list.split(',').filter(|o| !o.is_empty()).map(String::from));
                    } else if let Some(n) = w.strip_prefix("ulps=").and_then(|v| v.parse::<f64>().ok()).filter(|v| *v >= 0.0) {
                        ulps = Some(n);
                    } else {
                        return Err(format!("line {}: expected `op=A,B` or `ulps=N` after the class, found `{w}`", n + 1));
                    }
                }
                if (class == Class::Accuracy) != ulps.is_some() {
                    return Err(format!("line {}: `ulps=N` goes with class:accuracy, and class:accuracy needs it", n + 1));
                }
                known.classes.push(KnownClass { class, ops, ulps, reason: comment });
            } else if !name.is_empty() {
                known.cases.insert(name.to_string(), comment);
            }
        }
        Ok(known)
    }

    /// Adds a class (`--ftz`), unless the file already names it.
    pub fn add_class(&mut self, class: Class) {
        if !self.has(class) {
            self.classes.push(KnownClass { class, ops: vec![], ulps: None, reason: String::new() });
        }
    }

    fn has(&self, class: Class) -> bool {
        self.classes.iter().any(|k| k.class == class)
    }
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
/// plumbing), or the family (the name before `/`) for text modules.
pub fn case_op(case: &Case) -> String {
    use serde_json::Value;
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
        (Reply::Crash(e) | Reply::Down(e), _) => return (Crashed, e.clone()),
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

/// A case as read from a file: its name, the file, and the case or why it
/// could not be read.
pub struct LoadedCase {
    pub name: String,
    pub file: String,
    pub case: Result<Case, String>,
}

/// Every case under the paths, with the file it came from; cases that cannot
/// be read are returned as errors. (Anything producing `Case`s, such as the
/// random-program generators, can feed [`check_all`] too.)
pub fn collect_cases(paths: &[String], options: &RunOptions) -> Result<Vec<LoadedCase>, String> {
    let mut out = Vec::new();
    for root in paths {
        let files = case_files(Path::new(root)).map_err(|e| format!("cannot read {root}: {e}"))?;
        for file in files {
            let shown = file.display().to_string();
            let doc = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {shown}: {e}"))
                .and_then(|t| xjson::parse_json(&t).map_err(|e| e.to_string()));
            match doc {
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

/// Keeps the cases of one shard (by position in the run).
pub fn shard_cases(cases: Vec<LoadedCase>, shard: Shard) -> Vec<LoadedCase> {
    cases.into_iter().enumerate().filter(|(i, _)| shard.owns(*i as u64)).map(|(_, c)| c).collect()
}

/// Why a run ended before its last case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT, SIGTERM or SIGHUP ([`interrupt`]).
    Signal(i32),
    /// The backend could not be started again after a crash: every case
    /// left would "crash" for the same reason.
    BackendDown(String),
}

/// The results of the cases that finished, and why the run stopped early
/// (if it did).
pub struct Run {
    pub results: Vec<CaseResult>,
    pub stopped: Option<Stop>,
}

/// Runs every case through the backend and the reference and classifies it,
/// until the cases run out, a signal asks to stop, or the backend is down.
pub fn check_all(
    cases: &[LoadedCase],
    backend: &mut (dyn Backend + Send),
    options: &RunOptions,
    known: &Known,
    mut progress: impl FnMut(&CaseResult),
) -> Run {
    let mut results = Vec::with_capacity(cases.len());
    for LoadedCase { name, file, case } in cases {
        if let Some(signal) = interrupt::requested() {
            return Run { results, stopped: Some(Stop::Signal(signal)) };
        }
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
                // The case in flight when a signal came is not reported: the
                // backend may have been interrupted too.
                if let Some(signal) = interrupt::requested() {
                    return Run { results, stopped: Some(Stop::Signal(signal)) };
                }
                if let Reply::Down(why) = &reply {
                    return Run { results, stopped: Some(Stop::BackendDown(why.clone())) };
                }
                let (verdict, detail) = judge_case(case, backend, &reply, options, known);
                CaseResult { name: name.clone(), file: file.clone(), op: case_op(case), verdict, detail }
            }
        };
        progress(&result);
        results.push(result);
    }
    Run { results, stopped: None }
}

/// The verdict on one reply: direct comparison, then the tolerance model,
/// then the known deviations (classes, then case names).
fn judge_case(case: &Case, backend: &mut (dyn Backend + Send), reply: &Reply, options: &RunOptions, known: &Known) -> (Verdict, String) {
    let reference = run_case(case, &Reference, options);
    let (mut verdict, mut detail) = classify(case, &reference, reply);
    if verdict == Verdict::Failed && matches!(reply, Reply::Value { .. }) {
        if let Some(judged) = judge_by_model(case, backend, options, known) {
            (verdict, detail) = judged;
        }
    }
    if let (Verdict::Failed, Reply::PerReplica(values), true) = (verdict, reply, known.has(Class::FlushesSubnormals)) {
        if flushing_explains_replicas(case, values, options) {
            verdict = Verdict::KnownDeviation;
            detail = format!("class:ftz ({}): {detail}", Class::FlushesSubnormals.rule());
        }
    }
    if judge(case, &reference).is_err() && verdict != Verdict::Passed {
        detail = format!("{detail} (note: the reference does not pass this case itself)");
    }
    // Only a failure can be a known deviation: an unsupported op stays
    // unsupported even on a listed case.
    if verdict.is_failure() {
        if let Some(reason) = known.cases.get(&case.name) {
            verdict = Verdict::KnownDeviation;
            detail = if reason.is_empty() { detail } else { format!("{reason}: {detail}") };
        }
    }
    (verdict, detail)
}

/// A value that differs from the reference's, held against the tolerance
/// model (docs/tolerance.md): the program runs again on the backend one
/// instruction at a time, on the reference's operands. `Passed` when every
/// instruction is within its allowance; a known deviation when a class of
/// `known` explains the first instruction that is not; `Failed` naming it
/// otherwise. Cases with their own `tolerance`, several replicas or a text
/// module keep the direct comparison (`None`).
fn judge_by_model(case: &Case, backend: &mut (dyn Backend + Send), options: &RunOptions, known: &Known) -> Option<(Verdict, String)> {
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
            match explaining_classes(&d, &other, options, known, &env) {
                Some(classes) => {
                    let ids: Vec<&str> = classes.iter().map(|k| k.class.id()).collect();
                    let reasons: Vec<&str> = classes.iter().map(|k| k.reason()).collect();
                    (Verdict::KnownDeviation, format!("class:{} ({}): {detail}", ids.join("+"), reasons.join("; ")))
                }
                None => (Verdict::Failed, detail),
            }
        }
    })
}

/// The fewest known classes whose rules together give the backend's value
/// of the disagreeing instruction.
fn explaining_classes<'k>(
    d: &lockstep::Disagreement,
    backend: &dyn Engine,
    options: &RunOptions,
    known: &'k Known,
    env: &dyn Fn() -> Env,
) -> Option<Vec<&'k KnownClass>> {
    let listed: Vec<&KnownClass> = known.classes.iter().filter(|k| k.applies_to(d.op)).collect();
    if listed.is_empty() {
        return None;
    }
    let single = xlaref_reference::verify::verify(d.module.clone(), &options.verify_options()).ok()?;
    let got = backend.run(&single, d.args.clone(), &mut env()).ok()?;
    deviation::combinations(&listed).into_iter().find(|together| {
        let classes: Vec<Class> = together.iter().map(|k| k.class).collect();
        let ulps = together.iter().find_map(|k| k.ulps);
        deviation::explained_by(&classes, ulps, &single, &d.args, &got, env)
    })
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

/// Per-op counts, ops sorted by name.
pub fn tally(results: &[CaseResult]) -> BTreeMap<String, BTreeMap<Verdict, usize>> {
    let mut t: BTreeMap<String, BTreeMap<Verdict, usize>> = BTreeMap::new();
    for r in results {
        *t.entry(r.op.clone()).or_default().entry(r.verdict).or_default() += 1;
    }
    t
}

/// Counts over all ops.
pub fn totals(results: &[CaseResult]) -> BTreeMap<Verdict, usize> {
    let mut t = BTreeMap::new();
    for r in results {
        *t.entry(r.verdict).or_default() += 1;
    }
    t
}
