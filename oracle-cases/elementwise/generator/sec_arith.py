"""Section 1: every binary op on every element type it accepts."""
from case import *
from ref import *

SRC_INT = "hand-derived: two's-complement arithmetic (wrapping), truncating division, remainder with the dividend's sign; checked on " + XLA
SRC_FLOAT = "hand-derived: IEEE 754 operation on the exact values, rounded to nearest even into the type; checked on " + XLA
SRC_TRANS = "hand-derived: correctly rounded value (mpmath); checked on " + XLA + " within the tolerance"
SRC_CPLX = "hand-derived: complex arithmetic on exact values, each part rounded to nearest even; checked on " + XLA
SRC_PRED = "hand-derived: pred logic (Add/Max = OR, Mul/Min = AND, as XLA's i1 arithmetic); checked on " + XLA
SRC_BITS = "hand-derived: bitwise operation on the two's-complement bits; checked on " + XLA

def binop(file, name, op, t, x, y, dims=None, expected=None, source=None, tol=None, impl=False, override=None, known_failing=None):
    dims = dims if dims is not None else [len(flatten(x, [len(x)]))]
    s = shape_str(t, dims)
    if expected is None and source is None:
        raise ValueError(name)
    ot = {"f32": "c64", "f64": "c128"}[t] if op == "Complex" else t
    ot = ot
    exp = None if expected is None else {"shape": shape_str(ot, dims), "value": expected}
    return mk(file, name, source, [("x", s), ("y", s)], [{"name": "r", "op": op, "operands": ["x", "y"]}],
              [x, y], expected=exp, tolerance=tol, impl=impl, override=override, known_failing=known_failing)

def hand(op, t, x, y):
    return apply(op, t, x, y)

# Value pools ---------------------------------------------------------------
ARITH = {  # Add/Sub/Mul/Max/Min
    "s8": ([7, -13, 100, -128, 0, 127], [3, 5, -27, -1, -9, 1]),
    "s16": ([300, -1234, 32000, -32768, 0, 77], [7, -40, 767, 2, -5, 13]),
    "s32": ([123456, -70000, 2000000000, -2147483648, 0, 46341], [-7, 300, 147483647, -1, 9, 46341]),
    "s64": [[1 << 40, -123456789012, "9223372036854775807", "-9223372036854775808", 0, 3037000500],
            [12345, -67, 1, -1, -3, 3037000500]],
    "u8": ([7, 200, 100, 255, 0, 16], [3, 56, 27, 1, 9, 16]),
    "u16": ([300, 60000, 32000, 65535, 0, 256], [7, 5536, 767, 2, 5, 256]),
    "u32": ([123456, 4000000000, 2000000000, 4294967295, 0, 65536], [7, 294967296, 147483647, 2, 9, 65536]),
    "u64": [[1 << 40, "18000000000000000000", "9223372036854775808", "18446744073709551615", 0, 4294967296],
            [12345, 446744073709551616, "9223372036854775808", 2, 3, 4294967296]],
    "f16": ([1.5, -2.25, 0.1, 1000, 65504, 3], [0.25, 4, 0.2, -0.001, 32, -3]),
    "bf16": ([1.5, -2.25, 0.1, 1e10, 3e38, 3], [0.25, 4, 0.2, -7, 2e38, -3]),
    "f32": ([1.5, -2.25, 0.1, 1e10, 3e38, 16777216], [0.25, 4, 0.2, -7, 2e38, 1]),
    "f64": ([1.5, -2.25, 0.1, 1e300, 1.7e308, 9007199254740992], [0.25, 4, 0.2, -7e10, 1e308, 1]),
    "f8e4m3fn": ([1.5, -2.25, 0.1, 448, 3, -0.5], [0.25, 4, 0.2, 16, -3, 0.375]),
    "f8e5m2": ([1.5, -2.5, 0.1, 57344, 3, -0.5], [0.25, 4, 0.2, 16384, -3, 0.375]),
    "c64": ([[1.5, -2], [0.25, 3], [-1, 0], [1152921504606846976, 1152921504606846976]], [[2, 0.5], [-4, 1], [0, -1], [1073741824, -1073741824]]),
    "c128": ([[1.5, -2], [0.25, 3], [-1, 0], [2.0**500, 2.0**500]], [[2, 0.5], [-4, 1], [0, -1], [2.0**400, -2.0**400]]),
    "pred": ([False, False, True, True], [False, True, False, True]),
}
DIVREM = {
    "s8": ([7, -7, 7, -7, 100, -128], [2, 2, -2, -2, 7, 3]),
    "s16": ([7, -7, 7, -7, 30000, -32768], [2, 2, -2, -2, 7, 3]),
    "s32": ([7, -7, 7, -7, 2000000000, -2147483648], [2, 2, -2, -2, 7, 3]),
    "s64": ([7, -7, 7, -7, "9000000000000000000", "-9223372036854775808"], [2, 2, -2, -2, 7, 3]),
    "u8": ([7, 200, 255, 3, 100, 128], [2, 7, 16, 5, 100, 255]),
    "u16": ([7, 60000, 65535, 3, 100, 32768], [2, 7, 256, 5, 100, 65535]),
    "u32": ([7, 4000000000, 4294967295, 3, 100, 2147483648], [2, 7, 65536, 5, 100, 4294967295]),
    "u64": ([7, "18000000000000000000", "18446744073709551615", 3, 100, "9223372036854775808"],
            [2, 7, 4294967296, 5, 100, "18446744073709551615"]),
    "f16": ([7, -7, 1, 5.5, 1000, -0.75], [2, 2, 3, -1.5, 0.1, 0.5]),
    "bf16": ([7, -7, 1, 5.5, 1e30, -0.75], [2, 2, 3, -1.5, 0.1, 0.5]),
    "f32": ([7, -7, 1, 5.5, 1e30, -0.75], [2, 2, 3, -1.5, 0.1, 0.5]),
    "f64": ([7, -7, 1, 5.5, 1e300, -0.75], [2, 2, 3, -1.5, 0.1, 0.5]),
    "f8e4m3fn": ([7, -7, 1, 5.5, 448, -0.75], [2, 2, 3, -1.5, 0.1, 0.5]),
    "f8e5m2": ([7, -7, 1, 5, 49152, -0.75], [2, 2, 3, -1.5, 0.1, 0.5]),
    # exact complex quotients: |denominator|^2 a power of two
    "c64": ([[3, 4], [1, 0], [-2, 6], [5, -3]], [[1, 1], [0, 2], [2, 0], [-1, 1]]),
    "c128": ([[3, 4], [1, 0], [-2, 6], [5, -3]], [[1, 1], [0, 2], [2, 0], [-1, 1]]),
}
POWI = {  # non-negative exponents (negative ones are pinned separately)
    "s8": ([2, -3, 5, 0, 7, 3], [3, 3, 2, 0, 1, 5]),
    "s16": ([2, -3, 5, 0, 7, 3], [14, 3, 6, 0, 1, 11]),
    "s32": ([2, -3, 5, 0, 7, 3], [30, 19, 13, 0, 1, 21]),
    "s64": ([2, -3, 5, 0, 7, 3], [62, 39, 27, 0, 1, 41]),
    "u8": ([2, 3, 5, 0, 7, 255], [7, 5, 3, 0, 1, 2]),
    "u16": ([2, 3, 5, 0, 7, 65535], [15, 11, 6, 0, 1, 2]),
    "u32": ([2, 3, 5, 0, 7, 4294967295], [31, 21, 13, 0, 1, 2]),
    "u64": ([2, 3, 5, 0, 7, "18446744073709551615"], [63, 41, 27, 0, 1, 2]),
}
POWF = ([2, 1.5, 10, 0.5, 9, 3], [3, -2, 0.5, 1.5, 0.5, 0.75])
ATAN2 = ([1, -1, 0.5, 3, -2, 10], [1, 1, -2, 0.25, -3, 0.125])
BITW = {
    "s8": ([0b1100, -1, -128, 0x55, 127, -86], [0b1010, 0x3c, -1, 0x0f, -128, 0x5a]),
    "s16": ([0b1100, -1, -32768, 0x5555, 32767, -21846], [0b1010, 0x3c3c, -1, 0x0ff0, -32768, 0x5a5a]),
    "s32": ([0b1100, -1, -2147483648, 0x55555555, 2147483647, -1431655766], [0b1010, 0x3c3c3c3c, -1, 0x0ff00ff0, -2147483648, 0x5a5a5a5a]),
    "s64": ([0b1100, -1, "-9223372036854775808", 0x5555555555555555, "9223372036854775807", -6148914691236517206],
            [0b1010, 0x3c3c3c3c3c3c3c3c, -1, 0x0ff00ff00ff00ff0, "-9223372036854775808", 0x5a5a5a5a5a5a5a5a]),
    "u8": ([0b1100, 255, 128, 0x55, 127, 0xaa], [0b1010, 0x3c, 255, 0x0f, 128, 0x5a]),
    "u16": ([0b1100, 65535, 32768, 0x5555, 32767, 0xaaaa], [0b1010, 0x3c3c, 65535, 0x0ff0, 32768, 0x5a5a]),
    "u32": ([0b1100, 4294967295, 2147483648, 0x55555555, 2147483647, 0xaaaaaaaa], [0b1010, 0x3c3c3c3c, 4294967295, 0x0ff00ff0, 2147483648, 0x5a5a5a5a]),
    "u64": ([0b1100, "18446744073709551615", "9223372036854775808", 0x5555555555555555, "9223372036854775807", "12297829382473034410"],
            [0b1010, 0x3c3c3c3c3c3c3c3c, "18446744073709551615", 0x0ff00ff00ff00ff0, "9223372036854775808", 0x5a5a5a5a5a5a5a5a]),
}
SHIFT = {  # in-range amounts; out-of-range ones are pinned separately
    "s8": ([1, -8, 0x55, -128, 127, -1], [3, 1, 2, 7, 6, 5]),
    "s16": ([1, -8, 0x5555, -32768, 32767, -1], [3, 1, 2, 15, 14, 9]),
    "s32": ([1, -8, 0x55555555, -2147483648, 2147483647, -1], [3, 1, 2, 31, 30, 17]),
    "s64": ([1, -8, 0x5555555555555555, "-9223372036854775808", "9223372036854775807", -1], [3, 1, 2, 63, 62, 33]),
    "u8": ([1, 248, 0x55, 128, 127, 255], [3, 1, 2, 7, 6, 5]),
    "u16": ([1, 65528, 0x5555, 32768, 32767, 65535], [3, 1, 2, 15, 14, 9]),
    "u32": ([1, 4294967288, 0x55555555, 2147483648, 2147483647, 4294967295], [3, 1, 2, 31, 30, 17]),
    "u64": ([1, "18446744073709551608", 0x5555555555555555, "9223372036854775808", "9223372036854775807", "18446744073709551615"],
            [3, 1, 2, 63, 62, 33]),
}

def src_for(op, t):
    if t == "pred": return SRC_PRED
    if t in INTS: return SRC_BITS if op in ("And", "Or", "Xor", "LogicalAnd", "LogicalOr") or op.startswith("Shift") else SRC_INT
    if t in COMPLEX: return SRC_CPLX
    return SRC_FLOAT

def gen():
    F = "elementwise/arith_{}.json"
    for op in ["Add", "Sub", "Mul", "Max", "Min"]:
        for t in ALL:
            if op == "Sub" and t == "pred": continue
            if op in ("Max", "Min") and t in COMPLEX: continue
            x, y = ARITH[t]
            dims = [2, 3] if len(x) == 6 else [len(x)]
            e = nest(hand(op, t, x, y), dims)
            binop(F.format(op.lower()), f"elementwise/{op.lower()}/{t}", op, t, nest(x, dims), nest(y, dims), dims, e, src_for(op, t))
    for op in ["Div", "Rem"]:
        for t in ALL:
            if t == "pred" or (op == "Rem" and t in COMPLEX): continue
            x, y = DIVREM[t]
            e = hand(op, t, x, y)
            binop(F.format("div_rem"), f"elementwise/{op.lower()}/{t}", op, t, x, y, None, e, src_for(op, t))
    for t in ALL:
        if t == "pred": continue
        if t in INTS:
            x, y = POWI[t]
            binop(F.format("pow"), f"elementwise/pow/{t}", "Pow", t, x, y, None, hand("Pow", t, x, y),
                  "hand-derived: repeated multiplication, wrapping; checked on " + XLA)
        elif t in COMPLEX:
            pass  # below
        else:
            x, y = POWF
            binop(F.format("pow"), f"elementwise/pow/{t}", "Pow", t, x, y, None, hand("Pow", t, x, y), SRC_TRANS, tol={"ulp": 2})
    for t in FLOATS:
        x, y = ATAN2
        binop(F.format("atan2_complex"), f"elementwise/atan2/{t}", "Atan2", t, x, y, None, hand("Atan2", t, x, y), SRC_TRANS, tol={"ulp": 2})
    for t, ct in (("f32", "c64"), ("f64", "c128")):
        x = [1.5, -0.0, "inf", 0.1, "nan", -3]; y = [2, 1, -0.0, 0.2, 5, "-inf"]
        e = [[a, b] for a, b in zip(x, y)]
        binop(F.format("atan2_complex"), f"elementwise/complex/{t}", "Complex", t, x, y, None, e,
              "hand-derived: Complex(lhs, rhs) = lhs + rhs·i, parts kept bit for bit; checked on " + XLA)
    for op in ["And", "Or", "Xor"]:
        for t in ["pred"] + INTS:
            x, y = ARITH["pred"] if t == "pred" else BITW[t]
            binop(F.format("bitwise"), f"elementwise/{op.lower()}/{t}", op, t, x, y, None, hand(op, t, x, y), src_for(op, t))
    for op in ["LogicalAnd", "LogicalOr"]:
        for t in ["pred", "s32", "u8"]:
            x, y = ARITH["pred"] if t == "pred" else BITW[t]
            binop(F.format("bitwise"), f"elementwise/{op[0].lower() + op[1:]}/{t}", op, t, x, y, None, hand(op, t, x, y),
                  "docs/format.md §3: LogicalAnd/LogicalOr are aliases of And/Or; " + src_for(op, t))
    for op in ["ShiftLeft", "ShiftRightArithmetic", "ShiftRightLogical"]:
        for t in INTS:
            x, y = SHIFT[t]
            binop(F.format("shifts"), f"elementwise/{op[0].lower() + op[1:]}/{t}", op, t, x, y, None, hand(op, t, x, y), src_for(op, t))

if __name__ == "__main__":
    gen()
    write_all()
