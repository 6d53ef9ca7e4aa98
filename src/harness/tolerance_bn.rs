//! The tolerance of BatchNormTraining and BatchNormGrad (docs/tolerance.md,
//! "Batch normalization"): their results are tuples whose statistics are
//! sums over each feature, so an engine that accumulates in another order
//! or precision may cancel differently. Each statistic gets the bound of a
//! sum, `c·Σ|terms|` with `c = 8·(m+8)·u` (`m` terms per feature, `u` the
//! unit roundoff of the element type: the heuristic factor of the other
//! linear-algebra ops), and each element that depends on a statistic gets
//! that statistic's error propagated to first order.

use xlaref_reference::ir::Op;
use xlaref_reference::literal::{ArrayLiteral, Literal};

use super::tolerance::{Allowance, Interval, Precision};

/// Per-feature layout of the operand: element `p` belongs to feature
/// `(p / stride) % features`.
struct Features {
    features: usize,
    stride: usize,
    per_feature: f64,
}

impl Features {
    fn of(x: &ArrayLiteral, feature_index: i64) -> Option<Features> {
        let dims = x.dims();
        let k = usize::try_from(feature_index).ok().filter(|&k| k < dims.len())?;
        let features = usize::try_from(dims[k]).ok()?;
        let stride = dims[k + 1..].iter().map(|&d| d.max(0) as usize).product::<usize>();
        let total = x.element_count();
        Some(Features { features, stride, per_feature: (total / features.max(1)) as f64 })
    }

    fn of_position(&self, p: usize) -> usize {
        (p / self.stride.max(1)) % self.features.max(1)
    }

    /// `Σ term(p, l)` per feature `l`.
    fn sums(&self, len: usize, term: impl Fn(usize, usize) -> f64) -> Vec<f64> {
        let mut out = vec![0.0; self.features];
        for p in 0..len {
            let l = self.of_position(p);
            out[l] += term(p, l);
        }
        out
    }
}

fn reals(l: &Literal) -> Option<Vec<f64>> {
    let a = l.as_array()?;
    match xlaref_reference::numerics::convert::convert(&a.data, xlaref_reference::types::ElementType::F64) {
        xlaref_reference::literal::Data::F64(v) => Some(v),
        _ => None,
    }
}

/// The intervals of one result part: `radius(i)` around each element;
/// `overflows(i)` when an intermediate of that element (a sum of squares,
/// say) may exceed the element type's range, so that an engine computing
/// in the element type honestly gets a non-finite value where the
/// reference, computing in f64, does not. A radius the propagation cannot
/// bound (NaN: non-finite statistics) accepts any finite value.
fn part(p: Precision, values: &[f64], radius: impl Fn(usize) -> f64, overflows: impl Fn(usize) -> bool) -> Allowance {
    Allowance::Intervals(
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let r = radius(i) + p.ulp(v);
                Interval {
                    center: v,
                    radius: if r.is_nan() { f64::INFINITY } else { r },
                    special: (!v.is_finite()).then_some(v),
                    may_overflow: overflows(i),
                }
            })
            .collect(),
    )
}

/// The allowance of a BatchNormTraining or BatchNormGrad result, if the
/// operands are as the verifier guarantees.
pub fn batch_norm_parts(op: &Op, p: Precision, operands: &[&Literal], reference: &Literal) -> Option<Allowance> {
    let results: Vec<Vec<f64>> = reference.as_tuple()?.iter().map(reals).collect::<Option<_>>()?;
    let ops: Vec<Vec<f64>> = operands.iter().map(|o| reals(o)).collect::<Option<_>>()?;
    let x_array = operands.first()?.as_array()?;
    let (feature_index, epsilon) = match op {
        Op::BatchNormTraining { feature_index, epsilon } | Op::BatchNormGrad { feature_index, epsilon } => (*feature_index, *epsilon),
        _ => return None,
    };
    let f = Features::of(x_array, feature_index)?;
    let c = 8.0 * (f.per_feature + 8.0) * p.unit_roundoff();
    let m = f.per_feature.max(1.0);
    let eps = f64::from(epsilon);
    let x = ops.first()?;
    let scale = ops.get(1)?;
    match (op, results.as_slice()) {
        (Op::BatchNormTraining { .. }, [y, mean, var]) => {
            let abs_mean: Vec<f64> = f.sums(x.len(), |q, _| x[q].abs()).iter().map(|s| s / m).collect();
            let square_mean: Vec<f64> = f.sums(x.len(), |q, _| x[q] * x[q]).iter().map(|s| s / m).collect();
            let d_mean: Vec<f64> = (0..f.features).map(|l| c * abs_mean[l] + p.ulp(mean[l])).collect();
            let d_var: Vec<f64> = (0..f.features).map(|l| c * (square_mean[l] + abs_mean[l] * abs_mean[l]) + p.ulp(var[l])).collect();
            // Σx² (the variance's sum) or Σ|x| beyond the type's range.
            let big: Vec<bool> = (0..f.features).map(|l| (square_mean[l] * m).max(abs_mean[l] * m) >= p.max_finite).collect();
            let y_mean = y.iter().filter(|v| v.is_finite()).map(|v| v.abs()).sum::<f64>() / y.len().max(1) as f64;
            let output_radius = |q: usize| {
                let l = f.of_position(q);
                let ve = var[l] + eps;
                let centred = (x[q] - mean[l]).abs();
                c * (y[q].abs() + y_mean) + scale[l].abs() * (d_mean[l] / ve.sqrt() + centred * d_var[l] / (2.0 * ve * ve.sqrt()))
            };
            let output = part(p, y, output_radius, |q| big[f.of_position(q)]);
            Some(Allowance::Parts(vec![output, part(p, mean, |l| d_mean[l], |l| big[l]), part(p, var, |l| d_var[l], |l| big[l])]))
        }
        (Op::BatchNormGrad { .. }, [grad_operand, grad_scale, grad_offset]) => {
            let (mu, var, dy) = (ops.get(2)?, ops.get(3)?, ops.get(4)?);
            let ve = |l: usize| var[l] + eps;
            let abs_dy = f.sums(x.len(), |q, _| dy[q].abs());
            let abs_dyx = f.sums(x.len(), |q, l| (dy[q] * (x[q] - mu[l])).abs());
            let d_offset: Vec<f64> = (0..f.features).map(|l| c * abs_dy[l]).collect();
            let d_scale: Vec<f64> = (0..f.features).map(|l| c * abs_dyx[l] / ve(l).sqrt()).collect();
            let big: Vec<bool> = (0..f.features).map(|l| abs_dy[l].max(abs_dyx[l]) >= p.max_finite).collect();
            let g_mean = grad_operand.iter().filter(|v| v.is_finite()).map(|v| v.abs()).sum::<f64>() / grad_operand.len().max(1) as f64;
            let operand_radius = |q: usize| {
                let l = f.of_position(q);
                let s = ve(l).sqrt();
                let d_c = c * abs_dyx[l] / ve(l) / m;
                c * (grad_operand[q].abs() + g_mean) + scale[l].abs() / s * (d_offset[l] / m + d_c * (x[q] - mu[l]).abs())
            };
            let operand_part = part(p, grad_operand, operand_radius, |q| big[f.of_position(q)]);
            Some(Allowance::Parts(vec![
                operand_part,
                part(p, grad_scale, |l| d_scale[l], |l| big[l]),
                part(p, grad_offset, |l| d_offset[l], |l| big[l]),
            ]))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::tolerance::judge;
    use xlaref_reference::types::ElementType;

    fn f32s(dims: Vec<i64>, v: Vec<f32>) -> Literal {
        Literal::Array(ArrayLiteral::from_vec(dims, v))
    }

    /// A mean that cancels catastrophically (1e30 - 1e30 + 1) may be 0 in
    /// another summation order; a mean off by more than the sum bound is not.
    #[test]
    fn batch_mean_is_judged_as_a_sum() {
        let op = Op::BatchNormTraining { epsilon: 1.0, feature_index: 1 };
        let x = f32s(vec![4, 1], vec![1e30, 1.0, -1e30, 0.0]);
        let (scale, offset) = (f32s(vec![1], vec![1.0]), f32s(vec![1], vec![0.0]));
        let reference = Literal::Tuple(vec![
            f32s(vec![4, 1], vec![1.0, 0.0, -1.0, 0.0]),
            f32s(vec![1], vec![0.25]),
            f32s(vec![1], vec![f32::INFINITY]),
        ]);
        let p = Precision::of(ElementType::F32).expect("f32 is a float type");
        let allowed = batch_norm_parts(&op, p, &[&x, &scale, &offset], &reference).expect("a batch-norm allowance");
        let cancelled =
            Literal::Tuple(vec![f32s(vec![4, 1], vec![1.0, 0.0, -1.0, 0.0]), f32s(vec![1], vec![0.0]), f32s(vec![1], vec![f32::INFINITY])]);
        assert!(judge(&cancelled, &reference, &allowed).is_none());
        let small = f32s(vec![4, 1], vec![1.0, 2.0, 3.0, 4.0]);
        let reference =
            Literal::Tuple(vec![f32s(vec![4, 1], vec![-1.3, -0.4, 0.4, 1.3]), f32s(vec![1], vec![2.5]), f32s(vec![1], vec![1.25])]);
        let allowed = batch_norm_parts(&op, p, &[&small, &scale, &offset], &reference).expect("a batch-norm allowance");
        let wrong =
            Literal::Tuple(vec![f32s(vec![4, 1], vec![-1.3, -0.4, 0.4, 1.3]), f32s(vec![1], vec![2.75]), f32s(vec![1], vec![1.25])]);
        let m = judge(&wrong, &reference, &allowed).expect("a wrong mean is rejected");
        assert!(m.at.starts_with("{1}"), "{}", m.at);
    }
}
