"""Section 4: comparisons."""
from case import *
from ref import *

FT = "compare/types.json"; FS = "compare/ieee_specials.json"; FO = "compare/total_order.json"
FB = "compare/broadcasting.json"; FG = "compare/compare_op.json"

def key(v, t):
    """total-order key of a float element (JSON form)."""
    x = float_elem_to_np(v, t); b = float_bits(x, t); w = BITS[t][1]
    mag = b & ((1 << (w - 1)) - 1)
    return -mag - 1 if b >> (w - 1) else mag

def cmp_val(d, a, b):
    return {"Eq": a == b, "Ne": a != b, "Ge": a >= b, "Gt": a > b, "Le": a <= b, "Lt": a < b}[d.capitalize()]

def elem_value(v, t):
    if t == "pred": return bool(v)
    if t in INTS: return int(v)
    if t in COMPLEX:
        c = to_np([v], f"{t}[1]")[0]; return complex(c)
    return float(float_elem_to_np(v, t))

def hand_cmp(d, t, x, y, total=False):
    out = []
    for a, b in zip(x, y):
        if total and t in FLOATS: out.append(cmp_val(d, key(a, t), key(b, t)))
        else:
            A, B = elem_value(a, t), elem_value(b, t)
            if t in COMPLEX:
                out.append((A == B) if d.capitalize() == "Eq" else (A != B))
            else:
                out.append(cmp_val(d, A, B))
    return out

def multi(file, name, source, t, x, y, ops, total=False, dims=None, generic=None, comparison_type=None, known_failing=None):
    """One case: several comparisons of the same operands, as a tuple."""
    dims = dims or [len(x)]
    s = shape_str(t, dims)
    instrs = []
    for d in ops:
        if generic:
            ins = {"name": d.lower(), "op": "Compare", "operands": ["x", "y"], "comparison_direction": d.upper()}
            if comparison_type: ins["comparison_type"] = comparison_type
        else:
            ins = {"name": d.lower(), "op": d + ("TotalOrder" if total else ""), "operands": ["x", "y"]}
        instrs.append(ins)
    instrs.append({"name": "all", "op": "Tuple", "operands": [d.lower() for d in ops]})
    flat_x, flat_y = flatten(x, dims), flatten(y, dims)
    vals = [nest(hand_cmp(d, t, flat_x, flat_y, total or comparison_type == "TOTALORDER"), dims) for d in ops]
    ps = shape_str("pred", dims)
    exp = {"shape": "(" + ", ".join([ps] * len(ops)) + ")", "value": {"tuple": vals}}
    return mk(file, name, source, [("x", s), ("y", s)], instrs, [x, y], expected=exp, known_failing=known_failing)

TYPES = {
    "pred": ([False, False, True, True], [False, True, False, True]),
    "s8": ([-1, 5, -128, 127, 0, 3], [1, 5, 127, -128, 0, -3]),
    "s16": ([-1, 5, -32768, 32767, 0, 300], [1, 5, 32767, -32768, 0, -300]),
    "s32": ([-1, 5, -2147483648, 2147483647, 0, 70000], [1, 5, 2147483647, -2147483648, 0, -70000]),
    "s64": ([-1, 5, "-9223372036854775808", "9223372036854775807", "9007199254740993", 3], [1, 5, "9223372036854775807", "-9223372036854775808", "9007199254740992", -3]),
    "u8": ([255, 5, 0, 128, 1, 127], [1, 5, 255, 127, 0, 128]),
    "u16": ([65535, 5, 0, 32768, 1, 32767], [1, 5, 65535, 32767, 0, 32768]),
    "u32": ([4294967295, 5, 0, 2147483648, 1, 2147483647], [1, 5, 4294967295, 2147483647, 0, 2147483648]),
    "u64": (["18446744073709551615", 5, 0, "9223372036854775808", "9007199254740993", "9223372036854775807"],
            [1, 5, "18446744073709551615", "9223372036854775807", "9007199254740992", "9223372036854775808"]),
    "f16": ([-1.5, 2, "-inf", "inf", 0.1, 65504], [1, 2, -65504, 65504, 0.2, 65504]),
    "bf16": ([-1.5, 2, "-inf", "inf", 0.1, 3e38], [1, 2, -3e38, 3e38, 0.2, 3e38]),
    "f32": ([-1.5, 2, "-inf", "inf", 0.1, 16777217], [1, 2, -3e38, 3e38, 0.2, 16777216]),
    "f64": ([-1.5, 2, "-inf", "inf", 0.1, 9007199254740993], [1, 2, -1e308, 1e308, 0.2, 9007199254740992]),
    "f8e4m3fn": ([-1.5, 2, -448, 448, 0.1, 0.125], [1, 2, -416, 416, 0.2, 0.1015625]),
    "f8e5m2": ([-1.5, 2, "-inf", "inf", 0.1, 57344], [1, 2, -57344, 57344, 0.2, 49152]),
}

def gen():
    DIRS6 = ["Eq", "Ne", "Ge", "Gt", "Le", "Lt"]
    src_t = "hand-derived: the type's order (unsigned types compare as unsigned, pred false < true); checked on " + XLA
    for t, (x, y) in TYPES.items():
        multi(FT, f"compare/all_directions/{t}", src_t, t, x, y, DIRS6)
    for t in ["pred"] + INTS:
        x, y = TYPES[t]
        multi(FT, f"compare/all_total_order_directions/{t}",
              "operation_semantics: Element-wise comparison operations (the TotalOrder variants \"provide the same functionalities\"; only floats change); checked on " + XLA,
              t, x, y, DIRS6, total=True)
    multi(FT, "compare/signed_vs_unsigned/s8", "hand-derived: the same bits ordered as signed integers; checked on " + XLA,
          "s8", [-1, 127, -128, 0], [1, -128, 127, -1], ["Lt", "Gt"])
    multi(FT, "compare/signed_vs_unsigned/u8", "hand-derived: the same bits ordered as unsigned integers; checked on " + XLA,
          "u8", [255, 127, 128, 0], [1, 128, 127, 255], ["Lt", "Gt"])
    for t in COMPLEX:
        inf = "inf"
        x = [[1, 2], [1, 2], ["nan", 0], [0, "-0"], [1, inf], [0, "nan"], [2, 1]]
        y = [[1, 2], [1, -2], ["nan", 0], ["-0", 0], [1, inf], [0, "nan"], [1, 2]]
        multi(FT, f"compare/eq_ne/{t}", "hand-derived: complex Eq/Ne compare both parts with IEEE equality (NaN unequal, -0 == +0); checked on " + XLA,
              t, x, y, ["Eq", "Ne"])
        multi(FT, f"compare/eq_ne_total_order/{t}",
              "operation_semantics: Element-wise comparison operations: EqTotalOrder and NeTotalOrder \"provide the same functionalities\" as Eq and Ne; "
              "XlaBuilder's CompareTotalOrder uses the total order only for real floating-point types, the default comparison otherwise; checked on " + XLA,
              t, x, y, ["Eq", "Ne"], total=True,
              known_failing="xlaref rejects EqTotalOrder/NeTotalOrder on complex operands (verify/elementwise.rs `compare`: "
                            "\"complex operands (c64) can only be compared with Eq or Ne\" whenever total_order is set). The document says the TotalOrder "
                            "variants provide the same functionality (the total order is over floating-point numbers), and XlaBuilder::EqTotalOrder on complex "
                            "builds a plain EQ compare; the generic Compare with comparison_type TOTALORDER on complex is rightly rejected (HLO verifier)")
    # IEEE specials
    for t in FLOATS:
        inf, ninf = ("inf", "-inf") if t != "f8e4m3fn" else (448, -448)
        x = ["nan", 1, "nan", "-0", 0, inf, ninf, "-nan", "-0", ninf]
        y = [1, "nan", "nan", 0, "-0", inf, ninf, "-nan", "-0", inf]
        multi(FS, f"compare/ieee/{t}_nan_and_signed_zeros",
              "operation_semantics: Element-wise comparison operations (\"standard IEEE 754 floating-point comparison semantics\": NaN is unordered, only Ne is true; -0 == +0); checked on " + XLA,
              t, x, y, DIRS6)
    # total order
    NAN_NEG = {"f16": "0xfe00", "bf16": "0xffc0", "f32": "0xffc00000", "f64": "0xfff8000000000000", "f8e4m3fn": "0xff", "f8e5m2": "0xfe"}
    NAN_POS = {"f16": "0x7e00", "bf16": "0x7fc0", "f32": "0x7fc00000", "f64": "0x7ff8000000000000", "f8e4m3fn": "0x7f", "f8e5m2": "0x7e"}
    NAN_POS2 = {"f16": "0x7e01", "bf16": "0x7fc1", "f32": "0x7fc00001", "f64": "0x7ff8000000000001", "f8e4m3fn": None, "f8e5m2": "0x7f"}
    NAN_SIG = {"f16": "0x7c01", "bf16": "0x7f81", "f32": "0x7f800001", "f64": "0x7ff0000000000001", "f8e4m3fn": None, "f8e5m2": "0x7d"}
    for t in FLOATS:
        inf, ninf = ("inf", "-inf") if t != "f8e4m3fn" else (448, -448)
        big, nbig = (1, -1) if t != "f8e4m3fn" else (1, -1)
        nn, pn = NAN_NEG[t], NAN_POS[t]
        x = [nn, ninf, -1, "-0", 0, 1, inf, "-0", pn, nn, 0, pn, -2, ninf, nn]
        y = [ninf, -1, "-0", 0, 1, inf, pn, "-0", pn, nn, "-0", nn, -1, nn, pn]
        if NAN_POS2[t]:
            x += [NAN_POS2[t], NAN_SIG[t]]; y += [pn, inf]
        multi(FO, f"compare/total_order/{t}",
              "operation_semantics: Element-wise comparison operations: total order -NaN < -Inf < -Finite < -0 < +0 < +Finite < +Inf < +NaN "
              "(NaNs ordered by their bits: sign, then payload); checked on " + XLA,
              t, x, y, DIRS6, total=True)
    # the generic Compare op
    x = [1, 2, 3, "nan", "-0"]; y = [2, 2, 1, "nan", 0]
    multi(FG, "compare/compare_op/f32_each_direction", "operation_semantics: Element-wise comparison operations, written as Compare with comparison_direction (docs/format.md §3); checked on " + XLA,
          "f32", x, y, ["EQ", "NE", "GE", "GT", "LE", "LT"], generic=True)
    multi(FG, "compare/compare_op/f32_float_type", "operation_semantics: Element-wise comparison operations, Compare with comparison_type FLOAT (IEEE); checked on " + XLA,
          "f32", x, y, ["EQ", "NE", "GE", "GT", "LE", "LT"], generic=True, comparison_type="FLOAT")
    multi(FG, "compare/compare_op/f32_total_order_type", "operation_semantics: Element-wise comparison operations, Compare with comparison_type TOTALORDER; checked on " + XLA,
          "f32", x, y, ["EQ", "NE", "GE", "GT", "LE", "LT"], generic=True, comparison_type="TOTALORDER")
    multi(FG, "compare/compare_op/f64_total_order_type_nans", "operation_semantics: Element-wise comparison operations, Compare with comparison_type TOTALORDER; checked on " + XLA,
          "f64", ["0xfff8000000000000", "-inf", "0x7ff8000000000000", "-0"], ["-inf", "0xfff8000000000000", "inf", 0], ["LT", "GT", "EQ"], generic=True, comparison_type="TOTALORDER")
    multi(FG, "compare/compare_op/s32_signed_type", "operation_semantics: Element-wise comparison operations, Compare on integers with comparison_type SIGNED; checked on " + XLA,
          "s32", [-1, 0, 7], [1, 0, -7], ["LT", "EQ"], generic=True, comparison_type="SIGNED")
    multi(FG, "compare/compare_op/u32_unsigned_type", "operation_semantics: Element-wise comparison operations, Compare on unsigned integers with comparison_type UNSIGNED; checked on " + XLA,
          "u32", [4294967295, 0, 7], [1, 0, 7], ["LT", "GE"], generic=True, comparison_type="UNSIGNED")
    multi(FG, "compare/compare_op/c64_eq_ne", "operation_semantics: Element-wise comparison operations, Compare EQ/NE on complex; checked on " + XLA,
          "c64", [[1, 2], [1, 2]], [[1, 2], [2, 1]], ["EQ", "NE"], generic=True)
    # broadcasting
    def bc(name, src, op, t, ld, rd, x, y, bd, e):
        ins = {"name": "r", "op": op, "operands": ["x", "y"]}
        if bd is not None: ins["broadcast_dimensions"] = bd
        od = bcast_dims(ld, rd, bd or [])
        mk(FB, name, src + "; checked on " + XLA, [("x", shape_str(t, ld)), ("y", shape_str(t, rd))], [ins], [x, y],
           expected={"shape": shape_str("pred", od), "value": e})
    X = [[1, 2, 3], [4, 5, 6]]
    bc("compare/broadcast/lt_matrix_vector_dimension_1", "broadcasting: matrix and vector with broadcast dimension (1), applied to Lt (hand-derived)",
       "Lt", "s32", [2, 3], [3], X, [2, 5, 5], [1], [[True, True, True], [False, False, False]])
    bc("compare/broadcast/eq_vector_matrix_dimension_0", "broadcasting: vector (lhs) and matrix with broadcast dimension (0), applied to Eq (hand-derived)",
       "Eq", "f32", [2], [2, 3], [2, 5], X, [0], [[False, True, False], [False, True, False]])
    bc("compare/broadcast/ge_matrix_scalar", "broadcasting: a scalar against a matrix, applied to Ge (hand-derived)",
       "Ge", "u8", [2, 3], [], X, 4, None, [[False, False, False], [True, True, True]])
    bc("compare/broadcast/gt_scalar_nan_matrix", "broadcasting: a NaN scalar against a matrix, Gt is false everywhere (hand-derived)",
       "Gt", "f64", [], [2, 2], "nan", [[1, 2], ["nan", "-inf"]], None, [[False, False], [False, False]])
    bc("compare/broadcast/ne_outer_2x1_1x3", "broadcasting: degenerate dimensions, outer operation (2,1) and (1,3), applied to Ne (hand-derived)",
       "Ne", "s64", [2, 1], [1, 3], [[1], [2]], [[1, 2, 3]], None, [[False, True, True], [True, False, True]])
    bc("compare/broadcast/lt_total_order_composition", "broadcasting: Broadcast composition, a 4-vector and a 1x2 matrix with (0), applied to LtTotalOrder (hand-derived)",
       "LtTotalOrder", "f32", [4], [1, 2], ["-0", 0, "nan", -1], [[0, "-0"]], [0], [[True, False], [False, False], [False, False], [True, True]])
    bc("compare/broadcast/le_cuboid_matrix_dims_0_2", "broadcasting: Formal definition, a TxV matrix matched to dimensions 0,2 of a 2x3x2 array, applied to Le (hand-derived)",
       "Le", "s16", [2, 3, 2], [2, 2], [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]], [[3, 4], [8, 8]], [0, 2],
       [[[True, True], [True, True], [False, False]], [[True, True], [False, False], [False, False]]])

if __name__ == "__main__":
    gen(); write_all()
