"""The executing half of the JAX backend: reads one request a line on stdin,
answers one reply a line on stdout (docs/backends.md). It may die on inputs
that abort XLA; run.py supervises it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# One host device per replica: multi-replica cases run on up to this many.
MAX_REPLICAS = 8
# Replicas that never meet at a collective (a mismatch the document forbids)
# make XLA CPU warn after 20 s, then abort after a termination timeout; both are
# shortened so such a case ends in seconds (XLA still aborts: a crash).
os.environ.setdefault("XLA_FLAGS", f"--xla_force_host_platform_device_count={MAX_REPLICAS} "
                      "--xla_cpu_collective_call_warn_stuck_timeout_seconds=5 "
                      "--xla_cpu_collective_call_terminate_timeout_seconds=5")

import numpy as np  # noqa: E402
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jaxlib._hlo as hlo_lib  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

import hlo  # noqa: E402
from xlajson import (DTYPES, MAX_ELEMENTS, Reject, Unsupported, has_bounded, read_typed, shape_text,  # noqa: E402
                     write_typed)


def compile_text(text, replicas=1):
    module = hlo_lib.hlo_module_from_text(text)
    stablehlo = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    client = jax.devices("cpu")[0].client
    options = xc.CompileOptions()
    options.num_replicas = replicas
    return client.compile_and_load(stablehlo, jax.devices("cpu")[:replicas], options)


# `XLAREF_VIA_STABLEHLO=PATH/TO/xlaref`: compile the module as `xlaref export
# --to stablehlo` writes it instead of the HLO translation, so a conformance
# run checks that the exported StableHLO means what the module means
# (docs/stablehlo.md). The HLO translation still runs first: its checks and
# shapes (parameters, result leaves) are reused.
VIA_STABLEHLO = os.environ.get("XLAREF_VIA_STABLEHLO")
# The xlaref binary that writes StableHLO: the one given above, else the one
# running the conformance check (it sets `XLAREF` for its backends). Modules
# with CHLO extension ops need it, since HLO has no instruction for them.
XLAREF = VIA_STABLEHLO or os.environ.get("XLAREF")
if XLAREF:
    os.environ["XLAREF"] = XLAREF  # the binary backends/common's export runs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from stablehlo_case import export_stablehlo, worker_loop  # noqa: E402


def compile_stablehlo(text, replicas=1):
    client = jax.devices("cpu")[0].client
    options = xc.CompileOptions()
    options.num_replicas = replicas
    return client.compile_and_load(text, jax.devices("cpu")[:replicas], options)


def replicated(values, devices):
    """One argument of a multi-replica run: each replica's value on its own
    device. The sharding claims replication, but the executable only reads
    each device's buffer, so the values may differ per replica."""
    shards = [jax.device_put(v, d) for v, d in zip(values, devices)]
    mesh = jax.sharding.Mesh(np.array(devices), ("replica",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    return jax.make_array_from_single_device_arrays(values[0].shape, sharding, shards)


def array_leaves(shape, out):
    if shape[0] == "tuple":
        for s in shape[1]:
            array_leaves(s, out)
    elif shape[0] == "array":
        out.append(shape)
    return out


def check_sizes(shape, dynamic, sizes):
    """Refuses a result whose dynamic sizes, as XLA reports them, lie
    outside [0, bound] (SetDimensionSize of such a size is
    implementation-defined; XLA CPU does not check it)."""
    shapes = array_leaves(shape, [])
    for (k, d), size in zip(dynamic, sizes):
        bound = shapes[k][2][d]
        if not 0 <= int(size) <= bound:
            raise Reject(f"XLA reports a dynamic size of {int(size)} for a dimension bounded by {int(bound)}; "
                         "the result is not transferred")


def result_leaves(flat, shape, sizes):
    """The result's array leaves from XLA's output buffers. A leaf with
    bounded dynamic dimensions is cut to its sizes (the s32 scalars the entry
    returns after the leaves); XLA CPU writes such a result compacted, its
    elements first in the buffer. XLA CPU returns RngBitGenerator's float or
    signed bits in a buffer of the unsigned type of the same width, so a leaf
    whose dtype differs from its element type is reinterpreted, not converted."""
    shapes = array_leaves(shape, [])
    leaves, extra = flat[:len(shapes)], flat[len(shapes):]
    actual = [list(s[2]) for s in shapes]
    for (k, d), size in zip(sizes, extra):
        actual[k][d] = max(0, min(int(size), actual[k][d]))
    for k, s in enumerate(shapes):
        want = np.dtype(DTYPES[s[1]])
        if leaves[k].dtype != want and leaves[k].dtype.itemsize == want.itemsize:
            leaves[k] = leaves[k].view(want)
        if actual[k] != list(s[2]):
            n = int(np.prod(actual[k]))
            leaves[k] = leaves[k].reshape(-1)[:n].reshape(actual[k])
    return leaves


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


def check_args(args, params):
    if len(args) != len(params):
        raise Reject(f"the entry computation takes {len(params)} arguments, got {len(args)}")
    for i, ((s, _), p) in enumerate(zip(args, params)):
        if s != p or has_bounded(s) != has_bounded(p):
            raise Reject(f"argument {i} has shape {shape_text(s)}, the parameter {shape_text(p)}")


def run(req):
    replicas = req.get("replicas", 1)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 1:
        raise Reject(f"`replicas` must be a positive integer, got {replicas!r}")
    if replicas > MAX_REPLICAS:
        raise Unsupported(f"{replicas} replicas: the adapter runs at most {MAX_REPLICAS} host devices")
    if req.get("infeed"):
        raise Unsupported("infeed: jaxlib's PJRT CPU client offers no way to fill the infeed queue")
    module = req.get("module")
    if isinstance(module, str):
        raise Unsupported("HLO text modules are not translated (run them on XLA directly)")
    try:
        m = hlo.Module(module, replicas)
        text, params, leaf_shapes, result = m.translate()
        module_too_big = [m.too_big]
    except RecursionError:
        raise Reject("module nested too deeply")
    if any(has_bounded(p) for p in params):
        raise Unsupported("parameters with bounded dynamic dimensions: jaxlib's execute takes static buffers only")
    # Without replica_args every replica takes `args` (docs/format.md section 4).
    arg_lists = req.get("replica_args") if "replica_args" in req else [req.get("args", [])] * replicas
    if not isinstance(arg_lists, list) or len(arg_lists) != replicas:
        raise Reject(f"`replica_args` must hold one argument list for each of the {replicas} replicas")
    per_replica = []
    for arg_list in arg_lists:
        args = [read_typed(a) for a in arg_list]
        check_args(args, params)
        leaves = []
        for s, v in args:
            leaves_of(s, v, leaves)
        per_replica.append([np.asarray(v, dtype=DTYPES[s[1]]) for s, v in leaves])
    if m.chlo and not XLAREF:
        raise Unsupported(f"{', '.join(sorted(m.chlo))}: CHLO extension ops are not HLO instructions; "
                          "they are compiled from StableHLO, which needs the xlaref binary (set XLAREF)")
    if VIA_STABLEHLO or m.chlo:
        # The exported entry keeps tuple parameters whole and returns the
        # result's top-level components: only the plain form maps onto the
        # buffers below.
        if len(leaf_shapes) != len(params) or any(p[0] != "array" for p in params):
            raise Unsupported("via StableHLO: parameters must be arrays")
        parts = result[1] if result[0] == "tuple" else [result]
        if m.dynamic_sizes or any(p[0] != "array" for p in parts):
            raise Unsupported("via StableHLO: the result must be an array or a tuple of arrays, with static shapes")
        text = export_stablehlo(module)
        compile_text_or_mlir = compile_stablehlo
    else:
        compile_text_or_mlir = compile_text
    try:
        exe = compile_text_or_mlir(text, replicas)
    except Exception as e:  # XLA's parser or verifier rejected the module
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if "failed to legalize operation" in msg:
            # No lowering for this op and type (chlo.erfc of f8, say): XLA
            # lacks it, it does not judge the program invalid.
            raise Unsupported(f"XLA cannot lower the module: {msg}")
        raise Reject(f"XLA rejects the module: {msg}")
    if module_too_big[0] is not None:
        raise Unsupported(f"{shape_text(module_too_big[0])} is larger than the adapter's limit of {MAX_ELEMENTS} elements")
    devices = jax.devices("cpu")[:replicas]
    bufs = [replicated([vals[i] for vals in per_replica], devices) for i in range(len(leaf_shapes))]
    out = exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
    values = []
    n_leaves = len(out) - len(m.dynamic_sizes)
    for r in range(replicas):
        # The sizes first: with a size beyond its bound XLA's buffer carries
        # a garbage shape (seen: 2.4 TiB), which must not be transferred.
        sizes = [np.asarray(o[r]) for o in out[n_leaves:]]
        check_sizes(result, m.dynamic_sizes, sizes)
        flat = result_leaves([np.asarray(o[r]) for o in out[:n_leaves]] + sizes, result, m.dynamic_sizes)
        values.append(write_typed(result, rebuild(result, flat)))
    if replicas > 1:
        return {"per_replica": values}
    return values[0]


def main():
    # The loop the StableHLO adapters share: unsupported, error, adapter
    # failures as errors (XLA_ADAPTER_DEBUG=1 prints their tracebacks).
    worker_loop(run)

if __name__ == "__main__":
    main()
