//! Campaigns as users run them, as subprocesses: sharding (the shards
//! together are exactly the unsharded run), `report merge`, a run stopped
//! by SIGTERM that still writes its report, progress lines when stderr is
//! not a terminal, a backend that cannot start, and `--failures` keeping
//! known deviations apart. Deviation classes matched on values are checked
//! in process (a backend that multiplies Conv's padding).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use xlaref::harness::backend::{Backend, Reply};
use xlaref::harness::case::{read_case, Case, RunOptions};
use xlaref::harness::conformance::{check_all, Known, LoadedCase, Verdict};
use xlaref_reference::json::Path as JsonPath;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};

fn xlaref() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xlaref"))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xlaref-campaign-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_default()).unwrap_or(Value::Null)
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// (name, verdict) of every case of a JSON report.
fn verdicts(report: &Value) -> BTreeSet<(String, String)> {
    let cases = report["cases"].as_array().cloned().unwrap_or_default();
    cases.iter().map(|c| (c["name"].as_str().unwrap_or("").to_string(), c["verdict"].as_str().unwrap_or("").to_string())).collect()
}

#[test]
fn shards_together_are_the_unsharded_run_and_merge_into_its_report() {
    let run = |tag: &str, shard: Option<&str>| {
        let json = temp(&format!("shard-{tag}.json"));
        let mut cmd = xlaref();
        cmd.args(["conform", "--backend", "engine:fast", "oracle-cases/dot", "--generate", "40", "--seed", "5", "--json"]).arg(&json);
        if let Some(s) = shard {
            cmd.args(["--shard", s]);
        }
        let out = cmd.output().expect("xlaref runs");
        assert!(out.status.success(), "{}", text(&out));
        json
    };
    let whole = read_json(&run("whole", None));
    let parts: Vec<PathBuf> = (0..3).map(|k| run(&k.to_string(), Some(&format!("{k}/3")))).collect();
    let mut union = BTreeSet::new();
    let mut count = 0;
    for p in &parts {
        let v = verdicts(&read_json(p));
        count += v.len();
        union.extend(v);
    }
    assert!(verdicts(&whole).len() > 40, "oracle cases and programs");
    assert_eq!(count, verdicts(&whole).len(), "every case in exactly one shard");
    assert_eq!(union, verdicts(&whole));

    let merged = temp("merged.json");
    let out = xlaref().args(["report", "merge"]).args(&parts).arg("--json").arg(&merged).output().expect("xlaref runs");
    assert!(out.status.success(), "{}", text(&out));
    let merged = read_json(&merged);
    assert_eq!(verdicts(&merged), verdicts(&whole));
    assert_eq!(merged["totals"], whole["totals"]);
    assert_eq!(merged["ops"], whole["ops"]);
    assert_eq!(merged["shards"], json!(["0/3", "1/3", "2/3"]));

    // A shard twice is not a campaign.
    let out = xlaref().args(["report", "merge"]).arg(&parts[0]).arg(&parts[0]).output().expect("xlaref runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("more than one report"), "{}", text(&out));
}

#[test]
fn fuzz_shards_run_the_unsharded_programs() {
    let run = |tag: &str, shard: Option<&str>| {
        let json = temp(&format!("fuzz-{tag}.json"));
        let mut cmd = xlaref();
        cmd.args(["fuzz", "--cases", "30", "--seed", "2", "--jobs", "1", "--quiet", "--out"])
            .arg(temp("fuzz-out"))
            .arg("--json")
            .arg(&json);
        if let Some(s) = shard {
            cmd.args(["--shard", s]);
        }
        let out = cmd.output().expect("xlaref runs");
        assert!(out.status.success(), "{}", text(&out));
        read_json(&json)
    };
    let whole = run("whole", None);
    assert_eq!(whole["programs"], 30);
    let shards: Vec<Value> = (0..4).map(|k| run(&k.to_string(), Some(&format!("{k}/4")))).collect();
    let programs: Vec<u64> = shards.iter().map(|s| s["programs"].as_u64().unwrap_or(0)).collect();
    assert_eq!(programs, [8, 8, 7, 7], "programs k, k+4, ... below 30");
    assert_eq!(shards[1]["shard"], "1/4");
}

#[test]
fn malformed_shards_are_bad_input() {
    let out = xlaref().args(["conform", "--backend", "engine:fast", "--generate", "3", "--shard", "3/3"]).output().expect("xlaref runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// A backend in Python that answers `unsupported` slowly (a case every
/// 50 ms), so that a run can be stopped halfway.
const SLOW_BACKEND: &str = r#"
import json, sys, time
print(json.dumps({"protocol": "xla-json-backend/1", "name": "slow"}), flush=True)
for line in sys.stdin:
    time.sleep(0.05)
    print(json.dumps({"unsupported": "slowly"}), flush=True)
"#;

fn python() -> Option<&'static str> {
    Command::new("python3").arg("--version").output().ok().filter(|o| o.status.success()).map(|_| "python3")
}

#[test]
fn a_run_stopped_by_sigterm_reports_the_cases_that_finished() {
    let Some(py) = python() else {
        eprintln!("skipped: no python3");
        return;
    };
    let backend = temp("slow_backend.py");
    std::fs::write(&backend, SLOW_BACKEND).expect("write backend");
    let (json, report) = (temp("stopped.json"), temp("stopped.md"));
    let child = xlaref()
        .args(["conform", "--backend", &format!("{py} {}", backend.display()), "--generate", "2000", "--json"])
        .arg(&json)
        .arg("--report")
        .arg(&report)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("xlaref starts");
    // Progress on a pipe: a plain line every 5 seconds.
    std::thread::sleep(Duration::from_secs(7));
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let start = Instant::now();
    let out = child.wait_with_output().expect("xlaref ends");
    assert!(start.elapsed() < Duration::from_secs(10), "the run ends promptly");
    assert_eq!(out.status.code(), Some(128 + libc::SIGTERM), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().any(|l| l.starts_with("conform: ") && l.contains("/2000 (")), "{stderr}");
    let v = read_json(&json);
    let n = v["cases"].as_array().map(Vec::len).unwrap_or(0);
    assert!(n > 10 && n < 2000, "{n} cases reported");
    assert_eq!(v["totals"]["unsupported"], n, "the case in flight is not reported");
    assert!(v["stopped"].as_str().is_some_and(|s| s.starts_with("SIGTERM after")), "{}", v["stopped"]);
    let md = std::fs::read_to_string(&report).unwrap_or_default();
    assert!(md.contains("The run stopped early"), "{md}");
}

#[test]
fn a_backend_that_cannot_start_stops_the_run_with_its_message() {
    let Some(py) = python() else {
        eprintln!("skipped: no python3");
        return;
    };
    let backend = temp("broken_backend.py");
    std::fs::write(&backend, "import sys\nsys.stderr.write('jax not importable: No module named jax\\n')\nsys.exit(3)\n").expect("write");
    let out =
        xlaref().args(["conform", "--backend", &format!("{py} {}", backend.display()), "--generate", "5"]).output().expect("xlaref runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("jax not importable"), "{}", text(&out));

    // One that starts once, then dies and cannot start again: the run stops
    // there instead of reporting every case crashed.
    let flag = temp("started_once");
    let _ = std::fs::remove_file(&flag);
    let once = format!(
        "import json, os, sys\nflag = {:?}\nif os.path.exists(flag):\n    sys.stderr.write('cannot start twice\\n'); sys.exit(3)\nopen(flag, 'w').close()\nprint(json.dumps({{'protocol': 'xla-json-backend/1'}}), flush=True)\nsys.stdin.readline()\nsys.exit(1)\n",
        flag.display().to_string()
    );
    let backend = temp("once_backend.py");
    std::fs::write(&backend, once).expect("write");
    let json = temp("down.json");
    let out = xlaref()
        .args(["conform", "--backend", &format!("{py} {}", backend.display()), "--generate", "5", "--json"])
        .arg(&json)
        .output()
        .expect("xlaref runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("cannot start twice"), "{}", text(&out));
    let v = read_json(&json);
    assert_eq!(v["totals"]["crashed"], 1, "{v}");
    assert!(v["stopped"].as_str().is_some_and(|s| s.contains("could not be restarted")), "{v}");
}

/// A Conv whose `-inf` weight meets the low padding at output 0: the
/// document adds no term there (1·1 = 1), a backend that multiplies the
/// padding as a zero gives `0·-inf + 1 = NaN`.
fn conv_over_padding() -> Case {
    let case = json!({
        "name": "conv/pad_times_inf", "module": {"format": "xla-json/1", "computations": {
            "main": {"params": [{"name": "x", "shape": "f32[1,1,2]"}, {"name": "w", "shape": "f32[1,1,2]"}],
                     "instructions": [{"name": "c", "op": "Conv", "operands": ["x", "w"],
                                       "window_strides": [1], "padding": [[1, 0]]}]}}},
        "args": [{"shape": "f32[1,1,2]", "value": [[[1, 2]]]}, {"shape": "f32[1,1,2]", "value": [[["-inf", 1]]]}],
        "expected": {"shape": "f32[1,1,2]", "value": [[[1, "-inf"]]]}
    });
    read_case(&case, &JsonPath::root(), &RunOptions::default()).expect("case reads")
}

/// A backend answering the same f32[1,1,2] for every request.
struct Fixed([f32; 2]);

impl Backend for Fixed {
    fn describe(&self) -> String {
        "fixed".into()
    }
    fn run(&mut self, _: &Case) -> Reply {
        Reply::Value { result: Literal::Array(ArrayLiteral::new(vec![1, 1, 2], Data::F32(self.0.to_vec()))), outfeed: vec![] }
    }
}

fn verdict(backend: &mut (dyn Backend + Send), known: &Known) -> (Verdict, String) {
    let case = conv_over_padding();
    let loaded = [LoadedCase { name: case.name.clone(), file: "test".into(), case: Ok(case) }];
    let run = check_all(&loaded, backend, &RunOptions::default(), known, |_| {});
    (run.results[0].verdict, run.results[0].detail.clone())
}

#[test]
fn deviation_classes_match_by_values_not_by_name() {
    let class = Known::parse("class:conv-multiplies-padding  # D9\n").expect("parses");
    let mut multiplies = Fixed([f32::NAN, f32::NEG_INFINITY]);
    assert_eq!(verdict(&mut multiplies, &Known::default()).0, Verdict::Failed);
    let (v, detail) = verdict(&mut multiplies, &class);
    assert_eq!(v, Verdict::KnownDeviation, "{detail}");
    assert!(detail.starts_with("class:conv-multiplies-padding (D9)"), "{detail}");
    // The class does not excuse another wrong value.
    let mut wrong = Fixed([2.0, f32::NEG_INFINITY]);
    assert_eq!(verdict(&mut wrong, &class).0, Verdict::Failed);
    assert!(Known::parse("class:no-such-class").is_err_and(|e| e.contains("unknown deviation class")));
    // A class listed for other ops does not apply.
    let elsewhere = Known::parse("class:conv-multiplies-padding op=Dot,Reduce  # D9\n").expect("parses");
    assert_eq!(verdict(&mut multiplies, &elsewhere).0, Verdict::Failed);
    let here = Known::parse("class:conv-multiplies-padding op=Conv\n").expect("parses");
    assert_eq!(verdict(&mut multiplies, &here).0, Verdict::KnownDeviation);
    assert!(Known::parse("class:ftz ops=Conv").is_err_and(|e| e.contains("op=A,B")));
}

#[test]
fn a_nonfinite_operand_spreading_as_nan_is_its_own_class() {
    let spreads = Known::parse("class:nonfinite-spreads op=Conv  # D15\n").expect("parses");
    let mut nan_at_0 = Fixed([f32::NAN, f32::NEG_INFINITY]);
    let (v, detail) = verdict(&mut nan_at_0, &spreads);
    assert_eq!(v, Verdict::KnownDeviation, "{detail}");
    assert!(detail.starts_with("class:nonfinite-spreads (D15)"), "{detail}");
    // Only NaNs are excused: a wrong number next to them is not.
    let mut nan_and_wrong = Fixed([f32::NAN, 5.0]);
    assert_eq!(verdict(&mut nan_and_wrong, &spreads).0, Verdict::Failed);
    // The fewest classes that explain the value are named.
    let both = Known::parse("class:nonfinite-spreads\nclass:conv-multiplies-padding\n").expect("parses");
    let (v, detail) = verdict(&mut nan_at_0, &both);
    assert_eq!(v, Verdict::KnownDeviation);
    assert!(detail.starts_with("class:nonfinite-spreads ") || detail.starts_with("class:conv-multiplies-padding "), "{detail}");
}

#[test]
fn known_deviations_are_written_apart_from_failures() {
    let dir = temp("failures");
    let _ = std::fs::remove_dir_all(&dir);
    let known = temp("known.txt");
    let bad = temp("bad_backend.py");
    std::fs::write(
        &bad,
        "import json, sys\nprint(json.dumps({'protocol': 'xla-json-backend/1'}), flush=True)\nfor line in sys.stdin:\n    print(json.dumps({'shape': 'f32[]', 'value': 12345}), flush=True)\n",
    )
    .expect("write");
    let Some(py) = python() else { return };
    let case = temp("one_case.json");
    std::fs::write(
        &case,
        json!({"format": "xla-json/1", "name": "neg/one", "module": {"format": "xla-json/1", "computations": {"main": {
            "params": [{"name": "x", "shape": "f32[]"}], "instructions": [{"name": "n", "op": "Neg", "operands": ["x"]}]}}},
            "args": [{"shape": "f32[]", "value": 1}], "expected": {"shape": "f32[]", "value": -1}})
        .to_string(),
    )
    .expect("write");
    std::fs::write(&known, "neg/one  # a listed deviation\n").expect("write");
    let out = xlaref()
        .args(["conform", "--backend", &format!("{py} {}", bad.display())])
        .arg(&case)
        .arg("--known-deviations")
        .arg(&known)
        .arg("--failures")
        .arg(&dir)
        .output()
        .expect("xlaref runs");
    assert!(out.status.success(), "{}", text(&out));
    assert!(dir.join("known-deviations/neg_one.json").exists(), "{}", text(&out));
    assert!(!dir.join("neg_one.json").exists());
    assert!(text(&out).contains("0 failing cases written"), "{}", text(&out));
}
