//! Elements as little-endian bytes (XLA CPU's layout), for BitcastConvertType
//! and `.npy` files.

use super::bits::Bits;
use crate::literal::{Data, Stored};
use crate::types::ElementType;

/// The row-major little-endian bytes of every element (pred as one byte).
pub fn to_le_bytes(data: &Data) -> Vec<u8> {
    crate::with_data!(data, v => elements_to_le_bytes(v))
}

fn elements_to_le_bytes<T: Bits>(v: &[T]) -> Vec<u8> {
    let width = T::TYPE.byte_width();
    let mut out = Vec::with_capacity(v.len() * width);
    for &x in v {
        out.extend_from_slice(&x.bits().to_le_bytes()[..width]);
    }
    out
}

/// Elements of type `t` read from little-endian bytes; `None` if the byte
/// count is not a multiple of the width.
pub fn from_le_bytes(bytes: &[u8], t: ElementType) -> Option<Data> {
    if !bytes.len().is_multiple_of(t.byte_width()) {
        return None;
    }
    Some(crate::with_type!(t, T => elements_from_le_bytes::<T>(bytes)))
}

fn elements_from_le_bytes<T: Bits + Stored>(bytes: &[u8]) -> Data {
    let width = T::TYPE.byte_width();
    let elements = bytes.chunks_exact(width).map(|chunk| {
        let mut le = [0u8; 16];
        le[..width].copy_from_slice(chunk);
        T::with_bits(u128::from_le_bytes(le))
    });
    T::wrap(elements.collect())
}
