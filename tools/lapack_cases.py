#!/usr/bin/env python3
"""Oracle cases of the LAPACK custom-call targets (issue 26).

Writes oracle-cases/linalg/lapack.json (the targets' raw outputs, expected
values from scipy.linalg.lapack / scipy.linalg.blas, i.e. the LAPACK and
BLAS XLA CPU links in its `lapack_?..._ffi` handlers) and
oracle-cases/verifier/custom_call.json (modules the verifier rejects).

    python3 tools/lapack_cases.py
"""
import json
import os
import sys

import numpy as np
import scipy
import scipy.linalg.blas as blas
import scipy.linalg.lapack as lapack

sys.path.insert(0, os.path.dirname(__file__))
from jax_programs import typed  # noqa: E402  (the value writer of the program cases)

ROOT = os.path.join(os.path.dirname(__file__), "..", "oracle-cases")
SRC = f"scipy {scipy.__version__} (scipy.linalg.lapack/blas: LAPACK's own outputs)"
TOL = {"s": {"rel": 1e-5, "abs": 1e-6}, "c": {"rel": 1e-5, "abs": 1e-6},
       "d": {"rel": 1e-12, "abs": 1e-14}, "z": {"rel": 1e-12, "abs": 1e-14}}
DTYPE = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}


def shape_of(a):
    return typed(a)["shape"]


def module(params, instructions):
    return {"format": "xla-json/1", "entry": "main", "computations": {"main": {
        "params": [{"name": n, "shape": s} for n, s in params], "instructions": instructions}}}


def call(name, operands, target, shape, opaque=None):
    i = {"name": name, "op": "CustomCall", "operands": operands, "target_name": target, "shape": shape}
    if opaque is not None:
        i["opaque"] = opaque
    return i


def tup(*shapes):
    return "(" + ", ".join(shapes) + ")"


def batched(f, a):
    """Applies f to each matrix of a batch; stacks each output."""
    flat = a.reshape((-1,) + a.shape[-2:])
    outs = [f(m) for m in flat]
    return [np.stack([o[i] for o in outs]).reshape(a.shape[:-2] + np.shape(outs[0][i])) for i in range(len(outs[0]))]


def getrf_case(name, what, letter, a):
    a = np.asarray(a, DTYPE[letter])
    f = getattr(lapack, letter + "getrf")
    lu, piv, info = batched(lambda m: (lambda r: (r[0], r[1] + 1, np.int32(r[2])))(f(m)), a)
    k = min(a.shape[-2:])
    b = list(a.shape[:-2])
    result = tup(shape_of(a), shape_of(np.zeros(b + [k], np.int32)), shape_of(np.zeros(b, np.int32)))
    m = module([("a", shape_of(a))], [call("r", ["a"], f"lapack_{letter}getrf_ffi", result)])
    return {"name": f"linalg/lapack/{name}", "source": f"LAPACK ?getrf: {what}; {SRC}, ipiv made 1-based as LAPACK's",
            "module": m, "args": [typed(a)], "expected": typed((lu, piv.astype(np.int32), info.astype(np.int32))),
            "tolerance": TOL[letter]}


def potrf_case(name, what, letter, a, lower):
    a = np.asarray(a, DTYPE[letter])
    f = getattr(lapack, letter + "potrf")
    c, info = batched(lambda m: (lambda r: (r[0], np.int32(r[1])))(f(m, lower=int(lower), clean=0)), a)
    result = tup(shape_of(a), shape_of(np.zeros(a.shape[:-2], np.int32)))
    opaque = "{uplo = %d : ui8}" % ord("L" if lower else "U")
    m = module([("a", shape_of(a))], [call("r", ["a"], f"lapack_{letter}potrf_ffi", result, opaque)])
    return {"name": f"linalg/lapack/{name}", "source": f"LAPACK ?potrf: {what}; {SRC} (clean=0: the other triangle as LAPACK leaves it)",
            "module": m, "args": [typed(a)], "expected": typed((c, info.astype(np.int32))), "tolerance": TOL[letter]}


def qr_case(name, what, letter, a):
    a = np.asarray(a, DTYPE[letter])
    geqrf = getattr(lapack, letter + "geqrf")
    org = "ungqr" if letter in "cz" else "orgqr"
    orgqr = getattr(lapack, letter + org)

    def one(m):
        qr, tau = geqrf(m)[:2]
        q = orgqr(qr, tau)[0] if m.shape[0] >= m.shape[1] else None
        return (qr, tau) if q is None else (qr, tau, q)

    outs = batched(one, a)
    k = min(a.shape[-2:])
    tau_shape = shape_of(np.zeros(a.shape[:-2] + (k,), a.dtype))
    instrs = [call("qr", ["a"], f"lapack_{letter}geqrf_ffi", tup(shape_of(a), tau_shape)),
              {"name": "v", "op": "GetTupleElement", "operands": ["qr"], "index": 0},
              {"name": "t", "op": "GetTupleElement", "operands": ["qr"], "index": 1}]
    if len(outs) == 3:
        instrs.append(call("q", ["v", "t"], f"lapack_{letter}{org}_ffi", shape_of(a)))
    instrs.append({"name": "r", "op": "Tuple", "operands": ["v", "t", "q"][:len(outs)]})
    m = module([("a", shape_of(a))], instrs)
    return {"name": f"linalg/lapack/{name}", "source": f"LAPACK ?geqrf then ?{org}: {what}; {SRC}",
            "module": m, "args": [typed(a)], "expected": typed(tuple(outs)), "tolerance": TOL[letter]}


def trsm_case(name, what, letter, a, b, side, uplo, trans, diag):
    a, b = np.asarray(a, DTYPE[letter]), np.asarray(b, DTYPE[letter])
    f = getattr(blas, letter + "trsm")
    x = f(1.0, a, b, side=int(side == "R"), lower=int(uplo == "L"), trans_a="NTC".index(trans), diag=int(diag == "U"))
    opaque = "{diag = %d : ui8, side = %d : ui8, trans_x = %d : ui8, uplo = %d : ui8}" % (ord(diag), ord(side), ord(trans), ord(uplo))
    m = module([("a", shape_of(a)), ("b", shape_of(b))], [call("r", ["a", "b"], f"lapack_{letter}trsm_ffi", shape_of(b), opaque)])
    return {"name": f"linalg/lapack/{name}", "source": f"BLAS ?trsm (side {side}, uplo {uplo}, trans_x {trans}, diag {diag}): {what}; {SRC}",
            "module": m, "args": [typed(a), typed(b)], "expected": typed(x), "tolerance": TOL[letter]}


def linalg_cases():
    rng = np.random.default_rng(26)
    yield getrf_case("sgetrf_pivot", "rows 3 then 3 are the pivots (largest |a| first)", "s",
                     [[1, 2, 3], [4, 5, 6], [7, 8, 10]])
    yield getrf_case("dgetrf_singular_info", "column 2 becomes exactly zero: info = 2, the elimination goes on", "d",
                     [[1, 2, 3], [2, 4, 5], [3, 6, 1]])
    yield getrf_case("sgetrf_tie_first_row", "|a| ties (3 and -3): the first of the largest is the pivot", "s",
                     [[1, 0], [3, 1], [-3, 2]])
    yield getrf_case("zgetrf_batch_cabs1", "complex, batch of 2: pivots by |re| + |im| (row 2's 1+1i beats 1.5)", "z",
                     [[[1.5, 1, 0], [1 + 1j, 2, 1j], [0.5j, -1, 3]],
                      rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))])
    yield getrf_case("cgetrf_zero_matrix", "a zero matrix: every pivot is its own row, info = 1", "c", np.zeros((2, 2)))
    yield getrf_case("sgetrf_rectangular_batch", "batch [2] of 4x3, then [2] of 3x4 below", "s", rng.standard_normal((2, 4, 3)))
    yield getrf_case("dgetrf_wide", "3x4: min(m, n) = 3 pivots", "d", rng.standard_normal((3, 4)))
    spd = np.array([[4, 99, 99], [2, 5, 99], [-2, 1, 11]], float)
    yield potrf_case("dpotrf_lower_other_triangle_kept", "L·Lᵀ from the lower triangle, 99s above are kept", "d", spd, True)
    yield potrf_case("spotrf_upper", "Uᵀ·U from the upper triangle, the lower one kept", "s", spd.T, False)
    yield potrf_case("dpotrf_not_positive_definite", "the reduced pivot of column 3 is -13: info = 3, a[2][2] holds -13", "d",
                     [[4, 99, 99], [2, 5, 99], [-2, 1, -11]], True)
    yield potrf_case("dpotrf_semidefinite_info", "the reduced pivot of column 2 is 0 (not positive): info = 2", "d",
                     [[4, 0, 0], [2, 1, 0], [-2, 1, 11]], True)
    h = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    yield potrf_case("zpotrf_batch_hermitian", "batch of 2 Hermitian M·Mᴴ + 3I, lower", "z", h @ np.conj(np.swapaxes(h, -1, -2)) + 3 * np.eye(3), True)
    g = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    yield potrf_case("cpotrf_upper", "Hermitian M·Mᴴ + I, upper", "c", g @ g.conj().T + np.eye(3), False)
    yield qr_case("dgeqrf_orgqr_4x3", "4x3: R and v's in a, tau, and the 4x3 Q", "d", rng.standard_normal((4, 3)))
    yield qr_case("sgeqrf_zero_below_tau_zero", "column 1 is zero below a real diagonal: tau = 0 and R keeps 2", "s",
                  [[2, 1], [0, 1], [0, 1]])
    yield qr_case("cgeqrf_ungqr_batch", "complex, batch of 2 of 3x2", "c",
                  rng.standard_normal((2, 3, 2)) + 1j * rng.standard_normal((2, 3, 2)))
    yield qr_case("zgeqrf_wide", "2x3 (no ungqr: it needs m >= n)", "z", rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)))
    t = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    junk = t + np.triu(np.full((3, 3), 7.0), 1)
    yield trsm_case("strsm_left_lower_unit", "the L solve of jnp.linalg.solve; the 7s above and the diagonal are not read", "s",
                    junk, rng.standard_normal((3, 2)), "L", "L", "N", "U")
    yield trsm_case("dtrsm_right_upper_transposed", "X·Aᵀ = B with A's upper triangle", "d",
                    junk.T, rng.standard_normal((2, 3)), "R", "U", "T", "N")
    tz = np.triu(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))) + 3 * np.eye(3)
    yield trsm_case("ztrsm_left_upper_adjoint", "Aᴴ·X = B", "z", tz, rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2)),
                    "L", "U", "C", "N")


def verifier_cases():
    f33 = "f32[3,3]"
    args = [{"shape": f33, "value": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}]
    yield {"name": "verifier/custom_call/unknown_target", "source": "xlaref: the verifier knows the registry's targets (VerifyOptions::custom_call_targets)",
           "module": module([("a", f33)], [call("r", ["a"], "lapack_sgesdd_ffi", f33)]), "args": args,
           "expected": {"error": "no target named `lapack_sgesdd_ffi` is registered"}}
    yield {"name": "verifier/custom_call/getrf_result_shape", "source": "LAPACK ?getrf returns (lu, ipiv s32[min(m,n)], info s32[]) (custom_call/lapack_abi.rs)",
           "module": module([("a", f33)], [call("r", ["a"], "lapack_sgetrf_ffi", "(f32[3,3], s32[3])")]), "args": args,
           "expected": {"error": "`lapack_sgetrf_ffi` returns (f32[3,3], s32[3], s32[]) for these operands, the CustomCall declares (f32[3,3], s32[3])"}}
    yield {"name": "verifier/custom_call/getrf_element_type", "source": "the type letter fixes the element type: d is f64",
           "module": module([("a", f33)], [call("r", ["a"], "lapack_dgetrf_ffi", "(f32[3,3], s32[3], s32[])")]), "args": args,
           "expected": {"error": "the matrix must have element type f64"}}
    yield {"name": "verifier/custom_call/trsm_batch_dims", "source": "?trsm: a and b have the same batch dimensions",
           "module": module([("a", "f32[2,3,3]"), ("b", "f32[3,3,1]")], [call("r", ["a", "b"], "lapack_strsm_ffi", "f32[3,3,1]")]),
           "args": [{"shape": "f32[2,3,3]", "value": [[[1, 0, 0]] * 3] * 2}, {"shape": "f32[3,3,1]", "value": [[[1]] * 3] * 3}],
           "expected": {"error": "batch dimensions differ"}}
    yield {"name": "verifier/custom_call/potrf_bad_uplo", "source": "?potrf: uplo is 'L' (76) or 'U' (85)",
           "module": module([("a", f33)], [call("r", ["a"], "lapack_spotrf_ffi", "(f32[3,3], s32[])", "{uplo = 88 : ui8}")]), "args": args,
           "expected": {"error": "flag `uplo` is 88 ('X'), it must be one of 'L' (76), 'U' (85)"}}


def write(path, cases):
    with open(path, "w") as f:
        f.write('{"format": "xla-json/1", "cases": [\n' + ",\n".join(json.dumps(c) for c in cases) + "\n]}\n")
    print(path)


if __name__ == "__main__":
    write(os.path.join(ROOT, "linalg", "lapack.json"), list(linalg_cases()))
    write(os.path.join(ROOT, "verifier", "custom_call.json"), list(verifier_cases()))
