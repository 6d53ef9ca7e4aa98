//! Rules of Reduce, ReduceWindow, SelectAndScatter and Map.
//!
//! Types are exact: where XLA's shape inference compares "ignoring floating
//! point precision" (an f32 reducer over bf16 data), the reference requires
//! the document's `T` everywhere (docs/semantics-decisions.md).

use super::rules::*;
use super::{Ctx, Signature};
use crate::ir::{ComputationId, WindowAttrs};
use crate::types::{ArrayShape, ElementType, Shape};

declare_rules! {
    REDUCE_INIT_VALUES = "reduce.c1": "`init_values` are \"N scalars of types `T_0, ..., T_{N-1}`\", the operands' element types.";
    REDUCE_COMPUTATION = "reduce.c2": "`computation` is a \"computation of type `T_0, ..., T_{N-1}, T_0, ..., T_{N-1} ->` `Collate(T_0, ..., T_{N-1})`\".";
    REDUCE_N = "reduce.c3": "\"N is required to be greater or equal to 1\": N operands, then N init values.";
    REDUCE_SAME_DIMS = "reduce.c4": "\"All input arrays must have the same dimensions\".";
    REDUCE_DIMENSIONS = "reduce.c5": "(XLA) `dimensions` holds distinct dimensions of the operands, in [0, rank).";

    RW_INIT_VALUES = "reduce_window.c1": "`init_values` are \"The N starting values for the reduction, one for each of the N operands\": scalars of the operands' element types (as for Reduce).";
    RW_COMPUTATION = "reduce_window.c2": "`computation` is a \"Reduction function of type `T_0, ..., T_{N-1}, T_0, ..., T_{N-1} -> Collate(T_0, ..., T_{N-1})`\".";
    RW_N = "reduce_window.c3": "\"N is required to be greater or equal to 1\": N operands, then N init values.";
    RW_SAME_DIMS = "reduce_window.c4": "\"All input arrays must have the same dimensions\".";

    WINDOW_PER_DIM = "window.c1": "(XLA) `window_dimensions`, `window_strides`, `base_dilations`, `window_dilations` and `padding` have one entry per operand dimension.";
    WINDOW_POSITIVE = "window.c2": "(XLA) Window sizes, strides and dilations are at least 1.";

    SAS_SOURCE_SHAPE = "select_and_scatter.c1": "\"the `source` array must have the same shape as the result of applying a `ReduceWindow` operation on the `operand` array\".";
    SAS_SELECT = "select_and_scatter.c2": "`select` is a \"binary computation of type `T, T -> PRED`\".";
    SAS_SOURCE_TYPE = "select_and_scatter.c3": "`source` is an \"array of type T\", the operand's element type.";
    SAS_INIT_VALUE = "select_and_scatter.c4": "`init_value` is a \"scalar value of type T\".";
    SAS_SCATTER = "select_and_scatter.c5": "`scatter` is a \"binary computation of type `T, T -> T`\".";
    SAS_NO_DILATIONS = "select_and_scatter.c6": "(invariant) The window has no dilations (`base_dilations` and `window_dilations` all 1): the document's signature has none; the JSON reader rejects the attributes, the HLO reader a dilated window, and StableHLO has neither.";

    MAP_COMPUTATION = "map.c1": "The mapped computation \"has N inputs of scalar type `T` and a single output with type `S`\": one scalar parameter per operand, of its element type (XLA has no M extra parameters).";
    MAP_SAME_DIMS = "map.c2": "(XLA) All operands have the same dimensions (the result has \"the same dimensions\").";
    MAP_DIMENSIONS = "map.c3": "(XLA) `dimensions`, when given, lists every dimension in order: Map applies across all dimensions.";
}

/// The rules of Reduce or ReduceWindow that the helpers they share check, so
/// that an error names the op's own rule.
struct ReduceRules {
    init_values: &'static Rule,
    computation: &'static Rule,
    n: &'static Rule,
    same_dims: &'static Rule,
}

static REDUCE_RULES: ReduceRules =
    ReduceRules { init_values: &REDUCE_INIT_VALUES, computation: &REDUCE_COMPUTATION, n: &REDUCE_N, same_dims: &REDUCE_SAME_DIMS };

static REDUCE_WINDOW_RULES: ReduceRules =
    ReduceRules { init_values: &RW_INIT_VALUES, computation: &RW_COMPUTATION, n: &RW_N, same_dims: &RW_SAME_DIMS };

/// Reduce — document §Reduce: `Reduce(operands..., init_values...,
/// computation, dimensions)`. N >= 1 operands of the same dimensions, N
/// scalar init values of the operands' types, a reducer of type
/// `T_0..T_{N-1}, T_0..T_{N-1} -> Collate(T_0..T_{N-1})`, and `dimensions`
/// unique and in range (unordered). The result keeps the other dimensions in
/// their order: one array for N = 1, a tuple of N arrays otherwise.
pub fn reduce(computation: ComputationId, dimensions: &[i64], operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    let (arrays, types) = operands_and_inits(&REDUCE_RULES, operands)?;
    let rank = arrays[0].rank();
    dims_in_range(&REDUCE_DIMENSIONS, dimensions, rank, "dimensions")?;
    unique(&REDUCE_DIMENSIONS, dimensions, "dimensions")?;
    check_reducer(&REDUCE_RULES, computation, &types, ctx)?;
    let kept: Vec<i64> = (0..rank as i64).filter(|d| !dimensions.contains(d)).map(|d| arrays[0].dims[d as usize]).collect();
    Ok(collate(types.iter().map(|&t| Shape::array(t, kept.clone())).collect()))
}

/// ReduceWindow — document §ReduceWindow: operands and init values as for
/// Reduce, the same reducer type, and a window with one entry per operand
/// dimension. The output dimensions are those of [`window_output_dims`].
pub fn reduce_window(computation: ComputationId, w: &WindowAttrs, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    let (arrays, types) = operands_and_inits(&REDUCE_WINDOW_RULES, operands)?;
    let out = window_output_dims(&arrays[0].dims, w)?;
    check_reducer(&REDUCE_WINDOW_RULES, computation, &types, ctx)?;
    Ok(collate(types.iter().map(|&t| Shape::array(t, out.clone())).collect()))
}

/// SelectAndScatter — document §SelectAndScatter: `operand` and `source`
/// arrays and a scalar `init_value`, all of type T; `select` is
/// `T, T -> PRED`, `scatter` is `T, T -> T`; `source` has the shape of a
/// ReduceWindow of `operand` over the window (which has no dilations). The
/// result has the operand's shape.
pub fn select_and_scatter(select: ComputationId, scatter: ComputationId, w: &WindowAttrs, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    operand_count(operands, 3)?;
    let operand = array(operands[0], "operand")?;
    let source = array(operands[1], "source")?;
    let init = scalar(&SAS_INIT_VALUE, operands[2], "init_value")?;
    let t = operand.element_type;
    if source.element_type != t {
        fail!(SAS_SOURCE_TYPE, "source has element type {}, the operand {t}; both must be T", source.element_type);
    }
    if init.element_type != t {
        fail!(SAS_INIT_VALUE, "init_value has type {}, the operand {t}; both must be T", init.element_type);
    }
    // Unreachable from a module that passed a reader: the JSON, HLO and MLIR
    // readers do not read SelectAndScatter's dilations and set them to 1.
    if w.base_dilations.iter().chain(&w.window_dilations).any(|&d| d != 1) {
        fail!(SAS_NO_DILATIONS, "SelectAndScatter has no dilations: base_dilations and window_dilations must be 1");
    }
    let windows = window_output_dims(&operand.dims, w)?;
    if source.dims != windows {
        fail!(
            SAS_SOURCE_SHAPE,
            "source has dimensions {:?}, but the windows over the operand give {windows:?}; source must have the shape of the ReduceWindow result",
            source.dims
        );
    }
    let scalar_t = Shape::scalar(t);
    let pred = Shape::scalar(ElementType::Pred);
    check_scalar_fn(&SAS_SELECT, select, "select", &[&scalar_t, &scalar_t], &pred, ctx)?;
    check_scalar_fn(&SAS_SCATTER, scatter, "scatter", &[&scalar_t, &scalar_t], &scalar_t, ctx)?;
    Ok(Shape::Array(operand.clone()))
}

/// Map — document §Map: N >= 1 arrays of the same dimensions (element types
/// T_0..T_{N-1}), a computation of N scalar parameters of those types
/// returning one scalar of type S; the result has the operands' dimensions
/// and element type S. `dimensions`, when given, must list every dimension
/// in order (XLA maps only across all dimensions). The document's M extra
/// "static" parameters do not exist in XLA (XlaBuilder rejects them) and are
/// not supported.
pub fn map(computation: ComputationId, dimensions: Option<&[i64]>, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    min_operands(operands, 1)?;
    let arrays = operand_arrays(operands)?;
    let first = arrays[0];
    same_dims(&MAP_SAME_DIMS, &arrays)?;
    if let Some(dims) = dimensions {
        let all: Vec<i64> = (0..first.rank() as i64).collect();
        if dims != all.as_slice() {
            fail!(MAP_DIMENSIONS, "dimensions is {dims:?}; Map applies across all dimensions in order, so it must be {all:?}");
        }
    }
    let sig = ctx.signature(computation)?;
    let name = ctx.computation_name(computation);
    if sig.params.len() != arrays.len() {
        fail!(
            MAP_COMPUTATION,
            "computation `{name}` takes {} parameters, Map has {} operands; it must take one scalar per operand",
            sig.params.len(),
            arrays.len()
        );
    }
    for (i, (p, a)) in sig.params.iter().zip(&arrays).enumerate() {
        if !p.compatible(&Shape::scalar(a.element_type)) {
            fail!(
                MAP_COMPUTATION,
                "computation `{name}` parameter {i} is {p}; it must be {}[] (the element type of operand {i})",
                a.element_type
            );
        }
    }
    let result = match &sig.result {
        Shape::Array(r) if r.is_scalar() => r.element_type,
        other => fail!(MAP_COMPUTATION, "computation `{name}` returns {other}; a mapped computation must return one scalar"),
    };
    Ok(Shape::array(result, first.dims.clone()))
}

/// The output dimensions of a window placed on each base dimension
/// (ReduceWindow, SelectAndScatter), after checking the window:
/// `window_dimensions`, `window_strides`, `base_dilations`,
/// `window_dilations` and the `padding` pairs have one entry per dimension;
/// sizes, strides and dilations are at least 1; padding may be negative
/// (it then crops). Per dimension, with `(lo, hi)` the resolved padding
/// (SAME and VALID as XlaBuilder's `MakePadding`):
///
/// ```text
/// dilated_base   = (size - 1) * base_dilation + 1    (0 when size = 0)
/// padded         = lo + dilated_base + hi
/// dilated_window = (window - 1) * window_dilation + 1
/// output         = (padded - dilated_window) / stride + 1,  or 0 if padded < dilated_window
/// ```
pub fn window_output_dims(base: &[i64], w: &WindowAttrs) -> Check<Vec<i64>> {
    let rank = base.len();
    let per_dim = |attr: &str, n: usize| -> Check {
        ensure(n == rank, &WINDOW_PER_DIM, || format!("{attr} has {n} entries, it needs one per operand dimension ({rank})"))
    };
    per_dim("window_dimensions", w.window_dimensions.len())?;
    per_dim("window_strides", w.window_strides.len())?;
    per_dim("base_dilations", w.base_dilations.len())?;
    per_dim("window_dilations", w.window_dilations.len())?;
    positive(&WINDOW_POSITIVE, &w.window_dimensions, "window_dimensions")?;
    positive(&WINDOW_POSITIVE, &w.window_strides, "window_strides")?;
    positive(&WINDOW_POSITIVE, &w.base_dilations, "base_dilations")?;
    positive(&WINDOW_POSITIVE, &w.window_dilations, "window_dilations")?;
    let pads = w.padding.resolve(base, &w.window_dimensions, &w.window_dilations, &w.window_strides);
    if pads.len() != rank {
        fail!(WINDOW_PER_DIM, "padding has {} [low, high] pairs, it needs one per operand dimension ({rank})", pads.len());
    }
    let mut out = Vec::with_capacity(rank);
    for d in 0..rank {
        let overflow = || broken(&SIZE_OVERFLOW, format!("the padded, dilated base or window of dimension {d} overflows"));
        let dilated = |size: i64, dilation: i64| -> Check<i64> {
            if size == 0 {
                return Ok(0);
            }
            (size - 1).checked_mul(dilation).and_then(|x| x.checked_add(1)).ok_or_else(overflow)
        };
        let (lo, hi) = pads[d];
        let dilated_base = dilated(base[d], w.base_dilations[d])?;
        let padded = lo.checked_add(dilated_base).and_then(|x| x.checked_add(hi)).ok_or_else(overflow)?;
        let dilated_window = dilated(w.window_dimensions[d], w.window_dilations[d])?;
        out.push(if padded < dilated_window { 0 } else { (padded - dilated_window) / w.window_strides[d] + 1 });
    }
    Ok(out)
}

/// Splits `[operands..., init_values...]` (Reduce, ReduceWindow): N >= 1
/// arrays of the same dimensions, then N scalars whose types match.
/// Returns the operands and their element types.
fn operands_and_inits<'a>(rules: &ReduceRules, operands: &[&'a Shape]) -> Check<(Vec<&'a ArrayShape>, Vec<ElementType>)> {
    let n = operands.len() / 2;
    if n == 0 || 2 * n != operands.len() {
        fail!(
            *rules.n,
            "takes N operands followed by N init_values (N >= 1, so an even number of at least 2), got {} operands",
            operands.len()
        );
    }
    let arrays = operand_arrays(&operands[..n])?;
    same_dims(rules.same_dims, &arrays)?;
    let mut types = Vec::with_capacity(n);
    for (i, (a, init)) in arrays.iter().zip(&operands[n..]).enumerate() {
        let init = scalar(rules.init_values, init, &format!("init_values[{i}]"))?;
        if init.element_type != a.element_type {
            fail!(
                *rules.init_values,
                "init_values[{i}] has type {}, operand {i} has element type {}; they must be the same T_{i}",
                init.element_type,
                a.element_type
            );
        }
        types.push(a.element_type);
    }
    Ok((arrays, types))
}

fn operand_arrays<'a>(operands: &[&'a Shape]) -> Check<Vec<&'a ArrayShape>> {
    operands.iter().enumerate().map(|(i, s)| array(s, &format!("operand {i}"))).collect()
}

/// All arrays have the dimensions of the first.
fn same_dims(rule: &'static Rule, arrays: &[&ArrayShape]) -> Check {
    for (i, a) in arrays.iter().enumerate().skip(1) {
        if a.dims != arrays[0].dims {
            fail!(*rule, "all operands must have the same dimensions: operand 0 is {}, operand {i} is {a}", arrays[0]);
        }
    }
    Ok(())
}

/// One array for a single result, a tuple otherwise (the document's `Collate`).
fn collate(mut shapes: Vec<Shape>) -> Shape {
    if shapes.len() == 1 {
        shapes.swap_remove(0)
    } else {
        Shape::Tuple(shapes)
    }
}

/// The reducer of N operands of types `types`: 2N scalar parameters
/// (running values first, then inputs: document §Reduce, "Variadic Reduce"),
/// returning `T_0[]` when N = 1 and the tuple `(T_0[], ..., T_{N-1}[])`
/// otherwise.
fn check_reducer(rules: &ReduceRules, computation: ComputationId, types: &[ElementType], ctx: &Ctx) -> Check {
    let sig = ctx.signature(computation)?;
    let name = ctx.computation_name(computation);
    let n = types.len();
    if sig.params.len() != 2 * n {
        fail!(
            *rules.computation,
            "computation `{name}` takes {} parameters; the reducer of {n} operand{} takes {} (the running values, then the inputs)",
            sig.params.len(),
            if n == 1 { "" } else { "s" },
            2 * n
        );
    }
    for (i, p) in sig.params.iter().enumerate() {
        let t = types[i % n];
        if !p.compatible(&Shape::scalar(t)) {
            let role = if i < n { "running value" } else { "input" };
            fail!(*rules.computation, "computation `{name}` parameter {i} is {p}; it must be {t}[] (the {role} of operand {})", i % n);
        }
    }
    let expected = collate(types.iter().map(|&t| Shape::scalar(t)).collect());
    if !sig.result.compatible(&expected) {
        fail!(*rules.computation, "computation `{name}` returns {}; the reducer must return {expected}", sig.result);
    }
    Ok(())
}

/// A computation of the given scalar parameters and result (`rule` asks for it).
fn check_scalar_fn(rule: &'static Rule, id: ComputationId, role: &str, params: &[&Shape], result: &Shape, ctx: &Ctx) -> Check {
    let sig: &Signature = ctx.signature(id)?;
    let name = ctx.computation_name(id);
    let wanted = || {
        let ps: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        format!("{role} must be of type ({}) -> {result}", ps.join(", "))
    };
    if sig.params.len() != params.len() {
        fail!(*rule, "{role} computation `{name}` takes {} parameters; {}", sig.params.len(), wanted());
    }
    for (i, (p, q)) in sig.params.iter().zip(params).enumerate() {
        if !p.compatible(q) {
            fail!(*rule, "{role} computation `{name}` parameter {i} is {p}; {}", wanted());
        }
    }
    if !sig.result.compatible(result) {
        fail!(*rule, "{role} computation `{name}` returns {}; {}", sig.result, wanted());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Padding;

    fn w(size: i64, stride: i64, base_dilation: i64, window_dilation: i64, padding: Padding) -> WindowAttrs {
        WindowAttrs {
            window_dimensions: vec![size],
            window_strides: vec![stride],
            base_dilations: vec![base_dilation],
            window_dilations: vec![window_dilation],
            padding,
        }
    }

    #[test]
    fn window_output_sizes() {
        let explicit = |lo, hi| Padding::Explicit(vec![(lo, hi)]);
        assert_eq!(window_output_dims(&[5], &w(3, 2, 1, 1, Padding::Valid)), Ok(vec![2]));
        assert_eq!(window_output_dims(&[5], &w(3, 2, 1, 1, Padding::Same)), Ok(vec![3]));
        // SAME measures the window dilated (5 wide here): stride 1 keeps the
        // input size, stride 2 gives ceil(5 / 2); base dilation does not enter.
        assert_eq!(window_output_dims(&[5], &w(3, 1, 1, 2, Padding::Same)), Ok(vec![5]));
        assert_eq!(window_output_dims(&[5], &w(3, 2, 1, 2, Padding::Same)), Ok(vec![3]));
        assert_eq!(window_output_dims(&[4], &w(3, 2, 2, 1, Padding::Same)), Ok(vec![3]));
        // Base dilation 2: 7 positions; window dilation 2: a window spans 3.
        assert_eq!(window_output_dims(&[4], &w(2, 1, 2, 2, Padding::Valid)), Ok(vec![5]));
        // Negative padding crops; a negative padded base fits no window.
        assert_eq!(window_output_dims(&[5], &w(2, 1, 1, 1, explicit(-1, 1))), Ok(vec![4]));
        assert_eq!(window_output_dims(&[2], &w(1, 1, 1, 1, explicit(-2, -1))), Ok(vec![0]));
        // An empty base: only the padding, windows reduce nothing.
        assert_eq!(window_output_dims(&[0], &w(1, 1, 3, 1, explicit(1, 1))), Ok(vec![2]));
        // One entry per dimension: a rank-0 base takes an empty window.
        assert!(window_output_dims(&[], &w(1, 1, 1, 1, Padding::Valid)).is_err());
        let empty = WindowAttrs {
            window_dimensions: vec![],
            window_strides: vec![],
            base_dilations: vec![],
            window_dilations: vec![],
            padding: Padding::Valid,
        };
        assert_eq!(window_output_dims(&[], &empty), Ok(vec![]));
        assert!(window_output_dims(&[3], &w(2, 1, i64::MAX, 1, Padding::Valid)).is_err());
    }
}
