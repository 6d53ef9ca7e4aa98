//! Computations applied to scalars, element by element: the reducers of
//! Reduce, ReduceWindow and AllReduce, Map's function, Sort's comparator,
//! Scatter's and SelectAndScatter's update and select functions.
//!
//! Ops call [`ScalarComputation::call`] with scalar arguments and get the
//! scalar results (the elements of a returned tuple, or the one value).
//!
//! A computation made only of element-wise ops on scalars (what reducers and
//! comparators almost always are) is run by a tiny register machine over
//! [`Scalar`] values, with no allocation per call; anything else goes
//! through the interpreter. Both apply the same element functions
//! (`eval/element.rs`), so they cannot disagree.

use std::cell::{OnceCell, RefCell};

use num_complex::Complex;

use super::element::*;
use super::{internal, Interpreter};
use crate::error::RunError;
use crate::ir::{BinaryOp, ComputationId, Direction, Op, UnaryOp};
use crate::literal::{Data, Literal};
use crate::numerics::complex::{self as cx, Widened};
use crate::numerics::convert::{FromNum, ToNum};
use crate::numerics::float::Float;
use crate::numerics::int::Int;
use crate::scalar::Scalar;
use crate::types::{ElementType, Shape};
use crate::verify::VerifiedModule;

/// A computation of scalars to scalars, ready to be called many times.
pub struct ScalarComputation {
    id: ComputationId,
    program: OnceCell<Option<Program>>,
    registers: RefCell<Vec<Scalar>>,
}

impl ScalarComputation {
    pub fn new(id: ComputationId) -> ScalarComputation {
        ScalarComputation { id, program: OnceCell::new(), registers: RefCell::new(Vec::new()) }
    }

    /// Applies the computation to `args`; its results replace `out`'s contents.
    pub fn call(&self, it: &mut Interpreter, args: &[Scalar], out: &mut Vec<Scalar>) -> Result<(), RunError> {
        out.clear();
        if let Some(program) = self.program.get_or_init(|| Program::compile(it.module, self.id)) {
            let mut registers = self.registers.borrow_mut();
            return program.run(args, &mut registers, out);
        }
        let literals: Vec<Literal> = args.iter().map(|s| s.to_literal()).collect();
        let result = it.call(self.id, literals)?;
        collect(&result, out)
    }

    /// Applies a computation that returns one pred (comparators, select).
    pub fn call_pred(&self, it: &mut Interpreter, args: &[Scalar], scratch: &mut Vec<Scalar>) -> Result<bool, RunError> {
        self.call(it, args, scratch)?;
        scratch.first().and_then(|s| s.as_pred()).ok_or_else(|| internal("a comparator returned a non-pred value"))
    }
}

fn collect(result: &Literal, out: &mut Vec<Scalar>) -> Result<(), RunError> {
    match result {
        Literal::Array(a) => out.push(Scalar::from_array(a).ok_or_else(|| internal("a scalar computation returned a non-scalar"))?),
        Literal::Tuple(elems) => {
            for e in elems {
                collect(e, out)?;
            }
        }
        Literal::Token => return Err(internal("a scalar computation returned a token")),
    }
    Ok(())
}

/// One instruction of a scalar program; operands are register numbers
/// (the instruction numbers of the computation).
enum Step {
    Param(usize),
    Const(Scalar),
    Unary(UnaryOp, usize),
    Binary(BinaryOp, usize, usize),
    Compare(Direction, bool, usize, usize),
    Select(usize, usize, usize),
    Clamp(usize, usize, usize),
    Convert(ElementType, usize),
    /// A value defined elsewhere (GetTupleElement of a Tuple, barriers).
    Alias(usize),
    /// Tuples are only bookkeeping: their elements stay in their registers.
    Tuple,
}

struct Program {
    steps: Vec<Step>,
    /// Registers holding the results, in order.
    outputs: Vec<usize>,
}

impl Program {
    /// A program for the computation, if it only computes scalars with
    /// element-wise ops.
    fn compile(module: &VerifiedModule, id: ComputationId) -> Option<Program> {
        let c = module.computation(id);
        let is_scalar = |i: usize| module.shape(id, i).as_array().is_some_and(|a| a.is_scalar());
        // For each tuple-valued instruction, the registers of its elements.
        let mut tuples: Vec<Option<Vec<usize>>> = vec![None; c.instructions.len()];
        let mut steps = Vec::with_capacity(c.instructions.len());
        for (i, instr) in c.instructions.iter().enumerate() {
            let o = &instr.operands;
            let step = match &instr.op {
                Op::Tuple => {
                    if !o.iter().all(|&x| is_scalar(x)) {
                        return None;
                    }
                    tuples[i] = Some(o.clone());
                    Step::Tuple
                }
                Op::GetTupleElement { index } => Step::Alias(*tuples[o[0]].as_ref()?.get(*index as usize)?),
                Op::OptimizationBarrier if is_scalar(o[0]) => Step::Alias(o[0]),
                _ if !is_scalar(i) => return None,
                Op::Parameter { number } => Step::Param(*number),
                Op::Constant { literal } => Step::Const(Scalar::from_array(literal.as_array()?)?),
                Op::Unary(u) => Step::Unary(*u, o[0]),
                Op::Binary { op, .. } => Step::Binary(*op, o[0], o[1]),
                Op::Compare { direction, total_order, .. } => Step::Compare(*direction, *total_order, o[0], o[1]),
                Op::Select => Step::Select(o[0], o[1], o[2]),
                Op::Clamp => Step::Clamp(o[0], o[1], o[2]),
                Op::ConvertElementType { new_element_type } => Step::Convert(*new_element_type, o[0]),
                _ => return None,
            };
            steps.push(step);
        }
        let outputs = match (&tuples[c.root], module.shape(id, c.root)) {
            (Some(elems), _) => elems.clone(),
            (None, Shape::Array(a)) if a.is_scalar() => vec![c.root],
            _ => return None,
        };
        Some(Program { steps, outputs })
    }

    fn run(&self, args: &[Scalar], registers: &mut Vec<Scalar>, out: &mut Vec<Scalar>) -> Result<(), RunError> {
        registers.clear();
        for step in &self.steps {
            let r = |k: usize| registers.get(k).copied().ok_or_else(|| internal("scalar program register"));
            let value = match *step {
                Step::Param(n) => args.get(n).copied().ok_or_else(|| internal("scalar program argument"))?,
                Step::Const(s) => s,
                Step::Unary(op, a) => unary(op, r(a)?)?,
                Step::Binary(op, a, b) => binary(op, r(a)?, r(b)?)?,
                Step::Compare(d, total, a, b) => Scalar::Pred(compare(d, total, r(a)?, r(b)?)?),
                Step::Select(p, t, f) => {
                    if r(p)?.as_pred().ok_or_else(|| internal("select predicate"))? {
                        r(t)?
                    } else {
                        r(f)?
                    }
                }
                Step::Clamp(lo, x, hi) => binary(BinaryOp::Min, binary(BinaryOp::Max, r(lo)?, r(x)?)?, r(hi)?)?,
                Step::Convert(t, a) => convert(r(a)?, t),
                Step::Alias(a) => r(a)?,
                // Never read: GetTupleElement resolved to the element's register.
                Step::Tuple => Scalar::Pred(false),
            };
            registers.push(value);
        }
        for &k in &self.outputs {
            out.push(registers.get(k).copied().ok_or_else(|| internal("scalar program output"))?);
        }
        Ok(())
    }
}

fn unsupported(op: &str, s: Scalar) -> RunError {
    internal(&format!("{op} on {}", s.element_type()))
}

/// One element-wise unary function on one scalar (same tables as arrays).
pub fn unary(op: UnaryOp, s: Scalar) -> Result<Scalar, RunError> {
    fn int<T: Int>(op: UnaryOp, x: T, s: Scalar) -> Result<T, RunError> {
        Ok(int_unary::<T>(op).ok_or_else(|| unsupported(op.name(), s))?(x))
    }
    fn float<T: Float>(op: UnaryOp, x: T, s: Scalar) -> Result<T, RunError> {
        Ok(float_unary::<T>(op).ok_or_else(|| unsupported(op.name(), s))?(x))
    }
    fn complex<T: Widened + Into<Scalar>>(op: UnaryOp, z: T, s: Scalar) -> Result<Scalar, RunError>
    where
        T::Part: Into<Scalar>,
    {
        Ok(match op {
            UnaryOp::Abs => T::part(cx::abs(z.widen())).into(),
            UnaryOp::Real => T::part(z.widen().re).into(),
            UnaryOp::Imag => T::part(z.widen().im).into(),
            _ => T::narrow(complex_unary(op).ok_or_else(|| unsupported(op.name(), s))?(z.widen())).into(),
        })
    }
    if let Some(test) = float_predicate(op) {
        let x = crate::scalar_by_class!(s, x => {
            pred: return Err(unsupported(op.name(), s)),
            int: return Err(unsupported(op.name(), s)),
            float: x.to_f64(),
            complex: return Err(unsupported(op.name(), s)),
        });
        return Ok(Scalar::Pred(test(x)));
    }
    Ok(crate::scalar_by_class!(s, x => {
        pred: Scalar::Pred(pred_unary(op).ok_or_else(|| unsupported(op.name(), s))?(x)),
        int: int(op, x, s)?.into(),
        float: float(op, x, s)?.into(),
        complex: complex(op, x, s)?,
    }))
}

/// One element-wise binary op on two scalars of one type.
pub fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Result<Scalar, RunError> {
    fn int<T: Int>(op: BinaryOp, x: T, y: T, s: Scalar) -> Result<T, RunError> {
        Ok(int_binary::<T>(op).ok_or_else(|| unsupported(op.name(), s))?(x, y))
    }
    fn float<T: Float>(op: BinaryOp, x: T, y: T, s: Scalar) -> Result<T, RunError> {
        Ok(float_binary::<T>(op).ok_or_else(|| unsupported(op.name(), s))?(x, y))
    }
    fn complex<T: Widened + Into<Scalar>>(op: BinaryOp, x: T, y: T, s: Scalar) -> Result<Scalar, RunError> {
        let f = complex_binary(op).ok_or_else(|| unsupported(op.name(), s))?;
        Ok(T::narrow(f(x.widen(), y.widen())).into())
    }
    use Scalar as S;
    Ok(match (a, b) {
        // Complex(re, im) builds a c64/c128 from two f32/f64 scalars.
        (S::F32(x), S::F32(y)) if op == BinaryOp::Complex => S::C64(Complex::new(x, y)),
        (S::F64(x), S::F64(y)) if op == BinaryOp::Complex => S::C128(Complex::new(x, y)),
        (a, b) => crate::scalar_by_class2!((a, b), (x, y) => {
            pred: S::Pred(pred_binary(op).ok_or_else(|| unsupported(op.name(), a))?(x, y)),
            int: int(op, x, y, a)?.into(),
            float: float(op, x, y, a)?.into(),
            complex: complex(op, x, y, a)?,
        } else return Err(internal("binary scalars of different types"))),
    })
}

/// One comparison of two scalars of one type.
pub fn compare(direction: Direction, total_order: bool, a: Scalar, b: Scalar) -> Result<bool, RunError> {
    fn with<T: Copy>(x: T, y: T, (d, lt, eq): (Direction, Cmp<T>, Cmp<T>)) -> bool {
        decide(d, x, y, lt, eq)
    }
    let ne = direction == Direction::Ne;
    Ok(crate::scalar_by_class2!((a, b), (x, y) => {
        pred: with(x, y, ordered_compare(direction)),
        int: with(x, y, ordered_compare(direction)),
        float: with(x, y, float_compare(direction, total_order)),
        complex: (x == y) != ne,
    } else return Err(internal("compared scalars of different types"))))
}

/// ConvertElementType of one scalar (numerics/convert.rs).
pub fn convert(s: Scalar, to: ElementType) -> Scalar {
    fn from<S: ToNum>(x: S, to: ElementType) -> Scalar {
        let n = x.to_num();
        crate::with_type!(to, D => Scalar::from(D::from_num(n)))
    }
    crate::scalar_by_class!(s, x => {
        pred: from(x, to),
        int: from(x, to),
        float: from(x, to),
        complex: from(x, to),
    })
}

/// Scalars read from data, for tests and callers that hold arrays.
pub fn scalars(data: &Data) -> Vec<Scalar> {
    (0..data.len()).map(|i| data.get(i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Env, Interpreter};
    use crate::json::{parse_module, ReadOptions};
    use crate::verify::{verify, VerifyOptions};

    /// `argmax` as the document's variadic-reduce example, plus a reducer
    /// that needs the interpreter (it builds a non-scalar value).
    const MODULE: &str = r#"{"computations": {
      "argmax": {"params": [{"name": "m", "shape": "f32[]"}, {"name": "i", "shape": "s32[]"},
                            {"name": "v", "shape": "f32[]"}, {"name": "k", "shape": "s32[]"}],
        "instructions": [
          {"name": "ge", "op": "Ge", "operands": ["v", "m"]},
          {"name": "nm", "op": "Select", "operands": ["ge", "v", "m"]},
          {"name": "ni", "op": "Select", "operands": ["ge", "k", "i"]},
          {"name": "t", "op": "Tuple", "operands": ["nm", "ni"]}]},
      "roundabout_add": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
        "instructions": [
          {"name": "s", "op": "Add", "operands": ["a", "b"]},
          {"name": "v", "op": "Broadcast", "operands": ["s"], "broadcast_sizes": [2]},
          {"name": "r", "op": "Slice", "operands": ["v"], "start_indices": [1], "limit_indices": [2]},
          {"name": "o", "op": "Reshape", "operands": ["r"], "new_sizes": []}]},
      "main": {"params": [{"name": "x", "shape": "f32[]"}], "instructions": [{"name": "y", "op": "Neg", "operands": ["x"]}]}
    }}"#;

    #[test]
    fn compiled_and_interpreted_paths_agree() {
        let module = verify(parse_module(MODULE, ReadOptions::default()).unwrap(), &VerifyOptions::default()).unwrap();
        let mut env = Env::default();
        let mut it = Interpreter { module: &module, env: &mut env, depth: 0 };
        let argmax = module.module().computation_by_name("argmax").unwrap();
        let f = ScalarComputation::new(argmax);
        let mut out = Vec::new();
        f.call(&mut it, &[Scalar::F32(1.0), Scalar::S32(0), Scalar::F32(3.0), Scalar::S32(7)], &mut out).unwrap();
        assert_eq!(out, vec![Scalar::F32(3.0), Scalar::S32(7)]);
        assert!(f.program.get().unwrap().is_some(), "argmax compiles to a scalar program");

        let add = module.module().computation_by_name("roundabout_add").unwrap();
        let g = ScalarComputation::new(add);
        g.call(&mut it, &[Scalar::F32(1.5), Scalar::F32(2.0)], &mut out).unwrap();
        assert_eq!(out, vec![Scalar::F32(3.5)]);
        assert!(g.program.get().unwrap().is_none(), "a non-scalar body falls back to the interpreter");
    }

    #[test]
    fn scalar_ops_match_array_ops() {
        assert_eq!(binary(BinaryOp::Div, Scalar::S32(7), Scalar::S32(0)).unwrap(), Scalar::S32(-1));
        assert_eq!(unary(UnaryOp::Abs, Scalar::C64(Complex::new(3.0, 4.0))).unwrap(), Scalar::F32(5.0));
        assert!(!compare(Direction::Lt, false, Scalar::F32(f32::NAN), Scalar::F32(1.0)).unwrap());
        assert!(compare(Direction::Lt, true, Scalar::F32(-0.0), Scalar::F32(0.0)).unwrap());
        assert_eq!(convert(Scalar::F32(f32::NAN), ElementType::S32), Scalar::S32(0));
    }
}
