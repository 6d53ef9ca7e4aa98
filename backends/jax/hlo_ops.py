"""The structured ops of the xla-json -> HLO text translation (hlo.py):
shape ops, indexing, reductions, windows, dots, convolutions, control flow.
Each `op_<Name>` returns (HLO name, result shape)."""
import numpy as np

from xlajson import (BITS, Bounded, COMPLEX, DTYPES, FLOATS, UINT_OF_WIDTH, Reject, array, hlo_literal, literal_value, num_elements, parse_shape,
                     shape_text)

TO_COMPLEX = {"f32": "c64", "f64": "c128"}


def ints(v, what):
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise Reject(f"`{what}` must be a list of integers")
    return v


def braces(v):
    return "{" + ",".join(str(x) for x in v) + "}"


def dims_of(s, what="operand"):
    if s[0] != "array":
        raise Reject(f"{what} must be an array, got {shape_text(s)}")
    return s[2]

class StructuredOps:
    """Mixed into hlo.Computation."""

    def op_Parameter(self, ins, ops, nm):
        raise Reject(f"{nm}: Parameter is not an instruction; declare it in `params`")

    def op_Constant(self, ins, ops, nm):
        s = parse_shape(self.attr(ins, "shape", required=True))
        val = literal_value(s, self.attr(ins, "literal", required=True))
        return self.constant(s, val, nm)

    def constant(self, s, val, nm):
        if s[0] == "tuple":
            parts = [self.constant(e, v, nm) for e, v in zip(s[1], val)]
            return self.emit(s, f"tuple({', '.join(p[0] for p in parts)})", nm)
        if s[0] == "token":
            return self.emit(s, "after-all()", nm)
        et, dims = s[1], s[2]
        if num_elements(dims) == 0:
            zero = "false" if et == "pred" else ("(0, 0)" if et in COMPLEX else "0")
            z = self.emit(array(et, []), f"constant({zero})", "zero")
            return self.emit(s, f"broadcast({z[0]}), dimensions={{}}", nm)
        if et in FLOATS:
            # Exact bits: an unsigned constant bitcast to the float type.
            ut = "u" + str(BITS[et])
            bits = np.asarray(val, dtype=DTYPES[et]).view(UINT_OF_WIDTH[BITS[et]])
            u = self.emit(array(ut, dims), f"constant({hlo_literal(array(ut, dims), bits)})", "bits")
            return self.emit(s, f"bitcast-convert({u[0]})", nm)
        if et in COMPLEX:
            pt = COMPLEX[et]
            a = np.asarray(val, dtype=DTYPES[et])
            r = self.constant(array(pt, dims), a.real.copy(), "re")
            i = self.constant(array(pt, dims), a.imag.copy(), "im")
            return self.emit(s, f"complex({r[0]}, {i[0]})", nm)
        return self.emit(s, f"constant({hlo_literal(s, val)})", nm)

    def op_Iota(self, ins, ops, nm):
        s = parse_shape(self.attr(ins, "shape", required=True))
        d = self.attr(ins, "iota_dimension", required=True)
        return self.emit(s, f"iota(), iota_dimension={d}", nm)

    def op_ConvertElementType(self, ins, ops, nm):
        et = self.attr(ins, "new_element_type", required=True)
        if et not in DTYPES:
            raise Reject(f"{nm}: unknown element type {et}")
        return self.emit(array(et, dims_of(ops[0][1])), f"convert({ops[0][0]})", nm)

    def op_BitcastConvertType(self, ins, ops, nm):
        et = self.attr(ins, "new_element_type", required=True)
        if et not in DTYPES:
            raise Reject(f"{nm}: unknown element type {et}")
        s = ops[0][1]
        dims = list(dims_of(s))
        wi, wo = BITS[s[1]], BITS[et]
        if wi > wo:
            dims.append(wi // wo)
        elif wi < wo:
            if not dims or dims[-1] != wo // wi:
                raise Reject(f"{nm}: bitcast to a wider type needs a last dimension of {wo // wi}")
            dims.pop()
        return self.emit(array(et, dims), f"bitcast-convert({ops[0][0]})", nm)

    def op_ReducePrecision(self, ins, ops, nm):
        e = self.attr(ins, "exponent_bits", required=True)
        m = self.attr(ins, "mantissa_bits", required=True)
        return self.emit(ops[0][1], f"reduce-precision({ops[0][0]}), exponent_bits={e}, mantissa_bits={m}", nm)

    def op_Broadcast(self, ins, ops, nm):
        sizes = ints(self.attr(ins, "broadcast_sizes", required=True), "broadcast_sizes")
        s = ops[0][1]
        d = dims_of(s)
        out = array(s[1], list(sizes) + list(d))
        return self.emit(out, f"broadcast({ops[0][0]}), dimensions={braces(range(len(sizes), len(sizes) + len(d)))}", nm)

    def op_BroadcastInDim(self, ins, ops, nm):
        out = ints(self.attr(ins, "out_dim_size", required=True), "out_dim_size")
        bd = ints(self.attr(ins, "broadcast_dimensions", required=True), "broadcast_dimensions")
        if any(x >= y for x, y in zip(bd, bd[1:])):
            raise Reject(f"{nm}: broadcast dimensions order is wrong: {bd} (must be strictly increasing)")
        out = list(out)
        # A bounded dynamic operand dimension stays dynamic where it lands (XLA's rule).
        for k, d in enumerate(dims_of(ops[0][1])):
            if isinstance(d, Bounded) and k < len(bd) and 0 <= bd[k] < len(out) and out[bd[k]] == d:
                out[bd[k]] = d
        r = self.broadcast_to(ops[0], out, list(bd))
        if r is ops[0]:
            return self.emit(r[1], f"copy({r[0]})", nm)
        return r

    def op_Reshape(self, ins, ops, nm):
        x = ops[0]
        if "new_sizes" in ins:
            new = ints(ins["new_sizes"], "new_sizes")
            if ins.get("dimensions") is not None:
                perm = ints(ins["dimensions"], "dimensions")
                x = self.transpose(x, perm, "tr")
        else:
            new = ints(self.attr(ins, "dimensions", required=True), "dimensions")
        s = x[1]
        if num_elements(new) != num_elements(dims_of(s)) or any(d < 0 for d in new):
            raise Reject(f"{nm}: Reshape cannot change the number of elements")
        return self.emit(array(s[1], new), f"reshape({x[0]})", nm)

    def transpose(self, x, perm, nm):
        d = dims_of(x[1])
        if sorted(perm) != list(range(len(d))):
            raise Reject(f"{nm}: permutation {perm} is not a permutation of the dimensions")
        return self.emit(array(x[1][1], [d[p] for p in perm]), f"transpose({x[0]}), dimensions={braces(perm)}", nm)

    def op_Collapse(self, ins, ops, nm):
        dims = ints(self.attr(ins, "dimensions", required=True), "dimensions")
        d = list(dims_of(ops[0][1]))
        if dims and (dims != list(range(dims[0], dims[0] + len(dims))) or dims[0] < 0 or dims[-1] >= len(d)):
            raise Reject(f"{nm}: Collapse dimensions must be consecutive, in order, and in range")
        if dims:
            new = d[:dims[0]] + [num_elements(d[dims[0]:dims[-1] + 1])] + d[dims[-1] + 1:]
        else:
            new = d
        return self.emit(array(ops[0][1][1], new), f"reshape({ops[0][0]})", nm)

    def op_Transpose(self, ins, ops, nm):
        return self.transpose(ops[0], ints(self.attr(ins, "permutation", required=True), "permutation"), nm)

    def op_Rev(self, ins, ops, nm):
        dims = ints(self.attr(ins, "dimensions", required=True), "dimensions")
        return self.emit(ops[0][1], f"reverse({ops[0][0]}), dimensions={braces(dims)}", nm)

    def op_Slice(self, ins, ops, nm):
        st = ints(self.attr(ins, "start_indices", required=True), "start_indices")
        li = ints(self.attr(ins, "limit_indices", required=True), "limit_indices")
        sd = ints(self.attr(ins, "strides", [1] * len(st)), "strides")
        d = dims_of(ops[0][1])
        if not (len(st) == len(li) == len(sd) == len(d)):
            raise Reject(f"{nm}: Slice needs one start, limit and stride per dimension")
        out = []
        for s, l, k, n in zip(st, li, sd, d):
            if k <= 0 or l < s:
                raise Reject(f"{nm}: Slice needs positive strides and limit >= start")
            # XLA keeps a sliced dynamic dimension dynamic (its size is then
            # derived from the operand's), so the result is bounded too.
            size = -(-(l - s) // k)
            out.append(Bounded(size) if isinstance(n, Bounded) else size)
        spec = ", ".join(f"[{s}:{l}:{k}]" for s, l, k in zip(st, li, sd))
        return self.emit(array(ops[0][1][1], out), f"slice({ops[0][0]}), slice={{{spec}}}", nm)

    def op_ConcatInDim(self, ins, ops, nm):
        dim = self.attr(ins, "dimension", required=True)
        if not ops:
            raise Reject(f"{nm}: ConcatInDim needs operands")
        d = list(dims_of(ops[0][1]))
        if not (isinstance(dim, int) and 0 <= dim < len(d)):
            raise Reject(f"{nm}: dimension out of range")
        d[dim] = sum(dims_of(o[1])[dim] if len(dims_of(o[1])) > dim else 0 for o in ops)
        return self.emit(array(ops[0][1][1], d), f"concatenate({', '.join(o[0] for o in ops)}), dimensions={{{dim}}}", nm)

    op_Concatenate = op_ConcatInDim

    def op_Pad(self, ins, ops, nm):
        cfg = self.attr(ins, "padding_config", required=True)
        d = dims_of(ops[0][1])
        if not isinstance(cfg, list) or len(cfg) != len(d):
            raise Reject(f"{nm}: padding_config needs one entry per dimension")
        out, spec = [], []
        for n, c in zip(d, cfg):
            lo, hi, it = c.get("edge_padding_low", 0), c.get("edge_padding_high", 0), c.get("interior_padding", 0)
            if it < 0:
                raise Reject(f"{nm}: interior padding must be non-negative")
            size = n + max(n - 1, 0) * it + lo + hi
            if size < 0:
                raise Reject(f"{nm}: padded dimension would be negative")
            out.append(size)
            spec.append(f"{lo}_{hi}_{it}")
        pad = "x".join(spec)
        if not d:
            # A rank-0 Pad is the identity; HLO text cannot spell an empty padding config.
            return self.emit(ops[0][1], f"copy({ops[0][0]})", nm)
        return self.emit(array(ops[0][1][1], out), f"pad({ops[0][0]}, {ops[1][0]}), padding={pad}", nm)

    def op_Tuple(self, ins, ops, nm):
        return self.emit(("tuple", [o[1] for o in ops]), f"tuple({', '.join(o[0] for o in ops)})", nm)

    def op_GetTupleElement(self, ins, ops, nm):
        i = self.attr(ins, "index", required=True)
        s = ops[0][1]
        if s[0] != "tuple" or not (isinstance(i, int) and 0 <= i < len(s[1])):
            raise Reject(f"{nm}: GetTupleElement index out of range")
        return self.emit(s[1][i], f"get-tuple-element({ops[0][0]}), index={i}", nm)

    def op_DynamicSlice(self, ins, ops, nm):
        sizes = ins.get("size_indices", ins.get("slice_sizes"))
        sizes = ints(sizes, "size_indices")
        return self.emit(array(ops[0][1][1], sizes),
                         f"dynamic-slice({', '.join(o[0] for o in ops)}), dynamic_slice_sizes={braces(sizes)}", nm)

    def op_DynamicUpdateSlice(self, ins, ops, nm):
        return self.emit(ops[0][1], f"dynamic-update-slice({', '.join(o[0] for o in ops)})", nm)

    def op_Gather(self, ins, ops, nm):
        g = lambda k, default=None: ins.get(k, default)
        offset_dims = ints(self.attr(ins, "offset_dims", required=True), "offset_dims")
        collapsed = ints(g("collapsed_slice_dims", []), "collapsed_slice_dims")
        sim = ints(self.attr(ins, "start_index_map", required=True), "start_index_map")
        ivd = self.attr(ins, "index_vector_dim", required=True)
        sizes = ints(self.attr(ins, "slice_sizes", required=True), "slice_sizes")
        obd = ints(g("operand_batching_dims", []), "operand_batching_dims")
        sibd = ints(g("start_indices_batching_dims", []), "start_indices_batching_dims")
        od = dims_of(ops[0][1])
        idx = list(dims_of(ops[1][1]))
        batch = [n for k, n in enumerate(idx) if k != ivd]
        offs = [n for k, n in enumerate(sizes) if k not in collapsed and k not in obd]
        rank = len(batch) + len(offs)
        if len(offset_dims) != len(offs) or len(sizes) != len(od):
            raise Reject(f"{nm}: Gather dimension numbers are inconsistent")
        out, bi, oi = [], 0, 0
        for k in range(rank):
            if k in offset_dims:
                out.append(offs[oi])
                oi += 1
            else:
                if bi >= len(batch):
                    raise Reject(f"{nm}: Gather dimension numbers are inconsistent")
                out.append(batch[bi])
                bi += 1
        text = (f"gather({ops[0][0]}, {ops[1][0]}), offset_dims={braces(offset_dims)}, "
                f"collapsed_slice_dims={braces(collapsed)}, start_index_map={braces(sim)}, "
                f"operand_batching_dims={braces(obd)}, start_indices_batching_dims={braces(sibd)}, "
                f"index_vector_dim={ivd}, slice_sizes={braces(sizes)}")
        if g("indices_are_sorted", False):
            text += ", indices_are_sorted=true"
        return self.emit(array(ops[0][1][1], out), text, nm)

    def op_Scatter(self, ins, ops, nm):
        g = lambda k, default=None: ins.get(k, default)
        if len(ops) < 3 or len(ops) % 2 == 0:
            raise Reject(f"{nm}: Scatter takes operands..., scatter_indices, updates...")
        n = (len(ops) - 1) // 2
        comp = self.sub(self.attr(ins, "update_computation", required=True))
        shapes = [o[1] for o in ops[:n]]
        rs = shapes[0] if n == 1 else ("tuple", shapes)
        text = (f"scatter({', '.join(o[0] for o in ops)}), "
                f"update_window_dims={braces(ints(self.attr(ins, 'update_window_dims', required=True), 'update_window_dims'))}, "
                f"inserted_window_dims={braces(ints(g('inserted_window_dims', []), 'inserted_window_dims'))}, "
                f"scatter_dims_to_operand_dims={braces(ints(self.attr(ins, 'scatter_dims_to_operand_dims', required=True), 'x'))}, "
                f"input_batching_dims={braces(ints(g('input_batching_dims', []), 'input_batching_dims'))}, "
                f"scatter_indices_batching_dims={braces(ints(g('scatter_indices_batching_dims', []), 'x'))}, "
                f"index_vector_dim={self.attr(ins, 'index_vector_dim', required=True)}, to_apply={comp[0]}")
        if g("indices_are_sorted", False):
            text += ", indices_are_sorted=true"
        if g("unique_indices", False):
            text += ", unique_indices=true"
        return self.emit(rs, text, nm)

    def op_Reduce(self, ins, ops, nm):
        comp = self.sub(self.attr(ins, "computation", required=True))
        dims = ints(self.attr(ins, "dimensions", required=True), "dimensions")
        if len(ops) % 2:
            raise Reject(f"{nm}: Reduce takes as many init values as operands")
        n = len(ops) // 2
        outs = []
        for o in ops[:n]:
            d = dims_of(o[1])
            if any(not (0 <= k < len(d)) for k in dims) or len(set(dims)) != len(dims):
                raise Reject(f"{nm}: Reduce dimensions out of range or repeated")
            outs.append(array(o[1][1], [x for k, x in enumerate(d) if k not in dims]))
        rs = outs[0] if n == 1 else ("tuple", outs)
        return self.emit(rs, f"reduce({', '.join(o[0] for o in ops)}), dimensions={braces(dims)}, to_apply={comp[0]}", nm)

    def window(self, ins, dims, base_dil, win_dil, nm):
        wd = ints(self.attr(ins, "window_dimensions", required=True), "window_dimensions")
        ws = ints(ins.get("window_strides", [1] * len(wd)), "window_strides")
        if len(wd) != len(dims) or len(ws) != len(dims):
            raise Reject(f"{nm}: window needs one entry per dimension")
        pads = self.padding(ins.get("padding", "VALID"), dims, wd, ws, base_dil, win_dil, nm)
        out = []
        for n, w, s, (lo, hi), bd, wdl in zip(dims, wd, ws, pads, base_dil, win_dil):
            if w <= 0 or s <= 0 or bd <= 0 or wdl <= 0:
                raise Reject(f"{nm}: window sizes, strides and dilations must be positive")
            padded = (n - 1) * bd + 1 + lo + hi if n > 0 else lo + hi
            ew = (w - 1) * wdl + 1
            out.append(0 if padded < ew else (padded - ew) // s + 1)
        return wd, ws, pads, out

    def padding(self, p, dims, wd, ws, base_dil, win_dil, nm):
        if isinstance(p, str):
            if p.upper() == "VALID":
                return [(0, 0)] * len(dims)
            if p.upper() == "SAME":
                # The window measured dilated, the input undilated, as JAX's
                # reduce_window/conv_general_dilated (docs/semantics-decisions.md).
                pads = []
                for i, (n, w, s) in enumerate(zip(dims, wd, ws)):
                    if win_dil is not None and i < len(win_dil) and w > 0:
                        w = (w - 1) * win_dil[i] + 1
                    out = -(-n // s)
                    total = max((out - 1) * s + w - n, 0)
                    pads.append((total // 2, total - total // 2))
                return pads
            raise Reject(f"{nm}: padding must be SAME, VALID or a list of pairs")
        if not isinstance(p, list) or len(p) != len(dims) or not all(isinstance(x, list) and len(x) == 2 for x in p):
            raise Reject(f"{nm}: padding needs one [low, high] pair per dimension")
        return [tuple(x) for x in p]

    def op_ReduceWindow(self, ins, ops, nm):
        comp = self.sub(self.attr(ins, "computation", required=True))
        if len(ops) % 2:
            raise Reject(f"{nm}: ReduceWindow takes as many init values as operands")
        n = len(ops) // 2
        dims = dims_of(ops[0][1])
        ones = [1] * len(dims)
        bd = ints(ins.get("base_dilations", ones), "base_dilations")
        wdl = ints(ins.get("window_dilations", ones), "window_dilations")
        wd, ws, pads, out = self.window(ins, dims, bd, wdl, nm)
        outs = [array(o[1][1], out) for o in ops[:n]]
        rs = outs[0] if n == 1 else ("tuple", outs)
        return self.emit(rs, f"reduce-window({', '.join(o[0] for o in ops)}), "
                             f"{self.window_text(wd, ws, pads, bd, wdl)}, to_apply={comp[0]}", nm)

    def op_SelectAndScatter(self, ins, ops, nm):
        sel = self.sub(self.attr(ins, "select", required=True))
        sca = self.sub(self.attr(ins, "scatter", required=True))
        dims = dims_of(ops[0][1])
        ones = [1] * len(dims)
        wd, ws, pads, out = self.window(ins, dims, ones, ones, nm)
        return self.emit(ops[0][1], f"select-and-scatter({', '.join(o[0] for o in ops)}), "
                                    f"{self.window_text(wd, ws, pads)}, select={sel[0]}, scatter={sca[0]}", nm)

    def op_Map(self, ins, ops, nm):
        comp = self.sub(ins.get("computation", ins.get("to_apply")))
        d = dims_of(ops[0][1])
        dims = ins.get("dimensions") or list(range(len(d)))
        root = comp[2]
        if root[0] != "array":
            raise Reject(f"{nm}: Map's computation must return an array")
        return self.emit(array(root[1], d), f"map({', '.join(o[0] for o in ops)}), dimensions={braces(dims)}, to_apply={comp[0]}", nm)

    def op_Sort(self, ins, ops, nm):
        comp = self.sub(self.attr(ins, "comparator", required=True))
        d = dims_of(ops[0][1])
        dim = ins.get("dimension", -1)
        if dim is None:
            dim = -1
        if -len(d) <= dim < 0:
            dim += len(d)
        shapes = [o[1] for o in ops]
        rs = shapes[0] if len(ops) == 1 else ("tuple", shapes)
        stable = ", is_stable=true" if ins.get("is_stable", False) else ""
        return self.emit(rs, f"sort({', '.join(o[0] for o in ops)}), dimensions={{{dim}}}{stable}, to_apply={comp[0]}", nm)

    def op_TopK(self, ins, ops, nm):
        k = self.attr(ins, "k", required=True)
        largest = ins.get("largest", True)
        s = ops[0][1]
        d = list(dims_of(s))
        if not d:
            raise Reject(f"{nm}: TopK needs an operand of rank >= 1")
        d[-1] = k
        rs = ("tuple", [array(s[1], d), array("s32", d)])
        return self.emit(rs, f"topk({ops[0][0]}), k={k}, largest={'true' if largest else 'false'}", nm)

    def result_type(self, ins, et):
        p = ins.get("preferred_element_type")
        if p is None:
            return et
        if p not in DTYPES:
            raise Reject(f"unknown element type {p}")
        return p

    def op_Dot(self, ins, ops, nm):
        a, b = dims_of(ops[0][1]), dims_of(ops[1][1])
        if len(a) not in (1, 2) or len(b) not in (1, 2):
            raise Reject(f"{nm}: Dot takes vectors and matrices")
        out = list(a[:-1]) + list(b[1:])
        rs = array(self.result_type(ins, ops[0][1][1]), out)
        return self.emit(rs, f"dot({ops[0][0]}, {ops[1][0]}), lhs_contracting_dims={{{len(a) - 1}}}, rhs_contracting_dims={{0}}", nm)

    def op_DotGeneral(self, ins, ops, nm):
        dn = self.attr(ins, "dimension_numbers", required=True)
        lc = ints(dn.get("lhs_contracting_dimensions", []), "lhs_contracting_dimensions")
        rc = ints(dn.get("rhs_contracting_dimensions", []), "rhs_contracting_dimensions")
        lb = ints(dn.get("lhs_batch_dimensions", []), "lhs_batch_dimensions")
        rb = ints(dn.get("rhs_batch_dimensions", []), "rhs_batch_dimensions")
        a, b = dims_of(ops[0][1]), dims_of(ops[1][1])
        if any(not (0 <= k < len(a)) for k in lc + lb) or any(not (0 <= k < len(b)) for k in rc + rb):
            raise Reject(f"{nm}: DotGeneral dimension out of range")
        out = [a[k] for k in lb] + [n for k, n in enumerate(a) if k not in lc and k not in lb] + \
              [n for k, n in enumerate(b) if k not in rc and k not in rb]
        rs = array(self.result_type(ins, ops[0][1][1]), out)
        text = (f"dot({ops[0][0]}, {ops[1][0]}), lhs_batch_dims={braces(lb)}, lhs_contracting_dims={braces(lc)}, "
                f"rhs_batch_dims={braces(rb)}, rhs_contracting_dims={braces(rc)}")
        return self.emit(rs, text, nm)

    def conv_dims(self, dn, n):
        if dn is None:
            sp = "".join(str(i) for i in range(n))
            return "bf" + sp, "oi" + sp, "bf" + sp
        if isinstance(dn, str):
            try:
                ins_, out = dn.split("->")
                lhs, rhs = ins_.split("_")
            except ValueError:
                raise Reject(f"bad dim_labels {dn}")
            return lhs, rhs, out

        def labels(size, pairs, spatial):
            lab = ["?"] * size
            for k, ch in pairs:
                if not (0 <= k < size) or lab[k] != "?":
                    raise Reject("bad convolution dimension_numbers")
                lab[k] = ch
            for i, k in enumerate(spatial):
                if not (0 <= k < size) or lab[k] != "?":
                    raise Reject("bad convolution dimension_numbers")
                lab[k] = str(i)
            if "?" in lab:
                raise Reject("bad convolution dimension_numbers")
            return "".join(lab)

        lhs = labels(n + 2, [(dn["input_batch_dimension"], "b"), (dn["input_feature_dimension"], "f")],
                     dn.get("input_spatial_dimensions", []))
        rhs = labels(n + 2, [(dn["kernel_output_feature_dimension"], "o"), (dn["kernel_input_feature_dimension"], "i")],
                     dn.get("kernel_spatial_dimensions", []))
        out = labels(n + 2, [(dn["output_batch_dimension"], "b"), (dn["output_feature_dimension"], "f")],
                     dn.get("output_spatial_dimensions", []))
        return lhs, rhs, out

    def op_Conv(self, ins, ops, nm):
        lhs_s, rhs_s = ops[0][1], ops[1][1]
        ld, rd = dims_of(lhs_s), dims_of(rhs_s)
        strides = ints(self.attr(ins, "window_strides", required=True), "window_strides")
        n = len(strides)
        if len(ld) != n + 2 or len(rd) != n + 2:
            raise Reject(f"{nm}: convolution operands need rank {n + 2}")
        ldl = ints(ins.get("lhs_dilation") or [1] * n, "lhs_dilation")
        rdl = ints(ins.get("rhs_dilation") or [1] * n, "rhs_dilation")
        fgc = ins.get("feature_group_count", 1)
        bgc = ins.get("batch_group_count", 1)
        if fgc is None:
            fgc = 1
        if bgc is None:
            bgc = 1
        ll, rl, ol = self.conv_dims(ins.get("dimension_numbers"), n)
        if len(ll) != n + 2 or len(rl) != n + 2 or len(ol) != n + 2:
            raise Reject(f"{nm}: dimension_numbers do not match the operand ranks")
        lsp = [ld[ll.index(str(i))] for i in range(n)]
        ksp = [rd[rl.index(str(i))] for i in range(n)]
        p = ins.get("padding", "VALID")
        pads = self.padding(p, lsp, ksp, strides, None, rdl, nm)
        osp = []
        for x, w, s, (lo, hi), a, b in zip(lsp, ksp, strides, pads, ldl, rdl):
            if s <= 0 or a <= 0 or b <= 0:
                raise Reject(f"{nm}: strides and dilations must be positive")
            padded = ((x - 1) * a + 1 if x > 0 else 0) + lo + hi
            ew = (w - 1) * b + 1 if w > 0 else 0
            osp.append(0 if padded < ew else (padded - ew) // s + 1)
        batch = ld[ll.index("b")]
        if bgc <= 0 or batch % bgc:
            raise Reject(f"{nm}: batch_group_count must divide the batch")
        out = [0] * (n + 2)
        out[ol.index("b")] = batch // bgc
        out[ol.index("f")] = rd[rl.index("o")]
        for i in range(n):
            out[ol.index(str(i))] = osp[i]
        rs = array(self.result_type(ins, lhs_s[1]), out)
        text = (f"convolution({ops[0][0]}, {ops[1][0]}), {self.window_text(ksp, strides, pads, ldl, rdl)}, "
                f"dim_labels={ll}_{rl}->{ol}")
        if fgc != 1:
            text += f", feature_group_count={fgc}"
        if bgc != 1:
            text += f", batch_group_count={bgc}"
        return self.emit(rs, text, nm)

    op_ConvWithGeneralPadding = op_Conv
    op_ConvWithGeneralDimensions = op_Conv
    op_ConvGeneral = op_Conv
    op_ConvGeneralDilated = op_Conv

    def op_Fft(self, ins, ops, nm):
        t = str(self.attr(ins, "fft_type", required=True)).upper()
        length = ints(self.attr(ins, "fft_length", required=True), "fft_length")
        s = ops[0][1]
        d = list(dims_of(s))
        et = s[1]
        if t in ("FFT", "IFFT"):
            rs = s
        elif t == "RFFT":
            if et not in TO_COMPLEX or not length or len(d) < len(length):
                raise Reject(f"{nm}: RFFT needs a real operand")
            # XLA's shape inference: a zero length gives a zero-sized result.
            d[-1] = length[-1] // 2 + 1 if length[-1] else 0
            rs = array(TO_COMPLEX[et], d)
        elif t == "IRFFT":
            if et not in COMPLEX or not length or len(d) < len(length):
                raise Reject(f"{nm}: IRFFT needs a complex operand")
            d[-1] = length[-1]
            rs = array(COMPLEX[et], d)
        else:
            raise Reject(f"{nm}: unknown fft_type {t}")
        return self.emit(rs, f"fft({ops[0][0]}), fft_type={t}, fft_length={braces(length)}", nm)

    def op_Cholesky(self, ins, ops, nm):
        lower = "true" if ins.get("lower", False) else "false"
        return self.emit(ops[0][1], f"cholesky({ops[0][0]}), lower={lower}", nm)

    def op_TriangularSolve(self, ins, ops, nm):
        b = lambda k, d: "true" if ins.get(k, d) else "false"
        ta = str(ins.get("transpose_a", "NO_TRANSPOSE")).upper()
        return self.emit(ops[1][1], f"triangular-solve({ops[0][0]}, {ops[1][0]}), left_side={b('left_side', True)}, "
                                    f"lower={b('lower', False)}, unit_diagonal={b('unit_diagonal', False)}, transpose_a={ta}", nm)

    def batch_norm(self, ins, ops, nm, opcode, tuple_result):
        eps = float(np.float32(float(self.attr(ins, "epsilon", required=True))))
        fi = self.attr(ins, "feature_index", required=True)
        s = ops[0][1]
        d = dims_of(s)
        if not (isinstance(fi, int) and 0 <= fi < len(d)):
            raise Reject(f"{nm}: feature_index out of range")
        c = array(s[1], [d[fi]])
        rs = ("tuple", [s, c, c]) if tuple_result else s
        return self.emit(rs, f"{opcode}({', '.join(o[0] for o in ops)}), epsilon={eps!r}, feature_index={fi}", nm)

    def op_BatchNormTraining(self, ins, ops, nm):
        return self.batch_norm(ins, ops, nm, "batch-norm-training", True)

    def op_BatchNormInference(self, ins, ops, nm):
        return self.batch_norm(ins, ops, nm, "batch-norm-inference", False)

    def op_BatchNormGrad(self, ins, ops, nm):
        return self.batch_norm(ins, ops, nm, "batch-norm-grad", True)

    def op_Call(self, ins, ops, nm):
        comp = self.sub(ins.get("computation", ins.get("to_apply")))
        return self.emit(comp[2], f"call({', '.join(o[0] for o in ops)}), to_apply={comp[0]}", nm)

    def op_Conditional(self, ins, ops, nm):
        if "branch_computations" in ins:
            comps = [self.sub(c) for c in ins["branch_computations"]]
            if not comps:
                raise Reject(f"{nm}: Conditional needs at least one branch")
            text = f"conditional({', '.join(o[0] for o in ops)}), branch_computations={{{', '.join(c[0] for c in comps)}}}"
        else:
            t = self.sub(self.attr(ins, "true_computation", required=True))
            f = self.sub(self.attr(ins, "false_computation", required=True))
            comps = [t, f]
            text = f"conditional({', '.join(o[0] for o in ops)}), true_computation={t[0]}, false_computation={f[0]}"
        return self.emit(comps[0][2], text, nm)

    def op_While(self, ins, ops, nm):
        c = self.sub(self.attr(ins, "condition", required=True))
        b = self.sub(self.attr(ins, "body", required=True))
        return self.emit(ops[0][1], f"while({ops[0][0]}), condition={c[0]}, body={b[0]}", nm)

    def op_OptimizationBarrier(self, ins, ops, nm):
        return self.emit(ops[0][1], f"opt-barrier({ops[0][0]})", nm)

    def op_AfterAll(self, ins, ops, nm):
        return self.emit(("token",), f"after-all({', '.join(o[0] for o in ops)})", nm)

