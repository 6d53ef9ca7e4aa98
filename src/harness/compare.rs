//! Comparing an actual result with an expected one (docs/format.md §4): exact by
//! default, or within a case's `tolerance`.

use std::fmt;

use num_complex::Complex;
use serde_json::Value;
use xlaref_reference::json::{write_literal, WriteOptions};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::float::{total_order_key, Float};
use xlaref_reference::numerics::int::Int;

/// A case's `tolerance`: an element passes when it is within any bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tolerance {
    pub abs: Option<f64>,
    pub rel: Option<f64>,
    pub ulp: Option<f64>,
}

impl Tolerance {
    pub fn from_json(v: &Value) -> Result<Tolerance, String> {
        let obj = v.as_object().ok_or("tolerance is an object with abs, rel and/or ulp")?;
        let mut t = Tolerance::default();
        for (k, x) in obj {
            let n = x.as_f64().filter(|n| *n >= 0.0).ok_or_else(|| format!("tolerance `{k}` must be a non-negative number"))?;
            match k.as_str() {
                "abs" => t.abs = Some(n),
                "rel" => t.rel = Some(n),
                "ulp" => t.ulp = Some(n),
                _ => return Err(format!("unknown tolerance key `{k}`")),
            }
        }
        Ok(t)
    }

    /// Whether a real element within this tolerance passes; `ulps` is the
    /// distance in units in the last place of the element type.
    fn accepts(&self, actual: f64, expected: f64, ulps: f64) -> bool {
        if actual.is_nan() || expected.is_nan() {
            return actual.is_nan() && expected.is_nan();
        }
        if actual.is_infinite() || expected.is_infinite() {
            return actual == expected;
        }
        let diff = (actual - expected).abs();
        diff == 0.0
            || self.abs.is_some_and(|a| diff <= a)
            || self.rel.is_some_and(|r| diff <= r * expected.abs())
            || self.ulp.is_some_and(|u| ulps <= u)
    }
}

/// Where and how an actual result differs from the expected one.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Position in the value: tuple indices then the element's multi-index.
    pub at: String,
    pub expected: String,
    pub actual: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: expected {}, got {}", self.at, self.expected, self.actual)
    }
}

/// Compares `actual` with `expected`; `None` means they agree.
pub fn compare(actual: &Literal, expected: &Literal, tolerance: Option<&Tolerance>) -> Option<Mismatch> {
    match compare_by(actual, expected, &CaseRule(tolerance)) {
        Ok(()) => None,
        Err(Disagreement::Shape(m)) | Err(Disagreement::Element(m, ())) => Some(m),
    }
}

/// How two elements of the same type are judged, for [`compare_by`]. `Err`
/// carries what the rule measured at an element it rejects (a distance, or
/// why the pair cannot be judged), so callers get a typed verdict rather
/// than a message. Case files (docs/format.md §4) use [`CaseRule`]; StableHLO's
/// `check` dialect has its own rules (`stablehlo_check.rs`).
pub trait ElementRule {
    type Miss;
    fn preds(&self, actual: bool, expected: bool) -> Result<(), Self::Miss>;
    /// Every integer type, widened exactly.
    fn ints(&self, actual: i128, expected: i128) -> Result<(), Self::Miss>;
    fn floats<T: Float>(&self, actual: T, expected: T) -> Result<(), Self::Miss>;
    fn complexes<T: Float>(&self, actual: Complex<T>, expected: Complex<T>) -> Result<(), Self::Miss>;
}

/// Why two values disagree under an [`ElementRule`].
#[derive(Clone, Debug, PartialEq)]
pub enum Disagreement<M> {
    /// Different shapes, element types, tuple arities or dynamic sizes.
    Shape(Mismatch),
    /// The first element (in row-major order) the rule rejects.
    Element(Mismatch, M),
}

impl<M> Disagreement<M> {
    pub fn mismatch(&self) -> &Mismatch {
        match self {
            Disagreement::Shape(m) | Disagreement::Element(m, _) => m,
        }
    }
}

/// Walks two values with `rule`: shapes must be equal, then every element
/// pair must pass.
pub fn compare_by<R: ElementRule>(actual: &Literal, expected: &Literal, rule: &R) -> Result<(), Disagreement<R::Miss>> {
    compare_at(actual, expected, rule, "")
}

fn compare_at<R: ElementRule>(actual: &Literal, expected: &Literal, rule: &R, at: &str) -> Result<(), Disagreement<R::Miss>> {
    let describe = |l: &Literal| l.shape().to_string();
    match (actual, expected) {
        (Literal::Token, Literal::Token) => Ok(()),
        (Literal::Tuple(a), Literal::Tuple(e)) if a.len() == e.len() => {
            a.iter().zip(e).enumerate().try_for_each(|(i, (x, y))| compare_at(x, y, rule, &format!("{at}{{{i}}}")))
        }
        (Literal::Array(a), Literal::Array(e)) if a.shape.element_type == e.shape.element_type && a.dims() == e.dims() => {
            compare_arrays(a, e, rule, at)
        }
        _ => Err(Disagreement::Shape(Mismatch {
            at: if at.is_empty() { "shape".into() } else { at.into() },
            expected: describe(expected),
            actual: describe(actual),
        })),
    }
}

fn compare_arrays<R: ElementRule>(a: &ArrayLiteral, e: &ArrayLiteral, rule: &R, at: &str) -> Result<(), Disagreement<R::Miss>> {
    if a.dynamic_sizes != e.dynamic_sizes && (a.dynamic_sizes.is_some() || e.dynamic_sizes.is_some()) {
        let sizes = |l: &ArrayLiteral| format!("{:?}", l.dynamic_sizes.clone().unwrap_or_else(|| l.dims().to_vec()));
        return Err(Disagreement::Shape(Mismatch { at: format!("{at}dynamic sizes"), expected: sizes(e), actual: sizes(a) }));
    }
    let storage = || Mismatch { at: format!("{at}storage"), expected: e.shape.to_string(), actual: a.shape.to_string() };
    let Err((position, miss)) = first_difference(&a.data, &e.data, rule).ok_or_else(|| Disagreement::Shape(storage()))? else {
        return Ok(());
    };
    let index = a.shape.unlinear(position);
    let element = |l: &ArrayLiteral| {
        let one = ArrayLiteral::new(vec![], l.data.element(position));
        write_literal(&Literal::Array(one), WriteOptions { exact_bits: true }).to_string()
    };
    Err(Disagreement::Element(Mismatch { at: format!("{at}{:?}", index.as_slice()), expected: element(e), actual: element(a) }, miss))
}

/// The position of the first element pair the rule rejects, with what the
/// rule measured there; `None` when the two are stored as different types
/// (which a literal of a checked element type never is).
fn first_difference<R: ElementRule>(a: &Data, e: &Data, rule: &R) -> Option<Result<(), (usize, R::Miss)>> {
    fn each<T: Copy, M>(a: &[T], e: &[T], judge: impl Fn(T, T) -> Result<(), M>) -> Result<(), (usize, M)> {
        a.iter().zip(e).enumerate().try_for_each(|(i, (&x, &y))| judge(x, y).map_err(|m| (i, m)))
    }
    fn ints<T: Int, R: ElementRule>(a: &[T], e: &[T], rule: &R) -> Result<(), (usize, R::Miss)> {
        each(a, e, |x: T, y: T| rule.ints(x.to_i128(), y.to_i128()))
    }
    Some(xlaref_reference::by_class2!((a, e), (x, y) => {
        pred: each(x, y, |p, q| rule.preds(p, q)),
        int: ints(x, y, rule),
        float: each(x, y, |p, q| rule.floats(p, q)),
        complex: each(x, y, |p, q| rule.complexes(p, q)),
    } else return None))
}

/// The rule of case files (docs/format.md §4): exact without a tolerance, else
/// within any of its bounds.
pub struct CaseRule<'a>(pub Option<&'a Tolerance>);

impl ElementRule for CaseRule<'_> {
    type Miss = ();
    fn preds(&self, actual: bool, expected: bool) -> Result<(), ()> {
        pass_if(actual == expected)
    }
    fn ints(&self, x: i128, y: i128) -> Result<(), ()> {
        pass_if(match self.0 {
            None => x == y,
            Some(t) => t.accepts(x as f64, y as f64, (x - y).unsigned_abs() as f64),
        })
    }
    fn floats<T: Float>(&self, actual: T, expected: T) -> Result<(), ()> {
        pass_if(float_matches(actual, expected, self.0))
    }
    fn complexes<T: Float>(&self, x: Complex<T>, y: Complex<T>) -> Result<(), ()> {
        pass_if(float_matches(x.re, y.re, self.0) && float_matches(x.im, y.im, self.0))
    }
}

fn pass_if(ok: bool) -> Result<(), ()> {
    if ok {
        Ok(())
    } else {
        Err(())
    }
}
/// Exact: same value, NaN matching any NaN, +0 and -0 different.
/// Under a tolerance: within any bound, +0 equal to -0.
fn float_matches<T: Float>(x: T, y: T, t: Option<&Tolerance>) -> bool {
    let (a, b) = (x.to_f64(), y.to_f64());
    match t {
        None => (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative()),
        Some(t) => {
            let ulps =
                if a == 0.0 && b == 0.0 { 0.0 } else { (total_order_key(x) as i128 - total_order_key(y) as i128).unsigned_abs() as f64 };
            t.accepts(a, b, ulps)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: Vec<f32>) -> Literal {
        Literal::Array(ArrayLiteral::from_vec(vec![v.len() as i64], v))
    }

    #[test]
    fn exact_rules() {
        assert!(compare(&f32s(vec![f32::NAN]), &f32s(vec![-f32::NAN]), None).is_none());
        assert!(compare(&f32s(vec![0.0]), &f32s(vec![-0.0]), None).is_some());
        let m = compare(&f32s(vec![1.0, 2.0]), &f32s(vec![1.0, 3.0]), None).unwrap();
        assert_eq!(m.at, "[1]");
    }

    #[test]
    fn tolerance_rules() {
        let t = Tolerance { ulp: Some(1.0), ..Tolerance::default() };
        let next = f32::from_bits(1.0f32.to_bits() + 1);
        assert!(compare(&f32s(vec![next]), &f32s(vec![1.0]), Some(&t)).is_none());
        let far = f32::from_bits(1.0f32.to_bits() + 2);
        assert!(compare(&f32s(vec![far]), &f32s(vec![1.0]), Some(&t)).is_some());
        assert!(compare(&f32s(vec![0.0]), &f32s(vec![-0.0]), Some(&t)).is_none());
        assert!(compare(&f32s(vec![f32::INFINITY]), &f32s(vec![f32::MAX]), Some(&Tolerance { rel: Some(1.0), ..Tolerance::default() }))
            .is_some());
        assert!(compare(&f32s(vec![f32::NAN]), &f32s(vec![1.0]), Some(&Tolerance { abs: Some(1e9), ..Tolerance::default() })).is_some());
    }
}
