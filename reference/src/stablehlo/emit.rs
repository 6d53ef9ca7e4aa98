//! The writer's core: SSA names, the generic op printer, regions, functions
//! and the tuple bookkeeping ([`Val`]) every op family uses.

use std::fmt::Write as _;

use super::types::{result_types, tensor_type, type_list};
use super::{called_functions, write_op, ExportError, Fail, Res};
use crate::ir::{ComputationId, InstrId, Instruction, Op};
use crate::types::{ArrayShape, Shape};
use crate::verify::VerifiedModule;

/// A value while writing: one SSA value (of any type, a tuple type
/// included), or a tuple known component by component. Tuple ops and the
/// results of multi-result ops stay [`Val::Tuple`], so their components are
/// used directly; `stablehlo.tuple` is written only when a whole tuple is
/// needed.
#[derive(Clone, Debug)]
pub enum Val {
    One { ssa: String, shape: Shape },
    Tuple(Vec<Val>),
}

impl Val {
    pub fn one(ssa: String, shape: Shape) -> Val {
        Val::One { ssa, shape }
    }

    pub fn shape(&self) -> Shape {
        match self {
            Val::One { shape, .. } => shape.clone(),
            Val::Tuple(parts) => Shape::Tuple(parts.iter().map(Val::shape).collect()),
        }
    }
}

/// An SSA value of a non-tuple type, as an op operand.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub ssa: String,
    pub shape: Shape,
}

impl Leaf {
    pub fn val(self) -> Val {
        Val::One { ssa: self.ssa, shape: self.shape }
    }
}

/// The instruction being written, with the verifier's shapes.
pub struct At<'a> {
    pub m: &'a VerifiedModule,
    pub comp: ComputationId,
    pub id: InstrId,
}

impl At<'_> {
    pub fn instr(&self) -> &Instruction {
        &self.m.computation(self.comp).instructions[self.id]
    }

    /// The instruction's inferred result shape.
    pub fn shape(&self) -> &Shape {
        self.m.shape(self.comp, self.id)
    }

    /// The result shape, which must be an array.
    pub fn array(&self) -> Res<&ArrayShape> {
        self.shape().as_array().ok_or_else(|| Fail::internal(format!("result {} is not an array", self.shape())))
    }
}

/// How deep regions may nest (each level is an inlined computation).
const MAX_DEPTH: usize = 200;
/// The most text one function may take.
const MAX_TEXT: usize = 1 << 28;

/// Writes the whole module.
pub struct ModuleWriter<'m> {
    m: &'m VerifiedModule,
    symbols: Vec<String>,
}

impl<'m> ModuleWriter<'m> {
    pub fn new(m: &'m VerifiedModule) -> ModuleWriter<'m> {
        // Entry is `@main`; the others keep their names, made into MLIR
        // identifiers and unique.
        let mut symbols: Vec<String> = Vec::new();
        for (id, c) in m.module().computations.iter().enumerate() {
            let base = if id == m.entry() { "main".to_string() } else { identifier(&c.name) };
            let mut name = base.clone();
            let mut n = 1;
            while symbols.contains(&name) || (id != m.entry() && name == "main") {
                name = format!("{base}_{n}");
                n += 1;
            }
            symbols.push(name);
        }
        ModuleWriter { m, symbols }
    }

    pub fn write(&self) -> Result<String, ExportError> {
        let entry = self.m.entry();
        let mut out = format!("module @{} {{\n", identifier(&self.m.computation(entry).name));
        let mut w = FuncWriter::new(self.m, &self.symbols);
        out.push_str(&w.function(entry, true)?);
        for c in called_functions(self.m) {
            let mut w = FuncWriter::new(self.m, &self.symbols);
            out.push_str(&w.function(c, false)?);
        }
        out.push_str("}\n");
        Ok(out)
    }
}

/// A name MLIR reads as a bare identifier (`[A-Za-z_][A-Za-z0-9_$.]*`).
fn identifier(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.') { c } else { '_' }).collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        s.insert(0, '_');
    }
    s
}

/// Writes one function: its SSA counter, the text so far, the nesting depth.
pub struct FuncWriter<'m> {
    pub m: &'m VerifiedModule,
    symbols: &'m [String],
    out: String,
    next: usize,
    depth: usize,
    /// Bytes written so far, regions included.
    written: usize,
}

impl<'m> FuncWriter<'m> {
    pub fn new(m: &'m VerifiedModule, symbols: &'m [String]) -> FuncWriter<'m> {
        FuncWriter { m, symbols, out: String::new(), next: 0, depth: 2, written: 0 }
    }

    pub fn symbol(&self, c: ComputationId) -> &str {
        self.symbols.get(c).map_or("?", String::as_str)
    }

    /// A function. The entry keeps its parameter types (tuples included)
    /// and returns its result's top-level components; a private function
    /// (a `Call` target) takes and returns flat lists of leaves.
    fn function(&mut self, c: ComputationId, public: bool) -> Result<String, ExportError> {
        let sig = self.m.signature(c).clone();
        let mut args: Vec<Leaf> = Vec::new();
        let mut params: Vec<Val> = Vec::new();
        for p in &sig.params {
            if public {
                let leaf = Leaf { ssa: format!("%arg{}", args.len()), shape: p.clone() };
                params.push(leaf.clone().val());
                args.push(leaf);
            } else {
                let start = args.len();
                for shape in flat_leaves(p) {
                    args.push(Leaf { ssa: format!("%arg{}", args.len()), shape });
                }
                params.push(rebuild(p, &mut args[start..].iter().cloned()));
            }
        }
        let root = self.inline(c, params).map_err(|f| self.located(c, None, f))?;
        let results = if public { self.top_level(&root) } else { self.leaves(&root) };
        let results = match results {
            Ok(r) => r,
            Err(f) => return Err(self.located(c, None, f)),
        };
        self.ret("func.return", &results);
        let arg_text: Vec<String> = args.iter().map(|a| format!("{}: {}", a.ssa, tensor_type(&a.shape))).collect();
        let result_text: Vec<String> = results.iter().map(|r| tensor_type(&r.shape)).collect();
        let body = std::mem::take(&mut self.out);
        Ok(format!(
            "  func.func {} @{}({}) -> ({}) {{\n{body}  }}\n",
            if public { "public" } else { "private" },
            self.symbol(c),
            arg_text.join(", "),
            result_text.join(", "),
        ))
    }

    /// The error of an instruction, or of the computation when `id` is None.
    fn located(&self, c: ComputationId, id: Option<InstrId>, f: Fail) -> ExportError {
        let comp = self.m.computation(c);
        match f {
            Fail::Nested(e) => *e,
            Fail::Op { kind, message } => {
                let (instruction, op) = match id.and_then(|i| comp.instructions.get(i)) {
                    Some(i) => (i.name.clone(), i.op.name().to_string()),
                    None => (String::new(), String::new()),
                };
                ExportError { kind, computation: comp.name.clone(), instruction, op, message }
            }
        }
    }

    /// Writes computation `c`'s instructions with its parameters bound to
    /// `params`; returns the root's value.
    pub fn inline(&mut self, c: ComputationId, params: Vec<Val>) -> Res<Val> {
        let m = self.m;
        let comp = m.computation(c);
        let mut vals: Vec<Val> = Vec::with_capacity(comp.instructions.len());
        for (id, instr) in comp.instructions.iter().enumerate() {
            let val = match instr.op {
                Op::Parameter { number } => {
                    params.get(number).cloned().ok_or_else(|| Fail::internal(format!("no value for parameter {number}")))
                }
                _ => {
                    let operands: Vec<Val> = instr.operands.iter().filter_map(|&o| vals.get(o).cloned()).collect();
                    if operands.len() != instr.operands.len() {
                        Err(Fail::internal("an operand is not defined before its use"))
                    } else {
                        write_op(self, &At { m, comp: c, id }, &operands)
                    }
                }
            };
            let val = val.and_then(|v| {
                // A computation is inlined at every call site, so nested
                // shared calls can multiply the text: bound it.
                if self.written > MAX_TEXT {
                    return Err(Fail::unsupported(format!(
                        "the text would exceed {} MiB (computations inlined at many call sites)",
                        MAX_TEXT >> 20
                    )));
                }
                Ok(v)
            });
            match val {
                Ok(v) => vals.push(v),
                Err(f) => return Err(Fail::Nested(Box::new(self.located(c, Some(id), f)))),
            }
        }
        vals.get(comp.root).cloned().ok_or_else(|| Fail::internal("the root is not an instruction"))
    }

    fn fresh(&mut self) -> String {
        let s = format!("%{}", self.next);
        self.next += 1;
        s
    }

    fn line(&mut self, text: &str) {
        self.written += text.len() + 2 * self.depth + 1;
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Writes one op in the generic form; returns its results.
    /// `props` is the text inside `<{...}>` (empty: none).
    pub fn op(&mut self, name: &str, operands: &[Leaf], props: &str, regions: &[String], results: &[Shape]) -> Vec<Leaf> {
        let mut text = String::new();
        let base = if results.is_empty() { String::new() } else { self.fresh() };
        let leaves: Vec<Leaf> = match results.len() {
            0 => vec![],
            1 => vec![Leaf { ssa: base.clone(), shape: results[0].clone() }],
            n => (0..n).map(|i| Leaf { ssa: format!("{base}#{i}"), shape: results[i].clone() }).collect(),
        };
        match results.len() {
            0 => {}
            1 => {
                let _ = write!(text, "{base} = ");
            }
            n => {
                let _ = write!(text, "{base}:{n} = ");
            }
        }
        let names: Vec<&str> = operands.iter().map(|o| o.ssa.as_str()).collect();
        let _ = write!(text, "\"{name}\"({})", names.join(", "));
        if !props.is_empty() {
            let _ = write!(text, " <{{{props}}}>");
        }
        if !regions.is_empty() {
            let _ = write!(text, " ({})", regions.join(", "));
        }
        let operand_types: Vec<Shape> = operands.iter().map(|o| o.shape.clone()).collect();
        let _ = write!(text, " : ({}) -> {}", type_list(&operand_types), result_types(results));
        self.line(&text);
        leaves
    }

    /// [`FuncWriter::op`] with one result.
    pub fn op1(&mut self, name: &str, operands: &[Leaf], props: &str, regions: &[String], result: Shape) -> Leaf {
        let mut r = self.op(name, operands, props, regions, std::slice::from_ref(&result));
        r.pop().unwrap_or(Leaf { ssa: "%?".into(), shape: result })
    }

    fn ret(&mut self, name: &str, values: &[Leaf]) {
        let names: Vec<&str> = values.iter().map(|v| v.ssa.as_str()).collect();
        let types: Vec<Shape> = values.iter().map(|v| v.shape.clone()).collect();
        let text = format!("\"{name}\"({}) : ({}) -> ()", names.join(", "), type_list(&types));
        self.line(&text);
    }

    /// A region of one block with arguments of the given types; `body`
    /// writes the ops and returns the values the region returns
    /// (`stablehlo.return`).
    pub fn region(&mut self, args: &[Shape], body: impl FnOnce(&mut Self, Vec<Leaf>) -> Res<Vec<Leaf>>) -> Res<String> {
        // Inlining recurses once per nested region: bound it, so no call
        // chain can exhaust the stack.
        if self.depth > MAX_DEPTH {
            return Err(Fail::unsupported(format!("regions nest deeper than {MAX_DEPTH} levels")));
        }
        let saved = std::mem::take(&mut self.out);
        let leaves: Vec<Leaf> = args.iter().map(|s| Leaf { ssa: self.fresh(), shape: s.clone() }).collect();
        if !leaves.is_empty() {
            let decl: Vec<String> = leaves.iter().map(|l| format!("{}: {}", l.ssa, tensor_type(&l.shape))).collect();
            let label = format!("^bb0({}):", decl.join(", "));
            self.line(&label);
        }
        self.depth += 1;
        let result = body(self, leaves);
        if let Ok(values) = &result {
            self.ret("stablehlo.return", values);
        }
        self.depth -= 1;
        let inner = std::mem::replace(&mut self.out, saved);
        result?;
        let mut text = String::from("{\n");
        text.push_str(&inner);
        for _ in 0..self.depth {
            text.push_str("  ");
        }
        text.push('}');
        Ok(text)
    }

    /// A region that inlines computation `c` with block arguments of its
    /// parameter types (scalars for reductions and comparators) and returns
    /// the leaves of its root.
    pub fn computation_region(&mut self, c: ComputationId) -> Res<String> {
        let params = self.m.signature(c).params.clone();
        let leaf_types: Vec<Shape> = params.iter().flat_map(flat_leaves).collect();
        self.region(&leaf_types, |w, args| {
            let mut it = args.into_iter();
            let vals: Vec<Val> = params.iter().map(|p| rebuild(p, &mut it)).collect();
            let root = w.inline(c, vals)?;
            w.leaves(&root)
        })
    }

    /// The value as one SSA value: a [`Val::Tuple`] is packed with
    /// `stablehlo.tuple`.
    pub fn whole(&mut self, v: &Val) -> Res<Leaf> {
        match v {
            Val::One { ssa, shape } => Ok(Leaf { ssa: ssa.clone(), shape: shape.clone() }),
            Val::Tuple(parts) => {
                let mut operands = Vec::with_capacity(parts.len());
                for p in parts {
                    operands.push(self.whole(p)?);
                }
                Ok(self.op1("stablehlo.tuple", &operands, "", &[], v.shape()))
            }
        }
    }

    /// The value as one SSA value of an array type.
    pub fn array(&mut self, v: &Val) -> Res<(Leaf, ArrayShape)> {
        let leaf = self.whole(v)?;
        match &leaf.shape {
            Shape::Array(a) => {
                let a = a.clone();
                Ok((leaf, a))
            }
            other => Err(Fail::internal(format!("expected an array operand, got {other}"))),
        }
    }

    /// Every array and token inside the value, depth first; tuple-typed
    /// SSA values are taken apart with `stablehlo.get_tuple_element`.
    pub fn leaves(&mut self, v: &Val) -> Res<Vec<Leaf>> {
        let mut out = Vec::new();
        self.collect_leaves(v, &mut out)?;
        Ok(out)
    }

    fn collect_leaves(&mut self, v: &Val, out: &mut Vec<Leaf>) -> Res<()> {
        match v {
            Val::Tuple(parts) => {
                for p in parts {
                    self.collect_leaves(p, out)?;
                }
            }
            Val::One { shape: Shape::Tuple(parts), .. } => {
                for i in 0..parts.len() {
                    let part = self.tuple_element(v, i)?;
                    self.collect_leaves(&part, out)?;
                }
            }
            Val::One { ssa, shape } => out.push(Leaf { ssa: ssa.clone(), shape: shape.clone() }),
        }
        Ok(())
    }

    /// The top-level components of a tuple value, each whole; a non-tuple
    /// value is its own single component.
    pub fn top_level(&mut self, v: &Val) -> Res<Vec<Leaf>> {
        match (v, v.shape()) {
            (Val::Tuple(parts), _) => parts.iter().map(|p| self.whole(p)).collect(),
            (Val::One { .. }, Shape::Tuple(parts)) => (0..parts.len())
                .map(|i| {
                    let part = self.tuple_element(v, i)?;
                    self.whole(&part)
                })
                .collect(),
            _ => Ok(vec![self.whole(v)?]),
        }
    }

    /// Component `i` of a tuple value.
    pub fn tuple_element(&mut self, v: &Val, i: usize) -> Res<Val> {
        match v {
            Val::Tuple(parts) => parts.get(i).cloned().ok_or_else(|| Fail::internal(format!("tuple has no element {i}"))),
            Val::One { ssa, shape: Shape::Tuple(parts) } => {
                let part = parts.get(i).cloned().ok_or_else(|| Fail::internal(format!("tuple has no element {i}")))?;
                let operand = Leaf { ssa: ssa.clone(), shape: v.shape() };
                Ok(self.op1("stablehlo.get_tuple_element", &[operand], &format!("index = {i} : i32"), &[], part).val())
            }
            Val::One { shape, .. } => Err(Fail::internal(format!("get_tuple_element of the non-tuple {shape}"))),
        }
    }
}

/// The arrays and tokens of a shape, depth first.
pub fn flat_leaves(shape: &Shape) -> Vec<Shape> {
    match shape {
        Shape::Tuple(parts) => parts.iter().flat_map(flat_leaves).collect(),
        other => vec![other.clone()],
    }
}

/// The value of `shape` made of the next leaves (the inverse of
/// [`FuncWriter::leaves`]).
pub fn rebuild(shape: &Shape, leaves: &mut impl Iterator<Item = Leaf>) -> Val {
    match shape {
        Shape::Tuple(parts) => Val::Tuple(parts.iter().map(|p| rebuild(p, leaves)).collect()),
        other => match leaves.next() {
            Some(l) => l.val(),
            None => Val::one("%missing".into(), other.clone()),
        },
    }
}

/// A list of values' leaves (operands of variadic ops taking tuples apart).
pub fn all_leaves(w: &mut FuncWriter, vals: &[Val]) -> Res<Vec<Leaf>> {
    let mut out = Vec::new();
    for v in vals {
        out.extend(w.leaves(v)?);
    }
    Ok(out)
}
