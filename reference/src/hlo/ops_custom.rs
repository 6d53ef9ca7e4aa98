//! Custom calls. JAX on CPU lowers `jnp.linalg.cholesky` and
//! `jax.scipy.linalg.solve_triangular` to LAPACK custom calls
//! (`lapack_?potrf_ffi`, `lapack_?trsm_ffi`) whose meaning is an op of the
//! document; those are mapped onto Cholesky and TriangularSolve. The LAPACK
//! flags are characters in the backend config (`uplo = 76 : ui8` is 'L').
//! Any other target stays a CustomCall for the registry to resolve.

use serde_json::{json, Value};

use super::literal::tuple_elements;
use super::ops::Out;
use super::parse::Instr;
use super::HloError;

/// The LAPACK character flag `key` of the backend config, e.g. `uplo`.
fn lapack_flag(instr: &Instr, key: &str) -> Option<char> {
    let config = instr.attr("backend_config")?;
    let at = config.find(&format!("{key} ="))?;
    let value = config[at..].split('=').nth(1)?.trim().split(|c: char| !c.is_ascii_digit()).next()?;
    value.parse::<u8>().ok().map(char::from)
}

pub fn custom_call(instr: &Instr, mut out: Out) -> Result<Vec<Value>, HloError> {
    let target = instr.attr("custom_call_target").ok_or_else(|| instr.error("custom-call needs custom_call_target="))?.trim_matches('"');
    let lapack = target.strip_prefix("lapack_").and_then(|t| t.strip_suffix("_ffi")).map(|t| t.get(1..).unwrap_or(""));
    match lapack {
        Some("potrf") => potrf(instr, out),
        Some("trsm") => {
            let left_side = lapack_flag(instr, "side").unwrap_or('L') == 'L';
            let lower = lapack_flag(instr, "uplo").unwrap_or('L') == 'L';
            let unit_diagonal = lapack_flag(instr, "diag").unwrap_or('N') == 'U';
            let transpose_a = match lapack_flag(instr, "trans_x").unwrap_or('N') {
                'T' => "TRANSPOSE",
                'C' => "ADJOINT",
                _ => "NO_TRANSPOSE",
            };
            out.set("left_side", json!(left_side)).set("lower", json!(lower)).set("unit_diagonal", json!(unit_diagonal));
            Ok(vec![out.set("transpose_a", json!(transpose_a)).op("TriangularSolve")])
        }
        _ => {
            let config = instr.attr("backend_config").unwrap_or("").trim_matches('"');
            out.set("target_name", json!(target)).set("shape", json!(instr.shape)).set("backend_config", json!(config));
            Ok(vec![out.op("CustomCall")])
        }
    }
}

/// `potrf` returns `(factor, info)`: the factor is Cholesky's, and `info`
/// (LAPACK's failure position) is 0, as JAX then keeps the factor; the
/// document leaves a non-positive-definite input's result to the
/// implementation.
fn potrf(instr: &Instr, mut out: Out) -> Result<Vec<Value>, HloError> {
    let parts = tuple_elements(&instr.shape).ok_or_else(|| instr.error("lapack potrf returns (factor, info)"))?;
    let [factor, info] = parts[..] else { return Err(instr.error("lapack potrf returns (factor, info)")) };
    let lower = lapack_flag(instr, "uplo").unwrap_or('L') == 'L';
    let (chol, zero) = (format!("{}/cholesky", instr.name), format!("{}/info", instr.name));
    let cholesky = out.set("name", json!(chol)).set("shape", json!(factor)).set("lower", json!(lower)).op("Cholesky");
    let info_dims = super::literal::array_shape(info).map(|(_, d)| d).unwrap_or_default();
    let zeros = info_dims.iter().rev().fold(json!(0), |inner, &d| Value::Array(vec![inner; usize::try_from(d).unwrap_or(0)]));
    let info_value = json!({"name": zero, "op": "Constant", "operands": [], "shape": info, "literal": zeros});
    let tuple = json!({"name": instr.name, "op": "Tuple", "operands": [chol, zero], "shape": instr.shape});
    Ok(vec![cholesky, info_value, tuple])
}
