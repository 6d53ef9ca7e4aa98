//! The direct path against the im2col path, bit for bit: integer-valued
//! floats small enough that every sum is exact in any order.

use super::*;
use crate::isa::isa;
use crate::kernels::gemm::skinny::Skinny;
use xlaref_reference::ir::{ConvDims, Padding};
use xlaref_reference::types::ElementType;

/// One convolution to try, in the input order the dimension numbers name
/// (`layout` 0: NHWC/HWIO/NHWC as JAX prints it; 1: the document's
/// NCHW/OIHW/NCHW; 2: spatial dimensions first everywhere).
#[derive(Clone, Debug)]
struct Case {
    batch: usize,
    input: Vec<usize>,
    window: Vec<usize>,
    iz: usize,
    oz: usize,
    stride: Vec<i64>,
    padding: Vec<(i64, i64)>,
    lhs_dilation: Vec<i64>,
    rhs_dilation: Vec<i64>,
    feature_groups: usize,
    batch_groups: usize,
    layout: usize,
}

impl Case {
    fn plain(input: &[usize], window: &[usize], iz: usize, oz: usize) -> Case {
        let n = input.len();
        Case {
            batch: 2,
            input: input.to_vec(),
            window: window.to_vec(),
            iz,
            oz,
            stride: vec![1; n],
            padding: window.iter().map(|&w| ((w as i64 - 1) / 2, w as i64 / 2)).collect(),
            lhs_dilation: vec![1; n],
            rhs_dilation: vec![1; n],
            feature_groups: 1,
            batch_groups: 1,
            layout: 0,
        }
    }

    fn out_spatial(&self) -> Vec<usize> {
        (0..self.input.len())
            .map(|d| {
                let dilated = (self.input[d] as i64 - 1) * self.lhs_dilation[d] + 1;
                let padded = dilated + self.padding[d].0 + self.padding[d].1;
                let window = (self.window[d] as i64 - 1) * self.rhs_dilation[d] + 1;
                if padded < window {
                    0
                } else {
                    ((padded - window) / self.stride[d] + 1) as usize
                }
            })
            .collect()
    }

    /// Dimension numbers and the three shapes' dimensions in their order.
    fn dims(&self) -> (ConvDims, Vec<i64>, Vec<i64>, Vec<i64>) {
        let n = self.input.len() as i64;
        let s: Vec<i64> = (0..n).collect();
        let (batch, feature, spatial, o, i, k_spatial) = match self.layout {
            0 => (0, n + 1, s.iter().map(|d| d + 1).collect::<Vec<_>>(), n + 1, n, s.clone()),
            1 => (0, 1, s.iter().map(|d| d + 2).collect(), 0, 1, s.iter().map(|d| d + 2).collect()),
            _ => (n, n + 1, s.clone(), n + 1, n, s.clone()),
        };
        let d = ConvDims {
            input_batch_dimension: batch,
            input_feature_dimension: feature,
            input_spatial_dimensions: spatial.clone(),
            kernel_output_feature_dimension: o,
            kernel_input_feature_dimension: i,
            kernel_spatial_dimensions: k_spatial.clone(),
            output_batch_dimension: batch,
            output_feature_dimension: feature,
            output_spatial_dimensions: spatial.clone(),
        };
        let rank = self.input.len() + 2;
        let place = |b: usize, f: usize, sp: &[usize], bd: i64, fd: i64, sd: &[i64]| {
            let mut v = vec![0i64; rank];
            v[bd as usize] = b as i64;
            v[fd as usize] = f as i64;
            for (x, &dd) in sp.iter().zip(sd) {
                v[dd as usize] = *x as i64;
            }
            v
        };
        let lhs = place(self.batch, self.iz, &self.input, batch, feature, &spatial);
        let rhs = place(self.oz, self.iz / self.feature_groups, &self.window, o, i, &k_spatial);
        let out = place(self.batch / self.batch_groups, self.oz, &self.out_spatial(), batch, feature, &spatial);
        (d, lhs, rhs, out)
    }

    fn attrs(&self, d: ConvDims) -> ConvAttrs {
        ConvAttrs {
            window_strides: self.stride.clone(),
            padding: Padding::Explicit(self.padding.clone()),
            lhs_dilation: self.lhs_dilation.clone(),
            rhs_dilation: self.rhs_dilation.clone(),
            feature_group_count: self.feature_groups as i64,
            batch_group_count: self.batch_groups as i64,
            dimension_numbers: Some(d),
            preferred_element_type: None,
        }
    }
}

fn check<T: Skinny + xlaref_reference::literal::Stored + PartialEq + std::fmt::Debug>(case: &Case, from: impl Fn(i64) -> T) {
    let (d, lhs_dims, rhs_dims, out_dims) = case.dims();
    let count = |v: &[i64]| v.iter().product::<i64>();
    let x: Vec<T> = (0..count(&lhs_dims)).map(|v| from(v * 7 % 11 - 5)).collect();
    let w: Vec<T> = (0..count(&rhs_dims)).map(|v| from(v * 5 % 7 - 3)).collect();
    let lhs = ArrayLiteral::from_vec(lhs_dims, x);
    let rhs = ArrayLiteral::from_vec(rhs_dims, w);
    let out = ArrayShape::new(lhs.element_type(), out_dims);
    let attrs = case.attrs(d);
    let before = direct::RUNS.load(std::sync::atomic::Ordering::Relaxed);
    let direct = conv_by(&attrs, &lhs, &rhs, &out, true, None).unwrap().0;
    let ran = direct::RUNS.load(std::sync::atomic::Ordering::Relaxed) > before;
    let im2col = conv_by(&attrs, &lhs, &rhs, &out, false, None).unwrap().0;
    assert_eq!(direct.typed::<T>().unwrap(), im2col.typed::<T>().unwrap(), "{case:?}");
    let lanes = T::lanes(isa());
    if lanes > 0 && (case.oz / case.feature_groups.max(case.batch_groups)) * 2 >= lanes {
        assert!(ran, "the direct path did not take {case:?}");
    }
}

fn cases() -> Vec<Case> {
    let mut v = vec![
        Case::plain(&[8, 8], &[3, 3], 32, 32),
        Case::plain(&[5, 7], &[3, 3], 3, 20),
        Case::plain(&[6, 9], &[3, 2], 8, 48),
        Case::plain(&[13], &[5], 4, 16),
        Case::plain(&[3, 4, 5], &[2, 3, 2], 5, 9),
        Case::plain(&[4, 4], &[1, 1], 16, 40),
        Case::plain(&[2, 3], &[3, 3], 2, 33),
    ];
    let mut strided = Case::plain(&[9, 10], &[3, 3], 6, 16);
    strided.stride = vec![2, 3];
    v.push(strided);
    let mut dilated = Case::plain(&[6, 7], &[3, 2], 4, 16);
    dilated.lhs_dilation = vec![2, 1];
    dilated.rhs_dilation = vec![1, 2];
    dilated.padding = vec![(2, -1), (0, 3)];
    v.push(dilated);
    let mut grouped = Case::plain(&[5, 6], &[3, 3], 8, 32);
    grouped.feature_groups = 2;
    v.push(grouped);
    let mut batch_grouped = Case::plain(&[5, 5], &[2, 2], 6, 32);
    (batch_grouped.batch, batch_grouped.batch_groups) = (4, 2);
    v.push(batch_grouped);
    let mut all_padding = Case::plain(&[2, 2], &[3, 3], 4, 16);
    all_padding.padding = vec![(4, 4), (0, 0)];
    v.push(all_padding);
    let jax_layout = v.clone();
    for layout in [1, 2] {
        v.extend(jax_layout.iter().map(|c| Case { layout, ..c.clone() }));
    }
    v
}

#[test]
fn the_direct_path_sums_as_im2col_does() {
    for case in cases() {
        check::<f32>(&case, |v| v as f32);
        check::<f64>(&case, |v| v as f64);
    }
}

/// Weights that are not finite: padding must then stay out of the sums,
/// which the direct path (zeros times weights) cannot do; it declines.
#[test]
fn an_infinite_weight_is_left_to_im2col() {
    let case = Case::plain(&[4, 4], &[3, 3], 4, 16);
    let (d, lhs_dims, rhs_dims, out_dims) = case.dims();
    let x = vec![1.0f32; lhs_dims.iter().product::<i64>() as usize];
    let mut w = vec![0.5f32; rhs_dims.iter().product::<i64>() as usize];
    w[0] = f32::INFINITY;
    let out = ArrayShape::new(ElementType::F32, out_dims);
    let got =
        conv_by(&case.attrs(d), &ArrayLiteral::from_vec(lhs_dims, x), &ArrayLiteral::from_vec(rhs_dims, w), &out, true, None).unwrap().0;
    let got = got.typed::<f32>().unwrap();
    // Output (0, 0, 0, z): window position (0, 0) is padding, so the
    // infinity never meets a value; output (0, 1, 1, 0) reads it.
    assert!(got[0].is_finite(), "{}", got[0]);
    assert_eq!(got[(4 + 1) * 16], f32::INFINITY);
}

/// `CONV_SHAPE=N,H,W,C,O cargo test --release -p xlaref-fast nhwc_speed --
/// --ignored --nocapture` (3×3 SAME, f32, NHWC/HWIO), both paths.
#[test]
#[ignore]
fn nhwc_speed() {
    let shape: Vec<usize> =
        std::env::var("CONV_SHAPE").unwrap_or_else(|_| "16,64,64,32,32".into()).split(',').map(|s| s.trim().parse().unwrap()).collect();
    let [n, h, w, c, o] = shape[..] else { panic!("CONV_SHAPE=N,H,W,C,O") };
    let mut case = Case::plain(&[h, w], &[3, 3], c, o);
    case.batch = n;
    let (d, lhs_dims, rhs_dims, out_dims) = case.dims();
    let x = ArrayLiteral::from_vec(lhs_dims, (0..n * h * w * c).map(|v| (v % 7) as f32).collect());
    let k = ArrayLiteral::from_vec(rhs_dims, (0..9 * c * o).map(|v| (v % 5) as f32).collect());
    let out = ArrayShape::new(ElementType::F32, out_dims);
    let attrs = case.attrs(d);
    let flops = 2.0 * (n * h * w * o * c * 9) as f64;
    for direct in [true, false] {
        let mut best = f64::MAX;
        for _ in 0..10 {
            let t = std::time::Instant::now();
            conv_by(&attrs, &x, &k, &out, direct, None).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
        }
        let name = if direct { "direct" } else { "im2col" };
        eprintln!("{name}: {n}x{h}x{w}x{c} -> {o}: {:.3} ms, {:.1} GFLOP/s", best * 1e3, flops / best / 1e9);
    }
}

/// On AVX-512 hosts, output features that fit one ymm vector take the AVX2
/// tiles: a zmm panel for them would be half zeros.
#[cfg(target_arch = "x86_64")]
#[test]
fn narrow_panels_take_ymm_tiles() {
    use crate::isa::Isa;
    assert_eq!(direct::tile_isa::<f32>(Isa::Avx512, 8), Isa::Avx2);
    assert_eq!(direct::tile_isa::<f32>(Isa::Avx512Vbmi, 5), Isa::Avx2);
    assert_eq!(direct::tile_isa::<f32>(Isa::Avx512, 9), Isa::Avx512);
    assert_eq!(direct::tile_isa::<f64>(Isa::Avx512, 4), Isa::Avx2);
    assert_eq!(direct::tile_isa::<f64>(Isa::Avx512, 5), Isa::Avx512);
    assert_eq!(direct::tile_isa::<f32>(Isa::Avx2, 4), Isa::Avx2);
}
