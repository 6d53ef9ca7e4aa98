//! BatchNormTraining, BatchNormInference and BatchNormGrad: the document's
//! formulas in f64 on the exact operand values, each result rounded once
//! to the element type (as the reference decides), with `epsilon` first
//! rounded to the element type. The operand is seen as
//! `[outer][features][inner]`; per-feature sums are sums of rows (one row
//! per `(outer, feature)`), computed in parallel; element-wise results are
//! computed a row at a time.

use half::{bf16, f16};
use rayon::prelude::*;
use xlaref_reference::ir::Op;
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::{ArrayShape, ElementType, Shape};
use xlaref_reference::RunError;

use super::linalg::{from_reals, reals};
use crate::elem::f8;
use crate::exec::Executor;
use crate::internal;
use crate::par;

type R<T> = Result<T, RunError>;

pub fn eval(_exec: &mut Executor, op: &Op, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let arrays: Vec<&ArrayLiteral> = operands.iter().map(|l| l.as_array().ok_or_else(|| internal("expected arrays"))).collect::<R<_>>()?;
    let x = *arrays.first().ok_or_else(|| internal("batch norm without an operand"))?;
    let t = x.element_type();
    let v: Vec<Vec<f64>> = arrays.iter().map(|a| reals(&a.data).ok_or_else(|| internal("batch norm on a non-float"))).collect::<R<_>>()?;
    let (epsilon, feature_index, want) = match op {
        Op::BatchNormTraining { epsilon, feature_index } => (epsilon, feature_index, 3),
        Op::BatchNormInference { epsilon, feature_index } => (epsilon, feature_index, 5),
        Op::BatchNormGrad { epsilon, feature_index } => (epsilon, feature_index, 5),
        _ => return Err(internal("not a batch norm op")),
    };
    if v.len() != want {
        return Err(internal("batch norm operand count"));
    }
    let g = Layout::of(x.dims(), *feature_index)?;
    let is_grad = matches!(op, Op::BatchNormGrad { .. });
    for (i, values) in v.iter().enumerate().skip(1) {
        let expected = if is_grad && i == 4 { v[0].len() } else { g.count };
        if values.len() != expected {
            return Err(internal("batch norm operand sizes"));
        }
    }
    let eps = epsilon_in(t, *epsilon);
    let results = match op {
        Op::BatchNormTraining { .. } => {
            let (y, mean, var) = training(&g, &v[0], &v[1], &v[2], eps);
            vec![y, mean, var]
        }
        Op::BatchNormInference { .. } => vec![inference(&g, &v[0], &v[1], &v[2], &v[3], &v[4], eps)],
        _ => {
            let (dx, dscale, doffset) = grad(&g, &v[0], &v[1], &v[2], &v[3], &v[4], eps);
            vec![dx, dscale, doffset]
        }
    };
    let shapes: Vec<&ArrayShape> = match shape {
        Shape::Array(a) => vec![a],
        Shape::Tuple(parts) => parts.iter().map(|p| p.as_array().ok_or_else(|| internal("batch norm result"))).collect::<R<_>>()?,
        Shape::Token => return Err(internal("batch norm result")),
    };
    if shapes.len() != results.len() {
        return Err(internal("batch norm result count"));
    }
    let mut out = Vec::with_capacity(results.len());
    for (r, s) in results.iter().zip(shapes) {
        let data = from_reals(t, r).ok_or_else(|| internal("batch norm result type"))?;
        out.push(Literal::from(ArrayLiteral::with_shape(s.clone(), data)));
    }
    Ok(match shape {
        Shape::Array(_) => out.pop().ok_or_else(|| internal("batch norm result"))?,
        _ => Literal::Tuple(out),
    })
}

/// `[outer][count][inner]`: the feature dimension in the middle.
struct Layout {
    outer: usize,
    count: usize,
    inner: usize,
    /// Elements per feature, as f64.
    n: f64,
}

impl Layout {
    fn of(dims: &[i64], feature_index: i64) -> R<Layout> {
        let fi = usize::try_from(feature_index).ok().filter(|&i| i < dims.len()).ok_or_else(|| internal("feature_index"))?;
        let size = |d: &[i64]| d.iter().map(|&k| k as usize).product::<usize>();
        let (outer, count, inner) = (size(&dims[..fi]), dims[fi] as usize, size(&dims[fi + 1..]));
        Ok(Layout { outer, count, inner, n: (outer * inner) as f64 })
    }

    /// Σ over the elements of each feature of `term(position, feature)`.
    fn sums(&self, term: impl Fn(usize, usize) -> f64 + Sync) -> Vec<f64> {
        let (count, inner) = (self.count, self.inner);
        let rows = self.outer * count;
        let row_sum = |r: usize| {
            let (start, l) = (r * inner, r % count);
            par::simd(
                #[inline(always)]
                || (start..start + inner).map(|p| term(p, l)).sum::<f64>(),
            )
        };
        let row_sums: Vec<f64> = if inner >= 1 << 12 {
            (0..rows).into_par_iter().map(row_sum).collect()
        } else {
            par::build(rows, |start, chunk| {
                for (i, o) in chunk.iter_mut().enumerate() {
                    o.write(row_sum(start + i));
                }
            })
        };
        let mut sums = vec![0.0; count];
        for (r, s) in row_sums.iter().enumerate() {
            sums[r % count] += s;
        }
        sums
    }

    /// `f(position, feature)` for every element.
    fn map(&self, f: impl Fn(usize, usize) -> f64 + Sync) -> Vec<f64> {
        let (count, inner) = (self.count, self.inner);
        par::build(self.outer * count * inner, |start, chunk| {
            let (mut p, mut l, mut s) = (start, (start / inner.max(1)) % count.max(1), start % inner.max(1));
            par::simd(
                #[inline(always)]
                || {
                    for o in chunk.iter_mut() {
                        o.write(f(p, l));
                        p += 1;
                        s += 1;
                        if s == inner {
                            s = 0;
                            l += 1;
                            if l == count {
                                l = 0;
                            }
                        }
                    }
                },
            )
        })
    }
}

/// BatchNormTraining — document §BatchNormTraining: μ = (1/n) Σ x,
/// σ² = (1/n) Σ (x - μ)², y = γ (x - μ) / √(σ² + ε) + β.
fn training(g: &Layout, x: &[f64], scale: &[f64], offset: &[f64], eps: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mean: Vec<f64> = g.sums(|p, _| x[p]).iter().map(|s| s / g.n).collect();
    let var: Vec<f64> = g
        .sums(|p, l| {
            let d = x[p] - mean[l];
            d * d
        })
        .iter()
        .map(|s| s / g.n)
        .collect();
    let y = inference(g, x, scale, offset, &mean, &var, eps);
    (y, mean, var)
}

/// BatchNormInference — document §BatchNormInference:
/// y = γ (x - mean) / √(variance + ε) + β.
fn inference(g: &Layout, x: &[f64], scale: &[f64], offset: &[f64], mean: &[f64], var: &[f64], eps: f64) -> Vec<f64> {
    let root: Vec<f64> = var.iter().map(|v| (v + eps).sqrt()).collect();
    g.map(|p, l| scale[l] * (x[p] - mean[l]) / root[l] + offset[l])
}

/// BatchNormGrad — document §BatchNormGrad:
/// c = (1/n) Σ ∇y (x - μ) / (σ² + ε), d = (1/n) Σ ∇y,
/// ∇x = γ / √(σ² + ε) · (∇y - d - c (x - μ)),
/// ∇γ = Σ ∇y (x - μ) / √(σ² + ε), ∇β = Σ ∇y.
fn grad(g: &Layout, x: &[f64], scale: &[f64], mu: &[f64], var: &[f64], dy: &[f64], eps: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let var_eps: Vec<f64> = var.iter().map(|v| v + eps).collect();
    let root: Vec<f64> = var_eps.iter().map(|v| v.sqrt()).collect();
    let c: Vec<f64> = g.sums(|p, l| dy[p] * (x[p] - mu[l]) / var_eps[l]).iter().map(|s| s / g.n).collect();
    let grad_offset = g.sums(|p, _| dy[p]);
    let d: Vec<f64> = grad_offset.iter().map(|s| s / g.n).collect();
    let grad_operand = g.map(|p, l| scale[l] / root[l] * (dy[p] - d[l] - c[l] * (x[p] - mu[l])));
    let grad_scale = g.sums(|p, l| dy[p] * (x[p] - mu[l]) / root[l]);
    (grad_operand, grad_scale, grad_offset)
}

/// `epsilon` (an f32) rounded to the element type `t`, as f64.
fn epsilon_in(t: ElementType, epsilon: f32) -> f64 {
    match t {
        ElementType::F16 => f16::from_f32(epsilon).to_f64(),
        ElementType::BF16 => bf16::from_f32(epsilon).to_f64(),
        ElementType::F8E4M3FN => f8::e4m3fn_to_f32(f8::e4m3fn_from_f64(epsilon as f64)) as f64,
        ElementType::F8E5M2 => f8::e5m2_to_f32(f8::e5m2_from_f64(epsilon as f64)) as f64,
        _ => epsilon as f64,
    }
}
