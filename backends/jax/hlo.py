"""Translate an xla-json/1 module (docs/format.md section 3) into HLO text.

Every instruction becomes the HLO instruction XlaBuilder would emit for the
document's op, with the result shape inferred here (HLO text states every
shape; XLA's verifier then checks them). Implicit broadcasting of binary and
ternary ops becomes explicit `reshape`/`broadcast`, as XlaBuilder does.
"""
from hlo_ops import StructuredOps, TO_COMPLEX, braces, dims_of, ints
from hlo_world import WorldOps
from validate import check_module
from xlajson import MAX_ELEMENTS, Bounded, COMPLEX, FLOATS, Reject, array, num_elements, parse_shape, shape_text

UNARY = {
    "Abs": "abs", "Cbrt": "cbrt", "Ceil": "ceil", "Clz": "count-leading-zeros", "Cos": "cosine", "Erf": "erf",
    "Exp": "exponential", "Expm1": "exponential-minus-one", "Floor": "floor", "IsFinite": "is-finite",
    "Log": "log", "Log1p": "log-plus-one", "Logistic": "logistic", "Neg": "negate", "Not": "not",
    "LogicalNot": "not", "PopulationCount": "popcnt", "Real": "real", "Imag": "imag",
    "Round": "round-nearest-afz", "RoundNearestEven": "round-nearest-even", "Rsqrt": "rsqrt", "Sign": "sign",
    "Sin": "sine", "Sqrt": "sqrt", "Tan": "tan", "Tanh": "tanh",
}
BINARY = {
    "Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Rem": "remainder", "Max": "maximum",
    "Min": "minimum", "Pow": "power", "Atan2": "atan2", "Complex": "complex", "And": "and", "Or": "or",
    "Xor": "xor", "LogicalAnd": "and", "LogicalOr": "or", "ShiftLeft": "shift-left",
    "ShiftRightArithmetic": "shift-right-arithmetic", "ShiftRightLogical": "shift-right-logical",
}
DIRECTIONS = ("Eq", "Ne", "Ge", "Gt", "Le", "Lt")
# The CHLO extension ops (docs/stablehlo.md): no HLO instruction computes
# them; XLA expands them from StableHLO's `chlo.*`. A module using one gets a
# placeholder here (so shapes and parameters are known) and is compiled
# from the StableHLO that `xlaref export` writes (worker.py).
CHLO_UNARY = ("Sinh", "Cosh", "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh", "ErfInv", "Erfc", "Lgamma",
              "Digamma", "BesselI1e", "IsInf", "IsPosInf", "IsNegInf")
CHLO_BINARY = ("NextAfter", "Polygamma", "Zeta")


class Module:
    def __init__(self, doc, replicas=1):
        self.replicas = replicas
        # The CHLO extension ops the module uses (see CHLO_UNARY).
        self.chlo = set()
        # (leaf index, dimension) of each bounded dynamic dimension of the
        # result, whose size the entry returns after the leaves.
        self.dynamic_sizes = []
        if not isinstance(doc, dict):
            raise Reject("a module is a JSON object")
        check_module(doc)
        self.comps_json = doc.get("computations")
        if not isinstance(self.comps_json, dict):
            raise Reject("a module needs `computations`")
        self.entry = doc.get("entry", "main")
        if self.entry not in self.comps_json:
            raise Reject(f"entry computation `{self.entry}` is not defined")
        self.done = {}      # json name -> (hlo name, param shapes, root shape)
        self.texts = []
        self.busy = set()
        self.counter = 0
        # The first shape beyond the adapter's element limit: such modules are
        # compiled (so XLA's rejections still count) but not run.
        self.too_big = None

    def fresh(self, base):
        self.counter += 1
        safe = "".join(c if c.isalnum() else "_" for c in base)[:40] or "v"
        if not (safe[0].isalpha() or safe[0] == "_"):
            safe = "v" + safe  # HLO names start with a letter (MLIR's `%2` comes in as `2`)
        return f"{safe}.{self.counter}"

    def computation(self, name):
        if not isinstance(name, str) or name not in self.comps_json:
            raise Reject(f"computation `{name}` is not defined")
        if name in self.done:
            return self.done[name]
        if name in self.busy:
            raise Reject(f"computation `{name}` is recursive")
        self.busy.add(name)
        c = Computation(self, name, self.comps_json[name])
        res = c.build()
        self.busy.discard(name)
        self.done[name] = res
        return res

    def translate(self):
        hname, params, root = self.computation(self.entry)
        # Entry: a wrapper whose parameters are the leaves of the original
        # parameters (tuples and tokens rebuilt inside), calling the entry.
        lines = []
        leaves = []
        names = []

        def build(s):
            if s[0] == "tuple":
                parts = [build(e) for e in s[1]]
                n = self.fresh("t")
                lines.append(f"  {n} = {shape_text(s)} tuple({', '.join(parts)})")
                return n
            if s[0] == "token":
                n = self.fresh("tok")
                lines.append(f"  {n} = token[] after-all()")
                return n
            n = self.fresh("arg")
            lines.append(f"  {n} = {shape_text(s)} parameter({len(leaves)})")
            leaves.append(s)
            return n

        for p in params:
            names.append(build(p))
        # The result: the leaves that are arrays, flat (tokens and tuple
        # structure are rebuilt by the caller from the result shape).
        lines.append(f"  result = {shape_text(root)} call({', '.join(names)}), to_apply={hname}")
        outs = []

        def flatten(name, s):
            if s[0] == "array":
                outs.append((name, s))
            elif s[0] == "tuple":
                for i, e in enumerate(s[1]):
                    n = self.fresh("gte")
                    lines.append(f"  {n} = {shape_text(e)} get-tuple-element({name}), index={i}")
                    flatten(n, e)

        flatten("result", root)
        for k, (name, s) in enumerate(list(outs)):
            for d, size in enumerate(s[2]):
                if isinstance(size, Bounded):
                    n = self.fresh("size")
                    lines.append(f"  {n} = s32[] get-dimension-size({name}), dimensions={{{d}}}")
                    outs.append((n, array("s32", [])))
                    self.dynamic_sizes.append((k, d))
        flat = ("tuple", [s for _, s in outs])
        lines.append(f"  ROOT flat = {shape_text(flat)} tuple({', '.join(n for n, _ in outs)})")
        text = "HloModule xlajson\n\n" + "\n\n".join(self.texts) + "\n\nENTRY entry {\n" + "\n".join(lines) + "\n}\n"
        return text, params, leaves, root


def merged_dims(a, b):
    """The dimensions of an elementwise result: dynamic where either operand is."""
    return tuple(y if isinstance(y, Bounded) and not isinstance(x, Bounded) else x for x, y in zip(a[2], b[2]))


def check_size(s):
    """The first array shape in s beyond the adapter's element limit, if any."""
    if s[0] == "tuple":
        for e in s[1]:
            if check_size(e):
                return check_size(e)
    elif s[0] == "array" and num_elements(s[2]) > MAX_ELEMENTS:
        return s
    return None


class Computation(StructuredOps, WorldOps):
    def __init__(self, module, name, doc):
        self.m = module
        self.name = name
        self.doc = doc
        self.lines = []
        self.env = {}   # json name -> (hlo name, shape)

    def emit(self, shape, text, base="v"):
        if self.m.too_big is None:
            self.m.too_big = check_size(shape)
        n = self.m.fresh(base)
        self.lines.append(f"  {n} = {shape_text(shape)} {text}")
        return n, shape

    def build(self):
        d = self.doc
        if not isinstance(d, dict):
            raise Reject(f"computation `{self.name}` must be an object")
        params = d.get("params", [])
        pshapes = []
        for i, p in enumerate(params):
            s = parse_shape(p.get("shape"))
            pshapes.append(s)
            self.env[p.get("name")] = self.emit(s, f"parameter({i})", "p")
        instrs = d.get("instructions", [])
        if not isinstance(instrs, list):
            raise Reject("instructions must be a list")
        last = None
        for ins in instrs:
            name = ins.get("name")
            if name in self.env:
                raise Reject(f"duplicate name `{name}`")
            ops = [self.operand(o) for o in ins.get("operands", [])]
            res = self.instruction(ins, ops)
            if "shape" in ins and ins.get("op") not in ("Constant", "Iota", "RngUniform", "RngNormal", "RngBitGenerator",
                                                         "Infeed", "Recv", "CustomCall"):
                declared = parse_shape(ins["shape"])
                if declared != res[1]:
                    raise Reject(f"{name}: declared shape {shape_text(declared)} does not match inferred {shape_text(res[1])}")
            self.env[name] = res
            last = name
        root = d.get("root", last)
        if root not in self.env:
            raise Reject(f"root `{root}` is not defined")
        rname, rshape = self.env[root]
        # The root line: copy through a tuple-preserving ROOT marker.
        hname = self.m.fresh("comp_" + self.name)
        body = []
        for line in self.lines:
            body.append(line)
        # Mark the root: rewrite its defining line with ROOT.
        for i, line in enumerate(body):
            if line.startswith(f"  {rname} = "):
                body[i] = "  ROOT " + line[2:]
                break
        self.m.texts.append(f"{hname} {{\n" + "\n".join(body) + "\n}")
        return hname, pshapes, rshape

    def operand(self, o):
        if o not in self.env:
            raise Reject(f"operand `{o}` is not defined before its use")
        return self.env[o]

    # ---------------------------------------------------------- helpers

    def broadcast_to(self, x, out_dims, mapping):
        """Broadcast x (dims mapped to out dims by `mapping`) to out_dims,
        size-1 dimensions stretching (XlaBuilder's degenerate broadcast)."""
        name, s = x
        dims = dims_of(s)
        if len(mapping) != len(dims):
            raise Reject("broadcast_dimensions must have one entry per operand dimension")
        keep = []
        for k, d in enumerate(dims):
            if not (0 <= mapping[k] < len(out_dims)):
                raise Reject("broadcast dimension out of range")
            o = out_dims[mapping[k]]
            if d == o:
                keep.append(k)
            elif d != 1:
                raise Reject(f"cannot broadcast dimension of size {d} to {o}")
        if list(dims) == list(out_dims) and list(mapping) == list(range(len(dims))):
            return x
        if len(keep) != len(dims):
            s = array(s[1], [dims[k] for k in keep])
            name, s = self.emit(s, f"reshape({name})", "rs")
        out = array(s[1], out_dims)
        return self.emit(out, f"broadcast({name}), dimensions={braces([mapping[k] for k in keep])}", "bc")

    def implicit(self, a, b, bd):
        """XlaBuilder's implicit broadcasting of a binary op's operands."""
        da, db = dims_of(a[1]), dims_of(b[1])
        if bd is not None:
            bd = ints(bd, "broadcast_dimensions")
        if len(da) == len(db):
            if bd not in (None, []) and list(bd) != list(range(len(da))):
                raise Reject("broadcast_dimensions for operands of equal rank must be the identity")
            out = []
            for x, y in zip(da, db):
                if x == y and isinstance(y, Bounded) and not isinstance(x, Bounded):
                    out.append(y)  # static with dynamic: the result is dynamic (XLA's rule)
                elif x == y or y == 1:
                    out.append(x)
                elif x == 1:
                    out.append(y)
                else:
                    raise Reject(f"binary op operand shapes {shape_text(a[1])} and {shape_text(b[1])} are incompatible")
            ident = list(range(len(out)))
            return self.broadcast_to(a, out, ident), self.broadcast_to(b, out, ident)
        swap = len(da) > len(db)
        lo, hi = (b, a) if swap else (a, b)
        dlo, dhi = dims_of(lo[1]), dims_of(hi[1])
        if bd and len(bd) != len(dlo):
            raise Reject("broadcast_dimensions must have one entry per dimension of the lower-rank operand")
        if bd and any(x >= y for x, y in zip(bd, bd[1:])):
            raise Reject(f"broadcast dimensions order is wrong: {bd} (must be strictly increasing)")
        if not dlo:
            mapping = []
        elif bd is None or bd == []:
            raise Reject("operands of different ranks need broadcast_dimensions")
        else:
            mapping = bd
            if len(mapping) != len(dlo):
                raise Reject("broadcast_dimensions must have one entry per dimension of the lower-rank operand")
        out = list(dhi)
        for k, d in enumerate(dlo):
            if not (0 <= mapping[k] < len(out)):
                raise Reject("broadcast dimension out of range")
            if out[mapping[k]] == 1 and d != 1:
                out[mapping[k]] = d
        lo2 = self.broadcast_to(lo, out, mapping)
        hi2 = self.broadcast_to(hi, out, list(range(len(dhi))))
        return (hi2, lo2) if swap else (lo2, hi2)

    def tuple_select(self, ops, nm):
        """Select of tuples, as XlaBuilder emits it: Conditional(pred, on_true, id, on_false, id)."""
        s = ops[1][1]
        if ops[2][1] != s:
            raise Reject(f"{nm}: Select's on_true and on_false must have the same shape")
        if ops[0][1] != array("pred", []):
            raise Reject(f"{nm}: Select of tuples needs a scalar pred")
        ident = self.m.fresh("identity")
        self.m.texts.append(f"{ident} {{\n  ROOT x = {shape_text(s)} parameter(0)\n}}")
        return self.emit(s, f"conditional({ops[0][0]}, {ops[1][0]}, {ops[2][0]}), true_computation={ident}, "
                            f"false_computation={ident}", nm)

    def attr(self, ins, key, default=None, required=False):
        if key in ins:
            return ins[key]
        if required:
            raise Reject(f"{ins.get('name')}: {ins.get('op')} needs the attribute `{key}`")
        return default

    def sub(self, name):
        return self.m.computation(name)

    def window_text(self, sizes, strides, pads, lhs_dil=None, rhs_dil=None):
        if not sizes:
            return "window={}"
        parts = [f"size={'x'.join(map(str, sizes))}", f"stride={'x'.join(map(str, strides))}",
                 f"pad={'x'.join(f'{lo}_{hi}' for lo, hi in pads)}"]
        if lhs_dil is not None:
            parts.append(f"lhs_dilate={'x'.join(map(str, lhs_dil))}")
        if rhs_dil is not None:
            parts.append(f"rhs_dilate={'x'.join(map(str, rhs_dil))}")
        return "window={" + " ".join(parts) + "}"

    # ---------------------------------------------------------- instructions

    def instruction(self, ins, ops):
        op = ins.get("op")
        nm = ins.get("name", "v")
        if not isinstance(op, str):
            raise Reject(f"{nm}: `op` must be a string")
        names = [o[0] for o in ops]
        shapes = [o[1] for o in ops]
        args = ", ".join(names)

        def need(n):
            if len(ops) != n:
                raise Reject(f"{nm}: {op} takes {n} operands, got {len(ops)}")

        if op in UNARY:
            need(1)
            s = shapes[0]
            et = s[1] if s[0] == "array" else None
            if op == "IsFinite":
                rs = array("pred", dims_of(s))
            elif op in ("Real", "Imag", "Abs") and et in COMPLEX:
                rs = array(COMPLEX[et], dims_of(s))
            else:
                dims_of(s)
                rs = s
            return self.emit(rs, f"{UNARY[op]}({args})", nm)
        if op in CHLO_UNARY:
            need(1)
            s = shapes[0]
            rs = array("pred", dims_of(s)) if op.startswith("Is") else s
            self.m.chlo.add(op)
            return self.emit(rs, f'custom-call({args}), custom_call_target="xlaref.chlo.{op}"', nm)
        if op in CHLO_BINARY:
            need(2)
            a, b = self.implicit(ops[0], ops[1], ins.get("broadcast_dimensions"))
            self.m.chlo.add(op)
            rs = array(a[1][1], merged_dims(a[1], b[1]))
            return self.emit(rs, f'custom-call({a[0]}, {b[0]}), custom_call_target="xlaref.chlo.{op}"', nm)
        if op == "Conj":
            need(1)
            s = shapes[0]
            et = s[1] if s[0] == "array" else None
            if et in COMPLEX:
                part = array(COMPLEX[et], dims_of(s))
            elif et in TO_COMPLEX:
                # XlaBuilder's Conj of a real operand: the same expression, so a complex result.
                part, s = s, array(TO_COMPLEX[et], dims_of(s))
            else:
                raise Reject(f"{nm}: Conj needs a floating-point or complex operand")
            r = self.emit(part, f"real({args})", "re")
            i = self.emit(part, f"imag({args})", "im")
            ni = self.emit(part, f"negate({i[0]})", "nim")
            return self.emit(s, f"complex({r[0]}, {ni[0]})", nm)
        if op in BINARY:
            need(2)
            a, b = self.implicit(ops[0], ops[1], ins.get("broadcast_dimensions"))
            et = a[1][1]
            if op == "Complex":
                if et not in TO_COMPLEX:
                    raise Reject(f"{nm}: Complex needs f32 or f64 operands")
                et = TO_COMPLEX[et]
            return self.emit(array(et, merged_dims(a[1], b[1])), f"{BINARY[op]}({a[0]}, {b[0]})", nm)
        if op == "Compare" or op in DIRECTIONS or (op.endswith("TotalOrder") and op[:-10] in DIRECTIONS):
            need(2)
            if op == "Compare":
                direction = str(self.attr(ins, "comparison_direction", required=True)).upper()
                total = str(ins.get("comparison_type", "")).upper() == "TOTALORDER"
            else:
                total = op.endswith("TotalOrder")
                direction = (op[:-10] if total else op).upper()
            if direction not in ("EQ", "NE", "GE", "GT", "LE", "LT"):
                raise Reject(f"{nm}: unknown comparison direction {direction}")
            a, b = self.implicit(ops[0], ops[1], ins.get("broadcast_dimensions"))
            et = a[1][1]
            extra = ""
            if et in FLOATS or et in COMPLEX:
                extra = ", type=TOTALORDER" if total else ", type=FLOAT"
            elif et.startswith("u"):
                extra = ", type=UNSIGNED"
            elif et.startswith("s"):
                extra = ", type=SIGNED"
            return self.emit(array("pred", merged_dims(a[1], b[1])), f"compare({a[0]}, {b[0]}), direction={direction}{extra}", nm)
        if op == "Select" and ops[1][1][0] == "tuple":
            need(3)
            return self.tuple_select(ops, nm)
        if op in ("Select", "Clamp"):
            need(3)
            ranks = [o for o in ops if o[1][0] == "array" and len(o[1][2]) > 0]
            target = ranks[0][1][2] if ranks else None
            out = []
            for k, o in enumerate(ops):
                if target is not None and o[1][0] == "array" and len(o[1][2]) == 0 and \
                        not (op == "Select" and k > 0 and ops[1][1][0] != "array"):
                    out.append(self.broadcast_to(o, list(target), []))
                else:
                    out.append(o)
            rs = out[1][1]
            return self.emit(rs, f"{op.lower()}({', '.join(o[0] for o in out)})", nm)
        handler = getattr(self, "op_" + op, None)
        if handler is None:
            raise Reject(f"{nm}: unknown op `{op}`")
        return handler(ins, ops, nm)


def translate(doc, replicas=1):
    """xla-json module -> (HLO text, param shapes, leaf param shapes, result shape)."""
    return Module(doc, replicas).translate()
