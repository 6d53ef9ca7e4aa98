//! The tolerance model (docs/tolerance.md): how far an engine's value of one
//! instruction may honestly be from the reference's, given the same operands.
//!
//! - Bit-exact: data movement, integer arithmetic, comparisons, conversions,
//!   and the correctly rounded IEEE operations (+ - * / sqrt, and every
//!   reduction whose computation is order-free: max, min, and, or, ...).
//! - A stated ulp bound for the transcendental functions, per element type.
//! - Sums (Reduce and ReduceWindow with an add computation, Dot, DotGeneral,
//!   Conv): the exact result, computed with big integers over exactly the
//!   reference's terms, and a bound `γ(n)·Σ|terms| + ulp(exact)` with `n` the
//!   number of terms and `γ(n) = n·u / (1 - n·u)` for the unit roundoff `u`
//!   of the accumulation type — any association is accepted, a wrong or
//!   missing term is not.
//! - Heuristic relative bounds for Fft, BatchNormInference, Cholesky and
//!   TriangularSolve (their error depends on conditioning; documented as
//!   heuristic); BatchNormTraining and BatchNormGrad per tuple part, their
//!   statistics as per-feature sums (tolerance_bn.rs).
//! - Statistical acceptance for RngUniform and RngNormal: the shape, and
//!   RngUniform's range `[a, b)`, are checked here; tests/rng_stats.rs
//!   checks the distributions.

use num_complex::Complex;
use xlaref_reference::ir::{BinaryOp, Computation, FftType, Op, UnaryOp};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::convert::convert;
use xlaref_reference::terms::{conv_plan, dot_dimension_numbers, dot_general_plan, reduction_groups, sums_in, window_groups};
use xlaref_reference::types::{ArrayShape, ElementType};
use xlaref_reference::verify::VerifiedModule;

use super::compare::{compare, Mismatch, Tolerance};
use super::exact::{ExactAcc, ExactSum};

/// How far an engine's value may be from the reference's.
#[derive(Clone, Debug)]
pub enum Allowance {
    /// Bit for bit (any NaN matches any NaN).
    Exact,
    /// Within this many units in the last place, per real component.
    Ulps(f64),
    /// Per real component (complex: re then im), row-major.
    Intervals(Vec<Interval>),
    /// Same shape and type; the values are judged statistically elsewhere.
    Statistical,
    /// RngUniform with finite `a < b`: same shape and type, and every
    /// element in `[a, b)` (integers, pred) or `[a, b]` (floats, whose
    /// rounding may reach `b`), whatever the random stream. Needs no
    /// statistics, so it holds for one element as for a million.
    InRange { low: f64, high: f64, closed: bool },
    /// A tuple result: one allowance per element of the tuple.
    Parts(Vec<Allowance>),
}

/// The values an element may take: `center ± radius`, or exactly the
/// non-finite `special` when the exact result is not a finite number.
#[derive(Clone, Copy, Debug)]
pub struct Interval {
    pub center: f64,
    pub radius: f64,
    pub special: Option<f64>,
    /// A partial sum may exceed the accumulation type's range (Σ|terms| does),
    /// so an overflow to infinity is honest.
    pub may_overflow: bool,
}

/// Precision of a floating-point element type: significand digits `p`
/// (unit roundoff `2^-p`), smallest normal exponent, largest finite value.
#[derive(Clone, Copy, Debug)]
pub struct Precision {
    pub digits: i32,
    pub min_exponent: i32,
    pub max_finite: f64,
}

impl Precision {
    /// The precision of a real or complex float type (complex: its parts).
    pub fn of(t: ElementType) -> Option<Precision> {
        use ElementType as E;
        let (digits, min_exponent, max_finite) = match t {
            E::F16 => (11, -14, 65504.0),
            E::BF16 => (8, -126, 3.3895313892515355e38),
            E::F32 | E::C64 => (24, -126, f32::MAX as f64),
            E::F64 | E::C128 => (53, -1022, f64::MAX),
            E::F8E4M3FN => (4, -6, 448.0),
            E::F8E5M2 => (3, -14, 57344.0),
            _ => return None,
        };
        Some(Precision { digits, min_exponent, max_finite })
    }

    pub fn unit_roundoff(&self) -> f64 {
        (-(self.digits as f64)).exp2()
    }

    /// `γ(n) = n·u / (1 - n·u)`: the relative error bound of a sum of `n`
    /// terms in any association; infinite once `n·u >= 1`.
    pub fn gamma(&self, n: u64) -> f64 {
        let nu = n as f64 * self.unit_roundoff();
        if nu >= 1.0 {
            f64::INFINITY
        } else {
            nu / (1.0 - nu)
        }
    }

    /// A bound on the absolute error `n` products that underflow may take
    /// on top of the relative bound (`u` holds only for results in the
    /// normal range): each is off by at most half the smallest subnormal.
    /// Counted in whole subnormals, `⌈n/2⌉`, because f64's half subnormal,
    /// 2^-1075, is not an f64: as a factor it would round to zero.
    pub fn underflow(&self, n: u64) -> f64 {
        // ulp(0): the smallest subnormal.
        n.div_ceil(2) as f64 * self.ulp(0.0)
    }

    /// The spacing of the type's values around `x`.
    pub fn ulp(&self, x: f64) -> f64 {
        let exponent = if x == 0.0 || !x.is_finite() { self.min_exponent } else { (x.abs().log2().floor() as i32).max(self.min_exponent) };
        ((exponent - self.digits + 1) as f64).exp2()
    }
}

/// The allowance for instruction `instr` of computation `comp`, given its
/// operands and the reference's result.
pub fn allowance(module: &VerifiedModule, comp: usize, instr: usize, operands: &[&Literal], reference: &Literal) -> Allowance {
    let c = module.computation(comp);
    let op = &c.instructions[instr].op;
    // Random values of every type (pred and integers too) are judged
    // statistically, before the exact rule for integer results applies.
    if matches!(op, Op::RngUniform { .. }) {
        return uniform_range(operands).unwrap_or(Allowance::Statistical);
    }
    if matches!(op, Op::RngNormal { .. }) {
        return Allowance::Statistical;
    }
    if let (Op::BatchNormTraining { .. } | Op::BatchNormGrad { .. }, Some(first)) = (op, operands.first().and_then(|o| o.as_array())) {
        if let Some(parts) =
            Precision::of(first.element_type()).and_then(|p| super::tolerance_bn::batch_norm_parts(op, p, operands, reference))
        {
            return parts;
        }
    }
    if let Op::CustomCall { target_name, .. } = op {
        if let Some(a) = lapack(target_name, operands, reference) {
            return a;
        }
    }
    let Some(result) = reference.as_array() else { return Allowance::Exact };
    let Some(precision) = Precision::of(result.element_type()) else {
        // Integer and pred results are exact everywhere.
        return Allowance::Exact;
    };
    let arrays: Option<Vec<&ArrayLiteral>> = operands.iter().map(|o| o.as_array()).collect();
    let arrays = arrays.unwrap_or_default();
    let complex = result.element_type().is_complex();
    match op {
        // |z| of a complex z is real: whether it is transcendental (a hypot,
        // not a correctly rounded IEEE operation) depends on the operand.
        Op::Unary(u) if transcendental(*u, arrays.first().is_some_and(|a| a.element_type().is_complex())) => {
            ulps_or_complex(precision, result, complex)
        }
        // Complex Pow's special values are exp(y·log x)'s, which the document
        // leaves open: any non-finite part is accepted where the
        // reference's is non-finite.
        Op::Binary { op: BinaryOp::Pow, .. } if complex => lenient_specials(complex_pow(precision, result, &arrays)),
        Op::Binary { op: BinaryOp::Pow | BinaryOp::Atan2, .. } => ulps_or_complex(precision, result, complex),
        // CHLO special functions: different algorithms in the two engines.
        Op::Unary(u) if special_function(*u) => special(precision, result),
        Op::Binary { op: BinaryOp::Polygamma | BinaryOp::Zeta, .. } => special(precision, result),
        // Which parts of a complex product or quotient with infinite parts
        // turn NaN depends on the formula (textbook, Smith's): lenient too.
        Op::Binary { op: BinaryOp::Mul | BinaryOp::Div, .. } if complex => lenient_specials(complex_relative(precision, result)),
        Op::Dot { .. } | Op::DotGeneral { .. } | Op::Conv(_) => sum_of_products(op, &arrays, result).unwrap_or(Allowance::Exact),
        Op::Reduce { computation, dimensions } if arrays.len() == 2 && is_add(module.computation(*computation)) => {
            grouped_sum(&arrays, result, precision, |group| reduction_groups(&arrays[0].shape, dimensions, &result.shape, group))
        }
        Op::ReduceWindow { computation, window } if arrays.len() == 2 && is_add(module.computation(*computation)) => {
            grouped_sum(&arrays, result, precision, |group| window_groups(&arrays[0].shape, window, &result.shape, group))
        }
        Op::Map { computation, .. } if !computation_is_exact(module, *computation) => ulps_or_complex(precision, result, complex),
        // A Call is its body: with a transcendental op inside, that op's
        // allowance (as for Map). The fast engine may also inline it.
        Op::Call { computation } if !computation_is_exact(module, *computation) => ulps_or_complex(precision, result, complex),
        // Which parts of an FFT of non-finite values are NaN rather than
        // infinite depends on the algorithm's exact multiplications by 0 and 1.
        Op::Fft { fft_type, fft_length } => {
            lenient_specials(fft(precision, &arrays, result, fft_length, matches!(fft_type, FftType::Ifft | FftType::Irfft)))
        }
        Op::BatchNormTraining { .. } | Op::BatchNormInference { .. } | Op::BatchNormGrad { .. } => heuristic(precision, result, operands),
        // Which non-finite value a factorization or substitution of
        // non-finite data gives (inf or NaN, and its sign) depends on the
        // order of its operations: lenient, as complex Mul and Div.
        Op::Cholesky { .. } | Op::TriangularSolve { .. } => linalg(precision, result, operands),
        _ => Allowance::Exact,
    }
}

/// RngUniform's range when its parameters are finite with `a < b` (the
/// document: "a uniform distribution over the interval [a,b)"); for
/// `b <= a` the document leaves the result open.
fn uniform_range(operands: &[&Literal]) -> Option<Allowance> {
    let [a, b] = operands else { return None };
    let (a, b) = (a.as_array()?, b.as_array()?);
    let (low, high) = (*real_values(a)?.first()?, *real_values(b)?.first()?);
    let wide_int = matches!(a.element_type(), ElementType::S64 | ElementType::U64);
    // 64-bit integers beyond 2^53 do not survive f64: no range then.
    let exact = !wide_int || (low.abs() < 9.0e15 && high.abs() < 9.0e15);
    (low.is_finite() && high.is_finite() && low < high && exact).then_some(Allowance::InRange {
        low,
        high,
        closed: a.element_type().is_float(),
    })
}

/// Every element of a pred, integer or real float array as an f64.
fn real_values(a: &ArrayLiteral) -> Option<Vec<f64>> {
    if a.element_type().is_complex() {
        return None;
    }
    let t = if a.element_type().is_pred() { ElementType::U8 } else { a.element_type() };
    let data = if t == a.element_type() { convert(&a.data, ElementType::F64) } else { convert(&convert(&a.data, t), ElementType::F64) };
    match data {
        Data::F64(v) => Some(v),
        _ => None,
    }
}

/// Functions whose results are not correctly rounded in general.
fn transcendental(u: UnaryOp, complex: bool) -> bool {
    use UnaryOp as U;
    match u {
        U::Cbrt | U::Cos | U::Erf | U::Exp | U::Expm1 | U::Log | U::Log1p | U::Logistic | U::Rsqrt | U::Sin | U::Tan | U::Tanh => true,
        // CHLO extension ops that are libm functions (real) or accurate
        // closed forms (complex) in both engines.
        U::Sinh | U::Cosh | U::Asin | U::Acos | U::Atan | U::Asinh | U::Acosh | U::Atanh | U::Erfc => true,
        // |z| and sqrt(z) of complex numbers go through hypot and friends.
        U::Abs | U::Sqrt | U::Sign => complex,
        _ => false,
    }
}

/// The CHLO special functions whose engines use different algorithms
/// (the reference XLA's Lanczos, Giles, Cephes and Euler–Maclaurin forms,
/// the fast engine musl's lgamma, series and Newton steps).
fn special_function(u: UnaryOp) -> bool {
    matches!(u, UnaryOp::ErfInv | UnaryOp::Lgamma | UnaryOp::Digamma | UnaryOp::BesselI1e)
}

/// Heuristic allowance of the special functions (docs/tolerance.md): both
/// engines evaluate in f64 with errors of a few dozen f64 ulps at most, so
/// `2 ulps` of types up to f32 and `256 ulps` of f64, plus an absolute
/// `2^-40` for results near a zero of the function (lgamma near 1, 2 and
/// its negative roots, digamma near its roots), where f64 evaluation has
/// an absolute, not a relative, error of a few `u·|terms|`. Non-finite
/// results must match; an overflow is honest where the bound reaches
/// past the largest finite value.
fn special(p: Precision, result: &ArrayLiteral) -> Allowance {
    let Some(values) = complexes(result) else { return Allowance::Exact };
    let ulps = if p.digits > 24 { 256.0 } else { 2.0 };
    let intervals = values
        .iter()
        .map(|z| Interval {
            center: z.re,
            radius: ulps * p.ulp(z.re) + (-40f64).exp2(),
            special: (!z.re.is_finite()).then_some(z.re),
            may_overflow: false,
        })
        .collect();
    Allowance::Intervals(intervals)
}

/// The ulp bound for transcendental results: 1 ulp for types up to f32
/// (both engines compute in f64 and round once; they can differ only where
/// the f64 values straddle a rounding boundary), 4 ulps for f64.
fn ulps_or_complex(p: Precision, result: &ArrayLiteral, complex: bool) -> Allowance {
    if complex {
        return complex_relative(p, result);
    }
    Allowance::Ulps(if p.digits > 24 { 4.0 } else { 1.0 })
}

/// Complex functions: each part within `8·u·|z|` (+ 1 ulp) of the
/// reference's, since a part much smaller than the modulus carries the
/// modulus' absolute error.
fn complex_relative(p: Precision, result: &ArrayLiteral) -> Allowance {
    complex_relative_by(p, result, |_| 8.0)
}

/// As [`complex_relative`], with element `i`'s `8` replaced by `factor(i)`.
fn complex_relative_by(p: Precision, result: &ArrayLiteral, factor: impl Fn(usize) -> f64) -> Allowance {
    let Some(values) = complexes(result) else { return Allowance::Exact };
    let u = p.unit_roundoff();
    let intervals = values
        .iter()
        .enumerate()
        .flat_map(|(i, z)| {
            // An infinite modulus (a part overflowed) still bounds the
            // finite part: the exact modulus is at least the type's largest
            // value, so an algorithm accurate to `factor·u·|z|` may be off by
            // `factor·u·max` there (a scaled Smith's division and __divdc3's
            // formula differ by a few ulps in the finite part of an
            // overflowing quotient). A NaN modulus bounds nothing.
            let norm = z.norm();
            let modulus = if norm.is_infinite() { p.max_finite } else { norm };
            let radius = Some(factor(i) * u * modulus).filter(|r| r.is_finite()).unwrap_or(0.0);
            [z.re, z.im].map(|part| Interval {
                center: part,
                radius: radius + p.ulp(part),
                special: (!part.is_finite()).then_some(part),
                may_overflow: false,
            })
        })
        .collect();
    Allowance::Intervals(intervals)
}

/// Complex `x^y = exp(w)` with `w = y·log x`: rounding `w` to working
/// precision moves the result by `|w|·u·|z|`, so each element's factor is
/// `8 + |w|` (an honest backend computing in the result's type cannot do
/// better; found by the XLA CPU campaign, where |w| ≈ 170 gave a 1.6e-14
/// relative difference in c128). With broadcast operands, the largest
/// `|y|·|log x|` stands for every element.
fn complex_pow(p: Precision, result: &ArrayLiteral, arrays: &[&ArrayLiteral]) -> Allowance {
    let (Some(x), Some(y)) = (arrays.first().and_then(|a| complexes(a)), arrays.get(1).and_then(|a| complexes(a))) else {
        return complex_relative(p, result);
    };
    let log_norm = |z: &Complex<f64>| z.ln().norm();
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let n = result.element_count();
    if x.len() == n && y.len() == n {
        return complex_relative_by(p, result, |i| 8.0 + finite(y[i].norm() * log_norm(&x[i])));
    }
    let largest = |v: &[Complex<f64>], f: &dyn Fn(&Complex<f64>) -> f64| v.iter().map(|z| finite(f(z))).fold(0.0, f64::max);
    let w = finite(largest(&y, &|z| z.norm()) * largest(&x, &log_norm));
    complex_relative_by(p, result, |_| 8.0 + w)
}

/// Where the reference's part is non-finite, any non-finite part passes
/// (and no finite one).
fn lenient_specials(allowance: Allowance) -> Allowance {
    match allowance {
        Allowance::Intervals(v) => Allowance::Intervals(
            v.into_iter()
                .map(|i| match i.special {
                    Some(_) => Interval { special: None, may_overflow: true, ..i },
                    None => i,
                })
                .collect(),
        ),
        other => other,
    }
}

/// Every element as a complex f64 (exact for every float type).
fn complexes(a: &ArrayLiteral) -> Option<Vec<Complex<f64>>> {
    match convert(&a.data, ElementType::C128) {
        Data::C128(v) => Some(v),
        _ => None,
    }
}

/// Dot, DotGeneral and Conv: the reference's own plan run with exact
/// accumulation. The accumulation precision allowed is f64's when the
/// operands or the result are 64-bit, f32's otherwise (XLA accumulates f16
/// and bf16 products in f32); each complex product adds two roundings.
fn sum_of_products(op: &Op, arrays: &[&ArrayLiteral], result: &ArrayLiteral) -> Option<Allowance> {
    let [lhs, rhs] = arrays else { return None };
    let out = &result.shape;
    let sums: Vec<ExactAcc> = match op {
        Op::Dot { .. } => sums_in(&dot_general_plan(lhs, rhs, &dot_dimension_numbers(lhs.rank()), out).ok()?, lhs, rhs, out).ok()?,
        Op::DotGeneral { dimension_numbers, .. } => {
            sums_in(&dot_general_plan(lhs, rhs, dimension_numbers, out).ok()?, lhs, rhs, out).ok()?
        }
        Op::Conv(attrs) => sums_in(&conv_plan(attrs, lhs, rhs, out).ok()?, lhs, rhs, out).ok()?,
        _ => return None,
    };
    let wide = |t: ElementType| matches!(t, ElementType::F64 | ElementType::C128 | ElementType::S64 | ElementType::U64);
    let acc = Precision::of(if wide(lhs.element_type()) || wide(out.element_type) { ElementType::F64 } else { ElementType::F32 })?;
    let store = Precision::of(out.element_type)?;
    let complex = out.element_type.is_complex();
    let extra = if lhs.element_type().is_complex() || rhs.element_type().is_complex() { 2 } else { 0 };
    let mut intervals = Vec::with_capacity(sums.len() * if complex { 2 } else { 1 });
    for s in &sums {
        intervals.push(sum_interval(&s.re, acc, store, extra));
        if complex {
            intervals.push(sum_interval(&s.im, acc, store, extra));
        }
    }
    Some(Allowance::Intervals(intervals))
}

/// `exact ± (γ(n)·Σ|terms| + n·η + ulp(exact))`, with `η` half the
/// accumulation type's smallest subnormal: a product that underflows is
/// rounded to a multiple of the subnormal spacing, an absolute error the
/// relative bound does not cover (sums of subnormals are exact).
fn sum_interval(s: &ExactSum, acc: Precision, store: Precision, extra_roundings: u64) -> Interval {
    let center = s.value.to_f64();
    // Σ|terms| was itself summed in f64: inflate it by that sum's own bound.
    let abs_sum = s.abs_sum * (1.0 + 2.0 * s.terms as f64 * f64::EPSILON);
    let roundings = s.terms + extra_roundings;
    let radius = acc.gamma(roundings) * abs_sum + acc.underflow(roundings) + store.ulp(center);
    Interval { center, radius, special: s.specials.value(), may_overflow: abs_sum >= acc.max_finite }
}

/// Reduce and ReduceWindow with an add computation: init plus the group's
/// elements, summed exactly; the accumulation type is the element type.
fn grouped_sum(
    arrays: &[&ArrayLiteral],
    result: &ArrayLiteral,
    precision: Precision,
    walk: impl FnOnce(&mut dyn FnMut(usize, &[usize]) -> Result<(), xlaref_reference::RunError>) -> Result<(), xlaref_reference::RunError>,
) -> Allowance {
    let (Some(values), Some(init)) = (complexes(arrays[0]), complexes(arrays[1]).and_then(|v| v.first().copied())) else {
        return Allowance::Exact;
    };
    let complex = result.element_type().is_complex();
    let mut intervals = vec![
        Interval { center: 0.0, radius: 0.0, special: None, may_overflow: false };
        result.element_count() * if complex { 2 } else { 1 }
    ];
    let mut sum_group = |out_pos: usize, positions: &[usize]| {
        let (mut re, mut im) = (ExactSum::new(), ExactSum::new());
        re.add_f64(init.re);
        im.add_f64(init.im);
        for &p in positions {
            let z = values.get(p).copied().unwrap_or_default();
            re.add_f64(z.re);
            im.add_f64(z.im);
        }
        if complex {
            intervals[2 * out_pos] = sum_interval(&re, precision, precision, 0);
            intervals[2 * out_pos + 1] = sum_interval(&im, precision, precision, 0);
        } else {
            intervals[out_pos] = sum_interval(&re, precision, precision, 0);
        }
        Ok(())
    };
    match walk(&mut sum_group) {
        Ok(()) => Allowance::Intervals(intervals),
        Err(_) => Allowance::Exact,
    }
}

/// Fft: each output element is a sum of `N` products by unit roots, formed
/// in `log2 N` stages; bound `4·(log2 N + 2)·u·‖x_batch‖₁`, divided by `N`
/// for the inverse transforms' scaling. Heuristic in its constant.
fn fft(p: Precision, arrays: &[&ArrayLiteral], result: &ArrayLiteral, fft_length: &[i64], inverse: bool) -> Allowance {
    let (Some(input), Some(out)) = (arrays.first().and_then(|a| complexes(a)), complexes(result)) else { return Allowance::Exact };
    let n: f64 = fft_length.iter().map(|&l| l.max(1) as f64).product();
    let k = fft_length.len();
    let trailing = |a: &ArrayShape| a.dims.iter().rev().take(k).map(|&d| d.max(0) as usize).product::<usize>().max(1);
    let (in_len, out_len) = (trailing(&arrays[0].shape), trailing(&result.shape));
    let factor = 4.0 * (n.log2() + 2.0) * p.unit_roundoff() / if inverse { n } else { 1.0 };
    let mut intervals = Vec::with_capacity(out.len() * 2);
    for (b, chunk) in out.chunks(out_len).enumerate() {
        // IRFFT reads half a Hermitian spectrum: the whole one it
        // transforms has up to twice its ‖·‖₁.
        let hermitian = if inverse && !result.element_type().is_complex() { 2.0 } else { 1.0 };
        let norm: f64 = hermitian * input.iter().skip(b * in_len).take(in_len).map(|z| z.norm()).sum::<f64>();
        // A non-finite input makes its whole batch algorithm-dependent
        // (which parts turn NaN depends on exact products by 0 and 1).
        if !norm.is_finite() {
            let anything = Interval { center: 0.0, radius: f64::INFINITY, special: None, may_overflow: true };
            intervals.extend(std::iter::repeat_n(anything, chunk.len() * 2));
            continue;
        }
        for z in chunk {
            for part in [z.re, z.im] {
                intervals.push(Interval {
                    center: part,
                    radius: factor * norm + p.ulp(part),
                    special: (!part.is_finite()).then_some(part),
                    // Every intermediate of a transform is a partial sum
                    // bounded by ‖x‖₁: past the type's largest value an
                    // honest FFT in that type may overflow.
                    may_overflow: norm >= p.max_finite,
                });
            }
        }
    }
    if !result.element_type().is_complex() {
        // IRFFT: real results; keep the real parts only.
        intervals = intervals.into_iter().step_by(2).collect();
    }
    Allowance::Intervals(intervals)
}

/// BatchNorm*, Cholesky, TriangularSolve: each element within
/// `8·(n+8)·u·(|r| + mean |r|)` of the reference, `n` the largest operand
/// element count. Heuristic: their true error depends on conditioning.
fn heuristic(p: Precision, result: &ArrayLiteral, operands: &[&Literal]) -> Allowance {
    let Some(values) = complexes(result) else { return Allowance::Exact };
    let n = operands.iter().map(|o| o.total_elements()).max().unwrap_or(1) as f64;
    let mean = values.iter().map(|z| z.norm()).filter(|x| x.is_finite()).sum::<f64>() / values.len().max(1) as f64;
    let factor = 8.0 * (n + 8.0) * p.unit_roundoff();
    let complex = result.element_type().is_complex();
    let intervals = values
        .iter()
        .flat_map(|z| {
            let parts: Vec<f64> = if complex { vec![z.re, z.im] } else { vec![z.re] };
            parts.into_iter().map(|part| Interval {
                center: part,
                radius: factor * (part.abs() + mean) + p.ulp(part),
                special: (!part.is_finite()).then_some(part),
                may_overflow: false,
            })
        })
        .collect();
    Allowance::Intervals(intervals)
}

/// Cholesky and TriangularSolve: the heuristic bound, lenient on
/// non-finite parts, and an overflow is honest when a product of an operand
/// element and a result element, summed `n` times, can exceed the type's
/// range (`max|operand| · max|result| · n >= max finite`, with both
/// magnitudes at least 1): whether such an intermediate overflows depends
/// on the order of the substitution, while the reference's result may be
/// finite.
fn linalg(p: Precision, result: &ArrayLiteral, operands: &[&Literal]) -> Allowance {
    let largest = |a: &ArrayLiteral| complexes(a).map_or(0.0, |v| v.iter().map(|z| z.norm()).filter(|x| x.is_finite()).fold(0.0, f64::max));
    let a = operands.iter().filter_map(|o| o.as_array()).map(largest).fold(1.0, f64::max);
    let x = largest(result).max(1.0);
    let n = operands.iter().map(|o| o.total_elements()).max().unwrap_or(1) as f64;
    let overflows = a * x * n >= p.max_finite;
    match lenient_specials(heuristic(p, result, operands)) {
        Allowance::Intervals(v) if overflows => Allowance::Intervals(v.into_iter().map(|i| Interval { may_overflow: true, ..i }).collect()),
        other => other,
    }
}

/// xlaref's built-in LAPACK targets (custom_call/lapack_abi.rs): pivots and
/// `info` (s32) exactly; each floating-point result under Cholesky's and
/// TriangularSolve's bound, `8·(n + 8)·u·(|x| + mean|x|)` with `n` the
/// largest operand's element count, a backward-error style bound for
/// unblocked factorizations and substitutions whose sums the engines order
/// differently (tests/lapack_differential.rs). `None` for other targets.
fn lapack(target: &str, operands: &[&Literal], reference: &Literal) -> Option<Allowance> {
    xlaref_reference::custom_call::lapack_abi::parse_name(target)?;
    let leaf = |l: &Literal| match l.as_array() {
        Some(a) => Precision::of(a.element_type()).map_or(Allowance::Exact, |p| linalg(p, a, operands)),
        None => Allowance::Exact,
    };
    Some(match reference {
        Literal::Tuple(parts) => Allowance::Parts(parts.iter().map(leaf).collect()),
        other => leaf(other),
    })
}

/// A computation whose root adds its two parameters.
fn is_add(c: &Computation) -> bool {
    c.param_count == 2
        && c.instructions.get(c.root).is_some_and(|root| {
            matches!(root.op, Op::Binary { op: BinaryOp::Add, broadcast_dimensions: None })
                && matches!(root.operands.as_slice(), [0, 1] | [1, 0])
        })
}

/// Whether every instruction of a computation (and its callees) is exact.
fn computation_is_exact(module: &VerifiedModule, id: usize) -> bool {
    let c = module.computation(id);
    c.instructions.iter().all(|i| match &i.op {
        Op::Unary(u) => !transcendental(*u, true) && !special_function(*u),
        Op::Binary { op: BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Polygamma | BinaryOp::Zeta, .. } => false,
        op => op.called_computations().into_iter().all(|callee| callee != id && computation_is_exact(module, callee)),
    })
}

/// Judges an engine's value against the reference's under an allowance.
pub fn judge(actual: &Literal, reference: &Literal, allowance: &Allowance) -> Option<Mismatch> {
    match allowance {
        Allowance::Exact => compare(actual, reference, None),
        Allowance::Ulps(n) => compare(actual, reference, Some(&Tolerance { ulp: Some(*n), ..Tolerance::default() })),
        Allowance::Statistical => (actual.shape() != reference.shape()).then(|| Mismatch {
            at: "shape".into(),
            expected: reference.shape().to_string(),
            actual: actual.shape().to_string(),
        }),
        Allowance::Intervals(intervals) => judge_intervals(actual, reference, intervals),
        Allowance::InRange { low, high, closed } => {
            if actual.shape() != reference.shape() {
                return compare(actual, reference, None);
            }
            let values = actual.as_array().and_then(real_values)?;
            let outside = values.iter().position(|&v| !(v >= *low && (v < *high || (*closed && v == *high))))?;
            let at = actual.as_array().map(|a| format!("{:?}", a.shape.unlinear(outside).as_slice())).unwrap_or_default();
            Some(Mismatch {
                at,
                expected: format!("a value in [{low}, {high}{} (RngUniform's range)", if *closed { "]" } else { ")" }),
                actual: values[outside].to_string(),
            })
        }
        Allowance::Parts(parts) => match (actual.as_tuple(), reference.as_tuple()) {
            (Some(a), Some(r)) if a.len() == r.len() && a.len() == parts.len() => a
                .iter()
                .zip(r)
                .zip(parts)
                .enumerate()
                .find_map(|(i, ((x, y), allowance))| judge(x, y, allowance).map(|m| Mismatch { at: format!("{{{i}}}{}", m.at), ..m })),
            _ => compare(actual, reference, None),
        },
    }
}

fn judge_intervals(actual: &Literal, reference: &Literal, intervals: &[Interval]) -> Option<Mismatch> {
    let (Some(a), Some(r)) = (actual.as_array(), reference.as_array()) else { return compare(actual, reference, None) };
    if a.shape != r.shape {
        return compare(actual, reference, None);
    }
    let (Some(values), Some(p)) = (complexes(a), Precision::of(a.element_type())) else { return compare(actual, reference, None) };
    let complex = a.element_type().is_complex();
    let parts: Vec<f64> = if complex { values.iter().flat_map(|z| [z.re, z.im]).collect() } else { values.iter().map(|z| z.re).collect() };
    let bad = parts.iter().zip(intervals).position(|(&x, i)| !within(x, i, p))?;
    let element = if complex { bad / 2 } else { bad };
    let index = a.shape.unlinear(element);
    let i = intervals[bad];
    Some(Mismatch {
        at: format!(
            "{:?}{}",
            index.as_slice(),
            if complex {
                if bad % 2 == 0 {
                    " (real part)"
                } else {
                    " (imaginary part)"
                }
            } else {
                ""
            }
        ),
        expected: match i.special {
            Some(s) => format!("{s} (the exact result is not finite)"),
            // Debug, not Display: 3e-323 rather than 323 digits.
            None => format!("{:?} ± {:e} (the tolerance model's interval)", i.center, i.radius),
        },
        actual: format!("{:?}", parts[bad]),
    })
}

/// Whether `x` is an honest value for the interval in a type of precision
/// `p`: inside it; or the matching non-finite value; or an overflow (an
/// infinity, or NaN in types without one) where the interval reaches past
/// the largest finite value.
fn within(x: f64, i: &Interval, p: Precision) -> bool {
    if let Some(s) = i.special {
        // Finite terms whose partial sums may overflow can meet the
        // infinite term with the opposite sign: NaN is then honest too.
        return (s.is_nan() && x.is_nan()) || s == x || (i.may_overflow && x.is_nan());
    }
    if x.is_finite() {
        return x == i.center || (i.center.is_finite() && (x - i.center).abs() <= i.radius);
    }
    let reach = i.center.abs() + i.radius;
    i.may_overflow || (reach >= p.max_finite && (x.is_nan() || x.signum() == i.center.signum() || i.center.abs() <= i.radius))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlaref_reference::numerics::convert::Num;
    use xlaref_reference::terms::Acc;

    #[test]
    fn gamma_and_ulp() {
        let p = Precision::of(ElementType::F32).unwrap();
        assert_eq!(p.ulp(1.0), f32::EPSILON as f64);
        assert_eq!(p.ulp(0.0), (-149f64).exp2());
        assert!((p.gamma(2) / (2.0 * (-24f64).exp2()) - 1.0).abs() < 1e-6);
        assert!(p.gamma(1 << 30).is_infinite());
        // f32: the smallest subnormal is 2^-149; two products off by half of it.
        assert_eq!(p.underflow(2), (-149f64).exp2());
        // f64: half its smallest subnormal is not an f64, yet the bound of
        // one underflowing product must not vanish.
        let d = Precision::of(ElementType::F64).unwrap();
        assert_eq!(d.underflow(1), (-1074f64).exp2());
        assert_eq!(d.underflow(4), 2.0 * (-1074f64).exp2());
    }

    /// Found by `xlaref fuzz --ops conv --seed 51` (program 96615): an f64
    /// Conv whose products underflow. Four products of exactly 1.5 smallest
    /// subnormals sum to 6; formed in f64 each rounds (to even) to 2, and
    /// their sum is 8. The interval must hold that honest 8.
    #[test]
    fn f64_products_that_underflow_are_honest() {
        let p = Precision::of(ElementType::F64).unwrap();
        let tiny = (-1074f64).exp2();
        let (x, y) = (3.0 * (-600f64).exp2(), (-475f64).exp2());
        assert_eq!(x * y, 2.0 * tiny, "1.5 subnormals round to 2");
        let mut acc = ExactAcc::zero();
        let (a, b) = (ExactAcc::from_num(Num::Real(x)), ExactAcc::from_num(Num::Real(y)));
        for _ in 0..4 {
            acc.mul_add(&a, &b);
        }
        let i = sum_interval(&acc.re, p, p, 0);
        assert_eq!(i.center, 6.0 * tiny);
        assert!(within(8.0 * tiny, &i, p));
        assert!(!within(12.0 * tiny, &i, p), "a fifth product's worth is outside");
    }

    #[test]
    fn intervals_accept_reassociation_and_reject_wrong_terms() {
        let p = Precision::of(ElementType::F32).unwrap();
        let mut s = ExactSum::new();
        for x in [1.0e8, 1.0, -1.0e8, 3.0] {
            s.add_f64(x);
        }
        let i = sum_interval(&s, p, p, 0);
        assert!(within(4.0, &i, p));
        // f32 left to right: 1e8 + 1 = 1e8, - 1e8 = 0, + 3 = 3.
        assert!(within(3.0, &i, p));
        // A missing term of 1e8 is far outside.
        assert!(!within(1.0e8, &i, p));
    }

    /// RngUniform's range holds for any shape, even one element.
    #[test]
    fn uniform_values_stay_in_range() {
        let scalar = |x: i32| Literal::Array(ArrayLiteral::scalar(x));
        let (a, b) = (scalar(-2), scalar(3));
        let allowed = uniform_range(&[&a, &b]).expect("a range for a < b");
        let one = |x: i32| Literal::Array(ArrayLiteral::from_vec(vec![1], vec![x]));
        assert!(judge(&one(-2), &one(0), &allowed).is_none());
        assert!(judge(&one(2), &one(0), &allowed).is_none());
        assert!(judge(&one(3), &one(0), &allowed).is_some(), "b is outside [a, b) for integers");
        assert!(uniform_range(&[&b, &a]).is_none(), "b <= a is left open");
        let (x, y) = (Literal::Array(ArrayLiteral::scalar(0.5f32)), Literal::Array(ArrayLiteral::scalar(1.0f32)));
        let floats = uniform_range(&[&x, &y]).expect("a float range");
        let f = |v: f32| Literal::Array(ArrayLiteral::from_vec(vec![2], vec![0.75f32, v]));
        assert!(judge(&f(1.0), &f(0.6), &floats).is_none(), "floats may round up to b");
        assert!(judge(&f(f32::NAN), &f(0.6), &floats).is_some());
    }
}
