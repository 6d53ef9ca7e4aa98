//! Float element semantics of the fast engine: f32 and f64 natively, the
//! narrow types (f16, bf16, f8) computed in f32 and rounded once, as XLA CPU
//! does. Transcendental functions come from the platform's libm through
//! `std` (the reference uses its own; differences are a few ulp), except
//! the f32 functions that have the engine's own vectorizable evaluation:
//! Exp (`elem::exp`), Log, Log1p, Expm1, Tanh, Logistic, and Sin, Cos and
//! Tan below 2^20 in magnitude (`elem::f32_math`); and f32 Cbrt, Pow and
//! Atan2 are the reference's functions (libm in f64, rounded once), in
//! f64 lanes where the CPU has AVX-512 (`elem::cbrt`, `elem::pow`,
//! `elem::atan2`).

use half::{bf16, f16};
use std::ops::{Add, Div, Mul, Neg, Sub};

use super::f8::{F8E4M3FN, F8E5M2};
use crate::kernels::elementwise::Side;

/// The type arithmetic happens in: f32 or f64.
pub trait Wide:
    Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self> + Send + Sync
{
    const ZERO: Self;
    const ONE: Self;
    fn to_f64(self) -> f64;
    /// Rounded once (the CHLO special functions are evaluated in f64).
    fn from_f64(x: f64) -> Self;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn sqrt(self) -> Self;
    fn cbrt(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    /// Sin, Cos and Tan for `|x| < TRIG_NEAR`, vectorizable (elsewhere
    /// unspecified: the callers take `sin`, `cos`, `tan` there).
    fn sin_near(self) -> Self;
    fn cos_near(self) -> Self;
    fn tan_near(self) -> Self;
    const TRIG_NEAR: Self;
    fn tanh(self) -> Self;
    /// `1/(1 + e^-x)`.
    fn logistic(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round(self) -> Self;
    fn round_ties_even(self) -> Self;
    fn powf(self, o: Self) -> Self;
    fn atan2(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn erf(self) -> Self;
    fn copysign(self, s: Self) -> Self;
    fn is_finite(self) -> bool;
}

macro_rules! wide {
    (
        $t:ty,
        erf: $erf:path,
        exp: $exp:path,
        exp_m1: $exp_m1:path,
        ln: $ln:path,
        ln_1p: $ln_1p:path,
        tanh: $tanh:path,
        logistic: $logistic:path,
        trig_near: ($sin:path, $cos:path, $tan:path, $bound:expr)
    ) => {
        impl Wide for $t {
            const TRIG_NEAR: Self = $bound;
            #[inline(always)]
            fn sin_near(self) -> Self {
                $sin(self)
            }
            #[inline(always)]
            fn cos_near(self) -> Self {
                $cos(self)
            }
            #[inline(always)]
            fn tan_near(self) -> Self {
                $tan(self)
            }
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                $exp_m1(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $ln(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                $ln_1p(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn cbrt(self) -> Self {
                <$t>::cbrt(self)
            }
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $tanh(self)
            }
            #[inline(always)]
            fn logistic(self) -> Self {
                $logistic(self)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline(always)]
            fn round(self) -> Self {
                <$t>::round(self)
            }
            #[inline(always)]
            fn round_ties_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            fn powf(self, o: Self) -> Self {
                <$t>::powf(self, o)
            }
            fn atan2(self, o: Self) -> Self {
                <$t>::atan2(self, o)
            }
            fn rem(self, o: Self) -> Self {
                self % o
            }
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn copysign(self, s: Self) -> Self {
                <$t>::copysign(self, s)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
        }
    };
}

// `std` has no erf; the fast engine takes it from `libm` (single precision
// for f32, so it is not the reference's f64-then-round computation). The
// f32 Exp, Expm1, Log, Log1p, Tanh and Logistic are the engine's own, in f64
// rounded once, so that their loops vectorize. (glibc's `tanhf` 2.36 would
// not do anyway: it is 2 ulps off for about 1 input in 200 in [-3, 3], e.g.
// tanh(0.47913694) gives 0x3ee41f6b where the rounded value is 0x3ee41f69;
// found by the campaign, seed 77.)
wide!(
    f32,
    erf: libm::erff,
    exp: super::exp::exp_f32,
    exp_m1: super::f32_math::exp_m1_f32,
    ln: super::f32_math::ln_f32,
    ln_1p: super::f32_math::ln_1p_f32,
    tanh: super::f32_math::tanh_f32,
    logistic: super::f32_math::logistic_f32,
    trig_near: (super::f32_math::sin_near_f32, super::f32_math::cos_near_f32, super::f32_math::tan_near_f32, super::f32_math::TRIG_NEAR)
);
wide!(
    f64,
    erf: libm::erf,
    exp: f64::exp,
    exp_m1: f64::exp_m1,
    ln: f64::ln,
    ln_1p: f64::ln_1p,
    tanh: f64::tanh,
    logistic: logistic_f64,
    trig_near: (f64::sin, f64::cos, f64::tan, f64::INFINITY)
);

/// Logistic in f64: `1/(1 + e^-x)`; where `1 + e^-x` overflows (x < -709),
/// `e^x/(1 + e^x)`, long before the result underflows.
fn logistic_f64(x: f64) -> f64 {
    let d = 1.0 + (-x).exp();
    if d.is_finite() {
        1.0 / d
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// A real float storage type and its arithmetic type.
pub trait FFloat: Copy + Default + Send + Sync + 'static {
    type W: Wide;
    const WIDTH: u32;
    fn up(self) -> Self::W;
    fn down(w: Self::W) -> Self;
    fn bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
    /// `x` rounded once (to nearest, ties to even) to this type.
    fn round_from_f64(x: f64) -> Self;
    /// The quiet bit of a NaN, for the types whose signaling NaNs reach
    /// Pow (see [`pow`]); None where widening quiets them (f16, f8).
    const POW_QUIET_BIT: Option<u64> = None;
    /// Exp of every element: in the wide type, rounded once, except where
    /// a type has a faster whole-array kernel (f32).
    fn exp_all(v: &[Self]) -> Vec<Self> {
        crate::par::map_heavy(v, |x| Self::down(x.up().exp()))
    }
    /// [`FFloat::exp_all`] into `out`, on this thread (for fused blocks).
    fn exp_into(v: &[Self], out: &mut [Self]) {
        super::each_into(v, out, |x| Self::down(x.up().exp()))
    }
    /// Tanh of every element: in the wide type, rounded once, except where
    /// a type has a faster whole-array kernel (f32, `elem::tanh`).
    fn tanh_all(v: &[Self]) -> Vec<Self> {
        crate::par::map_heavy(v, |x| Self::down(x.up().tanh()))
    }
    /// [`FFloat::tanh_all`] into `out`, on this thread (for fused blocks).
    fn tanh_into(v: &[Self], out: &mut [Self]) {
        super::each_into(v, out, |x| Self::down(x.up().tanh()))
    }
    /// Erf of every element: in the wide type, rounded once, except where
    /// a type has a faster whole-array kernel (f32, `elem::erf`).
    fn erf_all(v: &[Self]) -> Vec<Self> {
        crate::par::map_heavy(v, |x| Self::down(x.up().erf()))
    }
    /// [`FFloat::erf_all`] into `out`, on this thread (for fused tiles).
    fn erf_into(v: &[Self], out: &mut [Self]) {
        super::each_into(v, out, |x| Self::down(x.up().erf()))
    }
    /// Erfc of every element: `libm::erfc` in f64, rounded once, except
    /// where a type has a faster whole-array kernel (f32, `elem::erf`).
    fn erfc_all(v: &[Self]) -> Vec<Self> {
        crate::par::map_heavy(v, |x| Self::down(Self::W::from_f64(libm::erfc(x.up().to_f64()))))
    }
    /// [`FFloat::erfc_all`] into `out`, on this thread (for fused tiles).
    fn erfc_into(v: &[Self], out: &mut [Self]) {
        super::each_into(v, out, |x| Self::down(Self::W::from_f64(libm::erfc(x.up().to_f64()))))
    }
    /// Cbrt of every element: in the wide type, rounded once, except where
    /// a type has a faster whole-array kernel (f32, `elem::cbrt`).
    fn cbrt_all(v: &[Self]) -> Vec<Self> {
        crate::par::map_heavy(v, |x| Self::down(x.up().cbrt()))
    }
    /// [`FFloat::cbrt_all`] into `out`, on this thread (for fused tiles).
    fn cbrt_into(v: &[Self], out: &mut [Self]) {
        super::each_into(v, out, |x| Self::down(x.up().cbrt()))
    }
    /// Pow of every element ([`pow`]), except where a type has a faster
    /// whole-array kernel (f32, `elem::pow`).
    fn pow_all(x: Side<Self>, y: Side<Self>) -> Vec<Self> {
        super::each2_all(x, y, pow)
    }
    /// [`FFloat::pow_all`] into `out`, on this thread (for fused tiles and
    /// scalar programs).
    fn pow_into(x: Side<Self>, y: Side<Self>, out: &mut [Self]) {
        super::each2_into(x, y, out, pow)
    }
    /// Atan2 of every element: in the wide type, rounded once, except
    /// where a type has a faster whole-array kernel (f32, `elem::atan2`).
    fn atan2_all(y: Side<Self>, x: Side<Self>) -> Vec<Self> {
        super::each2_all(y, x, |a: Self, b: Self| Self::down(a.up().atan2(b.up())))
    }
    /// [`FFloat::atan2_all`] into `out`, on this thread (for fused tiles
    /// and scalar programs).
    fn atan2_into(y: Side<Self>, x: Side<Self>, out: &mut [Self]) {
        super::each2_into(y, x, out, |a: Self, b: Self| Self::down(a.up().atan2(b.up())))
    }
    /// `fold_any_order(acc, xs, op)` in vector lanes, bit for bit, where
    /// this type and CPU have them (`kernels::reduce::row_lanes`).
    fn fold_row(op: crate::kernels::reduce::LaneOp, acc: Self, xs: &[Self]) -> Option<Self> {
        let _ = (op, acc, xs);
        None
    }
}

/// Pow: the platform's `pow` in the wide type, with a signaling NaN
/// operand of f32, f64 or bf16 giving that NaN quieted (not `sNaN^0 = 1`),
/// as XLA CPU; widening bf16 would quiet it first, so it is checked on the
/// element's own bits.
#[inline(always)]
pub fn pow<T: FFloat>(x: T, y: T) -> T {
    if let Some(quiet) = T::POW_QUIET_BIT {
        for v in [x, y] {
            if v.up().is_nan() && v.bits() & quiet == 0 {
                return T::from_bits(v.bits() | quiet);
            }
        }
    }
    T::down(x.up().powf(y.up()))
}

impl FFloat for f32 {
    fn round_from_f64(x: f64) -> Self {
        x as f32
    }
    const POW_QUIET_BIT: Option<u64> = Some(1 << 22);
    fn exp_all(v: &[f32]) -> Vec<f32> {
        super::exp::exp_f32_all(v)
    }
    fn exp_into(v: &[f32], out: &mut [f32]) {
        super::exp::exp_f32_into(v, out)
    }
    fn tanh_all(v: &[f32]) -> Vec<f32> {
        super::tanh::tanh_f32_all(v)
    }
    fn tanh_into(v: &[f32], out: &mut [f32]) {
        super::tanh::tanh_f32_into(v, out)
    }
    fn erf_all(v: &[f32]) -> Vec<f32> {
        super::erf::erf_f32_all(v)
    }
    fn erf_into(v: &[f32], out: &mut [f32]) {
        super::erf::erf_f32_into(v, out)
    }
    fn erfc_all(v: &[f32]) -> Vec<f32> {
        super::erf::erfc_f32_all(v)
    }
    fn erfc_into(v: &[f32], out: &mut [f32]) {
        super::erf::erfc_f32_into(v, out)
    }
    fn cbrt_all(v: &[f32]) -> Vec<f32> {
        super::cbrt::cbrt_f32_all(v)
    }
    fn cbrt_into(v: &[f32], out: &mut [f32]) {
        super::cbrt::cbrt_f32_into(v, out)
    }
    fn pow_all(x: Side<f32>, y: Side<f32>) -> Vec<f32> {
        super::pow::pow_f32_all(x, y)
    }
    fn pow_into(x: Side<f32>, y: Side<f32>, out: &mut [f32]) {
        super::pow::pow_f32_into(x, y, out)
    }
    fn atan2_all(y: Side<f32>, x: Side<f32>) -> Vec<f32> {
        super::atan2::atan2_f32_all(y, x)
    }
    fn atan2_into(y: Side<f32>, x: Side<f32>, out: &mut [f32]) {
        super::atan2::atan2_f32_into(y, x, out)
    }
    fn fold_row(op: crate::kernels::reduce::LaneOp, acc: f32, xs: &[f32]) -> Option<f32> {
        crate::kernels::reduce::fold_row_f32(op, acc, xs)
    }
    type W = f32;
    const WIDTH: u32 = 32;
    #[inline(always)]
    fn up(self) -> f32 {
        self
    }
    #[inline(always)]
    fn down(w: f32) -> f32 {
        w
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_bits(b: u64) -> Self {
        f32::from_bits(b as u32)
    }
}

impl FFloat for f64 {
    fn fold_row(op: crate::kernels::reduce::LaneOp, acc: f64, xs: &[f64]) -> Option<f64> {
        crate::kernels::reduce::fold_row_f64(op, acc, xs)
    }
    fn round_from_f64(x: f64) -> Self {
        x
    }
    const POW_QUIET_BIT: Option<u64> = Some(1 << 51);
    type W = f64;
    const WIDTH: u32 = 64;
    #[inline(always)]
    fn up(self) -> f64 {
        self
    }
    #[inline(always)]
    fn down(w: f64) -> f64 {
        w
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn from_bits(b: u64) -> Self {
        f64::from_bits(b)
    }
}

impl FFloat for f16 {
    fn round_from_f64(x: f64) -> Self {
        f16::from_f64(x)
    }
    type W = f32;
    const WIDTH: u32 = 16;
    #[inline(always)]
    fn up(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn down(w: f32) -> f16 {
        f16::from_f32(w)
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_bits(b: u64) -> Self {
        f16::from_bits(b as u16)
    }
}

impl FFloat for bf16 {
    fn round_from_f64(x: f64) -> Self {
        bf16::from_f64(x)
    }
    const POW_QUIET_BIT: Option<u64> = Some(1 << 6);
    type W = f32;
    const WIDTH: u32 = 16;
    #[inline(always)]
    fn up(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn down(w: f32) -> bf16 {
        bf16::from_f32(w)
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_bits(b: u64) -> Self {
        bf16::from_bits(b as u16)
    }
}

impl FFloat for F8E4M3FN {
    fn round_from_f64(x: f64) -> Self {
        F8E4M3FN(super::f8::e4m3fn_from_f64(x))
    }
    type W = f32;
    const WIDTH: u32 = 8;
    #[inline(always)]
    fn up(self) -> f32 {
        super::f8::e4m3fn_to_f32(self.0)
    }
    #[inline(always)]
    fn down(w: f32) -> Self {
        F8E4M3FN(super::f8::e4m3fn_from_f64(w as f64))
    }
    fn bits(self) -> u64 {
        self.0 as u64
    }
    fn from_bits(b: u64) -> Self {
        F8E4M3FN(b as u8)
    }
}

impl FFloat for F8E5M2 {
    fn round_from_f64(x: f64) -> Self {
        F8E5M2(super::f8::e5m2_from_f64(x))
    }
    type W = f32;
    const WIDTH: u32 = 8;
    #[inline(always)]
    fn up(self) -> f32 {
        super::f8::e5m2_to_f32(self.0)
    }
    #[inline(always)]
    fn down(w: f32) -> Self {
        F8E5M2(super::f8::e5m2_from_f64(w as f64))
    }
    fn bits(self) -> u64 {
        self.0 as u64
    }
    fn from_bits(b: u64) -> Self {
        F8E5M2(b as u8)
    }
}

/// IEEE 754-2019 maximum: NaN wins, +0 beats -0. Written as one select
/// over named conditions (non-short-circuit `|`, `&`): in this form LLVM
/// vectorizes loops over it, even with interleaved loads.
#[inline(always)]
pub fn maximum<W: Wide>(a: W, b: W) -> W {
    let greater = a > b;
    let equal_over_negative_zero = (a == b) & b.is_sign_negative();
    let take_a = a.is_nan() | (!b.is_nan() & (greater | equal_over_negative_zero));
    if take_a {
        a
    } else {
        b
    }
}

/// IEEE 754-2019 minimum: NaN wins, -0 beats +0 (one select, as
/// [`maximum`]).
#[inline(always)]
pub fn minimum<W: Wide>(a: W, b: W) -> W {
    let less = a < b;
    let equal_negative_zero = (a == b) & a.is_sign_negative();
    let take_a = a.is_nan() | (!b.is_nan() & (less | equal_negative_zero));
    if take_a {
        a
    } else {
        b
    }
}

/// The document's Sign: ±1, ±0 kept, NaN kept.
#[inline(always)]
pub fn sign<W: Wide>(x: W) -> W {
    if x.is_nan() || x == W::ZERO {
        x
    } else {
        W::ONE.copysign(x)
    }
}

/// Total order: maps a float's bits to an integer that sorts as
/// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
#[inline(always)]
pub fn order_key<T: FFloat>(x: T) -> i64 {
    let b = x.bits();
    let sign_bit = 1u64 << (T::WIDTH - 1);
    if b & sign_bit != 0 {
        // negative: larger magnitude sorts lower
        -((b & (sign_bit - 1)) as i64) - 1
    } else {
        b as i64
    }
}
