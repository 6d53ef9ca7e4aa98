//! "Did you mean ...?" for unknown op and attribute names. The common slips
//! are XLA's HLO opcodes (`multiply`, `broadcast`, `convolution`) written
//! where xla-json/1 wants the document's names, and near misses in case or
//! spelling.

use crate::hlo;
use crate::ir::{BinaryOp, UnaryOp};

/// The ops of xla-json/1 that are not unary or binary arithmetic
/// (docs/format.md §3).
const OTHER_OPS: [&str; 67] = [
    "AfterAll",
    "AllGather",
    "AllReduce",
    "AllToAll",
    "BatchNormGrad",
    "BatchNormInference",
    "BatchNormTraining",
    "BitcastConvertType",
    "Broadcast",
    "BroadcastInDim",
    "Call",
    "Cholesky",
    "Clamp",
    "Collapse",
    "CollectivePermute",
    "Compare",
    "ConcatInDim",
    "Conditional",
    "Constant",
    "Conv",
    "ConvGeneral",
    "ConvGeneralDilated",
    "ConvWithGeneralDimensions",
    "ConvWithGeneralPadding",
    "ConvertElementType",
    "CrossReplicaSum",
    "CustomCall",
    "Dot",
    "DotGeneral",
    "DynamicSlice",
    "DynamicUpdateSlice",
    "Eq",
    "Fft",
    "Gather",
    "Ge",
    "GetDimensionSize",
    "GetTupleElement",
    "Gt",
    "Infeed",
    "Iota",
    "Le",
    "Lt",
    "Map",
    "Ne",
    "OptimizationBarrier",
    "Outfeed",
    "Pad",
    "Recv",
    "RecvDone",
    "Reduce",
    "ReducePrecision",
    "ReduceScatter",
    "ReduceWindow",
    "ReplicaId",
    "Reshape",
    "Rev",
    "RngBitGenerator",
    "RngNormal",
    "RngUniform",
    "Scatter",
    "Select",
    "SelectAndScatter",
    "Send",
    "SendDone",
    "SetDimensionSize",
    "Slice",
    "Sort",
];

/// HLO opcodes the HLO reader maps one to one (`hlo::ops`), and these
/// whose xla-json op takes other attributes.
const OTHER_HLO_OPCODES: [(&str, &str); 12] = [
    ("broadcast", "BroadcastInDim"),
    ("convolution", "ConvGeneralDilated"),
    ("concatenate", "ConcatInDim"),
    ("convert", "ConvertElementType"),
    ("bitcast-convert", "BitcastConvertType"),
    ("reverse", "Rev"),
    ("dynamic-slice", "DynamicSlice"),
    ("dynamic-update-slice", "DynamicUpdateSlice"),
    ("get-tuple-element", "GetTupleElement"),
    ("select-and-scatter", "SelectAndScatter"),
    ("reduce-window", "ReduceWindow"),
    ("all-reduce", "AllReduce"),
];

fn hlo_opcodes() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    hlo::ops::UNARY.iter().chain(hlo::ops::BINARY.iter()).chain(OTHER_HLO_OPCODES.iter())
}

/// Every op name the reader accepts.
fn op_names() -> impl Iterator<Item = &'static str> {
    UnaryOp::ALL.iter().map(|(n, _)| *n).chain(BinaryOp::ALL.iter().map(|(n, _)| *n)).chain(OTHER_OPS)
}

/// `; did you mean `X`?` for an unknown op, or nothing when no name is near.
pub fn op_hint(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if let Some((_, ours)) = hlo_opcodes().find(|(hlo, _)| *hlo == lower) {
        return format!("; did you mean `{ours}` (xla-json names ops as the document does, not as HLO opcodes)?");
    }
    hint(name, op_names())
}

/// `; did you mean `X`?` for the nearest of `candidates`, if one is near.
pub fn hint<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let lower = name.to_ascii_lowercase();
    let best = candidates.map(|c| (distance(&lower, &c.to_ascii_lowercase()), c)).min();
    match best {
        // Near: a third of the name's letters at most (case does not count).
        Some((d, c)) if d <= (name.chars().count() / 3).max(1) => format!("; did you mean `{c}`?"),
        _ => String::new(),
    }
}

/// Levenshtein distance (names are short; no allocation per cell).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().take(64).collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().take(64).enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_and_hlo_opcodes_are_suggested() {
        assert!(op_hint("Multiply").contains("`Mul`"), "{}", op_hint("Multiply"));
        assert!(op_hint("multiply").contains("`Mul`"));
        assert!(op_hint("Gahter").contains("`Gather`"));
        assert!(op_hint("dotgeneral").contains("`DotGeneral`"));
        assert_eq!(op_hint("Frobnicate"), "");
        assert!(hint("window_stride", ["window_strides", "padding"].into_iter()).contains("`window_strides`"));
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
