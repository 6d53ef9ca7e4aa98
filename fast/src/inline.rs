//! Calls inlined before a fused run, as XLA inlines them before it fuses.
//!
//! JAX programs wrap small functions in Calls (`jit_relu_`, `_where`, …).
//! Run as a call, the body is a computation of its own: its element-wise
//! ops cannot fuse with the caller's, and the call's operands were copied
//! into it. In the conv net of `tools/program_bench.py`, a bias Add and the
//! ReLU Call behind it took 1.2 + 1.8 ms over 32 MiB where one fused pass
//! takes 1.2. Inlined, the callee's instructions become the caller's and
//! fuse with them.
//!
//! The rewritten module is verified again (by the shared verifier), and
//! only used when that succeeds; a module without Calls is not touched.

use xlaref_reference::custom_call::KnownTargets;
use xlaref_reference::ir::{Computation, Instruction, Module, Op};
use xlaref_reference::verify::{self, VerifiedModule, VerifyOptions};

/// Callees larger than this stay calls: inlining copies them per call site.
const MAX_CALLEE: usize = 2000;
/// A module never grows beyond this factor (calls of calls multiply).
const MAX_GROWTH: usize = 4;
/// Inlining copies the module, constants included: not for modules whose
/// constants hold more values than this (the copy, kept with the module
/// for its next runs, would double the constants' memory, and its first
/// run would pay for the copy).
const MAX_CONSTANT_VALUES: usize = 1 << 18;

/// `module` with its Calls inlined, or None when it has none to inline
/// (or the result would be too large, or fails verification).
pub(crate) fn inline_calls(module: &VerifiedModule) -> Option<VerifiedModule> {
    let m = module.module();
    if !m.computations.iter().any(|c| c.instructions.iter().any(|i| matches!(i.op, Op::Call { .. }))) {
        return None;
    }
    let constant_values: usize = m
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .map(|i| match &i.op {
            Op::Constant { literal } => literal.total_elements(),
            _ => 0,
        })
        .fold(0, usize::saturating_add);
    if constant_values > MAX_CONSTANT_VALUES {
        return None;
    }
    let original: usize = m.computations.iter().map(|c| c.instructions.len()).sum();
    let budget = original.saturating_mul(MAX_GROWTH).max(original + MAX_CALLEE);
    // Callees first: a computation's calls are inlined into it before it
    // is inlined anywhere. The verifier rejects call cycles, so the
    // order exists; `order` returns None if not.
    let mut done: Vec<Option<Computation>> = vec![None; m.computations.len()];
    let mut total = 0usize;
    for id in order(m)? {
        let c = inline_into(&m.computations[id], &done)?;
        total = total.saturating_add(c.instructions.len());
        if total > budget {
            return None;
        }
        done[id] = Some(c);
    }
    let computations = done.into_iter().collect::<Option<Vec<_>>>()?;
    let inlined = Module { computations, entry: m.entry };
    let options = VerifyOptions { max_elements: i64::MAX, strict: false, custom_call_targets: KnownTargets::any() };
    verify::verify(inlined, &options).ok()
}

/// The computations, each after every computation it calls.
fn order(m: &Module) -> Option<Vec<usize>> {
    let n = m.computations.len();
    let callees = |id: usize| {
        m.computations[id].instructions.iter().filter_map(|i| match i.op {
            Op::Call { computation } => Some(computation),
            _ => None,
        })
    };
    // 0: not seen, 1: in progress, 2: placed.
    let mut state = vec![0u8; n];
    let mut out = Vec::with_capacity(n);
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        // Iterative depth-first search: call chains may be deep.
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(root, callees(root).collect())];
        state[root] = 1;
        while let Some((id, pending)) = stack.last_mut() {
            match pending.pop() {
                Some(next) if next >= n => return None,
                Some(next) => match state[next] {
                    0 => {
                        state[next] = 1;
                        let more = callees(next).collect();
                        stack.push((next, more));
                    }
                    1 => return None,
                    _ => {}
                },
                None => {
                    state[*id] = 2;
                    out.push(*id);
                    stack.pop();
                }
            }
        }
    }
    Some(out)
}

/// `c` with each Call of a small enough computation in `done` replaced by
/// that computation's instructions.
fn inline_into(c: &Computation, done: &[Option<Computation>]) -> Option<Computation> {
    let mut instructions: Vec<Instruction> = Vec::with_capacity(c.instructions.len());
    // Where each of `c`'s instructions went.
    let mut new_id = Vec::with_capacity(c.instructions.len());
    for instr in &c.instructions {
        let callee = match instr.op {
            Op::Call { computation } => done.get(computation)?.as_ref().filter(|k| k.instructions.len() <= MAX_CALLEE),
            _ => None,
        };
        let operands: Vec<usize> = instr.operands.iter().map(|&o| new_id.get(o).copied()).collect::<Option<_>>()?;
        let Some(callee) = callee else {
            new_id.push(instructions.len());
            instructions.push(Instruction { operands, ..instr.clone() });
            continue;
        };
        // The callee's parameters are the call's operands; its other
        // instructions are copied with their operands renumbered.
        let mut callee_id = Vec::with_capacity(callee.instructions.len());
        for (k, ci) in callee.instructions.iter().enumerate() {
            if k < callee.param_count {
                callee_id.push(*operands.get(k)?);
                continue;
            }
            let ops = ci.operands.iter().map(|&o| callee_id.get(o).copied()).collect::<Option<_>>()?;
            callee_id.push(instructions.len());
            instructions.push(Instruction {
                name: format!("{}/{}", instr.name, ci.name),
                op: ci.op.clone(),
                operands: ops,
                declared_shape: ci.declared_shape.clone(),
                location: ci.location.clone(),
            });
        }
        new_id.push(*callee_id.get(callee.root)?);
    }
    let root = *new_id.get(c.root)?;
    Some(Computation { name: c.name.clone(), instructions, param_count: c.param_count, root })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(constant_values: usize) -> VerifiedModule {
        let zeros = vec!["0"; constant_values].join(",");
        let text = format!(
            r#"{{"format": "xla-json/1", "computations": {{
              "twice": {{"params": [{{"name": "a", "shape": "f32[{constant_values}]"}}],
                         "instructions": [{{"name": "d", "op": "Add", "operands": ["a", "a"]}}]}},
              "main": {{"params": [],
                        "instructions": [{{"name": "c", "op": "Constant", "shape": "f32[{constant_values}]", "literal": [{zeros}]}},
                                         {{"name": "t", "op": "Call", "operands": ["c"], "computation": "twice"}},
                                         {{"name": "n", "op": "Neg", "operands": ["t"]}}]}}}}}}"#
        );
        let m = xlaref_reference::json::parse_module(&text, Default::default()).expect("reads");
        verify::verify(m, &VerifyOptions { max_elements: 1 << 30, ..Default::default() }).expect("verifies")
    }

    /// The call's body takes its place: the entry holds the constant, the
    /// body's Add (named after the call) and the Neg reading it.
    #[test]
    fn a_call_is_replaced_by_its_body() {
        let inlined = inline_calls(&module(4)).expect("inlined");
        let main = inlined.computation(inlined.entry());
        let names: Vec<&str> = main.instructions.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["c", "t/d", "n"]);
        assert_eq!(main.instructions[1].operands, [0, 0]);
        assert_eq!(main.instructions[2].operands, [1]);
        assert_eq!(main.root, 2);
    }

    /// A fused run prepares a module once: the next run finds the inlined
    /// module and the entry's plan kept with it, and returns the same
    /// values. A slot another engine took first leaves the run preparing
    /// its own.
    #[test]
    fn a_module_is_prepared_once() {
        // The engine's frames, unoptimized in the test build, want more
        // than a test thread's stack when the pool (with its larger
        // stacks) was built by another test first.
        let big_stack = std::thread::Builder::new().stack_size(64 << 20);
        big_stack.spawn(prepared_once).expect("a thread").join().expect("passes");
    }

    fn prepared_once() {
        use xlaref_reference::eval::{Env, Limits};
        let run = |m: &VerifiedModule| crate::run_borrowed(m, &[], &mut Env::new(Limits::default())).expect("runs");
        let m = module(4);
        let first = run(&m);
        let kept = m.prepared::<crate::Prepared>(|| panic!("prepared again")).expect("the fast engine's");
        assert!(kept.inlined.is_some());
        assert!(kept.plans[m.entry()].get().is_some());
        assert_eq!(run(&m), first);
        assert!(m.prepared(|| 0u8).is_none());
        let other = module(4);
        assert_eq!(other.prepared(|| 7u32), Some(&7));
        assert_eq!(run(&other), first);
    }

    /// Large constants would be copied: left as calls.
    #[test]
    fn modules_with_large_constants_are_left_alone() {
        assert!(inline_calls(&module(MAX_CONSTANT_VALUES + 1)).is_none());
    }
}
