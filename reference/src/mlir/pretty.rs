//! The pretty (custom) forms of StableHLO, CHLO, `func` and `check` ops, as
//! `stablehlo-opt` and JAX print them, read into the generic shape of
//! [`Op`]: keywords become the generic form's attribute names
//! (`dims = [1, 0]` of `transpose` is `permutation`), so one mapping
//! (`ops.rs`) serves both forms.

use super::attr::{self, Attr};
use super::cursor::Cursor;
use super::syntax::{self, region, use_, Op, Region, R};
use super::types::{self, Ty};

/// Reads the rest of a pretty op named `name`.
pub fn op<'a>(c: &mut Cursor<'a>, name: &'a str, depth: usize) -> R<Op<'a>> {
    let mut op = Op { name, ..Op::default() };
    let short = name.strip_prefix("stablehlo.").unwrap_or(name);
    match short {
        "constant" => constant(c, &mut op)?,
        "compare" => {
            let dir = c.ident()?;
            op.attrs.push(("comparison_direction", Attr::Enum(dir)));
            c.expect(",")?;
            default(c, &mut op)?;
            if let Some(i) = op.attrs.iter().position(|(k, _)| k.is_empty()) {
                let (_, v) = op.attrs.remove(i);
                op.attrs.push(("compare_type", v));
            }
        }
        "slice" => {
            op.operands.push(use_(c)?);
            slice_ranges(c, &mut op)?;
            default(c, &mut op)?;
        }
        "get_tuple_element" => {
            op.operands.push(use_(c)?);
            c.expect("[")?;
            op.attrs.push(("index", Attr::Number(c.number_text()?)));
            c.expect("]")?;
            default(c, &mut op)?;
        }
        "convolution" => convolution(c, &mut op)?,
        "reduce" => reduce(c, &mut op, depth)?,
        "while" => while_(c, &mut op, depth)?,
        "custom_call" | "func.call" | "call" => {
            let target = c.sigil_name(b'@')?;
            op.attrs.push((if short == "custom_call" { "call_target_name" } else { "callee" }, Attr::Symbol(target)));
            parenthesized_operands(c, &mut op)?;
            default(c, &mut op)?;
        }
        "composite" => {
            op.attrs.push(("name", Attr::Str(c.string()?)));
            default(c, &mut op)?;
        }
        "chlo.top_k" => {
            parenthesized_operands(c, &mut op)?;
            default(c, &mut op)?;
        }
        _ => default(c, &mut op)?,
    }
    Ok(op)
}

/// `dense<...> : type` (the value is the `value` attribute).
fn constant<'a>(c: &mut Cursor<'a>, op: &mut Op<'a>) -> R<()> {
    if c.peek() == Some(b'{') {
        op.attrs.extend(attr::dict(c, 0)?);
    }
    let v = attr::value(c, false, 0)?;
    c.expect(":")?;
    let t = types::ty(c, 0)?;
    op.attrs.push(("value", v));
    op.result_types = vec![t];
    Ok(())
}

/// `(%a, k = 2, ...)`: operands and keywords inside parentheses.
fn parenthesized_operands<'a>(c: &mut Cursor<'a>, op: &mut Op<'a>) -> R<()> {
    c.expect("(")?;
    if c.eat(")") {
        return Ok(());
    }
    loop {
        if c.peek() == Some(b'%') {
            op.operands.push(use_(c)?);
        } else {
            let key = c.ident()?;
            c.expect("=")?;
            op.attrs.push((key, attr::value(c, false, 0)?));
        }
        if c.eat(")") {
            return Ok(());
        }
        c.expect(",")?;
    }
}

/// The common shape: `%a, %b, key = value, POSITIONAL, ... [{attrs}]
/// [: signature]`. Keywords take the generic form's names; positional
/// keywords (`FLOAT` of `compare`, the constant of `expect_eq_const`) are
/// kept under the empty name.
fn default<'a>(c: &mut Cursor<'a>, op: &mut Op<'a>) -> R<()> {
    let mut first = true;
    loop {
        c.skip_ws();
        match c.peek() {
            Some(b'%') => op.operands.push(use_(c)?),
            Some(b':' | b'{') | None => break,
            Some(b'}') => break,
            Some(_) => {
                let mut probe = *c;
                let keyword = probe.ident().ok().filter(|_| probe.peek_str("=") && !probe.peek_str("=="));
                match keyword {
                    Some(key) => {
                        *c = probe;
                        c.expect("=")?;
                        let v = keyword_value(c, key)?;
                        push_keyword(op, key, v)?;
                    }
                    None => {
                        if !first && !c.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'#' || b == b'"') {
                            break;
                        }
                        if c.peek_str("loc(") {
                            break;
                        }
                        let v = attr::value(c, false, 0)?;
                        op.attrs.push(("", v));
                    }
                }
            }
        }
        first = false;
        if !c.eat(",") {
            break;
        }
    }
    if c.peek() == Some(b'{') {
        op.attrs.extend(attr::dict(c, 0)?);
    }
    if c.eat(":") {
        signature(c, op)?;
    }
    Ok(())
}

/// A keyword's value: lists may come in pairs (`[1] x [0]` of
/// `dot_general`), `<...>` is kept raw.
fn keyword_value<'a>(c: &mut Cursor<'a>, key: &str) -> R<Attr<'a>> {
    if c.peek() == Some(b'<') {
        let body = c.balanced()?;
        return Ok(Attr::Raw(key_name(key), body));
    }
    let v = attr::value(c, false, 0)?;
    if matches!(v, Attr::List(_)) && c.eat_keyword("x") {
        let w = attr::value(c, false, 0)?;
        return Ok(Attr::List(vec![v, w]));
    }
    Ok(v)
}

fn key_name(key: &str) -> &'static str {
    match key {
        "algorithm" => "algorithm",
        _ => "raw",
    }
}

/// Stores a keyword under the generic form's attribute name.
fn push_keyword<'a>(op: &mut Op<'a>, key: &'a str, v: Attr<'a>) -> R<()> {
    let short = op.name.strip_prefix("stablehlo.").unwrap_or(op.name);
    let name = match (short, key) {
        ("broadcast_in_dim", "dims") => "broadcast_dimensions",
        ("transpose", "dims") => "permutation",
        ("reverse", "dims") => "dimensions",
        ("iota" | "concatenate", "dim") => {
            if short == "iota" {
                "iota_dimension"
            } else {
                "dimension"
            }
        }
        ("get_dimension_size" | "set_dimension_size", "dim") => "dimension",
        ("dynamic_slice", "sizes") => "slice_sizes",
        ("pad", "low") => "edge_padding_low",
        ("pad", "high") => "edge_padding_high",
        ("pad", "interior") => "interior_padding",
        ("fft", "type") => "fft_type",
        ("fft", "length") => "fft_length",
        ("rng", "distribution") => "rng_distribution",
        ("rng_bit_generator", "algorithm") => "rng_algorithm",
        ("dot_general" | "dot" | "convolution", "precision") => "precision_config",
        ("dot_general", "batching_dims") => "batching_dims",
        ("dot_general", "contracting_dims") => "contracting_dims",
        ("reduce_precision", "format") => "format",
        _ => key,
    };
    op.attrs.push((name, v));
    Ok(())
}

/// `: t`, `: t1, t2, ...`, `: (t, ...) -> r`, `: t -> r`.
fn signature(c: &mut Cursor, op: &mut Op) -> R<()> {
    if c.peek() == Some(b'(') {
        let (inputs, results) = types::function_type(c)?;
        op.operand_types = inputs;
        op.result_types = results;
        return Ok(());
    }
    let mut list = vec![types::ty(c, 0)?];
    while c.eat(",") {
        list.push(types::ty(c, 0)?);
    }
    if c.eat("->") {
        op.operand_types = list;
        op.result_types = if c.peek() == Some(b'(') { types::paren_types(c)? } else { vec![types::ty(c, 0)?] };
        return Ok(());
    }
    if op.name == "stablehlo.select" && list.len() == 2 {
        // `select %p, %a, %b : pred_type, value_type`.
        op.result_types = vec![list[1].clone()];
        op.operand_types = list;
        return Ok(());
    }
    op.result_types = list;
    Ok(())
}

/// `[0:2, 1:3:2]` → start_indices, limit_indices, strides.
fn slice_ranges<'a>(c: &mut Cursor<'a>, op: &mut Op<'a>) -> R<()> {
    let at = c.pos;
    let (s, e) = c.balanced()?;
    let mut inner = c.span(s, e);
    let (mut start, mut limit, mut stride) = (Vec::new(), Vec::new(), Vec::new());
    let text = c.text();
    if !inner.at_end() {
        loop {
            start.push(inner.number_text()?);
            inner.expect(":")?;
            limit.push(inner.number_text()?);
            stride.push(if inner.eat(":") { inner.number_text()? } else { "1" });
            if inner.at_end() {
                break;
            }
            inner.expect(",")?;
        }
    }
    let _ = (at, text);
    op.attrs.push(("start_indices", Attr::DenseArray(start)));
    op.attrs.push(("limit_indices", Attr::DenseArray(limit)));
    op.attrs.push(("strides", Attr::DenseArray(stride)));
    Ok(())
}

/// `(%lhs, %rhs) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window =
/// {stride = [..], pad = [[..]], lhs_dilate = [..], rhs_dilate = [..],
/// reverse = [..]} {attrs} : signature`.
fn convolution<'a>(c: &mut Cursor<'a>, op: &mut Op<'a>) -> R<()> {
    parenthesized_operands(c, op)?;
    loop {
        let mut probe = *c;
        let Ok(key) = probe.ident() else { break };
        if !probe.peek_str("=") {
            break;
        }
        *c = probe;
        c.expect("=")?;
        match key {
            "dim_numbers" => {
                let start = c.pos;
                // Up to the `,` or `{` or `:` after `->[...]`.
                c.expect("[")?;
                c.pos -= 1;
                for part in 0..3 {
                    c.balanced()?;
                    if part == 0 {
                        c.expect_keyword("x")?;
                    } else if part == 1 {
                        c.expect("->")?;
                    }
                }
                op.attrs.push(("dimension_numbers", Attr::Raw("conv", (start, c.pos))));
            }
            "window" => {
                for (k, v) in attr::dict(c, 0)? {
                    let name = match k {
                        "stride" => "window_strides",
                        "pad" => "padding",
                        "lhs_dilate" => "lhs_dilation",
                        "rhs_dilate" => "rhs_dilation",
                        "reverse" => "window_reversal",
                        other => other,
                    };
                    op.attrs.push((name, v));
                }
            }
            other => op.attrs.push((other, attr::value(c, false, 0)?)),
        }
        if !c.eat(",") {
            break;
        }
    }
    if c.peek() == Some(b'{') {
        op.attrs.extend(attr::dict(c, 0)?);
    }
    c.expect(":")?;
    signature(c, op)
}

/// `(%a init: %i), (%b init: %j) [applies OP] across dimensions = [..]
/// [{attrs}] : signature [reducer(%x: t, %y: t) (..) { body }]`.
fn reduce<'a>(c: &mut Cursor<'a>, op: &mut Op<'a>, depth: usize) -> R<()> {
    let mut inits = Vec::new();
    loop {
        c.expect("(")?;
        op.operands.push(use_(c)?);
        c.expect_keyword("init")?;
        c.expect(":")?;
        inits.push(use_(c)?);
        c.expect(")")?;
        if !c.eat(",") {
            break;
        }
    }
    let n = op.operands.len();
    op.operands.extend(inits);
    let applies = if c.eat_keyword("applies") { Some((c.pos, c.ident()?)) } else { None };
    c.expect_keyword("across")?;
    c.expect_keyword("dimensions")?;
    c.expect("=")?;
    op.attrs.push(("dimensions", attr::value(c, false, 0)?));
    if c.peek() == Some(b'{') {
        op.attrs.extend(attr::dict(c, 0)?);
    }
    c.expect(":")?;
    signature(c, op)?;
    if let Some((at, body_op)) = applies {
        // `applies stablehlo.add`: a body of that one op on the scalars.
        let scalar = |t: &Ty| t.elem().map(Ty::scalar);
        let tys: Vec<Ty> = op.operand_types.iter().take(n).filter_map(scalar).collect();
        if n != 1 || tys.len() != 1 {
            return Err(c.error_at(at, "`applies` needs exactly one input with a tensor type"));
        }
        let t = tys[0].clone();
        let use_of = |name| syntax::Use { name, index: None, at };
        let inner = Op {
            results: vec![("%applies", 1)],
            name: body_op,
            operands: vec![use_of("%lhs"), use_of("%rhs")],
            result_types: vec![t.clone()],
            operand_types: vec![t.clone(), t.clone()],
            at,
            ..Op::default()
        };
        let ret = Op { name: "stablehlo.return", operands: vec![use_of("%applies")], at, ..Op::default() };
        op.regions.push(Region { args: vec![("%lhs", t.clone()), ("%rhs", t)], ops: vec![inner, ret], at });
        return Ok(());
    }
    c.expect_keyword("reducer")?;
    let mut pairs = Vec::new();
    while c.peek() == Some(b'(') {
        pairs.push(syntax::arg_list(c, false)?);
    }
    let mut r = region(c, depth + 1)?;
    let (mut lhs, mut rhs) = (Vec::new(), Vec::new());
    for p in pairs {
        let mut it = p.into_iter();
        match (it.next(), it.next(), it.next()) {
            (Some(a), Some(b), None) => {
                lhs.push(a);
                rhs.push(b);
            }
            _ => return Err(c.error("each `reducer` argument group is a pair")),
        }
    }
    lhs.extend(rhs);
    r.args = lhs;
    op.regions.push(r);
    Ok(())
}

/// `(%iterArg = %x, ...) [attributes {..}] : t, ... cond { .. } do { .. }`.
fn while_<'a>(c: &mut Cursor<'a>, op: &mut Op<'a>, depth: usize) -> R<()> {
    c.expect("(")?;
    let mut names = Vec::new();
    if !c.eat(")") {
        loop {
            names.push(c.sigil_name(b'%')?);
            c.expect("=")?;
            op.operands.push(use_(c)?);
            if c.eat(")") {
                break;
            }
            c.expect(",")?;
        }
    }
    if c.eat_keyword("attributes") {
        op.attrs.extend(attr::dict(c, 0)?);
    }
    let mut tys = Vec::new();
    if c.eat(":") {
        loop {
            tys.push(types::ty(c, 0)?);
            if !c.eat(",") {
                break;
            }
        }
    }
    if tys.len() != names.len() {
        return Err(c.error(format!("`while` has {} loop values but {} types", names.len(), tys.len())));
    }
    let args: Vec<(&str, Ty)> = names.into_iter().zip(tys.iter().cloned()).collect();
    c.expect_keyword("cond")?;
    let mut cond = region(c, depth + 1)?;
    c.expect_keyword("do")?;
    let mut body = region(c, depth + 1)?;
    cond.args = args.clone();
    body.args = args;
    op.regions = vec![cond, body];
    op.operand_types = tys.clone();
    op.result_types = tys;
    Ok(())
}
