"""Generates the oracle cases of the CHLO extension ops (docs/format.md,
"CHLO extension ops"): each op run on XLA's CPU backend through JAX
(`jax.jit` of the `jax.lax` / `jax.numpy` function, which JAX lowers to the
`chlo.*` op), XLA's outputs as the expected values.

Tolerances are measured, not guessed: XLA's special functions are
approximations (Lanczos, Giles, Cephes, Euler-Maclaurin evaluated in f32
for f16/bf16/f32), so each `values` case carries the ulp distance of XLA's
worst element from the exact value (mpmath at 200 bits) plus one (the
reference rounds the exact value once), and, where the function has zeros,
an absolute bound (twice XLA's worst absolute error there, rounded up to a
power of two: an engine as accurate as XLA may err the other way). Special values (poles, domain
errors, infinities, NaN, signed zeros) are in `special_values` cases,
compared exactly. Inputs XLA CPU would flush (f32/f64/bf16 subnormals) are
not run.

Run: python3 oracle-cases/chlo/generate.py (needs jax 0.10.2, mpmath).
"""
import math
import os
import sys

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
from jax import lax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "unary"))
import casegen as cg  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
mpmath.mp.prec = 200

XLA = f"XLA CPU (jax {jax.__version__})"
TYPES = ["f16", "bf16", "f32", "f64"]
F8 = ["f8e4m3fn", "f8e5m2"]
# Types whose subnormals XLA CPU flushes (f16 and f8 are computed in f32,
# where their subnormals are normal numbers).
FLUSHED = ["bf16", "f32", "f64"]
NP = cg.NP
inf, nan = float("inf"), float("nan")


def truth_unary(op, x):
    x = mpmath.mpf(x)
    if op == "Lgamma":
        return mpmath.log(abs(mpmath.gamma(x)))
    if op == "Digamma":
        return mpmath.digamma(x)
    if op == "ErfInv":
        return mpmath.erfinv(x)
    if op == "Erfc":
        return mpmath.erfc(x)
    if op == "BesselI1e":
        return mpmath.besseli(1, x) * mpmath.exp(-abs(x))
    f = {"Sinh": mpmath.sinh, "Cosh": mpmath.cosh, "Asin": mpmath.asin, "Acos": mpmath.acos, "Atan": mpmath.atan,
         "Asinh": mpmath.asinh, "Acosh": mpmath.acosh, "Atanh": mpmath.atanh}[op]
    return f(x)


def truth_binary(op, a, b):
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    if op == "Zeta":
        return mpmath.zeta(a, b)
    if op == "Polygamma":
        return mpmath.psi(int(a), b)
    raise ValueError(op)


JAX_UNARY = {
    "Sinh": lax.sinh, "Cosh": lax.cosh, "Asin": lax.asin, "Acos": lax.acos, "Atan": lax.atan, "Asinh": lax.asinh,
    "Acosh": lax.acosh, "Atanh": lax.atanh, "ErfInv": lax.erf_inv, "Erfc": lax.erfc, "Lgamma": lax.lgamma,
    "Digamma": lax.digamma, "BesselI1e": lax.bessel_i1e, "IsInf": jnp.isinf, "IsPosInf": jnp.isposinf,
    "IsNegInf": jnp.isneginf,
}
JAX_BINARY = {"NextAfter": lax.nextafter, "Polygamma": lax.polygamma, "Zeta": lax.zeta}
JAX_NAME = {"Sinh": "lax.sinh", "Cosh": "lax.cosh", "Asin": "lax.asin", "Acos": "lax.acos", "Atan": "lax.atan",
            "Asinh": "lax.asinh", "Acosh": "lax.acosh", "Atanh": "lax.atanh", "ErfInv": "lax.erf_inv",
            "Erfc": "lax.erfc", "Lgamma": "lax.lgamma", "Digamma": "lax.digamma", "BesselI1e": "lax.bessel_i1e",
            "IsInf": "jnp.isinf", "IsPosInf": "jnp.isposinf", "IsNegInf": "jnp.isneginf",
            "NextAfter": "lax.nextafter", "Polygamma": "lax.polygamma", "Zeta": "lax.zeta"}


def finfo(t):
    import ml_dtypes
    return ml_dtypes.finfo(NP[t])


def run(fn, *args):
    return np.asarray(jax.jit(fn)(*args))


def representable(t, xs):
    """The inputs as values of t, without duplicates and without subnormals
    (XLA CPU flushes them for f32/f64/bf16; f16 ones are kept)."""
    out = []
    for x in xs:
        v = NP[t](x)
        f = float(v)
        if t in FLUSHED and f != 0 and math.isfinite(f) and abs(f) < float(finfo(t).tiny):
            continue
        if any((float(o) == f and math.copysign(1, float(o)) == math.copysign(1, f)) or (math.isnan(f) and math.isnan(float(o))) for o in out):
            continue
        out.append(v)
    return out


def ulp_error(t, got, exact):
    """|got − exact| in units of t's spacing at exact (never below the
    smallest subnormal spacing)."""
    info = finfo(t)
    e = max(mpmath.floor(mpmath.log(abs(exact), 2)) if exact != 0 else -10000, math.log2(float(info.tiny)))
    spacing = mpmath.mpf(2) ** (int(e) - (info.nmant))
    return float(abs(mpmath.mpf(float(got)) - exact) / spacing)


def module(op, t, n, arity, out_t=None):
    params = [{"name": p, "shape": f"{t}[{n}]"} for p in (["x"] if arity == 1 else ["a", "b"])]
    return {"computations": {"main": {"params": params,
                                      "instructions": [{"name": "r", "op": op, "operands": [p["name"] for p in params]}]}}}


def enc_list(t, values):
    return [cg.enc(t, v) for v in values]


def split(op, t, xs, outs, truths):
    """Splits elements into exact specials (undefined or non-finite results,
    exact zeros) and approximated values; drops the elements whose exact
    result is subnormal in f32/f64/bf16 (XLA CPU flushes those)."""
    special, ordinary = [], []
    tiny = float(finfo(t).tiny)
    for i, (y, tr) in enumerate(zip(outs, truths)):
        fy = float(y)
        if tr is not None and mpmath.isfinite(tr) and tr != 0 and abs(tr) < tiny and t in FLUSHED:
            continue
        if tr is None or not math.isfinite(fy) or not mpmath.isfinite(tr) or (tr == 0 and fy == 0):
            special.append(i)
        else:
            ordinary.append(i)
    return special, ordinary


def tolerance_for(t, outs, truths, idx, near_zero_abs):
    worst_ulp, worst_abs = 0.0, 0.0
    for i in idx:
        u = ulp_error(t, outs[i], truths[i])
        if near_zero_abs is not None and abs(truths[i]) < near_zero_abs:
            worst_abs = max(worst_abs, float(abs(mpmath.mpf(float(outs[i])) - truths[i])))
        else:
            worst_ulp = max(worst_ulp, u)
    tol = {"ulp": int(math.ceil(worst_ulp)) + 1}
    if worst_abs > 0:
        # the next power of two above twice XLA's worst absolute error: an
        # engine as accurate as XLA may err the other way
        tol["abs"] = float(2.0 ** math.ceil(math.log2(2 * worst_abs * 1.01)))
    return tol, worst_ulp, worst_abs


def unary_cases(op, inputs_for, comment, near_zero_abs=None, complex_inputs=None):
    cases = []
    for t in TYPES + F8:
        xs = representable(t, inputs_for(t))
        arr = np.array(xs, dtype=NP[t])
        try:
            outs = list(run(JAX_UNARY[op], arr))
        except Exception as e:  # noqa: BLE001
            print(op, t, "not accepted by XLA:", str(e).splitlines()[0][:100])
            continue
        truths = []
        for x, y in zip(xs, outs):
            fx = float(x)
            if not math.isfinite(fx):
                truths.append(None)
                continue
            try:
                tr = truth_unary(op, fx)
                truths.append(tr if mpmath.im(tr) == 0 else None)
            except (ValueError, ZeroDivisionError):
                truths.append(None)
        special, ordinary = split(op, t, xs, outs, truths)
        src = f"{XLA}: jax.{JAX_NAME[op]} (chlo) on {t}"
        if ordinary:
            tol, wu, wa = tolerance_for(t, outs, truths, ordinary, near_zero_abs)
            n = len(ordinary)
            why = (f"{comment} XLA's worst element is {wu:.1f} ulp from the exact value (mpmath)"
                   + (f", {wa:.2g} absolute near a zero of the function" if wa else "")
                   + "; the tolerance is that plus one ulp" + (" and twice that absolute error." if wa else "."))
            cases.append(cg.case(f"chlo/{op}/{t}/values", src, module(op, t, n, 1),
                                 [cg.typed(t, enc_list(t, [xs[i] for i in ordinary]))],
                                 cg.typed(t, enc_list(t, [outs[i] for i in ordinary])), tolerance=tol, comment=why))
        if special:
            n = len(special)
            cases.append(cg.case(f"chlo/{op}/{t}/special_values", src, module(op, t, n, 1),
                                 [cg.typed(t, enc_list(t, [xs[i] for i in special]))],
                                 cg.typed(t, enc_list(t, [outs[i] for i in special])),
                                 comment="poles, domain edges, infinities, NaN, signed zeros, underflow and overflow: exact"))
    return cases


CX_TRUTH = {"Sinh": mpmath.sinh, "Cosh": mpmath.cosh, "Asin": mpmath.asin, "Acos": mpmath.acos, "Atan": mpmath.atan,
            "Asinh": mpmath.asinh, "Acosh": mpmath.acosh, "Atanh": mpmath.atanh}


def cx_truth(op, re, im):
    """The exact value; a zero part is nudged by 1e-1000 towards its sign,
    so that on a branch cut mpmath takes the side C99 takes. XLA's Asin,
    Acos, Asinh and Acosh do not see the sign of zero (-0 counts as +0:
    docs/semantics-decisions.md), so for them every zero is nudged up."""
    tiny = mpmath.mpf("1e-1000")
    unsigned = op in ("Asin", "Acos", "Asinh", "Acosh")
    nudge = lambda v: mpmath.mpf(v) if v != 0 else (tiny if unsigned or math.copysign(1, v) > 0 else -tiny)  # noqa: E731
    return CX_TRUTH[op](mpmath.mpc(nudge(re), nudge(im)))


WORST = {}


def complex_cases(op, zs, skip=lambda z: False, types=(("c64", "f32"), ("c128", "f64")), kind=""):
    """c64 and c128: finite values with a tolerance per part (ulps of the
    part, and an absolute bound for parts far below the modulus, which carry
    the modulus' error), and non-finite arguments exactly. `kind` prefixes
    the case names (`corner_values`, ...)."""
    cases = []
    for t, part_t in types:
        arr = np.array(zs, dtype=NP[t])
        outs = list(run(JAX_UNARY[op], arr))
        ordinary, special = [], []
        worst_ulp, worst_abs = 0.0, 0.0
        tiny = float(finfo(part_t).tiny)
        for i, (z, w) in enumerate(zip(arr, outs)):
            if skip(complex(z)):
                continue
            finite_in = math.isfinite(z.real) and math.isfinite(z.imag)
            finite_out = math.isfinite(w.real) and math.isfinite(w.imag)
            if not (finite_in and finite_out):
                special.append(i)
                continue
            if z.real == 0 and z.imag == 0:
                special.append(i)
                continue
            exact = cx_truth(op, float(z.real), float(z.imag))
            parts = [(float(w.real), mpmath.re(exact)), (float(w.imag), mpmath.im(exact))]
            if any(tr != 0 and abs(tr) < tiny for _, tr in parts):
                continue  # a subnormal part: XLA CPU flushes it
            ordinary.append(i)
            modulus = abs(exact)
            for got, tr in parts:
                if abs(tr) < modulus * 1e-3 or tr == 0:
                    worst_abs = max(worst_abs, float(abs(mpmath.mpf(got) - tr)))
                else:
                    u = ulp_error(part_t, got, tr)
                    if u > worst_ulp:
                        WORST[(op, t)] = (complex(z), complex(w), complex(exact), u)
                    worst_ulp = max(worst_ulp, u)
        src = f"{XLA}: jax.{JAX_NAME[op]} (chlo) on {t}"
        if ordinary:
            tol = {"ulp": int(math.ceil(worst_ulp)) + 1}
            if worst_abs > 0:
                tol["abs"] = float(2.0 ** math.ceil(math.log2(2 * worst_abs * 1.01)))
            why = (f"XLA's worst part is {worst_ulp:.1f} ulp from the exact value (mpmath); parts below 1e-3 of the modulus "
                   f"are {worst_abs:.2g} off at worst (they carry the modulus' rounding error); the tolerance is that plus one ulp.")
            cases.append(cg.case(f"chlo/{op}/{t}/{kind}values", src, module(op, t, len(ordinary), 1),
                                 [cg.typed(t, [cg.enc(t, arr[i]) for i in ordinary])],
                                 cg.typed(t, [cg.enc(t, outs[i]) for i in ordinary]), tolerance=tol, comment=why))
        if special:
            cases.append(cg.case(f"chlo/{op}/{t}/{kind}special_values", src, module(op, t, len(special), 1),
                                 [cg.typed(t, [cg.enc(t, arr[i]) for i in special])],
                                 cg.typed(t, [cg.enc(t, outs[i]) for i in special]),
                                 comment="infinite and NaN parts (C99 Annex G's special values where XLA follows them): exact"))
    return cases


# Corners found by differential fuzzing (xlaref fuzz --seed 29), on XLA CPU:
# Acosh on the cut left of -1 with a -0 imaginary part at magnitudes where
# the engines switch to the asymptotic ln(2z) (XLA: + pi i, as at -2 - 0i);
# Asin and Acos of +-inf + NaN i, where C99 leaves the infinity's sign open.
CX_CORNERS = {
    "Acosh": [complex(-5.443832637775661e235, -0.0), complex(-1.7976931348623157e308, -0.0), complex(-1e200, 0.0),
              complex(-1e151, -0.0), complex(-2.0, -0.0)],
    "Asin": [complex(inf, nan), complex(-inf, nan)],
    "Acos": [complex(inf, nan), complex(-inf, nan)],
}

# Arguments with a subnormal part next to the branch points +-1 (+-i for
# Asinh): XLA CPU flushes subnormals, so the expected values are mpmath's.
# The exact parts there are +-2^-537 = sqrt(2^-1074) (and pi/2, pi).
TINY = 5e-324
SUBNORMAL_CORNERS = {
    "Asin": [complex(1.0, TINY), complex(-1.0, TINY), complex(1.0, -TINY)],
    "Acos": [complex(1.0, TINY), complex(-1.0, TINY), complex(1.0, -TINY)],
    "Asinh": [complex(TINY, 1.0), complex(TINY, -1.0), complex(-TINY, -1.0), complex(-TINY, 1.0)],
    "Acosh": [complex(1.0, TINY), complex(-1.0, TINY), complex(1.0, -TINY)],
}


def subnormal_corner_cases(op, zs):
    """c128 values from mpmath at 3000 bits (far beyond the cancellation at
    the branch points: 4000 bits give the same doubles), rounded to f64."""
    with mpmath.workprec(3000):
        exact = [cx_truth(op, z.real, z.imag) for z in zs]
        parts = [(float(mpmath.re(w)), float(mpmath.im(w))) for w in exact]
    return [cg.case(f"chlo/{op}/c128/subnormal_corner_values",
                    f"mpmath {mpmath.__version__} at 3000 bits, rounded to f64 (XLA CPU flushes the subnormal part: "
                    "it computes the value at a zero part instead); found by xlaref fuzz --seed 29",
                    module(op, "c128", len(zs), 1),
                    [cg.typed("c128", [cg.enc("c128", (z.real, z.imag)) for z in zs])],
                    cg.typed("c128", [cg.enc("c128", p) for p in parts]), tolerance={"ulp": 4},
                    comment="a subnormal part next to a branch point: the exact parts are about sqrt(2^-1074) = 2^-537; "
                            "before the fix the reference's square roots lost them to underflow (NaN, inf) and the fast "
                            "engine's A - 1 (0); 4 ulps of each part, about the tolerance model's 8u|z| here")]


def zeta_underflow_cases():
    """Zeta whose every term underflows: 0 (the fast engine's Euler-Maclaurin
    factors gave inf * 0 = NaN; found by xlaref fuzz --seed 29)."""
    cases = []
    pairs = [(1.6746823e16, 3.4028235e38), (1e10, 3e10)]
    for t in ("f32", "f64"):
        a = np.array([p[0] for p in pairs], dtype=NP[t])
        b = np.array([p[1] for p in pairs], dtype=NP[t])
        outs = list(run(JAX_BINARY["Zeta"], a, b))
        for (x, q), y in zip(zip(a, b), outs):
            # mpmath: zeta(x, q) < q^-x (1 + q/(x-1)), far below any subnormal
            bound = mpmath.power(mpmath.mpf(float(q)), -mpmath.mpf(float(x))) * (1 + mpmath.mpf(float(q)) / (float(x) - 1))
            assert float(bound) == 0.0 and float(y) == 0.0, (x, q, y)
        cases.append(cg.case(f"chlo/Zeta/{t}/underflow", f"{XLA}: jax.lax.zeta (chlo) on {t}; mpmath confirms the sum underflows to 0",
                             module("Zeta", t, len(pairs), 2),
                             [cg.typed(t, enc_list(t, list(a))), cg.typed(t, enc_list(t, list(b)))],
                             cg.typed(t, enc_list(t, outs)),
                             comment="huge x and q > 1: every term (q + k)^-x underflows, so the value is 0, exactly"))
    return cases


def predicate_cases(op):
    cases = []
    for t in TYPES + ["f8e4m3fn", "f8e5m2"]:
        xs = representable(t, [0.0, -0.0, 1.0, -2.5, inf, -inf, nan, 1e4, -1e4, 448.0])
        arr = np.array(xs, dtype=NP[t])
        outs = list(run(JAX_UNARY[op], arr))
        cases.append(cg.case(f"chlo/{op}/{t}/values", f"{XLA}: jax.{JAX_NAME[op]} on {t}", module(op, t, len(xs), 1),
                             [cg.typed(t, enc_list(t, xs))], cg.typed("pred", [bool(o) for o in outs])))
    return cases


def binary_cases(op, pairs_for, comment, near_zero_abs=None):
    cases = []
    for t in TYPES + F8:
        pairs = []
        for a, b in pairs_for(t):
            va, vb = NP[t](a), NP[t](b)
            pairs.append((va, vb))
        a = np.array([p[0] for p in pairs], dtype=NP[t])
        b = np.array([p[1] for p in pairs], dtype=NP[t])
        try:
            outs = list(run(JAX_BINARY[op], a, b))
        except Exception as e:  # noqa: BLE001
            print(op, t, "not accepted by XLA:", str(e).splitlines()[0][:100])
            continue
        truths = []
        for (x, y) in pairs:
            fx, fy = float(x), float(y)
            if not (math.isfinite(fx) and math.isfinite(fy)):
                truths.append(None)
                continue
            try:
                tr = truth_binary(op, fx, fy)
                truths.append(tr if mpmath.im(tr) == 0 else None)
            except (ValueError, ZeroDivisionError, TypeError):
                truths.append(None)
        special, ordinary = split(op, t, pairs, outs, truths)
        src = f"{XLA}: jax.{JAX_NAME[op]} (chlo) on {t}"
        for kind, idx in (("values", ordinary), ("special_values", special)):
            if not idx:
                continue
            extra = {}
            if kind == "values":
                tol, wu, wa = tolerance_for(t, outs, truths, idx, near_zero_abs)
                extra = {"tolerance": tol, "comment": f"{comment} XLA's worst element is {wu:.1f} ulp from the exact value (mpmath); the tolerance is that plus one ulp."}
            else:
                extra = {"comment": "poles, domain errors, infinities, NaN: exact"}
            cases.append(cg.case(f"chlo/{op}/{t}/{kind}", src, module(op, t, len(idx), 2),
                                 [cg.typed(t, enc_list(t, [pairs[i][0] for i in idx])),
                                  cg.typed(t, enc_list(t, [pairs[i][1] for i in idx]))],
                                 cg.typed(t, enc_list(t, [outs[i] for i in idx])), **extra))
    return cases


def nextafter_cases():
    cases = []
    for t in TYPES + ["f8e4m3fn", "f8e5m2"]:
        big = float(finfo(t).max)
        pairs = [(0.0, 1.0), (0.0, -1.0), (-0.0, 0.0), (0.0, -0.0), (1.0, 2.0), (1.0, 0.0), (-1.0, 5.0), (-1.0, -5.0),
                 (big, inf), (inf, 0.0), (-inf, 0.0), (nan, 1.0), (1.0, nan), (3.0, 3.0), (big, 0.0), (2.0, -inf)]
        a = np.array([p[0] for p in pairs], dtype=NP[t])
        b = np.array([p[1] for p in pairs], dtype=NP[t])
        try:
            outs = list(run(JAX_BINARY["NextAfter"], a, b))
        except Exception as e:  # noqa: BLE001
            print("NextAfter", t, "not run on XLA:", str(e).splitlines()[0])
            continue
        # Results XLA CPU would flush (f32/f64 subnormal results) are kept:
        # NextAfter is integer arithmetic on the bits, nothing is flushed.
        cases.append(cg.case(f"chlo/NextAfter/{t}/values", f"{XLA}: jax.lax.nextafter on {t}", module("NextAfter", t, len(pairs), 2),
                             [cg.typed(t, enc_list(t, list(a))), cg.typed(t, enc_list(t, list(b)))],
                             cg.typed(t, enc_list(t, outs)),
                             comment="bitwise: the neighbour of a towards b, the smallest subnormal from a zero, b itself when equal, NaN if either is NaN"))
    return cases


def error_cases():
    out = []
    for op in ["Lgamma", "ErfInv", "IsInf"]:
        out.append(cg.case(f"chlo/{op}/errors/complex", "hand-derived: XLA's math library accepts only real floating-point operands",
                           module(op, "c64", 2, 1), [cg.typed("c64", [[1, 0], [2, 0]])], {"error": "real floating-point"}))
    out.append(cg.case("chlo/Lgamma/errors/integer", "hand-derived: XLA's math library accepts only real floating-point operands",
                       module("Lgamma", "s32", 2, 1), [cg.typed("s32", [1, 2])], {"error": "real floating-point"}))
    out.append(cg.case("chlo/Zeta/errors/integer", "hand-derived: XLA's math library accepts only real floating-point operands",
                       module("Zeta", "s32", 1, 2), [cg.typed("s32", [2]), cg.typed("s32", [1])], {"error": "real floating-point"}))
    out.append(cg.case("chlo/Asin/errors/integer", "hand-derived: the inverse trigonometric functions take floating-point or complex operands",
                       module("Asin", "s32", 1, 1), [cg.typed("s32", [1])], {"error": "floating-point or complex"}))
    return out


ORD = [0.5, -0.5, 1.5, 2.5, 3.0, 4.5, 7.25, 10.0, 0.1, -0.1, 0.001, 30.5, -3.7, -7.3, 100.0, 1e-3, 0.9, 1.1, 1.9, 2.1]


def main():
    by_file = {}
    trig = [0.0, -0.0, 0.25, -0.25, 0.5, 0.9, -0.9, 1.0, -1.0, 1.5, 2.0, 10.0, -10.0, 1e-3, 50.0, 88.0, 100.0, inf, -inf, nan, 1e-30, 1e30]
    for op in ["Sinh", "Cosh", "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh"]:
        by_file.setdefault("trig_hyperbolic", []).extend(
            unary_cases(op, lambda t: trig, "libm-class function computed by XLA in f32 (f64 for f64)."))
    cz = [0.5 + 0.25j, -0.5 + 0.25j, 0.5 - 0.25j, 2 + 0j, complex(2, -0.0), -2 + 0j, complex(-2, -0.0), 2j, complex(0, -2),
          complex(-0.0, 2), complex(-0.0, -2), 1e-10 + 1e-10j, 3 + 4j,
          -3 - 4j, 1e20 + 1e20j, 0.999 + 1e-5j, 0j, 1 + 0j, -1 + 0j, complex(0.1, 30.0), complex(inf, 1.0), complex(1.0, inf),
          complex(-inf, 1.0), complex(nan, 1.0), complex(1.0, nan), complex(inf, inf), complex(nan, 0.0), complex(0.0, nan)]
    has_nan = lambda z: math.isnan(z.real) or math.isnan(z.imag)  # noqa: E731
    skips = {
        # XLA CPU's complex Atan and Atanh of NaN-carrying values are its own
        # (atan(NaN + i) = -pi/2 + NaN i): not pinned (semantics-decisions.md).
        "Atan": has_nan, "Atanh": has_nan,
        # XLA CPU's complex Sinh is e^(z + ln 1/2) - e^(-z + ln 1/2), which
        # cancels for small |Re z| (sinh(1e-10 + 1e-10i) has real part 0 in c64).
        "Sinh": lambda z: 0 < abs(z.real) < 1e-3,
    }
    for op in ["Sinh", "Cosh", "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh"]:
        by_file.setdefault("complex", []).extend(complex_cases(op, cz, skips.get(op, lambda z: False)))
    for op, zs in CX_CORNERS.items():
        by_file["complex"].extend(complex_cases(op, zs, types=(("c128", "f64"),), kind="corner_"))
    for op, zs in SUBNORMAL_CORNERS.items():
        by_file["complex"].extend(subnormal_corner_cases(op, zs))
    by_file["erfc_erfinv"] = unary_cases("Erfc", lambda t: [0.0, -0.0, 0.1, -0.1, 0.5, 1.0, -1.0, 2.0, 3.0, 5.0, 9.0, -5.0, 10.0, 27.0, inf, -inf, nan, 1e-3],
                                         "Erfc by XLA's rational approximations (f32 for narrow types).")
    by_file["erfc_erfinv"] += unary_cases("ErfInv", lambda t: [0.0, -0.0, 0.1, -0.1, 0.5, -0.5, 0.9, 0.99, -0.999, 0.25, 1e-3, 1e-20, 1.0, -1.0, 1.5, -2.0, inf, nan, 0.75],
                                          "ErfInv by Giles' polynomials (f32 coefficients for f16/bf16/f32, double ones for f64).")
    by_file["lgamma_digamma"] = unary_cases("Lgamma", lambda t: ORD + [0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -2.5, 1e-20, 1e10, 1e30, inf, -inf, nan, -1e6],
                                            "Lgamma by Lanczos' approximation (g = 7, n = 9) with reflection, evaluated in f32 for f16/bf16/f32.",
                                            near_zero_abs=0.1)
    by_file["lgamma_digamma"] += unary_cases("Digamma", lambda t: ORD + [0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -2.5, 1e-20, 1e10, 1e30, inf, -inf, nan, 1.4616321449683623],
                                             "Digamma from the derivative of the same Lanczos approximation, with reflection.",
                                             near_zero_abs=0.1)
    by_file["bessel_i1e"] = unary_cases("BesselI1e", lambda t: ORD + [0.0, -0.0, 8.0, 8.5, -8.0, 1e3, 1e10, -1e30, inf, -inf, nan, 1e-20],
                                        "BesselI1e by Cephes' Chebyshev series (f32 coefficients for f16/bf16/f32).")
    by_file["predicates"] = predicate_cases("IsInf") + predicate_cases("IsPosInf") + predicate_cases("IsNegInf")
    by_file["nextafter"] = nextafter_cases()
    zeta_pairs = [(2.0, 1.0), (3.0, 0.5), (2.0, 2.0), (4.5, 1.5), (1.5, 3.0), (10.0, 1.0), (2.0, 10.0), (2.0, -1.5), (3.0, -1.5),
                  (4.0, -0.5), (30.0, 2.0), (1.1, 1.0), (2.0, 0.25), (6.0, 100.0),
                  (1.0, 1.0), (0.5, 1.0), (2.5, -1.5), (2.0, 0.0), (3.0, 0.0), (2.0, -2.0), (nan, 1.0), (2.0, nan), (-1.0, 2.0)]
    by_file["zeta_polygamma"] = binary_cases("Zeta", lambda t: zeta_pairs, "Zeta by Euler-Maclaurin summation (math.cc), f32 for f16/bf16.")
    pg_pairs = [(1.0, 1.0), (2.0, 1.0), (1.0, 0.5), (3.0, 2.5), (1.0, 10.0), (2.0, 0.25), (4.0, 3.0), (0.0, 2.5), (0.0, 0.5), (1.0, -1.5),
                (2.0, -2.5), (3.0, -2.5), (5.0, 1.5),
                (1.5, 1.0), (-1.0, 1.0), (1.0, 0.0), (2.0, 0.0), (1.0, -2.0), (nan, 1.0), (1.0, nan), (0.0, 0.0), (0.0, -3.0)]
    by_file["zeta_polygamma"] += binary_cases("Polygamma", lambda t: pg_pairs,
                                              "Polygamma as (-1)^(n+1) n! zeta(n+1, x) (digamma for n = 0), with the reflection for negative x.")
    by_file["zeta_polygamma"] += zeta_underflow_cases()
    by_file["errors"] = error_cases()
    total = 0
    for name, cases in by_file.items():
        total += cg.write_cases(os.path.join(HERE, f"{name}.json"), cases)
    print(total, "cases")
    for k, v in WORST.items():
        print(k, v)


if __name__ == "__main__":
    main()
