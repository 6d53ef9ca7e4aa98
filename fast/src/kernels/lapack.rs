//! The fast engine's LAPACK custom-call targets (`lapack_?getrf_ffi`,
//! `?potrf`, `?geqrf`, `?orgqr`/`?ungqr`, `?trsm`), independent of the
//! reference's code: only the contract (names, flags, shapes:
//! `custom_call::lapack_abi`) is shared. Matrices of a batch run in
//! parallel; each is worked on row-major with contiguous inner loops.
//! Arithmetic is in the element type, as LAPACK's; the Cholesky column is
//! a dot product subtracted once and the Householder norm a one-pass
//! scaled sum of squares, so values may differ from the reference's by
//! rounding (tests/lapack_differential.rs bounds the difference).
//!
//! World dispatch (world.rs) runs these only when the registry still binds
//! the name to xlaref's built-in target.

use num_complex::Complex;
use rayon::prelude::*;
use std::ops::{Add, Div, Mul, Neg, Sub};
use xlaref_reference::custom_call::lapack_abi::{self as abi, Routine, Trans, TrsmFlags};
use xlaref_reference::literal::{ArrayLiteral, Literal, Stored};
use xlaref_reference::types::{ArrayShape, ElementType, Shape};
use xlaref_reference::watch::Clock;
use xlaref_reference::RunError;

type R<T> = Result<T, RunError>;

/// f32, f64, c64, c128 with the few operations the routines need.
trait El:
    Copy
    + Send
    + Sync
    + PartialEq
    + Stored
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    fn re(self) -> f64;
    fn im(self) -> f64;
    /// From f64 parts, rounded to the element type.
    fn make(re: f64, im: f64) -> Self;
    fn conj(self) -> Self;
    /// `|re|² + |im|²` in the element's precision.
    fn sq(self) -> Self;
    /// `|re| + |im|` in the element's precision (`cabs1`).
    fn abs1(self) -> Self;
    /// Divides by a positive real of the element's precision.
    fn div_re(self, d: Self) -> Self;
    fn gt(self, other: Self) -> bool;
}

macro_rules! el {
    ($t:ty) => {
        impl El for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            fn re(self) -> f64 {
                self as f64
            }
            fn im(self) -> f64 {
                0.0
            }
            fn make(re: f64, _: f64) -> $t {
                re as $t
            }
            fn conj(self) -> $t {
                self
            }
            fn sq(self) -> $t {
                self * self
            }
            fn abs1(self) -> $t {
                self.abs()
            }
            fn div_re(self, d: $t) -> $t {
                self / d
            }
            fn gt(self, other: $t) -> bool {
                self > other
            }
        }
        impl El for Complex<$t> {
            const ZERO: Self = Complex::new(0.0, 0.0);
            const ONE: Self = Complex::new(1.0, 0.0);
            fn re(self) -> f64 {
                self.re as f64
            }
            fn im(self) -> f64 {
                self.im as f64
            }
            fn make(re: f64, im: f64) -> Self {
                Complex::new(re as $t, im as $t)
            }
            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }
            fn sq(self) -> Self {
                Complex::new(self.re * self.re + self.im * self.im, 0.0)
            }
            fn abs1(self) -> Self {
                Complex::new(self.re.abs() + self.im.abs(), 0.0)
            }
            fn div_re(self, d: Self) -> Self {
                Complex::new(self.re / d.re, self.im / d.re)
            }
            fn gt(self, other: Self) -> bool {
                self.re > other.re
            }
        }
    };
}
el!(f32);
el!(f64);

fn fail(name: &str, what: impl std::fmt::Display) -> RunError {
    RunError::CustomCall(format!("target `{name}`: {what}"))
}

/// Runs the built-in LAPACK target `name`; `None` if `name` is not one.
pub fn eval(name: &str, x: &[&Literal], opaque: &str) -> Option<R<Literal>> {
    let (ty, routine) = abi::parse_name(name)?;
    let shapes: Vec<Shape> = x.iter().map(|l| l.shape()).collect();
    let refs: Vec<&Shape> = shapes.iter().collect();
    if let Err(e) = abi::result_shape(ty, routine, &refs, opaque) {
        return Some(Err(fail(name, e)));
    }
    let arrays: Vec<&ArrayLiteral> = x.iter().filter_map(|l| l.as_array()).collect();
    let out = match ty {
        ElementType::F32 => run::<f32>(routine, &arrays, opaque),
        ElementType::F64 => run::<f64>(routine, &arrays, opaque),
        ElementType::C64 => run::<Complex<f32>>(routine, &arrays, opaque),
        _ => run::<Complex<f64>>(routine, &arrays, opaque),
    };
    Some(out.map_err(|e| fail(name, e)))
}

/// (matrices, rows, cols) of `[batch..., rows, cols]`.
fn geometry(a: &ArrayLiteral) -> (usize, usize, usize) {
    let d = a.dims();
    let u = |x: &i64| usize::try_from(*x).unwrap_or(0);
    match d {
        [batch @ .., r, c] => (batch.iter().map(u).product(), u(r), u(c)),
        _ => (0, 0, 0),
    }
}

fn array<T: Stored>(like: &ArrayLiteral, ty: ElementType, tail: &[usize], v: Vec<T>) -> Literal {
    let d = like.dims();
    let mut dims = d[..d.len().saturating_sub(2)].to_vec();
    dims.extend(tail.iter().map(|&x| x as i64));
    ArrayLiteral::with_shape(ArrayShape::new(ty, dims), T::wrap(v)).into()
}

fn run<T: El>(routine: Routine, arrays: &[&ArrayLiteral], opaque: &str) -> Result<Literal, String> {
    let wrong = || "an operand's data does not match the target's element type".to_string();
    let a = *arrays.first().ok_or_else(wrong)?;
    let mut data = a.typed::<T>().ok_or_else(wrong)?.to_vec();
    let (count, m, n) = geometry(a);
    let k = m.min(n);
    let ty = a.element_type();
    let clock = xlaref_reference::watch::clock();
    let whole = |v: Vec<T>| -> Literal { ArrayLiteral::with_shape(a.shape.clone(), T::wrap(v)).into() };
    let size = (m * n).max(1);
    Ok(match routine {
        Routine::Getrf => {
            let mut ipiv = vec![0i32; count * k.max(1)];
            let mut info = vec![0i32; count];
            data.par_chunks_mut(size).zip(ipiv.par_chunks_mut(k.max(1))).zip(info.par_iter_mut()).for_each(|((a, p), info)| {
                if m * n > 0 {
                    *info = getrf(a, m, n, p, clock);
                }
            });
            ipiv.truncate(count * k);
            Literal::Tuple(vec![whole(data), array(a, ElementType::S32, &[k], ipiv), array(a, ElementType::S32, &[], info)])
        }
        Routine::Potrf => {
            let lower = abi::potrf_lower(opaque)?;
            let mut info = vec![0i32; count];
            data.par_chunks_mut(size).zip(info.par_iter_mut()).for_each_init(
                || vec![T::ZERO; n * n],
                |w, (a, info)| {
                    if n > 0 {
                        *info = potrf(a, n, lower, w, clock);
                    }
                },
            );
            Literal::Tuple(vec![whole(data), array(a, ElementType::S32, &[], info)])
        }
        Routine::Geqrf => {
            let mut tau = vec![T::ZERO; count * k.max(1)];
            data.par_chunks_mut(size).zip(tau.par_chunks_mut(k.max(1))).for_each_init(
                || vec![T::ZERO; n],
                |w, (a, t)| {
                    if m * n > 0 {
                        geqrf(a, m, n, t, w, clock);
                    }
                },
            );
            tau.truncate(count * k);
            Literal::Tuple(vec![whole(data), array(a, ty, &[k], tau)])
        }
        Routine::Orgqr => {
            let t = arrays.get(1).ok_or_else(wrong)?;
            let tau = t.typed::<T>().ok_or_else(wrong)?;
            let kk = t.dims().last().map_or(0, |&x| usize::try_from(x).unwrap_or(0));
            if kk == 0 {
                // Q = I's first n columns.
                for (e, v) in data.iter_mut().enumerate() {
                    let (r, c) = ((e / n.max(1)) % m.max(1), e % n.max(1));
                    *v = if r == c { T::ONE } else { T::ZERO };
                }
                return Ok(whole(data));
            }
            data.par_chunks_mut(size).zip(tau.par_chunks(kk)).for_each_init(
                || vec![T::ZERO; n],
                |w, (a, t)| {
                    if m * n > 0 {
                        orgqr(a, m, n, t, w, clock);
                    }
                },
            );
            whole(data)
        }
        Routine::Trsm => {
            let flags = abi::trsm_flags(opaque)?;
            let b = arrays.get(1).ok_or_else(wrong)?;
            let mut x = b.typed::<T>().ok_or_else(wrong)?.to_vec();
            let (_, bm, bn) = geometry(b);
            let p = m;
            x.par_chunks_mut((bm * bn).max(1)).zip(data.par_chunks((p * p).max(1))).for_each_init(
                || vec![T::ZERO; p * p],
                |t, (x, a)| {
                    if bm * bn > 0 && !clock.passed() {
                        trsm(a, p, x, bm, bn, flags, t);
                    }
                },
            );
            ArrayLiteral::with_shape(b.shape.clone(), T::wrap(x)).into()
        }
    })
}

/// LU with partial pivoting (first largest `|re| + |im|`), right-looking,
/// one trailing row at a time; returns `info`.
fn getrf<T: El>(a: &mut [T], m: usize, n: usize, ipiv: &mut [i32], clock: Clock) -> i32 {
    let mut info = 0;
    for j in 0..m.min(n) {
        if j % 32 == 31 && clock.passed() {
            break;
        }
        let (mut p, mut best) = (j, a[j * n + j].abs1());
        for (i, row) in a.chunks_exact(n).enumerate().skip(j + 1) {
            let v = row[j].abs1();
            if v.gt(best) {
                (p, best) = (i, v);
            }
        }
        ipiv[j] = p as i32 + 1;
        let (head, tail) = a.split_at_mut((j + 1) * n);
        let pivot_row = &mut head[j * n..];
        if p != j {
            pivot_row.swap_with_slice(&mut tail[(p - j - 1) * n..(p - j) * n]);
        }
        let pivot = pivot_row[j];
        let nonzero = pivot != T::ZERO;
        if !nonzero && info == 0 {
            info = j as i32 + 1;
        }
        let u = &pivot_row[j + 1..];
        for row in tail.chunks_exact_mut(n) {
            if nonzero {
                row[j] = row[j] / pivot;
            }
            let l = row[j];
            for (x, &y) in row[j + 1..].iter_mut().zip(u) {
                *x = *x - l * y;
            }
        }
    }
    info
}

/// Cholesky of one triangle (the contract: only it is read and written,
/// the other keeps its values; on failure the failing diagonal holds the
/// non-positive value, columns after it the input); returns `info`.
fn potrf<T: El>(a: &mut [T], n: usize, lower: bool, l: &mut [T], clock: Clock) -> i32 {
    // l: the lower factor being built, row-major (Uᴴ for 'U').
    for i in 0..n {
        for j in 0..=i {
            l[i * n + j] = if lower { a[i * n + j] } else { a[j * n + i].conj() };
        }
    }
    let mut info = 0;
    for j in 0..n {
        if j % 32 == 31 && clock.passed() {
            break;
        }
        let (row_j, below) = l[j * n..].split_at_mut(n);
        let dot = row_j[..j].iter().fold(T::ZERO, |s, &x| s + x.sq());
        let d = T::make(row_j[j].re(), 0.0) - dot;
        if !d.gt(T::ZERO) {
            row_j[j] = d;
            info = j as i32 + 1;
            break;
        }
        // The f64 square root of an f32 value rounds correctly to f32.
        let d = T::make(d.re().sqrt(), 0.0);
        row_j[j] = d;
        for row_i in below.chunks_exact_mut(n) {
            let s = row_i[..j].iter().zip(&row_j[..j]).fold(T::ZERO, |s, (&x, &y)| s + x * y.conj());
            row_i[j] = (row_i[j] - s).div_re(d);
        }
    }
    super::linalg::store_factor(l, n, lower, a, T::conj);
    info
}

/// `‖a[from..m][col]‖₂` as a one-pass scaled sum of squares (classic
/// `?nrm2`), in f64 then rounded: the element's precision with headroom.
fn norm<T: El>(a: &[T], n: usize, col: usize, from: usize, m: usize) -> f64 {
    let (mut scale, mut ssq) = (0.0f64, 1.0f64);
    for r in from..m {
        for v in [a[r * n + col].re(), a[r * n + col].im()] {
            if v != 0.0 {
                let x = v.abs();
                if scale < x {
                    ssq = 1.0 + ssq * (scale / x) * (scale / x);
                    scale = x;
                } else {
                    ssq += (x / scale) * (x / scale);
                }
            }
        }
    }
    scale * ssq.sqrt()
}

/// Householder QR (`?geqr2` semantics: beta = -sign(re alpha)·norm, tau =
/// 0 for a zero column under a real alpha).
fn geqrf<T: El>(a: &mut [T], m: usize, n: usize, tau: &mut [T], w: &mut [T], clock: Clock) {
    for i in 0..m.min(n) {
        if i % 32 == 31 && clock.passed() {
            break;
        }
        let alpha = a[i * n + i];
        let xnorm = T::make(norm(a, n, i, i + 1, m), 0.0).re();
        tau[i] = if xnorm == 0.0 && alpha.im() == 0.0 {
            T::ZERO
        } else {
            let full = T::make(alpha.re().hypot(alpha.im()).hypot(xnorm), 0.0).re();
            let beta = if alpha.re().is_sign_negative() { full } else { -full };
            let b = T::make(beta, 0.0);
            let scale = T::ONE / (alpha - b);
            for r in i + 1..m {
                a[r * n + i] = a[r * n + i] * scale;
            }
            a[i * n + i] = b;
            T::make((beta - alpha.re()) / beta, -alpha.im() / beta)
        };
        if i + 1 < n {
            reflect(a, n, i, m, tau[i].conj(), w);
        }
    }
}

/// `a[i..m][i+1..n] -= t·v·(vᴴ·a[i..m][i+1..n])`, v = (1, a[i+1..m][i]).
fn reflect<T: El>(a: &mut [T], n: usize, i: usize, m: usize, t: T, w: &mut [T]) {
    if t == T::ZERO {
        return;
    }
    let w = &mut w[i + 1..n];
    w.copy_from_slice(&a[i * n + i + 1..i * n + n]);
    for r in i + 1..m {
        let row = &a[r * n..r * n + n];
        let v = row[i].conj();
        for (s, &x) in w.iter_mut().zip(&row[i + 1..]) {
            *s = *s + v * x;
        }
    }
    for r in i..m {
        let row = &mut a[r * n..r * n + n];
        let tv = if r == i { t } else { t * row[i] };
        for (x, &s) in row[i + 1..].iter_mut().zip(w.iter()) {
            *x = *x - tv * s;
        }
    }
}

/// The first n columns of H(1)···H(k) (`?org2r` semantics).
fn orgqr<T: El>(a: &mut [T], m: usize, n: usize, tau: &[T], w: &mut [T], clock: Clock) {
    let k = tau.len();
    for (r, row) in a.chunks_exact_mut(n).enumerate() {
        for (c, x) in row.iter_mut().enumerate().skip(k) {
            *x = if r == c { T::ONE } else { T::ZERO };
        }
    }
    for i in (0..k).rev() {
        if i % 32 == 31 && clock.passed() {
            break;
        }
        if i + 1 < n {
            reflect(a, n, i, m, tau[i], w);
        }
        let minus = -tau[i];
        for r in 0..m {
            let x = &mut a[r * n + i];
            *x = match r.cmp(&i) {
                std::cmp::Ordering::Less => T::ZERO,
                std::cmp::Ordering::Equal => T::ONE - tau[i],
                std::cmp::Ordering::Greater => minus * *x,
            };
        }
    }
}

/// Triangular solve with several right-hand sides (alpha = 1).
fn trsm<T: El>(a: &[T], p: usize, x: &mut [T], m: usize, n: usize, f: TrsmFlags, t: &mut [T]) {
    // t[i][j] = op(A)[i][j] on op(A)'s triangle, zero elsewhere.
    let lower = f.lower == (f.trans == Trans::No);
    for i in 0..p {
        for j in 0..p {
            let keep = if lower { j <= i } else { i <= j };
            t[i * p + j] = match (keep, f.trans) {
                (false, _) => T::ZERO,
                (true, Trans::No) => a[i * p + j],
                (true, Trans::Transpose) => a[j * p + i],
                (true, Trans::Adjoint) => a[j * p + i].conj(),
            };
        }
    }
    let unit = f.unit_diagonal;
    if f.left_side {
        // Forward (lower) or backward (upper) over rows of X; each solved
        // row is subtracted from the rows still to solve.
        let order: Vec<usize> = if lower { (0..m).collect() } else { (0..m).rev().collect() };
        let mut row_k = vec![T::ZERO; n];
        for (s, &k) in order.iter().enumerate() {
            let row = &mut x[k * n..k * n + n];
            if !unit {
                let d = t[k * p + k];
                for v in row.iter_mut() {
                    *v = *v / d;
                }
            }
            row_k.copy_from_slice(row);
            for &i in &order[s + 1..] {
                let c = t[i * p + k];
                for (v, &y) in x[i * n..i * n + n].iter_mut().zip(&row_k) {
                    *v = *v - c * y;
                }
            }
        }
    } else {
        let order: Vec<usize> = if lower { (0..n).rev().collect() } else { (0..n).collect() };
        for row in x.chunks_exact_mut(n) {
            for (s, &j) in order.iter().enumerate() {
                let mut v = row[j];
                for &i in &order[..s] {
                    v = v - row[i] * t[i * p + j];
                }
                row[j] = if unit { v } else { v / t[j * p + j] };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_f64(name: &str, x: &[Literal], opaque: &str) -> Vec<Literal> {
        let refs: Vec<&Literal> = x.iter().collect();
        match eval(name, &refs, opaque).expect("a LAPACK name").expect("runs") {
            Literal::Tuple(t) => t,
            v => vec![v],
        }
    }

    #[test]
    fn lapack_getrf_potrf_trsm_by_hand() {
        let a: Literal = ArrayLiteral::from_vec(vec![2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).into();
        let out = run_f64("lapack_dgetrf_ffi", &[a], "");
        assert_eq!(out[0], ArrayLiteral::from_vec(vec![2, 2], vec![3.0f64, 4.0, 1.0 / 3.0, 2.0 - 4.0 / 3.0]).into());
        assert_eq!(out[1], ArrayLiteral::from_vec(vec![2], vec![2i32, 2]).into());
        assert_eq!(out[2], ArrayLiteral::scalar(0i32).into());
        // Not positive definite at 2: the diagonal holds 1 - 4 = -3, the other triangle is kept.
        let b: Literal = ArrayLiteral::from_vec(vec![2, 2], vec![1.0f64, 7.0, 2.0, 1.0]).into();
        let out = run_f64("lapack_dpotrf_ffi", &[b], "{uplo = 76 : ui8}");
        assert_eq!(out[0], ArrayLiteral::from_vec(vec![2, 2], vec![1.0f64, 7.0, 2.0, -3.0]).into());
        assert_eq!(out[1], ArrayLiteral::scalar(2i32).into());
        // Upper, unit diagonal: [[1, 2], [_, 1]]·x = (5, 2) → x = (1, 2).
        let t: Literal = ArrayLiteral::from_vec(vec![2, 2], vec![f64::NAN, 2.0, f64::NAN, f64::NAN]).into();
        let rhs: Literal = ArrayLiteral::from_vec(vec![2, 1], vec![5.0f64, 2.0]).into();
        let out = run_f64("lapack_dtrsm_ffi", &[t, rhs], "{diag = 85, uplo = 85}");
        assert_eq!(out[0], ArrayLiteral::from_vec(vec![2, 1], vec![1.0f64, 2.0]).into());
        // Wrong shapes are an error, not a panic.
        let v: Literal = ArrayLiteral::from_vec(vec![2], vec![1.0f64, 2.0]).into();
        assert!(eval("lapack_dgetrf_ffi", &[&v], "").expect("a LAPACK name").is_err());
        assert!(eval("xlaref.add", &[&v], "").is_none());
    }
}
