//! The structure of an HLO module: the header, computations (`ENTRY`,
//! `ROOT`), and instruction lines `[ROOT] name = shape opcode(operands),
//! attr=value, ...`.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::cursor::Cursor;
use super::ops;
use super::HloError;

/// One instruction line, read but not yet mapped onto an op.
pub struct Instr<'a> {
    pub name: String,
    pub shape: String,
    pub opcode: &'a str,
    pub operands: Vec<String>,
    /// The text inside `constant(...)` / `parameter(...)`, at its position.
    pub payload: Option<Cursor<'a>>,
    pub attrs: Vec<(&'a str, &'a str)>,
    pub root: bool,
    /// At the opcode, for errors.
    pub at: Cursor<'a>,
}

impl<'a> Instr<'a> {
    pub fn attr(&self, key: &str) -> Option<&'a str> {
        self.attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    pub fn error(&self, message: impl Into<String>) -> HloError {
        self.at.error(message)
    }
}

/// A computation as read: its name and instruction lines.
struct Comp<'a> {
    name: String,
    entry: bool,
    instrs: Vec<Instr<'a>>,
    at: Cursor<'a>,
}

/// A computation already mapped: its params, JSON instructions and root, kept
/// for fusions that inline it.
pub struct Mapped {
    pub params: Vec<(usize, String, String)>,
    pub instructions: Vec<Value>,
    pub root: String,
}

/// Reads a whole HLO module into an xla-json/1 module object.
pub fn parse_hlo(text: &str) -> Result<Value, HloError> {
    let comps = computations(text)?;
    let mut mapped: HashMap<String, Mapped> = HashMap::new();
    let mut out = Map::new();
    let mut entry = None;
    for (i, comp) in comps.iter().enumerate() {
        // Two computations of one name, or two entries: which one is meant
        // is a guess, so neither is taken.
        if comps[..i].iter().any(|c| c.name == comp.name) {
            return Err(comp.at.error(format!("a second computation named `{}`", comp.name)));
        }
        if comp.entry && comps[..i].iter().any(|c| c.entry) {
            return Err(comp.at.error(format!("a second ENTRY computation (`{}`)", comp.name)));
        }
        let m = map_computation(comp, &mapped)?;
        let params: Vec<Value> = m.params.iter().map(|(_, n, s)| json!({"name": n, "shape": s})).collect();
        out.insert(comp.name.clone(), json!({"params": params, "instructions": m.instructions, "root": m.root}));
        if comp.entry {
            entry = Some(comp.name.clone());
        }
        mapped.insert(comp.name.clone(), m);
    }
    let entry = match (entry, comps.last()) {
        (Some(e), _) => e,
        (None, Some(last)) => last.name.clone(),
        (None, None) => return Err(HloError { line: 1, column: 1, message: "no computation in the module".into() }),
    };
    Ok(json!({"format": "xla-json/1", "entry": entry, "computations": out}))
}

/// The stack-frame tables XLA prints between the `HloModule` header and
/// the first computation (every dump, every `compile().as_text()`): source
/// locations for `metadata={... stack_frame_id=N}`. Metadata; skipped.
const METADATA_TABLES: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

/// A row of a metadata table: `ID "text"` or `ID {key=value ...}`.
fn is_table_row(trimmed: &str) -> bool {
    let rest = trimmed.trim_start_matches(|c: char| c.is_ascii_digit());
    rest.len() < trimmed.len() && {
        let value = rest.trim_start();
        value.len() < rest.len() && ((value.starts_with('"') && value.ends_with('"')) || (value.starts_with('{') && value.ends_with('}')))
    }
}

/// How deep brackets may nest on one line (tuple shapes, constants,
/// attribute values). Every recursive reader of HLO text works within one
/// line, so this bound keeps them all off the end of the stack.
pub const MAX_NESTING: usize = 200;

/// Refuses a line whose brackets nest deeper than [`MAX_NESTING`] (quoted
/// strings do not count).
fn check_nesting(line: &str, n: usize) -> Result<(), HloError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, c) in line.char_indices() {
        if in_string {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => escaped = false,
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '{' | '[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let column = line[..i].chars().count() + 1;
                    return Err(HloError { line: n, column, message: format!("brackets nested deeper than {MAX_NESTING}") });
                }
            }
            ')' | '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn computations(text: &str) -> Result<Vec<Comp<'_>>, HloError> {
    let mut comps: Vec<Comp> = Vec::new();
    let mut open: Option<Comp> = None;
    let mut seen_header = false;
    let mut table: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        check_nesting(line, n)?;
        let trimmed = line.trim();
        let c = Cursor::new(line, n);
        if trimmed.is_empty() || trimmed.starts_with("//") {
            table = None;
            continue;
        }
        if open.is_none() {
            if let Some(name) = METADATA_TABLES.iter().find(|t| **t == trimmed) {
                table = Some(name);
                continue;
            }
            if let Some(name) = table {
                if !is_table_row(trimmed) {
                    return Err(c.error(format!("expected a row `ID \"text\"` or `ID {{...}}` of the {name} table")));
                }
                continue;
            }
        }
        if trimmed.starts_with("HloModule") {
            if seen_header || !comps.is_empty() || open.is_some() {
                return Err(c.error("a second `HloModule` header"));
            }
            seen_header = true;
            continue;
        }
        if trimmed == "}" {
            let done = open.take().ok_or_else(|| c.error("`}` closes no computation"))?;
            comps.push(done);
            continue;
        }
        if let Some(comp) = open.as_mut() {
            comp.instrs.push(instruction(line, n)?);
            continue;
        }
        if !trimmed.ends_with('{') {
            return Err(c.error("expected a computation header `[ENTRY] name [(params) -> shape] {`"));
        }
        let mut h = Cursor::new(line, n);
        let entry = h.eat("ENTRY ");
        let name = h.name()?.to_string();
        open = Some(Comp { name, entry, instrs: Vec::new(), at: h });
    }
    if let Some(comp) = open {
        return Err(comp.at.error(format!("computation `{}` is not closed by `}}`", comp.name)));
    }
    if !seen_header && comps.is_empty() {
        return Err(HloError { line: 1, column: 1, message: "not an HLO module (no `HloModule` header)".into() });
    }
    Ok(comps)
}

/// `[ROOT] name = shape opcode(operands), attr=value, ...`
fn instruction(line: &str, n: usize) -> Result<Instr<'_>, HloError> {
    let mut c = Cursor::new(line, n);
    let root = c.eat("ROOT ");
    let name = c.name()?.to_string();
    c.expect("=")?;
    let shape = c.shape()?;
    c.skip_ws();
    let at = c.clone();
    let opcode = c.name()?;
    let mut operands = Vec::new();
    let mut payload = None;
    if matches!(opcode, "constant" | "parameter") {
        let mut inner = c.clone();
        c.balanced()?;
        inner.expect("(")?;
        payload = Some(inner);
    } else {
        c.expect("(")?;
        if !c.eat(")") {
            loop {
                operands.push(operand(&mut c)?);
                if c.eat(")") {
                    break;
                }
                c.expect(",")?;
            }
        }
    }
    let mut attrs = Vec::new();
    while c.eat(",") {
        let key = c.name()?;
        c.expect("=")?;
        attrs.push((key, c.attribute_value()?));
    }
    if !c.at_end() {
        return Err(c.error(format!("unexpected `{}` after the instruction", c.rest().chars().take(20).collect::<String>())));
    }
    Ok(Instr { name, shape, opcode, operands, payload, attrs, root, at })
}

/// An operand: a name, possibly preceded by its shape (`f32[2]{0} %x`).
fn operand(c: &mut Cursor) -> Result<String, HloError> {
    let mut probe = c.clone();
    if probe.peek() == Some('(') {
        c.shape()?;
        return Ok(c.name()?.to_string());
    }
    probe.name()?;
    if probe.rest().starts_with('[') {
        c.shape()?;
    }
    Ok(c.name()?.to_string())
}

fn map_computation(comp: &Comp, done: &HashMap<String, Mapped>) -> Result<Mapped, HloError> {
    let mut params = Vec::new();
    let mut instructions = Vec::new();
    let mut shapes: HashMap<String, String> = HashMap::new();
    let mut root = None;
    for instr in &comp.instrs {
        shapes.insert(instr.name.clone(), instr.shape.clone());
        if instr.root {
            root = Some(instr.name.clone());
        }
        if instr.opcode == "parameter" {
            let mut p = instr.payload.clone().ok_or_else(|| instr.error("parameter needs a number"))?;
            let number = p.name()?.parse::<usize>().map_err(|_| instr.error("parameter number is not an integer"))?;
            params.push((number, instr.name.clone(), instr.shape.clone()));
            continue;
        }
        let location = serde_json::Value::String(instr.at.location());
        for mut value in ops::map(instr, &shapes, done)? {
            // Instructions inlined from a called computation keep their own.
            if let Some(object) = value.as_object_mut() {
                object.entry("location").or_insert_with(|| location.clone());
            }
            instructions.push(value);
        }
    }
    params.sort_by_key(|p| p.0);
    for (i, p) in params.iter().enumerate() {
        if p.0 != i {
            // Name what is wrong: a gap, a repeat, or a number past the count.
            let what = match i.checked_sub(1).and_then(|j| params.get(j)) {
                Some(prev) if prev.0 == p.0 => format!("two parameters numbered {}", p.0),
                _ if p.0 >= params.len() => format!(
                    "parameter `{}` is numbered {} but the computation has {} parameters (numbers run from 0 without gaps); no parameter({i})",
                    p.1,
                    p.0,
                    params.len()
                ),
                _ => format!("no parameter({i})"),
            };
            return Err(comp.at.error(format!("computation `{}`: {what}", comp.name)));
        }
    }
    let root = root.or_else(|| comp.instrs.last().map(|i| i.name.clone())).ok_or_else(|| comp.at.error("an empty computation"))?;
    Ok(Mapped { params, instructions, root })
}
