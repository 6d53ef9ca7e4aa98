//! Row pipelines: a group over `[rows, C]` together with the row
//! reductions it reads through broadcasts along its rows, and the per-row
//! arithmetic between them — LayerNorm's mean and variance, RMSNorm's mean
//! square, softmax's sum (not its maximum: `exp(x - max)` is too costly
//! to compute in two stages, so it stays a value in memory).
//!
//! Run as separate groups, each reduction reads the whole input again and
//! each is a parallel phase of its own; between them, ops of one value per
//! row run alone. A pipeline runs them tile by tile instead: for a few
//! rows at a time it folds the rows (`tiles.rs`, the very fold of the
//! Reduce kernel), computes the per-row values from the folds, and runs
//! the final group over those rows while they are still in L1 or L2.
//!
//! The stages are the groups the planner found before (the same members,
//! the same tiles), so the pipeline computes bit for bit what they
//! compute one after the other; only the order in which rows are visited
//! changes, and every row's values depend on that row alone. When a stage
//! is not one the typed tiles run, the stages run one after the other over
//! all rows (`in_turn`), as before the pipeline.

use std::mem::MaybeUninit;

use xlaref_reference::ir::{BinaryOp, Computation, InstrId, Op, UnaryOp};
use xlaref_reference::literal::{ArrayLiteral, Literal, Stored};
use xlaref_reference::types::{ArrayShape, ElementType, Shape};

use super::blocks::RowFolds;
use super::lanes::ChainFloat;
use super::tiles::{self, OnTile, OnTile2, Probe};
use super::{array, internal, reduced_row, spread_strides, Rows, R};
use crate::elem::float::FFloat;
use crate::kernels::elementwise::{float_binary_fn, float_unary_fn, Side};
use crate::kernels::reduce::{float_combine, Elem};

/// Tiles of its stages per tile of a pipeline: the per-row ops between
/// the stages run once for all their rows. (LayerNorm + GELU over
/// f32[4096,1024]: 1 tile 3.9 ms, 2 2.74, 4 2.67, 8 2.72.)
const STAGE_TILES: usize = 4;

/// A group as the planner keeps it: element count, members, reducer of a
/// Reduce root.
pub(super) type Found = (usize, Vec<InstrId>, Option<BinaryOp>);

/// Grows each element-wise group of f32 or f64 into a pipeline with the
/// row reductions (and per-row values) that only it reads, walking back
/// from its root. Returns, per group, the Reduce members it took in (with
/// their reducers); the groups it took them from are left empty.
pub(super) fn merge(
    c: &Computation,
    shapes: &[&Shape],
    users: &[Vec<InstrId>],
    groups: &mut [Found],
    group_of: &mut [Option<usize>],
) -> Vec<Vec<(InstrId, BinaryOp)>> {
    let mut folds = vec![Vec::new(); groups.len()];
    for g in 0..groups.len() {
        if groups[g].2.is_some() || groups[g].1.is_empty() {
            continue;
        }
        // The row count from a first walk, then the walk that takes only
        // per-row values of that many rows (not, say, a reshaped bias).
        let rows = grow(c, shapes, users, groups, group_of, g, None).map(|(_, _, rows)| rows);
        if let Some((taken, found, _)) = rows.and_then(|r| grow(c, shapes, users, groups, group_of, g, Some(r))) {
            for &h in &taken {
                let members = std::mem::take(&mut groups[h].1);
                for &m in &members {
                    group_of[m] = Some(g);
                }
                groups[g].1.extend(members);
            }
            for &i in &found.singles {
                group_of[i] = Some(g);
                groups[g].1.push(i);
            }
            folds[g] = found.folds;
        }
    }
    folds
}

/// What [`grow`] found besides whole groups.
struct Grown {
    folds: Vec<(InstrId, BinaryOp)>,
    /// Per-row instructions that were in no group.
    singles: Vec<InstrId>,
}

/// The groups and instructions group `g` can take in, if they make a
/// pipeline (at least one row reduction, all of one row length), and its
/// row count. `rows`: take only per-row values of that many values.
fn grow(
    c: &Computation,
    shapes: &[&Shape],
    users: &[Vec<InstrId>],
    groups: &[Found],
    group_of: &[Option<usize>],
    g: usize,
    rows: Option<usize>,
) -> Option<(Vec<usize>, Grown, usize)> {
    let (n, members, _) = &groups[g];
    let root = *members.iter().max()?;
    let t = shapes[root].as_array()?.element_type;
    if !matches!(t, ElementType::F32 | ElementType::F64)
        || members.iter().any(|&m| matches!(c.instructions[m].op, Op::Dot { .. } | Op::DotGeneral { .. } | Op::Conv(_)))
    {
        return None;
    }
    let mut inside = vec![false; c.instructions.len()];
    members.iter().for_each(|&m| inside[m] = true);
    let mut taken = Vec::new();
    let mut grown = Grown { folds: Vec::new(), singles: Vec::new() };
    let mut per_row = Vec::new();
    let is_row = |m: InstrId| per_row_op(c, shapes, m, t) && rows.is_none_or(|r| count(shapes, m) == Some(r));
    for i in (0..root).rev() {
        if inside[i] || users[i].is_empty() || !users[i].iter().all(|&u| inside[u]) {
            continue;
        }
        match group_of[i] {
            Some(h) if h != g && groups[h].1.iter().max() == Some(&i) && !groups[h].1.is_empty() => {
                let (count, hm, reduce) = &groups[h];
                match reduce {
                    Some(op) if count == n => grown.folds.push((i, *op)),
                    None if hm.iter().all(|&m| is_row(m)) => per_row.extend(hm.iter().copied()),
                    // Values of the whole size read by more than one stage
                    // (LayerNorm's `x - mean`): each stage computes them,
                    // if that is cheap.
                    None if count == n && hm.iter().all(|&m| light(&c.instructions[m].op)) => {}
                    _ => continue,
                }
                hm.iter().for_each(|&m| inside[m] = true);
                taken.push(h);
            }
            None if is_row(i) => {
                inside[i] = true;
                per_row.push(i);
                grown.singles.push(i);
            }
            _ => {}
        }
    }
    // One row length for all folds; every per-row value has one value per row.
    let (&(first, op), _) = grown.folds.split_first()?;
    let row = reduced_row(c, shapes, first, op)?;
    let n_rows = n / row;
    if rows.is_none() {
        return Some((taken, grown, n_rows));
    }
    let rows = n_rows;
    let same_rows = grown.folds.iter().all(|&(f, op)| reduced_row(c, shapes, f, op) == Some(row) && count(shapes, f) == Some(rows));
    let rows_ok = per_row.iter().all(|&m| {
        count(shapes, m) == Some(rows)
            && c.instructions[m].operands.iter().all(|&o| inside[o] || matches!(count(shapes, o), Some(k) if k == rows || k == 1))
    });
    let typed = grown
        .folds
        .iter()
        .all(|&(f, _)| c.instructions[f].operands.iter().all(|&o| shapes[o].as_array().map(|a| a.element_type) == Some(t)));
    (same_rows && rows_ok && typed && rows < *n).then_some((taken, grown, rows))
}

/// Whether an op is cheap enough to run in each stage that reads it.
/// (Softmax's `exp(x - max)`, computed again in the sum's stage and the
/// division's, made the attention program 4% slower than reading it from
/// memory.)
fn light(op: &Op) -> bool {
    match op {
        Op::Binary { op, .. } => matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Max | BinaryOp::Min),
        Op::Unary(u) => matches!(u, UnaryOp::Neg | UnaryOp::Abs),
        Op::Reshape { .. } | Op::Collapse { .. } | Op::Broadcast { .. } | Op::BroadcastInDim { .. } => true,
        _ => false,
    }
}

fn count(shapes: &[&Shape], i: InstrId) -> Option<usize> {
    shapes[i].as_array().filter(|a| !a.is_dynamic()).map(ArrayShape::element_count)
}

/// Whether instruction `m` can be a per-row step of a pipeline of type
/// `t`: arithmetic with an element function (not one of the functions
/// with a whole-array kernel of their own), or a reshape.
fn per_row_op(c: &Computation, shapes: &[&Shape], m: InstrId, t: ElementType) -> bool {
    let instr = &c.instructions[m];
    if shapes[m].as_array().map(|a| a.element_type) != Some(t) {
        return false;
    }
    let probe = |u: UnaryOp| match t {
        ElementType::F32 => float_unary_fn::<f32, _>(u, Probe).is_some(),
        _ => float_unary_fn::<f64, _>(u, Probe).is_some(),
    };
    let probe2 = |b: BinaryOp| match t {
        ElementType::F32 => float_binary_fn::<f32, _>(b, Probe).is_ok(),
        _ => float_binary_fn::<f64, _>(b, Probe).is_ok(),
    };
    match &instr.op {
        Op::Unary(u) => !matches!(u, UnaryOp::Exp | UnaryOp::Tanh | UnaryOp::Erf | UnaryOp::Erfc | UnaryOp::Cbrt) && probe(*u),
        Op::Binary { op, .. } => !matches!(op, BinaryOp::Pow | BinaryOp::Atan2) && probe2(*op),
        Op::Reshape { dimensions, .. } => dimensions.as_ref().is_none_or(|d| d.iter().enumerate().all(|(k, &x)| x == k as i64)),
        Op::Collapse { .. } => true,
        Op::Broadcast { .. } | Op::BroadcastInDim { .. } => instr.operands.first().is_some_and(|&o| {
            count(shapes, o) == Some(1) || (count(shapes, o) == count(shapes, m) && keeps_order(&instr.op, shapes[o], shapes[m]))
        }),
        _ => false,
    }
}

/// Whether a broadcast of as many values as its operand keeps their
/// row-major order (it only reshapes).
fn keeps_order(op: &Op, operand: &Shape, out: &Shape) -> bool {
    let (Some(a), Some(o)) = (operand.as_array(), out.as_array()) else { return false };
    let (dims, strides) = spread_strides(op, &a.dims, o);
    let mut expect = 1usize;
    for (&d, &s) in dims.iter().zip(&strides).rev() {
        if d != 1 && s != expect {
            return false;
        }
        expect = expect.saturating_mul(d);
    }
    expect == a.element_count()
}

/// What a pipeline does, in program order.
enum Event {
    /// A row reduction: its stage's members (the Reduce last), its reducer
    /// and the per-row value it writes.
    Fold { members: Vec<InstrId>, op: BinaryOp, value: usize },
    /// A per-row op writing per-row value `value`.
    PerRow { instr: InstrId, value: usize },
}

/// The pipeline's plan: its events, the final stage, the row length.
struct Stages {
    events: Vec<Event>,
    last: Vec<InstrId>,
    row: usize,
    rows: usize,
    /// Per instruction: the per-row value it is, if any.
    value_of: Vec<Option<usize>>,
    values: usize,
}

fn stages(c: &Computation, shapes: &[&Shape], members: &[InstrId], folds: &[(InstrId, BinaryOp)]) -> R<Stages> {
    let root = *members.last().ok_or_else(|| internal("empty pipeline"))?;
    let n = count(shapes, root).ok_or_else(|| internal("pipeline root"))?;
    let &(f0, op0) = folds.first().ok_or_else(|| internal("pipeline without a fold"))?;
    let row = reduced_row(c, shapes, f0, op0).ok_or_else(|| internal("pipeline fold"))?;
    let mut is_member = vec![false; c.instructions.len()];
    members.iter().for_each(|&m| is_member[m] = true);
    let full = |m: InstrId| count(shapes, m) == Some(n) && !folds.iter().any(|&(f, _)| f == m);
    // The full-size members a stage ending in `end` reads (itself included).
    let closure = |end: InstrId| {
        let mut seen = vec![false; c.instructions.len()];
        let mut stack = vec![end];
        seen[end] = true;
        while let Some(m) = stack.pop() {
            for &o in &c.instructions[m].operands {
                if is_member[o] && !seen[o] && full(o) {
                    seen[o] = true;
                    stack.push(o);
                }
            }
        }
        (0..c.instructions.len()).filter(|&i| seen[i]).collect::<Vec<_>>()
    };
    let mut value_of = vec![None; c.instructions.len()];
    let mut events = Vec::new();
    let mut values = 0;
    for &m in members {
        if let Some(&(_, op)) = folds.iter().find(|&&(f, _)| f == m) {
            let operand = *c.instructions[m].operands.first().ok_or_else(|| internal("pipeline fold operand"))?;
            let mut stage = if is_member[operand] { closure(operand) } else { Vec::new() };
            stage.push(m);
            events.push(Event::Fold { members: stage, op, value: values });
        } else if m != root && !full(m) {
            events.push(Event::PerRow { instr: m, value: values });
        } else {
            continue;
        }
        value_of[m] = Some(values);
        values += 1;
    }
    Ok(Stages { events, last: closure(root), row, rows: n / row, value_of, values })
}

/// Runs the pipeline `members` (program order, the root last; `folds`:
/// its Reduce members and their reducers).
pub(super) fn run<'a>(
    c: &'a Computation,
    shapes: &[&Shape],
    members: &[InstrId],
    folds: &[(InstrId, BinaryOp)],
    escapes: bool,
    value: &impl Fn(InstrId) -> R<&'a Literal>,
) -> R<Literal> {
    let st = stages(c, shapes, members, folds)?;
    let root = *members.last().ok_or_else(|| internal("empty pipeline"))?;
    let fast = match shapes[root].as_array().map(|a| a.element_type) {
        Some(ElementType::F32) => tiled::<f32>(c, shapes, &st, escapes, value),
        Some(ElementType::F64) => tiled::<f64>(c, shapes, &st, escapes, value),
        _ => None,
    };
    match fast {
        Some(result) => result,
        None => in_turn(c, shapes, &st, escapes, value),
    }
}

/// The stages one after the other over all rows, each value materialized.
fn in_turn<'a>(
    c: &'a Computation,
    shapes: &[&Shape],
    st: &Stages,
    escapes: bool,
    value: &impl Fn(InstrId) -> R<&'a Literal>,
) -> R<Literal> {
    let mut local: Vec<Option<Literal>> = (0..c.instructions.len()).map(|_| None).collect();
    for e in &st.events {
        let (at, computed) = {
            let look = |o: InstrId| match &local[o] {
                Some(l) => Ok(l),
                None => value(o),
            };
            match e {
                Event::Fold { members, op, .. } => {
                    let root = *members.last().ok_or_else(|| internal("empty stage"))?;
                    let folded = match members[..] {
                        // The Reduce of a materialized operand.
                        [lone] => fold_whole(c, shapes, lone, *op, st.row, &look)?,
                        _ => super::run_group(c, shapes, members, Some(*op), false, look)?,
                    };
                    (root, folded)
                }
                Event::PerRow { instr, .. } => (*instr, per_row_whole(c, shapes, *instr, &look)?),
            }
        };
        local[at] = Some(computed);
    }
    let look = |o: InstrId| match &local[o] {
        Some(l) => Ok(l),
        None => value(o),
    };
    super::run_group(c, shapes, &st.last, None, escapes, look)
}

/// A Reduce of a materialized operand over all its rows of `row` values.
fn fold_whole<'b>(
    c: &Computation,
    shapes: &[&Shape],
    m: InstrId,
    op: BinaryOp,
    row: usize,
    look: &impl Fn(InstrId) -> R<&'b Literal>,
) -> R<Literal> {
    let out = shapes[m].as_array().ok_or_else(|| internal("pipeline fold"))?.clone();
    let operand = |k: usize| {
        c.instructions[m].operands.get(k).ok_or_else(|| internal("pipeline fold operand")).and_then(|&o| look(o)).and_then(array)
    };
    let (x, init) = (operand(0)?, operand(1)?);
    macro_rules! typed {
        ($t:ty) => {{
            let values = <$t>::slice(&x.data).ok_or_else(|| internal("pipeline fold type"))?;
            let init = *<$t>::slice(&init.data).and_then(|v| v.first()).ok_or_else(|| internal("pipeline fold init"))?;
            let mut folds = vec![<$t>::default(); out.element_count()];
            lone_fold(values, op, init, 0, row, &mut folds)?;
            Ok(ArrayLiteral::with_shape(out, <$t>::wrap(folds)).into())
        }};
    }
    match out.element_type {
        ElementType::F32 => typed!(f32),
        ElementType::F64 => typed!(f64),
        _ => Err(internal("pipeline fold of another type")),
    }
}

/// A per-row op over all rows, its operands materialized.
fn per_row_whole<'b>(c: &Computation, shapes: &[&Shape], m: InstrId, look: &impl Fn(InstrId) -> R<&'b Literal>) -> R<Literal> {
    let out = shapes[m].as_array().ok_or_else(|| internal("per-row op"))?.clone();
    let operands = c.instructions[m].operands.iter().map(|&o| look(o).and_then(array)).collect::<R<Vec<&ArrayLiteral>>>()?;
    macro_rules! typed {
        ($t:ty) => {{
            let sides = operands
                .iter()
                .map(|a| {
                    let v = <$t>::slice(&a.data).ok_or_else(|| internal("per-row operand type"))?;
                    Ok(if v.len() == 1 { Side::One(v[0]) } else { Side::All(v) })
                })
                .collect::<R<Vec<_>>>()?;
            let mut buffer = vec![<$t>::default(); out.element_count()];
            per_row_op_into(&c.instructions[m].op, &sides, &mut buffer)?;
            Ok(ArrayLiteral::with_shape(out, <$t>::wrap(buffer)).into())
        }};
    }
    match out.element_type {
        ElementType::F32 => typed!(f32),
        ElementType::F64 => typed!(f64),
        _ => Err(internal("per-row op of another type")),
    }
}

/// `op` on `inputs` (each one value or as many as `out`) into `out`.
fn per_row_op_into<T: FFloat>(op: &Op, inputs: &[Side<T>], out: &mut [T]) -> R<()> {
    let input = |k: usize| inputs.get(k).copied().ok_or_else(|| internal("per-row op without operands"));
    let one = match op {
        Op::Unary(u) => float_unary_fn(*u, OnTile { x: input(0)?, out }).ok_or_else(|| internal("per-row unary op"))?,
        Op::Binary { op, .. } => float_binary_fn(*op, OnTile2 { a: input(0)?, b: input(1)?, out })?,
        _ => match input(0)? {
            Side::One(x) => Some(x),
            Side::All(v) => {
                out.copy_from_slice(v.get(..out.len()).ok_or_else(|| internal("per-row operand too short"))?);
                None
            }
        },
    };
    if let Some(x) = one {
        out.fill(x);
    }
    Ok(())
}

/// The pipeline tile by tile, when the tiles run every stage.
fn tiled<'a, T: FFloat + Elem + ChainFloat>(
    c: &'a Computation,
    shapes: &[&Shape],
    st: &Stages,
    escapes: bool,
    value: &impl Fn(InstrId) -> R<&'a Literal>,
) -> Option<R<Literal>> {
    let row_input = |o: InstrId| st.value_of.get(o).copied().flatten().map(|k| (k, st.row));
    // Per fold: a stage of the tiles, or a Reduce of a materialized
    // operand, folded directly.
    let mut parts = Vec::new();
    let mut folds = Vec::new();
    for e in &st.events {
        if let Event::Fold { members, op, .. } = e {
            let init = c.instructions[*members.last()?].operands.get(1)?;
            let init = match value(*init).and_then(array) {
                Ok(a) => a,
                Err(e) => return Some(Err(e)),
            };
            if let [lone] = members[..] {
                let operand = c.instructions[lone].operands.first()?;
                let x = match value(*operand).and_then(array) {
                    Ok(a) => T::slice(&a.data)?,
                    Err(e) => return Some(Err(e)),
                };
                folds.push(Fold::Lone { x, op: *op, init: *T::slice(&init.data)?.first()? });
                continue;
            }
            let rows = Rows { op: *op, len: st.row, init };
            folds.push(Fold::Tiles(parts.len()));
            parts.push(match tiles::build::<T>(c, shapes, members, Some(&rows), value, &row_input)? {
                Ok(p) => p,
                Err(e) => return Some(Err(e)),
            });
        }
    }
    parts.push(match tiles::build::<T>(c, shapes, &st.last, None, value, &row_input)? {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    });
    let patterns: Vec<_> = parts.iter().map(|p| p.patterns()).collect();
    let parts: Vec<_> = parts.into_iter().zip(&patterns).map(|(p, pat)| p.with_patterns(pat)).collect();
    let last = parts.len() - 1;
    let groups: Vec<_> = parts.iter().enumerate().map(|(i, p)| p.group(escapes && i == last)).collect();
    let out = parts[last].out.clone();
    // Per-row operands from outside, cut row by row.
    let mut outside: Vec<Vec<Option<&'a [T]>>> = Vec::new();
    for e in &st.events {
        let mut sides = Vec::new();
        if let Event::PerRow { instr, .. } = e {
            for &o in &c.instructions[*instr].operands {
                sides.push(match row_input(o) {
                    Some(_) => None,
                    None => match value(o).and_then(array) {
                        Ok(a) => Some(T::slice(&a.data)?),
                        Err(e) => return Some(Err(e)),
                    },
                });
            }
        }
        outside.push(sides);
    }
    let run = Run { c, st, groups: &groups, folds: &folds, outside: &outside, stream: groups[last].streams() };
    Some(run.all().map(|v| ArrayLiteral::with_shape(out, T::wrap(v)).into()))
}

/// How a pipeline folds its rows.
enum Fold<'a, T> {
    /// A stage of the tiles (its index in [`Run::groups`]).
    Tiles(usize),
    /// A Reduce of a materialized operand.
    Lone { x: &'a [T], op: BinaryOp, init: T },
}

/// A pipeline ready to run.
struct Run<'r, 's, 'a, T> {
    c: &'r Computation,
    st: &'r Stages,
    /// The tiled fold stages, then the final stage.
    groups: &'r [tiles::Group<'s, 'a, T>],
    /// Per fold event, in order.
    folds: &'r [Fold<'a, T>],
    /// Per event: a per-row op's materialized operands (None: a per-row value).
    outside: &'r [Vec<Option<&'a [T]>>],
    stream: bool,
}

impl<'a, T: FFloat + Elem + ChainFloat> Run<'_, '_, 'a, T> {
    /// Every output position, chunks of whole tiles in parallel.
    fn all(&self) -> R<Vec<T>> {
        let row = self.st.row;
        // Several tiles of the stages: the per-row ops between them run
        // once for all their rows.
        let tile_rows = tiles::rows_per_tile(row) * STAGE_TILES;
        let threads = rayon::current_num_threads();
        let chunk_rows = self.st.rows.div_ceil(4 * threads).next_multiple_of(tile_rows);
        let setup = || {
            let scratch: Vec<_> = self.groups.iter().map(|g| g.scratch()).collect();
            (scratch, vec![vec![T::default(); tile_rows]; self.st.values])
        };
        tiles::in_tiles(self.st.rows * row, chunk_rows * row, tile_rows * row, self.stream, setup, |(scratch, values), start, out| {
            self.tile(scratch, values, start / row, out)
        })
    }

    /// The rows from `first` that `out` holds: every event on them, then
    /// the final stage into `out`.
    fn tile(&self, scratch: &mut [tiles::Scratch<'a, T>], values: &mut [Vec<T>], first: usize, out: &mut [MaybeUninit<T>]) -> R<()> {
        let row = self.st.row;
        let rows = out.len() / row;
        let mut fold = 0;
        for (e, outside) in self.st.events.iter().zip(self.outside) {
            match e {
                Event::Fold { value, .. } => {
                    let mut mine = std::mem::take(&mut values[*value]);
                    let ran = match self.folds.get(fold) {
                        Some(Fold::Tiles(g)) => Self::with_inputs(&mut scratch[*g], values, first, |s| {
                            // SAFETY: MaybeUninit<T> has T's layout, and T
                            // is Copy: writing through it leaves valid values.
                            let target = unsafe { &mut *(&mut mine[..rows] as *mut [T] as *mut [MaybeUninit<T>]) };
                            // In the stage's own tiles (its patterns cover those).
                            let step = (self.groups[*g].tile_positions() / row).max(1);
                            let mut at = 0;
                            while at < rows {
                                let n = (rows - at).min(step);
                                self.groups[*g].tile(s, (first + at) * row, n * row, &mut target[at..at + n])?;
                                at += n;
                            }
                            Ok(())
                        }),
                        Some(Fold::Lone { x, op, init }) => lone_fold(x, *op, *init, first * row, row, &mut mine[..rows]),
                        None => Err(internal("pipeline fold")),
                    };
                    values[*value] = mine;
                    ran?;
                    fold += 1;
                }
                Event::PerRow { instr, value } => {
                    let mut mine = std::mem::take(&mut values[*value]);
                    // Per-row ops are unary or binary (`per_row_op`).
                    let mut sides = [Side::One(T::default()); 2];
                    let operands = &self.c.instructions[*instr].operands;
                    let mut ran = Ok(());
                    for (k, (&o, whole)) in operands.iter().zip(outside).enumerate().take(2) {
                        let side = match whole {
                            Some(v) if v.len() == 1 => Ok(Side::One(v[0])),
                            Some(v) => v.get(first..first + rows).map(Side::All).ok_or_else(|| internal("per-row operand too short")),
                            None => match self.st.value_of[o] {
                                Some(j) => Ok(Side::All(&values[j][..rows])),
                                None => Err(internal("per-row value")),
                            },
                        };
                        match side {
                            Ok(side) => sides[k] = side,
                            Err(e) => ran = Err(e),
                        }
                    }
                    let ran = ran.and_then(|()| {
                        per_row_op_into(&self.c.instructions[*instr].op, &sides[..operands.len().min(2)], &mut mine[..rows])
                    });
                    values[*value] = mine;
                    ran?;
                }
            }
        }
        let last = self.groups.len() - 1;
        let step = self.groups[last].tile_positions().max(1);
        let s = &mut scratch[last];
        Self::with_inputs(s, values, first, |s| {
            let mut at = 0;
            while at < out.len() {
                let len = (out.len() - at).min(step);
                self.groups[last].tile(s, first * row + at, len, &mut out[at..at + len])?;
                at += len;
            }
            Ok(())
        })
    }

    /// Runs `f` with the scratch reading the per-row values of the rows
    /// from `first` (`values[k]` holds value `k`'s).
    fn with_inputs(
        s: &mut tiles::Scratch<'a, T>,
        values: &[Vec<T>],
        first: usize,
        f: impl FnOnce(&mut tiles::Scratch<'a, T>) -> R<()>,
    ) -> R<()> {
        // SAFETY: `values` is borrowed for this whole call, so the slices
        // stay valid and unchanged while `f` runs the tiles.
        unsafe { s.set_row_inputs(first, values) };
        let ran = f(s);
        // SAFETY: no slices: nothing to keep valid.
        unsafe { s.set_row_inputs(first, &[]) };
        ran
    }
}

/// The folds of the rows of `row` values of `x` from position `start`,
/// one per value of `out`: the fold the tiles apply to a Reduce root's
/// rows, which is the Reduce kernel's.
fn lone_fold<T: FFloat + Elem>(x: &[T], op: BinaryOp, init: T, start: usize, row: usize, out: &mut [T]) -> R<()> {
    let values = x.get(start..start + out.len() * row).ok_or_else(|| internal("pipeline fold past its operand"))?;
    let folds = float_combine(op, values, init, RowFolds { len: row }).ok_or_else(|| internal("pipeline fold without a typed loop"))??;
    out.copy_from_slice(folds.get(..out.len()).ok_or_else(|| internal("pipeline folds"))?);
    Ok(())
}
