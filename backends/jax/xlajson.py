"""xla-json/1 shapes and literals (docs/format.md sections 1 and 2) <-> numpy.

Shapes are kept as small Python values:
  ("array", etype, dims)   e.g. ("array", "f32", (2, 3))
  ("tuple", [shape, ...])
  ("token",)
"""
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np
import ml_dtypes


class Unsupported(Exception):
    """The adapter cannot express this on XLA."""


class Reject(Exception):
    """The input is malformed or violates a rule of the document."""


DTYPES = {
    "pred": np.dtype(np.bool_),
    "s8": np.dtype(np.int8), "s16": np.dtype(np.int16), "s32": np.dtype(np.int32), "s64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16), "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64), "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128),
    "f8e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn), "f8e5m2": np.dtype(ml_dtypes.float8_e5m2),
}
FLOATS = {"f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2"}
COMPLEX = {"c64": "f32", "c128": "f64"}
INTS = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}
BITS = {"pred": 8, "s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
        "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128, "f8e4m3fn": 8, "f8e5m2": 8}
UINT_OF_WIDTH = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
MAX_ELEMENTS = 1 << 26


class Bounded(int):
    """A bounded dynamic dimension `<=N` (docs/format.md section 1). It compares
    as its bound N, so the adapter's static shape inference carries it
    through every op that copies dimensions; shape_text spells it `<=N`."""

    def __repr__(self):
        return f"<={int(self)}"


def has_bounded(s):
    if s[0] == "tuple":
        return any(has_bounded(e) for e in s[1])
    return s[0] == "array" and any(isinstance(d, Bounded) for d in s[2])


def array(etype, dims):
    return ("array", etype, tuple(dims))


def is_array(s):
    return s[0] == "array"


# ---------------------------------------------------------------- shapes

_TOKEN = re.compile(r"\s*([()\[\],]|<=|[A-Za-z0-9_]+)")


def parse_shape(text):
    """Parses `f32[2,3]`, `(f32[2], s32[])`, `token[]`."""
    if not isinstance(text, str):
        raise Reject(f"a shape is a string, got {text!r}")
    toks = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise Reject(f"bad shape `{text}`")
        toks.append(m.group(1))
        pos = m.end()
    shape, i = _shape(toks, 0, text)
    if i != len(toks):
        raise Reject(f"bad shape `{text}`")
    return shape


def _shape(toks, i, text):
    if i >= len(toks):
        raise Reject(f"bad shape `{text}`")
    if toks[i] == "(":
        elems = []
        i += 1
        if i < len(toks) and toks[i] == ")":
            return ("tuple", []), i + 1
        while True:
            s, i = _shape(toks, i, text)
            elems.append(s)
            if i < len(toks) and toks[i] == ",":
                i += 1
                continue
            if i < len(toks) and toks[i] == ")":
                return ("tuple", elems), i + 1
            raise Reject(f"bad shape `{text}`")
    et = toks[i]
    if i + 1 >= len(toks) or toks[i + 1] != "[":
        raise Reject(f"bad shape `{text}`")
    i += 2
    dims = []
    while toks[i] != "]":
        bounded = toks[i] == "<="
        i += bounded
        try:
            dims.append(Bounded(toks[i]) if bounded else int(toks[i]))
        except ValueError:
            raise Reject(f"bad shape `{text}`")
        i += 1
        if toks[i] == ",":
            i += 1
    i += 1
    if et == "token":
        if dims:
            raise Reject("token[] has no dimensions")
        return ("token",), i
    if et not in DTYPES:
        if et in ("s4", "u4", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz"):
            raise Unsupported(f"element type {et}")
        raise Reject(f"unknown element type `{et}`")
    return array(et, dims), i


def shape_text(s):
    """HLO text spelling of a shape (no layout)."""
    if s[0] == "tuple":
        return "(" + ", ".join(shape_text(e) for e in s[1]) + ")"
    if s[0] == "token":
        return "token[]"
    return f"{s[1]}[{','.join(repr(d) if isinstance(d, Bounded) else str(d) for d in s[2])}]"


def num_elements(dims):
    n = 1
    for d in dims:
        n *= d
    return n


# ---------------------------------------------------------------- literals -> numpy

def _float_bits(etype, text):
    width = BITS[etype]
    digits = width // 4
    if len(text) != 2 + digits:
        raise Reject(f"hex float `{text}` must have {digits} digits for {etype}")
    return np.array([int(text, 16)], dtype=UINT_OF_WIDTH[width]).view(DTYPES[etype])[0]


def _round(etype, q):
    """The exact rational q rounded once, to nearest even, into etype."""
    dt = DTYPES[etype]
    if etype == "f64":
        return dt.type(float(q))  # Python's int/Fraction -> float is correctly rounded
    with np.errstate(over="ignore"):
        v = dt.type(float(q))
    if not np.isfinite(float(v)):
        return v
    width = BITS[etype]
    ut = UINT_OF_WIDTH[width]
    best = None
    bits = int(np.array([v], dtype=dt).view(ut)[0])
    for b in (bits - 1, bits, bits + 1):
        if b < 0 or b >= 1 << width:
            continue
        c = np.array([b], dtype=ut).view(dt)[0]
        if not np.isfinite(float(c)):
            continue
        err = abs(Fraction(float(c)) - q)
        key = (err, b & 1)
        if best is None or key < best[0]:
            best = (key, c)
    return best[1] if best else v


def _float(etype, v):
    dt = DTYPES[etype]
    if isinstance(v, bool):
        raise Reject(f"expected a number for {etype}, got {v!r}")
    if isinstance(v, (int, Decimal)):
        q = Fraction(v)
        if q == 0 and isinstance(v, Decimal) and v.is_signed():
            return -dt.type(0)
        return _round(etype, q)
    if isinstance(v, float):
        return dt.type(v)
    if isinstance(v, str):
        s = v
        if s.startswith("0x"):
            return _float_bits(etype, s)
        if s == "nan":
            return dt.type(float("nan"))
        if s == "-nan":
            return -dt.type(float("nan"))
        if s == "inf":
            return dt.type(float("inf"))
        if s == "-inf":
            return dt.type(float("-inf"))
        if s == "-0":
            return -dt.type(0)
    raise Reject(f"`{v}` is not a float: use a number, \"nan\", \"-nan\", \"inf\", \"-inf\", \"-0\" or \"0x...\"")


def _int(etype, v):
    if isinstance(v, bool):
        raise Reject(f"expected an integer for {etype}, got {v!r}")
    if isinstance(v, str):
        try:
            v = int(v, 0) if v.lower().startswith(("0x", "-0x")) else int(v)
        except ValueError:
            raise Reject(f"bad integer {v!r}")
    if not isinstance(v, int):
        raise Reject(f"expected an integer for {etype}, got {v!r}")
    info = np.iinfo(DTYPES[etype])
    if v < info.min or v > info.max:
        raise Reject(f"{v} does not fit {etype}")
    return v


def _element(etype, v):
    if etype == "pred":
        if not isinstance(v, bool):
            raise Reject(f"expected true/false, got {v!r}")
        return v
    if etype in INTS:
        return _int(etype, v)
    if etype in FLOATS:
        return _float(etype, v)
    if etype in COMPLEX:
        if not (isinstance(v, list) and len(v) == 2):
            raise Reject(f"a complex element is a pair [re, im], got {v!r}")
        part = COMPLEX[etype]
        re_, im_ = _float(part, v[0]), _float(part, v[1])
        return complex(float(re_), float(im_))
    raise Reject(f"bad element type {etype}")


def to_numpy(shape, value):
    """A literal value of an array shape -> numpy array (exact)."""
    _, etype, dims = shape
    n = num_elements(dims)
    if n > MAX_ELEMENTS:
        raise Unsupported("value too large for the adapter")
    if isinstance(value, dict) and set(value) == {"bytes"}:
        return _from_bytes(etype, dims, n, value["bytes"], shape)
    flat = []

    def walk(v, depth):
        if depth == len(dims):
            flat.append(_element(etype, v))
            return
        if not isinstance(v, list) or len(v) != dims[depth]:
            raise Reject(f"literal does not match shape {shape_text(shape)}")
        for x in v:
            walk(x, depth + 1)

    walk(value, 0)
    dt = DTYPES[etype]
    if etype in FLOATS:
        out = np.array(flat, dtype=dt) if flat else np.zeros((0,), dtype=dt)
    elif etype in INTS:
        out = np.array(flat, dtype=dt) if flat else np.zeros((0,), dtype=dt)
    else:
        out = np.array(flat, dtype=dt) if flat else np.zeros((0,), dtype=dt)
    return out.reshape(dims)


def _from_bytes(etype, dims, n, digits, shape):
    """`{"bytes": "hex"}` (docs/format.md section 2): every element's
    little-endian bytes, row-major; pred one byte, complex real then
    imaginary part."""
    try:
        raw = bytes.fromhex(digits) if isinstance(digits, str) else None
    except ValueError:
        raw = None
    dt = np.dtype(DTYPES[etype]).newbyteorder("<")
    if raw is None or len(raw) != n * dt.itemsize:
        raise Reject(f"`bytes` literal does not hold {n} elements of {shape_text(shape)}")
    out = np.frombuffer(raw, dtype=dt).astype(DTYPES[etype])
    if etype == "pred":
        out = out != 0
    return out.reshape(dims)


def read_typed(obj):
    """A typed literal -> (shape, value as numpy array / list for tuples / None for tokens)."""
    if not isinstance(obj, dict) or "shape" not in obj:
        raise Reject("a typed literal is {\"shape\": ..., \"value\": ...}")
    shape = parse_shape(obj["shape"])
    return shape, literal_value(shape, obj.get("value"))


def literal_value(shape, value):
    if shape[0] == "tuple":
        if not (isinstance(value, dict) and isinstance(value.get("tuple"), list) and len(value["tuple"]) == len(shape[1])):
            raise Reject("tuple literal does not match its shape")
        return [literal_value(s, v) for s, v in zip(shape[1], value["tuple"])]
    if shape[0] == "token":
        if value != {"token": None}:
            raise Reject("a token literal is {\"token\": null}")
        return None
    return to_numpy(shape, value)


# ---------------------------------------------------------------- numpy -> literals

def _hex(etype, x):
    width = BITS[etype]
    bits = np.array([x], dtype=DTYPES[etype]).view(UINT_OF_WIDTH[width])[0]
    return "0x" + format(int(bits), f"0{width // 4}x")


def from_numpy(etype, arr):
    """numpy array -> JSON literal value (floats as exact hex bit patterns)."""
    arr = np.asarray(arr)
    if etype == "pred":
        return arr.astype(bool).tolist()
    if etype in INTS:
        def conv(x):
            x = int(x)
            return str(x) if abs(x) >= 2 ** 53 else x
        return _map(arr.astype(DTYPES[etype]), conv)
    if etype in FLOATS:
        a = arr.astype(DTYPES[etype])
        return _map(a, lambda x: _hex(etype, x))
    if etype in COMPLEX:
        part = COMPLEX[etype]
        a = arr.astype(DTYPES[etype])
        return _map(a, lambda x: [_hex(part, x.real), _hex(part, x.imag)])
    raise Unsupported(f"result element type {etype}")


def _map(arr, f):
    if arr.ndim == 0:
        return f(arr[()])
    return [_map(arr[i], f) for i in range(arr.shape[0])]


def write_typed(shape, value):
    return {"shape": shape_text(shape), "value": write_value(shape, value)}


def write_value(shape, value):
    if shape[0] == "tuple":
        return {"tuple": [write_value(s, v) for s, v in zip(shape[1], value)]}
    if shape[0] == "token":
        return {"token": None}
    return from_numpy(shape[1], value)


# ---------------------------------------------------------------- HLO text constants

def _hlo_float(etype, x):
    f = float(x)
    if np.isnan(f):
        width = BITS[etype]
        bits = int(np.array([x], dtype=DTYPES[etype]).view(UINT_OF_WIDTH[width])[0])
        sign = "-" if bits >> (width - 1) else ""
        return f"{sign}nan"
    if np.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f == 0 and np.signbit(f):
        return "-0"
    return repr(f)


def hlo_literal(shape, arr):
    """HLO text of an array literal (exact for finite values)."""
    _, etype, dims = shape

    def elem(x):
        if etype == "pred":
            return "true" if x else "false"
        if etype in INTS:
            return str(int(x))
        if etype in FLOATS:
            return _hlo_float(etype, x)
        part = COMPLEX[etype]
        return f"({_hlo_float(part, x.real)}, {_hlo_float(part, x.imag)})"

    def walk(a):
        if a.ndim == 0:
            return elem(a[()])
        return "{" + ", ".join(walk(a[i]) for i in range(a.shape[0])) + "}"

    return walk(np.asarray(arr, dtype=DTYPES[etype]))


def has_nan_payload(etype, arr):
    """Whether any NaN in arr is not the canonical quiet NaN (HLO text cannot spell it exactly)."""
    if etype in COMPLEX:
        a = np.asarray(arr)
        return has_nan_payload(COMPLEX[etype], a.real) or has_nan_payload(COMPLEX[etype], a.imag)
    if etype not in FLOATS:
        return False
    a = np.asarray(arr, dtype=DTYPES[etype]).reshape(-1)
    width = BITS[etype]
    canon = int(np.array([float("nan")], dtype=DTYPES[etype]).view(UINT_OF_WIDTH[width])[0]) & ~(1 << (width - 1))
    bits = a.view(UINT_OF_WIDTH[width])
    for x, b in zip(a, bits):
        if np.isnan(float(x)) and (int(b) & ~(1 << (width - 1))) != canon:
            return True
    return False
