//! Modules (docs/format.md §3): computations, parameters, instructions, names.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::attrs::Attrs;
use super::ops::{parse_op, shape_is_attribute};
use super::path::Path;
use crate::error::ReadError;
use crate::ir::{Computation, ComputationId, Instruction, Module, Op};
use crate::types::Shape;

type R<T> = Result<T, ReadError>;

/// Limits applied while reading.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// Largest element count of any literal or declared shape.
    pub max_elements: i64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { max_elements: 1 << 28 }
    }
}

fn object<'a>(v: &'a Value, path: &Path, what: &str) -> R<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| path.error(format!("{what} must be a JSON object")))
}

fn check_keys(obj: &Map<String, Value>, path: &Path, allowed: &[&str]) -> R<()> {
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(path.key(key).error(format!("unknown key `{key}` (expected one of {})", allowed.join(", "))));
        }
    }
    Ok(())
}

fn string<'a>(obj: &'a Map<String, Value>, key: &str, path: &Path) -> R<&'a str> {
    match obj.get(key) {
        None => Err(path.key(key).error(format!("`{key}` is missing"))),
        Some(v) => v.as_str().ok_or_else(|| path.key(key).error(format!("`{key}` must be a string, found {v}"))),
    }
}

/// Reads a module object.
pub fn read_module(value: &Value, path: &Path, options: ReadOptions) -> R<Module> {
    let obj = object(value, path, "a module")?;
    check_keys(obj, path, &["format", "entry", "computations", "name"])?;
    if let Some(format) = obj.get("format") {
        if format.as_str() != Some("xla-json/1") {
            return Err(path.key("format").error(format!("unsupported format {format}: expected \"xla-json/1\"")));
        }
    }
    let entry_name = match obj.get("entry") {
        None => "main",
        Some(_) => string(obj, "entry", path)?,
    };
    let comps_path = path.key("computations");
    let comps = object(obj.get("computations").unwrap_or(&Value::Null), &comps_path, "`computations`")?;
    let ids: HashMap<String, ComputationId> = comps.keys().enumerate().map(|(i, k)| (k.clone(), i)).collect();
    let mut computations = Vec::with_capacity(comps.len());
    for (name, c) in comps {
        computations.push(read_computation(name, c, &comps_path.key(name), &ids, options)?);
    }
    let entry = *ids.get(entry_name).ok_or_else(|| path.key("entry").error(format!("entry computation `{entry_name}` is not defined")))?;
    Ok(Module { computations, entry })
}

fn read_computation(name: &str, value: &Value, path: &Path, ids: &HashMap<String, ComputationId>, options: ReadOptions) -> R<Computation> {
    let obj = object(value, path, "a computation")?;
    check_keys(obj, path, &["params", "instructions", "root"])?;
    let mut instructions: Vec<Instruction> = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();

    let params_path = path.key("params");
    let params = match obj.get("params") {
        None => &[][..],
        Some(v) => v.as_array().map(Vec::as_slice).ok_or_else(|| params_path.error("`params` must be a list"))?,
    };
    for (i, p) in params.iter().enumerate() {
        let pp = params_path.index(i);
        let po = object(p, &pp, "a parameter")?;
        check_keys(po, &pp, &["name", "shape"])?;
        let pname = string(po, "name", &pp)?;
        let shape_text = string(po, "shape", &pp)?;
        let shape = Shape::parse(shape_text).map_err(|e| pp.key("shape").error(e))?;
        define(&mut names, pname, i, &pp)?;
        instructions.push(Instruction {
            name: pname.to_string(),
            op: Op::Parameter { number: i },
            operands: vec![],
            declared_shape: Some(shape),
            location: None,
        });
    }

    let instrs_path = path.key("instructions");
    let instrs = match obj.get("instructions") {
        None => &[][..],
        Some(v) => v.as_array().map(Vec::as_slice).ok_or_else(|| instrs_path.error("`instructions` must be a list"))?,
    };
    // Every name, so an operand defined later can be told from an undefined one.
    let all_names: Vec<&str> = instrs.iter().filter_map(|i| i.get("name").and_then(Value::as_str)).collect();
    for (k, iv) in instrs.iter().enumerate() {
        let ip = instrs_path.index(k);
        let instruction = read_instruction(iv, &ip, &names, &all_names, ids, options).map_err(|e| at_location(e, iv))?;
        define(&mut names, &instruction.name, instructions.len(), &ip)?;
        instructions.push(instruction);
    }

    let root = match obj.get("root") {
        Some(r) => {
            let rname = r.as_str().ok_or_else(|| path.key("root").error("`root` must be an instruction name"))?;
            *names.get(rname).ok_or_else(|| path.key("root").error(format!("root `{rname}` is not defined")))?
        }
        None if instrs.is_empty() => return Err(path.error("computation has no instructions and no `root`")),
        None => instructions.len() - 1,
    };
    Ok(Computation { name: name.to_string(), instructions, param_count: params.len(), root })
}

/// An error inside an imported instruction names its place in the source
/// text (its `location`) rather than the JSON path of the converted module,
/// which the user never wrote.
fn at_location(e: ReadError, instruction: &Value) -> ReadError {
    match instruction.get("location").and_then(Value::as_str) {
        Some(location) => {
            let name = instruction.get("name").and_then(Value::as_str).unwrap_or("?");
            ReadError::new(location, format!("instruction `{name}`: {}", e.message))
        }
        None => e,
    }
}

fn define(names: &mut HashMap<String, usize>, name: &str, id: usize, path: &Path) -> R<()> {
    if names.insert(name.to_string(), id).is_some() {
        return Err(path.key("name").error(format!("duplicate name `{name}` in the computation")));
    }
    Ok(())
}

fn read_instruction(
    value: &Value,
    path: &Path,
    names: &HashMap<String, usize>,
    all_names: &[&str],
    ids: &HashMap<String, ComputationId>,
    options: ReadOptions,
) -> R<Instruction> {
    let obj = object(value, path, "an instruction")?;
    let name = string(obj, "name", path)?;
    let op_name = string(obj, "op", path)?;
    let operands_path = path.key("operands");
    let operand_names = match obj.get("operands") {
        None => &[][..],
        Some(v) => v.as_array().map(Vec::as_slice).ok_or_else(|| operands_path.error("`operands` must be a list of names"))?,
    };
    let mut operands = Vec::with_capacity(operand_names.len());
    for (i, o) in operand_names.iter().enumerate() {
        let op_path = operands_path.index(i);
        let oname = o.as_str().ok_or_else(|| op_path.error("an operand is an instruction or parameter name"))?;
        match names.get(oname) {
            Some(&id) => operands.push(id),
            None if all_names.contains(&oname) => {
                return Err(
                    op_path.error(format!("operand `{oname}` is used before it is defined (instructions must be in dependency order)"))
                )
            }
            None => return Err(op_path.error(format!("undefined operand `{oname}`"))),
        }
    }
    let shape_attr = shape_is_attribute(op_name);
    let declared_shape = match obj.get("shape") {
        Some(v) if !shape_attr => {
            let text = v.as_str().ok_or_else(|| path.key("shape").error("`shape` must be a shape string"))?;
            Some(Shape::parse(text).map_err(|e| path.key("shape").error(e))?)
        }
        _ => None,
    };
    let location = match obj.get("location") {
        None => None,
        Some(v) => Some(v.as_str().ok_or_else(|| path.key("location").error("`location` must be a string"))?.to_string()),
    };
    let preused: &[&str] =
        if shape_attr { &["name", "op", "operands", "location"] } else { &["name", "op", "operands", "shape", "location"] };
    let attrs = Attrs::new(obj, path.clone(), op_name, ids, preused);
    let op = parse_op(op_name, &attrs, options.max_elements)?;
    attrs.finish()?;
    Ok(Instruction { name: name.to_string(), op, operands, declared_shape, location })
}
