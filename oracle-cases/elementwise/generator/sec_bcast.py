"""Section 2: the broadcasting document's examples."""
from case import *
import numpy as np

def bshape(t, dims): return shape_str(t, dims)

def hand_bcast(op, t, ld, rd, bd, x, y):
    """numpy: expand the lower-rank operand by bd (1 elsewhere), then numpy degenerate broadcasting."""
    X = np.array(x, dtype=np.int64 if t in ("s32", "s64") else np.float64).reshape(ld)
    Y = np.array(y, dtype=X.dtype).reshape(rd)
    def expand(A, rank, mapping):
        if A.ndim == rank: return A
        shape = [1] * rank
        for i, d in enumerate(mapping): shape[d] = A.shape[i]
        return A.reshape(shape)
    r = max(len(ld), len(rd))
    X2, Y2 = expand(X, r, bd or []), expand(Y, r, bd or [])
    f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum}[op]
    return f(X2, Y2)

def bcase(name, source, op, t, ld, rd, x, y, bd=None, expected=None, error=None, file="elementwise/broadcasting.json"):
    ins = {"name": "r", "op": op, "operands": ["x", "y"]}
    if bd is not None: ins["broadcast_dimensions"] = bd
    params = [("x", bshape(t, ld)), ("y", bshape(t, rd))]
    if error:
        return mk(file, name, source, params, [ins], [x, y], expected={"error": error})
    val = hand_bcast(op, t, ld, rd, bd, flatten(x, ld), flatten(y, rd))
    out = val
    if expected is not None:
        assert out.tolist() == expected, (name, out.tolist(), expected)
    odims = list(out.shape)
    return mk(file, name, source + "; checked on " + XLA, params, [ins], [x, y],
              expected={"shape": bshape(t, odims), "value": out.tolist()})

def iota(dims, start=0, step=1):
    n = int(np.prod(dims))
    return nest([start + i * step for i in range(n)], dims)

def gen():
    B = "broadcasting: "
    X = [[1, 2, 3], [4, 5, 6]]
    bcase("elementwise/broadcast/matrix_plus_vector", B + "What is broadcasting?, X+v with broadcast dimension (1)",
          "Add", "f32", [2, 3], [3], X, [7, 8, 9], bd=[1], expected=[[8, 10, 12], [11, 13, 15]])
    bcase("elementwise/broadcast/vector_minus_matrix", B + "Broadcasting a lower-rank array onto a higher-rank array; the lower-rank operand may be lhs (hand-derived)",
          "Sub", "s32", [3], [2, 3], [7, 8, 9], X, bd=[1], expected=[[6, 6, 6], [3, 3, 3]])
    bcase("elementwise/broadcast/matrix_plus_scalar", B + "Broadcasting a lower-rank array onto a higher-rank array, |1 2 3; 4 5 6| + 7",
          "Add", "f32", [2, 3], [], X, 7, expected=[[8, 9, 10], [11, 12, 13]])
    bcase("elementwise/broadcast/scalar_minus_matrix", B + "scalars broadcast without broadcast_dimensions, as lhs too (hand-derived)",
          "Sub", "s32", [], [2, 3], 7, X, expected=[[6, 5, 4], [3, 2, 1]])
    bcase("elementwise/broadcast/scalar_with_empty_broadcast_dimensions", B + "a scalar with the empty broadcast_dimensions tuple (hand-derived)",
          "Mul", "s32", [2, 3], [], X, -2, bd=[], expected=[[-2, -4, -6], [-8, -10, -12]])
    bcase("elementwise/broadcast/scalar_plus_scalar", B + "two scalars (hand-derived)",
          "Add", "f64", [], [], 1.5, 2.25, expected=3.75)
    bcase("elementwise/broadcast/matrix_plus_vector_without_broadcast_dimensions", B + "\"Without specifying broadcasting, this operation is invalid\"",
          "Add", "f32", [2, 3], [3], X, [7, 8, 9], error="broadcast_dimensions")
    M = [[10, 20, 30], [40, 50, 60], [70, 80, 90]]
    bcase("elementwise/broadcast/3x3_dimension_1", B + "3x3 matrix + 3-vector, broadcasting dimension 1 (vector duplicated for each row)",
          "Add", "s32", [3, 3], [3], M, [7, 8, 9], bd=[1], expected=[[17, 28, 39], [47, 58, 69], [77, 88, 99]])
    bcase("elementwise/broadcast/3x3_dimension_0", B + "3x3 matrix + 3-vector, broadcasting dimension 0 (vector duplicated for each column)",
          "Add", "s32", [3, 3], [3], M, [7, 8, 9], bd=[0], expected=[[17, 27, 37], [48, 58, 68], [79, 89, 99]])
    bcase("elementwise/broadcast/2x3_plus_3_vector_dimension_0", B + "\"when adding a 2x3 matrix to a 3-element vector, a broadcasting dimension of 0 is invalid\"",
          "Add", "s32", [2, 3], [3], X, [7, 8, 9], bd=[0], error="sizes must match")
    bcase("elementwise/broadcast/2x3x4_cuboid_plus_3x4_matrix", B + "2x3x4 cuboid and 3x4 matrix with broadcasting tuple (1,2)",
          "Add", "s32", [2, 3, 4], [3, 4], iota([2, 3, 4]), iota([3, 4], 100, 100), bd=[1, 2])
    # degenerate dimensions
    bcase("elementwise/broadcast/degenerate_2x1_2x3", B + "degenerate dimensions, example 1: (2,1) and (2,3) broadcast to (2,3)",
          "Add", "f32", [2, 1], [2, 3], [[10], [20]], X, expected=[[11, 12, 13], [24, 25, 26]])
    bcase("elementwise/broadcast/degenerate_1x2x5_7x2x5", B + "degenerate dimensions, example 2: (1,2,5) and (7,2,5) broadcast to (7,2,5)",
          "Add", "s32", [1, 2, 5], [7, 2, 5], iota([1, 2, 5], 1000, 1000), iota([7, 2, 5]))
    bcase("elementwise/broadcast/degenerate_7x2x5_7x1x5", B + "degenerate dimensions, example 3: (7,2,5) and (7,1,5) broadcast to (7,2,5)",
          "Sub", "s32", [7, 2, 5], [7, 1, 5], iota([7, 2, 5]), iota([7, 1, 5], 0, 100))
    bcase("elementwise/broadcast/degenerate_7x2x5_7x2x6_incompatible", B + "degenerate dimensions, example 4: (7,2,5) and (7,2,6) are incompatible",
          "Add", "s32", [7, 2, 5], [7, 2, 6], iota([7, 2, 5]), iota([7, 2, 6]), error="incompatible in dimension 2")
    bcase("elementwise/broadcast/outer_2x1_1x3", B + "degenerate dimensions, outer operation: (2,1) and (1,3) broadcast to (2,3)",
          "Mul", "s32", [2, 1], [1, 3], [[2], [3]], [[10, 100, 1000]], expected=[[20, 200, 2000], [30, 300, 3000]])
    bcase("elementwise/broadcast/degenerate_both_sides_1x1", B + "degenerate dimensions: a (1,1) array against (2,3) (hand-derived)",
          "Max", "s32", [1, 1], [2, 3], [[4]], X, expected=[[4, 4, 4], [4, 5, 6]])
    # composition
    bcase("elementwise/broadcast/composition_vector_plus_1x2", B + "Broadcast composition: |1 2 3 4| + [5 6] (a 1x2 matrix) with broadcast dimensions (0)",
          "Add", "f32", [4], [1, 2], [1, 2, 3, 4], [[5, 6]], bd=[0], expected=[[6, 7], [7, 8], [8, 9], [9, 10]])
    bcase("elementwise/broadcast/composition_1x2_plus_4x3x1", B + "Broadcast composition: a 1x2 matrix added to a 4x3x1 array with broadcast dimensions (1, 2) gives 4x3x2",
          "Add", "s32", [1, 2], [4, 3, 1], [[1000, 2000]], iota([4, 3, 1]), bd=[1, 2])
    # formal definition: MxNxPxQ = 2x3x4x5
    H = [2, 3, 4, 5]
    for d in range(4):
        bcase(f"elementwise/broadcast/formal_vector_to_dim_{d}", B + f"Formal definition, vector T matched to dimension {d} of an MxNxPxQ array (M,N,P,Q = 2,3,4,5)",
              "Add", "s32", H, [H[d]], iota(H), iota([H[d]], 1000, 1000), bd=[d])
    for pair in ([2, 3], [1, 2], [0, 3], [0, 1], [1, 3]):
        td = [H[pair[0]], H[pair[1]]]
        bcase(f"elementwise/broadcast/formal_matrix_to_dims_{pair[0]}_{pair[1]}", B + f"Formal definition, TxV matrix matched to dimensions {pair[0]},{pair[1]} of an MxNxPxQ array (M,N,P,Q = 2,3,4,5)",
              "Add", "s32", td, H, iota(td, 1000, 1000), iota(H), bd=pair)
    bcase("elementwise/broadcast/formal_matrix_not_increasing", B + "Formal definition: \"it is illegal to match V to N and T to P\" (broadcast dimensions (2,1))",
          "Add", "s32", H, [4, 3], iota(H), iota([4, 3]), bd=[2, 1], error="strictly increasing")
    bcase("elementwise/broadcast/formal_matrix_same_dimension_twice", B + "Formal definition: \"it is also illegal to match V to both P and N\"; a dimension used twice (1,1)",
          "Add", "s32", [2, 3, 3, 5], [3, 3], iota([2, 3, 3, 5]), iota([3, 3]), bd=[1, 1], error="strictly increasing")
    # zero-sized
    bcase("elementwise/broadcast/empty_0x3_plus_1x3", B + "degenerate dimensions with an empty array: (0,3) and (1,3) broadcast to (0,3) (hand-derived)",
          "Add", "f32", [0, 3], [1, 3], [], [[1, 2, 3]], expected=[])
    bcase("elementwise/broadcast/empty_1x0_plus_3x1", B + "outer operation with an empty dimension: (1,0) and (3,1) broadcast to (3,0) (hand-derived)",
          "Add", "s32", [1, 0], [3, 1], [[]], [[1], [2], [3]], expected=[[], [], []])
    bcase("elementwise/broadcast/empty_vector_into_2x0", B + "a 0-vector matched to dimension 1 of a (2,0) array (hand-derived)",
          "Add", "s32", [2, 0], [0], [[], []], [], bd=[1], expected=[[], []])
    bcase("elementwise/broadcast/equal_rank_identity_broadcast_dimensions", "hand-derived: operands of equal rank with the identity broadcast_dimensions (docs/semantics-decisions.md)",
          "Add", "s32", [2, 1], [2, 3], [[10], [20]], X, bd=[0, 1], expected=[[11, 12, 13], [24, 25, 26]])

if __name__ == "__main__":
    gen(); write_all()
