#!/usr/bin/env python3
"""Generates the ConvertElementType oracle cases (oracle-cases/convert/*.json).

Every pair of the 17 element types is one case: a vector of representative
values of the source type converted to the target type, with the expected
values computed by XLA's CPU backend (tools/xla_run_hlo.py) and compared
with an independent exact model of docs/semantics-decisions.md; every
difference is printed. Complex -> pred crashes XLA CPU (segfault), so those
two pairs are hand-derived and never run on XLA. Named corner cases follow.

Run: python3 oracle-cases/convert/generate.py   (needs jax, ml_dtypes, mpmath)
"""
import math
import os
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unary"))
from casegen import *  # noqa: E402,F401,F403

HERE = os.path.dirname(os.path.abspath(__file__))
DIFFS = []


def note(msg):
    DIFFS.append(msg)
    print(msg, file=sys.stderr)


def is_nan(v):
    return isinstance(v, Special) and v.name in ("nan", "-nan")


def is_zero(v):
    return v == NZERO or (isinstance(v, Fraction) and v == 0)


# ---------------------------------------------------------------------------
# The exact model of ConvertElementType (docs/semantics-decisions.md)

def real_value(src, x):
    """The value a source element converts from: pred/int -> Fraction,
    float -> Fraction/Special, complex -> its real part."""
    if src == "pred":
        return Fraction(int(x))
    if src in INTS:
        return Fraction(x)
    if src in COMPLEX:
        return x[0]
    return x


def model(src, dst, x):
    """x: the exact source element (bool, int, Fraction/Special, or a pair)."""
    if dst == "pred":
        if src in COMPLEX:
            return not (is_zero(x[0]) and is_zero(x[1]))
        v = real_value(src, x)
        return not is_zero(v)  # NaN is true
    if dst in COMPLEX:
        c = COMPLEX[dst]
        if src in COMPLEX:
            return (to_float_type(src, c, x[0]), to_float_type(src, c, x[1]))
        return (to_float_type(src, c, real_value(src, x)), Fraction(0))
    v = real_value(src, x)
    if dst in INTS:
        lo, hi = int_range(dst)
        if src in ("pred",) or src in INTS:
            return wrap(dst, int(v))
        if is_nan(v):
            return 0
        if isinstance(v, Special):
            return {"inf": hi, "-inf": lo, "-0": 0}[v.name]
        n = int(v)  # truncation toward zero
        return max(lo, min(hi, n))
    return to_float_type(src, dst, v)


def to_float_type(src, dst, v):
    """A real value into a float type: bf16 from a float type wider than f32
    is rounded to f32 first; integers (the document: round to nearest even),
    f16 and f8 once. XLA CPU rounds s32/s64/u32/u64 → bf16 through f32
    (deviation D15): this model reports those cases as differences, and their
    expected values in from_s64.json, from_u64.json and corners.json were
    corrected by hand to the single rounding."""
    if isinstance(v, Special):
        if dst == "f8e4m3fn" and v.name in ("inf", "-inf"):
            return NAN
        return v
    if dst == "bf16" and src in ("f64", "c128"):
        v = round_exact("f32", v)
        if isinstance(v, Special):
            return v
    r = round_exact(dst, v)
    return r


# ---------------------------------------------------------------------------
# Values of each source type

def F(x):
    return exact(x)


def R(t, x):
    return round_exact(t, exact(x)) if isinstance(exact(x), Fraction) else exact(x)


SOURCE = {
    "pred": [False, True],
    "s8": [0, 1, -1, 127, -128, 100, -100, 42, -3],
    "s16": [0, 1, -1, 32767, -32768, 300, -300, 2049, 255, 256, -129],
    "s32": [0, 1, -1, 2**31 - 1, -2**31, 16777217, 300, -200, 65537, 2049, -129, 33554435, 65520, 464],
    "s64": [0, 1, -1, 2**63 - 1, -2**63, 2**40 + 2**32 + 1, 2**53 + 1, 300, -70000, 2**32 + 1, 2**24 + 1, -(2**62 + 2**38 + 1),
            65519],
    "u8": [0, 1, 255, 128, 200, 127],
    "u16": [0, 1, 65535, 32768, 300, 2049, 65520],
    "u32": [0, 1, 2**32 - 1, 2**31, 16777217, 300, 65537, 2**31 + 2**7 + 1],
    "u64": [0, 1, 2**64 - 1, 2**63, 2**53 + 1, 2**40 + 2**32 + 1, 300, 2**32 + 1, 2**63 + 2**55 + 1],
}
FLOAT_SOURCE = {
    "f16": [0.0, -0.0, 1, -1, 0.5, -2.5, 1.5, 0.3, 65504, -65504, math.inf, -math.inf, math.nan, 300.7, -129.5, 1000,
            2.5, 2**-24, -0.9, 255.9, 464, 57344 / 2**4],
    "bf16": [0.0, -0.0, 1, -1, 0.5, -2.5, 1.5, 0.3, 2**128 - 2**120, -(2**128 - 2**120), math.inf, -math.inf, math.nan,
             3e9, -3e9, 65536, 1e20, 300.5, -0.9, 1e-20, 2**63, -2**63],
    "f32": [0.0, -0.0, 1, -1, 2.5, -2.5, 0.7, -0.7, 3e9, -3e9, 1e20, -1e20, math.inf, -math.inf, math.nan, 65519, 65520,
            448, 464, 465, 1 + 2**-8, 1 + 2**-8 + 2**-16, 300.5, -129.7, 2**31, -2**31, 2**32, 1e-30, 57344, 61440,
            2**128 - 2**104, 16777216, 0.3, 2**-24, 2**-10],
    "f64": [0.0, -0.0, 1, -1, 2.5, -2.5, 0.7, -0.7, 3e9, -3e9, 1e20, math.inf, -math.inf, math.nan, 65519, 65520, 465,
            1 + 2**-8 + 2**-40, 1 + 2**-11 + 2**-40, 1 + 2**-4 + 2**-40, 1e300, -1e300, 2**63, -2**63, 2**64,
            9.3e18, 0.1, 1e-300, 2**31 - 0.5, -2**31 - 0.5, 2**128 - 2**103, 3.4028235677973366e38],
    "f8e4m3fn": [0.0, -0.0, 1, -1, 0.5, 1.5, 2.5, -3.5, 448, -448, math.nan, 2**-9, 240, 0.875, 13, -20, 7 * 2**-9],
    "f8e5m2": [0.0, -0.0, 1, -1, 0.5, 1.5, 2.5, -3.5, 57344, -57344, math.inf, -math.inf, math.nan, 2**-16, 0.75, 12,
               -20, 3 * 2**-16],
}
COMPLEX_SOURCE = {
    "c64": [(0.0, 0.0), (1, 0.0), (-1, 2), (2.5, -3.7), (-0.7, 0.5), (3e9, 1), (math.nan, 0.0), (math.inf, -math.inf),
            (65520, 0.0), (0.0, 5), (-0.0, -0.0), (300.5, -1e20), (-129.9, 0.0), (1 + 2**-8 + 2**-16, 7)],
    "c128": [(0.0, 0.0), (1, 0.0), (-1, 2), (2.5, -3.7), (-0.7, 0.5), (3e9, 1), (math.nan, 0.0), (math.inf, -math.inf),
             (65520, 0.0), (0.0, 5), (-0.0, -0.0), (1e300, -1e-300), (-129.9, 0.0), (1 + 2**-8 + 2**-40, 7),
             (1 + 2**-4 + 2**-40, 0.1)],
}


def source_values(t):
    if t in SOURCE:
        return [wrap(t, v) if t != "pred" else v for v in SOURCE[t]]
    if t in COMPLEX:
        c = COMPLEX[t]
        return [(R(c, a), R(c, b)) for a, b in COMPLEX_SOURCE[t]]
    out = []
    for x in FLOAT_SOURCE[t]:
        v = R(t, x)
        if isinstance(v, Special) and t == "f8e4m3fn" and v.name in ("inf", "-inf"):
            continue
        out.append(v)
    return out


def np_value(t, v):
    if t == "pred":
        return bool(v)
    if t in INTS:
        return v
    if t in COMPLEX:
        return complex(to_float(v[0]), to_float(v[1]))
    return np_scalar(t, v)


def from_np(t, x):
    if t == "pred":
        return bool(x)
    if t in INTS:
        return int(x)
    if t in COMPLEX:
        c = COMPLEX[t]
        return (value_of(c, np.real(x)), value_of(c, np.imag(x)))
    return value_of(t, x)


def json_value(t, v):
    if t == "pred":
        return bool(v)
    if t in INTS:
        return enc_int(v)
    if t in COMPLEX:
        c = COMPLEX[t]
        return [enc_float(c, v[0]), enc_float(c, v[1])]
    return enc_float(t, v)


def same(t, a, b):
    if t in COMPLEX:
        return same(COMPLEX[t], a[0], b[0]) and same(COMPLEX[t], a[1], b[1])
    if is_nan(a) or is_nan(b):
        return is_nan(a) and is_nan(b)
    return a == b


def xla_convert(src, dst, values, dims):
    arr = np.array([np_value(src, v) for v in values], dtype=NP[src]).reshape(dims)
    text = (f"HloModule m\nENTRY e {{\n  p = {shape_text(src, dims)} parameter(0)\n"
            f"  ROOT r = {shape_text(dst, dims)} convert(p)\n}}")
    return run_hlo(text, [arr])[0].reshape(-1)


def convert_module(src, dst, dims, declared=None):
    instr = {"name": "r", "op": "ConvertElementType", "operands": ["x"], "new_element_type": dst}
    if declared:
        instr["shape"] = declared
    return {"computations": {"main": {"params": [{"name": "x", "shape": shape_text(src, dims)}],
                                      "instructions": [instr]}}}


CASES = {}


def emit(file, c):
    CASES.setdefault(file, []).append(c)


def convert_case(file, name, src, dst, values, expected=None, comment=None, xla=True, dims=None, source=None,
                 implementation_defined=False, allow_xla_diff=None):
    """Expected: XLA's result (checked against the model), or given."""
    dims = dims if dims is not None else [len(values)]
    if src in FLOATS:
        values = [R(src, v) for v in values]
    elif src in COMPLEX:
        values = [(R(COMPLEX[src], a), R(COMPLEX[src], b)) for a, b in values]
    modeled = [model(src, dst, v) for v in values]
    if xla:
        got = [from_np(dst, g) for g in xla_convert(src, dst, values, dims)]
        for i, (v, m, g) in enumerate(zip(values, modeled, got)):
            if not same(dst, m, g):
                msg = f"{name}: {src}->{dst} input {v!r}: model {m!r}, XLA {g!r}"
                if allow_xla_diff:
                    note(f"(kept the model: {allow_xla_diff}) {msg}")
                else:
                    note("DIFF " + msg)
        if expected is None:
            expected = got if not allow_xla_diff else modeled
    if expected is None:
        expected = modeled
    for i, (m, e) in enumerate(zip(modeled, expected)):
        if not same(dst, m, e):
            note(f"EXPECTED != MODEL {name}: {src}->{dst} input {values[i]!r}: model {m!r}, expected {e!r}")
    if source is None:
        source = f"{XLA}: convert {src} to {dst}" if xla else f"hand-derived: docs/semantics-decisions.md, ConvertElementType"
    args = [typed(src, [json_value(src, v) for v in values], dims)]
    exp = typed(dst, [json_value(dst, e) for e in expected], dims)
    emit(file, case(name, source, convert_module(src, dst, dims), args, exp, None, comment, implementation_defined))


# ---------------------------------------------------------------------------

def pair_cases():
    for src in TYPES:
        values = source_values(src)
        file = "from_" + src
        for dst in TYPES:
            comment = None
            xla = True
            if src in COMPLEX and dst == "pred":
                xla = False
                comment = ("XLA CPU crashes (segfault) compiling ConvertElementType from complex to pred; the expected "
                           "values follow docs/semantics-decisions.md: true when either part is non-zero (NaN is non-zero)")
            impl = (src in FLOATS or src in COMPLEX) and dst in INTS
            if impl:
                comment = ("float → int of NaN, infinities and out-of-range values is implementation-defined (the "
                           "document: float-to-int conversions are unspecified); pinned as XLA CPU: truncate toward "
                           "zero, saturate, NaN → 0")
            convert_case(file, f"convert/{src}_to_{dst}", src, dst, values, comment=comment, xla=xla,
                         implementation_defined=impl)


def C(a, b):
    return (exact(a), exact(b))


def corner_cases():
    f = "corners"
    nan, inf = math.nan, math.inf
    # float -> int
    convert_case(f, "convert/corners/f32_to_s32_saturates_nan_is_zero", "f32", "s32",
                 [F(x) for x in [nan, -nan, inf, -inf, 3e9, -3e9, 2147483520.0, 2.0**31, -2.0**31, -2147483904.0]],
                 comment="float to int: NaN is 0, out-of-range values saturate at the type's limits (as XLA CPU)",
                 implementation_defined=True)
    convert_case(f, "convert/corners/float_to_int_truncates_toward_zero", "f32", "s32",
                 [R("f32", x) for x in [2.9, -2.9, 0.5, -0.5, -0.9999, 0.0, -0.0, 1e-30, -1e-30, 16777215.0]],
                 comment="truncation toward zero; -0.5 and -0 give 0")
    convert_case(f, "convert/corners/f32_to_u8_saturates", "f32", "u8",
                 [R("f32", x) for x in [300.0, -1.0, -0.9, 255.9, 256.0, nan, -inf, inf]],
                 comment="negative values saturate at 0 (after truncation -0.9 is 0), large ones at 255", implementation_defined=True)
    convert_case(f, "convert/corners/f64_to_s64_saturates", "f64", "s64",
                 [F(x) for x in [9.3e18, -9.3e18, 2.0**63, -2.0**63, 9223372036854774784.0, nan, -inf]],
                 comment="2^63 saturates to INT64_MAX; -2^63 is exact; 2^63 - 1024 is the largest f64 below 2^63", implementation_defined=True)
    convert_case(f, "convert/corners/f32_to_u64_saturates", "f32", "u64",
                 [R("f32", x) for x in [-1.0, 1.8e19, 2e19, 2.0**63, nan, inf]], implementation_defined=True)
    convert_case(f, "convert/corners/f16_to_s8_saturates", "f16", "s8",
                 [R("f16", x) for x in [inf, -200.0, 127.9, -128.9, -129.0, nan]], implementation_defined=True)
    convert_case(f, "convert/corners/bf16_to_u32_saturates", "bf16", "u32",
                 [R("bf16", x) for x in [-inf, 5e9, 4294967296.0, -0.5, nan]], implementation_defined=True)
    convert_case(f, "convert/corners/f8e4m3fn_to_u8", "f8e4m3fn", "u8",
                 [R("f8e4m3fn", x) for x in [448.0, -448.0, 255.0, 3.75, nan]],
                 comment="448 and 256 (the input 255 reads as 256 in f8e4m3fn) saturate at 255", implementation_defined=True)
    # int -> int wraparound
    convert_case(f, "convert/corners/s32_to_s8_wraps", "s32", "s8", [300, -200, 128, -129, 255, 2**31 - 1, -2**31],
                 comment="int to int keeps the low bits (two's complement)")
    convert_case(f, "convert/corners/u32_to_s16_wraps", "u32", "s16", [65535, 32768, 2**32 - 1, 98304])
    convert_case(f, "convert/corners/s64_to_u32_wraps", "s64", "u32", [-1, 2**32 + 5, -2**63, 2**63 - 1])
    convert_case(f, "convert/corners/s8_to_u64_sign_extends", "s8", "u64", [-1, -128, 127])
    convert_case(f, "convert/corners/u64_to_s64_wraps", "u64", "s64", [2**64 - 1, 2**63, 2**63 - 1])
    convert_case(f, "convert/corners/u8_to_s8_wraps", "u8", "s8", [255, 128, 127])
    # f32 -> narrow floats
    convert_case(f, "convert/corners/f32_to_bf16_ties_to_even", "f32", "bf16",
                 [F(x) for x in [1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-23, 1 - 2**-9, -(1 + 2**-8), 1 + 2**-9]],
                 comment="1 + 2^-8 is the tie between 1 and 1 + 2^-7 (to even: 1); 1 + 3·2^-8 ties to 1 + 2^-6; a hair above the tie rounds up")
    convert_case(f, "convert/corners/f32_to_bf16_overflow", "f32", "bf16",
                 [F(x) for x in [2**128 - 2**104, 2**128 - 2**119, 2**128 - 2**119 - 2**104, -(2**128 - 2**104)]],
                 comment="f32 max rounds to 2^128 (inf) in bf16; 2^128 - 2^119 is the tie (inf); just below it, bf16 max")
    convert_case(f, "convert/corners/f32_to_f16_rounding_and_overflow", "f32", "f16",
                 [F(x) for x in [65519.0, 65520.0, -65520.0, 1e5, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-11 + 2**-23,
                                 2**-25, 2**-25 + 2**-40, 3 * 2**-25, 2**-14 - 2**-25]],
                 comment="65520 is the overflow tie (to inf); ties to even; 2^-25 ties to 0, a hair above gives the smallest subnormal 2^-24; 3·2^-25 ties to 2·2^-24")
    convert_case(f, "convert/corners/f32_to_f8e4m3fn_overflow_is_nan", "f32", "f8e4m3fn",
                 [F(x) for x in [448.0, 464.0, 464.00003, 465.0, 480.0, -464.0, -465.0, 1e9, inf, -inf, 2**-10,
                                 2**-10 + 2**-20, 1.0625, 1.1875, 0.001]],
                 comment="f8e4m3fn has no infinity: overflow is NaN, not saturation (465 → NaN); 464 is the tie between 448 and 480 and rounds to even (448); ±inf → NaN")
    convert_case(f, "convert/corners/f32_to_f8e5m2_overflow_is_inf", "f32", "f8e5m2",
                 [F(x) for x in [57344.0, 61440.0, 61439.0, 1e6, -1e6, 1.125, 1.375, 2**-17, 2**-17 + 2**-30, -2**-17]],
                 comment="61440 is the overflow tie (to inf); 1.125 ties to 1, 1.375 to 1.5; 2^-17 ties to 0")
    # double rounding through f32, single rounding to f8
    convert_case(f, "convert/corners/f64_to_bf16_rounds_through_f32", "f64", "bf16",
                 [F(1 + 2**-8 + 2**-40), F(-(1 + 2**-8 + 2**-40)), F(1 + 2**-8 + 2**-20)],
                 comment="docs/semantics-decisions.md: f64 → bf16 rounds to f32 first, so 1 + 2^-8 + 2^-40 becomes the tie 1 + 2^-8 and then 1 (one rounding would give 1 + 2^-7); 1 + 2^-8 + 2^-20 survives f32 and rounds up")
    convert_case(f, "convert/corners/s64_to_bf16_rounds_through_f32", "s64", "bf16",
                 [2**40 + 2**32 + 1, -(2**40 + 2**32 + 1), 2**40 + 2**32 + 2**17],
                 comment="docs/semantics-decisions.md: s64 2^40 + 2^32 + 1 → f32 2^40 + 2^32 (the tie) → bf16 2^40, not 2^40 + 2^33")
    convert_case(f, "convert/corners/u64_to_bf16_rounds_through_f32", "u64", "bf16", [2**63 + 2**55 + 1],
                 comment="u64 2^63 + 2^55 + 1 → f32 2^63 + 2^55 (a bf16 tie) → 2^63")
    convert_case(f, "convert/corners/f64_to_f16_rounds_once", "f64", "f16",
                 [F(1 + 2**-11 + 2**-40), F(1 + 2**-11 + 2**-20), F(65519.99999999)],
                 comment="f64 → f16 rounds once, as XLA CPU (unlike bf16): 1 + 2^-11 + 2^-40 is above the tie → 1 + 2^-10; 65519.99999999 is below the overflow tie → 65504 (through f32 it would be 1 and inf)")
    convert_case(f, "convert/corners/f64_to_f8_rounds_once", "f64", "f8e4m3fn",
                 [F(1 + 2**-4 + 2**-40), F(464 + 2**-30), F(-(1 + 2**-4 + 2**-40))],
                 comment="docs/semantics-decisions.md: → f8 rounds once, directly from f64: 1 + 2^-4 + 2^-40 → 1.125 (through f32 it would be 1); 464 + 2^-30 → NaN (through f32 it would be 448)")
    convert_case(f, "convert/corners/f64_to_f8e5m2_rounds_once", "f64", "f8e5m2",
                 [F(1 + 2**-3 + 2**-40), F(61440 - 2**-30), F(61440 + 2**-30)],
                 comment="1 + 2^-3 + 2^-40 → 1.25 (through f32: 1); 61440 - 2^-30 → 57344 (through f32: the tie, inf)")
    # complex <-> real
    convert_case(f, "convert/corners/c64_to_real_takes_the_real_part", "c64", "f32",
                 [C(2.5, 100), C(-0.0, 1), C(math.nan, 1), C(1, math.nan)],
                 comment="complex → real: the real part (the imaginary part is dropped, NaN or not)")
    convert_case(f, "convert/corners/c64_to_s32_real_part_truncated", "c64", "s32",
                 [C(-3.75, 1), C(3e9, 0.0), C(math.nan, 5)], implementation_defined=True)
    convert_case(f, "convert/corners/c128_to_u8_real_part_saturated", "c128", "u8", [C(300, 0.0), C(-5, 300)], implementation_defined=True)
    convert_case(f, "convert/corners/c64_to_f16_real_part_rounded", "c64", "f16", [C(65520, 1), C(1 + 2**-11, 0.0)])
    convert_case(f, "convert/corners/real_to_complex", "f32", "c64",
                 [F(math.nan), F(-0.0), F(-inf), F(1.5)],
                 comment="real → complex: (x, +0)")
    convert_case(f, "convert/corners/s64_to_c64_rounds_once", "s64", "c64", [2**40 + 2**16 + 1, -(2**53 + 1)],
                 comment="the integer rounds once to f32 (2^40 + 2^16 + 1 → 2^40 + 2^16 + 0: f32 keeps 24 bits)")
    convert_case(f, "convert/corners/c128_to_c64_rounds_each_part", "c128", "c64",
                 [C(1e300, -1e-300), C(1 + 2**-30, -(1 + 2**-24)), C(-math.inf, math.nan)],
                 comment="each part rounded to f32: 1e300 → inf, 1e-300 → -0 (underflow keeps the sign), ties to even")
    # complex -> pred: hand-derived, not run on XLA
    for t in COMPLEX:
        convert_case(f, f"convert/corners/{t}_to_pred_either_part_nonzero", t, "pred",
                     [C(0.0, 0.0), C(0.0, 1), C(1, 0.0), C(-0.0, -0.0), C(math.nan, 0.0), C(0.0, math.nan),
                      C(0.0, -2.5e-30), C(-math.inf, 0.0)],
                     expected=[False, True, True, False, True, True, True, True], xla=False,
                     comment="docs/semantics-decisions.md: anything → pred is x != 0; a complex value is non-zero when either part is (NaN counts as non-zero). XLA CPU crashes (segfault) on this conversion, so this case pins the decision and is not checked against XLA")
    # subnormals: IEEE values (XLA CPU flushes f32/f64 subnormals to zero; these are not run there)
    ftz = "hand-derived (IEEE): subnormals are kept; XLA CPU flushes f32/f64 subnormals to zero (docs/semantics-decisions.md), so this case is not checked against it"
    sub32 = [Fraction(2) ** -149, -Fraction(2) ** -149, Fraction(2) ** -126 - Fraction(2) ** -149]
    convert_case(f, "convert/corners/subnormal_f32_to_f64", "f32", "f64", sub32, xla=False, source=ftz,
                 comment="exact (XLA CPU gives 0)")
    convert_case(f, "convert/corners/subnormal_f32_to_pred", "f32", "pred", sub32, xla=False, source=ftz,
                 comment="a subnormal is not zero: true (XLA CPU gives false)")
    convert_case(f, "convert/corners/subnormal_f32_to_c64", "f32", "c64", sub32, xla=False, source=ftz)
    convert_case(f, "convert/corners/subnormal_f32_to_f16_underflow", "f32", "f16", sub32, xla=False,
                 source=ftz, comment="below half the smallest f16 subnormal: ±0 (a true underflow, not a flush)")
    convert_case(f, "convert/corners/subnormal_f32_to_s32", "f32", "s32", sub32, xla=False, source=ftz)
    convert_case(f, "convert/corners/f64_to_f32_subnormal_results", "f64", "f32",
                 [F(1e-40), F(-1e-40), F(2.0**-149), F(2.0**-150), F(3 * 2.0**-150), F(2.0**-150 + 2.0**-200),
                  F(1e-310), F(2.0**-126 - 2.0**-150)],
                 xla=False, source=ftz,
                 comment="rounded once into f32's subnormal range: 2^-150 ties to 0, 3·2^-150 to 2^-148 (even), 2^-126 - 2^-150 ties up to 2^-126 (XLA CPU flushes these results to 0)")
    convert_case(f, "convert/corners/subnormal_f64_to_pred", "f64", "pred", [F(5e-324), F(-1e-310)],
                 xla=False, source=ftz, comment="true (XLA CPU gives false)")
    convert_case(f, "convert/corners/subnormal_bf16_to_f32", "bf16", "f32",
                 [Fraction(2) ** -133, -Fraction(2) ** -126 + Fraction(2) ** -133, Fraction(2) ** -130], xla=False,
                 source=ftz, comment="exact: every bf16 value is an f32 value")
    convert_case(f, "convert/corners/subnormal_f16_to_f32", "f16", "f32",
                 [Fraction(2) ** -24, -Fraction(2) ** -24, Fraction(2) ** -14 - Fraction(2) ** -24],
                 comment="f16 subnormals are normal f32 values: exact (XLA CPU agrees)")
    convert_case(f, "convert/corners/f32_to_f16_subnormal_results", "f32", "f16",
                 [F(1e-7), F(-1e-7), F(2.0**-24 * 3.5), F(2.0**-14 - 2.0**-25)],
                 comment="rounded into f16's subnormal range, ties to even (XLA CPU agrees: f32 inputs are normal)")
    convert_case(f, "convert/corners/f8_subnormals", "f8e4m3fn", "f8e5m2",
                 [Fraction(1, 512), Fraction(7, 512), -Fraction(3, 512)],
                 comment="f8e4m3fn subnormals 2^-9·k into f8e5m2 (normal there); exact")
    # pred -> everything is in the pair cases; NaN -> pred
    convert_case(f, "convert/corners/float_to_pred_nan_is_true", "f32", "pred",
                 [F(math.nan), F(-0.0), F(0.0), F(1e-30), F(-math.inf)],
                 comment="x != 0: NaN is true, -0 is false")


def shape_cases():
    f = "shapes"
    emit(f, case("convert/shapes/rank0", f"{XLA}: convert of a scalar", convert_module("f32", "s32", []),
                 [typed("f32", [Raw("-7.9")], [])], typed("s32", [Raw("-7")], [])))
    emit(f, case("convert/shapes/rank2", f"{XLA}: convert keeps the dimensions", convert_module("s32", "f16", [2, 3]),
                 [typed("s32", [Raw(str(x)) for x in [1, 2049, -3, 65504, 65520, 100000]], [2, 3])],
                 typed("f16", [Raw("1.0"), Raw("2048.0"), Raw("-3.0"), Raw("65504.0"), "inf", "inf"], [2, 3])))
    emit(f, case("convert/shapes/empty", "hand-derived: a zero-sized operand gives a zero-sized result",
                 convert_module("f64", "c64", [0, 2]), [{"shape": "f64[0,2]", "value": []}],
                 {"shape": "c64[0,2]", "value": []}))
    emit(f, case("convert/shapes/declared_shape", "hand-derived: the result has the operand's dimensions and the new type",
                 convert_module("u8", "bf16", [2], declared="bf16[2]"), [typed("u8", [Raw("255"), Raw("3")])],
                 typed("bf16", [Raw("255.0"), Raw("3.0")])))
    emit(f, case("convert/shapes/declared_shape_mismatch", "hand-derived: the result type is new_element_type",
                 convert_module("u8", "bf16", [2], declared="f32[2]"), [typed("u8", [Raw("255"), Raw("3")])],
                 {"error": "does not match the inferred shape bf16[2]"}))
    emit(f, case("convert/shapes/same_type", f"{XLA}: converting to the same type is the identity (NaN payload kept)",
                 convert_module("f32", "f32", [3]), [typed("f32", ["0x7fc00001", "-0", Raw("1.5")])],
                 typed("f32", ["nan", "-0", Raw("1.5")])))


def error_cases():
    f = "errors"
    def mod(instr, params=None):
        return {"computations": {"main": {"params": params if params is not None else [{"name": "x", "shape": "f32[2]"}],
                                          "instructions": instr}}}
    arg = [typed("f32", [Raw("1"), Raw("2")])]
    for name in ["f128", "token", "int32", "float"]:
        emit(f, case(f"convert/errors/unknown_type_{name}", "docs/format.md §3: element types are named as in §1 (a read error)",
                     mod([{"name": "r", "op": "ConvertElementType", "operands": ["x"], "new_element_type": name}]),
                     arg, {"error": "unknown element type"}))
    emit(f, case("convert/errors/missing_new_element_type", "operation_semantics: ConvertElementType takes new_element_type",
                 mod([{"name": "r", "op": "ConvertElementType", "operands": ["x"]}]), arg,
                 {"error": "needs the attribute `new_element_type`"}))
    emit(f, case("convert/errors/new_element_type_not_a_string", "docs/format.md §3: an element type is its name, a string",
                 mod([{"name": "r", "op": "ConvertElementType", "operands": ["x"], "new_element_type": 11}]), arg,
                 {"error": "new_element_type"}))
    emit(f, case("convert/errors/two_operands", "operation_semantics: ConvertElementType(operand, new_element_type)",
                 mod([{"name": "r", "op": "ConvertElementType", "operands": ["x", "x"], "new_element_type": "s32"}]), arg,
                 {"error": "takes 1 operand, got 2"}))
    emit(f, case("convert/errors/tuple_operand", "operation_semantics: the source and destination element types must not be tuples",
                 mod([{"name": "r", "op": "ConvertElementType", "operands": ["x"], "new_element_type": "s32"}],
                     [{"name": "x", "shape": "(f32[2])"}]),
                 [{"shape": "(f32[2])", "value": {"tuple": [[Raw("1"), Raw("2")]]}}],
                 {"error": "operand must be an array, got (f32[2])"}))
    emit(f, case("convert/errors/token_operand", "operation_semantics: ConvertElementType converts arrays",
                 mod([{"name": "t", "op": "AfterAll", "operands": []},
                      {"name": "r", "op": "ConvertElementType", "operands": ["t"], "new_element_type": "s32"}], []),
                 [], {"error": "operand must be an array, got token[]"}))


def main():
    pair_cases()
    corner_cases()
    shape_cases()
    error_cases()
    total = 0
    for file, cases in sorted(CASES.items()):
        total += write_cases(os.path.join(HERE, file + ".json"), cases)
    print(f"{total} cases in {len(CASES)} files", file=sys.stderr)
    with open("/tmp/convert_report.txt", "w") as f:
        f.write("\n".join(DIFFS) + "\n")


if __name__ == "__main__":
    main()
