//! Cholesky and TriangularSolve, computed in f64 (real types) or
//! `Complex<f64>` (complex types) and rounded once to the element type,
//! parallel over the matrices of the batch. TriangularSolve solves all
//! right-hand sides of a matrix at once, a row of unknowns at a time (row
//! updates that vectorize); each unknown still sees its terms in the
//! substitution order, so the results equal plain substitution's.

use num_complex::Complex;
use rayon::prelude::*;
use xlaref_reference::ir::{Op, TransposeA};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal, Stored};
use xlaref_reference::types::{ElementType, Shape};
use xlaref_reference::watch::Clock;
use xlaref_reference::RunError;

use crate::elem::complex as cx;
use crate::elem::float::{FFloat, Wide};
use crate::exec::Executor;
use crate::internal;
use crate::par;

type R<T> = Result<T, RunError>;
type C = Complex<f64>;

pub fn eval(_exec: &mut Executor, op: &Op, operands: &[&Literal], _shape: &Shape) -> R<Literal> {
    let operand = |i: usize| operands.get(i).and_then(|l| l.as_array()).ok_or_else(|| internal("expected an array operand"));
    Ok(match op {
        Op::Cholesky { lower } => cholesky(operand(0)?, *lower)?.into(),
        Op::TriangularSolve { left_side, lower, unit_diagonal, transpose_a } => {
            let o = Solve { left_side: *left_side, lower: *lower, unit_diagonal: *unit_diagonal, transpose_a: *transpose_a };
            triangular_solve(operand(0)?, operand(1)?, o)?.into()
        }
        _ => return Err(internal("not a linalg op")),
    })
}

// ---------------------------------------------------------------------------
// Values as f64 / Complex<f64> and back (also used by batch_norm.rs).

/// The elements of a real floating-point array, exactly, as f64.
pub(super) fn reals(d: &Data) -> Option<Vec<f64>> {
    Some(xlaref_reference::by_class!(d, v => {
        pred: return None,
        int: return None,
        float: par::map(v, |x| x.up().to_f64()),
        complex: return None,
    }))
}

/// f64 values rounded once (to nearest even) to the real type `t`.
pub(super) fn from_reals(t: ElementType, v: &[f64]) -> Option<Data> {
    Some(xlaref_reference::by_type!(t, T => {
        pred: return None,
        int: return None,
        float: Stored::wrap(par::map(v, T::round_from_f64)),
        complex: return None,
    }))
}

fn complexes(d: &Data) -> Option<Vec<C>> {
    Some(match d {
        Data::C64(v) => par::map(v, |z| C::new(z.re as f64, z.im as f64)),
        Data::C128(v) => v.clone(),
        _ => return None,
    })
}

fn from_complexes(t: ElementType, v: &[C]) -> Option<Data> {
    Some(match t {
        ElementType::C64 => Data::C64(par::map(v, |z| Complex::new(z.re as f32, z.im as f32))),
        ElementType::C128 => Data::C128(v.to_vec()),
        _ => return None,
    })
}

/// The arithmetic both algorithms need, on f64 and `Complex<f64>`.
trait Field: Copy + Send + Sync + Default {
    const NAN: Self;
    fn conj(self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn div_real(self, d: f64) -> Self;
    fn re(self) -> f64;
    fn from_re(x: f64) -> Self;
}

impl Field for f64 {
    const NAN: f64 = f64::NAN;
    #[inline(always)]
    fn conj(self) -> f64 {
        self
    }
    #[inline(always)]
    fn mul(self, o: f64) -> f64 {
        self * o
    }
    #[inline(always)]
    fn sub(self, o: f64) -> f64 {
        self - o
    }
    #[inline(always)]
    fn div(self, o: f64) -> f64 {
        self / o
    }
    #[inline(always)]
    fn div_real(self, d: f64) -> f64 {
        self / d
    }
    #[inline(always)]
    fn re(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_re(x: f64) -> f64 {
        x
    }
}

impl Field for C {
    const NAN: C = C { re: f64::NAN, im: 0.0 };
    #[inline(always)]
    fn conj(self) -> C {
        C::new(self.re, -self.im)
    }
    #[inline(always)]
    fn mul(self, o: C) -> C {
        cx::mul(self, o)
    }
    #[inline(always)]
    fn sub(self, o: C) -> C {
        self - o
    }
    fn div(self, o: C) -> C {
        cx::div(self, o)
    }
    #[inline(always)]
    fn div_real(self, d: f64) -> C {
        C::new(self.re / d, self.im / d)
    }
    #[inline(always)]
    fn re(self) -> f64 {
        self.re
    }
    #[inline(always)]
    fn from_re(x: f64) -> C {
        C::new(x, 0.0)
    }
}

// ---------------------------------------------------------------------------
// Cholesky

/// Cholesky — document §Cholesky, as the reference decides it: the named
/// triangle only (the diagonal's real part), `l · l^H` by the
/// Cholesky–Banachiewicz loops, zeros in the other triangle, and a matrix
/// with a pivot that is not positive entirely NaN.
pub fn cholesky(a: &ArrayLiteral, lower: bool) -> R<ArrayLiteral> {
    let n = a.dims().last().copied().ok_or_else(|| internal("Cholesky of a scalar"))? as usize;
    let t = a.element_type();
    let data = if t.is_complex() {
        let v = complexes(&a.data).ok_or_else(|| internal("Cholesky operand type"))?;
        from_complexes(t, &cholesky_batch(&v, n, lower))
    } else {
        let v = reals(&a.data).ok_or_else(|| internal("Cholesky operand type"))?;
        from_reals(t, &cholesky_batch(&v, n, lower))
    }
    .ok_or_else(|| internal("Cholesky result type"))?;
    Ok(ArrayLiteral::with_shape(a.shape.clone(), data))
}

fn cholesky_batch<T: Field>(a: &[T], n: usize, lower: bool) -> Vec<T> {
    let mut out = vec![T::default(); a.len()];
    if n == 0 {
        return out;
    }
    let size = n * n;
    let clock = xlaref_reference::watch::clock();
    out.par_chunks_mut(size).zip(a.par_chunks(size)).for_each_init(
        || vec![T::default(); size],
        |l, (result, matrix)| {
            if clock.passed() {
                return;
            }
            // The Hermitian matrix as its lower triangle, row-major in `l`.
            for i in 0..n {
                for j in 0..=i {
                    l[i * n + j] = if lower { matrix[i * n + j] } else { matrix[j * n + i].conj() };
                }
            }
            if !factor(l, n, clock) {
                result.fill(T::NAN);
                return;
            }
            store_factor(l, n, lower, result, T::conj);
        },
    );
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

/// Factors the lower triangle of `l` in place; false if not positive
/// definite. Stops early (a value the engine drops) once `clock` passes.
fn factor<T: Field>(l: &mut [T], n: usize, clock: Clock) -> bool {
    for j in 0..n {
        if j % 64 == 63 && clock.passed() {
            break;
        }
        let (above, rest) = l.split_at_mut(j * n);
        let row_j = &mut rest[..n];
        // Row j left of the diagonal: l[j][k] for k < j, from the rows above.
        for k in 0..j {
            let row_k = &above[k * n..k * n + n];
            let mut acc = row_j[k];
            for (&x, &y) in row_j[..k].iter().zip(&row_k[..k]) {
                acc = acc.sub(x.mul(y.conj()));
            }
            row_j[k] = acc.div_real(row_k[k].re());
        }
        let mut pivot = row_j[j].re();
        for &x in &row_j[..j] {
            pivot -= x.mul(x.conj()).re();
        }
        if pivot.is_nan() || pivot <= 0.0 {
            return false;
        }
        row_j[j] = T::from_re(pivot.sqrt());
    }
    true
}

// ---------------------------------------------------------------------------
// TriangularSolve

#[derive(Clone, Copy, Debug)]
struct Solve {
    left_side: bool,
    lower: bool,
    unit_diagonal: bool,
    transpose_a: TransposeA,
}

/// TriangularSolve — document §TriangularSolve: `op(a) · x = b` or
/// `x · op(a) = b` by substitution, reading only the named triangle (not
/// the diagonal with `unit_diagonal`).
fn triangular_solve(a: &ArrayLiteral, b: &ArrayLiteral, o: Solve) -> R<ArrayLiteral> {
    let r = b.rank();
    if r < 2 || a.rank() != r {
        return Err(internal("TriangularSolve operands of the wrong rank"));
    }
    let m = a.dims()[r - 1] as usize;
    let (rows, cols) = (b.dims()[r - 2] as usize, b.dims()[r - 1] as usize);
    let t = b.element_type();
    let data = if t.is_complex() {
        let (av, bv) = (complexes(&a.data), complexes(&b.data));
        let (av, bv) = av.zip(bv).ok_or_else(|| internal("TriangularSolve operand types"))?;
        from_complexes(t, &solve_batch(&av, &bv, m, rows, cols, o))
    } else {
        let (av, bv) = (reals(&a.data), reals(&b.data));
        let (av, bv) = av.zip(bv).ok_or_else(|| internal("TriangularSolve operand types"))?;
        from_reals(t, &solve_batch(&av, &bv, m, rows, cols, o))
    }
    .ok_or_else(|| internal("TriangularSolve result type"))?;
    Ok(ArrayLiteral::with_shape(b.shape.clone(), data))
}

fn solve_batch<T: Field>(a: &[T], b: &[T], m: usize, rows: usize, cols: usize, o: Solve) -> Vec<T> {
    let mut x = b.to_vec();
    let (a_size, b_size) = (m * m, rows * cols);
    if a_size == 0 || b_size == 0 {
        return x;
    }
    let transposed = o.transpose_a != TransposeA::NoTranspose;
    // The system c · X = R: c = op(a) (left) or Transpose(op(a)) (right),
    // R = b (left) or Transpose(b) (right); c is lower triangular when
    // `forward`.
    let forward = (o.lower != transposed) == o.left_side;
    let systems = if o.left_side { cols } else { rows };
    let clock = xlaref_reference::watch::clock();
    x.par_chunks_mut(b_size).zip(a.par_chunks(a_size)).for_each_init(
        || (vec![T::default(); a_size], vec![T::default(); b_size]),
        |(c, rhs), (xb, matrix)| {
            if clock.passed() {
                return;
            }
            // c[e][u], read from a's named triangle only.
            for e in 0..m {
                for u in 0..m {
                    let (i, j) = if o.left_side { (e, u) } else { (u, e) };
                    // op(a)[i][j]
                    c[e * m + u] = match o.transpose_a {
                        TransposeA::NoTranspose => matrix[i * m + j],
                        TransposeA::Transpose => matrix[j * m + i],
                        TransposeA::Adjoint => matrix[j * m + i].conj(),
                    };
                }
            }
            // R: rows are unknowns e, columns are systems s.
            if o.left_side {
                rhs.copy_from_slice(xb);
            } else {
                for s in 0..systems {
                    for e in 0..m {
                        rhs[e * systems + s] = xb[s * cols + e];
                    }
                }
            }
            substitute(c, rhs, m, systems, forward, o.unit_diagonal, clock);
            if o.left_side {
                xb.copy_from_slice(rhs);
            } else {
                for s in 0..systems {
                    for e in 0..m {
                        xb[s * cols + e] = rhs[e * systems + s];
                    }
                }
            }
        },
    );
    x
}

/// Solves `c · X = R` in place of `r` (`m` rows of `k` systems), unknown
/// rows in order (forward) or reverse; each unknown subtracts its terms in
/// increasing `u`, then divides by the diagonal.
fn substitute<T: Field>(c: &[T], r: &mut [T], m: usize, k: usize, forward: bool, unit_diagonal: bool, clock: Clock) {
    for step in 0..m {
        if step % 64 == 63 && clock.passed() {
            break;
        }
        let e = if forward { step } else { m - 1 - step };
        let solved = if forward { 0..e } else { e + 1..m };
        let (before, rest) = r.split_at_mut(e * k);
        let (row_e, after) = rest.split_at_mut(k);
        for u in solved {
            let coefficient = c[e * m + u];
            let row_u = if u < e { &before[u * k..u * k + k] } else { &after[(u - e - 1) * k..(u - e) * k] };
            par::simd(
                #[inline(always)]
                || {
                    for (x, &y) in row_e.iter_mut().zip(row_u) {
                        *x = x.sub(coefficient.mul(y));
                    }
                },
            );
        }
        if !unit_diagonal {
            let d = c[e * m + e];
            row_e.iter_mut().for_each(|x| *x = x.div(d));
        }
    }
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
        assert_eq!(solve_batch(&[2.0, nan, 3.0, 4.0], &[1.0, 2.0, 3.0, 4.0], 2, 2, 2, o(true)), vec![0.5, 1.0, 0.375, 0.25]);
        assert_eq!(solve_batch(&[2.0, nan, 3.0, 4.0], &[1.0, 2.0, 3.0, 4.0], 2, 2, 2, o(false)), vec![-0.25, 0.5, 0.0, 1.0]);
    }
}
