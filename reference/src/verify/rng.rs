//! Rules of RngUniform, RngNormal and RngBitGenerator.

use super::rules::*;
use super::Ctx;
use crate::ir::{Op, RngAlgorithm};
use crate::types::{ArrayShape, ElementType, Shape};

declare_rules! {}

pub fn infer(op: &Op, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    match op {
        Op::RngUniform { shape } => rng_uniform(shape, operands),
        Op::RngNormal { shape } => rng_normal(shape, operands),
        Op::RngBitGenerator { algorithm, shape } => rng_bit_generator(*algorithm, shape, operands, ctx.options.strict),
        _ => Err(unnumbered(format!("{} is not a random-number op", op.name()))),
    }
}

/// The output `shape` attribute: an array with non-negative dimensions.
fn output(shape: &Shape) -> Check<&ArrayShape> {
    let out = array(shape, "shape")?;
    non_negative(&UNNUMBERED, &out.dims, "shape dimensions")?;
    Ok(out)
}

/// The two parameters: scalars of the output's element type.
fn scalar_parameters(operands: &[&Shape], names: [&str; 2], out: &ArrayShape) -> Check {
    operand_count(operands, 2)?;
    for (shape, name) in operands.iter().zip(names) {
        let p = scalar(&UNNUMBERED, shape, name)?;
        if p.element_type != out.element_type {
            return Err(unnumbered(format!(
                "{name} has element type {}, the output shape has {}; the types must be consistent",
                p.element_type, out.element_type
            )));
        }
    }
    Ok(())
}

/// RngUniform — document §RngUniform: `a` and `b` are scalars of type T; T is
/// pred, an integer or a floating-point type. (`a < b` is a run-time
/// matter: when `b <= a` the result is implementation-defined.)
fn rng_uniform(shape: &Shape, operands: &[&Shape]) -> Check<Shape> {
    let out = output(shape)?;
    let t = out.element_type;
    element_type_is(&UNNUMBERED, t, t.is_pred() || t.is_integer() || t.is_float(), "shape", "pred, an integer or a floating-point type")?;
    scalar_parameters(operands, ["a", "b"], out)?;
    Ok(shape.clone())
}

/// RngNormal — document §RngNormal: `mu`, `sigma` and the output have a
/// floating-point element type; the parameters are scalars.
fn rng_normal(shape: &Shape, operands: &[&Shape]) -> Check<Shape> {
    let out = output(shape)?;
    let t = out.element_type;
    element_type_is(&UNNUMBERED, t, t.is_float(), "shape", "a floating-point type")?;
    scalar_parameters(operands, ["mu", "sigma"], out)?;
    Ok(shape.clone())
}

/// RngBitGenerator — document §RngBitGenerator: the initial state is u64[2]
/// for THREE_FRY and u64[3] for PHILOX (XLA also takes u64[2] for PHILOX and
/// DEFAULT, which is Philox on CPU); the output is a static array of an
/// integer or floating-point type of 8 to 64 bits (not pred, not complex),
/// and the result is the tuple `(new_state, output)`. A u64[2] PHILOX state
/// (JAX's `rng_bit_generator` with `RNG_PHILOX` makes one) is an extension
/// that `strict` rejects.
fn rng_bit_generator(algorithm: RngAlgorithm, shape: &Shape, operands: &[&Shape], strict: bool) -> Check<Shape> {
    operand_count(operands, 1)?;
    let state = array(operands[0], "initial_state")?;
    if state.element_type != ElementType::U64 || state.rank() != 1 || state.is_dynamic() {
        return Err(unnumbered(format!("initial_state must be a u64 vector, got {}", operands[0])));
    }
    let n = state.dims[0];
    let (ok, wanted) = match algorithm {
        RngAlgorithm::ThreeFry => (n == 2, "u64[2] for THREE_FRY"),
        RngAlgorithm::Philox if strict => (n == 3, "u64[3] for PHILOX (u64[2] is an extension, rejected by --strict)"),
        RngAlgorithm::Philox => (n == 2 || n == 3, "u64[2] or u64[3] for PHILOX"),
        RngAlgorithm::Default => (n == 2 || n == 3, "u64[2] or u64[3] for DEFAULT (Philox)"),
    };
    if !ok {
        return Err(unnumbered(format!("initial_state has shape {}; it must be {wanted}", operands[0])));
    }
    let out = output(shape)?;
    let t = out.element_type;
    element_type_is(&UNNUMBERED, t, t.is_integer() || t.is_float(), "shape", "an integer or floating-point type (not pred or complex)")?;
    if out.is_dynamic() {
        return Err(unnumbered(format!("shape {shape} has a dynamic dimension; the output must be static")));
    }
    Ok(Shape::Tuple(vec![operands[0].clone(), shape.clone()]))
}
