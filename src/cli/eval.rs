//! `xlaref eval MODULE.json [--args ARGS.json] [--arg SHAPE=VALUE]...`

use clap::Args;
use serde_json::Value;
use xlaref_reference::eval::Env;
use xlaref_reference::json::{self, Path, WriteOptions};
use xlaref_reference::literal::Literal;
use xlaref_reference::types::Shape;
use xlaref_reference::verify;

use super::{read_text, LimitArgs, EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::harness::engine;

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The module (xla-json/1).
    pub module: String,
    /// A JSON file holding the arguments: a list of typed literals.
    #[arg(long)]
    pub args: Option<String>,
    /// One argument as `SHAPE=VALUE`, e.g. 'f32[2]=[1,2]' (repeatable, in order).
    #[arg(long = "arg")]
    pub arg: Vec<String>,
    /// Which engine evaluates: reference or fast.
    #[arg(long, default_value = "reference")]
    pub engine: String,
    /// Seed of RngUniform and RngNormal.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
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
    eprintln!("error: {message}");
    EXIT_BAD_INPUT
}

/// The arguments from `--args` then `--arg`, in order.
fn read_args(a: &EvalArgs) -> Result<Vec<Literal>, String> {
    let max = a.limits.max_elements;
    let mut out = Vec::new();
    if let Some(file) = &a.args {
        let doc = json::parse_json(&read_text(file)?).map_err(|e| format!("{file}: {e}"))?;
        let list = match &doc {
            Value::Array(l) => l.clone(),
            Value::Object(o) if o.contains_key("args") => o["args"].as_array().cloned().ok_or("`args` must be a list")?,
            _ => return Err(format!("{file}: expected a list of typed literals")),
        };
        for (i, v) in list.iter().enumerate() {
            out.push(json::read_typed_literal(v, &Path::new(format!("args[{i}]")), max).map_err(|e| format!("{file}: {e}"))?);
        }
    }
    for spec in &a.arg {
        let (shape_text, value_text) = spec.split_once('=').ok_or_else(|| format!("--arg `{spec}`: expected SHAPE=VALUE"))?;
        let shape = Shape::parse(shape_text.trim()).map_err(|e| format!("--arg `{spec}`: {e}"))?;
        let value = json::parse_json(value_text).map_err(|e| format!("--arg `{spec}`: {e}"))?;
        out.push(json::read_literal(&value, &shape, &Path::new("--arg"), max).map_err(|e| format!("--arg `{spec}`: {e}"))?);
    }
    Ok(out)
}

/// The infeed queue from `--infeed`.
fn read_infeed(a: &EvalArgs) -> Result<Vec<Literal>, String> {
    let Some(file) = &a.infeed else { return Ok(vec![]) };
    let doc = json::parse_json(&read_text(file)?).map_err(|e| format!("{file}: {e}"))?;
    let list = doc.as_array().ok_or_else(|| format!("{file}: expected a list of typed literals"))?;
    let max = a.limits.max_elements;
    list.iter()
        .enumerate()
        .map(|(i, v)| json::read_typed_literal(v, &Path::new(format!("infeed[{i}]")), max).map_err(|e| format!("{file}: {e}")))
        .collect()
}

/// Writes what Outfeed wrote to `--outfeed`.
fn write_outfeed(a: &EvalArgs, values: &[Literal]) -> Result<(), String> {
    let Some(file) = &a.outfeed else { return Ok(()) };
    let list: Vec<Value> = values.iter().map(|v| json::write_typed_literal(v, WriteOptions { exact_bits: a.exact_bits })).collect();
    std::fs::write(file, format!("{}\n", Value::Array(list))).map_err(|e| format!("cannot write {file}: {e}"))
}

pub fn run(a: EvalArgs) -> i32 {
    let Some(engine) = engine::by_name(&a.engine) else {
        return bad(format!("unknown engine `{}` (expected reference or fast)", a.engine));
    };
    let options = a.limits.run_options();
    let text = match read_text(&a.module) {
        Ok(t) => t,
        Err(e) => return bad(e),
    };
    let module = match json::parse_module(&text, options.read_options()) {
        Ok(m) => m,
        Err(e) => return bad(format!("read error: {e}")),
    };
    let verified = match verify::verify(module, &options.verify_options()) {
        Ok(v) => v,
        Err(e) => return bad(format!("verify error: {e}")),
    };
    let args = match read_args(&a) {
        Ok(v) => v,
        Err(e) => return bad(e),
    };
    if let Err(e) = xlaref_reference::eval::check_arguments(&verified, &args) {
        return bad(e.to_string());
    }
    let infeed = match read_infeed(&a) {
        Ok(v) => v,
        Err(e) => return bad(e),
    };
    let mut env = Env::new(options.limits.clone());
    env.seed = a.seed;
    env.infeed = infeed.into();
    let result = engine.run(&verified, args, &mut env);
    if let Err(e) = write_outfeed(&a, &env.outfeed) {
        return bad(e);
    }
    match result {
        Ok(result) => {
            let out = json::write_typed_literal(&result, WriteOptions { exact_bits: a.exact_bits });
            println!("{out}");
            0
        }
        Err(e) => {
            eprintln!("run error: {e}");
            EXIT_FAILURE
        }
    }
}
