#!/usr/bin/env python3
"""Run an HLO text module on XLA's CPU backend (through jaxlib) and print the
result. A second opinion for semantic corners: `python3 tools/xla_run_hlo.py
FILE.hlo 'f32[2]=[1,2]' ...` or import `run_hlo(text, [numpy arrays])`.

Needs `pip install jax`. Arguments are numpy arrays; results come back as
numpy arrays (tuples flattened into a list)."""
import sys

import numpy as np
import jax
import jaxlib._hlo as hlo_lib
from jax._src.lib import xla_client as xc

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")


def compile_hlo(text, replicas=1):
    module = hlo_lib.hlo_module_from_text(text)
    stablehlo = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    client = jax.devices("cpu")[0].client
    options = xc.CompileOptions()
    options.num_replicas = replicas
    devices = jax.devices("cpu")[:replicas]
    return client.compile_and_load(stablehlo, devices, options)


def run_hlo(text, args):
    exe = compile_hlo(text)
    dev = jax.devices("cpu")[0]
    bufs = [jax.device_put(np.asarray(a), dev) for a in args]
    out = exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
    return [np.asarray(o[0]) for o in out]


def parse_value(text):
    """A nested list of numbers as JSON, with `nan`, `inf`, `-inf`, `true`
    and `false` allowed (literal_eval cannot read NaN or infinities)."""
    import json
    import re
    text = re.sub(r"\bnan\b", "NaN", text, flags=re.IGNORECASE)
    text = re.sub(r"\binf(inity)?\b", "Infinity", text, flags=re.IGNORECASE)
    text = text.replace("True", "true").replace("False", "false")
    return json.loads(text)


if __name__ == "__main__":
    text = open(sys.argv[1]).read()
    args = []
    for spec in sys.argv[2:]:
        dtype, value = spec.split("=", 1)
        dtype = dtype.split("[")[0]
        names = {"pred": "bool", "f32": "float32", "f64": "float64", "s32": "int32", "s64": "int64",
                 "u32": "uint32", "u64": "uint64", "s8": "int8", "u8": "uint8", "s16": "int16", "u16": "uint16",
                 "f16": "float16", "bf16": "bfloat16", "c64": "complex64", "c128": "complex128"}
        import ml_dtypes
        dt = getattr(ml_dtypes, names[dtype]) if names[dtype] == "bfloat16" else np.dtype(names[dtype])
        args.append(np.array(parse_value(value), dtype=dt))
    for r in run_hlo(text, args):
        print(r.dtype, r.shape, r.tolist())
