//! Rules of Dot and DotGeneral (document §Dot, §DotGeneral), and the rule
//! for `preferred_element_type` that the convolutions share.

use super::rules::*;
use crate::eval::dot::{dot_dimension_numbers, free_dimensions};
use crate::ir::DotDims;
use crate::types::{ArrayShape, ElementType, Shape};

declare_rules! {
    DOT_FORMS = "dot.c1": "The operands have a form of the document's table: \"vector [n] dot vector [n]\", \"matrix [m x k] dot vector [k]\" or \"matrix [m x k] dot matrix [k x n]\".";
    DOT_CONTRACTED_SIZE = "dot.c2": "\"The contracted dimensions of lhs and rhs must be of the same size\".";
    SAME_TYPE = "dot_general.c1": "lhs and rhs are each an \"array of type T\": they have the same element type.";
    CONTRACTING_SIZES = "dot_general.c2": "\"Associated contracting dimension numbers from the lhs and rhs\" \"must have the same dimension sizes\".";
    BATCH_SIZES = "dot_general.c3": "\"Associated batch dimension numbers from the lhs and rhs must have the same dimension sizes\".";
    PAIRED = "dot_general.c4": "(XLA) lhs and rhs name as many contracting dimensions as each other, and as many batch dimensions.";
    IN_RANGE = "dot_general.c5": "(XLA) Every contracting and batch dimension number is a dimension of its operand.";
    NAMED_ONCE = "dot_general.c6": "(XLA) No dimension of an operand is named twice among its contracting and batch dimensions.";
    PREFERRED_NARROWING = "preferred_element_type.c1": "(XLA) preferred_element_type is narrower than the operand type only for floating-point operands (pred counts one bit).";
}

/// Dot — document §Dot: the table's three forms only (vector·vector →
/// scalar, matrix·vector → vector, matrix·matrix → matrix), contracting the
/// last dimension of lhs with the first of rhs ("the contracted dimensions
/// of lhs and rhs must be of the same size").
pub fn dot(preferred: Option<ElementType>, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let lhs = array(operands[0], "lhs")?;
    let rhs = array(operands[1], "rhs")?;
    let forms = [(1, 1), (2, 1), (2, 2)];
    if !forms.contains(&(lhs.rank(), rhs.rank())) {
        fail!(
            DOT_FORMS,
            "Dot takes vector·vector, matrix·vector or matrix·matrix (the document's table); got operands of rank {} and {} \
             (use DotGeneral for other forms)",
            lhs.rank(),
            rhs.rank()
        );
    }
    let (k_lhs, k_rhs) = (lhs.dims[lhs.rank() - 1], rhs.dims[0]);
    if k_lhs != k_rhs {
        fail!(DOT_CONTRACTED_SIZE, "the contracted dimensions of lhs and rhs must be of the same size, got {k_lhs} and {k_rhs}");
    }
    dot_general(&dot_dimension_numbers(lhs.rank()), preferred, operands)
}

/// DotGeneral — document §DotGeneral. Associated contracting dimensions,
/// and associated batch dimensions, must have the same sizes; the result
/// has the batch dimensions, then the lhs non-contracting non-batch
/// dimensions, then those of rhs, each group in order.
pub fn dot_general(d: &DotDims, preferred: Option<ElementType>, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let lhs = array(operands[0], "lhs")?;
    let rhs = array(operands[1], "rhs")?;
    same_element_type(&SAME_TYPE, lhs, rhs, "lhs and rhs (both are arrays of type T)")?;
    if d.lhs_contracting_dimensions.len() != d.rhs_contracting_dimensions.len() {
        fail!(
            PAIRED,
            "lhs_contracting_dimensions has {} entries and rhs_contracting_dimensions has {}; they must pair up",
            d.lhs_contracting_dimensions.len(),
            d.rhs_contracting_dimensions.len()
        );
    }
    if d.lhs_batch_dimensions.len() != d.rhs_batch_dimensions.len() {
        fail!(
            PAIRED,
            "lhs_batch_dimensions has {} entries and rhs_batch_dimensions has {}; they must pair up",
            d.lhs_batch_dimensions.len(),
            d.rhs_batch_dimensions.len()
        );
    }
    side_dimensions(lhs, &d.lhs_contracting_dimensions, &d.lhs_batch_dimensions, "lhs")?;
    side_dimensions(rhs, &d.rhs_contracting_dimensions, &d.rhs_batch_dimensions, "rhs")?;
    same_sizes(&CONTRACTING_SIZES, lhs, rhs, &d.lhs_contracting_dimensions, &d.rhs_contracting_dimensions, "contracting")?;
    same_sizes(&BATCH_SIZES, lhs, rhs, &d.lhs_batch_dimensions, &d.rhs_batch_dimensions, "batch")?;

    let mut dims: Vec<i64> = d.lhs_batch_dimensions.iter().map(|&b| lhs.dims[b as usize]).collect();
    dims.extend(free_dimensions(lhs.rank(), &d.lhs_contracting_dimensions, &d.lhs_batch_dimensions).map(|i| lhs.dims[i]));
    dims.extend(free_dimensions(rhs.rank(), &d.rhs_contracting_dimensions, &d.rhs_batch_dimensions).map(|i| rhs.dims[i]));
    Ok(Shape::array(result_type(lhs.element_type, preferred)?, dims))
}

/// One operand's contracting and batch dimensions: in range, and no
/// dimension named twice (neither within a list nor in both).
fn side_dimensions(a: &ArrayShape, contracting: &[i64], batch: &[i64], side: &str) -> Check {
    dims_in_range(&IN_RANGE, contracting, a.rank(), &format!("{side}_contracting_dimensions"))?;
    dims_in_range(&IN_RANGE, batch, a.rank(), &format!("{side}_batch_dimensions"))?;
    unique(&NAMED_ONCE, contracting, &format!("{side}_contracting_dimensions"))?;
    unique(&NAMED_ONCE, batch, &format!("{side}_batch_dimensions"))?;
    if let Some(both) = contracting.iter().find(|c| batch.contains(c)) {
        fail!(NAMED_ONCE, "{side} dimension {both} is both a batch and a contracting dimension");
    }
    Ok(())
}

/// Associated dimensions of lhs and rhs must have the same sizes (`rule`:
/// the contracting or the batch dimensions').
fn same_sizes(rule: &'static Rule, lhs: &ArrayShape, rhs: &ArrayShape, l: &[i64], r: &[i64], kind: &str) -> Check {
    for (&i, &j) in l.iter().zip(r) {
        let (a, b) = (lhs.dims[i as usize], rhs.dims[j as usize]);
        if a != b {
            fail!(
                *rule,
                "associated {kind} dimensions must have the same size: lhs dimension {i} has size {a}, rhs dimension {j} has size {b}"
            );
        }
    }
    Ok(())
}

/// The result element type of a dot or convolution: the operand type, or
/// `preferred_element_type`. XLA's rule (XlaBuilder's `MaybeUpcast`; the
/// document does not name the argument): real floating-point operands may
/// ask for any type; integer, pred and complex operands for none narrower
/// than themselves (pred counts one bit).
pub fn result_type(operand: ElementType, preferred: Option<ElementType>) -> Check<ElementType> {
    let Some(p) = preferred else { return Ok(operand) };
    let bits = |t: ElementType| if t.is_pred() { 1 } else { t.bit_width() };
    if p != operand && !operand.is_float() && bits(p) < bits(operand) {
        fail!(
            PREFERRED_NARROWING,
            "preferred_element_type {p} is narrower than the operand type {operand} (only floating-point operands may be narrowed)"
        );
    }
    Ok(p)
}
