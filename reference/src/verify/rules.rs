//! Small checks the op families share. Each returns the broken rule as a
//! sentence, which the walk wraps with the instruction and op names.

use crate::types::{ArrayShape, ElementType, Shape};

pub type Check<T = ()> = Result<T, String>;

/// Exactly `n` operands.
pub fn operand_count(operands: &[&Shape], n: usize) -> Check {
    if operands.len() != n {
        return Err(format!("takes {n} operand{}, got {}", if n == 1 { "" } else { "s" }, operands.len()));
    }
    Ok(())
}

/// At least `n` operands.
pub fn min_operands(operands: &[&Shape], n: usize) -> Check {
    if operands.len() < n {
        return Err(format!("takes at least {n} operand{}, got {}", if n == 1 { "" } else { "s" }, operands.len()));
    }
    Ok(())
}

/// The shape must be an array; `what` names it in the message.
pub fn array<'a>(shape: &'a Shape, what: &str) -> Check<&'a ArrayShape> {
    shape.as_array().ok_or_else(|| format!("{what} must be an array, got {shape}"))
}

/// The shape must be a scalar array.
pub fn scalar<'a>(shape: &'a Shape, what: &str) -> Check<&'a ArrayShape> {
    let a = array(shape, what)?;
    if !a.is_scalar() {
        return Err(format!("{what} must be a scalar, got {shape}"));
    }
    Ok(a)
}

/// Every entry in `[0, rank)`.
pub fn dims_in_range(dims: &[i64], rank: usize, attr: &str) -> Check {
    for &d in dims {
        if d < 0 || d >= rank as i64 {
            return Err(format!("{attr} entry {d} is out of range [0, {rank})"));
        }
    }
    Ok(())
}

/// No entry twice.
pub fn unique(dims: &[i64], attr: &str) -> Check {
    for (i, d) in dims.iter().enumerate() {
        if dims[..i].contains(d) {
            return Err(format!("{attr} repeats {d}"));
        }
    }
    Ok(())
}

/// Strictly increasing (sorted, no repeats).
pub fn strictly_increasing(dims: &[i64], attr: &str) -> Check {
    if dims.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!("{attr} must be strictly increasing, got {dims:?}"));
    }
    Ok(())
}

/// A permutation of `0..n`.
pub fn permutation(dims: &[i64], n: usize, attr: &str) -> Check {
    if dims.len() != n {
        return Err(format!("{attr} has {} entries, it must be a permutation of the {n} dimensions", dims.len()));
    }
    dims_in_range(dims, n, attr)?;
    unique(dims, attr)
}

/// `len` entries, one per dimension.
pub fn length(values: &[i64], len: usize, attr: &str, of: &str) -> Check {
    if values.len() != len {
        return Err(format!("{attr} has {} entries, {of} has {len}", values.len()));
    }
    Ok(())
}

/// Every entry non-negative.
pub fn non_negative(values: &[i64], attr: &str) -> Check {
    if let Some(v) = values.iter().find(|&&v| v < 0) {
        return Err(format!("{attr} entry {v} is negative"));
    }
    Ok(())
}

/// Every entry at least 1.
pub fn positive(values: &[i64], attr: &str) -> Check {
    if let Some(v) = values.iter().find(|&&v| v < 1) {
        return Err(format!("{attr} entry {v} must be at least 1"));
    }
    Ok(())
}

/// Two arrays of the same element type.
pub fn same_element_type(a: &ArrayShape, b: &ArrayShape, what: &str) -> Check {
    if a.element_type != b.element_type {
        return Err(format!("{what}: element types differ ({} vs {})", a.element_type, b.element_type));
    }
    Ok(())
}

/// The element type must satisfy `ok`; `kinds` says which types are allowed.
pub fn element_type_is(t: ElementType, ok: bool, what: &str, kinds: &str) -> Check {
    if !ok {
        return Err(format!("{what} has element type {t}; it must be {kinds}"));
    }
    Ok(())
}

/// Product of sizes, refusing overflow.
pub fn product(dims: &[i64]) -> Check<i64> {
    dims.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d)).ok_or_else(|| format!("the element count of {dims:?} overflows"))
}
