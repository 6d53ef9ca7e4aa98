//! Running StableHLO's own test files (`stablehlo/testdata/*.mlir`,
//! `stablehlo/tests/interpret/*.mlir`): every module is read through the
//! MLIR reader, the JSON reader and the verifier, evaluated on an engine
//! without arguments, and each of its checks judged as StableHLO's
//! interpreter would (`stablehlo_check.rs`).

use std::fmt;
use std::path::Path as FsPath;
use std::time::{Duration, Instant};

use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{self, Path, ReadOptions};
use xlaref_reference::literal::Literal;
use xlaref_reference::verify::{self, VerifiedModule, VerifyOptions};
use xlaref_reference::{ReadError, RunError, VerifyError};

use super::case::panic_message;
use super::engine::Engine;
use super::stablehlo_check::{describe, judge, CheckFailure, CheckForm, Rule};
use xlaref_reference::mlir::{self, Check, CheckExpected, MlirError, TestFile, TestModule};

/// Bounds on every module's run.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    pub limits: Limits,
    /// Wall-clock limit of one module's run on one engine.
    pub timeout: Option<Duration>,
    /// Also run files whose first line says `RUN-DISABLED` (StableHLO's
    /// interpreter does not pass them); by default they are skipped.
    pub run_disabled: bool,
}

impl Default for SuiteOptions {
    fn default() -> Self {
        SuiteOptions { limits: Limits::default(), timeout: Some(Duration::from_secs(60)), run_disabled: false }
    }
}

impl SuiteOptions {
    fn env(&self) -> Env {
        let mut limits = self.limits.clone();
        // A deadline per run: one for the whole suite would charge a slow
        // module's time to every module after it.
        limits.deadline = self.timeout.map(|t| Instant::now() + t);
        Env::new(limits)
    }
}

/// Why a module could not be taken as a program: xlaref's readers or the
/// verifier refused it.
#[derive(Clone, Debug, PartialEq)]
pub enum Rejection {
    Mlir(MlirError),
    Read(ReadError),
    Verify(VerifyError),
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Mlir(e) => write!(f, "MLIR reader: {e}"),
            Rejection::Read(e) => write!(f, "read error: {e}"),
            Rejection::Verify(e) => write!(f, "verify error: {e}"),
        }
    }
}

/// Why a module was not judged.
#[derive(Clone, Debug, PartialEq)]
pub enum SkipReason {
    /// The file's first line says `RUN-DISABLED` (with its reason).
    Disabled(String),
    /// A check xlaref has no rule for (`expect_serialized_eq`, ...).
    Unjudged { line: usize, check: String },
    /// The module has no check op (StableHLO tests it with FileCheck lines
    /// on the printed results, which say nothing xlaref can judge).
    NoChecks,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Disabled(reason) => write!(f, "disabled: {reason}"),
            SkipReason::Unjudged { line, check } => write!(f, "line {line}: no rule for `{check}`"),
            SkipReason::NoChecks => write!(f, "no check ops"),
        }
    }
}

/// Why a module that ran (or tried to) failed.
#[derive(Clone, Debug, PartialEq)]
pub enum ModuleFailure {
    /// The engine reported an error.
    Run(RunError),
    /// The engine panicked (a bug in the engine).
    Panicked(String),
    /// A check rejected the values.
    Check { line: usize, rule: Rule, failure: Box<CheckFailure> },
    /// A check reads a result the module does not return (a reader defect).
    MissingValue { line: usize, index: usize },
    /// A check's constant is not a typed literal the JSON reader takes.
    BadConstant { line: usize, error: ReadError },
}

impl fmt::Display for ModuleFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModuleFailure::Run(e) => write!(f, "run error: {e}"),
            ModuleFailure::Panicked(m) => write!(f, "the engine panicked: {m}"),
            ModuleFailure::Check { line, rule, failure } => write!(f, "check at line {line} ({}): {}", rule.name(), describe(failure)),
            ModuleFailure::MissingValue { line, index } => write!(f, "check at line {line}: the module returns no value #{index}"),
            ModuleFailure::BadConstant { line, error } => write!(f, "check at line {line}: expected constant: {error}"),
        }
    }
}

/// What became of one module on one engine.
#[derive(Clone, Debug, PartialEq)]
pub enum ModuleOutcome {
    Passed,
    Failed(ModuleFailure),
    Skipped(SkipReason),
    Rejected(Rejection),
}

/// A module read, verified, and its checks given their rules.
pub struct Prepared {
    module: VerifiedModule,
    checks: Vec<(Check, Rule)>,
}

/// Reads and verifies a module; `Err` is the module's outcome on every
/// engine (skipped or rejected). `lines` are the file's lines, which say
/// whether a check is an op or a custom call (their defaults differ).
pub fn prepare(module: &TestModule, lines: &[&str], options: &SuiteOptions) -> Result<Prepared, ModuleOutcome> {
    // A module the reader refused has no checks either: say why first.
    let json = module.module.as_ref().map_err(|e| ModuleOutcome::Rejected(Rejection::Mlir(e.clone())))?;
    if module.checks.is_empty() {
        return Err(ModuleOutcome::Skipped(SkipReason::NoChecks));
    }
    let read = ReadOptions { max_elements: options.limits.max_elements };
    let ir = json::read_module(json, &Path::new("module"), read).map_err(|e| ModuleOutcome::Rejected(Rejection::Read(e)))?;
    let verified = verify::verify(ir, &VerifyOptions { max_elements: options.limits.max_elements, ..VerifyOptions::default() })
        .map_err(|e| ModuleOutcome::Rejected(Rejection::Verify(e)))?;
    let mut checks = Vec::with_capacity(module.checks.len());
    for check in &module.checks {
        let rule = Rule::for_check(&check.kind, check_form(lines, check.line))
            .map_err(|u| ModuleOutcome::Skipped(SkipReason::Unjudged { line: check.line, check: u.0 }))?;
        checks.push((check.clone(), rule));
    }
    Ok(Prepared { module: verified, checks })
}

/// Whether the check on (1-based) `line` is written as a custom call.
/// Looking at the source line is the only way: the reader's `Check` does
/// not say, and the two forms default differently (`stablehlo_check.rs`).
fn check_form(lines: &[&str], line: usize) -> CheckForm {
    let text = line.checked_sub(1).and_then(|i| lines.get(i)).copied().unwrap_or("");
    if text.contains("custom_call") {
        CheckForm::CustomCall
    } else {
        CheckForm::Op
    }
}

/// Runs a prepared module on `engine` and judges every check, in order;
/// the first failing check is the module's failure.
pub fn run_prepared(prepared: &Prepared, engine: &dyn Engine, options: &SuiteOptions) -> ModuleOutcome {
    let mut env = options.env();
    // A panic is a bug in an engine; report it as this module's failure
    // rather than ending the whole run.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.run(&prepared.module, vec![], &mut env)));
    let result = match run {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => return ModuleOutcome::Failed(ModuleFailure::Run(e)),
        Err(panic) => return ModuleOutcome::Failed(ModuleFailure::Panicked(panic_message(&panic))),
    };
    let values = tuple_elements(&result);
    for (check, rule) in &prepared.checks {
        if let Err(failure) = judge_check(check, rule, values, options) {
            return ModuleOutcome::Failed(failure);
        }
    }
    ModuleOutcome::Passed
}

/// The module's result as the list of values its checks index: the entry
/// returns a tuple of them (a lone value stands for itself).
fn tuple_elements(result: &Literal) -> &[Literal] {
    match result {
        Literal::Tuple(values) => values,
        value => std::slice::from_ref(value),
    }
}

fn judge_check(check: &Check, rule: &Rule, values: &[Literal], options: &SuiteOptions) -> Result<(), ModuleFailure> {
    let line = check.line;
    let value = |index: usize| values.get(index).ok_or(ModuleFailure::MissingValue { line, index });
    let actual = value(check.actual)?;
    let constant;
    let expected = match &check.expected {
        CheckExpected::Output(index) => value(*index)?,
        CheckExpected::Const(json) => {
            constant = json::read_typed_literal(json, &Path::new("expected"), options.limits.max_elements)
                .map_err(|error| ModuleFailure::BadConstant { line, error })?;
            &constant
        }
    };
    judge(rule, actual, expected).map_err(|failure| ModuleFailure::Check { line, rule: *rule, failure: Box::new(failure) })
}

/// One module's outcomes, one per engine (in the order given).
#[derive(Clone, Debug)]
pub struct ModuleReport {
    pub name: String,
    pub line: usize,
    pub checks: usize,
    pub outcomes: Vec<(&'static str, ModuleOutcome)>,
}

/// What became of a file on one engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileVerdict {
    /// No module failed or was rejected, and at least one passed.
    Passed,
    /// A module failed or was rejected.
    Failed,
    /// Every module was skipped.
    Skipped,
}

/// A file's modules and their outcomes.
#[derive(Clone, Debug)]
pub struct FileReport {
    pub path: String,
    pub family: String,
    /// `Some(reason)` for a `RUN-DISABLED` file.
    pub disabled: Option<String>,
    pub modules: Vec<ModuleReport>,
}

impl FileReport {
    pub fn checks(&self) -> usize {
        self.modules.iter().map(|m| m.checks).sum()
    }

    /// The file's verdict on `engine`: it passes when all its modules do
    /// (modules skipped for want of a check do not count against it).
    pub fn verdict(&self, engine: &str) -> FileVerdict {
        let outcomes = || self.modules.iter().flat_map(|m| m.outcomes.iter().filter(|(e, _)| *e == engine).map(|(_, o)| o));
        if outcomes().any(|o| matches!(o, ModuleOutcome::Failed(_) | ModuleOutcome::Rejected(_))) {
            FileVerdict::Failed
        } else if outcomes().any(|o| matches!(o, ModuleOutcome::Passed)) {
            FileVerdict::Passed
        } else {
            FileVerdict::Skipped
        }
    }
}

/// Reads a test file and runs every module on every engine.
pub fn run_file(path: &str, text: &str, engines: &[&dyn Engine], options: &SuiteOptions) -> FileReport {
    run_test_file(path, text, &mlir::read_test_file(text), engines, options)
}

/// Runs every module of a test file already read (from `text`) on every
/// engine.
pub fn run_test_file(path: &str, text: &str, file: &TestFile, engines: &[&dyn Engine], options: &SuiteOptions) -> FileReport {
    let lines: Vec<&str> = text.lines().collect();
    let modules = file
        .modules
        .iter()
        .map(|module| {
            let outcomes = match (&file.disabled, options.run_disabled) {
                (Some(reason), false) => {
                    engines.iter().map(|e| (e.name(), ModuleOutcome::Skipped(SkipReason::Disabled(reason.clone())))).collect()
                }
                _ => match prepare(module, &lines, options) {
                    Ok(prepared) => engines.iter().map(|e| (e.name(), run_prepared(&prepared, *e, options))).collect(),
                    Err(outcome) => engines.iter().map(|e| (e.name(), outcome.clone())).collect(),
                },
            };
            ModuleReport { name: module.name.clone(), line: module.line, checks: module.checks.len(), outcomes }
        })
        .collect();
    FileReport { path: path.to_string(), family: family(FsPath::new(path)), disabled: file.disabled.clone(), modules }
}

/// The row of the per-family table a file belongs to: the first word of a
/// testdata file's name (`scatter_...` → `scatter`), or `interpret/<name>`
/// for StableHLO's per-op interpreter tests.
pub fn family(path: &FsPath) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
    let in_interpret = path.parent().and_then(|p| p.file_name()).is_some_and(|d| d == "interpret");
    if in_interpret {
        format!("interpret/{stem}")
    } else {
        stem.split('_').next().unwrap_or(stem).to_string()
    }
}

/// Where StableHLO's test files are: `$XLAREF_STABLEHLO_TESTS` if set, else
/// `<repo>/../shared/stablehlo-tests` (they are never copied into the
/// repository); `None` when the directory does not exist.
pub fn shared_tests_dir(repo_root: &FsPath) -> Option<std::path::PathBuf> {
    let dir = match std::env::var_os("XLAREF_STABLEHLO_TESTS") {
        Some(d) => std::path::PathBuf::from(d),
        None => repo_root.join("..").join("shared").join("stablehlo-tests"),
    };
    dir.is_dir().then_some(dir)
}
