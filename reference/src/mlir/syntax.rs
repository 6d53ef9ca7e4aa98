//! The structure of MLIR text, read into a small syntax tree before any
//! meaning is given to it: functions, regions, blocks and operations in
//! the generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`). The pretty
//! forms are read by `pretty.rs` into the same [`Op`] shape, with the
//! attribute names of the generic form.

use super::attr::{self, Attr};
use super::cursor::{Cursor, MAX_REGION_DEPTH};
use super::pretty;
use super::types::{self, Ty};
use super::MlirError;

pub type R<T> = Result<T, MlirError>;

/// A use of a value: `%x`, or result `index` of a multi-result op (`%x#1`).
#[derive(Clone, Debug)]
pub struct Use<'a> {
    pub name: &'a str,
    pub index: Option<usize>,
    pub at: usize,
}

/// A region of one block: its arguments and operations.
#[derive(Clone, Debug, Default)]
pub struct Region<'a> {
    pub args: Vec<(&'a str, Ty)>,
    pub ops: Vec<Op<'a>>,
    pub at: usize,
}

/// An operation in the shape of the generic form.
#[derive(Clone, Debug, Default)]
pub struct Op<'a> {
    /// Result names with their counts (`%0:2` is `("%0", 2)`).
    pub results: Vec<(&'a str, usize)>,
    pub name: &'a str,
    pub operands: Vec<Use<'a>>,
    pub attrs: Vec<(&'a str, Attr<'a>)>,
    pub regions: Vec<Region<'a>>,
    /// The operands' types where the text gives them.
    pub operand_types: Vec<Ty>,
    pub result_types: Vec<Ty>,
    pub at: usize,
}

impl<'a> Op<'a> {
    pub fn attr(&self, key: &str) -> Option<&Attr<'a>> {
        self.attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// A `func.func`.
#[derive(Clone, Debug)]
pub struct Func<'a> {
    pub name: &'a str,
    pub public: bool,
    pub args: Vec<(&'a str, Ty)>,
    pub results: Vec<Ty>,
    pub body: Option<Region<'a>>,
    pub at: usize,
}

/// Every function of one module (one `// -----` chunk), in order.
pub fn module<'a>(c: &mut Cursor<'a>) -> R<Vec<Func<'a>>> {
    let mut funcs = Vec::new();
    let mut in_module = false;
    loop {
        c.skip_ws();
        if c.at_end() {
            if in_module {
                return Err(c.error("the `module` is not closed by `}`"));
            }
            return Ok(funcs);
        }
        let at = c.pos;
        if c.peek() == Some(b'#') {
            // `#loc1 = loc(...)` and other aliases: read past.
            c.sigil_name(b'#')?;
            c.expect("=")?;
            attr::value(c, true, 0)?;
            continue;
        }
        if in_module && c.eat("}") {
            in_module = false;
            skip_loc(c)?;
            continue;
        }
        if c.eat_keyword("module") {
            if in_module || !funcs.is_empty() {
                return Err(c.error_at(at, "a nested or second `module`"));
            }
            if c.peek() == Some(b'@') {
                c.sigil_name(b'@')?;
            }
            if c.eat_keyword("attributes") {
                attr::dict(c, 0)?;
            }
            c.expect("{")?;
            in_module = true;
            continue;
        }
        if c.eat_keyword("func.func") || c.eat_keyword("func") {
            funcs.push(func(c, at)?);
            continue;
        }
        return Err(c.error(format!("expected `module` or `func.func`, found {}", c.found())));
    }
}

/// `func.func [public|private] @name(%a: t {attrs}, ...) [-> results]
/// [attributes {...}] { body }`.
fn func<'a>(c: &mut Cursor<'a>, at: usize) -> R<Func<'a>> {
    let mut public = true;
    if c.eat_keyword("private") || c.eat_keyword("nested") {
        public = false;
    } else {
        c.eat_keyword("public");
    }
    let name = c.sigil_name(b'@')?;
    let args = arg_list(c, true)?;
    let results = if c.eat("->") {
        if c.peek() == Some(b'(') {
            types::paren_types(c)?
        } else {
            // A single result has no attributes (they need the parentheses):
            // a `{` here opens the body.
            vec![types::ty(c, 0)?]
        }
    } else {
        vec![]
    };
    if c.eat_keyword("attributes") {
        attr::dict(c, 0)?;
    }
    let body = if c.peek() == Some(b'{') { Some(region(c, 0)?) } else { None };
    skip_loc(c)?;
    Ok(Func { name, public, args, results, body, at })
}

/// `(%a: t [{attrs}] [loc(...)], ...)`.
pub fn arg_list<'a>(c: &mut Cursor<'a>, allow_attrs: bool) -> R<Vec<(&'a str, Ty)>> {
    c.expect("(")?;
    let mut args = Vec::new();
    if c.eat(")") {
        return Ok(args);
    }
    loop {
        let name = c.sigil_name(b'%')?;
        c.expect(":")?;
        let t = types::ty(c, 0)?;
        if allow_attrs && c.peek() == Some(b'{') {
            c.balanced()?;
        }
        skip_loc(c)?;
        args.push((name, t));
        if c.eat(")") {
            return Ok(args);
        }
        c.expect(",")?;
    }
}

/// A trailing `loc(...)`, if any.
pub fn skip_loc(c: &mut Cursor) -> R<()> {
    if c.eat_keyword("loc") {
        c.balanced()?;
    }
    Ok(())
}

/// `{ [^bb0(%a: t, ...):] op* }`.
pub fn region<'a>(c: &mut Cursor<'a>, depth: usize) -> R<Region<'a>> {
    if depth > MAX_REGION_DEPTH {
        return Err(c.error(format!("regions nested more than {MAX_REGION_DEPTH} deep")));
    }
    c.skip_ws();
    let at = c.pos;
    c.expect("{")?;
    let mut r = Region { at, ..Region::default() };
    if c.peek() == Some(b'^') {
        c.sigil_name(b'^')?;
        if c.peek() == Some(b'(') {
            r.args = arg_list(c, false)?;
        }
        c.expect(":")?;
    }
    loop {
        if c.eat("}") {
            return Ok(r);
        }
        if c.peek() == Some(b'^') {
            return Err(c.error("a region of more than one block (branches between blocks have no meaning in the document)"));
        }
        if c.at_end() {
            return Err(c.error_at(at, "a region that is not closed by `}`"));
        }
        r.ops.push(op(c, depth)?);
    }
}

/// One operation, in either form.
pub fn op<'a>(c: &mut Cursor<'a>, depth: usize) -> R<Op<'a>> {
    c.skip_ws();
    let at = c.pos;
    let mut results = Vec::new();
    if c.peek() == Some(b'%') {
        loop {
            let name = c.sigil_name(b'%')?;
            let count = if c.eat(":") { c.integer()? } else { 1 };
            if !(1..=1 << 16).contains(&count) {
                return Err(c.error_at(at, format!("{count} results")));
            }
            results.push((name, count as usize));
            if !c.eat(",") {
                break;
            }
        }
        c.expect("=")?;
    }
    c.skip_ws();
    let name_at = c.pos;
    let mut op = if c.peek() == Some(b'"') {
        let name = c.string()?;
        let name: &'a str = c.text().get(name_at + 1..name_at + 1 + name.len()).unwrap_or("");
        generic(c, name, depth)?
    } else {
        let name = c.ident()?;
        pretty::op(c, name, depth)?
    };
    skip_loc(c)?;
    op.results = results;
    op.at = name_at;
    Ok(op)
}

/// `(%a, %b) [<{props}>] [({region}, ...)] [{attrs}] : (types) -> types`.
fn generic<'a>(c: &mut Cursor<'a>, name: &'a str, depth: usize) -> R<Op<'a>> {
    let mut op = Op { name, ..Op::default() };
    c.expect("(")?;
    if !c.eat(")") {
        loop {
            op.operands.push(use_(c)?);
            if c.eat(")") {
                break;
            }
            c.expect(",")?;
        }
    }
    if c.peek() == Some(b'[') {
        return Err(c.error("an operation with successor blocks (branches between blocks have no meaning in the document)"));
    }
    if c.eat("<") {
        op.attrs.extend(attr::dict(c, 0)?);
        c.expect(">")?;
    }
    if c.peek_str("({") {
        c.expect("(")?;
        loop {
            op.regions.push(region(c, depth + 1)?);
            if c.eat(")") {
                break;
            }
            c.expect(",")?;
        }
    }
    if c.peek() == Some(b'{') {
        op.attrs.extend(attr::dict(c, 0)?);
    }
    c.expect(":")?;
    let (inputs, results) = types::function_type(c)?;
    op.operand_types = inputs;
    op.result_types = results;
    Ok(op)
}

/// `%x` or `%x#1`.
pub fn use_<'a>(c: &mut Cursor<'a>) -> R<Use<'a>> {
    c.skip_ws();
    let at = c.pos;
    let name = c.sigil_name(b'%')?;
    let index = if c.rest().starts_with('#') {
        c.pos += 1;
        let i = c.integer()?;
        Some(usize::try_from(i).map_err(|_| c.error_at(at, "a negative result number"))?)
    } else {
        None
    };
    Ok(Use { name, index, at })
}
