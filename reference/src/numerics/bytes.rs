//! Elements as little-endian bytes (XLA CPU's layout), for BitcastConvertType
//! and `.npy` files.

use super::bits::Bits;
use crate::literal::{Data, Stored};
use crate::types::ElementType;

/// The row-major little-endian bytes of every element (pred as one byte).
pub fn to_le_bytes(data: &Data) -> Vec<u8> {
    let mut out = Vec::new();
    append_le_bytes(data, &mut out);
    out
}

/// [`to_le_bytes`] appended to `out` (a `.npy` file after its header).
pub fn append_le_bytes(data: &Data, out: &mut Vec<u8>) {
    crate::with_data!(data, v => append_elements_le(v, out))
}

/// One loop per element width, so that the width is a constant and the
/// loop is a plain copy on a little-endian host (`.npy` files of hundreds
/// of megabytes go through here).
pub fn append_elements_le<T: Bits>(v: &[T], out: &mut Vec<u8>) {
    let width = T::TYPE.byte_width();
    let start = out.len();
    out.resize(start + v.len() * width, 0);
    let bytes = &mut out[start..];
    macro_rules! copy {
        ($u:ty) => {
            for (o, &x) in bytes.chunks_exact_mut(width).zip(v) {
                o.copy_from_slice(&(x.bits() as $u).to_le_bytes());
            }
        };
    }
    match width {
        1 => copy!(u8),
        2 => copy!(u16),
        4 => copy!(u32),
        8 => copy!(u64),
        _ => copy!(u128),
    }
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
    let mut out = Vec::with_capacity(bytes.len() / T::TYPE.byte_width());
    extend_from_le_bytes(&mut out, bytes);
    T::wrap(out)
}

/// Appends the elements of little-endian `bytes` (whole elements; a
/// partial last one is left out) to `out`, one loop per width.
pub fn extend_from_le_bytes<T: Bits>(out: &mut Vec<T>, bytes: &[u8]) {
    let width = T::TYPE.byte_width();
    macro_rules! read {
        ($u:ty) => {
            out.extend(bytes.chunks_exact(width).map(|c| T::with_bits(<$u>::from_le_bytes(c.try_into().unwrap_or_default()) as u128)))
        };
    }
    match width {
        1 => read!(u8),
        2 => read!(u16),
        4 => read!(u32),
        8 => read!(u64),
        _ => read!(u128),
    }
}
