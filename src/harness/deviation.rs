//! Known deviations by class. A backend's documented deviation (a section
//! of its conformance document) is more than a list of oracle cases: random
//! programs meet it too, under names nobody can list in advance. A class is
//! an op and a rule that, applied by the reference to the values of the
//! instruction where the backend differs, gives the backend's value. When
//! it does, the difference is that deviation and nothing else.
//!
//! A known-deviations file names a class as `class:ID` on its own line
//! (`class:conv-multiplies-padding  # D9`); `--ftz` is `class:ftz`.

use xlaref_reference::eval::conv::resolved_padding;
use xlaref_reference::eval::Env;
use xlaref_reference::ir::{Instruction, Module, Op, PadDim, Padding};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::types::Shape;
use xlaref_reference::verify::{verify, VerifiedModule, VerifyOptions};

use super::engine::{Engine, Reference};
use super::ftz;
use super::lockstep::single_instruction_module;
use super::tolerance::{allowance, judge};

/// A rule by which a backend is known to differ from the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Subnormal operands read as zero and subnormal results written as
    /// zero (x86 FTZ/DAZ; XLA CPU's D1).
    FlushesSubnormals,
    /// Conv's padding and base-dilation holes are zeros that are
    /// multiplied, so a non-finite weight over them gives NaN (XLA CPU's
    /// D9; the document adds no term there).
    ConvMultipliesPadding,
}

impl Class {
    pub const ALL: [Class; 2] = [Class::FlushesSubnormals, Class::ConvMultipliesPadding];

    /// The id written in known-deviations files.
    pub fn id(self) -> &'static str {
        match self {
            Class::FlushesSubnormals => "ftz",
            Class::ConvMultipliesPadding => "conv-multiplies-padding",
        }
    }

    pub fn from_id(id: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.id() == id)
    }

    /// What the class says, for reports.
    pub fn rule(self) -> &'static str {
        match self {
            Class::FlushesSubnormals => "the backend flushes subnormals to zero",
            Class::ConvMultipliesPadding => "the backend multiplies Conv's padding and holes as zeros",
        }
    }

    /// Whether `got`, the backend's value of the one-instruction module
    /// `single` on `args`, is what this class's rule gives.
    pub fn explains(self, single: &VerifiedModule, args: &[Literal], got: &Literal, env: &dyn Fn() -> Env) -> bool {
        match self {
            Class::FlushesSubnormals => ftz::explained_by_flushing(single, args, got, env),
            Class::ConvMultipliesPadding => explained_by_materialized_padding(single, args, got, env),
        }
    }
}

/// The `Conv` at the root of `single` run by the reference on its lhs with
/// the padding and the base-dilation holes written out as zeros (a `Pad`),
/// then without padding or lhs dilation: zeros that are now inside the base
/// area, so they are multiplied. Whether that agrees with `got` under the
/// tolerance model.
fn explained_by_materialized_padding(single: &VerifiedModule, args: &[Literal], got: &Literal, env: &dyn Fn() -> Env) -> bool {
    let entry = single.computation(single.entry());
    let root = &entry.instructions[entry.root];
    let (Op::Conv(attrs), [lhs, rhs]) = (&root.op, args) else { return false };
    let (Some(l), Some(r)) = (lhs.as_array(), rhs.as_array()) else { return false };
    let dims = attrs.dims(l.dims().len());
    let spatial = |of: &[i64], which: &[i64]| -> Option<Vec<i64>> { which.iter().map(|&d| of.get(d as usize).copied()).collect() };
    let (Some(input), Some(window)) =
        (spatial(l.dims(), &dims.input_spatial_dimensions), spatial(r.dims(), &dims.kernel_spatial_dimensions))
    else {
        return false;
    };
    let pads = resolved_padding(attrs, &input, &window);
    let mut padding_config = vec![PadDim { edge_padding_low: 0, edge_padding_high: 0, interior_padding: 0 }; l.dims().len()];
    for (i, &d) in dims.input_spatial_dimensions.iter().enumerate() {
        let (Some(&(low, high)), Some(slot)) = (pads.get(i), padding_config.get_mut(d as usize)) else { return false };
        let dilation = attrs.lhs_dilation.get(i).copied().unwrap_or(1);
        *slot = PadDim { edge_padding_low: low, edge_padding_high: high, interior_padding: dilation - 1 };
    }
    let zero = Literal::Array(ArrayLiteral::new(vec![], Data::zeros(l.element_type(), 1)));
    let Some(padded) = run_one(single.module(), Op::Pad { padding_config }, &[lhs.clone(), zero], env) else { return false };
    let mut plain = attrs.clone();
    plain.padding = Padding::Explicit(vec![(0, 0); input.len()]);
    plain.lhs_dilation = vec![1; input.len()];
    let operands = [padded, rhs.clone()];
    let Some((module, value)) = run_single(single.module(), Op::Conv(plain), root, &operands, env) else { return false };
    let refs: Vec<&Literal> = operands.iter().collect();
    let allowed = allowance(&module, module.entry(), module.computation(module.entry()).root, &refs, &value);
    judge(got, &value, &allowed).is_none()
}

/// `op` applied by the reference to `args`, as a one-instruction module.
fn run_one(module: &Module, op: Op, args: &[Literal], env: &dyn Fn() -> Env) -> Option<Literal> {
    let instr = Instruction { name: "deviation".into(), op, operands: vec![], declared_shape: None };
    run_single(module, instr.op.clone(), &instr, args, env).map(|(_, v)| v)
}

/// `op` (with `like`'s name and declared shape) on `args`: the verified
/// one-instruction module and the reference's value.
fn run_single(module: &Module, op: Op, like: &Instruction, args: &[Literal], env: &dyn Fn() -> Env) -> Option<(VerifiedModule, Literal)> {
    let instr = Instruction { name: like.name.clone(), op, operands: vec![], declared_shape: like.declared_shape.clone() };
    let shapes: Vec<Shape> = args.iter().map(Literal::shape).collect();
    let single = single_instruction_module(module, &instr, &shapes);
    let max_elements = env().limits.max_elements;
    let verified = verify(single, &VerifyOptions { max_elements }).ok()?;
    let value = Reference.run(&verified, args.to_vec(), &mut env()).ok()?;
    Some((verified, value))
}
