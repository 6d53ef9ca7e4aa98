//! Multi-indices and their row-major iteration, so reference ops can say
//! `for index in shape.indices()` as the document does.

use smallvec::SmallVec;

/// A multi-index into an array: one coordinate per dimension. Inline for the
/// ranks real programs use, so iterating allocates nothing.
pub type Index = SmallVec<[i64; 8]>;

/// Row-major iteration over every index of a shape (last dimension fastest).
/// A shape with a zero-sized dimension has no indices; a scalar has one, `[]`.
#[derive(Clone, Debug)]
pub struct Indices {
    dims: SmallVec<[i64; 8]>,
    current: Index,
    done: bool,
}

impl Indices {
    pub fn new(dims: &[i64]) -> Indices {
        let done = dims.iter().any(|&d| d <= 0);
        Indices { dims: SmallVec::from_slice(dims), current: Index::from_elem(0, dims.len()), done }
    }
}

impl Iterator for Indices {
    type Item = Index;

    fn next(&mut self) -> Option<Index> {
        if self.done {
            return None;
        }
        let item = self.current.clone();
        self.done = !advance(&mut self.current, &self.dims);
        Some(item)
    }
}

/// Steps `index` to its row-major successor within `dims`; false after the last.
pub fn advance(index: &mut [i64], dims: &[i64]) -> bool {
    for i in (0..dims.len()).rev() {
        index[i] += 1;
        if index[i] < dims[i] {
            return true;
        }
        index[i] = 0;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_order() {
        let all: Vec<Vec<i64>> = Indices::new(&[2, 3]).map(|i| i.to_vec()).collect();
        assert_eq!(all, vec![vec![0, 0], vec![0, 1], vec![0, 2], vec![1, 0], vec![1, 1], vec![1, 2]]);
        assert_eq!(Indices::new(&[]).count(), 1);
        assert_eq!(Indices::new(&[3, 0, 2]).count(), 0);
    }
}
