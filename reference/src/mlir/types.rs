//! MLIR types of StableHLO programs: `tensor<2x3xf32>`, `tensor<i1>`,
//! `tensor<?x4xf32, #stablehlo.bounds<8, ?>>`, `!stablehlo.token`,
//! `tuple<...>`, and the element types of docs/format.md.

use super::cursor::{Cursor, MAX_DEPTH};
use super::{quote, MlirError};
use crate::types::ElementType;

type R<T> = Result<T, MlirError>;

/// A value's type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// `dims[i]` is the size, or the bound of a bounded dynamic dimension
    /// (`bounded[i]`).
    Tensor {
        elem: ElementType,
        dims: Vec<i64>,
        bounded: Vec<bool>,
    },
    Token,
    Tuple(Vec<Ty>),
}

impl Ty {
    pub fn scalar(elem: ElementType) -> Ty {
        Ty::Tensor { elem, dims: vec![], bounded: vec![] }
    }

    /// The type as an xla-json/1 shape: `f32[2,<=3]`, `(f32[], token[])`.
    pub fn shape(&self) -> String {
        match self {
            Ty::Tensor { elem, dims, bounded } => {
                let dims: Vec<String> = dims.iter().zip(bounded).map(|(d, &b)| if b { format!("<={d}") } else { d.to_string() }).collect();
                format!("{}[{}]", elem.name(), dims.join(","))
            }
            Ty::Token => "token[]".into(),
            Ty::Tuple(items) => format!("({})", items.iter().map(Ty::shape).collect::<Vec<_>>().join(", ")),
        }
    }

    pub fn elem(&self) -> Option<ElementType> {
        match self {
            Ty::Tensor { elem, .. } => Some(*elem),
            _ => None,
        }
    }

    pub fn dims(&self) -> &[i64] {
        match self {
            Ty::Tensor { dims, .. } => dims,
            _ => &[],
        }
    }

    /// Elements of a static tensor (saturating; callers bound it).
    pub fn element_count(&self) -> u64 {
        self.dims().iter().fold(1u64, |n, &d| n.saturating_mul(d.max(0) as u64))
    }
}

/// An element type's MLIR spelling → the document's element type.
pub fn element_type(c: &Cursor, at: usize, name: &str) -> R<ElementType> {
    use ElementType::*;
    Ok(match name {
        "i1" => Pred,
        "i8" | "si8" => S8,
        "i16" | "si16" => S16,
        "i32" | "si32" => S32,
        "i64" | "si64" => S64,
        "ui8" => U8,
        "ui16" => U16,
        "ui32" => U32,
        "ui64" => U64,
        "f16" => F16,
        "bf16" => BF16,
        "f32" => F32,
        "f64" => F64,
        "f8E4M3FN" => F8E4M3FN,
        "f8E5M2" => F8E5M2,
        // Only layouts use `index` (`dense<[1, 0]> : tensor<2xindex>`),
        // and XLA's indices are 64-bit.
        "index" => S64,
        _ => return Err(c.error_at(at, format!("element type {} is not an element type of the document (docs/format.md §1)", quote(name)))),
    })
}

/// A type.
pub fn ty(c: &mut Cursor, depth: usize) -> R<Ty> {
    if depth > MAX_DEPTH {
        return Err(c.error("types nested too deeply"));
    }
    c.skip_ws();
    let at = c.pos;
    if c.eat("!stablehlo.token") {
        return Ok(Ty::Token);
    }
    if c.peek() == Some(b'!') {
        let name = c.sigil_name(b'!')?;
        return Err(c.error_at(
            at,
            format!("type {} has no meaning in the document (quantized and other dialect types are not read)", quote(name)),
        ));
    }
    let word = c.ident()?;
    match word {
        "tensor" => tensor(c, at),
        "tuple" => {
            c.expect("<")?;
            let mut items = Vec::new();
            if !c.eat(">") {
                loop {
                    items.push(ty(c, depth + 1)?);
                    if c.eat(">") {
                        break;
                    }
                    c.expect(",")?;
                }
            }
            Ok(Ty::Tuple(items))
        }
        "complex" => Ok(Ty::scalar(complex(c, at)?)),
        _ => Ok(Ty::scalar(element_type(c, at, word)?)),
    }
}

fn complex(c: &mut Cursor, at: usize) -> R<ElementType> {
    c.expect("<")?;
    let inner_at = c.pos;
    let inner = c.ident()?;
    c.expect(">")?;
    match inner {
        "f32" => Ok(ElementType::C64),
        "f64" => Ok(ElementType::C128),
        _ => Err(c.error_at(inner_at.max(at), format!("complex<{}> is not an element type of the document", quote(inner)))),
    }
}

/// `tensor<` dims `x` element [, encoding] `>`.
fn tensor(c: &mut Cursor, at: usize) -> R<Ty> {
    c.expect("<")?;
    let mut dims = Vec::new();
    let mut dynamic = Vec::new();
    loop {
        c.skip_ws();
        if c.eat("?") {
            dims.push(0);
            dynamic.push(true);
        } else if c.peek().is_some_and(|b| b.is_ascii_digit()) {
            let digits_at = c.pos;
            let rest = c.rest();
            let len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let d: i64 = rest[..len].parse().map_err(|_| c.error_at(digits_at, "a dimension size too large"))?;
            c.pos += len;
            dims.push(d);
            dynamic.push(false);
        } else if c.peek() == Some(b'*') {
            return Err(c.error_at(at, "an unranked tensor has no meaning in the document"));
        } else {
            break;
        }
        if !c.eat("x") {
            return Err(c.error(format!("expected `x` after a dimension, found {}", c.found())));
        }
        if dims.len() > 64 {
            return Err(c.error_at(at, "a tensor of more than 64 dimensions"));
        }
    }
    let elem_at = c.pos;
    let elem = if c.peek_str("complex") {
        c.ident()?;
        complex(c, elem_at)?
    } else if c.peek() == Some(b'!') {
        let name = c.sigil_name(b'!')?;
        return Err(
            c.error_at(elem_at, format!("element type {} has no meaning in the document (quantized types are not read)", quote(name)))
        );
    } else {
        let name = c.ident()?;
        element_type(c, elem_at, name)?
    };
    let mut bounded = vec![false; dims.len()];
    if c.eat(",") {
        let enc_at = c.pos;
        let bounds = encoding_bounds(c)?;
        if bounds.len() != dims.len() {
            return Err(c.error_at(enc_at, "the bounds do not match the tensor's rank"));
        }
        for (i, b) in bounds.into_iter().enumerate() {
            match (dynamic[i], b) {
                (true, Some(b)) => {
                    dims[i] = b;
                    bounded[i] = true;
                }
                (false, None) => {}
                (false, Some(_)) => return Err(c.error_at(enc_at, format!("dimension {i} is static but has a bound"))),
                (true, None) => {}
            }
        }
    }
    c.expect(">")?;
    if let Some(i) = dynamic.iter().zip(&bounded).position(|(&d, &b)| d && !b) {
        return Err(c.error_at(
            at,
            format!("dimension {i} is unbounded (`?` without a bound): dynamic shapes without a bound have no meaning in the document"),
        ));
    }
    Ok(Ty::Tensor { elem, dims, bounded })
}

/// `#stablehlo.bounds<?, 5>` or `#stablehlo.type_extensions<bounds = [?, 5]>`.
fn encoding_bounds(c: &mut Cursor) -> R<Vec<Option<i64>>> {
    let at = c.pos;
    let list_close = if c.eat("#stablehlo.bounds<") {
        ">"
    } else if c.eat("#stablehlo.type_extensions<") {
        c.expect_keyword("bounds")?;
        c.expect("=")?;
        c.expect("[")?;
        "]"
    } else {
        return Err(c.error_at(at, format!("tensor encoding {} has no meaning in the document", c.found())));
    };
    let mut bounds = Vec::new();
    if !c.eat(list_close) {
        loop {
            if c.eat("?") {
                bounds.push(None);
            } else {
                bounds.push(Some(c.integer()?));
            }
            if c.eat(list_close) {
                break;
            }
            c.expect(",")?;
        }
    }
    if list_close == "]" {
        c.expect(">")?;
    }
    Ok(bounds)
}

/// `(t, ...) -> t` or `(t, ...) -> (t, ...)`; the results are empty for
/// `-> ()`.
pub fn function_type(c: &mut Cursor) -> R<(Vec<Ty>, Vec<Ty>)> {
    let inputs = paren_types(c)?;
    c.expect("->")?;
    let results = if c.peek() == Some(b'(') { paren_types(c)? } else { vec![ty(c, 0)?] };
    Ok((inputs, results))
}

/// `(t, t, ...)`, possibly empty.
pub fn paren_types(c: &mut Cursor) -> R<Vec<Ty>> {
    c.expect("(")?;
    let mut out = Vec::new();
    if c.eat(")") {
        return Ok(out);
    }
    loop {
        out.push(ty(c, 0)?);
        // Result attributes of a function type (`{jax.result_info = ...}`).
        if c.peek() == Some(b'{') {
            c.balanced()?;
        }
        if c.eat(")") {
            return Ok(out);
        }
        c.expect(",")?;
    }
}
