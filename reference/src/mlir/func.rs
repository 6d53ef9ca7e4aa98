//! Functions and regions into xla-json/1 computations: SSA names to
//! instruction names, multi-result values to tuples, and values a `while`,
//! `if` or `case` region reads from outside (MLIR lets those regions see
//! enclosing values; the document's computations take everything as
//! parameters) into extra parameters.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::cursor::Cursor;
use super::ops;
use super::syntax::{self, Func, Op, Region, Use, R};
use super::types::Ty;
use super::{Check, MlirError, TestFile, TestModule};

/// What a module is read for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// A program: check ops are read past.
    Program,
    /// A test: check ops become [`Check`]s and the entry returns what they read.
    Test,
}

/// A module read into xla-json/1.
pub struct Read {
    pub module: Value,
    pub entry: String,
    pub checks: Vec<Check>,
}

/// A value in scope.
#[derive(Clone, Debug)]
pub struct Val {
    pub json: String,
    pub ty: Ty,
    /// A multi-result op's results, read with `%x#i`.
    pub multi: Option<Vec<Ty>>,
}

/// How a region brings in values from outside.
#[derive(Clone, Debug)]
pub struct Captures {
    /// The tuple parameter that carries them.
    pub param: String,
    /// Index of the first captured value in that tuple.
    pub base: usize,
    /// Each captured value: its name in the enclosing scope, and its type.
    pub list: Vec<(String, Ty)>,
}

/// One computation being built.
pub struct Scope<'a> {
    pub values: HashMap<&'a str, Val>,
    pub instrs: Vec<Value>,
    names: HashSet<String>,
    pub captures: Option<Captures>,
    /// `GetTupleElement`s already made, by `tuple#index`.
    elements: HashMap<String, Val>,
}

impl<'a> Scope<'a> {
    pub fn new(captures: Option<Captures>) -> Self {
        Scope { values: HashMap::new(), instrs: Vec::new(), names: HashSet::new(), captures, elements: HashMap::new() }
    }

    /// Keeps `name` from being given to an instruction.
    pub fn reserve(&mut self, name: &str) {
        self.names.insert(name.to_string());
    }

    /// A fresh instruction name based on `base`.
    pub fn fresh(&mut self, base: &str) -> String {
        let base = base.trim_start_matches('%');
        let mut name = base.to_string();
        let mut i = 1;
        while self.names.contains(&name) {
            name = format!("{base}.{i}");
            i += 1;
        }
        self.names.insert(name.clone());
        name
    }
}

/// The reader's state for one module.
pub struct Ctx<'a> {
    pub c: Cursor<'a>,
    pub funcs: HashMap<&'a str, &'a Func<'a>>,
    pub computations: Map<String, Value>,
    comp_names: HashSet<String>,
    pub scopes: Vec<Scope<'a>>,
    pub mode: Mode,
    /// Values the checks read, and the checks.
    pub checked: Vec<String>,
    pub checks: Vec<Check>,
    pub max_elements: u64,
    /// The byte offset of the op being converted: its instructions'
    /// `location`.
    at: usize,
    /// (offset, line, offset of that line's start) of the last location
    /// computed: ops come in text order, so each is found from the last one
    /// rather than from the start of a text that may be megabytes long.
    line_mark: (usize, usize, usize),
}

/// Largest constant the reader materializes (the engines' default limit).
const MAX_ELEMENTS: u64 = 1 << 28;

impl<'a> Ctx<'a> {
    pub fn err(&self, at: usize, message: impl Into<String>) -> MlirError {
        self.c.error_at(at, message)
    }

    pub fn scope(&mut self) -> &mut Scope<'a> {
        let last = self.scopes.len() - 1;
        &mut self.scopes[last]
    }

    /// A fresh computation name based on `base`.
    pub fn fresh_computation(&mut self, base: &str) -> String {
        let base = base.trim_start_matches('@');
        let mut name = base.to_string();
        let mut i = 1;
        while self.comp_names.contains(&name) {
            name = format!("{base}.{i}");
            i += 1;
        }
        self.comp_names.insert(name.clone());
        name
    }

    /// Appends an instruction (`name` must come from [`Scope::fresh`]).
    pub fn emit(&mut self, mut instr: Map<String, Value>, name: &str, op: &str, operands: Vec<String>) {
        instr.insert("name".into(), json!(name));
        instr.insert("op".into(), json!(op));
        instr.insert("operands".into(), json!(operands));
        instr.insert("location".into(), Value::String(self.location()));
        self.scope().instrs.push(Value::Object(instr));
    }

    /// `line L column C` of the op being converted.
    fn location(&mut self) -> String {
        let text = self.c.text();
        let at = self.at.min(text.len());
        let (mut pos, mut line, mut start) = self.line_mark;
        if at < pos {
            (pos, line, start) = (0, 1, 0);
        }
        let bytes = text.as_bytes();
        for (i, &b) in bytes[pos..at].iter().enumerate() {
            if b == b'\n' {
                line += 1;
                start = pos + i + 1;
            }
        }
        self.line_mark = (at, line, start);
        let column = text.get(start..at).map_or(at - start, |s| s.chars().count()) + 1;
        format!("line {line} column {column}")
    }

    /// Binds a result name to a value.
    pub fn bind(&mut self, name: &'a str, v: Val) {
        self.scope().values.insert(name, v);
    }

    /// The value a use names, brought into the current scope: `%x#i` reads
    /// one result of a multi-result op, and a value from outside a
    /// capturing region becomes one more element of its tuple parameter.
    pub fn lookup(&mut self, u: &Use<'a>) -> R<Val> {
        let top = self.scopes.len() - 1;
        let found = (0..=top).rev().find_map(|k| self.scopes[k].values.get(u.name).map(|v| (k, v.clone())));
        let Some((k, mut v)) = found else {
            return Err(self.err(u.at, format!("{} is not defined before this use", super::quote(u.name))));
        };
        let mut key = u.name.to_string();
        match (u.index, v.multi.clone()) {
            (None, _) | (Some(0), None) => {}
            (Some(i), Some(tys)) => {
                let ty = tys.get(i).cloned().ok_or_else(|| self.err(u.at, format!("{}#{i}: the op has {} results", u.name, tys.len())))?;
                key = format!("{}#{i}", u.name);
                v = element(&mut self.scopes[k], &v.json, i, ty, &key);
            }
            (Some(i), None) => return Err(self.err(u.at, format!("{}#{i}: the op has one result", u.name))),
        }
        if k == top {
            return Ok(v);
        }
        if v.multi.is_some() {
            return Err(self
                .err(u.at, format!("{}: a region reads a multi-result value from outside; read one result (`#i`)", super::quote(u.name))));
        }
        for level in k + 1..=top {
            let scope = &mut self.scopes[level];
            let cache = format!("captured:{key}");
            if let Some(known) = scope.elements.get(&cache) {
                v = known.clone();
                continue;
            }
            let Some(cap) = scope.captures.as_mut() else {
                return Err(
                    self.err(u.at, format!("{} is defined outside this region, which cannot read outside values", super::quote(u.name)))
                );
            };
            cap.list.push((v.json.clone(), v.ty.clone()));
            let index = cap.base + cap.list.len() - 1;
            let param = cap.param.clone();
            v = element(scope, &param, index, v.ty.clone(), &format!("{}.captured", key.trim_start_matches('%')));
            scope.elements.insert(cache, v.clone());
        }
        Ok(v)
    }

    /// A `GetTupleElement` of `tuple` in the current scope.
    pub fn get_tuple_element(&mut self, tuple: &str, index: usize, ty: Ty, base: &str) -> Val {
        let last = self.scopes.len() - 1;
        element(&mut self.scopes[last], tuple, index, ty, base)
    }

    /// Adds a computation built from a finished scope.
    pub fn add_computation(&mut self, name: &str, params: Vec<(String, Ty)>, scope: Scope<'a>, root: String) {
        let params: Vec<Value> = params.iter().map(|(n, t)| json!({"name": n, "shape": t.shape()})).collect();
        self.computations.insert(name.to_string(), json!({"params": params, "instructions": scope.instrs, "root": root}));
    }

    /// Converts the ops of a region in the current scope, up to its
    /// terminator; returns the values the terminator returns.
    pub fn ops(&mut self, region: &'a Region<'a>, terminators: &[&str]) -> R<Vec<Val>> {
        for op in &region.ops {
            if terminators.contains(&op.name) {
                let mut out = Vec::with_capacity(op.operands.len());
                for u in &op.operands {
                    out.push(self.lookup(u)?);
                }
                return Ok(out);
            }
            let outer = std::mem::replace(&mut self.at, op.at);
            let mapped = ops::map(self, op);
            self.at = outer;
            mapped?;
        }
        Err(self.err(region.at, format!("a region that does not end with {}", terminators.join(" or "))))
    }

    /// The root of a computation returning `vals`: the value itself, or a
    /// tuple of them.
    pub fn root_of(&mut self, vals: Vec<Val>, base: &str) -> String {
        if vals.len() == 1 && vals[0].multi.is_none() {
            return vals[0].json.clone();
        }
        let name = self.scope().fresh(base);
        let operands: Vec<String> = vals.iter().map(|v| v.json.clone()).collect();
        self.emit(Map::new(), &name, "Tuple", operands);
        name
    }

    /// A region whose arguments are the computation's parameters and which
    /// reads nothing from outside (reductions, comparators, scatter
    /// updates); returns the computation's name.
    pub fn isolated_region(&mut self, region: &'a Region<'a>, base: &str) -> R<String> {
        let name = self.fresh_computation(base);
        self.scopes.push(Scope::new(None));
        let mut params = Vec::new();
        for (arg, ty) in &region.args {
            let json = self.scope().fresh(arg);
            params.push((json.clone(), ty.clone()));
            self.bind(arg, Val { json, ty: ty.clone(), multi: None });
        }
        let result = self.ops(region, &["stablehlo.return", "return"]);
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                self.scopes.pop();
                return Err(e);
            }
        };
        let root = self.root_of(result, "result");
        let scope = self.scopes.pop().unwrap_or_else(|| Scope::new(None));
        self.add_computation(&name, params, scope, root);
        Ok(name)
    }
}

/// Element `index` of `tuple` in `scope`, made once.
fn element(scope: &mut Scope, tuple: &str, index: usize, ty: Ty, base: &str) -> Val {
    let key = format!("{tuple}#{index}");
    if let Some(v) = scope.elements.get(&key) {
        return v.clone();
    }
    let name = scope.fresh(base);
    scope.instrs.push(json!({"name": name, "op": "GetTupleElement", "operands": [tuple], "index": index}));
    let v = Val { json: name, ty, multi: None };
    scope.elements.insert(key, v.clone());
    v
}

/// Reads one module (one `// -----` chunk).
pub fn read_module(text: &str, mode: Mode) -> R<Read> {
    read_chunk(text, 0, text.len(), mode)
}

fn read_chunk(text: &str, start: usize, end: usize, mode: Mode) -> R<Read> {
    let mut c = Cursor::new(text).span(start, end);
    let funcs = syntax::module(&mut c)?;
    convert(Cursor::new(text), &funcs, mode)
}

/// The entry: `@main`, else (for tests) the function holding checks, else
/// the last public function.
fn entry_of<'a>(funcs: &'a [Func<'a>], mode: Mode) -> Option<&'a Func<'a>> {
    let with_body = || funcs.iter().filter(|f| f.body.is_some());
    if let Some(f) = with_body().find(|f| f.name == "@main") {
        return Some(f);
    }
    if mode == Mode::Test {
        let has_check = |f: &&Func| f.body.as_ref().is_some_and(|b| b.ops.iter().any(ops::is_check));
        if let Some(f) = with_body().find(has_check) {
            return Some(f);
        }
    }
    with_body().rfind(|f| f.public).or_else(|| with_body().next_back())
}

fn convert<'a>(c: Cursor<'a>, funcs: &'a [Func<'a>], mode: Mode) -> R<Read> {
    let entry = entry_of(funcs, mode).ok_or_else(|| c.error_at(0, "no function with a body in the module"))?;
    let mut ctx = Ctx {
        c,
        funcs: HashMap::new(),
        computations: Map::new(),
        comp_names: HashSet::new(),
        scopes: Vec::new(),
        mode,
        checked: Vec::new(),
        checks: Vec::new(),
        max_elements: MAX_ELEMENTS,
        at: 0,
        line_mark: (0, 1, 0),
    };
    for f in funcs {
        if ctx.funcs.insert(f.name, f).is_some() {
            return Err(ctx.err(f.at, format!("a second function named {}", super::quote(f.name))));
        }
        ctx.comp_names.insert(f.name.trim_start_matches('@').to_string());
    }
    for f in funcs {
        if f.body.is_some() {
            function(&mut ctx, f, std::ptr::eq(f, entry))?;
        }
    }
    let entry_name = entry.name.trim_start_matches('@').to_string();
    let module = json!({"format": "xla-json/1", "entry": entry_name, "computations": Value::Object(std::mem::take(&mut ctx.computations))});
    Ok(Read { module, entry: entry_name, checks: ctx.checks })
}

/// A `func.func` as a computation.
fn function<'a>(ctx: &mut Ctx<'a>, f: &'a Func<'a>, is_entry: bool) -> R<()> {
    let Some(body) = f.body.as_ref() else { return Ok(()) };
    ctx.scopes.push(Scope::new(None));
    let mut params = Vec::new();
    for (arg, ty) in &f.args {
        let json = ctx.scope().fresh(arg);
        params.push((json.clone(), ty.clone()));
        ctx.bind(arg, Val { json, ty: ty.clone(), multi: None });
    }
    let checks_before = ctx.checks.len();
    let result = ctx.ops(body, &["func.return", "return"]);
    let vals = match result {
        Ok(v) => v,
        Err(e) => {
            ctx.scopes.pop();
            return Err(e);
        }
    };
    if !is_entry && ctx.checks.len() != checks_before {
        ctx.scopes.pop();
        return Err(ctx.err(f.at, "check ops outside the entry function"));
    }
    let root = if is_entry && ctx.mode == Mode::Test {
        let checked: Vec<Val> = std::mem::take(&mut ctx.checked).into_iter().map(|json| Val { json, ty: Ty::Token, multi: None }).collect();
        let name = ctx.scope().fresh("checked");
        let operands: Vec<String> = checked.iter().map(|v| v.json.clone()).collect();
        ctx.emit(Map::new(), &name, "Tuple", operands);
        name
    } else {
        ctx.root_of(vals, "result")
    };
    let scope = ctx.scopes.pop().unwrap_or_else(|| Scope::new(None));
    let name = f.name.trim_start_matches('@').to_string();
    ctx.add_computation(&name, params, scope, root);
    Ok(())
}

/// Splits a test file at `// -----` lines and reads each module.
pub fn read_test_file(text: &str) -> TestFile {
    let first = text.lines().next().unwrap_or("");
    let disabled = first.contains("RUN-DISABLED").then(|| {
        let reason = first.split("RUN-DISABLED").nth(1).unwrap_or("").trim_matches(|c: char| c == ':' || c.is_whitespace());
        if reason.is_empty() {
            "RUN-DISABLED".to_string()
        } else {
            reason.to_string()
        }
    });
    let mut modules = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    let mut chunks = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.trim() == "// -----" {
            chunks.push((start, offset));
            start = offset + line.len();
        }
        offset += line.len();
    }
    chunks.push((start, text.len()));
    for (s, e) in chunks {
        let line = Cursor::line_col(text, s).0;
        let result = read_chunk(text, s, e, Mode::Test);
        let (name, module, checks) = match result {
            Ok(r) => (r.entry, Ok(r.module), r.checks),
            Err(err) => (chunk_name(&text[s..e]), Err(err), vec![]),
        };
        modules.push(TestModule { name, line, module, checks });
    }
    TestFile { disabled, modules }
}

/// A module's function name, read by eye, for modules that fail to read.
fn chunk_name(text: &str) -> String {
    text.find("func.func")
        .and_then(|i| text[i..].find('@').map(|j| i + j + 1))
        .map(|s| text[s..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        .unwrap_or_default()
}

/// Resolves every operand of an op.
pub fn operands<'a>(ctx: &mut Ctx<'a>, op: &Op<'a>) -> R<Vec<Val>> {
    op.operands.iter().map(|u| ctx.lookup(u)).collect()
}
