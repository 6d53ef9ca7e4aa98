"""Section 3: pinned numerics (XLA CPU's choices where the document is silent or says implementation defined)."""
from case import *
from ref import *
from sec_arith import binop, hand

DEC = " (docs/semantics-decisions.md)"
def xsrc(what): return f"{XLA}: {what}; hand-derived from the rule{DEC}"
FI = "elementwise/int_corners.json"
FF = "elementwise/float_corners.json"
FC = "elementwise/complex_corners.json"

def mn(t): return str(imin(t)) if ibits(t) == 64 else imin(t)
def mx(t): return str(imax(t)) if ibits(t) == 64 else imax(t)

def gen():
    # --- integer overflow wraps -------------------------------------------
    ovf = [
        ("add", "s8", [127, -128, 100, -100], [1, -1, 100, -100]),
        ("sub", "s8", [-128, 127, 0, -100], [1, -1, -128, 100]),
        ("mul", "s8", [16, 100, -128, 127], [16, 3, -1, 127]),
        ("add", "s16", [32767, -32768, 20000], [1, -1, 20000]),
        ("mul", "s16", [256, 181, -32768], [256, 182, -1]),
        ("add", "s32", [2147483647, -2147483648, 2000000000], [1, -1, 2000000000]),
        ("mul", "s32", [65536, 2147483647, -2147483648, 46341], [65536, 2, -1, 46341]),
        ("sub", "s64", ["-9223372036854775808", "9223372036854775807"], [1, -1]),
        ("mul", "s64", [4294967296, "9223372036854775807", "-9223372036854775808", 3037000500], [4294967296, 2, -1, 3037000500]),
        ("add", "u8", [255, 200, 128], [1, 100, 128]),
        ("sub", "u8", [0, 5, 0], [1, 10, 255]),
        ("mul", "u8", [16, 255, 17], [16, 255, 17]),
        ("sub", "u16", [0, 1], [1, 65535]),
        ("add", "u32", [4294967295, 3000000000], [1, 3000000000]),
        ("mul", "u32", [65536, 4294967295], [65536, 4294967295]),
        ("add", "u64", ["18446744073709551615", "10000000000000000000"], [1, "10000000000000000000"]),
        ("sub", "u64", [0, 1], [1, 2]),
        ("mul", "u64", [4294967296, "18446744073709551615"], [4294967296, "18446744073709551615"]),
    ]
    for o, t, x, y in ovf:
        op = o.capitalize()
        binop(FI, f"elementwise/{o}/{t}_overflow_wraps", op, t, x, y, None, hand(op, t, x, y),
              xsrc("integer overflow wraps around (two's complement, modulo 2^bits)"))
    # --- division corners ---------------------------------------------------
    for t in INTS:
        if signed(t):
            x = [7, -7, 0, mn(t), mn(t), mx(t), mn(t), -1]
            y = [0, 0, 0, -1, 1, -1, mn(t), mn(t)]
        else:
            x = [7, 0, mx(t), mx(t), 1]
            y = [0, 0, 0, mx(t), mx(t)]
        for op in ("Div", "Rem"):
            what = ("x / 0 = -1 (all bits set), INT_MIN / -1 = INT_MIN" if op == "Div" else "x % 0 = x, INT_MIN % -1 = 0") \
                if signed(t) else ("x / 0 = UINT_MAX (all bits set)" if op == "Div" else "x % 0 = x")
            binop(FI, f"elementwise/{op.lower()}/{t}_by_zero" + ("_and_overflow" if signed(t) else ""), op, t, x, y, None, hand(op, t, x, y),
                  f"{XLA}: implementation-defined integer division corners: {what}{DEC}", impl=True)
    # --- shifts out of range ------------------------------------------------
    for t in INTS:
        n = ibits(t)
        if signed(t):
            x = [1, -1, mn(t), -8, 5, 0x55, -3, 1]
            y = [n, n + 1, -1, n - 1, mn(t), 127, n * 2, 1 << (n - 2) if n < 64 else 1 << 40]
        else:
            um = mx(t)
            x = [1, um, 1 << (n - 1) if n < 64 else "9223372036854775808", 8, 5, 0x55, 3, 1]
            y = [n, n + 1, um, n - 1, 1 << (n - 1) if n < 64 else "9223372036854775808", 127, n * 2, 1 << (n - 2) if n < 64 else 1 << 40]
        for op in ("ShiftLeft", "ShiftRightArithmetic", "ShiftRightLogical"):
            rule = {"ShiftLeft": "gives 0", "ShiftRightArithmetic": "gives 0 or -1 by the sign", "ShiftRightLogical": "gives 0"}[op]
            binop(FI, f"elementwise/{op[0].lower() + op[1:]}/{t}_amount_out_of_range", op, t, x, y, None, hand(op, t, x, y),
                  f"{XLA}: the shift amount is read as unsigned; an amount >= the bit width (negative ones included) {rule}{DEC}")
    # --- integer Pow with negative exponents --------------------------------
    for t in ["s8", "s16", "s32", "s64"]:
        x = [0, 1, -1, -1, 2, -2, 5, -1, 1, mx(t)]
        y = [-1, -5, -1, -2, -1, -3, -2, mn(t), mn(t), -1]
        binop(FI, f"elementwise/pow/{t}_negative_exponent", "Pow", t, x, y, None, hand("Pow", t, x, y),
              xsrc("integer Pow with a negative exponent is 0, except Pow(1, n) = 1 and Pow(-1, n) = ±1"))
    POW6 = ("XLA CPU's integer Pow looks only at the low 6 bits of the exponent (exponentiation by squaring unrolled 6 times) "
            "and reads an unsigned exponent with the top bit set as negative; the document's Pow is the power, so the "
            "case keeps base^exponent modulo 2^bits (docs/semantics-decisions.md)")
    PSRC = "hand-derived: integer Pow is base^exponent modulo 2^bits (repeated multiplication, wrapping); XLA CPU deviates for exponents >= 64 and unsigned exponents >= 2^(bits-1)" + DEC
    for t in ["u8", "u16", "u32", "u64"]:
        x = [2, 1, 3, 0, 0, mx(t), 3, 5]
        y = [mx(t), mx(t), mx(t), 0, mx(t), mx(t), 1 << (ibits(t) - 1) if ibits(t) < 64 else "9223372036854775808", 64]
        binop(FI, f"elementwise/pow/{t}_huge_exponent", "Pow", t, x, y, None, hand("Pow", t, x, y), PSRC, override=POW6)
    for t in ["s16", "s32", "s64"]:
        x = [3, 2, -3, 3, 5, -1, 3]
        y = [65, 64, 100, 63, 64, mx(t), 1000]
        binop(FI, f"elementwise/pow/{t}_exponent_above_63", "Pow", t, x, y, None, hand("Pow", t, x, y), PSRC, override=POW6)
    x = [2, 3, -2, 10]; y = [7, 5, 7, 3]
    binop(FI, "elementwise/pow/s8_overflow_wraps", "Pow", "s8", x, y, None, hand("Pow", "s8", x, y),
          xsrc("integer Pow multiplies, wrapping"))

    # --- float Max/Min with NaN and signed zeros -----------------------------
    for t in FLOATS:
        inf = "inf" if t != "f8e4m3fn" else 448
        ninf = "-inf" if t != "f8e4m3fn" else -448
        x = ["nan", 1, "-0", 0, "nan", ninf, 2, "-nan", "-0", 0]
        y = [1, "nan", 0, "-0", "nan", inf, ninf, 3, "-0", 0]
        for op in ("Max", "Min"):
            binop(FF, f"elementwise/{op.lower()}/{t}_nan_and_signed_zeros", op, t, x, y, None, hand(op, t, x, y),
                  xsrc(f"{op} propagates NaN from either side and orders -0 < +0 in either order (IEEE 754-2019 {'maximum' if op == 'Max' else 'minimum'})"))
    # --- Pow corners ----------------------------------------------------------
    P = [(0, 0, 1), (0, -1, "inf"), ("-0", -1, "-inf"), ("-0", -2, "inf"), ("-0", 3, "-0"), ("-0", 2, 0),
         (-8, 1 / 3, "nan"), (1, "nan", 1), ("nan", 0, 1), ("nan", "-0", 1), (-1, "inf", 1), (-1, "-inf", 1),
         ("inf", 2, "inf"), ("inf", -1, 0), ("-inf", 3, "-inf"), ("-inf", 2, "inf"), ("-inf", -3, "-0"), ("-inf", -2, 0),
         (0, "-inf", "inf"), ("-0", "-inf", "inf"), (2, "inf", "inf"), (0.5, "inf", 0), (2, "-inf", 0), (0.5, "-inf", "inf"),
         ("nan", 1, "nan"), (2, "nan", "nan"), (-2, 3, -8), (-2, 0.5, "nan"), (0, "inf", 0), (1, "inf", 1),
         (0, -0.5, "inf"), ("-0", -0.5, "inf"), ("-0", 0.5, 0), ("-inf", 0.5, "inf"), ("-inf", -0.5, 0), (-1, 0.5, "nan"), (-2, -2, 0.25)]
    for t in ["f16", "bf16", "f32", "f64"]:
        binop(FF, f"elementwise/pow/{t}_special_values", "Pow", t, [p[0] for p in P], [p[1] for p in P], None, [p[2] for p in P],
              xsrc("Pow follows C99 pow: 0^0 = 1, 0^-1 = +inf, -0^-1 = -inf, (-8)^(1/3) = NaN, 1^NaN = 1, NaN^0 = 1, (-1)^±inf = 1, infinite bases by the sign and parity of the exponent"))
    # --- Rem (fmod) corners ------------------------------------------------
    R = [(5.5, "inf"), (-5.5, "-inf"), ("inf", 2), ("-inf", 2), (1, 0), (0, 0), ("-0", 3), (0, -3), (-6, 3), (6, -4),
         (-7.5, 2), ("nan", 1), (1, "nan"), (3, 0.2), (1, "-0"), ("inf", "inf"), (-1, 3), (1000, 0.75)]
    for t in ["f16", "bf16", "f32", "f64", "f8e5m2"]:
        RR = R + ([(1e30, 3)] if t in ("f32", "bf16") else [(1e300, 3)] if t == "f64" else [])
        x = [r[0] for r in RR]; y = [r[1] for r in RR]
        binop(FF, f"elementwise/rem/{t}_special_values", "Rem", t, x, y, None, hand("Rem", t, x, y),
              xsrc("Rem is C's fmod: exact, the sign of the dividend; Rem(x, ±0) = NaN, Rem(±inf, y) = NaN, Rem(x, ±inf) = x"))
    # --- Atan2 signed zeros and infinities ------------------------------------
    A = [(0, 0), ("-0", 0), (0, "-0"), ("-0", "-0"), (0, -1), ("-0", -1), (0, 1), ("-0", 1), (1, 0), (-1, "-0"),
         (1, "inf"), (-1, "inf"), (1, "-inf"), (-1, "-inf"), ("inf", 1), ("-inf", -1), ("nan", 1), (1, "nan")]
    A2 = [("inf", "inf"), ("inf", "-inf"), ("-inf", "inf"), ("-inf", "-inf")]
    def atan2_exact(a, b):
        fa = float_elem_to_np(a, "f64"); fb = float_elem_to_np(b, "f64")
        return math.atan2(float(fa), float(fb))
    for t in ["bf16", "f32", "f64"]:
        x = [a for a, b in A + A2]; y = [b for a, b in A + A2]
        e = [fmt_elem(rnd(atan2_exact(a, b), t), t) for a, b in A + A2]
        binop(FF, f"elementwise/atan2/{t}_signed_zeros_and_infinities", "Atan2", t, x, y, None, e,
              xsrc("Atan2 follows C99 atan2: atan2(±0, +0) = ±0, atan2(±0, -0) = ±π, atan2(±0, x<0) = ±π, atan2(±y, +inf) = ±0, ±π/4 and ±3π/4 for infinite pairs; values are π-multiples correctly rounded"))
    # --- subnormals are kept (XLA CPU flushes them) ---------------------------
    ftz = "XLA CPU flushes subnormals to zero; the document's IEEE semantics keep them (docs/semantics-decisions.md)"
    sub_src = "hand-derived: IEEE 754 gradual underflow (subnormals are kept; XLA CPU flushes them to zero, a backend deviation)" + DEC
    binop(FF, "elementwise/add/f32_subnormal", "Add", "f32", ["0x00000001", "0x00000001", "0x00800000", "0x807fffff"], ["0x00000001", 0, "0x80000001", "0x00000001"], None,
          ["0x00000002", "0x00000001", "0x007fffff", "0x807ffffe"], sub_src, override=ftz)
    binop(FF, "elementwise/mul/f32_subnormal", "Mul", "f32", [1e-20, "0x00800000", "0x00000003"], [1e-20, 0.5, 0.5], None,
          [fmt_elem(rnd(float(np.float32(1e-20)) ** 2, "f32"), "f32"), "0x00400000", "0x00000002"], sub_src, override=ftz)
    binop(FF, "elementwise/max/f32_subnormal", "Max", "f32", ["0x00000001", "0x80000001"], [0, "-0"], None,
          ["0x00000001", "-0"], sub_src, override=ftz)
    binop(FF, "elementwise/sub/f64_subnormal", "Sub", "f64", ["0x0010000000000001", 5e-324], ["0x0010000000000000", -5e-324], None,
          [5e-324, 1e-323], sub_src, override=ftz)
    binop(FF, "elementwise/div/f16_subnormal", "Div", "f16", ["0x0400", "0x0001", 0.5, "0x0003"], [2, 2, 32768, 2], None,
          ["0x0200", 0, "0x0100", "0x0002"], "hand-derived: IEEE 754 gradual underflow in f16, ties to even (2^-25 rounds to 0, 3·2^-25 to 2^-23)" + DEC)

    # --- IEEE special values of + - * / ----------------------------------------
    IEEE = "hand-derived: IEEE 754 arithmetic on special values (inf - inf = NaN, 0·inf = NaN, x/±0 = ±inf, signed zeros, overflow to inf); checked on " + XLA
    SV = {
        "Add": (["inf", "inf", "-0", "-0", 0, 1, "nan", "-inf"], ["-inf", 1, "-0", 0, "-0", -1, 1, "-inf"]),
        "Sub": (["inf", "inf", "-0", 0, 1, "-0", "nan", "-inf"], ["inf", "-inf", 0, 0, 1, "-0", "nan", 5]),
        "Mul": ([0, "-0", "inf", "-inf", -1, "-0", "nan", 2], ["inf", 5, -2, "-0", 0, "-0", 0, "-inf"]),
        "Div": ([1, -1, 0, "-0", "inf", 1, -1, "nan"], [0, 0, 0, 3, "inf", "-inf", "inf", 1]),
    }
    for t in ["f16", "bf16", "f32", "f64"]:
        for op, (x, y) in SV.items():
            binop(FF, f"elementwise/{op.lower()}/{t}_special_values", op, t, x, y, None, hand(op, t, x, y), IEEE)
    big = {"f16": 65504, "bf16": 3.3895314e38, "f32": 3.4028235e38, "f64": 1.7976931348623157e308}
    for t in ["f16", "bf16", "f32", "f64"]:
        x = [big[t], -big[t], big[t], big[t]]; y = [big[t], big[t], 2, 0.5]
        binop(FF, f"elementwise/mul/{t}_overflow", "Mul", t, x, y, None, hand("Mul", t, x, y),
              "hand-derived: IEEE 754 overflow rounds to ±inf; checked on " + XLA)
    binop(FF, "elementwise/mul/f8e4m3fn_overflow_is_nan", "Mul", "f8e4m3fn", [448, -448, 256, 256, 0.5], [2, 2, 1.75, 1.875, "nan"], None,
          ["nan", "-nan", 448, "nan", "nan"],
          "hand-derived: f8e4m3fn has no infinity; a result that rounds beyond the largest finite value 448 (480 and up) is NaN (docs/semantics-decisions.md, ConvertElementType to f8); checked on " + XLA)
    binop(FF, "elementwise/add/f8e5m2_overflow_is_inf", "Add", "f8e5m2", [57344, -57344, 57344, 49152, 57344], [8192, -8192, 4096, 4096, 2048], None,
          hand("Add", "f8e5m2", [57344, -57344, 57344, 49152, 57344], [8192, -8192, 4096, 4096, 2048]),
          "hand-derived: f8e5m2 is IEEE-like: a sum from 61440 up (the midpoint between 57344 and 2^16, a tie going to the even 2^16) rounds to inf; 59392 rounds to 57344 and 53248 to the even 49152; checked on " + XLA)
    # --- complex -------------------------------------------------------------
    mk(FC, "elementwise/mul/c64_no_fused_multiply_add",
       "hand-derived: complex Mul is (ac - bd) + (ad + bc)i with each product and sum rounded once in the part type (here ad = -bc exactly, so the imaginary part is 0; c64 parts computed exactly and rounded once)" + DEC,
       [("x", "c64[2]"), ("y", "c64[2]")], [{"name": "r", "op": "Mul", "operands": ["x", "y"]}],
       [[[1e20, 1e20], [0.1, 0.1]], [[1e10, -1e10], [0.1, -0.1]]],
       expected={"shape": "c64[2]", "value": [[fmt_elem(rnd(2 * float(np.float32(1e20)) * float(np.float32(1e10)), "f32"), "f32"), 0],
                                              [fmt_elem(rnd(2 * float(np.float32(0.1)) ** 2, "f32"), "f32"), 0]]},
       override="XLA CPU contracts the complex product into fused multiply-adds, so ad + bc keeps the rounding error of one product (4.99e21 and -4.1e-10 instead of 0)")
    mk(FC, "elementwise/mul/c128_infinities",
       "hand-derived: complex Mul is the textbook (ac - bd) + (ad + bc)i, no C99 Annex G recovery: (inf + 0i)(1 + 0i) = inf + NaN·i" + DEC + "; checked on " + XLA,
       [("x", "c128[3]"), ("y", "c128[3]")], [{"name": "r", "op": "Mul", "operands": ["x", "y"]}],
       [[["inf", 0], ["inf", 1], ["nan", 0]], [[1, 0], [1, 1], [1, 0]]],
       expected={"shape": "c128[3]", "value": [["inf", "nan"], ["inf", "inf"], ["nan", "nan"]]})
    mk(FC, "elementwise/complex/f32_scalar_imaginary_part", "hand-derived: Complex(lhs, rhs) = lhs + rhs·i, the scalar broadcast; checked on " + XLA,
       [("x", "f32[3]"), ("y", "f32[]")], [{"name": "r", "op": "Complex", "operands": ["x", "y"]}], [[1, -2.5, "-0"], -1],
       expected={"shape": "c64[3]", "value": [[1, -1], [-2.5, -1], ["-0", -1]]})
    mk(FC, "elementwise/complex/f64_matrix_real_vector_imaginary", "hand-derived: Complex with broadcast_dimensions; checked on " + XLA,
       [("x", "f64[2,2]"), ("y", "f64[2]")], [{"name": "r", "op": "Complex", "operands": ["x", "y"], "broadcast_dimensions": [0]}],
       [[[1, 2], [3, 4]], [0.5, "nan"]],
       expected={"shape": "c128[2,2]", "value": [[[1, 0.5], [2, 0.5]], [[3, "nan"], [4, "nan"]]]})
    DC = "C99 complex division (Annex G __divdc3): scaled, recovers infinities and zeros"
    d128 = [([1, 1], [0, 0], ["inf", "inf"]), ([-1, 0], [0, 0], ["-inf", "nan"]), ([0, 0], [0, 0], ["nan", "nan"]),
            ([1, 0], [0, "-0"], ["inf", "nan"]),
            ([1e300, 1e300], [1e300, 1e300], [1, 0]), ([1e300, -1e300], [1e-300, 1e-300], [0, "-inf"]),
            (["inf", 0], [1, 1], ["inf", "-inf"]), ([1, 1], ["inf", 0], [0, 0]), ([-1, 1], ["-inf", "inf"], [0, 0]),
            (["nan", 0], [1, 0], ["nan", "nan"]), ([1e-300, 1e-300], [1e300, 1e300], [0, 0])]
    for t, dd in (("c128", d128),
                  ("c64", [(a, b, e) if not (isinstance(b[0], float) and abs(b[0]) in (1e-300, 1e300)) else
                           (a, [1e-30 if abs(v) == 1e-300 else (1e30 if v > 0 else -1e30) for v in b], e) for a, b, e in d128])):
        if t == "c64":
            dd = [(a if not any(isinstance(v, float) and abs(v) in (1e-300, 1e300) for v in a) else
                   [math.copysign(1e-30 if abs(v) == 1e-300 else 1e30, v) for v in a], b, e) for a, b, e in dd]
        x = [a for a, b, e in dd]; y = [b for a, b, e in dd]
        e = [ee if ee is not None else fmt_elem(complex_op("Div", t, *[to_np([v], f"{t}[1]")[0] for v in (a, b)]), t) for a, b, ee in dd]
        binop(FC, f"elementwise/div/{t}_special_values", "Div", t, x, y, None, e, xsrc(DC))
    for t, tiny, big in (("c128", 1e-300, 1e300), ("c64", 1e-30, 1e30)):
        x = [[1, 0], [1, 2], [big, big], [-3, 1]]
        y = [[tiny, tiny], [3 * tiny, 4 * tiny], [tiny, -tiny], [2, -5]]
        e = [fmt_elem(complex_op("Div", t, *[to_np([v], f"{t}[1]")[0] for v in (a, b)]), t) for a, b in zip(x, y)]
        binop(FC, f"elementwise/div/{t}_tiny_and_huge_denominators", "Div", t, x, y, None, e,
              "hand-derived: the exact quotient correctly rounded (mpmath); checked on " + XLA +
              "; complex division is not correctly rounded in general (C99 __divdc3 rounds several times), hence 2 ulp; no intermediate overflow or underflow",
              tol={"ulp": 2})
    # complex Pow
    for t in COMPLEX:
        x = [[1, 2], [3, 4], [2, 0], [1, 1], [0, 1], [2, 0], [-8, 0], [1.5, -0.5]]
        y = [[0.5, 0], [2, 0], [0, 1], [1, 1], [0, 1], [3, 0], [1 / 3, 0], [-1, 2]]
        e = hand("Pow", t, x, y)
        binop(FC, f"elementwise/pow/{t}", "Pow", t, x, y, None, e,
              "hand-derived: principal value exp(b·log a), correctly rounded (mpmath); checked on " + XLA + " within the tolerance",
              tol={"ulp": 8})
        binop(FC, f"elementwise/pow/{t}_zero_base_zero_exponent", "Pow", t, [[0, 0], [0, 0], [0, 0], ["-0", "-0"]], [[0, 0], ["-0", 0], [0, "-0"], [0, 0]], None,
              [[1, 0]] * 4, xsrc("complex Pow(0, 0) = 1, whatever the signs of the zeros"))
        binop(FC, f"elementwise/pow/{t}_zero_base_positive_real_exponent", "Pow", t, [[0, 0], [0, 0], [0, 0], ["-0", 0], [0, 0]],
              [[1, 0], [2, 0], [0.5, 0], [1, 0], [3, 0]], None, [[0, 0]] * 5,
              f"{XLA}: complex Pow(0, b) = 0 for a real b > 0; also C99 (cexp(-inf + NaN·i) = ±0 ± 0i, Annex G)",
              known_failing="xlaref gives (NaN, NaN): cx::pow computes exp(b·log 0) = exp((1+0i)·(-inf+0i)) = exp(-inf + NaN·i) "
                            "and cx::exp returns e^x·cos(y) = 0·NaN = NaN instead of C99 Annex G's cexp(-inf ± NaN·i) = ±0 ± 0i; XLA CPU gives (0, 0)")

if __name__ == "__main__":
    gen(); write_all()
