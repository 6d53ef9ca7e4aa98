//! Elements as little-endian bytes (XLA CPU's layout), for BitcastConvertType.

use half::{bf16, f16};
use num_complex::Complex;

use super::f8::{F8E4M3FN, F8E5M2};
use crate::literal::Data;
use crate::types::ElementType;

/// The row-major little-endian bytes of every element (pred as one byte).
pub fn to_le_bytes(data: &Data) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * data.element_type().byte_width());
    match data {
        Data::Pred(v) => out.extend(v.iter().map(|&b| b as u8)),
        Data::S8(v) => out.extend(v.iter().map(|&x| x as u8)),
        Data::U8(v) => out.extend_from_slice(v),
        Data::S16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::U16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::S32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::U32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::S64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::U64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::F16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_bits().to_le_bytes())),
        Data::BF16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_bits().to_le_bytes())),
        Data::F32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::F64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Data::C64(v) => v.iter().for_each(|z| {
            out.extend_from_slice(&z.re.to_le_bytes());
            out.extend_from_slice(&z.im.to_le_bytes());
        }),
        Data::C128(v) => v.iter().for_each(|z| {
            out.extend_from_slice(&z.re.to_le_bytes());
            out.extend_from_slice(&z.im.to_le_bytes());
        }),
        Data::F8E4M3FN(v) => out.extend(v.iter().map(|x| x.0)),
        Data::F8E5M2(v) => out.extend(v.iter().map(|x| x.0)),
    }
    out
}

fn chunks<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
    bytes.chunks_exact(N).map(|c| f(c.try_into().unwrap_or([0; N]))).collect()
}

/// Elements of type `t` read from little-endian bytes; `None` if the byte
/// count is not a multiple of the width.
pub fn from_le_bytes(bytes: &[u8], t: ElementType) -> Option<Data> {
    if !bytes.len().is_multiple_of(t.byte_width()) {
        return None;
    }
    use ElementType as E;
    Some(match t {
        E::Pred => Data::Pred(bytes.iter().map(|&b| b != 0).collect()),
        E::S8 => Data::S8(bytes.iter().map(|&b| b as i8).collect()),
        E::U8 => Data::U8(bytes.to_vec()),
        E::S16 => Data::S16(chunks(bytes, i16::from_le_bytes)),
        E::U16 => Data::U16(chunks(bytes, u16::from_le_bytes)),
        E::S32 => Data::S32(chunks(bytes, i32::from_le_bytes)),
        E::U32 => Data::U32(chunks(bytes, u32::from_le_bytes)),
        E::S64 => Data::S64(chunks(bytes, i64::from_le_bytes)),
        E::U64 => Data::U64(chunks(bytes, u64::from_le_bytes)),
        E::F16 => Data::F16(chunks(bytes, |b| f16::from_bits(u16::from_le_bytes(b)))),
        E::BF16 => Data::BF16(chunks(bytes, |b| bf16::from_bits(u16::from_le_bytes(b)))),
        E::F32 => Data::F32(chunks(bytes, f32::from_le_bytes)),
        E::F64 => Data::F64(chunks(bytes, f64::from_le_bytes)),
        E::C64 => Data::C64(chunks(bytes, |b: [u8; 8]| {
            let (re, im) = b.split_at(4);
            Complex::new(f32::from_le_bytes(re.try_into().unwrap_or([0; 4])), f32::from_le_bytes(im.try_into().unwrap_or([0; 4])))
        })),
        E::C128 => Data::C128(chunks(bytes, |b: [u8; 16]| {
            let (re, im) = b.split_at(8);
            Complex::new(f64::from_le_bytes(re.try_into().unwrap_or([0; 8])), f64::from_le_bytes(im.try_into().unwrap_or([0; 8])))
        })),
        E::F8E4M3FN => Data::F8E4M3FN(bytes.iter().map(|&b| F8E4M3FN(b)).collect()),
        E::F8E5M2 => Data::F8E5M2(bytes.iter().map(|&b| F8E5M2(b)).collect()),
    })
}
