//! Program DAGs: 2 to 20 steps over a pool of values of one shape, each
//! step reading earlier values (so values are reused and have several
//! consumers) through shape-preserving ops, shape-changing round trips
//! (reduce then broadcast, slice then pad, flatten then reshape, transpose
//! and back, concatenate then slice, dynamic slice then update), and
//! nested computations: Map, Sort, and While and
//! Conditional whose bodies hold a Map, a Reduce and a Sort.
//!
//! Nested bodies use only exactly rounded ops (and a max Reduce, whose
//! order does not matter): lockstep judges While and Conditional exactly.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::ElementType;

use super::values::{dims, literal, one_of, scalar};
use super::{comp, const_ins, counter_below, ins, scalar_shape, Builder, Program};

use ElementType as E;

const TYPES: [ElementType; 7] = [E::F32, E::F64, E::F16, E::BF16, E::S32, E::S64, E::S8];

/// The kinds of step.
const STEPS: [&str; 16] = [
    "binary",
    "binary",
    "unary",
    "select",
    "clamp",
    "rev",
    "reduce",
    "flatten",
    "slice_pad",
    "sort",
    "map",
    "while",
    "conditional",
    "dynamic",
    "constant",
    "transcendental",
];

/// One step: its kind and three picks among earlier values (and sizes).
type Step = (usize, Index, Index, Index, u8);

struct Dag<'a> {
    b: Builder,
    t: ElementType,
    d: Vec<i64>,
    pool: Vec<String>,
    pred: String,
    init: String,
    constant: &'a Literal,
}

impl Dag<'_> {
    fn rank(&self) -> i64 {
        self.d.len() as i64
    }

    fn all_dims(&self) -> Vec<i64> {
        (0..self.rank()).collect()
    }

    /// The shape string of pool values.
    fn shape(&self) -> String {
        super::array_shape(self.t, &self.d)
    }

    fn step(&mut self, (kind, i, j, k, small): Step) -> String {
        let a = i.get(&self.pool).clone();
        let c = j.get(&self.pool).clone();
        let last = self.pool[self.pool.len() - 1].clone();
        let dim = if self.d.is_empty() { 0 } else { k.index(self.d.len()) as i64 };
        let binary = ["Add", "Sub", "Mul", "Max", "Min"][small as usize % 5];
        let ranked = !self.d.is_empty();
        match STEPS[kind % STEPS.len()] {
            "unary" => self.b.push(["Neg", "Abs"][small as usize % 2], &[&last], json!({})),
            "transcendental" if self.t.is_float() => self.b.push(["Exp", "Tanh", "Log1p"][small as usize % 3], &[&a], json!({})),
            "select" => {
                let p = self.b.push(["Lt", "Ge", "Eq"][small as usize % 3], &[&a, &c], json!({}));
                self.b.push("Select", &[&p, &last, &a], json!({}))
            }
            "clamp" => self.b.push("Clamp", &[&a, &last, &c], json!({})),
            "rev" if ranked => self.b.push("Rev", &[&a], json!({"dimensions": [dim]})),
            "reduce" if ranked => self.reduce_and_broadcast(&a, dim, small),
            "flatten" if ranked => {
                let n: i64 = self.d.iter().product();
                let flat = self.b.push("Reshape", &[&a], json!({"new_sizes": [n]}));
                self.b.push("Reshape", &[&flat], json!({"new_sizes": self.d}))
            }
            "slice_pad" if ranked => self.slice_and_pad(&a, dim as usize, small),
            "sort" if ranked => self.sort(&a, dim, small),
            "map" => {
                let body = self.map_body(binary);
                self.b.push("Map", &[&a, &c], json!({"computation": body, "dimensions": self.all_dims()}))
            }
            "while" => self.while_loop(&a, &c, i64::from(small % 4)),
            "conditional" => self.conditional(&a, &c),
            "dynamic" if ranked => self.dynamic(&a, &c, dim as usize, small),
            "transpose" if self.d.len() >= 2 => {
                // Reverse the dimensions, then put them back.
                let reversed: Vec<i64> = self.all_dims().into_iter().rev().collect();
                let t = self.b.push("Transpose", &[&a], json!({"permutation": reversed}));
                self.b.push("Transpose", &[&t], json!({"permutation": reversed}))
            }
            "concat" if ranked => {
                // Join a and c along a dimension and take a window that
                // straddles the seam.
                let n = self.d[dim as usize];
                let joined = self.b.push("ConcatInDim", &[&a, &c], json!({"dimension": dim}));
                let shift = i64::from(small) % (n + 1);
                let starts: Vec<i64> = (0..self.rank()).map(|i| if i == dim { shift } else { 0 }).collect();
                let limits: Vec<i64> = self.d.iter().enumerate().map(|(i, &s)| if i as i64 == dim { shift + s } else { s }).collect();
                self.b.push(
                    "Slice",
                    &[&joined],
                    json!({"start_indices": starts, "limit_indices": limits, "strides": vec![1; self.d.len()]}),
                )
            }
            "constant" => {
                let cst = self.b.constant(self.constant);
                self.b.push(binary, &[&cst, &a], json!({}))
            }
            _ => self.b.push(binary, &[&last, &a], json!({})),
        }
    }

    /// Reduce over one dimension (max, or add at the top level where the
    /// tolerance model bounds the sum), broadcast back.
    fn reduce_and_broadcast(&mut self, a: &str, dim: i64, small: u8) -> String {
        let f = self.b.binary_computation(if small.is_multiple_of(2) { "Max" } else { "Add" }, self.t);
        let init = self.init.clone();
        let r = self.b.push("Reduce", &[a, &init], json!({"computation": f, "dimensions": [dim]}));
        let kept: Vec<i64> = self.all_dims().into_iter().filter(|&x| x != dim).collect();
        self.b.push("BroadcastInDim", &[&r], json!({"out_dim_size": self.d, "broadcast_dimensions": kept}))
    }

    /// Slice a prefix of one dimension and pad it back with the init value.
    fn slice_and_pad(&mut self, a: &str, dim: usize, small: u8) -> String {
        let n = self.d[dim];
        let keep = i64::from(small) % (n + 1);
        let limits: Vec<i64> = self.d.iter().enumerate().map(|(i, &s)| if i == dim { keep } else { s }).collect();
        let s = self.b.push(
            "Slice",
            &[a],
            json!({"start_indices": vec![0; self.d.len()], "limit_indices": limits, "strides": vec![1; self.d.len()]}),
        );
        let config: Vec<_> = (0..self.d.len())
            .map(|i| json!({"edge_padding_low": 0, "edge_padding_high": if i == dim { n - keep } else { 0 }, "interior_padding": 0}))
            .collect();
        let init = self.init.clone();
        self.b.push("Pad", &[&s, &init], json!({"padding_config": config}))
    }

    /// Sort along a dimension: ascending or descending in the total order
    /// (floats) or the integer order.
    fn sort(&mut self, a: &str, dim: i64, small: u8) -> String {
        let cmp = self.comparator(small.is_multiple_of(2));
        self.b.push("Sort", &[a], json!({"comparator": cmp, "dimension": dim, "is_stable": small.is_multiple_of(3)}))
    }

    fn comparator(&mut self, ascending: bool) -> String {
        let op = match (self.t.is_float(), ascending) {
            (true, true) => "LtTotalOrder",
            (true, false) => "GtTotalOrder",
            (false, true) => "Lt",
            (false, false) => "Gt",
        };
        let s = scalar_shape(self.t);
        let name = format!("cmp_{}", op.to_lowercase());
        self.b.computation(&name, comp(&[("x", s.clone()), ("y", s)], vec![ins("r", op, &["x", "y"], json!({}))]))
    }

    /// `body(x, y) = select(x < y, op(x, y), y - x)`.
    fn map_body(&mut self, op: &str) -> String {
        let s = scalar_shape(self.t);
        let name = format!("map_{}", op.to_lowercase());
        let body = vec![
            ins("lt", "Lt", &["x", "y"], json!({})),
            ins("f", op, &["x", "y"], json!({})),
            ins("g", "Sub", &["y", "x"], json!({})),
            ins("r", "Select", &["lt", "f", "g"], json!({})),
        ];
        self.b.computation(&name, comp(&[("x", s.clone()), ("y", s)], body))
    }

    /// A While running `trips` times over `(i, x, y)`: each trip maps
    /// `x, y`, subtracts the maximum (a nested Reduce; its init 0 need not
    /// be an identity, as max is idempotent) and sorts along the first
    /// dimension.
    fn while_loop(&mut self, a: &str, c: &str, trips: i64) -> String {
        let shape = self.shape();
        let state = format!("(s32[], {shape}, {shape})");
        let name = format!("while{}", self.b.len());
        let cond = format!("{name}_cond");
        self.b.computation(&cond, counter_below(&state, trips));
        let map = self.map_body("Max");
        let max = self.b.binary_computation("Max", self.t);
        let mut body = vec![
            ins("i", "GetTupleElement", &["s"], json!({"index": 0})),
            ins("x", "GetTupleElement", &["s"], json!({"index": 1})),
            ins("y", "GetTupleElement", &["s"], json!({"index": 2})),
            const_ins("z0", self.t, 0),
            const_ins("one", E::S32, 1),
            ins("i2", "Add", &["i", "one"], json!({})),
            ins("m", "Map", &["x", "y"], json!({"computation": map, "dimensions": self.all_dims()})),
            ins("top", "Reduce", &["m", "z0"], json!({"computation": max, "dimensions": self.all_dims()})),
            ins("tb", "BroadcastInDim", &["top"], json!({"out_dim_size": self.d, "broadcast_dimensions": []})),
            ins("dm", "Sub", &["m", "tb"], json!({})),
        ];
        if self.d.is_empty() {
            body.push(ins("x2", "Add", &["dm", "y"], json!({})));
        } else {
            let cmp = self.comparator(true);
            body.push(ins("x2", "Sort", &["dm"], json!({"comparator": cmp, "dimension": 0, "is_stable": true})));
        }
        body.push(ins("r", "Tuple", &["i2", "x2", "y"], json!({})));
        let body_name = format!("{name}_body");
        self.b.computation(&body_name, comp(&[("s", state)], body));
        let zero = self.b.constant(&Literal::Array(ArrayLiteral::scalar(0i32)));
        let init = self.b.push("Tuple", &[&zero, a, c], json!({}));
        let w = self.b.push("While", &[&init], json!({"condition": cond, "body": body_name}));
        self.b.push("GetTupleElement", &[&w], json!({"index": 1}))
    }

    /// A Conditional on the pred parameter: one branch sorts (or negates a
    /// scalar), the other maps its operand with itself.
    fn conditional(&mut self, a: &str, c: &str) -> String {
        let shape = self.shape();
        let sort_branch = if self.d.is_empty() {
            vec![ins("r", "Neg", &["v"], json!({}))]
        } else {
            let cmp = self.comparator(false);
            vec![ins("r", "Sort", &["v"], json!({"comparator": cmp, "dimension": 0}))]
        };
        self.b.computation("branch_sort", comp(&[("v", shape.clone())], sort_branch));
        let map = self.map_body("Min");
        self.b.computation(
            "branch_map",
            comp(&[("v", shape)], vec![ins("r", "Map", &["v", "v"], json!({"computation": map, "dimensions": self.all_dims()}))]),
        );
        let p = self.pred.clone();
        self.b.push("Conditional", &[&p, a, c], json!({"true_computation": "branch_sort", "false_computation": "branch_map"}))
    }

    /// DynamicUpdateSlice of `a` with a DynamicSlice of `c`, at a start
    /// that may be out of range (both clamp).
    fn dynamic(&mut self, a: &str, c: &str, dim: usize, small: u8) -> String {
        let sizes: Vec<i64> = self.d.iter().enumerate().map(|(i, &n)| if i == dim { (n + 1) / 2 } else { n }).collect();
        if sizes.contains(&0) {
            // No slice of an empty dimension is allowed ("strictly greater than zero").
            return a.to_string();
        }
        let start = i32::from(small % 8) - 2;
        let idx: Vec<String> =
            (0..self.d.len()).map(|i| self.b.constant(&Literal::Array(ArrayLiteral::scalar(if i == dim { start } else { 0 })))).collect();
        let mut operands: Vec<&str> = vec![c];
        operands.extend(idx.iter().map(|s| s.as_str()));
        let piece = self.b.push("DynamicSlice", &operands, json!({"slice_sizes": sizes}));
        let mut operands: Vec<&str> = vec![a, &piece];
        operands.extend(idx.iter().map(|s| s.as_str()));
        self.b.push("DynamicUpdateSlice", &operands, json!({}))
    }
}

/// Random program DAGs of 2 to 20 steps (see the module comment).
pub fn dag() -> BoxedStrategy<Program> {
    let step = (0..STEPS.len(), any::<Index>(), any::<Index>(), any::<Index>(), any::<u8>());
    (one_of(&TYPES), dims(0..=2, 4), proptest::collection::vec(step, 2..=20))
        .prop_flat_map(|(t, d, steps)| {
            (proptest::collection::vec(literal(t, d.clone()), 2..=3), literal(t, d), scalar(E::Pred), scalar(t), Just(steps))
        })
        .prop_map(|(params, constant, pred, init, steps)| {
            let t = params[0].as_array().map_or(E::F32, |a| a.element_type());
            let d = params[0].as_array().map_or(vec![], |a| a.dims().to_vec());
            let mut b = Builder::default();
            let pool: Vec<String> = params.into_iter().map(|p| b.param(p)).collect();
            let pred = b.param(pred.into());
            let init = b.param(init.into());
            let mut dag = Dag { b, t, d, pool, pred, init, constant: &constant };
            for s in steps {
                let v = dag.step(s);
                dag.pool.push(v);
            }
            if dag.b.is_empty() {
                // Every step passed its operand on (a slice of an empty
                // dimension does): main still needs an instruction to be
                // its root (`xlaref fuzz --ops Dag --seed 69`, program
                // 31853 of three generators, was such an empty program).
                let last = dag.pool.last().cloned().unwrap_or_default();
                let sizes = dag.d.clone();
                dag.b.push("Reshape", &[&last], json!({"new_sizes": sizes}));
            }
            dag.b.finish("Dag")
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::campaign::draw;

    /// A draw whose every step passed its operand on still has a root.
    #[test]
    fn a_dag_of_pass_through_steps_still_has_a_root() {
        let program = draw(&dag(), 69, 31853).expect("draws");
        program.verified(1 << 24).expect("the program verifies");
        let instructions = program.module["computations"]["main"]["instructions"].as_array().map(Vec::len);
        assert_eq!(instructions, Some(1), "{}", program.module);
    }
}
