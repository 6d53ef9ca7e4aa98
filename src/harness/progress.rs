//! Progress of long runs on stderr. On a terminal, an indicatif bar; when
//! stderr is a file or a pipe (CI logs, `nohup`, Kubernetes), a plain line
//! every few seconds, since a bar there prints nothing at all.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often the plain line is printed.
const PLAIN_EVERY: Duration = Duration::from_secs(5);

pub struct Progress {
    label: &'static str,
    total: u64,
    bar: ProgressBar,
    start: Instant,
    last_line: Instant,
}

impl Progress {
    /// A progress display for `total` units of work (cases, programs; 0
    /// when the run is bounded by time); `quiet` shows nothing.
    pub fn new(label: &'static str, total: u64, quiet: bool) -> Progress {
        let (bar, template) = match (quiet, total) {
            (true, _) => (ProgressBar::hidden(), ""),
            (false, 0) => (ProgressBar::new_spinner(), "{spinner} {pos} in {elapsed_precise} {msg}"),
            (false, _) => (ProgressBar::new(total), "{bar:40} {pos}/{len} {elapsed_precise} eta {eta} {msg}"),
        };
        bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
        // Plain lines only where the bar cannot be drawn, and never when quiet.
        let plain_lines = !quiet && bar.is_hidden();
        let now = Instant::now();
        Progress { label: if plain_lines { label } else { "" }, total, bar, start: now, last_line: now }
    }

    /// Records that `done` units are finished; `message` (failures so far,
    /// say) is only formatted when it is shown.
    pub fn set(&mut self, done: u64, message: impl FnOnce() -> String) {
        if !self.bar.is_hidden() {
            self.bar.set_position(done);
            self.bar.set_message(message());
            return;
        }
        if self.label.is_empty() || self.last_line.elapsed() < PLAIN_EVERY {
            return;
        }
        self.last_line = Instant::now();
        eprintln!("{}", self.plain_line(done, &message()));
    }

    fn plain_line(&self, done: u64, message: &str) -> String {
        let seconds = self.start.elapsed().as_secs_f64();
        let rate = done as f64 / seconds.max(1e-9);
        let message = if message.is_empty() { String::new() } else { format!(", {message}") };
        if self.total == 0 {
            return format!("{}: {done} in {}, {rate:.1}/s{message}", self.label, clock(seconds));
        }
        let eta =
            if rate > 0.0 && done < self.total { format!(", eta {}", clock((self.total - done) as f64 / rate)) } else { String::new() };
        let percent = 100.0 * done as f64 / self.total as f64;
        format!("{}: {done}/{} ({percent:.0}%) in {}, {rate:.1}/s{eta}{message}", self.label, self.total, clock(seconds))
    }

    /// Prints a line without tearing the bar.
    pub fn println(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// `1h02m`, `3m07s`, `12s`.
fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_reads_as_a_duration() {
        assert_eq!(clock(12.4), "12s");
        assert_eq!(clock(187.0), "3m07s");
        assert_eq!(clock(3720.0), "1h02m");
    }

    #[test]
    fn the_plain_line_says_how_far_and_how_fast() {
        let p = Progress { label: "conform", total: 100, bar: ProgressBar::hidden(), start: Instant::now(), last_line: Instant::now() };
        let line = p.plain_line(25, "3 failing");
        assert!(line.starts_with("conform: 25/100 (25%) in "), "{line}");
        assert!(line.ends_with(", 3 failing"), "{line}");
    }
}
