//! Rules of Cholesky and TriangularSolve.

use super::rules::*;
use crate::types::{ArrayShape, Shape};

declare_rules! {
    CHOLESKY_TYPE = "cholesky.c1": "a is \"an array of a complex or floating-point type\".";
    CHOLESKY_RANK = "cholesky.c2": "a has \"> 2 dimensions\" (xlaref, as XLA, also accepts 2, a single matrix, unless strict).";
    CHOLESKY_SQUARE = "cholesky.c3": "a is \"a batch of symmetric (Hermitian) positive definite matrices\": its minor two dimensions are equal.";
    SOLVE_A_TYPE = "triangular_solve.c1": "a is \"of a complex or floating-point type\".";
    SOLVE_A_RANK = "triangular_solve.c2": "a is \"a > 2 dimensional array\" (xlaref, as XLA, also accepts 2, a single matrix, unless strict).";
    SOLVE_A_SQUARE = "triangular_solve.c3": "a has \"shape [..., M, M]\".";
    SOLVE_B_TYPE = "triangular_solve.c4": "b is an array \"of the same type\" as a.";
    SOLVE_B_RANK = "triangular_solve.c5": "b is \"a > 2 dimensional array\" (xlaref, as XLA, also accepts 2).";
    SOLVE_B_SHAPE = "triangular_solve.c6": "b has \"shape [..., M, K] if left_side is true, [..., K, M] otherwise\".";
    SOLVE_BATCH = "triangular_solve.c7": "\"a and b must have equal batch dimensions\" (so the same number of dimensions).";
}

/// The rules [`square_matrices`] checks, as the op at hand numbers them.
struct MatrixRules {
    element_type: &'static Rule,
    rank: &'static Rule,
    square: &'static Rule,
}

/// A batch of square matrices `[..., M, M]` of a floating-point or complex
/// type; returns `M`. The document asks for "> 2 dimensions" (at least one
/// batch dimension); a single matrix (rank 2), which JAX emits for
/// `jnp.linalg.cholesky` of a matrix and XLA accepts, is an extension that
/// `strict` rejects.
fn square_matrices(a: &ArrayShape, what: &str, strict: bool, rules: MatrixRules) -> Check<i64> {
    element_type_is(rules.element_type, a.element_type, a.element_type.is_floating(), what, "a floating-point or complex type")?;
    let r = a.rank();
    if r < 2 {
        fail!(*rules.rank, "{what} must have at least 2 dimensions (a batch of matrices), got {a}");
    }
    if strict && r == 2 {
        fail!(
            *rules.rank,
            "{what} has 2 dimensions; the document asks for more than 2 (a rank-2 operand is an extension, rejected by --strict)"
        );
    }
    let (rows, cols) = (a.dims[r - 2], a.dims[r - 1]);
    if rows != cols {
        fail!(*rules.square, "{what} must be a batch of square matrices [..., M, M], its minor dimensions are {rows} and {cols}");
    }
    Ok(rows)
}

/// Cholesky — document §Cholesky: `a` is a batch of square matrices of a
/// floating-point or complex type (all but the minor two dimensions are batch
/// dimensions); the result has its shape.
pub fn cholesky(operands: &[&Shape], strict: bool) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "a")?;
    square_matrices(a, "a", strict, MatrixRules { element_type: &CHOLESKY_TYPE, rank: &CHOLESKY_RANK, square: &CHOLESKY_SQUARE })?;
    Ok(operands[0].clone())
}

/// TriangularSolve — document §TriangularSolve: `a` is `[..., M, M]`, `b` of
/// the same type is `[..., M, K]` (`left_side`) or `[..., K, M]`, and the
/// batch dimensions are equal. The result `x` has `b`'s shape.
pub fn triangular_solve(left_side: bool, operands: &[&Shape], strict: bool) -> Check<Shape> {
    operand_count(operands, 2)?;
    let a = array(operands[0], "a")?;
    let b = array(operands[1], "b")?;
    same_element_type(&SOLVE_B_TYPE, a, b, "a and b")?;
    let m = square_matrices(a, "a", strict, MatrixRules { element_type: &SOLVE_A_TYPE, rank: &SOLVE_A_RANK, square: &SOLVE_A_SQUARE })?;
    let r = b.rank();
    if r < 2 {
        fail!(SOLVE_B_RANK, "b must have at least 2 dimensions (a batch of matrices), got {b}");
    }
    if r != a.rank() {
        fail!(SOLVE_BATCH, "a and b must have the same number of dimensions, got {} and {r}", a.rank());
    }
    if a.dims[..r - 2] != b.dims[..r - 2] {
        fail!(SOLVE_BATCH, "a and b must have equal batch dimensions, got {:?} and {:?}", &a.dims[..r - 2], &b.dims[..r - 2]);
    }
    let (shared, form) = if left_side {
        (b.dims[r - 2], "[..., M, K] when left_side is true")
    } else {
        (b.dims[r - 1], "[..., K, M] when left_side is false")
    };
    if shared != m {
        fail!(SOLVE_B_SHAPE, "b has shape {b}; it must be {form}, with M = {m} from a");
    }
    Ok(operands[1].clone())
}
