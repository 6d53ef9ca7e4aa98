//! The `xlaref` command line: one file per subcommand.

/// `println!` for the commands' reports and tables. When stdout's reader
/// has gone (`xlaref bench | head -1`), the command ends quietly with
/// status 0, as `eval`'s result writer does; `println!` panicked there,
/// which printed an internal error and exited 70. (SIGPIPE stays ignored:
/// the conformance harness must see a backend's closed pipe as an error.)
macro_rules! out {
    () => {
        $crate::cli::print_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cli::print_line(format_args!($($arg)*))
    };
}

pub mod bench;
mod bench_memory;
mod bench_programs;
mod check;
mod check_mlir;
pub mod conform;
mod eval;
mod export;
mod fuzz;
mod import;
mod report;
mod verify;

use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use xlaref_reference::eval::Limits;

use crate::harness::case::RunOptions;

/// Exit status for bad input: unreadable files, malformed JSON, modules the
/// document forbids, arguments that do not fit.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit status for a run error or a failed check.
pub const EXIT_FAILURE: i32 = 1;
/// One line of a report on stdout ([`out!`]): a closed stdout ends the
/// process (status 0 when its reader has gone, 74, EX_IOERR, for any other
/// failure to write).
pub fn print_line(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{args}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(74);
    }
}

/// Exit status for a bug in xlaref: a panic, or an engine's broken
/// invariant (`RunError::Internal`). EX_SOFTWARE of sysexits.h.
pub const EXIT_INTERNAL: i32 = 70;

#[derive(Parser, Debug)]
#[command(name = "xlaref", version, about = "The executable specification of XLA's operation semantics")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Evaluate a module on arguments and print the result as a typed literal.
    Eval(eval::EvalArgs),
    /// Run every case file and StableHLO test file (.mlir) in the given paths and report failures.
    Check(check::CheckArgs),
    /// Run cases through another backend and report its conformance per op.
    Conform(conform::ConformArgs),
    /// Print each instruction's inferred shape, or the first verification error.
    Verify(verify::VerifyArgs),
    /// Differential campaign: random programs on the reference and the fast engine, disagreements shrunk to case files.
    Fuzz(fuzz::FuzzArgs),
    /// Time the benchmark workloads on both engines (docs/performance.md).
    Bench(bench::BenchArgs),
    /// Import an HLO text module (an XLA dump) or StableHLO MLIR as an xla-json/1 module.
    Import(import::ImportArgs),
    /// Write a module (xla-json or HLO text) as StableHLO MLIR text or as xla-json/1.
    Export(export::ExportArgs),
    /// Work with conformance reports: `report merge` joins the JSON reports of a campaign's shards.
    Report(report::ReportArgs),
}

/// Bounds on every run, so no input can hang the tool or exhaust memory.
#[derive(Args, Debug, Clone)]
pub struct LimitArgs {
    /// Largest number of elements of any value.
    #[arg(long, default_value_t = 1 << 28)]
    pub max_elements: i64,
    /// Most iterations of any While loop.
    #[arg(long, default_value_t = 10_000_000)]
    pub max_while_trips: u64,
    /// Wall-clock limit per run, in seconds.
    #[arg(long, value_parser = seconds)]
    pub timeout: Option<f64>,
    /// Most memory a run may hold, all values of all replicas together,
    /// checked before every op (bytes; K, M, G, T suffixes are powers of
    /// 1024). Default: 8G, or 3/4 of the machine's memory if less.
    #[arg(long, value_parser = bytes)]
    pub max_bytes: Option<u64>,
}

impl LimitArgs {
    pub fn run_options(&self) -> RunOptions {
        let time_limit = self.timeout.map(|s| Duration::from_secs_f64(s.clamp(0.0, 1e9)));
        let deadline = time_limit.map(|t| Instant::now() + t);
        RunOptions {
            limits: Limits {
                max_elements: self.max_elements,
                max_while_trips: self.max_while_trips,
                max_bytes: self.max_bytes.unwrap_or_else(xlaref_reference::watch::default_max_bytes),
                deadline,
                time_limit,
                ..Limits::default()
            },
        }
    }
}

/// Runs the command line; returns the process exit status.
pub fn main_with(cli: Cli) -> i32 {
    // A misspelt cap would silently test the wrong kernels.
    if let Err(e) = xlaref_fast::isa::cap_from_env() {
        eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
        return EXIT_BAD_INPUT;
    }
    match cli.command {
        Command::Eval(a) => eval::run(a),
        Command::Check(a) => check::run(a),
        Command::Conform(a) => conform::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Fuzz(a) => fuzz::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Import(a) => import::run(a),
        Command::Export(a) => export::run(a),
        Command::Report(a) => report::run(a),
    }
}

/// The largest input file read whole (a module, a case file, an argument):
/// 2 GiB, or `XLAREF_MAX_INPUT_BYTES`. A larger one, or an endless one
/// (`/dev/zero`), is refused once that much has been read.
fn max_input_bytes() -> u64 {
    std::env::var("XLAREF_MAX_INPUT_BYTES").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(2 << 30)
}

/// Reads a file (`-`: standard input) whole, up to [`max_input_bytes`].
pub fn read_bytes(path: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let cap = max_input_bytes();
    let mut bytes = Vec::new();
    let read = if path == "-" {
        std::io::stdin().lock().take(cap + 1).read_to_end(&mut bytes)
    } else if is_fifo(path) {
        read_fifo(path, cap, &mut bytes)
    } else {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        match file.metadata() {
            Ok(m) if m.is_dir() => return Err(format!("cannot read {path}: it is a directory")),
            Ok(m) if m.is_file() && m.len() > cap => {
                return Err(format!("{path} is {} bytes, over the input limit of {cap} bytes (XLAREF_MAX_INPUT_BYTES)", m.len()))
            }
            _ => {}
        }
        file.take(cap + 1).read_to_end(&mut bytes)
    };
    read.map_err(|e| format!("cannot read {path}: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(format!("{path} is over the input limit of {cap} bytes (XLAREF_MAX_INPUT_BYTES)"));
    }
    Ok(bytes)
}

/// A regular file to read in parts (a large `.npy`), under the same checks
/// as [`read_bytes`]; `None` for standard input and named pipes, which
/// [`read_bytes`] reads whole.
pub fn open_regular_file(path: &str) -> Result<Option<std::io::Take<std::fs::File>>, String> {
    use std::io::Read;
    if path == "-" || is_fifo(path) {
        return Ok(None);
    }
    let cap = max_input_bytes();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    match file.metadata() {
        Ok(m) if m.is_dir() => Err(format!("cannot read {path}: it is a directory")),
        Ok(m) if m.is_file() && m.len() > cap => {
            Err(format!("{path} is {} bytes, over the input limit of {cap} bytes (XLAREF_MAX_INPUT_BYTES)", m.len()))
        }
        _ => Ok(Some(file.take(cap))),
    }
}

fn is_fifo(path: &str) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// How long a named pipe may stay without a writer before reading it fails.
const FIFO_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads a named pipe without blocking forever on one nobody writes to: it
/// is opened non-blocking (a plain open waits for a writer, for ever), and
/// until the first byte comes an end of file only means that no writer has
/// opened it yet, which is waited for up to [`FIFO_WAIT`]. After the first
/// byte, an end of file is the end.
fn read_fifo(path: &str, cap: u64, bytes: &mut Vec<u8>) -> std::io::Result<usize> {
    use std::io::{ErrorKind, Read};
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let started = std::time::Instant::now();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut chunk) {
            Ok(0) if !bytes.is_empty() => return Ok(bytes.len()),
            Ok(0) if started.elapsed() > FIFO_WAIT => {
                return Err(std::io::Error::new(
                    ErrorKind::TimedOut,
                    format!("no writer sent anything to the named pipe in {} s", FIFO_WAIT.as_secs()),
                ))
            }
            Ok(0) => std::thread::sleep(std::time::Duration::from_millis(2)),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() as u64 > cap {
                    return Ok(bytes.len());
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            Err(e) => return Err(e),
        }
    }
}

/// Reads a file (`-`: standard input) as UTF-8 text, or explains why not.
pub fn read_text(path: &str) -> Result<String, String> {
    String::from_utf8(read_bytes(path)?).map_err(|e| format!("{path} is not UTF-8 text (byte {} is not)", e.utf8_error().valid_up_to()))
}

/// A byte count: digits with an optional K, M, G or T (powers of 1024).
pub fn bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, scale) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let scale: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return Err(format!("`{t}` is not a byte count (digits, then K, M, G or T)")),
            };
            (&t[..i], scale)
        }
        _ => (t, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("`{t}` is not a byte count (digits, then K, M, G or T)"))
}

/// A number of seconds given on the command line: finite and not negative
/// (`nan` or `inf` would make no deadline, or panic in `Duration`).
pub fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{}` is not a number of seconds (finite, not negative)", text.escape_debug())),
    }
}
