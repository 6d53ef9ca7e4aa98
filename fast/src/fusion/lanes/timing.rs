//! Costs of register chains against the whole-array kernels, one thread,
//! L1-resident tiles (`cargo test --release -p xlaref-fast --lib
//! chain_costs -- --ignored --nocapture`): prints ns per element; asserts
//! that a Tanh link and the GELU chain give the op-by-op values bit for bit.

use super::*;
use std::time::Instant;

fn time(name: &str, n: usize, f: &mut dyn FnMut()) {
    let reps = 20000;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    eprintln!("{name}: {:.3} ns/elem", best * 1e9 / (reps * n) as f64);
}

fn link(op: LinkOp, a: Arg<f32>, b: Arg<f32>, store: *mut f32) -> Link<f32> {
    Link { store, ..Link::new(op, [a, b, Arg::One(0.0)]) }
}

#[test]
#[ignore]
fn chain_costs() {
    if !available() {
        return;
    }
    let n = 1024;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - 512.0) / 200.0).collect();
    let (mut by_link, mut by_kernel) = (vec![0f32; n], vec![0f32; n]);
    let tanh_only = [link(LinkOp::Tanh, Arg::At(x.as_ptr()), Arg::One(0.0), by_link.as_mut_ptr())];
    // SAFETY: the link reads `n` values of `x` and writes `n` of `by_link`.
    time("tanh link", n, &mut || unsafe {
        f32::run_chain(&tanh_only, 0, n);
    });
    time("tanh kernel", n, &mut || crate::elem::tanh::tanh_f32_into(&x, &mut by_kernel));
    assert!(by_link.iter().zip(&by_kernel).all(|(a, b)| a.to_bits() == b.to_bits()));
    let mut gelu = vec![0f32; n];
    let xp = x.as_ptr();
    let none = std::ptr::null_mut();
    let chain = [
        link(LinkOp::Mul, Arg::At(xp), Arg::At(xp), none),
        link(LinkOp::Mul, Arg::Prev, Arg::At(xp), none),
        link(LinkOp::Mul, Arg::Prev, Arg::One(0.044715), none),
        link(LinkOp::Add, Arg::At(xp), Arg::Prev, none),
        link(LinkOp::Mul, Arg::Prev, Arg::One(0.797_884_6), none),
        link(LinkOp::Tanh, Arg::Prev, Arg::One(0.0), none),
        link(LinkOp::Add, Arg::Prev, Arg::One(1.0), none),
        link(LinkOp::Mul, Arg::Prev, Arg::One(0.5), none),
        link(LinkOp::Mul, Arg::At(xp), Arg::Prev, gelu.as_mut_ptr()),
    ];
    // SAFETY: the links read `n` values of `x` and write `n` of `gelu`.
    time("gelu chain", n, &mut || unsafe {
        f32::run_chain(&chain, 0, n);
    });
    let u: Vec<f32> = x.iter().map(|&v| (v + v * v * v * 0.044715) * 0.797_884_6).collect();
    crate::elem::tanh::tanh_f32_into(&u, &mut by_kernel);
    for ((&v, &t), &g) in x.iter().zip(&by_kernel).zip(&gelu) {
        assert_eq!((v * ((t + 1.0) * 0.5)).to_bits(), g.to_bits(), "gelu({v})");
    }
    let light: Vec<_> = chain.iter().copied().filter(|l| l.op != LinkOp::Tanh).collect();
    // SAFETY: as above.
    time("gelu without tanh", n, &mut || unsafe {
        f32::run_chain(&light, 0, n);
    });
    layernorm_gelu(&x);
}

/// LayerNorm's last steps and GELU, as the tile runner links them for
/// one 1024-position row (`add.15` stored: three later links read it).
fn ln_gelu_links(x: *const f32, gamma: *const f32, beta: *const f32, kept: *mut f32, out: *mut f32) -> Vec<Link<f32>> {
    let none = std::ptr::null_mut();
    let k = kept as *const f32;
    vec![
        link(LinkOp::Sub, Arg::At(x), Arg::One(0.1), none),
        link(LinkOp::Mul, Arg::Prev, Arg::One(1.3), none),
        link(LinkOp::Mul, Arg::Prev, Arg::At(gamma), none),
        link(LinkOp::Add, Arg::Prev, Arg::At(beta), kept),
        link(LinkOp::Mul, Arg::Prev, Arg::At(k), none),
        link(LinkOp::Mul, Arg::Prev, Arg::At(k), none),
        link(LinkOp::Mul, Arg::Prev, Arg::One(0.044715), none),
        link(LinkOp::Add, Arg::At(k), Arg::Prev, none),
        link(LinkOp::Mul, Arg::Prev, Arg::One(0.797_884_6), none),
        link(LinkOp::Tanh, Arg::Prev, Arg::One(0.0), none),
        link(LinkOp::Add, Arg::Prev, Arg::One(1.0), none),
        link(LinkOp::Mul, Arg::Prev, Arg::One(0.5), none),
        link(LinkOp::Mul, Arg::At(k), Arg::Prev, out),
    ]
}

/// The LayerNorm + GELU chain on one L1-resident row, and row by row
/// over f32[4096, 1024] (the result written with plain stores, then
/// streamed past the caches).
fn layernorm_gelu(x: &[f32]) {
    let n = x.len();
    let gamma: Vec<f32> = (0..n).map(|i| 1.0 + i as f32 * 1e-4).collect();
    let beta: Vec<f32> = (0..n).map(|i| i as f32 * 1e-4).collect();
    let (mut kept, mut out) = (vec![0f32; n], vec![0f32; n]);
    let links = ln_gelu_links(x.as_ptr(), gamma.as_ptr(), beta.as_ptr(), kept.as_mut_ptr(), out.as_mut_ptr());
    // SAFETY: every link reads `n` values of a vector of `n` and writes `n` of one.
    time("layernorm gelu chain, one row", n, &mut || unsafe {
        f32::run_chain(&links, 0, n);
    });
    let light: Vec<_> = links.iter().copied().filter(|l| l.op != LinkOp::Tanh).collect();
    // SAFETY: as above.
    time("layernorm gelu without tanh, one row", n, &mut || unsafe {
        f32::run_chain(&light, 0, n);
    });
    let rows = 4096;
    let big: Vec<f32> = (0..rows * n).map(|i| x[i % n] + (i / n) as f32 * 1e-3).collect();
    let mut big_out = vec![0f32; rows * n];
    for stream in [false, true] {
        let mut best = f64::INFINITY;
        for _ in 0..20 {
            let t = Instant::now();
            for r in 0..rows {
                let mut links =
                    ln_gelu_links(big[r * n..].as_ptr(), gamma.as_ptr(), beta.as_ptr(), kept.as_mut_ptr(), big_out[r * n..].as_mut_ptr());
                links[12].stream = stream;
                // SAFETY: row `r` of `big` and `big_out` has `n` values.
                unsafe { f32::run_chain(&links, 0, n) };
            }
            crate::stream::fence();
            best = best.min(t.elapsed().as_secs_f64());
        }
        eprintln!("layernorm gelu chain, f32[4096,1024], streamed result {stream}: {:.3} ns/elem", best * 1e9 / (rows * n) as f64);
    }
}
