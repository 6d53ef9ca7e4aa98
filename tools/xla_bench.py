#!/usr/bin/env python3
"""XLA CPU (through JAX) on the workloads of `xlaref bench`.

Prints a Markdown table: workload, best time of N runs after a warm-up,
and the rate in the unit `xlaref bench` uses (GFLOP/s for Dot, Conv and
FFT; GB/s of inputs + outputs for the memory-bound ops). Run it on the
same machine, minutes apart from `xlaref bench`, with nothing else
running:

    pip install jax==0.10.2
    python3 tools/xla_bench.py [--runs 10]
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def best_time(f, args, runs):
    jax.block_until_ready(f(*args))
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        best = min(best, time.perf_counter() - t)
    return best


def workloads():
    rng = np.random.default_rng(0)
    n = 1024
    a32 = jnp.asarray(rng.standard_normal((n, n), dtype=np.float32))
    b32 = jnp.asarray(rng.standard_normal((n, n), dtype=np.float32))
    a64, b64 = a32.astype(jnp.float64), b32.astype(jnp.float64)
    big = jnp.asarray(rng.standard_normal(1 << 24, dtype=np.float32))
    big2 = jnp.asarray(rng.standard_normal(1 << 24, dtype=np.float32))
    square = jnp.asarray(rng.standard_normal((4096, 4096), dtype=np.float32))
    image = jnp.asarray(rng.standard_normal((8, 64, 56, 56), dtype=np.float32))
    kernel = jnp.asarray(rng.standard_normal((64, 64, 3, 3), dtype=np.float32))
    m = 1 << 20
    values = jnp.asarray(rng.standard_normal(m, dtype=np.float32))
    z = jnp.asarray((rng.standard_normal(m) + 1j * rng.standard_normal(m)).astype(np.complex64))
    idx = jnp.asarray(rng.integers(0, m, size=(m, 1), dtype=np.int32))

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def gather(x, i):
        dn = jax.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
        return jax.lax.gather(x, i, dn, (1,), mode=jax.lax.GatherScatterMode.CLIP)

    gb = lambda nbytes: ("GB/s", nbytes)
    flops = lambda f: ("GFLOP/s", f)
    yield "dot-f32", jnp.dot, (a32, b32), flops(2 * n**3)
    yield "dot-f64", jnp.dot, (a64, b64), flops(2 * n**3)
    yield "add", jnp.add, (big, big2), gb(3 * 4 * (1 << 24))
    yield "exp", jnp.exp, (big,), gb(2 * 4 * (1 << 24))
    yield "reduce-sum", jnp.sum, (big,), gb(4 * (1 << 24))
    yield "transpose", lambda x: x.T.copy(), (square,), gb(2 * 4 * 4096 * 4096)
    yield "conv", conv, (image, kernel), flops(2 * 8 * 64 * 56 * 56 * 64 * 9)
    yield "reduce-window", pool, (image,), gb(4 * (8 * 64 * 56 * 56 + 8 * 64 * 28 * 28))
    yield "sort", jnp.sort, (values,), ("time", 0)
    yield "fft", jnp.fft.fft, (z,), flops(5 * m * 20)
    yield "gather", gather, (values, idx), ("time", 0)
    cube = jnp.asarray(rng.standard_normal((256, 256, 256), dtype=np.float32))
    heads = jnp.asarray(rng.standard_normal((64, 1024, 64, 4), dtype=np.float32))
    yield "transpose-3d", lambda x: jnp.transpose(x, (2, 1, 0)), (cube,), gb(2 * 4 * 256**3)
    yield "transpose-heads", lambda x: jnp.transpose(x, (0, 2, 1, 3)), (heads,), gb(2 * 4 * heads.size)
    plane = jnp.asarray(rng.integers(0, 256, (4096, 4096), dtype=np.uint8))
    yield "transpose-u8", lambda x: x.T.copy(), (plane,), gb(2 * 4096 * 4096)
    positive = (big + 1.0) * 1.75 + 0.5
    uniform = jnp.asarray(rng.uniform(-1, 1, 1 << 24).astype(np.float32))
    yield "log", jnp.log, (positive,), gb(2 * 4 * (1 << 24))
    yield "tanh", jnp.tanh, (uniform,), gb(2 * 4 * (1 << 24))
    yield "logistic", jax.nn.sigmoid, (uniform,), gb(2 * 4 * (1 << 24))
    yield "sin", jnp.sin, (uniform,), gb(2 * 4 * (1 << 24))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    runs = p.parse_args().runs
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, best of {runs}")
    print("| op | XLA CPU time | XLA CPU rate |")
    print("|---|---:|---:|")
    for name, f, args, (unit, work) in workloads():
        t = best_time(jax.jit(f), args, runs)
        rate = "-" if unit == "time" else f"{work / t / 1e9:.1f} {unit}"
        print(f"| {name} | {t * 1e3:.3f} ms | {rate} |", flush=True)


if __name__ == "__main__":
    main()
