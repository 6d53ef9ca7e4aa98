//! Literals written straight to a byte stream, the same text
//! [`super::write_typed_literal`] gives but with no value tree in between:
//! a 16M-element result costs its own bytes, not a `serde_json::Value`
//! (about 80 bytes) and a `String` per element. Floats are formatted by
//! `ryu` (the shortest round-trip digits, the closest of them to the value,
//! as Rust's own formatting chooses), then laid
//! out as xla-json writes them (docs/format.md): plain decimals from 1e-5 up
//! to 1e16, exponent form outside, `.0` on whole numbers.

use super::literal::{WriteOptions, WriteShortest};
use crate::literal::{ArrayLiteral, Literal};
use crate::numerics::float::Float;
use crate::numerics::int::Int;
use num_complex::Complex;
use std::io::{self, Write};

/// Writes `{"shape": ..., "value": ...}` (compact, as `Value::to_string`).
pub fn write_typed_literal_to(literal: &Literal, options: WriteOptions, out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"{\"shape\":")?;
    serde_json::to_writer(&mut *out, &literal.shape().to_string())?;
    out.write_all(b",\"value\":")?;
    write_literal_to(literal, options, out)?;
    out.write_all(b"}")
}

/// Writes a literal's value (its shape is written elsewhere).
pub fn write_literal_to(literal: &Literal, options: WriteOptions, out: &mut impl Write) -> io::Result<()> {
    match literal {
        Literal::Token => out.write_all(b"{\"token\":null}"),
        Literal::Tuple(elems) => {
            out.write_all(b"{\"tuple\":[")?;
            for (i, e) in elems.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_literal_to(e, options, out)?;
            }
            out.write_all(b"]}")
        }
        Literal::Array(a) => write_array(a, options, out),
    }
}

fn write_array(a: &ArrayLiteral, options: WriteOptions, out: &mut impl Write) -> io::Result<()> {
    let dims = a.dims();
    let sizes = a.dynamic_sizes.as_deref().filter(|s| s.len() == dims.len()).unwrap_or(dims);
    let mut text = Text { options, float: ryu::Buffer::new(), int: itoa::Buffer::new() };
    crate::by_class!(&a.data, v => {
        pred: nest(out, v, dims, sizes, &mut text, |o, &b, _| o.write_all(if b { b"true" } else { b"false" })),
        int: nest(out, v, dims, sizes, &mut text, |o, &x, t| t.int(o, x.to_i128())),
        float: nest(out, v, dims, sizes, &mut text, |o, &x, t| x.write_text(o, t)),
        complex: nest(out, v, dims, sizes, &mut text, complex),
    })
}

/// How a real float type's elements are written: f32 and f64 through ryu,
/// the narrower types through their own shortest digits.
trait FloatText: Float + WriteShortest {
    fn write_text(self, out: &mut impl Write, t: &mut Text) -> io::Result<()>;
}

macro_rules! float_text {
    ($method:ident: $($t:ty),*) => {$(
        impl FloatText for $t {
            #[inline]
            fn write_text(self, out: &mut impl Write, t: &mut Text) -> io::Result<()> {
                t.$method(out, self)
            }
        }
    )*};
}
float_text!(float: f32, f64);
float_text!(small_float: half::f16, half::bf16, crate::numerics::f8::F8E4M3FN, crate::numerics::f8::F8E5M2);

/// A complex element: `[re, im]`.
fn complex<W: Write, F: FloatText>(out: &mut W, c: &Complex<F>, t: &mut Text) -> io::Result<()> {
    out.write_all(b"[")?;
    c.re.write_text(out, t)?;
    out.write_all(b",")?;
    c.im.write_text(out, t)?;
    out.write_all(b"]")
}

/// Writes row-major `v` of `dims` as nested lists, keeping the first
/// `sizes[i]` entries of each dimension (the dynamic sizes).
fn nest<W: Write, T>(
    out: &mut W,
    v: &[T],
    dims: &[i64],
    sizes: &[i64],
    text: &mut Text,
    element: impl Fn(&mut W, &T, &mut Text) -> io::Result<()> + Copy,
) -> io::Result<()> {
    let Some((&size, inner_dims)) = dims.split_first() else {
        return match v.first() {
            Some(x) => element(out, x, text),
            None => out.write_all(b"null"),
        };
    };
    let inner: usize = inner_dims.iter().map(|&d| d.max(0) as usize).product();
    let keep = sizes.first().copied().unwrap_or(size).clamp(0, size) as usize;
    out.write_all(b"[")?;
    for i in 0..keep {
        if i > 0 {
            out.write_all(b",")?;
        }
        let part = v.get(i * inner..(i + 1) * inner).unwrap_or(&[]);
        if inner_dims.is_empty() {
            match part.first() {
                Some(x) => element(out, x, text)?,
                None => out.write_all(b"null")?,
            }
        } else {
            nest(out, part, inner_dims, &sizes[1.min(sizes.len())..], text, element)?;
        }
    }
    out.write_all(b"]")
}

/// The formatters and options one array is written with.
struct Text {
    options: WriteOptions,
    float: ryu::Buffer,
    int: itoa::Buffer,
}

impl Text {
    /// An integer: a JSON number up to 2^53 in magnitude, a string beyond
    /// (where JSON readers would lose digits).
    fn int(&mut self, out: &mut impl Write, v: i128) -> io::Result<()> {
        let digits = self.int.format(v).as_bytes();
        if v.unsigned_abs() > 1u128 << 53 {
            out.write_all(b"\"")?;
            out.write_all(digits)?;
            out.write_all(b"\"")
        } else {
            out.write_all(digits)
        }
    }

    /// An f32 or f64: ryu's shortest digits, laid out as xla-json writes them.
    fn float<F: Float + WriteShortest + ryu::Float + Into<f64>>(&mut self, out: &mut impl Write, x: F) -> io::Result<()> {
        if self.special(out, x)? {
            return Ok(());
        }
        let magnitude = x.into().abs();
        let digits = self.float.format_finite(x);
        lay_out(out, digits, magnitude)
    }

    /// f16, bf16 and the f8 types: their own shortest digits.
    fn small_float<T: Float + WriteShortest>(&mut self, out: &mut impl Write, x: T) -> io::Result<()> {
        if self.special(out, x)? {
            return Ok(());
        }
        // serde_json's number text signs positive exponents.
        let text = x.shortest_text();
        match text.split_once('e') {
            Some((mantissa, exponent)) if !exponent.starts_with('-') => write!(out, "{mantissa}e+{exponent}"),
            _ => out.write_all(text.as_bytes()),
        }
    }

    /// Writes the quoted text of a value JSON numbers cannot carry
    /// (non-finite, negative zero) as [`super::literal::write_float`] does,
    /// and says whether `x` was one.
    fn special<T: Float + WriteShortest>(&self, out: &mut impl Write, x: T) -> io::Result<bool> {
        let v = x.to_f64();
        if v.is_finite() {
            if v == 0.0 && v.is_sign_negative() {
                out.write_all(b"\"-0\"")?;
                return Ok(true);
            }
            return Ok(false);
        }
        if self.options.exact_bits {
            write!(out, "\"0x{:0width$x}\"", x.to_bits(), width = (T::WIDTH / 4) as usize)?;
            return Ok(true);
        }
        out.write_all(match (v.is_nan(), v.is_sign_negative()) {
            (true, false) => b"\"nan\"",
            (true, true) => b"\"-nan\"",
            (false, false) => b"\"inf\"",
            (false, true) => b"\"-inf\"",
        })?;
        Ok(true)
    }
}

/// The shortest round-trip text of a finite f32 or f64 in xla-json's
/// layout (what [`write_literal_to`] writes for it).
pub fn shortest_text<F: ryu::Float + Into<f64>>(x: F) -> String {
    let mut out = Vec::new();
    let magnitude = x.into().abs();
    // Writing to memory cannot fail.
    let _ = lay_out(&mut out, ryu::Buffer::new().format(x), magnitude);
    String::from_utf8(out).unwrap_or_default()
}

/// Re-lays shortest digits (in ryu's layout: `1.5`, `1e-7`, `1.5e20`,
/// `0.001`, `123.0`) out as xla-json writes numbers.
fn lay_out(out: &mut impl Write, formatted: &str, magnitude: f64) -> io::Result<()> {
    let (negative, body) = match formatted.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, formatted),
    };
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (body, 0),
    };
    // digits × 10^(point - digits.len()), with leading and trailing zeros dropped.
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits = [0u8; 40];
    let mut n = 0;
    let mut point = exponent + int_part.len() as i32;
    for &b in int_part.as_bytes().iter().chain(frac_part.as_bytes()) {
        if n == 0 && b == b'0' {
            point -= 1;
            continue;
        }
        if n < digits.len() {
            digits[n] = b;
            n += 1;
        }
    }
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    if n == 0 {
        return out.write_all(if negative { b"-0.0" } else { b"0.0" });
    }
    let digits = &digits[..n];
    if negative {
        out.write_all(b"-")?;
    }
    if magnitude == 0.0 || (1e-5..1e16).contains(&magnitude) {
        // Plain decimal: `point` digits before the decimal point.
        if point <= 0 {
            out.write_all(b"0.")?;
            for _ in 0..-point {
                out.write_all(b"0")?;
            }
            return out.write_all(digits);
        }
        let p = point as usize;
        if p >= n {
            out.write_all(digits)?;
            for _ in n..p {
                out.write_all(b"0")?;
            }
            return out.write_all(b".0");
        }
        out.write_all(&digits[..p])?;
        out.write_all(b".")?;
        return out.write_all(&digits[p..]);
    }
    // Exponent form, as Rust's `{:e}` then serde_json's number text:
    // `d[.ddd]e+x` or `d[.ddd]e-x`.
    out.write_all(&digits[..1])?;
    if n > 1 {
        out.write_all(b".")?;
        out.write_all(&digits[1..])?;
    }
    let exponent = point - 1;
    out.write_all(if exponent < 0 { b"e-" } else { b"e+" })?;
    out.write_all(itoa::Buffer::new().format(exponent.unsigned_abs()).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::write_typed_literal;
    use crate::literal::Data;
    use crate::types::ElementType;

    fn streamed(l: &Literal, exact_bits: bool) -> String {
        let mut out = Vec::new();
        write_typed_literal_to(l, WriteOptions { exact_bits }, &mut out).expect("write to memory");
        String::from_utf8(out).expect("utf-8")
    }

    fn same_text(l: &Literal) {
        for exact_bits in [false, true] {
            let (new, old) = (streamed(l, exact_bits), write_typed_literal(l, WriteOptions { exact_bits }).to_string());
            if new != old {
                let at = new.bytes().zip(old.bytes()).position(|(a, b)| a != b).unwrap_or(new.len().min(old.len()));
                let around = |s: &str| s.get(at.saturating_sub(60)..(at + 60).min(s.len())).unwrap_or("").to_string();
                panic!("streamed text differs at byte {at}:\n new …{}…\n old …{}…", around(&new), around(&old));
            }
        }
    }

    /// A pseudo-random bit pattern per position (splitmix64).
    fn bits(i: u64) -> u64 {
        let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 30)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn floats_are_written_as_the_value_tree_writes_them() {
        let mut f64s: Vec<f64> = (0..200_000u64).map(|i| f64::from_bits(bits(i))).collect();
        let mut f32s: Vec<f32> = (0..200_000u64).map(|i| f32::from_bits(bits(i) as u32)).collect();
        // Around the layout's switches and the integers.
        for e in -8..20 {
            for m in [1.0, 1.5, 9.999_999, 0.999_999_9, 123.25] {
                let x = m * 10f64.powi(e);
                f64s.extend([x, -x, x.next_up(), x.next_down()]);
                f32s.extend([x as f32, -(x as f32)]);
            }
        }
        f64s.extend([0.0, -0.0, 1e16, 1e-5, 9.999_999_999_999_998e15, f64::MIN_POSITIVE, 5e-324, f64::MAX, f64::NAN, f64::INFINITY]);
        f32s.extend([0.0, -0.0, 1e16, 1e-5, f32::MIN_POSITIVE, 1e-45, f32::MAX, f32::NAN, -f32::INFINITY, 16777216.0]);
        let n64 = f64s.len() as i64;
        let n32 = f32s.len() as i64;
        same_text(&Literal::Array(ArrayLiteral::from_vec(vec![n64], f64s)));
        same_text(&Literal::Array(ArrayLiteral::from_vec(vec![n32], f32s)));
    }

    /// Elements of type `t` made from the bit patterns `words` (a complex
    /// element's imaginary part from the word rotated, so the parts differ).
    fn from_bits(t: ElementType, words: &[u64]) -> Data {
        use crate::numerics::bits::Bits;
        fn each<T: Bits + crate::literal::Stored>(words: &[u64]) -> Data {
            let spread = |w: u64| u128::from(w) | u128::from(w.rotate_left(17)) << (T::TYPE.bit_width() / 2);
            let bits = |w: u64| if T::TYPE.is_complex() { spread(w) } else { u128::from(w) };
            T::wrap(words.iter().map(|&w| T::with_bits(bits(w))).collect())
        }
        crate::with_type!(t, T => each::<T>(words))
    }

    #[test]
    fn every_type_nesting_and_dynamic_size() {
        for t in ElementType::ALL {
            let data: Vec<u64> = (0..24u64).map(bits).collect();
            let mut a = ArrayLiteral::with_shape(crate::types::ArrayShape::new(t, vec![2, 3, 4]), from_bits(t, &data));
            same_text(&Literal::Array(a.clone()));
            a.dynamic_sizes = Some(vec![2, 1, 3]);
            same_text(&Literal::Array(a.clone()));
            same_text(&Literal::Array(a.reshaped(vec![24])));
            same_text(&Literal::Array(ArrayLiteral::with_shape(crate::types::ArrayShape::new(t, vec![]), from_bits(t, &data[..1]))));
            same_text(&Literal::Array(ArrayLiteral::with_shape(crate::types::ArrayShape::new(t, vec![0, 3]), from_bits(t, &[]))));
        }
        let tuple = Literal::Tuple(vec![Literal::Token, Literal::Array(ArrayLiteral::scalar(2.5f32)), Literal::Tuple(vec![])]);
        same_text(&tuple);
        // Integers at JSON's exact limit, both sides.
        same_text(&Literal::Array(ArrayLiteral::from_vec(vec![4], vec![1i64 << 53, (1 << 53) + 1, -(1 << 53) - 1, i64::MIN])));
        same_text(&Literal::Array(ArrayLiteral::from_vec(vec![1], vec![u64::MAX])));
    }
}
