#!/usr/bin/env python3
"""Real JAX programs as xla-json/1 oracle cases (issue 8).

Each case holds the program's HLO text as `module` (as
`jax.jit(f).lower(*args).compiler_ir("hlo").as_hlo_text()` prints it), its
arguments, and XLA CPU's result (the same jitted function run by JAX) as
`expected`; `stablehlo/NAME.json` holds the same program as StableHLO MLIR
(`jax.jit(f).lower(*args).as_text()`), the same arguments and result. Floating-point programs carry a tolerance: XLA reassociates
sums and uses its own approximations of exp/log/tanh, so the reference's
values agree with XLA's only to within rounding.

    python3 tools/jax_programs.py oracle-cases/programs
"""
import json
import math
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

TYPES = {
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


def element(x, kind):
    if kind == "b":
        return bool(x)
    if kind in "iu":
        return int(x)
    if kind == "c":
        return [element(x.real, "f"), element(x.imag, "f")]
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0 and math.copysign(1, x) < 0:
        return "-0"
    return x


def typed(a):
    if isinstance(a, (tuple, list)):
        items = [typed(x) for x in a]
        return {"shape": "(" + ", ".join(i["shape"] for i in items) + ")",
                "value": {"tuple": [i["value"] for i in items]}}
    a = np.asarray(a)
    shape = f"{TYPES[a.dtype.name]}[{','.join(map(str, a.shape))}]"
    kind = a.dtype.kind

    def nest(x):
        return [nest(y) for y in x] if x.ndim else element(x[()], kind)
    return {"shape": shape, "value": nest(a)}


def case(name, source, f, args, tolerance=None):
    hlo = jax.jit(f).lower(*args).compiler_ir("hlo").as_hlo_text()
    out = jax.jit(f)(*args)
    # A jitted function's outputs are flattened into one tuple in HLO.
    leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(out)]
    out = leaves[0] if len(leaves) == 1 and not isinstance(out, (tuple, list)) else tuple(leaves)
    c = {"format": "xla-json/1", "name": f"programs/{name}",
         "source": f"JAX program ({source}), jax {jax.__version__}; expected is XLA CPU's result",
         "module": hlo, "args": [typed(a) for a in args], "expected": typed(out)}
    if tolerance:
        c["tolerance"] = tolerance
    mlir = dict(c, name=f"programs/{name}/stablehlo", module=jax.jit(f).lower(*args).as_text())
    return c, mlir


F32 = {"rel": 1e-4, "abs": 1e-5}
rng = np.random.default_rng(0)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def mlp_loss(params, x, y):
    (w1, b1, w2) = params
    h = jnp.tanh(x @ w1 + b1)
    return jnp.mean((h @ w2 - y) ** 2)


def conv_bn(x, w, gamma, beta):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    mean = y.mean(axis=(0, 1, 2))
    var = y.var(axis=(0, 1, 2))
    return jax.nn.relu((y - mean) / jnp.sqrt(var + 1e-5) * gamma + beta)


def attention(q, k, v):
    heads = 2
    b, t, d = q.shape
    split = lambda z: z.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)
    qh, kh, vh = split(q), split(k), split(v)
    s = jnp.einsum("bhqd,bhkd->bhqk", qh, kh) / jnp.sqrt(d // heads)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum("bhqk,bhkd->bhqd", p, vh).transpose(0, 2, 1, 3).reshape(b, t, d)


def rnn_scan(h0, xs, w):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum()
    h, sums = jax.lax.scan(step, h0, xs)
    total = jax.lax.fori_loop(0, 4, lambda i, acc: acc * 0.5 + i, h.sum())
    return h, sums, total


def sorts(x):
    values, indices = jax.lax.top_k(x, 3)
    return jnp.sort(x, axis=-1), jnp.argsort(x, axis=-1), values, indices


def embedding_update(table, ids, grads):
    rows = table[ids]
    return table.at[ids].add(grads * 0.1), rows.sum(axis=0)


def fft_conv(a, b):
    n = a.shape[-1] + b.shape[-1] - 1
    return jnp.fft.irfft(jnp.fft.rfft(a, n) * jnp.fft.rfft(b, n), n)


def cholesky_solve(a, b):
    spd = a @ a.T + 4.0 * jnp.eye(a.shape[0], dtype=a.dtype)
    factor = jax.scipy.linalg.cho_factor(spd, lower=True)
    return jax.scipy.linalg.cho_solve(factor, b)


def random_threefry(seed):
    key = jax.random.key(seed, impl="threefry2x32")
    k1, k2 = jax.random.split(key)
    return jax.random.uniform(k1, (4, 3)), jax.random.randint(k2, (5,), 0, 100)


def argmax_reduction(x):
    return jnp.argmax(x, axis=1), jnp.max(x, axis=0), jnp.argmin(x)


def programs():
    w1, b1, w2 = normal(4, 8), normal(8), normal(8, 2)
    x, y = normal(5, 4), normal(5, 2)
    yield case("mlp_forward_backward", "jax.value_and_grad of a tanh MLP's squared loss",
               lambda w1, b1, w2, x, y: jax.value_and_grad(mlp_loss)((w1, b1, w2), x, y),
               [w1, b1, w2, x, y], F32)
    yield case("conv_batch_norm", "NHWC conv 3x3 SAME, batch norm over N,H,W, relu",
               conv_bn, [normal(2, 5, 5, 3), normal(3, 3, 3, 4), normal(4), normal(4)], F32)
    yield case("multi_head_attention", "2-head self-attention with softmax",
               attention, [normal(2, 4, 6), normal(2, 4, 6), normal(2, 4, 6)], F32)
    yield case("scan_and_fori_loop", "lax.scan of an RNN step, then lax.fori_loop",
               rnn_scan, [normal(3), normal(5, 3), normal(3, 3) * 0.5], F32)
    yield case("sort_argsort_top_k", "jnp.sort, jnp.argsort, lax.top_k along the last axis",
               sorts, [np.array([[3, 1, 2, 1, 5, -0.0], [0.0, 2, np.inf, -1, 7, 2]], np.float32)])
    yield case("cumulative_sum", "jnp.cumsum and jnp.cumprod over axis 1",
               lambda x: (jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0)), [normal(3, 7)], F32)
    yield case("einsum_batch", "jnp.einsum('bij,bjk->bik') and a contraction with a broadcast batch",
               lambda a, b, c: (jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("bij,j->bi", a, c)),
               [normal(3, 2, 4), normal(3, 4, 5), normal(4)], F32)
    yield case("embedding_update", "embedding lookup (gather) and a scatter-add update with repeated ids",
               embedding_update, [normal(6, 3), np.array([1, 4, 1, 0], np.int32), normal(4, 3)], F32)
    yield case("fft_convolution", "linear convolution through rfft/irfft",
               fft_conv, [normal(2, 8), normal(2, 5)], F32)
    yield case("cholesky_solve", "cho_factor + cho_solve of an SPD system (LAPACK potrf/trsm custom calls on CPU)",
               cholesky_solve, [normal(4, 4).astype(np.float64), normal(4, 2).astype(np.float64)],
               {"rel": 1e-10, "abs": 1e-12})
    yield case("random_threefry", "jax.random.split, uniform and randint with a threefry key",
               random_threefry, [np.uint32(42)])
    yield case("argmax_reduction", "jnp.argmax/argmin (variadic reduce) and max",
               argmax_reduction, [np.array([[1, 5, 5, 2], [np.nan, 0, 3, 3], [-1, -1, -2, -1]], np.float32)])
    # LAPACK custom calls on CPU: getrf (+ trsm) for solve and inv, geqrf + orgqr/ungqr for qr.
    yield case("linalg_solve", "jnp.linalg.solve (LAPACK getrf + trsm custom calls on CPU)",
               jnp.linalg.solve, [normal(4, 4).astype(np.float64), normal(4, 2).astype(np.float64)],
               {"rel": 1e-10, "abs": 1e-12})
    yield case("linalg_inv", "jnp.linalg.inv of a batch of 2 well-conditioned matrices (LAPACK getrf + trsm on CPU)",
               jnp.linalg.inv, [normal(2, 3, 3) + 3 * np.eye(3, dtype=np.float32)], F32)
    yield case("linalg_qr", "jnp.linalg.qr, reduced, complex (LAPACK geqrf + ungqr custom calls on CPU)",
               jnp.linalg.qr, [(normal(4, 3) + 1j * normal(4, 3)).astype(np.complex64)], F32)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "oracle-cases/programs"
    os.makedirs(os.path.join(out, "stablehlo"), exist_ok=True)
    for hlo, mlir in programs():
        stem = hlo["name"].split("/")[-1] + ".json"
        for c, path in [(hlo, os.path.join(out, stem)), (mlir, os.path.join(out, "stablehlo", stem))]:
            with open(path, "w") as f:
                json.dump(c, f, indent=1)
                f.write("\n")
            print(path)


if __name__ == "__main__":
    main()
