"""The world ops of the xla-json -> HLO text translation (hlo.py): random
numbers, dynamic dimension sizes, collectives, and the ops XLA CPU cannot
run (send/receive, feeds, xlaref's custom-call targets), which answer
`unsupported` with the reason. Each `op_<Name>` returns (HLO name, result
shape)."""
from hlo_ops import braces, dims_of, ints
from xlajson import Bounded, Reject, Unsupported, array, parse_shape, shape_text

ALGORITHMS = {"DEFAULT": "rng_default", "THREE_FRY": "rng_three_fry", "PHILOX": "rng_philox"}

# Verified on jaxlib 0.10.2: compiling `send`/`recv` fails with "UNIMPLEMENTED:
# HLO opcode `send` is not supported by XLA:CPU ThunkEmitter".
SEND_RECV = ("XLA CPU does not implement Send/Recv (compiling HLO send/recv fails with "
             "UNIMPLEMENTED: HLO opcode `send` is not supported by XLA:CPU ThunkEmitter)")
# jaxlib's PJRT CPU client has no Python call that fills XLA's infeed queue or
# drains its outfeed queue, so a module using them would block forever.
FEEDS = "jaxlib's PJRT CPU client offers no way to fill the infeed queue or read the outfeed queue"


def group_text(groups):
    return "{" + ",".join(braces(ints(g, "replica_groups")) for g in groups) + "}"


class WorldOps:
    """Mixed into hlo.Computation; `self.m.replicas` is the case's replica count."""

    # ---------------------------------------------------------- random numbers

    def op_RngBitGenerator(self, ins, ops, nm):
        if len(ops) != 1:
            raise Reject(f"{nm}: RngBitGenerator takes the initial state, got {len(ops)} operands")
        algorithm = self.attr(ins, "algorithm", "DEFAULT")
        if algorithm not in ALGORITHMS:
            raise Reject(f"{nm}: unknown RngBitGenerator algorithm {algorithm!r}")
        bits = parse_shape(self.attr(ins, "shape", required=True))
        rs = ("tuple", [ops[0][1], bits])
        return self.emit(rs, f"rng-bit-generator({ops[0][0]}), algorithm={ALGORITHMS[algorithm]}", nm)

    def rng(self, ins, ops, nm, distribution):
        if len(ops) != 2:
            raise Reject(f"{nm}: {ins.get('op')} takes 2 operands, got {len(ops)}")
        s = parse_shape(self.attr(ins, "shape", required=True))
        return self.emit(s, f"rng({ops[0][0]}, {ops[1][0]}), distribution={distribution}", nm)

    def op_RngUniform(self, ins, ops, nm):
        return self.rng(ins, ops, nm, "rng_uniform")

    def op_RngNormal(self, ins, ops, nm):
        return self.rng(ins, ops, nm, "rng_normal")

    # ---------------------------------------------------------- dynamic sizes

    def dimension(self, ins, ops, nm, what):
        dims = dims_of(ops[0][1], "the operand")
        d = self.attr(ins, "dimension", required=True)
        if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < len(dims):
            raise Reject(f"{nm}: {what}: dimension {d!r} is out of range [0, {len(dims)})")
        return dims, d

    def op_GetDimensionSize(self, ins, ops, nm):
        if len(ops) != 1:
            raise Reject(f"{nm}: GetDimensionSize takes 1 operand, got {len(ops)}")
        _, d = self.dimension(ins, ops, nm, "GetDimensionSize")
        return self.emit(array("s32", []), f"get-dimension-size({ops[0][0]}), dimensions={{{d}}}", nm)

    def op_SetDimensionSize(self, ins, ops, nm):
        if len(ops) != 2:
            raise Reject(f"{nm}: SetDimensionSize takes 2 operands, got {len(ops)}")
        dims, d = self.dimension(ins, ops, nm, "SetDimensionSize")
        if ops[1][1] != array("s32", []):
            raise Reject(f"{nm}: SetDimensionSize: the size must be an s32 scalar, got {shape_text(ops[1][1])}")
        out = list(dims)
        out[d] = Bounded(int(dims[d]))
        return self.emit(array(ops[0][1][1], out), f"set-dimension-size({ops[0][0]}, {ops[1][0]}), dimensions={{{d}}}",
                         nm)

    # ---------------------------------------------------------- collectives

    def groups_attr(self, ins):
        groups = ins.get("replica_groups") or []
        if not isinstance(groups, list):
            raise Reject("`replica_groups` must be a list of lists")
        text = f", replica_groups={group_text(groups)}" if groups else ""
        if "channel_id" in ins:
            text += f", channel_id={int(ins['channel_id'])}"
        return groups, text

    def group_size(self, ins, groups):
        if "shard_count" in ins:
            return int(ins["shard_count"])
        return len(groups[0]) if groups else self.m.replicas

    def op_ReplicaId(self, ins, ops, nm):
        if ops:
            raise Reject(f"{nm}: ReplicaId takes no operands")
        return self.emit(array("u32", []), "replica-id()", nm)

    def all_reduce(self, ops, nm, comp, extra):
        """XlaBuilder's AllReduce: a tuple operand becomes a variadic all-reduce."""
        if len(ops) != 1:
            raise Reject(f"{nm}: AllReduce takes 1 operand, got {len(ops)}")
        name, s = ops[0]
        if s[0] != "tuple":
            dims_of(s)
            return self.emit(s, f"all-reduce({name}), to_apply={comp}{extra}", nm)
        parts = []
        for i, e in enumerate(s[1]):
            dims_of(e, "an AllReduce tuple element")
            parts.append(self.emit(e, f"get-tuple-element({name}), index={i}", "gte")[0])
        return self.emit(s, f"all-reduce({', '.join(parts)}), to_apply={comp}{extra}", nm)

    def op_AllReduce(self, ins, ops, nm):
        comp = self.sub(self.attr(ins, "computation", required=True))[0]
        _, extra = self.groups_attr(ins)
        return self.all_reduce(ops, nm, comp, extra)

    def op_CrossReplicaSum(self, ins, ops, nm):
        if len(ops) != 1:
            raise Reject(f"{nm}: CrossReplicaSum takes 1 operand, got {len(ops)}")
        s = ops[0][1]
        leaf = s[1][0] if s[0] == "tuple" and s[1] else s
        dims_of(leaf)
        et = leaf[1]
        add = self.m.fresh("add")
        scalar = shape_text(array(et, []))
        self.m.texts.append(f"{add} {{\n  a = {scalar} parameter(0)\n  b = {scalar} parameter(1)\n"
                            f"  ROOT s = {scalar} add(a, b)\n}}")
        _, extra = self.groups_attr(ins)
        return self.all_reduce(ops, nm, add, extra)

    def op_AllGather(self, ins, ops, nm):
        if len(ops) != 1:
            raise Reject(f"{nm}: AllGather takes 1 operand, got {len(ops)}")
        dims = list(dims_of(ops[0][1]))
        d = self.attr(ins, "all_gather_dim", required=True)
        if not isinstance(d, int) or not 0 <= d < len(dims):
            raise Reject(f"{nm}: all_gather_dim {d!r} is out of range")
        groups, extra = self.groups_attr(ins)
        if "shard_count" not in ins and not groups:
            # XlaBuilder's AllGather takes shard_count; without groups nothing else gives it.
            raise Reject(f"{nm}: AllGather: shard_count is needed when replica_groups are not given")
        dims[d] *= self.group_size(ins, groups)
        return self.emit(array(ops[0][1][1], dims), f"all-gather({ops[0][0]}), dimensions={{{d}}}{extra}", nm)

    def op_ReduceScatter(self, ins, ops, nm):
        """A tuple operand becomes a variadic reduce-scatter, as XlaBuilder emits it."""
        if len(ops) != 1:
            raise Reject(f"{nm}: ReduceScatter takes 1 operand, got {len(ops)}")
        d = self.attr(ins, "scatter_dimension", required=True)
        comp = self.sub(self.attr(ins, "computation", required=True))[0]
        groups, extra = self.groups_attr(ins)
        n = self.group_size(ins, groups)
        name, s = ops[0]
        elements = s[1] if s[0] == "tuple" else [s]
        names, shapes = [], []
        for i, e in enumerate(elements):
            dims = list(dims_of(e))
            if not isinstance(d, int) or not 0 <= d < len(dims):
                raise Reject(f"{nm}: scatter_dimension {d!r} is out of range")
            if n <= 0 or dims[d] % n:
                raise Reject(f"{nm}: dimension {d} of size {dims[d]} is not divisible by the shard count {n}")
            dims[d] //= n
            shapes.append(array(e[1], dims))
            names.append(self.emit(e, f"get-tuple-element({name}), index={i}", "gte")[0] if s[0] == "tuple" else name)
        rs = ("tuple", shapes) if s[0] == "tuple" else shapes[0]
        return self.emit(rs, f"reduce-scatter({', '.join(names)}), dimensions={{{d}}}, to_apply={comp}{extra}", nm)

    def op_AllToAll(self, ins, ops, nm):
        """XlaBuilder's AllToAll: an all-to-all along the split dimension, then
        the received blocks (major in the split dimension) moved in front of
        the concat dimension by a reshape, a transpose and a reshape."""
        if len(ops) != 1:
            raise Reject(f"{nm}: AllToAll takes 1 operand, got {len(ops)}")
        name, s = ops[0]
        dims = list(dims_of(s))
        sd = self.attr(ins, "split_dimension", required=True)
        cd = self.attr(ins, "concat_dimension", required=True)
        k = self.attr(ins, "split_count", required=True)
        for what, v in (("split_dimension", sd), ("concat_dimension", cd)):
            if not isinstance(v, int) or not 0 <= v < len(dims):
                raise Reject(f"{nm}: {what} {v!r} is out of range")
        if not isinstance(k, int) or k <= 0 or dims[sd] % k:
            raise Reject(f"{nm}: split_count {k!r} does not divide dimension {sd} of size {dims[sd]}")
        groups, extra = self.groups_attr(ins)
        if not groups:
            # XLA's array all-to-all needs explicit groups: all replicas.
            extra = f", replica_groups={group_text([list(range(self.m.replicas))])}" + extra
        et = s[1]
        a2a = self.emit(s, f"all-to-all({name}), dimensions={{{sd}}}{extra}", nm if sd == cd else "a2a")
        if sd == cd:
            return a2a
        split = dims[:sd] + [k, dims[sd] // k] + dims[sd + 1:]
        r = self.emit(array(et, split), f"reshape({a2a[0]})", "split")
        expanded = [i if i < sd else i + 1 for i in range(len(dims))]
        perm = []
        for i in range(len(dims)):
            if i == cd:
                perm.append(sd)
            perm.append(expanded[i])
        t = self.emit(array(et, [split[p] for p in perm]), f"transpose({r[0]}), dimensions={braces(perm)}", "move")
        out = list(dims)
        out[sd] //= k
        out[cd] *= k
        return self.emit(array(et, out), f"reshape({t[0]})", nm)

    def op_CollectivePermute(self, ins, ops, nm):
        if len(ops) != 1:
            raise Reject(f"{nm}: CollectivePermute takes 1 operand, got {len(ops)}")
        dims_of(ops[0][1])
        pairs = self.attr(ins, "source_target_pairs", required=True)
        if not isinstance(pairs, list):
            raise Reject(f"{nm}: source_target_pairs must be a list of pairs")
        extra = f", channel_id={int(ins['channel_id'])}" if "channel_id" in ins else ""
        return self.emit(ops[0][1], f"collective-permute({ops[0][0]}), source_target_pairs={group_text(pairs)}{extra}",
                         nm)

    # ---------------------------------------------------------- not runnable here

    def op_Send(self, ins, ops, nm):
        raise Unsupported(SEND_RECV)

    op_SendDone = op_Recv = op_RecvDone = op_Send

    def op_Infeed(self, ins, ops, nm):
        raise Unsupported(f"Infeed: {FEEDS}")

    def op_Outfeed(self, ins, ops, nm):
        raise Unsupported(f"Outfeed: {FEEDS}")

    def op_CustomCall(self, ins, ops, nm):
        target = ins.get("target_name", ins.get("call_target_name"))
        raise Unsupported(f"CustomCall target {target!r}: the oracle cases' targets exist only in xlaref's "
                          f"registry (xlaref.*), and XLA CPU has no target of that name")
