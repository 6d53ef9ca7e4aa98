//! Scalar computations (reducers, comparators, update functions) called
//! element by element by the fast engine's kernels.
//!
//! A computation is compiled once into one of:
//! - a recognised [`Kind`] (one binary op of the two parameters, or one
//!   comparison of them), which kernels run as specialised typed loops;
//! - a [`Program`]: a register program of element-wise steps, run on
//!   [`Scalar`]s (`Program::call`, no executor, safe to share across
//!   threads) or on whole arrays of lanes (`Program::call_lanes`, through
//!   the element-wise kernels);
//! - otherwise the executor runs it per call (control flow, nested ops).

mod ops;

use std::cell::RefCell;
use std::sync::OnceLock;

use xlaref_reference::ir::{BinaryOp, ComputationId, Direction, Op, UnaryOp};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::scalar::Scalar;
use xlaref_reference::types::{ArrayShape, ElementType, Shape};
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

use crate::exec::Executor;
use crate::internal;
use crate::kernels::{elementwise as ew, shape_ops};

/// What a computation is, when kernels can run it as a typed loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `op(p0, p1)` (or `op(p1, p0)`) for a commutative, associative op:
    /// Add, Mul, Max, Min, And, Or, Xor.
    Bin(BinaryOp),
    /// `compare(p0, p1)` with `swapped == false`, `compare(p1, p0)` with
    /// `swapped == true` (IEEE comparison, not the total order).
    Cmp { direction: Direction, swapped: bool },
    /// Anything else.
    Other,
}

/// One step of a program; operands are register numbers (instruction
/// numbers of the computation).
#[derive(Clone, Debug)]
enum Step {
    Param(usize),
    Const(ArrayLiteral, Scalar),
    Unary(UnaryOp, usize, ElementType),
    Binary(BinaryOp, usize, usize, ElementType),
    Compare(Direction, bool, usize, usize),
    Select(usize, usize, usize),
    Clamp(usize, usize, usize),
    Convert(usize, ElementType),
    /// Only as the root: the results are these registers.
    Tuple(Vec<usize>),
}

/// A computation of scalars compiled to element-wise steps.
#[derive(Clone, Debug)]
pub struct Program {
    steps: Vec<Step>,
    root: usize,
    params: usize,
}

thread_local! {
    static REGISTERS: RefCell<Vec<Scalar>> = const { RefCell::new(Vec::new()) };
}

fn one(s: Scalar) -> ArrayLiteral {
    ArrayLiteral::new(vec![], Data::from_scalars(s.element_type(), &[s]))
}

fn first(a: &ArrayLiteral) -> R<Scalar> {
    Scalar::from_array(a).ok_or_else(|| internal("a scalar step produced no value"))
}

type R<T> = Result<T, RunError>;

impl Program {
    /// Compiles computation `id` if every instruction is an element-wise
    /// op on scalars (with a tuple only as the root).
    pub fn compile(module: &VerifiedModule, id: ComputationId) -> Option<Program> {
        let c = module.computation(id);
        let scalar_type = |i: usize| match module.shape(id, i) {
            Shape::Array(a) if a.rank() == 0 => Some(a.element_type),
            _ => None,
        };
        let mut steps = Vec::with_capacity(c.instructions.len());
        for (i, instr) in c.instructions.iter().enumerate() {
            let o = &instr.operands;
            let arg = |k: usize| o.get(k).copied().filter(|&r| r < i);
            let step = match &instr.op {
                Op::Tuple if i == c.root => {
                    Step::Tuple(o.iter().map(|&r| (r < i && scalar_type(r).is_some()).then_some(r)).collect::<Option<_>>()?)
                }
                _ if scalar_type(i).is_none() => return None,
                Op::Parameter { number } => Step::Param(*number),
                Op::Constant { literal } => {
                    let a = literal.as_array()?;
                    Step::Const(a.clone(), Scalar::from_array(a)?)
                }
                Op::Unary(u) => Step::Unary(*u, arg(0)?, scalar_type(i)?),
                Op::Binary { op, .. } => Step::Binary(*op, arg(0)?, arg(1)?, scalar_type(i)?),
                Op::Compare { direction, total_order, .. } => Step::Compare(*direction, *total_order, arg(0)?, arg(1)?),
                Op::Select => Step::Select(arg(0)?, arg(1)?, arg(2)?),
                Op::Clamp => Step::Clamp(arg(0)?, arg(1)?, arg(2)?),
                Op::ConvertElementType { new_element_type } => Step::Convert(arg(0)?, *new_element_type),
                _ => return None,
            };
            steps.push(step);
        }
        if steps.is_empty() || c.root >= steps.len() {
            return None;
        }
        Some(Program { steps, root: c.root, params: c.param_count })
    }

    /// Runs the program on scalars; the results replace `out`'s contents.
    pub fn call(&self, args: &[Scalar], out: &mut Vec<Scalar>) -> R<()> {
        REGISTERS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut regs) => self.run(args, &mut regs, out),
            Err(_) => self.run(args, &mut Vec::new(), out),
        })
    }

    fn run(&self, args: &[Scalar], regs: &mut Vec<Scalar>, out: &mut Vec<Scalar>) -> R<()> {
        if args.len() != self.params {
            return Err(internal("wrong number of arguments to a scalar computation"));
        }
        regs.clear();
        out.clear();
        for step in &self.steps {
            let get = |r: usize| regs.get(r).copied().ok_or_else(|| internal("register"));
            let value = match step {
                Step::Param(k) => *args.get(*k).ok_or_else(|| internal("parameter number"))?,
                Step::Const(_, s) => *s,
                Step::Binary(op, a, b, t) => {
                    let (x, y) = (get(*a)?, get(*b)?);
                    match ops::binary(*op, x, y) {
                        Some(v) => v,
                        None => first(&ew::binary(*op, &one(x), &one(y), None, &ArrayShape::scalar(*t))?)?,
                    }
                }
                Step::Compare(d, total, a, b) => {
                    let (x, y) = (get(*a)?, get(*b)?);
                    Scalar::Pred(ops::compare(*d, *total, x, y).ok_or_else(|| internal("compare of mixed types"))?)
                }
                Step::Select(p, a, b) => match get(*p)? {
                    Scalar::Pred(true) => get(*a)?,
                    Scalar::Pred(false) => get(*b)?,
                    _ => return Err(internal("select predicate is not pred")),
                },
                Step::Unary(u, a, t) => first(&ew::unary(*u, &one(get(*a)?), &ArrayShape::scalar(*t))?)?,
                Step::Clamp(lo, x, hi) => first(&ew::clamp(&one(get(*lo)?), &one(get(*x)?), &one(get(*hi)?))?)?,
                Step::Convert(a, t) => first(&ew::convert(&one(get(*a)?), *t))?,
                Step::Tuple(rs) => {
                    for &r in rs {
                        out.push(get(r)?);
                    }
                    return Ok(());
                }
            };
            regs.push(value);
        }
        out.push(regs.get(self.root).copied().ok_or_else(|| internal("register"))?);
        Ok(())
    }

    /// Runs the program on arrays of `n` lanes each (lane `i` of every
    /// argument is one call): returns one array per result.
    pub fn call_lanes(&self, args: &[&ArrayLiteral], n: usize) -> R<Vec<ArrayLiteral>> {
        if args.len() != self.params || args.iter().any(|a| a.element_count() != n) {
            return Err(internal("wrong arguments to a scalar computation"));
        }
        let dims = vec![n as i64];
        let lanes = |t: ElementType| ArrayShape::new(t, dims.clone());
        let mut regs: Vec<ArrayLiteral> = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let get = |r: usize| regs.get(r).ok_or_else(|| internal("register"));
            let value = match step {
                Step::Param(k) => {
                    let a = args.get(*k).ok_or_else(|| internal("parameter number"))?;
                    ArrayLiteral::with_shape(lanes(a.element_type()), a.data.clone())
                }
                Step::Const(a, _) => shape_ops::broadcast(a, &lanes(a.element_type()), &[]),
                Step::Binary(op, a, b, t) => ew::binary(*op, get(*a)?, get(*b)?, None, &lanes(*t))?,
                Step::Compare(d, total, a, b) => ew::compare(*d, *total, get(*a)?, get(*b)?, None, &lanes(ElementType::Pred))?,
                Step::Select(p, a, b) => {
                    let (t, f) = (Literal::Array(get(*a)?.clone()), Literal::Array(get(*b)?.clone()));
                    ew::select(get(*p)?, &t, &f)?.into_array().ok_or_else(|| internal("select result"))?
                }
                Step::Unary(u, a, t) => ew::unary(*u, get(*a)?, &lanes(*t))?,
                Step::Clamp(lo, x, hi) => ew::clamp(get(*lo)?, get(*x)?, get(*hi)?)?,
                Step::Convert(a, t) => ew::convert(get(*a)?, *t),
                Step::Tuple(rs) => return rs.iter().map(|&r| get(r).cloned()).collect(),
            };
            regs.push(value);
        }
        Ok(vec![regs.swap_remove(self.root)])
    }
}

/// Recognises the computations kernels specialise.
fn classify(module: &VerifiedModule, id: ComputationId) -> Kind {
    let c = module.computation(id);
    let Some(root) = c.instructions.get(c.root) else { return Kind::Other };
    if c.param_count != 2 || root.operands.len() != 2 {
        return Kind::Other;
    }
    let param = |r: usize| match c.instructions.get(r).map(|i| &i.op) {
        Some(Op::Parameter { number }) => Some(*number),
        _ => None,
    };
    let same_type = match (module.shape(id, root.operands[0]), module.shape(id, root.operands[1])) {
        (Shape::Array(a), Shape::Array(b)) => a.rank() == 0 && b.rank() == 0 && a.element_type == b.element_type,
        _ => false,
    };
    let swapped = match (param(root.operands[0]), param(root.operands[1])) {
        (Some(0), Some(1)) => false,
        (Some(1), Some(0)) => true,
        _ => return Kind::Other,
    };
    if !same_type {
        return Kind::Other;
    }
    match &root.op {
        Op::Binary { op, .. } => {
            use BinaryOp::*;
            match op {
                Add | Mul | Max | Min | And | Or | Xor => Kind::Bin(*op),
                _ => Kind::Other,
            }
        }
        Op::Compare { direction, total_order: false, .. } => Kind::Cmp { direction: *direction, swapped },
        _ => Kind::Other,
    }
}

struct Compiled {
    kind: Kind,
    program: Option<Program>,
}

/// A computation of scalars to scalars.
pub struct ScalarFn {
    id: ComputationId,
    compiled: OnceLock<Compiled>,
}

impl ScalarFn {
    pub fn new(id: ComputationId) -> ScalarFn {
        ScalarFn { id, compiled: OnceLock::new() }
    }

    fn compiled(&self, module: &VerifiedModule) -> &Compiled {
        self.compiled.get_or_init(|| Compiled { kind: classify(module, self.id), program: Program::compile(module, self.id) })
    }

    /// The recognised form of the computation.
    pub fn kind(&self, module: &VerifiedModule) -> Kind {
        self.compiled(module).kind
    }

    /// The compiled program, when every instruction is element-wise: it
    /// runs without the executor (so on any thread).
    pub fn program(&self, module: &VerifiedModule) -> Option<&Program> {
        self.compiled(module).program.as_ref()
    }

    /// Applies the computation; its results (tuple elements, or the one
    /// value) replace `out`'s contents.
    pub fn call(&self, exec: &mut Executor, args: &[Scalar], out: &mut Vec<Scalar>) -> Result<(), RunError> {
        if let Some(p) = self.program(exec.module) {
            return p.call(args, out);
        }
        let result = exec.call(self.id, args.iter().map(|s| s.to_literal()).collect())?;
        out.clear();
        flatten(&result, out)
    }

    /// Applies a computation returning one pred.
    pub fn call_pred(&self, exec: &mut Executor, args: &[Scalar], scratch: &mut Vec<Scalar>) -> Result<bool, RunError> {
        self.call(exec, args, scratch)?;
        scratch.first().and_then(|s| s.as_pred()).ok_or_else(|| internal("a comparator returned a non-pred"))
    }

    /// Applies the computation lane-wise to arrays of `n` elements (one
    /// call per lane): through the compiled program's array kernels, or
    /// one executor call per lane.
    pub fn call_lanes(&self, exec: &mut Executor, args: &[&ArrayLiteral], n: usize, out: &[ArrayShape]) -> R<Vec<ArrayLiteral>> {
        if let Some(p) = self.program(exec.module) {
            return p.call_lanes(args, n);
        }
        let mut results: Vec<Data> = out.iter().map(|s| Data::zeros(s.element_type, n)).collect();
        let mut scalars = Vec::with_capacity(args.len());
        let mut values = Vec::new();
        for i in 0..n {
            exec.env.check_deadline()?;
            scalars.clear();
            scalars.extend(args.iter().map(|a| a.data.get(i)));
            self.call(exec, &scalars, &mut values)?;
            if values.len() != results.len() {
                return Err(internal("a computation returned the wrong number of values"));
            }
            for (d, &v) in results.iter_mut().zip(&values) {
                if !d.set(i, v) {
                    return Err(internal("a computation returned a value of another type"));
                }
            }
        }
        Ok(results.into_iter().zip(out).map(|(d, s)| ArrayLiteral::with_shape(s.clone(), d)).collect())
    }
}

fn flatten(l: &Literal, out: &mut Vec<Scalar>) -> Result<(), RunError> {
    match l {
        Literal::Array(a) => out.push(Scalar::from_array(a).ok_or_else(|| internal("non-scalar result"))?),
        Literal::Tuple(t) => {
            for e in t {
                flatten(e, out)?;
            }
        }
        Literal::Token => return Err(internal("token result")),
    }
    Ok(())
}
