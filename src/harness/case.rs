//! Cases (docs/format.md §4): reading case files, running a case on an engine,
//! and judging the outcome.

use std::path::Path as FsPath;

use serde_json::{Map, Value};
use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{self, Path, ReadOptions};
use xlaref_reference::literal::Literal;
use xlaref_reference::verify::{self, VerifyOptions};
use xlaref_reference::{ReadError, RunError, VerifyError};

use super::compare::{compare, Tolerance};
use super::engine::{Engine, Reference};
use super::lockstep::{lockstep, Verdict};

/// What a case says must come out.
#[derive(Clone, Debug)]
pub enum Expected {
    Value(Literal),
    /// The run must fail with a message containing this text (any case).
    Error(String),
    /// One result per replica.
    PerReplica(Vec<Literal>),
}

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    pub source: Option<String>,
    /// The module: a JSON module object (HLO text is imported when read).
    pub module: Value,
    pub args: Vec<Literal>,
    pub replicas: usize,
    pub replica_args: Option<Vec<Vec<Literal>>>,
    pub expected: Expected,
    pub tolerance: Option<Tolerance>,
    pub infeed: Vec<Literal>,
    pub outfeed: Option<Vec<Literal>>,
    pub seed: Option<u64>,
    pub implementation_defined: bool,
}

/// Limits for reading, verifying and running cases.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub limits: Limits,
}

impl RunOptions {
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions { max_elements: self.limits.max_elements }
    }
    pub fn verify_options(&self) -> VerifyOptions {
        VerifyOptions { max_elements: self.limits.max_elements, ..VerifyOptions::default() }
    }
}

const CASE_KEYS: [&str; 15] = [
    "format",
    "name",
    "source",
    "module",
    "args",
    "expected",
    "tolerance",
    "replicas",
    "replica_args",
    "expected_per_replica",
    "infeed",
    "outfeed",
    "seed",
    "implementation_defined",
    "comment",
];

/// Reads every case of a file's JSON: one case, or `{"cases": [...]}`. Each
/// entry is the case or why it could not be read (named by its position).
pub fn read_cases(doc: &Value, file: &str, options: &RunOptions) -> Vec<(String, Result<Case, String>)> {
    let fallback = |i: Option<usize>| match i {
        Some(i) => format!("{file}#{i}"),
        None => file.to_string(),
    };
    match doc.get("cases") {
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let path = Path::new(format!("cases[{i}]"));
                let name = c.get("name").and_then(Value::as_str).map(String::from).unwrap_or_else(|| fallback(Some(i)));
                (name, read_case(c, &path, options))
            })
            .collect(),
        Some(_) => vec![(fallback(None), Err("`cases` must be a list".into()))],
        None => {
            let name = doc.get("name").and_then(Value::as_str).map(String::from).unwrap_or_else(|| fallback(None));
            vec![(name, read_case(doc, &Path::root(), options))]
        }
    }
}

fn literal_list(v: Option<&Value>, path: &Path, max: i64) -> Result<Vec<Literal>, String> {
    let Some(v) = v else { return Ok(vec![]) };
    let list = v.as_array().ok_or_else(|| format!("{}: expected a list of typed literals", path.as_str()))?;
    list.iter().enumerate().map(|(i, x)| json::read_typed_literal(x, &path.index(i), max).map_err(|e| e.to_string())).collect()
}

/// Reads one case object.
pub fn read_case(v: &Value, path: &Path, options: &RunOptions) -> Result<Case, String> {
    let obj: &Map<String, Value> = v.as_object().ok_or("a case must be a JSON object")?;
    for key in obj.keys() {
        if !CASE_KEYS.contains(&key.as_str()) {
            return Err(format!("{}: unknown case key `{key}`", path.key(key).as_str()));
        }
    }
    if let Some(f) = obj.get("format") {
        if f.as_str() != Some("xla-json/1") {
            return Err(format!("unsupported format {f}"));
        }
    }
    let max = options.limits.max_elements;
    let name = obj.get("name").and_then(Value::as_str).unwrap_or("(unnamed)").to_string();
    let module = match obj.get("module").cloned().ok_or("a case needs a `module`")? {
        // HLO or StableHLO text (docs/format.md §4) is imported once, here: everything
        // downstream (engines, lockstep runs, backends) sees the JSON module.
        Value::String(text) if xlaref_reference::mlir::is_mlir_text(&text) => {
            xlaref_reference::mlir::mlir_to_json(&text).map_err(|e| format!("{}: {e}", path.key("module").as_str()))?
        }
        Value::String(text) => xlaref_reference::hlo::hlo_to_json(&text).map_err(|e| format!("{}: {e}", path.key("module").as_str()))?,
        m => m,
    };
    let args = literal_list(obj.get("args"), &path.key("args"), max)?;
    let replicas = match obj.get("replicas") {
        None => 1,
        Some(r) => r.as_u64().filter(|&n| (1..=1024).contains(&n)).ok_or("`replicas` must be an integer in [1, 1024]")? as usize,
    };
    let replica_args = match obj.get("replica_args") {
        None => None,
        Some(v) => {
            let p = path.key("replica_args");
            let lists = v.as_array().ok_or("`replica_args` is a list of argument lists")?;
            Some(lists.iter().enumerate().map(|(i, l)| literal_list(Some(l), &p.index(i), max)).collect::<Result<Vec<_>, _>>()?)
        }
    };
    let expected = match (obj.get("expected"), obj.get("expected_per_replica")) {
        (Some(e), _) if e.get("error").is_some() => {
            let text = e.get("error").and_then(Value::as_str).ok_or("`expected.error` must be a string")?;
            Expected::Error(text.to_string())
        }
        (Some(e), None) => Expected::Value(json::read_typed_literal(e, &path.key("expected"), max).map_err(|e| e.to_string())?),
        (_, Some(list)) => Expected::PerReplica(literal_list(Some(list), &path.key("expected_per_replica"), max)?),
        (None, None) => return Err("a case needs `expected` or `expected_per_replica`".into()),
    };
    let tolerance = obj.get("tolerance").map(Tolerance::from_json).transpose()?;
    let infeed = literal_list(obj.get("infeed"), &path.key("infeed"), max)?;
    let outfeed = match obj.get("outfeed") {
        None => None,
        Some(v) => Some(literal_list(Some(v), &path.key("outfeed"), max)?),
    };
    let seed = match obj.get("seed") {
        None => None,
        Some(s) => Some(s.as_u64().ok_or("`seed` must be a non-negative integer")?),
    };
    let implementation_defined = obj.get("implementation_defined").and_then(Value::as_bool).unwrap_or(false);
    Ok(Case {
        name,
        source: obj.get("source").and_then(Value::as_str).map(String::from),
        module,
        args,
        replicas,
        replica_args,
        expected,
        tolerance,
        infeed,
        outfeed,
        seed,
        implementation_defined,
    })
}

/// What running a case produced.
#[derive(Debug)]
pub struct Outcome {
    /// The result (of replica 0 when there are several), or why there is
    /// none (for several replicas: every failing replica's error).
    pub result: Result<Literal, CaseFailure>,
    pub outfeed: Vec<Literal>,
    /// Every replica's result, for a case with `replicas` > 1 or `replica_args`.
    pub per_replica: Option<Vec<Literal>>,
}

/// Why a case gave no value, by the stage that failed. The harness decides
/// on the variant (a crash is an engine's bug; anything else is the
/// program's or the case's failure); the text (`Display`) is what a case's
/// `expected: {"error": ...}` is matched against (docs/format.md §4).
#[derive(Debug, Clone)]
pub enum CaseFailure {
    /// The case file contradicts itself (`replica_args` for another count).
    Malformed(String),
    Read(ReadError),
    Verify(VerifyError),
    Run(RunError),
    /// Replicas that failed, each with its error (a reason shared by
    /// several replicas is given for the first of them only).
    Replicas(Vec<(usize, RunError)>),
    /// The engine panicked.
    Panic {
        engine: &'static str,
        message: String,
    },
}

impl CaseFailure {
    /// Whether the engine broke (a panic, or an invariant of its own: a
    /// `RunError::Internal`), rather than the program or the case failing.
    pub fn is_crash(&self) -> bool {
        match self {
            CaseFailure::Panic { .. } | CaseFailure::Run(RunError::Internal(_)) => true,
            CaseFailure::Replicas(errors) => errors.iter().any(|(_, e)| matches!(e, RunError::Internal(_))),
            _ => false,
        }
    }
}

impl std::fmt::Display for CaseFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaseFailure::Malformed(m) => write!(f, "malformed case: {m}"),
            CaseFailure::Read(e) => write!(f, "read error: {e}"),
            CaseFailure::Verify(e) => write!(f, "verify error: {e}"),
            CaseFailure::Run(e) => write!(f, "run error: {e}"),
            CaseFailure::Replicas(errors) => {
                let parts: Vec<String> = errors.iter().map(|(r, e)| format!("replica {r}: run error: {e}")).collect();
                write!(f, "{}", parts.join("; "))
            }
            CaseFailure::Panic { engine, message } => write!(f, "internal error: the {engine} engine panicked: {message}"),
        }
    }
}

/// Reads, verifies and runs a case's module on one engine.
pub fn run_case(case: &Case, engine: &dyn Engine, options: &RunOptions) -> Outcome {
    let mut env = Env::new(options.limits.clone());
    env.seed = case.seed.unwrap_or(0);
    env.infeed = case.infeed.iter().cloned().collect();
    if case.replicas > 1 || case.replica_args.is_some() {
        return run_replicated_case(case, engine, options);
    }
    let result = (|| {
        let module = json::read_module(&case.module, &Path::new("module"), options.read_options()).map_err(CaseFailure::Read)?;
        let verified = verify::verify(module, &options.verify_options()).map_err(CaseFailure::Verify)?;
        xlaref_reference::replicas::check_module(&verified, 1).map_err(CaseFailure::Run)?;
        // A panic is a bug in an engine; report it as this case's failure
        // rather than ending the whole run.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.run(&verified, case.args.clone(), &mut env)));
        let result = match run {
            Ok(result) => result.map_err(CaseFailure::Run)?,
            Err(panic) => return Err(CaseFailure::Panic { engine: engine.name(), message: panic_message(&panic) }),
        };
        // A Send nobody received is an error too (replicas.rs).
        if let Some(hub) = &env.hub {
            hub.end_check().map_err(CaseFailure::Run)?;
        }
        Ok(result)
    })();
    // Elements beyond a dynamic size are unspecified: compare values by
    // their defined elements only.
    let mut result = result;
    if let Ok(value) = &mut result {
        value.clear_padding();
    }
    let mut outfeed = env.outfeed;
    outfeed.iter_mut().for_each(Literal::clear_padding);
    Outcome { result, outfeed, per_replica: None }
}

/// Runs a case with several replicas (docs/format.md §4): each replica gets its
/// list of `replica_args` (or, without it, `args`), all run at once on
/// their own threads (`engine::run_replicas`). The outfeed is every
/// replica's outfeed, in replica order.
fn run_replicated_case(case: &Case, engine: &dyn Engine, options: &RunOptions) -> Outcome {
    let n = case.replicas;
    let failed = |e: CaseFailure| Outcome { result: Err(e), outfeed: vec![], per_replica: None };
    let args: Vec<Vec<Literal>> = match &case.replica_args {
        Some(lists) if lists.len() != n => {
            return failed(CaseFailure::Malformed(format!("`replica_args` has {} argument lists for {n} replicas", lists.len())))
        }
        Some(lists) => lists.clone(),
        None => vec![case.args.clone(); n],
    };
    let module = match json::read_module(&case.module, &Path::new("module"), options.read_options()) {
        Ok(m) => m,
        Err(e) => return failed(CaseFailure::Read(e)),
    };
    let verified = match verify::verify(module, &options.verify_options()) {
        Ok(v) => v,
        Err(e) => return failed(CaseFailure::Verify(e)),
    };
    let make_env = || {
        let mut env = Env::new(options.limits.clone());
        env.seed = case.seed.unwrap_or(0);
        env.infeed = case.infeed.iter().cloned().collect();
        env
    };
    let run = super::engine::run_replicas(engine, &verified, args, &make_env);
    let outfeed = run.envs.into_iter().flat_map(|e| e.outfeed).collect();
    let mut errors: Vec<(usize, RunError)> = Vec::new();
    let mut values = Vec::with_capacity(n);
    for (r, result) in run.results.into_iter().enumerate() {
        match result {
            Ok(v) => values.push(v),
            // Replicas that fail for the same reason say it once.
            Err(e) if errors.iter().any(|(_, seen)| *seen == e) => {}
            Err(e) => errors.push((r, e)),
        }
    }
    if !errors.is_empty() {
        return Outcome { result: Err(CaseFailure::Replicas(errors)), outfeed, per_replica: None };
    }
    let first = values.first().cloned().ok_or_else(|| CaseFailure::Malformed("no replicas".into()));
    Outcome { result: first, outfeed, per_replica: Some(values) }
}

/// The text of a panic payload.
pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// Judges an outcome against the case: `Ok` or the reason it fails.
pub fn judge(case: &Case, outcome: &Outcome) -> Result<(), String> {
    match (&case.expected, &outcome.result) {
        (Expected::Error(text), Err(failure)) => {
            let message = failure.to_string();
            if message.to_lowercase().contains(&text.to_lowercase()) {
                Ok(())
            } else {
                Err(format!("expected an error containing \"{text}\", got: {message}"))
            }
        }
        (Expected::Error(text), Ok(value)) => {
            Err(format!("expected an error containing \"{text}\", but the run succeeded with shape {}", value.shape()))
        }
        (_, Err(message)) => Err(message.to_string()),
        (Expected::Value(expected), Ok(actual)) => {
            // With several replicas, every replica must produce the value.
            let all = outcome.per_replica.as_deref().unwrap_or(std::slice::from_ref(actual));
            for (r, actual) in all.iter().enumerate() {
                if let Some(m) = compare(actual, expected, case.tolerance.as_ref()) {
                    return Err(if all.len() > 1 { format!("replica {r}: {m}") } else { m.to_string() });
                }
            }
            judge_outfeed(case, outcome)
        }
        (Expected::PerReplica(expected), Ok(actual)) => {
            let all = outcome.per_replica.as_deref().unwrap_or(std::slice::from_ref(actual));
            if expected.len() != all.len() {
                return Err(format!("expected_per_replica has {} results, the run has {} replicas", expected.len(), all.len()));
            }
            for (r, (actual, expected)) in all.iter().zip(expected).enumerate() {
                if let Some(m) = compare(actual, expected, case.tolerance.as_ref()) {
                    return Err(format!("replica {r}: {m}"));
                }
            }
            judge_outfeed(case, outcome)
        }
    }
}

/// Judges an engine other than the reference. It passes when its value
/// matches the case's expectation; failing that, when the reference's value
/// does, the case sets no `tolerance` of its own, and the engine agrees with
/// the reference instruction by instruction under the tolerance model
/// (docs/tolerance.md): a reassociated sum is honest, a wrong term is not.
pub fn judge_under_model(case: &Case, outcome: &Outcome, engine: &dyn Engine, options: &RunOptions) -> Result<(), String> {
    let direct = judge(case, outcome);
    if direct.is_ok() || engine.name() == Reference.name() || case.tolerance.is_some() || case.replicas > 1 {
        return direct;
    }
    let (Expected::Value(_), Ok(_)) = (&case.expected, &outcome.result) else { return direct };
    if judge(case, &run_case(case, &Reference, options)).is_err() {
        return direct;
    }
    let Ok(module) = json::read_module(&case.module, &Path::new("module"), options.read_options()) else { return direct };
    let Ok(verified) = verify::verify(module, &options.verify_options()) else { return direct };
    let env = || {
        let mut env = Env::new(options.limits.clone());
        env.seed = case.seed.unwrap_or(0);
        env
    };
    match lockstep(&verified, &case.args, &Reference, engine, &options.verify_options(), &env) {
        Verdict::Agree(_) => Ok(()),
        Verdict::Disagree(d) => Err(format!(
            "{} (and beyond the tolerance model at instruction `{}` ({}): {})",
            direct.err().unwrap_or_default(),
            d.instruction,
            d.op,
            d.detail
        )),
    }
}

fn judge_outfeed(case: &Case, outcome: &Outcome) -> Result<(), String> {
    let Some(expected) = &case.outfeed else { return Ok(()) };
    if expected.len() != outcome.outfeed.len() {
        return Err(format!("outfeed: expected {} values, got {}", expected.len(), outcome.outfeed.len()));
    }
    for (i, (a, e)) in outcome.outfeed.iter().zip(expected).enumerate() {
        if let Some(m) = compare(a, e, case.tolerance.as_ref()) {
            return Err(format!("outfeed[{i}]: {m}"));
        }
    }
    Ok(())
}

/// Every `.json` file under a path (the path itself if it is a file), sorted.
pub fn case_files(path: &FsPath) -> std::io::Result<Vec<std::path::PathBuf>> {
    files_with_extensions(path, &["json"])
}

/// Every file under a path whose extension is one of `extensions` (the path
/// itself if it is a file, whatever its name), sorted.
pub fn files_with_extensions(path: &FsPath, extensions: &[&str]) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    // Anything that is not a directory (a file, a device, a FIFO) is read as
    // the one file given; reading is bounded (cli::read_bytes).
    if !std::fs::metadata(path)?.is_dir() {
        out.push(path.to_path_buf());
        return Ok(out);
    }
    let mut stack = vec![path.to_path_buf()];
    // Each directory once, however many symbolic links lead to it (a link
    // loop would list the same cases again and again).
    let mut seen = std::collections::HashSet::new();
    while let Some(dir) = stack.pop() {
        if !seen.insert(std::fs::canonicalize(&dir)?) {
            continue;
        }
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| extensions.iter().any(|x| e == *x)) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}
