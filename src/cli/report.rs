//! `xlaref report merge A.json B.json ...`: the JSON reports of a
//! campaign's shards (`conform --shard K/N --json`) joined into the report
//! of the whole campaign (docs/campaigns.md).

use clap::{Args, Subcommand};

use super::{read_text, EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::harness::report::{self, Report};

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(subcommand)]
    pub command: ReportCommand,
}

#[derive(Subcommand, Debug)]
pub enum ReportCommand {
    /// Join the JSON reports of a campaign's shards into one report.
    Merge(MergeArgs),
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' JSON reports (`conform --json`).
    #[arg(required = true)]
    pub reports: Vec<String>,
    /// Write the merged JSON report here.
    #[arg(long)]
    pub json: Option<String>,
    /// Write the merged Markdown report here.
    #[arg(long)]
    pub report: Option<String>,
}

pub fn run(a: ReportArgs) -> i32 {
    match a.command {
        ReportCommand::Merge(m) => merge(m),
    }
}

fn read_report(path: &str) -> Result<Report, String> {
    let text = read_text(path)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON ({e})"))?;
    report::from_json(&value).map_err(|e| format!("{path}: {e}"))
}

fn merge(a: MergeArgs) -> i32 {
    let merged = a.reports.iter().map(|p| read_report(p)).collect::<Result<Vec<_>, _>>().and_then(report::merge);
    let merged = match merged {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            return EXIT_BAD_INPUT;
        }
    };
    print!("{}", report::terminal_table(&merged.results));
    out!("{}", report::summary(&merged));
    let outputs = [
        (&a.json, serde_json::to_string_pretty(&report::to_json(&merged)).unwrap_or_default() + "\n"),
        (&a.report, report::markdown(&merged)),
    ];
    for (path, text) in outputs {
        if let Some(p) = path {
            if let Err(e) = std::fs::write(p, text) {
                eprintln!("error: cannot write {p}: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    if merged.results.iter().any(|r| r.verdict.is_failure()) {
        EXIT_FAILURE
    } else {
        0
    }
}
