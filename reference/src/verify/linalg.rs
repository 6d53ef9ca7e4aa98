//! Rules of Cholesky and TriangularSolve.

use super::rules::*;
use crate::types::{ArrayShape, Shape};

declare_rules! {}

/// A batch of square matrices `[..., M, M]` of a floating-point or complex
/// type; returns `M`. The document asks for "> 2 dimensions" (at least one
/// batch dimension); a single matrix (rank 2), which JAX emits for
/// `jnp.linalg.cholesky` of a matrix and XLA accepts, is an extension that
/// `strict` rejects.
fn square_matrices(a: &ArrayShape, what: &str, strict: bool) -> Check<i64> {
    element_type_is(&UNNUMBERED, a.element_type, a.element_type.is_floating(), what, "a floating-point or complex type")?;
    let r = a.rank();
    if r < 2 {
        return Err(unnumbered(format!("{what} must have at least 2 dimensions (a batch of matrices), got {a}")));
    }
    if strict && r == 2 {
        return Err(unnumbered(format!(
            "{what} has 2 dimensions; the document asks for more than 2 (a rank-2 operand is an extension, rejected by --strict)"
        )));
    }
    let (rows, cols) = (a.dims[r - 2], a.dims[r - 1]);
    if rows != cols {
        return Err(unnumbered(format!(
            "{what} must be a batch of square matrices [..., M, M], its minor dimensions are {rows} and {cols}"
        )));
    }
    Ok(rows)
}

/// Cholesky — document §Cholesky: `a` is a batch of square matrices of a
/// floating-point or complex type (all but the minor two dimensions are batch
/// dimensions); the result has its shape.
pub fn cholesky(operands: &[&Shape], strict: bool) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "a")?;
    square_matrices(a, "a", strict)?;
    Ok(operands[0].clone())
}

/// TriangularSolve — document §TriangularSolve: `a` is `[..., M, M]`, `b` of
/// the same type is `[..., M, K]` (`left_side`) or `[..., K, M]`, and the
/// batch dimensions are equal. The result `x` has `b`'s shape.
pub fn triangular_solve(left_side: bool, operands: &[&Shape], strict: bool) -> Check<Shape> {
    operand_count(operands, 2)?;
    let a = array(operands[0], "a")?;
    let b = array(operands[1], "b")?;
    same_element_type(&UNNUMBERED, a, b, "a and b")?;
    let m = square_matrices(a, "a", strict)?;
    let r = b.rank();
    if r < 2 {
        return Err(unnumbered(format!("b must have at least 2 dimensions (a batch of matrices), got {b}")));
    }
    if r != a.rank() {
        return Err(unnumbered(format!("a and b must have the same number of dimensions, got {} and {r}", a.rank())));
    }
    if a.dims[..r - 2] != b.dims[..r - 2] {
        return Err(unnumbered(format!("a and b must have equal batch dimensions, got {:?} and {:?}", &a.dims[..r - 2], &b.dims[..r - 2])));
    }
    let (shared, form) = if left_side {
        (b.dims[r - 2], "[..., M, K] when left_side is true")
    } else {
        (b.dims[r - 1], "[..., K, M] when left_side is false")
    };
    if shared != m {
        return Err(unnumbered(format!("b has shape {b}; it must be {form}, with M = {m} from a")));
    }
    Ok(operands[1].clone())
}
