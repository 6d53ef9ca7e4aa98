//! Loop fusion: the fast engine's answer to a program that is a long chain
//! of element-wise ops over one large shape (LayerNorm, GELU, softmax's
//! arithmetic, optimizer updates). Run op by op, each op reads and writes
//! the whole array in memory; fused, the chain runs block by block, its
//! intermediate values live in the caches only, and memory sees the
//! chain's inputs and its one result.
//!
//! Fusion belongs to this engine only: the reference runs every op on its
//! own. A fused group computes exactly what its ops compute one by one (the
//! same element functions run on each block), which
//! `tests/fusion_differential.rs` and every differential campaign check
//! against the unfused run. Exactly means bit for bit but for NaN payloads:
//! which of two NaNs an add returns depends on the operand order the
//! compiler picked for that loop, and a row sum compiled here and in the
//! Reduce kernel may pick differently.
//!
//! A group is a set of instructions that iterate over one element count `n`
//! and whose values are only read inside the group, except its root's:
//! - element-wise ops (Unary, Binary, Compare, Select, Clamp, Convert)
//!   whose operands have the result's dimensions (read block by block) or
//!   one element (read as a scalar);
//! - Reshape and Collapse without a transpose (a block is a range of linear
//!   positions, which they keep);
//! - Broadcast and BroadcastInDim, which read their (materialized) operand
//!   through strides, so a row or column vector is never spread out in
//!   memory;
//! - as the root only, a Reduce of rows: a typed reducer (Add, Mul, Max,
//!   Min, logic) over the trailing dimensions, rows of at most
//!   [`MAX_ROW`] elements. Blocks then hold whole rows, and each row folds
//!   in the order the Reduce kernel folds it.
//!
//! Apart from those, an f32 or f64 Dot read only by a Transpose that puts
//! the rhs free dimensions first (JAX's weight gradient `(dyᵀ·x)ᵀ`) is a
//! group of two: the Dot writes its result transposed (swapping the GEMM's
//! operands), bit for bit the Dot's values, and the copy is gone. And a
//! Dot read only by a Mul or Div by a power of two (attention's `/ √64`)
//! scales its sums as it stores them, which is exact either way.
//!
//! And an f32 or f64 Conv read only by the Add of a bias along its output
//! features, perhaps under a ReLU's `Max(·, +0)`, is a group with them:
//! the convolution adds the bias and applies the ReLU as it stores its
//! sums (`conv_epilogue.rs`), bit for bit the three ops' values.
//!
//! Two runners: [`tiles`] for groups of one float type and the ops it
//! knows (values in L1-sized tiles, no buffer per op), [`blocks`] for
//! everything else (the engine's whole-array kernels on blocks).

mod blocks;
mod choose;
mod conv_epilogue;
mod lanes;
mod pipeline;
mod tiles;

use xlaref_reference::ir::{BinaryOp, Computation, ComputationId, DotDims, InstrId, Op};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::{ArrayShape, ElementType, Shape};
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

use crate::applied::{Kind, ScalarFn};
use crate::internal;

type R<T> = Result<T, RunError>;

/// The longest row a fused Reduce folds: a block holds at least one row,
/// and the Reduce kernel folds rows this short on one thread each (so the
/// fused fold is its fold).
pub const MAX_ROW: usize = 16384;

/// What the executor does with an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Runs on its own.
    Alone,
    /// Part of a group; its value is never materialized.
    Member,
    /// The last instruction of group `g`: running it runs the group.
    Root(usize),
}

/// A computation's fusion groups.
#[derive(Debug)]
pub struct Plan {
    pub roles: Vec<Role>,
    /// Each group's instructions in program order (the root last).
    pub groups: Vec<Vec<InstrId>>,
    /// Per group: the reducer of its root, when the root is a Reduce.
    pub reducers: Vec<Option<BinaryOp>>,
    /// Per group: the Reduce members of a row pipeline (`pipeline.rs`)
    /// and their reducers; empty for other groups.
    pub folds: Vec<Vec<(InstrId, BinaryOp)>>,
}

impl Plan {
    /// A plan without groups (every instruction runs alone).
    pub fn unfused(c: &Computation) -> Plan {
        Plan { roles: vec![Role::Alone; c.instructions.len()], groups: Vec::new(), reducers: Vec::new(), folds: Vec::new() }
    }
}

/// The element count of instruction `i` if it can be in a group.
fn fusible_count(c: &Computation, shapes: &[&Shape], i: InstrId) -> Option<usize> {
    let out = shapes[i].as_array().filter(|s| !s.is_dynamic())?;
    let n = out.element_count();
    let operands = &c.instructions[i].operands;
    let static_array = |o: InstrId| shapes[o].as_array().filter(|s| !s.is_dynamic());
    // Each operand has the result's dimensions or (where `scalar_ok`) one element.
    let elementwise = |scalar_ok: bool| {
        operands.iter().all(|&o| static_array(o).is_some_and(|s| s.dims == out.dims || (scalar_ok && s.element_count() == 1)))
    };
    let ok = match &c.instructions[i].op {
        Op::Unary(_) | Op::ConvertElementType { .. } => elementwise(false),
        Op::Binary { .. } | Op::Compare { .. } | Op::Clamp => elementwise(true),
        // A scalar predicate selects whole operands; only the element-wise form fuses.
        Op::Select => elementwise(false),
        Op::Reshape { dimensions, .. } => {
            dimensions.as_ref().is_none_or(|d| d.iter().enumerate().all(|(k, &x)| x == k as i64))
                && operands.iter().all(|&o| static_array(o).is_some())
        }
        Op::Collapse { .. } => operands.iter().all(|&o| static_array(o).is_some()),
        Op::Broadcast { .. } | Op::BroadcastInDim { .. } => operands.iter().all(|&o| static_array(o).is_some()),
        _ => false,
    };
    ok.then_some(n)
}

/// The row length of a Reduce a group can end in: one operand, a typed
/// reducer `op` for its element type, the trailing dimensions reduced,
/// rows of 2 to [`MAX_ROW`] elements.
fn reduced_row(c: &Computation, shapes: &[&Shape], i: InstrId, op: BinaryOp) -> Option<usize> {
    let Op::Reduce { dimensions, .. } = &c.instructions[i].op else { return None };
    let [operand, _init] = c.instructions[i].operands[..] else { return None };
    let a = shapes[operand].as_array().filter(|s| !s.is_dynamic())?;
    shapes[i].as_array().filter(|s| !s.is_dynamic())?;
    let rank = a.rank();
    let mut sorted = dimensions.clone();
    sorted.sort_unstable();
    let trailing = sorted.iter().enumerate().all(|(k, &d)| d == (rank - sorted.len() + k) as i64);
    let row: usize = a.dims[rank - sorted.len()..].iter().map(|&d| d as usize).product();
    let typed = match a.element_type {
        ElementType::C64 | ElementType::C128 => false,
        t if t.is_float() => matches!(op, BinaryOp::Add | BinaryOp::Mul | BinaryOp::Max | BinaryOp::Min),
        _ => true,
    };
    (trailing && typed && (2..=MAX_ROW).contains(&row)).then_some(row)
}

/// Whether member `user` reads `operand` position by position (so the
/// operand can be a member too): an element-wise op of the group's element
/// count, a reshape, or a Reduce root reading it as its operand.
fn reads_in_place(c: &Computation, shapes: &[&Shape], user: InstrId, operand: InstrId, n: usize) -> bool {
    let count = shapes[operand].as_array().map(ArrayShape::element_count);
    let instr = &c.instructions[user];
    match instr.op {
        Op::Broadcast { .. } | Op::BroadcastInDim { .. } => false,
        Op::Reduce { .. } => {
            instr.operands.iter().position(|&o| o == operand) == Some(0) && instr.operands[1] != operand && count == Some(n)
        }
        _ => count == Some(n),
    }
}

/// Whether instruction `t` is a Transpose of an f32 or f64 Dot (or
/// DotGeneral) that moves the rhs free dimensions before the lhs free ones
/// and keeps the batch dimensions in place: what
/// `kernels::dot::dot_general_transposed` writes directly.
fn transposes_dot(c: &Computation, shapes: &[&Shape], t: InstrId) -> bool {
    let Op::Transpose { permutation } = &c.instructions[t].op else { return false };
    let Some(&d) = c.instructions[t].operands.first() else { return false };
    let Some(dims) = dot_dims(c, shapes, d) else { return false };
    let typed = |i: InstrId| shapes[i].as_array().filter(|a| !a.is_dynamic()).map(|a| a.element_type);
    let t_out = typed(d);
    if !matches!(t_out, Some(ElementType::F32 | ElementType::F64)) || c.instructions[d].operands.iter().any(|&o| typed(o) != t_out) {
        return false;
    }
    let rank = |i: usize| c.instructions[d].operands.get(i).and_then(|&o| shapes[o].as_array()).map_or(0, ArrayShape::rank);
    let batch = dims.lhs_batch_dimensions.len();
    let lhs_free = rank(0).saturating_sub(batch + dims.lhs_contracting_dimensions.len());
    let rhs_free = rank(1).saturating_sub(batch + dims.rhs_contracting_dimensions.len());
    let want: Vec<i64> =
        (0..batch).chain(batch + lhs_free..batch + lhs_free + rhs_free).chain(batch..batch + lhs_free).map(|x| x as i64).collect();
    lhs_free > 0 && rhs_free > 0 && *permutation == want
}

/// The Dot that Mul or Div `s` scales by a power of two, and the scale
/// (`kernels::dot::dot_general_scaled` applies it exactly): an f32 or f64
/// Dot contracting at most 512 values, times or divided by a scalar
/// constant (or a broadcast of one) that is a power of two whose
/// reciprocal is a normal number of the type too.
fn scaled_dot(c: &Computation, shapes: &[&Shape], s: InstrId) -> Option<(InstrId, f64)> {
    let instr = &c.instructions[s];
    let Op::Binary { op, .. } = &instr.op else { return None };
    let [x, y] = instr.operands[..] else { return None };
    let is_dot = |i: InstrId| matches!(c.instructions[i].op, Op::Dot { .. } | Op::DotGeneral { .. });
    let (d, k, divide) = match op {
        BinaryOp::Div => (x, y, true),
        BinaryOp::Mul if is_dot(x) => (x, y, false),
        BinaryOp::Mul => (y, x, false),
        _ => return None,
    };
    let dims = dot_dims(c, shapes, d)?;
    let out = shapes[d].as_array().filter(|a| !a.is_dynamic())?;
    let t = out.element_type;
    let typed = |i: InstrId| shapes[i].as_array().map(|a| a.element_type);
    if !matches!(t, ElementType::F32 | ElementType::F64)
        || c.instructions[d].operands.iter().any(|&o| typed(o) != Some(t))
        || shapes[s].as_array().map(|a| (&a.dims, a.element_type)) != Some((&out.dims, t))
    {
        return None;
    }
    let lhs = shapes[*c.instructions[d].operands.first()?].as_array()?;
    let depth = dims
        .lhs_contracting_dimensions
        .iter()
        .try_fold(1usize, |n, &i| n.checked_mul(usize::try_from(*lhs.dims.get(usize::try_from(i).ok()?)?).ok()?))?;
    if depth > 512 {
        return None;
    }
    let p = scalar_constant(c, k)?;
    let scale = if divide { 1.0 / p } else { p };
    let (min_exp, max_exp) = if t == ElementType::F32 { (-126, 127) } else { (-1022, 1023) };
    let power_of_two = |v: f64| {
        let exponent = ((v.to_bits() >> 52) & 0x7ff) as i64 - 1023;
        v.is_normal() && v.to_bits() & ((1u64 << 52) - 1) == 0 && (min_exp..=max_exp).contains(&exponent)
    };
    (power_of_two(p) && power_of_two(scale)).then_some((d, scale))
}

/// A Select between a Dot's values (scaled by a power of two, perhaps) and
/// a constant, by a pred array broadcast over the Dot's leading
/// dimensions: attention's causal mask, `where(tril, q·kᵀ/√d, -inf)`.
/// `kernels::dot::dot_general_masked` applies it as each batch's result
/// is stored, where a group of its own read and wrote every score once
/// more (causal attention over S=512, 8 heads: 1.1 of 10 ms).
struct MaskedDot {
    dot: InstrId,
    /// The Mul or Div by the scale, if any, and the scale.
    scaled: Option<(InstrId, f64)>,
    /// The pred array, and whether the Dot's values go where it is true.
    mask: InstrId,
    on_true: bool,
    fill: f64,
    /// The broadcasts of the mask and of the fill, and the scale's operand.
    inputs: Vec<InstrId>,
}

fn masked_dot(c: &Computation, shapes: &[&Shape], s: InstrId) -> Option<MaskedDot> {
    let instr = &c.instructions[s];
    let (Op::Select, [p, t, f]) = (&instr.op, &instr.operands[..]) else { return None };
    let out = shapes[s].as_array().filter(|a| !a.is_dynamic())?;
    let is_dot = |i: InstrId| matches!(c.instructions[i].op, Op::Dot { .. } | Op::DotGeneral { .. });
    // The values: a scaled Dot, or an f32 or f64 Dot of the Select's shape.
    let values = |v: InstrId| -> Option<(InstrId, Option<(InstrId, f64)>)> {
        if let Some((d, scale)) = scaled_dot(c, shapes, v) {
            return Some((d, Some((v, scale))));
        }
        let typed = |i: InstrId| shapes[i].as_array().filter(|a| !a.is_dynamic()).map(|a| (a.dims.clone(), a.element_type));
        let ok = is_dot(v)
            && matches!(out.element_type, ElementType::F32 | ElementType::F64)
            && typed(v) == Some((out.dims.clone(), out.element_type))
            && c.instructions[v].operands.iter().all(|&o| typed(o).map(|t| t.1) == Some(out.element_type));
        ok.then_some((v, None))
    };
    let (on_true, (dot, scaled), fill_at) = match (values(*t), values(*f)) {
        (Some(v), _) => (true, v, *f),
        (None, Some(v)) => (false, v, *t),
        _ => return None,
    };
    let fill = scalar_constant(c, fill_at)?;
    // The mask: a pred array broadcast to the trailing dimensions, in order.
    let b = &c.instructions[*p];
    let mask = *b.operands.first()?;
    let m = shapes[mask].as_array().filter(|a| !a.is_dynamic() && a.element_type == ElementType::Pred)?;
    let rank = out.rank();
    let trailing = rank.checked_sub(m.rank())?;
    let in_order = match &b.op {
        Op::BroadcastInDim { broadcast_dimensions, .. } => {
            broadcast_dimensions.iter().enumerate().all(|(k, &d)| d == (trailing + k) as i64)
        }
        Op::Broadcast { .. } => true,
        _ => false,
    };
    if !in_order || m.dims[..] != out.dims[trailing..] || m.element_count() == 0 {
        return None;
    }
    let mut inputs = vec![*p, fill_at];
    if let Some((v, _)) = scaled {
        inputs.extend(c.instructions[v].operands.iter().copied().filter(|&o| o != dot));
    }
    Some(MaskedDot { dot, scaled, mask, on_true, fill, inputs })
}

/// The value of a one-element Constant, or of a broadcast of one.
fn scalar_constant(c: &Computation, k: InstrId) -> Option<f64> {
    let instr = &c.instructions[k];
    match &instr.op {
        Op::Constant { literal } => {
            let a = literal.as_array().filter(|a| a.element_count() == 1)?;
            a.typed::<f32>().map(|v| v[0] as f64).or_else(|| a.typed::<f64>().map(|v| v[0]))
        }
        Op::Broadcast { .. } | Op::BroadcastInDim { .. } => scalar_constant(c, *instr.operands.first()?),
        _ => None,
    }
}

/// A Dot's or DotGeneral's dimension numbers.
fn dot_dims(c: &Computation, shapes: &[&Shape], d: InstrId) -> Option<DotDims> {
    match &c.instructions[d].op {
        Op::Dot { .. } => {
            let lhs = shapes[*c.instructions[d].operands.first()?].as_array()?;
            Some(DotDims {
                lhs_contracting_dimensions: vec![lhs.rank().checked_sub(1)? as i64],
                rhs_contracting_dimensions: vec![0],
                lhs_batch_dimensions: vec![],
                rhs_batch_dimensions: vec![],
            })
        }
        Op::DotGeneral { dimension_numbers, .. } => Some(dimension_numbers.clone()),
        _ => None,
    }
}

/// Finds the groups of computation `c` (`shapes[i]` is instruction `i`'s;
/// `reducer(id)` the typed reducer computation `id` is, if any).
///
/// Walks backwards: an instruction joins the group of its readers when all
/// of them are in one group and read it in place; otherwise it starts a
/// group of its own (a Reduce always does: it can only be a root). Groups
/// of one instruction run alone.
pub fn plan(c: &Computation, shapes: &[&Shape], reducer: impl Fn(ComputationId) -> Option<BinaryOp>) -> Plan {
    let n = c.instructions.len();
    let mut users: Vec<Vec<InstrId>> = vec![Vec::new(); n];
    for (i, instr) in c.instructions.iter().enumerate() {
        for &o in &instr.operands {
            if users[o].last() != Some(&i) {
                users[o].push(i);
            }
        }
    }
    let mut group_of: Vec<Option<usize>> = vec![None; n];
    let mut groups: Vec<(usize, Vec<InstrId>, Option<BinaryOp>)> = Vec::new();
    for i in (0..n).rev() {
        let reduce = match &c.instructions[i].op {
            Op::Reduce { computation, .. } => reducer(*computation).filter(|&op| reduced_row(c, shapes, i, op).is_some()),
            _ => None,
        };
        if let Some(op) = reduce {
            let count = shapes[c.instructions[i].operands[0]].as_array().map_or(0, ArrayShape::element_count);
            groups.push((count, vec![i], Some(op)));
            group_of[i] = Some(groups.len() - 1);
            continue;
        }
        let Some(count) = fusible_count(c, shapes, i) else { continue };
        let joined = (i != c.root && !users[i].is_empty())
            .then(|| group_of[users[i][0]])
            .flatten()
            .filter(|&g| groups[g].0 == count)
            .filter(|&g| users[i].iter().all(|&u| group_of[u] == Some(g) && reads_in_place(c, shapes, u, i, count)));
        let g = joined.unwrap_or_else(|| {
            groups.push((count, Vec::new(), None));
            groups.len() - 1
        });
        group_of[i] = Some(g);
        groups[g].1.push(i);
    }
    // A Dot read only by a Transpose to (batch, rhs free, lhs free): the
    // pair is a group whose Dot writes the transposed result directly.
    for (t, instr) in c.instructions.iter().enumerate() {
        if let Some(&d) = instr.operands.first() {
            if group_of[t].is_none() && group_of[d].is_none() && d != c.root && users[d] == [t] && transposes_dot(c, shapes, t) {
                groups.push((0, vec![t, d], None));
                group_of[t] = Some(groups.len() - 1);
                group_of[d] = group_of[t];
            }
        }
    }
    // A Dot read only by a Mul or Div by a power of two (and the broadcast
    // of that scalar, if it is the rest of the Mul's group): the Dot
    // scales its sums as it stores them.
    for s in 0..n {
        let Some((d, _)) = scaled_dot(c, shapes, s) else { continue };
        if group_of[d].is_some() || d == c.root || users[d] != [s] {
            continue;
        }
        let scale_operand = c.instructions[s].operands.iter().copied().find(|&o| o != d);
        let g = match group_of[s] {
            None => {
                groups.push((0, vec![s], None));
                groups.len() - 1
            }
            Some(g) if groups[g].1.first() == Some(&s) && groups[g].1.iter().all(|&m| m == s || Some(m) == scale_operand) => g,
            Some(_) => continue,
        };
        groups[g].1.push(d);
        group_of[s] = Some(g);
        group_of[d] = Some(g);
    }
    // A Select by a broadcast mask between a (scaled) Dot read only by it
    // and a constant, in a group of its own with the broadcasts: the Dot
    // joins it and applies the Select as it stores its values.
    for s in 0..n {
        let Some(md) = masked_dot(c, shapes, s) else { continue };
        let Some(g) = group_of[s] else { continue };
        let scale_op = md.scaled.map(|(v, _)| v);
        let head = scale_op.unwrap_or(md.dot);
        let alone = |i: InstrId, reader: InstrId| i != c.root && users[i] == [reader];
        let members_ok = groups[g].2.is_none()
            && groups[g].1.first() == Some(&s)
            && groups[g].1.iter().all(|&m| m == s || Some(m) == scale_op || md.inputs.contains(&m));
        let scale_ok = scale_op.is_none_or(|v| alone(v, s) && group_of[v].is_none_or(|h| h == g));
        if members_ok && scale_ok && group_of[md.dot].is_none() && alone(md.dot, head) {
            for x in [Some(md.dot), scale_op].into_iter().flatten() {
                if group_of[x].is_none() {
                    groups[g].1.push(x);
                    group_of[x] = Some(g);
                }
            }
        }
    }
    // A Conv read only by the Add of a bias (under a ReLU's Max, perhaps)
    // that is a group of its own: the Conv joins it and stores the sums
    // with the bias added (`conv_epilogue.rs`).
    for (g, (_, members, reduce)) in groups.iter_mut().enumerate() {
        if reduce.is_some() {
            continue;
        }
        let Some(e) = conv_epilogue::find(c, shapes, members) else { continue };
        if group_of[e.conv].is_none() && e.conv != c.root && users[e.conv] == [e.add] {
            members.push(e.conv);
            group_of[e.conv] = Some(g);
        }
    }
    // An element-wise group and the row reductions only it reads: one
    // row pipeline.
    let folds = if pipelines_by_environment() {
        pipeline::merge(c, shapes, &users, &mut groups, &mut group_of)
    } else {
        vec![Vec::new(); groups.len()]
    };
    let mut plan = Plan::unfused(c);
    for ((_, mut members, reduce), folds) in groups.into_iter().zip(folds).filter(|((_, m, _), _)| m.len() > 1) {
        // Program order, the root last.
        members.sort_unstable();
        let g = plan.groups.len();
        for &m in &members {
            plan.roles[m] = Role::Member;
        }
        if let Some(&root) = members.last() {
            plan.roles[root] = Role::Root(g);
        }
        plan.groups.push(members);
        plan.reducers.push(reduce);
        plan.folds.push(folds);
    }
    plan
}

/// The plan of computation `id` of `module`.
pub fn plan_computation(module: &VerifiedModule, id: ComputationId) -> Plan {
    let c = module.computation(id);
    let shapes: Vec<&Shape> = (0..c.instructions.len()).map(|i| module.shape(id, i)).collect();
    plan(c, &shapes, |f| match ScalarFn::new(f).kind(module) {
        Kind::Bin(op) => Some(op),
        _ => None,
    })
}

/// A Broadcast member's operand and, per output dimension, the operand
/// stride it walks (0 where the operand is repeated).
struct Spread<'a> {
    operand: &'a ArrayLiteral,
    dims: Vec<usize>,
    strides: Vec<usize>,
}

fn spread<'a>(op: &Op, operand: &'a ArrayLiteral, out: &ArrayShape) -> Spread<'a> {
    let (dims, strides) = spread_strides(op, operand.dims(), out);
    Spread { operand, dims, strides }
}

/// A broadcast's output dimensions and, per output dimension, the stride
/// it walks its operand (of dimensions `operand`) with: 0 where the
/// operand is repeated.
fn spread_strides(op: &Op, operand: &[i64], out: &ArrayShape) -> (Vec<usize>, Vec<usize>) {
    let mapping: Vec<usize> = match op {
        Op::BroadcastInDim { broadcast_dimensions, .. } => broadcast_dimensions.iter().map(|&d| d as usize).collect(),
        _ => (out.rank().saturating_sub(operand.len())..out.rank()).collect(),
    };
    // Row-major strides of the operand.
    let mut in_strides = vec![1usize; operand.len()];
    for k in (0..operand.len().saturating_sub(1)).rev() {
        in_strides[k] = in_strides[k + 1] * operand[k + 1].max(0) as usize;
    }
    let mut strides = vec![0usize; out.rank()];
    for (k, &m) in mapping.iter().enumerate() {
        if operand[k] != 1 {
            if let Some(s) = strides.get_mut(m) {
                *s = in_strides[k];
            }
        }
    }
    (out.dims.iter().map(|&d| d as usize).collect(), strides)
}

/// The row length of a broadcast that gives each row (its last dimension)
/// one value of its operand, consecutive rows consecutive values in
/// row-major order: position `p` has operand value `p / row`.
fn rows_of_one_value(dims: &[usize], strides: &[usize]) -> Option<usize> {
    let rank = dims.len();
    if rank < 2 || strides[rank - 1] != 0 {
        return None;
    }
    (row_major(dims, strides) && dims[rank - 1] > 0).then_some(dims[rank - 1])
}

/// Whether a broadcast's leading dimensions (all but the last) walk its
/// operand in row-major order: consecutive rows read consecutive values.
fn row_major(dims: &[usize], strides: &[usize]) -> bool {
    let rank = dims.len();
    (0..rank.saturating_sub(1)).all(|d| dims[d] <= 1 || strides[d] == dims[d + 1..rank - 1].iter().product::<usize>())
}

impl Spread<'_> {
    /// The operand offset of output position `start`, and how many
    /// positions from there on stay in the same innermost row.
    fn locate(&self, start: usize) -> (usize, usize) {
        let Some(&inner) = self.dims.last() else { return (0, usize::MAX) };
        let mut rest = start;
        let mut base = 0;
        let mut innermost = 0;
        for d in (0..self.dims.len()).rev() {
            let size = self.dims[d].max(1);
            let i = rest % size;
            if d + 1 == self.dims.len() {
                innermost = i;
            }
            base += i * self.strides[d];
            rest /= size;
        }
        (base, inner - innermost)
    }

    /// Whether it only reshapes its operand: as many values, in the
    /// operand's row-major order.
    fn reshapes(&self) -> bool {
        let mut expect = 1usize;
        for (&d, &s) in self.dims.iter().zip(&self.strides).rev() {
            if d != 1 && s != expect {
                return false;
            }
            expect = expect.saturating_mul(d);
        }
        expect == self.operand.element_count()
    }

    /// The operand stride along the innermost dimension.
    fn inner_stride(&self) -> usize {
        self.strides.last().copied().unwrap_or(0)
    }

    /// The positions after which its values repeat: the element count of
    /// the dimensions from the outermost one it varies along inwards (a
    /// bias over the last dimension repeats every row). None when it is
    /// one value.
    fn period(&self) -> Option<usize> {
        let outermost = self.strides.iter().position(|&s| s != 0)?;
        Some(self.dims[outermost..].iter().product())
    }
}

/// Positions `start..start + len` of a broadcast into `out` (cleared
/// first), walked row by row of its last dimension: a repeated value, a
/// contiguous run or a strided gather.
fn spread_into<T: Copy>(v: &[T], s: &Spread, start: usize, len: usize, out: &mut Vec<T>) {
    out.clear();
    let rank = s.dims.len();
    if rank == 0 {
        out.extend(std::iter::repeat_n(v[0], len));
        return;
    }
    // The multi-index of `start`, innermost dimension last.
    let mut index = vec![0usize; rank];
    let mut rest = start;
    for d in (0..rank).rev() {
        index[d] = rest % s.dims[d].max(1);
        rest /= s.dims[d].max(1);
    }
    let (inner, inner_stride) = (s.dims[rank - 1], s.strides[rank - 1]);
    while out.len() < len {
        let base: usize = index.iter().zip(&s.strides).map(|(i, st)| i * st).sum();
        let run = (inner - index[rank - 1]).min(len - out.len());
        match inner_stride {
            0 => out.extend(std::iter::repeat_n(v[base], run)),
            1 => out.extend_from_slice(&v[base..base + run]),
            st => out.extend((0..run).map(|k| v[base + k * st])),
        }
        index[rank - 1] = 0;
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            if index[d] < s.dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

fn array(l: &Literal) -> R<&ArrayLiteral> {
    l.as_array().ok_or_else(|| internal("expected an array"))
}

/// A group's Reduce root: its reducer, its row length and its init value.
struct Rows<'a> {
    op: BinaryOp,
    len: usize,
    init: &'a ArrayLiteral,
}

/// Runs group `members` of computation `c` (`reducer`: the root's, when
/// the root is a Reduce); `value(o)` is the materialized value of an
/// instruction outside the group. `escapes`: the group's value is the
/// program's result (or part of it) and no op reads it.
pub fn run<'a>(
    c: &'a Computation,
    shapes: &[&Shape],
    members: &[InstrId],
    reducer: Option<BinaryOp>,
    folds: &[(InstrId, BinaryOp)],
    escapes: bool,
    value: impl Fn(InstrId) -> R<&'a Literal>,
) -> R<Literal> {
    if !folds.is_empty() {
        return pipeline::run(c, shapes, members, folds, escapes, &value);
    }
    run_group(c, shapes, members, reducer, escapes, value)
}

/// [`run`] for a group that is not a row pipeline (a pipeline's stages
/// run through this, never back through [`run`]).
fn run_group<'a>(
    c: &'a Computation,
    shapes: &[&Shape],
    members: &[InstrId],
    reducer: Option<BinaryOp>,
    escapes: bool,
    value: impl Fn(InstrId) -> R<&'a Literal>,
) -> R<Literal> {
    let root = *members.last().ok_or_else(|| internal("empty fusion group"))?;
    // A Conv heads a group of its bias and ReLU.
    if let Some(&d) = members.iter().find(|&&d| matches!(c.instructions[d].op, Op::Conv(_))) {
        let rest: Vec<InstrId> = members.iter().copied().filter(|&m| m != d).collect();
        let e = conv_epilogue::find(c, shapes, &rest).filter(|e| e.conv == d).ok_or_else(|| internal("a fused Conv of another form"))?;
        return conv_epilogue::run(c, shapes, &e, value);
    }
    // A Dot heads its group (with the broadcast of its scale, if any).
    if let Some(&d) = members.iter().find(|&&d| matches!(c.instructions[d].op, Op::Dot { .. } | Op::DotGeneral { .. })) {
        let operand = |k: usize| c.instructions[d].operands.get(k).ok_or_else(|| internal("dot operand")).and_then(|&o| array(value(o)?));
        let dims = dot_dims(c, shapes, d).ok_or_else(|| internal("dot dimensions"))?;
        let out = shapes[d].as_array().ok_or_else(|| internal("dot result"))?;
        if transposes_dot(c, shapes, root) {
            return Ok(crate::kernels::dot::dot_general_transposed(operand(0)?, operand(1)?, &dims, out)?.into());
        }
        if let Some((_, scale)) = scaled_dot(c, shapes, root) {
            return Ok(crate::kernels::dot::dot_general_scaled(operand(0)?, operand(1)?, &dims, out, scale)?.into());
        }
        if let Some(md) = masked_dot(c, shapes, root).filter(|md| md.dot == d) {
            let keep = array(value(md.mask)?)?.typed::<bool>().ok_or_else(|| internal("a mask that is not pred"))?;
            let mask = crate::kernels::dot::Mask { keep, on_true: md.on_true, fill: md.fill };
            let scale = md.scaled.map_or(1.0, |(_, s)| s);
            return Ok(crate::kernels::dot::dot_general_masked(operand(0)?, operand(1)?, &dims, out, scale, mask)?.into());
        }
        return Err(internal("a fused Dot of another form"));
    }
    let rows = match reducer {
        Some(op) => {
            let len = reduced_row(c, shapes, root, op).ok_or_else(|| internal("fused Reduce of another form"))?;
            let init = c.instructions[root].operands.get(1).ok_or_else(|| internal("Reduce without init"))?;
            Some(Rows { op, len, init: array(value(*init)?)? })
        }
        None => None,
    };
    if let Some(result) = tiles::run(c, shapes, members, rows.as_ref(), escapes, &value) {
        return result;
    }
    blocks::run(c, shapes, members, rows.as_ref(), &value)
}

/// Whether row pipelines are formed: `XLAREF_FAST_PIPELINE=off` keeps
/// their stages apart (to time or debug them).
fn pipelines_by_environment() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("XLAREF_FAST_PIPELINE").map_or(true, |v| !matches!(v.as_str(), "off" | "0" | "no")))
}

/// Whether fusion is on: `XLAREF_FAST_FUSION=off` turns it off (to time
/// or debug the op-by-op path).
pub fn enabled_by_environment() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("XLAREF_FAST_FUSION").map_or(true, |v| !matches!(v.as_str(), "off" | "0" | "no")))
}
