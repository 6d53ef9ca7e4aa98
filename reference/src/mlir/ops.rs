//! StableHLO and CHLO ops mapped onto the document's ops (xla-json/1
//! instructions); docs/stablehlo.md has the table. Ops with regions are in
//! `ops_region.rs`; the `check` dialect in `checks.rs`.

use serde_json::{json, Map, Value};

use super::attr::Attr;
use super::dense::{self, Dense};
use super::func::{operands, Ctx, Val};
use super::syntax::{Op, R};
use super::types::Ty;
use super::{checks, custom, ops_region, quote};

/// StableHLO/CHLO element-wise unary ops and the document's names.
const UNARY: [(&str, &str); 45] = [
    ("stablehlo.abs", "Abs"),
    ("stablehlo.cbrt", "Cbrt"),
    ("stablehlo.ceil", "Ceil"),
    ("stablehlo.count_leading_zeros", "Clz"),
    ("stablehlo.cosine", "Cos"),
    ("stablehlo.exponential", "Exp"),
    ("stablehlo.exponential_minus_one", "Expm1"),
    ("stablehlo.floor", "Floor"),
    ("stablehlo.imag", "Imag"),
    ("stablehlo.is_finite", "IsFinite"),
    ("stablehlo.log", "Log"),
    ("stablehlo.log_plus_one", "Log1p"),
    ("stablehlo.logistic", "Logistic"),
    ("stablehlo.negate", "Neg"),
    ("stablehlo.not", "Not"),
    ("stablehlo.popcnt", "PopulationCount"),
    ("stablehlo.real", "Real"),
    ("stablehlo.round_nearest_afz", "Round"),
    ("stablehlo.round_nearest_even", "RoundNearestEven"),
    ("stablehlo.rsqrt", "Rsqrt"),
    ("stablehlo.sign", "Sign"),
    ("stablehlo.sine", "Sin"),
    ("stablehlo.sqrt", "Sqrt"),
    ("stablehlo.tan", "Tan"),
    ("stablehlo.tanh", "Tanh"),
    ("chlo.erf", "Erf"),
    ("chlo.tan", "Tan"),
    ("chlo.conj", "Conj"),
    ("chlo.erf_inv", "ErfInv"),
    ("chlo.erfc", "Erfc"),
    ("chlo.lgamma", "Lgamma"),
    ("chlo.digamma", "Digamma"),
    ("chlo.bessel_i1e", "BesselI1e"),
    ("chlo.sinh", "Sinh"),
    ("chlo.cosh", "Cosh"),
    ("chlo.asin", "Asin"),
    ("chlo.acos", "Acos"),
    ("chlo.atan", "Atan"),
    ("chlo.asinh", "Asinh"),
    ("chlo.acosh", "Acosh"),
    ("chlo.atanh", "Atanh"),
    ("chlo.is_inf", "IsInf"),
    ("chlo.is_pos_inf", "IsPosInf"),
    ("chlo.is_neg_inf", "IsNegInf"),
    ("stablehlo.optimization_barrier", "OptimizationBarrier"),
];

/// Element-wise binary ops (`chlo.broadcast_X` is X with broadcasting).
const BINARY: [(&str, &str); 20] = [
    ("add", "Add"),
    ("subtract", "Sub"),
    ("multiply", "Mul"),
    ("divide", "Div"),
    ("remainder", "Rem"),
    ("maximum", "Max"),
    ("minimum", "Min"),
    ("power", "Pow"),
    ("atan2", "Atan2"),
    ("complex", "Complex"),
    ("and", "And"),
    ("or", "Or"),
    ("xor", "Xor"),
    ("shift_left", "ShiftLeft"),
    ("shift_right_arithmetic", "ShiftRightArithmetic"),
    ("shift_right_logical", "ShiftRightLogical"),
    ("next_after", "NextAfter"),
    ("polygamma", "Polygamma"),
    ("zeta", "Zeta"),
    ("compare", "Compare"),
];

/// Ops that have no meaning in the document, with why.
const OUTSIDE: [(&str, &str); 14] = [
    ("stablehlo.dynamic_broadcast_in_dim", "dynamic shapes"),
    ("stablehlo.dynamic_reshape", "dynamic shapes"),
    ("stablehlo.dynamic_iota", "dynamic shapes"),
    ("stablehlo.dynamic_pad", "dynamic shapes"),
    ("stablehlo.dynamic_gather", "dynamic shapes"),
    ("stablehlo.dynamic_conv", "dynamic shapes"),
    ("stablehlo.real_dynamic_slice", "dynamic shapes"),
    ("stablehlo.uniform_quantize", "quantized types"),
    ("stablehlo.uniform_dequantize", "quantized types"),
    ("stablehlo.collective_broadcast", "an op the document does not define"),
    ("stablehlo.einsum", "an op the document does not define"),
    ("stablehlo.torch_index_select", "an op the document does not define"),
    ("chlo.ragged_dot", "an op the document does not define"),
    ("stablehlo.tuple_select", "an op the document does not define"),
];

pub fn is_check(op: &Op) -> bool {
    checks::is_check(op)
}

/// An instruction under construction.
pub struct Out {
    pub attrs: Map<String, Value>,
}

impl Out {
    pub fn new() -> Self {
        Out { attrs: Map::new() }
    }
    pub fn set(&mut self, key: &str, v: Value) -> &mut Self {
        self.attrs.insert(key.into(), v);
        self
    }
}

/// Maps one op, emitting its instructions and binding its results.
pub fn map<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>) -> R<()> {
    if checks::is_check(op) {
        return checks::map(ctx, op);
    }
    if let Some((_, why)) = OUTSIDE.iter().find(|(n, _)| *n == op.name) {
        return Err(ctx.err(op.at, format!("{} has no meaning in the document ({why})", quote(op.name))));
    }
    if !op.regions.is_empty() || matches!(op.name, "stablehlo.while" | "func.call" | "call" | "stablehlo.composite") {
        return ops_region::map(ctx, op);
    }
    let args = operands(ctx, op)?;
    let names: Vec<String> = args.iter().map(|v| v.json.clone()).collect();
    if let Some((_, doc)) = UNARY.iter().find(|(n, _)| *n == op.name) {
        if *doc == "OptimizationBarrier" && args.len() != 1 {
            let t = tuple_of(ctx, op, &args)?;
            return finish(ctx, op, Out::new(), "OptimizationBarrier", vec![t], true);
        }
        return finish(ctx, op, Out::new(), doc, names, true);
    }
    let short = op.name.strip_prefix("stablehlo.").unwrap_or(op.name);
    if let Some(base) = short.strip_prefix("chlo.broadcast_") {
        return broadcasting_binary(ctx, op, base, &args);
    }
    if op.name == "chlo.square" {
        // x * x, as CHLO's decomposition writes it.
        let x = names.first().cloned().ok_or_else(|| ctx.err(op.at, "chlo.square takes one operand"))?;
        return finish(ctx, op, Out::new(), "Mul", vec![x.clone(), x], true);
    }
    let short_chlo = short.strip_prefix("chlo.").unwrap_or(short);
    if let Some((_, doc)) = BINARY.iter().find(|(n, _)| *n == short_chlo) {
        let mut out = Out::new();
        if *doc == "Compare" {
            compare_attrs(ctx, op, &mut out)?;
        }
        return finish(ctx, op, out, doc, names, true);
    }
    let mut out = Out::new();
    let doc = match short {
        "constant" => return constant(ctx, op),
        "select" => "Select",
        "clamp" => "Clamp",
        "tuple" => "Tuple",
        "after_all" | "create_token" => "AfterAll",
        "replica_id" | "partition_id" => "ReplicaId",
        "dynamic_update_slice" => "DynamicUpdateSlice",
        "get_tuple_element" => {
            out.set("index", json!(int(ctx, op, "index")?));
            "GetTupleElement"
        }
        "iota" => {
            out.set("shape", json!(result(ctx, op)?.shape())).set("iota_dimension", json!(int(ctx, op, "iota_dimension")?));
            return finish(ctx, op, out, "Iota", names, false);
        }
        "broadcast_in_dim" => {
            let dims = result(ctx, op)?.dims().to_vec();
            out.set("out_dim_size", json!(dims)).set("broadcast_dimensions", json!(ints(ctx, op, "broadcast_dimensions")?));
            "BroadcastInDim"
        }
        "broadcast" => {
            out.set("broadcast_sizes", json!(ints(ctx, op, "broadcast_sizes")?));
            "Broadcast"
        }
        "reshape" => {
            out.set("new_sizes", json!(result(ctx, op)?.dims()));
            "Reshape"
        }
        "transpose" => {
            out.set("permutation", json!(ints(ctx, op, "permutation")?));
            "Transpose"
        }
        "reverse" => {
            out.set("dimensions", json!(ints(ctx, op, "dimensions")?));
            "Rev"
        }
        "slice" => {
            for k in ["start_indices", "limit_indices", "strides"] {
                out.set(k, json!(ints(ctx, op, k)?));
            }
            "Slice"
        }
        "dynamic_slice" => {
            out.set("slice_sizes", json!(ints(ctx, op, "slice_sizes")?));
            "DynamicSlice"
        }
        "concatenate" => {
            out.set("dimension", json!(int(ctx, op, "dimension")?));
            "ConcatInDim"
        }
        "pad" => {
            let lo = ints(ctx, op, "edge_padding_low")?;
            let hi = ints(ctx, op, "edge_padding_high")?;
            let interior = ints(ctx, op, "interior_padding")?;
            if lo.len() != hi.len() || lo.len() != interior.len() {
                return Err(ctx.err(op.at, "pad's low, high and interior have different lengths"));
            }
            let config: Vec<Value> = (0..lo.len())
                .map(|i| json!({"edge_padding_low": lo[i], "edge_padding_high": hi[i], "interior_padding": interior[i]}))
                .collect();
            out.set("padding_config", json!(config));
            "Pad"
        }
        "convert" => {
            out.set("new_element_type", json!(result_elem(ctx, op)?));
            "ConvertElementType"
        }
        "bitcast_convert" => {
            out.set("new_element_type", json!(result_elem(ctx, op)?));
            "BitcastConvertType"
        }
        "reduce_precision" => {
            let (e, m) = precision_format(ctx, op)?;
            out.set("exponent_bits", json!(e)).set("mantissa_bits", json!(m));
            "ReducePrecision"
        }
        "gather" => {
            ops_region::gather_attrs(ctx, op, &mut out)?;
            "Gather"
        }
        "dot_general" | "dot" => {
            ops_region::dot_attrs(ctx, op, &args, &mut out, short == "dot_general")?;
            if short == "dot" {
                "Dot"
            } else {
                "DotGeneral"
            }
        }
        "convolution" => {
            ops_region::conv_attrs(ctx, op, &args, &mut out)?;
            "Conv"
        }
        "fft" => {
            out.set("fft_type", json!(enum_(ctx, op, "fft_type")?)).set("fft_length", json!(ints(ctx, op, "fft_length")?));
            "Fft"
        }
        "cholesky" => {
            out.set("lower", json!(bool_or(op, "lower", false)));
            "Cholesky"
        }
        "triangular_solve" => {
            out.set("left_side", json!(bool_or(op, "left_side", false)))
                .set("lower", json!(bool_or(op, "lower", false)))
                .set("unit_diagonal", json!(bool_or(op, "unit_diagonal", false)))
                .set("transpose_a", json!(enum_(ctx, op, "transpose_a")?));
            "TriangularSolve"
        }
        "batch_norm_training" | "batch_norm_inference" | "batch_norm_grad" => {
            out.set("epsilon", number(ctx, op, "epsilon")?).set("feature_index", json!(int(ctx, op, "feature_index")?));
            match short {
                "batch_norm_training" => "BatchNormTraining",
                "batch_norm_inference" => "BatchNormInference",
                _ => "BatchNormGrad",
            }
        }
        "rng" => {
            let dist = enum_(ctx, op, "rng_distribution")?;
            out.set("shape", json!(result(ctx, op)?.shape()));
            let doc = if dist == "NORMAL" { "RngNormal" } else { "RngUniform" };
            return finish(ctx, op, out, doc, names.into_iter().take(2).collect(), false);
        }
        "rng_bit_generator" => {
            let alg = op.attr("rng_algorithm").and_then(enum_value).unwrap_or("DEFAULT");
            let bits = op.result_types.get(1).ok_or_else(|| ctx.err(op.at, "rng_bit_generator has two results"))?;
            out.set("algorithm", json!(alg)).set("shape", json!(bits.shape()));
            return finish(ctx, op, out, "RngBitGenerator", names, false);
        }
        "get_dimension_size" => {
            out.set("dimension", json!(int(ctx, op, "dimension")?));
            "GetDimensionSize"
        }
        "set_dimension_size" => {
            out.set("dimension", json!(int(ctx, op, "dimension")?));
            "SetDimensionSize"
        }
        "chlo.top_k" => {
            out.set("k", json!(int(ctx, op, "k")?)).set("largest", json!(true));
            "TopK"
        }
        "all_gather" | "all_to_all" | "collective_permute" | "infeed" | "outfeed" | "send" | "recv" => {
            return ops_region::world(ctx, op, short, names);
        }
        "custom_call" => return custom::custom_call(ctx, op, names),
        _ => return Err(ctx.err(op.at, format!("{} is not an op xlaref reads (docs/stablehlo.md lists the ops)", quote(op.name)))),
    };
    finish(ctx, op, out, doc, names, true)
}

/// Emits the instruction and binds the op's results: one result is the
/// instruction; several are its tuple (`%0:2`, read as `%0#i`) or, with
/// several names (`%values, %indices = ...`), one element each.
pub fn finish<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, mut out: Out, doc: &str, operands: Vec<String>, declare: bool) -> R<()> {
    let base = op.results.first().map_or("op", |r| r.0);
    let name = ctx.scope().fresh(base);
    let tys = op.result_types.clone();
    if declare && !tys.is_empty() {
        let shape = if tys.len() == 1 { tys[0].shape() } else { Ty::Tuple(tys.clone()).shape() };
        out.set("shape", json!(shape));
    }
    ctx.emit(out.attrs, &name, doc, operands);
    bind_results(ctx, op, name, tys)
}

/// Binds the results of `op` to instruction `json` (a tuple when the op
/// has several results).
pub fn bind_results<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, json: String, tys: Vec<Ty>) -> R<()> {
    let declared: usize = op.results.iter().map(|r| r.1).sum();
    if !op.results.is_empty() && declared != tys.len() {
        return Err(ctx.err(op.at, format!("{} result names for {} results", declared, tys.len())));
    }
    if tys.len() == 1 {
        if let Some((n, _)) = op.results.first() {
            ctx.bind(n, Val { json, ty: tys[0].clone(), multi: None });
        }
        return Ok(());
    }
    if op.results.len() == 1 {
        ctx.bind(op.results[0].0, Val { json, ty: Ty::Tuple(tys.clone()), multi: Some(tys) });
        return Ok(());
    }
    for (i, (n, count)) in op.results.iter().enumerate() {
        if *count != 1 {
            return Err(ctx.err(op.at, "mixed multi-result names"));
        }
        let e = ctx.get_tuple_element(&json, i, tys[i].clone(), n);
        ctx.bind(n, e);
    }
    Ok(())
}

/// A tuple of `vals` in the current scope.
pub fn tuple_of(ctx: &mut Ctx, op: &Op, vals: &[Val]) -> R<String> {
    let base = op.results.first().map_or("op", |r| r.0);
    let name = ctx.scope().fresh(&format!("{}.operands", base.trim_start_matches('%')));
    ctx.emit(Map::new(), &name, "Tuple", vals.iter().map(|v| v.json.clone()).collect());
    Ok(name)
}

/// `chlo.broadcast_X`: X with the document's `broadcast_dimensions`; when
/// absent, NumPy's alignment of trailing dimensions.
fn broadcasting_binary<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, base: &str, args: &[Val]) -> R<()> {
    let Some((_, doc)) = BINARY.iter().find(|(n, _)| *n == base) else {
        return Err(ctx.err(op.at, format!("{} is not an op xlaref reads", quote(op.name))));
    };
    let [a, b] = args else { return Err(ctx.err(op.at, format!("{} takes two operands", quote(op.name)))) };
    let mut out = Out::new();
    if *doc == "Compare" {
        compare_attrs(ctx, op, &mut out)?;
    }
    let (ra, rb) = (a.ty.dims().len(), b.ty.dims().len());
    let dims = match op.attr("broadcast_dimensions") {
        Some(_) => Some(ints(ctx, op, "broadcast_dimensions")?),
        None if ra != rb && ra.min(rb) > 0 => Some(((ra.max(rb) - ra.min(rb)) as i64..ra.max(rb) as i64).collect()),
        None => None,
    };
    if let Some(d) = dims {
        out.set("broadcast_dimensions", json!(d));
    }
    finish(ctx, op, out, doc, vec![a.json.clone(), b.json.clone()], true)
}

fn compare_attrs(ctx: &Ctx, op: &Op, out: &mut Out) -> R<()> {
    let dir = enum_(ctx, op, "comparison_direction")?;
    out.set("comparison_direction", json!(dir));
    if op.attr("compare_type").and_then(enum_value) == Some("TOTALORDER") {
        out.set("comparison_type", json!("TOTALORDER"));
    }
    Ok(())
}

/// `stablehlo.constant`: a literal, or a scalar broadcast for a splat.
fn constant<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>) -> R<()> {
    let ty = result(ctx, op)?.clone();
    let Some(Attr::Dense { body, ty: attr_ty }) = op.attr("value") else {
        return Err(ctx.err(op.at, "a constant needs a dense<...> value"));
    };
    let ty = attr_ty.clone().unwrap_or(ty);
    let base = op.results.first().map_or("constant", |r| r.0);
    let literal = dense::literal(&ctx.c, *body, &ty, ctx.max_elements)?;
    let elem = ty.elem().ok_or_else(|| ctx.err(op.at, "a constant of a non-tensor type"))?;
    let name = match literal {
        Dense::Splat(v) if ty.element_count() != 1 || !ty.dims().is_empty() => {
            let scalar = ctx.scope().fresh(&format!("{}.splat", base.trim_start_matches('%')));
            let mut m = Map::new();
            m.insert("shape".into(), json!(Ty::scalar(elem).shape()));
            m.insert("literal".into(), v);
            ctx.emit(m, &scalar, "Constant", vec![]);
            let name = ctx.scope().fresh(base);
            let mut m = Map::new();
            m.insert("out_dim_size".into(), json!(ty.dims()));
            m.insert("broadcast_dimensions".into(), json!([]));
            ctx.emit(m, &name, "BroadcastInDim", vec![scalar]);
            name
        }
        Dense::Splat(v) | Dense::Full(v) => {
            let name = ctx.scope().fresh(base);
            let mut m = Map::new();
            m.insert("shape".into(), json!(ty.shape()));
            m.insert("literal".into(), v);
            ctx.emit(m, &name, "Constant", vec![]);
            name
        }
    };
    bind_results(ctx, op, name, vec![ty])
}

/// `format = e5m10`, or `exponent_bits`/`mantissa_bits`.
fn precision_format(ctx: &Ctx, op: &Op) -> R<(i64, i64)> {
    if let Some(f) = op.attr("format").and_then(enum_value) {
        let parsed = f.strip_prefix('e').and_then(|r| r.split_once('m')).and_then(|(e, m)| Some((e.parse().ok()?, m.parse().ok()?)));
        return parsed.ok_or_else(|| ctx.err(op.at, format!("reduce_precision format {} is not eXmY", quote(f))));
    }
    Ok((int(ctx, op, "exponent_bits")?, int(ctx, op, "mantissa_bits")?))
}

/// The op's only result type.
pub fn result<'b>(ctx: &Ctx, op: &'b Op) -> R<&'b Ty> {
    match op.result_types.as_slice() {
        [t] => Ok(t),
        other => Err(ctx.err(op.at, format!("{} needs one result type, found {}", quote(op.name), other.len()))),
    }
}

fn result_elem(ctx: &Ctx, op: &Op) -> R<&'static str> {
    result(ctx, op)?.elem().map(|e| e.name()).ok_or_else(|| ctx.err(op.at, "the result is not a tensor"))
}

/// An enum keyword's value (`#stablehlo<fft_type FFT>` or `FFT`).
pub fn enum_value<'b>(a: &'b Attr) -> Option<&'b str> {
    match a {
        Attr::Enum(v) => Some(v),
        Attr::Str(s) => Some(s.as_str()),
        _ => None,
    }
}

pub fn enum_<'b>(ctx: &Ctx, op: &'b Op, key: &str) -> R<&'b str> {
    match op.attr(key) {
        Some(a) => enum_value(a).ok_or_else(|| ctx.err(op.at, format!("`{key}` must be a keyword, found {}", a.describe()))),
        None => Err(ctx.err(op.at, format!("{} needs `{key}`", quote(op.name)))),
    }
}

pub fn bool_or(op: &Op, key: &str, default: bool) -> bool {
    match op.attr(key) {
        Some(Attr::Bool(b)) => *b,
        Some(Attr::Unit) => true,
        _ => default,
    }
}

pub fn int(ctx: &Ctx, op: &Op, key: &str) -> R<i64> {
    let a = op.attr(key).ok_or_else(|| ctx.err(op.at, format!("{} needs `{key}`", quote(op.name))))?;
    int_value(ctx, op.at, key, a)
}

pub fn int_value(ctx: &Ctx, at: usize, key: &str, a: &Attr) -> R<i64> {
    match a {
        Attr::Number(t) => t.parse().map_err(|_| ctx.err(at, format!("`{key}` must be an integer, found {}", quote(t)))),
        Attr::Bool(b) => Ok(i64::from(*b)),
        Attr::Dense { body, ty: Some(ty) } if ty.dims().is_empty() => {
            dense::ints(&ctx.c, *body, ty)?.1.first().copied().ok_or_else(|| ctx.err(at, format!("`{key}` is empty")))
        }
        other => Err(ctx.err(at, format!("`{key}` must be an integer, found {}", other.describe()))),
    }
}

/// A float attribute as a JSON number.
fn number(ctx: &Ctx, op: &Op, key: &str) -> R<Value> {
    match op.attr(key) {
        Some(Attr::Number(t)) => t.parse::<f64>().map(|x| json!(x)).map_err(|_| ctx.err(op.at, format!("`{key}` is not a number"))),
        _ => Err(ctx.err(op.at, format!("{} needs the number `{key}`", quote(op.name)))),
    }
}

/// An integer list: `array<i64: ...>`, `[1, 2]` or `dense<[...]>`.
pub fn ints(ctx: &Ctx, op: &Op, key: &str) -> R<Vec<i64>> {
    let a = op.attr(key).ok_or_else(|| ctx.err(op.at, format!("{} needs `{key}`", quote(op.name))))?;
    ints_value(ctx, op.at, key, a)
}

pub fn ints_value(ctx: &Ctx, at: usize, key: &str, a: &Attr) -> R<Vec<i64>> {
    match a {
        Attr::DenseArray(items) => items
            .iter()
            .map(|t| match *t {
                "true" => Ok(1),
                "false" => Ok(0),
                t => t.parse().map_err(|_| ctx.err(at, format!("`{key}`: {} is not an integer", quote(t)))),
            })
            .collect(),
        Attr::List(items) => items.iter().map(|x| int_value(ctx, at, key, x)).collect(),
        Attr::Dense { body, ty: Some(ty) } => Ok(dense::ints(&ctx.c, *body, ty)?.1),
        other => Err(ctx.err(at, format!("`{key}` must be a list of integers, found {}", other.describe()))),
    }
}

/// `[[l, h], ...]` pairs from `dense<...> : tensor<Nx2xi64>` or nested lists.
pub fn pairs(ctx: &Ctx, at: usize, key: &str, a: &Attr) -> R<Vec<[i64; 2]>> {
    let flat = match a {
        Attr::List(rows) => {
            let mut flat = Vec::new();
            for r in rows {
                let v = ints_value(ctx, at, key, r)?;
                if v.len() != 2 {
                    return Err(ctx.err(at, format!("`{key}` must be pairs")));
                }
                flat.extend(v);
            }
            flat
        }
        other => ints_value(ctx, at, key, other)?,
    };
    if flat.len() % 2 != 0 {
        return Err(ctx.err(at, format!("`{key}` must be pairs")));
    }
    Ok(flat.chunks(2).map(|p| [p[0], p[1]]).collect())
}
