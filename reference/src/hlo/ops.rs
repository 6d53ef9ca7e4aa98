//! HLO opcodes mapped onto the document's ops (xla-json/1 instructions).
//! Each HLO attribute becomes the document's argument; what carries no
//! meaning for the result (layouts, metadata, sharding, precision configs,
//! frontend attributes) is ignored.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::literal::{self, array_shape, int, int_list, int_lists, padding_config, slice, tuple_elements, window};
use super::parse::{Instr, Mapped};
use super::HloError;
use crate::types::ElementType;

type R<T> = Result<T, HloError>;

pub(crate) const UNARY: [(&str, &str); 27] = [
    ("abs", "Abs"),
    ("ceil", "Ceil"),
    ("floor", "Floor"),
    ("cosine", "Cos"),
    ("sine", "Sin"),
    ("tan", "Tan"),
    ("exponential", "Exp"),
    ("exponential-minus-one", "Expm1"),
    ("log", "Log"),
    ("log-plus-one", "Log1p"),
    ("logistic", "Logistic"),
    ("negate", "Neg"),
    ("not", "Not"),
    ("sign", "Sign"),
    ("sqrt", "Sqrt"),
    ("rsqrt", "Rsqrt"),
    ("cbrt", "Cbrt"),
    ("tanh", "Tanh"),
    ("round-nearest-afz", "Round"),
    ("round-nearest-even", "RoundNearestEven"),
    ("is-finite", "IsFinite"),
    ("real", "Real"),
    ("imag", "Imag"),
    ("popcnt", "PopulationCount"),
    ("count-leading-zeros", "Clz"),
    ("erf", "Erf"),
    ("conj", "Conj"),
];

pub(crate) const BINARY: [(&str, &str); 16] = [
    ("add", "Add"),
    ("subtract", "Sub"),
    ("multiply", "Mul"),
    ("divide", "Div"),
    ("remainder", "Rem"),
    ("maximum", "Max"),
    ("minimum", "Min"),
    ("power", "Pow"),
    ("atan2", "Atan2"),
    ("and", "And"),
    ("or", "Or"),
    ("xor", "Xor"),
    ("shift-left", "ShiftLeft"),
    ("shift-right-arithmetic", "ShiftRightArithmetic"),
    ("shift-right-logical", "ShiftRightLogical"),
    ("complex", "Complex"),
];

/// Ops whose operands and result pass through unchanged.
const SIMPLE: [(&str, &str); 9] = [
    ("select", "Select"),
    ("clamp", "Clamp"),
    ("tuple", "Tuple"),
    ("dynamic-update-slice", "DynamicUpdateSlice"),
    ("after-all", "AfterAll"),
    ("opt-barrier", "OptimizationBarrier"),
    ("replica-id", "ReplicaId"),
    // A single-partition run: the partition id is the replica's.
    ("partition-id", "ReplicaId"),
    // `copy` changes only the layout, which the document does not have.
    ("copy", "OptimizationBarrier"),
];

/// The JSON instructions for one HLO instruction (several for a fusion or
/// a LAPACK custom call).
pub fn map(instr: &Instr, shapes: &HashMap<String, String>, done: &HashMap<String, Mapped>) -> R<Vec<Value>> {
    let op = instr.opcode;
    let mut out = Out::new(instr);
    if let Some((_, name)) = UNARY.iter().chain(BINARY.iter()).chain(SIMPLE.iter()).find(|(h, _)| *h == op) {
        return Ok(vec![out.op(name)]);
    }
    let v = match op {
        "constant" => {
            let mut payload = instr.payload.clone().ok_or_else(|| instr.error("constant needs a literal"))?;
            let value = literal::literal(&mut payload, &instr.shape)?;
            payload.expect(")")?;
            out.set("shape", json!(instr.shape)).set("literal", value).op("Constant")
        }
        "compare" => {
            let direction = instr.attr("direction").ok_or_else(|| instr.error("compare needs direction="))?;
            out.set("comparison_direction", json!(direction));
            if instr.attr("type") == Some("TOTALORDER") {
                out.set("comparison_type", json!("TOTALORDER"));
            }
            out.op("Compare")
        }
        "broadcast" => {
            let dims = result_dims(instr)?;
            let b = ints(instr, "dimensions")?;
            out.set("out_dim_size", json!(dims)).set("broadcast_dimensions", json!(b)).op("BroadcastInDim")
        }
        "reshape" => out.set("new_sizes", json!(result_dims(instr)?)).op("Reshape"),
        "bitcast" => bitcast(instr, shapes, out)?,
        "transpose" => out.set("permutation", json!(ints(instr, "dimensions")?)).op("Transpose"),
        "reverse" => out.set("dimensions", json!(ints(instr, "dimensions")?)).op("Rev"),
        "slice" => {
            let raw = instr.attr("slice").ok_or_else(|| instr.error("slice needs slice="))?;
            let (s, l, st) = slice(&instr.at, raw)?;
            out.set("start_indices", json!(s)).set("limit_indices", json!(l)).set("strides", json!(st)).op("Slice")
        }
        "concatenate" => out.set("dimension", json!(one_int(instr, "dimensions")?)).op("ConcatInDim"),
        "pad" => {
            let raw = instr.attr("padding").ok_or_else(|| instr.error("pad needs padding="))?;
            out.set("padding_config", padding_config(&instr.at, raw)?).op("Pad")
        }
        "iota" => out.set("shape", json!(instr.shape)).set("iota_dimension", json!(one_int(instr, "iota_dimension")?)).op("Iota"),
        "convert" => out.set("new_element_type", json!(result_type(instr)?)).op("ConvertElementType"),
        "bitcast-convert" => out.set("new_element_type", json!(result_type(instr)?)).op("BitcastConvertType"),
        "reduce-precision" => {
            let e = one_int(instr, "exponent_bits")?;
            let m = one_int(instr, "mantissa_bits")?;
            out.set("exponent_bits", json!(e)).set("mantissa_bits", json!(m)).op("ReducePrecision")
        }
        "get-tuple-element" => out.set("index", json!(one_int(instr, "index")?)).op("GetTupleElement"),
        "dynamic-slice" => out.set("slice_sizes", json!(ints(instr, "dynamic_slice_sizes")?)).op("DynamicSlice"),
        "gather" => {
            for key in [
                "offset_dims",
                "collapsed_slice_dims",
                "start_index_map",
                "slice_sizes",
                "operand_batching_dims",
                "start_indices_batching_dims",
            ] {
                copy_ints(instr, &mut out, key, key)?;
            }
            out.set("index_vector_dim", json!(one_int(instr, "index_vector_dim")?));
            copy_bool(instr, &mut out, "indices_are_sorted");
            out.op("Gather")
        }
        "scatter" => {
            for key in [
                "update_window_dims",
                "inserted_window_dims",
                "scatter_dims_to_operand_dims",
                "input_batching_dims",
                "scatter_indices_batching_dims",
            ] {
                copy_ints(instr, &mut out, key, key)?;
            }
            out.set("index_vector_dim", json!(one_int(instr, "index_vector_dim")?));
            copy_bool(instr, &mut out, "indices_are_sorted");
            copy_bool(instr, &mut out, "unique_indices");
            out.set("update_computation", computation(instr, "to_apply")?).op("Scatter")
        }
        "reduce" => {
            out.set("dimensions", json!(ints(instr, "dimensions")?)).set("computation", computation(instr, "to_apply")?).op("Reduce")
        }
        "reduce-window" => {
            windowed(instr, &mut out, true)?;
            out.set("computation", computation(instr, "to_apply")?).op("ReduceWindow")
        }
        "select-and-scatter" => {
            windowed(instr, &mut out, false)?;
            out.set("select", computation(instr, "select")?).set("scatter", computation(instr, "scatter")?).op("SelectAndScatter")
        }
        "map" => out.set("computation", computation(instr, "to_apply")?).op("Map"),
        "sort" => {
            out.set("dimension", json!(one_int(instr, "dimensions")?)).set("comparator", computation(instr, "to_apply")?);
            copy_bool(instr, &mut out, "is_stable");
            out.op("Sort")
        }
        "topk" => {
            out.set("k", json!(one_int(instr, "k")?));
            copy_bool(instr, &mut out, "largest");
            out.op("TopK")
        }
        "dot" => dot(instr, shapes, out)?,
        "convolution" => convolution(instr, shapes, out)?,
        "fft" => {
            let t = instr.attr("fft_type").ok_or_else(|| instr.error("fft needs fft_type="))?;
            out.set("fft_type", json!(t)).set("fft_length", json!(ints(instr, "fft_length")?)).op("Fft")
        }
        "cholesky" => {
            copy_bool(instr, &mut out, "lower");
            out.op("Cholesky")
        }
        "triangular-solve" => {
            for key in ["left_side", "lower", "unit_diagonal"] {
                copy_bool(instr, &mut out, key);
            }
            out.set("transpose_a", json!(instr.attr("transpose_a").unwrap_or("NO_TRANSPOSE"))).op("TriangularSolve")
        }
        "batch-norm-training" | "batch-norm-inference" | "batch-norm-grad" => {
            let eps: f64 = instr.attr("epsilon").and_then(|e| e.parse().ok()).ok_or_else(|| instr.error("batch norm needs epsilon="))?;
            out.set("epsilon", json!(eps)).set("feature_index", json!(one_int(instr, "feature_index")?));
            out.op(match op {
                "batch-norm-training" => "BatchNormTraining",
                "batch-norm-inference" => "BatchNormInference",
                _ => "BatchNormGrad",
            })
        }
        "call" => out.set("computation", computation(instr, "to_apply")?).op("Call"),
        "while" => out.set("condition", computation(instr, "condition")?).set("body", computation(instr, "body")?).op("While"),
        "conditional" => conditional(instr, out)?,
        "fusion" => return fusion(instr, done),
        "custom-call" => return super::ops_custom::custom_call(instr, out),
        "all-reduce" | "reduce-scatter" | "all-gather" | "all-to-all" | "collective-permute" => collective(instr, out)?,
        "rng-bit-generator" => {
            let algorithm = match instr.attr("algorithm").unwrap_or("rng_default") {
                "rng_three_fry" => "THREE_FRY",
                "rng_philox" => "PHILOX",
                "rng_default" => "DEFAULT",
                other => return Err(instr.error(format!("unknown rng-bit-generator algorithm `{other}`"))),
            };
            // HLO gives the result tuple `(state, output)`; the op's `shape`
            // attribute is the output's.
            let output = match crate::types::Shape::parse(&instr.shape) {
                Ok(crate::types::Shape::Tuple(parts)) if parts.len() == 2 => parts[1].to_string(),
                _ => return Err(instr.error(format!("rng-bit-generator's shape {} is not a (state, output) tuple", instr.shape))),
            };
            out.set("algorithm", json!(algorithm)).set("shape", json!(output)).op("RngBitGenerator")
        }
        "rng" => {
            let name = match instr.attr("distribution") {
                Some("rng_uniform") => "RngUniform",
                Some("rng_normal") => "RngNormal",
                other => return Err(instr.error(format!("unknown rng distribution `{}`", other.unwrap_or("")))),
            };
            out.set("shape", json!(instr.shape)).op(name)
        }
        "get-dimension-size" => out.set("dimension", json!(one_int(instr, "dimensions")?)).op("GetDimensionSize"),
        "set-dimension-size" => out.set("dimension", json!(one_int(instr, "dimensions")?)).op("SetDimensionSize"),
        "infeed" => {
            let data = tuple_elements(&instr.shape).and_then(|t| t.first().map(|s| s.to_string()));
            let data = data.ok_or_else(|| instr.error("infeed's shape is (data, token[])"))?;
            out.set("shape", json!(data)).op("Infeed")
        }
        "outfeed" => out.op("Outfeed"),
        other => return Err(instr.error(format!("opcode `{other}` is not an op of the document (or not supported by the importer)"))),
    };
    Ok(vec![v])
}

/// An instruction being written.
pub struct Out {
    map: Map<String, Value>,
}

impl Out {
    pub fn new(instr: &Instr) -> Self {
        let mut map = Map::new();
        map.insert("name".into(), json!(instr.name));
        map.insert("operands".into(), json!(instr.operands));
        map.insert("shape".into(), json!(instr.shape));
        Out { map }
    }

    pub fn set(&mut self, key: &str, value: Value) -> &mut Self {
        self.map.insert(key.into(), value);
        self
    }

    pub fn op(&mut self, name: &str) -> Value {
        let mut map = std::mem::take(&mut self.map);
        map.insert("op".into(), json!(name));
        Value::Object(map)
    }
}

pub fn result_dims(instr: &Instr) -> R<Vec<i64>> {
    array_shape(&instr.shape).map(|(_, d)| d).ok_or_else(|| instr.error(format!("`{}` is not an array shape", instr.shape)))
}

pub fn result_type(instr: &Instr) -> R<String> {
    array_shape(&instr.shape).map(|(t, _)| t.to_string()).ok_or_else(|| instr.error(format!("`{}` is not an array shape", instr.shape)))
}

pub fn ints(instr: &Instr, key: &str) -> R<Vec<i64>> {
    int_list(&instr.at, instr.attr(key).unwrap_or("{}"))
}

fn one_int(instr: &Instr, key: &str) -> R<i64> {
    let raw = instr.attr(key).ok_or_else(|| instr.error(format!("{} needs {key}=", instr.opcode)))?;
    match int_list(&instr.at, raw)?[..] {
        [d] => Ok(d),
        _ => Err(instr.error(format!("{key}={raw} is not one integer"))),
    }
}

fn copy_ints(instr: &Instr, out: &mut Out, from: &str, to: &str) -> R<()> {
    if let Some(raw) = instr.attr(from) {
        out.set(to, json!(int_list(&instr.at, raw)?));
    }
    Ok(())
}

pub fn copy_bool(instr: &Instr, out: &mut Out, key: &str) {
    if let Some(v) = instr.attr(key) {
        out.set(key, json!(v == "true"));
    }
}

fn computation(instr: &Instr, key: &str) -> R<Value> {
    let name = instr.attr(key).ok_or_else(|| instr.error(format!("{} needs {key}=", instr.opcode)))?;
    Ok(json!(name.trim_start_matches('%')))
}

fn element_type_of(shapes: &HashMap<String, String>, name: &str) -> Option<String> {
    shapes.get(name).and_then(|s| array_shape(s)).map(|(t, _)| t.to_string())
}

/// A bitcast that keeps the element type is a reshape. One that changes
/// it between types of the same width and keeps the dimensions is a
/// BitcastConvertType: optimized HLO has them (an f32 → s32 `bitcast` in
/// sort comparators), where XLA's algebraic simplifier turned a
/// `bitcast-convert` into a `bitcast`; that rewrite keeps the layout, so each
/// element's bits stay in place. Any other is a layout-dependent
/// reinterpretation the document has no op for.
fn bitcast(instr: &Instr, shapes: &HashMap<String, String>, mut out: Out) -> R<Value> {
    let from = instr.operands.first().and_then(|o| shapes.get(o)).and_then(|s| array_shape(s));
    let to = result_type(instr)?;
    let dims = result_dims(instr)?;
    match from {
        Some((t, _)) if t == to => Ok(out.set("new_sizes", json!(dims)).op("Reshape")),
        Some((t, d)) if d == dims && same_width(t, &to) => Ok(out.set("new_element_type", json!(to)).op("BitcastConvertType")),
        _ => {
            Err(instr.error("a bitcast that changes the element type and the dimensions, or the width, depends on layouts; not supported"))
        }
    }
}

fn same_width(a: &str, b: &str) -> bool {
    match (ElementType::from_name(a), ElementType::from_name(b)) {
        (Some(a), Some(b)) => a.bit_width() == b.bit_width(),
        _ => false,
    }
}

/// `preferred_element_type` when the result's type is not the operands'.
fn preferred(instr: &Instr, shapes: &HashMap<String, String>, out: &mut Out) -> R<()> {
    let result = result_type(instr)?;
    let lhs = instr.operands.first().and_then(|o| element_type_of(shapes, o));
    if lhs.is_some_and(|l| l != result) {
        out.set("preferred_element_type", json!(result));
    }
    Ok(())
}

fn dot(instr: &Instr, shapes: &HashMap<String, String>, mut out: Out) -> R<Value> {
    let dims = json!({
        "lhs_contracting_dimensions": ints(instr, "lhs_contracting_dims")?,
        "rhs_contracting_dimensions": ints(instr, "rhs_contracting_dims")?,
        "lhs_batch_dimensions": ints(instr, "lhs_batch_dims")?,
        "rhs_batch_dimensions": ints(instr, "rhs_batch_dims")?,
    });
    preferred(instr, shapes, &mut out)?;
    Ok(out.set("dimension_numbers", dims).op("DotGeneral"))
}

fn convolution(instr: &Instr, shapes: &HashMap<String, String>, mut out: Out) -> R<Value> {
    let w = window(&instr.at, instr.attr("window").unwrap_or("{}"))?;
    if let Some(labels) = instr.attr("dim_labels") {
        out.set("dimension_numbers", json!(labels));
    }
    let pad: Vec<Value> = w.pad.iter().map(|(l, h)| json!([l, h])).collect();
    out.set("window_strides", json!(w.stride))
        .set("padding", Value::Array(pad))
        .set("lhs_dilation", json!(w.lhs_dilate))
        .set("rhs_dilation", json!(w.rhs_dilate));
    for key in ["feature_group_count", "batch_group_count"] {
        if let Some(v) = instr.attr(key) {
            out.set(key, json!(int(&instr.at, v)?));
        }
    }
    preferred(instr, shapes, &mut out)?;
    Ok(out.op("ConvWithGeneralPadding"))
}

fn windowed(instr: &Instr, out: &mut Out, dilations: bool) -> R<()> {
    let w = window(&instr.at, instr.attr("window").ok_or_else(|| instr.error(format!("{} needs window=", instr.opcode)))?)?;
    let pad: Vec<Value> = w.pad.iter().map(|(l, h)| json!([l, h])).collect();
    out.set("window_dimensions", json!(w.size)).set("window_strides", json!(w.stride)).set("padding", Value::Array(pad));
    if dilations {
        out.set("base_dilations", json!(w.lhs_dilate)).set("window_dilations", json!(w.rhs_dilate));
    } else if w.lhs_dilate.iter().chain(&w.rhs_dilate).any(|&d| d != 1) {
        // Dropping them would run a different program (SelectAndScatter
        // has no dilations: docs/rules.md select_and_scatter.c6).
        return Err(instr.error(format!("{} has no dilations: the window's lhs_dilate and rhs_dilate must be 1", instr.opcode)));
    }
    Ok(())
}

fn conditional(instr: &Instr, mut out: Out) -> R<Value> {
    if let Some(raw) = instr.attr("branch_computations") {
        let names: Vec<&str> =
            raw.trim_start_matches('{').trim_end_matches('}').split(',').map(|s| s.trim().trim_start_matches('%')).collect();
        return Ok(out.set("branch_computations", json!(names)).op("Conditional"));
    }
    out.set("true_computation", computation(instr, "true_computation")?).set("false_computation", computation(instr, "false_computation")?);
    Ok(out.op("Conditional"))
}

fn collective(instr: &Instr, mut out: Out) -> R<Value> {
    if let Some(raw) = instr.attr("replica_groups") {
        out.set("replica_groups", json!(int_lists(&instr.at, raw)?));
    }
    if let Some(id) = instr.attr("channel_id") {
        out.set("channel_id", json!(int(&instr.at, id)?));
    }
    Ok(match instr.opcode {
        "all-reduce" => out.set("computation", computation(instr, "to_apply")?).op("AllReduce"),
        "reduce-scatter" => out
            .set("scatter_dimension", json!(one_int(instr, "dimensions")?))
            .set("computation", computation(instr, "to_apply")?)
            .op("ReduceScatter"),
        "all-gather" => out.set("all_gather_dim", json!(one_int(instr, "dimensions")?)).op("AllGather"),
        "all-to-all" => {
            let d = one_int(instr, "dimensions")?;
            let groups = int_lists(&instr.at, instr.attr("replica_groups").unwrap_or("{}"))?;
            let count =
                groups.first().map(Vec::len).ok_or_else(|| instr.error("all-to-all needs replica_groups= to know its split count"))?;
            out.set("split_dimension", json!(d)).set("concat_dimension", json!(d)).set("split_count", json!(count)).op("AllToAll")
        }
        _ => {
            let raw = instr.attr("source_target_pairs").unwrap_or("{}");
            out.set("source_target_pairs", json!(int_lists(&instr.at, raw)?)).op("CollectivePermute")
        }
    })
}

/// A fusion's computation instantiated in place: its parameters become the
/// fusion's operands, its other instructions are renamed `fusion/inner`,
/// and its root takes the fusion's name.
fn fusion(instr: &Instr, done: &HashMap<String, Mapped>) -> R<Vec<Value>> {
    let callee = instr.attr("calls").ok_or_else(|| instr.error("fusion needs calls="))?.trim_start_matches('%');
    let m = done.get(callee).ok_or_else(|| instr.error(format!("fusion calls `{callee}`, which is not defined before it")))?;
    let mut rename: HashMap<&str, String> = HashMap::new();
    for (number, name, _) in &m.params {
        let operand = instr.operands.get(*number).ok_or_else(|| instr.error(format!("fusion has no operand {number}")))?;
        rename.insert(name, operand.clone());
    }
    let mut out = Vec::with_capacity(m.instructions.len());
    for inner in &m.instructions {
        let name = inner.get("name").and_then(Value::as_str).unwrap_or_default();
        let new_name = if name == m.root { instr.name.clone() } else { format!("{}/{name}", instr.name) };
        rename.insert(name, new_name.clone());
        let mut inner = inner.clone();
        if let Some(obj) = inner.as_object_mut() {
            obj.insert("name".into(), json!(new_name));
            if let Some(Value::Array(ops)) = obj.get_mut("operands") {
                for o in ops.iter_mut() {
                    if let Some(n) = o.as_str().and_then(|n| rename.get(n)) {
                        *o = json!(n);
                    }
                }
            }
        }
        out.push(inner);
    }
    if let Some(p) = m.params.iter().find(|(_, name, _)| *name == m.root) {
        // The fused computation returns one of its parameters.
        let mut o = Out::new(instr);
        o.set("operands", json!([instr.operands.get(p.0)]));
        out.push(o.op("OptimizationBarrier"));
    }
    Ok(out)
}
