//! Integer element semantics: two's-complement wraparound, and the values
//! XLA's CPU backend gives where the document says "implementation defined"
//! (division by zero, `INT_MIN / -1`) or says nothing (shift amounts outside
//! `[0, bits)`, negative powers). See docs/semantics-decisions.md.

use crate::types::Element;

/// The integer operations of the document, on one storage type.
pub trait Int: Element + Ord + Eq {
    const BITS: u32;
    const SIGNED: bool;
    const MIN: Self;
    const MAX: Self;

    fn add(self, rhs: Self) -> Self;
    fn sub(self, rhs: Self) -> Self;
    fn mul(self, rhs: Self) -> Self;
    /// Truncating division. Implementation-defined corners, as XLA CPU:
    /// `x / 0 = -1` (all bits set: `MAX` for unsigned), `MIN / -1 = MIN`.
    fn div(self, rhs: Self) -> Self;
    /// Remainder with the sign of the dividend. Implementation-defined
    /// corners, as XLA CPU: `x % 0 = x`, `MIN % -1 = 0`.
    fn rem(self, rhs: Self) -> Self;
    /// `self^exp` by repeated multiplication, wrapping. A negative exponent
    /// gives 0, except that 1 stays 1 and -1 alternates (as XLA CPU).
    fn pow(self, exp: Self) -> Self;
    fn and(self, rhs: Self) -> Self;
    fn or(self, rhs: Self) -> Self;
    fn xor(self, rhs: Self) -> Self;
    fn not(self) -> Self;
    /// Shift amounts are read as unsigned: any amount `>= BITS` (negative
    /// ones included) shifts every bit out.
    fn shift_left(self, amount: Self) -> Self;
    /// Amounts `>= BITS` leave only copies of the sign bit.
    fn shift_right_arithmetic(self, amount: Self) -> Self;
    /// Amounts `>= BITS` give 0.
    fn shift_right_logical(self, amount: Self) -> Self;
    fn neg(self) -> Self;
    /// `abs(MIN) = MIN` (wraps).
    fn abs(self) -> Self;
    /// -1, 0 or 1.
    fn sign(self) -> Self;
    fn population_count(self) -> Self;
    fn count_leading_zeros(self) -> Self;
    /// The value as a wide integer, exactly.
    fn to_i128(self) -> i128;
    /// The low `BITS` bits of `v` (two's-complement truncation).
    fn wrap_i128(v: i128) -> Self;
}

macro_rules! int_impl {
    ($t:ty, $u:ty, $signed:expr) => {
        impl Int for $t {
            const BITS: u32 = <$t>::BITS;
            const SIGNED: bool = $signed;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;

            fn add(self, rhs: Self) -> Self {
                self.wrapping_add(rhs)
            }
            fn sub(self, rhs: Self) -> Self {
                self.wrapping_sub(rhs)
            }
            fn mul(self, rhs: Self) -> Self {
                self.wrapping_mul(rhs)
            }
            fn div(self, rhs: Self) -> Self {
                if rhs == 0 {
                    !0
                } else {
                    // wrapping_div: MIN / -1 = MIN
                    self.wrapping_div(rhs)
                }
            }
            fn rem(self, rhs: Self) -> Self {
                if rhs == 0 {
                    self
                } else {
                    // wrapping_rem: MIN % -1 = 0
                    self.wrapping_rem(rhs)
                }
            }
            #[allow(unused_comparisons)]
            fn pow(self, exp: Self) -> Self {
                if exp < 0 {
                    return match self as i128 {
                        1 => 1,
                        -1 if exp.to_i128() % 2 == 0 => 1,
                        -1 => self,
                        _ => 0,
                    };
                }
                let mut result: $t = 1;
                let mut base = self;
                let mut e = exp as $u;
                while e > 0 {
                    if e & 1 == 1 {
                        result = result.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                result
            }
            fn and(self, rhs: Self) -> Self {
                self & rhs
            }
            fn or(self, rhs: Self) -> Self {
                self | rhs
            }
            fn xor(self, rhs: Self) -> Self {
                self ^ rhs
            }
            fn not(self) -> Self {
                !self
            }
            fn shift_left(self, amount: Self) -> Self {
                let a = amount as $u;
                if a >= Self::BITS as $u {
                    0
                } else {
                    self << a
                }
            }
            fn shift_right_arithmetic(self, amount: Self) -> Self {
                // Sign-extend the bits (whatever the type's signedness) and
                // shift by at most BITS - 1, which leaves only sign copies.
                let bits = self as $u as i128;
                let extended = (bits << (128 - Self::BITS)) >> (128 - Self::BITS);
                let a = amount as $u;
                let shift = if a >= Self::BITS as $u { Self::BITS - 1 } else { a as u32 };
                (extended >> shift) as $t
            }
            fn shift_right_logical(self, amount: Self) -> Self {
                let a = amount as $u;
                if a >= Self::BITS as $u {
                    0
                } else {
                    ((self as $u) >> a) as $t
                }
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            #[allow(unused_comparisons)]
            fn abs(self) -> Self {
                if self < 0 {
                    self.wrapping_neg()
                } else {
                    self
                }
            }
            #[allow(unused_comparisons)]
            fn sign(self) -> Self {
                if self < 0 {
                    (0 as $t).wrapping_sub(1)
                } else if self == 0 {
                    0
                } else {
                    1
                }
            }
            fn population_count(self) -> Self {
                self.count_ones() as $t
            }
            fn count_leading_zeros(self) -> Self {
                self.leading_zeros() as $t
            }
            fn to_i128(self) -> i128 {
                self as i128
            }
            fn wrap_i128(v: i128) -> Self {
                v as $t
            }
        }
    };
}

int_impl!(i8, u8, true);
int_impl!(i16, u16, true);
int_impl!(i32, u32, true);
int_impl!(i64, u64, true);
int_impl!(u8, u8, false);
int_impl!(u16, u16, false);
int_impl!(u32, u32, false);
int_impl!(u64, u64, false);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_corners_as_xla_cpu() {
        assert_eq!(Int::div(7i32, 0), -1);
        assert_eq!(Int::div(i32::MIN, -1), i32::MIN);
        assert_eq!(Int::div(-7i32, 2), -3);
        assert_eq!(Int::rem(-7i32, 0), -7);
        assert_eq!(Int::rem(i32::MIN, -1), 0);
        assert_eq!(Int::rem(-7i32, 2), -1);
        assert_eq!(Int::div(7u32, 0), u32::MAX);
        assert_eq!(Int::rem(7u32, 0), 7);
    }

    #[test]
    fn shifts_as_xla_cpu() {
        assert_eq!(1i32.shift_left(31), i32::MIN);
        assert_eq!(1i32.shift_left(32), 0);
        assert_eq!(1i32.shift_left(-1), 0);
        assert_eq!((-8i32).shift_right_arithmetic(1), -4);
        assert_eq!((-8i32).shift_right_arithmetic(32), -1);
        assert_eq!(8i32.shift_right_arithmetic(-1), 0);
        assert_eq!((-8i32).shift_right_logical(1), 2147483644);
        assert_eq!((-8i32).shift_right_logical(32), 0);
        assert_eq!(0x80u8.shift_right_arithmetic(1), 0xc0);
        assert_eq!(0x80u8.shift_right_arithmetic(9), 0xff);
    }

    #[test]
    fn powers_as_xla_cpu() {
        assert_eq!(2i32.pow(10), 1024);
        assert_eq!(Int::pow(2i32, -1), 0);
        assert_eq!(Int::pow(1i32, -5), 1);
        assert_eq!(Int::pow(-1i32, -5), -1);
        assert_eq!(Int::pow(-1i32, -4), 1);
        assert_eq!(Int::pow(0i32, 0), 1);
        assert_eq!(Int::pow(3i32, 40), 689956897);
        assert_eq!(Int::pow(2u32, 33), 0);
    }

    #[test]
    fn bit_counts() {
        assert_eq!(Int::count_leading_zeros(0i32), 32);
        assert_eq!(Int::count_leading_zeros(-1i32), 0);
        assert_eq!(Int::population_count(-1i32), 32);
        assert_eq!(Int::abs(i32::MIN), i32::MIN);
    }
}
