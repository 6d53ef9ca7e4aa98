"""Case assembly, XLA cross-check and file writing."""
import json, math, os, sys
from collections import defaultdict
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *
sys.path.insert(0, os.path.join(REPO, "tools"))
from verifier_suite import outside_suite

XLA = "XLA CPU (jax 0.10.2)"
FILES = defaultdict(list)
NAMES = set()
DISCREPANCIES = []   # (name, note)
KNOWN_FAILING = []

def elem_close(a, e, t, tol):
    """a, e: JSON elements of type t. Exact unless tol (dict)."""
    if t in COMPLEX:
        return all(elem_close(x, y, part(t), tol) for x, y in zip(a, e))
    if t == "pred" or t in INTS:
        return int(a) == int(e) if t in INTS else a == e
    x = float_elem_to_np(a, t); y = float_elem_to_np(e, t)
    fx, fy = float(x), float(y)
    if math.isnan(fx) or math.isnan(fy): return math.isnan(fx) and math.isnan(fy)
    if not tol:
        return fx == fy and math.copysign(1, fx) == math.copysign(1, fy)
    if math.isinf(fx) or math.isinf(fy): return fx == fy
    if fx == fy: return True
    if "abs" in tol and abs(fx - fy) <= tol["abs"]: return True
    if "rel" in tol and abs(fx - fy) <= tol["rel"] * abs(fy): return True
    if "ulp" in tol:
        def key(v):
            b = float_bits(v, t); w = BITS[t][1]
            return -(b & ((1 << (w - 1)) - 1)) if b >> (w - 1) else b
        if abs(key(x) - key(y)) <= tol["ulp"]: return True
    return False

def literal_close(a, e, tol):
    if a["shape"] != e["shape"]: return False
    if a["shape"].startswith("("):
        shapes = split_tuple_shape(a["shape"])
        return all(literal_close({"shape": s, "value": x}, {"shape": s, "value": y}, tol)
                   for s, x, y in zip(shapes, a["value"]["tuple"], e["value"]["tuple"]))
    t, dims = parse_shape(a["shape"])
    return all(elem_close(x, y, t, tol) for x, y in zip(flatten(a["value"], dims), flatten(e["value"], dims)))

def split_tuple_shape(s):
    inner = s[1:-1]; out = []; depth = 0; cur = ""
    for ch in inner:
        if ch == "[": depth += 1
        if ch == "]": depth -= 1
        if ch == "," and depth == 0: out.append(cur.strip()); cur = ""; continue
        cur += ch
    if cur.strip(): out.append(cur.strip())
    return out

def mk(file, name, source, params, instrs, args, expected=None, root=None, tolerance=None,
       impl=False, xla=True, xla_note=None, known_failing=None, override=None):
    """expected: None (take XLA's), a typed literal (hand-derived; checked on XLA),
    or {"error": ...}. override: reason why the hand value stands where XLA differs."""
    assert name not in NAMES, name
    NAMES.add(name)
    root = root or instrs[-1]["name"]
    args_json = [{"shape": s, "value": v if s.startswith("(") else normalize_value(v, s)} for (n, s), v in zip(params, args)]
    if expected is not None and "error" not in expected:
        expected = {"shape": expected["shape"], "value": normalize_literal(expected)}
    if xla and not (expected is not None and "error" in expected):
        got, text = run_xla(params, instrs, root, args)
        if expected is None:
            expected = got
        elif not literal_close(got, expected, tolerance):
            if override:
                DISCREPANCIES.append((name, f"XLA CPU gives {json.dumps(got['value'])}, case keeps {json.dumps(expected['value'])}: {override}"))
            else:
                raise AssertionError(f"{name}: XLA {got} vs hand {expected}\n{text}")
    case = {"name": name, "source": source,
            "module": {"format": "xla-json/1", "computations": {"main": {
                "params": [{"name": n, "shape": s} for n, s in params],
                "instructions": instrs, **({"root": root} if root != instrs[-1]["name"] else {})}}},
            "args": args_json, "expected": expected}
    if tolerance: case["tolerance"] = tolerance
    if impl: case["implementation_defined"] = True
    if known_failing:
        KNOWN_FAILING.append((file, case, known_failing))
    else:
        FILES[file].append(case)
    return case

def normalize_literal(lit):
    s = lit["shape"]
    if s.startswith("("):
        return {"tuple": [normalize_value(v, sh) for v, sh in zip(lit["value"]["tuple"], split_tuple_shape(s))]}
    return normalize_value(lit["value"], s)

def dumps(v): return json.dumps(v, separators=(", ", ": "))

def render(cases):
    out = ['{\n  "format": "xla-json/1",\n  "cases": [']
    for i, c in enumerate(cases):
        lines = [f'    {{\n      "name": {dumps(c["name"])},', f'      "source": {dumps(c["source"])},']
        if c.get("comment"): lines.append(f'      "comment": {dumps(c["comment"])},')
        if c.get("implementation_defined"): lines.append('      "implementation_defined": true,')
        lines.append(f'      "module": {dumps(c["module"])},')
        lines.append(f'      "args": {dumps(c["args"])},')
        tail = f'      "expected": {dumps(c["expected"])}'
        if "tolerance" in c: tail += f',\n      "tolerance": {dumps(c["tolerance"])}'
        lines.append(tail + "\n    }" + ("," if i + 1 < len(cases) else ""))
        out.append("\n".join(lines))
    out.append("  ]\n}\n")
    return "\n".join(out)

def write_all(root=os.path.join(REPO, "oracle-cases")):
    total = 0
    for f, cases in sorted(FILES.items()):
        path = os.path.join(root, f)
        cases = outside_suite(path, cases)
        if not cases:
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write(render(cases)); total += len(cases)
        print(f"{f}: {len(cases)}")
    if KNOWN_FAILING:
        kf = [dict(c, comment="KNOWN FAILING on xlaref: " + why) for f, c, why in KNOWN_FAILING]
        open(os.path.join(root, "elementwise/KNOWN_FAILING.json.txt"), "w").write(render_kf(kf))
        print(f"KNOWN_FAILING: {len(kf)}")
    print("total", total)
    for n, d in DISCREPANCIES: print("DISCREPANCY", n, d)

def render_kf(cases):
    s = render(cases)
    return s
