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
use xlaref_reference::numerics::convert::convert;
use xlaref_reference::types::{ElementType, Shape};
use xlaref_reference::verify::{verify, VerifiedModule, VerifyOptions};

use super::compare::{compare, Tolerance};
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
    /// A non-finite operand spreads as NaN to results the document defines
    /// as numbers: products with zeros the implementation adds (masks,
    /// padding, group expansions) and complex arithmetic through `inf -
    /// inf`. Every element where the backend differs holds a NaN, some
    /// operand holds an infinity or a NaN, and the other elements agree
    /// under the tolerance model (XLA CPU's D9, D10, D15).
    NonfiniteSpreads,
    /// The backend's value lies within `ulps=N` units in the last place of
    /// the reference's, N beyond the tolerance model's bound: a less
    /// accurate approximation of a function the document does not bound
    /// (XLA CPU's expansions of the CHLO ops, D16).
    Accuracy,
}

impl Class {
    pub const ALL: [Class; 4] = [Class::FlushesSubnormals, Class::ConvMultipliesPadding, Class::NonfiniteSpreads, Class::Accuracy];

    /// The id written in known-deviations files.
    pub fn id(self) -> &'static str {
        match self {
            Class::FlushesSubnormals => "ftz",
            Class::ConvMultipliesPadding => "conv-multiplies-padding",
            Class::NonfiniteSpreads => "nonfinite-spreads",
            Class::Accuracy => "accuracy",
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
            Class::NonfiniteSpreads => "a non-finite operand spreads as NaN",
            Class::Accuracy => "a less accurate approximation",
        }
    }
}

/// Whether `got`, the backend's value of the one-instruction module
/// `single` on `args`, is what the rules of `classes` together give: the
/// reference on flushed operands, its result flushed (FTZ), the Conv
/// computed with its padding multiplied, the backend's NaNs excused, the
/// value held to `ulps` instead of the model (with [`Class::Accuracy`]).
/// Deviations come together (a flushed subnormal and an infinite weight over
/// padding in one Conv).
pub fn explained_by(
    classes: &[Class],
    ulps: Option<f64>,
    single: &VerifiedModule,
    args: &[Literal],
    got: &Literal,
    env: &dyn Fn() -> Env,
) -> bool {
    let flushes = classes.contains(&Class::FlushesSubnormals);
    let flush = |l: &Literal| if flushes { ftz::flush_subnormals(l) } else { l.clone() };
    let args: Vec<Literal> = args.iter().map(flush).collect();
    let computed = if classes.contains(&Class::ConvMultipliesPadding) {
        conv_with_materialized_padding(single, &args, env)
    } else {
        Reference.run(single, args.clone(), &mut env()).ok().map(|v| (None, args, v))
    };
    let Some((module, operands, value)) = computed else { return false };
    let module = module.as_ref().unwrap_or(single);
    let value = flush(&value);
    let mut got = flush(got);
    if classes.contains(&Class::NonfiniteSpreads) {
        if !operands.iter().any(has_nonfinite) {
            return false;
        }
        match excusing_nans(&got, &value) {
            Some(g) => got = g,
            None => return false,
        }
    }
    if classes.contains(&Class::Accuracy) {
        let Some(ulp) = ulps else { return false };
        return compare(&got, &value, Some(&Tolerance { ulp: Some(ulp), ..Tolerance::default() })).is_none();
    }
    let refs: Vec<&Literal> = operands.iter().collect();
    let allowed = allowance(module, module.entry(), module.computation(module.entry()).root, &refs, &value);
    judge(&got, &value, &allowed).is_none()
}

/// Whether an array holds an infinite or NaN element (either part of a
/// complex one).
fn has_nonfinite(l: &Literal) -> bool {
    let Some(a) = l.as_array().filter(|a| a.element_type().is_floating()) else { return false };
    match convert(&a.data, ElementType::C128) {
        Data::C128(v) => v.iter().any(|z| !z.re.is_finite() || !z.im.is_finite()),
        _ => false,
    }
}

/// The backend's value `got` with the reference's element wherever the
/// backend's has a NaN part: what remains to judge is its other elements.
/// (The tolerance model's allowance is computed from the operands, so the
/// excused elements are patched on the backend's side.)
fn excusing_nans(got: &Literal, value: &Literal) -> Option<Literal> {
    let (g, v) = (got.as_array()?, value.as_array()?);
    if v.element_type() != g.element_type() || v.dims() != g.dims() || !v.element_type().is_floating() {
        return None;
    }
    let (Data::C128(mut gs), Data::C128(vs)) = (convert(&g.data, ElementType::C128), convert(&v.data, ElementType::C128)) else {
        return None;
    };
    for (x, y) in gs.iter_mut().zip(&vs) {
        if x.re.is_nan() || x.im.is_nan() {
            *x = *y;
        }
    }
    let data = convert(&Data::C128(gs), g.element_type());
    Some(Literal::Array(ArrayLiteral { shape: g.shape.clone(), data, dynamic_sizes: g.dynamic_sizes.clone() }))
}

/// Every non-empty combination of `classes`, smallest first (a report
/// names as few deviations as explain the value).
pub fn combinations<T: Copy>(classes: &[T]) -> Vec<Vec<T>> {
    let n = classes.len().min(8);
    let mut all: Vec<Vec<T>> = (1u32..1 << n).map(|mask| (0..n).filter(|i| mask & (1 << i) != 0).map(|i| classes[i]).collect()).collect();
    all.sort_by_key(Vec::len);
    all
}

/// The `Conv` at the root of `single` run by the reference on its lhs with
/// the padding and the base-dilation holes written out as zeros (a `Pad`),
/// then without padding or lhs dilation: zeros that are now inside the base
/// area, so they are multiplied. The Conv's module (for its tolerance
/// allowance), its operands and its value; `None` when the root is not a
/// Conv.
fn conv_with_materialized_padding(
    single: &VerifiedModule,
    args: &[Literal],
    env: &dyn Fn() -> Env,
) -> Option<(Option<VerifiedModule>, Vec<Literal>, Literal)> {
    let entry = single.computation(single.entry());
    let root = &entry.instructions[entry.root];
    let (Op::Conv(attrs), [lhs, rhs]) = (&root.op, args) else { return None };
    let (l, r) = (lhs.as_array()?, rhs.as_array()?);
    let dims = attrs.dims(l.dims().len());
    let spatial = |of: &[i64], which: &[i64]| -> Option<Vec<i64>> { which.iter().map(|&d| of.get(d as usize).copied()).collect() };
    let input = spatial(l.dims(), &dims.input_spatial_dimensions)?;
    let window = spatial(r.dims(), &dims.kernel_spatial_dimensions)?;
    let pads = resolved_padding(attrs, &input, &window);
    let mut padding_config = vec![PadDim { edge_padding_low: 0, edge_padding_high: 0, interior_padding: 0 }; l.dims().len()];
    for (i, &d) in dims.input_spatial_dimensions.iter().enumerate() {
        let (&(low, high), slot) = (pads.get(i)?, padding_config.get_mut(d as usize)?);
        let dilation = attrs.lhs_dilation.get(i).copied().unwrap_or(1);
        *slot = PadDim { edge_padding_low: low, edge_padding_high: high, interior_padding: dilation - 1 };
    }
    let zero = Literal::Array(ArrayLiteral::new(vec![], Data::zeros(l.element_type(), 1)));
    let padded = run_one(single.module(), Op::Pad { padding_config }, &[lhs.clone(), zero], env)?;
    let mut plain = attrs.clone();
    plain.padding = Padding::Explicit(vec![(0, 0); input.len()]);
    plain.lhs_dilation = vec![1; input.len()];
    let operands = vec![padded, rhs.clone()];
    let (module, value) = run_single(single.module(), Op::Conv(plain), root, &operands, env)?;
    Some((Some(module), operands, value))
}

/// `op` applied by the reference to `args`, as a one-instruction module.
fn run_one(module: &Module, op: Op, args: &[Literal], env: &dyn Fn() -> Env) -> Option<Literal> {
    let instr = Instruction { name: "deviation".into(), op, operands: vec![], declared_shape: None, location: None };
    run_single(module, instr.op.clone(), &instr, args, env).map(|(_, v)| v)
}

/// `op` (with `like`'s name and declared shape) on `args`: the verified
/// one-instruction module and the reference's value.
fn run_single(module: &Module, op: Op, like: &Instruction, args: &[Literal], env: &dyn Fn() -> Env) -> Option<(VerifiedModule, Literal)> {
    let instr = Instruction { name: like.name.clone(), op, operands: vec![], declared_shape: like.declared_shape.clone(), location: None };
    let shapes: Vec<Shape> = args.iter().map(Literal::shape).collect();
    let single = single_instruction_module(module, &instr, &shapes);
    let max_elements = env().limits.max_elements;
    let verified = verify(single, &VerifyOptions { max_elements, ..VerifyOptions::default() }).ok()?;
    let value = Reference.run(&verified, args.to_vec(), &mut env()).ok()?;
    Some((verified, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_come_smallest_first() {
        let all = combinations(&['a', 'b', 'c']);
        assert_eq!(all.len(), 7);
        assert_eq!(&all[..3], &[vec!['a'], vec!['b'], vec!['c']]);
        assert_eq!(all[6], vec!['a', 'b', 'c']);
        assert!(combinations::<u8>(&[]).is_empty());
    }

    #[test]
    fn ids_read_back() {
        for c in Class::ALL {
            assert_eq!(Class::from_id(c.id()), Some(c));
        }
    }

    #[test]
    fn the_backends_nans_are_excused() {
        let f = |v: Vec<f32>| Literal::Array(ArrayLiteral::new(vec![v.len() as i64], Data::F32(v)));
        let patched = excusing_nans(&f(vec![f32::NAN, 3.0]), &f(vec![1.0, 2.0])).expect("same shape");
        let Literal::Array(a) = patched else { panic!("an array") };
        let Data::F32(v) = a.data else { panic!("f32") };
        assert_eq!(v, [1.0, 3.0]);
        assert!(has_nonfinite(&f(vec![1.0, f32::INFINITY])) && !has_nonfinite(&f(vec![1.0])));
    }
}
