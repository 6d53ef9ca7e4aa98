//! f8 conversions of the fast engine, by bit manipulation on the f64
//! pattern (the reference rounds by scaling instead): round to nearest
//! even; overflow gives NaN in e4m3fn (no infinities) and ±inf in e5m2.

use std::sync::OnceLock;

pub use xlaref_reference::numerics::f8::{F8E4M3FN, F8E5M2};

/// Rounds |x| (finite, as f64 bits) to `m` mantissa bits with minimum
/// normal exponent `emin`; returns (biased exponent field, mantissa field)
/// for a format with bias `bias`, or None on overflow of the exponent field
/// range `max_field`.
fn round_fields(x: f64, m: u32, bias: i32) -> (i64, u64) {
    let bits = x.to_bits() & !(1 << 63);
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let emin = 1 - bias as i64;
    // Significand with the implicit bit, as a 53-bit integer.
    let sig = if bits >> 52 == 0 { bits & ((1 << 52) - 1) } else { (bits & ((1 << 52) - 1)) | (1 << 52) };
    let e = if bits >> 52 == 0 { -1022 } else { exp };
    // Bits of `sig` to drop: 52 - m for normals, more below emin.
    let drop = 52 - m as i64 + (emin - e).max(0);
    if drop >= 64 {
        return (0, 0);
    }
    let drop = drop as u32;
    let kept = sig >> drop;
    let rest = sig & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    let rounded = kept + u64::from(rest > half || (rest == half && kept & 1 == 1));
    if e < emin {
        // subnormal result (may round up into the smallest normal)
        let field = i64::from(rounded >> m != 0);
        return (field, rounded & ((1 << m) - 1));
    }
    let mut field = e + bias as i64;
    let mut mant = rounded;
    if mant >> (m + 1) != 0 {
        field += 1;
        mant >>= 1;
    }
    (field, mant & ((1 << m) - 1))
}

/// f64 → f8e4m3fn (4 exponent bits, bias 7, 3 mantissa bits, NaN = S.1111.111).
pub fn e4m3fn_from_f64(x: f64) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    if !x.is_finite() {
        return sign | 0x7f;
    }
    let (field, mant) = round_fields(x, 3, 7);
    if field > 15 || (field == 15 && mant == 7) {
        return sign | 0x7f;
    }
    sign | (field as u8) << 3 | mant as u8
}

/// f64 → f8e5m2 (IEEE-style: 5 exponent bits, bias 15, 2 mantissa bits).
pub fn e5m2_from_f64(x: f64) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    if x.is_nan() {
        return sign | 0x7e;
    }
    if x.is_infinite() {
        return sign | 0x7c;
    }
    let (field, mant) = round_fields(x, 2, 15);
    if field >= 31 {
        return sign | 0x7c;
    }
    sign | (field as u8) << 2 | mant as u8
}

fn table(decode: fn(u8) -> f32) -> [f32; 256] {
    let mut t = [0.0; 256];
    for (i, v) in t.iter_mut().enumerate() {
        *v = decode(i as u8);
    }
    t
}

fn decode(b: u8, m: u32, bias: i32, ieee: bool) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let field = ((b & 0x7f) >> m) as i32;
    let mant = (b & ((1 << m) - 1)) as f32;
    let top = (1 << (7 - m)) - 1;
    if field == top && ieee {
        return if mant == 0.0 { sign * f32::INFINITY } else { f32::NAN.copysign(sign) };
    }
    if field == top && !ieee && mant as u32 == (1 << m) - 1 {
        return f32::NAN.copysign(sign);
    }
    let scale = (1u32 << m) as f32;
    if field == 0 {
        sign * mant / scale * 2f32.powi(1 - bias)
    } else {
        sign * (1.0 + mant / scale) * 2f32.powi(field - bias)
    }
}

pub fn e4m3fn_to_f32(b: u8) -> f32 {
    static T: OnceLock<[f32; 256]> = OnceLock::new();
    T.get_or_init(|| table(|b| decode(b, 3, 7, false)))[b as usize]
}

pub fn e5m2_to_f32(b: u8) -> f32 {
    static T: OnceLock<[f32; 256]> = OnceLock::new();
    T.get_or_init(|| table(|b| decode(b, 2, 15, true)))[b as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_pattern() {
        for b in 0..=255u8 {
            let x = e4m3fn_to_f32(b);
            if !x.is_nan() {
                assert_eq!(e4m3fn_from_f64(x as f64), b, "e4m3fn {b:#x}");
            }
            let y = e5m2_to_f32(b);
            if !y.is_nan() {
                assert_eq!(e5m2_from_f64(y as f64), b, "e5m2 {b:#x}");
            }
        }
    }

    #[test]
    fn rounding_corners() {
        assert_eq!(e4m3fn_from_f64(464.0), 0x7e);
        assert_eq!(e4m3fn_from_f64(465.0), 0x7f);
        assert_eq!(e4m3fn_from_f64(-1e9), 0xff);
        assert_eq!(e4m3fn_from_f64(2f64.powi(-10)), 0x00);
        assert_eq!(e4m3fn_from_f64(1.5 * 2f64.powi(-9)), 0x02);
        assert_eq!(e5m2_from_f64(61440.0), 0x7c);
        assert_eq!(e5m2_from_f64(61439.0), 0x7b);
        assert_eq!(e5m2_from_f64(1e-30), 0x00);
        assert_eq!(e4m3fn_from_f64(1.0 + 2f64.powi(-4) + 2f64.powi(-40)), 0x39);
    }
}
