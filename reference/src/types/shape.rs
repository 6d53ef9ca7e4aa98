//! Shapes in XLA's text syntax (docs/format.md §1): arrays, tuples, tokens,
//! bounded dynamic dimensions.

use std::fmt;

use super::element::ElementType;
use super::index::Index;

/// The shape of an array: element type and dimension sizes, row-major.
///
/// A dimension marked dynamic (`f32[<=10]`) has `dims[i]` as its bound; the
/// runtime size travels with the value ([`crate::literal::ArrayLiteral`]).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ArrayShape {
    pub element_type: ElementType,
    pub dims: Vec<i64>,
    pub dynamic: Vec<bool>,
}

/// A value's shape: an array, a tuple of shapes, or a token.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Shape {
    Array(ArrayShape),
    Tuple(Vec<Shape>),
    Token,
}

impl ArrayShape {
    pub fn new(element_type: ElementType, dims: Vec<i64>) -> ArrayShape {
        let dynamic = vec![false; dims.len()];
        ArrayShape { element_type, dims, dynamic }
    }

    pub fn scalar(element_type: ElementType) -> ArrayShape {
        ArrayShape::new(element_type, vec![])
    }

    /// The number of dimensions (the document's "rank").
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements, or `None` if the product overflows `i64`.
    pub fn checked_element_count(&self) -> Option<i64> {
        self.dims.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d.max(0)))
    }

    /// Number of elements. Only call on verified shapes (counts are bounded).
    pub fn element_count(&self) -> usize {
        self.dims.iter().map(|&d| d as usize).product()
    }

    pub fn is_scalar(&self) -> bool {
        self.dims.is_empty()
    }

    pub fn is_dynamic(&self) -> bool {
        self.dynamic.iter().any(|&d| d)
    }

    /// The same dimensions with another element type.
    pub fn with_element_type(&self, element_type: ElementType) -> ArrayShape {
        ArrayShape { element_type, dims: self.dims.clone(), dynamic: self.dynamic.clone() }
    }

    /// Row-major strides: the linear distance between neighbours in each dimension.
    pub fn strides(&self) -> Vec<usize> {
        let mut strides = vec![1usize; self.dims.len()];
        for i in (0..self.dims.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * self.dims[i + 1] as usize;
        }
        strides
    }

    /// Every multi-index of this shape in row-major order.
    pub fn indices(&self) -> super::index::Indices {
        super::index::Indices::new(&self.dims)
    }

    /// The row-major linear position of `index`.
    pub fn linear(&self, index: &[i64]) -> usize {
        let mut pos = 0usize;
        for (i, &d) in self.dims.iter().enumerate() {
            pos = pos * d as usize + index[i] as usize;
        }
        pos
    }

    /// Whether `index` lies inside the shape.
    pub fn contains(&self, index: &[i64]) -> bool {
        index.len() == self.dims.len() && index.iter().zip(&self.dims).all(|(&i, &d)| i >= 0 && i < d)
    }

    /// The multi-index of a row-major linear position.
    pub fn unlinear(&self, mut pos: usize) -> Index {
        let mut index = Index::from_elem(0, self.dims.len());
        for i in (0..self.dims.len()).rev() {
            let d = self.dims[i] as usize;
            index[i] = (pos % d) as i64;
            pos /= d;
        }
        index
    }

    /// Same element type and dimensions (dynamic markers ignored).
    pub fn same_dims(&self, other: &ArrayShape) -> bool {
        self.dims == other.dims
    }
}

impl Shape {
    pub fn array(element_type: ElementType, dims: Vec<i64>) -> Shape {
        Shape::Array(ArrayShape::new(element_type, dims))
    }

    /// The bytes a value of this shape holds (every tuple leaf counted,
    /// saturating): what the byte budget charges for it.
    pub fn byte_size(&self) -> u64 {
        match self {
            Shape::Array(a) => a.dims.iter().fold(a.element_type.byte_width() as u64, |n, &d| n.saturating_mul(d.max(0) as u64)),
            Shape::Tuple(items) => items.iter().fold(0u64, |n, s| n.saturating_add(s.byte_size())),
            Shape::Token => 0,
        }
    }

    pub fn scalar(element_type: ElementType) -> Shape {
        Shape::Array(ArrayShape::scalar(element_type))
    }

    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_tuple(&self) -> Option<&[Shape]> {
        match self {
            Shape::Tuple(t) => Some(t),
            _ => None,
        }
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Shape::Array(_))
    }
    pub fn is_tuple(&self) -> bool {
        matches!(self, Shape::Tuple(_))
    }
    pub fn is_token(&self) -> bool {
        matches!(self, Shape::Token)
    }

    /// The size of the shape's written form: elements, counting each
    /// zero-sized dimension as 1 (a `f32[1000000000,0]` value is a billion
    /// empty lists), tuples summed, saturating.
    pub fn written_size(&self) -> i64 {
        match self {
            Shape::Array(a) => a.dims.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d.max(1))).unwrap_or(i64::MAX),
            Shape::Tuple(t) => t.iter().fold(0i64, |acc, s| acc.saturating_add(s.written_size())),
            Shape::Token => 0,
        }
    }

    /// Total number of array elements in the shape (tuples summed), saturating.
    pub fn total_elements(&self) -> i64 {
        match self {
            Shape::Array(a) => a.checked_element_count().unwrap_or(i64::MAX),
            Shape::Tuple(t) => t.iter().fold(0i64, |acc, s| acc.saturating_add(s.total_elements())),
            Shape::Token => 0,
        }
    }

    /// Equality up to dynamic-dimension markers: what "same type" means for
    /// operands of most ops (a bounded dynamic `f32[<=4]` is an `f32[4]`).
    pub fn compatible(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => a.element_type == b.element_type && a.dims == b.dims,
            (Shape::Tuple(a), Shape::Tuple(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y)),
            (Shape::Token, Shape::Token) => true,
            _ => false,
        }
    }

    /// Parses XLA's shape syntax: `f32[2,3]`, `(f32[], s32[])`, `token[]`,
    /// `f32[<=10]`. A trailing layout (`{1,0}`) is accepted and ignored.
    pub fn parse(text: &str) -> Result<Shape, String> {
        let mut p = ShapeParser { s: text.as_bytes(), pos: 0, depth: 0 };
        let shape = p.shape()?;
        p.skip_ws();
        if p.pos != p.s.len() {
            return Err(format!("unexpected text after shape at offset {} in `{text}`", p.pos));
        }
        Ok(shape)
    }
}

struct ShapeParser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

/// Tuples nest at most this deep, so no shape text can exhaust the stack and
/// every value of every shape fits in a JSON document (serde_json reads at
/// most 128 levels; a tuple level takes two, an array dimension one).
pub const MAX_TUPLE_DEPTH: usize = 24;

/// The most dimensions an array may have (far beyond real programs; keeps
/// every recursion over dimensions shallow).
pub const MAX_RANK: usize = 64;

impl ShapeParser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{}` at offset {}", c as char, self.pos))
        }
    }

    fn shape(&mut self) -> Result<Shape, String> {
        self.skip_ws();
        if self.eat(b'(') {
            self.depth += 1;
            if self.depth > MAX_TUPLE_DEPTH {
                return Err(format!("tuples nested deeper than {MAX_TUPLE_DEPTH}"));
            }
            let mut elems = Vec::new();
            if self.eat(b')') {
                self.depth -= 1;
                return Ok(Shape::Tuple(elems));
            }
            loop {
                elems.push(self.shape()?);
                if self.eat(b')') {
                    self.depth -= 1;
                    return Ok(Shape::Tuple(elems));
                }
                self.expect(b',')?;
            }
        }
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphanumeric() {
            self.pos += 1;
        }
        let name = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        if name.is_empty() {
            return Err(format!("expected an element type at offset {start}"));
        }
        self.expect(b'[')?;
        let mut dims = Vec::new();
        let mut dynamic = Vec::new();
        if !self.eat(b']') {
            loop {
                self.skip_ws();
                let is_dynamic = if self.s[self.pos..].starts_with(b"<=") {
                    self.pos += 2;
                    true
                } else {
                    false
                };
                dims.push(self.integer()?);
                dynamic.push(is_dynamic);
                if dims.len() > MAX_RANK {
                    return Err(format!("more than {MAX_RANK} dimensions"));
                }
                if self.eat(b']') {
                    break;
                }
                if !self.eat(b',') {
                    let text = String::from_utf8_lossy(self.s);
                    return Err(format!("expected `,` or `]` at offset {} in `{text}`", self.pos));
                }
            }
        }
        self.skip_layout()?;
        if name == "token" {
            if !dims.is_empty() {
                return Err("a token shape has no dimensions: write `token[]`".into());
            }
            return Ok(Shape::Token);
        }
        let element_type = ElementType::from_name(name).ok_or_else(|| format!("unknown element type `{name}`"))?;
        Ok(Shape::Array(ArrayShape { element_type, dims, dynamic }))
    }

    fn integer(&mut self) -> Result<i64, String> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        let value: i64 = text.parse().map_err(|_| format!("expected a dimension size at offset {start}"))?;
        if value < 0 {
            return Err(format!("dimension size {value} is negative"));
        }
        Ok(value)
    }

    /// `{1,0}` or `{1,0:T(8,128)}`: layouts say how bytes sit in memory, which
    /// no op's meaning depends on.
    fn skip_layout(&mut self) -> Result<(), String> {
        self.skip_ws();
        if self.peek() != Some(b'{') {
            return Ok(());
        }
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err("unterminated layout `{`".into())
    }
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element_type)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if self.dynamic.get(i).copied().unwrap_or(false) {
                f.write_str("<=")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => a.fmt(f),
            Shape::Token => f.write_str("token[]"),
            Shape::Tuple(elems) => {
                f.write_str("(")?;
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    e.fmt(f)?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_every_form() {
        for text in ["f32[2,3]", "s32[]", "pred[0,4]", "(f32[2], s32[])", "((f32[]), pred[])", "()", "f32[<=10]", "token[]", "f8e4m3fn[3]"]
        {
            let shape = Shape::parse(text).unwrap();
            assert_eq!(shape.to_string(), text);
        }
        assert_eq!(Shape::parse("f32[2,3]{1,0}").unwrap(), Shape::array(ElementType::F32, vec![2, 3]));
    }

    #[test]
    fn rejects_bad_shapes() {
        for text in ["f33[2]", "f32[-1]", "f32[2", "(f32[]", "f32[2]x", "token[2]", "", "f32[99999999999999999999]"] {
            assert!(Shape::parse(text).is_err(), "{text}");
        }
    }
}
