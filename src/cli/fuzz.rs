//! `xlaref fuzz`: a time- or count-bounded differential campaign. Random
//! valid programs run on the reference and the fast engine in lockstep
//! under the tolerance model; each disagreement or crash is shrunk and
//! written as a case file that `xlaref check --engine fast` replays.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;

use super::{EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::gen;
use crate::harness::campaign::{run_one, Outcome};
use crate::harness::engine;
use crate::harness::interrupt;
use crate::harness::progress::Progress;
use crate::harness::shard::Shard;

#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Stop after this many seconds.
    #[arg(long, value_parser = super::seconds)]
    pub seconds: Option<f64>,
    /// Run programs 0..N of the campaign (default: 1000 when --seconds is
    /// absent); with --shard, this shard's share of them.
    #[arg(long)]
    pub cases: Option<u64>,
    /// Run only shard K of N (K from 0): programs i with i mod N = K
    /// (docs/campaigns.md).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Write the campaign's summary here (JSON: programs, disagreements and
    /// their case files, invalid programs, seed, shard, seconds).
    #[arg(long)]
    pub json: Option<String>,
    /// The campaign's seed: the same seed gives the same programs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Only these ops (comma-separated generator names, e.g. Gather,Scatter).
    #[arg(long, value_delimiter = ',')]
    pub ops: Vec<String>,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Where to write the shrunk failing cases.
    #[arg(long, default_value = "fuzz-failures")]
    pub out: String,
    /// The engine held against the reference.
    #[arg(long, default_value = "fast")]
    pub engine: String,
    /// No progress line.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Default)]
struct Tally {
    programs: AtomicU64,
    invalid: AtomicU64,
    failures: AtomicU64,
}

pub fn run(a: FuzzArgs) -> i32 {
    interrupt::install();
    let shard = a.shard.unwrap_or_default();
    let Some(other) = engine::by_name(&a.engine) else {
        eprintln!("error: unknown engine `{}` (expected reference or fast)", a.engine);
        return EXIT_BAD_INPUT;
    };
    let ops: Vec<&'static str> = match gen::select(&a.ops) {
        Ok(g) => g.into_iter().map(|(name, _)| name).collect(),
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            return EXIT_BAD_INPUT;
        }
    };
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        eprintln!("error: cannot create {}: {e}", a.out);
        return EXIT_BAD_INPUT;
    }
    let limit = a.cases.unwrap_or(if a.seconds.is_some() { u64::MAX } else { 1000 });
    let deadline = a.seconds.map(|s| Instant::now() + Duration::from_secs_f64(s.clamp(0.0, 1e9)));
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let tally = Tally::default();
    let found: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.max(1) {
            scope.spawn(|| {
                // Strategies are built per thread (they are not Send).
                let generators = gen::select(&a.ops).unwrap_or_default();
                loop {
                    if stop.load(Ordering::Relaxed) || interrupt::requested().is_some() || deadline.is_some_and(|d| Instant::now() > d) {
                        break;
                    }
                    let Some(i) = shard.nth(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < limit) else { break };
                    let (op, strategy) = &generators[(i % generators.len() as u64) as usize];
                    match run_one(op, strategy, a.seed, i, other) {
                        Outcome::Agree => {}
                        Outcome::Invalid(e) => {
                            tally.invalid.fetch_add(1, Ordering::Relaxed);
                            eprintln!("\ngenerator bug (program {i}): {e}");
                        }
                        Outcome::Failure(f) => {
                            tally.failures.fetch_add(1, Ordering::Relaxed);
                            let path = format!("{}/{}_seed{}_{i}.json", a.out, f.op, a.seed);
                            let text = serde_json::to_string_pretty(&f.case).unwrap_or_default();
                            let written =
                                std::fs::write(&path, text).map(|_| path.clone()).unwrap_or_else(|e| format!("(not written: {e})"));
                            eprintln!("\nDISAGREE {} (program {i}): {} -> {written}", f.op, f.summary);
                            if let Ok(mut v) = found.lock() {
                                v.push(written);
                            }
                        }
                    }
                    tally.programs.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        if !a.quiet {
            let share = limit.saturating_sub(shard.index).div_ceil(shard.count);
            let (tally, stop) = (&tally, &stop);
            scope.spawn(move || progress(tally, stop, deadline, share));
        }
        // The progress thread ends when the workers have.
    });
    let programs = tally.programs.load(Ordering::Relaxed);
    let failures = tally.failures.load(Ordering::Relaxed);
    let invalid = tally.invalid.load(Ordering::Relaxed);
    let seconds = start.elapsed().as_secs_f64();
    let stopped = interrupt::requested();
    let of_shard = a.shard.map(|s| format!(", shard {s}")).unwrap_or_default();
    let early = stopped.map(|s| format!(" (stopped early by {})", interrupt::name(s))).unwrap_or_default();
    out!(
        "{programs} programs over {} ops in {seconds:.1} s ({:.0}/s): {failures} disagreements or crashes, {invalid} invalid programs (seed {}{of_shard}){early}",
        ops.len(),
        programs as f64 / seconds.max(1e-9),
        a.seed
    );
    if let Some(path) = &a.json {
        let summary = json!({
            "seed": a.seed, "shard": a.shard.map(|s| s.to_string()), "ops": ops.len(), "programs": programs,
            "disagreements": failures, "invalid": invalid, "seconds": (seconds * 1000.0).round() / 1000.0,
            "stopped": stopped.map(interrupt::name), "failures": found.into_inner().unwrap_or_default(),
        });
        if let Err(e) = std::fs::write(path, serde_json::to_string_pretty(&summary).unwrap_or_default() + "\n") {
            eprintln!("error: cannot write {path}: {e}");
            return EXIT_BAD_INPUT;
        }
    }
    match stopped {
        Some(signal) => interrupt::exit_status(signal),
        None if failures + invalid == 0 => 0,
        None => EXIT_FAILURE,
    }
}

/// Progress on stderr (programs/s, failures, ETA) until the workers end:
/// a bar on a terminal, a line every few seconds elsewhere. A time-bounded
/// campaign has no total.
fn progress(tally: &Tally, stop: &AtomicBool, deadline: Option<Instant>, share: u64) {
    let mut shown = Progress::new("fuzz", if deadline.is_some() { 0 } else { share }, false);
    loop {
        std::thread::sleep(Duration::from_millis(250));
        let n = tally.programs.load(Ordering::Relaxed);
        shown.set(n, || format!("{} failures, {} invalid", tally.failures.load(Ordering::Relaxed), tally.invalid.load(Ordering::Relaxed)));
        let done = n >= share || deadline.is_some_and(|d| Instant::now() > d + Duration::from_secs(30));
        let ended =
            stop.load(Ordering::Relaxed) || interrupt::requested().is_some() || (deadline.is_some_and(|d| Instant::now() > d) && n > 0);
        if done || ended {
            shown.finish();
            break;
        }
    }
}
