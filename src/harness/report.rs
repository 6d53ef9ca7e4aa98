//! Conformance reports: the terminal table, the Markdown report and the
//! JSON report of `xlaref conform`, and `xlaref report merge`, which joins
//! the JSON reports of the shards of one campaign into the report of the
//! whole.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::conformance::{tally, totals, CaseResult, Verdict};

/// What a report says about the run besides its cases.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunInfo {
    /// The backend's name and version.
    pub backend: String,
    pub seconds: f64,
    /// Why the run stopped before its last case, if it did.
    pub stopped: Option<String>,
    /// `K/N` for one shard of a campaign; several for a merged report.
    pub shards: Vec<String>,
}

/// A report: the run and its cases.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub info: RunInfo,
    pub results: Vec<CaseResult>,
}

/// The columns that are non-zero somewhere (always `passed`).
fn columns(results: &[CaseResult]) -> Vec<Verdict> {
    let t = totals(results);
    Verdict::ALL.into_iter().filter(|v| *v == Verdict::Passed || t.contains_key(v)).collect()
}

/// The per-op table for the terminal (ops where everything passed left out).
pub fn terminal_table(results: &[CaseResult]) -> String {
    let cols = columns(results);
    let width = tally(results).keys().map(String::len).max().unwrap_or(2).max(5);
    let mut s = format!("{:width$}", "op");
    for c in &cols {
        let _ = write!(s, " {:>11}", c.short());
    }
    s.push('\n');
    let row = |s: &mut String, name: &str, counts: &BTreeMap<Verdict, usize>| {
        let _ = write!(s, "{name:width$}");
        for c in &cols {
            match counts.get(c) {
                Some(n) => {
                    let _ = write!(s, " {n:>11}");
                }
                None => {
                    let _ = write!(s, " {:>11}", ".");
                }
            }
        }
        s.push('\n');
    };
    for (op, counts) in tally(results) {
        if counts.keys().any(|v| *v != Verdict::Passed) {
            row(&mut s, &op, &counts);
        }
    }
    row(&mut s, "total", &totals(results));
    s
}

/// The one-line summary: `N cases in T s: A passed, B failed, ...`.
pub fn summary(report: &Report) -> String {
    let t = totals(&report.results);
    let counts: Vec<String> = Verdict::ALL.iter().filter_map(|v| t.get(v).map(|n| format!("{n} {}", v.name()))).collect();
    let stopped = report.info.stopped.as_ref().map(|s| format!(" (stopped early: {s})")).unwrap_or_default();
    format!("{} cases in {:.1} s: {}{stopped}", report.results.len(), report.info.seconds, counts.join(", "))
}

pub fn markdown(report: &Report) -> String {
    let results = &report.results;
    let cols = columns(results);
    let mut s = format!("# Conformance of {} against the xlaref reference\n\n", report.info.backend);
    let _ = writeln!(s, "{} cases in {:.1} s.\n", results.len(), report.info.seconds);
    if let Some(why) = &report.info.stopped {
        let _ = writeln!(s, "**The run stopped early ({why}): this report covers the cases that finished.**\n");
    }
    if !report.info.shards.is_empty() {
        let _ = writeln!(s, "Shards: {}.\n", report.info.shards.join(", "));
    }
    s.push_str("| op |");
    for c in &cols {
        let _ = write!(s, " {} |", c.name());
    }
    s.push_str("\n|---|");
    for _ in &cols {
        s.push_str("---:|");
    }
    s.push('\n');
    let row = |s: &mut String, name: &str, counts: &BTreeMap<Verdict, usize>| {
        let _ = write!(s, "| {name} |");
        for c in &cols {
            let _ = write!(s, " {} |", counts.get(c).copied().unwrap_or(0));
        }
        s.push('\n');
    };
    for (op, counts) in tally(results) {
        row(&mut s, &op, &counts);
    }
    row(&mut s, "**total**", &totals(results));
    let others: Vec<&CaseResult> = results.iter().filter(|r| r.verdict != Verdict::Passed).collect();
    if !others.is_empty() {
        s.push_str("\n## Cases that did not pass\n\n| case | op | verdict | detail |\n|---|---|---|---|\n");
        for r in others {
            let detail = r.detail.replace('|', "\\|").replace('\n', " ");
            let _ = writeln!(s, "| `{}` | {} | {} | {} |", r.name, r.op, r.verdict.name(), truncate(&detail, 300));
        }
    }
    s
}

pub fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn counts_json(c: &BTreeMap<Verdict, usize>) -> Value {
    Value::Object(Verdict::ALL.iter().map(|v| (v.name().to_string(), Value::from(c.get(v).copied().unwrap_or(0)))).collect())
}

pub fn to_json(report: &Report) -> Value {
    let results = &report.results;
    let mut m = Map::new();
    m.insert("backend".into(), Value::from(report.info.backend.clone()));
    m.insert("seconds".into(), Value::from((report.info.seconds * 1000.0).round() / 1000.0));
    if let Some(why) = &report.info.stopped {
        m.insert("stopped".into(), Value::from(why.clone()));
    }
    if !report.info.shards.is_empty() {
        m.insert("shards".into(), Value::from(report.info.shards.clone()));
    }
    m.insert("totals".into(), counts_json(&totals(results)));
    m.insert("ops".into(), Value::Object(tally(results).iter().map(|(op, c)| (op.clone(), counts_json(c))).collect()));
    let cases = results
        .iter()
        .map(|r| {
            let mut c = Map::new();
            c.insert("name".into(), Value::from(r.name.clone()));
            c.insert("file".into(), Value::from(r.file.clone()));
            c.insert("op".into(), Value::from(r.op.clone()));
            c.insert("verdict".into(), Value::from(r.verdict.name()));
            if !r.detail.is_empty() {
                c.insert("detail".into(), Value::from(r.detail.clone()));
            }
            Value::Object(c)
        })
        .collect();
    m.insert("cases".into(), Value::Array(cases));
    Value::Object(m)
}

/// Reads a JSON report back (the cases are the truth; totals are recounted).
pub fn from_json(v: &Value) -> Result<Report, String> {
    let text = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(String::from);
    let cases = v.get("cases").and_then(Value::as_array).ok_or("a report has a `cases` list")?;
    let results = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let field = |k: &str| text(c, k).ok_or_else(|| format!("case {i} has no `{k}`"));
            let verdict = field("verdict")?;
            Ok(CaseResult {
                name: field("name")?,
                file: text(c, "file").unwrap_or_default(),
                op: field("op")?,
                verdict: Verdict::from_name(&verdict).ok_or_else(|| format!("case {i}: unknown verdict `{verdict}`"))?,
                detail: text(c, "detail").unwrap_or_default(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let shards = match v.get("shards").and_then(Value::as_array) {
        Some(s) => s.iter().filter_map(Value::as_str).map(String::from).collect(),
        None => vec![],
    };
    let info = RunInfo {
        backend: text(v, "backend").unwrap_or_default(),
        seconds: v.get("seconds").and_then(Value::as_f64).unwrap_or(0.0),
        stopped: text(v, "stopped"),
        shards,
    };
    Ok(Report { info, results })
}

/// The report of the whole campaign from its shards' reports: cases in
/// shard order, seconds summed (machine time, not wall time), and every
/// early stop kept. Two reports holding the same case, or reports of
/// different backends, are an error: they are not shards of one run.
pub fn merge(reports: Vec<Report>) -> Result<Report, String> {
    let mut merged = Report::default();
    let mut seen = HashSet::new();
    let mut stops = Vec::new();
    for (i, r) in reports.into_iter().enumerate() {
        if i == 0 {
            merged.info.backend = r.info.backend.clone();
        } else if r.info.backend != merged.info.backend {
            return Err(format!("report {} is of backend `{}`, report 1 of `{}`", i + 1, r.info.backend, merged.info.backend));
        }
        merged.info.seconds += r.info.seconds;
        merged.info.shards.extend(r.info.shards);
        stops.extend(r.info.stopped);
        for c in r.results {
            if !seen.insert((c.file.clone(), c.name.clone())) {
                return Err(format!("case `{}` is in more than one report", c.name));
            }
            merged.results.push(c);
        }
    }
    merged.info.stopped = (!stops.is_empty()).then(|| stops.join("; "));
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, verdict: Verdict) -> CaseResult {
        CaseResult { name: name.into(), file: "f.json".into(), op: "Add".into(), verdict, detail: String::new() }
    }

    fn report(shard: &str, cases: &[(&str, Verdict)]) -> Report {
        Report {
            info: RunInfo { backend: "b".into(), seconds: 1.5, stopped: None, shards: vec![shard.into()] },
            results: cases.iter().map(|(n, v)| result(n, *v)).collect(),
        }
    }

    #[test]
    fn a_report_reads_back_as_written() {
        let mut r = report("1/2", &[("a", Verdict::Passed), ("b", Verdict::KnownDeviation)]);
        r.info.stopped = Some("SIGTERM".into());
        r.results[1].detail = "class:ftz".into();
        assert_eq!(from_json(&to_json(&r)), Ok(r));
    }

    #[test]
    fn merging_shards_joins_their_cases() {
        let merged = merge(vec![report("0/2", &[("a", Verdict::Passed)]), report("1/2", &[("b", Verdict::Failed)])]).unwrap();
        assert_eq!(merged.results.len(), 2);
        assert_eq!(merged.info.shards, ["0/2", "1/2"]);
        assert_eq!(merged.info.seconds, 3.0);
        assert_eq!(totals(&merged.results).get(&Verdict::Failed), Some(&1));
        let twice = merge(vec![report("0/2", &[("a", Verdict::Passed)]), report("1/2", &[("a", Verdict::Passed)])]);
        assert!(twice.is_err_and(|e| e.contains("more than one report")));
    }
}
