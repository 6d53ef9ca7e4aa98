//! Reference evaluation of Cholesky and TriangularSolve (rules in
//! `verify/linalg.rs`).
//!
//! Both are computed by the textbook loops in f64 (real types) or
//! `Complex<f64>` (complex types) and rounded once to the element type.

use num_complex::Complex;

use super::{array, internal};
use crate::error::RunError;
use crate::ir::{Op, TransposeA};
use crate::literal::{ArrayLiteral, Data, Literal, Stored};
use crate::numerics::complex as cx;
use crate::numerics::float::Float;
use crate::types::{ElementType, Shape};

type C = Complex<f64>;

pub fn eval(op: &Op, operands: &[&Literal], _shape: &Shape) -> Result<Literal, RunError> {
    let operand = |i: usize| operands.get(i).ok_or_else(|| internal("missing operand")).and_then(|l| array(l));
    Ok(match op {
        Op::Cholesky { lower } => cholesky(operand(0)?, *lower)?.into(),
        Op::TriangularSolve { left_side, lower, unit_diagonal, transpose_a } => {
            let options = Solve { left_side: *left_side, lower: *lower, unit_diagonal: *unit_diagonal, transpose_a: *transpose_a };
            triangular_solve(operand(0)?, operand(1)?, options)?.into()
        }
        _ => return Err(internal("not a linalg op")),
    })
}

// ---------------------------------------------------------------------------
// Element values as f64 / Complex<f64> and back (also used by `fft.rs`).

/// The elements of a real floating-point array, exactly, as f64.
pub(super) fn real_values(a: &ArrayLiteral) -> Option<Vec<f64>> {
    fn widen<T: Float>(v: &[T]) -> Vec<f64> {
        v.iter().map(|&x| x.to_f64()).collect()
    }
    crate::by_class!(&a.data, v => { pred: None, int: None, float: Some(widen(v)), complex: None })
}

/// The elements of a complex array as `Complex<f64>`; a real floating-point
/// array gives `x + 0i`.
pub(super) fn complex_values(a: &ArrayLiteral) -> Option<Vec<C>> {
    Some(match &a.data {
        Data::C64(v) => v.iter().map(|z| C::new(z.re as f64, z.im as f64)).collect(),
        Data::C128(v) => v.clone(),
        _ => real_values(a)?.into_iter().map(|x| C::new(x, 0.0)).collect(),
    })
}

/// f64 values rounded (to nearest even) into a real floating-point type.
pub(super) fn real_data(t: ElementType, v: &[f64]) -> Option<Data> {
    fn narrow<T: Float + Stored>(v: &[f64]) -> Data {
        T::wrap(v.iter().map(|&x| T::from_f64(x)).collect())
    }
    crate::by_type!(t, T => { pred: None, int: None, float: Some(narrow::<T>(v)), complex: None })
}

/// `Complex<f64>` values rounded part by part into c64 or c128.
pub(super) fn complex_data(t: ElementType, v: &[C]) -> Option<Data> {
    Some(match t {
        ElementType::C64 => Data::C64(v.iter().map(|z| Complex::new(z.re as f32, z.im as f32)).collect()),
        ElementType::C128 => Data::C128(v.to_vec()),
        _ => return None,
    })
}

/// The arithmetic the two algorithms need, on f64 and `Complex<f64>`. On
/// f64 every operation is the plain IEEE one (conj is the identity).
trait Field: Copy {
    const ZERO: Self;
    /// What a matrix that is not positive definite gives (XLA CPU's fill).
    const NAN: Self;
    fn conj(self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn div(self, other: Self) -> Self;
    fn div_real(self, d: f64) -> Self;
    fn re(self) -> f64;
    fn from_re(x: f64) -> Self;
}

impl Field for f64 {
    const ZERO: f64 = 0.0;
    const NAN: f64 = f64::NAN;
    fn conj(self) -> f64 {
        self
    }
    fn mul(self, other: f64) -> f64 {
        self * other
    }
    fn sub(self, other: f64) -> f64 {
        self - other
    }
    fn div(self, other: f64) -> f64 {
        self / other
    }
    fn div_real(self, d: f64) -> f64 {
        self / d
    }
    fn re(self) -> f64 {
        self
    }
    fn from_re(x: f64) -> f64 {
        x
    }
}

impl Field for C {
    const ZERO: C = C { re: 0.0, im: 0.0 };
    const NAN: C = C { re: f64::NAN, im: 0.0 };
    fn conj(self) -> C {
        C::new(self.re, -self.im)
    }
    fn mul(self, other: C) -> C {
        cx::mul(self, other)
    }
    fn sub(self, other: C) -> C {
        self - other
    }
    fn div(self, other: C) -> C {
        cx::div(self, other)
    }
    fn div_real(self, d: f64) -> C {
        C::new(self.re / d, self.im / d)
    }
    fn re(self) -> f64 {
        self.re
    }
    fn from_re(x: f64) -> C {
        C::new(x, 0.0)
    }
}

/// Applies `f` to the operand's elements as f64 or `Complex<f64>` (by its
/// element type) and stores the results in the result type `t`.
fn with_field(
    a: &ArrayLiteral,
    b: Option<&ArrayLiteral>,
    real: impl FnOnce(Vec<f64>, Option<Vec<f64>>) -> Vec<f64>,
    complex: impl FnOnce(Vec<C>, Option<Vec<C>>) -> Vec<C>,
) -> Result<Data, RunError> {
    let t = a.element_type();
    let result = if t.is_complex() {
        let b = b.map(|b| complex_values(b).ok_or_else(|| internal("expected a complex operand"))).transpose()?;
        complex_values(a).and_then(|v| complex_data(t, &complex(v, b)))
    } else {
        let b = b.map(|b| real_values(b).ok_or_else(|| internal("expected a floating-point operand"))).transpose()?;
        real_values(a).and_then(|v| real_data(t, &real(v, b)))
    };
    result.ok_or_else(|| internal("expected a floating-point or complex operand"))
}

// ---------------------------------------------------------------------------
// Cholesky

/// Cholesky — document §Cholesky. For each matrix of the batch (all but
/// the minor two dimensions are batch dimensions), the Hermitian matrix `h`
/// is read from one triangle only: `h[i][j] = a[i][j]` for `i >= j` if
/// `lower`, `conj(a[j][i])` otherwise; its diagonal is real, so only the
/// real part of `a`'s diagonal is read. The Cholesky–Banachiewicz loops give
/// the lower-triangular `l` with `h = l · l^H`:
///
/// `l[j][j] = sqrt(h[j][j] - Σ_{k<j} |l[j][k]|²)`,
/// `l[i][j] = (h[i][j] - Σ_{k<j} l[i][k] · conj(l[j][k])) / l[j][j]` for `i > j`.
///
/// The result is `l` if `lower`, else `u = l^H` (so `a = u^H · u`). The
/// other triangle of the result is zero [impl-defined; as XLA CPU]. A
/// matrix whose pivot `h[j][j] - Σ ...` is not positive (or NaN) is not
/// positive definite: its whole result is NaN [impl-defined; as XLA CPU
/// for negative and NaN pivots].
pub fn cholesky(a: &ArrayLiteral, lower: bool) -> Result<ArrayLiteral, RunError> {
    let n = a.dims().last().copied().ok_or_else(|| internal("Cholesky of a scalar"))? as usize;
    let data = with_field(a, None, |v, _| cholesky_batch(&v, n, lower), |v, _| cholesky_batch(&v, n, lower))?;
    Ok(ArrayLiteral::with_shape(a.shape.clone(), data))
}

fn cholesky_batch<T: Field>(a: &[T], n: usize, lower: bool) -> Vec<T> {
    let mut out = vec![T::ZERO; a.len()];
    if n == 0 {
        return out;
    }
    let mut l = vec![T::ZERO; n * n];
    for (matrix, result) in a.chunks_exact(n * n).zip(out.chunks_exact_mut(n * n)) {
        // The Hermitian matrix, read from the named triangle (i >= j).
        let h = |i: usize, j: usize| if lower { matrix[i * n + j] } else { matrix[j * n + i].conj() };
        let mut positive_definite = true;
        for j in 0..n {
            if crate::watch::tick((n * j) as u64 + 1) {
                break;
            }
            let mut pivot = h(j, j).re();
            for k in 0..j {
                let l_jk = l[j * n + k];
                pivot -= l_jk.mul(l_jk.conj()).re();
            }
            // Not positive (negative, zero or NaN): not positive definite.
            if pivot.is_nan() || pivot <= 0.0 {
                positive_definite = false;
                break;
            }
            let l_jj = pivot.sqrt();
            l[j * n + j] = T::from_re(l_jj);
            for i in j + 1..n {
                let mut acc = h(i, j);
                for k in 0..j {
                    acc = acc.sub(l[i * n + k].mul(l[j * n + k].conj()));
                }
                l[i * n + j] = acc.div_real(l_jj);
            }
        }
        if !positive_definite {
            result.fill(T::NAN);
            continue;
        }
        store_factor(&l, n, lower, result, T::conj);
    }
    out
}

/// Writes the lower factor `l` (`n`×`n`, row-major) into the triangle the
/// op names: as it is for the lower one, conjugate-transposed for the upper
/// one (`A = L·Lᴴ = Uᴴ·U` with `U = Lᴴ`). The other triangle is left alone.
pub(crate) fn store_factor<T: Copy>(l: &[T], n: usize, lower: bool, out: &mut [T], conj: impl Fn(T) -> T) {
    for i in 0..n {
        for j in 0..=i {
            if lower {
                out[i * n + j] = l[i * n + j];
            } else {
                out[j * n + i] = conj(l[i * n + j]);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// TriangularSolve

/// The attributes of TriangularSolve.
#[derive(Clone, Copy, Debug)]
pub struct Solve {
    pub left_side: bool,
    pub lower: bool,
    pub unit_diagonal: bool,
    pub transpose_a: TransposeA,
}

/// TriangularSolve — document §TriangularSolve. For each matrix pair of the
/// batch, solves `op(a) · x = b` (`left_side`) or `x · op(a) = b` by forward
/// or back substitution, where `a` is read from the `lower` or upper
/// triangle only (its diagonal taken as 1, unread, if `unit_diagonal`) and
/// `op(a)` is `a`, `Transpose(a)` or `Conj(Transpose(a))` (`transpose_a`).
///
/// Both forms are a set of equations `Σ_u c[e][u] · x_u = b_e`, one set per
/// column of `b` (left) or row of `b` (right), with `c = op(a)` (left) or
/// `c = Transpose(op(a))` (right). When `c` is lower triangular the unknowns
/// are found first to last, otherwise last to first:
/// `x_e = (b_e - Σ_{u solved before e} c[e][u] · x_u) / c[e][e]`.
/// A zero on the diagonal divides by zero (IEEE: inf or NaN).
pub fn triangular_solve(a: &ArrayLiteral, b: &ArrayLiteral, options: Solve) -> Result<ArrayLiteral, RunError> {
    let r = b.rank();
    if r < 2 || a.rank() != r {
        return Err(internal("TriangularSolve operands of the wrong rank"));
    }
    let m = a.dims()[r - 1] as usize;
    let (b_rows, b_cols) = (b.dims()[r - 2] as usize, b.dims()[r - 1] as usize);
    let data = with_field(
        a,
        Some(b),
        |a, b| solve_batch(&a, &b.unwrap_or_default(), m, b_rows, b_cols, options),
        |a, b| solve_batch(&a, &b.unwrap_or_default(), m, b_rows, b_cols, options),
    )?;
    Ok(ArrayLiteral::with_shape(b.shape.clone(), data))
}

fn solve_batch<T: Field>(a: &[T], b: &[T], m: usize, b_rows: usize, b_cols: usize, o: Solve) -> Vec<T> {
    let mut x = b.to_vec();
    let (a_size, b_size) = (m * m, b_rows * b_cols);
    if a_size == 0 || b_size == 0 {
        return x;
    }
    let transposed = o.transpose_a != TransposeA::NoTranspose;
    // c is lower triangular when op(a) is (lower, not transposed; or upper,
    // transposed) on the left side, and when op(a) is upper on the right.
    let forward = (o.lower != transposed) == o.left_side;
    // Independent right-hand sides: the columns of b (left) or its rows (right).
    let systems = if o.left_side { b_cols } else { b_rows };
    for (matrix, rhs) in a.chunks_exact(a_size).zip(x.chunks_exact_mut(b_size)) {
        // a's triangle: only the named triangle (and the diagonal, unless
        // unit_diagonal) is ever read.
        let tri = |i: usize, j: usize| matrix[i * m + j];
        let op_a = |i: usize, j: usize| match o.transpose_a {
            TransposeA::NoTranspose => tri(i, j),
            TransposeA::Transpose => tri(j, i),
            TransposeA::Adjoint => tri(j, i).conj(),
        };
        let c = |e: usize, u: usize| if o.left_side { op_a(e, u) } else { op_a(u, e) };
        let at = |e: usize, s: usize| if o.left_side { e * b_cols + s } else { s * b_cols + e };
        for s in 0..systems {
            for step in 0..m {
                if crate::watch::tick(m as u64) {
                    break;
                }
                let e = if forward { step } else { m - 1 - step };
                let mut acc = rhs[at(e, s)];
                let solved = if forward { 0..e } else { e + 1..m };
                for u in solved {
                    acc = acc.sub(c(e, u).mul(rhs[at(u, s)]));
                }
                rhs[at(e, s)] = if o.unit_diagonal { acc } else { acc.div(c(e, e)) };
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_reads_one_triangle() {
        let nan = f64::NAN;
        let a = [4.0, nan, nan, 2.0, 5.0, nan, -2.0, 1.0, 11.0];
        assert_eq!(cholesky_batch(&a, 3, true), vec![2.0, 0.0, 0.0, 1.0, 2.0, 0.0, -1.0, 1.0, 3.0]);
        let upper = [4.0, 2.0, -2.0, nan, 5.0, 1.0, nan, nan, 11.0];
        assert_eq!(cholesky_batch(&upper, 3, false), vec![2.0, 1.0, -1.0, 0.0, 2.0, 1.0, 0.0, 0.0, 3.0]);
        assert!(cholesky_batch(&[-1.0, 0.0, 0.0, 1.0], 2, true).iter().all(|x| x.is_nan()));
    }

    #[test]
    fn substitution_both_sides() {
        let nan = f64::NAN;
        let o = |left_side| Solve { left_side, lower: true, unit_diagonal: false, transpose_a: TransposeA::NoTranspose };
        // [[2, 0], [3, 4]] · x = [[1, 2], [3, 4]]
        assert_eq!(solve_batch(&[2.0, nan, 3.0, 4.0], &[1.0, 2.0, 3.0, 4.0], 2, 2, 2, o(true)), vec![0.5, 1.0, 0.375, 0.25]);
        // x · [[2, 0], [3, 4]] = [[1, 2], [3, 4]]
        assert_eq!(solve_batch(&[2.0, nan, 3.0, 4.0], &[1.0, 2.0, 3.0, 4.0], 2, 2, 2, o(false)), vec![-0.25, 0.5, 0.0, 1.0]);
    }
}
