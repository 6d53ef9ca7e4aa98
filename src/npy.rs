//! numpy `.npy` files as arguments and results (`xlaref eval --arg-npy`,
//! `--out-npy`).
//!
//! The format (numpy's `lib/format.py`, versions 1.0–3.0): the magic
//! `\x93NUMPY`, a version, a little-endian header length, a Python dict
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, then the
//! elements. Element types come from `descr`; numpy has no bf16 or f8, so
//! those (what `ml_dtypes` arrays become when saved by numpy) are raw void
//! `|V2` / `|V1`, and take their type from the parameter they are bound to.
//! Written by hand rather than through a crate: it is a hundred lines, and
//! the raw void types are exactly the corner such crates leave out.

use std::io::{Read, Write};

use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::numerics::bytes::{append_elements_le, extend_from_le_bytes, from_le_bytes};
use xlaref_reference::types::{ArrayShape, ElementType, Shape, TypeClass};

const MAGIC: &[u8] = b"\x93NUMPY";

/// numpy's kind letter for an element type, derived from the element-type
/// table (class and width); `None` for the types numpy lacks (bf16 and the
/// f8 formats: its float kind holds only IEEE binary16/32/64).
fn numpy_kind(t: ElementType) -> Option<char> {
    match t.class() {
        TypeClass::Pred => Some('b'),
        TypeClass::Signed => Some('i'),
        TypeClass::Unsigned => Some('u'),
        TypeClass::Complex => Some('c'),
        TypeClass::Float => matches!(t, ElementType::F16 | ElementType::F32 | ElementType::F64).then_some('f'),
    }
}

/// numpy's `descr` of an element type (little-endian; one-byte types have no
/// order), or the raw void of its width for types numpy lacks.
fn descr(t: ElementType) -> String {
    let width = t.byte_width();
    match numpy_kind(t) {
        Some(kind) if width == 1 => format!("|{kind}{width}"),
        Some(kind) => format!("<{kind}{width}"),
        None => format!("|V{width}"),
    }
}

/// The element type of a `descr`; a raw void takes the declared type when
/// its width matches. Also whether the bytes are big-endian.
fn element_type(d: &str, declared: Option<ElementType>) -> Result<(ElementType, bool), String> {
    let big = d.starts_with('>');
    let body = d.trim_start_matches(['<', '>', '|', '=']);
    let same_body = |t: &ElementType| descr(*t).trim_start_matches(['<', '|']) == body;
    if let Some(t) = ElementType::ALL.iter().copied().find(|t| numpy_kind(*t).is_some() && same_body(t)) {
        return Ok((t, big));
    }
    match declared {
        // Raw void bytes have no byte order.
        Some(t) if numpy_kind(t).is_none() && same_body(&t) => Ok((t, false)),
        _ if body.starts_with('V') => Err(format!("raw `{d}` elements need a bf16 (V2) or f8 (V1) parameter to say their type")),
        _ => Err(format!("numpy dtype `{d}` has no xlaref element type")),
    }
}

/// The value of `key` in the header dict, as text.
/// The header's dictionary, `{'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), }`, as (key, value text) pairs: a real parse, so a key
/// written inside another key's string is not taken for the key.
fn header_fields(header: &str) -> Result<Vec<(&str, &str)>, String> {
    let bad = || format!("malformed .npy header `{}`", header.trim().chars().take(120).collect::<String>());
    let mut rest = header.trim().strip_prefix('{').ok_or_else(bad)?.trim_start();
    let mut fields = Vec::new();
    loop {
        if let Some(end) = rest.strip_prefix('}') {
            return if end.trim().is_empty() { Ok(fields) } else { Err(bad()) };
        }
        let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"').ok_or_else(bad)?;
        let close = rest[1..].find(quote).ok_or_else(bad)? + 1;
        let key = &rest[1..close];
        rest = rest[close + 1..].trim_start().strip_prefix(':').ok_or_else(bad)?.trim_start();
        let end = match rest.chars().next() {
            Some(q @ ('\'' | '"')) => rest[1..].find(q).ok_or_else(bad)? + 2,
            Some('(') => rest.find(')').ok_or_else(bad)? + 1,
            Some(_) => rest.find([',', '}']).ok_or_else(bad)?,
            None => return Err(bad()),
        };
        fields.push((key, rest[..end].trim()));
        rest = rest[end..].trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
}

fn header_field<'a>(fields: &[(&str, &'a str)], key: &str) -> Result<&'a str, String> {
    fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).ok_or_else(|| format!("the .npy header has no '{key}'"))
}

/// An array from the bytes of a `.npy` file; `declared` is the parameter
/// it is bound to (its type decides a raw void `descr`, and must match).
pub fn read_npy(bytes: &[u8], declared: Option<&Shape>, max_elements: i64) -> Result<Literal, String> {
    read_npy_from(&mut &bytes[..], declared, max_elements)
}

/// Bytes read at a time: the data goes straight into the typed array, so a
/// file of hundreds of megabytes is never held twice (a multiple of every
/// element width).
const CHUNK: usize = 1 << 20;

/// [`read_npy`] from a reader (a file): the header, then the data a chunk
/// at a time into the typed array.
pub fn read_npy_from(r: &mut impl Read, declared: Option<&Shape>, max_elements: i64) -> Result<Literal, String> {
    let truncated = |_| "truncated .npy file".to_string();
    let mut preamble = [0u8; 8];
    r.read_exact(&mut preamble).map_err(|_| "not a .npy file (no \\x93NUMPY magic)".to_string())?;
    if &preamble[..6] != MAGIC {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let len = match preamble[6] {
        1 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b).map_err(truncated)?;
            u16::from_le_bytes(b) as usize
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            r.read_exact(&mut b).map_err(truncated)?;
            u32::from_le_bytes(b) as usize
        }
        v => return Err(format!(".npy version {v} is not supported")),
    };
    if len > CHUNK {
        return Err(format!("the .npy header is {len} bytes long (at most {CHUNK})"));
    }
    let mut header = vec![0u8; len];
    r.read_exact(&mut header).map_err(|_| "truncated .npy header".to_string())?;
    let header = std::str::from_utf8(&header).map_err(|_| "the .npy header is not text")?;
    let declared_array = declared.and_then(Shape::as_array);
    let fields = header_fields(header)?;
    let descr = header_field(&fields, "descr")?;
    let descr = descr
        .strip_prefix(['\'', '"'])
        .and_then(|d| d.strip_suffix(['\'', '"']))
        .ok_or_else(|| format!("the .npy 'descr' {descr} is not a string"))?;
    let (t, big) = element_type(descr, declared_array.map(|s| s.element_type))?;
    let fortran = match header_field(&fields, "fortran_order")? {
        "True" => true,
        "False" => false,
        other => return Err(format!("the .npy 'fortran_order' is `{other}`, not True or False")),
    };
    let dims: Vec<i64> = header_field(&fields, "shape")?
        .strip_prefix('(')
        .and_then(|d| d.strip_suffix(')'))
        .ok_or("the .npy 'shape' is not a tuple")?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().map(i64::from).map_err(|_| format!("bad .npy shape entry `{s}` (a dimension is a size in [0, 2^32))")))
        .collect::<Result<_, _>>()?;
    let count = dims
        .iter()
        .try_fold(1i64, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= max_elements)
        .ok_or("the .npy array is larger than --max-elements")?;
    if let Some(shape) = declared_array {
        if shape.dims != dims || shape.element_type != t {
            return Err(format!("the .npy array is {}, the parameter is {}", ArrayShape::new(t, dims), shape));
        }
    }
    let width = t.byte_width();
    let need = count as usize * width;
    let short = |got: usize| format!("the .npy file holds {got} bytes of data, its shape needs {need}");
    let data = if fortran || big {
        // A reordered or byte-swapped copy of the whole data first.
        let mut raw = Vec::new();
        r.take(need as u64).read_to_end(&mut raw).map_err(|e| format!("cannot read the .npy data: {e}"))?;
        if raw.len() < need {
            return Err(short(raw.len()));
        }
        let mut bytes = if fortran {
            let elements: Vec<&[u8]> = raw.chunks_exact(width).collect();
            row_major(&elements, &dims).concat()
        } else {
            raw
        };
        if big {
            to_little_endian(&mut bytes, t.component_type().byte_width());
        }
        from_le_bytes(&bytes, t).ok_or("the .npy data is not a whole number of elements")?
    } else {
        // The common case (C order, little-endian): chunk by chunk.
        let mut buffer = vec![0u8; need.min(CHUNK)];
        let mut got = 0;
        xlaref_reference::with_type!(t, T => {
            let mut out: Vec<T> = Vec::with_capacity(count as usize);
            while got < need {
                let n = (need - got).min(CHUNK);
                read_fully(r, &mut buffer[..n]).map_err(|read| short(got + read))?;
                extend_from_le_bytes(&mut out, &buffer[..n]);
                got += n;
            }
            <T as xlaref_reference::literal::Stored>::wrap(out)
        })
    };
    Ok(Literal::Array(ArrayLiteral::new(dims, data)))
}

/// Fills `buf` from `r`; on a short read, how many bytes came.
fn read_fully(r: &mut impl Read, buf: &mut [u8]) -> Result<(), usize> {
    let mut at = 0;
    while at < buf.len() {
        match r.read(&mut buf[at..]) {
            Ok(0) => return Err(at),
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(at),
        }
    }
    Ok(())
}

/// Column-major elements reordered row-major.
fn row_major<'a>(elements: &[&'a [u8]], dims: &[i64]) -> Vec<&'a [u8]> {
    let n = elements.len();
    let mut out = Vec::with_capacity(n);
    let mut index = vec![0i64; dims.len()];
    for _ in 0..n {
        let (mut pos, mut stride) = (0i64, 1i64);
        for (i, d) in index.iter().zip(dims) {
            pos += i * stride;
            stride *= d;
        }
        out.push(elements[pos as usize]);
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
    out
}

/// Big-endian elements in place as little-endian ones: each real component
/// (a complex element's two parts separately) reversed.
fn to_little_endian(bytes: &mut [u8], component_width: usize) {
    for component in bytes.chunks_exact_mut(component_width) {
        component.reverse();
    }
}

/// An array as a version 1.0 `.npy` file (C order, little-endian).
pub fn write_npy(a: &ArrayLiteral) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + a.element_count() * a.element_type().byte_width());
    // Writing to a Vec cannot fail.
    let _ = write_npy_to(&mut out, a);
    out
}

/// The `.npy` header of `a`: magic, version 1.0, length, dict, padding to
/// 64 bytes.
fn npy_header(a: &ArrayLiteral) -> Vec<u8> {
    let dims: Vec<String> = a.dims().iter().map(i64::to_string).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}", descr(a.element_type()));
    // The data starts on a 64-byte boundary; the header ends with '\n'.
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(unpadded + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out
}

/// [`write_npy`] into a writer (a file), the data converted a chunk at a
/// time: a large result is never held twice.
pub fn write_npy_to(w: &mut impl Write, a: &ArrayLiteral) -> std::io::Result<()> {
    w.write_all(&npy_header(a))?;
    let mut buffer = Vec::with_capacity(CHUNK);
    xlaref_reference::with_data!(&a.data, v => {
        let per_chunk = (CHUNK / a.element_type().byte_width().max(1)).max(1);
        for part in v.chunks(per_chunk) {
            buffer.clear();
            append_elements_le(part, &mut buffer);
            w.write_all(&buffer)?;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};
    use num_complex::Complex;
    use xlaref_reference::numerics::f8::{F8E4M3FN, F8E5M2};
    use xlaref_reference::types::ArrayShape;

    fn round_trip(a: ArrayLiteral) {
        let bytes = write_npy(&a);
        let declared = Shape::Array(ArrayShape { element_type: a.element_type(), dims: a.dims().to_vec(), dynamic: vec![] });
        let back = read_npy(&bytes, Some(&declared), 1 << 20).expect("reads back");
        assert_eq!(back, Literal::Array(a));
        assert_eq!((MAGIC.len() + 4 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize) % 64, 0);
    }

    #[test]
    fn every_element_type_round_trips() {
        round_trip(ArrayLiteral::from_vec(vec![2, 2], vec![true, false, false, true]));
        round_trip(ArrayLiteral::from_vec(vec![3], vec![-1i8, 0, 127]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![i16::MIN, 7]));
        round_trip(ArrayLiteral::from_vec(vec![1, 2], vec![-5i32, i32::MAX]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![i64::MIN, 3]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![0u8, 255]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![0u16, 65535]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![1u32, u32::MAX]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![1u64, u64::MAX]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![f16::from_f32(1.5), f16::NEG_INFINITY]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![bf16::from_f32(-2.0), bf16::from_f32(3.0e38)]));
        round_trip(ArrayLiteral::from_vec(vec![2, 3], vec![0.5f32, -0.0, f32::INFINITY, 1e-45, 3.0, -7.25]));
        round_trip(ArrayLiteral::from_vec(vec![], vec![std::f64::consts::PI]));
        round_trip(ArrayLiteral::from_vec(vec![1], vec![Complex::new(1.0f32, -2.0)]));
        round_trip(ArrayLiteral::from_vec(vec![1], vec![Complex::new(1.0f64, -2.0)]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![F8E4M3FN::from_bits(0x38), F8E4M3FN::from_bits(0x7f)]));
        round_trip(ArrayLiteral::from_vec(vec![2], vec![F8E5M2::from_bits(0x3c), F8E5M2::from_bits(0x7c)]));
        round_trip(ArrayLiteral::from_vec(vec![0, 3], Vec::<f32>::new()));
    }

    /// `np.save` of `np.arange(6, dtype='>i4').reshape(2, 3).T` written by hand:
    /// big-endian and Fortran order.
    #[test]
    fn fortran_order_and_big_endian_are_read_as_numpy_means_them() {
        // Column-major storage of [[0, 3], [1, 4], [2, 5]] is 0 1 2 3 4 5.
        let data: Vec<u8> = (0i32..6).flat_map(i32::to_be_bytes).collect();
        let bytes = with_header("{'descr': '>i4', 'fortran_order': True, 'shape': (3, 2), }", &data);
        let got = read_npy(&bytes, None, 100).expect("reads");
        assert_eq!(got, Literal::Array(ArrayLiteral::from_vec(vec![3, 2], vec![0i32, 3, 1, 4, 2, 5])));
    }

    /// A version-1 file with this header and these data bytes.
    fn with_header(header: &str, data: &[u8]) -> Vec<u8> {
        let mut header = header.to_string();
        header.push_str(&" ".repeat((64 - (10 + header.len() + 1) % 64) % 64));
        header.push('\n');
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[1, 0]);
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn headers_are_parsed_not_searched() {
        let four = [0u8; 16];
        let e =
            read_npy(&with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", &four), None, 100).expect_err("negative");
        assert!(e.contains("`-4`"), "{e}");
        let e = read_npy(&with_header("{'descr': '<f4', 'fortran_order': 'yes', 'shape': (4,), }", &four), None, 100).expect_err("yes");
        assert!(e.contains("not True or False"), "{e}");
        // 'descr' inside another key's string is not the descr.
        let tricky = with_header("{'x': \"'descr': '<i8'\", 'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", &four);
        let Ok(Literal::Array(a)) = read_npy(&tricky, None, 100) else { panic!("reads") };
        assert_eq!(a.element_type(), ElementType::F32);
        assert!(read_npy(&with_header("{'descr': '<f4', 'shape': (4,), }", &four), None, 100).is_err(), "no fortran_order");
    }

    #[test]
    fn malformed_files_are_errors() {
        let good = write_npy(&ArrayLiteral::from_vec(vec![4], vec![1.0f32, 2.0, 3.0, 4.0]));
        for cut in 0..good.len() {
            assert!(read_npy(&good[..cut], None, 100).is_err(), "truncated at {cut}");
        }
        assert!(read_npy(b"PK\x03\x04 not npy", None, 100).is_err());
        let raw = write_npy(&ArrayLiteral::from_vec(vec![1], vec![bf16::ONE]));
        let e = read_npy(&raw, None, 100).expect_err("V2 needs a declared type");
        assert!(e.contains("bf16"), "{e}");
        let f32s = Shape::Array(ArrayShape { element_type: ElementType::F32, dims: vec![3], dynamic: vec![] });
        assert!(read_npy(&good, Some(&f32s), 100).expect_err("shape mismatch").contains("f32[3]"));
        assert!(read_npy(&good, None, 3).is_err(), "over --max-elements");
    }
}
