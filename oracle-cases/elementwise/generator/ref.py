"""Independent Python reference for expected values (hand-derived rules)."""
import math, os, sys
import numpy as np, mpmath
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *

mpmath.mp.prec = 300

def ibits(t): return int(t[1:])
def signed(t): return t[0] == "s"
def imin(t): return -(1 << (ibits(t) - 1)) if signed(t) else 0
def imax(t): return (1 << (ibits(t) - 1)) - 1 if signed(t) else (1 << ibits(t)) - 1
def wrap(v, t):
    n = ibits(t); v &= (1 << n) - 1
    if signed(t) and v >> (n - 1): v -= 1 << n
    return v
def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q

def int_op(op, t, a, b):
    n = ibits(t)
    if op in ("Add",): return wrap(a + b, t)
    if op == "Sub": return wrap(a - b, t)
    if op == "Mul": return wrap(a * b, t)
    if op == "Div":
        if b == 0: return wrap(-1, t)
        return wrap(trunc_div(a, b), t)
    if op == "Rem":
        if b == 0: return a
        return wrap(a - b * trunc_div(a, b), t)
    if op == "Max": return max(a, b)
    if op == "Min": return min(a, b)
    if op == "Pow":
        if b < 0:
            return 1 if a == 1 else ((1 if b % 2 == 0 else -1) if a == -1 else 0)
        return wrap(pow(a, b, 1 << n), t)
    if op in ("And", "LogicalAnd"): return wrap(a & b, t)
    if op in ("Or", "LogicalOr"): return wrap(a | b, t)
    if op == "Xor": return wrap(a ^ b, t)
    ua = a & ((1 << n) - 1); ub = b & ((1 << n) - 1)
    if op == "ShiftLeft": return 0 if ub >= n else wrap(ua << ub, t)
    if op == "ShiftRightLogical": return 0 if ub >= n else wrap(ua >> ub, t)
    if op == "ShiftRightArithmetic":
        sa = ua - (1 << n) if ua >> (n - 1) else ua
        return wrap(sa >> min(ub, n - 1), t)
    raise KeyError(op)

def pred_op(op, a, b):
    if op in ("Add", "Max", "Or", "LogicalOr"): return a or b
    if op in ("Mul", "Min", "And", "LogicalAnd"): return a and b
    if op == "Xor": return a != b
    raise KeyError(op)

def rnd(f, t):
    """f64 value -> element of float type t (RNE), as numpy scalar."""
    return np.array([f], dtype=np.float64).astype(NP[t])[0]

def mp_round(x, t):
    """mpmath value -> correctly rounded element of type t (via f64; midpoint ties are rare)."""
    return rnd(float(x), t)

def fmax(a, b):
    if math.isnan(a): return a
    if math.isnan(b): return b
    if a == b: return b if math.copysign(1, a) < 0 else a
    return a if a > b else b
def fmin(a, b):
    if math.isnan(a): return a
    if math.isnan(b): return b
    if a == b: return a if math.copysign(1, a) < 0 else b
    return a if a < b else b

def float_op(op, t, a, b):
    """a, b numpy scalars of type t -> result of type t."""
    x, y = float(a), float(b)
    with np.errstate(all="ignore"):
        X, Y = np.float64(x), np.float64(y)
        if op == "Add": return rnd(X + Y, t)
        if op == "Sub": return rnd(X - Y, t)
        if op == "Mul": return rnd(X * Y, t)
        if op == "Div": return rnd(X / Y, t)
        if op == "Rem": return rnd(np.fmod(X, Y), t)
        if op == "Max": return rnd(fmax(x, y), t)
        if op == "Min": return rnd(fmin(x, y), t)
    if op == "Pow":
        assert all(math.isfinite(v) for v in (x, y)) and x > 0
        return mp_round(mpmath.power(mpmath.mpf(x), mpmath.mpf(y)), t)
    if op == "Atan2":
        assert all(math.isfinite(v) for v in (x, y)) and not (x == 0 and y == 0)
        return mp_round(mpmath.atan2(mpmath.mpf(x), mpmath.mpf(y)), t)
    raise KeyError(op)

def complex_op(op, t, a, b):
    pt = part(t)
    ar, ai, br, bi = (mpmath.mpf(float(v)) for v in (a.real, a.imag, b.real, b.imag))
    if op == "Add": r = (ar + br, ai + bi)
    elif op == "Sub": r = (ar - br, ai - bi)
    elif op == "Mul": r = (ar * br - ai * bi, ar * bi + ai * br)
    elif op == "Div":
        d = br * br + bi * bi
        r = ((ar * br + ai * bi) / d, (ai * br - ar * bi) / d)
    elif op == "Pow":
        z = mpmath.power(mpmath.mpc(ar, ai), mpmath.mpc(br, bi))
        r = (z.real, z.imag)
    else: raise KeyError(op)
    re, im = mp_round(r[0], pt), mp_round(r[1], pt)
    out = np.empty(1, dtype=NP[t]); out.real = re; out.imag = im
    return out[0]

def apply(op, t, xs, ys, shape_dims=None):
    """Elementwise over flat JSON-ish lists (same length) -> flat list of JSON elements."""
    xa = to_np(xs, f"{t}[{len(xs)}]"); ya = to_np(ys, f"{t}[{len(ys)}]")
    out = []
    for a, b in zip(xa, ya):
        if t == "pred": out.append(pred_op(op, bool(a), bool(b)))
        elif t in INTS: out.append(fmt_elem(int_op(op, t, int(a), int(b)), t))
        elif t in COMPLEX: out.append(fmt_elem(complex_op(op, t, a, b), t))
        else: out.append(fmt_elem(float_op(op, t, a, b), t))
    return out
