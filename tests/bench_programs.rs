//! `xlaref bench --programs DIR` on a program directory as
//! `tools/program_bench.py` writes one, run as a subprocess: a bf16
//! program, whose `.npy` files hold raw two-byte elements (`|V2`, as
//! NumPy writes `ml_dtypes.bfloat16`), judged against XLA's result within
//! the manifest's tolerance.

use std::path::Path;
use std::process::Command;

/// A version 1.0 `.npy` of raw two-byte elements.
fn npy_v2(dims: &str, bits: &[u16]) -> Vec<u8> {
    let mut header = format!("{{'descr': '|V2', 'fortran_order': False, 'shape': ({dims}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    for b in bits {
        out.extend(b.to_le_bytes());
    }
    out
}

/// A directory with `neg`: the negation of a bf16[4], XLA's result
/// `want` (bits) and an absolute tolerance `atol`.
fn program(dir: &Path, want: &[u16], atol: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let hlo = "HloModule neg\n\nENTRY main {\n  x = bf16[4]{0} parameter(0)\n  ROOT n = bf16[4]{0} negate(x)\n}\n";
    std::fs::write(dir.join("neg.hlo"), hlo).unwrap();
    // 1, -2, 0.5, 3
    std::fs::write(dir.join("neg.arg0.npy"), npy_v2("4,", &[0x3F80, 0xC000, 0x3F00, 0x4040])).unwrap();
    std::fs::write(dir.join("neg.out0.npy"), npy_v2("4,", want)).unwrap();
    let manifest = format!(
        r#"{{"name": "neg", "args": 1, "results": 1, "tuple": false, "tolerance": {{"atol": {atol}, "rtol": 0}},
            "xla": {{"run_ms": 0.01, "compile_ms": 5, "first_call_ms": 5}}}}"#
    );
    std::fs::write(dir.join("neg.json"), manifest).unwrap();
}

fn bench(dir: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xlaref"))
        .args(["bench", "--quick", "--no-reference", "--programs"])
        .arg(dir)
        .output()
        .expect("xlaref runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_bf16_result_is_judged_within_the_tolerance() {
    let base = std::env::temp_dir().join(format!("xlaref-bench-programs-{}", std::process::id()));
    // XLA's -3 one bf16 step off (-3.015625): within atol 0.02, not bit for bit.
    let near = base.join("near");
    program(&near, &[0xBF80, 0x4000, 0xBF00, 0xC041], 0.02);
    let (code, text) = bench(&near);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ok (0.78)"), "{text}");
    // Beyond it: a mismatch, and the run fails.
    let far = base.join("far");
    program(&far, &[0xBF80, 0x4000, 0xBF00, 0xC041], 0.01);
    let (code, text) = bench(&far);
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("MISMATCH (1.562e0)"), "{text}");
    let _ = std::fs::remove_dir_all(&base);
}
