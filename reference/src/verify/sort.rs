//! Rules of Sort and TopK.

use super::rules::*;
use super::Ctx;
use crate::ir::ComputationId;
use crate::types::{ElementType, Shape};

declare_rules! {
    SORT_SAME_DIMS = "sort.c1": "\"All `n` operands must be tensors with the same dimensions\".";
    SORT_COMPARATOR_PARAMS = "sort.c2": "The comparator \"is called with `2 * n` scalar parameters, where parameter `2 * k` corresponds to the value at position `i` from the `k-th` operand\" (and `2 * k + 1` at position `j`): of operand `k`'s element type.";
    SORT_COMPARATOR_RESULT = "sort.c3": "(XLA) The comparator returns `pred[]`.";
    SORT_NOT_SCALAR = "sort.c4": "(XLA) The operands have at least one dimension to sort along.";
    SORT_DIMENSION = "sort.c5": "(XLA) `dimension` is in [-rank, rank) (negative counts from the end; absent is the last).";

    TOP_K_RANK = "top_k.c1": "\"The tensor must have greater or equal to one dimensions\".";
    TOP_K_K = "top_k.c2": "\"The size of the last dimension of the tensor must be greater or equal to `k`\", and `k` is not negative.";
    TOP_K_ORDERED = "top_k.c3": "(XLA) The operand's element type has an order (not complex).";
}

/// The dimension Sort sorts along: `None` is the last one; a negative value
/// counts from the end (as XLA: `-1` is the builder's default, and the HLO
/// path accepts any value in `[-rank, rank)`).
fn sort_dimension(dimension: Option<i64>, rank: usize) -> Check<usize> {
    let r = rank as i64;
    let d = dimension.unwrap_or(r - 1);
    if rank == 0 {
        fail!(SORT_NOT_SCALAR, "operands must have at least one dimension to sort along, got a scalar");
    }
    if d < -r || d >= r {
        fail!(SORT_DIMENSION, "dimension {d} is out of range [-{r}, {r}) for operands with {rank} dimensions");
    }
    Ok(if d < 0 { (d + r) as usize } else { d as usize })
}

/// Sort — document §Sort: one or more arrays with the same dimensions (element
/// types may differ); `comparator` takes `2 * n` scalars (parameters `2k`
/// and `2k + 1` have operand `k`'s type) and returns `pred[]`; `dimension` is
/// in range. The result is the array for one operand, a tuple otherwise.
pub fn sort(comparator: ComputationId, dimension: Option<i64>, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    min_operands(operands, 1)?;
    let first = array(operands[0], "operand 0")?;
    for (k, s) in operands.iter().enumerate().skip(1) {
        let a = array(s, &format!("operand {k}"))?;
        if a.dims != first.dims {
            fail!(
                SORT_SAME_DIMS,
                "all operands must have the same dimensions: operand {k} has dimensions {:?}, operand 0 has {:?}",
                a.dims,
                first.dims
            );
        }
    }
    sort_dimension(dimension, first.rank())?;

    let name = ctx.computation_name(comparator);
    let sig = ctx.signature(comparator)?;
    let n = operands.len();
    if sig.params.len() != 2 * n {
        fail!(
            SORT_COMPARATOR_PARAMS,
            "comparator `{name}` takes {} parameters; sorting {n} operand{} needs 2 * {n} = {} scalar parameters",
            sig.params.len(),
            if n == 1 { "" } else { "s" },
            2 * n
        );
    }
    for (p, param) in sig.params.iter().enumerate() {
        let k = p / 2;
        let t = operands[k].as_array().map(|a| a.element_type);
        let ok = matches!((param.as_array(), t), (Some(s), Some(t)) if s.is_scalar() && s.element_type == t);
        if !ok {
            let expected = Shape::scalar(t.unwrap_or(ElementType::Pred));
            fail!(
                SORT_COMPARATOR_PARAMS,
                "comparator `{name}` parameter {p} has shape {param}; it must be {expected}, a scalar of operand {k}'s element type"
            );
        }
    }
    if !sig.result.compatible(&Shape::scalar(ElementType::Pred)) {
        fail!(SORT_COMPARATOR_RESULT, "comparator `{name}` must return pred[], returns {}", sig.result);
    }
    Ok(if n == 1 { operands[0].clone() } else { Shape::Tuple(operands.iter().map(|&s| s.clone()).collect()) })
}

/// TopK — document §TopK: the operand has at least one dimension, an ordered
/// element type, and `0 <= k <=` its last dimension. The result is the tuple
/// `(values, indices)` of shape `[..., k]`, indices `s32`.
pub fn top_k(k: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    let Some(&last) = a.dims.last() else {
        fail!(TOP_K_RANK, "the operand must have at least one dimension, got a scalar");
    };
    element_type_is(&TOP_K_ORDERED, a.element_type, !a.element_type.is_complex(), "operand", "a type with an order (not complex)")?;
    if k < 0 || k > last {
        fail!(TOP_K_K, "k is {k}; it must be in [0, {last}], the size of the operand's last dimension");
    }
    let mut values = a.clone();
    if let Some(d) = values.dims.last_mut() {
        *d = k;
    }
    if let Some(d) = values.dynamic.last_mut() {
        *d = false;
    }
    let indices = values.with_element_type(ElementType::S32);
    Ok(Shape::Tuple(vec![Shape::Array(values), Shape::Array(indices)]))
}
