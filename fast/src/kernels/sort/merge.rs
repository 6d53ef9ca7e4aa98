//! The bottom-up merge sort every non-key sort goes through: stable, and
//! it ends after `O(n log n)` comparisons whatever the comparator answers.
//! It makes the same comparisons in the same order as the reference's, so
//! comparators that are not strict weak orders (always true, `Lt` on NaNs,
//! `Le`, ...) give the reference's permutation too.

/// Sorts `perm` (positions along one slice): an element of the right run
/// goes first only when `less(right, left)` holds.
pub fn merge_sort<E>(
    perm: &mut Vec<usize>,
    scratch: &mut Vec<usize>,
    mut less: impl FnMut(usize, usize) -> Result<bool, E>,
) -> Result<(), E> {
    let n = perm.len();
    scratch.clear();
    scratch.resize(n, 0);
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j) = (lo, mid);
            for slot in scratch[lo..hi].iter_mut() {
                let take_right = if i >= mid {
                    true
                } else if j >= hi {
                    false
                } else {
                    less(perm[j], perm[i])?
                };
                if take_right {
                    *slot = perm[j];
                    j += 1;
                } else {
                    *slot = perm[i];
                    i += 1;
                }
            }
            lo = hi;
        }
        std::mem::swap(perm, scratch);
        width *= 2;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(n: usize, mut less: impl FnMut(usize, usize) -> bool) -> Vec<usize> {
        let (mut perm, mut scratch) = ((0..n).collect::<Vec<_>>(), Vec::new());
        merge_sort::<()>(&mut perm, &mut scratch, |i, j| Ok(less(i, j))).unwrap();
        perm
    }

    #[test]
    fn stable_and_total_on_inconsistent_comparators() {
        let keys = [3, 1, 2, 1, 3, 0, 2];
        assert_eq!(sorted(keys.len(), |i, j| keys[i] < keys[j]), vec![5, 1, 3, 2, 6, 0, 4]);
        assert_eq!(sorted(7, |_, _| true), vec![6, 5, 4, 3, 2, 1, 0]);
        let mut state = 7u64;
        let mut perm = sorted(1000, |_, _| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            state >> 63 == 1
        });
        perm.sort_unstable();
        assert_eq!(perm, (0..1000).collect::<Vec<_>>());
    }
}
