//! `--shard K/N`: one of N machines' share of a campaign. Work item `i`
//! (a case's position in the run, a generated program's index) belongs to
//! shard `i mod N`, so the N shards together run exactly the items of the
//! unsharded run, each once, and every shard gets every op in turn (the
//! generators deal programs round-robin over ops). K counts from 0, as
//! GitHub Actions' matrix indices and Kubernetes' `JOB_COMPLETION_INDEX` do.

use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole run.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Whether work item `i` is this shard's.
    pub fn owns(self, i: u64) -> bool {
        i % self.count == self.index
    }

    /// The `n`-th item of this shard (its items in order), or `None` past
    /// the end of the numbers.
    pub fn nth(self, n: u64) -> Option<u64> {
        n.checked_mul(self.count)?.checked_add(self.index)
    }
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::ALL
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard: write K/N with 0 <= K < N (e.g. 0/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u64, u64) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_items() {
        let shards: Vec<Shard> = (0..3).map(|k| format!("{k}/3").parse().unwrap()).collect();
        for i in 0..100u64 {
            assert_eq!(shards.iter().filter(|s| s.owns(i)).count(), 1);
        }
        assert_eq!(shards[1].nth(0), Some(1));
        assert_eq!(shards[1].nth(2), Some(7));
        assert!(shards[2].owns(shards[2].nth(5).unwrap()));
    }

    #[test]
    fn malformed_shards_are_refused() {
        for s in ["3/3", "1", "a/2", "0/0", "-1/2", "1/2/3"] {
            assert!(s.parse::<Shard>().is_err(), "{s}");
        }
        assert_eq!("0/1".parse::<Shard>(), Ok(Shard::ALL));
    }
}
