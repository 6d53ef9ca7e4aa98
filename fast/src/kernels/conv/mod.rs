//! Fast convolutions (Conv, ConvWithGeneralPadding, ConvGeneralDilated,
//! every dimension numbering) by im2col onto the GEMM.
//!
//! The lhs is first laid out as [batch][spatial...][feature] and the
//! kernel as [window...][input-z][output-z]. For each group (feature or
//! batch group) the convolution is then the GEMM
//! `C[(b, out spatial)][oz] = Σ_(window, iz) col[(b, out spatial)][(window,
//! iz)] · W[(window, iz)][oz]`, where a row of `col` holds, for each window
//! position, the `input-z` features of the input element under it (zeros
//! for padding and for the holes of lhs dilation). The contracted index
//! runs window-major, feature-minor: the reference's summation order. Rows
//! are built and multiplied in chunks, in parallel, so `col` is never
//! materialized whole. C ([batch][out spatial...][output-z]) is finally
//! permuted into the output's dimension order.
//!
//! f32 and f64 on AVX-512 or AVX2 take the same GEMM without `col`
//! ([`direct`]) when they can.

pub mod direct;
#[cfg(test)]
mod direct_tests;
#[cfg(target_arch = "x86_64")]
mod x86;

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use xlaref_reference::ir::{ConvAttrs, Op};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::{ArrayShape, Shape};
use xlaref_reference::RunError;

use super::dot::numeric::{self, SumOfProducts};
use super::dot::{gather, is_row_major, laid_out, Group};
use super::gemm::{self, Elem, MatRef};
use crate::exec::Executor;
use crate::internal;

type R<T> = Result<T, RunError>;

/// A convolution's sums for [`Elem::direct_conv`]: the canonical input
/// [batch][spatial...][feature], the kernel [window...][input-z][output-z]
/// and C [batch][out spatial...][output-z], every element of which the
/// direct path writes.
pub struct Job<'a, T> {
    plan: &'a Plan,
    x: &'a [T],
    w: &'a [T],
    c: &'a mut [std::mem::MaybeUninit<T>],
    clock: xlaref_reference::watch::Clock,
}

pub fn eval(_exec: &mut Executor, op: &Op, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let Op::Conv(attrs) = op else { return Err(internal("not a convolution")) };
    let [lhs, rhs] = operands else { return Err(internal("a convolution takes two operands")) };
    let (lhs, rhs) = (lhs.as_array().ok_or_else(|| internal("array operand"))?, rhs.as_array().ok_or_else(|| internal("array operand"))?);
    let out = shape.as_array().ok_or_else(|| internal("array result"))?;
    Ok(conv(attrs, lhs, rhs, out)?.into())
}

/// One spatial dimension: for each (output position, window position), the
/// input element under the window, if any (not padding, not a hole).
struct Spatial {
    out_size: usize,
    window: usize,
    /// `table[o · window + k]`: the input index, or `None`.
    table: Vec<Option<usize>>,
}

impl Spatial {
    #[allow(clippy::too_many_arguments)]
    fn new(out_size: usize, window: usize, input: i64, stride: i64, pad_low: i64, lhs_dilation: i64, rhs_dilation: i64) -> Spatial {
        let table = (0..out_size as i128)
            .flat_map(|o| (0..window as i128).map(move |k| (o, k)))
            .map(|(o, k)| {
                // The document's `iy = oy·stride + ky·dilation - pad_low`,
                // a position in the dilated base area.
                let iy = o * stride as i128 + k * rhs_dilation as i128 - pad_low as i128;
                let d = lhs_dilation.max(1) as i128;
                (iy >= 0 && iy % d == 0 && iy / d < input as i128).then(|| (iy / d) as usize)
            })
            .collect();
        Spatial { out_size, window, table }
    }
}

struct Plan {
    /// Spatial dimensions of the lhs, in order.
    spatial: Vec<Spatial>,
    /// lhs sizes and strides, as [batch][spatial...][feature].
    lhs_view: Group,
    /// Kernel sizes and strides, as [window...][input-z][output-z].
    rhs_view: Group,
    /// Output (canonical C) strides, in the output's dimension order.
    out_view: Group,
    input_z: usize,
    iz_per_group: usize,
    output_z: usize,
    oz_per_group: usize,
    groups: usize,
    feature_groups: bool,
    out_batch: usize,
    /// Whether the direct path may take it ([`direct::wanted`]).
    direct: bool,
    /// The fused bias and ReLU, and whether the direct path applied them.
    bias: Option<Bias>,
    biased: AtomicBool,
}

/// The convolution — document §ConvWithGeneralPadding, generalised as the
/// reference's `conv` describes.
pub fn conv(attrs: &ConvAttrs, lhs: &ArrayLiteral, rhs: &ArrayLiteral, out: &ArrayShape) -> R<ArrayLiteral> {
    conv_by(attrs, lhs, rhs, out, direct::wanted(), None).map(|(r, _)| r)
}

/// A bias per output feature added to the convolution's sums, then ReLU
/// when `relu` (`fusion::conv_epilogue`: the Add and Max that read only
/// the convolution).
pub struct Bias {
    /// Per output feature (f32 or f64 values, exact as f64).
    pub values: Vec<f64>,
    pub relu: bool,
}

/// [`conv`] with `bias` applied as the sums are stored, when the direct
/// path runs it; the flag says whether it was applied (if not, the caller
/// applies it to the result).
pub fn conv_with_bias(attrs: &ConvAttrs, lhs: &ArrayLiteral, rhs: &ArrayLiteral, out: &ArrayShape, bias: Bias) -> R<(ArrayLiteral, bool)> {
    conv_by(attrs, lhs, rhs, out, direct::wanted(), Some(bias))
}

/// [`conv`], by the direct path where it can take the convolution when
/// `direct`, else always by im2col; with `bias` in the direct path's
/// stores (the flag says whether it ran).
fn conv_by(
    attrs: &ConvAttrs,
    lhs: &ArrayLiteral,
    rhs: &ArrayLiteral,
    out: &ArrayShape,
    direct: bool,
    bias: Option<Bias>,
) -> R<(ArrayLiteral, bool)> {
    let d = attrs.dims(lhs.rank());
    let n = d.input_spatial_dimensions.len();
    if !attrs.indexable(&d, lhs.rank(), rhs.rank(), out.rank()) {
        return Err(internal("convolution attributes do not fit the operands"));
    }
    let (ls, rs) = (lhs.shape.strides(), rhs.shape.strides());
    let (ld, rd, od) = (lhs.dims(), rhs.dims(), &out.dims);
    let u = |x: i64| x.max(0) as usize;
    let input: Vec<i64> = d.input_spatial_dimensions.iter().map(|&i| ld[i as usize]).collect();
    let window: Vec<i64> = d.kernel_spatial_dimensions.iter().map(|&i| rd[i as usize]).collect();
    // SAME is resolved with strides clamped to the input size (as the
    // reference: a stride beyond the input places the one window alike).
    let strides: Vec<i64> = attrs.window_strides.iter().zip(&input).map(|(&s, &i)| s.min(i.max(1))).collect();
    let padding = attrs.padding.resolve(&input, &window, &attrs.rhs_dilation, &strides);
    let mut spatial = Vec::with_capacity(n);
    for i in 0..n {
        let out_size = u(od[d.output_spatial_dimensions[i] as usize]);
        let pad_low = padding.get(i).map_or(0, |p| p.0);
        spatial.push(Spatial::new(
            out_size,
            u(window[i]),
            input[i],
            attrs.window_strides[i],
            pad_low,
            attrs.lhs_dilation[i],
            attrs.rhs_dilation[i],
        ));
    }
    let (fg, bg) = (u(attrs.feature_group_count).max(1), u(attrs.batch_group_count).max(1));
    let groups = fg.max(bg);
    let output_z = u(rd[d.kernel_output_feature_dimension as usize]);
    let mut lhs_view = Group::default();
    lhs_view.push(u(ld[d.input_batch_dimension as usize]), ls[d.input_batch_dimension as usize]);
    for &i in &d.input_spatial_dimensions {
        lhs_view.push(u(ld[i as usize]), ls[i as usize]);
    }
    lhs_view.push(u(ld[d.input_feature_dimension as usize]), ls[d.input_feature_dimension as usize]);
    let mut rhs_view = Group::default();
    for &i in &d.kernel_spatial_dimensions {
        rhs_view.push(u(rd[i as usize]), rs[i as usize]);
    }
    rhs_view.push(u(rd[d.kernel_input_feature_dimension as usize]), rs[d.kernel_input_feature_dimension as usize]);
    rhs_view.push(output_z, rs[d.kernel_output_feature_dimension as usize]);
    // Canonical C is [batch][out spatial...][output-z]; its strides, placed
    // at the output dimensions they belong to.
    let out_batch = u(od[d.output_batch_dimension as usize]);
    let mut canonical = vec![0usize; n + 2];
    let mut stride = 1usize;
    canonical[d.output_feature_dimension as usize] = stride;
    stride *= output_z;
    for i in (0..n).rev() {
        canonical[d.output_spatial_dimensions[i] as usize] = stride;
        stride *= spatial[i].out_size;
    }
    canonical[d.output_batch_dimension as usize] = stride;
    let out_view = Group { sizes: od.iter().map(|&x| u(x)).collect(), strides: canonical };
    let input_z = u(ld[d.input_feature_dimension as usize]);
    let plan = Plan {
        spatial,
        lhs_view,
        rhs_view,
        out_view,
        input_z,
        iz_per_group: u(rd[d.kernel_input_feature_dimension as usize]),
        output_z,
        oz_per_group: output_z / groups,
        groups,
        feature_groups: fg > 1,
        out_batch,
        direct,
        bias,
        biased: AtomicBool::new(false),
    };
    let result = numeric::run(&plan, lhs, rhs, out)?;
    Ok((result, plan.biased.load(Ordering::Relaxed)))
}

/// Rows of `col` per parallel task: about 256 KiB of f32s.
fn chunk_rows(k: usize) -> usize {
    ((1usize << 16) / k.max(1)).clamp(12, 1 << 12) / 12 * 12
}

impl SumOfProducts for Plan {
    fn compute<T: Elem>(&self, lhs: &[T], rhs: &[T]) -> R<Vec<T>> {
        // NHWC/HWIO operands and results already have these layouts: then
        // they are read and written where they lie, not copied.
        let x = laid_out(lhs, &self.lhs_view.sizes, &self.lhs_view.strides);
        let w = laid_out(rhs, &self.rhs_view.sizes, &self.rhs_view.strides);
        let out_spatial: usize = self.spatial.iter().map(|s| s.out_size).product();
        let windows: usize = self.spatial.iter().map(|s| s.window).product();
        let (m, n) = (self.out_batch * out_spatial, self.oz_per_group);
        let k = windows * self.iz_per_group;
        let clock = xlaref_reference::watch::clock();
        let mut c = Vec::with_capacity(m * self.output_z);
        if self.direct && T::direct_conv(&mut Job { plan: self, x: &x, w: &w, c: &mut c.spare_capacity_mut()[..m * self.output_z], clock })
        {
            // Tasks stop at the deadline and leave their rows unwritten.
            xlaref_reference::watch::passed()?;
            // SAFETY: the direct path wrote every element of C.
            unsafe { c.set_len(m * self.output_z) };
            drop((x, w));
            return Ok(self.permuted(c));
        }
        c.resize(m * self.output_z, T::ZERO);
        if m == 0 || self.output_z == 0 {
            return Ok(self.permuted(c));
        }
        let rows = chunk_rows(k);
        // Padding and holes contribute nothing (document): as zeros in the
        // GEMM that is only right when every weight times zero is zero.
        let skip_holes = w.iter().any(|v| !v.zero_product_is_zero());
        let task = |col: &mut Vec<T>, (t, c_rows): (usize, &mut [T])| -> R<()> {
            if clock.passed() {
                return Ok(());
            }
            let r0 = t * rows;
            let nrows = c_rows.len() / self.output_z;
            col.resize(nrows * k, T::ZERO);
            let mut present = vec![true; if skip_holes { nrows * windows } else { 0 }];
            let mut walk = RowWalk::new(self);
            for g in 0..self.groups {
                let (z0, b0) = if self.feature_groups { (g * self.iz_per_group, 0) } else { (0, g * self.out_batch) };
                for (r, row) in col.chunks_exact_mut(k.max(1)).enumerate().take(nrows) {
                    let flags = if skip_holes { &mut present[r * windows..(r + 1) * windows] } else { &mut [][..] };
                    walk.fill_row(self, &x, r0 + r, b0, z0, row, flags);
                }
                if skip_holes {
                    // A plain sum over the present window elements only.
                    let iz = self.iz_per_group.max(1);
                    for r in 0..nrows {
                        for o in 0..n {
                            let mut sum = T::ZERO;
                            for kk in (0..k).filter(|kk| present[r * windows + kk / iz]) {
                                sum = T::mul_add(sum, col[r * k + kk], w[kk * self.output_z + g * self.oz_per_group + o]);
                            }
                            c_rows[r * self.output_z + g * self.oz_per_group + o] = sum;
                        }
                    }
                    continue;
                }
                let a = MatRef { data: col, offset: 0, row_stride: k, col_stride: 1 };
                let b = MatRef { data: &w, offset: g * self.oz_per_group, row_stride: self.output_z, col_stride: 1 };
                gemm::gemm(nrows, n, k, a, b, gemm::as_uninit(&mut c_rows[g * self.oz_per_group..]), self.output_z, false, clock)?;
            }
            Ok(())
        };
        let chunk = rows * self.output_z;
        if m > rows {
            // One `col` per worker's run of chunks, not one per chunk.
            c.par_chunks_mut(chunk).enumerate().try_for_each_init(Vec::new, task)?;
        } else {
            task(&mut Vec::new(), (0, &mut c[..]))?;
        }
        // The relaid operands are dead: free them before the output is
        // allocated (peak memory is the input, C and the output).
        drop((x, w));
        Ok(self.permuted(c))
    }
}

impl Plan {
    /// C permuted into the output's dimension order (C itself when that
    /// order is C's).
    fn permuted<T: Copy + Send + Sync>(&self, c: Vec<T>) -> Vec<T> {
        if is_row_major(&self.out_view.sizes, &self.out_view.strides, c.len()) {
            return c;
        }
        gather(&c, 0, &self.out_view.sizes, &self.out_view.strides)
    }
}

/// Builds rows of `col`: for output position `(b, out spatial)`, the
/// `iz_per_group` features under each window position, window-major.
struct RowWalk {
    /// Strides of the canonical lhs [batch][spatial...][feature].
    x_strides: Vec<usize>,
    x_batch_stride: usize,
    out_index: Vec<usize>,
    /// The window position in every spatial dimension but the last.
    outer_index: Vec<usize>,
    /// How many such positions there are.
    outer_windows: usize,
}

impl RowWalk {
    fn new(p: &Plan) -> RowWalk {
        let mut x_strides = vec![0usize; p.spatial.len()];
        let mut s = p.input_z;
        for (i, st) in x_strides.iter_mut().enumerate().rev() {
            *st = s;
            s *= p.lhs_view.sizes[i + 1];
        }
        let outer = p.spatial.len().saturating_sub(1);
        let outer_windows = p.spatial[..outer].iter().map(|s| s.window).product();
        RowWalk { x_strides, x_batch_stride: s, out_index: vec![0; p.spatial.len()], outer_index: vec![0; outer], outer_windows }
    }

    /// Row `row` of col for output position `position` of group
    /// (`b0`, `z0`); `present[p]` (when not empty) says whether window
    /// position `p` lies on the input (not padding, not a hole).
    #[allow(clippy::too_many_arguments)]
    fn fill_row<T: Elem>(&mut self, p: &Plan, x: &[T], position: usize, b0: usize, z0: usize, row: &mut [T], present: &mut [bool]) {
        let mut rest = position;
        for (i, s) in p.spatial.iter().enumerate().rev() {
            self.out_index[i] = rest % s.out_size;
            rest /= s.out_size;
        }
        let base = (b0 + rest) * self.x_batch_stride + z0;
        let iz = p.iz_per_group;
        let (inner, outer) = match p.spatial.split_last() {
            Some((inner, outer)) => (Some(inner), outer),
            None => (None, &[][..]),
        };
        let inner_window = inner.map_or(1, |s| s.window);
        self.outer_index.fill(0);
        for outer_window in 0..self.outer_windows {
            let piece = outer_window * inner_window;
            // The input offset of the outer window position, if on the input.
            let mut at = Some(base);
            for (i, s) in outer.iter().enumerate() {
                at = match (at, s.table[self.out_index[i] * s.window + self.outer_index[i]]) {
                    (Some(a), Some(idx)) => Some(a + idx * self.x_strides[i]),
                    _ => None,
                };
            }
            let pieces = &mut row[piece * iz..(piece + inner_window) * iz];
            let flags = present.get_mut(piece..piece + inner_window);
            match (at, inner) {
                (None, _) => {
                    pieces.fill(T::ZERO);
                    if let Some(f) = flags {
                        f.fill(false);
                    }
                }
                (Some(a), None) => {
                    pieces.copy_from_slice(&x[a..a + iz]);
                    if let Some(f) = flags {
                        f.fill(true);
                    }
                }
                (Some(a), Some(s)) => {
                    let last = outer.len();
                    let table = &s.table[self.out_index[last] * s.window..(self.out_index[last] + 1) * s.window];
                    copy_window_row(x, a, self.x_strides[last], iz, table, pieces, flags);
                }
            }
            for (i, s) in outer.iter().enumerate().rev() {
                self.outer_index[i] += 1;
                if self.outer_index[i] < s.window {
                    break;
                }
                self.outer_index[i] = 0;
            }
        }
    }
}

/// The pieces of one row of the innermost window dimension: for window
/// position `kx`, the `iz` features at `a + table[kx]·stride`, or zeros.
/// Where the features of consecutive window positions are adjacent in the
/// input (stride `iz`: no feature groups, stride 1, no dilation), a whole
/// run of them is one copy: a 3×3 window over 16 features is three copies
/// of 48 values, not nine of 16.
fn copy_window_row<T: Elem>(
    x: &[T],
    a: usize,
    stride: usize,
    iz: usize,
    table: &[Option<usize>],
    pieces: &mut [T],
    mut flags: Option<&mut [bool]>,
) {
    let mut kx = 0;
    while kx < table.len() {
        let Some(i0) = table[kx] else {
            pieces[kx * iz..(kx + 1) * iz].fill(T::ZERO);
            if let Some(f) = flags.as_deref_mut() {
                f[kx] = false;
            }
            kx += 1;
            continue;
        };
        let mut end = kx + 1;
        if stride == iz {
            while end < table.len() && table[end] == Some(i0 + (end - kx)) {
                end += 1;
            }
        }
        let from = a + i0 * stride;
        pieces[kx * iz..end * iz].copy_from_slice(&x[from..from + (end - kx) * iz]);
        if let Some(f) = flags.as_deref_mut() {
            f[kx..end].fill(true);
        }
        kx = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlaref_reference::ir::Padding;
    use xlaref_reference::types::ElementType;

    fn attrs(padding: Padding) -> ConvAttrs {
        ConvAttrs {
            window_strides: vec![1, 1],
            padding,
            lhs_dilation: vec![1, 1],
            rhs_dilation: vec![1, 1],
            feature_group_count: 1,
            batch_group_count: 1,
            dimension_numbers: None,
            preferred_element_type: None,
        }
    }

    #[test]
    fn same_padding_matches_direct_sum() {
        let (b, c, hw, o) = (2usize, 3usize, 5usize, 4usize);
        let xv: Vec<i32> = (0..b * c * hw * hw).map(|x| (x % 7) as i32 - 3).collect();
        let wv: Vec<i32> = (0..o * c * 9).map(|x| (x % 5) as i32 - 2).collect();
        let x = ArrayLiteral::from_vec(vec![b as i64, c as i64, hw as i64, hw as i64], xv.clone());
        let w = ArrayLiteral::from_vec(vec![o as i64, c as i64, 3, 3], wv.clone());
        let out = ArrayShape::new(ElementType::S32, vec![b as i64, o as i64, hw as i64, hw as i64]);
        let r = conv(&attrs(Padding::Same), &x, &w, &out).unwrap();
        let got = r.typed::<i32>().unwrap();
        for bi in 0..b {
            for oz in 0..o {
                for y in 0..hw {
                    for xx in 0..hw {
                        let mut s = 0;
                        for iz in 0..c {
                            for ky in 0..3 {
                                for kx in 0..3 {
                                    let (iy, ix) = (y as i64 + ky as i64 - 1, xx as i64 + kx as i64 - 1);
                                    if (0..hw as i64).contains(&iy) && (0..hw as i64).contains(&ix) {
                                        s += xv[((bi * c + iz) * hw + iy as usize) * hw + ix as usize]
                                            * wv[((oz * c + iz) * 3 + ky) * 3 + kx];
                                    }
                                }
                            }
                        }
                        assert_eq!(got[((bi * o + oz) * hw + y) * hw + xx], s);
                    }
                }
            }
        }
    }

    /// `cargo test --release -p xlaref-fast conv_speed -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn conv_speed() {
        let (b, c, hw, o) = (8i64, 64i64, 56i64, 64i64);
        let x = ArrayLiteral::from_vec(vec![b, c, hw, hw], (0..b * c * hw * hw).map(|v| (v % 7) as f32).collect());
        let w = ArrayLiteral::from_vec(vec![o, c, 3, 3], (0..o * c * 9).map(|v| (v % 5) as f32).collect());
        let out = ArrayShape::new(ElementType::F32, vec![b, o, hw, hw]);
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            conv(&attrs(Padding::Same), &x, &w, &out).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
        }
        let flops = 2.0 * (b * o * hw * hw * c * 9) as f64;
        eprintln!("conv N8 C64 56x56 64 3x3 SAME f32: {:.2} ms, {:.1} GFLOP/s", best * 1e3, flops / best / 1e9);
    }
}
