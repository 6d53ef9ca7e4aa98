"""Shared helpers of the unary and convert case generators (not a case file).

Exact arithmetic for expected values: every float format is modelled
exactly (`round_exact` rounds a rational once, ties to even, into any of
the 17 element types' float formats), high-precision truths come from
mpmath, and XLA CPU runs through tools/xla_run_hlo.py.
"""
import json
import math
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from verifier_suite import outside_suite  # noqa: E402

import ml_dtypes
import mpmath
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "c64", "c128",
         "f8e4m3fn", "f8e5m2"]
NP = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
      "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
      "c64": np.complex64, "c128": np.complex128,
      "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}
FLOATS = ["f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2"]
NARROW = ["f16", "bf16", "f8e4m3fn", "f8e5m2"]
SIGNED = ["s8", "s16", "s32", "s64"]
UNSIGNED = ["u8", "u16", "u32", "u64"]
INTS = SIGNED + UNSIGNED
COMPLEX = {"c64": "f32", "c128": "f64"}
WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f8e4m3fn": 8, "f8e5m2": 8,
         "s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

# (mantissa bits, minimum normal exponent, largest finite, has infinity)
FORMAT = {
    "f16": (10, -14, Fraction(65504), True),
    "bf16": (7, -126, Fraction(2**128 - 2**120), True),
    "f32": (23, -126, Fraction(2**128 - 2**104), True),
    "f64": (52, -1022, Fraction(2**1024 - 2**971), True),
    "f8e4m3fn": (3, -6, Fraction(448), False),
    "f8e5m2": (2, -14, Fraction(57344), True),
}

XLA = "XLA CPU (jax 0.10.2)"


class Special:
    """A non-finite value or signed zero, exactly: 'nan', '-nan', 'inf', '-inf', '-0'."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Special) and other.name == self.name

    def __repr__(self):
        return self.name


NAN, NNAN, INF, NINF, NZERO = (Special(n) for n in ("nan", "-nan", "inf", "-inf", "-0"))


def int_range(t):
    w = WIDTH[t]
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t in SIGNED else (0, (1 << w) - 1)


def wrap(t, v):
    """Two's complement wraparound of an integer into type t."""
    w = WIDTH[t]
    v &= (1 << w) - 1
    if t in SIGNED and v >> (w - 1):
        v -= 1 << w
    return v


# ---------------------------------------------------------------------------
# Exact float model: a value is a Fraction, or a Special.

def round_exact(t, r):
    """Rounds a Fraction once into float type t (ties to even). Returns a
    Fraction (zero keeps its sign as NZERO), or a Special on overflow."""
    if isinstance(r, Special):
        return r
    m, emin, fmax, has_inf = FORMAT[t]
    if r == 0:
        return Fraction(0)
    neg = r < 0
    a = -r if neg else r
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    q = Fraction(2) ** (e - m)
    n = a / q
    fl = n.numerator // n.denominator
    rem = n - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1):
        fl += 1
    res = fl * q
    if res > fmax:
        return (NINF if neg else INF) if has_inf else (NNAN if neg else NAN)
    if res == 0:
        return NZERO if neg else Fraction(0)
    return -res if neg else res


def value_of(t, x):
    """The exact value of a numpy float scalar of type t."""
    f = float(x)
    if math.isnan(f):
        return NNAN if np.signbit(f) else NAN
    if math.isinf(f):
        return NINF if f < 0 else INF
    if f == 0 and np.signbit(f):
        return NZERO
    return Fraction(f)


def bits_of(t, x):
    return int(np.array([x], dtype=NP[t]).view(UINT[WIDTH[t]])[0])


def from_bits(t, b):
    return np.array([b], dtype=UINT[WIDTH[t]]).view(NP[t])[0]


def to_float(v):
    """Special/Fraction -> Python float (exact for every format up to f64)."""
    if isinstance(v, Special):
        return {"nan": math.nan, "-nan": -math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}[v.name]
    return float(v)


def exact(v):
    """A Python number / Special / Fraction -> Fraction or Special (no rounding)."""
    if isinstance(v, (Special, Fraction)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return NNAN if math.copysign(1, v) < 0 else NAN
        if math.isinf(v):
            return INF if v > 0 else NINF
        if v == 0 and math.copysign(1, v) < 0:
            return NZERO
    return Fraction(v)


def np_scalar(t, v):
    """Special/Fraction/number/hex string -> numpy scalar of float type t, exactly."""
    if isinstance(v, str):
        return from_bits(t, int(v, 16))
    v = exact(v)
    if isinstance(v, Special):
        if v.name in ("nan", "-nan"):
            if t == "f8e4m3fn":
                b = 0x7F
            else:
                b = bits_of(t, np.array([math.nan], dtype=NP[t])[0]) & ~(1 << (WIDTH[t] - 1))
            return from_bits(t, b | ((1 << (WIDTH[t] - 1)) if v.name == "-nan" else 0))
        assert not (t == "f8e4m3fn" and v.name in ("inf", "-inf")), "f8e4m3fn has no infinity"
        return np.array([to_float(v)], dtype=NP[t])[0]
    assert round_exact(t, v) == v or v == 0, f"{v} is not exact in {t}"
    x = np.array([float(v)], dtype=NP[t])[0]
    assert value_of(t, x) == v, (t, v, x)
    return x


def is_subnormal(t, v):
    if isinstance(v, Special) or v == 0:
        return False
    _, emin, _, _ = FORMAT[t]
    return abs(v) < Fraction(2) ** emin


# ---------------------------------------------------------------------------
# Writing JSON

class Raw:
    """A JSON number written as the given text."""

    def __init__(self, text):
        self.text = text


def significant_digits(text):
    mantissa = text.lower().split("e")[0].replace("-", "").replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) or 1


def shortest(t, v):
    """The value's exact decimal when it is short (448, 1.25), else the
    shortest decimal that rounds once into type t as exactly v."""
    f = float(v)
    if t == "f64":
        return Raw(repr(f))
    if Fraction(repr(f)) == v and significant_digits(repr(f)) <= 6:
        return Raw(repr(f))
    for p in range(1, 18):
        s = f"{f:.{p - 1}e}"
        if round_exact(t, Fraction(s)) == v:
            pretty = repr(float(s))
            if round_exact(t, Fraction(pretty)) == v:
                return Raw(pretty)
            return Raw(s)
    return Raw(repr(f))


def enc_float(t, v):
    if isinstance(v, Special):
        return v.name
    if v == 0:
        return Raw("0")
    return shortest(t, v)


def enc_int(v):
    v = int(v)
    return str(v) if abs(v) > 2**53 else Raw(str(v))


def enc(t, x):
    """A numpy scalar (or exact value) of type t -> a JSON element."""
    if t == "pred":
        return bool(x)
    if t in INTS:
        return enc_int(x)
    if t in COMPLEX:
        c = COMPLEX[t]
        if isinstance(x, tuple):
            return [enc_float(c, p if not isinstance(p, (np.floating, float)) else value_of(c, p)) for p in x]
        return [enc_float(c, value_of(c, np.real(x))), enc_float(c, value_of(c, np.imag(x)))]
    if isinstance(x, (Special, Fraction)):
        return enc_float(t, x)
    return enc_float(t, value_of(t, x))


def shape_text(t, dims):
    return f"{t}[{','.join(str(d) for d in dims)}]"


def nest(flat, dims):
    if not dims:
        return flat[0]
    if len(dims) == 1:
        return list(flat)
    inner = int(np.prod(dims[1:])) if dims[1:] else 1
    return [nest(flat[i * inner:(i + 1) * inner], dims[1:]) for i in range(dims[0])]


def typed(t, flat_json, dims=None):
    dims = [len(flat_json)] if dims is None else dims
    return {"shape": shape_text(t, dims), "value": nest(flat_json, dims)}


def dumps(x, indent=0):
    """Compact JSON: objects one key per line down to the case level,
    everything below written on one line."""
    if isinstance(x, Raw):
        return x.text
    if isinstance(x, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + dumps(v) for k, v in x.items()) + "}"
    if isinstance(x, list):
        return "[" + ", ".join(dumps(v) for v in x) + "]"
    return json.dumps(x, ensure_ascii=False)


def write_cases(path, cases):
    cases = outside_suite(path, cases)
    if not cases:
        return 0
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    lines = ['{"format": "xla-json/1", "cases": [']
    for i, c in enumerate(cases):
        body = ",\n".join("  " + json.dumps(k) + ": " + dumps(v) for k, v in c.items())
        lines.append("{\n" + body + "\n}" + ("," if i + 1 < len(cases) else ""))
    lines.append("]}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(cases)


def unary_module(op, t, dims, declared=None):
    instr = {"name": "r", "op": op, "operands": ["x"]}
    if declared:
        instr["shape"] = declared
    return {"computations": {"main": {"params": [{"name": "x", "shape": shape_text(t, dims)}],
                                      "instructions": [instr]}}}


def case(name, source, module, args, expected, tolerance=None, comment=None, implementation_defined=False):
    c = {"name": name, "source": source}
    if comment:
        c["comment"] = comment
    c["module"] = module
    c["args"] = args
    c["expected"] = expected
    if tolerance:
        c["tolerance"] = tolerance
    if implementation_defined:
        c["implementation_defined"] = True
    return c


# ---------------------------------------------------------------------------
# XLA

_run_hlo = None


def run_hlo(text, args):
    global _run_hlo
    if _run_hlo is None:
        import io
        import contextlib
        with contextlib.redirect_stderr(io.StringIO()):
            from xla_run_hlo import run_hlo as r
        _run_hlo = r
    return _run_hlo(text, args)


# ---------------------------------------------------------------------------
# mpmath <-> exact

mpmath.mp.prec = 400


def to_mpf(v):
    if isinstance(v, Special):
        return mpmath.mpf(v.name.replace("-0", "0")) if v.name != "-0" else mpmath.mpf(0)
    return mpmath.mpf(v.numerator) / v.denominator


def from_mpf(x):
    """An mpmath real (finite) -> Fraction, exactly."""
    if mpmath.isnan(x) or mpmath.isinf(x):
        raise ValueError(x)
    sign, man, exp, _ = mpmath.mpf(x)._mpf_
    man = -man if sign else man
    return Fraction(man) * Fraction(2) ** exp if exp >= 0 else Fraction(man, 2 ** (-exp))


def ulps(t, a, b):
    """Distance in units in the last place of type t between two exact values."""
    if isinstance(a, Special) or isinstance(b, Special):
        if a == b:
            return 0
        az = isinstance(a, Special) and a.name == "-0"
        bz = isinstance(b, Special) and b.name == "-0"
        if (az and b == 0) or (bz and a == 0) or (az and bz):
            return 0
        return math.inf
    ka = _order_key(t, a)
    kb = _order_key(t, b)
    return abs(ka - kb)


def _order_key(t, v):
    x = np_scalar(t, v)
    b = bits_of(t, x)
    w = WIDTH[t]
    sign = 1 << (w - 1)
    return -(b & (sign - 1)) if b & sign else b
