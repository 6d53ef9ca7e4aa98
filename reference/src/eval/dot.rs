//! Reference evaluation of Dot and DotGeneral (document §Dot, §DotGeneral),
//! and the sum of products that the convolutions share.
//!
//! How a sum of products is computed (docs/semantics-decisions.md): each
//! operand element is read as the number it is, every product is formed and
//! added to a running value that starts at 0 (the document's `value = 0;
//! value += input * kernel`), in row-major order of the summed index space,
//! in a wide number system chosen by the operand and result types:
//! - integers and pred (result integer or pred): `i64` with two's-complement
//!   wraparound, which equals wrapping multiply and add in the result type;
//! - real floating point (operand or result float): `f64`, so products of
//!   types up to f32 are exact and the sum is far more precise than the
//!   element type; complex (operand or result complex): `Complex<f64>`.
//!
//! Each result element is then converted once to the result element type:
//! rounded to nearest even for floats (directly, also for f16 and bf16),
//! wrapped for integers, saturated for a float sum with an integer result.

use half::{bf16, f16};
use num_complex::Complex;

use super::{array, array_shape, internal};
use crate::error::RunError;
use crate::ir::{DotDims, Op};
use crate::literal::{ArrayLiteral, Data, Literal};
use crate::numerics::convert::{self, Num, ToNum};
use crate::numerics::float::Float;
use crate::types::{ArrayShape, ElementType, Shape};

pub fn eval(op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    let [lhs, rhs] = operands else { return Err(internal("a dot takes two operands")) };
    let (lhs, rhs, out) = (array(lhs)?, array(rhs)?, array_shape(shape)?);
    let dimension_numbers = match op {
        Op::Dot { .. } => dot_dimension_numbers(lhs.rank()),
        Op::DotGeneral { dimension_numbers, .. } => dimension_numbers.clone(),
        _ => return Err(internal("not a dot op")),
    };
    Ok(dot_general(lhs, rhs, &dimension_numbers, out)?.into())
}

/// Dot as DotGeneral — document §Dot: "sum of products over the second
/// dimension of lhs (or the first if it has 1 dimension) and the first
/// dimension of rhs".
pub fn dot_dimension_numbers(lhs_rank: usize) -> DotDims {
    DotDims {
        lhs_contracting_dimensions: vec![lhs_rank as i64 - 1],
        rhs_contracting_dimensions: vec![0],
        lhs_batch_dimensions: vec![],
        rhs_batch_dimensions: vec![],
    }
}

/// The dimensions of an operand that are neither contracting nor batch
/// dimensions ("free" dimensions), in order.
pub fn free_dimensions<'a>(rank: usize, contracting: &'a [i64], batch: &'a [i64]) -> impl Iterator<Item = usize> + 'a {
    (0..rank).filter(move |&i| !contracting.contains(&(i as i64)) && !batch.contains(&(i as i64)))
}

/// DotGeneral — document §DotGeneral: the result index is (batch, lhs free,
/// rhs free); its element is the sum over every contracting index `c` of
/// `lhs[batch, lhs free, c] * rhs[batch, rhs free, c]`, each operand's
/// coordinates placed at its own dimension numbers.
pub fn dot_general(lhs: &ArrayLiteral, rhs: &ArrayLiteral, d: &DotDims, out: &ArrayShape) -> Result<ArrayLiteral, RunError> {
    sum_of_products(&dot_general_plan(lhs, rhs, d, out)?, lhs, rhs, out)
}

/// The sums DotGeneral computes, as a [`SumOfProducts`] that can also be
/// run in other number systems (the harness accumulates it exactly).
pub fn dot_general_plan(lhs: &ArrayLiteral, rhs: &ArrayLiteral, d: &DotDims, out: &ArrayShape) -> Result<impl SumOfProducts, RunError> {
    let (ls, rs) = (lhs.shape.strides(), rhs.shape.strides());
    let stride = |strides: &[usize], dim: i64| strides.get(dim as usize).copied().ok_or_else(|| internal("dot dimension out of range"));
    let size = |dim: i64| lhs.dims().get(dim as usize).copied().ok_or_else(|| internal("dot dimension out of range"));

    // Each result dimension moves through lhs, rhs or both: batch
    // dimensions through both, free dimensions through their own operand.
    let mut result = Walk::default();
    for (&l, &r) in d.lhs_batch_dimensions.iter().zip(&d.rhs_batch_dimensions) {
        result.push(size(l)?, stride(&ls, l)?, stride(&rs, r)?);
    }
    for i in free_dimensions(lhs.rank(), &d.lhs_contracting_dimensions, &d.lhs_batch_dimensions) {
        result.push(lhs.dims()[i], ls[i], 0);
    }
    for i in free_dimensions(rhs.rank(), &d.rhs_contracting_dimensions, &d.rhs_batch_dimensions) {
        result.push(rhs.dims()[i], 0, rs[i]);
    }
    // The contracting dimensions move through both, pairwise.
    let mut contracting = Walk::default();
    for (&l, &r) in d.lhs_contracting_dimensions.iter().zip(&d.rhs_contracting_dimensions) {
        contracting.push(size(l)?, stride(&ls, l)?, stride(&rs, r)?);
    }
    if result.sizes != out.dims {
        return Err(internal("dot result shape differs from the verified one"));
    }
    Ok(DotGeneral { result, contracting })
}

/// A multi-index space each of whose dimensions moves the linear position
/// in lhs and in rhs by a fixed distance: how DotGeneral walks the result
/// and the contracting dimensions without recomputing positions.
#[derive(Default)]
struct Walk {
    sizes: Vec<i64>,
    lhs_strides: Vec<usize>,
    rhs_strides: Vec<usize>,
}

impl Walk {
    fn push(&mut self, size: i64, lhs_stride: usize, rhs_stride: usize) {
        self.sizes.push(size);
        self.lhs_strides.push(lhs_stride);
        self.rhs_strides.push(rhs_stride);
    }

    fn is_empty(&self) -> bool {
        self.sizes.iter().any(|&s| s <= 0)
    }

    /// Steps `index` to its row-major successor, moving the two positions
    /// along; false (positions back at their start) after the last index.
    fn step(&self, index: &mut [i64], lhs: &mut usize, rhs: &mut usize) -> bool {
        for d in (0..index.len()).rev() {
            index[d] += 1;
            *lhs += self.lhs_strides[d];
            *rhs += self.rhs_strides[d];
            if index[d] < self.sizes[d] {
                return true;
            }
            *lhs -= self.lhs_strides[d] * self.sizes[d] as usize;
            *rhs -= self.rhs_strides[d] * self.sizes[d] as usize;
            index[d] = 0;
        }
        false
    }
}

struct DotGeneral {
    result: Walk,
    contracting: Walk,
}

impl SumOfProducts for DotGeneral {
    fn compute<A: Acc>(&self, lhs: &[A], rhs: &[A], out: &mut [A]) -> Result<(), RunError> {
        let mut result_index = vec![0i64; self.result.sizes.len()];
        let mut contracting_index = vec![0i64; self.contracting.sizes.len()];
        // Where the current result element's operand rows start.
        let (mut lhs_start, mut rhs_start) = (0usize, 0usize);
        // The innermost contracting dimension runs as a plain loop; the
        // others (usually none) step around it.
        let (inner, outer) = match self.contracting.sizes.len() {
            0 => ((1, 0, 0), 0),
            n => ((self.contracting.sizes[n - 1], self.contracting.lhs_strides[n - 1], self.contracting.rhs_strides[n - 1]), n - 1),
        };
        let (inner_size, inner_lhs, inner_rhs) = inner;
        let work = (self.contracting.sizes.iter().product::<i64>() as u64).max(1);
        for value in out.iter_mut() {
            if crate::watch::tick(work) {
                break;
            }
            let mut sum = A::zero();
            if !self.contracting.is_empty() {
                let (mut l, mut r) = (lhs_start, rhs_start);
                loop {
                    for _ in 0..inner_size {
                        sum.mul_add(at(lhs, l)?, at(rhs, r)?);
                        l += inner_lhs;
                        r += inner_rhs;
                    }
                    l -= inner_lhs * inner_size as usize;
                    r -= inner_rhs * inner_size as usize;
                    if !self.contracting.step(&mut contracting_index[..outer], &mut l, &mut r) {
                        break;
                    }
                }
            }
            *value = sum;
            self.result.step(&mut result_index, &mut lhs_start, &mut rhs_start);
        }
        Ok(())
    }
}

/// The element at a linear position; verified shapes keep it in range.
#[inline]
pub fn at<A>(v: &[A], position: usize) -> Result<&A, RunError> {
    v.get(position).ok_or_else(|| internal("operand position out of range"))
}

// ---------------------------------------------------------------------------
// The sum of products shared with the convolutions.

/// A number system in which sums of products are accumulated.
pub trait Acc: Clone {
    fn zero() -> Self;
    /// The element's value in this number system.
    fn from_num(n: Num) -> Self;
    /// `self += a * b`: the product rounded (or wrapped) once, then the sum.
    fn mul_add(&mut self, a: &Self, b: &Self);
    /// The sums as data of the matching wide type (s64, f64, c128).
    fn into_data(v: Vec<Self>) -> Data;
}

/// Integers and pred: two's-complement arithmetic modulo 2^64, whose low
/// bits are those of the same arithmetic in any narrower integer type.
impl Acc for i64 {
    fn zero() -> Self {
        0
    }
    fn from_num(n: Num) -> Self {
        match n {
            Num::Pred(b) => b as i64,
            Num::Int(i) => i as i64,
            Num::Real(x) | Num::Complex(x, _) => x as i64,
        }
    }
    fn mul_add(&mut self, a: &Self, b: &Self) {
        *self = self.wrapping_add(a.wrapping_mul(*b));
    }
    fn into_data(v: Vec<Self>) -> Data {
        Data::S64(v)
    }
}

impl Acc for f64 {
    fn zero() -> Self {
        0.0
    }
    fn from_num(n: Num) -> Self {
        match n {
            Num::Pred(b) => b as u8 as f64,
            Num::Int(i) => i as f64,
            Num::Real(x) | Num::Complex(x, _) => x,
        }
    }
    fn mul_add(&mut self, a: &Self, b: &Self) {
        *self += a * b;
    }
    fn into_data(v: Vec<Self>) -> Data {
        Data::F64(v)
    }
}

/// Complex products are the textbook `(ac - bd) + (ad + bc)i`, as Mul.
impl Acc for Complex<f64> {
    fn zero() -> Self {
        Complex { re: 0.0, im: 0.0 }
    }
    fn from_num(n: Num) -> Self {
        match n {
            Num::Complex(re, im) => Complex::new(re, im),
            real => Complex::new(f64::from_num(real), 0.0),
        }
    }
    fn mul_add(&mut self, a: &Self, b: &Self) {
        *self = Complex::new(self.re + (a.re * b.re - a.im * b.im), self.im + (a.re * b.im + a.im * b.re));
    }
    fn into_data(v: Vec<Self>) -> Data {
        Data::C128(v)
    }
}

/// An op that computes every result element as a sum of products of lhs
/// and rhs elements, written once for every [`Acc`].
pub trait SumOfProducts {
    /// Fills `out` (row-major over the result) from the operands' elements,
    /// already read into the number system `A`.
    fn compute<A: Acc>(&self, lhs: &[A], rhs: &[A], out: &mut [A]) -> Result<(), RunError>;
}

/// Runs `op` in the number system its operand and result types call for,
/// then converts every sum once to the result type.
pub fn sum_of_products(
    op: &impl SumOfProducts,
    lhs: &ArrayLiteral,
    rhs: &ArrayLiteral,
    out: &ArrayShape,
) -> Result<ArrayLiteral, RunError> {
    let (operand, result) = (lhs.element_type(), out.element_type);
    let sums = if operand.is_complex() || result.is_complex() {
        sums::<Complex<f64>>(op, lhs, rhs, out)?
    } else if operand.is_float() || result.is_float() {
        sums::<f64>(op, lhs, rhs, out)?
    } else {
        sums::<i64>(op, lhs, rhs, out)?
    };
    Ok(ArrayLiteral::with_shape(out.clone(), round_to(sums, result)))
}

fn sums<A: Acc>(op: &impl SumOfProducts, lhs: &ArrayLiteral, rhs: &ArrayLiteral, out: &ArrayShape) -> Result<Data, RunError> {
    Ok(A::into_data(sums_in::<A>(op, lhs, rhs, out)?))
}

/// Every sum of `op`, accumulated in the number system `A`.
pub fn sums_in<A: Acc>(op: &impl SumOfProducts, lhs: &ArrayLiteral, rhs: &ArrayLiteral, out: &ArrayShape) -> Result<Vec<A>, RunError> {
    let mut sums = vec![A::zero(); out.element_count()];
    op.compute(&read::<A>(lhs), &read::<A>(rhs), &mut sums)?;
    Ok(sums)
}

/// Every element of `a` as a number of `A`.
fn read<A: Acc>(a: &ArrayLiteral) -> Vec<A> {
    crate::with_data!(&a.data, v => v.iter().map(|x| A::from_num(x.to_num())).collect())
}

/// Converts the wide sums to the result type, rounding once: as
/// ConvertElementType, except that f16 and bf16 are rounded directly
/// (ConvertElementType rounds f64 → bf16 through f32, as XLA).
fn round_to(sums: Data, t: ElementType) -> Data {
    match (&sums, t) {
        (Data::F64(v), ElementType::F16) => Data::F16(v.iter().map(|&x| <f16 as Float>::from_f64(x)).collect()),
        (Data::F64(v), ElementType::BF16) => Data::BF16(v.iter().map(|&x| <bf16 as Float>::from_f64(x)).collect()),
        (Data::C128(v), ElementType::F16) => Data::F16(v.iter().map(|x| <f16 as Float>::from_f64(x.re)).collect()),
        (Data::C128(v), ElementType::BF16) => Data::BF16(v.iter().map(|x| <bf16 as Float>::from_f64(x.re)).collect()),
        _ if sums.element_type() == t => sums,
        _ => convert::convert(&sums, t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(rows: i64, cols: i64, f: impl Fn(i64, i64) -> f32) -> ArrayLiteral {
        let v = (0..rows * cols).map(|p| f(p / cols, p % cols)).collect();
        ArrayLiteral::from_vec(vec![rows, cols], v)
    }

    #[test]
    fn matmul_matches_naive_loop() {
        let a = matrix(3, 4, |i, j| (i * 4 + j) as f32 - 5.0);
        let b = matrix(4, 2, |i, j| (i + 2 * j) as f32);
        let out = ArrayShape::new(ElementType::F32, vec![3, 2]);
        let r = dot_general(&a, &b, &dot_dimension_numbers(2), &out).unwrap();
        let (av, bv) = (a.typed::<f32>().unwrap(), b.typed::<f32>().unwrap());
        let mut want = [0f32; 6];
        for i in 0..3 {
            for j in 0..2 {
                want[i * 2 + j] = (0..4).map(|k| av[i * 4 + k] * bv[k * 2 + j]).sum();
            }
        }
        assert_eq!(r.typed::<f32>().unwrap(), &want[..]);
    }

    #[test]
    fn two_contracting_dimensions_and_batch() {
        // lhs [2 batch, 2 contracting a, 3 contracting b], rhs [3 b, 2 batch, 2 a]
        let lhs = ArrayLiteral::from_vec(vec![2, 2, 3], (0..12i32).collect());
        let rhs = ArrayLiteral::from_vec(vec![3, 2, 2], (0..12i32).map(|x| x % 5).collect());
        let d = DotDims {
            lhs_contracting_dimensions: vec![1, 2],
            rhs_contracting_dimensions: vec![2, 0],
            lhs_batch_dimensions: vec![0],
            rhs_batch_dimensions: vec![1],
        };
        let out = ArrayShape::new(ElementType::S32, vec![2]);
        let r = dot_general(&lhs, &rhs, &d, &out).unwrap();
        let (l, rv) = (lhs.typed::<i32>().unwrap(), rhs.typed::<i32>().unwrap());
        let want: Vec<i32> = (0..2)
            .map(|b| {
                let mut s = 0;
                for a in 0..2 {
                    for c in 0..3 {
                        s += l[b * 6 + a * 3 + c] * rv[c * 4 + b * 2 + a];
                    }
                }
                s
            })
            .collect();
        assert_eq!(r.typed::<i32>().unwrap(), &want[..]);
    }

    #[test]
    fn f16_result_is_rounded_once() {
        // 1 + 2^-11 + 2^-30 lies above the midpoint 1 + 2^-11 of f16 neighbours.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-30);
        assert_eq!(round_to(Data::F64(vec![x]), ElementType::F16), Data::F16(vec![f16::from_bits(0x3c01)]));
    }

    /// `cargo test --release -p xlaref-reference -- --ignored --nocapture dot_speed`
    #[test]
    #[ignore]
    fn dot_speed() {
        let n = 256;
        let a = matrix(n, n, |i, j| ((i * 7 + j * 3) % 11) as f32);
        let b = matrix(n, n, |i, j| ((i * 5 + j) % 13) as f32);
        let out = ArrayShape::new(ElementType::F32, vec![n, n]);
        let start = std::time::Instant::now();
        let runs = 5;
        for _ in 0..runs {
            dot_general(&a, &b, &dot_dimension_numbers(2), &out).unwrap();
        }
        let seconds = start.elapsed().as_secs_f64() / runs as f64;
        let mflops = 2.0 * (n * n * n) as f64 / seconds / 1e6;
        eprintln!("256x256x256 f32 DotGeneral: {:.1} ms, {mflops:.0} MFLOP/s", seconds * 1e3);
    }
}
