//! The per-family table of a StableHLO suite run (docs/stablehlo.md): one
//! row per family of test files, counting files.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::stablehlo_suite::{FileReport, FileVerdict};

/// One row: how many files, checks, and what became of the files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    pub files: usize,
    pub checks: usize,
    /// Files that pass on each engine (`None`: the engine did not run).
    pub passed_reference: Option<usize>,
    pub passed_fast: Option<usize>,
    /// Files skipped on every engine that ran (RUN-DISABLED, no checks).
    pub skipped: usize,
    /// Files that fail on at least one engine.
    pub failed: usize,
}

/// The rows by family, in name order, and their total.
pub fn rows(reports: &[FileReport], engines: &[&str]) -> (BTreeMap<String, Row>, Row) {
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut total = Row::default();
    for report in reports {
        let row = rows.entry(report.family.clone()).or_default();
        for r in [&mut *row, &mut total] {
            add(r, report, engines);
        }
    }
    (rows, total)
}

fn add(row: &mut Row, report: &FileReport, engines: &[&str]) {
    row.files += 1;
    row.checks += report.checks();
    let verdicts: Vec<FileVerdict> = engines.iter().map(|e| report.verdict(e)).collect();
    let passed_on = |name: &str| engines.iter().position(|e| *e == name).map(|i| usize::from(verdicts[i] == FileVerdict::Passed));
    if let Some(n) = passed_on("reference") {
        *row.passed_reference.get_or_insert(0) += n;
    }
    if let Some(n) = passed_on("fast") {
        *row.passed_fast.get_or_insert(0) += n;
    }
    if verdicts.iter().all(|v| *v == FileVerdict::Skipped) {
        row.skipped += 1;
    } else if verdicts.contains(&FileVerdict::Failed) {
        row.failed += 1;
    }
}

/// The table as Markdown.
pub fn markdown(reports: &[FileReport], engines: &[&str]) -> String {
    let (rows, total) = rows(reports, engines);
    let mut out = String::from(
        "| family | files | checks | passed on reference | passed on fast | skipped | failed |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let show = |n: Option<usize>| n.map_or("—".to_string(), |n| n.to_string());
    for (name, r) in rows.iter().map(|(n, r)| (format!("`{n}`"), r)).chain(std::iter::once(("**total**".to_string(), &total))) {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            r.files,
            r.checks,
            show(r.passed_reference),
            show(r.passed_fast),
            r.skipped,
            r.failed
        );
    }
    out
}
