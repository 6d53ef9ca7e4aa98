//! Generators of valid random programs (proptest strategies), shared by the
//! property tests, `xlaref fuzz` and the conformance campaign.
//!
//! A generator builds an xla-json/1 module (the form a failing case is
//! written in) and its arguments; [`Program::verified`] reads and verifies
//! it. Generators aim to produce only valid programs; one that does not
//! verify is a generator bug, which the tests count.

mod control_ops;
mod dag;
mod data_ops;
mod elementwise_ops;
mod fusion_ops;
mod linalg_ops;
mod row_level;
pub mod values;
mod world_ops;

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use xlaref_reference::json::{read_module, write_literal, write_typed_literal, Path, ReadOptions, WriteOptions};
use xlaref_reference::literal::Literal;
use xlaref_reference::types::ElementType;
use xlaref_reference::verify::{verify, VerifiedModule, VerifyOptions};

/// A generated program: which op it exercises, its module, its arguments.
#[derive(Clone, Debug)]
pub struct Program {
    pub op: &'static str,
    pub module: Value,
    pub args: Vec<Literal>,
    /// How many replicas run the module (1 unless it holds collectives).
    pub replicas: usize,
    /// Per-replica arguments when `replicas` > 1 (replica `r` gets
    /// `replica_args[r]`); `args` is then replica 0's list.
    pub replica_args: Option<Vec<Vec<Literal>>>,
}

impl Program {
    /// The module read and verified.
    pub fn verified(&self, max_elements: i64) -> Result<VerifiedModule, String> {
        let module = read_module(&self.module, &Path::new("module"), ReadOptions { max_elements }).map_err(|e| e.to_string())?;
        verify(module, &VerifyOptions { max_elements, ..VerifyOptions::default() }).map_err(|e| e.to_string())
    }

    /// The program as an xla-json/1 case with the given expectation.
    pub fn case(&self, name: &str, source: &str, expected: Value) -> Value {
        let typed =
            |list: &[Literal]| -> Vec<Value> { list.iter().map(|a| write_typed_literal(a, WriteOptions { exact_bits: true })).collect() };
        let args = typed(&self.args);
        let mut case = json!({"format": "xla-json/1", "name": name, "source": source, "module": self.module, "args": args});
        if let (Some(lists), Value::Object(obj)) = (&self.replica_args, &mut case) {
            obj.insert("replicas".into(), json!(self.replicas));
            obj.insert("replica_args".into(), Value::Array(lists.iter().map(|l| Value::Array(typed(l))).collect()));
            obj.remove("args");
        }
        if let Value::Object(obj) = &mut case {
            // A multi-replica run that succeeded has one result per replica.
            match (&self.replica_args, &expected) {
                (Some(_), Value::Array(_)) => obj.insert("expected_per_replica".into(), expected),
                _ => obj.insert("expected".into(), expected),
            };
        }
        case
    }
}

/// Builds one module: the entry computation `main` and scalar computations.
#[derive(Default)]
pub struct Builder {
    params: Vec<Value>,
    args: Vec<Literal>,
    instructions: Vec<Value>,
    computations: Map<String, Value>,
}

impl Builder {
    /// A parameter of main, with the argument it will be given.
    pub fn param(&mut self, value: Literal) -> String {
        let name = format!("p{}", self.params.len());
        self.params.push(json!({"name": name, "shape": value.shape().to_string()}));
        self.args.push(value);
        name
    }

    /// A constant instruction.
    pub fn constant(&mut self, value: &Literal) -> String {
        let literal = write_literal(value, WriteOptions { exact_bits: true });
        let shape = value.shape().to_string();
        self.push("Constant", &[], json!({"shape": shape, "literal": literal}))
    }

    /// An instruction of main; `attrs` is a JSON object of attributes.
    pub fn push(&mut self, op: &str, operands: &[&str], attrs: Value) -> String {
        let name = format!("i{}", self.instructions.len());
        self.instructions.push(ins(&name, op, operands, attrs));
        name
    }

    /// `name(a, b) = op(a, b)` on scalars of type `t`, returning `result`
    /// type (pred for comparisons).
    pub fn binary_computation(&mut self, op: &str, t: ElementType) -> String {
        let name = format!("{}_{}", op.to_lowercase(), t.name());
        let shape = format!("{}[]", t.name());
        self.computations.insert(
            name.clone(),
            json!({"params": [{"name": "a", "shape": shape}, {"name": "b", "shape": shape}],
                   "instructions": [{"name": "r", "op": op, "operands": ["a", "b"]}]}),
        );
        name
    }

    /// A computation given whole.
    pub fn computation(&mut self, name: &str, body: Value) -> String {
        self.computations.insert(name.into(), body);
        name.into()
    }

    pub fn finish(mut self, op: &'static str) -> Program {
        self.computations.insert("main".into(), json!({"params": self.params, "instructions": self.instructions}));
        Program {
            op,
            module: json!({"format": "xla-json/1", "computations": self.computations}),
            args: self.args,
            replicas: 1,
            replica_args: None,
        }
    }

    /// The next free instruction name of main (for callers that build
    /// instruction JSON themselves).
    pub fn len(&self) -> usize {
        self.instructions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instructions.is_empty()
    }
}

/// The shape string `t[]` of a scalar.
pub fn scalar_shape(t: ElementType) -> String {
    format!("{}[]", t.name())
}

/// The shape string of an array of type `t`.
pub fn array_shape(t: ElementType, dims: &[i64]) -> String {
    let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", t.name(), d.join(","))
}

/// One instruction of a computation given as JSON.
pub fn ins(name: &str, op: &str, operands: &[&str], attrs: Value) -> Value {
    let mut instr = Map::new();
    instr.insert("name".into(), json!(name));
    instr.insert("op".into(), json!(op));
    instr.insert("operands".into(), json!(operands));
    if let Value::Object(a) = attrs {
        instr.extend(a);
    }
    Value::Object(instr)
}

/// A computation from its parameters (name, shape) and instructions.
pub fn comp(params: &[(&str, String)], instructions: Vec<Value>) -> Value {
    let params: Vec<Value> = params.iter().map(|(n, s)| json!({"name": n, "shape": s})).collect();
    json!({"params": params, "instructions": instructions})
}

/// A While condition on a `state` tuple whose element 0 is an s32
/// counter: `counter < trips`.
pub fn counter_below(state: &str, trips: i64) -> Value {
    comp(
        &[("s", state.to_string())],
        vec![
            ins("i", "GetTupleElement", &["s"], json!({"index": 0})),
            const_ins("n", ElementType::S32, trips),
            ins("r", "Lt", &["i", "n"], json!({})),
        ],
    )
}

/// A scalar constant instruction of type `t` holding the integer `v`.
pub fn const_ins(name: &str, t: ElementType, v: i64) -> Value {
    let literal = if t.is_pred() { json!(v != 0) } else { json!(v) };
    ins(name, "Constant", &[], json!({"shape": scalar_shape(t), "literal": literal}))
}

/// Every op with a generator, by the name `--ops` takes.
pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    let mut all = elementwise_ops::generators();
    all.extend(data_ops::generators());
    all.extend(control_ops::generators());
    all.extend(linalg_ops::generators());
    all.extend(world_ops::generators());
    all.extend(fusion_ops::generators());
    all.extend(row_level::generators());
    all.push(("Dag", dag::dag()));
    all
}

/// The generators of the named ops (all when `names` is empty); unknown
/// names are an error listing the known ones.
pub fn select(names: &[String]) -> Result<Vec<(&'static str, BoxedStrategy<Program>)>, String> {
    let all = generators();
    if names.is_empty() {
        return Ok(all);
    }
    if let Some(unknown) = names.iter().find(|n| !all.iter().any(|(name, _)| name.eq_ignore_ascii_case(n))) {
        let known: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
        return Err(format!("no generator for op `{unknown}`; known: {}", known.join(", ")));
    }
    Ok(all.into_iter().filter(|(name, _)| names.iter().any(|n| name.eq_ignore_ascii_case(n))).collect())
}
