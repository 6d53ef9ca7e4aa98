//! How a tile group is laid out: which steps are chain links, how long
//! its tiles are, which broadcasts are read one value per row, which
//! buffer each step writes.

use super::{Kind, Spread, Src, Step, ROWS_TILE, TILE};
use crate::fusion::lanes::LinkOp;
use crate::fusion::spread_into;
use xlaref_reference::ir::{BinaryOp, UnaryOp};

/// A member's operation in a register chain, if it can be in one.
pub(super) fn link_op<T>(kind: &Kind<T>) -> Option<LinkOp> {
    Some(match kind {
        Kind::Binary(BinaryOp::Add) => LinkOp::Add,
        Kind::Binary(BinaryOp::Sub) => LinkOp::Sub,
        Kind::Binary(BinaryOp::Mul) => LinkOp::Mul,
        Kind::Binary(BinaryOp::Div) => LinkOp::Div,
        Kind::Unary(UnaryOp::Neg) => LinkOp::Neg,
        Kind::Unary(UnaryOp::Abs) => LinkOp::Abs,
        Kind::Unary(UnaryOp::Sqrt) => LinkOp::Sqrt,
        Kind::Unary(UnaryOp::Rsqrt) => LinkOp::Rsqrt,
        Kind::Exp => LinkOp::Exp,
        Kind::Tanh => LinkOp::Tanh,
        Kind::Compare(d, false) => LinkOp::Compare(*d),
        Kind::Select => LinkOp::Select,
        _ => return None,
    })
}

/// Output values per tile: under a Reduce of rows of `row` positions,
/// about [`ROWS_TILE`] positions of whole rows (at least one; a value
/// broadcast along the rows is read one per row, `mark_rows`); without
/// one, `tile` positions.
pub(super) fn tile_outputs(row: Option<usize>, tile: usize) -> usize {
    match row {
        Some(r) => (ROWS_TILE / r.max(1)).max(1),
        None => tile,
    }
}

/// Rows per tile of a group that folds or reads rows of `row` positions
/// (at least one): the row pipeline's tile (`pipeline.rs`).
pub(crate) fn rows_per_tile(row: usize) -> usize {
    tile_outputs(Some(row), 0)
}

/// A broadcast's values over `positions + period` positions from 0, with
/// its period, when it repeats within tiles of `positions` and would
/// otherwise be written out for every tile (its rows are shorter than a
/// tile), in a group of at least two tiles.
pub(super) fn periodic_pattern<T: Copy>(sp: &Spread, v: &[T], positions: usize, n: usize) -> Option<(usize, Vec<T>)> {
    let period = sp.period()?;
    let row = sp.dims.last().copied().unwrap_or(1);
    if period > positions || (row >= positions && sp.inner_stride() <= 1) || n < 2 * positions {
        return None;
    }
    let mut pattern = Vec::new();
    spread_into(v, sp, 0, positions + period, &mut pattern);
    Some((period, pattern))
}

/// Positions per tile without a Reduce: [`TILE`], or the shortest row of
/// a broadcast when that is from a quarter of it to [`ROWS_TILE`], so
/// that tiles are its whole rows and read it as one value or where it
/// lies. Shorter rows make tiles of whole rows too when values one per
/// row are read, and each as such: a row pipeline's last stage over rows
/// of 64 then runs its chain row by row on each row's one values, where
/// 1024-position tiles spread each of them over a buffer first
/// (LayerNorm + GELU over f32[16384,64]: 0.88 -> 0.78 ms).
pub(super) fn tile_len<T>(steps: &[Step<T>]) -> (usize, usize) {
    let rows = steps.iter().filter_map(|s| match &s.kind {
        Kind::Spread(sp, _) if sp.inner_stride() <= 1 => sp.dims.last().copied(),
        Kind::RowInput { row, .. } => Some(*row),
        _ => None,
    });
    match rows.min() {
        // Whole rows up to ROWS_TILE: the per-tile setup is paid once per
        // row (f32[2048,4096] LayerNorm + GELU 8.5 -> 6.9 ms against
        // 1024-position tiles), or once for several rows when every value
        // that is one per row is read as such by the chains.
        Some(row) if row <= ROWS_TILE => {
            let one_per_row = |s: &Step<T>| {
                matches!(&s.kind, Kind::Spread(sp, _) if sp.inner_stride() == 0 && sp.period().is_some())
                    || matches!(s.kind, Kind::RowInput { .. })
            };
            let mut per_row = steps.iter().filter(|s| one_per_row(s)).peekable();
            let some = per_row.peek().is_some();
            if per_row.all(|s| s.rows && row_of(s) == row) && (some || row >= TILE / 4) {
                (ROWS_TILE / row * row, row)
            } else if row < TILE / 4 {
                (TILE, 0)
            } else {
                (row, 0)
            }
        }
        Some(_) | None => (TILE, 0),
    }
}

/// A broadcast step's row (its innermost dimension).
pub(super) fn row_of<T>(s: &Step<T>) -> usize {
    match &s.kind {
        Kind::Spread(sp, _) => sp.dims.last().copied().unwrap_or(1),
        Kind::RowInput { row, .. } => *row,
        _ => 1,
    }
}

/// Marks the broadcasts whose values may be read one per row
/// ([`Step::rows`]): one value per row, consecutive rows reading
/// consecutive values of the operand, and every reader a link of a
/// register chain (or a reshape that nothing reads), never the group's
/// result nor the Reduce's operand.
pub(super) fn mark_rows<T>(steps: &mut [Step<T>], chains: &[Option<usize>], result: usize, fold_operand: Option<usize>) {
    // The steps the tiles run as links of a chain.
    let mut in_chain = vec![false; steps.len()];
    let mut j = 0;
    while j < steps.len() {
        match chains[j] {
            Some(end) => {
                in_chain[j..end].iter_mut().for_each(|c| *c = true);
                j = end;
            }
            None => j += 1,
        }
    }
    let kept = |k: usize| k == result || Some(k) == fold_operand;
    for j in 0..steps.len() {
        let read_by_links = steps[j].readers.iter().all(|&r| in_chain[r] || (matches!(steps[r].kind, Kind::Same) && !kept(r)));
        let per_row = match &steps[j].kind {
            Kind::Spread(sp, _) => one_per_row(sp) && sp.dims.last().is_some_and(|&row| row > 0),
            Kind::RowInput { .. } => true,
            _ => continue,
        };
        steps[j].rows = per_row && read_by_links && !kept(j);
    }
}

/// Whether a broadcast gives each row (its last dimension) one value of
/// its operand, consecutive rows consecutive values.
pub(super) fn one_per_row(sp: &Spread) -> bool {
    let rank = sp.dims.len();
    rank >= 2 && sp.inner_stride() == 0 && sp.strides[rank - 2] == 1
}

/// Where the register chain that starts at step `j` ends, if one does:
/// a run of two or more chainable steps, or a single one that reads a
/// broadcast of one value per row. That one then takes each row's value
/// as one, where as a step it read the value spread over a buffer first
/// (softmax's division by its row sums over f32[8,512,512]: 0.41 -> 0.2
/// ms).
pub(super) fn chain_at<T>(steps: &[Step<T>], chain_end: &[usize], j: usize) -> Option<usize> {
    let end = *chain_end.get(j)?;
    let reads_rows = || {
        steps[j].inputs.iter().any(|src| {
            matches!(src, Src::Member(k) if matches!(&steps[*k].kind, Kind::Spread(sp, _) if one_per_row(sp)) || matches!(steps[*k].kind, Kind::RowInput { .. }))
        })
    };
    (end >= j + 2 || (end == j + 1 && reads_rows())).then_some(end)
}

/// Gives each step that may need a buffer one, reusing a buffer once its
/// last reader ran (a step never writes the buffer of its own operand);
/// returns how many buffers there are. `keep`: a step whose buffer lives
/// to the end (the Reduce's operand).
pub(super) fn assign_slots<T>(steps: &mut [Step<T>], keep: Option<usize>) -> usize {
    let mut last_read = vec![0usize; steps.len()];
    for (j, s) in steps.iter().enumerate() {
        for src in &s.inputs {
            if let Src::Member(k) = src {
                last_read[*k] = j;
            }
        }
    }
    if let Some(k) = keep {
        last_read[k] = usize::MAX;
    }
    let mut free: Vec<usize> = Vec::new();
    let mut count = 0;
    // A Same step's values are its operand's: that buffer must outlive its
    // readers too (backwards, so a chain of them reaches the first).
    for j in (0..steps.len()).rev() {
        if let (Kind::Same, Some(Src::Member(k))) = (&steps[j].kind, steps[j].inputs.first()) {
            let k = *k;
            last_read[k] = last_read[k].max(last_read[j]);
        }
    }
    for j in 0..steps.len() {
        steps[j].slot = free.pop().unwrap_or_else(|| {
            count += 1;
            count - 1
        });
        for k in 0..j {
            if last_read[k] == j {
                free.push(steps[k].slot);
            }
        }
    }
    count
}
