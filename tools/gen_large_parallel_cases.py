#!/usr/bin/env python3
"""Writes oracle-cases/regressions/large_parallel_paths.json: Gather and Reduce
cases above the fast engine's parallel threshold, expected values from XLA CPU
(jax 0.10.2; `pip install jax==0.10.2`, then `python3 tools/gen_large_parallel_cases.py`)."""
import json, os, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(5)
cases = []
src = "XLA CPU (jax 0.10.2): sizes above the fast engine's parallel threshold, so its multi-task paths (par::tasks, grouped unchecked loads) run; "
# Gather 1-D scalars, clamped indices (negative and past the end).
m, n = 20011, 40007
table = rng.integers(-1000, 1000, size=m).astype(np.float32)
idx = rng.integers(-5000, m + 5000, size=(n, 1)).astype(np.int32)
dn = jax.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
out = np.asarray(jax.lax.gather(jnp.asarray(table), jnp.asarray(idx), dn, (1,), mode=jax.lax.GatherScatterMode.CLIP))
cases.append({"name": "regressions/large/gather_1d_clamped", "source": src + "Gather of scalars, start indices clamped to [0, 20010]",
  "module": {"format": "xla-json/1", "computations": {"main": {"params": [{"name": "x", "shape": f"f32[{m}]"}, {"name": "i", "shape": f"s32[{n},1]"}],
    "instructions": [{"name": "g", "op": "Gather", "operands": ["x", "i"], "offset_dims": [], "collapsed_slice_dims": [0], "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [1]}]}}},
  "args": [{"shape": f"f32[{m}]", "value": [int(v) for v in table]}, {"shape": f"s32[{n},1]", "value": [[int(v)] for v in idx[:, 0]]}],
  "expected": {"shape": f"f32[{n}]", "value": [int(v) for v in out]}})
# Gather with stride != 1: rows of a [m2, 3] operand, one element each.
m2 = 12000
t2 = rng.integers(-100, 100, size=(m2, 3)).astype(np.int32)
idx2 = rng.integers(-10, m2 + 10, size=(n, 1)).astype(np.int32)
dn2 = jax.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0,))
out2 = np.asarray(jax.lax.gather(jnp.asarray(t2), jnp.asarray(idx2), dn2, (1, 1), mode=jax.lax.GatherScatterMode.CLIP))
cases.append({"name": "regressions/large/gather_column_clamped", "source": src + "Gather of one element per row of s32[12000,3] (operand stride 3), start indices clamped",
  "module": {"format": "xla-json/1", "computations": {"main": {"params": [{"name": "x", "shape": f"s32[{m2},3]"}, {"name": "i", "shape": f"s32[{n},1]"}],
    "instructions": [{"name": "g", "op": "Gather", "operands": ["x", "i"], "offset_dims": [], "collapsed_slice_dims": [0, 1], "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [1, 1]}]}}},
  "args": [{"shape": f"s32[{m2},3]", "value": t2.tolist()}, {"shape": f"s32[{n},1]", "value": idx2.tolist()}],
  "expected": {"shape": f"s32[{n}]", "value": out2.tolist()}})
# One-output reductions over 40009 elements: s32 sum (wraps), f32 max.
k = 40009
xs = rng.integers(-(2**31), 2**31 - 1, size=k, dtype=np.int64).astype(np.int32)
ssum = int(np.asarray(jax.lax.reduce(jnp.asarray(xs), np.int32(0), jax.lax.add, (0,))))
exact3 = ((int(xs.astype(np.int64).sum()) + 3 + 2**31) % 2**32) - 2**31
xla3 = int(np.asarray(jax.lax.reduce(jnp.asarray(xs), np.int32(3), jax.lax.add, (0,))))
fx = rng.integers(-100000, 100000, size=k).astype(np.float32)
fmax = float(np.asarray(jax.lax.reduce(jnp.asarray(fx), np.float32(-np.inf), jax.lax.max, (0,))))
def red(name, ty, op, init, args, exp, what):
    return {"name": f"regressions/large/{name}", "source": src + what,
      "module": {"format": "xla-json/1", "computations": {
        "f": {"params": [{"name": "a", "shape": f"{ty}[]"}, {"name": "b", "shape": f"{ty}[]"}], "instructions": [{"name": "r", "op": op, "operands": ["a", "b"]}]},
        "main": {"params": [{"name": "x", "shape": f"{ty}[{k}]"}], "instructions": [
          {"name": "init", "op": "Constant", "operands": [], "shape": f"{ty}[]", "literal": init},
          {"name": "r", "op": "Reduce", "operands": ["x", "init"], "computation": "f", "dimensions": [0]}]}}},
      "args": [args], "expected": {"shape": f"{ty}[]", "value": exp}}
cases.append(red("reduce_sum_s32_wraps", "s32", "Add", 0, {"shape": f"s32[{k}]", "value": xs.tolist()}, ssum, "Reduce Add over s32[40009] from init 0, two's-complement wraparound"))
c = red("reduce_sum_s32_non_identity_init", "s32", "Add", 3, {"shape": f"s32[{k}]", "value": xs.tolist()}, exact3,
  f"hand derivation (exact sum + 3 modulo 2^32): the document requires an identity init; xlaref applies a non-identity init once per result (docs/semantics-decisions.md). XLA CPU (jax 0.10.2) gives {xla3}: it applies the init about once per 31 elements")
c["implementation_defined"] = True
cases.append(c)
cases.append(red("reduce_max_f32", "f32", "Max", "-inf", {"shape": f"f32[{k}]", "value": [int(v) for v in fx]}, int(fmax), "Reduce Max over f32[40009] from init -inf"))
json.dump({"format": "xla-json/1", "cases": cases}, open(os.path.join(os.path.dirname(__file__), "..", "oracle-cases", "regressions", "large_parallel_paths.json"), "w"), separators=(",", ":"))

