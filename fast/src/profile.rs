//! `XLAREF_FAST_PROFILE=1`: where a run's time goes, instruction by
//! instruction. The executor times each instruction it runs (a fusion
//! group as its root, a Call or While as the whole call) and, when the run
//! ends, prints the instructions that took longest to stderr, with the
//! time of all others summed. Off, it costs one branch per instruction.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use xlaref_reference::ir::{ComputationId, InstrId};
use xlaref_reference::verify::VerifiedModule;

/// Rows the report prints before summing the rest.
const ROWS: usize = 25;

/// Whether `XLAREF_FAST_PROFILE` asks for a profile (any value but `0`,
/// `off` or `no`).
pub fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("XLAREF_FAST_PROFILE").is_ok_and(|v| !matches!(v.as_str(), "" | "off" | "0" | "no")))
}

/// Per instruction: total time and how many times it ran; per group root,
/// how many members its group has.
#[derive(Default)]
pub struct Profile {
    spent: HashMap<(ComputationId, InstrId), (Duration, u64, usize)>,
}

impl Profile {
    /// Adds one run of instruction `i` of computation `c` that started at
    /// `since` (`members`: the size of the group it is the root of, or 1).
    pub fn add(&mut self, c: ComputationId, i: InstrId, since: Instant, members: usize) {
        let e = self.spent.entry((c, i)).or_insert((Duration::ZERO, 0, members));
        e.0 += since.elapsed();
        e.1 += 1;
    }

    /// The report: the longest instructions first. Written without
    /// `eprintln!`, which panics when stderr's reader has gone (`2>&1 |
    /// head`): a report nobody reads is dropped.
    pub fn print(&self, module: &VerifiedModule) {
        use std::io::Write;
        let mut rows: Vec<_> = self.spent.iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1 .0));
        let mut err = std::io::stderr().lock();
        let mut lines = vec!["fast engine profile (XLAREF_FAST_PROFILE): the longest instructions".to_string()];
        lines.push(format!("{:>10}  {:>6}  instruction", "ms", "runs"));
        for (&(c, i), &(t, runs, members)) in rows.iter().take(ROWS) {
            let instr = &module.computation(c).instructions[i];
            let group = if members > 1 { format!(" (fused group of {members})") } else { String::new() };
            lines.push(format!(
                "{:>10.3}  {:>6}  {} = {} {}{group}",
                t.as_secs_f64() * 1e3,
                runs,
                instr.name,
                instr.op.name(),
                module.shape(c, i)
            ));
        }
        let rest: Duration = rows.iter().skip(ROWS).map(|r| r.1 .0).sum();
        if rows.len() > ROWS {
            lines.push(format!("{:>10.3}  {:>6}  the other {} instructions", rest.as_secs_f64() * 1e3, "", rows.len() - ROWS));
        }
        for line in lines {
            if writeln!(err, "{line}").is_err() {
                return;
            }
        }
    }
}
