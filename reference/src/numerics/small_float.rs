//! Rounding an `f64` into a binary floating-point format of any width, at
//! the bit level, round-to-nearest-even. One routine serves f16, bf16, both
//! f8 kinds, decimal reading and ReducePrecision, so they cannot disagree.

/// What a format does with its all-ones exponent field.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Special {
    /// IEEE 754: all-ones exponent is ±inf (zero mantissa) or NaN.
    Ieee,
    /// `fn` formats (f8e4m3fn): no infinities; only all-ones exponent *and*
    /// mantissa is NaN, the rest of that binade holds finite numbers.
    FiniteNanOnly,
}

/// A binary floating-point format: `mantissa_bits` explicit fraction bits,
/// `exponent_bits` exponent bits with the IEEE bias `2^(e-1) - 1`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Format {
    pub mantissa_bits: u32,
    pub exponent_bits: u32,
    pub special: Special,
}

pub const F16: Format = Format { mantissa_bits: 10, exponent_bits: 5, special: Special::Ieee };
pub const BF16: Format = Format { mantissa_bits: 7, exponent_bits: 8, special: Special::Ieee };
pub const F32: Format = Format { mantissa_bits: 23, exponent_bits: 8, special: Special::Ieee };
pub const F8E4M3FN: Format = Format { mantissa_bits: 3, exponent_bits: 4, special: Special::FiniteNanOnly };
pub const F8E5M2: Format = Format { mantissa_bits: 2, exponent_bits: 5, special: Special::Ieee };

/// The format of a float type narrower than f32, whose decimal text is
/// rounded here rather than by Rust's parser (None for f32, f64 and the
/// non-float types).
pub fn narrow_format(t: crate::types::ElementType) -> Option<Format> {
    use crate::types::ElementType as E;
    match t {
        E::F16 => Some(F16),
        E::BF16 => Some(BF16),
        E::F8E4M3FN => Some(F8E4M3FN),
        E::F8E5M2 => Some(F8E5M2),
        _ => None,
    }
}

/// Where a value lands when rounded into a format.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Rounded {
    /// A finite value of the format (exactly representable in f64).
    Finite(f64),
    /// Beyond the largest finite value: ±inf for IEEE formats.
    Overflow {
        negative: bool,
    },
    Nan,
}

impl Format {
    pub fn bias(self) -> i32 {
        (1 << (self.exponent_bits - 1)) - 1
    }

    /// Exponent of the smallest normal number.
    pub fn min_exponent(self) -> i32 {
        1 - self.bias()
    }

    /// Exponent of the largest finite binade.
    pub fn max_exponent(self) -> i32 {
        match self.special {
            Special::Ieee => self.bias(),
            Special::FiniteNanOnly => self.bias() + 1,
        }
    }

    /// The largest finite value.
    pub fn max_finite(self) -> f64 {
        let m = self.mantissa_bits as i32;
        let top_mantissa = match self.special {
            // all-ones mantissa is NaN in the top binade, so one step below it
            Special::FiniteNanOnly => 2.0 - 2f64.powi(1 - m),
            Special::Ieee => 2.0 - 2f64.powi(-m),
        };
        top_mantissa * 2f64.powi(self.max_exponent())
    }

    /// Spacing of representable values around `a` (a > 0, finite).
    fn quantum(self, a: f64) -> f64 {
        let e = exponent_of(a).max(self.min_exponent());
        2f64.powi(e - self.mantissa_bits as i32)
    }

    /// Rounds `x` to the nearest value of the format, ties to even.
    pub fn round(self, x: f64) -> Rounded {
        if x.is_nan() {
            return Rounded::Nan;
        }
        let negative = x.is_sign_negative();
        if x.is_infinite() {
            return Rounded::Overflow { negative };
        }
        let a = x.abs();
        if a == 0.0 {
            return Rounded::Finite(x);
        }
        let q = self.quantum(a);
        // a/q and n*q are exact: both are scalings by a power of two well
        // inside f64's range for every format this crate uses.
        let n = (a / q).round_ties_even();
        let r = n * q;
        if r > self.max_finite() {
            return Rounded::Overflow { negative };
        }
        Rounded::Finite(if negative { -r } else { r })
    }

    /// The tie point of rounding `x` into the format, if `x` is exactly
    /// halfway between two neighbours (the overflow threshold included).
    pub fn tie_at(self, x: f64) -> bool {
        if !x.is_finite() || x == 0.0 {
            return false;
        }
        let a = x.abs();
        let q = self.quantum(a);
        (a / q).fract() == 0.5
    }

    /// Encodes a finite value of the format (as returned by [`Format::round`])
    /// into its bit pattern.
    pub fn encode_finite(self, v: f64) -> u64 {
        let sign = if v.is_sign_negative() { 1u64 << (self.exponent_bits + self.mantissa_bits) } else { 0 };
        let a = v.abs();
        if a == 0.0 {
            return sign;
        }
        let m = self.mantissa_bits as i32;
        let e = exponent_of(a);
        if e < self.min_exponent() {
            let mantissa = (a / 2f64.powi(self.min_exponent() - m)) as u64;
            return sign | mantissa;
        }
        let mantissa = (a / 2f64.powi(e - m)) as u64 - (1u64 << m);
        let field = (e + self.bias()) as u64;
        sign | (field << m) | mantissa
    }

    /// All-ones exponent and mantissa: the NaN pattern both kinds share.
    pub fn nan_bits(self, negative: bool) -> u64 {
        let width = self.exponent_bits + self.mantissa_bits;
        let magnitude = match self.special {
            Special::Ieee => ((1u64 << self.exponent_bits) - 1) << self.mantissa_bits | 1 << (self.mantissa_bits - 1),
            Special::FiniteNanOnly => (1u64 << width) - 1,
        };
        if negative {
            magnitude | 1 << width
        } else {
            magnitude
        }
    }

    pub fn inf_bits(self, negative: bool) -> u64 {
        let width = self.exponent_bits + self.mantissa_bits;
        let magnitude = ((1u64 << self.exponent_bits) - 1) << self.mantissa_bits;
        if negative {
            magnitude | 1 << width
        } else {
            magnitude
        }
    }

    /// Rounds `x` into the format and returns the bits. Overflow gives ±inf
    /// in IEEE formats and NaN in `fn` formats (XLA's conversion, not a
    /// saturation); NaN keeps its sign.
    pub fn from_f64_bits(self, x: f64) -> u64 {
        match self.round(x) {
            Rounded::Finite(v) => self.encode_finite(v),
            Rounded::Overflow { negative } => match self.special {
                Special::Ieee => self.inf_bits(negative),
                Special::FiniteNanOnly => self.nan_bits(negative),
            },
            Rounded::Nan => self.nan_bits(x.is_sign_negative()),
        }
    }

    /// Decodes a bit pattern of the format exactly into an f64.
    pub fn to_f64(self, bits: u64) -> f64 {
        let m = self.mantissa_bits;
        let width = self.exponent_bits + m;
        let negative = bits >> width & 1 == 1;
        let field = (bits >> m) & ((1 << self.exponent_bits) - 1);
        let mantissa = bits & ((1 << m) - 1);
        let all_ones = field == (1 << self.exponent_bits) - 1;
        let magnitude = match self.special {
            Special::Ieee if all_ones => {
                if mantissa == 0 {
                    f64::INFINITY
                } else {
                    f64::NAN
                }
            }
            Special::FiniteNanOnly if all_ones && mantissa == (1 << m) - 1 => f64::NAN,
            _ if field == 0 => mantissa as f64 * 2f64.powi(self.min_exponent() - m as i32),
            _ => (mantissa as f64 / (1u64 << m) as f64 + 1.0) * 2f64.powi(field as i32 - self.bias()),
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// floor(log2(a)) for finite a > 0, exact (from the f64's own bits).
pub fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    if field == 0 {
        // f64 subnormal: normalise by the position of the top set bit
        let mantissa = bits & ((1u64 << 52) - 1);
        -1011 - mantissa.leading_zeros() as i32
    } else {
        field - 1023
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f8e4m3fn_constants() {
        assert_eq!(F8E4M3FN.max_finite(), 448.0);
        assert_eq!(F8E4M3FN.from_f64_bits(448.0), 0x7e);
        assert_eq!(F8E4M3FN.from_f64_bits(464.0), 0x7e, "tie rounds to even 448");
        assert_eq!(F8E4M3FN.from_f64_bits(465.0), 0x7f, "past the tie: NaN, not saturation");
        assert_eq!(F8E4M3FN.from_f64_bits(f64::INFINITY), 0x7f);
        assert_eq!(F8E4M3FN.from_f64_bits(-1.0), 0xb8);
        assert_eq!(F8E4M3FN.from_f64_bits(2f64.powi(-9)), 0x01, "smallest subnormal");
        assert_eq!(F8E4M3FN.from_f64_bits(2f64.powi(-10)), 0x00, "tie to even zero");
        assert!(F8E4M3FN.to_f64(0x7f).is_nan());
        assert_eq!(F8E4M3FN.to_f64(0x7e), 448.0);
        assert_eq!(F8E4M3FN.to_f64(0x01), 2f64.powi(-9));
    }

    #[test]
    fn f8e5m2_constants() {
        assert_eq!(F8E5M2.max_finite(), 57344.0);
        assert_eq!(F8E5M2.from_f64_bits(61440.0), 0x7c, "tie above max rounds to inf");
        assert_eq!(F8E5M2.from_f64_bits(61439.0), 0x7b);
        assert_eq!(F8E5M2.to_f64(0x7c), f64::INFINITY);
        assert!(F8E5M2.to_f64(0x7e).is_nan());
        assert_eq!(F8E5M2.to_f64(0x01), 2f64.powi(-16));
    }

    #[test]
    fn agrees_with_half_on_every_f16_and_bf16() {
        for bits in 0..=u16::MAX {
            let h = half::f16::from_bits(bits);
            let v = F16.to_f64(bits as u64);
            if h.is_nan() {
                assert!(v.is_nan());
                continue;
            }
            assert_eq!(v, h.to_f64());
            assert_eq!(F16.from_f64_bits(v), bits as u64);
            let b = half::bf16::from_bits(bits);
            if !b.is_nan() {
                assert_eq!(BF16.to_f64(bits as u64), b.to_f64());
            }
        }
    }

    #[test]
    fn f32_rounding_matches_hardware() {
        let samples = [
            1.0f64 + 2f64.powi(-24),
            1.0 + 3.0 * 2f64.powi(-24),
            3.4028235677973366e38,
            3.4028235677973367e38,
            1e-45,
            7e-46,
            0.1,
            -2.5e-40,
        ];
        for x in samples {
            assert_eq!(F32.from_f64_bits(x), (x as f32).to_bits() as u64, "{x}");
        }
    }
}
