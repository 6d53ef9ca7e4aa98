//! Integer element semantics of the fast engine (written independently of
//! the reference's): wraparound, and XLA CPU's values for division by zero,
//! `MIN / -1`, out-of-range shifts and negative powers.

pub trait FInt: Copy + Ord + Default + Send + Sync + 'static {
    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    fn xdiv(self, o: Self) -> Self;
    fn xrem(self, o: Self) -> Self;
    fn xpow(self, e: Self) -> Self;
    fn band(self, o: Self) -> Self;
    fn bor(self, o: Self) -> Self;
    fn bxor(self, o: Self) -> Self;
    fn bnot(self) -> Self;
    fn shl(self, o: Self) -> Self;
    fn sra(self, o: Self) -> Self;
    fn srl(self, o: Self) -> Self;
    fn wneg(self) -> Self;
    fn wabs(self) -> Self;
    fn signum(self) -> Self;
    fn popcnt(self) -> Self;
    fn clz(self) -> Self;
    fn is_negative(self) -> bool;
}

macro_rules! fint {
    ($t:ty, $s:ty, $u:ty) => {
        impl FInt for $t {
            #[inline(always)]
            fn wadd(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn wsub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn wmul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn xdiv(self, o: Self) -> Self {
                // checked_div fails exactly on x / 0 and MIN / -1.
                match self.checked_div(o) {
                    Some(q) => q,
                    None if o == 0 => !0,
                    None => self,
                }
            }
            #[inline(always)]
            fn xrem(self, o: Self) -> Self {
                match self.checked_rem(o) {
                    Some(r) => r,
                    None if o == 0 => self,
                    None => 0,
                }
            }
            fn xpow(self, e: Self) -> Self {
                if (e as $s) < 0 && <$t>::MIN != 0 {
                    // Only 1 and -1 have integer reciprocals.
                    return match self as $s {
                        1 => 1,
                        -1 => {
                            if (e as $s) & 1 == 0 {
                                1
                            } else {
                                self
                            }
                        }
                        _ => 0,
                    };
                }
                let mut e = e as $u;
                let mut base = self;
                let mut acc: $t = 1;
                while e != 0 {
                    if e & 1 != 0 {
                        acc = acc.wrapping_mul(base);
                    }
                    e >>= 1;
                    base = base.wrapping_mul(base);
                }
                acc
            }
            #[inline(always)]
            fn band(self, o: Self) -> Self {
                self & o
            }
            #[inline(always)]
            fn bor(self, o: Self) -> Self {
                self | o
            }
            #[inline(always)]
            fn bxor(self, o: Self) -> Self {
                self ^ o
            }
            #[inline(always)]
            fn bnot(self) -> Self {
                !self
            }
            #[inline(always)]
            fn shl(self, o: Self) -> Self {
                (self as $u).checked_shl(u32::try_from(o as $u).unwrap_or(u32::MAX)).unwrap_or(0) as $t
            }
            #[inline(always)]
            fn sra(self, o: Self) -> Self {
                let amount = u32::try_from(o as $u).unwrap_or(u32::MAX).min(<$t>::BITS - 1);
                ((self as $s) >> amount) as $t
            }
            #[inline(always)]
            fn srl(self, o: Self) -> Self {
                (self as $u).checked_shr(u32::try_from(o as $u).unwrap_or(u32::MAX)).unwrap_or(0) as $t
            }
            #[inline(always)]
            fn wneg(self) -> Self {
                (0 as $t).wrapping_sub(self)
            }
            #[inline(always)]
            fn wabs(self) -> Self {
                if self.is_negative() {
                    self.wneg()
                } else {
                    self
                }
            }
            #[inline(always)]
            fn signum(self) -> Self {
                if self.is_negative() {
                    !0
                } else {
                    (self != 0) as $t
                }
            }
            #[inline(always)]
            fn popcnt(self) -> Self {
                self.count_ones() as $t
            }
            #[inline(always)]
            fn clz(self) -> Self {
                self.leading_zeros() as $t
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn is_negative(self) -> bool {
                self < 0
            }
        }
    };
}

fint!(i8, i8, u8);
fint!(i16, i16, u16);
fint!(i32, i32, u32);
fint!(i64, i64, u64);
fint!(u8, i8, u8);
fint!(u16, i16, u16);
fint!(u32, i32, u32);
fint!(u64, i64, u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners() {
        assert_eq!(7i32.xdiv(0), -1);
        assert_eq!(i32::MIN.xdiv(-1), i32::MIN);
        assert_eq!(i32::MIN.xrem(-1), 0);
        assert_eq!((-7i32).xrem(0), -7);
        assert_eq!(5u32.xdiv(0), u32::MAX);
        assert_eq!(1i32.shl(32), 0);
        assert_eq!(1i32.shl(-1), 0);
        assert_eq!((-8i32).sra(40), -1);
        assert_eq!(0x80u8.sra(3), 0xf0);
        assert_eq!((-8i32).srl(1), 0x7fff_fffc);
        assert_eq!((-1i32).xpow(-3), -1);
        assert_eq!(2i32.xpow(-3), 0);
        assert_eq!(3u8.xpow(200), 3u8.wrapping_pow(200));
        assert_eq!(i8::MIN.wabs(), i8::MIN);
        assert_eq!(0u32.clz(), 32);
    }
}
