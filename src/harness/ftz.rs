//! The flush-to-zero explanation of a difference. XLA CPU runs with the x86
//! FTZ and DAZ flags (docs/conformance-xla-cpu.md, D1): subnormal operands
//! are read as zero and subnormal results written as zero. The document
//! says nothing of flushing, so the reference keeps subnormals; a backend
//! that flushes differs wherever one appears. `xlaref conform --ftz` asks,
//! for each instruction where a backend differs, whether the reference run
//! on flushed operands, its result flushed, agrees with the backend; if so
//! the difference is a known deviation, not a failure.

use half::bf16;
use num_complex::Complex;
use xlaref_reference::eval::Env;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::verify::VerifiedModule;

use super::engine::{Engine, Reference};
use super::tolerance::{allowance, judge};

fn flush32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

fn flush64(x: f64) -> f64 {
    if x.is_subnormal() {
        0.0f64.copysign(x)
    } else {
        x
    }
}

/// The literal with every subnormal of a type computed in f32 or f64
/// hardware (bf16, f32, f64, c64, c128) replaced by a zero of its sign.
/// f16 and f8 subnormals are normal numbers once widened to f32: kept.
pub fn flush_subnormals(l: &Literal) -> Literal {
    match l {
        Literal::Array(a) => {
            let data = match &a.data {
                Data::BF16(v) => Data::BF16(v.iter().map(|x| bf16::from_f32(flush32(x.to_f32()))).collect()),
                Data::F32(v) => Data::F32(v.iter().map(|&x| flush32(x)).collect()),
                Data::F64(v) => Data::F64(v.iter().map(|&x| flush64(x)).collect()),
                Data::C64(v) => Data::C64(v.iter().map(|z| Complex::new(flush32(z.re), flush32(z.im))).collect()),
                Data::C128(v) => Data::C128(v.iter().map(|z| Complex::new(flush64(z.re), flush64(z.im))).collect()),
                other => other.clone(),
            };
            Literal::Array(ArrayLiteral { shape: a.shape.clone(), data, dynamic_sizes: a.dynamic_sizes.clone() })
        }
        Literal::Tuple(items) => Literal::Tuple(items.iter().map(flush_subnormals).collect()),
        Literal::Token => Literal::Token,
    }
}

/// Whether `got` (a backend's result of the one-instruction module
/// `single` on `args`) agrees, under the tolerance model, with the
/// reference's result on flushed operands, flushed.
pub fn explained_by_flushing(single: &VerifiedModule, args: &[Literal], got: &Literal, env: &dyn Fn() -> Env) -> bool {
    let flushed: Vec<Literal> = args.iter().map(flush_subnormals).collect();
    let Ok(value) = Reference.run(single, flushed.clone(), &mut env()) else { return false };
    let value = flush_subnormals(&value);
    let refs: Vec<&Literal> = flushed.iter().collect();
    let allowed = allowance(single, single.entry(), single.computation(single.entry()).root, &refs, &value);
    judge(&flush_subnormals(got), &value, &allowed).is_none()
}
