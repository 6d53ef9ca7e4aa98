//! BatchNormTraining, BatchNormInference and BatchNormGrad: the document's
//! formulas, evaluated in f64 on the exact operand values, each result
//! rounded once to the element type at the end. `epsilon` is first
//! converted to the element type (as XLA does: an f16 operand sees the f16
//! nearest to epsilon).
//!
//! The document writes the formulas for a 4-D operand `x_ijkl` with the
//! feature dimension `l` last; here the feature dimension is any
//! `feature_index`, and the sums run over every other dimension. `n` is
//! the number of elements per feature (the document's `m·w·h`).

use super::{array, internal};
use crate::error::RunError;
use crate::ir::Op;
use crate::literal::{ArrayLiteral, Data, Literal};
use crate::numerics::float::Float;
use crate::types::{ArrayShape, ElementType, Shape};

type R<T> = Result<T, RunError>;

pub fn eval(op: &Op, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let arrays: Vec<&ArrayLiteral> = operands.iter().map(|o| array(o)).collect::<R<_>>()?;
    let values: Vec<Vec<f64>> = arrays.iter().map(|a| values(a)).collect::<R<_>>()?;
    let x = *arrays.first().ok_or_else(|| internal("batch norm without an operand"))?;
    let t = x.element_type();
    check_lengths(op, x, &values)?;
    let results = match (op, values.as_slice()) {
        (Op::BatchNormTraining { epsilon, feature_index }, [x_v, scale, offset]) => {
            let f = Features::of(x, *feature_index)?;
            let (output, batch_mean, batch_var) = training(&f, x_v, scale, offset, epsilon_in(t, *epsilon));
            vec![output, batch_mean, batch_var]
        }
        (Op::BatchNormInference { epsilon, feature_index }, [x_v, scale, offset, mean, variance]) => {
            let f = Features::of(x, *feature_index)?;
            vec![inference(&f, x_v, scale, offset, mean, variance, epsilon_in(t, *epsilon))]
        }
        (Op::BatchNormGrad { epsilon, feature_index }, [x_v, scale, batch_mean, batch_var, grad_output]) => {
            let f = Features::of(x, *feature_index)?;
            let (grad_operand, grad_scale, grad_offset) = grad(&f, x_v, scale, batch_mean, batch_var, grad_output, epsilon_in(t, *epsilon));
            vec![grad_operand, grad_scale, grad_offset]
        }
        _ => return Err(internal("batch norm op with the wrong operands")),
    };
    let shapes: Vec<&ArrayShape> = match shape {
        Shape::Array(a) => vec![a],
        Shape::Tuple(parts) => parts.iter().map(|p| p.as_array().ok_or_else(|| internal("batch norm result"))).collect::<R<_>>()?,
        Shape::Token => return Err(internal("batch norm result")),
    };
    if shapes.len() != results.len() {
        return Err(internal("batch norm result count"));
    }
    let mut out: Vec<Literal> = Vec::with_capacity(results.len());
    for (v, s) in results.iter().zip(shapes) {
        out.push(ArrayLiteral::with_shape(s.clone(), rounded(t, v)?).into());
    }
    Ok(match shape {
        Shape::Array(_) => out.pop().ok_or_else(|| internal("batch norm result"))?,
        _ => Literal::Tuple(out),
    })
}

/// The per-feature operands have one value per feature and `grad_output`
/// one per operand element (the verifier's rules), so indexing cannot fail.
fn check_lengths(op: &Op, x: &ArrayLiteral, values: &[Vec<f64>]) -> R<()> {
    let feature_index = match op {
        Op::BatchNormTraining { feature_index, .. }
        | Op::BatchNormInference { feature_index, .. }
        | Op::BatchNormGrad { feature_index, .. } => *feature_index,
        _ => return Err(internal("not a batch norm op")),
    };
    let features = Features::of(x, feature_index)?.count;
    let is_grad = matches!(op, Op::BatchNormGrad { .. });
    for (i, v) in values.iter().enumerate().skip(1) {
        let expected = if is_grad && i == 4 { x.element_count() } else { features };
        if v.len() != expected {
            return Err(internal("batch norm operand sizes"));
        }
    }
    Ok(())
}

/// Which feature each element belongs to: the element at linear position
/// `p` (row-major) has feature `(p / stride) % count`.
struct Features {
    count: usize,
    stride: usize,
    /// Elements per feature: the product of every dimension but the feature one.
    n: f64,
}

impl Features {
    fn of(x: &ArrayLiteral, feature_index: i64) -> R<Features> {
        let dims = x.dims();
        let fi = usize::try_from(feature_index).ok().filter(|&i| i < dims.len()).ok_or_else(|| internal("feature_index"))?;
        let count = dims[fi] as usize;
        let stride: usize = dims[fi + 1..].iter().map(|&d| d as usize).product();
        let n: usize = dims.iter().enumerate().filter(|&(i, _)| i != fi).map(|(_, &d)| d as usize).product();
        Ok(Features { count, stride, n: n as f64 })
    }

    fn of_position(&self, p: usize) -> usize {
        (p / self.stride.max(1)) % self.count.max(1)
    }

    /// Σ over the elements of each feature of `term(position, feature)`.
    fn sums(&self, len: usize, term: impl Fn(usize, usize) -> f64) -> Vec<f64> {
        let mut sums = vec![0.0; self.count];
        for p in 0..len {
            let l = self.of_position(p);
            sums[l] += term(p, l);
        }
        sums
    }
}

/// BatchNormTraining — document §BatchNormTraining, the three steps:
/// μ_l = (1/n) Σ x, σ²_l = (1/n) Σ (x - μ_l)², y = γ_l (x - μ_l) / √(σ²_l + ε) + β_l.
fn training(f: &Features, x: &[f64], scale: &[f64], offset: &[f64], epsilon: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let batch_mean: Vec<f64> = f.sums(x.len(), |p, _| x[p]).iter().map(|s| s / f.n).collect();
    let batch_var: Vec<f64> = f.sums(x.len(), |p, l| (x[p] - batch_mean[l]).powi(2)).iter().map(|s| s / f.n).collect();
    let output = inference(f, x, scale, offset, &batch_mean, &batch_var, epsilon);
    (output, batch_mean, batch_var)
}

/// BatchNormInference — document §BatchNormInference: BatchNormTraining's
/// normalisation with the given `mean` and `variance`:
/// y = γ_l (x - mean_l) / √(variance_l + ε) + β_l.
fn inference(f: &Features, x: &[f64], scale: &[f64], offset: &[f64], mean: &[f64], variance: &[f64], epsilon: f64) -> Vec<f64> {
    (0..x.len())
        .map(|p| {
            let l = f.of_position(p);
            scale[l] * (x[p] - mean[l]) / (variance[l] + epsilon).sqrt() + offset[l]
        })
        .collect()
}

/// BatchNormGrad — document §BatchNormGrad, the five formulas:
/// c_l = (1/n) Σ ∇y (x - μ_l) / (σ²_l + ε), d_l = (1/n) Σ ∇y,
/// ∇x = γ_l / √(σ²_l + ε) · (∇y - d_l - c_l (x - μ_l)),
/// ∇γ_l = Σ ∇y (x - μ_l) / √(σ²_l + ε), ∇β_l = Σ ∇y.
fn grad(
    f: &Features,
    x: &[f64],
    scale: &[f64],
    batch_mean: &[f64],
    batch_var: &[f64],
    grad_output: &[f64],
    epsilon: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (dy, mu) = (grad_output, batch_mean);
    let var_eps = |l: usize| batch_var[l] + epsilon;
    let c: Vec<f64> = f.sums(x.len(), |p, l| dy[p] * (x[p] - mu[l]) / var_eps(l)).iter().map(|s| s / f.n).collect();
    let grad_offset = f.sums(x.len(), |p, _| dy[p]);
    let d: Vec<f64> = grad_offset.iter().map(|s| s / f.n).collect();
    let grad_operand = (0..x.len())
        .map(|p| {
            let l = f.of_position(p);
            scale[l] / var_eps(l).sqrt() * (dy[p] - d[l] - c[l] * (x[p] - mu[l]))
        })
        .collect();
    let grad_scale = f.sums(x.len(), |p, l| dy[p] * (x[p] - mu[l]) / var_eps(l).sqrt());
    (grad_operand, grad_scale, grad_offset)
}

/// `epsilon` (an f32 attribute) as a value of the element type `t`, exactly.
fn epsilon_in(t: ElementType, epsilon: f32) -> f64 {
    let e = epsilon as f64;
    crate::by_type!(t, T => { pred: e, int: e, float: T::from_f64(e).to_f64(), complex: e })
}

/// The elements of a real floating-point array, exactly, as f64.
fn values(a: &ArrayLiteral) -> R<Vec<f64>> {
    super::linalg::real_values(a).ok_or_else(|| internal("batch norm on a non-floating-point type"))
}

/// f64 results rounded once (to nearest, ties to even) to the type `t`.
fn rounded(t: ElementType, v: &[f64]) -> R<Data> {
    super::linalg::real_data(t, v).ok_or_else(|| internal("batch norm on a non-floating-point type"))
}
