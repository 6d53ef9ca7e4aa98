//! The verifier: shape inference with every "must" of the document checked.
//!
//! `verify` walks the call graph (callees first, recursion rejected), infers
//! each instruction's shape from its operands' shapes and attributes, checks
//! declared shapes and the element-count limit, and returns a
//! [`VerifiedModule`]: the only thing engines accept.
//!
//! Each op family's rules live in the file named after it, mirroring `eval/`.

mod batch_norm;
mod collectives;
mod control;
mod conv;
mod dot;
mod elementwise;
mod fft;
mod indexing;
mod linalg;
mod reduce;
mod rng;
pub mod rules;
mod shape_ops;
mod sort;
mod world;

use std::any::Any;
use std::sync::{Arc, OnceLock};

use crate::error::VerifyError;
use crate::ir::{Computation, ComputationId, Instruction, Module, Op};
use crate::types::shape::MAX_TUPLE_DEPTH;
use crate::types::Shape;
use rules::{broken, declare_rules, Broken, Check, Rule};

declare_rules! {
    NO_RECURSION = "module.c1": "(XLA) A computation may not call itself, directly or through the computations it calls.";
    DECLARED_SHAPE = "module.c2": "An instruction's declared shape, where it has one, is the shape the op's rules infer.";
    RANK_LIMIT = "module.c3": "(xlaref) A result has at most 64 dimensions.";
    TUPLE_DEPTH_LIMIT = "module.c4": "(xlaref) Tuples nest at most 24 deep.";
    TUPLE_LEAVES_LIMIT = "module.c5": "(xlaref) A value holds at most 65536 arrays and tokens.";
    ELEMENT_LIMIT = "module.c6": "(xlaref) A value holds at most `max_elements` elements (2^28 by default; zero-sized dimensions count as 1).";
    PARAMETER_SHAPE = "module.c7": "(invariant) Every parameter has a declared shape (the reader requires one).";
    CALLEE_VERIFIED = "module.c8": "(invariant) A called computation is verified before its callers.";
}

/// Every rule the verifier checks, family by family.
pub fn all_rules() -> impl Iterator<Item = &'static Rule> {
    [
        RULES,
        rules::RULES,
        elementwise::RULES,
        shape_ops::RULES,
        indexing::RULES,
        indexing::gather::RULES,
        indexing::scatter::RULES,
        reduce::RULES,
        sort::RULES,
        dot::RULES,
        conv::RULES,
        fft::RULES,
        linalg::RULES,
        batch_norm::RULES,
        control::RULES,
        collectives::RULES,
        rng::RULES,
        world::RULES,
    ]
    .into_iter()
    .flatten()
    .copied()
}

/// `docs/rules.md`: every rule with its id and sentence, family by family.
pub fn rules_markdown() -> String {
    let mut out = String::from(
        "# Verifier rules\n\n\
         <!-- Generated from reference/src/verify by `XLAREF_BLESS=1 cargo test -p xlaref-reference --test rules`; do not edit. -->\n\n\
         Every check of the verifier names one of these rules; an error's message ends\n\
         with the rule's id (`[gather.c3]`). Ids are stable: never renumbered or reused.\n\
         A rule in the document's words is quoted from `operation_semantics`; \"(XLA)\"\n\
         marks a rule taken from XLA's verifier where the document is silent,\n\
         \"(xlaref)\" a limit of this implementation, \"(invariant)\" a check no\n\
         program that passed the reader can break. Each rule other than the\n\
         invariants has a rejection case among the oracle cases\n\
         (`reference/tests/rules.rs` checks it).\n",
    );
    let mut family = "";
    for rule in all_rules() {
        let this = rule.id.split('.').next().unwrap_or(rule.id);
        if this != family {
            family = this;
            out.push_str(&format!("\n## {family}\n\n| id | rule |\n|---|---|\n"));
        }
        out.push_str(&format!("| `{}` | {} |\n", rule.id, rule.says.replace('|', "\\|")));
    }
    out
}

/// Limits and world facts the verifier checks against.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Largest number of elements of any value (default 2^28).
    pub max_elements: i64,
    /// Reject the extensions xlaref accepts because real programs use them
    /// although the document forbids them (docs/semantics-decisions.md,
    /// "Extensions"): rank-2 Cholesky and TriangularSolve, a u64[2] PHILOX
    /// state.
    pub strict: bool,
    /// The CustomCall targets a module may name, with their shape rules
    /// (default: the built-in registry's, `Registry::default().known_targets()`;
    /// a library user who registers targets passes their registry's, or
    /// `KnownTargets::any()` to leave the names to run time).
    pub custom_call_targets: crate::custom_call::KnownTargets,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions { max_elements: 1 << 28, strict: false, custom_call_targets: Default::default() }
    }
}

/// A computation's type: its parameter shapes and its result shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub params: Vec<Shape>,
    pub result: Shape,
}

/// A module that passed verification, with every instruction's shape.
#[derive(Clone, Debug)]
pub struct VerifiedModule {
    module: Module,
    shapes: Vec<Vec<Shape>>,
    signatures: Vec<Signature>,
    /// What an engine prepared from this module to run it, kept for its
    /// next run ([`VerifiedModule::prepared`]).
    prepared: OnceLock<Arc<dyn Any + Send + Sync>>,
}

impl VerifiedModule {
    /// What an engine prepares from this module before running it (the
    /// fast engine: the module with its calls inlined, and its fusion
    /// plans), made by `prepare` on the first call and kept: a module run
    /// again is not prepared again, as XLA compiles a program once and
    /// runs it many times. The module cannot change once verified, so
    /// what was prepared from it stays valid. One engine's type per
    /// module: None if another type was kept first (the caller prepares
    /// its own then). The reference engine keeps nothing here.
    pub fn prepared<T: Any + Send + Sync>(&self, prepare: impl FnOnce() -> T) -> Option<&T> {
        self.prepared.get_or_init(|| Arc::new(prepare())).downcast_ref()
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    pub fn computation(&self, id: ComputationId) -> &Computation {
        &self.module.computations[id]
    }

    /// The inferred shape of an instruction.
    pub fn shape(&self, computation: ComputationId, instruction: usize) -> &Shape {
        &self.shapes[computation][instruction]
    }

    pub fn signature(&self, computation: ComputationId) -> &Signature {
        &self.signatures[computation]
    }

    pub fn entry(&self) -> ComputationId {
        self.module.entry
    }

    pub fn entry_signature(&self) -> &Signature {
        &self.signatures[self.module.entry]
    }
}

/// What inference of one instruction may look at besides its operands.
pub struct Ctx<'a> {
    pub module: &'a Module,
    signatures: &'a [Option<Signature>],
    pub options: &'a VerifyOptions,
}

impl Ctx<'_> {
    /// The signature of a called computation (already verified: callees first).
    pub fn signature(&self, id: ComputationId) -> Check<&Signature> {
        self.signatures.get(id).and_then(Option::as_ref).ok_or_else(|| broken(&CALLEE_VERIFIED, "called computation is not verified"))
    }

    pub fn computation_name(&self, id: ComputationId) -> &str {
        self.module.computations.get(id).map_or("?", |c| c.name.as_str())
    }
}

/// Verifies a module.
pub fn verify(module: Module, options: &VerifyOptions) -> Result<VerifiedModule, VerifyError> {
    let order = call_order(&module)?;
    let mut signatures: Vec<Option<Signature>> = vec![None; module.computations.len()];
    let mut shapes: Vec<Vec<Shape>> = vec![Vec::new(); module.computations.len()];
    for id in order {
        let ctx = Ctx { module: &module, signatures: &signatures, options };
        let (comp_shapes, sig) = verify_computation(&module.computations[id], &ctx)?;
        shapes[id] = comp_shapes;
        signatures[id] = Some(sig);
    }
    let signatures = signatures.into_iter().map(|s| s.unwrap_or(Signature { params: vec![], result: Shape::Tuple(vec![]) })).collect();
    Ok(VerifiedModule { module, shapes, signatures, prepared: OnceLock::new() })
}

/// Computations in an order where every callee precedes its callers;
/// recursion (a cycle in the call graph) is an error.
fn call_order(module: &Module) -> Result<Vec<ComputationId>, VerifyError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let n = module.computations.len();
    let mut marks = vec![Mark::New; n];
    let mut order = Vec::with_capacity(n);
    // Iterative DFS: a deep call chain must not exhaust the stack.
    for start in 0..n {
        if marks[start] != Mark::New {
            continue;
        }
        let mut stack: Vec<(ComputationId, Vec<(ComputationId, usize)>)> = vec![(start, callees(&module.computations[start]))];
        marks[start] = Mark::Active;
        while let Some((id, pending)) = stack.last_mut() {
            let id = *id;
            match pending.pop() {
                None => {
                    marks[id] = Mark::Done;
                    order.push(id);
                    stack.pop();
                }
                Some((callee, instr)) => match marks.get(callee).copied() {
                    Some(Mark::Active) => {
                        let c = &module.computations[id];
                        let i = &c.instructions[instr];
                        return Err(VerifyError {
                            computation: c.name.clone(),
                            instruction: i.name.clone(),
                            op: i.op.name(),
                            rule: &NO_RECURSION,
                            detail: format!(
                                "recursion: computation `{}` is called while it is being called (XLA computations may not recurse)",
                                module.computations[callee].name
                            ),
                            location: i.location.clone(),
                        });
                    }
                    Some(Mark::New) => {
                        marks[callee] = Mark::Active;
                        let next = callees(&module.computations[callee]);
                        stack.push((callee, next));
                    }
                    _ => {}
                },
            }
        }
    }
    Ok(order)
}

fn callees(c: &Computation) -> Vec<(ComputationId, usize)> {
    c.instructions
        .iter()
        .enumerate()
        .flat_map(|(i, instr)| instr.op.called_computations().into_iter().map(move |callee| (callee, i)))
        .collect()
}

fn verify_computation(c: &Computation, ctx: &Ctx) -> Result<(Vec<Shape>, Signature), VerifyError> {
    let mut shapes: Vec<Shape> = Vec::with_capacity(c.instructions.len());
    for instr in &c.instructions {
        let error = |Broken { rule, detail }: Broken| VerifyError {
            computation: c.name.clone(),
            instruction: instr.name.clone(),
            op: instr.op.name(),
            rule,
            detail,
            location: instr.location.clone(),
        };
        let operand_shapes: Vec<&Shape> = instr.operands.iter().map(|&o| &shapes[o]).collect();
        let shape = infer_instruction(instr, &operand_shapes, ctx).map_err(error)?;
        if let (Some(declared), false) = (&instr.declared_shape, matches!(instr.op, Op::Parameter { .. })) {
            if !declared.compatible(&shape) {
                return Err(error(broken(&DECLARED_SHAPE, format!("declared shape {declared} does not match the inferred shape {shape}"))));
            }
        }
        if let Some(rank) = deepest_rank(&shape).filter(|&r| r > crate::types::shape::MAX_RANK) {
            return Err(error(broken(
                &RANK_LIMIT,
                format!("result has {rank} dimensions, more than the limit of {}", crate::types::shape::MAX_RANK),
            )));
        }
        if tuple_depth(&shape) > MAX_TUPLE_DEPTH {
            return Err(error(broken(&TUPLE_DEPTH_LIMIT, format!("tuples nest deeper than {MAX_TUPLE_DEPTH}"))));
        }
        // A tuple of a tuple twice doubles its leaves: 24 such instructions
        // would make a shape of 16M leaves (gigabytes) from a small module.
        if tuple_leaves(&shape) > MAX_TUPLE_LEAVES {
            return Err(error(broken(&TUPLE_LEAVES_LIMIT, format!("result is a tuple of more than {MAX_TUPLE_LEAVES} arrays, the limit"))));
        }
        // Zero-sized dimensions count as 1: a `f32[1000000000,0]` result is
        // written as a billion empty lists.
        let total = shape.written_size();
        if total > ctx.options.max_elements {
            // The count saturates: `f32[2^32,2^32]` has 2^64 elements, not i64::MAX.
            let count = if total == i64::MAX { "more than 2^63 - 1".to_string() } else { total.to_string() };
            return Err(error(broken(
                &ELEMENT_LIMIT,
                format!(
                "shape {shape} has {count} elements (zero-sized dimensions counted as 1), more than the limit of {} (raise it with --max-elements)",
                ctx.options.max_elements
            ),
            )));
        }
        shapes.push(shape);
    }
    let params = shapes[..c.param_count].to_vec();
    let result = shapes[c.root].clone();
    Ok((shapes, Signature { params, result }))
}

/// Most arrays (and tokens) one value may hold; XLA programs with the most
/// parameters or outputs hold a few thousand.
pub const MAX_TUPLE_LEAVES: usize = 1 << 16;

/// The number of non-tuple leaves (counting stops past twice the limit).
fn tuple_leaves(shape: &Shape) -> usize {
    fn count(shape: &Shape, n: &mut usize) {
        match shape {
            Shape::Tuple(t) => {
                for s in t {
                    if *n > 2 * MAX_TUPLE_LEAVES {
                        return;
                    }
                    count(s, n);
                }
            }
            _ => *n += 1,
        }
    }
    let mut n = 0;
    count(shape, &mut n);
    n
}

fn tuple_depth(shape: &Shape) -> usize {
    match shape {
        Shape::Tuple(t) => 1 + t.iter().map(tuple_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The largest rank of any array in the shape.
fn deepest_rank(shape: &Shape) -> Option<usize> {
    match shape {
        Shape::Array(a) => Some(a.rank()),
        Shape::Tuple(t) => t.iter().filter_map(deepest_rank).max(),
        Shape::Token => None,
    }
}

fn infer_instruction(instr: &Instruction, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    match &instr.op {
        Op::Parameter { .. } => instr.declared_shape.clone().ok_or_else(|| broken(&PARAMETER_SHAPE, "a parameter needs a shape")),
        op => infer(op, operands, ctx),
    }
}

/// Infers the result shape of `op` applied to operands of the given shapes,
/// or says which rule of the document is broken.
pub fn infer(op: &Op, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    match op {
        Op::Parameter { .. } => Err(broken(&PARAMETER_SHAPE, "parameters are declared in `params`")),
        Op::Constant { literal } => Ok(literal.shape()),
        Op::Unary(u) => elementwise::unary(*u, operands),
        Op::Binary { op, broadcast_dimensions } => elementwise::binary(*op, broadcast_dimensions.as_deref(), operands),
        Op::Compare { direction, total_order, broadcast_dimensions } => {
            elementwise::compare(*direction, *total_order, broadcast_dimensions.as_deref(), operands)
        }
        Op::Select => elementwise::select(operands),
        Op::Clamp => elementwise::clamp(operands),
        Op::ConvertElementType { new_element_type } => elementwise::convert(*new_element_type, operands),
        Op::BitcastConvertType { new_element_type } => elementwise::bitcast_convert(*new_element_type, operands),
        Op::ReducePrecision { exponent_bits, mantissa_bits } => elementwise::reduce_precision(*exponent_bits, *mantissa_bits, operands),

        Op::Broadcast { broadcast_sizes } => shape_ops::broadcast(broadcast_sizes, operands),
        Op::BroadcastInDim { out_dim_size, broadcast_dimensions } => {
            shape_ops::broadcast_in_dim(out_dim_size, broadcast_dimensions, operands)
        }
        Op::Reshape { dimensions, new_sizes } => shape_ops::reshape(dimensions.as_deref(), new_sizes, operands),
        Op::Collapse { dimensions } => shape_ops::collapse(dimensions, operands),
        Op::Transpose { permutation } => shape_ops::transpose(permutation, operands),
        Op::Rev { dimensions } => shape_ops::rev(dimensions, operands),
        Op::Slice { start_indices, limit_indices, strides } => shape_ops::slice(start_indices, limit_indices, strides, operands),
        Op::ConcatInDim { dimension } => shape_ops::concat_in_dim(*dimension, operands),
        Op::Pad { padding_config } => shape_ops::pad(padding_config, operands),
        Op::Iota { shape, iota_dimension } => shape_ops::iota(shape, *iota_dimension, operands),
        Op::Tuple => shape_ops::tuple(operands),
        Op::GetTupleElement { index } => shape_ops::get_tuple_element(*index, operands),

        Op::DynamicSlice { slice_sizes } => indexing::dynamic_slice(slice_sizes, operands),
        Op::DynamicUpdateSlice => indexing::dynamic_update_slice(operands),
        Op::Gather(dims) => indexing::gather(dims, operands),
        Op::Scatter { dims, update_computation } => indexing::scatter(dims, *update_computation, operands, ctx),

        Op::Reduce { computation, dimensions } => reduce::reduce(*computation, dimensions, operands, ctx),
        Op::ReduceWindow { computation, window } => reduce::reduce_window(*computation, window, operands, ctx),
        Op::SelectAndScatter { select, scatter, window } => reduce::select_and_scatter(*select, *scatter, window, operands, ctx),
        Op::Map { computation, dimensions } => reduce::map(*computation, dimensions.as_deref(), operands, ctx),

        Op::Sort { comparator, dimension, is_stable: _ } => sort::sort(*comparator, *dimension, operands, ctx),
        Op::TopK { k, largest: _ } => sort::top_k(*k, operands),

        Op::Dot { preferred_element_type } => dot::dot(*preferred_element_type, operands),
        Op::DotGeneral { dimension_numbers, preferred_element_type } => {
            dot::dot_general(dimension_numbers, *preferred_element_type, operands)
        }
        Op::Conv(attrs) => conv::conv(attrs, operands),
        Op::Fft { fft_type, fft_length } => fft::fft(*fft_type, fft_length, operands),
        Op::Cholesky { .. } => linalg::cholesky(operands, ctx.options.strict),
        Op::TriangularSolve { left_side, .. } => linalg::triangular_solve(*left_side, operands, ctx.options.strict),
        Op::BatchNormTraining { feature_index, .. } => batch_norm::training(*feature_index, operands),
        Op::BatchNormInference { feature_index, .. } => batch_norm::inference(*feature_index, operands),
        Op::BatchNormGrad { feature_index, .. } => batch_norm::grad(*feature_index, operands),

        Op::Call { computation } => control::call(*computation, operands, ctx),
        Op::Conditional(form) => control::conditional(form, operands, ctx),
        Op::While { condition, body } => control::while_loop(*condition, *body, operands, ctx),
        Op::OptimizationBarrier => control::optimization_barrier(operands),
        Op::AfterAll => control::after_all(operands),

        Op::ReplicaId
        | Op::AllGather { .. }
        | Op::AllReduce { .. }
        | Op::AllToAll { .. }
        | Op::CollectivePermute { .. }
        | Op::ReduceScatter { .. }
        | Op::CrossReplicaSum { .. }
        | Op::Send { .. }
        | Op::SendDone { .. }
        | Op::Recv { .. }
        | Op::RecvDone { .. } => collectives::infer(op, operands, ctx),

        Op::RngUniform { .. } | Op::RngNormal { .. } | Op::RngBitGenerator { .. } => rng::infer(op, operands, ctx),

        Op::Infeed { .. } | Op::Outfeed { .. } | Op::CustomCall { .. } | Op::GetDimensionSize { .. } | Op::SetDimensionSize { .. } => {
            world::infer(op, operands, ctx)
        }
    }
}
