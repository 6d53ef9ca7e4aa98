//! Computations applied to scalars, element by element: the reducers of
//! Reduce, ReduceWindow and AllReduce, Map's function, Sort's comparator,
//! Scatter's and SelectAndScatter's update and select functions.
//!
//! Ops call [`ScalarComputation::call`] with scalar arguments and get the
//! scalar results (the elements of a returned tuple, or the one value).

use super::{internal, Interpreter};
use crate::error::RunError;
use crate::ir::ComputationId;
use crate::literal::Literal;
use crate::scalar::Scalar;

/// A computation of scalars to scalars, ready to be called many times.
pub struct ScalarComputation {
    id: ComputationId,
}

impl ScalarComputation {
    pub fn new(id: ComputationId) -> ScalarComputation {
        ScalarComputation { id }
    }

    /// Applies the computation to `args`; its results replace `out`'s contents.
    pub fn call(&self, it: &mut Interpreter, args: &[Scalar], out: &mut Vec<Scalar>) -> Result<(), RunError> {
        let literals: Vec<Literal> = args.iter().map(|s| s.to_literal()).collect();
        let result = it.call(self.id, literals)?;
        out.clear();
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
