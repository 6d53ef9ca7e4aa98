//! Ops that talk to the world: ReplicaId and the collectives, the RNG ops,
//! Infeed/Outfeed, CustomCall, Get/SetDimensionSize.

use super::emit::{flat_leaves, rebuild, At, FuncWriter, Leaf, Val};
use super::types::{channel_handle, i64_matrix, i64_vector, replica_groups, scalar};
use super::{Fail, Res};
use crate::ir::{ComputationId, RngAlgorithm};
use crate::types::{ElementType, Shape};

/// An MLIR string literal: printable ASCII as is, everything else (and `"`
/// and `\`) as `\XX` hex escapes.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for b in s.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\{b:02X}"));
        }
    }
    out.push('"');
    out
}

fn props(parts: Vec<Option<String>>) -> String {
    parts.into_iter().flatten().collect::<Vec<_>>().join(", ")
}

pub fn replica_id(w: &mut FuncWriter) -> Res<Val> {
    Ok(w.op1("stablehlo.replica_id", &[], "", &[], scalar(ElementType::U32)).val())
}

pub fn all_gather(w: &mut FuncWriter, at: &At, dim: i64, groups: &[Vec<i64>], channel: Option<i64>, operands: &[Val]) -> Res<Val> {
    let [x] = operands else { return Err(Fail::internal("AllGather takes one operand")) };
    let (x, a) = w.array(x)?;
    if a.dims.get(dim as usize) == Some(&0) {
        // StableHLO rejects gathering along an empty dimension; the result
        // is empty too, whatever the other replicas hold.
        let props = format!("value = dense<> : {}", super::types::tensor_type(at.shape()));
        return Ok(w.op1("stablehlo.constant", &[], &props, &[], at.shape().clone()).val());
    }
    let p = props(vec![
        Some(format!("all_gather_dim = {dim} : i64")),
        channel_handle(channel),
        Some(format!("replica_groups = {}", replica_groups(groups))),
    ]);
    Ok(w.op1("stablehlo.all_gather", &[x], &p, &[], at.shape().clone()).val())
}

/// The reduction region of AllReduce/ReduceScatter: the computation, or
/// (CrossReplicaSum) an add over `t`.
fn reduction(w: &mut FuncWriter, computation: Option<ComputationId>, t: ElementType) -> Res<String> {
    match computation {
        Some(c) => w.computation_region(c),
        None => w.region(&[scalar(t), scalar(t)], |w, args| Ok(vec![w.op1("stablehlo.add", &args, "", &[], scalar(t))])),
    }
}

fn element_type(l: &Leaf) -> Res<ElementType> {
    match &l.shape {
        Shape::Array(a) => Ok(a.element_type),
        other => Err(Fail::internal(format!("a collective of {other}"))),
    }
}

/// AllReduce and CrossReplicaSum (an AllReduce with an add). A tuple
/// operand is reduced array by array, one `all_reduce` each.
pub fn all_reduce(
    w: &mut FuncWriter,
    at: &At,
    computation: Option<ComputationId>,
    groups: &[Vec<i64>],
    channel: Option<i64>,
    operands: &[Val],
) -> Res<Val> {
    let [x] = operands else { return Err(Fail::internal("AllReduce takes one operand")) };
    let leaves = w.leaves(x)?;
    let p = props(vec![channel_handle(channel), Some(format!("replica_groups = {}", replica_groups(groups)))]);
    let mut results = Vec::with_capacity(leaves.len());
    for leaf in leaves {
        let region = reduction(w, computation, element_type(&leaf)?)?;
        let shape = leaf.shape.clone();
        results.push(w.op1("stablehlo.all_reduce", &[leaf], &p, &[region], shape));
    }
    Ok(rebuild(&at.shape().clone(), &mut results.into_iter()))
}

pub fn reduce_scatter(
    w: &mut FuncWriter,
    at: &At,
    computation: ComputationId,
    dim: i64,
    groups: &[Vec<i64>],
    channel: Option<i64>,
    operands: &[Val],
) -> Res<Val> {
    let [x] = operands else { return Err(Fail::internal("ReduceScatter takes one operand")) };
    let leaves = w.leaves(x)?;
    let shape = at.shape().clone();
    let out = flat_leaves(&shape);
    if out.len() != leaves.len() {
        return Err(Fail::internal("ReduceScatter result does not match its operand"));
    }
    let p = props(vec![
        channel_handle(channel),
        Some(format!("replica_groups = {}", replica_groups(groups))),
        Some(format!("scatter_dimension = {dim} : i64")),
    ]);
    let mut results = Vec::with_capacity(leaves.len());
    for (leaf, out) in leaves.into_iter().zip(out) {
        let region = reduction(w, Some(computation), element_type(&leaf)?)?;
        results.push(w.op1("stablehlo.reduce_scatter", &[leaf], &p, &[region], out));
    }
    Ok(rebuild(&shape, &mut results.into_iter()))
}

pub fn all_to_all(w: &mut FuncWriter, at: &At, split: i64, concat: i64, count: i64, groups: &[Vec<i64>], operands: &[Val]) -> Res<Val> {
    let [x] = operands else { return Err(Fail::internal("AllToAll takes one operand")) };
    let (x, _) = w.array(x)?;
    // Empty groups are one group of all replicas, whose number the split
    // count must be (StableHLO's verifier needs the group written out).
    let all: Vec<Vec<i64>> = vec![(0..count).collect()];
    let groups = if groups.is_empty() { &all[..] } else { groups };
    let p = format!(
        "concat_dimension = {concat} : i64, replica_groups = {}, split_count = {count} : i64, split_dimension = {split} : i64",
        replica_groups(groups)
    );
    Ok(w.op1("stablehlo.all_to_all", &[x], &p, &[], at.shape().clone()).val())
}

pub fn collective_permute(w: &mut FuncWriter, at: &At, pairs: &[(i64, i64)], channel: Option<i64>, operands: &[Val]) -> Res<Val> {
    let [x] = operands else { return Err(Fail::internal("CollectivePermute takes one operand")) };
    let (x, _) = w.array(x)?;
    let rows: Vec<Vec<i64>> = pairs.iter().map(|&(s, t)| vec![s, t]).collect();
    let p = props(vec![channel_handle(channel), Some(format!("source_target_pairs = {}", i64_matrix(&rows, 2)))]);
    Ok(w.op1("stablehlo.collective_permute", &[x], &p, &[], at.shape().clone()).val())
}

/// RngUniform(a, b, shape) / RngNormal(mu, sigma, shape): `stablehlo.rng`
/// with the result's dimensions as an i64 tensor.
pub fn rng(w: &mut FuncWriter, at: &At, distribution: &str, operands: &[Val]) -> Res<Val> {
    let [a, b] = operands else { return Err(Fail::internal("the Rng ops take two operands")) };
    let (a, _) = w.array(a)?;
    let (b, _) = w.array(b)?;
    let dims = at.array()?.dims.clone();
    let shape_props = format!("value = {}", i64_vector(&dims));
    let shape = w.op1("stablehlo.constant", &[], &shape_props, &[], Shape::array(ElementType::S64, vec![dims.len() as i64]));
    let p = format!("rng_distribution = #stablehlo<rng_distribution {distribution}>");
    Ok(w.op1("stablehlo.rng", &[a, b, shape], &p, &[], at.shape().clone()).val())
}

pub fn rng_bit_generator(w: &mut FuncWriter, at: &At, algorithm: RngAlgorithm, operands: &[Val]) -> Res<Val> {
    let [state] = operands else { return Err(Fail::internal("RngBitGenerator takes one operand")) };
    let (state, _) = w.array(state)?;
    let name = match algorithm {
        RngAlgorithm::Default => "DEFAULT",
        RngAlgorithm::ThreeFry => "THREE_FRY",
        RngAlgorithm::Philox => "PHILOX",
    };
    let shape = at.shape().clone();
    let p = format!("rng_algorithm = #stablehlo<rng_algorithm {name}>");
    let results = w.op("stablehlo.rng_bit_generator", &[state], &p, &[], &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}

/// The ordering token: the operand's, or a fresh `after_all` when the
/// instruction has none.
fn token(w: &mut FuncWriter, given: Option<&Val>) -> Res<Leaf> {
    match given {
        Some(t) => w.whole(t),
        None => Ok(w.op1("stablehlo.after_all", &[], "", &[], Shape::Token)),
    }
}

/// Infeed: `stablehlo.infeed` returns the data's arrays and a token; the
/// result is the data, or `(data, token)` when the instruction threads one.
pub fn infeed(w: &mut FuncWriter, at: &At, config: &str, operands: &[Val]) -> Res<Val> {
    let given = operands.first();
    let t = token(w, given)?;
    let shape = at.shape().clone();
    let data = match (&shape, given.is_some()) {
        (Shape::Tuple(parts), true) => parts.first().cloned().ok_or_else(|| Fail::internal("Infeed result"))?,
        _ => shape.clone(),
    };
    let mut types = flat_leaves(&data);
    if types.iter().any(|t| t.as_array().is_some_and(|a| a.is_dynamic())) {
        return Err(Fail::unsupported(format!(
            "stablehlo.infeed takes static shapes only; the infeed shape {data} has a dynamic dimension"
        )));
    }
    types.push(Shape::Token);
    let p = format!("infeed_config = {}", string(config));
    let mut results = w.op("stablehlo.infeed", &[t], &p, &[], &types);
    let token_out = results.pop().ok_or_else(|| Fail::internal("infeed has no token"))?;
    let value = rebuild(&data, &mut results.into_iter());
    Ok(if given.is_some() { Val::Tuple(vec![value, token_out.val()]) } else { value })
}

pub fn outfeed(w: &mut FuncWriter, config: &str, operands: &[Val]) -> Res<Val> {
    let Some((data, rest)) = operands.split_first() else { return Err(Fail::internal("Outfeed takes an operand")) };
    let mut leaves = w.leaves(data)?;
    leaves.push(token(w, rest.first())?);
    let p = format!("outfeed_config = {}", string(config));
    Ok(w.op1("stablehlo.outfeed", &leaves, &p, &[], Shape::Token).val())
}

/// CustomCall: the target by name, the opaque string as the backend config;
/// a tuple result is written as one result per top-level component.
pub fn custom_call(w: &mut FuncWriter, at: &At, target: &str, opaque: &str, operands: &[Val]) -> Res<Val> {
    let mut leaves = Vec::with_capacity(operands.len());
    for v in operands {
        leaves.push(w.whole(v)?);
    }
    let shape = at.shape().clone();
    let types = match &shape {
        Shape::Tuple(parts) => parts.clone(),
        other => vec![other.clone()],
    };
    let p = format!("api_version = 1 : i32, backend_config = {}, call_target_name = {}", string(opaque), string(target));
    let results = w.op("stablehlo.custom_call", &leaves, &p, &[], &types);
    Ok(match shape {
        Shape::Tuple(_) => Val::Tuple(results.into_iter().map(Leaf::val).collect()),
        _ => results.into_iter().next().map_or_else(|| Val::Tuple(vec![]), Leaf::val),
    })
}

pub fn get_dimension_size(w: &mut FuncWriter, at: &At, dimension: i64, operands: &[Val]) -> Res<Val> {
    let [x] = operands else { return Err(Fail::internal("GetDimensionSize takes one operand")) };
    let (x, _) = w.array(x)?;
    Ok(w.op1("stablehlo.get_dimension_size", &[x], &format!("dimension = {dimension} : i64"), &[], at.shape().clone()).val())
}

pub fn set_dimension_size(w: &mut FuncWriter, at: &At, dimension: i64, operands: &[Val]) -> Res<Val> {
    let [x, size] = operands else { return Err(Fail::internal("SetDimensionSize takes two operands")) };
    let (x, _) = w.array(x)?;
    let (size, _) = w.array(size)?;
    Ok(w.op1("stablehlo.set_dimension_size", &[x, size], &format!("dimension = {dimension} : i64"), &[], at.shape().clone()).val())
}
