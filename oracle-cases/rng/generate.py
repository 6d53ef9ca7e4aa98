#!/usr/bin/env python3
"""Regenerates the RngBitGenerator oracle cases of this directory from XLA CPU
(jax 0.10.2, through /work/main/tools/xla_run_hlo.py): python3 generate.py.

XLA CPU returns RngBitGenerator's bits in a buffer of the unsigned type of the
output's width; a signed or float output is that bit pattern reinterpreted
(floats are written as exact hex patterns)."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
sys.path.insert(0, "/work/main/tools")
from verifier_suite import outside_suite  # noqa: E402
from xla_run_hlo import run_hlo  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = "XLA CPU via jax 0.10.2: rng-bit-generator HLO run through tools/xla_run_hlo.py"
ALGS = {"THREE_FRY": "rng_three_fry", "PHILOX": "rng_philox", "DEFAULT": "rng_default"}
WIDTH = {"u8": 8, "s8": 8, "u16": 16, "s16": 16, "f16": 16, "bf16": 16, "u32": 32, "s32": 32, "f32": 32,
         "u64": 64, "s64": 64, "f64": 64, "f8e4m3fn": 8, "f8e5m2": 8}
TYPES = list(WIDTH)
M64 = (1 << 64) - 1


def hlo(alg, state_shape, out_shape):
    return f"""HloModule m
ENTRY main {{
  s = {state_shape} parameter(0)
  ROOT r = ({state_shape}, {out_shape}) rng-bit-generator(s), algorithm={ALGS[alg]}
}}"""


def shape_text(t, dims):
    return f"{t}[{','.join(map(str, dims))}]"


def u64_json(x):
    x = int(x)
    return x if x < (1 << 53) else str(x)


def element_json(t, bits):
    w = WIDTH[t]
    bits = int(bits) & ((1 << w) - 1)
    if t[0] == "u":
        return u64_json(bits)
    if t[0] == "s":
        v = bits - (1 << w) if bits >> (w - 1) else bits
        return v if abs(v) < (1 << 53) else str(v)
    return "0x%0*x" % (w // 4, bits)


def nest(flat, dims, f):
    if not dims:
        return f(flat[0])
    if len(dims) == 1:
        return [f(x) for x in flat]
    step = int(np.prod(dims[1:])) if dims[1:] else 1
    return [nest(flat[i * step:(i + 1) * step], dims[1:], f) for i in range(dims[0])]


def case(alg, t, dims, state, name):
    state_shape = f"u64[{len(state)}]"
    out_shape = shape_text(t, dims)
    new_state, bits = run_hlo(hlo(alg, state_shape, out_shape), [np.array(state, dtype=np.uint64)])
    assert bits.dtype.itemsize * 8 == WIDTH[t], (bits.dtype, t)
    flat = [int(x) for x in np.asarray(bits).reshape(-1).view(np.dtype(f"uint{WIDTH[t]}"))]
    module = {"format": "xla-json/1", "entry": "main", "computations": {"main": {
        "params": [{"name": "s", "shape": state_shape}],
        "instructions": [{"name": "r", "op": "RngBitGenerator", "operands": ["s"], "algorithm": alg, "shape": out_shape}]}}}
    return {
        "name": name, "source": SOURCE, "module": module,
        "args": [{"shape": state_shape, "value": [u64_json(x) for x in state]}],
        "expected": {"shape": f"({state_shape}, {out_shape})", "value": {"tuple": [
            [u64_json(x) for x in new_state.reshape(-1)], nest(flat, list(dims), lambda b: element_json(t, b))]}},
    }


SHAPES = [[], [0], [1], [2], [3], [5], [7], [8], [4, 6], [3, 5], [5, 3], [2, 0, 3], [1, 7], [7, 1], [3, 3, 3],
          [2, 3, 5], [5, 7], [9, 1, 5], [1, 1], [6, 0], [3, 4]]
STATES2 = [[0, 0], [1, 2], [0x0123456789ABCDEF, 0xFEDCBA9876543210], [42, M64 - 2], [M64, M64], [7, 1 << 32]]
STATES3 = [[0, 0, 0], [1, 2, 3], [0xDEADBEEF, M64 - 1, 5], [5, M64, M64], [0x9E3779B97F4A7C15, 1 << 63, 77]]


def main():
    k = 0
    for alg in ALGS:
        cases = []
        for ti, t in enumerate(TYPES):
            for si in range(5):
                dims = SHAPES[(ti * 5 + si * 3 + (0 if alg == "THREE_FRY" else 7)) % len(SHAPES)]
                if alg == "THREE_FRY":
                    state = STATES2[(ti + si) % len(STATES2)]
                else:
                    state = (STATES2 + STATES3)[(ti * 3 + si) % (len(STATES2) + len(STATES3))]
                tag = "x".join(map(str, dims)) or "scalar"
                name = f"rng/bit_generator/{alg.lower()}/{t}_{tag}_state{len(state)}_{k}"
                k += 1
                cases.append(case(alg, t, dims, state, name))
        # Every shape once with u32, and a few larger layouts.
        for si, dims in enumerate(SHAPES + [[33, 64], [31, 17], [2, 3, 4, 5], [1000]]):
            state = (STATES2 if alg == "THREE_FRY" else STATES2 + STATES3)[si % (6 if alg == "THREE_FRY" else 11)]
            tag = "x".join(map(str, dims)) or "scalar"
            for t in (["u32", "u64"] if len(dims) < 4 and int(np.prod(dims)) < 100 else ["u32"]):
                cases.append(case(alg, t, dims, state, f"rng/bit_generator/{alg.lower()}/shapes_{t}_{tag}_{k}"))
                k += 1
        if alg == "DEFAULT":
            # The document: DEFAULT is a "Backend specific algorithm". The
            # reference computes XLA CPU's (Philox); another backend may differ.
            for c in cases:
                c["implementation_defined"] = True
        with open(os.path.join(HERE, f"bit_generator_{alg.lower()}.json"), "w") as f:
            json.dump({"format": "xla-json/1", "cases": cases}, f, separators=(",", ":"))
            f.write("\n")
        print(alg, len(cases))


def module(params, instructions, extra=None):
    comps = {"main": {"params": [{"name": n, "shape": s} for n, s in params], "instructions": instructions}}
    comps.update(extra or {})
    return {"format": "xla-json/1", "entry": "main", "computations": comps}


def rng_instr(op, shape, operands=("a", "b"), **attrs):
    d = {"name": "r", "op": op, "operands": list(operands), "shape": shape}
    d.update(attrs)
    return d


def error_case(name, params, instructions, args, error, rule):
    return {"name": f"rng/errors/{name}", "source": f"operation_semantics: {rule}",
            "module": module(params, instructions), "args": args, "expected": {"error": error}}


def hand_cases():
    """The verifier rules (one rejection each) and the values the document
    fixes whatever the stream: [a, b) with a single value, sigma = 0, b <= a."""
    u64s = lambda n: {"shape": f"u64[{n}]", "value": [1] * n}
    f32 = lambda x: {"shape": "f32[]", "value": x}
    bg = lambda alg, shape: [{"name": "r", "op": "RngBitGenerator", "operands": ["s"], "algorithm": alg, "shape": shape}]
    E = []
    R = "RngBitGenerator, initial_state"
    E.append(error_case("bit_generator/no_state", [], [{"name": "r", "op": "RngBitGenerator", "operands": [], "algorithm": "PHILOX", "shape": "u32[2]"}], [], "takes 1 operand", R))
    E.append(error_case("bit_generator/state_s64", [("s", "s64[2]")], bg("THREE_FRY", "u32[2]"), [{"shape": "s64[2]", "value": [1, 2]}], "initial_state must be a u64 vector", R))
    E.append(error_case("bit_generator/state_rank2", [("s", "u64[1,2]")], bg("THREE_FRY", "u32[2]"), [{"shape": "u64[1,2]", "value": [[1, 2]]}], "initial_state must be a u64 vector", R))
    E.append(error_case("bit_generator/state_tuple", [("s", "(u64[2])")], bg("PHILOX", "u32[2]"), [{"shape": "(u64[2])", "value": {"tuple": [[1, 2]]}}], "initial_state must be an array", R))
    E.append(error_case("bit_generator/threefry_state3", [("s", "u64[3]")], bg("THREE_FRY", "u32[2]"), [u64s(3)], "must be u64[2] for THREE_FRY", R + " u64[2] for rng_three_fry"))
    E.append(error_case("bit_generator/threefry_state1", [("s", "u64[1]")], bg("THREE_FRY", "u32[2]"), [u64s(1)], "must be u64[2] for THREE_FRY", R + " u64[2] for rng_three_fry"))
    E.append(error_case("bit_generator/philox_state4", [("s", "u64[4]")], bg("PHILOX", "u32[2]"), [u64s(4)], "u64[2] or u64[3] for PHILOX", R + " u64[3] for rng_philox (XLA also takes u64[2])"))
    E.append(error_case("bit_generator/philox_state1", [("s", "u64[1]")], bg("PHILOX", "u32[2]"), [u64s(1)], "u64[2] or u64[3] for PHILOX", R + " u64[3] for rng_philox (XLA also takes u64[2])"))
    E.append(error_case("bit_generator/default_state4", [("s", "u64[4]")], bg("DEFAULT", "u32[2]"), [u64s(4)], "for DEFAULT", R + "; DEFAULT is Philox on XLA CPU"))
    O = "RngBitGenerator, uniform random bits (XLA accepts 8- to 64-bit integer and float outputs)"
    E.append(error_case("bit_generator/pred_output", [("s", "u64[2]")], bg("PHILOX", "pred[2]"), [u64s(2)], "must be an integer or floating-point type", O))
    E.append(error_case("bit_generator/complex_output", [("s", "u64[2]")], bg("THREE_FRY", "c64[2]"), [u64s(2)], "must be an integer or floating-point type", O))
    E.append(error_case("bit_generator/tuple_output", [("s", "u64[2]")], bg("THREE_FRY", "(u32[2])"), [u64s(2)], "shape must be an array", O))
    E.append(error_case("bit_generator/dynamic_output", [("s", "u64[2]")], bg("PHILOX", "u32[<=4]"), [u64s(2)], "dynamic", O + "; static shapes only"))
    U = "RngUniform"
    E.append(error_case("uniform/one_operand", [("a", "f32[]")], [rng_instr("RngUniform", "f32[3]", ["a"])], [f32(0)], "takes 2 operands", U))
    E.append(error_case("uniform/a_not_scalar", [("a", "f32[2]"), ("b", "f32[]")], [rng_instr("RngUniform", "f32[3]")], [{"shape": "f32[2]", "value": [0, 0]}, f32(1)], "a must be a scalar", U + ": the parameters need to be scalar valued"))
    E.append(error_case("uniform/b_not_scalar", [("a", "f32[]"), ("b", "f32[1]")], [rng_instr("RngUniform", "f32[3]")], [f32(0), {"shape": "f32[1]", "value": [1]}], "b must be a scalar", U + ": the parameters need to be scalar valued"))
    E.append(error_case("uniform/b_type", [("a", "f32[]"), ("b", "f64[]")], [rng_instr("RngUniform", "f32[3]")], [f32(0), {"shape": "f64[]", "value": 1}], "b has element type f64", U + ": the types have to be consistent"))
    E.append(error_case("uniform/a_type", [("a", "s32[]"), ("b", "s32[]")], [rng_instr("RngUniform", "f32[3]")], [{"shape": "s32[]", "value": 0}, {"shape": "s32[]", "value": 1}], "a has element type s32", U + ": the types have to be consistent"))
    E.append(error_case("uniform/complex", [("a", "c64[]"), ("b", "c64[]")], [rng_instr("RngUniform", "c64[3]")], [{"shape": "c64[]", "value": [0, 0]}, {"shape": "c64[]", "value": [1, 0]}], "pred, an integer or a floating-point type", U + ": boolean, integral or floating point types"))
    E.append(error_case("uniform/tuple_shape", [("a", "f32[]"), ("b", "f32[]")], [rng_instr("RngUniform", "(f32[3])")], [f32(0), f32(1)], "shape must be an array", U))
    N = "RngNormal"
    E.append(error_case("normal/integer", [("a", "s32[]"), ("b", "s32[]")], [rng_instr("RngNormal", "s32[3]")], [{"shape": "s32[]", "value": 0}, {"shape": "s32[]", "value": 1}], "a floating-point type", N + ": floating point elemental type"))
    E.append(error_case("normal/pred", [("a", "pred[]"), ("b", "pred[]")], [rng_instr("RngNormal", "pred[3]")], [{"shape": "pred[]", "value": False}, {"shape": "pred[]", "value": True}], "a floating-point type", N + ": floating point elemental type"))
    E.append(error_case("normal/sigma_not_scalar", [("a", "f32[]"), ("b", "f32[2]")], [rng_instr("RngNormal", "f32[3]")], [f32(0), {"shape": "f32[2]", "value": [1, 1]}], "sigma must be a scalar", N + ": the parameters have to be scalar valued"))
    E.append(error_case("normal/mu_type", [("a", "f64[]"), ("b", "f32[]")], [rng_instr("RngNormal", "f32[3]")], [{"shape": "f64[]", "value": 0}, f32(1)], "mu has element type f64", N + ": mu, sigma and the output have type T"))
    E.append(error_case("normal/three_operands", [("a", "f32[]"), ("b", "f32[]"), ("c", "f32[]")], [rng_instr("RngNormal", "f32[3]", ["a", "b", "c"])], [f32(0), f32(1), f32(2)], "takes 2 operands", N))

    V = []

    def value_case(name, op, t, dims, a, b, expected_elem, source, seed=None, impl=False):
        shape = f"{t}[{','.join(map(str, dims))}]"
        def fill(d):
            return expected_elem if not d else [fill(d[1:]) for _ in range(d[0])]
        c = {"name": f"rng/{name}", "source": source,
             "module": module([("a", f"{t}[]"), ("b", f"{t}[]")], [rng_instr(op, shape)]),
             "args": [{"shape": f"{t}[]", "value": a}, {"shape": f"{t}[]", "value": b}],
             "expected": {"shape": shape, "value": fill(dims)}}
        if seed is not None:
            c["seed"] = seed
        if impl:
            c["implementation_defined"] = True
        return c

    one = "hand-derived: operation_semantics RngUniform, [a, b) holds the single value a"
    V.append(value_case("uniform/s32_single_value", "RngUniform", "s32", [4, 5], 7, 8, 7, one, seed=1))
    V.append(value_case("uniform/s64_single_value", "RngUniform", "s64", [6], "-9223372036854775808", "-9223372036854775807", "-9223372036854775808", one, seed=2))
    V.append(value_case("uniform/u8_single_value", "RngUniform", "u8", [3, 3], 250, 251, 250, one))
    V.append(value_case("uniform/u64_single_value", "RngUniform", "u64", [5], "18446744073709551614", "18446744073709551615", "18446744073709551614", one, seed=3))
    V.append(value_case("uniform/pred_false_true", "RngUniform", "pred", [7], False, True, False, one))
    V.append(value_case("uniform/f32_single_value", "RngUniform", "f32", [9], 1, "0x3f800001", 1, one + " (b = the next f32 after 1)", seed=4))
    V.append(value_case("uniform/f16_single_value", "RngUniform", "f16", [9], -2, "0xbfff", -2, one + " (b = the next f16 above -2)", seed=5))
    V.append(value_case("uniform/bf16_single_value", "RngUniform", "bf16", [2, 4], 3, "0x4041", 3, one + " (b = the next bf16 after 3)", seed=6))
    V.append(value_case("uniform/f64_single_value", "RngUniform", "f64", [4], 0.5, "0x3fe0000000000001", 0.5, one + " (b = the next f64 after 0.5)", seed=7))
    V.append(value_case("uniform/f32_zero_sized", "RngUniform", "f32", [2, 0], 0, 1, 0, "hand-derived: zero-sized output"))
    V.append(value_case("uniform/s32_zero_sized", "RngUniform", "s32", [0], 0, 10, 0, "hand-derived: zero-sized output"))
    impl = ("implementation-defined (operation_semantics RngUniform: if b <= a the result is implementation-defined); "
            "xlaref: every element is a (docs/semantics-decisions.md)")
    V.append(value_case("uniform/f32_b_below_a", "RngUniform", "f32", [2, 3], 2, 1, 2, impl, seed=8, impl=True))
    V.append(value_case("uniform/f32_b_equals_a", "RngUniform", "f32", [4], -1.5, -1.5, -1.5, impl, impl=True))
    V.append(value_case("uniform/s32_b_equals_a", "RngUniform", "s32", [4], 5, 5, 5, impl, seed=9, impl=True))
    V.append(value_case("uniform/u32_b_below_a", "RngUniform", "u32", [3], 9, 2, 9, impl, impl=True))
    V.append(value_case("uniform/f32_nan_bound", "RngUniform", "f32", [3], 0, "nan", 0, impl + " (a NaN bound: a < b is false)", impl=True))
    zero = "hand-derived: operation_semantics RngNormal, N(mu, 0) is the constant mu (xlaref computes mu + 0 * z)"
    V.append(value_case("normal/f32_sigma_zero", "RngNormal", "f32", [2, 3], 3.5, 0, 3.5, zero, seed=10))
    V.append(value_case("normal/f64_sigma_zero", "RngNormal", "f64", [5], -0.25, 0, -0.25, zero, seed=11))
    V.append(value_case("normal/f16_sigma_zero", "RngNormal", "f16", [3], 1, 0, 1, zero))
    V.append(value_case("normal/bf16_zero_sized", "RngNormal", "bf16", [0, 4], 0, 1, 0, "hand-derived: zero-sized output"))

    # Range checks: every element of a large draw lies in [a, b) (the
    # document's interval), whatever the stream: a pred per element.
    def range_case(name, t, n, a, b, seed):
        ins = [rng_instr("RngUniform", f"{t}[{n}]"),
               {"name": "ab", "op": "Broadcast", "operands": ["a"], "broadcast_sizes": [n]},
               {"name": "bb", "op": "Broadcast", "operands": ["b"], "broadcast_sizes": [n]},
               {"name": "ge", "op": "Compare", "operands": ["r", "ab"], "comparison_direction": "GE"},
               {"name": "lt", "op": "Compare", "operands": ["r", "bb"], "comparison_direction": "LT"},
               {"name": "both", "op": "And", "operands": ["ge", "lt"]}]
        return {"name": f"rng/uniform/in_range_{name}", "source": "hand-derived: operation_semantics RngUniform, every element lies in [a, b)",
                "module": module([("a", f"{t}[]"), ("b", f"{t}[]")], ins),
                "args": [{"shape": f"{t}[]", "value": a}, {"shape": f"{t}[]", "value": b}], "seed": seed,
                "expected": {"shape": f"pred[{n}]", "value": [True] * n}}
    V.append(range_case("f32", "f32", 1000, -2, 3, 1))
    V.append(range_case("f32_narrow", "f32", 1000, 1, "0x3f800004", 2))
    V.append(range_case("f16", "f16", 1000, 1, 2, 3))
    V.append(range_case("bf16", "bf16", 1000, -1, 0, 4))
    V.append(range_case("f64", "f64", 1000, 1e-300, 1e300, 5))
    V.append(range_case("f8e4m3fn", "f8e4m3fn", 300, -448, 448, 6))
    V.append(range_case("s64_full", "s64", 1000, "-9223372036854775808", "9223372036854775807", 7))
    V.append(range_case("u64_full", "u64", 1000, 0, "18446744073709551615", 8))
    V.append(range_case("s8", "s8", 1000, -128, 127, 9))
    V.append(range_case("u16", "u16", 1000, 100, 103, 10))
    V.append(range_case("s32", "s32", 1000, -5, 5, 11))

    for fname, cases in (("errors.json", E), ("uniform_normal.json", V)):
        cases = outside_suite(os.path.join(HERE, fname), cases)
        if not cases:
            continue
        with open(os.path.join(HERE, fname), "w") as f:
            json.dump({"format": "xla-json/1", "cases": cases}, f, indent=1)
            f.write("\n")
        print(fname, len(cases))


if __name__ == "__main__":
    if sys.argv[1:] == ["hand"]:
        hand_cases()
    else:
        main()
        hand_cases()
