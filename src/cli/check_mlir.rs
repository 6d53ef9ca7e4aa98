//! The StableHLO half of `xlaref check`: test files of StableHLO's own
//! suite (`stablehlo_suite.rs`), one line per failing or skipped module.

use std::time::Duration;

use super::LimitArgs;
use crate::harness::engine::Engine;
use crate::harness::stablehlo_suite::{run_file, FileReport, ModuleOutcome, ModuleReport, SuiteOptions};
use crate::harness::stablehlo_table;

/// Counts of a `check` run: cases and modules, once per engine.
#[derive(Default, Debug)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

/// The StableHLO files of one `check` run, and their reports for the table.
pub struct MlirRun<'a> {
    engines: &'a [&'a dyn Engine],
    options: SuiteOptions,
    verbose: bool,
    reports: Vec<FileReport>,
}

impl<'a> MlirRun<'a> {
    pub fn new(engines: &'a [&'a dyn Engine], limits: &LimitArgs, run_disabled: bool, verbose: bool) -> MlirRun<'a> {
        let mut options = SuiteOptions { run_disabled, ..SuiteOptions::default() };
        options.limits.max_elements = limits.max_elements;
        options.limits.max_while_trips = limits.max_while_trips;
        options.timeout = limits.timeout.map(|s| Duration::from_secs_f64(s.clamp(0.0, 1e9))).or(options.timeout);
        MlirRun { engines, options, verbose, reports: Vec::new() }
    }

    /// Runs one file, prints its lines, adds to the tally.
    pub fn run_file(&mut self, shown: &str, text: &str, tally: &mut Tally) {
        let report = run_file(shown, text, self.engines, &self.options);
        for module in &report.modules {
            self.print_module(shown, module, tally);
        }
        self.reports.push(report);
    }

    fn print_module(&self, shown: &str, module: &ModuleReport, tally: &mut Tally) {
        let at = format!("{shown}:{} @{}", module.line, module.name);
        // Skips and rejections come before any engine ran: say them once.
        let mut said_once = false;
        for (engine, outcome) in &module.outcomes {
            match outcome {
                ModuleOutcome::Passed => {
                    tally.passed += 1;
                    if self.verbose {
                        out!("ok   {at} [{engine}]");
                    }
                }
                ModuleOutcome::Failed(failure) => {
                    tally.failed += 1;
                    out!("FAIL {at} [{engine}]: {failure}");
                }
                ModuleOutcome::Rejected(rejection) => {
                    tally.failed += 1;
                    if !std::mem::replace(&mut said_once, true) {
                        out!("FAIL {at}: rejected: {rejection}");
                    }
                }
                ModuleOutcome::Skipped(reason) => {
                    tally.skipped += 1;
                    if !std::mem::replace(&mut said_once, true) {
                        out!("SKIP {at}: {reason}");
                    }
                }
            }
        }
    }

    /// The per-family table of the files run so far (Markdown).
    pub fn table(&self) -> String {
        let engines: Vec<&str> = self.engines.iter().map(|e| e.name()).collect();
        stablehlo_table::markdown(&self.reports, &engines)
    }
}
