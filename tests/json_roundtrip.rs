//! Literals survive JSON (docs/format.md §2): every element written with
//! `write_typed_literal` reads back with `read_typed_literal` to the same
//! bits. With `exact_bits` every pattern survives, NaN payloads included;
//! by default every non-NaN value survives exactly (signed zeros,
//! subnormals, extremes) and a NaN stays a NaN of the same sign. Decimal
//! inputs are rounded once, directly into the element type.
//!
//! Only the public API is used; the text goes through `serde_json` and
//! `parse_json` in between, as a file would.

use num_complex::Complex;
use serde_json::Value;
use xlaref_reference::json::{parse_json, read_typed_literal, read_typed_literals, write_typed_literal, Layout, Path, WriteOptions};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::float::Float;

// ---------------------------------------------------------------------------
// Helpers

/// One part of an element (a complex element has two): its bit pattern,
/// whether it is a NaN, and the sign bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    bits: u64,
    nan: bool,
    negative: bool,
}

fn float_part<T: Float>(x: T) -> Part {
    let bits = x.to_bits();
    Part { bits, nan: x.is_nan(), negative: (bits >> (T::WIDTH - 1)) & 1 == 1 }
}

fn int_part(x: i128) -> Part {
    Part { bits: x as u64, nan: false, negative: x < 0 }
}

fn parts(data: &Data) -> Vec<Vec<Part>> {
    fn floats<T: Float>(v: &[T]) -> Vec<Vec<Part>> {
        v.iter().map(|&x| vec![float_part(x)]).collect()
    }
    fn complexes<T: Float>(v: &[Complex<T>]) -> Vec<Vec<Part>> {
        v.iter().map(|z| vec![float_part(z.re), float_part(z.im)]).collect()
    }
    fn ints<T: Copy + Into<i128>>(v: &[T]) -> Vec<Vec<Part>> {
        v.iter().map(|&x| vec![int_part(x.into())]).collect()
    }
    match data {
        Data::Pred(v) => v.iter().map(|&b| vec![int_part(b as i128)]).collect(),
        Data::S8(v) => ints(v),
        Data::S16(v) => ints(v),
        Data::S32(v) => ints(v),
        Data::S64(v) => ints(v),
        Data::U8(v) => ints(v),
        Data::U16(v) => ints(v),
        Data::U32(v) => ints(v),
        Data::U64(v) => ints(v),
        Data::F16(v) => floats(v),
        Data::BF16(v) => floats(v),
        Data::F32(v) => floats(v),
        Data::F64(v) => floats(v),
        Data::F8E4M3FN(v) => floats(v),
        Data::F8E5M2(v) => floats(v),
        Data::C64(v) => complexes(v),
        Data::C128(v) => complexes(v),
    }
}

/// Writes `literal` as a typed literal, prints it to text, parses the text
/// and reads it back.
fn roundtrip(literal: &Literal, exact_bits: bool) -> Literal {
    let written = write_typed_literal(literal, WriteOptions { exact_bits });
    let text = serde_json::to_string(&written).expect("a written literal serializes");
    let doc = parse_json(&text).unwrap_or_else(|e| panic!("written literal is not valid JSON: {e}"));
    let tree = read_typed_literal(&doc, &Path::root(), i64::MAX)
        .unwrap_or_else(|e| panic!("written literal does not read back: {e}\n{}", &text[..text.len().min(400)]));
    // The reader that scans text without a value tree reads the same bits.
    let scanned = read_typed_literals(&format!("[{text}]"), Layout::List, "args", i64::MAX).expect("the scan reads it");
    assert!(scanned.len() == 1 && scanned[0].len() == 1 && scanned[0][0].bits_equal(&tree), "scan and tree differ on {text:.400}");
    tree
}

/// Asserts that every element of `a` reads back as itself: bit for bit in
/// exact_bits mode; otherwise bit for bit unless it is a NaN, which must
/// read back as a NaN of the same sign.
fn assert_roundtrip_array(a: &ArrayLiteral, what: &str) {
    let literal = Literal::Array(a.clone());
    for exact_bits in [true, false] {
        let back = roundtrip(&literal, exact_bits);
        let back = back.as_array().unwrap_or_else(|| panic!("{what}: read back a non-array"));
        assert_eq!(back.shape, a.shape, "{what}: shape changed (exact_bits {exact_bits})");
        let (before, after) = (parts(&a.data), parts(&back.data));
        assert_eq!(before.len(), after.len(), "{what}: element count changed");
        for (i, (x, y)) in before.iter().zip(&after).enumerate() {
            for (p, q) in x.iter().zip(y) {
                let ok = if exact_bits || !p.nan { p == q } else { q.nan && q.negative == p.negative };
                assert!(ok, "{what}, element {i} (exact_bits {exact_bits}): wrote {p:?}, read back {q:?}");
            }
        }
        if exact_bits {
            assert!(literal.bits_equal(&Literal::Array(back.clone())), "{what}: bits_equal disagrees");
        }
    }
}

fn vector<T>(v: Vec<T>) -> ArrayLiteral
where
    T: xlaref_reference::literal::Stored,
{
    ArrayLiteral::from_vec(vec![v.len() as i64], v)
}

/// splitmix64: a reproducible stream of 64-bit patterns.
struct Patterns(u64);

impl Iterator for Patterns {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Some(z ^ (z >> 31))
    }
}

/// Bit patterns of a float format of `width` bits with `mantissa` fraction
/// bits: for every exponent field, the fractions 0, 1, 2, the middle, all
/// ones and all ones but one, with both signs; then `random` random ones.
fn float_patterns(width: u32, mantissa: u32, random: usize, seed: u64) -> Vec<u64> {
    let exponent_fields = 1u64 << (width - 1 - mantissa);
    let fraction_max = (1u64 << mantissa) - 1;
    let sign = 1u64 << (width - 1);
    let mut out = Vec::new();
    for e in 0..exponent_fields {
        for f in [0, 1, 2, 1 << (mantissa - 1), (1 << (mantissa - 1)) | 1, fraction_max - 1, fraction_max] {
            let bits = (e << mantissa) | f;
            out.push(bits);
            out.push(bits | sign);
        }
    }
    let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    out.extend(Patterns(seed).take(random).map(|b| b & mask));
    out
}

// ---------------------------------------------------------------------------
// Bit patterns of every element type

#[test]
fn f16_all_65536_patterns() {
    let v: Vec<_> = (0..=u16::MAX as u64).map(Float::from_bits).collect();
    assert_roundtrip_array(&vector(v.clone()), "f16");
    // Also as a [256, 256] array: nesting must not matter.
    let a = ArrayLiteral::new(vec![256, 256], Data::F16(v));
    assert_roundtrip_array(&a, "f16[256,256]");
}

#[test]
fn bf16_all_65536_patterns() {
    let v: Vec<_> = (0..=u16::MAX as u64).map(Float::from_bits).collect();
    assert_roundtrip_array(&ArrayLiteral::new(vec![65536], Data::BF16(v)), "bf16");
}

#[test]
fn f8e4m3fn_all_256_patterns() {
    let v: Vec<_> = (0..=255u64).map(Float::from_bits).collect();
    assert_roundtrip_array(&ArrayLiteral::new(vec![256], Data::F8E4M3FN(v)), "f8e4m3fn");
}

#[test]
fn f8e5m2_all_256_patterns() {
    let v: Vec<_> = (0..=255u64).map(Float::from_bits).collect();
    assert_roundtrip_array(&ArrayLiteral::new(vec![16, 16], Data::F8E5M2(v)), "f8e5m2");
}

/// Named f32 corners: signed zeros, the smallest and largest subnormals,
/// the smallest normal, the largest finite, infinities, quiet and
/// signalling NaNs with payloads, and values whose shortest decimal is long.
const F32_CORNERS: [u32; 24] = [
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x8000_0001,
    0x007f_ffff,
    0x807f_ffff,
    0x0080_0000,
    0x8080_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0xffc0_0000,
    0x7fc0_0001,
    0xffc0_0001,
    0x7f80_0001,
    0xff80_0001,
    0x7fff_ffff,
    0xffff_ffff,
    0x3dcc_cccd,
    0x3eaa_aaab,
    0x4b80_0001,
    0x3f80_0001,
];

const F64_CORNERS: [u64; 22] = [
    0,
    1 << 63,
    1,
    (1 << 63) | 1,
    0x000f_ffff_ffff_ffff,
    0x0010_0000_0000_0000,
    0x7fef_ffff_ffff_ffff,
    0xffef_ffff_ffff_ffff,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0xfff8_0000_0000_0000,
    0x7ff8_0000_0000_0001,
    0xfff8_dead_beef_0001,
    0x7ff0_0000_0000_0001,
    0x7fff_ffff_ffff_ffff,
    0x3fb9_9999_9999_999a,
    0x3fd5_5555_5555_5555,
    0x4340_0000_0000_0001,
    0x3ff0_0000_0000_0001,
    0x4330_0000_0000_0001,
    0x0000_0000_0000_0010,
];

#[test]
fn f32_patterns() {
    let mut bits: Vec<u64> = F32_CORNERS.iter().map(|&b| b as u64).collect();
    bits.extend(float_patterns(32, 23, 100_000, 32));
    let v: Vec<f32> = bits.iter().map(|&b| Float::from_bits(b)).collect();
    assert_roundtrip_array(&vector(v), "f32");
}

#[test]
fn f64_patterns() {
    let mut bits: Vec<u64> = F64_CORNERS.to_vec();
    bits.extend(float_patterns(64, 52, 100_000, 64));
    let v: Vec<f64> = bits.iter().map(|&b| Float::from_bits(b)).collect();
    assert_roundtrip_array(&vector(v), "f64");
}

#[test]
fn complex_patterns() {
    // Every pairing of corners in c64, plus random pairs; likewise c128.
    let mut c64 = Vec::new();
    for &re in &F32_CORNERS {
        for &im in &F32_CORNERS {
            c64.push(Complex::new(f32::from_bits(re), f32::from_bits(im)));
        }
    }
    let random: Vec<u64> = Patterns(640).take(20_000).collect();
    c64.extend(random.chunks(2).map(|p| Complex::new(f32::from_bits(p[0] as u32), f32::from_bits((p[1] >> 32) as u32))));
    assert_roundtrip_array(&vector(c64), "c64");

    let mut c128 = Vec::new();
    for &re in &F64_CORNERS {
        for &im in &F64_CORNERS {
            c128.push(Complex::new(f64::from_bits(re), f64::from_bits(im)));
        }
    }
    let random: Vec<u64> = Patterns(1280).take(20_000).collect();
    c128.extend(random.chunks(2).map(|p| Complex::new(f64::from_bits(p[0]), f64::from_bits(p[1]))));
    assert_roundtrip_array(&vector(c128), "c128");
}

#[test]
fn integer_extremes_and_samples() {
    let random: Vec<u64> = Patterns(8).take(10_000).collect();
    // Around ±2^53, where writers switch from JSON numbers to strings.
    let near53: Vec<i64> = [-(1i64 << 53), 1 << 53].iter().flat_map(|&c| (-3..=3).map(move |d| c + d)).collect();

    let mut s64: Vec<i64> = vec![0, 1, -1, i64::MIN, i64::MIN + 1, i64::MAX, i64::MAX - 1];
    s64.extend(&near53);
    s64.extend(random.iter().map(|&b| b as i64));
    assert_roundtrip_array(&vector(s64), "s64");

    let mut u64s: Vec<u64> = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1, 1 << 53, (1 << 53) + 1];
    u64s.extend(&random);
    assert_roundtrip_array(&vector(u64s), "u64");

    let mut s32: Vec<i32> = vec![0, 1, -1, i32::MIN, i32::MAX];
    s32.extend(random.iter().map(|&b| b as i32));
    assert_roundtrip_array(&vector(s32), "s32");
    let mut u32s: Vec<u32> = vec![0, 1, u32::MAX];
    u32s.extend(random.iter().map(|&b| b as u32));
    assert_roundtrip_array(&vector(u32s), "u32");

    assert_roundtrip_array(&vector((i16::MIN..=i16::MAX).collect::<Vec<i16>>()), "s16 (all)");
    assert_roundtrip_array(&vector((0..=u16::MAX).collect::<Vec<u16>>()), "u16 (all)");
    assert_roundtrip_array(&vector((i8::MIN..=i8::MAX).collect::<Vec<i8>>()), "s8 (all)");
    assert_roundtrip_array(&vector((0..=u8::MAX).collect::<Vec<u8>>()), "u8 (all)");
    assert_roundtrip_array(&vector(vec![false, true, true, false]), "pred");
}

#[test]
fn shapes_scalars_empty_arrays_and_tuples() {
    let scalar = ArrayLiteral::scalar(f32::from_bits(0xffc0_0001));
    assert_roundtrip_array(&scalar, "f32[] NaN payload");
    assert_roundtrip_array(&ArrayLiteral::scalar(-0.0f64), "f64[] -0");
    assert_roundtrip_array(&ArrayLiteral::new(vec![0, 3], Data::F32(vec![])), "f32[0,3]");
    assert_roundtrip_array(&ArrayLiteral::new(vec![2, 0], Data::C128(vec![])), "c128[2,0]");
    let s64 = ArrayLiteral::new(vec![2, 1, 2], Data::S64(vec![i64::MIN, -1, 0, i64::MAX]));
    assert_roundtrip_array(&s64, "s64[2,1,2]");

    let tuple = Literal::Tuple(vec![
        Literal::Array(ArrayLiteral::scalar(u64::MAX)),
        Literal::Tuple(vec![Literal::Array(vector(vec![f32::from_bits(0x7f80_0001), -0.0])), Literal::Token]),
        Literal::Tuple(vec![]),
    ]);
    let back = roundtrip(&tuple, true);
    assert!(tuple.bits_equal(&back), "tuple did not round-trip in exact_bits mode: {back:?}");
    assert_eq!(back.shape(), tuple.shape());
    let back = roundtrip(&tuple, false);
    assert_eq!(back.shape(), tuple.shape());
}

// ---------------------------------------------------------------------------
// What the writer prints (docs/format.md §2)

fn written_elements(literal: &ArrayLiteral, exact_bits: bool) -> Vec<Value> {
    match write_typed_literal(&Literal::Array(literal.clone()), WriteOptions { exact_bits }).get("value") {
        Some(Value::Array(v)) => v.clone(),
        other => panic!("expected a list, got {other:?}"),
    }
}

#[test]
fn writer_spellings() {
    let v = vector(vec![0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, f32::from_bits(0x7fc0_0001), 0.1, 1.0]);
    let plain = written_elements(&v, false);
    let strings: Vec<Option<&str>> = plain.iter().map(Value::as_str).collect();
    assert_eq!(&strings[1..7], &[Some("-0"), Some("inf"), Some("-inf"), Some("nan"), Some("-nan"), Some("nan")]);
    assert!(plain[0].is_number() && plain[0].as_f64() == Some(0.0));
    assert_eq!(plain[7].to_string(), "0.1", "shortest decimal of f32 0.1");
    assert!(plain[8].is_number() && plain[8].as_f64() == Some(1.0));

    let exact = written_elements(&v, true);
    let strings: Vec<Option<&str>> = exact.iter().map(Value::as_str).collect();
    assert_eq!(&strings[2..7], &[Some("0x7f800000"), Some("0xff800000"), Some("0x7fc00000"), Some("0xffc00000"), Some("0x7fc00001")]);
    assert_eq!(strings[1], Some("-0"));
    assert_eq!(exact[7].to_string(), "0.1", "finite values stay decimals in exact_bits mode");

    // Hex patterns have exactly the type's width in digits.
    let f16: Vec<_> = [0x7e01u64, 0xfc00].into_iter().map(Float::from_bits).collect();
    let w = written_elements(&ArrayLiteral::new(vec![2], Data::F16(f16)), true);
    assert_eq!(w, vec![Value::from("0x7e01"), Value::from("0xfc00")]);
    let f8: Vec<_> = [0x7fu64, 0xff].into_iter().map(Float::from_bits).collect();
    let w = written_elements(&ArrayLiteral::new(vec![2], Data::F8E4M3FN(f8)), true);
    assert_eq!(w, vec![Value::from("0x7f"), Value::from("0xff")]);
    let f64s = written_elements(&vector(vec![f64::from_bits(0x7ff8_0000_0000_0001)]), true);
    assert_eq!(f64s, vec![Value::from("0x7ff8000000000001")]);

    // Shortest decimals in the narrow types.
    let bf16: Vec<_> = [0x3dcdu64].into_iter().map(Float::from_bits).collect();
    assert_eq!(written_elements(&ArrayLiteral::new(vec![1], Data::BF16(bf16)), false)[0].to_string(), "0.1");
    let f16: Vec<_> = [0x2e66u64].into_iter().map(Float::from_bits).collect();
    assert_eq!(written_elements(&ArrayLiteral::new(vec![1], Data::F16(f16)), false)[0].to_string(), "0.1");
    let f8: Vec<_> = [0x01u64].into_iter().map(Float::from_bits).collect();
    let w = written_elements(&ArrayLiteral::new(vec![1], Data::F8E4M3FN(f8)), false)[0].clone();
    assert_eq!(w.as_f64(), Some(0.002), "shortest decimal of f8e4m3fn 2^-9 is 0.002, got {w}");

    // 64-bit integers beyond ±2^53 are strings; up to 2^53, numbers.
    let ints = written_elements(&vector(vec![i64::MIN, -(1 << 53), (1 << 53) + 1, 7]), false);
    assert_eq!(ints[0], Value::from("-9223372036854775808"));
    assert!(ints[1].is_number());
    assert_eq!(ints[2], Value::from("9007199254740993"));
    assert!(ints[3].is_number());
    let u = written_elements(&vector(vec![u64::MAX]), false);
    assert_eq!(u[0], Value::from("18446744073709551615"));
}

// ---------------------------------------------------------------------------
// Decimal inputs are rounded once, directly into the element type

/// Reads one element of type `ty` from JSON text (a number or a string)
/// and returns its parts.
fn read_one(ty: &str, element_json: &str) -> Vec<Part> {
    let doc = parse_json(&format!("{{\"shape\": \"{ty}[1]\", \"value\": [{element_json}]}}")).expect("valid JSON");
    let literal = read_typed_literal(&doc, &Path::root(), 16).unwrap_or_else(|e| panic!("{ty} {element_json}: {e}"));
    let a = literal.as_array().expect("an array");
    parts(&a.data).remove(0)
}

fn read_bits(ty: &str, element_json: &str) -> u64 {
    read_one(ty, element_json)[0].bits
}

#[test]
fn decimals_round_once_into_the_type() {
    let cases: &[(&str, &str, u64, &str)] = &[
        // f16: 1 + 2^-11 is the tie between 1 and 1 + 2^-10.
        ("f16", "1.00048828125000000000000000001", 0x3c01, "a hair above the tie rounds up"),
        ("f16", "1.00048828125", 0x3c00, "exact tie: to even"),
        ("f16", "1.00048828124999999999999999999", 0x3c00, "a hair below"),
        ("f16", "1.00146484375", 0x3c02, "tie between 0x3c01 and 0x3c02: to even"),
        ("f16", "-1.00048828125000000000000000001", 0xbc01, "negative, above the tie"),
        ("f16", "65504", 0x7bff, "largest finite"),
        ("f16", "65519.99999999999999999999", 0x7bff, "just below the overflow threshold"),
        ("f16", "65520", 0x7c00, "the overflow threshold rounds to inf (ties to even)"),
        ("f16", "-65520", 0xfc00, "negative overflow"),
        ("f16", "1e400", 0x7c00, "beyond f64"),
        ("f16", "5.9604644775390625e-8", 0x0001, "smallest subnormal 2^-24"),
        ("f16", "2.98023223876953125e-8", 0x0000, "2^-25: tie between 0 and 2^-24, to even"),
        ("f16", "2.98023223876953125000000001e-8", 0x0001, "a hair above 2^-25"),
        ("f16", "-2.98023223876953125e-8", 0x8000, "negative tie to -0"),
        ("f16", "1e-30", 0x0000, "underflow to 0"),
        ("f16", "-0.0", 0x8000, "-0.0 keeps its sign"),
        ("f16", "0.1", 0x2e66, "0.1"),
        ("f16", "1E0", 0x3c00, "exponent notation"),
        ("f16", "3", 0x4200, "an integer"),
        // bf16: 1 + 2^-8 is the tie between 1 and 1 + 2^-7.
        ("bf16", "1.00390625", 0x3f80, "exact tie: to even"),
        ("bf16", "1.00390625000000000000000001", 0x3f81, "a hair above the tie"),
        ("bf16", "1.01171875", 0x3f82, "tie between 0x3f81 and 0x3f82: to even"),
        ("bf16", "0.1", 0x3dcd, "0.1"),
        ("bf16", "3.3895313892515355e38", 0x7f7f, "largest finite"),
        ("bf16", "3.39617752923046005526922703901628039168e38", 0x7f80, "max + half ulp (2^128 - 2^119) overflows (ties to even)"),
        ("bf16", "3.396177529230460055e38", 0x7f7f, "just below the overflow threshold"),
        ("bf16", "-0", 0x8000, "-0"),
        // f32
        ("f32", "16777217", 0x4b80_0000, "2^24 + 1 ties to even"),
        ("f32", "16777217.0000000000000000001", 0x4b80_0001, "a hair above the tie"),
        ("f32", "1.00000005960464477539062500001", 0x3f80_0001, "a hair above 1 + 2^-24"),
        ("f32", "1.000000059604644775390625", 0x3f80_0000, "exactly 1 + 2^-24: to even"),
        ("f32", "340282356779733661637539395458142568448", 0x7f80_0000, "max + half ulp (2^128 - 2^103) overflows"),
        ("f32", "340282356779733661637539395458142568447", 0x7f7f_ffff, "just below the overflow threshold"),
        ("f32", "1.401298464324817e-45", 0x0000_0001, "smallest subnormal"),
        ("f32", "7.006492321624085e-46", 0x0000_0000, "2^-150: tie to 0"),
        ("f32", "7.0064923216240854e-46", 0x0000_0001, "a hair above 2^-150"),
        ("f32", "0.1", 0x3dcc_cccd, "0.1"),
        // f64
        ("f64", "9007199254740993", 0x4340_0000_0000_0000, "2^53 + 1 ties to even"),
        ("f64", "9007199254740993.0000000001", 0x4340_0000_0000_0001, "a hair above the tie"),
        ("f64", "4.9406564584124654e-324", 0x0000_0000_0000_0001, "smallest subnormal"),
        ("f64", "2.4703282292062327e-324", 0x0000_0000_0000_0000, "2^-1075 (rounded) is below the tie: 0"),
        ("f64", "2.4703282292062328e-324", 0x0000_0000_0000_0001, "above 2^-1075: smallest subnormal"),
        ("f64", "1.7976931348623158e308", 0x7fef_ffff_ffff_ffff, "largest finite"),
        ("f64", "1.7976931348623159e308", 0x7ff0_0000_0000_0000, "beyond max + half ulp"),
        // f8e4m3fn: no infinity; 464 is the tie between 448 and 480 (NaN).
        ("f8e4m3fn", "448", 0x7e, "largest finite"),
        ("f8e4m3fn", "464", 0x7e, "tie: to even (448)"),
        ("f8e4m3fn", "464.00000000000000000001", 0x7f, "above the tie: NaN"),
        ("f8e4m3fn", "-465", 0xff, "overflow is NaN (negative)"),
        ("f8e4m3fn", "1e10", 0x7f, "far overflow is NaN"),
        ("f8e4m3fn", "0.001953125", 0x01, "smallest subnormal 2^-9"),
        ("f8e4m3fn", "0.0009765625", 0x00, "2^-10: tie to 0"),
        ("f8e4m3fn", "0.00097656250000000000001", 0x01, "a hair above 2^-10"),
        ("f8e4m3fn", "1.0625", 0x38, "1 + 2^-4: tie to even (1)"),
        ("f8e4m3fn", "1.0625000000000000000001", 0x39, "a hair above: 1.125"),
        ("f8e4m3fn", "-0", 0x80, "-0"),
        // f8e5m2: IEEE-like; 61440 is the tie between 57344 and inf.
        ("f8e5m2", "57344", 0x7b, "largest finite"),
        ("f8e5m2", "61440", 0x7c, "tie at the overflow threshold: inf"),
        ("f8e5m2", "61439.999999999999999999", 0x7b, "just below: 57344"),
        ("f8e5m2", "1.125", 0x3c, "1 + 2^-3: tie to even (1)"),
        ("f8e5m2", "1.12500000000000000000001", 0x3d, "a hair above: 1.25"),
        ("f8e5m2", "1.52587890625e-5", 0x01, "smallest subnormal 2^-16"),
        ("f8e5m2", "7.62939453125e-6", 0x00, "2^-17: tie to 0"),
    ];
    let mut failures = Vec::new();
    for &(ty, text, bits, why) in cases {
        let got = read_bits(ty, text);
        if got != bits {
            failures.push(format!("{ty} {text} ({why}): expected {bits:#x}, got {got:#x}"));
        }
        // As a JSON number and with a leading minus sign, the negation.
        if !text.starts_with('-') {
            let negative = read_bits(ty, &format!("-{text}"));
            let width = match ty {
                "f16" | "bf16" => 16,
                "f32" => 32,
                "f64" => 64,
                _ => 8,
            };
            let expected = bits | 1u64 << (width - 1);
            if negative != expected {
                failures.push(format!("{ty} -{text} ({why}, negated): expected {expected:#x}, got {negative:#x}"));
            }
        }
    }
    assert!(failures.is_empty(), "decimals not rounded once:\n{}", failures.join("\n"));
}

#[test]
fn complex_parts_round_once() {
    let p = read_one("c64", "[16777217.0000000000000000001, 1.00000005960464477539062500001]");
    assert_eq!((p[0].bits, p[1].bits), (0x4b80_0001, 0x3f80_0001));
    let p = read_one("c128", "[9007199254740993, \"-0\"]");
    assert_eq!((p[0].bits, p[1].bits), (0x4340_0000_0000_0000, 0x8000_0000_0000_0000));
    let p = read_one("c64", "[\"0x7fc00001\", \"-inf\"]");
    assert_eq!((p[0].bits, p[1].bits), (0x7fc0_0001, 0xff80_0000));
}

#[test]
fn special_strings_and_hex_read_as_specified() {
    for (ty, width) in [("f16", 16), ("bf16", 16), ("f32", 32), ("f64", 64), ("f8e4m3fn", 8), ("f8e5m2", 8)] {
        let sign = 1u64 << (width - 1);
        assert_eq!(read_bits(ty, "\"-0\""), sign, "{ty} \"-0\"");
        let nan = read_one(ty, "\"nan\"")[0];
        assert!(nan.nan && !nan.negative, "{ty} \"nan\" is a positive NaN: {nan:?}");
        let nan = read_one(ty, "\"-nan\"")[0];
        assert!(nan.nan && nan.negative, "{ty} \"-nan\" is a negative NaN: {nan:?}");
        if ty != "f8e4m3fn" {
            let inf = read_one(ty, "\"inf\"")[0];
            assert!(!inf.nan && !inf.negative && read_bits(ty, "\"-inf\"") == inf.bits | sign, "{ty} infinities");
        }
    }
    // f8e4m3fn has no infinity: "inf" rounds like any overflow, to NaN.
    assert!(read_one("f8e4m3fn", "\"inf\"")[0].nan);
    assert_eq!(read_bits("f16", "\"0x7e01\""), 0x7e01);
    assert_eq!(read_bits("f16", "\"0X7E01\""), 0x7e01);
    assert_eq!(read_bits("bf16", "\"0xffc1\""), 0xffc1);
    assert_eq!(read_bits("f8e5m2", "\"0x7d\""), 0x7d);
    assert_eq!(read_bits("f64", "\"0xfff8000000000001\""), 0xfff8_0000_0000_0001);
    assert_eq!(read_bits("u64", "\"18446744073709551615\""), u64::MAX);
    assert_eq!(read_bits("s64", "\"-9223372036854775808\"") as i64, i64::MIN);
    assert_eq!(read_bits("s64", "-9223372036854775808") as i64, i64::MIN);
    assert_eq!(read_bits("u64", "18446744073709551615"), u64::MAX);
}

#[test]
fn bad_elements_are_read_errors() {
    let bad = [
        ("f16", "\"0x7e0\""),
        ("f32", "\"0x7fc0000\""),
        ("f8e4m3fn", "\"0x07f\""),
        ("f32", "\"1.5\""),
        ("f32", "true"),
        ("u8", "256"),
        ("s8", "-129"),
        ("u64", "\"18446744073709551616\""),
        ("s64", "\"9223372036854775808\""),
        ("u32", "-1"),
        ("s32", "1.5"),
        ("pred", "1"),
        ("c64", "[1]"),
        ("c64", "1"),
    ];
    for (ty, element) in bad {
        let doc = parse_json(&format!("{{\"shape\": \"{ty}[1]\", \"value\": [{element}]}}")).expect("valid JSON");
        assert!(read_typed_literal(&doc, &Path::root(), 16).is_err(), "{ty} {element} must be rejected");
    }
}
