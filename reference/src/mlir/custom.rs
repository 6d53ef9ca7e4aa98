//! `stablehlo.custom_call`. JAX on CPU lowers `jnp.linalg` to LAPACK
//! custom calls (`lapack_?getrf_ffi`, `lapack_?potrf_ffi`, ...). `trsm`'s
//! meaning is an op of the document, TriangularSolve, as the HLO importer
//! reads it (docs/hlo-import.md); the others stay CustomCalls for the
//! registry, whose built-in LAPACK targets implement them. The LAPACK
//! flags are characters in `mhlo.backend_config` (`uplo = 76 : ui8` is
//! 'L'); the CustomCall's opaque string carries them as `{uplo = 76}`.
//! A `trsm` whose flags are in a `backend_config` string (what
//! `xlaref export` writes for an xla-json CustomCall) stays a CustomCall.

use serde_json::json;

use super::attr::Attr;
use super::func::Ctx;
use super::ops::{finish, int_value, Out};
use super::syntax::{Op, R};
use super::types::Ty;

/// The LAPACK character flag `key` of the op's `mhlo.backend_config`.
fn lapack_flag(ctx: &Ctx, op: &Op, key: &str, default: char) -> R<char> {
    match op.attr("mhlo.backend_config").and_then(|c| c.field(key)) {
        Some(v) => Ok(char::from(int_value(ctx, op.at, key, v)?.clamp(0, 127) as u8)),
        None => Ok(default),
    }
}

pub fn custom_call<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, names: Vec<String>) -> R<()> {
    let target = match op.attr("call_target_name") {
        Some(Attr::Symbol(s)) => s.trim_start_matches('@').trim_matches('"').to_string(),
        Some(Attr::Str(s)) => s.clone(),
        _ => return Err(ctx.err(op.at, "custom_call needs a target")),
    };
    let lapack = target.strip_prefix("lapack_").and_then(|t| t.strip_suffix("_ffi")).map(|t| t.get(1..).unwrap_or(""));
    let mut out = Out::new();
    // JAX writes the flags in `mhlo.backend_config`; a `backend_config`
    // string is xlaref's own export of an xla-json CustomCall, which stays
    // one (the round trip keeps the target).
    let exported = matches!(op.attr("backend_config"), Some(Attr::Str(s)) if !s.is_empty());
    if lapack == Some("trsm") && !exported {
        let transpose_a = match lapack_flag(ctx, op, "trans_x", 'N')? {
            'T' => "TRANSPOSE",
            'C' => "ADJOINT",
            _ => "NO_TRANSPOSE",
        };
        out.set("left_side", json!(lapack_flag(ctx, op, "side", 'L')? == 'L'))
            .set("lower", json!(lapack_flag(ctx, op, "uplo", 'L')? == 'L'))
            .set("unit_diagonal", json!(lapack_flag(ctx, op, "diag", 'N')? == 'U'))
            .set("transpose_a", json!(transpose_a));
        return finish(ctx, op, out, "TriangularSolve", names, true);
    }
    let shape = match op.result_types.as_slice() {
        [t] => t.shape(),
        tys => Ty::Tuple(tys.to_vec()).shape(),
    };
    out.set("target_name", json!(target)).set("shape", json!(shape));
    let opaque = match (op.attr("backend_config"), op.attr("mhlo.backend_config")) {
        (Some(Attr::Str(s)), _) if !s.is_empty() => s.clone(),
        (_, Some(Attr::Dict(fields))) if !fields.is_empty() => config_text(ctx, op.at, fields)?,
        _ => String::new(),
    };
    if !opaque.is_empty() {
        out.set("opaque", json!(opaque));
    }
    finish(ctx, op, out, "CustomCall", names, false)
}

/// `mhlo.backend_config`'s integer fields as the text XLA's HLO writes
/// (`{uplo = 76 : ui8}` is written `{uplo = 76}`): what the LAPACK targets
/// read their flags from (custom_call/lapack_abi.rs). Other fields are
/// left out.
fn config_text(ctx: &Ctx, at: usize, fields: &[(&str, Attr)]) -> R<String> {
    let mut parts = Vec::new();
    for (key, value) in fields {
        if matches!(value, Attr::Number(_) | Attr::Bool(_)) {
            parts.push(format!("{key} = {}", int_value(ctx, at, key, value)?));
        }
    }
    Ok(format!("{{{}}}", parts.join(", ")))
}
