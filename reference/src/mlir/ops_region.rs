//! Ops with regions or calls (reductions, sort, scatter, map, collectives,
//! `while`, `if`, `case`, `func.call`, `composite`), and the structured
//! attributes of gather, scatter, dot and convolution.

use serde_json::{json, Map, Value};

use super::attr::Attr;
use super::func::{operands, Captures, Ctx, Scope, Val};
use super::ops::{bind_results, bool_or, finish, int, int_value, ints, ints_value, pairs, result, Out};
use super::quote;
use super::syntax::{Op, R};
use super::types::Ty;

/// Maps an op that has regions or calls a function.
pub fn map<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>) -> R<()> {
    let short = op.name.strip_prefix("stablehlo.").unwrap_or(op.name);
    match short {
        "while" => return while_(ctx, op),
        "if" | "case" => return conditional(ctx, op, short == "if"),
        "func.call" | "call" | "composite" => return call(ctx, op, short),
        _ => {}
    }
    let args = operands(ctx, op)?;
    let names: Vec<String> = args.iter().map(|v| v.json.clone()).collect();
    let base = op.results.first().map_or("op", |r| r.0).trim_start_matches('%').to_string();
    let mut regions = Vec::with_capacity(op.regions.len());
    for (i, r) in op.regions.iter().enumerate() {
        regions.push(ctx.isolated_region(r, &format!("{base}.{short}.{i}"))?);
    }
    let region = |i: usize| regions.get(i).cloned().ok_or_else(|| ctx.err(op.at, format!("{} needs {} region(s)", quote(op.name), i + 1)));
    let mut out = Out::new();
    let doc = match short {
        "reduce" => {
            out.set("computation", json!(region(0)?)).set("dimensions", json!(ints(ctx, op, "dimensions")?));
            "Reduce"
        }
        "reduce_window" => {
            out.set("computation", json!(region(0)?));
            window(ctx, op, &mut out, true)?;
            "ReduceWindow"
        }
        "select_and_scatter" => {
            out.set("select", json!(region(0)?)).set("scatter", json!(region(1)?));
            window(ctx, op, &mut out, false)?;
            "SelectAndScatter"
        }
        "scatter" => {
            out.set("update_computation", json!(region(0)?));
            scatter_attrs(ctx, op, &mut out)?;
            "Scatter"
        }
        "sort" => {
            out.set("comparator", json!(region(0)?));
            if op.attr("dimension").is_some() {
                out.set("dimension", json!(int(ctx, op, "dimension")?));
            }
            out.set("is_stable", json!(bool_or(op, "is_stable", false)));
            "Sort"
        }
        "map" => {
            out.set("computation", json!(region(0)?)).set("dimensions", json!(ints(ctx, op, "dimensions")?));
            "Map"
        }
        "all_reduce" => {
            if args.len() != 1 {
                return Err(ctx.err(op.at, "all_reduce of several operands is not read (the document's AllReduce takes one)"));
            }
            out.set("computation", json!(region(0)?));
            collective_attrs(ctx, op, &mut out)?;
            "AllReduce"
        }
        "reduce_scatter" => {
            out.set("computation", json!(region(0)?)).set("scatter_dimension", json!(int(ctx, op, "scatter_dimension")?));
            collective_attrs(ctx, op, &mut out)?;
            "ReduceScatter"
        }
        _ => return Err(ctx.err(op.at, format!("{} is not an op xlaref reads (docs/stablehlo.md lists the ops)", quote(op.name)))),
    };
    finish(ctx, op, out, doc, names, true)
}

/// Window attributes of reduce_window and select_and_scatter.
fn window(ctx: &Ctx, op: &Op, out: &mut Out, dilations: bool) -> R<()> {
    let dims = ints(ctx, op, "window_dimensions")?;
    let ones = vec![1i64; dims.len()];
    let opt =
        |key: &str| -> R<Vec<i64>> { op.attr(key).map(|a| ints_value(ctx, op.at, key, a)).transpose().map(|v| v.unwrap_or(ones.clone())) };
    out.set("window_strides", json!(opt("window_strides")?));
    if dilations {
        out.set("base_dilations", json!(opt("base_dilations")?)).set("window_dilations", json!(opt("window_dilations")?));
    }
    let padding = match op.attr("padding") {
        Some(a) => pairs(ctx, op.at, "padding", a)?,
        None => vec![[0, 0]; dims.len()],
    };
    out.set("window_dimensions", json!(dims)).set("padding", json!(padding));
    Ok(())
}

/// `replica_groups`, `channel_handle`.
fn collective_attrs(ctx: &Ctx, op: &Op, out: &mut Out) -> R<()> {
    if let Some(a) = op.attr("replica_groups") {
        let groups: Vec<Vec<i64>> = match a {
            Attr::Dense { body, ty: Some(ty) } => {
                let (dims, flat) = super::dense::ints(&ctx.c, *body, ty)?;
                let width = dims.get(1).copied().unwrap_or(0).max(1) as usize;
                // `-1` pads groups shorter than the widest.
                flat.chunks(width).map(|g| g.iter().copied().filter(|&r| r >= 0).collect()).filter(|g: &Vec<i64>| !g.is_empty()).collect()
            }
            other => match other {
                Attr::List(rows) => rows.iter().map(|r| ints_value(ctx, op.at, "replica_groups", r)).collect::<R<_>>()?,
                _ => return Err(ctx.err(op.at, "replica_groups must be a dense<...> matrix")),
            },
        };
        out.set("replica_groups", json!(groups));
    }
    if let Some(h) = op.attr("channel_handle") {
        if let Some(id) = h.field("handle") {
            let id = int_value(ctx, op.at, "channel_handle", id)?;
            if id > 0 {
                out.set("channel_id", json!(id));
            }
        }
    }
    Ok(())
}

/// Collectives and feeds without regions.
pub fn world<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, short: &str, names: Vec<String>) -> R<()> {
    let mut out = Out::new();
    let doc = match short {
        "all_gather" => {
            if names.len() != 1 {
                return Err(ctx.err(op.at, "all_gather of several operands is not read (the document's AllGather takes one)"));
            }
            out.set("all_gather_dim", json!(int(ctx, op, "all_gather_dim")?));
            collective_attrs(ctx, op, &mut out)?;
            "AllGather"
        }
        "all_to_all" => {
            if names.len() != 1 {
                return Err(ctx.err(op.at, "all_to_all of several operands is not read (the document's AllToAll takes one)"));
            }
            out.set("split_dimension", json!(int(ctx, op, "split_dimension")?))
                .set("concat_dimension", json!(int(ctx, op, "concat_dimension")?))
                .set("split_count", json!(int(ctx, op, "split_count")?));
            collective_attrs(ctx, op, &mut out)?;
            "AllToAll"
        }
        "collective_permute" => {
            let a = op.attr("source_target_pairs").ok_or_else(|| ctx.err(op.at, "collective_permute needs source_target_pairs"))?;
            out.set("source_target_pairs", json!(pairs(ctx, op.at, "source_target_pairs", a)?));
            collective_attrs(ctx, op, &mut out)?;
            "CollectivePermute"
        }
        "infeed" => return infeed(ctx, op, names),
        "outfeed" => return outfeed(ctx, op, names),
        "send" | "recv" => return channel(ctx, op, short == "send", names),
        _ => return Err(ctx.err(op.at, format!("{} is not an op xlaref reads (docs/stablehlo.md lists the ops)", quote(op.name)))),
    };
    finish(ctx, op, out, doc, names, true)
}

/// `infeed(%token) -> (data..., token)`: the document's Infeed with its
/// ordering token, whose result is `(data, token)` (several data results
/// are one tuple of data).
fn infeed<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, names: Vec<String>) -> R<()> {
    let tys = op.result_types.clone();
    let Some((Ty::Token, data)) = tys.split_last() else {
        return Err(ctx.err(op.at, "infeed's last result is its token"));
    };
    let shape = match data {
        [one] => one.clone(),
        many => Ty::Tuple(many.to_vec()),
    };
    let mut out = Out::new();
    out.set("shape", json!(Ty::Tuple(vec![shape.clone(), Ty::Token]).shape()));
    if let Some(Attr::Str(c)) = op.attr("infeed_config") {
        out.set("config", json!(c));
    }
    let base = op.results.first().map_or("infeed", |r| r.0).trim_start_matches('%').to_string();
    let name = ctx.scope().fresh(&base);
    ctx.emit(out.attrs, &name, "Infeed", names);
    if data.len() == 1 {
        return bind_results(ctx, op, name, tys);
    }
    let all = ctx.get_tuple_element(&name, 0, shape, &format!("{base}.data"));
    let token = ctx.get_tuple_element(&name, 1, Ty::Token, &format!("{base}.token"));
    let mut parts: Vec<String> =
        data.iter().enumerate().map(|(i, t)| ctx.get_tuple_element(&all.json, i, t.clone(), &format!("{base}.{i}")).json).collect();
    parts.push(token.json);
    let tuple = ctx.scope().fresh(&format!("{base}.results"));
    ctx.emit(Map::new(), &tuple, "Tuple", parts);
    bind_results(ctx, op, tuple, tys)
}

/// `send(%data, %token) -> token` and `recv(%token) -> (data, token)`: the
/// document's Send then SendDone, Recv then RecvDone, on the channel of
/// `channel_handle`, threading the token through the contexts.
fn channel<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, send: bool, names: Vec<String>) -> R<()> {
    if bool_or(op, "is_host_transfer", false) {
        return Err(
            ctx.err(op.at, format!("{} with is_host_transfer: transfers to the host have no meaning in the document", quote(op.name)))
        );
    }
    let id = match op.attr("channel_handle").and_then(|h| h.field("handle")) {
        Some(v) => int_value(ctx, op.at, "channel_handle", v)?,
        None => return Err(ctx.err(op.at, format!("{} needs a channel_handle", quote(op.name)))),
    };
    let base = op.results.first().map_or("channel", |r| r.0).trim_start_matches('%').to_string();
    let context = ctx.scope().fresh(&format!("{base}.context"));
    let mut m = Map::new();
    m.insert("channel_id".into(), json!(id));
    if send {
        let [_, _] = names.as_slice() else {
            return Err(ctx.err(op.at, "send of several inputs is not read (the document's Send takes one operand)"));
        };
        ctx.emit(m.clone(), &context, "Send", names);
        let done = ctx.scope().fresh(&base);
        ctx.emit(m, &done, "SendDone", vec![context]);
        return bind_results(ctx, op, done, op.result_types.clone());
    }
    let [data, Ty::Token] = op.result_types.as_slice() else {
        return Err(ctx.err(op.at, "recv of several results is not read (the document's Recv takes one shape)"));
    };
    let mut recv = m.clone();
    recv.insert("shape".into(), json!(data.shape()));
    ctx.emit(recv, &context, "Recv", names);
    let done = ctx.scope().fresh(&base);
    ctx.emit(m, &done, "RecvDone", vec![context]);
    bind_results(ctx, op, done, op.result_types.clone())
}

/// `outfeed(%inputs..., %token) -> token`: the document's Outfeed of the
/// input (several inputs as one tuple) after the ordering token.
fn outfeed<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, names: Vec<String>) -> R<()> {
    let Some((token, inputs)) = names.split_last() else {
        return Err(ctx.err(op.at, "outfeed takes its inputs and a token"));
    };
    let operand = match inputs {
        [one] => one.clone(),
        many => {
            let base = op.results.first().map_or("outfeed", |r| r.0).trim_start_matches('%').to_string();
            let t = ctx.scope().fresh(&format!("{base}.inputs"));
            ctx.emit(Map::new(), &t, "Tuple", many.to_vec());
            t
        }
    };
    let mut out = Out::new();
    if let Some(Attr::Str(c)) = op.attr("outfeed_config") {
        out.set("outfeed_config", json!(c));
    }
    finish(ctx, op, out, "Outfeed", vec![operand, token.clone()], true)
}

/// `func.call @f(...)` and `composite "name" ... {decomposition = @f}`.
fn call<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, short: &str) -> R<()> {
    let key = if short == "composite" { "decomposition" } else { "callee" };
    let callee = match op.attr(key) {
        Some(Attr::Symbol(s)) => *s,
        _ => return Err(ctx.err(op.at, format!("{} needs `{key}`", quote(op.name)))),
    };
    let Some(f) = ctx.funcs.get(callee).copied() else {
        return Err(ctx.err(op.at, format!("calls {}, which the module does not define", quote(callee))));
    };
    if f.body.is_none() {
        return Err(ctx.err(op.at, format!("calls {}, which is only declared", quote(callee))));
    }
    let args = operands(ctx, op)?;
    let mut out = Out::new();
    out.set("computation", json!(callee.trim_start_matches('@')));
    let names = args.iter().map(|v| v.json.clone()).collect();
    let tys = if op.result_types.is_empty() { f.results.clone() } else { op.result_types.clone() };
    let base = op.results.first().map_or("call", |r| r.0);
    let name = ctx.scope().fresh(base);
    let shape = if tys.len() == 1 { tys[0].shape() } else { Ty::Tuple(tys.clone()).shape() };
    out.set("shape", json!(shape));
    ctx.emit(out.attrs, &name, "Call", names);
    bind_results(ctx, op, name, tys)
}

/// A region that may read values from outside: they come in as elements
/// `base..` of its tuple parameter `param`; returns the region's values
/// and the captures (shared with a sibling region through `captures`).
fn capturing_region<'a>(
    ctx: &mut Ctx<'a>,
    op: &'a Op<'a>,
    index: usize,
    captures: Captures,
    args: &[(usize, Ty)],
) -> R<(Scope<'a>, Vec<Val>)> {
    let region = op.regions.get(index).ok_or_else(|| ctx.err(op.at, format!("{} needs {} regions", quote(op.name), index + 1)))?;
    let param = captures.param.clone();
    let mut scope = Scope::new(Some(captures));
    scope.reserve(&param);
    ctx.scopes.push(scope);
    for ((name, _), (i, ty)) in region.args.iter().zip(args) {
        let v = ctx.get_tuple_element(&param, *i, ty.clone(), name);
        ctx.bind(name, v);
    }
    let result = ctx.ops(region, &["stablehlo.return", "return"]);
    let scope = ctx.scopes.pop().unwrap_or_else(|| Scope::new(None));
    Ok((scope, result?))
}

/// `stablehlo.while`: the document's While over a tuple of the loop values
/// and the values its regions read from outside (carried unchanged).
fn while_<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>) -> R<()> {
    let init = operands(ctx, op)?;
    let n = init.len();
    let tys: Vec<Ty> = init.iter().map(|v| v.ty.clone()).collect();
    let args: Vec<(usize, Ty)> = tys.iter().cloned().enumerate().collect();
    let base = op.results.first().map_or("while", |r| r.0).trim_start_matches('%').to_string();
    let caps = Captures { param: "state".into(), base: n, list: vec![] };
    let (cond_scope, cond_vals) = capturing_region(ctx, op, 0, caps, &args)?;
    let caps = cond_scope.captures.clone().unwrap_or(Captures { param: "state".into(), base: n, list: vec![] });
    let (mut body_scope, body_vals) = capturing_region(ctx, op, 1, caps, &args)?;
    let caps = body_scope.captures.clone().unwrap_or(Captures { param: "state".into(), base: n, list: vec![] });
    let [cond_root] = cond_vals.as_slice() else {
        return Err(ctx.err(op.at, "a while condition returns one i1 value"));
    };
    if body_vals.len() != n {
        return Err(ctx.err(op.at, format!("the while body returns {} values for {n} loop values", body_vals.len())));
    }
    let mut body_out: Vec<String> = body_vals.iter().map(|v| v.json.clone()).collect();
    for (j, (_, ty)) in caps.list.iter().enumerate() {
        body_out.push(passthrough(&mut body_scope, n + j, ty));
    }
    let body_root = body_scope.fresh("next");
    body_scope.instrs.push(json!({"name": body_root, "op": "Tuple", "operands": body_out}));
    let mut state_tys = tys.clone();
    state_tys.extend(caps.list.iter().map(|(_, t)| t.clone()));
    let state = vec![("state".to_string(), Ty::Tuple(state_tys))];
    let cond_name = ctx.fresh_computation(&format!("{base}.cond"));
    let body_name = ctx.fresh_computation(&format!("{base}.body"));
    let cond_root = cond_root.json.clone();
    ctx.add_computation(&cond_name, state.clone(), cond_scope, cond_root);
    ctx.add_computation(&body_name, state, body_scope, body_root);
    let mut init_names: Vec<String> = init.iter().map(|v| v.json.clone()).collect();
    init_names.extend(caps.list.iter().map(|(j, _)| j.clone()));
    let tuple = ctx.scope().fresh(&format!("{base}.init"));
    ctx.emit(Map::new(), &tuple, "Tuple", init_names);
    let name = ctx.scope().fresh(&base);
    let mut m = Map::new();
    m.insert("condition".into(), json!(cond_name));
    m.insert("body".into(), json!(body_name));
    ctx.emit(m, &name, "While", vec![tuple]);
    bind_loop_results(ctx, op, &name, &tys)
}

/// Element `index` of the state, unchanged, as a body result.
fn passthrough(scope: &mut Scope, index: usize, _ty: &Ty) -> String {
    let name = scope.fresh("carried");
    scope.instrs.push(json!({"name": name, "op": "GetTupleElement", "operands": ["state"], "index": index}));
    name
}

/// A while's results are the first elements of its state tuple.
fn bind_loop_results<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, name: &str, tys: &[Ty]) -> R<()> {
    if op.results.len() == 1 && op.results[0].1 == tys.len() && tys.len() > 1 {
        let v = Val { json: name.to_string(), ty: Ty::Tuple(tys.to_vec()), multi: Some(tys.to_vec()) };
        ctx.bind(op.results[0].0, v);
        return Ok(());
    }
    for (i, (n, count)) in op.results.iter().enumerate() {
        if *count != 1 || i >= tys.len() {
            return Err(ctx.err(op.at, "the while's result names do not match its loop values"));
        }
        let e = ctx.get_tuple_element(name, i, tys[i].clone(), n);
        ctx.bind(n, e);
    }
    Ok(())
}

/// `if` and `case`: the document's Conditional, each branch taking a tuple
/// of the values it reads from outside.
fn conditional<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, is_if: bool) -> R<()> {
    let selector = operands(ctx, op)?;
    let [selector] = selector.as_slice() else { return Err(ctx.err(op.at, format!("{} takes one operand", quote(op.name)))) };
    let base = op.results.first().map_or("cond", |r| r.0).trim_start_matches('%').to_string();
    let mut branches = Vec::new();
    let mut branch_operands = Vec::new();
    for i in 0..op.regions.len() {
        let caps = Captures { param: "captured".into(), base: 0, list: vec![] };
        let (scope, vals) = capturing_region(ctx, op, i, caps, &[])?;
        if vals.len() != op.result_types.len() {
            return Err(ctx.err(op.at, format!("branch {i} returns {} values for {} results", vals.len(), op.result_types.len())));
        }
        let caps = scope.captures.clone().unwrap_or(Captures { param: "captured".into(), base: 0, list: vec![] });
        let name = ctx.fresh_computation(&format!("{base}.branch{i}"));
        let mut scope = scope;
        let root = if vals.len() == 1 {
            vals[0].json.clone()
        } else {
            let r = scope.fresh("result");
            scope.instrs.push(json!({"name": r, "op": "Tuple", "operands": vals.iter().map(|v| v.json.clone()).collect::<Vec<_>>()}));
            r
        };
        let param_ty = Ty::Tuple(caps.list.iter().map(|(_, t)| t.clone()).collect());
        ctx.add_computation(&name, vec![("captured".into(), param_ty)], scope, root);
        let tuple = ctx.scope().fresh(&format!("{base}.operands{i}"));
        ctx.emit(Map::new(), &tuple, "Tuple", caps.list.iter().map(|(j, _)| j.clone()).collect());
        branches.push(name);
        branch_operands.push(tuple);
    }
    let mut m = Map::new();
    let mut names = vec![selector.json.clone()];
    if is_if {
        let [t, f] = branches.as_slice() else { return Err(ctx.err(op.at, "`if` has two regions")) };
        m.insert("true_computation".into(), json!(t));
        m.insert("false_computation".into(), json!(f));
    } else {
        if branches.is_empty() {
            return Err(ctx.err(op.at, "`case` needs at least one branch"));
        }
        m.insert("branch_computations".into(), json!(branches));
    }
    names.extend(branch_operands);
    let name = ctx.scope().fresh(&base);
    ctx.emit(m, &name, "Conditional", names);
    bind_results(ctx, op, name, op.result_types.clone())
}

/// Gather's `dimension_numbers`, `slice_sizes`, `indices_are_sorted`.
pub fn gather_attrs(ctx: &Ctx, op: &Op, out: &mut Out) -> R<()> {
    let dn = op.attr("dimension_numbers").ok_or_else(|| ctx.err(op.at, "gather needs dimension_numbers"))?;
    for k in ["offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims", "start_index_map"] {
        out.set(k, json!(field_ints(ctx, op, dn, k)?));
    }
    out.set("index_vector_dim", json!(field_int(ctx, op, dn, "index_vector_dim")?));
    out.set("slice_sizes", json!(ints(ctx, op, "slice_sizes")?));
    out.set("indices_are_sorted", json!(bool_or(op, "indices_are_sorted", false)));
    Ok(())
}

fn scatter_attrs(ctx: &Ctx, op: &Op, out: &mut Out) -> R<()> {
    let dn = op.attr("scatter_dimension_numbers").ok_or_else(|| ctx.err(op.at, "scatter needs scatter_dimension_numbers"))?;
    for k in [
        "update_window_dims",
        "inserted_window_dims",
        "input_batching_dims",
        "scatter_indices_batching_dims",
        "scatter_dims_to_operand_dims",
    ] {
        out.set(k, json!(field_ints(ctx, op, dn, k)?));
    }
    out.set("index_vector_dim", json!(field_int(ctx, op, dn, "index_vector_dim")?));
    out.set("indices_are_sorted", json!(bool_or(op, "indices_are_sorted", false)));
    out.set("unique_indices", json!(bool_or(op, "unique_indices", false)));
    Ok(())
}

/// A list field of a `#stablehlo.gather<...>`-like attribute (absent: empty).
fn field_ints(ctx: &Ctx, op: &Op, a: &Attr, key: &str) -> R<Vec<i64>> {
    a.field(key).map(|v| ints_value(ctx, op.at, key, v)).transpose().map(Option::unwrap_or_default)
}

/// An integer field (absent: 0, StableHLO's printed default).
fn field_int(ctx: &Ctx, op: &Op, a: &Attr, key: &str) -> R<i64> {
    a.field(key).map(|v| int_value(ctx, op.at, key, v)).transpose().map(|v| v.unwrap_or(0))
}

/// `preferred_element_type` when the result's element type is not the
/// operands'.
fn preferred(out: &mut Out, lhs: &Val, result: &Ty) {
    if let (Some(a), Some(r)) = (lhs.ty.elem(), result.elem()) {
        if a != r {
            out.set("preferred_element_type", json!(r.name()));
        }
    }
}

/// DotGeneral's dimension numbers (generic `#stablehlo.dot<...>` or the
/// pretty `batching_dims = [0] x [0], contracting_dims = [1] x [0]`).
pub fn dot_attrs(ctx: &Ctx, op: &Op, args: &[Val], out: &mut Out, general: bool) -> R<()> {
    let r = result(ctx, op)?;
    if let Some(lhs) = args.first() {
        preferred(out, lhs, r);
    }
    if !general {
        return Ok(());
    }
    let pair = |key: &str| -> R<(Vec<i64>, Vec<i64>)> {
        match op.attr(key) {
            None => Ok((vec![], vec![])),
            Some(Attr::List(lr)) if lr.len() == 2 => Ok((ints_value(ctx, op.at, key, &lr[0])?, ints_value(ctx, op.at, key, &lr[1])?)),
            Some(_) => Err(ctx.err(op.at, format!("`{key}` must be `[..] x [..]`"))),
        }
    };
    let dims = if let Some(dn) = op.attr("dot_dimension_numbers") {
        json!({
            "lhs_batch_dimensions": field_ints(ctx, op, dn, "lhs_batching_dimensions")?,
            "rhs_batch_dimensions": field_ints(ctx, op, dn, "rhs_batching_dimensions")?,
            "lhs_contracting_dimensions": field_ints(ctx, op, dn, "lhs_contracting_dimensions")?,
            "rhs_contracting_dimensions": field_ints(ctx, op, dn, "rhs_contracting_dimensions")?,
        })
    } else {
        let (lb, rb) = pair("batching_dims")?;
        let (lc, rc) = pair("contracting_dims")?;
        json!({"lhs_batch_dimensions": lb, "rhs_batch_dimensions": rb, "lhs_contracting_dimensions": lc, "rhs_contracting_dimensions": rc})
    };
    out.set("dimension_numbers", dims);
    Ok(())
}

/// Convolution's window, groups and dimension numbers.
pub fn conv_attrs(ctx: &Ctx, op: &Op, args: &[Val], out: &mut Out) -> R<()> {
    let r = result(ctx, op)?;
    if let Some(lhs) = args.first() {
        preferred(out, lhs, r);
    }
    let dims = conv_dims(ctx, op)?;
    let spatial = dims.get("input_spatial_dimensions").and_then(Value::as_array).map_or(0, Vec::len);
    let ones = vec![1i64; spatial];
    let opt =
        |key: &str| -> R<Vec<i64>> { op.attr(key).map(|a| ints_value(ctx, op.at, key, a)).transpose().map(|v| v.unwrap_or(ones.clone())) };
    out.set("window_strides", json!(opt("window_strides")?));
    out.set("lhs_dilation", json!(opt("lhs_dilation")?));
    out.set("rhs_dilation", json!(opt("rhs_dilation")?));
    let padding = match op.attr("padding") {
        Some(a) => pairs(ctx, op.at, "padding", a)?,
        None => vec![[0, 0]; spatial],
    };
    out.set("padding", json!(padding));
    if let Some(a) = op.attr("window_reversal") {
        if ints_value(ctx, op.at, "window_reversal", a)?.iter().any(|&x| x != 0) {
            return Err(ctx.err(op.at, "window_reversal has no counterpart in the document's Conv"));
        }
    }
    for k in ["feature_group_count", "batch_group_count"] {
        if op.attr(k).is_some() {
            out.set(k, json!(int(ctx, op, k)?));
        }
    }
    out.set("dimension_numbers", Value::Object(dims));
    Ok(())
}

/// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` or `raw input_batch_dimension
/// = 0, ...` as xla-json's dimension_numbers object.
fn conv_dims(ctx: &Ctx, op: &Op) -> R<Map<String, Value>> {
    let Some(Attr::Raw(_, (s, e))) = op.attr("dimension_numbers") else {
        return Err(ctx.err(op.at, "convolution needs dimension_numbers"));
    };
    let text = ctx.c.text().get(*s..*e).unwrap_or("").trim();
    let bad = || ctx.err(*s, format!("convolution dimension numbers {} are not read", quote(text)));
    let mut m = Map::new();
    if let Some(raw) = text.strip_prefix("raw") {
        let mut c = ctx.c.span(*e - raw.len(), *e);
        while !c.at_end() {
            let key = c.ident()?;
            c.expect("=")?;
            let v = super::attr::value(&mut c, false, 0)?;
            let v = match v {
                Attr::List(_) => json!(ints_value(ctx, op.at, key, &v)?),
                other => json!(int_value(ctx, op.at, key, &other)?),
            };
            m.insert(key.to_string(), v);
            c.eat(",");
        }
        return Ok(m);
    }
    let parts: Vec<&str> = text
        .split("->")
        .flat_map(|p| p.split(']'))
        .map(|p| p.trim_start_matches(['x', '[', ' ']))
        .filter(|p| !p.trim().is_empty())
        .collect();
    let [lhs, rhs, res] = parts.as_slice() else { return Err(bad()) };
    let labels = |p: &str| -> Vec<String> { p.split(',').map(|x| x.trim().to_string()).collect() };
    let (lhs, rhs, res) = (labels(lhs), labels(rhs), labels(res));
    let find = |l: &[String], k: &str| l.iter().position(|x| x == k).map(|i| i as i64);
    let spatial = |l: &[String]| -> Option<Vec<i64>> {
        let n = l.iter().filter(|x| x.parse::<usize>().is_ok()).count();
        (0..n).map(|d| l.iter().position(|x| x == &d.to_string()).map(|i| i as i64)).collect()
    };
    let get = |v: Option<i64>| v.ok_or_else(bad);
    m.insert("input_batch_dimension".into(), json!(get(find(&lhs, "b"))?));
    m.insert("input_feature_dimension".into(), json!(get(find(&lhs, "f"))?));
    m.insert("input_spatial_dimensions".into(), json!(spatial(&lhs).ok_or_else(bad)?));
    m.insert("kernel_input_feature_dimension".into(), json!(get(find(&rhs, "i"))?));
    m.insert("kernel_output_feature_dimension".into(), json!(get(find(&rhs, "o"))?));
    m.insert("kernel_spatial_dimensions".into(), json!(spatial(&rhs).ok_or_else(bad)?));
    m.insert("output_batch_dimension".into(), json!(get(find(&res, "b"))?));
    m.insert("output_feature_dimension".into(), json!(get(find(&res, "f"))?));
    m.insert("output_spatial_dimensions".into(), json!(spatial(&res).ok_or_else(bad)?));
    Ok(m)
}
