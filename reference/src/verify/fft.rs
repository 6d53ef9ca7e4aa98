//! Rules of Fft.

use super::rules::*;
use crate::ir::FftType;
use crate::types::{ElementType, Shape};

declare_rules! {
    AXES = "fft.c1": "fft_length names 1 to 3 axes: \"Multidimensional FFTs on up to 3 axes are supported\".";
    LENGTHS = "fft.c2": "Each transformed axis of the operand has the size fft_length gives, \"the time-domain lengths of the axes being transformed\" (but IRFFT's innermost, fft.c5).";
    COMPLEX_OPERAND = "fft.c3": "FFT and IFFT are \"complex-to-complex\" and IRFFT \"takes complex\": their operand is c64 or c128.";
    REAL_OPERAND = "fft.c4": "RFFT is \"real-to-complex\": its operand is f32 or f64 (XLA takes no other real type).";
    IRFFT_INNERMOST = "fft.c5": "IRFFT's innermost axis holds \"the 1 to fft_length[-1] // 2 + 1 entries\": its size is fft_length[-1] // 2 + 1.";
    OPERAND_RANK = "fft.c6": "(XLA) fft_length has at most as many entries as the operand has dimensions.";
    NON_NEGATIVE = "fft.c7": "(XLA) No entry of fft_length is negative.";
}

fn type_name(t: FftType) -> &'static str {
    match t {
        FftType::Fft => "FFT",
        FftType::Ifft => "IFFT",
        FftType::Rfft => "RFFT",
        FftType::Irfft => "IRFFT",
    }
}

/// The size of RFFT's innermost output axis for time-domain length `n`:
/// `n // 2 + 1`, or 0 when `n` is 0 (the document: "if `fft_length[-1]` is
/// a non-zero value").
fn half_length(n: i64) -> i64 {
    if n == 0 {
        0
    } else {
        n / 2 + 1
    }
}

/// Fft — document §Fft: `fft_length` names 1 to 3 innermost axes (the
/// time-domain lengths). FFT and IFFT take and give complex arrays of the
/// same shape; RFFT takes f32/f64 and gives c64/c128 with the innermost axis
/// reduced to `fft_length[-1] // 2 + 1`; IRFFT takes c64/c128 whose innermost
/// axis is `fft_length[-1] // 2 + 1` and gives f32/f64 with it expanded to
/// `fft_length[-1]`. Every other transformed axis equals its `fft_length`.
pub fn fft(t: FftType, fft_length: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    let name = type_name(t);
    let fft_rank = fft_length.len();
    if !(1..=3).contains(&fft_rank) {
        fail!(AXES, "fft_length has {fft_rank} entries; an FFT transforms 1 to 3 axes");
    }
    if fft_rank > a.rank() {
        fail!(OPERAND_RANK, "fft_length has {fft_rank} entries, more than the operand's {} dimensions", a.rank());
    }
    non_negative(&NON_NEGATIVE, fft_length, "fft_length")?;
    let et = a.element_type;
    let out_type = match t {
        FftType::Fft | FftType::Ifft | FftType::Irfft => {
            element_type_is(&COMPLEX_OPERAND, et, et.is_complex(), "operand", &format!("c64 or c128 for {name}"))?;
            if t == FftType::Irfft {
                et.component_type()
            } else {
                et
            }
        }
        FftType::Rfft => {
            element_type_is(&REAL_OPERAND, et, matches!(et, ElementType::F32 | ElementType::F64), "operand", "f32 or f64 for RFFT")?;
            et.complex_of().unwrap_or(et)
        }
    };
    let first = a.rank() - fft_rank;
    let mut out = a.with_element_type(out_type);
    for (i, &n) in fft_length.iter().enumerate() {
        let axis = first + i;
        let size = a.dims[axis];
        let innermost = i + 1 == fft_rank;
        if t == FftType::Irfft && innermost {
            // The document: the innermost axis holds the `n // 2 + 1` entries
            // up to the Nyquist frequency (XLA also accepts 0 entries when
            // `n` is 0).
            let expected = n / 2 + 1;
            if size != expected && !(n == 0 && size == 0) {
                fail!(
                    IRFFT_INNERMOST,
                    "IRFFT: the innermost dimension is {size}; it must be fft_length[-1] // 2 + 1 = {n} // 2 + 1 = {expected}"
                );
            }
            out.dims[axis] = n;
            out.dynamic[axis] = false;
        } else {
            if size != n {
                fail!(
                    LENGTHS,
                    "{name}: dimension {axis} is {size}; it must equal fft_length[{i}] = {n} (fft_length {fft_length:?} gives the lengths of the {fft_rank} innermost dimensions)"
                );
            }
            if t == FftType::Rfft && innermost {
                out.dims[axis] = half_length(n);
                out.dynamic[axis] = false;
            }
        }
    }
    Ok(Shape::Array(out))
}
