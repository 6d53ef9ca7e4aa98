//! Element semantics of the fast engine, written independently of the
//! reference's `numerics/` so that the two engines check each other.

pub mod complex;
pub mod complex_inverse;
pub mod convert;
pub mod erf;
pub mod exp;
pub mod f32_math;
pub mod f8;
pub mod float;
pub mod int;
pub mod special;
pub mod tanh;

/// A lanes kernel: writes `f(v[i])` into every `out[i]` (sixteen f32 lanes,
/// AVX-512); the caller checks the ISA.
pub(crate) type F32Lanes = unsafe fn(&[f32], &mut [std::mem::MaybeUninit<f32>]);

/// `f(v[i])` for every element of a whole array, across cores: through
/// `lanes` where the CPU has AVX-512, else `f` per element. `stream` asks
/// for non-temporal stores of a result too large for the caches (worth it
/// for kernels that run at memory speed).
pub(crate) fn f32_all(v: &[f32], lanes: F32Lanes, f: fn(f32) -> f32, stream: bool) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if crate::isa::isa() >= crate::isa::Isa::Avx512 {
        let streaming = stream && crate::stream::worth_it::<f32>(v.len());
        return crate::par::build(v.len(), |start, chunk| {
            crate::stream::fill(chunk, streaming, |offset, part| {
                let from = start + offset;
                // SAFETY: `isa()` never exceeds what the CPU has; `part`
                // holds the results of `v[from..from + part.len()]`.
                unsafe { lanes(&v[from..from + part.len()], part) }
            })
        });
    }
    let _ = (lanes, stream);
    crate::par::map_heavy(v, f)
}

/// `out[i] = f(v[i])` for a fused tile, on this thread: through `lanes`
/// (sixteen f32 lanes) where the CPU has AVX-512, else `f` per element.
/// `lanes` must write every element of its output it is given.
pub(crate) fn f32_into(v: &[f32], out: &mut [f32], lanes: F32Lanes, f: fn(f32) -> f32) {
    #[cfg(target_arch = "x86_64")]
    if crate::isa::isa() >= crate::isa::Isa::Avx512 {
        // SAFETY: a `&mut [f32]` viewed as `MaybeUninit<f32>`s, which
        // `lanes` only writes initialized values to; `isa()` never exceeds
        // what the CPU has (the lanes kernels need AVX-512).
        unsafe {
            let out = &mut *(out as *mut [f32] as *mut [std::mem::MaybeUninit<f32>]);
            lanes(v, out)
        };
        return;
    }
    let _ = lanes;
    each_into(v, out, f);
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
