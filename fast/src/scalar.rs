//! Scalar computations (reducers, comparators, update functions) called
//! element by element by the fast engine's kernels. This first version runs
//! them through the executor on one-element values; kernels should go
//! through this API so that a faster path can replace it in one place.

use xlaref_reference::ir::ComputationId;
use xlaref_reference::literal::Literal;
use xlaref_reference::scalar::Scalar;
use xlaref_reference::RunError;

use crate::exec::Executor;

/// A computation of scalars to scalars.
pub struct ScalarFn {
    id: ComputationId,
}

impl ScalarFn {
    pub fn new(id: ComputationId) -> ScalarFn {
        ScalarFn { id }
    }

    /// Applies the computation; its results (tuple elements, or the one
    /// value) replace `out`'s contents.
    pub fn call(&self, exec: &mut Executor, args: &[Scalar], out: &mut Vec<Scalar>) -> Result<(), RunError> {
        let result = exec.call(self.id, args.iter().map(|s| s.to_literal()).collect())?;
        out.clear();
        flatten(&result, out)
    }

    /// Applies a computation returning one pred.
    pub fn call_pred(&self, exec: &mut Executor, args: &[Scalar], scratch: &mut Vec<Scalar>) -> Result<bool, RunError> {
        self.call(exec, args, scratch)?;
        scratch.first().and_then(|s| s.as_pred()).ok_or_else(|| RunError::Other("fast engine: a comparator returned a non-pred".into()))
    }
}

fn flatten(l: &Literal, out: &mut Vec<Scalar>) -> Result<(), RunError> {
    match l {
        Literal::Array(a) => out.push(Scalar::from_array(a).ok_or_else(|| RunError::Other("fast engine: non-scalar result".into()))?),
        Literal::Tuple(t) => {
            for e in t {
                flatten(e, out)?;
            }
        }
        Literal::Token => return Err(RunError::Other("fast engine: token result".into())),
    }
    Ok(())
}
