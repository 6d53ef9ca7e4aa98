//! Custom calls. JAX on CPU lowers `jnp.linalg` to LAPACK custom calls
//! (`lapack_?getrf_ffi`, `lapack_?potrf_ffi`, `lapack_?trsm_ffi`, ...).
//! `trsm`'s meaning is an op of the document, so it is mapped onto
//! TriangularSolve; the others (potrf included: its `info` is real) stay
//! CustomCalls, with the backend config (`{uplo = 76 : ui8}`, 'L') as the
//! opaque string, for the registry's built-in LAPACK targets.

use serde_json::{json, Value};

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
    if lapack == Some("trsm") {
        let left_side = lapack_flag(instr, "side").unwrap_or('L') == 'L';
        let lower = lapack_flag(instr, "uplo").unwrap_or('L') == 'L';
        let unit_diagonal = lapack_flag(instr, "diag").unwrap_or('N') == 'U';
        let transpose_a = match lapack_flag(instr, "trans_x").unwrap_or('N') {
            'T' => "TRANSPOSE",
            'C' => "ADJOINT",
            _ => "NO_TRANSPOSE",
        };
        out.set("left_side", json!(left_side)).set("lower", json!(lower)).set("unit_diagonal", json!(unit_diagonal));
        return Ok(vec![out.set("transpose_a", json!(transpose_a)).op("TriangularSolve")]);
    }
    let config = instr.attr("backend_config").unwrap_or("").trim_matches('"');
    out.set("target_name", json!(target)).set("shape", json!(instr.shape)).set("backend_config", json!(config));
    Ok(vec![out.op("CustomCall")])
}
