//! `xlaref eval MODULE [--args ARGS.json] [--arg SHAPE=VALUE]... [--arg-npy X.npy]... [--out-npy Y.npy]`;
//! MODULE is xla-json/1, HLO text or StableHLO MLIR.

use std::time::Instant;
use xlaref_reference::RunError;

use clap::Args;
use serde_json::Value;
use xlaref_reference::eval::Env;
use xlaref_reference::json::{self, Layout, Path, WriteOptions};
use xlaref_reference::literal::Literal;
use xlaref_reference::types::Shape;
use xlaref_reference::verify;

use super::{read_text, LimitArgs, EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_INTERNAL};
use crate::harness::engine;
use crate::npy;

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The module: xla-json/1, XLA HLO text (`HloModule ...`) or StableHLO
    /// MLIR (`module ...`, `func.func ...`), told apart by content; `-`
    /// reads it from standard input.
    pub module: String,
    /// A JSON file holding the arguments: a list of typed literals.
    #[arg(long)]
    pub args: Option<String>,
    /// One argument as `SHAPE=VALUE`, e.g. 'f32[2]=[1,2]' (repeatable, in order).
    #[arg(long = "arg")]
    pub arg: Vec<String>,
    /// One argument from a numpy `.npy` file (repeatable; after `--args` and
    /// `--arg`, in parameter order). bf16/f8 arrays saved by numpy as raw
    /// `V2`/`V1` take the parameter's element type.
    #[arg(long = "arg-npy")]
    pub arg_npy: Vec<String>,
    /// Also write the result as a `.npy` file (a tuple result as
    /// `PATH.0.npy`, `PATH.1.npy`, ... with PATH's `.npy` removed); standard
    /// output then gets a one-line summary, not the array.
    #[arg(long = "out-npy")]
    pub out_npy: Option<String>,
    /// Write the result (a typed literal) to this file instead of standard
    /// output, which gets a one-line summary.
    #[arg(long, short = 'o')]
    pub output: Option<String>,
    /// Print the time of each phase to stderr (`parse: X ms`, then verify,
    /// args, execute, write) and the peak memory (`peak: N MiB`).
    #[arg(long)]
    pub timings: bool,
    /// Which engine evaluates: reference or fast.
    #[arg(long, default_value = "reference")]
    pub engine: String,
    /// Seed of RngUniform and RngNormal.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run the module as N replicas (collectives, Send/Recv); the result is
    /// a JSON list with one typed literal per replica.
    #[arg(long, default_value_t = 1)]
    pub replicas: usize,
    /// Each replica's own arguments: a JSON file (or inline JSON text
    /// starting with `[`) holding one list of typed literals per replica.
    /// Without it every replica gets the `--args`/`--arg` arguments.
    #[arg(long)]
    pub replica_args: Option<String>,
    /// A JSON file holding the infeed queue: a list of typed literals that
    /// Infeed reads, in order.
    #[arg(long)]
    pub infeed: Option<String>,
    /// Write the values Outfeed wrote, in order, to this file as a JSON list
    /// of typed literals (also when the run fails).
    #[arg(long)]
    pub outfeed: Option<String>,
    /// Write non-finite floats as exact hex bit patterns.
    #[arg(long)]
    pub exact_bits: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

fn bad(message: String) -> i32 {
    eprintln!("error: {}", xlaref_reference::error::printable(&message));
    EXIT_BAD_INPUT
}

/// The arguments from `--args` then `--arg`, in order.
fn read_args(a: &EvalArgs, params: &[Shape]) -> Result<Vec<Literal>, String> {
    let max = a.limits.max_elements;
    let mut out = Vec::new();
    if let Some(file) = &a.args {
        let lists = json::read_typed_literals(&read_text(file)?, Layout::Args, "args", max).map_err(|e| format!("{file}: {e}"))?;
        out.extend(lists.into_iter().flatten());
    }
    for spec in &a.arg {
        // The `=` of SHAPE=VALUE, not the one of a bounded dimension (`<=5`).
        let at = spec.char_indices().find(|&(i, c)| c == '=' && !spec[..i].ends_with('<')).map(|(i, _)| i);
        let (shape_text, value_text) =
            at.map(|i| (&spec[..i], &spec[i + 1..])).ok_or_else(|| format!("--arg `{spec}`: expected SHAPE=VALUE"))?;
        let shape = Shape::parse(shape_text.trim()).map_err(|e| format!("--arg `{spec}`: {e}"))?;
        out.push(json::read_literal_text(value_text, &shape, &Path::new("--arg"), max).map_err(|e| format!("--arg `{spec}`: {e}"))?);
    }
    for path in &a.arg_npy {
        let declared = params.get(out.len());
        let array = match super::open_regular_file(path)? {
            Some(mut file) => npy::read_npy_from(&mut file, declared, max),
            None => npy::read_npy(&super::read_bytes(path)?, declared, max),
        };
        out.push(array.map_err(|e| format!("--arg-npy {path}: {e}"))?);
    }
    Ok(out)
}

/// `--replica-args`: a file or inline JSON, one list of typed literals per replica.
fn read_replica_args(spec: &str, max: i64) -> Result<Vec<Vec<Literal>>, String> {
    let text = if spec.trim_start().starts_with('[') { spec.to_string() } else { read_text(spec)? };
    json::read_typed_literals(&text, Layout::Lists, "replica_args", max).map_err(|e| format!("--replica-args: {e}"))
}

/// `--replicas N`: runs N replicas at once and prints a JSON list of their
/// results (or every failing replica's error).
fn run_replicated(
    a: &EvalArgs,
    engine: &dyn engine::Engine,
    verified: &verify::VerifiedModule,
    args: Vec<Literal>,
    options: &crate::harness::case::RunOptions,
) -> i32 {
    let n = a.replicas;
    let all_args = match &a.replica_args {
        Some(spec) => match read_replica_args(spec, a.limits.max_elements) {
            Ok(l) if l.len() == n => l,
            Ok(l) => return bad(format!("--replica-args has {} argument lists for {n} replicas", l.len())),
            Err(e) => return bad(e),
        },
        None => vec![args; n],
    };
    for (r, args) in all_args.iter().enumerate() {
        if let Err(e) = xlaref_reference::eval::check_arguments(verified, args) {
            return bad(format!("replica {r}: {e}"));
        }
    }
    let seed = a.seed;
    let make_env = || {
        let mut env = Env::new(options.limits.clone());
        env.seed = seed;
        env
    };
    let run = engine::run_replicas(engine, verified, all_args, &make_env);
    let mut failed = false;
    let mut out = Vec::with_capacity(n);
    for (r, result) in run.results.into_iter().enumerate() {
        match result {
            Ok(v) => out.push(json::write_typed_literal(&v, WriteOptions { exact_bits: a.exact_bits })),
            Err(e) => {
                eprintln!("run error: replica {r}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        return EXIT_FAILURE;
    }
    out!("{}", Value::Array(out));
    0
}

/// The `--out-npy` file(s) of a result.
fn write_out_npy(path: &str, result: &Literal) -> Result<(), String> {
    let write = |p: &str, a: &xlaref_reference::literal::ArrayLiteral| {
        let mut file = std::fs::File::create(p).map_err(|e| format!("cannot write {p}: {e}"))?;
        npy::write_npy_to(&mut file, a).map_err(|e| format!("cannot write {p}: {e}"))
    };
    match result {
        Literal::Array(a) => write(path, a),
        Literal::Tuple(items) => {
            let stem = path.strip_suffix(".npy").unwrap_or(path);
            for (i, item) in items.iter().enumerate() {
                match item {
                    Literal::Array(a) => write(&format!("{stem}.{i}.npy"), a)?,
                    _ => return Err(format!("--out-npy: tuple element {i} is not an array")),
                }
            }
            Ok(())
        }
        Literal::Token => Err("--out-npy: the result is a token".into()),
    }
}

/// The infeed queue from `--infeed`.
fn read_infeed(a: &EvalArgs) -> Result<Vec<Literal>, String> {
    let Some(file) = &a.infeed else { return Ok(vec![]) };
    let lists =
        json::read_typed_literals(&read_text(file)?, Layout::List, "infeed", a.limits.max_elements).map_err(|e| format!("{file}: {e}"))?;
    Ok(lists.into_iter().flatten().collect())
}

/// Writes what Outfeed wrote to `--outfeed`.
fn write_outfeed(a: &EvalArgs, values: &[Literal]) -> Result<(), String> {
    let Some(file) = &a.outfeed else { return Ok(()) };
    let list: Vec<Value> = values.iter().map(|v| json::write_typed_literal(v, WriteOptions { exact_bits: a.exact_bits })).collect();
    std::fs::write(file, format!("{}\n", Value::Array(list))).map_err(|e| format!("cannot write {file}: {e}"))
}

/// `--timings`: each phase's wall time as it ends, on stderr.
struct Phases {
    on: bool,
    last: Instant,
}

impl Phases {
    fn new(on: bool) -> Phases {
        Phases { on, last: Instant::now() }
    }

    fn done(&mut self, phase: &str) {
        if self.on {
            eprintln!("{phase}: {:.1} ms", self.last.elapsed().as_secs_f64() * 1e3);
        }
        self.last = Instant::now();
    }

    /// The process's peak resident memory (Linux's VmHWM), when asked.
    fn peak(&self) {
        if !self.on {
            return;
        }
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kib =
            status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        match kib {
            Some(k) => eprintln!("peak: {} MiB", k.div_ceil(1024)),
            None => eprintln!("peak: unknown"),
        }
    }
}

/// Writes the result where it was asked for: `--out-npy`, `-o`, else the
/// typed literal on standard output (a summary line when it went to a file).
fn write_result(a: &EvalArgs, result: &Literal) -> Result<(), String> {
    use std::io::Write;
    let mut files = Vec::new();
    if let Some(path) = &a.out_npy {
        write_out_npy(path, result)?;
        files.push(path.as_str());
    }
    // Streamed: the text of a large result is never held in memory whole.
    let options = WriteOptions { exact_bits: a.exact_bits };
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        json::write_typed_literal_to(result, options, &mut out)?;
        out.write_all(b"\n")?;
        out.flush()
    };
    if let Some(path) = &a.output {
        let mut file = std::fs::File::create(path).map_err(|e| format!("cannot write {path}: {e}"))?;
        write(&mut file).map_err(|e| format!("cannot write {path}: {e}"))?;
        files.push(path.as_str());
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // A closed pipe (`| head`) is not an error of the program.
    let _ = if files.is_empty() { write(&mut out) } else { writeln!(out, "{} -> {}", result.shape(), files.join(", ")) };
    Ok(())
}

pub fn run(a: EvalArgs) -> i32 {
    let Some(engine) = engine::by_name(&a.engine) else {
        return bad(format!("unknown engine `{}` (expected reference or fast)", a.engine));
    };
    let mut phases = Phases::new(a.timings);
    let options = a.limits.run_options();
    let text = match read_text(&a.module) {
        Ok(t) => t,
        Err(e) => return bad(e),
    };
    let module = match json::parse_module(&text, options.read_options()) {
        Ok(m) => m,
        Err(e) => return bad(format!("read error: {e}")),
    };
    drop(text);
    phases.done("parse");
    let verified = match verify::verify(module, &options.verify_options()) {
        Ok(v) => v,
        Err(e) => return bad(format!("verify error: {e}")),
    };
    phases.done("verify");
    let args = match read_args(&a, &verified.entry_signature().params) {
        Ok(v) => v,
        Err(e) => return bad(e),
    };
    if a.replicas != 1 || a.replica_args.is_some() {
        if !(1..=1024).contains(&a.replicas) {
            return bad(format!("--replicas must be in [1, 1024], got {}", a.replicas));
        }
        return run_replicated(&a, engine, &verified, args, &options);
    }
    if let Err(e) = xlaref_reference::eval::check_arguments(&verified, &args) {
        return bad(e.to_string());
    }
    let infeed = match read_infeed(&a) {
        Ok(v) => v,
        Err(e) => return bad(e),
    };
    phases.done("args");
    let mut env = Env::new(options.limits.clone());
    env.seed = a.seed;
    env.infeed = infeed.into();
    let result = engine.run(&verified, args, &mut env).and_then(|r| match &env.hub {
        // A Send nobody received is an error too (replicas.rs).
        Some(hub) => hub.end_check().map(|()| r),
        None => Ok(r),
    });
    phases.done("execute");
    if let Err(e) = write_outfeed(&a, &env.outfeed) {
        return bad(e);
    }
    match result {
        Ok(result) => {
            if let Err(e) = write_result(&a, &result) {
                return bad(e);
            }
            phases.done("write");
            phases.peak();
            0
        }
        Err(e @ RunError::Internal(_)) => {
            eprintln!("{e} (a bug in xlaref, please report it with the input)");
            EXIT_INTERNAL
        }
        Err(e) => {
            eprintln!("run error: {e}");
            EXIT_FAILURE
        }
    }
}
