//! The contract of the LAPACK custom-call targets that JAX's CPU lowering of
//! `jnp.linalg` emits (`lapack_sgetrf_ffi`, `lapack_zungqr_ffi`, ...): which
//! names exist, how the flags are read from the backend config, and the
//! operand and result shapes. The verifier checks modules against these
//! rules; both engines' implementations check them again before computing,
//! so a module that skipped verification gets an error, not a panic.
//!
//! Names are `lapack_` + a type letter + the routine + `_ffi`: `s` f32,
//! `d` f64, `c` c64, `z` c128. The routines are `getrf`, `potrf`, `geqrf`,
//! `trsm`, and `orgqr` (real) / `ungqr` (complex). Every dimension before
//! the last two is a batch dimension. Arrays are logical (row-major as
//! xla-json writes them): JAX's column-major `operand_layouts` describe the
//! physical buffers only.

use crate::types::{ArrayShape, ElementType, Shape};

/// A LAPACK routine implemented as a custom-call target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routine {
    /// LU factorization with partial pivoting.
    Getrf,
    /// Cholesky factorization.
    Potrf,
    /// Householder QR factorization.
    Geqrf,
    /// The Q of a QR factorization from its Householder vectors (`orgqr`
    /// for real types, `ungqr` for complex ones).
    Orgqr,
    /// Triangular solve with several right-hand sides.
    Trsm,
}

/// Every LAPACK target name xlaref implements.
pub fn target_names() -> Vec<String> {
    let mut names = Vec::new();
    for (letter, complex) in [('s', false), ('d', false), ('c', true), ('z', true)] {
        for routine in ["getrf", "potrf", "geqrf", if complex { "ungqr" } else { "orgqr" }, "trsm"] {
            names.push(format!("lapack_{letter}{routine}_ffi"));
        }
    }
    names
}

/// The element type and routine a target name names, if it is one of
/// [`target_names`].
pub fn parse_name(name: &str) -> Option<(ElementType, Routine)> {
    let body = name.strip_prefix("lapack_")?.strip_suffix("_ffi")?;
    let mut chars = body.chars();
    let ty = match chars.next()? {
        's' => ElementType::F32,
        'd' => ElementType::F64,
        'c' => ElementType::C64,
        'z' => ElementType::C128,
        _ => return None,
    };
    let complex = matches!(ty, ElementType::C64 | ElementType::C128);
    let routine = match chars.as_str() {
        "getrf" => Routine::Getrf,
        "potrf" => Routine::Potrf,
        "geqrf" => Routine::Geqrf,
        "trsm" => Routine::Trsm,
        "orgqr" if !complex => Routine::Orgqr,
        "ungqr" if complex => Routine::Orgqr,
        _ => return None,
    };
    Some((ty, routine))
}

/// `op(A)` of trsm: 'N', 'T' or 'C'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trans {
    No,
    Transpose,
    Adjoint,
}

/// The flags of trsm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrsmFlags {
    /// `side` 'L': solve op(A)·X = B; 'R': X·op(A) = B.
    pub left_side: bool,
    /// `uplo` 'L': A's lower triangle is referenced; 'U': its upper one.
    pub lower: bool,
    /// `trans_x`.
    pub trans: Trans,
    /// `diag` 'U': A's diagonal is taken as ones and not read.
    pub unit_diagonal: bool,
}

/// The character flag `key` of a backend config written as MLIR's
/// dictionary (`{diag = 85 : ui8, side = 76 : ui8}`, what XLA's HLO text
/// and both importers carry): `None` when the key is absent.
pub fn flag(opaque: &str, key: &str) -> Result<Option<char>, String> {
    let bytes = opaque.as_bytes();
    let mut from = 0;
    while let Some(at) = opaque.get(from..).and_then(|s| s.find(key)).map(|p| p + from) {
        from = at + key.len();
        let word = |i: Option<usize>| i.and_then(|i| bytes.get(i)).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if word(at.checked_sub(1)) || word(Some(from)) {
            continue;
        }
        let rest = opaque[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else { continue };
        let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
        return match digits.parse::<u8>() {
            Ok(code) => Ok(Some(char::from(code).to_ascii_uppercase())),
            Err(_) => Err(format!("flag `{key}` in the backend config `{opaque}` is not a character code (e.g. `{key} = 76 : ui8`)")),
        };
    }
    Ok(None)
}

fn one_of(opaque: &str, key: &str, default: char, allowed: &str) -> Result<char, String> {
    let c = flag(opaque, key)?.unwrap_or(default);
    if allowed.contains(c) {
        Ok(c)
    } else {
        let list: Vec<String> = allowed.chars().map(|a| format!("'{a}' ({})", a as u8)).collect();
        Err(format!("flag `{key}` is {} ('{}'), it must be one of {}", c as u32, c.escape_debug(), list.join(", ")))
    }
}

/// potrf's `uplo` (default 'L'): whether the lower triangle is factored.
pub fn potrf_lower(opaque: &str) -> Result<bool, String> {
    Ok(one_of(opaque, "uplo", 'L', "LU")? == 'L')
}

/// trsm's flags; absent ones default to side 'L', uplo 'L', trans_x 'N',
/// diag 'N'.
pub fn trsm_flags(opaque: &str) -> Result<TrsmFlags, String> {
    let trans = match one_of(opaque, "trans_x", 'N', "NTC")? {
        'T' => Trans::Transpose,
        'C' => Trans::Adjoint,
        _ => Trans::No,
    };
    Ok(TrsmFlags {
        left_side: one_of(opaque, "side", 'L', "LR")? == 'L',
        lower: one_of(opaque, "uplo", 'L', "LU")? == 'L',
        trans,
        unit_diagonal: one_of(opaque, "diag", 'N', "NU")? == 'U',
    })
}

/// A matrix operand: `[batch..., rows, cols]`.
fn matrix<'a>(s: &'a Shape, ty: ElementType, what: &str) -> Result<(&'a ArrayShape, i64, i64), String> {
    let a = s.as_array().ok_or_else(|| format!("{what} must be an array, got {s}"))?;
    if a.element_type != ty {
        return Err(format!("{what} must have element type {ty} (the target's type letter), got {s}"));
    }
    match a.dims[..] {
        [.., rows, cols] => Ok((a, rows, cols)),
        _ => Err(format!("{what} must have rank 2 or more (batch dimensions, then rows and columns), got {s}")),
    }
}

fn batch(a: &ArrayShape) -> &[i64] {
    &a.dims[..a.dims.len().saturating_sub(2)]
}

fn array(ty: ElementType, batch: &[i64], tail: &[i64]) -> Shape {
    Shape::Array(ArrayShape::new(ty, batch.iter().chain(tail).copied().collect()))
}

fn operand_count(operands: &[&Shape], n: usize) -> Result<(), String> {
    if operands.len() == n {
        Ok(())
    } else {
        Err(format!("takes {n} operand{}, got {}", if n == 1 { "" } else { "s" }, operands.len()))
    }
}

/// The result shape the target returns for these operands, or the rule
/// they break (operand count, types, ranks, batch dimensions, flags).
pub fn result_shape(ty: ElementType, routine: Routine, operands: &[&Shape], opaque: &str) -> Result<Shape, String> {
    // Pivot indices and sizes are s32 in LAPACK's interface.
    let fits = |d: i64| if d > i64::from(i32::MAX) { Err(format!("dimension {d} does not fit LAPACK's s32 indices")) } else { Ok(()) };
    match routine {
        Routine::Getrf | Routine::Geqrf | Routine::Potrf => {
            operand_count(operands, 1)?;
            let (a, m, n) = matrix(operands[0], ty, "the matrix")?;
            fits(m.max(n))?;
            let b = batch(a);
            let whole = Shape::Array(a.clone());
            Ok(match routine {
                Routine::Getrf => Shape::Tuple(vec![whole, array(ElementType::S32, b, &[m.min(n)]), array(ElementType::S32, b, &[])]),
                Routine::Geqrf => Shape::Tuple(vec![whole, array(ty, b, &[m.min(n)])]),
                _ => {
                    if m != n {
                        return Err(format!("the matrix must be square, got {}", operands[0]));
                    }
                    potrf_lower(opaque)?;
                    Shape::Tuple(vec![whole, array(ElementType::S32, b, &[])])
                }
            })
        }
        Routine::Orgqr => {
            operand_count(operands, 2)?;
            let (a, m, n) = matrix(operands[0], ty, "the Householder vectors")?;
            let t = operands[1].as_array().filter(|t| t.element_type == ty && !t.dims.is_empty());
            let Some(t) = t else { return Err(format!("tau must be an array of {ty} with rank 1 or more, got {}", operands[1])) };
            let (tb, k) = t.dims.split_at(t.dims.len() - 1);
            if tb != batch(a) {
                return Err(format!("tau's batch dimensions {tb:?} differ from the matrix's {:?}", batch(a)));
            }
            if !(m >= n && n >= k[0]) {
                return Err(format!("needs rows >= columns >= reflectors (m >= n >= k), got m = {m}, n = {n}, k = {}", k[0]));
            }
            fits(m)?;
            Ok(Shape::Array(a.clone()))
        }
        Routine::Trsm => {
            operand_count(operands, 2)?;
            let flags = trsm_flags(opaque)?;
            let (a, p, q) = matrix(operands[0], ty, "the triangular matrix")?;
            let (b, m, n) = matrix(operands[1], ty, "the right-hand sides")?;
            if p != q {
                return Err(format!("the triangular matrix must be square, got {}", operands[0]));
            }
            if batch(a) != batch(b) {
                return Err(format!("batch dimensions differ: {} and {}", operands[0], operands[1]));
            }
            let need = if flags.left_side { m } else { n };
            if p != need {
                let side = if flags.left_side { "rows (side 'L')" } else { "columns (side 'R')" };
                return Err(format!("the triangular matrix is {p}x{p}, the right-hand sides have {need} {side}"));
            }
            Ok(Shape::Array(b.clone()))
        }
    }
}

/// The verifier's rule for target `name`: the operands fit and the
/// declared result shape is the one the target returns.
pub fn check(name: &str, operands: &[&Shape], declared: &Shape, opaque: &str) -> Result<(), String> {
    let (ty, routine) = parse_name(name).ok_or_else(|| format!("`{name}` is not a LAPACK target"))?;
    let expected = result_shape(ty, routine, operands, opaque)?;
    if declared.compatible(&expected) {
        Ok(())
    } else {
        Err(format!("`{name}` returns {expected} for these operands, the CustomCall declares {declared}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_flags() {
        assert_eq!(target_names().len(), 20);
        assert_eq!(parse_name("lapack_zungqr_ffi"), Some((ElementType::C128, Routine::Orgqr)));
        assert_eq!(parse_name("lapack_zorgqr_ffi"), None);
        assert_eq!(parse_name("lapack_sgesdd_ffi"), None);
        let f = trsm_flags("{diag = 85 : ui8, side = 76 : ui8, trans_x = 67 : ui8, uplo = 85 : ui8}").unwrap();
        assert_eq!(f, TrsmFlags { left_side: true, lower: false, trans: Trans::Adjoint, unit_diagonal: true });
        assert!(!potrf_lower("uplo = 117").unwrap());
        assert!(potrf_lower("").unwrap());
        assert!(potrf_lower("uplo = 88 : ui8").unwrap_err().contains("must be one of"));
        assert!(potrf_lower("uplo = x").is_err());
    }

    #[test]
    fn shapes() {
        let a = Shape::parse("f32[2,4,3]").unwrap();
        let r = result_shape(ElementType::F32, Routine::Getrf, &[&a], "").unwrap();
        assert_eq!(r.to_string(), "(f32[2,4,3], s32[2,3], s32[2])");
        assert!(result_shape(ElementType::F64, Routine::Getrf, &[&a], "").unwrap_err().contains("element type"));
        let v = Shape::parse("f32[3]").unwrap();
        assert!(result_shape(ElementType::F32, Routine::Getrf, &[&v], "").unwrap_err().contains("rank 2"));
        let t = Shape::parse("f32[2,3]").unwrap();
        assert_eq!(result_shape(ElementType::F32, Routine::Orgqr, &[&a, &t], "").unwrap(), a);
        let b = Shape::parse("f32[2,4,5]").unwrap();
        let sq = Shape::parse("f32[2,4,4]").unwrap();
        assert_eq!(result_shape(ElementType::F32, Routine::Trsm, &[&sq, &b], "").unwrap(), b);
        assert!(result_shape(ElementType::F32, Routine::Trsm, &[&sq, &b], "side = 82").is_err());
    }
}
