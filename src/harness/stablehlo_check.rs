//! StableHLO's `check` dialect as a judge: what each check of StableHLO's
//! test programs accepts, as StableHLO's interpreter decides it
//! (`stablehlo/tests/CheckOps.{td,cpp}`, `stablehlo/reference/Element.cpp`
//! and the custom-call fallback of `stablehlo-translate --interpret`), on
//! top of the element walk of `compare.rs`. docs/stablehlo-checks.md maps
//! these rules to the tolerance model.

use std::fmt;

use num_complex::Complex;
use xlaref_reference::literal::Literal;
use xlaref_reference::numerics::float::Float;

use super::compare::{compare_by, Disagreement, ElementRule};
use xlaref_reference::mlir::CheckKind;

/// `check.expect_almost_eq[_const]` without a `tolerance` attribute.
pub const OP_ALMOST_EQ_TOLERANCE: f64 = 1e-4;
/// `custom_call @check.expect_almost_eq`: the interpreter's fallback passes
/// a fixed tolerance.
pub const CUSTOM_CALL_ALMOST_EQ_TOLERANCE: f64 = 1e-3;
/// `check.expect_close` without `max_ulp_difference` (the attribute's
/// default; the printed form always spells it).
pub const OP_CLOSE_MAX_ULP: u64 = 1;
/// `custom_call @check.expect_close`: the fallback's fixed range is [0, 3].
pub const CUSTOM_CALL_CLOSE_MAX_ULP: u64 = 3;

/// How a check was written: the two spellings take different defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckForm {
    /// `check.expect_*` ops (StableHLO's `tests/interpret`).
    Op,
    /// `stablehlo.custom_call @check.expect_*` (JAX-exported `testdata`).
    CustomCall,
}

/// What a check accepts, its parameters resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// `expect_eq`, `expect_eq_const`: integers and booleans equal; floats
    /// and complex parts equal as IEEE values (APFloat's `==`): a NaN never
    /// matches, +0 matches -0.
    Eq,
    /// `expect_almost_eq`, `expect_almost_eq_const` (floats and complex
    /// parts): IEEE-equal, or both NaN, or both finite with the same sign
    /// bit and `|actual - expected| <= tolerance` (computed in f64).
    AlmostEq { tolerance: f64 },
    /// `expect_close` (floats and complex, the larger of the parts'
    /// distances): `min_ulp <= ulp_difference(actual, expected) <= max_ulp`.
    Close { min_ulp: u64, max_ulp: u64 },
}

/// A check the judge has no rule for (`expect_serialized_eq` needs the
/// probe files of an instrumented run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unjudged(pub String);

impl Rule {
    /// The rule of a check as StableHLO's interpreter applies it.
    pub fn for_check(kind: &CheckKind, form: CheckForm) -> Result<Rule, Unjudged> {
        match kind {
            CheckKind::Eq => Ok(Rule::Eq),
            CheckKind::AlmostEq { tolerance } => Ok(Rule::AlmostEq {
                tolerance: tolerance.unwrap_or(match form {
                    CheckForm::Op => OP_ALMOST_EQ_TOLERANCE,
                    CheckForm::CustomCall => CUSTOM_CALL_ALMOST_EQ_TOLERANCE,
                }),
            }),
            CheckKind::Close { max_ulp_difference, min_ulp_difference } => Ok(Rule::Close {
                min_ulp: min_ulp_difference.unwrap_or(0),
                max_ulp: max_ulp_difference.unwrap_or(match form {
                    CheckForm::Op => OP_CLOSE_MAX_ULP,
                    CheckForm::CustomCall => CUSTOM_CALL_CLOSE_MAX_ULP,
                }),
            }),
            CheckKind::Other(name) => Err(Unjudged(name.clone())),
        }
    }

    /// The check's name, for reports.
    pub fn name(&self) -> &'static str {
        match self {
            Rule::Eq => "expect_eq",
            Rule::AlmostEq { .. } => "expect_almost_eq",
            Rule::Close { .. } => "expect_close",
        }
    }
}

/// What the judge found at the first element a check rejects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Miss {
    /// `Eq`: the values are not IEEE-equal (a NaN is never equal).
    NotEqual,
    /// `AlmostEq`: one value is NaN and the other is not, or one is an
    /// infinity the other does not equal.
    NonFinite,
    /// `AlmostEq`: finite, not both zero, sign bits differ (StableHLO
    /// rejects these whatever the tolerance: `1e-9` vs `-1e-9`, `+0` vs
    /// `-1e-9`).
    OppositeSigns,
    /// `AlmostEq`: `|actual - expected|` (in f64) beyond the tolerance.
    OutsideTolerance { difference: f64, tolerance: f64 },
    /// `Close`: the distance outside `[min, max]`; `u64::MAX` stands for
    /// "non-finite and different" as in StableHLO.
    UlpDistance { ulps: u64, min: u64, max: u64 },
    /// `AlmostEq`/`Close` on integers or booleans, which StableHLO's
    /// verifier rejects (its fallback aborts).
    NotFloat,
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Miss::NotEqual => write!(f, "not equal"),
            Miss::NonFinite => write!(f, "non-finite values differ"),
            Miss::OppositeSigns => write!(f, "opposite signs"),
            Miss::OutsideTolerance { difference, tolerance } => write!(f, "difference {difference:e} > tolerance {tolerance:e}"),
            Miss::UlpDistance { ulps: u64::MAX, min, max } => write!(f, "non-finite values differ (ULP range [{min}, {max}])"),
            Miss::UlpDistance { ulps, min, max } => write!(f, "{ulps} ULPs outside [{min}, {max}]"),
            Miss::NotFloat => write!(f, "the check needs a floating-point or complex type"),
        }
    }
}

/// Why a check failed: the values' shapes differ, or an element misses.
pub type CheckFailure = Disagreement<Miss>;

/// Shows a check failure: where, the two values, and what was measured.
pub fn describe(failure: &CheckFailure) -> String {
    match failure {
        Disagreement::Shape(m) => format!("shape: expected {}, got {}", m.expected, m.actual),
        Disagreement::Element(m, miss) => format!("{m} ({miss})"),
    }
}

/// Judges `actual` against `expected` under `rule`.
pub fn judge(rule: &Rule, actual: &Literal, expected: &Literal) -> Result<(), CheckFailure> {
    compare_by(actual, expected, rule)
}

/// StableHLO's ULP difference: 0 for bit-identical values and for two NaNs
/// (of any sign and payload); for two finite values the number of values of
/// the type between them, counting across zero as `|a| + |b|` in bit
/// patterns (so `+0` and `-0` are 0 apart); `u64::MAX` otherwise (a
/// non-finite value against anything but itself).
pub fn ulp_difference<T: Float>(x: T, y: T) -> u64 {
    let (bx, by) = (x.to_bits(), y.to_bits());
    if bx == by {
        return 0;
    }
    let (fx, fy) = (x.to_f64(), y.to_f64());
    if fx.is_finite() && fy.is_finite() {
        let sign = 1u64 << (T::WIDTH - 1);
        let (mx, my) = (bx & (sign - 1), by & (sign - 1));
        return if (bx & sign) != (by & sign) { mx + my } else { mx.abs_diff(my) };
    }
    if fx.is_nan() && fy.is_nan() {
        return 0;
    }
    u64::MAX
}

/// StableHLO's `areApproximatelyEqual` on one pair of real values.
fn almost_eq(actual: f64, expected: f64, tolerance: f64) -> Result<(), Miss> {
    // IEEE equality first: +0 == -0, inf == inf.
    if actual == expected {
        return Ok(());
    }
    if actual.is_nan() || expected.is_nan() {
        return if actual.is_nan() && expected.is_nan() { Ok(()) } else { Err(Miss::NonFinite) };
    }
    if actual.is_infinite() || expected.is_infinite() {
        return Err(Miss::NonFinite);
    }
    if actual.is_sign_negative() != expected.is_sign_negative() {
        return Err(Miss::OppositeSigns);
    }
    let difference = (actual - expected).abs();
    if difference <= tolerance {
        Ok(())
    } else {
        Err(Miss::OutsideTolerance { difference, tolerance })
    }
}

impl ElementRule for Rule {
    type Miss = Miss;

    fn preds(&self, actual: bool, expected: bool) -> Result<(), Miss> {
        match self {
            Rule::Eq if actual == expected => Ok(()),
            Rule::Eq => Err(Miss::NotEqual),
            _ => Err(Miss::NotFloat),
        }
    }

    fn ints(&self, actual: i128, expected: i128) -> Result<(), Miss> {
        match self {
            Rule::Eq if actual == expected => Ok(()),
            Rule::Eq => Err(Miss::NotEqual),
            _ => Err(Miss::NotFloat),
        }
    }

    fn floats<T: Float>(&self, actual: T, expected: T) -> Result<(), Miss> {
        let (a, e) = (actual.to_f64(), expected.to_f64());
        match *self {
            Rule::Eq if a == e => Ok(()),
            Rule::Eq => Err(Miss::NotEqual),
            Rule::AlmostEq { tolerance } => almost_eq(a, e, tolerance),
            Rule::Close { min_ulp, max_ulp } => within_ulps(ulp_difference(actual, expected), min_ulp, max_ulp),
        }
    }

    fn complexes<T: Float>(&self, actual: Complex<T>, expected: Complex<T>) -> Result<(), Miss> {
        match *self {
            Rule::Close { min_ulp, max_ulp } => {
                let ulps = ulp_difference(actual.re, expected.re).max(ulp_difference(actual.im, expected.im));
                within_ulps(ulps, min_ulp, max_ulp)
            }
            _ => self.floats(actual.re, expected.re).and_then(|()| self.floats(actual.im, expected.im)),
        }
    }
}

fn within_ulps(ulps: u64, min: u64, max: u64) -> Result<(), Miss> {
    if (min..=max).contains(&ulps) {
        Ok(())
    } else {
        Err(Miss::UlpDistance { ulps, min, max })
    }
}
