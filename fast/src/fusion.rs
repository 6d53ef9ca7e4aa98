//! Loop fusion of element-wise chains: the fast engine's answer to a
//! program that is a long chain of element-wise ops over one large shape
//! (LayerNorm, GELU, softmax's arithmetic, optimizer updates). Run op by op,
//! each op reads and writes the whole array in memory; fused, the chain runs
//! block by block, its intermediate values live in the caches only, and
//! memory sees the chain's inputs and its one result.
//!
//! Fusion belongs to this engine only: the reference runs every op on its
//! own. A fused group computes exactly what its ops compute one by one (the
//! same kernels run on each block), which `tests/fusion_differential.rs`
//! checks against the unfused run bit for bit and against the reference.
//!
//! A group is a set of instructions of one element count `n` whose values
//! are only read inside the group, except its root's:
//! - element-wise ops (Unary, Binary, Compare, Select, Clamp, Convert)
//!   whose operands have the result's dimensions (read block by block) or
//!   one element (read as a scalar);
//! - Reshape and Collapse without a transpose (a block is a range of linear
//!   positions, which they keep);
//! - Broadcast and BroadcastInDim, which read their (materialized) operand
//!   through strides, so a row or column vector is never spread out in
//!   memory.

use std::mem::MaybeUninit;
use std::rc::Rc;
use std::sync::Mutex;

use xlaref_reference::ir::{Computation, InstrId, Op};
use xlaref_reference::literal::{ArrayLiteral, Literal, Stored};
use xlaref_reference::types::{ArrayShape, Shape};
use xlaref_reference::with_data;
use xlaref_reference::RunError;

use crate::kernels::elementwise as ew;
use crate::par;

type R<T> = Result<T, RunError>;

fn bad(what: &str) -> RunError {
    RunError::Other(format!("fast engine: {what} (a verified module should not reach this)"))
}

/// Elements per block: small enough that a chain's live blocks stay in the
/// L2 cache, large enough that each op's loop runs long vector stretches.
const BLOCK: usize = 16384;

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

/// Whether member `user` reads operand slot `k` position by position (so
/// the operand can be a member too): every operand of an element-wise op
/// of the group's element count, and a reshape's operand.
fn reads_in_place(c: &Computation, shapes: &[&Shape], user: InstrId, operand: InstrId, n: usize) -> bool {
    let count = shapes[operand].as_array().map(ArrayShape::element_count);
    !matches!(c.instructions[user].op, Op::Broadcast { .. } | Op::BroadcastInDim { .. }) && count == Some(n)
}

/// Finds the groups of computation `c` (`shapes[i]` is instruction `i`'s).
///
/// Walks backwards: an instruction joins the group of its readers when all
/// of them are in one group and read it in place; otherwise it starts a
/// group of its own. Groups of one instruction run alone.
pub fn plan(c: &Computation, shapes: &[&Shape]) -> Plan {
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
    let mut groups: Vec<(usize, Vec<InstrId>)> = Vec::new();
    for i in (0..n).rev() {
        let Some(count) = fusible_count(c, shapes, i) else { continue };
        let joined = (i != c.root && !users[i].is_empty())
            .then(|| group_of[users[i][0]])
            .flatten()
            .filter(|&g| groups[g].0 == count)
            .filter(|&g| users[i].iter().all(|&u| group_of[u] == Some(g) && reads_in_place(c, shapes, u, i, count)));
        let g = joined.unwrap_or_else(|| {
            groups.push((count, Vec::new()));
            groups.len() - 1
        });
        group_of[i] = Some(g);
        groups[g].1.push(i);
    }
    let mut roles = vec![Role::Alone; n];
    let mut kept = Vec::new();
    for (_, mut members) in groups.into_iter().filter(|(_, m)| m.len() > 1) {
        members.reverse();
        let g = kept.len();
        for &m in &members {
            roles[m] = Role::Member;
        }
        if let Some(&root) = members.last() {
            roles[root] = Role::Root(g);
        }
        kept.push(members);
    }
    Plan { roles, groups: kept }
}

/// Where a member's operand comes from, for one block.
enum Input<'a> {
    /// Another member's block (its index in the group).
    Member(usize),
    /// A materialized value of the group's element count: sliced per block.
    Slice(&'a ArrayLiteral),
    /// A one-element value, passed whole (the kernels read it as a scalar).
    Whole(&'a Literal),
}

/// A Broadcast member's operand and, per output dimension, the operand
/// stride it walks (0 where the operand is repeated).
struct Spread<'a> {
    operand: &'a ArrayLiteral,
    dims: Vec<usize>,
    strides: Vec<usize>,
}

/// One member, ready to run on blocks.
struct Step<'a> {
    op: &'a Op,
    out: ArrayShape,
    inputs: Vec<Input<'a>>,
    spread: Option<Spread<'a>>,
}

fn spread<'a>(op: &Op, operand: &'a ArrayLiteral, out: &ArrayShape) -> Spread<'a> {
    let mapping: Vec<usize> = match op {
        Op::BroadcastInDim { broadcast_dimensions, .. } => broadcast_dimensions.iter().map(|&d| d as usize).collect(),
        _ => (out.rank() - operand.rank()..out.rank()).collect(),
    };
    let in_strides = operand.shape.strides();
    let mut strides = vec![0usize; out.rank()];
    for (k, &m) in mapping.iter().enumerate() {
        if operand.dims()[k] != 1 {
            strides[m] = in_strides[k];
        }
    }
    Spread { operand, dims: out.dims.iter().map(|&d| d as usize).collect(), strides }
}

/// Positions `start..start + len` of a broadcast, walked row by row of its
/// last dimension: a repeated value, a contiguous run or a strided gather.
fn spread_block<T: Copy>(v: &[T], s: &Spread, start: usize, len: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(len);
    let rank = s.dims.len();
    if rank == 0 {
        out.extend(std::iter::repeat_n(v[0], len));
        return out;
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
    out
}

fn array(l: &Literal) -> R<&ArrayLiteral> {
    l.as_array().ok_or_else(|| bad("expected an array"))
}

impl Step<'_> {
    /// This member's values at positions `start..start + len`.
    fn run(&self, done: &[Option<Rc<Literal>>], start: usize, len: usize) -> R<Rc<Literal>> {
        let shape = ArrayShape::new(self.out.element_type, vec![len as i64]);
        if let Some(s) = &self.spread {
            let data = with_data!(&s.operand.data, v => Stored::wrap(spread_block(v, s, start, len)));
            return Ok(Rc::new(ArrayLiteral::with_shape(shape, data).into()));
        }
        let x = self
            .inputs
            .iter()
            .map(|input| {
                Ok(match input {
                    Input::Member(k) => done[*k].clone().ok_or_else(|| bad("fused value freed too early"))?,
                    Input::Slice(a) => {
                        let data = with_data!(&a.data, v => Stored::wrap(v[start..start + len].to_vec()));
                        Rc::new(ArrayLiteral::with_shape(ArrayShape::new(a.element_type(), vec![len as i64]), data).into())
                    }
                    Input::Whole(l) => Rc::new((*l).clone()),
                })
            })
            .collect::<R<Vec<Rc<Literal>>>>()?;
        let a = |k: usize| array(&x[k]);
        Ok(Rc::new(match self.op {
            Op::Unary(u) => ew::unary(*u, a(0)?, &shape)?.into(),
            Op::Binary { op, .. } => ew::binary(*op, a(0)?, a(1)?, None, &shape)?.into(),
            Op::Compare { direction, total_order, .. } => ew::compare(*direction, *total_order, a(0)?, a(1)?, None, &shape)?.into(),
            Op::Select => ew::select(a(0)?, &x[1], &x[2])?,
            Op::Clamp => ew::clamp(a(0)?, a(1)?, a(2)?)?.into(),
            Op::ConvertElementType { new_element_type } => ew::convert(a(0)?, *new_element_type).into(),
            // A block of a reshape is the same block of its operand.
            Op::Reshape { .. } | Op::Collapse { .. } => return Ok(x[0].clone()),
            _ => return Err(bad("op in a fusion group")),
        }))
    }
}

/// Runs group `members` of computation `c`; `value(o)` is the materialized
/// value of an instruction outside the group.
pub fn run<'a>(c: &'a Computation, shapes: &[&Shape], members: &[InstrId], value: impl Fn(InstrId) -> R<&'a Literal>) -> R<Literal> {
    let root = *members.last().ok_or_else(|| bad("empty fusion group"))?;
    let out = shapes[root].as_array().ok_or_else(|| bad("fusion root is not an array"))?.clone();
    let n = out.element_count();
    let index: std::collections::HashMap<InstrId, usize> = members.iter().enumerate().map(|(k, &m)| (m, k)).collect();
    let mut steps = Vec::with_capacity(members.len());
    // The block of member k can be dropped after its last reader runs.
    let mut last_use = vec![0usize; members.len()];
    for (j, &m) in members.iter().enumerate() {
        let instr = &c.instructions[m];
        let member_out = shapes[m].as_array().ok_or_else(|| bad("fused value is not an array"))?.clone();
        let mut inputs = Vec::new();
        let mut broadcast = None;
        for &o in &instr.operands {
            if let Some(&k) = index.get(&o) {
                last_use[k] = j;
                inputs.push(Input::Member(k));
                continue;
            }
            let l = value(o)?;
            if matches!(instr.op, Op::Broadcast { .. } | Op::BroadcastInDim { .. }) {
                broadcast = Some(spread(&instr.op, array(l)?, &member_out));
            } else if l.as_array().is_some_and(|a| a.element_count() == n && a.dynamic_sizes.is_none()) {
                inputs.push(Input::Slice(array(l)?));
            } else if l.as_array().is_some_and(|a| a.element_count() == 1 && a.dynamic_sizes.is_none()) {
                inputs.push(Input::Whole(l));
            } else {
                return Err(bad("fused operand of another size"));
            }
        }
        steps.push(Step { op: &instr.op, out: member_out, inputs, spread: broadcast });
    }
    if n == 0 {
        return Ok(ArrayLiteral::zeros(&out).into());
    }
    let block = |start: usize, len: usize| -> R<Rc<Literal>> {
        let mut done: Vec<Option<Rc<Literal>>> = vec![None; steps.len()];
        for (j, step) in steps.iter().enumerate() {
            done[j] = Some(step.run(&done, start, len)?);
            for (k, &last) in last_use.iter().enumerate().take(j) {
                if last == j {
                    done[k] = None;
                }
            }
        }
        done.pop().flatten().ok_or_else(|| bad("fusion root value missing"))
    };
    let first = block(0, n.min(BLOCK))?;
    let first = array(&first)?;
    let data = with_data!(&first.data, v => Stored::wrap(assemble(v, n, &block)?));
    Ok(ArrayLiteral::with_shape(out, data).into())
}

/// The group's result: every block run once, in parallel across chunks of
/// whole blocks. `first` (block 0's values) only fixes the element type.
fn assemble<T: Stored + Copy + Send + Sync>(first: &[T], n: usize, block: &(dyn Fn(usize, usize) -> R<Rc<Literal>> + Sync)) -> R<Vec<T>> {
    let failed: Mutex<Option<RunError>> = Mutex::new(None);
    let clock = xlaref_reference::watch::clock();
    let chunk = if n <= 2 * BLOCK { n } else { n.div_ceil(4 * rayon::current_num_threads()).next_multiple_of(BLOCK) };
    let filler = first[0];
    let out = par::build_in_chunks(n, chunk, |start, chunk: &mut [MaybeUninit<T>]| {
        let mut at = 0;
        while at < chunk.len() {
            let len = (chunk.len() - at).min(BLOCK);
            // After the time limit, blocks are skipped: the executor reports it.
            let values = if clock.passed() { Ok(None) } else { block(start + at, len).map(Some) };
            let record = |e: RunError| {
                failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            };
            match values {
                Ok(Some(l)) => match l.as_array().and_then(|a| T::slice(&a.data)).filter(|v| v.len() == len) {
                    Some(v) => {
                        for (o, &x) in chunk[at..at + len].iter_mut().zip(v) {
                            o.write(x);
                        }
                        at += len;
                        continue;
                    }
                    None => record(bad("fused block of another type or length")),
                },
                Ok(None) => {}
                Err(e) => record(e),
            }
            par::fill_with(&mut chunk[at..at + len], filler);
            at += len;
        }
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Whether fusion is on: `XLAREF_FAST_FUSION=off` turns it off (to time
/// or debug the op-by-op path).
pub fn enabled_by_environment() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("XLAREF_FAST_FUSION").map_or(true, |v| !matches!(v.as_str(), "off" | "0" | "no")))
}
