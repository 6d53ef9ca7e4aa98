//! Backends checked for conformance (docs/backends.md): anything that runs a
//! case and answers with a value, a rejection, or "unsupported". In-process
//! engines ([`EngineBackend`]) and outside commands speaking the line
//! protocol ([`ProcessBackend`]) both implement [`Backend`].

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Map, Value};
use xlaref_reference::json::{self, Path, WriteOptions};
use xlaref_reference::literal::Literal;

use xlaref_reference::error::RunError;
use xlaref_reference::eval::Env;
use xlaref_reference::verify::VerifiedModule;

use super::case::{run_case, Case, Expected, RunOptions};
use super::engine::Engine;
use super::interrupt;

/// The protocol name and version a backend announces in its first line.
pub const PROTOCOL: &str = "xla-json-backend/1";

/// What a backend answered for one case.
#[derive(Clone, Debug)]
pub enum Reply {
    /// The case ran: its result, and what `Outfeed` wrote (if anything).
    Value { result: Literal, outfeed: Vec<Literal> },
    /// A multi-replica case ran: one result per replica.
    PerReplica(Vec<Literal>),
    /// The backend rejected the module or its arguments.
    Error(String),
    /// The backend cannot express something the case uses.
    Unsupported(String),
    /// The backend died, hung, or answered something that is not a reply.
    Crash(String),
    /// The backend could not be started again after a crash (its handshake
    /// failed): not this case's fault, and every case left would meet it,
    /// so a campaign stops.
    Down(String),
}

/// Something checked for conformance.
pub trait Backend {
    /// A one-line description (name and version) for reports.
    fn describe(&self) -> String;
    /// Runs one case; never panics, whatever the backend does.
    fn run(&mut self, case: &Case) -> Reply;
}

/// An in-process engine as a backend (`--backend engine:fast`).
pub struct EngineBackend {
    pub engine: &'static dyn Engine,
    pub options: RunOptions,
}

impl Backend for EngineBackend {
    fn describe(&self) -> String {
        format!("xlaref {} engine (in process)", self.engine.name())
    }
    fn run(&mut self, case: &Case) -> Reply {
        let outcome = run_case(case, self.engine, &self.options);
        match outcome.result {
            Ok(result) => Reply::Value { result, outfeed: outcome.outfeed },
            // An engine's broken invariant or panic is a crash; anything
            // else (its `Unsupported` included, as the reference's own
            // policy errors are) is the program's failure.
            Err(e) if e.is_crash() => Reply::Crash(e.to_string()),
            Err(e) => Reply::Error(e.to_string()),
        }
    }
}

/// How to start and supervise an outside backend.
#[derive(Clone, Debug)]
pub struct ProcessOptions {
    /// The command, run by `sh -c`.
    pub command: String,
    /// How long the backend may take to print its handshake line.
    pub start_timeout: Duration,
    /// How long one case may take before the backend is killed and restarted.
    pub case_timeout: Duration,
    /// Largest number of elements accepted in a reply.
    pub max_elements: i64,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

/// An outside command speaking the line protocol of docs/backends.md.
pub struct ProcessBackend {
    options: ProcessOptions,
    running: Option<Running>,
    /// The handshake object of the last start.
    pub hello: Map<String, Value>,
    /// How many times the backend was restarted after a crash or timeout.
    pub restarts: usize,
    next_id: u64,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

const STDERR_LINES: usize = 20;
/// The longest reply line read from a backend (a result as JSON; 1 GiB is
/// about 100M floats).
const MAX_REPLY_BYTES: usize = 1 << 30;
/// Each kept stderr line is cut to this many bytes.
const MAX_STDERR_LINE_BYTES: usize = 4096;

/// One line of a backend's output: its first bytes up to a cap, and
/// whether that was all of it.
struct Line {
    text: String,
    whole: bool,
}

/// Reads the next line (without its newline), keeping at most `max`
/// bytes of it; None at the end of the stream or on a read error. With
/// `drain`, the rest of a longer line is read and dropped; without, reading
/// stops at the cap (the line may have no end). Memory stays bounded
/// whatever the backend prints.
fn read_line(reader: &mut impl BufRead, max: usize, drain: bool) -> Option<Line> {
    let mut bytes = Vec::new();
    let mut whole = true;
    let mut any = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        if buf.is_empty() {
            if !any {
                return None;
            }
            break;
        }
        any = true;
        let (part, used, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = max.saturating_sub(bytes.len());
        if part.len() > room {
            whole = false;
        }
        bytes.extend_from_slice(&part[..part.len().min(room)]);
        reader.consume(used);
        if end {
            break;
        }
        if !whole && !drain {
            break;
        }
    }
    Some(Line { text: String::from_utf8_lossy(&bytes).into_owned(), whole })
}

impl ProcessBackend {
    /// Starts the backend and reads its handshake.
    pub fn start(options: ProcessOptions) -> Result<ProcessBackend, String> {
        let mut b = ProcessBackend {
            options,
            running: None,
            hello: Map::new(),
            restarts: 0,
            next_id: 0,
            stderr_tail: Arc::new(Mutex::new(VecDeque::new())),
        };
        b.spawn()?;
        Ok(b)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!("exec {}", self.options.command));
        // Adapters that need xlaref itself (to export a module as StableHLO,
        // say) run this very binary.
        if let Ok(me) = std::env::current_exe() {
            command.env("XLAREF", me);
        }
        // Its own process group: a Ctrl-C at the terminal reaches xlaref
        // alone, which then finishes the campaign's report and closes the
        // backend's input itself (harness::interrupt).
        let mut child = command
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start backend `{}`: {e}", self.options.command))?;
        let (stdin, stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => return Err("cannot connect to the backend's standard streams".into()),
        };
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut out = BufReader::new(stdout);
            // A reply longer than the cap (a backend printing without end)
            // ends the connection instead of growing without bound.
            while let Some(Line { text, whole: true }) = read_line(&mut out, MAX_REPLY_BYTES, false) {
                if tx.send(text).is_err() {
                    break;
                }
            }
        });
        let tail = Arc::clone(&self.stderr_tail);
        let stderr_reader = thread::spawn(move || {
            let mut err = BufReader::new(stderr);
            while let Some(Line { text: line, .. }) = read_line(&mut err, MAX_STDERR_LINE_BYTES, true) {
                if let Ok(mut t) = tail.lock() {
                    if t.len() == STDERR_LINES {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }
        });
        let mut running = Running { child, stdin, lines };
        let hello = match running.lines.recv_timeout(self.options.start_timeout) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                let _ = running.child.kill();
                let _ = running.child.wait();
                return Err(format!("the backend printed no handshake within {:?}", self.options.start_timeout));
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = running.child.wait().map(|s| s.to_string()).unwrap_or_default();
                // Its last words (why it could not start) may still be in the pipe.
                for _ in 0..20 {
                    if stderr_reader.is_finished() {
                        break;
                    }
                    thread::sleep(Duration::from_millis(50));
                }
                return Err(format!("the backend exited before its handshake ({status}){}", self.stderr_text()));
            }
        };
        let hello: Map<String, Value> = match serde_json::from_str::<Value>(&hello) {
            Ok(Value::Object(m)) if m.get("protocol").and_then(Value::as_str) == Some(PROTOCOL) => m,
            _ => {
                let _ = running.child.kill();
                let _ = running.child.wait();
                return Err(format!("the backend's first line is not a {PROTOCOL} handshake: {}", truncate(&hello, 200)));
            }
        };
        self.hello = hello;
        self.running = Some(running);
        Ok(())
    }

    fn stderr_text(&self) -> String {
        match self.stderr_tail.lock() {
            Ok(t) if !t.is_empty() => format!("; its last stderr lines: {}", t.iter().cloned().collect::<Vec<_>>().join(" | ")),
            _ => String::new(),
        }
    }

    /// Ends the running process (if any) and starts a new one.
    fn restart(&mut self) -> Result<(), String> {
        self.stop();
        self.restarts += 1;
        self.spawn()
    }

    /// Closes the backend's input and waits briefly for it to exit, then kills it.
    pub fn stop(&mut self) {
        if let Some(mut r) = self.running.take() {
            drop(r.stdin);
            for _ in 0..20 {
                if let Ok(Some(_)) = r.child.try_wait() {
                    return;
                }
                thread::sleep(Duration::from_millis(50));
            }
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }

    fn exchange(&mut self, request: &str, id: u64) -> Result<String, String> {
        let timeout = self.options.case_timeout;
        let Some(r) = self.running.as_mut() else { return Err("the backend is not running".into()) };
        if let Err(e) = r.stdin.write_all(request.as_bytes()).and_then(|_| r.stdin.flush()) {
            return Err(format!("cannot write to the backend: {e}"));
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            // Waits in slices, so that a signal stops the wait (harness::interrupt).
            if interrupt::requested().is_some() {
                return Err("interrupted".into());
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match r.lines.recv_timeout(left.min(Duration::from_millis(100))) {
                Err(RecvTimeoutError::Timeout) if !left.is_zero() => continue,
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => {
                    // A reply may carry the request's id; one for another
                    // request is a protocol error.
                    if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&line) {
                        if let Some(got) = m.get("id") {
                            if got.as_u64() != Some(id) {
                                return Err(format!("reply for id {got} while waiting for id {id}"));
                            }
                        }
                    }
                    return Ok(line);
                }
                Err(RecvTimeoutError::Timeout) => return Err(format!("timeout: no reply within {timeout:?}")),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = r.child.wait().map(|s| s.to_string()).unwrap_or_default();
                    return Err(format!("the backend exited ({status})"));
                }
            }
        }
    }
}

impl Drop for ProcessBackend {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Backend for ProcessBackend {
    fn describe(&self) -> String {
        let field = |k: &str| self.hello.get(k).and_then(Value::as_str).unwrap_or("");
        let name = if field("name").is_empty() { self.options.command.as_str() } else { field("name") };
        match field("version") {
            "" => name.to_string(),
            v => format!("{name} ({v})"),
        }
    }

    fn run(&mut self, case: &Case) -> Reply {
        if self.running.is_none() {
            if let Err(e) = self.restart() {
                return Reply::Down(e);
            }
        }
        self.next_id += 1;
        let id = self.next_id;
        let mut request = request_json(case, id).to_string();
        request.push('\n');
        match self.exchange(&request, id) {
            Ok(line) => match parse_reply(&line, self.options.max_elements) {
                Ok(reply) => reply,
                Err(e) => {
                    // The stream may be out of step now: start afresh.
                    let _ = self.restart();
                    Reply::Crash(format!("malformed reply: {e}: {}", truncate(&line, 200)))
                }
            },
            Err(e) => {
                let message = format!("{e}{}", self.stderr_text());
                if let Ok(mut t) = self.stderr_tail.lock() {
                    t.clear();
                }
                self.stop();
                // Restarted lazily by the next case, so a backend that cannot
                // start again is reported there.
                Reply::Crash(message)
            }
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// The request line for a case: the case without what must come out
/// (`expected`, `expected_per_replica`, `outfeed`, `tolerance`, `source`),
/// values written with exact bits, plus the request `id`.
pub fn request_json(case: &Case, id: u64) -> Value {
    let exact = WriteOptions { exact_bits: true };
    let list = |l: &[Literal]| Value::Array(l.iter().map(|x| json::write_typed_literal(x, exact)).collect());
    let mut m = Map::new();
    m.insert("id".into(), Value::from(id));
    m.insert("format".into(), Value::from("xla-json/1"));
    m.insert("name".into(), Value::from(case.name.clone()));
    m.insert("module".into(), case.module.clone());
    match &case.replica_args {
        Some(per) => {
            m.insert("replica_args".into(), Value::Array(per.iter().map(|a| list(a)).collect()));
        }
        None => {
            m.insert("args".into(), list(&case.args));
        }
    }
    if case.replicas != 1 {
        m.insert("replicas".into(), Value::from(case.replicas));
    }
    if let Some(seed) = case.seed {
        m.insert("seed".into(), Value::from(seed));
    }
    if !case.infeed.is_empty() {
        m.insert("infeed".into(), list(&case.infeed));
    }
    Value::Object(m)
}

/// Reads one reply line (docs/backends.md, "Replies").
pub fn parse_reply(line: &str, max_elements: i64) -> Result<Reply, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    let obj = v.as_object().ok_or("a reply is a JSON object")?;
    let text = |k: &str| obj.get(k).map(|x| x.as_str().map(String::from).unwrap_or_else(|| x.to_string()));
    if let Some(e) = text("error") {
        return Ok(Reply::Error(e));
    }
    if let Some(u) = text("unsupported") {
        return Ok(Reply::Unsupported(u));
    }
    if let Some(c) = text("crash") {
        return Ok(Reply::Crash(c));
    }
    let typed_list = |k: &str| -> Result<Vec<Literal>, String> {
        let Some(l) = obj.get(k) else { return Ok(vec![]) };
        let l = l.as_array().ok_or_else(|| format!("`{k}` is a list of typed literals"))?;
        l.iter()
            .enumerate()
            .map(|(i, x)| json::read_typed_literal(x, &Path::new(k).index(i), max_elements).map_err(|e| e.to_string()))
            .collect()
    };
    if obj.contains_key("per_replica") {
        return Ok(Reply::PerReplica(typed_list("per_replica")?));
    }
    if obj.contains_key("shape") {
        let mut typed = Map::new();
        for k in ["shape", "value"] {
            if let Some(x) = obj.get(k) {
                typed.insert(k.into(), x.clone());
            }
        }
        let result = json::read_typed_literal(&Value::Object(typed), &Path::root(), max_elements).map_err(|e| e.to_string())?;
        return Ok(Reply::Value { result, outfeed: typed_list("outfeed")? });
    }
    Err("a reply has `shape` and `value`, `per_replica`, `error`, `unsupported` or `crash`".into())
}

/// A backend seen as an [`Engine`], so that the lockstep runs of the
/// tolerance model can hold it against the reference one instruction at a
/// time: each call sends a one-instruction module as a case.
pub struct BackendEngine<'a> {
    backend: Mutex<&'a mut (dyn Backend + Send)>,
}

impl<'a> BackendEngine<'a> {
    pub fn new(backend: &'a mut (dyn Backend + Send)) -> Self {
        BackendEngine { backend: Mutex::new(backend) }
    }
}

impl Engine for BackendEngine<'_> {
    fn name(&self) -> &'static str {
        "backend"
    }

    fn run(&self, module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError> {
        let case = Case {
            name: "lockstep".into(),
            source: None,
            module: json::write_module(module.module()),
            args,
            replicas: 1,
            replica_args: None,
            expected: Expected::Value(Literal::Tuple(vec![])),
            tolerance: None,
            infeed: env.infeed.iter().cloned().collect(),
            outfeed: None,
            seed: Some(env.seed),
            implementation_defined: false,
        };
        let mut backend = self.backend.lock().map_err(|_| RunError::Other("the backend's lock is poisoned".into()))?;
        match backend.run(&case) {
            Reply::Value { result, .. } => Ok(result),
            Reply::PerReplica(mut values) if !values.is_empty() => Ok(values.swap_remove(0)),
            Reply::PerReplica(_) => Err(RunError::Other("the backend answered no replica results".into())),
            Reply::Error(e) => Err(RunError::Other(e)),
            Reply::Unsupported(e) => Err(RunError::Unsupported(e)),
            Reply::Crash(e) | Reply::Down(e) => Err(RunError::Other(format!("the backend crashed: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_at_the_cap() {
        use std::io::Read;
        let mut input = std::io::Cursor::new(b"short\nabcdefghij\nlast".to_vec());
        let mut next = || read_line(&mut input, 4, true).map(|l| (l.text, l.whole));
        assert_eq!(next(), Some(("shor".to_string(), false)));
        assert_eq!(next(), Some(("abcd".to_string(), false)));
        assert_eq!(next(), Some(("last".to_string(), true)));
        assert_eq!(next(), None);
        let mut endless = std::io::repeat(b'x').take(3 << 20);
        let mut reader = std::io::BufReader::new(&mut endless);
        let line = read_line(&mut reader, 1 << 20, false).map(|l| (l.text.len(), l.whole));
        assert_eq!(line, Some((1 << 20, false)));
        // Without draining, reading stopped near the cap, not at the end.
        assert!(endless.limit() > 1 << 20);
    }

    #[test]
    fn replies() {
        assert!(matches!(parse_reply(r#"{"shape": "f32[2]", "value": [1, "nan"]}"#, 100), Ok(Reply::Value { .. })));
        assert!(matches!(parse_reply(r#"{"id": 3, "error": "bad"}"#, 100), Ok(Reply::Error(e)) if e == "bad"));
        assert!(matches!(parse_reply(r#"{"unsupported": "Fft"}"#, 100), Ok(Reply::Unsupported(_))));
        assert!(matches!(parse_reply(r#"{"crash": "signal 6"}"#, 100), Ok(Reply::Crash(_))));
        assert!(parse_reply(r#"{"shape": "f32[2]", "value": [1]}"#, 100).is_err());
        assert!(parse_reply("[1]", 100).is_err());
        assert!(parse_reply("nope", 100).is_err());
    }
}
