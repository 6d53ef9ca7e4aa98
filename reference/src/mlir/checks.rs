//! StableHLO's `check` dialect (`check.expect_eq %a, %b`,
//! `check.expect_almost_eq_const %a, dense<...>`, `custom_call
//! @check.expect_close(%a, %b)`): in a test, each check reads values that
//! the entry returns; in a program, checks are read past.

use serde_json::{json, Value};

use super::attr::Attr;
use super::dense::{self, Dense};
use super::func::{Ctx, Mode};
use super::ops::int_value;
use super::syntax::{Op, R};
use super::types::Ty;
use super::{quote, Check, CheckExpected, CheckKind};

/// The check's name: `expect_eq` for `check.expect_eq` and for
/// `custom_call @check.expect_eq`.
fn check_name<'b>(op: &'b Op) -> Option<&'b str> {
    if let Some(n) = op.name.strip_prefix("check.") {
        return Some(n);
    }
    if op.name == "stablehlo.custom_call" {
        if let Some(Attr::Symbol(s)) = op.attr("call_target_name") {
            return s.trim_start_matches('@').trim_matches('"').strip_prefix("check.");
        }
    }
    None
}

pub fn is_check(op: &Op) -> bool {
    check_name(op).is_some()
}

/// Records a check (tests) or reads past it (programs).
pub fn map<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>) -> R<()> {
    if ctx.mode == Mode::Program {
        return Ok(());
    }
    let name = check_name(op).unwrap_or("");
    let line = super::cursor::Cursor::line_col(ctx.c.text(), op.at).0;
    let kind = match name.trim_end_matches("_const") {
        "expect_eq" => CheckKind::Eq,
        "expect_almost_eq" => CheckKind::AlmostEq { tolerance: float_attr(op, "tolerance") },
        "expect_close" => CheckKind::Close {
            max_ulp_difference: uint_attr(ctx, op, "max_ulp_difference")?,
            min_ulp_difference: uint_attr(ctx, op, "min_ulp_difference")?,
        },
        other => CheckKind::Other(other.to_string()),
    };
    let Some(first) = op.operands.first() else {
        return Err(ctx.err(op.at, format!("{} needs an operand", quote(op.name))));
    };
    let actual = ctx.lookup(first)?;
    let actual_index = ctx.checked.len();
    ctx.checked.push(actual.json.clone());
    let expected = if name.ends_with("_const") {
        CheckExpected::Const(constant(ctx, op, &actual.ty)?)
    } else {
        let Some(second) = op.operands.get(1) else {
            return Err(ctx.err(op.at, format!("{} needs two operands", quote(op.name))));
        };
        let v = ctx.lookup(second)?;
        ctx.checked.push(v.json.clone());
        CheckExpected::Output(actual_index + 1)
    };
    ctx.checks.push(Check { kind, line, actual: actual_index, expected });
    Ok(())
}

/// The expected constant of `expect_*_const`, as a typed literal.
fn constant(ctx: &Ctx, op: &Op, actual: &Ty) -> R<Value> {
    let value = op.attr("").or_else(|| op.attr("value"));
    let Some(Attr::Dense { body, ty }) = value else {
        return Err(ctx.err(op.at, format!("{} needs a dense<...> constant", quote(op.name))));
    };
    let ty = ty.clone().or_else(|| op.result_types.first().cloned()).unwrap_or_else(|| actual.clone());
    let v = match dense::literal(&ctx.c, *body, &ty, ctx.max_elements)? {
        Dense::Full(v) => v,
        Dense::Splat(v) if ty.element_count() <= ctx.max_elements.min(1 << 24) => splat(v, ty.dims()),
        Dense::Splat(_) => return Err(ctx.err(op.at, "an expected splat constant too large to compare")),
    };
    Ok(json!({"shape": ty.shape(), "value": v}))
}

fn splat(v: Value, dims: &[i64]) -> Value {
    match dims.split_first() {
        None => v,
        Some((&n, rest)) => Value::Array(vec![splat(v, rest); n.max(0) as usize]),
    }
}

fn float_attr(op: &Op, key: &str) -> Option<f64> {
    match op.attr(key) {
        Some(Attr::Number(t)) => t.parse().ok(),
        _ => None,
    }
}

fn uint_attr(ctx: &Ctx, op: &Op, key: &str) -> R<Option<u64>> {
    op.attr(key).map(|a| int_value(ctx, op.at, key, a).map(|v| v.max(0) as u64)).transpose()
}
