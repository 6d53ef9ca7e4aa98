#!/usr/bin/env python3
"""Whole JAX programs at realistic sizes for `xlaref bench --programs DIR`.

For each program this writes, into DIR:

- `NAME.hlo`: the program as XLA HLO text (what
  `jax.jit(f).lower(*args).compiler_ir("hlo").as_hlo_text()` prints);
- `NAME.mlir`: the same program as StableHLO (`lower(*args).as_text()`);
- `NAME.arg0.npy`, `NAME.arg1.npy`, ...: its arguments;
- `NAME.out0.npy`, ...: XLA CPU's result (one file per result of the tuple);
- `NAME.json`: a manifest with XLA CPU's times measured here, now: `run_ms`
  (best of `--runs` executions of the compiled program), `compile_ms` (the
  lowering and compilation, once) and `first_call_ms` (compile + first run,
  what a user of `jax.jit` waits for on the first call), plus the tolerance
  the result is judged with.

Run it, then `xlaref bench --programs DIR`, in the same session: hosts differ
between sessions, and the table is only worth its ratios.

To compare xlaref's AVX2 kernels (`XLAREF_FAST_ISA=avx2`) on an AVX-512 host
with XLA's AVX2 code, run this with `XLA_FLAGS=--xla_cpu_max_isa=AVX2`.

    pip install jax==0.10.2
    python3 tools/program_bench.py DIR [--runs 10] [--only NAME,...] [--sizes default|other|all|extra|small|variants]
"""

import argparse
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from program_variants import variant_programs


def normal(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# --- the programs -----------------------------------------------------------


def mlp_train_step(w1, b1, w2, b2, x, y):
    """One SGD step of a 784→1024→10 ReLU MLP with softmax cross-entropy."""

    def loss(params):
        w1, b1, w2, b2 = params
        h = jax.nn.relu(x @ w1 + b1)
        logits = h @ w2 + b2
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))

    value, grads = jax.value_and_grad(loss)((w1, b1, w2, b2))
    updated = tuple(p - 0.01 * g for p, g in zip((w1, b1, w2, b2), grads))
    return updated + (value,)


def attention_block(x, wq, wk, wv, wo):
    """Self-attention over S=512 tokens of width 512, 8 heads, residual."""
    s, d = x.shape
    heads = 8
    dh = d // heads

    def split(t):
        return t.reshape(s, heads, dh).transpose(1, 0, 2)

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = jnp.einsum("hqd,hkd->hqk", q, k) / np.float32(np.sqrt(dh))
    weights = jax.nn.softmax(scores, axis=-1)
    ctx = jnp.einsum("hqk,hkd->hqd", weights, v).transpose(1, 0, 2).reshape(s, d)
    return x + ctx @ wo


def conv_net(x, k1, b1, k2, b2):
    """Two 3×3 same-padded convolutions with bias and ReLU, 2×2 max pool."""
    dn = ("NHWC", "HWIO", "NHWC")
    h = jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn)
    h = jax.nn.relu(h + b1)
    h = jax.lax.conv_general_dilated(h, k2, (1, 1), "SAME", dimension_numbers=dn)
    h = jax.nn.relu(h + b2)
    return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def layernorm_gelu(x, gamma, beta):
    """LayerNorm over the last axis, then the tanh-approximated GELU."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    y = (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta
    return jax.nn.gelu(y, approximate=True)


def mlp(rng, name, batch, hidden):
    """An MLP train step's arguments: batch × 784 inputs, `hidden` units."""
    onehot = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    return (name, mlp_train_step,
            [normal(rng, 784, hidden, scale=0.05), np.zeros(hidden, np.float32),
             normal(rng, hidden, 10, scale=0.05), np.zeros(10, np.float32),
             normal(rng, batch, 784), onehot],
            {"atol": 1e-5, "rtol": 1e-4})


def attention(rng, name, s, d):
    return (name, attention_block,
            [normal(rng, s, d)] + [normal(rng, d, d, scale=0.05) for _ in range(4)],
            {"atol": 1e-4, "rtol": 1e-4})


def conv(rng, name, batch, hw, c_in, c, scales=(0.1, 0.1)):
    """A conv net's arguments: `c_in` input features, `c` after each
    convolution, kernels drawn at `scales`."""
    return (name, conv_net,
            [normal(rng, batch, hw, hw, c_in), normal(rng, 3, 3, c_in, c, scale=scales[0]), normal(rng, c, scale=0.1),
             normal(rng, 3, 3, c, c, scale=scales[1]), normal(rng, c, scale=0.1)],
            {"atol": 1e-4, "rtol": 1e-4})


def layernorm(rng, name, rows, cols):
    return (name, layernorm_gelu, [normal(rng, rows, cols), normal(rng, cols), normal(rng, cols)],
            {"atol": 1e-5, "rtol": 1e-4})


def programs(rng):
    """(name, function, arguments, tolerance as {"atol", "rtol"})."""
    yield mlp(rng, "mlp_train_step", 256, 1024)
    yield attention(rng, "attention_block", 512, 512)
    yield conv(rng, "conv_net", 16, 64, 32, 32)
    yield layernorm(rng, "layernorm_gelu", 4096, 1024)


def other_programs(rng):
    """The same four kinds at other sizes (`--sizes other`): a result that
    holds only at the sizes above is tuned to them, not to the kind."""
    yield mlp(rng, "mlp_b512_h512", 512, 512)
    yield attention(rng, "attention_s256", 256, 512)
    yield conv(rng, "conv_net_8x32x32x32", 8, 32, 32, 32)
    yield conv(rng, "conv_net_rgb_3to64", 8, 64, 3, 64, scales=(0.3, 0.05))
    yield layernorm(rng, "layernorm_gelu_2048x768", 2048, 768)


def extra_programs(rng):
    """Twelve more sizes of the same kinds (`--sizes extra`): small and large
    batches, short and long rows, few features (fifteenth session)."""
    yield mlp(rng, "mlp_b128_h256", 128, 256)
    yield mlp(rng, "mlp_b1024_h2048", 1024, 2048)
    yield attention(rng, "attention_s1024_d512", 1024, 512)
    yield attention(rng, "attention_s128_d256", 128, 256)
    yield conv(rng, "conv_net_32x28x28x16", 32, 28, 16, 16)
    yield conv(rng, "conv_net_4x128x128x8", 4, 128, 8, 8)
    yield conv(rng, "conv_net_16x16x16x64", 16, 16, 64, 64)
    yield layernorm(rng, "layernorm_gelu_1024x768", 1024, 768)
    yield layernorm(rng, "layernorm_gelu_8192x512", 8192, 512)
    yield layernorm(rng, "layernorm_gelu_2048x4096", 2048, 4096)
    yield layernorm(rng, "layernorm_gelu_4096x256", 4096, 256)
    yield layernorm(rng, "layernorm_gelu_512x2048", 512, 2048)


def small_programs(rng):
    """Nine smaller or narrower sizes (`--sizes small`): programs where the
    per-op overhead shows, and rows of 64 and 128 (sixteenth session)."""
    yield mlp(rng, "mlp_b32_h128", 32, 128)
    yield mlp(rng, "mlp_b64_h512", 64, 512)
    yield attention(rng, "attention_s64_d128", 64, 128)
    yield attention(rng, "attention_s256_d128", 256, 128)
    yield conv(rng, "conv_net_2x16x16x8", 2, 16, 8, 8)
    yield conv(rng, "conv_net_8x8x8x128", 8, 8, 128, 128)
    yield layernorm(rng, "layernorm_gelu_256x128", 256, 128)
    yield layernorm(rng, "layernorm_gelu_64x1024", 64, 1024)
    yield layernorm(rng, "layernorm_gelu_16384x64", 16384, 64)


# --- timing and output ------------------------------------------------------


def results(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def measure(f, args, runs):
    """XLA CPU's times for `f` on `args`, in milliseconds."""
    device_args = [jnp.asarray(a) for a in args]
    t = time.perf_counter()
    compiled = jax.jit(f).lower(*device_args).compile()
    compile_ms = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    out = jax.block_until_ready(compiled(*device_args))
    first_ms = compile_ms + (time.perf_counter() - t) * 1e3
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*device_args))
        best = min(best, time.perf_counter() - t)
    return out, {"run_ms": best * 1e3, "compile_ms": compile_ms, "first_call_ms": first_ms}


def write_program(out_dir, name, f, args, tolerance, runs):
    lowered = jax.jit(f).lower(*args)
    with open(os.path.join(out_dir, name + ".hlo"), "w") as fh:
        fh.write(lowered.compiler_ir("hlo").as_hlo_text())
    with open(os.path.join(out_dir, name + ".mlir"), "w") as fh:
        fh.write(lowered.as_text())
    for i, a in enumerate(args):
        np.save(os.path.join(out_dir, f"{name}.arg{i}.npy"), a)
    out, times = measure(f, args, runs)
    outs = results(out)
    for i, r in enumerate(outs):
        np.save(os.path.join(out_dir, f"{name}.out{i}.npy"), np.asarray(r))
    manifest = {
        "name": name,
        "doc": (f.__doc__ or "").strip(),
        "args": len(args),
        "results": len(outs),
        "tuple": isinstance(out, (tuple, list)),
        "tolerance": tolerance,
        "xla": dict(times, runs=runs, jax=jax.__version__, device=str(jax.devices()[0])),
    }
    with open(os.path.join(out_dir, name + ".json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    return manifest


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--only", default="", help="comma-separated program names")
    p.add_argument("--sizes", choices=["default", "other", "all", "extra", "small", "variants"], default="default",
                   help="the four programs above, the same kinds at five other sizes, both, "
                        "twelve more sizes, nine smaller and narrower ones, or the kinds written "
                        "other ways (program_variants.py)")
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    sets = {"default": [programs], "other": [other_programs], "all": [programs, other_programs],
            "extra": [extra_programs], "small": [small_programs], "variants": [variant_programs]}[a.sizes]
    seed = {"extra": 1, "small": 2, "variants": 3}.get(a.sizes, 0)
    chosen = [x for make in sets for x in make(np.random.default_rng(seed))]
    for name, f, args, tol in chosen:
        if only and name not in only:
            continue
        m = write_program(a.dir, name, f, args, tol, a.runs)
        x = m["xla"]
        print(f"{name}: XLA CPU run {x['run_ms']:.2f} ms, compile {x['compile_ms']:.0f} ms, "
              f"first call {x['first_call_ms']:.0f} ms")


if __name__ == "__main__":
    main()
