//! The LAPACK targets as plain, unblocked textbook algorithms (the
//! reference's reading of LAPACK's documented behaviour; the contract —
//! names, flags, shapes — is in [`super::lapack_abi`]).
//!
//! Arithmetic is in the element type itself (f32 for `s` and `c`), as
//! LAPACK's. The order of the operations follows LAPACK's unblocked
//! routines (`?getf2`, `?potf2`, `?geqr2`/`?larfg`/`?larf`, `?org2r`/
//! `?ung2r`, reference `?trsm`); optimized LAPACKs (blocked, recursive,
//! reordered sums, reciprocal scaling) round differently, so the values are
//! LAPACK's up to rounding, while pivots and `info` are exact except on
//! near-ties that rounding decides. Every matrix is `[rows, cols]`
//! row-major, one after another over the batch dimensions.

use num_complex::Complex;
use num_traits::{Float, One, Zero};
use std::ops::{Add, Div, Mul, Neg, Sub};

use super::lapack_abi::{self as abi, Routine, Trans, TrsmFlags};
use crate::error::RunError;
use crate::literal::{ArrayLiteral, Literal, Stored};
use crate::types::{ElementType, Shape};

/// An element type LAPACK works in: f32, f64, c64, c128.
pub(crate) trait Scalar:
    Copy + PartialEq + Stored + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self>
{
    type Real: Float;
    fn re(self) -> Self::Real;
    fn im(self) -> Self::Real;
    fn conj(self) -> Self;
    /// The element with these parts (a real type drops `im`).
    fn from_parts(re: Self::Real, im: Self::Real) -> Self;
    fn from_real(re: Self::Real) -> Self {
        Self::from_parts(re, Self::Real::zero())
    }
    fn zero() -> Self {
        Self::from_real(Self::Real::zero())
    }
    fn one() -> Self {
        Self::from_real(Self::Real::one())
    }
    /// `|re| + |im|`: the magnitude BLAS's `i?amax` compares (`cabs1`).
    fn abs1(self) -> Self::Real {
        self.re().abs() + self.im().abs()
    }
}

macro_rules! real {
    ($t:ty) => {
        impl Scalar for $t {
            type Real = $t;
            fn re(self) -> $t {
                self
            }
            fn im(self) -> $t {
                0.0
            }
            fn conj(self) -> $t {
                self
            }
            fn from_parts(re: $t, _: $t) -> $t {
                re
            }
        }
        impl Scalar for Complex<$t> {
            type Real = $t;
            fn re(self) -> $t {
                self.re
            }
            fn im(self) -> $t {
                self.im
            }
            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }
            fn from_parts(re: $t, im: $t) -> Self {
                Complex::new(re, im)
            }
        }
    };
}
real!(f32);
real!(f64);

fn fail(name: &str, what: impl std::fmt::Display) -> RunError {
    RunError::CustomCall(format!("target `{name}`: {what}"))
}

/// The target `name` (one of [`abi::target_names`]).
pub fn call(name: &str, operands: &[Literal], _shape: &Shape, opaque: &str) -> Result<Literal, RunError> {
    let (ty, routine) = abi::parse_name(name).ok_or_else(|| fail(name, "not a LAPACK target"))?;
    let shapes: Vec<Shape> = operands.iter().map(Literal::shape).collect();
    let refs: Vec<&Shape> = shapes.iter().collect();
    abi::result_shape(ty, routine, &refs, opaque).map_err(|e| fail(name, e))?;
    let arrays: Vec<&ArrayLiteral> = operands.iter().filter_map(Literal::as_array).collect();
    let out = match ty {
        ElementType::F32 => typed::<f32>(routine, &arrays, opaque),
        ElementType::F64 => typed::<f64>(routine, &arrays, opaque),
        ElementType::C64 => typed::<Complex<f32>>(routine, &arrays, opaque),
        _ => typed::<Complex<f64>>(routine, &arrays, opaque),
    };
    out.ok_or_else(|| fail(name, "operands do not match the target's element type"))?.map_err(|e| fail(name, e))
}

/// `[batch..., rows, cols]`: the number of matrices, rows, cols.
fn dims(a: &ArrayLiteral) -> (usize, usize, usize) {
    let d = a.dims();
    let at = |i: usize| d.get(i).map_or(0, |&x| usize::try_from(x).unwrap_or(0));
    let r = d.len();
    let rows = if r >= 2 { at(r - 2) } else { 0 };
    let cols = if r >= 2 { at(r - 1) } else { 0 };
    let count = d[..r.saturating_sub(2)].iter().map(|&x| usize::try_from(x).unwrap_or(0)).product();
    (count, rows, cols)
}

fn with_dims<T: Stored>(like: &ArrayLiteral, ty: ElementType, tail: &[usize], v: Vec<T>) -> Literal {
    let d = like.dims();
    let mut dims: Vec<i64> = d[..d.len().saturating_sub(2)].to_vec();
    dims.extend(tail.iter().map(|&x| x as i64));
    let shape = crate::types::ArrayShape::new(ty, dims);
    ArrayLiteral::with_shape(shape, T::wrap(v)).into()
}

/// An array of `like`'s shape holding `v`.
fn same<T: Stored>(like: &ArrayLiteral, v: Vec<T>) -> Literal {
    ArrayLiteral::with_shape(like.shape.clone(), T::wrap(v)).into()
}

/// `None` if the operands' data is not `T`; `Some(Err)` for a bad flag.
fn typed<T: Scalar>(routine: Routine, arrays: &[&ArrayLiteral], opaque: &str) -> Option<Result<Literal, String>> {
    let a = arrays.first()?;
    let mut data: Vec<T> = a.typed::<T>()?.to_vec();
    let (count, m, n) = dims(a);
    let ty = a.element_type();
    let k = m.min(n);
    Some(Ok(match routine {
        Routine::Getrf => {
            let mut ipiv = vec![0i32; count * k];
            let mut info = vec![0i32; count];
            for b in 0..count {
                info[b] = getrf(&mut data[b * m * n..(b + 1) * m * n], m, n, &mut ipiv[b * k..(b + 1) * k]);
            }
            let lu = same(a, data);
            Literal::Tuple(vec![lu, with_dims(a, ElementType::S32, &[k], ipiv), with_dims(a, ElementType::S32, &[], info)])
        }
        Routine::Potrf => {
            let lower = match abi::potrf_lower(opaque) {
                Ok(l) => l,
                Err(e) => return Some(Err(e)),
            };
            let mut info = vec![0i32; count];
            let mut work = vec![T::zero(); n * n];
            for b in 0..count {
                info[b] = potrf(&mut data[b * n * n..(b + 1) * n * n], n, lower, &mut work);
            }
            let factor = same(a, data);
            Literal::Tuple(vec![factor, with_dims(a, ElementType::S32, &[], info)])
        }
        Routine::Geqrf => {
            let mut tau = vec![T::zero(); count * k];
            let mut work = vec![T::zero(); n];
            for b in 0..count {
                geqrf(&mut data[b * m * n..(b + 1) * m * n], m, n, &mut tau[b * k..(b + 1) * k], &mut work);
            }
            let r = same(a, data);
            Literal::Tuple(vec![r, with_dims(a, ty, &[k], tau)])
        }
        Routine::Orgqr => {
            let tau = arrays.get(1)?.typed::<T>()?;
            let kk = arrays.get(1).map_or(0, |t| t.dims().last().map_or(0, |&x| usize::try_from(x).unwrap_or(0)));
            let mut work = vec![T::zero(); n];
            for b in 0..count {
                orgqr(&mut data[b * m * n..(b + 1) * m * n], m, n, &tau[b * kk..(b + 1) * kk], &mut work);
            }
            same(a, data)
        }
        Routine::Trsm => {
            let flags = match abi::trsm_flags(opaque) {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            let rhs = arrays.get(1)?;
            let mut x: Vec<T> = rhs.typed::<T>()?.to_vec();
            let (_, bm, bn) = dims(rhs);
            let mut work = vec![T::zero(); m * m];
            for b in 0..count {
                trsm(&data[b * m * m..(b + 1) * m * m], m, &mut x[b * bm * bn..(b + 1) * bm * bn], bm, bn, flags, &mut work);
            }
            same(rhs, x)
        }
    }))
}

/// `?getrf`: `a = P·L·U` by Gaussian elimination with partial pivoting
/// (the unblocked `?getf2`). At step `j` the pivot is the first row `p >= j`
/// whose `|a[p][j]|` is largest (`|re| + |im|` for complex, as `i?amax`;
/// a NaN never compares larger, so it is chosen only where it stands
/// first); `ipiv[j] = p + 1` (1-based) and rows `j` and `p` are swapped
/// across the whole matrix. A nonzero pivot divides the column below it
/// (the multipliers of L, unit diagonal not stored); a zero pivot leaves
/// the column as it is and sets `info` to `j + 1` if it is the first, and
/// the elimination goes on. U is on and above the diagonal. Returns `info`.
pub(crate) fn getrf<T: Scalar>(a: &mut [T], m: usize, n: usize, ipiv: &mut [i32]) -> i32 {
    let mut info = 0;
    for j in 0..m.min(n) {
        let mut p = j;
        let mut largest = a[j * n + j].abs1();
        for i in j + 1..m {
            let v = a[i * n + j].abs1();
            if v > largest {
                largest = v;
                p = i;
            }
        }
        ipiv[j] = (p + 1) as i32;
        if a[p * n + j] != T::zero() {
            if p != j {
                for c in 0..n {
                    a.swap(j * n + c, p * n + c);
                }
            }
            let pivot = a[j * n + j];
            for i in j + 1..m {
                a[i * n + j] = a[i * n + j] / pivot;
            }
        } else if info == 0 {
            info = (j + 1) as i32;
        }
        // The rank-one update of the trailing block.
        for i in j + 1..m {
            let l = a[i * n + j];
            for c in j + 1..n {
                a[i * n + c] = a[i * n + c] - l * a[j * n + c];
            }
        }
        if crate::watch::tick(((m - j) * (n - j)) as u64 + 1) {
            break;
        }
    }
    info
}

/// `?potrf`: the Cholesky factor of a Hermitian positive definite `a`,
/// `L·Lᴴ` from the lower triangle (`uplo` 'L') or `Uᴴ·U` from the upper one
/// ('U'), column by column as `?potf2`. Only that triangle is read and
/// written; the other keeps its input values. The diagonal's imaginary
/// parts are not read. When the reduced diagonal of column `j` is not
/// positive (or is NaN), `info = j + 1` and the factorization stops: the
/// columns (rows for 'U') before `j` hold the factor's, the diagonal
/// element `j` holds the value that was not positive, and the rest of the
/// triangle keeps the input's values. Returns `info`.
pub(crate) fn potrf<T: Scalar>(a: &mut [T], n: usize, lower: bool, w: &mut [T]) -> i32 {
    // Work on the lower triangle: for 'U' it is Uᴴ's, which is L, and the
    // products below are then the same ones in the same order.
    for i in 0..n {
        for j in 0..=i {
            w[i * n + j] = if lower { a[i * n + j] } else { a[j * n + i].conj() };
        }
    }
    let mut info = 0;
    for j in 0..n {
        let mut dot = T::Real::zero();
        for k in 0..j {
            let x = w[j * n + k];
            dot = dot + (x.re() * x.re() + x.im() * x.im());
        }
        let d = w[j * n + j].re() - dot;
        // Not positive, or NaN.
        if d.partial_cmp(&T::Real::zero()) != Some(std::cmp::Ordering::Greater) {
            w[j * n + j] = T::from_real(d);
            info = (j + 1) as i32;
            break;
        }
        let d = d.sqrt();
        w[j * n + j] = T::from_real(d);
        for i in j + 1..n {
            let mut s = w[i * n + j];
            for k in 0..j {
                s = s - w[i * n + k] * w[j * n + k].conj();
            }
            w[i * n + j] = T::from_parts(s.re() / d, s.im() / d);
        }
        if crate::watch::tick(((n - j) * (j + 1)) as u64) {
            break;
        }
    }
    crate::eval::linalg::store_factor(w, n, lower, a, T::conj);
    info
}

/// `sqrt(x² + y² + z²)` without overflow or needless underflow (`?lapy3`).
fn lapy3<R: Float>(x: R, y: R, z: R) -> R {
    let w = x.abs().max(y.abs()).max(z.abs());
    if w == R::zero() {
        return x.abs() + y.abs() + z.abs();
    }
    let (p, q, r) = (x / w, y / w, z / w);
    w * (p * p + q * q + r * r).sqrt()
}

/// The 2-norm of `a[from..m][col]`, scaled by its largest component so
/// that it neither overflows nor underflows needlessly (as `?nrm2`).
fn column_norm<T: Scalar>(a: &[T], n: usize, col: usize, from: usize, m: usize) -> T::Real {
    let mut scale = T::Real::zero();
    for r in from..m {
        scale = scale.max(a[r * n + col].re().abs()).max(a[r * n + col].im().abs());
    }
    if scale == T::Real::zero() || !scale.is_finite() {
        return scale;
    }
    let mut sum = T::Real::zero();
    for r in from..m {
        let (p, q) = (a[r * n + col].re() / scale, a[r * n + col].im() / scale);
        sum = sum + p * p + q * q;
    }
    scale * sum.sqrt()
}

/// `?geqrf`: `a = Q·R` with `Q = H(1)···H(k)`, `k = min(m, n)`, by
/// Householder reflections, column by column as `?geqr2`. Reflection `i`
/// (`?larfg`) maps column `i` from the diagonal down to `(beta, 0, ..., 0)`
/// with `beta = -sign(re alpha)·‖(alpha, x)‖` (alpha the diagonal element,
/// x the elements below; the sign of a zero is its sign bit), `tau =
/// ((beta - re alpha)/beta, -im alpha/beta)` and `v = (1, x/(alpha -
/// beta))`; when x is zero and alpha is real, `tau = 0` and `H = I`.
/// `H(i)ᴴ = I - conj(tau)·v·vᴴ` is then applied to the columns on the
/// right. R ends on and above the diagonal, v's below it (v's leading 1 not
/// stored). LAPACK also rescales columns whose beta is below the safe
/// minimum (about 1e-38 in f32); xlaref does not, as such a column's
/// values are dominated by underflow either way.
pub(crate) fn geqrf<T: Scalar>(a: &mut [T], m: usize, n: usize, tau: &mut [T], w: &mut [T]) {
    for i in 0..m.min(n) {
        let alpha = a[i * n + i];
        let xnorm = column_norm(a, n, i, i + 1, m);
        tau[i] = if xnorm == T::Real::zero() && alpha.im() == T::Real::zero() {
            T::zero()
        } else {
            let norm = lapy3(alpha.re(), alpha.im(), xnorm);
            let beta = if alpha.re().is_sign_negative() { norm } else { -norm };
            let scale = T::one() / (alpha - T::from_real(beta));
            for r in i + 1..m {
                a[r * n + i] = a[r * n + i] * scale;
            }
            a[i * n + i] = T::from_real(beta);
            T::from_parts((beta - alpha.re()) / beta, -alpha.im() / beta)
        };
        if i + 1 < n {
            apply_reflector(a, n, i, i, m, tau[i].conj(), w);
        }
        if crate::watch::tick(((m - i) * (n - i)) as u64 + 1) {
            break;
        }
    }
}

/// `C = (I - t·v·vᴴ)·C` (`?larf` from the left) where C is
/// `a[from..m][col+1..n]` and v is `a[from..m][col]` with its first element
/// taken as 1. `w` holds `vᴴ·C`.
fn apply_reflector<T: Scalar>(a: &mut [T], n: usize, col: usize, from: usize, m: usize, t: T, w: &mut [T]) {
    if t == T::zero() {
        return;
    }
    let v = |a: &[T], r: usize| if r == from { T::one() } else { a[r * n + col] };
    for x in w[col + 1..n].iter_mut() {
        *x = T::zero();
    }
    for r in from..m {
        let vr = v(a, r).conj();
        for c in col + 1..n {
            w[c] = w[c] + vr * a[r * n + c];
        }
    }
    for r in from..m {
        let tv = t * v(a, r);
        for c in col + 1..n {
            a[r * n + c] = a[r * n + c] - tv * w[c];
        }
    }
}

/// `?orgqr` / `?ungqr`: the first `n` columns of `Q = H(1)···H(k)` from
/// the vectors below the diagonal of `a` (as `?geqrf` leaves them) and
/// `tau[k]`, `m >= n >= k`, building Q from the last reflection back as
/// `?org2r`: columns `k..n` start as the identity's, and reflection `i`
/// applied to the columns right of `i` then turns column `i` into
/// `(0, ..., 0, 1 - tau, -tau·x)`. Elements on and above the diagonal of
/// the input are not read.
pub(crate) fn orgqr<T: Scalar>(a: &mut [T], m: usize, n: usize, tau: &[T], w: &mut [T]) {
    let k = tau.len();
    for j in k..n {
        for r in 0..m {
            a[r * n + j] = if r == j { T::one() } else { T::zero() };
        }
    }
    for i in (0..k).rev() {
        if i + 1 < n {
            apply_reflector(a, n, i, i, m, tau[i], w);
        }
        for r in i + 1..m {
            a[r * n + i] = -tau[i] * a[r * n + i];
        }
        a[i * n + i] = T::one() - tau[i];
        for r in 0..i {
            a[r * n + i] = T::zero();
        }
        if crate::watch::tick(((m - i) * (n - i)) as u64 + 1) {
            break;
        }
    }
}

/// `?trsm` with alpha = 1: `x` (m×n, overwriting b) solves `op(A)·X = B`
/// (side 'L', A is m×m) or `X·op(A) = B` (side 'R', A is n×n), `op(A)` = A,
/// Aᵀ or Aᴴ, A triangular: only the `uplo` triangle is read, and with diag
/// 'U' not its diagonal (taken as ones). Substitution: each unknown is its
/// right-hand side minus the known terms in the order the unknowns were
/// found, divided by the diagonal. A zero diagonal divides by zero (no
/// check, as BLAS). `t` is p×p scratch for `op(A)`.
pub(crate) fn trsm<T: Scalar>(a: &[T], p: usize, x: &mut [T], m: usize, n: usize, f: TrsmFlags, t: &mut [T]) {
    // op(A) as a full triangular matrix: lower iff uplo 'L' and not
    // transposed, or uplo 'U' and transposed.
    let lower = f.lower == (f.trans == Trans::No);
    for i in 0..p {
        for j in 0..p {
            let inside = if lower { j <= i } else { j >= i };
            t[i * p + j] = if !inside {
                T::zero()
            } else {
                match f.trans {
                    Trans::No => a[i * p + j],
                    Trans::Transpose => a[j * p + i],
                    Trans::Adjoint => a[j * p + i].conj(),
                }
            };
        }
    }
    let diag = |t: &[T], i: usize| if f.unit_diagonal { T::one() } else { t[i * p + i] };
    if f.left_side {
        // Row i of X: (row i of B - Σ t[i][k]·row k of X) / t[i][i].
        let order: Vec<usize> = if lower { (0..m).collect() } else { (0..m).rev().collect() };
        for (step, &i) in order.iter().enumerate() {
            for &k in &order[..step] {
                let tik = t[i * p + k];
                for c in 0..n {
                    x[i * n + c] = x[i * n + c] - tik * x[k * n + c];
                }
            }
            if !f.unit_diagonal {
                let d = diag(t, i);
                for c in 0..n {
                    x[i * n + c] = x[i * n + c] / d;
                }
            }
            if crate::watch::tick((step * n + n) as u64) {
                break;
            }
        }
    } else {
        // Element j of each row of X: (b_j - Σ x_i·t[i][j]) / t[j][j].
        let order: Vec<usize> = if lower { (0..n).rev().collect() } else { (0..n).collect() };
        for r in 0..m {
            let row = &mut x[r * n..(r + 1) * n];
            for (step, &j) in order.iter().enumerate() {
                let mut s = row[j];
                for &i in &order[..step] {
                    s = s - row[i] * t[i * p + j];
                }
                row[j] = if f.unit_diagonal { s } else { s / diag(t, j) };
            }
            if crate::watch::tick((n * n) as u64 + 1) {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getrf_pivots_and_singular_info() {
        // [[1, 2], [3, 4]]: pivot row 2; L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]].
        let mut a = vec![1.0f64, 2.0, 3.0, 4.0];
        let mut ipiv = [0; 2];
        assert_eq!(getrf(&mut a, 2, 2, &mut ipiv), 0);
        assert_eq!(ipiv, [2, 2]);
        assert_eq!(a, vec![3.0, 4.0, 1.0 / 3.0, 2.0 - 4.0 / 3.0]);
        // A zero column: info = 1, and elimination goes on.
        let mut s = vec![0.0f32, 1.0, 0.0, 2.0];
        assert_eq!(getrf(&mut s, 2, 2, &mut ipiv), 1);
        assert_eq!(ipiv, [1, 2]);
        // Complex: |re| + |im| chooses row 2 (|1+1i|₁ = 2 > |1.5|).
        let mut c = vec![Complex::new(1.5f32, 0.0), Complex::new(1.0, 1.0)];
        assert_eq!(getrf(&mut c, 2, 1, &mut ipiv[..1]), 0);
        assert_eq!(ipiv[0], 2);
    }

    #[test]
    fn potrf_both_triangles_and_not_positive_definite() {
        // [[4, 2], [2, 5]] = L·Lᵀ with L = [[2, 0], [1, 2]]; the other triangle keeps 9.
        let mut w = vec![0.0f64; 4];
        let mut a = vec![4.0, 9.0, 2.0, 5.0];
        assert_eq!(potrf(&mut a, 2, true, &mut w), 0);
        assert_eq!(a, vec![2.0, 9.0, 1.0, 2.0]);
        let mut u = vec![4.0, 2.0, 9.0, 5.0];
        assert_eq!(potrf(&mut u, 2, false, &mut w), 0);
        assert_eq!(u, vec![2.0, 1.0, 9.0, 2.0]);
        // [[1, 2], [2, 1]]: the second reduced pivot is 1 - 4 = -3.
        let mut b = vec![1.0, 0.0, 2.0, 1.0];
        assert_eq!(potrf(&mut b, 2, true, &mut w), 2);
        assert_eq!(b, vec![1.0, 0.0, 2.0, -3.0]);
    }

    #[test]
    fn qr_reconstructs() {
        let (m, n) = (3, 2);
        let a0 = vec![
            Complex::new(1.0f64, 1.0),
            Complex::new(2.0, 0.0),
            Complex::new(0.0, -1.0),
            Complex::new(1.0, 0.5),
            Complex::new(3.0, 0.0),
            Complex::new(-1.0, 2.0),
        ];
        let mut a = a0.clone();
        let mut tau = vec![Complex::new(0.0, 0.0); 2];
        let mut w = vec![Complex::new(0.0, 0.0); n];
        geqrf(&mut a, m, n, &mut tau, &mut w);
        let r: Vec<_> = (0..n * n).map(|e| if e % n >= e / n { a[e] } else { Complex::new(0.0, 0.0) }).collect();
        let mut q = a.clone();
        orgqr(&mut q, m, n, &tau, &mut w);
        for i in 0..m {
            for j in 0..n {
                let s: Complex<f64> = (0..n).map(|k| q[i * n + k] * r[k * n + j]).sum();
                assert!((s - a0[i * n + j]).norm() < 1e-12, "{i} {j}: {s} vs {}", a0[i * n + j]);
            }
        }
        // R's diagonal: beta = -sign(re alpha)·norm.
        assert!(a[0].re < 0.0 && a[0].im == 0.0);
    }

    #[test]
    fn trsm_sides_and_transposes() {
        // A = [[2, 0], [1, 4]] (lower); the upper triangle holds junk that must not be read.
        let a = [2.0f64, f64::NAN, 1.0, 4.0];
        let mut t = [0.0; 4];
        let flags = |left_side, trans| TrsmFlags { left_side, lower: true, trans, unit_diagonal: false };
        // A·x = (2, 9) → x = (1, 2).
        let mut x = [2.0, 9.0];
        trsm(&a, 2, &mut x, 2, 1, flags(true, Trans::No), &mut t);
        assert_eq!(x, [1.0, 2.0]);
        // Aᵀ·x = (4, 8) → x = (1, 2).
        let mut x = [4.0, 8.0];
        trsm(&a, 2, &mut x, 2, 1, flags(true, Trans::Transpose), &mut t);
        assert_eq!(x, [1.0, 2.0]);
        // x·A = (4, 8) → x = (1, 2).
        let mut x = [4.0, 8.0];
        trsm(&a, 2, &mut x, 1, 2, flags(false, Trans::No), &mut t);
        assert_eq!(x, [1.0, 2.0]);
    }
}
