//! Rules of the ops that talk to the world: Infeed, Outfeed, CustomCall,
//! GetDimensionSize and SetDimensionSize. (RNG, collectives and channels
//! have files of their own.)

use super::rules::*;
use super::Ctx;
use crate::ir::Op;
use crate::types::{ElementType, Shape};

declare_rules! {
    NOT_A_WORLD_OP = "world.c1": "(invariant) Only Infeed, Outfeed, CustomCall, GetDimensionSize and SetDimensionSize are dispatched to these rules.";

    GET_DIMENSION = "get_dimension_size.c1": "dimension is \"A value in the interval [0, n) that specifies the dimension\".";

    SET_SIZE = "set_dimension_size.c1": "size is an s32 scalar: \"int32 representing the runtime dynamic size\".";
    SET_DIMENSION = "set_dimension_size.c2": "dimension is \"A value in the interval [0, n) that specifies the dimension\".";

    INFEED_SHAPE = "infeed.c1": "The shape is an array or a tuple of arrays: \"Nested tuple shapes are not supported\" (nor tokens, as data).";
    INFEED_OPERANDS = "infeed.c2": "(XLA) Infeed takes no operand or, in HLO's form (InfeedWithToken), one ordering token.";

    OUTFEED_OPERANDS = "outfeed.c1": "(XLA) Outfeed takes the operand and, in HLO's form, an optional ordering token.";
    OUTFEED_SHAPE = "outfeed.c2": "(XLA) The outfed value is an array or a tuple of arrays (no nested tuples, no tokens).";

    CUSTOM_CALL_TARGET = "custom_call.c1": "(xlaref) The target is one the verifier knows (VerifyOptions::custom_call_targets), and a target with a shape rule (the LAPACK ones) accepts the operands and the declared shape.";
}

pub fn infer(op: &Op, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    match op {
        Op::Infeed { shape, .. } => infeed(shape, operands),
        Op::Outfeed { .. } => outfeed(operands),
        Op::CustomCall { target_name, shape, opaque } => custom_call(target_name, shape, opaque, operands, ctx),
        Op::GetDimensionSize { dimension } => get_dimension_size(*dimension, operands),
        Op::SetDimensionSize { dimension } => set_dimension_size(*dimension, operands),
        // verify::infer dispatches only the ops listed above to this file.
        _ => Err(broken(&NOT_A_WORLD_OP, format!("{} is not a world op", op.name()))),
    }
}

/// A value that can travel through a feed: an array or a tuple of arrays
/// (Infeed: "Nested tuple shapes are not supported"; the same for Outfeed,
/// whose XLA CPU emitter also rejects nested tuples). No tokens.
fn feed_shape(rule: &'static Rule, shape: &Shape, what: &str) -> Check {
    match shape {
        Shape::Array(_) => Ok(()),
        Shape::Tuple(elems) => match elems.iter().find(|e| !e.is_array()) {
            Some(e) => Err(broken(
                rule,
                format!("{what} {shape} holds {e}: feeds carry an array or a tuple of arrays (nested tuple shapes are not supported)"),
            )),
            None => Ok(()),
        },
        Shape::Token => Err(broken(rule, format!("{what} {shape} is a token: feeds carry an array or a tuple of arrays"))),
    }
}

/// The optional ordering token of the token forms.
fn token_operand(rule: &'static Rule, operands: &[&Shape], at: usize) -> Check<bool> {
    match operands.get(at) {
        None => Ok(false),
        Some(s) if s.is_token() => Ok(true),
        Some(s) => Err(broken(rule, format!("operand {at} must be a token (the ordering token), got {s}"))),
    }
}

/// Infeed(shape), the document's form: no operand, the result is the data
/// of `shape`. InfeedWithToken (HLO's form): one token operand, the result
/// is `(shape, token[])`; `shape` may also be written as that whole tuple.
pub fn infeed(shape: &Shape, operands: &[&Shape]) -> Check<Shape> {
    if operands.len() > 1 {
        return Err(broken(&INFEED_OPERANDS, format!("takes no operand or one token, got {} operands", operands.len())));
    }
    let with_token = token_operand(&INFEED_OPERANDS, operands, 0)?;
    let data = match shape.as_tuple() {
        Some([data, Shape::Token]) if with_token => data,
        _ => shape,
    };
    feed_shape(&INFEED_SHAPE, data, "the infeed shape")?;
    Ok(if with_token { Shape::Tuple(vec![data.clone(), Shape::Token]) } else { data.clone() })
}

/// Outfeed(operand[, token]): writes the operand to the outfeed; the
/// result is a token (the builder's Outfeed returns nothing; HLO's returns
/// a token).
pub fn outfeed(operands: &[&Shape]) -> Check<Shape> {
    if operands.is_empty() || operands.len() > 2 {
        return Err(broken(&OUTFEED_OPERANDS, format!("takes the operand and an optional token, got {} operands", operands.len())));
    }
    token_operand(&OUTFEED_OPERANDS, operands, 1)?;
    feed_shape(&OUTFEED_SHAPE, operands[0], "the outfed value's shape")?;
    Ok(Shape::Token)
}

/// CustomCall(target_name, args..., shape): the declared result shape.
/// Which targets exist is a fact of the world the module runs in, so the
/// verifier asks the world's description it was given
/// (`VerifyOptions::custom_call_targets`, by default the built-in
/// registry's): an unknown name is an error, and a target with a shape
/// rule (the LAPACK ones) checks the operands and the declared shape.
pub fn custom_call(target: &str, shape: &Shape, opaque: &str, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    ctx.options.custom_call_targets.check(target, operands, shape, opaque).map_err(|e| broken(&CUSTOM_CALL_TARGET, e))?;
    Ok(shape.clone())
}

/// GetDimensionSize: the operand is an array and `dimension` in `[0, n)`;
/// the result is an s32 scalar (XLA's type for dimension sizes).
pub fn get_dimension_size(dimension: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "the operand")?;
    dims_in_range(&GET_DIMENSION, &[dimension], a.rank(), "dimension")?;
    Ok(Shape::scalar(ElementType::S32))
}

/// SetDimensionSize: the operand is an array, `size` an s32 scalar
/// ("int32 representing the runtime dynamic size"), `dimension` in
/// `[0, n)`. The result is the operand's shape with that dimension marked
/// bounded-dynamic (its bound unchanged).
pub fn set_dimension_size(dimension: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let a = array(operands[0], "the operand")?;
    let size = scalar(&SET_SIZE, operands[1], "size")?;
    if size.element_type != ElementType::S32 {
        return Err(broken(&SET_SIZE, format!("size must be an s32 scalar, got {size}")));
    }
    dims_in_range(&SET_DIMENSION, &[dimension], a.rank(), "dimension")?;
    let mut out = a.clone();
    out.dynamic.resize(out.dims.len(), false);
    out.dynamic[dimension as usize] = true;
    Ok(Shape::Array(out))
}
