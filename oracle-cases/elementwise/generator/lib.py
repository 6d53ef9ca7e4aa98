"""Case generator helpers for oracle-cases/elementwise and compare (xlaref).
Builds xla-json/1 cases and the equivalent HLO text, runs HLO on XLA CPU."""
import os, sys, json, math, struct
import numpy as np, ml_dtypes
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
from xla_run_hlo import run_hlo

NP = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
      "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
      "c64": np.complex64, "c128": np.complex128,
      "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}
BITS = {"f16": (np.uint16, 16), "bf16": (np.uint16, 16), "f32": (np.uint32, 32), "f64": (np.uint64, 64),
        "f8e4m3fn": (np.uint8, 8), "f8e5m2": (np.uint8, 8)}
INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2"]
COMPLEX = ["c64", "c128"]
ALL = ["pred"] + INTS + FLOATS[:4] + COMPLEX + FLOATS[4:]

def is_float(t): return t in FLOATS
def part(t): return {"c64": "f32", "c128": "f64"}.get(t, t)

def parse_shape(s):
    t, rest = s.split("[")
    dims = [int(d) for d in rest.rstrip("]").split(",") if d]
    return t, dims

def shape_str(t, dims): return f"{t}[{','.join(map(str, dims))}]"

# ---------- element conversion ----------
def float_elem_to_np(v, t):
    T = NP[t]
    if isinstance(v, str):
        if v.startswith("0x"):
            ut, _ = BITS[t]
            return np.array([int(v, 16)], dtype=ut).view(T)[0]
        f = {"nan": float("nan"), "-nan": -float("nan"), "inf": float("inf"), "-inf": -float("inf"), "-0": -0.0}[v]
        if v == "-nan":
            r = np.array([float("nan")], dtype=np.float64).astype(T)
            ut, w = BITS[t]
            b = r.view(ut)[0] | (1 << (w - 1))
            return np.array([b], dtype=ut).view(T)[0]
        return np.array([f], dtype=np.float64).astype(T)[0]
    return np.array([v], dtype=np.float64).astype(T)[0]

def elem_to_np(v, t):
    if t == "pred": return bool(v)
    if t in INTS: return int(v)
    if t in COMPLEX:
        re, im = v
        return (float_elem_to_np(re, part(t)), float_elem_to_np(im, part(t)))
    return float_elem_to_np(v, t)

def nest(flat, dims):
    if not dims: return flat[0]
    n = len(flat) // dims[0] if dims[0] else 0
    return [nest(flat[i*n:(i+1)*n], dims[1:]) for i in range(dims[0])]

def flatten(v, dims):
    if not dims: return [v]
    out = []
    for x in v: out += flatten(x, dims[1:])
    return out

def to_np(value, shape):
    t, dims = parse_shape(shape)
    flat = flatten(value, dims)
    assert len(flat) == int(np.prod(dims)), (shape, value)
    if t in COMPLEX:
        pt = NP[part(t)]
        els = [elem_to_np(v, t) for v in flat]
        re = np.array([e[0] for e in els], dtype=pt); im = np.array([e[1] for e in els], dtype=pt)
        arr = re.astype(NP[t]) ; arr.imag = im
        # preserve signed zero/NaN in imag via direct assignment
        out = np.empty(len(flat), dtype=NP[t])
        out.real = re; out.imag = im
        return out.reshape(dims)
    if t in FLOATS:
        return np.array([elem_to_np(v, t) for v in flat], dtype=NP[t]).reshape(dims)
    return np.array([elem_to_np(v, t) for v in flat], dtype=NP[t]).reshape(dims)

# ---------- JSON element formatting ----------
def float_bits(x, t):
    ut, w = BITS[t]
    return int(np.array([x], dtype=NP[t]).view(ut)[0])

def fmt_float(x, t, hex_nan=False):
    x = NP[t](x)
    f = float(x)
    if math.isnan(f):
        if hex_nan:
            return "0x%0*x" % (BITS[t][1] // 4, float_bits(x, t))
        return "-nan" if float_bits(x, t) >> (BITS[t][1] - 1) else "nan"
    if math.isinf(f): return "inf" if f > 0 else "-inf"
    if f == 0: return "-0" if math.copysign(1, f) < 0 else 0
    import decimal
    d = decimal.Decimal(f).normalize()
    if len(d.as_tuple().digits) <= 8:
        g = float(d)
        return int(g) if g.is_integer() and abs(g) < 2**53 else g
    for p in range(1, 18):
        s = "%.*g" % (p, f)
        g = float(s)
        with np.errstate(all="ignore"):
            back = float(np.array([g]).astype(NP[t])[0])
        if back == f:
            # far from a midpoint so that direct rounding agrees
            if t != "f64":
                y = NP[t](x)
                # neighbours
                up = float(next_up(y, t)); dn = float(next_down(y, t))
                half_up = (up - f) / 2 if math.isfinite(up) else float("inf")
                half_dn = (f - dn) / 2 if math.isfinite(dn) else float("inf")
                if not (abs(g - f) < 0.5 * min(half_up, half_dn)):
                    continue
            if g.is_integer() and abs(g) < 2**53: return int(g)
            return g
    raise ValueError((x, t))

def next_up(y, t):
    ut, w = BITS[t]
    b = float_bits(y, t)
    f = float(y)
    if f == 0: b2 = 1
    elif f > 0: b2 = b + 1
    else: b2 = b - 1
    return np.array([b2], dtype=ut).view(NP[t])[0]

def next_down(y, t):
    ut, w = BITS[t]
    b = float_bits(y, t)
    f = float(y)
    if f == 0: b2 = (1 << (w - 1)) | 1
    elif f > 0: b2 = b - 1
    else: b2 = b + 1
    return np.array([b2], dtype=ut).view(NP[t])[0]

def fmt_elem(x, t, hex_nan=False):
    if t == "pred": return bool(x)
    if t in INTS:
        i = int(x)
        return str(i) if abs(i) > 2**53 else i
    if t in COMPLEX:
        c = NP[t](x)
        return [fmt_float(c.real, part(t), hex_nan), fmt_float(c.imag, part(t), hex_nan)]
    return fmt_float(x, t, hex_nan)

def np_to_json(arr, t):
    dims = list(arr.shape)
    flat = [fmt_elem(x, t) for x in arr.reshape(-1)]
    return nest(flat, dims)

def normalize_value(value, shape):
    """Re-print a literal from its exact element values (shortest round-trip)."""
    t, dims = parse_shape(shape)
    flat = flatten(value, dims)
    out = []
    for v in flat:
        if isinstance(v, str) and v.startswith("0x"): out.append(v); continue
        if t in COMPLEX and any(isinstance(p, str) and p.startswith("0x") for p in v): out.append(v); continue
        a = to_np([v], shape_str(t, [1]))
        out.append(fmt_elem(a[0], t))
    return nest(out, dims)

# ---------- modules ----------
HLO_BIN = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Rem": "remainder",
           "Max": "maximum", "Min": "minimum", "Pow": "power", "Atan2": "atan2", "Complex": "complex",
           "And": "and", "Or": "or", "Xor": "xor", "LogicalAnd": "and", "LogicalOr": "or",
           "ShiftLeft": "shift-left", "ShiftRightArithmetic": "shift-right-arithmetic",
           "ShiftRightLogical": "shift-right-logical"}
DIRS = ["Eq", "Ne", "Ge", "Gt", "Le", "Lt"]

def compare_info(ins):
    op = ins["op"]
    if op == "Compare":
        return ins["comparison_direction"].upper(), ins.get("comparison_type", "").upper() == "TOTALORDER"
    base = op[:-len("TotalOrder")] if op.endswith("TotalOrder") else op
    if base in DIRS:
        return base.upper(), op.endswith("TotalOrder")
    return None

def bcast_dims(ld, rd, bd):
    low, high = (ld, rd) if len(ld) <= len(rd) else (rd, ld)
    if len(low) == len(high): exp = list(low)
    elif not low: exp = [1] * len(high)
    else:
        exp = [1] * len(high)
        for i, d in enumerate(bd): exp[d] = low[i]
    out = []
    for a, b in zip(exp, high):
        assert a == b or a == 1 or b == 1, (ld, rd, bd)
        out.append(b if a == 1 else a)
    return out

class Hlo:
    def __init__(self): self.lines = []; self.n = 0
    def fresh(self): self.n += 1; return f"t{self.n}"

def hlo_bring(h, name, t, dims, out_dims, mapping):
    if dims == out_dims: return name
    keep = [i for i, d in enumerate(dims) if d == out_dims[mapping[i]]]
    cur = name
    if len(keep) != len(dims):
        r = h.fresh(); kd = [dims[i] for i in keep]
        h.lines.append(f"  {r} = {shape_str(t, kd)} reshape({cur})"); cur = r
    b = h.fresh()
    h.lines.append(f"  {b} = {shape_str(t, out_dims)} broadcast({cur}), dimensions={{{','.join(str(mapping[i]) for i in keep)}}}")
    return b

def to_hlo(params, instrs, root):
    h = Hlo(); shapes = {}; hname = {}
    for i, (n, s) in enumerate(params):
        shapes[n] = parse_shape(s); hname[n] = n
        h.lines.append(f"  {n} = {s} parameter({i})")
    for ins in instrs:
        op = ins["op"]; name = ins["name"]
        if op == "Tuple":
            h.lines.append(f"  {name} = ({', '.join(shape_str(*shapes[o]) for o in ins['operands'])}) tuple({', '.join(hname[o] for o in ins['operands'])})")
            shapes[name] = ("tuple", [shapes[o] for o in ins["operands"]]); hname[name] = name; continue
        if op == "Constant":
            raise NotImplementedError
        (lt, ld), (rt, rd) = shapes[ins["operands"][0]], shapes[ins["operands"][1]]
        bd = ins.get("broadcast_dimensions", [])
        od = bcast_dims(ld, rd, bd)
        def mapping(dims): return list(range(len(dims))) if len(dims) == len(od) else list(bd)
        a = hlo_bring(h, hname[ins["operands"][0]], lt, ld, od, mapping(ld))
        b = hlo_bring(h, hname[ins["operands"][1]], rt, rd, od, mapping(rd))
        ci = compare_info(ins)
        if ci:
            d, total = ci
            ot = "pred"
            # XlaBuilder's *TotalOrder use TOTALORDER only for real floating-point types
            extra = f", direction={d}" + (", type=TOTALORDER" if total and lt in FLOATS else "")
            hop = "compare"
        else:
            ot = {"f32": "c64", "f64": "c128"}[lt] if op == "Complex" else lt
            extra = ""; hop = HLO_BIN[op]
        h.lines.append(f"  {name} = {shape_str(ot, od)} {hop}({a}, {b}){extra}")
        shapes[name] = (ot, od); hname[name] = name
    # mark root
    for i in range(len(h.lines) - 1, -1, -1):
        if h.lines[i].lstrip().startswith(root + " "):
            h.lines[i] = "  ROOT " + h.lines[i].lstrip(); break
    text = "HloModule m\n\nENTRY main {\n" + "\n".join(h.lines) + "\n}\n"
    return text, shapes[root]

def run_xla(params, instrs, root, args):
    text, rshape = to_hlo(params, instrs, root)
    arrs = [to_np(v, s) for (n, s), v in zip(params, args)]
    outs = run_hlo(text, arrs)
    if rshape[0] == "tuple":
        return {"shape": "(" + ", ".join(shape_str(*s) for s in rshape[1]) + ")",
                "value": {"tuple": [np_to_json(o.reshape(s[1]), s[0]) for s, o in zip(rshape[1], outs)]}}, text
    return {"shape": shape_str(*rshape), "value": np_to_json(outs[0].reshape(rshape[1]), rshape[0])}, text
