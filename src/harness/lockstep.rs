//! Lockstep differential runs: both engines evaluate a program one
//! instruction at a time on the same operands (the reference's values), and
//! each result is judged under the tolerance model. Errors therefore never
//! compound across instructions, and a disagreement names the instruction
//! and comes with a one-instruction module that reproduces it.

use xlaref_reference::eval::Env;
use xlaref_reference::ir::{Computation, Instruction, Module, Op};
use xlaref_reference::literal::Literal;
use xlaref_reference::types::Shape;
use xlaref_reference::verify::{self, VerifiedModule, VerifyOptions};
use xlaref_reference::RunError;

use super::engine::Engine;
use super::tolerance::{allowance, judge};

/// Where two engines disagree beyond the tolerance model.
#[derive(Debug)]
pub struct Disagreement {
    pub instruction: String,
    pub op: &'static str,
    pub detail: String,
    /// A module whose entry is the instruction alone, and its arguments.
    pub module: Module,
    pub args: Vec<Literal>,
}

/// What a lockstep run found.
#[derive(Debug)]
pub enum Verdict {
    /// Every instruction agreed; the program's value (the reference's) or
    /// the error both engines reported.
    Agree(Result<Literal, String>),
    Disagree(Box<Disagreement>),
}

/// Ops whose value depends on state outside the instruction (queues,
/// channels, other replicas): a program holding one is compared whole.
fn talks_to_the_world(op: &Op) -> bool {
    matches!(
        op,
        Op::Infeed { .. }
            | Op::Outfeed { .. }
            | Op::Send { .. }
            | Op::SendDone { .. }
            | Op::Recv { .. }
            | Op::RecvDone { .. }
            | Op::CustomCall { .. }
            | Op::AllGather { .. }
            | Op::AllReduce { .. }
            | Op::AllToAll { .. }
            | Op::CollectivePermute { .. }
            | Op::ReduceScatter { .. }
            | Op::CrossReplicaSum { .. }
    )
}

/// Runs `module` on both engines in lockstep; `env` makes a fresh world for
/// each run.
pub fn lockstep(
    module: &VerifiedModule,
    args: &[Literal],
    reference: &dyn Engine,
    other: &dyn Engine,
    options: &VerifyOptions,
    env: &dyn Fn() -> Env,
) -> Verdict {
    let entry = module.computation(module.entry());
    if entry.instructions.iter().any(|i| talks_to_the_world(&i.op)) {
        return whole_program(module, args, reference, other, env);
    }
    let mut values: Vec<Literal> = Vec::with_capacity(entry.instructions.len());
    for instr in &entry.instructions {
        if let Op::Parameter { number } = instr.op {
            match args.get(number) {
                Some(a) => values.push(a.clone()),
                None => return Verdict::Agree(Err(format!("missing argument {number}"))),
            }
            continue;
        }
        let operands: Vec<Literal> = instr.operands.iter().map(|&o| values[o].clone()).collect();
        let shapes: Vec<Shape> = instr.operands.iter().map(|&o| module.shape(module.entry(), o).clone()).collect();
        let single = single_instruction_module(module.module(), instr, &shapes);
        let verified = match verify::verify(single.clone(), options) {
            Ok(v) => v,
            Err(e) => return Verdict::Agree(Err(format!("internal: the one-instruction module of `{}` does not verify: {e}", instr.name))),
        };
        let expected = reference.run(&verified, operands.clone(), &mut env());
        let actual = other.run(&verified, operands.clone(), &mut env());
        let disagree = |detail: String| {
            Verdict::Disagree(Box::new(Disagreement {
                instruction: instr.name.clone(),
                op: instr.op.name(),
                detail,
                module: single.clone(),
                args: operands.clone(),
            }))
        };
        match (expected, actual) {
            // A broken invariant is an engine's bug, whatever the other did.
            (Err(e @ RunError::Internal(_)), _) => return disagree(format!("the reference broke: {e}")),
            (_, Err(e @ RunError::Internal(_))) => return disagree(format!("the {} engine broke: {e}", other.name())),
            (Err(e), Err(_)) => return Verdict::Agree(Err(e.to_string())),
            (Err(e), Ok(_)) => return disagree(format!("the reference fails ({e}) but the {} engine returns a value", other.name())),
            (Ok(_), Err(e)) => return disagree(format!("the {} engine fails: {e}", other.name())),
            (Ok(value), Ok(got)) => {
                let refs: Vec<&Literal> = operands.iter().collect();
                let allowed = allowance(&verified, verified.entry(), verified.computation(verified.entry()).root, &refs, &value);
                if let Some(m) = judge(&got, &value, &allowed) {
                    return disagree(m.to_string());
                }
                values.push(value);
            }
        }
    }
    Verdict::Agree(values.get(entry.root).cloned().ok_or_else(|| "internal: no root value".to_string()))
}

/// Programs that talk to the world: both run whole, compared exactly.
fn whole_program(module: &VerifiedModule, args: &[Literal], reference: &dyn Engine, other: &dyn Engine, env: &dyn Fn() -> Env) -> Verdict {
    let root = module.computation(module.entry());
    let instr = &root.instructions[root.root];
    let disagree = |detail: String| {
        Verdict::Disagree(Box::new(Disagreement {
            instruction: instr.name.clone(),
            op: instr.op.name(),
            detail,
            module: module.module().clone(),
            args: args.to_vec(),
        }))
    };
    match (reference.run(module, args.to_vec(), &mut env()), other.run(module, args.to_vec(), &mut env())) {
        (Err(e @ RunError::Internal(_)), _) => disagree(format!("the reference broke: {e}")),
        (_, Err(e @ RunError::Internal(_))) => disagree(format!("the {} engine broke: {e}", other.name())),
        (Err(e), Err(_)) => Verdict::Agree(Err(e.to_string())),
        (Err(e), Ok(_)) => disagree(format!("the reference fails ({e}) but the {} engine returns a value", other.name())),
        (Ok(_), Err(e)) => disagree(format!("the {} engine fails: {e}", other.name())),
        (Ok(value), Ok(got)) => match super::compare::compare(&got, &value, None) {
            Some(m) => disagree(m.to_string()),
            None => Verdict::Agree(Ok(value)),
        },
    }
}

/// A module whose entry computation applies `instr` to parameters of the
/// given shapes (one per operand), with every computation of `module`
/// available to it under the same ids.
pub fn single_instruction_module(module: &Module, instr: &Instruction, operand_shapes: &[Shape]) -> Module {
    let mut instructions: Vec<Instruction> = operand_shapes
        .iter()
        .enumerate()
        .map(|(number, shape)| Instruction {
            name: format!("operand.{number}"),
            op: Op::Parameter { number },
            operands: vec![],
            declared_shape: Some(shape.clone()),
            location: None,
        })
        .collect();
    instructions.push(Instruction {
        name: instr.name.clone(),
        op: instr.op.clone(),
        operands: (0..operand_shapes.len()).collect(),
        declared_shape: instr.declared_shape.clone(),
        location: instr.location.clone(),
    });
    let mut name = "lockstep".to_string();
    while module.computations.iter().any(|c| c.name == name) {
        name.push('_');
    }
    let root = instructions.len() - 1;
    let mut computations = module.computations.clone();
    computations.push(Computation { name, instructions, param_count: operand_shapes.len(), root });
    let entry = computations.len() - 1;
    Module { computations, entry }
}
