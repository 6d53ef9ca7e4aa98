//! The engine interface both evaluators (and, through the backend protocol,
//! outside processes) implement.

use xlaref_reference::eval::{self, Env};
use xlaref_reference::literal::Literal;
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

/// Something that runs verified modules.
pub trait Engine: Sync {
    fn name(&self) -> &'static str;
    fn run(&self, module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError>;

    /// Runs on borrowed arguments, if the engine can do so without copying
    /// them; `None` when it consumes its arguments (the caller then copies
    /// them and calls [`Engine::run`]). The benchmark times this, as XLA's
    /// timings run on inputs already in place.
    fn run_borrowed(&self, _module: &VerifiedModule, _args: &[Literal], _env: &mut Env) -> Option<Result<Literal, RunError>> {
        None
    }

    /// The engine's own consistency on a whole program, which a lockstep
    /// run (one instruction at a time) cannot see: None when it holds,
    /// else what differs. For the fast engine, the fused run equals the
    /// op-by-op run.
    fn whole_program_check(&self, _module: &VerifiedModule, _args: &[Literal], _env: &dyn Fn() -> Env) -> Option<String> {
        None
    }
}

/// The reference evaluator of `reference/`.
pub struct Reference;

impl Engine for Reference {
    fn name(&self) -> &'static str {
        "reference"
    }
    fn run(&self, module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError> {
        eval::run(module, args, env)
    }
}

/// The optimized engine of `fast/`.
pub struct Fast;

impl Engine for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }
    fn run(&self, module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError> {
        xlaref_fast::run(module, args, env)
    }
    fn run_borrowed(&self, module: &VerifiedModule, args: &[Literal], env: &mut Env) -> Option<Result<Literal, RunError>> {
        Some(xlaref_fast::run_borrowed(module, args, env))
    }
    /// Fused against op by op, exactly (NaN payloads aside: which NaN a
    /// sum of two NaNs returns depends on the operand order the compiler
    /// picked for an add), when the program has fusion groups in any
    /// computation (a lockstep run only ever runs one instruction).
    /// A program that looks at a NaN's sign and payload (a total-order
    /// Compare, a bitcast) can turn that free choice into any value
    /// downstream, so its whole results are not compared; lockstep has
    /// already held each of its instructions to the reference.
    fn whole_program_check(&self, module: &VerifiedModule, args: &[Literal], env: &dyn Fn() -> Env) -> Option<String> {
        if !xlaref_fast::fuses(module) || observes_nan_bits(module) {
            return None;
        }
        match (xlaref_fast::run_borrowed(module, args, &mut env()), xlaref_fast::run_unfused(module, args, &mut env())) {
            (Ok(fused), Ok(unfused)) => super::compare::compare(&fused, &unfused, None)
                .map(|m| format!("the fast engine's fused run differs from its op-by-op run: {m}")),
            (Err(_), Err(_)) => None,
            (Ok(_), Err(e)) => Some(format!("the fast engine's op-by-op run fails ({e}) where its fused run returns a value")),
            (Err(e), Ok(_)) => Some(format!("the fast engine's fused run fails ({e}) where its op-by-op run returns a value")),
        }
    }
}

/// Whether any computation holds an op whose result depends on a NaN's
/// sign or payload: a total-order Compare or a BitcastConvertType.
/// (Found by `xlaref fuzz --ops fused_chain --seed 61`, program 7215:
/// `inf/inf` gave NaNs whose sums took their sign from either operand, and
/// an `LtTotalOrder` of them chose different Select branches fused and op
/// by op.)
fn observes_nan_bits(module: &VerifiedModule) -> bool {
    module.module().computations.iter().flat_map(|c| &c.instructions).any(|i| {
        matches!(i.op, xlaref_reference::ir::Op::Compare { total_order: true, .. } | xlaref_reference::ir::Op::BitcastConvertType { .. })
    })
}

/// An engine by its CLI name.
pub fn by_name(name: &str) -> Option<&'static dyn Engine> {
    match name {
        "reference" => Some(&Reference),
        "fast" => Some(&Fast),
        _ => None,
    }
}

/// What each replica of a multi-replica run produced, in replica order,
/// with its environment after the run (its outfeed).
pub struct ReplicaRun {
    pub results: Vec<Result<Literal, RunError>>,
    pub envs: Vec<Env>,
}

/// Runs `module` as `args.len()` replicas on `engine`: one thread per
/// replica, each with its own [`Env`] (from `make_env`, then given its id,
/// the replica count and the shared hub) and its own arguments. A replica
/// that fails, panics, or waits at a collective its group never reaches
/// ends with an error; the others learn it through the hub, so the run
/// always returns. After a successful run every Send must have been
/// received (`Hub::end_check`); otherwise every replica reports that error.
pub fn run_replicas(
    engine: &dyn Engine,
    module: &VerifiedModule,
    args: Vec<Vec<Literal>>,
    make_env: &(dyn Fn() -> Env + Sync),
) -> ReplicaRun {
    use std::sync::Arc;
    use xlaref_reference::replicas::{check_module, Hub};
    let n = args.len();
    let Ok(count) = u32::try_from(n) else {
        let e = RunError::Limit(format!("{n} replicas are too many"));
        return ReplicaRun { results: vec![Err(e)], envs: vec![] };
    };
    if let Err(e) = check_module(module, count) {
        return ReplicaRun { results: (0..n).map(|_| Err(e.clone())).collect(), envs: (0..n).map(|_| make_env()).collect() };
    }
    let hub = Arc::new(Hub::new(count));
    let outcomes: Vec<(Result<Literal, RunError>, Env)> = std::thread::scope(|scope| {
        let handles: Vec<_> = args
            .into_iter()
            .enumerate()
            .map(|(r, replica_args)| {
                let own_hub = hub.clone();
                let run = move || {
                    let mut env = make_env();
                    env.replica_id = r as u32;
                    env.replica_count = count;
                    env.hub = Some(own_hub.clone());
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.run(module, replica_args, &mut env)))
                        .unwrap_or_else(|p| {
                            Err(RunError::Internal(format!("the {} engine panicked: {}", engine.name(), super::case::panic_message(&p))))
                        });
                    own_hub.finish(r as u32, result.is_ok());
                    (result, env)
                };
                let spawned = std::thread::Builder::new().name(format!("replica-{r}")).stack_size(16 << 20).spawn_scoped(scope, run);
                if spawned.is_err() {
                    hub.finish(r as u32, false);
                }
                spawned
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| (Err(RunError::Internal("a replica thread panicked".into())), make_env())),
                Err(e) => (Err(RunError::Other(format!("cannot start a replica thread: {e}"))), make_env()),
            })
            .collect()
    });
    let (mut results, envs): (Vec<_>, Vec<_>) = outcomes.into_iter().unzip();
    if results.iter().all(Result::is_ok) {
        if let Err(e) = hub.end_check() {
            results = (0..n).map(|_| Err(e.clone())).collect();
        }
    }
    ReplicaRun { results, envs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlaref_reference::json::{read_module, Path, ReadOptions};
    use xlaref_reference::verify::{verify, VerifyOptions};

    fn module(op: &str) -> VerifiedModule {
        let text = format!(
            r#"{{"format": "xla-json/1", "computations": {{"main": {{"params": [{{"name": "a", "shape": "f32[4]"}}, {{"name": "b", "shape": "f32[4]"}}],
                "instructions": [{{"name": "s", "op": "Add", "operands": ["a", "b"]}}, {{"name": "c", "op": "{op}", "operands": ["s", "b"]}},
                {{"name": "r", "op": "Select", "operands": ["c", "a", "b"]}}]}}}}}}"#
        );
        let value: serde_json::Value = serde_json::from_str(&text).expect("test module is JSON");
        let m = read_module(&value, &Path::new("module"), ReadOptions { max_elements: 1 << 20 }).expect("test module reads");
        verify(m, &VerifyOptions::default()).expect("test module verifies")
    }

    /// The NaN-sign escape of the fused-against-op-by-op check is taken
    /// for total-order comparisons only, not for IEEE ones.
    #[test]
    fn total_order_compares_observe_nan_bits() {
        assert!(observes_nan_bits(&module("LtTotalOrder")));
        assert!(!observes_nan_bits(&module("Lt")));
    }
}
