//! Element types, shapes and multi-indices.

pub mod element;
pub mod index;
pub mod shape;

pub use element::{Element, ElementType, TypeClass};
pub use index::{Index, Indices};
pub use shape::{ArrayShape, Shape};
