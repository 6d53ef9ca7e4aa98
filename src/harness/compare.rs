//! Comparing an actual result with an expected one (FORMAT.md §4): exact by
//! default, or within a case's `tolerance`.

use std::fmt;

use num_complex::Complex;
use serde_json::Value;
use xlaref_reference::json::{write_literal, WriteOptions};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::float::{total_order_key, Float};

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
    compare_at(actual, expected, tolerance, "")
}

fn compare_at(actual: &Literal, expected: &Literal, tolerance: Option<&Tolerance>, at: &str) -> Option<Mismatch> {
    let describe = |l: &Literal| l.shape().to_string();
    match (actual, expected) {
        (Literal::Token, Literal::Token) => None,
        (Literal::Tuple(a), Literal::Tuple(e)) if a.len() == e.len() => {
            a.iter().zip(e).enumerate().find_map(|(i, (x, y))| compare_at(x, y, tolerance, &format!("{at}{{{i}}}")))
        }
        (Literal::Array(a), Literal::Array(e)) if a.shape.element_type == e.shape.element_type && a.dims() == e.dims() => {
            compare_arrays(a, e, tolerance, at)
        }
        _ => Some(Mismatch {
            at: if at.is_empty() { "shape".into() } else { at.into() },
            expected: describe(expected),
            actual: describe(actual),
        }),
    }
}

fn compare_arrays(a: &ArrayLiteral, e: &ArrayLiteral, tolerance: Option<&Tolerance>, at: &str) -> Option<Mismatch> {
    if a.dynamic_sizes != e.dynamic_sizes && (a.dynamic_sizes.is_some() || e.dynamic_sizes.is_some()) {
        let sizes = |l: &ArrayLiteral| format!("{:?}", l.dynamic_sizes.clone().unwrap_or_else(|| l.dims().to_vec()));
        return Some(Mismatch { at: format!("{at}dynamic sizes"), expected: sizes(e), actual: sizes(a) });
    }
    let position = first_difference(&a.data, &e.data, tolerance)?;
    let index = a.shape.unlinear(position);
    let element = |l: &ArrayLiteral| {
        let one = ArrayLiteral::new(vec![], l.data.element(position));
        write_literal(&Literal::Array(one), WriteOptions { exact_bits: true }).to_string()
    };
    Some(Mismatch { at: format!("{at}{:?}", index.as_slice()), expected: element(e), actual: element(a) })
}

/// The position of the first element that differs, if any.
fn first_difference(a: &Data, e: &Data, t: Option<&Tolerance>) -> Option<usize> {
    fn ints<T: Copy + Into<i128>>(a: &[T], e: &[T], t: Option<&Tolerance>) -> Option<usize> {
        a.iter().zip(e).position(|(&x, &y)| {
            let (x, y): (i128, i128) = (x.into(), y.into());
            match t {
                None => x != y,
                Some(t) => !t.accepts(x as f64, y as f64, (x - y).unsigned_abs() as f64),
            }
        })
    }
    fn floats<T: Float>(a: &[T], e: &[T], t: Option<&Tolerance>) -> Option<usize> {
        a.iter().zip(e).position(|(&x, &y)| !float_matches(x, y, t))
    }
    fn complexes<T: Float>(a: &[Complex<T>], e: &[Complex<T>], t: Option<&Tolerance>) -> Option<usize> {
        a.iter().zip(e).position(|(x, y)| !(float_matches(x.re, y.re, t) && float_matches(x.im, y.im, t)))
    }
    match (a, e) {
        (Data::Pred(x), Data::Pred(y)) => x.iter().zip(y).position(|(p, q)| p != q),
        (Data::S8(x), Data::S8(y)) => ints(x, y, t),
        (Data::S16(x), Data::S16(y)) => ints(x, y, t),
        (Data::S32(x), Data::S32(y)) => ints(x, y, t),
        (Data::S64(x), Data::S64(y)) => ints(x, y, t),
        (Data::U8(x), Data::U8(y)) => ints(x, y, t),
        (Data::U16(x), Data::U16(y)) => ints(x, y, t),
        (Data::U32(x), Data::U32(y)) => ints(x, y, t),
        (Data::U64(x), Data::U64(y)) => ints(x, y, t),
        (Data::F16(x), Data::F16(y)) => floats(x, y, t),
        (Data::BF16(x), Data::BF16(y)) => floats(x, y, t),
        (Data::F32(x), Data::F32(y)) => floats(x, y, t),
        (Data::F64(x), Data::F64(y)) => floats(x, y, t),
        (Data::F8E4M3FN(x), Data::F8E4M3FN(y)) => floats(x, y, t),
        (Data::F8E5M2(x), Data::F8E5M2(y)) => floats(x, y, t),
        (Data::C64(x), Data::C64(y)) => complexes(x, y, t),
        (Data::C128(x), Data::C128(y)) => complexes(x, y, t),
        _ => Some(0),
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
