//! Rules of RngUniform, RngNormal and RngBitGenerator.

use super::rules::*;
use super::Ctx;
use crate::ir::{Op, RngAlgorithm};
use crate::types::{ArrayShape, ElementType, Shape};

declare_rules! {
    OUTPUT_DIMS = "rng.c1": "(invariant) The output shape of RngUniform, RngNormal and RngBitGenerator has non-negative dimensions (the reader's shape parser rejects negative sizes).";
    NOT_AN_RNG = "rng.c2": "(invariant) Only RngUniform, RngNormal and RngBitGenerator are dispatched to these rules.";

    NORMAL_TYPE = "rng_normal.c1": "The parameters mu and sigma \"and output shape have to have a floating point elemental type\".";
    NORMAL_SCALARS = "rng_normal.c2": "\"The parameters furthermore have to be scalar valued\".";
    NORMAL_SAME_TYPE = "rng_normal.c3": "mu, sigma and the output have one element type: \"Scalar of type T\", \"Output shape of type T\".";

    UNIFORM_TYPE = "rng_uniform.c1": "\"The parameters and output element type have to be a boolean type, an integral type or a floating point types\".";
    UNIFORM_SAME_TYPE = "rng_uniform.c2": "\"the types have to be consistent\" (a, b and the output have one element type).";
    UNIFORM_SCALARS = "rng_uniform.c3": "\"the parameters need to be scalar valued\".";

    STATE_SHAPE = "rng_bit_generator.c1": "The initial_state shape is \"u64[2]\" for rng_three_fry and \"u64[3]\" for rng_philox (XLA also takes u64[2] for PHILOX, rejected when strict, and u64[2] or u64[3] for DEFAULT).";
    BITS_TYPE = "rng_bit_generator.c2": "(XLA) The output has an integer or floating-point element type (not pred or complex).";
    BITS_STATIC = "rng_bit_generator.c3": "(XLA) The output shape is static.";
}

pub fn infer(op: &Op, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    match op {
        Op::RngUniform { shape } => rng_uniform(shape, operands),
        Op::RngNormal { shape } => rng_normal(shape, operands),
        Op::RngBitGenerator { algorithm, shape } => rng_bit_generator(*algorithm, shape, operands, ctx.options.strict),
        // verify::infer dispatches only the ops listed above to this file.
        _ => Err(broken(&NOT_AN_RNG, format!("{} is not a random-number op", op.name()))),
    }
}

/// The output `shape` attribute: an array with non-negative dimensions.
fn output(shape: &Shape) -> Check<&ArrayShape> {
    let out = array(shape, "shape")?;
    // Unreachable from a module that passed the reader: every shape comes
    // from the shape parser, which rejects negative dimension sizes.
    non_negative(&OUTPUT_DIMS, &out.dims, "shape dimensions")?;
    Ok(out)
}

/// The two parameters: scalars (`scalars`) of the output's element type
/// (`same_type`).
fn scalar_parameters(scalars: &'static Rule, same_type: &'static Rule, operands: &[&Shape], names: [&str; 2], out: &ArrayShape) -> Check {
    operand_count(operands, 2)?;
    for (shape, name) in operands.iter().zip(names) {
        let p = scalar(scalars, shape, name)?;
        if p.element_type != out.element_type {
            return Err(broken(
                same_type,
                format!(
                    "{name} has element type {}, the output shape has {}; the types must be consistent",
                    p.element_type, out.element_type
                ),
            ));
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
    element_type_is(&UNIFORM_TYPE, t, t.is_pred() || t.is_integer() || t.is_float(), "shape", "pred, an integer or a floating-point type")?;
    scalar_parameters(&UNIFORM_SCALARS, &UNIFORM_SAME_TYPE, operands, ["a", "b"], out)?;
    Ok(shape.clone())
}

/// RngNormal — document §RngNormal: `mu`, `sigma` and the output have a
/// floating-point element type; the parameters are scalars.
fn rng_normal(shape: &Shape, operands: &[&Shape]) -> Check<Shape> {
    let out = output(shape)?;
    let t = out.element_type;
    element_type_is(&NORMAL_TYPE, t, t.is_float(), "shape", "a floating-point type")?;
    scalar_parameters(&NORMAL_SCALARS, &NORMAL_SAME_TYPE, operands, ["mu", "sigma"], out)?;
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
        return Err(broken(&STATE_SHAPE, format!("initial_state must be a u64 vector, got {}", operands[0])));
    }
    let n = state.dims[0];
    let (ok, wanted) = match algorithm {
        RngAlgorithm::ThreeFry => (n == 2, "u64[2] for THREE_FRY"),
        RngAlgorithm::Philox if strict => (n == 3, "u64[3] for PHILOX (u64[2] is an extension, rejected by --strict)"),
        RngAlgorithm::Philox => (n == 2 || n == 3, "u64[2] or u64[3] for PHILOX"),
        RngAlgorithm::Default => (n == 2 || n == 3, "u64[2] or u64[3] for DEFAULT (Philox)"),
    };
    if !ok {
        return Err(broken(&STATE_SHAPE, format!("initial_state has shape {}; it must be {wanted}", operands[0])));
    }
    let out = output(shape)?;
    let t = out.element_type;
    element_type_is(&BITS_TYPE, t, t.is_integer() || t.is_float(), "shape", "an integer or floating-point type (not pred or complex)")?;
    if out.is_dynamic() {
        return Err(broken(&BITS_STATIC, format!("shape {shape} has a dynamic dimension; the output must be static")));
    }
    Ok(Shape::Tuple(vec![operands[0].clone(), shape.clone()]))
}
