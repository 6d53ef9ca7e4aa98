"""Section 5: one error case per verifier rule (binary, compare, broadcast_shapes)."""
from case import *

FE = "elementwise/errors.json"; FCE = "compare/errors.json"
SRC_V = "verify/elementwise.rs "

def err(file, name, source, params, instrs, args, text, known_failing=None, expected=None):
    return mk(file, name, source, params, instrs, args, expected=expected or {"error": text}, xla=False, known_failing=known_failing)

def bin_err(file, name, source, op, ls, rs, lv, rv, text, bd=None, extra=None):
    ins = {"name": "r", "op": op, "operands": ["x", "y"]}
    if bd is not None: ins["broadcast_dimensions"] = bd
    if extra: ins.update(extra)
    return err(file, name, source, [("x", ls), ("y", rs)], [ins], [lv, rv], text)

def gen():
    D = "operation_semantics: Element-wise binary arithmetic operations"
    # operand count / kind
    err(FE, "elementwise/errors/add_one_operand", D + ": Op(lhs, rhs) takes two operands",
        [("x", "f32[2]")], [{"name": "r", "op": "Add", "operands": ["x"]}], [[1, 2]], "takes 2 operands, got 1")
    err(FE, "elementwise/errors/mul_three_operands", D + ": Op(lhs, rhs) takes two operands",
        [("x", "f32[2]")], [{"name": "r", "op": "Mul", "operands": ["x", "x", "x"]}], [[1, 2]], "takes 2 operands, got 3")
    err(FE, "elementwise/errors/add_tuple_lhs", D + ": lhs is an array of type T",
        [("t", "(f32[2], f32[2])"), ("y", "f32[2]")], [{"name": "r", "op": "Add", "operands": ["t", "y"]}],
        [{"tuple": [[1, 2], [3, 4]]}, [5, 6]], "lhs must be an array")
    err(FE, "elementwise/errors/sub_tuple_rhs", D + ": rhs is an array of type T",
        [("x", "s32[2]"), ("t", "(s32[2])")], [{"name": "r", "op": "Sub", "operands": ["x", "t"]}],
        [[1, 2], {"tuple": [[3, 4]]}], "rhs must be an array")
    err(FE, "elementwise/errors/max_token_operand", D + ": operands are arrays",
        [("x", "f32[]")], [{"name": "tok", "op": "AfterAll", "operands": []}, {"name": "r", "op": "Max", "operands": ["x", "tok"]}],
        [1], "rhs must be an array")
    # element types
    bin_err(FE, "elementwise/errors/add_element_type_mismatch", D + ": lhs and rhs are arrays of one type T",
            "Add", "f32[2]", "s32[2]", [1, 2], [3, 4], "element types differ (f32 vs s32)")
    bin_err(FE, "elementwise/errors/complex_element_type_mismatch", D + ": Complex takes two arrays of one type T",
            "Complex", "f32[2]", "f64[2]", [1, 2], [3, 4], "element types differ (f32 vs f64)")
    bin_err(FE, "elementwise/errors/and_pred_vs_u8", D + ": lhs and rhs are arrays of one type T",
            "And", "pred[2]", "u8[2]", [True, False], [1, 0], "element types differ (pred vs u8)")
    rules = [
        ("shiftLeft", "ShiftLeft", "f32", "must be an integer type"),
        ("shiftRightArithmetic", "ShiftRightArithmetic", "pred", "must be an integer type"),
        ("shiftRightLogical", "ShiftRightLogical", "c64", "must be an integer type"),
        ("atan2", "Atan2", "s32", "must be a floating-point type"),
        ("atan2", "Atan2", "c64", "must be a floating-point type"),
        ("atan2", "Atan2", "pred", "must be a floating-point type"),
        ("sub", "Sub", "pred", "must be an integer, floating-point or complex type"),
        ("div", "Div", "pred", "must be an integer, floating-point or complex type"),
        ("pow", "Pow", "pred", "must be an integer, floating-point or complex type"),
        ("rem", "Rem", "c64", "must be an integer or floating-point type"),
        ("rem", "Rem", "pred", "must be an integer or floating-point type"),
        ("complex", "Complex", "f16", "must be f32 or f64"),
        ("complex", "Complex", "bf16", "must be f32 or f64"),
        ("complex", "Complex", "s32", "must be f32 or f64"),
        ("complex", "Complex", "c64", "must be f32 or f64"),
        ("and", "And", "f32", "must be pred or an integer type"),
        ("or", "Or", "c64", "must be pred or an integer type"),
        ("xor", "Xor", "bf16", "must be pred or an integer type"),
        ("logicalAnd", "LogicalAnd", "f64", "must be pred or an integer type"),
        ("logicalOr", "LogicalOr", "f8e5m2", "must be pred or an integer type"),
    ]
    val = {"pred": [True, False], "c64": [[1, 2], [3, 4]], "c128": [[1, 2], [3, 4]]}
    for nm, op, t, text in rules:
        v = val.get(t, [1, 2])
        bin_err(FE, f"elementwise/errors/{nm}_on_{t}", D + f": which element types {op} accepts (docs/semantics-decisions.md; XLA's shape inference)",
                op, f"{t}[2]", f"{t}[2]", v, v, text)
    # broadcasting rules
    B = "broadcasting: "
    X = [[1, 2, 3], [4, 5, 6]]
    bin_err(FE, "elementwise/errors/rank_mismatch_without_broadcast_dimensions", B + "\"Without specifying broadcasting, this operation is invalid\"",
            "Add", "f32[2,3]", "f32[3]", X, [1, 2, 3], "need broadcast_dimensions")
    bin_err(FE, "elementwise/errors/rank_mismatch_with_empty_broadcast_dimensions", B + "the broadcasting tuple maps every dimension of the lower-rank operand",
            "Add", "f32[2,3]", "f32[3]", X, [1, 2, 3], "broadcast_dimensions has 0 entries, the lower-rank operand has 1", bd=[])
    bin_err(FE, "elementwise/errors/broadcast_dimensions_too_long", B + "Formal definition: one broadcast dimension per dimension of the lower-rank array",
            "Add", "f32[2,3]", "f32[3]", X, [1, 2, 3], "broadcast_dimensions has 2 entries, the lower-rank operand has 1", bd=[0, 1])
    bin_err(FE, "elementwise/errors/broadcast_dimensions_for_scalar", B + "Formal definition: one broadcast dimension per dimension of the lower-rank array (none for a scalar)",
            "Mul", "s32[2,3]", "s32[]", X, 2, "broadcast_dimensions has 1 entries, the lower-rank operand has 0", bd=[0])
    bin_err(FE, "elementwise/errors/broadcast_dimensions_out_of_range", B + "Formal definition: a broadcast dimension names a dimension of the higher-rank array",
            "Add", "f32[2,3]", "f32[3]", X, [1, 2, 3], "broadcast_dimensions entry 2 is out of range [0, 2)", bd=[2])
    bin_err(FE, "elementwise/errors/broadcast_dimensions_negative", B + "Formal definition: a broadcast dimension names a dimension of the higher-rank array",
            "Sub", "f32[3]", "f32[2,3]", [1, 2, 3], X, "broadcast_dimensions entry -1 is out of range [0, 2)", bd=[-1])
    bin_err(FE, "elementwise/errors/broadcast_dimensions_not_increasing", B + "Formal definition: \"The order of broadcast dimensions has to be strictly increasing\"",
            "Add", "s32[2,3,4]", "s32[4,3]", [[[0] * 4] * 3] * 2, [[0] * 3] * 4, "broadcast_dimensions must be strictly increasing, got [2, 1]", bd=[2, 1])
    bin_err(FE, "elementwise/errors/broadcast_dimensions_repeated", B + "Formal definition: \"The order of broadcast dimensions has to be strictly increasing\"",
            "Add", "s32[3,3]", "s32[3,3,2]", [[0] * 3] * 3, [[[0] * 2] * 3] * 3, "must be strictly increasing, got [1, 1]", bd=[1, 1])
    bin_err(FE, "elementwise/errors/broadcast_dimensions_size_mismatch", B + "Formal definition: \"T has to be equal to the matching dimension of the higher-rank array\"",
            "Add", "f32[2,3]", "f32[3]", X, [1, 2, 3], "maps dimension 0 (size 3) to dimension 0 (size 2)", bd=[0])
    bin_err(FE, "elementwise/errors/equal_rank_non_identity_broadcast_dimensions", "hand-derived: operands of equal rank take broadcast_dimensions only as the identity (docs/semantics-decisions.md; XLA's shape inference)",
            "Add", "f32[2,1]", "f32[2,3]", [[1], [2]], X, "must be empty or the identity", bd=[1, 0])
    bin_err(FE, "elementwise/errors/equal_shapes_non_identity_broadcast_dimensions", "hand-derived: operands of equal rank take broadcast_dimensions only as the identity, even when the shapes are equal (XLA's shape inference checks this first)",
            "Add", "f32[2,3]", "f32[2,3]", X, X, "must be empty or the identity", bd=[1, 0])
    err(FE, "elementwise/errors/equal_rank_partial_identity_broadcast_dimensions",
        "hand-derived: operands of equal rank take broadcast_dimensions only as the identity (docs/semantics-decisions.md); XLA's shape inference compares with the full identity [0, 1]",
        [("x", "f32[2,1]"), ("y", "f32[2,3]")], [{"name": "r", "op": "Add", "operands": ["x", "y"], "broadcast_dimensions": [0]}],
        [[[1], [2]], X], "must be empty or the identity",
        known_failing="xlaref accepts broadcast_dimensions [0] for two rank-2 operands: verify/elementwise.rs `broadcast_shapes` only checks that every "
                      "given entry equals its index (`bd.iter().enumerate().any(|(i, &d)| d != i)`), not that bd has one entry per dimension; "
                      "XLA's InferElementwiseBinaryOpShape requires `broadcast_dimensions == identity_dims` (all of 0..rank). Fix: also require bd.len() == rank")
    bin_err(FE, "elementwise/errors/degenerate_incompatible", B + "(7,2,5) and (7,2,6) are incompatible and cannot be broadcast",
            "Max", "s32[7,2,5]", "s32[7,2,6]", [[[0] * 5] * 2] * 7, [[[0] * 6] * 2] * 7, "incompatible in dimension 2 (5 vs 6)")
    bin_err(FE, "elementwise/errors/degenerate_incompatible_neither_is_1", B + "two dimensions are compatible only when equal or one of them is 1",
            "Add", "f32[2,3]", "f32[3,3]", X, [[0] * 3] * 3, "incompatible in dimension 0 (2 vs 3)")
    bin_err(FE, "elementwise/errors/composition_size_mismatch", B + "Broadcast composition: the mapped sizes must still match or be 1",
            "Add", "f32[4]", "f32[1,3]", [1, 2, 3, 4], [[1, 2, 3]], "maps dimension 0 (size 4) to dimension 1 (size 3)", bd=[1])
    # shape declared on the instruction
    err(FE, "elementwise/errors/declared_result_shape_mismatch", "docs/format.md §3: a stated result shape is checked against the inferred one (the broadcast shape)",
        [("x", "f32[2,1]"), ("y", "f32[1,3]")], [{"name": "r", "op": "Add", "operands": ["x", "y"], "shape": "f32[2,1]"}],
        [[[1], [2]], [[1, 2, 3]]], "f32[2,3]")

    # compare
    C = "operation_semantics: Element-wise comparison operations"
    for op, t in (("Lt", "c64"), ("Ge", "c128"), ("Gt", "c64"), ("Le", "c128"), ("LtTotalOrder", "c64")):
        bin_err(FCE, f"compare/errors/{op[0].lower() + op[1:]}_on_{t}", C + ": complex numbers have no order; only Eq and Ne compare them (docs/semantics-decisions.md)",
                op, f"{t}[2]", f"{t}[2]", [[1, 2], [3, 4]], [[1, 2], [3, 4]], "can only be compared with Eq or Ne")
    bin_err(FCE, "compare/errors/compare_gt_on_c64", C + ": Compare GT on complex (no order)",
            "Compare", "c64[1]", "c64[1]", [[1, 2]], [[1, 2]], "can only be compared with Eq or Ne", extra={"comparison_direction": "GT"})
    bin_err(FCE, "compare/errors/compare_eq_total_order_type_on_c64", C + ": the total order is defined over floating-point numbers; XLA's HLO verifier rejects TOTALORDER on complex",
            "Compare", "c64[1]", "c64[1]", [[1, 2]], [[1, 2]], "can only be compared with Eq or Ne", extra={"comparison_direction": "EQ", "comparison_type": "TOTALORDER"})
    bin_err(FCE, "compare/errors/eq_element_type_mismatch", C + ": lhs and rhs are arrays of one type T",
            "Eq", "f32[2]", "f64[2]", [1, 2], [1, 2], "element types differ (f32 vs f64)")
    bin_err(FCE, "compare/errors/lt_signed_vs_unsigned", C + ": lhs and rhs are arrays of one type T",
            "Lt", "s32[2]", "u32[2]", [1, 2], [1, 2], "element types differ (s32 vs u32)")
    bin_err(FCE, "compare/errors/ne_rank_mismatch_without_broadcast_dimensions", C + ": \"operations between arrays of different ranks are not supported, unless one of the operands is a scalar\"",
            "Ne", "s32[2,3]", "s32[3]", X, [1, 2, 3], "need broadcast_dimensions")
    bin_err(FCE, "compare/errors/gt_broadcast_dimensions_out_of_range", "broadcasting: Formal definition, applied to a comparison",
            "Gt", "s32[2,3]", "s32[3]", X, [1, 2, 3], "out of range [0, 2)", bd=[5])
    bin_err(FCE, "compare/errors/le_broadcast_dimensions_size_mismatch", "broadcasting: \"when adding a 2x3 matrix to a 3-element vector, a broadcasting dimension of 0 is invalid\", applied to a comparison",
            "Le", "s32[2,3]", "s32[3]", X, [1, 2, 3], "sizes must match or one be 1", bd=[0])
    bin_err(FCE, "compare/errors/eq_total_order_degenerate_incompatible", "broadcasting: degenerate dimensions, incompatible shapes, applied to a comparison",
            "EqTotalOrder", "f32[2,3]", "f32[3,2]", X, [[1, 2], [3, 4], [5, 6]], "incompatible in dimension 0")
    bin_err(FCE, "compare/errors/ge_equal_rank_non_identity", "hand-derived: operands of equal rank take broadcast_dimensions only as the identity, applied to a comparison",
            "Ge", "f32[2,1]", "f32[2,3]", [[1], [2]], X, "must be empty or the identity", bd=[1, 0])
    err(FCE, "compare/errors/eq_one_operand", C + ": Op(lhs, rhs) takes two operands",
        [("x", "f32[2]")], [{"name": "r", "op": "Eq", "operands": ["x"]}], [[1, 2]], "takes 2 operands, got 1")
    err(FCE, "compare/errors/compare_three_operands", C + ": Op(lhs, rhs) takes two operands",
        [("x", "f32[2]")], [{"name": "r", "op": "Compare", "operands": ["x", "x", "x"], "comparison_direction": "EQ"}], [[1, 2]], "takes 2 operands, got 3")
    err(FCE, "compare/errors/lt_tuple_operand", C + ": lhs is an array of type T",
        [("t", "(f32[2])"), ("y", "f32[2]")], [{"name": "r", "op": "Lt", "operands": ["t", "y"]}], [{"tuple": [[1, 2]]}, [1, 2]], "lhs must be an array")
    err(FCE, "compare/errors/compare_without_direction", "docs/format.md §3: Compare takes comparison_direction",
        [("x", "f32[2]")], [{"name": "r", "op": "Compare", "operands": ["x", "x"]}], [[1, 2]], "comparison_direction")
    bin_err(FCE, "compare/errors/compare_unknown_direction", "docs/format.md §3: comparison_direction is one of EQ, NE, GE, GT, LE, LT",
            "Compare", "f32[2]", "f32[2]", [1, 2], [1, 2], "unknown comparison direction", extra={"comparison_direction": "XX"})
    bin_err(FCE, "compare/errors/compare_unknown_type", "docs/format.md §3: comparison_type is one of FLOAT, TOTALORDER, SIGNED, UNSIGNED",
            "Compare", "f32[2]", "f32[2]", [1, 2], [1, 2], "unknown comparison type", extra={"comparison_direction": "EQ", "comparison_type": "BOGUS"})

if __name__ == "__main__":
    gen(); write_all()
