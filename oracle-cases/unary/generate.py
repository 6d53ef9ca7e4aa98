#!/usr/bin/env python3
"""Generates the unary oracle cases (oracle-cases/unary/*.json).

Expected values are independent of xlaref: exact ops from their definition
(bit operations, exact rounding of rationals), transcendental functions
from mpmath at 400 bits rounded once into the type. Every case that XLA's
CPU backend can run is run there too (tools/xla_run_hlo.py) and every
difference is printed: exact cases must agree exactly (except where XLA
flushes subnormals), tolerance cases within their tolerance. Cases whose
expected value was decided by hand against XLA carry their reasons.

Run: python3 oracle-cases/unary/generate.py   (needs jax, ml_dtypes, mpmath)
"""
import math
import os
import sys
from fractions import Fraction

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from casegen import *  # noqa: E402,F401,F403

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = []  # differences between XLA and the expected values


def note(msg):
    REPORT.append(msg)
    print(msg, file=sys.stderr)


# ---------------------------------------------------------------------------
# Truth for real floats

TRANSCENDENTAL = ["Cbrt", "Cos", "Erf", "Exp", "Expm1", "Log", "Log1p", "Logistic", "Rsqrt", "Sin", "Tan", "Tanh"]
MPF = {
    "Sin": mp.sin, "Cos": mp.cos, "Tan": mp.tan, "Tanh": mp.tanh, "Exp": mp.exp, "Expm1": mp.expm1,
    "Log": mp.log, "Log1p": mp.log1p, "Erf": mp.erf, "Sqrt": mp.sqrt, "Rsqrt": lambda x: 1 / mp.sqrt(x),
    "Cbrt": lambda x: mp.cbrt(x) if x >= 0 else -mp.cbrt(-x), "Logistic": lambda x: 1 / (1 + mp.exp(-x)),
}


def neg_of(v):
    if isinstance(v, Special):
        return {"nan": NNAN, "-nan": NAN, "inf": NINF, "-inf": INF, "-0": Fraction(0)}[v.name]
    return NZERO if v == 0 else -v


def is_nan(v):
    return isinstance(v, Special) and v.name in ("nan", "-nan")


def negative(v):
    return (isinstance(v, Special) and v.name.startswith("-")) or (isinstance(v, Fraction) and v < 0)


def zero(v):
    return v == NZERO or (isinstance(v, Fraction) and v == 0)


def signed_zero(neg):
    return NZERO if neg else Fraction(0)


def integral(v, n):
    """An integral result n for input v: zero keeps the input's sign."""
    return signed_zero(negative(v)) if n == 0 else Fraction(n)


def real_truth(op, t, v):
    """The exact result of a unary op on a real float value v in type t."""
    r = real_truth_any(op, t, v)
    if t == "f8e4m3fn" and isinstance(r, Special) and r.name in ("inf", "-inf"):
        return NAN  # no infinity: an infinite result is NaN, as a conversion would give
    return r


def real_truth_any(op, t, v):
    nan, inf = is_nan(v), isinstance(v, Special) and v.name in ("inf", "-inf")
    if op == "Abs":
        return NAN if nan else (INF if inf else (Fraction(0) if zero(v) else abs(v)))
    if op == "Neg":
        return neg_of(v)
    if op in ("Real", "Conj"):
        return v
    if op == "Imag":
        return Fraction(0)
    if op == "IsFinite":
        return not (nan or inf)
    if op == "Sign":
        if nan or zero(v):
            return v
        return Fraction(-1) if negative(v) else Fraction(1)
    if nan or zero(v) or inf:
        special = special_truth(op, v)
        if special is not None:
            return special
    if op in ("Ceil", "Floor", "Round", "RoundNearestEven"):
        if nan or inf or zero(v):
            return v
        if op == "Ceil":
            n = -((-v.numerator) // v.denominator)
        elif op == "Floor":
            n = v.numerator // v.denominator
        elif op == "Round":
            h = abs(v) + Fraction(1, 2)  # half away from zero
            n = h.numerator // h.denominator
            n = -n if v < 0 else n
        else:
            n = round(v)  # Fraction.__round__: ties to even
        return integral(v, n)
    # finite nonzero v, a function with an mpmath truth
    x = to_mpf(v)
    if op in ("Sqrt", "Rsqrt", "Log") and v < 0:
        return NAN
    if op == "Log1p" and v <= -1:
        return NINF if v == -1 else NAN
    y = MPF[op](x)
    return round_exact(t, from_mpf(y))


def special_truth(op, v):
    """IEEE / C99 values of the functions at NaN, ±inf and ±0."""
    if is_nan(v):
        return NAN
    name = v.name if isinstance(v, Special) else "0"
    table = {
        "Sqrt": {"0": Fraction(0), "-0": NZERO, "inf": INF, "-inf": NAN},
        "Rsqrt": {"0": INF, "-0": NINF, "inf": Fraction(0), "-inf": NAN},
        "Cbrt": {"0": Fraction(0), "-0": NZERO, "inf": INF, "-inf": NINF},
        "Exp": {"0": Fraction(1), "-0": Fraction(1), "inf": INF, "-inf": Fraction(0)},
        "Expm1": {"0": Fraction(0), "-0": NZERO, "inf": INF, "-inf": Fraction(-1)},
        "Log": {"0": NINF, "-0": NINF, "inf": INF, "-inf": NAN},
        "Log1p": {"0": Fraction(0), "-0": NZERO, "inf": INF, "-inf": NAN},
        "Logistic": {"0": Fraction(1, 2), "-0": Fraction(1, 2), "inf": Fraction(1), "-inf": Fraction(0)},
        "Sin": {"0": Fraction(0), "-0": NZERO, "inf": NAN, "-inf": NAN},
        "Cos": {"0": Fraction(1), "-0": Fraction(1), "inf": NAN, "-inf": NAN},
        "Tan": {"0": Fraction(0), "-0": NZERO, "inf": NAN, "-inf": NAN},
        "Tanh": {"0": Fraction(0), "-0": NZERO, "inf": Fraction(1), "-inf": Fraction(-1)},
        "Erf": {"0": Fraction(0), "-0": NZERO, "inf": Fraction(1), "-inf": Fraction(-1)},
    }
    return table.get(op, {}).get(name)


# ---------------------------------------------------------------------------
# Integers

def int_truth(op, t, v):
    w = WIDTH[t]
    if op == "Abs":
        return wrap(t, abs(v))
    if op == "Neg":
        return wrap(t, -v)
    if op == "Sign":
        return (v > 0) - (v < 0)
    if op == "Not":
        return wrap(t, ~v)
    u = v & ((1 << w) - 1)
    if op == "PopulationCount":
        return bin(u).count("1")
    if op == "Clz":
        return w - u.bit_length()
    raise ValueError(op)


# ---------------------------------------------------------------------------
# Complex truth (finite inputs with non-zero parts; specials are written by hand)

MPC = {
    "Sqrt": mp.sqrt, "Rsqrt": lambda z: 1 / mp.sqrt(z), "Exp": mp.exp, "Expm1": mp.expm1, "Log": mp.log,
    "Log1p": mp.log1p, "Logistic": lambda z: 1 / (1 + mp.exp(-z)), "Sin": mp.sin, "Cos": mp.cos,
    "Tan": mp.tan, "Tanh": mp.tanh, "Sign": lambda z: z / abs(z),
}


def complex_truth(op, t, z):
    c = COMPLEX[t]
    re, im = z
    if op == "Neg":
        return (neg_of(re), neg_of(im))
    if op == "Conj":
        return (re, neg_of(im))
    if op == "Real":
        return re
    if op == "Imag":
        return im
    w = mp.mpc(to_mpf(re), to_mpf(im))
    if op == "Abs":
        return round_exact(c, from_mpf(abs(w)))
    y = MPC[op](w)
    return (round_c(c, y.real), round_c(c, y.imag))


def round_c(c, x):
    return Fraction(0) if x == 0 else round_exact(c, from_mpf(x))


# ---------------------------------------------------------------------------
# Running XLA

HLO_NAME = {"Abs": "abs", "Cbrt": "cbrt", "Ceil": "ceil", "Clz": "count-leading-zeros", "Cos": "cosine",
            "Erf": "erf", "Exp": "exponential", "Expm1": "exponential-minus-one", "Floor": "floor", "Imag": "imag",
            "IsFinite": "is-finite", "Log": "log", "Log1p": "log-plus-one", "Logistic": "logistic", "Neg": "negate",
            "Not": "not", "PopulationCount": "popcnt", "Real": "real", "Round": "round-nearest-afz",
            "RoundNearestEven": "round-nearest-even", "Rsqrt": "rsqrt", "Sign": "sign", "Sin": "sine",
            "Sqrt": "sqrt", "Tan": "tan", "Tanh": "tanh"}


def result_type(op, t):
    if op == "IsFinite":
        return "pred"
    if op in ("Abs", "Real", "Imag") and t in COMPLEX:
        return COMPLEX[t]
    return t


def xla_unary(op, t, xs, dims):
    rt = result_type(op, t)
    s, rs = shape_text(t, dims), shape_text(rt, dims)
    if op == "Conj":
        c = COMPLEX.get(t)
        if c is None:
            return None
        cs = shape_text(c, dims)
        body = (f"  p = {s} parameter(0)\n  re = {cs} real(p)\n  im = {cs} imag(p)\n"
                f"  nim = {cs} negate(im)\n  ROOT r = {s} complex(re, nim)")
    else:
        body = f"  p = {s} parameter(0)\n  ROOT r = {rs} {HLO_NAME[op]}(p)"
    text = f"HloModule m\nENTRY e {{\n{body}\n}}"
    arr = np.array(xs, dtype=NP[t]).reshape(dims)
    return run_hlo(text, [arr])[0].reshape(-1)


def same(rt, a, b):
    """Exact agreement: NaN matches NaN, signed zeros differ."""
    if rt == "pred" or rt in INTS:
        return a == b
    if is_nan(a) or is_nan(b):
        return is_nan(a) and is_nan(b)
    return a == b


def ftz_affected(t, v):
    """XLA CPU flushes f32/f64 subnormals (also bf16, computed in f32)."""
    if isinstance(v, tuple):
        return any(ftz_affected(t, p) for p in v)
    if isinstance(v, bool) or isinstance(v, Special) or not isinstance(v, Fraction) or v == 0:
        return False
    limit = Fraction(2) ** (-1022 if t in ("f64", "c128") else -126)
    return abs(v) < limit


# ---------------------------------------------------------------------------
# Building cases

ALL_CASES = {}
KNOWN_FAILING = []


def emit(file, c, known_failing=None):
    if known_failing:
        c = dict(c)
        c["comment"] = (c.get("comment", "") + " " if c.get("comment") else "") + "KNOWN FAILING: " + known_failing
        KNOWN_FAILING.append(c)
    else:
        ALL_CASES.setdefault(file, []).append(c)


def exp_json(rt, v):
    if rt == "pred":
        return bool(v)
    if rt in INTS:
        return enc_int(v)
    if rt in COMPLEX:
        c = COMPLEX[rt]
        return [enc_float(c, v[0]), enc_float(c, v[1])]
    return enc_float(rt, v)


def arg_json(t, v, raw=None):
    if raw is not None:
        return raw
    return exp_json(t, v)


def unary_case(file, op, t, name, inputs, expected=None, tolerance=None, source=None, comment=None,
               xla=True, dims=None, raw_inputs=None, known_failing=None, xla_expected_diff=None, implementation_defined=False):
    """inputs: exact values (Fraction/Special, tuples for complex, ints);
    expected: list of exact values (default: the truth). Runs XLA unless
    xla=False and prints every difference."""
    rt = result_type(op, t)
    if expected is None:
        if t in COMPLEX:
            expected = [complex_truth(op, t, z) for z in inputs]
        elif t in FLOATS:
            expected = [real_truth(op, t, v) for v in inputs]
        elif t == "pred":
            expected = [not v for v in inputs]
        else:
            expected = [int_truth(op, t, v) for v in inputs]
    dims = dims if dims is not None else [len(inputs)]
    checked = False
    xla_diffs = []
    ftz = False
    if xla:
        xs = [to_np(t, v, raw_inputs[i] if raw_inputs else None) for i, v in enumerate(inputs)]
        got = xla_unary(op, t, xs, dims)
        if got is not None:
            checked = True
            for i, (v, e) in enumerate(zip(inputs, expected)):
                g = from_np(rt, got[i])
                if tolerance:
                    ok = within(rt, g, e, tolerance)
                else:
                    ok = same_val(rt, g, e)
                if not ok:
                    tag = "FTZ" if (ftz_affected(t, v) or ftz_affected(rt, e)) else "DIFF"
                    if tag == "DIFF":
                        xla_diffs.append(f"[{i}] {show(rt, g)}")
                    else:
                        ftz = True
                    if tag == "DIFF" and xla_expected_diff is None:
                        note(f"{tag} {op} {t} {name}: input {v!r} expected {e!r} XLA {g!r}")
                    elif tag == "DIFF":
                        note(f"(expected, {xla_expected_diff}) {op} {t} {name}: input {v!r} expected {e!r} XLA {g!r}")
    if source is None:
        source = f"{XLA}: {op} on {t}" if checked and not xla_diffs else f"hand-derived: {op} on {t}"
        if tolerance and t in FLOATS + list(COMPLEX):
            source += "; expected values are the exact results rounded once (mpmath, 400 bits)"
        if ftz:
            source += f"; XLA CPU agrees except where it flushes subnormals to zero"
        if xla_diffs:
            source += (f"; {XLA} differs (an XLA deviation, docs/semantics-decisions.md): "
                       + ", ".join(xla_diffs))
    elif xla_diffs:
        source += f"; {XLA} differs: " + ", ".join(xla_diffs)
    args = [typed(t, [arg_json(t, v, raw_inputs[i] if raw_inputs else None) for i, v in enumerate(inputs)], dims)]
    exp = typed(rt, [exp_json(rt, e) for e in expected], dims)
    c = case(f"unary/{op}/{t}/{name}", source, unary_module(op, t, dims), args, exp, tolerance, comment,
             implementation_defined)
    emit(file, c, known_failing)


def show(t, v):
    """An exact value as short text for a source note."""
    if t in COMPLEX:
        return "(" + show(COMPLEX[t], v[0]) + ", " + show(COMPLEX[t], v[1]) + ")"
    if isinstance(v, Special):
        return v.name
    if isinstance(v, bool):
        return str(v).lower()
    if t in INTS:
        return str(v)
    return enc_float(t, v).text if isinstance(enc_float(t, v), Raw) else str(enc_float(t, v))


def to_np(t, v, raw=None):
    if raw is not None and isinstance(raw, str) and raw.startswith("0x"):
        return from_bits(t, int(raw, 16))
    if t in COMPLEX:
        c = COMPLEX[t]
        return complex(to_float(v[0]) if isinstance(v[0], Special) else float(v[0]),
                       to_float(v[1]) if isinstance(v[1], Special) else float(v[1]))
    if t in FLOATS:
        return np_scalar(t, v)
    return v


def from_np(rt, x):
    if rt == "pred":
        return bool(x)
    if rt in INTS:
        return int(x)
    if rt in COMPLEX:
        c = COMPLEX[rt]
        return (value_of(c, np.real(x)), value_of(c, np.imag(x)))
    return value_of(rt, x)


def same_val(rt, g, e):
    if rt in COMPLEX:
        return same_val(COMPLEX[rt], g[0], e[0]) and same_val(COMPLEX[rt], g[1], e[1])
    return same(rt, g, e)


def within(rt, g, e, tol):
    if rt in COMPLEX:
        return within(COMPLEX[rt], g[0], e[0], tol) and within(COMPLEX[rt], g[1], e[1], tol)
    if is_nan(g) or is_nan(e):
        return is_nan(g) and is_nan(e)
    if zero(g) and zero(e):
        return True
    if isinstance(g, Special) or isinstance(e, Special):
        return g == e
    d = abs(g - e)
    if "abs" in tol and d <= Fraction(tol["abs"]):
        return True
    if "rel" in tol and d <= Fraction(tol["rel"]) * abs(e):
        return True
    return "ulp" in tol and ulps(rt, g, e) <= tol["ulp"]


# ---------------------------------------------------------------------------
# Value sets

def rnd(t, x):
    """A Python number rounded once into float type t."""
    v = exact(x)
    return round_exact(t, v) if isinstance(v, Fraction) else v


def finite(v):
    return isinstance(v, Fraction)


def dedupe(vs):
    out = []
    for v in vs:
        if not any(type(v) is type(w) and v == w for w in out):
            out.append(v)
    return out


def in_type(t, xs):
    """Rounds each value into t, keeps the finite ones, removes repeats."""
    out = []
    for x in xs:
        v = rnd(t, x)
        if finite(v):
            out.append(v)
    return dedupe(out)


def bits_value(t, b):
    return value_of(t, from_bits(t, b))


def max_of(t):
    return FORMAT[t][2]


def min_sub(t):
    m, emin, _, _ = FORMAT[t]
    return Fraction(2) ** (emin - m)


def max_sub(t):
    m, emin, _, _ = FORMAT[t]
    return Fraction(2) ** emin - Fraction(2) ** (emin - m)


def pred_half(t):
    """The largest value below 0.5."""
    m, _, _, _ = FORMAT[t]
    return Fraction(1, 2) - Fraction(2) ** (-2 - m)


def specials(t):
    out = [Fraction(0), NZERO, NAN]
    if FORMAT[t][3]:
        out += [INF, NINF]
    return out


def neg_nan_hex(t):
    w = WIDTH[t]
    b = bits_of(t, np_scalar(t, NAN)) | (1 << (w - 1))
    return "0x%0*x" % (w // 4, b)


def payload_nan_hex(t):
    w = WIDTH[t]
    b = bits_of(t, np_scalar(t, NAN))
    if t == "f8e4m3fn":
        return "0x7f"
    return "0x%0*x" % (w // 4, b | 1)


ROUNDING = [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.4, -0.4, 0.6, -0.6, 1, -1, 3.7, -3.7, 5.5, -6.5, 0.25,
            -0.75, 2.0, 100.5, -100.5]


def large_values(t):
    m = FORMAT[t][0]
    big = [Fraction(2) ** m - Fraction(1, 2), Fraction(2) ** (m - 1) + Fraction(1, 2), Fraction(2) ** m + 1,
           Fraction(2) ** (m + 1), max_of(t)]
    return [v for v in big if round_exact(t, v) == v] + [-v for v in big if round_exact(t, v) == v]


# Inputs of each function: values where it is smooth and well conditioned.
DOMAIN = {
    "Sin": [0.5, -0.5, 1, -1, 2, 3, 3.141592653589793, -3.141592653589793, 6.283185307179586, 10, -100, 1000, 0.1,
            1e-3, -1e-4, 1.5707963267948966, 12345.678],
    "Cos": [0.5, -0.5, 1, -1, 2, 3, 3.141592653589793, -3.141592653589793, 6.283185307179586, 10, -100, 1000, 0.1,
            1e-3, -1e-4, 1.2, 12345.678],
    "Tan": [0.5, -0.5, 1, -1, 2, 3, 1.5707963267948966, -1.5707963267948966, 1.5, 10, -100, 1000, 0.1, 1e-3,
            0.7853981633974483, -1.2],
    "Tanh": [0.5, -0.5, 1, -1, 2, -3, 0.01, -1e-4, 5, 9, 15, 0.3, 1e-3, 20, -0.7],
    "Exp": [0.5, -0.5, 1, -1, 2, 10, -10, 50, -50, 88, -87, 1e-3, -1e-5, 3.5, 0.1, 2.302585092994046],
    "Expm1": [0.5, -0.5, 1e-3, -1e-3, 1e-7, -1e-7, 1, 10, -10, 30, -30, 80, 0.1, -0.1, 1e-20],
    "Log": [0.5, 2, 10, 1e-3, 1e10, 1e30, 1e-30, 0.999, 1.001, 3, 100, 0.1, 2.718281828459045, 7.5],
    "Log1p": [0.5, -0.5, 1e-3, -1e-3, 1e-7, -1e-7, 1, 10, 1e10, -0.999, 0.1, -0.1, 3, 1e-20],
    "Logistic": [0.5, -0.5, 1, -1, 5, -5, 10, -10, 20, -20, 50, -50, 80, -80, 0.1, 1e-3],
    "Erf": [0.1, -0.1, 0.5, -0.5, 1, -1, 2, -2, 3, 3.5, 1e-3, 0.9, -2.5, 1e-5, 1e-20],
    "Cbrt": [2, -2, 3, 0.5, 1e-3, 10, 100, -1000.5, 1e30, 7, -0.1, 1e-30, 9],
    "Rsqrt": [2, 3, 0.5, 10, 1e-3, 1e30, 7, 0.3, 1e-30, 100.5, 1e-3],
    "Sqrt": [2, 3, 0.5, 10, 1e-3, 1e30, 7, 0.3, 1e-30, 100.5, 1e20, 12345.678],
}
DOMAIN_F64_EXTRA = {
    "Exp": [700, -700, 709.7, -745],
    "Expm1": [700, -700],
    "Log": [1e300, 1e-300, 1.7976931348623157e308],
    "Log1p": [1e300, -0.9999999999],
    "Logistic": [-100, -700, 700, 40],
    "Sin": [1e300, 1e22, 1e10],
    "Cos": [1e300, 1e22, 1e10],
    "Tan": [1e300, 1e22, 1e10],
    "Erf": [5, -5.5, 6],
    "Cbrt": [1e300, -1e-300],
    "Sqrt": [1e300, 1e-300, 1.7976931348623157e308],
    "Rsqrt": [1e300, 1e-300],
    "Tanh": [19, 0.001],
}
DOMAIN_F32_EXTRA = {
    "Sin": [1e6, 1e10, 1e22, 3e38],
    "Cos": [1e6, 1e10, 1e22, 3e38],
    "Tan": [1e6, 1e10, 1e22],
    "Log": [3.4028234663852886e38],
    "Sqrt": [3.4028234663852886e38],
}

# Exact special values (no tolerance): inputs where the result is exact.
EXACT = {
    "Sqrt": [4, 16, 0.25, 1, 1e-2 ** 0 * 9, 2.25, 65536],
    "Rsqrt": [4, 0.25, 1, 16, 0.0625],
    "Cbrt": [8, -8, 27, -0.125, 1, 64],
    "Exp": [],
    "Expm1": [],
    "Log": [1],
    "Log1p": [],
    "Logistic": [],
    "Sin": [],
    "Cos": [],
    "Tan": [],
    "Tanh": [],
    "Erf": [],
}
# Inputs whose correctly rounded result is exactly ±1 or 0 in every type.
SATURATING = {
    "Tanh": {"f32": [20, -20, 50], "f64": [40, -40], "narrow": [20, -20]},
    "Erf": {"f32": [5, -5, 10], "f64": [7, -7, 10], "narrow": [5, -5]},
    "Logistic": {"f32": [100, 40], "f64": [100, 800], "narrow": [40]},
    "Exp": {"f32": [100, -110], "f64": [710, -746], "narrow": [100, -110]},
    "Expm1": {"f32": [100, -100], "f64": [710, -100], "narrow": [100, -100]},
}
LOG_EXACT = {"Log": [1], "Log1p": [0]}


def tol_for(t, op=None):
    if (op, t) == ("Expm1", "f32"):
        return {"ulp": 3}  # XLA CPU's f32 expm1 is 3 ulp off at -0.1
    return {"ulp": 2} if t in ("f32", "f64") else {"ulp": 1}


# ---------------------------------------------------------------------------
# Real float cases

def real_float_cases():
    exact_ops = ["Abs", "Neg", "Sign", "Ceil", "Floor", "Round", "RoundNearestEven", "IsFinite", "Real", "Imag",
                 "Conj"]
    for t in FLOATS:
        base = in_type(t, ROUNDING) + large_values(t) + [pred_half(t), -pred_half(t)]
        base = dedupe(base)
        sp = specials(t)
        sub = [min_sub(t), -min_sub(t), max_sub(t), -max_sub(t)]
        for op in exact_ops:
            file = "rounding" if op in ("Ceil", "Floor", "Round", "RoundNearestEven") else (
                "sign_abs_neg" if op in ("Abs", "Neg", "Sign") else "real_imag_isfinite")
            unary_case(file, op, t, "values", base)
            raw = [None] * len(sp) + [neg_nan_hex(t), payload_nan_hex(t)]
            vals = sp + [NNAN, NAN]
            unary_case(file, op, t, "special_values", vals, raw_inputs=[arg_json(t, v, r) for v, r in zip(vals, raw)],
                       comment="±0, ±inf (where the type has them), NaN, -NaN and a NaN with a payload (hex)")
            xla_ok = t in ("f16", "f8e4m3fn", "f8e5m2")
            unary_case(file, op, t, "subnormals", sub, xla=xla_ok,
                       comment=None if xla_ok else "XLA CPU flushes these subnormals to zero; the reference keeps them (IEEE)")
        # Sqrt: correctly rounded, exact
        vals = in_type(t, DOMAIN["Sqrt"] + EXACT["Sqrt"] + (DOMAIN_F64_EXTRA["Sqrt"] if t == "f64" else [])
                       + (DOMAIN_F32_EXTRA["Sqrt"] if t == "f32" else []))
        vals = [v for v in vals if not is_subnormal(t, v)] + [max_of(t)]
        unary_case("sqrt_rsqrt_cbrt", "Sqrt", t, "values", dedupe(vals),
                   comment="Sqrt is correctly rounded (IEEE): exact")
        for op in TRANSCENDENTAL:
            file = {"Cbrt": "sqrt_rsqrt_cbrt", "Rsqrt": "sqrt_rsqrt_cbrt", "Erf": "erf_logistic",
                    "Logistic": "erf_logistic", "Exp": "exp_log", "Expm1": "exp_log", "Log": "exp_log",
                    "Log1p": "exp_log"}.get(op, "trig")
            xs = DOMAIN[op] + (DOMAIN_F64_EXTRA.get(op, []) if t == "f64" else []) + (
                DOMAIN_F32_EXTRA.get(op, []) if t == "f32" else [])
            vals = [v for v in in_type(t, xs) if not is_subnormal(t, v)]
            unary_case(file, op, t, "values", vals, tolerance=tol_for(t, op))
        # exact special values of the transcendental functions and Sqrt
        for op in TRANSCENDENTAL + ["Sqrt"]:
            file = {"Cbrt": "sqrt_rsqrt_cbrt", "Rsqrt": "sqrt_rsqrt_cbrt", "Sqrt": "sqrt_rsqrt_cbrt",
                    "Erf": "erf_logistic", "Logistic": "erf_logistic", "Exp": "exp_log", "Expm1": "exp_log",
                    "Log": "exp_log", "Log1p": "exp_log"}.get(op, "trig")
            vals = list(sp)
            extra = EXACT.get(op, []) + LOG_EXACT.get(op, [])
            sat = SATURATING.get(op, {})
            extra += sat.get(t if t in ("f32", "f64") else "narrow", [])
            if op == "Log1p":
                extra += [-1, -2]
            if op in ("Sqrt", "Rsqrt", "Log"):
                extra += [-1]
            vals += [v for v in in_type(t, extra) if v not in vals]
            if op in ("Sqrt", "Rsqrt", "Log"):
                vals = [v for v in vals if not (t == "f8e4m3fn" and isinstance(v, Special) and "inf" in v.name)]
            unary_case(file, op, t, "exact_values", vals,
                       comment="values whose results are exact: NaN, infinities, signed zeros, and results that round to exact values")
            # subnormal inputs: hand-derived for f32/f64/bf16 (XLA flushes them)
            sub_in = [min_sub(t), -min_sub(t), max_sub(t)]
            if op in ("Sqrt", "Rsqrt", "Log", "Log1p"):
                sub_in = [v for v in sub_in if v > 0] if op != "Log1p" else sub_in
            tol = tol_for(t, op) if op != "Sqrt" else None
            xla_ok = t in ("f16", "f8e4m3fn", "f8e5m2")
            unary_case(file, op, t, "subnormal_inputs", sub_in, tolerance=tol, xla=xla_ok,
                       comment=None if xla_ok else "XLA CPU flushes subnormal inputs to zero; the reference keeps them (IEEE)")


# ---------------------------------------------------------------------------
# Integers and pred

def int_values(t):
    lo, hi = int_range(t)
    w = WIDTH[t]
    vs = [0, 1, 2, 5, 100, lo, lo + 1, hi, hi - 1, int("55" * (w // 8), 16), int("0f" * (w // 8), 16), 1 << (w // 2)]
    if t in SIGNED:
        vs += [-1, -2, -5, -100, -(1 << (w // 2))]
    vs = [wrap(t, v) for v in vs]
    out = []
    for v in vs:
        if v not in out:
            out.append(v)
    return out


def int_cases():
    for t in INTS:
        vals = int_values(t)
        for op in ["Abs", "Neg", "Sign", "Not", "PopulationCount", "Clz"]:
            file = "bits" if op in ("Not", "PopulationCount", "Clz") else "integers"
            xla_ok = not (t in UNSIGNED and op in ("Abs", "Sign"))
            comment = None
            if op in ("Abs", "Neg") and t in SIGNED:
                comment = f"two's complement wraparound: {op}(INT_MIN) = INT_MIN"
            if op == "Clz":
                comment = "Clz(0) is the bit width"
            if op == "PopulationCount" and t in SIGNED:
                comment = "PopulationCount(-1) is the bit width"
            if not xla_ok:
                comment = (f"|x| = x on unsigned integers" if op == "Abs" else "Sign is 0 or 1 on unsigned integers") + \
                    "; XLA CPU (through StableHLO) rejects this op on unsigned types, the reference accepts it"
            unary_case(file, op, t, "values", vals, xla=xla_ok, comment=comment)
    unary_case("bits", "Not", "pred", "values", [False, True, True, False])
    # The alias LogicalNot
    c = case("unary/LogicalNot/pred/alias", "docs/format.md §3: LogicalNot is an alias of Not; " + XLA + ": not on pred",
             unary_module("LogicalNot", "pred", [2]), [typed("pred", [True, False])], typed("pred", [False, True]))
    emit("bits", c)
    c = case("unary/LogicalNot/s32/alias", "docs/format.md §3: LogicalNot is an alias of Not (bitwise on integers); " + XLA,
             unary_module("LogicalNot", "s32", [3]), [typed("s32", [Raw("0"), Raw("-1"), Raw("5")])],
             typed("s32", [Raw("-1"), Raw("0"), Raw("-6")]))
    emit("bits", c)


# ---------------------------------------------------------------------------
# Complex

def cplx(re, im):
    return (exact(re), exact(im))


def in_ctype(t, pairs):
    c = COMPLEX[t]
    out = []
    for re, im in pairs:
        out.append((rnd(c, re), rnd(c, im)))
    return out


CORDINARY = [(0.5, 0.5), (-1, 2), (2, -1), (-0.3, -0.7), (3, 4), (1e-3, 1e-3), (10, 0.5), (-2.5, 3), (0.25, -10),
             (1.5, -0.25), (-4, -1)]
CDOMAIN = {
    "Sqrt": CORDINARY + [(-4, 1e-3), (1e10, -1e10), (-1e-10, 1)],
    "Rsqrt": CORDINARY + [(1e10, -1e10)],
    "Exp": CORDINARY + [(-20, 1), (30, -2)],
    "Expm1": [(0.5, 0.5), (-1, 2), (2, -1), (-0.3, -0.7), (3, 4), (10, 0.5), (-2.5, 3), (1.5, -0.25), (1e-3, 1e-3)],
    "Log": CORDINARY + [(1e10, 1), (-1e-10, 1e-10)],
    "Log1p": [p for p in CORDINARY if p != (-0.3, -0.7)] + [(1e-4, 2e-4), (-0.5, 0.3)],
    "Logistic": CORDINARY,
    "Sin": [(0.5, 0.5), (-1, 2), (2, -1), (-0.3, -0.7), (3, 4), (1e-3, 1e-3), (-2.5, 3), (0.25, -10), (1.5, -0.25)],
    "Cos": [(0.5, 0.5), (-1, 2), (2, -1), (-0.3, -0.7), (3, 4), (1e-3, 1e-3), (-2.5, 3), (0.25, -10), (1.2, -0.25)],
    "Tan": [(0.5, 0.5), (-1, 2), (2, -1), (-0.3, -0.7), (3, 4), (-2.5, 3), (0.25, -10), (1.5, -0.25)],
    "Tanh": [(0.5, 0.5), (-1, 2), (2, -1), (-0.3, -0.7), (3, 4), (1e-3, 1e-3), (10, 0.5), (-2.5, 3), (0.25, -10),
             (1.5, -0.25), (15, 1)],
    "Sign": CORDINARY + [(1e30, -1e30)],
    "Abs": CORDINARY + [(1e30, 1e30), (-7, 24), (1e-20, 3e-20)],
}


def ctol(t):
    return {"ulp": 2} if t == "c64" else {"ulp": 4}


def complex_cases():
    for t in COMPLEX:
        c = COMPLEX[t]
        simple = [cplx(1.5, -2), cplx(0.0, -0.0), cplx(-0.0, 0.0), cplx(math.nan, 1), cplx(1, -math.nan),
                  cplx(math.inf, -math.inf), cplx(-3.25, 1e-3)]
        simple = [(rnd(c, a), rnd(c, b)) for a, b in simple]
        for op in ["Neg", "Conj", "Real", "Imag"]:
            unary_case("complex", op, t, "values", simple)
        for op, dom in CDOMAIN.items():
            vals = in_ctype(t, dom)
            tol = {"ulp": 1} if op == "Abs" else ctol(t)
            unary_case("complex", op, t, "values", vals, tolerance=tol)
    complex_special_cases()


def C(a, b):
    return (exact(a), exact(b))


def complex_special_cases():
    """Branch cuts, signed zeros, infinities and NaNs, written by hand
    (C99 Annex G and XLA CPU where they agree; differences are noted)."""
    L4 = mp.log(4)
    PI = mp.pi
    for t in COMPLEX:
        c = COMPLEX[t]
        r = lambda x: round_exact(c, from_mpf(x))  # noqa: E731
        pi, ln4, ln3 = r(PI), r(L4), r(mp.log(3))
        # Sqrt: the branch cut is the negative real axis; XLA gives +2i for -4 ± 0i.
        unary_case("complex_branch_cuts", "Sqrt", t, "branch_cut_and_zeros",
                   [C(-4, 0.0), C(-4, -0.0), C(4, -0.0), C(4, 0.0), C(0.0, 0.0), C(-0.0, 0.0), C(0.0, -0.0),
                    C(-0.0, -0.0), C(-9, 0.0)],
                   expected=[C(0.0, 2), C(0.0, 2), C(2, 0.0), C(2, 0.0), C(0.0, 0.0), C(0.0, 0.0), C(0.0, 0.0),
                             C(0.0, 0.0), C(0.0, 3)],
                   comment="docs/semantics-decisions.md: on the negative real axis Sqrt is +i·sqrt(|x|) whichever the sign of the zero imaginary part, and the imaginary part of a real result is +0 (as XLA CPU; C99 would give Sqrt(-4 - 0i) = -2i)")
        unary_case("complex_branch_cuts", "Sqrt", t, "infinities",
                   [C(-math.inf, 1), C(-math.inf, -1), C(math.inf, -1), C(1, math.inf), C(-1, -math.inf),
                    C(math.inf, 0.0), C(-math.inf, 0.0)],
                   expected=[C(0.0, math.inf), C(0.0, -math.inf), C(math.inf, -0.0), C(math.inf, math.inf),
                             C(math.inf, -math.inf), C(math.inf, 0.0), C(0.0, math.inf)],
                   comment="C99 Annex G csqrt special values, as XLA CPU")
        unary_case("complex_branch_cuts", "Sqrt", t, "nan_parts",
                   [C(math.inf, math.nan), C(math.nan, math.inf), C(math.nan, 0.0), C(1, math.nan)],
                   expected=[C(math.nan, math.nan)] * 4,
                   comment="docs/semantics-decisions.md: Sqrt of a value with a NaN part is (NaN, NaN), as XLA CPU (C99 would give inf ± i·inf for an infinite part)")
        # Log: keeps the sign of zero (C99 and XLA CPU)
        unary_case("complex_branch_cuts", "Log", t, "branch_cut_and_zeros",
                   [C(-4, 0.0), C(-4, -0.0), C(4, -0.0), C(0.0, 0.0), C(-0.0, 0.0), C(0.0, -0.0), C(-0.0, -0.0),
                    C(1, 0.0), C(1, -0.0)],
                   expected=[(ln4, pi), (ln4, neg_of(pi)), (ln4, NZERO), C(-math.inf, 0.0), (NINF, pi),
                             C(-math.inf, -0.0), (NINF, neg_of(pi)), C(0.0, 0.0), C(0.0, -0.0)],
                   comment="docs/semantics-decisions.md: Log keeps the sign of a zero imaginary part (Log(-4 - 0i) = ln 4 - πi); Log(±0 ± 0i) = -inf + i·atan2(±0, ±0) (C99, as XLA CPU); ln 4 and π rounded once")
        unary_case("complex_branch_cuts", "Log", t, "infinities_and_nan",
                   [C(-math.inf, 1), C(-math.inf, -1), C(math.inf, -1), C(1, math.inf), C(math.inf, 0.0),
                    C(-math.inf, 0.0), C(math.inf, math.nan), C(math.nan, math.inf), C(math.nan, 0.0)],
                   expected=[(INF, pi), (INF, neg_of(pi)), C(math.inf, -0.0), (INF, r(PI / 2)), C(math.inf, 0.0),
                             (INF, pi), C(math.nan, math.nan), C(math.nan, math.nan), C(math.nan, math.nan)],
                   comment="C99 Annex G clog for infinities; a NaN part gives (NaN, NaN) (docs/semantics-decisions.md, as XLA CPU; C99 would give +inf + NaN i for an infinite part)")
        unary_case("complex_branch_cuts", "Log1p", t, "branch_cut",
                   [C(-4, 0.0), C(-4, -0.0), C(-2, 0.0), C(-2, -0.0)],
                   expected=[(ln3, pi), (ln3, neg_of(pi)), (Fraction(0), pi), (Fraction(0), neg_of(pi))],
                   tolerance={"ulp": 1},
                   comment="Log1p(z) = Log(1 + z): the cut is x < -1 and the sign of a zero imaginary part chooses ±π (ln 3 and π rounded once; ±π must match in sign)")
        unary_case("complex_branch_cuts", "Log1p", t, "zeros",
                   [C(0.0, 0.0), C(0.0, -0.0), C(-0.0, 0.0), C(-1, 0.0)],
                   expected=[C(0.0, 0.0), C(0.0, -0.0), C(0.0, 0.0), C(-math.inf, 0.0)],
                   comment="Log1p(±0 ± 0i) = Log(1 ± 0i) = 0 ± 0i; Log1p(-1) = -inf (as XLA CPU)")
        if t == "c128":
            unary_case("complex", "Log1p", t, "near_the_unit_circle_around_minus_one",
                       [C(-0.3, -0.7), C(-0.2, 0.6)], tolerance=ctol(t),
                       comment="|1 + z| close to 1: Re Log1p(z) = ln|1 + z| is small and must not lose its digits to cancellation",
                       known_failing="the reference computes Re = 0.5·log1p(x(2 + x) + y²) with x(2+x) and y² rounded separately; they cancel (-0.51 + 0.49), leaving an error of about 24 ulp")
        # Abs: exact values, huge and tiny parts
        big = {"c64": [(1e38, 1e38), (3e38, 3e38), (1e-30, 1e-30), (3e-20, -4e-20)],
               "c128": [(1e308, 1e308), (-1.5e308, 1e308), (1e-300, 1e-300), (3e-200, -4e-200)]}[t]
        vals = in_ctype(t, big)
        unary_case("complex", "Abs", t, "huge_and_tiny_parts", vals, tolerance={"ulp": 1},
                   comment="|z| without intermediate overflow or underflow of re² + im²")
        unary_case("complex", "Abs", t, "exact_values",
                   [C(3, 4), C(-5, 0.0), C(0.0, -7), C(0.0, 0.0), C(-0.0, -0.0), C(math.inf, 1), C(1, -math.inf),
                    C(math.nan, 1), C(-8, 15)],
                   expected=[Fraction(5), Fraction(5), Fraction(7), Fraction(0), Fraction(0), INF, INF, NAN,
                             Fraction(17)])
        unary_case("complex", "Abs", t, "infinity_and_nan_part", [C(math.inf, math.nan), C(math.nan, -math.inf)],
                   expected=[NAN, NAN],
                   comment="XLA CPU gives NaN for |inf + NaN i| (C99 hypot would give inf); the document is silent, xlaref follows XLA CPU",
                   known_failing="the reference uses libm::hypot, which returns inf when one part is infinite and the other NaN")
        # Exp with large real parts
        e = lambda x, y: complex_truth("Exp", t, (exact(x), exact(y)))  # noqa: E731
        if t == "c64":
            vals = [C(89, 1), C(88.5, -2), C(-80, 1), C(-1000, 2)]
            comment = "e^89 overflows f32 but e^89·cos(1) does not: the result is finite where it should be"
        else:
            vals = [C(710, 0.7853981633974483), C(709.9, -2), C(-800, 1), C(-1000, 2)]
            comment = "e^710 overflows f64 but e^710·cos(π/4) does not (XLA CPU computes it finite)"
        exps = [complex_truth("Exp", t, v) for v in vals]
        kf = None
        if t == "c128":
            kf = ("the reference computes e^x·cos y as exp(x)·cos(y): exp(710) overflows to inf, so the finite "
                  "result 1.5796728482882e308·(1 + i) comes out as inf + inf i")
        unary_case("complex", "Exp", t, "large_real_parts", vals, expected=exps, tolerance=ctol(t), comment=comment,
                   known_failing=kf)
        unary_case("complex", "Exp", t, "special_values",
                   [C(0.0, 0.0), C(-math.inf, 1), C(-math.inf, -1), C(math.inf, -1), C(1, math.inf),
                    C(math.inf, math.nan), C(-math.inf, 0.0), C(math.inf, 0.0)],
                   expected=[C(1, 0.0), C(0.0, 0.0), C(0.0, -0.0), C(math.inf, -math.inf), C(math.nan, math.nan),
                             C(math.nan, math.nan), C(0.0, 0.0), C(math.inf, 0.0)],
                   comment="e^x·(cos y + i sin y) at infinities (as XLA CPU; C99 Annex G agrees except Exp(inf + NaN i) = ±inf + NaN i)")
        unary_case("complex", "Exp", t, "zero_imaginary_part_keeps_no_sign",
                   [C(-800, -0.0), C(1000, -0.0), C(0.0, -0.0), C(math.nan, 0.0)],
                   expected=[C(0.0, 0.0), C(math.inf, 0.0), C(1, 0.0), C(math.nan, 0.0)],
                   comment="XLA CPU: Exp(x - 0i) = e^x + 0i and Exp(NaN + 0i) = NaN + 0i (C99: e^x - 0i, NaN + 0i); the document is silent, xlaref follows XLA CPU",
                   known_failing="the reference returns (exp(x), -0) for Exp(x - 0i) and (NaN, NaN) for Exp(NaN + 0i)")
        # Tanh with large real parts
        vals = [C(1000, 1), C(-1000, 2), C(30, 0.5), C(-25, -1)] if t == "c128" else [C(1000, 1), C(-1000, 2), C(20, 0.5), C(-15, -1)]
        exps = []
        for v in vals:
            w = mp.tanh(mp.mpc(to_mpf(v[0]), to_mpf(v[1])))
            exps.append((round_c(c, w.real), round_c(c, w.imag) if abs(w.imag) > mp.mpf(2) ** -1200 else
                         signed_zero(w.imag < 0)))
        unary_case("complex", "Tanh", t, "large_real_parts", vals, expected=exps, tolerance=ctol(t),
                   comment="tanh(x + iy) → ±1 as |x| grows, without overflow")
        unary_case("complex", "Tanh", t, "special_values",
                   [C(0.0, 0.0), C(-0.0, 0.0), C(-math.inf, 1), C(-math.inf, -1), C(math.inf, -1), C(1, math.inf),
                    C(math.inf, 0.0)],
                   expected=[C(0.0, 0.0), C(-0.0, 0.0), C(-1, 0.0), C(-1, -0.0), C(1, -0.0), C(math.nan, math.nan),
                             C(1, 0.0)],
                   comment="C99 Annex G ctanh special values, as XLA CPU")
        unary_case("complex", "Tanh", t, "nan_and_negative_zero_parts",
                   [C(math.inf, math.nan), C(math.nan, 0.0), C(30, -0.0), C(-1000, -0.0), C(0.0, -0.0)],
                   expected=[C(1, 0.0), C(math.nan, 0.0), C(1, 0.0), C(-1, 0.0), C(0.0, 0.0)],
                   comment="XLA CPU: Tanh(inf + NaN i) = 1 + 0i (C99: 1 ± 0i), Tanh(NaN + 0i) = NaN + 0i (C99 too), and a -0 imaginary part of a real argument comes out +0 (C99: -0); the document is silent, xlaref follows XLA CPU",
                   known_failing="the reference gives (1, NaN) for Tanh(inf + NaN i), (NaN, NaN) for Tanh(NaN + 0i), and keeps -0 in Tanh(x - 0i)")
        unary_case("complex", "Expm1", t, "special_values",
                   [C(0.0, 0.0), C(-math.inf, 1), C(-math.inf, -1), C(math.inf, -1), C(1, math.inf),
                    C(-math.inf, 0.0)],
                   expected=[C(0.0, 0.0), C(-1, 0.0), C(-1, -0.0), C(math.inf, -math.inf), C(math.nan, math.nan),
                             C(-1, 0.0)],
                   comment="e^z - 1 at infinities, as XLA CPU")
        unary_case("complex", "Expm1", t, "nan_and_negative_zero_parts",
                   [C(math.nan, 0.0), C(-800, -0.0), C(1000, -0.0), C(0.0, -0.0)],
                   expected=[C(math.nan, 0.0), C(-1, 0.0), C(math.inf, 0.0), C(0.0, 0.0)],
                   comment="XLA CPU: Expm1(NaN + 0i) = NaN + 0i and Expm1(x - 0i) = (e^x - 1) + 0i; the document is silent, xlaref follows XLA CPU",
                   known_failing="the reference gives (NaN, NaN) for Expm1(NaN + 0i) and keeps -0 in Expm1(x - 0i)")
        # Sign
        unary_case("complex", "Sign", t, "special_values",
                   [C(0.0, 0.0), C(-0.0, 0.0), C(0.0, -0.0), C(-0.0, -0.0), C(-4, 0.0), C(4, -0.0), C(math.nan, 0.0),
                    C(1, math.nan), C(0.0, -2.5)],
                   expected=[C(0.0, 0.0), C(-0.0, 0.0), C(0.0, -0.0), C(-0.0, -0.0), C(-1, 0.0), C(1, -0.0),
                             C(math.nan, math.nan), C(math.nan, math.nan), C(0.0, -1)],
                   comment="Sign(z) = z / |z|; zero keeps its signs, a NaN part gives (NaN, NaN) (docs/semantics-decisions.md, as XLA CPU)")
        unary_case("complex", "Sign", t, "infinite_parts", [C(-math.inf, 1), C(math.inf, 0.0), C(1, math.inf)],
                   expected=[C(math.nan, 0.0), C(math.nan, 0.0), C(0.0, math.nan)],
                   comment="z / |z| with |z| = inf: inf/inf is NaN (as XLA CPU; the document is silent)")
        # Rsqrt = 1 / Sqrt(z)
        unary_case("complex_branch_cuts", "Rsqrt", t, "branch_cut",
                   [C(-4, 0.0), C(-4, -0.0), C(4, -0.0), C(4, 0.0), C(-0.25, 0.0)],
                   expected=[C(0.0, -0.5), C(0.0, -0.5), C(0.5, 0.0), C(0.5, 0.0), C(0.0, -2)],
                   tolerance={"abs": 0},
                   comment="Rsqrt(z) = 1 / Sqrt(z) (the document's definition), with Sqrt's branch cut: Rsqrt(-4 ± 0i) = 1 / 2i = -0.5i. The tolerance only lets +0 match -0. XLA CPU gives (-2.2e-8, -0.5) / (3.1e-17, -0.5) for -4 + 0i and +0.5i for -4 - 0i, inconsistent with its own Sqrt(-4 - 0i) = 2i: an XLA CPU deviation")
        unary_case("complex_branch_cuts", "Rsqrt", t, "zero_and_nan",
                   [C(0.0, 0.0), C(math.nan, 0.0), C(math.inf, math.nan)],
                   expected=[C(math.inf, math.nan), C(math.nan, math.nan), C(math.nan, math.nan)],
                   comment="1 / Sqrt(z) with C99 complex division: 1/(0 + 0i) = inf + NaN i (as XLA CPU); Sqrt(inf + NaN i) = NaN + NaN i, so Rsqrt is NaN + NaN i (XLA CPU gives 0 - 0i: an XLA CPU deviation from Rsqrt = 1/Sqrt)")
        unary_case("complex_branch_cuts", "Rsqrt", t, "infinity", [C(math.inf, 0.0), C(math.inf, -1)],
                   expected=[C(0.0, -0.0), C(0.0, 0.0)], tolerance={"abs": 0},
                   comment="1 / Sqrt(inf) = 0; the tolerance only lets +0 match -0 (the signs of these zeros differ between C99 division and XLA CPU)")


# ---------------------------------------------------------------------------
# Shapes, declared shapes, errors

def shape_cases():
    f = "shapes"
    emit(f, case("unary/Abs/f32/rank0", f"{XLA}: abs of a scalar", unary_module("Abs", "f32", []),
                 [typed("f32", [Raw("-2.5")], [])], typed("f32", [Raw("2.5")], [])))
    emit(f, case("unary/Sin/f64/rank0", f"{XLA}: sine of a scalar; expected exact result rounded once (mpmath)",
                 unary_module("Sin", "f64", []), [typed("f64", [Raw("1.0")], [])],
                 typed("f64", [enc_float("f64", real_truth("Sin", "f64", Fraction(1)))], []), {"ulp": 2}))
    emit(f, case("unary/IsFinite/f16/rank0", f"{XLA}: is-finite of a scalar", unary_module("IsFinite", "f16", []),
                 [typed("f16", ["inf"], [])], typed("pred", [False], [])))
    emit(f, case("unary/Not/pred/rank0", f"{XLA}: not of a scalar", unary_module("Not", "pred", []),
                 [typed("pred", [True], [])], typed("pred", [False], [])))
    emit(f, case("unary/Real/c128/rank0", f"{XLA}: real of a scalar", unary_module("Real", "c128", []),
                 [typed("c128", [[Raw("1.5"), Raw("-2.0")]], [])], typed("f64", [Raw("1.5")], [])))
    emit(f, case("unary/Neg/s32/rank2", f"{XLA}: negate keeps the dimensions", unary_module("Neg", "s32", [2, 3]),
                 [typed("s32", [Raw(str(x)) for x in [1, -2, 3, 0, 2147483647, -2147483648]], [2, 3])],
                 typed("s32", [Raw(str(x)) for x in [-1, 2, -3, 0, -2147483647, -2147483648]], [2, 3])))
    emit(f, case("unary/Abs/c64/rank2", f"{XLA}: abs of c64 is f32 with the same dimensions",
                 unary_module("Abs", "c64", [2, 2]),
                 [typed("c64", [[Raw("3"), Raw("4")], [Raw("0"), Raw("-2")], [Raw("-5"), Raw("12")], ["-0", "-0"]],
                        [2, 2])],
                 typed("f32", [Raw("5"), Raw("2"), Raw("13"), Raw("0")], [2, 2])))
    emit(f, case("unary/IsFinite/f32/rank3", f"{XLA}: is-finite gives pred with the same dimensions",
                 unary_module("IsFinite", "f32", [2, 1, 2]),
                 [typed("f32", [Raw("1"), "nan", "-inf", Raw("3.4028235e38")], [2, 1, 2])],
                 typed("pred", [True, False, False, True], [2, 1, 2])))
    emit(f, case("unary/Floor/f32/empty", "hand-derived: a zero-sized operand gives a zero-sized result",
                 unary_module("Floor", "f32", [0]), [typed("f32", [], [0])], typed("f32", [], [0])))
    emit(f, case("unary/Real/c128/empty", "hand-derived: a zero-sized complex operand gives a zero-sized real result",
                 unary_module("Real", "c128", [0, 3]), [{"shape": "c128[0,3]", "value": []}],
                 {"shape": "f64[0,3]", "value": []}))
    emit(f, case("unary/Clz/u8/empty", "hand-derived: zero-sized", unary_module("Clz", "u8", [2, 0]),
                 [{"shape": "u8[2,0]", "value": [[], []]}], {"shape": "u8[2,0]", "value": [[], []]}))
    # declared shapes
    emit(f, case("unary/IsFinite/f32/declared_shape", "hand-derived: IsFinite returns pred; a matching declared shape passes",
                 unary_module("IsFinite", "f32", [2], declared="pred[2]"), [typed("f32", [Raw("1"), "inf"])],
                 typed("pred", [True, False])))
    emit(f, case("unary/Abs/c64/declared_shape", "hand-derived: Abs of c64 is f32; a matching declared shape passes",
                 unary_module("Abs", "c64", [1], declared="f32[1]"), [typed("c64", [[Raw("3"), Raw("-4")]])],
                 typed("f32", [Raw("5")])))
    emit(f, case("unary/Abs/c64/declared_shape_mismatch", "hand-derived: Abs of c64 is f32, not c64",
                 unary_module("Abs", "c64", [1], declared="c64[1]"), [typed("c64", [[Raw("3"), Raw("-4")]])],
                 {"error": "does not match the inferred shape f32[1]"}))
    emit(f, case("unary/Imag/c128/declared_shape_mismatch", "hand-derived: Imag of c128 is f64",
                 unary_module("Imag", "c128", [1], declared="f32[1]"), [typed("c128", [[Raw("3"), Raw("-4")]])],
                 {"error": "does not match the inferred shape f64[1]"}))


REJECTS = [
    # (op, type, kinds text of the rule)
    ("Abs", "pred", "an integer, floating-point or complex type"),
    ("Neg", "pred", "an integer, floating-point or complex type"),
    ("Sign", "pred", "an integer, floating-point or complex type"),
    ("Ceil", "s32", "a floating-point type"), ("Floor", "s32", "a floating-point type"),
    ("Round", "u8", "a floating-point type"), ("RoundNearestEven", "s64", "a floating-point type"),
    ("Cbrt", "s32", "a floating-point type"), ("Erf", "s16", "a floating-point type"),
    ("Floor", "c64", "a floating-point type"), ("Ceil", "c128", "a floating-point type"),
    ("Round", "c64", "a floating-point type"), ("RoundNearestEven", "c128", "a floating-point type"),
    ("Cbrt", "c64", "a floating-point type"), ("Erf", "c128", "a floating-point type"),
    ("Floor", "pred", "a floating-point type"),
    ("Cos", "s32", "a floating-point or complex type"), ("Sin", "u32", "a floating-point or complex type"),
    ("Tan", "s8", "a floating-point or complex type"), ("Tanh", "s64", "a floating-point or complex type"),
    ("Exp", "s32", "a floating-point or complex type"), ("Expm1", "u16", "a floating-point or complex type"),
    ("Log", "s32", "a floating-point or complex type"), ("Log1p", "u64", "a floating-point or complex type"),
    ("Logistic", "s32", "a floating-point or complex type"), ("Sqrt", "s32", "a floating-point or complex type"),
    ("Rsqrt", "u8", "a floating-point or complex type"), ("Sqrt", "pred", "a floating-point or complex type"),
    ("Not", "f32", "pred or an integer type"), ("Not", "c64", "pred or an integer type"),
    ("Not", "bf16", "pred or an integer type"),
    ("PopulationCount", "f32", "an integer type"), ("PopulationCount", "pred", "an integer type"),
    ("Clz", "f32", "an integer type"), ("Clz", "pred", "an integer type"), ("Clz", "c128", "an integer type"),
    ("IsFinite", "s32", "a floating-point type"), ("IsFinite", "c64", "a floating-point type"),
    ("IsFinite", "pred", "a floating-point type"),
    ("Real", "s32", "a floating-point or complex type"), ("Imag", "s32", "a floating-point or complex type"),
    ("Real", "pred", "a floating-point or complex type"), ("Imag", "u64", "a floating-point or complex type"),
    ("Conj", "s32", "a floating-point or complex type"), ("Conj", "pred", "a floating-point or complex type"),
]

ZERO_ARG = {"pred": False, "c64": [Raw("0"), Raw("0")], "c128": [Raw("0"), Raw("0")]}


def error_cases():
    f = "errors"
    for op, t, kinds in REJECTS:
        arg = typed(t, [ZERO_ARG.get(t, Raw("0"))])
        emit(f, case(f"unary/{op}/{t}/rejected", f"hand-derived: {op} accepts {kinds} (the verifier's rule); "
                     "XLA also rejects it", unary_module(op, t, [1]), [arg],
                     {"error": f"operand has element type {t}; it must be {kinds}"}))
    two = {"computations": {"main": {"params": [{"name": "x", "shape": "f32[2]"}, {"name": "y", "shape": "f32[2]"}],
                                     "instructions": [{"name": "r", "op": "Abs", "operands": ["x", "y"]}]}}}
    emit(f, case("unary/Abs/two_operands", "hand-derived: a unary function takes one operand", two,
                 [typed("f32", [Raw("1"), Raw("2")]), typed("f32", [Raw("1"), Raw("2")])],
                 {"error": "takes 1 operand, got 2"}))
    none = {"computations": {"main": {"params": [],
                                      "instructions": [{"name": "r", "op": "Sin", "operands": []}]}}}
    emit(f, case("unary/Sin/no_operands", "hand-derived: a unary function takes one operand", none, [],
                 {"error": "takes 1 operand, got 0"}))
    tup = {"computations": {"main": {"params": [{"name": "x", "shape": "(f32[2], s32[])"}],
                                     "instructions": [{"name": "r", "op": "Neg", "operands": ["x"]}]}}}
    emit(f, case("unary/Neg/tuple_operand", "hand-derived: the operand of a unary function is an array", tup,
                 [{"shape": "(f32[2], s32[])", "value": {"tuple": [[Raw("1"), Raw("2")], Raw("3")]}}],
                 {"error": "operand must be an array, got (f32[2], s32[])"}))
    tup2 = {"computations": {"main": {"params": [{"name": "x", "shape": "f32[2]"}],
                                      "instructions": [{"name": "t", "op": "Tuple", "operands": ["x"]},
                                                       {"name": "r", "op": "Exp", "operands": ["t"]}]}}}
    emit(f, case("unary/Exp/tuple_instruction_operand", "hand-derived: the operand of a unary function is an array",
                 tup2, [typed("f32", [Raw("1"), Raw("2")])], {"error": "operand must be an array, got (f32[2])"}))
    tok = {"computations": {"main": {"params": [],
                                     "instructions": [{"name": "t", "op": "AfterAll", "operands": []},
                                                      {"name": "r", "op": "Not", "operands": ["t"]}]}}}
    emit(f, case("unary/Not/token_operand", "hand-derived: the operand of a unary function is an array", tok, [],
                 {"error": "operand must be an array, got token[]"}))


def main():
    real_float_cases()
    int_cases()
    complex_cases()
    shape_cases()
    error_cases()
    total = 0
    for file, cases in sorted(ALL_CASES.items()):
        total += write_cases(os.path.join(HERE, file + ".json"), cases)
    write_cases(os.path.join(HERE, "KNOWN_FAILING.json.txt"), KNOWN_FAILING)
    print(f"{total} cases in {len(ALL_CASES)} files, {len(KNOWN_FAILING)} known failing", file=sys.stderr)
    with open("/tmp/unary_report.txt", "w") as f:
        f.write("\n".join(REPORT) + "\n")


if __name__ == "__main__":
    main()
