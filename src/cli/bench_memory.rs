//! `xlaref bench --memory`: the peak memory of one fast-engine run of each
//! workload, as a multiple of the bytes of its inputs and outputs (issue 5
//! asks for at most 2x).
//!
//! Each workload is measured in a child process of its own (`bench --ops
//! NAME --memory-child`), so that memory freed by earlier workloads and kept
//! by the allocator cannot hide what this one needs. The child builds the
//! instance, resets the kernel's high-water mark (`/proc/self/clear_refs`),
//! runs the engine on a copy of the arguments, and reports
//! `(VmHWM − VmRSS before the copy) / (inputs + outputs)` (the thread pool
//! is started first, so small workloads are not charged for it): the copy of the
//! inputs, the output and every temporary the engine allocated, over what a
//! run must hold anyway. Linux only; elsewhere the column reads `n/a`.

use std::process::Command;

use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::literal::Literal;

use super::bench::Instance;
use crate::harness::engine::{Engine, Fast};

/// The line a child prints, followed by the ratio.
const MARK: &str = "peak-memory-ratio";

fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bytes(l: &Literal) -> u64 {
    match l {
        Literal::Array(a) => (a.element_count() * a.element_type().byte_width()) as u64,
        Literal::Tuple(items) => items.iter().map(bytes).sum(),
        Literal::Token => 0,
    }
}

/// In the child: runs the instance once on the fast engine and prints the ratio.
pub fn child(inst: &Instance) -> Result<f64, String> {
    // The worker threads' first touches of their stacks are a fixed cost of
    // the process, not of the op: start them before the mark is reset.
    rayon::broadcast(|_| ());
    std::fs::write("/proc/self/clear_refs", "5").map_err(|e| format!("cannot reset the high-water mark: {e}"))?;
    let before = status_kib("VmRSS:").ok_or("no /proc/self/status")?;
    let mut env = Env::new(Limits { max_elements: 1 << 30, ..Limits::default() });
    let result = Fast.run(&inst.module, inst.args.clone(), &mut env).map_err(|e| e.to_string())?;
    let peak = status_kib("VmHWM:").ok_or("no /proc/self/status")?;
    let needed = inst.args.iter().map(bytes).sum::<u64>() + bytes(&result);
    let ratio = (peak.saturating_sub(before) * 1024) as f64 / needed.max(1) as f64;
    out!("{MARK} {ratio}");
    Ok(ratio)
}

/// In the parent: the ratio for workload `name`, measured in a child.
pub fn measure(name: &str, quick: bool) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "--ops", name, "--no-reference", "--memory-child"]);
    if quick {
        cmd.arg("--quick");
    }
    let out = cmd.output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().find_map(|l| l.strip_prefix(MARK)).and_then(|r| r.trim().parse().ok())
}
