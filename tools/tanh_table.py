#!/usr/bin/env python3
"""Coefficients of the fast engine's f32 Tanh lanes (fast/src/elem/tanh.rs).

The lanes split [0, 9.1] into 32 intervals, found from the bits of
max(|x|, 0.0390625) shifted right by 21 (a quarter of a binade each; the
first, [0, 0.046875), takes everything below), and evaluate on interval k

    tanh(s_k + t) ~= c0 + t*(c1 + t*(c2 + t*(c3 + t*(c4 + t*c5))))

with t = |x| - s_k. c0 is tanh(s_k) rounded to f32 (0 on the first
interval, so that small results keep their relative accuracy); c1..c5 are a
least-squares fit of (tanh(s_k + t) - c0)/t, weighted by 1/tanh and
reweighted towards minimax, at 400 Chebyshev nodes, tanh in 40 digits.

Prints the Rust tables: `python3 tools/tanh_table.py > /tmp/tables.rs`.
Needs numpy and mpmath. The lanes are checked against every f32 by the
ignored test `every_f32_within_one_ulp`.
"""
import struct

import mpmath as mp
import numpy as np

mp.mp.dps = 40
SHIFT = 21
LOWEST = 0x3D200000  # 0.0390625: its interval is the first, from 0
TOP = 9.1  # tanh rounds to 1 in f32 beyond 9.011
DEGREE = 5
NODES = 400


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def intervals():
    first, last = LOWEST >> SHIFT, f32_bits(TOP) >> SHIFT
    assert last - first + 1 == 32
    for raw in range(first, last + 1):
        start = 0.0 if raw == first else from_bits(raw << SHIFT)
        end = min(from_bits((raw + 1) << SHIFT), TOP)
        yield raw & 31, start, end


def fit(start, end):
    k = np.arange(NODES)
    t = (1 - np.cos((k + 0.5) * np.pi / NODES)) / 2 * (end - start)
    f = np.array([float(mp.tanh(mp.mpf(start) + mp.mpf(float(x)))) for x in t])
    c0 = float(np.float32(float(mp.tanh(mp.mpf(start))))) if start else 0.0
    basis = np.vstack([t**j for j in range(1, DEGREE + 1)]).T
    weight = 1 / np.abs(f)
    w = weight
    for _ in range(30):
        sol, *_ = np.linalg.lstsq(basis * w[:, None], (f - c0) * w, rcond=None)
        r = np.abs((basis @ sol - (f - c0)) * weight)
        w = weight * (1 + r / r.max()) ** 2
    return [c0] + list(sol)


def main():
    starts = [0.0] * 32
    coefs = [[0.0] * 32 for _ in range(DEGREE + 1)]
    for slot, start, end in intervals():
        starts[slot] = start
        for j, c in enumerate(fit(start, end)):
            coefs[j][slot] = c

    def literal(v):
        # The shortest digits that give the f32 back (clippy's
        # excessive_precision).
        s = np.format_float_scientific(np.float32(v), unique=True, trim="0")
        return s.replace("e+00", "").replace("e-0", "e-").replace("e+0", "e")

    def row(values):
        return ", ".join(literal(v) for v in values)

    print(f"const STARTS: [f32; 32] = [{row(starts)}];")
    print(f"const C: [[f32; 32]; {DEGREE + 1}] = [")
    for c in coefs:
        print(f"    [{row(c)}],")
    print("];")


if __name__ == "__main__":
    main()
