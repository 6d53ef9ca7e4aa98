//! A tile's register chain (`lanes.rs`), planned once per kind of tile.
//!
//! Consecutive tiles of a group run the same chain; only where it reads
//! and writes moves: the tile's part of a whole operand, a row's one
//! value, the output. Building every link again for each tile cost about
//! 40 cycles a link (15% of LayerNorm + GELU's 1024-position tiles), so a
//! [`Plan`] keeps the links with the list of fields a tile changes, and a
//! tile writes only those. Which steps are links depends on which of the
//! values the chain reads are one value for the tile; a plan records that
//! and serves only tiles where it is the same.

use std::mem::MaybeUninit;
use std::ops::Range;

use super::{internal, Group, Scratch, Src, View, R};
use crate::elem::float::FFloat;
use crate::fusion::lanes::{sums_in_registers, Arg, ChainFloat, Link, ROW_LANES};
use crate::kernels::reduce::Elem;
use xlaref_reference::ir::BinaryOp;

/// Plans one thread keeps; more (a group whose tiles keep changing kind)
/// and it starts over.
const MOST_PLANS: usize = 16;

/// Where a link's operand comes from in a tile.
#[derive(Clone, Copy)]
enum Source<'a, T> {
    /// The tile's positions of a whole operand.
    Whole(&'a [T]),
    /// A member's view: one before the chain, or a one-value member in it.
    View(usize),
    /// A chain member's values, stored by its link to its slot.
    Slot(usize),
}

/// Where a link stores its values.
#[derive(Clone, Copy)]
enum Target {
    Slot(usize),
    /// The group's output (the chain's last member is the result).
    Out,
}

/// The chain of steps from `run_start`, for tiles of `len` positions
/// writing `out_len` outputs, in which the members before the chain in
/// `reads` are one value or not as recorded.
pub(super) struct Plan<'a, T> {
    run_start: usize,
    len: usize,
    out_len: usize,
    reads: Vec<(usize, bool)>,
    links: Vec<Link<T>>,
    /// Per step of the chain: its link, or None for a value that is one
    /// value for the tile (computed by `Group::step`).
    link_of: Vec<Option<usize>>,
    /// (link, operand 0..3, source) for every operand a tile moves.
    operands: Vec<(usize, usize, Source<'a, T>)>,
    stores: Vec<(usize, Target)>,
    /// The Reduce's init, when the row sum is taken in registers.
    summed: Option<T>,
    /// This tile's operands of one value per row (`View::Rows`, rows of
    /// the group's `row`): (link, operand, the tile's values).
    per_row: Vec<(usize, usize, *const T)>,
}

/// Whether a chain reads a tile's values one per row of `row` positions
/// as [`Arg::Rows`] and runs once over the tile, not row by row. For rows
/// shorter than a block (256 f32 on zmm), where row by row ran every link
/// on a quarter block (LayerNorm + GELU over f32[16384,64]: four vectors
/// a row, thirteen links, ...). Longer rows keep running row by row: each
/// row is whole blocks, and its value a constant the links' own arms take.
fn rows_in_blocks(row: usize) -> bool {
    (ROW_LANES..256).contains(&row) && row.is_multiple_of(ROW_LANES)
}

impl<'a, T: Copy> Plan<'a, T> {
    /// Whether the result goes straight to `out`.
    fn direct(&self) -> bool {
        self.stores.iter().any(|&(_, t)| matches!(t, Target::Out))
    }

    fn serves(&self, run_start: usize, len: usize, out_len: usize, views: &[View<'a, T>]) -> bool {
        self.run_start == run_start
            && self.len == len
            && self.out_len == out_len
            && self.reads.iter().all(|&(m, one)| matches!(views.get(m), Some(View::One(_))) == one)
    }
}

impl<'a, T: FFloat + Elem + ChainFloat> Group<'_, 'a, T> {
    /// Steps `run` (at least two, each with a link) for the tile, as one
    /// register chain; pushes their views. Returns whether the group's
    /// result went straight to `out`.
    pub(super) fn chain(&self, s: &mut Scratch<'a, T>, run: Range<usize>, start: usize, len: usize, out: &mut [MaybeUninit<T>]) -> R<bool> {
        // Out of the scratch while the plan runs (it reads the slots and
        // views), and back in whatever happens.
        let mut plans = std::mem::take(&mut s.plans);
        let found = plans.iter().position(|p| p.serves(run.start, len, out.len(), &s.views));
        let k = match found {
            Some(k) => Ok(k),
            None => self.plan(s, run.clone(), len, out.len()).map(|p| {
                if plans.len() >= MOST_PLANS {
                    plans.clear();
                }
                plans.push(p);
                plans.len() - 1
            }),
        };
        let ran = k.and_then(|k| self.run_plan(&mut plans[k], s, run, start, len, out));
        s.plans = plans;
        ran
    }

    /// The chain's links for tiles like this one (`s.views` holds the
    /// views of the steps before the chain).
    fn plan(&self, s: &Scratch<'a, T>, run: Range<usize>, len: usize, out_len: usize) -> R<Plan<'a, T>> {
        let mut p = Plan {
            run_start: run.start,
            len,
            out_len,
            reads: Vec::new(),
            links: Vec::new(),
            link_of: Vec::new(),
            operands: Vec::new(),
            stores: Vec::new(),
            summed: None,
            per_row: Vec::new(),
        };
        let mut store_of: Vec<Option<Target>> = Vec::new();
        for j in run.clone() {
            let step = &self.steps[j];
            let mut args = [Arg::One(T::default()); 3];
            let mut sources = [None; 3];
            let mut all_one = true;
            for (k, &src) in step.inputs.iter().enumerate().take(3) {
                match src {
                    Src::Member(m) if m >= run.start => match p.link_of[m - run.start] {
                        Some(l) if l + 1 == p.links.len() => {
                            args[k] = Arg::Prev;
                            all_one = false;
                        }
                        Some(l) => {
                            // Read from memory: the member stores its values.
                            store_of[l] = Some(Target::Slot(self.steps[m].slot));
                            sources[k] = Some(Source::Slot(self.steps[m].slot));
                            all_one = false;
                        }
                        None => sources[k] = Some(Source::View(m)),
                    },
                    Src::Member(m) => {
                        let one = matches!(s.views.get(m), Some(View::One(_)));
                        p.reads.push((m, one));
                        sources[k] = Some(Source::View(m));
                        all_one &= one;
                    }
                    Src::Whole(v) => {
                        sources[k] = Some(Source::Whole(v));
                        all_one = false;
                    }
                    Src::One(x) => args[k] = Arg::One(x),
                }
            }
            if all_one {
                // The same value at every position: computed once a tile.
                p.link_of.push(None);
                continue;
            }
            let op = step.link.ok_or_else(|| internal("chain step without a link"))?;
            let l = p.links.len();
            p.link_of.push(Some(l));
            p.operands.extend(sources.iter().enumerate().filter_map(|(k, s)| s.map(|s| (l, k, s))));
            p.links.push(Link::new(op, args));
            store_of.push(None);
        }
        // A row sum of the chain's last link, the tile whole rows: summed in
        // registers as the link runs on each row, never stored.
        let fold_operand = self.fold.as_ref().map(|f| f.operand);
        p.summed = match &self.fold {
            Some(f)
                if f.op == BinaryOp::Add
                    && f.len > 0
                    && len.is_multiple_of(f.len)
                    && out_len == len / f.len
                    && sums_in_registers(f.len)
                    && f.operand + 1 == run.end =>
            {
                p.link_of[f.operand - run.start].filter(|&l| l + 1 == p.links.len()).map(|_| f.init)
            }
            _ => None,
        };
        // Values read after the chain, the result and the folded values
        // are stored; the group's result straight into `out`.
        for j in run.clone() {
            let Some(l) = p.link_of[j - run.start] else { continue };
            let step = &self.steps[j];
            if p.summed.is_some() && Some(j) == fold_operand {
                continue;
            }
            if self.fold.is_none() && j == self.result {
                // Streamed past the cache only when nothing reads it next
                // (`Group::stream_out`): streaming a five-op chain's result
                // over 16M f32 that the next op read made it slower,
                // 0.8 -> 1.4 ms.
                store_of[l] = Some(Target::Out);
            } else if Some(j) == fold_operand || step.readers.iter().any(|&r| r >= run.end) {
                store_of[l] = Some(Target::Slot(step.slot));
            }
        }
        p.stores = store_of.iter().enumerate().filter_map(|(l, t)| t.map(|t| (l, t))).collect();
        for &(l, t) in &p.stores {
            p.links[l].stream = self.stream_out && matches!(t, Target::Out);
        }
        if out_len < len && p.direct() {
            return Err(internal("fused output shorter than its tile"));
        }
        Ok(p)
    }

    /// Runs the plan on the tile at `start`: its one-value steps, then
    /// its links with this tile's operands and stores.
    fn run_plan(
        &self,
        p: &mut Plan<'a, T>,
        s: &mut Scratch<'a, T>,
        run: Range<usize>,
        start: usize,
        len: usize,
        out: &mut [MaybeUninit<T>],
    ) -> R<bool> {
        for j in run.clone() {
            let view = match p.link_of[j - run.start] {
                // A view for now; the slot holds the values only if stored.
                Some(_) => View::Slot(self.steps[j].slot),
                None => self.step(&self.steps[j], s, start, len)?,
            };
            s.views.push(view);
        }
        for &(l, target) in &p.stores {
            p.links[l].store = match target {
                Target::Slot(b) => {
                    let buffer = &mut s.slots[b];
                    buffer.resize(len, T::default());
                    buffer.as_mut_ptr()
                }
                Target::Out => out.as_mut_ptr().cast::<T>(),
            };
        }
        p.per_row.clear();
        for &(l, k, source) in &p.operands {
            let arg = match source {
                Source::Whole(v) => {
                    Arg::At(v.get(start..start + len).ok_or_else(|| internal("a whole operand shorter than the group"))?.as_ptr())
                }
                Source::Slot(b) => Arg::At(s.slots[b].as_ptr()),
                Source::View(m) => match s.views.get(m) {
                    Some(View::Slot(b)) => Arg::At(s.slots[*b].as_ptr()),
                    Some(View::At(v)) => Arg::At(v.as_ptr()),
                    Some(View::One(x)) => Arg::One(*x),
                    // Whole rows only (as row by row checks): each
                    // vector reads the value of its row of the tile.
                    Some(View::Rows(v)) if rows_in_blocks(self.row) && len.is_multiple_of(self.row) => Arg::Rows(*v, self.row),
                    Some(View::Rows(v)) => {
                        // Set row by row below.
                        p.per_row.push((l, k, *v));
                        Arg::One(T::default())
                    }
                    None => return Err(internal("chain operand without a view")),
                },
            };
            p.links[l].set(k, arg);
        }
        // SAFETY: every `At` pointer reads `len` values of a slice cut to
        // the tile or of a slot of at least `len` (stored slots were just
        // resized to `len`, a view's slot holds its tile), every store
        // writes `len` values of a slot resized to `len` or of `out` (the
        // plan is only for `out.len() >= len` when it writes there); a
        // slot a link stores to is only read by links before it at
        // positions they have read (`assign_slots` frees a slot after its
        // last reader).
        if let Some(init) = p.summed {
            return Self::sum_rows(p, self.row, len, init, out);
        }
        let ran = if p.per_row.is_empty() {
            // SAFETY: as above.
            unsafe { T::run_chain(&p.links, 0, len) }
        } else {
            Self::row_by_row(p, self.row, len)?
        };
        if !ran {
            return Err(internal("register chain on a CPU without vector lanes"));
        }
        Ok(p.direct())
    }

    /// Runs the plan's links on each row of a tile of several, each row
    /// reading its own value of the `View::Rows` operands as one value:
    /// a tile's setup (its one-value steps, finding its plan, placing the
    /// operands) is paid once for all its rows (LayerNorm + GELU over
    /// f32[4096,1024], four rows a tile and its result streamed: the group
    /// 2.53 -> 2.07 ms, profile minima).
    fn row_by_row(p: &mut Plan<'a, T>, row: usize, len: usize) -> R<bool> {
        if row == 0 || !len.is_multiple_of(row) {
            return Err(internal("a tile of one value per row that is not whole rows"));
        }
        for r in 0..len / row {
            Self::row_values(p, r);
            // SAFETY: as in `run_plan`, for the positions `r·row..(r + 1)·row`
            // of the tile.
            if !unsafe { T::run_chain(&p.links, r * row, row) } {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The chain summed in registers on each row of the tile (rows of
    /// `row`): row `r`'s fold, `init` plus its sum, to `out[r]`. A tile of
    /// several rows pays its setup once, where a tile was one row (the
    /// variance of LayerNorm over f32[4096,1024]).
    fn sum_rows(p: &mut Plan<'a, T>, row: usize, len: usize, init: T, out: &mut [MaybeUninit<T>]) -> R<bool> {
        if row == 0 || !len.is_multiple_of(row) || out.len() < len / row {
            return Err(internal("a register row sum over a tile that is not its rows"));
        }
        for (r, o) in out.iter_mut().enumerate().take(len / row) {
            Self::row_values(p, r);
            // SAFETY: as in `run_plan`, for the positions `r·row..(r + 1)·row`
            // of the tile; the last link stores nothing.
            let sum =
                unsafe { T::run_chain_sum(&p.links, r * row, row) }.ok_or_else(|| internal("register row sum without vector lanes"))?;
            o.write(T::plus(init, sum));
        }
        Ok(true)
    }

    /// Row `r`'s one value of each `View::Rows` operand, into the
    /// plan's links (the chain runs on the row's positions of the tile:
    /// rebuilding every link moved to the row cost 5% of LayerNorm +
    /// GELU's samples).
    fn row_values(p: &mut Plan<'a, T>, r: usize) {
        for &(l, k, values) in &p.per_row {
            // SAFETY: a `Rows` view has a value for each row of the tile.
            p.links[l].set_one(k, unsafe { *values.add(r) });
        }
    }
}
