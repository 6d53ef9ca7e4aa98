//! Element semantics of the fast engine, written independently of the
//! reference's `numerics/` so that the two engines check each other.

pub mod complex;
pub mod complex_inverse;
pub mod convert;
pub mod exp;
pub mod f32_math;
pub mod f8;
pub mod float;
pub mod int;
pub mod special;
pub mod tanh;

/// Distance in f32 ulps between two values (ordered bit patterns, where -0
/// and +0 coincide), for the tests of the f32 functions.
#[cfg(test)]
pub(crate) fn f32_ulps(a: f32, b: f32) -> u64 {
    let key = |v: f32| {
        let b = v.to_bits() as i64;
        if b < 0x8000_0000 {
            b
        } else {
            0x8000_0000 - b
        }
    };
    (key(a) - key(b)).unsigned_abs()
}
