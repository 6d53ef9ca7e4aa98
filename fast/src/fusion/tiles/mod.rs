//! The typed fusion runner: a group whose values are all of one float type
//! (f32, f64, f16, bf16) and whose members are unary and binary arithmetic
//! ([`float_unary_fn`], [`float_binary_fn`], Exp, Tanh, Erf, Erfc, Cbrt;
//! Pow and Atan2 through their whole-array functions), Compare and
//! Select (their predicates as markers of the float type, `choose.rs`),
//! reshapes and broadcasts, optionally ending in a Reduce of rows.
//!
//! The group runs tile by tile: a tile is [`TILE`] positions (whole rows
//! under a Reduce), and each member's values for a tile live in one of a
//! few tile-sized buffers reused as soon as their last reader ran, so a
//! chain's working set stays in L1 and no memory is allocated per tile.
//! Values that are the same for the whole tile (a scalar operand, a row
//! broadcast along the tile, arithmetic on those) stay one value; a
//! contiguous operand or broadcast row is read where it lies. Each member
//! applies the element function the whole-array kernel applies, so the
//! result is the op-by-op result (exactly; NaN payloads aside, see
//! `fusion/mod.rs`).

mod chain;
mod layout;
mod on_tile;

pub(crate) use layout::rows_per_tile;
use layout::{assign_slots, chain_at, link_op, mark_rows, periodic_pattern, tile_len, tile_outputs};

pub(crate) use on_tile::{pair_into, OnTile, OnTile2, Probe};

use std::mem::MaybeUninit;
use std::sync::Mutex;

use half::{bf16, f16};
use xlaref_reference::ir::{BinaryOp, Computation, Direction, InstrId, Op, UnaryOp};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::{ArrayShape, ElementType, Shape};
use xlaref_reference::RunError;

use super::blocks::RowFolds;
use super::choose;
use super::lanes::{ChainFloat, LinkOp};
use super::{array, internal, row_major, rows_of_one_value, spread, spread_into, spread_strides, Rows, Spread, R};
use crate::elem::float::FFloat;
use crate::kernels::elementwise::{float_binary_fn, float_unary_fn, Side};
use crate::kernels::reduce::{float_combine, Elem};
use crate::par;

/// Positions per tile without a Reduce: a few tile buffers of f32 fit in
/// L1 beside the operands' lines.
const TILE: usize = 1024;
/// Positions a tile under a Reduce aims at (whole rows, at least one).
const ROWS_TILE: usize = 4096;
/// Positions per parallel chunk at least.
const CHUNK: usize = 1 << 15;

/// Runs the group on tiles, or None when it has another type or an op
/// the tiles do not run (the block runner takes it then).
pub(super) fn run<'a>(
    c: &'a Computation,
    shapes: &[&Shape],
    members: &[InstrId],
    rows: Option<&Rows>,
    escapes: bool,
    value: &impl Fn(InstrId) -> R<&'a Literal>,
) -> Option<R<Literal>> {
    let root = *members.last()?;
    let out = shapes[root].as_array()?;
    match out.element_type {
        ElementType::F32 => typed::<f32>(c, shapes, members, rows, escapes, value),
        ElementType::F64 => typed::<f64>(c, shapes, members, rows, escapes, value),
        ElementType::F16 => typed::<f16>(c, shapes, members, rows, escapes, value),
        ElementType::BF16 => typed::<bf16>(c, shapes, members, rows, escapes, value),
        _ => None,
    }
}

/// A member's operand.
#[derive(Clone, Copy)]
enum Src<'a, T> {
    /// Another member (its index in the group).
    Member(usize),
    /// A materialized value of the group's element count.
    Whole(&'a [T]),
    /// A one-element value.
    One(T),
}

enum Kind<'a, T> {
    Unary(UnaryOp),
    Exp,
    /// Tanh: f32's whole-array kernel works on slices (`elem::tanh`).
    Tanh,
    /// Erf and Erfc: likewise (`elem::erf`).
    Erf,
    Erfc,
    /// Cbrt: likewise (`elem::cbrt`).
    Cbrt,
    Binary(BinaryOp),
    /// Compare: markers of the group's type (`choose.rs`).
    Compare(Direction, bool),
    /// Select on the markers of a Compare member.
    Select,
    /// Reshape or Collapse: its operand's values.
    Same,
    Spread(Spread<'a>, &'a [T]),
    /// A broadcast whose values repeat with a period shorter than a tile:
    /// its values from position 0 over a tile and a period, built once
    /// (`pattern[start % period..]` is the tile at `start`), where the
    /// broadcast would be written out again for every tile.
    Periodic(&'a [T], usize),
    /// A broadcast along rows of `row` positions of the row pipeline's
    /// per-row value `value` (`pipeline.rs`): position `p` of the group
    /// has that value's row `p / row`, which the pipeline computed for
    /// the tile's rows before the tile ([`Scratch::row_inputs`]).
    RowInput {
        value: usize,
        row: usize,
    },
}

struct Step<'a, T> {
    kind: Kind<'a, T>,
    inputs: Vec<Src<'a, T>>,
    /// The buffer its values go to when they are not one value or a view.
    slot: usize,
    /// Its operation in a register chain, when it can be in one
    /// (`lanes.rs`).
    link: Option<LinkOp>,
    /// The steps that read it.
    readers: Vec<usize>,
    /// A broadcast of one value per row that only chain links read: a
    /// tile of several rows reads its values as [`View::Rows`].
    rows: bool,
}

/// A member's values for the current tile.
#[derive(Clone, Copy)]
enum View<'a, T> {
    Slot(usize),
    /// Read where it lies (already cut to the tile).
    At(&'a [T]),
    One(T),
    /// One value per row of the tile: position `p` has `values[p / row]`,
    /// `row` the group's (only chain links read these, `chain.rs`: per
    /// vector for short rows of whole vectors, `Arg::Rows`; else the chain
    /// runs row by row, each row reading its value as one value). The values are a
    /// materialized operand's or the row pipeline's, valid for the tile.
    Rows(*const T),
}

fn typed<'a, T: FFloat + Elem + ChainFloat>(
    c: &'a Computation,
    shapes: &[&Shape],
    members: &[InstrId],
    rows: Option<&Rows>,
    escapes: bool,
    value: &impl Fn(InstrId) -> R<&'a Literal>,
) -> Option<R<Literal>> {
    let parts = match build::<T>(c, shapes, members, rows, value, &|_| None)? {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    let patterns = parts.patterns();
    let parts = parts.with_patterns(&patterns);
    let group = parts.group(escapes);
    let out = parts.out.clone();
    Some(group.assemble(out.element_count()).map(|v| ArrayLiteral::with_shape(out, T::wrap(v)).into()))
}

/// A group's steps, planned, before its periodic broadcasts become
/// patterns (which the steps then borrow).
pub(crate) struct Parts<'a, T> {
    steps: Vec<Step<'a, T>>,
    /// Tile buffers.
    slots: usize,
    fold: Option<Fold<T>>,
    /// Positions the group iterates over.
    n: usize,
    /// Positions per tile without a Reduce.
    tile: usize,
    /// The row of tiles of several rows (values one per row are read per
    /// row of this length), else 0.
    row: usize,
    /// The step whose values are the group's (without a Reduce).
    result: usize,
    /// Per step: where the register chain that starts there ends
    /// ([`chain_at`]), if one does.
    chains: Vec<Option<usize>>,
    /// Positions per tile the patterns must cover.
    positions: usize,
    pub(crate) out: ArrayShape,
}

/// Plans the group's steps, or None when it has an op the tiles do not
/// run. `row_input(o)`: the index of the row pipeline's per-row value
/// that instruction `o` is, and the pipeline's row length (`pipeline.rs`):
/// a broadcast member reads it as [`Kind::RowInput`] instead of a
/// materialized operand, if it spreads it along rows of that length.
pub(crate) fn build<'a, T: FFloat + Elem + ChainFloat>(
    c: &'a Computation,
    shapes: &[&Shape],
    members: &[InstrId],
    rows: Option<&Rows>,
    value: &impl Fn(InstrId) -> R<&'a Literal>,
    row_input: &dyn Fn(InstrId) -> Option<(usize, usize)>,
) -> Option<R<Parts<'a, T>>> {
    let root = *members.last()?;
    let elementwise = if rows.is_some() { &members[..members.len() - 1] } else { members };
    let n = shapes[*elementwise.last()?].as_array()?.element_count();
    // All members must be of the one type (a Reduce's operand included),
    // but Compares, whose markers are of that type too.
    let one_type = shapes[root].as_array().map(|a| a.element_type);
    let type_of = |m: InstrId| shapes[m].as_array().map(|a| a.element_type);
    let fits = |m: &InstrId| {
        type_of(*m) == one_type || (type_of(*m) == Some(ElementType::Pred) && matches!(c.instructions[*m].op, Op::Compare { .. }))
    };
    if !elementwise.iter().all(fits) || type_of(*elementwise.last()?) != one_type {
        return None;
    }
    // Broadcasts read only materialized values (or the row pipeline's,
    // all there before a tile runs): running them first lets the
    // arithmetic between them form one register chain.
    let is_spread = |m: &InstrId| matches!(c.instructions[*m].op, Op::Broadcast { .. } | Op::BroadcastInDim { .. });
    let ordered: Vec<InstrId> =
        elementwise.iter().copied().filter(is_spread).chain(elementwise.iter().copied().filter(|m| !is_spread(m))).collect();
    let chains = T::chains();
    let mut steps: Vec<Step<T>> = Vec::with_capacity(elementwise.len());
    for &m in &ordered {
        let instr = &c.instructions[m];
        let out = shapes[m].as_array()?;
        let kind = match &instr.op {
            Op::Unary(UnaryOp::Exp) => Kind::Exp,
            Op::Unary(UnaryOp::Tanh) => Kind::Tanh,
            Op::Unary(UnaryOp::Erf) => Kind::Erf,
            Op::Unary(UnaryOp::Erfc) => Kind::Erfc,
            Op::Unary(UnaryOp::Cbrt) => Kind::Cbrt,
            Op::Unary(u) => {
                float_unary_fn::<T, _>(*u, Probe)?;
                Kind::Unary(*u)
            }
            Op::Binary { op, .. } => {
                float_binary_fn::<T, _>(*op, Probe).ok()?;
                Kind::Binary(*op)
            }
            Op::Compare { direction, total_order, .. } => Kind::Compare(*direction, *total_order),
            Op::Select => Kind::Select,
            Op::Reshape { .. } | Op::Collapse { .. } => Kind::Same,
            Op::Broadcast { .. } | Op::BroadcastInDim { .. } => {
                let o = *instr.operands.first()?;
                if let Some((k, row)) = row_input(o) {
                    let (dims, strides) = spread_strides(&instr.op, &shapes[o].as_array()?.dims, out);
                    if rows_of_one_value(&dims, &strides)? != row {
                        return None;
                    }
                    Kind::RowInput { value: k, row }
                } else {
                    let operand = match value(o).and_then(array) {
                        Ok(a) => a,
                        Err(e) => return Some(Err(e)),
                    };
                    let sp = spread(&instr.op, operand, out);
                    // A broadcast that only reshapes its operand (`[r]` to
                    // `[r, 1]`) reads it where it lies: spread out, it was
                    // copied one value per row (18 µs over 4096 values).
                    if sp.reshapes() {
                        Kind::Same
                    } else {
                        Kind::Spread(sp, T::slice(&operand.data)?)
                    }
                }
            }
            _ => return None,
        };
        let mut inputs = Vec::new();
        if !matches!(kind, Kind::Spread(..) | Kind::RowInput { .. }) {
            for &o in &instr.operands {
                if let Some(k) = ordered.iter().position(|&x| x == o) {
                    // A reshape's values are its operand's: read those.
                    match (&steps[k].kind, steps[k].inputs.first()) {
                        (Kind::Same, Some(&src)) => inputs.push(src),
                        _ => inputs.push(Src::Member(k)),
                    }
                    continue;
                }
                if row_input(o).is_some() {
                    // A row value read other than through a broadcast.
                    return None;
                }
                let l = match value(o).and_then(array) {
                    Ok(a) => a,
                    Err(e) => return Some(Err(e)),
                };
                let v = T::slice(&l.data)?;
                match v.len() {
                    len if len == n && l.dynamic_sizes.is_none() => inputs.push(Src::Whole(v)),
                    1 => inputs.push(Src::One(v[0])),
                    _ => return None,
                }
            }
        }
        let link = if chains { link_op(&kind).filter(|&op| T::has_link(op)) } else { None };
        steps.push(Step { kind, inputs, slot: 0, link, readers: Vec::new(), rows: false });
    }
    for j in 0..steps.len() {
        for k in 0..steps[j].inputs.len() {
            if let Src::Member(m) = steps[j].inputs[k] {
                if steps[m].readers.last() != Some(&j) {
                    steps[m].readers.push(j);
                }
            }
        }
    }
    let fold = match rows {
        Some(r) => {
            let operand = c.instructions[root].operands.first()?;
            let k = ordered.iter().position(|x| x == operand)?;
            Some(Fold { op: r.op, len: r.len, operand: k, init: *T::slice(&r.init.data)?.first()? })
        }
        None => None,
    };
    let slots = assign_slots(&mut steps, fold.as_ref().map(|f| f.operand));
    let out = shapes[root].as_array()?.clone();
    let last = *elementwise.last()?;
    let result = ordered.iter().position(|&x| x == last)?;
    // Where the run of chainable steps from each step ends.
    let mut chain_end = vec![steps.len(); steps.len()];
    for j in (0..steps.len()).rev() {
        if steps[j].link.is_none() {
            chain_end[j] = j;
        } else if j + 1 < steps.len() {
            chain_end[j] = chain_end[j + 1];
        }
    }
    // Decided once, before any broadcast becomes a periodic pattern (which
    // changes what `chain_at` sees): the tiles run the chains `mark_rows`
    // marked its per-row views for.
    let chains: Vec<Option<usize>> = (0..steps.len()).map(|j| chain_at(&steps, &chain_end, j)).collect();
    mark_rows(&mut steps, &chains, result, fold.as_ref().map(|f| f.operand));
    let (tile, row) = tile_len(&steps);
    // Under a Reduce, tiles of its rows.
    let row = fold.as_ref().map_or(row, |f| f.len);
    let positions = tile_outputs(fold.as_ref().map(|f| f.len), tile) * fold.as_ref().map_or(1, |f| f.len);
    Some(Ok(Parts { steps, slots, fold, n, tile, row, result, chains, positions, out }))
}

impl<'a, T: FFloat + Elem + ChainFloat> Parts<'a, T> {
    /// The broadcasts that repeat within a tile, as (step, period,
    /// pattern): see [`periodic_pattern`].
    pub(crate) fn patterns(&self) -> Vec<(usize, usize, Vec<T>)> {
        let mut patterns = Vec::new();
        for (j, step) in self.steps.iter().enumerate() {
            if let Kind::Spread(sp, v) = &step.kind {
                if let Some((period, pattern)) = periodic_pattern(sp, v, self.positions, self.n) {
                    patterns.push((j, period, pattern));
                }
            }
        }
        patterns
    }

    /// The steps with their periodic broadcasts reading `patterns`.
    pub(crate) fn with_patterns<'p>(self, patterns: &'p [(usize, usize, Vec<T>)]) -> Parts<'p, T>
    where
        'a: 'p,
    {
        let mut steps: Vec<Step<'p, T>> = self.steps;
        for (j, period, pattern) in patterns {
            if let Some(step) = steps.get_mut(*j) {
                step.kind = Kind::Periodic(pattern.as_slice(), *period);
            }
        }
        Parts {
            steps,
            slots: self.slots,
            fold: self.fold,
            n: self.n,
            tile: self.tile,
            row: self.row,
            result: self.result,
            chains: self.chains,
            positions: self.positions,
            out: self.out,
        }
    }

    /// The group to run. `escapes`: its result is the program's and no op
    /// reads it (a large one is streamed past the caches).
    pub(crate) fn group(&self, escapes: bool) -> Group<'_, 'a, T> {
        let stream_out = escapes && self.fold.is_none() && crate::stream::worth_it::<T>(self.n);
        Group { parts: self, stream_out }
    }
}

/// A Reduce root: its reducer, row length, operand (a step) and init.
struct Fold<T> {
    op: BinaryOp,
    len: usize,
    operand: usize,
    init: T,
}

pub(crate) struct Group<'s, 'a, T> {
    parts: &'s Parts<'a, T>,
    /// The result is the program's, large, and no op reads it next: a
    /// chain writes it with streaming stores (`lanes::Link::stream`).
    stream_out: bool,
}

/// A group reads its plan's fields as its own.
impl<'a, T> std::ops::Deref for Group<'_, 'a, T> {
    type Target = Parts<'a, T>;
    fn deref(&self) -> &Parts<'a, T> {
        self.parts
    }
}

/// One thread's buffers.
pub(crate) struct Scratch<'a, T> {
    slots: Vec<Vec<T>>,
    views: Vec<View<'a, T>>,
    rows: Vec<T>,
    /// The register chains' plans for the kinds of tile met so far.
    plans: Vec<chain::Plan<'a, T>>,
    /// The row pipeline's per-row values for the rows from `first_row`:
    /// value `k`'s are `row_inputs[k].0[..row_inputs[k].1]`. Set by the
    /// pipeline before each tile, valid until it returns.
    row_inputs: Vec<(*const T, usize)>,
    first_row: usize,
}

impl<T> Scratch<'_, T> {
    /// Tells the next tiles where the pipeline's per-row values are:
    /// `values[k]` holds value `k` for the rows from `first_row` on.
    ///
    /// # Safety
    /// Each slice stays valid and unchanged until the tiles run with it
    /// have returned.
    pub(crate) unsafe fn set_row_inputs(&mut self, first_row: usize, values: &[Vec<T>]) {
        self.row_inputs.clear();
        self.row_inputs.extend(values.iter().map(|v| (v.as_ptr(), v.len())));
        self.first_row = first_row;
    }
}

impl<'a, T: FFloat + Elem + ChainFloat> Group<'_, 'a, T> {
    /// One thread's buffers for this group's tiles.
    pub(crate) fn scratch(&self) -> Scratch<'a, T> {
        let ratio = self.fold.as_ref().map_or(1, |f| f.len);
        let tile_out = tile_outputs(self.fold.as_ref().map(|f| f.len), self.tile);
        Scratch {
            slots: vec![Vec::with_capacity(tile_out * ratio); self.slots],
            views: Vec::new(),
            rows: Vec::new(),
            plans: Vec::new(),
            row_inputs: Vec::new(),
            first_row: 0,
        }
    }

    /// Whether the result goes out with streaming stores (then each
    /// thread fences before its task ends).
    pub(crate) fn streams(&self) -> bool {
        self.stream_out
    }

    /// Positions per tile: whole rows under a Reduce.
    pub(crate) fn tile_positions(&self) -> usize {
        tile_outputs(self.fold.as_ref().map(|f| f.len), self.tile) * self.fold.as_ref().map_or(1, |f| f.len)
    }

    /// Every output position computed once, chunks of whole tiles in
    /// parallel; stops at the time limit (the executor reports it).
    fn assemble(&self, n_out: usize) -> R<Vec<T>> {
        let ratio = self.fold.as_ref().map_or(1, |f| f.len);
        let tile_out = tile_outputs(self.fold.as_ref().map(|f| f.len), self.tile);
        let threads = rayon::current_num_threads();
        let chunk = if self.n <= CHUNK { n_out } else { n_out.div_ceil(4 * threads).next_multiple_of(tile_out) };
        in_tiles(
            n_out,
            chunk,
            tile_out,
            self.stream_out,
            || self.scratch(),
            |scratch, start, out| self.tile(scratch, start * ratio, out.len() * ratio, out),
        )
    }

    /// Positions `start..start + len` of the group; writes the root's
    /// values (or the tile's row folds) to `out`.
    pub(crate) fn tile(&self, s: &mut Scratch<'a, T>, start: usize, len: usize, out: &mut [MaybeUninit<T>]) -> R<()> {
        s.views.clear();
        let mut wrote_out = false;
        let mut j = 0;
        while j < self.steps.len() {
            if let Some(end) = self.chains[j] {
                wrote_out |= self.chain(s, j..end, start, len, out)?;
                j = end;
                continue;
            }
            let view = self.step(&self.steps[j], s, start, len)?;
            s.views.push(view);
            j += 1;
        }
        if wrote_out {
            return Ok(());
        }
        let last = match &self.fold {
            Some(f) => s.views[f.operand],
            None => s.views[self.result],
        };
        let values: &[T] = match last {
            View::Slot(b) => &s.slots[b][..len],
            View::At(v) => v,
            View::One(x) => {
                s.rows.clear();
                s.rows.resize(len, x);
                &s.rows
            }
            View::Rows(..) => return Err(internal("a value per row as the group's result")),
        };
        let Some(f) = &self.fold else {
            for (o, &x) in out.iter_mut().zip(values) {
                o.write(x);
            }
            return Ok(());
        };
        let folds =
            float_combine(f.op, values, f.init, RowFolds { len: f.len }).ok_or_else(|| internal("fused Reduce without a typed loop"))??;
        for (o, &x) in out.iter_mut().zip(&folds) {
            o.write(x);
        }
        Ok(())
    }

    /// One member's values for the tile.
    fn step(&self, step: &Step<'a, T>, s: &mut Scratch<'a, T>, start: usize, len: usize) -> R<View<'a, T>> {
        let input = |k: usize| step.inputs.get(k).copied().ok_or_else(|| internal("fused member without operands"));
        match &step.kind {
            Kind::Same => Ok(view_of(s, input(0)?, start, len)),
            Kind::Periodic(pattern, period) => {
                let from = start % period.max(&1);
                match pattern.get(from..from + len) {
                    Some(values) => Ok(View::At(values)),
                    None => Err(internal("a tile longer than its broadcast's pattern")),
                }
            }
            Kind::Spread(sp, v) => {
                let (base, run) = sp.locate(start);
                if run >= len || sp.period().is_none() {
                    match sp.inner_stride() {
                        0 => return Ok(View::One(v[base])),
                        1 => return Ok(View::At(&v[base..base + len])),
                        _ => {}
                    }
                }
                if let Some(values) = per_row(step, sp, v, self.row, base, start, len) {
                    return Ok(View::Rows(values.as_ptr()));
                }
                let mut buffer = std::mem::take(&mut s.slots[step.slot]);
                spread_into(v, sp, start, len, &mut buffer);
                s.slots[step.slot] = buffer;
                Ok(View::Slot(step.slot))
            }
            Kind::RowInput { value, row } => self.row_input(step, s, *value, *row, start, len),
            Kind::Unary(op) => {
                let mut buffer = take_slot(s, step.slot, len);
                let x = side(s, input(0)?, start, len)?;
                let one = float_unary_fn(*op, OnTile { x, out: &mut buffer }).ok_or_else(|| internal("fused unary op"))?;
                Ok(put_back(s, step.slot, buffer, one))
            }
            Kind::Exp | Kind::Tanh | Kind::Erf | Kind::Erfc | Kind::Cbrt => {
                let into = match step.kind {
                    Kind::Exp => T::exp_into,
                    Kind::Tanh => T::tanh_into,
                    Kind::Erf => T::erf_into,
                    Kind::Cbrt => T::cbrt_into,
                    _ => T::erfc_into,
                };
                let mut buffer = take_slot(s, step.slot, len);
                let x = side(s, input(0)?, start, len)?;
                let one = match x {
                    Side::All(v) => {
                        into(v, &mut buffer);
                        None
                    }
                    Side::One(x) => {
                        let mut y = [T::default()];
                        into(&[x], &mut y);
                        Some(y[0])
                    }
                };
                Ok(put_back(s, step.slot, buffer, one))
            }
            Kind::Binary(op) => {
                let mut buffer = take_slot(s, step.slot, len);
                let (a, b) = (side(s, input(0)?, start, len)?, side(s, input(1)?, start, len)?);
                let one = match op {
                    // The whole-array functions, on the tile's slices.
                    BinaryOp::Pow => pair_into(T::pow_into, a, b, &mut buffer),
                    BinaryOp::Atan2 => pair_into(T::atan2_into, a, b, &mut buffer),
                    _ => float_binary_fn(*op, OnTile2 { a, b, out: &mut buffer })?,
                };
                Ok(put_back(s, step.slot, buffer, one))
            }
            Kind::Compare(d, total) => {
                let mut buffer = take_slot(s, step.slot, len);
                let (a, b) = (side(s, input(0)?, start, len)?, side(s, input(1)?, start, len)?);
                let one = choose::compare_tile(*d, *total, a, b, &mut buffer);
                Ok(put_back(s, step.slot, buffer, one))
            }
            Kind::Select => {
                let Side::All(_) = side(s, input(0)?, start, len)? else {
                    // One predicate for the tile: one side's values, as they are.
                    let Side::One(p) = side(s, input(0)?, start, len)? else { return Err(internal("fused Select")) };
                    // Another member's buffer is copied: it may be reused
                    // before this member's last reader runs.
                    let chosen = input(if choose::chooses_true(p) { 1 } else { 2 })?;
                    let View::Slot(b) = view_of(s, chosen, start, len) else { return Ok(view_of(s, chosen, start, len)) };
                    let mut buffer = take_slot(s, step.slot, len);
                    buffer.copy_from_slice(&s.slots[b][..len]);
                    return Ok(put_back(s, step.slot, buffer, None));
                };
                let mut buffer = take_slot(s, step.slot, len);
                let (Side::All(p), x, y) =
                    (side(s, input(0)?, start, len)?, side(s, input(1)?, start, len)?, side(s, input(2)?, start, len)?)
                else {
                    return Err(internal("fused Select"));
                };
                choose::select_tile(p, x, y, &mut buffer);
                Ok(put_back(s, step.slot, buffer, None))
            }
        }
    }
}

impl<'a, T: FFloat + Elem + ChainFloat> Group<'_, 'a, T> {
    /// A [`Kind::RowInput`] step's values for the tile: one value, one per
    /// row (read by chain links), or spread over its buffer.
    fn row_input(&self, step: &Step<'a, T>, s: &mut Scratch<'a, T>, value: usize, row: usize, start: usize, len: usize) -> R<View<'a, T>> {
        let row = row.max(1);
        let &(values, count) = s.row_inputs.get(value).ok_or_else(|| internal("a row value the pipeline did not set"))?;
        let first = (start / row).checked_sub(s.first_row).ok_or_else(|| internal("a tile before the pipeline's rows"))?;
        if (start + len).div_ceil(row) - s.first_row > count {
            return Err(internal("a tile past the pipeline's rows"));
        }
        // SAFETY: `set_row_inputs` keeps `count` values valid while the
        // tile runs, and the tile's rows are among them (checked above).
        let values = unsafe { std::slice::from_raw_parts(values, count) };
        if len <= row - start % row {
            return Ok(View::One(values[first]));
        }
        if step.rows && self.row == row && start.is_multiple_of(row) && len.is_multiple_of(row) {
            return Ok(View::Rows(values[first..].as_ptr()));
        }
        let mut buffer = take_slot(s, step.slot, len);
        let mut at = 0;
        for &v in &values[first..] {
            if at == len {
                break;
            }
            let run = (row - (start + at) % row).min(len - at);
            buffer[at..at + run].fill(v);
            at += run;
        }
        Ok(put_back(s, step.slot, buffer, None))
    }
}

/// Fills `n` outputs in parallel chunks of `chunk` (whole tiles), each
/// chunk tile by tile (`tile` outputs at most): `setup()` makes a task's
/// buffers, `run(buffers, start, out)` computes `out`, the outputs from
/// `start`. Stops at the time limit (the executor reports it) or at the
/// first error; `stream`: the outputs went out with streaming stores,
/// which each task fences before it ends.
pub(crate) fn in_tiles<T: FFloat, S>(
    n: usize,
    chunk: usize,
    tile: usize,
    stream: bool,
    setup: impl Fn() -> S + Sync,
    run: impl Fn(&mut S, usize, &mut [MaybeUninit<T>]) -> R<()> + Sync,
) -> R<Vec<T>> {
    let failed: Mutex<Option<RunError>> = Mutex::new(None);
    let clock = xlaref_reference::watch::clock();
    let out = par::build_in_chunks(n, chunk.max(1), |start, chunk: &mut [MaybeUninit<T>]| {
        let mut buffers = setup();
        let mut at = 0;
        while at < chunk.len() {
            let len = (chunk.len() - at).min(tile.max(1));
            if clock.passed() {
                par::fill_with(&mut chunk[at..], T::default());
                break;
            }
            if let Err(e) = run(&mut buffers, start + at, &mut chunk[at..at + len]) {
                failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                par::fill_with(&mut chunk[at..], T::default());
                break;
            }
            at += len;
        }
        if stream {
            crate::stream::fence();
        }
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The values of a [`Step::rows`] broadcast for a tile of whole rows of
/// the group's `row` (0: the group's tiles are not of several rows), one
/// per row, when its rows take consecutive values of the operand (`base`
/// is the first row's).
fn per_row<'a, T>(step: &Step<'a, T>, sp: &Spread, v: &'a [T], row: usize, base: usize, start: usize, len: usize) -> Option<&'a [T]> {
    let rank = sp.dims.len();
    if !step.rows || rank < 2 || row == 0 || sp.dims.last() != Some(&row) || !start.is_multiple_of(row) || !len.is_multiple_of(row) {
        return None;
    }
    let rows = len / row;
    // Within one run of the next dimension out, or past its end into
    // values that continue where it stopped (a row-major operand).
    let first = (start / row) % sp.dims[rank - 2].max(1);
    if first + rows > sp.dims[rank - 2] && !row_major(&sp.dims, &sp.strides) {
        return None;
    }
    v.get(base..base + rows)
}

/// An operand's values for the tile, as a view.
fn view_of<'a, T: Copy>(s: &Scratch<'a, T>, src: Src<'a, T>, start: usize, len: usize) -> View<'a, T> {
    match src {
        Src::Member(k) => s.views[k],
        Src::Whole(v) => View::At(&v[start..start + len]),
        Src::One(x) => View::One(x),
    }
}

/// An operand's values for the tile at `start..start + len`.
/// (A value one per row is read only by chain links: [`mark_rows`].)
fn side<'v, 'a: 'v, T: Copy>(s: &'v Scratch<'a, T>, src: Src<'a, T>, start: usize, len: usize) -> R<Side<'v, T>> {
    Ok(match src {
        Src::Member(k) => match s.views[k] {
            View::Slot(b) => Side::All(&s.slots[b][..len]),
            View::At(v) => Side::All(v),
            View::One(x) => Side::One(x),
            View::Rows(..) => return Err(internal("a value per row read outside a chain")),
        },
        Src::Whole(v) => Side::All(&v[start..start + len]),
        Src::One(x) => Side::One(x),
    })
}

/// The step's buffer, taken out of the scratch while its operands (in
/// other buffers) are read, and sized to the tile.
fn take_slot<T: Copy + Default>(s: &mut Scratch<T>, slot: usize, len: usize) -> Vec<T> {
    let mut buffer = std::mem::take(&mut s.slots[slot]);
    buffer.resize(len, T::default());
    buffer
}

/// Returns the buffer; the step's view is one value when it computed one.
fn put_back<'a, T>(s: &mut Scratch<'a, T>, slot: usize, buffer: Vec<T>, one: Option<T>) -> View<'a, T> {
    s.slots[slot] = buffer;
    match one {
        Some(x) => View::One(x),
        None => View::Slot(slot),
    }
}
