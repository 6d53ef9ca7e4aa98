//! Element semantics of the fast engine, written independently of the
//! reference's `numerics/` so that the two engines check each other.

pub mod atan2;
pub mod cbrt;
pub mod complex;
pub mod complex_inverse;
pub mod convert;
pub mod erf;
pub mod exp;
pub mod f32_math;
pub mod f8;
pub mod float;
pub mod int;
pub mod pow;
pub mod special;
pub mod tanh;

use crate::kernels::elementwise::Side;

/// A lanes kernel: writes `f(v[i])` into every `out[i]`; the caller checks
/// the ISA.
pub(crate) type F32Lanes = unsafe fn(&[f32], &mut [std::mem::MaybeUninit<f32>]);

/// A function's lanes kernels: sixteen f32 lanes on AVX-512, and eight on
/// AVX2 where the function has them.
#[derive(Clone, Copy)]
pub(crate) struct Kernels {
    pub avx512: F32Lanes,
    pub avx2: Option<F32Lanes>,
}

impl Kernels {
    /// An AVX-512 kernel only.
    pub(crate) const fn avx512(avx512: F32Lanes) -> Kernels {
        Kernels { avx512, avx2: None }
    }

    /// The kernel for this CPU (capped by `XLAREF_FAST_ISA`), if any.
    fn here(self) -> Option<F32Lanes> {
        use crate::isa::{isa, Isa};
        match isa() {
            level if level >= Isa::Avx512 => Some(self.avx512),
            Isa::Avx2 => self.avx2,
            _ => None,
        }
    }
}

/// `f(v[i])` for every element of a whole array, across cores: through
/// the lanes kernel where the CPU has one, else `f` per element. `stream`
/// asks for non-temporal stores of a result too large for the caches
/// (worth it for kernels that run at memory speed).
///
/// `f` is a generic function, not a `fn` pointer, so that it is inlined
/// into the caller's loop compiled for the machine's vector features
/// (`par::simd`). Called through a pointer it was compiled for baseline
/// x86-64, where `f64::mul_add` is a call into libm's `fma`: on an AVX2
/// host (`XLAREF_FAST_ISA=avx2`) LayerNorm + GELU 2048×768 took 39 ms,
/// 3.9 ms since.
pub(crate) fn f32_all(v: &[f32], lanes: Kernels, f: impl Fn(f32) -> f32 + Sync, stream: bool) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if let Some(lanes) = lanes.here() {
        let streaming = stream && crate::stream::worth_it::<f32>(v.len());
        return crate::par::build(v.len(), |start, chunk| {
            crate::stream::fill(chunk, streaming, |offset, part| {
                let from = start + offset;
                // SAFETY: `isa()` never exceeds what the CPU has, and
                // `here` picks the kernel of its level; `part` holds the
                // results of `v[from..from + part.len()]`.
                unsafe { lanes(&v[from..from + part.len()], part) }
            })
        });
    }
    let _ = (lanes, stream);
    crate::par::map_heavy(v, f)
}

/// `out[i] = f(v[i])` for a fused tile, on this thread: through the lanes
/// kernel where the CPU has one, else `f` per element. The kernel must
/// write every element of its output it is given.
pub(crate) fn f32_into(v: &[f32], out: &mut [f32], lanes: Kernels, f: impl Fn(f32) -> f32) {
    #[cfg(target_arch = "x86_64")]
    if let Some(lanes) = lanes.here() {
        // SAFETY: a `&mut [f32]` viewed as `MaybeUninit<f32>`s, which
        // `lanes` only writes initialized values to; `isa()` never exceeds
        // what the CPU has, and `here` picks the kernel of its level.
        unsafe {
            let out = &mut *(out as *mut [f32] as *mut [std::mem::MaybeUninit<f32>]);
            lanes(v, out)
        };
        return;
    }
    let _ = lanes;
    each_into(v, out, f);
}

/// A binary lanes kernel: writes `f(a[i], b[i])` into every `out[i]`
/// (a [`Side::One`] operand stands for every element); AVX-512, the
/// caller checks the ISA.
pub(crate) type F32Lanes2 = unsafe fn(Side<f32>, Side<f32>, &mut [std::mem::MaybeUninit<f32>]);

/// The element count of a binary op's result: the shorter whole operand,
/// or 1 for two single values.
pub(crate) fn count2<T>(a: Side<T>, b: Side<T>) -> usize {
    match (a, b) {
        (Side::All(x), Side::All(y)) => x.len().min(y.len()),
        (Side::All(x), Side::One(_)) | (Side::One(_), Side::All(x)) => x.len(),
        (Side::One(_), Side::One(_)) => 1,
    }
}

/// Elements `from..from + len` of an operand (a single value stays one).
pub(crate) fn cut<T>(s: Side<T>, from: usize, len: usize) -> Side<T> {
    match s {
        Side::All(v) => Side::All(&v[from..from + len]),
        one => one,
    }
}

/// Element `i` of an operand.
#[inline(always)]
pub(crate) fn at<T: Copy>(s: Side<T>, i: usize) -> T {
    match s {
        Side::All(v) => v[i],
        Side::One(x) => x,
    }
}

/// `f(a[i], b[i])` for every element of a whole result, across cores:
/// through `lanes` where the CPU has AVX-512, else `f` per element.
pub(crate) fn f32_all2(a: Side<f32>, b: Side<f32>, lanes: F32Lanes2, f: impl Fn(f32, f32) -> f32 + Sync) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if crate::isa::isa() >= crate::isa::Isa::Avx512 {
        return crate::par::build(count2(a, b), |start, chunk| {
            let len = chunk.len();
            // SAFETY: `isa()` never exceeds what the CPU has; `chunk` holds
            // the results of elements `start..start + len`.
            unsafe { lanes(cut(a, start, len), cut(b, start, len), chunk) }
        });
    }
    let _ = lanes;
    each2_all(a, b, f)
}

/// `out[i] = f(a[i], b[i])` for a fused tile, on this thread: through
/// `lanes` where the CPU has AVX-512, else `f` per element. `lanes` must
/// write every element of its output it is given.
pub(crate) fn f32_into2(a: Side<f32>, b: Side<f32>, out: &mut [f32], lanes: F32Lanes2, f: impl Fn(f32, f32) -> f32) {
    #[cfg(target_arch = "x86_64")]
    if crate::isa::isa() >= crate::isa::Isa::Avx512 {
        // SAFETY: as in `f32_into`.
        unsafe {
            let out = &mut *(out as *mut [f32] as *mut [std::mem::MaybeUninit<f32>]);
            lanes(a, b, out)
        };
        return;
    }
    let _ = lanes;
    each2_into(a, b, out, f);
}

/// `f(a[i], b[i])` for every element, across cores, per element.
pub(crate) fn each2_all<T: Copy + Sync + Send>(a: Side<T>, b: Side<T>, f: impl Fn(T, T) -> T + Sync) -> Vec<T> {
    match (a, b) {
        (Side::All(x), Side::All(y)) => crate::par::zip(x, y, f),
        (Side::All(x), Side::One(s)) => crate::par::map_heavy(x, |v| f(v, s)),
        (Side::One(s), Side::All(y)) => crate::par::map_heavy(y, |v| f(s, v)),
        (Side::One(s), Side::One(t)) => vec![f(s, t)],
    }
}

/// `out[i] = f(a[i], b[i])` on this thread, per element (compiled for
/// the machine's vector features, as [`each_into`]).
#[inline(always)]
pub(crate) fn each2_into<T: Copy>(a: Side<T>, b: Side<T>, out: &mut [T], f: impl Fn(T, T) -> T) {
    crate::par::simd(
        #[inline(always)]
        || {
            for (i, o) in out.iter_mut().enumerate() {
                *o = f(at(a, i), at(b, i));
            }
        },
    )
}

/// `out[i] = f(v[i])` on this thread, vectorized where `f` allows.
#[inline(always)]
pub(crate) fn each_into<T: Copy>(v: &[T], out: &mut [T], f: impl Fn(T) -> T) {
    crate::par::simd(
        #[inline(always)]
        || {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = f(x);
            }
        },
    )
}

/// A xorshift stream of `n` 32-bit patterns, for the tests of the f32
/// functions.
#[cfg(test)]
pub(crate) fn xorshift_bits(seed: u64, n: usize) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 32) as u32
        })
        .collect()
}

/// How many of a binary f32 function's results `got[i]` differ from the
/// reference's `want(a[i], b[i])`: asserts that none differs by more than
/// one ulp, that NaN is NaN and that the signs agree.
#[cfg(test)]
pub(crate) fn binary_differences(name: &str, a: &[f32], b: &[f32], got: &[f32], want: fn(f32, f32) -> f32) -> u64 {
    let mut differ = 0;
    for ((&x, &y), &g) in a.iter().zip(b).zip(got) {
        let w = want(x, y);
        if w.is_nan() {
            assert!(g.is_nan(), "{name}({x:e}, {y:e}) = {g:e}, not NaN");
            continue;
        }
        let d = f32_ulps(g, w);
        assert!(d <= 1, "{name}({x:e}, {y:e}) = {g:e}, the reference {w:e}: {d} ulps");
        assert_eq!(g.is_sign_negative(), w.is_sign_negative(), "sign of {name}({x:e}, {y:e})");
        differ += u64::from(d != 0);
    }
    differ
}

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

/// The driver of the binary lanes kernels (Atan2, Pow).
#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes2 {
    use super::{at, Side};
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// Eight lanes of a binary function: the values, and the lanes to take
    /// from the scalar function instead (NaN operands, whose rules and
    /// payloads the scalar function has).
    pub(crate) type Kernel8 = unsafe fn(__m512d, __m512d) -> (__m512d, __mmask8);

    /// `dst[i] = f(a[i], b[i])` for every `i < dst.len()` (each whole
    /// operand at least that long), eight f32s at a time widened to f64
    /// and rounded back once; the lanes `f` marks take `scalar`.
    ///
    /// # Safety
    /// The CPU has AVX-512F, DQ and VL; the caller enables them (so that
    /// the masked loads and stores are inlined, not called).
    #[inline(always)]
    pub(crate) unsafe fn each8(a: Side<f32>, b: Side<f32>, dst: &mut [MaybeUninit<f32>], f: Kernel8, scalar: fn(f32, f32) -> f32) {
        let mut n = dst.len();
        for s in [a, b] {
            if let Side::All(v) = s {
                n = n.min(v.len());
            }
        }
        let d = dst.as_mut_ptr().cast::<f32>();
        let mut i = 0;
        while i < n {
            let k = (n - i).min(8);
            // Masked-out lanes are neither read nor written.
            let mask: __mmask8 = ((1u16 << k) - 1) as u8;
            // SAFETY: elements i..i + k are inside `dst` and every whole operand.
            let (v, patch) = f(load8(a, i, mask), load8(b, i, mask));
            _mm256_mask_storeu_ps(d.add(i), mask, _mm512_cvtpd_ps(v));
            let mut rest = patch & mask;
            while rest != 0 {
                let j = i + rest.trailing_zeros() as usize;
                *d.add(j) = scalar(at(a, j), at(b, j));
                rest &= rest - 1;
            }
            i += k;
        }
    }

    /// Eight elements of an operand from `i` on (the lanes of `mask`),
    /// widened to f64.
    #[inline(always)]
    unsafe fn load8(s: Side<f32>, i: usize, mask: __mmask8) -> __m512d {
        match s {
            // SAFETY: the caller's lanes are inside `v`.
            Side::All(v) => _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, v.as_ptr().add(i))),
            Side::One(x) => _mm512_set1_pd(x as f64),
        }
    }
}

/// The driver of the eight-lane (AVX2) kernels of unary f32 functions.
#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes8 {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// `dst[i] = f(src[i])` for `i < min(src.len(), dst.len())`: sixteen at
    /// a time through `pair` (two vectors, for functions that run them in
    /// lockstep), then eight, the last under a mask (masked-out lanes are
    /// neither read nor written).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; the caller enables them, so that the
    /// functions are inlined.
    #[inline(always)]
    pub(crate) unsafe fn each8(
        src: &[f32],
        dst: &mut [MaybeUninit<f32>],
        pair: impl Fn([__m256; 2]) -> [__m256; 2],
        f: impl Fn(__m256) -> __m256,
    ) {
        let n = src.len().min(dst.len());
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr().cast::<f32>());
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: elements i..i + 16 are inside both slices.
            let [a, b] = pair([_mm256_loadu_ps(s.add(i)), _mm256_loadu_ps(s.add(i + 8))]);
            _mm256_storeu_ps(d.add(i), a);
            _mm256_storeu_ps(d.add(i + 8), b);
            i += 16;
        }
        if i + 8 <= n {
            // SAFETY: elements i..i + 8 are inside both slices.
            _mm256_storeu_ps(d.add(i), f(_mm256_loadu_ps(s.add(i))));
            i += 8;
        }
        if i < n {
            let mask = first_lanes(n - i);
            _mm256_maskstore_ps(d.add(i), mask, f(_mm256_maskload_ps(s.add(i), mask)));
        }
    }

    /// The vector mask of the first `n` of eight 32-bit lanes (all ones in
    /// each), for `vmaskmovps`.
    ///
    /// # Safety
    /// The CPU has AVX2; the caller enables it.
    #[inline(always)]
    pub(crate) unsafe fn first_lanes(n: usize) -> __m256i {
        _mm256_cmpgt_epi32(_mm256_set1_epi32(n.min(8) as i32), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
    }

    /// A lanes kernel's results over a whole slice, where `usable` (the
    /// CPU has the kernel's features), for the tests.
    ///
    /// # Safety
    /// `kernel` writes every element of its output it is given, and runs
    /// on a CPU with `usable` features.
    #[cfg(test)]
    pub(crate) unsafe fn collect(usable: bool, kernel: super::F32Lanes, xs: &[f32]) -> Option<Vec<f32>> {
        if !usable {
            return None;
        }
        let mut out = vec![MaybeUninit::new(f32::NAN); xs.len()];
        kernel(xs, &mut out);
        Some(out.into_iter().map(|v| v.assume_init()).collect())
    }
}

/// `into(x, y)` of one pair of values, through the whole-array function
/// (so that a scalar program computes what the array kernels compute).
#[inline]
pub(crate) fn one2<T: Copy + Default>(into: fn(Side<T>, Side<T>, &mut [T]), x: T, y: T) -> T {
    let mut out = [T::default()];
    into(Side::One(x), Side::One(y), &mut out);
    out[0]
}

/// ns per element of f32 Cbrt, Atan2 and Pow on 4M elements: the
/// per-element platform libm calls the engine used before, and the
/// whole-array kernels (run with `--ignored --nocapture` in release).
#[cfg(test)]
mod speed {
    use super::Side;
    use std::time::Instant;

    fn ns_per_element(n: usize, mut f: impl FnMut() -> Vec<f32>) -> f64 {
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let start = Instant::now();
            let out = f();
            best = best.min(start.elapsed().as_secs_f64());
            assert_eq!(out.len(), n);
        }
        best * 1e9 / n as f64
    }

    #[test]
    #[ignore]
    fn four_million_f32() {
        let n = 1 << 22;
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u32 << 24) as f32
        };
        let a: Vec<f32> = (0..n).map(|_| next() * 20.0 - 10.0).collect();
        let b: Vec<f32> = (0..n).map(|_| next() * 10.0 - 5.0).collect();
        let base: Vec<f32> = a.iter().map(|v| v.abs()).collect();
        let rows = [
            ("cbrt", ns_per_element(n, || crate::par::map_heavy(&a, f32::cbrt)), ns_per_element(n, || super::cbrt::cbrt_f32_all(&a))),
            (
                "atan2",
                ns_per_element(n, || crate::par::zip(&a, &b, f32::atan2)),
                ns_per_element(n, || super::atan2::atan2_f32_all(Side::All(&a), Side::All(&b))),
            ),
            (
                "pow",
                ns_per_element(n, || crate::par::zip(&base, &b, super::float::pow::<f32>)),
                ns_per_element(n, || super::pow::pow_f32_all(Side::All(&base), Side::All(&b))),
            ),
            (
                "pow x^2.5",
                ns_per_element(n, || crate::par::map(&base, |x| super::float::pow(x, 2.5f32))),
                ns_per_element(n, || super::pow::pow_f32_all(Side::All(&base), Side::One(2.5))),
            ),
        ];
        for (name, before, after) in rows {
            eprintln!("{name}: per-element libm {before:.2} ns/element, lanes {after:.2} ns/element");
        }
    }
}
