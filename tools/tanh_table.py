#!/usr/bin/env python3
"""Coefficients of the fast engine's f32 Tanh lanes (fast/src/elem/tanh.rs).

Both kernels cut [0, 9.1] into intervals (tanh rounds to 1 in f32 beyond
9.011) and evaluate on interval k, with t = |x| - s_k,

    tanh(s_k + t) ~= c0 + t*(c1 + t*(c2 + ... + t*c_d))

c0 is tanh(s_k) rounded to f32 (0 on the first interval, which starts at 0,
so that small results keep their relative accuracy); c1..c_d are a
least-squares fit of (tanh(s_k + t) - c0)/t, weighted by 1/tanh and
reweighted towards minimax, at Chebyshev nodes, tanh in 40 digits.

- Sixteen lanes (AVX-512, `lanes`): 32 intervals, a quarter of a binade
  each, found from the bits of max(|x|, 0.0390625) shifted right by 21
  (the first, [0, 0.046875), takes everything below); degree 5; looked up
  by `vpermt2ps` from two registers.
- Eight lanes (AVX2, `lanes8`): 8 slots for `vpermps`, a binade each, found
  from the exponent of max(|x|, 0.125) (the first, [0, 0.25), takes
  everything below), except that every |x| >= 6 takes slot 3, [6, 9.1]:
  a whole binade [4, 8) needs degree 9 (`vpermps` reads only the low three
  bits, and no binade of the range falls on slot 3); degree 8.

Prints the Rust tables: `python3 tools/tanh_table.py [--eight] >
/tmp/tables.rs`. Needs numpy and mpmath. The lanes are checked against
every f32 by the ignored tests `every_f32_within_one_ulp` and
`every_f32_within_one_ulp_in_eight_lanes`.
"""
import struct
import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 40
TOP = 9.1


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def quarter_binades():
    """(slot, start, end) of the sixteen-lane kernel's 32 intervals."""
    shift, lowest = 21, 0x3D200000  # 0.0390625
    first, last = lowest >> shift, f32_bits(TOP) >> shift
    assert last - first + 1 == 32
    for raw in range(first, last + 1):
        start = 0.0 if raw == first else from_bits(raw << shift)
        end = min(from_bits((raw + 1) << shift), TOP)
        yield raw & 31, start, end


def binades():
    """(slot, start, end) of the eight-lane kernel's 8 slots; slot 2
    ([8, 16) by its exponent) is never picked and repeats slot 3."""
    yield 4, 0.0, 0.25
    for e in range(-2, 2):
        yield (127 + e) & 7, 2.0**e, 2.0 ** (e + 1)
    yield 1, 4.0, 6.0
    yield 3, 6.0, TOP
    yield 2, 6.0, TOP


def fit(start, end, degree, nodes, rounds):
    k = np.arange(nodes)
    t = (1 - np.cos((k + 0.5) * np.pi / nodes)) / 2 * (end - start)
    f = np.array([float(mp.tanh(mp.mpf(start) + mp.mpf(float(x)))) for x in t])
    c0 = float(np.float32(float(mp.tanh(mp.mpf(start))))) if start else 0.0
    basis = np.vstack([t**j for j in range(1, degree + 1)]).T
    weight = 1 / np.abs(f)
    w = weight
    for _ in range(rounds):
        sol, *_ = np.linalg.lstsq(basis * w[:, None], (f - c0) * w, rcond=None)
        r = np.abs((basis @ sol - (f - c0)) * weight)
        w = weight * (1 + r / r.max()) ** 2
    return [c0] + list(sol)


def main():
    eight = "--eight" in sys.argv[1:]
    # (The sixteen-lane table was fitted first, at 400 nodes in 30 rounds.)
    slots, degree, intervals, nodes, rounds = (
        (8, 8, binades, 600, 40) if eight else (32, 5, quarter_binades, 400, 30))
    starts = [0.0] * slots
    coefs = [[0.0] * slots for _ in range(degree + 1)]
    for slot, start, end in intervals():
        starts[slot] = start
        for j, c in enumerate(fit(start, end, degree, nodes, rounds)):
            coefs[j][slot] = c

    def literal(v):
        # The shortest digits that give the f32 back (clippy's
        # excessive_precision).
        s = np.format_float_scientific(np.float32(v), unique=True, trim="0")
        return s.replace("e+00", "").replace("e-0", "e-").replace("e+0", "e")

    def row(values):
        return ", ".join(literal(v) for v in values)

    print(f"const STARTS: [f32; {slots}] = [{row(starts)}];")
    print(f"const C: [[f32; {slots}]; {degree + 1}] = [")
    for c in coefs:
        print(f"    [{row(c)}],")
    print("];")


if __name__ == "__main__":
    main()
