//! The fast engine's LAPACK kernels (fast/src/kernels/lapack.rs) against
//! the reference's (reference/src/custom_call/lapack.rs): every target and
//! type on random batched matrices, through whole modules (so the fast
//! engine's world dispatch is exercised too).
//!
//! Pivots (`ipiv`) and `info` must agree exactly: the test matrices keep
//! their pivot choices and positive definiteness far from ties, so
//! rounding cannot decide them. Values must agree to within
//! `TOL_ULPS · n · eps · max(1, max |reference value of the matrix|)`,
//! where `n` is the largest dimension and eps the element type's
//! epsilon: a normwise, backward-error style bound. The two engines sum in
//! different orders (dot products subtracted once against running
//! subtraction, a one-pass f64 norm against a two-pass scaled one), each
//! step adding at most an eps-relative error to values of the size of the
//! matrix's; the well-conditioned test matrices (diagonally dominant
//! triangles, SPD matrices with a large diagonal, random dense matrices of
//! order ≤ 6) amplify that by a small factor, which TOL_ULPS = 64 covers.

use num_complex::Complex;
use xlaref_reference::custom_call::lapack_abi;
use xlaref_reference::eval::{self, Env, Limits};
use xlaref_reference::json::{self, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::types::{ElementType, Shape};
use xlaref_reference::verify::{self, VerifyOptions};

const TOL_ULPS: f64 = 64.0;

struct Rng(u64);

impl Rng {
    /// Uniform in [-1, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

const TYPES: [(char, ElementType); 4] =
    [('s', ElementType::F32), ('d', ElementType::F64), ('c', ElementType::C64), ('z', ElementType::C128)];

fn literal(ty: ElementType, dims: &[i64], v: &[(f64, f64)]) -> Literal {
    let dims = dims.to_vec();
    match ty {
        ElementType::F32 => ArrayLiteral::from_vec(dims, v.iter().map(|p| p.0 as f32).collect::<Vec<_>>()),
        ElementType::F64 => ArrayLiteral::from_vec(dims, v.iter().map(|p| p.0).collect::<Vec<_>>()),
        ElementType::C64 => ArrayLiteral::from_vec(dims, v.iter().map(|p| Complex::new(p.0 as f32, p.1 as f32)).collect::<Vec<_>>()),
        _ => ArrayLiteral::from_vec(dims, v.iter().map(|&(re, im)| Complex::new(re, im)).collect::<Vec<_>>()),
    }
    .into()
}

fn values(l: &Literal) -> Vec<(f64, f64)> {
    match &l.as_array().expect("an array").data {
        Data::F32(v) => v.iter().map(|&x| (x as f64, 0.0)).collect(),
        Data::F64(v) => v.iter().map(|&x| (x, 0.0)).collect(),
        Data::C64(v) => v.iter().map(|z| (z.re as f64, z.im as f64)).collect(),
        Data::C128(v) => v.iter().map(|z| (z.re, z.im)).collect(),
        Data::S32(v) => v.iter().map(|&x| (x as f64, 0.0)).collect(),
        d => panic!("unexpected data {:?}", d.element_type()),
    }
}

fn eps(ty: ElementType) -> f64 {
    if matches!(ty, ElementType::F32 | ElementType::C64) {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    }
}

/// A module of one CustomCall (or geqrf then orgqr when `target` is
/// orgqr/ungqr) on the given parameters.
fn module(target: &str, params: &[Shape], opaque: &str) -> String {
    let (ty, routine) = lapack_abi::parse_name(target).expect("a LAPACK target");
    let names = ["a", "b"];
    let ps: Vec<String> = params.iter().enumerate().map(|(i, s)| format!(r#"{{"name": "{}", "shape": "{s}"}}"#, names[i])).collect();
    let refs: Vec<&Shape> = params.iter().collect();
    let instrs = if routine == lapack_abi::Routine::Orgqr {
        let geqrf = target.replace("orgqr", "geqrf").replace("ungqr", "geqrf");
        let qr = lapack_abi::result_shape(ty, lapack_abi::Routine::Geqrf, &refs, "").expect("shape");
        format!(
            r#"{{"name": "qr", "op": "CustomCall", "operands": ["a"], "target_name": "{geqrf}", "shape": "{qr}"}},
               {{"name": "v", "op": "GetTupleElement", "operands": ["qr"], "index": 0}},
               {{"name": "t", "op": "GetTupleElement", "operands": ["qr"], "index": 1}},
               {{"name": "q", "op": "CustomCall", "operands": ["v", "t"], "target_name": "{target}", "shape": "{}"}},
               {{"name": "r", "op": "Tuple", "operands": ["q", "v", "t"]}}"#,
            params[0]
        )
    } else {
        let shape = lapack_abi::result_shape(ty, routine, &refs, opaque).expect("valid shapes");
        let operands: Vec<String> = (0..params.len()).map(|i| format!("\"{}\"", names[i])).collect();
        format!(
            r#"{{"name": "r", "op": "CustomCall", "operands": [{}], "target_name": "{target}", "shape": "{shape}", "opaque": "{opaque}"}}"#,
            operands.join(", ")
        )
    };
    format!(r#"{{"format": "xla-json/1", "computations": {{"main": {{"params": [{}], "instructions": [{instrs}]}}}}}}"#, ps.join(", "))
}

/// Runs on both engines and compares leaf by leaf: s32 leaves exactly,
/// floating-point leaves under the documented bound.
fn compare(what: &str, text: &str, args: Vec<Literal>, ty: ElementType, n: usize) {
    let m = json::parse_module(text, ReadOptions { max_elements: 1 << 20 }).unwrap_or_else(|e| panic!("{what}: {e}\n{text}"));
    let m = verify::verify(m, &VerifyOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let reference = eval::run(&m, args.clone(), &mut Env::new(Limits::default())).unwrap_or_else(|e| panic!("{what}: {e}"));
    let fast = xlaref_fast::run(&m, args, &mut Env::new(Limits::default())).unwrap_or_else(|e| panic!("{what}: {e}"));
    let leaves = |l: Literal| match l {
        Literal::Tuple(t) => t,
        other => vec![other],
    };
    for (i, (r, f)) in leaves(reference).into_iter().zip(leaves(fast)).enumerate() {
        assert_eq!(r.shape(), f.shape(), "{what}: leaf {i}");
        let (rv, fv) = (values(&r), values(&f));
        let exact = r.as_array().is_some_and(|a| a.element_type() == ElementType::S32);
        if exact {
            assert_eq!(rv, fv, "{what}: leaf {i} (pivots or info)");
            continue;
        }
        let scale = rv.iter().map(|p| p.0.abs().max(p.1.abs())).fold(1.0f64, f64::max);
        let bound = TOL_ULPS * n as f64 * eps(ty) * scale;
        for (e, (x, y)) in rv.iter().zip(&fv).enumerate() {
            let d = (x.0 - y.0).abs().max((x.1 - y.1).abs());
            assert!(d <= bound, "{what}: leaf {i} element {e}: reference {x:?}, fast {y:?}, bound {bound:e}");
        }
    }
}

fn random(rng: &mut Rng, count: usize, complex: bool) -> Vec<(f64, f64)> {
    (0..count).map(|_| (rng.next(), if complex { rng.next() } else { 0.0 })).collect()
}

#[test]
fn getrf_geqrf_orgqr_agree() {
    let mut rng = Rng(0x1a9a_c4c3);
    for (letter, ty) in TYPES {
        let complex = matches!(ty, ElementType::C64 | ElementType::C128);
        let t = ty.to_string();
        for (m, n) in [(5, 4), (4, 6), (6, 6)] {
            let dims = [3, m, n];
            let mut v = random(&mut rng, 3 * (m * n) as usize, complex);
            // The second matrix is singular: its first column is zero (info = 1).
            for r in 0..m as usize {
                v[(m * n) as usize + r * n as usize] = (0.0, 0.0);
            }
            let shape = Shape::parse(&format!("{t}[3,{m},{n}]")).expect("shape");
            let arg = literal(ty, &dims, &v);
            let getrf = format!("lapack_{letter}getrf_ffi");
            compare(&getrf, &module(&getrf, std::slice::from_ref(&shape), ""), vec![arg.clone()], ty, 6);
            let geqrf = format!("lapack_{letter}geqrf_ffi");
            compare(&geqrf, &module(&geqrf, std::slice::from_ref(&shape), ""), vec![arg.clone()], ty, 6);
            if m >= n {
                let orgqr = format!("lapack_{letter}{}_ffi", if complex { "ungqr" } else { "orgqr" });
                compare(&orgqr, &module(&orgqr, &[shape], ""), vec![arg], ty, 6);
            }
        }
    }
}

#[test]
fn potrf_agrees_including_not_positive_definite() {
    let mut rng = Rng(0x9e37_79b9);
    let n = 5usize;
    for (letter, ty) in TYPES {
        let complex = matches!(ty, ElementType::C64 | ElementType::C128);
        // M·Mᴴ + n·I for 2 matrices; the third has a negative diagonal at 3.
        let mut v = Vec::new();
        for b in 0..3 {
            let g = random(&mut rng, n * n, complex);
            for i in 0..n {
                for j in 0..n {
                    let (mut re, mut im) = (0.0, 0.0);
                    for k in 0..n {
                        let (x, y) = (g[i * n + k], g[j * n + k]);
                        re += x.0 * y.0 + x.1 * y.1;
                        im += x.1 * y.0 - x.0 * y.1;
                    }
                    if i == j {
                        re += n as f64;
                        im = 0.0;
                        if b == 2 && i == 3 {
                            re = -1.0;
                        }
                    }
                    v.push((re, im));
                }
            }
        }
        let shape = Shape::parse(&format!("{ty}[3,{n},{n}]")).expect("shape");
        let arg = literal(ty, &[3, n as i64, n as i64], &v);
        let name = format!("lapack_{letter}potrf_ffi");
        for uplo in ["{uplo = 76 : ui8}", "{uplo = 85 : ui8}"] {
            compare(&format!("{name} {uplo}"), &module(&name, std::slice::from_ref(&shape), uplo), vec![arg.clone()], ty, n);
        }
    }
}

#[test]
fn trsm_agrees_for_every_flag() {
    let mut rng = Rng(0x5eed_7253);
    let (p, k) = (4i64, 3i64);
    for (letter, ty) in TYPES {
        let complex = matches!(ty, ElementType::C64 | ElementType::C128);
        let name = format!("lapack_{letter}trsm_ffi");
        let mut a = random(&mut rng, 2 * (p * p) as usize, complex);
        // A strong diagonal keeps every triangle well conditioned.
        for b in 0..2 {
            for i in 0..p as usize {
                a[b * (p * p) as usize + i * p as usize + i].0 += 4.0;
            }
        }
        let a_shape = Shape::parse(&format!("{ty}[2,{p},{p}]")).expect("shape");
        let a_lit = literal(ty, &[2, p, p], &a);
        for side in ['L', 'R'] {
            let b_dims = if side == 'L' { [2, p, k] } else { [2, k, p] };
            let b = random(&mut rng, (2 * p * k) as usize, complex);
            let b_shape = Shape::parse(&format!("{ty}[2,{},{}]", b_dims[1], b_dims[2])).expect("shape");
            let b_lit = literal(ty, &b_dims, &b);
            for uplo in ['L', 'U'] {
                for trans in ['N', 'T', 'C'] {
                    for diag in ['N', 'U'] {
                        let opaque = format!(
                            "{{diag = {} : ui8, side = {} : ui8, trans_x = {} : ui8, uplo = {} : ui8}}",
                            diag as u8, side as u8, trans as u8, uplo as u8
                        );
                        let text = module(&name, &[a_shape.clone(), b_shape.clone()], &opaque);
                        compare(&format!("{name} {opaque}"), &text, vec![a_lit.clone(), b_lit.clone()], ty, p as usize);
                    }
                }
            }
        }
    }
}
