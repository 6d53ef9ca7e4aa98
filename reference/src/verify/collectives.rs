//! Rules of ReplicaId, the collectives and Send/Recv.
//!
//! The verifier does not know how many replicas will run: rules that need
//! the count (replica ids in range, groups covering every replica, an
//! implicit group's size) are checked when the run starts
//! (`replicas::check_module`) and again by the engines at the op.

use super::rules::*;
use super::Ctx;
use crate::ir::{ComputationId, Op, ReplicaGroups};
use crate::types::{ArrayShape, ElementType, Shape};

declare_rules! {
    OPERAND_ARRAYS = "collectives.c1": "The operand of AllReduce, ReduceScatter and CrossReplicaSum is an \"Array or a non-empty tuple of arrays\".";
    TUPLE_ELEMENT_TYPES = "collectives.c2": "(XLA) The arrays of a tuple operand of AllReduce or ReduceScatter share one element type (one reduction computation applies to all).";
    REDUCTION_COMPUTATION = "collectives.c3": "(XLA) The reduction computation of AllReduce and ReduceScatter is (T[], T[]) -> T[] for the operand's element type T.";
    STATIC_SHAPES = "collectives.c4": "(xlaref) The collectives, Send and Recv take arrays of static shape (no dynamic dimensions).";
    NOT_A_COLLECTIVE = "collectives.c5": "(invariant) Only ReplicaId, the collectives, Send, Recv and their Done forms are dispatched to these rules.";

    SHARD_COUNT_NEEDED = "replica_groups.c1": "AllGather and ReduceScatter: \"shard_count is the size of each replica group. We need this in cases where replica_groups are empty\".";
    SAME_SIZE = "replica_groups.c2": "AllGather, AllToAll and ReduceScatter: \"When there are more than one replica groups, they all must be of the same size\".";
    SHARD_COUNT_IS_GROUP_SIZE = "replica_groups.c3": "AllGather and ReduceScatter: \"If replica_groups is not empty, shard_count must be equal to the size of each replica group\".";
    NON_NEGATIVE_IDS = "replica_groups.c4": "A replica id is \"an unsigned integer in the interval [0, N)\": non-negative (below N is checked when the run starts).";
    NON_EMPTY = "replica_groups.c5": "(XLA) Every replica group, when groups are given, has at least one replica.";
    NO_DUPLICATE_IDS = "replica_groups.c6": "(XLA) No replica id appears twice in replica_groups.";
    SHARD_COUNT_POSITIVE = "replica_groups.c7": "(XLA) shard_count, when given, is positive.";

    ALL_GATHER_DIM = "all_gather.c1": "(XLA) all_gather_dim is a dimension of the operand: in [0, n).";

    SCATTER_DIVISIBLE = "reduce_scatter.c1": "The output is \"the input shape with the scatter_dimension made shard_count times smaller\": shard_count divides its size.";
    SCATTER_DIMENSION = "reduce_scatter.c2": "(XLA) scatter_dimension is a dimension of every operand array: in [0, n).";

    SPLIT_DIVISIBLE = "all_to_all.c1": "\"The dimension size of the operand on the split_dimension is divisible by split_count\".";
    SPLIT_DIMENSION = "all_to_all.c2": "split_dimension is \"A value in the interval [0, n)\".";
    CONCAT_DIMENSION = "all_to_all.c3": "concat_dimension is \"A value in the interval [0, n)\".";
    SPLIT_COUNT_IS_GROUP_SIZE = "all_to_all.c4": "split_count: if replica_groups is not empty, \"this should be equal to the number of replicas in each group\".";
    SPLIT_COUNT_POSITIVE = "all_to_all.c5": "(XLA) split_count is positive.";

    UNIQUE_TARGETS = "collective_permute.c1": "\"Any two pairs should not have the same target replica id\".";
    UNIQUE_SOURCES = "collective_permute.c2": "Any two pairs \"should not have the same source replica id\".";
    PAIR_IDS_NON_NEGATIVE = "collective_permute.c3": "The replica ids of source_target_pairs are non-negative (a replica id is \"an unsigned integer in the interval [0, N)\").";

    SUM_ELEMENT_TYPE = "cross_replica_sum.c1": "CrossReplicaSum \"Performs AllReduce with a summation computation\": the arrays have an arithmetic element type (not pred).";

    SEND_OPERANDS = "send.c1": "(XLA) Send takes the data and, in HLO's form, an optional ordering token.";
    SEND_DONE_CONTEXT = "send_done.c1": "SendDone takes \"a context created by a Send instruction\": (data, u32[]) or, with a token, (data, u32[], token[]).";
    RECV_OPERANDS = "recv.c1": "(XLA) Recv takes no operand or, in HLO's form, one ordering token.";
    RECV_DONE_CONTEXT = "recv_done.c1": "RecvDone takes \"a context created by a Recv instruction\": (data, u32[]) or, with a token, (data, u32[], token[]).";
}

pub fn infer(op: &Op, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    match op {
        Op::ReplicaId => {
            operand_count(operands, 0)?;
            Ok(Shape::scalar(ElementType::U32))
        }
        Op::AllGather { all_gather_dim, shard_count, replica_groups, .. } => {
            all_gather(*all_gather_dim, *shard_count, replica_groups, operands)
        }
        Op::AllReduce { computation, replica_groups, .. } => all_reduce(*computation, replica_groups, operands, ctx),
        Op::ReduceScatter { computation, scatter_dimension, shard_count, replica_groups, .. } => {
            reduce_scatter(*computation, *scatter_dimension, *shard_count, replica_groups, operands, ctx)
        }
        Op::AllToAll { split_dimension, concat_dimension, split_count, replica_groups } => {
            all_to_all(*split_dimension, *concat_dimension, *split_count, replica_groups, operands)
        }
        Op::CollectivePermute { source_target_pairs, .. } => collective_permute(source_target_pairs, operands),
        Op::CrossReplicaSum { replica_groups } => cross_replica_sum(replica_groups, operands),
        Op::Send { .. } => send(operands),
        Op::SendDone { .. } => send_done(operands),
        Op::Recv { shape, .. } => recv(shape, operands),
        Op::RecvDone { .. } => recv_done(operands),
        // verify::infer dispatches only the ops listed above to this file.
        other => Err(broken(&NOT_A_COLLECTIVE, format!("{} is not a collective", other.name()))),
    }
}

/// `replica_groups` — document §AllGather/§AllToAll/§ReduceScatter: a list
/// of groups of replica ids; empty means one group of all replicas. When
/// given, every group is non-empty, ids are non-negative, no id appears
/// twice ([`replica_group_members`]) and all groups have the same size
/// (ReduceScatter: "When there are more than one replica groups, they all
/// must be of the same size"; `shard_count`/`split_count` is that size).
/// Returns the group size, if the groups are given.
pub fn replica_groups(groups: &ReplicaGroups) -> Check<Option<i64>> {
    replica_group_members(groups)?;
    let Some(first) = groups.first() else { return Ok(None) };
    let size = first.len();
    for (i, g) in groups.iter().enumerate() {
        if g.len() != size {
            return Err(broken(
                &SAME_SIZE,
                format!(
                    "replica_groups have different sizes ({} in group 0, {} in group {i}); all groups must have the same size",
                    size,
                    g.len()
                ),
            ));
        }
    }
    Ok(Some(size as i64))
}

/// `replica_groups` of AllReduce and CrossReplicaSum: every group non-empty,
/// ids non-negative, no id twice. Groups may differ in size (the document
/// only asks that they cover the replicas, checked when the replica count
/// is known: [`crate::replicas::check_module`]), e.g. `[[0, 1, 2, 3, 4, 5],
/// [6, 7]]` over 8 replicas.
pub fn replica_group_members(groups: &ReplicaGroups) -> Check {
    let mut seen: Vec<i64> = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        if g.is_empty() {
            return Err(broken(&NON_EMPTY, format!("replica_groups[{i}] is empty; every replica group needs at least one replica")));
        }
        for &id in g {
            if id < 0 {
                return Err(broken(&NON_NEGATIVE_IDS, format!("replica_groups[{i}] names replica {id}; replica ids are non-negative")));
            }
            if seen.contains(&id) {
                return Err(broken(&NO_DUPLICATE_IDS, format!("replica_groups names replica {id} twice (duplicate id)")));
            }
            seen.push(id);
        }
    }
    Ok(())
}

/// `shard_count` — "the size of each replica group. We need this in cases
/// where replica_groups are empty. If replica_groups is not empty,
/// shard_count must be equal to the size of each replica group."
fn shard_count(shard_count: Option<i64>, group_size: Option<i64>) -> Check<i64> {
    match (shard_count, group_size) {
        (Some(k), _) if k <= 0 => Err(broken(&SHARD_COUNT_POSITIVE, format!("shard_count is {k}; it must be positive"))),
        (Some(k), Some(g)) if k != g => {
            Err(broken(&SHARD_COUNT_IS_GROUP_SIZE, format!("shard_count is {k}, but the replica groups have size {g}; they must be equal")))
        }
        (Some(k), _) => Ok(k),
        (None, Some(g)) => Ok(g),
        (None, None) => {
            Err(broken(&SHARD_COUNT_NEEDED, "shard_count is needed when replica_groups is empty (it is the size of the one group)"))
        }
    }
}

/// Collectives take arrays of static shape.
fn static_array<'a>(shape: &'a Shape, what: &str) -> Check<&'a ArrayShape> {
    let a = array(shape, what)?;
    if a.is_dynamic() {
        return Err(broken(&STATIC_SHAPES, format!("{what} has dynamic dimensions ({shape}); collectives take static shapes")));
    }
    Ok(a)
}

/// An array or a non-empty tuple of arrays (AllReduce, ReduceScatter,
/// CrossReplicaSum), as its arrays.
fn arrays_or_tuple(shape: &Shape) -> Check<Vec<&ArrayShape>> {
    match shape {
        Shape::Array(_) => Ok(vec![static_array(shape, "operand")?]),
        Shape::Tuple(t) if !t.is_empty() => {
            t.iter().enumerate().map(|(i, s)| static_array(s, &format!("operand tuple element {i}"))).collect()
        }
        _ => Err(broken(&OPERAND_ARRAYS, format!("operand must be an array or a non-empty tuple of arrays, got {shape}"))),
    }
}

/// AllGather — document §AllGather: the output is the operand with
/// `all_gather_dim` made `shard_count` times larger.
pub fn all_gather(dim: i64, shards: Option<i64>, groups: &ReplicaGroups, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = static_array(operands[0], "operand")?;
    dims_in_range(&ALL_GATHER_DIM, &[dim], a.rank(), "all_gather_dim")?;
    let k = shard_count(shards, replica_groups(groups)?)?;
    let mut dims = a.dims.clone();
    let d = dim as usize;
    dims[d] = dims[d].checked_mul(k).ok_or_else(|| broken(&SIZE_OVERFLOW, "the gathered dimension overflows"))?;
    Ok(Shape::array(a.element_type, dims))
}

/// The reduction computation of AllReduce/ReduceScatter: `(T[], T[]) -> T[]`
/// where every array of the operand has element type T (a tuple's arrays
/// are each reduced with the same computation, so they share T).
fn check_reduction(computation: ComputationId, arrays: &[&ArrayShape], ctx: &Ctx) -> Check {
    let t = arrays[0].element_type;
    if let Some((i, other)) = arrays.iter().enumerate().find(|(_, a)| a.element_type != t) {
        return Err(broken(
            &TUPLE_ELEMENT_TYPES,
            format!(
            "operand tuple element {i} has element type {}, element 0 has {t}; one reduction computation applies to all, so they must share the type",
            other.element_type
        ),
        ));
    }
    let sig = ctx.signature(computation)?;
    let name = ctx.computation_name(computation);
    let s = Shape::scalar(t);
    if sig.params.len() != 2 || sig.params.iter().any(|p| !p.compatible(&s)) || !sig.result.compatible(&s) {
        let ps: Vec<String> = sig.params.iter().map(|p| p.to_string()).collect();
        return Err(broken(
            &REDUCTION_COMPUTATION,
            format!(
                "computation `{name}` is ({}) -> {}; the reduction computation must be ({t}[], {t}[]) -> {t}[]",
                ps.join(", "),
                sig.result
            ),
        ));
    }
    Ok(())
}

/// AllReduce — document §AllReduce: the output shape is the operand's (an
/// array or a non-empty tuple of arrays).
pub fn all_reduce(computation: ComputationId, groups: &ReplicaGroups, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    operand_count(operands, 1)?;
    let arrays = arrays_or_tuple(operands[0])?;
    replica_group_members(groups)?;
    check_reduction(computation, &arrays, ctx)?;
    Ok(operands[0].clone())
}

/// ReduceScatter — document §ReduceScatter: the output is the operand with
/// `scatter_dimension` made `shard_count` times smaller (it must divide).
pub fn reduce_scatter(
    computation: ComputationId,
    dim: i64,
    shards: Option<i64>,
    groups: &ReplicaGroups,
    operands: &[&Shape],
    ctx: &Ctx,
) -> Check<Shape> {
    operand_count(operands, 1)?;
    let arrays = arrays_or_tuple(operands[0])?;
    let k = shard_count(shards, replica_groups(groups)?)?;
    check_reduction(computation, &arrays, ctx)?;
    let mut out = Vec::with_capacity(arrays.len());
    for a in &arrays {
        dims_in_range(&SCATTER_DIMENSION, &[dim], a.rank(), "scatter_dimension")?;
        let n = a.dims[dim as usize];
        if n % k != 0 {
            return Err(broken(&SCATTER_DIVISIBLE, format!("scatter_dimension {dim} has size {n}, not divisible by shard_count {k}")));
        }
        let mut dims = a.dims.clone();
        dims[dim as usize] = n / k;
        out.push(Shape::array(a.element_type, dims));
    }
    Ok(match operands[0] {
        Shape::Tuple(_) => Shape::Tuple(out),
        _ => out.remove(0),
    })
}

/// AllToAll — document §AllToAll: the operand (not a tuple) is split into
/// `split_count` blocks along `split_dimension` (whose size it must divide)
/// and the received blocks are concatenated along `concat_dimension`; with
/// replica groups, `split_count` equals their size.
pub fn all_to_all(split: i64, concat: i64, count: i64, groups: &ReplicaGroups, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = static_array(operands[0], "operand")?;
    dims_in_range(&SPLIT_DIMENSION, &[split], a.rank(), "split_dimension")?;
    dims_in_range(&CONCAT_DIMENSION, &[concat], a.rank(), "concat_dimension")?;
    if count <= 0 {
        return Err(broken(&SPLIT_COUNT_POSITIVE, format!("split_count is {count}; it must be positive")));
    }
    if let Some(g) = replica_groups(groups)? {
        if g != count {
            return Err(broken(
                &SPLIT_COUNT_IS_GROUP_SIZE,
                format!("split_count is {count}, but the replica groups have size {g}; they must be equal"),
            ));
        }
    }
    let n = a.dims[split as usize];
    if n % count != 0 {
        return Err(broken(&SPLIT_DIVISIBLE, format!("split_dimension {split} has size {n}, not divisible by split_count {count}")));
    }
    let mut dims = a.dims.clone();
    dims[split as usize] /= count;
    dims[concat as usize] =
        dims[concat as usize].checked_mul(count).ok_or_else(|| broken(&SIZE_OVERFLOW, "the concatenated dimension overflows"))?;
    Ok(Shape::array(a.element_type, dims))
}

/// CollectivePermute — document §CollectivePermute: "Any two pairs should
/// not have the same target replica id, and they should not have the same
/// source replica id." The output has the operand's shape.
pub fn collective_permute(pairs: &[(i64, i64)], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    static_array(operands[0], "operand")?;
    for (i, &(s, t)) in pairs.iter().enumerate() {
        if s < 0 || t < 0 {
            return Err(broken(&PAIR_IDS_NON_NEGATIVE, format!("source_target_pairs[{i}] is [{s}, {t}]; replica ids are non-negative")));
        }
        if pairs[..i].iter().any(|p| p.0 == s) {
            return Err(broken(&UNIQUE_SOURCES, format!("source_target_pairs has source {s} twice (duplicate source)")));
        }
        if pairs[..i].iter().any(|p| p.1 == t) {
            return Err(broken(&UNIQUE_TARGETS, format!("source_target_pairs has target {t} twice (duplicate target)")));
        }
    }
    Ok(operands[0].clone())
}

/// CrossReplicaSum — document §CrossReplicaSum: AllReduce with a summation,
/// so the arrays have an arithmetic element type.
pub fn cross_replica_sum(groups: &ReplicaGroups, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    for a in arrays_or_tuple(operands[0])? {
        element_type_is(&SUM_ELEMENT_TYPE, a.element_type, a.element_type.is_arithmetic(), "operand", "an arithmetic type (not pred)")?;
    }
    replica_group_members(groups)?;
    Ok(operands[0].clone())
}

/// An optional trailing token operand (the HLO form threads one).
fn token_operand(rule: &'static Rule, operands: &[&Shape], at: usize) -> Check<bool> {
    match operands.get(at) {
        None => Ok(false),
        Some(Shape::Token) => Ok(true),
        Some(s) => Err(broken(rule, format!("operand {at} must be a token, got {s}"))),
    }
}

/// The context of a Send or Recv: `(data, u32[])`, plus a token when the
/// instruction was given one.
fn context(data: Shape, token: bool) -> Shape {
    let mut parts = vec![data, Shape::scalar(ElementType::U32)];
    if token {
        parts.push(Shape::Token);
    }
    Shape::Tuple(parts)
}

/// A context operand: its data shape and whether it carries a token.
fn context_parts(rule: &'static Rule, shape: &Shape, of: &str) -> Check<(Shape, bool)> {
    let wanted = || format!("operand must be the context of a {of}: (data, u32[]) or (data, u32[], token[]); got {shape}");
    let parts = shape.as_tuple().ok_or_else(|| broken(rule, wanted()))?;
    let u32_scalar = Shape::scalar(ElementType::U32);
    match parts {
        [data, id] if id.compatible(&u32_scalar) && data.is_array() => Ok((data.clone(), false)),
        [data, id, Shape::Token] if id.compatible(&u32_scalar) && data.is_array() => Ok((data.clone(), true)),
        _ => Err(broken(rule, wanted())),
    }
}

/// Send — document §Send: `Send(operand, channel_id)` returns a context, "a
/// tuple of {operand (shape), request identifier (U32)}"; a trailing token
/// operand (HLO) adds a token to the context.
pub fn send(operands: &[&Shape]) -> Check<Shape> {
    min_operands(operands, 1)?;
    if operands.len() > 2 {
        return Err(broken(&SEND_OPERANDS, format!("takes the data and an optional token, got {} operands", operands.len())));
    }
    let data = static_array(operands[0], "operand")?;
    let token = token_operand(&SEND_OPERANDS, operands, 1)?;
    Ok(context(Shape::Array(data.clone()), token))
}

/// SendDone — document §SendDone: takes a Send context; "does not return
/// any data" (its result is a token).
pub fn send_done(operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    context_parts(&SEND_DONE_CONTEXT, operands[0], "Send")?;
    Ok(Shape::Token)
}

/// Recv — document §Recv: `Recv(shape, channel_id)` returns a context, "a
/// tuple of {receive buffer (shape), request identifier (U32)}"; an optional
/// token operand (HLO) adds a token.
pub fn recv(shape: &Shape, operands: &[&Shape]) -> Check<Shape> {
    if operands.len() > 1 {
        return Err(broken(&RECV_OPERANDS, format!("takes an optional token, got {} operands", operands.len())));
    }
    let data = static_array(shape, "shape")?;
    let token = token_operand(&RECV_OPERANDS, operands, 0)?;
    Ok(context(Shape::Array(data.clone()), token))
}

/// RecvDone — document §RecvDone: takes a Recv context and returns the
/// received data (with a token after it when the context carries one).
pub fn recv_done(operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let (data, token) = context_parts(&RECV_DONE_CONTEXT, operands[0], "Recv")?;
    Ok(if token { Shape::Tuple(vec![data, Shape::Token]) } else { data })
}
