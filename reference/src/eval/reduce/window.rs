//! Windows on a base array (ReduceWindow, SelectAndScatter) and ReduceWindow.

use super::super::{internal, Interpreter};
use super::fold_groups;
use crate::error::RunError;
use crate::ir::{ComputationId, WindowAttrs};
use crate::literal::Literal;
use crate::types::{ArrayShape, Indices, Shape};

/// One dimension of a window sliding over its base.
///
/// The base is first dilated (`base_dilation - 1` holes between
/// neighbours) and padded (`pad_low`, `pad_high`, negative values crop), all
/// in one coordinate system of *positions*: base element `i` sits at
/// position `pad_low + i * base_dilation`. The window placed for output
/// coordinate `o` has its element `k` (`0 <= k < size`) at position
/// `o * stride + k * window_dilation`.
///
/// A window element at a position that holds no base element (padding, or a
/// dilation hole) contributes nothing: the reduction skips it, so a window
/// reduces `init` followed by exactly the base elements it covers. With an
/// `init` that is an identity of the computation (as the document requires)
/// this is the document's "padding with the initial value"; with another
/// `init` it is what XLA does (`init` counts once, not once per hole).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct WindowDim {
    pub base: i64,
    pub size: i64,
    pub stride: i64,
    pub base_dilation: i64,
    pub window_dilation: i64,
    pub pad_low: i64,
}

impl WindowDim {
    /// The window's dimensions over a base of dimensions `base` (SAME and
    /// VALID resolved by [`crate::ir::Padding::resolve`]: dilated window).
    pub fn all(base: &[i64], w: &WindowAttrs) -> Result<Vec<WindowDim>, RunError> {
        let pads = w.padding.resolve(base, &w.window_dimensions, &w.window_dilations, &w.window_strides);
        let n = base.len();
        if [w.window_dimensions.len(), w.window_strides.len(), w.base_dilations.len(), w.window_dilations.len(), pads.len()]
            .iter()
            .any(|&l| l != n)
        {
            return Err(internal("window attributes do not match the rank"));
        }
        Ok((0..n)
            .map(|d| WindowDim {
                base: base[d],
                size: w.window_dimensions[d],
                stride: w.window_strides[d],
                base_dilation: w.base_dilations[d],
                window_dilation: w.window_dilations[d],
                pad_low: pads[d].0,
            })
            .collect())
    }

    /// The base coordinates `i` covered by the window at output coordinate
    /// `o`, in window order (increasing `k`, hence increasing `i`): those
    /// with `pad_low + i * base_dilation = o * stride + k * window_dilation`
    /// for some `0 <= k < size` and `0 <= i < base`. Replaces `out`.
    pub fn covered(&self, o: i64, out: &mut Vec<i64>) {
        out.clear();
        // Positions relative to base element 0; i128 so no attribute overflows.
        let (bd, wd) = (self.base_dilation as i128, self.window_dilation as i128);
        let first = o as i128 * self.stride as i128 - self.pad_low as i128; // window element 0
        let last = first + (self.size as i128 - 1) * wd; // window element size - 1
        let lo = ceil_div(first, bd).max(0);
        let hi = last.div_euclid(bd).min(self.base as i128 - 1);
        let mut i = lo;
        while i <= hi {
            if (i * bd - first) % wd == 0 {
                out.push(i as i64);
            }
            i += 1;
        }
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    -(-a).div_euclid(b)
}

/// Reusable buffers for walking the base elements of one window in
/// lexicographic (row-major) window order.
pub(super) struct WindowWalk {
    dims: Vec<WindowDim>,
    covered: Vec<Vec<i64>>,
    counts: Vec<i64>,
    index: Vec<i64>,
}

impl WindowWalk {
    pub fn new(dims: Vec<WindowDim>) -> WindowWalk {
        let n = dims.len();
        WindowWalk { dims, covered: vec![Vec::new(); n], counts: vec![0; n], index: vec![0; n] }
    }

    /// Places the window at output index `o`; then [`Self::positions`]
    /// walks the base elements it covers.
    pub fn place(&mut self, o: &[i64]) {
        for (d, dim) in self.dims.iter().enumerate() {
            dim.covered(o[d], &mut self.covered[d]);
            self.counts[d] = self.covered[d].len() as i64;
        }
    }

    /// The covered base indices, row-major over the window.
    pub fn positions(&self) -> Indices {
        Indices::new(&self.counts)
    }

    /// The base index of one step of [`Self::positions`].
    pub fn base_index(&mut self, step: &[i64]) -> &[i64] {
        for (d, &k) in step.iter().enumerate() {
            self.index[d] = self.covered[d][k as usize];
        }
        &self.index
    }
}

/// ReduceWindow — document §ReduceWindow.
///
/// For each output index `o` and each of the N operands, the result is
/// `init_values` reduced with `computation` (running values first, then
/// inputs, as Reduce) over the base elements the window at `o` covers, in
/// row-major window order ([`WindowDim::covered`]): padding and
/// base-dilation holes are skipped. Output size per dimension (checked by
/// the verifier): `(padded - dilated_window) / stride + 1`, 0 when the
/// window does not fit.
pub fn reduce_window(
    it: &mut Interpreter,
    computation: ComputationId,
    w: &WindowAttrs,
    operands: &[&Literal],
    shape: &Shape,
) -> Result<Literal, RunError> {
    fold_groups(it, computation, operands, shape, "ReduceWindow", |base, out, group| window_groups(base, w, out, group))
}

/// The windows of ReduceWindow: calls `group(out_pos, positions)` once per
/// element of the result `out`, with the linear positions of the base
/// elements its window covers, in row-major window order. The harness's
/// tolerance model walks the same windows.
pub fn window_groups(
    base: &ArrayShape,
    w: &WindowAttrs,
    out: &ArrayShape,
    mut group: impl FnMut(usize, &[usize]) -> Result<(), RunError>,
) -> Result<(), RunError> {
    if out.rank() != base.rank() {
        return Err(internal("ReduceWindow result rank differs from the operand's"));
    }
    let mut walk = WindowWalk::new(WindowDim::all(&base.dims, w)?);
    let mut positions = Vec::new();
    for (out_pos, o) in out.indices().enumerate() {
        if crate::watch::tick(positions.len() as u64 + 1) {
            break;
        }
        walk.place(&o);
        positions.clear();
        for step in walk.positions() {
            positions.push(base.linear(walk.base_index(&step)));
        }
        group(out_pos, &positions)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(dim: WindowDim, o: i64) -> Vec<i64> {
        let mut v = Vec::new();
        dim.covered(o, &mut v);
        v
    }

    #[test]
    fn plain_padded_and_dilated_windows() {
        let plain = WindowDim { base: 5, size: 3, stride: 2, base_dilation: 1, window_dilation: 1, pad_low: 0 };
        assert_eq!(covered(plain, 0), vec![0, 1, 2]);
        assert_eq!(covered(plain, 1), vec![2, 3, 4]);
        // SAME on [10000, 1000, 100, 10, 1]: one element of padding low.
        let same = WindowDim { pad_low: 1, ..plain };
        assert_eq!(covered(same, 0), vec![0, 1]);
        assert_eq!(covered(same, 2), vec![3, 4]);
        // Base dilation 2: positions 0 2 4 6 8 hold elements 0..4.
        let holes = WindowDim { stride: 1, base_dilation: 2, ..plain };
        assert_eq!(covered(holes, 0), vec![0, 1]);
        assert_eq!(covered(holes, 1), vec![1]);
        // Window dilation 2 (positions o, o+2, o+4), cropped by pad_low -1.
        let dilated = WindowDim { stride: 1, window_dilation: 2, pad_low: -1, ..plain };
        assert_eq!(covered(dilated, 0), vec![1, 3]);
        assert_eq!(covered(dilated, 2), vec![3]);
        // Both dilations: elements at 0 3 6 9 12, window at 2, 4, 6, 8 ... ; lcm steps.
        let both = WindowDim { base: 5, size: 6, stride: 1, base_dilation: 3, window_dilation: 2, pad_low: 0 };
        assert_eq!(covered(both, 0), vec![0, 2]);
        assert_eq!(covered(both, 1), vec![1, 3]);
    }

    #[test]
    fn huge_attributes_do_not_overflow() {
        let d = WindowDim { base: 3, size: i64::MAX, stride: i64::MAX, base_dilation: 1, window_dilation: i64::MAX, pad_low: i64::MIN };
        assert_eq!(covered(d, 1), Vec::<i64>::new());
        let e = WindowDim { base: 3, size: 2, stride: 1, base_dilation: i64::MAX, window_dilation: i64::MAX, pad_low: 0 };
        assert_eq!(covered(e, 0), vec![0, 1]);
    }
}
