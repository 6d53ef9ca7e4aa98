//! The typed IR of an xla-json/1 module (docs/format.md §3). Engines never see
//! JSON: every attribute is parsed here into a typed field.

mod attrs;
mod ops;

pub use attrs::*;
pub use ops::*;

use crate::types::Shape;

/// Index of a computation in [`Module::computations`].
pub type ComputationId = usize;
/// Index of an instruction in [`Computation::instructions`].
pub type InstrId = usize;

/// A module: named computations, one of which is the entry.
#[derive(Clone, Debug)]
pub struct Module {
    pub computations: Vec<Computation>,
    pub entry: ComputationId,
}

/// A computation. Its parameters are its first `param_count` instructions
/// (`Op::Parameter`), so every value is named by an [`InstrId`].
#[derive(Clone, Debug)]
pub struct Computation {
    pub name: String,
    pub instructions: Vec<Instruction>,
    pub param_count: usize,
    pub root: InstrId,
}

/// One instruction: its op with typed attributes, its operands (earlier
/// instructions), and the result shape the module declared, if any.
#[derive(Clone, Debug)]
pub struct Instruction {
    pub name: String,
    pub op: Op,
    pub operands: Vec<InstrId>,
    pub declared_shape: Option<Shape>,
    /// Where the instruction came from, e.g. `line 4 column 7` of the HLO or
    /// MLIR text it was imported from: named in error messages, no meaning.
    pub location: Option<String>,
}

impl Module {
    pub fn entry_computation(&self) -> &Computation {
        &self.computations[self.entry]
    }

    pub fn computation_by_name(&self, name: &str) -> Option<ComputationId> {
        self.computations.iter().position(|c| c.name == name)
    }
}

impl Computation {
    pub fn params(&self) -> &[Instruction] {
        &self.instructions[..self.param_count]
    }

    /// The shapes the parameters declare, in order.
    pub fn param_shapes(&self) -> Vec<Shape> {
        self.params().iter().filter_map(|p| p.declared_shape.clone()).collect()
    }
}
