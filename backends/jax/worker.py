"""The executing half of the JAX backend: reads one request a line on stdin,
answers one reply a line on stdout (docs/backends.md). It may die on inputs
that abort XLA; run.py supervises it."""
import json
from decimal import Decimal
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")

import numpy as np  # noqa: E402
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jaxlib._hlo as hlo_lib  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

import hlo  # noqa: E402
from xlajson import DTYPES, MAX_ELEMENTS, Reject, Unsupported, read_typed, shape_text, write_typed  # noqa: E402


def compile_text(text):
    module = hlo_lib.hlo_module_from_text(text)
    stablehlo = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    client = jax.devices("cpu")[0].client
    options = xc.CompileOptions()
    return client.compile_and_load(stablehlo, jax.devices("cpu")[:1], options)


def leaves_of(shape, value, out):
    if shape[0] == "tuple":
        for s, v in zip(shape[1], value):
            leaves_of(s, v, out)
    elif shape[0] == "array":
        out.append((shape, value))


def rebuild(shape, flat):
    """The result value from its array leaves, in order."""
    if shape[0] == "tuple":
        return [rebuild(s, flat) for s in shape[1]]
    if shape[0] == "token":
        return None
    return flat.pop(0)


def run(req):
    if req.get("replicas", 1) != 1 or "replica_args" in req:
        raise Unsupported("multi-replica cases")
    if req.get("infeed"):
        raise Unsupported("infeed")
    module = req.get("module")
    if isinstance(module, str):
        raise Unsupported("HLO text modules are not translated (run them on XLA directly)")
    try:
        m = hlo.Module(module)
        text, params, leaf_shapes, result = m.translate()
        module_too_big = [m.too_big]
    except RecursionError:
        raise Reject("module nested too deeply")
    args = [read_typed(a) for a in req.get("args", [])]
    if len(args) != len(params):
        raise Reject(f"the entry computation takes {len(params)} arguments, got {len(args)}")
    for i, ((s, _), p) in enumerate(zip(args, params)):
        if s != p:
            raise Reject(f"argument {i} has shape {shape_text(s)}, the parameter {shape_text(p)}")
    leaves = []
    for s, v in args:
        leaves_of(s, v, leaves)
    try:
        exe = compile_text(text)
    except Exception as e:  # XLA's parser or verifier rejected the module
        raise Reject(f"XLA rejects the module: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}")
    if module_too_big[0] is not None:
        raise Unsupported(f"{shape_text(module_too_big[0])} is larger than the adapter's limit of {MAX_ELEMENTS} elements")
    dev = jax.devices("cpu")[0]
    bufs = [jax.device_put(np.asarray(v, dtype=DTYPES[s[1]]), dev) for s, v in leaves]
    out = exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
    flat = [np.asarray(o[0]) for o in out]
    value = rebuild(result, flat)
    return write_typed(result, value)


def main():
    debug = os.environ.get("XLA_ADAPTER_DEBUG")
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = {}
        try:
            req = json.loads(line, parse_float=Decimal)
            if "id" in req:
                reply["id"] = req["id"]
            reply.update(run(req))
        except Unsupported as e:
            reply["unsupported"] = str(e)
        except Reject as e:
            reply["error"] = str(e)
        except Exception as e:  # anything else: a rejection we cannot classify better
            reply["error"] = f"xla-adapter: {type(e).__name__}: {e}"
            if debug:
                traceback.print_exc(file=sys.stderr)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
