//! xlaref's fast engine: an independent optimized evaluator of verified
//! modules. It shares the IR, the value containers, the reader and the
//! verifier with the reference, never its evaluation code: element
//! semantics (`elem/`), kernels (`kernels/`) and the executor are its own,
//! so a difference between the engines means a bug in one of them.

mod elem;
mod exec;
mod fusion;
mod inline;
pub mod isa;
mod kernels;
mod par;
pub mod peak;
pub mod planted;
mod profile;
mod stream;
// Used by the reduce, sort and scatter kernels as they land.
#[allow(dead_code)]
mod applied;

use xlaref_reference::eval::{check_arguments, Env};
use xlaref_reference::literal::Literal;
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

/// Runs the entry computation of `module` on `args`.
pub fn run(module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError> {
    check_arguments(module, &args)?;
    let _deadline = xlaref_reference::watch::start(env.limits.deadline, env.limits.time_limit);
    let inlined = fused_form(module);
    let mut ex = exec::Executor::new(inlined.as_ref().unwrap_or(module), env);
    let result = ex.call(module.entry(), args);
    ex.report();
    result
}

/// Runs the entry computation of `module` on borrowed `args`, which the
/// engine reads without copying (the caller keeps them for another run).
pub fn run_borrowed(module: &VerifiedModule, args: &[Literal], env: &mut Env) -> Result<Literal, RunError> {
    check_arguments(module, args)?;
    let _deadline = xlaref_reference::watch::start(env.limits.deadline, env.limits.time_limit);
    let inlined = fused_form(module);
    let mut ex = exec::Executor::new(inlined.as_ref().unwrap_or(module), env);
    let result = ex.call_borrowed(module.entry(), args);
    ex.report();
    result
}

/// The module a fused run executes: its Calls inlined (`inline.rs`), when
/// it has any and fusion is on; None to run it as it is.
fn fused_form(module: &VerifiedModule) -> Option<VerifiedModule> {
    if fusion::enabled_by_environment() {
        inline::inline_calls(module)
    } else {
        None
    }
}

/// [`run_borrowed`] with every op run on its own, no fusion: the
/// differential tests compare it with the fused run.
pub fn run_unfused(module: &VerifiedModule, args: &[Literal], env: &mut Env) -> Result<Literal, RunError> {
    check_arguments(module, args)?;
    let _deadline = xlaref_reference::watch::start(env.limits.deadline, env.limits.time_limit);
    exec::Executor::unfused(module, env).call_borrowed(module.entry(), args)
}

/// An invariant of this engine broke: a bug in it, not the program's
/// failure (the harness reports it as a crash). Every kernel builds its
/// internal errors here.
pub(crate) fn internal(what: &str) -> RunError {
    RunError::Internal(format!("fast engine: {what} (a verified module should not reach this)"))
}

/// Whether any computation of `module` has a fusion group (so a fused
/// run can differ from an op-by-op one).
pub fn fuses(module: &VerifiedModule) -> bool {
    (0..module.module().computations.len()).any(|id| !fusion::plan_computation(module, id).groups.is_empty())
}

/// The fusion groups of the entry computation (instruction indices, each
/// group's root last), for tests and debugging: what `run` fuses. With
/// Calls inlined, the indices are those of the inlined entry (a call's
/// operands, then its body's instructions but the parameters, in place of
/// the Call).
pub fn fusion_groups(module: &VerifiedModule) -> Vec<Vec<usize>> {
    let inlined = fused_form(module);
    let module = inlined.as_ref().unwrap_or(module);
    fusion::plan_computation(module, module.entry()).groups
}

/// How many of [`fusion_groups`] are row pipelines (groups with row
/// reductions inside, `fusion/pipeline.rs`), for tests.
pub fn row_pipelines(module: &VerifiedModule) -> usize {
    let inlined = fused_form(module);
    let module = inlined.as_ref().unwrap_or(module);
    fusion::plan_computation(module, module.entry()).folds.iter().filter(|f| !f.is_empty()).count()
}
