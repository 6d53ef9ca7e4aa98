//! Reference evaluation of Fft (rules in `verify/fft.rs`).
//!
//! The transforms are the discrete Fourier transform by its definition (no
//! fast algorithm), computed in `Complex<f64>` and rounded once to the
//! result type:
//!
//! - forward: `X[k] = Σ_n x[n] · e^(-2πi·k·n/N)`;
//! - inverse: `x[n] = (1/N) · Σ_k X[k] · e^(+2πi·k·n/N)` (the `1/N` per
//!   transformed axis, as XLA and NumPy).
//!
//! The angle `k·n/N` is reduced exactly in integers before any
//! trigonometry, so multiples of a quarter turn are exact (`±1`, `±i`).

use std::f64::consts::{FRAC_1_SQRT_2, FRAC_PI_2};

use num_complex::Complex;

use super::linalg::{complex_data, complex_values, real_data};
use super::{array, internal};
use crate::error::RunError;
use crate::ir::{FftType, Op};
use crate::literal::{ArrayLiteral, Literal};
use crate::types::Shape;

type C = Complex<f64>;

pub fn eval(op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    let Op::Fft { fft_type, fft_length } = op else {
        return Err(internal("not an Fft op"));
    };
    let operand = array(operands.first().ok_or_else(|| internal("Fft without operand"))?)?;
    let out = shape.as_array().ok_or_else(|| internal("Fft result is not an array"))?;
    let values = complex_values(operand).ok_or_else(|| internal("Fft operand is not floating-point or complex"))?;
    let result = fft(*fft_type, fft_length, values, operand.dims())?;
    let data = match fft_type {
        FftType::Irfft => real_data(out.element_type, &result.iter().map(|z| z.re).collect::<Vec<_>>()),
        _ => complex_data(out.element_type, &result),
    }
    .ok_or_else(|| internal("Fft result type"))?;
    if data.len() != out.element_count() {
        return Err(internal("Fft result size"));
    }
    Ok(ArrayLiteral::with_shape(out.clone(), data).into())
}

/// `e^(2πi·m/n)` for `0 <= m < n`, with the angle reduced in integers: the
/// quarter turn `q` and the remainder `r` of `4m = q·n + r` give the angle
/// `q·π/2 + (π/2)·r/n`, and the remainder's angle is at most π/4 (its
/// complement is used above that), where sin and cos are most accurate;
/// an eighth turn is `sqrt(1/2)` in both parts.
fn unit_root(m: usize, n: usize) -> C {
    let four_m = 4 * (m as u128);
    let n128 = n as u128;
    let quarter = (four_m / n128) % 4;
    let rem = four_m % n128;
    let (cos, sin) = if 2 * rem == n128 {
        // An eighth turn: cos = sin = sqrt(1/2), correctly rounded.
        (FRAC_1_SQRT_2, FRAC_1_SQRT_2)
    } else if 2 * rem < n128 {
        let t = FRAC_PI_2 * (rem as f64 / n as f64);
        (libm::cos(t), libm::sin(t))
    } else {
        let t = FRAC_PI_2 * ((n128 - rem) as f64 / n as f64);
        (libm::sin(t), libm::cos(t))
    };
    // Rotate by the quarter turns: multiplying by i maps (c, s) to (-s, c).
    match quarter {
        0 => C::new(cos, sin),
        1 => C::new(-sin, cos),
        2 => C::new(-cos, -sin),
        _ => C::new(sin, -cos),
    }
}

/// The 1-D DFT of every line of `data` (dimensions `dims`) along `axis`, in
/// place; `inverse` flips the sign of the exponent and divides by `N`.
fn dft_along(data: &mut [C], dims: &[i64], axis: usize, inverse: bool) {
    let n = dims[axis] as usize;
    let total: usize = dims.iter().map(|&d| d as usize).product();
    if n == 0 || total == 0 {
        return;
    }
    let stride: usize = dims[axis + 1..].iter().map(|&d| d as usize).product();
    let outer = total / (n * stride);
    // roots[m] = e^(∓2πi·m/N); X[k] uses roots[(k·n) mod N].
    let roots: Vec<C> = (0..n).map(|m| if inverse { unit_root(m, n) } else { unit_root(m, n).conj() }).collect();
    let mut line = vec![C::new(0.0, 0.0); n];
    for o in 0..outer {
        for i in 0..stride {
            let base = o * n * stride + i;
            for (p, v) in line.iter_mut().enumerate() {
                *v = data[base + p * stride];
            }
            for k in 0..n {
                if crate::watch::tick(n as u64) {
                    return;
                }
                let mut sum = C::new(0.0, 0.0);
                for (p, &x) in line.iter().enumerate() {
                    let w = roots[(k * p) % n];
                    sum += C::new(x.re * w.re - x.im * w.im, x.re * w.im + x.im * w.re);
                }
                data[base + k * stride] = if inverse { sum / n as f64 } else { sum };
            }
        }
    }
}

/// Keeps the first `keep` entries of the innermost axis (`dims` updated).
fn truncate_innermost(data: &[C], dims: &mut [i64], keep: usize) -> Vec<C> {
    let Some(last) = dims.last_mut() else { return data.to_vec() };
    let n = *last as usize;
    *last = keep as i64;
    if n == 0 {
        return Vec::new();
    }
    data.chunks_exact(n).flat_map(|line| line[..keep.min(n)].iter().copied()).collect()
}

/// IRFFT's Hermitian extension of the innermost axis: from the entries
/// `X[0 ..= N/2]`, `X[k] = conj(X[N - k])` for `k > N/2` (`dims` updated).
fn hermitian_extension(data: &[C], dims: &mut [i64], n: usize) -> Vec<C> {
    let Some(last) = dims.last_mut() else { return data.to_vec() };
    let h = *last as usize;
    *last = n as i64;
    if h == 0 || n == 0 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(data.len() / h * n);
    for line in data.chunks_exact(h) {
        for k in 0..n {
            let z = if k < h { line[k] } else { line[n - k].conj() };
            out.push(z);
        }
    }
    out
}

/// Fft — document §Fft. FFT and IFFT transform the `fft_length.len()`
/// innermost axes. RFFT transforms the innermost axis first and keeps its
/// entries up to the Nyquist frequency (`N/2 + 1`), then the other axes;
/// IRFFT transforms the other axes first, then the innermost one from its
/// Hermitian extension, keeping the real part (so the imaginary parts of the
/// zero-frequency and, for even `N`, the Nyquist entries are ignored, as XLA
/// CPU). Multidimensional transforms are cascades of 1-D ones.
pub fn fft(fft_type: FftType, fft_length: &[i64], mut data: Vec<C>, dims: &[i64]) -> Result<Vec<C>, RunError> {
    let rank = dims.len();
    let fft_rank = fft_length.len();
    if fft_rank == 0 || fft_rank > rank {
        return Err(internal("fft_length does not fit the operand"));
    }
    let first = rank - fft_rank;
    let innermost = rank - 1;
    let mut dims = dims.to_vec();
    match fft_type {
        FftType::Fft | FftType::Ifft => {
            for axis in first..rank {
                dft_along(&mut data, &dims, axis, fft_type == FftType::Ifft);
            }
        }
        FftType::Rfft => {
            let n = dims[innermost] as usize;
            dft_along(&mut data, &dims, innermost, false);
            data = truncate_innermost(&data, &mut dims, if n == 0 { 0 } else { n / 2 + 1 });
            for axis in first..innermost {
                dft_along(&mut data, &dims, axis, false);
            }
        }
        FftType::Irfft => {
            for axis in first..innermost {
                dft_along(&mut data, &dims, axis, true);
            }
            let n = usize::try_from(fft_length[fft_rank - 1]).map_err(|_| internal("negative fft_length"))?;
            data = hermitian_extension(&data, &mut dims, n);
            dft_along(&mut data, &dims, innermost, true);
        }
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarter_turns_are_exact() {
        assert_eq!(unit_root(0, 4), C::new(1.0, 0.0));
        assert_eq!(unit_root(1, 4), C::new(0.0, 1.0));
        assert_eq!(unit_root(2, 4), C::new(-1.0, 0.0));
        assert_eq!(unit_root(3, 4), C::new(0.0, -1.0));
        assert_eq!(unit_root(3, 12), C::new(0.0, 1.0));
        let e = unit_root(1, 8);
        assert_eq!(e.re, e.im);
        let z = unit_root(1, 3);
        assert!((z.re + 0.5).abs() < 2e-16 && (z.im - 0.75f64.sqrt()).abs() < 2e-16);
    }

    #[test]
    fn dft_of_ramp() {
        let x: Vec<C> = (0..4).map(|n| C::new(n as f64, 0.0)).collect();
        let y = fft(FftType::Fft, &[4], x.clone(), &[4]).unwrap();
        assert_eq!(y, vec![C::new(6.0, 0.0), C::new(-2.0, 2.0), C::new(-2.0, 0.0), C::new(-2.0, -2.0)]);
        let back = fft(FftType::Ifft, &[4], y, &[4]).unwrap();
        assert_eq!(back, x);
    }
}
