//! Decimal text ↔ floats, exactly as docs/format.md §2 asks: a decimal is rounded
//! once, directly into its element type, and a float is written as the
//! shortest decimal that reads back to the same value in that type.

use num_bigint::BigUint;
use std::cmp::Ordering;

use super::small_float::Format;

/// A JSON number's magnitude: decimal digits and a power of ten.
struct Decimal {
    digits: BigUint,
    exp10: i64,
}

fn parse_decimal(text: &str) -> Option<Decimal> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let negative = bytes.first() == Some(&b'-');
    if negative || bytes.first() == Some(&b'+') {
        i += 1;
    }
    let mut digits = String::new();
    let mut exp10: i64 = 0;
    let mut seen_digit = false;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        digits.push(bytes[i] as char);
        seen_digit = true;
        i += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            digits.push(bytes[i] as char);
            exp10 -= 1;
            seen_digit = true;
            i += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let e: i64 = text[i + 1..].parse().ok()?;
        exp10 = exp10.checked_add(e)?;
        i = bytes.len();
    }
    if i != bytes.len() {
        return None;
    }
    let digits = BigUint::parse_bytes(digits.as_bytes(), 10)?;
    Some(Decimal { digits, exp10 })
}

/// Compares the magnitude of a decimal with a finite, non-negative f64, exactly.
fn compare_exact(d: &Decimal, x: f64) -> Ordering {
    let (mantissa, exp2) = decompose(x);
    let mut lhs = d.digits.clone();
    let mut rhs = BigUint::from(mantissa);
    if d.exp10 >= 0 {
        lhs *= BigUint::from(10u32).pow(d.exp10 as u32);
    } else {
        rhs *= BigUint::from(10u32).pow((-d.exp10) as u32);
    }
    if exp2 >= 0 {
        rhs <<= exp2 as usize;
    } else {
        lhs <<= (-exp2) as usize;
    }
    lhs.cmp(&rhs)
}

/// x = mantissa * 2^exp2 exactly, for finite x >= 0.
fn decompose(x: f64) -> (u64, i64) {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1 << 52) - 1);
    if field == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, field - 1075)
    }
}

/// Rounds a decimal number's text once into `format`, returning the exact
/// value as an f64 (±inf or NaN on overflow, as the format requires).
///
/// Parsing to f64 first is exact enough everywhere except when the f64
/// lands exactly on a tie of the narrower format: then the decimal's true
/// side of the tie is decided with big integers.
pub fn round_decimal(text: &str, format: Format) -> Option<f64> {
    // Digits beyond this never change a rounding decision a reader could
    // observe, and huge exponents are handled by f64 parsing alone.
    if text.len() > 800 {
        return None;
    }
    let wide: f64 = text.parse().ok()?;
    let decimal = parse_decimal(text)?;
    let bits = |v: f64| format.from_f64_bits(v);
    let rounded = format.to_f64(bits(wide));
    if !format.tie_at(wide) {
        return Some(rounded);
    }
    let side = compare_exact(&decimal, wide.abs());
    let nudged = match side {
        Ordering::Equal => wide,
        // Move off the tie by less than any quantum of the narrow format, in
        // the direction the exact decimal lies.
        Ordering::Greater => wide.abs().next_up().copysign(wide),
        Ordering::Less => wide.abs().next_down().copysign(wide),
    };
    Some(format.to_f64(bits(nudged)))
}

/// The shortest decimal text that reads back to `x` in a format (its
/// round-trip function is `read`). Uses plain notation for moderate
/// magnitudes and exponent notation otherwise.
pub fn shortest(x: f64, read: impl Fn(&str) -> Option<f64>) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    for precision in 0..17 {
        let text = format!("{:.*e}", precision, x);
        if read(&text).is_some_and(|back| back.to_bits() == x.to_bits()) {
            return pretty(text.parse().unwrap_or(x));
        }
    }
    pretty(x)
}

/// Formats an f64 that is already the shortest decimal: `1500.0`, `0.25`, `1e-07`.
pub fn pretty(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        return if x.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    if (1e-5..1e16).contains(&a) {
        let s = format!("{x}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::small_float::{BF16, F16, F8E4M3FN};

    #[test]
    fn decimal_on_a_tie_is_decided_exactly() {
        // 1 + 2^-11 is the f16 tie between 1 and 1 + 2^-10. A decimal a hair
        // above it parses to exactly the tie in f64 and must still round up.
        let above = "1.00048828125000000000000000001";
        assert_eq!(round_decimal(above, F16), Some(1.0 + 2f64.powi(-10)));
        assert_eq!(round_decimal("1.00048828125", F16), Some(1.0), "exact tie: to even");
        assert_eq!(round_decimal("1.00048828124999999999999999999", F16), Some(1.0));
        assert_eq!(round_decimal("464", F8E4M3FN), Some(448.0));
        assert!(round_decimal("465", F8E4M3FN).unwrap().is_nan());
        assert_eq!(round_decimal("-0", BF16).map(|v| v.is_sign_negative()), Some(true));
        assert_eq!(round_decimal("1e400", F16), Some(f64::INFINITY));
        assert!(round_decimal("abc", F16).is_none());
        assert!(round_decimal("1.2.3", F16).is_none());
    }

    #[test]
    fn shortest_round_trips() {
        let f16_read = |t: &str| round_decimal(t, F16);
        assert_eq!(shortest(0.0999755859375, f16_read), "0.1");
        assert_eq!(shortest(65504.0, f16_read), "65500.0");
        assert_eq!(shortest(0.1f32 as f64, |t| t.parse::<f32>().ok().map(|v| v as f64)), "0.1");
        assert_eq!(shortest(1e-7, |t| t.parse::<f64>().ok()), "1e-7");
        assert_eq!(shortest(-0.0, |t| t.parse::<f64>().ok()), "-0.0");
    }
}
