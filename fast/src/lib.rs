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

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use xlaref_reference::eval::{check_arguments, Env};
use xlaref_reference::literal::Literal;
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

/// Runs the entry computation of `module` on `args`.
pub fn run(module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError> {
    check_arguments(module, &args)?;
    execute(module, env, |ex, entry| ex.call(entry, args))
}

/// Runs the entry computation of `module` on borrowed `args`, which the
/// engine reads without copying (the caller keeps them for another run).
pub fn run_borrowed(module: &VerifiedModule, args: &[Literal], env: &mut Env) -> Result<Literal, RunError> {
    check_arguments(module, args)?;
    execute(module, env, |ex, entry| ex.call_borrowed(entry, args))
}

/// `call(executor, entry)` under `env`'s deadline, on the pool
/// ([`on_pool`]), on the fused form of `module`.
fn execute(
    module: &VerifiedModule,
    env: &mut Env,
    call: impl FnOnce(&mut exec::Executor<'_>, xlaref_reference::ir::ComputationId) -> Result<Literal, RunError> + Send,
) -> Result<Literal, RunError> {
    on_pool(env.hub.is_none(), || {
        let _deadline = xlaref_reference::watch::start(env.limits.deadline, env.limits.time_limit);
        let own;
        let prepared = match module.prepared(|| Prepared::of(module)) {
            Some(kept) => kept,
            None => {
                own = Prepared::of(module);
                &own
            }
        };
        let mut ex = exec::Executor::with_plans(prepared.inlined.as_ref().unwrap_or(module), env, &prepared.plans);
        let result = call(&mut ex, module.entry());
        ex.report();
        result
    })
}

/// What a fused run prepares from a module before running it, once per
/// module: it is kept with the module (`VerifiedModule::prepared`) for
/// the next run, as XLA compiles a program once and runs it many times.
/// For the MLP train step at batch 32 (about 70 instructions), inlining
/// its calls, verifying the result and planning its fusion took about 0.1
/// ms of every 0.33 ms run.
struct Prepared {
    /// The module with its calls inlined ([`fused_form`]); None to run it
    /// as it is.
    inlined: Option<VerifiedModule>,
    /// Per computation of the module run: its fusion plan, made on its
    /// first call.
    plans: Vec<OnceLock<Arc<fusion::Plan>>>,
}

impl Prepared {
    fn of(module: &VerifiedModule) -> Prepared {
        let inlined = fused_form(module);
        let computations = inlined.as_ref().unwrap_or(module).module().computations.len();
        Prepared { inlined, plans: (0..computations).map(|_| OnceLock::new()).collect() }
    }
}

/// Runs `f` on a thread of rayon's pool (the calling thread waits), with
/// another pool thread kept awake for its parallel ops ([`keep_awake`]), or
/// right here on one. Run from outside the pool, the program's one-thread
/// parts competed for the cores with the pool's threads, which spin for a
/// while after each parallel op before they sleep, and every parallel op
/// paid a wake-up of the pool from outside (an f32[128,1] Log took 8 us
/// in the MLP train step at batch 128; attention at S = 64 took 0.21-0.25
/// ms, 0.155 on the pool). On a pool thread the parallel ops share their
/// work with the other threads the usual way.
///
/// Not for one of several replicas (`alone` false): each waits for the
/// others at its collectives, and the pool has fewer threads than a run
/// may have replicas. Nor when the pool was built before [`init_pool`]
/// could give its threads the stack a run on the calling thread has.
fn on_pool<R: Send>(alone: bool, f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() || !alone || !init_pool() {
        f()
    } else {
        let alone_in_pool = RUNS_ON_POOL.fetch_add(1, Ordering::AcqRel) == 0 && rayon::current_num_threads() > 1;
        let done = AtomicBool::new(false);
        let result = rayon::scope(|s| {
            if alone_in_pool {
                s.spawn(|_| keep_awake(&done));
            }
            // Set however `f` ends: the scope waits for the keeper.
            let _stop = Stop(&done);
            f()
        });
        RUNS_ON_POOL.fetch_sub(1, Ordering::AcqRel);
        result
    }
}

/// Sets its flag when dropped.
struct Stop<'a>(&'a AtomicBool);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Runs [`on_pool`] has moved onto the pool and not yet finished.
static RUNS_ON_POOL: AtomicUsize = AtomicUsize::new(0);

/// Keeps a pool thread awake while a run lasts (`done` false), taking the
/// run's parallel work as it comes. Between two parallel ops rayon's idle
/// threads yield a few times and then sleep, and waking one took 10-20 us
/// on this KVM guest, paid by nearly every parallel op of a program of
/// small ops: attention over S=128, d=256 0.96 -> 0.86 ms, an MLP train
/// step at batch 100 1.52 -> 1.34-1.39, a conv net 8×32×32×32 1.69 ->
/// 1.59. Only for a run alone on the pool: beside another run it would
/// take that run's work into its own wait (`rayon::yield_now` runs any
/// pending job), and a campaign's jobs keep the threads busy anyway.
fn keep_awake(done: &AtomicBool) {
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() != Some(rayon::Yield::Executed) {
            std::hint::spin_loop();
        }
    }
}

/// Builds rayon's global pool with threads of 16 MiB stacks (as the
/// replicas' threads have), if no one has built it yet; whether its
/// threads have them. Call it before anything uses rayon (the CLI does
/// first thing) for runs to take place on the pool ([`on_pool`]).
pub fn init_pool() -> bool {
    static BUILT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *BUILT.get_or_init(|| rayon::ThreadPoolBuilder::new().stack_size(16 << 20).build_global().is_ok())
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
