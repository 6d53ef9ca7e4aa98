"""The executing half of the StableHLO-interpreter backend: reads one
request a line on stdin, answers one reply a line on stdout
(docs/backends.md). The module is exported to StableHLO by xlaref, parsed by
StableHLO's own parser (jaxlib.mlir, with the dialects JAX registers) and
run by StableHLO's reference interpreter, `stablehlo.eval_module`. The
interpreter aborts the process on ops it does not implement (`LLVM ERROR:
Unsupported op`); run.py supervises it."""
import os
import re
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from stablehlo_case import MLIR_ETYPES, Reject, Unsupported, prepare, worker_loop  # noqa: E402
from xlajson import BITS, COMPLEX, DTYPES, UINT_OF_WIDTH, _float  # noqa: E402

BACKEND = "the StableHLO interpreter"


def mlir():
    """jaxlib's MLIR bindings, imported on first use."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    return ir, stablehlo


def make_context():
    """A context with the dialects JAX registers (upstream func & co,
    stablehlo, chlo), as jax's `make_ir_context` builds it, without
    importing jax itself: a worker restarts after every interpreter abort,
    and importing jax costs about a second each time."""
    ir, stablehlo = mlir()
    try:
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import chlo
    except ImportError:  # another jaxlib layout: let jax build it
        from jax._src.interpreters import mlir as jax_mlir
        return jax_mlir.make_ir_context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    chlo.register_dialect(context)
    return context


def element_type(ir, etype):
    """xla-json element type -> MLIR type (signedness kept: ui32 is ui32)."""
    if etype == "pred":
        return ir.IntegerType.get_signless(1)
    if etype[0] == "s":
        return ir.IntegerType.get_signless(int(etype[1:]))
    if etype[0] == "u":
        return ir.IntegerType.get_unsigned(int(etype[1:]))
    if etype in COMPLEX:
        return ir.ComplexType.get(element_type(ir, COMPLEX[etype]))
    return {"f16": ir.F16Type, "bf16": ir.BF16Type, "f32": ir.F32Type, "f64": ir.F64Type,
            "f8e4m3fn": ir.Float8E4M3FNType, "f8e5m2": ir.Float8E5M2Type}[etype].get()


def to_attr(ir, shape, value):
    """A numpy argument -> DenseElementsAttr, from its bytes (exact)."""
    _, etype, dims = shape
    typ = element_type(ir, etype)
    arr = np.asarray(value).astype(DTYPES[etype])
    if arr.size == 0:
        tensor = ir.RankedTensorType.get(list(dims), typ)
        return ir.DenseElementsAttr(ir.Attribute.parse(f"dense<> : {tensor}"))
    if etype == "pred":
        raw = arr.astype(np.uint8)
    elif etype in COMPLEX:
        raw = arr
    else:
        raw = arr.view(UINT_OF_WIDTH[BITS[etype]])
    return ir.DenseElementsAttr.get(np.ascontiguousarray(raw.reshape(-1)), type=typ, shape=list(dims))


# ---------------------------------------------------------------- results
#
# An attribute is read back from its printed form: MLIR prints each float
# in a decimal that reads back to the same value (or as its hex bit
# pattern: NaN, infinities), and large values as the raw bytes `"0x..."`.
# The bindings' buffer protocol does not cover bf16, f8 or complex.

_SCALAR = re.compile(r"true|false|0x[0-9A-Fa-f]+|[-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?|[-+]?inf|nan")


def _scalar(etype, tok):
    if etype == "pred":
        return tok == "true"
    if etype[0] in "su":
        return int(tok, 0)
    if tok.startswith("0x"):
        # A hex float spells the element's bits, digit for digit.
        return _float(etype, "0x" + tok[2:].lower().zfill(BITS[etype] // 4))
    return _float(etype, Decimal(tok))


def _from_bytes(etype, data, n):
    if etype == "pred":
        if len(data) >= n:
            return np.frombuffer(data[:n], dtype=np.uint8).astype(bool)
        return np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")[:n].astype(bool)
    return np.frombuffer(data, dtype=DTYPES[etype]).copy()


def from_attr(shape, attr):
    """A result DenseElementsAttr -> numpy array of the xla-json shape."""
    _, etype, dims = shape
    n = int(np.prod(dims)) if dims else 1
    text = str(attr)
    body = text[text.index("dense<") + 6:text.rindex("> :")]
    dt = DTYPES[etype]
    if n == 0:
        return np.zeros(dims, dtype=dt)
    if body.startswith('"0x'):
        flat = _from_bytes(etype, bytes.fromhex(body[3:-1]), n)
        if flat.size == 1:
            flat = np.repeat(flat, n)
        return flat.reshape(dims)
    if etype in COMPLEX:
        part = COMPLEX[etype]
        pairs = re.findall(r"\(([^,()]+),([^,()]+)\)", body)
        vals = [complex(float(_scalar(part, re_.strip())), float(_scalar(part, im.strip()))) for re_, im in pairs]
    else:
        vals = [_scalar(etype, t) for t in _SCALAR.findall(body)]
    flat = np.array(vals, dtype=dt)
    if flat.size == 1:  # a splat
        flat = np.repeat(flat, n)
    if flat.size != n:
        raise Reject(f"the interpreter's result {text[:80]} does not have {n} elements")
    return flat.reshape(dims)


# ---------------------------------------------------------------- complex values
#
# The bindings cannot hand complex DenseElementsAttrs across: eval_module
# aborts the process (an uncaught nanobind TypeError, "Can't cast unknown
# element type") when a result is complex, and refuses an empty complex
# argument. So the entry is wrapped: the exported @main becomes a private
# function, and a new @main calls it, builds empty complex arguments as
# constants instead of taking them, and returns each complex result as its
# real and imaginary parts.

def mlir_type(shape):
    """xla-json array shape -> MLIR tensor type text."""
    _, etype, dims = shape
    names = {v: k for k, v in MLIR_ETYPES.items()}
    return "tensor<" + "".join(f"{d}x" for d in dims) + names[etype] + ">"


def is_empty_complex(shape):
    return shape[1] in COMPLEX and 0 in shape[2]


def needs_wrapper(params, results):
    return any(s[1] in COMPLEX for s in results) or any(is_empty_complex(s) for s in params)


def wrap_entry(text, params, results):
    """The module text with the wrapping @main described above; unchanged
    when no value needs it."""
    if not needs_wrapper(params, results):
        return text
    inner = text.replace("func.func public @main(", "func.func private @xlaref_entry(", 1)
    ptypes = [mlir_type(s) for s in params]
    rtypes = [mlir_type(s) for s in results]
    taken = [f"%a{i}: {t}" for i, (s, t) in enumerate(zip(params, ptypes)) if not is_empty_complex(s)]
    lines = [f"  %a{i} = \"stablehlo.constant\"() <{{value = dense<> : {t}}}> : () -> {t}"
             for i, (s, t) in enumerate(zip(params, ptypes)) if is_empty_complex(s)]
    call_res = "%r" if len(results) == 1 else f"%r:{len(results)}"
    lines.append(f"  {call_res} = \"func.call\"({', '.join(f'%a{i}' for i in range(len(params)))}) "
                 f"<{{callee = @xlaref_entry}}> : ({', '.join(ptypes)}) -> ({', '.join(rtypes)})")
    outs, out_types = [], []
    for k, s in enumerate(results):
        v = "%r" if len(results) == 1 else f"%r#{k}"
        if s[1] in COMPLEX:
            part = mlir_type(("array", COMPLEX[s[1]], s[2]))
            for op in ("real", "imag"):
                lines.append(f"  %{op}{k} = \"stablehlo.{op}\"({v}) : ({rtypes[k]}) -> {part}")
                outs.append(f"%{op}{k}")
                out_types.append(part)
        else:
            outs.append(v)
            out_types.append(rtypes[k])
    lines.append(f"  \"func.return\"({', '.join(outs)}) : ({', '.join(out_types)}) -> ()")
    wrapper = (f"func.func public @main({', '.join(taken)}) -> ({', '.join(out_types)}) {{\n"
               + "\n".join(lines) + "\n}\n")
    end = inner.rstrip().rindex("}")
    return inner[:end] + wrapper + "}\n"


def wrapped_args(params, args):
    """The arguments the wrapping @main takes."""
    if not any(is_empty_complex(s) for s in params):
        return list(zip(params, args))
    return [(s, a) for s, a in zip(params, args) if not is_empty_complex(s)]


def join_complex(results, values):
    """Undoes wrap_entry's splitting of complex results."""
    out = []
    it = iter(values)
    for s in results:
        if s[1] in COMPLEX:
            re_, im = next(it), next(it)
            out.append((re_, im))
        else:
            out.append(next(it))
    return out


def result_value(shape, attr):
    """A result from its attribute, or from the (real, imag) pair of them."""
    if isinstance(attr, tuple):
        part = ("array", COMPLEX[shape[1]], shape[2])
        return complex_from_parts(shape, from_attr(part, attr[0]), from_attr(part, attr[1]))
    return from_attr(shape, attr)


def complex_from_parts(shape, re_, im):
    """Exact: the parts are placed, not added (re + 1j*im would turn a NaN
    or infinite part into NaN in both)."""
    out = np.empty(re_.shape, dtype=DTYPES[shape[1]])
    out.real = re_
    out.imag = im
    return out


def run(req):
    case = prepare(req, BACKEND)
    if any(s[0] != "array" for s in case.params + case.results):
        raise Unsupported(f"{BACKEND}: eval_module takes and returns tensors only (tuple in the entry signature)")
    ir, stablehlo = mlir()
    text = wrap_entry(case.text, case.params, case.results)
    # A fresh context per case: a bad module cannot poison the next.
    with make_context(), ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except Exception as e:  # noqa: BLE001 - StableHLO's parser or verifier
            raise Reject(f"StableHLO rejects the module: {first_line(e)}")
        args = [to_attr(ir, s, v) for s, v in wrapped_args(case.params, case.args)]
        try:
            results = stablehlo.eval_module(module, args)
        except Exception as e:  # noqa: BLE001 - the interpreter's runtime error
            raise Reject(f"the interpreter fails: {first_line(e)}")
        results = join_complex(case.results, list(results))
        return case.reply([result_value(s, r) for s, r in zip(case.results, results)])


def first_line(e):
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    errors = [l for l in lines if "error" in l.lower()]
    return (errors or lines or [type(e).__name__])[0]


if __name__ == "__main__":
    worker_loop(run)
