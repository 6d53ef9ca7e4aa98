//! `stablehlo.custom_call`. JAX on CPU lowers `jnp.linalg.cholesky` and
//! `jax.scipy.linalg.solve_triangular` to LAPACK custom calls
//! (`lapack_?potrf_ffi`, `lapack_?trsm_ffi`) whose meaning is an op of the
//! document: Cholesky and TriangularSolve, as the HLO importer reads them
//! (docs/hlo-import.md). The LAPACK flags are characters in
//! `mhlo.backend_config` (`uplo = 76 : ui8` is 'L'). Any other target
//! stays a CustomCall for the registry to resolve.

use serde_json::{json, Map};

use super::attr::Attr;
use super::func::Ctx;
use super::ops::{bind_results, finish, int_value, Out};
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
    match lapack {
        Some("potrf") => return potrf(ctx, op, names),
        Some("trsm") => {
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
        _ => {}
    }
    let shape = match op.result_types.as_slice() {
        [t] => t.shape(),
        tys => Ty::Tuple(tys.to_vec()).shape(),
    };
    out.set("target_name", json!(target)).set("shape", json!(shape));
    if let Some(Attr::Str(s)) = op.attr("backend_config") {
        out.set("opaque", json!(s));
    }
    finish(ctx, op, out, "CustomCall", names, false)
}

/// `potrf` returns `(factor, info)`: the factor is Cholesky's, and `info`
/// (LAPACK's failure position) is 0, as JAX then keeps the factor; the
/// document leaves a non-positive-definite input's result to the
/// implementation.
fn potrf<'a>(ctx: &mut Ctx<'a>, op: &'a Op<'a>, names: Vec<String>) -> R<()> {
    let [factor, info] = op.result_types.as_slice() else {
        return Err(ctx.err(op.at, "lapack potrf returns (factor, info)"));
    };
    let lower = lapack_flag(ctx, op, "uplo", 'L')? == 'L';
    let base = op.results.first().map_or("potrf", |r| r.0).trim_start_matches('%').to_string();
    let chol = ctx.scope().fresh(&format!("{base}.cholesky"));
    let mut m = Map::new();
    m.insert("lower".into(), json!(lower));
    m.insert("shape".into(), json!(factor.shape()));
    ctx.emit(m, &chol, "Cholesky", names);
    let zero = ctx.scope().fresh(&format!("{base}.info"));
    let elem = info.elem().ok_or_else(|| ctx.err(op.at, "potrf's info is a tensor"))?;
    let scalar = ctx.scope().fresh(&format!("{base}.zero"));
    let mut m = Map::new();
    m.insert("shape".into(), json!(Ty::scalar(elem).shape()));
    m.insert("literal".into(), json!(0));
    ctx.emit(m, &scalar, "Constant", vec![]);
    let mut m = Map::new();
    m.insert("out_dim_size".into(), json!(info.dims()));
    m.insert("broadcast_dimensions".into(), json!([]));
    ctx.emit(m, &zero, "BroadcastInDim", vec![scalar]);
    let tuple = ctx.scope().fresh(&base);
    ctx.emit(Map::new(), &tuple, "Tuple", vec![chol, zero]);
    bind_results(ctx, op, tuple, op.result_types.clone())
}
