"""The xla-json/1 reading rules the adapter enforces before translating
(docs/format.md section 3): known keys, attribute names per op, operand counts.
These are rules of the format and of XlaBuilder's signatures, not of XLA's
compiler, so the adapter checks them itself."""
from xlajson import Reject

MODULE_KEYS = {"format", "entry", "computations", "name"}
COMPUTATION_KEYS = {"params", "instructions", "root"}
PARAM_KEYS = {"name", "shape"}
BASE_KEYS = {"name", "op", "operands", "shape"}

WINDOW = {"window_dimensions", "window_strides", "padding"}
CONV = {"window_strides", "padding", "lhs_dilation", "rhs_dilation", "feature_group_count", "batch_group_count",
        "dimension_numbers", "preferred_element_type", "precision_config"}
COLLECTIVE = {"replica_groups", "channel_id"}
ATTRS = {
    "Compare": {"comparison_direction", "comparison_type", "broadcast_dimensions"},
    "Constant": {"literal"},
    "Broadcast": {"broadcast_sizes"},
    "BroadcastInDim": {"out_dim_size", "broadcast_dimensions"},
    "Reshape": {"new_sizes", "dimensions"},
    "Collapse": {"dimensions"},
    "Transpose": {"permutation"},
    "Rev": {"dimensions"},
    "Slice": {"start_indices", "limit_indices", "strides"},
    "ConcatInDim": {"dimension"},
    "Concatenate": {"dimension"},
    "Pad": {"padding_config"},
    "Iota": {"iota_dimension"},
    "ConvertElementType": {"new_element_type"},
    "BitcastConvertType": {"new_element_type"},
    "ReducePrecision": {"exponent_bits", "mantissa_bits"},
    "GetTupleElement": {"index"},
    "DynamicSlice": {"size_indices", "slice_sizes"},
    "Gather": {"offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim", "slice_sizes",
               "indices_are_sorted", "operand_batching_dims", "start_indices_batching_dims"},
    "Scatter": {"update_computation", "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                "index_vector_dim", "indices_are_sorted", "unique_indices", "input_batching_dims",
                "scatter_indices_batching_dims"},
    "Reduce": {"computation", "dimensions"},
    "ReduceWindow": WINDOW | {"computation", "base_dilations", "window_dilations"},
    "SelectAndScatter": WINDOW | {"select", "scatter"},
    "Map": {"computation", "dimensions"},
    "Sort": {"comparator", "dimension", "is_stable"},
    "TopK": {"k", "largest"},
    "Dot": {"precision_config", "preferred_element_type"},
    "DotGeneral": {"dimension_numbers", "precision_config", "preferred_element_type"},
    "Conv": CONV, "ConvWithGeneralPadding": CONV, "ConvWithGeneralDimensions": CONV, "ConvGeneral": CONV,
    "ConvGeneralDilated": CONV,
    "Fft": {"fft_type", "fft_length"},
    "Cholesky": {"lower"},
    "TriangularSolve": {"left_side", "lower", "unit_diagonal", "transpose_a"},
    "BatchNormTraining": {"epsilon", "feature_index"},
    "BatchNormInference": {"epsilon", "feature_index"},
    "BatchNormGrad": {"epsilon", "feature_index"},
    "Call": {"computation", "to_apply"},
    "Conditional": {"branch_computations", "true_computation", "false_computation"},
    "While": {"condition", "body"},
    "RngBitGenerator": {"algorithm"},
    "GetDimensionSize": {"dimension"},
    "SetDimensionSize": {"dimension"},
    "CustomCall": {"target_name", "call_target_name", "opaque", "backend_config", "has_side_effect",
                   "api_version", "operand_layouts", "output_operand_aliasing", "schedule"},
    "AllGather": COLLECTIVE | {"all_gather_dim", "shard_count"},
    "AllReduce": COLLECTIVE | {"computation"},
    "ReduceScatter": COLLECTIVE | {"computation", "scatter_dimension", "shard_count"},
    "AllToAll": COLLECTIVE | {"split_dimension", "concat_dimension", "split_count"},
    "CollectivePermute": {"source_target_pairs", "channel_id"},
    "CrossReplicaSum": COLLECTIVE,
    "Send": {"channel_id"}, "SendDone": {"channel_id"}, "Recv": {"channel_id"}, "RecvDone": {"channel_id"},
    "Infeed": {"config"}, "Outfeed": {"shape_with_layout", "outfeed_config", "config"},
}
ELEMENTWISE_ATTRS = {"broadcast_dimensions"}

# Exact operand counts of fixed-arity ops (XlaBuilder's signatures).
ARITY = {
    "Constant": 0, "Iota": 0, "Broadcast": 1, "BroadcastInDim": 1, "Reshape": 1, "Collapse": 1, "Transpose": 1,
    "Rev": 1, "Slice": 1, "Pad": 2, "ConvertElementType": 1, "BitcastConvertType": 1, "ReducePrecision": 1,
    "GetTupleElement": 1, "Gather": 2, "SelectAndScatter": 3, "TopK": 1, "Dot": 2, "DotGeneral": 2, "Conv": 2,
    "ConvWithGeneralPadding": 2, "ConvWithGeneralDimensions": 2, "ConvGeneral": 2, "ConvGeneralDilated": 2,
    "Fft": 1, "Cholesky": 1, "TriangularSolve": 2, "BatchNormTraining": 3, "BatchNormInference": 5,
    "BatchNormGrad": 5, "While": 1, "OptimizationBarrier": 1, "Select": 3, "Clamp": 3,
}
AT_LEAST = {"DynamicSlice": 1, "DynamicUpdateSlice": 2, "Map": 1, "Sort": 1, "ConcatInDim": 1, "Concatenate": 1}


def check_keys(obj, allowed, where):
    if not isinstance(obj, dict):
        raise Reject(f"{where} must be a JSON object")
    for k in obj:
        if k not in allowed:
            raise Reject(f"{where}: unknown key `{k}`")


def check_module(doc):
    check_keys(doc, MODULE_KEYS, "module")
    if "format" in doc and doc["format"] != "xla-json/1":
        raise Reject(f"unsupported format {doc['format']!r}: expected \"xla-json/1\"")
    comps = doc.get("computations")
    if not isinstance(comps, dict):
        raise Reject("a module needs `computations`")
    for cname, comp in comps.items():
        check_keys(comp, COMPUTATION_KEYS, f"computation {cname}")
        names = set()
        for p in comp.get("params", []):
            check_keys(p, PARAM_KEYS, f"{cname} parameter")
            if not isinstance(p.get("name"), str):
                raise Reject(f"{cname}: a parameter's `name` must be a string")
            if p["name"] in names:
                raise Reject(f"{cname}: duplicate name `{p['name']}` in the computation")
            names.add(p["name"])
        for ins in comp.get("instructions", []):
            if not isinstance(ins, dict):
                raise Reject(f"{cname}: an instruction is a JSON object")
            if not isinstance(ins.get("name"), str):
                raise Reject(f"{cname}: `name` must be a string")
            if ins["name"] in names:
                raise Reject(f"{cname}: duplicate name `{ins['name']}` in the computation")
            names.add(ins["name"])
            check_instruction(ins, cname)


def check_instruction(ins, cname):
    from hlo import BINARY, CHLO_BINARY, CHLO_UNARY, DIRECTIONS, UNARY
    op = ins.get("op")
    if not isinstance(op, str):
        raise Reject(f"{cname}.{ins['name']}: `op` must be a string")
    if op in UNARY or op in CHLO_UNARY or op == "Conj":
        allowed, arity = set(), 1
    elif op in BINARY or op in CHLO_BINARY or op in DIRECTIONS or (op.endswith("TotalOrder") and op[:-10] in DIRECTIONS):
        allowed, arity = ELEMENTWISE_ATTRS, 2
    elif op == "Compare":
        allowed, arity = ATTRS[op], 2
    else:
        allowed, arity = ATTRS.get(op, set()), ARITY.get(op)
    for k in ins:
        if k not in BASE_KEYS and k not in allowed:
            raise Reject(f"{cname}.{ins['name']}: unknown attribute `{k}` for op {op}")
    operands = ins.get("operands", [])
    if not isinstance(operands, list):
        raise Reject(f"{cname}.{ins['name']}: `operands` must be a list")
    if arity is not None and len(operands) != arity:
        raise Reject(f"{cname}.{ins['name']}: {op} takes {arity} operand{'s' if arity != 1 else ''}, got {len(operands)}")
    if op == "Pad" and isinstance(ins.get("padding_config"), list):
        for d in ins["padding_config"]:
            check_keys(d, {"edge_padding_low", "edge_padding_high", "interior_padding"}, f"{cname}.{ins['name']} padding_config")
    if op == "Compare" and "comparison_type" in ins:
        t = str(ins["comparison_type"]).upper()
        if t not in ("FLOAT", "SIGNED", "UNSIGNED", "PARTIALORDER", "NOTYPE", "TOTALORDER"):
            raise Reject(f"{cname}.{ins['name']}: unknown comparison type `{ins['comparison_type']}`")
    if op in AT_LEAST and len(operands) < AT_LEAST[op]:
        raise Reject(f"{cname}.{ins['name']}: {op} takes at least {AT_LEAST[op]} operands, got {len(operands)}")
